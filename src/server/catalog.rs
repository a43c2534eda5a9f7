//! What `serve` builds for AI Catalog discovery from the served directory
//! (both need the site's own origin, `--base-url`):
//!
//! * each MCP Server Card at `<streamable-HTTP path>/server-card`, the
//!   location the MCP Server Card extension reserves (`docs/discovery.md`,
//!   "Hosted Server Card Location": `https://host/mcp` ->
//!   `https://host/mcp/server-card`), for every `remotes[]` entry of type
//!   `streamable-http` whose `url` is on this site (begins with the base
//!   URL); served with `application/mcp-server-card+json` and signed like
//!   every response;
//! * `/.well-known/ai-catalog.json` (AI Catalog "Discovery"), unless the
//!   directory has its own catalog there: one entry per served descriptor
//!   (A2A Agent Cards, MCP Server Cards, nested catalogs, the other
//!   formats), each with a Trust Manifest signed by the serving key, and a
//!   host object with its own signed manifest.
//!
//! Identity of the manifests (AI Catalog "Identity", "Key Resolution"): an
//! entry's manifest `identity` MUST equal its `identifier`, and identifiers
//! are unique in a catalog ("Multi-Version Entries"), while every manifest
//! is signed by the one serving key. Each entry's identifier is therefore
//! the URL of the JWK Set `serve` publishes ([`super::publish::JWKS_PATH`]
//! under the base URL) with the artifact's path as fragment:
//! `https://example.com/.well-known/jwks.json#/agents/planner.json`. A
//! consumer resolves an `https` identity by fetching the JWK Set at that
//! URL and choosing the key by the JWS `kid` ("Key Resolution"); the
//! fragment is never sent (RFC 3986 section 3.5), so every identifier
//! resolves to the serving keys while naming one artifact. The host's
//! identifier and manifest identity are the JWK Set URL itself.

use crate::catalog::{self, SignTarget};
use crate::formats::Format;
use crate::keys::SigningKey;
use serde_json::{json, Map, Value};

/// The served paths (relative to the site root) at which `card` is served
/// as `<streamable-HTTP path>/server-card`: one per `remotes[]` entry of
/// type `streamable-http` whose `url` begins with `base` followed by `/`
/// (URL templates, with `{`, name no one path and are skipped).
pub fn server_card_paths(base: &str, card: &Value) -> Vec<String> {
    let Some(remotes) = card.get("remotes").and_then(Value::as_array) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for r in remotes {
        if r.get("type").and_then(Value::as_str) != Some("streamable-http") {
            continue;
        }
        let Some(url) = r.get("url").and_then(Value::as_str) else {
            continue;
        };
        if url.contains('{') {
            continue;
        }
        let Some(rest) = url.strip_prefix(base).filter(|r| r.starts_with('/')) else {
            continue;
        };
        let path = rest.split(['?', '#']).next().unwrap_or(rest);
        let path = format!("{}/server-card", path.trim_end_matches('/'));
        if !out.contains(&path) {
            out.push(path);
        }
    }
    out
}

/// The media type of a catalog entry for a descriptor of `fmt` (AI Catalog
/// "Catalog Entry": an A2A card is `application/a2a-agent-card+json`, though
/// it is served as `application/json`, see [`Format::media_type`]).
fn entry_media_type(fmt: Format) -> &'static str {
    match fmt {
        Format::A2a => catalog::A2A_CARD_MEDIA_TYPE,
        other => other.media_type(),
    }
}

/// A descriptor's human-readable name: `title`, `displayName` or `name`
/// when it has one, else its file name.
fn display_name(url: &str, doc: &Value) -> String {
    ["title", "displayName", "name"]
        .iter()
        .find_map(|k| {
            doc.get(*k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        })
        .map(str::to_owned)
        .unwrap_or_else(|| url.rsplit('/').next().unwrap_or(url).to_owned())
}

/// One served descriptor, as the catalog lists it.
pub struct Artifact<'a> {
    /// Its served path (`/agents/planner.json`).
    pub path: &'a str,
    /// Its format.
    pub format: Format,
    /// Its content.
    pub doc: &'a Value,
    /// Where it is fetched from, relative to the base URL: its path, or the
    /// `/server-card` path an MCP Server Card is served at.
    pub served_at: &'a str,
    /// The SHA-256 digest (`sha256:hex`) of the exact bytes served there,
    /// declared in the entry's manifest so that the manifest signature
    /// binds them ([`crate::catalog::manifest::BINDING_RELATION`]).
    pub digest: Option<String>,
}

/// The catalog of `items` before signing, for the site at `base` whose JWK
/// Set is at `jwks` (its full URL): `specVersion` 1.0, the host (display
/// name and identifier), one entry per item with an unsigned
/// manifest (identity = identifier, see the module documentation), in the
/// order given. The entry's media type is written both as `mediaType` (the
/// AI Catalog text) and `type` (its later name, in the MCP Server Card
/// extension's `docs/discovery.md`), with the same value, so consumers of
/// either text read it.
pub fn unsigned_catalog(base: &str, jwks: &str, items: &[Artifact<'_>]) -> Value {
    let authority = base
        .split_once("://")
        .map_or(base, |(_, r)| r.split('/').next().unwrap_or(r));
    let entries: Vec<Value> = items
        .iter()
        .map(|a| {
            let id = format!("{jwks}#{}", a.path);
            let mt = entry_media_type(a.format);
            let url = format!("{base}{}", a.served_at);
            let mut manifest = json!({"identity": id});
            if let Some(d) = &a.digest {
                manifest["provenance"] = json!([{
                    "relation": catalog::manifest::BINDING_RELATION,
                    "sourceId": url,
                    "sourceDigest": d,
                }]);
            }
            json!({
                "identifier": id,
                "displayName": display_name(a.path, a.doc),
                "mediaType": mt,
                "type": mt,
                "url": url,
                "trustManifest": manifest,
            })
        })
        .collect();
    let mut host = Map::new();
    host.insert("displayName".into(), Value::String(authority.to_owned()));
    host.insert("identifier".into(), Value::String(jwks.to_owned()));
    host.insert("trustManifest".into(), json!({ "identity": jwks }));
    json!({"specVersion": "1.0", "host": host, "entries": entries})
}

/// `unsigned` with every entry's and the host's manifest signed by `key`,
/// serialized as served.
///
/// # Errors
/// Why a manifest could not be signed.
pub fn sign_built_catalog(unsigned: &Value, key: &SigningKey) -> Result<Vec<u8>, String> {
    let mut doc = unsigned.clone();
    catalog::sign_catalog(&mut doc, key, &SignTarget::Every).map_err(|e| e.to_string())?;
    catalog::sign_catalog(&mut doc, key, &SignTarget::Host).map_err(|e| e.to_string())?;
    serde_json::to_vec_pretty(&doc).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_card_paths_follow_streamable_http_remotes_on_this_site() {
        let card = json!({"remotes": [
            {"type": "streamable-http", "url": "https://example.com/mcp"},
            {"type": "streamable-http", "url": "https://example.com/v2/mcp/?x=1"},
            {"type": "sse", "url": "https://example.com/sse"},
            {"type": "streamable-http", "url": "https://example.com.evil/mcp"},
            {"type": "streamable-http", "url": "https://{tenant}.example.com/mcp"},
            {"type": "streamable-http", "url": "https://other.example/mcp"}]});
        assert_eq!(
            server_card_paths("https://example.com", &card),
            vec!["/mcp/server-card", "/v2/mcp/server-card"]
        );
    }
}
