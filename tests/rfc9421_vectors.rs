//! RFC 9421 conformance: every case of tests/vectors/rfc9421/cases.json and
//! every component example of components.json (copied from shared/vectors,
//! see tests/vectors/rfc9421/README.md for provenance and errata).

use agentsig::httpsig::base::{signature_base, signature_params_value};
use agentsig::httpsig::components::{parse_covered, ComponentId};
use agentsig::httpsig::{self, HttpPolicy, HttpSigError, Message, SignatureSpec, VerifyReport};
use agentsig::keys::{load_signing_key, load_verifying_keys, LoadOptions};
use agentsig::sfv;
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::{Algorithm, AllowList, SigningKey};
use serde_json::Value;
use std::path::Path;

#[path = "b64_support/mod.rs"]
mod b64;

const VEC: &str = "tests/vectors/rfc9421";

fn read(p: &str) -> Vec<u8> {
    std::fs::read(Path::new(VEC).join(p)).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn cases() -> Vec<Value> {
    let v: Value = serde_json::from_slice(&read("cases.json")).unwrap();
    v["cases"].as_array().unwrap().clone()
}

fn key_file(keyid: &str, private: bool) -> String {
    if keyid == "test-shared-secret" {
        return "keys/rfc9421/test-shared-secret.b64".into();
    }
    if private {
        format!("keys/rfc9421/{keyid}.pem")
    } else {
        format!("keys/rfc9421/{keyid}.pub.pem")
    }
}

fn signing_key(keyid: &str, alg: Algorithm) -> SigningKey {
    let data = std::fs::read(key_file(keyid, true)).unwrap();
    load_signing_key(
        &data,
        &LoadOptions {
            alg: Some(alg),
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{keyid}: {e}"))
}

/// Every RFC key, public half, each bound to its keyid.
fn all_keys() -> StaticKeys {
    let mut s = StaticKeys::new();
    for (kid, alg) in [
        ("test-key-rsa", Algorithm::RsaV15Sha256),
        ("test-key-rsa-pss", Algorithm::RsaPssSha512),
        ("test-key-ecc-p256", Algorithm::EcdsaP256Sha256),
        ("test-key-ed25519", Algorithm::Ed25519),
        ("test-shared-secret", Algorithm::HmacSha256),
    ] {
        let data = std::fs::read(key_file(kid, false)).unwrap();
        let keys = load_verifying_keys(
            &data,
            &LoadOptions {
                alg: Some(alg),
                ..Default::default()
            },
        )
        .unwrap_or_else(|e| panic!("{kid}: {e}"));
        for k in keys {
            s.add(k.with_kid(kid), KeySource::Pinned);
        }
    }
    s
}

fn msg(path: &str) -> Message {
    Message::parse(&read(path), "https").unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn related(c: &Value) -> Option<Message> {
    c["related_request"].as_str().map(msg)
}

/// `verify` as a result: `Ok` with the report when every label verified, the
/// report of the refusal otherwise (a header error is a test failure).
fn checked(
    v: &Verifier,
    m: &Message,
    rel: Option<&Message>,
    id: &str,
) -> Result<VerifyReport, Box<VerifyReport>> {
    match v.verify_http(m, rel) {
        Ok(r) => Ok(r),
        Err(HttpSigError::NotVerified(r)) => Err(r),
        Err(e) => panic!("{id}: {e}"),
    }
}

/// A verifier with every RFC key and algorithm, for one label.
fn vector_verifier(keys: &StaticKeys, label: &str) -> Verifier {
    Verifier::builder(keys.clone())
        .algorithms(AllowList::all())
        .http(vector_policy(label))
        .build()
}

fn vector_policy(label: &str) -> HttpPolicy {
    let mut p = HttpPolicy::new().allow_uncovered_content();
    p.check_time = false; // the RFC vectors are from 2021; proxy_sig has expired
    p.labels = Some(vec![label.to_owned()]);
    p.keep_base = true;
    if label == "sig-b21" {
        // Appendix B.2.1 covers (): protects no part of the message, refused
        // by default (RFC 9421 section 7.2.1, tests/httpsig_policy_defaults.rs);
        // opted in here to check the RFC's own bytes.
        p.allow_empty_covered = true;
        p.request_target_one_of = Vec::new();
    }
    p
}

fn spec_of(c: &Value) -> SignatureSpec {
    let mut spec = SignatureSpec::new(c["label"].as_str().unwrap());
    for id in c["covered_components"].as_array().unwrap() {
        spec = spec.component(ComponentId::parse(id.as_str().unwrap()).unwrap());
    }
    for p in c["signature_params"].as_array().unwrap() {
        let name = p[0].as_str().unwrap();
        let v = match &p[1] {
            Value::Number(n) => sfv::BareItem::Integer(n.as_i64().unwrap()),
            Value::String(s) => sfv::BareItem::String(s.clone()),
            other => panic!("param {other}"),
        };
        spec = spec.param(name, v);
    }
    spec
}

#[test]
fn all_nineteen_cases_present() {
    assert_eq!(cases().len(), 19);
}

#[test]
fn signature_bases_are_byte_exact() {
    for c in cases() {
        let id = c["id"].as_str().unwrap();
        let m = msg(c["message"].as_str().unwrap());
        let rel = related(&c);
        let spec = spec_of(&c);
        let pv = signature_params_value(&spec.components, &spec.params);
        let lookup = |n: &str| httpsig::components::known_sf_type(n);
        let base = signature_base(&m, rel.as_ref(), &spec.components, &pv, &lookup)
            .unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(
            String::from_utf8(base).unwrap(),
            c["expected_signature_base"].as_str().unwrap(),
            "{id}"
        );
        // Signature-Input as printed (member for this label).
        let expected_input = c["expected_signature_input"].as_str().unwrap();
        assert_eq!(format!("{}={}", spec.label, pv), expected_input, "{id}");
    }
}

#[test]
fn signed_messages_verify_as_the_rfc_says() {
    let keys = all_keys();
    for c in cases() {
        let id = c["id"].as_str().unwrap();
        let label = c["label"].as_str().unwrap();
        let m = msg(c["signed_message"].as_str().unwrap());
        let rel = related(&c);
        let v = vector_verifier(&keys, label);
        let expected = c["expected_valid"].as_bool().unwrap();
        let outcome = checked(&v, &m, rel.as_ref(), id);
        assert_eq!(outcome.is_ok(), expected, "{id}");
        let report = match &outcome {
            Ok(r) => r,
            Err(r) => &**r,
        };
        assert_eq!(report.results.len(), 1, "{id}");
        let r = &report.results[0];
        assert_eq!(r.is_valid(), expected, "{id}: {:?}", r.outcome);
        if expected {
            assert_eq!(
                String::from_utf8(r.signature_base.clone().unwrap()).unwrap(),
                c["expected_signature_base"].as_str().unwrap(),
                "{id}: base rebuilt on verify"
            );
            assert_eq!(r.keyid.as_deref(), c["keyid"].as_str(), "{id}");
        } else {
            assert!(
                matches!(r.outcome, Err(httpsig::SigError::BadSignature)),
                "{id}: {:?}",
                r.outcome
            );
        }
    }
}

#[test]
fn deterministic_algorithms_re_sign_byte_exact_and_others_round_trip() {
    let keys = all_keys();
    for c in cases() {
        let id = c["id"].as_str().unwrap();
        if !c["expected_valid"].as_bool().unwrap() {
            continue;
        }
        let alg = Algorithm::from_httpsig_name(c["alg"].as_str().unwrap()).unwrap();
        let key = signing_key(c["keyid"].as_str().unwrap(), alg);
        let mut m = msg(c["message"].as_str().unwrap());
        // s4.3's client request already carries sig1: sign a clean copy.
        m.headers
            .retain(|f| f.name != "signature" && f.name != "signature-input");
        let rel = related(&c);
        let spec = spec_of(&c);
        let signed =
            httpsig::sign(&m, rel.as_ref(), &spec, &key).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(
            String::from_utf8(signed.base.clone()).unwrap(),
            c["expected_signature_base"].as_str().unwrap()
        );
        if c["deterministic"].as_bool().unwrap() {
            assert_eq!(
                b64::encode_std(&signed.signature_bytes),
                c["signature_b64"].as_str().unwrap(),
                "{id}: deterministic re-sign"
            );
        }
        // Whatever the algorithm, our own signature verifies on the message.
        let mut signed_msg = m.clone();
        signed.apply(&mut signed_msg);
        let v = vector_verifier(&keys, &spec.label);
        let report = checked(&v, &signed_msg, rel.as_ref(), id)
            .unwrap_or_else(|r| panic!("{id}: {:?}", r.results[0].outcome));
        assert!(report.all_valid(), "{id}: {:?}", report.results[0].outcome);
    }
}

#[test]
fn deterministic_flags_match_the_readme() {
    let det: Vec<String> = cases()
        .iter()
        .filter(|c| c["deterministic"].as_bool().unwrap())
        .map(|c| c["alg"].as_str().unwrap().to_owned())
        .collect();
    for a in &det {
        assert!(["hmac-sha256", "ed25519", "rsa-v1_5-sha256"].contains(&a.as_str()));
    }
    assert!(det.len() >= 5);
}

#[test]
fn proxy_message_reports_each_label_separately() {
    // Section 4.3: sig1 (client) no longer matches after the proxy rewrote
    // the authority; proxy_sig does. The result is per label, never "any valid".
    let keys = all_keys();
    let m = msg("messages/s4.3-proxied-request-2sigs.http");
    let mut policy = HttpPolicy::new().allow_uncovered_content();
    policy.check_time = false;
    let v = Verifier::builder(keys.clone())
        .algorithms(AllowList::all())
        .http(policy)
        .build();
    let report = checked(&v, &m, None, "s4.3").expect_err("sig1 does not verify");
    assert_eq!(report.results.len(), 2);
    assert!(!report.get("sig1").unwrap().is_valid());
    assert!(report.get("proxy_sig").unwrap().is_valid());
    assert!(!report.all_valid());
    assert_eq!(report.valid_labels(), vec!["proxy_sig"]);
    // With time checks on, proxy_sig has expired (expires=1618884540).
    let mut timed = HttpPolicy::new().allow_uncovered_content();
    timed.max_age = None;
    timed.labels = Some(vec!["proxy_sig".into()]);
    let v = Verifier::builder(keys)
        .algorithms(AllowList::all())
        .http(timed)
        .build();
    let r = checked(&v, &m, None, "s4.3 timed").expect_err("proxy_sig has expired");
    assert!(matches!(
        r.results[0].outcome,
        Err(httpsig::SigError::Expired {
            expires: 1618884540,
            ..
        })
    ));
}

#[test]
fn b24_fails_on_the_response_as_printed() {
    // Erratum: the RFC's test-response Content-Digest (JlEy2b...) is wrong.
    let keys = all_keys();
    let signed = String::from_utf8(read("messages/b2.4-sig-b24.http")).unwrap();
    let printed = String::from_utf8(read("messages/test-response-as-printed.http")).unwrap();
    let fixed = String::from_utf8(read("messages/test-response.http")).unwrap();
    let bad_digest = printed
        .lines()
        .find(|l| l.starts_with("Content-Digest"))
        .unwrap()
        .trim_end();
    let good_digest = fixed
        .lines()
        .find(|l| l.starts_with("Content-Digest"))
        .unwrap()
        .trim_end();
    let tampered = signed.replace(good_digest, bad_digest);
    assert_ne!(tampered, signed);
    let m = Message::parse(tampered.as_bytes(), "https").unwrap();
    let mut policy = vector_policy("sig-b24");
    policy.required = httpsig::descriptor_response_components();
    let v = Verifier::builder(keys)
        .algorithms(AllowList::all())
        .http(policy)
        .build();
    let r = checked(&v, &m, None, "b2.4 as printed").expect_err("the printed digest is wrong");
    assert!(!r.all_valid());
}

#[test]
fn components_json_all_examples() {
    let v: Value = serde_json::from_slice(&read("components.json")).unwrap();
    let examples = v["examples"].as_array().unwrap();
    assert_eq!(examples.len(), 22);
    for ex in examples {
        let id = ex["id"].as_str().unwrap();
        let input = ex["input"].as_str().unwrap();
        let first = input.lines().next().unwrap();
        let has_start = first.starts_with("HTTP/") || first.contains(" HTTP/1.1");
        let mut raw = if has_start {
            input.to_owned()
        } else {
            format!("HTTP/1.1 200 OK\n{input}")
        };
        if !raw.contains("\n\n") {
            raw.push_str("\n\n");
        }
        let scheme = ex["context"]["scheme"].as_str().unwrap_or("https");
        let m = Message::parse(raw.as_bytes(), scheme).unwrap_or_else(|e| panic!("{id}: {e}"));
        for line in ex["expected_base_lines"].as_array().unwrap() {
            let line = line.as_str().unwrap();
            let (ident, value) = line.split_once(": ").unwrap();
            let c = ComponentId::parse(ident).unwrap_or_else(|e| panic!("{id}: {ident}: {e}"));
            assert_eq!(c.to_string(), ident, "{id}: identifier re-serialization");
            let mut out = Vec::new();
            c.write_value(&mut out, &m, None, &|n| {
                httpsig::components::known_sf_type(n)
            })
            .unwrap_or_else(|e| panic!("{id}: {ident}: {e}"));
            assert_eq!(String::from_utf8(out).unwrap(), value, "{id}: {ident}");
        }
    }
}

#[test]
fn parse_covered_matches_expected_serialization() {
    for c in cases() {
        let input = c["expected_signature_input"].as_str().unwrap();
        let d = sfv::parse_dictionary(input.as_bytes()).unwrap();
        let (_, sfv::Entry::InnerList(l)) = &d.0[0] else {
            panic!()
        };
        let covered = parse_covered(&l.items).unwrap();
        let pv = signature_params_value(&covered, &l.params);
        assert_eq!(format!("{}={pv}", c["label"].as_str().unwrap()), input);
    }
}
