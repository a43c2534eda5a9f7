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
//! * On a Redis Cluster (`redis+cluster://`) the keys spread over the
//!   slots, and a script or pipeline must stay on one slot, so: one entry
//!   is one `SET key 1 NX EX ttl` (no legacy key: no earlier release ran on
//!   a cluster); several entries are `SET NX` one by one in key order, each
//!   with a random token, and on a replay the keys this batch set are
//!   deleted again by a compare-and-delete script on each key's own slot
//!   (see `record_all_on_cluster`): a batch is still recorded all or none
//!   when it is accepted, and a batch racing it can only be refused more,
//!   never accepted twice. The pin hash is one key, so every pin script
//!   runs on its one slot.
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
//! # Acknowledged writes
//! Redis replicates asynchronously: an entry written to a primary that
//! fails before a replica has it is lost when that replica is promoted (by
//! Sentinel or Redis Cluster), and the same token or nonce is then accepted
//! again. With [`RedisConfig::ack`] (`?wait=N&wait-timeout=250ms`) a write
//! is accepted only after `WAIT N TIMEOUT` on the connection that wrote it
//! (in a cluster: to the primary of the written key's slot) counted N
//! replicas; fewer is [`ReplayError::Unavailable`] (the entry stays on the
//! primary: a replay later, never accepted twice). A replay writes nothing
//! and does not wait.
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
//! +hlen +hexists`; with acknowledged writes also `+wait`, on a sentinel
//! store `+role`, on a cluster `+cluster|slots` (the client reads the slot
//! map) and, for batches, `+get +del`.
//!
//! A cluster store uses the crate's `cluster` client (sync): it reads the
//! slot map from the seed nodes, follows `MOVED` and `ASK`, and re-reads
//! the map after a failover; a command is tried at most a few times, so a
//! primary that is down is refused, not waited for. A sentinel store asks
//! the sentinels in order for the primary (`SENTINEL
//! GET-MASTER-ADDR-BY-NAME`), connects and checks `ROLE`, all under the
//! store's timeouts; a pooled connection that answers `READONLY` (its
//! server was demoted by a failover) is dropped and the primary looked up
//! again. The crate's `sentinel` client is not used: it connects to the
//! sentinels and the primary without any timeout.
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
//! restart must keep the state, and with acknowledged writes where a
//! failover must not lose an entry.

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
/// How long an acknowledged write waits for its replicas when the URL gives
/// `wait=N` without `wait-timeout`.
pub const DEFAULT_WAIT_TIMEOUT: Duration = Duration::from_millis(500);
/// The longest `wait-timeout` accepted: a verifier holds the request that
/// long at most.
pub const MAX_WAIT_TIMEOUT: Duration = Duration::from_secs(10);
/// The most replicas an acknowledged write can wait for.
pub const MAX_WAIT_REPLICAS: u32 = 64;
/// The most seed nodes or sentinels one URL names.
pub const MAX_NODES: usize = 32;

/// How a Redis store reaches its data.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RedisTopology {
    /// One server (`redis://`, `rediss://`): [`RedisConfig::host`] and
    /// [`RedisConfig::port`].
    Single,
    /// Redis Cluster (`redis+cluster://`, `rediss+cluster://`): the seed
    /// nodes the client asks for the slot map; it follows `MOVED` and `ASK`
    /// redirections and a failover's new slot owners.
    Cluster {
        /// Seed nodes (host, port); the first is also `host`/`port`.
        seeds: Vec<(String, u16)>,
    },
    /// Sentinel (`redis+sentinel://`, `rediss+sentinel://`): the sentinels
    /// are asked for the primary of `master`
    /// (`SENTINEL GET-MASTER-ADDR-BY-NAME`), whose `ROLE` is checked before
    /// use; after a failover the next connection follows the promoted
    /// primary.
    Sentinel {
        /// Sentinels (host, port); the first is also `host`/`port`.
        sentinels: Vec<(String, u16)>,
        /// The name the sentinels monitor the primary under.
        master: String,
    },
}

/// Acknowledged writes: after recording, the store runs Redis `WAIT` on the
/// connection (and, in a cluster, on the node) that wrote, and accepts only
/// when at least `replicas` replicas acknowledged the write within
/// `timeout`; otherwise the check is refused ([`ReplayError::Unavailable`],
/// fail closed). Without it, replication is asynchronous: an entry written
/// to a primary that fails before replicating it is lost on the promoted
/// replica, where the same token or nonce can be accepted again (Redis
/// documentation, "Redis replication", and `WAIT`: "WAIT does not make
/// Redis a strongly consistent store", but bounds this loss window to
/// failures of every acknowledging replica too).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckWrites {
    /// Replicas that must acknowledge (1 to [`MAX_WAIT_REPLICAS`]).
    pub replicas: u32,
    /// How long to wait for them (at most [`MAX_WAIT_TIMEOUT`]).
    pub timeout: Duration,
}

/// Where a Redis store connects, parsed from
/// `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB][?OPTIONS]`, the same with
/// `rediss://` (TLS; default port 6379, database 0),
/// `redis+cluster://[[USER]:PASSWORD@]HOST:PORT[,HOST:PORT...][?OPTIONS]`
/// (Redis Cluster seed nodes; `rediss+cluster://` with TLS; database 0 only)
/// or `redis+sentinel://[[USER]:PASSWORD@]HOST:PORT[,HOST:PORT...]/MASTER-NAME[/DB][?OPTIONS]`
/// (sentinels; `rediss+sentinel://` with TLS to the sentinels and the
/// primary). The user name and password are percent-decoded and are the
/// data nodes' (sentinels are asked without them); the password is never
/// printed. OPTIONS: `wait=N` and `wait-timeout=DURATION` (`250ms`, `2s`),
/// acknowledged writes ([`AckWrites`]).
#[derive(Clone)]
#[non_exhaustive]
pub struct RedisConfig {
    /// Host name or IP address (IPv6 without brackets); with a cluster or
    /// sentinels, the first node named.
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
    /// Read and write timeout of one command (an acknowledged write's
    /// `WAIT` is given its own timeout on top).
    pub io_timeout: Duration,
    /// Idle connections kept for reuse.
    pub max_idle: usize,
    /// One server, a cluster or sentinels.
    pub topology: RedisTopology,
    /// Acknowledged writes; `None`: a write is accepted once the primary
    /// has it (see [`AckWrites`] for what that risks on failover).
    pub ack: Option<AckWrites>,
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
            .field("topology", &self.topology)
            .field("ack", &self.ack)
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

/// `HOST[:PORT]`, the host an IPv6 address in brackets.
fn host_port(hostport: &str) -> Result<(String, u16), ReplayError> {
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
    Ok((host.to_owned(), port))
}

/// A duration such as `250ms` or `2s`.
fn parse_duration(v: &str) -> Option<Duration> {
    let (n, unit) = match v.strip_suffix("ms") {
        Some(n) => (n, 1),
        None => (v.strip_suffix('s')?, 1000),
    };
    if n.is_empty() || n.len() > 9 || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = n.parse().ok()?;
    Some(Duration::from_millis(n.checked_mul(unit)?))
}

/// The URL's options: `wait=N`, `wait-timeout=DURATION`.
fn parse_options(query: &str) -> Result<Option<AckWrites>, ReplayError> {
    let (mut replicas, mut timeout) = (None, None);
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        match k {
            "wait" if replicas.is_none() => {
                let n = v
                    .parse::<u32>()
                    .ok()
                    .filter(|n| (1..=MAX_WAIT_REPLICAS).contains(n))
                    .ok_or_else(|| {
                        bad_url(format!(
                            "wait={}: give the number of replicas that must acknowledge a write, 1 to {MAX_WAIT_REPLICAS}",
                            crate::text::quoted(v)
                        ))
                    })?;
                replicas = Some(n);
            }
            "wait-timeout" if timeout.is_none() => {
                let t = parse_duration(v)
                    .filter(|t| !t.is_zero() && *t <= MAX_WAIT_TIMEOUT)
                    .ok_or_else(|| {
                        bad_url(format!(
                            "wait-timeout={}: give a duration such as 250ms or 2s, at most {} s",
                            crate::text::quoted(v),
                            MAX_WAIT_TIMEOUT.as_secs()
                        ))
                    })?;
                timeout = Some(t);
            }
            "wait" | "wait-timeout" => return Err(bad_url(format!("{k} given twice"))),
            k => {
                return Err(bad_url(format!(
                    "unknown option {} (the options are wait and wait-timeout)",
                    crate::text::quoted(k)
                )))
            }
        }
    }
    match (replicas, timeout) {
        (None, None) => Ok(None),
        (None, Some(_)) => Err(bad_url("wait-timeout without wait=N")),
        (Some(replicas), t) => Ok(Some(AckWrites {
            replicas,
            timeout: t.unwrap_or(DEFAULT_WAIT_TIMEOUT),
        })),
    }
}

/// A sentinel's name for the primary: letters, digits, `.`, `_`, `-`.
fn master_name(s: &str) -> Result<String, ReplayError> {
    if s.is_empty()
        || s.len() > 128
        || !s
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    {
        return Err(bad_url(format!(
            "bad primary name {}: redis+sentinel://HOST:PORT[,HOST:PORT...]/MASTER-NAME takes the name the sentinels monitor (letters, digits, . _ -)",
            crate::text::quoted(s)
        )));
    }
    Ok(s.to_owned())
}

fn parse_db(p: &str) -> Result<u32, ReplayError> {
    match p {
        "" => Ok(0),
        p => p
            .parse::<u32>()
            .map_err(|_| bad_url(format!("bad database {}", crate::text::quoted(p)))),
    }
}

impl RedisConfig {
    /// Parse a Redis store URL (see the type documentation).
    pub fn from_url(url: &str) -> Result<RedisConfig, ReplayError> {
        if url.len() > 2048 {
            return Err(bad_url("longer than 2048 bytes"));
        }
        let (scheme, rest) = url.split_once("://").ok_or_else(|| {
            bad_url("must start with redis://, rediss://, redis+cluster://, rediss+cluster://, redis+sentinel:// or rediss+sentinel://")
        })?;
        let (tls, kind) = match scheme {
            "redis" => (false, 0),
            "rediss" => (true, 0),
            "redis+cluster" => (false, 1),
            "rediss+cluster" => (true, 1),
            "redis+sentinel" => (false, 2),
            "rediss+sentinel" => (true, 2),
            _ => return Err(bad_url("must start with redis://, rediss://, redis+cluster://, rediss+cluster://, redis+sentinel:// or rediss+sentinel://")),
        };
        if rest.contains('#') {
            return Err(bad_url("a fragment is not supported"));
        }
        let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
        let ack = parse_options(query)?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, ""),
        };
        let (userinfo, hosts) = match authority.rfind('@') {
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
        let nodes = if kind == 0 {
            vec![host_port(hosts)?]
        } else {
            let nodes = hosts
                .split(',')
                .map(host_port)
                .collect::<Result<Vec<_>, _>>()?;
            if nodes.len() > MAX_NODES {
                return Err(bad_url(format!("more than {MAX_NODES} nodes")));
            }
            nodes
        };
        let (topology, db) = match kind {
            0 => (RedisTopology::Single, parse_db(path)?),
            1 => {
                if !path.is_empty() {
                    return Err(bad_url(
                        "a Redis Cluster has only database 0: drop the path after the nodes",
                    ));
                }
                (
                    RedisTopology::Cluster {
                        seeds: nodes.clone(),
                    },
                    0,
                )
            }
            _ => {
                let (name, db) = path.split_once('/').unwrap_or((path, ""));
                (
                    RedisTopology::Sentinel {
                        sentinels: nodes.clone(),
                        master: master_name(name)?,
                    },
                    parse_db(db)?,
                )
            }
        };
        let (host, port) = nodes.into_iter().next().ok_or_else(|| bad_url("no host"))?;
        Ok(RedisConfig {
            host,
            port,
            db,
            username,
            password,
            tls,
            root_ca_pem: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            io_timeout: DEFAULT_IO_TIMEOUT,
            max_idle: DEFAULT_MAX_IDLE,
            topology,
            ack,
        })
    }

    /// Trust the PEM certificates in `pem` (and no others) as the anchors
    /// of a `rediss://` server certificate, e.g. a managed service's
    /// private CA. Ignored without TLS.
    pub fn with_root_ca_pem(mut self, pem: impl Into<Vec<u8>>) -> RedisConfig {
        self.root_ca_pem = Some(pem.into());
        self
    }

    /// Acknowledged writes (see [`AckWrites`]): wait for `replicas`
    /// replicas, at most `timeout`, before accepting; `replicas` is capped
    /// at [`MAX_WAIT_REPLICAS`] and `timeout` at [`MAX_WAIT_TIMEOUT`].
    pub fn with_ack_writes(mut self, replicas: u32, timeout: Duration) -> RedisConfig {
        self.ack = (replicas > 0).then_some(AckWrites {
            replicas: replicas.min(MAX_WAIT_REPLICAS),
            timeout: timeout.min(MAX_WAIT_TIMEOUT),
        });
        self
    }

    /// The read timeout of a connection: one command, plus an acknowledged
    /// write's `WAIT`.
    fn read_timeout(&self) -> Duration {
        self.io_timeout + self.ack.map_or(Duration::ZERO, |a| a.timeout)
    }

    /// The address of one node, TLS as configured.
    fn addr(&self, host: &str, port: u16) -> ConnectionAddr {
        if self.tls {
            ConnectionAddr::TcpTls {
                host: host.to_owned(),
                port,
                insecure: false,
                tls_params: None,
            }
        } else {
            ConnectionAddr::Tcp(host.to_owned(), port)
        }
    }

    /// The connection settings of a data node (`data`: the URL's database
    /// and credentials) or a sentinel (no database, no credentials).
    fn info(&self, host: &str, port: u16, data: bool) -> Result<ConnectionInfo, String> {
        let mut redis = RedisConnectionInfo::default().set_skip_set_lib_name();
        if data {
            redis = redis.set_db(i64::from(self.db));
            if let Some(u) = &self.username {
                redis = redis.set_username(u);
            }
            if let Some(p) = &self.password {
                redis = redis.set_password(p);
            }
        }
        Ok(self
            .addr(host, port)
            .into_connection_info()
            .map_err(|e| describe(&e))?
            .set_redis_settings(redis))
    }

    fn certificates(&self) -> Option<redis::TlsCertificates> {
        match (&self.root_ca_pem, self.tls) {
            (Some(pem), true) => Some(redis::TlsCertificates {
                client_tls: None,
                root_cert: Some(pem.clone()),
            }),
            _ => None,
        }
    }

    /// The redis crate's client of one node.
    fn node_client(&self, host: &str, port: u16, data: bool) -> Result<redis::Client, String> {
        let info = self.info(host, port, data)?;
        match self.certificates() {
            Some(certs) => redis::Client::build_with_tls(info, certs),
            None => redis::Client::open(info),
        }
        .map_err(|e| format!("TLS trust anchors: {}", describe(&e)))
    }

    /// The redis crate's cluster client for the seed nodes.
    fn cluster_client(
        &self,
        seeds: &[(String, u16)],
    ) -> Result<redis::cluster::ClusterClient, String> {
        let nodes = seeds
            .iter()
            .map(|(h, p)| self.info(h, p.to_owned(), true))
            .collect::<Result<Vec<_>, _>>()?;
        let mut b = redis::cluster::ClusterClientBuilder::new(nodes)
            .connection_timeout(self.connect_timeout)
            .response_timeout(self.read_timeout())
            // A redirection or a moved slot is retried a few times within
            // one check; a primary that is down is refused, not waited for.
            .retries(CLUSTER_RETRIES)
            .min_retry_wait(CLUSTER_RETRY_WAIT_MS)
            .max_retry_wait(CLUSTER_RETRY_WAIT_MS);
        if let Some(u) = &self.username {
            b = b.username(u);
        }
        if let Some(p) = &self.password {
            b = b.password(p);
        }
        if self.tls {
            b = b.tls(redis::TlsMode::Secure);
        }
        if let Some(certs) = self.certificates() {
            b = b.certs(certs);
        }
        b.build()
            .map_err(|e| format!("cluster settings: {}", describe(&e)))
    }

    /// The store's name in messages: scheme and nodes.
    fn label(&self) -> String {
        let s = if self.tls { "s" } else { "" };
        let list = |nodes: &[(String, u16)]| {
            nodes
                .iter()
                .map(|(h, p)| format!("{h}:{p}"))
                .collect::<Vec<_>>()
                .join(",")
        };
        match &self.topology {
            RedisTopology::Single => format!("redis{s} {}:{}", self.host, self.port),
            RedisTopology::Cluster { seeds } => format!("redis{s}+cluster {}", list(seeds)),
            RedisTopology::Sentinel { sentinels, master } => {
                format!("redis{s}+sentinel {}/{master}", list(sentinels))
            }
        }
    }
}

/// Attempts of one cluster command (redirections, a refreshed slot map).
const CLUSTER_RETRIES: u32 = 3;
/// Wait between them, in milliseconds.
const CLUSTER_RETRY_WAIT_MS: u64 = 100;

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

/// How a client reaches its data (see [`RedisTopology`]).
enum Backend {
    Single(Result<redis::Client, String>),
    Cluster(Result<redis::cluster::ClusterClient, String>),
    Sentinel,
}

/// One pooled connection: to a server, or a cluster connection (which holds
/// one connection per node it has talked to).
pub(crate) enum Conn {
    Plain(redis::Connection),
    Cluster(Box<redis::cluster::ClusterConnection>),
}

impl Conn {
    fn like(&mut self) -> &mut dyn redis::ConnectionLike {
        match self {
            Conn::Plain(c) => c,
            Conn::Cluster(c) => c.as_mut(),
        }
    }
}

/// Why one use of a connection failed.
pub(crate) enum Failure {
    /// The client's error (I/O, timeout, an error reply).
    Redis(redis::RedisError),
    /// The store's own refusal; the connection stays in step.
    Refused(String),
}

impl From<redis::RedisError> for Failure {
    fn from(e: redis::RedisError) -> Failure {
        Failure::Redis(e)
    }
}

/// Whether a write must be acknowledged by replicas before it is accepted:
/// the key written (its node, in a cluster) and which replies are writes
/// (a replay writes nothing and is refused anyway, so it need not wait).
pub(crate) type AckOn<'a> = Option<(&'a [u8], fn(&Value) -> bool)>;

/// A pooled client of one server, a cluster or a sentinel-monitored primary
/// (see the module documentation).
pub(crate) struct RedisClient {
    cfg: RedisConfig,
    label: String,
    backend: Backend,
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
    /// A client for `cfg`; does not connect. Settings the redis crate
    /// refuses (an unreadable PEM trust anchor) show at the first command.
    pub(crate) fn new(cfg: RedisConfig) -> RedisClient {
        let backend = match &cfg.topology {
            RedisTopology::Single => Backend::Single(cfg.node_client(&cfg.host, cfg.port, true)),
            RedisTopology::Cluster { seeds } => Backend::Cluster(cfg.cluster_client(seeds)),
            RedisTopology::Sentinel { .. } => Backend::Sentinel,
        };
        RedisClient {
            label: cfg.label(),
            backend,
            cfg,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// Whether the store runs on a Redis Cluster, where a script or a
    /// pipeline must stay on one slot.
    pub(crate) fn is_cluster(&self) -> bool {
        matches!(self.backend, Backend::Cluster(_))
    }

    pub(crate) fn unavailable(&self, m: impl std::fmt::Display) -> ReplayError {
        ReplayError::Unavailable(format!("{}: {m}", self.label))
    }

    /// A connection to `host:port` with the store's timeouts.
    fn connect_node(&self, client: &redis::Client) -> Result<redis::Connection, redis::RedisError> {
        let c = client.get_connection_with_timeout(self.cfg.connect_timeout)?;
        c.set_read_timeout(Some(self.cfg.read_timeout()))?;
        c.set_write_timeout(Some(self.cfg.io_timeout))?;
        Ok(c)
    }

    /// Ask the sentinels, in order, for the primary of `master`, connect to
    /// it and check with `ROLE` that it is a primary (a sentinel's answer
    /// can lag a failover). Done here rather than with the redis crate's
    /// `sentinel` client, which connects to sentinels and primaries without
    /// a timeout: a hung sentinel would hang the verifier instead of
    /// refusing.
    fn connect_sentinel(
        &self,
        sentinels: &[(String, u16)],
        master: &str,
    ) -> Result<redis::Connection, ReplayError> {
        let mut why = Vec::new();
        for (h, p) in sentinels {
            let addr = self
                .cfg
                .node_client(h, *p, false)
                .map_err(|e| self.unavailable(e))
                .and_then(|c| {
                    self.connect_node(&c)
                        .map_err(|e| self.unavailable(describe(&e)))
                })
                .and_then(|mut c| {
                    redis::cmd("SENTINEL")
                        .arg("GET-MASTER-ADDR-BY-NAME")
                        .arg(master)
                        .query::<Option<(String, u16)>>(&mut c)
                        .map_err(|e| self.unavailable(describe(&e)))
                });
            match addr {
                Ok(Some((host, port))) => return self.connect_primary(&host, port),
                Ok(None) => why.push(format!("{h}:{p} does not monitor {master}")),
                Err(ReplayError::Unavailable(m)) => why.push(format!("{h}:{p}: {m}")),
                Err(e) => why.push(format!("{h}:{p}: {e}")),
            }
        }
        Err(self.unavailable(format!(
            "no sentinel named the primary: {}",
            clip(&why.join("; "))
        )))
    }

    fn connect_primary(&self, host: &str, port: u16) -> Result<redis::Connection, ReplayError> {
        let fail = |m: String| self.unavailable(format!("primary {host}:{port}: {m}"));
        let client = self.cfg.node_client(host, port, true).map_err(fail)?;
        let mut c = self.connect_node(&client).map_err(|e| fail(describe(&e)))?;
        let role = redis::cmd("ROLE")
            .query::<Value>(&mut c)
            .map_err(|e| fail(describe(&e)))?;
        match role {
            Value::Array(v) if matches!(v.first(), Some(Value::BulkString(r)) if r == b"master") => {
                Ok(c)
            }
            _ => Err(fail(
                "is not (or no longer) a primary: the sentinels have not finished a failover; retry"
                    .into(),
            )),
        }
    }

    fn connect(&self) -> Result<Conn, ReplayError> {
        match (&self.backend, &self.cfg.topology) {
            (Backend::Single(client), _) => {
                let client = client.as_ref().map_err(|e| self.unavailable(e))?;
                self.connect_node(client)
                    .map(Conn::Plain)
                    .map_err(|e| self.unavailable(describe(&e)))
            }
            (Backend::Cluster(client), _) => {
                let client = client.as_ref().map_err(|e| self.unavailable(e))?;
                let c = client
                    .get_connection()
                    .map_err(|e| self.unavailable(describe(&e)))?;
                Ok(Conn::Cluster(Box::new(c)))
            }
            (Backend::Sentinel, RedisTopology::Sentinel { sentinels, master }) => {
                self.connect_sentinel(sentinels, master).map(Conn::Plain)
            }
            (Backend::Sentinel, _) => Err(self.unavailable("sentinel settings without sentinels")),
        }
    }

    /// Run `f` on a pooled connection (a new one when none is idle). A
    /// pooled connection the server closed, or one to a server that is no
    /// longer a primary (`READONLY`, after a failover), is replaced once; a
    /// server error reply is [`ReplayError::Unavailable`] with its text.
    pub(crate) fn with_conn(
        &self,
        f: impl Fn(&mut Conn) -> Result<Value, Failure>,
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
                Err(Failure::Refused(m)) => {
                    self.put_back(conn);
                    return Err(self.unavailable(m));
                }
                Err(Failure::Redis(e))
                    if reused
                        && ((e.is_connection_dropped() && !e.is_timeout())
                            || e.code() == Some("READONLY")) =>
                {
                    // A command refused with READONLY was not applied, and
                    // one whose connection dropped is applied at most once
                    // more: a retry can only turn a first sighting into a
                    // replay.
                    conn = self.connect()?;
                    reused = false;
                }
                Err(Failure::Redis(e)) => {
                    if connection_usable(&e) && e.code() != Some("READONLY") {
                        self.put_back(conn);
                    }
                    return Err(self.unavailable(describe(&e)));
                }
            }
        }
    }

    fn put_back(&self, conn: Conn) {
        if let Ok(mut idle) = self.idle.lock() {
            if idle.len() < self.cfg.max_idle {
                idle.push(conn);
            }
        }
    }

    /// With acknowledged writes on, `WAIT` on the connection that wrote
    /// `key` (in a cluster: to the primary of its slot) and refuse unless
    /// enough replicas acknowledged in time.
    pub(crate) fn acknowledge(&self, conn: &mut Conn, key: &[u8]) -> Result<(), Failure> {
        let Some(ack) = self.cfg.ack else {
            return Ok(());
        };
        let ms = u64::try_from(ack.timeout.as_millis()).unwrap_or(u64::MAX);
        let mut wait = redis::cmd("WAIT");
        wait.arg(ack.replicas).arg(ms);
        let acked = match conn {
            Conn::Plain(c) => wait.query::<Value>(c)?,
            Conn::Cluster(c) => {
                use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};
                c.route_command(
                    &wait,
                    RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(Route::with_key(
                        key,
                        SlotAddr::Master,
                    ))),
                )?
            }
        };
        match acked {
            Value::Int(n) if n >= i64::from(ack.replicas) => Ok(()),
            Value::Int(n) => Err(Failure::Refused(format!(
                "write not acknowledged: {n} of the {} replicas required answered WAIT within {ms} ms, so it is refused (it stays recorded on the primary); check the replicas' health and replication link, or lower wait=",
                ack.replicas
            ))),
            v => Err(Failure::Refused(format!(
                "unexpected WAIT reply {}",
                clip(&format!("{v:?}"))
            ))),
        }
    }

    /// Run `f`, then, when `ack` names a key and its reply is a write,
    /// [`RedisClient::acknowledge`] it on the same connection.
    fn run(
        &self,
        ack: AckOn<'_>,
        f: impl Fn(&mut dyn redis::ConnectionLike) -> redis::RedisResult<Value>,
    ) -> Result<Reply, ReplayError> {
        self.with_conn(|c| {
            let v = f(c.like())?;
            if let Some((key, wrote)) = ack {
                if wrote(&v) {
                    self.acknowledge(c, key)?;
                }
            }
            Ok(v)
        })
    }

    /// Run one command; an error reply is [`ReplayError::Unavailable`].
    pub(crate) fn query(&self, args: &[&[u8]], ack: AckOn<'_>) -> Result<Reply, ReplayError> {
        let (name, rest) = args
            .split_first()
            .ok_or_else(|| self.unavailable("empty command"))?;
        let mut cmd = redis::Cmd::new();
        cmd.arg(*name);
        for a in rest {
            cmd.arg(*a);
        }
        self.run(ack, |c| cmd.query::<Value>(c))
    }

    /// Send several commands in one round trip (a pipeline, not a
    /// transaction): an array of their replies; an error reply to any of
    /// them is [`ReplayError::Unavailable`]. Not on a cluster, where the
    /// commands' keys may belong to different nodes.
    pub(crate) fn pipeline(
        &self,
        cmds: &[&[&[u8]]],
        ack: AckOn<'_>,
    ) -> Result<Vec<Reply>, ReplayError> {
        if self.is_cluster() {
            return Err(self.unavailable("a pipeline on a cluster (a bug in agentsig)"));
        }
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
        match self.run(ack, |c| p.query::<Value>(c))? {
            Reply::Array(Some(replies)) if replies.len() == cmds.len() => Ok(replies),
            r => Err(self.unavailable(format!("unexpected pipeline reply {r:?}"))),
        }
    }

    /// Run a Lua script by `EVALSHA`, loading it with `SCRIPT LOAD` after
    /// `NOSCRIPT` (a restarted or flushed server). On a cluster every key
    /// of one script must hash to one slot.
    pub(crate) fn eval(
        &self,
        script: &redis::Script,
        keys: &[&[u8]],
        argv: &[&[u8]],
        ack: AckOn<'_>,
    ) -> Result<Reply, ReplayError> {
        let nkeys = keys.len().to_string();
        let head: [&[u8]; 3] = [b"EVALSHA", script.get_hash().as_bytes(), nkeys.as_bytes()];
        let args = || head.iter().chain(keys).chain(argv).copied();
        let n = head.len() + keys.len() + argv.len();
        PACKED.with_borrow_mut(|packed| {
            // On one server the command is packed (RESP) once, into this
            // thread's buffer, kept from call to call: a crawl's call
            // carries tens of kilobytes of reports, and buffers of that size
            // allocated and freed per call (the command, then its packed
            // copy) made the allocator consolidate its free lists and give
            // memory back to the system, to fault it in again. A cluster
            // connection routes a `Cmd` by its keys.
            packed.clear();
            pack_command(packed, n, args());
            let r = self.with_conn(|c| {
                // An error reply is an error, as `Cmd::query` makes it.
                let send = |c: &mut Conn| match c {
                    Conn::Plain(p) => redis::ConnectionLike::req_packed_command(p, packed)
                        .and_then(Value::extract_error),
                    Conn::Cluster(k) => {
                        let len = args().map(<[u8]>::len).sum::<usize>();
                        let mut cmd = redis::Cmd::with_capacity(n, len);
                        for a in args() {
                            cmd.arg(a);
                        }
                        redis::ConnectionLike::req_command(k.as_mut(), &cmd)
                            .and_then(Value::extract_error)
                    }
                };
                let v = match send(c) {
                    Err(e)
                        if e.kind()
                            == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) =>
                    {
                        script.load(c.like())?;
                        send(c)?
                    }
                    r => r?,
                };
                if let Some((key, wrote)) = ack {
                    if wrote(&v) {
                        self.acknowledge(c, key)?;
                    }
                }
                Ok(v)
            });
            if packed.capacity() > MAX_KEPT_COMMAND {
                *packed = Vec::new();
            }
            r
        })
    }
}

/// The largest command buffer a thread keeps for its next call.
const MAX_KEPT_COMMAND: usize = 4 * 1024 * 1024;

thread_local! {
    /// This thread's packed command ([`RedisClient::eval`]).
    static PACKED: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Append the RESP array of the `n` bulk strings `args` to `out` (the
/// Redis serialization protocol, RESP2: an array of bulk strings is how a
/// client sends a command).
fn pack_command<'a>(out: &mut Vec<u8>, n: usize, args: impl Iterator<Item = &'a [u8]> + Clone) {
    use std::io::Write as _;
    let len = args.clone().map(|a| a.len() + 16).sum::<usize>() + 16;
    out.reserve(len);
    // Writing into a vector cannot fail.
    let _ = write!(out, "*{n}\r\n");
    for a in args {
        let _ = write!(out, "${}\r\n", a.len());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
}

/// Every reply is a write (the pin scripts).
pub(crate) fn always(_: &Value) -> bool {
    true
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
    /// A store for any Redis store URL ([`RedisConfig`]: `redis://`,
    /// `rediss://`, `redis+cluster://`, `redis+sentinel://`, with
    /// `?wait=N&wait-timeout=…` for acknowledged writes). Does not connect:
    /// an unreachable server shows at the first check, as
    /// [`ReplayError::Unavailable`].
    pub fn open(url: &str) -> Result<RedisReplayStore, ReplayError> {
        Ok(RedisReplayStore::with_config(RedisConfig::from_url(url)?))
    }

    /// A store with explicit settings (timeouts, pool size, TLS trust
    /// anchors, acknowledged writes).
    pub fn with_config(cfg: RedisConfig) -> RedisReplayStore {
        RedisReplayStore {
            client: RedisClient::new(cfg),
        }
    }

    /// Check that the server (every primary of a cluster) answers `PING`.
    pub fn ping(&self) -> Result<(), ReplayError> {
        match self.client.query(&[b"PING"], None)? {
            Reply::Status(s) if s == "PONG" => Ok(()),
            r => Err(self
                .client
                .unavailable(format!("unexpected PING reply {r:?}"))),
        }
    }

    /// A batch on a cluster, whose keys hash to different slots, so no one
    /// script can hold them: each key is `SET NX` in key order, and when
    /// one exists the keys this batch set are deleted again, each only if
    /// it still holds this batch's random token (a compare-and-delete
    /// script on its own key). While a key exists nothing else records it,
    /// so a batch accepted here was recorded whole and no other accepts any
    /// of its ids; a concurrent batch sharing a key may see it before the
    /// roll-back and be refused too (fail closed: never accepted twice).
    /// A roll-back that fails leaves keys behind: more replays, never fewer.
    fn record_all_on_cluster(
        &self,
        entries: &[(&str, &str, i64)],
        now: i64,
    ) -> Result<Sighting, ReplayError> {
        let mut keys: Vec<(Vec<u8>, i64)> = entries
            .iter()
            .map(|(s, i, u)| {
                (
                    hashed_key(REPLAY_PREFIX, &[s.as_bytes(), i.as_bytes()]),
                    ttl(*u, now),
                )
            })
            .collect();
        keys.sort();
        let token = random_token().map_err(|m| self.client.unavailable(m))?;
        let r = self.client.with_conn(|c| {
            let mut set: Vec<&[u8]> = Vec::new();
            let mut replay = false;
            for (key, t) in &keys {
                let fresh = if *t == 0 {
                    let n: i64 = redis::cmd("EXISTS").arg(key).query(c.like())?;
                    n == 0
                } else {
                    let v: Value = redis::cmd("SET")
                        .arg(key)
                        .arg(&token)
                        .arg("NX")
                        .arg("EX")
                        .arg(*t)
                        .query(c.like())?;
                    match v {
                        Value::Okay => {
                            set.push(key);
                            true
                        }
                        Value::Nil => false,
                        v => {
                            return Err(Failure::Refused(format!(
                                "unexpected SET reply {}",
                                clip(&format!("{v:?}"))
                            )))
                        }
                    }
                };
                if !fresh {
                    replay = true;
                    break;
                }
            }
            if replay {
                for key in set {
                    let _: Value = UNSET
                        .prepare_invoke()
                        .key(key)
                        .arg(&token)
                        .invoke(c.like())?;
                }
                return Ok(Value::Int(0));
            }
            for key in set {
                self.client.acknowledge(c, key)?;
            }
            Ok(Value::Int(1))
        })?;
        match r {
            Reply::Int(1) => Ok(Sighting::First),
            Reply::Int(0) => Ok(Sighting::Replay),
            r => Err(self.client.unavailable(format!("unexpected reply {r:?}"))),
        }
    }
}

/// Deletes KEYS[1] only while it holds ARGV[1] (this batch's token), so a
/// roll-back never removes a key another verifier recorded after this
/// batch's expired.
pub(crate) static UNSET: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end\nreturn 0\n",
    )
});

/// 128 random bits, hex: a batch's token on a cluster, a lock's token.
pub(crate) fn random_token() -> Result<String, String> {
    let mut b = [0u8; 16];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut b)
        .map_err(|_| "the system random number generator failed".to_owned())?;
    Ok(b.iter().map(|b| format!("{b:02x}")).collect())
}

/// `SET NX` wrote (an `OK` reply, alone or as a pipeline's second).
fn set_wrote(v: &Value) -> bool {
    match v {
        Value::Okay => true,
        Value::SimpleString(s) => s == "OK",
        Value::Array(a) => a.get(1).is_some_and(set_wrote),
        _ => false,
    }
}

/// The batch script recorded (replied 1).
fn script_wrote(v: &Value) -> bool {
    matches!(v, Value::Int(1))
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
        let ack: AckOn<'_> = Some((&key, set_wrote));
        if self.client.is_cluster() {
            // No earlier release ran on a cluster, so there is no legacy
            // key to read (it would sit on another slot).
            let r = match ttl(until, now) {
                0 => self.client.query(&[b"EXISTS", &key], None)?,
                t => {
                    let t = t.to_string();
                    self.client
                        .query(&[b"SET", &key, b"1", b"NX", b"EX", t.as_bytes()], ack)?
                }
            };
            return match r {
                Reply::Int(0) => Ok(Sighting::First),
                Reply::Status(s) if s == "OK" => Ok(Sighting::First),
                Reply::Int(_) | Reply::Bulk(None) => Ok(Sighting::Replay),
                r => Err(self.client.unavailable(format!("unexpected reply {r:?}"))),
            };
        }
        let legacy = legacy_key(scope, id);
        match ttl(until, now) {
            // Already expired: checked, not recorded.
            0 => match self.client.query(&[b"EXISTS", &key, &legacy], None)? {
                Reply::Int(0) => Ok(Sighting::First),
                Reply::Int(_) => Ok(Sighting::Replay),
                r => Err(self.client.unavailable(format!("unexpected reply {r:?}"))),
            },
            // `SET NX` records atomically; the legacy key, which this
            // release never writes, is read in the same round trip.
            t => {
                let t = t.to_string();
                let r = self.client.pipeline(
                    &[
                        &[b"EXISTS", &legacy],
                        &[b"SET", &key, b"1", b"NX", b"EX", t.as_bytes()],
                    ],
                    ack,
                )?;
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
        if self.client.is_cluster() {
            return self.record_all_on_cluster(entries, now);
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
        let ack: AckOn<'_> = Some((k[0], script_wrote));
        match self.client.eval(&RECORD_ALL, &k, &a, ack)? {
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
    fn cluster_sentinel_and_wait_urls() {
        let c = RedisConfig::from_url("redis+cluster://10.0.0.1:7000,[::1]:7001,h").unwrap();
        assert_eq!(
            c.topology,
            RedisTopology::Cluster {
                seeds: vec![
                    ("10.0.0.1".into(), 7000),
                    ("::1".into(), 7001),
                    ("h".into(), 6379)
                ]
            }
        );
        assert_eq!(
            (c.host.as_str(), c.port, c.db, c.tls),
            ("10.0.0.1", 7000, 0, false)
        );
        assert_eq!(c.ack, None);
        let c = RedisConfig::from_url(
            "rediss+cluster://app:s%3Acret@a:1,b:2?wait=2&wait-timeout=250ms",
        )
        .unwrap();
        assert!(c.tls);
        assert_eq!(c.username.as_deref(), Some("app"));
        assert_eq!(c.password.as_deref(), Some("s:cret"));
        assert_eq!(
            c.ack,
            Some(AckWrites {
                replicas: 2,
                timeout: Duration::from_millis(250)
            })
        );
        assert!(!format!("{c:?}").contains("s:cret"));
        let c =
            RedisConfig::from_url("redis+sentinel://s1:26379,s2:26380/mymaster/2?wait=1").unwrap();
        assert_eq!(
            c.topology,
            RedisTopology::Sentinel {
                sentinels: vec![("s1".into(), 26379), ("s2".into(), 26380)],
                master: "mymaster".into()
            }
        );
        assert_eq!(c.db, 2);
        assert_eq!(
            c.ack,
            Some(AckWrites {
                replicas: 1,
                timeout: DEFAULT_WAIT_TIMEOUT
            })
        );
        let c = RedisConfig::from_url("redis://h:1/0?wait=1&wait-timeout=2s").unwrap();
        assert_eq!(c.topology, RedisTopology::Single);
        assert_eq!(c.ack.map(|a| a.timeout), Some(Duration::from_secs(2)));
        let many = vec!["h:1"; MAX_NODES + 1].join(",");
        for bad in [
            // A cluster has database 0 only; a sentinel URL names its primary.
            "redis+cluster://h:1/1",
            "redis+sentinel://s:1",
            "redis+sentinel://s:1/",
            "redis+sentinel://s:1/bad name",
            "redis+sentinel://s:1/m/x",
            "redis+cluster://h:1,,h:2",
            "redis+cluster://h:1,h:0",
            "redis+clusters://h:1",
            "redis+cluster://h:1#f",
            "redis://h?wait=0",
            "redis://h?wait=65",
            "redis://h?wait=x",
            "redis://h?wait-timeout=1s",
            "redis://h?wait=1&wait-timeout=0ms",
            "redis://h?wait=1&wait-timeout=11s",
            "redis://h?wait=1&wait-timeout=1m",
            "redis://h?wait=1&wait-timeout=99999999999999999999ms",
            "redis://h?wait=1&wait=2",
            "redis://h?wat=1",
            &format!("redis+cluster://{many}"),
        ] {
            assert!(
                matches!(RedisConfig::from_url(bad), Err(ReplayError::Unavailable(_))),
                "{bad}"
            );
        }
        // The library setting caps what it is given.
        let c = RedisConfig::from_url("redis://h")
            .unwrap()
            .with_ack_writes(1000, Duration::from_secs(3600));
        assert_eq!(
            c.ack,
            Some(AckWrites {
                replicas: MAX_WAIT_REPLICAS,
                timeout: MAX_WAIT_TIMEOUT
            })
        );
        assert_eq!(
            RedisConfig::from_url("redis://h")
                .unwrap()
                .with_ack_writes(0, Duration::from_secs(1))
                .ack,
            None
        );
    }

    /// Accepts and reads, never answers, until the sender is used: the
    /// client's read timeout must end the wait.
    fn silent_server() -> (
        u16,
        std::sync::mpsc::Sender<()>,
        std::thread::JoinHandle<()>,
    ) {
        use std::io::Read;
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
        (port, tx, t)
    }

    #[test]
    fn a_silent_sentinel_is_refused_after_the_response_timeout() {
        // The crate's own sentinel client would wait forever here.
        let (port, tx, t) = silent_server();
        let mut cfg =
            RedisConfig::from_url(&format!("redis+sentinel://127.0.0.1:{port}/m")).unwrap();
        cfg.io_timeout = Duration::from_millis(200);
        let r = RedisReplayStore::with_config(cfg).check_and_record("s", "i", 100, 0);
        let Err(ReplayError::Unavailable(m)) = &r else {
            panic!("{r:?}");
        };
        assert!(m.contains("no sentinel named the primary"), "{m}");
        tx.send(()).unwrap();
        t.join().unwrap();
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
        let (port, tx, t) = silent_server();
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
