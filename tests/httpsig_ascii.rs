//! RFC 9421 sections 2.1 and 2.5, the signature base is
//! ASCII. A plainly covered field holding a non-ASCII byte is an error on
//! sign and on verify; `;bs` is how such a field is covered.

use agentsig::httpsig::components::ComponentError;
use agentsig::httpsig::message::Field;
use agentsig::httpsig::{
    self, ComponentId, HttpPolicy, HttpSigError, Message, SigError, SignError, SignatureSpec,
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

/// A request whose X-Name field is `value` (raw bytes, obs-text allowed).
fn req(value: &[u8]) -> Message {
    let mut raw = b"GET / HTTP/1.1\r\nHost: example.com\r\nX-Name: ".to_vec();
    raw.extend_from_slice(value);
    raw.extend_from_slice(b"\r\n\r\n");
    Message::parse(&raw, "https").unwrap()
}

/// A verifier trusting the Ed25519 key as "k", time checks off.
fn verifier() -> Verifier {
    let k = StaticKeys::new().with(
        ed_key().verifying_key().clone().with_kid("k"),
        KeySource::Pinned,
    );
    let mut p = HttpPolicy::new();
    p.check_time = false;
    Verifier::builder(k).http(p).build()
}

fn spec(x: &str) -> SignatureSpec {
    SignatureSpec::new("sig1")
        .component(ComponentId::parse("\"@method\"").unwrap())
        .component(ComponentId::parse(x).unwrap())
        .created(1)
        .keyid("k")
}

#[test]
fn sign_refuses_a_plain_non_ascii_field_and_names_it() {
    for x in ["\"x-name\"", "\"x-name\";sf"] {
        let r = httpsig::sign(&req(b"caf\xe9"), None, &spec(x), &ed_key());
        match r {
            Err(SignError::Component(ComponentError::NonAsciiValue(c))) => {
                assert!(c.contains("x-name"), "{c}")
            }
            Err(SignError::Component(ComponentError::Structured { .. })) if x.ends_with("sf") => {}
            other => panic!("{x}: expected NonAsciiValue, got {other:?}"),
        }
    }
    // UTF-8 is not ASCII either.
    assert!(matches!(
        httpsig::sign(
            &req("café".as_bytes()),
            None,
            &spec("\"x-name\""),
            &ed_key()
        ),
        Err(SignError::Component(ComponentError::NonAsciiValue(_)))
    ));
}

#[test]
fn bs_covers_a_non_ascii_field() {
    let mut m = req(b"caf\xe9");
    let s = httpsig::sign(&m, None, &spec("\"x-name\";bs"), &ed_key()).unwrap();
    s.apply(&mut m);
    assert!(verifier().verify_http(&m, None).unwrap().all_valid());
}

#[test]
fn verify_refuses_a_plain_non_ascii_field() {
    // Signed over an ASCII value, received with a non-ASCII one: a typed
    // component error, not a signature computed over a non-ASCII base.
    let s = httpsig::sign(&req(b"cafe"), None, &spec("\"x-name\""), &ed_key()).unwrap();
    let mut m = req(b"cafe");
    m.headers.retain(|f| f.name != "x-name");
    m.headers.push(Field {
        name: "x-name".into(),
        value: b"caf\xe9".to_vec(),
    });
    s.apply(&mut m);
    let r = match verifier().verify_http(&m, None) {
        Err(HttpSigError::NotVerified(r)) => r,
        other => panic!("expected a refusal with a report, got {other:?}"),
    };
    match &r.results[0].outcome {
        Err(SigError::Component(ComponentError::NonAsciiValue(c))) => {
            assert_eq!(c, "\"x-name\"")
        }
        other => panic!("expected NonAsciiValue, got {other:?}"),
    }
}
