//! The publisher's keys: several for rotation, one current.

use crate::keys::SigningKey;
use serde_json::Value;
use std::sync::Arc;

/// One signing key and the `keyid` it signs under (its `kid`, else its
/// RFC 7638 thumbprint: the same value the JWKS lists).
#[derive(Debug)]
pub struct PublisherKey {
    /// The private key.
    pub key: SigningKey,
    /// The `keyid` parameter / JWK `kid`.
    pub keyid: String,
}

/// The keys of a publisher: the first is current and signs; all are listed
/// in the JWK Set, so signatures and `.jws` files made with a retired key
/// still verify through it (key rotation).
#[derive(Debug)]
pub struct KeyRing {
    keys: Vec<Arc<PublisherKey>>,
}

/// Why a [`KeyRing`] cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyRingError {
    /// No key given.
    #[error("a key ring needs at least one signing key")]
    Empty,
    /// A shared secret: publishing it in a JWK Set would disclose it.
    #[error("key {0:?} is a shared secret (HMAC); a publisher signs with an asymmetric key")]
    Symmetric(String),
}

impl KeyRing {
    /// Keys in order; the first is the current one.
    ///
    /// # Errors
    /// [`KeyRingError`] when a key file cannot be read or loaded.
    pub fn new(keys: Vec<SigningKey>) -> Result<KeyRing, KeyRingError> {
        if keys.is_empty() {
            return Err(KeyRingError::Empty);
        }
        if let Some(k) = keys.iter().find(|k| k.verifying_key().is_symmetric()) {
            return Err(KeyRingError::Symmetric(k.kid_or_thumbprint()));
        }
        Ok(KeyRing {
            keys: keys
                .into_iter()
                .map(|key| {
                    let keyid = key.kid_or_thumbprint();
                    let key = key.with_kid(keyid.clone());
                    Arc::new(PublisherKey { key, keyid })
                })
                .collect(),
        })
    }

    /// One key.
    ///
    /// # Errors
    /// [`KeyRingError`] when a key file cannot be read or loaded.
    pub fn single(key: SigningKey) -> Result<KeyRing, KeyRingError> {
        KeyRing::new(vec![key])
    }

    /// The key that signs.
    pub fn current(&self) -> Arc<PublisherKey> {
        self.keys[0].clone()
    }

    /// Every key, current first.
    pub fn all(&self) -> &[Arc<PublisherKey>] {
        &self.keys
    }

    /// The public JWK Set (RFC 7517 section 5) of every key, each with its
    /// `kid`; never a private member.
    pub fn jwks(&self) -> Value {
        let vks: Vec<_> = self.keys.iter().map(|k| k.key.verifying_key()).collect();
        crate::jwk::jwks_document(&vks)
    }
}
