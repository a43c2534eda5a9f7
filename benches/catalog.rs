//! AI Catalog verification against the two-core ES256 floor.
//!
//! * `catalog/verify_1000_inline`: `Verifier::verify_catalog` of a catalog
//!   of 1,000 entries, each with inline `data` (a small JSON document of a
//!   media type agentsig does not check, so the time is the catalog's own)
//!   and a Trust Manifest signed with ES256: parse, lint of every MUST,
//!   each manifest's RFC 8785 form and JWS verification (the manifests
//!   checked on all cores, scoped threads), each artifact's binding
//!   (SHA-256 of the RFC 8785 form of its `data` against the provenance
//!   `sourceDigest` its manifest declares), one result per entry.
//! * `catalog/floor_1000_es256_2_threads`: 1,000 bare ring ECDSA P-256
//!   verifies of one manifest's signing input, spread over 2 threads: the
//!   least any verifier of those 1,000 signatures does on two cores.
//!
//! Prints the ratio floor / catalog (1.0: the catalog verifies at the
//! floor's speed; the goal is at least 0.80). No assertion on time. Run:
//! `cargo bench --bench catalog -- --warm-up-time 1 --measurement-time 5`

use agentsig::catalog::{self, CatalogOptions, SignTarget};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::{Algorithm, SigningKey, Verifier};
use base64::Engine as _;
use criterion::{black_box, Criterion};
use serde_json::{json, Value};

#[path = "support/interleaved.rs"]
mod interleaved;

const N: usize = 1000;

/// The catalog: N inline entries, every manifest signed by `key`.
fn signed_catalog(key: &SigningKey) -> Vec<u8> {
    let entries: Vec<Value> = (0..N)
        .map(|i| {
            json!({
                "identifier": format!("urn:example:skill:{i}"),
                "displayName": format!("Skill {i}"),
                "mediaType": "application/vnd.example.skill+json",
                "version": "1.0.0",
                "data": {"name": format!("skill-{i}"), "description": "does one thing well", "tags": ["a", "b"]}
            })
        })
        .collect();
    let mut doc = json!({"specVersion": "1.0", "entries": entries});
    catalog::sign_catalog(&mut doc, key, &SignTarget::Every).expect("sign");
    serde_json::to_vec(&doc).expect("json")
}

/// One manifest's (signing input, raw P-256 signature), for the floor.
fn floor_input(doc: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let v: Value = serde_json::from_slice(doc).expect("json");
    let m = &v["entries"][0]["trustManifest"];
    let jws = m["signature"].as_str().expect("jws");
    let (header, sig) = jws.split_once("..").expect("detached");
    let canonical = catalog::canonical_manifest(m).expect("canonical");
    let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(canonical);
    let sig = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(sig)
        .expect("sig");
    (format!("{header}.{payload}").into_bytes(), sig)
}

fn main() {
    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256).expect("key");
    let doc = signed_catalog(&key);
    let v =
        Verifier::builder(StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned))
            .build();
    let opts = CatalogOptions::default().require_signed(true);
    let r = v.verify_catalog(&doc, &opts).expect("catalog");
    assert!(r.verified(), "{:?}", r.first_failure());
    assert_eq!(r.entries.len(), N);
    // Every artifact bound by the digest its signed manifest declares (the
    // RFC 8785 form of its data hashed and compared on every run).
    assert_eq!(r.counts().bound, N);
    assert!(r
        .entries
        .iter()
        .all(|e| e.binding == catalog::Binding::ManifestDigest));

    let (input, sig) = floor_input(&doc);
    let spki = key.verifying_key().to_jwk().to_value();
    let b = |k: &str| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(spki[k].as_str().expect("coord"))
            .expect("b64")
    };
    let mut point = vec![4u8];
    point.extend(b("x"));
    point.extend(b("y"));
    let pk =
        ring::signature::UnparsedPublicKey::new(&ring::signature::ECDSA_P256_SHA256_FIXED, point);
    assert!(pk.verify(&input, &sig).is_ok());
    let floor = || {
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    for _ in 0..N / 2 {
                        black_box(pk.verify(black_box(&input), black_box(&sig)).is_ok());
                    }
                });
            }
        })
    };
    let verify = || {
        black_box(v.verify_catalog(black_box(&doc), &opts).expect("catalog"));
    };

    // For an instruction counter (`valgrind --tool=callgrind`, which
    // counts the same on a loaded machine): `CATALOG_BENCH_ONCE=verify`
    // (or `floor`, or `setup`) runs that one call after the setup and
    // stops; the cost of a call is its run's count minus `setup`'s.
    if let Ok(which) = std::env::var("CATALOG_BENCH_ONCE") {
        match which.as_str() {
            "verify" => verify(),
            "floor" => floor(),
            _ => {}
        }
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    {
        let mut g = c.benchmark_group("catalog");
        g.sample_size(10);
        g.bench_function("verify_1000_inline", |b| b.iter(verify));
        g.bench_function("floor_1000_es256_2_threads", |b| b.iter(floor));
        g.finish();
    }
    c.final_summary();
    // `cargo test --all-targets` runs this once as a smoke test (no
    // `--bench` argument): the interleaved timing loops are for `cargo
    // bench` only.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let t = interleaved::interleaved_medians(&[&verify, &floor], 9);
    println!(
        "\ncatalog of {N} inline entries with ES256 manifests, {} bytes (median of 9 interleaved rounds):",
        doc.len()
    );
    println!(
        "  Verifier::verify_catalog {:>9.2} ms\n  floor (2 threads)        {:>9.2} ms\n  floor / catalog          {:>9.2}  (goal: >= 0.80)",
        t[0].as_secs_f64() * 1e3,
        t[1].as_secs_f64() * 1e3,
        t[1].as_secs_f64() / t[0].as_secs_f64()
    );
}
