//! Whenever `Content-Digest` is covered, in any form, the
//! digest is checked against the content (RFC 9421 section 7.2.8, RFC 9530).

use agentsig::digest::{self, DigestAlgorithm, DigestError};
use agentsig::httpsig::message::Field;
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

const BODY: &[u8] = b"{\"hello\": \"world\"}";

fn request() -> Message {
    let raw = "POST /foo HTTP/1.1\r\nHost: example.com\r\n\r\n";
    let mut m = Message::parse(raw.as_bytes(), "https").unwrap();
    m.body = BODY.to_vec();
    m
}

/// The outcome of the only label through [`httpsig::verify`], which must be
/// `Ok` exactly when that label verified.
fn outcome(v: &Verifier, m: &Message) -> Result<(), SigError> {
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

/// Sign `m` covering `@method`, `@authority` and `cd`, then replace the body.
fn tampered_outcome(mut m: Message, cd: &str) -> (Result<(), SigError>, Result<(), SigError>) {
    let spec = SignatureSpec::new("sig1")
        .component(ComponentId::parse("\"@method\"").unwrap())
        .component(ComponentId::parse("\"@authority\"").unwrap())
        .component(ComponentId::parse(cd).unwrap())
        .created(1_000_000)
        .keyid("k");
    let s = httpsig::sign(&m, None, &spec, &ed_key()).unwrap();
    s.apply(&mut m);
    let mut p = HttpPolicy::new();
    p.check_time = false;
    let v = Verifier::builder(keys()).http(p).build();
    let honest = outcome(&v, &m);
    m.body = b"{\"hello\": \"evil!\"}".to_vec();
    let tampered = outcome(&v, &m);
    (honest, tampered)
}

fn with_header(v: &str) -> Message {
    let mut m = request();
    m.add_header("Content-Digest", v);
    m
}

fn is_mismatch(r: &Result<(), SigError>) -> bool {
    matches!(
        r,
        Err(SigError::ContentDigest(DigestError::Mismatch { .. }))
    )
}

#[test]
fn key_covered_content_digest_is_checked_against_body() {
    let m = with_header(&digest::content_digest(BODY));
    let (honest, tampered) = tampered_outcome(m, "\"content-digest\";key=\"sha-256\"");
    assert_eq!(honest, Ok(()));
    assert!(is_mismatch(&tampered), "{tampered:?}");
}

#[test]
fn sf_and_bs_covered_content_digest_is_checked_against_body() {
    for cd in ["\"content-digest\";sf", "\"content-digest\";bs"] {
        let m = with_header(&digest::content_digest(BODY));
        let (honest, tampered) = tampered_outcome(m, cd);
        assert_eq!(honest, Ok(()), "{cd}");
        assert!(is_mismatch(&tampered), "{cd}: {tampered:?}");
    }
}

#[test]
fn trailer_covered_content_digest_is_checked_against_body() {
    let mut m = request();
    m.trailers.push(Field {
        name: "content-digest".into(),
        value: digest::content_digest(BODY).into_bytes(),
    });
    let (honest, tampered) = tampered_outcome(m, "\"content-digest\";tr");
    assert_eq!(honest, Ok(()));
    assert!(is_mismatch(&tampered), "{tampered:?}");
}

#[test]
fn key_covered_member_must_be_an_active_algorithm() {
    // Only the md5 member is signed; the unsigned sha-256 member matches the
    // body, but it is not what the signature protects.
    let v = format!(
        "md5=:AAAAAAAAAAAAAAAAAAAAAA==:, {}",
        digest::content_digest(BODY)
    );
    let (honest, _) = tampered_outcome(with_header(&v), "\"content-digest\";key=\"md5\"");
    assert_eq!(
        honest,
        Err(SigError::ContentDigest(
            DigestError::CoveredMemberNotVerified {
                field: "Content-Digest",
                key: "md5".into()
            }
        ))
    );
    // Covering the sha-512 member while the unsigned sha-256 one matches: the
    // covered member itself must be present and match.
    let v = digest::field_value(BODY, &[DigestAlgorithm::Sha256, DigestAlgorithm::Sha512]);
    let (honest, tampered) =
        tampered_outcome(with_header(&v), "\"content-digest\";key=\"sha-512\"");
    assert_eq!(honest, Ok(()));
    assert!(is_mismatch(&tampered), "{tampered:?}");
}
