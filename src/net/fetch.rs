//! The one HTTPS fetcher of agentsig: registries, descriptors, JWK Sets,
//! RFC 8414 / RFC 9728 metadata and DID documents all come through
//! [`Fetcher::get`].
//!
//! # Security contract (agent:// draft, draft-narvaneni-agent-uri-03 section 5.2)
//! * HTTPS only, at every hop; a redirect to another scheme is refused.
//! * Before any connection, the host is checked with
//!   [`classify_host`]: an IP literal
//!   directly, a name by its text (`localhost`, `*.internal`, ...) and then
//!   *every* address DNS returns for it, with IPv4-mapped / NAT64 IPv6
//!   unwrapped and re-checked. A name with even one internal answer is
//!   refused whole (a mixed answer is how DNS rebinding is staged).
//! * The connection uses exactly the addresses that were checked: the
//!   checking resolver is the only resolver the HTTP client has, so there is
//!   no second lookup an attacker could answer differently.
//! * Proxies from the environment are ignored (a proxy would resolve the
//!   name itself, past the check).
//! * Redirects are followed by hand, at most [`FetchPolicy::max_redirects`],
//!   each hop checked like the first; a hop that changes authority is
//!   recorded in [`Fetched::redirects`].
//! * Bounded: connect timeout, a *total* deadline per fetch
//!   ([`FetchPolicy::timeout`]: connection, every redirect, headers and the
//!   whole body; a body trickled a byte at a time is cut off at the
//!   deadline, not read to the end), a deadline for a whole operation
//!   ([`FetchPolicy::operation_timeout`], set by [`Fetcher::operation`] or
//!   [`with_deadline`]: every fetch of one `verify URL` or `resolve`,
//!   key discovery included), and a body-size cap.
//! * Internal networks only by explicit opt-in
//!   ([`FetchPolicy::allow_private_networks`], or per host with
//!   [`FetchPolicy::allow_private_host`]); never by default.

use super::cache::{CachePolicy, CacheStatus, HttpCache, Lookup};
pub use super::cache::{Fetched, Redirect};
use crate::formats::addr::{classify_host, classify_ipv4, classify_ipv6, HostClass};
use std::cell::Cell;
use std::collections::HashMap;
use std::io::Read;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Default body-size cap: 1 MiB (descriptors, JWK Sets and metadata are
/// small; draft-narvaneni-agent-uri-03 section 5.3 bounds).
pub const DEFAULT_MAX_BODY: usize = 1024 * 1024;
/// Default number of redirects followed.
pub const DEFAULT_MAX_REDIRECTS: usize = 3;
/// Default total deadline of one fetch (connection, redirects, headers and
/// body): 10 s.
pub const DEFAULT_FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// Default deadline of one whole operation (every fetch of a `verify URL`
/// or a `resolve`, key discovery included): 30 s.
pub const DEFAULT_OPERATION_TIMEOUT: Duration = Duration::from_secs(30);

thread_local! {
    /// The deadline of the operation running on this thread, if any, with
    /// its length (what a failure past it names).
    static DEADLINE: Cell<Option<OperationDeadline>> = const { Cell::new(None) };
}

/// An operation deadline in force ([`with_deadline`]): when it ends, and
/// the length it was given, which a fetch failing past it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OperationDeadline {
    pub(crate) at: Instant,
    pub(crate) limit: Duration,
}

/// Run `f` with every fetch made on this thread bounded by `deadline` too
/// (the earlier of it and any deadline already in force). A fetch past it
/// fails with [`FetchError::Deadline`], naming the length of the deadline
/// that ran out. Work handed to another thread must carry
/// [`current_deadline`] over itself.
pub fn with_deadline<T>(deadline: Instant, f: impl FnOnce() -> T) -> T {
    within(
        OperationDeadline {
            at: deadline,
            // Whole milliseconds, rounded up: the length as the caller set it.
            limit: Duration::from_millis(
                u64::try_from(
                    deadline
                        .saturating_duration_since(Instant::now())
                        .as_micros()
                        .div_ceil(1000),
                )
                .unwrap_or(u64::MAX),
            ),
        },
        f,
    )
}

/// [`with_deadline`] with the deadline (and the length it names) taken
/// from another thread's [`operation_deadline`].
pub(crate) fn within<T>(deadline: OperationDeadline, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<OperationDeadline>);
    impl Drop for Restore {
        fn drop(&mut self) {
            DEADLINE.with(|d| d.set(self.0));
        }
    }
    let prev = DEADLINE.with(Cell::get);
    let _restore = Restore(prev);
    let next = match prev {
        Some(p) if p.at <= deadline.at => p,
        _ => deadline,
    };
    DEADLINE.with(|d| d.set(Some(next)));
    f()
}

/// The operation deadline in force on this thread ([`with_deadline`]).
pub fn current_deadline() -> Option<Instant> {
    DEADLINE.with(Cell::get).map(|d| d.at)
}

/// The operation deadline in force on this thread, with its length.
pub(crate) fn operation_deadline() -> Option<OperationDeadline> {
    DEADLINE.with(Cell::get)
}

/// What the fetcher may do.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct FetchPolicy {
    /// Allow loopback, private, link-local, ... addresses for every host.
    /// For development and tests only; off by default.
    pub allow_private_networks: bool,
    /// Hosts (lowercase names or IP literals as written in URLs) that may
    /// resolve to internal addresses even when
    /// [`allow_private_networks`](Self::allow_private_networks) is off: a
    /// narrow opt-in for one intranet registry.
    pub private_hosts: Vec<String>,
    /// TCP + TLS connect timeout (also bounds the DNS lookup).
    pub connect_timeout: Duration,
    /// Total deadline of one fetch: connection, every redirect, headers and
    /// the whole body (default [`DEFAULT_FETCH_TIMEOUT`]).
    pub timeout: Duration,
    /// Deadline of one whole operation, every fetch included (default
    /// [`DEFAULT_OPERATION_TIMEOUT`]); applied by [`Fetcher::operation`],
    /// which `verify URL` and `resolve` use.
    pub operation_timeout: Duration,
    /// Largest body read; a larger one is an error, not a truncation.
    pub max_body: usize,
    /// Redirects followed before giving up.
    pub max_redirects: usize,
    /// Extra trusted CA roots (PEM bundles), added to the webpki roots.
    pub extra_roots_pem: Vec<Vec<u8>>,
    /// Static name -> addresses pins (like `curl --resolve`), consulted
    /// before DNS. Pinned addresses are checked like DNS answers.
    pub pins: HashMap<String, Vec<IpAddr>>,
    /// The RFC 9111 cache used by [`Fetcher::get_cached`] (on by default,
    /// in memory, bounded; see [`super::cache`]).
    pub cache: CachePolicy,
    /// Most connections open at once to one host (`host:port`), counting
    /// those in flight and those kept alive for reuse, shared by every
    /// clone of the fetcher and every thread using it: the politeness
    /// bound of a crawler (RFC 9110 section 9.3 leaves it to the client;
    /// RFC 2616 section 8.1.4 once said two). `None` (the default):
    /// unbounded. When set, a fetch waits (within its deadline) for a free
    /// connection to its host, every fetch goes through the shared
    /// client (never a thread's own, see [`on_thread_client`]), and an
    /// answer with an error status has its (small) body read so that its
    /// connection is reused rather than left half-read. Known limit: the
    /// HTTP client gives a kept connection back to its pool
    /// asynchronously, just after the body's end is read, so a request that
    /// starts in that moment may open one connection more than the bound
    /// (seen at a counting server about once in 65 runs of a test with six
    /// threads on a loaded machine); the pooled one is closed as surplus
    /// idle.
    pub max_connections_per_host: Option<usize>,
    /// A bound on connections shared beyond this process (a crawl fleet's
    /// per-host permits, `agentsig::net::crawl`): every request is made
    /// under a permit of its host taken before connecting and given back
    /// once its answer is read. A gate that keeps connections
    /// ([`ConnectionGate::keeps_connections`]) lets a connection stay open,
    /// idle, for reuse after its permit is given back, for at most
    /// [`FetchPolicy::kept_connection_linger`]; otherwise requests carry
    /// `Connection: close` (RFC 9112 section 9.6) and no idle connection is
    /// kept. `None` (the default): none.
    pub gate: Option<Arc<dyn ConnectionGate>>,
}

/// How long an idle connection stays in the pool of a fetcher whose gate
/// keeps connections ([`ConnectionGate::keeps_connections`]).
pub const GATED_IDLE_TIMEOUT: Duration = Duration::from_millis(500);

/// Permits to open connections, shared by a fleet ([`FetchPolicy::gate`]).
pub trait ConnectionGate: Send + Sync + std::fmt::Debug {
    /// Wait, until `deadline` at most, for a permit to open one connection
    /// to `host` (`host:port`).
    ///
    /// # Errors
    /// Why no permit was given (the wait ran out, the fleet's store is
    /// unreachable): the fetch then fails without connecting.
    fn acquire(&self, host: &str, deadline: Instant) -> Result<Box<dyn ConnectionPermit>, String>;

    /// Whether connections are kept alive for reuse past their permit. The
    /// gate then promises to count a permit given back (dropped) as held
    /// by this process for at least [`FetchPolicy::kept_connection_linger`]
    /// unless it hands it out again here: every connection this fetcher
    /// has open to a host is covered by a permit this process holds.
    /// Default `false`: every request carries `Connection: close`.
    fn keeps_connections(&self) -> bool {
        false
    }
}

/// One permit of a [`ConnectionGate`], given back on drop.
pub trait ConnectionPermit: Send {
    /// The answer's status and its `Retry-After` field value (RFC 9110
    /// section 10.2.3), if any.
    fn answered(&mut self, status: u16, retry_after: Option<&str>);

    /// Whether the connection used under this permit may stay open for
    /// reuse after it (only where the gate keeps connections,
    /// [`ConnectionGate::keeps_connections`]). `false` (the default): the
    /// request carries `Connection: close` (RFC 9112 section 9.6), so the
    /// connection is closed once its answer is read and the permit may go
    /// back to the fleet at once.
    fn keep_alive(&self) -> bool {
        false
    }
}

impl Default for FetchPolicy {
    fn default() -> Self {
        FetchPolicy {
            allow_private_networks: false,
            private_hosts: Vec::new(),
            connect_timeout: Duration::from_secs(5),
            timeout: DEFAULT_FETCH_TIMEOUT,
            operation_timeout: DEFAULT_OPERATION_TIMEOUT,
            max_body: DEFAULT_MAX_BODY,
            max_redirects: DEFAULT_MAX_REDIRECTS,
            extra_roots_pem: Vec::new(),
            pins: HashMap::new(),
            cache: CachePolicy::default(),
            max_connections_per_host: None,
            gate: None,
        }
    }
}

impl FetchPolicy {
    /// Allow internal addresses for every host (dev/tests only).
    pub fn allow_private_networks(mut self, on: bool) -> Self {
        self.allow_private_networks = on;
        self
    }
    /// Allow internal addresses for one host only.
    pub fn allow_private_host(mut self, host: impl Into<String>) -> Self {
        self.private_hosts.push(host.into().to_ascii_lowercase());
        self
    }
    /// Trust the CA certificates of a PEM bundle too.
    pub fn extra_root_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.extra_roots_pem.push(pem.into());
        self
    }
    /// Resolve `host` to `addrs` without DNS (the addresses are still checked).
    pub fn pin(mut self, host: impl Into<String>, addrs: Vec<IpAddr>) -> Self {
        self.pins.insert(host.into().to_ascii_lowercase(), addrs);
        self
    }
    /// Set the body-size cap.
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.max_body = bytes;
        self
    }
    /// Set the HTTP cache bounds ([`CachePolicy::disabled`] turns it off).
    pub fn cache(mut self, cache: CachePolicy) -> Self {
        self.cache = cache;
        self
    }
    /// Set the connect timeout and the total deadline of one fetch.
    pub fn timeouts(mut self, connect: Duration, total: Duration) -> Self {
        self.connect_timeout = connect;
        self.timeout = total;
        self
    }
    /// Set the deadline of one whole operation ([`Fetcher::operation`]).
    pub fn operation_timeout(mut self, d: Duration) -> Self {
        self.operation_timeout = d;
        self
    }
    /// Bound the connections open at once to one host
    /// ([`FetchPolicy::max_connections_per_host`]; at least one).
    pub fn max_connections_per_host(mut self, n: usize) -> Self {
        self.max_connections_per_host = Some(n.max(1));
        self
    }
    /// Open every connection under a permit of `gate`
    /// ([`FetchPolicy::gate`]).
    pub fn gate(mut self, gate: Arc<dyn ConnectionGate>) -> Self {
        self.gate = Some(gate);
        self
    }
    /// How long after its permit was given back a connection opened under
    /// it may still be open when the gate keeps connections
    /// ([`ConnectionGate::keeps_connections`]): the pool closes an idle
    /// connection within twice [`GATED_IDLE_TIMEOUT`] (its reaper runs
    /// once per timeout), and a connection still being opened when the
    /// request that started it took another one goes idle at most
    /// [`FetchPolicy::connect_timeout`] later.
    pub fn kept_connection_linger(&self) -> Duration {
        2 * GATED_IDLE_TIMEOUT + self.connect_timeout + Duration::from_millis(100)
    }
    fn private_ok(&self, host: &str) -> bool {
        self.allow_private_networks || self.private_hosts.iter().any(|h| h == host)
    }
}

/// Why a fetch failed. Each SSRF refusal happens before a connection.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    /// Not a URL.
    #[error("not a valid URL: {0}")]
    BadUrl(String),
    /// A scheme other than `https` (first request or a redirect).
    #[error("refused: scheme {0:?} is not https")]
    NotHttps(String),
    /// The host or one of its addresses is internal (draft-narvaneni-agent-uri-03 section 5.2).
    #[error("refused before connecting: {host} is {class} ({addr}); internal hosts are never fetched by default (draft-narvaneni-agent-uri-03 section 5.2): to try a server on this machine, opt in with --allow-private-networks (AGENTSIG_ALLOW_PRIVATE_NETWORKS=1)")]
    Refused {
        /// The host as written in the URL.
        host: String,
        /// What it is, e.g. "loopback".
        class: &'static str,
        /// The address (or name) that was refused.
        addr: String,
    },
    /// DNS resolution failed.
    #[error("DNS resolution of {host} failed: {message}")]
    Dns {
        /// The host.
        host: String,
        /// The resolver's message.
        message: String,
    },
    /// Connection, TLS or HTTP failure.
    #[error("fetching {url} failed: {message}")]
    Transport {
        /// The URL.
        url: String,
        /// What failed.
        message: String,
        /// A timeout (worth retrying later).
        timeout: bool,
    },
    /// No connection permit of the gate ([`FetchPolicy::gate`]), or no free
    /// connection under [`FetchPolicy::max_connections_per_host`], came
    /// before the deadline: the bound on connections to one host (this
    /// process's, or a crawl fleet's across its workers) was held by
    /// others all that time. The fetch never reached the origin, so this
    /// says nothing of it: worth trying again later, and never remembered
    /// or shared as the origin's failure.
    #[error("fetching {url} failed: no connection permit: {message}")]
    NoPermit {
        /// The URL.
        url: String,
        /// The gate's reason (the host, the wait, the bound).
        message: String,
    },
    /// No complete answer before the deadline: the total of one fetch
    /// ([`FetchPolicy::timeout`]) or that of the whole operation
    /// ([`FetchPolicy::operation_timeout`], [`with_deadline`]).
    #[error("{url}: no complete answer within the {scope} deadline ({} ms)", limit.as_millis())]
    Deadline {
        /// The URL being fetched.
        url: String,
        /// `"fetch"`, `"operation"`, or `"job"` (a [`FetchBudget`]'s).
        scope: &'static str,
        /// The deadline's length.
        limit: Duration,
    },
    /// The body exceeds [`FetchPolicy::max_body`].
    #[error("body of {url} exceeds {limit} bytes")]
    TooLarge {
        /// The URL.
        url: String,
        /// The cap.
        limit: usize,
    },
    /// More redirects than [`FetchPolicy::max_redirects`].
    #[error("more than {0} redirects")]
    TooManyRedirects(usize),
    /// A redirect where none is accepted (JWK Sets, metadata).
    #[error("{0} answered a redirect, which is not accepted here")]
    RedirectRefused(String),
    /// A redirect without a usable `Location`.
    #[error("redirect from {0} without a valid Location")]
    BadRedirect(String),
    /// Refused before connecting: the job's bounds ([`FetchBudget`]) are
    /// spent (requests, bytes or time).
    #[error("{url}: not fetched: {why} (catalog.budget)")]
    Budget {
        /// The URL not fetched.
        url: String,
        /// Which bound, and its value.
        why: String,
    },
    /// A status other than 2xx (and not a followed redirect).
    #[error("{url} answered HTTP {status}")]
    Status {
        /// The URL.
        url: String,
        /// The status code.
        status: u16,
    },
    /// The client could not be built (bad extra CA roots).
    #[error("HTTPS client setup failed: {0}")]
    Setup(String),
}

impl FetchError {
    /// Whether trying again later may succeed (timeouts, 5xx, DNS).
    pub fn is_transient(&self) -> bool {
        match self {
            FetchError::Transport { timeout, .. } => *timeout,
            FetchError::Deadline { .. } | FetchError::NoPermit { .. } => true,
            FetchError::Dns { .. } => true,
            FetchError::Status { status, .. } => *status >= 500 || *status == 429,
            _ => false,
        }
    }
    /// Whether a deadline or timeout ran out.
    pub fn is_timeout(&self) -> bool {
        matches!(
            self,
            FetchError::Deadline { .. }
                | FetchError::NoPermit { .. }
                | FetchError::Transport { timeout: true, .. }
        )
    }
    /// Whether the fetch waited in vain for a connection permit
    /// ([`FetchError::NoPermit`]): back-pressure of this process's gate,
    /// not a failure of the origin.
    pub fn is_no_permit(&self) -> bool {
        matches!(self, FetchError::NoPermit { .. })
    }
    /// Whether the fetch ran out of the caller's time rather than its own:
    /// the operation's deadline ([`with_deadline`],
    /// [`FetchPolicy::operation_timeout`]) or the job's ([`FetchBudget`])
    /// came before the fetch's own
    /// ([`FetchPolicy::timeout`]) and ran out. Such a failure says nothing
    /// of the origin (the fetch never had its full budget), so it is
    /// neither remembered nor shared with a fleet.
    pub fn is_caller_deadline(&self) -> bool {
        matches!(self, FetchError::Deadline { scope, .. } if *scope == "operation" || *scope == "job")
    }
    /// Whether this is an SSRF refusal (no connection was made).
    pub fn is_refusal(&self) -> bool {
        matches!(self, FetchError::Refused { .. } | FetchError::NotHttps(_))
    }
}

/// A refusal raised inside the resolver, carried through reqwest's error
/// chain and turned back into [`FetchError::Refused`].
#[derive(Debug, thiserror::Error)]
#[error("refused: {host} resolves to {class} address {addr}")]
struct ResolverRefusal {
    host: String,
    class: &'static str,
    addr: String,
}

/// Classify one resolved address.
pub fn classify_ip(ip: IpAddr) -> HostClass {
    match ip {
        IpAddr::V4(a) => classify_ipv4(a),
        IpAddr::V6(a) => classify_ipv6(a),
    }
}

/// The resolver the HTTP client uses: pins, then the system resolver; every
/// answer checked; only checked addresses returned.
#[derive(Debug)]
struct CheckingResolver {
    policy: Arc<FetchPolicy>,
}

impl CheckingResolver {
    fn lookup(policy: &FetchPolicy, host: &str) -> Result<Vec<SocketAddr>, FetchError> {
        let host = host.to_ascii_lowercase();
        let addrs: Vec<IpAddr> = match policy.pins.get(&host) {
            Some(a) => a.clone(),
            None => system_lookup(&host, policy.connect_timeout)?,
        };
        if addrs.is_empty() {
            return Err(FetchError::Dns {
                host,
                message: "no address".into(),
            });
        }
        check_addrs(policy, &host, &addrs)?;
        Ok(addrs.into_iter().map(|ip| SocketAddr::new(ip, 0)).collect())
    }
}

/// The system resolver, bounded by `timeout` (getaddrinfo has no timeout of
/// its own; a lookup that outlives it is abandoned on its thread).
fn system_lookup(host: &str, timeout: Duration) -> Result<Vec<IpAddr>, FetchError> {
    let (tx, rx) = std::sync::mpsc::channel();
    let h = host.to_owned();
    std::thread::spawn(move || {
        let r = (h.as_str(), 0u16)
            .to_socket_addrs()
            .map(|it| it.map(|s| s.ip()).collect::<Vec<_>>());
        let _ = tx.send(r);
    });
    match rx.recv_timeout(timeout) {
        Ok(Ok(a)) => Ok(a),
        Ok(Err(e)) => Err(FetchError::Dns {
            host: host.to_owned(),
            message: e.to_string(),
        }),
        Err(_) => Err(FetchError::Dns {
            host: host.to_owned(),
            message: format!("no answer within {} ms", timeout.as_millis()),
        }),
    }
}

/// Refuse `host` if any of its addresses is internal (unless opted in).
fn check_addrs(policy: &FetchPolicy, host: &str, addrs: &[IpAddr]) -> Result<(), FetchError> {
    if policy.private_ok(host) {
        return Ok(());
    }
    for ip in addrs {
        let class = classify_ip(*ip);
        if class.is_internal() {
            return Err(FetchError::Refused {
                host: host.to_owned(),
                class: class.label(),
                addr: ip.to_string(),
            });
        }
    }
    Ok(())
}

impl reqwest::dns::Resolve for CheckingResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.policy.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            match CheckingResolver::lookup(&policy, &host) {
                Ok(a) => Ok(Box::new(a.into_iter()) as reqwest::dns::Addrs),
                Err(FetchError::Refused { host, class, addr }) => {
                    Err(Box::new(ResolverRefusal { host, class, addr }) as _)
                }
                Err(e) => Err(Box::new(e) as _),
            }
        })
    }
}

/// A reqwest client builder (blocking or async) configured by `policy`:
/// HTTPS only, no proxy, no automatic redirect, the checking resolver, the
/// timeouts and the extra CA roots.
macro_rules! client_builder {
    ($builder:expr, $policy:expr) => {{
        let policy: &Arc<FetchPolicy> = &$policy;
        let mut b = $builder
            .use_rustls_tls()
            .https_only(true)
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(policy.connect_timeout)
            .timeout(policy.timeout)
            .user_agent(concat!("agentsig/", env!("CARGO_PKG_VERSION")))
            .dns_resolver(Arc::new(CheckingResolver {
                policy: policy.clone(),
            }));
        if let Some(n) = policy.max_connections_per_host {
            // Never more idle connections kept than may be open at all.
            b = b.pool_max_idle_per_host(n);
        }
        match &policy.gate {
            // Idle connections closed soon, so that the permits that cover
            // them go back to the fleet soon.
            Some(g) if g.keeps_connections() => {
                b = b.pool_idle_timeout(GATED_IDLE_TIMEOUT);
            }
            // A connection lives no longer than its permit.
            Some(_) => b = b.pool_max_idle_per_host(0),
            None => {}
        }
        let mut err = None;
        for pem in &policy.extra_roots_pem {
            match reqwest::Certificate::from_pem_bundle(pem) {
                Err(e) => err = Some(FetchError::Setup(format!("extra CA roots: {e}"))),
                Ok(certs) if certs.is_empty() => {
                    err = Some(FetchError::Setup("extra CA roots: no certificate".into()))
                }
                Ok(certs) => {
                    for c in certs {
                        b = b.add_root_certificate(c);
                    }
                }
            }
        }
        match err {
            Some(e) => Err(e),
            None => Ok(b),
        }
    }};
}

/// Most fetchers whose async client one thread keeps.
const MAX_THREAD_CLIENTS: usize = 4;

/// One thread's async client for one fetcher, on a runtime of its own.
struct ThreadClient {
    policy: std::sync::Weak<FetchPolicy>,
    rt: tokio::runtime::Runtime,
    client: reqwest::Client,
}

thread_local! {
    /// Whether fetches on this thread use its own client ([`on_thread_client`]).
    static USE_THREAD_CLIENT: Cell<bool> = const { Cell::new(false) };
    /// This thread's async clients, one per fetcher, most recent last.
    static THREAD_CLIENTS: std::cell::RefCell<Vec<ThreadClient>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Run `f` with every fetch made on this thread going through a client
/// owned by this thread (one per [`Fetcher`], kept while the thread lives):
/// the request, its connection and its body are driven on the calling
/// thread, with no hand-off to the shared client's runtime thread, and the
/// thread's connections are kept alive from one call to the next. For
/// worker threads that fetch many documents one after the other (bulk
/// verification); the policy, the SSRF guard at every hop, the deadlines
/// and the cache are the same. Ignored (the shared client is used) on a
/// thread that runs inside a tokio runtime.
pub fn on_thread_client<T>(f: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            USE_THREAD_CLIENT.with(|d| d.set(self.0));
        }
    }
    let _restore = Restore(USE_THREAD_CLIENT.with(|d| d.replace(true)));
    f()
}

/// The SSRF-guarded HTTPS client. Cheap to clone; `Send + Sync`. Clones
/// share the connection pool and the HTTP cache.
#[derive(Clone, Debug)]
pub struct Fetcher {
    client: reqwest::blocking::Client,
    policy: Arc<FetchPolicy>,
    cache: Arc<HttpCache>,
    hosts: Arc<HostSlots>,
    /// The fleet-wide second tier under `cache`, if any.
    fleet: Option<Arc<super::fleet::FleetCache>>,
    /// The fetch-policy part of this fetcher's fleet entry names
    /// ([`Fetcher::fleet_name`]).
    fleet_scope: String,
    /// The bounds of one job that every request of this fetcher (and of
    /// its clones) counts toward, if any ([`Fetcher::with_budget`]).
    budget: Option<Arc<FetchBudget>>,
}

/// The bounds of one job (a catalog verified or expanded, its entries
/// checked): how many requests, how many body bytes in all, and a
/// deadline, shared by every fetch made through a [`Fetcher`] that carries
/// it, on any thread: documents, detached JWS, key sets, metadata, DID
/// documents. A request past a bound is refused before connecting
/// ([`FetchError::Budget`]); a fresh answer from the HTTP cache costs
/// nothing.
#[derive(Debug)]
pub struct FetchBudget {
    max_fetches: usize,
    max_bytes: usize,
    deadline: Instant,
    limit: Duration,
    /// Why this job is bounded, for the refusal message (e.g. "the
    /// catalog").
    what: &'static str,
    fetches: std::sync::atomic::AtomicUsize,
    bytes: std::sync::atomic::AtomicUsize,
}

impl FetchBudget {
    /// At most `max_fetches` requests and `max_bytes` body bytes in all,
    /// within `limit` from now; `what` names the job in refusals.
    pub fn new(
        what: &'static str,
        max_fetches: usize,
        max_bytes: usize,
        limit: Duration,
    ) -> FetchBudget {
        FetchBudget {
            max_fetches,
            max_bytes,
            deadline: Instant::now() + limit,
            limit,
            what,
            fetches: Default::default(),
            bytes: Default::default(),
        }
    }

    /// Requests made (or refused) so far.
    pub fn fetches(&self) -> usize {
        self.fetches
            .load(std::sync::atomic::Ordering::SeqCst)
            .min(self.max_fetches)
    }

    /// Body bytes received so far.
    pub fn bytes(&self) -> usize {
        self.bytes.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Count `n` requests made outside this budget's fetcher (a document
    /// fetched before the job was known to be one).
    pub fn charge(&self, fetches: usize, bytes: usize) {
        use std::sync::atomic::Ordering::SeqCst;
        self.fetches.fetch_add(fetches, SeqCst);
        self.bytes.fetch_add(bytes, SeqCst);
    }

    /// Take one request from the budget, or say why not.
    fn take(&self, url: &str) -> Result<(), FetchError> {
        use std::sync::atomic::Ordering::SeqCst;
        let refuse = |why: String| FetchError::Budget {
            url: url.to_owned(),
            why,
        };
        if Instant::now() >= self.deadline {
            return Err(refuse(format!(
                "{} took longer than {} s in all",
                self.what,
                self.limit.as_secs()
            )));
        }
        if self.bytes.load(SeqCst) > self.max_bytes {
            return Err(refuse(format!(
                "more than {} bytes fetched in all for {}",
                self.max_bytes, self.what
            )));
        }
        if self.fetches.fetch_add(1, SeqCst) >= self.max_fetches {
            return Err(refuse(format!(
                "more than {} requests in all for {} (documents, detached JWS, key sets and DID documents together)",
                self.max_fetches, self.what
            )));
        }
        Ok(())
    }

    /// Count a body received.
    fn received(&self, url: &str, len: usize) -> Result<(), FetchError> {
        use std::sync::atomic::Ordering::SeqCst;
        if self.bytes.fetch_add(len, SeqCst) + len > self.max_bytes {
            return Err(FetchError::Budget {
                url: url.to_owned(),
                why: format!(
                    "more than {} bytes fetched in all for {}",
                    self.max_bytes, self.what
                ),
            });
        }
        Ok(())
    }
}

/// Fetches in flight per host (`host:port`), bounded by
/// [`FetchPolicy::max_connections_per_host`].
#[derive(Debug, Default)]
struct HostSlots {
    busy: std::sync::Mutex<HashMap<String, usize>>,
    freed: std::sync::Condvar,
}

/// One connection slot of a host, given back on drop.
struct HostSlot<'a> {
    slots: &'a HostSlots,
    host: String,
}

impl Drop for HostSlot<'_> {
    fn drop(&mut self) {
        if let Ok(mut m) = self.slots.busy.lock() {
            if let Some(n) = m.get_mut(&self.host) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    m.remove(&self.host);
                }
            }
        }
        self.slots.freed.notify_all();
    }
}

impl HostSlots {
    /// Wait until `url`'s host has fewer than `limit` fetches in flight,
    /// or the deadline passes: then [`FetchError::NoPermit`], since the
    /// origin was never asked (a holder may keep its slot past this
    /// fetch's deadline while it waits for a fleet's permit, whose wait is
    /// not counted against its own deadline). Reported as the fetch's own
    /// deadline, the wait would be charged to the origin: counted as a
    /// crawl input's failed attempt and shared with a fleet as the
    /// origin's failure.
    fn acquire(
        &self,
        url: &reqwest::Url,
        limit: usize,
        dl: &Deadline,
    ) -> Result<HostSlot<'_>, FetchError> {
        let host = format!(
            "{}:{}",
            url.host_str().unwrap_or_default(),
            url.port_or_known_default().unwrap_or(443)
        );
        let poisoned = || FetchError::Setup("connection bound lock poisoned".into());
        let start = Instant::now();
        let mut m = self.busy.lock().map_err(|_| poisoned())?;
        while m.get(&host).copied().unwrap_or(0) >= limit {
            let remaining = dl.remaining();
            if remaining.is_zero() {
                return Err(FetchError::NoPermit {
                    url: url.to_string(),
                    message: format!(
                        "{host}: no free connection within the deadline ({} ms waited; at most {limit} open to one host from this process)",
                        start.elapsed().as_millis()
                    ),
                });
            }
            m = self
                .freed
                .wait_timeout(m, remaining)
                .map_err(|_| poisoned())?
                .0;
        }
        *m.entry(host.clone()).or_insert(0) += 1;
        Ok(HostSlot { slots: self, host })
    }
}

impl Fetcher {
    /// A fetcher with the default (strict) policy.
    ///
    /// # Errors
    /// [`FetchError`] when the HTTPS client cannot be built (TLS roots, client configuration).
    pub fn new() -> Result<Fetcher, FetchError> {
        Fetcher::with_policy(FetchPolicy::default())
    }

    /// A fetcher with `policy`.
    ///
    /// # Errors
    /// [`FetchError`] when the HTTPS client cannot be built (TLS roots, client configuration).
    pub fn with_policy(policy: FetchPolicy) -> Result<Fetcher, FetchError> {
        let policy = Arc::new(policy);
        let client = client_builder!(reqwest::blocking::Client::builder(), policy)?
            .build()
            .map_err(|e| FetchError::Setup(e.to_string()))?;
        let cache = Arc::new(HttpCache::new(policy.cache.clone()));
        Ok(Fetcher {
            client,
            policy,
            cache,
            hosts: Arc::default(),
            fleet: None,
            budget: None,
            fleet_scope: String::new(),
        })
    }

    /// This thread's own async client for this fetcher (see
    /// [`on_thread_client`]), built on first use.
    fn thread_client<T>(
        &self,
        f: impl FnOnce(&tokio::runtime::Runtime, &reqwest::Client) -> T,
    ) -> Result<T, FetchError> {
        THREAD_CLIENTS.with(|cell| {
            let mut clients = cell
                .try_borrow_mut()
                .map_err(|_| FetchError::Setup("thread client in use".into()))?;
            let found = clients.iter().position(|c| {
                // The weak reference keeps the policy's allocation, so an
                // equal pointer is this very policy, never a later one.
                std::ptr::eq(c.policy.as_ptr(), Arc::as_ptr(&self.policy))
            });
            let i = match found {
                Some(i) => i,
                None => {
                    let rt = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .map_err(|e| FetchError::Setup(e.to_string()))?;
                    let client = client_builder!(reqwest::Client::builder(), self.policy)?
                        .build()
                        .map_err(|e| FetchError::Setup(e.to_string()))?;
                    if clients.len() >= MAX_THREAD_CLIENTS {
                        clients.remove(0);
                    }
                    clients.push(ThreadClient {
                        policy: Arc::downgrade(&self.policy),
                        rt,
                        client,
                    });
                    clients.len() - 1
                }
            };
            let c = &clients[i];
            Ok(f(&c.rt, &c.client))
        })
    }

    /// The policy in force.
    pub fn policy(&self) -> &FetchPolicy {
        &self.policy
    }

    /// Run `f` (one operation: a `verify URL`, a `resolve`) with every
    /// fetch on this thread bounded by [`FetchPolicy::operation_timeout`]
    /// from now, as well as by its own [`FetchPolicy::timeout`].
    pub fn operation<T>(&self, f: impl FnOnce() -> T) -> T {
        with_deadline(Instant::now() + self.policy.operation_timeout, f)
    }

    /// Check a URL before connecting: scheme, host text, IP literal.
    /// Names are checked again, address by address, at resolution.
    ///
    /// # Errors
    /// [`FetchError`] when the URL is not `https`, resolves to a refused address (the SSRF guard),
    /// a redirect is refused, the deadline passes, the body is too large, or the server answers
    /// other than 2xx.
    pub fn precheck(&self, url: &str) -> Result<reqwest::Url, FetchError> {
        let u = reqwest::Url::parse(url).map_err(|e| FetchError::BadUrl(format!("{url}: {e}")))?;
        if u.scheme() != "https" {
            return Err(FetchError::NotHttps(u.scheme().to_owned()));
        }
        if !u.username().is_empty() || u.password().is_some() {
            return Err(FetchError::BadUrl(format!("{url}: credentials in URL")));
        }
        let (host, class) = match u.host() {
            None => return Err(FetchError::BadUrl(format!("{url}: no host"))),
            Some(url::Host::Domain(d)) => (d.to_ascii_lowercase(), classify_host(d)),
            Some(url::Host::Ipv4(a)) => (a.to_string(), classify_ipv4(a)),
            Some(url::Host::Ipv6(a)) => (format!("[{a}]"), classify_ipv6(a)),
        };
        if class == HostClass::Invalid {
            return Err(FetchError::BadUrl(format!("{url}: invalid host")));
        }
        if class.is_internal() && !self.policy.private_ok(&host) {
            return Err(FetchError::Refused {
                addr: host.clone(),
                host,
                class: class.label(),
            });
        }
        Ok(u)
    }

    /// GET `url` (HTTPS, redirects checked, body capped).
    ///
    /// # Errors
    /// [`FetchError`] when the URL is not `https`, resolves to a refused address (the SSRF guard),
    /// a redirect is refused, the deadline passes, the body is too large, or the server answers
    /// other than 2xx.
    pub fn get(&self, url: &str) -> Result<Fetched, FetchError> {
        self.get_with(url, &[])
    }

    /// GET `url` with extra request header fields (`Accept`,
    /// `If-None-Match`, ...). A 304 is returned as is (for revalidation).
    ///
    /// # Errors
    /// [`FetchError`] when the URL is not `https`, resolves to a refused address (the SSRF guard),
    /// a redirect is refused, the deadline passes, the body is too large, or the server answers
    /// other than 2xx.
    pub fn get_with(&self, url: &str, headers: &[(&str, &str)]) -> Result<Fetched, FetchError> {
        self.fetch(url, headers, true, self.policy.max_body)
    }

    /// [`Fetcher::get_with`] with its own body cap, `max_body` bytes,
    /// instead of [`FetchPolicy::max_body`]: for the one kind of document
    /// whose format allows more than the fetcher's default (an AI Catalog,
    /// up to [`crate::catalog::MAX_CATALOG_BYTES`]), so that its limit is
    /// the same fetched as read from a file without raising the cap of
    /// every other fetch (descriptors, key sets, metadata).
    ///
    /// # Errors
    /// As [`Fetcher::get_with`]; a body above `max_body` is
    /// [`FetchError::TooLarge`] naming `max_body`.
    pub fn get_with_limit(
        &self,
        url: &str,
        headers: &[(&str, &str)],
        max_body: usize,
    ) -> Result<Fetched, FetchError> {
        self.fetch(url, headers, true, max_body)
    }

    /// GET `url` without following any redirect: a 3xx is
    /// [`FetchError::RedirectRefused`]. JWK Sets are fetched this way (a
    /// JWKS endpoint answers 200 or is not used, as panva/jose does).
    ///
    /// # Errors
    /// [`FetchError`] when the URL is not `https`, resolves to a refused address (the SSRF guard),
    /// a redirect is refused, the deadline passes, the body is too large, or the server answers
    /// other than 2xx.
    pub fn get_exact(&self, url: &str, headers: &[(&str, &str)]) -> Result<Fetched, FetchError> {
        self.fetch(url, headers, false, self.policy.max_body)
    }

    /// GET `url` through the RFC 9111 cache (see [`super::cache`]): a fresh
    /// stored response is returned without asking the origin
    /// ([`CacheStatus::Fresh`]), a stale one with validators is revalidated
    /// ([`CacheStatus::Revalidated`] on 304), anything else is fetched
    /// and stored when the response allows it. A remembered 404 or 410 is
    /// returned as [`FetchError::Status`] again. The caller verifies what
    /// it gets, every time: the cache only saves round trips.
    ///
    /// # Errors
    /// [`FetchError`] when the URL is not `https`, resolves to a refused address (the SSRF guard),
    /// a redirect is refused, the deadline passes, the body is too large, or the server answers
    /// other than 2xx.
    pub fn get_cached(&self, url: &str, headers: &[(&str, &str)]) -> Result<Fetched, FetchError> {
        self.cached(url, headers, true)
    }

    /// [`Fetcher::get_cached`] without following any redirect: a 3xx is
    /// [`FetchError::RedirectRefused`] and no other URL is requested (key
    /// directories must answer 200 at the URL named, Web Bot Auth
    /// discovery).
    ///
    /// # Errors
    /// As [`Fetcher::get_exact`].
    pub fn get_cached_exact(
        &self,
        url: &str,
        headers: &[(&str, &str)],
    ) -> Result<Fetched, FetchError> {
        self.cached(url, headers, false)
    }

    /// Share fetched documents with the other verifiers of a fleet through
    /// `fleet`, a second tier under this fetcher's RFC 9111 cache (see
    /// [`super::fleet`]): [`Fetcher::get_cached`] and
    /// [`Fetcher::get_cached_exact`] (Web Bot Auth directories,
    /// `Signature-Key` documents, DID documents, registries) and key
    /// discovery (RFC 8414 / RFC 9728 metadata, JWK Sets) then ask the
    /// origin once per freshness lifetime for the whole fleet. Clones made
    /// before this call do not share it.
    #[must_use]
    ///
    /// An entry is shared only between fetchers whose policy would fetch
    /// the same thing: the extra CA roots, the pinned addresses
    /// (`--resolve-to`) and the internal addresses allowed are part of its
    /// key (see [`Fetcher::fleet_name`]).
    pub fn with_fleet_cache(mut self, fleet: Arc<super::fleet::FleetCache>) -> Fetcher {
        self.fleet_scope = super::fleet::policy_scope(&self.policy);
        self.fleet = Some(fleet);
        self
    }

    /// The name this fetcher's fleet cache entry (and fetch lock) for `url`
    /// is stored under: `url` itself under the default fetch policy; under
    /// a policy with extra CA roots, pinned addresses or internal
    /// addresses allowed, a digest of those, a space, and `url`, so that
    /// verifiers whose fetches could differ never share an entry.
    pub fn fleet_name(&self, url: &str) -> String {
        super::fleet::scoped(url, &self.fleet_scope)
    }

    /// Share `f`, the answer to `headers` asked at `requested` outside
    /// the cache (a forced refetch), with the fleet cache, if any.
    pub(crate) fn share(
        &self,
        url: &str,
        headers: &[(&str, &str)],
        f: &Fetched,
        requested: Instant,
    ) {
        if let Some(fleet) = &self.fleet {
            fleet.offer(
                url,
                &self.fleet_scope,
                headers,
                f,
                requested,
                &self.policy.cache,
            );
        }
    }

    /// The fleet cache in use, if any.
    pub fn fleet_cache(&self) -> Option<&Arc<super::fleet::FleetCache>> {
        self.fleet.as_ref()
    }

    /// A clone whose every request (and every request of its own clones)
    /// counts toward `budget` ([`FetchBudget`]): the bounds of one job
    /// whatever part of it fetches. The connection pool and HTTP cache
    /// stay shared.
    #[must_use]
    pub fn with_budget(&self, budget: Arc<FetchBudget>) -> Fetcher {
        let mut f = self.clone();
        f.budget = Some(budget);
        f
    }

    /// The job budget this fetcher counts toward, if any.
    pub fn budget(&self) -> Option<&Arc<FetchBudget>> {
        self.budget.as_ref()
    }

    fn cached(
        &self,
        url: &str,
        headers: &[(&str, &str)],
        follow: bool,
    ) -> Result<Fetched, FetchError> {
        if !self.cache.enabled() && self.fleet.is_none() {
            return self.fetch(url, headers, follow, self.policy.max_body);
        }
        let local = self.cache.lookup(url, headers);
        if let Lookup::Fresh(f) = &local {
            return served(f);
        }
        let Some(fleet) = &self.fleet else {
            return self.ask_origin(url, headers, follow, local);
        };
        let lock = match self.fleet_turn(fleet, url, headers) {
            Turn::Answered(r) => return r,
            Turn::Fetch(lock) => lock,
        };
        let requested = Instant::now();
        let r = self.ask_origin(url, headers, follow, local);
        match &r {
            Ok(f) => fleet.offer(
                url,
                &self.fleet_scope,
                headers,
                f,
                requested,
                &self.policy.cache,
            ),
            Err(e) => {
                if let Some(f) = shared_failure(e) {
                    fleet.offer_failure(url, &self.fleet_scope, f);
                }
            }
        }
        if let Some(t) = lock {
            fleet.unlock(url, &self.fleet_scope, &t);
        }
        r
    }

    /// Wait for this process's turn to fetch `url` for the fleet: a fresh
    /// shared entry or a shared failure answers at once; otherwise the
    /// fetch lock is taken, or, while another process holds it, the store
    /// is read again every [`FleetPolicy::poll`](super::fleet::FleetPolicy::poll),
    /// for at most the lock's own lifetime under this fetcher's policy
    /// (its fetch budget, [`FetchPolicy::timeout`], and a second): a
    /// holder that has not stored an answer by then (hung, or a lock set
    /// to outlast any fetch) is ignored and this process fetches without
    /// the lock, within the deadline in force. The store failing means fetching without it.
    fn fleet_turn(
        &self,
        fleet: &super::fleet::FleetCache,
        url: &str,
        headers: &[(&str, &str)],
    ) -> Turn {
        use super::fleet::Shared;
        let deadline =
            current_deadline().unwrap_or_else(|| Instant::now() + self.policy.operation_timeout);
        // The holder's fetch ends within its own deadline; the lock outlives
        // it by a second, and expires by itself if the holder died.
        let lock_ttl = self.policy.timeout + Duration::from_secs(1);
        let mut waiting_since = None;
        loop {
            match fleet.lookup(url, &self.fleet_scope, headers) {
                None => return Turn::Fetch(None),
                Some(Shared::Fresh(f)) => {
                    self.cache.store(&f, headers, Instant::now());
                    return Turn::Answered(served(&f));
                }
                Some(Shared::Failed(f)) => return Turn::Answered(Err(from_shared(url, f))),
                Some(Shared::Miss) => {}
            }
            match fleet.try_lock(url, &self.fleet_scope, lock_ttl) {
                None => return Turn::Fetch(None),
                Some(Some(t)) => return Turn::Fetch(Some(t)),
                Some(None) => {}
            }
            let since = *waiting_since.get_or_insert_with(|| {
                fleet.waited();
                Instant::now()
            });
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Turn::Answered(Err(FetchError::Deadline {
                    url: url.to_owned(),
                    scope: "operation",
                    limit: operation_deadline().map_or(self.policy.operation_timeout, |d| d.limit),
                }));
            }
            if since.elapsed() >= lock_ttl {
                return Turn::Fetch(None);
            }
            std::thread::sleep(fleet.fleet_policy().poll.min(left));
        }
    }

    /// Ask the origin for `url`, conditionally when the local cache holds
    /// a stale response with validators, and store the answer locally.
    fn ask_origin(
        &self,
        url: &str,
        headers: &[(&str, &str)],
        follow: bool,
        local: Lookup,
    ) -> Result<Fetched, FetchError> {
        let (etag, last_modified) = match local {
            Lookup::Stale {
                etag,
                last_modified,
            } => (etag, last_modified),
            Lookup::Fresh(_) | Lookup::Miss => (None, None),
        };
        let requested = Instant::now();
        let mut h = headers.to_vec();
        if let Some(e) = &etag {
            h.push(("if-none-match", e));
        } else if let Some(l) = &last_modified {
            // Section 4.3.1: If-Modified-Since only without an entity tag.
            h.push(("if-modified-since", l));
        }
        let f = match self.fetch(url, &h, follow, self.policy.max_body) {
            Ok(f) => f,
            Err(FetchError::Status { url: u, status }) if matches!(status, 404 | 410) => {
                if u == url {
                    let gone = Fetched {
                        url: u.clone(),
                        status,
                        headers: http::HeaderMap::new(),
                        body: Vec::new(),
                        redirects: Vec::new(),
                        cache: CacheStatus::Network,
                    };
                    self.cache.store(&gone, headers, requested);
                }
                return Err(FetchError::Status { url: u, status });
            }
            Err(e) => return Err(e),
        };
        if f.status == 304 {
            if f.redirects.is_empty() {
                if let Some(mut got) = self.cache.freshen(url, &f, headers, requested) {
                    got.cache = CacheStatus::Revalidated;
                    return Ok(got);
                }
            }
            // Not usable: ask again without conditions.
            let requested = Instant::now();
            let f = self.fetch(url, headers, follow, self.policy.max_body)?;
            if f.status == 304 {
                return Err(FetchError::Status {
                    url: f.url,
                    status: 304,
                });
            }
            self.cache.store(&f, headers, requested);
            return Ok(f);
        }
        self.cache.store(&f, headers, requested);
        Ok(f)
    }

    /// A fresh cached answer for `url`, without any network access; `None`
    /// when the origin would have to be asked.
    pub(crate) fn fresh_cached(
        &self,
        url: &str,
        headers: &[(&str, &str)],
    ) -> Option<Result<Fetched, FetchError>> {
        match self.cache.lookup(url, headers) {
            Lookup::Fresh(f) => Some(served(&f)),
            _ => None,
        }
    }

    /// One GET, its body capped at `limit` bytes, counted toward the job
    /// budget if any ([`Fetcher::with_budget`]).
    fn fetch(
        &self,
        url: &str,
        headers: &[(&str, &str)],
        follow: bool,
        limit: usize,
    ) -> Result<Fetched, FetchError> {
        let Some(budget) = &self.budget else {
            return self.fetch_unbudgeted(url, headers, follow, limit);
        };
        budget.take(url)?;
        let f = self.fetch_unbudgeted(url, headers, follow, limit)?;
        budget.received(url, f.body.len())?;
        Ok(f)
    }

    fn fetch_unbudgeted(
        &self,
        url: &str,
        headers: &[(&str, &str)],
        follow: bool,
        limit: usize,
    ) -> Result<Fetched, FetchError> {
        let mut current = self.precheck(url)?;
        let mut dl = self.deadline();
        let bound = self.policy.max_connections_per_host;
        if bound.is_none()
            && self.policy.gate.is_none()
            && USE_THREAD_CLIENT.with(Cell::get)
            && tokio::runtime::Handle::try_current().is_err()
        {
            return self.thread_client(|rt, client| {
                rt.block_on(self.fetch_async(client, current, headers, follow, &dl, limit))
            })?;
        }
        let mut redirects = Vec::new();
        loop {
            if dl.remaining().is_zero() {
                return Err(dl.error(&current));
            }
            let waiting = Instant::now();
            // Held until the body is read (the connection is then back in
            // the pool, or closed).
            let _slot = match bound {
                Some(n) => Some(self.hosts.acquire(&current, n, &dl)?),
                None => None,
            };
            let mut permit = match &self.policy.gate {
                Some(g) => Some(self.permit(g.as_ref(), &current, &dl)?),
                None => None,
            };
            // The wait for a connection slot or permit is not the origin's
            // time: the fetch's own deadline moves by it (never past the
            // operation's or the job's), so that a deadline met at the
            // origin always means the origin had its full
            // FetchPolicy::timeout, and may be remembered as its failure.
            dl = dl.after_wait(waiting.elapsed(), self.deadline());
            // A per-request timeout is a total deadline in reqwest (the
            // client-wide one bounds each read only).
            let mut req = self.client.get(current.clone()).timeout(dl.remaining());
            for (k, v) in headers {
                req = req.header(*k, *v);
            }
            if permit.as_ref().is_some_and(|p| !p.keep_alive()) {
                req = req.header(reqwest::header::CONNECTION, "close");
            }
            let mut resp = req.send().map_err(|e| dl.map(&current, &e))?;
            let status = resp.status();
            if let Some(p) = permit.as_mut() {
                let ra = resp.headers().get(reqwest::header::RETRY_AFTER);
                p.answered(status.as_u16(), ra.and_then(|v| v.to_str().ok()));
            }
            if bound.is_some() && !status.is_success() {
                drain_small(&mut resp);
            }
            if let Some(next) =
                self.redirect(&current, status, resp.headers(), follow, &mut redirects)?
            {
                current = next;
                continue;
            }
            self.check_head(&current, status, resp.content_length(), limit)?;
            let hdrs = resp.headers().clone();
            let mut body = Vec::new();
            let mut reader = resp.take(limit as u64 + 1);
            let mut chunk = [0u8; 16 * 1024];
            loop {
                let n = match reader.read(&mut chunk) {
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) if dl.reached() => return Err(dl.error(&current)),
                    Err(e) => {
                        return Err(FetchError::Transport {
                            url: current.to_string(),
                            message: e.to_string(),
                            timeout: e.kind() == std::io::ErrorKind::TimedOut,
                        })
                    }
                };
                if n == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..n]);
                // Checked after every read, whatever the transport does.
                if dl.reached() {
                    return Err(dl.error(&current));
                }
            }
            return self.done(current, status, hdrs, body, redirects, limit);
        }
    }

    /// A permit of `gate` to connect to `url`'s host, within the deadline.
    fn permit(
        &self,
        gate: &dyn ConnectionGate,
        url: &reqwest::Url,
        dl: &Deadline,
    ) -> Result<Box<dyn ConnectionPermit>, FetchError> {
        // `host:port`, in one string of its final size (one per fetch).
        let name = url.host_str().unwrap_or_default();
        let mut host = String::with_capacity(name.len() + 6);
        host.push_str(name);
        host.push(':');
        let _ = std::fmt::Write::write_fmt(
            &mut host,
            format_args!("{}", url.port_or_known_default().unwrap_or(443)),
        );
        gate.acquire(&host, dl.at)
            .map_err(|message| FetchError::NoPermit {
                url: url.to_string(),
                message,
            })
    }

    /// [`Fetcher::fetch`] on this thread's own async client
    /// ([`on_thread_client`]): the same hops, checks and deadline.
    async fn fetch_async(
        &self,
        client: &reqwest::Client,
        mut current: reqwest::Url,
        headers: &[(&str, &str)],
        follow: bool,
        dl: &Deadline,
        limit: usize,
    ) -> Result<Fetched, FetchError> {
        let mut redirects = Vec::new();
        loop {
            let remaining = dl.remaining();
            if remaining.is_zero() {
                return Err(dl.error(&current));
            }
            // The per-request timeout bounds the whole exchange, body
            // included; the deadline is also checked after every chunk.
            let mut req = client.get(current.clone()).timeout(remaining);
            for (k, v) in headers {
                req = req.header(*k, *v);
            }
            let mut resp = req.send().await.map_err(|e| dl.map(&current, &e))?;
            let status = resp.status();
            if let Some(next) =
                self.redirect(&current, status, resp.headers(), follow, &mut redirects)?
            {
                current = next;
                continue;
            }
            self.check_head(&current, status, resp.content_length(), limit)?;
            let hdrs = std::mem::take(resp.headers_mut());
            let mut body = Vec::with_capacity(
                resp.content_length()
                    .map_or(0, |n| usize::try_from(n).unwrap_or(limit).min(limit)),
            );
            while let Some(chunk) = resp.chunk().await.map_err(|e| dl.map(&current, &e))? {
                if body.len() + chunk.len() > limit {
                    return Err(FetchError::TooLarge {
                        url: current.to_string(),
                        limit,
                    });
                }
                body.extend_from_slice(&chunk);
                if dl.reached() {
                    return Err(dl.error(&current));
                }
            }
            return self.done(current, status, hdrs, body, redirects, limit);
        }
    }

    /// The deadline of a fetch starting now: its own, or the operation's
    /// when that comes first. The fetch counts as having had its full
    /// budget (scope `"fetch"`, a failure the origin may be blamed for)
    /// when the operation leaves it at least 95 % of its own time: a
    /// caller whose deadline equals the fetch timeout, set a moment
    /// before the fetch starts, does not make every timeout its own.
    fn deadline(&self) -> Deadline {
        let own = Instant::now() + self.policy.timeout;
        if let Some(b) = self.budget.as_ref().filter(|b| b.deadline < own) {
            if current_deadline().is_none_or(|op| b.deadline <= op) {
                return Deadline {
                    at: b.deadline,
                    scope: "job",
                    limit: b.limit,
                };
            }
        }
        match operation_deadline() {
            Some(op) if op.at < own => {
                let (scope, limit) = if op.at + self.policy.timeout / 20 < own {
                    ("operation", op.limit)
                } else {
                    ("fetch", self.policy.timeout)
                };
                Deadline {
                    at: op.at,
                    scope,
                    limit,
                }
            }
            _ => Deadline {
                at: own,
                scope: "fetch",
                limit: self.policy.timeout,
            },
        }
    }

    /// For a redirect: the next URL (checked like the first), or an error
    /// when it is refused; `None` for any other status.
    fn redirect(
        &self,
        current: &reqwest::Url,
        status: http::StatusCode,
        headers: &http::HeaderMap,
        follow: bool,
        redirects: &mut Vec<Redirect>,
    ) -> Result<Option<reqwest::Url>, FetchError> {
        if !status.is_redirection() || status.as_u16() == 304 {
            return Ok(None);
        }
        if !follow {
            return Err(FetchError::RedirectRefused(current.to_string()));
        }
        if redirects.len() >= self.policy.max_redirects {
            return Err(FetchError::TooManyRedirects(self.policy.max_redirects));
        }
        let loc = headers
            .get(http::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| FetchError::BadRedirect(current.to_string()))?;
        let next = current
            .join(loc)
            .map_err(|_| FetchError::BadRedirect(current.to_string()))?;
        let next = self.precheck(next.as_str())?;
        redirects.push(Redirect {
            from: current.to_string(),
            to: next.to_string(),
            authority_changed: next.host_str() != current.host_str()
                || next.port_or_known_default() != current.port_or_known_default(),
        });
        Ok(Some(next))
    }

    /// The status is 2xx or 304 and the announced length within the cap.
    fn check_head(
        &self,
        current: &reqwest::Url,
        status: http::StatusCode,
        content_length: Option<u64>,
        limit: usize,
    ) -> Result<(), FetchError> {
        if !status.is_success() && status.as_u16() != 304 {
            return Err(FetchError::Status {
                url: current.to_string(),
                status: status.as_u16(),
            });
        }
        if content_length.is_some_and(|n| n > limit as u64) {
            return Err(FetchError::TooLarge {
                url: current.to_string(),
                limit,
            });
        }
        Ok(())
    }

    /// The fetched document, once its body is within the cap.
    fn done(
        &self,
        current: reqwest::Url,
        status: http::StatusCode,
        headers: http::HeaderMap,
        body: Vec<u8>,
        redirects: Vec<Redirect>,
        limit: usize,
    ) -> Result<Fetched, FetchError> {
        if body.len() > limit {
            return Err(FetchError::TooLarge {
                url: current.to_string(),
                limit,
            });
        }
        Ok(Fetched {
            url: current.into(),
            status: status.as_u16(),
            headers,
            body,
            redirects,
            cache: CacheStatus::Network,
        })
    }
}

/// Largest body of an error answer read to keep its connection for reuse.
const DRAIN_LIMIT: u64 = 16 * 1024;

/// Read the body of an answer that will not be used (a redirect, a 404)
/// when it announces at most [`DRAIN_LIMIT`] bytes: a connection whose
/// answer was read to the end goes back to the pool (RFC 9112 section 9.3,
/// persistence) instead of being closed half-read. Bounded by the fetch's
/// own timeout; a larger or unannounced body is left and its connection
/// closed when the answer is dropped.
fn drain_small(resp: &mut reqwest::blocking::Response) {
    if resp.content_length().is_some_and(|n| n <= DRAIN_LIMIT) {
        let _ = std::io::copy(&mut resp.by_ref().take(DRAIN_LIMIT), &mut std::io::sink());
    }
}

/// The deadline one fetch runs under.
struct Deadline {
    at: Instant,
    scope: &'static str,
    limit: Duration,
}

impl Deadline {
    /// This deadline moved by `waited` (time spent waiting for a
    /// connection slot or permit, not at the origin), or `fresh` (the
    /// deadline of a fetch starting now, which the operation's and the
    /// job's bound) when that comes first.
    fn after_wait(self, waited: Duration, fresh: Deadline) -> Deadline {
        match self.at.checked_add(waited) {
            Some(at) if at < fresh.at => Deadline { at, ..self },
            _ => fresh,
        }
    }
    fn remaining(&self) -> Duration {
        self.at.saturating_duration_since(Instant::now())
    }
    /// Reached, give or take the timer's granularity.
    fn reached(&self) -> bool {
        self.remaining() <= Duration::from_millis(20)
    }
    /// A client error, as the deadline error when the deadline ran out.
    fn map(&self, url: &reqwest::Url, e: &reqwest::Error) -> FetchError {
        if e.is_timeout() && self.reached() {
            self.error(url)
        } else {
            map_reqwest(url.as_str(), e)
        }
    }
    fn error(&self, url: &reqwest::Url) -> FetchError {
        FetchError::Deadline {
            url: url.to_string(),
            scope: self.scope,
            limit: self.limit,
        }
    }
}

/// What [`Fetcher::fleet_turn`] decided.
enum Turn {
    /// The fleet answered (a fresh entry, a shared failure, the deadline).
    Answered(Result<Fetched, FetchError>),
    /// Fetch from the origin, holding the fleet's lock when `Some`.
    Fetch(Option<crate::replay::blob::LockToken>),
}

/// A failure at the origin as the fleet cache shares it; `None` for a
/// refusal made before connecting (the SSRF guard, a URL that is not
/// https), which is this process's own policy, and for a fetch cut short
/// by the caller's operation deadline ([`FetchError::is_caller_deadline`])
/// or that never got a connection permit ([`FetchError::NoPermit`]):
/// only a failure the origin caused within the fetch's own full budget is
/// shared, or one slow document met first would make every verifier of
/// the fleet fail the next one.
fn shared_failure(e: &FetchError) -> Option<super::fleet::Failure> {
    if e.is_refusal()
        || e.is_caller_deadline()
        || matches!(
            e,
            FetchError::BadUrl(_)
                | FetchError::NotHttps(_)
                | FetchError::Budget { .. }
                | FetchError::NoPermit { .. }
        )
    {
        return None;
    }
    let (status, too_large) = match e {
        FetchError::Status { status, .. } => (Some(*status), None),
        FetchError::TooLarge { limit, .. } => (None, Some(*limit)),
        _ => (None, None),
    };
    Some(super::fleet::Failure {
        status,
        timeout: e.is_timeout(),
        too_large,
        message: e.to_string(),
    })
}

/// The error a shared failure stands for, of the same kind as the one the
/// process that met it saw, so that callers classify it alike.
fn from_shared(url: &str, f: super::fleet::Failure) -> FetchError {
    if let Some(status) = f.status {
        return FetchError::Status {
            url: url.to_owned(),
            status,
        };
    }
    if let Some(limit) = f.too_large {
        return FetchError::TooLarge {
            url: url.to_owned(),
            limit,
        };
    }
    FetchError::Transport {
        url: url.to_owned(),
        message: format!(
            "another verifier of the fleet failed to fetch it less than the failure interval ago: {}",
            crate::text::escape_controls(&f.message)
        ),
        timeout: f.timeout,
    }
}

/// A stored response as the caller sees it.
fn served(f: &Fetched) -> Result<Fetched, FetchError> {
    if f.status != 200 {
        return Err(FetchError::Status {
            url: f.url.clone(),
            status: f.status,
        });
    }
    let mut out = f.clone();
    out.cache = CacheStatus::Fresh;
    Ok(out)
}

/// What to do about a TLS failure a local trial meets: a certificate from
/// a local CA (rustls `UnknownIssuer`), a server speaking plain HTTP.
fn transport_hint(message: &str) -> &'static str {
    if message.contains("UnknownIssuer") {
        "; the server's certificate is issued by a CA this verifier does not trust: for a local CA, give its certificate with --ca-file FILE (AGENTSIG_CA_FILE)"
    } else if message.contains("InvalidContentType") {
        "; the server does not speak TLS: agentsig fetches over HTTPS only (serve with --tls-cert and --tls-key)"
    } else {
        ""
    }
}

/// Turn a reqwest error back into a typed error, finding a resolver refusal
/// or DNS failure in its source chain.
fn map_reqwest(url: &str, e: &reqwest::Error) -> FetchError {
    let mut src: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = src {
        if let Some(r) = s.downcast_ref::<ResolverRefusal>() {
            return FetchError::Refused {
                host: r.host.clone(),
                class: r.class,
                addr: r.addr.clone(),
            };
        }
        if let Some(f) = s.downcast_ref::<FetchError>() {
            return f.clone();
        }
        src = s.source();
    }
    let mut message = e.to_string();
    let mut s = std::error::Error::source(e);
    while let Some(inner) = s {
        message.push_str(": ");
        message.push_str(&inner.to_string());
        s = inner.source();
    }
    message.push_str(transport_hint(&message));
    FetchError::Transport {
        url: url.to_owned(),
        message,
        timeout: e.is_timeout(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Time spent waiting for a permit moves the fetch's own deadline, so a
    /// deadline met at the origin means the origin had its whole budget;
    /// never past the operation's deadline, which then names its scope.
    #[test]
    fn a_wait_for_a_permit_is_not_the_origins_time() {
        let now = Instant::now();
        let own = |at: Instant| Deadline {
            at,
            scope: "fetch",
            limit: Duration::from_secs(10),
        };
        let moved = own(now).after_wait(Duration::from_secs(9), own(now + Duration::from_secs(30)));
        assert_eq!(
            (moved.at, moved.scope),
            (now + Duration::from_secs(9), "fetch")
        );
        let op = Deadline {
            at: now + Duration::from_secs(4),
            scope: "operation",
            limit: Duration::from_secs(30),
        };
        let capped = own(now).after_wait(Duration::from_secs(9), op);
        assert_eq!(
            (capped.at, capped.scope),
            (now + Duration::from_secs(4), "operation")
        );
        let none = own(now).after_wait(Duration::ZERO, own(now + Duration::from_secs(1)));
        assert_eq!(none.at, now);
    }

    /// A failure met at the origin is shared with the fleet and comes back
    /// as an error of the same kind; a refusal before connecting is this
    /// process's own policy and is not shared.
    #[test]
    fn origin_failures_are_shared_as_their_kind_and_refusals_are_not() {
        let u = "https://agent.example/k";
        let refused = FetchError::Refused {
            host: "agent.example".into(),
            class: "loopback",
            addr: "127.0.0.1".into(),
        };
        assert_eq!(shared_failure(&refused), None);
        assert_eq!(shared_failure(&FetchError::NotHttps("http".into())), None);
        // No permit of the gate came: the origin was never asked.
        let no_permit = FetchError::NoPermit {
            url: u.into(),
            message: "agent.example:443: no connection permit within the deadline".into(),
        };
        assert!(no_permit.is_transient() && no_permit.is_no_permit());
        assert_eq!(shared_failure(&no_permit), None);
        let timeout = FetchError::Deadline {
            url: u.into(),
            scope: "fetch",
            limit: Duration::from_secs(1),
        };
        let back = from_shared(u, shared_failure(&timeout).unwrap());
        assert!(back.is_timeout(), "{back}");
        let status = FetchError::Status {
            url: u.into(),
            status: 503,
        };
        assert!(matches!(
            from_shared(u, shared_failure(&status).unwrap()),
            FetchError::Status { status: 503, .. }
        ));
    }
}
