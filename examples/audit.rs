//! Mint a three-hop RFC 8693 delegation chain with narrowing scope and audit
//! it (draft-narvaneni-agent-uri-03 section 10.2): signature and claims of every token, actor
//! history, scope narrowing, nested time windows, jti replay.
//!
//! Run: `cargo run --example audit`

use agentsig::delegation;
use agentsig::delegation::mint::{self, ActorSpec, MintRequest};
use agentsig::jwt::JwtPolicy;
use agentsig::replay::MemoryReplayStore;
use agentsig::trust::{KeySource, PerIssuer, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::{Algorithm, SigningKey};
use std::sync::Arc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let iss = "https://as.example.com";
    let as_key = SigningKey::generate(Algorithm::EcdsaP256Sha256)?;
    let now = 1_900_000_000;

    // Hop 0: alice's token for the planner. Hop 1: the planner exchanged it
    // for a token to the calendar agent (the planner is now the actor, scope
    // narrower). Hop 2: the calendar agent delegates to the calendar store.
    let mut t0 = MintRequest::new(iss, "alice", now, 600);
    t0.aud = vec!["https://planner.example.com".into()];
    t0.scope = Some("calendar.read calendar.write contacts.read".into());
    let mut t1 = MintRequest::new(iss, "alice", now, 300);
    t1.aud = vec!["https://calendar.example.com".into()];
    t1.scope = Some("calendar.read calendar.write".into());
    t1.actors = vec![ActorSpec::new("https://planner.example.com")];
    let mut t2 = MintRequest::new(iss, "alice", now, 120);
    t2.aud = vec!["https://store.example.com".into()];
    t2.scope = Some("calendar.read".into());
    t2.actors = vec![
        ActorSpec::new("https://planner.example.com"),
        ActorSpec::new("https://calendar.example.com"),
    ];
    let tokens = [
        mint::mint(&t0, &as_key)?,
        mint::mint(&t1, &as_key)?,
        mint::mint(&t2, &as_key)?,
    ];
    let refs: Vec<&str> = tokens.iter().map(String::as_str).collect();

    // The auditor: keys bound to their issuer, the audience it serves, and a
    // replay store shared by every audit.
    let keys = PerIssuer::new().with(
        iss,
        StaticKeys::new().with(as_key.verifying_key().clone(), KeySource::Pinned),
    );
    let verifier = Verifier::builder(keys)
        .clock(agentsig::clock::FixedClock(now + 10))
        .jwt(
            JwtPolicy::delegation()
                .issuers([iss])
                .audience("https://store.example.com"),
        )
        .replay_store(Arc::new(MemoryReplayStore::new()))
        .build();
    match verifier.audit_delegation(&refs) {
        Ok(report) => print!("{}", delegation::report::text(&report)),
        Err(e) => {
            print!("{}", delegation::report::text(&e.report));
            return Err(e.into());
        }
    }
    // The same bundle again is a replay.
    match verifier.audit_delegation(&refs) {
        Ok(_) => Err("a replayed bundle passed".into()),
        Err(e) => {
            println!("second presentation refused: {e}");
            Ok(())
        }
    }
}
