//! RFC 9421 HTTP Message Signatures.
//!
//! * [`message`]: the one message model that raw HTTP/1.1 text and the
//!   `http` crate's `Request`/`Response` convert into.
//! * [`components`]: component identifiers and values (section 2).
//! * [`base`]: the signature base (section 2.5).
//! * signing: [`sign`] a [`Message`] (section 3.1), several signatures per
//!   message; `http` crate types through [`SignHttp`].
//! * verifying (section 3.2) under an [`HttpPolicy`], through
//!   [`Verifier::verify_http`](crate::verifier::Verifier::verify_http) or, for
//!   `http` crate types, [`VerifyHttp`](crate::verifier::VerifyHttp); one
//!   result per label, never "any valid wins" (section 7.2.5).
//! * [`accept`]: `Accept-Signature` (section 5).
//! * [`crate::sfv`]: the strict Structured Field Values codec they share.
//!
//! RFC 9530 digests live in [`crate::digest`].

pub mod accept;
pub mod authority;
pub mod base;
pub mod components;
pub mod message;
use crate::sfv;
mod sign;
mod verify;

pub use authority::{AuthorityError, SiteAuthorities};
pub use components::{ComponentError, ComponentId, Derived, SfType};
pub use message::{Message, MessageError};
#[cfg(feature = "server")]
pub(crate) use sign::{base_for, checked_params_value};
pub use sign::{
    default_components, sign, static_response_fields, SignError, SignHttp, SignHttpResponse,
    SignatureOnHttpError, SignatureSpec, Signed, DEFAULT_SCHEME, PARAM_ORDER,
};
pub(crate) use verify::{check_one, finish_checked, probe_checked, report, verify, CheckedLabel};
pub use verify::{
    default_request_target_components, descriptor_response_components, key_requests,
    strict_request_components, HeaderError, HttpPolicy, HttpSigError, LabelResult, SigError,
    VerifyReport, REWRITTEN_COMPONENTS,
};

use sfv::BareItem;

/// Most signatures examined in one message.
pub const MAX_SIGNATURES: usize = 16;
/// Most components covered by one signature.
pub const MAX_COMPONENTS: usize = 64;
/// Largest combined `Signature-Input` or `Signature` field, in bytes.
pub const MAX_SIGNATURE_FIELD: usize = 16 * 1024;
/// Longest label accepted.
pub const MAX_LABEL: usize = 64;
/// The work budget of one message: the signature bases built for it, every
/// label together, hold at most this many bytes (1 MiB, eight times the
/// largest header section [`message::MAX_HEAD_BYTES`]); past it a label
/// fails with [`components::ComponentError::WorkBudget`]. With each covered
/// field parsed at most once per message, this bounds the CPU a message can
/// cost within the size limits ([`MAX_SIGNATURES`] labels of
/// [`MAX_COMPONENTS`] components over large fields).
pub const MAX_BASE_BYTES: usize = 1024 * 1024;

/// The signature parameters registered by RFC 9421 section 6.3.2, in the
/// order of section 2.3 (the order signers emit them:
/// [`PARAM_ORDER`]).
pub const KNOWN_PARAMS: [&str; 6] = ["created", "expires", "nonce", "alg", "keyid", "tag"];

/// Why a signature parameter is unusable (RFC 9421 section 2.3).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParamError {
    /// A parameter name occurs twice on one signature; holds the name.
    /// Refused rather than applying "last value wins" (RFC 9651 section
    /// 4.2.3.2), so signer and verifier cannot disagree on the value.
    #[error("signature parameter {0:?} given twice")]
    Duplicate(String),
    /// A registered parameter has the wrong type (RFC 9421 section 2.3).
    #[error("signature parameter {name:?} must be {expected}")]
    Type {
        /// The parameter's name, e.g. `created`.
        name: String,
        /// The type it must have, e.g. `"a non-negative Integer"`.
        expected: &'static str,
    },
}

/// Check the types of the registered parameters (RFC 9421 section 2.3):
/// `created` and `expires` are non-negative Integers, `nonce`, `alg`,
/// `keyid` and `tag` are Strings. Unknown parameters are kept as given.
///
/// # Errors
/// [`ParamError`] when a signature parameter is repeated or has the wrong type (RFC 9421 section
/// 2.3).
pub fn check_params(p: &sfv::Params) -> Result<(), ParamError> {
    if let Some(d) = sfv::duplicate_param(p) {
        return Err(ParamError::Duplicate(d.to_owned()));
    }
    for (k, v) in p {
        let expected = match k.as_str() {
            "created" | "expires" => match v {
                BareItem::Integer(n) if *n >= 0 => continue,
                _ => "a non-negative Integer",
            },
            "nonce" | "alg" | "keyid" | "tag" => match v {
                BareItem::String(_) => continue,
                _ => "a String",
            },
            _ => continue,
        };
        return Err(ParamError::Type {
            name: k.clone(),
            expected,
        });
    }
    Ok(())
}

pub(crate) fn param_int(p: &sfv::Params, k: &str) -> Option<i64> {
    p.iter().find(|(n, _)| n == k).and_then(|(_, v)| match v {
        BareItem::Integer(n) => Some(*n),
        _ => None,
    })
}

pub(crate) fn param_str<'a>(p: &'a sfv::Params, k: &str) -> Option<&'a str> {
    p.iter().find(|(n, _)| n == k).and_then(|(_, v)| match v {
        BareItem::String(s) => Some(s.as_str()),
        _ => None,
    })
}

/// A label must be an sf-key (RFC 9421 section 4.1: Dictionary keys).
pub fn valid_label(l: &str) -> bool {
    !l.is_empty() && l.len() <= MAX_LABEL && sfv::is_key(l)
}

pub(crate) fn sf_type_lookup(extra: &[(String, SfType)]) -> impl Fn(&str) -> Option<SfType> + '_ {
    move |name: &str| {
        extra
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| *t)
            .or_else(|| components::known_sf_type(name))
    }
}
