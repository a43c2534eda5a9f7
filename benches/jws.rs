//! Detached JWS over JCS: sign and verify a 10 KB descriptor, against the raw
//! primitive on the same bytes (ring sign/verify + SHA-256).
//!
//! Run: `cargo bench --bench jws`. Report the ratio agentsig / raw.

use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::{descriptor, Algorithm, SigningKey};
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use ring::signature::{self as rsig, KeyPair};

/// A deterministic ~10 KB agent descriptor (the example, with more skills).
pub fn descriptor_10k() -> Vec<u8> {
    let base = include_str!("../examples/agent.json");
    let mut v: serde_json::Value = serde_json::from_str(base).expect("example parses");
    let skill = v["skills"][0].clone();
    let mut skills = Vec::new();
    let mut i = 0;
    loop {
        let mut s = skill.clone();
        s["id"] = serde_json::Value::String(format!("skill-{i}"));
        s["name"] = serde_json::Value::String(format!("Skill № {i} — «planning»"));
        skills.push(s);
        v["skills"] = serde_json::Value::Array(skills.clone());
        let out = serde_json::to_vec_pretty(&v).expect("serializes");
        if out.len() >= 10 * 1024 {
            return out;
        }
        i += 1;
    }
}

fn bench(c: &mut Criterion) {
    let doc = descriptor_10k();
    let canonical = agentsig::jcs::canonicalize(&doc).expect("canonical");
    let rng = ring::rand::SystemRandom::new();

    for alg in [Algorithm::EcdsaP256Sha256, Algorithm::Ed25519] {
        let key = SigningKey::generate(alg).expect("keygen");
        let verifier = Verifier::builder(
            StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned),
        )
        .build();
        let signed = descriptor::sign(&doc, &key).expect("sign");
        let mut g = c.benchmark_group(format!("jws-10k/{}", alg.jose_name()));
        g.bench_function("agentsig sign (JCS + JWS)", |b| {
            b.iter(|| descriptor::sign(black_box(&doc), &key))
        });
        g.bench_function("agentsig verify (JCS + JWS)", |b| {
            b.iter(|| {
                let r = verifier
                    .verify_descriptor(black_box(&doc), &signed.jws)
                    .expect("verify");
                assert!(r.verified());
            })
        });
        // The raw primitive over the same bytes: SHA-256 of the document plus
        // one signature operation (what any signer must do at least).
        match alg {
            Algorithm::EcdsaP256Sha256 => {
                let pkcs8 = rsig::EcdsaKeyPair::generate_pkcs8(
                    &rsig::ECDSA_P256_SHA256_FIXED_SIGNING,
                    &rng,
                )
                .expect("pkcs8");
                let kp = rsig::EcdsaKeyPair::from_pkcs8(
                    &rsig::ECDSA_P256_SHA256_FIXED_SIGNING,
                    pkcs8.as_ref(),
                    &rng,
                )
                .expect("kp");
                let sig = kp.sign(&rng, &canonical).expect("sig");
                let pk = rsig::UnparsedPublicKey::new(
                    &rsig::ECDSA_P256_SHA256_FIXED,
                    kp.public_key().as_ref().to_vec(),
                );
                g.bench_function("raw ring sign + SHA-256", |b| {
                    b.iter(|| {
                        let d = ring::digest::digest(&ring::digest::SHA256, black_box(&doc));
                        (d, kp.sign(&rng, black_box(&canonical)))
                    })
                });
                g.bench_function("raw ring verify + SHA-256", |b| {
                    b.iter(|| {
                        let d = ring::digest::digest(&ring::digest::SHA256, black_box(&doc));
                        (d, pk.verify(black_box(&canonical), sig.as_ref()).is_ok())
                    })
                });
            }
            _ => {
                let pkcs8 = rsig::Ed25519KeyPair::generate_pkcs8(&rng).expect("pkcs8");
                let kp = rsig::Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).expect("kp");
                let sig = kp.sign(&canonical);
                let pk =
                    rsig::UnparsedPublicKey::new(&rsig::ED25519, kp.public_key().as_ref().to_vec());
                g.bench_function("raw ring sign + SHA-256", |b| {
                    b.iter(|| {
                        let d = ring::digest::digest(&ring::digest::SHA256, black_box(&doc));
                        (d, kp.sign(black_box(&canonical)))
                    })
                });
                g.bench_function("raw ring verify + SHA-256", |b| {
                    b.iter(|| {
                        let d = ring::digest::digest(&ring::digest::SHA256, black_box(&doc));
                        (d, pk.verify(black_box(&canonical), sig.as_ref()).is_ok())
                    })
                });
            }
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
