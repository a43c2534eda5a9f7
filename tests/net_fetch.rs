//! The SSRF-guarded fetcher. Every refusal is proven to
//! happen before a connection: the loopback listener's accept counter stays
//! at zero.
#![cfg(feature = "net")]

mod net_support;

use agentsig::net::{FetchError, FetchPolicy, Fetcher};
use net_support::{loopback, Ca, Resp, Server};
use std::net::IpAddr;

fn strict(ca: &Ca) -> FetchPolicy {
    FetchPolicy::default().extra_root_pem(ca.pem())
}

fn assert_refused(r: Result<agentsig::net::Fetched, FetchError>, what: &str) {
    match r {
        Err(e @ FetchError::Refused { .. }) => assert!(e.is_refusal()),
        other => panic!("{what}: expected an SSRF refusal, got {other:?}"),
    }
}

/// Every address range of draft-narvaneni-agent-uri-03 section 5.2 and the other non-routable
/// ones, as IP literals and as DNS answers for a public-looking name.
#[test]
fn every_internal_range_refused_without_connection() {
    let ca = Ca::new();
    let srv = Server::start(&ca, &["public.example"]);
    let literals = [
        "10.0.0.1",
        "10.255.255.255",
        "172.16.0.1",
        "172.31.255.254",
        "192.168.0.1",
        "127.0.0.1",
        "127.1.2.3",
        "169.254.169.254",
        "0.0.0.0",
        "0.1.2.3",
        "100.64.0.1",
        "100.127.255.254",
        "224.0.0.1",
        "239.255.255.250",
        "255.255.255.255",
        "240.0.0.1",
        "192.0.2.1",
        "198.51.100.1",
        "203.0.113.1",
        "198.18.0.1",
        "::1",
        "::",
        "fc00::1",
        "fdff::1",
        "fe80::1",
        "ff02::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "::ffff:169.254.169.254",
        "64:ff9b::7f00:1",
        "64:ff9b::a9fe:a9fe",
        "2001:db8::1",
        // RFC 3056 6to4 embedding 127.0.0.1 and 169.254.169.254; Teredo,
        // local-use NAT64 and discard-only prefixes (RFC 6890).
        "2002:7f00:1::1",
        "2002:a9fe:a9fe::1",
        "2001:0:4136:e378:8000:63bf:3fff:fdd2",
        "64:ff9b:1::808:808",
        "100::1",
    ];
    for lit in literals {
        let ip: IpAddr = lit.parse().unwrap();
        let host = if ip.is_ipv6() {
            format!("[{lit}]")
        } else {
            lit.to_string()
        };
        // As an IP literal in the URL.
        let f = Fetcher::with_policy(strict(&ca)).unwrap();
        assert_refused(f.get(&srv.url(&host, "/")), &host);
        // As the DNS answer for a public name (the resolver's check).
        let f = Fetcher::with_policy(strict(&ca).pin("public.example", vec![ip])).unwrap();
        assert_refused(f.get(&srv.url("public.example", "/")), lit);
        // One internal answer among public ones refuses the whole name.
        let mixed = vec!["93.184.215.14".parse().unwrap(), ip];
        let f = Fetcher::with_policy(strict(&ca).pin("public.example", mixed)).unwrap();
        assert_refused(f.get(&srv.url("public.example", "/")), lit);
    }
    // Legacy IPv4 literal forms a URL parser accepts.
    let f = Fetcher::with_policy(strict(&ca)).unwrap();
    for host in [
        "2130706433",
        "0x7f.1",
        "017700000001",
        "localhost",
        "a.localhost",
    ] {
        assert_refused(f.get(&srv.url(host, "/")), host);
    }
    assert_eq!(srv.accepted(), 0, "a refused fetch must not connect");
}

/// A name that the real system resolver answers with loopback.
#[test]
fn name_resolving_to_loopback_refused_without_connection() {
    let ca = Ca::new();
    let srv = Server::start(&ca, &["localhost"]);
    let f = Fetcher::with_policy(strict(&ca)).unwrap();
    // `localhost.` with the trailing dot goes through the system resolver.
    assert_refused(f.get(&srv.url("localhost.", "/")), "localhost.");
    assert_eq!(srv.accepted(), 0);
}

#[test]
fn only_https() {
    let f = Fetcher::new().unwrap();
    for url in [
        "http://example.com/",
        "ftp://example.com/x",
        "file:///etc/passwd",
    ] {
        assert!(matches!(f.get(url), Err(FetchError::NotHttps(_))), "{url}");
    }
}

#[test]
fn opt_in_fetch_and_authority_change_reported() {
    let ca = Ca::new();
    let a = Server::start(&ca, &["registry.example"]);
    let b = Server::start(&ca, &["cdn.example"]);
    b.route("/doc", Resp::ok("application/json", "{}"));
    a.route("/doc", Resp::redirect(&b.url("cdn.example", "/doc")));
    let f = Fetcher::with_policy(
        strict(&ca)
            .allow_private_networks(true)
            .pin("registry.example", loopback())
            .pin("cdn.example", loopback()),
    )
    .unwrap();
    let got = f.get(&a.url("registry.example", "/doc")).unwrap();
    assert_eq!(got.body, b"{}");
    assert_eq!(got.redirects.len(), 1);
    assert!(got.redirects[0].authority_changed);
    assert_eq!(got.url, b.url("cdn.example", "/doc"));
}

/// A redirect from an allowed host to an internal address is refused before
/// the second connection.
#[test]
fn redirect_to_private_address_refused_without_connection() {
    let ca = Ca::new();
    let a = Server::start(&ca, &["registry.example"]);
    let inner = Server::start(&ca, &["inner.example", "127.0.0.1"]);
    let policy = strict(&ca)
        .allow_private_host("registry.example")
        .pin("registry.example", loopback())
        .pin("inner.example", loopback());
    let f = Fetcher::with_policy(policy).unwrap();
    a.route("/lit", Resp::redirect(&inner.url("127.0.0.1", "/")));
    a.route("/name", Resp::redirect(&inner.url("inner.example", "/")));
    a.route(
        "/mapped",
        Resp::redirect(&inner.url("[::ffff:127.0.0.1]", "/")),
    );
    a.route("/http", Resp::redirect("http://registry.example/"));
    for p in ["/lit", "/name", "/mapped"] {
        assert_refused(f.get(&a.url("registry.example", p)), p);
    }
    assert!(matches!(
        f.get(&a.url("registry.example", "/http")),
        Err(FetchError::NotHttps(_))
    ));
    assert_eq!(a.accepted(), 4, "the allowed host was reached");
    assert_eq!(inner.accepted(), 0, "the redirect target was never reached");
}

#[test]
fn redirect_loop_bounded() {
    let ca = Ca::new();
    let a = Server::start(&ca, &["loop.example"]);
    a.route("/", Resp::redirect("/"));
    let f = Fetcher::with_policy(
        strict(&ca)
            .allow_private_networks(true)
            .pin("loop.example", loopback()),
    )
    .unwrap();
    assert!(matches!(
        f.get(&a.url("loop.example", "/")),
        Err(FetchError::TooManyRedirects(3))
    ));
    assert_eq!(a.accepted(), 4);
}

#[test]
fn body_cap_and_status() {
    let ca = Ca::new();
    let a = Server::start(&ca, &["big.example"]);
    a.route("/big", Resp::ok("application/json", vec![b'x'; 5000]));
    a.route("/ok", Resp::ok("application/json", vec![b'x'; 1000]));
    let f = Fetcher::with_policy(
        strict(&ca)
            .allow_private_networks(true)
            .pin("big.example", loopback())
            .max_body(1000),
    )
    .unwrap();
    assert!(matches!(
        f.get(&a.url("big.example", "/big")),
        Err(FetchError::TooLarge { limit: 1000, .. })
    ));
    assert_eq!(
        f.get(&a.url("big.example", "/ok")).unwrap().body.len(),
        1000
    );
    assert!(matches!(
        f.get(&a.url("big.example", "/missing")),
        Err(FetchError::Status { status: 404, .. })
    ));
}

/// Without the test CA the server's certificate is not trusted.
#[test]
fn untrusted_certificate_fails() {
    let ca = Ca::new();
    let a = Server::start(&ca, &["tls.example"]);
    a.route("/", Resp::ok("text/plain", "x"));
    let f = Fetcher::with_policy(
        FetchPolicy::default()
            .allow_private_networks(true)
            .pin("tls.example", loopback()),
    )
    .unwrap();
    assert!(matches!(
        f.get(&a.url("tls.example", "/")),
        Err(FetchError::Transport { .. })
    ));
}

/// The fetch timeout is a total deadline, not a per-read idle limit: a body
/// trickled a byte at a time (each read well within the limit) is cut off
/// when the deadline passes instead of being read to the end.
#[test]
fn trickled_body_cut_off_at_the_fetch_deadline() {
    let ca = Ca::new();
    let srv = Server::start(&ca, &["slow.example"]);
    srv.route(
        "/slow",
        Resp::ok("application/json", vec![b' '; 60]).trickle(std::time::Duration::from_millis(200)),
    );
    let f = Fetcher::with_policy(
        strict(&ca)
            .pin("slow.example", loopback())
            .allow_private_networks(true)
            .timeouts(
                std::time::Duration::from_secs(1),
                std::time::Duration::from_secs(1),
            ),
    )
    .unwrap();
    match f.get(&srv.url("slow.example", "/slow")) {
        Err(e @ FetchError::Deadline { scope: "fetch", .. }) => assert!(e.is_transient()),
        other => panic!("expected the fetch deadline, got {other:?}"),
    }
}

/// An operation deadline bounds every fetch made inside it, even when each
/// fetch alone is within its own deadline.
#[test]
fn operation_deadline_bounds_every_fetch_inside_it() {
    let ca = Ca::new();
    let srv = Server::start(&ca, &["slow.example"]);
    srv.route(
        "/slow",
        Resp::ok("application/json", vec![b' '; 60]).trickle(std::time::Duration::from_millis(200)),
    );
    srv.route("/fast", Resp::ok("application/json", "{}"));
    let f = Fetcher::with_policy(
        strict(&ca)
            .pin("slow.example", loopback())
            .allow_private_networks(true)
            .operation_timeout(std::time::Duration::from_secs(1)),
    )
    .unwrap();
    f.operation(|| {
        assert!(f.get(&srv.url("slow.example", "/fast")).is_ok());
        match f.get(&srv.url("slow.example", "/slow")) {
            Err(FetchError::Deadline {
                scope: "operation", ..
            }) => {}
            other => panic!("expected the operation deadline, got {other:?}"),
        }
        // Once past, no further fetch starts.
        match f.get(&srv.url("slow.example", "/fast")) {
            Err(FetchError::Deadline {
                scope: "operation", ..
            }) => {}
            other => panic!("expected the operation deadline, got {other:?}"),
        }
    });
    // Outside the operation the fetch deadline alone applies again.
    assert!(f.get(&srv.url("slow.example", "/fast")).is_ok());
}

/// The same guarantees on a worker thread's own client
/// (`fetch::on_thread_client`, the bulk path of `verify --batch`): every
/// SSRF refusal before a connection, redirects checked hop by hop and
/// bounded, the body cap, certificate checks, both deadlines.
mod on_thread_client {
    macro_rules! on_thread_client {
        ($($t:ident),* $(,)?) => {
            $(
                #[test]
                fn $t() {
                    agentsig::net::fetch::on_thread_client(super::$t)
                }
            )*
        };
    }
    on_thread_client!(
        every_internal_range_refused_without_connection,
        name_resolving_to_loopback_refused_without_connection,
        only_https,
        opt_in_fetch_and_authority_change_reported,
        redirect_to_private_address_refused_without_connection,
        redirect_loop_bounded,
        body_cap_and_status,
        untrusted_certificate_fails,
        trickled_body_cut_off_at_the_fetch_deadline,
        operation_deadline_bounds_every_fetch_inside_it,
    );
}

/// Under `on_thread_client` each thread fetches on its own client, kept
/// from one fetch to the next: one connection per thread, reused; the
/// shared client would have served both threads on one pooled connection.
#[test]
fn thread_client_keeps_one_connection_per_thread() {
    let ca = Ca::new();
    let srv = Server::start_keep_alive(&ca, &["bulk.example"]);
    srv.route("/d", Resp::ok("application/json", "{}"));
    let f = Fetcher::with_policy(
        strict(&ca)
            .allow_private_networks(true)
            .pin("bulk.example", loopback()),
    )
    .unwrap();
    let url = srv.url("bulk.example", "/d");
    for _ in 0..2 {
        std::thread::scope(|s| {
            s.spawn(|| {
                agentsig::net::fetch::on_thread_client(|| {
                    for _ in 0..3 {
                        assert_eq!(f.get(&url).unwrap().body, b"{}");
                    }
                })
            });
        });
    }
    assert_eq!(srv.hit_count("/d"), 6);
    assert_eq!(srv.accepted(), 2, "one kept-alive connection per thread");
    // Outside it, the shared client: its own pool, one more connection.
    for _ in 0..2 {
        f.get(&url).unwrap();
    }
    assert_eq!(srv.accepted(), 3);
}

/// A gate whose first permit is held back until the test lets it go (the
/// fleet's permits while its Redis fails over); later ones come at once.
#[derive(Debug, Default)]
struct HeldGate {
    calls: std::sync::Mutex<usize>,
    entered: std::sync::Condvar,
    release: std::sync::Mutex<bool>,
    released: std::sync::Condvar,
}

struct Permit;
impl agentsig::net::ConnectionPermit for Permit {
    fn answered(&mut self, _status: u16, _retry_after: Option<&str>) {}
}

impl agentsig::net::ConnectionGate for HeldGate {
    fn acquire(
        &self,
        _host: &str,
        _deadline: std::time::Instant,
    ) -> Result<Box<dyn agentsig::net::ConnectionPermit>, String> {
        let first = {
            let mut n = self.calls.lock().unwrap();
            *n += 1;
            *n == 1
        };
        self.entered.notify_all();
        if first {
            let mut r = self.release.lock().unwrap();
            while !*r {
                r = self.released.wait(r).unwrap();
            }
        }
        Ok(Box::new(Permit))
    }
}

/// A fetch that waited in vain for a free connection of its host under
/// `max_connections_per_host` (the holder waits for a gate's permit, which
/// does not count against its own deadline) never reached the origin: it
/// fails as back-pressure (`NoPermit`: retried without counting an attempt,
/// never shared with a fleet as the origin's failure), not as the origin
/// missing the fetch's deadline.
#[test]
fn a_wait_for_a_free_connection_is_not_the_origins_timeout() {
    let ca = Ca::new();
    let srv = Server::start(&ca, &["slot.example"]);
    srv.route("/held", Resp::ok("application/json", "{}"));
    srv.route("/waits", Resp::ok("application/json", "{}"));
    let gate = std::sync::Arc::new(HeldGate::default());
    let f = Fetcher::with_policy(
        strict(&ca)
            .allow_private_networks(true)
            .pin("slot.example", loopback())
            .timeouts(
                std::time::Duration::from_secs(1),
                std::time::Duration::from_millis(300),
            )
            .max_connections_per_host(1)
            .gate(gate.clone()),
    )
    .unwrap();
    std::thread::scope(|s| {
        let holder = s.spawn(|| f.get(&srv.url("slot.example", "/held")));
        // The holder has its host's one slot and waits in the gate.
        let mut n = gate.calls.lock().unwrap();
        while *n == 0 {
            n = gate.entered.wait(n).unwrap();
        }
        drop(n);
        let waited = f.get(&srv.url("slot.example", "/waits"));
        *gate.release.lock().unwrap() = true;
        gate.released.notify_all();
        assert_eq!(holder.join().unwrap().unwrap().body, b"{}");
        let e = waited.unwrap_err();
        assert!(e.is_no_permit(), "{e}");
        assert!(e.is_transient());
        assert!(e.to_string().contains("no free connection"), "{e}");
    });
    assert_eq!(srv.hit_count("/waits"), 0);
    assert_eq!(srv.hit_count("/held"), 1);
}

/// `FetchPolicy::max_connections_per_host` bounds the connections open at
/// once to one host across threads sharing the fetcher (clones), kept-alive
/// ones included, and a 404 leaves its connection reusable. Counted at the
/// server.
#[test]
fn connections_per_host_are_bounded_across_threads() {
    let ca = Ca::new();
    let srv = Server::start_keep_alive(&ca, &["bound.example"]);
    srv.route("/doc", Resp::json(&serde_json::json!({"name": "x"})));
    let f = Fetcher::with_policy(
        strict(&ca)
            .allow_private_networks(true)
            .pin("bound.example", loopback())
            .max_connections_per_host(2),
    )
    .unwrap();
    std::thread::scope(|s| {
        for _ in 0..6 {
            let f = f.clone();
            let (ok, missing) = (
                srv.url("bound.example", "/doc"),
                srv.url("bound.example", "/missing"),
            );
            s.spawn(move || {
                for _ in 0..10 {
                    assert!(f.get(&ok).is_ok());
                    assert!(matches!(
                        f.get(&missing),
                        Err(FetchError::Status { status: 404, .. })
                    ));
                }
            });
        }
    });
    assert!(srv.most_open() <= 2, "{} open at once", srv.most_open());
    assert!(
        srv.accepted() <= 4,
        "{} connections for 120 requests",
        srv.accepted()
    );
}
