//! A Web Bot Auth gate under key directories that never answer: the
//! request names its own key-set URL (draft-ietf-webbotauth-httpsig-protocol-00
//! section 5.5), so a silent directory is the cheapest way to hold a
//! verifier. Each key-set URL is fetched at most once at a time and its
//! failure remembered, at most `max_fetches` fetches run at once (the
//! excess fails at once with `directory-busy`), a signature that fails a
//! check needing no key makes no fetch, and `BotAuthLayer` decides a request
//! without a web-bot-auth signature without waiting for any of it. Every
//! assertion counts (connections, answers, polls); none is timed.
#![cfg(all(feature = "net", feature = "server"))]

mod net_support;

use agentsig::httpsig::{Message, SiteAuthorities};
use agentsig::net::webbotauth::DirectoryClient;
use agentsig::net::{FetchPolicy, Fetcher};
use agentsig::server::webbotauth::{AgentIdentity, BotAuthConfig, BotAuthLayer};
use agentsig::webbotauth::signature_key::JwksUriResolver;
use agentsig::webbotauth::{sign_request, Policy, SignOptions, WebBotAuthVerifier};
use agentsig::{Algorithm, SigningKey};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use net_support::loopback;
use std::net::{TcpListener, TcpStream};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;
use tower::ServiceExt;

/// A loopback server that accepts connections and never answers, counting
/// them; [`Tarpit::release`] closes the held ones, and every later one is
/// closed at once.
struct Tarpit {
    port: u16,
    held: Arc<Mutex<Option<Vec<TcpStream>>>>,
    count: Arc<Mutex<usize>>,
}

impl Tarpit {
    /// Start it; each accepted connection is also reported on `accepted`.
    fn start(accepted: impl Fn() + Send + 'static) -> Tarpit {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let held: Arc<Mutex<Option<Vec<TcpStream>>>> = Arc::new(Mutex::new(Some(Vec::new())));
        let count = Arc::new(Mutex::new(0));
        let (h, c) = (held.clone(), count.clone());
        std::thread::spawn(move || {
            for s in l.incoming() {
                let Ok(s) = s else { return };
                *c.lock().unwrap() += 1;
                match h.lock().unwrap().as_mut() {
                    Some(v) => v.push(s),
                    None => drop(s),
                }
                accepted();
            }
        });
        Tarpit { port, held, count }
    }

    /// A URL on it under the pinned name `tarpit.example`.
    fn url(&self, path: &str) -> String {
        format!("https://tarpit.example:{}{path}", self.port)
    }

    /// Connections accepted so far.
    fn connections(&self) -> usize {
        *self.count.lock().unwrap()
    }

    /// Close every held connection, and every later one at once.
    fn release(&self) {
        for s in self.held.lock().unwrap().take().unwrap_or_default() {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }
}

/// A test that fails does not leave fetches hanging on the tarpit.
impl Drop for Tarpit {
    fn drop(&mut self) {
        self.release();
    }
}

/// A client of the tarpit whose fetches end only when it lets them (the
/// timeouts are a safety net far beyond any assertion).
fn client() -> DirectoryClient {
    let long = Duration::from_secs(300);
    let f = Fetcher::with_policy(
        FetchPolicy::default()
            .allow_private_networks(true)
            .pin("tarpit.example", loopback())
            .timeouts(long, long)
            .operation_timeout(long),
    )
    .unwrap();
    DirectoryClient::new(Arc::new(f))
}

fn now() -> i64 {
    agentsig::clock::Clock::now(&agentsig::clock::SystemClock)
}

/// A request to the site signed for the agent whose key set is at `agent`.
fn signed_request(k: &SigningKey, agent: &str, created: i64) -> http::Request<Vec<u8>> {
    let mut r = http::Request::get("https://site.example/page")
        .body(Vec::new())
        .unwrap();
    sign_request(&mut r, "https", k, &SignOptions::new(agent, created)).unwrap();
    r
}

fn message(r: &http::Request<Vec<u8>>) -> Message {
    Message::from_request(r, "https").unwrap()
}

fn code(r: &agentsig::webbotauth::Report) -> &'static str {
    r.first_error().map_or("none", |e| e.code())
}

/// The measurement of docs/benchmarks.md: 45 concurrent requests, each
/// naming its own key set on a tarpit, through `BotAuthLayer`; then an
/// unsigned request. The tarpit sees at most the bound (8) of fetches, the
/// other 37 requests are refused at once with `directory-busy`, and the
/// unsigned request is answered on its first poll, while the 8 are still
/// pending: it waits for nothing.
#[test]
fn tarpit_directories_do_not_stall_the_gate() {
    // The blocking fetcher is made and dropped outside the runtime.
    let dir = Arc::new(client());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(gate_under_tarpit(dir.clone()));
    drop(rt);
}

async fn gate_under_tarpit(dir: Arc<DirectoryClient>) {
    const REQUESTS: usize = 45;
    let (conn_tx, mut conn_rx) = tokio::sync::mpsc::unbounded_channel();
    let tarpit = Tarpit::start(move || {
        let _ = conn_tx.send(());
    });
    let mut cfg = BotAuthConfig::new(
        WebBotAuthVerifier::new(Policy::default()),
        dir,
        SiteAuthorities::only(["site.example"]).unwrap(),
    );
    cfg.verify_deadline = Duration::from_secs(300);
    let layer = BotAuthLayer::new(cfg);
    let svc = tower::ServiceBuilder::new()
        .layer(layer)
        .service(tower::service_fn(
            |req: http::Request<Full<Bytes>>| async move {
                let who = match req.extensions().get::<AgentIdentity>() {
                    Some(AgentIdentity::Anonymous(None)) => "anonymous",
                    _ => "other",
                };
                Ok::<_, std::convert::Infallible>(http::Response::new(Full::new(Bytes::from(who))))
            },
        ));
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel();
    let mut tasks = Vec::new();
    for i in 0..REQUESTS {
        let req = signed_request(&k, &tarpit.url(&format!("/keys/{i}.json")), now());
        let req = req.map(|b| Full::new(Bytes::from(b)));
        let svc = svc.clone();
        let done = done_tx.clone();
        tasks.push(tokio::spawn(async move {
            let res = svc.oneshot(req).await.unwrap();
            let status = res.status();
            let body = res.into_body().collect().await.unwrap().to_bytes();
            let text = String::from_utf8_lossy(&body).into_owned();
            let _ = done.send(i);
            (status, text)
        }));
    }
    // Every request either reaches the tarpit or is answered.
    let (mut conns, mut answered) = (0, std::collections::BTreeSet::new());
    while conns + answered.len() < REQUESTS {
        tokio::select! {
            Some(()) = conn_rx.recv() => conns += 1,
            Some(i) = done_rx.recv() => { answered.insert(i); }
        }
    }
    let answered_ids = answered;
    let answered = answered_ids.len();
    assert!(
        conns <= 8,
        "the tarpit saw {conns} fetches, more than the bound of 8"
    );
    assert_eq!(answered, REQUESTS - conns);
    // The unsigned request: answered on its first poll.
    let unsigned = http::Request::get("https://site.example/page")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let mut fut = std::pin::pin!(svc.clone().oneshot(unsigned));
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    let std::task::Poll::Ready(res) = std::future::Future::poll(fut.as_mut(), &mut cx) else {
        panic!("the unsigned request waited behind the tarpit requests");
    };
    let res = res.unwrap();
    assert_eq!(res.status(), 200);
    let body = res.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(&body[..], b"anonymous");
    // ... while the requests that reached the tarpit are still pending.
    // (A task that sent its answer may not be marked finished yet, so only
    // the ones that never answered are checked: none of them has ended.)
    let pending = tasks
        .iter()
        .enumerate()
        .filter(|(i, _)| !answered_ids.contains(i))
        .collect::<Vec<_>>();
    assert_eq!(pending.len(), conns);
    assert!(pending.iter().all(|(_, t)| !t.is_finished()));
    assert_eq!(tarpit.connections(), conns);
    tarpit.release();
    let mut busy = 0;
    for t in tasks {
        let (status, text) = t.await.unwrap();
        assert_eq!(status, 401, "{text}");
        if text.contains("(directory-busy)") {
            busy += 1;
        }
    }
    assert_eq!(busy, REQUESTS - conns);
    assert_eq!(conns, 8);
    eprintln!("tarpit fetches: {conns}; directory-busy: {busy} of {REQUESTS}");
}

/// Concurrent verifications needing one key-set URL make one fetch between
/// them, and its failure is remembered: a verification made after it asks
/// nobody, until `failure_ttl` has passed (zero remembers nothing).
#[test]
fn one_fetch_per_key_set_url_and_failures_remembered() {
    const THREADS: usize = 10;
    let (conn_tx, conn_rx) = mpsc::channel();
    let tarpit = Tarpit::start(move || {
        let _ = conn_tx.send(());
    });
    let dir = Arc::new(client());
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let agent = tarpit.url("/keys.json");
    let v = Arc::new(WebBotAuthVerifier::new(Policy::default()));
    let (started_tx, started_rx) = mpsc::channel();
    let threads: Vec<_> = (0..THREADS)
        .map(|_| {
            let m = message(&signed_request(&k, &agent, now()));
            let (dir, v, started) = (dir.clone(), v.clone(), started_tx.clone());
            std::thread::spawn(move || {
                started.send(()).unwrap();
                let r = v.verify(&m, dir.as_ref(), now());
                code(&r)
            })
        })
        .collect();
    for _ in 0..THREADS {
        started_rx.recv().unwrap();
    }
    conn_rx.recv().unwrap();
    tarpit.release();
    let codes: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    assert!(
        codes
            .iter()
            .all(|c| *c == codes[0] && *c != "directory-busy"),
        "{codes:?}"
    );
    assert_eq!(tarpit.connections(), 1, "{codes:?}");
    // Remembered: a later verification makes no fetch.
    let r = v.verify(
        &message(&signed_request(&k, &agent, now())),
        dir.as_ref(),
        now(),
    );
    assert_eq!(code(&r), codes[0]);
    assert_eq!(tarpit.connections(), 1);
    // Not remembered by a client told not to.
    let forgetful = client().failure_ttl(Duration::ZERO);
    for _ in 0..2 {
        v.verify(
            &message(&signed_request(&k, &agent, now())),
            &forgetful,
            now(),
        );
    }
    assert_eq!(tarpit.connections(), 3);
}

/// A signature that fails a check needing no key (its time window, its
/// covered components, its label) makes no fetch; and
/// `decide_without_keys` decides exactly the requests no key set could
/// make verify.
#[test]
fn checks_needing_no_key_come_before_the_fetch() {
    let tarpit = Tarpit::start(|| {});
    tarpit.release();
    let dir = client();
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let agent = tarpit.url("/keys.json");
    let v = WebBotAuthVerifier::new(Policy::default());
    // Expired an hour ago (created 2 h ago, 5 min lifetime).
    let expired = message(&signed_request(&k, &agent, now() - 7200));
    let r = v.verify(&expired, &dir, now());
    assert_eq!(code(&r), "expired");
    // Created in the future.
    let future = message(&signed_request(&k, &agent, now() + 7200));
    assert_eq!(code(&v.verify(&future, &dir, now())), "created-in-future");
    // A policy requiring a component the signature does not cover.
    let mut p = Policy::default();
    p.required = vec![agentsig::httpsig::ComponentId::field("x-required").unwrap()];
    let fresh = message(&signed_request(&k, &agent, now()));
    let r = WebBotAuthVerifier::new(p).verify(&fresh, &dir, now());
    assert_eq!(code(&r), "required-component-not-covered");
    // A malformed signature value.
    let mut bad = signed_request(&k, &agent, now());
    bad.headers_mut()
        .insert("signature", http::HeaderValue::from_static("sig1=:AAAA"));
    assert_eq!(
        code(&v.verify(&message(&bad), &dir, now())),
        "malformed-signature-fields"
    );
    assert_eq!(tarpit.connections(), 0);
    for m in [&expired, &future] {
        let r = v.decide_without_keys(m, now()).expect("decided");
        assert_eq!(r.status(), agentsig::webbotauth::Status::Invalid);
    }
    let unsigned = message(
        &http::Request::get("https://site.example/page")
            .body(Vec::new())
            .unwrap(),
    );
    let r = v.decide_without_keys(&unsigned, now()).expect("decided");
    assert_eq!(r.status(), agentsig::webbotauth::Status::Unverified);
    // A signature that could verify needs its key set.
    assert!(v.decide_without_keys(&fresh, now()).is_none());
    assert_eq!(tarpit.connections(), 0);
    // It is fetched (the tarpit closes it at once).
    v.verify(&fresh, &dir, now());
    assert_eq!(tarpit.connections(), 1);
}

/// `Signature-Key` `jwks_uri` documents share the directories' bound: with
/// one fetch in progress and a bound of one, the next signer fails at once
/// with `directory-busy`; and one request resolves at most two signers.
#[test]
fn signature_key_fetches_are_bounded_like_directories() {
    let (conn_tx, conn_rx) = mpsc::channel();
    let tarpit = Tarpit::start(move || {
        let _ = conn_tx.send(());
    });
    let dir = Arc::new(client().max_fetches(1));
    let d = dir.clone();
    let id = tarpit.url("/a");
    let held = std::thread::spawn(move || d.jwks_uri_key(&id, "agent-meta", "k1"));
    conn_rx.recv().unwrap();
    let e = dir
        .jwks_uri_key(&tarpit.url("/b"), "agent-meta", "k1")
        .unwrap_err();
    assert_eq!(e.code(), "directory-busy", "{e}");
    assert_eq!(tarpit.connections(), 1);
    tarpit.release();
    assert_ne!(held.join().unwrap().unwrap_err().code(), "directory-busy");

    // Three jwks_uri signers in one request: the third is not resolved.
    let mut m = Message::parse(b"GET /x HTTP/1.1\r\nHost: shop.example\r\n\r\n", "https").unwrap();
    let members: Vec<String> = ["s1", "s2", "s3"]
        .iter()
        .map(|l| {
            format!(
                "{l}=jwks_uri;id=\"{}\";dwk=\"agent-meta\";kid=\"k1\"",
                tarpit.url(&format!("/{l}"))
            )
        })
        .collect();
    m.add_header("Signature-Key", &members.join(", "));
    let before = tarpit.connections();
    let fresh = client();
    let r = WebBotAuthVerifier::new(Policy::default())
        .verify_signature_key(&m, Some(&fresh), now())
        .unwrap();
    assert_eq!(r.len(), 3);
    assert_eq!(
        r[2].1.as_ref().unwrap_err().code(),
        "too-many-key-sets",
        "{:?}",
        r[2].1
    );
    // Two signers, one metadata fetch each (the tarpit closes them).
    assert_eq!(tarpit.connections() - before, 2);
}

/// Two `Signature-Agent` labels, the first naming a directory that never
/// answers, the second a healthy signed one: the labels' key sets are
/// fetched together, each under the whole verification deadline, so the
/// tarpit does not spend the healthy label's time. The request verifies
/// with the second label, and the healthy directory was fetched exactly
/// once (counted at its server; the tarpit is let go once it was).
#[test]
fn a_tarpit_label_does_not_spend_another_labels_deadline() {
    use agentsig::webbotauth::directory::{directory_body, directory_headers};
    use agentsig::webbotauth::{sign_message, Status, MEDIA_TYPE, WELL_KNOWN_PATH};
    use net_support::{Ca, Resp, Server};
    use std::sync::atomic::{AtomicBool, Ordering};

    let ca = Ca::new();
    let srv = Server::start(&ca, &["agent.example"]);
    let tarpit = Tarpit::start(|| {});
    let good = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let stalled = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let body = directory_body(&[good.verifying_key()]);
    let authority = format!("agent.example:{}", srv.port);
    let mut dir = Resp::ok(MEDIA_TYPE, body.clone());
    dir.headers.clear();
    for (n, v) in directory_headers(&body, &authority, &[&good], now() - 10, now() + 3600).unwrap()
    {
        dir = dir.header(&n.to_ascii_lowercase(), &v);
    }
    srv.route(WELL_KNOWN_PATH, dir);
    let long = Duration::from_secs(300);
    let f = Fetcher::with_policy(
        FetchPolicy::default()
            .extra_root_pem(ca.pem())
            .allow_private_networks(true)
            .pin("tarpit.example", loopback())
            .pin("agent.example", loopback())
            .timeouts(long, long)
            .operation_timeout(long),
    )
    .unwrap();
    let client = DirectoryClient::new(Arc::new(f));

    let mut m =
        Message::parse(b"GET /page HTTP/1.1\r\nHost: site.example\r\n\r\n", "https").unwrap();
    let mut first = SignOptions::new(tarpit.url("/keys/stall.json"), now());
    first.label = "sig1".into();
    sign_message(&mut m, &stalled, &first).unwrap();
    let mut second = SignOptions::new(srv.url("agent.example", ""), now());
    second.label = "sig2".into();
    sign_message(&mut m, &good, &second).unwrap();

    let done = AtomicBool::new(false);
    let report = std::thread::scope(|s| {
        // Lets the tarpit go once the healthy directory was fetched (or the
        // verification ended), so that the test waits for no deadline.
        s.spawn(|| {
            while !done.load(Ordering::Relaxed) && srv.hit_count(WELL_KNOWN_PATH) == 0 {
                std::thread::sleep(Duration::from_millis(10));
            }
            tarpit.release();
        });
        // One deadline for the whole verification, as `BotAuthLayer` sets.
        let r = agentsig::net::fetch::with_deadline(
            std::time::Instant::now() + Duration::from_secs(10),
            || WebBotAuthVerifier::new(Policy::default()).verify(&m, &client, now()),
        );
        done.store(true, Ordering::Relaxed);
        r
    });
    assert_eq!(
        report.status(),
        Status::Verified,
        "{:?}",
        report.first_error()
    );
    let v = report.verified().unwrap();
    assert_eq!(v.label, "sig2");
    assert_eq!(v.key_set_url, srv.url("agent.example", WELL_KNOWN_PATH));
    assert_eq!(srv.hit_count(WELL_KNOWN_PATH), 1);
    // The tarpit label was asked at most once, and did not verify.
    assert!(tarpit.connections() <= 1);
    assert!(report.labels[0].result.is_err());
}

/// A key set cut short by the verification's deadline names that deadline
/// (its length as the caller set it), not the fetcher's own timeouts.
#[test]
fn a_deadline_failure_names_the_deadline_that_ran_out() {
    let tarpit = Tarpit::start(|| {});
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let m = message(&signed_request(&k, &tarpit.url("/keys/late.json"), now()));
    let dir = client();
    let r = agentsig::net::fetch::with_deadline(
        std::time::Instant::now() + Duration::from_millis(300),
        || WebBotAuthVerifier::new(Policy::default()).verify(&m, &dir, now()),
    );
    let e = r.first_error().expect("the tarpit never answers");
    let text = e.to_string();
    assert!(
        text.contains("the verification's deadline (300 ms)"),
        "{text}"
    );
}
