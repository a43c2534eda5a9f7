//! Layer 4: the policy and limit types each format takes, and the
//! [`Context`] every format verifies under. Plain data with secure defaults,
//! no I/O, no format logic: the formats (layer 5) read them, the
//! [`Verifier`](crate::verifier::Verifier) facade (layer 6) holds them and
//! calls down (see `docs/embedding.md`).
//!
//! | type | read by | default |
//! |---|---|---|
//! | [`Limits`] | every format | 1 MiB documents and JWS, 16 KiB JWTs |
//! | [`JwsPolicy`], [`KeyHeaderPolicy`] | [`crate::jws`], [`crate::descriptor`], [`crate::a2a`] | any `typ`; key headers refused |
//! | [`JwtPolicy`] | [`crate::jwt`] | no issuer or audience check (set them) |
//! | [`AuditPolicy`], [`ScopePolicy`] | [`crate::delegation`] | 5 actors, set inclusion |
//! | `HttpPolicy` | [`crate::httpsig`] (kept beside its RFC 9421 component types) | see `httpsig::HttpPolicy` |

use crate::alg::AllowList;
use crate::clock::Clock;
use crate::replay::ReplayStore;
use crate::trust::KeyResolver;
use std::sync::Arc;

/// Default tolerated clock difference, in seconds (the JWT `exp`/`nbf`/`iat`
/// leeway and the RFC 9421 `created`/`expires` tolerance alike).
pub const DEFAULT_SKEW: u64 = 60;

/// Size limits applied before any parsing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Largest descriptor (JSON document) accepted, in bytes.
    pub max_document_bytes: usize,
    /// Largest JWS (compact or JSON) accepted, in bytes.
    pub max_jws_bytes: usize,
    /// Largest compact JWT accepted, in bytes.
    pub max_jwt_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_document_bytes: crate::json::JsonLimits::default().max_bytes,
            max_jws_bytes: MAX_JWS_BYTES,
            max_jwt_bytes: DEFAULT_MAX_JWT_BYTES,
        }
    }
}

/// Largest serialized JWS accepted (compact or JSON).
pub const MAX_JWS_BYTES: usize = 1024 * 1024;

/// Default size cap of a compact JWT (RFC 8725 leaves it to the verifier).
pub const DEFAULT_MAX_JWT_BYTES: usize = 16 * 1024;

/// Default bound on the number of actors in one token's `act` chain.
pub const DEFAULT_MAX_DEPTH: usize = 5;
/// The bound no configuration can exceed.
pub const HARD_MAX_DEPTH: usize = 10;
/// Most tokens in one bundle.
pub const MAX_HOPS: usize = 10;
/// The media type agentsig gives its delegation tokens (RFC 9068 section 4).
pub const DELEGATION_TYP: &str = "at+jwt";

/// What to do when a JWS header offers a key or a key location.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum KeyHeaderPolicy {
    /// Refuse the signature (the default).
    #[default]
    Refuse,
    /// Ignore the header; keys still come only from the resolver.
    Ignore,
}

/// What a JWS must carry beyond a valid signature (the allow-list, key
/// headers and keys are the `Verifier`'s).
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct JwsPolicy {
    /// Accepted `typ` values (compared case-insensitively, `application/`
    /// prefix optional, RFC 7515 4.1.9). `None`: any or none.
    pub expected_typ: Option<Vec<String>>,
}

impl JwsPolicy {
    /// Require one of these `typ` values in the protected header.
    pub fn expected_typ<S: Into<String>>(mut self, typ: impl IntoIterator<Item = S>) -> Self {
        self.expected_typ = Some(typ.into_iter().map(Into::into).collect());
        self
    }
}

/// What a JWT must carry beyond a valid signature (keys, algorithms, clock,
/// skew, size limit and replay store are the `Verifier`'s).
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct JwtPolicy {
    /// Accepted `typ` values; `None` accepts any or none (RFC 8725 3.11).
    pub expected_typ: Option<Vec<String>>,
    /// Accepted issuers, compared exactly (RFC 7519 4.1.1, RFC 8725 3.8).
    /// `None`: not checked (the keys are then the only trust anchor).
    pub issuers: Option<Vec<String>>,
    /// This verifier's identifier; when set, `aud` must contain it.
    pub audience: Option<String>,
    /// Require `jti` (delegation tokens do).
    pub require_jti: bool,
}

impl JwtPolicy {
    /// The policy for delegation tokens (RFC 9068 access tokens): `typ`
    /// `at+jwt` and `jti` required.
    pub fn delegation() -> JwtPolicy {
        JwtPolicy {
            expected_typ: Some(vec![DELEGATION_TYP.into()]),
            require_jti: true,
            ..JwtPolicy::default()
        }
    }
    /// Accept only these issuers.
    pub fn issuers<S: Into<String>>(mut self, issuers: impl IntoIterator<Item = S>) -> Self {
        self.issuers = Some(issuers.into_iter().map(Into::into).collect());
        self
    }
    /// Require `aud` to contain this identifier.
    pub fn audience(mut self, aud: impl Into<String>) -> Self {
        self.audience = Some(aud.into());
        self
    }
    /// Accept only these `typ` values.
    pub fn expected_typ<S: Into<String>>(mut self, typ: impl IntoIterator<Item = S>) -> Self {
        self.expected_typ = Some(typ.into_iter().map(Into::into).collect());
        self
    }
    /// Require `jti`.
    pub fn require_jti(mut self, on: bool) -> Self {
        self.require_jti = on;
        self
    }
}

/// How scope values compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ScopeMode {
    /// Set inclusion of exact values.
    #[default]
    Set,
    /// Segment-wise prefixes (see the module documentation).
    Hierarchical,
}

impl ScopeMode {
    /// The lowercase name, `"set"` or `"hierarchical"`, as in the JSON report.
    pub fn as_str(self) -> &'static str {
        match self {
            ScopeMode::Set => "set",
            ScopeMode::Hierarchical => "hierarchical",
        }
    }
}

/// The scope-comparison policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopePolicy {
    /// How one scope value covers another.
    pub mode: ScopeMode,
    /// Segment separators for [`ScopeMode::Hierarchical`].
    pub separators: Vec<char>,
}

impl Default for ScopePolicy {
    fn default() -> Self {
        ScopePolicy {
            mode: ScopeMode::Set,
            separators: vec!['.', '/', ':'],
        }
    }
}

/// How bad a failed check is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// The chain must not be accepted: [`AuditReport::passed`](crate::delegation::AuditReport::passed) is false.
    Error,
    /// A hazard worth a look that does not fail the audit.
    Warning,
    /// Informational (the severity of passed checks).
    Info,
}

impl Severity {
    /// The lowercase name, `"error"`, `"warning"` or `"info"`, as in the JSON report.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// What the audit accepts: plain data with secure defaults, held by the
/// `Verifier` (`VerifierBuilder::audit`).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct AuditPolicy {
    /// Most actors in one `act` chain (default 5, never above 10).
    pub max_depth: usize,
    /// How scopes are compared across actors and hops.
    pub scope: ScopePolicy,
    /// Require `may_act` on every token that is delegated further.
    pub require_may_act: bool,
    /// Severity of an actor equal to the token's subject (default warning).
    pub actor_is_subject: Severity,
    /// A failed check of severity warning fails the audit too (default
    /// false: only errors fail it).
    pub deny_warnings: bool,
}

impl Default for AuditPolicy {
    fn default() -> Self {
        AuditPolicy {
            max_depth: DEFAULT_MAX_DEPTH,
            scope: ScopePolicy::default(),
            require_may_act: false,
            actor_is_subject: Severity::Warning,
            deny_warnings: false,
        }
    }
}

impl AuditPolicy {
    /// Most actors in one `act` chain (clamped to 1..=[`HARD_MAX_DEPTH`]).
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }
    /// How scopes are compared.
    pub fn scope(mut self, scope: ScopePolicy) -> Self {
        self.scope = scope;
        self
    }
    /// Require `may_act` on every token that is delegated further
    /// (RFC 8693 section 4.4).
    pub fn require_may_act(mut self, on: bool) -> Self {
        self.require_may_act = on;
        self
    }
    /// Severity of an actor equal to the token's subject.
    pub fn actor_is_subject(mut self, severity: Severity) -> Self {
        self.actor_is_subject = severity;
        self
    }
    /// Let a failed warning fail the audit too.
    pub fn deny_warnings(mut self, on: bool) -> Self {
        self.deny_warnings = on;
        self
    }
    /// The effective depth bound (never above [`HARD_MAX_DEPTH`]).
    pub fn depth_bound(&self) -> usize {
        self.max_depth.clamp(1, HARD_MAX_DEPTH)
    }
}

/// The settings every format verifies under: where trusted keys come from,
/// the algorithm allow-list, the clock and its tolerated skew, the replay
/// store, the size limits, strict low-S and the JWS key-header rule. Built by
/// `VerifierBuilder` (it has no constructor of its own, so every field has
/// passed the builder's defaults) and read through `Verifier::context`.
#[derive(Clone, Debug)]
pub struct Context {
    pub(crate) keys: Arc<dyn KeyResolver>,
    pub(crate) algorithms: AllowList,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) replay: Option<Arc<dyn ReplayStore>>,
    pub(crate) limits: Limits,
    pub(crate) skew: u64,
    pub(crate) low_s: bool,
    pub(crate) key_headers: KeyHeaderPolicy,
    pub(crate) internal_endpoints: bool,
}

impl Context {
    /// The default settings over `keys`: the asymmetric algorithms, the
    /// system clock, 60 s skew, no replay store, default limits, high-S
    /// accepted, key headers refused.
    pub(crate) fn new(keys: Arc<dyn KeyResolver>) -> Context {
        Context {
            keys,
            algorithms: AllowList::asymmetric(),
            clock: Arc::new(crate::clock::SystemClock),
            replay: None,
            limits: Limits::default(),
            skew: DEFAULT_SKEW,
            low_s: false,
            key_headers: KeyHeaderPolicy::Refuse,
            internal_endpoints: false,
        }
    }
    /// Whether endpoints on internal hosts (loopback, private,
    /// link-local) in the documents checked are accepted, as for a local
    /// trial ([`VerifierBuilder::allow_internal_endpoints`](crate::verifier::VerifierBuilder::allow_internal_endpoints)).
    pub fn internal_endpoints(&self) -> bool {
        self.internal_endpoints
    }
    /// The key resolver.
    pub fn keys(&self) -> &dyn KeyResolver {
        &*self.keys
    }
    /// The algorithm allow-list.
    pub fn algorithms(&self) -> &AllowList {
        &self.algorithms
    }
    /// The clock.
    pub fn clock(&self) -> &dyn Clock {
        &*self.clock
    }
    /// The current time by the clock, seconds since the Unix epoch.
    pub fn now(&self) -> i64 {
        self.clock.now()
    }
    /// The replay store, if any.
    pub fn replay_store(&self) -> Option<&dyn ReplayStore> {
        self.replay.as_deref()
    }
    /// The size limits.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }
    /// The tolerated clock skew in seconds.
    pub fn skew(&self) -> u64 {
        self.skew
    }
    /// The skew as a signed number of seconds.
    pub(crate) fn skew_i64(&self) -> i64 {
        i64::try_from(self.skew).unwrap_or(i64::MAX)
    }
    /// Whether ECDSA signatures must be in low-S form.
    pub fn strict_low_s(&self) -> bool {
        self.low_s
    }
    /// What to do with JWS key headers.
    pub fn key_headers(&self) -> KeyHeaderPolicy {
        self.key_headers
    }
}

/// What one signature contributes to a verdict, under
/// [`signatures_verified`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignatureStatus {
    /// Verified with a trusted key.
    Verified,
    /// Not checked: no trusted key matches it (an unknown `kid` or
    /// `keyid`), or (a JWS signature) policy refused it before any
    /// cryptography (an algorithm not allowed, a `crit` not understood), so
    /// nothing was verified either way.
    NotChecked,
    /// Checked and failed: a trusted key was tried and the signature does
    /// not verify with it, or (RFC 9421) what it covers does not hold (an
    /// expired signature, a `Content-Digest` that does not match the body).
    Invalid,
}

/// The one verdict rule for a document carrying several signatures, in
/// every mode (a file, a URL, a batch, an agent resolved through its
/// `agents.json` catalog) and for every kind (the
/// signatures of a general JWS, the embedded signatures of an A2A Agent
/// Card, the RFC 9421 response signature beside the detached JWS or the
/// card signatures of a descriptor served over HTTP): **verified when at
/// least one signature verified and none is invalid**. A signature by a key
/// that is not trusted is not checked and counts neither way (RFC 7515
/// section 7.2.1: an application decides which signatures must verify;
/// the A2A specification section 8.4 verifies a card by any trusted
/// signature). A caller that needs one particular signature (the response
/// signature of a URL) demands it on top of this rule.
///
/// ```
/// use agentsig::policy::{signatures_verified, SignatureStatus::*};
/// assert!(signatures_verified([Verified, NotChecked]));
/// assert!(!signatures_verified([Verified, Invalid]));
/// assert!(!signatures_verified([NotChecked]));
/// assert!(!signatures_verified([]));
/// ```
pub fn signatures_verified(statuses: impl IntoIterator<Item = SignatureStatus>) -> bool {
    let (mut any, mut bad) = (false, false);
    for s in statuses {
        match s {
            SignatureStatus::Verified => any = true,
            SignatureStatus::Invalid => bad = true,
            SignatureStatus::NotChecked => {}
        }
    }
    any && !bad
}
