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
//! [`KeyError`]. DID forms live in [`crate::did`]. With feature `pkcs11`,
//! `pkcs11` holds keys that never leave a PKCS#11 token.

mod encode;
pub use encode::PBKDF2_ITERATIONS;
pub(crate) mod error;
mod from_jwk;
mod generate;
mod load;
#[cfg(feature = "verify-oracle")]
pub mod oracle;
#[cfg(feature = "pkcs11")]
pub mod pkcs11;
#[cfg(any(feature = "net", feature = "pkcs11"))]
pub(crate) mod secret_file;
mod types;

pub use error::{KeyError, VerifyError};
pub use load::{
    algorithm_from_companion_jwk, holds_private_key, load_signing_key, load_verifying_key,
    load_verifying_keys, secret_looks_like_key, verifying_from_spki, MAX_KEY_FILE,
    MAX_PBKDF2_ITERATIONS, MAX_SCRYPT_COST,
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

    #[test]
    fn ed25519_keys_off_the_curve_are_refused_at_load() {
        // y = 2: (y^2 - 1) / (d y^2 + 1) is not a square mod 2^255 - 19,
        // so no x exists (RFC 8032 section 5.1.3, step 3).
        let mut y2 = [0u8; 32];
        y2[0] = 2;
        assert!(matches!(
            VerifyingKey::from_ed25519_bytes(&y2),
            Err(KeyError::InvalidKey(m)) if m.contains("not a point")
        ));
        // y = 3 is on the curve (and not of small order): accepted.
        let mut y3 = [0u8; 32];
        y3[0] = 3;
        assert!(VerifyingKey::from_ed25519_bytes(&y3).is_ok());
    }

    #[test]
    fn ed25519_malleated_s_is_refused_by_the_parsed_key() {
        // L, the order of the base point (RFC 8032 section 5.1), little-endian.
        const L: [u8; 32] = [
            0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9,
            0xde, 0x14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
        ];
        let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
        let vk = k.verifying_key();
        let sig = k.sign(b"m").unwrap();
        // The same parsed key verifies again and again.
        for _ in 0..3 {
            vk.verify(b"m", &sig).unwrap();
        }
        // S + L satisfies the group equation but is not canonical (section
        // 5.1.7: S must be below L).
        let mut m = sig.clone();
        let mut carry = 0u16;
        for i in 0..32 {
            let t = u16::from(m[32 + i]) + u16::from(L[i]) + carry;
            m[32 + i] = t as u8;
            carry = t >> 8;
        }
        assert_eq!(carry, 0);
        assert_eq!(vk.verify(b"m", &m), Err(VerifyError::Mismatch));
    }

    #[test]
    fn ed25519_small_order_r_is_refused_though_the_equation_holds() {
        use curve25519_dalek::scalar::Scalar;
        use sha2::{Digest, Sha512};
        let seed = [7u8; 32];
        let k = SigningKey::from_ed25519_seed(&seed).unwrap();
        let vk = k.verifying_key();
        let a_bytes: [u8; 32] = crate::b64::decode(vk.to_jwk().to_value()["x"].as_str().unwrap())
            .unwrap()
            .try_into()
            .unwrap();
        // The secret scalar a (RFC 8032 section 5.1.5, steps 1-3).
        let h = Sha512::digest(seed);
        let mut a = [0u8; 32];
        a.copy_from_slice(&h[..32]);
        a[0] &= 248;
        a[31] &= 127;
        a[31] |= 64;
        let a = Scalar::from_bytes_mod_order(a);
        // R = the identity (small order), S = k * a: [S]B = R + [k]A holds.
        let mut r = [0u8; 32];
        r[0] = 1;
        let msg = b"m";
        let kh = Sha512::new()
            .chain_update(r)
            .chain_update(a_bytes)
            .chain_update(msg)
            .finalize();
        let kk = Scalar::from_bytes_mod_order_wide(&kh.into());
        let s = kk * a;
        let sig = [&r[..], s.as_bytes()].concat();
        // The cofactorless equation alone accepts it...
        let dalek = ed25519_dalek::VerifyingKey::from_bytes(&a_bytes).unwrap();
        let dsig = ed25519_dalek::Signature::from_slice(&sig).unwrap();
        use ed25519_dalek::Verifier as _;
        assert!(dalek.verify(msg, &dsig).is_ok());
        // ...strict verification refuses a small-order R.
        assert_eq!(vk.verify(msg, &sig), Err(VerifyError::Mismatch));
    }
}
