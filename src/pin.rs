//! Key continuity for resolvers: what SSH `known_hosts` does for
//! hosts, per agent identity. The first verification of an identity pins
//! the RFC 7638 thumbprints of its key; a later verification with another
//! key is a key change ([`PinOutcome::Changed`]), accepted only when
//!
//! * the operator says so ([`PinStore::replace`], `agentsig pin rotate
//!   IDENTITY --to THUMBPRINT`), or
//! * the new key is announced by a signature of a pinned key
//!   ([`crate::announce`]).
//!
//! # Announcement
//! A detached compact JWS (RFC 7515 Appendix F) with `typ`
//! [`ANNOUNCEMENT_TYP`] over the RFC 8785 JCS form of
//! `{"agent": IDENTITY, "new_keys": [THUMBPRINT, ...], "iat": SECONDS}`,
//! signed by a key whose thumbprint is pinned for `agent`. The verifier
//! takes candidate public keys (e.g. the agent's current JWKS, which still
//! carries the old key during a rotation) and trusts only those whose
//! thumbprint is pinned. `iat` must be within [`ANNOUNCEMENT_MAX_AGE`] of
//! now (and not in the future beyond the skew), which bounds the replay of
//! an old announcement after an operator removed a key. Accepted keys are
//! added to the pins; the signing key stays pinned until an operator
//! `rotate` drops it.
//!
//! # Backends
//! The same as the replay stores, opened by URL with [`open_pin_store`]:
//! `memory:`, `file:PATH` (or a bare path; lock file plus atomic rename, as
//! [`crate::replay::FileReplayStore`]) and `redis://…` or `rediss://…` (TLS;
//! also `redis+cluster://…` and `redis+sentinel://…`, with `?wait=N` for
//! acknowledged writes, as the replay store; feature `redis`:
//! one hash `agentsig:pins`, identity → space-separated thumbprints, every
//! read-modify-write a Lua script, so concurrent replicas agree on the first
//! key, and the identity cap [`MAX_IDENTITIES`] holds there too; one key, so
//! on a Redis Cluster every script stays on its one slot). A store
//! that cannot answer is an error: the caller refuses.

use crate::replay::ReplayError;
use serde_json::Value;
use std::collections::BTreeMap;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Longest identity pinned.
pub const MAX_IDENTITY_LEN: usize = 1024;
/// Most thumbprints pinned per identity.
pub const MAX_PINS_PER_IDENTITY: usize = 16;
/// Most identities a store holds (memory, file and Redis alike): pinning
/// one more is [`PinError::TooMany`].
pub const MAX_IDENTITIES: usize = 100_000;
/// Largest pin file read.
pub const MAX_PIN_FILE: u64 = 32 * 1024 * 1024;
/// The `typ` of a key announcement.
pub const ANNOUNCEMENT_TYP: &str = "agentsig-key-announcement+jws";
/// Oldest announcement accepted, in seconds (7 days).
pub const ANNOUNCEMENT_MAX_AGE: i64 = 7 * 24 * 3600;

/// Why a pin operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PinError {
    /// The store could not be read, written or reached (fail closed).
    #[error("pin store: {0}")]
    Store(String),
    /// The identity is empty or longer than [`MAX_IDENTITY_LEN`].
    #[error("identity is empty or longer than {MAX_IDENTITY_LEN} bytes")]
    BadIdentity,
    /// Not a base64url thumbprint of 1 to 128 characters.
    #[error("not a key thumbprint: {0}")]
    BadThumbprint(String),
    /// More than [`MAX_PINS_PER_IDENTITY`] pins, or [`MAX_IDENTITIES`].
    #[error(
        "too many pins (at most {MAX_PINS_PER_IDENTITY} per identity, {MAX_IDENTITIES} identities)"
    )]
    TooMany,
    /// The pin file is not a pin store.
    #[error("pin store {path} line {line}: {message}")]
    Corrupt {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A key announcement was refused.
    #[error("key announcement refused: {0}")]
    Announcement(String),
}

impl PinError {
    /// A stable code for reports.
    pub fn code(&self) -> &'static str {
        match self {
            PinError::Store(_) | PinError::Corrupt { .. } => "pin.store",
            PinError::BadIdentity | PinError::BadThumbprint(_) | PinError::TooMany => "pin.invalid",
            PinError::Announcement(_) => "pin.announcement",
        }
    }
}

impl From<ReplayError> for PinError {
    fn from(e: ReplayError) -> PinError {
        match e {
            ReplayError::Unavailable(m) => PinError::Store(m),
            e => PinError::Store(e.to_string()),
        }
    }
}

/// The result of [`PinStore::check_and_pin`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub enum PinOutcome {
    /// No pin existed: the thumbprint is now pinned.
    FirstSeen,
    /// The thumbprint is pinned.
    Match,
    /// Another key is pinned: a key change (not recorded).
    Changed {
        /// The pinned thumbprints.
        pinned: Vec<String>,
    },
}

/// Pinned thumbprints per identity. Every method is atomic with respect to
/// other processes using the same backend.
pub trait PinStore: Send + Sync + std::fmt::Debug {
    /// Pin `thumbprint` if `identity` has no pin yet; else compare.
    ///
    /// # Errors
    /// [`PinError`] when the identity or a thumbprint is malformed, a store
    /// limit is reached, or the store cannot be read or written.
    fn check_and_pin(&self, identity: &str, thumbprint: &str) -> Result<PinOutcome, PinError>;
    /// Add thumbprints to the pins of `identity`; returns the new pin set.
    ///
    /// # Errors
    /// [`PinError`] when the identity or a thumbprint is malformed, a store
    /// limit is reached, or the store cannot be read or written.
    fn add(&self, identity: &str, thumbprints: &[&str]) -> Result<Vec<String>, PinError>;
    /// Replace the pins of `identity` (an operator-accepted rotation); an
    /// empty list forgets the identity.
    ///
    /// # Errors
    /// [`PinError`] when the identity or a thumbprint is malformed, a store
    /// limit is reached, or the store cannot be read or written.
    fn replace(&self, identity: &str, thumbprints: &[&str]) -> Result<(), PinError>;
    /// The pins of `identity` (empty: none).
    ///
    /// # Errors
    /// [`PinError`] when the identity or a thumbprint is malformed, a store limit is reached, the
    /// store cannot be read or written, or an announcement is refused.
    fn get(&self, identity: &str) -> Result<Vec<String>, PinError>;
    /// Every identity and its pins, sorted by identity.
    ///
    /// # Errors
    /// [`PinError`] when the identity or a thumbprint is malformed, a store limit is reached, the
    /// store cannot be read or written, or an announcement is refused.
    fn list(&self) -> Result<Vec<(String, Vec<String>)>, PinError>;
}

pub(crate) fn check_identity(identity: &str) -> Result<(), PinError> {
    if identity.is_empty() || identity.len() > MAX_IDENTITY_LEN {
        return Err(PinError::BadIdentity);
    }
    Ok(())
}

/// Whether `t` looks like a JWK thumbprint (base64url, 1 to 128 chars).
pub fn is_thumbprint(t: &str) -> bool {
    (1..=128).contains(&t.len()) && crate::b64::is_url_alphabet(t)
}

pub(crate) fn check_thumbprints(ts: &[&str]) -> Result<(), PinError> {
    if ts.len() > MAX_PINS_PER_IDENTITY {
        return Err(PinError::TooMany);
    }
    for t in ts {
        if !is_thumbprint(t) {
            return Err(PinError::BadThumbprint(crate::text::quoted(t)));
        }
    }
    Ok(())
}

/// The table the memory and file stores keep.
#[derive(Clone, Debug, Default)]
struct PinTable(BTreeMap<String, Vec<String>>);

impl PinTable {
    fn check_and_pin(&mut self, identity: &str, t: &str) -> Result<(PinOutcome, bool), PinError> {
        match self.0.get(identity) {
            Some(p) if p.iter().any(|x| x == t) => Ok((PinOutcome::Match, false)),
            Some(p) => Ok((PinOutcome::Changed { pinned: p.clone() }, false)),
            None => {
                if self.0.len() >= MAX_IDENTITIES {
                    return Err(PinError::TooMany);
                }
                self.0.insert(identity.to_owned(), vec![t.to_owned()]);
                Ok((PinOutcome::FirstSeen, true))
            }
        }
    }

    fn add(&mut self, identity: &str, ts: &[&str]) -> Result<Vec<String>, PinError> {
        if !self.0.contains_key(identity) && self.0.len() >= MAX_IDENTITIES {
            return Err(PinError::TooMany);
        }
        let mut p = self.0.get(identity).cloned().unwrap_or_default();
        for t in ts {
            if !p.iter().any(|x| x == t) {
                p.push((*t).to_owned());
            }
        }
        if p.len() > MAX_PINS_PER_IDENTITY {
            return Err(PinError::TooMany);
        }
        self.0.insert(identity.to_owned(), p.clone());
        Ok(p)
    }

    fn replace(&mut self, identity: &str, ts: &[&str]) -> Result<(), PinError> {
        if ts.is_empty() {
            self.0.remove(identity);
            return Ok(());
        }
        if !self.0.contains_key(identity) && self.0.len() >= MAX_IDENTITIES {
            return Err(PinError::TooMany);
        }
        let mut p: Vec<String> = Vec::new();
        for t in ts {
            if !p.iter().any(|x| x == t) {
                p.push((*t).to_owned());
            }
        }
        self.0.insert(identity.to_owned(), p);
        Ok(())
    }
}

/// Pins in memory, for one process.
#[derive(Debug, Default)]
pub struct MemoryPinStore {
    table: Mutex<PinTable>,
}

impl MemoryPinStore {
    /// An empty store.
    pub fn new() -> MemoryPinStore {
        MemoryPinStore::default()
    }

    fn with<R>(&self, f: impl FnOnce(&mut PinTable) -> Result<R, PinError>) -> Result<R, PinError> {
        let mut t = self
            .table
            .lock()
            .map_err(|_| PinError::Store("pin store lock poisoned".into()))?;
        f(&mut t)
    }
}

/// Pins in a file, safe for several processes on one machine: an exclusive
/// lock on `PATH.lock` around read-modify-write, and an atomic replace (a
/// fresh temporary file, mode 0600, renamed over). One JSON object per line,
/// `{"agent":…,"keys":[…]}`; a corrupt file is an error, never empty pins.
#[derive(Debug)]
pub struct FilePinStore {
    path: PathBuf,
}

impl FilePinStore {
    /// A store at `path` (created on the first write); checks now that an
    /// existing file is readable and well formed.
    ///
    /// # Errors
    /// [`PinError::Store`] when the lock file cannot be taken, or an existing
    /// store file cannot be read or is not a well-formed pin table.
    pub fn open(path: impl Into<PathBuf>) -> Result<FilePinStore, PinError> {
        let s = FilePinStore { path: path.into() };
        let _lock = s.lock()?;
        s.read()?;
        Ok(s)
    }

    fn io(&self, e: impl std::fmt::Display) -> PinError {
        PinError::Store(format!("{}: {e}", self.path.display()))
    }

    fn lock(&self) -> Result<std::fs::File, PinError> {
        crate::lockfile::lock(&self.path).map_err(|e| self.io(e))
    }

    fn read(&self) -> Result<PinTable, PinError> {
        let mut t = PinTable::default();
        let Some(buf) =
            crate::lockfile::read_bounded(&self.path, MAX_PIN_FILE).map_err(|e| self.io(e))?
        else {
            return Ok(t);
        };
        for (n, line) in buf.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let corrupt = |m: &str| PinError::Corrupt {
                path: self.path.display().to_string(),
                line: n + 1,
                message: m.to_owned(),
            };
            let v =
                crate::json::parse_strict(line.as_bytes()).map_err(|e| corrupt(&e.to_string()))?;
            let agent = v.get("agent").and_then(Value::as_str);
            let keys: Option<Vec<&str>> = v
                .get("keys")
                .and_then(Value::as_array)
                .and_then(|a| a.iter().map(Value::as_str).collect());
            let (Some(agent), Some(keys)) = (agent, keys) else {
                return Err(corrupt("not a pin entry"));
            };
            check_identity(agent).map_err(|e| corrupt(&e.to_string()))?;
            check_thumbprints(&keys).map_err(|e| corrupt(&e.to_string()))?;
            if keys.is_empty() || t.0.len() >= MAX_IDENTITIES {
                return Err(corrupt("empty pin set or too many identities"));
            }
            t.0.insert(
                agent.to_owned(),
                keys.into_iter().map(str::to_owned).collect(),
            );
        }
        Ok(t)
    }

    fn write(&self, t: &PinTable) -> Result<(), PinError> {
        let mut out = String::new();
        for (agent, keys) in &t.0 {
            out.push_str(&serde_json::json!({"agent": agent, "keys": keys}).to_string());
            out.push('\n');
        }
        crate::lockfile::replace(&self.path, out.as_bytes()).map_err(|e| self.io(e))?;
        Ok(())
    }

    fn with<R>(
        &self,
        write: impl FnOnce(&R) -> bool,
        f: impl FnOnce(&mut PinTable) -> Result<R, PinError>,
    ) -> Result<R, PinError> {
        let _lock = self.lock()?;
        let mut t = self.read()?;
        let r = f(&mut t)?;
        if write(&r) {
            self.write(&t)?;
        }
        Ok(r)
    }
}

impl PinStore for MemoryPinStore {
    fn check_and_pin(&self, identity: &str, thumbprint: &str) -> Result<PinOutcome, PinError> {
        check_identity(identity)?;
        check_thumbprints(&[thumbprint])?;
        self.with(|t| Ok(t.check_and_pin(identity, thumbprint)?.0))
    }
    fn add(&self, identity: &str, thumbprints: &[&str]) -> Result<Vec<String>, PinError> {
        check_identity(identity)?;
        check_thumbprints(thumbprints)?;
        self.with(|t| t.add(identity, thumbprints))
    }
    fn replace(&self, identity: &str, thumbprints: &[&str]) -> Result<(), PinError> {
        check_identity(identity)?;
        check_thumbprints(thumbprints)?;
        self.with(|t| t.replace(identity, thumbprints))
    }
    fn get(&self, identity: &str) -> Result<Vec<String>, PinError> {
        self.with(|t| Ok(t.0.get(identity).cloned().unwrap_or_default()))
    }
    fn list(&self) -> Result<Vec<(String, Vec<String>)>, PinError> {
        self.with(|t| Ok(t.0.clone().into_iter().collect()))
    }
}

impl PinStore for FilePinStore {
    fn check_and_pin(&self, identity: &str, thumbprint: &str) -> Result<PinOutcome, PinError> {
        check_identity(identity)?;
        check_thumbprints(&[thumbprint])?;
        self.with(
            |(_, changed)| *changed,
            |t| t.check_and_pin(identity, thumbprint),
        )
        .map(|(o, _)| o)
    }
    fn add(&self, identity: &str, thumbprints: &[&str]) -> Result<Vec<String>, PinError> {
        check_identity(identity)?;
        check_thumbprints(thumbprints)?;
        self.with(|_| true, |t| t.add(identity, thumbprints))
    }
    fn replace(&self, identity: &str, thumbprints: &[&str]) -> Result<(), PinError> {
        check_identity(identity)?;
        check_thumbprints(thumbprints)?;
        self.with(|_| true, |t| t.replace(identity, thumbprints))
    }
    fn get(&self, identity: &str) -> Result<Vec<String>, PinError> {
        self.with(
            |_| false,
            |t| Ok(t.0.get(identity).cloned().unwrap_or_default()),
        )
    }
    fn list(&self) -> Result<Vec<(String, Vec<String>)>, PinError> {
        self.with(|_| false, |t| Ok(t.0.clone().into_iter().collect()))
    }
}

#[cfg(feature = "redis")]
pub use self::redis_pins::RedisPinStore;

#[cfg(feature = "redis")]
mod redis_pins {
    use super::*;
    use crate::replay::redis::{always, RedisClient, RedisConfig, Reply};

    /// The one hash of pins: a single key, so on a Redis Cluster every pin
    /// script runs on its one slot.
    const PINS_KEY: &[u8] = b"agentsig:pins";

    /// The first-sight script pinned a key now (replied `{0, …}`): a write,
    /// which acknowledged writes wait for; a match writes nothing.
    fn pinned_now(v: &redis::Value) -> bool {
        matches!(v, redis::Value::Array(a) if matches!(a.first(), Some(redis::Value::Int(0))))
    }

    /// KEYS[1] the hash, ARGV[1] identity, ARGV[2] thumbprint, ARGV[3]
    /// [`MAX_IDENTITIES`]. Returns {0, pins} when pinned now, {1, pins} when
    /// a pin existed; an error when a new identity would exceed the cap.
    static CHECK: std::sync::LazyLock<redis::Script> =
        std::sync::LazyLock::new(|| redis::Script::new(CHECK_LUA));

    /// The Lua source of [`CHECK`].
    const CHECK_LUA: &str = "\
local v = redis.call('HGET', KEYS[1], ARGV[1])
if not v then
  if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then return redis.error_reply('too many pins') end
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  return {0, ARGV[2]}
end
return {1, v}
";

    /// KEYS[1] the hash, ARGV[1] identity, ARGV[2] max pins, ARGV[3]
    /// [`MAX_IDENTITIES`], ARGV[4..] thumbprints to add. Returns the new
    /// space-separated set; an error past either cap.
    static ADD: std::sync::LazyLock<redis::Script> =
        std::sync::LazyLock::new(|| redis::Script::new(ADD_LUA));

    /// The Lua source of [`ADD`].
    const ADD_LUA: &str = "\
local v = redis.call('HGET', KEYS[1], ARGV[1])
if not v then
  if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then return redis.error_reply('too many pins') end
  v = ''
end
local n = 0
for _ in string.gmatch(v, '%S+') do n = n + 1 end
for i = 4, #ARGV do
  if not string.find(' ' .. v .. ' ', ' ' .. ARGV[i] .. ' ', 1, true) then
    if v == '' then v = ARGV[i] else v = v .. ' ' .. ARGV[i] end
    n = n + 1
  end
end
if n > tonumber(ARGV[2]) then return redis.error_reply('too many pins') end
redis.call('HSET', KEYS[1], ARGV[1], v)
return v
";

    /// KEYS[1] the hash, ARGV[1] identity, ARGV[2] [`MAX_IDENTITIES`],
    /// ARGV[3] the space-separated pins. Returns 1; an error when a new
    /// identity would exceed the cap.
    static REPLACE: std::sync::LazyLock<redis::Script> =
        std::sync::LazyLock::new(|| redis::Script::new(REPLACE_LUA));

    /// The Lua source of [`REPLACE`].
    const REPLACE_LUA: &str = "\
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[2]) then
  return redis.error_reply('too many pins')
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
";

    /// The store's reply to a script, with the cap errors as
    /// [`PinError::TooMany`].
    fn too_many(r: Result<Reply, ReplayError>) -> Result<Reply, PinError> {
        match r {
            Err(ReplayError::Unavailable(m)) if m.contains("too many pins") => {
                Err(PinError::TooMany)
            }
            r => Ok(r?),
        }
    }

    fn split(v: &[u8]) -> Vec<String> {
        String::from_utf8_lossy(v)
            .split_whitespace()
            .map(str::to_owned)
            .collect()
    }

    /// Pins in Redis (see the module documentation), shared by a fleet.
    #[derive(Debug)]
    pub struct RedisPinStore {
        client: RedisClient,
    }

    impl RedisPinStore {
        /// A store for any Redis store URL (see [`RedisConfig`]:
        /// `redis://`, `rediss://`, `redis+cluster://`, `redis+sentinel://`,
        /// `?wait=N` for acknowledged writes; connects lazily).
        ///
        /// # Errors
        /// [`PinError`] when the URL is not a valid Redis store URL (nothing
        /// is connected yet).
        pub fn open(url: &str) -> Result<RedisPinStore, PinError> {
            Ok(RedisPinStore {
                client: RedisClient::new(RedisConfig::from_url(url)?),
            })
        }

        /// A store with explicit settings (timeouts, pool size, TLS trust
        /// anchors, acknowledged writes; connects lazily).
        pub fn with_config(cfg: RedisConfig) -> RedisPinStore {
            RedisPinStore {
                client: RedisClient::new(cfg),
            }
        }

        fn unexpected(r: &Reply) -> PinError {
            PinError::Store(format!("redis: unexpected reply {r:?}"))
        }
    }

    impl PinStore for RedisPinStore {
        fn check_and_pin(&self, identity: &str, t: &str) -> Result<PinOutcome, PinError> {
            check_identity(identity)?;
            check_thumbprints(&[t])?;
            let cap = MAX_IDENTITIES.to_string();
            let r = too_many(self.client.eval(
                &CHECK,
                &[PINS_KEY],
                &[identity.as_bytes(), t.as_bytes(), cap.as_bytes()],
                Some((PINS_KEY, pinned_now)),
            ))?;
            match &r {
                Reply::Array(Some(v)) => match v.as_slice() {
                    [Reply::Int(0), _] => Ok(PinOutcome::FirstSeen),
                    [Reply::Int(1), Reply::Bulk(Some(p))] => {
                        let pinned = split(p);
                        if pinned.iter().any(|x| x == t) {
                            Ok(PinOutcome::Match)
                        } else {
                            Ok(PinOutcome::Changed { pinned })
                        }
                    }
                    _ => Err(Self::unexpected(&r)),
                },
                _ => Err(Self::unexpected(&r)),
            }
        }

        fn add(&self, identity: &str, ts: &[&str]) -> Result<Vec<String>, PinError> {
            check_identity(identity)?;
            check_thumbprints(ts)?;
            let max = MAX_PINS_PER_IDENTITY.to_string();
            let cap = MAX_IDENTITIES.to_string();
            let mut argv: Vec<&[u8]> = vec![identity.as_bytes(), max.as_bytes(), cap.as_bytes()];
            argv.extend(ts.iter().map(|t| t.as_bytes()));
            match too_many(
                self.client
                    .eval(&ADD, &[PINS_KEY], &argv, Some((PINS_KEY, always))),
            )? {
                Reply::Bulk(Some(v)) => Ok(split(&v)),
                r => Err(Self::unexpected(&r)),
            }
        }

        fn replace(&self, identity: &str, ts: &[&str]) -> Result<(), PinError> {
            check_identity(identity)?;
            check_thumbprints(ts)?;
            let mut uniq: Vec<&str> = Vec::new();
            for t in ts {
                if !uniq.contains(t) {
                    uniq.push(t);
                }
            }
            let r = if uniq.is_empty() {
                self.client.query(
                    &[b"HDEL", PINS_KEY, identity.as_bytes()],
                    Some((PINS_KEY, always)),
                )?
            } else {
                let v = uniq.join(" ");
                let cap = MAX_IDENTITIES.to_string();
                too_many(self.client.eval(
                    &REPLACE,
                    &[PINS_KEY],
                    &[identity.as_bytes(), cap.as_bytes(), v.as_bytes()],
                    Some((PINS_KEY, always)),
                ))?
            };
            match r {
                Reply::Int(_) => Ok(()),
                r => Err(Self::unexpected(&r)),
            }
        }

        fn get(&self, identity: &str) -> Result<Vec<String>, PinError> {
            match self
                .client
                .query(&[b"HGET", PINS_KEY, identity.as_bytes()], None)?
            {
                Reply::Bulk(None) => Ok(Vec::new()),
                Reply::Bulk(Some(v)) => Ok(split(&v)),
                r => Err(Self::unexpected(&r)),
            }
        }

        fn list(&self) -> Result<Vec<(String, Vec<String>)>, PinError> {
            let r = self.client.query(&[b"HGETALL", PINS_KEY], None)?;
            let Reply::Array(Some(v)) = &r else {
                return Err(Self::unexpected(&r));
            };
            let mut out = Vec::new();
            for pair in v.chunks(2) {
                match pair {
                    [Reply::Bulk(Some(k)), Reply::Bulk(Some(p))] => {
                        out.push((String::from_utf8_lossy(k).into_owned(), split(p)));
                    }
                    _ => return Err(Self::unexpected(&r)),
                }
            }
            out.sort();
            Ok(out)
        }
    }
}

/// Open a pin store by URL: `memory:`, `file:PATH` or a bare `PATH`, or a
/// Redis store URL (`redis://…`, `rediss://…`, `redis+cluster://…`,
/// `redis+sentinel://…`; feature `redis`).
///
/// # Errors
/// [`PinError::Store`] when the URL names an unknown scheme, a `redis://` store without the `redis`
/// feature, or a store that cannot be opened.
pub fn open_pin_store(url: &str) -> Result<Arc<dyn PinStore>, PinError> {
    if url == "memory:" {
        return Ok(Arc::new(MemoryPinStore::new()));
    }
    if crate::replay::is_redis_url(url) {
        #[cfg(feature = "redis")]
        return Ok(Arc::new(RedisPinStore::open(url)?));
        #[cfg(not(feature = "redis"))]
        return Err(PinError::Store(
            "redis:// store: agentsig was built without the `redis` feature".into(),
        ));
    }
    let path = url.strip_prefix("file:").unwrap_or(url);
    if path.is_empty() {
        return Err(PinError::Store("empty pin store path".into()));
    }
    Ok(Arc::new(FilePinStore::open(path)?))
}

/// Key continuity over a [`PinStore`].
#[derive(Clone, Debug)]
pub struct Pins {
    store: Arc<dyn PinStore>,
}

impl Pins {
    /// Pins kept in `store`.
    pub fn new(store: Arc<dyn PinStore>) -> Pins {
        Pins { store }
    }

    /// The store.
    pub fn store(&self) -> &dyn PinStore {
        &*self.store
    }

    /// Check the key `thumbprint` that `identity` was just verified with:
    /// first sighting pins it; another key is [`PinOutcome::Changed`].
    ///
    /// # Errors
    /// [`PinError`] when the identity or a thumbprint is malformed, a store limit is reached, the
    /// store cannot be read or written, or an announcement is refused.
    pub fn check(&self, identity: &str, thumbprint: &str) -> Result<PinOutcome, PinError> {
        self.store.check_and_pin(identity, thumbprint)
    }
}

/// The key-pinning decision for one verification ([`Pins::decide`]): a
/// stable code, whether it passes, and a message for people.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub struct PinDecision {
    /// Whether the verified key is (now) pinned for the identity.
    pub passed: bool,
    /// `pin.first-seen`, `pin.match`, `pin.key-changed`, `pin.no-identity`,
    /// `pin.no-key` (no verified signature's key to compare), or the code of a store error ([`PinError::code`]).
    pub code: &'static str,
    /// What happened, naming the identity and the keys.
    pub message: String,
}

impl Pins {
    /// Decide whether a verification of `identity` with the keys
    /// `thumbprints` (RFC 7638, of the signatures that verified) keeps key
    /// continuity: a key already pinned passes (`pin.match`); with no pin
    /// yet, the first key is pinned (`pin.first-seen`, trust on first use);
    /// when only other keys are pinned it fails (`pin.key-changed`: accept a
    /// new key by rotation or a signed announcement, [`crate::announce`]).
    /// No identity, or a store that fails, also fails: a pin check that
    /// could not be made never passes.
    ///
    /// # Example
    /// ```
    /// use agentsig::pin::{MemoryPinStore, Pins};
    /// use std::sync::Arc;
    ///
    /// let pins = Pins::new(Arc::new(MemoryPinStore::new()));
    /// let (a, b) = ("a".repeat(43), "b".repeat(43));
    /// assert_eq!(pins.decide(Some("agent"), &[&a]).code, "pin.first-seen");
    /// assert!(pins.decide(Some("agent"), &[&a]).passed);
    /// let changed = pins.decide(Some("agent"), &[&b]);
    /// assert_eq!((changed.passed, changed.code), (false, "pin.key-changed"));
    /// assert!(!pins.decide(None, &[&a]).passed);
    /// ```
    pub fn decide(&self, identity: Option<&str>, thumbprints: &[&str]) -> PinDecision {
        let decision = |passed, code, message| PinDecision {
            passed,
            code,
            message,
        };
        let Some(identity) = identity else {
            return decision(
                false,
                "pin.no-identity",
                "the descriptor has no string id, url or name to pin its key under".into(),
            );
        };
        if thumbprints.is_empty() {
            // Continuity needs a key: an unsigned document (or one whose
            // signatures all failed) has none to compare or to pin.
            return decision(
                false,
                "pin.no-key",
                format!("{identity}: no signature verified with a key, so there is no key to pin"),
            );
        }
        let mut pinned = Vec::new();
        for t in thumbprints {
            match self.check(identity, t) {
                Ok(PinOutcome::FirstSeen) => {
                    return decision(
                        true,
                        "pin.first-seen",
                        format!("{identity}: key {t} pinned on first sight"),
                    )
                }
                Ok(PinOutcome::Match) => {
                    return decision(true, "pin.match", format!("{identity}: key {t} is pinned"))
                }
                Ok(PinOutcome::Changed { pinned: p }) => pinned = p,
                Err(e) => return decision(false, e.code(), e.to_string()),
            }
        }
        decision(
            false,
            "pin.key-changed",
            format!(
                "{identity}: KEY CHANGED: verified with {}, pinned {} (accept with `agentsig pin rotate` or a key announcement)",
                thumbprints.join(", "),
                pinned.join(", ")
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::announce::sign_announcement;
    use crate::Algorithm;
    use crate::SigningKey;

    fn tp(k: &SigningKey) -> String {
        k.verifying_key().thumbprint()
    }

    fn continuity(store: Arc<dyn PinStore>) {
        let pins = Pins::new(store);
        let old = SigningKey::generate(Algorithm::EcdsaP256Sha256).unwrap();
        let new = SigningKey::generate(Algorithm::Ed25519).unwrap();
        let (to, tn) = (tp(&old), tp(&new));
        assert_eq!(pins.check("agent-a", &to), Ok(PinOutcome::FirstSeen));
        assert_eq!(pins.check("agent-a", &to), Ok(PinOutcome::Match));
        assert_eq!(
            pins.check("agent-a", &tn),
            Ok(PinOutcome::Changed {
                pinned: vec![to.clone()]
            })
        );
        // A key change is not recorded by the check.
        assert_eq!(pins.store().get("agent-a").unwrap(), vec![to.clone()]);
        // An announcement signed by the NEW key is refused...
        let (p, j) = sign_announcement("agent-a", &[&tn], 1000, &new).unwrap();
        let cands = [old.verifying_key().clone(), new.verifying_key().clone()];
        assert!(matches!(
            pins.accept_announcement("agent-a", &p, &j, &cands, 1000, 60),
            Err(PinError::Announcement(_))
        ));
        // ...as is one for another agent, or a stale one.
        let (p2, j2) = sign_announcement("agent-b", &[&tn], 1000, &old).unwrap();
        assert!(pins
            .accept_announcement("agent-a", &p2, &j2, &cands, 1000, 60)
            .is_err());
        let (p3, j3) = sign_announcement("agent-a", &[&tn], 1000, &old).unwrap();
        assert!(pins
            .accept_announcement(
                "agent-a",
                &p3,
                &j3,
                &cands,
                1000 + ANNOUNCEMENT_MAX_AGE + 1,
                60
            )
            .is_err());
        // A tampered payload does not verify.
        let tampered = String::from_utf8(p3.clone())
            .unwrap()
            .replace("agent-a", "agent-A");
        assert!(pins
            .accept_announcement("agent-A", tampered.as_bytes(), &j3, &cands, 1000, 60)
            .is_err());
        assert_eq!(
            pins.check("agent-a", &tn),
            Ok(PinOutcome::Changed {
                pinned: vec![to.clone()]
            })
        );
        // Signed by the pinned key: accepted, the new key is pinned too.
        assert_eq!(
            pins.accept_announcement("agent-a", &p3, &j3, &cands, 1000, 60),
            Ok(vec![to.clone(), tn.clone()])
        );
        assert_eq!(pins.check("agent-a", &tn), Ok(PinOutcome::Match));
        // Operator rotation replaces the set.
        pins.store().replace("agent-a", &[&tn]).unwrap();
        assert_eq!(
            pins.check("agent-a", &to),
            Ok(PinOutcome::Changed {
                pinned: vec![tn.clone()]
            })
        );
        assert_eq!(
            pins.store().list().unwrap(),
            vec![("agent-a".to_owned(), vec![tn.clone()])]
        );
        assert_eq!(pins.check("", &to), Err(PinError::BadIdentity));
        assert!(matches!(
            pins.check("x", "not a thumbprint"),
            Err(PinError::BadThumbprint(_))
        ));
        let many: Vec<String> = (0..=MAX_PINS_PER_IDENTITY)
            .map(|i| format!("k{i}"))
            .collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(pins.store().add("agent-a", &many), Err(PinError::TooMany));
    }

    #[test]
    fn memory_continuity() {
        continuity(Arc::new(MemoryPinStore::new()));
    }

    #[test]
    fn file_continuity_and_corruption() {
        let d = std::env::temp_dir().join(format!("agentsig-pins-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let path = d.join("pins.jsonl");
        continuity(open_pin_store(&format!("file:{}", path.display())).unwrap());
        // A second handle on the same file sees the pins.
        let again = open_pin_store(path.to_str().unwrap()).unwrap();
        assert_eq!(again.list().unwrap().len(), 1);
        std::fs::write(&path, "{\"agent\":\"a\"}\n").unwrap();
        assert!(matches!(
            FilePinStore::open(&path),
            Err(PinError::Corrupt { line: 1, .. })
        ));
        let _ = std::fs::remove_dir_all(&d);
    }
}
