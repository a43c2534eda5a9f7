//! `verify URL` as a library call: fetch a descriptor through the guarded
//! [`Fetcher`], check its `Content-Digest` (RFC 9530), its RFC 9421
//! response signature and/or the detached JWS published beside it
//! (`URL.jws`, draft-narvaneni-agent-uri-03 section 10.3), with keys found by
//! [`Discovery`] (or given by the caller); for an A2A Agent Card, also its
//! embedded signatures ([`super::card`]). Every fetch runs under the
//! fetcher's per-fetch and per-operation deadlines; each failure has its
//! own [`UrlVerifyError::code`].
//!
//! A resolver that verifies many descriptors keeps one [`Resolver`]: it
//! holds the [`Fetcher`] (connection pool, RFC 9111 cache), one
//! [`Discovery`] per key authority (JWK Sets cached by their own
//! `Cache-Control`), and the canonical form of descriptors it has already
//! parsed. Every call verifies every signature again; what is kept only
//! saves round trips and re-parsing of identical bytes.
//!
//! ```no_run
//! use agentsig::net::{Fetcher, Resolver};
//! use agentsig::net::verify::UrlVerifyOptions;
//!
//! // The default refuses an unsigned descriptor (UrlVerifyError::Unsigned);
//! // `allow_unsigned` accepts it with the verdict `unsigned`.
//! let mut opts = UrlVerifyOptions::default();
//! opts.allow_unsigned = true;
//! let resolver = Resolver::with_options(Fetcher::new()?, opts);
//! let v = resolver.verify_url("https://example.com/agents/planner.json")?;
//! println!("{}: {}, name {}", v.url, v.verdict().as_str(), v.descriptor()["name"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use super::cache::CacheStatus;
use super::discovery::{Discovery, DiscoveryError, DiscoveryPolicy, KeyAuthority};
use super::fetch::{FetchError, Fetched, Fetcher, Redirect};
use crate::alg::AllowList;
use crate::httpsig::message::Field;
use crate::httpsig::HttpPolicy;
use crate::httpsig::Message;
use crate::policy::SignatureStatus;
use crate::report::{SignatureResult, Verdict};
use crate::trust::{KeyRequest, KeyResolver, ResolveError, TrustedKey};
use crate::verifier::Verifier;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// What [`verify_url`] requires.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct UrlVerifyOptions {
    /// Accept a descriptor that no trusted key vouches for (neither an
    /// RFC 9421 signature, nor a detached JWS, nor an A2A card's embedded
    /// signatures; or only signatures by keys that are not trusted), with
    /// the verdict [`Verdict::Unsigned`] ([`UrlVerified::verdict`]). Off by
    /// default: such a descriptor is refused ([`UrlVerifyError::Unsigned`],
    /// [`UrlVerifyError::Untrusted`]). draft-narvaneni-agent-uri-03 section
    /// 10.3 lets a policy accept unsigned descriptors ("MUST refuse to
    /// accept unsigned descriptors when ... policy requires signed
    /// descriptors"); it never makes them verified.
    pub allow_unsigned: bool,
    /// Largest age of an RFC 9421 signature's `created`, in seconds.
    pub max_age: Option<u64>,
    /// Algorithms accepted (default: every asymmetric algorithm).
    pub algorithms: Option<AllowList>,
    /// Keys to use instead of discovery (pinned by the caller).
    pub keys: Option<Arc<dyn KeyResolver>>,
    /// Verify as if the time were this (Unix seconds), for tests and audits.
    pub now: Option<i64>,
    /// The key authority used when the descriptor names none (a DID
    /// authority's document, draft-narvaneni-agent-uri-03 section 10.3 item 3).
    pub default_authority: Option<KeyAuthority>,
    /// Discovery bounds and caching (e.g. a cache directory).
    pub discovery: DiscoveryPolicy,
    /// For an A2A Agent Card: use a card signature's `jku` header as a key
    /// source, only when it is an https URL on the card's own origin (off by
    /// default; see [`super::card`]).
    pub follow_jku: bool,
    /// Refuse ECDSA signatures whose `s` is in the upper half of the group
    /// order (the low-S rule of BIP 62 and of many JOSE and RFC 9421
    /// verifiers); ECDSA itself (FIPS 186-5) accepts both, so it is off by
    /// default, as in [`crate::verifier::VerifierBuilder::strict_low_s`].
    pub strict_low_s: bool,
    /// Fetch the descriptor and then its `.jws` one after the other on the
    /// calling thread, over the same kept-alive connection, instead of
    /// concurrently (the `.jws` on a helper thread kept per calling thread,
    /// and a second connection to the host). Off by default: one call then
    /// takes one round trip, not two. For bulk verification whose workers
    /// already overlap the round trips of many items, where a second
    /// connection per host costs a TLS handshake and, in a crawl, a fleet
    /// permit. Every fetch of such
    /// a call also goes through the calling thread's own client
    /// ([`on_thread_client`](super::fetch::on_thread_client)), unless the
    /// fetcher bounds its connections per host
    /// ([`FetchPolicy::max_connections_per_host`](super::FetchPolicy::max_connections_per_host),
    /// which `verify --batch` sets and which keeps the concurrent fetches).
    pub sequential_fetches: bool,
    /// Fetch the detached JWS (`URL.jws`) only when the descriptor's
    /// response carries no RFC 9421 signature. draft-narvaneni-agent-uri-03
    /// section 10.3 makes HTTP Message Signatures the way to protect a
    /// descriptor served over HTTP and in-document signing the way for
    /// deployments that cannot use them: a response whose signature
    /// verifies (covering `@status`, `content-type` and `content-digest`,
    /// the digest checked against the body) is then taken as a verified
    /// descriptor without the `.jws`. Off by default, in the library and in
    /// `verify --batch` (`--response-signature-first` turns it on): a
    /// broken `.jws` beside a verified response signature is then not
    /// seen, so the verdict may differ from the default one, which checks
    /// every signature published. It halves the requests to a publisher
    /// that signs its responses. A response signature that does not verify
    /// is a failure either way. The descriptor is then fetched first and
    /// the `.jws` only if needed (never concurrently).
    pub skip_jws_when_http_signed: bool,
    /// Fail unless the response carries an RFC 9421 signature that
    /// verifies, whatever else verifies (a detached JWS, an A2A card's
    /// embedded signatures). Off by default: the one verdict rule
    /// ([`crate::policy::signatures_verified`]) needs one signature that
    /// verifies and none invalid, and a response signature by a key that
    /// is not trusted is not checked (`verify --require-response-signature`).
    pub require_response_signature: bool,
    /// The `Accept` field sent for the document; `None`: `application/json`.
    /// An MCP Server Card is asked for as `application/mcp-server-card+json`
    /// (MCP Server Card `docs/discovery.md`).
    pub accept: Option<String>,
}

/// Why a URL did not verify. Each failure keeps its own variant.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UrlVerifyError {
    /// Fetching the descriptor failed (SSRF refusal, DNS, TLS, status,
    /// size, deadline).
    #[error("descriptor fetch failed: {0}")]
    Fetch(#[from] FetchError),
    /// Fetching the detached JWS `URL.jws` failed with anything but 404 or
    /// 410 (which mean "no detached JWS").
    #[error("detached JWS {url} fetch failed: {source}")]
    JwsFetch {
        /// The JWS URL.
        url: String,
        /// Why.
        #[source]
        source: FetchError,
    },
    /// Key discovery failed (network, metadata, key set, DID binding), so
    /// no signature could be checked; see [`DiscoveryError::code`].
    #[error("key discovery failed: {0}")]
    Discovery(DiscoveryError),
    /// The key set the signatures need could not be fetched (network, TLS,
    /// HTTP status, deadline, SSRF refusal): no signature was checked, so
    /// none is a bad signature; the verdict is [`Verdict::Unavailable`]
    /// and each signature is `not-checked` with the fetch's reason.
    #[error("keys unavailable: key discovery failed: {source}")]
    KeysUnavailable {
        /// Why the keys could not be fetched.
        #[source]
        source: DiscoveryError,
        /// The signatures that could not be checked (`not-checked`).
        signatures: Vec<SignatureResult>,
    },
    /// Every signature present is by a key that is not trusted (each
    /// counts neither way) and [`UrlVerifyOptions::allow_unsigned`] is
    /// off: no trusted key vouches for the descriptor, so it is refused
    /// as [`Verdict::Unsigned`]; the inner error says which signature.
    #[error(transparent)]
    Untrusted(Box<UrlVerifyError>),
    /// The caller's key resolver failed (not a discovery error).
    #[error("{0}")]
    KeyResolve(ResolveError),
    /// The body is not a JSON object.
    #[error("the descriptor at {0} is not a JSON object")]
    NotJson(String),
    /// The body is not strict I-JSON (RFC 7493: duplicate member names,
    /// lone surrogates, ...), so it has no single meaning to verify.
    #[error("the descriptor at {url} is not strict I-JSON: {source}")]
    BadJson {
        /// The URL.
        url: String,
        /// What the strict parser refused.
        #[source]
        source: crate::json::JsonError,
    },
    /// `Content-Digest` does not match the body (RFC 9530).
    #[error("Content-Digest does not match the body: {0}")]
    Digest(#[from] crate::digest::DigestError),
    /// The RFC 9421 response signature did not verify.
    #[error("RFC 9421 response signature: {0}")]
    HttpSignature(#[from] crate::httpsig::HttpSigError),
    /// The detached JWS did not verify.
    #[error("detached JWS {url}: {source}")]
    Jws {
        /// The JWS URL.
        url: String,
        /// Why.
        #[source]
        source: crate::descriptor::DescriptorError,
    },
    /// The A2A Agent Card's embedded signatures did not verify (or the
    /// card cannot be read as one).
    #[error("A2A card signatures at {url}: {source}")]
    Card {
        /// The card URL.
        url: String,
        /// Why.
        #[source]
        source: crate::a2a::A2aError,
    },
    /// Neither a response signature nor a detached JWS (nor, for an A2A
    /// card, an embedded signature), and one is required.
    #[error("the descriptor at {0} is not signed (neither RFC 9421 Signature nor {0}.jws)")]
    Unsigned(String),
    /// [`UrlVerifyOptions::require_response_signature`]: the response
    /// carries no RFC 9421 signature, or none by a trusted key.
    #[error("{0}: the response signature is required (--require-response-signature) and {1}")]
    ResponseSignatureRequired(String, &'static str),
    /// A saved response that is no HTTP response
    /// ([`Resolver::verify_served`]).
    #[error("the saved response cannot be read: {0}")]
    BadResponse(String),
    /// A signature is present but there is no key source.
    #[error("no key to check the signature with: give --key PUBLIC-KEY or --jwks JWKS (an A2A card names no key source of its own; a draft-narvaneni-agent-uri-03 descriptor may name one in authentication: authorizationServer, protectedResourceMetadata, jwksUri, jwks or did)")]
    NoKeySource,
    /// A signature names a DID key (`did:key`, `did:jwk`, `did:web`) but
    /// the descriptor binds no DID (`authentication.did`, draft-narvaneni-agent-uri-03 sections
    /// 4.3 and 10.3): a DID key never counts from the `kid` alone.
    #[error("the signature names the DID key {0:?}, but the descriptor does not bind that DID (authentication.did) and no key was given")]
    DidNotBound(String),
    /// The document at the URL is an AI Catalog, by its `Content-Type`
    /// (`application/ai-catalog+json`, AI Catalog "Media Type") or by its
    /// content ([`crate::catalog::is_catalog_document`]): a catalog is
    /// verified as one (its Trust Manifests and entries,
    /// [`super::catalog::verify_catalog_url`]), never passed as one
    /// descriptor with its manifests unchecked. The body is kept for a
    /// caller that goes on to read the catalog.
    #[error("{url} is an AI Catalog (by its media type or its content): it is verified as a catalog, never as a descriptor")]
    Catalog {
        /// The URL finally fetched.
        url: String,
        /// The catalog as served.
        body: Vec<u8>,
    },
}

impl UrlVerifyError {
    /// Whether the only signatures were by keys that are not trusted (none
    /// checked and failed): "not checked" under the one verdict rule
    /// ([`crate::policy::signatures_verified`]), never "invalid".
    pub fn not_checked(&self) -> bool {
        match self {
            UrlVerifyError::HttpSignature(e) => {
                e.report().map(http_status) == Some(SignatureStatus::NotChecked)
            }
            UrlVerifyError::Jws {
                source: crate::descriptor::DescriptorError::NotVerified(r),
                ..
            } => !r
                .jws
                .signatures
                .iter()
                .any(|s| s.verdict.status() != SignatureStatus::NotChecked),
            e => card_not_checked(e),
        }
    }

    /// A stable code for reports.
    pub fn code(&self) -> &'static str {
        match self {
            UrlVerifyError::Fetch(FetchError::Budget { .. })
            | UrlVerifyError::JwsFetch {
                source: FetchError::Budget { .. },
                ..
            } => "catalog.budget",
            UrlVerifyError::Fetch(e) if e.is_refusal() => "fetch.ssrf-refused",
            UrlVerifyError::Fetch(FetchError::Dns { .. }) => "fetch.dns-failure",
            UrlVerifyError::Fetch(e) if e.is_timeout() => "fetch.timeout",
            UrlVerifyError::Fetch(_) => "fetch.failed",
            UrlVerifyError::JwsFetch { .. } => "fetch.jws-failed",
            UrlVerifyError::Discovery(e) => e.code(),
            UrlVerifyError::KeysUnavailable { source, .. } => source.code(),
            UrlVerifyError::Untrusted(e) => e.code(),
            UrlVerifyError::KeyResolve(_) => "keys.resolve-failed",
            UrlVerifyError::DidNotBound(_) => "keys.did-not-bound",
            UrlVerifyError::NotJson(_) | UrlVerifyError::BadJson { .. } => "descriptor.not-json",
            UrlVerifyError::Digest(_) => "digest.mismatch",
            UrlVerifyError::HttpSignature(_) => "httpsig.not-verified",
            UrlVerifyError::Jws { .. } => "jws.not-verified",
            UrlVerifyError::Card {
                source: crate::a2a::A2aError::NotVerified(_),
                ..
            } => "a2a.not-verified",
            UrlVerifyError::Card { .. } => "a2a.bad-card",
            UrlVerifyError::Unsigned(_) => "descriptor.unsigned",
            UrlVerifyError::ResponseSignatureRequired(..) => "httpsig.required",
            UrlVerifyError::NoKeySource => "keys.no-source",
            UrlVerifyError::BadResponse(_) => "response.malformed",
            UrlVerifyError::Catalog { .. } => "descriptor.is-catalog",
        }
    }
}

impl UrlVerifyError {
    /// The report verdict of this failure: [`Verdict::Unsigned`] when no
    /// trusted key vouches for the descriptor and nothing failed,
    /// [`Verdict::Unavailable`] when the descriptor, its detached JWS or
    /// the keys could not be fetched, else [`Verdict::NotVerified`].
    pub fn verdict(&self) -> Verdict {
        match self {
            UrlVerifyError::Unsigned(_) | UrlVerifyError::Untrusted(_) => Verdict::Unsigned,
            UrlVerifyError::KeysUnavailable { .. }
            | UrlVerifyError::Fetch(_)
            | UrlVerifyError::JwsFetch { .. } => Verdict::Unavailable,
            _ => Verdict::NotVerified,
        }
    }

    /// The signatures examined before the failure, when it says which
    /// ([`UrlVerifyError::KeysUnavailable`]: each `not-checked`).
    pub fn signatures(&self) -> &[SignatureResult] {
        match self {
            UrlVerifyError::KeysUnavailable { signatures, .. } => signatures,
            _ => &[],
        }
    }
}

/// A verified descriptor, or (with [`UrlVerifyOptions::allow_unsigned`])
/// an unsigned but digest-checked one: see [`UrlVerified::verdict`].
#[derive(Debug)]
#[non_exhaustive]
pub struct UrlVerified {
    /// The URL finally fetched.
    pub url: String,
    /// The redirects followed.
    pub redirects: Vec<Redirect>,
    /// The descriptor bytes as served.
    pub body: Vec<u8>,
    /// Whether a `Content-Digest` was present and matched.
    pub digest_checked: bool,
    /// The RFC 9421 report, when the response was signed.
    pub http_signature: Option<crate::httpsig::VerifyReport>,
    /// The detached JWS report, when `URL.jws` was published.
    pub jws: Option<crate::descriptor::Report>,
    /// For an A2A Agent Card with embedded `signatures`: their report
    /// (every one checked; verified).
    pub card: Option<crate::a2a::CardReport>,
    /// Where the keys came from.
    pub key_authority: Option<KeyAuthority>,
    /// Whether the descriptor came from the origin or the HTTP cache
    /// (RFC 9111); it was verified either way.
    pub cache: CacheStatus,
    /// Whether `URL.jws` was not looked for because the response signature
    /// verified ([`UrlVerifyOptions::skip_jws_when_http_signed`]).
    pub jws_skipped: bool,
    /// The signatures present but not checked, because no trusted key
    /// matches them (`"rfc9421"`, `"jws"`, `"a2a-card"`): they count
    /// neither way ([`crate::policy::signatures_verified`]).
    pub not_checked: Vec<&'static str>,
    parsed: OnceLock<Value>,
}

impl UrlVerified {
    /// [`Verdict::Verified`] when a trusted key vouches for the descriptor
    /// (at least one signature verified, none invalid), else
    /// [`Verdict::Unsigned`] (accepted under
    /// [`UrlVerifyOptions::allow_unsigned`]).
    pub fn verdict(&self) -> Verdict {
        if self.signed() {
            Verdict::Verified
        } else {
            Verdict::Unsigned
        }
    }

    /// Whether at least one signature verified.
    pub fn signed(&self) -> bool {
        self.http_signature.is_some() || self.jws.is_some() || self.card.is_some()
    }

    /// What was verified: `"rfc9421"` (response signature), `"jws"`
    /// (detached `URL.jws`), `"a2a-card"` (the card's embedded signatures).
    pub fn checked(&self) -> Vec<&'static str> {
        let mut c = Vec::new();
        if self.http_signature.is_some() {
            c.push("rfc9421");
        }
        if self.jws.is_some() {
            c.push("jws");
        }
        if self.card.is_some() {
            c.push("a2a-card");
        }
        c
    }

    /// The descriptor as a JSON value, members in document order. Parsed
    /// on first use (verification itself works on the bytes); the bytes
    /// already passed the strict I-JSON parser, so this cannot fail.
    pub fn descriptor(&self) -> &Value {
        self.parsed
            .get_or_init(|| crate::json::parse_strict(&self.body).unwrap_or(Value::Null))
    }

    /// The descriptor as [`descriptor`](Self::descriptor) gives it, moved
    /// out rather than cloned: for a caller done with `self` that puts the
    /// value into a report (a crawl worker), one parse and no copy. A
    /// later [`descriptor`](Self::descriptor) parses the bytes again.
    pub fn take_descriptor(&mut self) -> Value {
        match self.parsed.take() {
            Some(v) => v,
            None => crate::json::parse_strict(&self.body).unwrap_or(Value::Null),
        }
    }
}

/// A key resolver that remembers the first error its inner resolver
/// returned, so that a failed verification caused by key discovery (no
/// signature could be checked) is reported as that, not as a bad signature.
#[derive(Debug)]
struct Recording {
    inner: Arc<dyn KeyResolver>,
    error: Mutex<Option<ResolveError>>,
}

impl KeyResolver for Recording {
    fn resolve(&self, req: &KeyRequest) -> Result<Vec<TrustedKey>, ResolveError> {
        let r = self.inner.resolve(req);
        if let Err(e @ ResolveError::Discovery { .. }) = &r {
            if let Ok(mut slot) = self.error.lock() {
                slot.get_or_insert_with(|| e.clone());
            }
        }
        r
    }
}

impl Recording {
    /// The discovery failure behind a failed verification, if any, with
    /// the signatures it left unchecked: a key set that could not be
    /// fetched makes them `not-checked` with the fetch's reason
    /// ([`UrlVerifyError::KeysUnavailable`]), never invalid.
    fn failure_of(&self, signatures: Vec<SignatureResult>) -> Option<UrlVerifyError> {
        match self.failure()? {
            UrlVerifyError::Discovery(source @ DiscoveryError::Fetch(_)) => {
                let reason = crate::report::Problem::new(source.code(), source.to_string());
                let signatures = signatures
                    .into_iter()
                    .map(|mut s| {
                        if s.verdict == "no-trusted-key" {
                            s.verdict = "not-checked";
                            s.reason = Some(reason.clone());
                        }
                        s
                    })
                    .collect();
                Some(UrlVerifyError::KeysUnavailable { source, signatures })
            }
            other => Some(other),
        }
    }

    /// The discovery failure behind a failed verification, if any.
    fn failure(&self) -> Option<UrlVerifyError> {
        let e = self.error.lock().ok()?.clone()?;
        let typed = match &e {
            ResolveError::Discovery {
                cause: Some(cause), ..
            } => cause.downcast_ref::<DiscoveryError>().cloned(),
            _ => None,
        };
        Some(match typed {
            Some(d) => UrlVerifyError::Discovery(d),
            None => UrlVerifyError::KeyResolve(e),
        })
    }
}

/// Compare `Content-Digest` with the body (RFC 9530), once: the RFC 9421
/// check requires `content-digest` to be covered by the signature and
/// relies on this comparison of the same bytes. Whether one was sent.
fn check_digest(f: &Fetched) -> Result<bool, UrlVerifyError> {
    let digest_lines: Vec<&[u8]> = f
        .headers
        .get_all("content-digest")
        .iter()
        .map(|v| v.as_bytes())
        .collect();
    if digest_lines.is_empty() {
        return Ok(false);
    }
    crate::digest::verify_content_digest(&digest_lines, &f.body)?;
    Ok(true)
}

/// The first key id of the response signatures and detached JWS that is a
/// DID URL.
fn did_kid(f: &Fetched, jws: Option<&str>) -> Option<String> {
    let mut kids: Vec<Option<String>> = Vec::new();
    if f.headers.contains_key("signature") {
        if let Ok(reqs) = crate::httpsig::key_requests(&message_of(f)) {
            kids.extend(reqs.into_iter().map(|(_, r)| r.kid));
        }
    }
    if let Some(j) = jws {
        if let Ok(p) = crate::jws::ParsedJws::parse(j) {
            kids.extend(p.key_requests().into_iter().map(|r| r.kid));
        }
    }
    kids.into_iter()
        .flatten()
        .find(|k| k.to_ascii_lowercase().starts_with("did:"))
}

fn message_of(f: &Fetched) -> Message {
    message_with_body(f.status, &f.headers, f.body.clone())
}

pub(crate) fn message_with_body(status: u16, headers: &http::HeaderMap, body: Vec<u8>) -> Message {
    let headers = headers
        .iter()
        .map(|(k, v)| Field {
            name: k.as_str().to_ascii_lowercase(),
            value: v.as_bytes().to_vec(),
        })
        .collect();
    Message::response(status, headers, body)
}

/// `f` unless it is an AI Catalog, by its `Content-Type` or its content
/// ([`UrlVerifyError::Catalog`]): the same document gets the same verdict
/// by URL as by file, where `verify FILE` detects a catalog by content.
fn refuse_catalog(f: Fetched) -> Result<Fetched, UrlVerifyError> {
    let by_type = f
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| crate::catalog::media_type_is(t, crate::catalog::MEDIA_TYPE));
    if by_type || crate::catalog::is_catalog_document(&f.body) {
        return Err(UrlVerifyError::Catalog {
            url: f.url,
            body: f.body,
        });
    }
    Ok(f)
}

/// Fetch `url` and verify it; see the module documentation.
///
/// A one-off call: it builds a throwaway [`Resolver`] (the fetcher's HTTP
/// cache is shared with its clones, but discovered keys are not kept). Keep
/// a [`Resolver`] to verify many descriptors.
///
/// # Errors
/// [`UrlVerifyError`] when fetching fails, no key can be discovered, or nothing verifies.
pub fn verify_url(
    fetcher: &Fetcher,
    url: &str,
    opts: &UrlVerifyOptions,
) -> Result<UrlVerified, UrlVerifyError> {
    Resolver::with_options(fetcher.clone(), opts.clone()).verify_url(url)
}

/// Most key authorities a [`Resolver`] keeps.
const MAX_DISCOVERIES: usize = 256;
/// Most parsed descriptors a [`Resolver`] keeps, and the largest body kept
/// (body and canonical form together stay under 16 MiB).
const MAX_PARSED: usize = 128;
const MAX_PARSED_BODY: usize = 64 * 1024;

/// The strict parse of one descriptor body, kept per URL while the bytes
/// stay the same.
#[derive(Debug)]
struct Parsed {
    body: Vec<u8>,
    /// The RFC 8785 form, computed only when a detached JWS is checked.
    canonical: OnceLock<Vec<u8>>,
    is_object: bool,
    authentication: Option<Value>,
}

impl Parsed {
    /// The canonical form of `body` (these bytes), computed once: taken
    /// out when this parse is not shared, cloned when it is.
    fn into_canonical(self: Arc<Self>, body: &[u8]) -> Result<Vec<u8>, crate::json::JsonError> {
        match Arc::try_unwrap(self) {
            Ok(p) => match p.canonical.into_inner() {
                Some(c) => Ok(c),
                None => crate::jcs::canonicalize(body),
            },
            Err(p) => match p.canonical.get() {
                Some(c) => Ok(c.clone()),
                None => {
                    let c = crate::jcs::canonicalize(body)?;
                    // Kept for the next call on the same bytes.
                    let _ = p.canonical.set(c.clone());
                    Ok(c)
                }
            },
        }
    }
}

/// A long-lived verifier of fetched descriptors (`Send + Sync`, cheap to
/// clone: clones share everything). See the module documentation.
///
/// ```no_run
/// use agentsig::net::{Fetcher, Resolver};
///
/// let resolver = Resolver::new(Fetcher::new()?);
/// // Share it across threads; each call verifies every signature again.
/// let r2 = resolver.clone();
/// let t = std::thread::spawn(move || r2.resolve("agent://example.com/planner").is_ok());
/// let v = resolver.verify_url("https://example.com/agents/planner.json")?;
/// // Without `allow_unsigned`, only a descriptor a trusted key vouches for.
/// assert!(v.signed() || resolver.options().allow_unsigned);
/// let _ = t.join();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Resolver {
    fetcher: Fetcher,
    options: Arc<UrlVerifyOptions>,
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    /// One discovery per key authority (keyed by its JSON form).
    discoveries: Mutex<HashMap<String, Arc<Discovery>>>,
    /// Parsed descriptors by URL.
    parsed: Mutex<HashMap<String, Arc<Parsed>>>,
}

/// Insert into a bounded map (an arbitrary entry is dropped when full:
/// what is kept is only an optimization).
fn keep<V>(map: &Mutex<HashMap<String, V>>, cap: usize, key: String, value: V) {
    if let Ok(mut m) = map.lock() {
        if m.len() >= cap && !m.contains_key(&key) {
            if let Some(k) = m.keys().next().cloned() {
                m.remove(&k);
            }
        }
        m.insert(key, value);
    }
}

impl Resolver {
    /// A resolver with default options (signatures verified when present;
    /// see [`UrlVerifyOptions`]).
    pub fn new(fetcher: Fetcher) -> Resolver {
        Resolver::with_options(fetcher, UrlVerifyOptions::default())
    }

    /// A resolver with `options`.
    pub fn with_options(fetcher: Fetcher, options: UrlVerifyOptions) -> Resolver {
        Resolver {
            fetcher,
            options: Arc::new(options),
            shared: Arc::default(),
        }
    }

    /// The fetcher.
    pub fn fetcher(&self) -> &Fetcher {
        &self.fetcher
    }

    /// The options in force.
    pub fn options(&self) -> &UrlVerifyOptions {
        &self.options
    }

    /// Fetch `url` and verify it; see the module documentation. Every
    /// fetch, key discovery included, is bounded by the fetcher's
    /// [`FetchPolicy::operation_timeout`](super::FetchPolicy::operation_timeout)
    /// in total ([`Fetcher::operation`]).
    ///
    /// # Errors
    /// [`UrlVerifyError`] when fetching fails, no key can be discovered, or nothing verifies.
    pub fn verify_url(&self, url: &str) -> Result<UrlVerified, UrlVerifyError> {
        if self.options.sequential_fetches {
            // One worker, one connection, no hand-off between threads.
            super::fetch::on_thread_client(|| {
                self.fetcher.operation(|| self.verify_url_with(url, None))
            })
        } else {
            self.fetcher.operation(|| self.verify_url_with(url, None))
        }
    }

    /// The keys of `authority`, from the discovery kept for it.
    pub(crate) fn discovery(&self, authority: &KeyAuthority) -> Arc<Discovery> {
        let key = match authority {
            KeyAuthority::AuthorizationServer(s) => format!("as {s}"),
            KeyAuthority::ProtectedResourceMetadata(s) => format!("prm {s}"),
            KeyAuthority::JwksUri(s) => format!("jwks_uri {s}"),
            KeyAuthority::Jwks(v) => format!("jwks {v}"),
            KeyAuthority::Did(s) => format!("did {s}"),
        };
        if let Some(d) = self
            .shared
            .discoveries
            .lock()
            .ok()
            .and_then(|m| m.get(&key).cloned())
        {
            return d;
        }
        let d = Arc::new(Discovery::with_policy(
            self.fetcher.clone(),
            authority.clone(),
            self.options.discovery.clone(),
        ));
        keep(&self.shared.discoveries, MAX_DISCOVERIES, key, d.clone());
        d
    }

    /// One strict parse of `body` (`authentication`, and the canonical
    /// form when `canonical` asks for it), reused while `url` serves the
    /// same bytes.
    fn parse(
        &self,
        url: &str,
        body: &[u8],
        canonical: bool,
    ) -> Result<Arc<Parsed>, UrlVerifyError> {
        if let Some(p) = self
            .shared
            .parsed
            .lock()
            .ok()
            .and_then(|m| m.get(url).cloned())
        {
            if p.body == body {
                return Ok(p);
            }
        }
        let bad = |source| UrlVerifyError::BadJson {
            url: url.to_owned(),
            source,
        };
        // The default limits bound size (the verifier's
        // `max_document_bytes`, the same 16 MiB) and depth.
        let limits = Default::default();
        let done = OnceLock::new();
        let (is_object, authentication) = if canonical {
            let (c, is_object, authentication) =
                crate::jcs::canonicalize_and_member(body, &limits, "authentication")
                    .map_err(bad)?;
            let _ = done.set(c);
            (is_object, authentication)
        } else {
            crate::json::object_member(body, &limits, "authentication").map_err(bad)?
        };
        let kept = body.len() <= MAX_PARSED_BODY;
        let p = Arc::new(Parsed {
            // Only a kept entry is ever compared with later bodies.
            body: if kept { body.to_vec() } else { Vec::new() },
            canonical: done,
            is_object,
            authentication,
        });
        if kept {
            keep(&self.shared.parsed, MAX_PARSED, url.to_owned(), p.clone());
        }
        Ok(p)
    }

    /// Verify the embedded signatures of the A2A card served at `url`
    /// (see [`super::card`]).
    fn verify_card(
        &self,
        url: &str,
        card: &Value,
    ) -> Result<crate::a2a::CardReport, UrlVerifyError> {
        let opts = &*self.options;
        if opts.keys.is_none() && !opts.follow_jku {
            return Err(UrlVerifyError::NoKeySource);
        }
        let recording = Arc::new(Recording {
            inner: Arc::new(CardKeys {
                origin: super::card::origin_of(url),
                pinned: opts.keys.clone(),
                follow_jku: opts.follow_jku,
                resolver: self.clone(),
            }),
            error: Mutex::new(None),
        });
        let mut b = Verifier::builder_arc(recording.clone()).strict_low_s(opts.strict_low_s);
        if let Some(a) = &opts.algorithms {
            b = b.algorithms(a.clone());
        }
        if let Some(now) = opts.now {
            b = b.clock(crate::clock::FixedClock(now));
        }
        b.build().verify_agent_card_value(card).map_err(|source| {
            let sigs = match &source {
                crate::a2a::A2aError::NotVerified(r) => r
                    .signatures
                    .iter()
                    .flatten()
                    .flat_map(crate::report::jws_signatures)
                    .collect(),
                _ => Vec::new(),
            };
            recording.failure_of(sigs).unwrap_or(UrlVerifyError::Card {
                url: url.to_owned(),
                source,
            })
        })
    }

    /// The descriptor and its detached JWS, concurrently unless both are
    /// fresh in the HTTP cache: the `.jws` on this thread's helper
    /// ([`JwsHelper`]), the descriptor on this thread.
    fn fetch_both(
        &self,
        url: &str,
        jws_url: &str,
        accept: &[(&str, &str)],
    ) -> (Result<Fetched, FetchError>, Result<Fetched, FetchError>) {
        let fetcher = &self.fetcher;
        match (
            fetcher.fresh_cached(url, accept),
            fetcher.fresh_cached(jws_url, &[]),
        ) {
            (Some(f), Some(j)) => (f, j),
            (Some(f), None) => (f, fetcher.get_cached(jws_url, &[])),
            (None, Some(j)) => (fetcher.get_cached(url, accept), j),
            (None, None) => {
                // The operation deadline is per thread: carried over.
                let deadline = super::fetch::current_deadline();
                // No helper while this thread's locals are torn down (or,
                // were it ever so, while one is being asked): the fetches
                // then run one after the other.
                let asked = JWS_HELPER
                    .try_with(|slot| {
                        let mut h = slot.try_borrow_mut().ok()?;
                        JwsHelper::ask(&mut h, fetcher.clone(), jws_url.to_owned(), deadline)
                    })
                    .ok()
                    .flatten();
                let f = fetcher.get_cached(url, accept);
                let j = match asked {
                    Some(got) => got.recv().unwrap_or_else(|_| {
                        Err(FetchError::Transport {
                            url: jws_url.to_owned(),
                            message: "fetch thread failed".into(),
                            timeout: false,
                        })
                    }),
                    // No helper thread could be started: one after the other.
                    None => fetcher.get_cached(jws_url, &[]),
                };
                (f, j)
            }
        }
    }

    /// [`verify_url`](Self::verify_url), with the key authority to use when
    /// neither the descriptor nor the options name one (a DID authority's
    /// document).
    pub(crate) fn verify_url_with(
        &self,
        url: &str,
        default_authority: Option<&KeyAuthority>,
    ) -> Result<UrlVerified, UrlVerifyError> {
        let opts = &*self.options;
        let fetcher = &self.fetcher;
        let accept = [(
            "accept",
            opts.accept.as_deref().unwrap_or("application/json"),
        )];
        let accept: &[(&str, &str)] = &accept;
        // The descriptor and its detached JWS are fetched concurrently (one
        // round trip, not two: the draft's fewest) unless both are fresh in
        // the HTTP cache or the options ask for sequential fetches (bulk
        // verification). If the descriptor was redirected, the JWS beside
        // its final URL is fetched afterwards.
        let early_jws_url = format!("{url}.jws");
        let (f, early_jws) = if opts.sequential_fetches || opts.skip_jws_when_http_signed {
            // The `.jws` beside the final URL, fetched below.
            (fetcher.get_cached(url, accept), None)
        } else {
            let (f, j) = self.fetch_both(url, &early_jws_url, accept);
            (f, Some(j))
        };
        let f = refuse_catalog(f?)?;
        let has_http_sig = f.headers.contains_key("signature");
        // draft-narvaneni-agent-uri-03 section 10.3: a response signature is the way for a
        // descriptor served over HTTP; with the option, the `.jws` is
        // looked for only without one.
        let skip_jws = has_http_sig && opts.skip_jws_when_http_signed;
        let parsed = self.parse(&f.url, &f.body, !skip_jws)?;
        if !parsed.is_object {
            return Err(UrlVerifyError::NotJson(f.url.clone()));
        }
        let digest_checked = check_digest(&f)?;
        let jws_url = format!("{}.jws", f.url);
        let jws_fetched = match early_jws {
            _ if skip_jws => None,
            Some(j) if jws_url == early_jws_url => Some(j),
            _ => Some(fetcher.get_cached(&jws_url, &[])),
        };
        let jws_text = match jws_fetched {
            None => None,
            Some(Ok(j)) => Some(String::from_utf8_lossy(&j.body).trim().to_owned()),
            Some(Err(FetchError::Status { status: 404, .. }))
            | Some(Err(FetchError::Status { status: 410, .. })) => None,
            Some(Err(source)) => {
                return Err(UrlVerifyError::JwsFetch {
                    url: jws_url,
                    source,
                })
            }
        };
        self.decide(
            f,
            parsed,
            digest_checked,
            jws_text,
            skip_jws,
            default_authority,
        )
    }

    /// Verify a response as `url` served it, saved (`verify FILE
    /// --response SAVED.http`): its status, header fields and body, and
    /// the text of the detached JWS published beside it (`URL.jws`), if
    /// any. The same checks and the same verdict as
    /// [`verify_url`](Self::verify_url) on a fetch that got these bytes:
    /// `Content-Digest` (RFC 9530), the RFC 9421 response signature, the
    /// detached JWS, an A2A card's embedded signatures, the one verdict
    /// rule ([`crate::policy::signatures_verified`]) and the options'
    /// requirements. Nothing is fetched unless the keys are discovered
    /// (no [`UrlVerifyOptions::keys`]).
    ///
    /// # Errors
    /// [`UrlVerifyError`] as [`verify_url`](Self::verify_url) gives it;
    /// [`UrlVerifyError::BadResponse`] for a request, or a header field
    /// that is no valid HTTP field.
    pub fn verify_served(
        &self,
        url: &str,
        response: &Message,
        jws: Option<&str>,
    ) -> Result<UrlVerified, UrlVerifyError> {
        let crate::httpsig::message::Kind::Response { status } = response.kind else {
            return Err(UrlVerifyError::BadResponse(
                "a request, not a response".into(),
            ));
        };
        // The fetcher refuses any other answer (Fetcher::get_cached).
        if !(200..300).contains(&status) {
            return Err(UrlVerifyError::BadResponse(format!(
                "HTTP status {status}: `verify URL` takes a 2xx answer only"
            )));
        }
        let mut headers = http::HeaderMap::new();
        for field in &response.headers {
            let name = http::HeaderName::from_bytes(field.name.as_bytes());
            let value = http::HeaderValue::from_bytes(&field.value);
            let (Ok(name), Ok(value)) = (name, value) else {
                return Err(UrlVerifyError::BadResponse(format!(
                    "the header field {} is no valid HTTP field (RFC 9110 section 5)",
                    crate::text::quoted(&field.name)
                )));
            };
            headers.append(name, value);
        }
        let f = refuse_catalog(Fetched::saved(url, status, headers, response.body.clone()))?;
        let parsed = self.parse(url, &f.body, jws.is_some())?;
        if !parsed.is_object {
            return Err(UrlVerifyError::NotJson(f.url.clone()));
        }
        let digest_checked = check_digest(&f)?;
        let jws = jws.map(|j| j.trim().to_owned());
        self.decide(f, parsed, digest_checked, jws, false, None)
    }

    /// The verdict on a served descriptor `f` (its body strictly parsed,
    /// its `Content-Digest` checked) and the detached JWS `jws_text`
    /// published beside it: the one verdict rule
    /// ([`crate::policy::signatures_verified`]) over the response
    /// signature, the detached JWS and an A2A card's embedded signatures,
    /// with the options' requirements.
    fn decide(
        &self,
        f: Fetched,
        parsed: Arc<Parsed>,
        digest_checked: bool,
        jws_text: Option<String>,
        skip_jws: bool,
        default_authority: Option<&KeyAuthority>,
    ) -> Result<UrlVerified, UrlVerifyError> {
        let opts = &*self.options;
        let has_http_sig = f.headers.contains_key("signature");
        let jws_url = format!("{}.jws", f.url);
        let mut out = UrlVerified {
            url: f.url.clone(),
            redirects: f.redirects.clone(),
            body: Vec::new(),
            digest_checked,
            http_signature: None,
            jws: None,
            card: None,
            key_authority: None,
            cache: f.cache,
            jws_skipped: skip_jws,
            not_checked: Vec::new(),
            parsed: OnceLock::new(),
        };
        let card = super::card::signed_card(&f.body);
        if !has_http_sig && jws_text.is_none() && card.is_none() {
            // Required whatever else is there, so also when nothing is.
            if opts.require_response_signature {
                return Err(UrlVerifyError::ResponseSignatureRequired(
                    f.url,
                    "the response carries no RFC 9421 signature",
                ));
            }
            if !opts.allow_unsigned {
                return Err(UrlVerifyError::Unsigned(f.url));
            }
            out.body = f.body;
            return Ok(out);
        }
        // The one verdict rule (crate::policy::signatures_verified): a
        // signature that fails is a failure at once; one by a key that is
        // not trusted is set aside (its error kept in case nothing
        // verifies).
        let mut unchecked: Option<UrlVerifyError> = None;
        if let Some(card) = &card {
            match self.verify_card(&f.url, card) {
                Ok(r) => out.card = Some(r),
                Err(e) if card_not_checked(&e) => {
                    out.not_checked.push("a2a-card");
                    unchecked = Some(e);
                }
                Err(e) => return Err(e),
            }
        }
        if !has_http_sig && jws_text.is_none() {
            if opts.require_response_signature {
                return Err(UrlVerifyError::ResponseSignatureRequired(
                    f.url,
                    "the response carries no RFC 9421 signature",
                ));
            }
            return match unchecked {
                Some(e) if !opts.allow_unsigned => Err(UrlVerifyError::Untrusted(Box::new(e))),
                _ => {
                    out.body = f.body;
                    Ok(out)
                }
            };
        }
        let inner: Arc<dyn KeyResolver> = match &opts.keys {
            Some(k) => k.clone(),
            None => {
                let a = parsed
                    .authentication
                    .as_ref()
                    .and_then(KeyAuthority::from_authentication)
                    .or_else(|| opts.default_authority.clone())
                    .or_else(|| default_authority.cloned());
                let Some(a) = a else {
                    // A DID kid is no key source by itself (draft-narvaneni-agent-uri-03
                    // sections 4.3, 10.3): say so rather than "no source".
                    return Err(match did_kid(&f, jws_text.as_deref()) {
                        Some(k) => UrlVerifyError::DidNotBound(k),
                        None => UrlVerifyError::NoKeySource,
                    });
                };
                let d = self.discovery(&a);
                out.key_authority = Some(a);
                d
            }
        };
        let recording = Arc::new(Recording {
            inner,
            error: Mutex::new(None),
        });
        let keys: Arc<dyn KeyResolver> = recording.clone();
        let mut http = HttpPolicy::new();
        http.required = crate::httpsig::descriptor_response_components();
        http.max_age = opts.max_age;
        // The digest was compared above (and `content-digest` is required
        // to be covered): not again.
        http.check_content_digest = !digest_checked;
        let mut b = Verifier::builder_arc(keys)
            .http(http)
            .strict_low_s(opts.strict_low_s);
        if let Some(a) = &opts.algorithms {
            b = b.algorithms(a.clone());
        }
        if let Some(now) = opts.now {
            b = b.clock(crate::clock::FixedClock(now));
        }
        let v = b.build();
        // A failure for which key discovery failed is reported as the
        // discovery failure (network, metadata, binding): no signature was
        // checked, so it is not a bad signature.
        let mut body = f.body;
        if has_http_sig {
            // The message borrows the body for the check and gives it back
            // (no copy of the descriptor).
            let mut m = message_with_body(f.status, &f.headers, std::mem::take(&mut body));
            let r = v.verify_http(&m, None);
            body = std::mem::take(&mut m.body);
            match r {
                Ok(r) => out.http_signature = Some(r),
                Err(e) => {
                    let sigs = e
                        .report()
                        .map(crate::report::http_signatures)
                        .unwrap_or_default();
                    if let Some(d) = recording.failure_of(sigs) {
                        return Err(d);
                    }
                    match e.report().map(http_status) {
                        Some(SignatureStatus::Verified) => out.http_signature = e.report().cloned(),
                        Some(SignatureStatus::NotChecked) => {
                            out.not_checked.push("rfc9421");
                            unchecked.get_or_insert(e.into());
                        }
                        _ => return Err(e.into()),
                    }
                }
            }
        }
        if opts.require_response_signature && out.http_signature.is_none() {
            return Err(UrlVerifyError::ResponseSignatureRequired(
                out.url,
                if has_http_sig {
                    "no trusted key matches the response signature"
                } else {
                    "the response carries no RFC 9421 signature"
                },
            ));
        }
        if let Some(j) = jws_text {
            // The canonical form moves into the report unless the resolver
            // keeps it for the next call on identical bytes.
            let canonical =
                parsed
                    .into_canonical(&body)
                    .map_err(|source| UrlVerifyError::BadJson {
                        url: out.url.clone(),
                        source,
                    })?;
            match crate::descriptor::verify_canonical(v.context(), v.jws_policy(), canonical, &j) {
                Ok(r) => out.jws = Some(r),
                Err(source) => {
                    let sigs = match &source {
                        crate::descriptor::DescriptorError::NotVerified(r) => {
                            crate::report::jws_signatures(&r.jws)
                        }
                        _ => Vec::new(),
                    };
                    if let Some(d) = recording.failure_of(sigs) {
                        return Err(d);
                    }
                    let not_checked = matches!(&source,
                        crate::descriptor::DescriptorError::NotVerified(r)
                            if !r.jws.signatures.iter().any(|s| s.verdict.status() != SignatureStatus::NotChecked));
                    let e = UrlVerifyError::Jws {
                        url: jws_url,
                        source,
                    };
                    if !not_checked {
                        return Err(e);
                    }
                    out.not_checked.push("jws");
                    unchecked.get_or_insert(e);
                }
            }
        }
        // Verified when at least one signature verified and none failed
        // (every failure returned above).
        if !out.signed() && !opts.allow_unsigned {
            if let Some(e) = unchecked {
                return Err(UrlVerifyError::Untrusted(Box::new(e)));
            }
        }
        out.body = body;
        Ok(out)
    }
}

/// What an RFC 9421 verification that did not pass counts for under the
/// one verdict rule: its labels by keys that are not trusted are not
/// checked, any other failure is invalid (RFC 9421 section 3.2: each
/// signature is verified on its own; the application decides which it
/// requires).
pub(crate) fn http_status(r: &crate::httpsig::VerifyReport) -> SignatureStatus {
    let statuses: Vec<SignatureStatus> = r
        .results
        .iter()
        .map(|l| match &l.outcome {
            Ok(()) => SignatureStatus::Verified,
            Err(crate::httpsig::SigError::NoTrustedKey { .. }) => SignatureStatus::NotChecked,
            Err(_) => SignatureStatus::Invalid,
        })
        .collect();
    if crate::policy::signatures_verified(statuses.iter().copied()) {
        SignatureStatus::Verified
    } else if statuses.contains(&SignatureStatus::Invalid) {
        SignatureStatus::Invalid
    } else {
        SignatureStatus::NotChecked
    }
}

/// Whether an A2A card failed only because no trusted key matches any of
/// its signatures (none invalid).
fn card_not_checked(e: &UrlVerifyError) -> bool {
    match e {
        UrlVerifyError::Card {
            source: crate::a2a::A2aError::NotVerified(r),
            ..
        } => !r.any_invalid(),
        _ => false,
    }
}

/// Keys for a card's signatures: the caller's, plus (opted in) the JWK Set
/// a same-origin `jku` names.
#[derive(Debug)]
pub(crate) struct CardKeys {
    /// The card's origin.
    pub(crate) origin: String,
    /// The caller's keys.
    pub(crate) pinned: Option<Arc<dyn KeyResolver>>,
    /// Follow same-origin `jku` (off unless the caller opts in).
    pub(crate) follow_jku: bool,
    /// The resolver whose discoveries (and key-set cache) a `jku` uses.
    pub(crate) resolver: Resolver,
}

impl KeyResolver for CardKeys {
    fn resolve(&self, req: &KeyRequest) -> Result<Vec<TrustedKey>, ResolveError> {
        let mut out = match &self.pinned {
            Some(p) => p.resolve(req)?,
            None => Vec::new(),
        };
        if let (true, Some(jku)) = (self.follow_jku, req.jku.as_deref()) {
            if super::card::https_origin(jku).as_deref() != Some(self.origin.as_str()) {
                return Err(DiscoveryError::JkuRefused {
                    jku: jku.to_owned(),
                    origin: self.origin.clone(),
                }
                .into());
            }
            let mut r = req.clone();
            r.jku = None;
            let d = self
                .resolver
                .discovery(&KeyAuthority::JwksUri(jku.to_owned()));
            out.extend(d.resolve(&r)?);
        }
        Ok(out)
    }
}

/// A `.jws` fetch asked of a [`JwsHelper`]: the fetcher, the URL and the
/// asking thread's operation deadline.
type JwsJob = (
    Fetcher,
    String,
    Option<std::time::Instant>,
    std::sync::mpsc::SyncSender<Result<Fetched, FetchError>>,
);

/// A thread that fetches detached JWS for one verifying thread, started at
/// its first concurrent fetch and kept for its next ones: it ends with that
/// thread (its job channel closes). A thread started per input cost about
/// as much CPU as the whole of the input's verification on a two-core
/// virtual machine (its stack mapped, faulted in and unmapped each time);
/// handing a job to a waiting thread costs two wakeups.
struct JwsHelper {
    jobs: std::sync::mpsc::Sender<JwsJob>,
}

thread_local! {
    /// This thread's [`JwsHelper`], once started.
    static JWS_HELPER: std::cell::RefCell<Option<JwsHelper>> =
        const { std::cell::RefCell::new(None) };
}

impl JwsHelper {
    /// Hand the fetch of `url` to the helper in `slot` (started if there
    /// is none): the channel its answer comes on, or `None` when no helper
    /// thread can be started or the last one is gone.
    fn ask(
        slot: &mut Option<JwsHelper>,
        fetcher: Fetcher,
        url: String,
        deadline: Option<std::time::Instant>,
    ) -> Option<std::sync::mpsc::Receiver<Result<Fetched, FetchError>>> {
        if slot.is_none() {
            *slot = JwsHelper::start();
        }
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        if slot
            .as_ref()?
            .jobs
            .send((fetcher, url, deadline, tx))
            .is_err()
        {
            // The helper ended (it panicked): this call fetches one after
            // the other, the next starts another helper.
            *slot = None;
            return None;
        }
        Some(rx)
    }

    fn start() -> Option<JwsHelper> {
        let (jobs, rx) = std::sync::mpsc::channel::<JwsJob>();
        std::thread::Builder::new()
            .name("agentsig-jws".into())
            .spawn(move || {
                for (fetcher, url, deadline, answer) in rx {
                    let got = match deadline {
                        Some(d) => super::fetch::with_deadline(d, || fetcher.get_cached(&url, &[])),
                        None => fetcher.get_cached(&url, &[]),
                    };
                    // The asker gave up waiting: nothing to do.
                    let _ = answer.send(got);
                }
            })
            .ok()?;
        Some(JwsHelper { jobs })
    }
}

#[cfg(test)]
mod tests {
    fn assert_send_sync_clone<T: Send + Sync + Clone + 'static>() {}

    #[test]
    fn resolver_is_send_sync_clone() {
        assert_send_sync_clone::<super::Resolver>();
        assert_send_sync_clone::<super::Fetcher>();
    }

    /// The value moved out is the one `descriptor` gives (document order,
    /// the strict parse's numbers), parsed or not yet, and `descriptor`
    /// still answers after it.
    #[test]
    fn a_taken_descriptor_is_the_parsed_one() {
        let body = br#"{"z":1,"a":[1.5,-0.0,"\u00e9\/"],"name":"x"}"#.to_vec();
        let v = |parsed: bool| {
            let v = super::UrlVerified {
                url: "https://example.com/a.json".into(),
                redirects: Vec::new(),
                body: body.clone(),
                digest_checked: false,
                http_signature: None,
                jws: None,
                card: None,
                key_authority: None,
                cache: crate::net::CacheStatus::Network,
                jws_skipped: false,
                not_checked: Vec::new(),
                parsed: std::sync::OnceLock::new(),
            };
            if parsed {
                let _ = v.descriptor();
            }
            v
        };
        let want = crate::json::parse_strict(&body).unwrap();
        for parsed in [false, true] {
            let mut v = v(parsed);
            let taken = v.take_descriptor();
            assert_eq!(taken, want);
            assert_eq!(
                serde_json::to_string(&taken).unwrap(),
                r#"{"z":1,"a":[1.5,-0.0,"é/"],"name":"x"}"#
            );
            assert_eq!(v.descriptor(), &want);
        }
    }
}
