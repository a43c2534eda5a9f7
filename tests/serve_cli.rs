//! `agentsig serve examples/` as the README shows it: the binary on a free
//! loopback port, a signed descriptor fetched and verified with the served
//! JWK Set, then SIGTERM: a graceful stop with exit status 0.

use agentsig::httpsig::HttpPolicy;
use agentsig::keys::{load_verifying_keys, LoadOptions};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::verifier::VerifyHttp;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

fn get(addr: &str, path: &str) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let split = out.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8(out[..split].to_vec()).unwrap();
    let body = out[split + 4..].to_vec();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let fields = lines
        .map(|l| {
            let (n, v) = l.split_once(':').unwrap();
            (n.to_owned(), v.trim().to_owned())
        })
        .collect();
    (status, fields, body)
}

/// The address `serve` logs, from its standard error. The RFC 9421 test key
/// these tests serve with is a published key: the warning about it comes
/// first.
fn listen_address(err: &mut impl BufRead) -> String {
    let mut warned = false;
    for _ in 0..8 {
        let mut line = String::new();
        if err.read_line(&mut line).unwrap() == 0 {
            break;
        }
        warned |= line.contains("published test key");
        if let Some(addr) = line
            .split("http://")
            .nth(1)
            .and_then(|s| s.split('/').next())
        {
            assert!(warned, "serving with a published test key warns first");
            return addr.to_owned();
        }
    }
    panic!("no address logged");
}

/// `agentsig serve DIR EXTRA...` with the RFC 9421 test key on a free
/// loopback port, and its standard error.
fn spawn_serve(
    dir: &std::path::Path,
    extra: &[&str],
) -> (std::process::Child, BufReader<std::process::ChildStderr>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentsig"))
        .arg("serve")
        .arg(dir)
        .args(["--key", "keys/rfc9421/test-key-ecc-p256.pem"])
        .args(extra)
        .args(["--listen", "127.0.0.1:0", "--reload-interval", "0"])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let err = BufReader::new(child.stderr.take().unwrap());
    (child, err)
}

/// SIGTERM, and a graceful stop.
fn stop(mut child: std::process::Child) {
    let pid = child.id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    assert!(child.wait().unwrap().success());
}

#[cfg(unix)]
#[test]
fn serve_examples_signs_and_stops_gracefully() {
    let (child, mut err) = spawn_serve(std::path::Path::new("examples/"), &[]);
    let addr = listen_address(&mut err);
    let (st, _, jwks) = get(&addr, "/.well-known/jwks.json");
    assert_eq!(st, 200);
    let mut keys = StaticKeys::new();
    for k in load_verifying_keys(&jwks, &LoadOptions::default()).unwrap() {
        keys = keys.with(k, KeySource::Pinned);
    }
    let v = Verifier::builder(keys)
        .http(HttpPolicy::descriptor_response())
        .build();
    for path in ["/.well-known/agents.json", "/agent.json", "/woa.json"] {
        let (st, fields, body) = get(&addr, path);
        assert_eq!(st, 200, "{path}");
        let mut b = http::Response::builder().status(st);
        for (n, val) in &fields {
            b = b.header(n.as_str(), val.as_str());
        }
        let res = b.body(body).unwrap();
        let rep = res.verify_signature(&v).unwrap();
        assert!(rep.all_valid(), "{path}");
    }
    stop(child);
    let mut rest = String::new();
    err.read_to_string(&mut rest).unwrap();
    assert!(
        rest.contains("method=GET path=/agent.json status=200 signed=true"),
        "{rest}"
    );
    assert!(rest.contains("stopped"), "{rest}");
}

/// `agentsig serve --sign-cards`: the served A2A Agent Card carries an
/// embedded signature that agentsig's `a2a::verify_card` and the A2A
/// Python SDK (tests/interop/a2a_sdk.py; required under
/// AGENTSIG_REQUIRE_INTEROP=1) verify, and the RFC 9421 response signature
/// covers the signed card's bytes.
#[cfg(unix)]
#[test]
fn serve_sign_cards_serves_sdk_verifiable_cards() {
    let dir = std::env::temp_dir().join(format!("agentsig-serve-cards-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy("examples/a2a-agent-card.json", dir.join("card.json")).unwrap();
    let (child, mut err) = spawn_serve(&dir, &["--sign-cards"]);
    let addr = listen_address(&mut err);
    let (_, _, jwks) = get(&addr, "/.well-known/jwks.json");
    let mut keys = StaticKeys::new();
    for k in load_verifying_keys(&jwks, &LoadOptions::default()).unwrap() {
        keys = keys.with(k, KeySource::Pinned);
    }
    let (st, fields, body) = get(&addr, "/.well-known/agent-card.json");
    assert_eq!(st, 200);
    let (st2, _, body2) = get(&addr, "/card.json");
    assert_eq!((st2, &body2), (200, &body), "signed once per file version");
    // The response signature covers the signed card.
    let v = Verifier::builder(keys.clone())
        .http(HttpPolicy::descriptor_response())
        .build();
    let mut b = http::Response::builder().status(st);
    for (n, val) in &fields {
        b = b.header(n.as_str(), val.as_str());
    }
    let res = b.body(body.clone()).unwrap();
    assert!(res.verify_signature(&v).unwrap().all_valid());
    // The embedded signature, with agentsig.
    let card: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(card["signatures"].as_array().unwrap().len(), 1);
    let rep = (Verifier::builder(keys).build())
        .verify_agent_card_value(&card)
        .unwrap();
    assert!(rep.verified());
    // And with the A2A Python SDK, using the served public key.
    let jwks: serde_json::Value = serde_json::from_slice(&jwks).unwrap();
    std::fs::write(dir.join("card.out"), &body).unwrap();
    std::fs::write(
        dir.join("public.jwk"),
        serde_json::to_vec(&jwks["keys"][0]).unwrap(),
    )
    .unwrap();
    let mut tampered = card.clone();
    tampered["name"] = "Someone else".into();
    std::fs::write(
        dir.join("tampered.out"),
        serde_json::to_vec(&tampered).unwrap(),
    )
    .unwrap();
    // And with both A2A SDKs (Python a2a-sdk, npm @a2a-js/sdk), using the
    // served public key: the served card verifies, a tampered one does not.
    for (prog, script) in [
        ("python3", "tests/interop/a2a_sdk.py"),
        ("node", "tests/interop/a2a_sdk.mjs"),
    ] {
        let sdk = |card: &str| {
            Command::new(prog)
                .arg(script)
                .arg("verify")
                .arg(dir.join(card))
                .arg(dir.join("public.jwk"))
                .output()
        };
        match sdk("card.out") {
            Ok(o) if o.status.code() != Some(3) => {
                assert!(
                    o.status.success(),
                    "{script}: {}",
                    String::from_utf8_lossy(&o.stderr)
                );
                let t = sdk("tampered.out").unwrap();
                assert_eq!(
                    t.status.code(),
                    Some(1),
                    "{script}: {}",
                    String::from_utf8_lossy(&t.stderr)
                );
            }
            other => {
                assert!(
                    std::env::var("AGENTSIG_REQUIRE_INTEROP").as_deref() != Ok("1"),
                    "the A2A SDK peer {script} is required (AGENTSIG_REQUIRE_INTEROP=1): {other:?}"
                );
                println!("SKIPPED A2A SDK check with {script}: {other:?}");
            }
        }
    }
    stop(child);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `serve --sign-cards` says at start-up, at WARN, which files it will not
/// serve and why (a card it cannot sign answers 404 like an absent file),
/// and which files the built agents.json leaves out.
#[cfg(unix)]
#[test]
fn serve_says_at_start_which_files_it_refuses_or_leaves_out() {
    let dir = std::env::temp_dir().join(format!("agentsig-serve-refused-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut card: serde_json::Value =
        serde_json::from_slice(&std::fs::read("examples/a2a-agent-card.json").unwrap()).unwrap();
    // A v0.3 url beside supportedInterfaces: no signature would cover it.
    card["url"] = "https://elsewhere.example/a2a".into();
    std::fs::write(dir.join("card.json"), serde_json::to_vec(&card).unwrap()).unwrap();
    std::fs::write(dir.join("notes.json"), br#"{"hello": "world"}"#).unwrap();
    let (child, mut err) = spawn_serve(&dir, &["--sign-cards"]);
    let mut before = String::new();
    let addr = loop {
        let mut line = String::new();
        assert_ne!(err.read_line(&mut line).unwrap(), 0, "{before}");
        if let Some(a) = line
            .split("http://")
            .nth(1)
            .and_then(|s| s.split('/').next())
        {
            break a.to_owned();
        }
        before.push_str(&line);
    };
    let card_line = before
        .lines()
        .find(|l| l.contains("path=/card.json"))
        .unwrap_or_else(|| panic!("the refused card is named at start: {before}"));
    assert!(
        card_line.contains("WARN")
            && card_line.contains("not served (answers 404)")
            && card_line.contains("/url")
            && card_line.contains("remove the v0.3 members"),
        "{card_line}"
    );
    let notes = before
        .lines()
        .find(|l| l.contains("path=/notes.json"))
        .unwrap_or_else(|| panic!("the unlisted file is named: {before}"));
    assert!(
        notes.contains("WARN") && notes.contains("left out of the built /.well-known/agents.json"),
        "{notes}"
    );
    assert_eq!(get(&addr, "/card.json").0, 404);
    let (st, _, agents) = get(&addr, "/.well-known/agents.json");
    assert_eq!(st, 200);
    assert!(!String::from_utf8_lossy(&agents).contains("notes.json"));
    stop(child);
    let _ = std::fs::remove_dir_all(&dir);
}
