//! Keys, each bound to exactly one [`Algorithm`](crate::alg::Algorithm).
//!
//! # Security contract
//! * A [`SigningKey`] or [`VerifyingKey`] carries its algorithm from the
//!   moment it is loaded. Asking it to sign or verify under another algorithm
//!   is an error ([`KeyError::AlgorithmMismatch`], [`VerifyError::AlgorithmMismatch`]),
//!   never a silent switch (RFC 8725 section 3.1, RFC 9421 section 3.2 step 6).
//! * An RSA key alone does not say whether it is for PSS or PKCS#1 v1.5, so
//!   loading one needs an explicit algorithm (a JWK `alg`, an id-RSASSA-PSS
//!   OID, or the caller's hint). EC and Ed25519 keys imply their algorithm.
//! * HMAC secrets are at least 32 bytes (RFC 7518 section 3.2) and are
//!   compared in constant time (ring's `hmac::verify`).
//! * RSA moduli are 2048 to 8192 bits (RFC 7518 section 3.3; ring's bounds).
//!
//! Formats are detected by content: PEM (PKCS#8, encrypted PKCS#8, SEC1 EC,
//! PKCS#1 RSA, SPKI), DER of the same, JWK (RFC 7517), JWK Sets selected by
//! `kid`, and HMAC secrets (raw bytes or base64 text).
//!
//! Layout: [`error`](KeyError) (a leaf, shared with [`crate::jwk`]), `types`
//! (the key types), `load` (format detection), `generate`, `encode` (JWK,
//! thumbprint, SPKI, PKCS#8), and `from_jwk` (JWK to key conversion). The
//! dependency runs one way: `keys` uses `jwk`'s data model; `jwk` uses only
//! [`KeyError`]. DID forms live in [`crate::did`].

mod encode;
pub(crate) mod error;
mod from_jwk;
mod generate;
mod load;
mod types;

pub use error::{KeyError, VerifyError};
pub use load::{
    algorithm_from_companion_jwk, load_signing_key, load_verifying_key, load_verifying_keys,
    secret_looks_like_key, verifying_from_spki, MAX_KEY_FILE,
};
pub use types::{
    ecdsa_high_s, ed25519_small_order, LoadOptions, SigningKey, VerifyingKey, ED25519_SMALL_ORDER,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alg::Algorithm;

    #[test]
    fn generate_sign_verify_each_algorithm() {
        for alg in Algorithm::ALL {
            if matches!(alg, Algorithm::RsaPssSha512 | Algorithm::RsaV15Sha256) {
                continue; // RSA key generation is slow in debug builds; covered in tests/keys.rs
            }
            let k = SigningKey::generate(alg).unwrap();
            let sig = k.sign(b"hello").unwrap();
            k.verifying_key().verify(b"hello", &sig).unwrap();
            assert_eq!(
                k.verifying_key().verify(b"hellO", &sig),
                Err(VerifyError::Mismatch)
            );
            for other in Algorithm::ALL.into_iter().filter(|a| *a != alg) {
                assert!(k.verifying_key().verify_as(other, b"hello", &sig).is_err());
                assert!(k.sign_as(other, b"x").is_err());
            }
        }
    }
}
