//! RFC 9421 verification cost against the raw primitives.
//!
//! * `verify/agentsig_10k_response`: full policy verification of a signed
//!   10 KB descriptor response (Signature-Input/Signature parsing, key
//!   resolution, signature base, ECDSA P-256, Content-Digest check).
//! * `verify/raw_ring_sha256_plus_ecdsa`: SHA-256 of the same body plus ring's
//!   ECDSA P-256 verify over the same base bytes: the floor.
//! * `base/typical_response`: signature-base construction alone.
//!
//! Run: cargo bench --bench httpsig

use agentsig::httpsig::base::{signature_base, signature_params_value};
use agentsig::httpsig::components::known_sf_type;
use agentsig::httpsig::{self, ComponentId, HttpPolicy, Message, SignatureSpec};
use agentsig::keys::{load_signing_key, LoadOptions};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use criterion::{black_box, criterion_group, criterion_main, Criterion};

fn descriptor(len: usize) -> Vec<u8> {
    let mut s = String::from("{\"name\":\"bench-agent\",\"skills\":[");
    let mut i = 0;
    while s.len() < len - 40 {
        s.push_str(&format!(
            "{{\"id\":\"skill-{i}\",\"description\":\"does thing {i}\"}},"
        ));
        i += 1;
    }
    s.push_str("{\"id\":\"last\"}]}");
    while s.len() < len {
        s.insert(s.len() - 1, ' ');
    }
    s.into_bytes()
}

fn bench(c: &mut Criterion) {
    let key = load_signing_key(
        &std::fs::read("keys/rfc9421/test-key-ecc-p256.pem").unwrap(),
        &LoadOptions::default(),
    )
    .unwrap()
    .with_kid("test-key-ecc-p256");
    let body = descriptor(10 * 1024);
    let created = 1_700_000_000;
    let fields = httpsig::static_response_fields(
        &body,
        "application/json",
        &[(&key, "test-key-ecc-p256".to_owned())],
        created,
        None,
    )
    .unwrap();
    let mut res = Message::response(200, Vec::new(), body.clone());
    for (n, v) in &fields {
        res.add_header(n, v);
    }
    res.add_header("Content-Length", &body.len().to_string());
    res.add_header("Cache-Control", "max-age=300");

    let keys = StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned);
    let verifier = Verifier::builder(keys)
        .clock(agentsig::clock::FixedClock(created + 10))
        .http(HttpPolicy::descriptor_response())
        .build();
    assert!(verifier.verify_http(&res, None).unwrap().all_valid());

    // The same base and signature bytes for the raw baseline.
    let spec_components = httpsig::descriptor_response_components();
    let params = SignatureSpec::new("sig1")
        .created(created)
        .keyid("test-key-ecc-p256")
        .alg(key.algorithm())
        .params;
    let pv = signature_params_value(&spec_components, &params);
    let base = signature_base(&res, None, &spec_components, &pv, &known_sf_type).unwrap();
    let sig = key.sign(&base).unwrap();
    let spki = key.verifying_key().to_spki_der().unwrap();
    let point = spki[spki.len() - 65..].to_vec();

    let mut g = c.benchmark_group("verify");
    g.bench_function("agentsig_10k_response", |b| {
        b.iter(|| {
            let r = verifier.verify_http(black_box(&res), None).unwrap();
            assert!(r.all_valid());
        })
    });
    g.bench_function("raw_ring_sha256_plus_ecdsa", |b| {
        b.iter(|| {
            let d = ring::digest::digest(&ring::digest::SHA256, black_box(&body));
            black_box(d);
            ring::signature::UnparsedPublicKey::new(
                &ring::signature::ECDSA_P256_SHA256_FIXED,
                black_box(&point),
            )
            .verify(black_box(&base), black_box(&sig))
            .unwrap();
        })
    });
    g.finish();

    let typical: Vec<ComponentId> = [
        "@status",
        "content-type",
        "content-digest",
        "content-length",
        "cache-control",
    ]
    .iter()
    .map(|s| ComponentId::parse(s).unwrap())
    .collect();
    let pv = signature_params_value(&typical, &params);
    c.bench_function("base/typical_response", |b| {
        b.iter(|| {
            let base = signature_base(
                black_box(&res),
                None,
                black_box(&typical),
                &pv,
                &known_sf_type,
            )
            .unwrap();
            black_box(base);
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
