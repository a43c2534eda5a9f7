//! A2A Agent Card: sign a card as the A2A SDKs do (a JWS over the card's
//! normal form, appended to its `signatures`), then verify the published
//! card with a `Verifier`. Key headers such as `jku` are never a key source.
//!
//! Run: `cargo run --example a2a_card`

use agentsig::a2a::{self, A2aError};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::{Algorithm, SigningKey, Verifier};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256)?;
    let card: serde_json::Value =
        serde_json::from_slice(&std::fs::read("examples/a2a-agent-card.json")?)?;

    // The publisher: the card to serve is the signed normal form.
    let signed = a2a::sign_card(&card, &key, &serde_json::Map::new(), false)?;
    for u in &signed.uncovered {
        println!("not covered by the signature: {}", u.pointer);
    }
    let published = serde_json::to_vec(&signed.card)?;

    // A client: verifies every signature entry with its trusted keys.
    let keys = StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned);
    let verifier = Verifier::builder(keys).build();
    let report = verifier.verify_agent_card(&published)?;
    println!(
        "card verified ({} signature(s)); act on report.signed_card()",
        report.signatures.len()
    );

    // A changed card no longer verifies.
    let mut forged = signed.card.clone();
    forged["name"] = "Evil Agent".into();
    match verifier.verify_agent_card(&serde_json::to_vec(&forged)?) {
        Err(A2aError::NotVerified(_)) => println!("changed card refused"),
        other => return Err(format!("changed card not refused: {other:?}").into()),
    }
    Ok(())
}
