//! Base64url without padding (RFC 4648 section 5) and standard base64, to
//! build and take apart test inputs (the crate's own codec is internal).
//! Included by path by the tests and benches that need it.

// Not every includer uses every function.
#![allow(dead_code)]

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
pub fn encode(b: &(impl AsRef<[u8]> + ?Sized)) -> String {
    URL_SAFE_NO_PAD.encode(b.as_ref())
}
pub fn decode(s: &(impl AsRef<[u8]> + ?Sized)) -> Result<Vec<u8>, base64::DecodeError> {
    URL_SAFE_NO_PAD.decode(s.as_ref())
}
pub fn encode_std(b: &(impl AsRef<[u8]> + ?Sized)) -> String {
    STANDARD.encode(b.as_ref())
}
pub fn decode_std(s: &(impl AsRef<[u8]> + ?Sized)) -> Result<Vec<u8>, base64::DecodeError> {
    STANDARD.decode(s.as_ref())
}
