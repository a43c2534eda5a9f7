//! Signature verification per algorithm: agentsig's `VerifyingKey::verify`
//! (the key parsed once, at load) against a bare loop over the backend it
//! uses, on the same message and signature:
//!
//! * Ed25519: a bare `ed25519_dalek::VerifyingKey::verify_strict` loop
//!   (agentsig keeps the decompressed key and verifies with the same
//!   acceptance), and for reference ring's `ED25519`, which decodes the key
//!   on every verify;
//! * ECDSA P-256 / P-384 and RSA: a bare ring `UnparsedPublicKey` /
//!   `RsaPublicKeyComponents` loop.
//!
//! criterion measures each; the bench then prints agentsig / bare ratios
//! from its own interleaved timed loops (below 1.0: agentsig is faster).
//! Run: `cargo bench --bench keys -- --warm-up-time 1 --measurement-time 2`

use agentsig::{Algorithm, SigningKey, VerifyingKey};
use base64::Engine as _;
use criterion::{black_box, Criterion};

#[path = "support/interleaved.rs"]
mod interleaved;

const MSG: &[u8] = b"\"@status\": 200\n\"content-type\": application/json\n\"content-digest\": sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:\n\"@signature-params\": (\"@status\" \"content-type\" \"content-digest\");created=1700000000;keyid=\"k\"";

fn b64(s: &str) -> Vec<u8> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s)
        .expect("base64url")
}

/// A verifier of (message, signature).
type Verify = Box<dyn Fn(&[u8], &[u8]) -> bool>;

/// One algorithm: agentsig's key and a bare verifier over the same bytes.
struct Case {
    name: &'static str,
    key: VerifyingKey,
    sig: Vec<u8>,
    bare: Verify,
    reference: Option<(&'static str, Verify)>,
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for (name, alg) in [
        ("EdDSA (Ed25519)", Algorithm::Ed25519),
        ("ES256 (P-256)", Algorithm::EcdsaP256Sha256),
        ("ES384 (P-384)", Algorithm::EcdsaP384Sha384),
        ("RS256 (RSA 2048)", Algorithm::RsaV15Sha256),
        ("PS512 (RSA 2048)", Algorithm::RsaPssSha512),
    ] {
        let sk = SigningKey::generate(alg).expect("key");
        let sig = sk.sign(MSG).expect("sign");
        let key = sk.verifying_key().clone();
        let jwk = key.to_jwk().to_value();
        let field = |k: &str| b64(jwk[k].as_str().expect("jwk member"));
        let (bare, reference): (Verify, _) = match alg {
            Algorithm::Ed25519 => {
                let pk: [u8; 32] = field("x").try_into().expect("32 bytes");
                let dalek = ed25519_dalek::VerifyingKey::from_bytes(&pk).expect("point");
                let reference: Verify = Box::new(move |m, s| {
                    ring::signature::UnparsedPublicKey::new(&ring::signature::ED25519, pk)
                        .verify(m, s)
                        .is_ok()
                });
                (
                    Box::new(move |m: &[u8], s: &[u8]| {
                        ed25519_dalek::Signature::from_slice(s)
                            .is_ok_and(|s| dalek.verify_strict(m, &s).is_ok())
                    }),
                    Some(("ring ED25519 (key decoded per verify)", reference)),
                )
            }
            Algorithm::EcdsaP256Sha256 | Algorithm::EcdsaP384Sha384 => {
                let point = [&[4u8][..], &field("x"), &field("y")].concat();
                let a: &'static ring::signature::EcdsaVerificationAlgorithm =
                    if alg == Algorithm::EcdsaP256Sha256 {
                        &ring::signature::ECDSA_P256_SHA256_FIXED
                    } else {
                        &ring::signature::ECDSA_P384_SHA384_FIXED
                    };
                (
                    Box::new(move |m: &[u8], s: &[u8]| {
                        ring::signature::UnparsedPublicKey::new(a, &point)
                            .verify(m, s)
                            .is_ok()
                    }),
                    None,
                )
            }
            _ => {
                let (n, e) = (field("n"), field("e"));
                let p: &'static ring::signature::RsaParameters = if alg == Algorithm::RsaPssSha512 {
                    &ring::signature::RSA_PSS_2048_8192_SHA512
                } else {
                    &ring::signature::RSA_PKCS1_2048_8192_SHA256
                };
                (
                    Box::new(move |m: &[u8], s: &[u8]| {
                        ring::signature::RsaPublicKeyComponents { n: &n, e: &e }
                            .verify(p, m, s)
                            .is_ok()
                    }),
                    None,
                )
            }
        };
        assert!(key.verify(MSG, &sig).is_ok() && bare(MSG, &sig));
        out.push(Case {
            name,
            key,
            sig,
            bare,
            reference,
        });
    }
    out
}

fn main() {
    let cases = cases();
    let mut c = Criterion::default().configure_from_args();
    {
        let mut g = c.benchmark_group("verify");
        for case in &cases {
            g.bench_function(format!("{} agentsig", case.name), |b| {
                b.iter(|| case.key.verify(black_box(MSG), black_box(&case.sig)))
            });
            g.bench_function(format!("{} bare", case.name), |b| {
                b.iter(|| (case.bare)(black_box(MSG), black_box(&case.sig)))
            });
        }
        g.finish();
    }
    c.final_summary();
    // `cargo test --all-targets` runs this once as a smoke test (no
    // `--bench` argument): the interleaved timing loops are for `cargo
    // bench` only.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    println!("\nagentsig VerifyingKey::verify vs a bare backend loop (same bytes, median of 7 interleaved batches):");
    println!(
        "{:<18} {:>12} {:>12} {:>8}",
        "", "agentsig", "bare", "ratio"
    );
    for case in &cases {
        let iters = if case.name.starts_with("ES384") {
            300
        } else {
            1000
        };
        let ours = interleaved::per_call(iters, &|| case.key.verify(MSG, &case.sig).is_ok());
        let bare = interleaved::per_call(iters, &|| (case.bare)(MSG, &case.sig));
        println!(
            "{:<18} {:>9.1} µs {:>9.1} µs {:>7.2}x",
            case.name,
            ours / 1e3,
            bare / 1e3,
            ours / bare
        );
        if let Some((what, r)) = &case.reference {
            let t = interleaved::per_call(iters, &|| r(MSG, &case.sig));
            println!(
                "{:<18} {:>9} {:>9.1} µs {:>7.2}x  ({what})",
                "",
                "",
                t / 1e3,
                ours / t
            );
        }
    }
}
