//! Every subcommand's `--json` output, success and failure, validated
//! against the one documented schema (`docs/report.schema.json`, JSON
//! Schema 2020-12; prose in `docs/report.md`) by an independent validator:
//! the Python `jsonschema` package. Without it the validation is skipped
//! with a notice, unless `AGENTSIG_REQUIRE_INTEROP=1` (CI), where that is a
//! failure. The exit codes, verdicts, subjects and error codes are checked
//! here in Rust as well, validator or not.

mod net_support;

use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const SCHEMA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/report.schema.json");
const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples");
const TEST_KEY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/keys/example-p256.pem");
const AS: &str = "https://as.example.com";
const N: i64 = 1_760_000_000;

struct Tmp(PathBuf);
impl Tmp {
    fn new(tag: &str) -> Tmp {
        let d = std::env::temp_dir().join(format!("agentsig-schema-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Tmp(d)
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
    fn write(&self, name: &str, bytes: impl AsRef<[u8]>) {
        std::fs::write(self.path(name), bytes).unwrap();
    }
}
impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run_in(dir: &Path, args: &[&str], stdin: Option<&[u8]>, env: &[(&str, &str)]) -> Run {
    let mut c = Command::new(env!("CARGO_BIN_EXE_agentsig"));
    c.args(args)
        .current_dir(dir)
        .env_remove("AGENTSIG_ALLOW_PRIVATE_NETWORKS")
        .env_remove("AGENTSIG_CA_FILE")
        .env_remove("AGENTSIG_PASSPHRASE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(b) = stdin {
        let _ = input.write_all(b);
    }
    drop(input);
    let o = child.wait_with_output().unwrap();
    Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// The reports collected by one test, each with what the Rust side expects
/// of it, validated together at the end.
#[derive(Default)]
struct Cases {
    reports: Vec<(String, Value)>,
}

/// What one `--json` run must give.
struct Want<'a> {
    code: i32,
    verdict: &'a str,
    command: &'a str,
    /// `Some(None)`: subject null; `None`: not checked.
    subject: Option<Option<&'a str>>,
    /// The `error.code` (verdict error or not-verified).
    error: Option<&'a str>,
}

fn want<'a>(code: i32, verdict: &'a str, command: &'a str) -> Want<'a> {
    Want {
        code,
        verdict,
        command,
        subject: None,
        error: None,
    }
}

impl<'a> Want<'a> {
    fn subject(mut self, s: &'a str) -> Self {
        self.subject = Some(Some(s));
        self
    }
    fn no_subject(mut self) -> Self {
        self.subject = Some(None);
        self
    }
    fn error(mut self, code: &'a str) -> Self {
        self.error = Some(code);
        self
    }
}

impl Cases {
    /// Run `args` (which hold `--json`) and check the one JSON object it
    /// prints against `w`; keep it for the schema validation.
    fn run(&mut self, dir: &Path, args: &[&str], stdin: Option<&[u8]>, w: Want<'_>) -> Value {
        self.run_env(dir, args, stdin, &[], w)
    }

    fn run_env(
        &mut self,
        dir: &Path,
        args: &[&str],
        stdin: Option<&[u8]>,
        env: &[(&str, &str)],
        w: Want<'_>,
    ) -> Value {
        assert!(args.contains(&"--json"), "{args:?}");
        let r = run_in(dir, args, stdin, env);
        let label = format!("{args:?}");
        assert_eq!(r.code, w.code, "{label}: {}{}", r.stdout, r.stderr);
        let v: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| {
            panic!(
                "{label}: standard output is not one JSON object ({e}): {}{}",
                r.stdout, r.stderr
            )
        });
        assert_eq!(v["schema"], "agentsig.report/1", "{label}: {v}");
        assert_eq!(v["verdict"], w.verdict, "{label}: {v}");
        assert_eq!(v["command"], w.command, "{label}: {v}");
        match w.subject {
            Some(Some(s)) => assert_eq!(v["subject"], s, "{label}: {v}"),
            Some(None) => assert!(v["subject"].is_null(), "{label}: {v}"),
            None => {}
        }
        if let Some(c) = w.error {
            assert_eq!(v["error"]["code"], c, "{label}: {v}");
        }
        self.reports.push((label, v.clone()));
        v
    }

    /// Validate every collected report against docs/report.schema.json.
    fn validate(&self) {
        validate_all(&self.reports, true);
    }
}

fn interop_required() -> bool {
    std::env::var("AGENTSIG_REQUIRE_INTEROP").is_ok_and(|v| v == "1")
}

/// Validate `(label, report)` pairs with Python `jsonschema`
/// (Draft202012Validator, format checks on). With `expect_valid`, every
/// report must be valid; without, every one must be refused (the schema's
/// own regression cases). Returns false when the validator is unavailable
/// and not required.
fn validate_all(reports: &[(String, Value)], expect_valid: bool) -> bool {
    const SCRIPT: &str = r#"
import json, sys
try:
    import jsonschema
except ImportError as e:
    print("UNAVAILABLE: " + str(e)); sys.exit(3)
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
v = jsonschema.Draft202012Validator(schema)
cases = json.load(sys.stdin)
expect_valid = sys.argv[2] == "valid"
bad = 0
for c in cases:
    errs = sorted(v.iter_errors(c["report"]), key=lambda e: list(e.path))
    if expect_valid and errs:
        bad += 1
        print("INVALID " + c["label"])
        for e in errs:
            print("  at /" + "/".join(str(p) for p in e.path) + ": " + e.message[:400])
    if not expect_valid and not errs:
        bad += 1
        print("ACCEPTED (should be refused) " + c["label"])
print("checked %d report(s)" % len(cases))
sys.exit(1 if bad else 0)
"#;
    assert!(!reports.is_empty());
    let cases: Vec<Value> = reports
        .iter()
        .map(|(l, r)| json!({"label": l, "report": r}))
        .collect();
    let input = serde_json::to_vec(&cases).unwrap();
    let child = Command::new("python3")
        .args([
            "-c",
            SCRIPT,
            SCHEMA,
            if expect_valid { "valid" } else { "invalid" },
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let why = match child {
        Ok(mut c) => {
            let _ = c.stdin.take().unwrap().write_all(&input);
            let o = c.wait_with_output().unwrap();
            let out = String::from_utf8_lossy(&o.stdout).into_owned();
            match o.status.code() {
                Some(0) => {
                    println!("jsonschema: {}", out.trim());
                    assert!(
                        out.contains(&format!("checked {} report(s)", reports.len())),
                        "{out}"
                    );
                    return true;
                }
                Some(3) => out,
                _ => panic!(
                    "schema validation failed:\n{out}{}",
                    String::from_utf8_lossy(&o.stderr)
                ),
            }
        }
        Err(e) => format!("python3: {e}"),
    };
    if interop_required() {
        panic!(
            "JSON Schema validation is required (AGENTSIG_REQUIRE_INTEROP=1) but unavailable: {why}; install with: .venv/bin/pip install jsonschema"
        );
    }
    println!(
        "SKIPPED JSON Schema validation: {why} (install: pip install jsonschema; set AGENTSIG_REQUIRE_INTEROP=1 to make this a failure)"
    );
    false
}

/// A directory with a key pair `k`, a second key `other`, and a signed
/// `agent.json` (the example agent:// descriptor).
fn setup(tag: &str) -> Tmp {
    let t = Tmp::new(tag);
    for k in ["k", "other"] {
        let r = run_in(&t.0, &["keygen", "--out", k], None, &[]);
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    t.write(
        "agent.json",
        std::fs::read(format!("{EXAMPLES}/agent.json")).unwrap(),
    );
    let r = run_in(&t.0, &["sign", "agent.json", "--key", "k.pem"], None, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    t
}

#[test]
fn keygen_canon_digest_lint_sign_reports_match_the_schema() {
    let t = setup("produce");
    let d = &t.0;
    let mut c = Cases::default();
    // keygen
    let v = c.run(
        d,
        &["keygen", "--out", "fresh", "--json"],
        None,
        want(0, "done", "keygen").subject("fresh"),
    );
    assert_eq!(v["details"]["files"].as_array().map(Vec::len), Some(4));
    c.run(
        d,
        &["keygen", "--out", "k", "--json"],
        None,
        want(2, "error", "keygen")
            .subject("k")
            .error("output.unwritable"),
    );
    // key public: success (the public JWK, never a private member), unreadable.
    let v = c.run(
        d,
        &["key", "public", "k.pem", "--as-jwks", "--json"],
        None,
        want(0, "done", "key public").subject("k.pem"),
    );
    assert_eq!(v["details"]["jwks"]["keys"][0], v["details"]["jwk"]);
    assert!(v["details"]["jwk"].get("d").is_none());
    c.run(
        d,
        &["key", "public", "missing.pem", "--json"],
        None,
        want(2, "error", "key public").subject("missing.pem"),
    );
    // canon: success, unreadable, malformed.
    t.write("messy.json", br#"{"b": 1, "a": [1.0, "x"]}"#);
    let v = c.run(
        d,
        &["canon", "messy.json", "--json"],
        None,
        want(0, "done", "canon").subject("messy.json"),
    );
    assert_eq!(v["details"]["canonical"], r#"{"a":[1,"x"],"b":1}"#);
    c.run(
        d,
        &["canon", "missing.json", "--json"],
        None,
        want(2, "error", "canon")
            .subject("missing.json")
            .error("input.unreadable"),
    );
    t.write("broken.json", b"{\"a\":");
    c.run(
        d,
        &["canon", "broken.json", "--json"],
        None,
        want(2, "error", "canon")
            .subject("broken.json")
            .error("input.malformed"),
    );
    // digest
    let v = c.run(
        d,
        &["digest", "-", "--alg", "sha-512", "--repr", "--json"],
        Some(b"hello"),
        want(0, "done", "digest").subject("-"),
    );
    assert_eq!(v["details"]["field"], "Repr-Digest");
    c.run(
        d,
        &["digest", "missing.bin", "--json"],
        None,
        want(2, "error", "digest")
            .subject("missing.bin")
            .error("input.unreadable"),
    );
    // lint: clean, errors (exit 1), unreadable.
    c.run(
        d,
        &["lint", "agent.json", "--json"],
        None,
        want(0, "verified", "lint").subject("agent.json"),
    );
    t.write(
        "internal.json",
        br#"{"name":"x","endpoints":[{"url":"https://10.0.0.1/a2a"}]}"#,
    );
    c.run(
        d,
        &["lint", "--format", "agent", "internal.json", "--json"],
        None,
        want(1, "not-verified", "lint").subject("internal.json"),
    );
    c.run(
        d,
        &["lint", "missing.json", "--json"],
        None,
        want(2, "error", "lint")
            .subject("missing.json")
            .error("input.unreadable"),
    );
    // sign: to a file, to standard output, an A2A card, refused by lint,
    // unreadable key.
    t.write(
        "two.json",
        std::fs::read(format!("{EXAMPLES}/agent.json")).unwrap(),
    );
    let v = c.run(
        d,
        &["sign", "two.json", "--key", "k.pem", "--json"],
        None,
        want(0, "done", "sign").subject("two.json"),
    );
    assert_eq!(v["details"]["jws_file"], "two.json.jws");
    assert!(t.path("two.json.jws").exists());
    let v = c.run(
        d,
        &["sign", "-", "--key", "k.pem", "--json"],
        Some(br#"{"name":"x"}"#),
        want(0, "done", "sign").subject("-"),
    );
    assert!(v["details"]["jws"]
        .as_str()
        .is_some_and(|j| j.contains("..")));
    t.write(
        "card.json",
        std::fs::read(format!("{EXAMPLES}/a2a-agent-card.json")).unwrap(),
    );
    c.run(
        d,
        &["sign", "card.json", "--key", "k.pem", "--json"],
        None,
        want(0, "done", "sign").subject("card.json"),
    );
    // A card whose v0.3 members no signature would cover: refused (exit 1).
    let mut card: Value =
        serde_json::from_slice(&std::fs::read(format!("{EXAMPLES}/a2a-agent-card.json")).unwrap())
            .unwrap();
    card["url"] = json!("https://elsewhere.example/a2a");
    t.write("v03.json", serde_json::to_vec(&card).unwrap());
    c.run(
        d,
        &["sign", "v03.json", "--key", "k.pem", "--json"],
        None,
        want(1, "not-verified", "sign")
            .subject("v03.json")
            .error("a2a.uncovered-security"),
    );
    let v = c.run(
        d,
        &[
            "sign",
            "--format",
            "agent",
            "internal.json",
            "--key",
            "k.pem",
            "--json",
        ],
        None,
        want(1, "not-verified", "sign")
            .subject("internal.json")
            .error("sign.lint-errors"),
    );
    assert!(v["checks"].as_array().is_some_and(|a| !a.is_empty()));
    c.run(
        d,
        &["sign", "agent.json", "--key", "nokey.pem", "--json"],
        None,
        want(2, "error", "sign")
            .subject("agent.json")
            .error("input.unreadable"),
    );
    c.validate();
}

#[test]
fn verify_reports_match_the_schema() {
    let t = setup("verify");
    let d = &t.0;
    let mut c = Cases::default();
    // verify FILE: verified, wrong key (1), tampered (1), missing (2).
    c.run(
        d,
        &["verify", "agent.json", "--key", "k.pub.pem", "--json"],
        None,
        want(0, "verified", "verify").subject("agent.json"),
    );
    c.run(
        d,
        &["verify", "agent.json", "--key", "other.pub.pem", "--json"],
        None,
        want(1, "not-verified", "verify")
            .subject("agent.json")
            .error("signature-mismatch"),
    );
    let mut doc: Value =
        serde_json::from_slice(&std::fs::read(t.path("agent.json")).unwrap()).unwrap();
    doc["name"] = json!("evil");
    t.write("tampered.json", serde_json::to_vec(&doc).unwrap());
    std::fs::copy(t.path("agent.json.jws"), t.path("tampered.json.jws")).unwrap();
    c.run(
        d,
        &["verify", "tampered.json", "--key", "k.pub.pem", "--json"],
        None,
        want(1, "not-verified", "verify").subject("tampered.json"),
    );
    c.run(
        d,
        &["verify", "missing.json", "--key", "k.pub.pem", "--json"],
        None,
        want(2, "error", "verify")
            .subject("missing.json")
            .error("input.unreadable"),
    );
    // The JWS cannot be read: the report keeps the JWS path in details.
    t.write("nojws.json", br#"{"name":"x"}"#);
    let v = c.run(
        d,
        &["verify", "nojws.json", "--key", "k.pub.pem", "--json"],
        None,
        want(2, "error", "verify")
            .subject("nojws.json")
            .error("input.unreadable"),
    );
    assert_eq!(v["details"]["jws"], "nojws.json.jws", "{v}");
    // verify CARD
    t.write(
        "card.json",
        std::fs::read(format!("{EXAMPLES}/a2a-agent-card.json")).unwrap(),
    );
    let r = run_in(d, &["sign", "card.json", "--key", "k.pem"], None, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    c.run(
        d,
        &["verify", "card.json", "--jwks", "k.jwks.json", "--json"],
        None,
        want(0, "verified", "verify").subject("card.json"),
    );
    c.run(
        d,
        &["verify", "card.json", "--jwks", "other.jwks.json", "--json"],
        None,
        want(1, "not-verified", "verify").subject("card.json"),
    );
    // verify --response: a signed saved response, then its body changed.
    let body = std::fs::read(t.path("agent.json")).unwrap();
    let mut resp = b"HTTP/1.1 200 OK\r\nContent-Type: application/agent+json\r\n\r\n".to_vec();
    resp.extend_from_slice(&body);
    t.write("resp.http", &resp);
    let r = run_in(
        d,
        &[
            "http",
            "sign",
            "resp.http",
            "--key",
            "k.pem",
            "--add-content-digest",
            "sha-256",
            "--out",
            "signed.http",
        ],
        None,
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    c.run(
        d,
        &[
            "verify",
            "agent.json",
            "--response",
            "signed.http",
            "--key",
            "k.pub.pem",
            "--json",
        ],
        None,
        want(0, "verified", "verify --response").subject("signed.http"),
    );
    let signed = std::fs::read(t.path("signed.http")).unwrap();
    let n = signed.len();
    let mut tampered = signed.clone();
    tampered[n - 3] ^= 0x01;
    t.write("digest-bad.http", &tampered);
    let v = c.run(
        d,
        &[
            "verify",
            "--response",
            "digest-bad.http",
            "--key",
            "k.pub.pem",
            "--json",
        ],
        None,
        want(1, "not-verified", "verify --response")
            .subject("digest-bad.http")
            .error("content-digest"),
    );
    digest_mismatch_is_a_check(&v);
    c.run(
        d,
        &[
            "verify",
            "--response",
            "missing.http",
            "--key",
            "k.pub.pem",
            "--json",
        ],
        None,
        want(2, "error", "verify --response")
            .subject("missing.http")
            .error("input.unreadable"),
    );
    // http verify: verified, digest mismatch, wrong key, unreadable,
    // not an HTTP message.
    let v = c.run(
        d,
        &[
            "http",
            "verify",
            "signed.http",
            "--key",
            "k.pub.pem",
            "--json",
        ],
        None,
        want(0, "verified", "http verify").subject("signed.http"),
    );
    let passed: Vec<&Value> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["code"] == "content-digest")
        .collect();
    assert!(
        passed.len() == 1 && passed[0]["passed"] == true,
        "a matching Content-Digest is a passed check: {v}"
    );
    let v = c.run(
        d,
        &[
            "http",
            "verify",
            "digest-bad.http",
            "--key",
            "k.pub.pem",
            "--json",
        ],
        None,
        want(1, "not-verified", "http verify")
            .subject("digest-bad.http")
            .error("content-digest"),
    );
    digest_mismatch_is_a_check(&v);
    c.run(
        d,
        &[
            "http",
            "verify",
            "signed.http",
            "--key",
            "other.pub.pem",
            "--json",
        ],
        None,
        want(1, "not-verified", "http verify").subject("signed.http"),
    );
    c.run(
        d,
        &[
            "http",
            "verify",
            "missing.http",
            "--key",
            "k.pub.pem",
            "--json",
        ],
        None,
        want(2, "error", "http verify")
            .subject("missing.http")
            .error("input.unreadable"),
    );
    t.write("junk.http", b"not http at all");
    c.run(
        d,
        &[
            "http",
            "verify",
            "junk.http",
            "--key",
            "k.pub.pem",
            "--json",
        ],
        None,
        want(2, "error", "http verify")
            .subject("junk.http")
            .error("input.malformed"),
    );
    // http sign: success, unreadable key.
    let v = c.run(
        d,
        &[
            "http",
            "sign",
            "resp.http",
            "--key",
            "k.pem",
            "--kid",
            "publisher",
            "--add-content-digest",
            "sha-256",
            "--json",
        ],
        None,
        want(0, "done", "http sign").subject("resp.http"),
    );
    assert!(v["details"]["signature_input"]
        .as_str()
        .is_some_and(|s| s.contains("keyid=\"publisher\"")));
    c.run(
        d,
        &["http", "sign", "resp.http", "--key", "nokey.pem", "--json"],
        None,
        want(2, "error", "http sign")
            .subject("resp.http")
            .error("input.unreadable"),
    );
    c.validate();
}

/// A body that does not match its Content-Digest: the signature over the
/// field is valid, and the digest is a failed check of its own beside it
/// (RFC 9421 section 7.2.8). The old report marked the signature invalid
/// and left `checks` empty.
fn digest_mismatch_is_a_check(v: &Value) {
    let sig = v["signatures"]
        .as_array()
        .and_then(|a| a.iter().find(|s| s["kind"] == "http-message-signature"))
        .unwrap_or_else(|| panic!("an RFC 9421 signature: {v}"));
    assert_eq!(sig["verdict"], "valid", "{v}");
    assert!(sig["reason"].is_null(), "{v}");
    let checks: Vec<&Value> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["code"] == "content-digest")
        .collect();
    assert_eq!(checks.len(), 1, "{v}");
    assert_eq!(checks[0]["passed"], false, "{v}");
    assert_eq!(checks[0]["severity"], "error", "{v}");
    assert_eq!(v["verified"], false, "{v}");
}

fn mint_args<'a>(key_opt: &'a str, n: &'a str) -> Vec<&'a str> {
    vec![
        "delegation",
        "mint",
        key_opt,
        "k.pem",
        "--iss",
        AS,
        "--sub",
        "user@example.com",
        "--aud",
        "https://agent-a.example.com",
        "--scope",
        "calendar:read mail:read",
        "--may-act",
        "https://agent-a.example.com",
        "--now",
        n,
    ]
}

#[test]
fn delegation_and_pin_reports_match_the_schema() {
    let t = setup("deleg");
    let d = &t.0;
    let mut c = Cases::default();
    let n = N.to_string();
    // mint: --key (the name every signing command uses) and the old
    // --signing-key (a hidden alias) give the same kind of token.
    let mut a = mint_args("--key", &n);
    a.push("--json");
    let v = c.run(d, &a, None, want(0, "done", "delegation mint").no_subject());
    let t0 = v["details"]["token"].as_str().unwrap().to_owned();
    t.write("t0", &t0);
    let old = run_in(d, &mint_args("--signing-key", &n), None, &[]);
    assert_eq!(old.code, 0, "{}", old.stderr);
    assert_eq!(old.stdout.trim().split('.').count(), 3, "{}", old.stdout);
    let mut a = mint_args("--key", &n);
    a[3] = "nokey.pem";
    a.push("--json");
    c.run(
        d,
        &a,
        None,
        want(2, "error", "delegation mint")
            .no_subject()
            .error("input.unreadable"),
    );
    // exchange: success (RFC 8693 response in details), scope widened (1),
    // unreadable subject token (2).
    let n60 = (N + 60).to_string();
    let ex = |scope: &'static str, subject: &'static str| -> Vec<String> {
        [
            "delegation",
            "exchange",
            "--signing-key",
            "k.pem",
            "--jwks",
            "k.jwks.json",
            "--subject-token",
            subject,
            "--actor",
            "https://agent-a.example.com",
            "--iss",
            AS,
            "--aud",
            "https://calendar.example.com",
            "--scope",
            scope,
            "--now",
            &n60,
            "--json",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let args = ex("calendar:read", "t0");
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let v = c.run(
        d,
        &refs,
        None,
        want(0, "done", "delegation exchange").subject("t0"),
    );
    t.write(
        "t1",
        v["details"]["response"]["access_token"].as_str().unwrap(),
    );
    let args = ex("calendar:read admin", "t0");
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let v = c.run(
        d,
        &refs,
        None,
        want(1, "not-verified", "delegation exchange")
            .subject("t0")
            .error("exchange.scope-widened"),
    );
    assert_eq!(v["details"]["response"]["error"], "invalid_scope", "{v}");
    let args = ex("calendar:read", "missing-token");
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    c.run(
        d,
        &refs,
        None,
        want(2, "error", "delegation exchange")
            .subject("missing-token")
            .error("input.unreadable"),
    );
    // audit: pass, fail (wrong key), unreadable.
    let audit = |key: &'static str, files: &[&'static str]| -> Vec<String> {
        let mut v: Vec<String> = vec!["delegation".into(), "audit".into()];
        v.extend(files.iter().map(|s| s.to_string()));
        v.extend(
            [
                "--jwks",
                key,
                "--issuer",
                AS,
                "--audience",
                "https://calendar.example.com",
                "--now",
                "1760000100",
                "--json",
            ]
            .iter()
            .map(|s| s.to_string()),
        );
        v
    };
    let args = audit("k.jwks.json", &["t0", "t1"]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    c.run(
        d,
        &refs,
        None,
        want(0, "verified", "delegation audit").subject("t0 t1"),
    );
    let args = audit("other.jwks.json", &["t1"]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    c.run(
        d,
        &refs,
        None,
        want(1, "not-verified", "delegation audit").subject("t1"),
    );
    t.write("blank", b"  \n");
    let args = audit("k.jwks.json", &["blank"]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    c.run(
        d,
        &refs,
        None,
        want(2, "error", "delegation audit")
            .subject("blank")
            .error("input.malformed"),
    );
    let args = audit("k.jwks.json", &["missing-token"]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    c.run(
        d,
        &refs,
        None,
        want(2, "error", "delegation audit")
            .subject("missing-token")
            .error("input.unreadable"),
    );
    // pin: every subcommand, success and failure.
    let id = "https://agents.example/planner";
    c.run(
        d,
        &[
            "pin",
            "check",
            "--pin-store",
            "pins",
            id,
            "k.pub.pem",
            "--json",
        ],
        None,
        want(0, "verified", "pin check").subject(id),
    );
    c.run(
        d,
        &[
            "pin",
            "check",
            "--pin-store",
            "pins",
            id,
            "k.pub.pem",
            "--json",
        ],
        None,
        want(0, "verified", "pin check").subject(id),
    );
    c.run(
        d,
        &[
            "pin",
            "check",
            "--pin-store",
            "pins",
            id,
            "other.pub.pem",
            "--json",
        ],
        None,
        want(1, "not-verified", "pin check")
            .subject(id)
            .error("pin.key-changed"),
    );
    c.run(
        d,
        &[
            "pin",
            "check",
            "--pin-store",
            "pins",
            id,
            "missing.pem",
            "--json",
        ],
        None,
        want(2, "error", "pin check")
            .subject(id)
            .error("input.unreadable"),
    );
    c.run(
        d,
        &[
            "pin",
            "add",
            "--pin-store",
            "pins",
            "other-id",
            "k.pub.pem",
            "--json",
        ],
        None,
        want(0, "done", "pin add").subject("other-id"),
    );
    c.run(
        d,
        &[
            "pin",
            "add",
            "--pin-store",
            "pins",
            "other-id",
            "nope.pem",
            "--json",
        ],
        None,
        want(2, "error", "pin add").subject("other-id"),
    );
    c.run(
        d,
        &[
            "pin",
            "rotate",
            "--pin-store",
            "pins",
            "other-id",
            "--to",
            "other.pub.pem",
            "--json",
        ],
        None,
        want(0, "done", "pin rotate").subject("other-id"),
    );
    c.run(
        d,
        &[
            "pin",
            "rotate",
            "--pin-store",
            "pins",
            "other-id",
            "--to",
            "nope.pem",
            "--json",
        ],
        None,
        want(2, "error", "pin rotate").subject("other-id"),
    );
    let v = c.run(
        d,
        &["pin", "list", "--pin-store", "pins", "--json"],
        None,
        want(0, "done", "pin list").subject("pins"),
    );
    assert!(v["details"]["pins"][id].is_array(), "{v}");
    c.run(
        d,
        &["pin", "list", "--pin-store", "redis://", "--json"],
        None,
        want(2, "error", "pin list").subject("redis://"),
    );
    // announce with the pinned key (--key, as on every signing command),
    // then accept it.
    c.run(
        d,
        &[
            "pin",
            "announce",
            id,
            "--new-key",
            "other.pub.pem",
            "--key",
            "k.pem",
            "--out",
            "ann.json",
            "--now",
            &n,
            "--json",
        ],
        None,
        want(0, "done", "pin announce").subject(id),
    );
    c.run(
        d,
        &[
            "pin",
            "announce",
            id,
            "--new-key",
            "other.pub.pem",
            "--key",
            "nokey.pem",
            "--out",
            "ann2.json",
            "--json",
        ],
        None,
        want(2, "error", "pin announce")
            .subject(id)
            .error("input.unreadable"),
    );
    // Accepting with a key that is not pinned fails (1); with the pinned
    // key it succeeds.
    c.run(
        d,
        &[
            "pin",
            "accept",
            "--pin-store",
            "pins",
            id,
            "ann.json",
            "--key",
            "other.pub.pem",
            "--now",
            &n,
            "--json",
        ],
        None,
        want(1, "not-verified", "pin accept")
            .subject(id)
            .error("pin.announcement"),
    );
    c.run(
        d,
        &[
            "pin",
            "accept",
            "--pin-store",
            "pins",
            id,
            "ann.json",
            "--key",
            "k.pub.pem",
            "--now",
            &n,
            "--json",
        ],
        None,
        want(0, "verified", "pin accept").subject(id),
    );
    c.validate();
}

#[test]
fn url_and_usage_error_reports_match_the_schema() {
    use net_support::{Ca, Resp, Server};
    let t = Tmp::new("url");
    let d = &t.0;
    let mut c = Cases::default();
    let ca = Ca::new();
    let srv = Server::start(&ca, &["agents.example"]);
    let ca_file = t.path("ca.pem");
    std::fs::write(&ca_file, ca.pem()).unwrap();
    let ca_file = ca_file.to_str().unwrap().to_owned();
    let key = agentsig::SigningKey::generate(agentsig::Algorithm::EcdsaP256Sha256)
        .unwrap()
        .with_kid("k1");
    let mut j = key.verifying_key().to_jwk().to_value();
    j["use"] = json!("sig");
    srv.route("/jwks", Resp::json(&json!({ "keys": [j] })));
    let body = serde_json::to_vec(&json!({
        "name": "planner",
        "authentication": {"jwksUri": srv.url("agents.example", "/jwks")}
    }))
    .unwrap();
    let jws = agentsig::descriptor::sign(&body, &key).unwrap().jws;
    srv.route("/planner.json", Resp::ok("application/json", body));
    srv.route("/planner.json.jws", Resp::ok("application/jose", jws));
    srv.route(
        "/plain.json",
        Resp::ok("application/json", "{\"name\":\"p\"}"),
    );
    srv.route(
        "/.well-known/agents.json",
        Resp::json(&json!({"agents": {"planner": "/planner.json"}})),
    );
    let env = [("AGENTSIG_ALLOW_PRIVATE_NETWORKS", "1")];
    let net = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        v.extend(
            [
                "--ca-file",
                &ca_file,
                "--resolve-to",
                "agents.example=127.0.0.1",
                "--json",
            ]
            .iter()
            .map(|s| s.to_string()),
        );
        v
    };
    let url = srv.url("agents.example", "/planner.json");
    let plain = srv.url("agents.example", "/plain.json");
    let uri = format!("agent://agents.example:{}/planner", srv.port);
    let args = net(&["verify", &url, "--require-signed"]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    c.run_env(
        d,
        &refs,
        None,
        &env,
        want(0, "verified", "verify").subject(&url),
    );
    let args = net(&["verify", &plain, "--require-signed"]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    c.run_env(
        d,
        &refs,
        None,
        &env,
        want(1, "unsigned", "verify").subject(&plain),
    );
    // Unsigned: refused by default, accepted (never verified) by policy.
    let args = net(&["verify", &plain]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    c.run_env(
        d,
        &refs,
        None,
        &env,
        want(1, "unsigned", "verify").subject(&plain),
    );
    let args = net(&["verify", &plain, "--allow-unsigned"]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    c.run_env(
        d,
        &refs,
        None,
        &env,
        want(0, "unsigned", "verify").subject(&plain),
    );
    // A key set that cannot be fetched: unavailable, its signature
    // not-checked with the fetch's reason.
    let gone = serde_json::to_vec(&json!({
        "name": "gone",
        "authentication": {"jwksUri": srv.url("agents.example", "/no-jwks")}
    }))
    .unwrap();
    let gone_jws = agentsig::descriptor::sign(&gone, &key).unwrap().jws;
    srv.route("/gone.json", Resp::ok("application/json", gone));
    srv.route("/gone.json.jws", Resp::ok("application/jose", gone_jws));
    let gone_url = srv.url("agents.example", "/gone.json");
    let args = net(&["verify", &gone_url]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    c.run_env(
        d,
        &refs,
        None,
        &env,
        want(1, "unavailable", "verify").subject(&gone_url),
    );
    let args = net(&["resolve", &uri, "--require-signed"]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    c.run_env(
        d,
        &refs,
        None,
        &env,
        want(0, "verified", "resolve").subject(&uri),
    );
    // Without private networks allowed, the loopback address is refused.
    let args = net(&["resolve", &uri]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    c.run(
        d,
        &refs,
        None,
        want(1, "not-verified", "resolve").subject(&uri),
    );
    let args = net(&["lint", &plain]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    c.run_env(
        d,
        &refs,
        None,
        &env,
        want(2, "error", "lint").subject(&plain),
    );
    // Usage errors: an unknown option, an unknown command (reported as
    // `agentsig`, never the typo), a missing argument.
    c.run(
        d,
        &["verify", "--no-such-flag", "--json"],
        None,
        want(2, "error", "verify").error("usage"),
    );
    c.run(
        d,
        &["frobnicate", "--json"],
        None,
        want(2, "error", "agentsig").error("usage"),
    );
    c.run(
        d,
        &["pin", "check", "--json"],
        None,
        want(2, "error", "pin check").error("usage"),
    );
    c.validate();
}

/// The schema is not vacuous: reports that break its rules are refused.
#[test]
fn the_schema_refuses_reports_that_break_its_rules() {
    let good = json!({
        "schema": "agentsig.report/1", "command": "verify", "subject": "a.json",
        "verdict": "verified", "verified": true, "signatures": [{
            "kind": "jws", "id": "0", "verdict": "valid", "algorithm": "ES256", "kid": null,
            "key": {"source": {"kind": "file", "from": "k.pem"},
                    "thumbprint": "hO-KX3WX0WXRqaNBv0Q8N7werKr_9KFpQ8r6fFpAaL8"},
            "reason": null}],
        "checks": [], "error": null
    });
    if !validate_all(&[("good".into(), good.clone())], true) {
        return;
    }
    let mut bad: Vec<(String, Value)> = Vec::new();
    let mut m = |label: &str, f: &dyn Fn(&mut Value)| {
        let mut v = good.clone();
        f(&mut v);
        bad.push((label.to_owned(), v));
    };
    m("verified flag disagrees", &|v| v["verified"] = json!(false));
    m("unknown verdict", &|v| v["verdict"] = json!("ok"));
    m("unsigned but verified", &|v| {
        v["verdict"] = json!("unsigned")
    });
    m("unsigned without a reason", &|v| {
        v["verdict"] = json!("unsigned");
        v["verified"] = json!(false);
    });
    m("unavailable without a reason", &|v| {
        v["verdict"] = json!("unavailable");
        v["verified"] = json!(false);
    });
    m("unknown member", &|v| v["extra"] = json!(1));
    m("missing subject", &|v| {
        v.as_object_mut().unwrap().remove("subject");
    });
    m("error verdict without error", &|v| {
        v["verdict"] = json!("error");
        v["verified"] = json!(false);
    });
    m("verified with a failed check", &|v| {
        v["checks"] = json!([{"code": "content-digest", "severity": "error", "passed": false,
                              "hop": null, "message": "m"}]);
    });
    m("invalid signature without reason", &|v| {
        v["signatures"][0]["verdict"] = json!("invalid");
    });
    m("done with a signature", &|v| {
        v["verdict"] = json!("done");
        v["verified"] = json!(false);
        v["details"] = json!({});
    });
    m("unknown command", &|v| v["command"] = json!("frobnicate"));
    m("keygen without files", &|v| {
        v["command"] = json!("keygen");
        v["verdict"] = json!("done");
        v["verified"] = json!(false);
        v["signatures"] = json!([]);
        v["details"] = json!({"kid": "k"});
    });
    validate_all(&bad, false);
}

/// Web Bot Auth: `directory build`, and `http sign`/`http verify` with
/// `--profile web-bot-auth` (keys from a local copy of the directory, so
/// no network), success and failure, all in the one shape.
/// `inspect --json`: verified, not verified, and unreadable input (the
/// inputs of tests/fixtures/inspect; tests/inspect_cli.rs holds the rest).
#[test]
fn inspect_reports_match_the_schema() {
    let t = setup("inspect");
    let d = &t.0;
    let fx = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/inspect");
    let mut c = Cases::default();
    let k = format!("{fx}/keys/agent.pub.pem");
    let ok = format!("{fx}/http-request.http");
    let v = c.run(
        d,
        &["inspect", &ok, "--key", &k, "--now", "1764600060", "--json"],
        None,
        want(0, "verified", "inspect").subject(&ok),
    );
    assert_eq!(v["details"]["inspection"]["kind"], "http-request", "{v}");
    let bad = format!("{fx}/http-request-tampered.http");
    c.run(
        d,
        &[
            "inspect",
            &bad,
            "--key",
            &k,
            "--now",
            "1764600060",
            "--json",
        ],
        None,
        want(1, "not-verified", "inspect")
            .subject(&bad)
            .error("content-digest"),
    );
    c.run(
        d,
        &["inspect", "-", "--key", &k, "--json"],
        Some(b"not a message"),
        want(2, "error", "inspect").error("input.malformed"),
    );
    c.validate();
}

#[test]
fn web_bot_auth_reports_match_the_schema() {
    let t = setup("wba");
    let d = &t.0;
    let mut c = Cases::default();
    let r = run_in(d, &["keygen", "--alg", "ed25519", "--out", "ed"], None, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = c.run(
        d,
        &[
            "directory",
            "build",
            "--key",
            "ed.pem",
            "--authority",
            "agent.example",
            "--out",
            "dir.json",
            "--json",
        ],
        None,
        want(0, "done", "directory build").subject("dir.json"),
    );
    assert_eq!(v["details"]["signed"], true);
    c.run(
        d,
        &[
            "directory",
            "build",
            "--key",
            "missing.pem",
            "--out",
            "x.json",
            "--json",
        ],
        None,
        want(2, "error", "directory build").subject("x.json"),
    );
    t.write(
        "req.http",
        b"GET /catalog HTTP/1.1\r\nHost: shop.example\r\n\r\n",
    );
    let v = c.run(
        d,
        &[
            "http",
            "sign",
            "req.http",
            "--key",
            "ed.pem",
            "--profile",
            "web-bot-auth",
            "--signature-agent",
            "https://agent.example",
            "--json",
        ],
        None,
        want(0, "done", "http sign").subject("req.http"),
    );
    assert_eq!(v["details"]["profile"], "web-bot-auth");
    let r = run_in(
        d,
        &[
            "http",
            "sign",
            "req.http",
            "--key",
            "ed.pem",
            "--profile",
            "web-bot-auth",
            "--signature-agent",
            "https://agent.example",
            "--out",
            "signed.http",
        ],
        None,
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let key_set = format!(
        "https://agent.example/.well-known/http-message-signatures-directory={}",
        d.join("dir.json").display()
    );
    let v = c.run(
        d,
        &[
            "http",
            "verify",
            "signed.http",
            "--profile",
            "web-bot-auth",
            "--authority",
            "shop.example",
            "--key-set",
            &key_set,
            "--json",
        ],
        None,
        want(0, "verified", "http verify").subject("signed.http"),
    );
    assert_eq!(v["signatures"][0]["verdict"], "valid", "{v}");
    let signed = std::fs::read_to_string(d.join("signed.http")).unwrap();
    t.write(
        "tampered.http",
        signed.replace("/catalog", "/admin").as_bytes(),
    );
    c.run(
        d,
        &[
            "http",
            "verify",
            "tampered.http",
            "--profile",
            "web-bot-auth",
            "--authority",
            "shop.example",
            "--key-set",
            &key_set,
            "--json",
        ],
        None,
        want(1, "not-verified", "http verify").subject("tampered.http"),
    );
    c.validate();
}

/// Every leaf subcommand `agentsig --help` lists either takes `--json` and
/// is covered by the tests above, or is one of the few that print no
/// verdict (shell completions, the manual, the long-running server).
#[test]
fn every_subcommand_in_help_is_covered() {
    const COVERED: &[&str] = &[
        "keygen",
        "canon",
        "lint",
        "sign",
        "verify",
        "http sign",
        "http verify",
        "inspect",
        "digest",
        "delegation audit",
        "delegation mint",
        "delegation exchange",
        "pin check",
        "pin add",
        "pin rotate",
        "pin list",
        "pin announce",
        "pin accept",
        "resolve",
        "directory build",
        "key public",
        // Its report is checked in tests/crawl_cluster.rs (it needs Redis).
        "crawl status",
    ];
    // A crawl's results are reports in the results stream; these print no
    // verdict of their own.
    const NO_JSON: &[&str] = &[
        "completions",
        "man",
        "serve",
        "crawl add",
        "crawl work",
        "crawl stop",
        "crawl resume",
        "crawl results",
        "crawl delete",
    ];
    fn subcommands(path: &[&str]) -> Vec<String> {
        let mut args: Vec<&str> = path.to_vec();
        args.push("--help");
        let r = run_in(&std::env::temp_dir(), &args, None, &[]);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        let mut in_list = false;
        let mut out = Vec::new();
        for line in r.stdout.lines() {
            if line.starts_with("Commands:") {
                in_list = true;
                continue;
            }
            if in_list {
                if line.is_empty() || !line.starts_with("  ") {
                    break;
                }
                // Names sit at a two-space indent; wrapped text is deeper.
                let rest = &line[2..];
                if rest.starts_with(' ') {
                    continue;
                }
                if let Some(name) = rest.split_whitespace().next() {
                    if name != "help" {
                        out.push(name.to_owned());
                    }
                }
            }
        }
        out
    }
    let mut leaves = Vec::new();
    for top in subcommands(&[]) {
        let subs = subcommands(&[&top]);
        if subs.is_empty() {
            leaves.push(top);
        } else {
            leaves.extend(subs.into_iter().map(|s| format!("{top} {s}")));
        }
    }
    assert!(leaves.len() >= COVERED.len(), "{leaves:?}");
    for leaf in &leaves {
        let words: Vec<&str> = leaf.split(' ').collect();
        let mut args = words.clone();
        args.push("--help");
        let help = run_in(&std::env::temp_dir(), &args, None, &[]).stdout;
        if NO_JSON.contains(&leaf.as_str()) {
            assert!(!help.contains("--json"), "{leaf}: {help}");
            continue;
        }
        assert!(
            COVERED.contains(&leaf.as_str()),
            "{leaf} is listed by --help but not covered by the report schema tests"
        );
        assert!(help.contains("--json"), "{leaf} has no --json: {help}");
        assert!(
            help.contains("agentsig.report/1"),
            "{leaf}: the --json help names the report schema: {help}"
        );
    }
    for c in COVERED {
        assert!(
            leaves.iter().any(|l| l == c),
            "{c} not in --help: {leaves:?}"
        );
    }
}

/// Signing with a published test key (keys/) warns on standard error,
/// recognised by its public key wherever the file lives: every private key
/// in keys/ (the RFC 9421 appendix B.1 keys, the HMAC secret, the example
/// key), on `http sign`, `sign` (also as a `key.published-test-key` warning
/// in its report), `delegation mint` and `serve`. A fresh key does not warn.
#[test]
fn signing_with_a_published_test_key_warns() {
    let t = Tmp::new("testkey");
    let d = &t.0;
    t.write("d.json", br#"{"name":"x"}"#);
    t.write(
        "r.http",
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nhi",
    );
    let mut private = Vec::new();
    for dir in ["keys", "keys/rfc9421"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_str().unwrap().to_owned();
            let is_private =
                (name.ends_with(".pem") && !name.ends_with(".pub.pem")) || name.ends_with(".b64");
            if is_private {
                private.push((name, p));
            }
        }
    }
    assert!(private.len() >= 6, "{private:?}");
    for (name, path) in &private {
        let alg = if name.contains("rsa-pss") {
            Some("rsa-pss-sha512")
        } else if name.contains("rsa") {
            Some("rsa-v1_5-sha256")
        } else if name.ends_with(".b64") {
            Some("hmac-sha256")
        } else {
            None
        };
        let mut args = vec![
            "http",
            "sign",
            "r.http",
            "-c",
            "@status",
            "--key",
            path.to_str().unwrap(),
        ];
        if let Some(a) = alg {
            args.extend(["--alg", a]);
        }
        let r = run_in(d, &args, None, &[]);
        assert_eq!(r.code, 0, "{name}: {}", r.stderr);
        assert!(
            r.stderr.contains("published test key"),
            "{name}: {}",
            r.stderr
        );
    }
    // A copy under another name is still recognised; sign's report carries
    // the warning too.
    std::fs::copy(TEST_KEY, t.path("innocent.pem")).unwrap();
    let mut c = Cases::default();
    let v = c.run(
        d,
        &[
            "sign",
            "d.json",
            "--key",
            "innocent.pem",
            "--no-headers",
            "--out",
            "a.jws",
            "--json",
        ],
        None,
        want(0, "done", "sign").subject("d.json"),
    );
    assert!(
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["code"] == "key.published-test-key" && c["severity"] == "warning"),
        "{v}"
    );
    c.validate();
    let r = run_in(
        d,
        &[
            "delegation",
            "mint",
            "--key",
            "innocent.pem",
            "--iss",
            "i",
            "--sub",
            "s",
        ],
        None,
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("published test key"), "{}", r.stderr);
    // serve warns when it loads the key (here it then stops: no DIR).
    let r = run_in(
        d,
        &[
            "serve",
            "no-such-dir",
            "--key",
            "innocent.pem",
            "--listen",
            "127.0.0.1:0",
        ],
        None,
        &[],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("published test key"), "{}", r.stderr);
    let r = run_in(d, &["keygen", "--out", "fresh"], None, &[]);
    assert_eq!(r.code, 0);
    let r = run_in(
        d,
        &[
            "sign",
            "d.json",
            "--key",
            "fresh.pem",
            "--no-headers",
            "--out",
            "c.jws",
        ],
        None,
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("published test key"), "{}", r.stderr);
}

/// `man --out DIR` creates DIR (and its parents) when missing.
#[test]
fn man_out_creates_the_directory() {
    let t = Tmp::new("man");
    let r = run_in(&t.0, &["man", "--out", "pages/en"], None, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(t.path("pages/en/agentsig.1").is_file());
    assert!(t.path("pages/en/agentsig-http-verify.1").is_file());
}

/// `sign CATALOG` and `verify CATALOG`: one result per entry in `details`,
/// verified, not verified (a changed manifest, `--require-signed` over an
/// unsigned entry) and unreadable, all in the one report shape.
#[test]
fn catalog_reports_match_the_schema() {
    let t = setup("catalog");
    let d = &t.0;
    let mut c = Cases::default();
    t.write(
        "cat.json",
        std::fs::read(format!("{EXAMPLES}/ai-catalog.json")).unwrap(),
    );
    let v = c.run(
        d,
        &["verify", "cat.json", "--jwks", "k.jwks.json", "--json"],
        None,
        want(1, "not-verified", "verify").subject("cat.json"),
    );
    assert_eq!(v["details"]["entries"].as_array().map(Vec::len), Some(3));
    let s = c.run(
        d,
        &["sign", "cat.json", "--key", "k.pem", "--json"],
        None,
        want(0, "done", "sign").subject("cat.json"),
    );
    assert_eq!(
        s["details"]["manifests_signed"].as_array().map(Vec::len),
        Some(3)
    );
    // --digest-from: the digests written, in the report.
    let mut doc: Value =
        serde_json::from_slice(&std::fs::read(t.path("cat.json")).unwrap()).unwrap();
    doc["entries"][2]["trustManifest"]["provenance"] =
        json!([{"relation": "publishedFrom", "sourceId": doc["entries"][2]["url"]}]);
    t.write("digest.json", serde_json::to_vec(&doc).unwrap());
    std::fs::create_dir_all(t.path("site/skills")).unwrap();
    t.write("site/skills/review.zip", b"PK zip");
    let s = c.run(
        d,
        &[
            "sign",
            "digest.json",
            "--key",
            "k.pem",
            "--digest-from",
            "site",
            "--json",
        ],
        None,
        want(0, "done", "sign").subject("digest.json"),
    );
    assert_eq!(
        s["details"]["digests_filled"][0]["pointer"],
        "/entries/2/trustManifest/provenance/0/sourceDigest",
        "{s}"
    );
    let v = c.run(
        d,
        &[
            "verify",
            "cat.json",
            "--jwks",
            "k.jwks.json",
            "--require-signed",
            "--json",
        ],
        None,
        want(1, "not-verified", "verify").subject("cat.json"),
    );
    // The host manifest and the inline A2A card are still the example key's.
    assert_eq!(
        v["details"]["entries"][1]["manifest"]["status"], "verified",
        "{v}"
    );
    let mut doc: Value =
        serde_json::from_slice(&std::fs::read(t.path("cat.json")).unwrap()).unwrap();
    doc["entries"][1]["trustManifest"]["privacyPolicyUrl"] = json!("https://evil.example/");
    t.write("changed.json", serde_json::to_vec(&doc).unwrap());
    let v = c.run(
        d,
        &["verify", "changed.json", "--jwks", "k.jwks.json", "--json"],
        None,
        want(1, "not-verified", "verify").subject("changed.json"),
    );
    assert_eq!(
        v["details"]["entries"][1]["manifest"]["status"], "failed",
        "{v}"
    );
    c.run(
        d,
        &["verify", "missing.json", "--jwks", "k.jwks.json", "--json"],
        None,
        want(2, "error", "verify").subject("missing.json"),
    );
    c.validate();
}

/// `verify --batch DIR --json`: every JSON line (a descriptor, a catalog
/// file's entries, a failure, the summary) in the one report shape; a
/// summary with failures names why in `error`.
#[test]
fn batch_json_lines_with_a_catalog_match_the_schema() {
    let t = setup("batch");
    let d = &t.0;
    std::fs::create_dir_all(d.join("in")).unwrap();
    for f in ["agent.json", "agent.json.jws"] {
        std::fs::copy(d.join(f), d.join("in").join(f)).unwrap();
    }
    t.write("in/unsigned.json", br#"{"name":"no jws"}"#);
    let cat = json!({"specVersion": "1.0", "entries": [
        {"identifier": "urn:a", "displayName": "A", "mediaType": "application/zip", "url": "https://example.com/a.zip"},
        {"identifier": "urn:n", "displayName": "N", "mediaType": "application/ai-catalog+json",
         "data": {"specVersion": "1.0", "entries": [
            {"identifier": "urn:b", "displayName": "B", "mediaType": "application/zip", "data": {}}]}}]});
    t.write("in/cat.json", serde_json::to_vec(&cat).unwrap());
    let r = run_in(
        d,
        &[
            "verify",
            "--batch",
            "in",
            "--jwks",
            "k.jwks.json",
            "--json",
            "--ordered",
        ],
        None,
        &[],
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let lines: Vec<Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // agent.json, cat.json's two entries, unsigned.json, the summary.
    assert_eq!(lines.len(), 5, "{}", r.stdout);
    assert_eq!(lines[0]["verdict"], "verified", "{}", lines[0]);
    assert_eq!(
        lines[1]["details"]["catalog_entry"],
        "in/cat.json#/entries/0"
    );
    assert_eq!(
        lines[2]["details"]["catalog_entry"],
        "in/cat.json#/entries/1/data/entries/0"
    );
    assert_eq!(lines[3]["verdict"], "not-verified");
    let summary = &lines[4];
    assert_eq!(summary["verdict"], "not-verified", "{summary}");
    assert_eq!(
        summary["error"]["code"], "batch.not-all-verified",
        "{summary}"
    );
    let reports: Vec<(String, Value)> = lines
        .into_iter()
        .enumerate()
        .map(|(i, v)| (format!("batch line {i}"), v))
        .collect();
    validate_all(&reports, true);
}
