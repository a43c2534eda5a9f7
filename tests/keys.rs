//! Key loading: the RFC 9421 test keys exactly as printed, DER forms, JWK
//! Sets and kid selection, encrypted PKCS#8, private JWKs whose public part
//! does not match, hostile input, and RSA key generation.

use agentsig::keys::{self, KeyError, VerifyError};
use agentsig::{jwk, Algorithm, LoadOptions, SigningKey, VerifyingKey};
use serde_json::{json, Value};
use zeroize::Zeroizing;

#[path = "b64_support/mod.rs"]
mod b64;

fn root() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rfc9421(name: &str) -> Vec<u8> {
    std::fs::read(root().join("keys/rfc9421").join(name)).unwrap()
}

fn vec_key(name: &str) -> Vec<u8> {
    std::fs::read(root().join("tests/vectors/keys").join(name)).unwrap()
}

fn opts(alg: Option<Algorithm>) -> LoadOptions {
    LoadOptions {
        alg,
        ..LoadOptions::default()
    }
}

fn with_kid(kid: &str) -> LoadOptions {
    LoadOptions {
        kid: Some(kid.into()),
        ..LoadOptions::default()
    }
}

/// The DER inside the first PEM block (armour stripped, base64 decoded).
fn pem_to_der(pem: &[u8]) -> Vec<u8> {
    let text = std::str::from_utf8(pem).unwrap();
    let body: String = text
        .lines()
        .skip_while(|l| !l.starts_with("-----BEGIN "))
        .skip(1)
        .take_while(|l| !l.starts_with("-----END "))
        .collect();
    b64::decode_std(&body).unwrap()
}

/// A JWK without its private members.
fn public_jwk(v: &Value) -> Value {
    let mut m = v.as_object().unwrap().clone();
    for k in ["d", "p", "q", "dp", "dq", "qi"] {
        m.remove(k);
    }
    Value::Object(m)
}

fn jwk_value(name: &str) -> Value {
    serde_json::from_slice(&rfc9421(name)).unwrap()
}

struct Rfc9421Key {
    name: &'static str,
    alg: Algorithm,
    /// The hint the as-printed private PEM needs (RSA PKCS#1 has no algorithm).
    private_hint: Option<Algorithm>,
    /// The hint the public PEM needs (SPKI rsaEncryption / PKCS#1 public).
    public_hint: Option<Algorithm>,
    private_label: &'static str,
}

const RFC9421_KEYS: [Rfc9421Key; 4] = [
    // B.1.1: PKCS#1 RSAPrivateKey, primes of unequal length (ring refuses it).
    Rfc9421Key {
        name: "test-key-rsa",
        alg: Algorithm::RsaV15Sha256,
        private_hint: Some(Algorithm::RsaV15Sha256),
        public_hint: Some(Algorithm::RsaV15Sha256),
        private_label: "RSA PRIVATE KEY",
    },
    // B.1.2: PKCS#8 with the id-RSASSA-PSS OID: the OID itself binds rsa-pss-sha512.
    Rfc9421Key {
        name: "test-key-rsa-pss",
        alg: Algorithm::RsaPssSha512,
        private_hint: None,
        public_hint: Some(Algorithm::RsaPssSha512),
        private_label: "PRIVATE KEY",
    },
    // B.1.3: SEC1 ECPrivateKey.
    Rfc9421Key {
        name: "test-key-ecc-p256",
        alg: Algorithm::EcdsaP256Sha256,
        private_hint: None,
        public_hint: None,
        private_label: "EC PRIVATE KEY",
    },
    // B.1.4: PKCS#8 v1 Ed25519.
    Rfc9421Key {
        name: "test-key-ed25519",
        alg: Algorithm::Ed25519,
        private_hint: None,
        public_hint: None,
        private_label: "PRIVATE KEY",
    },
];

#[test]
fn rfc9421_keys_load_as_printed_and_agree_with_public_pem_and_jwk() {
    for k in &RFC9421_KEYS {
        let priv_pem = rfc9421(&format!("{}.pem", k.name));
        assert!(
            std::str::from_utf8(&priv_pem)
                .unwrap()
                .contains(&format!("-----BEGIN {}-----", k.private_label)),
            "{}: the file is the as-printed encoding",
            k.name
        );
        let sk = keys::load_signing_key(&priv_pem, &opts(k.private_hint))
            .unwrap_or_else(|e| panic!("{}: {e}", k.name));
        assert_eq!(sk.algorithm(), k.alg, "{}", k.name);
        let tp = sk.verifying_key().thumbprint();

        // Public PEM.
        let pub_pem = rfc9421(&format!("{}.pub.pem", k.name));
        let vk = keys::load_verifying_key(&pub_pem, &opts(k.public_hint)).unwrap();
        assert_eq!(vk.algorithm(), k.alg, "{}", k.name);
        assert_eq!(vk.thumbprint(), tp, "{}: public PEM", k.name);

        // Private PEM loaded as a verifying key gives its public half.
        let vk2 = keys::load_verifying_key(&priv_pem, &opts(k.private_hint)).unwrap();
        assert_eq!(vk2.thumbprint(), tp, "{}: public half", k.name);

        // The JWK printed next to it (private); the RSA JWKs carry no alg.
        let jwk_bytes = rfc9421(&format!("{}.jwk.json", k.name));
        let jwk_hint = if k.alg == Algorithm::RsaPssSha512 || k.alg == Algorithm::RsaV15Sha256 {
            Some(k.alg)
        } else {
            None
        };
        let sk_jwk = keys::load_signing_key(&jwk_bytes, &opts(jwk_hint)).unwrap();
        assert_eq!(sk_jwk.verifying_key().thumbprint(), tp, "{}: JWK", k.name);
        assert_eq!(sk_jwk.kid(), Some(k.name));
        let vk_jwk = keys::load_verifying_key(&jwk_bytes, &opts(jwk_hint)).unwrap();
        assert_eq!(vk_jwk.thumbprint(), tp);
        // The thumbprint is that of the JWK's public members (RFC 7638).
        let parsed = jwk::parse_keys(&jwk_bytes).unwrap();
        assert_eq!(parsed[0].thumbprint(), tp, "{}: RFC 7638", k.name);

        // Sign -> verify round trip, across every loaded form.
        let msg = format!("round trip with {}", k.name);
        for signer in [&sk, &sk_jwk] {
            let sig = signer.sign(msg.as_bytes()).unwrap();
            for verifier in [&vk, &vk2, &vk_jwk, sk.verifying_key()] {
                verifier.verify_as(k.alg, msg.as_bytes(), &sig).unwrap();
                assert_eq!(
                    verifier.verify(b"tampered", &sig),
                    Err(VerifyError::Mismatch)
                );
            }
        }
        // The public key re-exported as SPKI PEM loads back to the same key.
        let spki = vk.to_spki_pem().unwrap();
        let back = keys::load_verifying_key(spki.as_bytes(), &opts(Some(k.alg))).unwrap();
        assert_eq!(back.thumbprint(), tp);
    }
}

#[test]
fn rfc9421_shared_secret() {
    let b64 = rfc9421("test-shared-secret.b64");
    let secret = b64::decode_std(std::str::from_utf8(&b64).unwrap().trim()).unwrap();
    assert_eq!(secret.len(), 64);
    let hs = opts(Some(Algorithm::HmacSha256));
    let sk = keys::load_signing_key(&b64, &hs).unwrap();
    let vk = keys::load_verifying_key(&b64, &hs).unwrap();
    assert_eq!(sk.algorithm(), Algorithm::HmacSha256);
    assert_eq!(sk.hmac_secret_bytes(), Some(secret.as_slice()));
    // Same secret given as raw bytes.
    let raw = SigningKey::from_hmac_secret(&secret).unwrap();
    assert_eq!(raw.verifying_key().thumbprint(), vk.thumbprint());
    // As an oct JWK.
    let jwk = json!({"kty": "oct", "k": b64::encode(&secret)}).to_string();
    let vk_jwk = keys::load_verifying_key(jwk.as_bytes(), &opts(None)).unwrap();
    assert_eq!(vk_jwk.thumbprint(), vk.thumbprint());
    let sig = sk.sign(b"msg").unwrap();
    assert_eq!(sig.len(), 32);
    vk.verify_as(Algorithm::HmacSha256, b"msg", &sig).unwrap();
    vk_jwk.verify(b"msg", &sig).unwrap();
    assert!(vk.verify(b"msg2", &sig).is_err());
    // Without the algorithm the bytes are not recognised as a key.
    assert!(matches!(
        keys::load_verifying_key(&b64, &opts(None)),
        Err(KeyError::UnrecognisedFormat(_))
    ));
    // Too short (RFC 7518 3.2).
    assert_eq!(
        SigningKey::from_hmac_secret(&secret[..31]).err(),
        Some(KeyError::HmacTooShort { len: 31 })
    );
    assert!(matches!(
        keys::load_verifying_key(b"c2hvcnQ=", &hs),
        Err(KeyError::HmacTooShort { len: 5 })
    ));
}

#[test]
fn wrong_algorithm_is_an_error() {
    let ec = rfc9421("test-key-ecc-p256.pem");
    let rsa = rfc9421("test-key-rsa.pem");
    let pss = rfc9421("test-key-rsa-pss.pem");
    let ed = rfc9421("test-key-ed25519.pem");
    // An RSA key does not say which algorithm it is for.
    assert_eq!(
        keys::load_signing_key(&rsa, &opts(None)).err(),
        Some(KeyError::AlgorithmRequired)
    );
    assert_eq!(
        keys::load_verifying_key(&rfc9421("test-key-rsa.pub.pem"), &opts(None)).err(),
        Some(KeyError::AlgorithmRequired)
    );
    assert_eq!(
        keys::load_verifying_key(&rfc9421("test-key-rsa-pss.pub.pem"), &opts(None)).err(),
        Some(KeyError::AlgorithmRequired)
    );
    let rsa_jwk = rfc9421("test-key-rsa.jwk.json");
    assert_eq!(
        keys::load_signing_key(&rsa_jwk, &opts(None)).err(),
        Some(KeyError::AlgorithmRequired)
    );
    // Keys that imply their algorithm refuse another one.
    for (data, key, wrong) in [
        (&ec, Algorithm::EcdsaP256Sha256, Algorithm::Ed25519),
        (&ec, Algorithm::EcdsaP256Sha256, Algorithm::EcdsaP384Sha384),
        (&ed, Algorithm::Ed25519, Algorithm::EcdsaP256Sha256),
        (&pss, Algorithm::RsaPssSha512, Algorithm::RsaV15Sha256),
    ] {
        assert_eq!(
            keys::load_signing_key(data, &opts(Some(wrong))).err(),
            Some(KeyError::AlgorithmMismatch {
                key,
                requested: wrong
            })
        );
    }
    // An RSA key asked for a non-RSA algorithm.
    assert!(matches!(
        keys::load_signing_key(&rsa, &opts(Some(Algorithm::Ed25519))),
        Err(KeyError::AlgorithmMismatch { .. })
    ));
    // A JWK whose alg says RS256 cannot be used as PS512.
    let mut j = public_jwk(&jwk_value("test-key-rsa.jwk.json"));
    j["alg"] = json!("RS256");
    assert!(matches!(
        keys::load_verifying_key(
            j.to_string().as_bytes(),
            &opts(Some(Algorithm::RsaPssSha512))
        ),
        Err(KeyError::AlgorithmMismatch { .. })
    ));
    // Loaded keys refuse to sign or verify under another algorithm.
    let sk = keys::load_signing_key(&ec, &opts(None)).unwrap();
    assert_eq!(
        sk.sign_as(Algorithm::EcdsaP384Sha384, b"m").err(),
        Some(KeyError::AlgorithmMismatch {
            key: Algorithm::EcdsaP256Sha256,
            requested: Algorithm::EcdsaP384Sha384
        })
    );
    let sig = sk.sign_as(Algorithm::EcdsaP256Sha256, b"m").unwrap();
    assert_eq!(
        sk.verifying_key().verify_as(Algorithm::Ed25519, b"m", &sig),
        Err(VerifyError::AlgorithmMismatch {
            key: Algorithm::EcdsaP256Sha256,
            requested: Algorithm::Ed25519
        })
    );
    // The same RSA key material bound to each RSA algorithm: a signature made
    // under one does not verify under the other.
    let rs = keys::load_signing_key(&rsa, &opts(Some(Algorithm::RsaV15Sha256))).unwrap();
    let ps = keys::load_signing_key(&rsa, &opts(Some(Algorithm::RsaPssSha512))).unwrap();
    let s = rs.sign(b"m").unwrap();
    assert!(ps.verifying_key().verify(b"m", &s).is_err());
    assert!(rs.verifying_key().verify(b"m", &s).is_ok());
}

#[test]
fn der_forms_load_like_their_pem() {
    for k in &RFC9421_KEYS {
        let pem = rfc9421(&format!("{}.pem", k.name));
        let der = pem_to_der(&pem);
        let from_pem = keys::load_signing_key(&pem, &opts(k.private_hint)).unwrap();
        let from_der = keys::load_signing_key(&der, &opts(k.private_hint)).unwrap();
        let tp = from_pem.verifying_key().thumbprint();
        assert_eq!(from_der.verifying_key().thumbprint(), tp, "{}", k.name);
        assert_eq!(from_der.algorithm(), k.alg);
        // Private DER as a verifying key: its public half.
        let vk = keys::load_verifying_key(&der, &opts(k.private_hint)).unwrap();
        assert_eq!(vk.thumbprint(), tp);
        // Public DER (SPKI, or PKCS#1 RSAPublicKey for test-key-rsa).
        let pub_der = pem_to_der(&rfc9421(&format!("{}.pub.pem", k.name)));
        let vk = keys::load_verifying_key(&pub_der, &opts(k.public_hint)).unwrap();
        assert_eq!(vk.thumbprint(), tp, "{} public DER", k.name);
        // A public key is not a signing key.
        assert_eq!(
            keys::load_signing_key(&pub_der, &opts(k.public_hint)).err(),
            Some(KeyError::NotPrivate)
        );
        // SPKI DER made by agentsig loads back.
        let spki = vk.to_spki_der().unwrap();
        assert_eq!(
            keys::load_verifying_key(&spki, &opts(Some(k.alg)))
                .unwrap()
                .thumbprint(),
            tp
        );
    }
}

fn jwks(keys: &[Value]) -> Vec<u8> {
    json!({ "keys": keys }).to_string().into_bytes()
}

#[test]
fn jwks_selection_by_kid() {
    let ec = public_jwk(&jwk_value("test-key-ecc-p256.jwk.json"));
    let ed = public_jwk(&jwk_value("test-key-ed25519.jwk.json"));
    let set = jwks(&[ec.clone(), ed.clone()]);
    // No kid: every key.
    let all = keys::load_verifying_keys(&set, &LoadOptions::default()).unwrap();
    assert_eq!(all.len(), 2);
    // load_verifying_key needs exactly one.
    assert_eq!(
        keys::load_verifying_key(&set, &LoadOptions::default()).err(),
        Some(KeyError::AmbiguousKeySet(2))
    );
    // By kid.
    let one = keys::load_verifying_key(&set, &with_kid("test-key-ed25519")).unwrap();
    assert_eq!(one.algorithm(), Algorithm::Ed25519);
    assert_eq!(one.kid(), Some("test-key-ed25519"));
    // Missing kid.
    assert_eq!(
        keys::load_verifying_keys(&set, &with_kid("nope")).err(),
        Some(KeyError::KidNotFound("nope".into()))
    );
    // Duplicate kid: the set is refused (a kid must select one key).
    let mut ed_dup = ed.clone();
    ed_dup["kid"] = json!("test-key-ecc-p256");
    let dup = jwks(&[ec.clone(), ed_dup]);
    assert!(matches!(
        keys::load_verifying_keys(&dup, &LoadOptions::default()),
        Err(KeyError::Jwk(_))
    ));
    assert!(matches!(
        keys::load_verifying_keys(&dup, &with_kid("test-key-ecc-p256")),
        Err(KeyError::Jwk(_))
    ));
    // Empty set.
    assert_eq!(
        keys::load_verifying_keys(&jwks(&[]), &LoadOptions::default()).err(),
        Some(KeyError::EmptyKeySet)
    );
    // Signing key from a set of private JWKs, by kid; a public-only set is refused.
    let priv_set = jwks(&[
        jwk_value("test-key-ecc-p256.jwk.json"),
        jwk_value("test-key-ed25519.jwk.json"),
    ]);
    let sk = keys::load_signing_key(&priv_set, &with_kid("test-key-ecc-p256")).unwrap();
    assert_eq!(sk.algorithm(), Algorithm::EcdsaP256Sha256);
    assert_eq!(
        keys::load_signing_key(&priv_set, &LoadOptions::default()).err(),
        Some(KeyError::AmbiguousKeySet(2))
    );
    assert_eq!(
        keys::load_signing_key(&set, &with_kid("test-key-ecc-p256")).err(),
        Some(KeyError::NotPrivate)
    );
    // A kid given for a PEM key is attached to it.
    let pem = keys::load_verifying_key(&rfc9421("test-key-ecc-p256.pub.pem"), &with_kid("my-kid"))
        .unwrap();
    assert_eq!(pem.kid(), Some("my-kid"));
}

/// RFC 7517 section 5 (and `jwk::parse_keys`' documentation): members a
/// verifier cannot use (unknown kty, unsupported curve, `use` other than
/// `sig`, an RSA key without an algorithm) are ignored, not fatal to the
/// whole set; selecting such a member by kid is an error.
#[test]
fn jwks_unusable_members_are_ignored() {
    let ec = public_jwk(&jwk_value("test-key-ecc-p256.jwk.json"));
    let p521 = json!({"kty": "EC", "crv": "P-521", "kid": "p521",
        "x": "AHKZLLOsCOzz5cY97ewNUajB957y-C-U88c3v13nmGZx6sYl_oJXu9A5RkTKqjqvjyekWF-7ytDyRXYgCF5cj0Kt",
        "y": "AdymlHvOiLxXkEhayXQnNCvDX4h9htZaCJN34kfmC6pV5OhQHiraVySsUdaQkAgDPrwQrJmbnX9cwlGfP-HqHZR1"});
    let mut enc = public_jwk(&jwk_value("test-key-rsa.jwk.json"));
    enc["use"] = json!("enc");
    enc["alg"] = json!("RSA-OAEP");
    let x448 = json!({"kty": "OKP", "crv": "X448", "kid": "x448", "x": "AAAA"});
    let unknown_kty = json!({"kty": "PQC", "kid": "pqc"});
    let set = jwks(&[p521, enc, x448, unknown_kty, ec]);
    let ks = keys::load_verifying_keys(&set, &LoadOptions::default()).unwrap();
    assert_eq!(ks.len(), 1);
    assert_eq!(ks[0].kid(), Some("test-key-ecc-p256"));
    // Asking for an unusable member by kid reports why.
    assert!(matches!(
        keys::load_verifying_keys(&set, &with_kid("p521")),
        Err(KeyError::UnsupportedKeyType(_))
    ));
    assert!(matches!(
        keys::load_verifying_keys(&set, &with_kid("test-key-rsa")),
        Err(KeyError::Jwk(_))
    ));
    // A set with no usable member is an error, with the reason of the first.
    let only_bad = jwks(&[json!({"kty": "EC", "crv": "P-521", "x": "AA", "y": "AA"})]);
    assert!(keys::load_verifying_keys(&only_bad, &LoadOptions::default()).is_err());
}

#[test]
fn encrypted_pkcs8_with_passphrase() {
    let pass = vec_key("passphrase.txt");
    let good = |hint| LoadOptions {
        alg: hint,
        kid: None,
        passphrase: Some(Zeroizing::new(pass.clone())),
    };
    let wrong = |hint| LoadOptions {
        alg: hint,
        kid: None,
        passphrase: Some(Zeroizing::new(b"not the passphrase".to_vec())),
    };
    for (name, hint, alg) in [
        ("test-key-ecc-p256", None, Algorithm::EcdsaP256Sha256),
        ("test-key-ed25519", None, Algorithm::Ed25519),
        // pyca/cryptography re-encodes the PSS key as rsaEncryption, so the
        // encrypted form needs the algorithm like any plain RSA key.
        (
            "test-key-rsa-pss",
            Some(Algorithm::RsaPssSha512),
            Algorithm::RsaPssSha512,
        ),
    ] {
        let plain = keys::load_signing_key(&rfc9421(&format!("{name}.pem")), &opts(Some(alg)))
            .unwrap()
            .verifying_key()
            .thumbprint();
        for file in [format!("{name}.enc.pem"), format!("{name}.enc.der")] {
            let data = vec_key(&file);
            assert_eq!(
                keys::load_signing_key(&data, &opts(hint)).err(),
                Some(KeyError::PassphraseRequired),
                "{file}"
            );
            assert_eq!(
                keys::load_signing_key(&data, &wrong(hint)).err(),
                Some(KeyError::Decrypt),
                "{file}"
            );
            let sk = keys::load_signing_key(&data, &good(hint)).unwrap();
            assert_eq!(sk.algorithm(), alg);
            assert_eq!(sk.verifying_key().thumbprint(), plain, "{file}");
            let vk = keys::load_verifying_key(&data, &good(hint)).unwrap();
            vk.verify(b"x", &sk.sign(b"x").unwrap()).unwrap();
        }
    }
    assert_eq!(
        keys::load_signing_key(&vec_key("test-key-rsa-pss.enc.pem"), &good(None)).err(),
        Some(KeyError::AlgorithmRequired)
    );
}

#[test]
fn private_jwk_whose_public_part_does_not_match() {
    // EC: d of the RFC 9421 key with x/y of the RFC 7515 A.3 key.
    let mut ec = jwk_value("test-key-ecc-p256.jwk.json");
    ec["x"] = json!("f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU");
    ec["y"] = json!("x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0");
    assert!(matches!(
        keys::load_signing_key(ec.to_string().as_bytes(), &opts(None)),
        Err(KeyError::InvalidKey(_))
    ));
    // EC: y not on the curve at all.
    let mut ec2 = jwk_value("test-key-ecc-p256.jwk.json");
    ec2["y"] = json!("x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0");
    assert!(keys::load_signing_key(ec2.to_string().as_bytes(), &opts(None)).is_err());
    assert!(keys::load_verifying_key(ec2.to_string().as_bytes(), &opts(None)).is_err());
    // Ed25519: d of the RFC 9421 key with x of RFC 8037 A.1.
    let mut ed = jwk_value("test-key-ed25519.jwk.json");
    ed["x"] = json!("11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo");
    assert!(matches!(
        keys::load_signing_key(ed.to_string().as_bytes(), &opts(None)),
        Err(KeyError::InvalidKey(_))
    ));
    // RSA: n of one key with the private parts of the other.
    let mut rsa = jwk_value("test-key-rsa.jwk.json");
    rsa["n"] = jwk_value("test-key-rsa-pss.jwk.json")["n"].clone();
    assert!(keys::load_signing_key(
        rsa.to_string().as_bytes(),
        &opts(Some(Algorithm::RsaV15Sha256))
    )
    .is_err());
    // EC private key whose embedded SEC1 public key is another point.
    let sec1 = pem_to_der(&rfc9421("test-key-ecc-p256.pem"));
    let other = VerifyingKey::from_sec1_point(
        Algorithm::EcdsaP256Sha256,
        &[
            [4u8].as_slice(),
            &b64::decode("f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU").unwrap(),
            &b64::decode("x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0").unwrap(),
        ]
        .concat(),
    )
    .unwrap();
    let pt = other.to_spki_der().unwrap();
    let point = &pt[pt.len() - 65..];
    // SEC1 ECPrivateKey ends with [1] { BIT STRING 04||x||y }.
    let pos = sec1.len() - 65;
    assert_eq!(sec1[pos], 4);
    assert_ne!(&sec1[pos..], point);
    let mut forged = sec1.clone();
    forged[pos..].copy_from_slice(point);
    assert!(matches!(
        keys::load_signing_key(&forged, &opts(None)),
        Err(KeyError::InvalidKey(_))
    ));
}

/// Deterministic pseudo-random bytes (xorshift), so failures reproduce.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 24) as u8
        })
        .collect()
}

fn all_loaders(data: &[u8]) -> Vec<Result<(), KeyError>> {
    let mut out = Vec::new();
    for alg in [
        None,
        Some(Algorithm::RsaV15Sha256),
        Some(Algorithm::EcdsaP256Sha256),
    ] {
        out.push(keys::load_signing_key(data, &opts(alg)).map(|_| ()));
        out.push(keys::load_verifying_keys(data, &opts(alg)).map(|_| ()));
    }
    out
}

/// The loaders plus the JWK Set parser (which checks syntax, not key material).
fn all_parsers(data: &[u8]) -> Vec<Result<(), KeyError>> {
    let mut out = all_loaders(data);
    out.push(jwk::parse_keys(data).map(|_| ()));
    out
}

#[test]
fn hostile_inputs_give_typed_errors_never_panics() {
    // Truncated PEM, at every tenth byte of each key file.
    for k in &RFC9421_KEYS {
        let pem = rfc9421(&format!("{}.pem", k.name));
        for cut in (0..pem.len() - 40).step_by(10) {
            for r in all_parsers(&pem[..cut]) {
                assert!(r.is_err(), "{} cut at {cut} loaded", k.name);
            }
        }
        let truncated = &pem[..pem.len() / 2];
        assert!(matches!(
            keys::load_signing_key(truncated, &opts(k.private_hint)),
            Err(KeyError::Pem(_))
        ));
        // Truncated DER.
        let der = pem_to_der(&pem);
        for cut in (1..der.len()).step_by(7) {
            assert!(
                keys::load_signing_key(&der[..cut], &opts(k.private_hint)).is_err(),
                "{} DER cut at {cut} loaded",
                k.name
            );
        }
        // A flipped byte in the DER body.
        for i in (0..der.len()).step_by(13) {
            let mut d = der.clone();
            d[i] ^= 0x55;
            let _ = keys::load_signing_key(&d, &opts(k.private_hint));
        }
    }
    // Random bytes, including ones that look like DER (0x30) or JSON ('{').
    for seed in 0..200u64 {
        let mut n = noise(seed, (seed as usize * 37) % 3000 + 1);
        match seed % 3 {
            0 => n[0] = 0x30,
            1 => n[0] = b'{',
            _ => {}
        }
        for r in all_parsers(&n) {
            assert!(r.is_err(), "random input {seed} loaded as a key");
        }
    }
    // Huge JSON: above the 1 MiB JWK Set bound.
    let big = format!(
        r#"{{"keys":[{{"kty":"oct","k":"{}"}}]}}"#,
        "A".repeat(2 * 1024 * 1024)
    );
    assert!(matches!(
        jwk::parse_keys(big.as_bytes()),
        Err(KeyError::Jwk(_))
    ));
    assert!(matches!(
        keys::load_verifying_keys(big.as_bytes(), &LoadOptions::default()),
        Err(KeyError::Jwk(_))
    ));
    // Deep JSON: nesting far beyond any stack a recursive parser could take.
    for depth in [17, 1000, 100_000] {
        let deep = format!(r#"{{"keys":[{}{}]}}"#, "[".repeat(depth), "]".repeat(depth));
        assert!(matches!(
            keys::load_verifying_keys(deep.as_bytes(), &LoadOptions::default()),
            Err(KeyError::Jwk(_))
        ));
        let deep_obj = format!("{}{}", r#"{"a":"#.repeat(depth), "}".repeat(depth));
        assert!(jwk::parse_keys(deep_obj.as_bytes()).is_err());
    }
    // Malformed JWK members: wrong types, bad base64url, empty.
    for bad in [
        json!({"kty": 1}),
        json!({"kty": "EC", "crv": "P-256", "x": 5, "y": "AA"}),
        json!({"kty": "EC", "crv": "P-256", "x": "AA==", "y": "AA"}),
        json!({"kty": "EC", "crv": "P-256", "x": "", "y": ""}),
        json!({"kty": "OKP", "crv": "Ed25519", "x": "AAAA"}),
        json!({"kty": "RSA", "n": "AQAB", "e": "AQAB", "alg": "RS256"}),
        json!({"kty": "RSA", "n": "", "e": "", "alg": "RS256"}),
        json!({"kty": "oct", "k": ""}),
        json!({"kty": "EC", "crv": "P-256", "key_ops": ["verify", "verify"]}),
        json!({"keys": "not an array"}),
        json!([]),
        json!("string"),
    ] {
        let text = bad.to_string();
        for r in all_loaders(text.as_bytes()) {
            assert!(r.is_err(), "{text} loaded");
        }
    }
    // Duplicate member names in a JWK (strict I-JSON).
    let dup = br#"{"kty":"OKP","crv":"Ed25519","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#;
    assert!(matches!(
        keys::load_verifying_keys(dup, &LoadOptions::default()),
        Err(KeyError::Jwk(_))
    ));
    // Unknown PEM label; PEM with garbage body.
    assert!(matches!(
        keys::load_signing_key(
            b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
            &opts(None)
        ),
        Err(KeyError::Pem(_))
    ));
    assert!(keys::load_signing_key(
        b"-----BEGIN PRIVATE KEY-----\n!!!!\n-----END PRIVATE KEY-----\n",
        &opts(None)
    )
    .is_err());
    // Empty input.
    for r in all_parsers(b"") {
        assert!(r.is_err());
    }
}

/// RSA key generation (3072 bits, slow in debug builds: one test), for both
/// RSA algorithms, and the PKCS#8 it writes loads back.
#[test]
fn rsa_keygen_rs256_and_ps512() {
    let rs = SigningKey::generate(Algorithm::RsaV15Sha256).unwrap();
    assert_eq!(rs.algorithm(), Algorithm::RsaV15Sha256);
    let pem = rs.pkcs8_pem().unwrap();
    // The written key is plain rsaEncryption PKCS#8: loading it needs the algorithm.
    assert_eq!(
        keys::load_signing_key(pem.as_bytes(), &opts(None)).err(),
        Some(KeyError::AlgorithmRequired)
    );
    let ps = keys::load_signing_key(pem.as_bytes(), &opts(Some(Algorithm::RsaPssSha512))).unwrap();
    assert_eq!(ps.algorithm(), Algorithm::RsaPssSha512);
    let n_bits = {
        let j = rs.verifying_key().to_jwk();
        b64::decode(j.n.as_deref().unwrap()).unwrap().len() * 8
    };
    assert_eq!(n_bits, 3072);
    for k in [&rs, &ps] {
        let s1 = k.sign(b"keygen").unwrap();
        k.verifying_key().verify(b"keygen", &s1).unwrap();
        assert!(k.verifying_key().verify(b"keygeN", &s1).is_err());
    }
    // PKCS#1 v1.5 is deterministic, PSS is randomized.
    assert_eq!(rs.sign(b"a").unwrap(), rs.sign(b"a").unwrap());
    assert_ne!(ps.sign(b"a").unwrap(), ps.sign(b"a").unwrap());
    // PS512 through keygen itself too (the CLI's `keygen --alg rsa-pss-sha512`).
    let ps_gen = SigningKey::generate(Algorithm::RsaPssSha512).unwrap();
    assert_eq!(ps_gen.algorithm(), Algorithm::RsaPssSha512);
    let s = ps_gen.sign(b"x").unwrap();
    ps_gen.verifying_key().verify(b"x", &s).unwrap();
}

/// An id-RSASSA-PSS key with RSASSA-PSS-params (RFC 4055 3.1) is restricted
/// to them: SHA-512/MGF1-SHA-512/salt 64 is rsa-pss-sha512 and loads; a key
/// restricted to SHA-256 is refused rather than silently used with SHA-512.
/// (Keys made with `openssl genpkey -algorithm RSA-PSS -pkeyopt rsa_pss_keygen_md:...`.)
#[test]
fn rsa_pss_key_parameters_are_honoured() {
    use agentsig::keys::{load_signing_key, load_verifying_key, KeyError, LoadOptions};
    let dir = "tests/vectors/keys";
    let opts = LoadOptions::default();
    let k = load_signing_key(
        &std::fs::read(format!("{dir}/rsa-pss-sha512-restricted.pem")).unwrap(),
        &opts,
    )
    .expect("SHA-512/64 PSS key loads");
    assert_eq!(k.algorithm(), agentsig::Algorithm::RsaPssSha512);
    let p = load_verifying_key(
        &std::fs::read(format!("{dir}/rsa-pss-sha512-restricted.pub.pem")).unwrap(),
        &opts,
    )
    .expect("SHA-512/64 PSS public key loads");
    let sig = k.sign(b"m").unwrap();
    p.verify(b"m", &sig).expect("verifies");
    for f in [
        "rsa-pss-sha256-restricted.pem",
        "rsa-pss-sha256-restricted.pub.pem",
    ] {
        let data = std::fs::read(format!("{dir}/{f}")).unwrap();
        let e = if f.contains(".pub.") {
            load_verifying_key(&data, &opts).err()
        } else {
            load_signing_key(&data, &opts).err()
        };
        assert!(
            matches!(e, Some(KeyError::UnsupportedKeyType(ref m)) if m.contains("restricted")),
            "{f}: {e:?}"
        );
    }
}

/// Generated Ed25519 keys are written as PKCS#8 v1 (RFC 8410 section 7, the
/// form OpenSSL 3.0, Node and Python `cryptography` read); PKCS#8 v2 (RFC
/// 5958 OneAsymmetricKey with the public key, what ring writes) still loads,
/// and both give the same key.
#[test]
fn ed25519_pkcs8_written_as_v1_and_read_as_v1_or_v2() {
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let pem = k.pkcs8_pem().unwrap();
    let der = pem_to_der(pem.as_bytes());
    assert_eq!(der.len(), 48, "v1: version, algorithm, seed");
    assert_eq!(&der[2..5], &[2, 1, 0], "version v1 (0)");
    let back = keys::load_signing_key(pem.as_bytes(), &opts(None)).unwrap();
    assert_eq!(
        back.verifying_key().thumbprint(),
        k.verifying_key().thumbprint()
    );

    let rng = ring::rand::SystemRandom::new();
    let v2 = ring::signature::Ed25519KeyPair::generate_pkcs8(&rng).unwrap();
    assert_eq!(&v2.as_ref()[2..5], &[2, 1, 1], "ring writes v2 (1)");
    let pair = ring::signature::Ed25519KeyPair::from_pkcs8(v2.as_ref()).unwrap();
    let loaded = keys::load_signing_key(v2.as_ref(), &opts(None)).unwrap();
    assert_eq!(
        loaded.verifying_key().to_jwk().x.as_deref(),
        Some(b64::encode(ring::signature::KeyPair::public_key(&pair).as_ref()).as_str())
    );
}

/// `SigningKey::from_pem` / `from_file` and `VerifyingKey::from_pem` /
/// `from_file`: the obvious way to load a PEM key, bounded in size, with a
/// typed error for a missing file and for text that is not PEM.
#[test]
fn pem_and_file_constructors() {
    use agentsig::keys::MAX_KEY_FILE;
    let k = SigningKey::generate(Algorithm::EcdsaP256Sha256).unwrap();
    let pem = k.pkcs8_pem().unwrap();
    let back = SigningKey::from_pem(&pem).unwrap();
    assert_eq!(
        back.verifying_key().thumbprint(),
        k.verifying_key().thumbprint()
    );
    assert!(matches!(
        SigningKey::from_pem("{\"kty\":\"EC\"}"),
        Err(KeyError::Pem(_))
    ));
    let spki = k.verifying_key().to_spki_pem().unwrap();
    assert!(matches!(
        SigningKey::from_pem(&spki),
        Err(KeyError::NotPrivate)
    ));
    let vk = agentsig::VerifyingKey::from_pem(&spki).unwrap();
    assert_eq!(vk.thumbprint(), k.verifying_key().thumbprint());

    let dir = std::env::temp_dir().join(format!("agentsig-keys-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("k.pem");
    std::fs::write(&p, pem.as_bytes()).unwrap();
    let f = SigningKey::from_file(&p, &LoadOptions::default()).unwrap();
    assert_eq!(
        f.verifying_key().thumbprint(),
        k.verifying_key().thumbprint()
    );
    let vf = agentsig::VerifyingKey::from_file(&p, &LoadOptions::default()).unwrap();
    assert_eq!(vf.thumbprint(), k.verifying_key().thumbprint());
    assert!(matches!(
        SigningKey::from_file(dir.join("absent.pem"), &LoadOptions::default()),
        Err(KeyError::Io { .. })
    ));
    let big = dir.join("big.pem");
    std::fs::write(&big, vec![b' '; MAX_KEY_FILE as usize + 1]).unwrap();
    assert!(matches!(
        SigningKey::from_file(&big, &LoadOptions::default()),
        Err(KeyError::Io { .. })
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `StaticKeys::from_jwks` returns every member it skipped and why, so a
/// set that yields no key is not silently empty.
#[test]
fn from_jwks_reports_what_it_skipped() {
    use agentsig::jwk::SkipReason;
    use agentsig::trust::{KeySource, StaticKeys};
    let k = SigningKey::generate(Algorithm::Ed25519)
        .unwrap()
        .with_kid("good");
    let mut good = k.verifying_key().to_jwk().to_value();
    good["kid"] = "good".into();
    let jwks = serde_json::json!({"keys": [
        {"kty": "PQC", "kid": "future"},
        good,
        {"kty": "EC", "crv": "secp256k1", "kid": "k1", "x": "AA", "y": "AA"},
        {"kty": "OKP", "crv": "Ed25519", "kid": "enc", "use": "enc", "x": k.verifying_key().to_jwk().x.clone().unwrap()},
        "not an object"
    ]});
    let got = StaticKeys::from_jwks(
        jwks.to_string().as_bytes(),
        KeySource::Jwks("t".into()),
        None,
    )
    .unwrap();
    assert_eq!(got.keys.len(), 1);
    let idx: Vec<usize> = got.skipped.iter().map(|s| s.index).collect();
    assert_eq!(idx, vec![0, 2, 3, 4]);
    assert!(matches!(got.skipped[0].reason, SkipReason::UnsupportedKeyType(ref t) if t == "PQC"));
    assert_eq!(got.skipped[0].kid.as_deref(), Some("future"));
    assert!(matches!(got.skipped[1].reason, SkipReason::Unusable(_)));
    assert!(matches!(got.skipped[3].reason, SkipReason::Malformed(_)));
    assert!(got.skipped[0].to_string().contains("keys[0]"));

    // A set of shared secrets only: nothing taken, each one said.
    let oct =
        br#"{"keys":[{"kty":"oct","kid":"s","k":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}]}"#;
    let got = StaticKeys::from_jwks(oct, KeySource::Jwks("t".into()), None).unwrap();
    assert!(got.keys.is_empty());
    assert_eq!(got.skipped[0].reason, SkipReason::SharedSecret);
}
