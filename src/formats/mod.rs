//! The agent-descriptor formats agentsig knows (the agent:// draft, AWP v0.2, the Web of Agents draft, the AgentCard draft and AIDIP), their publication
//! facts (well-known path, media type), detection and lint.
//!
//! | format | seed | where it is published | media type |
//! |---|---|---|---|
//! | [`Format::AgentDescriptor`] agent:// descriptor | 001 section 7.1 | the URL its `agents.json` entry names | `application/agent+json` (001 section 12.3) |
//! | [`Format::AgentsRegistry`] agent:// registry | 001 section 5.1 | `/.well-known/agents.json` (001 section 12.2) | `application/json` |
//! | [`Format::Awp`] AWP `agent.json` | 002 section 3 | `/agent.json` | `application/json` (002 section 3, MUST) |
//! | [`Format::Woa`] Web of Agents | 000 section 4 | `/.well-known/woa.json` (000 section 9.1) | `application/woa+json` (000 section 9.2) |
//! | [`Format::AgentCard`] AgentCard (Tsoi) | 003 "Well-Known URI" | `/.well-known/agentcard` | `application/agentcard+json` |
//! | [`Format::Aidip`] AIDIP agent metadata | 004 "Agent Metadata" | registered by `POST /agents` (no path) | `application/json` |
//! | [`Format::A2a`] A2A Agent Card | A2A v1.0 section 8.2 | `/.well-known/agent-card.json` | `application/json` |
//! | [`Format::AiCatalog`] AI Catalog | AI Catalog "Media Type", "Discovery" | `/.well-known/ai-catalog.json` | `application/ai-catalog+json` |
//! | [`Format::McpServerCard`] MCP Server Card | MCP Server Card `docs/discovery.md` | `<streamable-HTTP URL>/server-card` (no fixed path) | `application/mcp-server-card+json` |

pub(crate) mod addr;
mod catalog_lint;
mod detect;
mod lint;

pub use addr::{classify_host, HostClass};
pub use detect::{detect, detect_bytes, DetectError};
pub(crate) use lint::lint_catalog_own;
pub use lint::{
    agent_uri_problem, check_before_signing, check_depends_graph, is_rfc3339, is_semver, lint,
    lint_bytes, rules_for, schema_problem, served_media_type, served_media_type_finding,
    served_path_finding, Check, Cx, DependsProblem, Finding, LintReport, Rule, Severity,
    SignGateError, Ty, DEPENDS_MAX_DEPTH, RULES,
};

pub use catalog_lint::{
    digest_problem, ArtifactDigest, DigestProblem, AI_CATALOG_COMMIT, CATALOG_RULES,
    SERVER_CARD_COMMIT, SERVER_CARD_SCHEMA, SUPPORTED_CATALOG_MAJOR,
};

pub(crate) use catalog_lint::entry_media_type;

use std::fmt;
use std::str::FromStr;

/// Every lint rule: the descriptor formats' [`RULES`] and the AI Catalog and
/// MCP Server Card rows of [`CATALOG_RULES`].
pub(crate) fn all_rules() -> impl Iterator<Item = &'static Rule> {
    RULES.iter().chain(CATALOG_RULES.iter())
}

/// A descriptor format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// An agent:// agent descriptor (draft-narvaneni-agent-uri-03 section 7.1).
    AgentDescriptor,
    /// An agent:// registry, `agents.json` (draft-narvaneni-agent-uri-03 section 5.1).
    AgentsRegistry,
    /// An Agent Web Protocol `agent.json` (AWP v0.2).
    Awp,
    /// A Web of Agents document, `woa.json` (the Web of Agents draft).
    Woa,
    /// An the AgentCard draft.
    AgentCard,
    /// AIDIP agent metadata (AIDIP).
    Aidip,
    /// An A2A Agent Card (A2A specification v1.0 section 8).
    A2a,
    /// An AI Catalog (`application/ai-catalog+json`, AI Catalog
    /// specification "AI Catalog").
    AiCatalog,
    /// An MCP Server Card (`application/mcp-server-card+json`, the MCP
    /// Server Card extension's `schema.json`).
    McpServerCard,
}

/// Every format, in a stable order.
pub const ALL: [Format; 9] = [
    Format::AgentDescriptor,
    Format::AgentsRegistry,
    Format::Awp,
    Format::Woa,
    Format::AgentCard,
    Format::Aidip,
    Format::A2a,
    Format::AiCatalog,
    Format::McpServerCard,
];

impl Format {
    /// Stable name used on the command line (`--format`) and in JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Format::AgentDescriptor => "agent",
            Format::AgentsRegistry => "agents-registry",
            Format::Awp => "awp",
            Format::Woa => "woa",
            Format::AgentCard => "agentcard",
            Format::Aidip => "aidip",
            Format::A2a => "a2a",
            Format::AiCatalog => "ai-catalog",
            Format::McpServerCard => "mcp-server-card",
        }
    }

    /// Human-readable title.
    pub fn title(self) -> &'static str {
        match self {
            Format::AgentDescriptor => "agent:// descriptor",
            Format::AgentsRegistry => "agent:// registry (agents.json)",
            Format::Awp => "AWP agent.json",
            Format::Woa => "Web of Agents (woa.json)",
            Format::AgentCard => "AgentCard",
            Format::Aidip => "AIDIP agent metadata",
            Format::A2a => "A2A Agent Card",
            Format::AiCatalog => "AI Catalog",
            Format::McpServerCard => "MCP Server Card",
        }
    }

    /// The path a publisher serves the document at, relative to the origin,
    /// or `None` when the format fixes no path (an agent:// descriptor lives
    /// wherever its registry entry points; AIDIP metadata is registered by
    /// `POST /agents`).
    pub fn well_known_path(self) -> Option<&'static str> {
        match self {
            Format::AgentDescriptor => None,
            Format::AgentsRegistry => Some("/.well-known/agents.json"),
            Format::Awp => Some("/agent.json"),
            Format::Woa => Some("/.well-known/woa.json"),
            Format::AgentCard => Some("/.well-known/agentcard"),
            Format::Aidip => None,
            Format::A2a => Some("/.well-known/agent-card.json"),
            Format::AiCatalog => Some("/.well-known/ai-catalog.json"),
            Format::McpServerCard => None,
        }
    }

    /// The media type the document is served (and signed, as the JWS `cty`
    /// or the signed `Content-Type`) with.
    pub fn media_type(self) -> &'static str {
        match self {
            Format::AgentDescriptor => "application/agent+json",
            Format::AgentsRegistry => "application/json",
            Format::Awp => "application/json",
            Format::Woa => "application/woa+json",
            Format::AgentCard => "application/agentcard+json",
            Format::Aidip => "application/json",
            Format::A2a => "application/json",
            Format::AiCatalog => "application/ai-catalog+json",
            Format::McpServerCard => "application/mcp-server-card+json",
        }
    }

    /// Does a served `Content-Type` fit this format? Compares the media type
    /// essence (type/subtype, case-insensitive, parameters ignored, RFC 9110
    /// section 8.3.1). Only the format's own media type fits:
    /// `application/json` for an `application/woa+json` document is reported
    /// (the draft names the type; a generic type makes the client sniff).
    pub fn media_type_fits(self, content_type: &str) -> bool {
        let essence = content_type
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        essence == self.media_type()
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A `--format` value that names no format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format {q0} (expected one of: agent, agents-registry, awp, woa, agentcard, aidip, a2a, ai-catalog, mcp-server-card)", q0 = crate::text::quoted(.0))]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ALL.iter()
            .copied()
            .find(|f| f.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownFormat(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for f in ALL {
            assert_eq!(f.name().parse::<Format>(), Ok(f));
        }
        assert!("nope".parse::<Format>().is_err());
    }

    #[test]
    fn media_type_essence() {
        assert!(Format::Woa.media_type_fits("application/woa+json; charset=utf-8"));
        assert!(Format::Woa.media_type_fits("Application/WOA+JSON"));
        assert!(!Format::Woa.media_type_fits("application/json"));
        assert!(Format::Awp.media_type_fits("application/json"));
        assert!(!Format::AgentCard.media_type_fits("text/html"));
    }
}
