//! The directory publisher behind `agentsig serve DIR`.
//!
//! A [`Site`] is an in-memory snapshot of the directory: every `.json`
//! descriptor (served with its format's media type, [`Format::media_type`])
//! and every `.jws` beside it, each with a strong `ETag`. Requests are
//! answered from the snapshot only, so no request path ever reaches the
//! file system: path traversal has nothing to traverse. Files the snapshot
//! refuses (symlinks leaving the directory, files over the size bound,
//! non-JSON files) answer `403` with the reason.
//!
//! Besides the files: `/.well-known/agents.json` (the directory's own, or
//! one built from its descriptors), each descriptor at its format's
//! well-known path when exactly one claims it, the JWK Set of the signing
//! keys at [`JWKS_PATH`], and, when an issuer is given, RFC 8414 section 3
//! style metadata naming that JWK Set.
//!
//! [`PublishService`] answers `GET` and `HEAD` (RFC 9110 section 9.3.2),
//! conditional `GET` with `If-None-Match` (RFC 9110 section 13.1.2, `304`
//! with the same `ETag` and `Cache-Control`), and nothing else (`405`).
//! Wrapped in the [`super::SignLayer`] every `200` carries `Content-Digest`
//! and the RFC 9421 signature.

use super::keys::KeyRing;
use crate::formats::{detect, Format};
use bytes::Bytes;
use http::{header, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::Full;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;
use std::future::{ready, Ready};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::task::{Context, Poll};
use std::time::SystemTime;

/// Where the JWK Set of the signing keys is served.
pub const JWKS_PATH: &str = "/.well-known/jwks.json";
/// Where the registry of the served descriptors is served.
pub const AGENTS_PATH: &str = "/.well-known/agents.json";
/// Where RFC 8414 style metadata is served when an issuer is configured.
pub const METADATA_PATH: &str = "/.well-known/oauth-authorization-server";
/// Default largest file served: 1 MiB.
pub const DEFAULT_MAX_FILE: u64 = 1024 * 1024;
/// Most files (served or refused) in one snapshot.
pub const MAX_FILES: usize = 10_000;
/// Deepest directory nesting scanned.
pub const MAX_DEPTH: usize = 8;
/// Default largest total of the files held in memory: 256 MiB.
pub const DEFAULT_MAX_TOTAL: u64 = 256 * 1024 * 1024;

/// What the publisher serves and how.
#[derive(Clone, Debug)]
pub struct PublishConfig {
    /// The directory of descriptors.
    pub root: PathBuf,
    /// The signing keys; all of them are listed at [`JWKS_PATH`].
    pub keys: Arc<KeyRing>,
    /// Largest file served, in bytes.
    pub max_file: u64,
    /// Largest total of the files held in memory; files past it answer 403.
    pub max_total: u64,
    /// `Cache-Control: max-age` of served files, in seconds.
    pub cache_max_age: u32,
    /// Prefix of the URLs in a built `agents.json` (e.g.
    /// `https://example.com`); default: absolute paths.
    pub base_url: Option<String>,
    /// Serve RFC 8414 style metadata with this `issuer` at [`METADATA_PATH`].
    pub issuer: Option<String>,
}

impl PublishConfig {
    /// Defaults: 1 MiB files, `max-age=300`, no base URL, no metadata.
    pub fn new(root: impl Into<PathBuf>, keys: Arc<KeyRing>) -> PublishConfig {
        PublishConfig {
            root: root.into(),
            keys,
            max_file: DEFAULT_MAX_FILE,
            max_total: DEFAULT_MAX_TOTAL,
            cache_max_age: 300,
            base_url: None,
            issuer: None,
        }
    }
}

/// Why a directory cannot be published at all.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// The root is missing or unreadable.
    #[error("{path}: {err}")]
    Io {
        /// The path.
        path: PathBuf,
        /// What failed.
        err: std::io::Error,
    },
    /// The root is not a directory.
    #[error("{0}: not a directory")]
    NotADirectory(PathBuf),
    /// More files than [`MAX_FILES`].
    #[error("more than {MAX_FILES} files under the served directory")]
    TooManyFiles,
}

/// One served path.
#[derive(Clone, Debug)]
pub enum Entry {
    /// A document served as it is.
    File {
        /// The exact bytes sent.
        body: Bytes,
        /// The `Content-Type` sent (and signed).
        content_type: String,
        /// The strong `ETag` (RFC 9110 section 8.8.3).
        etag: String,
    },
    /// A file present but not served, and why (sent with `403`).
    Refused(String),
}

/// An immutable snapshot of the served directory.
#[derive(Clone, Debug, Default)]
pub struct Site {
    entries: HashMap<String, Entry>,
    fingerprint: u64,
}

impl Site {
    /// The entry served at `path` (an absolute URL path).
    pub fn get(&self, path: &str) -> Option<&Entry> {
        self.entries.get(path)
    }
    /// Every served path, sorted.
    pub fn paths(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.entries.keys().map(String::as_str).collect();
        v.sort_unstable();
        v
    }
    /// Paths of the served descriptors (`.json` files from the directory
    /// and the documents built from it), sorted.
    pub fn documents(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self
            .entries
            .iter()
            .filter(|(_, e)| matches!(e, Entry::File { .. }))
            .map(|(k, _)| k.as_str())
            .collect();
        v.sort_unstable();
        v
    }
}

fn etag(body: &[u8]) -> String {
    let d = crate::digest::DigestAlgorithm::Sha256.digest(body);
    format!("\"{}\"", crate::b64::encode(&d[..18]))
}

fn file_entry(body: Vec<u8>, content_type: &str) -> Entry {
    Entry::File {
        etag: etag(&body),
        body: Bytes::from(body),
        content_type: content_type.to_owned(),
    }
}

struct Found {
    url: String,
    path: PathBuf,
    len: u64,
    modified: Option<SystemTime>,
    refused: Option<String>,
}

/// Walk `root` (bounded depth and count), never following a symlink out of
/// it. Hidden entries other than `.well-known` are skipped.
fn walk(root: &Path, max_file: u64) -> Result<Vec<Found>, PublishError> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |err| PublishError::Io { path, err }
    };
    let canon_root = std::fs::canonicalize(root).map_err(io(root))?;
    if !canon_root.is_dir() {
        return Err(PublishError::NotADirectory(root.to_owned()));
    }
    let mut out = Vec::new();
    let mut stack = vec![(canon_root.clone(), String::new(), 0usize)];
    while let Some((dir, prefix, depth)) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for ent in rd.flatten() {
            if out.len() >= MAX_FILES {
                return Err(PublishError::TooManyFiles);
            }
            let Some(name) = ent.file_name().to_str().map(str::to_owned) else {
                continue; // not UTF-8: no URL names it
            };
            if name.starts_with('.') && name != ".well-known" {
                continue;
            }
            let url = format!("{prefix}/{name}");
            let path = ent.path();
            let Ok(lmeta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let mut refused = None;
            let mut real = path.clone();
            if lmeta.file_type().is_symlink() {
                match std::fs::canonicalize(&path) {
                    Ok(t) if t.starts_with(&canon_root) => real = t,
                    _ => refused = Some("a symlink that leaves the served directory".to_owned()),
                }
            }
            let meta = match std::fs::metadata(&real) {
                Ok(m) => m,
                Err(_) if refused.is_some() => lmeta.clone(),
                Err(_) => continue,
            };
            if refused.is_none() && meta.is_dir() {
                if depth < MAX_DEPTH && !lmeta.file_type().is_symlink() {
                    stack.push((real, url, depth + 1));
                }
                continue;
            }
            if refused.is_none() && !meta.is_file() {
                continue;
            }
            if refused.is_none() && meta.len() > max_file {
                refused = Some(format!("larger than the {max_file}-byte limit"));
            }
            out.push(Found {
                url,
                path: real,
                len: meta.len(),
                modified: meta.modified().ok(),
                refused,
            });
        }
    }
    out.sort_by(|a, b| a.url.cmp(&b.url));
    Ok(out)
}

/// A cheap fingerprint of the directory (paths, sizes, modification
/// times), to notice changes without reading the files.
pub fn fingerprint(root: &Path, max_file: u64) -> Result<u64, PublishError> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for f in walk(root, max_file)? {
        f.url.hash(&mut h);
        f.len.hash(&mut h);
        f.modified.hash(&mut h);
        f.refused.is_some().hash(&mut h);
    }
    Ok(h.finish())
}

/// Read the directory into a [`Site`].
pub fn scan(cfg: &PublishConfig) -> Result<Site, PublishError> {
    let found = walk(&cfg.root, cfg.max_file)?;
    let mut site = Site {
        entries: HashMap::new(),
        fingerprint: fingerprint(&cfg.root, cfg.max_file)?,
    };
    let mut formats: Vec<(String, Format, Value)> = Vec::new();
    let mut total = 0u64;
    for f in found {
        if let Some(r) = f.refused {
            site.entries.insert(f.url, Entry::Refused(r));
            continue;
        }
        if total.saturating_add(f.len) > cfg.max_total {
            site.entries.insert(
                f.url,
                Entry::Refused(format!(
                    "the served files exceed the {}-byte total limit",
                    cfg.max_total
                )),
            );
            continue;
        }
        let is_json = f.url.ends_with(".json");
        let is_jws = f.url.ends_with(".jws");
        if !is_json && !is_jws {
            site.entries.insert(
                f.url,
                Entry::Refused("not a descriptor: only .json and .jws files are served".into()),
            );
            continue;
        }
        let body = match read_bounded(&f.path, cfg.max_file) {
            Ok(b) => {
                total = total.saturating_add(b.len() as u64);
                b
            }
            Err(r) => {
                site.entries.insert(f.url, Entry::Refused(r));
                continue;
            }
        };
        if is_jws {
            let compact = !matches!(body.iter().find(|b| !b.is_ascii_whitespace()), Some(b'{'));
            let ct = if compact {
                "application/jose"
            } else {
                "application/jose+json"
            };
            site.entries.insert(f.url, file_entry(body, ct));
            continue;
        }
        let doc = match crate::json::parse_strict(&body) {
            Ok(d) => d,
            Err(e) => {
                site.entries
                    .insert(f.url, Entry::Refused(format!("not a JSON document: {e}")));
                continue;
            }
        };
        let ct = match detect::detect(&doc) {
            Ok(fmt) => {
                formats.push((f.url.clone(), fmt, doc));
                fmt.media_type()
            }
            Err(_) => "application/json",
        };
        site.entries.insert(f.url, file_entry(body, ct));
    }
    // Each format's well-known path, when exactly one descriptor claims it.
    let mut claims: BTreeMap<&'static str, Vec<&str>> = BTreeMap::new();
    for (url, fmt, _) in &formats {
        if let Some(p) = fmt.well_known_path() {
            claims.entry(p).or_default().push(url);
        }
    }
    for (wk, urls) in claims {
        if let [one] = urls[..] {
            if !site.entries.contains_key(wk) {
                if let Some(e) = site.entries.get(one).cloned() {
                    site.entries.insert(wk.to_owned(), e);
                }
            }
        }
    }
    if !site.entries.contains_key(AGENTS_PATH) {
        let base = cfg.base_url.as_deref().unwrap_or("").trim_end_matches('/');
        let mut agents = Map::new();
        for (url, fmt, doc) in &formats {
            if *fmt == Format::AgentsRegistry {
                continue;
            }
            let stem = url
                .rsplit('/')
                .next()
                .unwrap_or(url)
                .trim_end_matches(".json");
            let name = doc
                .get("name")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty() && !agents.contains_key(*n))
                .unwrap_or(stem)
                .to_owned();
            if !agents.contains_key(&name) {
                agents.insert(name, Value::String(format!("{base}{url}")));
            }
        }
        let mut m = Map::new();
        m.insert("agents".into(), Value::Object(agents));
        let body = serde_json::to_vec_pretty(&Value::Object(m)).unwrap_or_default();
        site.entries.insert(
            AGENTS_PATH.to_owned(),
            file_entry(body, Format::AgentsRegistry.media_type()),
        );
    }
    let jwks = serde_json::to_vec_pretty(&cfg.keys.jwks()).unwrap_or_default();
    site.entries.insert(
        JWKS_PATH.to_owned(),
        file_entry(jwks, "application/jwk-set+json"),
    );
    if let Some(iss) = &cfg.issuer {
        let mut m = Map::new();
        m.insert("issuer".into(), Value::String(iss.clone()));
        m.insert(
            "jwks_uri".into(),
            Value::String(format!("{}{JWKS_PATH}", iss.trim_end_matches('/'))),
        );
        let body = serde_json::to_vec_pretty(&Value::Object(m)).unwrap_or_default();
        site.entries.insert(
            METADATA_PATH.to_owned(),
            file_entry(body, "application/json"),
        );
    }
    Ok(site)
}

fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let f = std::fs::File::open(path).map_err(|e| format!("unreadable: {e}"))?;
    let mut buf = Vec::new();
    f.take(max + 1)
        .read_to_end(&mut buf)
        .map_err(|e| format!("unreadable: {e}"))?;
    if buf.len() as u64 > max {
        return Err(format!("larger than the {max}-byte limit"));
    }
    Ok(buf)
}

/// The publisher: the configuration and the current snapshot, replaced
/// whole on reload (requests in flight keep the snapshot they started with).
#[derive(Debug)]
pub struct Publisher {
    cfg: PublishConfig,
    site: RwLock<Arc<Site>>,
}

impl Publisher {
    /// Scan the directory once.
    pub fn new(cfg: PublishConfig) -> Result<Publisher, PublishError> {
        let site = scan(&cfg)?;
        Ok(Publisher {
            cfg,
            site: RwLock::new(Arc::new(site)),
        })
    }
    /// The configuration.
    pub fn config(&self) -> &PublishConfig {
        &self.cfg
    }
    /// The current snapshot.
    pub fn site(&self) -> Arc<Site> {
        match self.site.read() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }
    /// Rescan when the directory changed; true when a new snapshot is in
    /// place. A failed scan keeps the previous snapshot.
    pub fn reload_if_changed(&self) -> Result<bool, PublishError> {
        let fp = fingerprint(&self.cfg.root, self.cfg.max_file)?;
        if fp == self.site().fingerprint {
            return Ok(false);
        }
        let site = Arc::new(scan(&self.cfg)?);
        match self.site.write() {
            Ok(mut g) => *g = site,
            Err(p) => *p.into_inner() = site,
        }
        Ok(true)
    }
}

/// The tower service answering from a [`Publisher`] (unsigned: wrap it in
/// [`super::SignLayer`]).
#[derive(Clone, Debug)]
pub struct PublishService {
    publisher: Arc<Publisher>,
}

impl PublishService {
    /// Serve this publisher.
    pub fn new(publisher: Arc<Publisher>) -> PublishService {
        PublishService { publisher }
    }
}

/// Why a request path is refused before any lookup.
fn check_path(raw: &str) -> Result<String, &'static str> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3).ok_or("bad percent-encoding")?;
            let s = std::str::from_utf8(hex).map_err(|_| "bad percent-encoding")?;
            let v = u8::from_str_radix(s, 16).map_err(|_| "bad percent-encoding")?;
            out.push(v);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    let path = String::from_utf8(out).map_err(|_| "path is not UTF-8")?;
    if !path.starts_with('/') {
        return Err("path must be absolute");
    }
    for seg in path.split('/').skip(1) {
        if seg == ".." || seg == "." || seg.contains('\\') || seg.contains('\0') {
            return Err("path traversal refused");
        }
    }
    Ok(path)
}

fn etag_matches(if_none_match: &http::HeaderMap, etag: &str) -> bool {
    // RFC 9110 section 13.1.2: weak comparison, "*" matches any.
    let strip = |t: &str| t.trim().trim_start_matches("W/").to_owned();
    let want = strip(etag);
    if_none_match
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| t.trim() == "*" || strip(t) == want)
}

fn plain(status: StatusCode, msg: &str) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(format!("{msg}\n"))));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

impl PublishService {
    /// Answer one request from the current snapshot.
    pub fn respond<B>(&self, req: &Request<B>) -> Response<Full<Bytes>> {
        if req.method() != Method::GET && req.method() != Method::HEAD {
            let mut r = plain(StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD");
            r.headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
            return r;
        }
        let path = match check_path(req.uri().path()) {
            Ok(p) => p,
            Err(why) => return plain(StatusCode::BAD_REQUEST, why),
        };
        let site = self.publisher.site();
        match site.get(&path) {
            None => plain(StatusCode::NOT_FOUND, "not found"),
            Some(Entry::Refused(why)) => {
                plain(StatusCode::FORBIDDEN, &format!("not served: {why}"))
            }
            Some(Entry::File {
                body,
                content_type,
                etag,
            }) => {
                let cc = format!("public, max-age={}", self.publisher.cfg.cache_max_age);
                let mut r = if etag_matches(req.headers(), etag) {
                    let mut r = Response::new(Full::new(Bytes::new()));
                    *r.status_mut() = StatusCode::NOT_MODIFIED;
                    r
                } else {
                    let mut r = Response::new(Full::new(body.clone()));
                    if let Ok(v) = HeaderValue::from_str(content_type) {
                        r.headers_mut().insert(header::CONTENT_TYPE, v);
                    }
                    r
                };
                let h = r.headers_mut();
                if let Ok(v) = HeaderValue::from_str(etag) {
                    h.insert(header::ETAG, v);
                }
                if let Ok(v) = HeaderValue::from_str(&cc) {
                    h.insert(header::CACHE_CONTROL, v);
                }
                h.insert(
                    header::X_CONTENT_TYPE_OPTIONS,
                    HeaderValue::from_static("nosniff"),
                );
                r
            }
        }
    }
}

impl<B> tower_service::Service<Request<B>> for PublishService {
    type Response = Response<Full<Bytes>>;
    type Error = Infallible;
    type Future = Ready<Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        ready(Ok(self.respond(&req)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traversal_and_encoded_traversal_are_refused() {
        for p in [
            "/../etc/passwd",
            "/a/%2e%2e/b",
            "/a/%2E%2E",
            "/x%5c..",
            "/%00",
            "/%zz",
        ] {
            assert!(check_path(p).is_err(), "{p}");
        }
        assert_eq!(
            check_path("/.well-known/agents.json").unwrap(),
            "/.well-known/agents.json"
        );
        assert_eq!(check_path("/a%20b.json").unwrap(), "/a b.json");
    }

    fn ring() -> Arc<KeyRing> {
        let k = crate::SigningKey::generate(crate::Algorithm::EcdsaP256Sha256).unwrap();
        Arc::new(KeyRing::single(k).unwrap())
    }

    fn body(site: &Site, path: &str) -> Value {
        match site.get(path) {
            Some(Entry::File { body, .. }) => serde_json::from_slice(body).unwrap(),
            other => panic!("{path}: {other:?}"),
        }
    }

    #[test]
    fn agents_json_is_built_when_absent_and_metadata_names_the_jwks() {
        let d = std::env::temp_dir().join(format!("agentsig-publish-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::copy("examples/agent.json", d.join("sub/agent.json")).unwrap();
        std::fs::copy("examples/woa.json", d.join("woa.json")).unwrap();
        let mut cfg = PublishConfig::new(&d, ring());
        cfg.base_url = Some("https://example.com/".into());
        cfg.issuer = Some("https://example.com".into());
        let site = scan(&cfg).unwrap();
        let agents = body(&site, AGENTS_PATH);
        let urls: Vec<&str> = agents["agents"]
            .as_object()
            .unwrap()
            .values()
            .filter_map(Value::as_str)
            .collect();
        assert!(
            urls.contains(&"https://example.com/sub/agent.json"),
            "{agents}"
        );
        assert!(urls.contains(&"https://example.com/woa.json"), "{agents}");
        // The one WoA document is also at its well-known path.
        assert!(site.get("/.well-known/woa.json").is_some());
        let meta = body(&site, METADATA_PATH);
        assert_eq!(
            meta["jwks_uri"],
            "https://example.com/.well-known/jwks.json"
        );
        assert_eq!(meta["issuer"], "https://example.com");
        let jwks = body(&site, JWKS_PATH);
        assert_eq!(jwks["keys"].as_array().unwrap().len(), 1);
        assert!(jwks["keys"][0].get("d").is_none());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn files_past_the_total_limit_are_refused() {
        let d = std::env::temp_dir().join(format!("agentsig-total-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("a.json"), vec![b' '; 600]).unwrap();
        std::fs::write(d.join("b.json"), b"{}").unwrap();
        std::fs::write(d.join("c.json"), vec![b' '; 600]).unwrap();
        let mut cfg = PublishConfig::new(&d, ring());
        cfg.max_total = 1000;
        let site = scan(&cfg).unwrap();
        assert!(matches!(site.get("/b.json"), Some(Entry::File { .. })));
        match site.get("/c.json") {
            Some(Entry::Refused(why)) => assert!(why.contains("total limit"), "{why}"),
            other => panic!("{other:?}"),
        }
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn if_none_match_uses_weak_comparison_and_star() {
        let mut h = http::HeaderMap::new();
        h.insert(
            header::IF_NONE_MATCH,
            HeaderValue::from_static("\"x\", W/\"abc\""),
        );
        assert!(etag_matches(&h, "\"abc\""));
        assert!(!etag_matches(&h, "\"abd\""));
        h.insert(header::IF_NONE_MATCH, HeaderValue::from_static("*"));
        assert!(etag_matches(&h, "\"q\""));
    }
}
