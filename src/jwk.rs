//! JSON Web Keys (RFC 7517), JWK Sets, and RFC 7638 thumbprints.
//!
//! Conversion to agentsig keys checks what RFC 7517 and RFC 8725 ask:
//! `kty`/`crv` agree with the algorithm, a JWK `alg` binds the key to that
//! algorithm, `use` (when present) is `sig`, `key_ops` (when present) allows
//! the operation, all members are canonical base64url, and EC points lie on
//! their curve.

use crate::b64;
use crate::keys::error::KeyError;
use serde_json::{Map, Value};

/// A JWK. Unknown members are kept in `other`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Jwk {
    /// Key type, `"EC"`, `"OKP"`, `"RSA"` or `"oct"` (RFC 7517 section 4.1).
    pub kty: String,
    /// Curve, `"P-256"`, `"P-384"` or `"Ed25519"` (RFC 7518 section 6.2.1.1, RFC 8037 section 2).
    pub crv: Option<String>,
    /// Base64url x coordinate (EC, RFC 7518 section 6.2.1.2) or public key (OKP, RFC 8037 section 2).
    pub x: Option<String>,
    /// Base64url y coordinate of an EC public key (RFC 7518 section 6.2.1.3).
    pub y: Option<String>,
    /// Base64url RSA modulus (RFC 7518 section 6.3.1.1).
    pub n: Option<String>,
    /// Base64url RSA public exponent (RFC 7518 section 6.3.1.2).
    pub e: Option<String>,
    /// Base64url symmetric key value for `kty` `"oct"` (RFC 7518 section 6.4.1).
    pub k: Option<String>,
    /// Base64url private key: EC private scalar, OKP private key or RSA private exponent (RFC 7518 sections 6.2.2.1 and 6.3.2.1, RFC 8037 section 2).
    pub d: Option<String>,
    /// Base64url RSA first prime factor (RFC 7518 section 6.3.2.2).
    pub p: Option<String>,
    /// Base64url RSA second prime factor (RFC 7518 section 6.3.2.3).
    pub q: Option<String>,
    /// Base64url RSA first factor CRT exponent (RFC 7518 section 6.3.2.4).
    pub dp: Option<String>,
    /// Base64url RSA second factor CRT exponent (RFC 7518 section 6.3.2.5).
    pub dq: Option<String>,
    /// Base64url RSA first CRT coefficient (RFC 7518 section 6.3.2.6).
    pub qi: Option<String>,
    /// Key ID (RFC 7517 section 4.5).
    pub kid: Option<String>,
    /// Algorithm the key is meant for, a JWA name such as `"ES256"` (RFC 7517 section 4.4).
    pub alg: Option<String>,
    /// Public key use, `"sig"` or `"enc"` (RFC 7517 section 4.2); the JSON member is `use`.
    pub use_: Option<String>,
    /// Permitted key operations, e.g. `["verify"]` (RFC 7517 section 4.3).
    pub key_ops: Option<Vec<String>>,
    /// Every other member, kept as read.
    pub other: Map<String, Value>,
}

/// Members that carry private key material (RFC 7518 section 6).
const PRIVATE_MEMBERS: [&str; 7] = ["d", "p", "q", "dp", "dq", "qi", "oth"];

impl Jwk {
    pub(crate) fn ec(crv: &str, x: &[u8], y: &[u8]) -> Jwk {
        Jwk {
            kty: "EC".into(),
            crv: Some(crv.into()),
            x: Some(b64::encode(x)),
            y: Some(b64::encode(y)),
            ..Jwk::default()
        }
    }

    pub(crate) fn okp(crv: &str, x: &[u8]) -> Jwk {
        Jwk {
            kty: "OKP".into(),
            crv: Some(crv.into()),
            x: Some(b64::encode(x)),
            ..Jwk::default()
        }
    }

    pub(crate) fn rsa(n: &[u8], e: &[u8]) -> Jwk {
        Jwk {
            kty: "RSA".into(),
            n: Some(b64::encode(n)),
            e: Some(b64::encode(e)),
            ..Jwk::default()
        }
    }

    pub(crate) fn oct(k: &[u8]) -> Jwk {
        Jwk {
            kty: "oct".into(),
            k: Some(b64::encode(k)),
            ..Jwk::default()
        }
    }

    /// True when the JWK carries private material (or is a symmetric key).
    pub fn is_private(&self) -> bool {
        self.kty == "oct"
            || self.d.is_some()
            || PRIVATE_MEMBERS.iter().any(|m| self.other.contains_key(*m))
    }

    /// Parse one JWK object.
    ///
    /// # Errors
    /// [`KeyError`] when the key material is malformed or invalid, of an unsupported type or size,
    /// or bound to another algorithm than the one requested (an encrypted key also needs its
    /// passphrase).
    pub fn from_value(v: &Value) -> Result<Jwk, KeyError> {
        let obj = v
            .as_object()
            .ok_or_else(|| KeyError::Jwk("a JWK must be a JSON object".into()))?;
        let mut j = Jwk::default();
        for (name, val) in obj {
            let s = || -> Result<String, KeyError> {
                val.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| KeyError::Jwk(format!("member {name:?} must be a string")))
            };
            match name.as_str() {
                "kty" => j.kty = s()?,
                "crv" => j.crv = Some(s()?),
                "x" => j.x = Some(s()?),
                "y" => j.y = Some(s()?),
                "n" => j.n = Some(s()?),
                "e" => j.e = Some(s()?),
                "k" => j.k = Some(s()?),
                "d" => j.d = Some(s()?),
                "p" => j.p = Some(s()?),
                "q" => j.q = Some(s()?),
                "dp" => j.dp = Some(s()?),
                "dq" => j.dq = Some(s()?),
                "qi" => j.qi = Some(s()?),
                "kid" => j.kid = Some(s()?),
                "alg" => j.alg = Some(s()?),
                "use" => j.use_ = Some(s()?),
                "key_ops" => {
                    let arr = val
                        .as_array()
                        .ok_or_else(|| KeyError::Jwk("key_ops must be an array".into()))?;
                    let mut ops = Vec::new();
                    for o in arr {
                        let o = o.as_str().ok_or_else(|| {
                            KeyError::Jwk("key_ops members must be strings".into())
                        })?;
                        if ops.iter().any(|x: &String| x == o) {
                            return Err(KeyError::Jwk(format!("key_ops lists {o:?} twice")));
                        }
                        ops.push(o.to_owned());
                    }
                    j.key_ops = Some(ops);
                }
                _ => {
                    j.other.insert(name.clone(), val.clone());
                }
            }
        }
        if j.kty.is_empty() {
            return Err(KeyError::Jwk("missing kty".into()));
        }
        Ok(j)
    }

    /// The JWK as a JSON object (members in a fixed, readable order).
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        let mut put = |k: &str, v: &Option<String>| {
            if let Some(v) = v {
                m.insert(k.into(), Value::String(v.clone()));
            }
        };
        put("kty", &Some(self.kty.clone()));
        put("crv", &self.crv);
        put("x", &self.x);
        put("y", &self.y);
        put("n", &self.n);
        put("e", &self.e);
        put("k", &self.k);
        put("d", &self.d);
        put("p", &self.p);
        put("q", &self.q);
        put("dp", &self.dp);
        put("dq", &self.dq);
        put("qi", &self.qi);
        put("kid", &self.kid);
        put("alg", &self.alg);
        put("use", &self.use_);
        if let Some(ops) = &self.key_ops {
            m.insert(
                "key_ops".into(),
                Value::Array(ops.iter().cloned().map(Value::String).collect()),
            );
        }
        for (k, v) in &self.other {
            m.insert(k.clone(), v.clone());
        }
        Value::Object(m)
    }

    /// Compact JSON text of [`Jwk::to_value`].
    pub fn to_json_string(&self) -> String {
        self.to_value().to_string()
    }

    /// RFC 7638 thumbprint: SHA-256 over the required members in
    /// lexicographic order, no whitespace, base64url.
    pub fn thumbprint(&self) -> String {
        fn q(s: &Option<String>) -> String {
            // Member values are base64url or registered names: no escaping needed,
            // but serialise through serde_json to be safe.
            serde_json::to_string(s.as_deref().unwrap_or("")).unwrap_or_default()
        }
        let json = match self.kty.as_str() {
            "EC" => format!(
                r#"{{"crv":{},"kty":"EC","x":{},"y":{}}}"#,
                q(&self.crv),
                q(&self.x),
                q(&self.y)
            ),
            "OKP" => format!(
                r#"{{"crv":{},"kty":"OKP","x":{}}}"#,
                q(&self.crv),
                q(&self.x)
            ),
            "RSA" => format!(r#"{{"e":{},"kty":"RSA","n":{}}}"#, q(&self.e), q(&self.n)),
            "oct" => format!(r#"{{"k":{},"kty":"oct"}}"#, q(&self.k)),
            other => format!(r#"{{"kty":{}}}"#, q(&Some(other.to_owned()))),
        };
        b64::encode(ring::digest::digest(&ring::digest::SHA256, json.as_bytes()).as_ref())
    }
}

/// Parse a JWK or a JWK Set (`{"keys":[...]}`) from strict JSON.
///
/// In a set, members with an unknown `kty` or unsupported curve are skipped
/// (RFC 7517 section 5: "SHOULD be ignored"); a set whose `kid` values repeat
/// is refused, because a `kid` must select one key, and so is a set that mixes
/// shared secrets (`oct`) with asymmetric keys.
///
/// # Errors
/// [`KeyError`] when the key material is malformed or invalid, of an unsupported type or size, or
/// bound to another algorithm than the one requested (an encrypted key also needs its passphrase).
pub fn parse_keys(data: &[u8]) -> Result<Vec<Jwk>, KeyError> {
    parse_keys_reporting(data).map(|(keys, _)| keys.into_iter().map(|(_, j)| j).collect())
}

/// Why a JWK Set member was not taken (RFC 7517 section 5: members a client
/// cannot use are ignored, but the caller is told which and why).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SkipReason {
    /// The member is not a well-formed JWK (RFC 7517 section 4).
    #[error("malformed member: {0}")]
    Malformed(KeyError),
    /// The `kty` is none of `EC`, `OKP`, `RSA` (RFC 7518 section 6.1).
    #[error("unsupported kty {}", crate::text::quoted(.0))]
    UnsupportedKeyType(String),
    /// A shared secret (`kty` `oct`) is never trusted from a published set
    /// (RFC 8725 section 3.1).
    #[error("a shared secret (kty \"oct\") is never trusted from a key set")]
    SharedSecret,
    /// The member parses but is not a usable verification key for this
    /// crate (unsupported curve or `alg`, `use` other than `sig`, an RSA key
    /// without `alg` when no algorithm was given, bad key material).
    #[error("unusable key: {0}")]
    Unusable(KeyError),
}

/// A JWK Set member that was skipped, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedKey {
    /// Its position in the set's `keys` array, from 0.
    pub index: usize,
    /// Its `kid`, when it has one.
    pub kid: Option<String>,
    /// Why it was skipped.
    pub reason: SkipReason,
}

impl std::fmt::Display for SkippedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "keys[{}]", self.index)?;
        if let Some(kid) = &self.kid {
            write!(f, " (kid {})", crate::text::quoted(kid))?;
        }
        write!(f, ": {}", self.reason)
    }
}

/// The members of a set with their index, and the members skipped (a single
/// JWK, not a set, is index 0).
pub(crate) type ParsedSet = (Vec<(usize, Jwk)>, Vec<SkippedKey>);

/// [`parse_keys`] with each member's index, and the skipped members.
pub(crate) fn parse_keys_reporting(data: &[u8]) -> Result<ParsedSet, KeyError> {
    let v = crate::json::parse_strict_with(
        data,
        &crate::json::JsonLimits {
            max_bytes: 1024 * 1024,
            max_depth: 16,
        },
    )
    .map_err(|e| KeyError::Jwk(e.to_string()))?;
    match v.get("keys") {
        Some(Value::Array(arr)) => {
            let mut out: Vec<(usize, Jwk)> = Vec::new();
            let mut skipped = Vec::new();
            for (index, item) in arr.iter().enumerate() {
                let j = match Jwk::from_value(item) {
                    Ok(j) => j,
                    Err(e) => {
                        skipped.push(SkippedKey {
                            index,
                            kid: item.get("kid").and_then(Value::as_str).map(str::to_owned),
                            reason: SkipReason::Malformed(e),
                        });
                        continue;
                    }
                };
                if !matches!(j.kty.as_str(), "EC" | "OKP" | "RSA" | "oct") {
                    skipped.push(SkippedKey {
                        index,
                        kid: j.kid.clone(),
                        reason: SkipReason::UnsupportedKeyType(j.kty.clone()),
                    });
                    continue;
                }
                if let Some(kid) = &j.kid {
                    if out.iter().any(|(_, o)| o.kid.as_ref() == Some(kid)) {
                        return Err(KeyError::Jwk(format!(
                            "kid {kid:?} appears twice in the key set"
                        )));
                    }
                }
                out.push((index, j));
            }
            // A set that holds public keys is meant to be published; a shared
            // secret beside them is a leak or an algorithm-confusion setup
            // (Wycheproof json_web_key_test "MixedKeySet": reject).
            let symmetric = out.iter().filter(|(_, j)| j.kty == "oct").count();
            if symmetric > 0 && symmetric < out.len() {
                return Err(KeyError::Jwk(
                    "the key set mixes shared secrets (kty \"oct\") with public keys".into(),
                ));
            }
            Ok((out, skipped))
        }
        Some(_) => Err(KeyError::Jwk("\"keys\" must be an array".into())),
        None => Ok((vec![(0, Jwk::from_value(&v)?)], Vec::new())),
    }
}

/// Select keys from a set: the one with `kid`, or all when no kid is given.
///
/// # Errors
/// [`KeyError`] when the key material is malformed or invalid, of an unsupported type or size, or
/// bound to another algorithm than the one requested (an encrypted key also needs its passphrase).
pub fn select<'a>(keys: &'a [Jwk], kid: Option<&str>) -> Result<Vec<&'a Jwk>, KeyError> {
    match kid {
        Some(k) => {
            let found: Vec<&Jwk> = keys
                .iter()
                .filter(|j| j.kid.as_deref() == Some(k))
                .collect();
            if found.is_empty() {
                Err(KeyError::KidNotFound(k.to_owned()))
            } else {
                Ok(found)
            }
        }
        None if keys.is_empty() => Err(KeyError::EmptyKeySet),
        None => Ok(keys.iter().collect()),
    }
}

/// Select exactly one JWK from JWK or JWKS bytes; `private` requires private material.
pub(crate) fn select_one(data: &[u8], kid: Option<&str>, private: bool) -> Result<Jwk, KeyError> {
    let keys = parse_keys(data)?;
    let mut found: Vec<&Jwk> = select(&keys, kid)?;
    if private {
        found.retain(|j| j.is_private());
        if found.is_empty() {
            return Err(KeyError::NotPrivate);
        }
    }
    match found.len() {
        1 => Ok(found[0].clone()),
        n => Err(KeyError::AmbiguousKeySet(n)),
    }
}

/// Anything with a public JWK form (implemented by
/// [`crate::keys::VerifyingKey`]); lets this module build JWK Sets without
/// depending on the key types.
pub trait ToJwk {
    /// The public JWK.
    fn to_jwk(&self) -> Jwk;
}

/// A JWK Set document (RFC 7517 section 5) with the given public keys.
pub fn jwks_document<K: ToJwk>(keys: &[&K]) -> Value {
    let arr = keys.iter().map(|k| k.to_jwk().to_value()).collect();
    let mut m = Map::new();
    m.insert("keys".into(), Value::Array(arr));
    Value::Object(m)
}
