//! `lint` of AI Catalogs and MCP Server Cards: the examples of the MCP
//! Server Card repository, every row of `formats::CATALOG_RULES` broken by
//! one edit, detection, and the `mediaType`/`type` rename.

use agentsig::formats::{self, lint, lint_bytes, Format, Severity};
use serde_json::Value;
use std::path::PathBuf;

mod lint_support;

fn vectors(dir: &str) -> Vec<(String, Vec<u8>)> {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/vectors/mcp-server-card")
        .join(dir);
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&d)
        .expect("vectors")
        .flatten()
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).expect("read"),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn every_valid_server_card_lints_clean_and_every_invalid_one_fails() {
    let valid = vectors("valid");
    let invalid = vectors("invalid");
    assert_eq!((valid.len(), invalid.len()), (2, 5));
    for (name, bytes) in &valid {
        let r = lint_bytes(bytes, Some(Format::McpServerCard)).expect(name);
        assert!(r.findings.is_empty(), "{name}: {:#?}", r.findings);
        // And detected without --format.
        assert_eq!(
            lint_bytes(bytes, None).expect(name).format,
            Format::McpServerCard
        );
    }
    let expected = [
        ("bad-name-pattern.json", "mcp/name", "/name"),
        ("date-versioned-schema.json", "mcp/schema-uri", "/$schema"),
        ("missing-name.json", "mcp/required", "/name"),
        ("missing-schema.json", "mcp/required", "/$schema"),
        ("wrong-schema-name.json", "mcp/schema-uri", "/$schema"),
    ];
    for (name, bytes) in &invalid {
        let r = lint_bytes(bytes, Some(Format::McpServerCard)).expect(name);
        assert!(r.has_errors(), "{name} lints clean");
        let (_, code, ptr) = expected.iter().find(|e| e.0 == name).expect(name);
        assert!(
            r.errors().any(|f| f.code == *code && f.pointer == *ptr),
            "{name}: {:#?}",
            r.findings
        );
    }
}

const CATALOG: &str = r#"{
  "specVersion": "1.0",
  "host": {
    "displayName": "Example Co",
    "identifier": "did:web:example.com",
    "documentationUrl": "https://example.com/docs",
    "logoUrl": "https://example.com/logo.svg",
    "trustManifest": {
      "identity": "did:web:example.com",
      "identityType": "did",
      "signature": "eyJhbGciOiJFUzI1NiJ9..c2ln",
      "metadata": {"com.example.k": 1},
      "trustSchema": {"identifier": "urn:trust:x", "version": "1.0"},
      "attestations": [{"type": "SOC2-Type2", "uri": "https://example.com/soc2.pdf", "mediaType": "application/pdf",
        "digest": "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}],
      "provenance": [{"relation": "publishedFrom", "sourceId": "https://github.com/example/x",
        "sourceDigest": "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}]
    }
  },
  "metadata": {"com.example.region": "eu"},
  "entries": [
    {
      "identifier": "urn:example:mcp:weather",
      "displayName": "Weather",
      "mediaType": "application/mcp-server-card+json",
      "url": "https://example.com/mcp/server-card",
      "description": "Weather tools",
      "tags": ["weather"],
      "version": "1.0.0",
      "updatedAt": "2026-04-01T10:00:00Z",
      "metadata": {"homepage": "https://example.com"},
      "publisher": {"identifier": "did:web:example.com", "displayName": "Example Co"},
      "trustManifest": {
        "identity": "urn:example:mcp:weather",
        "identityType": "urn",
        "signature": "eyJhbGciOiJFUzI1NiJ9..c2ln",
        "metadata": {"k": "v"},
        "trustSchema": {"identifier": "urn:trust:x", "version": "1.0"},
        "attestations": [{"type": "publisher-identity", "uri": "https://example.com/p.jwt", "mediaType": "application/jwt",
          "digest": "sha512:0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000abcd"}],
        "provenance": [{"relation": "publishedFrom", "sourceId": "https://github.com/example/w"}]
      }
    },
    {
      "identifier": "urn:example:mcp:weather",
      "displayName": "Weather",
      "type": "application/mcp-server-card+json",
      "version": "2.0.0",
      "data": {"$schema": "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
               "name": "com.example/weather", "version": "2.0.0", "description": "Weather"}
    },
    {
      "identifier": "urn:example:skill:review",
      "displayName": "Review",
      "mediaType": "application/agentskill+zip",
      "type": "application/agentskill+zip",
      "url": "https://example.com/review.zip"
    }
  ]
}"#;

const SERVER_CARD: &str = r#"{
  "$schema": "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
  "name": "com.example/weather",
  "version": "2.1.0",
  "description": "Weather tools",
  "title": "Weather",
  "websiteUrl": "https://example.com",
  "_meta": {"com.example/x": 1},
  "icons": [{"src": "https://example.com/i.png", "mimeType": "image/png", "sizes": ["48x48"], "theme": "dark"}],
  "repository": {"source": "github", "url": "https://github.com/example/weather", "id": "1", "subfolder": "srv"},
  "remotes": [{
    "type": "streamable-http",
    "url": "https://mcp.example.com/mcp",
    "supportedProtocolVersions": ["2025-11-25"],
    "variables": {"tenant": {"description": "t", "isRequired": true, "format": "string", "choices": ["a"]}},
    "headers": [{"name": "Authorization", "value": "Bearer {token}", "isSecret": true, "format": "string",
                 "variables": {"token": {"isRequired": true, "format": "string"}}}]
  }]
}"#;

fn example_of(f: Format) -> Value {
    serde_json::from_str(match f {
        Format::AiCatalog => CATALOG,
        _ => SERVER_CARD,
    })
    .expect("example")
}

const R: &str = "-";
const J: &str = "json/type";
use Format::{AiCatalog as CAT, McpServerCard as MCP};

use lint_support::{edit, Case};

/// For each row of `formats::CATALOG_RULES`: edits that break it.
#[rustfmt::skip]
const CASES: &[Case] = &[
    (CAT, "/specVersion", "catalog/required", &[("/specVersion", R)]),
    (CAT, "/specVersion", "catalog/spec-version", &[("/specVersion", r#""1""#)]),
    (CAT, "/specVersion", "catalog/major-unsupported", &[("/specVersion", r#""2.0""#)]),
    (CAT, "/entries", "catalog/required", &[("/entries", R)]),
    (CAT, "/metadata", J, &[("/metadata", "[]")]),
    (CAT, "/metadata", "catalog/metadata-key", &[("/metadata", r#"{"":1}"#)]),
    (CAT, "/host", J, &[("/host", r#""Example""#)]),
    (CAT, "/host/displayName", "catalog/host-required", &[("/host/displayName", R)]),
    (CAT, "/host/identifier", J, &[("/host/identifier", "1")]),
    (CAT, "/host/documentationUrl", J, &[("/host/documentationUrl", "1")]),
    (CAT, "/host/logoUrl", J, &[("/host/logoUrl", "1")]),
    (CAT, "/host", "catalog/host-identity", &[("/host/identifier", r#""did:web:other.example""#)]),
    (CAT, "/entries/*", J, &[("/entries/0", "1")]),
    (CAT, "/entries/*/identifier", "catalog/entry-required", &[("/entries/0/identifier", R)]),
    (CAT, "/entries/*/displayName", "catalog/entry-required", &[("/entries/0/displayName", R)]),
    (CAT, "/entries/*", "catalog/media-type", &[("/entries/0/mediaType", R)]),
    (CAT, "/entries/*", "mcp/required", &[("/entries/1/data/name", R)]),
    (CAT, "/entries/*", "catalog/media-type", &[("/entries/2/type", r#""application/zip""#)]),
    (CAT, "/entries/*", "catalog/url-or-data", &[("/entries/0/data", "{}")]),
    (CAT, "/entries/*", "catalog/url-or-data", &[("/entries/0/url", R)]),
    (CAT, "/entries/*/url", J, &[("/entries/0/url", "1")]),
    (CAT, "/entries/*/url", "catalog/url-https", &[("/entries/0/url", r#""http://example.com/mcp/server-card""#)]),
    (CAT, "/entries/*/url", "catalog/url-https", &[("/entries/2/url", r#""HTTP://example.com/review.zip""#)]),
    (CAT, "/entries/*", "catalog/nesting-depth", &[("/entries/1/type", r#""application/ai-catalog+json""#), ("/entries/1/data", NEST_5)]),
    (CAT, "/entries/*/description", J, &[("/entries/0/description", "1")]),
    (CAT, "/entries/*/tags", J, &[("/entries/0/tags", r#""weather""#)]),
    (CAT, "/entries/*/version", J, &[("/entries/0/version", "1")]),
    (CAT, "/entries/*/updatedAt", "catalog/updated-at", &[("/entries/0/updatedAt", r#""yesterday""#)]),
    (CAT, "/entries/*/metadata", J, &[("/entries/0/metadata", "1")]),
    (CAT, "/entries/*/metadata", "catalog/metadata-key", &[("/entries/0/metadata", r#"{"":1}"#)]),
    (CAT, "/entries", "catalog/duplicate", &[("/entries/1/version", r#""1.0.0""#)]),
    (CAT, "/entries", "catalog/duplicate", &[("/entries/0/version", R), ("/entries/1/version", R)]),
    (CAT, "/entries/*/publisher", J, &[("/entries/0/publisher", "1")]),
    (CAT, "/entries/*/publisher/identifier", "catalog/publisher-required", &[("/entries/0/publisher/identifier", R)]),
    (CAT, "/entries/*/publisher/displayName", "catalog/publisher-required", &[("/entries/0/publisher/displayName", R)]),
    (CAT, "/entries/*", "catalog/manifest-identity", &[("/entries/0/trustManifest/identity", r#""urn:example:other""#)]),
    (CAT, "/host/trustManifest", J, &[("/host/trustManifest", "[]")]),
    (CAT, "/host/trustManifest/identity", "catalog/manifest-required", &[("/host/trustManifest/identity", R)]),
    (CAT, "/host/trustManifest/identityType", J, &[("/host/trustManifest/identityType", "1")]),
    (CAT, "/host/trustManifest/signature", "catalog/signature-form", &[("/host/trustManifest/signature", r#""a.b.c""#)]),
    (CAT, "/host/trustManifest/metadata", "catalog/metadata-key", &[("/host/trustManifest/metadata", r#"{"":1}"#)]),
    (CAT, "/host/trustManifest/trustSchema", J, &[("/host/trustManifest/trustSchema", "1")]),
    (CAT, "/host/trustManifest/trustSchema/identifier", "catalog/trust-schema", &[("/host/trustManifest/trustSchema/identifier", R)]),
    (CAT, "/host/trustManifest/trustSchema/version", "catalog/trust-schema", &[("/host/trustManifest/trustSchema/version", R)]),
    (CAT, "/host/trustManifest/attestations", J, &[("/host/trustManifest/attestations", "{}")]),
    (CAT, "/host/trustManifest/attestations/*/type", "catalog/attestation-required", &[("/host/trustManifest/attestations/0/type", R)]),
    (CAT, "/host/trustManifest/attestations/*/uri", "catalog/attestation-required", &[("/host/trustManifest/attestations/0/uri", R)]),
    (CAT, "/host/trustManifest/attestations/*/mediaType", "catalog/attestation-required", &[("/host/trustManifest/attestations/0/mediaType", R)]),
    (CAT, "/host/trustManifest/attestations/*/digest", "catalog/digest", &[("/host/trustManifest/attestations/0/digest", r#""sha256:ABC""#)]),
    (CAT, "/host/trustManifest/provenance", J, &[("/host/trustManifest/provenance", "{}")]),
    (CAT, "/host/trustManifest/provenance/*/relation", "catalog/provenance-required", &[("/host/trustManifest/provenance/0/relation", R)]),
    (CAT, "/host/trustManifest/provenance/*/sourceId", "catalog/provenance-required", &[("/host/trustManifest/provenance/0/sourceId", R)]),
    (CAT, "/host/trustManifest/provenance/*/sourceDigest", "catalog/digest", &[("/host/trustManifest/provenance/0/sourceDigest", r#""blake9:00""#)]),
    (CAT, "/entries/*/trustManifest", J, &[("/entries/0/trustManifest", "[]")]),
    (CAT, "/entries/*/trustManifest/identity", "catalog/manifest-required", &[("/entries/0/trustManifest/identity", R)]),
    (CAT, "/entries/*/trustManifest/identityType", J, &[("/entries/0/trustManifest/identityType", "1")]),
    (CAT, "/entries/*/trustManifest/signature", "catalog/signature-form", &[("/entries/0/trustManifest/signature", r#""e30.e30.c2ln""#)]),
    (CAT, "/entries/*/trustManifest/metadata", "catalog/metadata-key", &[("/entries/0/trustManifest/metadata", r#"{"":1}"#)]),
    (CAT, "/entries/*/trustManifest/trustSchema", J, &[("/entries/0/trustManifest/trustSchema", "1")]),
    (CAT, "/entries/*/trustManifest/trustSchema/identifier", "catalog/trust-schema", &[("/entries/0/trustManifest/trustSchema/identifier", R)]),
    (CAT, "/entries/*/trustManifest/trustSchema/version", "catalog/trust-schema", &[("/entries/0/trustManifest/trustSchema/version", R)]),
    (CAT, "/entries/*/trustManifest/attestations", J, &[("/entries/0/trustManifest/attestations", "{}")]),
    (CAT, "/entries/*/trustManifest/attestations/*/type", "catalog/attestation-required", &[("/entries/0/trustManifest/attestations/0/type", R)]),
    (CAT, "/entries/*/trustManifest/attestations/*/uri", "catalog/attestation-required", &[("/entries/0/trustManifest/attestations/0/uri", R)]),
    (CAT, "/entries/*/trustManifest/attestations/*/mediaType", "catalog/attestation-required", &[("/entries/0/trustManifest/attestations/0/mediaType", R)]),
    (CAT, "/entries/*/trustManifest/attestations/*/digest", "catalog/digest", &[("/entries/0/trustManifest/attestations/0/digest", r#""sha256:9f86""#)]),
    (CAT, "/host/trustManifest/attestations/*/digest", "catalog/digest-weak", &[("/host/trustManifest/attestations/0/digest", r#""sha224:d14a028c2a3a2bc9476102bb288234c415a2b01f828ea62ac5b3e42f""#)]),
    (CAT, "/host/trustManifest/provenance/*/sourceDigest", "catalog/digest-weak", &[("/host/trustManifest/provenance/0/sourceDigest", r#""sha1:da39a3ee5e6b4b0d3255bfef95601890afd80709""#)]),
    (CAT, "/entries/*/trustManifest/provenance/*/sourceDigest", "catalog/digest-weak", &[("/entries/0/trustManifest/provenance/0/sourceDigest", r#""md5:d41d8cd98f00b204e9800998ecf8427e""#)]),
    (CAT, "/entries/*/trustManifest/attestations/*/digest", "catalog/digest-weak", &[("/entries/0/trustManifest/attestations/0/digest", r#""md5:d41d8cd98f00b204e9800998ecf8427e""#)]),
    (CAT, "/entries/*/trustManifest/attestations/*/digest", "catalog/digest-weak", &[("/entries/0/trustManifest/attestations/0/digest", r#""sha1:da39a3ee5e6b4b0d3255bfef95601890afd80709""#)]),
    (CAT, "/entries/*/trustManifest/provenance", J, &[("/entries/0/trustManifest/provenance", "{}")]),
    (CAT, "/entries/*/trustManifest/provenance/*/relation", "catalog/provenance-required", &[("/entries/0/trustManifest/provenance/0/relation", R)]),
    (CAT, "/entries/*/trustManifest/provenance/*/sourceId", "catalog/provenance-required", &[("/entries/0/trustManifest/provenance/0/sourceId", R)]),
    (CAT, "/entries/*/trustManifest/provenance/*/sourceDigest", "catalog/digest", &[("/entries/0/trustManifest/provenance/0/sourceDigest", r#""sha256""#)]),
    (MCP, "/$schema", "mcp/required", &[("/$schema", R)]),
    (MCP, "/$schema", "mcp/schema-uri", &[("/$schema", r#""https://static.modelcontextprotocol.io/schemas/v2/server-card.schema.json""#)]),
    (MCP, "/name", "mcp/required", &[("/name", R)]),
    (MCP, "/name", "mcp/name", &[("/name", r#""a/b/c""#)]),
    (MCP, "/name", "mcp/name", &[("/name", r#""/x""#)]),
    (MCP, "/version", "mcp/required", &[("/version", R)]),
    (MCP, "/version", "mcp/length", &[("/version", LONG_256)]),
    (MCP, "/description", "mcp/required", &[("/description", R)]),
    (MCP, "/description", "mcp/length", &[("/description", r#""""#)]),
    (MCP, "/title", J, &[("/title", "1")]),
    (MCP, "/title", "mcp/length", &[("/title", r#""""#)]),
    (MCP, "/websiteUrl", "mcp/uri", &[("/websiteUrl", r#""example.com""#)]),
    (MCP, "/_meta", J, &[("/_meta", "[]")]),
    (MCP, "/icons", J, &[("/icons", "{}")]),
    (MCP, "/icons/*", J, &[("/icons/0", r#""i.png""#)]),
    (MCP, "/icons/*/src", "mcp/required", &[("/icons/0/src", R)]),
    (MCP, "/icons/*/src", "mcp/uri", &[("/icons/0/src", r#""i.png""#)]),
    (MCP, "/icons/*/mimeType", J, &[("/icons/0/mimeType", "1")]),
    (MCP, "/icons/*/sizes", J, &[("/icons/0/sizes", r#""48x48""#)]),
    (MCP, "/icons/*/theme", "mcp/enum", &[("/icons/0/theme", r#""blue""#)]),
    (MCP, "/repository", J, &[("/repository", r#""github""#)]),
    (MCP, "/repository/source", "mcp/required", &[("/repository/source", R)]),
    (MCP, "/repository/url", "mcp/required", &[("/repository/url", R)]),
    (MCP, "/repository/url", "mcp/uri", &[("/repository/url", r#""github.com/x""#)]),
    (MCP, "/repository/id", J, &[("/repository/id", "1")]),
    (MCP, "/repository/subfolder", J, &[("/repository/subfolder", "1")]),
    (MCP, "/remotes", J, &[("/remotes", "{}")]),
    (MCP, "/remotes/*", J, &[("/remotes/0", "1")]),
    (MCP, "/remotes/*/type", "mcp/required", &[("/remotes/0/type", R)]),
    (MCP, "/remotes/*/type", "mcp/enum", &[("/remotes/0/type", r#""stdio""#)]),
    (MCP, "/remotes/*/url", "mcp/required", &[("/remotes/0/url", R)]),
    (MCP, "/remotes/*/url", "mcp/remote-url", &[("/remotes/0/url", r#""ftp://example.com/""#)]),
    (MCP, "/remotes/*/url", "mcp/remote-url", &[("/remotes/0/url", r#""{1x}.example.com""#)]),
    (MCP, "/remotes/*/url", "addr/internal", &[("/remotes/0/url", r#""https://127.0.0.1/mcp""#)]),
    (MCP, "/remotes/*/supportedProtocolVersions", J, &[("/remotes/0/supportedProtocolVersions", r#""2025-11-25""#)]),
    (MCP, "/remotes/*/variables", J, &[("/remotes/0/variables", "[]")]),
    (MCP, "/remotes/*/variables/*", J, &[("/remotes/0/variables/tenant/isRequired", r#""yes""#)]),
    (MCP, "/remotes/*/variables/*/format", "mcp/enum", &[("/remotes/0/variables/tenant/format", r#""date""#)]),
    (MCP, "/remotes/*/headers", J, &[("/remotes/0/headers", "{}")]),
    (MCP, "/remotes/*/headers/*/name", "mcp/required", &[("/remotes/0/headers/0/name", R)]),
    (MCP, "/remotes/*/headers/*", J, &[("/remotes/0/headers/0/choices", "[1]")]),
    (MCP, "/remotes/*/headers/*/format", "mcp/enum", &[("/remotes/0/headers/0/format", r#""secret""#)]),
    (MCP, "/remotes/*/headers/*/variables", J, &[("/remotes/0/headers/0/variables", "1")]),
    (MCP, "/remotes/*/headers/*/variables/*", J, &[("/remotes/0/headers/0/variables/token", "1")]),
    (MCP, "/remotes/*/headers/*/variables/*/format", "mcp/enum", &[("/remotes/0/headers/0/variables/token/format", r#""x""#)]),
];

/// Four inline catalogs below the root: the last is level 5.
const NEST_5: &str = r#"{"specVersion": "1.0", "entries": [{"identifier": "urn:l3", "displayName": "3",
  "mediaType": "application/ai-catalog+json", "data": {"specVersion": "1.0", "entries": [
  {"identifier": "urn:l4", "displayName": "4", "mediaType": "application/ai-catalog+json",
   "data": {"specVersion": "1.0", "entries": [{"identifier": "urn:l5", "displayName": "5",
   "mediaType": "application/ai-catalog+json", "data": {"specVersion": "1.0", "entries": []}}]}}]}}]}"#;

/// Inline nesting to level 4 (the RECOMMENDED maximum) is clean; level 5
/// is an error at the pointer of the level-5 catalog, whether it is
/// recognised by its media type or by its content.
#[test]
fn inline_nesting_deeper_than_four_levels_is_an_error() {
    let with = |data: &str, ty: &str| {
        let mut doc = example_of(CAT);
        edit(&mut doc, "/entries/1/type", ty);
        edit(&mut doc, "/entries/1/data", data);
        lint(CAT, &doc)
            .findings
            .into_iter()
            .filter(|f| f.code == "catalog/nesting-depth")
            .collect::<Vec<_>>()
    };
    let deep = with(NEST_5, r#""application/ai-catalog+json""#);
    assert_eq!(deep.len(), 1, "{deep:#?}");
    assert_eq!(
        deep[0].pointer,
        "/entries/1/data/entries/0/data/entries/0/data/entries/0/data"
    );
    assert_eq!(deep[0].severity, agentsig::formats::Severity::Error);
    assert!(
        deep[0].message.contains("deeper than 4"),
        "{}",
        deep[0].message
    );
    // Recognised by content too (a wrong media type does not hide it).
    assert_eq!(with(NEST_5, r#""application/json""#).len(), 1);
    // Level 4 is within the limit.
    let mut four: Value = serde_json::from_str(NEST_5).expect("json");
    four["entries"][0]["data"]["entries"][0]["data"]["entries"] = serde_json::json!([]);
    assert!(with(&four.to_string(), r#""application/ai-catalog+json""#).is_empty());
}

/// An inline MCP Server Card (an entry's `data`) is linted as a card file
/// is: each finding under its own code, at the card's pointer in the
/// catalog; also inside an inline nested catalog. A card by `url` and the
/// data of another media type are not linted as cards.
#[test]
fn inline_server_cards_are_linted_as_card_files_at_their_pointer() {
    let mut card = example_of(MCP);
    edit(&mut card, "/name", r#""a/b/c""#);
    edit(&mut card, "/remotes/0/type", r#""stdio""#);
    let as_file: Vec<(&str, String)> = lint(MCP, &card)
        .findings
        .iter()
        .map(|f| (f.code, f.pointer.clone()))
        .collect();
    assert_eq!(
        as_file,
        [
            ("mcp/name", "/name".to_owned()),
            ("mcp/enum", "/remotes/0/type".to_owned())
        ]
    );
    let of = |doc: &Value| -> Vec<(&'static str, String, Severity)> {
        lint(CAT, doc)
            .findings
            .into_iter()
            .map(|f| (f.code, f.pointer, f.severity))
            .collect()
    };
    let mut doc = example_of(CAT);
    edit(&mut doc, "/entries/1/data", &card.to_string());
    assert_eq!(
        of(&doc),
        [
            (
                "mcp/name",
                "/entries/1/data/name".to_owned(),
                Severity::Error
            ),
            (
                "mcp/enum",
                "/entries/1/data/remotes/0/type".to_owned(),
                Severity::Error
            )
        ]
    );
    // Inside an inline nested catalog (level 2).
    let nested = serde_json::json!({
        "specVersion": "1.0",
        "entries": [doc["entries"][1].clone()]
    });
    let mut outer = example_of(CAT);
    edit(
        &mut outer,
        "/entries/1/type",
        r#""application/ai-catalog+json""#,
    );
    edit(&mut outer, "/entries/1/data", &nested.to_string());
    assert_eq!(
        of(&outer)
            .iter()
            .map(|(c, p, _)| (*c, p.as_str()))
            .collect::<Vec<_>>(),
        [
            ("mcp/name", "/entries/1/data/entries/0/data/name"),
            ("mcp/enum", "/entries/1/data/entries/0/data/remotes/0/type")
        ]
    );
    // The same bad card under another media type is not a Server Card.
    edit(&mut doc, "/entries/1/type", r#""application/json""#);
    assert!(of(&doc).is_empty(), "{:#?}", of(&doc));
}

const LONG_256: &str = concat!(
    "\"",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "\""
);

#[test]
fn the_examples_lint_clean() {
    for f in [CAT, MCP] {
        let r = lint(f, &example_of(f));
        assert!(r.findings.is_empty(), "{f}: {:#?}", r.findings);
        let bytes = serde_json::to_vec(&example_of(f)).expect("json");
        assert_eq!(formats::detect_bytes(&bytes).expect("detect").0, f);
    }
}

/// Every rule has a failing document here, giving its code at a pointer
/// under the rule's pattern; a rule added without a case fails this test.
#[test]
fn every_catalog_rule_has_a_failing_document() {
    lint_support::every_rule_has_a_failing_document(formats::CATALOG_RULES, CASES, example_of);
}

/// A major version above the supported one is refused with a message that
/// names both versions; a higher minor version is accepted.
#[test]
fn a_higher_major_version_is_refused_with_a_clear_message() {
    let mut doc = example_of(CAT);
    edit(&mut doc, "/specVersion", r#""2.0""#);
    let r = lint(CAT, &doc);
    let f = r
        .errors()
        .find(|f| f.code == "catalog/major-unsupported")
        .expect("refused");
    assert_eq!(f.pointer, "/specVersion");
    assert!(
        f.message.contains("major version 2") && f.message.contains("supported 1"),
        "{}",
        f.message
    );
    edit(&mut doc, "/specVersion", r#""1.7""#);
    assert!(lint(CAT, &doc).findings.is_empty());
}

/// `mediaType` (April 2026 text) and `type` (later rename) are each
/// accepted alone; together they must agree.
#[test]
fn media_type_and_type_are_both_accepted_and_never_disagree_silently() {
    let doc = example_of(CAT);
    assert!(
        doc["entries"][0].get("type").is_none() && doc["entries"][1].get("mediaType").is_none()
    );
    assert!(lint(CAT, &doc).findings.is_empty());
    let mut d = doc.clone();
    edit(&mut d, "/entries/2/type", r#""application/zip""#);
    let r = lint(CAT, &d);
    let f = r
        .errors()
        .find(|f| f.code == "catalog/media-type")
        .expect("disagreement");
    assert_eq!(f.pointer, "/entries/2");
    assert!(f.message.contains("disagree"), "{}", f.message);
}

#[test]
fn duplicates_name_both_entries() {
    let mut doc = example_of(CAT);
    edit(&mut doc, "/entries/1/version", r#""1.0.0""#);
    let r = lint(CAT, &doc);
    let f = r
        .errors()
        .find(|f| f.code == "catalog/duplicate")
        .expect("duplicate");
    assert_eq!(f.pointer, "/entries/1");
    assert!(f.message.contains("entry 0"), "{}", f.message);
    assert_eq!(
        r.errors().filter(|f| f.code == "catalog/duplicate").count(),
        1
    );
}

#[test]
fn digests_weaker_than_sha256_are_refused_and_strong_ones_checked() {
    use formats::{digest_problem, DigestProblem};
    let sha256_test = "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
    assert_eq!(digest_problem(sha256_test, b"test"), Ok(()));
    assert!(matches!(
        digest_problem(sha256_test, b"tesT"),
        Err(DigestProblem::Mismatch { .. })
    ));
    assert!(matches!(
        digest_problem("md5:098f6bcd4621d373cade4e832627b4f6", b"test"),
        Err(DigestProblem::Weak(_))
    ));
    assert!(matches!(
        digest_problem("sha1:a94a8fe5ccb19ba61c4c0873d391e987982fbbd3", b"test"),
        Err(DigestProblem::Weak(_))
    ));
    assert!(matches!(
        digest_problem(
            &sha256_test.to_uppercase().replace("SHA256", "sha256"),
            b"test"
        ),
        Err(DigestProblem::Hex { .. })
    ));
    let r = lint(CAT, &example_of(CAT));
    assert!(r.findings.iter().all(|f| f.severity != Severity::Error));
}

#[test]
fn the_format_names_parse() {
    assert_eq!("ai-catalog".parse::<Format>(), Ok(CAT));
    assert_eq!("mcp-server-card".parse::<Format>(), Ok(MCP));
    assert_eq!(CAT.media_type(), "application/ai-catalog+json");
    assert_eq!(MCP.media_type(), "application/mcp-server-card+json");
    assert_eq!(CAT.well_known_path(), Some("/.well-known/ai-catalog.json"));
}

/// Every code of the catalog rows is documented in docs/formats.md.
#[test]
fn every_catalog_code_is_in_the_docs() {
    let doc =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/formats.md"))
            .expect("docs/formats.md");
    let missing: Vec<&str> = formats::CATALOG_RULES
        .iter()
        .map(|r| r.code)
        .filter(|c| !doc.contains(&format!("`{c}`")))
        .collect();
    assert!(missing.is_empty(), "not in docs/formats.md: {missing:?}");
}
