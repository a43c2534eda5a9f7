//! did:key / did:jwk decoding and did:web URLs against the W3C CCG did:key
//! vectors, the did:jwk spec examples and the project's verified fixtures.

use agentsig::did::{self, DidError};
use agentsig::{Algorithm, VerifyingKey};
use serde_json::Value;

#[path = "b64_support/mod.rs"]
mod b64;

fn load(name: &str) -> Value {
    let p = format!("{}/tests/vectors/did/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&p).expect("read")).expect("json")
}

fn jwk_of(k: &VerifyingKey) -> (String, Option<String>, Option<String>) {
    let j = k.to_jwk();
    (j.crv.unwrap_or_default(), j.x, j.y)
}

fn ed_key_from_b58(b58: &str) -> VerifyingKey {
    let raw = bs58::decode(b58).into_vec().expect("b58");
    VerifyingKey::from_ed25519_bytes(&raw).expect("ed25519")
}

/// Every W3C did:key vector for Ed25519, P-256 and P-384 decodes to the
/// published key, re-encodes to the same DID; secp256k1, X25519 and P-521
/// are refused as unsupported.
#[test]
fn w3c_did_key_vectors() {
    let mut decoded = 0;
    // Ed25519 (with X25519 key agreement keys alongside).
    for (did, v) in load("w3c-ccg-did-method-key_ed25519-x25519.json")
        .as_object()
        .expect("obj")
    {
        let vkp = &v["verificationKeyPair"];
        let want = match vkp["publicKeyBase58"].as_str() {
            Some(b58) => ed_key_from_b58(b58),
            None => {
                let x = vkp["publicKeyJwk"]["x"].as_str().expect("x");
                VerifyingKey::from_ed25519_bytes(&b64::decode(x).expect("b64")).expect("ed")
            }
        };
        let got = did::decode_did_key(did).unwrap_or_else(|e| panic!("{did}: {e}"));
        assert_eq!(got.algorithm(), Algorithm::Ed25519);
        assert_eq!(got.thumbprint(), want.thumbprint(), "{did}");
        assert_eq!(did::did_key(&got).as_deref(), Some(did.as_str()));
        // The X25519 key agreement id is a did:key of its own: unsupported.
        let ka = v["keyAgreementKeyPair"]["id"].as_str().expect("id");
        let ka_did = match ka.rsplit_once('#') {
            Some((_, frag)) => format!("did:key:{frag}"),
            None => format!("did:key:{ka}"),
        };
        assert!(
            matches!(
                did::decode_did_key(&ka_did),
                Err(DidError::Unsupported { .. })
            ),
            "{ka_did}"
        );
        decoded += 1;
    }
    // P-256, P-384 (and P-521, unsupported).
    for (did, v) in load("w3c-ccg-did-method-key_nist-curves.json")
        .as_object()
        .expect("obj")
    {
        let vm = &v["verificationMethod"];
        if let Some(b58) = vm["publicKeyBase58"].as_str() {
            // P256Key2021: the SEC1 compressed point in base58.
            let point = bs58::decode(b58).into_vec().expect("b58");
            let want =
                VerifyingKey::from_sec1_point(Algorithm::EcdsaP256Sha256, &point).expect("point");
            let got = did::decode_did_key(did).unwrap_or_else(|e| panic!("{did}: {e}"));
            assert_eq!(got.thumbprint(), want.thumbprint(), "{did}");
            assert_eq!(did::did_key(&got).as_deref(), Some(did.as_str()));
            decoded += 1;
            continue;
        }
        let jwk = &vm["publicKeyJwk"];
        let crv = jwk["crv"].as_str().expect("crv");
        let r = did::decode_did_key(did);
        if crv == "P-521" {
            assert!(
                matches!(r, Err(DidError::Unsupported { .. })),
                "{did}: {r:?}"
            );
            continue;
        }
        let got = r.unwrap_or_else(|e| panic!("{did}: {e}"));
        let (c, x, y) = jwk_of(&got);
        assert_eq!(c, crv);
        assert_eq!(x.as_deref(), jwk["x"].as_str(), "{did}");
        assert_eq!(y.as_deref(), jwk["y"].as_str(), "{did}");
        assert_eq!(did::did_key(&got).as_deref(), Some(did.as_str()));
        decoded += 1;
    }
    assert_eq!(decoded, 10);
    for (did, _) in load("w3c-ccg-did-method-key_secp256k1.json")
        .as_object()
        .expect("obj")
    {
        let r = did::decode_did_key(did);
        assert!(
            matches!(&r, Err(DidError::Unsupported { codec }) if codec.contains("secp256k1")),
            "{did}: {r:?}"
        );
    }
    for (did, _) in load("w3c-ccg-did-method-key_x25519.json")["didDocument"]
        .as_object()
        .expect("obj")
    {
        let r = did::decode_did_key(did);
        assert!(
            matches!(&r, Err(DidError::Unsupported { codec }) if codec.contains("x25519")),
            "{did}: {r:?}"
        );
    }
}

/// All 22 verified fixtures: supported codecs give the fixture's key bytes
/// (and JWK); the rest are refused as unsupported.
#[test]
fn verified_did_key_fixtures() {
    let v = load("did_fixtures_verified.json");
    let fixtures = v["did_key"].as_array().expect("array");
    assert_eq!(fixtures.len(), 22);
    for f in fixtures {
        let d = f["did"].as_str().expect("did");
        let codec = f["codec"].as_str().expect("codec");
        let r = did::decode_did_key(d);
        // A DID URL with the fragment decodes to the same key.
        let r2 = did::decode_did_key(f["expected_vm_id"].as_str().expect("vm"));
        match codec {
            "ed25519-pub" | "p256-pub" | "p384-pub" => {
                let k = r.unwrap_or_else(|e| panic!("{d}: {e}"));
                assert_eq!(k.thumbprint(), r2.expect("vm id").thumbprint());
                let pk = hex::decode(f["public_key_hex"].as_str().expect("hex")).expect("hex");
                let want = if codec == "ed25519-pub" {
                    VerifyingKey::from_ed25519_bytes(&pk).expect("ed")
                } else {
                    let alg = if codec == "p256-pub" {
                        Algorithm::EcdsaP256Sha256
                    } else {
                        Algorithm::EcdsaP384Sha384
                    };
                    VerifyingKey::from_sec1_point(alg, &pk).expect("point")
                };
                assert_eq!(k.thumbprint(), want.thumbprint(), "{d}");
                let (crv, x, y) = jwk_of(&k);
                assert_eq!(Some(crv.as_str()), f["jwk"]["crv"].as_str());
                assert_eq!(x.as_deref(), f["jwk"]["x"].as_str());
                assert_eq!(y.as_deref(), f["jwk"]["y"].as_str());
            }
            _ => assert!(matches!(r, Err(DidError::Unsupported { .. })), "{d}: {r:?}"),
        }
    }
}

/// did:jwk spec examples: the signing keys decode to the JWK; the X25519
/// (use: enc) example is refused; re-encoding is stable for our own form.
#[test]
fn did_jwk_examples() {
    let v = load("did_fixtures_verified.json");
    for f in v["did_jwk"].as_array().expect("array") {
        let d = f["did"].as_str().expect("did");
        let jwk = &f["jwk"];
        let r = did::decode_did_jwk(d);
        let r_url = did::decode_did_jwk(f["expected_vm_id"].as_str().expect("vm"));
        if jwk["crv"] == "X25519" {
            assert!(r.is_err() && r_url.is_err(), "{d}");
            continue;
        }
        let k = r.unwrap_or_else(|e| panic!("{d}: {e}"));
        assert_eq!(k.thumbprint(), r_url.expect("url").thumbprint());
        let (crv, x, y) = jwk_of(&k);
        assert_eq!(Some(crv.as_str()), jwk["crv"].as_str());
        assert_eq!(x.as_deref(), jwk["x"].as_str());
        assert_eq!(y.as_deref(), jwk["y"].as_str());
        let again = did::did_jwk(&k).expect("did:jwk");
        assert_eq!(
            did::decode_did_jwk(&again).expect("again").thumbprint(),
            k.thumbprint()
        );
    }
    let spec = load("did_jwk_spec_examples.json");
    for e in spec["examples"].as_array().expect("array") {
        let d = e["did"].as_str().expect("did");
        let doc = &e["didDocument"]["verificationMethod"][0]["publicKeyJwk"];
        let r = did::decode_did_jwk(d);
        if doc["crv"] == "X25519" {
            assert!(r.is_err(), "{d}");
        } else {
            let (_, x, _) = jwk_of(&r.unwrap_or_else(|e| panic!("{d}: {e}")));
            assert_eq!(x.as_deref(), doc["x"].as_str());
        }
    }
}

#[test]
fn did_web_urls() {
    let v = load("did_fixtures_verified.json");
    let cases = v["did_web_urls"].as_array().expect("array");
    assert_eq!(cases.len(), 8);
    for c in cases {
        let d = c["did"].as_str().expect("did");
        assert_eq!(
            did::did_web_url(d).as_deref().map_err(|e| e.to_string()),
            Ok(c["url"].as_str().expect("url")),
            "{d}"
        );
    }
    for bad in [
        "did:web:192.0.2.1",
        "did:web:192.0.2.1%3A443",
        "did:web:example.com:..:evil",
        "did:web:example.com:.:x",
        "did:web:example.com::x",
        "did:web:example.com:a%2Fb",
        "did:web:exa%2Fmple.com",
        "did:web:example.com%3A0",
        "did:web:example.com%3A99999",
        "did:web:example.com%3Aabc",
        "did:web:",
        "did:web:user@example.com",
        "did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp",
    ] {
        assert!(did::did_web_url(bad).is_err(), "{bad} accepted");
    }
}

/// The fixtures' negative cases and other malformed input: typed errors.
#[test]
fn negative_cases() {
    let v = load("did_fixtures_verified.json");
    for n in v["negative"].as_array().expect("array") {
        let input = n["input"].as_str().expect("input");
        if n.get("served_doc_id").is_some() {
            continue; // a resolver check (document id), not a decoding one
        }
        let rejected = if input.starts_with("did:key:") {
            did::decode_did_key(input).is_err()
        } else if input.starts_with("did:jwk:") {
            did::decode_did_jwk(input).is_err()
        } else {
            did::did_web_url(input).is_err()
        };
        assert!(rejected, "{input}: {}", n["expect"]);
    }
    assert_eq!(
        did::decode_did_key(
            "did:key:fed013b6a27bcceb6a42d62a3a8d02a6f0d73653215771de243a63ac048a18b59da29"
        )
        .err(),
        Some(DidError::Multibase)
    );
    assert_eq!(
        did::decode_did_key("did:key:z0OIl").err(),
        Some(DidError::Base58)
    );
    assert!(matches!(
        did::decode_did_key("did:jwk:abc"),
        Err(DidError::WrongMethod { .. })
    ));
    // A valid Ed25519 did:key with one byte cut off or added.
    let good = bs58::decode("6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp")
        .into_vec()
        .expect("b58");
    for bytes in [
        good[..good.len() - 1].to_vec(),
        [good.clone(), vec![0]].concat(),
    ] {
        let d = format!("did:key:z{}", bs58::encode(bytes).into_string());
        assert!(
            matches!(did::decode_did_key(&d), Err(DidError::KeyLength { .. })),
            "{d}"
        );
    }
    // A P-256 point not on the curve.
    let mut p = vec![0x80, 0x24, 0x02];
    p.extend_from_slice(&[0xff; 32]);
    let d = format!("did:key:z{}", bs58::encode(p).into_string());
    assert!(
        matches!(did::decode_did_key(&d), Err(DidError::Key(_))),
        "{d}"
    );
    // A small-order Ed25519 key.
    let mut s = vec![0xed, 0x01, 0x01];
    s.extend_from_slice(&[0; 31]);
    let d = format!("did:key:z{}", bs58::encode(s).into_string());
    assert!(matches!(did::decode_did_key(&d), Err(DidError::Key(_))));
    // did:jwk with a private member, with kty oct, not JSON.
    let priv_jwk = r#"{"kty":"OKP","crv":"Ed25519","x":"O2onvM62pC1io6jQKm8Nc2UyFXcd4kOmOsBIoYtZ2ik","d":"AAAA"}"#;
    assert_eq!(
        did::decode_did_jwk(&format!("did:jwk:{}", b64::encode(priv_jwk.as_bytes()))).err(),
        Some(DidError::PrivateKey)
    );
    assert!(did::decode_did_jwk(&format!("did:jwk:{}", b64::encode(b"not json"))).is_err());
    // Oversized input.
    let long = format!("did:key:z{}", "1".repeat(did::MAX_DID_LEN));
    assert_eq!(did::decode_did_key(&long).err(), Some(DidError::TooLong));
}
