//! agentsig: make AI-agent descriptors trustworthy.
//!
//! * [`jcs`]: RFC 8785 JSON Canonicalization Scheme, over strict I-JSON ([`json`]).
//! * [`jws`]: detached JWS (RFC 7515 Appendix F, RFC 7797) over the JCS form.
//! * [`keys`], [`jwk`], [`alg`]: keys bound to exactly one algorithm.
//! * [`did`]: did:key / did:jwk encoding and decoding, did:web URLs (no I/O).
//!
//! The security contract of each module is stated in its documentation.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod a2a;
pub mod alg;
pub mod b64;
pub mod batch;
pub mod clock;
pub mod delegation;
pub mod descriptor;
pub mod did;
pub mod digest;
pub mod formats;
pub mod httpsig;
pub mod jcs;
pub mod json;
pub mod jwk;
pub mod jws;
pub mod jwt;
pub mod keys;
mod lockfile;
#[cfg(feature = "net")]
pub mod net;
pub mod pin;
pub mod replay;
pub mod report;
#[cfg(feature = "server")]
pub mod server;
pub mod sfv;
pub mod text;
pub mod trust;
pub mod verifier;

pub use alg::{Algorithm, AllowList};
pub use keys::{KeyError, LoadOptions, SigningKey, VerifyError, VerifyingKey};
