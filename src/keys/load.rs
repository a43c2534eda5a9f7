//! Loading keys by content: PEM (PKCS#8, encrypted PKCS#8, SEC1 EC,
//! PKCS#1 RSA, SPKI), DER of the same, JWK and JWK Sets (RFC 7517), and
//! HMAC secrets (raw bytes or base64 text, never key material).

use super::{KeyError, LoadOptions, SigningKey, VerifyingKey};
use crate::alg::Algorithm;
use crate::jwk;
use der::{Decode, Encode};
use zeroize::Zeroizing;

// ---------------------------------------------------------------------------
// Loading by content

pub(super) const OID_EC: der::asn1::ObjectIdentifier =
    der::asn1::ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");
pub(super) const OID_P256: der::asn1::ObjectIdentifier =
    der::asn1::ObjectIdentifier::new_unwrap("1.2.840.10045.3.1.7");
pub(super) const OID_P384: der::asn1::ObjectIdentifier =
    der::asn1::ObjectIdentifier::new_unwrap("1.3.132.0.34");
pub(super) const OID_ED25519: der::asn1::ObjectIdentifier =
    der::asn1::ObjectIdentifier::new_unwrap("1.3.101.112");
pub(super) const OID_RSA: der::asn1::ObjectIdentifier =
    der::asn1::ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");
pub(super) const OID_RSA_PSS: der::asn1::ObjectIdentifier =
    der::asn1::ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.10");

/// DER of RSASSA-PSS-params for rsa-pss-sha512: SHA-512, MGF1 with
/// SHA-512, 64-byte salt, trailer 1 (RFC 4055 section 3.1; RFC 9421
/// section 3.3.1).
pub(super) fn pss_sha512_params_der() -> Result<Vec<u8>, KeyError> {
    pkcs1::RsaPssParams::new::<sha2::Sha512>(64)
        .to_der()
        .map_err(|e| KeyError::Generate(e.to_string()))
}

/// An id-RSASSA-PSS key may carry RSASSA-PSS-params (RFC 4055 section 3.1)
/// that restrict it. Absent parameters leave the key unrestricted (the RFC
/// 9421 B.1.2 test key); present ones must be exactly rsa-pss-sha512's:
/// SHA-512, MGF1 with SHA-512, salt length 64, trailer field 1.
fn check_pss_params(params: Option<der::asn1::AnyRef<'_>>) -> Result<(), KeyError> {
    const OID_SHA512: der::asn1::ObjectIdentifier =
        der::asn1::ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.3");
    const OID_MGF1: der::asn1::ObjectIdentifier =
        der::asn1::ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.8");
    let Some(any) = params else { return Ok(()) };
    if any.is_null() {
        return Ok(());
    }
    let p: pkcs1::RsaPssParams<'_> = any.decode_as().map_err(|e| KeyError::Der {
        what: "RSASSA-PSS-params",
        detail: e.to_string(),
    })?;
    let mgf_hash = p.mask_gen.parameters.as_ref().map(|h| h.oid);
    if p.hash.oid != OID_SHA512
        || p.mask_gen.oid != OID_MGF1
        || mgf_hash != Some(OID_SHA512)
        || p.salt_len != 64
        || p.trailer_field != pkcs1::TrailerField::BC
    {
        return Err(KeyError::UnsupportedKeyType(format!(
            "RSA-PSS key restricted to hash {}, MGF1 hash {}, salt {}: only SHA-512/MGF1-SHA-512/64 (rsa-pss-sha512) is supported",
            p.hash.oid,
            mgf_hash.map_or_else(|| "(none)".to_string(), |o| o.to_string()),
            p.salt_len
        )));
    }
    Ok(())
}

pub(super) fn ec_alg_id(curve: der::asn1::ObjectIdentifier) -> spki::AlgorithmIdentifierOwned {
    spki::AlgorithmIdentifierOwned {
        oid: OID_EC,
        parameters: Some(curve.into()),
    }
}

/// Bind the algorithm a key implies to the caller's hint.
pub(super) fn bind(
    implied: Option<Algorithm>,
    hint: Option<Algorithm>,
    family_ok: &[Algorithm],
) -> Result<Algorithm, KeyError> {
    match (implied, hint) {
        (Some(k), Some(h)) if k != h => Err(KeyError::AlgorithmMismatch {
            key: k,
            requested: h,
        }),
        (Some(k), _) => Ok(k),
        (None, Some(h)) if family_ok.contains(&h) => Ok(h),
        (None, Some(h)) => Err(KeyError::AlgorithmMismatch {
            key: family_ok[0],
            requested: h,
        }),
        (None, None) => Err(KeyError::AlgorithmRequired),
    }
}

pub(super) const RSA_FAMILY: [Algorithm; 2] = [Algorithm::RsaV15Sha256, Algorithm::RsaPssSha512];

/// One PEM block: its label and DER.
fn pem_first_block(text: &str) -> Result<(String, Zeroizing<Vec<u8>>), KeyError> {
    let start = text
        .find("-----BEGIN ")
        .ok_or_else(|| KeyError::Pem("no BEGIN line".into()))?;
    let rest = &text[start..];
    let label_end = rest[11..]
        .find("-----")
        .ok_or_else(|| KeyError::Pem("unterminated BEGIN line".into()))?;
    let label = rest[11..11 + label_end].to_owned();
    let end_marker = format!("-----END {label}-----");
    let end = rest
        .find(&end_marker)
        .ok_or_else(|| KeyError::Pem(format!("no END line for {label}")))?;
    let block = &rest[..end + end_marker.len()];
    let (l, der) =
        der::pem::decode_vec(block.as_bytes()).map_err(|e| KeyError::Pem(e.to_string()))?;
    Ok((l.to_owned(), Zeroizing::new(der)))
}

/// Does this key material hold a private key (a PEM `PRIVATE KEY` block of
/// any kind, a JWK or JWK Set member with the private member `d` (RFC 7518
/// sections 6.2.2.1, 6.3.2.1; RFC 8037 section 2), or PKCS#8 / SEC1 DER)?
/// What a verifier warns about: it needs only the public key, and a private
/// key has no place on the hosts that verify.
pub fn holds_private_key(data: &[u8]) -> bool {
    if is_pem(data) {
        return std::str::from_utf8(data).is_ok_and(|t| {
            t.lines()
                .any(|l| l.starts_with("-----BEGIN ") && l.contains("PRIVATE KEY"))
        });
    }
    if is_json(data) {
        let Ok(v) = crate::json::parse_strict(data) else {
            return false;
        };
        let has_d = |k: &serde_json::Value| k.get("d").is_some();
        return has_d(&v)
            || v.get("keys")
                .and_then(serde_json::Value::as_array)
                .is_some_and(|ks| ks.iter().any(has_d));
    }
    data.first() == Some(&0x30)
        && (pkcs8::PrivateKeyInfo::try_from(data).is_ok()
            || pkcs8::EncryptedPrivateKeyInfo::try_from(data).is_ok()
            || sec1::EcPrivateKey::try_from(data).is_ok())
}

fn is_pem(data: &[u8]) -> bool {
    std::str::from_utf8(data)
        .map(|t| t.trim_start().starts_with("-----BEGIN "))
        .unwrap_or(false)
}

fn is_json(data: &[u8]) -> bool {
    data.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

/// The largest key file [`SigningKey::from_file`] and
/// [`VerifyingKey::from_file`] read (1 MiB: the largest JWK Set this crate
/// parses).
pub const MAX_KEY_FILE: u64 = 1024 * 1024;

/// Read a key file, bounded by [`MAX_KEY_FILE`]. The bytes are zeroized on
/// drop: the file may hold a private key.
fn read_key_file(path: &std::path::Path) -> Result<Zeroizing<Vec<u8>>, KeyError> {
    use std::io::Read as _;
    let io = |detail: String| KeyError::Io {
        path: path.display().to_string(),
        detail,
    };
    let f = std::fs::File::open(path).map_err(|e| io(e.to_string()))?;
    let mut buf = Zeroizing::new(Vec::new());
    f.take(MAX_KEY_FILE + 1)
        .read_to_end(&mut buf)
        .map_err(|e| io(e.to_string()))?;
    if buf.len() as u64 > MAX_KEY_FILE {
        return Err(io(format!("larger than {MAX_KEY_FILE} bytes")));
    }
    Ok(buf)
}

impl SigningKey {
    /// A private key from PEM text: PKCS#8 (`PRIVATE KEY`), SEC1
    /// (`EC PRIVATE KEY`) or PKCS#1 (`RSA PRIVATE KEY`), RFC 7468. EC and
    /// Ed25519 keys carry their algorithm; an RSA key needs one, so load it
    /// with [`SigningKey::from_file`] or [`load_signing_key`] and
    /// [`LoadOptions::alg`]. An encrypted key needs [`LoadOptions::passphrase`].
    ///
    /// # Errors
    /// [`KeyError::Pem`] when the text holds no PEM block;
    /// [`KeyError::NotPrivate`] for a public key; [`KeyError::AlgorithmRequired`]
    /// for an RSA key; [`KeyError::PassphraseRequired`] for an encrypted one;
    /// any other [`KeyError`] when the key inside is malformed or unsupported.
    ///
    /// # Example
    /// ```
    /// use agentsig::{Algorithm, SigningKey};
    ///
    /// let pem = SigningKey::generate(Algorithm::EcdsaP256Sha256)?
    ///     .pkcs8_pem()
    ///     .expect("an EC key has a PKCS#8 form");
    /// let key = SigningKey::from_pem(&pem)?;
    /// assert_eq!(key.algorithm(), Algorithm::EcdsaP256Sha256);
    /// assert!(SigningKey::from_pem("not a key").is_err());
    /// # Ok::<(), agentsig::KeyError>(())
    /// ```
    pub fn from_pem(pem: &str) -> Result<SigningKey, KeyError> {
        if !is_pem(pem.as_bytes()) {
            return Err(KeyError::Pem("no BEGIN line".into()));
        }
        load_signing_key(pem.as_bytes(), &LoadOptions::default())
    }

    /// A private key from a file in any format [`load_signing_key`] reads
    /// (PEM, DER, JWK, JWK Set selected by `opts.kid`, an HMAC secret when
    /// `opts.alg` is `hmac-sha256`). At most [`MAX_KEY_FILE`] bytes are read.
    ///
    /// # Errors
    /// [`KeyError::Io`] when the file cannot be read or is too large; else
    /// as [`load_signing_key`].
    pub fn from_file(
        path: impl AsRef<std::path::Path>,
        opts: &LoadOptions,
    ) -> Result<SigningKey, KeyError> {
        load_signing_key(&read_key_file(path.as_ref())?, opts)
    }
}

impl VerifyingKey {
    /// A public key from PEM text: SPKI (`PUBLIC KEY`) or PKCS#1
    /// (`RSA PUBLIC KEY`), RFC 7468; a private key PEM gives its public half.
    /// An RSA key needs an algorithm: load it with [`VerifyingKey::from_file`]
    /// or [`load_verifying_key`] and [`LoadOptions::alg`].
    ///
    /// # Errors
    /// [`KeyError::Pem`] when the text holds no PEM block;
    /// [`KeyError::AlgorithmRequired`] for an RSA key; any other
    /// [`KeyError`] when the key is malformed or unsupported.
    ///
    /// # Example
    /// ```
    /// use agentsig::{Algorithm, SigningKey, VerifyingKey};
    ///
    /// let signer = SigningKey::generate(Algorithm::Ed25519)?;
    /// let pem = signer.verifying_key().to_spki_pem().expect("an Ed25519 key has an SPKI form");
    /// let key = VerifyingKey::from_pem(&pem)?;
    /// assert_eq!(key.thumbprint(), signer.verifying_key().thumbprint());
    /// # Ok::<(), agentsig::KeyError>(())
    /// ```
    pub fn from_pem(pem: &str) -> Result<VerifyingKey, KeyError> {
        if !is_pem(pem.as_bytes()) {
            return Err(KeyError::Pem("no BEGIN line".into()));
        }
        load_verifying_key(pem.as_bytes(), &LoadOptions::default())
    }

    /// Exactly one public key from a file in any format
    /// [`load_verifying_key`] reads. At most [`MAX_KEY_FILE`] bytes are read.
    ///
    /// # Errors
    /// [`KeyError::Io`] when the file cannot be read or is too large; else
    /// as [`load_verifying_key`] (a JWK Set must resolve to one key).
    pub fn from_file(
        path: impl AsRef<std::path::Path>,
        opts: &LoadOptions,
    ) -> Result<VerifyingKey, KeyError> {
        load_verifying_key(&read_key_file(path.as_ref())?, opts)
    }
}

/// The algorithm a companion JWK records for the RSA key in `data` (PEM or
/// DER, public or private; `opts.passphrase` opens an encrypted one), when
/// that JWK holds the same public key (RFC 7638 thumbprint) and names its
/// `alg` (RFC 7517 section 4.4); `None` otherwise. An RSA key alone does not
/// say whether it is for PSS or PKCS#1 v1.5; `agentsig keygen` writes the
/// JWK beside the PEM for that reason.
pub fn algorithm_from_companion_jwk(
    data: &[u8],
    jwk: &[u8],
    opts: &LoadOptions,
) -> Option<Algorithm> {
    let jwk = jwk::parse_keys(jwk).ok()?.into_iter().next()?;
    let alg = Algorithm::from_jose_name(jwk.alg.as_deref()?)?;
    let trial = LoadOptions {
        alg: Some(alg),
        kid: None,
        passphrase: opts.passphrase.clone(),
    };
    let ours = load_verifying_keys(data, &trial).ok()?;
    let theirs = jwk.to_verifying_key(Some(alg)).ok()?;
    (ours.len() == 1 && ours[0].thumbprint() == theirs.thumbprint()).then_some(alg)
}

/// Load a private (signing) key by content.
///
/// # Errors
/// [`KeyError`] when the key material is malformed or invalid, of an unsupported type or size, or
/// bound to another algorithm than the one requested (an encrypted key also needs its passphrase).
pub fn load_signing_key(data: &[u8], opts: &LoadOptions) -> Result<SigningKey, KeyError> {
    let key = if is_pem(data) {
        let text = std::str::from_utf8(data).map_err(|_| KeyError::Pem("not UTF-8".into()))?;
        let (label, der) = pem_first_block(text)?;
        match label.as_str() {
            "PRIVATE KEY" => signing_from_pkcs8(&der, opts.alg)?,
            "ENCRYPTED PRIVATE KEY" => signing_from_encrypted(&der, opts)?,
            "EC PRIVATE KEY" => signing_from_sec1(&der, opts.alg)?,
            "RSA PRIVATE KEY" => {
                let alg = bind(None, opts.alg, &RSA_FAMILY)?;
                SigningKey::from_rsa_pkcs1_der(alg, &der)?
            }
            "PUBLIC KEY" | "RSA PUBLIC KEY" => return Err(KeyError::NotPrivate),
            other => {
                return Err(KeyError::Pem(format!(
                    "unsupported PEM label {}",
                    crate::text::quoted(other)
                )))
            }
        }
    } else if is_json(data) {
        let jwk = jwk::select_one(data, opts.kid.as_deref(), true)?;
        jwk.to_signing_key(opts.alg)?
    } else if data.first() == Some(&0x30) && opts.alg != Some(Algorithm::HmacSha256) {
        signing_from_der(data, opts)?
    } else if opts.alg == Some(Algorithm::HmacSha256) {
        SigningKey::from_hmac_secret(&hmac_secret_from_file(data)?)?
    } else {
        return Err(KeyError::UnrecognisedFormat(
            "not PEM, DER or JWK; for an HMAC secret give the algorithm hmac-sha256".into(),
        ));
    };
    match &opts.kid {
        Some(kid) if key.kid().is_none() => Ok(key.with_kid(kid.clone())),
        _ => Ok(key),
    }
}

/// Why bytes given as an HMAC secret look like key material, if they do.
///
/// A public key file used as a shared secret lets anyone who holds the
/// public key forge HS256 signatures (RFC 8725 section 2.1, algorithm
/// confusion), so a secret that contains a PEM BEGIN line anywhere, is a
/// JSON object or array (a JWK or JWK Set, after an optional BOM), or starts
/// like a DER key container (SEQUENCE header followed by INTEGER or
/// SEQUENCE: PKCS#1, PKCS#8, SEC1, SPKI, even truncated) is refused.
pub fn secret_looks_like_key(data: &[u8]) -> Option<&'static str> {
    let body = data.strip_prefix(b"\xef\xbb\xbf").unwrap_or(data);
    text_looks_like_key(body).or_else(|| der_looks_like_key(body))
}

/// The text forms of [`secret_looks_like_key`]: a PEM BEGIN line, JSON.
fn text_looks_like_key(body: &[u8]) -> Option<&'static str> {
    if body.windows(10).any(|w| w == b"-----BEGIN") {
        return Some("it contains a PEM BEGIN line");
    }
    let json_text = std::str::from_utf8(body)
        .is_ok_and(|t| t.trim_start().starts_with('{') || t.trim_start().starts_with('['));
    if json_text {
        return Some("it is JSON (a JWK or JWK Set)");
    }
    None
}

/// The binary form of [`secret_looks_like_key`]: a DER key's header.
fn der_looks_like_key(body: &[u8]) -> Option<&'static str> {
    if body.first() == Some(&0x30) {
        // DER SEQUENCE: the length octets, then the first inner tag.
        let inner = match body.get(1) {
            Some(0x81) => body.get(3),
            Some(0x82) => body.get(4),
            Some(0x83) => body.get(5),
            Some(l) if *l < 0x80 => body.get(2),
            _ => None,
        };
        if matches!(inner, Some(0x02) | Some(0x30)) {
            return Some("it starts like a DER key (PKCS#8, SPKI, SEC1 or PKCS#1)");
        }
    }
    None
}

/// An HMAC secret file holds either base64 text (standard or URL-safe,
/// padding optional, surrounding whitespace ignored) or the raw bytes.
/// Content that looks like key material, as given or once base64-decoded,
/// is refused ([`secret_looks_like_key`]).
///
/// Base64 text is checked as text (a PEM line, JSON) and, decoded, in
/// full; it is not read as DER. Its alphabet holds `0`, the byte of DER's
/// SEQUENCE tag (0x30), so one secret in about 4,096 written as base64
/// (`0?0...`) would read as a DER header, while no DER key is base64 text
/// (its length and tag octets are not in the alphabet).
fn hmac_secret_from_file(data: &[u8]) -> Result<Zeroizing<Vec<u8>>, KeyError> {
    let (secret, text) = hmac_secret_decode(data);
    // Raw bytes are the secret itself, checked once below in full.
    let as_text = if text {
        text_looks_like_key(data.strip_prefix(b"\xef\xbb\xbf").unwrap_or(data))
    } else {
        None
    };
    if let Some(why) = as_text.or_else(|| secret_looks_like_key(&secret)) {
        return Err(KeyError::SecretLooksLikeKey(why));
    }
    Ok(secret)
}

/// The secret of an HMAC secret file, and whether the file was base64
/// text (else the secret is its raw bytes).
fn hmac_secret_decode(data: &[u8]) -> (Zeroizing<Vec<u8>>, bool) {
    use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
    use base64::engine::DecodePaddingMode;
    use base64::Engine;
    let lax = GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
    if let Ok(text) = std::str::from_utf8(data) {
        let t = text.trim();
        if !t.is_empty() {
            for alphabet in [&base64::alphabet::STANDARD, &base64::alphabet::URL_SAFE] {
                if let Ok(v) = GeneralPurpose::new(alphabet, lax).decode(t) {
                    return (Zeroizing::new(v), true);
                }
            }
        }
    }
    (Zeroizing::new(data.to_vec()), false)
}

fn signing_from_der(data: &[u8], opts: &LoadOptions) -> Result<SigningKey, KeyError> {
    if pkcs8::PrivateKeyInfo::from_der(data).is_ok() {
        return signing_from_pkcs8(data, opts.alg);
    }
    if pkcs8::EncryptedPrivateKeyInfo::from_der(data).is_ok() {
        return signing_from_encrypted(data, opts);
    }
    if sec1::EcPrivateKey::from_der(data).is_ok() {
        return signing_from_sec1(data, opts.alg);
    }
    if pkcs1::RsaPrivateKey::from_der(data).is_ok() {
        let alg = bind(None, opts.alg, &RSA_FAMILY)?;
        return SigningKey::from_rsa_pkcs1_der(alg, data);
    }
    if spki::SubjectPublicKeyInfoRef::from_der(data).is_ok()
        || pkcs1::RsaPublicKey::from_der(data).is_ok()
    {
        return Err(KeyError::NotPrivate);
    }
    Err(KeyError::UnrecognisedFormat(
        "DER is not PKCS#8, SEC1 or PKCS#1".into(),
    ))
}

fn signing_from_encrypted(der: &[u8], opts: &LoadOptions) -> Result<SigningKey, KeyError> {
    let pass = opts
        .passphrase
        .as_ref()
        .ok_or(KeyError::PassphraseRequired)?;
    let enc = pkcs8::EncryptedPrivateKeyInfo::from_der(der).map_err(|e| KeyError::Der {
        what: "EncryptedPrivateKeyInfo",
        detail: e.to_string(),
    })?;
    check_kdf_cost(&enc.encryption_algorithm)?;
    let doc = enc
        .decrypt(pass.as_slice())
        .map_err(|_| KeyError::Decrypt)?;
    signing_from_pkcs8(doc.as_bytes(), opts.alg)
}

/// Most PBKDF2 iterations an encrypted key may ask for (RFC 8018 section
/// 5.2): the file names its own cost, so a bound keeps loading a key bounded
/// in time (the `pkcs5` crate's own bound, 100 000 000, is minutes of work).
/// 10 000 000 is 16 times the 600 000 agentsig writes
/// ([`super::PBKDF2_ITERATIONS`]).
pub const MAX_PBKDF2_ITERATIONS: u32 = 10_000_000;
/// Largest scrypt cost `N` (RFC 7914 section 2) an encrypted key may ask
/// for, with `r` at most 32 and `p` at most 16: 2^20 (1 GiB of memory at r = 8
/// is already past what a key needs; OpenSSL's default is 2^14).
pub const MAX_SCRYPT_COST: u64 = 1 << 20;

/// Refuse an encrypted key whose key derivation would take unbounded time
/// or memory ([`MAX_PBKDF2_ITERATIONS`], [`MAX_SCRYPT_COST`]).
fn check_kdf_cost(scheme: &pkcs8::pkcs5::EncryptionScheme<'_>) -> Result<(), KeyError> {
    use pkcs8::pkcs5::pbes2::Kdf;
    let pkcs8::pkcs5::EncryptionScheme::Pbes2(p) = scheme else {
        return Ok(());
    };
    match &p.kdf {
        Kdf::Pbkdf2(k) if k.iteration_count > MAX_PBKDF2_ITERATIONS => Err(KeyError::InvalidKey(
            format!(
                "the encrypted key asks for {} PBKDF2 iterations, more than the {MAX_PBKDF2_ITERATIONS} agentsig runs",
                k.iteration_count
            ),
        )),
        Kdf::Scrypt(k)
            if k.cost_parameter > MAX_SCRYPT_COST || k.block_size > 32 || k.parallelization > 16 =>
        {
            Err(KeyError::InvalidKey(format!(
                "the encrypted key asks for scrypt N={} r={} p={}, more than agentsig runs (N at most {MAX_SCRYPT_COST}, r 32, p 16)",
                k.cost_parameter, k.block_size, k.parallelization
            )))
        }
        _ => Ok(()),
    }
}

pub(super) fn signing_from_pkcs8(
    der: &[u8],
    hint: Option<Algorithm>,
) -> Result<SigningKey, KeyError> {
    let info = pkcs8::PrivateKeyInfo::from_der(der).map_err(|e| KeyError::Der {
        what: "PKCS#8 PrivateKeyInfo",
        detail: e.to_string(),
    })?;
    let oid = info.algorithm.oid;
    if oid == OID_EC {
        let curve = info
            .algorithm
            .parameters_oid()
            .map_err(|_| KeyError::InvalidKey("EC key without a named curve".into()))?;
        let alg = ec_alg_for_curve(curve)?;
        let alg = bind(Some(alg), hint, &[])?;
        let ec = sec1::EcPrivateKey::from_der(info.private_key).map_err(|e| KeyError::Der {
            what: "SEC1 ECPrivateKey",
            detail: e.to_string(),
        })?;
        let k = SigningKey::from_ec_scalar(alg, ec.private_key)?;
        check_embedded_public(&k, ec.public_key)?;
        Ok(k)
    } else if oid == OID_ED25519 {
        bind(Some(Algorithm::Ed25519), hint, &[])?;
        // CurvePrivateKey ::= OCTET STRING (RFC 8410 section 7)
        let seed =
            der::asn1::OctetStringRef::from_der(info.private_key).map_err(|e| KeyError::Der {
                what: "Ed25519 CurvePrivateKey",
                detail: e.to_string(),
            })?;
        let k = SigningKey::from_ed25519_seed(seed.as_bytes())?;
        if let Some(pk) = info.public_key {
            if VerifyingKey::from_ed25519_bytes(pk)?.thumbprint() != k.public.thumbprint() {
                return Err(KeyError::InvalidKey(
                    "Ed25519 public key does not match the seed".into(),
                ));
            }
        }
        Ok(k)
    } else if oid == OID_RSA {
        let alg = bind(None, hint, &RSA_FAMILY)?;
        SigningKey::from_rsa_pkcs1_der(alg, info.private_key)
    } else if oid == OID_RSA_PSS {
        // id-RSASSA-PSS (RFC 4055): the key is restricted to PSS.
        check_pss_params(info.algorithm.parameters)?;
        let alg = bind(Some(Algorithm::RsaPssSha512), hint, &[])?;
        SigningKey::from_rsa_pkcs1_der(alg, info.private_key)
    } else {
        Err(KeyError::UnsupportedKeyType(format!(
            "PKCS#8 algorithm {oid}"
        )))
    }
}

pub(super) fn check_embedded_public(
    k: &SigningKey,
    embedded: Option<&[u8]>,
) -> Result<(), KeyError> {
    if let Some(pk) = embedded {
        let given = VerifyingKey::from_sec1_point(k.alg, pk)?;
        if given.to_jwk().thumbprint() != k.public.to_jwk().thumbprint() {
            return Err(KeyError::InvalidKey(
                "embedded public key does not match the private key".into(),
            ));
        }
    }
    Ok(())
}

fn signing_from_sec1(der: &[u8], hint: Option<Algorithm>) -> Result<SigningKey, KeyError> {
    let ec = sec1::EcPrivateKey::from_der(der).map_err(|e| KeyError::Der {
        what: "SEC1 ECPrivateKey",
        detail: e.to_string(),
    })?;
    let curve = ec
        .parameters
        .and_then(|p| p.named_curve())
        .ok_or_else(|| KeyError::InvalidKey("SEC1 key without a named curve".into()))?;
    let alg = bind(Some(ec_alg_for_curve(curve)?), hint, &[])?;
    let k = SigningKey::from_ec_scalar(alg, ec.private_key)?;
    check_embedded_public(&k, ec.public_key)?;
    Ok(k)
}

pub(super) fn ec_alg_for_curve(curve: der::asn1::ObjectIdentifier) -> Result<Algorithm, KeyError> {
    if curve == OID_P256 {
        Ok(Algorithm::EcdsaP256Sha256)
    } else if curve == OID_P384 {
        Ok(Algorithm::EcdsaP384Sha384)
    } else {
        Err(KeyError::UnsupportedKeyType(format!("EC curve {curve}")))
    }
}

/// Load verifying keys by content. A PEM, DER or single JWK gives one key;
/// a JWK Set gives every usable key (or the one named by `opts.kid`).
/// A private key yields its public half.
///
/// # Errors
/// [`KeyError`] when the key material is malformed or invalid, of an unsupported type or size, or
/// bound to another algorithm than the one requested (an encrypted key also needs its passphrase).
pub fn load_verifying_keys(data: &[u8], opts: &LoadOptions) -> Result<Vec<VerifyingKey>, KeyError> {
    let keys = if is_pem(data) {
        let text = std::str::from_utf8(data).map_err(|_| KeyError::Pem("not UTF-8".into()))?;
        let (label, der) = pem_first_block(text)?;
        match label.as_str() {
            "PUBLIC KEY" => vec![verifying_from_spki(&der, opts.alg)?],
            "RSA PUBLIC KEY" => vec![verifying_from_pkcs1_public(&der, opts.alg)?],
            _ => vec![load_signing_key(data, opts)?.public],
        }
    } else if is_json(data) {
        let jwks = jwk::parse_keys(data)?;
        let selected = jwk::select(&jwks, opts.kid.as_deref())?;
        // RFC 7517 section 5: members this verifier cannot use (unsupported
        // curve or alg, `use` other than `sig`, another algorithm than the
        // one asked for) are ignored while others are usable. When none is,
        // the first member's error says why.
        let mut out = Vec::new();
        let mut first_err = None;
        for j in selected {
            match j.to_verifying_key(opts.alg) {
                Ok(k) => out.push(k),
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        if let (true, Some(e)) = (out.is_empty(), first_err) {
            return Err(e);
        }
        out
    } else if data.first() == Some(&0x30) && opts.alg != Some(Algorithm::HmacSha256) {
        if spki::SubjectPublicKeyInfoRef::from_der(data).is_ok() {
            vec![verifying_from_spki(data, opts.alg)?]
        } else if pkcs1::RsaPublicKey::from_der(data).is_ok() {
            vec![verifying_from_pkcs1_public(data, opts.alg)?]
        } else {
            vec![signing_from_der(data, opts)?.public]
        }
    } else if opts.alg == Some(Algorithm::HmacSha256) {
        vec![VerifyingKey::from_hmac_secret(&hmac_secret_from_file(
            data,
        )?)?]
    } else {
        return Err(KeyError::UnrecognisedFormat(
            "not PEM, DER or JWK; for an HMAC secret give the algorithm hmac-sha256".into(),
        ));
    };
    Ok(keys
        .into_iter()
        .map(|k| match (&opts.kid, k.kid.is_none()) {
            (Some(kid), true) => k.with_kid(kid.clone()),
            _ => k,
        })
        .collect())
}

/// Load exactly one verifying key (a JWK Set must resolve to one key).
///
/// # Example
///
/// ```
/// use agentsig::keys::load_verifying_key;
/// use agentsig::{Algorithm, KeyError, LoadOptions};
///
/// // The P-256 public key of RFC 7515 Appendix A.3, as a JWK.
/// let jwk = br#"{"kty":"EC","crv":"P-256",
///   "x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
///   "y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}"#;
/// let key = load_verifying_key(jwk, &LoadOptions::default())?;
/// assert_eq!(key.algorithm(), Algorithm::EcdsaP256Sha256);
///
/// // The JWK binds the key to ES256: asking for ES384 is refused.
/// let opts = LoadOptions { alg: Some(Algorithm::EcdsaP384Sha384), ..Default::default() };
/// assert!(matches!(
///     load_verifying_key(jwk, &opts),
///     Err(KeyError::AlgorithmMismatch { .. })
/// ));
/// # Ok::<(), KeyError>(())
/// ```
///
/// # Errors
/// [`KeyError`] when the key material is malformed or invalid, of an unsupported type or size, or
/// bound to another algorithm than the one requested (an encrypted key also needs its passphrase).
pub fn load_verifying_key(data: &[u8], opts: &LoadOptions) -> Result<VerifyingKey, KeyError> {
    let mut v = load_verifying_keys(data, opts)?;
    match v.len() {
        0 => Err(KeyError::EmptyKeySet),
        1 => Ok(v.remove(0)),
        n => Err(KeyError::AmbiguousKeySet(n)),
    }
}

/// A public key from SubjectPublicKeyInfo DER.
///
/// # Errors
/// [`KeyError`] when the key material is malformed or invalid, of an unsupported type or size, or
/// bound to another algorithm than the one requested (an encrypted key also needs its passphrase).
pub fn verifying_from_spki(der: &[u8], hint: Option<Algorithm>) -> Result<VerifyingKey, KeyError> {
    let info = spki::SubjectPublicKeyInfoRef::from_der(der).map_err(|e| KeyError::Der {
        what: "SubjectPublicKeyInfo",
        detail: e.to_string(),
    })?;
    let oid = info.algorithm.oid;
    let bits = info
        .subject_public_key
        .as_bytes()
        .ok_or_else(|| KeyError::InvalidKey("public key BIT STRING has unused bits".into()))?;
    if oid == OID_EC {
        let curve = info
            .algorithm
            .parameters_oid()
            .map_err(|_| KeyError::InvalidKey("EC key without a named curve".into()))?;
        let alg = bind(Some(ec_alg_for_curve(curve)?), hint, &[])?;
        VerifyingKey::from_sec1_point(alg, bits)
    } else if oid == OID_ED25519 {
        bind(Some(Algorithm::Ed25519), hint, &[])?;
        VerifyingKey::from_ed25519_bytes(bits)
    } else if oid == OID_RSA || oid == OID_RSA_PSS {
        if oid == OID_RSA_PSS {
            check_pss_params(info.algorithm.parameters)?;
        }
        let implied = (oid == OID_RSA_PSS).then_some(Algorithm::RsaPssSha512);
        let alg = bind(implied, hint, &RSA_FAMILY)?;
        let pk = pkcs1::RsaPublicKey::from_der(bits).map_err(|e| KeyError::Der {
            what: "PKCS#1 RSAPublicKey",
            detail: e.to_string(),
        })?;
        VerifyingKey::from_rsa_components(alg, pk.modulus.as_bytes(), pk.public_exponent.as_bytes())
    } else {
        Err(KeyError::UnsupportedKeyType(format!(
            "SPKI algorithm {oid}"
        )))
    }
}

fn verifying_from_pkcs1_public(
    der: &[u8],
    hint: Option<Algorithm>,
) -> Result<VerifyingKey, KeyError> {
    let alg = bind(None, hint, &RSA_FAMILY)?;
    let pk = pkcs1::RsaPublicKey::from_der(der).map_err(|e| KeyError::Der {
        what: "PKCS#1 RSAPublicKey",
        detail: e.to_string(),
    })?;
    VerifyingKey::from_rsa_components(alg, pk.modulus.as_bytes(), pk.public_exponent.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use der::Encode;

    /// An encrypted key naming `iterations` PBKDF2 iterations (its
    /// ciphertext is never reached).
    fn encrypted_with(iterations: u32) -> Vec<u8> {
        let params = pkcs8::pkcs5::pbes2::Parameters::pbkdf2_sha256_aes256cbc(
            iterations, &[7; 16], &[9; 16],
        )
        .unwrap();
        pkcs8::EncryptedPrivateKeyInfo {
            encryption_algorithm: pkcs8::pkcs5::EncryptionScheme::Pbes2(params),
            encrypted_data: &[0; 48],
        }
        .to_der()
        .unwrap()
    }

    #[test]
    fn an_encrypted_key_asking_for_unbounded_work_is_refused_before_any() {
        let opts = LoadOptions {
            passphrase: Some(Zeroizing::new(b"pass".to_vec())),
            ..Default::default()
        };
        let e = signing_from_encrypted(&encrypted_with(50_000_000), &opts).unwrap_err();
        assert!(e.to_string().contains("PBKDF2 iterations"), "{e}");
        // Within the bound, it gets as far as decryption (a wrong key here).
        let e = signing_from_encrypted(&encrypted_with(1), &opts).unwrap_err();
        assert!(matches!(e, KeyError::Decrypt), "{e}");
    }
}
