//! Key generation: ring for EC and Ed25519, RustCrypto `rsa` for RSA
//! (3072 bits), the system RNG for HMAC secrets. Private keys are kept as
//! PKCS#8 v1 (RFC 5208 / RFC 8410), the form every common tool reads.

use super::load::{pss_sha512_params_der, secret_looks_like_key, signing_from_pkcs8, OID_RSA_PSS};
use super::{KeyError, SigningKey};
use crate::alg::Algorithm;
use der::{Decode, Encode};
use ring::signature as rsig;
use zeroize::Zeroizing;

impl SigningKey {
    /// Generate a new key for `alg`. RSA keys are 3072 bits; HMAC secrets 32 bytes.
    ///
    /// # Example
    ///
    /// ```
    /// use agentsig::{Algorithm, SigningKey};
    ///
    /// let key = SigningKey::generate(Algorithm::Ed25519)?;
    /// let sig = key.sign(b"message")?;
    /// assert_eq!(sig.len(), 64);
    /// assert!(key.verifying_key().verify(b"message", &sig).is_ok());
    /// assert!(key.verifying_key().verify(b"other", &sig).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`KeyError::Generate`] when the system random number generator or the key generator
    /// fails.
    pub fn generate(alg: Algorithm) -> Result<SigningKey, KeyError> {
        let rng = ring::rand::SystemRandom::new();
        let gen_err = |e: &dyn std::fmt::Display| KeyError::Generate(e.to_string());
        let pkcs8: Vec<u8> = match alg {
            Algorithm::EcdsaP256Sha256 => {
                rsig::EcdsaKeyPair::generate_pkcs8(&rsig::ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
                    .map_err(|e| gen_err(&e))?
                    .as_ref()
                    .to_vec()
            }
            Algorithm::EcdsaP384Sha384 => {
                rsig::EcdsaKeyPair::generate_pkcs8(&rsig::ECDSA_P384_SHA384_FIXED_SIGNING, &rng)
                    .map_err(|e| gen_err(&e))?
                    .as_ref()
                    .to_vec()
            }
            Algorithm::Ed25519 => {
                // ring writes PKCS#8 v2 (RFC 5958 OneAsymmetricKey with the
                // public key), which OpenSSL 3.0, Node and Python
                // `cryptography` refuse. Write v1 (RFC 8410 section 7: the
                // CurvePrivateKey seed only); loading accepts both.
                let v2 = Zeroizing::new(
                    rsig::Ed25519KeyPair::generate_pkcs8(&rng)
                        .map_err(|e| gen_err(&e))?
                        .as_ref()
                        .to_vec(),
                );
                let mut info = pkcs8::PrivateKeyInfo::from_der(&v2).map_err(|e| gen_err(&e))?;
                info.public_key = None;
                info.to_der().map_err(|e| gen_err(&e))?
            }
            Algorithm::RsaPssSha512 | Algorithm::RsaV15Sha256 => {
                use rsa::pkcs8::EncodePrivateKey;
                let k = rsa::RsaPrivateKey::new(&mut rand_core::OsRng, 3072)
                    .map_err(|e| gen_err(&e))?;
                let der = Zeroizing::new(
                    k.to_pkcs8_der()
                        .map_err(|e| gen_err(&e))?
                        .as_bytes()
                        .to_vec(),
                );
                if alg == Algorithm::RsaPssSha512 {
                    // Record the algorithm in the key itself: id-RSASSA-PSS
                    // with SHA-512 parameters (RFC 4055 section 3.1; what
                    // `openssl genpkey -algorithm RSA-PSS` writes), so the
                    // key loads as rsa-pss-sha512 with no hint.
                    let params = pss_sha512_params_der()?;
                    let mut info =
                        pkcs8::PrivateKeyInfo::from_der(&der).map_err(|e| gen_err(&e))?;
                    info.algorithm = spki::AlgorithmIdentifierRef {
                        oid: OID_RSA_PSS,
                        parameters: Some(
                            der::asn1::AnyRef::from_der(&params).map_err(|e| gen_err(&e))?,
                        ),
                    };
                    info.to_der().map_err(|e| gen_err(&e))?
                } else {
                    der.to_vec()
                }
            }
            Algorithm::HmacSha256 => {
                let mut secret = Zeroizing::new(vec![0u8; 32]);
                // Draw again in the (about 1 in 10^5) case that the random
                // bytes look like a DER key header, which loading refuses.
                loop {
                    ring::rand::SecureRandom::fill(&rng, &mut secret).map_err(|e| gen_err(&e))?;
                    if secret_looks_like_key(&secret).is_none() {
                        break;
                    }
                }
                return SigningKey::from_hmac_secret(&secret);
            }
        };
        let pkcs8 = Zeroizing::new(pkcs8);
        let mut k = signing_from_pkcs8(&pkcs8, Some(alg))?;
        k.pkcs8 = Some(pkcs8);
        Ok(k)
    }
}
