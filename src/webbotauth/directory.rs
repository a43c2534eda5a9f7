//! The HTTP Message Signatures Directory (section 5.5 and Appendix B of
//! `draft-ietf-webbotauth-httpsig-protocol-00`): a JWK Set of the agent's
//! public keys at `/.well-known/http-message-signatures-directory`, served
//! as `application/http-message-signatures-directory+json`, optionally
//! signed by each of its keys over `("@authority";req "content-digest")`
//! with `tag="http-message-signatures-directory"`.
//!
//! * [`directory_body`] builds the JWK Set (`kid` = RFC 7638 thumbprint,
//!   `use` = `sig`).
//! * [`sign_directory`] makes one response signature;
//!   [`directory_headers`] the whole header section for one authority (a
//!   static host, or `agentsig serve` per request).
//! * [`parse_key_set`] reads a fetched set (bounded, `kid` checked against
//!   the thumbprint at the well-known URL), and [`verify_directory`]
//!   checks the response signatures it carries.

use super::{
    AgentUrl, DirectoryError, Discovery, KeySet, DIRECTORY_TAG, MEDIA_TYPE, WELL_KNOWN_PATH,
};
use crate::alg::Algorithm;
use crate::httpsig::components::{ComponentId, Derived};
use crate::httpsig::message::{Message, RequestLine};
use crate::httpsig::{HttpPolicy, SignatureSpec, Signed};
use crate::keys::{SigningKey, VerifyingKey};
use crate::sfv::{self, BareItem, Entry};
use crate::trust::{KeySource, StaticKeys};
use serde_json::{Map, Value};

/// Most keys read from one key set.
pub const MAX_KEYS: usize = 64;
/// The `Cache-Control` a directory is served with (Appendix C.4's example).
pub const CACHE_CONTROL: &str = "max-age=86400";
/// Default validity of a directory response signature: 30 days (Appendix
/// C.8 recommends long-lived proofs).
pub const DEFAULT_PROOF_LIFETIME: u64 = 30 * 24 * 3600;

/// The public JWK of `key` as a directory entry: `kty`, `crv`, `kid` (the
/// thumbprint), the key members, `use` = `sig`, in the member order of the
/// draft's example. An RSA key also carries its JOSE `alg` (`PS512` or
/// `RS256`), since `kty` alone does not say which RSA algorithm it is bound
/// to.
pub fn directory_jwk(key: &VerifyingKey) -> Value {
    let j = key.to_jwk();
    let mut m = Map::new();
    m.insert("kty".into(), Value::String(j.kty.clone()));
    if let Some(c) = &j.crv {
        m.insert("crv".into(), Value::String(c.clone()));
    }
    m.insert("kid".into(), Value::String(key.thumbprint()));
    for (name, v) in [("x", &j.x), ("y", &j.y), ("n", &j.n), ("e", &j.e)] {
        if let Some(v) = v {
            m.insert(name.into(), Value::String(v.clone()));
        }
    }
    if j.kty == "RSA" {
        m.insert(
            "alg".into(),
            Value::String(key.algorithm().jose_name().into()),
        );
    }
    m.insert("use".into(), Value::String("sig".into()));
    Value::Object(m)
}

/// The directory body for these keys: `{"keys":[...]}`, compact JSON.
pub fn directory_body(keys: &[&VerifyingKey]) -> Vec<u8> {
    let v = serde_json::json!({"keys": keys.iter().map(|k| directory_jwk(k)).collect::<Vec<_>>()});
    v.to_string().into_bytes()
}

/// The request a directory response answers, for `@authority;req`.
fn directory_request(authority: &str) -> Result<Message, DirectoryError> {
    let line = RequestLine::new("GET", WELL_KNOWN_PATH, Some(authority), "https").map_err(|e| {
        DirectoryError::Malformed {
            url: authority.to_owned(),
            message: e.to_string(),
        }
    })?;
    Ok(Message::request(line, Vec::new(), Vec::new()))
}

fn directory_components() -> Vec<ComponentId> {
    let mut auth = ComponentId::derived(Derived::Authority);
    auth.req = true;
    auth.params.push(("req".into(), BareItem::Boolean(true)));
    let mut v = vec![auth];
    v.extend(ComponentId::field("content-digest").ok());
    v
}

/// One directory response signature (Appendix B.1) by `key` over
/// `("@authority";req "content-digest")` of the response carrying `body`
/// to a request for `authority`.
///
/// # Errors
/// [`DirectoryError::Malformed`] (with `authority` as its URL) when the signature cannot be made:
/// `label` is not a valid label (an sf-key of 1 to [`MAX_LABEL`](crate::httpsig::MAX_LABEL)
/// characters), `created` or `expires` is negative, `authority` holds a CR, LF, NUL or non-ASCII
/// character or makes the signature base larger than
/// [`MAX_BASE_BYTES`](crate::httpsig::MAX_BASE_BYTES), or `key` cannot sign.
pub fn sign_directory(
    body: &[u8],
    authority: &str,
    key: &SigningKey,
    label: &str,
    created: i64,
    expires: i64,
) -> Result<Signed, DirectoryError> {
    Ok(sign_proof(body, authority, key, label, created, expires)?)
}

/// [`sign_directory`], its failure kept as a [`ProofError`].
fn sign_proof(
    body: &[u8],
    authority: &str,
    key: &SigningKey,
    label: &str,
    created: i64,
    expires: i64,
) -> Result<Signed, ProofError> {
    let req = directory_request(authority)?;
    let mut res = Message::response(200, Vec::new(), body.to_vec());
    res.add_header("Content-Digest", &crate::digest::content_digest(body));
    let mut spec = SignatureSpec::new(label)
        .created(created)
        .expires(expires)
        .keyid(&key.verifying_key().thumbprint())
        .tag(DIRECTORY_TAG);
    spec.components = directory_components();
    crate::httpsig::sign(&res, Some(&req), &spec, key).map_err(|err| ProofError::Sign {
        authority: authority.to_owned(),
        err,
    })
}

/// Why a directory proof could not be made, kept apart from the public
/// [`DirectoryError`] so that a server can tell a key that cannot sign now
/// (a PKCS#11 token away: [`SignError::signer_unavailable`]) from a
/// request it cannot answer.
///
/// [`SignError::signer_unavailable`]: crate::httpsig::SignError::signer_unavailable
#[derive(Debug, thiserror::Error)]
pub(crate) enum ProofError {
    /// The request for the authority cannot be modelled.
    #[error(transparent)]
    Directory(DirectoryError),
    /// A key could not sign the proof.
    #[error("the directory proof for {authority} could not be signed: {err}")]
    Sign {
        /// The authority the proof was for.
        authority: String,
        /// Why.
        err: crate::httpsig::SignError,
    },
}

impl ProofError {
    /// True when the key's holder failed to sign and may succeed later.
    #[cfg(feature = "server")]
    pub(crate) fn signer_unavailable(&self) -> bool {
        matches!(self, ProofError::Sign { err, .. } if err.signer_unavailable())
    }
}

impl From<DirectoryError> for ProofError {
    fn from(e: DirectoryError) -> Self {
        ProofError::Directory(e)
    }
}

impl From<ProofError> for DirectoryError {
    fn from(e: ProofError) -> Self {
        match e {
            ProofError::Directory(e) => e,
            ProofError::Sign { authority, err } => DirectoryError::Malformed {
                url: authority,
                message: err.to_string(),
            },
        }
    }
}

/// The header section of a directory response for `authority`:
/// `Content-Type`, `Cache-Control`, `Content-Digest`, and one signature per
/// key (labels `binding0`, `binding1`, ...), as `(name, value)` pairs.
///
/// # Errors
/// [`DirectoryError::Malformed`] (with `authority` as its URL) when a signature cannot be made:
/// `created` or `expires` is negative, `authority` holds a CR, LF, NUL or non-ASCII character or
/// makes the signature base larger than [`MAX_BASE_BYTES`](crate::httpsig::MAX_BASE_BYTES), or a
/// key cannot sign (see [`sign_directory`]). With no keys it does not fail.
pub fn directory_headers(
    body: &[u8],
    authority: &str,
    keys: &[&SigningKey],
    created: i64,
    expires: i64,
) -> Result<Vec<(String, String)>, DirectoryError> {
    Ok(proof_headers(body, authority, keys, created, expires)?)
}

/// [`directory_headers`], its failure kept as a [`ProofError`] (the
/// server's directory answers 503 when a key cannot sign now).
pub(crate) fn proof_headers(
    body: &[u8],
    authority: &str,
    keys: &[&SigningKey],
    created: i64,
    expires: i64,
) -> Result<Vec<(String, String)>, ProofError> {
    let mut inputs = Vec::new();
    let mut sigs = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        let s = sign_proof(body, authority, k, &format!("binding{i}"), created, expires)?;
        inputs.push(s.signature_input);
        sigs.push(s.signature);
    }
    let mut h = vec![
        ("Content-Type".to_owned(), MEDIA_TYPE.to_owned()),
        ("Cache-Control".to_owned(), CACHE_CONTROL.to_owned()),
        (
            "Content-Digest".to_owned(),
            crate::digest::content_digest(body),
        ),
    ];
    if !inputs.is_empty() {
        h.push(("Signature-Input".to_owned(), inputs.join(", ")));
        h.push(("Signature".to_owned(), sigs.join(", ")));
    }
    Ok(h)
}

/// Read a fetched key set (section 5.5.1): a JWK Set of at most
/// [`MAX_KEYS`] keys. Each usable key is indexed by its RFC 7638
/// thumbprint. At the well-known directory a `kid` MUST equal the
/// thumbprint, so a key listed under another `kid` makes the whole set
/// [`DirectoryError::KidMismatch`]; at a plain JWK Set URL a `kid` may be an
/// operator's label and is ignored. Shared secrets and keys this crate
/// cannot bind to one algorithm are skipped.
///
/// # Errors
/// [`DirectoryError::Malformed`] when `body` is not strict I-JSON or has no `"keys"` array;
/// [`DirectoryError::TooManyKeys`] when the array has more than [`MAX_KEYS`] entries (usable or
/// not); [`DirectoryError::KidMismatch`] when `url` is a well-known directory
/// ([`Discovery::Directory`]) and a usable key carries a `kid` other than its thumbprint. Entries
/// that are not usable keys are skipped, not errors.
pub fn parse_key_set(url: &AgentUrl, body: &[u8]) -> Result<KeySet, DirectoryError> {
    let malformed = |m: String| DirectoryError::Malformed {
        url: url.key_set_url.clone(),
        message: m,
    };
    let v: Value = crate::json::parse_strict(body).map_err(|e| malformed(e.to_string()))?;
    let arr = v
        .get("keys")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("no \"keys\" array".into()))?;
    if arr.len() > MAX_KEYS {
        return Err(DirectoryError::TooManyKeys(url.key_set_url.clone()));
    }
    let mut keys = Vec::new();
    for entry in arr {
        let Ok(mut j) = crate::jwk::Jwk::from_value(entry) else {
            continue;
        };
        if j.kty == "oct" || j.is_private() {
            continue;
        }
        // The drafts restrict a directory `alg` to the HTTP Signature
        // Algorithms registry (`ed25519`); JOSE names are read as usual.
        if let Some(a) = j.alg.as_deref() {
            if Algorithm::from_jose_name(a).is_none() {
                match Algorithm::from_httpsig_name(a) {
                    Some(h) => j.alg = Some(h.jose_name().to_owned()),
                    None => continue,
                }
            }
        }
        let claimed = j.kid.take();
        let Ok(key) = j.to_verifying_key(None) else {
            continue;
        };
        if key.is_symmetric() {
            continue;
        }
        let tp = key.thumbprint();
        if let (Some(kid), Discovery::Directory) = (&claimed, url.discovery) {
            if *kid != tp {
                return Err(DirectoryError::KidMismatch {
                    url: url.key_set_url.clone(),
                    kid: kid.clone(),
                    thumbprint: tp,
                });
            }
        }
        keys.push((tp, key));
    }
    Ok(KeySet {
        url: url.key_set_url.clone(),
        keys,
        proven_by: Vec::new(),
        withheld: Vec::new(),
    })
}

/// Check the directory response signatures (Appendix B.1) of a fetched
/// directory: every `Signature-Input` member tagged
/// `http-message-signatures-directory` must verify with the set's own key
/// named by its `keyid`, cover `"@authority";req` (the authority fetched)
/// and `content-digest`, match the body's digest, and not be expired nor
/// created in the future. Returns the labels that verified (empty when the
/// response carries none). A proof that does not cover both components
/// (the older drafts' `("@authority")` form) is skipped, not counted.
///
/// # Errors
/// [`DirectoryError::BadDirectorySignature`] when the `Signature-Input` field is not an RFC 9651
/// Dictionary, when a member tagged `http-message-signatures-directory` has malformed covered
/// components, or when a proof that covers both components does not verify: its `Signature` is
/// missing or malformed, its `keyid` names no key of `set`, the signature is bad, `body` does not
/// match its `Content-Digest`, or it has no `expires`, is expired or is created in the future.
/// Headers without `Signature-Input`, without a proof of the current form, or with more than
/// [`MAX_SIGNATURES`](crate::httpsig::MAX_SIGNATURES) of them, give `Ok` with no labels.
pub fn verify_directory(
    set: &KeySet,
    authority: &str,
    headers: &[(String, String)],
    body: &[u8],
    now: i64,
) -> Result<Vec<String>, DirectoryError> {
    let bad = |m: String| DirectoryError::BadDirectorySignature {
        url: set.url.clone(),
        message: m,
    };
    let mut res = Message::response(200, Vec::new(), body.to_vec());
    for (n, v) in headers {
        res.add_header(n, v);
    }
    let lines: Vec<&[u8]> = res.field_lines("signature-input", false).collect();
    if lines.is_empty() {
        return Ok(Vec::new());
    }
    let d = sfv::parse_dictionary_raw(&lines.join(&b", "[..])).map_err(|e| bad(e.to_string()))?;
    // Proofs in the form of the drafts before httpsig-directory-00 (only
    // `@authority`, without `content-digest`) are not proofs under the
    // current text: they are skipped, as if absent, rather than refusing
    // the keys a site MAY use without a proof (section 5.5).
    let required = directory_components();
    let mut labels = Vec::new();
    for (label, e) in &d.0 {
        if let Entry::InnerList(l) = e {
            if crate::httpsig::param_str(&l.params, "tag") != Some(DIRECTORY_TAG) {
                continue;
            }
            let Ok(covered) = crate::httpsig::components::parse_covered(&l.items) else {
                return Err(bad(format!("{label}: malformed covered components")));
            };
            if required
                .iter()
                .all(|r| covered.iter().any(|c| c.same_as(r)))
            {
                labels.push(label.clone());
            }
        }
    }
    if labels.is_empty() || labels.len() > crate::httpsig::MAX_SIGNATURES {
        return Ok(Vec::new());
    }
    let req = directory_request(authority)?;
    let mut keys = StaticKeys::new();
    for (tp, k) in &set.keys {
        keys.add(
            k.clone().with_kid(tp.clone()),
            KeySource::Discovered(set.url.clone()),
        );
    }
    let mut p = HttpPolicy::new();
    p.required = directory_components();
    p.expected_tag = Some(DIRECTORY_TAG.into());
    p.require_expires = true;
    p.max_age = None;
    p.labels = Some(labels.clone());
    let mut cx = crate::policy::Context::new(std::sync::Arc::new(keys));
    cx.clock = std::sync::Arc::new(crate::clock::FixedClock(now));
    match crate::httpsig::verify(&cx, &p, &res, Some(&req)) {
        Ok(_) => Ok(labels),
        Err(crate::httpsig::HttpSigError::NotVerified(r)) => {
            let why = r
                .results
                .iter()
                .find_map(|x| {
                    x.outcome
                        .as_ref()
                        .err()
                        .map(|e| format!("{}: {e}", x.label))
                })
                .unwrap_or_default();
            Err(bad(why))
        }
        Err(e) => Err(bad(e.to_string())),
    }
}
