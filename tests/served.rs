//! `Verifier::verify_served`: the served-response check a resolver makes
//! (draft-narvaneni-agent-uri-03 section 10.3), as a library call: the RFC 9421 signature, the
//! body against the descriptor file, the media type (a warning), and the
//! detached JWS or, for a signed A2A Agent Card, its embedded signatures.

use agentsig::digest::content_digest;
use agentsig::httpsig::{descriptor_response_components, HttpPolicy, Message, SignatureSpec};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::{a2a, httpsig, Algorithm, SigningKey, Verifier};

const NOW: i64 = 1_700_000_000;

fn served(body: &[u8], content_type: &str, key: &SigningKey) -> Message {
    let mut res = Message::response(200, Vec::new(), body.to_vec());
    res.add_header("Content-Type", content_type);
    res.add_header("Content-Digest", &content_digest(body));
    let mut spec = SignatureSpec::new("sig1")
        .created(NOW)
        .keyid(&key.kid_or_thumbprint());
    for c in descriptor_response_components() {
        spec = spec.component(c);
    }
    httpsig::sign(&res, None, &spec, key)
        .expect("sign")
        .apply(&mut res);
    res
}

fn verifier(key: &SigningKey) -> Verifier {
    Verifier::builder(StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned))
        .clock(agentsig::clock::FixedClock(NOW))
        .http(HttpPolicy::descriptor_response())
        .build()
}

#[test]
fn a_signed_a2a_card_is_checked_by_its_embedded_signatures() {
    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256).expect("key");
    let card: serde_json::Value =
        serde_json::from_str(include_str!("../examples/a2a-agent-card.json")).expect("card");
    let signed = a2a::sign_card(&card, &key, &serde_json::Map::new(), false).expect("sign card");
    let bytes = serde_json::to_vec(&signed.card).expect("json");
    let v = verifier(&key);

    let res = served(&bytes, "application/json", &key);
    let r = v.verify_served(&res, Some(&bytes), None).expect("verified");
    assert!(r.card.as_ref().is_some_and(Result::is_ok));
    assert_eq!(r.checked().len(), 3, "{:?}", r.checked());
    assert!(r.media_type.is_none(), "{:?}", r.media_type);

    // A card changed after signing, served and signed as it is: the
    // response signature holds, the card's own signature does not.
    let mut forged = signed.card.clone();
    forged["name"] = "Evil Agent".into();
    let fb = serde_json::to_vec(&forged).expect("json");
    let res = served(&fb, "application/json", &key);
    let err = v.verify_served(&res, Some(&fb), None).unwrap_err();
    assert_eq!(err.report.failed(), ["the A2A card's embedded signatures"]);
    assert!(err.report.http.is_ok());
}

#[test]
fn a_wrong_media_type_is_a_warning_and_no_descriptor_checks_only_the_signature() {
    let key = SigningKey::generate(Algorithm::Ed25519).expect("key");
    let doc =
        std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/agent.json")).expect("doc");
    let v = verifier(&key);
    let res = served(&doc, "text/plain", &key);
    let r = v.verify_served(&res, Some(&doc), None).expect("verified");
    assert!(r.media_type.is_some(), "text/plain does not fit the format");
    assert_eq!(r.checked().len(), 2);

    let r = v.verify_served(&res, None, None).expect("verified");
    assert_eq!(r.checked(), ["the RFC 9421 signature of the response"]);

    // Another key: the signature fails, and nothing else is claimed.
    let other = SigningKey::generate(Algorithm::Ed25519).expect("key");
    let err = verifier(&other)
        .verify_served(&res, Some(&doc), None)
        .unwrap_err();
    assert_eq!(
        err.report.failed(),
        ["the RFC 9421 signature of the response"]
    );
}
