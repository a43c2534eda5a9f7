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
        let f = self
            .fetcher
            .get_cached(u, &[("accept", ACCEPT)])
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
        let now = self.clock.now();
        if let Ok(map) = self.sets.lock() {
            if let Some(e) = map.get(u) {
                if e.body == f.body && e.proof == proof && e.proof_expires.is_none_or(|x| now <= x)
                {
                    return Ok(e.set.clone());
                }
            }
        }
        let mut set = parse_key_set(url, &f.body)?;
        let authority = &url.origin()["https://".len()..];
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
