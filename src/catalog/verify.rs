//! Verify a catalog document at hand: lint (every MUST of the catalog
//! text, [`crate::formats::CATALOG_RULES`]), the host's and each entry's
//! Trust Manifest ([`super::manifest`]), and each inline artifact by its
//! media type. One [`EntryResult`] per entry, nested catalogs included (to
//! [`super::MAX_DEPTH`] levels). Entries referenced by `url` are reported
//! [`Status::NotChecked`] unless a [`Fetch`] is given
//! ([`Verifier::verify_catalog_from`](crate::Verifier::verify_catalog_from));
//! the `net` feature supplies the SSRF-guarded one. With it, the crawler's
//! checks (AI Catalog "Verification Procedures"): MCP Server Cards by
//! their own signatures ([`Fetch::fetch_signed`]), declared digests of
//! fetched attestations and of the entry's `url` (provenance
//! `sourceDigest`), `publisher-identity` attestation JWTs, and the host
//! identity against the URL the catalog was served from.
//!
//! Each entry's artifact gets a [`Binding`]: an entry passes under
//! [`CatalogOptions::require_signed`] only with a verified manifest and a
//! bound artifact (see [`super`], "The binding"). An entry `url` is
//! resolved against the catalog's URL ([`Fetch::resolve_reference`], RFC
//! 3986 section 5) and refused before any connection when the fetcher
//! would refuse it ([`Fetch::refusal`]). A signature no trusted key
//! matches is [`Status::NotChecked`], one that fails with a trusted key
//! [`Status::Failed`] (the one verdict rule,
//! [`crate::policy::signatures_verified`]).

use super::manifest::verify_manifest;
pub use super::outcome::{Binding, Outcome, Status};
use super::{
    media_type_is, A2A_CARD_MEDIA_TYPE, MAX_CATALOG_BYTES, MAX_DEPTH, MAX_ENTRIES,
    MCP_SERVER_CARD_MEDIA_TYPE, MEDIA_TYPE,
};
use crate::formats::{self, Format, Severity};
use crate::jws::JwsPolicy;
use crate::policy::Context;
use serde::Serialize;
use serde_json::Value;

/// The checks of one entry.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct EntryResult {
    /// RFC 6901 pointer of the entry in the root document
    /// (`/entries/0/data/entries/2` for a nested inline catalog's entry), or
    /// `URL#pointer` for an entry of a catalog fetched from URL.
    pub pointer: String,
    /// Its `identifier`.
    pub identifier: Option<String>,
    /// Its `version`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Its media type (`mediaType` or `type`).
    pub media_type: Option<String>,
    /// Its catalog's nesting level (the root catalog is 1).
    pub depth: usize,
    /// The artifact (inline `data`, or the `url` target).
    pub artifact: Outcome,
    /// The Trust Manifest.
    pub manifest: Outcome,
    /// Whether the artifact was fetched from its `url` (its own signature,
    /// if any, is then the publisher's on the served bytes).
    pub fetched: bool,
    /// What binds the artifact to a trusted key ([`Binding`]):
    /// [`Binding::Unbound`] when nothing signed covers it.
    pub binding: Binding,
}

impl EntryResult {
    /// Does this entry pass: nothing failed or unsupported, and (with
    /// `require_signed`) a verified manifest and an artifact bound to a
    /// trusted key ([`EntryResult::binding`]). A Trust Manifest signature
    /// covers the manifest only (AI Catalog "Trust Manifest Signatures",
    /// "Trust Layers"), so a verified manifest over an artifact nothing
    /// signed covers does not make the entry verified.
    pub fn passed(&self, require_signed: bool) -> bool {
        !self.failed()
            && (!require_signed
                || (self.manifest.status == Status::Verified && self.binding.is_bound()))
    }

    /// The artifact or the manifest failed, or cannot be checked
    /// ([`Status::Unsupported`]).
    pub fn failed(&self) -> bool {
        let bad = |s: Status| matches!(s, Status::Failed | Status::Unsupported);
        bad(self.artifact.status) || bad(self.manifest.status)
    }
}

/// How many entries of a catalog are bound, unbound and failed
/// ([`CatalogReport::counts`]); every entry is in exactly one of the three.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct EntryCounts {
    /// Every entry, nested ones included.
    pub total: usize,
    /// Nothing failed and the artifact is verified by its own signature or
    /// bound ([`Binding::is_bound`]).
    pub bound: usize,
    /// Nothing failed, but nothing signed covers the artifact.
    pub unbound: usize,
    /// The artifact or the manifest failed or is unsupported.
    pub failed: usize,
}

/// What [`Verifier::verify_catalog`](crate::Verifier::verify_catalog) is asked to do, and its bounds.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct CatalogOptions {
    /// Every entry must carry a verified Trust Manifest.
    pub require_signed: bool,
    /// Largest document read ([`MAX_CATALOG_BYTES`]).
    pub max_bytes: usize,
    /// Most entries, nested ones included ([`MAX_ENTRIES`]).
    pub max_entries: usize,
    /// Deepest nesting level followed, the root being 1 ([`MAX_DEPTH`]).
    pub max_depth: usize,
    /// Most documents fetched through a [`Fetch`] ([`super::MAX_FETCHES`]).
    pub max_fetches: usize,
    /// The catalog's detached JWS (`ai-catalog.json.jws` beside the file,
    /// `URL.jws` beside a URL): a JWS over the RFC 8785 form of the whole
    /// document, the form of a descriptor's (draft-narvaneni-agent-uri-03
    /// section 10.3), checked with the keys of `host.identifier` only. When
    /// it verifies it binds every inline artifact of the document
    /// ([`CatalogReport::apply_catalog_signature`]); by a key not trusted
    /// for the host it is not checked; failing with a trusted key it fails
    /// the catalog.
    pub catalog_jws: Option<String>,
}

impl Default for CatalogOptions {
    fn default() -> Self {
        CatalogOptions {
            require_signed: false,
            max_bytes: MAX_CATALOG_BYTES,
            max_entries: MAX_ENTRIES,
            max_depth: MAX_DEPTH,
            max_fetches: super::MAX_FETCHES,
            catalog_jws: None,
        }
    }
}

impl CatalogOptions {
    /// Require a verified Trust Manifest on every entry.
    pub fn require_signed(mut self, on: bool) -> Self {
        self.require_signed = on;
        self
    }

    /// Check `jws`, the catalog's detached JWS ([`CatalogOptions::catalog_jws`]).
    pub fn catalog_jws(mut self, jws: Option<String>) -> Self {
        self.catalog_jws = jws;
        self
    }
}

/// Why a catalog could not be read at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// Larger than [`CatalogOptions::max_bytes`].
    #[error(
        "the catalog is {len} bytes, above the {max}-byte limit: split it into nested catalogs"
    )]
    TooLarge {
        /// Its size.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// Not strict I-JSON.
    #[error("the catalog is not strict JSON: {0}")]
    Json(#[from] crate::json::JsonError),
}

/// A lint finding of the catalog, in the report.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct LintFinding {
    /// Stable code (`catalog/duplicate`, ...).
    pub code: &'static str,
    /// `error` or `warning`.
    pub severity: &'static str,
    /// RFC 6901 pointer in the root document.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

/// The result of [`Verifier::verify_catalog`](crate::Verifier::verify_catalog).
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct CatalogReport {
    /// The catalog's `specVersion`.
    pub spec_version: Option<String>,
    /// Lint findings of the catalog and its nested inline catalogs.
    pub lint: Vec<LintFinding>,
    /// The host's Trust Manifest, when there is one.
    pub host: Option<Outcome>,
    /// The host identity (AI Catalog "Verifying Host Identity"): checked
    /// when the catalog was fetched over HTTPS and names a
    /// `host.identifier`; [`Status::NotChecked`] for a catalog read from a
    /// file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_identity: Option<Outcome>,
    /// The URL whose content was checked, when the catalog was fetched
    /// (the URL asked for, or where it redirected within its origin);
    /// `None` for a catalog at hand.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// One result per entry, in document order (a nested catalog's entries
    /// right after the entry that holds it).
    pub entries: Vec<EntryResult>,
    /// Whether every entry had to carry a verified manifest.
    pub require_signed: bool,
    /// A signature over the whole catalog document by the host identity,
    /// when one was checked ([`CatalogReport::apply_catalog_signature`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub catalog_signature: Option<Outcome>,
}

impl CatalogReport {
    /// Everything present verified: no lint error, the host manifest (when
    /// signed) verified, every entry [`EntryResult::passed`].
    pub fn verified(&self) -> bool {
        !self.lint.iter().any(|f| f.severity == "error")
            && [&self.host, &self.host_identity, &self.catalog_signature]
                .into_iter()
                .flatten()
                .all(|h| !matches!(h.status, Status::Failed | Status::Unsupported))
            && self.entries.iter().all(|e| e.passed(self.require_signed))
    }

    /// The entries counted by what became of them ([`EntryCounts`]): the
    /// one count the CLI summary and the bindings use.
    pub fn counts(&self) -> EntryCounts {
        let mut c = EntryCounts {
            total: self.entries.len(),
            ..EntryCounts::default()
        };
        for e in &self.entries {
            if e.failed() {
                c.failed += 1;
            } else if e.binding.is_bound() {
                c.bound += 1;
            } else {
                c.unbound += 1;
            }
        }
        c
    }

    /// Every artifact verified or bound, and the catalog
    /// [`verified`](Self::verified): what the word "verified" means for a
    /// catalog whatever `require_signed` was.
    pub fn all_bound(&self) -> bool {
        self.verified() && self.counts().unbound == 0
    }

    /// The stable code of why it did not verify: `catalog.unbound` when the
    /// first entry that did not pass has a verified manifest over an
    /// artifact nothing signed covers (and nothing else failed first),
    /// else `catalog.not-verified`; `None` when it verified.
    pub fn failure_code(&self) -> Option<&'static str> {
        if self.verified() {
            return None;
        }
        let first_entry_only = !self.lint.iter().any(|f| f.severity == "error")
            && [&self.host, &self.host_identity, &self.catalog_signature]
                .into_iter()
                .flatten()
                .all(|h| !matches!(h.status, Status::Failed | Status::Unsupported));
        let unbound = self
            .entries
            .iter()
            .find(|e| !e.passed(self.require_signed))
            .is_some_and(|e| {
                !e.failed() && e.manifest.status == Status::Verified && !e.binding.is_bound()
            });
        Some(if first_entry_only && unbound {
            "catalog.unbound"
        } else {
            "catalog.not-verified"
        })
    }

    /// Count as [`Binding::CatalogSignature`] every unbound inline artifact
    /// of the document itself (not of a catalog fetched from an entry's
    /// `url`), when `signature` (a signature over the whole catalog
    /// document by the host identity: its RFC 9421 response signature, or
    /// a detached JWS of the catalog) verified; it is kept in
    /// [`CatalogReport::catalog_signature`] either way. With two (a
    /// response signature and a detached JWS) the one kept is a failed one
    /// (it fails the catalog, the one verdict rule), else a verified one.
    pub fn apply_catalog_signature(&mut self, signature: Outcome) {
        let rank = |o: &Outcome| match o.status {
            Status::Failed | Status::Unsupported => 2,
            Status::Verified => 1,
            _ => 0,
        };
        if let Some(kept) = &self.catalog_signature {
            if rank(kept) >= rank(&signature) {
                if signature.status == Status::Verified {
                    self.bind_inline_to_catalog();
                }
                return;
            }
        }
        if signature.status == Status::Verified {
            self.bind_inline_to_catalog();
        }
        self.catalog_signature = Some(signature);
    }

    /// Every unbound inline artifact of the document itself becomes
    /// [`Binding::CatalogSignature`].
    fn bind_inline_to_catalog(&mut self) {
        {
            for e in &mut self.entries {
                if e.binding == Binding::Unbound && !e.fetched && e.pointer.starts_with('/') {
                    if let Some(m) = &e.media_type {
                        if !media_type_is(m, MEDIA_TYPE) {
                            e.binding = Binding::CatalogSignature;
                        }
                    }
                }
            }
        }
    }

    /// The first reason it did not verify, for a one-line message.
    pub fn first_failure(&self) -> Option<String> {
        if let Some(f) = self.lint.iter().find(|f| f.severity == "error") {
            return Some(format!("{} at {}: {}", f.code, f.pointer, f.message));
        }
        if let Some(h) = self
            .host
            .as_ref()
            .filter(|h| matches!(h.status, Status::Failed | Status::Unsupported))
        {
            return Some(format!("host Trust Manifest: {}", h.message));
        }
        if let Some(h) = self
            .host_identity
            .as_ref()
            .filter(|h| matches!(h.status, Status::Failed | Status::Unsupported))
        {
            return Some(format!("host identity: {}", h.message));
        }
        if let Some(h) = self
            .catalog_signature
            .as_ref()
            .filter(|h| matches!(h.status, Status::Failed | Status::Unsupported))
        {
            return Some(format!("catalog signature: {}", h.message));
        }
        self.entries
            .iter()
            .find(|e| !e.passed(self.require_signed))
            .map(|e| {
                let bad = |s: Status| matches!(s, Status::Failed | Status::Unsupported);
                let msg = if bad(e.artifact.status) {
                    e.artifact.message.clone()
                } else if bad(e.manifest.status) {
                    e.manifest.message.clone()
                } else if e.manifest.status != Status::Verified {
                    format!("{} (a verified Trust Manifest is required)", e.manifest.message)
                } else {
                    format!(
                        "{} (unbound: the Trust Manifest signature covers the manifest only, and neither a signature of the artifact's own, nor a provenance sourceDigest the manifest declares for it, nor a signature over the whole catalog covers the artifact; see docs/catalog.md)",
                        e.artifact.message
                    )
                };
                format!("entry {}: {msg}", e.pointer)
            })
    }
}

/// Read a catalog document: refused above [`CatalogOptions::max_bytes`]
/// before it is parsed, then strict I-JSON.
///
/// # Errors
/// [`CatalogError`] when the document is too large or not strict JSON.
pub fn parse_catalog(bytes: &[u8], opts: &CatalogOptions) -> Result<Value, CatalogError> {
    if bytes.len() > opts.max_bytes {
        return Err(CatalogError::TooLarge {
            len: bytes.len(),
            max: opts.max_bytes,
        });
    }
    Ok(crate::json::parse_strict(bytes)?)
}

/// How entries referenced by `url` are fetched (the `net` feature's
/// SSRF-guarded fetcher; a map in tests). `accept` is the media type
/// expected. The implementation bounds each body and the total.
pub trait Fetch {
    /// The body at `url`, or why it could not be fetched.
    ///
    /// # Errors
    /// A message saying why nothing was fetched.
    fn fetch(&mut self, url: &str, accept: &str) -> Result<Vec<u8>, String>;

    /// An entry's `url` as a reference resolved against `base`, the URL of
    /// the catalog that holds it (RFC 3986 section 5). The default takes an
    /// absolute URL as it is and refuses a relative one.
    ///
    /// # Errors
    /// Why the reference names no URL.
    fn resolve_reference(&self, base: Option<&str>, reference: &str) -> Result<String, String> {
        let _ = base;
        let scheme = reference.split(':').next().unwrap_or("");
        if reference.contains(':')
            && !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        {
            Ok(reference.to_owned())
        } else {
            Err("a relative url, and no catalog URL to resolve it against".into())
        }
    }

    /// Why `url` would be refused before any connection (draft-narvaneni-agent-uri-03
    /// section 5.2: not `https`, or a private, loopback or link-local
    /// host), or `None`. The default refuses nothing.
    fn refusal(&self, url: &str) -> Option<String> {
        let _ = url;
        None
    }

    /// The body at `url` with the signatures its publisher put on the
    /// response or beside it, checked with `keys`: an RFC 9421 response
    /// signature with its RFC 9530 `Content-Digest`, or a detached JWS at
    /// `URL.jws` (as `verify URL` checks a descriptor). Used for MCP
    /// Server Cards. The default checks nothing: the body with a
    /// [`Status::NotChecked`] signature.
    ///
    /// # Errors
    /// A message saying why nothing was fetched.
    fn fetch_signed(
        &mut self,
        url: &str,
        accept: &str,
        keys: std::sync::Arc<dyn crate::trust::KeyResolver>,
    ) -> Result<SignedBody, String> {
        let _ = keys;
        self.fetch(url, accept).map(|body| SignedBody {
            body,
            signature: Outcome::new(
                Status::NotChecked,
                "this fetcher checks no response signature",
            ),
        })
    }
}

/// A document fetched by [`Fetch::fetch_signed`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SignedBody {
    /// The bytes served (empty when the signature failed).
    pub body: Vec<u8>,
    /// Its signatures: [`Status::Verified`] when one verified and none
    /// failed, [`Status::Unsigned`] when it carries none,
    /// [`Status::Failed`] otherwise (a signature by a key that is not
    /// trusted included: it is never passed).
    pub signature: Outcome,
}

impl SignedBody {
    /// A body and the outcome of its signatures.
    pub fn new(body: Vec<u8>, signature: Outcome) -> SignedBody {
        SignedBody { body, signature }
    }
}

/// Checks of the root catalog made before the walk, on other threads.
#[derive(Default)]
pub(super) struct Premade {
    /// The root catalog's lint.
    pub(super) lint: Option<formats::LintReport>,
    /// The root entries' checks, by entry index.
    pub(super) manifests: Vec<Option<Pre>>,
}

/// A root entry's checks made beforehand: its whole result when it needs
/// nothing of the walk ([`inline_entry`]), else its manifest check.
pub(super) enum Pre {
    Entry(Box<EntryResult>),
    Manifest(Outcome),
}

/// The result of an entry with inline `data` that is not a nested
/// catalog and whose manifest (checked: `manifest`) has no attestations:
/// nothing of it needs the walk (no fetch, no nesting), so a worker thread
/// makes it whole. `Err` gives `manifest` and `pointer` back for any other
/// entry.
pub(super) fn inline_entry(
    cx: &Context,
    policy: &JwsPolicy,
    obj: &serde_json::Map<String, Value>,
    pointer: String,
    depth: usize,
    manifest: Outcome,
) -> Result<EntryResult, (Outcome, String)> {
    let media_type = crate::formats::entry_media_type(obj).ok().flatten();
    let get = |k| crate::json::member(obj, k);
    let (Some(data), Some(mt)) = (get("data"), media_type) else {
        return Err((manifest, pointer));
    };
    let attested =
        get("trustManifest").is_some_and(|m| crate::json::get(m, "attestations").is_some());
    if attested || media_type_is(mt, MEDIA_TYPE) {
        return Err((manifest, pointer));
    }
    let identifier = get("identifier").and_then(Value::as_str);
    let mut artifact = inline_artifact(cx, policy, data, mt, identifier, None);
    let binding = bind_inline(
        &mut artifact,
        &manifest,
        get("trustManifest"),
        identifier,
        data,
        mt,
    );
    Ok(EntryResult {
        pointer,
        identifier: identifier.map(str::to_owned),
        version: get("version").and_then(Value::as_str).map(str::to_owned),
        media_type: Some(mt.to_owned()),
        depth,
        artifact,
        manifest,
        fetched: false,
        binding,
    })
}

/// The binding of an inline artifact (`data`, not a nested catalog): the
/// provenance links of its manifest whose `sourceId` is the entry
/// `identifier` declare, in `sourceDigest`, the digest of the RFC 8785
/// canonical form of `data` (the catalog text's "Verifying Artifact
/// Integrity" applied to an artifact carried inline: the canonical form is
/// the one the Trust Manifest signature itself uses, so the digest does not
/// depend on whitespace or member order). A digest that differs fails the
/// artifact ("Reject the artifact if they differ"), signed manifest or
/// not; one that matches binds it when the manifest verified.
fn bind_inline(
    artifact: &mut Outcome,
    manifest: &Outcome,
    manifest_value: Option<&Value>,
    identifier: Option<&str>,
    data: &Value,
    mt: &str,
) -> Binding {
    let digests = identifier
        .map(|id| source_digests(manifest_value, id))
        .unwrap_or_default();
    let matched = if digests.is_empty() || artifact.status == Status::Failed {
        0
    } else {
        let checked = crate::jcs::canonicalize_value(data)
            .map_err(|e| format!("the inline artifact has no RFC 8785 form: {e}"))
            .and_then(|c| check_digests(&digests, &c));
        if let Err(e) = checked {
            *artifact = Outcome::failed(format!("inline data: {e}"));
            return Binding::Unbound;
        }
        digests.len()
    };
    bind(artifact, manifest, mt, matched, "the RFC 8785 form of data")
}

/// What binds an artifact checked as `artifact`, with `matched` declared
/// digests of its manifest matching it (of `what`): its own signature (an
/// A2A card's or a fetched server card's, [`Status::Verified`]), else the
/// digests when the manifest verified (the artifact is then reported
/// verified: a trusted key vouches for its bytes), else nothing.
fn bind(
    artifact: &mut Outcome,
    manifest: &Outcome,
    mt: &str,
    matched: usize,
    what: &str,
) -> Binding {
    let own =
        media_type_is(mt, A2A_CARD_MEDIA_TYPE) || media_type_is(mt, MCP_SERVER_CARD_MEDIA_TYPE);
    if artifact.status == Status::Failed {
        return Binding::Unbound;
    }
    if own && artifact.status == Status::Verified {
        return Binding::OwnSignature;
    }
    if matched > 0 && manifest.status == Status::Verified {
        if matches!(artifact.status, Status::Unsigned | Status::NotChecked) {
            artifact.status = Status::Verified;
        }
        artifact.message = format!(
            "{}; bound by the verified Trust Manifest: {matched} provenance sourceDigest(s) match {what} (AI Catalog \"Verifying Artifact Integrity\")",
            artifact.message
        );
        return Binding::ManifestDigest;
    }
    if matched > 0 {
        artifact.message = format!(
            "{}; {matched} provenance sourceDigest(s) match {what}, but the Trust Manifest is not verified, so they guard against transport tampering only (AI Catalog \"Trust Layers\", Layer 1)",
            artifact.message
        );
    }
    if media_type_is(mt, MEDIA_TYPE) {
        return Binding::Nested;
    }
    Binding::Unbound
}

/// The root entry's manifest check, as [`Walk`] makes it: `None` for an
/// entry without a manifest or without an identifier (the walk reports
/// those itself).
pub(super) fn root_manifest(cx: &Context, policy: &JwsPolicy, entry: &Value) -> Option<Outcome> {
    let m = crate::json::get(entry, "trustManifest")?;
    let id = crate::json::get(entry, "identifier").and_then(Value::as_str)?;
    Some(verify_manifest(cx, policy, m, Some(id)))
}

/// [`Verifier::verify_catalog`](crate::Verifier::verify_catalog) of the catalog fetched from `url`, its entries
/// referenced by `url` fetched through `fetch`: nested catalogs (to
/// [`CatalogOptions::max_depth`] levels, a cycle refused, a catalog seen
/// twice checked once), A2A cards and MCP Server Cards (checked as inline
/// ones); at most [`CatalogOptions::max_fetches`] fetches. Other media types
/// are not fetched.
///
/// # Errors
/// [`CatalogError`] when the root document is too large or not strict JSON.
pub(crate) fn verify_catalog_with<'a>(
    cx: &'a Context,
    policy: &'a JwsPolicy,
    bytes: &[u8],
    opts: &'a CatalogOptions,
    url: Option<&str>,
    fetch: Option<&'a mut dyn Fetch>,
) -> Result<CatalogReport, CatalogError> {
    let doc = parse_catalog(bytes, opts)?;
    Ok(verify_catalog_doc(
        cx,
        policy,
        &doc,
        opts,
        url,
        fetch,
        Premade::default(),
    ))
}

/// [`verify_catalog_with`] of a parsed document; what `premade` holds (the
/// root catalog's lint, root entry `i`'s manifest check), made beforehand
/// in parallel, is used in place of doing it again.
pub(super) fn verify_catalog_doc<'a>(
    cx: &'a Context,
    policy: &'a JwsPolicy,
    doc: &Value,
    opts: &'a CatalogOptions,
    url: Option<&str>,
    fetch: Option<&'a mut dyn Fetch>,
    premade: Premade,
) -> CatalogReport {
    let mut w = Walk {
        cx,
        policy,
        opts,
        fetch,
        path: url.map(|u| vec![u.to_owned()]).unwrap_or_default(),
        done: url.into_iter().map(str::to_owned).collect(),
        fetches: 0,
        report: CatalogReport {
            spec_version: doc
                .get("specVersion")
                .and_then(Value::as_str)
                .map(str::to_owned),
            lint: Vec::new(),
            host: None,
            host_identity: None,
            url: None,
            entries: Vec::new(),
            require_signed: opts.require_signed,
            catalog_signature: None,
        },
        seen_entries: 0,
        premade,
    };
    if let Some(host) = doc.get("host") {
        w.report.host = host_manifest(cx, policy, host);
        w.report.host_identity = w.host_identity(host, url);
    }
    w.catalog(doc, "", 1);
    w.report
}

/// The host of an `https://` URL, lowercased, without port or trailing
/// dot; `None` for anything else (userinfo refused).
fn https_host(url: &str) -> Option<String> {
    let rest = url
        .get(..8)?
        .eq_ignore_ascii_case("https://")
        .then(|| &url[8..])?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains('@') {
        return None;
    }
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split(']').next()?
    } else {
        authority.split(':').next().unwrap_or("")
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    (!host.is_empty()).then_some(host)
}

/// The domain of a `did:web` DID, lowercased: the host of the URL its DID
/// document is read from ([`crate::did::did_web_url`], did:web Method
/// Specification "Read (Resolve)"), so a DID that method refuses (an IP
/// host, a bad `%3A` port) names no domain.
fn did_web_host(did: &str) -> Option<String> {
    crate::did::did_web_url(did)
        .ok()
        .as_deref()
        .and_then(https_host)
}

/// The domain an identity names: a `did:web` DID's, an `https` URL's host,
/// or a bare domain itself; `None` for other DIDs and URIs.
fn identity_domain(identity: &str) -> Option<String> {
    if identity
        .get(..4)
        .is_some_and(|p| p.eq_ignore_ascii_case("did:"))
    {
        return did_web_host(identity);
    }
    if identity.contains("://") {
        return https_host(identity);
    }
    (!identity.contains([':', '/', '@']) && identity.contains('.'))
        .then(|| identity.trim_end_matches('.').to_ascii_lowercase())
}

/// The host's Trust Manifest, verified with `host.identifier`'s keys (AI
/// Catalog "Verifying Host Identity" step 3: "If host.trustManifest is
/// present and signed, verify the signature"; "Identity": on the host the
/// manifest identity SHOULD equal `host.identifier`). A signed manifest
/// whose identity is another than `host.identifier` would prove that
/// other identity's key, not the host's, so it fails; a domain
/// `host.identifier` (no key of its own agentsig can resolve) accepts an
/// identity on that domain (its `did:web`, or an `https` JWK Set URL on
/// it).
fn host_manifest(cx: &Context, policy: &JwsPolicy, host: &Value) -> Option<Outcome> {
    let m = host.get("trustManifest")?;
    let out = verify_manifest(cx, policy, m, None);
    let (Some(identifier), Some(identity)) = (
        host.get("identifier").and_then(Value::as_str),
        m.get("identity").and_then(Value::as_str),
    ) else {
        return Some(out);
    };
    if out.status != Status::Verified || identity == identifier {
        return Some(out);
    }
    let is_domain = !identifier.contains(':');
    let same_domain = is_domain
        && identity_domain(identity).is_some_and(|d| identity_domain(identifier) == Some(d));
    if same_domain {
        return Some(out);
    }
    Some(Outcome::failed(format!(
        "the host Trust Manifest is signed by a key of {}, not of host.identifier {}: a signed host manifest must verify with host.identifier's keys (AI Catalog \"Verifying Host Identity\")",
        crate::text::quoted(identity),
        crate::text::quoted(identifier)
    )))
}

/// The endpoints of a DID document's `service` entries (DID Core section
/// 5.4: `serviceEndpoint` is a string, a map or a set of them).
fn service_endpoints(doc: &Value) -> Vec<&str> {
    fn strings<'v>(v: &'v Value, out: &mut Vec<&'v str>, depth: usize) {
        match v {
            Value::String(s) => out.push(s),
            Value::Array(a) if depth < 3 => a.iter().for_each(|x| strings(x, out, depth + 1)),
            Value::Object(o) if depth < 3 => o.values().for_each(|x| strings(x, out, depth + 1)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for s in doc
        .get("service")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
        .iter()
        .take(256)
    {
        if let Some(e) = s.get("serviceEndpoint") {
            strings(e, &mut out, 0);
        }
    }
    out
}

struct Walk<'a> {
    cx: &'a Context,
    policy: &'a JwsPolicy,
    opts: &'a CatalogOptions,
    report: CatalogReport,
    seen_entries: usize,
    fetch: Option<&'a mut dyn Fetch>,
    /// The URLs of the catalogs being verified, root first (a URL met
    /// again on this path is a cycle).
    path: Vec<String>,
    /// Every catalog URL fetched (or the root's): checked once.
    done: std::collections::BTreeSet<String>,
    fetches: usize,
    /// Checks of the root catalog made beforehand.
    premade: Premade,
}

/// A nested catalog to walk after its entry's result: inline or fetched.
enum Nested<'v> {
    Inline(&'v Value),
    Fetched(String, Value),
}

impl Walk<'_> {
    fn lint_error(&mut self, code: &'static str, pointer: String, message: String) {
        self.report.lint.push(LintFinding {
            code,
            severity: "error",
            pointer,
            message,
        });
    }

    /// Lint the catalog at `base` and check its entries.
    fn catalog(&mut self, doc: &Value, base: &str, depth: usize) {
        let lint = match self.premade.lint.take().filter(|_| base.is_empty()) {
            Some(l) => l,
            None => formats::lint_catalog_own(doc),
        };
        for f in lint.findings {
            self.report.lint.push(LintFinding {
                code: f.code,
                severity: if f.severity == Severity::Error {
                    "error"
                } else {
                    "warning"
                },
                pointer: format!("{base}{}", f.pointer),
                message: f.message,
            });
        }
        let Some(entries) = doc.get("entries").and_then(Value::as_array) else {
            return;
        };
        for (i, entry) in entries.iter().enumerate() {
            let pointer = format!("{base}/entries/{i}");
            if self.seen_entries >= self.opts.max_entries {
                self.lint_error(
                    "catalog/too-many-entries",
                    pointer,
                    format!(
                        "more than {} entries in all: the rest are not checked, so the catalog is refused",
                        self.opts.max_entries
                    ),
                );
                return;
            }
            self.seen_entries += 1;
            let pre = if base.is_empty() {
                self.premade.manifests.get_mut(i).and_then(Option::take)
            } else {
                None
            };
            match pre {
                Some(Pre::Entry(r)) => self.report.entries.push(*r),
                Some(Pre::Manifest(m)) => self.entry(entry, pointer, depth, Some(m)),
                None => self.entry(entry, pointer, depth, None),
            }
        }
    }

    /// The host identity (AI Catalog "Verifying Host Identity" steps 1 and
    /// 2): the catalog must have been fetched over HTTPS from the domain
    /// `host.identifier` names (a domain, or an `https` URL's host), or,
    /// for a DID, the DID document must name the hosting origin among its
    /// `service` endpoints (a `did:web` of the hosting domain names it by
    /// construction, so it passes without a fetch). `None` without
    /// `host.identifier`.
    fn host_identity(&mut self, host: &Value, url: Option<&str>) -> Option<Outcome> {
        let identifier = host.get("identifier").and_then(Value::as_str)?;
        let q = crate::text::quoted;
        let Some(origin) = url.and_then(https_host) else {
            return Some(Outcome::new(
                Status::NotChecked,
                format!(
                    "host.identifier {} is not checked: the catalog was not fetched over HTTPS",
                    q(identifier)
                ),
            ));
        };
        let lower = identifier.to_ascii_lowercase();
        if !lower.starts_with("did:") {
            return Some(match identity_domain(identifier) {
                Some(d) if d == origin => Outcome::new(
                    Status::Verified,
                    format!("host.identifier {} is the hosting domain", q(identifier)),
                ),
                Some(d) => Outcome::failed(format!(
                    "host.identifier names the domain {}, but the catalog was fetched from {} (AI Catalog \"Verifying Host Identity\" step 1)",
                    q(&d),
                    q(&origin)
                )),
                None => Outcome::failed(format!(
                    "host.identifier {} is neither a DID nor a domain (AI Catalog \"Host Info\")",
                    q(identifier)
                )),
            });
        }
        let Some(did_host) = did_web_host(identifier) else {
            return Some(Outcome::new(
                Status::Unsupported,
                format!(
                    "host.identifier {}: agentsig reads the service endpoints of did:web documents only",
                    q(identifier)
                ),
            ));
        };
        if did_host == origin {
            return Some(Outcome::new(
                Status::Verified,
                format!(
                    "host.identifier {} is the did:web of the hosting domain",
                    q(identifier)
                ),
            ));
        }
        let doc_url = match crate::did::did_web_url(identifier) {
            Ok(u) => u,
            Err(e) => return Some(Outcome::failed(format!("host.identifier: {e}"))),
        };
        if self.fetch.is_none() {
            return Some(Outcome::new(
                Status::NotChecked,
                "host.identifier's DID document is not fetched",
            ));
        }
        let doc = match self
            .get(&doc_url, "application/did+json")
            .and_then(|b| crate::json::parse_strict(&b).map_err(|e| e.to_string()))
        {
            Ok(d) => d,
            Err(e) => {
                return Some(Outcome::failed(format!(
                    "host.identifier's DID document {}: {e}",
                    q(&doc_url)
                )))
            }
        };
        if doc.get("id").and_then(Value::as_str) != Some(identifier) {
            return Some(Outcome::failed(format!(
                "the DID document at {} is not the document of {} (DID Core section 5.1.1: id)",
                q(&doc_url),
                q(identifier)
            )));
        }
        Some(
            if service_endpoints(&doc)
                .iter()
                .any(|e| https_host(e).as_deref() == Some(origin.as_str()))
            {
                Outcome::new(
                    Status::Verified,
                    format!(
                        "host.identifier {}: its DID document names the hosting domain {} among its service endpoints",
                        q(identifier),
                        q(&origin)
                    ),
                )
            } else {
                Outcome::failed(format!(
                    "host.identifier {}: its DID document names no service endpoint on the hosting domain {} (AI Catalog \"Verifying Host Identity\" step 2)",
                    q(identifier),
                    q(&origin)
                ))
            },
        )
    }

    fn entry(&mut self, entry: &Value, pointer: String, depth: usize, pre: Option<Outcome>) {
        let Some(obj) = entry.as_object() else {
            return; // a lint error already
        };
        let identifier = obj.get("identifier").and_then(Value::as_str);
        let media_type = crate::formats::entry_media_type(obj).ok().flatten();
        let manifest = match (pre, obj.get("trustManifest")) {
            (Some(done), _) => done,
            (None, None) => Outcome::new(Status::Unsigned, "no Trust Manifest"),
            (None, Some(_)) if identifier.is_none() => {
                Outcome::failed("the entry has no identifier to bind its Trust Manifest to")
            }
            (None, Some(_)) => root_manifest(self.cx, self.policy, entry)
                .unwrap_or_else(|| Outcome::failed("the Trust Manifest could not be checked")),
        };
        let (mut manifest, pointer) =
            match inline_entry(self.cx, self.policy, obj, pointer, depth, manifest) {
                Ok(r) => {
                    self.report.entries.push(r);
                    return;
                }
                Err(back) => back,
            };
        if let Some(m) = obj.get("trustManifest") {
            let publisher = obj
                .get("publisher")
                .and_then(|p| p.get("identifier"))
                .and_then(Value::as_str);
            self.attestations(m, publisher, &mut manifest);
        }
        let mut nested = None;
        let mut fetched = false;
        let mut binding = Binding::Unbound;
        let artifact = match (obj.get("data"), media_type) {
            (_, None) => Outcome::failed("the entry declares no media type (mediaType or type)"),
            (None, Some(mt)) => match obj.get("url").and_then(Value::as_str) {
                Some(raw) if self.fetch.is_some() => match self.entry_url(raw) {
                    Err(o) => o,
                    Ok(url) => {
                        let m = obj.get("trustManifest");
                        let mut digests = source_digests(m, &url);
                        if url != raw {
                            digests.extend(source_digests(m, raw));
                        }
                        let (mut o, f) =
                            self.by_url(&url, mt, identifier, &digests, depth, &mut nested);
                        fetched = f;
                        let matched = if f { digests.len() } else { 0 };
                        binding = bind(&mut o, &manifest, mt, matched, "the bytes fetched from its url");
                        o
                    }
                },
                _ => Outcome::new(
                    Status::NotChecked,
                    format!("{mt} referenced by url: not fetched (verify the catalog by its https URL to fetch entries)"),
                ),
            },
            (Some(data), Some(mt)) => {
                if media_type_is(mt, MEDIA_TYPE) {
                    if depth >= self.opts.max_depth {
                        Outcome::failed(format!(
                            "a nested catalog at level {} is deeper than the {}-level limit (AI Catalog ADR 0001)",
                            depth + 1,
                            self.opts.max_depth
                        ))
                    } else {
                        nested = Some(Nested::Inline(data));
                        binding = Binding::Nested;
                        Outcome::new(Status::Verified, format!("nested catalog (level {}): its entries follow", depth + 1))
                    }
                } else {
                    let mut o = inline_artifact(self.cx, self.policy, data, mt, identifier, None);
                    binding = bind_inline(&mut o, &manifest, obj.get("trustManifest"), identifier, data, mt);
                    o
                }
            }
        };
        self.report.entries.push(EntryResult {
            pointer: pointer.clone(),
            identifier: identifier.map(str::to_owned),
            version: obj
                .get("version")
                .and_then(Value::as_str)
                .map(str::to_owned),
            media_type: media_type.map(str::to_owned),
            depth,
            artifact,
            manifest,
            fetched,
            binding,
        });
        match nested {
            Some(Nested::Inline(data)) => self.catalog(data, &format!("{pointer}/data"), depth + 1),
            Some(Nested::Fetched(url, doc)) => {
                self.path.push(url.clone());
                self.catalog(&doc, &format!("{url}#"), depth + 1);
                self.path.pop();
            }
            None => {}
        }
    }

    /// The attestations of `manifest` (AI Catalog "Verifying
    /// Attestations"), when a [`Fetch`] is given: one with a `digest` and
    /// an `https` `uri` is fetched and checked ("If digest is present,
    /// verify the fetched document matches the declared digest"; `size`,
    /// when given, must match too); a `publisher-identity` one is fetched
    /// (or read from its `data:` URI) and verified as a JWT
    /// ([`Walk::publisher_identity`]). Others are reported as not checked
    /// in the outcome's message. The first failure fails `outcome`.
    fn attestations(&mut self, manifest: &Value, publisher: Option<&str>, outcome: &mut Outcome) {
        if matches!(outcome.status, Status::Failed | Status::Unsupported) {
            return;
        }
        let Some(list) = manifest.get("attestations").and_then(Value::as_array) else {
            return;
        };
        let mut notes = Vec::new();
        for (i, a) in list.iter().enumerate() {
            let uri = a.get("uri").and_then(Value::as_str).unwrap_or("");
            let digest = a.get("digest").and_then(Value::as_str);
            let kind = a.get("type").and_then(Value::as_str).unwrap_or("");
            let identity_jwt = kind == "publisher-identity";
            let is_https = uri.starts_with("https://");
            if !(identity_jwt || is_https && digest.is_some()) {
                if !uri.starts_with("data:") || digest.is_none() {
                    notes.push(format!("attestation {i} ({kind}) not checked"));
                }
                continue;
            }
            let body = if is_https {
                if self.fetch.is_none() {
                    notes.push(format!("attestation {i} ({kind}) not fetched"));
                    continue;
                }
                let accept = a.get("mediaType").and_then(Value::as_str).unwrap_or("*/*");
                let problem = match self.get(uri, accept) {
                    Err(e) => Err(format!("could not be fetched: {e}")),
                    Ok(body) => match digest.map(|d| crate::formats::digest_problem(d, &body)) {
                        Some(Err(p)) => Err(p.to_string()),
                        _ => match a
                            .get("size")
                            .and_then(Value::as_u64)
                            .filter(|n| usize::try_from(*n).ok() != Some(body.len()))
                        {
                            Some(n) => Err(format!(
                                "it is {} bytes, not the declared size {n}",
                                body.len()
                            )),
                            None => Ok(body),
                        },
                    },
                };
                match problem {
                    Ok(b) => b,
                    Err(p) => {
                        *outcome = Outcome::failed(format!(
                            "attestation {i} ({}): {p} (AI Catalog \"Verifying Attestations\")",
                            crate::text::quoted(uri)
                        ));
                        return;
                    }
                }
            } else {
                // A `data:` URI's digest was checked with the manifest.
                match super::manifest::data_uri_content(uri) {
                    Some(Ok(b)) => b,
                    _ => {
                        *outcome = Outcome::failed(format!(
                            "attestation {i} (publisher-identity): its uri is neither an https URL nor a data: URI"
                        ));
                        return;
                    }
                }
            };
            if identity_jwt {
                let identity = manifest
                    .get("identity")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                match self.publisher_identity(&body, publisher, identity) {
                    Ok(note) => notes.push(format!("attestation {i}: {note}")),
                    Err(p) => {
                        *outcome = Outcome::failed(format!(
                            "attestation {i} (publisher-identity): {p} (AI Catalog \"Verifying Publisher Identity\")"
                        ));
                        return;
                    }
                }
            }
        }
        if !notes.is_empty() {
            outcome.message = format!("{}; {}", outcome.message, notes.join("; "));
        }
    }

    /// A `publisher-identity` attestation (AI Catalog "Verifying Publisher
    /// Identity"): a compact JWT (RFC 7519) verified by the JWT verifier
    /// (RFC 8725 rules, the algorithm allow-list, `exp` required) with the
    /// keys of its issuer, which must be the entry's
    /// `publisher.identifier` ("Verify the JWT signature against the
    /// publisher's public key (resolved from publisher.identifier)"): its
    /// `iss` is that identifier (RFC 7519 section 4.1.1) and its `sub` the
    /// manifest `identity` (section 4.1.2), the two claims that "bind the
    /// publisher.identifier to the Trust Manifest's identity".
    fn publisher_identity(
        &self,
        body: &[u8],
        publisher: Option<&str>,
        identity: &str,
    ) -> Result<String, String> {
        let Some(publisher) = publisher else {
            return Err("the entry has no publisher.identifier for the attestation to bind".into());
        };
        let token = std::str::from_utf8(body)
            .map_err(|_| "the attestation is not a UTF-8 JWT".to_owned())?
            .trim();
        let policy = crate::policy::JwtPolicy::default().issuers([publisher]);
        let v = crate::jwt::verify(self.cx, &policy, token)
            .map_err(|e| format!("JWT {}: {e}", e.code()))?;
        match v.claims.get("sub").and_then(Value::as_str) {
            Some(s) if s == identity => Ok(format!(
                "publisher-identity JWT verified: {} binds the publisher {} to {}",
                v.evidence.alg,
                crate::text::quoted(publisher),
                crate::text::quoted(identity)
            )),
            Some(s) => Err(format!(
                "the JWT's sub {} is not the Trust Manifest identity {}",
                crate::text::quoted(s),
                crate::text::quoted(identity)
            )),
            None => Err(format!(
                "the JWT has no sub claim naming the Trust Manifest identity {}",
                crate::text::quoted(identity)
            )),
        }
    }

    /// An entry's `url` resolved against the URL of the catalog holding it
    /// (RFC 3986 section 5; the innermost catalog fetched, else the root's
    /// URL), and refused, before any connection, when the fetcher would
    /// refuse it: a [`Status::Failed`] outcome naming why, never an entry
    /// passed over.
    fn entry_url(&self, raw: &str) -> Result<String, Outcome> {
        let q = crate::text::quoted;
        let Some(f) = self.fetch.as_deref() else {
            return Ok(raw.to_owned());
        };
        let url = f
            .resolve_reference(self.path.last().map(String::as_str), raw)
            .map_err(|e| Outcome::failed(format!("url {}: {e}", q(raw))))?;
        match f.refusal(&url) {
            Some(why) => Err(Outcome::failed(format!(
                "{}: {why}: not fetched, no connection made (draft-narvaneni-agent-uri-03 section 5.2; --allow-private-networks opts in)",
                q(&url)
            ))),
            None => Ok(url),
        }
    }

    /// Fetch through [`Walk::fetch`], counting against the bound.
    fn get(&mut self, url: &str, accept: &str) -> Result<Vec<u8>, String> {
        self.count()?;
        match self.fetch.as_deref_mut() {
            Some(f) => f.fetch(url, accept),
            None => Err("nothing is fetched".into()),
        }
    }

    /// [`Fetch::fetch_signed`] with `identifier`'s keys, counting against
    /// the bound.
    fn get_signed(
        &mut self,
        url: &str,
        accept: &str,
        identifier: Option<&str>,
    ) -> Result<SignedBody, String> {
        self.count()?;
        let keys = match identifier {
            Some(id) => super::manifest::context_for(self.cx, id).keys,
            None => self.cx.keys.clone(),
        };
        match self.fetch.as_deref_mut() {
            Some(f) => f.fetch_signed(url, accept, keys),
            None => Err("nothing is fetched".into()),
        }
    }

    fn count(&mut self) -> Result<(), String> {
        if self.fetches >= self.opts.max_fetches {
            return Err(format!(
                "not fetched: the {}-fetch limit of this verification is reached",
                self.opts.max_fetches
            ));
        }
        self.fetches += 1;
        Ok(())
    }

    /// An entry referenced by `url`: a nested catalog (depth, cycle, seen
    /// before), an A2A card or MCP Server Card fetched and checked as an
    /// inline one (a server card with its response signature or detached
    /// JWS too); an artifact of another type is fetched only when its
    /// manifest declares its digest (`digests`). Every declared digest is
    /// checked against the fetched bytes. The flag: whether the artifact
    /// was fetched.
    fn by_url<'v>(
        &mut self,
        url: &str,
        mt: &str,
        identifier: Option<&str>,
        digests: &[(usize, &str)],
        depth: usize,
        nested: &mut Option<Nested<'v>>,
    ) -> (Outcome, bool) {
        let q = crate::text::quoted;
        if media_type_is(mt, MEDIA_TYPE) {
            if self.path.iter().any(|p| p == url) {
                return (Outcome::failed(format!(
                    "cycle: the nested catalog {} is one of the catalogs that contain it (AI Catalog \"Nested Catalog Entries\")",
                    q(url)
                )), false);
            }
            if depth >= self.opts.max_depth {
                return (Outcome::failed(format!(
                    "a nested catalog at level {} is deeper than the {}-level limit (AI Catalog ADR 0001): not fetched",
                    depth + 1,
                    self.opts.max_depth
                )), false);
            }
            if self.done.contains(url) {
                return (
                    Outcome::new(
                        Status::NotChecked,
                        format!("nested catalog {} already verified above", q(url)),
                    ),
                    false,
                );
            }
            self.done.insert(url.to_owned());
            let doc = match self.get(url, MEDIA_TYPE).and_then(|b| {
                check_digests(digests, &b)?;
                parse_catalog(&b, self.opts).map_err(|e| e.to_string())
            }) {
                Ok(d) => d,
                Err(e) => {
                    return (
                        Outcome::failed(format!("nested catalog {}: {e}", q(url))),
                        true,
                    )
                }
            };
            *nested = Some(Nested::Fetched(url.to_owned(), doc));
            return (
                Outcome::new(
                    Status::Verified,
                    format!(
                        "nested catalog (level {}) fetched: its entries follow",
                        depth + 1
                    ),
                ),
                true,
            );
        }
        let a2a = media_type_is(mt, A2A_CARD_MEDIA_TYPE);
        let mcp = media_type_is(mt, MCP_SERVER_CARD_MEDIA_TYPE);
        if !(a2a || mcp || !digests.is_empty()) {
            return (
                Outcome::new(
                    Status::NotChecked,
                    format!("{mt}: a media type agentsig does not check and no declared digest, so not fetched"),
                ),
                false,
            );
        }
        let (body, signature) = if mcp {
            match self.get_signed(url, mt, identifier) {
                Ok(s) if s.signature.status == Status::Failed => {
                    return (
                        Outcome::failed(format!("{}: {}", q(url), s.signature.message)),
                        true,
                    )
                }
                Ok(s) if s.body.is_empty() && s.signature.status != Status::Verified => {
                    return (
                        Outcome::new(
                            s.signature.status,
                            format!("{}: {}", q(url), s.signature.message),
                        ),
                        true,
                    )
                }
                Ok(s) => (s.body, Some(s.signature)),
                Err(e) => return (Outcome::failed(format!("{}: {e}", q(url))), false),
            }
        } else {
            match self.get(url, mt) {
                Ok(b) => (b, None),
                Err(e) => return (Outcome::failed(format!("{}: {e}", q(url))), false),
            }
        };
        if let Err(e) = check_digests(digests, &body) {
            return (Outcome::failed(format!("{}: {e}", q(url))), true);
        }
        let o = if a2a || mcp {
            match crate::json::parse_strict(&body) {
                Ok(v) => inline_artifact(self.cx, self.policy, &v, mt, identifier, signature),
                Err(e) => Outcome::failed(format!("{}: not strict JSON: {e}", q(url))),
            }
        } else {
            Outcome::new(
                Status::NotChecked,
                format!("{mt}: fetched; not checked by rules of its own"),
            )
        };
        (o, true)
    }
}

/// An artifact, checked by its own rules: an A2A card by its embedded
/// signatures; an MCP Server Card linted, and verified only by a
/// signature of its own (`signature`: its response signature or
/// detached JWS when it was fetched; an inline card has neither, so it
/// is unsigned).
fn inline_artifact(
    cx: &Context,
    policy: &JwsPolicy,
    data: &Value,
    mt: &str,
    identifier: Option<&str>,
    signature: Option<Outcome>,
) -> Outcome {
    if media_type_is(mt, A2A_CARD_MEDIA_TYPE) {
        if data.get("signatures").is_none() {
            return Outcome::new(Status::Unsigned, "A2A Agent Card without signatures");
        }
        // The card's keys are the entry identity's, as the manifest's.
        let cx = match identifier {
            Some(id) => super::manifest::context_for(cx, id),
            None => cx.clone(),
        };
        return match crate::a2a::verify_card(&cx, policy, data) {
            Ok(r) => {
                let mut o = Outcome::new(
                    Status::Verified,
                    "A2A Agent Card signature verified (A2A v1.0 section 8.4)",
                );
                if let Some(s) = r
                    .signatures
                    .iter()
                    .flatten()
                    .find_map(|j| j.valid_signature())
                {
                    o.kid = s.kid.clone();
                    o.key_thumbprint = s.key_thumbprint.clone();
                }
                o
            }
            // The one verdict rule (crate::policy::signatures_verified):
            // signatures by keys that are not trusted are not checked,
            // one that fails with a trusted key is invalid.
            Err(crate::a2a::A2aError::NotVerified(r)) if !r.any_invalid() => Outcome::new(
                Status::NotChecked,
                "A2A Agent Card signed by no key trusted for this identity: not checked (A2A v1.0 section 8.4)",
            ),
            Err(e) => Outcome::failed(format!("A2A Agent Card: {e}")),
        };
    }
    if media_type_is(mt, MCP_SERVER_CARD_MEDIA_TYPE) {
        let r = formats::lint(Format::McpServerCard, data);
        // A local trial's opt-in (Context::internal_endpoints) accepts
        // endpoints on internal hosts; every other error stands.
        let counted = |f: &&formats::Finding| !(cx.internal_endpoints && f.code == "addr/internal");
        if let Some(f) = r.errors().find(counted) {
            return Outcome::failed(format!(
                "MCP Server Card: {} at {}: {} ({} error(s))",
                f.code,
                f.pointer,
                f.message,
                r.errors().filter(counted).count()
            ));
        }
        let clean = if r.errors().any(|f| f.code == "addr/internal") {
            "MCP Server Card lints clean (schema.json) but for its endpoints on internal hosts, accepted for a local trial"
        } else {
            "MCP Server Card lints clean (schema.json)"
        };
        return match signature {
            None => Outcome::new(
                Status::Unsigned,
                format!("{clean}; inline, so it carries neither a response signature nor a detached JWS of its own"),
            ),
            Some(s) if s.status == Status::Verified => Outcome {
                message: format!(
                    "{clean}; {} (it proves who published the card, nothing about how the server behaves: MCP Server Card docs/discovery.md)",
                    s.message
                ),
                ..s
            },
            Some(s) => Outcome::new(
                s.status,
                format!("{clean}; {}", s.message),
            ),
        };
    }
    Outcome::new(
        Status::NotChecked,
        format!("{mt}: a media type agentsig does not check (opaque to the catalog)"),
    )
}

/// The provenance links of `manifest` that declare the digest of the
/// entry's own `url` (`sourceId` equal to it) with a `sourceDigest`: AI
/// Catalog "Verifying Artifact Integrity" ("Fetch the artifact content from
/// the entry's url ... Compare the computed digest to the declared value").
/// A link naming another source (a repository, a commit) declares the
/// digest of something agentsig does not fetch: not checked.
fn source_digests<'v>(manifest: Option<&'v Value>, url: &str) -> Vec<(usize, &'v str)> {
    manifest
        .and_then(|m| m.get("provenance"))
        .and_then(Value::as_array)
        .map(|links| {
            links
                .iter()
                .enumerate()
                .filter(|(_, l)| l.get("sourceId").and_then(Value::as_str) == Some(url))
                .filter_map(|(i, l)| Some((i, l.get("sourceDigest")?.as_str()?)))
                .collect()
        })
        .unwrap_or_default()
}

/// Every declared digest against `body` (AI Catalog "Digest Format":
/// weaker than SHA-256 refused; "Reject the artifact if they differ").
fn check_digests(digests: &[(usize, &str)], body: &[u8]) -> Result<(), String> {
    for (i, d) in digests {
        crate::formats::digest_problem(d, body).map_err(|p| {
            format!(
                "provenance {i} sourceDigest: {p} (AI Catalog \"Verifying Artifact Integrity\")"
            )
        })?;
    }
    Ok(())
}
