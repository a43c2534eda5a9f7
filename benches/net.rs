//! `verify_url` and `resolve_agent` against a
//! loopback HTTPS server, compared with the raw primitives.
//!
//! The bench starts its own keep-alive HTTPS server on 127.0.0.1 (rustls on
//! std threads, a test CA made with rcgen, hostnames pinned to loopback as
//! in `tests/net_verify_url.rs`). It serves a 10 KB descriptor with an
//! RFC 9421 response signature and `Content-Digest` (RFC 9530), its
//! detached JWS (`URL.jws`, draft-narvaneni-agent-uri-03 section 10.3) and a JWK Set, and logs
//! every request with the TCP connection it came on.
//!
//! * `net/resolver_warm_cached`: a long-lived [`Resolver`] with default
//!   (strict) options on a descriptor and JWS served with
//!   `Cache-Control: max-age=300`: warm caches, no request per call, every
//!   signature and the digest verified again.
//! * `net/resolve_warm_cached`: `Resolver::resolve` of an `agent://` URI
//!   whose registry, descriptor, JWS and JWK Set are all cacheable.
//! * `net/resolver_uncacheable`: the same Resolver on the descriptor served
//!   without cache headers (descriptor and JWS asked again, concurrently).
//! * `net/verify_url_warm`: `verify_url` with a long-lived [`Discovery`]
//!   passed as `UrlVerifyOptions::keys` (JWK Set cached, connections
//!   reused): two HTTPS requests (descriptor, `.jws`) per call.
//! * `net/verify_url_default_opts`: `verify_url` with default options, the
//!   way the CLI calls it: it builds a fresh `Discovery` per call, so the
//!   JWK Set is fetched again each time (three requests per call).
//! * `net/in_memory_verify`: the same checks on the already-fetched bytes
//!   through the public API (`Content-Digest`, RFC 9421 verify, JCS +
//!   detached JWS verify, keys in memory): the verification cost without
//!   the network or the Resolver's reuse of the canonical form.
//! * `net/raw_ring_floor`: SHA-256 of the body + ring ECDSA P-256 verify of
//!   the RFC 9421 signature base + ring ECDSA P-256 verify of the JWS
//!   signing input: the crypto floor of the same work.
//!
//! Outside criterion it prints the 1- and 2-thread throughput of the warm
//! path and the request/connection count of one cold `resolve_agent`.
//!
//! Run: cargo bench --bench net -- --warm-up-time 1 --measurement-time 3

use agentsig::httpsig::base::{signature_base, signature_params_value};
use agentsig::httpsig::components::known_sf_type;
use agentsig::httpsig::{self, HttpPolicy, Message, SignatureSpec};
use agentsig::net::discovery::{Discovery, KeyAuthority};
use agentsig::net::resolve::{resolve_agent, Resolution};
use agentsig::net::verify::{verify_url, UrlVerifyOptions};
use agentsig::net::{FetchPolicy, Fetcher, Resolver};
use agentsig::trust::{KeyResolver, KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::{descriptor, Algorithm, SigningKey};
use base64::Engine as _;
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use serde_json::json;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, TcpListener};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const HOST: &str = "agent.example";

/// A canned response: extra header fields and body.
type Resp = (Vec<(String, String)>, Vec<u8>);

/// A keep-alive HTTPS/1.1 server on 127.0.0.1 that logs
/// `(connection number, request line)` for every request.
struct Server {
    port: u16,
    connections: Arc<AtomicUsize>,
    log: Arc<Mutex<Vec<(usize, String)>>>,
    routes: Arc<Mutex<HashMap<String, Resp>>>,
}

impl Server {
    fn start(names: &[&str]) -> (Server, Vec<u8>) {
        let mut p = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        p.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let ca = p.self_signed(&ca_key).unwrap();
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(names)
            .unwrap()
            .signed_by(&key, &ca, &ca_key)
            .unwrap();
        let cfg = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
        )
        .unwrap();
        let cfg = Arc::new(cfg);
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let srv = Server {
            port,
            connections: Arc::default(),
            log: Arc::default(),
            routes: Arc::default(),
        };
        let (n, log, routes) = (srv.connections.clone(), srv.log.clone(), srv.routes.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let _ = stream.set_nodelay(true);
                let id = n.fetch_add(1, Ordering::SeqCst);
                let (cfg, log, routes) = (cfg.clone(), log.clone(), routes.clone());
                std::thread::spawn(move || {
                    let Ok(conn) = rustls::ServerConnection::new(cfg) else {
                        return;
                    };
                    let mut tls = rustls::StreamOwned::new(conn, stream);
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    loop {
                        let end = loop {
                            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                                break i + 4;
                            }
                            match tls.read(&mut chunk) {
                                Ok(0) | Err(_) => return,
                                Ok(k) => buf.extend_from_slice(&chunk[..k]),
                            }
                        };
                        let head = String::from_utf8_lossy(&buf[..end]).to_string();
                        buf.drain(..end);
                        let line = head.lines().next().unwrap_or("").to_string();
                        let path = line.split(' ').nth(1).unwrap_or("/").to_string();
                        log.lock().unwrap().push((id, line));
                        let resp = routes.lock().unwrap().get(&path).cloned();
                        let (status, (headers, body)) = match resp {
                            Some(r) => (200, r),
                            None => (404, (Vec::new(), b"not found".to_vec())),
                        };
                        let mut out = format!("HTTP/1.1 {status} X\r\n");
                        for (k, v) in &headers {
                            out.push_str(&format!("{k}: {v}\r\n"));
                        }
                        out.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
                        let mut bytes = out.into_bytes();
                        bytes.extend_from_slice(&body);
                        if tls.write_all(&bytes).and_then(|_| tls.flush()).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        (srv, ca.pem().into_bytes())
    }

    fn route(&self, path: &str, headers: Vec<(String, String)>, body: Vec<u8>) {
        self.routes
            .lock()
            .unwrap()
            .insert(path.into(), (headers, body));
    }

    fn url(&self, path: &str) -> String {
        format!("https://{HOST}:{}{path}", self.port)
    }

    fn reset(&self) -> (usize, Vec<(usize, String)>) {
        let start = self.connections.load(Ordering::SeqCst);
        (start, std::mem::take(&mut *self.log.lock().unwrap()))
    }
}

/// A ~`len`-byte JSON descriptor whose key source is `jwks_uri`.
fn descriptor_body(len: usize, jwks_uri: &str) -> Vec<u8> {
    let mut s = format!(
        "{{\"name\":\"bench-agent\",\"authentication\":{{\"jwksUri\":\"{jwks_uri}\"}},\"skills\":["
    );
    let mut i = 0;
    while s.len() < len - 40 {
        s.push_str(&format!(
            "{{\"id\":\"skill-{i}\",\"description\":\"does thing {i}\"}},"
        ));
        i += 1;
    }
    s.push_str("{\"id\":\"last\"}]}");
    s.into_bytes()
}

struct Env {
    srv: Server,
    fetcher: Fetcher,
    url: String,
    body: Vec<u8>,
    fields: Vec<(String, String)>,
    jws: String,
    key: SigningKey,
    created: i64,
    ca_pem: Vec<u8>,
}

fn env() -> Env {
    let (srv, ca_pem) = Server::start(&[HOST]);
    let fetcher = Fetcher::with_policy(
        FetchPolicy::default()
            .extra_root_pem(ca_pem.clone())
            .allow_private_networks(true)
            .pin(HOST, vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]),
    )
    .unwrap();
    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256)
        .unwrap()
        .with_kid("k1");
    let mut j = key.verifying_key().to_jwk().to_value();
    j["use"] = json!("sig");
    srv.route(
        "/jwks",
        vec![
            ("content-type".into(), "application/json".into()),
            ("cache-control".into(), "max-age=3600".into()),
        ],
        serde_json::to_vec(&json!({ "keys": [j] })).unwrap(),
    );
    let body = descriptor_body(10 * 1024, &srv.url("/jwks"));
    let created = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let fields = httpsig::static_response_fields(
        &body,
        "application/json",
        &[(&key, "k1".to_owned())],
        created,
        None,
    )
    .unwrap();
    srv.route("/a.json", fields.clone(), body.clone());
    // The same descriptor and JWS, cacheable for five minutes (RFC 9111).
    let mut cacheable = fields.clone();
    cacheable.push(("cache-control".into(), "max-age=300".into()));
    srv.route("/c.json", cacheable, body.clone());
    let jws = descriptor::sign(&body, &key).unwrap().jws;
    srv.route(
        "/a.json.jws",
        vec![("content-type".into(), "application/jose".into())],
        jws.clone().into_bytes(),
    );
    srv.route(
        "/c.json.jws",
        vec![
            ("content-type".into(), "application/jose".into()),
            ("cache-control".into(), "max-age=300".into()),
        ],
        jws.clone().into_bytes(),
    );
    srv.route(
        "/.well-known/agents.json",
        vec![
            ("content-type".into(), "application/json".into()),
            ("cache-control".into(), "max-age=300".into()),
        ],
        serde_json::to_vec(&json!({"agents": {"planner": "/a.json", "cached": "/c.json"}}))
            .unwrap(),
    );
    let url = srv.url("/a.json");
    Env {
        srv,
        fetcher,
        url,
        body,
        fields,
        jws,
        key,
        created,
        ca_pem,
    }
}

fn strict() -> UrlVerifyOptions {
    let o = UrlVerifyOptions::default();
    // The default refuses an unsigned descriptor.
    o
}

/// Options for the warm path: one `Discovery` shared across calls.
fn warm_opts(e: &Env) -> UrlVerifyOptions {
    let d = Discovery::new(e.fetcher.clone(), KeyAuthority::JwksUri(e.srv.url("/jwks")));
    let mut o = strict();
    o.keys = Some(Arc::new(d) as Arc<dyn KeyResolver>);
    o
}

fn verify_warm(e: &Env, o: &UrlVerifyOptions) {
    let v = verify_url(&e.fetcher, &e.url, o).unwrap();
    assert!(v.http_signature.is_some() && v.jws.is_some() && v.digest_checked);
    black_box(v);
}

/// Requests and connections of one cold `resolve_agent` on a new fetcher.
fn cold_resolution(e: &Env, ca_pem: &[u8]) {
    let fetcher = Fetcher::with_policy(
        FetchPolicy::default()
            .extra_root_pem(ca_pem.to_vec())
            .allow_private_networks(true)
            .pin(HOST, vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]),
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let (c0, _) = e.srv.reset();
    let uri = format!("agent://{HOST}:{}/planner", e.srv.port);
    let t = Instant::now();
    let r = resolve_agent(&fetcher, &uri, &strict()).unwrap();
    let took = t.elapsed();
    assert!(matches!(r, Resolution::Descriptor { .. }));
    let (c1, log) = e.srv.reset();
    println!(
        "cold resolve_agent {uri}: {} HTTP requests on {} TCP connection(s), {:.2} ms",
        log.len(),
        c1 - c0,
        took.as_secs_f64() * 1e3
    );
    for (conn, line) in &log {
        println!("  conn #{:<2} {line}", conn - c0);
    }
}

/// Descriptors per second of the warm path on `threads` threads sharing
/// one fetcher and one Discovery.
fn throughput(e: &Arc<Env>, threads: usize, dur: Duration) -> f64 {
    let o = Arc::new(warm_opts(e));
    verify_warm(e, &o);
    let count = Arc::new(AtomicUsize::new(0));
    let stop = Instant::now() + dur;
    let hs: Vec<_> = (0..threads)
        .map(|_| {
            let (e, o, count) = (e.clone(), o.clone(), count.clone());
            std::thread::spawn(move || {
                while Instant::now() < stop {
                    verify_warm(&e, &o);
                    count.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let t = Instant::now();
    for h in hs {
        h.join().unwrap();
    }
    count.load(Ordering::Relaxed) as f64 / t.elapsed().as_secs_f64()
}

/// Calls per second of `f` on `threads` scoped threads.
fn scoped_throughput(threads: usize, dur: Duration, f: &(dyn Fn() + Sync)) -> f64 {
    let count = AtomicUsize::new(0);
    let t = Instant::now();
    let stop = t + dur;
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                while Instant::now() < stop {
                    f();
                    count.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    count.load(Ordering::Relaxed) as f64 / t.elapsed().as_secs_f64()
}

fn bench(c: &mut Criterion) {
    let e = Arc::new(env());

    // In-memory pieces for (c) and the raw floor (b).
    let mut msg = Message::response(200, Vec::new(), e.body.clone());
    for (n, v) in &e.fields {
        msg.add_header(n, v);
    }
    let keys = StaticKeys::new().with(
        e.key.verifying_key().clone(),
        KeySource::Discovered("bench".into()),
    );
    let mut http = HttpPolicy::new();
    http.required = httpsig::descriptor_response_components();
    http.check_content_digest = true;
    let verifier = Verifier::builder(keys).http(http).build();
    let mut http_nodigest = HttpPolicy::new();
    http_nodigest.required = httpsig::descriptor_response_components();
    http_nodigest.check_content_digest = false;
    let verifier_nodigest = Verifier::builder(StaticKeys::new().with(
        e.key.verifying_key().clone(),
        KeySource::Discovered("bench".into()),
    ))
    .http(http_nodigest)
    .build();
    // What `Resolver::verify_url` does with the bytes (one digest check,
    // one JCS parse inside verify_descriptor), without the network.
    let in_memory = || {
        let lines: Vec<&[u8]> = e
            .fields
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case("content-digest"))
            .map(|(_, v)| v.as_bytes())
            .collect();
        agentsig::digest::verify_content_digest(&lines, &e.body).unwrap();
        let r = verifier_nodigest.verify_http(&msg, None).unwrap();
        let j = verifier_nodigest
            .verify_descriptor(&e.body, &e.jws)
            .unwrap();
        let _ = black_box((r, j));
    };
    in_memory();

    let comps = httpsig::descriptor_response_components();
    let params = SignatureSpec::new("sig1")
        .created(e.created)
        .keyid("k1")
        .alg(e.key.algorithm())
        .params;
    let pv = signature_params_value(&comps, &params);
    let base = signature_base(&msg, None, &comps, &pv, &known_sf_type).unwrap();
    let http_sig = e.key.sign(&base).unwrap();
    let canonical = agentsig::jcs::canonicalize(&e.body).unwrap();
    let (jws_header, jws_sig) = e.jws.split_once("..").unwrap();
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let jws_input = format!("{jws_header}.{}", b64.encode(&canonical)).into_bytes();
    let jws_sig = b64.decode(jws_sig).unwrap();
    let spki = e.key.verifying_key().to_spki_der().unwrap();
    let pk = ring::signature::UnparsedPublicKey::new(
        &ring::signature::ECDSA_P256_SHA256_FIXED,
        spki[spki.len() - 65..].to_vec(),
    );
    let floor = || {
        black_box(ring::digest::digest(&ring::digest::SHA256, &e.body));
        pk.verify(&base, &http_sig).unwrap();
        pk.verify(&jws_input, &jws_sig).unwrap();
    };
    floor();

    let warm = warm_opts(&e);
    verify_warm(&e, &warm);
    let (c0, _) = e.srv.reset();
    verify_warm(&e, &warm);
    let (c1, log) = e.srv.reset();
    println!(
        "warm verify_url: {} HTTP requests on {} new TCP connection(s) per call: {:?}",
        log.len(),
        c1 - c0,
        log.iter().map(|(_, l)| l.as_str()).collect::<Vec<_>>()
    );
    let default_opts = strict();
    verify_warm(&e, &default_opts);
    let _ = e.srv.reset();
    verify_warm(&e, &default_opts);
    let (c2, log) = e.srv.reset();
    println!(
        "default-options verify_url: {} HTTP requests on {} new TCP connection(s) per call",
        log.len(),
        c2 - c1
    );

    // A long-lived Resolver, default (strict) options, cacheable descriptor:
    // warm caches mean no request at all; every signature verified.
    let resolver = Resolver::with_options(e.fetcher.clone(), strict());
    let cached_url = e.srv.url("/c.json");
    let resolver_warm = || {
        let v = resolver.verify_url(&cached_url).unwrap();
        assert!(v.http_signature.is_some() && v.jws.is_some() && v.digest_checked);
        black_box(v);
    };
    resolver_warm();
    let _ = e.srv.reset();
    resolver_warm();
    let (c3, log) = e.srv.reset();
    println!(
        "warm Resolver::verify_url of a cacheable descriptor: {} HTTP requests on {} new TCP connection(s) per call",
        log.len(),
        c3 - c2
    );
    // The same Resolver on the descriptor without cache headers: the
    // descriptor and its JWS are asked again (concurrently), keys kept.
    let resolver_uncached = || {
        let v = resolver.verify_url(&e.url).unwrap();
        assert!(v.http_signature.is_some() && v.jws.is_some());
        black_box(v);
    };
    resolver_uncached();

    // agent:// resolution through the same Resolver: agents.json, the
    // descriptor, its JWS and the JWK Set all warm.
    let cached_uri = format!("agent://{HOST}:{}/cached", e.srv.port);
    let resolve_warm = || {
        let r = resolver.resolve(&cached_uri).unwrap();
        assert!(matches!(r, Resolution::Descriptor { .. }));
        black_box(r);
    };
    resolve_warm();
    let (c4, _) = e.srv.reset();
    resolve_warm();
    let (c5, log) = e.srv.reset();
    println!(
        "warm Resolver::resolve {cached_uri}: {} HTTP requests on {} new TCP connection(s) per call",
        log.len(),
        c5 - c4
    );

    let mut g = c.benchmark_group("net");
    g.bench_function("resolver_warm_cached", |b| b.iter(resolver_warm));
    g.bench_function("resolve_warm_cached", |b| b.iter(resolve_warm));
    g.bench_function("resolver_uncacheable", |b| b.iter(resolver_uncached));
    g.bench_function("verify_url_warm", |b| b.iter(|| verify_warm(&e, &warm)));
    g.bench_function("verify_url_default_opts", |b| {
        b.iter(|| verify_warm(&e, &default_opts))
    });
    g.bench_function("in_memory_verify", |b| b.iter(in_memory));
    g.bench_function("raw_ring_floor", |b| b.iter(floor));
    g.finish();

    // Where the in-memory time goes.
    let mut g = c.benchmark_group("net_parts");
    g.bench_function("json_parse_10k", |b| {
        b.iter(|| black_box(serde_json::from_slice::<serde_json::Value>(&e.body).unwrap()))
    });
    g.bench_function("content_digest_10k", |b| {
        let line = e
            .fields
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-digest"))
            .map(|(_, v)| v.as_bytes())
            .unwrap();
        b.iter(|| black_box(agentsig::digest::verify_content_digest(&[line], &e.body).unwrap()))
    });
    g.bench_function("verify_http", |b| {
        b.iter(|| black_box(verifier.verify_http(&msg, None).unwrap()))
    });
    g.bench_function("jcs_10k", |b| {
        b.iter(|| black_box(agentsig::jcs::canonicalize(&e.body).unwrap()))
    });
    g.bench_function("verify_descriptor", |b| {
        b.iter(|| black_box(verifier.verify_descriptor(&e.body, &e.jws).unwrap()))
    });
    g.bench_function("ring_ecdsa_p256_verify", |b| {
        b.iter(|| pk.verify(&base, &http_sig).unwrap())
    });
    g.finish();

    // A quick timed loop for the figures (printed, never asserted).
    let per = |f: &dyn Fn(), n: usize| {
        let t = Instant::now();
        for _ in 0..n {
            f();
        }
        t.elapsed().as_secs_f64() / n as f64
    };
    let t_floor = per(&floor, 2000);
    let t_mem = per(&in_memory, 1000);
    let t_warm = per(&|| verify_warm(&e, &warm), 500);
    let t_cached = per(&resolver_warm, 2000);
    let t_floor2 = per(&floor, 2000);
    println!(
        "per call: warm Resolver (cached) {:.1} us, warm verify_url (2 requests) {:.1} us, in-memory verify {:.1} us, raw ring floor {:.1} us",
        t_cached * 1e6,
        t_warm * 1e6,
        t_mem * 1e6,
        (t_floor + t_floor2) / 2.0 * 1e6
    );
    let t_floor = (t_floor + t_floor2) / 2.0;
    println!(
        "ratios: warm cached/floor {:.2}x, warm 2-request/floor {:.2}x, in-memory/floor {:.2}x; crypto share of warm cached {:.0}%",
        t_cached / t_floor,
        t_warm / t_floor,
        t_mem / t_floor,
        100.0 * t_floor / t_cached,
    );
    let r1 = scoped_throughput(1, Duration::from_secs(2), &resolver_warm);
    let r2 = scoped_throughput(2, Duration::from_secs(2), &resolver_warm);
    println!(
        "warm Resolver (cached) throughput: {r1:.0} descriptors/s on 1 thread, {r2:.0} on 2 threads"
    );
    let one = throughput(&e, 1, Duration::from_secs(2));
    let two = throughput(&e, 2, Duration::from_secs(2));
    println!(
        "warm verify_url throughput: {one:.0} descriptors/s on 1 thread, {two:.0} on 2 threads"
    );
    let mem1 = scoped_throughput(1, Duration::from_secs(2), &in_memory);
    let mem2 = scoped_throughput(2, Duration::from_secs(2), &in_memory);
    let floor2 = scoped_throughput(2, Duration::from_secs(2), &floor);
    println!(
        "in-memory verify throughput: {mem1:.0} descriptors/s on 1 thread, {mem2:.0} on 2 threads (raw ring floor on 2 threads: {floor2:.0}/s)"
    );

    cold_resolution(&e, &e.ca_pem);
}

criterion_group!(benches, bench);
criterion_main!(benches);
