//! Descriptor signing with a detached JWS over the RFC 8785 canonical form
//! (seed 001 section 10.3: "the signed payload MUST be the descriptor
//! canonicalized per JCS ... and the serialized JWS MUST be carried alongside
//! the descriptor rather than inlined").
//!
//! Whitespace and member order of the descriptor do not matter (that is what
//! JCS is for); any change of a value does.

use crate::jcs;
use crate::json::JsonError;
use crate::jws::{self, JwsError, JwsReport, SignOptions, VerifyPolicy};
use crate::keys::SigningKey;
use crate::trust::KeyResolver;

/// Why a descriptor could not be signed or checked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DescriptorError {
    #[error("descriptor is not strict I-JSON: {0}")]
    Json(#[from] JsonError),
    #[error(transparent)]
    Jws(#[from] JwsError),
}

/// Which JWS serialization to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum JwsForm {
    /// Compact with detached payload: `header..signature` (one key).
    #[default]
    Compact,
    /// JWS JSON general serialization without `payload` (one or more keys).
    General,
}

/// A signed descriptor: its canonical bytes and the detached JWS text.
#[derive(Clone, Debug)]
pub struct Signed {
    pub canonical: Vec<u8>,
    pub jws: String,
}

/// Canonicalize `descriptor` and sign it with every key.
pub fn sign(
    descriptor: &[u8],
    keys: &[&SigningKey],
    form: JwsForm,
    opts: &SignOptions,
) -> Result<Signed, DescriptorError> {
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
#[derive(Clone, Debug)]
pub struct Report {
    pub jws: JwsReport,
    /// The canonical bytes that were verified.
    pub canonical: Vec<u8>,
}

impl Report {
    pub fn verified(&self) -> bool {
        self.jws.verified()
    }

    /// Lowercase hex SHA-256 of the canonical bytes that were verified
    /// (computed on demand: most callers only need the verdict).
    pub fn canonical_sha256(&self) -> String {
        sha256_hex(&self.canonical)
    }
}

/// Canonicalize `descriptor` and verify the detached `jws` over it.
pub fn verify(
    descriptor: &[u8],
    jws_text: &str,
    resolver: &dyn KeyResolver,
    policy: &VerifyPolicy,
) -> Result<Report, DescriptorError> {
    let canonical = jcs::canonicalize(descriptor)?;
    let report = jws::verify(jws_text, Some(&canonical), resolver, policy)?;
    Ok(Report {
        jws: report,
        canonical,
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
