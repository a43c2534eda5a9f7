//! Key discovery as a [`KeyResolver`]: the sources of draft-narvaneni-agent-uri-03 section 10.3,
//! in its order of precedence, each fetched through the SSRF-guarded
//! [`Fetcher`]:
//!
//! 1. `authentication.authorizationServer`: RFC 8414 metadata (the
//!    well-known suffix is *inserted* before the issuer's path, section 3.1;
//!    the returned `issuer` must be identical, section 3.3), then its
//!    `jwks_uri`; and `authentication.protectedResourceMetadata`: RFC 9728
//!    metadata (`resource` must be identical to the resource the URL was
//!    derived from, section 3.3), then its `jwks_uri` or the first of its
//!    `authorization_servers`;
//! 2. `authentication.jwksUri`, or an inline `authentication.jwks`;
//! 3. a DID authority: `did:key`, `did:jwk`, or `did:web` (the fetched
//!    document's `id` must equal the DID; only verification methods
//!    referenced from `assertionMethod` or `authentication`, with
//!    `publicKeyJwk` or `publicKeyMultibase`). The DID must be bound to the
//!    authority (the descriptor's `authentication.did`, or an `agent://`
//!    DID authority, draft-narvaneni-agent-uri-03 section 4.3); a `kid` naming another DID is
//!    refused ([`DiscoveryError::DidNotBound`]), never used as a source.
//!
//! The first source present is the only one used: a failure there is an
//! error, never a silent fall-back to a weaker source ("Clients MUST prefer
//! the metadata documents", draft-narvaneni-agent-uri-03 section 10.1).
//!
//! JWK Sets are handled like panva/jose's remote JWKS: fetched without
//! redirects, HTTP caching (`Cache-Control` max-age / no-store / no-cache,
//! `ETag` / `Last-Modified` revalidation, RFC 9111), refetched on an unknown
//! `kid` at most once per cooldown, only public signing keys kept (`use`
//! absent or `sig`, `key_ops` absent or with `verify`, no private or
//! symmetric member, RFC 8725 section 3.1), at most
//! [`DiscoveryPolicy::max_keys`] members, and several keys matching one
//! signature is an error. Each key is tagged
//! [`KeySource::Discovered`] with the path that found it.

use super::fetch::{FetchError, Fetched, Fetcher};
use crate::did;
use crate::trust::{KeyRequest, KeyResolver, KeySource, ResolveError, StaticKeys, TrustedKey};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const AS_WELL_KNOWN: &str = "/.well-known/oauth-authorization-server";
const PR_WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// Why discovery failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum DiscoveryError {
    /// An issuer or resource identifier that RFC 8414 section 2 / RFC 9728
    /// section 1.2 forbid (not https, query or fragment).
    #[error("{0:?} is not a valid issuer/resource identifier (https, no query or fragment)")]
    BadIdentifier(String),
    /// RFC 8414 section 3.3: the metadata's `issuer` differs.
    #[error("authorization server metadata names issuer {got:?}, expected exactly {expected:?}")]
    IssuerMismatch {
        /// The issuer asked for.
        expected: String,
        /// The issuer returned.
        got: String,
    },
    /// RFC 9728 section 3.3: the metadata's `resource` differs.
    #[error("protected resource metadata names resource {got:?}, expected exactly {expected:?}")]
    ResourceMismatch {
        /// The resource asked for.
        expected: String,
        /// The resource returned.
        got: String,
    },
    /// A DID document whose `id` is not the DID resolved.
    #[error("DID document id {got:?} is not {expected:?}")]
    DidIdMismatch {
        /// The DID resolved.
        expected: String,
        /// The document's `id`.
        got: String,
    },
    /// A metadata or JWK Set document that is not what it must be.
    #[error("{url}: {message}")]
    BadDocument {
        /// Where it came from.
        url: String,
        /// What is wrong.
        message: String,
    },
    /// A JWK Set with more members than [`DiscoveryPolicy::max_keys`].
    #[error("{url}: JWK Set has {count} keys, more than {limit}")]
    TooManyKeys {
        /// Where it came from.
        url: String,
        /// How many.
        count: usize,
        /// The cap.
        limit: usize,
    },
    /// Several trusted keys match one signature (like panva/jose's
    /// `JWKSMultipleMatchingKeys`): the signer must name its key.
    #[error("{count} discovered keys match (kid {kid:?}); the signature must name one")]
    AmbiguousKey {
        /// How many keys matched.
        count: usize,
        /// The signature's `kid`.
        kid: Option<String>,
    },
    /// A signature names a DID key (`kid` `did:...`) that the key authority
    /// does not bind: a DID key counts only when the descriptor's
    /// `authentication.did` (or the `agent://` DID authority) names that
    /// DID (draft-narvaneni-agent-uri-03 sections 4.3 and 10.3), never from the `kid` alone.
    #[error("the signature's key {kid:?} is a DID the descriptor does not bind (authentication.did names {bound})")]
    DidNotBound {
        /// The signature's `kid`.
        kid: String,
        /// The DID the authority binds, or "no DID".
        bound: String,
    },
    /// A card signature's `jku` is not an https URL on the card's own
    /// origin: not fetched (RFC 8725 section 3.10).
    #[error("jku {jku:?} is not on the card's origin {origin}; not followed")]
    JkuRefused {
        /// The `jku` header.
        jku: String,
        /// The card's origin.
        origin: String,
    },
    /// A DID that cannot be resolved.
    #[error(transparent)]
    Did(#[from] did::DidError),
    /// The fetch failed (including SSRF refusals).
    #[error(transparent)]
    Fetch(#[from] FetchError),
}

impl DiscoveryError {
    /// A stable code for reports (`docs/net.md` lists them): a network
    /// failure (`discovery.fetch-failed`, `discovery.timeout`,
    /// `discovery.ssrf-refused`) is distinct from a document that is not
    /// what it must be and from a signature that does not verify.
    pub fn code(&self) -> &'static str {
        match self {
            DiscoveryError::BadIdentifier(_) => "discovery.bad-identifier",
            DiscoveryError::IssuerMismatch { .. } => "discovery.issuer-mismatch",
            DiscoveryError::ResourceMismatch { .. } => "discovery.resource-mismatch",
            DiscoveryError::DidIdMismatch { .. } => "discovery.did-mismatch",
            DiscoveryError::BadDocument { .. } => "discovery.bad-document",
            DiscoveryError::TooManyKeys { .. } => "discovery.too-many-keys",
            DiscoveryError::AmbiguousKey { .. } => "discovery.ambiguous-key",
            DiscoveryError::DidNotBound { .. } => "keys.did-not-bound",
            DiscoveryError::JkuRefused { .. } => "discovery.jku-refused",
            DiscoveryError::Did(_) => "discovery.did-failed",
            DiscoveryError::Fetch(e) if e.is_refusal() => "discovery.ssrf-refused",
            DiscoveryError::Fetch(e) if e.is_timeout() => "discovery.timeout",
            DiscoveryError::Fetch(_) => "discovery.fetch-failed",
        }
    }
}

impl From<DiscoveryError> for ResolveError {
    fn from(e: DiscoveryError) -> ResolveError {
        let transient = matches!(&e, DiscoveryError::Fetch(f) if f.is_transient());
        ResolveError::Discovery {
            message: e.to_string(),
            transient,
            cause: Some(Arc::new(e)),
        }
    }
}

/// The RFC 8414 section 3.1 metadata URL of `issuer`: one terminating `/`
/// removed from the path, then `/.well-known/oauth-authorization-server`
/// inserted between the authority and the path.
///
/// # Errors
/// [`DiscoveryError`] when a document cannot be fetched or parsed, names a key location on another
/// origin, or holds too many or no usable keys.
pub fn rfc8414_metadata_url(issuer: &str) -> Result<String, DiscoveryError> {
    well_known(issuer, AS_WELL_KNOWN)
}

/// The RFC 9728 section 3.1 metadata URL of `resource` (same insertion with
/// `/.well-known/oauth-protected-resource`).
///
/// # Errors
/// [`DiscoveryError`] when a document cannot be fetched or parsed, names a key location on another
/// origin, or holds too many or no usable keys.
pub fn rfc9728_metadata_url(resource: &str) -> Result<String, DiscoveryError> {
    well_known(resource, PR_WELL_KNOWN)
}

fn parse_identifier(id: &str) -> Result<url::Url, DiscoveryError> {
    let bad = || DiscoveryError::BadIdentifier(id.to_owned());
    let u = url::Url::parse(id).map_err(|_| bad())?;
    if u.scheme() != "https"
        || u.query().is_some()
        || u.fragment().is_some()
        || id.contains(['?', '#'])
        || u.host_str().is_none()
    {
        return Err(bad());
    }
    Ok(u)
}

fn well_known(id: &str, suffix: &str) -> Result<String, DiscoveryError> {
    let mut u = parse_identifier(id)?;
    let path = u.path().to_owned();
    let path = path.strip_suffix('/').unwrap_or(&path).to_owned();
    u.set_path(&format!("{suffix}{path}"));
    Ok(u.to_string())
}

/// The resource identifier an RFC 9728 metadata URL was derived from (the
/// inverse of [`rfc9728_metadata_url`]), for the section 3.3 check when a
/// descriptor names the metadata document itself.
///
/// # Errors
/// [`DiscoveryError`] when a document cannot be fetched or parsed, names a key location on another
/// origin, or holds too many or no usable keys.
pub fn rfc9728_resource_of(metadata_url: &str) -> Result<String, DiscoveryError> {
    let mut u = parse_identifier(metadata_url)?;
    let rest = u
        .path()
        .strip_prefix(PR_WELL_KNOWN)
        .filter(|r| r.is_empty() || r.starts_with('/'))
        .ok_or_else(|| DiscoveryError::BadIdentifier(metadata_url.to_owned()))?
        .to_owned();
    u.set_path(&rest);
    let s = u.to_string();
    // Url always serializes an empty path as "/"; the identifier has none.
    Ok(if rest.is_empty() {
        s.strip_suffix('/').unwrap_or(&s).to_owned()
    } else {
        s
    })
}

/// A source of keys (draft-narvaneni-agent-uri-03 section 10.3).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum KeyAuthority {
    /// An RFC 8414 issuer.
    AuthorizationServer(String),
    /// The URL of an RFC 9728 protected-resource metadata document.
    ProtectedResourceMetadata(String),
    /// A JWK Set URL.
    JwksUri(String),
    /// An inline JWK Set.
    Jwks(Value),
    /// A DID (`did:key`, `did:jwk`, `did:web`).
    Did(String),
}

impl KeyAuthority {
    /// The authority a descriptor names, in the order of draft-narvaneni-agent-uri-03 section
    /// 10.3 (metadata first, then `jwksUri`, then inline `jwks`, then a DID
    /// bound by `authentication.did`); `None` when its `authentication`
    /// member names none.
    ///
    /// A DID key counts only when it is bound this way (or by an
    /// `agent://` DID authority, draft-narvaneni-agent-uri-03 section 4.3): a signature whose
    /// `kid` names a DID the authority does not bind is refused
    /// ([`DiscoveryError::DidNotBound`]).
    pub fn from_descriptor(descriptor: &Value) -> Option<KeyAuthority> {
        KeyAuthority::from_authentication(descriptor.get("authentication")?)
    }

    /// [`from_descriptor`](Self::from_descriptor), given the descriptor's
    /// `authentication` member.
    pub fn from_authentication(a: &Value) -> Option<KeyAuthority> {
        let s = |k: &str| a.get(k).and_then(Value::as_str).map(str::to_owned);
        if let Some(i) = s("authorizationServer") {
            return Some(KeyAuthority::AuthorizationServer(i));
        }
        if let Some(p) = s("protectedResourceMetadata") {
            return Some(KeyAuthority::ProtectedResourceMetadata(p));
        }
        if let Some(j) = s("jwksUri") {
            return Some(KeyAuthority::JwksUri(j));
        }
        if let Some(j) = a.get("jwks") {
            return Some(KeyAuthority::Jwks(j.clone()));
        }
        s("did").map(KeyAuthority::Did)
    }

    /// The authority's kind as a report names it: `authorization-server`
    /// (RFC 8414), `protected-resource-metadata` (RFC 9728), `jwks-uri`,
    /// `jwks` (inline) or `did`.
    pub fn kind(&self) -> &'static str {
        match self {
            KeyAuthority::AuthorizationServer(_) => "authorization-server",
            KeyAuthority::ProtectedResourceMetadata(_) => "protected-resource-metadata",
            KeyAuthority::JwksUri(_) => "jwks-uri",
            KeyAuthority::Jwks(_) => "jwks",
            KeyAuthority::Did(_) => "did",
        }
    }

    /// Where the keys come from, as a report names it: the issuer, the
    /// metadata or JWK Set URL, or the DID; for an inline JWK Set, the
    /// descriptor member that holds it (the set itself is in the
    /// descriptor).
    pub fn location(&self) -> &str {
        match self {
            KeyAuthority::AuthorizationServer(s)
            | KeyAuthority::ProtectedResourceMetadata(s)
            | KeyAuthority::JwksUri(s)
            | KeyAuthority::Did(s) => s,
            KeyAuthority::Jwks(_) => "descriptor authentication.jwks",
        }
    }
}

/// In a report, `{"kind": ..., "from": ...}` ([`KeyAuthority::kind`],
/// [`KeyAuthority::location`]), the shape of a signature's `key.source`.
impl serde::Serialize for KeyAuthority {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("kind", self.kind())?;
        m.serialize_entry("from", self.location())?;
        m.end()
    }
}

/// Bounds and timings of discovery.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct DiscoveryPolicy {
    /// Cache lifetime when the response says nothing (RFC 9111 heuristics
    /// replaced by a fixed, short value).
    pub default_ttl: Duration,
    /// Longest lifetime honoured from `max-age`.
    pub max_ttl: Duration,
    /// Least time between two refetches caused by an unknown `kid`.
    pub refresh_cooldown: Duration,
    /// Most members accepted in a JWK Set.
    pub max_keys: usize,
    /// How long a 404 for a JWK Set is remembered (negative caching, RFC
    /// 9111 section 4.2.2 allows 404 to be cached): no refetch before.
    pub negative_ttl: Duration,
    /// A private directory where fetched JWK Sets and the unknown-`kid`
    /// refetch cooldown are kept between processes (the CLI's
    /// `--cache-dir`), with the same freshness rules; `no-store` responses
    /// are never written. It must be private ([`super::disk`]): created
    /// 0700, not used at all when owned by another user or group- or
    /// world-writable; an entry that is a symlink, not ours or group- or
    /// world-writable is ignored; an entry stored "in the future" (clock
    /// set back) is stale. Best effort: an unusable entry is refetched.
    pub cache_dir: Option<std::path::PathBuf>,
}

impl Default for DiscoveryPolicy {
    fn default() -> Self {
        DiscoveryPolicy {
            default_ttl: Duration::from_secs(300),
            max_ttl: Duration::from_secs(24 * 3600),
            refresh_cooldown: Duration::from_secs(30),
            max_keys: 64,
            negative_ttl: Duration::from_secs(30),
            cache_dir: None,
        }
    }
}

impl DiscoveryPolicy {
    /// Set the unknown-kid refresh cooldown.
    pub fn refresh_cooldown(mut self, d: Duration) -> Self {
        self.refresh_cooldown = d;
        self
    }
    /// Keep JWK Sets in `dir` between processes.
    pub fn cache_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.cache_dir = Some(dir.into());
        self
    }
    /// Set the JWK Set size cap.
    pub fn max_keys(mut self, n: usize) -> Self {
        self.max_keys = n;
        self
    }
}

#[derive(Debug)]
struct Cached {
    keys: StaticKeys,
    fetched: Instant,
    ttl: Duration,
    etag: Option<String>,
    last_modified: Option<String>,
    body: Vec<u8>,
}

/// One JWK Set on disk (`--cache-dir`).
#[derive(serde::Serialize, serde::Deserialize)]
struct DiskEntry {
    url: String,
    /// Unix seconds when it was fetched or revalidated.
    stored: u64,
    ttl: u64,
    etag: Option<String>,
    last_modified: Option<String>,
    body: String,
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn disk_path(dir: &std::path::Path, kind: &str, url: &str) -> std::path::PathBuf {
    use sha2::Digest as _;
    let h = sha2::Sha256::digest(url.as_bytes());
    let name: String = h.iter().map(|b| format!("{b:02x}")).collect();
    dir.join(format!("{kind}-{name}.json"))
}

/// When an unknown `kid` last forced a refetch of one JWK Set, on disk.
#[derive(serde::Serialize, serde::Deserialize)]
struct DiskCooldown {
    url: String,
    /// Unix seconds.
    at: u64,
}

#[derive(Debug, Default)]
struct State {
    /// The resolved JWK Set URL (and its label) of a metadata authority,
    /// and when the metadata was read (re-read after `default_ttl`).
    jwks_uri: Option<((String, String), Instant)>,
    /// JWK Sets by URL.
    sets: HashMap<String, Cached>,
    /// Keys that need no fetch (inline JWKS, did:key, did:jwk) or a DID
    /// document's keys.
    fixed: Option<(StaticKeys, Instant)>,
    /// When the last fetch forced by an unknown kid happened.
    last_forced: Option<Instant>,
    /// JWK Set URLs that answered 404, and when.
    not_found: HashMap<String, Instant>,
}

/// A [`KeyResolver`] that discovers keys from one [`KeyAuthority`].
#[derive(Debug)]
pub struct Discovery {
    fetcher: Fetcher,
    authority: KeyAuthority,
    policy: DiscoveryPolicy,
    state: Mutex<State>,
}

/// RFC 9111 section 5.2.2 directives that matter here (`no-store`,
/// `no-cache`, `max-age`, parsed as the fetcher's cache parses them): the
/// time a JWK Set stays fresh. No explicit lifetime: `default_ttl`; an
/// invalid or conflicting `max-age`: stale at once.
fn freshness(f: &Fetched, p: &DiscoveryPolicy) -> Duration {
    let d = super::cache::directives(f);
    if d.no_store || d.no_cache {
        return Duration::ZERO;
    }
    match d.max_age {
        None => p.default_ttl,
        // RFC 9111 section 4.2.3: a response that has been cached (the
        // fleet cache, a proxy) arrives with its `Age`, which counts.
        Some(Some(n)) => Duration::from_secs(n.saturating_sub(age_of(f))).min(p.max_ttl),
        Some(None) => Duration::ZERO,
    }
}

/// The `Age` of a response in seconds (RFC 9111 section 5.1; an invalid
/// value counts as none).
fn age_of(f: &Fetched) -> u64 {
    f.header("age")
        .and_then(|a| a.trim().parse::<u64>().ok())
        .unwrap_or(0)
}

/// Keep only the members of a JWK Set a verifier may use, then load them.
///
/// # Errors
/// [`DiscoveryError`] when a document cannot be fetched or parsed, names a key location on another
/// origin, or holds too many or no usable keys.
pub fn load_jwks(
    body: &[u8],
    url: &str,
    source: KeySource,
    max_keys: usize,
) -> Result<StaticKeys, DiscoveryError> {
    let bad = |m: &str| DiscoveryError::BadDocument {
        url: url.to_owned(),
        message: m.to_owned(),
    };
    let v: Value = serde_json::from_slice(body).map_err(|e| bad(&format!("not JSON: {e}")))?;
    let keys = v
        .get("keys")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("not a JWK Set (no \"keys\" array)"))?;
    if keys.len() > max_keys {
        return Err(DiscoveryError::TooManyKeys {
            url: url.to_owned(),
            count: keys.len(),
            limit: max_keys,
        });
    }
    let kept: Vec<Value> = keys.iter().filter(|k| usable_member(k)).cloned().collect();
    let doc = serde_json::to_vec(&serde_json::json!({ "keys": kept }))
        .map_err(|e| bad(&e.to_string()))?;
    StaticKeys::from_jwks(&doc, source, None)
        .map(|got| got.keys)
        .map_err(|e| bad(&e.to_string()))
}

/// RFC 7517 section 4.2/4.3 and RFC 8725 section 3.1: a public signing key.
fn usable_member(k: &Value) -> bool {
    let Some(o) = k.as_object() else { return false };
    let private = ["d", "p", "q", "dp", "dq", "qi", "k"]
        .iter()
        .any(|m| o.contains_key(*m));
    let kty_ok = o
        .get("kty")
        .and_then(Value::as_str)
        .is_some_and(|t| t != "oct");
    let use_ok = match o.get("use") {
        None => true,
        Some(u) => u.as_str() == Some("sig"),
    };
    let ops_ok = match o.get("key_ops") {
        None => true,
        Some(ops) => ops
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x.as_str() == Some("verify"))),
    };
    !private && kty_ok && use_ok && ops_ok
}

impl Discovery {
    /// Discover keys from `authority` with the default policy.
    pub fn new(fetcher: Fetcher, authority: KeyAuthority) -> Discovery {
        Discovery::with_policy(fetcher, authority, DiscoveryPolicy::default())
    }

    /// Discover keys from `authority` with `policy`.
    pub fn with_policy(
        fetcher: Fetcher,
        authority: KeyAuthority,
        policy: DiscoveryPolicy,
    ) -> Discovery {
        Discovery {
            fetcher,
            authority,
            policy,
            state: Mutex::new(State::default()),
        }
    }

    /// The authority keys come from.
    pub fn authority(&self) -> &KeyAuthority {
        &self.authority
    }

    fn fetch_json(&self, url: &str) -> Result<Value, DiscoveryError> {
        let accept = [("accept", "application/json")];
        // With a fleet cache, metadata and DID documents are shared like
        // key sets (RFC 9111 freshness); without one, fetched each time.
        let f = if self.fetcher.fleet_cache().is_some() {
            self.fetcher.get_cached(url, &accept)?
        } else {
            self.fetcher.get_with(url, &accept)?
        };
        serde_json::from_slice(&f.body).map_err(|e| DiscoveryError::BadDocument {
            url: f.url.clone(),
            message: format!("not JSON: {e}"),
        })
    }

    /// RFC 8414: issuer -> checked metadata -> jwks_uri.
    fn as_jwks_uri(&self, issuer: &str) -> Result<(String, String), DiscoveryError> {
        let murl = rfc8414_metadata_url(issuer)?;
        let m = self.fetch_json(&murl)?;
        let got = m.get("issuer").and_then(Value::as_str).unwrap_or("");
        if got != issuer {
            return Err(DiscoveryError::IssuerMismatch {
                expected: issuer.to_owned(),
                got: got.to_owned(),
            });
        }
        let j = jwks_uri_of(&m, &murl)?;
        let label = format!("{j} (jwks_uri of RFC 8414 metadata {murl})");
        Ok((j, label))
    }

    /// RFC 9728: metadata URL -> checked resource -> jwks_uri or first AS.
    fn pr_jwks_uri(&self, murl: &str) -> Result<(String, String), DiscoveryError> {
        let expected = rfc9728_resource_of(murl)?;
        let m = self.fetch_json(murl)?;
        let got = m.get("resource").and_then(Value::as_str).unwrap_or("");
        if got != expected {
            return Err(DiscoveryError::ResourceMismatch {
                expected,
                got: got.to_owned(),
            });
        }
        if m.get("jwks_uri").is_some() {
            let j = jwks_uri_of(&m, murl)?;
            let label = format!("{j} (jwks_uri of RFC 9728 metadata {murl})");
            return Ok((j, label));
        }
        let issuer = m
            .get("authorization_servers")
            .and_then(Value::as_array)
            .and_then(|a| a.first())
            .and_then(Value::as_str)
            .ok_or_else(|| DiscoveryError::BadDocument {
                url: murl.to_owned(),
                message: "neither jwks_uri nor authorization_servers".into(),
            })?;
        self.as_jwks_uri(issuer)
    }

    /// Fetch (or revalidate) a JWK Set into the cache.
    /// Load a disk cache entry into memory; `Some(fresh)` when one was found.
    fn load_disk(&self, st: &mut State, url: &str, label: &str) -> Option<bool> {
        let dir = self.policy.cache_dir.as_ref()?;
        super::disk::ensure_private_dir(dir).ok()?;
        let path = disk_path(dir, "jwks", url);
        let max = self.fetcher.policy().max_body as u64 * 2 + 4096;
        let e: DiskEntry = serde_json::from_slice(&super::disk::read_private(&path, max)?).ok()?;
        if e.url != url {
            return None;
        }
        let keys = load_jwks(
            e.body.as_bytes(),
            url,
            KeySource::Discovered(label.to_owned()),
            self.policy.max_keys,
        )
        .ok()?;
        let now = unix_now();
        let ttl = Duration::from_secs(e.ttl).min(self.policy.max_ttl);
        // Stored "in the future": the clock went back or the entry is not
        // what it claims. Its age is unknown, so it is stale (RFC 9111
        // section 4.2: never fresh without a known age).
        let remaining = if e.stored > now {
            Duration::ZERO
        } else {
            ttl.saturating_sub(Duration::from_secs(now - e.stored))
        };
        st.sets.insert(
            url.to_owned(),
            Cached {
                keys,
                fetched: Instant::now(),
                ttl: remaining,
                etag: e.etag,
                last_modified: e.last_modified,
                body: e.body.into_bytes(),
            },
        );
        Some(!remaining.is_zero())
    }

    /// Write a JWK Set to the disk cache (best effort, atomic rename).
    fn store_disk(&self, url: &str, c: &Cached) {
        let Some(dir) = &self.policy.cache_dir else {
            return;
        };
        let e = DiskEntry {
            url: url.to_owned(),
            stored: unix_now(),
            ttl: c.ttl.as_secs(),
            etag: c.etag.clone(),
            last_modified: c.last_modified.clone(),
            body: String::from_utf8_lossy(&c.body).into_owned(),
        };
        let Ok(bytes) = serde_json::to_vec(&e) else {
            return;
        };
        super::disk::write_private(&disk_path(dir, "jwks", url), &bytes);
    }

    /// Whether an unknown `kid` may force a refetch of `url` now: the last
    /// forced refetch, in this process or (with a cache directory) in any
    /// process of this user, is at least `refresh_cooldown` old. A time in
    /// the future does not hold the cooldown.
    fn cooled(&self, st: &State, url: &str) -> bool {
        let cd = self.policy.refresh_cooldown;
        if st.last_forced.is_some_and(|t| t.elapsed() < cd) {
            return false;
        }
        let Some(dir) = &self.policy.cache_dir else {
            return true;
        };
        if super::disk::ensure_private_dir(dir).is_err() {
            return true;
        }
        let Some(c) = super::disk::read_private(&disk_path(dir, "cooldown", url), 4096)
            .and_then(|b| serde_json::from_slice::<DiskCooldown>(&b).ok())
            .filter(|c| c.url == url)
        else {
            return true;
        };
        let now = unix_now();
        c.at > now || now - c.at >= cd.as_secs()
    }

    /// Record a forced refetch of `url` (memory and cache directory).
    fn record_forced(&self, st: &mut State, url: &str) {
        st.last_forced = Some(Instant::now());
        if let Some(dir) = &self.policy.cache_dir {
            let c = DiskCooldown {
                url: url.to_owned(),
                at: unix_now(),
            };
            if let Ok(bytes) = serde_json::to_vec(&c) {
                super::disk::write_private(&disk_path(dir, "cooldown", url), &bytes);
            }
        }
    }

    fn refresh_set(
        &self,
        st: &mut State,
        url: &str,
        label: &str,
        force: bool,
    ) -> Result<bool, DiscoveryError> {
        if st
            .not_found
            .get(url)
            .is_some_and(|t| t.elapsed() < self.policy.negative_ttl)
        {
            return Err(DiscoveryError::Fetch(FetchError::Status {
                url: url.to_owned(),
                status: 404,
            }));
        }
        if !force && !st.sets.contains_key(url) {
            if let Some(fresh) = self.load_disk(st, url, label) {
                if fresh {
                    return Ok(false);
                }
            }
        }
        let mut h: Vec<(&str, &str)> =
            vec![("accept", "application/jwk-set+json, application/json")];
        let prev = st.sets.get(url);
        let (etag, lm) = (
            prev.and_then(|c| c.etag.clone()),
            prev.and_then(|c| c.last_modified.clone()),
        );
        if let Some(e) = &etag {
            h.push(("if-none-match", e));
        }
        if let Some(l) = &lm {
            h.push(("if-modified-since", l));
        }
        // With a fleet cache, a set the fleet holds fresh is taken from it
        // (verified below as a fetched one); a forced refetch (an unknown
        // `kid`) asks the origin and shares what it got.
        let requested = Instant::now();
        let shared = self.fetcher.fleet_cache().is_some() && !force;
        let got = if shared {
            self.fetcher.get_cached_exact(url, &h[..1])
        } else {
            self.fetcher.get_exact(url, &h)
        };
        if !shared && force {
            if let Ok(f) = &got {
                self.fetcher.share(url, &h[..1], f, requested);
            }
        }
        let f = match got {
            Ok(f) => f,
            Err(e @ FetchError::Status { status: 404, .. }) => {
                st.not_found.insert(url.to_owned(), Instant::now());
                return Err(e.into());
            }
            Err(e) => return Err(e.into()),
        };
        let from_origin = f.cache != super::cache::CacheStatus::Fresh;
        let ttl = freshness(&f, &self.policy);
        let no_store = super::cache::directives(&f).no_store;
        if f.status == 304 {
            if let Some(c) = st.sets.get_mut(url) {
                c.fetched = Instant::now();
                c.ttl = ttl;
                if !no_store {
                    self.store_disk(url, c);
                }
                return Ok(true);
            }
        }
        let keys = load_jwks(
            &f.body,
            url,
            KeySource::Discovered(label.to_owned()),
            self.policy.max_keys,
        )?;
        let c = Cached {
            keys,
            fetched: Instant::now(),
            ttl,
            etag: f.header("etag").map(str::to_owned),
            last_modified: f.header("last-modified").map(str::to_owned),
            body: f.body,
        };
        if !no_store {
            self.store_disk(url, &c);
        }
        st.sets.insert(url.to_owned(), c);
        // Taken from a cache (the fleet's): not a fetch, so an unknown
        // `kid` may still force one.
        Ok(from_origin)
    }

    fn did_keys(&self, d: &str) -> Result<StaticKeys, DiscoveryError> {
        if d.starts_with("did:key:") {
            let k = did::decode_did_key(d)?;
            let base = d.split('#').next().unwrap_or(d);
            let frag = base.strip_prefix("did:key:").unwrap_or("");
            return Ok(StaticKeys::new().with(
                k.with_kid(format!("{base}#{frag}")),
                KeySource::Discovered(base.to_owned()),
            ));
        }
        if d.starts_with("did:jwk:") {
            let k = did::decode_did_jwk(d)?;
            let base = d.split('#').next().unwrap_or(d);
            return Ok(StaticKeys::new().with(
                k.with_kid(format!("{base}#0")),
                KeySource::Discovered(base.to_owned()),
            ));
        }
        let url = did::did_web_url(d)?;
        let doc = self.fetch_json(&url)?;
        did_document_keys(&doc, d, &url)
    }
}

fn jwks_uri_of(m: &Value, murl: &str) -> Result<String, DiscoveryError> {
    let j =
        m.get("jwks_uri")
            .and_then(Value::as_str)
            .ok_or_else(|| DiscoveryError::BadDocument {
                url: murl.to_owned(),
                message: "no jwks_uri".into(),
            })?;
    if !j.starts_with("https://") {
        return Err(DiscoveryError::Fetch(FetchError::NotHttps(j.to_owned())));
    }
    Ok(j.to_owned())
}

/// The keys of a DID document (W3C DID Core section 5.2-5.3): its `id` must
/// equal `did`; only verification methods referenced from `assertionMethod`
/// or `authentication` (by reference or embedded), with `publicKeyJwk` or
/// `publicKeyMultibase` (a did:key-style multikey). Each key's `kid` is the
/// method's absolute DID URL.
///
/// # Errors
/// [`DiscoveryError`] when a document cannot be fetched or parsed, names a key location on another
/// origin, or holds too many or no usable keys.
pub fn did_document_keys(doc: &Value, did: &str, url: &str) -> Result<StaticKeys, DiscoveryError> {
    let id = doc.get("id").and_then(Value::as_str).unwrap_or("");
    if id != did {
        return Err(DiscoveryError::DidIdMismatch {
            expected: did.to_owned(),
            got: id.to_owned(),
        });
    }
    let abs = |r: &str| {
        if r.starts_with('#') {
            format!("{did}{r}")
        } else {
            r.to_owned()
        }
    };
    let mut referenced = Vec::new();
    let mut methods: Vec<&Value> = Vec::new();
    for rel in ["assertionMethod", "authentication"] {
        for e in doc.get(rel).and_then(Value::as_array).into_iter().flatten() {
            match e {
                Value::String(r) => referenced.push(abs(r)),
                Value::Object(_) => methods.push(e),
                _ => {}
            }
        }
    }
    for vm in doc
        .get("verificationMethod")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let vid = vm.get("id").and_then(Value::as_str).map(abs);
        if vid.is_some_and(|v| referenced.contains(&v)) {
            methods.push(vm);
        }
    }
    let mut out = StaticKeys::new();
    for vm in methods {
        let Some(vid) = vm.get("id").and_then(Value::as_str).map(abs) else {
            continue;
        };
        let key = if let Some(j) = vm.get("publicKeyJwk") {
            if !usable_member(j) {
                continue;
            }
            match crate::jwk::Jwk::from_value(j).and_then(|j| j.to_verifying_key(None)) {
                Ok(k) => k,
                Err(_) => continue,
            }
        } else if let Some(mb) = vm.get("publicKeyMultibase").and_then(Value::as_str) {
            match did::decode_did_key(&format!("did:key:{mb}")) {
                Ok(k) => k,
                Err(_) => continue,
            }
        } else {
            continue;
        };
        out.add(
            key.with_kid(vid.clone()),
            KeySource::Discovered(format!("{vid} (DID document {url})")),
        );
    }
    Ok(out)
}

/// Several trusted keys for one signature is an error (like panva/jose's
/// `JWKSMultipleMatchingKeys`): the signer must name its key.
fn one_key(keys: Vec<TrustedKey>, req: &KeyRequest) -> Result<Vec<TrustedKey>, ResolveError> {
    let keys: Vec<TrustedKey> = keys
        .into_iter()
        .filter(|t| req.alg.is_none_or(|a| t.key.algorithm() == a))
        .collect();
    if keys.len() > 1 {
        return Err(DiscoveryError::AmbiguousKey {
            count: keys.len(),
            kid: req.kid.clone(),
        }
        .into());
    }
    Ok(keys)
}

impl KeyResolver for Discovery {
    fn resolve(&self, req: &KeyRequest) -> Result<Vec<TrustedKey>, ResolveError> {
        crate::trust::check_kid(req.kid.as_deref())?;
        let mut st = self
            .state
            .lock()
            .map_err(|_| ResolveError::discovery("discovery state poisoned"))?;
        let (url, label) = match &self.authority {
            KeyAuthority::Jwks(v) => {
                if st.fixed.is_none() {
                    let body = serde_json::to_vec(v)
                        .map_err(|e| ResolveError::discovery(e.to_string()))?;
                    let k = load_jwks(
                        &body,
                        "inline jwks",
                        KeySource::Discovered("descriptor authentication.jwks".into()),
                        self.policy.max_keys,
                    )?;
                    st.fixed = Some((k, Instant::now()));
                }
                let k = st.fixed.as_ref().map(|f| f.0.resolve(req)).transpose()?;
                return one_key(k.unwrap_or_default(), req);
            }
            KeyAuthority::Did(d) => {
                // Only the bound DID's keys count: a kid naming another DID
                // is refused by name (draft-narvaneni-agent-uri-03 sections 4.3 and 10.3).
                let base = d.split('#').next().unwrap_or(d);
                if let Some(k) = req.kid.as_deref().or(req.did_url.as_deref()) {
                    let kb = k.split('#').next().unwrap_or(k);
                    if kb.to_ascii_lowercase().starts_with("did:") && kb != base {
                        return Err(DiscoveryError::DidNotBound {
                            kid: k.to_owned(),
                            bound: base.to_owned(),
                        }
                        .into());
                    }
                }
                let stale = st
                    .fixed
                    .as_ref()
                    .is_none_or(|f| f.1.elapsed() >= self.policy.default_ttl);
                if stale {
                    let k = self.did_keys(d)?;
                    st.fixed = Some((k, Instant::now()));
                }
                let mut r = req.clone();
                if let Some(k) = &r.kid {
                    if k.starts_with('#') {
                        r.kid = Some(format!("{}{k}", d.split('#').next().unwrap_or(d)));
                    }
                }
                if r.kid.is_none() {
                    r.kid = r.did_url.clone();
                }
                let k = st.fixed.as_ref().map(|f| f.0.resolve(&r)).transpose()?;
                return one_key(k.unwrap_or_default(), req);
            }
            KeyAuthority::JwksUri(u) => (
                u.clone(),
                format!("{u} (descriptor authentication.jwksUri)"),
            ),
            KeyAuthority::AuthorizationServer(_) | KeyAuthority::ProtectedResourceMetadata(_) => {
                match &st.jwks_uri {
                    Some((x, at)) if at.elapsed() < self.policy.default_ttl => x.clone(),
                    _ => {
                        let x = match &self.authority {
                            KeyAuthority::AuthorizationServer(i) => self.as_jwks_uri(i)?,
                            KeyAuthority::ProtectedResourceMetadata(m) => self.pr_jwks_uri(m)?,
                            // Not reached (outer match); fail closed.
                            _ => return Ok(Vec::new()),
                        };
                        st.jwks_uri = Some((x.clone(), Instant::now()));
                        x
                    }
                }
            }
        };
        let fresh = st
            .sets
            .get(&url)
            .is_some_and(|c| c.fetched.elapsed() < c.ttl);
        let mut fetched_now = false;
        if !fresh {
            fetched_now = self.refresh_set(&mut st, &url, &label, false)?;
        }
        let mut found = match st.sets.get(&url) {
            Some(c) => c.keys.resolve(req)?,
            None => Vec::new(),
        };
        // An unknown kid: the set may have rotated. Refetch, at most once per
        // cooldown (no refetch amplification by attacker-chosen kids).
        if found.is_empty() && req.kid.is_some() && !fetched_now && self.cooled(&st, &url) {
            self.record_forced(&mut st, &url);
            self.refresh_set(&mut st, &url, &label, true)?;
            found = match st.sets.get(&url) {
                Some(c) => c.keys.resolve(req)?,
                None => Vec::new(),
            };
        }
        one_key(found, req)
    }
}
