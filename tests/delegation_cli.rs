//! `agentsig delegation audit | mint | exchange` end to end: exit codes
//! 0 (passes policy), 1 (fails), 2 (unreadable input).

use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_agentsig");
const N: i64 = 1_760_000_000;
const AS: &str = "https://as.example.com";

#[path = "tmp_support/mod.rs"]
mod tmp;

/// The test's directory, removed when it is dropped.
fn dir(name: &str) -> tmp::TempDir {
    tmp::TempDir::new(&format!("dcli-{name}"))
}

fn run(d: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .current_dir(d)
        .args(args)
        .output()
        .unwrap()
}

fn ok(d: &Path, args: &[&str]) -> String {
    let o = run(d, args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn chain(d: &Path) {
    assert!(run(d, &["keygen", "--out", "as"]).status.success());
    let t0 = ok(
        d,
        &[
            "delegation",
            "mint",
            "--signing-key",
            "as.pem",
            "--iss",
            AS,
            "--sub",
            "user@example.com",
            "--aud",
            "https://agent-a.example.com",
            "--scope",
            "calendar:read calendar:write mail:read",
            "--may-act",
            "https://agent-a.example.com",
            "--now",
            &N.to_string(),
        ],
    );
    std::fs::write(d.join("t0"), t0).unwrap();
    let t1 = ok(
        d,
        &[
            "delegation",
            "exchange",
            "--signing-key",
            "as.pem",
            "--jwks",
            "as.jwks.json",
            "--subject-token",
            "t0",
            "--actor",
            "https://agent-a.example.com",
            "--iss",
            AS,
            "--aud",
            "https://agent-b.example.com",
            "--scope",
            "calendar:read mail:read",
            "--may-act",
            "https://agent-b.example.com",
            "--now",
            &(N + 60).to_string(),
        ],
    );
    std::fs::write(d.join("t1"), t1).unwrap();
    let t2 = ok(
        d,
        &[
            "delegation",
            "exchange",
            "--signing-key",
            "as.pem",
            "--jwks",
            "as.jwks.json",
            "--subject-token",
            "t1",
            "--actor",
            "https://agent-b.example.com",
            "--iss",
            AS,
            "--aud",
            "https://calendar.example.com",
            "--scope",
            "calendar:read",
            "--now",
            &(N + 120).to_string(),
        ],
    );
    std::fs::write(d.join("t2"), t2).unwrap();
}

fn audit_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec!["delegation", "audit"];
    v.extend_from_slice(extra);
    v.extend_from_slice(&[
        "--jwks",
        "as.jwks.json",
        "--issuer",
        AS,
        "--audience",
        "https://calendar.example.com",
        "--now",
        "1760000200",
    ]);
    v
}

#[test]
fn mint_exchange_audit_round_trip() {
    let d = dir("rt");
    chain(&d);
    let out = ok(&d, &audit_args(&["t0", "t1", "t2"]));
    assert!(
        out.contains("PASS") && out.contains("effective scope: calendar:read"),
        "{out}"
    );
    let o = run(&d, &audit_args(&["t0", "t1", "t2", "--json"]));
    assert_eq!(o.status.code(), Some(0));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["verdict"], "verified");
    assert_eq!(j["details"]["result"], "pass");
    assert_eq!(
        j["details"]["effective_scope"],
        serde_json::json!(["calendar:read"])
    );
    for c in j["checks"].as_array().unwrap() {
        assert!(c["code"].is_string() && c["severity"].is_string() && c["passed"].is_boolean());
    }
    // one file with all tokens, and standard input
    let all = ["t0", "t1", "t2"]
        .map(|f| std::fs::read_to_string(d.join(f)).unwrap())
        .concat();
    std::fs::write(d.join("bundle"), &all).unwrap();
    assert_eq!(run(&d, &audit_args(&["bundle"])).status.code(), Some(0));
}

#[test]
fn failing_chain_exits_1_and_names_the_rule() {
    let d = dir("fail");
    chain(&d);
    // t2 without t1: the history skips a hop
    let o = run(&d, &audit_args(&["t0", "t2", "--json"]));
    assert_eq!(o.status.code(), Some(1));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let failed: Vec<&str> = j["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["passed"] == false && c["severity"] == "error")
        .map(|c| c["code"].as_str().unwrap())
        .collect();
    assert!(failed.contains(&"bundle.history-mismatch"), "{failed:?}");
    // the exchange refuses to widen (exit 1)
    let o = run(
        &d,
        &[
            "delegation",
            "exchange",
            "--signing-key",
            "as.pem",
            "--subject-token",
            "t1",
            "--actor",
            "https://agent-b.example.com",
            "--iss",
            AS,
            "--aud",
            "x",
            "--scope",
            "calendar:write",
            "--now",
            &(N + 120).to_string(),
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("exchange.scope-widened"));
    // replay store: a second audit of the same tokens is a replay
    let mut a = audit_args(&["t0", "t1", "t2", "--replay-store", "seen.jsonl"]);
    assert_eq!(run(&d, &a).status.code(), Some(0));
    assert_eq!(run(&d, &a).status.code(), Some(1));
    a.push("--json");
    let o = run(&d, &a);
    assert!(String::from_utf8_lossy(&o.stdout).contains("jwt.jti-replay"));
}

#[test]
fn unreadable_input_exits_2() {
    let d = dir("bad");
    chain(&d);
    assert_eq!(
        run(&d, &audit_args(&["missing-file"])).status.code(),
        Some(2)
    );
    std::fs::write(d.join("empty"), "  \n").unwrap();
    assert_eq!(run(&d, &audit_args(&["empty"])).status.code(), Some(2));
    std::fs::write(d.join("bin"), [0xffu8, 0xfe, 0x00]).unwrap();
    assert_eq!(run(&d, &audit_args(&["bin"])).status.code(), Some(2));
    // a readable file holding a broken token is a failing chain, not unreadable
    std::fs::write(d.join("junk"), "abc.def").unwrap();
    assert_eq!(run(&d, &audit_args(&["junk"])).status.code(), Some(1));
    // no trusted key at all
    let o = run(&d, &["delegation", "audit", "t0"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        run(&d, &audit_args(&["t0", "--max-depth", "11"]))
            .status
            .code(),
        Some(2)
    );
}

const BS: &str = "https://bs.example.com";

/// A token naming `iss` but signed with `key`.
fn mint_as(d: &Path, key: &str, iss: &str, out: &str) {
    let t = ok(
        d,
        &[
            "delegation",
            "mint",
            "--signing-key",
            key,
            "--iss",
            iss,
            "--sub",
            "user@example.com",
            "--aud",
            "https://calendar.example.com",
            "--scope",
            "calendar:read",
            "--now",
            &N.to_string(),
        ],
    );
    std::fs::write(d.join(out), t).unwrap();
}

/// Keys are bound to their issuer (RFC 8725 3.8). A token
/// claiming iss A but signed with issuer B's key fails even though both
/// issuers are accepted.
#[test]
fn keys_are_bound_to_their_issuer() {
    let d = dir("per-issuer");
    assert!(run(&d, &["keygen", "--out", "as"]).status.success());
    assert!(run(&d, &["keygen", "--out", "bs"]).status.success());
    mint_as(&d, "bs.pem", AS, "forged");
    mint_as(&d, "as.pem", AS, "good");
    let audit = |tok: &str, extra: &[&str]| {
        let mut v = vec![
            "delegation",
            "audit",
            tok,
            "--issuer",
            AS,
            "--issuer",
            BS,
            "--audience",
            "https://calendar.example.com",
            "--now",
            "1760000010",
            "--json",
        ];
        v.extend_from_slice(extra);
        run(&d, &v)
    };
    let as_b = format!("{AS}=as.jwks.json");
    let bs_b = format!("{BS}=bs.jwks.json");
    let o = audit("good", &["--jwks", &as_b, "--jwks", &bs_b]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = audit("forged", &["--jwks", &as_b, "--jwks", &bs_b]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        j["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["code"] == "jwt.no-trusted-key" && c["passed"] == false),
        "{j}"
    );
    // Unbound key sources with several issuers: a usage error, not a flat set.
    let o = audit(
        "forged",
        &["--jwks", "as.jwks.json", "--jwks", "bs.jwks.json"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("ISSUER="));
    // One issuer: a bare --jwks binds to it.
    let o = run(
        &d,
        &[
            "delegation",
            "audit",
            "good",
            "--issuer",
            AS,
            "--jwks",
            "as.jwks.json",
            "--now",
            "1760000010",
        ],
    );
    assert_eq!(o.status.code(), Some(0));
}

/// --deny-warnings gives one verdict in the exit code, the
/// text and the JSON; warnings are not counted as failed checks.
#[test]
fn deny_warnings_one_verdict_everywhere() {
    let d = dir("deny");
    chain(&d);
    // No --audience: a policy warning.
    let base = [
        "delegation",
        "audit",
        "t0",
        "t1",
        "t2",
        "--jwks",
        "as.jwks.json",
        "--issuer",
        AS,
        "--now",
        "1760000200",
    ];
    let o = run(&d, &base);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains(": PASS"), "{out}");
    assert!(out.contains(" 0 failed, 1 warning"), "{out}");
    let mut deny = base.to_vec();
    deny.push("--deny-warnings");
    let o = run(&d, &deny);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains(": FAIL") && !out.contains("PASS"), "{out}");
    assert!(
        out.contains("1 warning (denied by --deny-warnings)"),
        "{out}"
    );
    deny.push("--json");
    let o = run(&d, &deny);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["verdict"], "not-verified");
    assert_eq!(j["details"]["result"], "fail");
}

/// Unverified claims are printed with controls escaped.
#[test]
fn claims_with_controls_are_escaped() {
    let d = dir("esc");
    assert!(run(&d, &["keygen", "--out", "as"]).status.success());
    let t = ok(
        &d,
        &[
            "delegation",
            "mint",
            "--signing-key",
            "as.pem",
            "--iss",
            AS,
            "--sub",
            "u\u{1b}[31m\u{202e}x",
            "--aud",
            "a",
            "--scope",
            "s",
            "--now",
            &N.to_string(),
        ],
    );
    std::fs::write(d.join("t"), t).unwrap();
    let o = run(
        &d,
        &[
            "delegation",
            "audit",
            "t",
            "--jwks",
            "as.jwks.json",
            "--now",
            &N.to_string(),
        ],
    );
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains("u\\x1b[31m\\u{202e}x"), "{out}");
    assert!(
        !out.contains('\u{1b}') && !out.contains('\u{202e}'),
        "{out}"
    );
}

/// The token with its ECDSA P-256 signature in high-S (`high`) or low-S
/// form: of the pair (r, s) / (r, n - s), the one whose s is above n/2, or
/// the other.
fn with_s_form(token: &str, high: bool) -> String {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    // The order n of P-256 (SEC 2 section 2.4.2).
    let n =
        hex::decode("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551").unwrap();
    let (signing_input, sig_b64) = token.trim().rsplit_once('.').unwrap();
    let sig = b64.decode(sig_b64).unwrap();
    assert_eq!(sig.len(), 64, "keygen's default is ES256");
    let mut other = sig[..32].to_vec();
    let mut s2 = [0u8; 32];
    let mut borrow = 0i16;
    for i in (0..32).rev() {
        let mut v = i16::from(n[i]) - i16::from(sig[32 + i]) - borrow;
        borrow = 0;
        if v < 0 {
            v += 256;
            borrow = 1;
        }
        s2[i] = v as u8;
    }
    other.extend_from_slice(&s2);
    let sig_is_high = sig[32..] > other[32..];
    let chosen = if sig_is_high == high { sig } else { other };
    format!("{signing_input}.{}", b64.encode(chosen))
}

/// `delegation audit --strict-low-s`: of the ECDSA pair (r, s) / (r, n - s)
/// over the last token, the high-S one passes by default and is refused
/// with the flag; the low-S one passes either way.
#[test]
fn strict_low_s_refuses_a_high_s_token() {
    let d = dir("lows");
    chain(&d);
    for f in ["t0", "t1"] {
        let t = std::fs::read_to_string(d.join(f)).unwrap();
        std::fs::write(d.join(f), with_s_form(&t, false)).unwrap();
    }
    let t2 = std::fs::read_to_string(d.join("t2")).unwrap();
    for (name, high, strict_code) in [("high", true, 1), ("low", false, 0)] {
        std::fs::write(d.join("t2x"), with_s_form(&t2, high)).unwrap();
        let o = run(&d, &audit_args(&["t0", "t1", "t2x"]));
        assert_eq!(
            o.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&o.stdout)
        );
        let o = run(&d, &audit_args(&["t0", "t1", "t2x", "--strict-low-s"]));
        assert_eq!(
            o.status.code(),
            Some(strict_code),
            "{name}: {}",
            String::from_utf8_lossy(&o.stdout)
        );
    }
}

/// Tokens given in the wrong order (the last hop first) are refused with
/// the fix named: subject token first. Times in the text are RFC 3339.
#[test]
fn reversed_bundle_says_subject_token_first_and_times_are_rfc3339() {
    let d = dir("reversed");
    chain(&d);
    let o = run(&d, &audit_args(&["t2", "t1", "t0"]));
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert!(
        out.contains("the tokens are in the wrong order; give the subject token first"),
        "{out}"
    );
    // The checks' exp / start comparisons name times as RFC 3339, never
    // Unix seconds alone.
    let checks: Vec<&str> = out.lines().filter(|l| l.contains("ERROR hop")).collect();
    assert!(
        checks
            .iter()
            .any(|l| l.contains("exp 2025-10-09T09:53:20Z vs previous exp 2025-10-09T09:09:20Z")),
        "{out}"
    );
    for secs in [N, N + 60, N + 120, N + 3600] {
        assert!(
            checks.iter().all(|l| !l.contains(&secs.to_string())),
            "{secs} in: {out}"
        );
    }
}
