//! The report shape (layer 6, [`crate::report`]) of a Web Bot Auth
//! verification ([`crate::webbotauth::Report`], layer 5): kept here, above
//! the format, so that the format never imports the facade.

use crate::trust::KeySource;
use crate::webbotauth::{DirectoryError, Error, LabelOutcome, Report, Status};

impl Report {
    /// The crate's machine-readable report ([`crate::report::Report`]): one
    /// signature entry per `web-bot-auth` label, the verdict `verified`
    /// when one label verified, and the identity and Appendix C.1 status in
    /// `details.web_bot_auth`.
    pub fn to_report(&self, command: &str, subject: Option<&str>) -> crate::report::Report {
        use crate::report::{Problem, Verdict};
        let mut r = crate::report::Report::error(command, subject, "", "");
        r.error = None;
        r.signatures = self.labels.iter().map(signature_result).collect();
        let status = self.status();
        r.set_verdict(if status == Status::Verified {
            Verdict::Verified
        } else if self.unavailable() {
            Verdict::Unavailable
        } else {
            Verdict::NotVerified
        });
        if status != Status::Verified {
            r.error = Some(match self.first_error() {
                Some(e) => Problem::new(e.code(), e.to_string()),
                None => Problem::new(Error::NoSignature.code(), Error::NoSignature.to_string()),
            });
        }
        let v = self.verified();
        // The members in this order (the report's member order is part of
        // its text), the map made at its size once.
        use serde_json::Value;
        let text = |s: Option<&String>| s.map_or(Value::Null, |s| Value::String(s.clone()));
        let mut d = serde_json::Map::with_capacity(6);
        d.insert(
            "status".into(),
            serde_json::to_value(status).unwrap_or(Value::Null),
        );
        d.insert("agent".into(), text(v.map(|v| &v.agent)));
        d.insert("key_set_url".into(), text(v.map(|v| &v.key_set_url)));
        d.insert("label".into(), text(v.map(|v| &v.label)));
        d.insert(
            "legacy_signature_agent".into(),
            v.map_or(Value::Null, |v| Value::Bool(v.legacy)),
        );
        let mut urls = Vec::with_capacity(self.labels.len());
        urls.extend(self.labels.iter().map(|l| text(l.agent.as_ref())));
        d.insert("agent_urls".into(), Value::Array(urls));
        r.detail_value("web_bot_auth", Value::Object(d));
        r
    }
}

/// The `signatures` entry of one label ([`Report::to_report`]'s), its
/// `covered` left empty.
fn signature_result(l: &LabelOutcome) -> crate::report::SignatureResult {
    use crate::report::{KeyInfo, Problem, SignatureResult};
    let (verdict, reason, alg, kid, key, created, expires) = match &l.result {
        Ok(v) => (
            "valid",
            None,
            Some(v.alg.to_owned()),
            Some(v.keyid.clone()),
            Some(KeyInfo {
                source: KeySource::Discovered(v.key_set_url.clone()),
                thumbprint: Some(v.keyid.clone()),
            }),
            Some(v.created),
            Some(v.expires),
        ),
        Err(e) => (
            label_verdict(e),
            Some(Problem::new(e.code(), e.to_string())),
            None,
            None,
            None,
            None,
            None,
        ),
    };
    SignatureResult {
        kind: "http-message-signature",
        id: l.label.clone(),
        verdict,
        algorithm: alg,
        kid,
        key,
        covered: Vec::new(),
        created,
        expires,
        reason,
    }
}

/// The report of a request whose Web Bot Auth verification verified, as
/// [`Report::to_report`] makes it with each valid signature's covered
/// components filled in (`unquote_component` of what its verification
/// read), then serialized: the same members, in the same order, with the
/// same values (a test compares the two), but borrowed from the
/// verification's results rather than built as a
/// [`crate::report::Report`] with its `details` as JSON values first. For
/// a binding's hot path that only serializes the report
/// ([`crate::facade::tape`]). Its fields are [`crate::report::Report`]'s,
/// in its order.
#[derive(serde::Serialize)]
pub(crate) struct VerifiedView<'a> {
    schema: &'static str,
    command: &'a str,
    subject: Option<&'a str>,
    verdict: crate::report::Verdict,
    verified: bool,
    signatures: Vec<crate::report::SignatureResult>,
    checks: [crate::report::CheckResult; 0],
    error: Option<crate::report::Problem>,
    details: ViewDetails<'a>,
}

/// [`VerifiedView`]'s `details`: `web_bot_auth` alone, as
/// [`Report::to_report`] writes it.
#[derive(serde::Serialize)]
struct ViewDetails<'a> {
    web_bot_auth: ViewIdentity<'a>,
}

/// `details.web_bot_auth` of [`Report::to_report`], members in its order.
#[derive(serde::Serialize)]
struct ViewIdentity<'a> {
    status: Status,
    agent: &'a str,
    key_set_url: &'a str,
    label: &'a str,
    legacy_signature_agent: bool,
    agent_urls: Vec<Option<&'a str>>,
}

impl Report {
    /// [`VerifiedView`] of this report when a label verified (the status
    /// [`Status::Verified`]); `None` otherwise (the caller then builds the
    /// report with [`Report::to_report`]).
    pub(crate) fn verified_view<'a>(
        &'a self,
        command: &'a str,
        subject: Option<&'a str>,
    ) -> Option<VerifiedView<'a>> {
        let v = self.verified()?;
        let signatures = self
            .labels
            .iter()
            .map(|l| {
                let mut s = signature_result(l);
                if s.verdict == "valid" {
                    // The entry's covered components, as the facade fills
                    // them in: from the first label of this name that
                    // verified.
                    if let Some(ok) = self
                        .labels
                        .iter()
                        .find(|x| x.label == s.id)
                        .and_then(|x| x.result.as_ref().ok())
                    {
                        s.covered = ok
                            .covered
                            .iter()
                            .map(|c| crate::report::unquote_component(c))
                            .collect();
                    }
                }
                s
            })
            .collect();
        Some(VerifiedView {
            schema: crate::report::SCHEMA,
            command,
            subject,
            verdict: crate::report::Verdict::Verified,
            verified: true,
            signatures,
            checks: [],
            error: None,
            details: ViewDetails {
                web_bot_auth: ViewIdentity {
                    status: Status::Verified,
                    agent: &v.agent,
                    key_set_url: &v.key_set_url,
                    label: &v.label,
                    legacy_signature_agent: v.legacy,
                    agent_urls: self.labels.iter().map(|l| l.agent.as_deref()).collect(),
                },
            },
        })
    }
}

impl Report {
    /// Whether nothing could be checked because the agents' key sets could
    /// not be obtained: the request is signed, no label verified, and every
    /// label failed for want of its key set
    /// ([`DirectoryError::is_unavailable`]). The report is then
    /// `unavailable` (docs/report.md), not `not-verified`.
    fn unavailable(&self) -> bool {
        self.error.is_none()
            && !self.labels.is_empty()
            && self
                .labels
                .iter()
                .all(|l| matches!(&l.result, Err(Error::Directory(d)) if d.is_unavailable()))
    }
}

/// The signature verdict of a `web-bot-auth` label that failed with `e`, in
/// the meaning every report gives it (docs/report.md), as for any RFC 9421
/// label ([`crate::report::httpsig_verdict`]): `not-checked` when its key
/// set could not be obtained; `no-trusted-key` when the key set was
/// obtained but vouches for no key of it (unknown key, a directory
/// malformed, its keys or its own signature not proven); `invalid` only
/// when the agent's key was tried and the signature (or the content it
/// covers) does not match; `refused` when policy or the profile's rules
/// refused it before or instead of cryptography.
fn label_verdict(e: &Error) -> &'static str {
    use crate::httpsig::SigError;
    match e {
        Error::Directory(d) if d.is_unavailable() => "not-checked",
        Error::Directory(DirectoryError::TooManyKeySets(_)) => "refused",
        Error::Directory(_) | Error::UnknownKey { .. } => "no-trusted-key",
        // The signature verified but the body it covers does not match
        // its Content-Digest: the signed content is not what arrived.
        Error::Signature(SigError::ContentDigest(_)) => "invalid",
        Error::Signature(s) => crate::report::httpsig_verdict(s),
        _ => "refused",
    }
}

impl crate::report::Report {
    /// The report of a Signature-Key verification
    /// ([`crate::webbotauth::signature_key::SignatureKeyResults`]): one
    /// signature entry per label, `verified` only when there was at least
    /// one and every one verified, each signer in `details.signers`.
    pub fn from_signature_key(
        results: &crate::webbotauth::signature_key::SignatureKeyResults,
        command: &str,
        subject: Option<&str>,
    ) -> crate::report::Report {
        use crate::report::{KeyInfo, Problem, SignatureResult, Verdict};
        let mut r = crate::report::Report::done(command, subject);
        let ok = !results.is_empty() && results.iter().all(|(_, r)| r.is_ok());
        // Unavailable when no signature could be checked for want of its
        // key set, as for a Signature-Agent verification.
        let unavailable = !results.is_empty()
            && results
                .iter()
                .all(|(_, r)| matches!(r, Err(Error::Directory(d)) if d.is_unavailable()));
        r.set_verdict(if ok {
            Verdict::Verified
        } else if unavailable {
            Verdict::Unavailable
        } else {
            Verdict::NotVerified
        });
        r.detail("profile", "signature-key");
        let mut signers = Vec::new();
        for (label, res) in results {
            let (verdict, alg, key, reason) = match res {
                Ok(v) => {
                    signers.push(serde_json::json!({
                        "label": label,
                        "scheme": v.scheme,
                        "identity": v.identity,
                        "thumbprint": v.thumbprint,
                        "alg": v.alg,
                    }));
                    (
                        "valid",
                        Some(v.alg.to_owned()),
                        Some(KeyInfo {
                            source: KeySource::Discovered(v.identity.clone()),
                            thumbprint: Some(v.thumbprint.clone()),
                        }),
                        None,
                    )
                }
                Err(e) => (
                    label_verdict(e),
                    None,
                    None,
                    Some(Problem::new(e.code(), e.to_string())),
                ),
            };
            r.signatures.push(SignatureResult {
                kind: "http-message-signature",
                id: label.clone(),
                verdict,
                algorithm: alg,
                kid: None,
                key,
                covered: Vec::new(),
                created: None,
                expires: None,
                reason,
            });
        }
        r.detail("signers", signers);
        r
    }
}
