//! JWT verifier: one test per rule of checklist section 1.7 A, each
//! breaking exactly that rule and expecting its own code.

mod delegation_support;
use delegation_support::*;

use agentsig::jwt::{self, FileReplayStore, FixedClock, JwtError, JwtPolicy, MemoryReplayStore};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::{Algorithm, AllowList, SigningKey, VerifyingKey};
use serde_json::{json, Value};

fn claims() -> Value {
    json!({"iss": AS, "sub": "user@example.com", "aud": CAL, "iat": NOW - 10,
           "nbf": NOW - 10, "exp": NOW + 600, "jti": "j1", "scope": "a b"})
}

fn verify_with(tok: &str, keys: &StaticKeys, p: &JwtPolicy) -> Result<jwt::VerifiedJwt, JwtError> {
    jwt::verify(tok, keys, p, &clock(), None)
}

fn code(tok: &str, k: &SigningKey, p: &JwtPolicy) -> &'static str {
    match verify_with(tok, &keys_for(k), p) {
        Ok(_) => "ok",
        Err(e) => e.code(),
    }
}

#[test]
fn valid_token_verifies() {
    let k = key();
    let v = verify_with(&sign(&claims(), &k), &keys_for(&k), &jwt_policy()).unwrap();
    assert_eq!(v.claims["sub"], "user@example.com");
    assert_eq!(v.evidence.alg, "ES256");
    // application/ prefix and case (RFC 7515 4.1.9)
    let mut h = hdr(&k);
    h["typ"] = json!("application/AT+JWT");
    assert_eq!(code(&raw(&h, &claims(), &k), &k, &jwt_policy()), "ok");
}

#[test]
fn a1_compact_shape() {
    let k = key();
    let p = jwt_policy();
    let t = sign(&claims(), &k);
    let parts: Vec<&str> = t.split('.').collect();
    assert_eq!(
        code(&format!("{}.{}", parts[0], parts[1]), &k, &p),
        "jwt.malformed"
    );
    assert_eq!(code(&format!("{t}.x"), &k, &p), "jwt.malformed");
    assert_eq!(
        code(&format!("{}..{}", parts[0], parts[2]), &k, &p),
        "jwt.malformed"
    );
    assert_eq!(code(&format!(" {t}"), &k, &p), "jwt.malformed");
    assert_eq!(
        code(&format!("{}=.{}.{}", parts[0], parts[1], parts[2]), &k, &p),
        "jwt.malformed"
    );
    // non-canonical base64url: flip the trailing bits of the header
    let h = b64_noncanonical(parts[0]);
    assert_eq!(
        code(&format!("{h}.{}.{}", parts[1], parts[2]), &k, &p),
        "jwt.base64"
    );
    // duplicate claim name
    let dup = agentsig::b64::encode(br#"{"iss":"https://as.example.com","iss":"x","exp":9}"#);
    let hb = agentsig::b64::encode(&serde_json::to_vec(&hdr(&k)).unwrap());
    assert_eq!(code(&raw_parts(&hb, &dup, &k), &k, &p), "jwt.json");
    // claims not an object; invalid UTF-8
    let arr = agentsig::b64::encode(b"[1,2]");
    assert_eq!(code(&raw_parts(&hb, &arr, &k), &k, &p), "jwt.json");
    let bad = agentsig::b64::encode(b"{\"iss\":\"\xff\"}");
    assert_eq!(code(&raw_parts(&hb, &bad, &k), &k, &p), "jwt.json");
    // size cap
    let mut c = claims();
    c["pad"] = json!("x".repeat(20_000));
    assert_eq!(code(&sign(&c, &k), &k, &p), "jwt.too-large");
}

fn b64_noncanonical(_s: &str) -> String {
    // A header whose encoding has unused trailing bits, with one of them set.
    let alpha = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut json = String::from(r#"{"alg":"ES256","typ":"at+jwt"}"#);
    loop {
        let e = agentsig::b64::encode(json.as_bytes());
        if e.len() % 4 != 0 {
            let mut b = e.into_bytes();
            let last = b.len() - 1;
            let i = alpha.iter().position(|c| *c == b[last]).unwrap();
            b[last] = alpha[i + 1];
            return String::from_utf8(b).unwrap();
        }
        json.insert(1, ' ');
    }
}

#[test]
fn a2_alg_allow_list_and_key_binding() {
    let k = key();
    let p = jwt_policy();
    let mut h = hdr(&k);
    h["alg"] = json!("none");
    assert_eq!(code(&raw(&h, &claims(), &k), &k, &p), "jwt.alg-none");
    h["alg"] = json!("ES512");
    assert_eq!(code(&raw(&h, &claims(), &k), &k, &p), "jwt.alg-unknown");
    // ES384 is allowed but the trusted key is bound to ES256
    h["alg"] = json!("ES384");
    assert_eq!(code(&raw(&h, &claims(), &k), &k, &p), "jwt.alg-not-keys");
    // not in the allow-list
    let only_eddsa = JwtPolicy {
        allowed: AllowList::new([Algorithm::Ed25519]),
        ..jwt_policy()
    };
    assert_eq!(
        code(&sign(&claims(), &k), &k, &only_eddsa),
        "jwt.alg-not-allowed"
    );
}

#[test]
fn a2_never_hmac_with_a_published_key() {
    let secret = [7u8; 32];
    let hk = SigningKey::from_hmac_secret(&secret).unwrap().with_kid("h");
    let vk = VerifyingKey::from_hmac_secret(&secret)
        .unwrap()
        .with_kid("h");
    let tok = sign(&claims(), &hk);
    let p = JwtPolicy {
        allowed: AllowList::all(),
        ..jwt_policy()
    };
    // From a JWK Set or discovery: never used.
    for src in [
        KeySource::Jwks("set.json".into()),
        KeySource::Discovered("did:x".into()),
    ] {
        let keys = StaticKeys::new().with(vk.clone(), src);
        assert_eq!(
            verify_with(&tok, &keys, &p).unwrap_err().code(),
            "jwt.no-trusted-key"
        );
    }
    // Pinned by the caller and HS256 explicitly allowed: accepted.
    let keys = StaticKeys::new().with(vk.clone(), KeySource::File("secret".into()));
    assert!(verify_with(&tok, &keys, &p).is_ok());
    // Not allowed by default.
    assert_eq!(
        verify_with(&tok, &keys, &jwt_policy()).unwrap_err().code(),
        "jwt.alg-not-allowed"
    );
}

#[test]
fn a3_typ() {
    let k = key();
    let p = jwt_policy();
    let mut h = hdr(&k);
    h["typ"] = json!("JWT");
    assert_eq!(code(&raw(&h, &claims(), &k), &k, &p), "jwt.typ");
    h.as_object_mut().unwrap().remove("typ");
    assert_eq!(code(&raw(&h, &claims(), &k), &k, &p), "jwt.typ");
}

#[test]
fn a4_crit() {
    let k = key();
    let p = jwt_policy();
    let mut h = hdr(&k);
    h["crit"] = json!(["urn:example:policy"]);
    h["urn:example:policy"] = json!(true);
    assert_eq!(code(&raw(&h, &claims(), &k), &k, &p), "jwt.crit-unknown");
    let mut h = hdr(&k);
    h["crit"] = json!([]);
    assert_eq!(code(&raw(&h, &claims(), &k), &k, &p), "jwt.crit-malformed");
    let mut h = hdr(&k);
    h["b64"] = json!(true);
    h["crit"] = json!(["b64"]);
    assert_eq!(code(&raw(&h, &claims(), &k), &k, &p), "jwt.b64");
}

#[test]
fn a5_key_bearing_headers_refused() {
    let k = key();
    let p = jwt_policy();
    for name in ["jku", "jwk", "x5u", "x5c"] {
        let mut h = hdr(&k);
        h[name] = json!("https://attacker.example/keys");
        assert_eq!(
            code(&raw(&h, &claims(), &k), &k, &p),
            "jwt.key-header",
            "{name}"
        );
    }
}

#[test]
fn a6_kid_is_only_a_lookup_key() {
    let k = key();
    let p = jwt_policy();
    let mut h = hdr(&k);
    h["kid"] = json!("../../etc/passwd".repeat(40));
    assert_eq!(code(&raw(&h, &claims(), &k), &k, &p), "jwt.bad-kid");
    h["kid"] = json!("other");
    assert_eq!(code(&raw(&h, &claims(), &k), &k, &p), "jwt.no-trusted-key");
}

#[test]
fn a7_signature() {
    let k = key();
    let other = key();
    let tok = sign(&claims(), &other);
    assert_eq!(code(&tok, &k, &jwt_policy()), "jwt.signature");
    // tampered claims
    let t = sign(&claims(), &k);
    let parts: Vec<&str> = t.split('.').collect();
    let mut c = claims();
    c["scope"] = json!("a b admin");
    let p2 = agentsig::b64::encode(&serde_json::to_vec(&c).unwrap());
    assert_eq!(
        code(
            &format!("{}.{p2}.{}", parts[0], parts[2]),
            &k,
            &jwt_policy()
        ),
        "jwt.signature"
    );
}

#[test]
fn a8_iss_exact() {
    let k = key();
    let mut c = claims();
    c["iss"] = json!("https://as.example.com/");
    assert_eq!(code(&sign(&c, &k), &k, &jwt_policy()), "jwt.iss-mismatch");
    c.as_object_mut().unwrap().remove("iss");
    assert_eq!(code(&sign(&c, &k), &k, &jwt_policy()), "jwt.iss-missing");
}

#[test]
fn a9_aud() {
    let k = key();
    let mut c = claims();
    c["aud"] = json!(["https://other.example.com"]);
    assert_eq!(code(&sign(&c, &k), &k, &jwt_policy()), "jwt.aud-mismatch");
    c["aud"] = json!(["https://other.example.com", CAL]);
    assert_eq!(code(&sign(&c, &k), &k, &jwt_policy()), "ok");
    c.as_object_mut().unwrap().remove("aud");
    assert_eq!(code(&sign(&c, &k), &k, &jwt_policy()), "jwt.aud-missing");
    c["aud"] = json!([]);
    assert_eq!(code(&sign(&c, &k), &k, &jwt_policy()), "jwt.claim-type");
}

#[test]
fn a10_times_with_explicit_skew() {
    let k = key();
    let p = jwt_policy();
    let mut c = claims();
    c.as_object_mut().unwrap().remove("exp");
    assert_eq!(code(&sign(&c, &k), &k, &p), "jwt.exp-missing");
    c["exp"] = json!(NOW - 61);
    assert_eq!(code(&sign(&c, &k), &k, &p), "jwt.expired");
    c["exp"] = json!(NOW - 30); // within the 60 s skew
    c["iat"] = json!(NOW - 100);
    c["nbf"] = json!(NOW - 100);
    assert_eq!(code(&sign(&c, &k), &k, &p), "ok");
    let strict = JwtPolicy {
        skew: 0,
        ..jwt_policy()
    };
    assert_eq!(code(&sign(&c, &k), &k, &strict), "jwt.expired");
    let mut c = claims();
    c["nbf"] = json!(NOW + 120);
    assert_eq!(code(&sign(&c, &k), &k, &p), "jwt.not-yet-valid");
    let mut c = claims();
    c["iat"] = json!(NOW + 120);
    assert_eq!(code(&sign(&c, &k), &k, &p), "jwt.iat-future");
    let mut c = claims();
    c["exp"] = json!(1.5e9);
    assert_eq!(code(&sign(&c, &k), &k, &p), "jwt.claim-type");
    c["exp"] = json!("1760000900");
    assert_eq!(code(&sign(&c, &k), &k, &p), "jwt.claim-type");
    // injectable clock: the same token is expired later
    let tok = sign(&claims(), &k);
    let later = FixedClock(NOW + 10_000);
    assert_eq!(
        jwt::verify(&tok, &keys_for(&k), &p, &later, None)
            .unwrap_err()
            .code(),
        "jwt.expired"
    );
}

#[test]
fn a11_jti_replay() {
    let k = key();
    let p = jwt_policy();
    let tok = sign(&claims(), &k);
    let keys = keys_for(&k);
    let mut store = MemoryReplayStore::new();
    assert!(jwt::verify(&tok, &keys, &p, &clock(), Some(&mut store)).is_ok());
    assert_eq!(
        jwt::verify(&tok, &keys, &p, &clock(), Some(&mut store))
            .unwrap_err()
            .code(),
        "jwt.jti-replay"
    );
    // file-backed store survives a reopen
    let dir = std::env::temp_dir().join(format!("agentsig-replay-{}", std::process::id()));
    let _ = std::fs::remove_file(&dir);
    {
        let mut fs = FileReplayStore::open(&dir, NOW).unwrap();
        assert!(jwt::verify(&tok, &keys, &p, &clock(), Some(&mut fs)).is_ok());
        fs.save().unwrap();
    }
    let mut fs = FileReplayStore::open(&dir, NOW).unwrap();
    assert_eq!(
        jwt::verify(&tok, &keys, &p, &clock(), Some(&mut fs))
            .unwrap_err()
            .code(),
        "jwt.jti-replay"
    );
    // after expiry the entry is forgotten
    let fs2 = FileReplayStore::open(&dir, NOW + 100_000).unwrap();
    drop(fs2);
    std::fs::write(&dir, "not json\n").unwrap();
    assert!(
        FileReplayStore::open(&dir, NOW).is_err(),
        "a corrupt store fails closed"
    );
    let _ = std::fs::remove_file(&dir);
    // bounded memory store fails closed when full of live entries
    let mut small = MemoryReplayStore::with_capacity(1);
    use agentsig::jwt::ReplayStore;
    assert_eq!(small.check_and_insert("i", "a", NOW + 10, NOW), Ok(true));
    assert!(small.check_and_insert("i", "b", NOW + 10, NOW).is_err());
    assert_eq!(
        small.check_and_insert("i", "b", NOW + 10, NOW + 20),
        Ok(true)
    );
    // jti required
    let mut c = claims();
    c.as_object_mut().unwrap().remove("jti");
    assert_eq!(code(&sign(&c, &k), &k, &p), "jwt.jti-missing");
}

#[test]
fn rfc8693_appendix_tokens_parse_but_never_verify() {
    let v = vectors();
    // A trusted key without kid matches any kid, so the signature is tried.
    let k = SigningKey::generate(Algorithm::EcdsaP256Sha256).unwrap();
    for ex in v["examples"].as_array().unwrap() {
        for role in ["subject_token", "actor_token", "issued_token"] {
            let Some(t) = ex.get(role) else { continue };
            let compact = t["compact"].as_str().unwrap();
            let d = jwt::decode(compact, jwt::DEFAULT_MAX_JWT_BYTES).unwrap();
            assert_eq!(Value::Object(d.claims.clone()), t["claims"]);
            assert_eq!(Value::Object(d.header.clone()), t["header"]);
            // The RFC does not publish its keys: nothing verifies.
            let err = d
                .verify_signature(&keys_for(&k), &JwtPolicy::default())
                .unwrap_err();
            assert_eq!(err.code(), "jwt.signature");
        }
    }
}

#[test]
fn fuzz_like_inputs_never_panic() {
    let k = key();
    let p = jwt_policy();
    let t = sign(&claims(), &k);
    for i in 0..t.len() {
        let mut s = t.clone().into_bytes();
        s[i] ^= 0x01;
        if let Ok(s) = String::from_utf8(s) {
            let _ = code(&s, &k, &p);
        }
        let _ = code(&t[..i], &k, &p);
    }
    let _ = code("", &k, &p);
    let _ = code("..", &k, &p);
    let _ = code(&"a.".repeat(5000), &k, &p);
}

#[test]
fn a8_keys_are_looked_up_per_issuer() {
    use agentsig::jwt::PerIssuer;
    let ka = key();
    let kb = key();
    let mut per = PerIssuer::new();
    per.insert(AS, Box::new(keys_for(&ka)));
    per.insert("https://b.example.com", Box::new(keys_for(&kb)));
    let p = JwtPolicy {
        issuers: None,
        ..jwt_policy()
    };
    assert!(jwt::verify(&sign(&claims(), &ka), &per, &p, &clock(), None).is_ok());
    // B's key signing a token that claims issuer A: A's keys only, so refused.
    let e = jwt::verify(&sign(&claims(), &kb), &per, &p, &clock(), None).unwrap_err();
    assert_eq!(e.code(), "jwt.signature");
    let mut c = claims();
    c["iss"] = json!("https://unknown.example.com");
    let e = jwt::verify(&sign(&c, &ka), &per, &p, &clock(), None).unwrap_err();
    assert_eq!(e.code(), "jwt.no-trusted-key");
}
