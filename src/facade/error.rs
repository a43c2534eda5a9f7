//! The one classification of a failed call: which typed error a binding
//! raises ([`ErrorKind`]), with the stable code of `docs/report.md` and, for
//! a verification, the report.

use crate::report::Report;

/// What kind of failure a call ended in: each binding raises one error
/// class per kind (Python `agentsig.NotVerified`..., Node.js the same
/// names), all of them subclasses of `AgentsigError`. The names
/// ([`ErrorKind::name`]) are stable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Something checked did not verify: a signature that does not match,
    /// no trusted key, a malformed signature... (CLI exit 1).
    NotVerified,
    /// The signature may be genuine, but the verifier's policy refused it:
    /// too old, expired, replayed, an algorithm not allowed, a required
    /// component not covered, a widened delegation scope (CLI exit 1).
    PolicyRefused,
    /// Keys needed for the verification could not be fetched: the network,
    /// TLS, the SSRF guard, the HTTP exchange, too many fetches under way
    /// (CLI exit 1; `docs/web-bot-auth.md`, "the fetch").
    FetchError,
    /// A key that cannot be used: unparsable PEM or JWK, a shared secret
    /// where a public key is needed, a JWK Set with no usable key.
    BadKey,
    /// The input cannot be read or the call was misused: too large, not
    /// strict JSON, a malformed HTTP message, a wrong option (CLI exit 2).
    BadInput,
}

impl ErrorKind {
    /// The name of the error class the bindings raise for this kind
    /// (`"NotVerified"`, `"PolicyRefused"`, `"FetchError"`, `"BadKey"`,
    /// `"BadInput"`).
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::NotVerified => "NotVerified",
            ErrorKind::PolicyRefused => "PolicyRefused",
            ErrorKind::FetchError => "FetchError",
            ErrorKind::BadKey => "BadKey",
            ErrorKind::BadInput => "BadInput",
        }
    }

    /// Whether a failure of this kind carries a report (it is a verdict,
    /// not a misuse): `NotVerified`, `PolicyRefused` and `FetchError`.
    pub fn is_verdict(self) -> bool {
        matches!(
            self,
            ErrorKind::NotVerified | ErrorKind::PolicyRefused | ErrorKind::FetchError
        )
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A failed call: its [`ErrorKind`], the stable code (`docs/report.md`),
/// the message, and the report when the call was a verification.
///
/// ```
/// use agentsig::facade::{ErrorKind, Failure};
/// use agentsig::report::{Report, Verdict};
///
/// let mut r = Report::error("http verify", None, "expired", "the signature expired");
/// r.set_verdict(Verdict::NotVerified);
/// let f = Failure::not_verified(r);
/// assert_eq!(f.kind, ErrorKind::PolicyRefused);
/// assert_eq!(f.code, "expired");
/// assert_eq!(f.message, "http verify: not verified: the signature expired");
/// assert!(f.report.is_some());
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Failure {
    /// Which error class.
    pub kind: ErrorKind,
    /// The stable code: the report's `error.code`, or `input.malformed`,
    /// `input.unreadable`, `usage`, `key.unusable`, `internal`.
    pub code: String,
    /// What failed and what to do about it.
    pub message: String,
    /// The report of a verification that did not verify.
    pub report: Option<Box<Report>>,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.kind, self.code, self.message)
    }
}

impl std::error::Error for Failure {}

/// A result whose error is a [`Failure`].
pub type Outcome<T> = Result<T, Failure>;

impl Failure {
    /// Bad input with `code` (`input.malformed`, `input.unreadable`,
    /// `usage`, `internal`).
    pub fn bad_input(code: &str, message: impl Into<String>) -> Failure {
        Failure {
            kind: ErrorKind::BadInput,
            code: code.to_owned(),
            message: message.into(),
            report: None,
        }
    }

    /// Input that is not what it claims to be (`input.malformed`).
    pub fn malformed(message: impl Into<String>) -> Failure {
        Failure::bad_input("input.malformed", message)
    }

    /// `what` of `n` bytes is above the `max`-byte bound (`input.unreadable`,
    /// the code of the CLI's bound on any input).
    pub fn too_large(what: &str, n: usize, max: usize) -> Failure {
        Failure::bad_input(
            "input.unreadable",
            format!("{what} of {n} bytes is larger than the {max}-byte bound"),
        )
    }

    /// A misused call: a wrong or contradictory option (`usage`).
    pub fn usage(message: impl Into<String>) -> Failure {
        Failure::bad_input("usage", message)
    }

    /// A key that cannot be used (`key.unusable`).
    pub fn bad_key(message: impl Into<String>) -> Failure {
        Failure {
            kind: ErrorKind::BadKey,
            code: "key.unusable".into(),
            message: message.into(),
            report: None,
        }
    }

    /// A report that did not verify, classified by [`classify`]: its code
    /// is the report's `error.code` (`failed` when it has none).
    pub fn not_verified(report: Report) -> Failure {
        let (code, message) = match &report.error {
            Some(p) => (p.code.clone(), p.message.clone()),
            None => ("failed".to_owned(), "nothing verified".to_owned()),
        };
        Failure {
            kind: classify(&report),
            message: format!("{}: not verified: {message}", report.command),
            code,
            report: Some(Box::new(report)),
        }
    }
}

/// `report` when it verified, else the [`Failure`] it is
/// ([`Failure::not_verified`]).
///
/// # Errors
/// The [`Failure`] of a report that did not verify.
pub fn settle(report: Report) -> Outcome<Report> {
    settle_accepting(report, false)
}

/// [`settle`], with `accept_unsigned`: a report whose verdict is
/// [`Verdict::Unsigned`](crate::report::Verdict::Unsigned) (nothing
/// failed, no trusted key vouches) is returned, not raised: the caller's
/// policy accepts unsigned documents (the command line's
/// `--allow-unsigned`). It stays `unsigned`, `verified` false.
///
/// # Errors
/// The [`Failure`] of a report that did not verify and is not accepted.
pub fn settle_accepting(report: Report, accept_unsigned: bool) -> Outcome<Report> {
    if report.verdict.exit_code(accept_unsigned) == 0 {
        Ok(report)
    } else {
        Err(Failure::not_verified(report))
    }
}

/// Codes of a Web Bot Auth key directory that could not be fetched
/// (`DirectoryError::code`): the network, TLS, the SSRF guard, the HTTP
/// exchange, or too many directory fetches under way (`directory-busy`);
/// and a catalog whose document could not be fetched (`fetch.failed`).
/// Each is a [`ErrorKind::FetchError`]; a directory fetched and refused for
/// its content stays [`ErrorKind::NotVerified`].
pub const FETCH_CODES: [&str; 8] = [
    "directory-busy",
    "directory-fetch-failed",
    "directory-refused",
    "directory-redirect",
    "directory-status",
    "directory-too-large",
    "directory-timeout",
    "fetch.failed",
];

/// Codes of policy refusals, beyond any signature whose verdict is
/// `refused` (`docs/report.md`): the signature may be genuine, but the
/// verifier's policy does not accept it (too old, expired, replayed, an
/// algorithm not allowed, a widened delegation scope...).
pub const POLICY_CODES: [&str; 14] = [
    "alg-not-allowed",
    "algorithm-not-allowed",
    "too-old",
    "expired",
    "created-in-future",
    "replay",
    "tag-mismatch",
    "required-component-not-covered",
    "request-target-not-covered",
    "typ-mismatch",
    "key-header-offered",
    "jwt.expired",
    "jwt.replay",
    "exchange.scope-widened",
];

/// Is `code` a policy code: one of [`POLICY_CODES`], by its last part for
/// namespaced delegation codes (`jwt.alg-not-allowed`, `act.scope-widened`),
/// or any replay or widening refusal.
pub fn is_policy_code(code: &str) -> bool {
    POLICY_CODES.contains(&code)
        || POLICY_CODES.contains(&code.rsplit('.').next().unwrap_or(code))
        || code.contains("replay")
        || code.contains("widen")
}

/// The kind of a report that did not verify: [`ErrorKind::FetchError`] for
/// a fetch failure ([`FETCH_CODES`]); [`ErrorKind::PolicyRefused`] when no
/// signature is `invalid` (unless the first reason is itself a policy code)
/// and either the first reason has a policy code ([`is_policy_code`]) or a
/// signature was `refused`; else [`ErrorKind::NotVerified`].
pub fn classify(report: &Report) -> ErrorKind {
    let code = report.error.as_ref().map_or("", |e| e.code.as_str());
    if FETCH_CODES.contains(&code) || report.verdict == crate::report::Verdict::Unavailable {
        return ErrorKind::FetchError;
    }
    let policy = is_policy_code(code);
    if report.signatures.iter().any(|s| s.verdict == "invalid") && !policy {
        return ErrorKind::NotVerified;
    }
    if policy || report.signatures.iter().any(|s| s.verdict == "refused") {
        ErrorKind::PolicyRefused
    } else {
        ErrorKind::NotVerified
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Verdict;

    fn failed(code: &str) -> Report {
        let mut r = Report::error("verify", None, code, "why");
        r.set_verdict(Verdict::NotVerified);
        r
    }

    #[test]
    fn fetch_codes_are_fetch_errors() {
        for c in FETCH_CODES {
            assert_eq!(classify(&failed(c)), ErrorKind::FetchError, "{c}");
        }
        // Fetched, then refused for its content: not a fetch failure.
        assert_eq!(
            classify(&failed("directory-malformed")),
            ErrorKind::NotVerified
        );
    }

    #[test]
    fn policy_codes_are_policy_refusals_even_namespaced() {
        for c in [
            "expired",
            "too-old",
            "jwt.alg-not-allowed",
            "act.scope-widened",
            "nonce-replay",
        ] {
            assert_eq!(classify(&failed(c)), ErrorKind::PolicyRefused, "{c}");
        }
        assert_eq!(classify(&failed("bad-signature")), ErrorKind::NotVerified);
        assert_eq!(
            classify(&failed("catalog.not-verified")),
            ErrorKind::NotVerified
        );
    }

    #[test]
    fn an_invalid_signature_outranks_a_refused_one() {
        let sig = |verdict: &'static str| crate::report::SignatureResult {
            kind: "http-message-signature",
            id: "sig1".into(),
            verdict,
            algorithm: None,
            kid: None,
            key: None,
            covered: Vec::new(),
            created: None,
            expires: None,
            reason: None,
        };
        let mut r = failed("signature-invalid");
        r.signatures = vec![sig("refused"), sig("invalid")];
        assert_eq!(classify(&r), ErrorKind::NotVerified);
        r.signatures = vec![sig("refused")];
        assert_eq!(classify(&r), ErrorKind::PolicyRefused);
        // A policy code is a refusal whatever the signatures say.
        let mut r = failed("expired");
        r.signatures = vec![sig("invalid")];
        assert_eq!(classify(&r), ErrorKind::PolicyRefused);
    }

    #[test]
    fn settle_keeps_a_verified_report_and_names_the_kind() {
        let mut ok = Report::done("verify", None);
        ok.set_verdict(Verdict::Verified);
        assert!(settle(ok).is_ok());
        let f = settle(failed("expired")).unwrap_err();
        assert_eq!(f.kind.name(), "PolicyRefused");
        assert!(f.kind.is_verdict() && !ErrorKind::BadKey.is_verdict());
        assert_eq!(
            f.to_string(),
            "PolicyRefused (expired): verify: not verified: why"
        );
    }
}
