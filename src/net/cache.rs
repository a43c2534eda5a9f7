//! A private HTTP cache (RFC 9111) for the documents [`Fetcher`](super::Fetcher) fetches:
//! descriptors, their detached JWS and `agents.json` registries.
//!
//! # What it does (RFC 9111, as a *private* cache)
//! * Stores a `GET` response only when section 3 allows it: status 200
//!   (or 404/410, negative caching), no `no-store` (section 5.2.2.5),
//!   no `Vary: *` (section 4.1), reached without a redirect (a redirected
//!   response belongs to its final URL, and the redirect itself is asked
//!   again), and either fresh for some time or revalidatable (an `ETag` or
//!   `Last-Modified` validator).
//! * Freshness lifetime (section 4.2.1): `max-age` (`s-maxage` is for shared
//!   caches and ignored); else `Expires` minus `Date`; an invalid `Expires`
//!   or a repeated, conflicting `max-age` makes the response stale at once.
//!   A heuristic lifetime (section 4.2.2) is given only to 404 and 410
//!   ([`CachePolicy::negative_ttl`]); a 200 without explicit freshness is
//!   never served without asking the origin. Every lifetime is capped by
//!   [`CachePolicy::max_ttl`].
//! * Age (section 4.2.3): `Age` and `Date` with the response delay, plus the
//!   time the response has been stored.
//! * `no-cache` (section 5.2.2.4): stored, but validated on every use.
//! * A stale response with a validator is revalidated with
//!   `If-None-Match` / `If-Modified-Since` (section 4.3.1); a 304 freshens
//!   it and updates its header fields (section 4.3.4, `Content-Length`
//!   excepted). A 304 naming another `ETag` drops the entry.
//! * Never serves a stale response (no `stale-while-revalidate`,
//!   no `stale-if-error`).
//! * Bounded: at most [`CachePolicy::max_entries`] entries and
//!   [`CachePolicy::max_bytes`] of bodies, least recently used evicted.
//!
//! # Security contract
//! A cached response is only bytes: every caller verifies it again on each
//! use (signatures, `created`/`expires`, maximum age against the current
//! time). The cache decides only whether the origin is asked again, and
//! does so by the origin's own `Cache-Control`. The entry key is the exact
//! request URL; the request header fields a response `Vary`s on are
//! compared too.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// Bounds of the fetcher's HTTP cache.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct CachePolicy {
    /// Whether responses are cached at all (default: on).
    pub enabled: bool,
    /// Most entries kept.
    pub max_entries: usize,
    /// Most body bytes kept (all entries together). A body larger than an
    /// eighth of this is not stored.
    pub max_bytes: usize,
    /// Longest freshness lifetime honoured, whatever the origin says.
    pub max_ttl: Duration,
    /// Lifetime of a 404 or 410 without explicit freshness (RFC 9111
    /// section 4.2.2 heuristic freshness; RFC 9110 section 15.1 makes both
    /// heuristically cacheable).
    pub negative_ttl: Duration,
}

impl Default for CachePolicy {
    fn default() -> Self {
        CachePolicy {
            enabled: true,
            max_entries: 512,
            max_bytes: 16 * 1024 * 1024,
            max_ttl: Duration::from_secs(24 * 3600),
            negative_ttl: Duration::from_secs(30),
        }
    }
}

impl CachePolicy {
    /// No caching: every fetch goes to the origin.
    pub fn disabled() -> Self {
        CachePolicy {
            enabled: false,
            ..CachePolicy::default()
        }
    }
}

/// Where a [`Fetched`] response came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum CacheStatus {
    /// Fetched from the origin (not cached, or cached after this fetch).
    Network,
    /// A fresh stored response; the origin was not asked.
    Fresh,
    /// A stored response the origin confirmed with 304 Not Modified.
    Revalidated,
}

/// One stored response.
#[derive(Debug)]
struct Entry {
    /// 200 responses; for 404/410 only the status matters.
    response: Arc<Fetched>,
    /// `(name, value we sent)` for each field the response `Vary`s on.
    vary: Vec<(String, Option<String>)>,
    /// When the response was received (section 4.2.3 `response_time`).
    received: Instant,
    /// `corrected_initial_age` of section 4.2.3.
    initial_age: Duration,
    /// Freshness lifetime (zero: validate before each use).
    lifetime: Duration,
    /// LRU stamp.
    used: u64,
}

impl Entry {
    fn fresh(&self, now: Instant) -> bool {
        let age = self.initial_age + now.saturating_duration_since(self.received);
        self.lifetime > age
    }
    fn size(&self) -> usize {
        self.response.body.len() + 512
    }
}

/// What a lookup found.
#[derive(Debug)]
pub(crate) enum Lookup {
    /// Nothing usable.
    Miss,
    /// A fresh response (status 200, or 404/410 remembered).
    Fresh(Arc<Fetched>),
    /// A stale response with validators: ask with these conditions.
    Stale {
        etag: Option<String>,
        last_modified: Option<String>,
    },
}

/// The cache itself; shared by every clone of a [`Fetcher`].
///
/// [`Fetcher`]: super::fetch::Fetcher
#[derive(Debug)]
pub(crate) struct HttpCache {
    policy: CachePolicy,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    map: HashMap<String, Entry>,
    bytes: usize,
    tick: u64,
}

/// RFC 9111 section 5.2 response directives that matter to a private cache.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Directives {
    pub(crate) no_store: bool,
    pub(crate) no_cache: bool,
    /// `Some(None)`: present but invalid or conflicting (stale at once).
    pub(crate) max_age: Option<Option<u64>>,
}

/// Parse every `Cache-Control` line. Directive names are case-insensitive;
/// an argument may be a token or a quoted string (section 5.2).
pub(crate) fn directives(f: &Fetched) -> Directives {
    let mut d = Directives::default();
    for line in f.headers.get_all("cache-control") {
        let Ok(line) = line.to_str() else {
            // Not visible ASCII: be conservative.
            d.no_store = true;
            continue;
        };
        for part in split_list(line) {
            let (name, arg) = match part.split_once('=') {
                Some((n, a)) => (n.trim(), Some(a.trim().trim_matches('"'))),
                None => (part.trim(), None),
            };
            match name.to_ascii_lowercase().as_str() {
                "no-store" => d.no_store = true,
                // With or without field names: validate on every use.
                "no-cache" => d.no_cache = true,
                "max-age" => {
                    let v = arg.and_then(|a| {
                        (!a.is_empty() && a.bytes().all(|b| b.is_ascii_digit()))
                            .then(|| a.parse::<u64>().unwrap_or(u64::MAX))
                    });
                    d.max_age = match (d.max_age, v) {
                        (None, v) => Some(v),
                        (Some(Some(a)), Some(b)) if a == b => Some(Some(a)),
                        // Conflicting or invalid: section 4.2.1 lets the
                        // cache consider the response stale.
                        _ => Some(None),
                    };
                }
                _ => {}
            }
        }
    }
    d
}

/// Split a list on commas outside quoted strings.
fn split_list(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (i, c) in s.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ',' if !quoted => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

fn http_date(f: &Fetched, name: &str) -> Option<Option<SystemTime>> {
    let v = f.headers.get(name)?;
    Some(
        v.to_str()
            .ok()
            .and_then(|s| httpdate::parse_http_date(s).ok()),
    )
}

/// Section 4.2.1 freshness lifetime of a response, before the cap; `None`
/// when the response gives none.
fn explicit_lifetime(f: &Fetched, d: &Directives, received: SystemTime) -> Option<Duration> {
    if let Some(ma) = d.max_age {
        return Some(Duration::from_secs(ma.unwrap_or(0)));
    }
    let expires = http_date(f, "expires")?;
    // An invalid Expires (e.g. "0") means already expired.
    let Some(expires) = expires else {
        return Some(Duration::ZERO);
    };
    let date = http_date(f, "date").flatten().unwrap_or(received);
    Some(expires.duration_since(date).unwrap_or(Duration::ZERO))
}

/// Section 4.2.3 `corrected_initial_age`.
fn initial_age(f: &Fetched, received: SystemTime, delay: Duration) -> Duration {
    let apparent = http_date(f, "date")
        .flatten()
        .and_then(|d| received.duration_since(d).ok())
        .unwrap_or(Duration::ZERO);
    // Section 5.1: the first member; an invalid value is ignored.
    let age_value = f
        .header("age")
        .and_then(|a| a.split(',').next())
        .map(str::trim)
        .filter(|a| !a.is_empty() && a.bytes().all(|b| b.is_ascii_digit()))
        .map(|a| a.parse::<u64>().unwrap_or(u64::MAX))
        .map(Duration::from_secs)
        .unwrap_or(Duration::ZERO);
    apparent.max(age_value.saturating_add(delay))
}

/// The request field names a response varies on; `None` for `Vary: *`.
fn vary_names(f: &Fetched) -> Option<Vec<String>> {
    let mut names = Vec::new();
    for line in f.headers.get_all("vary") {
        let line = line.to_str().ok()?;
        for n in line.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            if n == "*" {
                return None;
            }
            names.push(n.to_ascii_lowercase());
        }
    }
    Some(names)
}

fn sent<'h>(headers: &[(&str, &'h str)], name: &str) -> Option<&'h str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| *v)
}

/// The RFC 9111 facts of a stored response: what the local cache and the
/// fleet cache (`super::fleet`) keep beside the bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Facts {
    /// `(name, value we sent)` for each field the response `Vary`s on.
    pub(crate) vary: Vec<(String, Option<String>)>,
    /// `corrected_initial_age` of section 4.2.3.
    pub(crate) initial_age: Duration,
    /// Freshness lifetime, capped by [`CachePolicy::max_ttl`] (zero:
    /// validate before each use).
    pub(crate) lifetime: Duration,
}

/// Whether section 3 lets a private cache under `policy` store `f` (a 200,
/// 404 or 410 answer to `headers`, asked at `requested` and received at
/// `received_at` / `received`), and its facts if so.
pub(crate) fn storable(
    policy: &CachePolicy,
    f: &Fetched,
    headers: &[(&str, &str)],
    requested: Instant,
    received_at: Instant,
    received: SystemTime,
) -> Option<Facts> {
    if !f.redirects.is_empty() || !matches!(f.status, 200 | 404 | 410) {
        return None;
    }
    if f.body.len() > policy.max_bytes / 8 {
        return None;
    }
    let d = directives(f);
    if d.no_store {
        return None;
    }
    let vary = vary_names(f)?
        .into_iter()
        .map(|n| {
            let v = sent(headers, &n).map(str::to_owned);
            (n, v)
        })
        .collect();
    let explicit = explicit_lifetime(f, &d, received);
    let lifetime = if d.no_cache {
        Duration::ZERO
    } else {
        match (explicit, f.status) {
            (Some(l), _) => l,
            (None, 404 | 410) => policy.negative_ttl,
            (None, _) => Duration::ZERO,
        }
    }
    .min(policy.max_ttl);
    let validators = f.headers.contains_key("etag") || f.headers.contains_key("last-modified");
    if lifetime.is_zero() && !(f.status == 200 && validators) {
        // Neither reusable nor revalidatable: nothing to gain.
        return None;
    }
    let delay = received_at.saturating_duration_since(requested);
    Some(Facts {
        initial_age: initial_age(f, received, delay),
        vary,
        lifetime,
    })
}

/// Whether the request fields `headers` match the ones a stored response
/// was selected with (section 4.1).
pub(crate) fn vary_matches(vary: &[(String, Option<String>)], headers: &[(&str, &str)]) -> bool {
    vary.iter().all(|(n, v)| sent(headers, n) == v.as_deref())
}

impl HttpCache {
    pub(crate) fn new(policy: CachePolicy) -> HttpCache {
        HttpCache {
            policy,
            inner: Mutex::new(Inner::default()),
        }
    }

    pub(crate) fn enabled(&self) -> bool {
        self.policy.enabled
    }

    /// Look `url` up for a request sending `headers`.
    pub(crate) fn lookup(&self, url: &str, headers: &[(&str, &str)]) -> Lookup {
        if !self.policy.enabled {
            return Lookup::Miss;
        }
        let Ok(mut inner) = self.inner.lock() else {
            return Lookup::Miss;
        };
        inner.tick += 1;
        let tick = inner.tick;
        let Some(e) = inner.map.get_mut(url) else {
            return Lookup::Miss;
        };
        let matches = vary_matches(&e.vary, headers);
        if !matches {
            return Lookup::Miss;
        }
        e.used = tick;
        if e.fresh(Instant::now()) {
            return Lookup::Fresh(e.response.clone());
        }
        let r = &e.response;
        let (etag, last_modified) = (
            r.header("etag").map(str::to_owned),
            r.header("last-modified").map(str::to_owned),
        );
        if r.status == 200 && (etag.is_some() || last_modified.is_some()) {
            Lookup::Stale {
                etag,
                last_modified,
            }
        } else {
            Lookup::Miss
        }
    }

    /// Store `f` (a 200, 404 or 410 answer to `headers`), fetched between
    /// `requested` and now, if RFC 9111 allows it; otherwise drop any
    /// stored response for its URL.
    pub(crate) fn store(&self, f: &Fetched, headers: &[(&str, &str)], requested: Instant) {
        if !self.policy.enabled {
            return;
        }
        let received_at = Instant::now();
        let received = SystemTime::now();
        let entry = self.entry_for(f, headers, requested, received_at, received);
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        if let Some(old) = inner.map.remove(&f.url) {
            inner.bytes = inner.bytes.saturating_sub(old.size());
        }
        let Some(mut entry) = entry else { return };
        inner.tick += 1;
        entry.used = inner.tick;
        let size = entry.size();
        while !inner.map.is_empty()
            && (inner.map.len() >= self.policy.max_entries
                || inner.bytes + size > self.policy.max_bytes)
        {
            let Some(victim) = inner
                .map
                .iter()
                .min_by_key(|(_, e)| e.used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some(old) = inner.map.remove(&victim) {
                inner.bytes = inner.bytes.saturating_sub(old.size());
            }
        }
        if inner.map.len() < self.policy.max_entries && inner.bytes + size <= self.policy.max_bytes
        {
            inner.bytes += size;
            inner.map.insert(f.url.clone(), entry);
        }
    }

    fn entry_for(
        &self,
        f: &Fetched,
        headers: &[(&str, &str)],
        requested: Instant,
        received_at: Instant,
        received: SystemTime,
    ) -> Option<Entry> {
        let facts = storable(&self.policy, f, headers, requested, received_at, received)?;
        let mut response = f.clone();
        if f.status != 200 {
            response.body.clear();
        }
        Some(Entry {
            initial_age: facts.initial_age,
            response: Arc::new(response),
            vary: facts.vary,
            received: received_at,
            lifetime: facts.lifetime,
            used: 0,
        })
    }

    /// A 304 answered a conditional request for `url`: update the stored
    /// response (section 4.3.4) and return it, or `None` when it cannot be
    /// used (gone, or the 304 names another strong validator).
    pub(crate) fn freshen(
        &self,
        url: &str,
        not_modified: &Fetched,
        headers: &[(&str, &str)],
        requested: Instant,
    ) -> Option<Fetched> {
        let stored = {
            let mut inner = self.inner.lock().ok()?;
            let e = inner.map.remove(url)?;
            inner.bytes = inner.bytes.saturating_sub(e.size());
            e.response
        };
        if let (Some(new), Some(old)) = (not_modified.header("etag"), stored.header("etag")) {
            if new != old {
                return None;
            }
        }
        let mut updated = (*stored).clone();
        // The stored `Age` described the stored response; the 304 is a new
        // response whose age is its own (section 4.2.3).
        updated.headers.remove(http::header::AGE);
        for name in not_modified.headers.keys() {
            if name == http::header::CONTENT_LENGTH {
                continue;
            }
            updated.headers.remove(name);
            for v in not_modified.headers.get_all(name) {
                updated.headers.append(name.clone(), v.clone());
            }
        }
        self.store(&updated, headers, requested);
        Some(updated)
    }
}

// The fetched document, which the cache stores: defined here so that the
// fetcher depends on the cache and never the reverse.

/// One redirect followed.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Redirect {
    /// Where it came from.
    pub from: String,
    /// Where it pointed.
    pub to: String,
    /// True when host or port changed (draft-narvaneni-agent-uri-03 section 5.3: reported).
    pub authority_changed: bool,
}

/// A fetched response.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Fetched {
    /// The URL finally fetched (after redirects).
    pub url: String,
    /// The HTTP status (2xx).
    pub status: u16,
    /// The response header fields.
    pub headers: http::HeaderMap,
    /// The body, at most [`FetchPolicy::max_body`](super::fetch::FetchPolicy::max_body) bytes.
    pub body: Vec<u8>,
    /// The redirects followed, in order.
    pub redirects: Vec<Redirect>,
    /// Whether it came from the origin or from the HTTP cache.
    pub cache: CacheStatus,
}

impl Fetched {
    /// A response saved earlier, as `url` served it (no redirect, from the
    /// origin): what [`super::verify::Resolver::verify_served`] checks, and
    /// the canned answers of unit tests.
    pub(crate) fn saved(
        url: &str,
        status: u16,
        headers: http::HeaderMap,
        body: Vec<u8>,
    ) -> Fetched {
        Fetched {
            url: url.to_owned(),
            status,
            headers,
            body,
            redirects: Vec::new(),
            cache: CacheStatus::Network,
        }
    }

    /// The first value of a header field, if it is text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resp(status: u16, hdrs: &[(&str, &str)]) -> Fetched {
        let mut headers = http::HeaderMap::new();
        for (k, v) in hdrs {
            headers.append(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                http::HeaderValue::from_str(v).unwrap(),
            );
        }
        Fetched::saved("https://a.example/x", status, headers, b"body".to_vec())
    }

    fn cache() -> HttpCache {
        HttpCache::new(CachePolicy::default())
    }

    fn is_fresh(c: &HttpCache, h: &[(&str, &str)]) -> bool {
        matches!(c.lookup("https://a.example/x", h), Lookup::Fresh(_))
    }

    #[test]
    fn max_age_makes_a_response_fresh() {
        let c = cache();
        c.store(
            &resp(200, &[("cache-control", "max-age=60")]),
            &[],
            Instant::now(),
        );
        assert!(is_fresh(&c, &[]));
    }

    #[test]
    fn no_store_is_never_stored_and_drops_the_old_entry() {
        let c = cache();
        c.store(
            &resp(200, &[("cache-control", "max-age=60")]),
            &[],
            Instant::now(),
        );
        c.store(
            &resp(200, &[("cache-control", "max-age=60, No-Store")]),
            &[],
            Instant::now(),
        );
        assert!(matches!(c.lookup("https://a.example/x", &[]), Lookup::Miss));
    }

    #[test]
    fn no_cache_is_stored_but_always_revalidated() {
        let c = cache();
        c.store(
            &resp(
                200,
                &[
                    ("cache-control", "no-cache, max-age=60"),
                    ("etag", "\"v1\""),
                ],
            ),
            &[],
            Instant::now(),
        );
        match c.lookup("https://a.example/x", &[]) {
            Lookup::Stale { etag, .. } => assert_eq!(etag.as_deref(), Some("\"v1\"")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn without_freshness_a_200_is_kept_only_to_revalidate() {
        let c = cache();
        c.store(&resp(200, &[]), &[], Instant::now());
        assert!(matches!(c.lookup("https://a.example/x", &[]), Lookup::Miss));
        c.store(
            &resp(200, &[("last-modified", "Sun, 06 Nov 1994 08:49:37 GMT")]),
            &[],
            Instant::now(),
        );
        assert!(matches!(
            c.lookup("https://a.example/x", &[]),
            Lookup::Stale {
                last_modified: Some(_),
                ..
            }
        ));
    }

    #[test]
    fn conflicting_or_invalid_max_age_is_stale() {
        for cc in ["max-age=60, max-age=10", "max-age=abc", "max-age=-1"] {
            let c = cache();
            c.store(
                &resp(200, &[("cache-control", cc), ("etag", "\"e\"")]),
                &[],
                Instant::now(),
            );
            assert!(!is_fresh(&c, &[]), "{cc}");
        }
        // The same value twice is no conflict.
        let c = cache();
        c.store(
            &resp(
                200,
                &[
                    ("cache-control", "max-age=60"),
                    ("cache-control", "max-age=60"),
                ],
            ),
            &[],
            Instant::now(),
        );
        assert!(is_fresh(&c, &[]));
    }

    #[test]
    fn expires_minus_date_and_invalid_expires() {
        let c = cache();
        let now = SystemTime::now();
        let date = httpdate::fmt_http_date(now);
        let later = httpdate::fmt_http_date(now + Duration::from_secs(120));
        c.store(
            &resp(200, &[("date", &date), ("expires", &later)]),
            &[],
            Instant::now(),
        );
        assert!(is_fresh(&c, &[]));
        let c = cache();
        c.store(
            &resp(200, &[("expires", "0"), ("etag", "\"e\"")]),
            &[],
            Instant::now(),
        );
        assert!(!is_fresh(&c, &[]));
    }

    #[test]
    fn age_counts_against_max_age() {
        let c = cache();
        c.store(
            &resp(200, &[("cache-control", "max-age=60"), ("age", "61")]),
            &[],
            Instant::now(),
        );
        assert!(!is_fresh(&c, &[]));
        // A date two minutes old counts as age too (apparent age).
        let c = cache();
        let old = httpdate::fmt_http_date(SystemTime::now() - Duration::from_secs(120));
        c.store(
            &resp(200, &[("cache-control", "max-age=60"), ("date", &old)]),
            &[],
            Instant::now(),
        );
        assert!(!is_fresh(&c, &[]));
    }

    #[test]
    fn vary_compares_the_request_fields() {
        let c = cache();
        c.store(
            &resp(200, &[("cache-control", "max-age=60"), ("vary", "Accept")]),
            &[("accept", "application/json")],
            Instant::now(),
        );
        assert!(is_fresh(&c, &[("Accept", "application/json")]));
        assert!(!is_fresh(&c, &[("accept", "text/html")]));
        assert!(!is_fresh(&c, &[]));
        let c = cache();
        c.store(
            &resp(200, &[("cache-control", "max-age=60"), ("vary", "*")]),
            &[],
            Instant::now(),
        );
        assert!(!is_fresh(&c, &[]));
    }

    #[test]
    fn not_found_is_remembered_briefly() {
        let c = cache();
        c.store(&resp(404, &[]), &[], Instant::now());
        match c.lookup("https://a.example/x", &[]) {
            Lookup::Fresh(f) => assert_eq!(f.status, 404),
            other => panic!("{other:?}"),
        }
        let c = HttpCache::new(CachePolicy {
            negative_ttl: Duration::ZERO,
            ..CachePolicy::default()
        });
        c.store(&resp(404, &[]), &[], Instant::now());
        assert!(matches!(c.lookup("https://a.example/x", &[]), Lookup::Miss));
    }

    #[test]
    fn other_statuses_and_redirected_responses_are_not_stored() {
        let c = cache();
        c.store(
            &resp(500, &[("cache-control", "max-age=60")]),
            &[],
            Instant::now(),
        );
        assert!(matches!(c.lookup("https://a.example/x", &[]), Lookup::Miss));
        let mut r = resp(200, &[("cache-control", "max-age=60")]);
        r.redirects.push(super::super::fetch::Redirect {
            from: "https://a.example/y".into(),
            to: "https://a.example/x".into(),
            authority_changed: false,
        });
        c.store(&r, &[], Instant::now());
        assert!(matches!(c.lookup("https://a.example/x", &[]), Lookup::Miss));
    }

    #[test]
    fn lifetime_is_capped() {
        let c = HttpCache::new(CachePolicy {
            max_ttl: Duration::ZERO,
            ..CachePolicy::default()
        });
        c.store(
            &resp(200, &[("cache-control", "max-age=99999999999999999999999")]),
            &[],
            Instant::now(),
        );
        assert!(!is_fresh(&c, &[]));
    }

    #[test]
    fn not_modified_updates_the_fields_but_not_content_length() {
        let c = cache();
        c.store(
            &resp(
                200,
                &[("etag", "\"v1\""), ("x-a", "old"), ("content-length", "4")],
            ),
            &[],
            Instant::now(),
        );
        let nm = resp(
            304,
            &[
                ("etag", "\"v1\""),
                ("x-a", "new"),
                ("content-length", "0"),
                ("cache-control", "max-age=60"),
            ],
        );
        let got = c
            .freshen("https://a.example/x", &nm, &[], Instant::now())
            .unwrap();
        assert_eq!(got.header("x-a"), Some("new"));
        assert_eq!(got.header("content-length"), Some("4"));
        assert_eq!(got.body, b"body");
        assert!(is_fresh(&c, &[]));
        // A 304 naming another validator is not applied.
        let other = resp(304, &[("etag", "\"v2\"")]);
        assert!(c
            .freshen("https://a.example/x", &other, &[], Instant::now())
            .is_none());
    }

    #[test]
    fn bounded_by_entries_and_bytes() {
        let c = HttpCache::new(CachePolicy {
            max_entries: 2,
            ..CachePolicy::default()
        });
        for i in 0..5 {
            let mut r = resp(200, &[("cache-control", "max-age=60")]);
            r.url = format!("https://a.example/{i}");
            c.store(&r, &[], Instant::now());
        }
        let inner = c.inner.lock().unwrap();
        assert_eq!(inner.map.len(), 2);
        assert!(inner.map.contains_key("https://a.example/4"));
        drop(inner);
        let c = HttpCache::new(CachePolicy {
            max_bytes: 8 * 1024,
            ..CachePolicy::default()
        });
        let mut r = resp(200, &[("cache-control", "max-age=60")]);
        r.body = vec![b' '; 2 * 1024];
        c.store(&r, &[], Instant::now());
        assert!(
            !is_fresh(&c, &[]),
            "a body over an eighth of the cap is not kept"
        );
    }

    #[test]
    fn disabled_stores_nothing() {
        let c = HttpCache::new(CachePolicy::disabled());
        c.store(
            &resp(200, &[("cache-control", "max-age=60")]),
            &[],
            Instant::now(),
        );
        assert!(matches!(c.lookup("https://a.example/x", &[]), Lookup::Miss));
    }
}
