//! JSON Web Token verification (RFC 7519) with the best current practices of
//! RFC 8725, built on the project's JWS core ([`crate::jws`]).
//!
//! # Security contract
//! * Compact serialization only (RFC 7519 section 7.2 step 1), at most
//!   [`Limits::max_jwt_bytes`](crate::policy::Limits::max_jwt_bytes) bytes (16 KiB by default), exactly three
//!   non-empty segments of canonical base64url (RFC 7515 section 2), no
//!   whitespace. Header and claims are strict I-JSON (RFC 7493; RFC 7519
//!   section 4 "Claim Names ... MUST be unique"): duplicate member names,
//!   invalid UTF-8 and non-I-JSON numbers are refused.
//! * The algorithm comes from an explicit allow-list ([`Verifier::algorithms`](crate::verifier::Verifier::algorithms),
//!   RFC 8725 section 3.1) and must be the algorithm the trusted key is bound
//!   to; `none` does not exist. A symmetric (HMAC) key is never used when it
//!   came from a JWK Set or from discovery (RFC 8725 sections 2.1 and 3.1),
//!   whatever the allow-list says.
//! * `typ` is checked when the policy names types (RFC 8725 section 3.11,
//!   RFC 9068 section 4: `at+jwt`), compared per RFC 7515 section 4.1.9.
//! * `crit` is honoured by the JWS core (RFC 7515 section 4.1.11); `b64` is
//!   refused in a JWT (RFC 7797 section 7: the unencoded payload option is
//!   not for JWTs, whose payload is always base64url).
//! * `jku`, `x5u`, `jwk`, `x5c`, `x5t` are never key sources and are refused
//!   (RFC 8725 section 3.10 warns against following them). `kid` is only a
//!   lookup key, capped in length by [`crate::trust`].
//! * Keys come from a [`KeyResolver`](crate::trust::KeyResolver); the request carries the token's `iss`
//!   so that a resolver can keep keys per issuer ([`PerIssuer`](crate::trust::PerIssuer)). Discovery
//!   (RFC 8414, DID) plugs in through the same trait; nothing here fetches.
//! * Claims (RFC 7519 section 4.1): `iss` exact match against the configured
//!   issuers; `aud` must contain the verifier's identifier when one is
//!   configured (4.1.3); `exp` is required (4.1.4); `nbf` (4.1.5) and `iat`
//!   (4.1.6, not in the future) are checked; NumericDate values must be
//!   integers within ±(2^53−1). Clock skew is explicit ([`Verifier::skew`](crate::verifier::Verifier::skew),
//!   default 60 s) and the clock is injected ([`Clock`](crate::clock::Clock)).
//! * `jti` replay (RFC 7519 section 4.1.7, RFC 8725 section 3.8 context) is
//!   detected through a [`ReplayStore`], keyed by `(iss, jti)` until `exp`
//!   plus skew.

use crate::b64;
use crate::jws::{self, ParsedJws, Reason, Verdict};
use crate::keys::SigningKey;
use crate::policy::Context;
pub use crate::policy::{JwtPolicy, DEFAULT_MAX_JWT_BYTES};
use crate::replay::{ReplayStore, Sighting};
use crate::trust::{KeyRequest, KeySource};
use serde_json::{Map, Value};

/// Nesting depth allowed in the claims JSON (the `act` depth is bounded
/// separately and more tightly by the delegation audit).
pub const MAX_CLAIMS_DEPTH: usize = 32;
/// Longest `jti` accepted.
pub const MAX_JTI_LEN: usize = 256;

/// Why a JWT was not accepted. Each variant has a stable [`JwtError::code`]
/// and its message says exactly what failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JwtError {
    #[error("token of {size} bytes exceeds the {limit}-byte limit")]
    /// The token is larger than the limit.
    TooLarge {
        /// The token size in bytes.
        size: usize,
        /// The limit in bytes.
        limit: usize,
    },
    /// The token is not three dot-separated parts (RFC 7519 section 7.2 step 1).
    #[error("malformed compact JWT: {0}")]
    Malformed(String),
    #[error("{part} is not canonical base64url")]
    /// A part is not canonical unpadded base64url (RFC 7519 section 7.2 steps 2 and 6).
    Base64 {
        /// Which part, e.g. `"claims"` or `"signature"`.
        part: &'static str,
    },
    #[error("{part} is not strict I-JSON: {detail}")]
    /// The header or the claims set is not a strict I-JSON object (RFC 7519 section 7.2 steps 3 and 10).
    Json {
        /// Which part, e.g. `"claims"`.
        part: &'static str,
        /// What is wrong with it.
        detail: String,
    },
    /// The JOSE header is refused by policy (the message and the stable
    /// code, e.g. `alg` not allowed or `typ` mismatch).
    #[error("header refused: {0}")]
    Header(String, &'static str),
    /// No trusted key matches the token's `kid`/`alg`.
    #[error("no trusted key for this token: {0}")]
    NoKey(String),
    /// The signature does not verify with the trusted key.
    #[error("signature does not verify: {0}")]
    Signature(String),
    #[error("claim {q0} has the wrong type: {detail}", q0 = crate::text::quoted(.claim))]
    /// A registered claim has the wrong JSON type (RFC 7519 section 4.1).
    ClaimType {
        /// The claim name, e.g. `"exp"`.
        claim: &'static str,
        /// What was expected and found.
        detail: String,
    },
    /// The policy names issuers and the token has no `iss` (RFC 7519 section 4.1.1).
    #[error("iss is missing")]
    IssMissing,
    /// `iss` is not one of the configured issuers (the `iss` received).
    #[error("iss {q0} is not a configured issuer", q0 = crate::text::quoted(.0))]
    IssMismatch(String),
    /// The policy requires an audience and the token has no `aud` (RFC 7519 section 4.1.3; the expected audience).
    #[error("aud is missing; this verifier requires {q0}", q0 = crate::text::quoted(.0))]
    AudMissing(String),
    /// `aud` does not contain this verifier's identifier (the expected audience).
    #[error("aud does not contain this verifier's identifier {q0}", q0 = crate::text::quoted(.0))]
    AudMismatch(String),
    /// The token has no `exp` and the policy requires one (RFC 7519 section 4.1.4).
    #[error("exp is missing (required)")]
    ExpMissing,
    #[error("expired at {}; now {}, skew {skew} s", crate::text::rfc3339(*.exp), crate::text::rfc3339(*.now))]
    /// `exp` is at or before now minus the skew (RFC 7519 section 4.1.4).
    Expired {
        /// The `exp` claim, in seconds since the Unix epoch.
        exp: i64,
        /// The current time, in seconds since the Unix epoch.
        now: i64,
        /// The allowed clock skew, in seconds.
        skew: i64,
    },
    #[error("not valid before {}; now {}, skew {skew} s", crate::text::rfc3339(*.nbf), crate::text::rfc3339(*.now))]
    /// `nbf` is after now plus the skew (RFC 7519 section 4.1.5).
    NotYetValid {
        /// The `nbf` claim, in seconds since the Unix epoch.
        nbf: i64,
        /// The current time, in seconds since the Unix epoch.
        now: i64,
        /// The allowed clock skew, in seconds.
        skew: i64,
    },
    #[error("issued in the future ({}); now {}, skew {skew} s", crate::text::rfc3339(*.iat), crate::text::rfc3339(*.now))]
    /// `iat` is after now plus the skew (RFC 7519 section 4.1.6).
    IatFuture {
        /// The `iat` claim, in seconds since the Unix epoch.
        iat: i64,
        /// The current time, in seconds since the Unix epoch.
        now: i64,
        /// The allowed clock skew, in seconds.
        skew: i64,
    },
    /// The policy requires `jti` and the token has none (RFC 7519 section 4.1.7).
    #[error("jti is missing (required by policy)")]
    JtiMissing,
    #[error("jti {q0} of issuer {q1} was seen before (replay)", q0 = crate::text::quoted(.jti), q1 = crate::text::quoted(.iss))]
    /// The `(iss, jti)` pair was seen before within its lifetime (RFC 7519 section 4.1.7).
    Replay {
        /// The token's `iss` (empty when absent).
        iss: String,
        /// The token's `jti`.
        jti: String,
    },
    /// The replay store failed (full or unavailable); the token is refused.
    #[error("replay store: {0}")]
    ReplayStore(crate::replay::ReplayError),
}

impl JwtError {
    /// A stable, machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            JwtError::TooLarge { .. } => "jwt.too-large",
            JwtError::Malformed(_) => "jwt.malformed",
            JwtError::Base64 { .. } => "jwt.base64",
            JwtError::Json { .. } => "jwt.json",
            JwtError::Header(_, c) => c,
            JwtError::NoKey(_) => "jwt.no-trusted-key",
            JwtError::Signature(_) => "jwt.signature",
            JwtError::ClaimType { .. } => "jwt.claim-type",
            JwtError::IssMissing => "jwt.iss-missing",
            JwtError::IssMismatch(_) => "jwt.iss-mismatch",
            JwtError::AudMissing(_) => "jwt.aud-missing",
            JwtError::AudMismatch(_) => "jwt.aud-mismatch",
            JwtError::ExpMissing => "jwt.exp-missing",
            JwtError::Expired { .. } => "jwt.expired",
            JwtError::NotYetValid { .. } => "jwt.not-yet-valid",
            JwtError::IatFuture { .. } => "jwt.iat-future",
            JwtError::JtiMissing => "jwt.jti-missing",
            JwtError::Replay { .. } => "jwt.jti-replay",
            JwtError::ReplayStore(_) => "jwt.replay-store",
        }
    }
}

fn header_code(r: &Reason) -> &'static str {
    match r {
        Reason::AlgMissing => "jwt.alg-missing",
        Reason::AlgNone => "jwt.alg-none",
        Reason::AlgUnknown(_) => "jwt.alg-unknown",
        Reason::AlgNotAllowed(_) => "jwt.alg-not-allowed",
        Reason::AlgNotKeys { .. } => "jwt.alg-not-keys",
        Reason::CritMalformed(_) => "jwt.crit-malformed",
        Reason::CritUnknown(_) => "jwt.crit-unknown",
        Reason::B64Malformed(_) => "jwt.b64",
        Reason::KeyHeaderOffered(_) => "jwt.key-header",
        Reason::HeadersNotDisjoint(_) => "jwt.malformed",
        Reason::TypMismatch(_) => "jwt.typ",
        Reason::BadKid(_) => "jwt.bad-kid",
        Reason::HighS => "jwt.signature",
        Reason::Discovery(_) => "jwt.discovery",
        Reason::NoKeyForKid(_) | Reason::KidIsThumbprintOf(..) => "jwt.no-trusted-key",
        Reason::Signature(_) => "jwt.signature",
    }
}

/// A JWT decoded strictly but not yet verified.
#[derive(Clone, Debug)]
pub struct DecodedJwt {
    /// The JOSE header (RFC 7519 section 5).
    pub header: Map<String, Value>,
    /// The claims set (RFC 7519 section 4).
    pub claims: Map<String, Value>,
    parsed: ParsedJws,
}

/// How a signature was verified.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct KeyEvidence {
    /// The JWA `alg` of the signature, e.g. `"ES256"`.
    pub alg: String,
    /// The `kid` header, if any.
    pub kid: Option<String>,
    /// Where the trusted key came from.
    pub key_source: KeySource,
    /// RFC 7638 thumbprint (base64url SHA-256) of the key that verified.
    pub key_thumbprint: String,
}

/// A verified JWT.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct VerifiedJwt {
    /// The JOSE header (RFC 7519 section 5).
    pub header: Map<String, Value>,
    /// The claims set (RFC 7519 section 4).
    pub claims: Map<String, Value>,
    /// How the signature was verified.
    pub evidence: KeyEvidence,
}

/// Check that `text` is a compact JWT and decode its header and claims
/// strictly (RFC 7519 section 7.2 steps 1 to 10, without the signature).
///
/// # Errors
/// [`JwtError`] (with a stable `code()`) for the first failed check: malformed token, untrusted key
/// or signature, claims, or replay.
pub fn decode(text: &str, max_bytes: usize) -> Result<DecodedJwt, JwtError> {
    if text.len() > max_bytes {
        return Err(JwtError::TooLarge {
            size: text.len(),
            limit: max_bytes,
        });
    }
    if let Some(c) = text
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Err(JwtError::Malformed(format!(
            "character {} is not base64url or '.'",
            crate::text::quoted(&c.to_string())
        )));
    }
    let parts: Vec<&str> = text.split('.').collect();
    if parts.len() != 3 {
        return Err(JwtError::Malformed(format!(
            "{} segments, a JWS compact JWT has exactly 3 (JWE is not supported)",
            parts.len()
        )));
    }
    if parts.iter().any(|p| p.is_empty()) {
        return Err(JwtError::Malformed(
            "an empty segment (unsecured or detached JWTs are not accepted)".into(),
        ));
    }
    let parsed = ParsedJws::parse(text).map_err(|e| match e {
        jws::JwsError::Base64 { part, .. } => JwtError::Base64 { part },
        jws::JwsError::HeaderJson(d) => JwtError::Json {
            part: "header",
            detail: d,
        },
        other => JwtError::Malformed(other.to_string()),
    })?;
    let header = match parsed.signatures.first() {
        Some(s) => (*s.protected.members).clone(),
        None => return Err(JwtError::Malformed("no signature".into())),
    };
    if header.contains_key("b64") {
        return Err(JwtError::Header(
            "b64 is not allowed in a JWT (RFC 7797 section 7)".into(),
            "jwt.b64",
        ));
    }
    let payload = b64::decode(parts[1]).map_err(|_| JwtError::Base64 { part: "claims" })?;
    let v = crate::json::parse_strict_with(
        &payload,
        &crate::json::JsonLimits {
            max_bytes,
            max_depth: MAX_CLAIMS_DEPTH,
        },
    )
    .map_err(|e| JwtError::Json {
        part: "claims",
        detail: e.to_string(),
    })?;
    let claims = match v {
        Value::Object(m) => m,
        _ => {
            return Err(JwtError::Json {
                part: "claims",
                detail: "the claims set is not a JSON object (RFC 7519 7.2 step 10)".into(),
            })
        }
    };
    check_claim_types(&claims)?;
    Ok(DecodedJwt {
        header,
        claims,
        parsed,
    })
}

/// Registered claim types (RFC 7519 section 4.1, RFC 8693 section 4).
fn check_claim_types(c: &Map<String, Value>) -> Result<(), JwtError> {
    for name in ["iss", "sub", "jti", "client_id", "azp"] {
        if let Some(v) = c.get(name) {
            if !v.is_string() {
                return Err(JwtError::ClaimType {
                    claim: static_name(name),
                    detail: "must be a string".into(),
                });
            }
        }
    }
    if let Some(j) = c.get("jti").and_then(Value::as_str) {
        if j.is_empty() || j.len() > MAX_JTI_LEN {
            return Err(JwtError::ClaimType {
                claim: "jti",
                detail: format!("must be 1..={MAX_JTI_LEN} bytes"),
            });
        }
    }
    match c.get("aud") {
        None | Some(Value::String(_)) => {}
        Some(Value::Array(a)) if !a.is_empty() && a.iter().all(Value::is_string) => {}
        Some(_) => {
            return Err(JwtError::ClaimType {
                claim: "aud",
                detail: "must be a string or a non-empty array of strings (RFC 7519 4.1.3)".into(),
            })
        }
    }
    for name in ["exp", "nbf", "iat"] {
        if c.contains_key(name) && numeric_date(c, name).is_none() {
            return Err(JwtError::ClaimType {
                claim: static_name(name),
                detail: "NumericDate must be an integer within ±(2^53−1)".into(),
            });
        }
    }
    // `act` and `may_act` (RFC 8693) are checked by the delegation audit,
    // which reports them with their own codes.
    if let Some(v) = c.get("cnf") {
        if !v.is_object() {
            return Err(JwtError::ClaimType {
                claim: "cnf",
                detail: "must be a JSON object (RFC 7800 3.1)".into(),
            });
        }
    }
    Ok(())
}

fn static_name(n: &str) -> &'static str {
    match n {
        "iss" => "iss",
        "sub" => "sub",
        "jti" => "jti",
        "client_id" => "client_id",
        "azp" => "azp",
        "exp" => "exp",
        "nbf" => "nbf",
        "iat" => "iat",
        _ => "claim",
    }
}

/// An integer NumericDate claim (RFC 7519 section 2). Fractions are refused.
pub fn numeric_date(c: &Map<String, Value>, name: &str) -> Option<i64> {
    c.get(name).and_then(Value::as_i64)
}

/// The `aud` values (RFC 7519 4.1.3: a string or an array of strings).
pub fn audiences(c: &Map<String, Value>) -> Vec<&str> {
    match c.get("aud") {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

impl DecodedJwt {
    /// Verify the signature with a trusted key (RFC 7519 7.2 step 7 via the
    /// JWS core, RFC 7515 section 5.2).
    ///
    /// The key request carries the token's `iss`, so keys bound to another
    /// issuer ([`PerIssuer`](crate::trust::PerIssuer)) never verify it (RFC 8725 section 3.8). Key
    /// headers are always refused in a JWT.
    ///
    /// # Errors
    /// [`JwtError`] (with a stable `code()`) when the header is refused (algorithm, `typ`, `crit`,
    /// key headers) or no trusted key verifies the signature.
    pub fn verify_signature(
        &self,
        cx: &Context,
        policy: &JwtPolicy,
    ) -> Result<KeyEvidence, JwtError> {
        let mut jv = cx.clone();
        let jp = jws::JwsPolicy {
            expected_typ: policy.expected_typ.clone(),
        };
        jv.key_headers = jws::KeyHeaderPolicy::Refuse;
        let issuer = self.claims.get("iss").and_then(Value::as_str);
        let report =
            jws::report_parsed(&jv, &jp, &self.parsed, None, issuer).map_err(|e| match e {
                jws::JwsError::Base64 { part, .. } => JwtError::Base64 { part },
                other => JwtError::Malformed(other.to_string()),
            })?;
        let sig = report
            .signatures
            .first()
            .ok_or_else(|| JwtError::Malformed("no signature".into()))?;
        match (&sig.verdict, &sig.reason) {
            (Verdict::Valid, _) => Ok(KeyEvidence {
                alg: sig.alg.clone().unwrap_or_default(),
                kid: sig.kid.clone(),
                key_source: sig.key_source.clone().unwrap_or(KeySource::Pinned),
                key_thumbprint: sig.key_thumbprint.clone().unwrap_or_default(),
            }),
            (Verdict::NoTrustedKey, r) => Err(JwtError::NoKey(
                r.as_ref()
                    .map(|r| r.to_string())
                    .unwrap_or_else(|| "no trusted key".into()),
            )),
            (_, Some(Reason::Signature(e))) => Err(JwtError::Signature(e.to_string())),
            (_, Some(r)) => Err(JwtError::Header(r.to_string(), header_code(r))),
            (_, None) => Err(JwtError::Signature("not verified".into())),
        }
    }

    /// Check the registered claims against the policy at `now`
    /// (RFC 7519 section 4.1; RFC 8725 section 3.8 and 3.9). Returns every
    /// failure, in a fixed order.
    pub fn check_claims(&self, policy: &JwtPolicy, skew: i64, now: i64) -> Vec<JwtError> {
        let c = &self.claims;
        let skew = skew.max(0);
        let mut out = Vec::new();
        if let Some(issuers) = &policy.issuers {
            match c.get("iss").and_then(Value::as_str) {
                None => out.push(JwtError::IssMissing),
                Some(i) if !issuers.iter().any(|x| x == i) => {
                    out.push(JwtError::IssMismatch(i.to_owned()))
                }
                Some(_) => {}
            }
        }
        if let Some(me) = &policy.audience {
            let auds = audiences(c);
            if auds.is_empty() {
                out.push(JwtError::AudMissing(me.clone()));
            } else if !auds.contains(&me.as_str()) {
                out.push(JwtError::AudMismatch(me.clone()));
            }
        }
        match numeric_date(c, "exp") {
            None => out.push(JwtError::ExpMissing),
            Some(exp) if now >= exp.saturating_add(skew) => {
                out.push(JwtError::Expired { exp, now, skew })
            }
            Some(_) => {}
        }
        if let Some(nbf) = numeric_date(c, "nbf") {
            if now.saturating_add(skew) < nbf {
                out.push(JwtError::NotYetValid { nbf, now, skew });
            }
        }
        if let Some(iat) = numeric_date(c, "iat") {
            if iat > now.saturating_add(skew) {
                out.push(JwtError::IatFuture { iat, now, skew });
            }
        }
        if policy.require_jti && !c.contains_key("jti") {
            out.push(JwtError::JtiMissing);
        }
        out
    }

    /// The `(iss, jti, until)` entry a replay store records for this
    /// token: until `exp` plus skew. `None` without `jti`.
    pub fn replay_entry(&self, skew: i64, now: i64) -> Option<(&str, &str, i64)> {
        let jti = self.claims.get("jti").and_then(Value::as_str)?;
        let iss = self.claims.get("iss").and_then(Value::as_str).unwrap_or("");
        let until = numeric_date(&self.claims, "exp")
            .unwrap_or(now)
            .saturating_add(skew.max(0));
        Some((iss, jti, until))
    }

    /// What this token claims about its key, for a resolver: `kid`, `alg`
    /// and the issuer. The parse-first step of an async caller.
    pub fn key_request(&self) -> KeyRequest {
        let mut r = self
            .parsed
            .signatures
            .first()
            .map(jws::ParsedSignature::key_request)
            .unwrap_or_default();
        r.issuer = self
            .claims
            .get("iss")
            .and_then(Value::as_str)
            .map(str::to_owned);
        r
    }
}

/// Record `(iss, jti)` in the store, under the scope
/// [`JWT_SCOPE`](crate::replay::JWT_SCOPE) + `iss` (never shared with RFC
/// 9421 key ids); a second sighting is a replay. A store that fails refuses
/// the token (fail closed).
///
/// # Errors
/// [`JwtError`] (with a stable `code()`) for the first failed check: malformed token, untrusted key
/// or signature, claims, or replay.
pub fn check_replay(
    store: &dyn ReplayStore,
    entries: &[(&str, &str, i64)],
    now: i64,
) -> Result<(), JwtError> {
    let scopes: Vec<String> = entries
        .iter()
        .map(|(iss, _, _)| format!("{}{iss}", crate::replay::JWT_SCOPE))
        .collect();
    let tagged: Vec<(&str, &str, i64)> = entries
        .iter()
        .zip(&scopes)
        .map(|((_, jti, until), scope)| (scope.as_str(), *jti, *until))
        .collect();
    for (_, _, until) in entries {
        crate::replay::within_replay_window(*until, now).map_err(JwtError::ReplayStore)?;
    }
    #[cfg(feature = "verify-oracle")]
    if crate::keys::oracle::defer_replay() {
        return Ok(());
    }
    match store.check_and_record_all(&tagged, now) {
        Ok(Sighting::First) => Ok(()),
        Ok(Sighting::Replay) => {
            let (iss, jti) = entries
                .first()
                .map(|(i, j, _)| ((*i).to_owned(), (*j).to_owned()))
                .unwrap_or_default();
            Err(JwtError::Replay { iss, jti })
        }
        Err(e) => Err(JwtError::ReplayStore(e)),
    }
}

/// Decode, verify the signature, check the claims against `policy` and,
/// with a replay store, record `jti` (only once all else passed). Returns
/// the first failure; `Ok` only for a verified token. The one public way is
/// [`Verifier::verify_jwt`](crate::verifier::Verifier::verify_jwt).
pub(crate) fn verify(
    v: &Context,
    policy: &JwtPolicy,
    token: &str,
) -> Result<VerifiedJwt, JwtError> {
    let d = decode(token, v.limits.max_jwt_bytes)?;
    let evidence = d.verify_signature(v, policy)?;
    let now = v.now();
    if let Some(e) = d.check_claims(policy, v.skew_i64(), now).into_iter().next() {
        return Err(e);
    }
    if let Some(store) = v.replay_store() {
        match d.replay_entry(v.skew_i64(), now) {
            Some(entry) => check_replay(store, &[entry], now)?,
            None if policy.require_jti => return Err(JwtError::JtiMissing),
            None => {}
        }
    }
    Ok(VerifiedJwt {
        header: d.header,
        claims: d.claims,
        evidence,
    })
}

/// Sign a claims set as a compact JWT with header `{alg, kid, typ}`.
///
/// # Errors
/// [`JwtError::Malformed`] when the header or claims cannot be serialized; [`JwtError::Signature`]
/// when the key cannot sign.
pub fn sign(claims: &Map<String, Value>, key: &SigningKey, typ: &str) -> Result<String, JwtError> {
    let mut h = Map::new();
    h.insert(
        "alg".into(),
        Value::String(key.algorithm().jose_name().into()),
    );
    h.insert("kid".into(), Value::String(key.kid_or_thumbprint()));
    h.insert("typ".into(), Value::String(typ.into()));
    let hb =
        serde_json::to_vec(&Value::Object(h)).map_err(|e| JwtError::Malformed(e.to_string()))?;
    let pb = serde_json::to_vec(&Value::Object(claims.clone()))
        .map_err(|e| JwtError::Malformed(e.to_string()))?;
    let si = format!("{}.{}", b64::encode(&hb), b64::encode(&pb));
    let sig = key
        .sign(si.as_bytes())
        .map_err(|e| JwtError::Signature(e.to_string()))?;
    Ok(format!("{si}.{}", b64::encode(&sig)))
}
