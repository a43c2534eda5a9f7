//! JSON Web Keys (RFC 7517), JWK Sets, and RFC 7638 thumbprints.
//!
//! Conversion to agentsig keys checks what RFC 7517 and RFC 8725 ask:
//! `kty`/`crv` agree with the algorithm, a JWK `alg` binds the key to that
//! algorithm, `use` (when present) is `sig`, `key_ops` (when present) allows
//! the operation, all members are canonical base64url, and EC points lie on
//! their curve.

use crate::alg::Algorithm;
use crate::b64;
use crate::keys::{KeyError, SigningKey, VerifyingKey};
use serde_json::{Map, Value};

/// A JWK. Unknown members are kept in `other`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Jwk {
    pub kty: String,
    pub crv: Option<String>,
    pub x: Option<String>,
    pub y: Option<String>,
    pub n: Option<String>,
    pub e: Option<String>,
    pub k: Option<String>,
    pub d: Option<String>,
    pub p: Option<String>,
    pub q: Option<String>,
    pub dp: Option<String>,
    pub dq: Option<String>,
    pub qi: Option<String>,
    pub kid: Option<String>,
    pub alg: Option<String>,
    pub use_: Option<String>,
    pub key_ops: Option<Vec<String>>,
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

    /// The algorithm this JWK is bound to: its `alg`, checked against the key
    /// type and the caller's hint.
    fn bound_alg(&self, hint: Option<Algorithm>) -> Result<Algorithm, KeyError> {
        let from_jwk = match &self.alg {
            Some(a) => Some(
                Algorithm::from_jose_name(a)
                    .ok_or_else(|| KeyError::Jwk(format!("unsupported JWK alg {a:?}")))?,
            ),
            None => None,
        };
        let implied = match (self.kty.as_str(), self.crv.as_deref()) {
            ("EC", Some("P-256")) => Some(Algorithm::EcdsaP256Sha256),
            ("EC", Some("P-384")) => Some(Algorithm::EcdsaP384Sha384),
            ("EC", c) => return Err(KeyError::UnsupportedKeyType(format!("EC curve {c:?}"))),
            ("OKP", Some("Ed25519")) => Some(Algorithm::Ed25519),
            ("OKP", c) => return Err(KeyError::UnsupportedKeyType(format!("OKP curve {c:?}"))),
            ("RSA", _) => None,
            ("oct", _) => Some(Algorithm::HmacSha256),
            (k, _) => return Err(KeyError::UnsupportedKeyType(format!("kty {k:?}"))),
        };
        let family: &[Algorithm] = if self.kty == "RSA" {
            &[Algorithm::RsaV15Sha256, Algorithm::RsaPssSha512]
        } else {
            &[]
        };
        let mut alg = implied;
        for cand in [from_jwk, hint].into_iter().flatten() {
            match alg {
                Some(a) if a != cand => {
                    return Err(KeyError::AlgorithmMismatch {
                        key: a,
                        requested: cand,
                    });
                }
                Some(_) => {}
                None if family.contains(&cand) => alg = Some(cand),
                None => {
                    return Err(KeyError::AlgorithmMismatch {
                        key: Algorithm::RsaV15Sha256,
                        requested: cand,
                    })
                }
            }
        }
        alg.ok_or(KeyError::AlgorithmRequired)
    }

    fn check_use(&self, op: &str) -> Result<(), KeyError> {
        if let Some(u) = &self.use_ {
            if u != "sig" {
                return Err(KeyError::Jwk(format!("use is {u:?}, not \"sig\"")));
            }
        }
        if let Some(ops) = &self.key_ops {
            if !ops.iter().any(|o| o == op) {
                return Err(KeyError::Jwk(format!("key_ops does not allow {op:?}")));
            }
        }
        Ok(())
    }

    fn field(&self, name: &str, v: &Option<String>) -> Result<Vec<u8>, KeyError> {
        let s = v
            .as_ref()
            .ok_or_else(|| KeyError::Jwk(format!("{} JWK lacks {name:?}", self.kty)))?;
        b64::decode(s).map_err(|e| KeyError::Jwk(format!("member {name:?}: {e}")))
    }

    /// The verifying key (public half) of this JWK.
    pub fn to_verifying_key(&self, hint: Option<Algorithm>) -> Result<VerifyingKey, KeyError> {
        let alg = self.bound_alg(hint)?;
        self.check_use("verify")?;
        let key = match alg {
            Algorithm::EcdsaP256Sha256 | Algorithm::EcdsaP384Sha384 => {
                let x = self.field("x", &self.x)?;
                let y = self.field("y", &self.y)?;
                let len = if alg == Algorithm::EcdsaP256Sha256 {
                    32
                } else {
                    48
                };
                if x.len() != len || y.len() != len {
                    return Err(KeyError::Jwk(format!("EC coordinates must be {len} bytes")));
                }
                let mut pt = vec![0x04];
                pt.extend_from_slice(&x);
                pt.extend_from_slice(&y);
                VerifyingKey::from_sec1_point(alg, &pt)?
            }
            Algorithm::Ed25519 => VerifyingKey::from_ed25519_bytes(&self.field("x", &self.x)?)?,
            Algorithm::RsaPssSha512 | Algorithm::RsaV15Sha256 => {
                let n = self.field("n", &self.n)?;
                let e = self.field("e", &self.e)?;
                if n.first() == Some(&0) || e.first() == Some(&0) {
                    return Err(KeyError::Jwk(
                        "RSA n and e must have no leading zero octets (RFC 7518 6.3.1)".into(),
                    ));
                }
                VerifyingKey::from_rsa_components(alg, &n, &e)?
            }
            Algorithm::HmacSha256 => VerifyingKey::from_hmac_secret(&self.field("k", &self.k)?)?,
        };
        Ok(match &self.kid {
            Some(k) => key.with_kid(k.clone()),
            None => key,
        })
    }

    /// The signing key of a private JWK.
    pub fn to_signing_key(&self, hint: Option<Algorithm>) -> Result<SigningKey, KeyError> {
        let alg = self.bound_alg(hint)?;
        self.check_use("sign")?;
        if !self.is_private() {
            return Err(KeyError::NotPrivate);
        }
        let key = match alg {
            Algorithm::EcdsaP256Sha256 | Algorithm::EcdsaP384Sha384 => {
                let d = self.field("d", &self.d)?;
                let k = SigningKey::from_ec_scalar(alg, &d)?;
                let given = self.to_verifying_key(Some(alg))?;
                if given.thumbprint() != k.verifying_key().thumbprint() {
                    return Err(KeyError::InvalidKey("JWK x/y do not match d".into()));
                }
                k
            }
            Algorithm::Ed25519 => {
                let k = SigningKey::from_ed25519_seed(&self.field("d", &self.d)?)?;
                let given = self.to_verifying_key(Some(alg))?;
                if given.thumbprint() != k.verifying_key().thumbprint() {
                    return Err(KeyError::InvalidKey("JWK x does not match d".into()));
                }
                k
            }
            Algorithm::RsaPssSha512 | Algorithm::RsaV15Sha256 => {
                let parts = [
                    self.field("n", &self.n)?,
                    self.field("e", &self.e)?,
                    self.field("d", &self.d)?,
                    self.field("p", &self.p)?,
                    self.field("q", &self.q)?,
                    self.field("dp", &self.dp)?,
                    self.field("dq", &self.dq)?,
                    self.field("qi", &self.qi)?,
                ];
                let der = rsa_pkcs1_der(&parts)?;
                SigningKey::from_rsa_pkcs1_der(alg, &der)?
            }
            Algorithm::HmacSha256 => SigningKey::from_hmac_secret(&self.field("k", &self.k)?)?,
        };
        Ok(match &self.kid {
            Some(k) => key.with_kid(k.clone()),
            None => key,
        })
    }
}

fn rsa_pkcs1_der(parts: &[Vec<u8>; 8]) -> Result<Vec<u8>, KeyError> {
    use der::Encode;
    fn uint(b: &[u8]) -> Result<pkcs1::UintRef<'_>, KeyError> {
        pkcs1::UintRef::new(b).map_err(|e| KeyError::Jwk(format!("RSA member: {e}")))
    }
    let key = pkcs1::RsaPrivateKey {
        modulus: uint(&parts[0])?,
        public_exponent: uint(&parts[1])?,
        private_exponent: uint(&parts[2])?,
        prime1: uint(&parts[3])?,
        prime2: uint(&parts[4])?,
        exponent1: uint(&parts[5])?,
        exponent2: uint(&parts[6])?,
        coefficient: uint(&parts[7])?,
        other_prime_infos: None,
    };
    key.to_der()
        .map_err(|e| KeyError::Jwk(format!("RSA key encoding: {e}")))
}

/// Parse a JWK or a JWK Set (`{"keys":[...]}`) from strict JSON.
///
/// In a set, members with an unknown `kty` or unsupported curve are skipped
/// (RFC 7517 section 5: "SHOULD be ignored"); a set whose `kid` values repeat
/// is refused, because a `kid` must select one key, and so is a set that mixes
/// shared secrets (`oct`) with asymmetric keys.
pub fn parse_keys(data: &[u8]) -> Result<Vec<Jwk>, KeyError> {
    let v = crate::json::parse_strict_with(
        data,
        &crate::json::Limits {
            max_bytes: 1024 * 1024,
            max_depth: 16,
        },
    )
    .map_err(|e| KeyError::Jwk(e.to_string()))?;
    match v.get("keys") {
        Some(Value::Array(arr)) => {
            let mut out: Vec<Jwk> = Vec::new();
            for item in arr {
                let j = match Jwk::from_value(item) {
                    Ok(j) => j,
                    Err(_) => continue,
                };
                if !matches!(j.kty.as_str(), "EC" | "OKP" | "RSA" | "oct") {
                    continue;
                }
                if let Some(kid) = &j.kid {
                    if out.iter().any(|o| o.kid.as_ref() == Some(kid)) {
                        return Err(KeyError::Jwk(format!(
                            "kid {kid:?} appears twice in the key set"
                        )));
                    }
                }
                out.push(j);
            }
            // A set that holds public keys is meant to be published; a shared
            // secret beside them is a leak or an algorithm-confusion setup
            // (Wycheproof json_web_key_test "MixedKeySet": reject).
            let symmetric = out.iter().filter(|j| j.kty == "oct").count();
            if symmetric > 0 && symmetric < out.len() {
                return Err(KeyError::Jwk(
                    "the key set mixes shared secrets (kty \"oct\") with public keys".into(),
                ));
            }
            Ok(out)
        }
        Some(_) => Err(KeyError::Jwk("\"keys\" must be an array".into())),
        None => Ok(vec![Jwk::from_value(&v)?]),
    }
}

/// Select keys from a set: the one with `kid`, or all when no kid is given.
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

/// A JWK Set document with the given public keys.
pub fn jwks_document(keys: &[&VerifyingKey]) -> Value {
    let arr = keys.iter().map(|k| k.to_jwk().to_value()).collect();
    let mut m = Map::new();
    m.insert("keys".into(), Value::Array(arr));
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7638_example_thumbprint() {
        // RFC 7638 section 3.1
        let j = Jwk::from_value(&serde_json::json!({
            "kty": "RSA",
            "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
            "e": "AQAB",
            "alg": "RS256",
            "kid": "2011-04-29"
        }))
        .unwrap();
        assert_eq!(
            j.thumbprint(),
            "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
        );
        let k = j.to_verifying_key(None).unwrap();
        assert_eq!(k.algorithm(), Algorithm::RsaV15Sha256);
        assert_eq!(
            k.thumbprint(),
            "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
        );
        assert!(matches!(
            j.to_verifying_key(Some(Algorithm::RsaPssSha512)),
            Err(KeyError::AlgorithmMismatch { .. })
        ));
    }
}
