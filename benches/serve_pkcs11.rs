//! `agentsig serve` signing with a key in a PKCS#11 token against the same
//! key read from a file: the service `serve` runs (the publisher behind the
//! signing layer, `agentsig::server::run::publisher_service`), driven in
//! process by a fixed number of requests per round, the two keys taking
//! turns round after round on a SoftHSM2 token the bench makes itself
//! (tests/pkcs11_support).
//!
//! A token key cannot be read out of its token, so the pair is made in a
//! file (PKCS#8) and imported into the token with `pkcs11-tool
//! --write-object`: both sides sign with the very same key, and their
//! signatures carry the same `keyid`. The bench prints both throughputs,
//! their ratio (the goal: the token within 10 % of the file) and the calls
//! the token answered per second: the layer's signature cache signs a file
//! version at most once per second, so the token's load does not grow with
//! the request rate.
//!
//! Run: `cargo bench --bench serve_pkcs11` (needs softhsm2 and opensc).
//! Under `cargo test --all-targets` it only checks that it starts.

#[path = "../tests/pkcs11_support/mod.rs"]
mod pkcs11_support;

use agentsig::keys::{pkcs11, LoadOptions, SigningKey};
use agentsig::server::{run::publisher_service, KeyRing, PublishConfig, Publisher};
use agentsig::Algorithm;
use http_body_util::BodyExt as _;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tower::ServiceExt as _;

/// Requests per round and side: a round lasts about a second, so the
/// token's calls per second show the cache's once-per-second signing.
const REQUESTS: usize = 200_000;
/// Requests in flight at once (as many clients, each sending in turn).
const CLIENTS: usize = 16;
/// Rounds per side; the medians are printed.
const ROUNDS: usize = 9;
/// The site's files: every request asks for one of them in turn.
const FILES: [&str; 4] = [
    "/.well-known/agent.json",
    "/agents/planner.json",
    "/agents/booker.json",
    "/agents/searcher.json",
];

fn site(dir: &std::path::Path) {
    for f in FILES {
        let p = dir.join(f.trim_start_matches('/'));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let body = format!(
            "{{\"name\":\"{f}\",\"url\":\"https://site.example{f}\",\"version\":\"1.0.0\",\"description\":\"{}\"}}",
            "x".repeat(900)
        );
        std::fs::write(p, body).unwrap();
    }
}

/// One round: `REQUESTS` requests from `CLIENTS` concurrent clients; each
/// response is read whole and must be a signed 200. The wall time.
fn round(
    rt: &tokio::runtime::Runtime,
    svc: &agentsig::server::SignService<agentsig::server::PublishService>,
) -> Duration {
    let start = Instant::now();
    rt.block_on(async {
        let mut tasks = Vec::new();
        for c in 0..CLIENTS {
            let svc = svc.clone();
            tasks.push(tokio::spawn(async move {
                for i in 0..REQUESTS / CLIENTS {
                    let path = FILES[(c + i) % FILES.len()];
                    let req = http::Request::get(path)
                        .header("host", "site.example")
                        .body(())
                        .unwrap();
                    let res = svc.clone().oneshot(req).await.unwrap();
                    assert_eq!(res.status(), 200, "{path}");
                    assert!(res.headers().contains_key("signature"), "{path}");
                    std::hint::black_box(res.into_body().collect().await.unwrap().to_bytes());
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
    });
    start.elapsed()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let Some((t, _token)) = pkcs11_support::token() else {
        return;
    };
    // The key, made in a file and imported into the token.
    let file_key = SigningKey::generate(Algorithm::EcdsaP256Sha256).unwrap();
    let id = std::process::id();
    let private = t.dir.join(format!("served-{id}.pem"));
    let public = t.dir.join(format!("served-{id}.pub.pem"));
    std::fs::write(&private, file_key.pkcs8_pem().unwrap().as_bytes()).unwrap();
    std::fs::write(&public, file_key.verifying_key().to_spki_pem().unwrap()).unwrap();
    let label = format!("served-{id}");
    for (path, kind, extra) in [
        (&private, "privkey", "--usage-sign"),
        (&public, "pubkey", ""),
    ] {
        let mut args = vec![
            "--login",
            "--pin",
            pkcs11_support::PIN,
            "--write-object",
            path.to_str().unwrap(),
            "--type",
            kind,
            "--id",
            "05",
            "--label",
            &label,
        ];
        if !extra.is_empty() {
            args.push(extra);
        }
        t.tool(&args);
    }
    std::fs::remove_file(&private).unwrap();
    std::fs::remove_file(&public).unwrap();
    let token_key = pkcs11::load(&t.uri(&label), &LoadOptions::default()).unwrap();
    assert_eq!(
        token_key.verifying_key().thumbprint(),
        file_key.verifying_key().thumbprint(),
        "the token holds the file's key"
    );

    let root = t.dir.join(format!("site-{id}"));
    site(&root);
    let service = |key: SigningKey| {
        let ring = Arc::new(KeyRing::new(vec![key]).unwrap());
        let publisher = Arc::new(Publisher::new(PublishConfig::new(&root, ring)).unwrap());
        (publisher_service(publisher.clone()), publisher)
    };
    let (file_svc, _) = service(file_key);
    let (token_svc, token_pub) = service(token_key);
    let token_calls = || {
        token_pub
            .config()
            .keys
            .current()
            .key
            .token_key()
            .unwrap()
            .token_signatures()
    };

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // Warm both (file reads, the first signatures).
    round(&rt, &file_svc);
    round(&rt, &token_svc);
    let (mut file_t, mut token_t) = (Vec::new(), Vec::new());
    let (mut calls, mut token_total, mut seconds) = (0u64, Duration::ZERO, 0u64);
    let unix = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
    };
    for r in 0..ROUNDS {
        // Alternate which side goes first.
        let mut one = |token: bool| {
            if token {
                let (before, first) = (token_calls(), unix());
                let d = round(&rt, &token_svc);
                calls += token_calls() - before;
                // The distinct seconds this round signed in.
                seconds += unix() - first + 1;
                token_total += d;
                token_t.push(d);
            } else {
                file_t.push(round(&rt, &file_svc));
            }
        };
        one(r % 2 == 1);
        one(r % 2 == 0);
    }
    let per_s = |d: Duration| REQUESTS as f64 / d.as_secs_f64();
    let (f, k) = (median(file_t), median(token_t));
    println!(
        "serve, {REQUESTS} requests x {ROUNDS} rounds, {CLIENTS} clients, {} files, ES256: key file {:.0} responses/s, token key {:.0} responses/s, token / file {:.3} (goal >= 0.90)",
        FILES.len(),
        per_s(f),
        per_s(k),
        per_s(k) / per_s(f)
    );
    println!(
        "token calls: {calls} in {:.2} s of token rounds = {:.1}/s, for {} responses; at most {} files x {seconds} distinct seconds = {} (the signature cache signs a file version at most once per second)",
        token_total.as_secs_f64(),
        calls as f64 / token_total.as_secs_f64(),
        REQUESTS * ROUNDS,
        FILES.len(),
        FILES.len() as u64 * seconds
    );
    std::fs::remove_dir_all(&root).unwrap();
}
