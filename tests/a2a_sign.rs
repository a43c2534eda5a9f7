//! A2A Agent Card signatures without any peer: the example card
//! signed and verified by agentsig, the published card in its normal form
//! (so plain JCS of it minus `signatures` is the payload), tampering
//! detected, `jku` never trusted, uncovered members reported.

use agentsig::a2a;
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::{jcs, Algorithm, SigningKey};
use serde_json::{json, Map, Value};

#[path = "b64_support/mod.rs"]
mod b64;

/// The card report whether it verified or not; `Ok` must mean verified.
fn rep(r: Result<a2a::CardReport, a2a::A2aError>) -> a2a::CardReport {
    match r {
        Ok(r) => {
            assert!(r.verified(), "Ok only when verified");
            r
        }
        Err(a2a::A2aError::NotVerified(r)) => {
            assert!(!r.verified());
            *r
        }
        Err(e) => panic!("card not readable: {e}"),
    }
}

fn verifier(keys: &StaticKeys) -> Verifier {
    Verifier::builder(keys.clone()).build()
}

fn example() -> Value {
    let p = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/a2a-agent-card.json");
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

#[test]
fn example_card_signed_and_verified() {
    for alg in [Algorithm::EcdsaP256Sha256, Algorithm::Ed25519] {
        let key = SigningKey::generate(alg).unwrap().with_kid("card-key-1");
        let keys = StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned);
        let signed = a2a::sign_card(&example(), &key, &Map::new(), false).unwrap();
        assert!(signed.uncovered.is_empty(), "{:?}", signed.uncovered);

        let sig = &signed.card["signatures"][0];
        let header: Value =
            serde_json::from_slice(&b64::decode(sig["protected"].as_str().unwrap()).unwrap())
                .unwrap();
        assert_eq!(header["typ"], "JOSE");
        assert_eq!(header["kid"], "card-key-1");
        assert_eq!(header["alg"], alg.jose_name());

        // Published in normal form: plain JCS of the card minus signatures
        // is the signed payload.
        let mut plain = signed.card.clone();
        plain.as_object_mut().unwrap().remove("signatures");
        let report = rep(verifier(&keys).verify_agent_card_value(&signed.card));
        assert!(report.verified());
        assert_eq!(report.payload, jcs::canonicalize_value(&plain).unwrap());

        let mut bad = signed.card.clone();
        bad["supportedInterfaces"][0]["url"] = json!("https://evil.example/a2a");
        let report = rep(verifier(&keys).verify_agent_card_value(&bad));
        assert!(!report.verified());

        // A second signature (key rotation) is appended, the first kept.
        let key2 = SigningKey::generate(alg).unwrap().with_kid("card-key-2");
        let twice = a2a::sign_card(&signed.card, &key2, &Map::new(), false).unwrap();
        assert_eq!(twice.card["signatures"].as_array().unwrap().len(), 2);
        let report = rep(verifier(&keys).verify_agent_card_value(&twice.card));
        assert!(
            report.verified(),
            "the first key still verifies its signature"
        );
    }
}

/// A signature entry as the Python SDK writes it when given a `jku`:
/// protected header `{"alg","jku","kid","typ"}` over the normal form.
fn sdk_style_entry(card: &Value, key: &SigningKey) -> Value {
    let payload = a2a::normalize(card).unwrap().payload;
    let header = json!({"alg": "ES256", "jku": "https://attacker.example/jwks.json", "kid": "k", "typ": "JOSE"});
    let protected = b64::encode(header.to_string().as_bytes());
    let si = format!("{protected}.{}", b64::encode(&payload));
    let sig = key.sign(si.as_bytes()).unwrap();
    json!({"protected": protected, "signature": b64::encode(&sig)})
}

#[test]
fn jku_is_never_followed() {
    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256).unwrap();
    let keys = StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned);
    let mut card = example();
    card["signatures"] = json!([sdk_style_entry(&example(), &key)]);
    // With the A2A policy the header is ignored and the pinned key verifies.
    let r = rep(verifier(&keys).verify_agent_card_value(&card));
    assert!(r.verified(), "{:?}", r.signatures);
    // A card signed by another key naming a jku does not verify: keys come
    // only from the resolver.
    let other = SigningKey::generate(Algorithm::EcdsaP256Sha256).unwrap();
    let mut forged = example();
    forged["signatures"] = json!([sdk_style_entry(&example(), &other)]);
    let r = rep(verifier(&keys).verify_agent_card_value(&forged));
    assert!(!r.verified());
    // The generic JWS verifier refuses the key header outright; the A2A card
    // verifier ignores it (keys come only from the resolver either way).
    let entry = card["signatures"][0].to_string();
    let payload = a2a::normalize(&card).unwrap().payload;
    let e = verifier(&keys)
        .verify_jws(&entry, Some(&payload))
        .unwrap_err();
    let r = e.report().expect("read");
    assert_eq!(
        r.signatures[0].reason.as_ref().map(|r| r.code()),
        Some("key-header-offered")
    );
    // agentsig itself never emits a jku.
    let mut extra = Map::new();
    extra.insert("jku".into(), json!("https://x.example/jwks.json"));
    assert!(a2a::sign_card(&example(), &key, &extra, false).is_err());
}

#[test]
fn unsigned_and_malformed_signatures_are_typed_errors() {
    let keys = StaticKeys::new();
    assert!(matches!(
        verifier(&keys).verify_agent_card_value(&example()),
        Err(a2a::A2aError::NoSignatures)
    ));
    let mut card = example();
    card["signatures"] = json!([{"protected": 1}]);
    assert!(matches!(
        verifier(&keys).verify_agent_card_value(&card),
        Err(a2a::A2aError::BadSignature { index: 0, .. })
    ));
    assert!(verifier(&keys)
        .verify_agent_card(b"{\"a\":1,\"a\":1}")
        .is_err());
}
