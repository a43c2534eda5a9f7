//! HTTP request verify: an agent signs its `http::Request` with RFC 9421
//! (method, authority, path, Content-Digest, a nonce), and the service it
//! calls verifies it with a `Verifier` and a replay store, as a tower layer
//! (`agentsig::server::VerifyLayer`, feature `server`) does for every request.
//!
//! Run: `cargo run --example http_request`

use agentsig::digest::content_digest;
use agentsig::httpsig::{ComponentId, Derived, HttpPolicy, SignHttp, SignatureSpec};
use agentsig::replay::MemoryReplayStore;
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::VerifyHttp;
use agentsig::{Algorithm, SigningKey, Verifier};
use std::sync::Arc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The calling agent.
    let key = SigningKey::generate(Algorithm::Ed25519)?;
    let body = br#"{"task":"book a table for two"}"#.to_vec();
    let mut req = http::Request::builder()
        .method("POST")
        .uri("https://planner.example/tasks")
        .header("content-type", "application/json")
        .header("content-digest", content_digest(&body))
        .body(body)?;
    let now = agentsig::clock::Clock::now(&agentsig::clock::SystemClock);
    let spec = SignatureSpec::new("sig1")
        .component(ComponentId::derived(Derived::Method))
        .component(ComponentId::derived(Derived::Authority))
        .component(ComponentId::derived(Derived::Path))
        .component(ComponentId::field("content-digest")?)
        .created(now)
        .nonce(&format!("n{now:x}"))
        .keyid(&key.kid_or_thumbprint());
    req.sign_signature(&spec, &key)?;
    println!(
        "Signature-Input: {}",
        req.headers()["signature-input"].to_str()?
    );

    // The service: trusts the agent's key, requires a nonce, remembers it.
    let keys = StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned);
    let mut policy = HttpPolicy::new();
    policy.require_nonce = true;
    let verifier = Verifier::builder(keys)
        .http(policy)
        .replay_store(Arc::new(MemoryReplayStore::new()))
        .build();
    let report = req.verify_signature(&verifier)?;
    println!("verified label(s): {:?}", report.valid_labels());

    // The same request again is a replay.
    let err = req
        .verify_signature(&verifier)
        .expect_err("a replayed request must not verify");
    println!("replayed request refused: {err}");
    Ok(())
}
