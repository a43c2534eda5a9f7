//! Keys from the forms a binding is given: an algorithm name, PEM or JWK
//! text, a JWK value, a JWK Set.

use super::error::{Failure, Outcome};
use crate::trust::{KeySource, StaticKeys};
use crate::{Algorithm, SigningKey, VerifyingKey};
use serde_json::Value;

/// The algorithm named `name` (a JOSE name such as `ES256`, or an RFC 9421
/// name such as `ecdsa-p256-sha256`).
///
/// # Errors
/// `usage` for an unknown name.
pub fn algorithm(name: &str) -> Outcome<Algorithm> {
    Algorithm::from_any_name(name).ok_or_else(|| {
        Failure::usage(format!(
            "unknown algorithm {name:?} (JOSE names ES256, ES384, EdDSA, PS512, RS256, HS256, or RFC 9421 names)"
        ))
    })
}

/// The private key a `pkcs11:` URI names (RFC 7512), as both bindings load
/// it: `alg` (an [`algorithm`] name; needed for RSA keys) and `kid` (else
/// the RFC 7638 thumbprint of the public key read from the token) as
/// [`crate::keys::pkcs11::load`] takes them. Every failure to load (a
/// malformed URI, a `pin-value`, no module or a file that is not one, no
/// PIN or a wrong one, no such token or key) is `key.unusable` naming its
/// cause. Loading talks to the token and may block.
///
/// # Errors
/// `input.unreadable` for a URI over [`crate::keys::pkcs11::MAX_URI`]
/// bytes, `usage` for an unknown `alg`, `key.unusable` as above.
#[cfg(feature = "pkcs11")]
pub fn load_pkcs11(uri: &str, alg: Option<&str>, kid: Option<String>) -> Outcome<SigningKey> {
    use crate::keys::pkcs11;
    if uri.len() > pkcs11::MAX_URI {
        return Err(Failure::too_large("uri", uri.len(), pkcs11::MAX_URI));
    }
    let opts = crate::keys::LoadOptions {
        alg: alg.map(algorithm).transpose()?,
        kid,
        passphrase: None,
    };
    pkcs11::load(uri, &opts).map_err(|e| Failure::bad_key(format!("pkcs11 key: {e}")))
}

/// The JWK files `agentsig keygen --out PREFIX` writes beside `PREFIX.pem`
/// (and `PREFIX.pub.pem`): `PREFIX.jwk.json`, then `PREFIX.jwks.json`.
/// None for a file of another name.
pub fn key_sidecars(path: &std::path::Path) -> Vec<std::path::PathBuf> {
    let Some(name) = path.to_str().and_then(|p| p.strip_suffix(".pem")) else {
        return Vec::new();
    };
    let prefix = name.strip_suffix(".pub").unwrap_or(name);
    [".jwk.json", ".jwks.json"]
        .iter()
        .map(|s| std::path::PathBuf::from(format!("{prefix}{s}")))
        .collect()
}

/// The kid `key` is published under in `jwk`, the JSON of a JWK or a JWK Set
/// (RFC 7517): the `kid` of the member holding the same public key (RFC 7638
/// thumbprint), if it has one. A key is published under one kid and signs
/// with it, so a verifier holding the published set finds it.
pub fn published_kid(jwk: &[u8], key: &VerifyingKey) -> Option<String> {
    let tp = key.thumbprint();
    crate::jwk::parse_keys(jwk).ok()?.into_iter().find_map(|j| {
        let kid = j.kid.clone()?;
        let alg = j.alg.as_deref().and_then(Algorithm::from_jose_name);
        let theirs = j.to_verifying_key(alg.or(Some(key.algorithm()))).ok()?;
        (theirs.thumbprint() == tp).then_some(kid)
    })
}

/// The kid recorded for `key` beside its key file at `path`
/// ([`key_sidecars`], [`published_kid`]): the one rule by which the command
/// line and both bindings name a key loaded from a file. Files larger than
/// [`crate::keys::MAX_KEY_FILE`] are skipped.
pub fn recorded_kid(path: &std::path::Path, key: &VerifyingKey) -> Option<String> {
    key_sidecars(path).into_iter().find_map(|p| {
        let meta = std::fs::metadata(&p).ok()?;
        if meta.len() > crate::keys::MAX_KEY_FILE {
            return None;
        }
        published_kid(&std::fs::read(&p).ok()?, key)
    })
}

/// A signing key from PEM text (PKCS#8, SEC1, PKCS#1), named as it is
/// published: `kid` when given, else the kid `jwk` (the JSON of its JWK or
/// of a JWK Set holding it) gives the same public key, else none (its RFC
/// 7638 thumbprint is used).
///
/// ```
/// use agentsig::facade::keys::signing_key_from_pem;
/// let key = agentsig::SigningKey::generate(agentsig::Algorithm::EcdsaP256Sha256)?;
/// let pem = key.pkcs8_pem().expect("an ECDSA key has a PKCS#8 form");
/// let mut jwk = key.verifying_key().to_jwk().to_value();
/// jwk["kid"] = "publisher-1".into();
/// let loaded = signing_key_from_pem(&pem, None, Some(jwk.to_string().as_bytes()))?;
/// assert_eq!(loaded.kid(), Some("publisher-1"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// `key.unusable` when the PEM holds no usable private key.
pub fn signing_key_from_pem(
    pem: &str,
    kid: Option<String>,
    jwk: Option<&[u8]>,
) -> Outcome<SigningKey> {
    let key = SigningKey::from_pem(pem).map_err(|e| Failure::bad_key(format!("key: {e}")))?;
    let kid = kid.or_else(|| jwk.and_then(|j| published_kid(j, key.verifying_key())));
    Ok(match kid {
        Some(k) => key.with_kid(k),
        None => key,
    })
}

/// A signing key from a PEM file at `path`, named as `agentsig sign --key`
/// names it: `kid` when given, else the kid `agentsig keygen --kid` recorded
/// beside the file ([`recorded_kid`]), else none (its RFC 7638 thumbprint).
///
/// # Errors
/// `input.unreadable` when the file cannot be read, `key.unusable` when it
/// holds no usable private key.
pub fn signing_key_from_file(path: &std::path::Path, kid: Option<String>) -> Outcome<SigningKey> {
    let key =
        SigningKey::from_file(path, &crate::keys::LoadOptions::default()).map_err(|e| match e {
            crate::keys::KeyError::Io { .. } => {
                Failure::bad_input("input.unreadable", e.to_string())
            }
            other => Failure::bad_key(format!("key: {other}")),
        })?;
    let kid = kid.or_else(|| recorded_kid(path, key.verifying_key()));
    Ok(match kid {
        Some(k) => key.with_kid(k),
        None => key,
    })
}

/// Refuse a shared secret where a public key is handed out: the JWK of a
/// secret (`kty` `oct`, member `k`) is the secret itself.
///
/// # Errors
/// `key.unusable` for an HS256 key.
pub fn refuse_secret(key: &VerifyingKey) -> Outcome<()> {
    if key.is_symmetric() {
        return Err(Failure::bad_key(
            "a shared secret (HS256) has no public JWK: its JWK would be the secret",
        ));
    }
    Ok(())
}

/// The public JWK (RFC 7517) of `key`, with `alg`, `use` and the `kid` it
/// was given.
///
/// # Errors
/// `key.unusable` for a shared secret ([`refuse_secret`]).
pub fn public_jwk(key: &SigningKey) -> Outcome<Value> {
    refuse_secret(key.verifying_key())?;
    let mut j = key.verifying_key().to_jwk().to_value();
    if let (Value::Object(m), Some(k)) = (&mut j, key.kid()) {
        m.insert("kid".into(), Value::String(k.to_owned()));
    }
    Ok(j)
}

/// A public key from a JWK value (RFC 7517); a shared secret (`kty` `oct`)
/// is not a public key.
///
/// # Errors
/// `key.unusable`.
pub fn jwk_key(v: &Value) -> Outcome<VerifyingKey> {
    let j = crate::jwk::Jwk::from_value(v).map_err(|e| Failure::bad_key(format!("JWK: {e}")))?;
    if j.kty == "oct" {
        return Err(Failure::bad_key(
            "JWK: a shared secret (kty oct) is not a public key",
        ));
    }
    j.to_verifying_key(None)
        .map_err(|e| Failure::bad_key(format!("JWK: {e}")))
}

/// A public key from PEM (SPKI, or a private key's PEM, whose public half
/// is taken) or from a JWK's JSON text.
///
/// ```
/// use agentsig::facade::load_public;
/// let key = agentsig::SigningKey::from_ed25519_seed(&[7u8; 32])?;
/// let jwk = key.verifying_key().to_jwk().to_value().to_string();
/// assert_eq!(load_public(&jwk)?.thumbprint(), key.verifying_key().thumbprint());
/// assert_eq!(load_public(r#"{"kty":"oct","k":"c2VjcmV0"}"#).unwrap_err().code, "key.unusable");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// `key.unusable`.
pub fn load_public(text: &str) -> Outcome<VerifyingKey> {
    if text.trim_start().starts_with('{') {
        let v: Value =
            serde_json::from_str(text).map_err(|e| Failure::bad_key(format!("JWK: {e}")))?;
        return jwk_key(&v);
    }
    VerifyingKey::from_pem(text)
        .or_else(|_| SigningKey::from_pem(text).map(|k| k.verifying_key().clone()))
        .map_err(|e| Failure::bad_key(format!("key: {e}")))
}

/// The trusted keys of a JWK Set's JSON bytes (RFC 7517 section 5), named
/// `what` in messages; a JWK Set never yields a shared secret (RFC 8725
/// section 3.1), and one with no usable key is refused.
///
/// # Errors
/// `input.unreadable` above `max` bytes, `key.unusable` for a set that
/// cannot be read or holds no usable key.
pub fn jwks_keys(bytes: &[u8], what: &str, max: usize) -> Outcome<StaticKeys> {
    if bytes.len() > max {
        return Err(Failure::too_large(what, bytes.len(), max));
    }
    let set = StaticKeys::from_jwks(bytes, KeySource::Jwks(what.into()), None)
        .map_err(|e| Failure::bad_key(format!("{what}: JWK Set: {e}")))?;
    if set.keys.is_empty() {
        return Err(Failure::bad_key(format!(
            "{what}: JWK Set: no usable key ({} skipped)",
            set.skipped.len()
        )));
    }
    Ok(set.keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both bindings load token keys through [`load_pkcs11`]: its bound,
    /// its algorithm names and its one error kind for every load failure.
    #[cfg(feature = "pkcs11")]
    #[test]
    fn pkcs11_loads_are_bounded_and_fail_as_bad_keys() {
        use crate::facade::ErrorKind;
        let long = format!("pkcs11:token={}", "a".repeat(crate::keys::pkcs11::MAX_URI));
        let e = load_pkcs11(&long, None, None).unwrap_err();
        assert_eq!(
            (e.kind, e.code.as_str()),
            (ErrorKind::BadInput, "input.unreadable")
        );
        let e = load_pkcs11("pkcs11:token=t", Some("no-such-alg"), None).unwrap_err();
        assert_eq!(e.code, "usage");
        let e = load_pkcs11("pkcs11:token=t;object=k?pin-value=1234", None, None).unwrap_err();
        assert_eq!(
            (e.kind, e.code.as_str()),
            (ErrorKind::BadKey, "key.unusable")
        );
        assert!(e.message.starts_with("pkcs11 key: "), "{}", e.message);
        assert!(e.message.contains("pin-value"), "{}", e.message);
    }

    #[test]
    fn names_secrets_and_sets() {
        assert_eq!(algorithm("ES256").unwrap(), Algorithm::EcdsaP256Sha256);
        assert_eq!(algorithm("nope").unwrap_err().code, "usage");
        let hs = SigningKey::from_hmac_secret(b"0123456789abcdef0123456789abcdef").unwrap();
        assert_eq!(public_jwk(&hs).unwrap_err().code, "key.unusable");
        let ed = SigningKey::from_ed25519_seed(&[3u8; 32])
            .unwrap()
            .with_kid("k1");
        assert_eq!(public_jwk(&ed).unwrap()["kid"], "k1");
        let set = format!(r#"{{"keys":[{}]}}"#, ed.verifying_key().to_jwk().to_value());
        assert_eq!(jwks_keys(set.as_bytes(), "jwks", 1 << 20).unwrap().len(), 1);
        assert_eq!(
            jwks_keys(br#"{"keys":[]}"#, "jwks", 1 << 20)
                .unwrap_err()
                .code,
            "key.unusable"
        );
        assert_eq!(
            jwks_keys(set.as_bytes(), "jwks", 4).unwrap_err().code,
            "input.unreadable"
        );
        assert!(load_public("not a key").is_err());
    }
}
