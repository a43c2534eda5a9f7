//! Strict base64url (RFC 4648 section 5, no padding) as JOSE requires
//! (RFC 7515 section 2 and Appendix C).
//!
//! Decoding refuses padding, characters outside the URL-safe alphabet,
//! whitespace, and non-canonical encodings (non-zero trailing bits), so that
//! one value has exactly one encoding.

use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::{alphabet, Engine};

const URL_STRICT: GeneralPurpose = GeneralPurpose::new(
    &alphabet::URL_SAFE,
    GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_padding_mode(DecodePaddingMode::RequireNone)
        .with_decode_allow_trailing_bits(false),
);

const STD_STRICT: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_encode_padding(true)
        .with_decode_padding_mode(DecodePaddingMode::RequireCanonical)
        .with_decode_allow_trailing_bits(false),
);

/// The input was not canonical base64url (or base64, for [`decode_std`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid base64 encoding: {0}")]
pub struct Base64Error(String);

/// Whether every byte of `text` is of the base64url alphabet (RFC 4648
/// section 5: `A`-`Z`, `a`-`z`, `0`-`9`, `-`, `_`; no padding), by table.
pub fn is_url_alphabet(text: &str) -> bool {
    const TABLE: [bool; 256] = {
        let mut t = [false; 256];
        let mut b = 0;
        while b < 256 {
            let c = b as u8;
            t[b] = c.is_ascii_alphanumeric() || c == b'-' || c == b'_';
            b += 1;
        }
        t
    };
    text.bytes().all(|b| TABLE[usize::from(b)])
}

/// Encode as base64url without padding.
///
/// Encoding has one correct output for an input, so it uses `base64-simd`
/// (SIMD where the CPU has it, several times the `base64` crate's speed
/// on the payload of a detached JWS: the whole canonical descriptor is
/// encoded into every signing input); decoding, where strictness matters,
/// stays with the `base64` crate's strict engines above.
pub fn encode(bytes: &[u8]) -> String {
    base64_simd::URL_SAFE_NO_PAD.encode_to_string(bytes)
}

/// [`encode`], appended to `out`.
pub fn encode_into(bytes: &[u8], out: &mut String) {
    base64_simd::URL_SAFE_NO_PAD.encode_append(bytes, out);
}

/// Decode canonical base64url without padding.
///
/// # Errors
/// [`Base64Error`] when the input is not canonical base64url without padding.
pub fn decode(text: &str) -> Result<Vec<u8>, Base64Error> {
    URL_STRICT
        .decode(text)
        .map_err(|e| Base64Error(e.to_string()))
}

/// Encode as standard base64 with padding (RFC 4648 section 4), as RFC 8941
/// byte sequences and RFC 9530 digests use.
pub fn encode_std(bytes: &[u8]) -> String {
    STD_STRICT.encode(bytes)
}

/// Decode canonical standard base64 with padding.
///
/// # Errors
/// [`Base64Error`] when the input is not canonical base64url without padding.
pub fn decode_std(text: &str) -> Result<Vec<u8>, Base64Error> {
    STD_STRICT
        .decode(text)
        .map_err(|e| Base64Error(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strictness() {
        assert_eq!(decode("JC4wMg").unwrap(), b"$.02");
        assert!(decode("JC4wMg==").is_err(), "padding refused");
        assert!(decode("JC4wMh").is_err(), "non-zero trailing bits refused");
        assert!(decode("JC4w Mg").is_err(), "whitespace refused");
        assert!(decode("JC4+Mg").is_err(), "standard alphabet refused");
        assert_eq!(encode(b"$.02"), "JC4wMg");
        assert_eq!(decode_std("aGk=").unwrap(), b"hi");
        assert!(decode_std("aGk").is_err());
    }

    /// The SIMD encoder gives the text of the `base64` crate's strict
    /// engine (RFC 4648 section 5, unpadded) for every length and remainder,
    /// across the SIMD block sizes, and that text decodes back strictly.
    #[test]
    fn simd_encoding_matches_the_reference_engine() {
        let mut x: u32 = 0x9E37_79B9;
        let data: Vec<u8> = (0..5000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect();
        for n in (0..200).chain([255, 256, 257, 1023, 1024, 1025, 4096, 4999, 5000]) {
            let bytes = &data[..n];
            let e = encode(bytes);
            assert_eq!(e, URL_STRICT.encode(bytes), "length {n}");
            assert_eq!(decode(&e).unwrap(), bytes, "length {n}");
            let mut appended = String::from("prefix.");
            encode_into(bytes, &mut appended);
            assert_eq!(appended, format!("prefix.{e}"), "length {n}");
        }
        // RFC 4648 section 10 vectors, base64url without padding.
        for (raw, enc) in [
            ("", ""),
            ("f", "Zg"),
            ("fo", "Zm8"),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg"),
            ("fooba", "Zm9vYmE"),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(encode(raw.as_bytes()), enc);
        }
        assert_eq!(encode(&[0xfb, 0xff]), "-_8", "the URL-safe alphabet");
    }
}
