//! `@query-param` refuses percent-decoded bytes that are not
//! UTF-8 instead of replacing them (which made `%FF` and `%FE` sign alike).

use agentsig::httpsig::components::ComponentError;
use agentsig::httpsig::{
    self, base, ComponentId, HttpPolicy, HttpSigError, Message, SigError, SignError, SignatureSpec,
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

fn req(query: &str) -> Message {
    let raw = format!("GET /p?{query} HTTP/1.1\r\nHost: example.com\r\n\r\n");
    Message::parse(raw.as_bytes(), "https").unwrap()
}

fn qp(name: &str) -> ComponentId {
    ComponentId::parse(&format!("\"@query-param\";name=\"{name}\"")).unwrap()
}

fn is_not_utf8(e: &ComponentError) -> bool {
    matches!(e, ComponentError::QueryNotUtf8 { component, .. } if component.contains("@query-param"))
}

#[test]
fn invalid_utf8_value_is_refused_on_sign() {
    let spec = SignatureSpec::new("sig1")
        .component(ComponentId::parse("\"@method\"").unwrap())
        .component(qp("a"))
        .created(1)
        .keyid("k");
    for q in ["a=%FF", "a=%FE", "a=x&b=%C3"] {
        match httpsig::sign(&req(q), None, &spec, &ed_key()) {
            Err(SignError::Component(e)) => assert!(is_not_utf8(&e), "{q}: {e:?}"),
            other => panic!("{q}: expected QueryNotUtf8, got {other:?}"),
        }
    }
    // Valid UTF-8 (percent-encoded) still works and re-encodes.
    let s = httpsig::sign(&req("a=%C3%BC"), None, &spec, &ed_key()).unwrap();
    assert!(String::from_utf8(s.base)
        .unwrap()
        .contains("\"@query-param\";name=\"a\": %C3%BC\n"));
}

#[test]
fn ff_and_fe_no_longer_share_a_signature_base() {
    let covered = [qp("a")];
    let pv = base::signature_params_value(&covered, &Vec::new());
    for q in ["a=%FF", "a=%FE"] {
        let r = base::signature_base(&req(q), None, &covered, &pv, &|_| None);
        assert!(matches!(&r, Err(e) if is_not_utf8(e)), "{q}: {r:?}");
    }
}

#[test]
fn invalid_utf8_is_refused_on_verify() {
    // Signed over a valid query, then the query is swapped for one that
    // is not UTF-8 once decoded: refused with the typed error, not a
    // signature mismatch computed over replaced text.
    let spec = SignatureSpec::new("sig1")
        .component(ComponentId::parse("\"@method\"").unwrap())
        .component(qp("a"))
        .created(1)
        .keyid("k");
    let s = httpsig::sign(&req("a=x"), None, &spec, &ed_key()).unwrap();
    let mut m = req("a=%FF");
    s.apply(&mut m);
    let k = StaticKeys::new().with(
        ed_key().verifying_key().clone().with_kid("k"),
        KeySource::Pinned,
    );
    let mut p = HttpPolicy::new();
    p.check_time = false;
    let v = Verifier::builder(k).http(p).build();
    let r = match v.verify_http(&m, None) {
        Err(HttpSigError::NotVerified(r)) => r,
        other => panic!("expected a refusal with a report, got {other:?}"),
    };
    match &r.results[0].outcome {
        Err(SigError::Component(e)) => assert!(is_not_utf8(e), "{e:?}"),
        other => panic!("expected QueryNotUtf8, got {other:?}"),
    }
}
