//! JSON Web Token verification (RFC 7519) with the best current practices of
//! RFC 8725, built on the project's JWS core ([`crate::jws`]).
//!
//! # Security contract
//! * Compact serialization only (RFC 7519 section 7.2 step 1), at most
//!   [`JwtPolicy::max_bytes`] bytes (16 KiB by default), exactly three
//!   non-empty segments of canonical base64url (RFC 7515 section 2), no
//!   whitespace. Header and claims are strict I-JSON (RFC 7493; RFC 7519
//!   section 4 "Claim Names ... MUST be unique"): duplicate member names,
//!   invalid UTF-8 and non-I-JSON numbers are refused.
//! * The algorithm comes from an explicit allow-list ([`JwtPolicy::allowed`],
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
//! * Keys come from a [`KeyResolver`]; the request carries the token's `iss`
//!   so that a resolver can keep keys per issuer ([`PerIssuer`]). Discovery
//!   (RFC 8414, DID) plugs in through the same trait; nothing here fetches.
//! * Claims (RFC 7519 section 4.1): `iss` exact match against the configured
//!   issuers; `aud` must contain the verifier's identifier when one is
//!   configured (4.1.3); `exp` is required (4.1.4); `nbf` (4.1.5) and `iat`
//!   (4.1.6, not in the future) are checked; NumericDate values must be
//!   integers within ±(2^53−1). Clock skew is explicit ([`JwtPolicy::skew`],
//!   default 60 s) and the clock is injected ([`Clock`]).
//! * `jti` replay (RFC 7519 section 4.1.7, RFC 8725 section 3.8 context) is
//!   detected through a [`ReplayStore`], keyed by `(iss, jti)` until `exp`
//!   plus skew.

use crate::alg::AllowList;
use crate::b64;
use crate::jws::{self, KeyHeaderPolicy, ParsedJws, Reason, Verdict, VerifyPolicy};
use crate::keys::SigningKey;
use crate::trust::{KeyRequest, KeyResolver, KeySource, ResolveError, TrustedKey};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Default size cap of a compact JWT (RFC 8725 leaves it to the verifier).
pub const DEFAULT_MAX_JWT_BYTES: usize = 16 * 1024;
/// Default clock skew in seconds.
pub const DEFAULT_SKEW: i64 = 60;
/// Nesting depth allowed in the claims JSON (the `act` depth is bounded
/// separately and more tightly by the delegation audit).
pub const MAX_CLAIMS_DEPTH: usize = 32;
/// Longest `jti` accepted.
pub const MAX_JTI_LEN: usize = 256;

pub use crate::clock::{Clock, FixedClock, SystemClock};

/// Why a JWT was not accepted. Each variant has a stable [`JwtError::code`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JwtError {
    #[error("token of {size} bytes exceeds the {limit}-byte limit")]
    TooLarge { size: usize, limit: usize },
    #[error("malformed compact JWT: {0}")]
    Malformed(String),
    #[error("{part} is not canonical base64url")]
    Base64 { part: &'static str },
    #[error("{part} is not strict I-JSON: {detail}")]
    Json { part: &'static str, detail: String },
    #[error("header refused: {0}")]
    Header(String, &'static str),
    #[error("no trusted key for this token: {0}")]
    NoKey(String),
    #[error("signature does not verify: {0}")]
    Signature(String),
    #[error("claim {claim:?} has the wrong type: {detail}")]
    ClaimType { claim: &'static str, detail: String },
    #[error("iss is missing")]
    IssMissing,
    #[error("iss {0:?} is not a configured issuer")]
    IssMismatch(String),
    #[error("aud is missing; this verifier requires {0:?}")]
    AudMissing(String),
    #[error("aud does not contain this verifier's identifier {0:?}")]
    AudMismatch(String),
    #[error("exp is missing (required)")]
    ExpMissing,
    #[error("expired at {exp}; now {now}, skew {skew} s")]
    Expired { exp: i64, now: i64, skew: i64 },
    #[error("not valid before {nbf}; now {now}, skew {skew} s")]
    NotYetValid { nbf: i64, now: i64, skew: i64 },
    #[error("issued in the future ({iat}); now {now}, skew {skew} s")]
    IatFuture { iat: i64, now: i64, skew: i64 },
    #[error("jti is missing (required by policy)")]
    JtiMissing,
    #[error("jti {jti:?} of issuer {iss:?} was seen before (replay)")]
    Replay { iss: String, jti: String },
    #[error("replay store: {0}")]
    ReplayStore(String),
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
        Reason::Discovery(_) => "jwt.discovery",
        Reason::NoKeyForKid(_) => "jwt.no-trusted-key",
        Reason::Signature(_) => "jwt.signature",
    }
}

/// What a verifier accepts.
#[derive(Clone, Debug)]
pub struct JwtPolicy {
    /// Algorithms accepted (RFC 8725 3.1). Default: the asymmetric ones.
    pub allowed: AllowList,
    /// Accepted `typ` values; `None` accepts any or none (RFC 8725 3.11).
    pub expected_typ: Option<Vec<String>>,
    /// Accepted issuers, compared exactly (RFC 7519 4.1.1, RFC 8725 3.8).
    /// `None`: not checked (the keys are then the only trust anchor).
    pub issuers: Option<Vec<String>>,
    /// This verifier's identifier; when set, `aud` must contain it.
    pub audience: Option<String>,
    /// Allowed clock skew in seconds (default 60).
    pub skew: i64,
    /// Size cap of the compact token (default 16 KiB).
    pub max_bytes: usize,
    /// Require `jti` (delegation tokens do).
    pub require_jti: bool,
}

impl Default for JwtPolicy {
    fn default() -> Self {
        JwtPolicy {
            allowed: AllowList::asymmetric(),
            expected_typ: None,
            issuers: None,
            audience: None,
            skew: DEFAULT_SKEW,
            max_bytes: DEFAULT_MAX_JWT_BYTES,
            require_jti: false,
        }
    }
}

/// A JWT decoded strictly but not yet verified.
#[derive(Clone, Debug)]
pub struct DecodedJwt {
    pub header: Map<String, Value>,
    pub claims: Map<String, Value>,
    parsed: ParsedJws,
}

/// How a signature was verified.
#[derive(Clone, Debug)]
pub struct KeyEvidence {
    pub alg: String,
    pub kid: Option<String>,
    pub key_source: KeySource,
    pub key_thumbprint: String,
}

/// A verified JWT.
#[derive(Clone, Debug)]
pub struct VerifiedJwt {
    pub header: Map<String, Value>,
    pub claims: Map<String, Value>,
    pub evidence: KeyEvidence,
}

/// Check that `text` is a compact JWT and decode its header and claims
/// strictly (RFC 7519 section 7.2 steps 1 to 10, without the signature).
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
            "character {c:?} is not base64url or '.'"
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
        Some(s) => s.protected.members.clone(),
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
        &crate::json::Limits {
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

/// Scopes a resolver to one issuer. (Symmetric keys from a published source
/// are dropped by the JWS verifier underneath, for every caller.)
struct IssuerScoped<'a> {
    inner: &'a dyn KeyResolver,
    issuer: Option<&'a str>,
}

impl KeyResolver for IssuerScoped<'_> {
    fn resolve(&self, req: &KeyRequest<'_>) -> Result<Vec<TrustedKey>, ResolveError> {
        self.inner.resolve(&KeyRequest {
            kid: req.kid,
            alg: req.alg,
            issuer: self.issuer,
        })
    }
}

/// Keys kept per issuer: a token's keys are looked up only among those of
/// the issuer it names (checklist item 23: each hop's key from *that*
/// issuer). Discovery resolvers (RFC 8414 `jwks_uri`, DID) can be registered
/// per issuer the same way.
#[derive(Default)]
pub struct PerIssuer {
    by_issuer: HashMap<String, Box<dyn KeyResolver + Send + Sync>>,
}

impl PerIssuer {
    pub fn new() -> PerIssuer {
        PerIssuer::default()
    }
    pub fn insert(&mut self, issuer: impl Into<String>, r: Box<dyn KeyResolver + Send + Sync>) {
        self.by_issuer.insert(issuer.into(), r);
    }
}

impl KeyResolver for PerIssuer {
    fn resolve(&self, req: &KeyRequest<'_>) -> Result<Vec<TrustedKey>, ResolveError> {
        match req.issuer.and_then(|i| self.by_issuer.get(i)) {
            Some(r) => r.resolve(req),
            None => Ok(Vec::new()),
        }
    }
}

impl DecodedJwt {
    /// Verify the signature with a trusted key (RFC 7519 7.2 step 7 via the
    /// JWS core, RFC 7515 section 5.2).
    pub fn verify_signature(
        &self,
        resolver: &dyn KeyResolver,
        policy: &JwtPolicy,
    ) -> Result<KeyEvidence, JwtError> {
        let scoped = IssuerScoped {
            inner: resolver,
            issuer: self.claims.get("iss").and_then(Value::as_str),
        };
        let jp = VerifyPolicy {
            allowed: policy.allowed.clone(),
            expected_typ: policy.expected_typ.clone(),
            key_headers: KeyHeaderPolicy::Refuse,
            low_s: false,
        };
        let report = jws::verify_parsed(&self.parsed, None, &scoped, &jp).map_err(|e| match e {
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
    pub fn check_claims(&self, policy: &JwtPolicy, now: i64) -> Vec<JwtError> {
        let c = &self.claims;
        let skew = policy.skew.max(0);
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

    /// Record `jti` in the replay store; a second sighting is a replay.
    pub fn check_replay(
        &self,
        store: &mut dyn ReplayStore,
        policy: &JwtPolicy,
        now: i64,
    ) -> Result<(), JwtError> {
        let Some(jti) = self.claims.get("jti").and_then(Value::as_str) else {
            return if policy.require_jti {
                Err(JwtError::JtiMissing)
            } else {
                Ok(())
            };
        };
        let iss = self.claims.get("iss").and_then(Value::as_str).unwrap_or("");
        let until = numeric_date(&self.claims, "exp")
            .unwrap_or(now)
            .saturating_add(policy.skew.max(0));
        match store.check_and_insert(iss, jti, until, now) {
            Ok(true) => Ok(()),
            Ok(false) => Err(JwtError::Replay {
                iss: iss.to_owned(),
                jti: jti.to_owned(),
            }),
            Err(e) => Err(JwtError::ReplayStore(e)),
        }
    }
}

/// Decode, verify the signature, check the claims, and (with a store) check
/// replay. Returns the first failure.
pub fn verify(
    token: &str,
    resolver: &dyn KeyResolver,
    policy: &JwtPolicy,
    clock: &dyn Clock,
    replay: Option<&mut dyn ReplayStore>,
) -> Result<VerifiedJwt, JwtError> {
    let d = decode(token, policy.max_bytes)?;
    let evidence = d.verify_signature(resolver, policy)?;
    let now = clock.now();
    if let Some(e) = d.check_claims(policy, now).into_iter().next() {
        return Err(e);
    }
    if let Some(store) = replay {
        d.check_replay(store, policy, now)?;
    }
    Ok(VerifiedJwt {
        header: d.header,
        claims: d.claims,
        evidence,
    })
}

/// Sign a claims set as a compact JWT with header `{alg, kid, typ}`.
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

// ---------------------------------------------------------------------------
// Replay

/// Remembers `(iss, jti)` pairs until they expire (RFC 7519 4.1.7).
pub trait ReplayStore {
    /// Record the pair, valid until `until`. Returns `Ok(false)` when the
    /// pair is already recorded and not expired at `now` (a replay).
    /// A store that cannot record must fail closed with `Err`.
    fn check_and_insert(
        &mut self,
        iss: &str,
        jti: &str,
        until: i64,
        now: i64,
    ) -> Result<bool, String>;
}

/// Default capacity of a replay store.
pub const DEFAULT_REPLAY_CAPACITY: usize = 100_000;

/// An in-memory replay store, bounded: expired entries are pruned when
/// full; if still full, inserting fails closed.
#[derive(Clone, Debug)]
pub struct MemoryReplayStore {
    seen: HashMap<(String, String), i64>,
    capacity: usize,
}

impl Default for MemoryReplayStore {
    fn default() -> Self {
        MemoryReplayStore::with_capacity(DEFAULT_REPLAY_CAPACITY)
    }
}

impl MemoryReplayStore {
    pub fn new() -> MemoryReplayStore {
        MemoryReplayStore::default()
    }
    pub fn with_capacity(capacity: usize) -> MemoryReplayStore {
        MemoryReplayStore {
            seen: HashMap::new(),
            capacity,
        }
    }
    pub fn len(&self) -> usize {
        self.seen.len()
    }
    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }
    fn entries(&self) -> impl Iterator<Item = (&str, &str, i64)> {
        self.seen
            .iter()
            .map(|((i, j), u)| (i.as_str(), j.as_str(), *u))
    }
}

impl ReplayStore for MemoryReplayStore {
    fn check_and_insert(
        &mut self,
        iss: &str,
        jti: &str,
        until: i64,
        now: i64,
    ) -> Result<bool, String> {
        let k = (iss.to_owned(), jti.to_owned());
        if let Some(u) = self.seen.get(&k) {
            if *u > now {
                return Ok(false);
            }
        }
        if self.seen.len() >= self.capacity && !self.seen.contains_key(&k) {
            self.seen.retain(|_, u| *u > now);
            if self.seen.len() >= self.capacity {
                return Err(format!(
                    "{} unexpired entries fill the store; refusing (fail closed)",
                    self.capacity
                ));
            }
        }
        self.seen.insert(k, until);
        Ok(true)
    }
}

/// A file-backed replay store for the CLI: one JSON object per line,
/// `{"iss":…,"jti":…,"until":…}`. Loaded on open (bounded), expired entries
/// dropped, rewritten by [`FileReplayStore::save`].
#[derive(Debug)]
pub struct FileReplayStore {
    path: std::path::PathBuf,
    mem: MemoryReplayStore,
}

/// Largest replay file read.
pub const MAX_REPLAY_FILE: u64 = 32 * 1024 * 1024;

impl FileReplayStore {
    /// Open (or start) the store at `path`. A corrupt file is an error, not
    /// an empty store (fail closed).
    pub fn open(path: impl Into<std::path::PathBuf>, now: i64) -> Result<FileReplayStore, String> {
        use std::io::Read;
        let path = path.into();
        let mut mem = MemoryReplayStore::new();
        match std::fs::File::open(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("{}: {e}", path.display())),
            Ok(f) => {
                let mut buf = String::new();
                f.take(MAX_REPLAY_FILE + 1)
                    .read_to_string(&mut buf)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                if buf.len() as u64 > MAX_REPLAY_FILE {
                    return Err(format!(
                        "{}: larger than {MAX_REPLAY_FILE} bytes",
                        path.display()
                    ));
                }
                for (n, line) in buf.lines().enumerate() {
                    if line.trim().is_empty() {
                        continue;
                    }
                    let v = crate::json::parse_strict(line.as_bytes())
                        .map_err(|e| format!("{} line {}: {e}", path.display(), n + 1))?;
                    let (Some(i), Some(j), Some(u)) = (
                        v.get("iss").and_then(Value::as_str),
                        v.get("jti").and_then(Value::as_str),
                        v.get("until").and_then(Value::as_i64),
                    ) else {
                        return Err(format!(
                            "{} line {}: not a replay entry",
                            path.display(),
                            n + 1
                        ));
                    };
                    if u > now {
                        mem.seen.insert((i.to_owned(), j.to_owned()), u);
                    }
                }
            }
        }
        Ok(FileReplayStore { path, mem })
    }

    /// Write the unexpired entries back (via a temporary file and rename).
    pub fn save(&self) -> Result<(), String> {
        let mut out = String::new();
        let mut entries: Vec<_> = self.mem.entries().collect();
        entries.sort();
        for (i, j, u) in entries {
            out.push_str(&serde_json::json!({"iss": i, "jti": j, "until": u}).to_string());
            out.push('\n');
        }
        let tmp = self.path.with_extension("tmp");
        std::fs::write(&tmp, out).map_err(|e| format!("{}: {e}", tmp.display()))?;
        std::fs::rename(&tmp, &self.path).map_err(|e| format!("{}: {e}", self.path.display()))
    }
}

impl ReplayStore for FileReplayStore {
    fn check_and_insert(
        &mut self,
        iss: &str,
        jti: &str,
        until: i64,
        now: i64,
    ) -> Result<bool, String> {
        self.mem.check_and_insert(iss, jti, until, now)
    }
}
