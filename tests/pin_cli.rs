//! `agentsig verify --pin-store` and `agentsig pin ...`
//! end to end on a file store: first sight pins, another key is
//! `pin.key-changed` (exit 1), an announcement signed by the pinned key or
//! an operator rotate accepts the change.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_agentsig");
const ID: &str = "https://agents.example/planner";

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("agentsig-pin-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(d: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .current_dir(d)
        .args(args)
        .output()
        .unwrap()
}

fn code(d: &Path, args: &[&str]) -> Option<i32> {
    let o = run(d, args);
    eprintln!(
        "{args:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o.status.code()
}

fn verify(d: &Path, jwks: &str) -> serde_json::Value {
    let o = run(
        d,
        &[
            "verify",
            "agent.json",
            "--jwks",
            jwks,
            "--pin-store",
            "file:pins.jsonl",
            "--json",
        ],
    );
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        o.status.code(),
        Some(if j["verified"] == true { 0 } else { 1 })
    );
    j
}

fn check_codes(j: &serde_json::Value) -> Vec<(String, bool)> {
    j["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["code"].as_str().unwrap().to_owned(), c["passed"] == true))
        .collect()
}

#[test]
fn key_change_is_reported_and_accepted_only_by_announcement_or_rotate() {
    let d = dir("flow");
    for k in ["a", "b"] {
        assert!(run(&d, &["keygen", "--out", k]).status.success());
    }
    std::fs::write(
        d.join("agent.json"),
        format!(r#"{{"id":"{ID}","name":"planner","version":"1"}}"#),
    )
    .unwrap();
    assert_eq!(code(&d, &["sign", "agent.json", "--key", "a.pem"]), Some(0));
    let j = verify(&d, "a.jwks.json");
    assert_eq!(check_codes(&j), [("pin.first-seen".to_owned(), true)]);
    let j = verify(&d, "a.jwks.json");
    assert_eq!(check_codes(&j), [("pin.match".to_owned(), true)]);

    // The publisher's key changes: a valid signature, but a key change.
    assert_eq!(code(&d, &["sign", "agent.json", "--key", "b.pem"]), Some(0));
    let j = verify(&d, "b.jwks.json");
    assert_eq!(j["verdict"], "not-verified");
    assert_eq!(check_codes(&j), [("pin.key-changed".to_owned(), false)]);
    let pin = ["--pin-store", "pins.jsonl"];
    let check_b = [&["pin", "check", ID, "b.pub.pem"][..], &pin].concat();
    assert_eq!(code(&d, &check_b), Some(1));

    // An announcement signed by the new key itself is refused (exit 1)...
    let ann_b = [
        "pin",
        "announce",
        ID,
        "--new-key",
        "b.jwk.json",
        "--signing-key",
        "b.pem",
        "--out",
        "self.json",
    ];
    assert_eq!(code(&d, &ann_b), Some(0));
    let acc = [
        &["pin", "accept", ID, "self.json", "--jwks", "b.jwks.json"][..],
        &pin,
    ]
    .concat();
    assert_eq!(code(&d, &acc), Some(1));
    let acc = [
        &[
            "pin",
            "accept",
            ID,
            "self.json",
            "--jwks",
            "a.jwks.json",
            "--jwks",
            "b.jwks.json",
        ][..],
        &pin,
    ]
    .concat();
    assert_eq!(code(&d, &acc), Some(1));
    assert_eq!(verify(&d, "b.jwks.json")["verified"], false);

    // ...one signed by the pinned key is accepted.
    let ann_a = [
        "pin",
        "announce",
        ID,
        "--new-key",
        "b.jwk.json",
        "--signing-key",
        "a.pem",
        "--out",
        "ann.json",
    ];
    assert_eq!(code(&d, &ann_a), Some(0));
    let acc = [
        &["pin", "accept", ID, "ann.json", "--jwks", "a.jwks.json"][..],
        &pin,
    ]
    .concat();
    assert_eq!(code(&d, &acc), Some(0));
    let j = verify(&d, "b.jwks.json");
    assert_eq!(check_codes(&j), [("pin.match".to_owned(), true)]);
    assert_eq!(code(&d, &check_b), Some(0));

    // Operator rotation back to a only: b is a change again.
    let rot = [&["pin", "rotate", ID, "--to", "a.pub.pem"][..], &pin].concat();
    assert_eq!(code(&d, &rot), Some(0));
    assert_eq!(code(&d, &check_b), Some(1));
    let o = run(&d, &[&["pin", "list"][..], &pin].concat());
    let list = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(list.lines().count(), 1, "{list}");
    assert!(list.starts_with(ID), "{list}");

    // A descriptor with no id, url or name cannot be pinned: not verified.
    std::fs::write(d.join("agent.json"), r#"{"version":"1"}"#).unwrap();
    assert_eq!(code(&d, &["sign", "agent.json", "--key", "a.pem"]), Some(0));
    let j = verify(&d, "a.jwks.json");
    assert_eq!(check_codes(&j), [("pin.no-identity".to_owned(), false)]);
    let _ = std::fs::remove_dir_all(&d);
}
