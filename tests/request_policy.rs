//! One default policy for a request in every surface: a request whose
//! content its signature does not cover (through `content-digest`, RFC 9421
//! section 7.2.8, RFC 9530 section 2) is refused by the library's
//! `HttpPolicy` default, the facade every binding sits on, and
//! `agentsig http verify`, each with the same explicit waiver
//! (`allow_uncovered_content`, `--allow-uncovered-content`). One corpus,
//! `tests/vectors/request_policy.json`, is read here and by the Python
//! (`python/tests/test_request_policy.py`) and Node
//! (`node/test/request_policy.test.js`) suites: the four surfaces give each
//! request the same verdict.
//!
//! The corpus is made by `cargo test --test request_policy -- --ignored
//! regenerate` (Ed25519 signatures are deterministic, so it is stable).

use agentsig::facade::{RequestCheck, RequestSigning, VerifierOptions};
use agentsig::httpsig::{HttpPolicy, Message};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::{SigningKey, Verifier};
use serde_json::{json, Value};

const CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/vectors/request_policy.json"
);

fn corpus() -> Value {
    serde_json::from_slice(&std::fs::read(CORPUS).unwrap()).unwrap()
}

fn key() -> SigningKey {
    SigningKey::from_ed25519_seed(&[0x42; 32])
        .unwrap()
        .with_kid("corpus-key")
}

fn headers(case: &Value) -> Vec<(String, String)> {
    case["headers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p[0].as_str().unwrap().to_owned(),
                p[1].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn body(case: &Value) -> Vec<u8> {
    case["body"].as_str().unwrap().as_bytes().to_vec()
}

/// The verdict a surface gave, as the corpus writes it: `verified`, or the
/// reason's code.
fn expected(case: &Value, waived: bool) -> String {
    case[if waived { "waived" } else { "default" }]
        .as_str()
        .unwrap()
        .to_owned()
}

fn keys() -> StaticKeys {
    StaticKeys::new().with(key().verifying_key().clone(), KeySource::Pinned)
}

#[test]
fn the_library_default_refuses_uncovered_content_unless_waived() {
    let c = corpus();
    let now = c["now"].as_i64().unwrap();
    let mut seen = 0;
    for case in c["cases"].as_array().unwrap() {
        for waived in [false, true] {
            let policy = if waived {
                HttpPolicy::new().allow_uncovered_content()
            } else {
                HttpPolicy::new()
            };
            let v = Verifier::builder(keys())
                .http(policy)
                .clock(agentsig::clock::FixedClock(now))
                .build();
            let msg: Message = agentsig::facade::request_message(
                case["method"].as_str().unwrap(),
                case["url"].as_str().unwrap(),
                &headers(case),
                body(case),
            )
            .unwrap();
            let got = match v.verify_http(&msg, None) {
                Ok(_) => "verified".to_owned(),
                Err(e) => {
                    let r = agentsig::report::Report::from_http(
                        "http verify",
                        None,
                        e.report().unwrap(),
                    );
                    r.error.unwrap().code
                }
            };
            assert_eq!(
                got,
                expected(case, waived),
                "{} waived={waived}",
                case["name"]
            );
            seen += 1;
        }
    }
    assert_eq!(seen, 2 * c["cases"].as_array().unwrap().len());
    assert!(seen >= 10);
}

#[test]
fn the_facade_default_is_the_same() {
    let c = corpus();
    for case in c["cases"].as_array().unwrap() {
        for waived in [false, true] {
            let mut o = VerifierOptions::default();
            o.keys = keys();
            o.now = c["now"].as_i64();
            o.allow_uncovered_content = waived;
            let f = o.build(None).unwrap();
            let mut r = RequestCheck::default();
            r.method = case["method"].as_str().unwrap().into();
            r.target = case["url"].as_str().unwrap().into();
            r.headers = headers(case);
            r.body = body(case);
            let got = match f.verify_request(r) {
                Ok(_) => "verified".to_owned(),
                Err(e) => e.code,
            };
            assert_eq!(
                got,
                expected(case, waived),
                "{} waived={waived}",
                case["name"]
            );
        }
    }
}

#[test]
fn the_command_line_default_is_the_same() {
    let c = corpus();
    let dir = std::env::temp_dir().join(format!("agentsig-request-policy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let jwks = dir.join("jwks.json");
    std::fs::write(&jwks, serde_json::to_vec(&c["jwks"]).unwrap()).unwrap();
    for (i, case) in c["cases"].as_array().unwrap().iter().enumerate() {
        let url = case["url"].as_str().unwrap();
        let path = url
            .splitn(4, '/')
            .nth(3)
            .map_or("/".to_owned(), |p| format!("/{p}"));
        let mut raw = format!("{} {path} HTTP/1.1\r\n", case["method"].as_str().unwrap());
        for (k, v) in headers(case) {
            raw.push_str(&format!("{k}: {v}\r\n"));
        }
        raw.push_str(&format!("Content-Length: {}\r\n\r\n", body(case).len()));
        let file = dir.join(format!("{i}.http"));
        let mut bytes = raw.into_bytes();
        bytes.extend(body(case));
        std::fs::write(&file, bytes).unwrap();
        for waived in [false, true] {
            let now = c["now"].to_string();
            let mut args = vec![
                "http",
                "verify",
                file.to_str().unwrap(),
                "--jwks",
                jwks.to_str().unwrap(),
                "--any-authority",
                "--now",
                &now,
                "--json",
            ];
            if waived {
                args.push("--allow-uncovered-content");
            }
            let o = std::process::Command::new(env!("CARGO_BIN_EXE_agentsig"))
                .args(&args)
                .output()
                .unwrap();
            let r: Value = serde_json::from_slice(&o.stdout)
                .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
            let got = if r["verified"] == true {
                "verified".to_owned()
            } else {
                r["error"]["code"].as_str().unwrap().to_owned()
            };
            assert_eq!(
                got,
                expected(case, waived),
                "{} waived={waived}: {r}",
                case["name"]
            );
            assert_eq!(o.status.code(), Some(if got == "verified" { 0 } else { 1 }));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Writes the corpus (run with `--ignored`).
#[test]
#[ignore]
fn regenerate() {
    let k = key();
    let created = 1_760_000_000;
    let sign =
        |method: &str, url: &str, h: &[(String, String)], b: &str, comps: Option<&[&str]>| {
            let mut o = RequestSigning::default();
            o.created = Some(created);
            o.components = comps.map(|c| c.iter().map(|s| s.to_string()).collect());
            agentsig::facade::sign_request(method, url, h, b.as_bytes().to_vec(), &k, &o).unwrap()
        };
    let host = |h: &str| vec![("Host".to_owned(), h.to_owned())];
    let json_h = |h: &str| {
        let mut v = host(h);
        v.push(("Content-Type".into(), "application/json".into()));
        v
    };
    let url = "https://api.example/items";
    let uncovered: &[&str] = &["@method", "@authority", "@path"];
    let mut cases = Vec::new();
    let mut case = |name: &str,
                    method: &str,
                    h: Vec<(String, String)>,
                    b: &str,
                    default: &str,
                    waived: &str| {
        cases.push(json!({
            "name": name, "method": method, "url": url, "headers": h, "body": b,
            "default": default, "waived": waived,
        }));
    };
    let b = r#"{"order":1}"#;
    case(
        "content covered by content-digest",
        "POST",
        sign("POST", url, &json_h("api.example"), b, None),
        b,
        "verified",
        "verified",
    );
    case(
        "no content, @method @authority @path",
        "GET",
        sign("GET", url, &host("api.example"), "", Some(uncovered)),
        "",
        "verified",
        "verified",
    );
    case(
        "content not covered",
        "POST",
        sign("POST", url, &json_h("api.example"), b, Some(uncovered)),
        b,
        "required-component-not-covered",
        "verified",
    );
    let h = sign("POST", url, &json_h("api.example"), b, Some(uncovered));
    case(
        "content changed, not covered",
        "POST",
        h,
        r#"{"order":999}"#,
        "required-component-not-covered",
        "verified",
    );
    let h = sign("POST", url, &json_h("api.example"), b, None);
    case(
        "content changed under content-digest",
        "POST",
        h,
        r#"{"order":999}"#,
        "content-digest",
        "content-digest",
    );
    let h = sign(
        "POST",
        url,
        &json_h("api.example"),
        b,
        Some(&["@method", "@authority", "@path", "content-type"]),
    );
    case(
        "content-type covered, content not",
        "POST",
        h,
        b,
        "required-component-not-covered",
        "verified",
    );
    let mut jwk = k.verifying_key().to_jwk().to_value();
    jwk["kid"] = json!("corpus-key");
    let doc = json!({
        "description": "Requests signed with RFC 9421 (Ed25519, keyid corpus-key, created 1760000000): each case's verdict under the default policy and under the explicit waiver allow_uncovered_content (--allow-uncovered-content): `verified`, or the report's error code. Made by tests/request_policy.rs (regenerate).",
        "now": created + 10,
        "jwks": {"keys": [jwk]},
        "cases": cases,
    });
    std::fs::write(CORPUS, serde_json::to_string_pretty(&doc).unwrap() + "\n").unwrap();
}
