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
//!   last good set keeps verifying for [`DirectoryClient::max_stale`].

use super::cache::CacheStatus;
use super::fetch::{FetchError, Fetcher};
use crate::webbotauth::directory::{parse_key_set, verify_directory};
use crate::webbotauth::{AgentUrl, DirectoryError, Discovery, KeyDirectory, KeySet, MEDIA_TYPE};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Largest key set read: 64 KiB (a directory of [`MAX_KEYS`](crate::webbotauth::directory::MAX_KEYS)
/// RSA keys fits).
pub const MAX_DIRECTORY_BYTES: usize = 64 * 1024;
/// Default time a last good set stays usable while refetches fail: 24 h.
pub const DEFAULT_MAX_STALE: Duration = Duration::from_secs(24 * 3600);
/// Most key sets remembered.
pub const MAX_SETS: usize = 1024;

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

/// A [`KeyDirectory`] that fetches key sets over HTTPS.
#[derive(Debug)]
pub struct DirectoryClient {
    fetcher: Arc<Fetcher>,
    sets: Mutex<HashMap<String, Entry>>,
    /// Require a valid directory response signature (Appendix B.1) on every
    /// set (default false: a key obtained by fetching the directory yourself
    /// MAY be used without it, section 5.5).
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

    /// The clock the directory proofs' `created`/`expires` are checked against.
    pub fn clock(mut self, clock: impl crate::clock::Clock + 'static) -> DirectoryClient {
        self.clock = Arc::new(clock);
        self
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
        let f = self
            .fetcher
            .get_cached_exact(u, &[("accept", ACCEPT)])
            .map_err(|e| map_fetch(u, &e))?;
        if !f.redirects.is_empty() {
            return Err(DirectoryError::Redirect(u.clone()));
        }
        if f.status != 200 {
            return Err(DirectoryError::Status {
                url: u.clone(),
                status: f.status,
            });
        }
        if f.body.len() > MAX_DIRECTORY_BYTES {
            return Err(DirectoryError::TooLarge(u.clone()));
        }
        let ctype = f.header("content-type").unwrap_or("");
        let essence = ctype
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        let ok_type = match url.discovery {
            Discovery::Directory => essence == MEDIA_TYPE,
            Discovery::JwksUri => {
                essence == MEDIA_TYPE
                    || essence == "application/jwk-set+json"
                    || essence == "application/json"
            }
        };
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

/// The earliest `expires` of the directory proofs.
fn proof_expiry(proof: &[(String, String)]) -> Option<i64> {
    let inputs: Vec<&[u8]> = proof
        .iter()
        .filter(|(n, _)| n == "signature-input")
        .map(|(_, v)| v.as_bytes())
        .collect();
    let d = crate::sfv::parse_dictionary_raw(&inputs.join(&b", "[..])).ok()?;
    d.0.iter()
        .filter_map(|(_, e)| match e {
            crate::sfv::Entry::InnerList(l) => crate::httpsig::param_int(&l.params, "expires"),
            _ => None,
        })
        .min()
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
        match self.fetch(url) {
            Ok(s) => Ok(s),
            Err(e) => {
                // Appendix C.5: a failed fetch never evicts a good set.
                let map = self.sets.lock().map_err(|_| e.clone())?;
                match map.get(&url.key_set_url) {
                    Some(last) if last.good_at.elapsed() <= self.max_stale => Ok(last.set.clone()),
                    _ => Err(e),
                }
            }
        }
    }
}

/// `Signature-Key` `jwks_uri` (draft-hardt-httpbis-signature-key-07, an
/// optional draft mechanism): `{id}/.well-known/{dwk}` is fetched (200
/// only, no redirects, through the SSRF guard and the cache), its
/// `jwks_uri` (https) is fetched the same way, and the key with the
/// member's `kid` is taken.
impl crate::webbotauth::signature_key::JwksUriResolver for DirectoryClient {
    fn jwks_uri_key(
        &self,
        id: &str,
        dwk: &str,
        kid: &str,
    ) -> Result<crate::keys::VerifyingKey, DirectoryError> {
        let meta_url = format!("{}/.well-known/{dwk}", id.trim_end_matches('/'));
        let get = |u: &str| -> Result<Vec<u8>, DirectoryError> {
            let f = self
                .fetcher
                .get_cached_exact(u, &[("accept", "application/json")])
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
            Ok(f.body)
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
