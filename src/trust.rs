//! Where verification keys come from: the [`KeyResolver`] seam.
//!
//! Every verifier in agentsig (detached JWS, RFC 9421, JWT) asks a
//! [`KeyResolver`] for the keys it may trust, given the key id and algorithm
//! a signature *claims*. The claim only selects among trusted keys; it never
//! supplies a key or an algorithm (RFC 8725 sections 2.1, 3.1 and 3.10).
//!
//! [`StaticKeys`] serves keys the caller loaded (`--key`, `--jwks`). Key
//! discovery (RFC 8414 `jwks_uri`, descriptor `jwksUri`/`jwks`, DID documents)
//! plugs in by implementing the same trait.

use crate::alg::Algorithm;
use crate::keys::VerifyingKey;

/// How a trusted key reached the verifier, for reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeySource {
    /// A key file named by the caller.
    File(String),
    /// A JWK Set (file or URL) named by the caller.
    Jwks(String),
    /// Given in code.
    Pinned,
    /// Found by discovery; the string says where (URL, DID URL).
    Discovered(String),
}

impl std::fmt::Display for KeySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeySource::File(p) => write!(f, "key file {p}"),
            KeySource::Jwks(p) => write!(f, "JWK Set {p}"),
            KeySource::Pinned => f.write_str("pinned key"),
            KeySource::Discovered(s) => write!(f, "discovered at {s}"),
        }
    }
}

impl KeySource {
    /// A JWK Set or discovery: sources that publish keys to anyone.
    pub fn is_published(&self) -> bool {
        matches!(self, KeySource::Jwks(_) | KeySource::Discovered(_))
    }
}

/// A key the verifier trusts, with where it came from.
#[derive(Clone, Debug)]
pub struct TrustedKey {
    pub key: VerifyingKey,
    pub source: KeySource,
}

impl TrustedKey {
    /// Whether a verifier may use this key at all. A shared secret that came
    /// from a published source never is (RFC 8725 3.1: the RS256/HS256
    /// key-confusion family); every verifier applies this, whatever its
    /// algorithm allow-list says.
    pub fn usable(&self) -> bool {
        !(self.key.is_symmetric() && self.source.is_published())
    }
}

/// What a signature claims about its key: used only to select.
#[derive(Clone, Copy, Debug, Default)]
pub struct KeyRequest<'a> {
    /// The `kid` header or RFC 9421 `keyid` parameter.
    pub kid: Option<&'a str>,
    /// The algorithm the signature claims (JWS `alg`, RFC 9421 `alg`).
    pub alg: Option<Algorithm>,
    /// The token issuer, for resolvers that keep keys per issuer.
    pub issuer: Option<&'a str>,
}

/// Why keys could not be resolved (distinct from "no key matched").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    #[error("key discovery failed: {0}")]
    Discovery(String),
    #[error("key id {q0} is not acceptable (length or characters)", q0 = crate::text::quoted(.0))]
    BadKid(String),
}

/// Supplies the trusted keys that may have made a signature.
pub trait KeyResolver {
    /// Candidate keys for the request. An empty list means no trusted key
    /// matches; verifiers then fail closed.
    fn resolve(&self, req: &KeyRequest<'_>) -> Result<Vec<TrustedKey>, ResolveError>;
}

/// Upper bound on a key id we look up (RFC 8725 3.10: kid is untrusted input).
pub const MAX_KID_LEN: usize = 256;

/// A fixed set of keys, selected by `kid`.
///
/// Selection: when the request names a kid, keys with that exact kid match,
/// and so does a key without a kid (a single key given by file is trusted
/// whatever kid the signer wrote). When the request names none, every key
/// matches. Algorithm equality is checked by the verifier, not here, so that
/// a mismatch is reported as such.
#[derive(Clone, Debug, Default)]
pub struct StaticKeys {
    keys: Vec<TrustedKey>,
}

impl StaticKeys {
    pub fn new() -> StaticKeys {
        StaticKeys::default()
    }

    pub fn add(&mut self, key: VerifyingKey, source: KeySource) {
        self.keys.push(TrustedKey { key, source });
    }

    pub fn with(mut self, key: VerifyingKey, source: KeySource) -> StaticKeys {
        self.add(key, source);
        self
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }
}

impl KeyResolver for StaticKeys {
    fn resolve(&self, req: &KeyRequest<'_>) -> Result<Vec<TrustedKey>, ResolveError> {
        if let Some(kid) = req.kid {
            if kid.len() > MAX_KID_LEN || kid.chars().any(char::is_control) {
                return Err(ResolveError::BadKid(kid.chars().take(64).collect()));
            }
        }
        Ok(self
            .keys
            .iter()
            .filter(|t| match (req.kid, t.key.kid()) {
                (Some(want), Some(have)) => want == have,
                _ => true,
            })
            .cloned()
            .collect())
    }
}

impl<R: KeyResolver + ?Sized> KeyResolver for &R {
    fn resolve(&self, req: &KeyRequest<'_>) -> Result<Vec<TrustedKey>, ResolveError> {
        (**self).resolve(req)
    }
}
