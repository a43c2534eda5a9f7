//! `Accept-Signature` (RFC 9421 section 5): a request for a signature.
//!
//! Each member names a label and carries the components and parameters the
//! requester wants. [`spec_for`] turns one member into a [`SignatureSpec`]
//! the signer can honour, or says exactly why it cannot:
//! * every requested component is covered, in the requested order;
//! * the signer's clock decides (issue 13 item 6): `created` is always the
//!   signer's `now`, requested or not, and a requested Integer is ignored (a
//!   pre-dated `created` would outlive the verifier's maximum age);
//!   `expires`, when requested (as `true` or an Integer), is always
//!   `now + lifetime`;
//! * `keyid` is always included (RFC 9421 section 2.3; verifiers require it
//!   by default); when requested, `keyid` and `alg` must name the signer's
//!   own key and algorithm: a signer never switches keys or algorithms on
//!   request;
//! * `nonce` and `tag` values are copied;
//! * unknown parameters are refused.

use super::components::{parse_covered, ComponentError, ComponentId};
use super::sign::SignatureSpec;
use crate::keys::SigningKey;
use crate::sfv::{self, BareItem, Entry, SfError};
use crate::Algorithm;

/// One requested signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requested {
    pub label: String,
    pub components: Vec<ComponentId>,
    pub params: sfv::Params,
}

/// Why an `Accept-Signature` field or member cannot be honoured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AcceptError {
    #[error("Accept-Signature is not a valid Dictionary: {0}")]
    Malformed(SfError),
    #[error("Accept-Signature repeats the label {0:?}")]
    DuplicateLabel(String),
    #[error("Accept-Signature member {0:?} is not an Inner List")]
    NotInnerList(String),
    #[error("Accept-Signature member {label:?}: {err}")]
    Component { label: String, err: ComponentError },
    #[error("requested keyid {requested:?} is not the signing key's ({have:?})")]
    KeyidUnavailable { requested: String, have: String },
    #[error("requested alg {requested:?} is not the signing key's {have}")]
    AlgUnavailable { requested: String, have: Algorithm },
    #[error("requested parameter {0:?} is not supported")]
    UnsupportedParam(String),
    #[error("requested parameter {0:?} has the wrong type")]
    ParamType(String),
    #[error("no Accept-Signature member is labelled {0:?}")]
    NoSuchLabel(String),
    /// The request carries no `Accept-Signature` field.
    #[error("the request carries no Accept-Signature field")]
    NoField,
}

/// Parse `Accept-Signature` field lines.
pub fn parse(lines: &[&[u8]]) -> Result<Vec<Requested>, AcceptError> {
    let joined = lines.join(&b", "[..]);
    let d = sfv::parse_dictionary_raw(&joined).map_err(AcceptError::Malformed)?;
    if let Some(l) = d.first_duplicate() {
        return Err(AcceptError::DuplicateLabel(l.to_owned()));
    }
    let mut out = Vec::new();
    for (label, e) in d.0 {
        let Entry::InnerList(l) = e else {
            return Err(AcceptError::NotInnerList(label));
        };
        let components = parse_covered(&l.items).map_err(|err| AcceptError::Component {
            label: label.clone(),
            err,
        })?;
        out.push(Requested {
            label,
            components,
            params: l.params,
        });
    }
    Ok(out)
}

/// Build the signature the requester asked for, with the signer's key.
/// `now` is the signer's clock; `lifetime` the validity given when
/// `expires` is requested. Requested parameters keep their order; `created`
/// and then `keyid`, when not requested, are added first.
pub fn spec_for(
    req: &Requested,
    key: &SigningKey,
    keyid: &str,
    now: i64,
    lifetime: i64,
) -> Result<SignatureSpec, AcceptError> {
    let mut spec = SignatureSpec::new(req.label.clone());
    spec.components = req.components.clone();
    for (k, v) in &req.params {
        let ty = || AcceptError::ParamType(k.clone());
        spec = match (k.as_str(), v) {
            // The signer's clock decides, never the requester's value.
            ("created", BareItem::Boolean(true) | BareItem::Integer(_)) => spec.created(now),
            ("expires", BareItem::Boolean(true) | BareItem::Integer(_)) => {
                spec.expires(now.saturating_add(lifetime))
            }
            ("keyid", BareItem::String(s)) => {
                if s != keyid {
                    return Err(AcceptError::KeyidUnavailable {
                        requested: s.clone(),
                        have: keyid.to_owned(),
                    });
                }
                spec.keyid(s)
            }
            ("alg", BareItem::String(s)) => {
                if Algorithm::from_httpsig_name(s) != Some(key.algorithm()) {
                    return Err(AcceptError::AlgUnavailable {
                        requested: s.clone(),
                        have: key.algorithm(),
                    });
                }
                spec.alg(key.algorithm())
            }
            ("nonce", BareItem::String(s)) => spec.nonce(s),
            ("tag", BareItem::String(s)) => spec.tag(s),
            ("created" | "expires" | "keyid" | "alg" | "nonce" | "tag", _) => return Err(ty()),
            (other, _) => return Err(AcceptError::UnsupportedParam(other.to_owned())),
        };
    }
    let has = |spec: &SignatureSpec, k: &str| spec.params.iter().any(|(n, _)| n == k);
    let mut front: sfv::Params = Vec::new();
    if !has(&spec, "created") {
        front.push(("created".to_owned(), BareItem::Integer(now)));
    }
    if !has(&spec, "keyid") {
        front.push(("keyid".to_owned(), BareItem::String(keyid.to_owned())));
    }
    front.append(&mut spec.params);
    spec.params = front;
    Ok(spec)
}

/// Find the member labelled `label`.
pub fn find<'a>(reqs: &'a [Requested], label: &str) -> Result<&'a Requested, AcceptError> {
    reqs.iter()
        .find(|r| r.label == label)
        .ok_or_else(|| AcceptError::NoSuchLabel(label.to_owned()))
}

/// Answer the `Accept-Signature` field of `request` (RFC 9421 section 5.2):
/// its only member, or the member labelled `label` when it has several, as
/// a [`SignatureSpec`] the signer can honour with `key` (see [`spec_for`]:
/// the signer's clock and key decide, never the requester).
pub fn negotiate(
    request: &super::Message,
    label: &str,
    key: &SigningKey,
    keyid: &str,
    now: i64,
    lifetime: i64,
) -> Result<SignatureSpec, AcceptError> {
    let lines: Vec<&[u8]> = request.field_lines("accept-signature", false).collect();
    if lines.is_empty() {
        return Err(AcceptError::NoField);
    }
    let reqs = parse(&lines)?;
    let wanted = match reqs.as_slice() {
        [only] => only,
        _ => find(&reqs, label)?,
    };
    spec_for(wanted, key, keyid, now, lifetime)
}
