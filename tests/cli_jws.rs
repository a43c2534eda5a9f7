//! The `agentsig keygen | sign | verify | canon` commands end to end:
//! exit codes (0 verified, 1 not verified or refused, 2 usage or unreadable
//! input), the `--json` report, and the descriptor invariances JCS gives.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[path = "b64_support/mod.rs"]
mod b64;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agentsig"))
}

fn run(args: &[&str], dir: &Path) -> Output {
    bin()
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run agentsig")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exit code")
}

struct Tmp(PathBuf);
impl Tmp {
    fn new(name: &str) -> Tmp {
        let p = std::env::temp_dir().join(format!("agentsig-cli-{name}-{}", std::process::id()));
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

const DOC: &str = r#"{"name":"planner","version":"1.0.0","skills":[{"id":"a","name":"A","description":"d"}],"limits":{"maxTokens":1000,"t":0.5}}"#;

fn setup(name: &str, alg: &str) -> Tmp {
    let t = Tmp::new(name);
    std::fs::write(t.0.join("agent.json"), DOC).expect("write");
    let o = run(&["keygen", "--alg", alg, "--out", "k"], &t.0);
    assert_eq!(
        code(&o),
        0,
        "keygen: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    t
}

#[test]
fn sign_then_verify_each_asymmetric_algorithm() {
    for alg in ["ecdsa-p256-sha256", "ecdsa-p384-sha384", "ed25519"] {
        let t = setup(&format!("rt-{alg}"), alg);
        let o = run(&["sign", "agent.json", "--key", "k.pem"], &t.0);
        assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
        for keyarg in [
            ["--jwks", "k.jwks.json"],
            ["--key", "k.pub.pem"],
            ["--key", "k.jwk.json"],
            ["--key", "k.pem"],
        ] {
            let o = run(&["verify", "agent.json", keyarg[0], keyarg[1]], &t.0);
            assert_eq!(
                code(&o),
                0,
                "{alg} {keyarg:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
    }
}

#[test]
fn keygen_writes_private_key_0600_and_refuses_to_overwrite() {
    let t = setup("keygen", "ecdsa-p256-sha256");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(t.0.join("k.pem"))
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let before = std::fs::read(t.0.join("k.pem")).expect("read");
    let o = run(&["keygen", "--out", "k"], &t.0);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("refusing to overwrite"));
    assert_eq!(std::fs::read(t.0.join("k.pem")).expect("read"), before);
    let o = run(&["keygen", "--out", "j", "--json"], &t.0);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["schema"], "agentsig.report/1");
    assert_eq!(v["verdict"], "done");
    let v = &v["details"];
    assert!(v["did_key"]
        .as_str()
        .is_some_and(|d| d.starts_with("did:key:zDn")));
    assert!(v["did_jwk"]
        .as_str()
        .is_some_and(|d| d.starts_with("did:jwk:ey")));
    assert_eq!(v["kid"], v["thumbprint"]);
}

#[test]
fn whitespace_and_member_order_do_not_matter_values_do() {
    let t = setup("inv", "ed25519");
    assert_eq!(
        code(&run(&["sign", "agent.json", "--key", "k.pem"], &t.0)),
        0
    );
    // Re-serialize with other whitespace and member order: still verifies.
    let reordered = r#"{
        "limits": {"t": 0.5, "maxTokens": 1000.0},
        "skills": [ {"description":"d","name":"A","id":"a"} ],
        "version": "1.0.0",
        "name": "planner"
    }"#;
    std::fs::write(t.0.join("agent.json"), reordered).expect("write");
    let o = run(&["verify", "agent.json", "--jwks", "k.jwks.json"], &t.0);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    // Any change of a value fails with exit 1.
    for tampered in [
        DOC.replace("planner", "planneR"),
        DOC.replace("1000", "1001"),
        DOC.replace("0.5", "0.50001"),
        DOC.replace(r#""id":"a","#, ""),
    ] {
        std::fs::write(t.0.join("agent.json"), &tampered).expect("write");
        let o = run(&["verify", "agent.json", "--jwks", "k.jwks.json"], &t.0);
        assert_eq!(code(&o), 1, "tampered {tampered} must fail");
    }
}

#[test]
fn json_report_fields() {
    let t = setup("json", "ecdsa-p256-sha256");
    assert_eq!(
        code(&run(&["sign", "agent.json", "--key", "k.pem"], &t.0)),
        0
    );
    let o = run(
        &["verify", "agent.json", "--jwks", "k.jwks.json", "--json"],
        &t.0,
    );
    assert_eq!(code(&o), 0);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json report");
    // The one report shape (docs/report.md).
    assert_eq!(v["schema"], "agentsig.report/1");
    assert_eq!(v["verified"], true);
    assert_eq!(v["verdict"], "verified");
    let s0 = &v["signatures"][0];
    assert_eq!(s0["kind"], "jws");
    assert_eq!(s0["verdict"], "valid");
    assert_eq!(s0["algorithm"], "ES256");
    assert_eq!(s0["key"]["source"]["kind"], "jwks");
    assert!(s0["key"]["source"]["from"]
        .as_str()
        .is_some_and(|s| s.contains("k.jwks.json")));
    let canon = agentsig::jcs::canonicalize(DOC.as_bytes()).expect("jcs");
    assert_eq!(
        v["details"]["canonical_sha256"],
        agentsig::descriptor::sha256_hex(&canon)
    );
    let thumb = s0["key"]["thumbprint"]
        .as_str()
        .expect("thumbprint")
        .to_owned();
    assert_eq!(s0["kid"].as_str(), Some(thumb.as_str()));

    // A failing verification still prints a report, with a reason.
    std::fs::write(t.0.join("agent.json"), DOC.replace("planner", "x")).expect("write");
    let o = run(
        &["verify", "agent.json", "--jwks", "k.jwks.json", "--json"],
        &t.0,
    );
    assert_eq!(code(&o), 1);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json report");
    assert_eq!(v["verified"], false);
    assert_eq!(v["verdict"], "not-verified");
    assert_eq!(v["signatures"][0]["verdict"], "invalid");
    assert_eq!(v["signatures"][0]["reason"]["code"], "signature-mismatch");
}

#[test]
fn wrong_key_is_not_verified() {
    let t = setup("wrongkey", "ecdsa-p256-sha256");
    assert_eq!(
        code(&run(&["sign", "agent.json", "--key", "k.pem"], &t.0)),
        0
    );
    assert_eq!(code(&run(&["keygen", "--out", "other"], &t.0)), 0);
    // A different key with no kid: selected, and the signature does not match.
    let o = run(
        &["verify", "agent.json", "--key", "other.pub.pem", "--json"],
        &t.0,
    );
    assert_eq!(code(&o), 1);
    // A JWKS whose kid differs: no trusted key (nothing verified is never a success).
    let o = run(
        &[
            "verify",
            "agent.json",
            "--jwks",
            "other.jwks.json",
            "--json",
        ],
        &t.0,
    );
    assert_eq!(code(&o), 1);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["verdict"], "not-verified");
    assert_eq!(v["signatures"][0]["verdict"], "no-trusted-key");
    assert_eq!(v["error"]["code"], "no-trusted-key");
}

#[test]
fn algorithm_policy_refusals_exit_1() {
    let t = setup("policy", "ed25519");
    assert_eq!(
        code(&run(&["sign", "agent.json", "--key", "k.pem"], &t.0)),
        0
    );
    // EdDSA not in the allow-list.
    let o = run(
        &[
            "verify",
            "agent.json",
            "--jwks",
            "k.jwks.json",
            "--alg",
            "ES256",
            "--json",
        ],
        &t.0,
    );
    assert_eq!(code(&o), 1);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["signatures"][0]["reason"]["code"], "alg-not-allowed");
    // The key is bound to Ed25519: naming another algorithm for it is refused at load (usage, 2).
    let o = run(
        &[
            "verify",
            "agent.json",
            "--key",
            "k.pub.pem",
            "--alg",
            "ES256",
        ],
        &t.0,
    );
    assert_eq!(code(&o), 2);
}

#[test]
fn hmac_only_when_named_and_never_from_jwks() {
    let t = setup("hmac", "hmac-sha256");
    let o = run(
        &[
            "sign",
            "agent.json",
            "--key",
            "k.secret",
            "--alg",
            "hmac-sha256",
        ],
        &t.0,
    );
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(
        &[
            "verify",
            "agent.json",
            "--key",
            "k.secret",
            "--alg",
            "hmac-sha256",
        ],
        &t.0,
    );
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    // The secret through an environment variable.
    let secret = std::fs::read_to_string(t.0.join("k.secret")).expect("secret");
    let o = bin()
        .args([
            "verify",
            "agent.json",
            "--key",
            "env:AGENTSIG_TEST_SECRET",
            "--alg",
            "hmac-sha256",
        ])
        .env("AGENTSIG_TEST_SECRET", secret.trim())
        .current_dir(&t.0)
        .output()
        .expect("run");
    assert_eq!(code(&o), 0);
    // A JWK Set holding the same secret as an oct key is never trusted.
    let raw = b64::decode_std(secret.trim()).expect("b64");
    let jwks = format!(
        r#"{{"keys":[{{"kty":"oct","k":"{}","alg":"HS256"}}]}}"#,
        b64::encode(&raw)
    );
    std::fs::write(t.0.join("oct.jwks.json"), jwks).expect("write");
    let o = run(
        &[
            "verify",
            "agent.json",
            "--jwks",
            "oct.jwks.json",
            "--alg",
            "hmac-sha256",
        ],
        &t.0,
    );
    assert_eq!(
        code(&o),
        2,
        "no usable key: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    // The refusal says which member was skipped and why.
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("keys[0]") && err.contains("shared secret"),
        "{err}"
    );
}

#[test]
fn usage_and_unreadable_input_exit_2() {
    let t = setup("usage", "ecdsa-p256-sha256");
    assert_eq!(
        code(&run(
            &["verify", "missing.json", "--jwks", "k.jwks.json"],
            &t.0
        )),
        2
    );
    assert_eq!(
        code(&run(&["verify", "agent.json"], &t.0)),
        2,
        "no key: nothing verified"
    );
    assert_eq!(code(&run(&["sign", "agent.json"], &t.0)), 2, "no key");
    assert_eq!(code(&run(&["frobnicate"], &t.0)), 2);
    // A descriptor that is not I-JSON: the error names the place.
    std::fs::write(t.0.join("dup.json"), "{\"a\":1,\n \"a\":2}").expect("write");
    let o = run(&["sign", "dup.json", "--key", "k.pem"], &t.0);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("duplicate") && err.contains("line 2"), "{err}");
    // A malformed JWS file.
    assert_eq!(
        code(&run(&["sign", "agent.json", "--key", "k.pem"], &t.0)),
        0
    );
    std::fs::write(t.0.join("agent.json.jws"), "not-a-jws").expect("write");
    assert_eq!(
        code(&run(
            &["verify", "agent.json", "--jwks", "k.jwks.json"],
            &t.0
        )),
        2
    );
}

#[test]
fn stdin_and_json_serialization_with_two_keys() {
    let t = setup("multi", "ecdsa-p256-sha256");
    assert_eq!(
        code(&run(&["keygen", "--alg", "ed25519", "--out", "k2"], &t.0)),
        0
    );
    let o = run(
        &["sign", "agent.json", "--key", "k.pem", "--key", "k2.pem"],
        &t.0,
    );
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let jws: serde_json::Value =
        serde_json::from_slice(&std::fs::read(t.0.join("agent.json.jws")).expect("read"))
            .expect("json");
    assert_eq!(jws["signatures"].as_array().map(Vec::len), Some(2));
    assert!(jws.get("payload").is_none(), "detached: no payload member");
    // Either key alone verifies (rotation); an unknown signer is reported, not fatal.
    for jwks in ["k.jwks.json", "k2.jwks.json"] {
        let o = run(&["verify", "agent.json", "--jwks", jwks, "--json"], &t.0);
        assert_eq!(code(&o), 0, "{jwks}");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        let verdicts: Vec<&str> = v["signatures"]
            .as_array()
            .expect("sigs")
            .iter()
            .filter_map(|s| s["verdict"].as_str())
            .collect();
        assert!(
            verdicts.contains(&"valid") && verdicts.contains(&"no-trusted-key"),
            "{verdicts:?}"
        );
    }
    // Descriptor on standard input: the JWS goes to standard output.
    let mut child = bin()
        .args(["sign", "-", "--key", "k.pem"])
        .current_dir(&t.0)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    use std::io::Write;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(DOC.as_bytes())
        .expect("write");
    let o = child.wait_with_output().expect("wait");
    assert_eq!(code(&o), 0);
    let compact = String::from_utf8(o.stdout).expect("utf8");
    let parts: Vec<&str> = compact.trim().split('.').collect();
    assert_eq!(parts.len(), 3);
    assert!(
        parts[1].is_empty(),
        "detached compact JWS has an empty payload part"
    );
}

#[test]
fn canon_prints_canonical_bytes() {
    let t = Tmp::new("canon");
    std::fs::write(
        t.0.join("x.json"),
        "{ \"b\": [1.0, 1e21, \"\\u00e9\"], \"a\": null }",
    )
    .expect("write");
    let o = run(&["canon", "x.json"], &t.0);
    assert_eq!(code(&o), 0);
    assert_eq!(o.stdout, "{\"a\":null,\"b\":[1,1e+21,\"é\"]}".as_bytes());
}

#[test]
fn completions_and_man_page() {
    let t = Tmp::new("completions");
    for shell in ["bash", "zsh", "fish"] {
        let o = run(&["completions", shell], &t.0);
        assert_eq!(code(&o), 0, "{shell}");
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            text.contains("agentsig") && text.contains("keygen"),
            "{shell}"
        );
    }
    let o = run(&["man"], &t.0);
    assert_eq!(code(&o), 0);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains(".TH agentsig 1") && text.contains("verify"));
    assert_eq!(code(&run(&["completions", "cmd.exe"], &t.0)), 2);
}

/// An unverified kid holding a terminal escape and a bidi
/// override is printed escaped, in the text report and in error messages.
#[test]
fn kid_controls_are_escaped_in_text_output() {
    let t = setup("esc", "ecdsa-p256-sha256");
    let kid = "k\u{1b}[31m\u{202e}x";
    let o = run(
        &[
            "sign",
            "agent.json",
            "--key",
            "k.pem",
            "--kid",
            kid,
            "--no-headers",
        ],
        &t.0,
    );
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    // A trusted key with another kid: the JWS kid appears in the failure.
    let o = run(&["keygen", "--out", "other", "--kid", "other"], &t.0);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    for keyarg in [["--key", "k.pem"], ["--jwks", "other.jwks.json"]] {
        let o = run(&["verify", "agent.json", keyarg[0], keyarg[1]], &t.0);
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(all.contains("k\\x1b[31m\\u{202e}x"), "{all}");
        assert!(
            !all.contains('\u{1b}') && !all.contains('\u{202e}'),
            "{all}"
        );
    }
}

/// Option values that begin with '-' (about 1 in 64 RFC 7638
/// thumbprints does) are accepted: --kid, --keyid, --act, --iss, --sub, --ttl.
#[test]
fn values_beginning_with_a_hyphen_are_accepted() {
    let t = setup("hyphen", "ecdsa-p256-sha256");
    // keygen --kid too (about 1 in 64 RFC 7638 thumbprints begins with '-').
    let o = run(&["keygen", "--out", "hy", "--kid", "-kg", "--json"], &t.0);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["details"]["kid"], "-kg");
    let o = run(
        &[
            "sign",
            "agent.json",
            "--key",
            "k.pem",
            "--kid",
            "-abc",
            "--no-headers",
        ],
        &t.0,
    );
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(&["verify", "agent.json", "--key", "k.pem", "--json"], &t.0);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["signatures"][0]["kid"], "-abc");
    std::fs::write(
        t.0.join("resp.http"),
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
    )
    .unwrap();
    let o = run(
        &[
            "http",
            "sign",
            "resp.http",
            "--key",
            "k.pem",
            "--keyid",
            "-k",
            "--add-content-digest",
            "sha-256",
            "--json",
        ],
        &t.0,
    );
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let j = &j["details"];
    assert!(j["signature_input"]
        .as_str()
        .unwrap()
        .contains("keyid=\"-k\""));
    let o = run(
        &[
            "delegation",
            "mint",
            "--signing-key",
            "k.pem",
            "--kid",
            "-kid",
            "--iss",
            "-iss",
            "--sub",
            "-sub",
            "--act",
            "-actor",
            "--aud",
            "-aud",
            "--ttl",
            "-5",
        ],
        &t.0,
    );
    // Parsed: the refusal is the command's own, not clap's "unexpected argument".
    assert_eq!(code(&o), 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--ttl must be positive"), "{err}");
    let o = run(
        &[
            "delegation",
            "mint",
            "--signing-key",
            "k.pem",
            "--kid",
            "-kid",
            "--iss",
            "-iss",
            "--sub",
            "-sub",
            "--act",
            "-actor",
            "--aud",
            "-aud",
            "--now",
            "1760000000",
        ],
        &t.0,
    );
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
}

/// The manual covers every subcommand's options, as one
/// stream or as one page per command with --out DIR.
#[test]
fn man_has_a_page_per_subcommand() {
    let t = Tmp::new("man");
    let o = run(&["man"], &t.0);
    assert_eq!(code(&o), 0);
    let all = String::from_utf8_lossy(&o.stdout);
    assert!(all.contains("deny\\-warnings") && all.contains("add\\-content\\-digest"));
    let o = run(&["man", "--out", "."], &t.0);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    for page in [
        "agentsig.1",
        "agentsig-sign.1",
        "agentsig-http-verify.1",
        "agentsig-delegation-audit.1",
    ] {
        assert!(t.0.join(page).is_file(), "{page}");
    }
    let sign = std::fs::read_to_string(t.0.join("agentsig-sign.1")).unwrap();
    assert!(sign.contains("headers\\-format"), "{sign}");
}

/// Sign names both files it wrote, with readable times.
#[test]
fn sign_reports_both_files_written() {
    let t = setup("wrote", "ed25519");
    let o = run(
        &["sign", "agent.json", "--key", "k.pem", "--expires-in", "1d"],
        &t.0,
    );
    assert_eq!(code(&o), 0);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("agent.json.jws") && err.contains("agent.json.headers"),
        "{err}"
    );
    // RFC 3339, not bare Unix seconds.
    assert!(
        err.contains("created 20") && err.contains("Z, expires 20"),
        "{err}"
    );
}

/// Errors that exit 2 still answer with the one report
/// shape under --json (verdict "error" and a code).
#[test]
fn usage_errors_give_a_json_report() {
    let t = setup("jsonerr", "ecdsa-p256-sha256");
    let o = run(
        &["verify", "missing.json", "--jwks", "k.jwks.json", "--json"],
        &t.0,
    );
    assert_eq!(code(&o), 2);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json on exit 2");
    assert_eq!(v["schema"], "agentsig.report/1");
    assert_eq!(v["verdict"], "error");
    assert_eq!(v["command"], "verify");
    // A missing file is unreadable input (exit 2), not a usage error; the
    // report names it.
    assert_eq!(v["error"]["code"], "input.unreadable");
    assert_eq!(v["subject"], "missing.json");
    // A clap usage error too.
    let o = run(&["verify", "--no-such-flag", "--json"], &t.0);
    assert_eq!(code(&o), 2);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json on clap error");
    assert_eq!(v["verdict"], "error");
}

/// `verify --strict-low-s`: of the ECDSA pair (r, s) / (r, n - s) over a
/// signed descriptor, the high-S one verifies by default and is refused with
/// the flag; the low-S one verifies either way.
#[test]
fn verify_strict_low_s_refuses_the_high_s_jws() {
    use base64::Engine as _;
    // The order n of P-256 (SEC 2 section 2.4.2).
    let n = hex::decode("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")
        .expect("hex");
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let t = setup("lows", "ecdsa-p256-sha256");
    assert_eq!(
        code(&run(&["sign", "agent.json", "--key", "k.pem"], &t.0)),
        0
    );
    let jws = std::fs::read_to_string(t.0.join("agent.json.jws")).expect("jws");
    let jws = jws.trim();
    let (head, sig_b64) = jws.rsplit_once('.').expect("compact");
    let sig = b64.decode(sig_b64).expect("b64");
    let mut other = sig[..32].to_vec();
    let mut s2 = [0u8; 32];
    let mut borrow = 0i16;
    for i in (0..32).rev() {
        let mut d = i16::from(n[i]) - i16::from(sig[32 + i]) - borrow;
        borrow = 0;
        if d < 0 {
            d += 256;
            borrow = 1;
        }
        s2[i] = d as u8;
    }
    other.extend_from_slice(&s2);
    let (high, low) = if sig[32..] > other[32..] {
        (sig, other)
    } else {
        (other, sig)
    };
    for (name, s, strict_code) in [("high", &high, 1), ("low", &low, 0)] {
        std::fs::write(
            t.0.join("agent.json.jws"),
            format!("{head}.{}", b64.encode(s)),
        )
        .expect("write");
        let o = run(&["verify", "agent.json", "--key", "k.pub.pem"], &t.0);
        assert_eq!(
            code(&o),
            0,
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let o = run(
            &[
                "verify",
                "agent.json",
                "--key",
                "k.pub.pem",
                "--strict-low-s",
            ],
            &t.0,
        );
        assert_eq!(
            code(&o),
            strict_code,
            "{name}: {}",
            String::from_utf8_lossy(&o.stdout)
        );
    }
}
