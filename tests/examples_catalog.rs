//! `examples/catalog/`: the publisher flow's output, as `docs/catalog.md`
//! shows it and `.ci/run` verifies it: an A2A Agent Card signed in card, an
//! MCP Server Card with its detached JWS, and a catalog holding both inline
//! with every Trust Manifest (and the host's) signed by the published test
//! key `keys/example-p256.pem`.

use serde_json::Value;
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn agentsig(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_agentsig"))
        .args(args)
        .current_dir(ROOT)
        .output()
        .expect("run");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn json(path: &str) -> Value {
    serde_json::from_slice(&std::fs::read(format!("{ROOT}/{path}")).expect(path)).expect(path)
}

const JWKS: &str = "keys/example-p256.jwks.json";

/// The cards' own signatures and the catalog verify, every manifest signed.
#[test]
fn the_catalog_example_and_its_cards_verify() {
    for file in [
        "examples/catalog/a2a-agent-card.json",
        "examples/catalog/mcp-server-card.json",
    ] {
        let (code, out, err) = agentsig(&["verify", file, "--jwks", JWKS]);
        assert_eq!(code, 0, "{file}: {out}{err}");
    }
    let (code, out, err) = agentsig(&[
        "verify",
        "examples/catalog/ai-catalog.json",
        "--jwks",
        JWKS,
        "--require-signed",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("verified (2 of 2 entries)"), "{out}");
    assert!(err.contains("A2A Agent Card signature verified"), "{err}");
    assert!(err.contains("MCP Server Card lints clean"), "{err}");
    assert!(err.contains("host Trust Manifest: verified"), "{err}");
}

/// The catalog holds the very cards of the directory (the signed A2A card,
/// the MCP Server Card its JWS covers), so the example cannot drift.
#[test]
fn the_catalog_holds_the_signed_cards() {
    let cat = json("examples/catalog/ai-catalog.json");
    assert_eq!(
        cat["entries"][0]["data"],
        json("examples/catalog/a2a-agent-card.json")
    );
    assert_eq!(
        cat["entries"][1]["data"],
        json("examples/catalog/mcp-server-card.json")
    );
    assert_eq!(
        cat["entries"][0]["mediaType"],
        "application/a2a-agent-card+json"
    );
    assert_eq!(
        cat["entries"][1]["type"],
        "application/mcp-server-card+json"
    );
}

/// `serve examples/catalog --base-url https://example.com`: the directory's
/// own catalog at the well-known path, the MCP Server Card also at
/// `/mcp/server-card` (its streamable-HTTP endpoint is
/// `https://example.com/mcp`).
#[cfg(feature = "server")]
#[test]
fn serving_the_example_directory_publishes_catalog_and_server_card() {
    use agentsig::server::{publish, KeyRing, PublishConfig};
    let key = agentsig::keys::load_signing_key(
        &std::fs::read(format!("{ROOT}/keys/example-p256.pem")).expect("key"),
        &agentsig::keys::LoadOptions::default(),
    )
    .expect("key");
    let mut cfg = PublishConfig::new(
        format!("{ROOT}/examples/catalog"),
        std::sync::Arc::new(KeyRing::single(key).expect("ring")),
    );
    cfg.base_url = Some("https://example.com".into());
    let site = publish::scan(&cfg).expect("scan");
    let body = |p: &str| match site.get(p) {
        Some(publish::Entry::File {
            body, content_type, ..
        }) => (content_type.clone(), body.to_vec()),
        other => panic!("{p}: {other:?}"),
    };
    let (ct, b) = body("/.well-known/ai-catalog.json");
    assert_eq!(ct, "application/ai-catalog+json");
    assert_eq!(
        b,
        std::fs::read(format!("{ROOT}/examples/catalog/ai-catalog.json")).expect("cat")
    );
    let (ct, b) = body("/mcp/server-card");
    assert_eq!(ct, "application/mcp-server-card+json");
    assert_eq!(
        b,
        std::fs::read(format!("{ROOT}/examples/catalog/mcp-server-card.json")).expect("card")
    );
}
