//! The one verifier configuration shared by every format: detached JWS and
//! descriptors ([`crate::jws`], [`crate::descriptor`]), JWT and delegation
//! audits ([`crate::jwt`], [`crate::delegation`]) and RFC 9421 messages
//! ([`crate::httpsig`]).
//!
//! A [`Verifier`] is owned, `Clone` (cheaply: its parts are behind `Arc`),
//! `Send + Sync`: build it once with [`Verifier::builder`] and share it
//! between threads, requests and a tower layer, as rustls shares a
//! `ClientConfig`.
//!
//! # Security contract
//! * Keys come only from the [`KeyResolver`]; algorithms only from the
//!   [`AllowList`] (default: the asymmetric algorithms; HMAC must be named).
//! * Every `verify` returns `Ok` only when something verified; a report of
//!   nothing verified is an `Err` that still carries the report.
//! * Time is the [`Clock`]'s; the tolerated skew is explicit (default 60 s),
//!   and so is the largest signature age (per format policy).
//! * With a [`ReplayStore`], JWT `jti` and RFC 9421 `nonce` are recorded
//!   only after everything else verified; a store that fails refuses.
//!
//! ```
//! use agentsig::trust::{KeySource, StaticKeys};
//! use agentsig::verifier::Verifier;
//! use agentsig::{descriptor, Algorithm, SigningKey};
//!
//! let key = SigningKey::generate(Algorithm::EcdsaP256Sha256).unwrap();
//! let doc = br#"{"name":"planner","version":"1.0.0"}"#;
//! let signed = descriptor::sign(doc, &[&key], Default::default(), &Default::default()).unwrap();
//!
//! let verifier = Verifier::builder(StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned)).build();
//! let report = verifier.verify_descriptor(doc, &signed.jws).unwrap();
//! assert!(report.verified());
//! ```

use crate::alg::AllowList;
use crate::clock::{Clock, SystemClock};
use crate::jws::{JwsPolicy, KeyHeaderPolicy};
use crate::jwt::JwtPolicy;
use crate::replay::ReplayStore;
use crate::trust::KeyResolver;
use std::sync::Arc;

/// Default tolerated clock difference, in seconds.
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
            max_document_bytes: crate::json::Limits::default().max_bytes,
            max_jws_bytes: crate::jws::MAX_JWS_BYTES,
            max_jwt_bytes: crate::jwt::DEFAULT_MAX_JWT_BYTES,
        }
    }
}

/// The verifier configuration (see the module documentation).
#[derive(Clone, Debug)]
#[must_use]
pub struct Verifier {
    pub(crate) keys: Arc<dyn KeyResolver>,
    pub(crate) algorithms: AllowList,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) replay: Option<Arc<dyn ReplayStore>>,
    pub(crate) limits: Limits,
    pub(crate) skew: u64,
    pub(crate) low_s: bool,
    pub(crate) key_headers: KeyHeaderPolicy,
    pub(crate) jws: JwsPolicy,
    pub(crate) jwt: JwtPolicy,
    pub(crate) http: crate::httpsig::HttpPolicy,
    pub(crate) audit: crate::delegation::AuditPolicy,
}

/// Builds a [`Verifier`]; every setting has a secure default.
#[derive(Clone, Debug)]
#[must_use]
pub struct VerifierBuilder {
    v: Verifier,
}

impl Verifier {
    /// Start a verifier that trusts the keys of `keys`.
    pub fn builder(keys: impl KeyResolver + 'static) -> VerifierBuilder {
        Verifier::builder_arc(Arc::new(keys))
    }

    /// Start a verifier from a shared resolver.
    pub fn builder_arc(keys: Arc<dyn KeyResolver>) -> VerifierBuilder {
        VerifierBuilder {
            v: Verifier {
                keys,
                algorithms: AllowList::asymmetric(),
                clock: Arc::new(SystemClock),
                replay: None,
                limits: Limits::default(),
                skew: DEFAULT_SKEW,
                low_s: false,
                key_headers: KeyHeaderPolicy::Refuse,
                jws: JwsPolicy::default(),
                jwt: JwtPolicy::default(),
                http: crate::httpsig::HttpPolicy::default(),
                audit: crate::delegation::AuditPolicy::default(),
            },
        }
    }

    /// A builder holding this verifier's settings, to derive a variant.
    pub fn to_builder(&self) -> VerifierBuilder {
        VerifierBuilder { v: self.clone() }
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
    /// The current time by the verifier's clock.
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
    /// The JWS policy.
    pub fn jws_policy(&self) -> &JwsPolicy {
        &self.jws
    }
    /// The JWT policy.
    pub fn jwt_policy(&self) -> &JwtPolicy {
        &self.jwt
    }
    /// The RFC 9421 policy.
    pub fn http_policy(&self) -> &crate::httpsig::HttpPolicy {
        &self.http
    }
    /// The delegation audit policy.
    pub fn audit_policy(&self) -> &crate::delegation::AuditPolicy {
        &self.audit
    }

    /// Verify a JWS; see [`crate::jws::verify`].
    pub fn verify_jws(
        &self,
        jws: &str,
        detached: Option<&[u8]>,
    ) -> Result<crate::jws::JwsReport, crate::jws::JwsVerifyError> {
        crate::jws::verify(self, jws, detached)
    }

    /// Verify a descriptor against its detached JWS; see
    /// [`crate::descriptor::verify`].
    pub fn verify_descriptor(
        &self,
        descriptor: &[u8],
        jws: &str,
    ) -> Result<crate::descriptor::Report, crate::descriptor::DescriptorError> {
        crate::descriptor::verify(self, descriptor, jws)
    }

    /// Verify a JWT; see [`crate::jwt::verify`].
    pub fn verify_jwt(&self, token: &str) -> Result<crate::jwt::VerifiedJwt, crate::jwt::JwtError> {
        crate::jwt::verify(self, token)
    }

    /// Audit a delegation chain (RFC 8693): one token, or a bundle of
    /// tokens, one per hop, subject token first. Each token is verified as a
    /// JWT under [`Verifier::jwt_policy`] (the audience is checked on the
    /// last hop only); the chain under [`Verifier::audit_policy`].
    ///
    /// # Errors
    /// [`AuditError`](crate::delegation::AuditError), carrying the full
    /// report, when any check of severity error failed (or of severity
    /// warning, with [`AuditPolicy::deny_warnings`](crate::delegation::AuditPolicy::deny_warnings)):
    /// a bad signature, an untrusted key, an expired token, a broken
    /// linkage, a widened scope, a replayed `jti`, ...
    ///
    /// # Example
    ///
    /// ```
    /// use agentsig::delegation::mint::{mint, ActorSpec, MintRequest};
    /// use agentsig::jwt::{FixedClock, JwtPolicy};
    /// use agentsig::trust::{KeySource, StaticKeys};
    /// use agentsig::verifier::Verifier;
    /// use agentsig::{Algorithm, SigningKey};
    ///
    /// let now = 1_760_000_000;
    /// let key = SigningKey::generate(Algorithm::EcdsaP256Sha256)?;
    /// let mut req = MintRequest::new("https://as.example.com", "alice", now, 300);
    /// req.scope = Some("calendar.read".into());
    /// req.actors = vec![ActorSpec::new("agent-1")];
    /// let token = mint(&req, &key)?;
    ///
    /// let keys = StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned);
    /// let v = Verifier::builder(keys).clock(FixedClock(now)).build();
    /// let report = v.audit_delegation(&[&token])?;
    /// assert_eq!(report.hops[0].current_actor().map(|a| a.sub.as_str()), Some("agent-1"));
    ///
    /// // A tampered token fails: the error carries the report.
    /// let bad = format!("{token}x");
    /// let err = v.audit_delegation(&[&bad]).unwrap_err();
    /// assert!(!err.report.passed());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn audit_delegation(
        &self,
        tokens: &[&str],
    ) -> Result<crate::delegation::AuditReport, crate::delegation::AuditError> {
        crate::delegation::audit(tokens, self)
    }

    /// Verify the RFC 9421 signatures of a message; see
    /// [`crate::httpsig::verify()`].
    pub fn verify_http(
        &self,
        msg: &crate::httpsig::Message,
        related: Option<&crate::httpsig::Message>,
    ) -> Result<crate::httpsig::VerifyReport, crate::httpsig::HttpSigError> {
        crate::httpsig::verify(self, msg, related)
    }
}

impl VerifierBuilder {
    /// The algorithms accepted (default: every asymmetric algorithm).
    pub fn algorithms(mut self, allowed: AllowList) -> Self {
        self.v.algorithms = allowed;
        self
    }
    /// The clock (default: the system clock).
    pub fn clock(mut self, clock: impl Clock + 'static) -> Self {
        self.v.clock = Arc::new(clock);
        self
    }
    /// A replay store for JWT `jti` and RFC 9421 `nonce` (default: none).
    pub fn replay_store(mut self, store: Arc<dyn ReplayStore>) -> Self {
        self.v.replay = Some(store);
        self
    }
    /// Size limits.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.v.limits = limits;
        self
    }
    /// Tolerated clock skew in seconds (default 60).
    pub fn skew(mut self, seconds: u64) -> Self {
        self.v.skew = seconds;
        self
    }
    /// Refuse ECDSA signatures whose `s` is above n/2 (default: accept, as
    /// JOSE and RFC 9421 peers emit both forms; see docs/jws.md).
    pub fn strict_low_s(mut self, on: bool) -> Self {
        self.v.low_s = on;
        self
    }
    /// What to do when a JWS offers `jku`/`jwk`/`x5u`/`x5c`/`x5t` (default:
    /// refuse; keys never come from them either way).
    pub fn key_headers(mut self, p: KeyHeaderPolicy) -> Self {
        self.v.key_headers = p;
        self
    }
    /// The JWS and descriptor policy.
    pub fn jws(mut self, p: JwsPolicy) -> Self {
        self.v.jws = p;
        self
    }
    /// The JWT policy.
    pub fn jwt(mut self, p: JwtPolicy) -> Self {
        self.v.jwt = p;
        self
    }
    /// The RFC 9421 policy.
    pub fn http(mut self, p: crate::httpsig::HttpPolicy) -> Self {
        self.v.http = p;
        self
    }
    /// The delegation audit policy (default: [`AuditPolicy::default`](crate::delegation::AuditPolicy)).
    pub fn audit(mut self, p: crate::delegation::AuditPolicy) -> Self {
        self.v.audit = p;
        self
    }
    /// The verifier.
    pub fn build(self) -> Verifier {
        self.v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync_clone<T: Send + Sync + Clone + 'static>() {}

    #[test]
    fn verifier_is_shareable() {
        assert_send_sync_clone::<Verifier>();
    }
}
