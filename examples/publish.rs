//! Publish: sign a descriptor with the publisher's PEM key, a detached JWS
//! over its RFC 8785 canonical form (seed 001 section 10.3), and the JWK Set
//! resolvers will trust.
//!
//! Run: `cargo run --example publish`

use agentsig::{descriptor, jwk, LoadOptions, SigningKey};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The publisher's key: PEM (PKCS#8 or SEC1), bound to ES256 by its curve.
    let key = SigningKey::from_file("keys/example-p256.pem", &LoadOptions::default())?;
    let doc = std::fs::read("examples/agent.json")?;

    // Publish `agent.json` unchanged and, beside it, `agent.json.jws`.
    let signed = descriptor::sign(&doc, &key)?;
    println!("agent.json.jws: {}", signed.jws);
    println!("signed canonical form: {} bytes", signed.canonical.len());

    // Resolvers trust the public key from a JWK Set (or a DID, or RFC 8414
    // discovery); this is what keys/example-p256.jwks.json holds.
    let jwks = jwk::jwks_document(&[key.verifying_key()]);
    println!("jwks.json: {jwks}");
    Ok(())
}
