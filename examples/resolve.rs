//! Resolve: a resolver trusts the publisher's JWK Set, then verifies the
//! descriptor and its detached JWS as served. With the Cargo feature `net`,
//! `agentsig::net::Resolver` does the same over HTTPS: the SSRF-guarded
//! fetcher, key discovery (RFC 8414, `jwksUri`, DIDs) and an RFC 9111 cache.
//!
//! Run: `cargo run --example resolve`

use agentsig::descriptor::{self, DescriptorError};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::{LoadOptions, SigningKey, Verifier};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // What the publisher serves (see examples/publish.rs).
    let doc = std::fs::read("examples/agent.json")?;
    let publisher = SigningKey::from_file("keys/example-p256.pem", &LoadOptions::default())?;
    let jws = descriptor::sign(&doc, &publisher)?.jws;

    // The resolver's trust: the publisher's JWK Set. Members it cannot use
    // are reported, never silently dropped.
    let jwks = std::fs::read("keys/example-p256.jwks.json")?;
    let set = StaticKeys::from_jwks(
        &jwks,
        KeySource::Jwks("example-p256.jwks.json".into()),
        None,
    )?;
    for s in &set.skipped {
        println!("skipped {s}");
    }
    let verifier = Verifier::builder(set.keys).build();

    let report = verifier.verify_descriptor(&doc, &jws)?;
    let sig = &report.jws.signatures[0];
    println!(
        "verified: alg {}, key {} from {:?}",
        sig.alg.as_deref().unwrap_or("-"),
        sig.key_thumbprint.as_deref().unwrap_or("-"),
        sig.key_source
    );

    // Any changed value breaks it; the error carries the report.
    let tampered = String::from_utf8(doc)?.replacen("planner", "p1anner", 1);
    match verifier.verify_descriptor(tampered.as_bytes(), &jws) {
        Err(DescriptorError::NotVerified(r)) => {
            println!(
                "tampered copy refused: {}",
                r.jws.signatures[0].verdict.as_str()
            )
        }
        other => return Err(format!("tampered descriptor not refused: {other:?}").into()),
    }
    Ok(())
}
