//! Shared, expiring byte values for a verifier fleet: the storage under the
//! fleet-wide cache of fetched key sets (`agentsig::net::fleet`, which
//! decides what is stored, authenticates it and verifies it again on every
//! use). This layer stores bytes and short locks only: it parses nothing
//! and decides nothing about what the bytes mean.
//!
//! # Protocol (Redis)
//! * A value: `SET agentsig:keyset:HASH VALUE PX ttl`, read back with
//!   `GETRANGE agentsig:keyset:HASH 0 max` (at most `max + 1` bytes cross
//!   the wire, so a planted giant value is refused without being read
//!   whole); `HASH` is the SHA-256 of the name, so a name (a URL) can
//!   neither inject into the key space nor grow it.
//! * A lock: `SET agentsig:keyset-lock:HASH TOKEN NX PX ttl` (a random
//!   128-bit token), released by a compare-and-delete script on that one
//!   key; it expires by itself when its holder dies.
//! * Every command names one key, so on a Redis Cluster each runs on its
//!   key's slot (no hash tag is needed). A cached value is not worth
//!   acknowledged writes (`?wait=`): a value lost in a failover costs one
//!   fetch, so values and locks are written without `WAIT`.
//! * ACL: `+set +getrange +evalsha +script|load` (the lock release runs
//!   `GET` and `DEL`) on the keys `agentsig:*`.
//!
//! Every failure is [`ReplayError::Unavailable`]; the caller then fetches
//! from the origin itself (the cache is an optimisation, never a reason to
//! accept or refuse).

use super::ReplayError;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A lock held on a name ([`BlobStore::try_lock`]), given back with
/// [`BlobStore::unlock`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockToken(String);

/// Shared, expiring byte values and short locks, by name.
pub trait BlobStore: Send + Sync + std::fmt::Debug {
    /// The value stored under `name`, if any and at most `max` bytes; a
    /// larger one is `Ok(None)` (ignored, as if absent).
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when the store cannot be read.
    fn get(&self, name: &[u8], max: usize) -> Result<Option<Vec<u8>>, ReplayError>;

    /// Store `value` under `name` for `ttl` (at least one millisecond).
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when the store cannot be written.
    fn put(&self, name: &[u8], value: &[u8], ttl: Duration) -> Result<(), ReplayError>;

    /// Take the lock of `name` for at most `ttl`, unless someone holds it:
    /// `Ok(None)` then.
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when the store cannot be written.
    fn try_lock(&self, name: &[u8], ttl: Duration) -> Result<Option<LockToken>, ReplayError>;

    /// Give the lock of `name` back, if `token` still holds it.
    ///
    /// # Errors
    /// [`ReplayError::Unavailable`] when the store cannot be written.
    fn unlock(&self, name: &[u8], token: &LockToken) -> Result<(), ReplayError>;
}

/// Most values a [`MemoryBlobStore`] keeps (expired ones are dropped first,
/// then the one closest to expiry).
pub const MEMORY_BLOB_CAPACITY: usize = 4096;

/// Values by name, each with the instant it expires.
type Expiring<T> = HashMap<Vec<u8>, (T, Instant)>;

/// A [`BlobStore`] in this process (tests, and several verifiers of one
/// process sharing one cache), bounded by [`MEMORY_BLOB_CAPACITY`].
#[derive(Debug, Default)]
pub struct MemoryBlobStore {
    values: Mutex<Expiring<Vec<u8>>>,
    locks: Mutex<Expiring<String>>,
    /// Tokens only need to be unique within this process.
    next_token: std::sync::atomic::AtomicU64,
}

impl MemoryBlobStore {
    /// An empty store.
    pub fn new() -> MemoryBlobStore {
        MemoryBlobStore::default()
    }
}

fn poisoned() -> ReplayError {
    ReplayError::Unavailable("memory blob store lock poisoned".into())
}

impl BlobStore for MemoryBlobStore {
    fn get(&self, name: &[u8], max: usize) -> Result<Option<Vec<u8>>, ReplayError> {
        let map = self.values.lock().map_err(|_| poisoned())?;
        Ok(map
            .get(name)
            .filter(|(v, until)| Instant::now() < *until && v.len() <= max)
            .map(|(v, _)| v.clone()))
    }

    fn put(&self, name: &[u8], value: &[u8], ttl: Duration) -> Result<(), ReplayError> {
        let mut map = self.values.lock().map_err(|_| poisoned())?;
        let now = Instant::now();
        if map.len() >= MEMORY_BLOB_CAPACITY && !map.contains_key(name) {
            map.retain(|_, (_, until)| *until > now);
            if map.len() >= MEMORY_BLOB_CAPACITY {
                if let Some(k) = map
                    .iter()
                    .min_by_key(|(_, (_, u))| *u)
                    .map(|(k, _)| k.clone())
                {
                    map.remove(&k);
                }
            }
        }
        map.insert(name.to_vec(), (value.to_vec(), now + ttl));
        Ok(())
    }

    fn try_lock(&self, name: &[u8], ttl: Duration) -> Result<Option<LockToken>, ReplayError> {
        let mut map = self.locks.lock().map_err(|_| poisoned())?;
        let now = Instant::now();
        map.retain(|_, (_, until)| *until > now);
        if map.contains_key(name) {
            return Ok(None);
        }
        let token = self
            .next_token
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            .to_string();
        map.insert(name.to_vec(), (token.clone(), now + ttl));
        Ok(Some(LockToken(token)))
    }

    fn unlock(&self, name: &[u8], token: &LockToken) -> Result<(), ReplayError> {
        let mut map = self.locks.lock().map_err(|_| poisoned())?;
        if map.get(name).is_some_and(|(t, _)| *t == token.0) {
            map.remove(name);
        }
        Ok(())
    }
}

#[cfg(feature = "redis")]
pub use self::redis_blob::RedisBlobStore;

#[cfg(feature = "redis")]
mod redis_blob {
    use super::{BlobStore, LockToken};
    use crate::replay::redis::{hashed_key, random_token, RedisClient, RedisConfig, Reply, UNSET};
    use crate::replay::ReplayError;
    use std::time::Duration;

    fn millis(ttl: Duration) -> u64 {
        u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
    }

    const VALUE_PREFIX: &str = "agentsig:keyset:";
    const LOCK_PREFIX: &str = "agentsig:keyset-lock:";

    /// A [`BlobStore`] in Redis (any store URL: `redis://`, `rediss://`,
    /// `redis+cluster://`, `redis+sentinel://`); see the module
    /// documentation for its commands.
    #[derive(Debug)]
    pub struct RedisBlobStore {
        client: RedisClient,
    }

    impl RedisBlobStore {
        /// A store for a Redis store URL. Does not connect: an unreachable
        /// server shows at the first use, as [`ReplayError::Unavailable`].
        ///
        /// # Errors
        /// [`ReplayError::Unavailable`] when the URL is not a Redis store URL.
        pub fn open(url: &str) -> Result<RedisBlobStore, ReplayError> {
            Ok(RedisBlobStore::with_config(RedisConfig::from_url(url)?))
        }

        /// A store with explicit settings (timeouts, TLS trust anchors).
        pub fn with_config(cfg: RedisConfig) -> RedisBlobStore {
            RedisBlobStore {
                client: RedisClient::new(cfg),
            }
        }
    }

    impl BlobStore for RedisBlobStore {
        fn get(&self, name: &[u8], max: usize) -> Result<Option<Vec<u8>>, ReplayError> {
            let key = hashed_key(VALUE_PREFIX, &[name]);
            let end = max.to_string();
            match self
                .client
                .query(&[b"GETRANGE", &key, b"0", end.as_bytes()], None)?
            {
                Reply::Bulk(Some(v)) if v.is_empty() => Ok(None),
                Reply::Bulk(Some(v)) if v.len() > max => Ok(None),
                Reply::Bulk(Some(v)) => Ok(Some(v)),
                Reply::Bulk(None) => Ok(None),
                r => Err(self
                    .client
                    .unavailable(format!("unexpected GETRANGE reply {r:?}"))),
            }
        }

        fn put(&self, name: &[u8], value: &[u8], ttl: Duration) -> Result<(), ReplayError> {
            let key = hashed_key(VALUE_PREFIX, &[name]);
            let ms = millis(ttl).to_string();
            match self
                .client
                .query(&[b"SET", &key, value, b"PX", ms.as_bytes()], None)?
            {
                Reply::Status(s) if s == "OK" => Ok(()),
                r => Err(self
                    .client
                    .unavailable(format!("unexpected SET reply {r:?}"))),
            }
        }

        fn try_lock(&self, name: &[u8], ttl: Duration) -> Result<Option<LockToken>, ReplayError> {
            let key = hashed_key(LOCK_PREFIX, &[name]);
            let token = random_token().map_err(|m| self.client.unavailable(m))?;
            let ms = millis(ttl).to_string();
            match self.client.query(
                &[b"SET", &key, token.as_bytes(), b"NX", b"PX", ms.as_bytes()],
                None,
            )? {
                Reply::Status(s) if s == "OK" => Ok(Some(LockToken(token))),
                Reply::Bulk(None) => Ok(None),
                r => Err(self
                    .client
                    .unavailable(format!("unexpected SET NX reply {r:?}"))),
            }
        }

        fn unlock(&self, name: &[u8], token: &LockToken) -> Result<(), ReplayError> {
            let key = hashed_key(LOCK_PREFIX, &[name]);
            self.client
                .eval(&UNSET, &[&key], &[token.0.as_bytes()], None)
                .map(|_| ())
        }
    }
}

/// Open the shared value store named by `url`: `memory:` (this process
/// only) or any Redis store URL.
///
/// # Errors
/// [`ReplayError::Unavailable`] for another URL, or a Redis URL when
/// agentsig was built without the `redis` feature; the URL's own errors.
pub fn open_blob_store(url: &str) -> Result<std::sync::Arc<dyn BlobStore>, ReplayError> {
    if url == "memory:" {
        return Ok(std::sync::Arc::new(MemoryBlobStore::new()));
    }
    if super::is_redis_url(url) {
        #[cfg(feature = "redis")]
        return Ok(std::sync::Arc::new(RedisBlobStore::open(url)?));
        #[cfg(not(feature = "redis"))]
        return Err(ReplayError::Unavailable(
            "redis:// store: agentsig was built without the `redis` feature".into(),
        ));
    }
    Err(ReplayError::Unavailable(format!(
        "{}: a shared key-set cache is memory: or a Redis store URL (redis://, rediss://, redis+cluster://, redis+sentinel://)",
        crate::text::quoted(url)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_values_expire_and_are_bounded_in_size() {
        let s = MemoryBlobStore::new();
        s.put(b"a", b"value", Duration::from_secs(60)).unwrap();
        assert_eq!(s.get(b"a", 100).unwrap().as_deref(), Some(&b"value"[..]));
        assert_eq!(s.get(b"a", 4).unwrap(), None, "larger than max");
        s.put(b"a", b"value", Duration::ZERO).unwrap();
        assert_eq!(s.get(b"a", 100).unwrap(), None, "expired");
        assert_eq!(s.get(b"b", 100).unwrap(), None);
    }

    #[test]
    fn a_lock_is_held_once_and_released_only_by_its_token() {
        let s = MemoryBlobStore::new();
        let t = s.try_lock(b"u", Duration::from_secs(60)).unwrap().unwrap();
        assert!(s.try_lock(b"u", Duration::from_secs(60)).unwrap().is_none());
        s.unlock(b"u", &LockToken("other".into())).unwrap();
        assert!(s.try_lock(b"u", Duration::from_secs(60)).unwrap().is_none());
        s.unlock(b"u", &t).unwrap();
        assert!(s.try_lock(b"u", Duration::from_secs(60)).unwrap().is_some());
    }

    #[test]
    fn other_urls_are_refused() {
        assert!(open_blob_store("memory:").is_ok());
        assert!(open_blob_store("/tmp/x").is_err());
    }
}
