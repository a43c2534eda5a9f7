//! A Redis (or Valkey) backed [`ReplayStore`] for verifier fleets:
//! a `jti` or nonce accepted by one replica is a replay on every other.
//!
//! # Protocol
//! * One entry: `SET key 1 NX EX ttl` (atomic check-and-record; a `nil`
//!   reply means the key exists: a replay), pipelined with an `EXISTS` of
//!   its legacy key (below): one round trip.
//! * Several entries ([`ReplayStore::check_and_record_all`]): one Lua script
//!   (`EVALSHA`, loaded with `SCRIPT LOAD` after `NOSCRIPT`) that first checks
//!   every key with `EXISTS` and only then `SET`s them all with `EX`. Redis
//!   runs a script atomically (no other command interleaves), so a batch is
//!   recorded all or none on Redis too, and one round trip serves a whole
//!   delegation bundle.
//! * Keys are `agentsig:replay:` + hex(SHA-256(len(scope) ‖ scope ‖
//!   len(id) ‖ id)), each length a 64-bit big-endian integer: fixed length,
//!   so a hostile `jti` can neither inject into the key space nor grow it,
//!   and unambiguous, so a NUL inside a scope or id cannot make two pairs
//!   share a key (the memory and file stores compare the pairs themselves).
//! * The key an earlier release wrote for the same pair, hex(SHA-256(scope ‖
//!   0x00 ‖ id)) with the JWT scope untagged (`iss`), is checked too (never
//!   written): an id recorded by a fleet member not yet upgraded stays a
//!   replay for an upgraded one. A member not yet upgraded does not see the
//!   new keys, so the fleet is only as strict as its oldest member until
//!   every member runs this release.
//! * The TTL is `until - now` seconds (the token's own `exp` plus skew,
//!   RFC 7519 section 4.1.7 / RFC 9421 section 7.2.2); an entry whose
//!   `until <= now` is checked but not stored; the TTL is at most
//!   [`MAX_TTL_SECS`] (a nonce without `expires` included): no entry is
//!   stored without expiry.
//!   The TTL is computed from the verifier's clock, so replicas should keep
//!   their clocks synchronized (the skew covers small differences).
//!
//! # Fail closed
//! Any failure (connect, TLS handshake, authentication, timeout, a Redis
//! error reply such as `OOM`, `NOAUTH`, `NOPERM` or `READONLY`, an
//! unexpected reply) is [`ReplayError::Unavailable`]: the verifier refuses
//! the token. A command whose reply was lost may still have been applied;
//! the token is then refused now and a replay later, never accepted twice.
//!
//! # Client
//! The [`redis`](https://docs.rs/redis) crate's blocking client speaks
//! RESP2 over `std::net` (or rustls for `rediss://`), with a connect
//! timeout ([`RedisConfig::connect_timeout`]: the TCP connect and, with a
//! password or database, the TLS handshake, `AUTH` and `SELECT` that
//! follow) and a read and write timeout on every command
//! ([`RedisConfig::io_timeout`], which bounds the TLS handshake when
//! nothing is sent at connect). Each
//! thread takes an idle connection from a small pool (at most
//! [`RedisConfig::max_idle`] kept) or opens one, so no lock is held
//! across a round trip. A pooled connection that the server closed (a
//! restart, an idle timeout) is replaced once; that retry is safe because
//! a command applied twice can only turn a first sighting into a replay.
//! The client does not send `CLIENT SETINFO`, so an ACL user needs only
//! the commands the stores run: `PING`, `SET`, `EXISTS`, `EVALSHA`,
//! `SCRIPT LOAD` and, for pins, `HGET`, `HGETALL`, `HDEL` (the scripts run
//! `EXISTS`, `SET`, `HGET`, `HSET`, `HLEN`, `HEXISTS` on the keys
//! `agentsig:*`), e.g. `ACL SETUSER agentsig on >PASSWORD ~agentsig:*
//! +ping +set +exists +evalsha +script|load +hget +hgetall +hdel +hset
//! +hlen +hexists`.
//!
//! # TLS
//! `rediss://` connects with TLS 1.2 or 1.3 (rustls on ring), checks the
//! server certificate against the webpki-roots trust anchors (or the PEM
//! anchors of [`RedisConfig::with_root_ca_pem`], for a private CA) and the
//! host name of the URL. There is no option to skip the check.
//!
//! # Deployment
//! Run Redis with `maxmemory-policy noeviction` (an evicting policy would
//! silently forget recorded ids; with `noeviction` a full Redis answers
//! `OOM` and the store fails closed) and with persistence (AOF) if a
//! restart must keep the state. Redis Cluster is not supported (a batch's
//! keys hash to different slots); use a single primary (managed services
//! give one endpoint that follows failover).

use super::{check_len, ReplayError, ReplayStore, Sighting};
use redis::{ConnectionAddr, ConnectionInfo, IntoConnectionInfo, RedisConnectionInfo, Value};
use sha2::{Digest, Sha256};
use std::sync::Mutex;
use std::time::Duration;

/// Default TCP connect timeout (see [`RedisConfig::connect_timeout`]).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// Default read and write timeout of one command.
pub const DEFAULT_IO_TIMEOUT: Duration = Duration::from_secs(2);
/// Default number of idle connections kept for reuse.
pub const DEFAULT_MAX_IDLE: usize = 16;
/// The longest TTL stored: [`super::MAX_REPLAY_TTL_SECS`], as in every store.
pub const MAX_TTL_SECS: i64 = super::MAX_REPLAY_TTL_SECS;

/// Where a Redis store connects, parsed from
/// `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]` or the same with
/// `rediss://` (TLS; default port 6379, database 0). The user name and
/// password are percent-decoded; the password is never printed.
#[derive(Clone)]
#[non_exhaustive]
pub struct RedisConfig {
    /// Host name or IP address (IPv6 without brackets).
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// Database number (`SELECT`).
    pub db: u32,
    /// ACL user name (`AUTH user password`).
    pub username: Option<String>,
    /// Password (`AUTH`).
    pub password: Option<String>,
    /// TLS (`rediss://`), with the server certificate checked.
    pub tls: bool,
    /// PEM trust anchors for TLS instead of webpki-roots (a private CA).
    pub root_ca_pem: Option<Vec<u8>>,
    /// TCP connect timeout; with a password or database, also the timeout
    /// of the TLS handshake, `AUTH` and `SELECT` that follow (without them
    /// the handshake runs under [`RedisConfig::io_timeout`]).
    pub connect_timeout: Duration,
    /// Read and write timeout of one command.
    pub io_timeout: Duration,
    /// Idle connections kept for reuse.
    pub max_idle: usize,
}

impl std::fmt::Debug for RedisConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisConfig")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("db", &self.db)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("tls", &self.tls)
            .field("root_ca_pem", &self.root_ca_pem.as_ref().map(Vec::len))
            .field("connect_timeout", &self.connect_timeout)
            .field("io_timeout", &self.io_timeout)
            .field("max_idle", &self.max_idle)
            .finish()
    }
}

fn bad_url(m: impl std::fmt::Display) -> ReplayError {
    ReplayError::Unavailable(format!("redis URL: {m}"))
}

fn percent_decode(s: &str) -> Result<String, ReplayError> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let h = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| bad_url("bad percent escape in the user info"))?;
            out.push(h);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| bad_url("user info is not UTF-8"))
}

impl RedisConfig {
    /// Parse a `redis://` or `rediss://` URL (see the type documentation).
    pub fn from_url(url: &str) -> Result<RedisConfig, ReplayError> {
        if url.len() > 2048 {
            return Err(bad_url("longer than 2048 bytes"));
        }
        let (tls, rest) = match (url.strip_prefix("rediss://"), url.strip_prefix("redis://")) {
            (Some(rest), _) => (true, rest),
            (None, Some(rest)) => (false, rest),
            (None, None) => return Err(bad_url("must start with redis:// or rediss://")),
        };
        if rest.contains(['?', '#']) {
            return Err(bad_url("query and fragment are not supported"));
        }
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, ""),
        };
        let (userinfo, hostport) = match authority.rfind('@') {
            Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
            None => (None, authority),
        };
        let (username, password) = match userinfo {
            None => (None, None),
            Some(u) => match u.split_once(':') {
                Some((user, pass)) => (
                    (!user.is_empty())
                        .then(|| percent_decode(user))
                        .transpose()?,
                    Some(percent_decode(pass)?),
                ),
                None => (None, Some(percent_decode(u)?)),
            },
        };
        let (host, port) = if let Some(h) = hostport.strip_prefix('[') {
            let (h, after) = h
                .split_once(']')
                .ok_or_else(|| bad_url("unclosed [ in the host"))?;
            let port = match after {
                "" => None,
                p => Some(
                    p.strip_prefix(':')
                        .ok_or_else(|| bad_url("junk after the IPv6 host"))?,
                ),
            };
            (h, port)
        } else {
            match hostport.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (hostport, None),
            }
        };
        if host.is_empty() {
            return Err(bad_url("no host"));
        }
        let port = match port {
            None => 6379,
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|p| *p != 0)
                .ok_or_else(|| bad_url(format!("bad port {}", crate::text::quoted(p))))?,
        };
        let db = match path {
            "" => 0,
            p => p
                .parse::<u32>()
                .map_err(|_| bad_url(format!("bad database {}", crate::text::quoted(p))))?,
        };
        Ok(RedisConfig {
            host: host.to_owned(),
            port,
            db,
            username,
            password,
            tls,
            root_ca_pem: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            io_timeout: DEFAULT_IO_TIMEOUT,
            max_idle: DEFAULT_MAX_IDLE,
        })
    }

    /// Trust the PEM certificates in `pem` (and no others) as the anchors
    /// of a `rediss://` server certificate, e.g. a managed service's
    /// private CA. Ignored without TLS.
    pub fn with_root_ca_pem(mut self, pem: impl Into<Vec<u8>>) -> RedisConfig {
        self.root_ca_pem = Some(pem.into());
        self
    }

    /// The redis crate's client for these settings.
    fn client(&self) -> Result<redis::Client, String> {
        let addr = if self.tls {
            ConnectionAddr::TcpTls {
                host: self.host.clone(),
                port: self.port,
                insecure: false,
                tls_params: None,
            }
        } else {
            ConnectionAddr::Tcp(self.host.clone(), self.port)
        };
        let mut redis = RedisConnectionInfo::default()
            .set_db(i64::from(self.db))
            .set_skip_set_lib_name();
        if let Some(u) = &self.username {
            redis = redis.set_username(u);
        }
        if let Some(p) = &self.password {
            redis = redis.set_password(p);
        }
        let info: ConnectionInfo = addr
            .into_connection_info()
            .map_err(|e| describe(&e))?
            .set_redis_settings(redis);
        match (&self.root_ca_pem, self.tls) {
            (Some(pem), true) => redis::Client::build_with_tls(
                info,
                redis::TlsCertificates {
                    client_tls: None,
                    root_cert: Some(pem.clone()),
                },
            ),
            _ => redis::Client::open(info),
        }
        .map_err(|e| format!("TLS trust anchors: {}", describe(&e)))
    }
}

/// One reply, as the stores read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reply {
    /// A status reply (`+OK`, `+PONG`).
    Status(String),
    /// An integer reply.
    Int(i64),
    /// A bulk string; `None` is the nil reply.
    Bulk(Option<Vec<u8>>),
    /// An array reply.
    Array(Option<Vec<Reply>>),
}

/// The reply types of RESP2; anything else is unexpected of a RESP2
/// connection and refused.
fn reply(v: Value) -> Result<Reply, String> {
    Ok(match v {
        Value::Nil => Reply::Bulk(None),
        Value::Int(i) => Reply::Int(i),
        Value::BulkString(b) => Reply::Bulk(Some(b)),
        Value::SimpleString(s) => Reply::Status(s),
        Value::Okay => Reply::Status("OK".into()),
        Value::Array(a) => Reply::Array(Some(
            a.into_iter().map(reply).collect::<Result<Vec<_>, _>>()?,
        )),
        v => return Err(format!("unexpected reply type {}", clip(&format!("{v:?}")))),
    })
}

fn clip(s: &str) -> String {
    let end = (0..=s.len().min(200))
        .rev()
        .find(|i| s.is_char_boundary(*i))
        .unwrap_or(0);
    crate::text::escape_controls(&s[..end]).into_owned()
}

/// A failure as text: a server error reply as its code and message, any
/// other error as the client describes it (it never shows the password).
fn describe(e: &redis::RedisError) -> String {
    let text = match (&e.kind(), e.code(), e.detail()) {
        (redis::ErrorKind::Server(_) | redis::ErrorKind::Extension, Some(c), Some(d)) => {
            format!("error reply: {c} {d}")
        }
        (redis::ErrorKind::Server(_) | redis::ErrorKind::Extension, Some(c), None) => {
            format!("error reply: {c}")
        }
        _ => e.to_string(),
    };
    clip(&text)
}

/// Whether the connection that gave `e` can serve another command: the
/// server answered with an error reply, so the protocol stayed in step.
fn connection_usable(e: &redis::RedisError) -> bool {
    matches!(
        e.kind(),
        redis::ErrorKind::Server(_) | redis::ErrorKind::Extension
    ) && !e.is_io_error()
}

/// A pooled client of one server (see the module documentation).
pub(crate) struct RedisClient {
    cfg: RedisConfig,
    client: Result<redis::Client, String>,
    idle: Mutex<Vec<redis::Connection>>,
}

impl std::fmt::Debug for RedisClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisClient")
            .field("cfg", &self.cfg)
            .finish_non_exhaustive()
    }
}

impl RedisClient {
    /// A client for `cfg`; does not connect. Settings the redis crate
    /// refuses (an unreadable PEM trust anchor) show at the first command.
    pub(crate) fn new(cfg: RedisConfig) -> RedisClient {
        RedisClient {
            client: cfg.client(),
            cfg,
            idle: Mutex::new(Vec::new()),
        }
    }

    fn unavailable(&self, m: impl std::fmt::Display) -> ReplayError {
        let scheme = if self.cfg.tls { "rediss" } else { "redis" };
        ReplayError::Unavailable(format!("{scheme} {}:{}: {m}", self.cfg.host, self.cfg.port))
    }

    fn connect(&self) -> Result<redis::Connection, ReplayError> {
        let client = self.client.as_ref().map_err(|e| self.unavailable(e))?;
        let c = client
            .get_connection_with_timeout(self.cfg.connect_timeout)
            .map_err(|e| self.unavailable(describe(&e)))?;
        c.set_read_timeout(Some(self.cfg.io_timeout))
            .and_then(|()| c.set_write_timeout(Some(self.cfg.io_timeout)))
            .map_err(|e| self.unavailable(describe(&e)))?;
        Ok(c)
    }

    /// Run `f` on a pooled connection (a new one when none is idle). A
    /// pooled connection the server closed is replaced once; a server
    /// error reply is [`ReplayError::Unavailable`] with its text.
    fn with_conn(
        &self,
        f: impl Fn(&mut redis::Connection) -> redis::RedisResult<Value>,
    ) -> Result<Reply, ReplayError> {
        let pooled = self
            .idle
            .lock()
            .map_err(|_| self.unavailable("pool lock poisoned"))?
            .pop();
        let (mut conn, mut reused) = match pooled {
            Some(c) => (c, true),
            None => (self.connect()?, false),
        };
        loop {
            match f(&mut conn) {
                Ok(v) => {
                    self.put_back(conn);
                    return reply(v).map_err(|m| self.unavailable(m));
                }
                Err(e) if reused && e.is_connection_dropped() && !e.is_timeout() => {
                    conn = self.connect()?;
                    reused = false;
                }
                Err(e) => {
                    if connection_usable(&e) {
                        self.put_back(conn);
                    }
                    return Err(self.unavailable(describe(&e)));
                }
            }
        }
    }

    fn put_back(&self, conn: redis::Connection) {
        if let Ok(mut idle) = self.idle.lock() {
            if idle.len() < self.cfg.max_idle {
                idle.push(conn);
            }
        }
    }

    /// Run one command; an error reply is [`ReplayError::Unavailable`].
    pub(crate) fn query(&self, args: &[&[u8]]) -> Result<Reply, ReplayError> {
        let (name, rest) = args
            .split_first()
            .ok_or_else(|| self.unavailable("empty command"))?;
        let mut cmd = redis::Cmd::new();
        cmd.arg(*name);
        for a in rest {
            cmd.arg(*a);
        }
        self.with_conn(|c| cmd.query::<Value>(c))
    }

    /// Send several commands in one round trip (a pipeline, not a
    /// transaction): an array of their replies; an error reply to any of
    /// them is [`ReplayError::Unavailable`].
    pub(crate) fn pipeline(&self, cmds: &[&[&[u8]]]) -> Result<Vec<Reply>, ReplayError> {
        let mut p = redis::pipe();
        for args in cmds {
            let (name, rest) = args
                .split_first()
                .ok_or_else(|| self.unavailable("empty command"))?;
            let c = p.cmd(std::str::from_utf8(name).map_err(|_| self.unavailable("command name"))?);
            for a in rest {
                c.arg(*a);
            }
        }
        match self.with_conn(|c| p.query::<Value>(c))? {
            Reply::Array(Some(replies)) if replies.len() == cmds.len() => Ok(replies),
            r => Err(self.unavailable(format!("unexpected pipeline reply {r:?}"))),
        }
    }

    /// Run a Lua script by `EVALSHA`, loading it with `SCRIPT LOAD` after
    /// `NOSCRIPT` (a restarted or flushed server).
    pub(crate) fn eval(
        &self,
        script: &redis::Script,
        keys: &[&[u8]],
        argv: &[&[u8]],
    ) -> Result<Reply, ReplayError> {
        let mut inv = script.prepare_invoke();
        for k in keys {
            inv.key(*k);
        }
        for a in argv {
            inv.arg(*a);
        }
        self.with_conn(|c| inv.invoke::<Value>(c))
    }
}

/// Checks every key, then sets the first `#ARGV` of them: atomic in
/// Redis. KEYS holds the entries' keys, then their legacy keys (checked,
/// never set); ARGV[i] is the TTL of KEYS[i]: > 0 seconds (at most
/// [`MAX_TTL_SECS`]), 0 = check only (already expired). Returns 1 when
/// recorded, 0 on a replay.
static RECORD_ALL: std::sync::LazyLock<redis::Script> =
    std::sync::LazyLock::new(|| redis::Script::new(RECORD_ALL_LUA));

/// The Lua source of [`RECORD_ALL`].
const RECORD_ALL_LUA: &str = "\
for i = 1, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then return 0 end
end
for i = 1, #ARGV do
  local ttl = tonumber(ARGV[i])
  if ttl > 0 then
    redis.call('SET', KEYS[i], '1', 'EX', ttl)
  end
end
return 1
";

/// The fixed-length key of a `(scope, id)` pair under `prefix`: the hash
/// of the parts, each preceded by its length (64-bit big-endian), so that
/// no two different lists of parts hash the same bytes.
pub(crate) fn hashed_key(prefix: &str, parts: &[&[u8]]) -> Vec<u8> {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_be_bytes());
        h.update(p);
    }
    let mut k = prefix.as_bytes().to_vec();
    for b in h.finalize() {
        k.extend_from_slice(format!("{b:02x}").as_bytes());
    }
    k
}

/// The key an earlier release wrote for `(scope, id)` (see the module
/// documentation): the parts joined by one NUL, the JWT scope without its
/// [`JWT_SCOPE`](super::JWT_SCOPE) tag.
fn legacy_key(scope: &str, id: &str) -> Vec<u8> {
    let scope = scope.strip_prefix(super::JWT_SCOPE).unwrap_or(scope);
    let mut joined = Vec::with_capacity(scope.len() + 1 + id.len());
    joined.extend_from_slice(scope.as_bytes());
    joined.push(0);
    joined.extend_from_slice(id.as_bytes());
    let mut k = REPLAY_PREFIX.as_bytes().to_vec();
    for b in Sha256::digest(&joined) {
        k.extend_from_slice(format!("{b:02x}").as_bytes());
    }
    k
}

/// Seconds to keep an entry: 0 = do not store, else at most
/// [`MAX_TTL_SECS`].
fn ttl(until: i64, now: i64) -> i64 {
    match until.checked_sub(now) {
        Some(d) if d <= 0 => 0,
        Some(d) => d.min(MAX_TTL_SECS),
        // Overflow: `until` far in the future and `now` negative.
        None => MAX_TTL_SECS,
    }
}

/// The shared replay store of a verifier fleet (see the module
/// documentation). Cheap to share behind an `Arc`; every thread gets its
/// own pooled connection, so no lock is held across a round trip and the
/// signature checks of concurrent verifications are not serialized.
#[derive(Debug)]
pub struct RedisReplayStore {
    client: RedisClient,
}

impl RedisReplayStore {
    /// A store for `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]` (or
    /// `rediss://…`, TLS). Does not connect: an unreachable server shows at the first check, as
    /// [`ReplayError::Unavailable`].
    pub fn open(url: &str) -> Result<RedisReplayStore, ReplayError> {
        Ok(RedisReplayStore::with_config(RedisConfig::from_url(url)?))
    }

    /// A store with explicit settings (timeouts, pool size, TLS trust
    /// anchors).
    pub fn with_config(cfg: RedisConfig) -> RedisReplayStore {
        RedisReplayStore {
            client: RedisClient::new(cfg),
        }
    }

    /// Check that the server answers `PING`.
    pub fn ping(&self) -> Result<(), ReplayError> {
        match self.client.query(&[b"PING"])? {
            Reply::Status(s) if s == "PONG" => Ok(()),
            r => Err(self
                .client
                .unavailable(format!("unexpected PING reply {r:?}"))),
        }
    }
}

const REPLAY_PREFIX: &str = "agentsig:replay:";

impl ReplayStore for RedisReplayStore {
    fn check_and_record(
        &self,
        scope: &str,
        id: &str,
        until: i64,
        now: i64,
    ) -> Result<Sighting, ReplayError> {
        check_len(scope, id)?;
        let key = hashed_key(REPLAY_PREFIX, &[scope.as_bytes(), id.as_bytes()]);
        let legacy = legacy_key(scope, id);
        match ttl(until, now) {
            // Already expired: checked, not recorded.
            0 => match self.client.query(&[b"EXISTS", &key, &legacy])? {
                Reply::Int(0) => Ok(Sighting::First),
                Reply::Int(_) => Ok(Sighting::Replay),
                r => Err(self.client.unavailable(format!("unexpected reply {r:?}"))),
            },
            // `SET NX` records atomically; the legacy key, which this
            // release never writes, is read in the same round trip.
            t => {
                let t = t.to_string();
                let r = self.client.pipeline(&[
                    &[b"EXISTS", &legacy],
                    &[b"SET", &key, b"1", b"NX", b"EX", t.as_bytes()],
                ])?;
                match (&r[0], &r[1]) {
                    (Reply::Int(0), Reply::Status(s)) if s == "OK" => Ok(Sighting::First),
                    (Reply::Int(1), Reply::Status(s)) if s == "OK" => Ok(Sighting::Replay),
                    (Reply::Int(0 | 1), Reply::Bulk(None)) => Ok(Sighting::Replay),
                    (a, b) => Err(self
                        .client
                        .unavailable(format!("unexpected replies {a:?}, {b:?}"))),
                }
            }
        }
    }

    fn check_and_record_all(
        &self,
        entries: &[(&str, &str, i64)],
        now: i64,
    ) -> Result<Sighting, ReplayError> {
        for (i, (scope, id, _)) in entries.iter().enumerate() {
            check_len(scope, id)?;
            if entries[..i].iter().any(|(s, d, _)| s == scope && d == id) {
                return Ok(Sighting::Replay);
            }
        }
        match entries {
            [] => return Ok(Sighting::First),
            [(s, i, u)] => return self.check_and_record(s, i, *u, now),
            _ => {}
        }
        let keys: Vec<Vec<u8>> = entries
            .iter()
            .map(|(s, i, _)| hashed_key(REPLAY_PREFIX, &[s.as_bytes(), i.as_bytes()]))
            .chain(entries.iter().map(|(s, i, _)| legacy_key(s, i)))
            .collect();
        let ttls: Vec<String> = entries
            .iter()
            .map(|(_, _, u)| ttl(*u, now).to_string())
            .collect();
        let k: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let a: Vec<&[u8]> = ttls.iter().map(String::as_bytes).collect();
        match self.client.eval(&RECORD_ALL, &k, &a)? {
            Reply::Int(1) => Ok(Sighting::First),
            Reply::Int(0) => Ok(Sighting::Replay),
            r => Err(self
                .client
                .unavailable(format!("unexpected script reply {r:?}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let c = RedisConfig::from_url("redis://127.0.0.1:6380/3").unwrap();
        assert_eq!((c.host.as_str(), c.port, c.db), ("127.0.0.1", 6380, 3));
        let c = RedisConfig::from_url("redis://u:p%40ss@[::1]/").unwrap();
        assert_eq!((c.host.as_str(), c.port, c.db), ("::1", 6379, 0));
        assert_eq!(c.username.as_deref(), Some("u"));
        assert_eq!(c.password.as_deref(), Some("p@ss"));
        assert!(!format!("{c:?}").contains("p@ss"));
        let c = RedisConfig::from_url("redis://:secret@h").unwrap();
        assert_eq!((c.username, c.password.as_deref()), (None, Some("secret")));
        assert!(!c.tls);
        // TLS, with an ACL user whose name and password are percent-encoded.
        let c = RedisConfig::from_url("rediss://app%2Dr:s%3Acret@redis.example:6380/1").unwrap();
        assert!(c.tls);
        assert_eq!((c.host.as_str(), c.port, c.db), ("redis.example", 6380, 1));
        assert_eq!(c.username.as_deref(), Some("app-r"));
        assert_eq!(c.password.as_deref(), Some("s:cret"));
        assert!(!format!("{c:?}").contains("s:cret"));
        for bad in [
            "rediss:/h",
            "http://h",
            "redis://",
            "redis://h:0",
            "redis://h:99999",
            "redis://h/x",
            "redis://h?db=1",
            "redis://[::1",
            "redis://u:%zz@h",
        ] {
            assert!(
                matches!(RedisConfig::from_url(bad), Err(ReplayError::Unavailable(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn legacy_keys_are_the_earlier_release_keys() {
        // An earlier release keyed SHA-256(scope || 0x00 || id), the JWT
        // scope being the bare `iss`.
        let old = |scope: &[u8], id: &[u8]| {
            let mut h = Sha256::new();
            h.update(scope);
            h.update([0u8]);
            h.update(id);
            let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
            format!("{REPLAY_PREFIX}{hex}").into_bytes()
        };
        assert_eq!(
            legacy_key("jwt:https://as.example", "j1"),
            old(b"https://as.example", b"j1")
        );
        assert_eq!(legacy_key("httpsig:k", "n"), old(b"httpsig:k", b"n"));
        assert_ne!(
            legacy_key("jwt:i", "a"),
            hashed_key(REPLAY_PREFIX, &[b"jwt:i", b"a"])
        );
    }

    #[test]
    fn keys_are_fixed_length_and_separated() {
        let a = hashed_key(REPLAY_PREFIX, &[b"ab", b"c"]);
        let b = hashed_key(REPLAY_PREFIX, &[b"a", b"bc"]);
        assert_ne!(a, b);
        assert_eq!(a.len(), REPLAY_PREFIX.len() + 64);
        let long = "x\r\n*1\r\n".repeat(100);
        let c = hashed_key(REPLAY_PREFIX, &[long.as_bytes(), b""]);
        assert_eq!(c.len(), a.len());
        assert!(c[REPLAY_PREFIX.len()..].iter().all(u8::is_ascii_hexdigit));
        // A NUL inside a part cannot move the boundary between parts.
        assert_ne!(
            hashed_key(REPLAY_PREFIX, &[b"a\0b", b"c"]),
            hashed_key(REPLAY_PREFIX, &[b"a", b"b\0c"])
        );
    }

    #[test]
    fn ttls() {
        assert_eq!(ttl(100, 40), 60);
        assert_eq!(ttl(40, 40), 0);
        assert_eq!(ttl(10, 40), 0);
        // No entry is stored without expiry: at most MAX_TTL_SECS.
        assert_eq!(ttl(i64::MAX, 40), MAX_TTL_SECS);
        assert_eq!(ttl(i64::MAX - 1, -10), MAX_TTL_SECS);
        assert_eq!(ttl(40 + MAX_TTL_SECS + 1, 40), MAX_TTL_SECS);
    }

    /// Reads until the first command has arrived, then answers `reply`
    /// and closes; returns the port.
    fn hostile_server(reply: Vec<u8>) -> (u16, std::thread::JoinHandle<()>) {
        use std::io::{Read, Write};
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let t = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut b = [0u8; 256];
            let _ = s.read(&mut b);
            let _ = s.write_all(&reply);
        });
        (port, t)
    }

    #[test]
    fn malformed_replies_fail_closed() {
        // A hostile or confused "server": an announced bulk string that
        // never comes, an unterminated line, a truncated nested array, an
        // unknown reply type, an error reply, a reply of the wrong type.
        // Each is refused as Unavailable, never read as a first sighting.
        for reply in [
            b"$1048577\r\n".to_vec(),
            // Sizes that must not be allocated up front.
            b"$9223372036854775807\r\n".to_vec(),
            b"*9223372036854775807\r\n".to_vec(),
            b"*4294967296\r\n:1\r\n".to_vec(),
            vec![b'+'; 5000],
            b"*1\r\n".repeat(6),
            b"?what\r\n".to_vec(),
            b"-OOM command not allowed when used memory > 'maxmemory'\r\n".to_vec(),
            // The script answers 1 or 0: any other integer, or a status.
            b":2\r\n".to_vec(),
            b"+OK\r\n".to_vec(),
        ] {
            let (port, t) = hostile_server(reply.clone());
            let store = RedisReplayStore::open(&format!("redis://127.0.0.1:{port}")).unwrap();
            let r = store.check_and_record("s", "i", 100, 0);
            assert!(
                matches!(&r, Err(ReplayError::Unavailable(_))),
                "{:?}: {r:?}",
                String::from_utf8_lossy(&reply[..reply.len().min(40)])
            );
            t.join().unwrap();
        }
    }

    #[test]
    fn a_silent_server_is_refused_after_the_response_timeout() {
        use std::io::Read;
        // Accepts and reads, never answers: the read timeout ends the wait.
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut b = [0u8; 256];
            let _ = s.read(&mut b);
            // Hold the connection open until the client has given up.
            let _ = rx.recv();
        });
        let mut cfg = RedisConfig::from_url(&format!("redis://127.0.0.1:{port}")).unwrap();
        cfg.io_timeout = Duration::from_millis(200);
        let store = RedisReplayStore::with_config(cfg);
        let r = store.check_and_record("s", "i", 100, 0);
        let Err(ReplayError::Unavailable(m)) = &r else {
            panic!("{r:?}");
        };
        assert!(m.contains("127.0.0.1"), "{m}");
        tx.send(()).unwrap();
        t.join().unwrap();
    }

    #[test]
    fn an_unreadable_trust_anchor_is_refused_at_first_use() {
        let cfg = RedisConfig::from_url("rediss://127.0.0.1:1")
            .unwrap()
            .with_root_ca_pem(
                b"-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n".to_vec(),
            );
        let r = RedisReplayStore::with_config(cfg).check_and_record("s", "i", 100, 0);
        assert!(matches!(r, Err(ReplayError::Unavailable(_))), "{r:?}");
    }
}
