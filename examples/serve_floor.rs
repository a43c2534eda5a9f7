//! The crypto floor of a signed response (docs/benchmarks.md): per
//! response one SHA-256 over the body (Content-Digest) and one ECDSA P-256
//! signature over the signature base, on every core. Prints responses per
//! second; compare with `wrk` against `agentsig serve`.
//!
//! `cargo run --release --example serve_floor -- [BODY_BYTES] [SECONDS] [THREADS]`

use agentsig::httpsig::{sign, ComponentId, Derived, Message, SignatureSpec};
use agentsig::{Algorithm, SigningKey};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn main() {
    let mut args = std::env::args().skip(1);
    let size: usize = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(10 * 1024);
    let secs: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(5)
        .min(30);
    let threads: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(2).max(1);
    let key = Arc::new(SigningKey::generate(Algorithm::EcdsaP256Sha256).expect("key"));
    let body = Arc::new(vec![b'x'; size]);
    let start = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let (key, body) = (key.clone(), body.clone());
            std::thread::spawn(move || {
                let mut n = 0u64;
                let end = Instant::now() + Duration::from_secs(secs);
                while Instant::now() < end {
                    let digest = agentsig::digest::content_digest(&body);
                    let mut m = Message::response(200, Vec::new(), Vec::new());
                    m.add_header("content-type", "application/json");
                    m.add_header("content-digest", &digest);
                    let mut spec = SignatureSpec::new("sig1");
                    spec.components = vec![
                        ComponentId::derived(Derived::Status),
                        ComponentId::field("content-type").expect("name"),
                        ComponentId::field("content-digest").expect("name"),
                    ];
                    let spec = spec.created(1).keyid("k").alg(key.algorithm());
                    sign(&m, None, &spec, &key).expect("sign");
                    n += 1;
                }
                n
            })
        })
        .collect();
    let total: u64 = handles.into_iter().map(|h| h.join().unwrap_or(0)).sum();
    let el = start.elapsed().as_secs_f64();
    println!(
        "floor: {:.0} signed responses/s ({threads} threads, {size}-byte body, {total} in {el:.2} s)",
        total as f64 / el
    );
}
