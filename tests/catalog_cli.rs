//! `agentsig sign CATALOG` and `agentsig verify CATALOG`: the publisher and
//! consumer flows over a file, exit codes 0/1/2, and `examples/ai-catalog.json`
//! (an A2A card and an MCP Server Card, with signed Trust Manifests).

#[path = "b64_support/mod.rs"]
mod b64;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

struct Tmp(PathBuf);
impl Tmp {
    fn new(tag: &str) -> Tmp {
        let d = std::env::temp_dir().join(format!("agentsig-catalog-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("tmp");
        Tmp(d)
    }
    fn path(&self, n: &str) -> PathBuf {
        self.0.join(n)
    }
    fn write_json(&self, n: &str, v: &Value) {
        std::fs::write(self.path(n), serde_json::to_vec_pretty(v).expect("json")).expect("write");
    }
    fn read_json(&self, n: &str) -> Value {
        serde_json::from_slice(&std::fs::read(self.path(n)).expect("read")).expect("json")
    }
}
impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_agentsig"))
        .args(args)
        .current_dir(dir)
        .env_remove("AGENTSIG_ALLOW_PRIVATE_NETWORKS")
        .stdin(Stdio::null())
        .output()
        .expect("run");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn example() -> Value {
    serde_json::from_slice(
        &std::fs::read(format!("{ROOT}/examples/ai-catalog.json")).expect("example"),
    )
    .expect("json")
}

/// The shipped example with the example key's JWK Set: its A2A card bound
/// by its embedded signature, its inline MCP Server Card by the digest its
/// signed manifest declares, every manifest verified; the skill referenced
/// by `url` is not fetched from a file, so nothing binds its bytes: the
/// summary says so, and `--require-signed` refuses it (`catalog.unbound`).
#[test]
fn the_example_catalog_verifies() {
    let jwks = format!("{ROOT}/keys/example-p256.jwks.json");
    let (code, out, err) = run(
        Path::new(ROOT),
        &["verify", "examples/ai-catalog.json", "--jwks", &jwks],
    );
    // Unbound, nothing failed: `unsigned`, refused unless accepted.
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("unsigned, NOT verified: 1 of 3 entries unbound"),
        "{out}"
    );
    let (code, out2, err2) = run(
        Path::new(ROOT),
        &[
            "verify",
            "examples/ai-catalog.json",
            "--jwks",
            &jwks,
            "--allow-unsigned",
        ],
    );
    assert_eq!(code, 0, "{out2}{err2}");
    assert!(out2.contains("1 of 3 entries unbound"), "{out2}");
    assert!(err.contains("A2A Agent Card signature verified"), "{err}");
    assert!(err.contains("MCP Server Card lints clean"), "{err}");
    assert!(err.contains("binding manifest-digest"), "{err}");
    assert!(err.contains("binding own-signature"), "{err}");
    let (code, out, err) = run(
        Path::new(ROOT),
        &[
            "verify",
            "examples/ai-catalog.json",
            "--jwks",
            &jwks,
            "--require-signed",
            "--json",
        ],
    );
    assert_eq!(code, 1, "{out}{err}");
    let r: Value = serde_json::from_str(&out).expect("report");
    assert_eq!(r["error"]["code"], "catalog.unbound", "{out}");
    assert_eq!(r["details"]["counts"]["bound"], 2, "{out}");
    assert_eq!(r["details"]["counts"]["unbound"], 1, "{out}");
    let (code, out, _) = run(Path::new(ROOT), &["lint", "examples/ai-catalog.json"]);
    assert_eq!(code, 0, "{out}");
    let doc = example();
    assert_eq!(
        doc["entries"][0]["mediaType"],
        "application/a2a-agent-card+json"
    );
    assert_eq!(
        doc["entries"][1]["type"],
        "application/mcp-server-card+json"
    );
}

/// A Trust Manifest signature covers the manifest only: the inline MCP
/// Server Card's `remotes` pointed at an attacker and the skill's `url`
/// rewritten must not verify, though every manifest signature still does.
#[test]
fn a_replaced_inline_card_or_rewritten_url_is_not_verified() {
    let t = Tmp::new("bind");
    let jwks = format!("{ROOT}/keys/example-p256.jwks.json");
    let mut doc = example();
    doc["entries"][1]["data"]["remotes"] =
        json!([{"type": "streamable-http", "url": "https://attacker.example/mcp"}]);
    doc["entries"][2]["url"] = json!("https://attacker.example/evil.zip");
    t.write_json("t.json", &doc);
    for extra in [&[][..], &["--require-signed"][..]] {
        let mut args = vec!["verify", "t.json", "--jwks", &jwks];
        args.extend_from_slice(extra);
        let (code, out, err) = run(&t.0, &args);
        assert_eq!(code, 1, "{extra:?}: {out}{err}");
        assert!(out.contains("NOT verified"), "{out}");
        assert!(!out.contains(": verified"), "{out}");
        assert!(
            out.contains("/entries/1") && out.contains("sourceDigest"),
            "{out}"
        );
        assert!(out.contains("1 unbound, 1 failed"), "{out}");
    }
    // The skill's url alone rewritten: unbound, refused under --require-signed.
    let mut doc = example();
    doc["entries"][2]["url"] = json!("https://attacker.example/evil.zip");
    t.write_json("u.json", &doc);
    let (code, out, _) = run(
        &t.0,
        &["verify", "u.json", "--jwks", &jwks, "--require-signed"],
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("/entries/2") && out.contains("unbound"),
        "{out}"
    );
}

/// A signed manifest copied onto another catalog over another inline card
/// does not verify there: the digest it declares is the publisher's card's.
#[test]
fn a_manifest_copied_over_another_artifact_fails_the_binding() {
    let t = Tmp::new("copy");
    let jwks = format!("{ROOT}/keys/example-p256.jwks.json");
    let publisher = example();
    let entry = &publisher["entries"][1];
    let mut card = entry["data"].clone();
    card["description"] = json!("another server, the same manifest");
    let copied = json!({"specVersion": "1.0", "entries": [{
        "identifier": entry["identifier"], "displayName": "Copy",
        "type": "application/mcp-server-card+json",
        "data": card, "trustManifest": entry["trustManifest"]}]});
    t.write_json("c.json", &copied);
    let (code, out, err) = run(&t.0, &["verify", "c.json", "--jwks", &jwks, "--json"]);
    assert_eq!(code, 1, "{out}{err}");
    let r: Value = serde_json::from_str(&out).expect("report");
    let e = &r["details"]["entries"][0];
    assert_eq!(e["manifest"]["status"], "verified", "{out}");
    assert_eq!(e["artifact"]["status"], "failed", "{out}");
    assert_eq!(e["binding"], "unbound", "{out}");
    // The publisher's own card under that manifest is bound.
    let mut same = copied.clone();
    same["entries"][0]["data"] = entry["data"].clone();
    t.write_json("s.json", &same);
    let (code, out, err) = run(
        &t.0,
        &["verify", "s.json", "--jwks", &jwks, "--require-signed"],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("verified (1 of 1 entries)"), "{out}");
}

/// A manifest signed without a binding (as before agentsig wrote one) over
/// an inline card: its signature verifies, the card is unbound, and
/// `--require-signed` refuses it with `catalog.unbound`.
#[test]
fn a_signed_manifest_without_a_binding_is_unbound() {
    let t = Tmp::new("nobind");
    let jwks = format!("{ROOT}/keys/example-p256.jwks.json");
    let key = agentsig::SigningKey::from_pem(
        &std::fs::read_to_string(format!("{ROOT}/keys/example-p256.pem")).expect("key"),
    )
    .expect("pem");
    let mut doc = example();
    let entries = doc["entries"].as_array_mut().expect("entries");
    entries.truncate(2);
    let m = &mut entries[1]["trustManifest"];
    m.as_object_mut().expect("manifest").remove("provenance");
    agentsig::catalog::sign_manifest(m, &key).expect("sign");
    t.write_json("n.json", &doc);
    let (code, out, err) = run(
        &t.0,
        &[
            "verify",
            "n.json",
            "--jwks",
            &jwks,
            "--require-signed",
            "--json",
        ],
    );
    assert_eq!(code, 1, "{out}{err}");
    let r: Value = serde_json::from_str(&out).expect("report");
    assert_eq!(r["error"]["code"], "catalog.unbound", "{out}");
    assert_eq!(r["details"]["entries"][1]["binding"], "unbound", "{out}");
    assert_eq!(
        r["details"]["entries"][1]["manifest"]["status"], "verified",
        "{out}"
    );
    // `sign` writes the binding by default: signed again, it verifies.
    let (code, _, err) = run(
        &t.0,
        &[
            "sign",
            "n.json",
            "--key",
            &format!("{ROOT}/keys/example-p256.pem"),
        ],
    );
    assert_eq!(code, 0, "{err}");
    let signed = t.read_json("n.json");
    let link = &signed["entries"][1]["trustManifest"]["provenance"][0];
    assert_eq!(link["sourceId"], "urn:example:mcp:with-remote");
    assert_eq!(link["relation"], "publishedFrom");
    assert!(link["sourceDigest"]
        .as_str()
        .is_some_and(|d| d.starts_with("sha256:")));
    let (code, out, err) = run(
        &t.0,
        &["verify", "n.json", "--jwks", &jwks, "--require-signed"],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("verified (2 of 2 entries)"), "{out}");
}

#[test]
fn a_changed_inline_card_or_manifest_is_not_verified() {
    let t = Tmp::new("tamper");
    let jwks = format!("{ROOT}/keys/example-p256.jwks.json");
    let mut doc = example();
    doc["entries"][0]["data"]["description"] = json!("evil");
    t.write_json("a.json", &doc);
    let (code, out, _) = run(&t.0, &["verify", "a.json", "--jwks", &jwks]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("/entries/0") && out.contains("A2A Agent Card"),
        "{out}"
    );
    let mut doc = example();
    doc["entries"][2]["trustManifest"]["termsOfServiceUrl"] = json!("https://evil.example/");
    t.write_json("b.json", &doc);
    let (code, out, _) = run(&t.0, &["verify", "b.json", "--jwks", &jwks]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("/entries/2"), "{out}");
    // Another key set: nothing verifies.
    let (code, _, _) = run(&t.0, &["keygen", "--out", "other"]);
    assert_eq!(code, 0);
    let (code, _, _) = run(
        &t.0,
        &[
            "verify",
            &format!("{ROOT}/examples/ai-catalog.json"),
            "--jwks",
            "other.jwks.json",
        ],
    );
    assert_eq!(code, 1);
}

/// The publisher flow: sign one entry (`--entry`, `--version`), then every
/// entry; a missing manifest is created with identity = identifier;
/// `--require-signed` fails until every entry has a verified manifest.
#[test]
fn publisher_flow_signs_entries_and_require_signed_follows() {
    let t = Tmp::new("publish");
    let (code, _, err) = run(&t.0, &["keygen", "--out", "k"]);
    assert_eq!(code, 0, "{err}");
    // Inline artifacts: `sign` binds each to its manifest (a url entry read
    // from a file is not fetched, so nothing would bind it).
    let entry = |id: &str, v: &str| json!({"identifier": id, "displayName": "X", "version": v, "mediaType": "application/zip", "data": {"v": v}});
    t.write_json(
        "cat.json",
        &json!({"specVersion": "1.0", "entries": [entry("urn:a", "1"), entry("urn:a", "2"), entry("urn:b", "1")]}),
    );
    // Unsigned entries: the catalog is `unsigned`, refused unless
    // --allow-unsigned (never verified).
    let (code, out, _) = run(&t.0, &["verify", "cat.json", "--jwks", "k.jwks.json"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("unsigned, NOT verified"), "{out}");
    let (code, out, _) = run(
        &t.0,
        &[
            "verify",
            "cat.json",
            "--jwks",
            "k.jwks.json",
            "--allow-unsigned",
        ],
    );
    assert_eq!(code, 0, "{out}");
    let (code, out, _) = run(
        &t.0,
        &[
            "verify",
            "cat.json",
            "--jwks",
            "k.jwks.json",
            "--require-signed",
        ],
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("a verified Trust Manifest is required"),
        "{out}"
    );
    // Two entries have urn:a: --version chooses.
    let (code, _, err) = run(
        &t.0,
        &["sign", "cat.json", "--key", "k.pem", "--entry", "urn:a"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("give --version"), "{err}");
    let (code, _, err) = run(
        &t.0,
        &[
            "sign",
            "cat.json",
            "--key",
            "k.pem",
            "--entry",
            "urn:a",
            "--version",
            "2",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let doc = t.read_json("cat.json");
    assert!(doc["entries"][0].get("trustManifest").is_none());
    assert_eq!(doc["entries"][1]["trustManifest"]["identity"], "urn:a");
    assert!(doc["entries"][1]["trustManifest"]["signature"]
        .as_str()
        .is_some_and(|s| s.contains("..")));
    let (code, _, err) = run(
        &t.0,
        &["sign", "cat.json", "--key", "k.pem", "--entry", "urn:none"],
    );
    assert_eq!(code, 2, "{err}");
    // Every entry.
    let (code, _, err) = run(&t.0, &["sign", "cat.json", "--key", "k.pem"]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = run(
        &t.0,
        &[
            "verify",
            "cat.json",
            "--jwks",
            "k.jwks.json",
            "--require-signed",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    // --host without host.identifier is a usage error.
    let (code, _, err) = run(&t.0, &["sign", "cat.json", "--key", "k.pem", "--host"]);
    assert_eq!(code, 2, "{err}");
}

/// A catalog with lint errors is not signed unless forced, and not verified.
#[test]
fn lint_errors_refuse_signing_and_verification() {
    let t = Tmp::new("lint");
    let (code, _, _) = run(&t.0, &["keygen", "--out", "k"]);
    assert_eq!(code, 0);
    let e = json!({"identifier": "urn:a", "displayName": "X", "mediaType": "application/zip", "url": "https://example.com/x"});
    t.write_json(
        "dup.json",
        &json!({"specVersion": "1.0", "entries": [e.clone(), e]}),
    );
    let (code, _, err) = run(&t.0, &["sign", "dup.json", "--key", "k.pem"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("catalog/duplicate"), "{err}");
    let (code, out, _) = run(&t.0, &["verify", "dup.json", "--jwks", "k.jwks.json"]);
    assert_eq!(code, 1);
    assert!(out.contains("catalog/duplicate"), "{out}");
    t.write_json("v2.json", &json!({"specVersion": "2.0", "entries": []}));
    let (code, out, _) = run(&t.0, &["verify", "v2.json", "--jwks", "k.jwks.json"]);
    assert_eq!(code, 1);
    assert!(out.contains("catalog/major-unsupported"), "{out}");
    let (code, _, _) = run(&t.0, &["lint", "--format", "ai-catalog", "v2.json"]);
    assert_eq!(code, 1);
}

/// Without --key/--jwks, each manifest's key comes from its identity: a
/// did:key resolves (no network), a URN or SPIFFE ID is unsupported and
/// never passes.
#[test]
fn keys_resolved_from_identities() {
    let t = Tmp::new("resolve");
    let (code, out, err) = run(&t.0, &["keygen", "--out", "k", "--json"]);
    assert_eq!(code, 0, "{err}");
    let rep: Value = serde_json::from_str(&out).expect("json");
    let did = rep["details"]["did_key"]
        .as_str()
        .expect("did:key")
        .to_owned();
    let entry = |id: &str| json!({"identifier": id, "displayName": "X", "mediaType": "application/zip", "data": {"x": 1}});
    t.write_json(
        "did.json",
        &json!({"specVersion": "1.0", "entries": [entry(&did)]}),
    );
    let (code, _, err) = run(
        &t.0,
        &[
            "sign",
            "did.json",
            "--key",
            "k.pem",
            "--kid",
            &format!("{did}#{}", &did["did:key:".len()..]),
        ],
    );
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = run(&t.0, &["verify", "did.json", "--require-signed"]);
    assert_eq!(code, 0, "{out}{err}");
    for id in ["urn:example:x", "spiffe://example.com/agent"] {
        t.write_json(
            "u.json",
            &json!({"specVersion": "1.0", "entries": [entry(id)]}),
        );
        let (code, _, err) = run(&t.0, &["sign", "u.json", "--key", "k.pem"]);
        assert_eq!(code, 0, "{err}");
        let (code, out, err) = run(&t.0, &["verify", "u.json"]);
        assert_eq!(code, 1, "{id}: {out}{err}");
        assert!(err.contains("manifest unsupported"), "{id}: {err}");
    }
}

/// An MCP Server Card is signed as any descriptor (detached JWS over RFC
/// 8785, its media type in the static headers) and verified; a broken one
/// is refused by lint first.
#[test]
fn an_mcp_server_card_signs_and_verifies_as_a_descriptor() {
    let t = Tmp::new("mcp");
    let (code, _, _) = run(&t.0, &["keygen", "--out", "k"]);
    assert_eq!(code, 0);
    let card: Value = serde_json::from_slice(
        &std::fs::read(format!(
            "{ROOT}/tests/vectors/mcp-server-card/valid/templated-remote.json"
        ))
        .expect("card"),
    )
    .expect("json");
    t.write_json("server-card.json", &card);
    let (code, _, err) = run(&t.0, &["sign", "server-card.json", "--key", "k.pem"]);
    assert_eq!(code, 0, "{err}");
    let headers = std::fs::read_to_string(t.path("server-card.json.headers")).expect("headers");
    assert!(
        headers.contains("application/mcp-server-card+json"),
        "{headers}"
    );
    let (code, out, err) = run(
        &t.0,
        &["verify", "server-card.json", "--jwks", "k.jwks.json"],
    );
    assert_eq!(code, 0, "{out}{err}");
    // A detached compact JWS (RFC 7515 Appendix F) naming the key.
    let jws = std::fs::read_to_string(t.path("server-card.json.jws")).expect("jws");
    let parts: Vec<&str> = jws.trim().split('.').collect();
    assert!(parts.len() == 3 && parts[1].is_empty(), "{jws}");
    // Detected as an MCP Server Card, not by --format.
    let (code, out, _) = run(
        &t.0,
        &[
            "sign",
            "server-card.json",
            "--key",
            "k.pem",
            "--out",
            "-",
            "--json",
        ],
    );
    assert_eq!(code, 0, "{out}");
    let rep: Value = serde_json::from_str(&out).expect("report");
    assert_eq!(rep["details"]["format"], "mcp-server-card", "{out}");
    assert_eq!(
        rep["details"]["content_type"],
        "application/mcp-server-card+json"
    );
    // A card changed after signing is not verified.
    let mut changed = card.clone();
    changed["description"] = json!("changed after signing");
    std::fs::copy(t.path("server-card.json.jws"), t.path("changed.json.jws")).expect("copy");
    t.write_json("changed.json", &changed);
    let (code, out, err) = run(&t.0, &["verify", "changed.json", "--jwks", "k.jwks.json"]);
    assert_eq!(code, 1, "{out}{err}");
    let mut bad = card.clone();
    bad["name"] = json!("no-slash");
    t.write_json("bad.json", &bad);
    let (code, _, err) = run(
        &t.0,
        &[
            "sign",
            "bad.json",
            "--key",
            "k.pem",
            "--format",
            "mcp-server-card",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("mcp/name"), "{err}");
}

fn sha256_hex(b: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, b)
        .as_ref()
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

/// `sign --digest-from DIR`: each attestation's `digest` and `size` and the
/// artifact's provenance `sourceDigest` are filled from the local files
/// before the manifest is signed, so the signature covers them; a `data:`
/// attestation from its own content; a source repository left alone.
#[test]
fn sign_digest_from_fills_declared_digests_before_signing() {
    let t = Tmp::new("digest");
    let (code, _, err) = run(&t.0, &["keygen", "--out", "k"]);
    assert_eq!(code, 0, "{err}");
    std::fs::create_dir_all(t.path("site/reports")).expect("dir");
    std::fs::create_dir_all(t.path("cdn")).expect("dir");
    std::fs::write(t.path("site/reports/soc2.pdf"), b"%PDF-1.7 report").expect("pdf");
    std::fs::write(t.path("cdn/skill.zip"), b"PK\x03\x04 skill").expect("zip");
    t.write_json(
        "cat.json",
        &json!({"specVersion": "1.0", "entries": [{
            "identifier": "urn:example:skill", "displayName": "Skill",
            "mediaType": "application/zip", "url": "https://cdn.example/skill.zip",
            "trustManifest": {"identity": "urn:example:skill",
                "attestations": [
                    {"type": "SOC2-Type2", "uri": "https://example.com/reports/soc2.pdf", "mediaType": "application/pdf"},
                    {"type": "note", "uri": "data:text/plain;base64,aGVsbG8=", "mediaType": "text/plain",
                     "digest": "sha256:0000000000000000000000000000000000000000000000000000000000000000"}],
                "provenance": [
                    {"relation": "publishedFrom", "sourceId": "https://cdn.example/skill.zip"},
                    {"relation": "derivedFrom", "sourceId": "https://github.com/example/skill"}]}}]}),
    );
    let (code, _, err) = run(
        &t.0,
        &[
            "sign",
            "cat.json",
            "--key",
            "k.pem",
            "--digest-from",
            "https://cdn.example/=cdn",
            "--digest-from",
            "https://example.com/=site",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let doc = t.read_json("cat.json");
    let m = &doc["entries"][0]["trustManifest"];
    assert_eq!(
        m["attestations"][0]["digest"],
        format!("sha256:{}", sha256_hex(b"%PDF-1.7 report"))
    );
    assert_eq!(m["attestations"][0]["size"], 15);
    assert_eq!(
        m["attestations"][1]["digest"],
        format!("sha256:{}", sha256_hex(b"hello"))
    );
    assert_eq!(m["attestations"][1]["size"], 5);
    assert_eq!(
        m["provenance"][0]["sourceDigest"],
        format!("sha256:{}", sha256_hex(b"PK\x03\x04 skill"))
    );
    assert!(m["provenance"][1].get("sourceDigest").is_none());
    assert!(
        err.contains("/entries/0/trustManifest/attestations/0/digest"),
        "{err}"
    );
    // Read from a file, the url entry is not fetched: its manifest
    // verifies, its bytes are unbound (verified by URL they are fetched and
    // checked against the digest).
    let verify = |t: &Tmp| {
        run(
            &t.0,
            &[
                "verify",
                "cat.json",
                "--jwks",
                "k.jwks.json",
                "--allow-unsigned",
            ],
        )
    };
    let (code, out, err) = verify(&t);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("1 of 1 entries unbound"), "{out}");
    // The signature covers the filled digest: another value fails.
    let mut changed = doc.clone();
    changed["entries"][0]["trustManifest"]["provenance"][0]["sourceDigest"] =
        json!(format!("sha256:{}", sha256_hex(b"other")));
    t.write_json("cat.json", &changed);
    let (code, out, _) = verify(&t);
    assert_eq!(code, 1, "{out}");
}

/// A referenced file that is missing (or a URL leaving the directory) is
/// an error naming it, exit 2, and the catalog is left unchanged.
#[test]
fn sign_digest_from_refuses_a_missing_file_and_writes_nothing() {
    let t = Tmp::new("digest-missing");
    let (code, _, err) = run(&t.0, &["keygen", "--out", "k"]);
    assert_eq!(code, 0, "{err}");
    std::fs::create_dir_all(t.path("site")).expect("dir");
    let cat = |uri: &str| {
        json!({"specVersion": "1.0", "entries": [{
            "identifier": "urn:x", "displayName": "X", "mediaType": "application/zip",
            "url": "https://example.com/x.zip",
            "trustManifest": {"identity": "urn:x", "attestations": [
                {"type": "SOC2-Type2", "uri": uri, "mediaType": "application/pdf"}]}}]})
    };
    for (uri, says) in [
        ("https://example.com/reports/gone.pdf", "gone.pdf"),
        (
            "https://example.com/a/%2e%2e/%2e%2e/k.pem",
            "would leave the directory",
        ),
    ] {
        t.write_json("cat.json", &cat(uri));
        let before = std::fs::read(t.path("cat.json")).expect("read");
        let (code, _, err) = run(
            &t.0,
            &[
                "sign",
                "cat.json",
                "--key",
                "k.pem",
                "--digest-from",
                "site",
            ],
        );
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(says) && err.contains(uri), "{err}");
        assert!(
            err.contains("/entries/0/trustManifest/attestations/0/uri"),
            "{err}"
        );
        assert_eq!(std::fs::read(t.path("cat.json")).expect("read"), before);
    }
    // Not a catalog: the flag is refused.
    t.write_json("agent.json", &json!({"name": "x"}));
    let (code, _, err) = run(
        &t.0,
        &[
            "sign",
            "agent.json",
            "--key",
            "k.pem",
            "--digest-from",
            "site",
            "--force",
        ],
    );
    assert_eq!(code, 2, "{err}");
}

/// `sign --digest-from DIR` never follows a symbolic link out of DIR: a
/// link to a file outside (here the signing key) is refused with exit 2 and
/// the catalog left unchanged; a link to another file inside DIR is read.
#[cfg(unix)]
#[test]
fn sign_digest_from_never_follows_a_symlink_out_of_the_directory() {
    let t = Tmp::new("digest-symlink");
    let (code, _, err) = run(&t.0, &["keygen", "--out", "k"]);
    assert_eq!(code, 0, "{err}");
    std::fs::create_dir_all(t.path("site/reports")).expect("dir");
    std::fs::write(t.path("site/reports/real.pdf"), b"%PDF inside").expect("pdf");
    std::os::unix::fs::symlink(t.path("k.pem"), t.path("site/reports/key.pdf")).expect("link");
    std::os::unix::fs::symlink(t.path("site"), t.path("site/up")).expect("dir link");
    std::os::unix::fs::symlink("real.pdf", t.path("site/reports/alias.pdf")).expect("link");
    // The entry's own artifact, whose digest sign binds by default.
    std::fs::write(t.path("site/x.zip"), b"PK zip").expect("zip");
    let cat = |uri: &str| {
        json!({"specVersion": "1.0", "entries": [{
            "identifier": "urn:x", "displayName": "X", "mediaType": "application/zip",
            "url": "https://example.com/x.zip",
            "trustManifest": {"identity": "urn:x", "attestations": [
                {"type": "SOC2-Type2", "uri": uri, "mediaType": "application/pdf"}]}}]})
    };
    let sign = |t: &Tmp| {
        run(
            &t.0,
            &[
                "sign",
                "cat.json",
                "--key",
                "k.pem",
                "--digest-from",
                "site",
            ],
        )
    };
    for uri in [
        "https://example.com/reports/key.pdf",
        "https://example.com/up/reports/key.pdf",
    ] {
        t.write_json("cat.json", &cat(uri));
        let before = std::fs::read(t.path("cat.json")).expect("read");
        let (code, _, err) = sign(&t);
        assert_eq!(code, 2, "{uri}: {err}");
        assert!(err.contains("symbolic link") && err.contains(uri), "{err}");
        assert_eq!(std::fs::read(t.path("cat.json")).expect("read"), before);
    }
    t.write_json("cat.json", &cat("https://example.com/reports/alias.pdf"));
    let (code, _, err) = sign(&t);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        t.read_json("cat.json")["entries"][0]["trustManifest"]["attestations"][0]["digest"],
        format!("sha256:{}", sha256_hex(b"%PDF inside"))
    );
}

/// `verify CATALOG-FILE` with an option no catalog can honour: refused
/// (exit 2, the flag and why named), never verified as if it were absent.
/// `--ignore-key-headers` is honoured: a Trust Manifest signature whose
/// protected header offers a `jku` is refused by default and verified with
/// the given key under the flag.
#[test]
fn verify_options_a_catalog_file_cannot_honour_are_refused() {
    let jwks = format!("{ROOT}/keys/example-p256.jwks.json");
    let refused: &[(&[&str], &str)] = &[
        (&["--pin-store", "memory:"], "--pin-store"),
        (&["--require-all"], "--require-all"),
        (&["--max-age", "5m"], "--max-age and --now"),
        (&["--now", "1700000000"], "--max-age and --now"),
    ];
    for (opts, flag) in refused {
        let mut args = vec!["verify", "examples/ai-catalog.json", "--jwks", &jwks];
        args.extend_from_slice(opts);
        let (code, out, err) = run(Path::new(ROOT), &args);
        assert_eq!(code, 2, "{opts:?}: {out}{err}");
        assert!(err.contains(flag), "{opts:?}: {err}");
    }
    let (_, out, err) = run(
        Path::new(ROOT),
        &[
            "verify",
            "examples/ai-catalog.json",
            "--jwks",
            &jwks,
            "--pin-store",
            "memory:",
        ],
    );
    assert!(
        err.contains("AI Catalog") && err.contains("pin add"),
        "{out}{err}"
    );

    // The host manifest re-signed with a `jku` in its protected header.
    let key = agentsig::SigningKey::from_pem(
        &std::fs::read_to_string(format!("{ROOT}/keys/example-p256.pem")).expect("key"),
    )
    .expect("pem");
    let mut doc = example();
    let manifest = &mut doc["host"]["trustManifest"];
    let canonical = agentsig::catalog::canonical_manifest(manifest).expect("canonical");
    let header = json!({"alg": "ES256", "kid": key.kid_or_thumbprint(),
        "jku": "https://attacker.example/jwks.json", "typ": "JOSE"});
    let protected = b64::encode(header.to_string().as_bytes());
    let si = format!("{protected}.{}", b64::encode(&canonical));
    let sig = key.sign(si.as_bytes()).expect("sign");
    manifest["signature"] = json!(format!("{protected}..{}", b64::encode(&sig)));
    let t = Tmp::new("key-headers");
    t.write_json("cat.json", &doc);
    let file = t.path("cat.json");
    let file = file.to_str().expect("path");
    let (code, out, err) = run(Path::new(ROOT), &["verify", file, "--jwks", &jwks]);
    assert_eq!(code, 1, "a key header refuses the signature: {out}{err}");
    let (code, out, err) = run(
        Path::new(ROOT),
        &[
            "verify",
            file,
            "--jwks",
            &jwks,
            "--ignore-key-headers",
            "--json",
        ],
    );
    // Honoured: the host manifest verifies; the catalog stays `unsigned`
    // only for its unbound skill (a url entry read from a file).
    assert_eq!(code, 1, "--ignore-key-headers honoured: {out}{err}");
    let r: Value = serde_json::from_str(&out).expect("report");
    assert_eq!(r["verdict"], "unsigned", "{out}");
    assert_eq!(r["details"]["host"]["status"], "verified", "{out}");
}

/// A did:key identity carries its key: given other keys (--jwks), its
/// manifest still verifies with the key its DID encodes, and only with
/// it; a manifest verified by a given key says it was the given JWK Set's,
/// not "a key of" the identity it did not resolve.
#[test]
fn did_key_identities_keep_their_key_and_given_keys_are_named() {
    let t = Tmp::new("didkey");
    let (code, out, err) = run(&t.0, &["keygen", "--out", "k", "--json"]);
    assert_eq!(code, 0, "{err}");
    let rep: Value = serde_json::from_str(&out).expect("json");
    let did = rep["details"]["did_key"]
        .as_str()
        .expect("did:key")
        .to_owned();
    let (code, _, _) = run(&t.0, &["keygen", "--out", "other"]);
    assert_eq!(code, 0);
    t.write_json(
        "did.json",
        &json!({"specVersion": "1.0", "entries": [
            {"identifier": did, "displayName": "X", "mediaType": "application/zip", "data": {"x": 1}}]}),
    );
    let kid = format!("{did}#{}", &did["did:key:".len()..]);
    let (code, _, err) = run(&t.0, &["sign", "did.json", "--key", "k.pem", "--kid", &kid]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = run(
        &t.0,
        &[
            "verify",
            "did.json",
            "--jwks",
            "other.jwks.json",
            "--require-signed",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    // Signed by the other key under the did:key identity: the given key is
    // not trusted for it.
    let (code, _, err) = run(&t.0, &["sign", "did.json", "--key", "other.pem"]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = run(&t.0, &["verify", "did.json", "--jwks", "other.jwks.json"]);
    assert_eq!(code, 1, "{out}{err}");
    // Keys from --jwks are named as such.
    let jwks = format!("{ROOT}/keys/example-p256.jwks.json");
    let (_, out, err) = run(
        Path::new(ROOT),
        &[
            "verify",
            "examples/catalog/ai-catalog.json",
            "--jwks",
            &jwks,
        ],
    );
    assert!(
        err.contains("JWK Set") && err.contains("was not resolved"),
        "{out}{err}"
    );
    assert!(!err.contains("signed by a key of \"urn:"), "{err}");
    let (code, help, _) = run(Path::new(ROOT), &["verify", "--help"]);
    assert_eq!(code, 0);
    assert!(
        help.contains("did:key") && help.contains("AI Catalog"),
        "{help}"
    );
}

/// The catalog's detached JWS (`FILE.jws`, over the RFC 8785 form of the
/// whole document, draft-narvaneni-agent-uri-03 section 10.3): `sign`
/// writes it beside the catalog; verified with a trusted key it binds an
/// inline card no manifest binds (`catalog-signature`); the card changed
/// after signing is no longer bound and the JWS fails the catalog; by a key
/// not trusted it is not checked; without it the card stays unbound.
#[test]
fn the_catalog_jws_binds_inline_entries() {
    let t = Tmp::new("catjws");
    let jwks = format!("{ROOT}/keys/example-p256.jwks.json");
    let pem = format!("{ROOT}/keys/example-p256.pem");
    let mut doc = example();
    let entries = doc["entries"].as_array_mut().expect("entries");
    entries.truncate(2);
    entries.remove(0);
    entries[0]
        .as_object_mut()
        .expect("entry")
        .remove("trustManifest");
    t.write_json("c.json", &doc);
    let verify = |extra: &[&str]| {
        let mut args = vec!["verify", "c.json", "--jwks", &jwks, "--json"];
        args.extend_from_slice(extra);
        let (code, out, err) = run(&t.0, &args);
        let r: Value = serde_json::from_str(&out).unwrap_or_else(|_| panic!("{out}{err}"));
        (code, r)
    };
    // Unsigned: no JWS, the inline card unbound.
    let (code, r) = verify(&[]);
    assert_eq!(code, 1, "{r}");
    assert_eq!(r["details"]["entries"][0]["binding"], "unbound", "{r}");
    assert!(r["details"].get("catalog_signature").is_none(), "{r}");
    // `sign --host` writes c.json.jws; the card is bound by it.
    let (code, _, err) = run(&t.0, &["sign", "c.json", "--host", "--key", &pem]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("c.json.jws"), "{err}");
    let jws = std::fs::read_to_string(t.path("c.json.jws")).expect("jws");
    assert_eq!(jws.trim().split('.').nth(1), Some(""), "detached: {jws}");
    let (code, r) = verify(&[]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["verdict"], "verified", "{r}");
    assert_eq!(
        r["details"]["entries"][0]["binding"], "catalog-signature",
        "{r}"
    );
    assert_eq!(
        r["details"]["catalog_signature"]["status"], "verified",
        "{r}"
    );
    // The inline card changed after signing: not bound, and the JWS by a
    // trusted key fails the catalog.
    let signed = t.read_json("c.json");
    let mut changed = signed.clone();
    changed["entries"][0]["data"]["remotes"][0]["url"] = json!("https://attacker.example/mcp");
    t.write_json("c.json", &changed);
    let (code, r) = verify(&[]);
    assert_eq!(code, 1, "{r}");
    assert_eq!(r["details"]["entries"][0]["binding"], "unbound", "{r}");
    assert_eq!(r["details"]["catalog_signature"]["status"], "failed", "{r}");
    // A JWS by a key the verifier does not trust: not checked, unbound.
    t.write_json("c.json", &signed);
    let (code, _, _) = run(&t.0, &["keygen", "--out", "other"]);
    assert_eq!(code, 0);
    let (code, _, err) = run(&t.0, &["sign", "c.json", "--key", "other.pem"]);
    assert_eq!(code, 0, "{err}");
    let (code, r) = verify(&[]);
    assert_eq!(code, 1, "{r}");
    assert_eq!(r["details"]["entries"][0]["binding"], "unbound", "{r}");
    assert_eq!(
        r["details"]["catalog_signature"]["status"], "not-checked",
        "{r}"
    );
    // Removed: unsigned again.
    std::fs::remove_file(t.path("c.json.jws")).expect("rm");
    let (_, r) = verify(&[]);
    assert_eq!(r["details"]["entries"][0]["binding"], "unbound", "{r}");
}
