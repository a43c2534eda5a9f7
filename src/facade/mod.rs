//! The facade the Python and Node.js packages bind: every rule they share,
//! so that each binding holds only the glue of its language.
//!
//! * [`error`]: which typed error a failed call raises ([`ErrorKind`]:
//!   `NotVerified`, `PolicyRefused`, `FetchError`, `BadKey`, `BadInput`)
//!   with the stable code of `docs/report.md`.
//! * [`options`]: the options a verifier is built from, with secure
//!   defaults and the rules between them ([`VerifierOptions`]).
//! * [`message`]: RFC 9421 requests and responses assembled from the parts
//!   a caller holds (header pairs in received order, an origin-form target
//!   and its `Host`), with the RFC 9110 and RFC 9112 checks.
//! * [`sign`]: descriptor, A2A card, response and request signing with
//!   their default components.
//! * [`verify`]: the [`Facade`] verifier, one method per `verify_*` call,
//!   each returning the report the CLI prints under `--json`.
//! * [`calls`]: the same calls with JSON-text arguments and results, for a
//!   binding whose host half speaks JSON (the WebAssembly package).
//! * [`tape`]: a report in a compact form a JavaScript host reads without
//!   `JSON.parse` (the WebAssembly package's requests).
//!
//! The network (Web Bot Auth key directories, catalogs by URL) is the `net`
//! feature's, which supplies a [`Network`] (`agentsig::net::facade`).
//!
//! ```
//! use agentsig::facade::{sign_descriptor, ErrorKind, VerifierOptions};
//! use agentsig::trust::KeySource;
//!
//! let key = agentsig::SigningKey::from_ed25519_seed(&[4u8; 32])?;
//! let doc = br#"{"name":"planner","url":"https://planner.example/"}"#;
//! let jws = sign_descriptor(doc, &key)?;
//!
//! let mut o = VerifierOptions::default();
//! o.keys.add(key.verifying_key().clone(), KeySource::Pinned);
//! let v = o.build(None)?;
//! assert!(v.verify_descriptor(doc, &jws)?.verified);
//!
//! let tampered = br#"{"name":"planner","url":"https://evil.example/"}"#;
//! let f = v.verify_descriptor(tampered, &jws).unwrap_err();
//! assert_eq!(f.kind, ErrorKind::NotVerified);
//! assert!(!f.report.unwrap().verified);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod calls;
pub mod error;
pub mod keys;
pub mod message;
pub mod options;
pub mod sign;
pub mod tape;
pub mod verify;

pub use error::{classify, settle, ErrorKind, Failure, Outcome};
pub use keys::{algorithm, jwk_key, jwks_keys, load_public, public_jwk, refuse_secret};
pub use message::{
    check_headers, fields, request_message, status_code, verified_request_message, Headers,
};
pub use options::{
    add_agent_keys, DirectoryFetch, KeyCache, KeyCacheError, Spelling, VerifierOptions, MAX_AGENTS,
};
pub use sign::{
    parse_json, sign_card, sign_descriptor, sign_request, sign_response, RequestSigning,
    ResponseSigning, DEFAULT_EXPIRES_IN,
};
pub use verify::{authorities_policy, catalog_error, Facade, Network, RequestCheck};

/// Largest HTTP body (and A2A card or delegation bundle) a binding accepts
/// in one call: 16 MiB, the CLI's bound on any input (`docs/report.md`,
/// `input.unreadable`).
pub const MAX_INPUT_BYTES: usize = 16 * 1024 * 1024;
