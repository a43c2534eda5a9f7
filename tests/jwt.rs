//! JWT verifier: one test per rule of checklist section 1.7 A, each
//! breaking exactly that rule and expecting its own code.

mod delegation_support;
use delegation_support::*;

use agentsig::clock::FixedClock;
use agentsig::jwt::{self, JwtError, JwtPolicy};
use agentsig::replay::{FileReplayStore, MemoryReplayStore};
use agentsig::replay::{ReplayStore, Sighting};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::{Algorithm, AllowList, SigningKey, VerifyingKey};
use serde_json::{json, Value};
use std::sync::Arc;

fn claims() -> Value {
    json!({"iss": AS, "sub": "user@example.com", "aud": CAL, "iat": NOW - 10,
           "nbf": NOW - 10, "exp": NOW + 600, "jti": "j1", "scope": "a b"})
}

fn verify_with(tok: &str, keys: &StaticKeys, p: &JwtPolicy) -> Result<jwt::VerifiedJwt, JwtError> {
    verifier_with(keys.clone(), p.clone()).verify_jwt(tok)
}

fn code(tok: &str, k: &SigningKey, p: &JwtPolicy) -> &'static str {
    code_v(tok, &verifier_with(keys_for(k), p.clone()))
}

fn code_v(tok: &str, v: &Verifier) -> &'static str {
    match v.verify_jwt(tok) {
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
    let dup = b64::encode(br#"{"iss":"https://as.example.com","iss":"x","exp":9}"#);
    let hb = b64::encode(&serde_json::to_vec(&hdr(&k)).unwrap());
    assert_eq!(code(&raw_parts(&hb, &dup, &k), &k, &p), "jwt.json");
    // claims not an object; invalid UTF-8
    let arr = b64::encode(b"[1,2]");
    assert_eq!(code(&raw_parts(&hb, &arr, &k), &k, &p), "jwt.json");
    let bad = b64::encode(b"{\"iss\":\"\xff\"}");
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
        let e = b64::encode(json.as_bytes());
        if !e.len().is_multiple_of(4) {
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
    let only_eddsa = verifier(&k)
        .to_builder()
        .algorithms(AllowList::new([Algorithm::Ed25519]))
        .build();
    assert_eq!(
        code_v(&sign(&claims(), &k), &only_eddsa),
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
    let all = |keys: StaticKeys| {
        verifier_with(keys, jwt_policy())
            .to_builder()
            .algorithms(AllowList::all())
            .build()
    };
    // From a JWK Set or discovery: never used.
    for src in [
        KeySource::Jwks("set.json".into()),
        KeySource::Discovered("did:x".into()),
    ] {
        let keys = StaticKeys::new().with(vk.clone(), src);
        assert_eq!(
            all(keys).verify_jwt(&tok).unwrap_err().code(),
            "jwt.no-trusted-key"
        );
    }
    // Pinned by the caller and HS256 explicitly allowed: accepted.
    let keys = StaticKeys::new().with(vk.clone(), KeySource::File("secret".into()));
    assert!(all(keys.clone()).verify_jwt(&tok).is_ok());
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
    let p2 = b64::encode(&serde_json::to_vec(&c).unwrap());
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
    let strict = verifier(&k).to_builder().skew(0).build();
    assert_eq!(code_v(&sign(&c, &k), &strict), "jwt.expired");
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
    let later = verifier(&k)
        .to_builder()
        .clock(FixedClock(NOW + 10_000))
        .build();
    assert_eq!(later.verify_jwt(&tok).unwrap_err().code(), "jwt.expired");
}

#[test]
fn a11_jti_replay() {
    let k = key();
    let p = jwt_policy();
    let tok = sign(&claims(), &k);
    let with_store =
        |store: Arc<dyn ReplayStore>| verifier(&k).to_builder().replay_store(store).build();
    let v = with_store(Arc::new(MemoryReplayStore::new()));
    assert!(v.verify_jwt(&tok).is_ok());
    assert_eq!(v.verify_jwt(&tok).unwrap_err().code(), "jwt.jti-replay");
    // file-backed store survives a reopen (every record is written at once)
    let dir = std::env::temp_dir().join(format!("agentsig-replay-{}", std::process::id()));
    let _ = std::fs::remove_file(&dir);
    {
        let fs = FileReplayStore::open(&dir, NOW).unwrap();
        assert!(with_store(Arc::new(fs)).verify_jwt(&tok).is_ok());
    }
    let fs = FileReplayStore::open(&dir, NOW).unwrap();
    assert_eq!(
        with_store(Arc::new(fs))
            .verify_jwt(&tok)
            .unwrap_err()
            .code(),
        "jwt.jti-replay"
    );
    // after expiry (exp + skew) the entry is forgotten
    let fs2 = FileReplayStore::open(&dir, NOW + 100_000).unwrap();
    assert_eq!(
        fs2.check_and_record(AS, "j1", NOW + 200_000, NOW + 100_000),
        Ok(Sighting::First)
    );
    drop(fs2);
    std::fs::write(&dir, "not json\n").unwrap();
    assert!(
        FileReplayStore::open(&dir, NOW).is_err(),
        "a corrupt store fails closed"
    );
    let _ = std::fs::remove_file(&dir);
    let _ = std::fs::remove_file(lock_path(&dir));
    // bounded memory store fails closed when full of live entries
    let small = MemoryReplayStore::with_capacity(1);
    assert_eq!(
        small.check_and_record("i", "a", NOW + 10, NOW),
        Ok(Sighting::First)
    );
    assert!(small.check_and_record("i", "b", NOW + 10, NOW).is_err());
    assert_eq!(
        small.check_and_record("i", "b", NOW + 10, NOW + 20),
        Ok(Sighting::First)
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
                .verify_signature(
                    Verifier::builder(keys_for(&k)).build().context(),
                    &JwtPolicy::default(),
                )
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
    use agentsig::trust::PerIssuer;
    let ka = key();
    let kb = key();
    let mut per = PerIssuer::new();
    per.insert(AS, keys_for(&ka));
    per.insert("https://b.example.com", keys_for(&kb));
    let mut p = jwt_policy();
    p.issuers = None;
    let v = verifier_with(per, p);
    assert!(v.verify_jwt(&sign(&claims(), &ka)).is_ok());
    // B's key signing a token that claims issuer A: A's keys only, so refused.
    let e = v.verify_jwt(&sign(&claims(), &kb)).unwrap_err();
    assert_eq!(e.code(), "jwt.signature");
    let mut c = claims();
    c["iss"] = json!("https://unknown.example.com");
    let e = v.verify_jwt(&sign(&c, &ka)).unwrap_err();
    assert_eq!(e.code(), "jwt.no-trusted-key");
}

fn lock_path(p: &std::path::Path) -> std::path::PathBuf {
    let mut l = p.as_os_str().to_owned();
    l.push(".lock");
    l.into()
}

/// RFC 7519 4.1.7 across processes: several verifiers, each with its own
/// `FileReplayStore` on one file (as separate processes would have), verify
/// at the same moment. Every distinct token is recorded, and of two
/// presentations of one token exactly one is accepted (the file
/// store locks around read-check-write).
#[test]
fn file_replay_store_races_record_each_jti_once() {
    let k = key();
    let path = std::env::temp_dir().join(format!("agentsig-replay-race-{}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let token = |jti: &str| {
        let mut c = claims();
        c["jti"] = json!(jti);
        sign(&c, &k)
    };
    // 8 threads with distinct tokens, 2 with the same one.
    let mut work: Vec<(String, String)> = (0..8)
        .map(|i| {
            let j = format!("distinct-{i}");
            (j.clone(), token(&j))
        })
        .collect();
    let dup = token("shared");
    work.push(("shared".into(), dup.clone()));
    work.push(("shared".into(), dup));
    let barrier = Arc::new(std::sync::Barrier::new(work.len()));
    let handles: Vec<_> = work
        .into_iter()
        .map(|(jti, tok)| {
            let barrier = Arc::clone(&barrier);
            let path = path.clone();
            let v = verifier(&k);
            std::thread::spawn(move || {
                let store = FileReplayStore::open(&path, NOW).expect("open");
                let v = v.to_builder().replay_store(Arc::new(store)).build();
                barrier.wait();
                (jti, v.verify_jwt(&tok).map(|_| ()).map_err(|e| e.code()))
            })
        })
        .collect();
    let results: Vec<(String, Result<(), &'static str>)> = handles
        .into_iter()
        .map(|h| h.join().expect("thread"))
        .collect();
    for (jti, r) in &results {
        if jti != "shared" {
            assert_eq!(r, &Ok(()), "{jti}");
        }
    }
    let shared: Vec<&Result<(), &'static str>> = results
        .iter()
        .filter(|(j, _)| j == "shared")
        .map(|(_, r)| r)
        .collect();
    assert_eq!(shared.len(), 2);
    assert_eq!(
        shared.iter().filter(|r| r.is_ok()).count(),
        1,
        "exactly one presentation of the shared token is accepted: {shared:?}"
    );
    assert_eq!(
        shared
            .iter()
            .filter(|r| ***r == Err("jwt.jti-replay"))
            .count(),
        1,
        "the other is a replay: {shared:?}"
    );
    // The file holds every jti once: 8 distinct + the shared one.
    let text = std::fs::read_to_string(&path).expect("store file");
    let mut jtis: Vec<String> = text
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("entry");
            // The scope is the issuer tagged as a JWT one (replay::JWT_SCOPE).
            assert_eq!(v["scope"], format!("jwt:{AS}"));
            v["id"].as_str().expect("id").to_owned()
        })
        .collect();
    jtis.sort();
    let mut want: Vec<String> = (0..8).map(|i| format!("distinct-{i}")).collect();
    want.push("shared".into());
    want.sort();
    assert_eq!(jtis, want);
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(lock_path(&path));
}
