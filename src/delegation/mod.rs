//! Delegation-chain audit for RFC 8693 token exchange (draft-narvaneni-agent-uri-03 section 10.2).
//!
//! # Order of actors
//! RFC 8693 section 4.1: "the outermost `act` claim is the current actor,
//! and the most deeply nested `act` claim is the least recent actor". draft-narvaneni-agent-uri-03
//! section 10.2 calls the inner `act` "downstream"; that contradicts the
//! RFC, and agentsig follows the RFC. [`Actor`] lists are kept in
//! chronological order: index 0 is the least recent (deepest) actor, the last
//! is the current (outermost) actor.
//!
//! # What one token can prove
//! RFC 8693 section 4.1 makes nested `act` claims informational history
//! asserted by one issuer ("Prior actors ... are informational only"). One
//! token cannot prove per-hop narrowing unless its actors carry their own
//! (non-standard) `scope`; agentsig checks that when present and reports the
//! prior actors as *asserted*. Only a bundle of tokens, one per hop, each
//! signed and verified, is *verified* evidence: an audit of several
//! tokens checks linkage, alignment, `may_act`, narrowing, time nesting and
//! `jti` uniqueness across hops (draft-narvaneni-agent-uri-03 section 10.2: RFC 8693 nested
//! `act`, monotonic scope narrowing).
//!
//! # Scope policy
//! See [`scope`]: set inclusion by default, a documented hierarchical mode,
//! a missing scope is never unconstrained, uncomparable scopes are rejected.

mod bundle;
mod chain;
pub mod mint;
pub mod report;
pub mod scope;

use crate::jwt::KeyEvidence;
use crate::policy::{Context, JwtPolicy};

pub use crate::policy::{
    AuditPolicy, Severity, DEFAULT_MAX_DEPTH, DELEGATION_TYP as DEFAULT_TYP, HARD_MAX_DEPTH,
    MAX_HOPS,
};
use serde_json::{Map, Value};

pub use scope::{Scope, ScopeMode, ScopePolicy};

/// One check: a stable `code` naming the hazard checked for, its severity
/// when it fails, and the result (`passed` = the hazard is absent).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Check {
    /// Stable machine-readable code of the hazard, e.g. `"bundle.empty"`.
    pub code: &'static str,
    /// How bad a failure is ([`Severity::Info`] for a pass).
    pub severity: Severity,
    /// `true` when the hazard is absent.
    pub passed: bool,
    /// The hop (token index) it applies to, if any.
    pub hop: Option<usize>,
    /// Human-readable detail.
    pub message: String,
}

/// Collects checks.
#[derive(Clone, Debug, Default)]
pub(crate) struct Checks(pub(crate) Vec<Check>);

impl Checks {
    /// Record a passed check.
    pub fn pass(&mut self, code: &'static str, hop: Option<usize>, msg: impl Into<String>) {
        self.0.push(Check {
            code,
            severity: Severity::Info,
            passed: true,
            hop,
            message: msg.into(),
        });
    }
    /// Record a failed check of `severity`.
    pub fn fail(
        &mut self,
        code: &'static str,
        severity: Severity,
        hop: Option<usize>,
        msg: impl Into<String>,
    ) {
        self.0.push(Check {
            code,
            severity,
            passed: false,
            hop,
            message: msg.into(),
        });
    }
    /// Record a failed check of severity [`Severity::Error`].
    pub fn error(&mut self, code: &'static str, hop: Option<usize>, msg: impl Into<String>) {
        self.fail(code, Severity::Error, hop, msg)
    }
    /// Record a failed check of severity [`Severity::Warning`].
    pub fn warn(&mut self, code: &'static str, hop: Option<usize>, msg: impl Into<String>) {
        self.fail(code, Severity::Warning, hop, msg)
    }
    /// Record `ok` as a pass, else as a failure of `severity`.
    pub fn check(
        &mut self,
        ok: bool,
        code: &'static str,
        severity: Severity,
        hop: Option<usize>,
        msg: impl Into<String>,
    ) {
        if ok {
            self.pass(code, hop, msg)
        } else {
            self.fail(code, severity, hop, msg)
        }
    }
}

/// An actor (one level of `act`, RFC 8693 section 4.1).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Actor {
    /// The actor's `sub`.
    pub sub: String,
    /// The actor's `iss`, if the level has one.
    pub iss: Option<String>,
    /// The level's members other than the nested `act`.
    pub members: Map<String, Value>,
}

impl Actor {
    /// The identity `(iss, sub)`; without `iss`, the actor is named in the
    /// token issuer's namespace.
    pub fn identity<'a>(&'a self, token_iss: Option<&'a str>) -> (Option<&'a str>, &'a str) {
        (self.iss.as_deref().or(token_iss), self.sub.as_str())
    }
}

/// One token of the audit, as read and checked.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Hop {
    /// Position of the token in the bundle (0: the subject token).
    pub index: usize,
    /// Header and claims, when the token could be decoded.
    pub header: Map<String, Value>,
    /// The JWT claims set (empty when the token could not be decoded).
    pub claims: Map<String, Value>,
    /// The token decoded as a JWT (its signature may still have failed).
    pub decoded: bool,
    /// The signature verified with a trusted key.
    pub evidence: Option<KeyEvidence>,
    /// Actors in chronological order (least recent first; RFC 8693 4.1).
    pub actors: Vec<Actor>,
    /// The token's `scope` claim, parsed (`None` when absent or malformed).
    pub scope: Option<Scope>,
    /// Relative to the previous hop (bundle only).
    pub scope_removed: Vec<String>,
    /// Scope values this hop holds that the previous one did not (a widening).
    pub scope_added: Vec<String>,
}

impl Hop {
    /// The claim `name` when it is a string.
    pub fn str_claim(&self, name: &str) -> Option<&str> {
        self.claims.get(name).and_then(Value::as_str)
    }
    /// The claim `name` as a NumericDate, seconds since the Unix epoch
    /// (RFC 7519 section 2).
    pub fn time(&self, name: &str) -> Option<i64> {
        crate::jwt::numeric_date(&self.claims, name)
    }
    /// Start of validity: `nbf`, else `iat`.
    pub fn start(&self) -> Option<i64> {
        self.time("nbf").or_else(|| self.time("iat"))
    }
    /// The current actor: the outermost `act` (RFC 8693 section 4.1).
    pub fn current_actor(&self) -> Option<&Actor> {
        self.actors.last()
    }
}

/// The result of an audit.
#[derive(Clone, Debug)]
#[non_exhaustive]
#[must_use]
pub struct AuditReport {
    /// Every token, in bundle order.
    pub hops: Vec<Hop>,
    /// Every check made, passed or failed.
    pub checks: Vec<Check>,
    /// Intersection of the hops' scopes (None when a scope is unusable).
    pub effective_scope: Option<Scope>,
    /// `[latest start, earliest exp]`.
    pub effective_window: (Option<i64>, Option<i64>),
    /// The time the audit ran at, seconds since the Unix epoch.
    pub now: i64,
    /// The scope comparison mode used.
    pub scope_mode: ScopeMode,
    /// The depth bound applied (see [`AuditPolicy::depth_bound`]).
    pub max_depth: usize,
    /// Whether a failed warning fails the audit ([`AuditPolicy::deny_warnings`]).
    pub deny_warnings: bool,
}

impl AuditReport {
    /// No failed check of severity error (nor of severity warning when the
    /// policy denies warnings).
    pub fn passed(&self) -> bool {
        !self.checks.iter().any(|c| {
            !c.passed
                && (c.severity == Severity::Error
                    || (self.deny_warnings && c.severity == Severity::Warning))
        })
    }
    /// The codes of failed checks (any severity).
    pub fn failed_codes(&self) -> Vec<&'static str> {
        self.checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| c.code)
            .collect()
    }
}

/// A delegation audit that did not pass: the report says every check made
/// and which failed ([`AuditReport::failed_codes`]).
#[derive(Clone, Debug, thiserror::Error)]
#[error("delegation audit failed: {}", .report.failed_codes().join(", "))]
pub struct AuditError {
    /// The full report.
    pub report: Box<AuditReport>,
}

impl AuditError {
    /// The report, for printing it.
    pub fn into_report(self) -> AuditReport {
        *self.report
    }
}

/// Audit one token (single-token audit) or a bundle of tokens, one per hop,
/// subject token first, under the verifier's keys, JWT policy and
/// [`AuditPolicy`]. The one way in is [`Verifier::audit_delegation`](crate::verifier::Verifier::audit_delegation).
pub(crate) fn audit(
    cx: &Context,
    jwt: &JwtPolicy,
    policy: &AuditPolicy,
    tokens: &[&str],
) -> Result<AuditReport, AuditError> {
    let report = bundle::audit(tokens, cx, jwt, policy);
    if report.passed() {
        Ok(report)
    } else {
        Err(AuditError {
            report: Box::new(report),
        })
    }
}
