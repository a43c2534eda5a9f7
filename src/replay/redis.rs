//! A Redis (or Valkey) backed [`ReplayStore`] for verifier fleets (issue 12):
//! a `jti` or nonce accepted by one replica is a replay on every other.
//!
//! # Protocol
//! * One entry: `SET key 1 NX EX ttl` (atomic check-and-record; a `nil`
//!   reply means the key exists: a replay).
//! * Several entries ([`ReplayStore::check_and_record_all`]): one Lua script
//!   (`EVALSHA`, falling back to `EVAL` after `NOSCRIPT`) that first checks
//!   every key with `EXISTS` and only then `SET`s them all with `EX`. Redis
//!   runs a script atomically (no other command interleaves), so a batch is
//!   recorded all or none on Redis too, and one round trip serves a whole
//!   delegation bundle.
//! * Keys are `agentsig:replay:` + hex(SHA-256(len(scope) ‖ scope ‖
//!   len(id) ‖ id)), each length a 64-bit big-endian integer: fixed length,
//!   so a hostile `jti` can neither inject into the key space nor grow it,
//!   and unambiguous, so a NUL inside a scope or id cannot make two pairs
//!   share a key (the memory and file stores compare the pairs themselves).
//! * The TTL is `until - now` seconds (the token's own `exp` plus skew,
//!   RFC 7519 section 4.1.7 / RFC 9421 section 7.2.2); an entry whose
//!   `until <= now` is checked but not stored; the TTL is at most
//!   [`MAX_TTL_SECS`] (a nonce without `expires` included): no entry is
//!   stored without expiry.
//!   The TTL is computed from the verifier's clock, so replicas should keep
//!   their clocks synchronized (the skew covers small differences).
//!
//! # Fail closed
//! Any failure (connect, timeout, a Redis error reply such as `OOM`,
//! `NOAUTH` or `READONLY`, a malformed reply) is
//! [`ReplayError::Unavailable`]: the verifier refuses the token. A command
//! whose reply was lost may still have been applied; the token is then
//! refused now and a replay later, never accepted twice.
//!
//! # Deployment
//! Run Redis with `maxmemory-policy noeviction` (an evicting policy would
//! silently forget recorded ids; with `noeviction` a full Redis answers
//! `OOM` and the store fails closed) and with persistence (AOF) if a
//! restart must keep the state. Redis Cluster is not supported (a batch's
//! keys hash to different slots); use a single primary (or Sentinel).
//!
//! # Why a small client of our own
//! The `redis` crate pulls in `url` (and with it the ICU-based `idna`
//! stack) and needs `r2d2` for pooling; this store needs four commands.
//! The client here speaks RESP2 over `std::net::TcpStream`, with connect,
//! read and write timeouts, bounded replies (line, bulk, array and depth
//! caps) and a small pool of idle connections, and adds no dependency.
//! TLS (`rediss://`) is refused: use a loopback Redis or a TLS tunnel.

use super::{check_len, ReplayError, ReplayStore, Sighting};
use sha2::{Digest, Sha256};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::Mutex;
use std::time::Duration;

/// Default TCP connect timeout.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// Default read and write timeout of one command.
pub const DEFAULT_IO_TIMEOUT: Duration = Duration::from_secs(2);
/// Default number of idle connections kept for reuse.
pub const DEFAULT_MAX_IDLE: usize = 16;
/// The longest TTL stored: [`super::MAX_REPLAY_TTL_SECS`], as in every store.
pub const MAX_TTL_SECS: i64 = super::MAX_REPLAY_TTL_SECS;

/// Longest status, error or integer line read from Redis.
const MAX_LINE: u64 = 4096;
/// Largest bulk string read from Redis.
const MAX_BULK: usize = 1 << 20;
/// Most elements of an array reply.
const MAX_ARRAY: usize = 65_536;
/// Deepest nesting of array replies.
const MAX_DEPTH: usize = 4;
/// Most bytes (bulk payloads plus 16 per element) of one reply, so that a
/// hostile or confused server cannot make an array of large bulks add up.
const MAX_REPLY_BYTES: usize = 16 << 20;

/// Where a Redis store connects, parsed from
/// `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]` (default port 6379,
/// database 0). The password is percent-decoded and never printed.
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
    /// TCP connect timeout.
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
    /// Parse a `redis://` URL (see the type documentation).
    pub fn from_url(url: &str) -> Result<RedisConfig, ReplayError> {
        if url.len() > 2048 {
            return Err(bad_url("longer than 2048 bytes"));
        }
        if url.starts_with("rediss://") {
            return Err(bad_url(
                "rediss:// (TLS) is not supported; use a loopback Redis or a TLS tunnel",
            ));
        }
        let rest = url
            .strip_prefix("redis://")
            .ok_or_else(|| bad_url("must start with redis://"))?;
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
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            io_timeout: DEFAULT_IO_TIMEOUT,
            max_idle: DEFAULT_MAX_IDLE,
        })
    }
}

/// One RESP2 reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reply {
    Status(String),
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<Reply>>),
}

/// Why one exchange failed, and whether a retry on a fresh connection is
/// safe (the connection was found dead before any reply byte arrived).
struct Failure {
    message: String,
    stale: bool,
}

struct Conn {
    r: BufReader<TcpStream>,
}

fn encode(args: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + args.iter().map(|a| a.len() + 16).sum::<usize>());
    out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

fn clip(s: &[u8]) -> String {
    let s = String::from_utf8_lossy(&s[..s.len().min(200)]);
    crate::text::escape_controls(&s).into_owned()
}

impl Conn {
    fn read_line(&mut self) -> std::io::Result<Vec<u8>> {
        let mut line = Vec::new();
        (&mut self.r).take(MAX_LINE).read_until(b'\n', &mut line)?;
        if line.is_empty() {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        if !line.ends_with(b"\r\n") {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "reply line too long or unterminated",
            ));
        }
        line.truncate(line.len() - 2);
        Ok(line)
    }

    fn read_reply(&mut self, depth: usize, budget: &mut usize) -> std::io::Result<Reply> {
        let bad = |m: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, m.to_owned());
        *budget = budget
            .checked_sub(16)
            .ok_or_else(|| bad("reply larger than the byte budget"))?;
        let line = self.read_line()?;
        let (kind, body) = line.split_first().ok_or_else(|| bad("empty reply line"))?;
        let text = || String::from_utf8_lossy(body).into_owned();
        let int = || -> std::io::Result<i64> {
            std::str::from_utf8(body)
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| bad("bad integer in reply"))
        };
        match kind {
            b'+' => Ok(Reply::Status(text())),
            b'-' => Ok(Reply::Error(text())),
            b':' => Ok(Reply::Int(int()?)),
            b'$' => {
                let n = int()?;
                if n < 0 {
                    return Ok(Reply::Bulk(None));
                }
                let n = usize::try_from(n)
                    .ok()
                    .filter(|n| *n <= MAX_BULK)
                    .ok_or_else(|| bad("bulk reply too large"))?;
                *budget = budget
                    .checked_sub(n)
                    .ok_or_else(|| bad("reply larger than the byte budget"))?;
                let mut buf = vec![0u8; n + 2];
                self.r.read_exact(&mut buf)?;
                if !buf.ends_with(b"\r\n") {
                    return Err(bad("bulk reply not terminated"));
                }
                buf.truncate(n);
                Ok(Reply::Bulk(Some(buf)))
            }
            b'*' => {
                let n = int()?;
                if n < 0 {
                    return Ok(Reply::Array(None));
                }
                if depth >= MAX_DEPTH {
                    return Err(bad("reply nested too deep"));
                }
                let n = usize::try_from(n)
                    .ok()
                    .filter(|n| *n <= MAX_ARRAY)
                    .ok_or_else(|| bad("array reply too large"))?;
                let mut v = Vec::with_capacity(n.min(64));
                for _ in 0..n {
                    v.push(self.read_reply(depth + 1, budget)?);
                }
                Ok(Reply::Array(Some(v)))
            }
            _ => Err(bad("unknown reply type")),
        }
    }

    /// Send `cmds` in one write (pipelined) and read one reply each.
    fn exchange(&mut self, cmds: &[Vec<u8>]) -> Result<Vec<Reply>, Failure> {
        let mut started = false;
        let r = (|| -> std::io::Result<Vec<Reply>> {
            let buf: Vec<u8> = cmds.concat();
            self.r.get_mut().write_all(&buf)?;
            self.r.get_mut().flush()?;
            let mut out = Vec::with_capacity(cmds.len());
            for _ in cmds {
                // A dead pooled connection shows as EOF or reset before
                // the first byte of the first reply.
                if !started {
                    self.r.fill_buf()?;
                    if self.r.buffer().is_empty() {
                        return Err(std::io::ErrorKind::UnexpectedEof.into());
                    }
                    started = true;
                }
                let mut budget = MAX_REPLY_BYTES;
                out.push(self.read_reply(0, &mut budget)?);
            }
            Ok(out)
        })();
        r.map_err(|e| Failure {
            stale: !started
                && matches!(
                    e.kind(),
                    std::io::ErrorKind::UnexpectedEof
                        | std::io::ErrorKind::ConnectionReset
                        | std::io::ErrorKind::ConnectionAborted
                        | std::io::ErrorKind::BrokenPipe
                ),
            message: e.to_string(),
        })
    }
}

/// A small pooled RESP2 client (see the module documentation).
pub(crate) struct RedisClient {
    cfg: RedisConfig,
    idle: Mutex<Vec<Conn>>,
}

impl std::fmt::Debug for RedisClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisClient")
            .field("cfg", &self.cfg)
            .finish_non_exhaustive()
    }
}

impl RedisClient {
    pub(crate) fn new(cfg: RedisConfig) -> RedisClient {
        RedisClient {
            cfg,
            idle: Mutex::new(Vec::new()),
        }
    }

    fn unavailable(&self, m: impl std::fmt::Display) -> ReplayError {
        ReplayError::Unavailable(format!("redis {}:{}: {m}", self.cfg.host, self.cfg.port))
    }

    fn connect(&self) -> Result<Conn, ReplayError> {
        let addrs = (self.cfg.host.as_str(), self.cfg.port)
            .to_socket_addrs()
            .map_err(|e| self.unavailable(format!("resolve: {e}")))?;
        let mut last = None;
        let mut stream = None;
        for a in addrs {
            match TcpStream::connect_timeout(&a, self.cfg.connect_timeout) {
                Ok(s) => {
                    stream = Some(s);
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        let s = stream.ok_or_else(|| {
            self.unavailable(match last {
                Some(e) => format!("connect: {e}"),
                None => "no address".into(),
            })
        })?;
        let setup = |s: &TcpStream| -> std::io::Result<()> {
            s.set_read_timeout(Some(self.cfg.io_timeout))?;
            s.set_write_timeout(Some(self.cfg.io_timeout))?;
            s.set_nodelay(true)
        };
        setup(&s).map_err(|e| self.unavailable(e))?;
        let mut c = Conn {
            r: BufReader::new(s),
        };
        let mut hello = Vec::new();
        if let Some(p) = &self.cfg.password {
            match &self.cfg.username {
                Some(u) => hello.push(encode(&[b"AUTH", u.as_bytes(), p.as_bytes()])),
                None => hello.push(encode(&[b"AUTH", p.as_bytes()])),
            }
        }
        if self.cfg.db != 0 {
            hello.push(encode(&[b"SELECT", self.cfg.db.to_string().as_bytes()]));
        }
        if !hello.is_empty() {
            let replies = c
                .exchange(&hello)
                .map_err(|f| self.unavailable(f.message))?;
            for r in replies {
                if let Reply::Error(e) = r {
                    return Err(self.unavailable(clip(e.as_bytes())));
                }
            }
        }
        Ok(c)
    }

    /// Run pipelined commands on a pooled connection; a connection found
    /// dead before any reply byte is replaced once. Error replies are
    /// returned as [`Reply::Error`] for the caller to judge.
    pub(crate) fn run(&self, cmds: &[Vec<u8>]) -> Result<Vec<Reply>, ReplayError> {
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
            match conn.exchange(cmds) {
                Ok(replies) => {
                    if let Ok(mut idle) = self.idle.lock() {
                        if idle.len() < self.cfg.max_idle {
                            idle.push(conn);
                        }
                    }
                    return Ok(replies);
                }
                Err(f) if reused && f.stale => {
                    conn = self.connect()?;
                    reused = false;
                }
                Err(f) => return Err(self.unavailable(f.message)),
            }
        }
    }

    /// Run one command; an error reply is [`ReplayError::Unavailable`].
    pub(crate) fn query(&self, args: &[&[u8]]) -> Result<Reply, ReplayError> {
        let r = self
            .run(&[encode(args)])?
            .pop()
            .ok_or_else(|| self.unavailable("no reply"))?;
        match r {
            Reply::Error(e) => {
                Err(self.unavailable(format!("error reply: {}", clip(e.as_bytes()))))
            }
            r => Ok(r),
        }
    }

    /// Run a Lua script by `EVALSHA`, loading it with `EVAL` after
    /// `NOSCRIPT` (a restarted or flushed server).
    pub(crate) fn eval(
        &self,
        script: &str,
        keys: &[&[u8]],
        argv: &[&[u8]],
    ) -> Result<Reply, ReplayError> {
        let sha: String =
            ring::digest::digest(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY, script.as_bytes())
                .as_ref()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
        let n = keys.len().to_string();
        let build = |cmd: &[u8], body: &[u8]| {
            let mut args: Vec<&[u8]> = vec![cmd, body, n.as_bytes()];
            args.extend_from_slice(keys);
            args.extend_from_slice(argv);
            encode(&args)
        };
        let r = self
            .run(&[build(b"EVALSHA", sha.as_bytes())])?
            .pop()
            .ok_or_else(|| self.unavailable("no reply"))?;
        let r = match r {
            Reply::Error(e) if e.starts_with("NOSCRIPT") => self
                .run(&[build(b"EVAL", script.as_bytes())])?
                .pop()
                .ok_or_else(|| self.unavailable("no reply"))?,
            r => r,
        };
        match r {
            Reply::Error(e) => {
                Err(self.unavailable(format!("error reply: {}", clip(e.as_bytes()))))
            }
            r => Ok(r),
        }
    }
}

/// Checks every key, then sets them all: atomic in Redis. ARGV[i] is the
/// TTL of KEYS[i]: > 0 seconds (at most [`MAX_TTL_SECS`]), 0 = check only
/// (already expired). Returns 1 when recorded, 0 on a replay.
const RECORD_ALL: &str = "\
for i = 1, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then return 0 end
end
for i = 1, #KEYS do
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
    /// A store for `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]`. Does not
    /// connect: an unreachable server shows at the first check, as
    /// [`ReplayError::Unavailable`].
    pub fn open(url: &str) -> Result<RedisReplayStore, ReplayError> {
        Ok(RedisReplayStore::with_config(RedisConfig::from_url(url)?))
    }

    /// A store with explicit settings (timeouts, pool size).
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
        let t = ttl(until, now);
        let r = match t {
            0 => {
                return match self.client.query(&[b"EXISTS", &key])? {
                    Reply::Int(0) => Ok(Sighting::First),
                    Reply::Int(_) => Ok(Sighting::Replay),
                    r => Err(self.client.unavailable(format!("unexpected reply {r:?}"))),
                }
            }
            t => {
                self.client
                    .query(&[b"SET", &key, b"1", b"NX", b"EX", t.to_string().as_bytes()])?
            }
        };
        match r {
            Reply::Status(s) if s == "OK" => Ok(Sighting::First),
            Reply::Bulk(None) => Ok(Sighting::Replay),
            r => Err(self
                .client
                .unavailable(format!("unexpected SET reply {r:?}"))),
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
            .collect();
        let ttls: Vec<String> = entries
            .iter()
            .map(|(_, _, u)| ttl(*u, now).to_string())
            .collect();
        let k: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let a: Vec<&[u8]> = ttls.iter().map(String::as_bytes).collect();
        match self.client.eval(RECORD_ALL, &k, &a)? {
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
        for bad in [
            "rediss://h",
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

    #[test]
    fn bounded_replies() {
        use std::net::TcpListener;
        // A hostile "server" answering with an oversized bulk string, an
        // overlong line and an over-deep array: each is refused.
        for reply in [
            format!("${}\r\n", MAX_BULK + 1).into_bytes(),
            vec![b'+'; MAX_LINE as usize + 10],
            b"*1\r\n".repeat(MAX_DEPTH + 2),
            b"?what\r\n".to_vec(),
        ] {
            let l = TcpListener::bind("127.0.0.1:0").unwrap();
            let port = l.local_addr().unwrap().port();
            let t = std::thread::spawn(move || {
                let (mut s, _) = l.accept().unwrap();
                let mut b = [0u8; 256];
                let _ = s.read(&mut b);
                let _ = s.write_all(&reply);
            });
            let store = RedisReplayStore::open(&format!("redis://127.0.0.1:{port}")).unwrap();
            let r = store.check_and_record("s", "i", 100, 0);
            assert!(matches!(r, Err(ReplayError::Unavailable(_))), "{r:?}");
            t.join().unwrap();
        }
    }

    #[test]
    fn reply_byte_budget() {
        use std::net::TcpListener;
        // 20 bulks of 1 MiB: each within MAX_BULK, together over the budget.
        let n = 20;
        let mut reply = format!("*{n}\r\n").into_bytes();
        for _ in 0..n {
            reply.extend_from_slice(format!("${MAX_BULK}\r\n").as_bytes());
            reply.extend(std::iter::repeat_n(b'x', MAX_BULK));
            reply.extend_from_slice(b"\r\n");
        }
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let t = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            // Read the request first: closing with unread input would reset.
            let mut b = [0u8; 64];
            let _ = s.read(&mut b);
            let _ = s.write_all(&reply);
        });
        let mut c = Conn {
            r: BufReader::new(TcpStream::connect(addr).unwrap()),
        };
        let e = c.exchange(&[encode(&[b"PING"])]).err().map(|f| f.message);
        assert!(e.as_deref().is_some_and(|m| m.contains("budget")), "{e:?}");
        drop(c);
        t.join().unwrap();
    }
}
