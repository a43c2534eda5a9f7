//! The Rust side of the Python package's benchmark (`python/bench/bench.py`):
//! the library's own time per call, on the very files the Python benchmark
//! verifies, in the same run.
//!
//! Reads, from DIR: `descriptor.json` and `descriptor.jws` (a detached JWS
//! over its RFC 8785 form), `response.body` and `response.headers.json` (a
//! signed response: `[[name, value], ...]`), `jwk.json` (the public key).
//! Times `Verifier::verify_descriptor` and `Verifier::verify_http` ITER
//! times per run, five runs, and prints one JSON object of median
//! microseconds per call; also `verify_http` with what the Python binding
//! adds in Rust (the message built from its parts, the CLI's report
//! serialized).
//!
//! Run: `cargo run --release --no-default-features --example py_parity -- DIR [ITER]`

use agentsig::httpsig::message::Field;
use agentsig::httpsig::Message;
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::Verifier;
use std::time::Instant;

fn median_us(iter: u32, mut f: impl FnMut()) -> f64 {
    for _ in 0..iter.div_ceil(10) {
        f();
    }
    let mut runs: Vec<f64> = (0..5)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..iter {
                f();
            }
            t.elapsed().as_secs_f64() * 1e6 / f64::from(iter)
        })
        .collect();
    runs.sort_by(f64::total_cmp);
    runs[2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().ok_or("usage: py_parity DIR [ITER]")?);
    let iter: u32 = args.next().map_or(Ok(2000), |s| s.parse())?;
    let doc = std::fs::read(dir.join("descriptor.json"))?;
    let jws = std::fs::read_to_string(dir.join("descriptor.jws"))?;
    let body = std::fs::read(dir.join("response.body"))?;
    let pairs: Vec<(String, String)> =
        serde_json::from_slice(&std::fs::read(dir.join("response.headers.json"))?)?;
    let jwk: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("jwk.json"))?)?;
    let jwks = serde_json::json!({ "keys": [jwk] }).to_string();
    let keys = StaticKeys::from_jwks(jwks.as_bytes(), KeySource::Jwks("jwk.json".into()), None)?;
    let verifier = Verifier::builder(keys.keys).build();

    // The response as the binding builds it from (name, value) pairs.
    let message = |body: Vec<u8>| {
        let fields = pairs
            .iter()
            .map(|(n, v)| Field {
                name: n.to_ascii_lowercase(),
                value: v.as_bytes().to_vec(),
            })
            .collect();
        Message::response(200, fields, body)
    };
    let response = message(body);

    // Both must verify before they are timed.
    if !verifier.verify_descriptor(&doc, &jws)?.verified() {
        return Err("the descriptor does not verify".into());
    }
    if verifier.verify_http(&response, None)?.valid_labels().len() != 1 {
        return Err("the response does not verify".into());
    }
    let descriptor_us = median_us(iter, || {
        std::hint::black_box(verifier.verify_descriptor(&doc, &jws).is_ok());
    });
    let response_us = median_us(iter, || {
        std::hint::black_box(verifier.verify_http(&response, None).is_ok());
    });
    // What the binding does per call besides Python: the message built from
    // its parts, then the CLI's report serialized.
    let full_us = median_us(iter, || {
        let m = message(response.body.clone());
        if let Ok(r) = verifier.verify_http(&m, None) {
            let json = agentsig::report::Report::from_http("http verify", None, &r);
            std::hint::black_box(serde_json::to_string(&json).map(|s| s.len()).unwrap_or(0));
        }
    });
    println!(
        "{}",
        serde_json::json!({
            "verify_descriptor_us": descriptor_us,
            "verify_response_us": response_us,
            "verify_response_with_report_us": full_us,
            "iterations": iter,
        })
    );
    Ok(())
}
