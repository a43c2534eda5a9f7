//! A2A Agent Card signatures, interop with both reference SDKs,
//! both ways and for ES256 and EdDSA:
//!
//! * the A2A Python SDK (PyPI `a2a-sdk[signing]==1.3.*`,
//!   tests/interop/a2a_sdk.py run by `python3` from PATH);
//! * the A2A JS SDK (npm `@a2a-js/sdk@1.3` under tests/interop/node_modules,
//!   tests/interop/a2a_sdk.mjs run by `node`).
//!
//! Checked:
//!
//! * the SDK's canonical payload equals agentsig's normal form, byte for
//!   byte, on the example card and on a card full of what the SDKs drop
//!   (unknown and v0.3 compatibility members, empties, `required:false`,
//!   non-ASCII, Struct params);
//! * a card signed by agentsig verifies with the SDK's verifier, and the
//!   same card tampered does not;
//! * a card signed by the SDK verifies with agentsig, and tampered does not;
//! * the same through the `agentsig` binary, both ways, for ES256, EdDSA and
//!   RS256, v1.0 and v0.3 cards and a card with non-ASCII text, 1e21, 0.1
//!   and extensions: `agentsig sign CARD` verifies in both SDKs (also with
//!   two `--key`), cards signed by each SDK verify with `agentsig verify
//!   CARD` (also as the Python SDK's server serves them, with the v0.3
//!   compatibility members added, and with those members rewritten), an
//!   emptied `signatures` fails, and tampering fails in all three.
//!
//! Without the SDK the test prints a skip notice, unless
//! `AGENTSIG_REQUIRE_INTEROP=1`, which makes it a failure (CI sets it).

use agentsig::a2a;
use agentsig::keys::{load_signing_key, LoadOptions};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "b64_support/mod.rs"]
mod b64;

/// The card report whether it verified or not; `Ok` must mean verified.
fn rep(r: Result<a2a::CardReport, a2a::A2aError>) -> a2a::CardReport {
    match r {
        Ok(r) => {
            assert!(r.verified(), "Ok only when verified");
            r
        }
        Err(a2a::A2aError::NotVerified(r)) => {
            assert!(!r.verified());
            *r
        }
        Err(e) => panic!("card not readable: {e}"),
    }
}

fn verifier(keys: &StaticKeys) -> Verifier {
    Verifier::builder(keys.clone()).build()
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn require() -> bool {
    std::env::var("AGENTSIG_REQUIRE_INTEROP").is_ok_and(|v| v == "1")
}

struct Peer {
    program: &'static str,
    script: &'static str,
    install: &'static str,
}

const PEERS: [Peer; 2] = [
    Peer {
        program: "python3",
        script: "tests/interop/a2a_sdk.py",
        install: "python3 -m pip install 'a2a-sdk[signing]==1.3.*'",
    },
    Peer {
        program: "node",
        script: "tests/interop/a2a_sdk.mjs",
        install: "npm install --no-save --prefix tests/interop @a2a-js/sdk@1.3",
    },
];

/// Run an SDK peer; `None` when its interpreter or the SDK is absent (skip).
fn peer(p: &Peer, args: &[&str]) -> Option<(i32, Vec<u8>, String)> {
    let out = Command::new(p.program)
        .arg(root().join(p.script))
        .args(args)
        .output();
    let out = match out {
        Ok(o) => o,
        Err(e) => {
            skip(p, &format!("{}: {e}", p.program));
            return None;
        }
    };
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.code() == Some(3) {
        skip(p, &stderr);
        return None;
    }
    Some((out.status.code().unwrap_or(-1), out.stdout, stderr))
}

fn skip(p: &Peer, why: &str) {
    if require() {
        panic!("A2A SDK interop ({}) is required (AGENTSIG_REQUIRE_INTEROP=1) but unavailable: {why}; install with: {}", p.script, p.install);
    }
    println!("SKIPPED A2A SDK interop with {}: {why} (install: {}; set AGENTSIG_REQUIRE_INTEROP=1 to make this a failure)", p.script, p.install);
}

struct Tmp(PathBuf);
impl Tmp {
    fn new(tag: &str) -> Tmp {
        let d = std::env::temp_dir().join(format!("agentsig-a2a-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        Tmp(d)
    }
    fn write(&self, name: &str, v: &Value) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, serde_json::to_vec_pretty(v).unwrap()).unwrap();
        p
    }
}
impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn example_card() -> Value {
    serde_json::from_slice(&std::fs::read(root().join("examples/a2a-agent-card.json")).unwrap())
        .unwrap()
}

/// Everything the SDKs' normal form drops or rewrites.
fn tricky_card() -> Value {
    json!({
        "name": "Crème brûlée Agent €",
        "description": "",
        "version": "0.9.1-beta+sha.5114f85",
        "url": "https://compat.example.com/a2a",
        "preferredTransport": "JSONRPC",
        "protocolVersion": "0.3.0",
        "supportedInterfaces": [
            {"url": "https://tricky.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0", "tenant": ""}
        ],
        "x-vendor": {"anything": [1, 2, 3]},
        "documentationUrl": "https://tricky.example.com/docs",
        "capabilities": {
            "streaming": false,
            "extensions": [{
                "uri": "https://ext.example.com/v1",
                "required": false,
                "params": {"big": 1e21, "small": 0.1, "maxTokens": 1000, "é": "x", "😀": [], "｡": null, "empty": ""}
            }]
        },
        "securitySchemes": {
            "oauth": {"oauth2SecurityScheme": {"flows": {"authorizationCode": {
                "authorizationUrl": "https://auth.example.com/authorize",
                "tokenUrl": "https://auth.example.com/token",
                "scopes": {"read": "Read", "none": ""},
                "pkceRequired": false
            }}}}
        },
        "securityRequirements": [{"schemes": {"oauth": {"list": ["read"]}}}],
        "defaultInputModes": ["text/plain", ""],
        "defaultOutputModes": ["application/json"],
        "skills": [{"id": "s1", "name": "Skill ñ", "description": "does things", "tags": [], "examples": ["a", ""]}]
    })
}

fn key_files() -> Vec<(&'static str, PathBuf)> {
    vec![
        (
            "ES256",
            root().join("keys/rfc9421/test-key-ecc-p256.jwk.json"),
        ),
        (
            "EdDSA",
            root().join("keys/rfc9421/test-key-ed25519.jwk.json"),
        ),
    ]
}

fn resolver(jwk_path: &Path) -> StaticKeys {
    let key = load_signing_key(&std::fs::read(jwk_path).unwrap(), &LoadOptions::default()).unwrap();
    StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned)
}

#[test]
fn sdk_canonical_payload_equals_agentsig_normal_form() {
    let tmp = Tmp::new("canon");
    'peer: for p in &PEERS {
        for (name, card) in [
            ("example", example_card()),
            ("tricky", tricky_card()),
            ("v03", v03_card()),
        ] {
            let path = tmp.write(&format!("{name}.json"), &card);
            let Some((code, stdout, stderr)) = peer(p, &["canon", s(&path)]) else {
                continue 'peer;
            };
            assert_eq!(code, 0, "{stderr}");
            // The Python SDK converts v0.3 members (parse_agent_card); the
            // JS SDK's canonicalizeAgentCard drops them. agentsig has both
            // readings, and verify_card tries them in that order.
            let mine = if p.program == "node" {
                a2a::normalize_unconverted(&card).unwrap()
            } else {
                a2a::normalize(&card).unwrap()
            };
            assert_eq!(
                String::from_utf8(mine.payload).unwrap(),
                String::from_utf8(stdout).unwrap(),
                "{} {name}",
                p.script
            );
        }
    }
}

#[test]
fn agentsig_signed_card_verifies_with_the_sdk() {
    let tmp = Tmp::new("a2s");
    'peer: for p in &PEERS {
        for (alg, jwk_path) in key_files() {
            let key = load_signing_key(&std::fs::read(&jwk_path).unwrap(), &LoadOptions::default())
                .unwrap();
            for (name, card) in [("example", example_card()), ("tricky", tricky_card())] {
                // The tricky card's v0.3 members beside supportedInterfaces
                // would be unsigned: signing them away takes `force`.
                let signed = a2a::sign_card(&card, &key, &Map::new(), true).unwrap();
                let path = tmp.write(&format!("{name}-{alg}.json"), &signed.card);
                let Some((code, _, stderr)) = peer(p, &["verify", s(&path), s(&jwk_path)]) else {
                    continue 'peer;
                };
                assert_eq!(
                    code, 0,
                    "{} {alg} {name}: SDK refused agentsig's signature: {stderr}",
                    p.script
                );
                // Tampered: the SDK must refuse, or the check above proves nothing.
                let mut bad = signed.card.clone();
                bad["skills"][0]["name"] = json!("Other skill");
                let path = tmp.write(&format!("{name}-{alg}-bad.json"), &bad);
                let (code, _, _) = peer(p, &["verify", s(&path), s(&jwk_path)]).unwrap();
                assert_eq!(
                    code, 1,
                    "{} {alg} {name}: SDK accepted a tampered card",
                    p.script
                );
            }
        }
    }
}

#[test]
fn sdk_signed_card_verifies_with_agentsig() {
    let tmp = Tmp::new("s2a");
    'peer: for p in &PEERS {
        for (alg, jwk_path) in key_files() {
            let keys = resolver(&jwk_path);
            for (name, card) in [("example", example_card()), ("tricky", tricky_card())] {
                let path = tmp.write(&format!("{name}.json"), &card);
                let Some((code, stdout, stderr)) = peer(p, &["sign", s(&path), s(&jwk_path)])
                else {
                    continue 'peer;
                };
                assert_eq!(code, 0, "{stderr}");
                let signed: Value = serde_json::from_slice(&stdout).unwrap();
                let header =
                    b64::decode(signed["signatures"][0]["protected"].as_str().unwrap()).unwrap();
                let header: Value = serde_json::from_slice(&header).unwrap();
                assert_eq!(header["alg"], alg);
                let report = rep(verifier(&keys).verify_agent_card_value(&signed));
                assert!(
                    report.verified(),
                    "{} {alg} {name}: {:?}",
                    p.script,
                    report.signatures
                );
                // The SDK serves MessageToDict, so the card as the SDK signed it,
                // with the tricky card's unknown members re-added, still verifies,
                // and those members are reported as uncovered.
                let mut served = signed.clone();
                served["x-vendor"] = json!({"added": "after signing"});
                let report = rep(verifier(&keys).verify_agent_card_value(&served));
                assert!(report.verified());
                assert!(report.uncovered.iter().any(|u| u.pointer == "/x-vendor"));
                let mut bad = signed.clone();
                bad["version"] = json!("9.9.9");
                let report = rep(verifier(&keys).verify_agent_card_value(&bad));
                assert!(
                    !report.verified(),
                    "{} {alg} {name}: tampered card verified",
                    p.script
                );
            }
        }
    }
}

/// A v0.3 card: no `supportedInterfaces`; `url`, `preferredTransport`,
/// `additionalInterfaces`, `security`, `type`-style security schemes.
fn v03_card() -> Value {
    json!({
        "name": "Legacy Agent",
        "description": "A v0.3 card",
        "version": "1.0.0",
        "url": "https://legacy.example.com/a2a",
        "preferredTransport": "JSONRPC",
        "protocolVersion": "0.3.0",
        "additionalInterfaces": [{"url": "https://legacy.example.com/grpc", "transport": "GRPC"}],
        "capabilities": {"streaming": true},
        "supportsAuthenticatedExtendedCard": true,
        "securitySchemes": {
            "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
            "key": {"type": "apiKey", "in": "header", "name": "X-API-Key"}
        },
        "security": [{"bearer": ["read"]}],
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "Skill ü", "description": "d", "tags": ["t"], "security": [{"key": ["use"]}]}]
    })
}

/// (JOSE name, private JWK, extra `agentsig` arguments for that key).
fn cli_keys() -> Vec<(&'static str, PathBuf, &'static [&'static str])> {
    vec![
        (
            "ES256",
            root().join("keys/rfc9421/test-key-ecc-p256.jwk.json"),
            &[],
        ),
        (
            "EdDSA",
            root().join("keys/rfc9421/test-key-ed25519.jwk.json"),
            &[],
        ),
        (
            "RS256",
            root().join("keys/rfc9421/test-key-rsa.jwk.json"),
            &["--alg", "rsa-v1_5-sha256"],
        ),
    ]
}

/// (name, card, whether signing it needs --allow-uncovered).
fn cli_cards() -> Vec<(&'static str, Value, bool)> {
    vec![
        ("v1", example_card(), false),
        ("v03", v03_card(), false),
        ("tricky", tricky_card(), true),
        ("bearer-v1", bearer_card(false), false),
        ("bearer-v03", bearer_card(true), false),
    ]
}

/// The example card requiring bearer auth without scopes, in its v1.0 or
/// its v0.3 shape: the empty scope list signs as absent (docs/a2a.md).
fn bearer_card(v03: bool) -> Value {
    let mut card = example_card();
    let o = card.as_object_mut().unwrap();
    o.remove("securityRequirements");
    o.remove("security");
    if v03 {
        o.insert(
            "securitySchemes".into(),
            json!({"bearer": {"type": "http", "scheme": "bearer"}}),
        );
        o.insert("security".into(), json!([{"bearer": []}]));
    } else {
        o.insert(
            "securitySchemes".into(),
            json!({"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}}),
        );
        o.insert(
            "securityRequirements".into(),
            json!([{"schemes": {"bearer": {"list": []}}}]),
        );
    }
    card
}

/// Run the agentsig binary: (exit code, stdout, stderr).
fn agentsig(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_agentsig"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn cli_verify(card: &Path, jwk: &Path, extra: &[&str], json: bool) -> (i32, String, String) {
    let mut args = vec!["verify", s(card), "--key", s(jwk)];
    args.extend_from_slice(extra);
    if json {
        args.push("--json");
    }
    agentsig(&args)
}

fn read_json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

#[test]
fn cli_signed_cards_verify_in_both_sdks() {
    let tmp = Tmp::new("cli-a2s");
    for (alg, jwk, extra) in cli_keys() {
        for (name, card, force) in cli_cards() {
            let path = tmp.write(&format!("{name}-{alg}.json"), &card);
            let mut args = vec!["sign", s(&path), "--key", s(&jwk), "--no-headers"];
            args.extend_from_slice(extra);
            if force {
                args.push("--allow-uncovered");
            }
            let (code, _, err) = agentsig(&args);
            assert_eq!(code, 0, "{alg} {name}: {err}");
            let signed = read_json(&path);
            let header: Value = serde_json::from_slice(
                &b64::decode(signed["signatures"][0]["protected"].as_str().unwrap()).unwrap(),
            )
            .unwrap();
            assert_eq!(header["alg"], alg);
            assert_eq!(header["typ"], "JOSE");
            assert_eq!(header["kid"], read_json(&jwk)["kid"]);
            let (code, out, err) = cli_verify(&path, &jwk, extra, false);
            assert_eq!(code, 0, "{alg} {name}: agentsig: {out}{err}");

            let mut bad = signed.clone();
            bad["skills"][0]["name"] = json!("Tampered skill");
            let bad_path = tmp.write(&format!("{name}-{alg}-bad.json"), &bad);
            let (code, _, _) = cli_verify(&bad_path, &jwk, extra, false);
            assert_eq!(code, 1, "{alg} {name}: agentsig accepted a tampered card");
            for p in &PEERS {
                let Some((code, _, stderr)) = peer(p, &["verify", s(&path), s(&jwk)]) else {
                    continue;
                };
                assert_eq!(
                    code, 0,
                    "{} {alg} {name}: SDK refused the card agentsig signed: {stderr}",
                    p.script
                );
                let (code, _, _) = peer(p, &["verify", s(&bad_path), s(&jwk)]).unwrap();
                assert_eq!(
                    code, 1,
                    "{} {alg} {name}: SDK accepted a tampered card",
                    p.script
                );
            }
        }
    }
}

#[test]
fn cli_two_keys_two_signatures_each_verifies_in_both_sdks() {
    let tmp = Tmp::new("cli-two");
    let keys = cli_keys();
    let path = tmp.write("card.json", &example_card());
    let (code, _, err) = agentsig(&[
        "sign",
        s(&path),
        "--key",
        s(&keys[0].1),
        "--key",
        s(&keys[1].1),
        "--no-headers",
    ]);
    assert_eq!(code, 0, "{err}");
    let signed = read_json(&path);
    assert_eq!(signed["signatures"].as_array().map(Vec::len), Some(2));
    for (alg, jwk, _) in &keys[..2] {
        let (code, out, err) = cli_verify(&path, jwk, &[], false);
        assert_eq!(code, 0, "{alg}: {out}{err}");
        assert!(out.contains("1 of 2"), "{out}");
        for p in &PEERS {
            let Some((code, _, stderr)) = peer(p, &["verify", s(&path), s(jwk)]) else {
                continue;
            };
            assert_eq!(code, 0, "{} {alg}: {stderr}", p.script);
        }
    }
    let (code, out, err) = agentsig(&[
        "verify",
        s(&path),
        "--key",
        s(&keys[0].1),
        "--key",
        s(&keys[1].1),
        "--require-all",
    ]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn sdk_signed_cards_verify_with_the_cli() {
    let tmp = Tmp::new("cli-s2a");
    'peer: for p in &PEERS {
        for (alg, jwk, extra) in cli_keys() {
            for (name, card, _) in cli_cards() {
                let path = tmp.write(&format!("{name}.json"), &card);
                let Some((code, stdout, stderr)) = peer(p, &["sign", s(&path), s(&jwk)]) else {
                    continue 'peer;
                };
                assert_eq!(code, 0, "{} {alg} {name}: {stderr}", p.script);
                let signed: Value = serde_json::from_slice(&stdout).unwrap();
                let signed_path = tmp.write(&format!("{name}-{alg}-signed.json"), &signed);
                let (code, out, err) = cli_verify(&signed_path, &jwk, extra, false);
                assert_eq!(code, 0, "{} {alg} {name}: {out}{err}", p.script);

                // Served with the v0.3 compatibility members a server adds:
                // the Python SDK's own server output, and for both SDKs the
                // members written by hand (pointing elsewhere): still valid,
                // each reported as unsigned and security-relevant.
                let mut served = signed.clone();
                served["url"] = json!("https://attacker.example/a2a");
                served["preferredTransport"] = json!("HTTP+JSON");
                served["protocolVersion"] = json!("0.3.0");
                let served_path = tmp.write(&format!("{name}-{alg}-served.json"), &served);
                let (code, out, err) = cli_verify(&served_path, &jwk, extra, true);
                assert_eq!(code, 0, "{} {alg} {name} served: {out}{err}", p.script);
                let r: Value = serde_json::from_str(&out).unwrap();
                let flagged = |ptr: &str| {
                    r["details"]["uncovered"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|u| u["pointer"] == ptr && u["security"] == true)
                };
                assert!(flagged("/url") && flagged("/preferredTransport"), "{r}");
                assert_ne!(
                    r["details"]["signed_card"]["supportedInterfaces"][0]["url"],
                    "https://attacker.example/a2a"
                );
                if p.program == "python3" {
                    let (code, stdout, stderr) = peer(p, &["served", s(&path), s(&jwk)]).unwrap();
                    assert_eq!(code, 0, "{stderr}");
                    let served: Value = serde_json::from_slice(&stdout).unwrap();
                    let path = tmp.write(&format!("{name}-{alg}-sdk-served.json"), &served);
                    let (code, out, err) = cli_verify(&path, &jwk, extra, false);
                    assert_eq!(code, 0, "a2a-sdk served {alg} {name}: {out}{err}");
                }

                // `"signatures": []`: nothing to verify, a clear failure.
                let mut empty = signed.clone();
                empty["signatures"] = json!([]);
                let empty_path = tmp.write(&format!("{name}-{alg}-empty.json"), &empty);
                let (code, out, _) = cli_verify(&empty_path, &jwk, extra, true);
                assert_eq!(code, 1, "{out}");
                let r: Value = serde_json::from_str(&out).unwrap();
                assert_eq!(r["error"]["code"], "a2a.no-signatures");

                // Tampering with a signed member fails.
                let mut bad = signed.clone();
                bad["name"] = json!("Other agent");
                let bad_path = tmp.write(&format!("{name}-{alg}-bad.json"), &bad);
                let (code, out, err) = cli_verify(&bad_path, &jwk, extra, false);
                assert_eq!(
                    code, 1,
                    "{} {alg} {name}: tampered card verified: {out}{err}",
                    p.script
                );
            }
        }
    }
}

/// A2A cards signed by each SDK, inline in an AI Catalog whose entries
/// carry Trust Manifests signed by agentsig with the same key (the
/// identity's): the catalog verifies, each card by its SDK signature, and
/// the catalog with one card changed after signing does not (that entry
/// fails, the others still verify).
#[test]
fn sdk_signed_cards_in_a_catalog_verify() {
    let tmp = Tmp::new("catalog");
    'peer: for p in &PEERS {
        for (alg, jwk_path) in key_files() {
            let keys = resolver(&jwk_path);
            let key = load_signing_key(&std::fs::read(&jwk_path).unwrap(), &LoadOptions::default())
                .unwrap();
            let mut entries = Vec::new();
            for (i, (name, card)) in [("example", example_card()), ("tricky", tricky_card())]
                .into_iter()
                .enumerate()
            {
                let path = tmp.write(&format!("cat-{name}.json"), &card);
                let Some((code, stdout, stderr)) = peer(p, &["sign", s(&path), s(&jwk_path)])
                else {
                    continue 'peer;
                };
                assert_eq!(code, 0, "{stderr}");
                let signed: Value = serde_json::from_slice(&stdout).unwrap();
                entries.push(json!({"identifier": format!("urn:example:agent:{i}"),
                    "displayName": name, "mediaType": "application/a2a-agent-card+json",
                    "data": signed}));
            }
            let mut doc = json!({"specVersion": "1.0", "entries": entries});
            agentsig::catalog::sign_catalog(&mut doc, &key, &agentsig::catalog::SignTarget::Every)
                .unwrap();
            let opts = agentsig::catalog::CatalogOptions::default().require_signed(true);
            let r = verifier(&keys)
                .verify_catalog(doc.to_string().as_bytes(), &opts)
                .unwrap();
            assert!(r.verified(), "{} {alg}: {:?}", p.script, r.first_failure());
            for e in &r.entries {
                assert_eq!(
                    e.artifact.status,
                    agentsig::catalog::Status::Verified,
                    "{} {alg}: {}",
                    p.script,
                    e.artifact.message
                );
            }
            doc["entries"][1]["data"]["version"] = json!("9.9.9");
            let r = verifier(&keys)
                .verify_catalog(doc.to_string().as_bytes(), &opts)
                .unwrap();
            assert!(!r.verified(), "{} {alg}: a changed card verified", p.script);
            assert_eq!(
                r.entries[1].artifact.status,
                agentsig::catalog::Status::Failed
            );
            assert_eq!(
                r.entries[0].artifact.status,
                agentsig::catalog::Status::Verified
            );
        }
    }
}
