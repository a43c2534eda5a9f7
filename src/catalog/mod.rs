//! AI Catalogs and their Trust Manifests: sign and verify, without network
//! I/O (the publisher's files that [`digests`] reads are the one exception).
//!
//! Text followed: `specification/ai-catalog.md` of `Agent-Card/ai-catalog`
//! at commit [`AI_CATALOG_COMMIT`] (sections cited by heading), with the
//! MCP Server Card extension (`modelcontextprotocol/experimental-ext-server-card`
//! at [`SERVER_CARD_COMMIT`]) for the entry member `type` (the later name
//! of `mediaType`) and the server card rules. The structural MUSTs are
//! lint rows ([`crate::formats::CATALOG_RULES`]); this module adds what
//! needs keys:
//!
//! * [`manifest`]: a Trust Manifest's `signature` is a compact JWS with
//!   detached payload (RFC 7515 Appendix F) over the RFC 8785 canonical form
//!   of the manifest with its `signature` member removed ("Trust Manifest
//!   Signatures"), made and checked with [`crate::jws`] and [`crate::jcs`].
//!   The key must be one of the manifest `identity`'s keys: every key
//!   request carries the identity as its issuer, so a
//!   [`crate::trust::PerIssuer`] resolver answers only with the keys that
//!   identity resolved to (a key from another identity's JWK Set is not
//!   found).
//! * [`verify`]: a whole catalog (a document at hand): lint, each entry's
//!   manifest (identity equal to the entry's `identifier`, "Identity"),
//!   declared digests that can be checked without fetching (`data:`
//!   attestations), inline artifacts by their media type (A2A cards by
//!   their embedded signatures, MCP Server Cards linted, nested catalogs
//!   recursively to [`MAX_DEPTH`]), and a report per entry; given a
//!   [`Fetch`], also entries by `url` (server cards by their response
//!   signature or detached JWS), fetched digests, `publisher-identity`
//!   JWTs and the host identity.
//!   A catalog at hand of at least 64 entries is verified on all cores
//!   (parsed, linted, its manifests checked and its memory freed in
//!   parallel), with the report of the walk on one thread.
//! * [`expand`]: a catalog as a source of inputs for bulk verification
//!   (`verify --batch`), one per entry. Fetching
//!   (entries by `url`, nested catalogs by URL, keys by identity) is the
//!   `net` feature's.
//!
//! * [`digests`]: `sign --digest-from`: declared digests (attestations'
//!   `digest` and `size`, the artifact's provenance `sourceDigest`) filled
//!   from the publisher's own files before signing.
//!
//! **The binding.** A Trust Manifest signature covers the manifest only
//! ("Trust Manifest Signatures": it "can be verified independently of the
//! artifact content"), so an entry is verified only when its artifact is
//! bound ([`Binding`]): by a signature of its own, by a digest its
//! verified manifest declares, or by a verified signature over the whole
//! catalog. The digest uses the vocabulary of "Verifying Artifact
//! Integrity" at [`AI_CATALOG_COMMIT`]: a provenance link whose `sourceId`
//! names the artifact and whose `sourceDigest` is its digest. For an entry
//! by `url` the link names the `url` (the text's own case); for inline
//! `data`, which the text does not cover, it names the entry `identifier`
//! (the text's name of the artifact, equal to the manifest `identity`) and
//! the digest is SHA-256 of the RFC 8785 form of `data`, the canonical form
//! the manifest signature itself uses ([`manifest::bind_inline_data`],
//! written by [`sign_catalog`]). Any reader of the text reads the link; a
//! manifest copied over another artifact fails it.
//!
//! Bounded: [`MAX_CATALOG_BYTES`] per document, [`MAX_ENTRIES`] entries in
//! all, [`MAX_DEPTH`] levels of nesting (ADR 0001 of the catalog
//! repository: 4 RECOMMENDED, the root catalog counting as level 1).

pub mod digests;
pub mod expand;
pub mod manifest;
mod outcome;
pub(crate) mod parallel;
pub mod verify;

pub use crate::formats::{AI_CATALOG_COMMIT, SERVER_CARD_COMMIT};
pub use digests::{fill_digests, Filled, LocalFiles};
pub use expand::{expand_catalog, is_catalog_document, is_catalog_url, CatalogInput, EntryCheck};
pub use manifest::{
    canonical_manifest, sign_catalog, sign_manifest, ManifestError, SignCatalogError, SignTarget,
};
pub use outcome::{Binding, Outcome, Status};
pub use verify::{CatalogError, CatalogOptions, CatalogReport, EntryCounts, EntryResult, Fetch};

/// The media type of an AI Catalog (AI Catalog "Media Type").
pub const MEDIA_TYPE: &str = "application/ai-catalog+json";
/// The media type of an A2A Agent Card in a catalog entry (AI Catalog
/// "Catalog Entry").
pub const A2A_CARD_MEDIA_TYPE: &str = "application/a2a-agent-card+json";
/// The media type of an MCP Server Card (AI Catalog "Catalog Entry"; MCP
/// Server Card `docs/discovery.md`).
pub const MCP_SERVER_CARD_MEDIA_TYPE: &str = "application/mcp-server-card+json";
/// The well-known path of a domain's catalog (AI Catalog "Discovery", RFC 8615).
pub const WELL_KNOWN_PATH: &str = "/.well-known/ai-catalog.json";
/// Largest catalog document read: 4 MiB (a 10 MB catalog is refused before
/// it is parsed).
pub const MAX_CATALOG_BYTES: usize = 4 * 1024 * 1024;
/// Most entries verified in one catalog, nested ones included.
pub const MAX_ENTRIES: usize = 10_000;
/// Most documents fetched for one catalog verification.
pub const MAX_FETCHES: usize = 256;
/// Deepest nesting followed: the root catalog is level 1, a catalog at level
/// 5 is refused (ADR 0001: "a maximum nesting depth of 4").
pub const MAX_DEPTH: usize = 4;

/// Is `media_type` this type? Compares the essence (type/subtype,
/// case-insensitive, parameters ignored; RFC 9110 section 8.3.1).
pub fn media_type_is(media_type: &str, expected: &str) -> bool {
    media_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .eq_ignore_ascii_case(expected)
}
