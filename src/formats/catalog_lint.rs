//! Lint rules of the AI Catalog and of the MCP Server Card, as data
//! ([`CATALOG_RULES`], run by [`super::lint`] beside [`super::RULES`]).
//!
//! Texts followed:
//! * AI Catalog: `specification/ai-catalog.md` of `Agent-Card/ai-catalog`
//!   at commit [`AI_CATALOG_COMMIT`] (April 2026). Sections are cited by
//!   their headings ("Catalog Entry", "Trust Manifest", "Digest Format", ...).
//! * MCP Server Card: `schema.json` (JSON Schema 2020-12, `$defs/ServerCard`)
//!   and `docs/discovery.md` of `modelcontextprotocol/experimental-ext-server-card`
//!   at commit [`SERVER_CARD_COMMIT`] (July 2026), which renames the entry's
//!   `mediaType` member to `type`: both are accepted, and an entry that
//!   carries both with different values is an error, never silently one of
//!   them.
//!
//! Codes:
//!
//! | code | rule |
//! |---|---|
//! | `catalog/required` | `specVersion` (string) and `entries` (array) are present ("Top-Level Structure") |
//! | `catalog/spec-version` | `specVersion` is "Major.Minor", non-negative integers ("Version Format") |
//! | `catalog/major-unsupported` | the major version is above [`SUPPORTED_CATALOG_MAJOR`]: the document is refused rather than misread ("Consumer Behavior") |
//! | `catalog/host-required` | `host.displayName` is present ("Host Info") |
//! | `catalog/entry-required` | an entry has `identifier` and `displayName` ("Catalog Entry") |
//! | `catalog/media-type` | an entry has its media type as `mediaType` or `type`, and the two agree when both are given ("Catalog Entry"; discovery.md) |
//! | `catalog/url-or-data` | an entry has exactly one of `url` and `data` ("Catalog Entry") |
//! | `catalog/duplicate` | (`identifier`, `version`) unique, `identifier` alone when no `version` ("Multi-Version Entries") |
//! | `catalog/url-https` | an entry `url` is not a plain `http:` URL: the catalog and its artifacts are served over HTTPS ("Trust Layers", Layer 0; "Security Considerations") |
//! | `catalog/nesting-depth` | inline nested catalogs (an entry's `data`) go at most [`crate::catalog::MAX_DEPTH`] levels deep, the root counting as level 1 ("Nested Catalog Entries": "A depth limit of 4 is RECOMMENDED"; ADR 0001) |
//! | `catalog/updated-at` | `updatedAt` is an RFC 3339 date-time ("Catalog Entry") |
//! | `catalog/publisher-required` | a publisher has `identifier` and `displayName` ("Publisher Object") |
//! | `catalog/metadata-key` | metadata keys are non-empty ("Key Naming") |
//! | `catalog/manifest-required` | a Trust Manifest has `identity` ("Identity") |
//! | `catalog/manifest-identity` | an entry's manifest `identity` equals the entry's `identifier`; consumers MUST reject one that differs ("Identity") |
//! | `catalog/host-identity` | the host manifest's `identity` equals `host.identifier` (warning, a SHOULD; "Identity") |
//! | `catalog/signature-form` | `signature` is a compact JWS with detached payload, `header..signature` ("Trust Manifest Signatures", RFC 7515 Appendix F) |
//! | `catalog/trust-schema` | a trust schema has `identifier` and `version` ("Trust Schema Object") |
//! | `catalog/attestation-required` | an attestation has `type`, `uri` and `mediaType` ("Attestation Object") |
//! | `catalog/provenance-required` | a provenance link has `relation` and `sourceId` ("Provenance Link Object") |
//! | `catalog/digest` | a digest is `algorithm:lowercase-hex` of the algorithm's length ("Digest Format") |
//! | `catalog/digest-weak` | a digest algorithm shorter than SHA-256 (md5, sha1, sha224): consumers MUST reject it ("Digest Format") |
//! | `mcp/required` | a member `schema.json` requires is missing |
//! | `mcp/schema-uri` | `$schema` is the `/v1/` Server Card schema URL |
//! | `mcp/name` | `name` is reverse-DNS with exactly one `/` (`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`, 3 to 200 characters) |
//! | `mcp/length` | a string is within the schema's `minLength`/`maxLength` |
//! | `mcp/uri` | a `format: uri` value is an absolute URI |
//! | `mcp/enum` | a value is one of the schema's `enum` |
//! | `mcp/remote-url` | a remote `url` starts with `http://`, `https://` or a `{template-variable}` and has no white space |

use super::lint::{e, w, Check, Cx, Rule, Ty};
use super::Format;
use serde_json::Value;
use std::collections::BTreeMap;

/// The commit of `Agent-Card/ai-catalog` whose `specification/ai-catalog.md`
/// these rules follow.
pub const AI_CATALOG_COMMIT: &str = "634a09d98b644153384cde4f1cb4cbb70ead0e04";
/// The commit of `modelcontextprotocol/experimental-ext-server-card` whose
/// `schema.json` and `docs/discovery.md` these rules follow.
pub const SERVER_CARD_COMMIT: &str = "8924e08682b4a936e6464b57845ec2ff17dc8776";
/// The one `$schema` a v1 Server Card may name (`schema.json`,
/// `ServerCard.$schema.pattern`).
pub const SERVER_CARD_SCHEMA: &str =
    "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json";
/// The highest AI Catalog major version understood. A catalog of a higher
/// major version is refused with `catalog/major-unsupported` (AI Catalog
/// "Consumer Behavior": reject "with an informative error message").
pub const SUPPORTED_CATALOG_MAJOR: u64 = 1;

const CAT: Format = Format::AiCatalog;
const MCP: Format = Format::McpServerCard;
const STR: Ty = Ty::String;
const OBJ: Ty = Ty::Object;
const ARR: Ty = Ty::Array;
const STRS: Ty = Ty::StringArray;
const BOOL: Ty = Ty::Bool;
const J: &str = "json/type";

const C_TOP: &str = "AI Catalog \"Top-Level Structure\"";
const C_VER: &str = "AI Catalog \"Version Handling\"";
const C_HOST: &str = "AI Catalog \"Host Info\"";
const C_ENTRY: &str = "AI Catalog \"Catalog Entry\"";
const C_TLS: &str = "AI Catalog \"Trust Layers\" (Layer 0: served over HTTPS)";
const C_NEST: &str =
    "AI Catalog \"Nested Catalog Entries\" (ADR 0001: a maximum nesting depth of 4)";
const C_MULTI: &str = "AI Catalog \"Multi-Version Entries\"";
const C_PUB: &str = "AI Catalog \"Publisher Object\"";
const C_META: &str = "AI Catalog \"Key Naming\"";
const C_ID: &str = "AI Catalog \"Trust Manifest\", \"Identity\"";
const C_OPT: &str = "AI Catalog \"Trust Manifest\", \"Optional Members\"";
const C_SIG: &str = "AI Catalog \"Trust Manifest Signatures\" (RFC 7515 Appendix F)";
const C_TS: &str = "AI Catalog \"Trust Schema Object\"";
const C_ATT: &str = "AI Catalog \"Attestation Object\"";
const C_PROV: &str = "AI Catalog \"Provenance Link Object\"";
const C_DIG: &str = "AI Catalog \"Digest Format\"";
const M_SC: &str = "MCP Server Card schema.json $defs/ServerCard";
const M_REM: &str = "MCP Server Card schema.json $defs/Remote";
const M_ICON: &str = "MCP Server Card schema.json $defs/Icon";
const M_REPO: &str = "MCP Server Card schema.json $defs/Repository";
const M_KV: &str = "MCP Server Card schema.json $defs/KeyValueInput";
const M_IN: &str = "MCP Server Card schema.json $defs/Input";

use Check::{Custom, OneOf, Required, Type};

/// The AI Catalog and MCP Server Card rules, one row each, in the shape of
/// [`super::RULES`]. The Trust Manifest rows appear twice, once under
/// `/host/trustManifest` and once under `/entries/*/trustManifest`.
#[rustfmt::skip]
pub const CATALOG_RULES: &[Rule] = &[
    // AI Catalog: the document
    e(CAT, "/specVersion", Required(STR), "catalog/required", C_TOP),
    e(CAT, "/specVersion", Check::Value(major_minor, "\"Major.Minor\" (non-negative integers)"), "catalog/spec-version", C_VER),
    e(CAT, "/specVersion", Custom(major_supported), "catalog/major-unsupported", C_VER),
    e(CAT, "/entries", Required(ARR), "catalog/required", C_TOP),
    e(CAT, "/metadata", Type(OBJ), J, C_TOP),
    e(CAT, "/metadata", Custom(metadata_keys), "catalog/metadata-key", C_META),
    // Host Info
    e(CAT, "/host", Type(OBJ), J, C_HOST),
    e(CAT, "/host/displayName", Required(STR), "catalog/host-required", C_HOST),
    e(CAT, "/host/identifier", Type(STR), J, C_HOST),
    e(CAT, "/host/documentationUrl", Type(STR), J, C_HOST),
    e(CAT, "/host/logoUrl", Type(STR), J, C_HOST),
    w(CAT, "/host", Custom(host_identity), "catalog/host-identity", C_ID),
    // Catalog Entry
    e(CAT, "/entries/*", Type(OBJ), J, C_ENTRY),
    e(CAT, "/entries/*/identifier", Required(STR), "catalog/entry-required", C_ENTRY),
    e(CAT, "/entries/*/displayName", Required(STR), "catalog/entry-required", C_ENTRY),
    e(CAT, "/entries/*", Custom(entry_media_type_check), "catalog/media-type", C_ENTRY),
    e(CAT, "/entries/*", Custom(url_xor_data), "catalog/url-or-data", C_ENTRY),
    e(CAT, "/entries/*/url", Type(STR), J, C_ENTRY),
    e(CAT, "/entries/*/url", Check::Value(not_plain_http, "an https URL: entries are served over HTTPS, a plain http: URL can be changed by anyone on the path"), "catalog/url-https", C_TLS),
    e(CAT, "/entries/*", Custom(nesting_depth), "catalog/nesting-depth", C_NEST),
    e(CAT, "/entries/*", Custom(inline_server_cards), "mcp/required", M_SC),
    e(CAT, "/entries/*/description", Type(STR), J, C_ENTRY),
    e(CAT, "/entries/*/tags", Type(STRS), J, C_ENTRY),
    e(CAT, "/entries/*/version", Type(STR), J, C_ENTRY),
    e(CAT, "/entries/*/updatedAt", Check::Value(rfc3339, "an RFC 3339 date-time"), "catalog/updated-at", C_ENTRY),
    e(CAT, "/entries/*/metadata", Type(OBJ), J, C_ENTRY),
    e(CAT, "/entries/*/metadata", Custom(metadata_keys), "catalog/metadata-key", C_META),
    e(CAT, "/entries", Custom(unique_entries), "catalog/duplicate", C_MULTI),
    e(CAT, "/entries/*/publisher", Type(OBJ), J, C_PUB),
    e(CAT, "/entries/*/publisher/identifier", Required(STR), "catalog/publisher-required", C_PUB),
    e(CAT, "/entries/*/publisher/displayName", Required(STR), "catalog/publisher-required", C_PUB),
    e(CAT, "/entries/*", Custom(entry_identity), "catalog/manifest-identity", C_ID),
    // Trust Manifest, on the host
    e(CAT, "/host/trustManifest", Type(OBJ), J, C_ID),
    e(CAT, "/host/trustManifest/identity", Required(STR), "catalog/manifest-required", C_ID),
    e(CAT, "/host/trustManifest/identityType", Type(STR), J, C_OPT),
    e(CAT, "/host/trustManifest/signature", Check::Value(compact_detached, "a compact JWS with detached payload (header..signature)"), "catalog/signature-form", C_SIG),
    e(CAT, "/host/trustManifest/metadata", Custom(metadata_keys), "catalog/metadata-key", C_META),
    e(CAT, "/host/trustManifest/trustSchema", Type(OBJ), J, C_TS),
    e(CAT, "/host/trustManifest/trustSchema/identifier", Required(STR), "catalog/trust-schema", C_TS),
    e(CAT, "/host/trustManifest/trustSchema/version", Required(STR), "catalog/trust-schema", C_TS),
    e(CAT, "/host/trustManifest/attestations", Type(ARR), J, C_ATT),
    e(CAT, "/host/trustManifest/attestations/*/type", Required(STR), "catalog/attestation-required", C_ATT),
    e(CAT, "/host/trustManifest/attestations/*/uri", Required(STR), "catalog/attestation-required", C_ATT),
    e(CAT, "/host/trustManifest/attestations/*/mediaType", Required(STR), "catalog/attestation-required", C_ATT),
    e(CAT, "/host/trustManifest/attestations/*/digest", Custom(digest), "catalog/digest", C_DIG),
    e(CAT, "/host/trustManifest/attestations/*/digest", Custom(digest_weak), "catalog/digest-weak", C_DIG),
    e(CAT, "/host/trustManifest/provenance", Type(ARR), J, C_PROV),
    e(CAT, "/host/trustManifest/provenance/*/relation", Required(STR), "catalog/provenance-required", C_PROV),
    e(CAT, "/host/trustManifest/provenance/*/sourceId", Required(STR), "catalog/provenance-required", C_PROV),
    e(CAT, "/host/trustManifest/provenance/*/sourceDigest", Custom(digest), "catalog/digest", C_DIG),
    e(CAT, "/host/trustManifest/provenance/*/sourceDigest", Custom(digest_weak), "catalog/digest-weak", C_DIG),
    // Trust Manifest, on each entry
    e(CAT, "/entries/*/trustManifest", Type(OBJ), J, C_ID),
    e(CAT, "/entries/*/trustManifest/identity", Required(STR), "catalog/manifest-required", C_ID),
    e(CAT, "/entries/*/trustManifest/identityType", Type(STR), J, C_OPT),
    e(CAT, "/entries/*/trustManifest/signature", Check::Value(compact_detached, "a compact JWS with detached payload (header..signature)"), "catalog/signature-form", C_SIG),
    e(CAT, "/entries/*/trustManifest/metadata", Custom(metadata_keys), "catalog/metadata-key", C_META),
    e(CAT, "/entries/*/trustManifest/trustSchema", Type(OBJ), J, C_TS),
    e(CAT, "/entries/*/trustManifest/trustSchema/identifier", Required(STR), "catalog/trust-schema", C_TS),
    e(CAT, "/entries/*/trustManifest/trustSchema/version", Required(STR), "catalog/trust-schema", C_TS),
    e(CAT, "/entries/*/trustManifest/attestations", Type(ARR), J, C_ATT),
    e(CAT, "/entries/*/trustManifest/attestations/*/type", Required(STR), "catalog/attestation-required", C_ATT),
    e(CAT, "/entries/*/trustManifest/attestations/*/uri", Required(STR), "catalog/attestation-required", C_ATT),
    e(CAT, "/entries/*/trustManifest/attestations/*/mediaType", Required(STR), "catalog/attestation-required", C_ATT),
    e(CAT, "/entries/*/trustManifest/attestations/*/digest", Custom(digest), "catalog/digest", C_DIG),
    e(CAT, "/entries/*/trustManifest/attestations/*/digest", Custom(digest_weak), "catalog/digest-weak", C_DIG),
    e(CAT, "/entries/*/trustManifest/provenance", Type(ARR), J, C_PROV),
    e(CAT, "/entries/*/trustManifest/provenance/*/relation", Required(STR), "catalog/provenance-required", C_PROV),
    e(CAT, "/entries/*/trustManifest/provenance/*/sourceId", Required(STR), "catalog/provenance-required", C_PROV),
    e(CAT, "/entries/*/trustManifest/provenance/*/sourceDigest", Custom(digest), "catalog/digest", C_DIG),
    e(CAT, "/entries/*/trustManifest/provenance/*/sourceDigest", Custom(digest_weak), "catalog/digest-weak", C_DIG),
    // MCP Server Card ($defs/ServerCard)
    e(MCP, "/$schema", Required(STR), "mcp/required", M_SC),
    e(MCP, "/$schema", OneOf(&[SERVER_CARD_SCHEMA]), "mcp/schema-uri", M_SC),
    e(MCP, "/name", Required(STR), "mcp/required", M_SC),
    e(MCP, "/name", Check::Value(server_name, "reverse-DNS with exactly one \"/\" (^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$, 3 to 200 characters)"), "mcp/name", M_SC),
    e(MCP, "/version", Required(STR), "mcp/required", M_SC),
    e(MCP, "/version", Check::Value(len_0_255, "at most 255 characters"), "mcp/length", M_SC),
    e(MCP, "/description", Required(STR), "mcp/required", M_SC),
    e(MCP, "/description", Check::Value(len_1_100, "1 to 100 characters"), "mcp/length", M_SC),
    e(MCP, "/title", Type(STR), J, M_SC),
    e(MCP, "/title", Check::Value(len_1_100, "1 to 100 characters"), "mcp/length", M_SC),
    e(MCP, "/websiteUrl", Check::Value(uri, "an absolute URI"), "mcp/uri", M_SC),
    e(MCP, "/_meta", Type(OBJ), J, M_SC),
    e(MCP, "/icons", Type(ARR), J, M_SC),
    e(MCP, "/icons/*", Type(OBJ), J, M_ICON),
    e(MCP, "/icons/*/src", Required(STR), "mcp/required", M_ICON),
    e(MCP, "/icons/*/src", Check::Value(uri, "an absolute URI"), "mcp/uri", M_ICON),
    e(MCP, "/icons/*/mimeType", Type(STR), J, M_ICON),
    e(MCP, "/icons/*/sizes", Type(STRS), J, M_ICON),
    e(MCP, "/icons/*/theme", OneOf(&["dark", "light"]), "mcp/enum", M_ICON),
    e(MCP, "/repository", Type(OBJ), J, M_SC),
    e(MCP, "/repository/source", Required(STR), "mcp/required", M_REPO),
    e(MCP, "/repository/url", Required(STR), "mcp/required", M_REPO),
    e(MCP, "/repository/url", Check::Value(uri, "an absolute URI"), "mcp/uri", M_REPO),
    e(MCP, "/repository/id", Type(STR), J, M_REPO),
    e(MCP, "/repository/subfolder", Type(STR), J, M_REPO),
    e(MCP, "/remotes", Type(ARR), J, M_SC),
    e(MCP, "/remotes/*", Type(OBJ), J, M_REM),
    e(MCP, "/remotes/*/type", Required(STR), "mcp/required", M_REM),
    e(MCP, "/remotes/*/type", OneOf(&["sse", "streamable-http"]), "mcp/enum", M_REM),
    e(MCP, "/remotes/*/url", Required(STR), "mcp/required", M_REM),
    e(MCP, "/remotes/*/url", Check::Value(remote_url, "an http(s) URL or a {template-variable} followed by no white space"), "mcp/remote-url", M_REM),
    e(MCP, "/remotes/*/url", Custom(remote_endpoint), "addr/internal", M_REM),
    e(MCP, "/remotes/*/supportedProtocolVersions", Type(STRS), J, M_REM),
    e(MCP, "/remotes/*/variables", Type(OBJ), J, M_REM),
    e(MCP, "/remotes/*/variables/*", Custom(input), J, M_IN),
    e(MCP, "/remotes/*/variables/*/format", OneOf(&["boolean", "filepath", "number", "string"]), "mcp/enum", M_IN),
    e(MCP, "/remotes/*/headers", Type(ARR), J, M_REM),
    e(MCP, "/remotes/*/headers/*/name", Required(STR), "mcp/required", M_KV),
    e(MCP, "/remotes/*/headers/*", Custom(input), J, M_KV),
    e(MCP, "/remotes/*/headers/*/format", OneOf(&["boolean", "filepath", "number", "string"]), "mcp/enum", M_KV),
    e(MCP, "/remotes/*/headers/*/variables", Type(OBJ), J, M_KV),
    e(MCP, "/remotes/*/headers/*/variables/*", Custom(input), J, M_IN),
    e(MCP, "/remotes/*/headers/*/variables/*/format", OneOf(&["boolean", "filepath", "number", "string"]), "mcp/enum", M_IN),
];

// ---- predicates and custom checks ----

/// `"Major.Minor"`, each a non-negative integer without a sign (AI Catalog
/// "Version Format"); returns the major version.
pub(crate) fn parse_major_minor(s: &str) -> Option<u64> {
    let (maj, min) = s.split_once('.')?;
    let num = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    if !(num(maj) && num(min)) {
        return None;
    }
    maj.parse().ok()
}

fn major_minor(v: &Value) -> bool {
    v.as_str().and_then(parse_major_minor).is_some()
}

fn major_supported(cx: &mut Cx<'_>) {
    let Some(major) = cx.value().as_str().and_then(parse_major_minor) else {
        return;
    };
    if major > SUPPORTED_CATALOG_MAJOR {
        cx.fail(
            "",
            format!(
                "specVersion major version {major} is above the supported {SUPPORTED_CATALOG_MAJOR}: \
                 the catalog is refused rather than misread; use a consumer that supports version {major}.x"
            ),
        );
    }
}

fn rfc3339(v: &Value) -> bool {
    v.as_str().is_some_and(super::is_rfc3339)
}

fn metadata_keys(cx: &mut Cx<'_>) {
    let empty = cx.value().as_object().is_some_and(|o| o.contains_key(""));
    if empty {
        cx.fail("/", "metadata keys MUST be non-empty strings".into());
    }
}

/// The entry's artifact media type, from `mediaType` (AI Catalog, April
/// 2026) or `type` (MCP Server Card discovery.md, after the rename). `Err`
/// with a message when both are present and differ, or one is not a
/// string; `Ok(None)` when neither is present.
pub(crate) fn entry_media_type(
    entry: &serde_json::Map<String, Value>,
) -> Result<Option<&str>, String> {
    let get = |k: &str| match crate::json::member(entry, k) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(_) => Err(format!("{k:?} must be a string")),
    };
    match (get("mediaType")?, get("type")?) {
        (Some(a), Some(b)) if !a.eq_ignore_ascii_case(b) => Err(format!(
            "mediaType {} and type {} disagree: give one media type (type is the later name of mediaType)",
            crate::text::quoted(a),
            crate::text::quoted(b)
        )),
        (Some(a), _) => Ok(Some(a)),
        (None, b) => Ok(b),
    }
}

fn entry_media_type_check(cx: &mut Cx<'_>) {
    let Some(o) = cx.value().as_object() else {
        return;
    };
    match entry_media_type(o) {
        Ok(Some(_)) => {}
        Ok(None) => cx.fail(
            "/mediaType",
            "required member \"mediaType\" (or \"type\") is missing: every entry declares its artifact's media type".into(),
        ),
        Err(m) => cx.fail("", m),
    }
}

/// Not a plain `http:` URL (scheme compared case-insensitively, RFC 3986
/// section 3.1); other values are left to their own rows.
fn not_plain_http(v: &Value) -> bool {
    v.as_str().is_none_or(|u| {
        !u.get(..5)
            .is_some_and(|scheme| scheme.eq_ignore_ascii_case("http:"))
    })
}

/// The entry's inline `data` when it is a nested catalog: the entry's media
/// type is the AI Catalog's, or the data has the catalog's two required
/// members (`specVersion` and `entries`).
fn inline_catalog(entry: &Value) -> Option<&Value> {
    let o = entry.as_object()?;
    let data = crate::json::member(o, "data")?;
    let by_type = entry_media_type(o)
        .ok()
        .flatten()
        .is_some_and(|t| crate::catalog::media_type_is(t, crate::catalog::MEDIA_TYPE));
    let by_content = data.get("specVersion").is_some() && data.get("entries").is_some();
    (by_type || by_content).then_some(data)
}

/// The pointer suffix (below `entry`, a catalog entry at `level`) of the
/// first inline catalog deeper than [`crate::catalog::MAX_DEPTH`]. Stops at
/// that level, so the walk is bounded whatever the document's depth.
fn too_deep(entry: &Value, level: usize) -> Option<String> {
    let data = inline_catalog(entry)?;
    if level + 1 > crate::catalog::MAX_DEPTH {
        return Some("/data".into());
    }
    let entries = data.get("entries")?.as_array()?;
    entries
        .iter()
        .enumerate()
        .find_map(|(i, e)| too_deep(e, level + 1).map(|rest| format!("/data/entries/{i}{rest}")))
}

/// An entry of the root catalog (level 1) whose inline nested catalogs go
/// deeper than [`crate::catalog::MAX_DEPTH`] levels.
fn nesting_depth(cx: &mut Cx<'_>) {
    if let Some(suffix) = too_deep(cx.value(), 1) {
        cx.fail(
            &suffix,
            format!(
                "an inline catalog nested deeper than {} levels (the root catalog is level 1): consumers stop there; publish the deeper catalog by url or flatten the hierarchy",
                crate::catalog::MAX_DEPTH
            ),
        );
    }
}

/// Each inline MCP Server Card of the entry (its `data`, when its media
/// type is the Server Card's), and of the inline catalogs it nests down to
/// [`crate::catalog::MAX_DEPTH`] levels, linted by the `mcp/` rows as a
/// card file is (MCP Server Card `schema.json` `$defs/ServerCard`), each
/// finding under its own code at its pointer in the catalog ("Catalog
/// Entry": an entry's `data` is the artifact itself).
fn inline_server_cards(cx: &mut Cx<'_>) {
    let mut found = Vec::new();
    server_cards(cx.value(), 1, String::new(), &mut found);
    let found: Vec<(String, Value)> = found.into_iter().map(|(p, v)| (p, v.clone())).collect();
    for (suffix, card) in &found {
        cx.lint_inline(suffix, MCP, card);
    }
}

/// The inline Server Cards below `entry` (a catalog entry at `level`),
/// each with its pointer suffix; bounded by [`crate::catalog::MAX_DEPTH`].
fn server_cards<'v>(
    entry: &'v Value,
    level: usize,
    at: String,
    out: &mut Vec<(String, &'v Value)>,
) {
    let Some(o) = entry.as_object() else {
        return;
    };
    let Some(data) = crate::json::member(o, "data") else {
        return;
    };
    let card = entry_media_type(o).ok().flatten().is_some_and(|t| {
        crate::catalog::media_type_is(t, crate::catalog::MCP_SERVER_CARD_MEDIA_TYPE)
    });
    if card {
        out.push((format!("{at}/data"), data));
    } else if level < crate::catalog::MAX_DEPTH {
        if let Some(entries) = inline_catalog(entry)
            .and_then(|d| d.get("entries"))
            .and_then(Value::as_array)
        {
            for (i, e) in entries.iter().enumerate() {
                server_cards(e, level + 1, format!("{at}/data/entries/{i}"), out);
            }
        }
    }
}

fn url_xor_data(cx: &mut Cx<'_>) {
    let Some(o) = cx.value().as_object() else {
        return;
    };
    let has = |k| crate::json::member(o, k).is_some();
    match (has("url"), has("data")) {
        (true, true) => cx.fail(
            "",
            "an entry has both \"url\" and \"data\": it MUST contain exactly one of them".into(),
        ),
        (false, false) => cx.fail(
            "",
            "an entry has neither \"url\" nor \"data\": it MUST contain exactly one of them".into(),
        ),
        _ => {}
    }
}

fn unique_entries(cx: &mut Cx<'_>) {
    let Some(entries) = cx.value().as_array() else {
        return;
    };
    let mut seen: BTreeMap<(&str, Option<&str>), usize> = BTreeMap::new();
    let mut dups = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let Some(id) = crate::json::get(e, "identifier").and_then(Value::as_str) else {
            continue;
        };
        let version = crate::json::get(e, "version").and_then(Value::as_str);
        if let Some(first) = seen.insert((id, version), i) {
            seen.insert((id, version), first);
            dups.push((i, first, id.to_owned(), version.map(str::to_owned)));
        }
    }
    for (i, first, id, version) in dups {
        let what = match version {
            Some(v) => format!(
                "identifier {} with version {}",
                crate::text::quoted(&id),
                crate::text::quoted(&v)
            ),
            None => format!("identifier {} (no version)", crate::text::quoted(&id)),
        };
        cx.fail(
            &format!("/{i}"),
            format!("{what} is already entry {first}: it MUST be unique within the catalog"),
        );
    }
}

/// `(identifier, trustManifest.identity)` of an entry or host object, when
/// both are strings and differ.
fn identity_mismatch(v: &Value) -> Option<(String, String)> {
    let id = crate::json::get(v, "identifier").and_then(Value::as_str)?;
    let manifest = crate::json::get(v, "trustManifest")?;
    let identity = crate::json::get(manifest, "identity").and_then(Value::as_str)?;
    (id != identity).then(|| (id.to_owned(), identity.to_owned()))
}

fn entry_identity(cx: &mut Cx<'_>) {
    if let Some((id, identity)) = identity_mismatch(cx.value()) {
        cx.fail(
            "/trustManifest/identity",
            format!(
                "the Trust Manifest identity {} differs from the entry identifier {}: consumers MUST reject it",
                crate::text::quoted(&identity),
                crate::text::quoted(&id)
            ),
        );
    }
}

fn host_identity(cx: &mut Cx<'_>) {
    if let Some((id, identity)) = identity_mismatch(cx.value()) {
        cx.fail(
            "/trustManifest/identity",
            format!(
                "the host Trust Manifest identity {} differs from host.identifier {}",
                crate::text::quoted(&identity),
                crate::text::quoted(&id)
            ),
        );
    }
}

/// `header..signature`: a compact JWS (RFC 7515 section 7.1) whose payload
/// is detached (Appendix F), each part non-empty base64url.
fn compact_detached(v: &Value) -> bool {
    let Some(s) = v.as_str() else { return false };
    let b64url = |p: &str| !p.is_empty() && crate::b64::is_url_alphabet(p);
    let mut parts = s.split('.');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(h), Some(""), Some(sig), None) => b64url(h) && b64url(sig),
        _ => false,
    }
}

/// A digest algorithm a Trust Manifest digest may name (AI Catalog "Digest
/// Format": SHA-256 or stronger).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArtifactDigest {
    /// `sha256` (FIPS 180-4).
    Sha256,
    /// `sha384`.
    Sha384,
    /// `sha512`.
    Sha512,
}

impl ArtifactDigest {
    /// The algorithm's name in a digest string.
    pub fn name(self) -> &'static str {
        match self {
            ArtifactDigest::Sha256 => "sha256",
            ArtifactDigest::Sha384 => "sha384",
            ArtifactDigest::Sha512 => "sha512",
        }
    }

    /// The lowercase hex digest of `bytes`.
    pub fn hex(self, bytes: &[u8]) -> String {
        let alg = match self {
            ArtifactDigest::Sha256 => &ring::digest::SHA256,
            ArtifactDigest::Sha384 => &ring::digest::SHA384,
            ArtifactDigest::Sha512 => &ring::digest::SHA512,
        };
        let d = ring::digest::digest(alg, bytes);
        d.as_ref().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Parse a digest string `algorithm:lowercase-hex` into its algorithm and
    /// hex value.
    ///
    /// # Errors
    /// [`DigestProblem`] when the form, the algorithm or the length is wrong.
    pub fn parse(s: &str) -> Result<(ArtifactDigest, &str), DigestProblem> {
        let (alg, hex) = s.split_once(':').ok_or(DigestProblem::Form)?;
        let a = match alg {
            "sha256" => ArtifactDigest::Sha256,
            "sha384" => ArtifactDigest::Sha384,
            "sha512" => ArtifactDigest::Sha512,
            weak @ ("md5" | "sha1" | "sha-1" | "sha224" | "sha-224") => {
                return Err(DigestProblem::Weak(weak.to_owned()))
            }
            other => return Err(DigestProblem::Unknown(other.to_owned())),
        };
        let len = match a {
            ArtifactDigest::Sha256 => 64,
            ArtifactDigest::Sha384 => 96,
            ArtifactDigest::Sha512 => 128,
        };
        if hex.len() != len
            || !hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return Err(DigestProblem::Hex { alg: a.name(), len });
        }
        Ok((a, hex))
    }
}

/// Why a digest string is refused (AI Catalog "Digest Format").
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DigestProblem {
    /// Not `algorithm:hex`.
    #[error("a digest is \"algorithm:lowercase-hex\", e.g. \"sha256:9f86...\"")]
    Form,
    /// An algorithm shorter than SHA-256: consumers MUST reject it.
    #[error("digest algorithm {q0} is weaker than SHA-256 and MUST be rejected: publish a sha256 (or sha384, sha512) digest", q0 = crate::text::quoted(.0))]
    Weak(String),
    /// An algorithm agentsig cannot compute.
    #[error("digest algorithm {q0} is not supported (sha256, sha384, sha512 are): it cannot be checked", q0 = crate::text::quoted(.0))]
    Unknown(String),
    /// The hex part is not lowercase hex of the algorithm's length.
    #[error("a {alg} digest is {len} lowercase hex digits")]
    Hex {
        /// The algorithm.
        alg: &'static str,
        /// The hex length it needs.
        len: usize,
    },
    /// A well-formed digest that does not match the content.
    #[error("the content's {alg} digest is {actual}, not the declared {declared}")]
    Mismatch {
        /// The algorithm.
        alg: &'static str,
        /// The declared hex value.
        declared: String,
        /// The computed hex value.
        actual: String,
    },
}

/// Check `declared` (`algorithm:lowercase-hex`) against `content`.
///
/// # Errors
/// [`DigestProblem`] when the digest is malformed, weaker than SHA-256,
/// of an unsupported algorithm, or does not match.
pub fn digest_problem(declared: &str, content: &[u8]) -> Result<(), DigestProblem> {
    let (alg, hex) = ArtifactDigest::parse(declared)?;
    let actual = alg.hex(content);
    if crate::digest::ct_eq(actual.as_bytes(), hex.as_bytes()) {
        Ok(())
    } else {
        Err(DigestProblem::Mismatch {
            alg: alg.name(),
            declared: hex.to_owned(),
            actual,
        })
    }
}

fn digest(cx: &mut Cx<'_>) {
    let Some(s) = cx.value().as_str().map(str::to_owned) else {
        cx.fail_as(J, "", "a digest must be a string".into());
        return;
    };
    match ArtifactDigest::parse(&s) {
        // The `catalog/digest-weak` row reports it.
        Ok(_) | Err(DigestProblem::Weak(_)) => {}
        Err(p) => cx.fail("", format!("{}: {p}", crate::text::quoted(&s))),
    }
}

fn digest_weak(cx: &mut Cx<'_>) {
    if let Some(Err(p @ DigestProblem::Weak(_))) = cx.value().as_str().map(ArtifactDigest::parse) {
        cx.fail("", p.to_string());
    }
}

/// `^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`, 3 to 200 characters.
fn server_name(v: &Value) -> bool {
    let Some(s) = v.as_str() else { return false };
    let Some((ns, name)) = s.split_once('/') else {
        return false;
    };
    let n = s.chars().count();
    (3..=200).contains(&n)
        && !ns.is_empty()
        && ns
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
        && !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

fn len_0_255(v: &Value) -> bool {
    v.as_str().is_some_and(|s| s.chars().count() <= 255)
}

fn len_1_100(v: &Value) -> bool {
    v.as_str()
        .is_some_and(|s| (1..=100).contains(&s.chars().count()))
}

/// JSON Schema `format: uri`: an absolute URI (RFC 3986 section 4.3), by
/// shape: `scheme ":" rest`, the scheme `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`,
/// no white space or control characters.
fn uri(v: &Value) -> bool {
    let Some(s) = v.as_str() else { return false };
    let Some((scheme, rest)) = s.split_once(':') else {
        return false;
    };
    let mut b = scheme.bytes();
    b.next().is_some_and(|c| c.is_ascii_alphabetic())
        && b.all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'))
        && !rest.is_empty()
        && !s.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// `^(https?://[^\s]+|\{[a-zA-Z_][a-zA-Z0-9_]*\}[^\s]*)$`.
fn remote_url(v: &Value) -> bool {
    let Some(s) = v.as_str() else { return false };
    if s.chars().any(char::is_whitespace) {
        return false;
    }
    if let Some(rest) = s
        .strip_prefix("https://")
        .or_else(|| s.strip_prefix("http://"))
    {
        return !rest.is_empty();
    }
    let Some(var) = s
        .strip_prefix('{')
        .and_then(|r| r.split_once('}'))
        .map(|x| x.0)
    else {
        return false;
    };
    let mut b = var.bytes();
    b.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// A remote endpoint without template variables is an advertised network
/// endpoint: an internal host is refused (as every format's endpoints are,
/// [`super::classify_host`]); a templated one is checked only once filled.
fn remote_endpoint(cx: &mut Cx<'_>) {
    if let Some(u) = cx.value().as_str().map(str::to_owned) {
        if !u.contains('{') {
            cx.endpoint("", &u);
        }
    }
}

/// An `Input` (or `KeyValueInput`): the types of its members.
fn input(cx: &mut Cx<'_>) {
    let Some(o) = cx.value().as_object().cloned() else {
        cx.fail("", "an input must be an object".into());
        return;
    };
    const STRINGS: [&str; 6] = [
        "default",
        "description",
        "format",
        "placeholder",
        "value",
        "name",
    ];
    for (k, v) in &o {
        let bad = if STRINGS.contains(&k.as_str()) {
            (!v.is_string()).then_some(STR)
        } else if k == "isRequired" || k == "isSecret" {
            (!v.is_boolean()).then_some(BOOL)
        } else if k == "choices" {
            (!v.as_array().is_some_and(|a| a.iter().all(Value::is_string))).then_some(STRS)
        } else {
            None
        };
        if let Some(ty) = bad {
            let p = crate::json::pointer(std::slice::from_ref(k));
            cx.fail(
                &p,
                format!("{} must be {}", crate::text::quoted(k), ty.name()),
            );
        }
    }
}
