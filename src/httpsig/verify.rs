//! Verifying signatures (RFC 9421 section 3.2) under a caller-stated policy.
//!
//! # Security contract
//! * Every label gets its own [`LabelResult`]; the report never collapses
//!   them into "some signature was valid" (section 7.2.5). Callers choose
//!   labels by trusted key and `tag`, or require all.
//! * `@signature-params` is re-serialized from the received Inner List, in
//!   the received order and with unknown parameters kept (section 2.3).
//! * Keys come only from the [`KeyResolver`](crate::trust::KeyResolver);
//!   `keyid` and `alg` select among trusted keys and never supply one. When
//!   `alg` is present it must equal the key's algorithm (section 3.2 step 6;
//!   section 7.3.6).
//! * A covered component that is absent is an error, never skipped.
//! * When `content-digest` is covered in any form (`;sf`, `;bs`, `;key`, `;tr`,
//!   `;req` included), the digest must also match the
//!   content as received (section 7.2.8; RFC 9530).
//! * Header-level damage (invalid structured fields, duplicate labels,
//!   oversized fields) is a [`HeaderError`] for the whole message.

use super::base::{signature_base_cached, signature_params_value};
use super::components::{parse_covered, ComponentError, ComponentId, Derived, SfType};
use super::message::{Message, MessageError};
use super::{check_params, param_int, param_str, valid_label, ParamError};
use crate::alg::Algorithm;
use crate::digest::{self, DigestError};
use crate::policy::Context;
use crate::replay::Sighting;
use crate::sfv::{self, BareItem, Entry, SfError};
use crate::trust::{KeyRequest, KeySource, ResolveError, SelectError};

/// What the caller requires of a signature, beyond a trusted key and an
/// allowed algorithm (the `Verifier`'s). Defaults are strict: `created`
/// and `keyid` required, 5 minutes maximum age, no required components.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HttpPolicy {
    /// Components every accepted signature must cover.
    pub required: Vec<ComponentId>,
    /// Refuse signatures without `created` (default true).
    pub require_created: bool,
    /// Refuse signatures without `expires` (default false).
    pub require_expires: bool,
    /// Refuse signatures without `keyid` (default true).
    pub require_keyid: bool,
    /// Refuse signatures without `nonce` (default false).
    pub require_nonce: bool,
    /// Largest accepted age of `created`, in seconds.
    pub max_age: Option<u64>,
    /// Check `created`/`expires` against the clock at all (false only to
    /// replay archived vectors).
    pub check_time: bool,
    /// Required `tag` value.
    pub expected_tag: Option<String>,
    /// Only these labels (each must be present); default: every label.
    pub labels: Option<Vec<String>>,
    /// Check a covered `content-digest` against the content (default true).
    pub check_content_digest: bool,
    /// Structured-field types for `;sf` beyond the built-in table.
    pub sf_types: Vec<(String, SfType)>,
    /// Keep the signature base in each result (for diagnostics).
    pub keep_base: bool,
    /// Accept a signature whose covered list is empty, `()` (default false).
    /// RFC 9421 allows it (Appendix B.2.1 is one) but such a signature
    /// protects only its own parameters, never the message, so it is refused
    /// for requests and responses alike unless this is set (RFC 9421 section
    /// 7.2.1: the application decides what must be covered).
    pub allow_empty_covered: bool,
    /// On a request, at least one of these must be covered (default
    /// `@method`, `@authority`, `@target-uri`, `@path`), so a signature is
    /// bound to what was asked of whom (RFC 9421 section 7.2.1). An empty list turns the check off. Not applied to responses.
    pub request_target_one_of: Vec<ComponentId>,
    /// The site's own authorities (`host[:port]`, see
    /// [`SiteAuthorities`](super::SiteAuthorities)): on a request, a signature must cover
    /// `@authority` or `@target-uri` and the request's authority must be one
    /// of these, whatever `Host` says, so a request signed for another site
    /// and replayed here with that site's `Host` is refused (RFC 9421 section
    /// 7.2.1; section 2.2.3 for the comparison). `None` (the default of this
    /// low-level policy) does not check the authority: the gates (`VerifyLayer`,
    /// `BotAuthLayer`, `agentsig http verify`) require the choice to be made.
    pub authorities: Option<Vec<String>>,
    /// A message with content must be signed over `content-digest` (any
    /// form but `;req`), so the content accepted is the content signed (RFC
    /// 9421 section 7.2.8, RFC 9530 section 2); refused as
    /// [`SigError::RequiredComponentNotCovered`]. Default true, as in
    /// `VerifyLayer`, `BotAuthLayer`, `agentsig http verify` and the Python
    /// and Node packages: one default policy for a request in every
    /// surface. Waived explicitly by
    /// [`HttpPolicy::allow_uncovered_content`] (the command line's
    /// `--allow-uncovered-content`), e.g. to replay RFC 9421's own
    /// examples, which leave their content uncovered.
    pub require_content_digest: bool,
}

/// What a strict gate requires a request signature to cover: `@method`
/// and `@path`, so that a captured signature cannot be spent on another
/// method or resource of the site (RFC 9421 section 7.2.1). With a
/// required `nonce` and a replay store it is then good for one request
/// (section 7.2.2). `webbotauth::Policy::strict` and the Python
/// `strict=True` both use this list.
pub fn strict_request_components() -> Vec<ComponentId> {
    vec![
        ComponentId::derived(Derived::Method),
        ComponentId::derived(Derived::Path),
    ]
}

/// The default [`HttpPolicy::request_target_one_of`]: `@method`,
/// `@authority`, `@target-uri`, `@path`.
pub fn default_request_target_components() -> Vec<ComponentId> {
    [
        Derived::Method,
        Derived::Authority,
        Derived::TargetUri,
        Derived::Path,
    ]
    .into_iter()
    .map(ComponentId::derived)
    .collect()
}

/// The components draft-narvaneni-agent-uri-03 section 10.3 requires on a descriptor response.
pub fn descriptor_response_components() -> Vec<ComponentId> {
    let mut v = vec![ComponentId::derived(Derived::Status)];
    v.extend(
        ["content-type", "content-digest"]
            .iter()
            .filter_map(|n| ComponentId::field(n).ok()),
    );
    v
}

impl Default for HttpPolicy {
    fn default() -> Self {
        HttpPolicy::new()
    }
}

impl HttpPolicy {
    /// Strict defaults: `created` and `keyid` required, 5 minutes maximum
    /// age, a message's content covered through `content-digest`, no other
    /// required components.
    pub fn new() -> HttpPolicy {
        HttpPolicy {
            required: Vec::new(),
            require_created: true,
            require_expires: false,
            require_keyid: true,
            require_nonce: false,
            max_age: Some(300),
            check_time: true,
            expected_tag: None,
            labels: None,
            check_content_digest: true,
            sf_types: Vec::new(),
            keep_base: false,
            allow_empty_covered: false,
            request_target_one_of: default_request_target_components(),
            authorities: None,
            require_content_digest: true,
        }
    }

    /// Accept a message with content whose signature does not cover
    /// `content-digest` ([`HttpPolicy::require_content_digest`] off): the
    /// content could then have been changed by anyone on the way (RFC 9421
    /// section 7.2.8). The explicit waiver, named as the command line's
    /// `--allow-uncovered-content` and the bindings' option.
    ///
    /// ```
    /// use agentsig::httpsig::HttpPolicy;
    /// assert!(HttpPolicy::new().require_content_digest);
    /// assert!(!HttpPolicy::new().allow_uncovered_content().require_content_digest);
    /// ```
    #[must_use]
    pub fn allow_uncovered_content(mut self) -> HttpPolicy {
        self.require_content_digest = false;
        self
    }

    /// The descriptor-response policy (draft-narvaneni-agent-uri-03 section 10.3): covers
    /// `@status`, `content-type`, `content-digest`; `created` and `keyid`
    /// required; no maximum age (static descriptors are signed once, see
    /// docs/static-publishing.md) but `expires` is enforced when present.
    pub fn descriptor_response() -> HttpPolicy {
        HttpPolicy {
            required: descriptor_response_components(),
            max_age: None,
            ..HttpPolicy::new()
        }
    }
}

/// Damage to the signature fields themselves: nothing can be verified.
///
/// `field` is `"Signature-Input"` or `"Signature"` (RFC 9421 sections 4.1
/// and 4.2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HeaderError {
    /// The message has no `Signature-Input` field (RFC 9421 section 4.1).
    #[error("the message carries no Signature-Input field")]
    NoSignatureInput,
    /// The message has no `Signature` field (RFC 9421 section 4.2).
    #[error("the message carries no Signature field")]
    NoSignature,
    /// The field's lines total more than
    /// [`MAX_SIGNATURE_FIELD`](super::MAX_SIGNATURE_FIELD) bytes.
    #[error("the {field} field is larger than {max} bytes", max = super::MAX_SIGNATURE_FIELD)]
    TooLarge {
        /// The field's name.
        field: &'static str,
    },
    /// The field is not a Structured Field Dictionary (RFC 9651 section 3.2).
    #[error("the {field} field is not a valid Dictionary: {err}")]
    Malformed {
        /// The field's name.
        field: &'static str,
        /// The parse error.
        err: SfError,
    },
    /// A label occurs twice in the field: refused, never "last one wins",
    /// so signer and verifier cannot disagree on which signature is meant.
    #[error("the {field} field repeats the label {label:?}")]
    DuplicateLabel {
        /// The field's name.
        field: &'static str,
        /// The repeated label.
        label: String,
    },
    /// More than [`MAX_SIGNATURES`](super::MAX_SIGNATURES) labels in
    /// `Signature-Input`.
    #[error("more than {max} signatures in one message", max = super::MAX_SIGNATURES)]
    TooManySignatures,
    /// The message (e.g. an `http` request) could not be converted.
    #[error("the message could not be read: {0}")]
    Message(#[from] MessageError),
}

/// Why one labelled signature failed; [`SigError::code`] is stable.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SigError {
    /// The label is in neither field (it was named by
    /// [`HttpPolicy::labels`]), or is not a valid label (RFC 9421 section
    /// 4.1); holds the label.
    #[error("label {0:?} is not present in Signature-Input")]
    LabelNotFound(String),
    /// The label has a `Signature` member but no `Signature-Input` member
    /// (RFC 9421 section 4.2); holds the label.
    #[error("label {0:?} is in Signature but not in Signature-Input")]
    NoSignatureInput(String),
    /// The label has a `Signature-Input` member but no `Signature` member
    /// (RFC 9421 section 4.1); holds the label.
    #[error("label {0:?} is in Signature-Input but not in Signature")]
    NoSignatureValue(String),
    /// The `Signature-Input` member is not an Inner List (RFC 9421 section 4.1).
    #[error("the Signature-Input member is not an Inner List")]
    NotInnerList,
    /// The `Signature` member is not a bare Byte Sequence (RFC 9421 section 4.2).
    #[error("the Signature member is not a Byte Sequence without parameters")]
    NotByteSequence,
    /// More than [`MAX_COMPONENTS`](super::MAX_COMPONENTS) covered components.
    #[error("more than {max} covered components", max = super::MAX_COMPONENTS)]
    TooManyComponents,
    /// A covered component is invalid, repeated, or absent from the message
    /// (RFC 9421 sections 2 and 2.5).
    #[error(transparent)]
    Component(#[from] ComponentError),
    /// A signature parameter is repeated or has the wrong type (RFC 9421
    /// section 2.3).
    #[error(transparent)]
    Param(#[from] ParamError),
    /// The covered list is `()` and the policy does not allow that.
    #[error("the signature covers no component, so it protects nothing of the message")]
    EmptyCoveredList,
    /// A request signature covers none of the request-target components the policy asks for.
    #[error("the request signature covers none of {one_of:?}")]
    NoRequestTargetComponent {
        /// The components of [`HttpPolicy::request_target_one_of`], serialized.
        one_of: Vec<String>,
    },
    /// The site binds request signatures to its authorities
    /// ([`HttpPolicy::authorities`]) and this one covers neither
    /// `@authority` nor `@target-uri` (RFC 9421 section 7.2.1).
    #[error("the request signature covers neither @authority nor @target-uri, so it is not bound to this site")]
    AuthorityNotCovered,
    /// The covered authority is not one the site serves
    /// ([`HttpPolicy::authorities`]): a request signed for another site
    /// (RFC 9421 section 7.2.1).
    #[error("the signature was made for {}, which is not an authority this site serves ({})", crate::text::quoted(authority), served.join(", "))]
    WrongAuthority {
        /// The request's authority, as `@authority` derives it.
        authority: String,
        /// The authorities the site serves.
        served: Vec<String>,
    },
    /// A component of [`HttpPolicy::required`] is not covered; holds it,
    /// serialized.
    #[error("the policy requires component {0} but the signature does not cover it")]
    RequiredComponentNotCovered(String),
    /// A parameter the policy requires (`created`, `expires`, `keyid` or
    /// `nonce`, RFC 9421 section 2.3) is absent; holds its name.
    #[error("the signature has no {0} parameter, which the policy requires")]
    MissingParam(&'static str),
    /// The `tag` parameter is not [`HttpPolicy::expected_tag`] (RFC 9421
    /// section 2.3: `tag` says what the signature is for).
    #[error("tag {got:?} is not the expected {expected:?}")]
    TagMismatch {
        /// The tag the policy requires.
        expected: String,
        /// The tag the signature carries, if any.
        got: Option<String>,
    },
    /// The `alg` parameter is not an RFC 9421 section 6.2 algorithm name
    /// agentsig knows; holds it.
    #[error("unknown algorithm {0:?} in the alg parameter")]
    UnknownAlgorithm(String),
    /// The `alg` parameter names an algorithm outside the verifier's
    /// allow-list.
    #[error("algorithm {0} is not allowed by policy")]
    AlgorithmNotAllowed(Algorithm),
    /// `expires` is earlier than `created`.
    #[error("expires ({expires}) is before created ({created})")]
    ExpiresBeforeCreated {
        /// `created`, seconds since the Unix epoch.
        created: i64,
        /// `expires`, seconds since the Unix epoch.
        expires: i64,
    },
    /// `created` is later than now plus the allowed clock skew (RFC 9421
    /// section 3.2.1).
    #[error("created ({created}) is in the future (now {now})")]
    CreatedInFuture {
        /// `created`, seconds since the Unix epoch.
        created: i64,
        /// The verifier's clock, seconds since the Unix epoch.
        now: i64,
    },
    /// Now is later than `expires` plus the allowed clock skew (RFC 9421
    /// section 3.2.1).
    #[error("the signature expired at {} (now {})", crate::text::rfc3339(*.expires), crate::text::rfc3339(*.now))]
    Expired {
        /// `expires`, seconds since the Unix epoch.
        expires: i64,
        /// The verifier's clock, seconds since the Unix epoch.
        now: i64,
    },
    /// `created` is older than [`HttpPolicy::max_age`] plus the allowed
    /// clock skew (RFC 9421 section 3.2.1).
    #[error("the signature is {age} s old, more than the {max} s allowed (created long ago, a cached response, or a clock off: allow more with --max-age SECONDS, HttpPolicy::max_age in the library)")]
    TooOld {
        /// Now minus `created`, in seconds.
        age: i64,
        /// The policy's maximum age, in seconds.
        max: u64,
    },
    /// The key resolver failed (e.g. key discovery), so no key was tried.
    #[error("key lookup failed: {0}")]
    Resolve(#[from] ResolveError),
    /// No trusted key matches the `keyid` (and `alg`): keys come only from
    /// the resolver (RFC 9421 section 3.2 step 6).
    #[error("{}", crate::text::no_trusted_key_for(keyid.as_deref(), published_as.as_deref()))]
    NoTrustedKey {
        /// The `keyid` parameter, if the signature has one.
        keyid: Option<String>,
        /// When that `keyid` is the RFC 7638 thumbprint of a trusted key
        /// published with another kid: that kid.
        published_as: Option<String>,
    },
    /// The `alg` parameter differs from the algorithm the trusted key is
    /// bound to (RFC 9421 section 3.2 step 6; section 7.3.6).
    #[error("the signature claims {param} but the trusted key is bound to {key}")]
    AlgMismatch {
        /// The algorithm the `alg` parameter names.
        param: Algorithm,
        /// The algorithm the trusted key is bound to.
        key: Algorithm,
    },
    /// No candidate key verifies the signature over the rebuilt signature
    /// base (RFC 9421 section 3.2 step 8).
    #[error("the signature does not match the signature base")]
    BadSignature,
    /// An ECDSA signature with a high S value while the verifier requires
    /// low-S (a malleable twin of a valid signature).
    #[error("the ECDSA signature is not in low-S form (strict low-S policy)")]
    HighS,
    /// `content-digest` is covered but does not match the content (RFC 9421
    /// section 7.2.8; RFC 9530 section 2).
    #[error("content digest: {0}")]
    ContentDigest(#[from] DigestError),
    /// The `nonce` was already seen within the signature's validity (RFC
    /// 9421 section 7.2.2); holds the nonce.
    #[error("nonce {} was seen before (replay)", crate::text::quoted(.0))]
    Replay(String),
    /// The replay store failed (e.g. it is full), so the nonce could not be
    /// checked: fails closed.
    #[error("replay store: {0}")]
    ReplayStore(crate::replay::ReplayError),
}

impl SigError {
    /// A short stable code for reports.
    pub fn code(&self) -> &'static str {
        match self {
            SigError::LabelNotFound(_) => "label-not-found",
            SigError::NoSignatureInput(_) | SigError::NoSignatureValue(_) => "label-mismatch",
            SigError::NotInnerList | SigError::NotByteSequence => "malformed",
            SigError::TooManyComponents => "too-many-components",
            SigError::Component(ComponentError::Missing(_)) => "component-missing",
            SigError::Component(ComponentError::WorkBudget { .. }) => "work-budget",
            SigError::Component(_) => "component",
            SigError::Param(_) => "parameter",
            SigError::RequiredComponentNotCovered(_) => "required-component-not-covered",
            SigError::EmptyCoveredList => "empty-covered-list",
            SigError::NoRequestTargetComponent { .. } => "request-target-not-covered",
            SigError::AuthorityNotCovered => "authority-not-covered",
            SigError::WrongAuthority { .. } => "wrong-authority",
            SigError::MissingParam(_) => "missing-parameter",
            SigError::TagMismatch { .. } => "tag-mismatch",
            SigError::UnknownAlgorithm(_) => "unknown-algorithm",
            SigError::AlgorithmNotAllowed(_) => "algorithm-not-allowed",
            SigError::ExpiresBeforeCreated { .. } => "expires-before-created",
            SigError::CreatedInFuture { .. } => "created-in-future",
            SigError::Expired { .. } => "expired",
            SigError::TooOld { .. } => "too-old",
            SigError::Resolve(_) => "key-lookup",
            SigError::NoTrustedKey { .. } => "no-trusted-key",
            SigError::AlgMismatch { .. } => "alg-mismatch",
            SigError::BadSignature => "bad-signature",
            SigError::HighS => "ecdsa-high-s",
            SigError::ReplayStore(_) => "replay-store",
            SigError::ContentDigest(_) => "content-digest",
            SigError::Replay(_) => "replay",
        }
    }
}

/// The outcome for one label.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LabelResult {
    /// The label examined.
    pub label: String,
    /// Covered component identifiers, serialized, in order.
    pub covered: Vec<String>,
    /// The `@signature-params` value as rebuilt from the received Inner List.
    pub params_value: Option<String>,
    /// The `keyid` parameter (RFC 9421 section 2.3).
    pub keyid: Option<String>,
    /// The algorithm: the `alg` parameter when present, replaced by the
    /// verifying key's algorithm once a key verified the signature.
    pub alg: Option<Algorithm>,
    /// The `created` parameter, seconds since the Unix epoch (RFC 9421
    /// section 2.3).
    pub created: Option<i64>,
    /// The `expires` parameter, seconds since the Unix epoch (RFC 9421
    /// section 2.3).
    pub expires: Option<i64>,
    /// The `nonce` parameter (RFC 9421 section 2.3).
    pub nonce: Option<String>,
    /// The `tag` parameter (RFC 9421 section 2.3).
    pub tag: Option<String>,
    /// Where the verifying key came from, once a key verified the signature.
    pub key_source: Option<KeySource>,
    /// The verifying key's RFC 7638 JWK thumbprint (SHA-256, base64url),
    /// once a key verified the signature.
    pub key_thumbprint: Option<String>,
    /// The signature base (RFC 9421 section 2.5), when
    /// [`HttpPolicy::keep_base`] is set and the base could be built.
    pub signature_base: Option<Vec<u8>>,
    /// `Ok` when this signature verified under the policy, else why not.
    pub outcome: Result<(), SigError>,
}

impl LabelResult {
    fn new(label: &str) -> LabelResult {
        LabelResult {
            label: label.to_owned(),
            covered: Vec::new(),
            params_value: None,
            keyid: None,
            alg: None,
            created: None,
            expires: None,
            nonce: None,
            tag: None,
            key_source: None,
            key_thumbprint: None,
            signature_base: None,
            outcome: Ok(()),
        }
    }

    /// True when this signature verified under the policy.
    pub fn is_valid(&self) -> bool {
        self.outcome.is_ok()
    }

    /// Why this signature did not verify, as a message that says what to
    /// look at: for a signature that does not match its base, the covered
    /// components that hosts and proxies commonly rewrite
    /// ([`REWRITTEN_COMPONENTS`]) and how to see the base. `None` when valid.
    pub fn explain(&self) -> Option<String> {
        let e = self.outcome.as_ref().err()?;
        let mut m = e.to_string();
        if matches!(e, SigError::BadSignature) {
            let suspects: Vec<String> = REWRITTEN_COMPONENTS
                .iter()
                .filter(|(c, _)| {
                    self.covered
                        .iter()
                        .any(|x| x.trim_matches('"') == *c || x.starts_with(&format!("\"{c}\";")))
                })
                .map(|(c, why)| format!("{c} ({why})"))
                .collect();
            if !suspects.is_empty() {
                m.push_str(&format!(
                    "; if the key is the signer's, a covered component changed on the way, most often: {}",
                    suspects.join(", ")
                ));
            }
            m.push_str(
                "; --print-base shows the base that was checked, to compare with the signer's",
            );
        }
        Some(m)
    }
}

/// Covered components that hosts, CDNs and proxies commonly rewrite between
/// signer and verifier, and how: what [`LabelResult::explain`] names when a
/// signature does not match its base (RFC 9421 section 1.3, HTTP Message
/// Transformations: intermediaries may change a message in ways that break
/// its signature).
pub const REWRITTEN_COMPONENTS: [(&str, &str); 7] = [
    ("content-type", "a host may add \"; charset=utf-8\""),
    ("content-length", "the body was re-encoded or compressed"),
    ("@authority", "a proxy changed the host or port"),
    ("@target-uri", "a proxy changed the scheme, host or path"),
    ("@scheme", "TLS ended at a proxy"),
    ("@path", "a proxy added or removed a path prefix"),
    ("date", "a host set its own date"),
];

/// One result per label, in `Signature-Input` order.
#[derive(Debug, Clone)]
#[non_exhaustive]
#[must_use]
pub struct VerifyReport {
    /// One result per label examined.
    pub results: Vec<LabelResult>,
}

/// Why a message did not verify: the signature fields are unusable, or
/// a label examined did not verify (the report says which and why).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum HttpSigError {
    /// The signature fields or the message are unusable.
    #[error(transparent)]
    Header(#[from] HeaderError),
    /// The message could not be read.
    #[error(transparent)]
    Message(#[from] MessageError),
    /// Not every examined label verified.
    #[error("{}", not_verified_text(.0))]
    NotVerified(Box<VerifyReport>),
}

fn not_verified_text(r: &VerifyReport) -> String {
    match r
        .results
        .iter()
        .find_map(|l| l.outcome.as_ref().err().map(|e| (l, e)))
    {
        Some((l, e)) => format!(
            "signature {} not verified: {e}",
            crate::text::quoted(&l.label)
        ),
        None => "no signature to verify".into(),
    }
}

impl HttpSigError {
    /// The per-label report, when the fields could be read.
    pub fn report(&self) -> Option<&VerifyReport> {
        match self {
            HttpSigError::NotVerified(r) => Some(r),
            _ => None,
        }
    }
}

impl VerifyReport {
    /// The result for a label.
    pub fn get(&self, label: &str) -> Option<&LabelResult> {
        self.results.iter().find(|r| r.label == label)
    }
    /// True when there is at least one result and every one is valid.
    pub fn all_valid(&self) -> bool {
        !self.results.is_empty() && self.results.iter().all(LabelResult::is_valid)
    }
    /// Labels that verified.
    pub fn valid_labels(&self) -> Vec<&str> {
        self.results
            .iter()
            .filter(|r| r.is_valid())
            .map(|r| r.label.as_str())
            .collect()
    }
}

fn read_dict(msg: &Message, name: &'static str) -> Result<Option<sfv::Dictionary>, HeaderError> {
    let lines: Vec<&[u8]> = msg.field_lines(name, false).collect();
    if lines.is_empty() {
        return Ok(None);
    }
    let total: usize = lines.iter().map(|l| l.len() + 2).sum();
    let field = if name == "signature" {
        "Signature"
    } else {
        "Signature-Input"
    };
    if total > super::MAX_SIGNATURE_FIELD {
        return Err(HeaderError::TooLarge { field });
    }
    let joined = lines.join(&b", "[..]);
    let d =
        sfv::parse_dictionary_raw(&joined).map_err(|err| HeaderError::Malformed { field, err })?;
    checked_dict(&d, field)?;
    Ok(Some(d))
}

/// The checks of a parsed `Signature` or `Signature-Input` dictionary
/// (`field`): no label twice, at most [`super::MAX_SIGNATURES`].
fn checked_dict(d: &sfv::Dictionary, field: &'static str) -> Result<(), HeaderError> {
    if let Some(l) = d.first_duplicate() {
        return Err(HeaderError::DuplicateLabel {
            field,
            label: l.to_owned(),
        });
    }
    if d.0.len() > super::MAX_SIGNATURES {
        return Err(HeaderError::TooManySignatures);
    }
    Ok(())
}

/// What each signature of `msg` claims about its key (`keyid`, `alg`), in
/// `Signature-Input` order: the parse-first step for a caller that fetches
/// keys asynchronously before verifying.
///
/// # Errors
/// [`HeaderError`] when `Signature` or `Signature-Input` is missing or malformed.
pub fn key_requests(msg: &Message) -> Result<Vec<(String, KeyRequest)>, HeaderError> {
    let inputs = read_dict(msg, "signature-input")?.ok_or(HeaderError::NoSignatureInput)?;
    let mut out = Vec::new();
    for (label, e) in &inputs.0 {
        if let Entry::InnerList(list) = e {
            let mut r = KeyRequest::new().maybe_kid(param_str(&list.params, "keyid"));
            if let Some(a) = param_str(&list.params, "alg").and_then(Algorithm::from_httpsig_name) {
                r = r.alg(a);
            }
            out.push((label.clone(), r));
        }
    }
    Ok(out)
}

/// Verify the signatures of `msg` (RFC 9421 section 3.2) under `cx` and
/// `policy`; the one public way is
/// [`Verifier::verify_http`](crate::verifier::Verifier::verify_http).
pub(crate) fn verify(
    v: &Context,
    policy: &HttpPolicy,
    msg: &Message,
    related: Option<&Message>,
) -> Result<VerifyReport, HttpSigError> {
    let report = report(v, policy, msg, related)?;
    if report.all_valid() {
        Ok(report)
    } else {
        Err(HttpSigError::NotVerified(Box::new(report)))
    }
}

/// One result per label, whatever the outcome (see [`verify`]).
pub(crate) fn report(
    v: &Context,
    policy: &HttpPolicy,
    msg: &Message,
    related: Option<&Message>,
) -> Result<VerifyReport, HeaderError> {
    let inputs = read_dict(msg, "signature-input")?.ok_or(HeaderError::NoSignatureInput)?;
    let sigs = read_dict(msg, "signature")?.ok_or(HeaderError::NoSignature)?;
    let mut results = Vec::new();
    let labels: Vec<String> = match &policy.labels {
        Some(l) => l.clone(),
        None => {
            let mut v: Vec<String> = inputs.0.iter().map(|(k, _)| k.clone()).collect();
            for (k, _) in &sigs.0 {
                if !v.contains(k) {
                    v.push(k.clone());
                }
            }
            v
        }
    };
    // One cache per message: each covered field is parsed once, and the
    // signature bases of all labels share the MAX_BASE_BYTES budget.
    let mut cache = super::components::FieldCache::default();
    for label in labels {
        let mut r = LabelResult::new(&label);
        let received = (&inputs, &sigs);
        let outcome = verify_label(
            v, policy, msg, related, received, &label, &mut r, &mut cache,
        );
        r.outcome = outcome;
        results.push(r);
    }
    Ok(VerifyReport { results })
}

#[allow(clippy::too_many_arguments)]
fn verify_label(
    v: &Context,
    policy: &HttpPolicy,
    msg: &Message,
    related: Option<&Message>,
    received: (&sfv::Dictionary, &sfv::Dictionary),
    label: &str,
    r: &mut LabelResult,
    cache: &mut super::components::FieldCache,
) -> Result<(), SigError> {
    let checked = check_label(v, policy, msg, related, received, label, None, r, cache)?;
    finish_label(v, policy, msg, related, &checked, r)
}

/// A label that passed every check of RFC 9421 section 3.2 made before the
/// choice of its key (steps 1 to 5 and 7): what the rest of its
/// verification needs, so that a caller deciding whether to look a key up
/// (Web Bot Auth, which fetches key sets) parses and rebuilds nothing twice.
#[derive(Debug, Clone)]
pub(crate) struct CheckedLabel {
    covered: Vec<ComponentId>,
    base: Vec<u8>,
    sig: Vec<u8>,
    req: KeyRequest,
}

/// The checks of one `label` of `msg` that need no key, under `v` and
/// `policy`, as [`report`] makes them for a policy selecting that label:
/// the label's result so far, and the label ready for
/// [`finish_checked`] or the check that failed.
/// `inputs`: the message's `Signature-Input` dictionary when the caller
/// parsed it already (as [`sfv::parse_dictionary_raw`] parses the field
/// lines joined), checked here as if read here; `covered`: the label's
/// covered components when the caller parsed them already from that
/// dictionary's entry for `label` (as [`parse_covered`] parses its Inner
/// List; only with `inputs`), used in place of a second parse.
pub(crate) fn check_one(
    v: &Context,
    policy: &HttpPolicy,
    msg: &Message,
    label: &str,
    inputs: Option<&sfv::Dictionary>,
    covered: Option<Vec<ComponentId>>,
) -> Result<(LabelResult, Result<CheckedLabel, SigError>), HeaderError> {
    let read;
    let (inputs, covered) = match inputs {
        Some(d) => {
            checked_dict(d, "Signature-Input")?;
            (d, covered)
        }
        None => {
            read = read_dict(msg, "signature-input")?.ok_or(HeaderError::NoSignatureInput)?;
            (&read, None)
        }
    };
    let sigs = read_dict(msg, "signature")?.ok_or(HeaderError::NoSignature)?;
    let mut cache = super::components::FieldCache::default();
    let mut r = LabelResult::new(label);
    let checked = check_label(
        v,
        policy,
        msg,
        None,
        (inputs, &sigs),
        label,
        covered,
        &mut r,
        &mut cache,
    );
    Ok((r, checked))
}

/// The rest of the verification of a label [`check_one`] passed (the key's
/// choice and the signature, section 3.2 step 6 and 8; Content-Digest;
/// the nonce), under `v`, which must hold `check_one`'s algorithms, skew
/// and time: `r` is `check_one`'s result, completed here with the outcome.
pub(crate) fn finish_checked(
    v: &Context,
    policy: &HttpPolicy,
    msg: &Message,
    checked: &CheckedLabel,
    mut r: LabelResult,
) -> LabelResult {
    r.outcome = finish_label(v, policy, msg, None, checked, &mut r);
    r
}

/// The outcome [`finish_checked`] gives a label under `v` when `v`'s key
/// resolver holds no key (a probe of whether the label reaches the choice
/// of its key): the checks of section 3.2 step 6 made before the keys are
/// looked up, then the lookup. `r` is not needed: with no key the
/// signature, Content-Digest and nonce steps, the only readers of it, are
/// not reached.
pub(crate) fn probe_checked(
    v: &Context,
    policy: &HttpPolicy,
    msg: &Message,
    checked: &CheckedLabel,
) -> Result<(), SigError> {
    finish_label(v, policy, msg, None, checked, &mut LabelResult::new(""))
}

/// Section 3.2 steps 1 to 5 and 7 for `label`: everything before the key.
#[allow(clippy::too_many_arguments)]
fn check_label(
    v: &Context,
    policy: &HttpPolicy,
    msg: &Message,
    related: Option<&Message>,
    (inputs, sigs): (&sfv::Dictionary, &sfv::Dictionary),
    label: &str,
    parsed: Option<Vec<ComponentId>>,
    r: &mut LabelResult,
    cache: &mut super::components::FieldCache,
) -> Result<CheckedLabel, SigError> {
    let input = match inputs.get(label) {
        Some(i) => i,
        None if sigs.get(label).is_some() => {
            return Err(SigError::NoSignatureInput(label.to_owned()))
        }
        None => return Err(SigError::LabelNotFound(label.to_owned())),
    };
    let sig_bytes = match sigs.get(label) {
        Some(Entry::Item(sfv::Item {
            bare: BareItem::ByteSeq(b),
            params,
        })) if params.is_empty() => b,
        Some(_) => return Err(SigError::NotByteSequence),
        None => return Err(SigError::NoSignatureValue(label.to_owned())),
    };
    if !valid_label(label) {
        return Err(SigError::LabelNotFound(label.to_owned()));
    }
    let Entry::InnerList(list) = input else {
        return Err(SigError::NotInnerList);
    };
    if list.items.len() > super::MAX_COMPONENTS {
        return Err(SigError::TooManyComponents);
    }
    let covered = match parsed {
        Some(c) => c,
        None => parse_covered(&list.items)?,
    };
    r.covered = covered.iter().map(ComponentId::serialized).collect();
    let params = &list.params;
    check_params(params)?;
    let params_value = signature_params_value(&covered, params);
    r.params_value = Some(params_value.clone());
    r.keyid = param_str(params, "keyid").map(str::to_owned);
    r.created = param_int(params, "created");
    r.expires = param_int(params, "expires");
    r.nonce = param_str(params, "nonce").map(str::to_owned);
    r.tag = param_str(params, "tag").map(str::to_owned);
    let alg_param = match param_str(params, "alg") {
        Some(a) => Some(
            Algorithm::from_httpsig_name(a)
                .ok_or_else(|| SigError::UnknownAlgorithm(a.to_owned()))?,
        ),
        None => None,
    };
    r.alg = alg_param;

    // Policy checks that need no cryptography (section 3.2 steps 4-5).
    for req in &policy.required {
        if !covered.iter().any(|c| c.same_as(req)) {
            return Err(SigError::RequiredComponentNotCovered(req.to_string()));
        }
    }
    if policy.require_content_digest
        && !msg.body.is_empty()
        && !covered
            .iter()
            .any(|c| c.field_name() == Some("content-digest") && !c.req)
    {
        return Err(SigError::RequiredComponentNotCovered(
            "\"content-digest\" (the message has content)".into(),
        ));
    }
    if let Some(t) = &policy.expected_tag {
        if r.tag.as_deref() != Some(t.as_str()) {
            return Err(SigError::TagMismatch {
                expected: t.clone(),
                got: r.tag.clone(),
            });
        }
    }
    if policy.require_created && r.created.is_none() {
        return Err(SigError::MissingParam("created"));
    }
    if policy.require_expires && r.expires.is_none() {
        return Err(SigError::MissingParam("expires"));
    }
    if policy.require_keyid && r.keyid.is_none() {
        return Err(SigError::MissingParam("keyid"));
    }
    if policy.require_nonce && r.nonce.is_none() {
        return Err(SigError::MissingParam("nonce"));
    }
    if let Some(a) = alg_param {
        if !v.algorithms.contains(a) {
            return Err(SigError::AlgorithmNotAllowed(a));
        }
    }
    if let (Some(c), Some(e)) = (r.created, r.expires) {
        if e < c {
            return Err(SigError::ExpiresBeforeCreated {
                created: c,
                expires: e,
            });
        }
    }
    if policy.check_time {
        let now = v.now();
        let skew = v.skew_i64();
        if let Some(c) = r.created {
            if c > now.saturating_add(skew) {
                return Err(SigError::CreatedInFuture { created: c, now });
            }
            if let Some(max) = policy.max_age {
                let age = now.saturating_sub(c);
                if age > i64::try_from(max).unwrap_or(i64::MAX).saturating_add(skew) {
                    return Err(SigError::TooOld { age, max });
                }
            }
        }
        if let Some(e) = r.expires {
            if now > e.saturating_add(skew) {
                return Err(SigError::Expired { expires: e, now });
            }
        }
    }

    // A signature must protect something of the message (RFC 9421 section
    // 7.2.1): a covered list of `()` is refused unless the policy allows it.
    if covered.is_empty() && !policy.allow_empty_covered {
        return Err(SigError::EmptyCoveredList);
    }
    if msg.is_request()
        && !policy.request_target_one_of.is_empty()
        && !policy
            .request_target_one_of
            .iter()
            .any(|t| covered.iter().any(|c| c.same_as(t)))
    {
        return Err(SigError::NoRequestTargetComponent {
            one_of: policy
                .request_target_one_of
                .iter()
                .map(ToString::to_string)
                .collect(),
        });
    }

    if let (Some(served), super::message::Kind::Request(line)) = (&policy.authorities, &msg.kind) {
        let bound = [Derived::Authority, Derived::TargetUri]
            .into_iter()
            .any(|d| covered.iter().any(|c| c.same_as(&ComponentId::derived(d))));
        if !bound {
            return Err(SigError::AuthorityNotCovered);
        }
        if !super::authority::authority_in(served, &line.authority, &line.scheme) {
            return Err(SigError::WrongAuthority {
                authority: line.authority.clone(),
                served: served.clone(),
            });
        }
    }

    // Section 3.2 step 7: rebuild the base from the received Inner List.
    let lookup = super::sf_type_lookup(&policy.sf_types);
    let base = signature_base_cached(msg, related, &covered, &params_value, &lookup, cache)?;
    let req = KeyRequest {
        kid: r.keyid.clone(),
        alg: alg_param,
        ..KeyRequest::default()
    };
    Ok(CheckedLabel {
        covered,
        base,
        sig: sig_bytes.clone(),
        req,
    })
}

/// Section 3.2 steps 6 and 8, Content-Digest and the nonce, for a label
/// [`check_label`] passed.
fn finish_label(
    v: &Context,
    policy: &HttpPolicy,
    msg: &Message,
    related: Option<&Message>,
    checked: &CheckedLabel,
    r: &mut LabelResult,
) -> Result<(), SigError> {
    let CheckedLabel {
        covered,
        base,
        sig,
        req,
    } = checked;
    // Section 3.2 step 6: keyid and alg select among trusted keys.
    let selected =
        crate::trust::select_and_verify(&*v.keys, &v.algorithms, req, base, sig, v.low_s);
    if policy.keep_base {
        r.signature_base = Some(base.clone());
    }
    let ev = selected.map_err(|e| match e {
        SelectError::Resolve(e) => SigError::Resolve(e),
        SelectError::NoTrustedKey { kid, published_as } => SigError::NoTrustedKey {
            keyid: kid,
            published_as,
        },
        SelectError::AlgMismatch { claimed, key, .. } => SigError::AlgMismatch {
            param: claimed,
            key,
        },
        SelectError::BadSignature { .. } => SigError::BadSignature,
        SelectError::HighS => SigError::HighS,
    })?;
    r.alg = Some(ev.alg);
    r.key_source = Some(ev.source);
    r.key_thumbprint = Some(ev.thumbprint);

    // Section 7.2.8: the signature covers the digest field, not the content,
    // so whenever Content-Digest is covered in any form (plain, ;sf, ;bs,
    // ;key, ;tr, ;req) the field must be checked against the content
    // (a covered but unchecked digest protects nothing). Every active
    // member must match (RFC 9530 section 2,
    // crate::digest), and with ;key="alg" the covered member itself must be
    // one of those that matched: only it is signed. With ;tr the covered
    // field is the trailer Content-Digest (RFC 9421 section 2.1.3; RFC 9530
    // section 2 allows the field in trailers), checked against the same
    // content, since a trailer digest is over the content as sent.
    if policy.check_content_digest {
        for c in covered {
            if c.field_name() != Some("content-digest") {
                continue;
            }
            let src = if c.is_req() { related } else { Some(msg) };
            if let Some(m) = src {
                let lines: Vec<&[u8]> = m.field_lines("content-digest", c.tr).collect();
                let check = digest::verify_content_digest(&lines, &m.body)?;
                if let Some(k) = &c.key {
                    let ok = digest::DigestAlgorithm::from_key(k)
                        .is_some_and(|a| check.verified.contains(&a));
                    if !ok {
                        return Err(SigError::ContentDigest(
                            DigestError::CoveredMemberNotVerified {
                                field: "Content-Digest",
                                key: k.clone(),
                            },
                        ));
                    }
                }
            }
        }
    }
    // Section 7.2.2: a nonce is remembered for as long as the signature
    // would be accepted (expires, or created + max age, plus skew; without
    // either, as long as a store keeps anything: replay::MAX_REPLAY_TTL_SECS).
    if let (Some(store), Some(n)) = (v.replay_store(), &r.nonce) {
        #[cfg(feature = "verify-oracle")]
        if crate::keys::oracle::defer_replay() {
            return Ok(());
        }
        let skew = v.skew_i64();
        let by_expires = r.expires.map(|e| e.saturating_add(skew));
        let by_age = match (r.created, policy.max_age) {
            (Some(c), Some(m)) => Some(
                c.saturating_add(i64::try_from(m).unwrap_or(i64::MAX))
                    .saturating_add(skew),
            ),
            _ => None,
        };
        let until = match (by_expires, by_age) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => i64::MAX,
        };
        let scope = format!(
            "{}{}",
            crate::replay::HTTPSIG_SCOPE,
            r.keyid.as_deref().unwrap_or("")
        );
        crate::replay::within_replay_window(until, v.now()).map_err(SigError::ReplayStore)?;
        match store.check_and_record(&scope, n, until, v.now()) {
            Ok(Sighting::First) => {}
            Ok(Sighting::Replay) => return Err(SigError::Replay(n.clone())),
            Err(e) => return Err(SigError::ReplayStore(e)),
        }
    }
    Ok(())
}
