//! The one algorithm table shared by RFC 9421, JWS (RFC 7515/7518/8037) and JWT.
//!
//! Every key in agentsig is bound to exactly one [`Algorithm`]. The names are
//! those of the RFC 9421 "HTTP Signature Algorithms" registry (section 6.2.2)
//! and of the JOSE "JSON Web Signature and Encryption Algorithms" registry
//! (RFC 7518 section 3.1, RFC 8037 section 3.1).

use std::fmt;

/// A signature or MAC algorithm agentsig can sign and verify with.
///
/// There is deliberately no `none` and no way to build an algorithm from a
/// name that is not listed here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Algorithm {
    /// ECDSA on P-256 with SHA-256, fixed-size r‖s (RFC 9421 3.3.4, JWS `ES256`). The default.
    EcdsaP256Sha256,
    /// ECDSA on P-384 with SHA-384, fixed-size r‖s (RFC 9421 3.3.5, JWS `ES384`).
    EcdsaP384Sha384,
    /// Pure Ed25519 (RFC 8032; RFC 9421 3.3.6; JWS `EdDSA` per RFC 8037 or `Ed25519` per RFC 9864).
    Ed25519,
    /// RSASSA-PSS with SHA-512, MGF1-SHA-512, salt length 64 (RFC 9421 3.3.1, JWS `PS512`).
    RsaPssSha512,
    /// RSASSA-PKCS1-v1_5 with SHA-256 (RFC 9421 3.3.2, JWS `RS256`).
    RsaV15Sha256,
    /// HMAC-SHA-256 with a full 32-byte tag (RFC 9421 3.3.3, JWS `HS256`).
    HmacSha256,
}

impl Algorithm {
    /// Every algorithm, in the order of the table in the README.
    pub const ALL: [Algorithm; 6] = [
        Algorithm::EcdsaP256Sha256,
        Algorithm::EcdsaP384Sha384,
        Algorithm::Ed25519,
        Algorithm::RsaPssSha512,
        Algorithm::RsaV15Sha256,
        Algorithm::HmacSha256,
    ];

    /// The default algorithm of draft-narvaneni-agent-uri-03 section 10.3.
    pub const DEFAULT: Algorithm = Algorithm::EcdsaP256Sha256;

    /// The RFC 9421 registry name (section 6.2.2), e.g. `ecdsa-p256-sha256`.
    pub fn httpsig_name(self) -> &'static str {
        match self {
            Algorithm::EcdsaP256Sha256 => "ecdsa-p256-sha256",
            Algorithm::EcdsaP384Sha384 => "ecdsa-p384-sha384",
            Algorithm::Ed25519 => "ed25519",
            Algorithm::RsaPssSha512 => "rsa-pss-sha512",
            Algorithm::RsaV15Sha256 => "rsa-v1_5-sha256",
            Algorithm::HmacSha256 => "hmac-sha256",
        }
    }

    /// The JOSE `alg` value agentsig emits (RFC 7518 3.1, RFC 8037 3.1).
    ///
    /// Ed25519 is emitted as `EdDSA` because that is what deployed JOSE
    /// libraries accept; [`Algorithm::from_jose_name`] also accepts the
    /// fully-specified `Ed25519` of RFC 9864.
    pub fn jose_name(self) -> &'static str {
        match self {
            Algorithm::EcdsaP256Sha256 => "ES256",
            Algorithm::EcdsaP384Sha384 => "ES384",
            Algorithm::Ed25519 => "EdDSA",
            Algorithm::RsaPssSha512 => "PS512",
            Algorithm::RsaV15Sha256 => "RS256",
            Algorithm::HmacSha256 => "HS256",
        }
    }

    /// Parse an RFC 9421 algorithm name. Case-sensitive, as the registry is.
    pub fn from_httpsig_name(name: &str) -> Option<Algorithm> {
        Algorithm::ALL
            .into_iter()
            .find(|a| a.httpsig_name() == name)
    }

    /// Parse a JOSE `alg` value. Case-sensitive (RFC 7515 4.1.1). `none` is never accepted.
    pub fn from_jose_name(name: &str) -> Option<Algorithm> {
        if name == "Ed25519" {
            return Some(Algorithm::Ed25519);
        }
        Algorithm::ALL.into_iter().find(|a| a.jose_name() == name)
    }

    /// Parse either naming (the CLI's `--alg` accepts both).
    pub fn from_any_name(name: &str) -> Option<Algorithm> {
        Algorithm::from_httpsig_name(name).or_else(|| Algorithm::from_jose_name(name))
    }

    /// True for the MAC algorithm: the verifying key is a secret.
    pub fn is_symmetric(self) -> bool {
        matches!(self, Algorithm::HmacSha256)
    }

    /// The exact length of a signature or tag, when it is fixed.
    pub fn fixed_signature_len(self) -> Option<usize> {
        match self {
            Algorithm::EcdsaP256Sha256 => Some(64),
            Algorithm::EcdsaP384Sha384 => Some(96),
            Algorithm::Ed25519 => Some(64),
            Algorithm::HmacSha256 => Some(32),
            Algorithm::RsaPssSha512 | Algorithm::RsaV15Sha256 => None,
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.httpsig_name())
    }
}

impl std::str::FromStr for Algorithm {
    type Err = UnknownAlgorithm;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Algorithm::from_any_name(s).ok_or_else(|| UnknownAlgorithm(s.to_owned()))
    }
}

/// A name that is not in agentsig's algorithm table.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown or unsupported algorithm {q0} (known: ecdsa-p256-sha256/ES256, ecdsa-p384-sha384/ES384, ed25519/EdDSA, rsa-pss-sha512/PS512, rsa-v1_5-sha256/RS256, hmac-sha256/HS256)", q0 = crate::text::quoted(.0))]
#[non_exhaustive]
pub struct UnknownAlgorithm(
    /// The name as given.
    pub String,
);

/// An explicit allow-list of algorithms, as RFC 8725 section 3.1 asks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllowList(Vec<Algorithm>);

impl AllowList {
    /// Only the listed algorithms.
    pub fn new(algs: impl IntoIterator<Item = Algorithm>) -> AllowList {
        let mut v: Vec<Algorithm> = algs.into_iter().collect();
        v.sort();
        v.dedup();
        AllowList(v)
    }

    /// The asymmetric algorithms: the default for anything whose keys come
    /// from a published source (PEM public keys, JWKS, DID documents).
    pub fn asymmetric() -> AllowList {
        AllowList::new(Algorithm::ALL.into_iter().filter(|a| !a.is_symmetric()))
    }

    /// Every algorithm, HMAC included.
    pub fn all() -> AllowList {
        AllowList::new(Algorithm::ALL)
    }

    /// Whether `alg` is allowed.
    pub fn contains(&self, alg: Algorithm) -> bool {
        self.0.contains(&alg)
    }

    /// The allowed algorithms.
    pub fn iter(&self) -> impl Iterator<Item = Algorithm> + '_ {
        self.0.iter().copied()
    }
}

impl Default for AllowList {
    fn default() -> Self {
        AllowList::asymmetric()
    }
}

impl serde::Serialize for Algorithm {
    /// Reports name an algorithm by its RFC 9421 registry name.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.httpsig_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for a in Algorithm::ALL {
            assert_eq!(Algorithm::from_httpsig_name(a.httpsig_name()), Some(a));
            assert_eq!(Algorithm::from_jose_name(a.jose_name()), Some(a));
        }
        assert_eq!(
            Algorithm::from_jose_name("Ed25519"),
            Some(Algorithm::Ed25519)
        );
        assert_eq!(Algorithm::from_jose_name("none"), None);
        assert_eq!(Algorithm::from_jose_name("es256"), None);
        assert_eq!(Algorithm::from_httpsig_name("ECDSA-P256-SHA256"), None);
        assert!(!AllowList::default().contains(Algorithm::HmacSha256));
    }
}
