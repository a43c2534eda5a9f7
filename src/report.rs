//! One report shape for every verdict: detached JWS and descriptors, RFC 9421
//! messages, saved responses and delegation audits, and for the commands
//! that produce rather than check (verdict [`Verdict::Done`], what they
//! produced in `details`). The CLI prints this under `--json` on every
//! command; the schema is documented in `docs/report.md` and written as a
//! JSON Schema (2020-12) in `docs/report.schema.json`.
//!
//! ```
//! use agentsig::report::{Report, Verdict};
//! let r = Report::error(
//!     "verify",
//!     Some("agent.json"),
//!     "input.unreadable",
//!     "agent.json: no such file",
//! );
//! assert_eq!(r.verdict, Verdict::Error);
//! let j = serde_json::to_value(&r).unwrap();
//! assert_eq!(j["verdict"], "error");
//! assert_eq!(j["error"]["code"], "input.unreadable");
//! assert_eq!(j["subject"], "agent.json");
//! ```

use crate::a2a::CardReport;
use crate::delegation::AuditReport;
use crate::httpsig::VerifyReport;
use crate::jws::JwsReport;
use crate::trust::KeySource;
use serde::Serialize;

/// The schema identifier every report carries.
pub const SCHEMA: &str = "agentsig.report/1";

/// The overall verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Verdict {
    /// Everything that was checked verified (exit 0).
    Verified,
    /// Something checked did not verify, or policy refused it (exit 1).
    NotVerified,
    /// The input could not be read or the command was misused (exit 2).
    Error,
    /// A command that produces rather than checks (`sign`, `keygen`,
    /// `canon`, `digest`, `delegation mint`, `pin add`...) did its work
    /// (exit 0); what it produced is in `details`.
    Done,
    /// Nothing failed, but no trusted key vouches for the content (or for
    /// some artifact in it): no signature at all, or only signatures by
    /// keys that are not trusted. `verified` is false. Exit 1 unless a
    /// policy accepts it (`verify --allow-unsigned`, or `resolve` without
    /// `--require-signed`: draft-narvaneni-agent-uri-03 section 10.3 lets
    /// a policy accept unsigned descriptors), then exit 0.
    Unsigned,
    /// The keys (or the content) needed could not be fetched, so nothing
    /// could be checked; `error` carries the fetch's reason (exit 1). Not
    /// a bad signature: the signatures are `not-checked`.
    Unavailable,
}

impl Verdict {
    /// The verdict as the report writes it (`verified`, `not-verified`,
    /// `error`, `done`, `unsigned`, `unavailable`).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Verified => "verified",
            Verdict::NotVerified => "not-verified",
            Verdict::Error => "error",
            Verdict::Done => "done",
            Verdict::Unsigned => "unsigned",
            Verdict::Unavailable => "unavailable",
        }
    }

    /// The exit code of this verdict (docs/report.md): 0 for `verified`
    /// and `done`, 2 for `error`, 1 otherwise; `unsigned` is 0 when
    /// `accept_unsigned` (the caller's policy accepts unsigned documents).
    pub fn exit_code(self, accept_unsigned: bool) -> u8 {
        match self {
            Verdict::Verified | Verdict::Done => 0,
            Verdict::Unsigned if accept_unsigned => 0,
            Verdict::Error => 2,
            _ => 1,
        }
    }
}

/// A code and a sentence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Problem {
    /// Stable machine-readable code.
    pub code: String,
    /// What happened, for people.
    pub message: String,
}

impl Problem {
    /// A problem.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Problem {
        Problem {
            code: code.into(),
            message: message.into(),
        }
    }
}

/// The key a signature was checked with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct KeyInfo {
    /// Where the key came from.
    pub source: KeySource,
    /// Its RFC 7638 thumbprint.
    pub thumbprint: Option<String>,
}

/// The result for one signature.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SignatureResult {
    /// `jws`, `http-message-signature` or `jwt`.
    pub kind: &'static str,
    /// Which signature: the JWS signature index, the RFC 9421 label, or the
    /// delegation hop index.
    pub id: String,
    /// `valid`, `invalid`, `refused`, `no-trusted-key`, or `not-checked`
    /// (the keys could not be fetched: not a bad signature).
    pub verdict: &'static str,
    /// The algorithm claimed or used.
    pub algorithm: Option<String>,
    /// The key id claimed (`kid`, `keyid`).
    pub kid: Option<String>,
    /// The key checked against, when one was.
    pub key: Option<KeyInfo>,
    /// Covered RFC 9421 components, as `name` plus `;param` (no quoting).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub covered: Vec<String>,
    /// `created` (Unix seconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created: Option<i64>,
    /// `expires` (Unix seconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires: Option<i64>,
    /// Why it is not valid.
    pub reason: Option<Problem>,
}

/// One check beyond signatures (a delegation rule, a body comparison).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct CheckResult {
    /// Stable code.
    pub code: String,
    /// `error`, `warning` or `info`.
    pub severity: &'static str,
    /// Whether it passed.
    pub passed: bool,
    /// The hop it concerns, in a delegation audit.
    pub hop: Option<usize>,
    /// The RFC 6901 JSON pointer of the value it concerns (`lint`; `""` is
    /// the document); absent for checks about no one value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// What was checked or found.
    pub message: String,
}

/// The report.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
#[must_use]
pub struct Report {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// The command or operation (`verify`, `http verify`, `delegation audit`,
    /// `keygen`...).
    pub command: String,
    /// What was checked (a file name, a URL, `-`).
    pub subject: Option<String>,
    /// The one verdict; exit codes and text output follow it.
    pub verdict: Verdict,
    /// `verdict == verified`, for convenience.
    pub verified: bool,
    /// One entry per signature examined.
    pub signatures: Vec<SignatureResult>,
    /// Other checks.
    pub checks: Vec<CheckResult>,
    /// Why the command failed with exit 2, or the first reason it did not verify.
    pub error: Option<Problem>,
    /// Operation-specific details (delegation hops, canonical digest...).
    #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
    pub details: serde_json::Map<String, serde_json::Value>,
}

impl Report {
    fn new(command: &str, subject: Option<&str>) -> Report {
        Report {
            schema: SCHEMA,
            command: command.to_owned(),
            subject: subject.map(str::to_owned),
            verdict: Verdict::NotVerified,
            verified: false,
            signatures: Vec::new(),
            checks: Vec::new(),
            error: None,
            details: serde_json::Map::new(),
        }
    }

    /// The report of a command that produced something (exit 0): verdict
    /// [`Verdict::Done`], no signature, no check; the caller puts what was
    /// produced in [`Report::details`].
    pub fn done(command: &str, subject: Option<&str>) -> Report {
        let mut r = Report::new(command, subject);
        r.set_verdict(Verdict::Done);
        r
    }

    /// A report for a command that could not run (exit 2).
    pub fn error(command: &str, subject: Option<&str>, code: &str, message: &str) -> Report {
        let mut r = Report::new(command, subject);
        r.verdict = Verdict::Error;
        r.error = Some(Problem::new(code, message));
        r
    }

    /// Set the verdict (and `verified`).
    pub fn set_verdict(&mut self, v: Verdict) {
        self.verdict = v;
        self.verified = v == Verdict::Verified;
    }

    /// Add a check.
    pub fn check(&mut self, code: &str, passed: bool, message: impl Into<String>) {
        self.checks.push(CheckResult {
            code: code.to_owned(),
            severity: "error",
            passed,
            hop: None,
            pointer: None,
            message: message.into(),
        });
    }

    /// Add a warning: reported, not counted against the verdict.
    pub fn warn(&mut self, code: &str, message: impl Into<String>) {
        self.checks.push(CheckResult {
            code: code.to_owned(),
            severity: "warning",
            passed: false,
            hop: None,
            pointer: None,
            message: message.into(),
        });
    }

    /// Add one failed check per `lint` finding, with its severity and JSON
    /// pointer (`lint`, and `sign`, which lints before signing).
    pub fn lint_findings(&mut self, findings: &[crate::formats::Finding]) {
        for f in findings {
            self.checks.push(CheckResult {
                code: f.code.to_owned(),
                severity: f.severity.as_str(),
                passed: false,
                hop: None,
                pointer: Some(f.pointer.clone()),
                message: f.message.clone(),
            });
        }
    }

    /// Add a detail.
    pub fn detail(&mut self, key: &str, value: impl Serialize) {
        self.details.insert(
            key.to_owned(),
            serde_json::to_value(value).unwrap_or(serde_json::Value::Null),
        );
    }

    /// Add a detail that is already a JSON value (no copy through the
    /// serializer).
    pub fn detail_value(&mut self, key: &str, value: serde_json::Value) {
        self.details.insert(key.to_owned(), value);
    }

    /// Recompute the verdict: verified when at least one signature or check
    /// exists, every signature is valid and no error-severity check failed.
    /// (A JWS with several signatures keeps its own rule; see
    /// [`Report::from_jws`].)
    pub fn settle(&mut self) {
        if matches!(
            self.verdict,
            Verdict::Error | Verdict::Done | Verdict::Unsigned | Verdict::Unavailable
        ) {
            return;
        }
        let sig_ok = self.signatures.iter().all(|s| s.verdict == "valid");
        let checks_ok = !self
            .checks
            .iter()
            .any(|c| !c.passed && c.severity == "error");
        let any = !self.signatures.is_empty() || !self.checks.is_empty();
        self.set_verdict(if any && sig_ok && checks_ok {
            Verdict::Verified
        } else {
            Verdict::NotVerified
        });
        if self.error.is_none() && !self.verified {
            self.error = self
                .signatures
                .iter()
                .find_map(|s| s.reason.clone())
                .or_else(|| {
                    self.checks
                        .iter()
                        .find(|c| !c.passed && c.severity == "error")
                        .map(|c| Problem::new(c.code.clone(), c.message.clone()))
                });
        }
    }

    /// The report of `lint`: one failed check per finding (with its
    /// severity and JSON pointer), the format facts in `details`
    /// (`format`, `media_type`, `well_known_path`). The verdict is
    /// `verified` when no finding is an error (warnings allowed), else
    /// `not-verified` with the first error as `error`.
    pub fn from_lint(subject: Option<&str>, r: &crate::formats::LintReport) -> Report {
        let mut out = Report::new("lint", subject);
        out.lint_findings(&r.findings);
        out.detail("format", r.format.name());
        out.detail("media_type", r.format.media_type());
        out.detail("well_known_path", r.format.well_known_path());
        out.error = r
            .errors()
            .next()
            .map(|f| Problem::new(f.code, f.message.clone()));
        out.set_verdict(if r.has_errors() {
            Verdict::NotVerified
        } else {
            Verdict::Verified
        });
        out
    }

    /// The report of a JWS (or a descriptor's detached JWS). The verdict is
    /// [`JwsReport::verified`]: one valid signature by a trusted key and none
    /// invalid; unknown signers do not fail a multi-signature JWS.
    pub fn from_jws(command: &str, subject: Option<&str>, r: &JwsReport) -> Report {
        let mut out = Report::new(command, subject);
        out.signatures = jws_signatures(r);
        out.set_verdict(if r.verified() {
            Verdict::Verified
        } else {
            Verdict::NotVerified
        });
        if !out.verified {
            out.error = out.signatures.iter().find_map(|s| s.reason.clone());
        }
        out
    }

    /// The report of an A2A Agent Card's embedded signatures
    /// ([`Verifier::verify_agent_card`](crate::verifier::Verifier::verify_agent_card)): one result per entry of `signatures`
    /// (`id` its index; an entry that is no JWS is `refused`), a warning per
    /// security-relevant member no signature covers
    /// (`a2a.uncovered-security`), and the details `rule` (`any`:
    /// [`CardReport::verified`]; `all`: [`CardReport::verified_all`]),
    /// `uncovered`, `converted_v03`, `payload_sha256` and `signed_card` (the
    /// normal form the signatures cover: act on it only).
    pub fn from_card(
        command: &str,
        subject: Option<&str>,
        r: &CardReport,
        require_all: bool,
    ) -> Report {
        let mut out = Report::new(command, subject);
        for (i, entry) in r.signatures.iter().enumerate() {
            match entry {
                Ok(j) => out
                    .signatures
                    .extend(jws_signatures(j).into_iter().map(|mut s| {
                        s.id = i.to_string();
                        s
                    })),
                Err(e) => out.signatures.push(SignatureResult {
                    kind: "jws",
                    id: i.to_string(),
                    verdict: "refused",
                    algorithm: None,
                    kid: None,
                    key: None,
                    covered: Vec::new(),
                    created: None,
                    expires: None,
                    reason: Some(Problem::new("malformed", e.to_string())),
                }),
            }
        }
        for u in r.uncovered_security() {
            out.warn(
                "a2a.uncovered-security",
                format!(
                    "{} ({}) is not covered by any signature: anyone can change it; act only on the signed card",
                    u.pointer, u.reason
                ),
            );
        }
        let uncovered: Vec<serde_json::Value> = r
            .uncovered
            .iter()
            .map(|u| {
                serde_json::json!({
                    "pointer": u.pointer,
                    "reason": u.reason,
                    "security": u.security,
                })
            })
            .collect();
        out.detail("rule", if require_all { "all" } else { "any" });
        out.detail("uncovered", uncovered);
        out.detail("converted_v03", r.converted_v03);
        out.detail("payload_sha256", crate::descriptor::sha256_hex(&r.payload));
        out.detail("signed_card", &r.card);
        let ok = if require_all {
            r.verified_all()
        } else {
            r.verified()
        };
        out.set_verdict(if ok {
            Verdict::Verified
        } else {
            Verdict::NotVerified
        });
        if !ok {
            out.error = out
                .signatures
                .iter()
                .find_map(|s| s.reason.clone())
                .or_else(|| {
                    Some(Problem::new(
                        "a2a.not-all-valid",
                        "--require-all: not every signature is valid under a trusted key",
                    ))
                });
        }
        out
    }

    /// The report of an RFC 9421 verification: one result per label, and
    /// for each label that covers `content-digest` a check of its own,
    /// `content-digest`, beside the signature's result: the signature
    /// covers the field, not the content (RFC 9421 section 7.2.8), so a
    /// body that does not match its Content-Digest (RFC 9530 section 2)
    /// fails that check while the signature itself is `valid`.
    pub fn from_http(command: &str, subject: Option<&str>, r: &VerifyReport) -> Report {
        let mut out = Report::new(command, subject);
        out.signatures = http_signatures(r);
        for l in &r.results {
            let covers_digest = l
                .covered
                .iter()
                .any(|c| unquote_component(c).split(';').next() == Some("content-digest"));
            match &l.outcome {
                Err(crate::httpsig::SigError::ContentDigest(e)) => out.checks.push(CheckResult {
                    code: "content-digest".to_owned(),
                    severity: "error",
                    passed: false,
                    hop: None,
                    pointer: None,
                    message: format!("signature {}: {e}", l.label),
                }),
                Ok(()) if covers_digest => out.checks.push(CheckResult {
                    code: "content-digest".to_owned(),
                    severity: "error",
                    passed: true,
                    hop: None,
                    pointer: None,
                    message: format!("signature {}: Content-Digest matches the content", l.label),
                }),
                _ => {}
            }
        }
        out.settle();
        if let Some(c) = out
            .checks
            .iter()
            .find(|c| !c.passed && c.code == "content-digest")
        {
            if out.error.as_ref().is_none_or(|e| e.code == c.code) {
                out.error = Some(Problem::new(c.code.clone(), c.message.clone()));
            }
        }
        out
    }

    /// The report of an AI Catalog verification: a check per lint error
    /// (`catalog.lint` counting them, each finding by its own code), per
    /// host Trust Manifest (`catalog.host-manifest`) and per entry
    /// (`catalog.entry`), with the per-entry results in `details.entries`;
    /// when anything failed, the error `catalog.not-verified` with the
    /// first reason. The one shape of `agentsig verify CATALOG --json` and
    /// of the bindings' `verify_catalog`.
    pub fn from_catalog(
        command: &str,
        subject: Option<&str>,
        r: &crate::catalog::CatalogReport,
    ) -> Report {
        use crate::catalog::Status;
        let mut rep = Report::done(command, subject);
        rep.set_verdict(Verdict::NotVerified);
        if let Some(u) = &r.url {
            // The URL whose bytes were checked (after same-origin redirects).
            rep.detail("checked_url", u);
        }
        let lint_errors = r.lint.iter().filter(|f| f.severity == "error").count();
        rep.check(
            "catalog.lint",
            lint_errors == 0,
            format!("AI Catalog lint: {lint_errors} error(s)"),
        );
        for f in &r.lint {
            if f.severity == "error" {
                rep.check(f.code, false, format!("{}: {}", f.pointer, f.message));
            } else {
                rep.warn(f.code, format!("{}: {}", f.pointer, f.message));
            }
        }
        if let Some(h) = &r.host {
            let ok = !matches!(h.status, Status::Failed | Status::Unsupported);
            rep.check("catalog.host-manifest", ok, h.message.clone());
        }
        if let Some(h) = &r.host_identity {
            let ok = !matches!(h.status, Status::Failed | Status::Unsupported);
            rep.check("catalog.host-identity", ok, h.message.clone());
        }
        for e in &r.entries {
            let what = format!(
                "{} {}: artifact {} ({}); manifest {} ({})",
                e.pointer,
                e.identifier.as_deref().unwrap_or("?"),
                e.artifact.status.as_str(),
                e.artifact.message,
                e.manifest.status.as_str(),
                e.manifest.message
            );
            rep.check("catalog.entry", e.passed(r.require_signed), what);
        }
        rep.detail("format", "ai-catalog");
        rep.detail("spec_version", &r.spec_version);
        rep.detail("require_signed", r.require_signed);
        rep.detail("host", &r.host);
        rep.detail("host_identity", &r.host_identity);
        rep.detail("entries", &r.entries);
        rep.detail("counts", r.counts());
        if let Some(s) = &r.catalog_signature {
            let ok = !matches!(s.status, Status::Failed | Status::Unsupported);
            rep.check("catalog.signature", ok, s.message.clone());
            rep.detail("catalog_signature", s);
        }
        if let Some(code) = r.failure_code() {
            let why = r.first_failure().unwrap_or_else(|| "not verified".into());
            rep.error = Some(Problem::new(code, why));
        }
        rep.settle();
        if let Some(e) = catalog_unvouched(r) {
            // Nothing failed, but no trusted key vouches for some entry:
            // `unsigned` (refused unless accepted by policy), also under
            // --require-signed, which refuses it.
            rep.set_verdict(Verdict::Unsigned);
            // Under --require-signed the refusal keeps its reason
            // (`catalog.not-verified`: "a verified Trust Manifest is
            // required").
            if !r.require_signed {
                rep.error = Some(Problem::new(
                    "catalog.unsigned",
                    format!(
                        "{} {}: no trusted key vouches for it (artifact {}, manifest {})",
                        e.pointer,
                        e.identifier.as_deref().unwrap_or("?"),
                        e.artifact.status.as_str(),
                        e.manifest.status.as_str()
                    ),
                ));
            }
        }
        rep
    }

    /// The report of a delegation audit; with `deny_warnings`, a failed
    /// warning fails the audit (one verdict for text, JSON and exit code).
    pub fn from_audit(
        command: &str,
        subject: Option<&str>,
        r: &AuditReport,
        deny_warnings: bool,
    ) -> Report {
        let mut out = Report::new(command, subject);
        for h in &r.hops {
            let alg = h.evidence.as_ref().map(|e| e.alg.clone()).or_else(|| {
                h.header
                    .get("alg")
                    .and_then(|v| v.as_str())
                    .map(str::to_owned)
            });
            out.signatures.push(SignatureResult {
                kind: "jwt",
                id: h.index.to_string(),
                verdict: if h.evidence.is_some() {
                    "valid"
                } else {
                    "invalid"
                },
                algorithm: alg,
                kid: h
                    .header
                    .get("kid")
                    .and_then(|v| v.as_str())
                    .map(str::to_owned),
                key: h.evidence.as_ref().map(|e| KeyInfo {
                    source: e.key_source.clone(),
                    thumbprint: Some(e.key_thumbprint.clone()),
                }),
                covered: Vec::new(),
                created: h.time("iat"),
                expires: h.time("exp"),
                reason: if h.evidence.is_some() {
                    None
                } else {
                    r.checks
                        .iter()
                        .find(|c| c.hop == Some(h.index) && !c.passed && c.code.starts_with("jwt."))
                        .map(|c| Problem::new(c.code, c.message.clone()))
                },
            });
        }
        for c in &r.checks {
            out.checks.push(CheckResult {
                code: c.code.to_owned(),
                severity: c.severity.as_str(),
                passed: c.passed,
                hop: c.hop,
                pointer: None,
                message: c.message.clone(),
            });
        }
        let ok = crate::delegation::report::verdict(r, deny_warnings);
        out.set_verdict(if ok {
            Verdict::Verified
        } else {
            Verdict::NotVerified
        });
        if !ok {
            out.error = r
                .checks
                .iter()
                .find(|c| !c.passed && c.severity == crate::delegation::Severity::Error)
                .or_else(|| {
                    r.checks
                        .iter()
                        .find(|c| !c.passed && c.severity == crate::delegation::Severity::Warning)
                })
                .map(|c| Problem::new(c.code, c.message.clone()));
        }
        if let serde_json::Value::Object(m) = crate::delegation::report::json(r) {
            for (k, v) in m {
                if !matches!(k.as_str(), "checks" | "result" | "passed") {
                    out.details.insert(k, v);
                }
            }
        }
        out
    }
}

/// The first entry of a catalog in which nothing failed whose artifact no
/// trusted key vouches for: neither verified by its own signature, nor
/// bound by a digest its verified Trust Manifest declares, nor covered by
/// the host's signature over the whole catalog
/// ([`Binding::is_bound`](crate::catalog::Binding::is_bound)). `None` when
/// something failed (the catalog is then `not-verified`) or every artifact
/// is vouched for.
pub fn catalog_unvouched(
    r: &crate::catalog::CatalogReport,
) -> Option<&crate::catalog::EntryResult> {
    use crate::catalog::Status;
    let bad = |s: Status| matches!(s, Status::Failed | Status::Unsupported);
    let failed = r.lint.iter().any(|f| f.severity == "error")
        || [&r.host, &r.host_identity, &r.catalog_signature]
            .into_iter()
            .flatten()
            .any(|h| bad(h.status))
        || r.entries.iter().any(|e| e.failed());
    if failed {
        return None;
    }
    r.entries.iter().find(|e| !e.binding.is_bound())
}

/// Per-signature results of a JWS.
pub fn jws_signatures(r: &JwsReport) -> Vec<SignatureResult> {
    r.signatures
        .iter()
        .enumerate()
        .map(|(i, s)| SignatureResult {
            kind: "jws",
            id: i.to_string(),
            verdict: s.verdict.as_str(),
            algorithm: s.alg.clone(),
            kid: s.kid.clone(),
            key: s.key_source.as_ref().map(|src| KeyInfo {
                source: src.clone(),
                thumbprint: s.key_thumbprint.clone(),
            }),
            covered: Vec::new(),
            created: None,
            expires: None,
            reason: s
                .reason
                .as_ref()
                .map(|r| Problem::new(r.code(), r.to_string())),
        })
        .collect()
}

/// The signature verdict of an RFC 9421 label that failed with `e`
/// (docs/report.md): `invalid` only when a trusted key was tried and the
/// signature does not match; `no-trusted-key` when no trusted key was found
/// for it; `refused` when policy refused it before or instead of
/// cryptography. A Content-Digest mismatch is found after the signature
/// verified (RFC 9421 section 7.2.8): the signature is `valid` and the
/// digest is reported as a check of its own ([`Report::from_http`]).
pub(crate) fn httpsig_verdict(e: &crate::httpsig::SigError) -> &'static str {
    use crate::httpsig::SigError;
    match e {
        SigError::ContentDigest(_) => "valid",
        SigError::BadSignature => "invalid",
        SigError::NoTrustedKey { .. } | SigError::Resolve(_) => "no-trusted-key",
        _ => "refused",
    }
}

/// Per-label results of an RFC 9421 verification.
pub fn http_signatures(r: &VerifyReport) -> Vec<SignatureResult> {
    r.results
        .iter()
        .map(|l| SignatureResult {
            kind: "http-message-signature",
            id: l.label.clone(),
            verdict: match &l.outcome {
                Ok(()) => "valid",
                Err(e) => httpsig_verdict(e),
            },
            algorithm: l.alg.map(|a| a.httpsig_name().to_owned()),
            kid: l.keyid.clone(),
            key: l.key_source.as_ref().map(|src| KeyInfo {
                source: src.clone(),
                thumbprint: l.key_thumbprint.clone(),
            }),
            covered: l.covered.iter().map(|c| unquote_component(c)).collect(),
            created: l.created,
            expires: l.expires,
            reason: match &l.outcome {
                Ok(()) | Err(crate::httpsig::SigError::ContentDigest(_)) => None,
                Err(e) => Some(Problem::new(e.code(), e.to_string())),
            },
        })
        .collect()
}

/// `"content-type";req` -> `content-type;req`: the component name without
/// the structured-field quoting of its serialized form (RFC 9421 2.1).
pub fn unquote_component(c: &str) -> String {
    if let Some(rest) = c.strip_prefix('"') {
        if let Some(end) = rest.find('"') {
            return [&rest[..end], &rest[end + 1..]].concat();
        }
    }
    c.to_owned()
}

impl Serialize for VerifyReport {
    /// The verification as a [`Report`] ([`Report::from_http`]): the
    /// per-label results with the `content-digest` checks beside them (a
    /// label list alone would show a Content-Digest mismatch as a valid
    /// signature).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Report::from_http("http verify", None, self).serialize(s)
    }
}

impl Serialize for AuditReport {
    /// The audit as a [`Report`] (without `--deny-warnings`).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Report::from_audit("delegation audit", None, self, false).serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn component_ids_lose_their_quotes_only() {
        assert_eq!(unquote_component("\"@status\""), "@status");
        assert_eq!(
            unquote_component("\"content-digest\";req"),
            "content-digest;req"
        );
        assert_eq!(
            unquote_component("\"@query-param\";name=\"a\""),
            "@query-param;name=\"a\""
        );
    }
}
