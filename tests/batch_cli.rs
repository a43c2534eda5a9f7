//! `agentsig verify --batch LIST`: a directory, a file of paths or URLs,
//! JSON Lines on standard input. One result per input in input order
//! (`--json`: one report per line), a summary, exit 0 only when all
//! verified, 2 for an unreadable LIST or bad options.

mod net_support;

use agentsig::{descriptor, Algorithm, SigningKey};
use net_support::{key_served_at_jwks, signed_resp, Ca, Resp, Server};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

struct Tmp(PathBuf);
impl Tmp {
    fn new(name: &str) -> Tmp {
        let p = std::env::temp_dir().join(format!("agentsig-batch-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(p.join("docs")).unwrap();
        Tmp(p)
    }
}
impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn doc(i: usize) -> Vec<u8> {
    format!(r#"{{"name":"agent {i}","version":"1.0.{i}"}}"#).into_bytes()
}

/// `n` signed descriptors `docs/aNN.json` (+ `.jws`) and the JWK Set
/// `keys.json` of the key that signed them.
fn setup(name: &str, n: usize) -> (Tmp, SigningKey) {
    let t = Tmp::new(name);
    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256).unwrap();
    for i in 0..n {
        let d = doc(i);
        let jws = descriptor::sign(&d, &key).unwrap().jws;
        std::fs::write(t.0.join(format!("docs/a{i:02}.json")), &d).unwrap();
        std::fs::write(t.0.join(format!("docs/a{i:02}.json.jws")), jws).unwrap();
    }
    let jwks = agentsig::jwk::jwks_document(&[key.verifying_key()]);
    std::fs::write(t.0.join("keys.json"), jwks.to_string()).unwrap();
    (t, key)
}

fn run(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_agentsig"));
    c.args(args)
        .current_dir(dir)
        .env_remove("AGENTSIG_ALLOW_PRIVATE_NETWORKS")
        .env_remove("AGENTSIG_CA_FILE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or_default()).unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}

fn json_lines(o: &Output) -> Vec<Value> {
    String::from_utf8(o.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {e}: {l}")))
        .collect()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_directory_all_verified_exits_0_in_name_order() {
    let (t, _) = setup("dir-ok", 12);
    // Not a descriptor: ignored.
    std::fs::write(t.0.join("docs/notes.txt"), "x").unwrap();
    let o = run(
        &t.0,
        &[
            "verify",
            "--batch",
            "docs",
            "--jwks",
            "keys.json",
            "-j",
            "3",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let out = String::from_utf8(o.stdout.clone()).unwrap();
    let want: Vec<String> = (0..12)
        .map(|i| format!("docs/a{i:02}.json: verified"))
        .collect();
    assert_eq!(out.lines().collect::<Vec<_>>(), want);
    assert!(
        err(&o).contains("12 of 12 verified, 0 failed"),
        "{}",
        err(&o)
    );
    // Standard error is a pipe here, not a terminal: no progress line.
    assert!(
        !err(&o).contains('\x1b') && !err(&o).contains('\r'),
        "{}",
        err(&o)
    );
}

#[test]
fn failures_are_reported_per_item_in_json_lines_and_exit_1() {
    let (t, _) = setup("dir-fail", 6);
    // a02: tampered; a04: its JWS missing; a05: signed by another key.
    std::fs::write(t.0.join("docs/a02.json"), doc(99)).unwrap();
    std::fs::remove_file(t.0.join("docs/a04.json.jws")).unwrap();
    let other = SigningKey::generate(Algorithm::EcdsaP256Sha256).unwrap();
    let jws = descriptor::sign(&doc(5), &other).unwrap().jws;
    std::fs::write(t.0.join("docs/a05.json.jws"), jws).unwrap();
    let o = run(
        &t.0,
        &["verify", "--batch", "docs", "--jwks", "keys.json", "--json"],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let lines = json_lines(&o);
    assert_eq!(lines.len(), 7, "six results and the summary");
    for (i, l) in lines[..6].iter().enumerate() {
        assert_eq!(l["subject"], format!("docs/a{i:02}.json"));
        assert_eq!(l["command"], "verify");
        assert!(l["schema"].is_string());
        let ok = !matches!(i, 2 | 4 | 5);
        assert_eq!(l["verified"], ok, "{l}");
        assert_eq!(l["verdict"], if ok { "verified" } else { "not-verified" });
    }
    assert_eq!(lines[4]["error"]["code"], "batch.no-jws");
    let summary = &lines[6];
    assert_eq!(summary["subject"], "docs");
    assert_eq!(summary["verified"], false);
    assert_eq!(summary["details"]["total"], 6);
    assert_eq!(summary["details"]["failed"], 3);
}

#[test]
fn a_list_file_keeps_its_own_order() {
    let (t, _) = setup("list", 5);
    std::fs::write(
        t.0.join("list.txt"),
        "# comment\ndocs/a03.json\n\ndocs/a00.json\ndocs/a04.json\ndocs/absent.json\n",
    )
    .unwrap();
    let o = run(
        &t.0,
        &[
            "verify",
            "--batch",
            "list.txt",
            "--jwks",
            "keys.json",
            "--json",
            "-j",
            "2",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let lines = json_lines(&o);
    let subjects: Vec<_> = lines.iter().map(|l| l["subject"].clone()).collect();
    assert_eq!(
        subjects,
        [
            "docs/a03.json",
            "docs/a00.json",
            "docs/a04.json",
            "docs/absent.json",
            "list.txt"
        ]
    );
    assert_eq!(lines[3]["error"]["code"], "batch.unreadable");
}

#[test]
fn json_lines_on_stdin_with_inline_descriptors() {
    let (t, key) = setup("stdin", 2);
    let d = doc(7);
    let jws = descriptor::sign(&d, &key).unwrap().jws;
    let inline =
        json!({"name": "inline-7", "descriptor": String::from_utf8(d).unwrap(), "jws": jws});
    let input = format!(
        "\"docs/a01.json\"\n{inline}\n{{\"path\":\"docs/a00.json\"}}\nnot json\n{{\"other\":1}}\n"
    );
    let o = run(
        &t.0,
        &["verify", "--batch", "-", "--jwks", "keys.json", "--json"],
        Some(input.as_bytes()),
    );
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let lines = json_lines(&o);
    assert_eq!(lines.len(), 6);
    let got: Vec<_> = lines[..5]
        .iter()
        .map(|l| {
            (
                l["subject"].as_str().unwrap().to_owned(),
                l["verified"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("docs/a01.json".to_owned(), true),
            ("inline-7".to_owned(), true),
            ("docs/a00.json".to_owned(), true),
            ("-:4".to_owned(), false),
            ("-:5".to_owned(), false),
        ]
    );
    assert_eq!(lines[3]["error"]["code"], "batch.bad-input");
}

#[test]
fn usage_errors_exit_2() {
    let (t, _) = setup("usage", 1);
    for args in [
        &["verify", "--batch", "missing-dir", "--jwks", "keys.json"][..],
        &[
            "verify",
            "--batch",
            "docs",
            "--jwks",
            "keys.json",
            "-j",
            "0",
        ],
        &[
            "verify",
            "--batch",
            "docs",
            "docs/a00.json",
            "--jwks",
            "keys.json",
        ],
        &["verify", "-j", "2", "docs/a00.json", "--jwks", "keys.json"],
    ] {
        let o = run(&t.0, args, None);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", err(&o));
    }
    // Under --json an unreadable LIST is still a report (verdict error).
    let o = run(
        &t.0,
        &[
            "verify",
            "--batch",
            "missing-dir",
            "--jwks",
            "keys.json",
            "--json",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["verdict"], "error");
    // An empty directory: nothing to verify is not success.
    std::fs::create_dir_all(t.0.join("empty")).unwrap();
    let o = run(
        &t.0,
        &["verify", "--batch", "empty", "--jwks", "keys.json"],
        None,
    );
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
}

#[test]
fn urls_go_through_the_guarded_fetcher_with_one_shared_resolver() {
    let ca = Ca::new();
    let srv = Server::start(&ca, &["agents.example"]);
    let t = Tmp::new("urls");
    std::fs::write(t.0.join("ca.pem"), ca.pem()).unwrap();
    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256)
        .unwrap()
        .with_kid("k1");
    let mut j = key.verifying_key().to_jwk().to_value();
    j["use"] = json!("sig");
    srv.route(
        "/jwks",
        Resp::json(&json!({ "keys": [j] })).header("cache-control", "max-age=300"),
    );
    let mut list = String::new();
    for i in 0..6 {
        let body = serde_json::to_vec(&json!({
            "name": format!("agent {i}"),
            "authentication": {"jwksUri": srv.url("agents.example", "/jwks")}
        }))
        .unwrap();
        let jws = descriptor::sign(&body, &key).unwrap().jws;
        // The fourth is served with another body than its JWS signed.
        let served = if i == 3 {
            b"{\"name\":\"x\"}".to_vec()
        } else {
            body
        };
        srv.route(&format!("/a{i}.json"), Resp::ok("application/json", served));
        srv.route(
            &format!("/a{i}.json.jws"),
            Resp::ok("application/jose", jws),
        );
        list.push_str(&srv.url("agents.example", &format!("/a{i}.json")));
        list.push('\n');
    }
    std::fs::write(t.0.join("urls.txt"), list).unwrap();
    let args = [
        "verify",
        "--batch",
        "urls.txt",
        "--json",
        "--ca-file",
        "ca.pem",
        "--resolve-to",
        "agents.example=127.0.0.1",
        "--per-host",
        "2",
        "-j",
        "2",
    ];
    // Loopback is refused unless private networks are allowed.
    let o = run(&t.0, &args, None);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let lines = json_lines(&o);
    assert!(
        lines[..6].iter().all(|l| l["verified"] == false),
        "{lines:?}"
    );
    assert_eq!(srv.accepted(), 0);
    let mut with_private = args.to_vec();
    with_private.push("--allow-private-networks");
    let o = run(&t.0, &with_private, None);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let lines = json_lines(&o);
    assert_eq!(lines.len(), 7);
    for (i, l) in lines[..6].iter().enumerate() {
        assert_eq!(
            l["subject"],
            srv.url("agents.example", &format!("/a{i}.json"))
        );
        assert_eq!(l["verified"], i != 3, "{l}");
    }
    // One key discovery shared by the workers: the JWK Set is fetched at
    // most once per worker racing for it, not once per descriptor.
    assert!(srv.hit_count("/jwks") <= 2, "{}", srv.hit_count("/jwks"));
}

/// A batch looks for `URL.jws` only beside a response without an RFC 9421
/// signature (seed 001 section 10.3); `--also-jws` checks it beside every
/// one. Here the `.jws` of the signed response cannot be fetched (500):
/// not asked for by default, a failure with `--also-jws`.
#[test]
fn signed_responses_need_no_jws_fetch_unless_also_jws() {
    let ca = Ca::new();
    let srv = Server::start(&ca, &["agents.example"]);
    let t = Tmp::new("also-jws");
    std::fs::write(t.0.join("ca.pem"), ca.pem()).unwrap();
    let key = key_served_at_jwks(&srv);
    let body = serde_json::to_vec(&json!({
        "name": "signed",
        "authentication": {"jwksUri": srv.url("agents.example", "/jwks")}
    }))
    .unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    srv.route("/s.json", signed_resp(&body, &key, now, None));
    let mut broken = Resp::ok("text/plain", "server error");
    broken.status = 500;
    srv.route("/s.json.jws", broken);
    std::fs::write(
        t.0.join("urls.txt"),
        srv.url("agents.example", "/s.json") + "\n",
    )
    .unwrap();
    let args = [
        "verify",
        "--batch",
        "urls.txt",
        "--json",
        "--require-signed",
        "--ca-file",
        "ca.pem",
        "--resolve-to",
        "agents.example=127.0.0.1",
        "--allow-private-networks",
    ];
    let o = run(&t.0, &args, None);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let lines = json_lines(&o);
    assert_eq!(lines[0]["verified"], true, "{}", lines[0]);
    assert_eq!(lines[0]["details"]["checked"], json!(["rfc9421"]));
    assert_eq!(lines[0]["details"]["jws_skipped"], true);
    assert_eq!(srv.hit_count("/s.json.jws"), 0);
    let mut also = args.to_vec();
    also.push("--also-jws");
    let o = run(&t.0, &also, None);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert_eq!(json_lines(&o)[0]["verified"], false);
    assert_eq!(srv.hit_count("/s.json.jws"), 1);
}
