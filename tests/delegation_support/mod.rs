//! Helpers shared by the delegation and JWT tests.
#![allow(dead_code)]

use agentsig::clock::FixedClock;
use agentsig::delegation::{AuditPolicy, AuditReport, Severity};
use agentsig::jwt::JwtPolicy;
use agentsig::trust::{KeyResolver, KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::{Algorithm, SigningKey};
use serde_json::{json, Value};

#[path = "../b64_support/mod.rs"]
pub mod b64;

pub const NOW: i64 = 1_760_000_200;
pub const AS: &str = "https://as.example.com";
pub const CAL: &str = "https://calendar.example.com";

pub fn vectors() -> Value {
    let text = include_str!("../vectors/rfc8693_examples.json");
    serde_json::from_str(text).expect("vector file is JSON")
}

pub fn key() -> SigningKey {
    SigningKey::generate(Algorithm::EcdsaP256Sha256)
        .expect("keygen")
        .with_kid("k1")
}

pub fn keys_for(k: &SigningKey) -> StaticKeys {
    StaticKeys::new().with(k.verifying_key().clone(), KeySource::Pinned)
}

/// Sign arbitrary header and claims (no checks: for negative tests).
pub fn raw(header: &Value, claims: &Value, k: &SigningKey) -> String {
    let h = b64::encode(&serde_json::to_vec(header).unwrap());
    let p = b64::encode(&serde_json::to_vec(claims).unwrap());
    raw_parts(&h, &p, k)
}

pub fn raw_parts(h: &str, p: &str, k: &SigningKey) -> String {
    let si = format!("{h}.{p}");
    let sig = k.sign(si.as_bytes()).unwrap();
    format!("{si}.{}", b64::encode(&sig))
}

pub fn hdr(k: &SigningKey) -> Value {
    json!({"alg": k.algorithm().jose_name(), "kid": k.kid_or_thumbprint(), "typ": "at+jwt"})
}

pub fn sign(claims: &Value, k: &SigningKey) -> String {
    raw(&hdr(k), claims, k)
}

/// The JWT policy of these tests: issuer AS, audience CAL, `typ` at+jwt,
/// `jti` required.
pub fn jwt_policy() -> JwtPolicy {
    JwtPolicy::default()
        .issuers([AS])
        .audience(CAL)
        .expected_typ(["at+jwt"])
        .require_jti(true)
}

/// The audit policy of these tests (the JWT policy is the verifier's).
pub fn policy() -> AuditPolicy {
    AuditPolicy::default()
}

pub fn clock() -> FixedClock {
    FixedClock(NOW)
}

/// A verifier at [`NOW`] trusting `keys`, with the JWT policy `jp` and
/// every other setting at its default.
pub fn verifier_with(keys: impl KeyResolver + 'static, jp: JwtPolicy) -> Verifier {
    Verifier::builder(keys).clock(clock()).jwt(jp).build()
}

/// A verifier at [`NOW`] trusting `k`, with [`jwt_policy`].
pub fn verifier(k: &SigningKey) -> Verifier {
    verifier_with(keys_for(k), jwt_policy())
}

/// The valid three-hop bundle of the vector file (claims).
pub fn valid_bundle() -> Vec<Value> {
    vectors()["synthetic_bundle_cases"]["valid"]["tokens"]
        .as_array()
        .unwrap()
        .clone()
}

/// Sign each claims set with a fresh key and audit the bundle with
/// [`jwt_policy`].
pub fn audit_claims(claims: &[Value], policy: &AuditPolicy) -> AuditReport {
    audit_claims_with(claims, &jwt_policy(), policy)
}

/// As [`audit_claims`], with the JWT policy `jp`.
pub fn audit_claims_with(claims: &[Value], jp: &JwtPolicy, policy: &AuditPolicy) -> AuditReport {
    let k = key();
    let toks: Vec<String> = claims.iter().map(|c| sign(c, &k)).collect();
    let refs: Vec<&str> = toks.iter().map(String::as_str).collect();
    audit(&refs, &verifier_with(keys_for(&k), jp.clone()), policy)
}

/// Audit `tokens` with `v` under `policy`: the report, whether it passed
/// (`Ok`) or not (`Err`, which carries it). Checks that the two agree.
pub fn audit(tokens: &[&str], v: &Verifier, policy: &AuditPolicy) -> AuditReport {
    match v
        .to_builder()
        .audit(policy.clone())
        .build()
        .audit_delegation(tokens)
    {
        Ok(r) => {
            assert!(r.passed(), "Ok holds a passed report");
            r
        }
        Err(e) => {
            assert!(!e.report.passed(), "Err holds a failed report");
            e.into_report()
        }
    }
}

/// Codes of failed checks of severity error, deduplicated.
pub fn errors(r: &AuditReport) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = r
        .checks
        .iter()
        .filter(|c| !c.passed && c.severity == Severity::Error)
        .map(|c| c.code)
        .collect();
    v.sort();
    v.dedup();
    v
}

pub fn warnings(r: &AuditReport) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = r
        .checks
        .iter()
        .filter(|c| !c.passed && c.severity == Severity::Warning)
        .map(|c| c.code)
        .collect();
    v.sort();
    v.dedup();
    v
}
