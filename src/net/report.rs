//! The report of one descriptor URL's verification, in the one report shape
//! (`docs/report.md`, `docs/report.schema.json`): built here once, so that
//! `verify URL`, `verify --batch` and every worker of `agentsig crawl`
//! report the same input the same way, and an embedder gets the same
//! report as the command line.
//!
//! A descriptor is verified when a trusted key vouches for its bytes by an
//! RFC 9421 response signature over an RFC 9530 `Content-Digest`, or by a
//! detached JWS over its RFC 8785 canonical form
//! (draft-narvaneni-agent-uri-03 section 10.3); anything less is reported
//! as what it is: `unsigned` (accepted only under
//! [`UrlVerifyOptions::allow_unsigned`](super::verify::UrlVerifyOptions::allow_unsigned)),
//! `unavailable`, `not-verified`.

use super::catalog::CatalogUrlError;
use super::verify::{UrlVerified, UrlVerifyError};
use crate::report::{jws_signatures, Problem, Report};
use serde_json::Value;

impl UrlVerified {
    /// The report of this verification, for `command` (`"verify"`) over
    /// `subject` (the URL as given): the signatures that verified, the
    /// checks made, `details` (`url`, `redirects`, `signed`, `checked`,
    /// `not_checked`, `key_authority`, `cache`, `descriptor`) and the
    /// verdict ([`UrlVerified::verdict`]). An unsigned descriptor's report
    /// carries the `descriptor.unsigned` problem saying why.
    ///
    /// ```no_run
    /// use agentsig::net::{Fetcher, Resolver};
    ///
    /// let resolver = Resolver::new(Fetcher::new()?);
    /// let report = match resolver.verify_url("https://agents.example/agent.json") {
    ///     Ok(v) => v.into_report("verify", "https://agents.example/agent.json"),
    ///     Err(e) => e.report("verify", "https://agents.example/agent.json"),
    /// };
    /// println!("{}", serde_json::to_string(&report)?);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn report(&self, command: &str, subject: &str) -> Report {
        // A clone of the parsed value, not a copy through the serializer.
        self.report_with(command, subject, self.descriptor().clone())
    }

    /// [`report`](Self::report), the parsed descriptor moved into the
    /// report rather than cloned ([`UrlVerified::take_descriptor`]): one
    /// parse and no copy, for a caller done with the verification.
    pub fn into_report(mut self, command: &str, subject: &str) -> Report {
        let descriptor = self.take_descriptor();
        self.report_with(command, subject, descriptor)
    }

    fn report_with(&self, command: &str, subject: &str, descriptor: Value) -> Report {
        let mut r = match (&self.http_signature, &self.jws) {
            (Some(h), _) => Report::from_http(command, Some(subject), h),
            (None, Some(j)) => Report::from_jws(command, Some(subject), &j.jws),
            (None, None) => {
                let mut r = Report::error(command, Some(subject), "", "");
                r.error = None;
                r
            }
        };
        // Room for the details below and a crawl's four, made once rather
        // than grown key by key.
        if r.details.is_empty() {
            r.details = serde_json::Map::with_capacity(14);
        }
        if let (Some(_), Some(j)) = (&self.http_signature, &self.jws) {
            r.signatures.extend(jws_signatures(&j.jws));
        }
        if let Some(card) = &self.card {
            for s in card.signatures.iter().flatten() {
                r.signatures.extend(jws_signatures(s));
            }
            r.check(
                "a2a.card-signatures",
                true,
                format!(
                    "{} embedded A2A card signature(s) checked",
                    card.signatures.len()
                ),
            );
        }
        r.check(
            "digest.content-digest",
            true,
            if self.digest_checked {
                "Content-Digest matches the body"
            } else {
                "no Content-Digest sent"
            },
        );
        r.detail("url", &self.url);
        r.detail("redirects", &self.redirects);
        r.detail("signed", self.signed());
        r.detail("checked", self.checked());
        if self.jws_skipped {
            r.detail("jws_skipped", true);
        }
        if !self.not_checked.is_empty() {
            r.detail("not_checked", &self.not_checked);
        }
        r.detail("key_authority", &self.key_authority);
        r.detail("cache", self.cache);
        r.detail_value("descriptor", descriptor);
        // The library's verdict (one signature verified, none invalid: a
        // signature by an untrusted key listed above does not fail it), or
        // `unsigned` for a descriptor no trusted key vouches for, accepted
        // by policy (docs/report.md).
        r.set_verdict(self.verdict());
        r.error = if self.signed() {
            None
        } else {
            Some(Problem::new("descriptor.unsigned", self.unsigned_reason()))
        };
        r
    }

    /// Why no trusted key vouches for the descriptor, for people: the
    /// message of an unsigned descriptor's `descriptor.unsigned` problem.
    pub fn unsigned_reason(&self) -> String {
        if self.not_checked.is_empty() {
            format!(
                "not signed: neither an RFC 9421 signature nor a detached JWS (Content-Digest {})",
                if self.digest_checked {
                    "checked"
                } else {
                    "absent"
                }
            )
        } else {
            "signed only by keys that are not trusted".to_owned()
        }
    }
}

impl UrlVerifyError {
    /// The report of a URL that did not verify, for `command` over
    /// `subject`: its code and message, the verdict
    /// [`UrlVerifyError::verdict`] gives (`unsigned`, `unavailable` or
    /// `not-verified`), and the signatures it left `not-checked` when the
    /// keys could not be fetched.
    pub fn report(&self, command: &str, subject: &str) -> Report {
        let mut r = Report::error(command, Some(subject), self.code(), &self.to_string());
        r.set_verdict(self.verdict());
        r.signatures = self.signatures().to_vec();
        r
    }
}

impl CatalogUrlError {
    /// The report of a catalog URL that could not be checked, for
    /// `command` over `subject`: its code and message and the verdict
    /// [`CatalogUrlError::verdict`] gives (`unavailable` when the catalog
    /// could not be fetched).
    pub fn report(&self, command: &str, subject: &str) -> Report {
        let mut r = Report::error(command, Some(subject), self.code(), &self.to_string());
        r.set_verdict(self.verdict());
        r
    }
}
