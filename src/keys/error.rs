//! Key and verification errors. A leaf module: it depends on nothing but
//! [`Algorithm`], so [`crate::jwk`] can report [`KeyError`] without
//! depending on the key types.

use crate::alg::Algorithm;

/// Why a key could not be loaded or used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The input is none of the key formats agentsig reads (PEM, DER, JWK, JWK Set, raw secret).
    #[error("unrecognised key format: {0}")]
    UnrecognisedFormat(String),
    /// The PEM armour (RFC 7468) is broken: bad label, bad base64 or no end line.
    #[error("malformed PEM: {0}")]
    Pem(String),
    /// The DER structure (SPKI, PKCS#8, PKCS#1 or SEC1) does not parse.
    #[error("malformed DER ({what}): {detail}")]
    Der {
        /// Which structure was being read, e.g. `"SubjectPublicKeyInfo"`.
        what: &'static str,
        /// The decoder's message.
        detail: String,
    },
    /// The JWK (RFC 7517 section 4) or JWK Set (section 5) is malformed.
    #[error("malformed JWK: {0}")]
    Jwk(String),
    /// The key type or curve is not one agentsig supports (`kty`/`crv`, or the SPKI algorithm OID).
    #[error("unsupported key type: {0}")]
    UnsupportedKeyType(String),
    /// The key parses but its material is invalid (point not on the curve, bad length, inconsistent RSA parameters).
    #[error("invalid key material: {0}")]
    InvalidKey(String),
    /// An RSA key was given without an algorithm; RSA keys serve both PS512 and RS256, so the caller must choose.
    #[error("an RSA key does not say which algorithm it is for: give rsa-pss-sha512 (PS512) or rsa-v1_5-sha256 (RS256) explicitly")]
    AlgorithmRequired,
    /// The key belongs to a different algorithm than the one requested.
    #[error("the key is for {key} but {requested} was requested")]
    AlgorithmMismatch {
        /// The algorithm the key is for.
        key: Algorithm,
        /// The algorithm the caller asked for.
        requested: Algorithm,
    },
    /// The RSA modulus is smaller than 2048 bits (RFC 7518 section 3.3) or larger than the 8192-bit bound.
    #[error("RSA modulus of {bits} bits is outside 2048..=8192")]
    RsaSize {
        /// The modulus size in bits.
        bits: usize,
    },
    /// The HMAC secret is shorter than the hash output (RFC 7518 section 3.2).
    #[error(
        "HMAC secret of {len} bytes is shorter than the 32 bytes RFC 7518 section 3.2 requires"
    )]
    HmacTooShort {
        /// The secret length in bytes.
        len: usize,
    },
    /// A signing operation was given a public key.
    #[error("expected a private key, found a public key")]
    NotPrivate,
    /// The PKCS#8 key is encrypted (RFC 5958 section 3) and no passphrase was supplied.
    #[error(
        "the key is encrypted: supply its passphrase (from a file or an environment variable)"
    )]
    PassphraseRequired,
    /// The encrypted PKCS#8 key could not be decrypted.
    #[error("could not decrypt the private key: wrong passphrase or unsupported encryption")]
    Decrypt,
    /// No key in the JWK Set has the requested `kid` (RFC 7517 section 4.5).
    #[error("no key with kid {q0} in the key set", q0 = crate::text::quoted(.0))]
    KidNotFound(String),
    /// The JWK Set holds more than one usable key (the count) and no `kid` selects one.
    #[error("the key set holds {0} usable keys: select one with a kid")]
    AmbiguousKeySet(usize),
    /// The JWK Set holds no key agentsig can use.
    #[error("the key set holds no usable key")]
    EmptyKeySet,
    /// The file given as an HMAC secret is a PEM/DER/JWK key (named in the field), not a shared secret.
    #[error("the hmac-sha256 secret looks like key material ({0}), not a shared secret: give a file holding only the secret (its raw bytes or base64 text; `agentsig keygen --alg hmac-sha256` writes one)")]
    SecretLooksLikeKey(&'static str),
    /// A key file could not be read, or is larger than
    /// [`MAX_KEY_FILE`](crate::keys::MAX_KEY_FILE).
    #[error("cannot read key file {path}: {detail}")]
    Io {
        /// The file.
        path: String,
        /// What went wrong.
        detail: String,
    },
    /// The random number generator or the key generator failed.
    #[error("key generation failed: {0}")]
    Generate(String),
    /// A `pkcs11:` key could not be loaded or used (feature `pkcs11`).
    #[cfg(feature = "pkcs11")]
    #[error("{0}")]
    Pkcs11(crate::keys::pkcs11::error::Pkcs11Error),
}

/// Why a signature did not verify.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// The signature names an algorithm other than the key's.
    #[error("the key is for {key} but the signature claims {requested}")]
    AlgorithmMismatch {
        /// The algorithm the key is for.
        key: Algorithm,
        /// The algorithm the signature claims.
        requested: Algorithm,
    },
    /// The signature has the wrong length for its algorithm (e.g. ES256
    /// signatures are 64 bytes, RFC 7518 section 3.4).
    #[error("signature has {got} bytes, {alg} signatures have {expected}")]
    BadLength {
        /// The algorithm.
        alg: Algorithm,
        /// The signature length in bytes.
        got: usize,
        /// The length this algorithm's signatures have, in bytes.
        expected: usize,
    },
    /// The signature does not verify under the key.
    #[error("signature does not match")]
    Mismatch,
    /// Strict low-S mode: the ECDSA `s` is above n/2 (a malleated or
    /// high-S signature; see [`super::ecdsa_high_s`]).
    #[error("ECDSA signature has a high S value, refused in strict low-S mode")]
    HighS,
}
