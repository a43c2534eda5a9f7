//! `Accept-Signature` (RFC 9421 section 5): a request for a signature.
//!
//! Each member names a label and carries the components and parameters the
//! requester wants. [`spec_for`] turns one member into a [`SignatureSpec`]
//! the signer can honour, or says exactly why it cannot:
//! * every requested component is covered, in the requested order;
//! * the signer's clock decides (RFC 9421 section 5.1): `created` is always the
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

/// One requested signature: one member of `Accept-Signature` (RFC 9421
/// section 5.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requested {
    /// The member's key: the label the signature is to carry.
    pub label: String,
    /// The components to cover, in the requested order (RFC 9421 section 2).
    pub components: Vec<ComponentId>,
    /// The requested signature parameters, in order, as received (RFC 9421
    /// section 2.3; a Boolean `true` asks for a value the signer chooses).
    pub params: sfv::Params,
}

/// Why an `Accept-Signature` field or member cannot be honoured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AcceptError {
    /// The field is not a Structured Field Dictionary (RFC 9421 section 5.1;
    /// RFC 9651 section 3.2).
    #[error("Accept-Signature is not a valid Dictionary: {0}")]
    Malformed(SfError),
    /// Two members share a label; holds the label. Refused rather than
    /// letting the last one win, so the request is unambiguous.
    #[error("Accept-Signature repeats the label {0:?}")]
    DuplicateLabel(String),
    /// The member with this label is an Item, not the Inner List of
    /// component identifiers RFC 9421 section 5.1 requires.
    #[error("Accept-Signature member {0:?} is not an Inner List")]
    NotInnerList(String),
    /// A requested component identifier is invalid or repeated (RFC 9421
    /// sections 2 and 2.5).
    #[error("Accept-Signature member {label:?}: {err}")]
    Component {
        /// The member's label.
        label: String,
        /// What is wrong with the component identifier.
        err: ComponentError,
    },
    /// The requester asked for a `keyid` other than the signing key's; a
    /// signer never switches keys on request.
    #[error("requested keyid {requested:?} is not the signing key's ({have:?})")]
    KeyidUnavailable {
        /// The `keyid` the requester asked for.
        requested: String,
        /// The signing key's `keyid`.
        have: String,
    },
    /// The requester asked for an `alg` other than the signing key's (RFC
    /// 9421 section 3.1: the algorithm is bound to the key).
    #[error("requested alg {requested:?} is not the signing key's {have}")]
    AlgUnavailable {
        /// The `alg` value the requester asked for (an RFC 9421 section
        /// 6.2 name, or anything else it sent).
        requested: String,
        /// The signing key's algorithm.
        have: Algorithm,
    },
    /// A parameter outside the RFC 9421 section 6.3.2 registry was
    /// requested; holds its name.
    #[error("requested parameter {0:?} is not supported")]
    UnsupportedParam(String),
    /// A registered parameter was requested with a value of the wrong type
    /// (e.g. `keyid=1`); holds its name.
    #[error("requested parameter {0:?} has the wrong type")]
    ParamType(String),
    /// The field has several members and none carries the wanted label;
    /// holds that label.
    #[error("no Accept-Signature member is labelled {0:?}")]
    NoSuchLabel(String),
    /// The request carries no `Accept-Signature` field.
    #[error("the request carries no Accept-Signature field")]
    NoField,
}

/// Parse `Accept-Signature` field lines (RFC 9421 section 5.1): the lines
/// are joined with `, ` and read as one Dictionary whose members are Inner
/// Lists of component identifiers with parameters. Duplicate labels are
/// refused.
///
/// # Errors
/// [`AcceptError`] when `Accept-Signature` is malformed or asks for what agentsig does not sign
/// (RFC 9421 section 5).
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
/// `expires` is requested. `created` and `keyid` are added when not
/// requested; the parameters are in RFC 9421 section 2.3's order
/// ([`PARAM_ORDER`](super::PARAM_ORDER)), whatever the requested one.
///
/// # Errors
/// [`AcceptError`] when `Accept-Signature` is malformed or asks for what agentsig does not sign
/// (RFC 9421 section 5).
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
    if !has(&spec, "created") {
        spec = spec.created(now);
    }
    if !has(&spec, "keyid") {
        spec = spec.keyid(keyid);
    }
    Ok(spec)
}

/// Find the member labelled `label`.
///
/// # Errors
/// [`AcceptError`] when `Accept-Signature` is malformed or asks for what agentsig does not sign
/// (RFC 9421 section 5).
pub fn find<'a>(reqs: &'a [Requested], label: &str) -> Result<&'a Requested, AcceptError> {
    reqs.iter()
        .find(|r| r.label == label)
        .ok_or_else(|| AcceptError::NoSuchLabel(label.to_owned()))
}

/// Answer the `Accept-Signature` field of `request` (RFC 9421 section 5.2):
/// its only member, or the member labelled `label` when it has several, as
/// a [`SignatureSpec`] the signer can honour with `key` (see [`spec_for`]:
/// the signer's clock and key decide, never the requester).
///
/// `now` is the signer's time in seconds since the Unix epoch, `lifetime`
/// the seconds until `expires` when the requester asks for one.
///
/// ```
/// use agentsig::httpsig::{self, accept, Message};
/// use agentsig::{Algorithm, SigningKey};
///
/// let request = Message::parse(
///     b"GET /agent.json HTTP/1.1\r\n\
///       Host: example.com\r\n\
///       Accept-Signature: sig1=(\"@status\" \"content-type\" \"@method\";req);expires;tag=\"app\"\r\n\
///       \r\n",
///     "https",
/// )?;
/// let key = SigningKey::generate(Algorithm::Ed25519)?;
/// let now = 1_700_000_000;
/// let spec = accept::negotiate(&request, "sig1", &key, "my-key", now, 300)?;
/// assert_eq!(spec.label, "sig1");
/// assert_eq!(spec.components.len(), 3);
///
/// let mut response = Message::response(200, Vec::new(), b"{}".to_vec());
/// response.add_header("Content-Type", "application/json");
/// let signed = httpsig::sign(&response, Some(&request), &spec, &key)?;
/// // The signer's clock sets `created` and `expires`; `keyid` is added;
/// // the parameters are in RFC 9421 section 2.3's order (`httpsig::PARAM_ORDER`).
/// assert!(signed.signature_input.ends_with(
///     ";created=1700000000;expires=1700000300;keyid=\"my-key\";tag=\"app\""
/// ));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`AcceptError`] when `Accept-Signature` is malformed or asks for what agentsig does not sign
/// (RFC 9421 section 5).
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
