//! The signature cache of the signing layer: per body, the RFC 9530
//! `Content-Digest` computed once and the default signature made at most
//! once per second and key; requested signatures shared by label and
//! signature base; `Accept-Signature` parses kept per exact value. What
//! may be shared, and when, is stated on [`SignCache`].

use super::accept::{ParsedAccept, RequestedFields};
use super::{lock, mandatory, SignConfig, SignResponseError};
use crate::httpsig::{sign, SignatureSpec};
use crate::server::keys::PublisherKey;
use bytes::Bytes;
use http::{header, HeaderValue, Response, StatusCode};
use std::sync::{Arc, Mutex};

/// The message model of a response head (the signature base never
/// includes the content itself, RFC 9421 section 2).
pub(super) fn model(
    status: StatusCode,
    h: &http::HeaderMap,
) -> Result<crate::httpsig::Message, crate::httpsig::MessageError> {
    let mut m = Response::new(&[][..]);
    *m.status_mut() = status;
    *m.headers_mut() = h.clone();
    crate::httpsig::Message::from_response(&m)
}

/// What the default signature covers besides the key and `created`.
pub(super) struct DefaultKey<'a> {
    pub(super) status: StatusCode,
    pub(super) content_type: Option<&'a HeaderValue>,
    pub(super) body: &'a Bytes,
}

impl DefaultKey<'_> {
    /// A cheap slot hash: status, type, length and a sample of the bytes
    /// (a collision only evicts; a hit is decided by the full comparison).
    pub(super) fn slot(&self) -> usize {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.status.as_u16().hash(&mut h);
        self.content_type.map(|v| v.as_bytes()).hash(&mut h);
        let b = self.body.as_ref();
        b.len().hash(&mut h);
        b[..b.len().min(64)].hash(&mut h);
        b[b.len().saturating_sub(64)..].hash(&mut h);
        (h.finish() as usize) % CACHE_SLOTS
    }
}

/// The digest and default signature of one body.
#[derive(Clone)]
pub(super) struct DefaultSignature {
    pub(super) digest: HeaderValue,
    pub(super) input: HeaderValue,
    pub(super) signature: HeaderValue,
}

impl DefaultSignature {
    /// Sign the default signature at `t` (with the digest if known).
    pub(super) fn make(
        cfg: &SignConfig,
        current: &PublisherKey,
        t: i64,
        key: &DefaultKey<'_>,
        digest: Option<HeaderValue>,
        head: Option<&http::HeaderMap>,
    ) -> Result<DefaultSignature, SignResponseError> {
        let digest = match digest {
            Some(d) => d,
            None => {
                let d = crate::digest::content_digest(key.body);
                HeaderValue::from_maybe_shared(Bytes::from(d.clone()))
                    .map_err(|_| crate::httpsig::SignError::BadString(d))?
            }
        };
        let mut h = http::HeaderMap::with_capacity(2);
        for ct in head
            .map(|h| h.get_all(header::CONTENT_TYPE).iter().collect())
            .unwrap_or_else(|| key.content_type.into_iter().collect::<Vec<_>>())
        {
            h.append(header::CONTENT_TYPE, ct.clone());
        }
        h.insert(
            header::HeaderName::from_static("content-digest"),
            digest.clone(),
        );
        let mut spec = SignatureSpec::new(cfg.label.clone());
        spec.components = mandatory(key.content_type.is_some());
        spec = spec
            .created(t)
            .keyid(&current.keyid)
            .alg(current.key.algorithm());
        if let Some(e) = cfg.expires_in {
            spec = spec.expires(t.saturating_add(e));
        }
        let s = sign(&model(key.status, &h)?, None, &spec, &current.key)?;
        let value = |v: String| {
            HeaderValue::from_maybe_shared(Bytes::from(v.clone()))
                .map_err(|_| crate::httpsig::SignError::BadString(v))
        };
        Ok(DefaultSignature {
            digest,
            input: value(s.signature_input)?,
            signature: value(s.signature)?,
        })
    }
}

/// Slots of a [`SignCache`] (for default and for requested signatures).
pub(super) const CACHE_SLOTS: usize = 32;

/// Slots a body's default signature may occupy: its own (by
/// [`DefaultKey::slot`]) and the next ones, so that a few bodies whose
/// slots collide do not evict each other.
pub(super) const PROBE: usize = 4;

/// Largest signature base of a requested signature a [`SignCache`] keeps.
pub(super) const REQUESTED_MAX_BASE: usize = 4 * 1024;

/// Largest body whose digest and signature a [`SignCache`] keeps (a slot
/// holds a reference to the bytes: at most 32 x 256 KiB).
pub(super) const CACHE_MAX_BODY: usize = 256 * 1024;

/// One cached body: its bytes (kept, so that a hit is decided by comparing
/// them), digest, and the default signature of one second and key.
pub(super) struct CacheEntry {
    pub(super) status: StatusCode,
    pub(super) content_type: Option<HeaderValue>,
    pub(super) body: Bytes,
    pub(super) key: Arc<PublisherKey>,
    pub(super) created: i64,
    pub(super) sig: DefaultSignature,
}

impl CacheEntry {
    /// The entry for `key`'s bytes signed by `current` at `t`.
    pub(super) fn of(
        key: &DefaultKey<'_>,
        current: &Arc<PublisherKey>,
        t: i64,
        sig: DefaultSignature,
    ) -> CacheEntry {
        CacheEntry {
            status: key.status,
            content_type: key.content_type.cloned(),
            body: key.body.clone(),
            key: current.clone(),
            created: t,
            sig,
        }
    }

    pub(super) fn same_content(&self, k: &DefaultKey<'_>) -> bool {
        self.status == k.status
            && self.content_type.as_ref() == k.content_type
            && (self.body.as_ptr() == k.body.as_ptr() && self.body.len() == k.body.len()
                || self.body == *k.body)
    }
}

/// The default signatures of one [`SignLayer`](super::SignLayer), shared by all its
/// services: per body (the same status, `Content-Type` and bytes, compared
/// in full) the `Content-Digest`, computed once, and the signature of the
/// current second and key, made at most once per second once the bytes
/// are cached (requests racing on bytes not yet cached may each sign; they
/// never wait for unrelated responses). A body may take its own slot or
/// one of the `PROBE - 1` next ones, so up to `CACHE_SLOTS` bodies
/// are kept at once whatever their slot hashes; beyond, the body signed
/// longest ago is replaced. A new second, a
/// new current key or other bytes always sign afresh, so no response
/// carries a `created` other than the current second or a signature over
/// other bytes.
///
/// Signatures requested with `Accept-Signature` are shared the same way,
/// by their label and signature base: a requested member without a
/// `nonce` whose label and base (every covered response and `;req`
/// request component value, and `@signature-params` with its `created`,
/// `keyid`, `alg`) are byte for byte those of a signature made by the same
/// key in the same second gets that signature; anything else (a nonce, another value of any
/// covered component, another second or key) is signed afresh. A
/// signature is thus never given for other bytes, nor with a `created`
/// other than the current second.
///
/// `Accept-Signature` field values are parsed once per distinct value:
/// the last [`ACCEPT_SLOTS`] values (each at most [`ACCEPT_MAX_FIELD`]
/// bytes, sent on one field line) are kept with their parse, and a hit is
/// decided by comparing the whole value, byte for byte. The parse depends
/// on nothing but those bytes; what the members may be signed for (the
/// key, the second, the response) is decided per response.
#[derive(Default)]
pub struct SignCache {
    slots: [Mutex<Option<CacheEntry>>; CACHE_SLOTS],
    requested: [Mutex<Option<RequestedEntry>>; CACHE_SLOTS],
    pub(super) accept: [Mutex<Option<AcceptEntry>>; ACCEPT_SLOTS],
}

/// `Accept-Signature` values whose parse a [`SignCache`] keeps (clients
/// send few distinct values).
pub const ACCEPT_SLOTS: usize = 8;

/// Longest `Accept-Signature` value a [`SignCache`] keeps; a longer one is
/// parsed for every request.
pub const ACCEPT_MAX_FIELD: usize = 1024;

/// One requested signature: the label and exact base signed, by which
/// key, when, and its field lines.
pub(super) struct RequestedEntry {
    pub(super) key: Arc<PublisherKey>,
    pub(super) created: i64,
    pub(super) label: String,
    pub(super) base: Vec<u8>,
    pub(super) fields: RequestedFields,
}

/// One `Accept-Signature` value and its parse.
pub(super) struct AcceptEntry {
    pub(super) field: Vec<u8>,
    pub(super) parsed: Arc<ParsedAccept>,
}

pub(super) fn slot_of(parts: &[&[u8]], n: usize) -> usize {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    parts.hash(&mut h);
    (h.finish() as usize) % n
}

impl std::fmt::Debug for SignCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignCache").finish_non_exhaustive()
    }
}

impl SignCache {
    /// The parse of the `Accept-Signature` value `field`: the one kept for
    /// the same bytes, else a new one (then kept, when at most
    /// [`ACCEPT_MAX_FIELD`] bytes long).
    pub(super) fn accept_parsed(&self, field: &[u8]) -> Arc<ParsedAccept> {
        if field.len() > ACCEPT_MAX_FIELD {
            return Arc::new(ParsedAccept::parse(field));
        }
        let slot = &self.accept[slot_of(&[field], ACCEPT_SLOTS)];
        if let Some(e) = lock(slot).as_ref() {
            if e.field == field {
                return e.parsed.clone();
            }
        }
        let parsed = Arc::new(ParsedAccept::parse(field));
        *lock(slot) = Some(AcceptEntry {
            field: field.to_vec(),
            parsed: parsed.clone(),
        });
        parsed
    }

    /// The fields of the requested signature `spec` (whose
    /// `@signature-params` value is `params_value`) over `msg` (and `rel`)
    /// by `current` in second `t`: those made for the same label, base
    /// bytes, key and second if kept, else new ones (then kept). Bases
    /// over 4 KiB are always signed afresh.
    pub(super) fn requested_signature(
        &self,
        current: &Arc<PublisherKey>,
        t: i64,
        msg: &crate::httpsig::Message,
        rel: Option<&crate::httpsig::Message>,
        spec: &SignatureSpec,
        params_value: &str,
    ) -> Result<RequestedFields, crate::httpsig::SignError> {
        let base = crate::httpsig::base_for(msg, rel, spec, params_value)?;
        if base.len() > REQUESTED_MAX_BASE {
            return RequestedFields::over(current, spec, params_value, &base);
        }
        let slot = &self.requested[slot_of(&[spec.label.as_bytes(), &base], CACHE_SLOTS)];
        if let Some(e) = lock(slot).as_ref() {
            if e.created == t
                && Arc::ptr_eq(&e.key, current)
                && e.label == spec.label
                && e.base == base
            {
                return Ok(e.fields.clone());
            }
        }
        // Signed without holding the slot: unrelated requests never wait.
        let fields = RequestedFields::over(current, spec, params_value, &base)?;
        *lock(slot) = Some(RequestedEntry {
            key: current.clone(),
            created: t,
            label: spec.label.clone(),
            base,
            fields: fields.clone(),
        });
        Ok(fields)
    }

    pub(super) fn get_or_sign(
        &self,
        cfg: &SignConfig,
        current: &Arc<PublisherKey>,
        t: i64,
        key: &DefaultKey<'_>,
    ) -> Result<DefaultSignature, SignResponseError> {
        if key.body.len() > CACHE_MAX_BODY {
            return DefaultSignature::make(cfg, current, t, key, None, None);
        }
        // The body's own slot and the next ones (linear probing): bodies
        // whose slots collide each keep their signature while the cache has
        // room, rather than evicting each other on every request (which,
        // with a key in a PKCS#11 token, would be a token call per
        // request). A poisoned slot only means another request panicked
        // while holding it; its entry is replaced either way.
        let home = key.slot();
        // Where new bytes go: an empty probed slot, else the one signed
        // longest ago.
        let mut victim: Option<(usize, i64)> = None;
        for p in 0..PROBE {
            let i = (home + p) % CACHE_SLOTS;
            let mut slot = lock(&self.slots[i]);
            let created = match slot.as_ref() {
                Some(e) if e.same_content(key) => {
                    if e.created == t && Arc::ptr_eq(&e.key, current) {
                        return Ok(e.sig.clone());
                    }
                    // The same bytes in a new second (or under a new key):
                    // signed under the slot's lock, so that the other
                    // requests for these bytes in this second wait for
                    // this one signature instead of making their own.
                    let digest = Some(e.sig.digest.clone());
                    let sig = DefaultSignature::make(cfg, current, t, key, digest, None)?;
                    *slot = Some(CacheEntry::of(key, current, t, sig.clone()));
                    return Ok(sig);
                }
                Some(e) => e.created,
                None => i64::MIN,
            };
            if victim.is_none_or(|(_, c)| created < c) {
                victim = Some((i, created));
            }
        }
        // Other bytes than any probed slot holds (a new version, or a
        // service whose every answer differs): digest and sign without
        // holding a slot, so that unrelated responses never wait for each
        // other, then keep the result.
        let sig = DefaultSignature::make(cfg, current, t, key, None, None)?;
        let i = victim.map_or(home, |(i, _)| i);
        *lock(&self.slots[i]) = Some(CacheEntry::of(key, current, t, sig.clone()));
        Ok(sig)
    }
}
