//! Keys, each bound to exactly one [`Algorithm`].
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

use crate::alg::Algorithm;
use crate::jwk::{self, Jwk};
use der::{Decode, Encode};
use ring::signature::{self as rsig, KeyPair as _};
use zeroize::Zeroizing;

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
    /// high-S signature; see [`ecdsa_high_s`]).
    #[error("ECDSA signature has a high S value, refused in strict low-S mode")]
    HighS,
}

/// Options for loading a key.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// The algorithm the caller intends. Required for RSA keys without a
    /// JWK `alg` or PSS OID; checked against everything else.
    pub alg: Option<Algorithm>,
    /// Select this key from a JWK Set.
    pub kid: Option<String>,
    /// Passphrase for an encrypted PKCS#8 private key.
    pub passphrase: Option<Zeroizing<Vec<u8>>>,
}

// ---------------------------------------------------------------------------
// Public keys

#[derive(Clone)]
enum PublicInner {
    /// Uncompressed SEC1 point, validated on the curve.
    EcP256(Vec<u8>),
    EcP384(Vec<u8>),
    Ed25519([u8; 32]),
    /// Big-endian, without leading zeros.
    Rsa {
        n: Vec<u8>,
        e: Vec<u8>,
    },
    Hmac(HmacSecret),
}

#[derive(Clone)]
struct HmacSecret {
    key: ring::hmac::Key,
    bytes: Zeroizing<Vec<u8>>,
}

/// A key that verifies signatures of one algorithm.
///
/// For `hmac-sha256` this holds the shared secret; policy layers refuse
/// symmetric keys from published sources (JWKS, DID documents).
#[derive(Clone)]
pub struct VerifyingKey {
    alg: Algorithm,
    inner: PublicInner,
    kid: Option<String>,
}

impl std::fmt::Debug for VerifyingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerifyingKey")
            .field("alg", &self.alg)
            .field("kid", &self.kid)
            .field("thumbprint", &self.thumbprint())
            .finish()
    }
}

impl VerifyingKey {
    /// The one algorithm this key verifies.
    pub fn algorithm(&self) -> Algorithm {
        self.alg
    }

    /// The key id it was loaded with (a JWK `kid`), if any.
    pub fn kid(&self) -> Option<&str> {
        self.kid.as_deref()
    }

    /// Attach a key id (for keys loaded from PEM or DER).
    pub fn with_kid(mut self, kid: impl Into<String>) -> Self {
        self.kid = Some(kid.into());
        self
    }

    /// True when the key is a shared secret.
    pub fn is_symmetric(&self) -> bool {
        matches!(self.inner, PublicInner::Hmac(_))
    }

    /// Verify `sig` over `msg` with this key's own algorithm.
    pub fn verify(&self, msg: &[u8], sig: &[u8]) -> Result<(), VerifyError> {
        if let Some(expected) = self.alg.fixed_signature_len() {
            if sig.len() != expected {
                return Err(VerifyError::BadLength {
                    alg: self.alg,
                    got: sig.len(),
                    expected,
                });
            }
        }
        let ok = match &self.inner {
            PublicInner::EcP256(p) => {
                rsig::UnparsedPublicKey::new(&rsig::ECDSA_P256_SHA256_FIXED, p).verify(msg, sig)
            }
            PublicInner::EcP384(p) => {
                rsig::UnparsedPublicKey::new(&rsig::ECDSA_P384_SHA384_FIXED, p).verify(msg, sig)
            }
            PublicInner::Ed25519(p) => {
                rsig::UnparsedPublicKey::new(&rsig::ED25519, p).verify(msg, sig)
            }
            PublicInner::Rsa { n, e } => {
                let params: &rsig::RsaParameters = match self.alg {
                    Algorithm::RsaPssSha512 => &rsig::RSA_PSS_2048_8192_SHA512,
                    _ => &rsig::RSA_PKCS1_2048_8192_SHA256,
                };
                rsig::RsaPublicKeyComponents { n, e }.verify(params, msg, sig)
            }
            PublicInner::Hmac(s) => ring::hmac::verify(&s.key, msg, sig),
        };
        ok.map_err(|_| VerifyError::Mismatch)
    }

    /// Verify, first checking that `alg` (from a header or parameter) is this key's.
    pub fn verify_as(&self, alg: Algorithm, msg: &[u8], sig: &[u8]) -> Result<(), VerifyError> {
        if alg != self.alg {
            return Err(VerifyError::AlgorithmMismatch {
                key: self.alg,
                requested: alg,
            });
        }
        self.verify(msg, sig)
    }

    /// The public JWK (RFC 7517), with `alg`, `use` = `sig` and `kid` when known.
    /// For an HMAC key this is the secret `oct` JWK.
    pub fn to_jwk(&self) -> Jwk {
        let mut j = match &self.inner {
            PublicInner::EcP256(p) => Jwk::ec("P-256", &p[1..33], &p[33..65]),
            PublicInner::EcP384(p) => Jwk::ec("P-384", &p[1..49], &p[49..97]),
            PublicInner::Ed25519(p) => Jwk::okp("Ed25519", p),
            PublicInner::Rsa { n, e } => Jwk::rsa(n, e),
            PublicInner::Hmac(s) => Jwk::oct(&s.bytes),
        };
        j.alg = Some(self.alg.jose_name().to_owned());
        j.use_ = Some("sig".to_owned());
        j.kid = self.kid.clone();
        j
    }

    /// RFC 7638 JWK thumbprint (SHA-256, base64url).
    pub fn thumbprint(&self) -> String {
        self.to_jwk().thumbprint()
    }

    /// SubjectPublicKeyInfo DER (not for HMAC keys).
    pub fn to_spki_der(&self) -> Option<Vec<u8>> {
        let (alg_id, key_bits): (spki::AlgorithmIdentifierOwned, Vec<u8>) = match &self.inner {
            PublicInner::EcP256(p) => (ec_alg_id(OID_P256), p.clone()),
            PublicInner::EcP384(p) => (ec_alg_id(OID_P384), p.clone()),
            PublicInner::Ed25519(p) => (
                spki::AlgorithmIdentifierOwned {
                    oid: OID_ED25519,
                    parameters: None,
                },
                p.to_vec(),
            ),
            PublicInner::Rsa { n, e } => {
                let pk = pkcs1::RsaPublicKey {
                    modulus: pkcs1::UintRef::new(n).ok()?,
                    public_exponent: pkcs1::UintRef::new(e).ok()?,
                };
                (
                    spki::AlgorithmIdentifierOwned {
                        oid: OID_RSA,
                        parameters: Some(der::asn1::Null.into()),
                    },
                    pk.to_der().ok()?,
                )
            }
            PublicInner::Hmac(_) => return None,
        };
        let info = spki::SubjectPublicKeyInfoOwned {
            algorithm: alg_id,
            subject_public_key: der::asn1::BitString::from_bytes(&key_bits).ok()?,
        };
        info.to_der().ok()
    }

    /// SubjectPublicKeyInfo PEM that records the algorithm where the format
    /// can: for rsa-pss-sha512 the AlgorithmIdentifier is id-RSASSA-PSS with
    /// SHA-512 parameters (RFC 4055 section 3.1), so the file loads as
    /// rsa-pss-sha512 with no hint; for every other key it equals
    /// [`VerifyingKey::to_spki_pem`]. (PKCS#1 v1.5 has no such identifier.)
    pub fn to_spki_pem_bound(&self) -> Option<String> {
        let (PublicInner::Rsa { n, e }, Algorithm::RsaPssSha512) = (&self.inner, self.alg) else {
            return self.to_spki_pem();
        };
        let pk = pkcs1::RsaPublicKey {
            modulus: pkcs1::UintRef::new(n).ok()?,
            public_exponent: pkcs1::UintRef::new(e).ok()?,
        };
        let params = pss_sha512_params_der().ok()?;
        let info = spki::SubjectPublicKeyInfoOwned {
            algorithm: spki::AlgorithmIdentifierOwned {
                oid: OID_RSA_PSS,
                parameters: Some(der::asn1::Any::from_der(&params).ok()?),
            },
            subject_public_key: der::asn1::BitString::from_bytes(&pk.to_der().ok()?).ok()?,
        };
        der::pem::encode_string("PUBLIC KEY", der::pem::LineEnding::LF, &info.to_der().ok()?).ok()
    }

    /// SubjectPublicKeyInfo PEM (not for HMAC keys).
    pub fn to_spki_pem(&self) -> Option<String> {
        let der = self.to_spki_der()?;
        der::pem::encode_string("PUBLIC KEY", der::pem::LineEnding::LF, &der).ok()
    }

    // -- constructors from raw parts (used by jwk, did, wycheproof tests) --

    /// An EC public key from a SEC1 point (compressed or uncompressed); the
    /// point is validated on the curve.
    pub fn from_sec1_point(alg: Algorithm, point: &[u8]) -> Result<VerifyingKey, KeyError> {
        let inner = match alg {
            Algorithm::EcdsaP256Sha256 => {
                let pk = p256::PublicKey::from_sec1_bytes(point)
                    .map_err(|_| KeyError::InvalidKey("P-256 point is not on the curve".into()))?;
                use p256::elliptic_curve::sec1::ToEncodedPoint;
                PublicInner::EcP256(pk.to_encoded_point(false).as_bytes().to_vec())
            }
            Algorithm::EcdsaP384Sha384 => {
                let pk = p384::PublicKey::from_sec1_bytes(point)
                    .map_err(|_| KeyError::InvalidKey("P-384 point is not on the curve".into()))?;
                use p384::elliptic_curve::sec1::ToEncodedPoint;
                PublicInner::EcP384(pk.to_encoded_point(false).as_bytes().to_vec())
            }
            other => {
                return Err(KeyError::UnsupportedKeyType(format!(
                    "{other} is not an EC algorithm"
                )))
            }
        };
        Ok(VerifyingKey {
            alg,
            inner,
            kid: None,
        })
    }

    /// An Ed25519 public key from its 32 bytes.
    pub fn from_ed25519_bytes(pk: &[u8]) -> Result<VerifyingKey, KeyError> {
        let arr: [u8; 32] = pk.try_into().map_err(|_| {
            KeyError::InvalidKey(format!("Ed25519 public key has {} bytes, not 32", pk.len()))
        })?;
        if ed25519_small_order(&arr) {
            return Err(KeyError::InvalidKey(
                "Ed25519 public key is a small-order point: any signature with R = identity and S = 0 would verify".into(),
            ));
        }
        Ok(VerifyingKey {
            alg: Algorithm::Ed25519,
            inner: PublicInner::Ed25519(arr),
            kid: None,
        })
    }

    /// An RSA public key from modulus and exponent (big-endian).
    pub fn from_rsa_components(
        alg: Algorithm,
        n: &[u8],
        e: &[u8],
    ) -> Result<VerifyingKey, KeyError> {
        if !matches!(alg, Algorithm::RsaPssSha512 | Algorithm::RsaV15Sha256) {
            return Err(KeyError::AlgorithmMismatch {
                key: Algorithm::RsaV15Sha256,
                requested: alg,
            });
        }
        let n = strip_zeros(n);
        let e = strip_zeros(e);
        let bits = bit_len(n);
        if !(2048..=8192).contains(&bits) {
            return Err(KeyError::RsaSize { bits });
        }
        if roca_fingerprint(n) {
            return Err(KeyError::InvalidKey(
                "RSA modulus has the ROCA fingerprint (CVE-2017-15361): the private key is recoverable".into(),
            ));
        }
        if e.is_empty() || e.len() > 4 || e[e.len() - 1] & 1 == 0 || (e.len() == 1 && e[0] < 3) {
            return Err(KeyError::InvalidKey(
                "RSA public exponent must be odd, at least 3 and below 2^32".into(),
            ));
        }
        Ok(VerifyingKey {
            alg,
            inner: PublicInner::Rsa {
                n: n.to_vec(),
                e: e.to_vec(),
            },
            kid: None,
        })
    }

    /// An HMAC-SHA256 key from the secret bytes (at least 32).
    pub fn from_hmac_secret(secret: &[u8]) -> Result<VerifyingKey, KeyError> {
        Ok(VerifyingKey {
            alg: Algorithm::HmacSha256,
            inner: PublicInner::Hmac(hmac_secret(secret)?),
            kid: None,
        })
    }
}

/// Every 32-byte encoding of the eight small-order (torsion) points of
/// edwards25519, canonical and non-canonical: the five y values 0, 1, p-1
/// and the two order-8 ones, each with the sign bit clear and set, plus
/// y = p (0) and y = p + 1 (1), the only small-order y values that have an
/// encoding at or above p. (Taming the many EdDSAs, Chalkias et al. 2020,
/// section 3; libsodium's blocklist with the sign bit. Each entry was checked
/// to satisfy 8·P = identity.) A public key among them accepts forgeries
/// (RFC 8032 section 5.1.7 does not exclude them), so loading refuses them.
pub const ED25519_SMALL_ORDER: [[u8; 32]; 14] = {
    const fn y(lo: [u8; 32], sign: bool) -> [u8; 32] {
        let mut b = lo;
        if sign {
            b[31] |= 0x80;
        }
        b
    }
    const ZERO: [u8; 32] = [0; 32];
    const ONE: [u8; 32] = {
        let mut b = [0u8; 32];
        b[0] = 1;
        b
    };
    // p - 1, p, p + 1 little-endian: 0xec / 0xed / 0xee, 0xff.., 0x7f.
    const fn near_p(first: u8) -> [u8; 32] {
        let mut b = [0xffu8; 32];
        b[0] = first;
        b[31] = 0x7f;
        b
    }
    const ORDER8_A: [u8; 32] = [
        0xc7, 0x17, 0x6a, 0x70, 0x3d, 0x4d, 0xd8, 0x4f, 0xba, 0x3c, 0x0b, 0x76, 0x0d, 0x10, 0x67,
        0x0f, 0x2a, 0x20, 0x53, 0xfa, 0x2c, 0x39, 0xcc, 0xc6, 0x4e, 0xc7, 0xfd, 0x77, 0x92, 0xac,
        0x03, 0x7a,
    ];
    const ORDER8_B: [u8; 32] = [
        0x26, 0xe8, 0x95, 0x8f, 0xc2, 0xb2, 0x27, 0xb0, 0x45, 0xc3, 0xf4, 0x89, 0xf2, 0xef, 0x98,
        0xf0, 0xd5, 0xdf, 0xac, 0x05, 0xd3, 0xc6, 0x33, 0x39, 0xb1, 0x38, 0x02, 0x88, 0x6d, 0x53,
        0xfc, 0x05,
    ];
    [
        y(ZERO, false),
        y(ZERO, true),
        y(near_p(0xed), false),
        y(near_p(0xed), true),
        y(ONE, false),
        y(ONE, true),
        y(near_p(0xee), false),
        y(near_p(0xee), true),
        y(near_p(0xec), false),
        y(near_p(0xec), true),
        y(ORDER8_A, false),
        y(ORDER8_A, true),
        y(ORDER8_B, false),
        y(ORDER8_B, true),
    ]
};

/// True when `pk` encodes a small-order edwards25519 point (see
/// [`ED25519_SMALL_ORDER`]).
pub fn ed25519_small_order(pk: &[u8; 32]) -> bool {
    ED25519_SMALL_ORDER.iter().any(|e| e == pk)
}

/// floor(n / 2) for the P-256 group order n (SEC 2 section 2.4.2), big-endian.
const P256_HALF_N: [u8; 32] = [
    0x7f, 0xff, 0xff, 0xff, 0x80, 0x00, 0x00, 0x00, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xde, 0x73, 0x7d, 0x56, 0xd3, 0x8b, 0xcf, 0x42, 0x79, 0xdc, 0xe5, 0x61, 0x7e, 0x31, 0x92, 0xa8,
];

/// floor(n / 2) for the P-384 group order n (SEC 2 section 2.5.1), big-endian.
const P384_HALF_N: [u8; 48] = [
    0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xe3, 0xb1, 0xa6, 0xc0, 0xfa, 0x1b, 0x96, 0xef,
    0xac, 0x0d, 0x06, 0xd9, 0x24, 0x58, 0x53, 0xbd, 0x76, 0x76, 0x0c, 0xb5, 0x66, 0x62, 0x94, 0xb9,
];

/// True when `sig` is a fixed-size `r || s` ECDSA signature (RFC 7518
/// section 3.4, RFC 9421 sections 3.3.4 and 3.3.5) whose `s` is above n/2.
///
/// ECDSA is malleable: when `(r, s)` verifies so does `(r, n - s)`, so a
/// third party can make a second valid signature without the key. The
/// verifiers accept both by default (JOSE and RFC 9421 signers, e.g. ring
/// and OpenSSL, emit high-S half the time); a strict "low-S" mode
/// (`low_s` in the JWS and RFC 9421 verify policies) refuses high-S. Only
/// matters where a signature's bytes serve as an identifier. `false` for any
/// other algorithm or length.
pub fn ecdsa_high_s(alg: Algorithm, sig: &[u8]) -> bool {
    match (alg, sig.len()) {
        (Algorithm::EcdsaP256Sha256, 64) => sig[32..] > P256_HALF_N[..],
        (Algorithm::EcdsaP384Sha384, 96) => sig[48..] > P384_HALF_N[..],
        _ => false,
    }
}

fn hmac_secret(secret: &[u8]) -> Result<HmacSecret, KeyError> {
    if secret.len() < 32 {
        return Err(KeyError::HmacTooShort { len: secret.len() });
    }
    Ok(HmacSecret {
        key: ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret),
        bytes: Zeroizing::new(secret.to_vec()),
    })
}

/// The ROCA test (Nemec et al., CCS 2017; CVE-2017-15361): moduli made by the
/// vulnerable Infineon library satisfy `n mod p ∈ <65537> (mod p)` for every
/// small prime below. A random modulus passes all of them with negligible
/// probability, so a match is refused.
fn roca_fingerprint(n: &[u8]) -> bool {
    const PRIMES: [u32; 38] = [
        3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89,
        97, 101, 103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157, 163, 167,
    ];
    PRIMES.iter().all(|&p| {
        let r = n
            .iter()
            .fold(0u32, |acc, &b| (acc * 256 + u32::from(b)) % p);
        // Walk the cyclic subgroup generated by 65537 mod p.
        let g = 65537 % p;
        let mut x = 1u32;
        loop {
            if x == r {
                return true;
            }
            x = x * g % p;
            if x == 1 {
                return false;
            }
        }
    })
}

fn strip_zeros(b: &[u8]) -> &[u8] {
    let i = b.iter().position(|&x| x != 0).unwrap_or(b.len());
    &b[i..]
}

fn bit_len(n: &[u8]) -> usize {
    match n.first() {
        None => 0,
        Some(&top) => n.len() * 8 - top.leading_zeros() as usize,
    }
}

// ---------------------------------------------------------------------------
// Private keys

enum PrivateInner {
    Ecdsa(rsig::EcdsaKeyPair),
    Ed25519(rsig::Ed25519KeyPair),
    /// RSA through ring (constant-time, blinded).
    RsaRing(rsig::RsaKeyPair),
    /// RSA keys ring refuses (e.g. primes of unequal length, as the RFC 9421
    /// B.1.1 test key has) go through RustCrypto `rsa`, always blinded.
    RsaRc(Box<rsa::RsaPrivateKey>),
    Hmac(HmacSecret),
}

/// A key that signs with one algorithm.
pub struct SigningKey {
    alg: Algorithm,
    inner: PrivateInner,
    public: VerifyingKey,
    /// PKCS#8 DER of the private key, when it was generated here (for writing out).
    pkcs8: Option<Zeroizing<Vec<u8>>>,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("alg", &self.alg)
            .field("kid", &self.public.kid)
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// The one algorithm this key signs with.
    pub fn algorithm(&self) -> Algorithm {
        self.alg
    }

    /// The key id: the one it was loaded with, else none.
    pub fn kid(&self) -> Option<&str> {
        self.public.kid()
    }

    /// Set the key id.
    pub fn with_kid(mut self, kid: impl Into<String>) -> Self {
        self.public.kid = Some(kid.into());
        self
    }

    /// The key id to publish: the loaded `kid`, else the RFC 7638 thumbprint.
    pub fn kid_or_thumbprint(&self) -> String {
        self.public
            .kid
            .clone()
            .unwrap_or_else(|| self.public.thumbprint())
    }

    /// The matching verifying key (for HMAC, the same secret).
    pub fn verifying_key(&self) -> &VerifyingKey {
        &self.public
    }

    /// Sign `msg` with this key's algorithm. ECDSA and RSA-PSS are randomized;
    /// Ed25519, RSA PKCS#1 v1.5 and HMAC are deterministic.
    pub fn sign(&self, msg: &[u8]) -> Result<Vec<u8>, KeyError> {
        let rng = ring::rand::SystemRandom::new();
        match &self.inner {
            PrivateInner::Ecdsa(k) => k
                .sign(&rng, msg)
                .map(|s| s.as_ref().to_vec())
                .map_err(|_| KeyError::InvalidKey("ECDSA signing failed".into())),
            PrivateInner::Ed25519(k) => Ok(k.sign(msg).as_ref().to_vec()),
            PrivateInner::RsaRing(k) => {
                let enc: &'static dyn rsig::RsaEncoding = match self.alg {
                    Algorithm::RsaPssSha512 => &rsig::RSA_PSS_SHA512,
                    _ => &rsig::RSA_PKCS1_SHA256,
                };
                let mut out = vec![0u8; k.public().modulus_len()];
                k.sign(enc, &rng, msg, &mut out)
                    .map_err(|_| KeyError::InvalidKey("RSA signing failed".into()))?;
                Ok(out)
            }
            PrivateInner::RsaRc(k) => {
                use rsa::signature::{RandomizedSigner, SignatureEncoding};
                let mut r = rand_core::OsRng;
                let sig = match self.alg {
                    Algorithm::RsaPssSha512 => {
                        rsa::pss::SigningKey::<sha2::Sha512>::new_with_salt_len((**k).clone(), 64)
                            .try_sign_with_rng(&mut r, msg)
                            .map(|s| s.to_vec())
                    }
                    _ => rsa::pkcs1v15::SigningKey::<sha2::Sha256>::new((**k).clone())
                        .try_sign_with_rng(&mut r, msg)
                        .map(|s| s.to_vec()),
                };
                sig.map_err(|e| KeyError::InvalidKey(format!("RSA signing failed: {e}")))
            }
            PrivateInner::Hmac(s) => Ok(ring::hmac::sign(&s.key, msg).as_ref().to_vec()),
        }
    }

    /// Sign, first checking that `alg` is this key's algorithm.
    pub fn sign_as(&self, alg: Algorithm, msg: &[u8]) -> Result<Vec<u8>, KeyError> {
        if alg != self.alg {
            return Err(KeyError::AlgorithmMismatch {
                key: self.alg,
                requested: alg,
            });
        }
        self.sign(msg)
    }

    /// PKCS#8 PEM of a key generated by [`SigningKey::generate`].
    pub fn pkcs8_pem(&self) -> Option<Zeroizing<String>> {
        let der = self.pkcs8.as_ref()?;
        der::pem::encode_string("PRIVATE KEY", der::pem::LineEnding::LF, der)
            .ok()
            .map(Zeroizing::new)
    }

    /// Generate a new key for `alg`. RSA keys are 3072 bits; HMAC secrets 32 bytes.
    pub fn generate(alg: Algorithm) -> Result<SigningKey, KeyError> {
        let rng = ring::rand::SystemRandom::new();
        let gen_err = |e: &dyn std::fmt::Display| KeyError::Generate(e.to_string());
        let pkcs8: Vec<u8> = match alg {
            Algorithm::EcdsaP256Sha256 => {
                rsig::EcdsaKeyPair::generate_pkcs8(&rsig::ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
                    .map_err(|e| gen_err(&e))?
                    .as_ref()
                    .to_vec()
            }
            Algorithm::EcdsaP384Sha384 => {
                rsig::EcdsaKeyPair::generate_pkcs8(&rsig::ECDSA_P384_SHA384_FIXED_SIGNING, &rng)
                    .map_err(|e| gen_err(&e))?
                    .as_ref()
                    .to_vec()
            }
            Algorithm::Ed25519 => rsig::Ed25519KeyPair::generate_pkcs8(&rng)
                .map_err(|e| gen_err(&e))?
                .as_ref()
                .to_vec(),
            Algorithm::RsaPssSha512 | Algorithm::RsaV15Sha256 => {
                use rsa::pkcs8::EncodePrivateKey;
                let k = rsa::RsaPrivateKey::new(&mut rand_core::OsRng, 3072)
                    .map_err(|e| gen_err(&e))?;
                let der = Zeroizing::new(
                    k.to_pkcs8_der()
                        .map_err(|e| gen_err(&e))?
                        .as_bytes()
                        .to_vec(),
                );
                if alg == Algorithm::RsaPssSha512 {
                    // Record the algorithm in the key itself: id-RSASSA-PSS
                    // with SHA-512 parameters (RFC 4055 section 3.1; what
                    // `openssl genpkey -algorithm RSA-PSS` writes), so the
                    // key loads as rsa-pss-sha512 with no hint.
                    let params = pss_sha512_params_der()?;
                    let mut info =
                        pkcs8::PrivateKeyInfo::from_der(&der).map_err(|e| gen_err(&e))?;
                    info.algorithm = spki::AlgorithmIdentifierRef {
                        oid: OID_RSA_PSS,
                        parameters: Some(
                            der::asn1::AnyRef::from_der(&params).map_err(|e| gen_err(&e))?,
                        ),
                    };
                    info.to_der().map_err(|e| gen_err(&e))?
                } else {
                    der.to_vec()
                }
            }
            Algorithm::HmacSha256 => {
                let mut secret = Zeroizing::new(vec![0u8; 32]);
                // Draw again in the (about 1 in 10^5) case that the random
                // bytes look like a DER key header, which loading refuses.
                loop {
                    ring::rand::SecureRandom::fill(&rng, &mut secret).map_err(|e| gen_err(&e))?;
                    if secret_looks_like_key(&secret).is_none() {
                        break;
                    }
                }
                return SigningKey::from_hmac_secret(&secret);
            }
        };
        let pkcs8 = Zeroizing::new(pkcs8);
        let mut k = signing_from_pkcs8(&pkcs8, Some(alg))?;
        k.pkcs8 = Some(pkcs8);
        Ok(k)
    }

    /// The HMAC secret, for writing a generated secret out.
    pub fn hmac_secret_bytes(&self) -> Option<&[u8]> {
        match &self.inner {
            PrivateInner::Hmac(s) => Some(&s.bytes),
            _ => None,
        }
    }

    /// An HMAC-SHA256 signing key from the secret bytes (at least 32).
    pub fn from_hmac_secret(secret: &[u8]) -> Result<SigningKey, KeyError> {
        let s = hmac_secret(secret)?;
        Ok(SigningKey {
            alg: Algorithm::HmacSha256,
            public: VerifyingKey {
                alg: Algorithm::HmacSha256,
                inner: PublicInner::Hmac(s.clone()),
                kid: None,
            },
            inner: PrivateInner::Hmac(s),
            pkcs8: None,
        })
    }

    /// ECDSA from a private scalar; the public point is derived and checked.
    pub fn from_ec_scalar(alg: Algorithm, d: &[u8]) -> Result<SigningKey, KeyError> {
        let public_point: Vec<u8> = match alg {
            Algorithm::EcdsaP256Sha256 => {
                use p256::elliptic_curve::sec1::ToEncodedPoint;
                let sk = p256::SecretKey::from_slice(d).map_err(|_| {
                    KeyError::InvalidKey("P-256 private scalar out of range".into())
                })?;
                sk.public_key().to_encoded_point(false).as_bytes().to_vec()
            }
            Algorithm::EcdsaP384Sha384 => {
                use p384::elliptic_curve::sec1::ToEncodedPoint;
                let sk = p384::SecretKey::from_slice(d).map_err(|_| {
                    KeyError::InvalidKey("P-384 private scalar out of range".into())
                })?;
                sk.public_key().to_encoded_point(false).as_bytes().to_vec()
            }
            other => {
                return Err(KeyError::UnsupportedKeyType(format!(
                    "{other} is not an EC algorithm"
                )))
            }
        };
        let ring_alg = match alg {
            Algorithm::EcdsaP256Sha256 => &rsig::ECDSA_P256_SHA256_FIXED_SIGNING,
            _ => &rsig::ECDSA_P384_SHA384_FIXED_SIGNING,
        };
        let rng = ring::rand::SystemRandom::new();
        let kp =
            rsig::EcdsaKeyPair::from_private_key_and_public_key(ring_alg, d, &public_point, &rng)
                .map_err(|e| KeyError::InvalidKey(format!("EC key rejected: {e}")))?;
        let public = VerifyingKey::from_sec1_point(alg, &public_point)?;
        Ok(SigningKey {
            alg,
            inner: PrivateInner::Ecdsa(kp),
            public,
            pkcs8: None,
        })
    }

    /// Ed25519 from its 32-byte seed (RFC 8032 private key).
    pub fn from_ed25519_seed(seed: &[u8]) -> Result<SigningKey, KeyError> {
        let kp = rsig::Ed25519KeyPair::from_seed_unchecked(seed)
            .map_err(|e| KeyError::InvalidKey(format!("Ed25519 seed rejected: {e}")))?;
        let public = VerifyingKey::from_ed25519_bytes(kp.public_key().as_ref())?;
        Ok(SigningKey {
            alg: Algorithm::Ed25519,
            inner: PrivateInner::Ed25519(kp),
            public,
            pkcs8: None,
        })
    }

    /// RSA from a PKCS#1 RSAPrivateKey DER.
    pub fn from_rsa_pkcs1_der(alg: Algorithm, der: &[u8]) -> Result<SigningKey, KeyError> {
        if !matches!(alg, Algorithm::RsaPssSha512 | Algorithm::RsaV15Sha256) {
            return Err(KeyError::AlgorithmMismatch {
                key: Algorithm::RsaV15Sha256,
                requested: alg,
            });
        }
        let parsed = pkcs1::RsaPrivateKey::from_der(der).map_err(|e| KeyError::Der {
            what: "PKCS#1 RSAPrivateKey",
            detail: e.to_string(),
        })?;
        let public = VerifyingKey::from_rsa_components(
            alg,
            parsed.modulus.as_bytes(),
            parsed.public_exponent.as_bytes(),
        )?;
        let inner = match rsig::RsaKeyPair::from_der(der) {
            Ok(kp) => PrivateInner::RsaRing(kp),
            Err(_) => {
                use rsa::pkcs1::DecodeRsaPrivateKey;
                let k = rsa::RsaPrivateKey::from_pkcs1_der(der)
                    .map_err(|e| KeyError::InvalidKey(format!("RSA private key: {e}")))?;
                k.validate()
                    .map_err(|e| KeyError::InvalidKey(format!("RSA private key: {e}")))?;
                PrivateInner::RsaRc(Box::new(k))
            }
        };
        Ok(SigningKey {
            alg,
            inner,
            public,
            pkcs8: None,
        })
    }
}

// ---------------------------------------------------------------------------
// Loading by content

const OID_EC: der::asn1::ObjectIdentifier =
    der::asn1::ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");
const OID_P256: der::asn1::ObjectIdentifier =
    der::asn1::ObjectIdentifier::new_unwrap("1.2.840.10045.3.1.7");
const OID_P384: der::asn1::ObjectIdentifier =
    der::asn1::ObjectIdentifier::new_unwrap("1.3.132.0.34");
const OID_ED25519: der::asn1::ObjectIdentifier =
    der::asn1::ObjectIdentifier::new_unwrap("1.3.101.112");
const OID_RSA: der::asn1::ObjectIdentifier =
    der::asn1::ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");
const OID_RSA_PSS: der::asn1::ObjectIdentifier =
    der::asn1::ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.10");

/// An id-RSASSA-PSS key may carry RSASSA-PSS-params (RFC 4055 section 3.1)
/// that restrict it. Absent parameters leave the key unrestricted (the RFC
/// 9421 B.1.2 test key); present ones must be exactly rsa-pss-sha512's:
/// SHA-512, MGF1 with SHA-512, salt length 64, trailer field 1.
/// DER of RSASSA-PSS-params for rsa-pss-sha512: SHA-512, MGF1 with
/// SHA-512, 64-byte salt, trailer 1 (RFC 4055 section 3.1; RFC 9421
/// section 3.3.1).
fn pss_sha512_params_der() -> Result<Vec<u8>, KeyError> {
    pkcs1::RsaPssParams::new::<sha2::Sha512>(64)
        .to_der()
        .map_err(|e| KeyError::Generate(e.to_string()))
}

fn check_pss_params(params: Option<der::asn1::AnyRef<'_>>) -> Result<(), KeyError> {
    const OID_SHA512: der::asn1::ObjectIdentifier =
        der::asn1::ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.3");
    const OID_MGF1: der::asn1::ObjectIdentifier =
        der::asn1::ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.8");
    let Some(any) = params else { return Ok(()) };
    if any.is_null() {
        return Ok(());
    }
    let p: pkcs1::RsaPssParams<'_> = any.decode_as().map_err(|e| KeyError::Der {
        what: "RSASSA-PSS-params",
        detail: e.to_string(),
    })?;
    let mgf_hash = p.mask_gen.parameters.as_ref().map(|h| h.oid);
    if p.hash.oid != OID_SHA512
        || p.mask_gen.oid != OID_MGF1
        || mgf_hash != Some(OID_SHA512)
        || p.salt_len != 64
        || p.trailer_field != pkcs1::TrailerField::BC
    {
        return Err(KeyError::UnsupportedKeyType(format!(
            "RSA-PSS key restricted to hash {}, MGF1 hash {:?}, salt {}: only SHA-512/MGF1-SHA-512/64 (rsa-pss-sha512) is supported",
            p.hash.oid,
            mgf_hash.map(|o| o.to_string()),
            p.salt_len
        )));
    }
    Ok(())
}

fn ec_alg_id(curve: der::asn1::ObjectIdentifier) -> spki::AlgorithmIdentifierOwned {
    spki::AlgorithmIdentifierOwned {
        oid: OID_EC,
        parameters: Some(curve.into()),
    }
}

/// Bind the algorithm a key implies to the caller's hint.
fn bind(
    implied: Option<Algorithm>,
    hint: Option<Algorithm>,
    family_ok: &[Algorithm],
) -> Result<Algorithm, KeyError> {
    match (implied, hint) {
        (Some(k), Some(h)) if k != h => Err(KeyError::AlgorithmMismatch {
            key: k,
            requested: h,
        }),
        (Some(k), _) => Ok(k),
        (None, Some(h)) if family_ok.contains(&h) => Ok(h),
        (None, Some(h)) => Err(KeyError::AlgorithmMismatch {
            key: family_ok[0],
            requested: h,
        }),
        (None, None) => Err(KeyError::AlgorithmRequired),
    }
}

const RSA_FAMILY: [Algorithm; 2] = [Algorithm::RsaV15Sha256, Algorithm::RsaPssSha512];

/// One PEM block: its label and DER.
fn pem_first_block(text: &str) -> Result<(String, Zeroizing<Vec<u8>>), KeyError> {
    let start = text
        .find("-----BEGIN ")
        .ok_or_else(|| KeyError::Pem("no BEGIN line".into()))?;
    let rest = &text[start..];
    let label_end = rest[11..]
        .find("-----")
        .ok_or_else(|| KeyError::Pem("unterminated BEGIN line".into()))?;
    let label = rest[11..11 + label_end].to_owned();
    let end_marker = format!("-----END {label}-----");
    let end = rest
        .find(&end_marker)
        .ok_or_else(|| KeyError::Pem(format!("no END line for {label}")))?;
    let block = &rest[..end + end_marker.len()];
    let (l, der) =
        der::pem::decode_vec(block.as_bytes()).map_err(|e| KeyError::Pem(e.to_string()))?;
    Ok((l.to_owned(), Zeroizing::new(der)))
}

fn is_pem(data: &[u8]) -> bool {
    std::str::from_utf8(data)
        .map(|t| t.trim_start().starts_with("-----BEGIN "))
        .unwrap_or(false)
}

fn is_json(data: &[u8]) -> bool {
    data.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

/// Load a private (signing) key by content.
pub fn load_signing_key(data: &[u8], opts: &LoadOptions) -> Result<SigningKey, KeyError> {
    let key = if is_pem(data) {
        let text = std::str::from_utf8(data).map_err(|_| KeyError::Pem("not UTF-8".into()))?;
        let (label, der) = pem_first_block(text)?;
        match label.as_str() {
            "PRIVATE KEY" => signing_from_pkcs8(&der, opts.alg)?,
            "ENCRYPTED PRIVATE KEY" => signing_from_encrypted(&der, opts)?,
            "EC PRIVATE KEY" => signing_from_sec1(&der, opts.alg)?,
            "RSA PRIVATE KEY" => {
                let alg = bind(None, opts.alg, &RSA_FAMILY)?;
                SigningKey::from_rsa_pkcs1_der(alg, &der)?
            }
            "PUBLIC KEY" | "RSA PUBLIC KEY" => return Err(KeyError::NotPrivate),
            other => return Err(KeyError::Pem(format!("unsupported PEM label {other:?}"))),
        }
    } else if is_json(data) {
        let jwk = jwk::select_one(data, opts.kid.as_deref(), true)?;
        jwk.to_signing_key(opts.alg)?
    } else if data.first() == Some(&0x30) && opts.alg != Some(Algorithm::HmacSha256) {
        signing_from_der(data, opts)?
    } else if opts.alg == Some(Algorithm::HmacSha256) {
        SigningKey::from_hmac_secret(&hmac_secret_from_file(data)?)?
    } else {
        return Err(KeyError::UnrecognisedFormat(
            "not PEM, DER or JWK; for an HMAC secret give the algorithm hmac-sha256".into(),
        ));
    };
    match &opts.kid {
        Some(kid) if key.kid().is_none() => Ok(key.with_kid(kid.clone())),
        _ => Ok(key),
    }
}

/// Why bytes given as an HMAC secret look like key material, if they do.
///
/// A public key file used as a shared secret lets anyone who holds the
/// public key forge HS256 signatures (RFC 8725 section 2.1, algorithm
/// confusion), so a secret that contains a PEM BEGIN line anywhere, is a
/// JSON object or array (a JWK or JWK Set, after an optional BOM), or starts
/// like a DER key container (SEQUENCE header followed by INTEGER or
/// SEQUENCE: PKCS#1, PKCS#8, SEC1, SPKI, even truncated) is refused.
pub fn secret_looks_like_key(data: &[u8]) -> Option<&'static str> {
    let body = data.strip_prefix(b"\xef\xbb\xbf").unwrap_or(data);
    if body.windows(10).any(|w| w == b"-----BEGIN") {
        return Some("it contains a PEM BEGIN line");
    }
    let json_text = std::str::from_utf8(body)
        .is_ok_and(|t| t.trim_start().starts_with('{') || t.trim_start().starts_with('['));
    if json_text {
        return Some("it is JSON (a JWK or JWK Set)");
    }
    if body.first() == Some(&0x30) {
        // DER SEQUENCE: the length octets, then the first inner tag.
        let inner = match body.get(1) {
            Some(0x81) => body.get(3),
            Some(0x82) => body.get(4),
            Some(0x83) => body.get(5),
            Some(l) if *l < 0x80 => body.get(2),
            _ => None,
        };
        if matches!(inner, Some(0x02) | Some(0x30)) {
            return Some("it starts like a DER key (PKCS#8, SPKI, SEC1 or PKCS#1)");
        }
    }
    None
}

/// An HMAC secret file holds either base64 text (standard or URL-safe,
/// padding optional, surrounding whitespace ignored) or the raw bytes.
/// Content that looks like key material, as given or once base64-decoded,
/// is refused ([`secret_looks_like_key`]).
fn hmac_secret_from_file(data: &[u8]) -> Result<Zeroizing<Vec<u8>>, KeyError> {
    if let Some(why) = secret_looks_like_key(data) {
        return Err(KeyError::SecretLooksLikeKey(why));
    }
    let secret = hmac_secret_decode(data);
    if let Some(why) = secret_looks_like_key(&secret) {
        return Err(KeyError::SecretLooksLikeKey(why));
    }
    Ok(secret)
}

fn hmac_secret_decode(data: &[u8]) -> Zeroizing<Vec<u8>> {
    use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
    use base64::engine::DecodePaddingMode;
    use base64::Engine;
    let lax = GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
    if let Ok(text) = std::str::from_utf8(data) {
        let t = text.trim();
        if !t.is_empty() {
            for alphabet in [&base64::alphabet::STANDARD, &base64::alphabet::URL_SAFE] {
                if let Ok(v) = GeneralPurpose::new(alphabet, lax).decode(t) {
                    return Zeroizing::new(v);
                }
            }
        }
    }
    Zeroizing::new(data.to_vec())
}

fn signing_from_der(data: &[u8], opts: &LoadOptions) -> Result<SigningKey, KeyError> {
    if pkcs8::PrivateKeyInfo::from_der(data).is_ok() {
        return signing_from_pkcs8(data, opts.alg);
    }
    if pkcs8::EncryptedPrivateKeyInfo::from_der(data).is_ok() {
        return signing_from_encrypted(data, opts);
    }
    if sec1::EcPrivateKey::from_der(data).is_ok() {
        return signing_from_sec1(data, opts.alg);
    }
    if pkcs1::RsaPrivateKey::from_der(data).is_ok() {
        let alg = bind(None, opts.alg, &RSA_FAMILY)?;
        return SigningKey::from_rsa_pkcs1_der(alg, data);
    }
    if spki::SubjectPublicKeyInfoRef::from_der(data).is_ok()
        || pkcs1::RsaPublicKey::from_der(data).is_ok()
    {
        return Err(KeyError::NotPrivate);
    }
    Err(KeyError::UnrecognisedFormat(
        "DER is not PKCS#8, SEC1 or PKCS#1".into(),
    ))
}

fn signing_from_encrypted(der: &[u8], opts: &LoadOptions) -> Result<SigningKey, KeyError> {
    let pass = opts
        .passphrase
        .as_ref()
        .ok_or(KeyError::PassphraseRequired)?;
    let enc = pkcs8::EncryptedPrivateKeyInfo::from_der(der).map_err(|e| KeyError::Der {
        what: "EncryptedPrivateKeyInfo",
        detail: e.to_string(),
    })?;
    let doc = enc
        .decrypt(pass.as_slice())
        .map_err(|_| KeyError::Decrypt)?;
    signing_from_pkcs8(doc.as_bytes(), opts.alg)
}

fn signing_from_pkcs8(der: &[u8], hint: Option<Algorithm>) -> Result<SigningKey, KeyError> {
    let info = pkcs8::PrivateKeyInfo::from_der(der).map_err(|e| KeyError::Der {
        what: "PKCS#8 PrivateKeyInfo",
        detail: e.to_string(),
    })?;
    let oid = info.algorithm.oid;
    if oid == OID_EC {
        let curve = info
            .algorithm
            .parameters_oid()
            .map_err(|_| KeyError::InvalidKey("EC key without a named curve".into()))?;
        let alg = ec_alg_for_curve(curve)?;
        let alg = bind(Some(alg), hint, &[])?;
        let ec = sec1::EcPrivateKey::from_der(info.private_key).map_err(|e| KeyError::Der {
            what: "SEC1 ECPrivateKey",
            detail: e.to_string(),
        })?;
        let k = SigningKey::from_ec_scalar(alg, ec.private_key)?;
        check_embedded_public(&k, ec.public_key)?;
        Ok(k)
    } else if oid == OID_ED25519 {
        bind(Some(Algorithm::Ed25519), hint, &[])?;
        // CurvePrivateKey ::= OCTET STRING (RFC 8410 section 7)
        let seed =
            der::asn1::OctetStringRef::from_der(info.private_key).map_err(|e| KeyError::Der {
                what: "Ed25519 CurvePrivateKey",
                detail: e.to_string(),
            })?;
        let k = SigningKey::from_ed25519_seed(seed.as_bytes())?;
        if let Some(pk) = info.public_key {
            if VerifyingKey::from_ed25519_bytes(pk)?.thumbprint() != k.public.thumbprint() {
                return Err(KeyError::InvalidKey(
                    "Ed25519 public key does not match the seed".into(),
                ));
            }
        }
        Ok(k)
    } else if oid == OID_RSA {
        let alg = bind(None, hint, &RSA_FAMILY)?;
        SigningKey::from_rsa_pkcs1_der(alg, info.private_key)
    } else if oid == OID_RSA_PSS {
        // id-RSASSA-PSS (RFC 4055): the key is restricted to PSS.
        check_pss_params(info.algorithm.parameters)?;
        let alg = bind(Some(Algorithm::RsaPssSha512), hint, &[])?;
        SigningKey::from_rsa_pkcs1_der(alg, info.private_key)
    } else {
        Err(KeyError::UnsupportedKeyType(format!(
            "PKCS#8 algorithm {oid}"
        )))
    }
}

fn check_embedded_public(k: &SigningKey, embedded: Option<&[u8]>) -> Result<(), KeyError> {
    if let Some(pk) = embedded {
        let given = VerifyingKey::from_sec1_point(k.alg, pk)?;
        if given.to_jwk().thumbprint() != k.public.to_jwk().thumbprint() {
            return Err(KeyError::InvalidKey(
                "embedded public key does not match the private key".into(),
            ));
        }
    }
    Ok(())
}

fn signing_from_sec1(der: &[u8], hint: Option<Algorithm>) -> Result<SigningKey, KeyError> {
    let ec = sec1::EcPrivateKey::from_der(der).map_err(|e| KeyError::Der {
        what: "SEC1 ECPrivateKey",
        detail: e.to_string(),
    })?;
    let curve = ec
        .parameters
        .and_then(|p| p.named_curve())
        .ok_or_else(|| KeyError::InvalidKey("SEC1 key without a named curve".into()))?;
    let alg = bind(Some(ec_alg_for_curve(curve)?), hint, &[])?;
    let k = SigningKey::from_ec_scalar(alg, ec.private_key)?;
    check_embedded_public(&k, ec.public_key)?;
    Ok(k)
}

fn ec_alg_for_curve(curve: der::asn1::ObjectIdentifier) -> Result<Algorithm, KeyError> {
    if curve == OID_P256 {
        Ok(Algorithm::EcdsaP256Sha256)
    } else if curve == OID_P384 {
        Ok(Algorithm::EcdsaP384Sha384)
    } else {
        Err(KeyError::UnsupportedKeyType(format!("EC curve {curve}")))
    }
}

/// Load verifying keys by content. A PEM, DER or single JWK gives one key;
/// a JWK Set gives every usable key (or the one named by `opts.kid`).
/// A private key yields its public half.
pub fn load_verifying_keys(data: &[u8], opts: &LoadOptions) -> Result<Vec<VerifyingKey>, KeyError> {
    let keys = if is_pem(data) {
        let text = std::str::from_utf8(data).map_err(|_| KeyError::Pem("not UTF-8".into()))?;
        let (label, der) = pem_first_block(text)?;
        match label.as_str() {
            "PUBLIC KEY" => vec![verifying_from_spki(&der, opts.alg)?],
            "RSA PUBLIC KEY" => vec![verifying_from_pkcs1_public(&der, opts.alg)?],
            _ => vec![load_signing_key(data, opts)?.public],
        }
    } else if is_json(data) {
        let jwks = jwk::parse_keys(data)?;
        let selected = jwk::select(&jwks, opts.kid.as_deref())?;
        // RFC 7517 section 5: members this verifier cannot use (unsupported
        // curve or alg, `use` other than `sig`, another algorithm than the
        // one asked for) are ignored while others are usable. When none is,
        // the first member's error says why.
        let mut out = Vec::new();
        let mut first_err = None;
        for j in selected {
            match j.to_verifying_key(opts.alg) {
                Ok(k) => out.push(k),
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        if let (true, Some(e)) = (out.is_empty(), first_err) {
            return Err(e);
        }
        out
    } else if data.first() == Some(&0x30) && opts.alg != Some(Algorithm::HmacSha256) {
        if spki::SubjectPublicKeyInfoRef::from_der(data).is_ok() {
            vec![verifying_from_spki(data, opts.alg)?]
        } else if pkcs1::RsaPublicKey::from_der(data).is_ok() {
            vec![verifying_from_pkcs1_public(data, opts.alg)?]
        } else {
            vec![signing_from_der(data, opts)?.public]
        }
    } else if opts.alg == Some(Algorithm::HmacSha256) {
        vec![VerifyingKey::from_hmac_secret(&hmac_secret_from_file(
            data,
        )?)?]
    } else {
        return Err(KeyError::UnrecognisedFormat(
            "not PEM, DER or JWK; for an HMAC secret give the algorithm hmac-sha256".into(),
        ));
    };
    Ok(keys
        .into_iter()
        .map(|k| match (&opts.kid, k.kid.is_none()) {
            (Some(kid), true) => k.with_kid(kid.clone()),
            _ => k,
        })
        .collect())
}

/// Load exactly one verifying key (a JWK Set must resolve to one key).
pub fn load_verifying_key(data: &[u8], opts: &LoadOptions) -> Result<VerifyingKey, KeyError> {
    let mut v = load_verifying_keys(data, opts)?;
    match v.len() {
        0 => Err(KeyError::EmptyKeySet),
        1 => Ok(v.remove(0)),
        n => Err(KeyError::AmbiguousKeySet(n)),
    }
}

/// A public key from SubjectPublicKeyInfo DER.
pub fn verifying_from_spki(der: &[u8], hint: Option<Algorithm>) -> Result<VerifyingKey, KeyError> {
    let info = spki::SubjectPublicKeyInfoRef::from_der(der).map_err(|e| KeyError::Der {
        what: "SubjectPublicKeyInfo",
        detail: e.to_string(),
    })?;
    let oid = info.algorithm.oid;
    let bits = info
        .subject_public_key
        .as_bytes()
        .ok_or_else(|| KeyError::InvalidKey("public key BIT STRING has unused bits".into()))?;
    if oid == OID_EC {
        let curve = info
            .algorithm
            .parameters_oid()
            .map_err(|_| KeyError::InvalidKey("EC key without a named curve".into()))?;
        let alg = bind(Some(ec_alg_for_curve(curve)?), hint, &[])?;
        VerifyingKey::from_sec1_point(alg, bits)
    } else if oid == OID_ED25519 {
        bind(Some(Algorithm::Ed25519), hint, &[])?;
        VerifyingKey::from_ed25519_bytes(bits)
    } else if oid == OID_RSA || oid == OID_RSA_PSS {
        if oid == OID_RSA_PSS {
            check_pss_params(info.algorithm.parameters)?;
        }
        let implied = (oid == OID_RSA_PSS).then_some(Algorithm::RsaPssSha512);
        let alg = bind(implied, hint, &RSA_FAMILY)?;
        let pk = pkcs1::RsaPublicKey::from_der(bits).map_err(|e| KeyError::Der {
            what: "PKCS#1 RSAPublicKey",
            detail: e.to_string(),
        })?;
        VerifyingKey::from_rsa_components(alg, pk.modulus.as_bytes(), pk.public_exponent.as_bytes())
    } else {
        Err(KeyError::UnsupportedKeyType(format!(
            "SPKI algorithm {oid}"
        )))
    }
}

fn verifying_from_pkcs1_public(
    der: &[u8],
    hint: Option<Algorithm>,
) -> Result<VerifyingKey, KeyError> {
    let alg = bind(None, hint, &RSA_FAMILY)?;
    let pk = pkcs1::RsaPublicKey::from_der(der).map_err(|e| KeyError::Der {
        what: "PKCS#1 RSAPublicKey",
        detail: e.to_string(),
    })?;
    VerifyingKey::from_rsa_components(alg, pk.modulus.as_bytes(), pk.public_exponent.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

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
