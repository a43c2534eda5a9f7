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
