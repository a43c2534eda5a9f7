//! Replay detection: one store trait for JWT `jti` (RFC 7519 section 4.1.7)
//! and RFC 9421 `nonce` (section 7.2.2), with an in-memory, a file and (feature
//! `redis`) a Redis store, opened by URL with [`open_store`].
//!
//! # Security contract
//! * A store fails closed: when it cannot record (full, unreadable, locked
//!   out), [`ReplayStore::check_and_record`] returns an error and the
//!   verifier refuses the token or message; it never accepts unrecorded.
//! * Verifiers record only after everything else about a token or message
//!   passed, so a forged or otherwise refused token never burns an id.
//! * [`ReplayStore::check_and_record_all`] records several ids all or none,
//!   so an audit that fails on its third token has recorded nothing.
//! * Entries expire at the time the caller gives (the token's own `exp`
//!   plus skew), never earlier, but are kept at most
//!   [`MAX_REPLAY_TTL_SECS`] (one year): an entry without expiry (an RFC
//!   9421 `nonce` on a signature with neither `expires` nor a maximum age)
//!   is not kept forever. Bound a signature's or token's lifetime (e.g.
//!   `HttpPolicy::max_age`) below that.
//! * Every store agrees on what is one entry: `(scope, id)` pairs are
//!   compared as pairs (the Redis key hashes the length-prefixed parts, so
//!   a NUL inside a value cannot make two pairs collide), and every scope
//!   the crate records starts with a tag naming its kind ([`JWT_SCOPE`] +
//!   `iss`, [`HTTPSIG_SCOPE`] + `keyid`), so a JWT issuer can never collide
//!   with an RFC 9421 key id.
//!
//! ```
//! use agentsig::replay::{MemoryReplayStore, ReplayStore, Sighting};
//! let store = MemoryReplayStore::new();
//! assert_eq!(store.check_and_record("https://as.example", "jti-1", 2000, 1000).unwrap(), Sighting::First);
//! assert_eq!(store.check_and_record("https://as.example", "jti-1", 2000, 1500).unwrap(), Sighting::Replay);
//! ```

use std::collections::HashMap;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

pub mod blob;
#[cfg(feature = "redis")]
// Documented in its own module; its `# Errors` sections come with the move
// to the `redis` crate (a separate change).
#[allow(clippy::missing_errors_doc)]
pub mod redis;
/// The shared state of a verification crawl, in Redis Streams.
#[cfg(feature = "redis")]
pub mod stream;
#[cfg(feature = "redis")]
pub use self::redis::{AckWrites, RedisConfig, RedisReplayStore, RedisTopology};

/// Whether an id was seen before.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub enum Sighting {
    /// First sighting: recorded now.
    First,
    /// Recorded before and not expired: a replay.
    Replay,
}

/// Why a store could not answer (the verifier then refuses: fail closed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// Every slot holds an unexpired entry.
    #[error("{capacity} unexpired entries fill the replay store; refusing (fail closed)")]
    Full {
        /// The store's capacity.
        capacity: usize,
    },
    /// The store's file could not be read or written.
    #[error("replay store {path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// What failed.
        message: String,
    },
    /// The store's file is not a replay store.
    #[error("replay store {path} line {line}: {message}")]
    Corrupt {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A remote store could not be reached.
    #[error("replay store unavailable: {0}")]
    Unavailable(String),
    /// The id or scope is too long to record.
    #[error("replay id or scope longer than {MAX_ID_LEN} bytes")]
    IdTooLong,
    /// The token or signature stays acceptable for longer than an entry is
    /// kept ([`MAX_REPLAY_TTL_SECS`]): once its entry expired it could be
    /// replayed, so it is refused (fail closed).
    #[error("acceptable for longer than the {MAX_REPLAY_TTL_SECS} s replay window: give it an expiry (exp, expires or a maximum age) within it")]
    LifetimeTooLong,
}

/// Longest scope or id recorded.
pub const MAX_ID_LEN: usize = 1024;

/// Default capacity of a store (entries).
pub const DEFAULT_CAPACITY: usize = 100_000;

/// The longest an entry is kept, in seconds (366 days): its expiry is
/// `min(until, now + MAX_REPLAY_TTL_SECS)` in every store.
pub const MAX_REPLAY_TTL_SECS: i64 = 366 * 24 * 3600;

/// The scope tag of a JWT `(iss, jti)` entry: the scope is `"jwt:" + iss`.
pub const JWT_SCOPE: &str = "jwt:";

/// The scope tag of an RFC 9421 `(keyid, nonce)` entry: the scope is
/// `"httpsig:" + keyid`.
pub const HTTPSIG_SCOPE: &str = "httpsig:";

/// Refuse an entry acceptable until `until` when no store keeps it that
/// long: after its entry expired, the same token or signature would pass
/// the replay check again.
///
/// # Errors
/// [`ReplayError::LifetimeTooLong`] when `until` is more than
/// [`MAX_REPLAY_TTL_SECS`] after `now`.
pub fn within_replay_window(until: i64, now: i64) -> Result<(), ReplayError> {
    if until > now.saturating_add(MAX_REPLAY_TTL_SECS) {
        return Err(ReplayError::LifetimeTooLong);
    }
    Ok(())
}

/// The expiry actually stored for `until` (see [`MAX_REPLAY_TTL_SECS`]).
pub(crate) fn capped_until(until: i64, now: i64) -> i64 {
    until.min(now.saturating_add(MAX_REPLAY_TTL_SECS))
}

/// Remembers `(scope, id)` pairs until they expire. `scope` is the issuer
/// of a JWT or the `keyid` of an RFC 9421 signature; `id` the `jti` or the
/// `nonce`.
pub trait ReplayStore: Send + Sync + std::fmt::Debug {
    /// Record the pair until `until` (Unix seconds), atomically with the
    /// check: [`Sighting::Replay`] when it is recorded and not expired at
    /// `now`.
    ///
    /// # Errors
    /// [`ReplayError`] when the store cannot be read or written, or is full:
    /// a verifier then refuses (a replay check that could not be made never
    /// passes).
    fn check_and_record(
        &self,
        scope: &str,
        id: &str,
        until: i64,
        now: i64,
    ) -> Result<Sighting, ReplayError>;

    /// Record every entry, or none: [`Sighting::Replay`] (and nothing
    /// recorded) when any is already recorded or appears twice.
    /// The default records one at a time and is not atomic across entries;
    /// the stores of this crate override it.
    ///
    /// # Errors
    /// [`ReplayError`] when the store cannot be read or written, its file is corrupt or too large,
    /// or it is full.
    fn check_and_record_all(
        &self,
        entries: &[(&str, &str, i64)],
        now: i64,
    ) -> Result<Sighting, ReplayError> {
        for (scope, id, until) in entries {
            if self.check_and_record(scope, id, *until, now)? == Sighting::Replay {
                return Ok(Sighting::Replay);
            }
        }
        Ok(Sighting::First)
    }
}

fn check_len(scope: &str, id: &str) -> Result<(), ReplayError> {
    if scope.len() > MAX_ID_LEN || id.len() > MAX_ID_LEN {
        return Err(ReplayError::IdTooLong);
    }
    Ok(())
}

/// The table both stores keep.
#[derive(Clone, Debug, Default)]
struct Table {
    seen: HashMap<(String, String), i64>,
}

impl Table {
    fn record_all(
        &mut self,
        entries: &[(&str, &str, i64)],
        now: i64,
        capacity: usize,
    ) -> Result<Sighting, ReplayError> {
        for (i, (scope, id, _)) in entries.iter().enumerate() {
            check_len(scope, id)?;
            let dup_in_batch = entries[..i].iter().any(|(s, d, _)| s == scope && d == id);
            let recorded = self
                .seen
                .get(&((*scope).to_owned(), (*id).to_owned()))
                .is_some_and(|u| *u > now);
            if dup_in_batch || recorded {
                return Ok(Sighting::Replay);
            }
        }
        if self.seen.len() + entries.len() > capacity {
            self.seen.retain(|_, u| *u > now);
            if self.seen.len() + entries.len() > capacity {
                return Err(ReplayError::Full { capacity });
            }
        }
        for (scope, id, until) in entries {
            self.seen.insert(
                ((*scope).to_owned(), (*id).to_owned()),
                capped_until(*until, now),
            );
        }
        Ok(Sighting::First)
    }
}

/// An in-memory store for one process, bounded: expired entries are pruned
/// when full; if still full, recording fails closed.
#[derive(Debug)]
pub struct MemoryReplayStore {
    table: Mutex<Table>,
    capacity: usize,
}

impl Default for MemoryReplayStore {
    fn default() -> Self {
        MemoryReplayStore::with_capacity(DEFAULT_CAPACITY)
    }
}

impl MemoryReplayStore {
    /// A store of [`DEFAULT_CAPACITY`] entries.
    pub fn new() -> MemoryReplayStore {
        MemoryReplayStore::default()
    }
    /// A store of `capacity` entries.
    pub fn with_capacity(capacity: usize) -> MemoryReplayStore {
        MemoryReplayStore {
            table: Mutex::new(Table::default()),
            capacity,
        }
    }
    /// Entries held (expired ones included until pruned).
    pub fn len(&self) -> usize {
        self.table.lock().map_or(0, |t| t.seen.len())
    }
    /// Whether no entry is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl ReplayStore for MemoryReplayStore {
    fn check_and_record(
        &self,
        scope: &str,
        id: &str,
        until: i64,
        now: i64,
    ) -> Result<Sighting, ReplayError> {
        self.check_and_record_all(&[(scope, id, until)], now)
    }

    fn check_and_record_all(
        &self,
        entries: &[(&str, &str, i64)],
        now: i64,
    ) -> Result<Sighting, ReplayError> {
        // A poisoned lock means a panic elsewhere mid-update: fail closed.
        let mut t = self
            .table
            .lock()
            .map_err(|_| ReplayError::Unavailable("store lock poisoned".into()))?;
        t.record_all(entries, now, self.capacity)
    }
}

/// Largest replay file read.
pub const MAX_REPLAY_FILE: u64 = 32 * 1024 * 1024;

/// A file-backed store, safe for several processes on one machine: each
/// check holds an exclusive lock on `PATH.lock` around read-check-write, and
/// the file is replaced atomically (a temporary file with a random name,
/// opened exclusively with mode 0600, then renamed over it). The file holds
/// one JSON object per line, `{"scope":…,"id":…,"until":…}` (a line of the
/// earlier form `{"iss":…,"jti":…,"until":…}` is read as a JWT entry, or an
/// RFC 9421 one when `iss` starts with [`HTTPSIG_SCOPE`]); expired entries
/// are dropped on every write; the store is bounded by `capacity` and by
/// [`MAX_REPLAY_FILE`]. A corrupt file is an error, never an empty store.
#[derive(Debug)]
pub struct FileReplayStore {
    path: PathBuf,
    capacity: usize,
}

impl FileReplayStore {
    /// A store at `path` (created on the first record). Checks now that the
    /// file, if present, is readable and well formed.
    ///
    /// # Errors
    /// [`ReplayError`] when the store cannot be read or written, its file is corrupt or too large,
    /// or it is full.
    pub fn open(path: impl Into<PathBuf>, now: i64) -> Result<FileReplayStore, ReplayError> {
        let s = FileReplayStore {
            path: path.into(),
            capacity: DEFAULT_CAPACITY,
        };
        let _lock = s.lock()?;
        s.read(now)?;
        Ok(s)
    }

    /// Set the capacity (entries).
    pub fn with_capacity(mut self, capacity: usize) -> FileReplayStore {
        self.capacity = capacity;
        self
    }

    fn io(&self, e: impl std::fmt::Display) -> ReplayError {
        ReplayError::Io {
            path: self.path.display().to_string(),
            message: e.to_string(),
        }
    }

    fn lock(&self) -> Result<std::fs::File, ReplayError> {
        crate::lockfile::lock(&self.path).map_err(|e| self.io(e))
    }

    fn read(&self, now: i64) -> Result<Table, ReplayError> {
        let mut t = Table::default();
        let Some(buf) =
            crate::lockfile::read_bounded(&self.path, MAX_REPLAY_FILE).map_err(|e| self.io(e))?
        else {
            return Ok(t);
        };
        for (n, line) in buf.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let corrupt = |m: &str| ReplayError::Corrupt {
                path: self.path.display().to_string(),
                line: n + 1,
                message: m.to_owned(),
            };
            let v =
                crate::json::parse_strict(line.as_bytes()).map_err(|e| corrupt(&e.to_string()))?;
            let s = |k: &str| v.get(k).and_then(serde_json::Value::as_str);
            let (scope, id) = match (s("scope"), s("id"), s("iss"), s("jti")) {
                (Some(scope), Some(id), None, None) => (scope.to_owned(), id),
                // The earlier untagged form: JWT issuers, and RFC 9421
                // entries already written as "httpsig:" + keyid.
                (None, None, Some(iss), Some(jti)) if iss.starts_with(HTTPSIG_SCOPE) => {
                    (iss.to_owned(), jti)
                }
                (None, None, Some(iss), Some(jti)) => (format!("{JWT_SCOPE}{iss}"), jti),
                _ => return Err(corrupt("not a replay entry")),
            };
            let Some(u) = v.get("until").and_then(serde_json::Value::as_i64) else {
                return Err(corrupt("not a replay entry"));
            };
            if u > now {
                t.seen.insert((scope, id.to_owned()), capped_until(u, now));
            }
        }
        Ok(t)
    }

    fn write(&self, t: &Table) -> Result<(), ReplayError> {
        let mut entries: Vec<_> = t.seen.iter().collect();
        entries.sort();
        let mut out = String::new();
        for ((i, j), u) in entries {
            out.push_str(&serde_json::json!({"scope": i, "id": j, "until": u}).to_string());
            out.push('\n');
        }
        crate::lockfile::replace(&self.path, out.as_bytes()).map_err(|e| self.io(e))?;
        Ok(())
    }
}

impl ReplayStore for FileReplayStore {
    fn check_and_record(
        &self,
        scope: &str,
        id: &str,
        until: i64,
        now: i64,
    ) -> Result<Sighting, ReplayError> {
        self.check_and_record_all(&[(scope, id, until)], now)
    }

    fn check_and_record_all(
        &self,
        entries: &[(&str, &str, i64)],
        now: i64,
    ) -> Result<Sighting, ReplayError> {
        let _lock = self.lock()?;
        let mut t = self.read(now)?;
        let r = t.record_all(entries, now, self.capacity)?;
        if r == Sighting::First {
            self.write(&t)?;
        }
        Ok(r)
        // `_lock` drops here: the lock is released after the rename.
    }
}

/// Whether `url` names a Redis store: `redis://`, `rediss://`,
/// `redis+cluster://`, `rediss+cluster://`, `redis+sentinel://` or
/// `rediss+sentinel://` (the replay and pin stores open the same URLs).
pub fn is_redis_url(url: &str) -> bool {
    [
        "redis://",
        "rediss://",
        "redis+cluster://",
        "rediss+cluster://",
        "redis+sentinel://",
        "rediss+sentinel://",
    ]
    .iter()
    .any(|s| url.starts_with(s))
}

/// Open a store by URL, as the CLI's `--replay-store` does:
///
/// * `memory:` - a [`MemoryReplayStore`] (one process);
/// * `file:PATH`, or a bare `PATH` - a [`FileReplayStore`] (one machine);
/// * `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]`, or `rediss://…` for
///   TLS - a `RedisReplayStore` shared by a fleet (feature `redis`; see the
///   `replay::redis` module); `redis+cluster://HOST:PORT[,HOST:PORT...]`
///   for a Redis Cluster, `redis+sentinel://HOST:PORT[,HOST:PORT...]/MASTER-NAME`
///   for a primary found through Sentinel (each also `rediss+…`), and
///   `?wait=N&wait-timeout=250ms` on any of them for acknowledged writes.
///
/// A Redis store connects lazily: a server that cannot be reached shows at
/// the first check as [`ReplayError::Unavailable`] and the token is refused.
/// `now` is used to validate an existing file store.
///
/// # Errors
/// [`ReplayError`] when the store cannot be read or written, its file is corrupt or too large, or
/// it is full.
pub fn open_store(url: &str, now: i64) -> Result<Arc<dyn ReplayStore>, ReplayError> {
    if url == "memory:" {
        return Ok(Arc::new(MemoryReplayStore::new()));
    }
    if is_redis_url(url) {
        #[cfg(feature = "redis")]
        return Ok(Arc::new(RedisReplayStore::open(url)?));
        #[cfg(not(feature = "redis"))]
        return Err(ReplayError::Unavailable(
            "redis:// store: agentsig was built without the `redis` feature".into(),
        ));
    }
    let path = url.strip_prefix("file:").unwrap_or(url);
    if path.is_empty() {
        return Err(ReplayError::Io {
            path: String::new(),
            message: "empty replay store path".into(),
        });
    }
    Ok(Arc::new(FileReplayStore::open(path, now)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What stays acceptable beyond the window cannot be replay-protected.
    #[test]
    fn lifetimes_beyond_the_window_are_refused() {
        assert!(within_replay_window(1000 + MAX_REPLAY_TTL_SECS, 1000).is_ok());
        assert!(matches!(
            within_replay_window(1001 + MAX_REPLAY_TTL_SECS, 1000),
            Err(ReplayError::LifetimeTooLong)
        ));
        assert!(matches!(
            within_replay_window(i64::MAX, i64::MAX - 1),
            Ok(())
        ));
        assert!(within_replay_window(i64::MAX, 0).is_err());
    }

    #[test]
    fn batch_is_all_or_nothing() {
        let s = MemoryReplayStore::new();
        assert_eq!(
            s.check_and_record("i", "b", 100, 0).unwrap(),
            Sighting::First
        );
        let r = s
            .check_and_record_all(&[("i", "a", 100), ("i", "b", 100)], 0)
            .unwrap();
        assert_eq!(r, Sighting::Replay);
        // "a" was not recorded by the refused batch.
        assert_eq!(
            s.check_and_record("i", "a", 100, 0).unwrap(),
            Sighting::First
        );
        // A batch naming the same id twice is a replay of itself.
        let r = s
            .check_and_record_all(&[("i", "c", 100), ("i", "c", 100)], 0)
            .unwrap();
        assert_eq!(r, Sighting::Replay);
    }

    #[test]
    fn open_store_by_url() {
        let m = open_store("memory:", 0).unwrap();
        assert_eq!(m.check_and_record("i", "a", 10, 0), Ok(Sighting::First));
        assert_eq!(m.check_and_record("i", "a", 10, 0), Ok(Sighting::Replay));
        let d = std::env::temp_dir().join(format!("agentsig-open-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join("seen.jsonl");
        let f = open_store(&format!("file:{}", p.display()), 0).unwrap();
        assert_eq!(f.check_and_record("i", "a", 10, 0), Ok(Sighting::First));
        // A bare path is the same file store.
        let g = open_store(p.to_str().unwrap(), 0).unwrap();
        assert_eq!(g.check_and_record("i", "a", 10, 0), Ok(Sighting::Replay));
        assert!(open_store("file:", 0).is_err());
        let r = open_store("redis://127.0.0.1:1/0", 0).map(|_| ());
        if cfg!(feature = "redis") {
            assert_eq!(r, Ok(()));
        } else {
            assert!(matches!(r, Err(ReplayError::Unavailable(_))), "{r:?}");
        }
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn expiry_and_capacity() {
        let s = MemoryReplayStore::with_capacity(1);
        assert_eq!(
            s.check_and_record("i", "a", 10, 0).unwrap(),
            Sighting::First
        );
        assert_eq!(
            s.check_and_record("i", "b", 10, 5),
            Err(ReplayError::Full { capacity: 1 })
        );
        // After "a" expires, its slot is free and "a" is new again.
        assert_eq!(
            s.check_and_record("i", "b", 20, 10).unwrap(),
            Sighting::First
        );
    }

    #[test]
    fn expiry_is_capped_in_memory_and_file_stores() {
        let d = std::env::temp_dir().join(format!("agentsig-cap-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join("seen.jsonl");
        let stores: Vec<Box<dyn ReplayStore>> = vec![
            Box::new(MemoryReplayStore::new()),
            Box::new(FileReplayStore::open(&p, 0).unwrap()),
        ];
        for s in &stores {
            assert_eq!(
                s.check_and_record("httpsig:k", "n", i64::MAX, 0),
                Ok(Sighting::First)
            );
            assert_eq!(
                s.check_and_record("httpsig:k", "n", i64::MAX, MAX_REPLAY_TTL_SECS - 1),
                Ok(Sighting::Replay)
            );
            // Kept MAX_REPLAY_TTL_SECS, not forever.
            assert_eq!(
                s.check_and_record("httpsig:k", "n", 10, MAX_REPLAY_TTL_SECS),
                Ok(Sighting::First)
            );
        }
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains("\"scope\":\"httpsig:k\""), "{text}");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn earlier_file_lines_are_read_with_their_scope_tag() {
        let d = std::env::temp_dir().join(format!("agentsig-legacy-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join("seen.jsonl");
        std::fs::write(
            &p,
            "{\"iss\":\"https://as.example\",\"jti\":\"j1\",\"until\":100}\n\
             {\"iss\":\"httpsig:k\",\"jti\":\"n1\",\"until\":100}\n",
        )
        .unwrap();
        let s = FileReplayStore::open(&p, 0).unwrap();
        assert_eq!(
            s.check_and_record("jwt:https://as.example", "j1", 100, 0),
            Ok(Sighting::Replay)
        );
        assert_eq!(
            s.check_and_record("httpsig:k", "n1", 100, 0),
            Ok(Sighting::Replay)
        );
        assert_eq!(
            s.check_and_record("https://as.example", "j1", 100, 0),
            Ok(Sighting::First)
        );
        std::fs::write(&p, "{\"scope\":\"a\",\"jti\":\"j\",\"until\":100}\n").unwrap();
        assert!(matches!(
            FileReplayStore::open(&p, 0),
            Err(ReplayError::Corrupt { .. })
        ));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn jwt_entries_are_tagged_apart_from_httpsig_nonces() {
        let s = MemoryReplayStore::new();
        // iss "httpsig:k" with jti "n" used to be the same entry as the
        // RFC 9421 nonce "n" of keyid "k".
        assert!(crate::jwt::check_replay(&s, &[("httpsig:k", "n", 100)], 0).is_ok());
        assert_eq!(
            s.check_and_record(&format!("{HTTPSIG_SCOPE}k"), "n", 100, 0),
            Ok(Sighting::First)
        );
        assert!(crate::jwt::check_replay(&s, &[("httpsig:k", "n", 100)], 0).is_err());
    }
}
