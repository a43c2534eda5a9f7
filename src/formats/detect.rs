//! Which format is a JSON document? Decided on members only one format
//! defines, in a fixed order, so the answer never depends on member order.

use super::Format;
use crate::json::{self, JsonError};
use serde_json::Value;

/// Why a document's format could not be decided.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DetectError {
    /// The input is not strict I-JSON.
    #[error("not strict JSON: {0}")]
    Json(#[from] JsonError),
    /// The top-level value is not an object.
    #[error("the document is not a JSON object, so it is no descriptor of any format")]
    NotAnObject,
    /// No format's distinguishing members are present.
    #[error("no known descriptor format recognized: it has none of the members that mark one (woa_version, awp_version, agent_id with an endpoint object, supportedInterfaces or defaultInputModes, agents, skills, operations); give --format with one of: agent (a draft-narvaneni-agent-uri-03 descriptor), agents-registry (its agents.json), woa (the Web of Agents draft), awp (AWP v0.2), agentcard (the AgentCard draft), aidip (AIDIP), a2a (an A2A Agent Card), ai-catalog (an AI Catalog), mcp-server-card (an MCP Server Card)")]
    Unrecognized,
}

/// Detect the format of a parsed document.
///
/// The markers, checked in this order:
/// 0. `specVersion` with `entries` → AI Catalog (AI Catalog "Top-Level
///    Structure"); a `$schema` under
///    `https://static.modelcontextprotocol.io/schemas/`, or `remotes` an
///    array, → MCP Server Card (the extension's `schema.json`);
/// 1. `woa_version` → Web of Agents (the Web of Agents draft section 4);
/// 2. `awp_version` → AWP (AWP v0.2 section 5);
/// 3. `agent_id` with `endpoint` an object → the AgentCard draft;
/// 4. `supportedInterfaces`, `protocolVersion`, `preferredTransport`,
///    `defaultInputModes` or `defaultOutputModes` → A2A Agent Card;
/// 5. `agents` an object whose members are all strings → agents.json
///    (draft-narvaneni-agent-uri-03 section 5.1);
/// 6. `skills` → agent:// descriptor (draft-narvaneni-agent-uri-03 section 7.1.1);
/// 7. `operations`, or `endpoint` a string with `publisher` or
///    `capabilities` → AIDIP metadata (draft-cui-ai-agent-discovery-invocation).
///
/// # Errors
/// [`DetectError`] when the document is not strict I-JSON or is no known descriptor format.
pub fn detect(doc: &Value) -> Result<Format, DetectError> {
    let obj = doc.as_object().ok_or(DetectError::NotAnObject)?;
    let has = |k: &str| obj.contains_key(k);
    if has("specVersion") && has("entries") {
        return Ok(Format::AiCatalog);
    }
    let mcp_schema = obj
        .get("$schema")
        .and_then(Value::as_str)
        .is_some_and(|s| s.starts_with("https://static.modelcontextprotocol.io/schemas/"));
    if mcp_schema || obj.get("remotes").is_some_and(Value::is_array) {
        return Ok(Format::McpServerCard);
    }
    if has("woa_version") {
        return Ok(Format::Woa);
    }
    if has("awp_version") {
        return Ok(Format::Awp);
    }
    if has("agent_id") && obj.get("endpoint").is_some_and(Value::is_object) {
        return Ok(Format::AgentCard);
    }
    const A2A: [&str; 5] = [
        "supportedInterfaces",
        "protocolVersion",
        "preferredTransport",
        "defaultInputModes",
        "defaultOutputModes",
    ];
    if A2A.iter().any(|k| has(k)) {
        return Ok(Format::A2a);
    }
    if let Some(Value::Object(agents)) = obj.get("agents") {
        if agents.values().all(Value::is_string) {
            return Ok(Format::AgentsRegistry);
        }
    }
    if has("skills") {
        return Ok(Format::AgentDescriptor);
    }
    if has("operations")
        || (obj.get("endpoint").is_some_and(Value::is_string)
            && (has("publisher") || has("capabilities")))
    {
        return Ok(Format::Aidip);
    }
    Err(DetectError::Unrecognized)
}

/// Parse (strict I-JSON, [`crate::json`]) and detect.
///
/// # Errors
/// [`DetectError`] when the document is not strict I-JSON or is no known descriptor format.
pub fn detect_bytes(input: &[u8]) -> Result<(Format, Value), DetectError> {
    let doc = json::parse_strict(input)?;
    let f = detect(&doc)?;
    Ok((f, doc))
}
