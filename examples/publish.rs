//! Publish: sign a descriptor with the publisher's PEM key, a detached JWS
//! over its RFC 8785 canonical form (draft-narvaneni-agent-uri-03 section
//! 10.3), and the JWK Set resolvers will trust, whose key carries the `kid`
//! the JWS names (a verifier that selects keys by `kid` finds it).
//!
//! Run: `cargo run --example publish`

use agentsig::{descriptor, jwk, LoadOptions, SigningKey};

/// The detached JWS of `examples/agent.json` and the JWK Set to publish
/// beside it.
pub fn publish() -> Result<(String, serde_json::Value), Box<dyn std::error::Error>> {
    // The publisher's key: PEM (PKCS#8 or SEC1), bound to ES256 by its curve.
    // A PEM holds no kid: give it one (here its RFC 7638 thumbprint) so the
    // JWS header and the published JWK name the key the same way.
    let key = SigningKey::from_file("keys/example-p256.pem", &LoadOptions::default())?;
    let kid = key.kid_or_thumbprint();
    let key = key.with_kid(kid);
    let doc = std::fs::read("examples/agent.json")?;

    // Publish `agent.json` unchanged and, beside it, `agent.json.jws`.
    let signed = descriptor::sign(&doc, &key)?;

    // Resolvers trust the public key from a JWK Set (or a DID, or RFC 8414
    // discovery): the key with its kid.
    let jwks = jwk::jwks_document(&[key.verifying_key()]);
    Ok((signed.jws, jwks))
}

#[allow(dead_code)] // also compiled into tests/examples_publish.rs, which calls publish()
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (jws, jwks) = publish()?;
    println!("agent.json.jws: {jws}");
    println!("jwks.json: {jwks}");
    Ok(())
}
