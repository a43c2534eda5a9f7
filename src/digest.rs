//! RFC 9530 Digest Fields: `Content-Digest`, `Repr-Digest` and the
//! `Want-Content-Digest` / `Want-Repr-Digest` preferences.
//!
//! # Security contract
//! * Only the "Active" algorithms of the RFC 9530 registry (section 7.2),
//!   `sha-256` and `sha-512`, count as integrity. The deprecated ones
//!   (`md5`, `sha`, `unixsum`, `unixcksum`, `adler`, `crc32c`) and unknown
//!   keys are reported but never satisfy a check (RFC 9530 section 5 and
//!   Appendix "Sample Digest Values").
//! * A field passes only if it holds at least one active algorithm and
//!   every active member matches the bytes (no "any member wins").
//! * Comparison is constant-time; values must be canonical padded base64
//!   Byte Sequences of the algorithm's exact length.
//! * `Content-Digest` is over the content as sent (after Content-Encoding,
//!   transfer codings removed); `Repr-Digest` over the selected
//!   representation (RFC 9530 sections 2 and 3). The caller supplies the bytes.

use crate::sfv::{self, BareItem, Entry, SfError};

/// An active (integrity-grade) digest algorithm (RFC 9530 section 7.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DigestAlgorithm {
    Sha256,
    Sha512,
}

/// Algorithms in the RFC 9530 registry marked "Deprecated": never integrity.
pub const DEPRECATED: [&str; 6] = ["md5", "sha", "unixsum", "unixcksum", "adler", "crc32c"];

impl DigestAlgorithm {
    pub const ALL: [DigestAlgorithm; 2] = [DigestAlgorithm::Sha256, DigestAlgorithm::Sha512];

    /// The registry key, e.g. `sha-256`.
    pub fn key(self) -> &'static str {
        match self {
            DigestAlgorithm::Sha256 => "sha-256",
            DigestAlgorithm::Sha512 => "sha-512",
        }
    }

    /// Parse a registry key (case-sensitive sf-key). Deprecated and unknown keys give `None`.
    pub fn from_key(k: &str) -> Option<DigestAlgorithm> {
        match k {
            "sha-256" => Some(DigestAlgorithm::Sha256),
            "sha-512" => Some(DigestAlgorithm::Sha512),
            _ => None,
        }
    }

    /// Digest length in bytes.
    pub fn output_len(self) -> usize {
        match self {
            DigestAlgorithm::Sha256 => 32,
            DigestAlgorithm::Sha512 => 64,
        }
    }

    /// Compute the digest of `data`.
    pub fn digest(self, data: &[u8]) -> Vec<u8> {
        let a = match self {
            DigestAlgorithm::Sha256 => &ring::digest::SHA256,
            DigestAlgorithm::Sha512 => &ring::digest::SHA512,
        };
        ring::digest::digest(a, data).as_ref().to_vec()
    }
}

impl std::str::FromStr for DigestAlgorithm {
    type Err = DigestError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DigestAlgorithm::from_key(s).ok_or_else(|| DigestError::UnsupportedAlgorithm(s.to_owned()))
    }
}

/// Why a digest field was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DigestError {
    #[error("the {field} field is absent")]
    Missing { field: &'static str },
    #[error("the {field} field is not a valid Dictionary: {err}")]
    Malformed { field: &'static str, err: SfError },
    #[error("the {field} field repeats the key {q0}", q0 = crate::text::quoted(.key))]
    DuplicateKey { field: &'static str, key: String },
    #[error("{field} member {alg} is not a Byte Sequence")]
    NotByteSequence { field: &'static str, alg: String },
    #[error("{field} member {alg} has {got} bytes, expected {expected}")]
    WrongLength {
        field: &'static str,
        alg: String,
        got: usize,
        expected: usize,
    },
    #[error("{field} holds no sha-256 or sha-512 member (found: {q0}); deprecated or unknown algorithms are not integrity", q0 = crate::text::quoted_list(.found))]
    NoActiveAlgorithm {
        field: &'static str,
        found: Vec<String>,
    },
    #[error("{field} {alg} does not match the bytes received")]
    Mismatch { field: &'static str, alg: String },
    /// A signature covers only this member (`;key`, RFC 9421 section
    /// 2.1.2) and it is not an active algorithm that matched the bytes.
    #[error("{field} member {q} is the one the signature covers but it is not a sha-256 or sha-512 digest that matched", q = crate::text::quoted(.key))]
    CoveredMemberNotVerified { field: &'static str, key: String },
    #[error("unsupported digest algorithm {q0} (use sha-256 or sha-512)", q0 = crate::text::quoted(.0))]
    UnsupportedAlgorithm(String),
    #[error("invalid {field} preference field: {detail}")]
    BadPreference { field: &'static str, detail: String },
}

/// Serialize a digest field value: `sha-256=:...:, sha-512=:...:` (RFC 9530 sections 2 and 3).
pub fn field_value(data: &[u8], algs: &[DigestAlgorithm]) -> String {
    let mut out = String::new();
    let mut seen: Vec<DigestAlgorithm> = Vec::new();
    for &a in algs {
        if seen.contains(&a) {
            continue;
        }
        seen.push(a);
        if !out.is_empty() {
            out.push_str(", ");
        }
        out.push_str(a.key());
        out.push('=');
        sfv::write_bare(&mut out, &BareItem::ByteSeq(a.digest(data)));
    }
    out
}

/// `Content-Digest` value with sha-256 (the descriptor default).
pub fn content_digest(data: &[u8]) -> String {
    field_value(data, &[DigestAlgorithm::Sha256])
}

/// What a successful check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DigestCheck {
    /// Active algorithms that matched.
    pub verified: Vec<DigestAlgorithm>,
    /// Members ignored: deprecated or unknown algorithms.
    pub ignored: Vec<String>,
}

/// Verify a digest field against `data`. `field` names it in errors
/// (`"Content-Digest"` or `"Repr-Digest"`); `lines` are its field lines.
pub fn verify_field(
    field: &'static str,
    lines: &[&[u8]],
    data: &[u8],
) -> Result<DigestCheck, DigestError> {
    if lines.is_empty() {
        return Err(DigestError::Missing { field });
    }
    let joined = lines.join(&b", "[..]);
    let dict =
        sfv::parse_dictionary_raw(&joined).map_err(|err| DigestError::Malformed { field, err })?;
    if let Some(k) = dict.first_duplicate() {
        return Err(DigestError::DuplicateKey {
            field,
            key: k.to_owned(),
        });
    }
    let mut verified = Vec::new();
    let mut ignored = Vec::new();
    for (k, v) in &dict.0 {
        let Some(alg) = DigestAlgorithm::from_key(k) else {
            ignored.push(k.clone());
            continue;
        };
        let bytes = match v {
            Entry::Item(it) => match &it.bare {
                BareItem::ByteSeq(b) => b,
                _ => {
                    return Err(DigestError::NotByteSequence {
                        field,
                        alg: k.clone(),
                    })
                }
            },
            Entry::InnerList(_) => {
                return Err(DigestError::NotByteSequence {
                    field,
                    alg: k.clone(),
                })
            }
        };
        if bytes.len() != alg.output_len() {
            return Err(DigestError::WrongLength {
                field,
                alg: k.clone(),
                got: bytes.len(),
                expected: alg.output_len(),
            });
        }
        if !ct_eq(bytes, &alg.digest(data)) {
            return Err(DigestError::Mismatch {
                field,
                alg: k.clone(),
            });
        }
        verified.push(alg);
    }
    if verified.is_empty() {
        return Err(DigestError::NoActiveAlgorithm {
            field,
            found: ignored,
        });
    }
    Ok(DigestCheck { verified, ignored })
}

/// Verify `Content-Digest` lines against the content bytes.
pub fn verify_content_digest(lines: &[&[u8]], content: &[u8]) -> Result<DigestCheck, DigestError> {
    verify_field("Content-Digest", lines, content)
}

/// Verify `Repr-Digest` lines against the selected representation bytes.
pub fn verify_repr_digest(lines: &[&[u8]], repr: &[u8]) -> Result<DigestCheck, DigestError> {
    verify_field("Repr-Digest", lines, repr)
}

/// Constant-time equality for equal-length secrets-independent data.
pub(crate) fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// One member of a `Want-Content-Digest` / `Want-Repr-Digest` field
/// (RFC 9530 section 4): an algorithm key and a preference 0..=10
/// (0 = not acceptable, 10 = most preferred).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preference {
    pub key: String,
    pub weight: u8,
}

/// Parse a `Want-*-Digest` field (a Dictionary of Integers 0..=10).
pub fn parse_want(field: &'static str, lines: &[&[u8]]) -> Result<Vec<Preference>, DigestError> {
    let joined = lines.join(&b", "[..]);
    let dict = sfv::parse_dictionary(&joined).map_err(|e| DigestError::BadPreference {
        field,
        detail: e.to_string(),
    })?;
    let mut out = Vec::new();
    for (k, v) in dict.0 {
        match v {
            Entry::Item(sfv::Item {
                bare: BareItem::Integer(n),
                ..
            }) if (0..=10).contains(&n) => out.push(Preference {
                key: k,
                weight: u8::try_from(n).unwrap_or(0),
            }),
            _ => {
                return Err(DigestError::BadPreference {
                    field,
                    detail: format!("{k}: the value must be an Integer 0..=10"),
                })
            }
        }
    }
    Ok(out)
}

/// The active algorithms a sender should use for a preference list, most
/// preferred first. Deprecated and unknown algorithms are never chosen, and
/// weight 0 means "not acceptable". When nothing usable is asked for, the
/// sender may still send sha-256 (RFC 9530 section 4: preferences are hints).
pub fn choose(prefs: &[Preference]) -> Vec<DigestAlgorithm> {
    let mut usable: Vec<(u8, DigestAlgorithm)> = prefs
        .iter()
        .filter(|p| p.weight > 0)
        .filter_map(|p| DigestAlgorithm::from_key(&p.key).map(|a| (p.weight, a)))
        .collect();
    usable.sort_by_key(|u| std::cmp::Reverse(u.0));
    let mut out = Vec::new();
    for (_, a) in usable {
        if !out.contains(&a) {
            out.push(a);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_strictness() {
        let body = br#"{"hello": "world"}"#;
        let v = field_value(body, &[DigestAlgorithm::Sha256, DigestAlgorithm::Sha512]);
        assert!(v.starts_with("sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:, sha-512=:"));
        assert!(verify_content_digest(&[v.as_bytes()], body).is_ok());
        assert!(matches!(
            verify_content_digest(&[b"md5=:Sd/dVLAcvNLSq16eXua5uQ==:"], body),
            Err(DigestError::NoActiveAlgorithm { .. })
        ));
        assert!(matches!(
            verify_content_digest(&[v.as_bytes()], b"other"),
            Err(DigestError::Mismatch { .. })
        ));
        let prefs = parse_want("Want-Repr-Digest", &[b"sha-512=3, sha-256=10, unixsum=0"]).unwrap();
        assert_eq!(
            choose(&prefs),
            vec![DigestAlgorithm::Sha256, DigestAlgorithm::Sha512]
        );
        assert!(parse_want("Want-Repr-Digest", &[b"sha-256=11"]).is_err());
    }
}
