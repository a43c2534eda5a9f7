//! The directory publisher behind `agentsig serve DIR`.
//!
//! A [`Site`] is an in-memory snapshot of the directory: every `.json`
//! descriptor (served with its format's media type, [`Format::media_type`])
//! and every `.jws` beside it, each with a strong `ETag`. Requests are
//! answered from the snapshot only, so no request path ever reaches the
//! file system: path traversal has nothing to traverse. Files the snapshot
//! refuses (symlinks, files over the size bound, non-JSON files, `.jws`
//! files that are not a JWS) answer `404` like absent ones, so that their
//! existence cannot be probed; the reason is logged. A file that stops
//! parsing (being rewritten in place) keeps its last good version until
//! its new content parses.
//!
//! Symlinks under the directory are never followed, wherever they point:
//! on Unix every entry is opened relative to its directory's descriptor
//! with `O_NOFOLLOW` and read from the descriptor that `fstat` checked
//! (see [`scan`]), so a file swapped for a symlink between two checks is
//! not served either. The directory itself may be a symlink (the operator
//! names it). Hard links are served as the file they are: making one needs
//! read access to the target (Linux `fs.protected_hardlinks`), unlike a
//! symlink, which the server would follow with its own rights.
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
#[cfg(not(unix))]
use std::path::Path;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::task::{Context, Poll};

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
    /// Largest total of the files held in memory; files past it are not
    /// served (404).
    pub max_total: u64,
    /// `Cache-Control: max-age` of served files, in seconds.
    pub cache_max_age: u32,
    /// Prefix of the URLs in a built `agents.json` (e.g.
    /// `https://example.com`); default: absolute paths.
    pub base_url: Option<String>,
    /// Serve RFC 8414 style metadata with this `issuer` at [`METADATA_PATH`].
    pub issuer: Option<String>,
    /// Sign every served A2A Agent Card in card ([`crate::a2a::sign_card`],
    /// A2A v1.0 section 8.4): one signature per key of [`Self::keys`],
    /// appended to its `signatures`, computed once per file version; the
    /// protected headers name each key by `kid`, as listed at [`JWKS_PATH`].
    pub sign_cards: bool,
}

impl PublishConfig {
    /// Defaults: 1 MiB files, `max-age=300`, no base URL, no metadata, A2A
    /// cards served as they are.
    pub fn new(root: impl Into<PathBuf>, keys: Arc<KeyRing>) -> PublishConfig {
        PublishConfig {
            root: root.into(),
            keys,
            max_file: DEFAULT_MAX_FILE,
            max_total: DEFAULT_MAX_TOTAL,
            cache_max_age: 300,
            base_url: None,
            issuer: None,
            sign_cards: false,
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
    /// A file present but not served, and why (logged; answered `404`).
    Refused(String),
}

/// An immutable snapshot of the served directory.
#[derive(Clone, Debug, Default)]
pub struct Site {
    entries: HashMap<String, Entry>,
    /// Per file of the directory: the version read and what it gave, so a
    /// rescan reads only the files whose version changed.
    sources: HashMap<String, Source>,
    fingerprint: u64,
    /// Served `.json` files the built `agents.json` does not list, and why.
    unlisted: Vec<(String, String)>,
    /// What the built discovery documents leave out, and why (logged).
    notes: Vec<String>,
    /// The built `/.well-known/ai-catalog.json` before signing and as
    /// served: a rescan that builds the same catalog serves the same bytes.
    built_catalog: Option<(Value, Entry)>,
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
    /// Files present but not served (they answer `404`, like absent ones)
    /// and why, sorted by path: what `serve` reports when it starts.
    pub fn refused(&self) -> Vec<(&str, &str)> {
        let mut v: Vec<(&str, &str)> = self
            .entries
            .iter()
            .filter_map(|(k, e)| match e {
                Entry::Refused(why) => Some((k.as_str(), why.as_str())),
                Entry::File { .. } => None,
            })
            .collect();
        v.sort_unstable();
        v
    }
    /// Served `.json` files that the `agents.json` built from the directory
    /// does not list, and why, sorted by path (empty when the directory
    /// has its own `agents.json`).
    pub fn unlisted(&self) -> &[(String, String)] {
        &self.unlisted
    }
    /// What the built `/.well-known/ai-catalog.json` and `/server-card`
    /// paths leave out, and why: what `serve` logs when it starts.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }
    /// The `/.well-known/ai-catalog.json` built from the directory (before
    /// its manifests were signed), when one was built: none when the
    /// directory has its own catalog, or without a base URL.
    pub fn built_catalog(&self) -> Option<&Value> {
        self.built_catalog.as_ref().map(|(v, _)| v)
    }
    /// The `/server-card` paths MCP Server Cards are served at, sorted.
    pub fn server_card_paths(&self) -> Vec<&str> {
        self.paths()
            .into_iter()
            .filter(|p| p.ends_with("/server-card"))
            .collect()
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

/// What one version of one file of the directory gave.
#[derive(Clone, Debug)]
struct Source {
    version: Version,
    entry: Entry,
    /// The parsed descriptor and its format (for the built `agents.json`
    /// and the well-known paths).
    doc: Option<(Format, Value)>,
}

/// One version of one file: what `fstat` of the very descriptor that is
/// read reports. Writing a file changes its `mtime` and `ctime` (and a
/// process cannot set `ctime`); replacing it changes the inode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Version {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
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

/// Why a symlink is not served.
const SYMLINK_REFUSED: &str = "a symlink: symlinks inside the served directory are never followed";

/// One file met by the walk.
enum Found {
    /// A regular `.json` or `.jws` file within the bounds: its version
    /// and, unless the previous snapshot holds that very version, the bytes
    /// read from the descriptor whose version this is.
    File {
        url: String,
        version: Version,
        body: Option<Vec<u8>>,
    },
    /// A file present but not served, and why.
    Refused { url: String, why: String },
}

/// Hidden entries other than `.well-known` are not served.
fn served_name(name: &str) -> bool {
    !(name.starts_with('.') && name != ".well-known")
}

/// The one walk of the directory, for change detection and reading alike.
///
/// On Unix the root is opened once and every entry is opened relative to
/// its directory's descriptor with `openat(dirfd, name, O_RDONLY |
/// O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)`: no path is resolved
/// twice, a symlink (even one swapped in after `readdir`) fails to open and
/// is refused, a FIFO opens without blocking and is skipped after `fstat`,
/// a directory is walked through its own descriptor, and a regular file is
/// read from the very descriptor that `fstat` checked. Entries are taken in
/// name order, so the total bound applies deterministically.
struct Walk<'a> {
    max_file: u64,
    max_total: u64,
    total: u64,
    prev: Option<&'a Site>,
    out: Vec<Found>,
}

impl Walk<'_> {
    fn refuse(&mut self, url: String, why: impl Into<String>) {
        self.out.push(Found::Refused {
            url,
            why: why.into(),
        });
    }

    /// A regular file, opened and checked: bound it, read it unless the
    /// previous snapshot holds this version.
    fn file(&mut self, url: String, version: Version, file: &mut std::fs::File) {
        if !url.ends_with(".json") && !url.ends_with(".jws") {
            return self.refuse(
                url,
                "not a descriptor: only .json and .jws files are served",
            );
        }
        if version.len > self.max_file {
            let why = format!("larger than the {}-byte limit", self.max_file);
            return self.refuse(url, why);
        }
        if self.total.saturating_add(version.len) > self.max_total {
            let why = format!(
                "the served files exceed the {}-byte total limit",
                self.max_total
            );
            return self.refuse(url, why);
        }
        let unchanged = cfg!(unix)
            && self
                .prev
                .and_then(|s| s.sources.get(&url))
                .is_some_and(|s| s.version == version);
        let body = if unchanged {
            None
        } else {
            match read_bounded(file, self.max_file) {
                Ok(b) => Some(b),
                Err(why) => return self.refuse(url, why),
            }
        };
        let len = body.as_ref().map_or(version.len, |b| b.len() as u64);
        self.total = self.total.saturating_add(len);
        self.out.push(Found::File { url, version, body });
    }

    #[cfg(unix)]
    fn dir(
        &mut self,
        dir: std::os::fd::OwnedFd,
        prefix: &str,
        depth: usize,
    ) -> Result<(), PublishError> {
        use rustix::fs::{openat, Dir, FileType, Mode, OFlags};
        use rustix::io::Errno;
        use std::os::unix::fs::MetadataExt;
        let Ok(mut d) = Dir::new(dir) else {
            return Ok(());
        };
        let mut names = Vec::new();
        while let Some(ent) = d.read() {
            let Ok(ent) = ent else { break };
            let Ok(name) = ent.file_name().to_str() else {
                continue; // not UTF-8: no URL names it
            };
            if name != "." && name != ".." && served_name(name) {
                names.push((name.to_owned(), ent.file_type()));
            }
        }
        names.sort_by(|a, b| a.0.cmp(&b.0));
        let Ok(dfd) = d.fd() else {
            return Ok(());
        };
        for (name, ty) in names {
            if self.out.len() >= MAX_FILES {
                return Err(PublishError::TooManyFiles);
            }
            let url = format!("{prefix}/{name}");
            match ty {
                FileType::Symlink => {
                    self.refuse(url, SYMLINK_REFUSED);
                    continue;
                }
                FileType::RegularFile | FileType::Directory | FileType::Unknown => {}
                _ => continue, // FIFO, socket, device: never opened
            }
            let flags = OFlags::RDONLY
                | OFlags::NOFOLLOW
                | OFlags::NONBLOCK
                | OFlags::CLOEXEC
                | OFlags::NOCTTY;
            let fd = match openat(dfd, name.as_str(), flags, Mode::empty()) {
                Ok(fd) => fd,
                // O_NOFOLLOW on a symlink: ELOOP (Linux, macOS), EMLINK (FreeBSD).
                Err(e) if e == Errno::LOOP || e == Errno::MLINK => {
                    self.refuse(url, SYMLINK_REFUSED);
                    continue;
                }
                Err(e) => {
                    self.refuse(url, format!("unreadable: {e}"));
                    continue;
                }
            };
            let mut file = std::fs::File::from(fd);
            let Ok(meta) = file.metadata() else {
                continue;
            };
            if meta.is_dir() {
                if depth < MAX_DEPTH {
                    self.dir(file.into(), &url, depth + 1)?;
                }
                continue;
            }
            if !meta.is_file() {
                continue; // FIFO, socket or device swapped in after readdir
            }
            let version = Version {
                dev: meta.dev(),
                ino: meta.ino(),
                len: meta.len(),
                mtime: (meta.mtime(), meta.mtime_nsec()),
                ctime: (meta.ctime(), meta.ctime_nsec()),
            };
            self.file(url, version, &mut file);
        }
        Ok(())
    }

    /// Without `openat`: symlinks are refused by `lstat`, and the opened
    /// file must be a regular file agreeing with the `lstat` (length and
    /// modification time); every scan reads every file (no reuse).
    #[cfg(not(unix))]
    fn dir(&mut self, dir: &Path, prefix: &str, depth: usize) -> Result<(), PublishError> {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return Ok(());
        };
        let mut names: Vec<String> = rd
            .flatten()
            .filter_map(|e| e.file_name().to_str().map(str::to_owned))
            .filter(|n| served_name(n))
            .collect();
        names.sort();
        for name in names {
            if self.out.len() >= MAX_FILES {
                return Err(PublishError::TooManyFiles);
            }
            let url = format!("{prefix}/{name}");
            let path = dir.join(&name);
            let Ok(lmeta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if lmeta.file_type().is_symlink() {
                self.refuse(url, SYMLINK_REFUSED);
                continue;
            }
            if lmeta.is_dir() {
                if depth < MAX_DEPTH {
                    self.dir(&path, &url, depth + 1)?;
                }
                continue;
            }
            if !lmeta.is_file() {
                continue;
            }
            let Ok(mut file) = std::fs::File::open(&path) else {
                self.refuse(url, "unreadable");
                continue;
            };
            let Ok(meta) = file.metadata() else {
                continue;
            };
            let modified = meta.modified().ok();
            if !meta.is_file() || meta.len() != lmeta.len() || modified != lmeta.modified().ok() {
                self.refuse(url, "changed while being read");
                continue;
            }
            let mtime = modified
                .and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or((0, 0), |d| {
                    (d.as_secs() as i64, i64::from(d.subsec_nanos()))
                });
            let version = Version {
                dev: 0,
                ino: 0,
                len: meta.len(),
                mtime,
                ctime: (0, 0),
            };
            self.file(url, version, &mut file);
        }
        Ok(())
    }
}

/// Walk the directory once (bounded depth, count and sizes). The root
/// itself is the operator's path and may be a symlink; nothing under it
/// is followed.
fn walk(cfg: &PublishConfig, prev: Option<&Site>) -> Result<Vec<Found>, PublishError> {
    let root = &cfg.root;
    let io = |err: std::io::Error| PublishError::Io {
        path: root.clone(),
        err,
    };
    let mut w = Walk {
        max_file: cfg.max_file,
        max_total: cfg.max_total,
        total: 0,
        prev,
        out: Vec::new(),
    };
    #[cfg(unix)]
    {
        use rustix::fs::{Mode, OFlags};
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
        let fd =
            rustix::fs::open(root.as_path(), flags, Mode::empty()).map_err(|e| io(e.into()))?;
        let f = std::fs::File::from(fd);
        if !f.metadata().map_err(io)?.is_dir() {
            return Err(PublishError::NotADirectory(root.clone()));
        }
        w.dir(f.into(), "", 0)?;
    }
    #[cfg(not(unix))]
    {
        if !std::fs::metadata(root).map_err(io)?.is_dir() {
            return Err(PublishError::NotADirectory(root.clone()));
        }
        w.dir(root, "", 0)?;
    }
    Ok(w.out)
}

/// The fingerprint of one walk: every path with the `fstat` version of
/// the descriptor read (or why it is refused), so a change is noticed from
/// the very objects that are served.
fn fingerprint(found: &[Found]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for f in found {
        match f {
            Found::File { url, version, body } => {
                url.hash(&mut h);
                version.hash(&mut h);
                // Without an inode identity (non-Unix) the content decides.
                if !cfg!(unix) {
                    body.hash(&mut h);
                }
            }
            Found::Refused { url, why } => {
                url.hash(&mut h);
                why.hash(&mut h);
            }
        }
    }
    h.finish()
}

/// The media type of a `.jws` file, or why it is not a JWS: the compact
/// serialization (RFC 7515 section 7.1: three base64url parts, the first a
/// JSON object with `alg`; the payload may be detached, RFC 7515 appendix
/// F) or the JSON serialization (section 7.2: an object with `signature`
/// or `signatures`).
fn jws_media_type(body: &[u8]) -> Result<&'static str, String> {
    let text = std::str::from_utf8(body)
        .map_err(|_| "not a JWS: not UTF-8".to_owned())?
        .trim();
    if text.starts_with('{') {
        let v =
            crate::json::parse_strict(text.as_bytes()).map_err(|e| format!("not a JWS: {e}"))?;
        let ok = v.get("signatures").is_some_and(Value::is_array)
            || v.get("signature").is_some_and(Value::is_string);
        return if ok {
            Ok("application/jose+json")
        } else {
            Err("not a JWS: no \"signature\" or \"signatures\" member".to_owned())
        };
    }
    let parts: Vec<&str> = text.split('.').collect();
    let [h, p, s] = parts[..] else {
        return Err("not a JWS: a compact JWS has three parts".to_owned());
    };
    let b64url = crate::b64::is_url_alphabet;
    if h.is_empty() || s.is_empty() || !b64url(h) || !b64url(p) || !b64url(s) {
        return Err("not a JWS: a compact JWS has three base64url parts".to_owned());
    }
    let header = crate::b64::decode(h).map_err(|e| format!("not a JWS: header: {e}"))?;
    let hv = crate::json::parse_strict(&header).map_err(|e| format!("not a JWS: header: {e}"))?;
    if !hv.get("alg").is_some_and(Value::is_string) {
        return Err("not a JWS: the header has no \"alg\"".to_owned());
    }
    Ok("application/jose")
}

/// The card with one more embedded signature per key of the ring, in
/// ring order, serialized as served.
fn sign_card(cfg: &PublishConfig, card: &Value) -> Result<Vec<u8>, String> {
    let extra = Map::new();
    let mut card = card.clone();
    for k in cfg.keys.all() {
        card = crate::a2a::sign_card(&card, &k.key, &extra, false)
            .map_err(|e| match e {
                crate::a2a::A2aError::UncoveredSecurity(list) => format!(
                    "--sign-cards: the A2A card is not signed, so not served: these security-relevant members would not be covered by a signature: {list}; {} (check with `agentsig sign FILE --key KEY --out -`)",
                    crate::a2a::uncovered_fix(&list)
                ),
                e => format!("--sign-cards: the A2A card could not be signed, so it is not served: {e}"),
            })?
            .card;
    }
    serde_json::to_vec_pretty(&card)
        .map_err(|e| format!("the A2A card could not be serialized: {e}"))
}

/// What a newly read version of a file gives.
fn load(cfg: &PublishConfig, url: &str, version: Version, body: Vec<u8>) -> Source {
    let refused = |why: String| Source {
        version,
        entry: Entry::Refused(why),
        doc: None,
    };
    if url.ends_with(".jws") {
        return match jws_media_type(&body) {
            Ok(ct) => Source {
                version,
                entry: file_entry(body, ct),
                doc: None,
            },
            Err(why) => refused(why),
        };
    }
    let doc = match crate::json::parse_strict(&body) {
        Ok(d) => d,
        Err(e) => return refused(format!("not a JSON document: {e}")),
    };
    match detect(&doc) {
        Ok(Format::A2a) if cfg.sign_cards => match sign_card(cfg, &doc) {
            Ok(signed) => Source {
                version,
                entry: file_entry(signed, Format::A2a.media_type()),
                doc: Some((Format::A2a, doc)),
            },
            Err(why) => refused(why),
        },
        Ok(fmt) => Source {
            version,
            entry: file_entry(body, fmt.media_type()),
            doc: Some((fmt, doc)),
        },
        Err(_) => Source {
            version,
            entry: file_entry(body, "application/json"),
            doc: None,
        },
    }
}

/// Read the directory into a [`Site`] with one walk: on Unix the root is
/// opened once, each entry with `openat(dirfd, name, O_RDONLY | O_NOFOLLOW
/// | O_NONBLOCK | O_CLOEXEC)`, and a regular file is read from that same
/// descriptor; symlinks are refused, FIFOs, sockets and devices skipped.
///
/// # Errors
/// [`PublishError`] when the directory, a file or a key cannot be read, or a descriptor cannot be
/// signed.
pub fn scan(cfg: &PublishConfig) -> Result<Site, PublishError> {
    let found = walk(cfg, None)?;
    Ok(build(cfg, found, None))
}

/// The snapshot from one walk; files the walk did not read (unchanged
/// since `prev`) keep what they gave there.
fn build(cfg: &PublishConfig, found: Vec<Found>, prev: Option<&Site>) -> Site {
    let mut site = Site {
        entries: HashMap::new(),
        sources: HashMap::new(),
        fingerprint: fingerprint(&found),
        unlisted: Vec::new(),
        notes: Vec::new(),
        built_catalog: None,
    };
    let mut plain_json: Vec<String> = Vec::new();
    let mut formats: Vec<(String, Format, Value)> = Vec::new();
    for f in found {
        let (url, source) = match f {
            Found::Refused { url, why } => {
                site.entries.insert(url, Entry::Refused(why));
                continue;
            }
            Found::File {
                url,
                version,
                body: Some(body),
            } => {
                let mut s = load(cfg, &url, version, body);
                // A file being rewritten in place reads as a prefix of its
                // new content for a while: keep serving the last version
                // that parsed until the new one does.
                if let Entry::Refused(why) = &s.entry {
                    if let Some(good) = prev
                        .and_then(|p| p.sources.get(&url))
                        .filter(|p| matches!(p.entry, Entry::File { .. }))
                    {
                        tracing::warn!(
                            path = %crate::text::escape_controls(&url),
                            "{why}: serving its last good version"
                        );
                        s = Source {
                            version,
                            entry: good.entry.clone(),
                            doc: good.doc.clone(),
                        };
                    }
                }
                (url, s)
            }
            Found::File {
                url, body: None, ..
            } => match prev.and_then(|p| p.sources.get(&url)) {
                Some(s) => (url, s.clone()),
                None => continue, // not read and not known: cannot happen
            },
        };
        if let Some((fmt, doc)) = &source.doc {
            formats.push((url.clone(), *fmt, doc.clone()));
        } else if matches!(source.entry, Entry::File { .. }) && url.ends_with(".json") {
            plain_json.push(url.clone());
        }
        if let (Entry::Refused(why), Some(prev)) = (&source.entry, prev) {
            // Said at start-up by the caller (`Site::refused`); on a rescan,
            // once per newly refused file.
            if !matches!(prev.entries.get(&url), Some(Entry::Refused(w)) if w == why) {
                tracing::warn!(
                    path = %crate::text::escape_controls(&url),
                    "not served (answers 404): {why}"
                );
            }
        }
        site.entries.insert(url.clone(), source.entry.clone());
        site.sources.insert(url, source);
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
    if let Some(base) = cfg.base_url.as_deref() {
        discovery(cfg, base.trim_end_matches('/'), &formats, prev, &mut site);
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
            } else {
                site.unlisted.push((
                    url.clone(),
                    format!("its name and file name {name:?} are already listed for another file; give it a distinct \"name\""),
                ));
            }
        }
        for url in plain_json {
            site.unlisted.push((
                url,
                "not a descriptor format agentsig knows (served as application/json; `agentsig lint FILE` says why)".into(),
            ));
        }
        site.unlisted.sort();
        if let Some(prev) = prev {
            for (url, why) in &site.unlisted {
                if !prev.unlisted.iter().any(|(u, w)| u == url && w == why) {
                    tracing::warn!(
                        path = %crate::text::escape_controls(url),
                        "left out of the built {AGENTS_PATH}: {why}"
                    );
                }
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
    site
}

/// The documents of AI Catalog discovery ([`super::catalog`]): each MCP
/// Server Card at its `/server-card` paths, and
/// `/.well-known/ai-catalog.json` built from the served descriptors unless
/// the directory has its own. What is left out is in [`Site::notes`], and
/// logged on a rescan that newly leaves it out.
fn discovery(
    cfg: &PublishConfig,
    base: &str,
    formats: &[(String, Format, Value)],
    prev: Option<&Site>,
    site: &mut Site,
) {
    let mut claims: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for (url, fmt, doc) in formats {
        if *fmt == Format::McpServerCard {
            for p in super::catalog::server_card_paths(base, doc) {
                claims.entry(p).or_default().push(url);
            }
        }
    }
    let mut served_at: HashMap<&str, String> = HashMap::new();
    for (path, urls) in claims {
        match urls[..] {
            [one] if !site.entries.contains_key(&path) => {
                if let Some(e) = site.entries.get(one).cloned() {
                    site.entries.insert(path.clone(), e);
                    served_at.entry(one).or_insert(path);
                }
            }
            [one] => site.notes.push(format!(
                "{path}: the MCP Server Card {one} is not served there: a file of the directory has that path"
            )),
            _ => site.notes.push(format!(
                "{path}: not served: several MCP Server Cards name it as their streamable-HTTP endpoint ({})",
                urls.join(", ")
            )),
        }
    }
    let wk = crate::catalog::WELL_KNOWN_PATH;
    if !site.entries.contains_key(wk) {
        let mut items: Vec<super::catalog::Artifact<'_>> = formats
            .iter()
            .filter(|(_, fmt, _)| *fmt != Format::AgentsRegistry)
            .map(|(url, fmt, doc)| {
                let at = served_at
                    .get(url.as_str())
                    .map_or(url.as_str(), String::as_str);
                super::catalog::Artifact {
                    path: url,
                    format: *fmt,
                    doc,
                    served_at: at,
                    digest: match site.entries.get(at) {
                        Some(Entry::File { body, .. }) => {
                            Some(crate::catalog::manifest::sha256_digest(body))
                        }
                        _ => None,
                    },
                }
            })
            .collect();
        items.sort_by(|a, b| a.path.cmp(b.path));
        let unsigned =
            super::catalog::unsigned_catalog(base, &format!("{base}{JWKS_PATH}"), &items);
        let reused = prev
            .and_then(|p| p.built_catalog.as_ref())
            .filter(|(u, _)| *u == unsigned)
            .map(|(_, e)| e.clone());
        let entry = match reused {
            Some(e) => Some(e),
            None => match super::catalog::sign_built_catalog(&unsigned, &cfg.keys.current().key) {
                Ok(body) if body.len() > crate::catalog::MAX_CATALOG_BYTES => {
                    site.notes.push(format!(
                        "{wk}: not built: {} bytes for {} entries, above the {}-byte bound of agentsig's catalog verification; publish a catalog of your own with nested catalogs",
                        body.len(),
                        items.len(),
                        crate::catalog::MAX_CATALOG_BYTES
                    ));
                    None
                }
                Ok(body) => Some(file_entry(body, crate::catalog::MEDIA_TYPE)),
                Err(why) => {
                    site.notes.push(format!("{wk}: not built: {why}"));
                    None
                }
            },
        };
        if let Some(e) = entry {
            site.entries.insert(wk.to_owned(), e.clone());
            site.built_catalog = Some((unsigned, e));
        }
    }
    if let Some(prev) = prev {
        for n in &site.notes {
            if !prev.notes.contains(n) {
                tracing::warn!("{}", crate::text::escape_controls(n));
            }
        }
    }
}

/// Read at most `max` bytes from the descriptor that was checked.
fn read_bounded(file: &mut std::fs::File, max: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let mut buf = Vec::new();
    file.take(max + 1)
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
    ///
    /// # Errors
    /// [`PublishError`] when the directory, a file or a key cannot be read, or a descriptor cannot
    /// be signed.
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
    /// Walk the directory once and rescan when it changed (only the files
    /// whose version changed are read); true when a new snapshot is in
    /// place. A failed walk keeps the previous snapshot.
    ///
    /// # Errors
    /// [`PublishError`] when the directory, a file or a key cannot be read, or a descriptor cannot
    /// be signed.
    pub fn reload_if_changed(&self) -> Result<bool, PublishError> {
        let prev = self.site();
        let found = walk(&self.cfg, Some(&prev))?;
        if fingerprint(&found) == prev.fingerprint {
            return Ok(false);
        }
        let site = Arc::new(build(&self.cfg, found, Some(&prev)));
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
    /// `Cache-Control` of every served file, built once.
    cache_control: Option<HeaderValue>,
}

impl PublishService {
    /// Serve this publisher.
    pub fn new(publisher: Arc<Publisher>) -> PublishService {
        let cc = format!("public, max-age={}", publisher.cfg.cache_max_age);
        PublishService {
            cache_control: HeaderValue::from_str(&cc).ok(),
            publisher,
        }
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
            // Answered like an absent file, so that nobody can probe which
            // files exist; the reason goes to the log only.
            Some(Entry::Refused(why)) => {
                tracing::info!(
                    path = %crate::text::escape_controls(&path),
                    "not served: {why}"
                );
                plain(StatusCode::NOT_FOUND, "not found")
            }
            Some(Entry::File {
                body,
                content_type,
                etag,
            }) => {
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
                if let Some(v) = &self.cache_control {
                    h.insert(header::CACHE_CONTROL, v.clone());
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

#[cfg(all(test, unix))]
mod symlink_tests {
    use super::*;

    fn ring() -> Arc<KeyRing> {
        let k = crate::SigningKey::generate(crate::Algorithm::EcdsaP256Sha256).unwrap();
        Arc::new(KeyRing::single(k).unwrap())
    }

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("agentsig-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    const JWS: &[u8] = b"eyJhbGciOiJFUzI1NiJ9..c2ln\n";
    const SECRET: &[u8] = b"{\"secret\":\"outside the served directory\"}";

    fn refused(site: &Site, path: &str) -> String {
        match site.get(path) {
            Some(Entry::Refused(why)) => why.clone(),
            other => panic!("{path}: {other:?}"),
        }
    }

    #[test]
    fn symlinks_inside_and_outside_are_never_served() {
        let d = dir("symlinks");
        let outside = dir("symlinks-outside");
        std::fs::write(outside.join("secret.json"), SECRET).unwrap();
        std::fs::write(d.join("inside.json"), SECRET).unwrap();
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::os::unix::fs::symlink(outside.join("secret.json"), d.join("out.json")).unwrap();
        std::os::unix::fs::symlink(d.join("inside.json"), d.join("in.json")).unwrap();
        std::os::unix::fs::symlink("inside.json", d.join("rel.jws")).unwrap();
        std::os::unix::fs::symlink(&outside, d.join("sub/dirlink")).unwrap();
        let site = scan(&PublishConfig::new(&d, ring())).unwrap();
        for p in ["/out.json", "/in.json", "/rel.jws", "/sub/dirlink"] {
            assert!(refused(&site, p).contains("symlink"), "{p}");
        }
        assert!(site.get("/sub/dirlink/secret.json").is_none());
        // The real file is served once, under its own name only.
        assert!(matches!(site.get("/inside.json"), Some(Entry::File { .. })));
        let served = site
            .entries
            .iter()
            .filter(|(_, e)| matches!(e, Entry::File { body, .. } if body.as_ref() == SECRET))
            .count();
        assert_eq!(served, 1);
        let _ = std::fs::remove_dir_all(&d);
        let _ = std::fs::remove_dir_all(&outside);
    }

    #[test]
    fn a_file_swapped_for_a_symlink_between_scans_is_not_served() {
        let d = dir("swap");
        let outside = dir("swap-outside");
        std::fs::write(outside.join("key.pem"), SECRET).unwrap();
        std::fs::write(d.join("a.jws"), JWS).unwrap();
        std::fs::write(d.join("b.json"), b"{}").unwrap();
        let p = Publisher::new(PublishConfig::new(&d, ring())).unwrap();
        assert!(matches!(p.site().get("/a.jws"), Some(Entry::File { .. })));
        // Swap both for symlinks: one leaving the directory, one inside.
        std::fs::remove_file(d.join("a.jws")).unwrap();
        std::os::unix::fs::symlink(outside.join("key.pem"), d.join("a.jws")).unwrap();
        std::fs::remove_file(d.join("b.json")).unwrap();
        std::fs::write(d.join("c.json"), SECRET).unwrap();
        std::os::unix::fs::symlink(d.join("c.json"), d.join("b.json")).unwrap();
        assert!(p.reload_if_changed().unwrap());
        let site = p.site();
        assert!(refused(&site, "/a.jws").contains("symlink"));
        assert!(refused(&site, "/b.json").contains("symlink"));
        assert!(!site.entries.iter().any(|(k, e)| k != "/c.json"
            && matches!(e, Entry::File { body, .. } if body.as_ref() == SECRET)));
        // Unchanged since: the next walk finds nothing new.
        assert!(!p.reload_if_changed().unwrap());
        let _ = std::fs::remove_dir_all(&d);
        let _ = std::fs::remove_dir_all(&outside);
    }

    /// A writer swapping `a.jws` between a regular file and a symlink to
    /// an outside file as fast as it can, while the publisher rescans: the
    /// outside file is never served, whatever the interleaving.
    #[test]
    fn a_file_swapped_for_a_symlink_during_scans_is_never_served() {
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        // Shaped like a JWS, so that only the symlink rule keeps it out.
        const OUTSIDE: &[u8] = b"eyJhbGciOiJFUzI1NiJ9.c2VjcmV0.c2ln";
        let d = dir("race");
        let outside = dir("race-outside");
        std::fs::write(outside.join("key.jws"), OUTSIDE).unwrap();
        std::fs::write(d.join("a.jws"), JWS).unwrap();
        let p = Publisher::new(PublishConfig::new(&d, ring())).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let swaps = Arc::new(AtomicU64::new(0));
        let swapper = {
            let (d, outside, stop) = (d.clone(), outside.clone(), stop.clone());
            let swaps = swaps.clone();
            std::thread::spawn(move || {
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let tmp = d.join(format!(".tmp{n}"));
                    if n.is_multiple_of(2) {
                        std::os::unix::fs::symlink(outside.join("key.jws"), &tmp).unwrap();
                    } else {
                        std::fs::write(&tmp, JWS).unwrap();
                    }
                    std::fs::rename(&tmp, d.join("a.jws")).unwrap();
                    n += 1;
                    swaps.store(n, Ordering::Relaxed);
                }
            })
        };
        // At least 400 rescans, and until the writer has swapped 200 times
        // (progress, not time, bounds the loop).
        let mut rescans = 0;
        while rescans < 400 || swaps.load(Ordering::Relaxed) < 200 {
            rescans += 1;
            let _ = p.reload_if_changed();
            match p.site().get("/a.jws") {
                Some(Entry::File { body, .. }) => {
                    assert_ne!(body.as_ref(), OUTSIDE, "the outside file was served");
                }
                Some(Entry::Refused(why)) => assert!(why.contains("symlink"), "{why}"),
                None => {}
            }
        }
        stop.store(true, Ordering::Relaxed);
        swapper.join().unwrap();
        let _ = std::fs::remove_dir_all(&d);
        let _ = std::fs::remove_dir_all(&outside);
    }

    #[test]
    fn a_fifo_does_not_hang_the_scan() {
        let d = dir("fifo");
        std::fs::write(d.join("a.json"), b"{}").unwrap();
        for name in ["pipe.json", "pipe.jws"] {
            rustix::fs::mknodat(
                rustix::fs::CWD,
                d.join(name).as_path(),
                rustix::fs::FileType::Fifo,
                rustix::fs::Mode::from_raw_mode(0o600),
                0,
            )
            .unwrap();
        }
        let cfg = PublishConfig::new(&d, ring());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(scan(&cfg).map(|s| s.paths().join(" ")));
        });
        // A bound against a hang (the scan opens nothing that blocks), not
        // a timing assertion.
        let paths = rx
            .recv_timeout(std::time::Duration::from_secs(120))
            .expect("the scan hung on a FIFO")
            .unwrap();
        assert!(paths.contains("/a.json"), "{paths}");
        assert!(!paths.contains("pipe"), "{paths}");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn jws_files_must_be_a_jws() {
        let d = dir("jws-shape");
        std::fs::write(d.join("ok.jws"), JWS).unwrap();
        std::fs::write(
            d.join("json.jws"),
            br#"{"protected":"eyJhbGciOiJFUzI1NiJ9","signature":"c2ln"}"#,
        )
        .unwrap();
        std::fs::write(
            d.join("pem.jws"),
            b"-----BEGIN PRIVATE KEY-----\nMIGH\n-----END PRIVATE KEY-----\n",
        )
        .unwrap();
        std::fs::write(d.join("two.jws"), b"a.b").unwrap();
        std::fs::write(d.join("noalg.jws"), b"e30..c2ln").unwrap();
        let site = scan(&PublishConfig::new(&d, ring())).unwrap();
        match site.get("/ok.jws") {
            Some(Entry::File { content_type, .. }) => assert_eq!(content_type, "application/jose"),
            other => panic!("{other:?}"),
        }
        match site.get("/json.jws") {
            Some(Entry::File { content_type, .. }) => {
                assert_eq!(content_type, "application/jose+json")
            }
            other => panic!("{other:?}"),
        }
        for p in ["/pem.jws", "/two.jws", "/noalg.jws"] {
            assert!(refused(&site, p).contains("not a JWS"), "{p}");
        }
        let _ = std::fs::remove_dir_all(&d);
    }
}

#[cfg(test)]
mod rewrite_tests {
    use super::*;

    #[test]
    fn a_file_rewritten_in_place_keeps_its_last_good_version() {
        let d = std::env::temp_dir().join(format!("agentsig-rewrite-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let k = crate::SigningKey::generate(crate::Algorithm::EcdsaP256Sha256).unwrap();
        let ring = Arc::new(KeyRing::single(k).unwrap());
        let v1 = br#"{"name":"a","version":"1.0.0"}"#;
        let v2 = br#"{"name":"a","version":"2.0.0"}"#;
        std::fs::write(d.join("a.json"), v1).unwrap();
        std::fs::write(d.join("b.jws"), b"eyJhbGciOiJFUzI1NiJ9..c2ln").unwrap();
        let p = Publisher::new(PublishConfig::new(&d, ring)).unwrap();
        let body = |p: &Publisher, path: &str| match p.site().get(path) {
            Some(Entry::File { body, .. }) => body.clone(),
            other => panic!("{path}: {other:?}"),
        };
        // Half written: truncated, then a prefix of the new content.
        std::fs::write(d.join("a.json"), b"").unwrap();
        std::fs::write(d.join("b.jws"), b"eyJhbGciOiJFUzI1").unwrap();
        assert!(p.reload_if_changed().unwrap());
        assert_eq!(body(&p, "/a.json").as_ref(), v1);
        std::fs::write(d.join("a.json"), &v2[..12]).unwrap();
        p.reload_if_changed().unwrap();
        assert_eq!(body(&p, "/a.json").as_ref(), v1);
        assert_eq!(body(&p, "/b.jws").as_ref(), b"eyJhbGciOiJFUzI1NiJ9..c2ln");
        // Complete: the new version is served.
        std::fs::write(d.join("a.json"), v2).unwrap();
        assert!(p.reload_if_changed().unwrap());
        assert_eq!(body(&p, "/a.json").as_ref(), v2);
        // A file that never parsed is not served.
        std::fs::write(d.join("c.json"), b"{not json").unwrap();
        p.reload_if_changed().unwrap();
        assert!(matches!(p.site().get("/c.json"), Some(Entry::Refused(_))));
        let _ = std::fs::remove_dir_all(&d);
    }
}

#[cfg(test)]
mod card_tests {
    use super::*;
    use crate::trust::{KeySource, StaticKeys};

    #[test]
    fn sign_cards_embeds_one_signature_per_key_once_per_version() {
        let d = std::env::temp_dir().join(format!("agentsig-cards-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::copy("examples/a2a-agent-card.json", d.join("card.json")).unwrap();
        let gen = || crate::SigningKey::generate(crate::Algorithm::EcdsaP256Sha256).unwrap();
        let ring = Arc::new(
            KeyRing::new(vec![
                gen(),
                crate::SigningKey::generate(crate::Algorithm::Ed25519).unwrap(),
            ])
            .unwrap(),
        );
        let mut cfg = PublishConfig::new(&d, ring.clone());
        cfg.sign_cards = true;
        let p = Publisher::new(cfg).unwrap();
        let served = |path: &str| match p.site().get(path) {
            Some(Entry::File {
                body,
                etag,
                content_type,
            }) => (body.clone(), etag.clone(), content_type.clone()),
            other => panic!("{path}: {other:?}"),
        };
        let (body, etag, ct) = served("/card.json");
        assert_eq!(ct, Format::A2a.media_type());
        // The same signed bytes at the well-known path.
        assert_eq!(served("/.well-known/agent-card.json").0, body);
        let card: Value = serde_json::from_slice(&body).unwrap();
        let sigs = card["signatures"].as_array().unwrap();
        assert_eq!(sigs.len(), 2);
        // Each key alone verifies its own signature, named by its kid.
        for (i, k) in ring.all().iter().enumerate() {
            let keys = StaticKeys::new().with(k.key.verifying_key().clone(), KeySource::Pinned);
            let v = crate::verifier::Verifier::builder(keys).build();
            let rep = v.verify_agent_card_value(&card).unwrap();
            assert!(rep.verified());
            let protected = sigs[i]["protected"].as_str().unwrap();
            let header: Value =
                serde_json::from_slice(&crate::b64::decode(protected).unwrap()).unwrap();
            assert_eq!(header["kid"], k.keyid.as_str());
        }
        // Unchanged file: not signed again (same bytes, same ETag).
        assert!(!p.reload_if_changed().unwrap());
        std::fs::write(d.join("other.json"), b"{}").unwrap();
        assert!(p.reload_if_changed().unwrap());
        assert_eq!(served("/card.json").1, etag);
        let _ = std::fs::remove_dir_all(&d);
    }
}
