//! Security regressions for keys, JWS header policy and key loading
//! (RFC 8725 sections 2.1, 3.1 and 3.11; RFC 8032 section 5.1.7).

use agentsig::httpsig::SignHttp;
use agentsig::jws::{self, JwsPolicy, JwsReport, JwsVerifyError};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::verifier::VerifyHttp;
use agentsig::SigningKey;
use serde_json::json;

#[path = "b64_support/mod.rs"]
mod b64;

const PAYLOAD: &[u8] = b"{\"name\":\"agent\"}";

/// The report of a readable JWS, verified or not: `Ok` from `jws::verify`
/// must be verified and `NotVerified` must not be (the one-verifier-shape
/// contract), and a malformed JWS fails the test.
fn verify_report(v: &Verifier, text: &str, detached: Option<&[u8]>) -> JwsReport {
    match v.verify_jws(text, detached) {
        Ok(r) => {
            assert!(r.verified(), "Ok from jws::verify but not verified");
            r
        }
        Err(JwsVerifyError::NotVerified(r)) => {
            assert!(!r.verified(), "NotVerified but the report verified");
            *r
        }
        Err(e) => panic!("parse: {e}"),
    }
}

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

/// A required `typ` is met only by the protected header.
#[test]
fn required_typ_is_not_met_by_unprotected_header() {
    let k = ed_key();
    let keys = StaticKeys::new().with(k.verifying_key().clone(), KeySource::Pinned);
    let typed = Verifier::builder(keys)
        .jws(JwsPolicy::default().expected_typ(["agent+jws"]))
        .build();
    let unprot = flattened(&json!({"alg": "EdDSA"}), &json!({"typ": "agent+jws"}), &k);
    let r = verify_report(&typed, &unprot, Some(PAYLOAD));
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
    let r = verify_report(&typed, &prot, Some(PAYLOAD));
    assert!(r.verified(), "{:?}", r.signatures[0].reason);
}

/// The 14 encodings of the 8 small-order edwards25519 points (canonical,
/// sign-bit variants, and y >= p variants), each checked independently to
/// satisfy 8·P = identity.
const SMALL_ORDER_HEX: [&str; 14] = [
    "0000000000000000000000000000000000000000000000000000000000000000",
    "0000000000000000000000000000000000000000000000000000000000000080",
    "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "0100000000000000000000000000000000000000000000000000000000000000",
    "0100000000000000000000000000000000000000000000000000000000000080",
    "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
];

/// Small-order Ed25519 public keys are refused in every
/// encoding and through every loader (raw bytes, JWK, SPKI DER and PEM).
#[test]
fn small_order_ed25519_keys_are_refused_everywhere() {
    use agentsig::keys::{load_verifying_key, LoadOptions};
    use agentsig::VerifyingKey;
    for h in SMALL_ORDER_HEX {
        let pk = hex::decode(h).expect("hex");
        let raw = VerifyingKey::from_ed25519_bytes(&pk);
        assert!(raw.is_err(), "raw {h} accepted");
        let jwk = json!({"kty": "OKP", "crv": "Ed25519", "x": b64::encode(&pk)}).to_string();
        let r = load_verifying_key(jwk.as_bytes(), &LoadOptions::default());
        assert!(r.is_err(), "JWK {h} accepted");
        let mut der = hex::decode("302a300506032b6570032100").expect("hex");
        der.extend_from_slice(&pk);
        assert!(
            load_verifying_key(&der, &LoadOptions::default()).is_err(),
            "SPKI {h} accepted"
        );
        let text = format!(
            "-----BEGIN PUBLIC KEY-----\n{}\n-----END PUBLIC KEY-----\n",
            base64_std(&der)
        );
        assert!(
            load_verifying_key(text.as_bytes(), &LoadOptions::default()).is_err(),
            "PEM {h} accepted"
        );
    }
    // The library's table is exactly this set.
    let table: Vec<String> = agentsig::keys::ED25519_SMALL_ORDER
        .iter()
        .map(hex::encode)
        .collect();
    let mut want: Vec<String> = SMALL_ORDER_HEX.iter().map(|s| s.to_string()).collect();
    let mut got = table.clone();
    want.sort();
    got.sort();
    assert_eq!(got, want);
    // An ordinary key still loads.
    let x = ed_key().verifying_key().to_jwk().x.expect("x");
    let x = b64::decode(&x).expect("b64");
    assert!(VerifyingKey::from_ed25519_bytes(&x).is_ok());
}

fn base64_std(b: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(b.as_ref())
}

/// With hmac-sha256, a public (or private) key file is
/// never taken as the shared secret, whatever its wrapping.
#[test]
fn hmac_secret_refuses_key_material() {
    use agentsig::keys::{load_signing_key, load_verifying_key, KeyError, LoadOptions};
    use agentsig::Algorithm;
    let opts = LoadOptions {
        alg: Some(Algorithm::HmacSha256),
        ..LoadOptions::default()
    };
    let spki_der = ed_key().verifying_key().to_spki_der().expect("spki");
    let spki_pem = ed_key().verifying_key().to_spki_pem().expect("pem");
    let p256 = SigningKey::generate(Algorithm::EcdsaP256Sha256).expect("gen");
    let p256_pkcs8_pem = p256.pkcs8_pem().expect("pkcs8").to_string();
    let p256_spki = p256.verifying_key().to_spki_der().expect("spki");
    let jwk = p256.verifying_key().to_jwk().to_json_string();
    let mut cases: Vec<(&str, Vec<u8>)> = vec![
        ("DER SPKI", spki_der.clone()),
        ("DER SPKI P-256 (long form length)", p256_spki.clone()),
        ("truncated DER", p256_spki[..40].to_vec()),
        (
            "PEM with a preamble",
            format!("my key:\n{spki_pem}").into_bytes(),
        ),
        (
            "PEM after a BOM",
            format!("\u{feff}{spki_pem}").into_bytes(),
        ),
        (
            "PKCS#8 PEM with a preamble",
            format!("x\n{p256_pkcs8_pem}").into_bytes(),
        ),
        ("base64 of a DER SPKI", base64_std(&p256_spki).into_bytes()),
        ("JWK after a BOM", format!("\u{feff}{jwk}").into_bytes()),
    ];
    let mut long_der = vec![0x30, 0x82, 0x01, 0x22, 0x30, 0x0d];
    long_der.extend_from_slice(&[0x41; 40]);
    cases.push(("truncated DER with a two-byte length", long_der));
    for (name, data) in cases {
        for r in [
            load_verifying_key(&data, &opts).map(|_| ()),
            load_signing_key(&data, &opts).map(|_| ()),
        ] {
            match r {
                Err(KeyError::SecretLooksLikeKey(_)) => {}
                other => panic!("{name}: {other:?}"),
            }
        }
    }
    // A real secret (raw or base64) still loads.
    let secret = [0xa5u8; 32];
    assert!(load_verifying_key(&secret, &opts).is_ok());
    assert!(load_verifying_key(base64_std(&secret).as_bytes(), &opts).is_ok());
    // Base64 text is not read as DER: its alphabet holds '0' (0x30, the
    // SEQUENCE tag), so text starting "0?0" (one secret in about 4,096
    // that `keygen --alg hmac-sha256` writes) once looked like a DER header.
    let alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for c in alphabet.chars() {
        let text = format!("0{c}0{}=\n", "A".repeat(40));
        for r in [
            load_verifying_key(text.as_bytes(), &opts).map(|_| ()),
            load_signing_key(text.as_bytes(), &opts).map(|_| ()),
        ] {
            assert!(r.is_ok(), "{text}: {r:?}");
        }
    }
    let e = load_verifying_key(&spki_der, &opts).expect_err("refused");
    assert!(e.to_string().contains("looks like key material"), "{e}");
}

const P256_N: &str = "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551";
const P384_N: &str = "ffffffffffffffffffffffffffffffffffffffffffffffffc7634d81f4372ddf581a0db248b0a77aecec196accc52973";

/// `(r, s)` -> `(r, n - s)`: the other valid signature of the same message.
fn malleate(sig: &[u8], n_hex: &str) -> Vec<u8> {
    let n = hex::decode(n_hex).expect("hex");
    let half = sig.len() / 2;
    let s = &sig[half..];
    let mut out = vec![0u8; half];
    let mut borrow = 0i16;
    for i in (0..half).rev() {
        let mut d = n[i] as i16 - s[i] as i16 - borrow;
        borrow = 0;
        if d < 0 {
            d += 256;
            borrow = 1;
        }
        out[i] = d as u8;
    }
    let mut v = sig[..half].to_vec();
    v.extend_from_slice(&out);
    v
}

/// A high-S ECDSA signature (s' = n - s from a valid one)
/// verifies by default and is refused in strict low-S mode, in JWS and in
/// RFC 9421.
#[test]
fn ecdsa_high_s_accepted_by_default_refused_in_low_s_mode() {
    use agentsig::httpsig::{self, ComponentId, SignatureSpec};
    use agentsig::keys::ecdsa_high_s;
    use agentsig::Algorithm;
    for (alg, n) in [
        (Algorithm::EcdsaP256Sha256, P256_N),
        (Algorithm::EcdsaP384Sha384, P384_N),
    ] {
        let k = SigningKey::generate(alg).expect("gen").with_kid("k");
        let keys =
            StaticKeys::new().with(k.verifying_key().clone().with_kid("k"), KeySource::Pinned);
        // JWS.
        let compact = jws::sign_compact_detached(PAYLOAD, &k, &Default::default()).expect("sign");
        let parts: Vec<&str> = compact.split('.').collect();
        let sig = b64::decode(parts[2]).expect("b64");
        let other = malleate(&sig, n);
        assert_ne!(ecdsa_high_s(alg, &sig), ecdsa_high_s(alg, &other));
        let high = if ecdsa_high_s(alg, &sig) {
            &sig
        } else {
            &other
        };
        let low = if ecdsa_high_s(alg, &sig) {
            &other
        } else {
            &sig
        };
        let with = |s: &[u8]| format!("{}..{}", parts[0], b64::encode(s));
        let lax = Verifier::builder(keys.clone()).build();
        let strict = Verifier::builder(keys.clone()).strict_low_s(true).build();
        for (s, verifier, want) in [
            (high, &lax, true),
            (low, &lax, true),
            (high, &strict, false),
            (low, &strict, true),
        ] {
            let r = verify_report(verifier, &with(s), Some(PAYLOAD));
            assert_eq!(
                r.verified(),
                want,
                "{alg} JWS low_s={} {:?}",
                verifier.strict_low_s(),
                r.signatures[0].reason
            );
        }
        // RFC 9421.
        let mut req = http::Request::builder()
            .method("POST")
            .uri("https://example.com/foo")
            .body(PAYLOAD.to_vec())
            .expect("request");
        let spec = SignatureSpec::new("sig1")
            .component(ComponentId::parse("@method").expect("c"))
            .component(ComponentId::parse("@target-uri").expect("c"))
            .created(1)
            .keyid("k");
        let signed = req.sign_signature(&spec, &k).expect("sign");
        let other = malleate(&signed.signature_bytes, n);
        for s in [signed.signature_bytes.clone(), other] {
            let high = ecdsa_high_s(alg, &s);
            req.headers_mut().insert(
                "signature",
                format!("sig1=:{}:", base64_std(&s))
                    .parse()
                    .expect("header"),
            );
            for low_s in [false, true] {
                let mut p = httpsig::HttpPolicy::new().allow_uncovered_content();
                p.check_time = false;
                let v = Verifier::builder(keys.clone())
                    .http(p)
                    .strict_low_s(low_s)
                    .build();
                let ok = match req.verify_signature(&v) {
                    Ok(r) => {
                        assert!(r.all_valid(), "Ok from verify_request but not all valid");
                        true
                    }
                    Err(httpsig::HttpSigError::NotVerified(r)) => {
                        assert!(!r.all_valid(), "NotVerified but all labels valid");
                        false
                    }
                    Err(e) => panic!("{alg} RFC 9421: unreadable message: {e}"),
                };
                assert_eq!(
                    ok,
                    !(low_s && high),
                    "{alg} RFC 9421 high={high} low_s={low_s}"
                );
            }
        }
    }
}
