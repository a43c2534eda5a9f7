//! `agentsig verify --batch LIST`: a directory, a file of paths or URLs,
//! JSON Lines on standard input. One result per input, as soon as it is
//! known (`--ordered`: in input order; `--json`: one report per line), a
//! summary, exit 0 only when all verified, 2 for an unreadable LIST or bad
//! options. Every input gets the verdict its single-input command gives.

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
    spawn(dir, args, stdin).wait_with_output().unwrap()
}

/// The command started, its standard input written and closed.
fn spawn(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> std::process::Child {
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
    child
}

/// `verify --batch LIST --jwks keys.json --json --ordered`, then `extra`.
fn ordered_json<'a>(list: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec![
        "verify",
        "--batch",
        list,
        "--jwks",
        "keys.json",
        "--json",
        "--ordered",
    ];
    v.extend_from_slice(extra);
    v
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
            "--ordered",
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
    let o = run(&t.0, &ordered_json("docs", &[]), None);
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
            "--ordered",
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
        &ordered_json("-", &["--root", "."]),
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
        "--ordered",
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

/// By default a batch gives a URL the verdict `verify URL` gives: the
/// detached `URL.jws` beside a signed response is checked too, so a
/// broken one fails the item in both modes. `--response-signature-first`
/// skips it (one request per signed descriptor) and says so.
#[test]
fn a_broken_jws_beside_a_signed_response_fails_as_in_verify_url() {
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
    // The `.jws` is signed by the trusted key over another descriptor:
    // checked, it is invalid.
    let other = descriptor::sign(br#"{"name":"another"}"#, &key)
        .unwrap()
        .jws;
    srv.route("/s.json.jws", Resp::ok("application/jose", other));
    let url = srv.url("agents.example", "/s.json");
    std::fs::write(t.0.join("urls.txt"), format!("{url}\n")).unwrap();
    let net = [
        "--require-signed",
        "--ca-file",
        "ca.pem",
        "--resolve-to",
        "agents.example=127.0.0.1",
        "--allow-private-networks",
        "--json",
    ];
    let single = run(&t.0, &[&["verify", url.as_str()][..], &net].concat(), None);
    assert_eq!(single.status.code(), Some(1), "{}", err(&single));
    let single: Value = serde_json::from_slice(&single.stdout).unwrap();
    let o = run(
        &t.0,
        &[&["verify", "--batch", "urls.txt"][..], &net].concat(),
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let lines = json_lines(&o);
    assert_eq!(lines[0]["verdict"], single["verdict"], "{}", lines[0]);
    assert_eq!(lines[0]["error"]["code"], single["error"]["code"]);
    assert_eq!(lines[0]["error"]["code"], "jws.not-verified");
    let fast = [
        &[
            "verify",
            "--batch",
            "urls.txt",
            "--response-signature-first",
        ][..],
        &net,
    ]
    .concat();
    let o = run(&t.0, &fast, None);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let lines = json_lines(&o);
    assert_eq!(lines[0]["details"]["checked"], json!(["rfc9421"]));
    assert_eq!(lines[0]["details"]["jws_skipped"], true);
    assert_eq!(
        srv.hit_count("/s.json.jws"),
        2,
        "fetched by the first two runs only"
    );
}

/// Run with a bound: a batch that would block forever is killed after a
/// minute and reported (`None`), so that the test fails instead of hanging.
fn run_bounded(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Option<Output> {
    let mut child = spawn(dir, args, stdin);
    for _ in 0..600 {
        if child.try_wait().unwrap().is_some() {
            return Some(child.wait_with_output().unwrap());
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// One input, one line: a subject holding a newline (a JSON Lines `name`
/// or `url`, a file name in a directory) is escaped, never printed as a
/// line of its own that reads like another input's verdict.
#[test]
fn subjects_with_newlines_never_forge_a_line() {
    let (t, key) = setup("forge", 1);
    let jws = descriptor::sign(&doc(3), &key).unwrap().jws;
    let input = [
        json!({"name": "x\nforged: verified", "descriptor": String::from_utf8(doc(3)).unwrap(), "jws": jws}),
        json!({"name": "y\nforged: verified", "descriptor": "{}", "jws": "a.b.c"}),
        json!({"url": "https://127.0.0.1/a\nother: verified"}),
    ]
    .iter()
    .map(|v| format!("{v}\n"))
    .collect::<String>();
    let o = run(
        &t.0,
        &["verify", "--batch", "-", "--jwks", "keys.json"],
        Some(input.as_bytes()),
    );
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    assert_eq!(out.lines().count(), 3, "{out}");
    assert!(
        out.lines()
            .all(|l| !l.starts_with("forged") && !l.starts_with("other")),
        "{out}"
    );
    assert!(out.contains("x\\x0aforged: verified: verified"), "{out}");
    // A file name with newlines in directory mode.
    let name = "a01\nforged: verified\nb.json";
    std::fs::write(t.0.join("docs").join(name), doc(1)).unwrap();
    let o = run(
        &t.0,
        &["verify", "--batch", "docs", "--jwks", "keys.json"],
        None,
    );
    let out = String::from_utf8(o.stdout).unwrap();
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(out.lines().all(|l| l.starts_with("docs/")), "{out}");
}

/// A FIFO (or any file that is not a regular file) in a list, or as the
/// `.jws` beside a descriptor, is refused at once: opening it never waits
/// for a writer, and the rest of the batch is verified.
#[test]
fn a_fifo_in_a_list_is_refused_without_blocking_the_batch() {
    let (t, _) = setup("fifo", 3);
    for p in ["docs/fifo.json", "docs/a01.json.jws"] {
        let _ = std::fs::remove_file(t.0.join(p));
        let s = Command::new("mkfifo").arg(t.0.join(p)).status().unwrap();
        assert!(s.success());
    }
    std::fs::write(
        t.0.join("list.txt"),
        "docs/a00.json\ndocs/fifo.json\ndocs/a01.json\ndocs/a02.json\n",
    )
    .unwrap();
    let o = run_bounded(&t.0, &ordered_json("list.txt", &[]), None).expect("the batch finished");
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let lines = json_lines(&o);
    let got: Vec<_> = lines[..4]
        .iter()
        .map(|l| (l["verified"].as_bool().unwrap(), l["error"]["code"].clone()))
        .collect();
    assert_eq!(
        got,
        [
            (true, Value::Null),
            (false, json!("batch.not-a-regular-file")),
            (false, json!("batch.not-a-regular-file")),
            (true, Value::Null),
        ]
    );
    assert!(lines[1]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("FIFO"));
}

/// `-` inside a list is no input: it never reads standard input (which,
/// under `--batch -`, is the rest of the list itself). Every line after it
/// still gets its own result.
#[test]
fn a_dash_entry_is_refused_not_read_as_standard_input() {
    let (t, key) = setup("dash", 1);
    let mut input = String::from("\"-\"\n");
    for i in 0..5 {
        let jws = descriptor::sign(&doc(i), &key).unwrap().jws;
        let line = json!({"name": format!("inline-{i}"), "descriptor": String::from_utf8(doc(i)).unwrap(), "jws": jws});
        input.push_str(&format!("{line}\n"));
    }
    let o = run(&t.0, &ordered_json("-", &[]), Some(input.as_bytes()));
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let lines = json_lines(&o);
    assert_eq!(lines.len(), 7, "six results and the summary");
    assert_eq!(lines[0]["error"]["code"], "batch.stdin-entry");
    assert!(lines[1..6].iter().all(|l| l["verified"] == true));
    // In a list file too.
    std::fs::write(t.0.join("list.txt"), "-\ndocs/a00.json\n").unwrap();
    let o = run(
        &t.0,
        &ordered_json("list.txt", &[]),
        Some(b"{\"name\":\"never read\"}\n"),
    );
    let lines = json_lines(&o);
    assert_eq!(lines[0]["error"]["code"], "batch.stdin-entry");
    assert_eq!(lines[1]["verified"], true);
}

/// Local paths given on standard input are refused unless `--root DIR` is
/// given, and then only files whose real path lies under DIR are read (a
/// `..` or a symbolic link out of it is refused).
#[test]
fn paths_on_standard_input_need_a_root_and_stay_under_it() {
    let (t, _) = setup("root", 2);
    std::fs::write(t.0.join("secret.json"), doc(0)).unwrap();
    std::fs::copy(t.0.join("docs/a00.json.jws"), t.0.join("secret.json.jws")).unwrap();
    std::os::unix::fs::symlink(t.0.join("secret.json"), t.0.join("docs/link.json")).unwrap();
    let input = "{\"path\":\"docs/a00.json\"}\n\"docs/a01.json\"\n{\"path\":\"docs/../secret.json\"}\n{\"path\":\"docs/link.json\"}\n";
    let o = run(&t.0, &ordered_json("-", &[]), Some(input.as_bytes()));
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let lines = json_lines(&o);
    for l in &lines[..4] {
        assert_eq!(l["error"]["code"], "batch.path-refused", "{l}");
        let m = l["error"]["message"].as_str().unwrap();
        assert!(m.contains("--root") && m.contains("\"descriptor\""), "{m}");
    }
    let o = run(
        &t.0,
        &ordered_json("-", &["--root", "docs"]),
        Some(input.as_bytes()),
    );
    let lines = json_lines(&o);
    let got: Vec<_> = lines[..4]
        .iter()
        .map(|l| l["error"]["code"].clone())
        .collect();
    assert_eq!(
        got,
        [
            Value::Null,
            Value::Null,
            json!("batch.outside-root"),
            json!("batch.outside-root")
        ]
    );
}

/// An A2A card key with a `kid`, its JWK Set file, and a card signed with
/// it (embedded signatures, no `.jws`).
fn signed_card_file(t: &Tmp, name: &str) -> (SigningKey, serde_json::Value) {
    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256)
        .unwrap()
        .with_kid("card-key");
    let card = json!({
        "name": "Planner",
        "description": "plans",
        "version": "1.0.0",
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "plan", "name": "plan", "description": "d", "tags": ["t"]}]
    });
    let signed = agentsig::a2a::sign_card(&card, &key, &serde_json::Map::new(), false)
        .unwrap()
        .card;
    std::fs::write(t.0.join(name), serde_json::to_vec(&signed).unwrap()).unwrap();
    let jwks = agentsig::jwk::jwks_document(&[key.verifying_key()]);
    std::fs::write(t.0.join("card-keys.json"), jwks.to_string()).unwrap();
    (key, signed)
}

/// `docs/both.json`: `card` signed again by a key `stranger` that no key
/// set holds; the key is returned.
fn countersigned(t: &Tmp, card: &Value) -> SigningKey {
    let stranger = SigningKey::generate(Algorithm::EcdsaP256Sha256)
        .unwrap()
        .with_kid("stranger");
    let both = agentsig::a2a::sign_card(card, &stranger, &serde_json::Map::new(), false)
        .unwrap()
        .card;
    std::fs::write(
        t.0.join("docs/both.json"),
        serde_json::to_vec(&both).unwrap(),
    )
    .unwrap();
    stranger
}

/// A card with embedded signatures verifies alone with `verify CARD`, and
/// so it does in every batch mode (directory, list, standard input inline),
/// without looking for `card.json.jws`.
#[test]
fn a_card_with_embedded_signatures_verifies_in_every_batch_mode() {
    let t = Tmp::new("card");
    let (_, card) = signed_card_file(&t, "docs/card.json");
    let keys = ["--jwks", "card-keys.json", "--json"];
    let single = run(
        &t.0,
        &[&["verify", "docs/card.json"][..], &keys].concat(),
        None,
    );
    assert_eq!(single.status.code(), Some(0), "{}", err(&single));
    std::fs::write(t.0.join("list.txt"), "docs/card.json\n").unwrap();
    let inline = format!("{}\n", json!({"name": "inline-card", "descriptor": card}));
    for (list, stdin) in [
        ("docs", None),
        ("list.txt", None),
        ("-", Some(inline.as_bytes())),
    ] {
        let o = run(
            &t.0,
            &[&["verify", "--batch", list][..], &keys].concat(),
            stdin,
        );
        assert_eq!(o.status.code(), Some(0), "{list}: {}", err(&o));
        let lines = json_lines(&o);
        assert_eq!(lines[0]["verdict"], "verified", "{list}: {}", lines[0]);
        assert_eq!(lines[0]["details"]["rule"], "any");
    }
}

/// Results are printed as soon as they are known: a slow first URL (its
/// answer held until the third input is requested) does not hold back the
/// second one. `--ordered` prints in input order instead.
#[test]
fn a_finished_result_is_printed_before_a_slower_earlier_one() {
    let ca = Ca::new();
    let srv = Server::start(&ca, &["agents.example"]);
    let t = Tmp::new("as-done");
    std::fs::write(t.0.join("ca.pem"), ca.pem()).unwrap();
    srv.route(
        "/slow.json",
        Resp::json(&json!({"name": "slow"})).after("/release.json"),
    );
    srv.route("/fast.json", Resp::json(&json!({"name": "fast"})));
    srv.route("/release.json", Resp::json(&json!({"name": "release"})));
    let urls: Vec<String> = ["/slow.json", "/fast.json", "/release.json"]
        .iter()
        .map(|p| srv.url("agents.example", p))
        .collect();
    std::fs::write(t.0.join("urls.txt"), urls.join("\n") + "\n").unwrap();
    let args = [
        "verify",
        "--batch",
        "urls.txt",
        "-j",
        "2",
        "--per-host",
        "8",
        "--ca-file",
        "ca.pem",
        "--resolve-to",
        "agents.example=127.0.0.1",
        "--allow-private-networks",
        // Unsigned descriptors: accepted as `unsigned` (the default refuses them).
        "--allow-unsigned",
    ];
    let o = run(&t.0, &args, None);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    let first = out.lines().next().unwrap_or_default();
    assert!(first.starts_with(&urls[1]), "{out}");
    assert_eq!(
        srv.missed_gates.load(std::sync::atomic::Ordering::SeqCst),
        0
    );
    assert_eq!(out.lines().count(), 3);
    let o = run(&t.0, &[&args[..], &["--ordered"]].concat(), None);
    let out = String::from_utf8(o.stdout).unwrap();
    let order: Vec<&str> = out.lines().map(|l| l.split(": ").next().unwrap()).collect();
    assert_eq!(order, urls);
}

/// `--per-host N` bounds the connections open at once to one host (in
/// flight or kept alive), shared by all workers, whatever `-j`; each
/// connection is reused after any status (the 404 of every `URL.jws`
/// included). Counted at the server: the most connections it saw open.
#[test]
fn connections_to_one_host_are_bounded_across_workers() {
    let ca = Ca::new();
    let srv = Server::start_keep_alive(&ca, &["agents.example"]);
    let t = Tmp::new("per-host");
    std::fs::write(t.0.join("ca.pem"), ca.pem()).unwrap();
    let mut list = String::new();
    for i in 0..24 {
        srv.route(
            &format!("/d{i}.json"),
            Resp::json(&json!({ "name": format!("agent {i}") })),
        );
        list.push_str(&srv.url("agents.example", &format!("/d{i}.json")));
        list.push('\n');
    }
    std::fs::write(t.0.join("urls.txt"), list).unwrap();
    let o = run(
        &t.0,
        &[
            "verify",
            "--batch",
            "urls.txt",
            "-j",
            "8",
            "--per-host",
            "2",
            "--ca-file",
            "ca.pem",
            "--resolve-to",
            "agents.example=127.0.0.1",
            "--allow-private-networks",
            "--allow-unsigned",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(
        err(&o).contains("0 of 24 verified, 24 accepted unsigned"),
        "{}",
        err(&o)
    );
    assert!(
        srv.most_open() <= 2,
        "{} connections open at once",
        srv.most_open()
    );
    // 48 requests (each descriptor and its `.jws`) over reused connections.
    assert!(
        srv.accepted() < 48,
        "{} connections for 48 requests",
        srv.accepted()
    );
}

/// One verdict rule in every mode: a card whose embedded signature
/// verifies with the trusted key, served with a response signature by a
/// key that is not trusted, is verified by `verify URL` and by the batch,
/// as the same card carrying an unknown signer beside the trusted one is
/// by `verify FILE`; `--require-response-signature` demands the response
/// signature.
#[test]
fn one_verdict_rule_for_several_signatures_in_file_url_and_batch_modes() {
    let ca = Ca::new();
    let srv = Server::start(&ca, &["agents.example"]);
    let t = Tmp::new("rule");
    std::fs::write(t.0.join("ca.pem"), ca.pem()).unwrap();
    let (card_key, card) = signed_card_file(&t, "docs/card.json");
    // File: the trusted signature and one by an unknown kid.
    let stranger = countersigned(&t, &card);
    // URL: the card, its response signed by the unknown key.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let body = serde_json::to_vec(&card).unwrap();
    srv.route("/card.json", signed_resp(&body, &stranger, now, None));
    // The same card, its response signed by the trusted key but expired:
    // checked with a trusted key and failed, so invalid.
    srv.route(
        "/expired.json",
        signed_resp(&body, &card_key, now - 600, Some(now - 300)),
    );
    let url = srv.url("agents.example", "/card.json");
    let expired = srv.url("agents.example", "/expired.json");
    std::fs::write(t.0.join("urls.txt"), format!("{url}\n")).unwrap();
    std::fs::write(t.0.join("expired.txt"), format!("{expired}\n")).unwrap();
    let net = [
        "--jwks",
        "card-keys.json",
        "--json",
        "--ca-file",
        "ca.pem",
        "--resolve-to",
        "agents.example=127.0.0.1",
        "--allow-private-networks",
    ];
    let verdict = |args: &[&str]| {
        let o = run(&t.0, args, None);
        // The first report (a single command prints it over several lines).
        let l: Value = serde_json::Deserializer::from_slice(&o.stdout)
            .into_iter()
            .next()
            .unwrap()
            .unwrap();
        (
            o.status.code(),
            l["verdict"].clone(),
            l["error"]["code"].clone(),
        )
    };
    let ok = (Some(0), json!("verified"), Value::Null);
    assert_eq!(
        verdict(&[&["verify", "docs/both.json"][..], &net].concat()),
        ok
    );
    assert_eq!(verdict(&[&["verify", url.as_str()][..], &net].concat()), ok);
    assert_eq!(
        verdict(&[&["verify", "--batch", "urls.txt"][..], &net].concat()),
        ok
    );
    let o = run(&t.0, &[&["verify", url.as_str()][..], &net].concat(), None);
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["details"]["not_checked"], json!(["rfc9421"]), "{r}");
    // In text, the note says which signature was set aside, and why.
    let o = run(
        &t.0,
        &[&["verify", url.as_str()][..], &net[..2], &net[3..]].concat(),
        None,
    );
    assert!(
        err(&o).contains("note: the RFC 9421 response signature not checked: no trusted key"),
        "{}",
        err(&o)
    );
    let invalid = (
        Some(1),
        json!("not-verified"),
        json!("httpsig.not-verified"),
    );
    assert_eq!(
        verdict(&[&["verify", expired.as_str()][..], &net].concat()),
        invalid
    );
    assert_eq!(
        verdict(&[&["verify", "--batch", "expired.txt"][..], &net].concat()),
        invalid
    );
    let refused = (Some(1), json!("not-verified"), json!("httpsig.required"));
    let strict = ["--require-response-signature"];
    assert_eq!(
        verdict(&[&["verify", url.as_str()][..], &net, &strict].concat()),
        refused
    );
    assert_eq!(
        verdict(&[&["verify", "--batch", "urls.txt"][..], &net, &strict].concat()),
        refused
    );
}

/// One verdict for one input: every local document of a directory gets in
/// the batch the verdict `verify FILE` gives it alone, whatever its format
/// (descriptors with their `.jws`, A2A cards with embedded signatures, a
/// card with a stale `.jws` beside it, a card without `signatures` but
/// with a detached JWS, an unknown signer beside a trusted one).
#[test]
fn every_local_input_gets_the_verdict_verify_file_gives_it() {
    let (t, key) = setup("same-verdict", 3);
    // a01: tampered; a02: its JWS missing.
    std::fs::write(t.0.join("docs/a01.json"), doc(99)).unwrap();
    std::fs::remove_file(t.0.join("docs/a02.json.jws")).unwrap();
    let (card_key, card) = signed_card_file(&t, "docs/card.json");
    let stale = descriptor::sign(b"{\"name\":\"stale\"}", &card_key)
        .unwrap()
        .jws;
    std::fs::write(t.0.join("docs/card.json.jws"), stale).unwrap();
    countersigned(&t, &card);
    let mut bare = card.clone();
    bare.as_object_mut().unwrap().remove("signatures");
    let bare = serde_json::to_vec(&bare).unwrap();
    std::fs::write(t.0.join("docs/bare.json"), &bare).unwrap();
    let jws = descriptor::sign(&bare, &card_key).unwrap().jws;
    std::fs::write(t.0.join("docs/bare.json.jws"), jws).unwrap();
    // One key set for both kinds of document.
    let keys = agentsig::jwk::jwks_document(&[key.verifying_key(), card_key.verifying_key()]);
    std::fs::write(t.0.join("all-keys.json"), keys.to_string()).unwrap();
    let o = run(
        &t.0,
        &[
            "verify",
            "--batch",
            "docs",
            "--jwks",
            "all-keys.json",
            "--json",
        ],
        None,
    );
    let lines = json_lines(&o);
    let mut names: Vec<String> = std::fs::read_dir(t.0.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    assert_eq!(lines.len(), names.len() + 1);
    let mut verified = Vec::new();
    for n in &names {
        let subject = format!("docs/{n}");
        let single = run(&t.0, &["verify", &subject, "--jwks", "all-keys.json"], None);
        let in_batch = lines
            .iter()
            .find(|l| l["subject"] == subject.as_str())
            .unwrap_or_else(|| panic!("{subject} in the batch"));
        assert_eq!(
            in_batch["verified"] == true,
            single.status.code() == Some(0),
            "{subject}: batch {in_batch}, verify FILE: {}",
            err(&single)
        );
        if in_batch["verified"] == true {
            verified.push(n.as_str());
        }
    }
    // both.json is not verified here, in either mode: the descriptors' key
    // has no `kid`, so it is a trusted key for the stranger's signature
    // too, which fails with it (invalid, not "not checked").
    assert_eq!(verified, ["a00.json", "bare.json", "card.json"]);
}

/// `--offline`: local descriptors verified as usual; URL inputs, catalog
/// entries and nested catalogs by `url` are not fetched and are reported as
/// such, never as verified (exit 1).
#[test]
fn offline_fetches_nothing_and_says_so() {
    let (t, _) = setup("offline", 1);
    let catalog = serde_json::json!({
        "specVersion": "1.0",
        "entries": [
            {"identifier": "urn:example:a", "displayName": "A",
             "mediaType": "application/a2a-agent-card+json", "url": "https://card.invalid/a.json"},
            {"identifier": "urn:example:n", "displayName": "N",
             "mediaType": "application/ai-catalog+json", "url": "https://nested.invalid/ai-catalog.json"}
        ]
    });
    std::fs::write(t.0.join("docs/ai-catalog.json"), catalog.to_string()).unwrap();
    std::fs::write(t.0.join("list.txt"), "https://agent.invalid/agent.json\n").unwrap();
    let o = run(
        &t.0,
        &[
            "verify",
            "--batch",
            "docs",
            "--jwks",
            "keys.json",
            "--offline",
            "--json",
            "--ordered",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let lines = json_lines(&o);
    let text = serde_json::to_string(&lines).unwrap();
    assert_eq!(lines[0]["verdict"], "verified", "{text}");
    let offline: Vec<&Value> = lines
        .iter()
        .filter(|r| r["error"]["code"] == "batch.offline")
        .collect();
    assert_eq!(offline.len(), 2, "the card and the nested catalog: {text}");
    assert!(offline.iter().all(|r| r["verdict"] == "not-verified"));
    assert!(
        !text.contains("dns") && !text.contains("DNS"),
        "nothing fetched: {text}"
    );
    let o = run(
        &t.0,
        &[
            "verify",
            "--batch",
            "list.txt",
            "--jwks",
            "keys.json",
            "--offline",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("https://agent.invalid/agent.json: not fetched (--offline)"),
        "{out}"
    );
}
