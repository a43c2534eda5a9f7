//! Bad input and policy: every refusal is a typed error naming the problem,
//! and nothing panics.

use agentsig::clock::FixedClock;
use agentsig::httpsig::components::ComponentError;
use agentsig::httpsig::HeaderError;
use agentsig::httpsig::SignHttp;
use agentsig::httpsig::SignHttpResponse;
use agentsig::httpsig::{
    self, ComponentId, HttpPolicy, HttpSigError, Message, SigError, SignatureSpec, VerifyReport,
};
use agentsig::keys::{load_signing_key, LoadOptions};
use agentsig::replay::{ReplayError, ReplayStore, Sighting};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::verifier::VerifyHttp;
use agentsig::verifier::VerifyHttpResponse;
use agentsig::{Algorithm, SigningKey};
use std::sync::{Arc, Mutex};

const REQ: &str = "POST /foo?param=Value&Pet=dog&Pet=cat HTTP/1.1\r\nHost: example.com\r\nDate: Tue, 20 Apr 2021 02:07:55 GMT\r\nContent-Type: application/json\r\nContent-Digest: sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:\r\nContent-Length: 18\r\n";
const BODY: &str = "{\"hello\": \"world\"}";
const SIG: &str = ":YWJj:";

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

/// A verifier trusting [`keys`] under `p`, with the default clock.
fn verifier(p: HttpPolicy) -> Verifier {
    Verifier::builder(keys()).http(p).build()
}

/// The per-label report of a message [`httpsig::verify`] must refuse.
fn refused(v: &Verifier, m: &Message) -> Box<VerifyReport> {
    match v.verify_http(m, None) {
        Err(HttpSigError::NotVerified(r)) => r,
        other => panic!("expected a refusal with a report, got {other:?}"),
    }
}

fn msg_with(extra: &str) -> Message {
    let raw = format!("{REQ}{extra}\r\n{BODY}");
    Message::parse(raw.as_bytes(), "https").unwrap()
}

fn header_err(extra: &str) -> HeaderError {
    match verifier(HttpPolicy::new().allow_uncovered_content()).verify_http(&msg_with(extra), None)
    {
        Err(HttpSigError::Header(e)) => e,
        other => panic!("expected a header error, got {other:?}"),
    }
}

#[test]
fn malformed_signature_fields_are_header_errors() {
    assert!(matches!(
        header_err("Signature-Input: sig1=(\"@method\"\r\nSignature: sig1=:YWJj:\r\n"),
        HeaderError::Malformed {
            field: "Signature-Input",
            ..
        }
    ));
    assert!(matches!(
        header_err("Signature-Input: sig1=();created=1\r\nSignature: sig1=:YWJj\r\n"),
        HeaderError::Malformed {
            field: "Signature",
            ..
        }
    ));
    assert!(matches!(
        header_err("Signature-Input: sig1=();created=1, sig1=(\"@method\");created=1\r\nSignature: sig1=:YWJj:\r\n"),
        HeaderError::DuplicateLabel { field: "Signature-Input", .. }
    ));
    // Duplicates across two field lines are duplicates too.
    assert!(matches!(
        header_err("Signature-Input: sig1=();created=1\r\nSignature-Input: sig1=();created=2\r\nSignature: sig1=:YWJj:\r\n"),
        HeaderError::DuplicateLabel { .. }
    ));
    assert!(matches!(
        header_err("Signature: sig1=:YWJj:\r\n"),
        HeaderError::NoSignatureInput
    ));
    assert!(matches!(
        header_err("Signature-Input: sig1=();created=1\r\n"),
        HeaderError::NoSignature
    ));
    let big = format!(
        "Signature-Input: sig1=();created=1;nonce=\"{}\"\r\nSignature: sig1=:YWJj:\r\n",
        "a".repeat(20_000)
    );
    assert!(matches!(header_err(&big), HeaderError::TooLarge { .. }));
    let many: Vec<String> = (0..20).map(|i| format!("s{i}=();created=1")).collect();
    let sigs: Vec<String> = (0..20).map(|i| format!("s{i}={SIG}")).collect();
    assert!(matches!(
        header_err(&format!(
            "Signature-Input: {}\r\nSignature: {}\r\n",
            many.join(", "),
            sigs.join(", ")
        )),
        HeaderError::TooManySignatures
    ));
}

#[test]
fn per_label_structural_errors() {
    let v = verifier(HttpPolicy::new().allow_uncovered_content());
    type Check = fn(&SigError) -> bool;
    let cases: Vec<(&str, Check)> = vec![
        ("Signature-Input: sig1=();created=1;keyid=\"k\"\r\nSignature: sig2=:YWJj:\r\n",
         |e| matches!(e, SigError::NoSignatureValue(_))),
        ("Signature-Input: sig1=\"x\"\r\nSignature: sig1=:YWJj:\r\n", |e| matches!(e, SigError::NotInnerList)),
        ("Signature-Input: sig1=();created=1\r\nSignature: sig1=abc\r\n", |e| matches!(e, SigError::NotByteSequence)),
        ("Signature-Input: sig1=();created=1\r\nSignature: sig1=:YWJj:;x=1\r\n", |e| matches!(e, SigError::NotByteSequence)),
        ("Signature-Input: sig1=(\"@method\" \"@method\");created=1;keyid=\"k\"\r\nSignature: sig1=:YWJj:\r\n",
         |e| matches!(e, SigError::Component(ComponentError::Duplicate(_)))),
        ("Signature-Input: sig1=(\"content-type\";sf \"content-type\";sf);created=1;keyid=\"k\"\r\nSignature: sig1=:YWJj:\r\n",
         |e| matches!(e, SigError::Component(ComponentError::Duplicate(_)))),
        ("Signature-Input: sig1=(\"@nope\");created=1\r\nSignature: sig1=:YWJj:\r\n",
         |e| matches!(e, SigError::Component(ComponentError::UnknownDerived(_)))),
        ("Signature-Input: sig1=(\"Content-Type\");created=1\r\nSignature: sig1=:YWJj:\r\n",
         |e| matches!(e, SigError::Component(ComponentError::NotLowercase(_)))),
        ("Signature-Input: sig1=(\"content-type\";zz);created=1\r\nSignature: sig1=:YWJj:\r\n",
         |e| matches!(e, SigError::Component(ComponentError::UnknownParam { .. }))),
        ("Signature-Input: sig1=(\"content-type\";bs;sf);created=1\r\nSignature: sig1=:YWJj:\r\n",
         |e| matches!(e, SigError::Component(ComponentError::BsWithSf { .. }))),
        ("Signature-Input: sig1=(\"@query-param\");created=1\r\nSignature: sig1=:YWJj:\r\n",
         |e| matches!(e, SigError::Component(ComponentError::QueryParamNameMissing))),
        ("Signature-Input: sig1=(\"@method\";sf);created=1\r\nSignature: sig1=:YWJj:\r\n",
         |e| matches!(e, SigError::Component(ComponentError::ParamNotApplicable { .. }))),
        ("Signature-Input: sig1=(method);created=1\r\nSignature: sig1=:YWJj:\r\n",
         |e| matches!(e, SigError::Component(ComponentError::NotAString(_)))),
        ("Signature-Input: sig1=();created=\"1\";keyid=\"k\"\r\nSignature: sig1=:YWJj:\r\n",
         |e| matches!(e, SigError::Param(_))),
        ("Signature-Input: sig1=();created=1;created=2;keyid=\"k\"\r\nSignature: sig1=:YWJj:\r\n",
         |e| matches!(e, SigError::Param(_))),
        ("Signature-Input: sig1=();keyid=\"k\"\r\nSignature: sig1=:YWJj:\r\n",
         |e| matches!(e, SigError::MissingParam("created"))),
        ("Signature-Input: sig1=();created=1\r\nSignature: sig1=:YWJj:\r\n",
         |e| matches!(e, SigError::MissingParam("keyid"))),
        ("Signature-Input: sig1=();created=1;keyid=\"k\";alg=\"rsa-sha1\"\r\nSignature: sig1=:YWJj:\r\n",
         |e| matches!(e, SigError::UnknownAlgorithm(_))),
        ("Signature-Input: sig1=();created=1;keyid=\"k\";alg=\"hmac-sha256\"\r\nSignature: sig1=:YWJj:\r\n",
         |e| matches!(e, SigError::AlgorithmNotAllowed(Algorithm::HmacSha256))),
        ("Signature-Input: sig1=();created=10;expires=5;keyid=\"k\"\r\nSignature: sig1=:YWJj:\r\n",
         |e| matches!(e, SigError::ExpiresBeforeCreated { .. })),
    ];
    for (extra, check) in cases {
        let m = msg_with(extra);
        let r = refused(&v, &m);
        let o = &r.results[0].outcome;
        assert!(o.as_ref().is_err_and(check), "{extra}: {o:?}");
        // Errors name the problem.
        assert!(!o.as_ref().unwrap_err().to_string().is_empty());
    }
    // A label only in Signature is reported as such.
    let m = msg_with(
        "Signature-Input: sig1=();created=1;keyid=\"k\"\r\nSignature: sig1=:YWJj:, sig2=:YWJj:\r\n",
    );
    let r = refused(&v, &m);
    assert!(matches!(
        r.get("sig2").unwrap().outcome,
        Err(SigError::NoSignatureInput(_))
    ));
}

fn signed(spec: SignatureSpec, key: &SigningKey) -> Message {
    let mut m = msg_with("");
    let s = httpsig::sign(&m, None, &spec, key).unwrap();
    s.apply(&mut m);
    m
}

#[test]
fn policy_refusals() {
    let key = ed_key();
    let base = || {
        SignatureSpec::new("sig1")
            .component(ComponentId::parse("@method").unwrap())
            .component(ComponentId::parse("content-digest").unwrap())
    };
    let at = |p: HttpPolicy| {
        Verifier::builder(keys())
            .clock(FixedClock(1_000_000))
            .http(p)
            .build()
    };
    let v = at(HttpPolicy::new().allow_uncovered_content());
    let ok = signed(base().created(1_000_000).keyid("k").tag("t"), &key);
    assert!(v.verify_http(&ok, None).unwrap().all_valid());

    let mut strict = HttpPolicy::new().allow_uncovered_content();
    strict.required = vec![ComponentId::parse("@path").unwrap()];
    let r = refused(&at(strict), &ok);
    assert!(matches!(
        r.results[0].outcome,
        Err(SigError::RequiredComponentNotCovered(_))
    ));

    let mut tagged = HttpPolicy::new().allow_uncovered_content();
    tagged.expected_tag = Some("other".into());
    let r = refused(&at(tagged), &ok);
    assert!(matches!(
        r.results[0].outcome,
        Err(SigError::TagMismatch { .. })
    ));

    // Time: too old, in the future, expired.
    for (spec, want) in [
        (base().created(1_000_000 - 1000).keyid("k"), "too-old"),
        (
            base().created(1_000_000 + 1000).keyid("k"),
            "created-in-future",
        ),
        (
            base().created(999_900).expires(999_920).keyid("k"),
            "expired",
        ),
    ] {
        let m = signed(spec, &key);
        let r = refused(&v, &m);
        assert_eq!(r.results[0].outcome.as_ref().unwrap_err().code(), want);
    }

    // alg parameter that names another algorithm than the trusted key's.
    let p256 = load_signing_key(
        &std::fs::read("keys/rfc9421/test-key-ecc-p256.pem").unwrap(),
        &LoadOptions::default(),
    )
    .unwrap();
    let m = signed(
        base()
            .created(1_000_000)
            .keyid("k")
            .alg(Algorithm::EcdsaP256Sha256),
        &p256,
    );
    let r = refused(&v, &m);
    assert!(matches!(
        r.results[0].outcome,
        Err(SigError::AlgMismatch {
            param: Algorithm::EcdsaP256Sha256,
            key: Algorithm::Ed25519
        })
    ));
    // Unknown keyid: the trusted key has kid "k".
    let m = signed(base().created(1_000_000).keyid("nobody"), &key);
    let r = refused(&v, &m);
    assert!(matches!(
        r.results[0].outcome,
        Err(SigError::NoTrustedKey { .. })
    ));

    // Content-Digest that no longer matches the body fails even though the signature does.
    let text = format!("{REQ}\r\n{BODY}");
    let mut m = Message::parse(text.replace("world", "WORLD").as_bytes(), "https").unwrap();
    let s = httpsig::sign(&m, None, &base().created(1_000_000).keyid("k"), &key).unwrap();
    s.apply(&mut m);
    let r = refused(&v, &m);
    assert!(matches!(
        r.results[0].outcome,
        Err(SigError::ContentDigest(_))
    ));

    // A covered component that is absent is an error, never skipped.
    let m = signed(base().created(1_000_000).keyid("k"), &key);
    let mut stripped = m.clone();
    stripped.headers.retain(|f| f.name != "content-digest");
    let r = refused(&v, &stripped);
    assert!(matches!(
        r.results[0].outcome,
        Err(SigError::Component(ComponentError::Missing(_)))
    ));
}

#[test]
fn signing_refusals() {
    let key = ed_key();
    let m = msg_with("");
    let sign = |spec: SignatureSpec| {
        httpsig::sign(&m, None, &spec, &key)
            .unwrap_err()
            .to_string()
    };
    assert!(sign(SignatureSpec::new("Sig1")).contains("label"));
    assert!(
        sign(SignatureSpec::new("sig1").component(ComponentId::parse("@status").unwrap()))
            .contains("only to responses")
    );
    assert!(sign(
        SignatureSpec::new("sig1")
            .component(ComponentId::parse("\"@query-param\";name=\"Pet\"").unwrap())
    )
    .contains("more than once"));
    assert!(
        sign(SignatureSpec::new("sig1").component(ComponentId::parse("x-absent").unwrap()))
            .contains("not present")
    );
    assert!(sign(
        SignatureSpec::new("sig1").component(ComponentId::parse("content-type;req").unwrap())
    )
    .contains(";req"));
    assert!(sign(SignatureSpec::new("sig1").alg(Algorithm::RsaPssSha512)).contains("alg"));
    assert!(sign(SignatureSpec::new("sig1").nonce("bad\u{7f}")).contains("printable"));
    // Signing twice with the same label is refused.
    let mut m2 = m.clone();
    httpsig::sign(&m, None, &SignatureSpec::new("sig1").created(1), &key)
        .unwrap()
        .apply(&mut m2);
    assert!(matches!(
        httpsig::sign(&m2, None, &SignatureSpec::new("sig1").created(1), &key),
        Err(httpsig::SignError::LabelExists(_))
    ));
}

/// A caller's own replay store: the verifier asks it about every nonce.
#[derive(Debug, Default)]
struct Seen(Mutex<Vec<(String, String)>>);
impl ReplayStore for Seen {
    fn check_and_record(
        &self,
        scope: &str,
        nonce: &str,
        _until: i64,
        _now: i64,
    ) -> Result<Sighting, ReplayError> {
        let mut seen = self
            .0
            .lock()
            .map_err(|_| ReplayError::Unavailable("poisoned".into()))?;
        if seen.iter().any(|(s, n)| s == scope && n == nonce) {
            return Ok(Sighting::Replay);
        }
        seen.push((scope.to_owned(), nonce.to_owned()));
        Ok(Sighting::First)
    }
}

#[test]
fn nonce_replay_hook() {
    let key = ed_key();
    let seen = Arc::new(Seen::default());
    let mut p = HttpPolicy::new().allow_uncovered_content();
    p.check_time = false;
    p.require_nonce = true;
    let v = Verifier::builder(keys())
        .replay_store(seen.clone())
        .http(p)
        .build();
    let m = signed(
        SignatureSpec::new("sig1")
            .component(ComponentId::parse("\"@method\"").unwrap())
            .created(1)
            .keyid("k")
            .nonce("abc"),
        &key,
    );
    assert!(v.verify_http(&m, None).unwrap().all_valid());
    let r = refused(&v, &m);
    assert!(matches!(r.results[0].outcome, Err(SigError::Replay(_))));
    // The hook was asked about this nonce, under this keyid.
    assert_eq!(
        *seen.0.lock().unwrap(),
        vec![("httpsig:k".to_owned(), "abc".to_owned())]
    );
    let m = signed(SignatureSpec::new("sig1").created(1).keyid("k"), &key);
    let r = refused(&v, &m);
    assert!(matches!(
        r.results[0].outcome,
        Err(SigError::MissingParam("nonce"))
    ));
}

#[test]
fn unknown_parameters_are_signed_and_kept_in_order() {
    let key = ed_key();
    let spec = SignatureSpec::new("sig1")
        .component(ComponentId::parse("\"@method\"").unwrap())
        .keyid("k")
        .param("zz-custom", agentsig::sfv::BareItem::Token("x".into()))
        .created(5);
    let m = signed(spec, &key);
    let mut p = HttpPolicy::new().allow_uncovered_content();
    p.check_time = false;
    let r = verifier(p).verify_http(&m, None).unwrap();
    assert!(r.all_valid());
    // The named setters keep RFC 9421 section 2.3's order (created before
    // keyid), the unknown parameter follows them; the verifier signs the
    // received value as it is.
    assert_eq!(
        r.results[0].params_value.as_deref(),
        Some("(\"@method\");created=5;keyid=\"k\";zz-custom=x")
    );
    // A received order other than section 2.3's verifies too.
    let spec = SignatureSpec::new("sig1")
        .component(ComponentId::parse("\"@method\"").unwrap())
        .param("zz-custom", agentsig::sfv::BareItem::Token("x".into()))
        .param("keyid", agentsig::sfv::BareItem::String("k".into()))
        .param("created", agentsig::sfv::BareItem::Integer(5));
    let m = signed(spec, &key);
    let mut p = HttpPolicy::new().allow_uncovered_content();
    p.check_time = false;
    let r = verifier(p).verify_http(&m, None).unwrap();
    assert!(r.all_valid());
    assert_eq!(
        r.results[0].params_value.as_deref(),
        Some("(\"@method\");zz-custom=x;keyid=\"k\";created=5")
    );
}

#[test]
fn http_crate_round_trip_with_req() {
    let key = ed_key();
    let mut req = http::Request::builder()
        .method("POST")
        .uri("https://Example.com:443/foo?a=b")
        .header("content-type", "application/json")
        .body(BODY.as_bytes().to_vec())
        .unwrap();
    let spec = SignatureSpec::new("sig1")
        .component(ComponentId::parse("@method").unwrap())
        .component(ComponentId::parse("@authority").unwrap())
        .component(ComponentId::parse("@target-uri").unwrap())
        .created(1)
        .keyid("k");
    let s = req.sign_signature(&spec, &key).unwrap();
    assert!(String::from_utf8(s.base)
        .unwrap()
        .contains("\"@authority\": example.com\n\"@target-uri\": https://Example.com:443/foo?a=b"));
    let mut p = HttpPolicy::new().allow_uncovered_content();
    p.check_time = false;
    assert!(req
        .verify_signature(&verifier(p.clone()))
        .unwrap()
        .all_valid());

    let mut res = http::Response::builder()
        .status(200)
        .header("content-type", "application/json")
        .header("content-digest", agentsig::digest::content_digest(b"{}"))
        .body(b"{}".to_vec())
        .unwrap();
    let spec = SignatureSpec::new("res")
        .component(ComponentId::parse("@status").unwrap())
        .component(ComponentId::parse("content-type").unwrap())
        .component(ComponentId::parse("content-digest").unwrap())
        .component(ComponentId::parse("@method;req").unwrap())
        .component(ComponentId::parse("\"signature\";key=\"sig1\";req").unwrap())
        .created(1)
        .keyid("k");
    res.sign_signature_for(&req, &spec, &key).unwrap();
    p.required = httpsig::descriptor_response_components();
    let v = verifier(p);
    assert!(res.verify_signature_for(&req, &v).unwrap().all_valid());
    // Without the request, the ;req components cannot be resolved.
    let r = match res.verify_signature(&v) {
        Err(HttpSigError::NotVerified(r)) => r,
        other => panic!("expected a refusal with a report, got {other:?}"),
    };
    assert!(matches!(
        r.results[0].outcome,
        Err(SigError::Component(ComponentError::NoRelatedRequest(_)))
    ));
}

#[test]
fn mutations_never_panic() {
    let raw =
        std::fs::read("tests/vectors/rfc9421/messages/s4.3-proxied-request-2sigs.http").unwrap();
    let mut p = HttpPolicy::new().allow_uncovered_content();
    p.check_time = false;
    let v = verifier(p);
    let mut state: u64 = 0x9e3779b97f4a7c15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let alphabet = b"\"();=:,* ?@\\%-azAZ09\r\n\t";
    for _ in 0..3000 {
        let mut m = raw.clone();
        for _ in 0..(1 + next() % 4) {
            let i = (next() as usize) % m.len();
            match next() % 3 {
                0 => m[i] = alphabet[(next() as usize) % alphabet.len()],
                1 => {
                    m.remove(i);
                }
                _ => m.insert(i, alphabet[(next() as usize) % alphabet.len()]),
            }
        }
        if let Ok(msg) = Message::parse(&m, "https") {
            let _ = v.verify_http(&msg, None);
        }
    }
}
