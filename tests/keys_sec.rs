//! Security regressions for keys, JWS header policy and key loading
//! (issue 13 items 3, 7, 9, 12; issue 7 items 5 and 8).

use agentsig::jws::{self, VerifyPolicy};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::{b64, SigningKey};
use serde_json::json;

const PAYLOAD: &[u8] = b"{\"name\":\"agent\"}";

fn ed_key() -> SigningKey {
    SigningKey::from_ed25519_seed(&[3u8; 32]).expect("seed")
}

/// A JWS JSON (flattened) with this protected header and unprotected header.
fn flattened(
    protected: &serde_json::Value,
    header: &serde_json::Value,
    key: &SigningKey,
) -> String {
    let h = b64::encode(protected.to_string().as_bytes());
    let si = format!("{h}.{}", b64::encode(PAYLOAD));
    let sig = key.sign(si.as_bytes()).expect("sign");
    json!({"protected": h, "header": header, "signature": b64::encode(&sig)}).to_string()
}

/// Issue 13 item 7: a required `typ` is met only by the protected header.
#[test]
fn required_typ_is_not_met_by_unprotected_header() {
    let k = ed_key();
    let keys = StaticKeys::new().with(k.verifying_key().clone(), KeySource::Pinned);
    let typed = VerifyPolicy {
        expected_typ: Some(vec!["agent+jws".into()]),
        ..VerifyPolicy::default()
    };
    let unprot = flattened(&json!({"alg": "EdDSA"}), &json!({"typ": "agent+jws"}), &k);
    let r = jws::verify(&unprot, Some(PAYLOAD), &keys, &typed).expect("parse");
    assert!(!r.verified(), "unprotected typ met the required typ");
    assert_eq!(
        r.signatures[0].reason.as_ref().map(|r| r.code()),
        Some("typ-mismatch")
    );
    // The same typ, protected, is accepted.
    let prot = flattened(
        &json!({"alg": "EdDSA", "typ": "agent+jws"}),
        &json!({"x": 1}),
        &k,
    );
    let r = jws::verify(&prot, Some(PAYLOAD), &keys, &typed).expect("parse");
    assert!(r.verified(), "{:?}", r.signatures[0].reason);
}
