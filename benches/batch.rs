//! Bulk verification on all cores, against the 2-thread crypto floor.
//!
//! * `dir`: 10,000 signed 10 KB descriptors (each with its detached JWS,
//!   ES256 over JCS) in a temporary directory, verified with
//!   [`agentsig::batch::run_ordered`] on 2 threads with one shared
//!   `Verifier` (each worker reads `FILE` and `FILE.jws`), and by the
//!   command line (`agentsig verify --batch DIR -j 2 --jwks ...`).
//! * `urls`: 1,000 of them served by a keep-alive HTTPS/1.1 server on
//!   127.0.0.1 (rustls on std threads, a test CA made with rcgen, as in
//!   `benches/net.rs`), verified through one shared `Resolver` on 2
//!   threads: descriptor and `.jws` fetched per item (no cache headers),
//!   the JWK Set fetched once and cached; with sequential fetches (the
//!   bulk path), with concurrent ones (the one-off default), and by the
//!   command line (`verify --batch LIST`, its own process). And the same
//!   descriptors served with an RFC 9421 response signature (the fields
//!   `agentsig serve` or `sign --headers-out` give), verified by the bulk
//!   path without fetching their `.jws` (`skip_jws_when_http_signed`,
//!   `verify --batch --response-signature-first`), against their own floor: SHA-256 of the
//!   descriptor (its `Content-Digest`) + ECDSA verify of the signature
//!   base. `BATCH_PROFILE=1 cargo bench --bench batch -- urls` runs only
//!   that path (for `perf`) and prints the CPU per item, client and the
//!   bench server's threads.
//! * floor: ring ECDSA P-256 verify of each descriptor's JWS signing input
//!   plus SHA-256 of the descriptor, the same items split over 2 threads.
//!
//! Prints items per second and the ratio to the floor. No assertion on
//! time. Run: `cargo bench --bench batch` (`-- N` for another count,
//! `-- dir` or `-- urls` for one part).

use agentsig::batch::{run_ordered, BatchOptions};
use agentsig::net::verify::UrlVerifyOptions;
use agentsig::net::{FetchPolicy, Fetcher, Resolver};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::{descriptor, Algorithm, SigningKey};
use base64::Engine as _;
use serde_json::json;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, TcpListener};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Instant;

const HOST: &str = "agent.example";

/// One route: the whole response (status line, header fields, body),
/// serialized once, and its request count.
struct Route {
    response: Vec<u8>,
    hits: AtomicUsize,
}

/// A keep-alive HTTPS/1.1 server on 127.0.0.1 (one thread per
/// connection) that counts the requests per path. Lean like a static file
/// server: each response is written from bytes prepared in advance, the
/// request head is scanned in a reused buffer, no allocation per request.
struct Server {
    port: u16,
    routes: Arc<RwLock<HashMap<String, Arc<Route>>>>,
    connections: Arc<AtomicUsize>,
}

/// The path of the request line in `head` (`GET /path HTTP/1.1`).
fn request_path(head: &[u8]) -> &[u8] {
    let mut parts = head.splitn(3, |b| *b == b' ');
    parts.next();
    parts.next().unwrap_or(b"/")
}

impl Server {
    fn start() -> (Server, Vec<u8>) {
        let mut p = rcgen::CertificateParams::new(Vec::<String>::new()).expect("ca");
        p.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let ca_key = rcgen::KeyPair::generate().expect("ca key");
        let ca = p.self_signed(&ca_key).expect("ca cert");
        let key = rcgen::KeyPair::generate().expect("key");
        let cert = rcgen::CertificateParams::new(vec![HOST.to_owned()])
            .expect("params")
            .signed_by(&key, &ca, &ca_key)
            .expect("cert");
        let cfg = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
        )
        .expect("tls config");
        let cfg = Arc::new(cfg);
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let srv = Server {
            port,
            routes: Arc::default(),
            connections: Arc::default(),
        };
        let (routes, n) = (srv.routes.clone(), srv.connections.clone());
        let not_found: Arc<[u8]> =
            Arc::from(&b"HTTP/1.1 404 Not Found\r\ncontent-length: 9\r\n\r\nnot found"[..]);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let _ = stream.set_nodelay(true);
                n.fetch_add(1, Ordering::SeqCst);
                let (cfg, routes, not_found) = (cfg.clone(), routes.clone(), not_found.clone());
                let spawned = std::thread::Builder::new()
                    .name("bench-server".into())
                    .spawn(move || {
                        let _count = CountServerCpu;
                        let Ok(conn) = rustls::ServerConnection::new(cfg) else {
                            return;
                        };
                        let mut tls = rustls::StreamOwned::new(conn, stream);
                        let mut buf = vec![0u8; 16 * 1024];
                        let (mut start, mut end) = (0usize, 0usize);
                        loop {
                            // One request head: scan only the bytes not yet seen.
                            let mut scanned = start;
                            let head_end = loop {
                                if let Some(i) = buf[scanned.saturating_sub(3).max(start)..end]
                                    .windows(4)
                                    .position(|w| w == b"\r\n\r\n")
                                {
                                    break scanned.saturating_sub(3).max(start) + i + 4;
                                }
                                scanned = end;
                                if end == buf.len() {
                                    if start == 0 {
                                        return; // a head larger than the buffer
                                    }
                                    buf.copy_within(start..end, 0);
                                    (scanned, end, start) = (end - start, end - start, 0);
                                }
                                match tls.read(&mut buf[end..]) {
                                    Ok(0) | Err(_) => return,
                                    Ok(k) => end += k,
                                }
                            };
                            let route = std::str::from_utf8(request_path(&buf[start..head_end]))
                                .ok()
                                .and_then(|p| routes.read().expect("routes").get(p).cloned());
                            start = head_end;
                            if start == end {
                                (start, end) = (0, 0);
                            }
                            let written = match &route {
                                Some(r) => {
                                    r.hits.fetch_add(1, Ordering::Relaxed);
                                    tls.write_all(&r.response)
                                }
                                None => tls.write_all(&not_found),
                            };
                            if written.and_then(|_| tls.flush()).is_err() {
                                return;
                            }
                        }
                    });
                drop(spawned);
            }
        });
        (srv, ca.pem().into_bytes())
    }

    fn route(&self, path: &str, headers: &[(&str, &str)], body: Vec<u8>) {
        let mut response = b"HTTP/1.1 200 OK\r\n".to_vec();
        for (k, v) in headers {
            response.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
        }
        response.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes());
        response.extend_from_slice(&body);
        self.routes.write().expect("routes").insert(
            path.into(),
            Arc::new(Route {
                response,
                hits: AtomicUsize::new(0),
            }),
        );
    }

    fn url(&self, path: &str) -> String {
        format!("https://{HOST}:{}{path}", self.port)
    }

    fn hits(&self, path: &str) -> usize {
        self.routes
            .read()
            .expect("routes")
            .get(path)
            .map_or(0, |r| r.hits.load(Ordering::Relaxed))
    }
}

const THREADS: usize = 2;
/// Rounds of the HTTPS part (each about a second).
const URL_ROUNDS: usize = 7;

/// The median (the upper one of an even count).
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn b64(s: &str) -> Vec<u8> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s)
        .expect("base64url")
}

/// A 10 KB descriptor (the shape of docs/benchmarks.md's serve bench).
fn doc(i: usize, extra: &serde_json::Value) -> Vec<u8> {
    let skills: Vec<_> = (0..88)
        .map(|k| {
            json!({"id": format!("s{k}"), "name": format!("skill number {k}"),
                   "description": format!("does thing {k} with care and precision")})
        })
        .collect();
    let mut d = json!({"name": format!("bench {i}"), "version": "1.0.0",
                       "description": "benchmark descriptor", "skills": skills});
    if let (Some(m), Some(e)) = (d.as_object_mut(), extra.as_object()) {
        m.extend(e.clone());
    }
    serde_json::to_vec_pretty(&d).expect("json")
}

/// The raw work of one descriptor: the JWS signing input and signature.
struct Raw {
    doc: Vec<u8>,
    input: Vec<u8>,
    sig: Vec<u8>,
}

fn raw(doc: &[u8], jws: &str) -> Raw {
    let mut parts = jws.trim().split('.');
    let (h, _, s) = (
        parts.next().expect("h"),
        parts.next(),
        parts.next().expect("s"),
    );
    let canonical = agentsig::jcs::canonicalize(doc).expect("jcs");
    let mut input = h.as_bytes().to_vec();
    input.push(b'.');
    input.extend(
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(canonical)
            .as_bytes(),
    );
    Raw {
        doc: doc.to_vec(),
        input,
        sig: b64(s),
    }
}

/// The raw work of one signed response: SHA-256 of the body (its
/// `Content-Digest`) and ECDSA verify of the RFC 9421 signature base
/// (section 2.5), rebuilt here from the fields and checked once.
fn response_raw(doc: &[u8], fields: &[(String, String)], point: &[u8]) -> Raw {
    let get = |name: &str| {
        fields
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
            .expect("field")
    };
    let params = get("Signature-Input");
    let params = params.strip_prefix("sig1=").expect("sig1");
    let base = format!(
        "\"@status\": 200\n\"content-type\": {}\n\"content-digest\": {}\n\"@signature-params\": {params}",
        get("Content-Type"),
        get("Content-Digest")
    );
    let sig = get("Signature");
    let sig = sig
        .strip_prefix("sig1=:")
        .and_then(|s| s.strip_suffix(':'))
        .expect("sig1 value");
    let sig = base64::engine::general_purpose::STANDARD
        .decode(sig)
        .expect("base64");
    ring::signature::UnparsedPublicKey::new(&ring::signature::ECDSA_P256_SHA256_FIXED, point)
        .verify(base.as_bytes(), &sig)
        .expect("the rebuilt signature base verifies");
    Raw {
        doc: doc.to_vec(),
        input: base.into_bytes(),
        sig,
    }
}

/// Items per second of the floor on `THREADS` threads.
fn floor(items: &[Raw], point: &[u8]) -> f64 {
    let start = Instant::now();
    std::thread::scope(|s| {
        for chunk in items.chunks(items.len().div_ceil(THREADS)) {
            s.spawn(move || {
                for r in chunk {
                    let d = ring::digest::digest(&ring::digest::SHA256, &r.doc);
                    std::hint::black_box(d);
                    ring::signature::UnparsedPublicKey::new(
                        &ring::signature::ECDSA_P256_SHA256_FIXED,
                        point,
                    )
                    .verify(&r.input, &r.sig)
                    .expect("floor verify");
                }
            });
        }
    });
    items.len() as f64 / start.elapsed().as_secs_f64()
}

fn main() {
    // `cargo test --all-targets` runs this once as a smoke test (no
    // `--bench` argument): 100 descriptors, not the 10,000 of the figures.
    let bench_mode = std::env::args().any(|a| a == "--bench");
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(if bench_mode { 10_000 } else { 100 });
    let n_urls = (n / 10).max(1);
    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256)
        .expect("key")
        .with_kid("k1");
    let jwk = key.verifying_key().to_jwk().to_value();
    let point = [
        &[4u8][..],
        &b64(jwk["x"].as_str().expect("x")),
        &b64(jwk["y"].as_str().expect("y")),
    ]
    .concat();
    let urls_only = std::env::args().any(|a| a == "urls");
    let opts = BatchOptions::with_threads(THREADS);
    if !urls_only {
        dir_rounds(n, &key, &point, &opts);
    }
    if std::env::args().any(|a| a == "dir") {
        return;
    }

    // Over HTTPS from loopback.
    let (srv, ca_pem) = Server::start();
    let mut j = jwk.clone();
    j["use"] = json!("sig");
    srv.route(
        "/jwks",
        &[
            ("content-type", "application/json"),
            ("cache-control", "max-age=3600"),
        ],
        json!({ "keys": [j] }).to_string().into_bytes(),
    );
    let auth = json!({"authentication": {"jwksUri": srv.url("/jwks")}});
    let mut url_raws = Vec::with_capacity(n_urls);
    let mut urls = Vec::with_capacity(n_urls);
    // The same descriptors served with an RFC 9421 response signature
    // (what `agentsig serve` or `sign --headers-out` gives a static host),
    // and their `.jws` too, which the bulk path does not fetch.
    let mut resp_raws = Vec::with_capacity(n_urls);
    let mut signed_urls = Vec::with_capacity(n_urls);
    let created = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64;
    for i in 0..n_urls {
        let d = doc(i, &auth);
        let jws = descriptor::sign(&d, &key).expect("sign").jws;
        let fields = agentsig::httpsig::static_response_fields(
            &d,
            "application/json",
            &[(&key, "k1".to_owned())],
            created,
            None,
        )
        .expect("response fields");
        resp_raws.push(response_raw(&d, &fields, &point));
        let headers: Vec<(&str, &str)> = fields
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        srv.route(&format!("/r{i}.json"), &headers, d.clone());
        srv.route(
            &format!("/r{i}.json.jws"),
            &[("content-type", "application/jose")],
            jws.clone().into_bytes(),
        );
        signed_urls.push(srv.url(&format!("/r{i}.json")));
        url_raws.push(raw(&d, &jws));
        srv.route(
            &format!("/d{i}.json"),
            &[("content-type", "application/json")],
            d,
        );
        srv.route(
            &format!("/d{i}.json.jws"),
            &[("content-type", "application/jose")],
            jws.into_bytes(),
        );
        urls.push(srv.url(&format!("/d{i}.json")));
    }
    let policy = FetchPolicy::default()
        .allow_private_networks(true)
        .extra_root_pem(ca_pem.clone())
        .pin(HOST, vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]);
    let fetcher = Fetcher::with_policy(policy).expect("fetcher");
    // The library's bulk option (`sequential_fetches`): descriptor then
    // `.jws` on the worker, over its own kept-alive connection.
    let mut bulk_opts = UrlVerifyOptions::default();
    bulk_opts.sequential_fetches = true;
    let bulk = Resolver::with_options(fetcher.clone(), bulk_opts);
    // The bulk path for signed responses (`verify --batch
    // --response-signature-first`): the `.jws` is looked for only beside a
    // response without a signature.
    let mut skip_opts = UrlVerifyOptions::default();
    skip_opts.sequential_fetches = true;
    skip_opts.skip_jws_when_http_signed = true;
    let signed = Resolver::with_options(fetcher.clone(), skip_opts);
    // The one-off default: both fetched concurrently (a thread per call).
    let concurrent = Resolver::new(fetcher);
    // Warm the key discovery and the connection pool.
    bulk.verify_url(&urls[0]).expect("warm");
    concurrent.verify_url(&urls[0]).expect("warm");
    let w = signed.verify_url(&signed_urls[0]).expect("warm");
    assert!(
        w.http_signature.is_some() && w.jws.is_none() && w.jws_skipped,
        "a signed response verifies without its .jws"
    );
    // Fetches wait on the network: more workers than cores overlap them.
    let url_threads: usize = std::env::var("BATCH_URL_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(THREADS);
    let url_opts = BatchOptions::with_threads(url_threads);
    let ca_path =
        std::env::temp_dir().join(format!("agentsig-bench-ca-{}.pem", std::process::id()));
    std::fs::write(&ca_path, &ca_pem).expect("write CA");
    let list_path = ca_path.with_extension("list");
    std::fs::write(&list_path, urls.join("\n")).expect("write list");
    let signed_list_path = ca_path.with_extension("signed.list");
    std::fs::write(&signed_list_path, signed_urls.join("\n")).expect("write list");
    let jwks_hits = srv.hits("/jwks");
    let run_on = |r: &Resolver, urls: &[String]| {
        let start = Instant::now();
        let mut ok = 0usize;
        run_ordered(
            urls.iter(),
            &url_opts,
            |u: &String| r.verify_url(u).is_ok(),
            |_, r| ok += usize::from(r),
        );
        assert_eq!(ok, n_urls, "every URL verifies");
        n_urls as f64 / start.elapsed().as_secs_f64()
    };
    let run = |r: &Resolver| run_on(r, &urls);
    // `BATCH_PROFILE=1`: only the signed-response bulk path, for `perf`.
    if std::env::var_os("BATCH_PROFILE").is_some() {
        let (c0, s0) = (cpu_now(), SERVER_CPU_NS.load(Ordering::Relaxed));
        let mut rates = Vec::new();
        for _ in 0..40 {
            rates.push(run_on(&signed, &signed_urls));
        }
        println!(
            "profile: signed responses {:.0}/s (median), {:.1} us CPU per item, client and server \
             (of which {:.1} us in the bench server's threads)",
            median(&mut rates),
            (cpu_now() - c0) * 1e6 / (40 * n_urls) as f64,
            (SERVER_CPU_NS.load(Ordering::Relaxed) - s0) as f64 * 1e-3 / (40 * n_urls) as f64
        );
        return;
    }
    let cli_on = |list: &std::path::Path, extra: &[&str]| {
        let start = Instant::now();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_agentsig"))
            .args(["verify", "--batch"])
            .arg(list)
            .args(extra)
            .arg("--ca-file")
            .arg(&ca_path)
            .args(["--resolve-to", &format!("{HOST}=127.0.0.1")])
            .args(["--allow-private-networks", "--require-signed"])
            .args(["-j", &url_threads.to_string()])
            .output()
            .expect("run agentsig");
        let rate = n_urls as f64 / start.elapsed().as_secs_f64();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        rate
    };
    // Short rounds on a shared machine: each ratio is taken against the
    // floor measured just before and just after it, and the median over
    // the rounds is printed.
    let (mut r_seq, mut r_conc, mut r_cli) = (Vec::new(), Vec::new(), Vec::new());
    let (mut r_resp, mut r_resp_cli, mut r_resp_jf) = (Vec::new(), Vec::new(), Vec::new());
    for round in 1..=URL_ROUNDS {
        // Signed responses, against their own floor (SHA-256 of the
        // descriptor + ECDSA verify of the signature base) and the
        // detached-JWS floor of the other columns.
        let g0 = floor(&resp_raws, &point);
        let resp = run_on(&signed, &signed_urls);
        let g1 = floor(&resp_raws, &point);
        let resp_cli = cli_on(&signed_list_path, &["--response-signature-first"]);
        let g2 = floor(&resp_raws, &point);
        let f0 = floor(&url_raws, &point);
        let seq = run(&bulk);
        let f1 = floor(&url_raws, &point);
        let conc = run(&concurrent);
        let f2 = floor(&url_raws, &point);
        let cli = cli_on(&list_path, &[]);
        let f3 = floor(&url_raws, &point);
        let (p_resp, p_resp_cli, p_resp_jf) = (
            100.0 * resp / ((g0 + g1) / 2.0),
            100.0 * resp_cli / ((g1 + g2) / 2.0),
            100.0 * resp / ((f0 + f1) / 2.0),
        );
        println!(
            "urls round {round}: {n_urls} signed responses (RFC 9421, .jws not fetched), {url_threads} workers: \
             response floor {:.0}/s; Resolver {resp:.0}/s ({p_resp:.0} % of it, {p_resp_jf:.0} % of the \
             detached-JWS floor); verify --batch {resp_cli:.0}/s ({p_resp_cli:.0} %)",
            (g0 + g1 + g2) / 3.0,
        );
        r_resp.push(p_resp);
        r_resp_cli.push(p_resp_cli);
        r_resp_jf.push(p_resp_jf);
        let (p_seq, p_conc, p_cli) = (
            100.0 * seq / ((f0 + f1) / 2.0),
            100.0 * conc / ((f1 + f2) / 2.0),
            100.0 * cli / ((f2 + f3) / 2.0),
        );
        println!(
            "urls round {round}: {n_urls} over loopback HTTPS (keys cached), {url_threads} workers, load {}: \
             floor {:.0}/s; Resolver, sequential fetches {seq:.0}/s ({p_seq:.0} % of floor); \
             concurrent fetches {conc:.0}/s ({p_conc:.0} %); verify --batch {cli:.0}/s ({p_cli:.0} %, \
             its own process: TLS handshakes and key discovery included)",
            load(),
            (f0 + f1 + f2 + f3) / 4.0,
        );
        r_seq.push(p_seq);
        r_conc.push(p_conc);
        r_cli.push(p_cli);
    }
    println!(
        "urls, median of {URL_ROUNDS} rounds, % of the floor: sequential fetches {:.0} %, \
         concurrent fetches {:.0} %, verify --batch {:.0} %",
        median(&mut r_seq),
        median(&mut r_conc),
        median(&mut r_cli)
    );
    println!(
        "urls, signed responses, median of {URL_ROUNDS} rounds: Resolver {:.0} % of the response floor \
         ({:.0} % of the detached-JWS floor), verify --batch {:.0} %",
        median(&mut r_resp),
        median(&mut r_resp_jf),
        median(&mut r_resp_cli)
    );
    assert_eq!(
        srv.hits("/r1.json.jws"),
        0,
        "the bulk path never fetches the .jws of a signed response"
    );
    println!(
        "JWK Set fetched {} time(s) by the library, {} TLS connections in all",
        jwks_hits,
        srv.connections.load(Ordering::SeqCst)
    );
    let _ = std::fs::remove_file(&ca_path);
    let _ = std::fs::remove_file(&list_path);
    let _ = std::fs::remove_file(&signed_list_path);
}

/// CPU seconds used so far by this process, all threads (the bench's
/// HTTPS server included).
fn cpu_now() -> f64 {
    clock_secs(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// The time of `clock`, in seconds.
fn clock_secs(clock: libc::clockid_t) -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec.
    let rc = unsafe { libc::clock_gettime(clock, &mut t) };
    assert_eq!(rc, 0, "clock_gettime");
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// CPU nanoseconds used by the bench server's connection threads that
/// have ended (each adds its own when its connection closes).
static SERVER_CPU_NS: AtomicUsize = AtomicUsize::new(0);

/// Adds the calling thread's CPU time to [`SERVER_CPU_NS`] when dropped.
struct CountServerCpu;

impl Drop for CountServerCpu {
    fn drop(&mut self) {
        SERVER_CPU_NS.fetch_add(
            (clock_secs(libc::CLOCK_THREAD_CPUTIME_ID) * 1e9) as usize,
            Ordering::Relaxed,
        );
    }
}

/// The load average, as `/proc/loadavg` gives it.
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split(' ')
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// 10,000 descriptors from a directory: the library and the CLI.
fn dir_rounds(n: usize, key: &SigningKey, point: &[u8], opts: &BatchOptions) {
    let dir = std::env::temp_dir().join(format!("agentsig-bench-batch-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("mkdir");
    let mut raws = Vec::with_capacity(n);
    let mut paths: Vec<PathBuf> = Vec::with_capacity(n);
    for i in 0..n {
        let d = doc(i, &json!({}));
        let jws = descriptor::sign(&d, key).expect("sign").jws;
        let p = dir.join(format!("d{i:05}.json"));
        std::fs::write(&p, &d).expect("write");
        std::fs::write(dir.join(format!("d{i:05}.json.jws")), &jws).expect("write");
        raws.push(raw(&d, &jws));
        paths.push(p);
    }
    let size = raws[0].doc.len();
    let jwks = agentsig::jwk::jwks_document(&[key.verifying_key()]);
    let jwks_path = dir.with_extension("jwks.json");
    std::fs::write(&jwks_path, jwks.to_string()).expect("write");
    let v =
        Verifier::builder(StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned))
            .build();
    println!(
        "{n} descriptors of {size} bytes, ES256 detached JWS over JCS, {THREADS} threads, load {}",
        load()
    );

    let (mut r_lib, mut r_cli) = (Vec::new(), Vec::new());
    for round in 1..=3 {
        let f0 = floor(&raws, point);
        let start = Instant::now();
        let mut ok = 0usize;
        run_ordered(
            paths.iter(),
            opts,
            |p: &PathBuf| {
                let d = std::fs::read(p).ok()?;
                let mut jp = p.clone().into_os_string();
                jp.push(".jws");
                let jws = std::fs::read_to_string(jp).ok()?;
                v.verify_descriptor(&d, &jws).ok().map(|r| r.verified())
            },
            |_, r| ok += usize::from(r == Some(true)),
        );
        assert_eq!(ok, n, "every descriptor verifies");
        let lib = n as f64 / start.elapsed().as_secs_f64();
        let f1 = floor(&raws, point);
        let start = Instant::now();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_agentsig"))
            .args(["verify", "--batch"])
            .arg(&dir)
            .arg("--jwks")
            .arg(&jwks_path)
            .args(["-j", &THREADS.to_string()])
            .output()
            .expect("run agentsig");
        let cli = n as f64 / start.elapsed().as_secs_f64();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let f2 = floor(&raws, point);
        // Each against the floor measured just before and just after it.
        let (p_lib, p_cli) = (
            100.0 * lib / ((f0 + f1) / 2.0),
            100.0 * cli / ((f1 + f2) / 2.0),
        );
        println!(
            "dir round {round}: floor {:.0}/s, run_ordered {lib:.0}/s ({p_lib:.0} % of floor), \
             verify --batch {cli:.0}/s ({p_cli:.0} % of floor)",
            (f0 + f1 + f2) / 3.0
        );
        r_lib.push(p_lib);
        r_cli.push(p_cli);
    }
    println!(
        "dir, median of 3 rounds, % of the floor: run_ordered {:.0} %, verify --batch {:.0} %",
        median(&mut r_lib),
        median(&mut r_cli)
    );
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&jwks_path);
}
