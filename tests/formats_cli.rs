//! `agentsig lint` (issue 11): exit 0 clean, 1 errors, 2 unreadable or
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
    child.stdin.take().unwrap().write_all(stdin).unwrap();
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
    assert_eq!(v["format"], "awp");
    assert_eq!(v["ok"], false);
    let got: Vec<(String, String)> = v["findings"]
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
