//! DID key forms, encoding and decoding, with no I/O.
//!
//! * `did:key` (W3C CCG did:key method v0.7): `did:key:z` followed by
//!   base58btc(varint(multicodec) || key). Supported: ed25519-pub (0xed),
//!   p256-pub (0x1200) and p384-pub (0x1201), EC points SEC1-compressed.
//!   Only the `z` (base58btc) multibase prefix is accepted, as the method
//!   requires. Other codecs (secp256k1, X25519, P-521, ...) are refused with
//!   [`DidError::Unsupported`].
//! * `did:jwk` (did:jwk spec): `did:jwk:` followed by base64url(JWK JSON).
//!   Public keys only: a private member or a symmetric key is refused (spec
//!   "Security and Privacy Considerations").
//! * `did:web` (did:web method, "Read (Resolve)"): [`did_web_url`] maps the
//!   DID to the HTTPS URL of its DID document; fetching it is the caller's
//!   business.

use crate::alg::Algorithm;
use crate::keys::{KeyError, VerifyingKey};

/// Largest DID accepted for decoding, in bytes.
pub const MAX_DID_LEN: usize = 8 * 1024;

/// Why a DID could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DidError {
    /// The string is not a DID of the expected method.
    #[error("not a did:{method} DID")]
    WrongMethod {
        /// The expected method, e.g. `"key"`.
        method: &'static str,
    },
    /// The DID is longer than [`MAX_DID_LEN`] bytes.
    #[error("the DID is longer than {MAX_DID_LEN} bytes")]
    TooLong,
    /// The did:key multibase prefix is not `z` (base58btc).
    #[error("did:key must use the base58btc multibase prefix 'z' (did:key method section 3.1)")]
    Multibase,
    /// The did:key method-specific id is not valid base58btc.
    #[error("did:key is not valid base58btc")]
    Base58,
    /// The did:key multicodec is not ed25519-pub, p256-pub or p384-pub.
    #[error("unsupported did:key multicodec {codec}: only ed25519-pub, p256-pub and p384-pub")]
    Unsupported {
        /// The multicodec, in hex, or a note when it is not a varint.
        codec: String,
    },
    /// The did:key key bytes have the wrong length for their multicodec.
    #[error("did:key {codec} key has {got} bytes, expected {expected}")]
    KeyLength {
        /// The multicodec name, e.g. `"p256-pub"`.
        codec: &'static str,
        /// The key length in bytes.
        got: usize,
        /// The length this codec's keys have, in bytes.
        expected: usize,
    },
    /// The did:jwk method-specific id is not base64url of a JWK JSON object.
    #[error("did:jwk is not valid base64url JSON: {0}")]
    JwkEncoding(String),
    /// The did:jwk holds a private member or a symmetric key.
    #[error("did:jwk holds private or symmetric key material")]
    PrivateKey,
    /// The did:web DID cannot be mapped to an HTTPS URL (did:web method, "Read (Resolve)").
    #[error("did:web: {0}")]
    Web(String),
    /// The decoded key is not a valid verifying key.
    #[error("invalid key: {0}")]
    Key(#[from] KeyError),
}

const ED25519_PUB: [u8; 2] = [0xed, 0x01];
const P256_PUB: [u8; 2] = [0x80, 0x24];
const P384_PUB: [u8; 2] = [0x81, 0x24];

/// The did:key of a public key (Ed25519, P-256, P-384; `None` otherwise).
pub fn did_key(key: &VerifyingKey) -> Option<String> {
    let jwk = key.to_jwk();
    let x = crate::b64::decode(jwk.x.as_deref()?).ok()?;
    let (prefix, bytes) = match key.algorithm() {
        Algorithm::Ed25519 => (ED25519_PUB, x),
        Algorithm::EcdsaP256Sha256 | Algorithm::EcdsaP384Sha384 => {
            let y = crate::b64::decode(jwk.y.as_deref()?).ok()?;
            let mut c = vec![if y.last()? & 1 == 1 { 0x03 } else { 0x02 }];
            c.extend_from_slice(&x);
            let p = if key.algorithm() == Algorithm::EcdsaP256Sha256 {
                P256_PUB
            } else {
                P384_PUB
            };
            (p, c)
        }
        _ => return None,
    };
    let mut v = prefix.to_vec();
    v.extend_from_slice(&bytes);
    Some(format!("did:key:z{}", bs58::encode(v).into_string()))
}

/// The did:jwk of a public key: base64url of its public JWK without `kid`
/// (`None` for a symmetric key).
pub fn did_jwk(key: &VerifyingKey) -> Option<String> {
    if key.is_symmetric() {
        return None;
    }
    let mut j = key.to_jwk();
    j.kid = None;
    Some(format!(
        "did:jwk:{}",
        crate::b64::encode(j.to_json_string().as_bytes())
    ))
}

/// Strip `did:<method>:` and a DID URL's fragment, path or query.
fn method_specific_id<'a>(did: &'a str, method: &'static str) -> Result<&'a str, DidError> {
    if did.len() > MAX_DID_LEN {
        return Err(DidError::TooLong);
    }
    let rest = did
        .strip_prefix("did:")
        .and_then(|r| r.strip_prefix(method))
        .and_then(|r| r.strip_prefix(':'))
        .ok_or(DidError::WrongMethod { method })?;
    Ok(rest.split(['#', '?', '/']).next().unwrap_or(""))
}

/// Decode a `did:key` (or a did:key DID URL such as `did:key:z..#z..`) to
/// its verifying key. EC points are decompressed and checked on the curve;
/// Ed25519 small-order keys are refused like any other loaded key.
///
/// # Example
///
/// ```
/// use agentsig::alg::Algorithm;
/// use agentsig::did::{decode_did_key, did_key, DidError};
///
/// let did = "did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp";
/// let key = decode_did_key(did)?;
/// assert_eq!(key.algorithm(), Algorithm::Ed25519);
/// assert_eq!(did_key(&key).as_deref(), Some(did));
///
/// assert!(matches!(decode_did_key("did:web:example.com"), Err(DidError::WrongMethod { .. })));
/// # Ok::<(), DidError>(())
/// ```
///
/// # Errors
/// [`DidError`] when the DID or DID URL is malformed or names an unsupported method or key type.
pub fn decode_did_key(did: &str) -> Result<VerifyingKey, DidError> {
    let id = method_specific_id(did, "key")?;
    let b58 = id.strip_prefix('z').ok_or(DidError::Multibase)?;
    let bytes = bs58::decode(b58)
        .with_alphabet(bs58::Alphabet::BITCOIN)
        .into_vec()
        .map_err(|_| DidError::Base58)?;
    let (codec, len) = read_varint(&bytes).ok_or_else(|| DidError::Unsupported {
        codec: "(not a varint)".into(),
    })?;
    let key = &bytes[len..];
    let expect = |name: &'static str, n: usize| {
        if key.len() == n {
            Ok(())
        } else {
            Err(DidError::KeyLength {
                codec: name,
                got: key.len(),
                expected: n,
            })
        }
    };
    match codec {
        0xed => {
            expect("ed25519-pub", 32)?;
            Ok(VerifyingKey::from_ed25519_bytes(key)?)
        }
        0x1200 => {
            expect("p256-pub", 33)?;
            Ok(VerifyingKey::from_sec1_point(
                Algorithm::EcdsaP256Sha256,
                key,
            )?)
        }
        0x1201 => {
            expect("p384-pub", 49)?;
            Ok(VerifyingKey::from_sec1_point(
                Algorithm::EcdsaP384Sha384,
                key,
            )?)
        }
        other => Err(DidError::Unsupported {
            codec: match other {
                0xe7 => "secp256k1-pub (0xe7)".into(),
                0xec => "x25519-pub (0xec)".into(),
                0x1202 => "p521-pub (0x1202)".into(),
                0x1205 => "rsa-pub (0x1205)".into(),
                c => format!("0x{c:x}"),
            },
        }),
    }
}

/// An unsigned LEB128 varint (multiformats unsigned-varint: at most 9
/// bytes, minimal encoding) and the number of bytes it used.
fn read_varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (i, byte) in b.iter().enumerate().take(9) {
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            // Minimal: no trailing zero group except for the value 0.
            if i > 0 && *byte == 0 {
                return None;
            }
            return Some((v, i + 1));
        }
    }
    None
}

/// Decode a `did:jwk` (or a did:jwk DID URL such as `did:jwk:..#0`) to its
/// verifying key. The JWK's `kty`/`crv`/`alg`/`use` are checked as for any
/// JWK; private members and `kty: "oct"` are refused.
///
/// # Errors
/// [`DidError`] when the DID or DID URL is malformed or names an unsupported method or key type.
pub fn decode_did_jwk(did: &str) -> Result<VerifyingKey, DidError> {
    let id = method_specific_id(did, "jwk")?;
    let json = crate::b64::decode(id).map_err(|e| DidError::JwkEncoding(e.to_string()))?;
    let value: serde_json::Value =
        serde_json::from_slice(&json).map_err(|e| DidError::JwkEncoding(e.to_string()))?;
    let jwk = crate::jwk::Jwk::from_value(&value)?;
    if jwk.is_private() {
        return Err(DidError::PrivateKey);
    }
    Ok(jwk.to_verifying_key(None)?)
}

/// The HTTPS URL of a `did:web` DID document (did:web method, "Read"):
/// the method-specific id split on `:`; the first part is the host, whose
/// only allowed percent-encoding is `%3A` before a port; the other parts
/// are path segments. No path gives `https://host/.well-known/did.json`,
/// a path gives `https://host/path/did.json`.
///
/// Refused: IP-address hosts (the method says the domain MUST NOT be an IP
/// address), empty, `.` or `..` segments, any other `%` escape (never
/// decoding `%2F` into a separator), and characters outside a host name or
/// a path segment.
///
/// # Errors
/// [`DidError`] when the DID or DID URL is malformed or names an unsupported method or key type.
pub fn did_web_url(did: &str) -> Result<String, DidError> {
    let id = method_specific_id(did, "web")?;
    let web = |m: &str| DidError::Web(m.to_owned());
    let mut parts = id.split(':');
    let host_part = parts.next().unwrap_or("");
    let (host, port) = match host_part.find("%3A").or_else(|| host_part.find("%3a")) {
        Some(i) => (&host_part[..i], Some(&host_part[i + 3..])),
        None => (host_part, None),
    };
    if host.is_empty() || host.len() > 253 {
        return Err(web("empty or overlong host"));
    }
    if !host
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
        || host.starts_with(['.', '-'])
        || host.ends_with(['.', '-'])
        || host.contains("..")
    {
        return Err(web("host is not a domain name"));
    }
    if host.parse::<std::net::Ipv4Addr>().is_ok()
        || host
            .rsplit('.')
            .next()
            .is_some_and(|t| t.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err(web("the host must be a domain name, not an IP address"));
    }
    let mut url = format!("https://{}", host.to_ascii_lowercase());
    if let Some(p) = port {
        let n: u16 = p
            .parse()
            .ok()
            .filter(|n| *n != 0 && p.bytes().all(|b| b.is_ascii_digit()))
            .ok_or_else(|| web("port after %3A is not a number in 1..=65535"))?;
        url.push_str(&format!(":{n}"));
    }
    let segments: Vec<&str> = parts.collect();
    if segments.is_empty() {
        url.push_str("/.well-known/did.json");
        return Ok(url);
    }
    for s in &segments {
        if s.is_empty() || *s == "." || *s == ".." {
            return Err(web("empty, '.' or '..' path segment"));
        }
        if !s
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
        {
            return Err(web(
                "path segment holds a character other than A-Z a-z 0-9 - . _ ~ (percent-escapes are refused)",
            ));
        }
        url.push('/');
        url.push_str(s);
    }
    url.push_str("/did.json");
    Ok(url)
}
