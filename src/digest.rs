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
    /// SHA-256 (FIPS 180-4), registry key `sha-256`: a 32-byte digest.
    Sha256,
    /// SHA-512 (FIPS 180-4), registry key `sha-512`: a 64-byte digest.
    Sha512,
}

/// Algorithms in the RFC 9530 registry marked "Deprecated": never integrity.
pub const DEPRECATED: [&str; 6] = ["md5", "sha", "unixsum", "unixcksum", "adler", "crc32c"];

impl DigestAlgorithm {
    /// Every active algorithm, in registry order (`sha-256`, then `sha-512`).
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

/// Why a digest field was refused (RFC 9530 sections 2 to 4).
///
/// In every variant `field` is the field's name as written in messages:
/// `"Content-Digest"`, `"Repr-Digest"`, `"Want-Content-Digest"` or
/// `"Want-Repr-Digest"`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DigestError {
    /// The message carries no line of the field, so there is nothing to check.
    #[error("the {field} field is absent")]
    Missing {
        /// The field's name.
        field: &'static str,
    },
    /// The field is not a Structured Field Dictionary (RFC 9530 sections 2
    /// and 3 define it as one; RFC 9651 section 3.2).
    #[error("the {field} field is not a valid Dictionary: {err}")]
    Malformed {
        /// The field's name.
        field: &'static str,
        /// The parse error.
        err: SfError,
    },
    /// The same algorithm key appears twice; refused rather than letting
    /// the last member silently win (RFC 9651 section 4.2.2).
    #[error("the {field} field repeats the key {q0}", q0 = crate::text::quoted(.key))]
    DuplicateKey {
        /// The field's name.
        field: &'static str,
        /// The repeated algorithm key.
        key: String,
    },
    /// An active algorithm's member is not a Byte Sequence (RFC 9530
    /// section 2: the value is a Byte Sequence).
    #[error("{field} member {alg} is not a Byte Sequence")]
    NotByteSequence {
        /// The field's name.
        field: &'static str,
        /// The algorithm key of the member, e.g. `sha-256`.
        alg: String,
    },
    /// An active algorithm's digest has the wrong length for it.
    #[error("{field} member {alg} has {got} bytes, expected {expected}")]
    WrongLength {
        /// The field's name.
        field: &'static str,
        /// The algorithm key of the member, e.g. `sha-256`.
        alg: String,
        /// Length of the decoded Byte Sequence, in bytes.
        got: usize,
        /// The algorithm's digest length, in bytes (32 or 64).
        expected: usize,
    },
    /// No member uses `sha-256` or `sha-512`: deprecated or unknown
    /// algorithms never count as integrity (RFC 9530 section 7.2).
    #[error("{field} holds no sha-256 or sha-512 member (found: {q0}); deprecated or unknown algorithms are not integrity", q0 = crate::text::quoted_list(.found))]
    NoActiveAlgorithm {
        /// The field's name.
        field: &'static str,
        /// The keys that were present, in field order.
        found: Vec<String>,
    },
    /// An active algorithm's digest differs from the digest of the bytes.
    #[error("{field} {alg} does not match the bytes received")]
    Mismatch {
        /// The field's name.
        field: &'static str,
        /// The algorithm key of the member that did not match.
        alg: String,
    },
    /// A signature covers only this member (`;key`, RFC 9421 section
    /// 2.1.2) and it is not an active algorithm that matched the bytes.
    #[error("{field} member {q} is the one the signature covers but it is not a sha-256 or sha-512 digest that matched", q = crate::text::quoted(.key))]
    CoveredMemberNotVerified {
        /// The field's name.
        field: &'static str,
        /// The `;key` parameter value: the covered member's key.
        key: String,
    },
    /// An algorithm name (e.g. from the command line) that is not `sha-256`
    /// or `sha-512`; holds the name as given.
    #[error("unsupported digest algorithm {q0} (use sha-256 or sha-512)", q0 = crate::text::quoted(.0))]
    UnsupportedAlgorithm(String),
    /// A `Want-*-Digest` field is not a Dictionary of Integers 0 to 10
    /// (RFC 9530 section 4).
    #[error("invalid {field} preference field: {detail}")]
    BadPreference {
        /// The field's name.
        field: &'static str,
        /// What is wrong, for a person to read.
        detail: String,
    },
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

/// `Content-Digest` value with sha-256 (the descriptor default): the
/// Dictionary `sha-256=:<base64 of SHA-256(data)>:` of RFC 9530 section 2.
/// `data` is the content as sent (after any Content-Encoding).
///
/// ```
/// use agentsig::digest::{content_digest, verify_content_digest, DigestAlgorithm};
///
/// let body = br#"{"hello": "world"}"#;
/// let value = content_digest(body);
/// // The sha-256 value of RFC 9530 Appendix "Sample Digest Values".
/// assert_eq!(value, "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:");
/// let check = verify_content_digest(&[value.as_bytes()], body)?;
/// assert_eq!(check.verified, [DigestAlgorithm::Sha256]);
/// # Ok::<(), agentsig::digest::DigestError>(())
/// ```
pub fn content_digest(data: &[u8]) -> String {
    field_value(data, &[DigestAlgorithm::Sha256])
}

/// What a successful check found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DigestCheck {
    /// Active algorithms that matched.
    pub verified: Vec<DigestAlgorithm>,
    /// Members ignored: deprecated or unknown algorithms.
    pub ignored: Vec<String>,
}

/// Verify a digest field against `data`. `field` names it in errors
/// (`"Content-Digest"` or `"Repr-Digest"`); `lines` are its field lines.
///
/// # Errors
/// [`DigestError`] when the field is not a valid RFC 9651 Dictionary of digests, names no supported
/// algorithm, or does not match the content (RFC 9530).
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

/// Verify `Content-Digest` lines against the content bytes (RFC 9530
/// section 2): `lines` are the field lines as received (joined with `, `),
/// `content` the content as sent, transfer codings removed. Passes only when
/// at least one `sha-256`/`sha-512` member is present and every such member
/// matches; deprecated and unknown members are listed in
/// [`DigestCheck::ignored`] and never count.
///
/// ```
/// use agentsig::digest::{verify_content_digest, DigestError};
///
/// let body = br#"{"hello": "world"}"#;
/// let good = b"sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:, md5=:Sd/dVLAcvNLSq16eXua5uQ==:";
/// let check = verify_content_digest(&[&good[..]], body)?;
/// assert_eq!(check.ignored, ["md5"]);
///
/// // A deprecated algorithm alone is never integrity.
/// let r = verify_content_digest(&[&b"md5=:Sd/dVLAcvNLSq16eXua5uQ==:"[..]], body);
/// assert!(matches!(r, Err(DigestError::NoActiveAlgorithm { .. })));
/// // Other bytes do not match.
/// let r = verify_content_digest(&[&good[..]], b"tampered");
/// assert!(matches!(r, Err(DigestError::Mismatch { .. })));
/// # Ok::<(), DigestError>(())
/// ```
///
/// # Errors
/// [`DigestError`] when the field is not a valid RFC 9651 Dictionary of digests, names no supported
/// algorithm, or does not match the content (RFC 9530).
pub fn verify_content_digest(lines: &[&[u8]], content: &[u8]) -> Result<DigestCheck, DigestError> {
    verify_field("Content-Digest", lines, content)
}

/// Verify `Repr-Digest` lines against the selected representation bytes.
///
/// # Errors
/// [`DigestError`] when the field is not a valid RFC 9651 Dictionary of digests, names no supported
/// algorithm, or does not match the content (RFC 9530).
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
    /// The algorithm key as received (an sf-key such as `sha-256`; may be
    /// deprecated or unknown).
    pub key: String,
    /// The preference, 0 to 10: 0 means "not acceptable", 10 "most preferred".
    pub weight: u8,
}

/// Parse a `Want-*-Digest` field (a Dictionary of Integers 0..=10).
///
/// # Errors
/// [`DigestError`] when the field is not a valid RFC 9651 Dictionary of digests, names no supported
/// algorithm, or does not match the content (RFC 9530).
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
