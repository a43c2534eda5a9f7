//! JWS vectors (tests/vectors/jws, copied from the shared vector set): RFC 7515
//! A.3, RFC 7520 4.1/4.3/4.4/4.5/4.7, RFC 7797 section 4, RFC 8037 A.4 and
//! agentsig's detached-JWS-over-JCS vectors; then one policy negative per
//! refusal reason, each with its own `Reason::code()`.

use agentsig::jws::{self, JwsError, JwsPolicy, JwsVerifyError, Reason, SignOptions, Verdict};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::{descriptor, jwk, Algorithm, AllowList, SigningKey, VerifyingKey};
use serde_json::{json, Value};

#[path = "b64_support/mod.rs"]
mod b64;

fn vec_json(name: &str) -> Value {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/vectors/jws")
        .join(name);
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

fn vec_bytes(name: &str) -> Vec<u8> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/vectors/jws")
        .join(name);
    std::fs::read(p).unwrap()
}

fn vk(jwk_v: &Value, hint: Option<Algorithm>) -> VerifyingKey {
    jwk::parse_keys(jwk_v.to_string().as_bytes()).unwrap()[0]
        .to_verifying_key(hint)
        .unwrap()
}

fn sk(jwk_v: &Value, hint: Option<Algorithm>) -> SigningKey {
    jwk::parse_keys(jwk_v.to_string().as_bytes()).unwrap()[0]
        .to_signing_key(hint)
        .unwrap()
}

fn trust(k: VerifyingKey) -> StaticKeys {
    StaticKeys::new().with(k, KeySource::Pinned)
}

/// A verifier trusting `keys` that accepts exactly `algs`.
fn allow(keys: &StaticKeys, algs: &[Algorithm]) -> Verifier {
    Verifier::builder(keys.clone())
        .algorithms(AllowList::new(algs.iter().copied()))
        .build()
}

/// A verifier trusting `keys` with every default (asymmetric algorithms,
/// key headers refused, any `typ`).
fn defaults(keys: &StaticKeys) -> Verifier {
    Verifier::builder(keys.clone()).build()
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Whether the JWS verified; panics on a JwsError. `Ok` must carry a
/// verified report and `NotVerified` one that is not.
fn verdict(jws_text: &str, detached: Option<&[u8]>, v: &Verifier) -> bool {
    match v.verify_jws(jws_text, detached) {
        Ok(r) => {
            assert!(r.verified(), "{jws_text}: Ok without a verified report");
            true
        }
        Err(JwsVerifyError::NotVerified(r)) => {
            assert!(
                !r.verified(),
                "{jws_text}: NotVerified with a verified report"
            );
            false
        }
        Err(e) => panic!("{jws_text}: {e}"),
    }
}

/// The report of a JWS that was read and did not verify; panics otherwise.
fn not_verified(res: Result<jws::JwsReport, JwsVerifyError>, what: &str) -> jws::JwsReport {
    match res {
        Ok(_) => panic!("{what} verified"),
        Err(e) => {
            let r = e
                .report()
                .unwrap_or_else(|| panic!("{what}: not a NotVerified error: {e}"))
                .clone();
            assert!(!r.verified(), "{what}");
            r
        }
    }
}

#[test]
fn rfc7515_a3_es256_attached_and_detached() {
    let v = vec_json("rfc7515_A3_es256.json");
    let keys = trust(vk(&v["key"], None));
    let p = allow(&keys, &[Algorithm::EcdsaP256Sha256]);
    let payload = b64::decode(v["payload_b64u"].as_str().unwrap()).unwrap();
    assert!(verdict(v["compact"].as_str().unwrap(), None, &p));
    // Attached, and the same content given as detached: must be equal.
    assert!(verdict(v["compact"].as_str().unwrap(), Some(&payload), &p));
    assert!(matches!(
        p.verify_jws(v["compact"].as_str().unwrap(), Some(b"other")),
        Err(JwsVerifyError::Jws(JwsError::PayloadDiffers))
    ));
    let det = v["compact_detached"].as_str().unwrap();
    assert!(verdict(det, Some(&payload), &p));
    let mut tampered = payload.clone();
    tampered[0] ^= 1;
    assert!(!verdict(det, Some(&tampered), &p));
    // Detached without content is an error, never "verified".
    assert!(matches!(
        p.verify_jws(det, None),
        Err(JwsVerifyError::Jws(JwsError::Malformed(_)))
    ));
    // The private JWK gives the same key; an ES256 re-sign verifies (ECDSA is randomized).
    let s = sk(&v["key"], None);
    let mine = jws::sign_compact_detached(&payload, &s, &SignOptions::default()).unwrap();
    assert!(verdict(&mine, Some(&payload), &p));
}

fn cookbook(name: &str) -> Value {
    vec_json(&format!("rfc7520_cookbook/{name}"))
}

#[test]
fn rfc7520_4_5_detached_content_hs256() {
    let v = cookbook("4_5.signature_with_detached_content.json");
    let payload = v["input"]["payload"].as_str().unwrap().as_bytes().to_vec();
    let key = vk(&v["input"]["key"], None);
    assert_eq!(key.kid(), Some("018c0ae5-4d9b-471b-bfd6-eef314bc7037"));
    let keys = trust(key);
    let p = allow(&keys, &[Algorithm::HmacSha256]);
    for form in ["compact", "json", "json_flat"] {
        let t = text(&v["output"][form]);
        assert!(verdict(&t, Some(&payload), &p), "{form}");
        assert!(
            !verdict(&t, Some(b"It's a dangerous business"), &p),
            "{form}"
        );
    }
    // HMAC is deterministic: re-signing the cookbook's signing input gives its signature.
    let s = sk(&v["input"]["key"], None);
    let sig = s
        .sign(v["signing"]["sig-input"].as_str().unwrap().as_bytes())
        .unwrap();
    assert_eq!(b64::encode(&sig), v["signing"]["sig"].as_str().unwrap());
    // HS256 is not in the default (asymmetric) allow-list.
    let r = not_verified(
        defaults(&keys).verify_jws(v["output"]["compact"].as_str().unwrap(), Some(&payload)),
        "HS256 under the default allow-list",
    );
    assert!(!r.verified());
    assert_eq!(
        r.signatures[0].reason.as_ref().unwrap().code(),
        "alg-not-allowed"
    );
}

#[test]
fn rfc7520_4_1_rs256_and_4_4_hs256() {
    let v = cookbook("4_1.rsa_v15_signature.json");
    let payload = v["input"]["payload"].as_str().unwrap().as_bytes().to_vec();
    // The cookbook RSA JWK has no alg: the verifier says RS256.
    let keys = trust(vk(&v["input"]["key"], Some(Algorithm::RsaV15Sha256)));
    let p = allow(&keys, &[Algorithm::RsaV15Sha256]);
    for form in ["compact", "json", "json_flat"] {
        assert!(verdict(&text(&v["output"][form]), None, &p), "{form}");
    }
    // PKCS#1 v1.5 is deterministic: byte-exact re-sign from the private JWK.
    let s = sk(&v["input"]["key"], Some(Algorithm::RsaV15Sha256));
    let sig = s
        .sign(v["signing"]["sig-input"].as_str().unwrap().as_bytes())
        .unwrap();
    assert_eq!(b64::encode(&sig), v["signing"]["sig"].as_str().unwrap());
    // Detached: strip the payload, supply it.
    let c = v["output"]["compact"].as_str().unwrap();
    let parts: Vec<&str> = c.split('.').collect();
    let det = format!("{}..{}", parts[0], parts[2]);
    assert!(verdict(&det, Some(&payload), &p));

    let v = cookbook("4_4.hmac-sha2_integrity_protection.json");
    let keys = trust(vk(&v["input"]["key"], None));
    let p = allow(&keys, &[Algorithm::HmacSha256]);
    for form in ["compact", "json", "json_flat"] {
        assert!(verdict(&text(&v["output"][form]), None, &p), "{form}");
    }
}

#[test]
fn rfc7520_4_3_es512_is_refused() {
    let v = cookbook("4_3.ecdsa_signature.json");
    // The P-521 key is not an agentsig key type.
    assert!(
        jwk::parse_keys(v["input"]["key"].to_string().as_bytes()).unwrap()[0]
            .to_verifying_key(None)
            .is_err()
    );
    // And the JWS is refused on its header alone, whatever keys are trusted.
    let any = trust(
        SigningKey::generate(Algorithm::EcdsaP256Sha256)
            .unwrap()
            .verifying_key()
            .clone(),
    );
    let all = Verifier::builder(any).algorithms(AllowList::all()).build();
    let r = not_verified(
        all.verify_jws(v["output"]["compact"].as_str().unwrap(), None),
        "ES512",
    );
    assert!(!r.verified());
    assert_eq!(r.signatures[0].verdict, Verdict::Refused);
    assert_eq!(
        r.signatures[0].reason,
        Some(Reason::AlgUnknown("ES512".into()))
    );
}

/// RFC 7520 4.7 puts `alg` only in the unprotected header. agentsig requires
/// an integrity-protected `alg` (RFC 8725 3.1 spirit): refused as malformed.
#[test]
fn rfc7520_4_7_unprotected_alg_is_refused() {
    let v = cookbook("4_7.protecting_content_only.json");
    let keys = trust(vk(&v["input"]["key"], None));
    let p = allow(&keys, &[Algorithm::HmacSha256]);
    for form in ["json", "json_flat"] {
        assert!(matches!(
            p.verify_jws(&text(&v["output"][form]), None),
            Err(JwsVerifyError::Jws(JwsError::Malformed(_)))
        ));
    }
}

#[test]
fn rfc8037_a4_ed25519() {
    let v = cookbook("rfc8037_A4_ed25519_jws.json");
    let keys = trust(vk(&v["input"]["key"], None));
    let p = allow(&keys, &[Algorithm::Ed25519]);
    for form in ["compact", "json", "json_flat"] {
        assert!(verdict(&text(&v["output"][form]), None, &p), "{form}");
    }
    let s = sk(&v["input"]["key"], None);
    let sig = s
        .sign(v["signing"]["sig-input"].as_str().unwrap().as_bytes())
        .unwrap();
    assert_eq!(b64::encode(&sig), v["signing"]["sig"].as_str().unwrap());
}

#[test]
fn rfc7797_section4_b64_true_and_false() {
    let v = vec_json("rfc7797_section4.json");
    let keys = trust(vk(&v["key"], None));
    let s = sk(&v["key"], None);
    let p = allow(&keys, &[Algorithm::HmacSha256]);
    let payload = v["payload_utf8"].as_str().unwrap().as_bytes();
    let t = &v["4.1_b64_true"];
    assert!(verdict(t["compact"].as_str().unwrap(), None, &p));
    assert!(verdict(
        t["compact_detached"].as_str().unwrap(),
        Some(payload),
        &p
    ));
    assert!(!verdict(
        t["compact_detached"].as_str().unwrap(),
        Some(b"$.03"),
        &p
    ));
    assert_eq!(
        b64::encode(
            &s.sign(t["signing_input"].as_str().unwrap().as_bytes())
                .unwrap()
        ),
        t["signature"].as_str().unwrap()
    );
    let f = &v["4.2_b64_false"];
    assert!(verdict(
        f["compact_detached"].as_str().unwrap(),
        Some(payload),
        &p
    ));
    assert!(!verdict(
        f["compact_detached"].as_str().unwrap(),
        Some(b"$.03"),
        &p
    ));
    // Flattened JSON with the unencoded payload attached, and detached.
    let r = p
        .verify_jws(&f["json_flattened"].to_string(), None)
        .unwrap();
    assert!(r.verified());
    assert_eq!(r.payload, payload);
    assert!(verdict(
        &f["json_flattened_detached"].to_string(),
        Some(payload),
        &p
    ));
    assert_eq!(
        b64::encode(
            &s.sign(f["signing_input_utf8"].as_str().unwrap().as_bytes())
                .unwrap()
        ),
        f["signature"].as_str().unwrap()
    );
    // The b64=false signature is not a b64=true signature over the same bytes.
    let swapped = format!(
        "{}..{}",
        t["protected"].as_str().unwrap(),
        f["signature"].as_str().unwrap()
    );
    assert!(!verdict(&swapped, Some(payload), &p));
}

#[test]
fn detached_jcs_vectors() {
    let v = vec_json("detached_jcs_vectors.json");
    let jcs = vec_bytes("sample_agent.jcs");
    assert_eq!(jcs, v["jcs_utf8"].as_str().unwrap().as_bytes());
    assert_eq!(
        descriptor::sha256_hex(&jcs),
        v["jcs_sha256_hex"].as_str().unwrap()
    );
    // agentsig's own JCS of the document gives the same bytes.
    let doc = vec_bytes("sample_agent.json");
    assert_eq!(agentsig::jcs::canonicalize(&doc).unwrap(), jcs);

    let ed = sk(&v["keys"]["ed25519"], None).with_kid("ed25519-rfc8037");
    let p256 = sk(&v["keys"]["p256"], None).with_kid("p256-rfc7515-a3");
    let mut keys = StaticKeys::new();
    keys.add(ed.verifying_key().clone(), KeySource::Pinned);
    keys.add(p256.verifying_key().clone(), KeySource::Pinned);
    let p = defaults(&keys);
    let cases = v["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 4);
    let mut forms_checked = 0;
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let b64_flag = c["b64"].as_bool().unwrap();
        let signer = if c["alg"] == "EdDSA" { &ed } else { &p256 };
        // The header is what the vector says.
        let hdr = b64::decode(c["protected"].as_str().unwrap()).unwrap();
        assert_eq!(hdr, c["protected_header_json"].as_str().unwrap().as_bytes());
        // Signing input and its hash.
        let mut si = c["protected"].as_str().unwrap().as_bytes().to_vec();
        si.push(b'.');
        if b64_flag {
            si.extend_from_slice(b64::encode(&jcs).as_bytes());
        } else {
            si.extend_from_slice(&jcs);
        }
        assert_eq!(
            descriptor::sha256_hex(&si),
            c["signing_input_sha256_hex"].as_str().unwrap(),
            "{name}"
        );
        let tampered = c["negative_tampered_jcs_utf8"].as_str().unwrap().as_bytes();
        let mut forms = vec![
            c["compact_detached"].as_str().unwrap().to_owned(),
            c["json_flattened_detached"].to_string(),
            c["json_general_detached"].to_string(),
        ];
        if let Some(att) = c["compact_attached"].as_str() {
            forms.push(att.to_owned());
        }
        for f in &forms {
            let r = p.verify_jws(f, Some(&jcs)).unwrap();
            assert!(r.verified(), "{name}: {f}");
            assert_eq!(r.payload, jcs);
            if f.contains("..") || f.starts_with('{') {
                let r = not_verified(p.verify_jws(f, Some(tampered)), name);
                assert!(!r.verified(), "{name}: tampered payload verified");
                assert_eq!(r.signatures[0].verdict, Verdict::Invalid);
                assert_eq!(
                    r.signatures[0].reason.as_ref().unwrap().code(),
                    "signature-mismatch"
                );
            } else {
                // Attached payload differs from the content given.
                assert!(matches!(
                    p.verify_jws(f, Some(tampered)),
                    Err(JwsVerifyError::Jws(JwsError::PayloadDiffers))
                ));
            }
            forms_checked += 1;
        }
        // Through the descriptor API: the document, not its JCS bytes.
        let rep = p
            .verify_descriptor(&doc, c["compact_detached"].as_str().unwrap())
            .unwrap();
        assert!(rep.verified(), "{name}");
        assert_eq!(
            rep.canonical_sha256(),
            v["jcs_sha256_hex"].as_str().unwrap()
        );
        // Re-sign the vector's signing input.
        let sig = signer.sign(&si).unwrap();
        if c["deterministic"] == true && c["alg"] == "EdDSA" {
            assert_eq!(
                b64::encode(&sig),
                c["signature"].as_str().unwrap(),
                "{name}"
            );
        } else {
            // ES256 through ring is randomized: verify instead (RFC 6979 bytes are not reproduced).
            signer.verifying_key().verify(&si, &sig).unwrap();
        }
    }
    assert_eq!(forms_checked, 14);
    // agentsig's own signer reproduces the EdDSA b64=true compact form byte for byte.
    let c = &cases[0];
    assert_eq!(c["name"], "eddsa_b64_true");
    let mine = jws::sign_compact_detached(&jcs, &ed, &SignOptions::default()).unwrap();
    assert_eq!(mine, c["compact_detached"].as_str().unwrap());
    let signed = descriptor::sign(&doc, &ed).unwrap();
    assert_eq!(signed.jws, c["compact_detached"].as_str().unwrap());
    assert_eq!(signed.canonical, jcs);
}

// ---------------------------------------------------------------------------
// Policy negatives: each built with a real Ed25519 signature, so that the
// only thing wrong is what is named.

fn ed_key() -> SigningKey {
    // RFC 8037 A.1.
    sk(
        &json!({"kty": "OKP", "crv": "Ed25519",
            "d": "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A",
            "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}),
        None,
    )
}

const PAYLOAD: &[u8] = b"{\"name\":\"agent\"}";

/// A compact detached JWS with exactly this protected header JSON.
fn compact_with(header_json: &str, key: &SigningKey, b64_flag: bool) -> String {
    let h = b64::encode(header_json.as_bytes());
    let mut si = h.as_bytes().to_vec();
    si.push(b'.');
    if b64_flag {
        si.extend_from_slice(b64::encode(PAYLOAD).as_bytes());
    } else {
        si.extend_from_slice(PAYLOAD);
    }
    format!("{h}..{}", b64::encode(&key.sign(&si).unwrap()))
}

fn reason_code(jws_text: &str, v: &Verifier) -> &'static str {
    let r = not_verified(v.verify_jws(jws_text, Some(PAYLOAD)), jws_text);
    assert!(!r.verified(), "{jws_text} verified");
    r.signatures[0].reason.as_ref().unwrap().code()
}

#[test]
fn policy_negatives_each_have_their_own_reason() {
    let k = ed_key();
    let keys = trust(k.verifying_key().clone());
    let p = defaults(&keys);
    // Baseline: the well-formed one verifies.
    assert!(verdict(
        &compact_with(r#"{"alg":"EdDSA"}"#, &k, true),
        Some(PAYLOAD),
        &p
    ));
    assert!(verdict(
        &compact_with(r#"{"alg":"EdDSA","b64":false,"crit":["b64"]}"#, &k, false),
        Some(PAYLOAD),
        &p
    ));
    // Header alg "Ed25519" (RFC 9864) is accepted as the same algorithm.
    assert!(verdict(
        &compact_with(r#"{"alg":"Ed25519"}"#, &k, true),
        Some(PAYLOAD),
        &p
    ));

    let hs = SigningKey::from_hmac_secret(&[7u8; 32]).unwrap();
    let mut all_codes = Vec::new();
    let mut case = |name: &str, code: &'static str, got: &'static str| {
        assert_eq!(got, code, "{name}");
        all_codes.push(code);
    };
    case(
        "alg none",
        "alg-none",
        reason_code(&compact_with(r#"{"alg":"none"}"#, &k, true), &p),
    );
    case(
        "alg missing",
        "alg-missing",
        reason_code(&compact_with(r#"{"kid":"x"}"#, &k, true), &p),
    );
    case(
        "alg unknown",
        "alg-unknown",
        reason_code(&compact_with(r#"{"alg":"ES512"}"#, &k, true), &p),
    );
    // HS256 is a known algorithm but not in the default allow-list.
    let hs_keys = trust(hs.verifying_key().clone());
    case(
        "alg not allowed",
        "alg-not-allowed",
        reason_code(
            &compact_with(r#"{"alg":"HS256"}"#, &hs, true),
            &defaults(&hs_keys),
        ),
    );
    // Header claims ES256, the trusted key is Ed25519.
    case(
        "header alg is not the key's",
        "alg-not-keys",
        reason_code(&compact_with(r#"{"alg":"ES256"}"#, &k, true), &p),
    );
    case(
        "unknown crit",
        "crit-unknown",
        reason_code(
            &compact_with(r#"{"alg":"EdDSA","crit":["exp"],"exp":1}"#, &k, true),
            &p,
        ),
    );
    case(
        "crit names a member that is absent",
        "crit-malformed",
        reason_code(
            &compact_with(r#"{"alg":"EdDSA","crit":["b64"]}"#, &k, true),
            &p,
        ),
    );
    case(
        "b64 without crit",
        "b64-malformed",
        reason_code(
            &compact_with(r#"{"alg":"EdDSA","b64":false}"#, &k, false),
            &p,
        ),
    );
    for kh in ["jku", "x5u", "jwk", "x5c"] {
        let v = if kh == "jwk" {
            json!({"alg": "EdDSA", "jwk": k.verifying_key().to_jwk().to_value()})
        } else if kh == "x5c" {
            json!({"alg": "EdDSA", "x5c": ["MIIB"]})
        } else {
            json!({"alg": "EdDSA", kh: "https://attacker.example/keys"})
        };
        case(
            kh,
            "key-header-offered",
            reason_code(&compact_with(&v.to_string(), &k, true), &p),
        );
    }
    // Protected and unprotected header overlap (JSON serialization).
    let c = compact_with(r#"{"alg":"EdDSA","kid":"a"}"#, &k, true);
    let parts: Vec<&str> = c.split('.').collect();
    let overlap = json!({"protected": parts[0], "header": {"kid": "b"}, "signature": parts[2]});
    case(
        "protected/unprotected overlap",
        "headers-not-disjoint",
        reason_code(&overlap.to_string(), &p),
    );
    // typ mismatch.
    let typed = Verifier::builder(keys.clone())
        .jws(JwsPolicy::default().expected_typ(["agent+jws"]))
        .build();
    case(
        "typ mismatch",
        "typ-mismatch",
        reason_code(
            &compact_with(r#"{"alg":"EdDSA","typ":"JWT"}"#, &k, true),
            &typed,
        ),
    );
    assert!(verdict(
        &compact_with(r#"{"alg":"EdDSA","typ":"application/agent+jws"}"#, &k, true),
        Some(PAYLOAD),
        &typed
    ));
    case(
        "no trusted key for kid",
        "no-trusted-key",
        reason_code(
            &compact_with(r#"{"alg":"EdDSA","kid":"other"}"#, &k, true),
            &defaults(&trust(k.verifying_key().clone().with_kid("mine"))),
        ),
    );
    case(
        "signature does not match",
        "signature-mismatch",
        reason_code(&compact_with(r#"{"alg":"EdDSA"}"#, &ed_other(), true), &p),
    );
    // Every reason above is distinct (the four key headers share one).
    let mut distinct = all_codes.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), all_codes.len() - 3);

    // Not per-signature reasons but errors on the whole JWS:
    // duplicate header member (strict I-JSON) ...
    let dup = compact_with(r#"{"alg":"EdDSA","alg":"none"}"#, &k, true);
    match p.verify_jws(&dup, Some(PAYLOAD)) {
        Err(JwsVerifyError::Jws(JwsError::HeaderJson(m))) => {
            assert!(m.contains("duplicate"), "{m}")
        }
        other => panic!("duplicate member: {other:?}"),
    }
    // ... and non-canonical base64url (padding, non-zero trailing bits, std alphabet).
    // A 64-byte signature is 86 characters; the last one carries 4 unused
    // bits, which must be zero. Setting one gives a non-canonical encoding.
    let good = compact_with(r#"{"alg":"EdDSA"}"#, &k, true);
    let parts: Vec<&str> = good.split('.').collect();
    let sig = parts[2];
    assert_eq!(sig.len(), 86);
    let noncanon = bump_unused_bits(sig);
    assert_ne!(noncanon, sig);
    // A 16-byte header likewise (16 = 3 * 5 + 1).
    let h16 = r#"{"alg":"EdDSA" }"#;
    assert_eq!(h16.len(), 16);
    let good16 = compact_with(h16, &k, true);
    assert!(verdict(&good16, Some(PAYLOAD), &p));
    let p16: Vec<&str> = good16.split('.').collect();
    for bad in [
        format!("{}..{}", parts[0], noncanon),
        format!("{}..{}", bump_unused_bits(p16[0]), p16[2]),
        format!("{}..{}==", parts[0], sig),
        format!("{}=..{}", p16[0], p16[2]),
        format!("{}..{}", parts[0], sig.replace('-', "+").replace('_', "/")),
        format!("{}..{} ", parts[0], &sig[..85]),
    ] {
        if bad.split('.').nth(2) == Some(sig) && bad.starts_with(parts[0]) {
            continue; // the replace() found nothing to change
        }
        assert!(
            matches!(
                p.verify_jws(&bad, Some(PAYLOAD)),
                Err(JwsVerifyError::Jws(JwsError::Base64 { .. }))
            ),
            "{bad}"
        );
    }
}

/// Set the lowest unused bit of the last base64url character (whose value is
/// a multiple of 16 when 4 bits are unused).
fn bump_unused_bits(s: &str) -> String {
    const ALPHA: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let last = *s.as_bytes().last().unwrap();
    let i = ALPHA.iter().position(|&c| c == last).unwrap();
    assert_eq!(i % 16, 0, "4 unused bits expected");
    format!("{}{}", &s[..s.len() - 1], ALPHA[i + 1] as char)
}

fn ed_other() -> SigningKey {
    SigningKey::from_ed25519_seed(&[9u8; 32]).unwrap()
}

/// RFC 8725 3.1 at the library level: a shared secret whose source is a JWK
/// Set (or discovery) is never used, even when HS256 is in the allow-list;
/// the same secret given as a pinned key is.
#[test]
fn shared_secret_from_published_source_is_never_used() {
    use agentsig::jws::{self, Verdict};
    use agentsig::trust::{KeySource, StaticKeys};
    use agentsig::verifier::Verifier;
    use agentsig::{AllowList, SigningKey};
    let key = SigningKey::from_hmac_secret(&[7u8; 32]).expect("secret");
    let doc = b"{\"a\":1}";
    let compact = jws::sign_compact_detached(doc, &key, &Default::default()).expect("sign");
    for (source, ok) in [
        (KeySource::Pinned, true),
        (KeySource::File("secret".into()), true),
        (KeySource::Jwks("https://as.example/jwks".into()), false),
        (KeySource::Discovered("did:web:example.com".into()), false),
    ] {
        let keys = StaticKeys::new().with(key.verifying_key().clone(), source.clone());
        let v = Verifier::builder(keys).algorithms(AllowList::all()).build();
        let res = v.verify_jws(&compact, Some(doc));
        // Ok exactly when verified; a refusal still carries the report.
        assert_eq!(res.is_ok(), ok, "{source:?}");
        let r = match res {
            Ok(r) => r,
            Err(e) => e.report().expect("parse").clone(),
        };
        assert_eq!(r.verified(), ok, "{source:?}");
        if !ok {
            assert_eq!(r.signatures[0].verdict, Verdict::NoTrustedKey, "{source:?}");
        }
    }
}
