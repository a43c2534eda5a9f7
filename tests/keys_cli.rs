//! CLI key handling end to end: keys written by keygen work as written, and
//! key material given by mistake where a path belongs is never echoed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn run(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agentsig"))
        .args(args)
        .current_dir(dir)
        .env_remove("AGENTSIG_PASSPHRASE")
        .output()
        .expect("run agentsig")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exit code")
}

struct Tmp(PathBuf);
impl Tmp {
    fn new(name: &str) -> Tmp {
        let p =
            std::env::temp_dir().join(format!("agentsig-keys-cli-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("mkdir");
        Tmp(p)
    }
}
impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const DOC: &str = r#"{"name":"planner","version":"1.0.0"}"#;

fn keygen(t: &Tmp, alg: &str) {
    std::fs::write(t.0.join("agent.json"), DOC).expect("write");
    let o = run(&["keygen", "--alg", alg, "--out", "k"], &t.0);
    assert_eq!(
        code(&o),
        0,
        "keygen: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Issue 7 item 8: a private key pasted as the value of --key (PEM text, a
/// JWK, a base64 blob) is never repeated in the error.
#[test]
fn key_material_given_as_key_value_is_never_echoed() {
    let t = Tmp::new("echo");
    keygen(&t, "ecdsa-p256-sha256");
    let pem = std::fs::read_to_string(t.0.join("k.pem")).expect("pem");
    let body: String = pem.lines().nth(1).expect("body line").to_owned();
    let jwk =
        r#"{"kty":"EC","crv":"P-256","d":"c2VjcmV0LXNjYWxhci1kby1ub3QtZWNobw","x":"a","y":"b"}"#;
    let blob = "c2VjcmV0LWJ5dGVzLXRoYXQtbXVzdC1uZXZlci1iZS1lY2hvZWQtYmFjaw";
    let o = run(&["sign", "agent.json", "--key", "k.pem"], &t.0);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    for (value, secret_part) in [
        (pem.as_str(), body.as_str()),
        (jwk, "c2VjcmV0LXNjYWxhci1kby1ub3QtZWNobw"),
        (blob, blob),
    ] {
        for cmd in [
            vec!["sign", "agent.json", "--key", value],
            vec!["verify", "agent.json", "--key", value],
            vec!["verify", "agent.json", "--jwks", value],
        ] {
            let o = run(&cmd, &t.0);
            let err = String::from_utf8_lossy(&o.stderr);
            let out = String::from_utf8_lossy(&o.stdout);
            assert_eq!(code(&o), 2, "{err}");
            assert!(!err.contains(secret_part), "{:?} echoed: {err}", cmd[2]);
            assert!(!out.contains(secret_part), "{:?} echoed on stdout", cmd[2]);
            assert!(err.contains("looks like key material"), "{err}");
            assert!(err.contains("env:NAME"), "{err}");
        }
    }
    // A passphrase given as the value of --passphrase-file is not echoed.
    let o = run(
        &[
            "sign",
            "agent.json",
            "--key",
            "k.pem",
            "--passphrase-file",
            "hunter2-correct-horse",
        ],
        &t.0,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 2, "{err}");
    assert!(!err.contains("hunter2"), "{err}");
    // A missing ordinary path is still named.
    let o = run(&["sign", "agent.json", "--key", "missing.pem"], &t.0);
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.pem"));
}
