//! Verify a catalog document at hand: lint (every MUST of the catalog
//! text, [`crate::formats::CATALOG_RULES`]), the host's and each entry's
//! Trust Manifest ([`super::manifest`]), and each inline artifact by its
//! media type. One [`EntryResult`] per entry, nested catalogs included (to
//! [`super::MAX_DEPTH`] levels). Entries referenced by `url` are reported
//! [`Status::NotChecked`] unless a [`Fetch`] is given
//! ([`Verifier::verify_catalog_from`](crate::Verifier::verify_catalog_from)); the `net` feature supplies the SSRF-guarded
//! one.

use super::manifest::verify_manifest;
pub use super::outcome::{Outcome, Status};
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
}

impl EntryResult {
    /// Does this entry pass: nothing failed or unsupported, and (with
    /// `require_signed`) a verified manifest.
    pub fn passed(&self, require_signed: bool) -> bool {
        let bad = |s: Status| matches!(s, Status::Failed | Status::Unsupported);
        !bad(self.artifact.status)
            && !bad(self.manifest.status)
            && (!require_signed || self.manifest.status == Status::Verified)
    }
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
}

impl Default for CatalogOptions {
    fn default() -> Self {
        CatalogOptions {
            require_signed: false,
            max_bytes: MAX_CATALOG_BYTES,
            max_entries: MAX_ENTRIES,
            max_depth: MAX_DEPTH,
            max_fetches: super::MAX_FETCHES,
        }
    }
}

impl CatalogOptions {
    /// Require a verified Trust Manifest on every entry.
    pub fn require_signed(mut self, on: bool) -> Self {
        self.require_signed = on;
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
    /// One result per entry, in document order (a nested catalog's entries
    /// right after the entry that holds it).
    pub entries: Vec<EntryResult>,
    /// Whether every entry had to carry a verified manifest.
    pub require_signed: bool,
}

impl CatalogReport {
    /// Everything present verified: no lint error, the host manifest (when
    /// signed) verified, every entry [`EntryResult::passed`].
    pub fn verified(&self) -> bool {
        !self.lint.iter().any(|f| f.severity == "error")
            && self
                .host
                .as_ref()
                .is_none_or(|h| !matches!(h.status, Status::Failed | Status::Unsupported))
            && self.entries.iter().all(|e| e.passed(self.require_signed))
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
        self.entries
            .iter()
            .find(|e| !e.passed(self.require_signed))
            .map(|e| {
                let o = if matches!(e.artifact.status, Status::Failed | Status::Unsupported) {
                    &e.artifact
                } else {
                    &e.manifest
                };
                let msg = if self.require_signed && o.status == Status::Unsigned {
                    format!("{} (a verified Trust Manifest is required)", o.message)
                } else {
                    o.message.clone()
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
}

/// Verify a catalog document under `cx` (keys, algorithm allow-list) and
/// `policy`, the root entries' manifests checked on all cores
/// ([`parallel_manifests`]); the one public way is
/// [`Verifier::verify_catalog`](crate::verifier::Verifier::verify_catalog).
///
/// # Errors
/// [`CatalogError`] when the document is too large or not strict JSON;
/// everything else is in the [`CatalogReport`].
pub(crate) fn verify_catalog(
    cx: &Context,
    policy: &JwsPolicy,
    bytes: &[u8],
    opts: &CatalogOptions,
) -> Result<CatalogReport, CatalogError> {
    let doc = parse_catalog(bytes, opts)?;
    let premade = parallel_manifests(cx, policy, &doc, opts);
    Ok(verify_catalog_doc(
        cx, policy, &doc, opts, None, None, premade,
    ))
}

/// Checks of the root catalog made before the walk, on other threads.
#[derive(Default)]
struct Premade {
    /// The root catalog's lint.
    lint: Option<formats::LintReport>,
    /// The root entries' manifest checks, by entry index.
    manifests: Vec<Option<Outcome>>,
}

/// The root entries' manifest checks ([`root_manifest`]) on all cores, by
/// entry index, with the root catalog's lint on one more thread meanwhile
/// (it costs as much as a few dozen signature checks and needs none of
/// them), for a catalog of at least 64 entries on more than one core (else
/// nothing: the walk does it all in turn). One worker per core takes
/// batches of entries from a shared counter (each check costs about one
/// signature verification); results go back to their entry's index, so
/// document order is kept. Within
/// [`CatalogOptions::max_entries`]. A catalog fetched by URL is not checked
/// this way: its key fetches run under the caller's deadline, which is the
/// calling thread's.
fn parallel_manifests(
    cx: &Context,
    policy: &JwsPolicy,
    doc: &Value,
    opts: &CatalogOptions,
) -> Premade {
    let Some(entries) = doc.get("entries").and_then(Value::as_array) else {
        return Premade::default();
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(16));
    let entries = &entries[..entries.len().min(opts.max_entries)];
    if entries.len() < 64 || threads < 2 {
        return Premade::default();
    }
    // Work is taken in batches of 16 entries from a shared counter, so a
    // core that also runs the lint (or another process) takes fewer.
    const BATCH: usize = 16;
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        let lint = s.spawn(|| formats::lint(Format::AiCatalog, doc));
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let next = &next;
                s.spawn(move || {
                    let mut done = Vec::new();
                    loop {
                        let at = next.fetch_add(BATCH, std::sync::atomic::Ordering::Relaxed);
                        let Some(batch) = entries.get(at..(at + BATCH).min(entries.len())) else {
                            break;
                        };
                        if batch.is_empty() {
                            break;
                        }
                        for (i, e) in batch.iter().enumerate() {
                            done.push((at + i, root_manifest(cx, policy, e)));
                        }
                    }
                    done
                })
            })
            .collect();
        let mut manifests = vec![None; entries.len()];
        for w in workers {
            match w.join() {
                Ok(part) => {
                    for (i, o) in part {
                        if let Some(slot) = manifests.get_mut(i) {
                            *slot = o;
                        }
                    }
                }
                // A check that panicked: the walk checks those entries
                // again on this thread, so the panic is reported there.
                Err(_) => {
                    manifests.clear();
                    break;
                }
            }
        }
        Premade {
            lint: lint.join().ok(),
            manifests,
        }
    })
}

/// The root entry's manifest check, as [`Walk`] makes it: `None` for an
/// entry without a manifest or without an identifier (the walk reports
/// those itself).
fn root_manifest(cx: &Context, policy: &JwsPolicy, entry: &Value) -> Option<Outcome> {
    let m = entry.get("trustManifest")?;
    let id = entry.get("identifier").and_then(Value::as_str)?;
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
fn verify_catalog_doc<'a>(
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
            entries: Vec::new(),
            require_signed: opts.require_signed,
        },
        seen_entries: 0,
        premade,
    };
    w.report.host = doc
        .get("host")
        .and_then(|h| h.get("trustManifest"))
        .map(|m| verify_manifest(cx, policy, m, None));
    w.catalog(doc, "", 1);
    w.report
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
            None => formats::lint(Format::AiCatalog, doc),
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
            self.entry(entry, pointer, depth, pre);
        }
    }

    fn entry(&mut self, entry: &Value, pointer: String, depth: usize, pre: Option<Outcome>) {
        let Some(obj) = entry.as_object() else {
            return; // a lint error already
        };
        let identifier = obj.get("identifier").and_then(Value::as_str);
        let media_type = crate::formats::entry_media_type(obj).ok().flatten();
        let mut manifest = match (pre, obj.get("trustManifest")) {
            (Some(done), _) => done,
            (None, None) => Outcome::new(Status::Unsigned, "no Trust Manifest"),
            (None, Some(_)) if identifier.is_none() => {
                Outcome::failed("the entry has no identifier to bind its Trust Manifest to")
            }
            (None, Some(_)) => root_manifest(self.cx, self.policy, entry)
                .unwrap_or_else(|| Outcome::failed("the Trust Manifest could not be checked")),
        };
        if let Some(m) = obj.get("trustManifest") {
            self.attestations(m, &mut manifest);
        }
        let mut nested = None;
        let artifact = match (obj.get("data"), media_type) {
            (_, None) => Outcome::failed("the entry declares no media type (mediaType or type)"),
            (None, Some(mt)) => match obj.get("url").and_then(Value::as_str) {
                Some(url) if self.fetch.is_some() => {
                    self.by_url(url, mt, identifier, depth, &mut nested)
                }
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
                        Outcome::new(Status::Verified, format!("nested catalog (level {}): its entries follow", depth + 1))
                    }
                } else {
                    self.inline_artifact(data, mt, identifier)
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

    /// The attestations of `manifest` with a `digest` and an `https` `uri`,
    /// fetched and checked when a [`Fetch`] is given (AI Catalog "Verifying
    /// Attestations": "If digest is present, verify the fetched document
    /// matches the declared digest"; `size`, when given, must match too).
    /// The first mismatch fails `outcome`.
    fn attestations(&mut self, manifest: &Value, outcome: &mut Outcome) {
        if self.fetch.is_none() || matches!(outcome.status, Status::Failed | Status::Unsupported) {
            return;
        }
        let Some(list) = manifest.get("attestations").and_then(Value::as_array) else {
            return;
        };
        for (i, a) in list.iter().enumerate() {
            let (Some(uri), Some(d)) = (
                a.get("uri").and_then(Value::as_str),
                a.get("digest").and_then(Value::as_str),
            ) else {
                continue;
            };
            if !uri.starts_with("https://") {
                continue;
            }
            let accept = a.get("mediaType").and_then(Value::as_str).unwrap_or("*/*");
            let problem = match self.get(uri, accept) {
                Err(e) => Some(format!("could not be fetched: {e}")),
                Ok(body) => match crate::formats::digest_problem(d, &body) {
                    Err(p) => Some(p.to_string()),
                    Ok(()) => a
                        .get("size")
                        .and_then(Value::as_u64)
                        .filter(|n| usize::try_from(*n).ok() != Some(body.len()))
                        .map(|n| format!("it is {} bytes, not the declared size {n}", body.len())),
                },
            };
            if let Some(p) = problem {
                *outcome = Outcome::failed(format!(
                    "attestation {i} ({}): {p} (AI Catalog \"Verifying Attestations\")",
                    crate::text::quoted(uri)
                ));
                return;
            }
        }
    }

    /// Fetch through [`Walk::fetch`], counting against the bound.
    fn get(&mut self, url: &str, accept: &str) -> Result<Vec<u8>, String> {
        if self.fetches >= self.opts.max_fetches {
            return Err(format!(
                "not fetched: the {}-fetch limit of this verification is reached",
                self.opts.max_fetches
            ));
        }
        self.fetches += 1;
        match self.fetch.as_deref_mut() {
            Some(f) => f.fetch(url, accept),
            None => Err("nothing is fetched".into()),
        }
    }

    /// An entry referenced by `url`: a nested catalog (depth, cycle, seen
    /// before), an A2A card or MCP Server Card fetched and checked as an
    /// inline one; other types are not fetched.
    fn by_url<'v>(
        &mut self,
        url: &str,
        mt: &str,
        identifier: Option<&str>,
        depth: usize,
        nested: &mut Option<Nested<'v>>,
    ) -> Outcome {
        if media_type_is(mt, MEDIA_TYPE) {
            if self.path.iter().any(|p| p == url) {
                return Outcome::failed(format!(
                    "cycle: the nested catalog {} is one of the catalogs that contain it (AI Catalog \"Nested Catalog Entries\")",
                    crate::text::quoted(url)
                ));
            }
            if depth >= self.opts.max_depth {
                return Outcome::failed(format!(
                    "a nested catalog at level {} is deeper than the {}-level limit (AI Catalog ADR 0001): not fetched",
                    depth + 1,
                    self.opts.max_depth
                ));
            }
            if self.done.contains(url) {
                return Outcome::new(
                    Status::NotChecked,
                    format!(
                        "nested catalog {} already verified above",
                        crate::text::quoted(url)
                    ),
                );
            }
            self.done.insert(url.to_owned());
            let doc = match self.get(url, MEDIA_TYPE) {
                Ok(b) => match parse_catalog(&b, self.opts) {
                    Ok(d) => d,
                    Err(e) => {
                        return Outcome::failed(format!(
                            "nested catalog {}: {e}",
                            crate::text::quoted(url)
                        ))
                    }
                },
                Err(e) => {
                    return Outcome::failed(format!(
                        "nested catalog {}: {e}",
                        crate::text::quoted(url)
                    ))
                }
            };
            *nested = Some(Nested::Fetched(url.to_owned(), doc));
            return Outcome::new(
                Status::Verified,
                format!(
                    "nested catalog (level {}) fetched: its entries follow",
                    depth + 1
                ),
            );
        }
        if !(media_type_is(mt, A2A_CARD_MEDIA_TYPE)
            || media_type_is(mt, MCP_SERVER_CARD_MEDIA_TYPE))
        {
            return Outcome::new(
                Status::NotChecked,
                format!("{mt}: a media type agentsig does not check, so not fetched"),
            );
        }
        match self.get(url, mt) {
            Ok(b) => match crate::json::parse_strict(&b) {
                Ok(v) => self.inline_artifact(&v, mt, identifier),
                Err(e) => Outcome::failed(format!(
                    "{}: not strict JSON: {e}",
                    crate::text::quoted(url)
                )),
            },
            Err(e) => Outcome::failed(format!("{}: {e}", crate::text::quoted(url))),
        }
    }

    /// An inline artifact, checked by its own rules.
    fn inline_artifact(&self, data: &Value, mt: &str, identifier: Option<&str>) -> Outcome {
        if media_type_is(mt, A2A_CARD_MEDIA_TYPE) {
            if data.get("signatures").is_none() {
                return Outcome::new(Status::Unsigned, "A2A Agent Card without signatures");
            }
            // The card's keys are the entry identity's, as the manifest's.
            let cx = match identifier {
                Some(id) => super::manifest::context_for(self.cx, id),
                None => self.cx.clone(),
            };
            return match crate::a2a::verify_card(&cx, self.policy, data) {
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
                Err(e) => Outcome::failed(format!("A2A Agent Card: {e}")),
            };
        }
        if media_type_is(mt, MCP_SERVER_CARD_MEDIA_TYPE) {
            let r = formats::lint(Format::McpServerCard, data);
            return match r.errors().next() {
                None => Outcome::new(
                    Status::Verified,
                    "MCP Server Card lints clean (schema.json)",
                ),
                Some(f) => Outcome::failed(format!(
                    "MCP Server Card: {} at {}: {} ({} error(s))",
                    f.code,
                    f.pointer,
                    f.message,
                    r.errors().count()
                )),
            };
        }
        Outcome::new(
            Status::NotChecked,
            format!("{mt}: a media type agentsig does not check (opaque to the catalog)"),
        )
    }
}
