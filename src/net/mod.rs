//! Network I/O (Cargo feature `net`; the core stays I/O-free): the
//! SSRF-guarded HTTPS [`Fetcher`] and key discovery over it
//! ([`discovery`]).
//!
//! draft-narvaneni-agent-uri-03 (the agent:// draft) sections 5.2-5.3 and 10.3; RFC 8414, RFC 9728,
//! RFC 7517.

pub mod cache;
pub mod card;
pub mod catalog;
#[cfg(feature = "redis")]
pub mod crawl;
pub mod discovery;
pub mod disk;
pub mod facade;
pub mod fetch;
pub mod fleet;
mod report;
pub mod resolve;
pub mod verify;
pub mod webbotauth;

pub use cache::{CachePolicy, CacheStatus};
pub use fetch::{
    ConnectionGate, ConnectionPermit, FetchBudget, FetchError, FetchPolicy, Fetched, Fetcher,
};
pub use verify::Resolver;
