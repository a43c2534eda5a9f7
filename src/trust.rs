//! Where verification keys come from: the [`KeyResolver`] seam, and the one
//! routine that selects a trusted key and checks a signature with it.
//!
//! Every verifier in agentsig (detached JWS, descriptors, RFC 9421, JWT)
//! asks a [`KeyResolver`] for the keys it may trust, given what a signature
//! *claims* about its key ([`KeyRequest`]). The claim only selects among
//! trusted keys; it never supplies a key or an algorithm (RFC 8725 sections
//! 2.1, 3.1 and 3.10; RFC 9421 section 3.2 step 6; RFC 7515 section 10.3).
//!
//! # Security contract
//! * A resolver returns keys it trusts for the request; an empty list means
//!   no trusted key matches and every verifier then fails closed.
//! * Hints a signature carries that name a key *location* (`jku`, a DID URL,
//!   the document's origin) are passed to the resolver as hints only. A
//!   resolver may use them to decide *which of its trusted sources* to ask;
//!   it must never fetch from a location merely because a signature names it.
//! * A shared secret from a published source (a JWK Set, discovery) is never
//!   used ([`TrustedKey::usable`], RFC 8725 section 3.1).
//! * [`select_and_verify`] is the only place where a key is chosen and a
//!   signature checked; JWS, JWT and RFC 9421 all go through it.
//!
//! [`StaticKeys`] serves keys the caller loaded; [`PerIssuer`] binds keys to
//! the issuer that publishes them (RFC 8725 section 3.8). Key discovery
//! (RFC 8414 `jwks_uri`, descriptor `jwksUri`/`jwks`, DID documents) plugs in
//! by implementing the same trait. Resolvers are `Send + Sync` so one
//! [`Verifier`](crate::verifier::Verifier) can serve many threads.
//!
//! ```
//! use agentsig::trust::{KeyRequest, KeyResolver, KeySource, StaticKeys};
//! use agentsig::{Algorithm, SigningKey};
//!
//! let key = SigningKey::generate(Algorithm::Ed25519).unwrap();
//! let keys = StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned);
//! let req = KeyRequest::new().kid(key.kid_or_thumbprint()).alg(Algorithm::Ed25519);
//! assert_eq!(keys.resolve(&req).unwrap().len(), 1);
//! ```

use crate::alg::{Algorithm, AllowList};
pub use crate::jwk::{SkipReason, SkippedKey};
use crate::keys::{VerifyError, VerifyingKey};
use std::collections::HashMap;
use std::sync::Arc;

/// How a trusted key reached the verifier, for reports.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", content = "from", rename_all = "kebab-case")]
#[non_exhaustive]
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
#[non_exhaustive]
pub struct TrustedKey {
    /// The key, bound to one algorithm.
    pub key: VerifyingKey,
    /// Where it came from.
    pub source: KeySource,
}

impl TrustedKey {
    /// A trusted key from `source`.
    pub fn new(key: VerifyingKey, source: KeySource) -> TrustedKey {
        TrustedKey { key, source }
    }

    /// Whether a verifier may use this key at all. A shared secret that came
    /// from a published source never is (RFC 8725 3.1: the RS256/HS256
    /// key-confusion family); every verifier applies this, whatever its
    /// algorithm allow-list says.
    pub fn usable(&self) -> bool {
        !(self.key.is_symmetric() && self.source.is_published())
    }
}

/// What a signature claims about its key, and where the signed document came
/// from: used only to *select* among trusted keys.
///
/// Built with [`KeyRequest::new`] and the setters; the fields are public to
/// read. New hints may be added, so the struct is `#[non_exhaustive]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct KeyRequest {
    /// The JWS `kid` header or RFC 9421 `keyid` parameter.
    pub kid: Option<String>,
    /// The algorithm the signature claims (JWS `alg`, RFC 9421 `alg`).
    pub alg: Option<Algorithm>,
    /// The token issuer (`iss`), for resolvers that keep keys per issuer.
    pub issuer: Option<String>,
    /// A JWS `jku` header: a *hint* only. A resolver may use it to choose
    /// among JWK Set URLs it already trusts for the issuer or origin, never
    /// to fetch an arbitrary URL (RFC 8725 section 3.10).
    pub jku: Option<String>,
    /// The origin (`https://host[:port]`) the signed document was fetched
    /// from, when the caller knows it.
    pub origin: Option<String>,
    /// A DID URL naming the verification method (`did:web:...#key-1`).
    pub did_url: Option<String>,
}

impl KeyRequest {
    /// An empty request: any trusted key may match.
    pub fn new() -> KeyRequest {
        KeyRequest::default()
    }
    /// Set the key id.
    pub fn kid(mut self, kid: impl Into<String>) -> Self {
        self.kid = Some(kid.into());
        self
    }
    /// Set the claimed algorithm.
    pub fn alg(mut self, alg: Algorithm) -> Self {
        self.alg = Some(alg);
        self
    }
    /// Set the issuer.
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }
    /// Set the `jku` hint.
    pub fn jku(mut self, jku: impl Into<String>) -> Self {
        self.jku = Some(jku.into());
        self
    }
    /// Set the origin the document came from.
    pub fn origin(mut self, origin: impl Into<String>) -> Self {
        self.origin = Some(origin.into());
        self
    }
    /// Set the DID URL of the verification method.
    pub fn did_url(mut self, did_url: impl Into<String>) -> Self {
        self.did_url = Some(did_url.into());
        self
    }
    /// Set the key id when there is one.
    pub fn maybe_kid(mut self, kid: Option<&str>) -> Self {
        self.kid = kid.map(str::to_owned);
        self
    }
    /// Set the issuer when there is one.
    pub fn maybe_issuer(mut self, issuer: Option<&str>) -> Self {
        self.issuer = issuer.map(str::to_owned);
        self
    }
}

/// The underlying cause of a [`ResolveError`], kept for callers that log it.
pub type ResolveCause = Arc<dyn std::error::Error + Send + Sync + 'static>;

/// Why keys could not be resolved (distinct from "no key matched", which is
/// an empty list).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// The key id is too long or holds control characters.
    #[error("key id {q0} is not acceptable (length or characters)", q0 = crate::text::quoted(.0))]
    BadKid(String),
    /// Key discovery failed (network, document, policy).
    #[error("key discovery failed: {message}")]
    Discovery {
        /// What failed, for people.
        message: String,
        /// Whether trying again later may succeed (timeouts, 5xx, a store
        /// that is down) as opposed to a permanent refusal.
        transient: bool,
        /// The underlying error, when there is one.
        #[source]
        cause: Option<ResolveCause>,
    },
}

impl ResolveError {
    /// A permanent discovery failure.
    pub fn discovery(message: impl Into<String>) -> ResolveError {
        ResolveError::Discovery {
            message: message.into(),
            transient: false,
            cause: None,
        }
    }
    /// A discovery failure that may succeed later, with its cause.
    pub fn transient(
        message: impl Into<String>,
        cause: impl std::error::Error + Send + Sync + 'static,
    ) -> ResolveError {
        ResolveError::Discovery {
            message: message.into(),
            transient: true,
            cause: Some(Arc::new(cause)),
        }
    }
    /// Whether trying again later may succeed.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            ResolveError::Discovery {
                transient: true,
                ..
            }
        )
    }
}

impl PartialEq for ResolveError {
    fn eq(&self, other: &Self) -> bool {
        self.to_string() == other.to_string() && self.is_transient() == other.is_transient()
    }
}

/// Supplies the trusted keys that may have made a signature.
///
/// Implementations must be cheap to call from many threads at once; a
/// remote resolver keeps its own cache. An async caller can collect the
/// requests of a document first (`ParsedJws::key_requests`,
/// `httpsig::key_requests`, `DecodedJwt::key_request`), fetch, and then
/// verify synchronously against a [`StaticKeys`] of what it fetched.
pub trait KeyResolver: Send + Sync + std::fmt::Debug {
    /// Candidate keys for the request. An empty list means no trusted key
    /// matches; verifiers then fail closed.
    ///
    /// # Errors
    /// [`ResolveError`] when a key source cannot be consulted (`transient` says whether a retry may
    /// help).
    fn resolve(&self, req: &KeyRequest) -> Result<Vec<TrustedKey>, ResolveError>;
}

/// Upper bound on a key id we look up (RFC 8725 3.10: kid is untrusted input).
pub const MAX_KID_LEN: usize = 256;

/// Refuse key ids that are too long or carry control characters.
///
/// # Errors
/// [`ResolveError`] when a key source cannot be consulted (`transient` says whether a retry may
/// help).
pub fn check_kid(kid: Option<&str>) -> Result<(), ResolveError> {
    if let Some(kid) = kid {
        if kid.len() > MAX_KID_LEN || kid.chars().any(char::is_control) {
            return Err(ResolveError::BadKid(kid.chars().take(64).collect()));
        }
    }
    Ok(())
}

/// A fixed set of keys, selected by `kid`.
///
/// Selection: when the request names a kid, keys with that exact kid match,
/// and so does a key without a kid (a single key given by file is trusted
/// whatever kid the signer wrote). When the request names none, every key
/// matches. Algorithm equality is checked by [`select_and_verify`], not
/// here, so that a mismatch is reported as such.
#[derive(Clone, Debug, Default)]
pub struct StaticKeys {
    keys: Vec<TrustedKey>,
}

impl StaticKeys {
    /// An empty set (nothing verifies against it).
    pub fn new() -> StaticKeys {
        StaticKeys::default()
    }

    /// Add a key.
    pub fn add(&mut self, key: VerifyingKey, source: KeySource) {
        self.keys.push(TrustedKey { key, source });
    }

    /// Add a key, builder style.
    pub fn with(mut self, key: VerifyingKey, source: KeySource) -> StaticKeys {
        self.add(key, source);
        self
    }

    /// Every usable key of a JWK Set, each tagged with `source`.
    ///
    /// The rules of a careful JWK Set client (RFC 7517 section 5): members
    /// this crate cannot use (other key types, `use` other than `sig`) are
    /// skipped; symmetric (`oct`) members are never taken from a set (RFC 8725
    /// section 3.1); each key is bound by its own `kty`/`crv`/`alg`, and
    /// `rsa_alg` binds only an RSA key that names no `alg`. Every skipped
    /// member is returned with its reason ([`JwksKeys::skipped`]), so a set
    /// that yields no key says why.
    ///
    /// # Errors
    /// [`KeyError`](crate::KeyError) when the document is not a JWK or JWK
    /// Set (strict JSON, RFC 7517 section 5), repeats a `kid`, or mixes
    /// shared secrets with public keys. A set whose members are all skipped
    /// is not an error: [`JwksKeys::keys`] is then empty.
    ///
    /// # Example
    /// ```
    /// use agentsig::trust::{KeySource, StaticKeys};
    /// use agentsig::jwk::SkipReason;
    ///
    /// let jwks = br#"{"keys":[
    ///   {"kty":"EC","crv":"P-256","kid":"a",
    ///    "x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
    ///    "y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},
    ///   {"kty":"EC","crv":"secp256k1","kid":"b","x":"AA","y":"AA"},
    ///   {"kty":"PQC","kid":"c"}]}"#;
    /// let got = StaticKeys::from_jwks(jwks, KeySource::Jwks("jwks.json".into()), None)?;
    /// assert_eq!(got.keys.len(), 1);
    /// assert_eq!(got.skipped.len(), 2);
    /// assert!(matches!(got.skipped[1].reason, SkipReason::UnsupportedKeyType(_)));
    /// # Ok::<(), agentsig::KeyError>(())
    /// ```
    pub fn from_jwks(
        jwks: &[u8],
        source: KeySource,
        rsa_alg: Option<Algorithm>,
    ) -> Result<JwksKeys, crate::KeyError> {
        let mut keys = StaticKeys::new();
        let (members, mut skipped) = crate::jwk::parse_keys_reporting(jwks)?;
        for (index, j) in members {
            let skip = |reason| SkippedKey {
                index,
                kid: j.kid.clone(),
                reason,
            };
            if j.kty == "oct" {
                skipped.push(skip(SkipReason::SharedSecret));
                continue;
            }
            let loaded = match j.to_verifying_key(None) {
                Err(crate::KeyError::AlgorithmRequired) => j.to_verifying_key(rsa_alg),
                other => other,
            };
            match loaded {
                Ok(k) => keys.add(k, source.clone()),
                Err(e) => skipped.push(skip(SkipReason::Unusable(e))),
            }
        }
        skipped.sort_by_key(|s| s.index);
        Ok(JwksKeys { keys, skipped })
    }

    /// Add every key of `other`.
    pub fn extend(&mut self, other: StaticKeys) {
        self.keys.extend(other.keys);
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// How many keys the set holds.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// The keys.
    pub fn keys(&self) -> &[TrustedKey] {
        &self.keys
    }
}

/// What [`StaticKeys::from_jwks`] took from a JWK Set, and what it skipped.
#[derive(Debug, Clone)]
#[must_use = "a key set whose members were all skipped verifies nothing: check `skipped`"]
pub struct JwksKeys {
    /// The usable keys.
    pub keys: StaticKeys,
    /// The members not taken, in set order, each with its reason.
    pub skipped: Vec<SkippedKey>,
}

impl KeyResolver for StaticKeys {
    fn resolve(&self, req: &KeyRequest) -> Result<Vec<TrustedKey>, ResolveError> {
        check_kid(req.kid.as_deref())?;
        Ok(self
            .keys
            .iter()
            .filter(|t| match (req.kid.as_deref(), t.key.kid()) {
                (Some(want), Some(have)) => want == have,
                _ => true,
            })
            .cloned()
            .collect())
    }
}

impl<R: KeyResolver + ?Sized> KeyResolver for Arc<R> {
    fn resolve(&self, req: &KeyRequest) -> Result<Vec<TrustedKey>, ResolveError> {
        (**self).resolve(req)
    }
}

impl<R: KeyResolver + ?Sized> KeyResolver for Box<R> {
    fn resolve(&self, req: &KeyRequest) -> Result<Vec<TrustedKey>, ResolveError> {
        (**self).resolve(req)
    }
}

/// Keys bound to the issuer that publishes them (RFC 8725 section 3.8; the
/// delegation checklist's "each hop's key from *that* issuer"): a request is
/// answered only from the resolver registered for its `issuer`, and a request
/// without an issuer, or for an unknown one, matches nothing.
#[derive(Clone, Debug, Default)]
pub struct PerIssuer {
    by_issuer: HashMap<String, Arc<dyn KeyResolver>>,
}

impl PerIssuer {
    /// No issuer yet.
    pub fn new() -> PerIssuer {
        PerIssuer::default()
    }
    /// Bind `resolver` to `issuer` (compared exactly, RFC 7519 4.1.1).
    pub fn insert(&mut self, issuer: impl Into<String>, resolver: impl KeyResolver + 'static) {
        self.by_issuer.insert(issuer.into(), Arc::new(resolver));
    }
    /// Bind, builder style.
    pub fn with(mut self, issuer: impl Into<String>, resolver: impl KeyResolver + 'static) -> Self {
        self.insert(issuer, resolver);
        self
    }
    /// The issuers with keys.
    pub fn issuers(&self) -> impl Iterator<Item = &str> {
        self.by_issuer.keys().map(String::as_str)
    }
}

impl KeyResolver for PerIssuer {
    fn resolve(&self, req: &KeyRequest) -> Result<Vec<TrustedKey>, ResolveError> {
        match req.issuer.as_deref().and_then(|i| self.by_issuer.get(i)) {
            Some(r) => r.resolve(req),
            None => Ok(Vec::new()),
        }
    }
}

/// The key that verified a signature.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct KeyEvidence {
    /// The algorithm the key is bound to (and the signature used).
    pub alg: Algorithm,
    /// The key's id, when it has one.
    pub kid: Option<String>,
    /// Where the key came from.
    pub source: KeySource,
    /// RFC 7638 thumbprint of the key.
    pub thumbprint: String,
}

impl KeyEvidence {
    fn of(t: &TrustedKey) -> KeyEvidence {
        KeyEvidence {
            alg: t.key.algorithm(),
            kid: t.key.kid().map(str::to_owned),
            source: t.source.clone(),
            thumbprint: t.key.thumbprint(),
        }
    }
}

/// Why [`select_and_verify`] did not verify.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SelectError {
    /// The resolver failed.
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    /// No trusted key matches the request.
    #[error("{}", crate::text::no_trusted_key_for(.kid.as_deref(), .published_as.as_deref()))]
    NoTrustedKey {
        /// The key id asked for.
        kid: Option<String>,
        /// When that key id is the RFC 7638 thumbprint of a trusted key
        /// published under another kid: that kid.
        published_as: Option<String>,
    },
    /// Trusted keys match the key id, but none is bound to the claimed
    /// algorithm: an algorithm-substitution attempt or a misconfiguration.
    #[error("the signature claims {claimed} but the trusted key is bound to {key}")]
    AlgMismatch {
        /// What the signature claims.
        claimed: Algorithm,
        /// What the (first) matching key is bound to.
        key: Algorithm,
        /// That key.
        evidence: Box<KeyEvidence>,
    },
    /// The signature does not verify with any matching key.
    #[error("{error}")]
    BadSignature {
        /// The primitive's error.
        error: VerifyError,
        /// The key tried, when exactly one was.
        evidence: Option<Box<KeyEvidence>>,
    },
    /// The ECDSA signature is not in low-S form and the policy requires it.
    #[error("the ECDSA signature is not in low-S form (strict low-S policy)")]
    HighS,
}

impl SelectError {
    /// The key involved, when one was.
    pub fn evidence(&self) -> Option<&KeyEvidence> {
        match self {
            SelectError::AlgMismatch { evidence, .. } => Some(evidence),
            SelectError::BadSignature { evidence, .. } => evidence.as_deref(),
            _ => None,
        }
    }
}

/// Select the trusted keys for `req` and verify `sig` over `msg` with them:
/// the one select-and-verify routine of every verifier.
///
/// * The key id is checked ([`check_kid`]) and the resolver asked.
/// * Unusable keys ([`TrustedKey::usable`]) and keys whose algorithm the
///   allow-list does not name are dropped.
/// * When the request claims an algorithm (`req.alg`), only keys bound to
///   it are tried; if keys match the kid but none has that algorithm the
///   result is [`SelectError::AlgMismatch`], never a silent switch.
/// * Each remaining key is tried; the first that verifies wins.
///
/// # Errors
/// [`SelectError`] when no trusted key matches, or the matching key is refused (algorithm,
/// symmetric from a published source) or the signature does not verify.
pub fn select_and_verify(
    resolver: &dyn KeyResolver,
    allowed: &AllowList,
    req: &KeyRequest,
    msg: &[u8],
    sig: &[u8],
    low_s: bool,
) -> Result<KeyEvidence, SelectError> {
    check_kid(req.kid.as_deref())?;
    if let Some(a) = req.alg {
        if low_s && crate::keys::ecdsa_high_s(a, sig) {
            return Err(SelectError::HighS);
        }
    }
    let candidates: Vec<TrustedKey> = resolver
        .resolve(req)?
        .into_iter()
        .filter(|t| t.usable() && allowed.contains(t.key.algorithm()))
        .collect();
    if candidates.is_empty() {
        return Err(SelectError::NoTrustedKey {
            kid: req.kid.clone(),
            published_as: published_as(resolver, req),
        });
    }
    let chosen: Vec<&TrustedKey> = match req.alg {
        Some(claimed) => {
            let same: Vec<&TrustedKey> = candidates
                .iter()
                .filter(|t| t.key.algorithm() == claimed)
                .collect();
            if same.is_empty() {
                let k = &candidates[0];
                return Err(SelectError::AlgMismatch {
                    claimed,
                    key: k.key.algorithm(),
                    evidence: Box::new(KeyEvidence::of(k)),
                });
            }
            same
        }
        // No claimed algorithm (RFC 9421 without `alg`): the key decides.
        None => candidates.iter().collect(),
    };
    try_keys(&chosen, msg, sig, low_s)
}

/// The kid of the trusted key whose RFC 7638 thumbprint is the kid asked
/// for, when it is published under another kid (a signer that named its
/// key by thumbprint). Only a kid of a thumbprint's form (43 base64url
/// characters, SHA-256) is looked up, among the keys the resolver gives
/// without a kid.
fn published_as(resolver: &dyn KeyResolver, req: &KeyRequest) -> Option<String> {
    let kid = req.kid.as_deref()?;
    if kid.len() != 43 || !crate::b64::is_url_alphabet(kid) {
        return None;
    }
    let mut any = req.clone();
    any.kid = None;
    resolver.resolve(&any).ok()?.into_iter().find_map(|t| {
        let k = t.key.kid()?;
        (k != kid && t.key.thumbprint() == kid).then(|| k.to_owned())
    })
}

fn try_keys(
    keys: &[&TrustedKey],
    msg: &[u8],
    sig: &[u8],
    low_s: bool,
) -> Result<KeyEvidence, SelectError> {
    let mut last = None;
    for t in keys {
        if low_s && crate::keys::ecdsa_high_s(t.key.algorithm(), sig) {
            return Err(SelectError::HighS);
        }
        match t.key.verify(msg, sig) {
            Ok(()) => return Ok(KeyEvidence::of(t)),
            Err(e) => last = Some(e),
        }
    }
    let error = last.unwrap_or(VerifyError::Mismatch);
    Err(SelectError::BadSignature {
        error,
        evidence: (keys.len() == 1).then(|| Box::new(KeyEvidence::of(keys[0]))),
    })
}

/// Why a trusted key set could not be built from the key material an
/// operator named ([`TrustedKeys`], [`bind_source`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TrustError {
    /// A key source could not be loaded (the source's name, and why).
    #[error("{source_name}: {error}")]
    Key {
        /// The key source, as the operator named it.
        source_name: String,
        /// Why it could not be loaded.
        error: crate::KeyError,
    },
    /// No usable key was left: nothing would ever verify, which is never a
    /// success. Holds each skipped JWK Set member, `source: keys[i] ...`.
    #[error("no usable verification key{}", skipped_text(.0))]
    NoUsableKey(Vec<String>),
    /// With several accepted issuers, a key source names none of them
    /// (RFC 8725 section 3.8: every key is bound to one issuer).
    #[error("{0}: with several issuers, bind each key source to its issuer as ISSUER=SOURCE")]
    UnboundSource(String),
}

fn skipped_text(skipped: &[String]) -> String {
    if skipped.is_empty() {
        String::new()
    } else {
        format!(" (skipped: {})", skipped.join("; "))
    }
}

/// The trusted keys of a verifier, built from key material an operator
/// names (the rules of the command line's `--key`, `--jwks` and `--alg`):
///
/// * a key given directly ([`TrustedKeys::add_key`]: PEM, DER, JWK, or an
///   HMAC secret when `hmac-sha256` is the one allowed algorithm) is trusted
///   as given; a single allowed algorithm binds a key that does not name its
///   own (RSA, RFC 7518 section 3); an RSA key may take its algorithm from a
///   companion JWK only when that JWK holds the same public key (RFC 7638
///   thumbprint);
/// * a JWK Set ([`TrustedKeys::add_jwks`]) is a published source: its
///   shared secrets are never trusted (RFC 8725 section 3.1) and unusable
///   members are skipped and reported ([`StaticKeys::from_jwks`]);
/// * a set with no usable key is an error ([`TrustError::NoUsableKey`]),
///   never an empty set that verifies nothing.
///
/// # Example
/// ```
/// use agentsig::trust::{TrustError, TrustedKeys};
/// use agentsig::{Algorithm, SigningKey};
///
/// let key = SigningKey::generate(Algorithm::Ed25519)?;
/// let pem = key.verifying_key().to_spki_pem().expect("SPKI");
/// let mut t = TrustedKeys::new(&[]);
/// t.add_key("signer.pub.pem", pem.as_bytes(), None)?;
/// assert_eq!(t.finish()?.len(), 1);
///
/// // A JWK Set of shared secrets only leaves nothing to trust.
/// let mut t = TrustedKeys::new(&[]);
/// t.add_jwks("oct.jwks.json", br#"{"keys":[{"kty":"oct","k":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}]}"#)?;
/// assert!(matches!(t.finish(), Err(TrustError::NoUsableKey(s)) if s[0].contains("shared secret")));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
#[must_use]
pub struct TrustedKeys {
    bound: Option<Algorithm>,
    keys: StaticKeys,
    skipped: Vec<String>,
}

impl TrustedKeys {
    /// Start an empty set under the allowed algorithms `allowed` (empty:
    /// every asymmetric algorithm). Exactly one allowed algorithm also binds
    /// keys that do not name theirs.
    pub fn new(allowed: &[Algorithm]) -> TrustedKeys {
        TrustedKeys {
            bound: match allowed {
                [one] => Some(*one),
                _ => None,
            },
            ..TrustedKeys::default()
        }
    }

    /// Trust the key(s) in `data`, a key the operator named `name`.
    /// `companion_jwk` is the JWK the key generator wrote beside an RSA PEM
    /// (it records the algorithm the PEM cannot).
    ///
    /// # Errors
    /// [`TrustError::Key`] when the material is not a usable key, e.g.
    /// [`KeyError::AlgorithmRequired`](crate::KeyError::AlgorithmRequired)
    /// for an RSA key with neither an allowed algorithm nor a matching
    /// companion JWK.
    pub fn add_key(
        &mut self,
        name: &str,
        data: &[u8],
        companion_jwk: Option<&[u8]>,
    ) -> Result<(), TrustError> {
        use crate::keys::{load_verifying_keys, LoadOptions};
        let opts = LoadOptions {
            alg: self.bound,
            ..LoadOptions::default()
        };
        let loaded = match load_verifying_keys(data, &opts) {
            Err(crate::KeyError::AlgorithmRequired) => {
                match companion_jwk.and_then(|j| {
                    crate::keys::algorithm_from_companion_jwk(data, j, &LoadOptions::default())
                }) {
                    Some(a) => load_verifying_keys(
                        data,
                        &LoadOptions {
                            alg: Some(a),
                            ..LoadOptions::default()
                        },
                    ),
                    None => Err(crate::KeyError::AlgorithmRequired),
                }
            }
            other => other,
        };
        let keys = loaded.map_err(|error| TrustError::Key {
            source_name: name.to_owned(),
            error,
        })?;
        for k in keys {
            self.keys.add(k, KeySource::File(name.to_owned()));
        }
        Ok(())
    }

    /// Trust the usable keys of the JWK Set `data`, named `name`.
    ///
    /// # Errors
    /// [`TrustError::Key`] when `data` is not a JWK Set (see
    /// [`StaticKeys::from_jwks`]); members it cannot use are not errors but
    /// are reported by [`TrustedKeys::finish`] when nothing usable is left.
    pub fn add_jwks(&mut self, name: &str, data: &[u8]) -> Result<(), TrustError> {
        let found = StaticKeys::from_jwks(data, KeySource::Jwks(name.to_owned()), self.bound)
            .map_err(|error| TrustError::Key {
                source_name: name.to_owned(),
                error,
            })?;
        self.skipped
            .extend(found.skipped.iter().map(|s| format!("{name}: {s}")));
        self.keys.extend(found.keys);
        Ok(())
    }

    /// The set.
    ///
    /// # Errors
    /// [`TrustError::NoUsableKey`], with every skipped member, when no key
    /// is usable.
    pub fn finish(self) -> Result<StaticKeys, TrustError> {
        if self.keys.is_empty() {
            return Err(TrustError::NoUsableKey(self.skipped));
        }
        Ok(self.keys)
    }
}

/// The issuer a key source is bound to (RFC 8725 section 3.8: a token
/// naming issuer A is never accepted on issuer B's key). `spec` is
/// `ISSUER=SOURCE` for one of the accepted `issuers` (the longest that
/// matches, so an issuer may itself hold `=`), or a bare `SOURCE`, allowed
/// only when exactly one issuer is accepted. Returns `(issuer, source)`.
///
/// # Errors
/// [`TrustError::UnboundSource`] for a bare source with several issuers.
///
/// # Example
/// ```
/// use agentsig::trust::bind_source;
/// let issuers = ["https://a.example".to_owned(), "https://b.example".to_owned()];
/// assert_eq!(
///     bind_source("https://b.example=b.jwks.json", &issuers)?,
///     ("https://b.example", "b.jwks.json")
/// );
/// assert!(bind_source("b.jwks.json", &issuers).is_err());
/// assert_eq!(bind_source("k.pem", &issuers[..1])?, ("https://a.example", "k.pem"));
/// # Ok::<(), agentsig::trust::TrustError>(())
/// ```
pub fn bind_source<'a>(
    spec: &'a str,
    issuers: &'a [String],
) -> Result<(&'a str, &'a str), TrustError> {
    let bound = issuers
        .iter()
        .filter(|i| {
            spec.len() > i.len() && spec.starts_with(i.as_str()) && spec.as_bytes()[i.len()] == b'='
        })
        .max_by_key(|i| i.len())
        .map(|i| (i.as_str(), &spec[i.len() + 1..]));
    match (bound, issuers) {
        (Some(b), _) => Ok(b),
        (None, [one]) => Ok((one.as_str(), spec)),
        (None, _) => Err(TrustError::UnboundSource(spec.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn high_s_boundary() {
        let mut sig = vec![0u8; 64];
        // s = n/2 exactly is low; n/2 + 1 is high.
        let half: [u8; 32] = [
            0x7f, 0xff, 0xff, 0xff, 0x80, 0x00, 0x00, 0x00, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff,
            0xff, 0xff, 0xde, 0x73, 0x7d, 0x56, 0xd3, 0x8b, 0xcf, 0x42, 0x79, 0xdc, 0xe5, 0x61,
            0x7e, 0x31, 0x92, 0xa8,
        ];
        sig[32..].copy_from_slice(&half);
        assert!(!crate::keys::ecdsa_high_s(Algorithm::EcdsaP256Sha256, &sig));
        sig[63] += 1;
        assert!(crate::keys::ecdsa_high_s(Algorithm::EcdsaP256Sha256, &sig));
        assert!(!crate::keys::ecdsa_high_s(Algorithm::Ed25519, &sig));
    }
}
