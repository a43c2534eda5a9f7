//! Sign a descriptor with a detached JWS over its RFC 8785 canonical form,
//! then verify it with a `Verifier` (seed 001 section 10.3).
//!
//! Run: `cargo run --example sign_and_verify`

use agentsig::descriptor::{self, DescriptorError};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::{Algorithm, SigningKey};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The publisher: a key bound to ES256, and the descriptor it publishes.
    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256)?;
    let doc = std::fs::read("examples/agent.json")?;
    let signed = descriptor::sign(&doc, &key)?;
    println!("detached JWS: {}", signed.jws);

    // The resolver: trusts the publisher's public key (from a JWK Set, DID or
    // discovery in practice) and verifies what it fetched.
    let keys = StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned);
    let verifier = Verifier::builder(keys).build();
    let report = verifier.verify_descriptor(&doc, &signed.jws)?;
    let sig = &report.jws.signatures[0];
    println!(
        "verified: alg {} kid {}",
        sig.alg.as_deref().unwrap_or("-"),
        sig.kid.as_deref().unwrap_or("-")
    );

    // Any change of a value breaks it; `Err` carries the report.
    let tampered = String::from_utf8(doc)?.replacen("planner", "p1anner", 1);
    match verifier.verify_descriptor(tampered.as_bytes(), &signed.jws) {
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
