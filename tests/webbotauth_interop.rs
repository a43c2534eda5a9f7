//! Web Bot Auth interop with the npm implementations (tests/interop/webbotauth_npm.mjs):
//! `web-bot-auth` 0.1.3 (Cloudflare; it bundles `http-message-sig` 0.2.0)
//! and the standalone `http-message-sig` 0.3, both ways. Where a peer
//! departs from RFC 9421 the test shows agentsig refusing it and says why.
//!
//! Needs `node` and the packages in tests/interop/node_modules; skipped with
//! a notice when missing unless `AGENTSIG_REQUIRE_INTEROP=1` (CI).

use agentsig::httpsig::Message;
use agentsig::webbotauth::directory::{directory_body, parse_key_set, verify_directory};
use agentsig::webbotauth::{
    resolve_agent_url, sign_message, Policy, SignOptions, StaticDirectory, Status,
    WebBotAuthVerifier, WELL_KNOWN_PATH,
};
use agentsig::{Algorithm, LoadOptions, SigningKey};
use serde_json::{json, Value};
use std::io::Write;
use std::process::{Command, Stdio};

const THUMB: &str = "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";
const CREATED: i64 = 1_800_000_000;
const INSTALL: &str = "npm install --no-save --prefix tests/interop jose@6 @a2a-js/sdk@1.3 web-bot-auth@0.1 http-message-sig@0.3";

fn jwk() -> Value {
    serde_json::from_slice(&std::fs::read("keys/rfc9421/test-key-ed25519.jwk.json").unwrap())
        .unwrap()
}

fn ours() -> SigningKey {
    let data = std::fs::read("keys/rfc9421/test-key-ed25519.pem").unwrap();
    agentsig::keys::load_signing_key(
        &data,
        &LoadOptions {
            alg: Some(Algorithm::Ed25519),
            ..Default::default()
        },
    )
    .unwrap()
}

/// Run the node peer; `None` when node or the packages are missing (and
/// interop is not required).
fn node(ops: Vec<Value>) -> Option<Vec<Value>> {
    let required = std::env::var("AGENTSIG_REQUIRE_INTEROP").is_ok_and(|v| v == "1");
    let skip = |why: &str| {
        if required {
            panic!("Web Bot Auth npm interop is required (AGENTSIG_REQUIRE_INTEROP=1) but {why}; install with: {INSTALL}");
        }
        let _ = writeln!(
            std::io::stderr().lock(),
            "SKIPPED Web Bot Auth npm interop: {why} (install: {INSTALL})"
        );
        None
    };
    let child = Command::new("node")
        .arg("webbotauth_npm.mjs")
        .current_dir("tests/interop")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        return skip("node is missing");
    };
    let input = json!({ "ops": ops }).to_string();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    if out.status.code() == Some(3) {
        return skip("the npm packages are missing");
    }
    assert!(
        out.status.success(),
        "node: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    Some(v["results"].as_array().unwrap().clone())
}

fn request(signature_agent: &str, r: &Value) -> Message {
    let raw = format!(
        "GET /path HTTP/1.1\r\nHost: example.com\r\nSignature-Agent: {signature_agent}\r\nSignature-Input: {}\r\nSignature: {}\r\n\r\n",
        r["signature_input"].as_str().unwrap(),
        r["signature"].as_str().unwrap()
    );
    Message::parse(raw.as_bytes(), "https").unwrap()
}

fn directory() -> StaticDirectory {
    StaticDirectory::new().with(
        &format!("https://signature-agent.test{WELL_KNOWN_PATH}"),
        vec![ours().verifying_key().clone()],
    )
}

fn verify_here(m: &Message) -> agentsig::webbotauth::Report {
    WebBotAuthVerifier::new(test_key_policy()).verify(m, &directory(), CREATED + 10)
}

const DICT: &str = "sig1=\"https://signature-agent.test\"";
const LEGACY: &str = "\"https://signature-agent.test\"";

#[test]
fn signed_by_npm_verified_by_agentsig() {
    let base = json!({"url": "https://example.com/path", "created": CREATED,
        "expires": CREATED + 300, "jwk": jwk()});
    let with = |extra: Value| {
        let mut v = base.clone();
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        v
    };
    let Some(r) = node(vec![
        with(
            json!({"op": "hms_sign", "signature_agent": DICT, "label": "sig1",
            "nonce": "bm9uY2U=", "keyid": THUMB}),
        ),
        with(json!({"op": "sign", "signature_agent": LEGACY})),
        with(json!({"op": "sign", "signature_agent": DICT, "member": "sig1"})),
        with(json!({"op": "sign", "signature_agent": DICT})),
    ]) else {
        return;
    };

    // http-message-sig 0.3, Dictionary form, member covered: verified.
    let rep = verify_here(&request(DICT, &r[0]));
    assert_eq!(rep.status(), Status::Verified, "{:?}", rep.first_error());
    assert_eq!(
        rep.verified().unwrap().agent,
        "https://signature-agent.test"
    );

    // web-bot-auth 0.1.3 with the legacy sf-string and its default
    // components ("@authority" "signature-agent"): verified (legacy form).
    let rep = verify_here(&request(LEGACY, &r[1]));
    assert_eq!(rep.status(), Status::Verified, "{:?}", rep.first_error());
    assert!(rep.verified().unwrap().legacy);

    // web-bot-auth 0.1.3 asked to cover the member: its bundled
    // http-message-sig 0.2.0 signs the whole field value on the
    // "signature-agent";key="sig1" line, where RFC 9421 section 2.1.2 puts
    // the member's value; the signature base differs, so it is refused.
    let rep = verify_here(&request(DICT, &r[2]));
    assert_eq!(rep.status(), Status::Invalid);
    assert_eq!(rep.first_error().unwrap().code(), "bad-signature");

    // web-bot-auth 0.1.3's defaults with the Dictionary form cover the whole
    // field, not a member: no agent can be attributed (section 5.4).
    let rep = verify_here(&request(DICT, &r[3]));
    assert_eq!(rep.status(), Status::Invalid);
    assert_eq!(
        rep.first_error().unwrap().code(),
        "signature-agent-not-covered"
    );
}

#[test]
fn signed_by_agentsig_verified_by_npm() {
    let now = agentsig::clock::Clock::now(&agentsig::clock::SystemClock);
    let mut m =
        Message::parse(b"GET /path HTTP/1.1\r\nHost: example.com\r\n\r\n", "https").unwrap();
    let mut o = SignOptions::new("https://signature-agent.test", now);
    o.method_and_path = false;
    sign_message(&mut m, &ours(), &o).unwrap();
    let headers: serde_json::Map<String, Value> =
        ["signature-agent", "signature-input", "signature"]
            .iter()
            .map(|n| {
                let v = m.field_lines(n, false).next().unwrap();
                (
                    n.to_string(),
                    Value::String(String::from_utf8(v.to_vec()).unwrap()),
                )
            })
            .collect();
    let mut tampered = headers.clone();
    tampered.insert(
        "signature-agent".into(),
        json!("sig1=\"https://evil.test\""),
    );
    let op = |h: &serde_json::Map<String, Value>, which: &str| {
        json!({"op": which, "url": "https://example.com/path", "headers": h,
            "jwk": jwk(), "label": "sig1", "now": now + 1})
    };
    let Some(r) = node(vec![
        op(&headers, "hms_verify"),
        op(&tampered, "hms_verify"),
        op(&headers, "verify"),
    ]) else {
        return;
    };
    // http-message-sig 0.3 verifies it; the keyid is the key's thumbprint
    // (the npm verifiers leave that check to the caller).
    assert_eq!(r[0]["ok"], true, "{}", r[0]);
    assert_eq!(r[0]["keyid"], THUMB);
    assert_eq!(r[1]["ok"], false, "a changed member must not verify");
    // web-bot-auth 0.1.3 reads "signature-agent";key="sig1" as the whole
    // field (see above), so it cannot verify a conforming member signature.
    assert_eq!(r[2]["ok"], false, "{}", r[2]);
}

/// npm `directoryResponseHeaders` covers only `"@authority";req`, without
/// the `content-digest` the current draft requires (Appendix B.1): agentsig
/// does not count it as a directory proof (nor refuses the keys for it).
#[test]
fn npm_directory_proof_is_the_older_form() {
    let body = String::from_utf8(directory_body(&[ours().verifying_key()])).unwrap();
    let Some(r) = node(vec![json!({"op": "directory",
        "url": format!("https://signature-agent.test{WELL_KNOWN_PATH}"), "body": body,
        "created": CREATED, "expires": CREATED + 300, "jwk": jwk()})])
    else {
        return;
    };
    let input = r[0]["signature_input"].as_str().unwrap();
    assert!(
        input.starts_with("binding0=(\"@authority\";req);"),
        "{input}"
    );
    let url = resolve_agent_url("https://signature-agent.test", None).unwrap();
    let set = parse_key_set(&url, body.as_bytes()).unwrap();
    let headers = vec![
        ("Signature-Input".to_owned(), input.to_owned()),
        (
            "Signature".to_owned(),
            r[0]["signature"].as_str().unwrap().to_owned(),
        ),
    ];
    let labels = verify_directory(
        &set,
        "signature-agent.test",
        &headers,
        body.as_bytes(),
        CREATED + 10,
    )
    .unwrap();
    assert!(labels.is_empty());
}

/// The RFC 9421 test key signs these requests; the default policy refuses
/// it (section 5.2), so the peers' signatures are checked with that rule off.
fn test_key_policy() -> Policy {
    let mut p = Policy::default();
    p.reject_test_keys = false;
    p
}
