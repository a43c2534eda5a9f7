//! Keys for a catalog's Trust Manifests, resolved from each manifest's
//! `identity` (AI Catalog "Key Resolution"):
//!
//! * a DID (`did:key`, `did:jwk`, `did:web`): its DID document's
//!   `verificationMethod` keys, through [`Discovery`] with
//!   [`KeyAuthority::Did`] (did:web fetched through the SSRF-guarded
//!   [`Fetcher`]);
//! * an `https:` URL: the JWK Set at that URL, the key chosen by the JWS
//!   `kid` ([`KeyAuthority::JwksUri`]);
//! * SPIFFE IDs and DNS names (and any other scheme): agentsig has no way to
//!   obtain their keys, so a signed manifest with such an identity is
//!   reported [`Status::Unsupported`], never passed.
//!
//! Each identity's keys are bound to it ([`IdentityResolver`], keyed by the
//! issuer every manifest key request carries): a manifest signed with
//! another identity's key does not verify. Keys are fetched lazily, only for
//! manifests that carry a signature.
//!
//! [`verify_catalog_url`] fetches a catalog and, through the same
//! SSRF-guarded fetcher, its nested catalogs and cards (AI Catalog "Nested
//! Catalog Entries": bounded depth, cycles detected; "Security
//! Considerations": fetched content is untrusted); an MCP Server Card by
//! `url` is verified by [`Resolver::verify_url`], the code of `verify URL`
//! (RFC 9421 response signature with RFC 9530 `Content-Digest`, or the
//! detached JWS at `URL.jws`). [`well_known_catalog_url`] names a host's
//! catalog (AI Catalog "Well-Known URI"); [`expand_catalog_url`] and
//! [`expand_catalog_bytes`] make a catalog a source of `verify --batch`.

use super::discovery::{Discovery, KeyAuthority};
use super::fetch::{FetchBudget, FetchError, Fetcher};
use super::verify::{Resolver, UrlVerifyError, UrlVerifyOptions};
use crate::catalog::verify::SignedBody;
use crate::catalog::{
    CatalogError, CatalogInput, CatalogOptions, CatalogReport, Fetch, Outcome, Status,
};
use crate::trust::{KeyRequest, KeyResolver, ResolveError, TrustedKey};
use crate::verifier::Verifier;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How the keys of a manifest `identity` are found.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum IdentityKind {
    /// A DID: its DID document.
    Did,
    /// An `https:` URL: the JWK Set there.
    JwksUrl,
    /// No way agentsig supports; the text says which and why.
    Unsupported(String),
}

/// Classify a manifest `identity` by its URI scheme (AI Catalog "Key
/// Resolution"), with `identityType` as a hint for `dns`.
pub fn identity_kind(identity: &str, identity_type: Option<&str>) -> IdentityKind {
    let lower = identity.to_ascii_lowercase();
    if identity_type.is_some_and(|t| t.eq_ignore_ascii_case("dns")) {
        return IdentityKind::Unsupported(
            "a DNS identity's key (TLS certificate, DNSKEY or TXT record) cannot be resolved by agentsig".into(),
        );
    }
    if lower.starts_with("did:") {
        IdentityKind::Did
    } else if lower.starts_with("https://") {
        IdentityKind::JwksUrl
    } else if lower.starts_with("spiffe://") {
        IdentityKind::Unsupported(
            "a SPIFFE ID's key comes from the SPIFFE Workload API, which agentsig does not use"
                .into(),
        )
    } else {
        IdentityKind::Unsupported(format!(
            "{} names no key source agentsig can resolve (a DID or an https JWK Set URL); give the keys with --key or --jwks",
            crate::text::quoted(identity)
        ))
    }
}

/// Keys asked for by issuer (the manifest identity, [`crate::catalog`]):
/// each identity's [`Discovery`], made on first use and kept, so only the
/// identities of signed manifests cost a fetch. An identity agentsig cannot
/// resolve answers with an error naming why.
#[derive(Debug)]
pub struct IdentityResolver {
    fetcher: Fetcher,
    by_identity: Mutex<BTreeMap<String, Arc<Discovery>>>,
    max_identities: usize,
}

impl IdentityResolver {
    /// Resolve identities through `fetcher`; at most 256 distinct identities.
    pub fn new(fetcher: Fetcher) -> IdentityResolver {
        IdentityResolver {
            fetcher,
            by_identity: Mutex::new(BTreeMap::new()),
            max_identities: 256,
        }
    }
}

impl KeyResolver for IdentityResolver {
    fn resolve(&self, req: &KeyRequest) -> Result<Vec<TrustedKey>, ResolveError> {
        let Some(identity) = req.issuer.as_deref() else {
            return Ok(Vec::new());
        };
        // An `https` identity names the JWK Set at that URL; its fragment
        // (`https://host/jwks.json#planner`, as `serve` names one entry
        // per artifact under one key) is never sent (RFC 3986 section
        // 3.5), so every identity differing only there shares one
        // discovery: one fetch, one slot of the identity bound.
        let (identity, authority) = match identity_kind(identity, None) {
            IdentityKind::Did => (identity, KeyAuthority::Did(identity.to_owned())),
            IdentityKind::JwksUrl => {
                let url = identity.split('#').next().unwrap_or(identity);
                (url, KeyAuthority::JwksUri(url.to_owned()))
            }
            IdentityKind::Unsupported(why) => return Err(ResolveError::discovery(why)),
        };
        let d = {
            let mut m = self
                .by_identity
                .lock()
                .map_err(|_| ResolveError::discovery("identity resolver state poisoned"))?;
            if !m.contains_key(identity) && m.len() >= self.max_identities {
                return Err(ResolveError::discovery(format!(
                    "more than {} identities in one catalog: not resolved",
                    self.max_identities
                )));
            }
            m.entry(identity.to_owned())
                .or_insert_with(|| Arc::new(Discovery::new(self.fetcher.clone(), authority)))
                .clone()
        };
        d.resolve(req)
    }
}

/// Where a catalog's manifest keys come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CatalogKeys {
    /// The verifier's own keys, trusted for every identity.
    Given,
    /// Each manifest identity's keys, resolved ([`IdentityResolver`]).
    Resolved,
}

/// A verifier with `base`'s algorithm allow-list, JWS policy, limits,
/// ECDSA and internal-endpoint settings, over each identity's resolved keys.
fn resolving(base: &Verifier, fetcher: &Fetcher) -> Verifier {
    Verifier::builder(IdentityResolver::new(fetcher.clone()))
        .algorithms(base.algorithms().clone())
        .jws(base.jws_policy().clone())
        .limits(*base.limits())
        .strict_low_s(base.strict_low_s())
        .key_headers(base.key_headers())
        .allow_internal_endpoints(base.context().internal_endpoints())
        .build()
}

/// A signed manifest whose identity's keys agentsig cannot resolve is
/// [`Status::Unsupported`], not merely "no trusted key".
fn mark_unsupported(report: &mut CatalogReport, host_identity: Option<&str>) {
    let patch = |o: &mut Outcome, identity: Option<&str>| {
        if o.status != Status::Failed || !o.message.contains("does not verify with a key of") {
            return;
        }
        if let Some(IdentityKind::Unsupported(why)) = identity.map(|i| identity_kind(i, None)) {
            *o = Outcome::new(
                Status::Unsupported,
                format!("Trust Manifest key resolution: {why}"),
            );
        }
    };
    if let Some(h) = report.host.as_mut() {
        patch(h, host_identity);
    }
    for e in &mut report.entries {
        let id = e.identifier.clone();
        patch(&mut e.manifest, id.as_deref());
        // A server card signed for an identity with no key source: its
        // signature could not be checked, which is not the same as bad.
        if e.artifact.status == Status::Failed
            && e.artifact.message.contains("(keys.resolve-failed)")
        {
            if let Some(IdentityKind::Unsupported(why)) =
                id.as_deref().map(|i| identity_kind(i, None))
            {
                e.artifact = Outcome::new(
                    Status::Unsupported,
                    format!("the card's signature key resolution: {why}"),
                );
            }
        }
    }
}

fn host_identity(catalog: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(catalog).ok()?;
    v.get("host")?
        .get("trustManifest")?
        .get("identity")?
        .as_str()
        .map(str::to_owned)
}

/// Verify a catalog document, each manifest's key resolved from its
/// `identity` through `fetcher`; `base` gives the algorithm allow-list,
/// the JWS policy, limits and ECDSA low-S setting (its own keys are not
/// used).
///
/// # Errors
/// [`CatalogError`] when the document is too large or not strict JSON.
pub fn verify_catalog_resolved(
    base: &Verifier,
    fetcher: &Fetcher,
    catalog: &[u8],
    opts: &CatalogOptions,
) -> Result<CatalogReport, CatalogError> {
    let fetcher = &budgeted(fetcher, opts);
    let v = resolving(base, fetcher);
    let mut report = v.verify_catalog(catalog, opts)?;
    mark_unsupported(&mut report, host_identity(catalog).as_deref());
    Ok(report)
}

/// Most bytes fetched in all for one catalog verification (the root
/// catalog, nested catalogs, cards): 32 MiB.
pub const MAX_TOTAL_BYTES: usize = 32 * 1024 * 1024;
/// Longest a whole catalog verification may take.
pub const DEADLINE: Duration = Duration::from_secs(120);

/// The bounds of one catalog job ([`FetchBudget`]): at most
/// [`CatalogOptions::max_fetches`] requests (documents, nested catalogs,
/// cards and their detached JWS, key sets, DID documents, publisher JWT
/// issuers' keys, all together), [`MAX_TOTAL_BYTES`] in all and
/// [`DEADLINE`]; a request past them is refused with the reason
/// (`catalog.budget`). `verify --batch` over a catalog gives one budget to
/// the expansion and the entry checks together.
pub fn job_budget(opts: &CatalogOptions) -> Arc<FetchBudget> {
    Arc::new(FetchBudget::new(
        "one catalog (no option raises this bound)",
        opts.max_fetches,
        MAX_TOTAL_BYTES,
        DEADLINE,
    ))
}

/// `fetcher` counting toward a catalog job's bounds: its own budget when
/// it carries one already (a job that began before), else a new one.
fn budgeted(fetcher: &Fetcher, opts: &CatalogOptions) -> Fetcher {
    match fetcher.budget() {
        Some(_) => fetcher.clone(),
        None => fetcher.with_budget(job_budget(opts)),
    }
}

/// The SSRF-guarded fetcher as a [`Fetch`]: `https` only (the fetcher
/// refuses private, loopback and link-local addresses before connecting
/// unless its policy allows them), each body bounded by the fetcher's
/// policy (a nested catalog by `max_catalog`) and all of them by
/// `max_total`.
struct NetFetch<'a> {
    fetcher: &'a Fetcher,
    total: usize,
    max_total: usize,
    /// The largest catalog document ([`CatalogOptions::max_bytes`]): a
    /// catalog fetched may be as large as one read from a file.
    max_catalog: usize,
    /// The base verifier's algorithm allow-list and low-S rule, for the
    /// signatures of fetched cards.
    algorithms: crate::alg::AllowList,
    strict_low_s: bool,
}

impl<'a> NetFetch<'a> {
    fn new(fetcher: &'a Fetcher, opts: &CatalogOptions) -> NetFetch<'a> {
        NetFetch {
            fetcher,
            total: 0,
            max_total: MAX_TOTAL_BYTES,
            max_catalog: opts.max_bytes,
            algorithms: crate::alg::AllowList::default(),
            strict_low_s: false,
        }
    }

    fn https_only(url: &str) -> Result<(), String> {
        if url.starts_with("https://") {
            Ok(())
        } else {
            Err(format!(
                "{} is not an https URL: entries are fetched over HTTPS only",
                crate::text::quoted(url)
            ))
        }
    }

    fn add(&mut self, len: usize) -> Result<(), String> {
        self.total += len;
        if self.total > self.max_total {
            return Err(format!(
                "more than {} bytes fetched in all: not used",
                self.max_total
            ));
        }
        Ok(())
    }
}

impl Fetch for NetFetch<'_> {
    fn fetch(&mut self, url: &str, accept: &str) -> Result<Vec<u8>, String> {
        Self::https_only(url)?;
        let wanted = format!("{accept}, application/json;q=0.5");
        let headers = [("accept", wanted.as_str())];
        // A document asked for as an AI Catalog (a nested catalog) has the
        // catalog limit, as the root has; anything else the fetcher's own.
        let f = if crate::catalog::media_type_is(accept, crate::catalog::MEDIA_TYPE) {
            self.fetcher.get_with_limit(url, &headers, self.max_catalog)
        } else {
            self.fetcher.get_with(url, &headers)
        }
        .map_err(|e| e.to_string())?;
        if f.status != 200 {
            return Err(format!("HTTP status {}", f.status));
        }
        self.add(f.body.len())?;
        Ok(f.body)
    }

    /// RFC 3986 section 5 reference resolution ([`url::Url::join`]).
    fn resolve_reference(&self, base: Option<&str>, reference: &str) -> Result<String, String> {
        if url::Url::parse(reference).is_ok() {
            return Ok(reference.to_owned());
        }
        let base = base.ok_or("a relative url, and no catalog URL to resolve it against")?;
        url::Url::parse(base)
            .and_then(|b| b.join(reference))
            .map(|u| u.to_string())
            .map_err(|e| {
                format!(
                    "cannot be resolved against {}: {e}",
                    crate::text::quoted(base)
                )
            })
    }

    /// The fetcher's own check before connecting ([`Fetcher::precheck`]):
    /// not `https`, or a host (a name such as `localhost`, an IP literal)
    /// that is private, loopback or link-local under its policy.
    fn refusal(&self, url: &str) -> Option<String> {
        match self.fetcher.precheck(url) {
            Err(e) if e.is_refusal() => Some(e.to_string()),
            _ => None,
        }
    }

    /// The card at `url` verified as `verify URL` verifies a descriptor
    /// ([`Resolver::verify_url`]): its `Content-Digest` (RFC 9530), its
    /// RFC 9421 response signature and its detached JWS at `URL.jws`
    /// (draft-narvaneni-agent-uri-03 section 10.3), with `keys` only (the
    /// entry identity's). The one verdict rule
    /// ([`crate::policy::signatures_verified`]) decides: one signature
    /// verified and none invalid; a signature no trusted key matches is
    /// never passed.
    fn fetch_signed(
        &mut self,
        url: &str,
        accept: &str,
        keys: Arc<dyn KeyResolver>,
    ) -> Result<SignedBody, String> {
        Self::https_only(url)?;
        let o = UrlVerifyOptions {
            accept: Some(format!("{accept}, application/json;q=0.5")),
            keys: Some(keys),
            algorithms: Some(self.algorithms.clone()),
            strict_low_s: self.strict_low_s,
            sequential_fetches: true,
            // An unsigned card is the entry's `unsigned` artifact status,
            // which the catalog's verdict weighs (docs/report.md).
            allow_unsigned: true,
            ..Default::default()
        };
        match Resolver::with_options(self.fetcher.clone(), o).verify_url(url) {
            Ok(v) => {
                self.add(v.body.len())?;
                let signature = if v.signed() {
                    let what: Vec<&str> = v
                        .checked()
                        .into_iter()
                        .map(|c| match c {
                            "rfc9421" => "RFC 9421 response signature",
                            "jws" => "detached JWS",
                            other => other,
                        })
                        .collect();
                    let mut out =
                        Outcome::new(Status::Verified, format!("{} verified", what.join(" and ")));
                    if let Some(l) = v
                        .http_signature
                        .as_ref()
                        .and_then(|h| h.results.iter().find(|l| l.is_valid()))
                    {
                        out.key_thumbprint = l.key_thumbprint.clone();
                    } else if let Some(s) = v.jws.as_ref().and_then(|j| j.jws.valid_signature()) {
                        out.kid = s.kid.clone();
                        out.key_thumbprint = s.key_thumbprint.clone();
                    }
                    out
                } else if v.not_checked.is_empty() {
                    Outcome::new(
                        Status::Unsigned,
                        format!(
                            "served with neither an RFC 9421 response signature nor a detached JWS at {}.jws",
                            v.url
                        ),
                    )
                } else {
                    // A signature by a key that is not trusted is not
                    // checked (the one verdict rule): it counts neither way,
                    // and no trusted key vouches for the bytes.
                    Outcome::new(
                        Status::NotChecked,
                        format!(
                            "signed only by keys the entry's identity does not hold ({} not checked)",
                            v.not_checked.join(", ")
                        ),
                    )
                };
                Ok(SignedBody::new(v.body, signature))
            }
            Err(UrlVerifyError::Fetch(e)) => Err(e.to_string()),
            // A signature by a key that is not trusted is not checked; one
            // that fails with a trusted key is invalid (the one verdict
            // rule, as for `verify URL`).
            Err(e) if e.not_checked() => Ok(SignedBody::new(
                Vec::new(),
                Outcome::new(
                    Status::NotChecked,
                    format!(
                        "{e} ({}): signed by no key trusted for this identity, so not checked",
                        e.code()
                    ),
                ),
            )),
            Err(e) => Ok(SignedBody::new(
                Vec::new(),
                Outcome::failed(format!("{e} ({})", e.code())),
            )),
        }
    }
}

/// The well-known catalog URL of `url` when `url` is an origin (an `https`
/// URL whose path is empty or `/`, with no query or fragment):
/// `https://HOST[:PORT]/.well-known/ai-catalog.json` (AI Catalog "Well-Known
/// URI": "Clients performing domain-level discovery SHOULD attempt to
/// retrieve this well-known URL"; RFC 8615 section 3). `None` for any other
/// URL, which names a document of its own.
pub fn well_known_catalog_url(url: &str) -> Option<String> {
    let u = url::Url::parse(url).ok()?;
    if u.scheme() != "https"
        || !matches!(u.path(), "" | "/")
        || u.query().is_some()
        || u.fragment().is_some()
        || !u.username().is_empty()
        || u.password().is_some()
    {
        return None;
    }
    Some(format!(
        "{}{}",
        u.origin().ascii_serialization(),
        crate::catalog::WELL_KNOWN_PATH
    ))
}

/// Fetch the catalog at `url` (e.g. `https://HOST/.well-known/ai-catalog.json`)
/// through `fetcher` and verify it, fetching its entries referenced by `url`
/// ([`Verifier::verify_catalog_from`]): nested catalogs to
/// [`CatalogOptions::max_depth`] levels, cycles refused, at most
/// [`CatalogOptions::max_fetches`] fetches and [`MAX_TOTAL_BYTES`], the
/// whole within [`DEADLINE`]. MCP Server Cards by URL are verified with
/// their response signature or detached JWS ([`Resolver::verify_url`]),
/// the host identity against the origin the catalog was served from (after
/// redirects). Keys: `base`'s own ([`CatalogKeys::Given`]) or each
/// identity's ([`CatalogKeys::Resolved`]).
///
/// # Errors
/// [`CatalogUrlError`] when the root catalog cannot be fetched or read;
/// [`CatalogUrlError::NotServed`] when the server answers 404 or 410 (no
/// catalog there).
pub fn verify_catalog_url(
    base: &Verifier,
    keys: CatalogKeys,
    fetcher: &Fetcher,
    url: &str,
    opts: &CatalogOptions,
) -> Result<CatalogReport, CatalogUrlError> {
    let fetcher = &budgeted(fetcher, opts);
    let deadline = std::time::Instant::now() + DEADLINE;
    super::fetch::with_deadline(deadline, || {
        let mut nf = NetFetch::new(fetcher, opts);
        nf.algorithms = base.algorithms().clone();
        nf.strict_low_s = base.strict_low_s();
        let root = fetch_root(fetcher, url, opts)?;
        nf.add(root.body.len()).map_err(CatalogUrlError::Fetch)?;
        // The catalog's detached JWS beside its final URL, as a
        // descriptor's (draft-narvaneni-agent-uri-03 section 10.3).
        let (jws, jws_failed) = match fetch_catalog_jws(fetcher, &root.url) {
            Ok(j) => (j, None),
            Err(why) => (None, Some(why)),
        };
        if let Some(j) = &jws {
            nf.add(j.len()).map_err(CatalogUrlError::Fetch)?;
        }
        let opts = &opts.clone().catalog_jws(jws);
        let resolved;
        let v = match keys {
            CatalogKeys::Given => base,
            CatalogKeys::Resolved => {
                resolved = resolving(base, fetcher);
                &resolved
            }
        };
        // The URL the catalog was served from: the origin its host
        // identity is checked against (AI Catalog "Verifying Host
        // Identity" step 1).
        let mut report = v.verify_catalog_from(&root.body, &root.url, &mut nf, opts)?;
        report.url = Some(root.url.clone());
        if keys == CatalogKeys::Resolved {
            mark_unsupported(&mut report, host_identity(&root.body).as_deref());
        }
        if let Some(o) = catalog_response_signature(v, &root) {
            report.apply_catalog_signature(o);
        }
        if let Some(why) = jws_failed {
            report.apply_catalog_signature(Outcome::failed(why));
        }
        Ok(report)
    })
}

/// The catalog's detached JWS at `URL.jws` (the `.jws` of a descriptor,
/// draft-narvaneni-agent-uri-03 section 10.3): `None` when the server
/// answers 404 or 410 (there is none); an error message when fetching it
/// failed otherwise, which fails the catalog as for a descriptor.
fn fetch_catalog_jws(fetcher: &Fetcher, url: &str) -> Result<Option<String>, String> {
    let jws_url = format!("{url}.jws");
    match fetcher.get_with_limit(&jws_url, &[], MAX_CATALOG_JWS_BYTES) {
        Ok(f) if f.status == 200 => Ok(Some(String::from_utf8_lossy(&f.body).trim().to_owned())),
        Ok(f) if matches!(f.status, 404 | 410) => Ok(None),
        Ok(f) => Err(format!(
            "the catalog's detached JWS {jws_url}: HTTP status {}",
            f.status
        )),
        Err(FetchError::Status {
            status: 404 | 410, ..
        }) => Ok(None),
        Err(e) => Err(format!("the catalog's detached JWS {jws_url}: {e}")),
    }
}

/// Largest catalog detached JWS read: 64 KiB (a general JWS of a few
/// signatures fits many times over).
const MAX_CATALOG_JWS_BYTES: usize = 64 * 1024;

/// The catalog's own RFC 9421 response signature (the one `agentsig serve`
/// puts on every response: `@status`, `content-type` and `content-digest`
/// covered, the RFC 9530 `Content-Digest` checked against the body), with
/// the keys of the catalog's `host.identifier` only (the host identity, AI
/// Catalog "Host Info"): a signature over the whole catalog document by the
/// host, which binds its inline artifacts
/// ([`CatalogReport::apply_catalog_signature`]). `None` when the response
/// carries no signature or the catalog names no `host.identifier`. A
/// signature no key of the host matches is not checked; one that fails
/// with a key of the host is failed (the one verdict rule).
fn catalog_response_signature(v: &Verifier, root: &super::fetch::Fetched) -> Option<Outcome> {
    if !root.headers.contains_key("signature") {
        return None;
    }
    let doc: Value = serde_json::from_slice(&root.body).ok()?;
    let host = doc.get("host")?.get("identifier")?.as_str()?;
    let keys = Arc::new(crate::catalog::manifest::IdentityKeys::new(
        v.context().keys.clone(),
        host,
    ));
    let mut http = crate::httpsig::HttpPolicy::new();
    http.required = crate::httpsig::descriptor_response_components();
    let hv = Verifier::builder_arc(keys)
        .http(http)
        .algorithms(v.algorithms().clone())
        .strict_low_s(v.strict_low_s())
        .build();
    let m = super::verify::message_with_body(root.status, &root.headers, root.body.clone());
    let q = crate::text::quoted;
    Some(match hv.verify_http(&m, None) {
        Ok(_) => Outcome::new(
            Status::Verified,
            format!(
                "the catalog's RFC 9421 response signature verified with a key of host.identifier {}",
                q(host)
            ),
        ),
        Err(e) => match e.report().map(super::verify::http_status) {
            Some(crate::policy::SignatureStatus::Verified) => Outcome::new(
                Status::Verified,
                format!(
                    "the catalog's RFC 9421 response signature verified with a key of host.identifier {}",
                    q(host)
                ),
            ),
            Some(crate::policy::SignatureStatus::NotChecked) => Outcome::new(
                Status::NotChecked,
                format!(
                    "the catalog's RFC 9421 response signature is by no key of host.identifier {}: not checked",
                    q(host)
                ),
            ),
            _ => Outcome::failed(format!("the catalog's RFC 9421 response signature: {e}")),
        },
    })
}

/// Expand the catalog `bytes`, named `name` (its URL when it was
/// fetched), into one input per entry for bulk verification
/// ([`crate::catalog::expand_catalog`]), its nested catalogs by `url`
/// fetched through `fetcher` under the bounds of `opts`, [`MAX_TOTAL_BYTES`]
/// and [`DEADLINE`].
///
/// # Errors
/// [`CatalogError`] when the document is too large or not strict JSON.
pub fn expand_catalog_bytes(
    fetcher: &Fetcher,
    name: &str,
    bytes: &[u8],
    opts: &CatalogOptions,
) -> Result<Vec<CatalogInput>, CatalogError> {
    let doc = crate::catalog::verify::parse_catalog(bytes, opts)?;
    let fetcher = &budgeted(fetcher, opts);
    let deadline = std::time::Instant::now() + DEADLINE;
    Ok(super::fetch::with_deadline(deadline, || {
        let mut nf = NetFetch::new(fetcher, opts);
        crate::catalog::expand_catalog(&doc, name, Some(&mut nf), opts)
    }))
}

/// Fetch the catalog at `url` and expand it ([`expand_catalog_bytes`]).
///
/// # Errors
/// [`CatalogUrlError`] when the catalog cannot be fetched or read.
pub fn expand_catalog_url(
    fetcher: &Fetcher,
    url: &str,
    opts: &CatalogOptions,
) -> Result<Vec<CatalogInput>, CatalogUrlError> {
    let fetcher = &budgeted(fetcher, opts);
    let root = fetch_root(fetcher, url, opts)?;
    if root.body.len() > MAX_TOTAL_BYTES {
        return Err(CatalogUrlError::Fetch(format!(
            "more than {MAX_TOTAL_BYTES} bytes"
        )));
    }
    Ok(expand_catalog_bytes(fetcher, &root.url, &root.body, opts)?)
}

/// The root catalog at `url`, served from the origin asked for: a
/// redirect to another origin is refused
/// ([`CatalogUrlError::CrossOrigin`]). The host identity is checked
/// against the origin the catalog came from (AI Catalog "Verifying Host
/// Identity" step 1: "retrieved over HTTPS from the expected domain"); after
/// a cross-origin redirect that would be an origin the caller never named,
/// and checking it against the origin asked for instead would let an open
/// redirect on that origin vouch for any content elsewhere. Either way a
/// report would name one origin for another's bytes, so the redirect is
/// refused and the caller can verify the URL it names directly.
///
/// 200, or [`CatalogUrlError::NotServed`] for
/// 404 and 410, and for a 200 whose `Content-Type` is HTML (the page many
/// sites serve for any path: no catalog document is there, AI Catalog
/// "Well-Known URI": "If a valid AI Catalog document is returned"). Its
/// body may be as large as a catalog read from a file
/// ([`CatalogOptions::max_bytes`], by default
/// [`crate::catalog::MAX_CATALOG_BYTES`]), not only the fetcher's default
/// cap: the same document gets the same verdict fetched or read.
fn fetch_root(
    fetcher: &Fetcher,
    url: &str,
    opts: &CatalogOptions,
) -> Result<super::fetch::Fetched, CatalogUrlError> {
    NetFetch::https_only(url).map_err(CatalogUrlError::Fetch)?;
    let accept = format!("{}, application/json;q=0.5", crate::catalog::MEDIA_TYPE);
    match fetcher.get_with_limit(url, &[("accept", &accept)], opts.max_bytes) {
        Ok(f) if f.status == 200 && !same_origin(url, &f.url) => {
            Err(CatalogUrlError::CrossOrigin {
                asked: url.to_owned(),
                served: f.url,
            })
        }
        Ok(f) if f.status == 200 && is_html(&f.headers) => Err(CatalogUrlError::NotServed(200)),
        Ok(f) if f.status == 200 => Ok(f),
        Ok(f) => Err(CatalogUrlError::Fetch(format!("HTTP status {}", f.status))),
        Err(FetchError::Status { status, .. }) if matches!(status, 404 | 410) => {
            Err(CatalogUrlError::NotServed(status))
        }
        Err(e) => Err(CatalogUrlError::Unreachable(e)),
    }
}

/// Do `a` and `b` have one origin (scheme, host, port; RFC 6454 section
/// 4)? Unparsable URLs have none.
fn same_origin(a: &str, b: &str) -> bool {
    match (url::Url::parse(a), url::Url::parse(b)) {
        (Ok(a), Ok(b)) => a.origin() == b.origin() && a.origin().is_tuple(),
        _ => false,
    }
}

fn is_html(headers: &http::HeaderMap) -> bool {
    headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| crate::catalog::media_type_is(t, "text/html"))
}

impl CatalogUrlError {
    /// A stable code for reports.
    pub fn code(&self) -> &'static str {
        match self {
            CatalogUrlError::Fetch(_)
            | CatalogUrlError::Unreachable(_)
            | CatalogUrlError::NotServed(_) => "fetch.failed",
            CatalogUrlError::CrossOrigin { .. } => "fetch.redirect-cross-origin",
            CatalogUrlError::Catalog(_) => "catalog.unreadable",
        }
    }

    /// The verdict of an input that failed this way (docs/report.md):
    /// [`Verdict::Unavailable`](crate::report::Verdict::Unavailable) when
    /// the catalog could not be fetched (nothing was checked, as for a
    /// descriptor that could not be fetched:
    /// [`UrlVerifyError::verdict`]), else
    /// [`Verdict::NotVerified`](crate::report::Verdict::NotVerified): a
    /// redirect to another origin refused, a catalog too large or not JSON.
    pub fn verdict(&self) -> crate::report::Verdict {
        match self {
            CatalogUrlError::Fetch(_)
            | CatalogUrlError::Unreachable(_)
            | CatalogUrlError::NotServed(_) => crate::report::Verdict::Unavailable,
            CatalogUrlError::CrossOrigin { .. } | CatalogUrlError::Catalog(_) => {
                crate::report::Verdict::NotVerified
            }
        }
    }
}

/// What one URL input of a bulk run is, by the rule `verify URL` applies
/// to it alone ([`verify_or_expand`]).
#[derive(Debug)]
#[non_exhaustive]
pub enum UrlInput {
    /// Not a catalog: the URL verified as [`Resolver::verify_url`]
    /// verifies it, or why not.
    Document(Box<Result<super::verify::UrlVerified, UrlVerifyError>>),
    /// An AI Catalog (named by its URL, an origin's well-known catalog, or
    /// recognised in what the URL served): its entries, read within the
    /// catalog bounds ([`CatalogOptions`]).
    Catalog {
        /// The catalog's URL.
        url: String,
        /// Its entries, each checked by its media type
        /// ([`CatalogInput::check`]).
        entries: Vec<CatalogInput>,
        /// A resolver whose every fetch counts toward this catalog's
        /// bounds ([`job_budget`]): to check the entries with.
        job: Resolver,
    },
    /// A catalog that could not be read.
    CatalogFailed {
        /// The catalog's URL.
        url: String,
        /// Why.
        error: CatalogUrlError,
    },
}

/// One URL input, as `verify URL` alone takes it (AI Catalog
/// "Discovering Catalogs": an origin names its well-known catalog): an
/// origin's well-known catalog or a catalog URL is read and expanded into
/// its entries; an origin without one (404, 410) is verified as a
/// descriptor, as alone; a URL that serves a catalog (by its media type or
/// content) is expanded too; anything else is verified by `resolver`. The
/// one rule of `verify --batch` and `agentsig crawl`, so that an input gets
/// the same verdict in every mode.
///
/// ```no_run
/// use agentsig::catalog::CatalogOptions;
/// use agentsig::net::catalog::{verify_or_expand, UrlInput};
/// use agentsig::net::{Fetcher, Resolver};
///
/// let resolver = Resolver::new(Fetcher::new()?);
/// match verify_or_expand(&resolver, "https://agents.example", &CatalogOptions::default()) {
///     UrlInput::Document(r) => println!("verified: {}", r.is_ok()),
///     UrlInput::Catalog { entries, .. } => println!("{} entries", entries.len()),
///     UrlInput::CatalogFailed { error, .. } => println!("{error}"),
///     _ => {}
/// }
/// # Ok::<(), agentsig::net::FetchError>(())
/// ```
pub fn verify_or_expand(resolver: &Resolver, url: &str, opts: &CatalogOptions) -> UrlInput {
    let job = |budget: Arc<FetchBudget>| {
        Resolver::with_options(
            resolver.fetcher().with_budget(budget),
            resolver.options().clone(),
        )
    };
    let well_known = well_known_catalog_url(url);
    let catalog = match &well_known {
        Some(wk) => Some(wk.as_str()),
        None => crate::catalog::is_catalog_url(url).then_some(url),
    };
    if let Some(c) = catalog {
        let job = job(job_budget(opts));
        match expand_catalog_url(job.fetcher(), c, opts) {
            Ok(entries) => {
                return UrlInput::Catalog {
                    url: c.to_owned(),
                    entries,
                    job,
                }
            }
            Err(CatalogUrlError::NotServed(_)) if well_known.is_some() => {}
            Err(error) => {
                return UrlInput::CatalogFailed {
                    url: c.to_owned(),
                    error,
                }
            }
        }
    }
    match resolver.verify_url(url) {
        // A catalog by its media type or content, as `verify URL`
        // recognises one.
        Err(UrlVerifyError::Catalog { url, body }) => {
            // The catalog document was requested before it was known to be
            // one, with its `.jws` beside it unless the options fetch that
            // only later: requests of the job all the same.
            let o = resolver.options();
            let asked = if o.sequential_fetches || o.skip_jws_when_http_signed {
                1
            } else {
                2
            };
            let budget = job_budget(opts);
            budget.charge(asked, body.len());
            let job = job(budget);
            match expand_catalog_bytes(job.fetcher(), &url, &body, opts) {
                Ok(entries) => UrlInput::Catalog { url, entries, job },
                Err(e) => UrlInput::CatalogFailed {
                    url,
                    error: CatalogUrlError::Catalog(e),
                },
            }
        }
        r => UrlInput::Document(Box::new(r)),
    }
}

/// Why a catalog URL could not be verified at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogUrlError {
    /// The root catalog could not be fetched: not `https`, over the job's
    /// budget, or a status other than 200 that the fetcher returned.
    #[error("the catalog could not be fetched: {0}")]
    Fetch(String),
    /// The fetcher failed to get the root catalog: its error, so that a
    /// caller can tell a failure worth another attempt
    /// ([`FetchError::is_transient`]) and a wait for a connection permit
    /// that never reached the origin ([`FetchError::is_no_permit`]) from
    /// the rest.
    #[error("the catalog could not be fetched: {0}")]
    Unreachable(FetchError),
    /// The server answered 404 or 410, or an HTML page (status 200): no
    /// catalog is published there.
    #[error("no catalog is published there (HTTP status {0})")]
    NotServed(u16),
    /// The catalog URL redirected to another origin: refused (the host
    /// identity would be checked against an origin the caller never named).
    #[error("{asked} redirected to another origin ({served}): refused, as the host identity can only be checked against the origin asked for (AI Catalog \"Verifying Host Identity\" step 1); verify {served} itself to check the catalog served there (fetch.redirect-cross-origin)")]
    CrossOrigin {
        /// The URL asked for.
        asked: String,
        /// Where it redirected.
        served: String,
    },
    /// The root catalog is too large or not strict JSON.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
}
