//! `agentsig verify https://...` and `agentsig resolve agent://...`
//! against loopback HTTPS servers (private networks enabled explicitly,
//! except in the refusal test).

mod net_support;

use agentsig::{descriptor, Algorithm, SigningKey};
use net_support::{Ca, Resp, Server};
use serde_json::{json, Value};
use std::process::{Command, Output};

struct Env {
    srv: Server,
    ca_file: std::path::PathBuf,
    body: Vec<u8>,
}

impl Drop for Env {
    /// The CA file is the test's only file: removed with it.
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.ca_file);
    }
}

fn env() -> Env {
    let ca = Ca::new();
    let srv = Server::start(&ca, &["agents.example"]);
    let ca_file = std::env::temp_dir().join(format!(
        "agentsig-net-cli-{}-{}.pem",
        std::process::id(),
        srv.port
    ));
    std::fs::write(&ca_file, ca.pem()).unwrap();
    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256)
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
    let jws = descriptor::sign(&body, &key).unwrap().jws;
    srv.route("/planner.json", Resp::ok("application/json", body.clone()));
    srv.route("/planner.json.jws", Resp::ok("application/jose", jws));
    srv.route(
        "/plain.json",
        Resp::ok("application/json", "{\"name\":\"p\"}"),
    );
    srv.route(
        "/.well-known/agents.json",
        Resp::json(&json!({"agents": {"planner": "/planner.json"}})),
    );
    Env { srv, ca_file, body }
}

fn run(e: &Env, args: &[&str], private: bool) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_agentsig"));
    c.args(args)
        .arg("--ca-file")
        .arg(&e.ca_file)
        .arg("--resolve-to")
        .arg("agents.example=127.0.0.1")
        .env_remove("AGENTSIG_ALLOW_PRIVATE_NETWORKS")
        .env_remove("AGENTSIG_CA_FILE");
    if private {
        c.env("AGENTSIG_ALLOW_PRIVATE_NETWORKS", "1");
    }
    c.output().unwrap()
}

#[test]
fn verify_url_prints_the_verified_descriptor() {
    let e = env();
    let url = e.srv.url("agents.example", "/planner.json");
    let o = run(&e, &["verify", &url, "--require-signed"], true);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.stdout, e.body);
    let o = run(&e, &["verify", &url, "--json"], true);
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["verdict"], "verified");
    assert_eq!(r["details"]["signed"], true);
    // A new process has an empty cache: the descriptor came from the origin.
    assert_eq!(r["details"]["cache"], "network");
    assert_eq!(r["details"]["descriptor"]["name"], "planner");
    // The authority the keys came from, as JSON (never a Rust debug string).
    assert_eq!(
        r["details"]["key_authority"],
        json!({"kind": "jwks-uri", "from": e.srv.url("agents.example", "/jwks")})
    );
}

/// `--jws` and `--require-all` concern a local FILE: with a descriptor
/// URL they are refused (exit 2) before anything is fetched, never
/// ignored.
#[test]
fn verify_url_refuses_the_options_of_a_local_file() {
    let e = env();
    let url = e.srv.url("agents.example", "/planner.json");
    for opts in [&["--jws", "x.jws"][..], &["--require-all"][..]] {
        let mut args = vec!["verify", url.as_str()];
        args.extend_from_slice(opts);
        let o = run(&e, &args, true);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{opts:?}: {err}");
        assert!(err.contains("apply to a local FILE"), "{opts:?}: {err}");
    }
    assert_eq!(e.srv.hit_count("/planner.json"), 0, "nothing fetched");
}

#[test]
fn verify_url_unsigned_under_require_signed_fails() {
    let e = env();
    let url = e.srv.url("agents.example", "/plain.json");
    let o = run(&e, &["verify", &url, "--require-signed", "--json"], true);
    assert_eq!(o.status.code(), Some(1));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["error"]["code"], "descriptor.unsigned");
    assert_eq!(r["verdict"], "unsigned");
}

/// An unsigned descriptor is never "verified" (draft-narvaneni-agent-uri-03
/// section 10.3 lets a policy accept it, under its own verdict): `verify`
/// refuses it by default, `--allow-unsigned` accepts it as `unsigned`
/// (exit 0, `verified: false`), and `resolve` returns it labelled
/// `unsigned` unless `--require-signed`.
#[test]
fn an_unsigned_descriptor_is_unsigned_in_every_command() {
    let e = env();
    let url = e.srv.url("agents.example", "/plain.json");
    let json = |o: &Output| -> Value { serde_json::from_slice(&o.stdout).unwrap() };
    // verify: refused by default, text and JSON alike.
    let o = run(&e, &["verify", &url], true);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty(), "an unsigned document is not printed");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("unsigned") && err.contains("--allow-unsigned"),
        "{err}"
    );
    let o = run(&e, &["verify", &url, "--json"], true);
    assert_eq!(o.status.code(), Some(1));
    let r = json(&o);
    assert_eq!(
        (r["verdict"].as_str(), r["verified"].as_bool()),
        (Some("unsigned"), Some(false))
    );
    assert_eq!(r["error"]["code"], "descriptor.unsigned");
    // --allow-unsigned: accepted, as what it is.
    let o = run(&e, &["verify", &url, "--allow-unsigned", "--json"], true);
    assert_eq!(o.status.code(), Some(0));
    let r = json(&o);
    assert_eq!(
        (r["verdict"].as_str(), r["verified"].as_bool()),
        (Some("unsigned"), Some(false))
    );
    assert_eq!(r["details"]["descriptor"]["name"], "p");
    let o = run(&e, &["verify", &url, "--allow-unsigned"], true);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(o.stdout, b"{\"name\":\"p\"}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("unsigned"));
    // --allow-unsigned with --require-signed is a contradiction.
    let o = run(
        &e,
        &["verify", &url, "--allow-unsigned", "--require-signed"],
        true,
    );
    assert_eq!(o.status.code(), Some(2));
    // resolve: labelled unsigned, refused under --require-signed.
    e.srv.route(
        "/.well-known/agents.json",
        Resp::json(&json!({"agents": {"planner": "/planner.json", "plain": "/plain.json"}})),
    );
    let uri = format!("agent://agents.example:{}/plain", e.srv.port);
    let o = run(&e, &["resolve", &uri, "--json"], true);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let r = json(&o);
    assert_eq!(
        (r["verdict"].as_str(), r["verified"].as_bool()),
        (Some("unsigned"), Some(false))
    );
    let o = run(&e, &["resolve", &uri, "--require-signed", "--json"], true);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(json(&o)["verdict"], "unsigned");
    // A signed one is still verified.
    let o = run(
        &e,
        &[
            "verify",
            &e.srv.url("agents.example", "/planner.json"),
            "--json",
        ],
        true,
    );
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(json(&o)["verdict"], "verified");
}

/// A key set that cannot be fetched (a 500, a host that does not answer)
/// is not a bad signature: the report is `unavailable` with the fetch's
/// reason, its signature `not-checked`.
#[test]
fn an_unfetchable_key_set_is_unavailable_not_a_bad_signature() {
    let e = env();
    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256)
        .unwrap()
        .with_kid("k1");
    // A closed port: bound, then dropped.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut err500 = Resp::ok("application/json", "oops");
    err500.status = 500;
    e.srv.route("/jwks500", err500);
    for (name, jwks) in [
        ("s500", e.srv.url("agents.example", "/jwks500")),
        ("gone", format!("https://agents.example:{closed}/jwks")),
    ] {
        let body = serde_json::to_vec(&json!({"name": name, "authentication": {"jwksUri": jwks}}))
            .unwrap();
        let jws = descriptor::sign(&body, &key).unwrap().jws;
        e.srv
            .route(&format!("/{name}.json"), Resp::ok("application/json", body));
        e.srv.route(
            &format!("/{name}.json.jws"),
            Resp::ok("application/jose", jws),
        );
        let url = e.srv.url("agents.example", &format!("/{name}.json"));
        let o = run(&e, &["verify", &url, "--json"], true);
        assert_eq!(o.status.code(), Some(1), "{name}");
        let r: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(r["verdict"], "unavailable", "{name}: {r}");
        assert_eq!(r["verified"], false);
        let code = r["error"]["code"].as_str().unwrap();
        assert!(code.starts_with("discovery."), "{name}: {code}");
        let sigs = r["signatures"].as_array().unwrap();
        assert_eq!(sigs.len(), 1, "{name}: {r}");
        assert_eq!(sigs[0]["verdict"], "not-checked", "{name}: {r}");
        assert_eq!(sigs[0]["reason"]["code"], code, "{name}");
        let o = run(&e, &["verify", &url], true);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("unavailable") && !err.contains("does not verify"),
            "{name}: {err}"
        );
    }
}

#[test]
fn resolve_agent_uri() {
    let e = env();
    let uri = format!("agent://agents.example:{}/planner", e.srv.port);
    let o = run(&e, &["resolve", &uri, "--require-signed", "--json"], true);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["command"], "resolve");
    assert_eq!(r["details"]["descriptor"]["name"], "planner");
}

#[test]
fn private_networks_refused_by_default_without_connection() {
    let e = env();
    let uri = format!("agent://agents.example:{}/planner", e.srv.port);
    let o = run(&e, &["resolve", &uri, "--json"], false);
    assert_eq!(o.status.code(), Some(1));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["error"]["code"], "resolve.ssrf-refused");
    let o = run(
        &e,
        &["verify", &e.srv.url("127.0.0.1", "/planner.json"), "--json"],
        false,
    );
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["error"]["code"], "fetch.ssrf-refused");
    assert_eq!(e.srv.accepted(), 0);
}

#[test]
fn cache_dir_spares_the_second_jwks_fetch() {
    let e = env();
    let url = e.srv.url("agents.example", "/planner.json");
    let dir = std::env::temp_dir().join(format!(
        "agentsig-cli-cache-{}-{}",
        std::process::id(),
        e.srv.port
    ));
    let d = dir.to_str().unwrap();
    for _ in 0..2 {
        let o = run(
            &e,
            &["verify", &url, "--require-signed", "--cache-dir", d],
            true,
        );
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    assert_eq!(e.srv.hit_count("/jwks"), 1);
    assert_eq!(
        e.srv.hit_count("/planner.json"),
        2,
        "descriptors are always fetched"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--deadline` bounds the whole command and `--timeout` each fetch: a
/// trickled descriptor fails with `fetch.timeout` (exit 1), a key set that
/// fails with `discovery.fetch-failed`, not as a bad signature; a zero
/// deadline is a usage error.
#[test]
fn deadlines_and_network_failure_codes_in_json() {
    let e = env();
    e.srv.route(
        "/slow.json",
        Resp::ok("application/json", vec![b' '; 60]).trickle(std::time::Duration::from_millis(200)),
    );
    let url = e.srv.url("agents.example", "/slow.json");
    for flag in ["--deadline", "--timeout"] {
        let o = run(&e, &["verify", &url, flag, "1", "--json"], true);
        assert_eq!(o.status.code(), Some(1), "{flag}");
        let r: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(r["error"]["code"], "fetch.timeout", "{flag}");
    }
    let o = run(&e, &["verify", &url, "--deadline", "0"], true);
    assert_eq!(o.status.code(), Some(2));
    e.srv.route(
        "/jwks",
        Resp {
            status: 503,
            ..Resp::ok("text/plain", "down")
        },
    );
    let url = e.srv.url("agents.example", "/planner.json");
    let o = run(&e, &["verify", &url, "--json"], true);
    assert_eq!(o.status.code(), Some(1));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["error"]["code"], "discovery.fetch-failed");
    let o = run(&e, &["verify", &url], true);
    let text = String::from_utf8_lossy(&o.stderr);
    assert_eq!(text.matches("key discovery failed").count(), 1, "{text}");
}

/// `--cache-dir` must be private: a group/world-writable directory is
/// refused (exit 2) before anything is fetched; a new one is created 0700
/// and its entries 0600.
#[cfg(unix)]
#[test]
fn cache_dir_must_be_private() {
    use std::os::unix::fs::PermissionsExt;
    let e = env();
    let url = e.srv.url("agents.example", "/planner.json");
    let dir = std::env::temp_dir().join(format!(
        "agentsig-cli-private-{}-{}",
        std::process::id(),
        e.srv.port
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let d = dir.to_str().unwrap();
    let o = run(&e, &["verify", &url, "--cache-dir", d], true);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not private"));
    assert_eq!(e.srv.accepted(), 0, "refused before any fetch");
    std::fs::remove_dir_all(&dir).unwrap();
    let o = run(&e, &["verify", &url, "--cache-dir", d], true);
    assert_eq!(o.status.code(), Some(0));
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700);
    let entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|x| x.unwrap().path())
        .collect();
    assert!(!entries.is_empty());
    for p in entries {
        assert_eq!(mode(&p), 0o600, "{}", p.display());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `agentsig lint URL`: fetched with the same SSRF-guarded fetcher
/// (refused by default on loopback, no connection), then linted.
#[test]
fn lint_url_fetches_through_the_guarded_fetcher() {
    let e = env();
    let url = e.srv.url("agents.example", "/.well-known/agents.json");
    let o = run(&e, &["lint", &url], false);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(e.srv.accepted(), 0, "refused before connecting");
    let o = run(&e, &["lint", &url, "--json"], true);
    assert!(
        matches!(o.status.code(), Some(0) | Some(1)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["details"]["format"], "agents-registry", "{r}");
    assert_eq!(
        o.status.code(),
        Some(0),
        "a relative entry is an https URL: {r}"
    );
    let o = run(&e, &["lint", "http://agents.example/x.json"], true);
    assert_eq!(o.status.code(), Some(2), "cleartext http is refused");
}

/// The low-S flavour of an ECDSA P-256 JWS signature `r || s`: both
/// `(r, s)` and `(r, n - s)` verify under ECDSA (FIPS 186-5), and
/// `--strict-low-s` accepts only the one with `s <= n/2`. Returns
/// (high, low).
fn both_s(sig: &[u8]) -> (Vec<u8>, Vec<u8>) {
    // The order n of P-256 (SEC 2 section 2.4.2).
    let n =
        hex::decode("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551").unwrap();
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
    if sig[32..] > other[32..] {
        (sig.to_vec(), other)
    } else {
        (other, sig.to_vec())
    }
}

/// `--strict-low-s` reaches the verification of a fetched descriptor: a
/// high-S detached JWS verifies by default and is refused with the flag
/// (exit 1, a signature failure, not a usage error); its low-S twin
/// verifies either way.
#[test]
fn strict_low_s_applies_to_url_verification() {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let e = env();
    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256)
        .unwrap()
        .with_kid("k2");
    let mut j = key.verifying_key().to_jwk().to_value();
    j["use"] = json!("sig");
    e.srv.route("/jwks2", Resp::json(&json!({ "keys": [j] })));
    let body = serde_json::to_vec(&json!({
        "name": "lows",
        "authentication": {"jwksUri": e.srv.url("agents.example", "/jwks2")}
    }))
    .unwrap();
    let jws = descriptor::sign(&body, &key).unwrap().jws;
    let (head, sig_b64) = jws.trim().rsplit_once('.').unwrap();
    let (high, low) = both_s(&b64.decode(sig_b64).unwrap());
    e.srv
        .route("/lows.json", Resp::ok("application/json", body.clone()));
    for (name, sig, strict_code) in [("high", &high, 1), ("low", &low, 0)] {
        e.srv.route(
            "/lows.json.jws",
            Resp::ok("application/jose", format!("{head}.{}", b64.encode(sig))),
        );
        let url = e.srv.url("agents.example", "/lows.json");
        let o = run(&e, &["verify", &url, "--require-signed"], true);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let o = run(
            &e,
            &["verify", &url, "--require-signed", "--strict-low-s"],
            true,
        );
        assert_eq!(
            o.status.code(),
            Some(strict_code),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// `verify URL --pin-store` (and `resolve --pin-store`) keep key continuity
/// as `verify FILE` does:
/// first sight pins the key that verified, the same key matches, a pin of
/// another key fails with `pin.key-changed` (exit 1), and an unsigned
/// descriptor has no key to pin (`pin.no-key`, exit 1). The option was
/// accepted and ignored for URLs before.
#[test]
fn verify_url_keeps_key_continuity_with_a_pin_store() {
    let e = env();
    let dir = std::env::temp_dir().join(format!("agentsig-net-pin-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let store = dir.join("pins.json");
    let store = store.to_str().unwrap();
    let url = e.srv.url("agents.example", "/planner.json");
    let code_of = |args: &[&str]| -> (Option<i32>, Value) {
        let o = run(&e, args, true);
        let r: Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&o.stderr)));
        (o.status.code(), r)
    };
    let codes = |r: &Value| -> Vec<String> {
        r["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["code"].as_str().map(str::to_owned))
            .collect()
    };
    let args = ["verify", url.as_str(), "--pin-store", store, "--json"];
    let (code, r) = code_of(&args);
    assert_eq!(code, Some(0), "{r}");
    assert!(codes(&r).contains(&"pin.first-seen".to_owned()), "{r}");
    let (code, r) = code_of(&args);
    assert_eq!(code, Some(0), "{r}");
    assert!(codes(&r).contains(&"pin.match".to_owned()), "{r}");
    // `resolve` keeps the same continuity for the descriptor it resolves.
    let uri = format!("agent://agents.example:{}/planner", e.srv.port);
    let (code, r) = code_of(&["resolve", &uri, "--pin-store", store, "--json"]);
    assert_eq!(code, Some(0), "{r}");
    assert!(codes(&r).contains(&"pin.match".to_owned()), "{r}");
    // The operator pins another key for the descriptor's identity ("name").
    let o = Command::new(env!("CARGO_BIN_EXE_agentsig"))
        .args(["pin", "rotate", "planner", "--to"])
        .arg("A".repeat(43))
        .args(["--pin-store", store])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let (code, r) = code_of(&args);
    assert_eq!(code, Some(1), "{r}");
    assert_eq!(r["error"]["code"], "pin.key-changed", "{r}");
    assert_eq!(r["verdict"], "not-verified", "{r}");
    let (code, r) = code_of(&["resolve", &uri, "--pin-store", store, "--json"]);
    assert_eq!(code, Some(1), "{r}");
    assert_eq!(r["error"]["code"], "pin.key-changed", "{r}");
    let plain = e.srv.url("agents.example", "/plain.json");
    let (code, r) = code_of(&["verify", &plain, "--pin-store", store, "--json"]);
    assert_eq!(code, Some(1), "{r}");
    assert_eq!(r["error"]["code"], "descriptor.unsigned", "{r}");
    // Accepted as unsigned, it still has no key to pin.
    let (code, r) = code_of(&[
        "verify",
        &plain,
        "--allow-unsigned",
        "--pin-store",
        store,
        "--json",
    ]);
    assert_eq!(code, Some(1), "{r}");
    assert_eq!(r["error"]["code"], "pin.no-key", "{r}");
    let _ = std::fs::remove_dir_all(&dir);
}
