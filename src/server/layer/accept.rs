//! `Accept-Signature` (RFC 9421 section 5.1) for the signing layer: a
//! field value parsed once and kept (see [`SignCache`](super::SignCache)),
//! the members the layer may honour (each covering the layer's mandatory
//! components), and the field lines of one requested signature.

use super::{lock, mandatory, SignConfig, MAX_ACCEPTED};
use crate::httpsig::{accept, components::ComponentId, SignatureSpec};
use crate::server::keys::PublisherKey;
use http::{header, HeaderValue, StatusCode};
use std::sync::{Arc, Mutex};

/// The `Accept-Signature` field of one request, parsed (see
/// [`ParsedAccept`]), and the model of the request its `;req` components
/// read, holding only the fields they name (and `Host`); `None` when the
/// request cannot be modelled, which leaves its `;req` members unsignable.
pub(super) struct Accepted {
    pub(super) parsed: Arc<ParsedAccept>,
    pub(super) rel: Option<crate::httpsig::Message>,
}

/// An `Accept-Signature` field value as this layer reads it (RFC 9421
/// section 5.1): its members, or why none can be honoured, and the field
/// names their components cover, read from the related request (`;req`)
/// or from the response, over the first [`MAX_ACCEPTED`] members.
///
/// It also keeps what its members are signed as for the latest (key,
/// second, response with or without `Content-Type`): the specs, checked,
/// with their `@signature-params` values (see [`PreparedSpec`]).
pub(super) struct ParsedAccept {
    pub(super) members: Result<Vec<accept::Requested>, accept::AcceptError>,
    pub(super) req_fields: Vec<header::HeaderName>,
    pub(super) res_fields: Vec<header::HeaderName>,
    pub(super) prepared: Mutex<Option<PreparedSpecs>>,
}

/// The members of one `Accept-Signature` value the layer may sign with
/// one key, in one second, for responses with or without `Content-Type`.
pub(super) struct PreparedSpecs {
    pub(super) key: Arc<PublisherKey>,
    pub(super) created: i64,
    pub(super) content_type: bool,
    pub(super) specs: Arc<Vec<PreparedSpec>>,
}

/// One member to sign: its spec, its `@signature-params` value (or why
/// the spec cannot be signed with the key), and whether it asks for a
/// `nonce` (then signed for every request).
pub(super) struct PreparedSpec {
    pub(super) spec: SignatureSpec,
    pub(super) params_value: Result<String, crate::httpsig::SignError>,
    pub(super) nonce: bool,
}

impl ParsedAccept {
    /// Parse the field value (its lines joined with `, `, RFC 9421
    /// section 5.1 and RFC 9651 section 3.2).
    pub(super) fn parse(joined: &[u8]) -> ParsedAccept {
        let members = accept::parse(&[joined]);
        let mut req_fields: Vec<header::HeaderName> = Vec::new();
        let mut res_fields: Vec<header::HeaderName> = Vec::new();
        for r in members.iter().flatten().take(MAX_ACCEPTED) {
            for c in &r.components {
                let crate::httpsig::components::Target::Field(name) = &c.target else {
                    continue;
                };
                // A name `http` cannot hold is in no header map: nothing
                // to keep for it (the component is then missing).
                let Ok(n) = header::HeaderName::from_bytes(name.as_bytes()) else {
                    continue;
                };
                let list = if c.req {
                    &mut req_fields
                } else {
                    &mut res_fields
                };
                if !list.contains(&n) {
                    list.push(n);
                }
            }
        }
        ParsedAccept {
            members,
            req_fields,
            res_fields,
            prepared: Mutex::new(None),
        }
    }

    /// The members to sign with `current` at `t` on a response with or
    /// without `Content-Type` (see [`requested_specs`]): the ones kept for
    /// the same key, second and kind of response, else made (then kept).
    pub(super) fn prepared(
        &self,
        cfg: &SignConfig,
        current: &Arc<PublisherKey>,
        t: i64,
        content_type: bool,
    ) -> Arc<Vec<PreparedSpec>> {
        if let Some(p) = lock(&self.prepared).as_ref() {
            if p.created == t && p.content_type == content_type && Arc::ptr_eq(&p.key, current) {
                return p.specs.clone();
            }
        }
        let specs: Arc<Vec<PreparedSpec>> = Arc::new(
            requested_specs(cfg, self, current, &mandatory(content_type), t)
                .into_iter()
                .map(|spec| PreparedSpec {
                    params_value: crate::httpsig::checked_params_value(&spec, &current.key),
                    nonce: spec.params.iter().any(|(k, _)| k == "nonce"),
                    spec,
                })
                .collect(),
        );
        *lock(&self.prepared) = Some(PreparedSpecs {
            key: current.clone(),
            created: t,
            content_type,
            specs: specs.clone(),
        });
        specs
    }
}

/// The model of a signed response head for the requested signatures: the
/// field lines named in `fields` (a field component reads only the lines
/// of its own name, RFC 9421 section 2.1), with `Cache-Control: no-store`
/// in place of the head's own (set on the response when a requested
/// signature is made). The whole head, so changed, is held to
/// [`MAX_FIELD_LINES`](crate::httpsig::message::MAX_FIELD_LINES).
pub(super) fn requested_model(
    status: StatusCode,
    h: &http::HeaderMap,
    fields: &[header::HeaderName],
) -> Result<crate::httpsig::Message, crate::httpsig::MessageError> {
    use crate::httpsig::message::{Field, MAX_FIELD_LINES};
    let cache_control = h.get_all(header::CACHE_CONTROL).iter().count();
    if h.len() - cache_control + 1 > MAX_FIELD_LINES {
        return Err(crate::httpsig::MessageError::TooManyFields);
    }
    let mut lines = Vec::with_capacity(fields.len());
    for n in fields {
        if *n == header::CACHE_CONTROL {
            lines.push(Field::from_http(n, &HeaderValue::from_static("no-store")));
        } else {
            lines.extend(h.get_all(n).iter().map(|v| Field::from_http(n, v)));
        }
    }
    Ok(crate::httpsig::Message::response(
        status.as_u16(),
        lines,
        Vec::new(),
    ))
}

/// The `Signature-Input` and `Signature` field lines of one requested
/// signature.
#[derive(Clone)]
pub(super) struct RequestedFields {
    pub(super) input: HeaderValue,
    pub(super) signature: HeaderValue,
}

impl RequestedFields {
    /// Sign `spec` (whose `@signature-params` value is `params_value`)
    /// over `msg` (and `rel`) afresh with `current`.
    pub(super) fn sign(
        current: &PublisherKey,
        msg: &crate::httpsig::Message,
        rel: Option<&crate::httpsig::Message>,
        spec: &SignatureSpec,
        params_value: &str,
    ) -> Result<RequestedFields, crate::httpsig::SignError> {
        let base = crate::httpsig::base_for(msg, rel, spec, params_value)?;
        RequestedFields::over(current, spec, params_value, &base)
    }

    /// The fields of `spec`'s signature by `current` over `base` (RFC 9421
    /// section 4), `params_value` being its `@signature-params` value.
    pub(super) fn over(
        current: &PublisherKey,
        spec: &SignatureSpec,
        params_value: &str,
        base: &[u8],
    ) -> Result<RequestedFields, crate::httpsig::SignError> {
        let (label, sig) = (spec.label.as_str(), current.key.sign(base)?);
        let value = |v: String| {
            HeaderValue::from_str(&v).map_err(|_| crate::httpsig::SignError::BadString(v))
        };
        let mut signature = String::with_capacity(label.len() + 3 + sig.len().div_ceil(3) * 4);
        signature.push_str(label);
        signature.push('=');
        crate::sfv::write_bare(&mut signature, &crate::sfv::BareItem::ByteSeq(sig));
        Ok(RequestedFields {
            input: value(format!("{label}={params_value}"))?,
            signature: value(signature)?,
        })
    }
}

/// The `Accept-Signature` members of `related` this layer may sign (see
/// the module documentation), as specs; a member that still cannot be
/// signed over the actual messages is skipped when signing.
pub(super) fn requested_specs(
    cfg: &SignConfig,
    parsed: &ParsedAccept,
    current: &PublisherKey,
    mandatory: &[ComponentId],
    t: i64,
) -> Vec<SignatureSpec> {
    let members = match &parsed.members {
        Ok(m) => m,
        Err(e) => {
            tracing::debug!("Accept-Signature not honoured: {e}");
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for r in members.iter().take(MAX_ACCEPTED) {
        if r.label == cfg.label {
            tracing::debug!(
                "Accept-Signature member {:?} not honoured: the default signature's label",
                r.label
            );
            continue;
        }
        if !mandatory.iter().all(|m| r.components.contains(m)) {
            tracing::debug!(
                "Accept-Signature member {:?} not honoured: it must cover @status, content-type and content-digest",
                r.label
            );
            continue;
        }
        match accept::spec_for(r, &current.key, &current.keyid, t, cfg.accept_lifetime) {
            Ok(mut s) => {
                s.params.retain(|(k, v)| {
                    k != "tag"
                        || matches!(v, crate::sfv::BareItem::String(t) if cfg.allowed_tags.contains(t))
                });
                out.push(s);
            }
            Err(e) => tracing::debug!("Accept-Signature member {:?} not honoured: {e}", r.label),
        }
    }
    out
}
