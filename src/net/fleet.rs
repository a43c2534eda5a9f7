//! The fleet-wide cache of fetched key sets: JWK Sets, Web Bot Auth key
//! directories, `Signature-Key` `jwks_uri` documents, DID documents,
//! RFC 8414 and RFC 9728 metadata and `agents.json` registries, shared by
//! every verifier process of a fleet through one
//! [`BlobStore`] (the fleet's Redis: single
//! server, Cluster or Sentinel), so that N processes fetch an agent's
//! directory once per freshness lifetime instead of N times.
//!
//! It is a second tier under the fetcher's private RFC 9111 cache
//! ([`super::cache`]): [`Fetcher::with_fleet_cache`](super::Fetcher::with_fleet_cache).
//!
//! # What is stored
//! One entry per exact URL (the store key is the SHA-256 of the URL): the
//! response bytes and their HTTP caching facts, as the local cache keeps
//! them (status, header fields, validators, the request fields the
//! response `Vary`s on, the corrected initial age and freshness lifetime of
//! RFC 9111 sections 4.2.1 and 4.2.3, the time it was stored). Only what
//! RFC 9111 section 3 lets a private cache store is shared (the same
//! decision as the local cache: no `no-store`, no `Vary: *`, no redirect),
//! and only while fresh: the entry's expiry in the store is the freshness
//! left, at most [`FleetPolicy::max_ttl`]. A response that is not fresh
//! (`no-cache`, `max-age=0`) is not shared; each process keeps it locally
//! to revalidate.
//!
//! A fetch that failed at the origin (timeout, transport error, a status
//! other than 2xx, a body too large) is stored as a failure for
//! [`FleetPolicy::failure_ttl`] (30 s by default, the
//! `DirectoryClient`'s own, [`DEFAULT_FAILURE_TTL`]): a
//! tarpit directory costs the fleet one fetch per interval. A refusal made
//! before connecting (the SSRF guard, a URL that is not https) is each
//! process's own policy and is not shared.
//!
//! # One fetch per fleet
//! A process that finds no usable entry takes a short lock on the URL in
//! the store (`SET NX PX`, for the fetch deadline plus one second) and
//! fetches; the others poll the store for the entry (every
//! [`FleetPolicy::poll`]) until the holder stores it, or stores a failure,
//! or the lock expires (then one of them takes it), or their own operation
//! deadline passes (a `FetchError::Deadline`).
//!
//! # Security contract
//! Whoever can write to the store could otherwise choose the keys every
//! verifier of the fleet trusts (a plain JWK Set carries no signature of
//! its own), so:
//! * every entry carries an HMAC-SHA-256 (ring) under the fleet secret
//!   ([`FleetSecret`], at least [`MIN_SECRET_LEN`] bytes, read from a file
//!   or an environment variable, never from the command line) over a
//!   domain-separation label, the URL and the entry (facts and bytes); it
//!   is checked in constant time (`ring::hmac::verify`) before anything of
//!   the entry is parsed;
//! * an entry whose MAC does not verify, that does not parse, that names
//!   another URL or is larger than the bounds is ignored as if absent:
//!   the origin is asked and the entry replaced. It is counted
//!   ([`FleetStats::rejected`]) and reported;
//! * an entry copied from another URL's key fails its MAC (the URL is
//!   covered); an old genuine entry put back is stale by its own stored
//!   time and lifetime and is not used;
//! * every entry is still verified on every use exactly as a locally
//!   fetched response is (a directory's own signature and its expiry, key
//!   thumbprints, the media type, the key count): the fleet cache decides
//!   only whether the origin is asked;
//! * the store unreachable (or failing) is reported once and the process
//!   fetches from the origin itself: the cache is an optimisation and never
//!   makes a signature verify or fail.

use super::cache::{storable, vary_matches, CachePolicy, CacheStatus, Fetched};
use crate::replay::blob::{BlobStore, LockToken};
use base64::Engine as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// Shortest fleet secret accepted: 32 bytes (the HMAC-SHA-256 key length,
/// RFC 2104 section 3).
pub const MIN_SECRET_LEN: usize = 32;
/// Largest fleet secret file read.
pub const MAX_SECRET_FILE: u64 = 4096;
/// The environment variable the command line reads the fleet secret from
/// (the secret itself) when no secret file is named.
pub const FLEET_SECRET_ENV: &str = "AGENTSIG_FLEET_SECRET";
/// Default time a failed fetch is shared: 30 s (also the time a
/// `DirectoryClient` remembers a failure itself).
pub const DEFAULT_FAILURE_TTL: Duration = Duration::from_secs(30);
/// Most header fields of one shared entry.
pub const MAX_ENTRY_FIELDS: usize = 64;
/// Most bytes of the header fields of one shared entry.
pub const MAX_ENTRY_FIELD_BYTES: usize = 16 * 1024;

/// The label the MAC input starts with (domain separation: no other MAC
/// made with the fleet secret can pass as an entry).
const MAC_LABEL: &[u8] = b"agentsig fleet key-set cache v1\0";

/// Why a fleet secret is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FleetSecretError {
    /// Fewer than [`MIN_SECRET_LEN`] bytes.
    #[error("the fleet secret is {len} bytes; at least {MIN_SECRET_LEN} are required (e.g. `openssl rand -hex 32 > FILE`)")]
    TooShort {
        /// Its length.
        len: usize,
    },
    /// The secret file could not be read.
    #[error("fleet secret file {path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// What failed.
        message: String,
    },
    /// The secret file is not a regular file, or others may read or
    /// replace it.
    #[error("fleet secret file {path} is {why}: it must be a regular file that only its owner can read and write (chmod 600)")]
    NotPrivate {
        /// The file.
        path: String,
        /// What is wrong.
        why: String,
    },
    /// The environment variable is not set.
    #[error("the fleet key-set cache needs a secret: give --fleet-secret-file FILE or set {var} (at least {MIN_SECRET_LEN} bytes, the same on every verifier of the fleet)")]
    Missing {
        /// The variable.
        var: String,
    },
}

/// The secret every verifier of a fleet shares to authenticate the entries
/// of the fleet cache. Its bytes are wiped when dropped.
pub struct FleetSecret(zeroize::Zeroizing<Vec<u8>>);

impl std::fmt::Debug for FleetSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FleetSecret(..)")
    }
}

impl FleetSecret {
    /// The secret `bytes`, at least [`MIN_SECRET_LEN`] of them.
    ///
    /// # Errors
    /// [`FleetSecretError::TooShort`].
    pub fn from_bytes(bytes: Vec<u8>) -> Result<FleetSecret, FleetSecretError> {
        let bytes = zeroize::Zeroizing::new(bytes);
        if bytes.len() < MIN_SECRET_LEN {
            return Err(FleetSecretError::TooShort { len: bytes.len() });
        }
        Ok(FleetSecret(bytes))
    }

    /// The contents of `path` (one trailing newline removed), a regular
    /// file of at most [`MAX_SECRET_FILE`] bytes that only its owner can
    /// read or write (mode `0600` or `0400`: whoever reads the secret can
    /// forge entries every verifier of the fleet accepts), opened without
    /// blocking (a FIFO at the path is refused, not waited on).
    ///
    /// # Errors
    /// [`FleetSecretError`] when the file cannot be read, is not a regular
    /// file, is open to its group or others, or is too short.
    pub fn from_file(path: &std::path::Path) -> Result<FleetSecret, FleetSecretError> {
        use crate::keys::secret_file::{read_private, SecretFileError};
        let shown = path.display().to_string();
        let mut buf = read_private(path, MAX_SECRET_FILE).map_err(|e| match e {
            SecretFileError::Io(message) => FleetSecretError::Io {
                path: shown.clone(),
                message,
            },
            SecretFileError::NotPrivate(why) => FleetSecretError::NotPrivate {
                path: shown.clone(),
                why,
            },
        })?;
        if buf.last() == Some(&b'\n') {
            buf.pop();
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
        }
        FleetSecret::from_bytes(buf.to_vec())
    }

    /// The value of the environment variable `var`.
    ///
    /// # Errors
    /// [`FleetSecretError::Missing`] when it is unset or empty, and
    /// [`FleetSecretError::TooShort`].
    pub fn from_env(var: &str) -> Result<FleetSecret, FleetSecretError> {
        match std::env::var_os(var) {
            Some(v) if !v.is_empty() => FleetSecret::from_bytes(v.into_encoded_bytes()),
            _ => Err(FleetSecretError::Missing {
                var: var.to_owned(),
            }),
        }
    }

    /// The fleet secret of a verifier's options: from `file` when one is
    /// named ([`FleetSecret::from_file`]), else from [`FLEET_SECRET_ENV`]
    /// ([`FleetSecret::from_env`]); never from a command-line value.
    ///
    /// # Errors
    /// Those of [`FleetSecret::from_file`] or [`FleetSecret::from_env`].
    pub fn from_file_or_env(
        file: Option<&std::path::Path>,
    ) -> Result<FleetSecret, FleetSecretError> {
        match file {
            Some(path) => FleetSecret::from_file(path),
            None => FleetSecret::from_env(FLEET_SECRET_ENV),
        }
    }
}

/// Settings of a [`FleetCache`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct FleetPolicy {
    /// Longest an entry is shared, whatever its origin says (default 24 h,
    /// as [`CachePolicy::max_ttl`]).
    pub max_ttl: Duration,
    /// How long a failed fetch is shared (default 30 s; zero shares none).
    pub failure_ttl: Duration,
    /// Largest entry read or written (default 1 MiB plus the header
    /// fields); a larger stored value is ignored.
    pub max_entry: usize,
    /// Interval at which a process waiting for another's fetch reads the
    /// store again (default 20 ms).
    pub poll: Duration,
}

impl Default for FleetPolicy {
    fn default() -> Self {
        FleetPolicy {
            max_ttl: CachePolicy::default().max_ttl,
            failure_ttl: DEFAULT_FAILURE_TTL,
            max_entry: 1024 * 1024 + 2 * MAX_ENTRY_FIELD_BYTES,
            poll: Duration::from_millis(20),
        }
    }
}

/// Counters of a [`FleetCache`], since it was made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FleetStats {
    /// Fresh entries used (the origin was not asked).
    pub hits: u64,
    /// Shared failures answered (the origin was not asked).
    pub failures_served: u64,
    /// Lookups that found nothing usable.
    pub misses: u64,
    /// Entries and failures written.
    pub stores: u64,
    /// Entries ignored: a MAC that does not verify, an entry that does not
    /// parse, names another URL or is too large.
    pub rejected: u64,
    /// Lookups that waited for another process's fetch.
    pub waits: u64,
    /// Operations the store could not serve (the origin was asked).
    pub unavailable: u64,
}

#[derive(Debug, Default)]
struct Counters {
    hits: AtomicU64,
    failures_served: AtomicU64,
    misses: AtomicU64,
    stores: AtomicU64,
    rejected: AtomicU64,
    waits: AtomicU64,
    unavailable: AtomicU64,
}

/// Where reports go (see [`FleetCache::on_report`]).
type Reporter = Arc<dyn Fn(&str) + Send + Sync>;

/// The fleet-wide cache of fetched key sets (see the module documentation).
/// Give it to every [`Fetcher`](super::Fetcher) of every verifier process
/// with [`Fetcher::with_fleet_cache`](super::Fetcher::with_fleet_cache).
pub struct FleetCache {
    store: Arc<dyn BlobStore>,
    key: ring::hmac::Key,
    policy: FleetPolicy,
    counters: Counters,
    reported_unavailable: AtomicBool,
    reporter: Option<Reporter>,
}

impl std::fmt::Debug for FleetCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FleetCache")
            .field("store", &self.store)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

/// What the store holds for a URL, as the fetcher uses it.
#[derive(Debug)]
pub(crate) enum Shared {
    /// Nothing usable.
    Miss,
    /// A fresh response; its `Age` field says how old it is now.
    Fresh(Fetched),
    /// A failure another process met, still remembered.
    Failed(Failure),
}

/// A fetch that failed at the origin, as it is shared: enough for the
/// fetcher to give its callers an error of the same kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    /// The status, when the origin answered one other than 2xx.
    pub(crate) status: Option<u16>,
    /// Whether it was a timeout.
    pub(crate) timeout: bool,
    /// The body cap, when the body exceeded it.
    pub(crate) too_large: Option<usize>,
    /// What failed, as text.
    pub(crate) message: String,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Payload {
    url: String,
    /// When it was stored, Unix milliseconds.
    stored: u64,
    entry: Stored,
}

#[derive(serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
enum Stored {
    Response {
        status: u16,
        fields: Vec<(String, String)>,
        vary: Vec<(String, Option<String>)>,
        initial_age_ms: u64,
        lifetime_ms: u64,
        body: String,
    },
    Failure {
        ttl_ms: u64,
        status: Option<u16>,
        timeout: bool,
        too_large: Option<usize>,
        message: String,
    },
}

/// The name `url`'s entry and lock are stored under for verifiers whose
/// fetch policy has the scope `scope` ([`policy_scope`]): the URL itself
/// for the default policy, else the scope, a space (which no URL holds)
/// and the URL. The MAC covers it, so an entry does not move between
/// scopes either.
pub(crate) fn scoped(url: &str, scope: &str) -> String {
    if scope.is_empty() {
        url.to_owned()
    } else {
        format!("{scope} {url}")
    }
}

/// What in a fetch policy decides what a fetch of a URL returns, beyond
/// the URL: the extra CA roots trusted, the addresses pinned for names
/// (`--resolve-to`), and the internal addresses allowed. Verifiers share
/// an entry only when these are the same, so a verifier never takes a
/// document from the fleet that its own fetch would not have accepted
/// (a server its roots do not trust, an address it would not have
/// asked, a private network it refuses). Empty for the default policy;
/// else `scope-` and the SHA-256 of the three, in a canonical order.
pub(crate) fn policy_scope(p: &super::FetchPolicy) -> String {
    use sha2::Digest as _;
    if p.extra_roots_pem.is_empty()
        && p.pins.is_empty()
        && !p.allow_private_networks
        && p.private_hosts.is_empty()
    {
        return String::new();
    }
    let mut h = sha2::Sha256::new();
    let mut part = |b: &[u8]| {
        h.update((b.len() as u64).to_be_bytes());
        h.update(b);
    };
    part(b"roots");
    for pem in &p.extra_roots_pem {
        part(pem);
    }
    part(b"pins");
    let mut pins: Vec<_> = p.pins.iter().collect();
    pins.sort();
    for (host, addrs) in pins {
        part(host.as_bytes());
        let mut a: Vec<String> = addrs.iter().map(ToString::to_string).collect();
        a.sort();
        part(a.join(",").as_bytes());
    }
    part(b"private");
    part(&[u8::from(p.allow_private_networks)]);
    let mut hosts = p.private_hosts.clone();
    hosts.sort();
    for host in &hosts {
        part(host.as_bytes());
    }
    format!(
        "scope-{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&h.finalize()[..16])
    )
}

fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A stored time later than now by more than this is not trusted as an
/// age (clocks of a fleet differ a little; RFC 9111 section 4.2.3: an
/// unknown age is not fresh).
const CLOCK_SLACK: Duration = Duration::from_secs(5);

impl FleetCache {
    /// A fleet cache over `store`, authenticated with `secret`.
    pub fn new(store: Arc<dyn BlobStore>, secret: &FleetSecret) -> FleetCache {
        FleetCache {
            store,
            key: ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &secret.0),
            policy: FleetPolicy::default(),
            counters: Counters::default(),
            reported_unavailable: AtomicBool::new(false),
            reporter: None,
        }
    }

    /// Open the store named by `url` (`memory:` or a Redis store URL, see
    /// [`open_blob_store`](crate::replay::blob::open_blob_store)).
    ///
    /// # Errors
    /// [`ReplayError`](crate::replay::ReplayError) when the URL is not a
    /// store URL; the store is not contacted.
    pub fn open(url: &str, secret: &FleetSecret) -> Result<FleetCache, crate::replay::ReplayError> {
        Ok(FleetCache::new(
            crate::replay::blob::open_blob_store(url)?,
            secret,
        ))
    }

    /// Use `policy`.
    pub fn policy(mut self, policy: FleetPolicy) -> FleetCache {
        self.policy = policy;
        self
    }

    /// Send reports (the store unreachable, once; each rejected entry) to
    /// `f` instead of standard error.
    pub fn on_report(mut self, f: impl Fn(&str) + Send + Sync + 'static) -> FleetCache {
        self.reporter = Some(Arc::new(f));
        self
    }

    /// The counters so far.
    pub fn stats(&self) -> FleetStats {
        let c = &self.counters;
        let l = |a: &AtomicU64| a.load(Ordering::Relaxed);
        FleetStats {
            hits: l(&c.hits),
            failures_served: l(&c.failures_served),
            misses: l(&c.misses),
            stores: l(&c.stores),
            rejected: l(&c.rejected),
            waits: l(&c.waits),
            unavailable: l(&c.unavailable),
        }
    }

    pub(crate) fn fleet_policy(&self) -> &FleetPolicy {
        &self.policy
    }

    fn report(&self, m: &str) {
        match &self.reporter {
            Some(f) => f(m),
            None => eprintln!("agentsig: fleet key-set cache: {m}"),
        }
    }

    /// The store failed: count it, report the first time, go on without.
    fn unavailable(&self, e: &crate::replay::ReplayError) {
        self.counters.unavailable.fetch_add(1, Ordering::Relaxed);
        if !self.reported_unavailable.swap(true, Ordering::Relaxed) {
            self.report(&format!(
                "{e}; fetching key sets from their origins instead (reported once)"
            ));
        }
    }

    fn reject(&self, url: &str, why: &str) {
        self.counters.rejected.fetch_add(1, Ordering::Relaxed);
        self.report(&format!(
            "entry for {} ignored and refetched: {why}",
            crate::text::quoted(url)
        ));
    }

    fn mac_input(url: &str, payload: &[u8]) -> Vec<u8> {
        let mut m = Vec::with_capacity(MAC_LABEL.len() + url.len() + payload.len() + 16);
        m.extend_from_slice(MAC_LABEL);
        m.extend_from_slice(&(url.len() as u64).to_be_bytes());
        m.extend_from_slice(url.as_bytes());
        m.extend_from_slice(&(payload.len() as u64).to_be_bytes());
        m.extend_from_slice(payload);
        m
    }

    /// The sealed value of `payload`: its MAC, then the payload.
    fn seal(&self, payload: &Payload) -> Option<Vec<u8>> {
        let p = serde_json::to_vec(payload).ok()?;
        let tag = ring::hmac::sign(&self.key, &Self::mac_input(&payload.url, &p));
        let mut v = tag.as_ref().to_vec();
        v.extend_from_slice(&p);
        Some(v)
    }

    /// The payload of a sealed value, when its MAC verifies for `url`.
    fn open_sealed(&self, url: &str, v: &[u8]) -> Result<Payload, &'static str> {
        const TAG: usize = 32;
        if v.len() < TAG {
            return Err("shorter than its MAC");
        }
        let (tag, p) = v.split_at(TAG);
        ring::hmac::verify(&self.key, &Self::mac_input(url, p), tag)
            .map_err(|_| "its MAC does not verify with this fleet secret")?;
        let payload: Payload =
            serde_json::from_slice(p).map_err(|_| "it does not parse as an entry")?;
        if payload.url != url {
            return Err("it names another URL");
        }
        Ok(payload)
    }

    /// The entry decoder on its own, for the fuzz target
    /// (`fuzz/fuzz_targets/fleet_entry.rs`): `value` as the store would
    /// hold it for `url` (its MAC, then the payload), the MAC checked, the
    /// payload parsed and judged as [`FleetCache`] judges a stored entry
    /// for a request sending `headers`. With `seal`, `value` is a payload,
    /// sealed first with this cache's key, so that the payload decoder is
    /// reached. The fresh response it yields, if any; nothing is read from
    /// or written to the store.
    #[doc(hidden)]
    pub fn decode_entry(
        &self,
        url: &str,
        value: &[u8],
        seal: bool,
        headers: &[(&str, &str)],
    ) -> Option<Fetched> {
        let sealed;
        let value = if seal {
            let tag = ring::hmac::sign(&self.key, &Self::mac_input(url, value));
            sealed = [tag.as_ref(), value].concat();
            &sealed[..]
        } else {
            value
        };
        match self.open_sealed(url, value) {
            Ok(p) => match self.usable(url, headers, p) {
                Shared::Fresh(f) => Some(f),
                Shared::Miss | Shared::Failed(_) => None,
            },
            Err(why) => {
                self.reject(url, why);
                None
            }
        }
    }

    /// What the store holds for `url`, for a request sending `headers`;
    /// `None` when the store could not be read (reported).
    pub(crate) fn lookup(
        &self,
        url: &str,
        scope: &str,
        headers: &[(&str, &str)],
    ) -> Option<Shared> {
        let name = scoped(url, scope);
        let got = match self.store.get(name.as_bytes(), self.policy.max_entry) {
            Ok(g) => g,
            Err(e) => {
                self.unavailable(&e);
                return None;
            }
        };
        let shared = match got.map(|v| self.open_sealed(&name, &v)) {
            None => Shared::Miss,
            Some(Err(why)) => {
                self.reject(url, why);
                Shared::Miss
            }
            Some(Ok(p)) => self.usable(url, headers, p),
        };
        let c = &self.counters;
        match &shared {
            Shared::Miss => c.misses.fetch_add(1, Ordering::Relaxed),
            Shared::Fresh(_) => c.hits.fetch_add(1, Ordering::Relaxed),
            Shared::Failed(_) => c.failures_served.fetch_add(1, Ordering::Relaxed),
        };
        Some(shared)
    }

    /// An authenticated payload as the fetcher uses it: fresh, or a
    /// failure still remembered, or nothing.
    fn usable(&self, url: &str, headers: &[(&str, &str)], p: Payload) -> Shared {
        let now = unix_ms(SystemTime::now());
        if p.stored > now.saturating_add(ms(CLOCK_SLACK)) {
            return Shared::Miss;
        }
        let elapsed = Duration::from_millis(now.saturating_sub(p.stored));
        match p.entry {
            Stored::Failure {
                ttl_ms,
                status,
                timeout,
                too_large,
                message,
            } => {
                let ttl = Duration::from_millis(ttl_ms).min(self.policy.failure_ttl);
                if elapsed >= ttl {
                    return Shared::Miss;
                }
                Shared::Failed(Failure {
                    status,
                    timeout,
                    too_large,
                    message,
                })
            }
            Stored::Response {
                status,
                fields,
                vary,
                initial_age_ms,
                lifetime_ms,
                body,
            } => {
                let age = Duration::from_millis(initial_age_ms).saturating_add(elapsed);
                let lifetime = Duration::from_millis(lifetime_ms).min(self.policy.max_ttl);
                if lifetime <= age || !vary_matches(&vary, headers) {
                    return Shared::Miss;
                }
                let Ok(body) = base64::engine::general_purpose::STANDARD.decode(body) else {
                    self.reject(url, "its body is not base64");
                    return Shared::Miss;
                };
                let mut h = http::HeaderMap::new();
                for (n, v) in &fields {
                    let (Ok(n), Ok(v)) = (
                        http::HeaderName::from_bytes(n.as_bytes()),
                        http::HeaderValue::from_str(v),
                    ) else {
                        self.reject(url, "a header field does not parse");
                        return Shared::Miss;
                    };
                    h.append(n, v);
                }
                // RFC 9111 section 5.1: a cache sends the response's age,
                // in whole seconds. Rounded up: a verifier's own copy then
                // goes stale no later than this entry (truncated, it could
                // outlive it by up to a second, and be served past the
                // lifetime the fleet counts its fetches by).
                let secs = age.as_secs() + u64::from(age.subsec_nanos() > 0);
                h.insert(http::header::AGE, http::HeaderValue::from(secs));
                Shared::Fresh(Fetched {
                    url: url.to_owned(),
                    status,
                    headers: h,
                    body,
                    redirects: Vec::new(),
                    cache: CacheStatus::Fresh,
                })
            }
        }
    }

    /// Share `f` (the answer to `headers`, asked at `requested`) while it
    /// is fresh, when the local cache under `cache` could store it.
    pub(crate) fn offer(
        &self,
        url: &str,
        scope: &str,
        headers: &[(&str, &str)],
        f: &Fetched,
        requested: Instant,
        cache: &CachePolicy,
    ) {
        let received = SystemTime::now();
        let cache = CachePolicy {
            max_ttl: cache.max_ttl.min(self.policy.max_ttl),
            max_bytes: usize::MAX,
            ..cache.clone()
        };
        let Some(facts) = storable(&cache, f, headers, requested, Instant::now(), received) else {
            return;
        };
        let left = facts.lifetime.saturating_sub(facts.initial_age);
        if left.is_zero() || f.url != url || f.status != 200 {
            return;
        }
        let mut fields = Vec::new();
        let mut bytes = 0;
        for (n, v) in &f.headers {
            let Ok(v) = v.to_str() else { return };
            bytes += n.as_str().len() + v.len();
            fields.push((n.as_str().to_owned(), v.to_owned()));
        }
        if fields.len() > MAX_ENTRY_FIELDS || bytes > MAX_ENTRY_FIELD_BYTES {
            return;
        }
        let payload = Payload {
            url: scoped(url, scope),
            stored: unix_ms(received),
            entry: Stored::Response {
                status: f.status,
                fields,
                vary: facts.vary,
                initial_age_ms: ms(facts.initial_age),
                lifetime_ms: ms(facts.lifetime),
                body: base64::engine::general_purpose::STANDARD.encode(&f.body),
            },
        };
        self.put(&payload, left);
    }

    /// Share that fetching `url` failed at the origin (`f`), for
    /// [`FleetPolicy::failure_ttl`].
    pub(crate) fn offer_failure(&self, url: &str, scope: &str, f: Failure) {
        let ttl = self.policy.failure_ttl;
        if ttl.is_zero() {
            return;
        }
        let payload = Payload {
            url: scoped(url, scope),
            stored: unix_ms(SystemTime::now()),
            entry: Stored::Failure {
                ttl_ms: ms(ttl),
                status: f.status,
                timeout: f.timeout,
                too_large: f.too_large,
                message: f.message.chars().take(500).collect(),
            },
        };
        self.put(&payload, ttl);
    }

    fn put(&self, payload: &Payload, ttl: Duration) {
        let Some(v) = self.seal(payload) else { return };
        if v.len() > self.policy.max_entry {
            return;
        }
        match self.store.put(payload.url.as_bytes(), &v, ttl) {
            Ok(()) => {
                self.counters.stores.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => self.unavailable(&e),
        }
    }

    /// Take the fetch lock of `url` for `ttl`: `Some(Some(_))` taken,
    /// `Some(None)` held by another process, `None` the store failed
    /// (reported).
    pub(crate) fn try_lock(
        &self,
        url: &str,
        scope: &str,
        ttl: Duration,
    ) -> Option<Option<LockToken>> {
        match self.store.try_lock(scoped(url, scope).as_bytes(), ttl) {
            Ok(t) => Some(t),
            Err(e) => {
                self.unavailable(&e);
                None
            }
        }
    }

    /// Count a wait for another process's fetch.
    pub(crate) fn waited(&self) {
        self.counters.waits.fetch_add(1, Ordering::Relaxed);
    }

    /// Give the fetch lock of `url` back.
    pub(crate) fn unlock(&self, url: &str, scope: &str, t: &LockToken) {
        if let Err(e) = self.store.unlock(scoped(url, scope).as_bytes(), t) {
            self.unavailable(&e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fleet secret file others can read lets them forge entries: it
    /// is refused, as one they can write is; mode 0600 is read.
    #[cfg(unix)]
    #[test]
    fn a_secret_file_is_read_only_when_private() {
        use std::os::unix::fs::PermissionsExt;
        let p =
            std::env::temp_dir().join(format!("agentsig-fleet-secret-file-{}", std::process::id()));
        std::fs::write(&p, format!("{}\n", "ab".repeat(32))).unwrap();
        for mode in [0o644, 0o640, 0o604, 0o622] {
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
            let e = FleetSecret::from_file(&p).map(|_| ()).unwrap_err();
            assert!(
                matches!(e, FleetSecretError::NotPrivate { .. }),
                "{mode:o}: {e}"
            );
        }
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(FleetSecret::from_file(&p).is_ok());
        let _ = std::fs::remove_file(&p);
    }
    use crate::replay::blob::MemoryBlobStore;

    fn secret(b: u8) -> FleetSecret {
        FleetSecret::from_bytes(vec![b; 32]).unwrap()
    }

    fn response(url: &str, cc: &str) -> Fetched {
        let mut h = http::HeaderMap::new();
        h.insert("cache-control", http::HeaderValue::from_str(cc).unwrap());
        h.insert(
            "content-type",
            http::HeaderValue::from_static("application/json"),
        );
        Fetched::saved(url, 200, h, br#"{"keys":[]}"#.to_vec())
    }

    const U: &str = "https://agent.example/.well-known/jwks.json";

    /// RFC 9111 section 4.2.3: the age includes the response delay (here
    /// half a second), and the `Age` sent with a shared copy is rounded up
    /// to whole seconds, so that the copy is never younger than the entry.
    #[test]
    fn a_shared_age_is_rounded_up_to_whole_seconds() {
        let store: Arc<dyn BlobStore> = Arc::new(MemoryBlobStore::new());
        let a = FleetCache::new(store.clone(), &secret(7));
        let mut f = response(U, "max-age=60");
        f.headers
            .insert(http::header::AGE, http::HeaderValue::from_static("20"));
        let Some(asked) = Instant::now().checked_sub(Duration::from_millis(500)) else {
            return;
        };
        a.offer(U, "", &[], &f, asked, &CachePolicy::default());
        match a.lookup(U, "", &[]) {
            Some(Shared::Fresh(got)) => assert_eq!(got.header("age"), Some("21")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn secrets_shorter_than_32_bytes_are_refused() {
        assert_eq!(
            FleetSecret::from_bytes(vec![1; 31]).unwrap_err(),
            FleetSecretError::TooShort { len: 31 }
        );
        assert!(FleetSecret::from_bytes(vec![1; 32]).is_ok());
    }

    #[test]
    fn a_fresh_entry_is_shared_with_its_age_and_expires_with_its_lifetime() {
        let store: Arc<dyn BlobStore> = Arc::new(MemoryBlobStore::new());
        let a = FleetCache::new(store.clone(), &secret(7));
        let b = FleetCache::new(store.clone(), &secret(7));
        let mut f = response(U, "max-age=60");
        f.headers
            .insert(http::header::AGE, http::HeaderValue::from_static("20"));
        a.offer(U, "", &[], &f, Instant::now(), &CachePolicy::default());
        match b.lookup(U, "", &[]) {
            Some(Shared::Fresh(got)) => {
                assert_eq!(got.body, f.body);
                // 20 s when offered, and the moments since, rounded up.
                let age = got.header("age").and_then(|a| a.parse::<u64>().ok());
                assert!(matches!(age, Some(20 | 21)), "{age:?}");
                assert_eq!(got.header("content-type"), Some("application/json"));
            }
            other => panic!("{other:?}"),
        }
        // Already stale: not shared.
        let stale = response("https://agent.example/other", "max-age=0");
        a.offer(
            stale.url.as_str(),
            "",
            &[],
            &stale,
            Instant::now(),
            &CachePolicy::default(),
        );
        assert!(matches!(b.lookup(&stale.url, "", &[]), Some(Shared::Miss)));
        assert_eq!(b.stats().hits, 1);
    }

    #[test]
    fn an_entry_under_another_secret_or_url_or_tampered_is_rejected() {
        let store: Arc<dyn BlobStore> = Arc::new(MemoryBlobStore::new());
        let reports = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let r = reports.clone();
        let good = FleetCache::new(store.clone(), &secret(7))
            .on_report(move |m| r.lock().unwrap().push(m.to_owned()));
        let other = FleetCache::new(store.clone(), &secret(8));
        other.offer(
            U,
            "",
            &[],
            &response(U, "max-age=60"),
            Instant::now(),
            &CachePolicy::default(),
        );
        assert!(matches!(good.lookup(U, "", &[]), Some(Shared::Miss)));
        assert_eq!(good.stats().rejected, 1);
        assert!(reports.lock().unwrap()[0].contains("MAC"));
        // A genuine entry moved to another URL's key.
        good.offer(
            U,
            "",
            &[],
            &response(U, "max-age=60"),
            Instant::now(),
            &CachePolicy::default(),
        );
        let v = store.get(U.as_bytes(), 1 << 20).unwrap().unwrap();
        store
            .put(b"https://evil.example/k", &v, Duration::from_secs(60))
            .unwrap();
        assert!(matches!(
            good.lookup("https://evil.example/k", "", &[]),
            Some(Shared::Miss)
        ));
        // One flipped byte of the body.
        let mut t = v.clone();
        let last = t.len() - 3;
        t[last] ^= 1;
        store
            .put(U.as_bytes(), &t, Duration::from_secs(60))
            .unwrap();
        assert!(matches!(good.lookup(U, "", &[]), Some(Shared::Miss)));
        store
            .put(U.as_bytes(), b"short", Duration::from_secs(60))
            .unwrap();
        assert!(matches!(good.lookup(U, "", &[]), Some(Shared::Miss)));
        assert_eq!(good.stats().rejected, 4);
    }

    #[test]
    fn failures_are_shared_for_the_failure_interval() {
        let store: Arc<dyn BlobStore> = Arc::new(MemoryBlobStore::new());
        let a = FleetCache::new(store.clone(), &secret(7));
        let timeout = Failure {
            status: None,
            timeout: true,
            too_large: None,
            message: "timed out".into(),
        };
        a.offer_failure(U, "", timeout.clone());
        match a.lookup(U, "", &[]) {
            Some(Shared::Failed(f)) => assert_eq!(f, timeout),
            other => panic!("{other:?}"),
        }
        let none = FleetCache::new(store, &secret(7)).policy(FleetPolicy {
            failure_ttl: Duration::ZERO,
            ..FleetPolicy::default()
        });
        assert!(
            matches!(none.lookup(U, "", &[]), Some(Shared::Miss)),
            "zero shares none"
        );
    }

    #[test]
    fn vary_is_compared() {
        let store: Arc<dyn BlobStore> = Arc::new(MemoryBlobStore::new());
        let a = FleetCache::new(store, &secret(7));
        let mut f = response(U, "max-age=60");
        f.headers
            .insert("vary", http::HeaderValue::from_static("Accept"));
        a.offer(
            U,
            "",
            &[("accept", "application/json")],
            &f,
            Instant::now(),
            &CachePolicy::default(),
        );
        assert!(matches!(
            a.lookup(U, "", &[("accept", "application/json")]),
            Some(Shared::Fresh(_))
        ));
        assert!(matches!(
            a.lookup(U, "", &[("accept", "text/html")]),
            Some(Shared::Miss)
        ));
    }
}
