//! Trust Manifest signatures (AI Catalog "Trust Manifest Signatures")
//! against independent JOSE implementations, both ways: PyPI `joserfc`
//! over `rfc8785` (tests/interop/jose_joserfc.py) and npm `jose` over its
//! own RFC 8785 serialization (tests/interop/jose_panva.mjs) sign the
//! canonical form of a manifest without its `signature`, verified by
//! agentsig; agentsig's manifest signature is verified by each over the same
//! bytes. A changed manifest must fail on both sides, so the harness cannot
//! pass vacuously. A missing module prints a skip notice unless
//! `AGENTSIG_REQUIRE_INTEROP=1`.

use agentsig::catalog::{self, Status};
use agentsig::trust::{KeySource, PerIssuer, StaticKeys};
use agentsig::{jwk, Verifier};
use base64::Engine;
use serde_json::{json, Value};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

const IDENTITY: &str = "urn:example:agent:planner";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn b64u(b: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b)
}

/// The peers: (name, interpreter, helper script, install hint).
const PEERS: [(&str, &str, &str, &str); 2] = [
    (
        "joserfc",
        "python3",
        "jose_joserfc.py",
        "pip install joserfc rfc8785",
    ),
    (
        "npm jose",
        "node",
        "jose_panva.mjs",
        "npm install --no-save --prefix tests/interop jose",
    ),
];

/// Run a peer's helper; `None` when it is missing (and not required).
fn peer(which: (&str, &str, &str, &str), request: &Value) -> Option<Value> {
    let (name, program, script, install) = which;
    let dir = root().join("tests/interop");
    let child = Command::new(program)
        .arg(dir.join(script))
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let why = match child {
        Ok(mut c) => {
            c.stdin
                .take()
                .expect("stdin")
                .write_all(request.to_string().as_bytes())
                .expect("write");
            let o = c.wait_with_output().expect("wait");
            if o.status.success() {
                return Some(serde_json::from_slice(&o.stdout).expect("json"));
            }
            assert_eq!(
                o.status.code(),
                Some(3),
                "{}",
                String::from_utf8_lossy(&o.stderr)
            );
            String::from_utf8_lossy(&o.stdout).into_owned()
        }
        Err(e) => format!("{program}: {e}"),
    };
    if std::env::var("AGENTSIG_REQUIRE_INTEROP").is_ok_and(|v| v == "1") {
        panic!("interop with {name} is required but unavailable: {why}; install: {install}");
    }
    let _ = writeln!(
        std::io::stderr().lock(),
        "SKIPPED Trust Manifest interop with {name}: {why} (install: {install})"
    );
    None
}

fn private_jwk() -> Value {
    serde_json::from_slice(
        &std::fs::read(root().join("keys/rfc9421/test-key-ecc-p256.jwk.json")).expect("jwk"),
    )
    .expect("json")
}

fn public_jwk(private: &Value) -> Value {
    let mut p = private.clone();
    if let Some(o) = p.as_object_mut() {
        o.remove("d");
    }
    p
}

fn manifest() -> Value {
    json!({
        "identity": IDENTITY,
        "identityType": "urn",
        "attestations": [{"type": "SOC2-Type2", "uri": "https://example.com/soc2.pdf", "mediaType": "application/pdf",
            "digest": "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}],
        "provenance": [{"relation": "publishedFrom", "sourceId": "https://github.com/example/planner"}],
        "privacyPolicyUrl": "https://example.com/privacy",
        "metadata": {"ünïcode": "€", "n": 1.5e3, "z": [true, null]}
    })
}

fn verifier(private: &Value) -> Verifier {
    let key = jwk::parse_keys(public_jwk(private).to_string().as_bytes()).expect("jwk")[0]
        .to_verifying_key(None)
        .expect("key");
    let per = PerIssuer::new().with(IDENTITY, StaticKeys::new().with(key, KeySource::Pinned));
    Verifier::builder(per).build()
}

#[test]
fn peer_signed_manifests_verify_in_agentsig() {
    for p in PEERS {
        peer_signed_manifest_verifies_in_agentsig(p);
    }
}

#[test]
fn agentsig_signed_manifests_verify_in_peers() {
    for p in PEERS {
        agentsig_signed_manifest_verifies_in_peer(p);
    }
}

fn peer_signed_manifest_verifies_in_agentsig(which: (&str, &str, &str, &str)) {
    let private = private_jwk();
    let kid = private["kid"]
        .as_str()
        .unwrap_or("test-key-ecc-p256")
        .to_owned();
    let m = manifest();
    let req =
        json!({"sign": [{"alg": "ES256", "jwk": private, "kid": kid, "document": m.to_string()}]});
    let Some(out) = peer(which, &req) else { return };
    let signed = &out["sign"][0];
    // Both sides canonicalize the manifest to the same bytes.
    let ours = catalog::canonical_manifest(&m).expect("jcs");
    assert_eq!(signed["jcs_b64u"], b64u(&ours), "{}", which.0);
    let mut m = m;
    m["signature"] = signed["jws"].clone();
    let v = verifier(&private);
    let o = v.verify_trust_manifest(&m, Some(IDENTITY));
    assert_eq!(o.status, Status::Verified, "{}: {}", which.0, o.message);
    m["privacyPolicyUrl"] = json!("https://evil.example/");
    assert_eq!(
        v.verify_trust_manifest(&m, Some(IDENTITY)).status,
        Status::Failed
    );
}

fn agentsig_signed_manifest_verifies_in_peer(which: (&str, &str, &str, &str)) {
    let private = private_jwk();
    let key = jwk::parse_keys(private.to_string().as_bytes()).expect("jwk")[0]
        .to_signing_key(None)
        .expect("key");
    let mut m = manifest();
    let jws = catalog::sign_manifest(&mut m, &key).expect("sign");
    let payload = catalog::canonical_manifest(&m).expect("jcs");
    let mut changed = m.clone();
    changed["privacyPolicyUrl"] = json!("https://evil.example/");
    let changed_payload = catalog::canonical_manifest(&changed).expect("jcs");
    let pubjwk = public_jwk(&private);
    let req = json!({"verify": [
        {"alg": "ES256", "jwk": pubjwk, "jws": jws, "payload_b64u": b64u(&payload)},
        {"alg": "ES256", "jwk": pubjwk, "jws": jws, "payload_b64u": b64u(&changed_payload)}
    ]});
    let Some(out) = peer(which, &req) else { return };
    assert_eq!(
        out["verify"][0]["ok"], true,
        "{}: {}",
        which.0, out["verify"][0]
    );
    assert_eq!(
        out["verify"][1]["ok"], false,
        "{}: {}",
        which.0, out["verify"][1]
    );
}

/// The binding agentsig writes (a provenance link whose `sourceId` is the
/// entry identifier and whose `sourceDigest` is SHA-256 of the RFC 8785
/// form of the inline `data`) read by each peer: the catalog agentsig
/// signs verifies manifest by manifest there, the peer's own RFC 8785 form
/// of the data hashes to the declared digest, and a manifest the peer
/// signs with that binding verifies in agentsig with the artifact bound.
#[test]
fn catalogs_signed_with_the_binding_interoperate() {
    for p in PEERS {
        catalog_binding_with_peer(p);
    }
}

fn catalog_binding_with_peer(which: (&str, &str, &str, &str)) {
    let private = private_jwk();
    let kid = private["kid"]
        .as_str()
        .unwrap_or("test-key-ecc-p256")
        .to_owned();
    let key = jwk::parse_keys(private.to_string().as_bytes()).expect("jwk")[0]
        .to_signing_key(None)
        .expect("key");
    let data = json!({"name": "Planner", "metadata": {"ünïcode": "€", "n": 1.5e3, "z": [true, null]},
        "skills": [{"id": "plan", "tags": ["b", "a"]}]});
    let mut doc = json!({"specVersion": "1.0", "entries": [{"identifier": IDENTITY,
        "displayName": "Planner", "mediaType": "application/vnd.example.agent+json", "data": data}]});
    catalog::sign_catalog(&mut doc, &key, &catalog::SignTarget::Every).expect("sign");
    let m = doc["entries"][0]["trustManifest"].clone();
    let link = &m["provenance"][0];
    assert_eq!(link["sourceId"], IDENTITY);
    let payload = catalog::canonical_manifest(&m).expect("jcs");
    let req = json!({
        "verify": [{"alg": "ES256", "jwk": public_jwk(&private), "jws": m["signature"],
            "payload_b64u": b64u(&payload)}],
        "sign": [{"alg": "ES256", "jwk": private, "kid": kid, "document": data.to_string()}]});
    let Some(out) = peer(which, &req) else { return };
    assert_eq!(
        out["verify"][0]["ok"], true,
        "{}: {}",
        which.0, out["verify"][0]
    );
    let peer_jcs = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(out["sign"][0]["jcs_b64u"].as_str().expect("jcs"))
        .expect("b64");
    let digest = catalog::manifest::sha256_digest(&peer_jcs);
    assert_eq!(link["sourceDigest"], digest.as_str(), "{}", which.0);

    // The peer's manifest with that binding, in agentsig.
    let mut theirs = json!({"identity": IDENTITY, "provenance": [
        {"relation": "publishedFrom", "sourceId": IDENTITY, "sourceDigest": digest}]});
    let req = json!({"sign": [{"alg": "ES256", "jwk": private, "kid": kid, "document": theirs.to_string()}]});
    let Some(out) = peer(which, &req) else { return };
    theirs["signature"] = out["sign"][0]["jws"].clone();
    let mut doc2 = doc.clone();
    doc2["entries"][0]["trustManifest"] = theirs;
    let v = verifier(&private);
    let opts = catalog::CatalogOptions::default().require_signed(true);
    let r = v
        .verify_catalog(doc2.to_string().as_bytes(), &opts)
        .expect("read");
    assert!(r.verified(), "{}: {:?}", which.0, r.first_failure());
    assert_eq!(r.entries[0].binding, catalog::Binding::ManifestDigest);
    // Over other data the peer's manifest fails the binding.
    doc2["entries"][0]["data"]["name"] = json!("Other");
    let r = v
        .verify_catalog(doc2.to_string().as_bytes(), &opts)
        .expect("read");
    assert!(!r.verified(), "{}", which.0);
    assert_eq!(r.entries[0].artifact.status, Status::Failed);
}

/// The MCP Server Card examples of the extension
/// (`tests/vectors/mcp-server-card`, copied from its
/// `examples/ServerCard/{valid,invalid}`) against npm `ajv` (JSON Schema
/// 2020-12) with `ajv-formats` and the extension's `schema.json`: every
/// `valid/` card passes, every `invalid/` one fails, and agentsig's lint
/// (`mcp-server-card`) gives the same answer on each.
#[test]
fn server_card_examples_agree_with_ajv_and_lint() {
    let dir = root().join("tests/vectors/mcp-server-card");
    let mut cards = Vec::new();
    for sub in ["valid", "invalid"] {
        let mut names: Vec<PathBuf> = std::fs::read_dir(dir.join(sub))
            .expect("examples")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        names.sort();
        assert!(!names.is_empty(), "no {sub} examples");
        cards.extend(names.into_iter().map(|p| (sub == "valid", p)));
    }
    let request = json!({
        "schema": dir.join("schema.json"),
        "cards": cards.iter().map(|(_, p)| p).collect::<Vec<_>>(),
    });
    let ajv = (
        "npm ajv",
        "node",
        "ajv_server_card.mjs",
        "npm install --no-save --prefix tests/interop ajv@8 ajv-formats@3",
    );
    let Some(out) = peer(ajv, &request) else {
        return;
    };
    let results = out["results"].as_array().expect("results");
    assert_eq!(results.len(), cards.len());
    for ((want_valid, path), r) in cards.iter().zip(results) {
        assert_eq!(
            r["valid"].as_bool(),
            Some(*want_valid),
            "ajv on {}: {}",
            path.display(),
            r["errors"]
        );
        let card: Value =
            serde_json::from_slice(&std::fs::read(path).expect("card")).expect("json");
        let lint = agentsig::formats::lint(agentsig::formats::Format::McpServerCard, &card);
        let lint_valid = lint.errors().next().is_none();
        assert_eq!(
            lint_valid,
            *want_valid,
            "agentsig lint on {}: {:?}",
            path.display(),
            lint.errors().map(|f| f.code).collect::<Vec<_>>()
        );
    }
}
