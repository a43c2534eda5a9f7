//! The fleet-wide key-set cache against a real `redis-server` (and a real
//! three-primary cluster) started by the test: four verifiers, each with
//! its own fetcher, local cache and `DirectoryClient` (four processes of a
//! fleet), verify Web Bot Auth requests whose key directory is served on
//! loopback HTTPS with `Cache-Control: max-age=N`; the directory host
//! counts the requests it gets.
//!
//! Skips with a message when `redis-server` is not installed, unless
//! `AGENTSIG_REQUIRE_INTEROP=1` (CI), which makes a missing server a failure.
#![cfg(all(feature = "net", feature = "redis"))]

mod net_support;
mod redis_support;

use agentsig::httpsig::Message;
use agentsig::net::fleet::{FleetCache, FleetSecret};
use agentsig::net::webbotauth::DirectoryClient;
use agentsig::net::{FetchPolicy, Fetcher};
use agentsig::webbotauth::directory::{directory_body, directory_headers};
use agentsig::webbotauth::{
    sign_message, Policy, SignOptions, Status, WebBotAuthVerifier, MEDIA_TYPE, WELL_KNOWN_PATH,
};
use agentsig::{Algorithm, SigningKey};
use net_support::{loopback, Ca, Resp, Server};
use redis_support::{until, Cluster};
use std::process::Command;
use std::sync::{Arc, Barrier, Mutex};
use std::time::Duration;

const VERIFIERS: usize = 4;

fn now() -> i64 {
    agentsig::clock::Clock::now(&agentsig::clock::SystemClock)
}

fn secret(b: u8) -> FleetSecret {
    FleetSecret::from_bytes(vec![b; 32]).unwrap()
}

/// The directory of `keys`, signed for the server's authority, fresh for
/// `max_age` seconds.
fn directory(srv: &Server, keys: &[&SigningKey], max_age: u64) -> Resp {
    let vks: Vec<_> = keys.iter().map(|k| k.verifying_key()).collect();
    let body = directory_body(&vks);
    let authority = format!("agent.example:{}", srv.port);
    let mut r = Resp::ok(MEDIA_TYPE, body.clone());
    r.headers.clear();
    for (n, v) in directory_headers(&body, &authority, keys, now() - 10, now() + 3600).unwrap() {
        if !n.eq_ignore_ascii_case("cache-control") {
            r = r.header(&n.to_ascii_lowercase(), &v);
        }
    }
    r.header("cache-control", &format!("max-age={max_age}"))
}

fn fetcher(ca: &Ca, fetch_timeout: Duration) -> Fetcher {
    Fetcher::with_policy(
        FetchPolicy::default()
            .extra_root_pem(ca.pem())
            .allow_private_networks(true)
            .pin("agent.example", loopback())
            .timeouts(Duration::from_secs(2), fetch_timeout),
    )
    .unwrap()
}

/// One verifier of the fleet: its own fetcher (and local caches) over the
/// shared store.
struct Verifier {
    client: DirectoryClient,
    fleet: Arc<FleetCache>,
    reports: Arc<Mutex<Vec<String>>>,
}

fn verifier(ca: &Ca, store: &str, s: &FleetSecret, fetch_timeout: Duration) -> Verifier {
    let reports = Arc::new(Mutex::new(Vec::new()));
    let r = reports.clone();
    let fleet = Arc::new(
        FleetCache::open(store, s)
            .unwrap()
            .on_report(move |m| r.lock().unwrap().push(m.to_owned())),
    );
    let client = DirectoryClient::new(Arc::new(
        fetcher(ca, fetch_timeout).with_fleet_cache(fleet.clone()),
    ));
    Verifier {
        client,
        fleet,
        reports,
    }
}

fn fleet(ca: &Ca, store: &str) -> Vec<Arc<Verifier>> {
    (0..VERIFIERS)
        .map(|_| Arc::new(verifier(ca, store, &secret(7), Duration::from_secs(5))))
        .collect()
}

fn signed_request(srv: &Server, k: &SigningKey) -> Message {
    let mut m =
        Message::parse(b"GET /page HTTP/1.1\r\nHost: site.example\r\n\r\n", "https").unwrap();
    sign_message(
        &mut m,
        k,
        &SignOptions::new(srv.url("agent.example", ""), now()),
    )
    .unwrap();
    m
}

fn verify(v: &Verifier, srv: &Server, k: &SigningKey) -> agentsig::webbotauth::Report {
    WebBotAuthVerifier::new(Policy::default()).verify(&signed_request(srv, k), &v.client, now())
}

/// Every verifier verifies a request signed by `k` at the same moment
/// (a barrier), and each outcome is returned.
fn all_at_once(vs: &[Arc<Verifier>], srv: &Server, k: &SigningKey) -> Vec<Status> {
    let go = Barrier::new(vs.len());
    std::thread::scope(|s| {
        let handles: Vec<_> = vs
            .iter()
            .map(|v| {
                let go = &go;
                s.spawn(move || {
                    go.wait();
                    verify(v, srv, k).status()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// The keys of the fleet cache in one Redis server.
fn cached_entries(port: u16) -> usize {
    let o = Command::new("redis-cli")
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(["--scan", "--pattern", "agentsig:keyset:*"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).lines().count()
}

/// Four verifiers, one directory with `max-age=2`: one fetch for the
/// fleet, however many verifications, until the entry expires; then one
/// more.
fn one_fetch_per_lifetime(store: &str, ports: &[u16]) {
    let ca = Ca::new();
    let srv = Arc::new(Server::start(&ca, &["agent.example"]));
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    srv.route(WELL_KNOWN_PATH, directory(&srv, &[&k], 2));
    let vs = fleet(&ca, store);
    let asked = std::time::Instant::now();
    let first = all_at_once(&vs, &srv, &k);
    assert!(first.iter().all(|s| *s == Status::Verified), "{first:?}");
    for v in &vs {
        assert_eq!(verify(v, &srv, &k).status(), Status::Verified);
    }
    assert_eq!(srv.hit_count(WELL_KNOWN_PATH), 1, "one fetch for the fleet");
    let hits: u64 = vs.iter().map(|v| v.fleet.stats().hits).sum();
    assert!(hits >= 1, "the other verifiers took the shared entry");
    // Wait until the store dropped the entry (its TTL is the freshness
    // left): readiness polling, the assertion counts fetches.
    until("fleet entry expired", || {
        ports.iter().map(|p| cached_entries(*p)).sum::<usize>() == 0
    });
    // And each verifier's own copies: a verifier whose copy is still fresh
    // asks no one, and the count below would then depend on how fast the
    // machine reached this line (CI once saw 1, when a copy taken from the
    // fleet carried its age truncated to whole seconds and outlived the
    // entry). The age is rounded up now; waiting out the lifetime and a
    // second more keeps the count independent of every per-verifier layer.
    let stale = Duration::from_secs(2 + 1);
    if let Some(left) = stale.checked_sub(asked.elapsed()) {
        std::thread::sleep(left);
    }
    let second = all_at_once(&vs, &srv, &k);
    assert!(second.iter().all(|s| *s == Status::Verified), "{second:?}");
    assert_eq!(
        srv.hit_count(WELL_KNOWN_PATH),
        2,
        "one more fetch after expiry"
    );
    for v in &vs {
        assert!(v.reports.lock().unwrap().is_empty());
    }
}

#[test]
fn four_verifiers_fetch_a_directory_once_per_freshness_lifetime() {
    let Some(r) = redis_support::Server::start("fleet-once") else {
        return;
    };
    one_fetch_per_lifetime(&r.url(), &[r.port]);
}

/// Two verifiers over `redis+sentinel://` (a primary and a replica under
/// one sentinel, the client following the primary the sentinel names):
/// one fetch between them, and the entry is on the primary.
#[test]
fn two_verifiers_over_sentinel_share_one_fetch() {
    let Some((primary, _replica, sentinel)) = redis_support::sentinel_with_replica("fleet-sen")
    else {
        return;
    };
    let store = sentinel.url();
    let ca = Ca::new();
    let srv = Server::start(&ca, &["agent.example"]);
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    srv.route(WELL_KNOWN_PATH, directory(&srv, &[&k], 60));
    let vs: Vec<Verifier> = (0..2)
        .map(|_| verifier(&ca, &store, &secret(7), Duration::from_secs(5)))
        .collect();
    for v in &vs {
        assert_eq!(verify(v, &srv, &k).status(), Status::Verified);
    }
    assert_eq!(srv.hit_count(WELL_KNOWN_PATH), 1, "one fetch for the two");
    assert_eq!(vs[1].fleet.stats().hits, 1, "the second took the entry");
    assert_eq!(cached_entries(primary.port), 1, "stored on the primary");
    for v in &vs {
        assert!(v.reports.lock().unwrap().is_empty());
    }
}

#[test]
fn on_a_cluster_too() {
    let Some(c) = Cluster::start("fleet-cl") else {
        return;
    };
    let ports: Vec<u16> = c.nodes.iter().map(|n| n.port).collect();
    one_fetch_per_lifetime(&c.url(""), &ports);
}

/// Someone who can write to Redis but lacks the fleet secret plants an
/// entry holding their own key (a directory they signed themselves, which
/// would pass the directory's own signature check): it is refused on its
/// MAC, counted and reported, the origin is asked, and the planted key
/// never verifies.
#[test]
fn a_planted_entry_with_a_wrong_mac_is_refetched_and_its_keys_never_verify() {
    let Some(r) = redis_support::Server::start("fleet-plant") else {
        return;
    };
    let ca = Ca::new();
    let srv = Arc::new(Server::start(&ca, &["agent.example"]));
    let genuine = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let planted = SigningKey::generate(Algorithm::Ed25519).unwrap();
    // The attacker's entry, stored under the directory's URL with another
    // secret.
    srv.route(WELL_KNOWN_PATH, directory(&srv, &[&planted], 600));
    let attacker = verifier(&ca, &r.url(), &secret(9), Duration::from_secs(5));
    assert_eq!(verify(&attacker, &srv, &planted).status(), Status::Verified);
    assert_eq!(cached_entries(r.port), 1, "the planted entry is in Redis");
    srv.route(WELL_KNOWN_PATH, directory(&srv, &[&genuine], 600));
    let honest = verifier(&ca, &r.url(), &secret(7), Duration::from_secs(5));
    let rep = verify(&honest, &srv, &planted);
    assert_eq!(rep.status(), Status::Invalid, "{:?}", rep.first_error());
    assert_eq!(rep.first_error().map(|e| e.code()), Some("unknown-key"));
    assert_eq!(honest.fleet.stats().rejected, 1);
    assert!(
        honest.reports.lock().unwrap()[0].contains("MAC"),
        "{:?}",
        honest.reports.lock().unwrap()
    );
    assert_eq!(
        srv.hit_count(WELL_KNOWN_PATH),
        2,
        "refetched from the origin"
    );
    assert_eq!(verify(&honest, &srv, &genuine).status(), Status::Verified);
    // The genuine entry replaced the planted one: another verifier of the
    // fleet takes it without asking the origin.
    let other = verifier(&ca, &r.url(), &secret(7), Duration::from_secs(5));
    assert_eq!(verify(&other, &srv, &genuine).status(), Status::Verified);
    assert_ne!(verify(&other, &srv, &planted).status(), Status::Verified);
    assert_eq!(srv.hit_count(WELL_KNOWN_PATH), 2);
    assert_eq!(other.fleet.stats().rejected, 0);
}

/// A tarpit directory (it trickles its body past the fetch deadline):
/// four verifiers at once cost it one fetch, and the failure is shared
/// for the failure interval.
#[test]
fn a_tarpit_directory_costs_the_fleet_one_fetch_per_failure_interval() {
    let Some(r) = redis_support::Server::start("fleet-tarpit") else {
        return;
    };
    let ca = Ca::new();
    let srv = Arc::new(Server::start(&ca, &["agent.example"]));
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    srv.route(
        WELL_KNOWN_PATH,
        directory(&srv, &[&k], 600).trickle(Duration::from_millis(200)),
    );
    let vs: Vec<_> = (0..VERIFIERS)
        .map(|_| Arc::new(verifier(&ca, &r.url(), &secret(7), Duration::from_secs(1))))
        .collect();
    let got = all_at_once(&vs, &srv, &k);
    assert!(got.iter().all(|s| *s != Status::Verified), "{got:?}");
    // And once more each, within the interval.
    for v in &vs {
        assert_ne!(verify(v, &srv, &k).status(), Status::Verified);
    }
    assert_eq!(srv.hit_count(WELL_KNOWN_PATH), 1);
    let served: u64 = vs.iter().map(|v| v.fleet.stats().failures_served).sum();
    assert!(served >= 1, "the failure was shared");
}

/// A fetch cut short by the caller's deadline says nothing of the
/// directory: it is remembered neither in the process nor in the fleet, so
/// a verification whose deadline an earlier slow key set spent does not
/// lock the agent out of the next one, in this verifier or any other.
#[test]
fn a_fetch_cut_short_by_the_callers_deadline_is_not_remembered_or_shared() {
    let Some(r) = redis_support::Server::start("fleet-spent") else {
        return;
    };
    let ca = Ca::new();
    let srv = Arc::new(Server::start(&ca, &["agent.example"]));
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    srv.route(WELL_KNOWN_PATH, directory(&srv, &[&k], 600));
    let vs = fleet(&ca, &r.url());
    // The caller's deadline is spent before the key set is fetched.
    let spent =
        agentsig::net::fetch::with_deadline(std::time::Instant::now(), || verify(&vs[0], &srv, &k));
    assert_ne!(spent.status(), Status::Verified);
    let why = spent
        .first_error()
        .map(ToString::to_string)
        .unwrap_or_default();
    assert!(
        why.contains("deadline"),
        "the message names the deadline: {why}"
    );
    assert!(!why.contains("own deadline"), "not the fetch's own: {why}");
    // Another verifier of the fleet, and the same one, fetch and verify.
    assert_eq!(verify(&vs[1], &srv, &k).status(), Status::Verified);
    assert_eq!(verify(&vs[0], &srv, &k).status(), Status::Verified);
    let served: u64 = vs.iter().map(|v| v.fleet.stats().failures_served).sum();
    assert_eq!(served, 0, "no failure was shared");
    assert_eq!(
        srv.hit_count(WELL_KNOWN_PATH),
        1,
        "one fetch, then the shared entry"
    );
}

/// A fetch lock held past this verifier's own fetch budget (a holder that
/// hung, or a lock set to outlast any fetch by whoever can write to the
/// store) is ignored: the verifier fetches for itself instead of waiting
/// until its operation deadline.
#[test]
fn a_lock_held_past_the_fetch_budget_is_ignored() {
    let Some(r) = redis_support::Server::start("fleet-held-lock") else {
        return;
    };
    let ca = Ca::new();
    let srv = Arc::new(Server::start(&ca, &["agent.example"]));
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    srv.route(WELL_KNOWN_PATH, directory(&srv, &[&k], 600));
    let v = verifier(&ca, &r.url(), &secret(7), Duration::from_secs(1));
    let name = fetcher(&ca, Duration::from_secs(1))
        .with_fleet_cache(v.fleet.clone())
        .fleet_name(&srv.url("agent.example", WELL_KNOWN_PATH));
    let store = agentsig::replay::blob::open_blob_store(&r.url()).unwrap();
    let held = store
        .try_lock(name.as_bytes(), Duration::from_secs(600))
        .unwrap();
    assert!(held.is_some(), "the test holds the lock");
    assert_eq!(verify(&v, &srv, &k).status(), Status::Verified);
    assert_eq!(srv.hit_count(WELL_KNOWN_PATH), 1);
    assert_eq!(v.fleet.stats().waits, 1, "it waited, then fetched");
}

/// An entry is shared only between verifiers whose fetch policy would
/// fetch the same thing: one that does not trust the directory's CA never
/// takes the keys another verifier fetched through a root it trusts.
#[test]
fn verifiers_whose_fetch_policies_differ_do_not_share_entries() {
    let Some(r) = redis_support::Server::start("fleet-scope") else {
        return;
    };
    let ca = Ca::new();
    let srv = Arc::new(Server::start(&ca, &["agent.example"]));
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    srv.route(WELL_KNOWN_PATH, directory(&srv, &[&k], 600));
    let trusting = verifier(&ca, &r.url(), &secret(7), Duration::from_secs(5));
    let other = verifier(&Ca::new(), &r.url(), &secret(7), Duration::from_secs(5));
    assert_eq!(verify(&trusting, &srv, &k).status(), Status::Verified);
    assert_ne!(
        verify(&other, &srv, &k).status(),
        Status::Verified,
        "its own fetch fails: the server's CA is not among its roots"
    );
    assert_eq!(other.fleet.stats().hits, 0, "the entry was not shared");
    // The same policy shares it.
    let same = verifier(&ca, &r.url(), &secret(7), Duration::from_secs(5));
    assert_eq!(verify(&same, &srv, &k).status(), Status::Verified);
    assert_eq!(same.fleet.stats().hits, 1);
    assert_eq!(srv.hit_count(WELL_KNOWN_PATH), 1);
}

/// The store unreachable: every verifier fetches for itself and verifies
/// (the cache is an optimisation), and it is reported once per verifier.
#[test]
fn an_unreachable_store_falls_back_to_fetching_and_is_reported_once() {
    let ca = Ca::new();
    let srv = Arc::new(Server::start(&ca, &["agent.example"]));
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    srv.route(WELL_KNOWN_PATH, directory(&srv, &[&k], 600));
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let store = format!("redis://127.0.0.1:{closed}/0");
    let vs: Vec<_> = (0..2)
        .map(|_| verifier(&ca, &store, &secret(7), Duration::from_secs(5)))
        .collect();
    for v in &vs {
        for _ in 0..3 {
            assert_eq!(verify(v, &srv, &k).status(), Status::Verified);
        }
        assert_eq!(v.reports.lock().unwrap().len(), 1, "reported once");
        assert!(v.fleet.stats().unavailable >= 1);
    }
    assert_eq!(srv.hit_count(WELL_KNOWN_PATH), 2, "each fetched for itself");
}

/// `agentsig http verify ... --key-cache STORE` as four processes at once:
/// the directory host sees one fetch; the secret is refused when missing
/// or short, and never taken from the command line.
#[test]
fn four_http_verify_processes_fetch_the_directory_once() {
    let Some(r) = redis_support::Server::start("fleet-cli") else {
        return;
    };
    let d = redis_support::tmp("fleet-cli-files");
    let ca = Ca::new();
    let srv = Server::start(&ca, &["agent.example"]);
    std::fs::write(d.join("ca.pem"), ca.pem()).unwrap();
    let st = Command::new(BIN)
        .args(["keygen", "--alg", "ed25519", "--out"])
        .arg(d.join("agent"))
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let pem = std::fs::read(d.join("agent.pem")).unwrap();
    let k =
        agentsig::keys::load_signing_key(&pem, &agentsig::keys::LoadOptions::default()).unwrap();
    srv.route(WELL_KNOWN_PATH, directory(&srv, &[&k], 600));
    std::fs::write(
        d.join("req.http"),
        b"GET /catalog HTTP/1.1\r\nHost: shop.example\r\n\r\n",
    )
    .unwrap();
    let o = Command::new(BIN)
        .args(["http", "sign"])
        .arg(d.join("req.http"))
        .arg("--key")
        .arg(d.join("agent.pem"))
        .args(["--profile", "web-bot-auth", "--signature-agent"])
        .arg(srv.url("agent.example", ""))
        .arg("--out")
        .arg(d.join("signed.http"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let secret_file = d.join("fleet.secret");
    write_private(&secret_file, format!("{}\n", "ab".repeat(32)).as_bytes());
    let verify = |extra: &[&str], env: Option<&str>| {
        let mut c = Command::new(BIN);
        c.args(["http", "verify"])
            .arg(d.join("signed.http"))
            .args(["--profile", "web-bot-auth", "--authority", "shop.example"])
            .args(["--allow-private-networks", "--ca-file"])
            .arg(d.join("ca.pem"))
            .args(["--resolve-to", "agent.example=127.0.0.1"])
            .args(["--key-cache", &r.url()])
            .args(extra)
            .env_remove("AGENTSIG_FLEET_SECRET");
        if let Some(v) = env {
            c.env("AGENTSIG_FLEET_SECRET", v);
        }
        c.spawn_output()
    };
    let file = secret_file.to_str().unwrap().to_owned();
    let procs: Vec<_> = (0..VERIFIERS)
        .map(|_| verify(&["--fleet-secret-file", &file], None))
        .collect();
    for p in procs {
        let o = p.wait_with_output().unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    assert_eq!(
        srv.hit_count(WELL_KNOWN_PATH),
        1,
        "one fetch for four processes"
    );
    // The secret from the environment works alike (the entry is shared).
    let o = verify(&[], Some(&"cd".repeat(16)))
        .wait_with_output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Another secret: the shared entry is refused, reported, and refetched.
    assert!(String::from_utf8_lossy(&o.stderr).contains("MAC"));
    assert_eq!(srv.hit_count(WELL_KNOWN_PATH), 2);
    // No secret, or a short one: a usage error (exit 2), nothing fetched.
    let o = verify(&[], None).wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("AGENTSIG_FLEET_SECRET"));
    write_private(&secret_file, b"short\n");
    let o = verify(&["--fleet-secret-file", &file], None)
        .wait_with_output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("at least 32"));
    assert_eq!(srv.hit_count(WELL_KNOWN_PATH), 2);
    let _ = std::fs::remove_dir_all(&d);
}

const BIN: &str = env!("CARGO_BIN_EXE_agentsig");

/// Write a secret file only its owner can read (a fleet secret file must
/// be one).
fn write_private(path: &std::path::Path, data: &[u8]) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, data).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

/// Spawn with its output captured.
trait SpawnOutput {
    fn spawn_output(&mut self) -> std::process::Child;
}

impl SpawnOutput for Command {
    fn spawn_output(&mut self) -> std::process::Child {
        self.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    }
}
