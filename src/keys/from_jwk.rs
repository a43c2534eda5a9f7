//! JWK (RFC 7517) to key conversion. `alg`, `kty`/`crv`, `use` and
//! `key_ops` bind and restrict the key (RFC 7517 sections 4.2-4.4, RFC 8725
//! section 3.1); EC points are checked on their curve.

use super::{KeyError, SigningKey, VerifyingKey};
use crate::alg::Algorithm;
use crate::b64;
use crate::jwk::Jwk;

impl Jwk {
    /// The algorithm this JWK is bound to: its `alg`, checked against the key
    /// type and the caller's hint.
    fn bound_alg(&self, hint: Option<Algorithm>) -> Result<Algorithm, KeyError> {
        let from_jwk = match &self.alg {
            Some(a) => Some(Algorithm::from_jose_name(a).ok_or_else(|| {
                KeyError::Jwk(format!("unsupported JWK alg {}", crate::text::quoted(a)))
            })?),
            None => None,
        };
        let implied = match (self.kty.as_str(), self.crv.as_deref()) {
            ("EC", Some("P-256")) => Some(Algorithm::EcdsaP256Sha256),
            ("EC", Some("P-384")) => Some(Algorithm::EcdsaP384Sha384),
            ("EC", c) => {
                return Err(KeyError::UnsupportedKeyType(format!(
                    "EC curve {}",
                    crate::text::quoted(c.unwrap_or("(none)"))
                )))
            }
            ("OKP", Some("Ed25519")) => Some(Algorithm::Ed25519),
            ("OKP", c) => {
                return Err(KeyError::UnsupportedKeyType(format!(
                    "OKP curve {}",
                    crate::text::quoted(c.unwrap_or("(none)"))
                )))
            }
            ("RSA", _) => None,
            ("oct", _) => Some(Algorithm::HmacSha256),
            (k, _) => {
                return Err(KeyError::UnsupportedKeyType(format!(
                    "kty {}",
                    crate::text::quoted(k)
                )))
            }
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
                return Err(KeyError::Jwk(format!(
                    "use is {}, not \"sig\"",
                    crate::text::quoted(u)
                )));
            }
        }
        if let Some(ops) = &self.key_ops {
            if !ops.iter().any(|o| o == op) {
                return Err(KeyError::Jwk(format!(
                    "key_ops does not allow {}",
                    crate::text::quoted(op)
                )));
            }
        }
        Ok(())
    }

    fn field(&self, name: &str, v: &Option<String>) -> Result<Vec<u8>, KeyError> {
        let s = v.as_ref().ok_or_else(|| {
            KeyError::Jwk(format!(
                "{} JWK lacks {}",
                self.kty,
                crate::text::quoted(name)
            ))
        })?;
        b64::decode(s)
            .map_err(|e| KeyError::Jwk(format!("member {}: {e}", crate::text::quoted(name))))
    }

    /// The verifying key (public half) of this JWK.
    ///
    /// # Errors
    /// [`KeyError`] when the key material is malformed or invalid, of an unsupported type or size,
    /// or bound to another algorithm than the one requested (an encrypted key also needs its
    /// passphrase).
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
    ///
    /// # Errors
    /// [`KeyError`] when the key material is malformed or invalid, of an unsupported type or size,
    /// or bound to another algorithm than the one requested (an encrypted key also needs its
    /// passphrase).
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json;

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
        // Kept once computed (shared by clones); the kid is not part of it
        // (RFC 7638 section 3.2: required members only).
        let again = k.clone().with_kid("another");
        assert_eq!(again.thumbprint(), k.thumbprint());
        assert_eq!(again.thumbprint(), again.to_jwk().thumbprint());
        let other = crate::SigningKey::generate(Algorithm::EcdsaP256Sha256).unwrap();
        assert_ne!(other.verifying_key().thumbprint(), k.thumbprint());
        assert_eq!(
            other.verifying_key().thumbprint(),
            other.verifying_key().to_jwk().thumbprint()
        );
    }
}
