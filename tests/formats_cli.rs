//! `agentsig lint`: exit 0 clean, 1 errors, 2 unreadable or
//! undetectable input; `--json` carries stable codes and pointers.

use serde_json::Value;
use std::io::Write;
use std::process::{Command, Stdio};

fn lint(args: &[&str], stdin: &[u8]) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentsig"))
        .arg("lint")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn agentsig");
    // A child that refuses its arguments exits without reading its input:
    // a closed pipe here is not a test failure.
    if let Err(e) = child.stdin.take().unwrap().write_all(stdin) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn clean_examples_exit_0() {
    for f in [
        "examples/agent.json",
        "examples/agents.json",
        "examples/awp.agent.json",
        "examples/woa.json",
        "examples/agentcard.json",
        "examples/aidip.json",
        "examples/a2a-agent-card.json",
    ] {
        let (code, out, err) = lint(&[f], b"");
        assert_eq!(code, 0, "{f}: {out}{err}");
        assert!(out.contains("0 error(s)"), "{out}");
    }
}

#[test]
fn errors_exit_1_with_codes_and_pointers_in_json() {
    let doc = br#"{"awp_version":"0.2","domain":"shop.example.com","intent":"x","actions":[{"id":"a","description":"d","auth_required":false,"inputs":{},"outputs":{},"via":"mcp"}],"protocols":{"a2a":{"version":"1","endpoint":"https://169.254.169.254/"}}}"#;
    let (code, out, err) = lint(&["--json", "-"], doc);
    assert_eq!(code, 1, "{out}{err}");
    let v: Value = serde_json::from_str(&out).expect("JSON report");
    assert_eq!(v["schema"], "agentsig.report/1");
    assert_eq!(v["command"], "lint");
    assert_eq!(v["subject"], "-");
    assert_eq!(v["details"]["format"], "awp");
    assert_eq!(v["details"]["media_type"], "application/json");
    assert_eq!(v["verdict"], "not-verified");
    assert_eq!(v["verified"], false);
    assert_eq!(v["error"]["code"], "addr/internal");
    let got: Vec<(String, String)> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["pointer"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("addr/internal".into(), "/protocols/a2a/endpoint".into()),
            ("awp/via-undeclared".into(), "/actions/0/via".into()),
        ]
    );
}

#[test]
fn format_override_and_usage_errors() {
    // The AgentCard example is not an AWP document: forced to awp, it fails.
    let (code, out, _) = lint(&["--format", "awp", "examples/agentcard.json"], b"");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("awp/required"));
    let (code, _, err) = lint(&["-"], br#"{"hello":1}"#);
    assert_eq!(code, 2);
    assert!(err.contains("no known descriptor format"), "{err}");
    let (code, _, err) = lint(&["-"], br#"{"a":1,"a":2}"#);
    assert_eq!(code, 2, "{err}");
    let (code, _, _) = lint(&["--format", "nope", "-"], b"{}");
    assert_eq!(code, 2);
}

/// `sign` lints first, refuses a descriptor with errors unless
/// `--force`, and signs the detected format's media type as content-type.
#[test]
fn sign_lints_first_and_signs_the_format_media_type() {
    let dir = std::env::temp_dir().join(format!("agentsig-signlint-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let root = env!("CARGO_MANIFEST_DIR");
    let good = std::fs::read_to_string(format!("{root}/examples/agent.json")).unwrap();
    let bad = good.replace(
        "https://planner.example.com/api\",\n    \"https\"",
        "https://127.0.0.1/api\",\n    \"https\"",
    );
    assert_ne!(good, bad, "the example changed; update the test");
    std::fs::write(dir.join("good.json"), &good).unwrap();
    std::fs::write(dir.join("bad.json"), &bad).unwrap();
    let key = format!("{root}/keys/example-p256.pem");
    let sign = |f: &str, extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_agentsig"))
            .args(["sign", f, "--key", &key])
            .args(extra)
            .current_dir(&dir)
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, err) = sign("bad.json", &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("addr/internal") && err.contains("--force"),
        "{err}"
    );
    assert!(
        !dir.join("bad.json.jws").exists(),
        "nothing written when refused"
    );
    let (code, err) = sign("bad.json", &["--force"]);
    assert_eq!(code, 0, "{err}");
    assert!(dir.join("bad.json.jws").exists());
    let (code, err) = sign("good.json", &[]);
    assert_eq!(code, 0, "{err}");
    let headers = std::fs::read_to_string(dir.join("good.json.headers")).unwrap();
    assert!(
        headers
            .to_ascii_lowercase()
            .contains("content-type: application/agent+json"),
        "{headers}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `verify --response` reports a served media type that does not
/// fit the descriptor's format (a warning: the signature still verifies).
#[test]
fn verify_reports_a_media_type_that_does_not_fit() {
    let dir = std::env::temp_dir().join(format!("agentsig-mediatype-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let root = env!("CARGO_MANIFEST_DIR");
    let body = std::fs::read(format!("{root}/examples/agent.json")).unwrap();
    std::fs::write(dir.join("agent.json"), &body).unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_agentsig"))
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap()
    };
    let key = format!("{root}/keys/example-p256.pem");
    let jwks = format!("{root}/keys/example-p256.jwks.json");
    for (ct, warned) in [
        ("application/json", true),
        ("application/agent+json", false),
    ] {
        let o = run(&["sign", "agent.json", "--key", &key, "--content-type", ct]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let headers = std::fs::read_to_string(dir.join("agent.json.headers")).unwrap();
        let mut resp = b"HTTP/1.1 200 OK\r\n".to_vec();
        for l in headers.lines().filter(|l| l.contains(": ")) {
            resp.extend_from_slice(l.as_bytes());
            resp.extend_from_slice(b"\r\n");
        }
        resp.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
        resp.extend_from_slice(&body);
        std::fs::write(dir.join("resp.http"), &resp).unwrap();
        let o = run(&[
            "verify",
            "agent.json",
            "--response",
            "resp.http",
            "--jwks",
            &jwks,
            "--json",
        ]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stdout)
        );
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["verdict"], "verified");
        let has = v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["code"] == "publish/media-type" && c["severity"] == "warning");
        assert_eq!(has, warned, "{ct}: {v}");
        for f in ["agent.json.jws", "agent.json.headers"] {
            let _ = std::fs::remove_file(dir.join(f));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `lint --json` prints the one report envelope (`agentsig.report/1`,
/// docs/report.md) whatever happens: clean, warnings, errors, not JSON, a
/// JSON value that is no object, an unrecognised format, a usage error and
/// an unreadable file. Exit code and verdict agree.
#[test]
fn lint_json_is_one_shape_in_every_case() {
    let warn_only = br#"{"name":"x","description":"d","endpoint":"https://api.example.com/x","operations":[{"name":"o","description":"d","inputs":{},"outputs":{}}]}"#;
    /// (arguments, standard input, exit code, verdict, error code)
    type Case<'a> = (Vec<&'a str>, &'a [u8], i32, &'a str, Option<&'a str>);
    let cases: Vec<Case> = vec![
        (
            vec!["--json", "examples/woa.json"],
            b"",
            0,
            "verified",
            None,
        ),
        (vec!["--json", "-"], warn_only, 0, "verified", None),
        (
            vec!["--json", "-"],
            br#"{"woa_version":"2","agents":[],"transports":{}}"#,
            1,
            "not-verified",
            Some("woa/version"),
        ),
        (vec!["--json", "-"], b"{not json", 2, "error", Some("json")),
        (
            vec!["--json", "-"],
            b"[1,2]",
            2,
            "error",
            Some("not-an-object"),
        ),
        (
            vec!["--json", "-"],
            br#"{"hello":1}"#,
            2,
            "error",
            Some("format-unrecognized"),
        ),
        (
            vec!["--json", "--format", "nope", "-"],
            b"{}",
            2,
            "error",
            Some("usage"),
        ),
        (
            vec!["--json", "no-such-file.json"],
            b"",
            2,
            "error",
            Some("input.unreadable"),
        ),
    ];
    for (args, stdin, want_code, verdict, error_code) in cases {
        let (code, out, err) = lint(&args, stdin);
        assert_eq!(code, want_code, "{args:?}: {out}{err}");
        let v: Value = serde_json::from_str(&out)
            .unwrap_or_else(|e| panic!("{args:?}: not one JSON object ({e}): {out}"));
        assert_eq!(v["schema"], "agentsig.report/1", "{args:?}: {out}");
        assert_eq!(v["verdict"], verdict, "{args:?}: {out}");
        assert_eq!(v["verified"], verdict == "verified", "{args:?}");
        assert!(
            v["checks"].is_array() && v["signatures"].is_array(),
            "{args:?}: {out}"
        );
        match error_code {
            None => assert!(v["error"].is_null(), "{args:?}: {out}"),
            Some(c) => assert_eq!(v["error"]["code"], c, "{args:?}: {out}"),
        }
        if want_code == 2 && !args.contains(&"nope") {
            assert_eq!(v["command"], "lint", "{args:?}");
            assert_eq!(v["subject"], *args.last().unwrap(), "{args:?}");
        }
    }
    // Warnings are checks too, with severity and pointer.
    let (_, out, _) = lint(&["--json", "-"], warn_only);
    let v: Value = serde_json::from_str(&out).expect("json");
    let w = &v["checks"][0];
    assert_eq!(w["code"], "aidip/recommended");
    assert_eq!(w["severity"], "warning");
    assert_eq!(w["passed"], false);
    assert_eq!(w["pointer"], "/id");
}
