//! RFC 8785 canonicalization throughput: `agentsig::jcs::canonicalize` against
//! a plain `serde_json::from_slice::<Value>` + `serde_json::to_vec` of the
//! same bytes (the floor any canonicalizer built on serde_json pays), and
//! against the RFC 8785 crates a Rust user would pick instead: `serde_jcs`
//! 0.2 and `json-canon` 0.1 (each: parse with serde_json, then
//! canonicalize), in the same run.
//!
//! Inputs: deterministic agent-descriptor-like documents of about 10 KB and
//! 1 MB (nested objects, arrays, non-ASCII and escaped strings, integers and
//! decimals), pretty-printed as a person or a tool would write them.
//!
//! `cargo bench --bench jcs` also prints, after criterion's figures, the
//! throughput ratio canonicalize / serde_json for each size.
//!
//! Note: serde_jcs turns on serde_json's `float_roundtrip` feature, and Cargo
//! unifies features, so in this bench serde_json parses floats exactly (as a
//! canonicalizer must); without the feature its float parsing is faster but
//! may be off by one unit in the last place.

use criterion::{black_box, criterion_group, BenchmarkId, Criterion, Throughput};
use serde_json::{json, Map, Value};
use std::time::Duration;

#[path = "support/interleaved.rs"]
mod interleaved;

/// SplitMix64: small, deterministic, good enough to vary a document.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
}

const WORDS: &[&str] = &[
    "agent",
    "search",
    "invoice",
    "calendar",
    "résumé",
    "naïve",
    "translate",
    "Größe",
    "東京",
    "データ",
    "שלום",
    "مرحبا",
    "emoji 😀",
    "quote \"x\"",
    "tab\there",
    "line\nbreak",
    "path/to",
    "café",
    "Ελληνικά",
    "summarize",
    "workflow",
    "€uro",
    "日本語",
    "ok",
];

fn sentence(r: &mut Rng, words: u64) -> String {
    let n = 3 + r.below(words);
    (0..n).map(|_| r.pick(WORDS)).collect::<Vec<_>>().join(" ")
}

fn skill(r: &mut Rng, i: usize) -> Value {
    let mut params = Map::new();
    for k in 0..(2 + r.below(4)) {
        let v = match r.below(4) {
            0 => json!(r.below(100_000)),
            1 => json!((r.below(1_000_000) as f64) / 1000.0),
            2 => json!(f64::from_bits(0x3FF0_0000_0000_0000 | (r.next() >> 12)) * 3.0),
            _ => json!(r.below(2) == 0),
        };
        params.insert(format!("p{k}_{}", r.pick(WORDS)), v);
    }
    json!({
        "id": format!("skill-{i}-{:x}", r.next() & 0xffff),
        "name": sentence(r, 3),
        "description": sentence(r, 25),
        "tags": (0..(1 + r.below(5))).map(|_| r.pick(WORDS)).collect::<Vec<_>>(),
        "examples": (0..r.below(3)).map(|_| sentence(r, 10)).collect::<Vec<_>>(),
        "inputModes": ["text/plain", "application/json"],
        "outputModes": ["application/json"],
        "params": params,
        "rating": { "mean": (r.below(5000) as f64) / 1000.0, "count": r.below(10_000), "weight": -((r.below(997) as f64) / 7.0) },
        "deprecated": r.below(10) == 0,
        "replacedBy": null,
    })
}

fn document(seed: u64, skills: &[Value]) -> Vec<u8> {
    let doc = json!({
        "protocolVersion": "1.0",
        "name": "Example Agent — Ünïcödé édition",
        "description": sentence(&mut Rng(seed ^ 1), 40),
        "url": "https://agent.example.com/a2a/v1",
        "version": "2.14.3",
        "provider": { "organization": "Example Org", "url": "https://example.com" },
        "capabilities": { "streaming": true, "pushNotifications": false, "extensions": [
            { "uri": "https://example.com/ext/trace/v1", "required": false, "params": { "sampling": 0.25, "maxSpans": 1024 } }
        ] },
        "securitySchemes": {
            "oauth": { "type": "oauth2", "flows": { "clientCredentials": {
                "tokenUrl": "https://auth.example.com/token", "scopes": { "read": "Read access", "write": "Write access" } } } },
            "apiKey": { "type": "apiKey", "in": "header", "name": "X-API-Key" }
        },
        "security": [ { "oauth": ["read"] } ],
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": skills,
    });
    serde_json::to_vec_pretty(&doc).expect("serializable")
}

/// The smallest pretty-printed descriptor with at least `target` bytes
/// (skills drawn in sequence from the seeded generator).
fn descriptor(target: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed);
    let mut skills = vec![skill(&mut r, 0)];
    // Grow geometrically until the target is passed...
    while document(seed, &skills).len() < target {
        let want = skills.len() * 2;
        while skills.len() < want {
            skills.push(skill(&mut r, skills.len()));
        }
    }
    // ...then find the fewest skills that reach it.
    let (mut lo, mut hi) = (1, skills.len());
    while lo < hi {
        let mid = (lo + hi) / 2;
        if document(seed, &skills[..mid]).len() >= target {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    document(seed, &skills[..lo])
}

fn inputs() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("10KB", descriptor(10 * 1024, 42)),
        ("1MB", descriptor(1024 * 1024, 7)),
    ]
}

fn serde_json_roundtrip(input: &[u8]) -> Vec<u8> {
    let v: Value = serde_json::from_slice(input).expect("valid");
    serde_json::to_vec(&v).expect("serializable")
}

fn serde_jcs_canonicalize(input: &[u8]) -> Vec<u8> {
    let v: Value = serde_json::from_slice(input).expect("valid");
    serde_jcs::to_vec(&v).expect("canonicalizable")
}

fn json_canon_canonicalize(input: &[u8]) -> Vec<u8> {
    let v: Value = serde_json::from_slice(input).expect("valid");
    json_canon::to_vec(&v).expect("canonicalizable")
}

fn bench(c: &mut Criterion) {
    for (name, input) in inputs() {
        // The three must agree on what they are given.
        let ours = agentsig::jcs::canonicalize(&input).expect("canonical");
        assert_eq!(
            ours,
            serde_jcs_canonicalize(&input),
            "serde_jcs disagrees on {name}"
        );
        assert_eq!(
            ours,
            json_canon_canonicalize(&input),
            "json-canon disagrees on {name}"
        );
        let mut g = c.benchmark_group(format!("jcs_{name}"));
        g.throughput(Throughput::Bytes(input.len() as u64));
        if input.len() > 100_000 {
            g.sample_size(30);
        }
        g.bench_with_input(
            BenchmarkId::new("agentsig_canonicalize", input.len()),
            &input,
            |b, i| b.iter(|| agentsig::jcs::canonicalize(black_box(i)).expect("canonical")),
        );
        g.bench_with_input(
            BenchmarkId::new("serde_json_parse_serialize", input.len()),
            &input,
            |b, i| b.iter(|| serde_json_roundtrip(black_box(i))),
        );
        g.bench_with_input(
            BenchmarkId::new("serde_jcs_0_2", input.len()),
            &input,
            |b, i| b.iter(|| serde_jcs_canonicalize(black_box(i))),
        );
        g.bench_with_input(
            BenchmarkId::new("json_canon_0_1", input.len()),
            &input,
            |b, i| b.iter(|| json_canon_canonicalize(black_box(i))),
        );
        g.finish();
    }
}

fn ratio_report() {
    println!(
        "\nthroughput ratios (medians of 21 interleaved rounds; >1 means faster than serde_json):"
    );
    for (name, input) in inputs() {
        let t = interleaved::interleaved_medians(
            &[
                &|| drop(black_box(agentsig::jcs::canonicalize(black_box(&input)))),
                &|| drop(black_box(serde_json_roundtrip(black_box(&input)))),
                &|| drop(black_box(serde_jcs_canonicalize(black_box(&input)))),
                &|| drop(black_box(json_canon_canonicalize(black_box(&input)))),
            ],
            21,
        );
        let (ours, base, sjcs, jc) = (t[0], t[1], t[2], t[3]);
        let mbps = |d: Duration| input.len() as f64 / d.as_secs_f64() / 1e6;
        println!(
            "  {name:>4} ({} bytes): agentsig {:.1} µs ({:.0} MB/s), serde_json parse+serialize {:.1} µs ({:.0} MB/s), serde_jcs {:.1} µs ({:.0} MB/s)",
            input.len(),
            ours.as_secs_f64() * 1e6,
            mbps(ours),
            base.as_secs_f64() * 1e6,
            mbps(base),
            sjcs.as_secs_f64() * 1e6,
            mbps(sjcs),
        );
        println!(
            "        agentsig / serde_json = {:.2}x   serde_jcs / serde_json = {:.2}x",
            base.as_secs_f64() / ours.as_secs_f64(),
            base.as_secs_f64() / sjcs.as_secs_f64(),
        );
        println!(
            "        json-canon 0.1 {:.1} µs: agentsig {:.2}x faster than json-canon, {:.2}x faster than serde_jcs",
            jc.as_secs_f64() * 1e6,
            jc.as_secs_f64() / ours.as_secs_f64(),
            sjcs.as_secs_f64() / ours.as_secs_f64(),
        );
    }
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    if std::env::args().any(|a| a == "--bench") {
        ratio_report();
    }
}
