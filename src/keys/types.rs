//! The key types: [`VerifyingKey`] and [`SigningKey`], each bound to one
//! algorithm, their constructors from raw parts, and the checks every
//! loaded key passes (curve membership, small-order Ed25519 points, RSA size
//! and ROCA, HMAC length).

use super::{KeyError, VerifyError};
use crate::alg::Algorithm;
use der::Decode;
use ring::signature::{self as rsig, KeyPair as _};
use zeroize::Zeroizing;

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

/// The order L of Ed25519's base point (RFC 8032 section 5.1), little-endian.
#[cfg(feature = "verify-oracle")]
pub(super) const ED25519_L: [u8; 32] = [
    0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
];

/// Whether the little-endian number `n` is below `bound` (a 32-byte
/// `S` against L: RFC 8032 section 5.1.7 step 1).
#[cfg(feature = "verify-oracle")]
fn ed25519_canonical(n: &[u8], bound: &[u8; 32]) -> bool {
    for (a, b) in n.iter().rev().zip(bound.iter().rev()) {
        if a != b {
            return a < b;
        }
    }
    false
}

/// Whether an encoded Ed25519 point's y is below p = 2^255 - 19 (RFC 8032
/// section 5.1.3 step 1), the sign bit set aside.
#[cfg(feature = "verify-oracle")]
fn ed25519_canonical_point(b: &[u8; 32]) -> bool {
    let mut y = *b;
    y[31] &= 0x7f;
    let mut p = [0xffu8; 32];
    p[0] = 0xed;
    p[31] = 0x7f;
    ed25519_canonical(&y, &p)
}

#[derive(Clone)]
pub(super) enum PublicInner {
    /// Uncompressed SEC1 point, validated on the curve.
    EcP256(Vec<u8>),
    EcP384(Vec<u8>),
    /// The 32 encoded bytes and the point decompressed once, at load
    /// (RFC 8032 section 5.1.3), so that no verify decodes it again.
    Ed25519(Box<Ed25519Public>),
    /// Big-endian, without leading zeros.
    Rsa {
        n: Vec<u8>,
        e: Vec<u8>,
    },
    Hmac(HmacSecret),
}

#[derive(Clone)]
pub(super) struct Ed25519Public {
    pub(super) bytes: [u8; 32],
    pub(super) key: ed25519_dalek::VerifyingKey,
}

#[derive(Clone)]
pub(super) struct HmacSecret {
    pub(super) key: ring::hmac::Key,
    pub(super) bytes: Zeroizing<Vec<u8>>,
}

/// A key that verifies signatures of one algorithm.
///
/// For `hmac-sha256` this holds the shared secret; policy layers refuse
/// symmetric keys from published sources (JWKS, DID documents).
#[derive(Clone)]
pub struct VerifyingKey {
    pub(super) alg: Algorithm,
    pub(super) inner: PublicInner,
    pub(super) kid: Option<String>,
    /// The RFC 7638 thumbprint, computed on first use and shared by the
    /// clones (it depends only on `inner`, which never changes): every
    /// verification report names its key by it.
    pub(super) thumbprint: std::sync::Arc<std::sync::OnceLock<String>>,
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
    ///
    /// # Errors
    /// [`VerifyError`] when the signature does not verify under the key, has the wrong length, or
    /// claims another algorithm.
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
                #[cfg(feature = "verify-oracle")]
                if let Some(v) = super::oracle::ask(self.alg, p, msg, sig) {
                    return v.then_some(()).ok_or(VerifyError::Mismatch);
                }
                rsig::UnparsedPublicKey::new(&rsig::ECDSA_P256_SHA256_FIXED, p).verify(msg, sig)
            }
            PublicInner::EcP384(p) => {
                #[cfg(feature = "verify-oracle")]
                if let Some(v) = super::oracle::ask(self.alg, p, msg, sig) {
                    return v.then_some(()).ok_or(VerifyError::Mismatch);
                }
                rsig::UnparsedPublicKey::new(&rsig::ECDSA_P384_SHA384_FIXED, p).verify(msg, sig)
            }
            PublicInner::Ed25519(p) => {
                // Strict RFC 8032 verification, as ed25519-dalek's
                // verify_strict: S < L (section 5.1.7, checked by dalek),
                // A not of small order (refused at load), R not of small
                // order (any encoding of the eight torsion points refused
                // here, from its bytes, instead of decompressing R), and
                // [S]B = R + [k]A with R's bytes equal to the canonical
                // encoding of the computed point. The length was checked
                // above.
                let r: &[u8; 32] = sig[..32].try_into().map_err(|_| VerifyError::Mismatch)?;
                if ed25519_small_order(r) {
                    return Err(VerifyError::Mismatch);
                }
                // The rest of RFC 8032 section 5.1.7 may be computed by the
                // runtime (feature `verify-oracle`): only for a canonical S
                // and a canonically encoded key, which an outside
                // implementation then cannot judge differently.
                #[cfg(feature = "verify-oracle")]
                if ed25519_canonical(&sig[32..], &ED25519_L) && ed25519_canonical_point(&p.bytes) {
                    if let Some(v) = super::oracle::ask(self.alg, &p.bytes, msg, sig) {
                        return v.then_some(()).ok_or(VerifyError::Mismatch);
                    }
                }
                let sig =
                    ed25519_dalek::Signature::from_slice(sig).map_err(|_| VerifyError::Mismatch)?;
                use ed25519_dalek::Verifier as _;
                return p.key.verify(msg, &sig).map_err(|_| VerifyError::Mismatch);
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
    ///
    /// # Errors
    /// [`VerifyError`] when the signature does not verify under the key, has the wrong length, or
    /// claims another algorithm.
    pub fn verify_as(&self, alg: Algorithm, msg: &[u8], sig: &[u8]) -> Result<(), VerifyError> {
        if alg != self.alg {
            return Err(VerifyError::AlgorithmMismatch {
                key: self.alg,
                requested: alg,
            });
        }
        self.verify(msg, sig)
    }

    // -- constructors from raw parts (used by jwk, did, wycheproof tests) --

    /// An EC public key from a SEC1 point (compressed or uncompressed); the
    /// point is validated on the curve.
    ///
    /// # Errors
    /// [`KeyError`] when the key material is malformed or invalid, of an unsupported type or size,
    /// or bound to another algorithm than the one requested (an encrypted key also needs its
    /// passphrase).
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
            thumbprint: Default::default(),
        })
    }

    /// An Ed25519 public key from its 32 bytes.
    ///
    /// # Errors
    /// [`KeyError`] when the key material is malformed or invalid, of an unsupported type or size,
    /// or bound to another algorithm than the one requested (an encrypted key also needs its
    /// passphrase).
    pub fn from_ed25519_bytes(pk: &[u8]) -> Result<VerifyingKey, KeyError> {
        let arr: [u8; 32] = pk.try_into().map_err(|_| {
            KeyError::InvalidKey(format!("Ed25519 public key has {} bytes, not 32", pk.len()))
        })?;
        if ed25519_small_order(&arr) {
            return Err(KeyError::InvalidKey(
                "Ed25519 public key is a small-order point: any signature with R = identity and S = 0 would verify".into(),
            ));
        }
        // A point that does not decompress can verify nothing: refused
        // here, with the reason, rather than at every verify.
        let key = ed25519_dalek::VerifyingKey::from_bytes(&arr).map_err(|_| {
            KeyError::InvalidKey("Ed25519 public key is not a point on the curve".into())
        })?;
        Ok(VerifyingKey {
            alg: Algorithm::Ed25519,
            inner: PublicInner::Ed25519(Box::new(Ed25519Public { bytes: arr, key })),
            kid: None,
            thumbprint: Default::default(),
        })
    }

    /// An RSA public key from modulus and exponent (big-endian).
    ///
    /// # Errors
    /// [`KeyError`] when the key material is malformed or invalid, of an unsupported type or size,
    /// or bound to another algorithm than the one requested (an encrypted key also needs its
    /// passphrase).
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
            thumbprint: Default::default(),
        })
    }

    /// An HMAC-SHA256 key from the secret bytes (at least 32).
    ///
    /// # Errors
    /// [`KeyError`] when the key material is malformed or invalid, of an unsupported type or size,
    /// or bound to another algorithm than the one requested (an encrypted key also needs its
    /// passphrase).
    pub fn from_hmac_secret(secret: &[u8]) -> Result<VerifyingKey, KeyError> {
        Ok(VerifyingKey {
            alg: Algorithm::HmacSha256,
            inner: PublicInner::Hmac(hmac_secret(secret)?),
            kid: None,
            thumbprint: Default::default(),
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

pub(super) fn hmac_secret(secret: &[u8]) -> Result<HmacSecret, KeyError> {
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
pub(super) fn roca_fingerprint(n: &[u8]) -> bool {
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

pub(super) fn strip_zeros(b: &[u8]) -> &[u8] {
    let i = b.iter().position(|&x| x != 0).unwrap_or(b.len());
    &b[i..]
}

pub(super) fn bit_len(n: &[u8]) -> usize {
    match n.first() {
        None => 0,
        Some(&top) => n.len() * 8 - top.leading_zeros() as usize,
    }
}

// ---------------------------------------------------------------------------
// Private keys

pub(super) enum PrivateInner {
    Ecdsa(rsig::EcdsaKeyPair),
    Ed25519(rsig::Ed25519KeyPair),
    /// RSA through ring (constant-time, blinded).
    RsaRing(rsig::RsaKeyPair),
    /// RSA keys ring refuses (e.g. primes of unequal length, as the RFC 9421
    /// B.1.1 test key has) go through RustCrypto `rsa`, always blinded.
    RsaRc(Box<rsa::RsaPrivateKey>),
    Hmac(HmacSecret),
    /// A private key held outside the process (a PKCS#11 token); signing
    /// asks its holder.
    #[cfg(feature = "pkcs11")]
    External(std::sync::Arc<dyn ExternalKey>),
}

/// A private key that signs outside this process (a PKCS#11 token, see
/// `keys::pkcs11`), always with the algorithm of the [`SigningKey`] that
/// holds it.
#[cfg(feature = "pkcs11")]
pub(super) trait ExternalKey: Send + Sync {
    /// The signature of `msg`, in the JWS / RFC 9421 form.
    fn sign(&self, msg: &[u8]) -> Result<Vec<u8>, KeyError>;
    /// The concrete key, for callers that know its kind.
    fn as_any(&self) -> &dyn std::any::Any;
}

/// A key that signs with one algorithm.
pub struct SigningKey {
    pub(super) alg: Algorithm,
    pub(super) inner: PrivateInner,
    pub(super) public: VerifyingKey,
    /// PKCS#8 DER of the private key, when it was generated here (for writing out).
    pub(super) pkcs8: Option<Zeroizing<Vec<u8>>>,
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
    ///
    /// # Errors
    /// [`KeyError`] when the signer fails (ring reports an error for an RSA key it cannot use).
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
            #[cfg(feature = "pkcs11")]
            PrivateInner::External(k) => k.sign(msg),
        }
    }

    /// Sign, first checking that `alg` is this key's algorithm.
    ///
    /// # Errors
    /// [`KeyError::AlgorithmMismatch`] when `alg` is not the key's own algorithm; else as
    /// [`SigningKey::sign`].
    pub fn sign_as(&self, alg: Algorithm, msg: &[u8]) -> Result<Vec<u8>, KeyError> {
        if alg != self.alg {
            return Err(KeyError::AlgorithmMismatch {
                key: self.alg,
                requested: alg,
            });
        }
        self.sign(msg)
    }

    /// The HMAC secret, for writing a generated secret out.
    pub fn hmac_secret_bytes(&self) -> Option<&[u8]> {
        match &self.inner {
            PrivateInner::Hmac(s) => Some(&s.bytes),
            _ => None,
        }
    }

    /// An HMAC-SHA256 signing key from the secret bytes (at least 32).
    ///
    /// # Errors
    /// [`KeyError`] when the key material is malformed or invalid, of an unsupported type or size,
    /// or bound to another algorithm than the one requested (an encrypted key also needs its
    /// passphrase).
    pub fn from_hmac_secret(secret: &[u8]) -> Result<SigningKey, KeyError> {
        let s = hmac_secret(secret)?;
        Ok(SigningKey {
            alg: Algorithm::HmacSha256,
            public: VerifyingKey {
                alg: Algorithm::HmacSha256,
                inner: PublicInner::Hmac(s.clone()),
                kid: None,
                thumbprint: Default::default(),
            },
            inner: PrivateInner::Hmac(s),
            pkcs8: None,
        })
    }

    /// ECDSA from a private scalar; the public point is derived and checked.
    ///
    /// # Errors
    /// [`KeyError`] when the key material is malformed or invalid, of an unsupported type or size,
    /// or bound to another algorithm than the one requested (an encrypted key also needs its
    /// passphrase).
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
    ///
    /// # Errors
    /// [`KeyError`] when the key material is malformed or invalid, of an unsupported type or size,
    /// or bound to another algorithm than the one requested (an encrypted key also needs its
    /// passphrase).
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
    ///
    /// # Errors
    /// [`KeyError`] when the key material is malformed or invalid, of an unsupported type or size,
    /// or bound to another algorithm than the one requested (an encrypted key also needs its
    /// passphrase).
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
