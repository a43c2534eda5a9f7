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

/// Issue 7 item 5: every key keygen writes signs and verifies as written.
/// RSA keys need no --alg: rsa-pss-sha512 is recorded in the PEM files
/// (id-RSASSA-PSS), rsa-v1_5-sha256 in PREFIX.jwk.json's alg. HMAC is the
/// exception by policy: a shared secret is used only when hmac-sha256 is
/// named (RFC 8725 section 3.1), on both sides.
#[test]
fn keygen_keys_sign_and_verify_as_written() {
    for alg in [
        "ecdsa-p256-sha256",
        "ecdsa-p384-sha384",
        "ed25519",
        "rsa-pss-sha512",
        "rsa-v1_5-sha256",
        "hmac-sha256",
    ] {
        let t = Tmp::new(&format!("rt-{alg}"));
        keygen(&t, alg);
        let (sign_key, verifiers, extra): (&str, Vec<[&str; 2]>, Vec<&str>) =
            if alg == "hmac-sha256" {
                (
                    "k.secret",
                    vec![["--key", "k.secret"]],
                    vec!["--alg", "hmac-sha256"],
                )
            } else {
                (
                    "k.pem",
                    vec![
                        ["--key", "k.pem"],
                        ["--key", "k.pub.pem"],
                        ["--key", "k.jwk.json"],
                        ["--jwks", "k.jwks.json"],
                    ],
                    vec![],
                )
            };
        let mut args = vec!["sign", "agent.json", "--key", sign_key];
        args.extend(&extra);
        let o = run(&args, &t.0);
        assert_eq!(
            code(&o),
            0,
            "{alg} sign: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        for v in verifiers {
            let mut args = vec!["verify", "agent.json", v[0], v[1]];
            args.extend(&extra);
            let o = run(&args, &t.0);
            assert_eq!(
                code(&o),
                0,
                "{alg} verify {v:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
    }
}

/// Issue 7 item 5: an RSA PEM with nothing recording its algorithm gets an
/// error naming --alg; an encrypted key without passphrase names
/// --passphrase-file and AGENTSIG_PASSPHRASE.
#[test]
fn key_errors_name_the_flag_to_use() {
    let t = Tmp::new("errs");
    keygen(&t, "rsa-v1_5-sha256");
    std::fs::rename(t.0.join("k.jwk.json"), t.0.join("elsewhere.json")).expect("mv");
    let o = run(&["sign", "agent.json", "--key", "k.pem"], &t.0);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 2, "{err}");
    assert!(err.contains("--alg rsa-pss-sha512"), "{err}");
    let o = run(
        &[
            "sign",
            "agent.json",
            "--key",
            "k.pem",
            "--alg",
            "rsa-v1_5-sha256",
        ],
        &t.0,
    );
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    // An encrypted PKCS#8 key without a passphrase.
    let enc = include_str!("vectors/keys/test-key-ecc-p256.enc.pem");
    std::fs::write(t.0.join("enc.pem"), enc).expect("write");
    let o = run(&["sign", "agent.json", "--key", "enc.pem"], &t.0);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 2, "{err}");
    assert!(
        err.contains("--passphrase-file") && err.contains("AGENTSIG_PASSPHRASE"),
        "{err}"
    );
}
