//! By default a signature over `()` is refused (it protects
//! nothing of the message), and a request signature must cover at least one
//! of `@method`, `@authority`, `@target-uri`, `@path`; both are configurable.

use agentsig::httpsig::{
    self, ComponentId, HttpPolicy, HttpSigError, Message, SigError, SignatureSpec,
};
use agentsig::keys::{load_signing_key, LoadOptions};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::SigningKey;

fn ed_key() -> SigningKey {
    load_signing_key(
        &std::fs::read("keys/rfc9421/test-key-ed25519.pem").unwrap(),
        &LoadOptions::default(),
    )
    .unwrap()
}

fn keys() -> StaticKeys {
    StaticKeys::new().with(
        ed_key().verifying_key().clone().with_kid("k"),
        KeySource::Pinned,
    )
}

fn signed(raw: &str, covered: &[&str]) -> Message {
    let mut m = Message::parse(raw.as_bytes(), "https").unwrap();
    let mut spec = SignatureSpec::new("sig1").created(1).keyid("k");
    for c in covered {
        spec = spec.component(ComponentId::parse(c).unwrap());
    }
    httpsig::sign(&m, None, &spec, &ed_key())
        .unwrap()
        .apply(&mut m);
    m
}

const REQ: &str = "GET /a HTTP/1.1\r\nHost: example.com\r\nContent-Type: text/plain\r\n\r\n";
const RES: &str = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n";

/// The outcome of the only label under `p`, through [`httpsig::verify`],
/// which must be `Ok` exactly when that label verified.
fn outcome(m: &Message, p: &HttpPolicy) -> Result<(), SigError> {
    let v = Verifier::builder(keys()).http(p.clone()).build();
    match v.verify_http(m, None) {
        Ok(r) => {
            assert_eq!(r.results.len(), 1);
            assert!(r.results[0].is_valid());
            Ok(())
        }
        Err(HttpSigError::NotVerified(r)) => {
            assert_eq!(r.results.len(), 1);
            let o = r.results[0].outcome.clone();
            assert!(o.is_err(), "refused while the only label verified");
            o
        }
        Err(e) => panic!("header error: {e}"),
    }
}

#[test]
fn empty_covered_list_is_refused_by_default_for_requests_and_responses() {
    let mut p = HttpPolicy::new();
    p.check_time = false;
    for raw in [REQ, RES] {
        assert_eq!(
            outcome(&signed(raw, &[]), &p),
            Err(SigError::EmptyCoveredList)
        );
    }
    p.allow_empty_covered = true;
    assert_eq!(outcome(&signed(RES, &[]), &p), Ok(()));
    p.request_target_one_of = Vec::new();
    assert_eq!(outcome(&signed(REQ, &[]), &p), Ok(()));
}

#[test]
fn request_must_cover_a_request_target_component_by_default() {
    let mut p = HttpPolicy::new();
    p.check_time = false;
    let r = outcome(&signed(REQ, &["\"content-type\""]), &p);
    assert!(
        matches!(&r, Err(SigError::NoRequestTargetComponent { one_of }) if one_of.len() == 4),
        "{r:?}"
    );
    for c in [
        "\"@method\"",
        "\"@authority\"",
        "\"@target-uri\"",
        "\"@path\"",
    ] {
        assert_eq!(
            outcome(&signed(REQ, &["\"content-type\"", c]), &p),
            Ok(()),
            "{c}"
        );
    }
    // Responses are not requests: the rule does not apply.
    assert_eq!(outcome(&signed(RES, &["\"content-type\""]), &p), Ok(()));
    // Configurable: an explicit set, or off.
    p.request_target_one_of = vec![ComponentId::parse("\"@path\"").unwrap()];
    assert!(matches!(
        outcome(&signed(REQ, &["\"@method\""]), &p),
        Err(SigError::NoRequestTargetComponent { .. })
    ));
    p.request_target_one_of = Vec::new();
    assert_eq!(outcome(&signed(REQ, &["\"content-type\""]), &p), Ok(()));
}
