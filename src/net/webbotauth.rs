//! Fetching Web Bot Auth key sets (section 5.5 of
//! `draft-ietf-webbotauth-httpsig-protocol-00`) through the SSRF-guarded
//! [`Fetcher`] and its RFC 9111 cache.
//!
//! [`DirectoryClient`] is the [`KeyDirectory`] a site gives
//! [`crate::webbotauth::WebBotAuthVerifier::verify`]:
//! * HTTPS only, through the SSRF guard at every hop; a `200` only, and a
//!   redirect is refused ([`DirectoryError::Redirect`]: discovery MUST NOT
//!   follow redirects);
//! * at most [`MAX_DIRECTORY_BYTES`] and [`MAX_KEYS`](crate::webbotauth::directory::MAX_KEYS) keys; the
//!   fetch deadline of the [`Fetcher`]'s policy;
//! * the well-known directory must be served as
//!   `application/http-message-signatures-directory+json`;
//! * the directory's own response signatures (Appendix B.1) are verified
//!   when present, against the authority fetched, and required when
//!   [`DirectoryClient::require_proof`] is set;
//! * freshness is the fetcher's RFC 9111 cache (`Cache-Control`), and a
//!   parsed set is reused while the same bytes are served;
//! * a failed refetch never evicts a set that was good (Appendix C.5): the
//!   last good set keeps verifying for [`DirectoryClient::max_stale`];
//! * with [`DirectoryClient::require_proof`], only the keys that signed the
//!   directory themselves (Appendix B.1) are used; the others are
//!   [`KeySet::withheld`];
//! * bounded against stalls (a request names its own key-set URL, so a
//!   slow or silent directory is the cheapest way to hold a verifier):
//!   each URL is fetched at most once at a time, and verifications that
//!   need it meanwhile wait for that one fetch until their own deadline
//!   (single flight); a fetch that failed within its own full deadline
//!   (not one cut short by the caller's deadline) is remembered for
//!   [`DirectoryClient::failure_ttl`] and not retried before; at most
//!   [`DirectoryClient::max_fetches`] fetches run at once over all
//!   verifications, and a verification needing one more fails at once with
//!   [`DirectoryError::Busy`] (`directory-busy`) instead of queueing; and
//!   every lookup runs under the operation deadline in force
//!   ([`with_deadline`](super::fetch::with_deadline)), or under the
//!   fetcher's [`operation_timeout`](super::FetchPolicy::operation_timeout)
//!   when none is. `Signature-Key` `jwks_uri` documents go through the same
//!   bound, deadline, single flight and failure memory.

use super::cache::CacheStatus;
use super::fetch::{FetchError, Fetcher};
use crate::webbotauth::directory::{parse_key_set, verify_directory};
use crate::webbotauth::{AgentUrl, DirectoryError, KeyDirectory, KeySet};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Largest key set read: 64 KiB (a directory of [`MAX_KEYS`](crate::webbotauth::directory::MAX_KEYS)
/// RSA keys fits).
pub const MAX_DIRECTORY_BYTES: usize = 64 * 1024;
/// Default time a last good set stays usable while refetches fail: 24 h.
pub const DEFAULT_MAX_STALE: Duration = Duration::from_secs(24 * 3600);
/// Most key sets remembered.
pub const MAX_SETS: usize = 1024;
/// Default most key-set fetches in progress at once, over every
/// verification sharing one [`DirectoryClient`]: 8.
pub const DEFAULT_MAX_FETCHES: usize = 8;
/// Default time a failed fetch is remembered and not retried: 30 s.
pub const DEFAULT_FAILURE_TTL: Duration = super::fleet::DEFAULT_FAILURE_TTL;
/// Most failed URLs remembered.
pub const MAX_FAILURES: usize = 1024;

const ACCEPT: &str =
    "application/http-message-signatures-directory+json, application/jwk-set+json;q=0.9, application/json;q=0.5";

#[derive(Debug)]
struct Entry {
    /// Until when the set is fresh by the response's own `max-age` (RFC
    /// 9111 section 4.2.1), counted from when it came from the origin;
    /// within it the set is used without consulting the HTTP cache.
    fresh_until: Option<Instant>,
    body: Vec<u8>,
    proof: Vec<(String, String)>,
    set: Arc<KeySet>,
    proof_expires: Option<i64>,
    good_at: Instant,
}

/// The one fetch of a URL in progress, which the other verifications
/// needing it wait for (single flight).
#[derive(Debug)]
struct Flight<T> {
    result: Mutex<Option<Result<T, DirectoryError>>>,
    done: Condvar,
}

/// The fetches in progress, by URL.
type Flights<T> = Mutex<HashMap<String, Arc<Flight<T>>>>;

/// Ends a flight whatever happens to its leader: the result (or, if the
/// leader unwound, a fetch failure) goes to the waiters, and the URL is
/// free for the next fetch.
struct Landing<'a, T: Clone> {
    flights: &'a Flights<T>,
    url: &'a str,
    flight: Arc<Flight<T>>,
    result: Option<Result<T, DirectoryError>>,
}

impl<T: Clone> Drop for Landing<'_, T> {
    fn drop(&mut self) {
        let result = self.result.take().unwrap_or_else(|| {
            Err(DirectoryError::Fetch {
                url: self.url.to_owned(),
                message: "the fetch was abandoned".into(),
            })
        });
        let mut map = lock(self.flights);
        if map
            .get(self.url)
            .is_some_and(|f| Arc::ptr_eq(f, &self.flight))
        {
            map.remove(self.url);
        }
        drop(map);
        *lock(&self.flight.result) = Some(result);
        self.flight.done.notify_all();
    }
}

/// One of the [`DirectoryClient::max_fetches`] places, given back on drop.
struct Permit<'a>(&'a AtomicUsize);

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A lock that a panicking holder did not make unusable: every map here
/// stays consistent between statements.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A [`KeyDirectory`] that fetches key sets over HTTPS.
#[derive(Debug)]
pub struct DirectoryClient {
    fetcher: Arc<Fetcher>,
    sets: Mutex<HashMap<String, Entry>>,
    /// Key-set fetches in progress.
    set_flights: Flights<Arc<KeySet>>,
    /// `Signature-Key` document fetches in progress.
    doc_flights: Flights<Vec<u8>>,
    /// Fetches in progress, over both kinds.
    fetching: AtomicUsize,
    /// Failed URLs: when, and why.
    failures: Mutex<HashMap<String, (Instant, DirectoryError)>>,
    /// Most fetches in progress at once (default [`DEFAULT_MAX_FETCHES`]);
    /// a lookup needing one more fails with [`DirectoryError::Busy`].
    pub max_fetches: usize,
    /// How long a failed fetch is remembered and answered without fetching
    /// again (default [`DEFAULT_FAILURE_TTL`]; zero remembers nothing). A
    /// last good set still answers meanwhile, within
    /// [`DirectoryClient::max_stale`].
    pub failure_ttl: Duration,
    /// Require a valid directory response signature (Appendix B.1) on every
    /// set, and use only the keys that made one themselves: a proof by one
    /// key of a directory does not vouch for its other keys, which go to
    /// [`KeySet::withheld`] (default false: a key obtained by fetching the
    /// directory yourself MAY be used without it, section 5.5).
    pub require_proof: bool,
    /// How long a last good set is used while refetches fail.
    pub max_stale: Duration,
    clock: Arc<dyn crate::clock::Clock>,
}

impl DirectoryClient {
    /// A client over this fetcher.
    pub fn new(fetcher: Arc<Fetcher>) -> DirectoryClient {
        DirectoryClient {
            fetcher,
            sets: Mutex::new(HashMap::new()),
            set_flights: Mutex::new(HashMap::new()),
            doc_flights: Mutex::new(HashMap::new()),
            fetching: AtomicUsize::new(0),
            failures: Mutex::new(HashMap::new()),
            max_fetches: DEFAULT_MAX_FETCHES,
            failure_ttl: DEFAULT_FAILURE_TTL,
            require_proof: false,
            max_stale: DEFAULT_MAX_STALE,
            clock: Arc::new(crate::clock::SystemClock),
        }
    }

    /// Require the directory response signature.
    pub fn require_proof(mut self, on: bool) -> DirectoryClient {
        self.require_proof = on;
        self
    }

    /// Set the most fetches in progress at once ([`DirectoryClient::max_fetches`]).
    pub fn max_fetches(mut self, n: usize) -> DirectoryClient {
        self.max_fetches = n;
        self
    }

    /// Set how long a failed fetch is remembered ([`DirectoryClient::failure_ttl`]).
    pub fn failure_ttl(mut self, ttl: Duration) -> DirectoryClient {
        self.failure_ttl = ttl;
        self
    }

    /// The clock the directory proofs' `created`/`expires` are checked against.
    pub fn clock(mut self, clock: impl crate::clock::Clock + 'static) -> DirectoryClient {
        self.clock = Arc::new(clock);
        self
    }

    /// Run `fetch` for `url` under the bounds of the module documentation:
    /// a failure remembered for `url` answers at once; a fetch of `url`
    /// already in progress is waited for, until the deadline in force; else
    /// `fetch` runs in one of the [`DirectoryClient::max_fetches`] places,
    /// or fails with [`DirectoryError::Busy`] when none is free.
    fn gated<T: Clone>(
        &self,
        flights: &Flights<T>,
        url: &str,
        fetch: impl FnOnce() -> Result<T, DirectoryError>,
    ) -> Result<T, DirectoryError> {
        if let Some(e) = self.failed(url) {
            return Err(e);
        }
        let (flight, leader) = {
            let mut map = lock(flights);
            match map.get(url) {
                Some(f) => (f.clone(), false),
                None => {
                    let f = Arc::new(Flight {
                        result: Mutex::new(None),
                        done: Condvar::new(),
                    });
                    map.insert(url.to_owned(), f.clone());
                    (f, true)
                }
            }
        };
        if !leader {
            return self.wait(&flight, url);
        }
        let mut landing = Landing {
            flights,
            url,
            flight,
            result: None,
        };
        // A flight that ended while this one was being set up may have
        // left its failure behind.
        let result = if let Some(e) = self.failed(url) {
            Err(e)
        } else if let Some(_permit) = self.permit() {
            let r = fetch();
            match &r {
                Err(e) => self.remember_failure(url, e),
                Ok(_) => {
                    lock(&self.failures).remove(url);
                }
            }
            r
        } else {
            Err(DirectoryError::Busy(url.to_owned()))
        };
        landing.result = Some(result.clone());
        result
    }

    /// Wait for the fetch in progress, until the deadline in force.
    fn wait<T: Clone>(&self, flight: &Flight<T>, url: &str) -> Result<T, DirectoryError> {
        let deadline = super::fetch::current_deadline()
            .unwrap_or_else(|| Instant::now() + self.fetcher.policy().operation_timeout);
        let mut r = lock(&flight.result);
        loop {
            if let Some(r) = r.as_ref() {
                return r.clone();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(DirectoryError::DeadlineSpent {
                    url: url.to_owned(),
                    deadline:
                        "the verification's deadline, while waiting for the fetch in progress"
                            .into(),
                });
            }
            r = match flight.done.wait_timeout(r, left) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
    }

    /// One of the [`DirectoryClient::max_fetches`] places, if one is free.
    fn permit(&self) -> Option<Permit<'_>> {
        self.fetching
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.max_fetches).then_some(n + 1)
            })
            .ok()?;
        Some(Permit(&self.fetching))
    }

    /// The failure remembered for `url`, while it is younger than
    /// [`DirectoryClient::failure_ttl`].
    fn failed(&self, url: &str) -> Option<DirectoryError> {
        lock(&self.failures)
            .get(url)
            .filter(|(at, _)| at.elapsed() < self.failure_ttl)
            .map(|(_, e)| e.clone())
    }

    /// Remember that fetching `url` failed, at most [`MAX_FAILURES`] URLs
    /// (the expired ones, then the oldest, make room). A fetch cut short by
    /// the caller's deadline ([`DirectoryError::DeadlineSpent`]) is not
    /// remembered: only a failure the directory caused within the fetch's
    /// own full budget is, or a request naming a slow directory first
    /// would lock every agent whose directory comes after it out for the
    /// whole interval.
    fn remember_failure(&self, url: &str, e: &DirectoryError) {
        if self.failure_ttl.is_zero() || matches!(e, DirectoryError::DeadlineSpent { .. }) {
            return;
        }
        let mut map = lock(&self.failures);
        if map.len() >= MAX_FAILURES && !map.contains_key(url) {
            let ttl = self.failure_ttl;
            map.retain(|_, (at, _)| at.elapsed() < ttl);
            if map.len() >= MAX_FAILURES {
                if let Some(old) = map
                    .iter()
                    .min_by_key(|(_, (at, _))| *at)
                    .map(|(k, _)| k.clone())
                {
                    map.remove(&old);
                }
            }
        }
        map.insert(url.to_owned(), (Instant::now(), e.clone()));
    }

    fn fetch(&self, url: &AgentUrl) -> Result<Arc<KeySet>, DirectoryError> {
        let u = &url.key_set_url;
        let now = self.clock.now();
        if let Ok(map) = self.sets.lock() {
            if let Some(e) = map.get(u) {
                if e.fresh_until.is_some_and(|t| Instant::now() < t)
                    && e.proof_expires.is_none_or(|x| now <= x)
                {
                    return Ok(e.set.clone());
                }
            }
        }
        self.gated(&self.set_flights, u, || self.fetch_origin(url))
    }

    /// Fetch the key set of `url` (the cache of parsed sets aside).
    fn fetch_origin(&self, url: &AgentUrl) -> Result<Arc<KeySet>, DirectoryError> {
        let u = &url.key_set_url;
        let now = self.clock.now();
        let f = self.get_200(u, ACCEPT)?;
        let ctype = f.header("content-type").unwrap_or("");
        let ok_type = crate::webbotauth::media_type_accepted(url.discovery, ctype);
        if !ok_type {
            return Err(DirectoryError::MediaType {
                url: u.clone(),
                got: ctype.chars().take(100).collect(),
            });
        }
        let proof: Vec<(String, String)> = ["content-digest", "signature-input", "signature"]
            .iter()
            .flat_map(|n| {
                f.headers
                    .get_all(*n)
                    .iter()
                    .filter_map(|v| v.to_str().ok())
                    .map(|v| ((*n).to_owned(), v.to_owned()))
                    .collect::<Vec<_>>()
            })
            .collect();
        let fresh_until = match f.cache {
            CacheStatus::Fresh => None,
            _ => freshness(&f.headers).map(|d| Instant::now() + d),
        };
        if let Ok(mut map) = self.sets.lock() {
            if let Some(e) = map.get_mut(u) {
                if e.body == f.body && e.proof == proof && e.proof_expires.is_none_or(|x| now <= x)
                {
                    if fresh_until.is_some() {
                        e.fresh_until = fresh_until;
                    }
                    return Ok(e.set.clone());
                }
            }
        }
        let mut set = parse_key_set(url, &f.body)?;
        let authority = url
            .origin()
            .strip_prefix("https://")
            .unwrap_or(url.origin());
        set.proven_by = verify_directory(&set, authority, &proof, &f.body, now)?;
        if self.require_proof && set.proven_by.is_empty() {
            return Err(DirectoryError::DirectorySignatureMissing(u.clone()));
        }
        if self.require_proof {
            // Appendix B.1: each proof is made by one key of the directory
            // (its `keyid`). A proof by one key says nothing of the others,
            // so only a key with its own proof is used.
            let proven = proof_keyids(&proof, &set.proven_by);
            let (keep, withheld): (Vec<_>, Vec<_>) = set
                .keys
                .into_iter()
                .partition(|(tp, _)| proven.contains(tp));
            set.keys = keep;
            set.withheld = withheld.into_iter().map(|(tp, _)| tp).collect();
        }
        let proof_expires = if set.proven_by.is_empty() {
            None
        } else {
            proof_expiry(&proof)
        };
        let set = Arc::new(set);
        if let Ok(mut map) = self.sets.lock() {
            if map.len() >= MAX_SETS && !map.contains_key(u) {
                if let Some(old) = map
                    .iter()
                    .min_by_key(|(_, e)| e.good_at)
                    .map(|(k, _)| k.clone())
                {
                    map.remove(&old);
                }
            }
            map.insert(
                u.clone(),
                Entry {
                    fresh_until,
                    body: f.body.clone(),
                    proof,
                    set: set.clone(),
                    proof_expires,
                    good_at: Instant::now(),
                },
            );
        }
        Ok(set)
    }
}

/// The freshness lifetime a response gives itself: `max-age` minus `Age`
/// (RFC 9111 sections 4.2.1 and 4.2.3), at most an hour; `None` with
/// `no-store`, `no-cache` or no `max-age` (the HTTP cache then decides).
fn freshness(h: &http::HeaderMap) -> Option<Duration> {
    let mut max_age = None;
    for v in h
        .get_all("cache-control")
        .iter()
        .filter_map(|v| v.to_str().ok())
    {
        for d in v.split(',').map(|d| d.trim().to_ascii_lowercase()) {
            if d == "no-store" || d == "no-cache" || d.starts_with("no-cache=") {
                return None;
            }
            if let Some(n) = d.strip_prefix("max-age=") {
                max_age = Some(n.trim_matches('"').parse::<u64>().ok()?);
            }
        }
    }
    let age = h
        .get("age")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(0);
    let left = max_age?.checked_sub(age)?.min(3600);
    (left > 0).then(|| Duration::from_secs(left))
}

/// The parameters of each directory proof, by label.
fn proof_params(proof: &[(String, String)]) -> Vec<(String, crate::sfv::Params)> {
    let inputs: Vec<&[u8]> = proof
        .iter()
        .filter(|(n, _)| n == "signature-input")
        .map(|(_, v)| v.as_bytes())
        .collect();
    let Ok(d) = crate::sfv::parse_dictionary_raw(&inputs.join(&b", "[..])) else {
        return Vec::new();
    };
    d.0.into_iter()
        .filter_map(|(label, e)| match e {
            crate::sfv::Entry::InnerList(l) => Some((label, l.params)),
            crate::sfv::Entry::Item(_) => None,
        })
        .collect()
}

/// The earliest `expires` of the directory proofs.
fn proof_expiry(proof: &[(String, String)]) -> Option<i64> {
    proof_params(proof)
        .iter()
        .filter_map(|(_, p)| crate::httpsig::param_int(p, "expires"))
        .min()
}

/// The `keyid`s (thumbprints) of the proofs with these labels: the keys
/// that signed the directory themselves.
fn proof_keyids(proof: &[(String, String)], labels: &[String]) -> Vec<String> {
    proof_params(proof)
        .iter()
        .filter(|(l, _)| labels.contains(l))
        .filter_map(|(_, p)| crate::httpsig::param_str(p, "keyid").map(str::to_owned))
        .collect()
}

fn map_fetch(url: &str, e: &FetchError) -> DirectoryError {
    match e {
        FetchError::RedirectRefused(_)
        | FetchError::TooManyRedirects(_)
        | FetchError::BadRedirect(_) => DirectoryError::Redirect(url.to_owned()),
        FetchError::TooLarge { .. } => DirectoryError::TooLarge(url.to_owned()),
        FetchError::Status { status, .. } => DirectoryError::Status {
            url: url.to_owned(),
            status: *status,
        },
        FetchError::Deadline { limit, .. } if e.is_caller_deadline() => {
            DirectoryError::DeadlineSpent {
                url: url.to_owned(),
                deadline: format!("the verification's deadline ({} ms)", limit.as_millis()),
            }
        }
        e if e.is_timeout() => DirectoryError::Timeout(url.to_owned()),
        e if e.is_refusal() => DirectoryError::Refused {
            url: url.to_owned(),
            message: e.to_string(),
        },
        e => DirectoryError::Fetch {
            url: url.to_owned(),
            message: e.to_string(),
        },
    }
}

impl KeyDirectory for DirectoryClient {
    fn key_set(&self, url: &AgentUrl) -> Result<Arc<KeySet>, DirectoryError> {
        match self.fetcher.operation(|| self.fetch(url)) {
            Ok(s) => Ok(s),
            Err(e) => {
                // Appendix C.5: a failed fetch never evicts a good set (nor
                // does a fetch refused by the bound, directory-busy).
                let map = self.sets.lock().map_err(|_| e.clone())?;
                match map.get(&url.key_set_url) {
                    Some(last) if last.good_at.elapsed() <= self.max_stale => Ok(last.set.clone()),
                    _ => Err(e),
                }
            }
        }
    }

    /// Each set on its own thread, at most
    /// [`MAX_KEY_SETS_PER_REQUEST`](crate::webbotauth::MAX_KEY_SETS_PER_REQUEST)
    /// at a time, each under the whole deadline in force on the calling
    /// thread ([`with_deadline`](super::fetch::with_deadline)), so that a
    /// directory that never answers, named by one `Signature-Agent` label,
    /// does not spend the time of another label's healthy directory. The
    /// call as a whole is still bounded by that one deadline (and each set
    /// by the fetcher's
    /// [`operation_timeout`](super::FetchPolicy::operation_timeout)), and the
    /// fetches by [`DirectoryClient::max_fetches`].
    fn key_sets(&self, urls: &[&AgentUrl]) -> Vec<Result<Arc<KeySet>, DirectoryError>> {
        let deadline = super::fetch::operation_deadline();
        let one = |u: &AgentUrl| match deadline {
            Some(d) => super::fetch::within(d, || self.key_set(u)),
            None => self.key_set(u),
        };
        let one = &one;
        let mut out = Vec::with_capacity(urls.len());
        for chunk in urls.chunks(crate::webbotauth::MAX_KEY_SETS_PER_REQUEST) {
            let Some((first, rest)) = chunk.split_first() else {
                continue;
            };
            std::thread::scope(|s| {
                let spawned: Vec<_> = rest
                    .iter()
                    .map(|u| {
                        std::thread::Builder::new()
                            .name("agentsig-key-set".into())
                            .spawn_scoped(s, move || one(u))
                    })
                    .collect();
                out.push(one(first));
                for (u, h) in rest.iter().zip(spawned) {
                    out.push(match h {
                        Ok(h) => h.join().unwrap_or_else(|_| {
                            Err(DirectoryError::Fetch {
                                url: u.key_set_url.clone(),
                                message: "the fetching thread failed".into(),
                            })
                        }),
                        // No thread: fetched here, after the others.
                        Err(_) => one(u),
                    });
                }
            });
        }
        out
    }
}

/// `Signature-Key` `jwks_uri` (draft-hardt-httpbis-signature-key-07, an
/// optional draft mechanism): `{id}/.well-known/{dwk}` is fetched (200
/// only, no redirects, through the SSRF guard and the cache), its
/// `jwks_uri` (https) is fetched the same way, and the key with the
/// member's `kid` is taken. Both documents are fetched under the same
/// bounds as key sets: the operation deadline, the
/// [`DirectoryClient::max_fetches`] places (`directory-busy` beyond), one
/// fetch per URL at a time, and the remembered failures.
impl crate::webbotauth::signature_key::JwksUriResolver for DirectoryClient {
    fn jwks_uri_key(
        &self,
        id: &str,
        dwk: &str,
        kid: &str,
    ) -> Result<crate::keys::VerifyingKey, DirectoryError> {
        self.fetcher
            .operation(|| self.jwks_uri_key_within(id, dwk, kid))
    }
}

impl DirectoryClient {
    /// [`JwksUriResolver::jwks_uri_key`](crate::webbotauth::signature_key::JwksUriResolver::jwks_uri_key)
    /// under the deadline in force.
    fn jwks_uri_key_within(
        &self,
        id: &str,
        dwk: &str,
        kid: &str,
    ) -> Result<crate::keys::VerifyingKey, DirectoryError> {
        let meta_url = format!("{}/.well-known/{dwk}", id.trim_end_matches('/'));
        let get = |u: &str| {
            self.gated(&self.doc_flights, u, || {
                self.get_200(u, "application/json").map(|f| f.body)
            })
        };
        let malformed = |u: &str, m: String| DirectoryError::Malformed {
            url: u.to_owned(),
            message: m,
        };
        let meta = get(&meta_url)?;
        let v =
            crate::json::parse_strict(&meta).map_err(|e| malformed(&meta_url, e.to_string()))?;
        let jwks_uri = v
            .get("jwks_uri")
            .and_then(serde_json::Value::as_str)
            .ok_or_else(|| malformed(&meta_url, "no jwks_uri".into()))?;
        let url = crate::webbotauth::resolve_agent_url(jwks_uri, Some("jwks_uri"))
            .map_err(|e| malformed(&meta_url, e.to_string()))?;
        let body = get(&url.key_set_url)?;
        let keys = crate::jwk::parse_keys(&body)
            .map_err(|e| malformed(&url.key_set_url, e.to_string()))?;
        if keys.len() > crate::webbotauth::directory::MAX_KEYS {
            return Err(DirectoryError::TooManyKeys(url.key_set_url));
        }
        let j = keys
            .iter()
            .find(|j| j.kid.as_deref() == Some(kid) && j.kty != "oct" && !j.is_private())
            .ok_or_else(|| {
                DirectoryError::NotKnown(format!("{} (kid {kid:?})", url.key_set_url))
            })?;
        j.to_verifying_key(None)
            .map_err(|e| malformed(&url.key_set_url, e.to_string()))
    }

    /// Fetch `u` through the cache: a `200` only, no redirect (section
    /// 5.5), at most [`MAX_DIRECTORY_BYTES`].
    fn get_200(&self, u: &str, accept: &str) -> Result<super::fetch::Fetched, DirectoryError> {
        let f = self
            .fetcher
            .get_cached_exact(u, &[("accept", accept)])
            .map_err(|e| map_fetch(u, &e))?;
        if !f.redirects.is_empty() {
            return Err(DirectoryError::Redirect(u.to_owned()));
        }
        if f.status != 200 {
            return Err(DirectoryError::Status {
                url: u.to_owned(),
                status: f.status,
            });
        }
        if f.body.len() > MAX_DIRECTORY_BYTES {
            return Err(DirectoryError::TooLarge(u.to_owned()));
        }
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(pairs: &[(&str, &str)]) -> http::HeaderMap {
        let mut m = http::HeaderMap::new();
        for (n, v) in pairs {
            m.append(
                http::header::HeaderName::from_bytes(n.as_bytes()).unwrap(),
                http::HeaderValue::from_str(v).unwrap(),
            );
        }
        m
    }

    /// Single flight: lookups of a URL whose fetch is in progress wait for
    /// it and share its result; the fetch runs once.
    #[test]
    fn concurrent_lookups_of_one_url_share_one_fetch() {
        const WAITERS: usize = 5;
        let c = Arc::new(DirectoryClient::new(Arc::new(Fetcher::new().unwrap())));
        let runs = Arc::new(AtomicUsize::new(0));
        let (go, hold) = std::sync::mpsc::channel::<()>();
        let leader = {
            let (c, runs) = (c.clone(), runs.clone());
            std::thread::spawn(move || {
                c.gated(&c.doc_flights, "https://a.example/k", || {
                    runs.fetch_add(1, Ordering::SeqCst);
                    hold.recv().unwrap();
                    Ok(b"first".to_vec())
                })
            })
        };
        let flight = loop {
            if let Some(f) = lock(&c.doc_flights).get("https://a.example/k").cloned() {
                break f;
            }
            std::thread::yield_now();
        };
        let waiters: Vec<_> = (0..WAITERS)
            .map(|_| {
                let (c, runs) = (c.clone(), runs.clone());
                std::thread::spawn(move || {
                    c.gated(&c.doc_flights, "https://a.example/k", || {
                        runs.fetch_add(1, Ordering::SeqCst);
                        Ok(b"again".to_vec())
                    })
                })
            })
            .collect();
        // The map, the leader, this test and every waiter hold the flight.
        while Arc::strong_count(&flight) < 3 + WAITERS {
            std::thread::yield_now();
        }
        go.send(()).unwrap();
        assert_eq!(leader.join().unwrap().unwrap(), b"first");
        for w in waiters {
            assert_eq!(w.join().unwrap().unwrap(), b"first");
        }
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        assert!(lock(&c.doc_flights).is_empty());
    }

    #[test]
    fn freshness_follows_max_age_and_age() {
        let d = |p: &[(&str, &str)]| freshness(&h(p)).map(|d| d.as_secs());
        assert_eq!(d(&[("cache-control", "max-age=600")]), Some(600));
        assert_eq!(
            d(&[("cache-control", "public, max-age=600"), ("age", "100")]),
            Some(500)
        );
        assert_eq!(d(&[("cache-control", "max-age=86400")]), Some(3600));
        assert_eq!(d(&[("cache-control", "max-age=60"), ("age", "60")]), None);
        assert_eq!(d(&[("cache-control", "max-age=600, no-cache")]), None);
        assert_eq!(d(&[("cache-control", "no-store")]), None);
        assert_eq!(d(&[("cache-control", "max-age=x")]), None);
        assert_eq!(d(&[]), None);
    }
}
