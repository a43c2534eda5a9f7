//! agentsig: make AI-agent descriptors trustworthy.
//!
//! Start with [`Verifier`]: built once from the keys you trust and a policy
//! per format, shared between threads, it verifies descriptors (detached JWS
//! over RFC 8785), RFC 9421 HTTP messages, JWTs, delegation chains (RFC 8693)
//! and A2A Agent Cards. Every `verify` is `Ok` only when something verified;
//! the error carries the full report. Keys are bound to one [`Algorithm`]
//! and the algorithm never comes from an untrusted header alone.
//!
//! # Publish: sign a descriptor
//!
//! ```
//! use agentsig::{descriptor, Algorithm, SigningKey};
//!
//! let key = SigningKey::generate(Algorithm::EcdsaP256Sha256)?; // or SigningKey::from_pem(..)
//! let doc = br#"{"name":"planner","url":"https://planner.example/"}"#;
//! let signed = descriptor::sign(doc, &key)?;
//! // Publish `doc` and, beside it, `signed.jws` (draft-narvaneni-agent-uri-03 section 10.3), and
//! // the public key in a JWK Set:
//! let jwks = agentsig::jwk::jwks_document(&[key.verifying_key()]);
//! # let _ = (signed, jwks);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Resolve: trust the publisher's keys, verify what it serves
//!
//! ```
//! # use agentsig::{descriptor, Algorithm, SigningKey};
//! # let key = SigningKey::generate(Algorithm::EcdsaP256Sha256)?;
//! # let doc = br#"{"name":"planner"}"#;
//! # let jws = descriptor::sign(doc, &key)?.jws;
//! # let jwks = agentsig::jwk::jwks_document(&[key.verifying_key()]).to_string();
//! use agentsig::trust::{KeySource, StaticKeys};
//! use agentsig::Verifier;
//!
//! let set = StaticKeys::from_jwks(jwks.as_bytes(), KeySource::Jwks("jwks.json".into()), None)?;
//! assert!(set.skipped.is_empty(), "every member of the set is usable");
//! let verifier = Verifier::builder(set.keys).build();
//! let report = verifier.verify_descriptor(doc, &jws)?;
//! assert!(report.verified());
//! // Over HTTPS (feature `net`): `net::resolve_agent` and `net::verify_url`
//! // fetch through the SSRF guard and discover keys (RFC 8414, JWKS, DIDs).
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Audit: a delegation chain
//!
//! ```
//! use agentsig::delegation::mint::{mint, ActorSpec, MintRequest};
//! use agentsig::policy::JwtPolicy;
//! use agentsig::trust::{KeySource, StaticKeys};
//! use agentsig::{Algorithm, SigningKey, Verifier};
//!
//! let key = SigningKey::generate(Algorithm::Ed25519)?;
//! let now = agentsig::clock::Clock::now(&agentsig::clock::SystemClock);
//! let mut req = MintRequest::new("https://as.example", "alice", now, 300);
//! req.scope = Some("calendar.read".into());
//! req.actors = vec![ActorSpec::new("https://agent.example")];
//! let token = mint(&req, &key)?;
//! let keys = StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned);
//! let v = Verifier::builder(keys).jwt(JwtPolicy::default().issuers(["https://as.example"])).build();
//! let report = v.audit_delegation(&[&token])?; // Err carries the report of a failed audit
//! assert_eq!(report.hops[0].current_actor().map(|a| a.sub.as_str()), Some("https://agent.example"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Modules
//!
//! Facade and policy:
//! * [`verifier`]: the [`Verifier`], its builder, and the `http` extension
//!   traits ([`verifier::VerifyHttp`]).
//! * [`policy`]: the policy and limit types each format takes, and the shared
//!   [`policy::Context`]; plain data with secure defaults.
//! * [`report`]: the one machine-readable report shape for every verdict.
//! * [`batch`]: many verifications on all cores with one shared [`Verifier`],
//!   results in input order, memory bounded by a window.
//!
//! Formats (sign, and verify through the [`Verifier`]):
//! * [`descriptor`]: descriptors signed with a detached JWS over RFC 8785 JCS.
//! * [`jws`]: JSON Web Signature (RFC 7515, RFC 7797), detached content.
//! * [`jwt`]: JSON Web Tokens (RFC 7519) under RFC 8725.
//! * [`httpsig`]: RFC 9421 HTTP Message Signatures, with [`digest`] (RFC 9530).
//! * [`delegation`]: RFC 8693 act-chain audit and token minting.
//! * [`a2a`]: A2A Agent Card signatures as the reference SDKs compute them.
//! * [`formats`]: the seed descriptor formats: detection, lint, publication.
//! * [`catalog`]: AI Catalogs: Trust Manifest signatures (detached JWS over
//!   RFC 8785), and a whole catalog verified entry by entry.
//! * [`announce`]: signed key announcements for key continuity.
//! * [`webbotauth`]: the Web Bot Auth profile of RFC 9421: agents that sign
//!   their requests, their key directory, sites that verify them.
//!
//! Keys and trust:
//! * [`keys`]: [`SigningKey`] and [`VerifyingKey`], each bound to one [`Algorithm`] ([`alg`]).
//! * [`jwk`]: JWK and JWK Sets (RFC 7517), RFC 7638 thumbprints.
//! * [`did`]: did:key, did:jwk and did:web forms (no I/O).
//! * [`trust`]: where trusted keys come from ([`trust::KeyResolver`],
//!   [`trust::StaticKeys`], [`trust::PerIssuer`]).
//!
//! State:
//! * [`replay`]: replay stores for JWT `jti` and RFC 9421 `nonce`.
//! * [`pin`]: key pinning per agent identity (trust on first use).
//!
//! Primitives:
//! * [`jcs`]: RFC 8785 canonical JSON, over strict I-JSON ([`json`]).
//! * [`clock`]: the injectable clock.
//! * [`sfv`], [`text`]: RFC 9651 structured fields, safe printing of
//!   untrusted text.
//!
//! I/O (Cargo features): `net` (the SSRF-guarded HTTPS fetcher, RFC 9111
//! cache, key discovery, `resolve_agent`), `server` (`agentsig serve` and
//! the tower layers), `redis` (shared replay and pin stores).
//!
//! The security contract of each module is stated in its documentation; the
//! module layering is in `docs/embedding.md`.

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![warn(clippy::missing_errors_doc)]

pub mod a2a;
pub mod alg;
pub mod announce;
pub(crate) mod b64;
pub mod batch;
pub mod catalog;
pub mod clock;
pub mod delegation;
pub mod descriptor;
pub mod did;
pub mod digest;
pub mod facade;
pub mod formats;
pub mod httpsig;
pub mod inspect;
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
pub mod policy;
pub mod replay;
pub mod report;
#[cfg(feature = "server")]
pub mod server;
pub mod sfv;
pub mod text;
pub mod trust;
pub mod verifier;
pub mod webbotauth;
mod webbotauth_report;

pub use alg::{Algorithm, AllowList};
pub use keys::{KeyError, LoadOptions, SigningKey, VerifyError, VerifyingKey};
pub use verifier::Verifier;

/// The internal codecs are not part of the API: base64url is `base64`'s job
/// for an embedder.
///
/// ```compile_fail
/// let _ = agentsig::b64::encode(b"x");
/// ```
///
/// One way to verify: the format-level functions are crate-private and the
/// `Verifier` methods are the API.
///
/// ```compile_fail
/// fn f(v: &agentsig::Verifier) { let _ = agentsig::jws::verify(v, "a..b", None); }
/// ```
///
/// ```compile_fail
/// fn f(v: &agentsig::Verifier) { let _ = agentsig::delegation::audit(&["t"], v); }
/// ```
///
/// `httpsig::sign`, `formats::lint` and `formats::detect` are the functions
/// only; their modules are private.
///
/// ```compile_fail
/// let _ = agentsig::httpsig::sign::default_components;
/// ```
///
/// ```compile_fail
/// let _ = agentsig::formats::lint::RULES;
/// ```
#[cfg(doctest)]
pub struct ApiSurface;
