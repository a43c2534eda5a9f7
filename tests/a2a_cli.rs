//! A2A Agent Cards through the command line, without any peer (docs/a2a.md):
//! `agentsig sign CARD` adds a signature to the card's `signatures` array
//! (one per `--key`, kid from the key's keygen JWK), `agentsig verify CARD`
//! finds and checks them (at least one valid, none invalid; `--require-all`
//! every one), `"signatures": []` is a clear failure, and security-relevant
//! members no signature covers are refused at signing and reported at
//! verification.

use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[path = "b64_support/mod.rs"]
mod b64;

struct Tmp(PathBuf);
impl Tmp {
    fn new(tag: &str) -> Tmp {
        let d = std::env::temp_dir().join(format!("agentsig-a2acli-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Tmp(d)
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
    fn write(&self, name: &str, v: &Value) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, serde_json::to_vec_pretty(v).unwrap()).unwrap();
        p
    }
    fn read(&self, name: &str) -> Value {
        serde_json::from_slice(&std::fs::read(self.path(name)).unwrap()).unwrap()
    }
    /// Run agentsig in this directory: (exit code, stdout, stderr).
    fn run(&self, args: &[&str]) -> (i32, String, String) {
        self.run_stdin(args, None)
    }
    fn run_stdin(&self, args: &[&str], stdin: Option<&[u8]>) -> (i32, String, String) {
        let mut child = Command::new(env!("CARGO_BIN_EXE_agentsig"))
            .args(args)
            .current_dir(&self.0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        if let Some(bytes) = stdin {
            let mut input = input;
            let _ = input.write_all(bytes);
        } else {
            drop(input);
        }
        let out = child.wait_with_output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
    fn keygen(&self, prefix: &str, kid: &str) {
        let (code, out, err) = self.run(&["keygen", "--out", prefix, "--kid", kid]);
        assert_eq!(code, 0, "{out}{err}");
    }
}
impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn example() -> Value {
    let p = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/a2a-agent-card.json");
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

fn protected(card: &Value, i: usize) -> Value {
    let p = card["signatures"][i]["protected"].as_str().unwrap();
    serde_json::from_slice(&b64::decode(p).unwrap()).unwrap()
}

fn json_report(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("not a JSON report ({e}): {out}"))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn keygen_kid_signs_embedded_and_verify_finds_the_signature() {
    let t = Tmp::new("embed");
    t.keygen("k", "publisher-1");
    t.write("card.json", &example());
    let (code, _, err) = t.run(&["sign", "card.json", "--key", "k.pem"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        !t.path("card.json.jws").exists(),
        "no detached JWS for a card"
    );
    assert!(
        t.path("card.json.headers").exists(),
        "static-host fields written"
    );
    let card = t.read("card.json");
    assert_eq!(card["signatures"].as_array().map(Vec::len), Some(1));
    // The kid keygen recorded, not the thumbprint.
    assert_eq!(
        protected(&card, 0),
        json!({"alg": "ES256", "kid": "publisher-1", "typ": "JOSE"})
    );
    assert_eq!(card["name"], "Currency Agent");

    let (code, out, err) = t.run(&["verify", "card.json", "--jwks", "k.jwks.json"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("card.json: verified (1 of 1"), "{out}");
    assert!(err.contains("signatures/0: valid: alg ES256 kid publisher-1"));

    let (code, out, _) = t.run(&["verify", "card.json", "--jwks", "k.jwks.json", "--json"]);
    assert_eq!(code, 0);
    let r = json_report(&out);
    assert_eq!(r["verdict"], "verified");
    assert_eq!(r["signatures"][0]["id"], "0");
    assert_eq!(r["signatures"][0]["kid"], "publisher-1");
    assert_eq!(r["details"]["rule"], "any");
    assert_eq!(r["details"]["signed_card"]["name"], "Currency Agent");
    assert!(r["details"]["signed_card"].get("signatures").is_none());

    // Tampering with any signed member fails, exit 1.
    let mut bad = card.clone();
    bad["skills"][0]["name"] = json!("Other");
    t.write("bad.json", &bad);
    let (code, out, _) = t.run(&["verify", "bad.json", "--jwks", "k.jwks.json", "--json"]);
    assert_eq!(code, 1, "{out}");
    let r = json_report(&out);
    assert_eq!(r["verdict"], "not-verified");
    assert_eq!(r["signatures"][0]["verdict"], "invalid");
}

#[test]
fn kid_option_wins_with_a_warning_when_it_differs() {
    let t = Tmp::new("kid");
    t.keygen("k", "publisher-1");
    t.write("card.json", &example());
    let (code, _, err) = t.run(&["sign", "card.json", "--key", "k.pem", "--kid", "other"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("warning") && err.contains("publisher-1") && err.contains("other"),
        "{err}"
    );
    assert_eq!(protected(&t.read("card.json"), 0)["kid"], "other");
    // Any descriptor, not only cards: the detached JWS carries the recorded kid.
    let agent = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/agent.json");
    std::fs::copy(agent, t.path("agent.json")).unwrap();
    let (code, _, err) = t.run(&["sign", "agent.json", "--key", "k.pem", "--no-headers"]);
    assert_eq!(code, 0, "{err}");
    let jws = std::fs::read_to_string(t.path("agent.json.jws")).unwrap();
    let header = jws.split('.').next().unwrap();
    let header: Value = serde_json::from_slice(&b64::decode(header).unwrap()).unwrap();
    assert_eq!(header["kid"], "publisher-1");
    let (code, out, err) = t.run(&["verify", "agent.json", "--jwks", "k.jwks.json"]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn two_keys_give_two_signatures_and_require_all_needs_every_one() {
    let t = Tmp::new("two");
    t.keygen("a", "key-a");
    t.keygen("b", "key-b");
    t.write("card.json", &example());
    let (code, _, err) = t.run(&["sign", "card.json", "--key", "a.pem", "--key", "b.pem"]);
    assert_eq!(code, 0, "{err}");
    let card = t.read("card.json");
    assert_eq!(card["signatures"].as_array().map(Vec::len), Some(2));
    assert_eq!(protected(&card, 0)["kid"], "key-a");
    assert_eq!(protected(&card, 1)["kid"], "key-b");

    // Only key a trusted: verified by the default rule, not by --require-all.
    let (code, out, _) = t.run(&["verify", "card.json", "--jwks", "a.jwks.json"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("1 of 2"), "{out}");
    let (code, out, _) = t.run(&[
        "verify",
        "card.json",
        "--jwks",
        "a.jwks.json",
        "--require-all",
        "--json",
    ]);
    assert_eq!(code, 1, "{out}");
    let r = json_report(&out);
    assert_eq!(r["details"]["rule"], "all");
    assert_eq!(r["signatures"][1]["verdict"], "no-trusted-key");
    let (code, out, _) = t.run(&[
        "verify",
        "card.json",
        "--jwks",
        "a.jwks.json",
        "--jwks",
        "b.jwks.json",
        "--require-all",
    ]);
    assert_eq!(code, 0, "{out}");

    // One bad signature by a trusted key fails both rules.
    let mut bad = card.clone();
    let sig = bad["signatures"][1]["signature"]
        .as_str()
        .unwrap()
        .to_owned();
    let flipped = if sig.starts_with('A') { "B" } else { "A" };
    bad["signatures"][1]["signature"] = json!(format!("{flipped}{}", &sig[1..]));
    t.write("bad.json", &bad);
    for extra in [&[][..], &["--require-all"][..]] {
        let mut args = vec![
            "verify",
            "bad.json",
            "--jwks",
            "a.jwks.json",
            "--jwks",
            "b.jwks.json",
        ];
        args.extend_from_slice(extra);
        let (code, out, err) = t.run(&args);
        assert_eq!(code, 1, "{extra:?}: {out}{err}");
        assert!(err.contains("signatures/1: INVALID"), "{err}");
    }
}

#[test]
fn no_signatures_is_a_clear_failure() {
    let t = Tmp::new("none");
    t.keygen("k", "k1");
    let mut card = example();
    card["signatures"] = json!([]);
    t.write("empty.json", &card);
    t.write("unsigned.json", &example());
    for f in ["empty.json", "unsigned.json"] {
        let (code, out, err) = t.run(&["verify", f, "--jwks", "k.jwks.json"]);
        assert_eq!(code, 1, "{f}: {out}{err}");
        assert!(err.contains("no signatures"), "{err}");
        let (code, out, _) = t.run(&["verify", f, "--jwks", "k.jwks.json", "--json"]);
        assert_eq!(code, 1);
        let r = json_report(&out);
        assert_eq!(r["verdict"], "not-verified");
        assert_eq!(r["error"]["code"], "a2a.no-signatures");
    }
}

#[test]
fn uncovered_v03_members_are_refused_at_signing_and_reported_at_verification() {
    let t = Tmp::new("v03");
    t.keygen("k", "k1");
    let mut card = example();
    card["url"] = json!("https://elsewhere.example/a2a");
    card["preferredTransport"] = json!("JSONRPC");
    let before = serde_json::to_vec_pretty(&card).unwrap();
    t.write("card.json", &card);
    let (code, _, err) = t.run(&["sign", "card.json", "--key", "k.pem"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("/url")
            && err.contains("/preferredTransport")
            && err.contains("--allow-uncovered"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(t.path("card.json")).unwrap(),
        before,
        "nothing written when refused"
    );
    let (code, _, err) = t.run(&[
        "sign",
        "card.json",
        "--key",
        "k.pem",
        "--allow-uncovered",
        "--out",
        "signed.json",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("/url"), "the removal is said: {err}");
    let signed = t.read("signed.json");
    assert!(signed.get("url").is_none(), "written in its normal form");
    assert_eq!(std::fs::read(t.path("card.json")).unwrap(), before);

    // A server (or an attacker) adds the v0.3 members back: still valid,
    // but each one is reported as unsigned, in text and JSON.
    let mut served = signed.clone();
    served["url"] = json!("https://attacker.example/a2a");
    served["protocolVersion"] = json!("0.3.0");
    t.write("served.json", &served);
    let (code, out, err) = t.run(&["verify", "served.json", "--jwks", "k.jwks.json"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        err.contains("warning: /url (v0.3 compatibility member) is not covered"),
        "{err}"
    );
    let (_, out, _) = t.run(&["verify", "served.json", "--jwks", "k.jwks.json", "--json"]);
    let r = json_report(&out);
    let warned: Vec<&str> = r["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["code"] == "a2a.uncovered-security" && c["severity"] == "warning")
        .filter_map(|c| c["message"].as_str())
        .collect();
    assert!(warned.iter().any(|m| m.starts_with("/url ")), "{warned:?}");
    assert!(warned.iter().any(|m| m.starts_with("/protocolVersion ")));
    assert!(r["details"]["uncovered"]
        .as_array()
        .unwrap()
        .iter()
        .any(|u| u["pointer"] == "/url" && u["security"] == true));
    assert!(r["details"]["signed_card"].get("url").is_none());
}

#[test]
fn v03_card_is_signed_in_its_v1_form_with_the_interfaces_covered() {
    let t = Tmp::new("v03only");
    t.keygen("k", "k1");
    let card = json!({
        "name": "Legacy Agent",
        "description": "v0.3 card",
        "version": "1.0.0",
        "url": "https://legacy.example.com/a2a",
        "preferredTransport": "JSONRPC",
        "protocolVersion": "0.3.0",
        "capabilities": {"streaming": true},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}]
    });
    t.write("card.json", &card);
    let (code, _, err) = t.run(&["sign", "card.json", "--key", "k.pem"]);
    assert_eq!(code, 0, "{err}");
    let signed = t.read("card.json");
    assert!(signed.get("url").is_none());
    assert_eq!(
        signed["supportedInterfaces"],
        json!([{"url": "https://legacy.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "0.3.0"}])
    );
    let (code, out, err) = t.run(&["verify", "card.json", "--jwks", "k.jwks.json"]);
    assert_eq!(code, 0, "{out}{err}");
    let mut bad = signed.clone();
    bad["supportedInterfaces"][0]["url"] = json!("https://attacker.example/a2a");
    t.write("bad.json", &bad);
    let (code, _, _) = t.run(&["verify", "bad.json", "--jwks", "k.jwks.json"]);
    assert_eq!(code, 1);
}

#[test]
fn detached_flag_and_standard_streams() {
    let t = Tmp::new("detached");
    t.keygen("k", "k1");
    let original = serde_json::to_vec_pretty(&example()).unwrap();
    std::fs::write(t.path("card.json"), &original).unwrap();
    let (code, _, err) = t.run(&["sign", "card.json", "--key", "k.pem", "--detached"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(t.path("card.json")).unwrap(), original);
    assert!(t.path("card.json.jws").exists());
    // No `signatures` member and a FILE.jws beside it: the detached JWS.
    let (code, out, err) = t.run(&["verify", "card.json", "--jwks", "k.jwks.json"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("canonical sha256"), "detached path: {err}");

    // Standard input to standard output.
    let (code, out, err) = t.run_stdin(
        &["sign", "-", "--key", "k.pem", "--format", "a2a"],
        Some(&original),
    );
    assert_eq!(code, 0, "{err}");
    let signed: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(signed["signatures"].as_array().map(Vec::len), Some(1));
    let (code, out, err) = t.run_stdin(
        &["verify", "-", "--jwks", s(&t.path("k.jwks.json"))],
        Some(out.as_bytes()),
    );
    assert_eq!(code, 0, "{out}{err}");
}

/// `sign CARD` writes CARD.headers over the signed card's bytes; a response
/// saved from a static host serving both verifies with `verify CARD
/// --response`, which checks the card's embedded signatures too.
#[test]
fn saved_response_of_a_signed_card_checks_both_signatures() {
    let t = Tmp::new("response");
    t.keygen("k", "k1");
    t.write("card.json", &example());
    let (code, _, err) = t.run(&["sign", "card.json", "--key", "k.pem"]);
    assert_eq!(code, 0, "{err}");
    let body = std::fs::read(t.path("card.json")).unwrap();
    let headers = std::fs::read_to_string(t.path("card.json.headers")).unwrap();
    let saved = |body: &[u8]| {
        let mut resp = b"HTTP/1.1 200 OK\r\n".to_vec();
        for l in headers.lines().filter(|l| l.contains(": ")) {
            resp.extend_from_slice(l.as_bytes());
            resp.extend_from_slice(b"\r\n");
        }
        resp.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
        resp.extend_from_slice(body);
        resp
    };
    std::fs::write(t.path("resp.http"), saved(&body)).unwrap();
    let (code, out, err) = t.run(&[
        "verify",
        "card.json",
        "--response",
        "resp.http",
        "--jwks",
        "k.jwks.json",
        "--json",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let r = json_report(&out);
    let kinds: Vec<&str> = r["signatures"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["kind"].as_str())
        .collect();
    assert_eq!(kinds, vec!["http-message-signature", "jws"], "{r}");
    assert!(r["details"]["checked"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c == "the A2A card's embedded signatures"));

    // The card file's embedded signature broken: it is no longer the
    // response body, which is named among the failures; the verdict on
    // the served bytes is `verify URL`'s, and the file's broken signature
    // is listed.
    let mut bad = t.read("card.json");
    bad["signatures"][0]["signature"] = json!("AAAA");
    t.write("card.json", &bad);
    let (code, out, _) = t.run(&[
        "verify",
        "card.json",
        "--response",
        "resp.http",
        "--jwks",
        "k.jwks.json",
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("failed: ") && out.contains("signatures/0: INVALID"),
        "{out}"
    );
    assert!(
        out.contains("response body is the bytes of card.json"),
        "{out}"
    );
}

#[test]
fn resigning_a_converted_v03_card_warns_about_its_existing_signatures() {
    let t = Tmp::new("resign");
    t.keygen("k", "k1");
    let card = json!({
        "name": "Legacy Agent",
        "description": "v0.3 card",
        "version": "1.0.0",
        "url": "https://legacy.example.com/a2a",
        "capabilities": {},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}],
        "signatures": [{"protected": "eyJhbGciOiJFUzI1NiJ9", "signature": "AA"}]
    });
    t.write("card.json", &card);
    let (code, _, err) = t.run(&["sign", "card.json", "--key", "k.pem"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("1 existing signature(s) are kept"), "{err}");
    let signed = t.read("card.json");
    assert_eq!(signed["signatures"].as_array().map(Vec::len), Some(2));
    // A v1.0 card already in its normal form: no warning.
    t.write("v1.json", &example());
    let (code, _, err) = t.run(&["sign", "v1.json", "--key", "k.pem"]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = t.run(&["sign", "v1.json", "--key", "k.pem"]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("existing signature"), "{err}");
    // Signed again by the same key: its earlier signature is replaced.
    assert_eq!(
        t.read("v1.json")["signatures"].as_array().map(Vec::len),
        Some(1)
    );
}

/// The publisher's everyday loop: edit the card, sign it again. The same
/// key's earlier signature is replaced (and said so), so the card verifies;
/// a kept signature by another key that no longer covers the edited card is
/// refused with the fixes named; `--replace` drops every old signature.
#[test]
fn edit_then_resign_replaces_the_earlier_signature() {
    let t = Tmp::new("edit");
    t.keygen("a", "key-a");
    t.keygen("b", "key-b");
    let ja: Value = t.read("a.jwks.json");
    let jb: Value = t.read("b.jwks.json");
    let both = json!({"keys": [ja["keys"][0].clone(), jb["keys"][0].clone()]});
    t.write("ab.jwks.json", &both);
    t.write("card.json", &example());
    let (code, _, err) = t.run(&["sign", "card.json", "--key", "a.pem"]);
    assert_eq!(code, 0, "{err}");

    // Edit, sign again with the same key: one signature, verified.
    let mut card = t.read("card.json");
    card["description"] = json!("Edited after signing");
    t.write("card.json", &card);
    let (code, _, err) = t.run(&["sign", "card.json", "--key", "a.pem"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("replaced 1 earlier signature(s) (signed again by the same key): signatures/0 (kid key-a)"),
        "{err}"
    );
    let card = t.read("card.json");
    assert_eq!(card["signatures"].as_array().map(Vec::len), Some(1));
    assert_eq!(card["description"], "Edited after signing");
    let (code, out, err) = t.run(&["verify", "card.json", "--jwks", "a.jwks.json"]);
    assert_eq!(code, 0, "{out}{err}");

    // A second signer, unchanged content: kept, noted.
    let (code, _, err) = t.run(&["sign", "card.json", "--key", "b.pem"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("kept 1 signature(s) by other keys: signatures/0 (kid key-a)"),
        "{err}"
    );
    let (code, out, err) = t.run(&["verify", "card.json", "--jwks", "ab.jwks.json"]);
    assert_eq!(code, 0, "{out}{err}");

    // Edit again and sign with one key only: the other key's signature
    // would be invalid under a trusted key, so nothing is written.
    let mut card = t.read("card.json");
    card["description"] = json!("Edited twice");
    t.write("card.json", &card);
    let (code, _, err) = t.run(&["sign", "card.json", "--key", "a.pem", "--json"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("signatures/1 (kid key-b)") && err.contains("--replace"),
        "{err}"
    );
    assert_eq!(t.read("card.json"), card, "nothing written");

    // Both keys at once: both replaced, the card verifies.
    let (code, _, err) = t.run(&["sign", "card.json", "--key", "a.pem", "--key", "b.pem"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        t.read("card.json")["signatures"].as_array().map(Vec::len),
        Some(2)
    );
    let (code, out, err) = t.run(&[
        "verify",
        "card.json",
        "--jwks",
        "ab.jwks.json",
        "--require-all",
    ]);
    assert_eq!(code, 0, "{out}{err}");

    // --replace: every old signature dropped, one new one.
    let (code, _, err) = t.run(&["sign", "card.json", "--key", "b.pem", "--replace"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("replaced 2 earlier signature(s) (--replace)"),
        "{err}"
    );
    let card = t.read("card.json");
    assert_eq!(card["signatures"].as_array().map(Vec::len), Some(1));
    assert_eq!(protected(&card, 0)["kid"], "key-b");
}

/// A v1.0 card requiring bearer auth without scopes, the most common shape.
fn bearer_v10() -> Value {
    let mut card = example();
    card["securitySchemes"] = json!({"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}});
    card["securityRequirements"] = json!([{"schemes": {"bearer": {"list": []}}}]);
    card.as_object_mut().unwrap().remove("security");
    card
}

#[test]
fn bearer_without_scopes_signs_in_both_card_shapes_and_verifies() {
    // An empty scope list equals no list (proto3; the A2A SDKs' normal
    // form): signing must not refuse it, the pointer names what the author
    // wrote, and the requirement stays in the written card, as the Python
    // SDK serves it.
    let t = Tmp::new("bearer");
    t.keygen("k", "k1");
    let mut v03 = bearer_v10();
    let o = v03.as_object_mut().unwrap();
    o.remove("securityRequirements");
    o.insert(
        "securitySchemes".into(),
        json!({"bearer": {"type": "http", "scheme": "bearer"}}),
    );
    o.insert("security".into(), json!([{"bearer": []}]));
    for (name, card, pointer) in [
        (
            "v10.json",
            bearer_v10(),
            "/securityRequirements/0/schemes/bearer/list",
        ),
        ("v03.json", v03, "/security/0/bearer"),
    ] {
        t.write(name, &card);
        let (code, out, err) = t.run(&["sign", name, "--key", "k.pem"]);
        assert_eq!(code, 0, "{name}: {out}{err}");
        assert!(
            err.contains(&format!(
                "note: member {pointer} (scheme required without scopes"
            )),
            "{name}: {err}"
        );
        // It names what was written, and where.
        assert!(
            err.contains(&format!("written to {name} as {{\"bearer\": {{}}}} in securityRequirements, which clients read, and signed as absent; the scheme itself, /securitySchemes/bearer, is signed")),
            "{name}: {err}"
        );
        assert!(!err.contains("warning"), "{name}: {err}");
        let signed = t.read(name);
        assert_eq!(
            signed["securityRequirements"],
            json!([{"schemes": {"bearer": {}}}]),
            "{name}: the requirement is kept"
        );
        let (code, out, err) = t.run(&["verify", name, "--jwks", "k.jwks.json"]);
        assert_eq!(code, 0, "{name}: {out}{err}");
        assert!(!err.contains("warning"), "{name}: {err}");
    }
}

#[test]
fn a_refusal_suggests_a_fix_that_works() {
    let t = Tmp::new("fix");
    t.keygen("k", "k1");
    let mut card = bearer_v10();
    card["securitySchemes"]["m"] = json!({"mtlsSecurityScheme": {}});
    t.write("card.json", &card);
    let (code, _, err) = t.run(&["sign", "card.json", "--key", "k.pem"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("/securitySchemes/m/mtlsSecurityScheme") && err.contains("\"description\""),
        "{err}"
    );
    card["securitySchemes"]["m"] =
        json!({"mtlsSecurityScheme": {"description": "client certificate"}});
    t.write("card.json", &card);
    let (code, _, err) = t.run(&["sign", "card.json", "--key", "k.pem"]);
    assert_eq!(code, 0, "the suggested fix signs: {err}");
}

#[test]
fn v03_compat_members_are_added_after_signing_and_reported_unsigned() {
    let t = Tmp::new("compat");
    t.keygen("k", "k1");
    let mut card = bearer_v10();
    card["supportedInterfaces"] = json!([
        {"url": "https://a.example/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "0.3.0"},
        {"url": "https://a.example/grpc", "protocolBinding": "GRPC", "protocolVersion": "0.3.0"}
    ]);
    // A card served with both forms is re-signed, not refused: its v0.3
    // members are rebuilt from the signed v1.0 ones.
    card["url"] = json!("https://stale.example/a2a");
    t.write("card.json", &card);
    let (code, _, err) = t.run(&["sign", "card.json", "--key", "k.pem"]);
    assert_eq!(
        code, 1,
        "without the option a card with both forms is refused: {err}"
    );
    assert!(err.contains("--a2a-v03-compat"), "{err}");
    let (code, _, err) = t.run(&[
        "sign",
        "card.json",
        "--key",
        "k.pem",
        "--a2a-v03-compat",
        "--out",
        "signed.json",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("added after signing: no signature covers them"),
        "{err}"
    );
    let signed = t.read("signed.json");
    assert_eq!(signed["url"], "https://a.example/a2a");
    assert_eq!(signed["preferredTransport"], "JSONRPC");
    assert_eq!(signed["protocolVersion"], "0.3.0");
    assert_eq!(
        signed["additionalInterfaces"],
        json!([{"transport": "GRPC", "url": "https://a.example/grpc"}])
    );
    assert_eq!(signed["security"], json!([{"bearer": []}]));
    assert_eq!(signed["securitySchemes"]["bearer"]["type"], "http");
    let (code, out, err) = t.run(&["verify", "signed.json", "--jwks", "k.jwks.json"]);
    assert_eq!(code, 0, "{out}{err}");
    for m in [
        "/url",
        "/preferredTransport",
        "/protocolVersion",
        "/security",
    ] {
        assert!(
            err.contains(&format!(
                "warning: {m} (v0.3 compatibility member) is not covered"
            )),
            "{m}: {err}"
        );
    }
    // The compat members are not signed: changing one keeps the signature valid
    // and the warning; changing a signed member breaks it.
    let mut moved = signed.clone();
    moved["url"] = json!("https://attacker.example/a2a");
    t.write("moved.json", &moved);
    let (code, _, err) = t.run(&["verify", "moved.json", "--jwks", "k.jwks.json"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("warning: /url"), "{err}");
    let mut tampered = signed;
    tampered["supportedInterfaces"][0]["url"] = json!("https://attacker.example/a2a");
    t.write("tampered.json", &tampered);
    let (code, _, _) = t.run(&["verify", "tampered.json", "--jwks", "k.jwks.json"]);
    assert_eq!(code, 1);
    // No interface a v0.3 client can use: a clear refusal.
    let mut v1only = bearer_v10();
    v1only["supportedInterfaces"][0]["protocolVersion"] = json!("1.0");
    t.write("v1only.json", &v1only);
    let (code, _, err) = t.run(&["sign", "v1only.json", "--key", "k.pem", "--a2a-v03-compat"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("no supportedInterfaces entry has a v0.3 protocolVersion"),
        "{err}"
    );
    // Nothing to add the members to with --detached: a usage error, not ignored.
    let (code, _, err) = t.run(&[
        "sign",
        "card.json",
        "--key",
        "k.pem",
        "--a2a-v03-compat",
        "--detached",
    ]);
    assert_eq!(code, 2, "{err}");
}
