//! Publishing (feature `server`): a tower layer that signs every response
//! ([`layer`]), a layer that verifies signed requests ([`verify`]), and the
//! directory publisher behind `agentsig serve` ([`publish`]).
//!
//! Responses carry an RFC 9530 `Content-Digest` and an RFC 9421 signature
//! over `@status`, `content-type` and `content-digest` (draft-narvaneni-agent-uri-03 section
//! 10.3), made with the current key of a [`KeyRing`]; the ring's JWK Set
//! lists every key so that rotation never breaks a verifier.

pub mod catalog;
pub mod keys;
pub mod layer;

pub use keys::{KeyRing, KeyRingError, PublisherKey};
pub use layer::{SignConfig, SignLayer, SignService, SignedBody, Unsignable};
pub mod publish;
pub mod run;

pub use publish::{PublishConfig, PublishService, Publisher, Site};
pub use run::{serve, tls_config, ServeOptions};
pub mod verify;
pub mod webbotauth;
pub use verify::{VerifiedRequest, VerifyConfig, VerifyLayer, VerifyService};
