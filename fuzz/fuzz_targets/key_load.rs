//! Any bytes as key material (PEM, DER, JWK, JWKS, HMAC secret): never a panic.
#![no_main]
use agentsig::keys::{load_signing_key, load_verifying_keys, LoadOptions};
use agentsig::Algorithm;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for alg in [
        None,
        Some(Algorithm::RsaV15Sha256),
        Some(Algorithm::HmacSha256),
    ] {
        let opts = LoadOptions {
            alg,
            ..LoadOptions::default()
        };
        let _ = load_signing_key(data, &opts);
        let _ = load_verifying_keys(data, &opts);
    }
});
