//! The outcome of one check of a catalog: a [`Status`] and why.

use serde::Serialize;

/// The result of one check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Status {
    /// Checked and good: a signature verified, or a card linted clean.
    Verified,
    /// There is nothing signed to check (no manifest, no signature, an A2A
    /// card without signatures). A failure under
    /// [`CatalogOptions::require_signed`](super::CatalogOptions::require_signed).
    Unsigned,
    /// Not checked: an artifact of a media type agentsig does not know, or
    /// one referenced by `url` when nothing is fetched. Never a failure.
    NotChecked,
    /// Agentsig cannot check it (a SPIFFE or DNS identity's keys): never
    /// passed, so a failure.
    Unsupported,
    /// Checked and refused.
    Failed,
}

impl Status {
    /// `"verified"`, `"unsigned"`, `"not-checked"`, `"unsupported"`, `"failed"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Verified => "verified",
            Status::Unsigned => "unsigned",
            Status::NotChecked => "not-checked",
            Status::Unsupported => "unsupported",
            Status::Failed => "failed",
        }
    }
}

/// A status and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Outcome {
    /// The status.
    pub status: Status,
    /// What was found, for people.
    pub message: String,
    /// The JWS `kid` of the signature, when there was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kid: Option<String>,
    /// The RFC 7638 thumbprint of the key that verified it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_thumbprint: Option<String>,
}

impl Outcome {
    /// An outcome without key information.
    pub fn new(status: Status, message: impl Into<String>) -> Outcome {
        Outcome {
            status,
            message: message.into(),
            kid: None,
            key_thumbprint: None,
        }
    }
    /// A [`Status::Failed`] outcome.
    pub fn failed(message: impl Into<String>) -> Outcome {
        Outcome::new(Status::Failed, message)
    }
}

/// What binds an entry's artifact (the bytes a consumer acts on) to a
/// trusted key: a Trust Manifest signature covers the manifest only (AI
/// Catalog "Trust Manifest Signatures": "verified independently of the
/// artifact content"), so a verified manifest alone says nothing of the
/// entry's `data` or of what its `url` serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Binding {
    /// The artifact verified by a signature of its own: an A2A card's
    /// embedded signatures (A2A v1.0 section 8.4), a fetched card's RFC
    /// 9421 response signature or detached JWS.
    OwnSignature,
    /// A digest declared by the entry's verified Trust Manifest matches the
    /// artifact: a provenance link naming it (`sourceId` the entry `url`,
    /// or for inline `data` the entry `identifier`) whose `sourceDigest`
    /// is the digest of the fetched bytes, or of the RFC 8785 form of
    /// `data` (AI Catalog "Verifying Artifact Integrity").
    ManifestDigest,
    /// Inline `data` covered by a verified signature over the whole
    /// catalog document by the host identity.
    CatalogSignature,
    /// A nested catalog: its entries are bound, or not, one by one.
    Nested,
    /// Nothing a trusted key signed covers the artifact.
    Unbound,
}

impl Binding {
    /// `"own-signature"`, `"manifest-digest"`, `"catalog-signature"`,
    /// `"nested"`, `"unbound"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Binding::OwnSignature => "own-signature",
            Binding::ManifestDigest => "manifest-digest",
            Binding::CatalogSignature => "catalog-signature",
            Binding::Nested => "nested",
            Binding::Unbound => "unbound",
        }
    }

    /// Anything but [`Binding::Unbound`].
    pub fn is_bound(self) -> bool {
        self != Binding::Unbound
    }
}
