//! Descriptor signing with a detached JWS over the RFC 8785 canonical form
//! (draft-narvaneni-agent-uri-03 section 10.3: "the signed payload MUST be the descriptor
//! canonicalized per JCS ... and the serialized JWS MUST be carried alongside
//! the descriptor rather than inlined").
//!
//! Whitespace and member order of the descriptor do not matter (that is what
//! JCS is for); any change of a value does.

use crate::jcs;
use crate::json::JsonError;
use crate::jws::{self, JwsError, JwsReport, JwsVerifyError, SignOptions};
use crate::keys::SigningKey;
use crate::policy::{Context, JwsPolicy};

/// Why a descriptor could not be signed or did not verify.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum DescriptorError {
    /// The descriptor is not strict I-JSON (RFC 7493), so it has no
    /// canonical form.
    #[error("descriptor is not strict I-JSON: {0}")]
    Json(#[from] JsonError),
    /// The descriptor is larger than the verifier's limit.
    #[error("descriptor of {0} bytes exceeds the limit")]
    TooLarge(usize),
    /// The JWS could not be produced or read.
    #[error(transparent)]
    Jws(#[from] JwsError),
    /// The JWS was read and nothing verified; the report says why.
    #[error("{0}")]
    NotVerified(Box<Report>),
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let e = JwsVerifyError::NotVerified(Box::new(self.jws.clone()));
        write!(f, "{e}")
    }
}

impl DescriptorError {
    /// The verification report, when the JWS could be read.
    pub fn report(&self) -> Option<&Report> {
        match self {
            DescriptorError::NotVerified(r) => Some(r),
            _ => None,
        }
    }
}

/// Which JWS serialization to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum JwsForm {
    /// Compact with detached payload: `header..signature` (one key).
    #[default]
    Compact,
    /// JWS JSON general serialization without `payload` (one or more keys).
    General,
}

/// A signed descriptor: its canonical bytes and the detached JWS text.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Signed {
    /// The RFC 8785 canonical bytes that were signed.
    pub canonical: Vec<u8>,
    /// The detached JWS, to publish beside the descriptor.
    pub jws: String,
}

/// How to sign a descriptor ([`sign_with`]): plain data with defaults
/// (compact serialization, no `typ`, base64url payload).
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct DescriptorOptions {
    /// Which JWS serialization to write (default compact, one key only).
    pub form: JwsForm,
    /// The JWS header options (`typ`, `b64`, extra members).
    pub jws: SignOptions,
}

impl DescriptorOptions {
    /// Write this serialization.
    pub fn form(mut self, form: JwsForm) -> Self {
        self.form = form;
        self
    }
    /// Use these JWS header options.
    pub fn jws(mut self, jws: SignOptions) -> Self {
        self.jws = jws;
        self
    }
}

/// Canonicalize `descriptor` (RFC 8785) and sign it with `key`: a compact
/// JWS with detached payload (draft-narvaneni-agent-uri-03 section 10.3), to publish beside the
/// descriptor. For several keys or header options, see [`sign_with`].
///
/// # Errors
/// [`DescriptorError::Json`] when the descriptor is not strict I-JSON (it
/// has no canonical form); [`DescriptorError::Jws`] when the key cannot sign.
///
/// # Example
/// ```
/// use agentsig::{descriptor, Algorithm, SigningKey};
/// let key = SigningKey::generate(Algorithm::Ed25519)?;
/// let signed = descriptor::sign(br#"{"b":1, "a":2}"#, &key)?;
/// assert_eq!(signed.canonical, br#"{"a":2,"b":1}"#);
/// assert!(signed.jws.contains(".."), "compact, payload detached");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn sign(descriptor: &[u8], key: &SigningKey) -> Result<Signed, DescriptorError> {
    sign_with(descriptor, &[key], &DescriptorOptions::default())
}

/// Canonicalize `descriptor` and sign it with every key, as `opts` says.
///
/// # Errors
/// As [`sign`]; also [`DescriptorError::Jws`] when the compact form is asked
/// for with other than one key, or an extra header member is reserved.
///
/// # Example
/// ```
/// use agentsig::descriptor::{self, DescriptorOptions, JwsForm};
/// use agentsig::{Algorithm, SigningKey};
/// let a = SigningKey::generate(Algorithm::Ed25519)?;
/// let b = SigningKey::generate(Algorithm::EcdsaP256Sha256)?;
/// let opts = DescriptorOptions::default().form(JwsForm::General);
/// let signed = descriptor::sign_with(br#"{"name":"planner"}"#, &[&a, &b], &opts)?;
/// assert!(signed.jws.contains("\"signatures\""));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn sign_with(
    descriptor: &[u8],
    keys: &[&SigningKey],
    opts: &DescriptorOptions,
) -> Result<Signed, DescriptorError> {
    let (form, opts) = (opts.form, &opts.jws);
    let canonical = jcs::canonicalize(descriptor)?;
    let jws = match (form, keys) {
        (JwsForm::Compact, [one]) => jws::sign_compact_detached(&canonical, one, opts)?,
        (JwsForm::Compact, _) => {
            return Err(JwsError::Malformed(format!(
                "compact serialization takes exactly one key, {} given; use the JSON serialization",
                keys.len()
            ))
            .into())
        }
        (JwsForm::General, _) => {
            let v = jws::sign_general_detached(&canonical, keys, opts)?;
            let mut s =
                serde_json::to_string_pretty(&v).map_err(|e| JwsError::Malformed(e.to_string()))?;
            s.push('\n');
            s
        }
    };
    Ok(Signed { canonical, jws })
}

/// The result of checking a descriptor against its detached JWS.
#[derive(Clone, Debug, serde::Serialize)]
#[non_exhaustive]
#[must_use]
pub struct Report {
    /// The per-signature report.
    pub jws: JwsReport,
    /// The canonical bytes that were verified.
    #[serde(skip)]
    pub canonical: Vec<u8>,
}

impl Report {
    /// Whether the descriptor verified (see [`JwsReport::verified`]).
    pub fn verified(&self) -> bool {
        self.jws.verified()
    }

    /// Lowercase hex SHA-256 of the canonical bytes that were verified
    /// (computed on demand: most callers only need the verdict).
    pub fn canonical_sha256(&self) -> String {
        sha256_hex(&self.canonical)
    }
}

/// Canonicalize `descriptor` and verify the detached `jws` over it (draft-narvaneni-agent-uri-03
/// section 10.3) under `cx` and `policy`. `Ok` only when it verified;
/// otherwise [`DescriptorError::NotVerified`] carries the report. The one
/// public way is [`Verifier::verify_descriptor`](crate::verifier::Verifier::verify_descriptor).
pub(crate) fn verify(
    cx: &Context,
    policy: &JwsPolicy,
    descriptor: &[u8],
    jws_text: &str,
) -> Result<Report, DescriptorError> {
    if descriptor.len() > cx.limits.max_document_bytes {
        return Err(DescriptorError::TooLarge(descriptor.len()));
    }
    let canonical = jcs::canonicalize(descriptor)?;
    verify_canonical(cx, policy, canonical, jws_text)
}

/// [`verify`] when the canonical form is already at hand (computed once by
/// the caller with [`jcs`] from the same bytes).
pub(crate) fn verify_canonical(
    cx: &Context,
    policy: &JwsPolicy,
    canonical: Vec<u8>,
    jws_text: &str,
) -> Result<Report, DescriptorError> {
    match jws::verify(cx, policy, jws_text, Some(&canonical)) {
        Ok(report) => Ok(Report {
            jws: report,
            canonical,
        }),
        Err(JwsVerifyError::Jws(e)) => Err(e.into()),
        Err(JwsVerifyError::NotVerified(r)) => {
            Err(DescriptorError::NotVerified(Box::new(Report {
                jws: *r,
                canonical,
            })))
        }
    }
}

/// The identity a descriptor's key is pinned under ([`crate::pin`]): its
/// first non-empty string member of `id`, `url`, `name`, in that order;
/// `None` when it has none or is not strict I-JSON.
///
/// # Example
/// ```
/// use agentsig::descriptor::identity;
/// assert_eq!(identity(br#"{"name":"planner","url":"https://p.example/"}"#).as_deref(), Some("https://p.example/"));
/// assert_eq!(identity(br#"{"id":""}"#), None);
/// ```
pub fn identity(descriptor: &[u8]) -> Option<String> {
    let v = crate::json::parse_strict(descriptor).ok()?;
    ["id", "url", "name"].iter().find_map(|k| {
        v.get(*k)
            .and_then(serde_json::Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    })
}

/// Lowercase hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let d = ring::digest::digest(&ring::digest::SHA256, bytes);
    let mut s = String::with_capacity(64);
    for b in d.as_ref() {
        s.push_str(&format!("{b:02x}"));
    }
    s
}
