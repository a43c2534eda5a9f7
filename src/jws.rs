//! JSON Web Signature (RFC 7515) with detached content (Appendix F) and the
//! unencoded-payload option (RFC 7797), on agentsig's own keys.
//!
//! # Security contract
//! * The algorithm is taken from the protected `alg` header only to *select*:
//!   it must be in the caller's [`AllowList`](crate::alg::AllowList) and equal to the algorithm the
//!   trusted key is bound to. `none` does not exist here.
//! * Keys come only from a [`KeyResolver`](crate::trust::KeyResolver). `jku`, `x5u`, `jwk` and `x5c` are
//!   never used as key sources; by default a JWS that offers them is refused
//!   ([`KeyHeaderPolicy`]). `kid` is only a lookup key.
//! * `crit` (RFC 7515 4.1.11) must be a non-empty array of distinct names,
//!   each present in the protected header; the only extension understood is
//!   `b64` (RFC 7797). Anything else in `crit` fails verification.
//! * `b64` must be in the protected header and, when present, listed in
//!   `crit` (RFC 7797 section 6).
//! * Protected and unprotected header names must be disjoint (RFC 7515 7.2.1).
//! * Headers are strict I-JSON: a duplicate member name is an error.
//! * With several signatures, each gets its own verdict; the JWS verifies when
//!   at least one signature verifies with a trusted key and no signature by a
//!   trusted key fails ([`JwsReport::verified`]).

use crate::alg::Algorithm;
use crate::b64;
use crate::keys::{KeyError, SigningKey, VerifyError};
use crate::policy::Context;
pub use crate::policy::{JwsPolicy, KeyHeaderPolicy, MAX_JWS_BYTES};
use crate::trust::{KeyRequest, KeySource, ResolveError, SelectError};
use serde_json::{Map, Value};

/// Largest decoded protected header accepted.
pub const MAX_HEADER_BYTES: usize = 16 * 1024;
/// Most signatures accepted in one JWS JSON serialization.
pub const MAX_SIGNATURES: usize = 16;

/// Why a JWS could not be produced or read. Verification outcomes that are
/// not errors (a signature that does not match) are in [`SignatureReport`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JwsError {
    /// The JWS text is larger than the limit (its size in bytes).
    #[error("JWS of {0} bytes exceeds the {MAX_JWS_BYTES}-byte limit")]
    TooLarge(usize),
    /// The JWS is not a compact (RFC 7515 section 7.1) or JSON (section 7.2) serialization.
    #[error("malformed JWS: {0}")]
    Malformed(String),
    /// A part is not canonical unpadded base64url (RFC 7515 section 2).
    #[error("{part} is not canonical base64url: {detail}")]
    Base64 {
        /// Which part: `"protected header"`, `"payload"` or `"signature"`.
        part: &'static str,
        /// The decoder's message.
        detail: String,
    },
    /// The protected header is not a strict I-JSON object (RFC 7515 section 5.2 step 4).
    #[error("protected header is not valid I-JSON: {0}")]
    HeaderJson(String),
    /// The JWS carries a payload and it is not the detached content given.
    #[error("the JWS carries a payload that differs from the detached content")]
    PayloadDiffers,
    /// The key could not sign.
    #[error("signing failed: {0}")]
    Sign(#[from] KeyError),
    /// [`SignOptions::extra`] sets a header agentsig writes itself (`alg`, `kid`, `b64`, `crit`, `typ` or a key header).
    #[error("header parameter {q0} is reserved by agentsig and cannot be set as an extra", q0 = crate::text::quoted(.0))]
    ReservedHeader(String),
}

/// The key-bearing header parameters of RFC 7515 4.1.2 to 4.1.6.
pub const KEY_HEADERS: [&str; 5] = ["jku", "jwk", "x5u", "x5c", "x5t"];

/// Options for signing.
#[derive(Clone, Debug)]
pub struct SignOptions {
    /// The `typ` header; default `JOSE` (compact) or `JOSE+JSON` (JSON).
    pub typ: Option<String>,
    /// RFC 7797 `b64`; `true` (the default) is standard JWS.
    pub b64: bool,
    /// Extra protected header members (not `alg`, `kid`, `b64`, `crit`, or key headers).
    pub extra: Map<String, Value>,
}

impl Default for SignOptions {
    fn default() -> Self {
        SignOptions {
            typ: None,
            b64: true,
            extra: Map::new(),
        }
    }
}

/// A parsed protected header: the exact base64url text that was signed and
/// its members. Never re-serialized.
#[derive(Clone, Debug, PartialEq)]
pub struct ProtectedHeader {
    /// The base64url text as received (RFC 7515 section 7.1 `BASE64URL(UTF8(JWS Protected Header))`).
    pub encoded: String,
    /// The decoded header parameters (shared: the copies
    /// [`ProtectedHeader::decode`] gives of a header it decoded before
    /// share them).
    pub members: std::sync::Arc<Map<String, Value>>,
}

impl ProtectedHeader {
    /// Decode and strictly parse a protected header.
    ///
    /// # Errors
    /// [`JwsError`] when the JWS is malformed, too large, not canonical base64url, or the key
    /// cannot sign.
    pub fn decode(encoded: &str) -> Result<ProtectedHeader, JwsError> {
        // Many JWSs in a row carry the same protected header (every
        // manifest of a catalog signed with one key; a crawler's bulk
        // verification): the last header decoded on this thread is kept,
        // and the same text gives a copy of it. Decoding is a function of
        // the text alone, so the copy is what decoding would give.
        thread_local! {
            static LAST: std::cell::RefCell<Option<ProtectedHeader>> =
                const { std::cell::RefCell::new(None) };
        }
        let hit = LAST.with(|last| {
            last.try_borrow()
                .ok()
                .and_then(|l| l.as_ref().filter(|h| h.encoded == encoded).cloned())
        });
        if let Some(h) = hit {
            return Ok(h);
        }
        let h = Self::decode_uncached(encoded)?;
        LAST.with(|last| {
            if let Ok(mut l) = last.try_borrow_mut() {
                *l = Some(h.clone());
            }
        });
        Ok(h)
    }

    fn decode_uncached(encoded: &str) -> Result<ProtectedHeader, JwsError> {
        #[cfg(test)]
        tests::DECODED.with(|n| n.set(n.get() + 1));
        let bytes = b64::decode(encoded).map_err(|e| JwsError::Base64 {
            part: "protected header",
            detail: e.to_string(),
        })?;
        if bytes.len() > MAX_HEADER_BYTES {
            return Err(JwsError::Malformed(format!(
                "protected header of {} bytes exceeds {MAX_HEADER_BYTES}",
                bytes.len()
            )));
        }
        let v = crate::json::parse_strict_with(
            &bytes,
            &crate::json::JsonLimits {
                max_bytes: MAX_HEADER_BYTES,
                max_depth: 16,
            },
        )
        .map_err(|e| JwsError::HeaderJson(e.to_string()))?;
        match v {
            Value::Object(members) => Ok(ProtectedHeader {
                encoded: encoded.to_owned(),
                members: std::sync::Arc::new(members),
            }),
            _ => Err(JwsError::HeaderJson("not a JSON object".into())),
        }
    }

    /// The header parameter `name` when it is a JSON string.
    pub fn get_str(&self, name: &str) -> Option<&str> {
        crate::json::member(&self.members, name).and_then(Value::as_str)
    }
}

/// The verdict on one signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Verdict {
    /// Verified with a trusted key.
    Valid,
    /// A trusted key was selected and the signature does not verify with it.
    Invalid,
    /// Refused by policy before any cryptography (alg, crit, key headers, typ).
    Refused,
    /// No trusted key matches; nothing was verified.
    NoTrustedKey,
}

impl Verdict {
    /// What this verdict counts for under the one verdict rule
    /// ([`crate::policy::signatures_verified`]): an unknown signer and a
    /// policy refusal are not checked, a failed check is invalid.
    pub fn status(&self) -> crate::policy::SignatureStatus {
        use crate::policy::SignatureStatus;
        match self {
            Verdict::Valid => SignatureStatus::Verified,
            Verdict::Invalid => SignatureStatus::Invalid,
            Verdict::Refused | Verdict::NoTrustedKey => SignatureStatus::NotChecked,
        }
    }

    /// The stable name used in reports.
    pub fn as_str(&self) -> &'static str {
        match self {
            Verdict::Valid => "valid",
            Verdict::Invalid => "invalid",
            Verdict::Refused => "refused",
            Verdict::NoTrustedKey => "no-trusted-key",
        }
    }
}

/// Why a signature was not accepted; [`Reason::code`] is stable.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reason {
    /// The protected header has no `alg` (RFC 7515 section 4.1.1).
    AlgMissing,
    /// `alg` is `"none"`, never accepted (RFC 8725 section 3.1).
    AlgNone,
    /// `alg` names an algorithm agentsig does not implement (the value).
    AlgUnknown(String),
    /// `alg` is supported but not in the verifier's allow-list.
    AlgNotAllowed(Algorithm),
    /// `alg` is not the algorithm the selected trusted key is bound to.
    AlgNotKeys {
        /// The `alg` of the header.
        header: Algorithm,
        /// The trusted key's algorithm.
        key: Algorithm,
    },
    /// `crit` is not a non-empty array of distinct header names that are
    /// present (RFC 7515 section 4.1.11).
    CritMalformed(String),
    /// `crit` lists an extension agentsig does not understand (the name).
    CritUnknown(String),
    /// `b64` is malformed or not listed in `crit` (RFC 7797 section 3).
    B64Malformed(String),
    /// The header offers a key or key location (`jku`, `jwk`, `x5u`, `x5c`,
    /// `x5t`; the name) and the policy refuses it (RFC 8725 section 3.10).
    KeyHeaderOffered(String),
    /// A parameter is in both the protected and the unprotected header
    /// (RFC 7515 section 7.2.1).
    HeadersNotDisjoint(String),
    /// `typ` is not one of [`JwsPolicy::expected_typ`] (the `typ` received).
    TypMismatch(Option<String>),
    /// `kid` is not an acceptable key id (the value).
    BadKid(String),
    /// The key resolver failed to discover keys (its message).
    Discovery(String),
    /// No trusted key matches the `kid` (the `kid` received, if any).
    NoKeyForKid(Option<String>),
    /// No trusted key has the `kid` received (the first), but it is the
    /// RFC 7638 thumbprint of a trusted key published with another kid
    /// (the second).
    KidIsThumbprintOf(String, String),
    /// The signature does not verify with the trusted key.
    Signature(VerifyError),
    /// Strict low-S mode: the ECDSA signature is not in low-S form.
    HighS,
}

impl serde::Serialize for Reason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Reason", 2)?;
        st.serialize_field("code", self.code())?;
        st.serialize_field("message", &self.to_string())?;
        st.end()
    }
}

impl Reason {
    /// A stable, machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Reason::AlgMissing => "alg-missing",
            Reason::AlgNone => "alg-none",
            Reason::AlgUnknown(_) => "alg-unknown",
            Reason::AlgNotAllowed(_) => "alg-not-allowed",
            Reason::AlgNotKeys { .. } => "alg-not-keys",
            Reason::CritMalformed(_) => "crit-malformed",
            Reason::CritUnknown(_) => "crit-unknown",
            Reason::B64Malformed(_) => "b64-malformed",
            Reason::KeyHeaderOffered(_) => "key-header-offered",
            Reason::HeadersNotDisjoint(_) => "headers-not-disjoint",
            Reason::TypMismatch(_) => "typ-mismatch",
            Reason::BadKid(_) => "bad-kid",
            Reason::Discovery(_) => "discovery-failed",
            Reason::NoKeyForKid(_) | Reason::KidIsThumbprintOf(..) => "no-trusted-key",
            Reason::Signature(_) => "signature-mismatch",
            Reason::HighS => "ecdsa-high-s",
        }
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reason::AlgMissing => f.write_str("protected header has no alg"),
            Reason::AlgNone => f.write_str("alg \"none\" is never accepted (RFC 8725 3.1)"),
            Reason::AlgUnknown(a) => write!(f, "alg {a_q} is not supported", a_q = crate::text::quoted(a)),
            Reason::AlgNotAllowed(a) => write!(f, "alg {} is not in the allow-list", a.jose_name()),
            Reason::AlgNotKeys { header, key } => write!(
                f,
                "header alg {} is not the trusted key's algorithm {}",
                header.jose_name(),
                key.jose_name()
            ),
            Reason::CritMalformed(d) => write!(f, "crit is malformed: {d}"),
            Reason::CritUnknown(c) => write!(f, "crit lists {c_q}, which agentsig does not understand", c_q = crate::text::quoted(c)),
            Reason::B64Malformed(d) => write!(f, "b64 is malformed: {d}"),
            Reason::KeyHeaderOffered(h) => write!(
                f,
                "header offers {} as a key source; keys come only from the verifier's trusted set (RFC 8725 3.10)",
                crate::text::quoted(h)
            ),
            Reason::HeadersNotDisjoint(h) => write!(f, "{h_q} is in both the protected and unprotected header", h_q = crate::text::quoted(h)),
            Reason::TypMismatch(t) => write!(f, "typ {t_q} is not an accepted type", t_q = crate::text::quoted_opt(t.as_deref())),
            Reason::BadKid(k) => write!(f, "kid {k_q} is not acceptable", k_q = crate::text::quoted(k)),
            // The resolver's message already says "key discovery failed".
            Reason::Discovery(d) => f.write_str(d),
            Reason::NoKeyForKid(k) => f.write_str(&crate::text::no_trusted_key(k.as_deref())),
            Reason::KidIsThumbprintOf(k, p) => {
                f.write_str(&crate::text::no_trusted_key_for(Some(k), Some(p)))
            }
            Reason::Signature(e) => write!(f, "{e}"),
            Reason::HighS => f.write_str("the ECDSA signature is not in low-S form (strict low-S policy)"),
        }
    }
}

/// The outcome for one signature.
#[derive(Clone, Debug, serde::Serialize)]
#[non_exhaustive]
pub struct SignatureReport {
    /// The `alg` header as received.
    pub alg: Option<String>,
    /// The `kid` header as received.
    pub kid: Option<String>,
    /// The `typ` header as received.
    pub typ: Option<String>,
    /// The verdict.
    pub verdict: Verdict,
    /// Why it is not valid.
    pub reason: Option<Reason>,
    /// The key that verified (or failed to verify) it.
    pub key_source: Option<KeySource>,
    /// RFC 7638 thumbprint of that key.
    pub key_thumbprint: Option<String>,
}

impl SignatureReport {
    /// Why the signature is not valid, as a message that says what to do:
    /// the reason, and for a signature that does not match, the thumbprint
    /// (RFC 7638) of the key tried and the `kid` the JWS names, since the
    /// usual cause is a key that is not the signer's (or the content
    /// changed after signing). `None` for a valid signature.
    pub fn explain(&self) -> Option<String> {
        let reason = self.reason.as_ref()?;
        let mut m = reason.to_string();
        if let (Reason::Signature(crate::keys::VerifyError::Mismatch), Some(tp)) =
            (reason, &self.key_thumbprint)
        {
            m.push_str(&format!(
                ": the key tried has thumbprint {tp} and the JWS names kid {}; if the content is unchanged since signing, that key is not the signer's: compare it with the signer's published JWK Set",
                crate::text::quoted_opt(self.kid.as_deref())
            ));
        }
        Some(m)
    }
}

/// The outcome for a whole JWS.
#[derive(Clone, Debug, serde::Serialize)]
#[non_exhaustive]
#[must_use]
pub struct JwsReport {
    /// One entry per signature, in order.
    pub signatures: Vec<SignatureReport>,
    /// The payload bytes that were verified (the detached content or the
    /// attached payload).
    #[serde(skip)]
    pub payload: Vec<u8>,
}

/// Why a JWS did not verify: the JWS could not be read, or it was read
/// and nothing verified (the report says why, per signature).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum JwsVerifyError {
    /// The JWS is malformed or too large.
    #[error(transparent)]
    Jws(#[from] JwsError),
    /// No signature verified with a trusted key, or one made with a trusted
    /// key is invalid.
    #[error("{}", not_verified_text(.0))]
    NotVerified(Box<JwsReport>),
}

fn not_verified_text(r: &JwsReport) -> String {
    match r.signatures.iter().find(|s| s.verdict != Verdict::Valid) {
        Some(s) => match &s.reason {
            Some(reason) => format!("not verified: {reason}"),
            None => format!("not verified: {}", s.verdict.as_str()),
        },
        None => "not verified: the JWS has no signature".into(),
    }
}

impl JwsVerifyError {
    /// The per-signature report, when the JWS could be read.
    pub fn report(&self) -> Option<&JwsReport> {
        match self {
            JwsVerifyError::NotVerified(r) => Some(r),
            JwsVerifyError::Jws(_) => None,
        }
    }
}

impl JwsReport {
    /// The RFC 7638 thumbprints of the keys whose signatures verified, in
    /// signature order (what a pin store checks, [`crate::pin::Pins::decide`]).
    pub fn valid_thumbprints(&self) -> impl Iterator<Item = &str> {
        self.signatures
            .iter()
            .filter(|s| s.verdict == Verdict::Valid)
            .filter_map(|s| s.key_thumbprint.as_deref())
    }
    /// At least one signature is [`Verdict::Valid`] and none is
    /// [`Verdict::Invalid`]: the one rule of
    /// [`crate::policy::signatures_verified`]. Nothing verified is never a
    /// success.
    pub fn verified(&self) -> bool {
        crate::policy::signatures_verified(self.signatures.iter().map(|s| s.verdict.status()))
    }

    /// The first valid signature, if any.
    pub fn valid_signature(&self) -> Option<&SignatureReport> {
        self.signatures.iter().find(|s| s.verdict == Verdict::Valid)
    }
}

/// One signature of a parsed JWS.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ParsedSignature {
    /// The protected header, as signed.
    pub protected: ProtectedHeader,
    /// The unprotected header (JSON serializations only).
    pub unprotected: Option<Map<String, Value>>,
    /// The signature bytes.
    pub signature: Vec<u8>,
}

impl ParsedSignature {
    /// What this signature claims about its key, for a resolver: `kid`,
    /// a supported `alg`, and `jku` as a hint only (protected header only).
    pub fn key_request(&self) -> KeyRequest {
        let mut r = KeyRequest::new().maybe_kid(self.protected.get_str("kid"));
        if let Some(a) = self
            .protected
            .get_str("alg")
            .and_then(Algorithm::from_jose_name)
        {
            r = r.alg(a);
        }
        if let Some(j) = self.protected.get_str("jku") {
            r = r.jku(j);
        }
        r
    }
}

/// A parsed JWS in any serialization.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ParsedJws {
    /// The payload as it appears in the serialization (base64url text, or
    /// raw text for b64=false JSON), or `None` when detached.
    pub payload: Option<String>,
    /// The signatures, in order.
    pub signatures: Vec<ParsedSignature>,
}

impl ParsedJws {
    /// The key requests of every signature, in order: the parse-first step
    /// for a caller that fetches keys asynchronously before verifying.
    pub fn key_requests(&self) -> Vec<KeyRequest> {
        self.signatures
            .iter()
            .map(ParsedSignature::key_request)
            .collect()
    }

    /// Parse compact (`h.p.s`, `h..s` when detached), flattened or general JSON.
    ///
    /// # Errors
    /// [`JwsError`] when the JWS is malformed, too large, not canonical base64url, or the key
    /// cannot sign.
    pub fn parse(text: &str) -> Result<ParsedJws, JwsError> {
        if text.len() > MAX_JWS_BYTES {
            return Err(JwsError::TooLarge(text.len()));
        }
        let t = text.trim();
        if t.starts_with('{') {
            parse_json(t)
        } else {
            parse_compact(t)
        }
    }
}

fn parse_compact(t: &str) -> Result<ParsedJws, JwsError> {
    let mut parts = t.split('.');
    let (Some(header), Some(payload), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(JwsError::Malformed(format!(
            "compact JWS has {} parts, not 3 (JWE is not supported)",
            t.split('.').count()
        )));
    };
    let protected = ProtectedHeader::decode(header)?;
    let signature = b64::decode(signature).map_err(|e| JwsError::Base64 {
        part: "signature",
        detail: e.to_string(),
    })?;
    Ok(ParsedJws {
        payload: (!payload.is_empty()).then(|| payload.to_owned()),
        signatures: vec![ParsedSignature {
            protected,
            unprotected: None,
            signature,
        }],
    })
}

fn parse_json(t: &str) -> Result<ParsedJws, JwsError> {
    let v = crate::json::parse_strict_with(
        t.as_bytes(),
        &crate::json::JsonLimits {
            max_bytes: MAX_JWS_BYTES,
            max_depth: 16,
        },
    )
    .map_err(|e| JwsError::Malformed(format!("JWS JSON: {e}")))?;
    let obj = v
        .as_object()
        .ok_or_else(|| JwsError::Malformed("JWS JSON must be an object".into()))?;
    let payload = match obj.get("payload") {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(JwsError::Malformed("payload must be a string".into())),
    };
    let entries: Vec<&Map<String, Value>> = match (obj.get("signatures"), obj.get("signature")) {
        (Some(_), Some(_)) => {
            return Err(JwsError::Malformed(
                "both \"signatures\" and \"signature\": neither general nor flattened".into(),
            ))
        }
        (Some(Value::Array(arr)), None) => {
            if arr.is_empty() {
                return Err(JwsError::Malformed("\"signatures\" is empty".into()));
            }
            if arr.len() > MAX_SIGNATURES {
                return Err(JwsError::Malformed(format!(
                    "{} signatures exceed the limit of {MAX_SIGNATURES}",
                    arr.len()
                )));
            }
            if obj.contains_key("protected") || obj.contains_key("header") {
                return Err(JwsError::Malformed(
                    "general JSON serialization with top-level protected/header".into(),
                ));
            }
            arr.iter()
                .map(|e| {
                    e.as_object().ok_or_else(|| {
                        JwsError::Malformed("a signatures entry is not an object".into())
                    })
                })
                .collect::<Result<_, _>>()?
        }
        (Some(_), None) => {
            return Err(JwsError::Malformed(
                "\"signatures\" must be an array".into(),
            ))
        }
        (None, Some(_)) => vec![obj],
        (None, None) => return Err(JwsError::Malformed("no signature".into())),
    };
    let mut signatures = Vec::new();
    for e in entries {
        let protected = match e.get("protected") {
            Some(Value::String(s)) => ProtectedHeader::decode(s)?,
            Some(_) => return Err(JwsError::Malformed("protected must be a string".into())),
            None => {
                return Err(JwsError::Malformed(
                    "a signature without a protected header (alg must be integrity-protected)"
                        .into(),
                ))
            }
        };
        let unprotected = match e.get("header") {
            None => None,
            Some(Value::Object(m)) => Some(m.clone()),
            Some(_) => return Err(JwsError::Malformed("header must be an object".into())),
        };
        let signature = match e.get("signature") {
            Some(Value::String(s)) => b64::decode(s).map_err(|err| JwsError::Base64 {
                part: "signature",
                detail: err.to_string(),
            })?,
            _ => return Err(JwsError::Malformed("signature must be a string".into())),
        };
        signatures.push(ParsedSignature {
            protected,
            unprotected,
            signature,
        });
    }
    Ok(ParsedJws {
        payload,
        signatures,
    })
}

/// Header checks that need no key. Returns the algorithm and b64 flag.
fn check_header(
    sig: &ParsedSignature,
    v: &Context,
    policy: &JwsPolicy,
) -> Result<(Algorithm, bool), Reason> {
    let h = &sig.protected.members;
    if let Some(u) = &sig.unprotected {
        if let Some(dup) = u.keys().find(|k| h.contains_key(*k)) {
            return Err(Reason::HeadersNotDisjoint(dup.clone()));
        }
        for must_protect in ["alg", "crit", "b64"] {
            if u.contains_key(must_protect) {
                return Err(Reason::CritMalformed(format!(
                    "{} must be in the protected header",
                    crate::text::quoted(must_protect)
                )));
            }
        }
    }
    let alg_name = match crate::json::member(h, "alg") {
        Some(Value::String(a)) => a.as_str(),
        Some(_) => return Err(Reason::AlgUnknown("(not a string)".into())),
        None => return Err(Reason::AlgMissing),
    };
    if alg_name.eq_ignore_ascii_case("none") {
        return Err(Reason::AlgNone);
    }
    let alg = Algorithm::from_jose_name(alg_name)
        .ok_or_else(|| Reason::AlgUnknown(alg_name.to_owned()))?;
    if !v.algorithms.contains(alg) {
        return Err(Reason::AlgNotAllowed(alg));
    }
    // crit (RFC 7515 4.1.11)
    let mut crit_b64 = false;
    if let Some(c) = crate::json::member(h, "crit") {
        let arr = c
            .as_array()
            .ok_or_else(|| Reason::CritMalformed("not an array".into()))?;
        if arr.is_empty() {
            return Err(Reason::CritMalformed("empty array".into()));
        }
        let mut seen: Vec<&str> = Vec::new();
        for item in arr {
            let name = item
                .as_str()
                .ok_or_else(|| Reason::CritMalformed("member is not a string".into()))?;
            if seen.contains(&name) {
                return Err(Reason::CritMalformed(format!(
                    "{name_q} listed twice",
                    name_q = crate::text::quoted(name)
                )));
            }
            seen.push(name);
            const REGISTERED: [&str; 11] = [
                "alg", "jku", "jwk", "kid", "x5u", "x5c", "x5t", "x5t#S256", "typ", "cty", "crit",
            ];
            if REGISTERED.contains(&name) {
                return Err(Reason::CritMalformed(format!(
                    "{} is defined by RFC 7515 and must not be in crit",
                    crate::text::quoted(name)
                )));
            }
            if crate::json::member(h, name).is_none() {
                return Err(Reason::CritMalformed(format!(
                    "{} is not in the protected header",
                    crate::text::quoted(name)
                )));
            }
            if name == "b64" {
                crit_b64 = true;
            } else {
                return Err(Reason::CritUnknown(name.to_owned()));
            }
        }
    }
    let b64 = match crate::json::member(h, "b64") {
        None => true,
        Some(Value::Bool(b)) => {
            if !crit_b64 {
                return Err(Reason::B64Malformed(
                    "b64 must be listed in crit (RFC 7797 6)".into(),
                ));
            }
            *b
        }
        Some(_) => return Err(Reason::B64Malformed("not a boolean".into())),
    };
    if v.key_headers == KeyHeaderPolicy::Refuse {
        let unprot = sig.unprotected.as_ref();
        for kh in KEY_HEADERS.iter().chain(["x5t#S256"].iter()) {
            if crate::json::member(h, kh).is_some()
                || unprot.is_some_and(|u| crate::json::member(u, kh).is_some())
            {
                return Err(Reason::KeyHeaderOffered((*kh).to_owned()));
            }
        }
    }
    if let Some(accepted) = &policy.expected_typ {
        // Only an integrity-protected `typ` can meet a required type: an
        // unprotected one is attacker-controlled (RFC 8725 section 3.11
        // relies on explicit typing being signed).
        let typ = sig.protected.get_str("typ");
        if !typ.is_some_and(|t| accepted.iter().any(|a| typ_eq(a, t))) {
            return Err(Reason::TypMismatch(typ.map(str::to_owned)));
        }
    }
    Ok((alg, b64))
}

/// RFC 7515 4.1.9: media types compare case-insensitively, and
/// `application/` may be omitted.
pub fn typ_eq(a: &str, b: &str) -> bool {
    fn norm(s: &str) -> String {
        let l = s.to_ascii_lowercase();
        match l.strip_prefix("application/") {
            Some(r) if !r.contains('/') => r.to_owned(),
            _ => l,
        }
    }
    norm(a) == norm(b)
}

fn header_str<'a>(sig: &'a ParsedSignature, name: &str) -> Option<&'a str> {
    sig.protected.get_str(name).or_else(|| {
        sig.unprotected
            .as_ref()
            .and_then(|u| u.get(name))
            .and_then(Value::as_str)
    })
}

/// The JWS Signing Input (RFC 7515 5.1 step 5; RFC 7797 section 3):
/// `protected || '.' || part`, where `part` is the base64url payload
/// (b64=true) or the payload itself (b64=false).
fn signing_input(protected_b64: &str, part: &[u8]) -> Vec<u8> {
    let mut si = Vec::with_capacity(protected_b64.len() + 1 + part.len());
    si.extend_from_slice(protected_b64.as_bytes());
    si.push(b'.');
    si.extend_from_slice(part);
    si
}

/// The payload a signature covers and its form in the signing input, each
/// computed at most once per JWS however many signatures it has. An attached
/// base64url payload is decoded once and its received text (canonical, since
/// decoding is strict) is used in the signing input as is, never re-encoded.
struct Payload<'a> {
    attached: Option<&'a str>,
    detached: Option<&'a [u8]>,
    decoded: std::cell::OnceCell<Vec<u8>>,
    encoded: std::cell::OnceCell<String>,
}

impl<'a> Payload<'a> {
    fn new(parsed: &'a ParsedJws, detached: Option<&'a [u8]>) -> Payload<'a> {
        Payload {
            attached: parsed.payload.as_deref(),
            detached,
            decoded: std::cell::OnceCell::new(),
            encoded: std::cell::OnceCell::new(),
        }
    }

    /// `(payload bytes, signing input)` for the one signature of a JWS:
    /// detached content is base64url-encoded straight into the signing
    /// input (one buffer, no intermediate copy of the encoded payload).
    fn signing_input_once(
        &self,
        protected_b64: &str,
        b64: bool,
    ) -> Result<(&[u8], Vec<u8>), JwsError> {
        match (self.attached, self.detached) {
            (None, Some(d)) if b64 => {
                let mut si =
                    String::with_capacity(protected_b64.len() + 1 + d.len().div_ceil(3) * 4);
                si.push_str(protected_b64);
                si.push('.');
                // Unpadded base64url (RFC 7515 section 2).
                crate::b64::encode_into(d, &mut si);
                Ok((d, si.into_bytes()))
            }
            _ => {
                let (payload, part) = self.get(b64)?;
                Ok((payload, signing_input(protected_b64, part)))
            }
        }
    }

    /// `(payload bytes, signing-input part)` for a signature with this `b64`.
    fn get(&self, b64: bool) -> Result<(&[u8], &[u8]), JwsError> {
        match (self.attached, self.detached) {
            (Some(p), det) => {
                let bytes: &[u8] = if !b64 {
                    p.as_bytes()
                } else if let Some(v) = self.decoded.get() {
                    v
                } else {
                    let v = b64::decode(p).map_err(|e| JwsError::Base64 {
                        part: "payload",
                        detail: e.to_string(),
                    })?;
                    self.decoded.get_or_init(|| v)
                };
                if det.is_some_and(|d| d != bytes) {
                    return Err(JwsError::PayloadDiffers);
                }
                Ok((bytes, p.as_bytes()))
            }
            (None, Some(d)) if b64 => {
                Ok((d, self.encoded.get_or_init(|| b64::encode(d)).as_bytes()))
            }
            (None, Some(d)) => Ok((d, d)),
            (None, None) => Err(JwsError::Malformed(
                "detached JWS and no content given to verify it against".into(),
            )),
        }
    }
}

/// Verify a JWS (any serialization) under `cx` (keys, algorithms, limits)
/// and `policy`; the one public way is
/// [`Verifier::verify_jws`](crate::verifier::Verifier::verify_jws).
///
/// `detached` is the content for a detached JWS. When the JWS also carries a
/// payload, it must equal the detached content. Without `detached`, the JWS
/// must carry its payload.
///
/// `Ok` only when [`JwsReport::verified`]: at least one signature verified
/// with a trusted key and none made with a trusted key is invalid. Otherwise
/// [`JwsVerifyError::NotVerified`] carries the per-signature report.
pub(crate) fn verify(
    v: &Context,
    policy: &JwsPolicy,
    jws: &str,
    detached: Option<&[u8]>,
) -> Result<JwsReport, JwsVerifyError> {
    verify_as(v, None, policy, jws, detached)
}

/// [`verify`] with `issuer` as the issuer of every key request (a
/// catalog's Trust Manifest, whose keys are its identity's: a
/// [`crate::trust::PerIssuer`] answers only with that identity's keys).
pub(crate) fn verify_as(
    v: &Context,
    issuer: Option<&str>,
    policy: &JwsPolicy,
    jws: &str,
    detached: Option<&[u8]>,
) -> Result<JwsReport, JwsVerifyError> {
    if jws.len() > v.limits.max_jws_bytes {
        return Err(JwsError::TooLarge(jws.len()).into());
    }
    let parsed = ParsedJws::parse(jws)?;
    let report = report_parsed(v, policy, &parsed, detached, issuer)?;
    if report.verified() {
        Ok(report)
    } else {
        Err(JwsVerifyError::NotVerified(Box::new(report)))
    }
}

/// Check every signature and report each (the JWT verifier reads the
/// report of its one signature).
pub(crate) fn report_parsed(
    v: &Context,
    policy: &JwsPolicy,
    parsed: &ParsedJws,
    detached: Option<&[u8]>,
    issuer: Option<&str>,
) -> Result<JwsReport, JwsError> {
    let mut reports = Vec::new();
    let mut payload_out: Option<Vec<u8>> = None;
    let payload_forms = Payload::new(parsed, detached);
    for sig in &parsed.signatures {
        let kid = header_str(sig, "kid").map(str::to_owned);
        let mut report = SignatureReport {
            alg: header_str(sig, "alg").map(str::to_owned),
            kid: kid.clone(),
            typ: header_str(sig, "typ").map(str::to_owned),
            verdict: Verdict::Refused,
            reason: None,
            key_source: None,
            key_thumbprint: None,
        };
        let (alg, b64) = match check_header(sig, v, policy) {
            Ok(x) => x,
            Err(r) => {
                report.reason = Some(r);
                reports.push(report);
                continue;
            }
        };
        // The payload this signature covers, and the signing input.
        let (payload, si) = if parsed.signatures.len() == 1 {
            payload_forms.signing_input_once(&sig.protected.encoded, b64)?
        } else {
            let (payload, part) = payload_forms.get(b64)?;
            (payload, signing_input(&sig.protected.encoded, part))
        };
        let mut req = KeyRequest::new()
            .maybe_kid(kid.as_deref())
            .alg(alg)
            .maybe_issuer(issuer);
        // A protected `jku` is passed on as a hint only (as in
        // `ParsedSignature::key_request`): a resolver may use it to choose
        // among key sets it trusts, never to fetch what the signer names.
        if let Some(j) = sig.protected.get_str("jku") {
            req = req.jku(j);
        }
        match crate::trust::select_and_verify(
            &*v.keys,
            &v.algorithms,
            &req,
            &si,
            &sig.signature,
            v.low_s,
        ) {
            Ok(ev) => {
                report.verdict = Verdict::Valid;
                report.key_source = Some(ev.source);
                report.key_thumbprint = Some(ev.thumbprint);
                payload_out.get_or_insert_with(|| payload.to_vec());
            }
            Err(e) => {
                if let Some(ev) = e.evidence() {
                    report.key_source = Some(ev.source.clone());
                    report.key_thumbprint = Some(ev.thumbprint.clone());
                }
                let (verdict, reason) = match e {
                    SelectError::Resolve(ResolveError::BadKid(k)) => {
                        (Verdict::Refused, Reason::BadKid(k))
                    }
                    SelectError::Resolve(e) => {
                        (Verdict::NoTrustedKey, Reason::Discovery(e.to_string()))
                    }
                    SelectError::NoTrustedKey {
                        kid: Some(kid),
                        published_as: Some(p),
                    } => (Verdict::NoTrustedKey, Reason::KidIsThumbprintOf(kid, p)),
                    SelectError::NoTrustedKey { kid, .. } => {
                        (Verdict::NoTrustedKey, Reason::NoKeyForKid(kid))
                    }
                    SelectError::AlgMismatch { claimed, key, .. } => (
                        Verdict::Refused,
                        Reason::AlgNotKeys {
                            header: claimed,
                            key,
                        },
                    ),
                    SelectError::BadSignature { error, .. } => {
                        (Verdict::Invalid, Reason::Signature(error))
                    }
                    SelectError::HighS => (Verdict::Invalid, Reason::HighS),
                };
                report.verdict = verdict;
                report.reason = Some(reason);
            }
        }
        reports.push(report);
    }
    let payload = payload_out
        .or_else(|| detached.map(<[u8]>::to_vec))
        .unwrap_or_default();
    Ok(JwsReport {
        signatures: reports,
        payload,
    })
}

fn build_protected(
    key: &SigningKey,
    opts: &SignOptions,
    default_typ: &str,
) -> Result<String, JwsError> {
    let mut h = Map::new();
    h.insert(
        "alg".into(),
        Value::String(key.algorithm().jose_name().into()),
    );
    h.insert("kid".into(), Value::String(key.kid_or_thumbprint()));
    h.insert(
        "typ".into(),
        Value::String(opts.typ.clone().unwrap_or_else(|| default_typ.into())),
    );
    if !opts.b64 {
        h.insert("b64".into(), Value::Bool(false));
        h.insert(
            "crit".into(),
            Value::Array(vec![Value::String("b64".into())]),
        );
    }
    for (k, v) in &opts.extra {
        if matches!(k.as_str(), "alg" | "kid" | "b64" | "crit" | "typ")
            || KEY_HEADERS.contains(&k.as_str())
            || k == "x5t#S256"
        {
            return Err(JwsError::ReservedHeader(k.clone()));
        }
        h.insert(k.clone(), v.clone());
    }
    let json =
        serde_json::to_vec(&Value::Object(h)).map_err(|e| JwsError::Malformed(e.to_string()))?;
    Ok(b64::encode(&json))
}

/// The payload's part of the signing input: base64url (b64=true) or the
/// bytes themselves (RFC 7797 b64=false).
fn payload_part(payload: &[u8], b64: bool) -> std::borrow::Cow<'_, [u8]> {
    if b64 {
        std::borrow::Cow::Owned(b64::encode(payload).into_bytes())
    } else {
        std::borrow::Cow::Borrowed(payload)
    }
}

/// Sign `payload` and return a compact JWS with detached content
/// (`header..signature`, RFC 7515 Appendix F).
///
/// # Example
///
/// ```
/// use agentsig::jws::{self, SignOptions};
/// use agentsig::trust::{KeySource, StaticKeys};
/// use agentsig::verifier::Verifier;
/// use agentsig::{Algorithm, SigningKey};
///
/// let key = SigningKey::generate(Algorithm::Ed25519)?;
/// let content = br#"{"name":"planner"}"#;
/// let token = jws::sign_compact_detached(content, &key, &SignOptions::default())?;
/// assert!(token.contains(".."), "the payload is detached");
///
/// let keys = StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned);
/// let verifier = Verifier::builder(keys).build();
/// let report = verifier.verify_jws(&token, Some(content))?;
/// assert!(report.verified());
///
/// // Other content does not verify.
/// assert!(verifier.verify_jws(&token, Some(b"{}")).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`JwsError::ReservedHeader`] when an extra header member is one agentsig writes itself;
/// [`JwsError::Sign`] when the key cannot sign.
pub fn sign_compact_detached(
    payload: &[u8],
    key: &SigningKey,
    opts: &SignOptions,
) -> Result<String, JwsError> {
    let protected = build_protected(key, opts, "JOSE")?;
    let si = signing_input(&protected, &payload_part(payload, opts.b64));
    let sig = key.sign(&si)?;
    Ok(format!("{protected}..{}", b64::encode(&sig)))
}

/// Sign `payload` with every key and return the JWS JSON general
/// serialization without `payload` (RFC 7515 7.2.1, Appendix F), for key
/// rotation.
///
/// # Errors
/// [`JwsError::ReservedHeader`] when an extra header member is one agentsig writes itself;
/// [`JwsError::Sign`] when a key cannot sign.
pub fn sign_general_detached(
    payload: &[u8],
    keys: &[&SigningKey],
    opts: &SignOptions,
) -> Result<Value, JwsError> {
    if keys.is_empty() {
        return Err(JwsError::Malformed("no signing key".into()));
    }
    let part = payload_part(payload, opts.b64);
    let mut sigs = Vec::new();
    for key in keys {
        let protected = build_protected(key, opts, "JOSE+JSON")?;
        let si = signing_input(&protected, &part);
        let sig = key.sign(&si)?;
        let mut m = Map::new();
        m.insert("protected".into(), Value::String(protected));
        m.insert("signature".into(), Value::String(b64::encode(&sig)));
        sigs.push(Value::Object(m));
    }
    let mut top = Map::new();
    top.insert("signatures".into(), Value::Array(sigs));
    Ok(Value::Object(top))
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// Protected headers decoded (not given back from the one kept)
        /// on this thread.
        pub(super) static DECODED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// A run of JWSs with one protected header (the manifests of a catalog
    /// signed with one key) decodes it once, not once per JWS.
    #[test]
    fn one_header_text_is_decoded_once_in_a_run() {
        let h = b64::encode(br#"{"alg":"ES256","kid":"run"}"#);
        let before = DECODED.with(std::cell::Cell::get);
        for _ in 0..100 {
            assert_eq!(
                ProtectedHeader::decode(&h).expect("header").get_str("kid"),
                Some("run")
            );
        }
        assert_eq!(DECODED.with(std::cell::Cell::get) - before, 1);
    }

    /// The header kept from the last decode is given back only for the
    /// same text: two headers decoded in turn each get their own members,
    /// and a text that fails to decode fails every time.
    #[test]
    fn a_kept_header_is_given_only_for_its_own_text() {
        let a = b64::encode(br#"{"alg":"ES256","kid":"a"}"#);
        let b = b64::encode(br#"{"alg":"EdDSA","kid":"b"}"#);
        for _ in 0..3 {
            let ha = ProtectedHeader::decode(&a).expect("a");
            assert_eq!(ha.get_str("kid"), Some("a"));
            assert_eq!(ha.encoded, a);
            let hb = ProtectedHeader::decode(&b).expect("b");
            assert_eq!(hb.get_str("kid"), Some("b"));
            assert_eq!(hb.get_str("alg"), Some("EdDSA"));
            assert_eq!(ProtectedHeader::decode(&b).expect("b again"), hb);
        }
        let dup = b64::encode(br#"{"alg":"ES256","alg":"none"}"#);
        assert!(ProtectedHeader::decode(&dup).is_err());
        assert!(ProtectedHeader::decode(&dup).is_err());
    }

    /// The one-buffer signing input of a detached payload is byte for byte
    /// `BASE64URL(header) "." BASE64URL(payload)` (RFC 7515 section 5.1),
    /// for every length modulo 3 (no padding), and an attached payload or
    /// `b64=false` (RFC 7797) keeps its own form.
    #[test]
    fn one_buffer_signing_input_matches_the_rfc_form() {
        let parsed = ParsedJws::parse("eyJhbGciOiJFUzI1NiJ9..c2ln").unwrap();
        for n in 0..8usize {
            let content: Vec<u8> = (0..n as u8).map(|b| b.wrapping_mul(37) ^ 0xfb).collect();
            let p = Payload::new(&parsed, Some(&content));
            let (payload, si) = p.signing_input_once("eyJhbGciOiJFUzI1NiJ9", true).unwrap();
            assert_eq!(payload, &content[..]);
            let expected = signing_input("eyJhbGciOiJFUzI1NiJ9", b64::encode(&content).as_bytes());
            assert_eq!(si, expected, "{n} bytes");
            let (_, raw) = p.signing_input_once("eyJhbGciOiJFUzI1NiJ9", false).unwrap();
            assert_eq!(raw, signing_input("eyJhbGciOiJFUzI1NiJ9", &content));
        }
        let attached = ParsedJws::parse("eyJhbGciOiJFUzI1NiJ9.YWJj.c2ln").unwrap();
        let p = Payload::new(&attached, None);
        let (payload, si) = p.signing_input_once("eyJhbGciOiJFUzI1NiJ9", true).unwrap();
        assert_eq!(payload, b"abc");
        assert_eq!(si, b"eyJhbGciOiJFUzI1NiJ9.YWJj");
    }
}
