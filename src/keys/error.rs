//! Key and verification errors. A leaf module: it depends on nothing but
//! [`Algorithm`], so [`crate::jwk`] can report [`KeyError`] without
//! depending on the key types.

use crate::alg::Algorithm;

/// Why a key could not be loaded or used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("unrecognised key format: {0}")]
    UnrecognisedFormat(String),
    #[error("malformed PEM: {0}")]
    Pem(String),
    #[error("malformed DER ({what}): {detail}")]
    Der { what: &'static str, detail: String },
    #[error("malformed JWK: {0}")]
    Jwk(String),
    #[error("unsupported key type: {0}")]
    UnsupportedKeyType(String),
    #[error("invalid key material: {0}")]
    InvalidKey(String),
    #[error("an RSA key does not say which algorithm it is for: give rsa-pss-sha512 (PS512) or rsa-v1_5-sha256 (RS256) explicitly")]
    AlgorithmRequired,
    #[error("the key is for {key} but {requested} was requested")]
    AlgorithmMismatch {
        key: Algorithm,
        requested: Algorithm,
    },
    #[error("RSA modulus of {bits} bits is outside 2048..=8192")]
    RsaSize { bits: usize },
    #[error(
        "HMAC secret of {len} bytes is shorter than the 32 bytes RFC 7518 section 3.2 requires"
    )]
    HmacTooShort { len: usize },
    #[error("expected a private key, found a public key")]
    NotPrivate,
    #[error(
        "the key is encrypted: supply its passphrase (from a file or an environment variable)"
    )]
    PassphraseRequired,
    #[error("could not decrypt the private key: wrong passphrase or unsupported encryption")]
    Decrypt,
    #[error("no key with kid {0:?} in the key set")]
    KidNotFound(String),
    #[error("the key set holds {0} usable keys: select one with a kid")]
    AmbiguousKeySet(usize),
    #[error("the key set holds no usable key")]
    EmptyKeySet,
    #[error("the hmac-sha256 secret looks like key material ({0}), not a shared secret: give a file holding only the secret (its raw bytes or base64 text; `agentsig keygen --alg hmac-sha256` writes one)")]
    SecretLooksLikeKey(&'static str),
    #[error("key generation failed: {0}")]
    Generate(String),
}

/// Why a signature did not verify.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    #[error("the key is for {key} but the signature claims {requested}")]
    AlgorithmMismatch {
        key: Algorithm,
        requested: Algorithm,
    },
    #[error("signature has {got} bytes, {alg} signatures have {expected}")]
    BadLength {
        alg: Algorithm,
        got: usize,
        expected: usize,
    },
    #[error("signature does not match")]
    Mismatch,
    /// Strict low-S mode: the ECDSA `s` is above n/2 (a malleated or
    /// high-S signature; see [`super::ecdsa_high_s`]).
    #[error("ECDSA signature has a high S value, refused in strict low-S mode")]
    HighS,
}
