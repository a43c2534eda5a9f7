//! Signed key announcements for key continuity (layer 5, beside the
//! formats): a pinned key announces its successor keys with a detached JWS
//! (RFC 7515 Appendix F) over the RFC 8785 form of
//! `{"agent", "new_keys", "iat"}`, typed [`ANNOUNCEMENT_TYP`]. The pin store
//! itself ([`crate::pin`], layer 3) keeps only identities and thumbprints.

use crate::pin::{check_identity, check_thumbprints, PinError, Pins};
use crate::policy::{Context, JwsPolicy};
use crate::trust::{KeySource, StaticKeys};
use crate::{SigningKey, VerifyingKey};
use serde_json::Value;
use std::sync::Arc;

pub use crate::pin::{ANNOUNCEMENT_MAX_AGE, ANNOUNCEMENT_TYP};

/// The JCS bytes an announcement signs (see the module documentation).
///
/// # Errors
/// [`PinError`] when the identity or a thumbprint is malformed, a store limit is reached, the store
/// cannot be read or written, or an announcement is refused.
pub fn announcement_payload(
    identity: &str,
    new_keys: &[&str],
    iat: i64,
) -> Result<Vec<u8>, PinError> {
    check_identity(identity)?;
    check_thumbprints(new_keys)?;
    let v = serde_json::json!({"agent": identity, "new_keys": new_keys, "iat": iat});
    crate::jcs::canonicalize_value(&v).map_err(|e| PinError::Announcement(e.to_string()))
}

/// Sign an announcement of `new_keys` for `identity` with a pinned `key`:
/// returns the JCS payload and the detached compact JWS.
///
/// # Errors
/// [`PinError`] when the identity or a thumbprint is malformed, or the key cannot sign
/// ([`PinError::Announcement`]).
pub fn sign_announcement(
    identity: &str,
    new_keys: &[&str],
    iat: i64,
    key: &SigningKey,
) -> Result<(Vec<u8>, String), PinError> {
    let payload = announcement_payload(identity, new_keys, iat)?;
    let opts = crate::jws::SignOptions {
        typ: Some(ANNOUNCEMENT_TYP.to_owned()),
        ..Default::default()
    };
    let jws = crate::jws::sign_compact_detached(&payload, key, &opts)
        .map_err(|e| PinError::Announcement(e.to_string()))?;
    Ok((payload, jws))
}

impl Pins {
    /// Verify an announcement (`payload` its JSON, `jws` the detached
    /// compact JWS) against `candidates`, trusting only candidates pinned
    /// for `identity`; on success add the announced keys and return the new
    /// pin set. `now` and `skew` bound `iat`.
    ///
    /// # Errors
    /// [`PinError`] when the identity or a thumbprint is malformed, a store limit is reached, the
    /// store cannot be read or written, or an announcement is refused.
    pub fn accept_announcement(
        &self,
        identity: &str,
        payload: &[u8],
        jws: &str,
        candidates: &[VerifyingKey],
        now: i64,
        skew: i64,
    ) -> Result<Vec<String>, PinError> {
        let refuse = |m: String| PinError::Announcement(m);
        check_identity(identity)?;
        let pinned = self.store().get(identity)?;
        if pinned.is_empty() {
            return Err(refuse(format!(
                "{} has no pinned key",
                crate::text::quoted(identity)
            )));
        }
        let mut keys = StaticKeys::new();
        let mut any = false;
        for k in candidates {
            if pinned.contains(&k.thumbprint()) {
                keys = keys.with(k.clone(), KeySource::Pinned);
                any = true;
            }
        }
        if !any {
            return Err(refuse(
                "no candidate key is pinned for this identity".into(),
            ));
        }
        let cx = Context::new(Arc::new(keys));
        let policy = JwsPolicy::default().expected_typ([ANNOUNCEMENT_TYP]);
        let canonical = crate::jcs::canonicalize(payload).map_err(|e| refuse(e.to_string()))?;
        let _report = crate::jws::verify(&cx, &policy, jws, Some(&canonical))
            .map_err(|e| refuse(e.to_string()))?;
        let doc: Value =
            crate::json::parse_strict(&canonical).map_err(|e| refuse(e.to_string()))?;
        if doc.get("agent").and_then(Value::as_str) != Some(identity) {
            return Err(refuse("the announcement names another agent".into()));
        }
        let iat = doc
            .get("iat")
            .and_then(Value::as_i64)
            .ok_or_else(|| refuse("no integer iat".into()))?;
        if iat > now.saturating_add(skew) || now.saturating_sub(iat) > ANNOUNCEMENT_MAX_AGE {
            return Err(refuse(format!(
                "iat {} is outside [now - {ANNOUNCEMENT_MAX_AGE} s, now + {skew} s] (now {})",
                crate::text::rfc3339(iat),
                crate::text::rfc3339(now)
            )));
        }
        let new: Option<Vec<&str>> = doc
            .get("new_keys")
            .and_then(Value::as_array)
            .and_then(|a| a.iter().map(Value::as_str).collect());
        let new = new
            .filter(|n| !n.is_empty())
            .ok_or_else(|| refuse("new_keys is not a non-empty array of strings".into()))?;
        check_thumbprints(&new)?;
        self.store().add(identity, &new)
    }
}
