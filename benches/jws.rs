//! Detached JWS over JCS: sign and verify a 10 KB descriptor, against the raw
//! primitive on the same bytes (ring sign/verify + SHA-256).
//!
//! Run: `cargo bench --bench jws`. Report the ratio agentsig / raw.
//!
//! Then, in the same run, against what a Rust user would assemble from
//! the crates instead: `json-canon` for RFC 8785 (over a `serde_json`
//! parse) and `jsonwebtoken` 9 (ring) for the JWS signature of the
//! detached signing input (`jsonwebtoken` has no detached or JCS mode, so
//! the signing input is built by hand: `BASE64URL(header) "."
//! BASE64URL(JCS(doc))`), with the header's `alg` checked; ES256 and EdDSA,
//! sign and verify, interleaved rounds, medians printed with the ratio.

use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::{descriptor, Algorithm, SigningKey};
use criterion::{black_box, criterion_group, Criterion};
use ring::signature::{self as rsig, KeyPair};

#[path = "support/interleaved.rs"]
mod interleaved;

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

/// The DER inside a PEM block.
fn pem_der(pem: &str) -> Vec<u8> {
    let b64: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    base64::engine::general_purpose::STANDARD
        .decode(b64)
        .expect("PEM base64")
}

/// Detached JWS over JCS with `json-canon` + `jsonwebtoken`: sign.
fn peer_sign(doc: &[u8], header_b64: &str, key: &jsonwebtoken::EncodingKey, alg: Alg) -> String {
    let v: serde_json::Value = serde_json::from_slice(doc).expect("json");
    let canonical = json_canon::to_vec(&v).expect("jcs");
    let mut input = String::with_capacity(header_b64.len() + 1 + canonical.len() * 4 / 3 + 4);
    input.push_str(header_b64);
    input.push('.');
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode_string(&canonical, &mut input);
    let sig = jsonwebtoken::crypto::sign(input.as_bytes(), key, alg).expect("sign");
    format!("{header_b64}..{sig}")
}

/// Detached JWS over JCS with `json-canon` + `jsonwebtoken`: verify (the
/// header's `alg` must be the expected one).
fn peer_verify(doc: &[u8], jws: &str, key: &jsonwebtoken::DecodingKey, alg: Alg) -> bool {
    let Ok(header) = jsonwebtoken::decode_header(jws) else {
        return false;
    };
    if header.alg != alg {
        return false;
    }
    let (h, sig) = match (jws.split_once('.'), jws.rsplit_once('.')) {
        (Some((h, _)), Some((_, s))) => (h, s),
        _ => return false,
    };
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(doc) else {
        return false;
    };
    let Ok(canonical) = json_canon::to_vec(&v) else {
        return false;
    };
    let mut input = String::with_capacity(h.len() + 1 + canonical.len() * 4 / 3 + 4);
    input.push_str(h);
    input.push('.');
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode_string(&canonical, &mut input);
    jsonwebtoken::crypto::verify(sig, input.as_bytes(), key, alg).unwrap_or(false)
}

use base64::Engine as _;
use jsonwebtoken::Algorithm as Alg;

/// agentsig against json-canon + jsonwebtoken, the same document and keys.
fn peers_report() {
    let doc = descriptor_10k();
    println!("\ndetached JWS over JCS, 10 KB, against json-canon 0.1 + jsonwebtoken 9 (medians of 15 interleaved rounds):");
    for (alg, peer_alg) in [
        (Algorithm::EcdsaP256Sha256, Alg::ES256),
        (Algorithm::Ed25519, Alg::EdDSA),
    ] {
        let key = SigningKey::generate(alg).expect("keygen").with_kid("k1");
        let der = pem_der(&key.pkcs8_pem().expect("pkcs8"));
        let jwk = key.verifying_key().to_jwk().to_value();
        let (enc, dec) = match peer_alg {
            Alg::ES256 => (
                jsonwebtoken::EncodingKey::from_ec_der(&der),
                jsonwebtoken::DecodingKey::from_ec_components(
                    jwk["x"].as_str().expect("x"),
                    jwk["y"].as_str().expect("y"),
                )
                .expect("ec key"),
            ),
            _ => (
                jsonwebtoken::EncodingKey::from_ed_der(&der),
                jsonwebtoken::DecodingKey::from_ed_components(jwk["x"].as_str().expect("x"))
                    .expect("ed key"),
            ),
        };
        let verifier = Verifier::builder(
            StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned),
        )
        .build();
        let ours_jws = descriptor::sign(&doc, &key).expect("sign").jws;
        let header_b64 = ours_jws.split('.').next().expect("header").to_owned();
        let theirs_jws = peer_sign(&doc, &header_b64, &enc, peer_alg);
        // Each verifies the other's signature: the same bytes are signed.
        assert!(peer_verify(&doc, &ours_jws, &dec, peer_alg));
        assert!(verifier
            .verify_descriptor(&doc, &theirs_jws)
            .expect("verify")
            .verified());
        let t = interleaved::interleaved_medians(
            &[
                &|| drop(black_box(descriptor::sign(black_box(&doc), &key))),
                &|| {
                    drop(black_box(peer_sign(
                        black_box(&doc),
                        &header_b64,
                        &enc,
                        peer_alg,
                    )))
                },
                &|| {
                    let r = verifier.verify_descriptor(black_box(&doc), &ours_jws);
                    assert!(r.is_ok_and(|r| r.verified()));
                },
                &|| assert!(peer_verify(black_box(&doc), &ours_jws, &dec, peer_alg)),
            ],
            15,
        );
        let name = alg.jose_name();
        let other = "json-canon + jsonwebtoken";
        println!(
            "  {}",
            interleaved::line(&format!("{name} sign"), t[0], t[1], other)
        );
        println!(
            "  {}",
            interleaved::line(&format!("{name} verify"), t[2], t[3], other)
        );
    }
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    // `cargo test --all-targets` runs benches once as a smoke test: the
    // timing loops are for `cargo bench` only.
    if std::env::args().any(|a| a == "--bench") {
        peers_report();
    }
}
