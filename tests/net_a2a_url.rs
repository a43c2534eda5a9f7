//! `verify URL` of an A2A Agent Card over loopback HTTPS: the card's own
//! embedded signatures (`agentsig::a2a::sign_card`) are verified as well as
//! the response signature; a `jku` is followed only on opt-in and only on
//! the card's own origin.
#![cfg(feature = "net")]

mod net_support;

use agentsig::net::verify::{UrlVerifyError, UrlVerifyOptions};
use agentsig::net::{FetchPolicy, Fetcher, Resolver};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::{a2a, Algorithm, SigningKey};
use net_support::{loopback, Ca, Resp, Server};
use serde_json::{json, Map, Value};
use std::sync::Arc;

#[path = "b64_support/mod.rs"]
mod b64;

struct Env {
    _ca: Ca,
    srv: Server,
    fetcher: Fetcher,
}

fn env() -> Env {
    let ca = Ca::new();
    let srv = Server::start(&ca, &["agent.example", "other.example"]);
    let fetcher = Fetcher::with_policy(
        FetchPolicy::default()
            .extra_root_pem(ca.pem())
            .allow_private_networks(true)
            .pin("agent.example", loopback())
            .pin("other.example", loopback()),
    )
    .unwrap();
    Env {
        _ca: ca,
        srv,
        fetcher,
    }
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

fn key(kid: &str) -> SigningKey {
    SigningKey::generate(Algorithm::EcdsaP256Sha256)
        .unwrap()
        .with_kid(kid)
}

fn card() -> Value {
    json!({
        "name": "Planner",
        "description": "plans",
        "version": "1.0.0",
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "plan", "name": "plan", "description": "d", "tags": ["t"]}]
    })
}

/// The card signed by `a2a::sign_card`, or, with a `jku`, signed the way
/// the A2A SDKs do with `jku` in the protected header (`sign_card` itself
/// refuses to write key-bearing headers).
fn signed_card(k: &SigningKey, jku: Option<&str>) -> Vec<u8> {
    let Some(jku) = jku else {
        let c = a2a::sign_card(&card(), k, &Map::new(), false).unwrap().card;
        return serde_json::to_vec(&c).unwrap();
    };
    let n = a2a::normalize(&card()).unwrap();
    let header = json!({"alg": "ES256", "kid": k.kid(), "typ": "JOSE", "jku": jku});
    let protected = b64::encode(header.to_string().as_bytes());
    let input = format!("{protected}.{}", b64::encode(&n.payload));
    let sig = b64::encode(&k.sign(input.as_bytes()).unwrap());
    let mut c = n.card;
    c["signatures"] = json!([{"protected": protected, "signature": sig}]);
    serde_json::to_vec(&c).unwrap()
}

fn pinned(keys: &[&SigningKey]) -> UrlVerifyOptions {
    let mut s = StaticKeys::new();
    for k in keys {
        s = s.with(k.verifying_key().clone(), KeySource::Pinned);
    }
    let mut o = UrlVerifyOptions::default();
    // The default refuses an unsigned descriptor.
    o.keys = Some(Arc::new(s));
    o
}

fn jwks(k: &SigningKey) -> Value {
    let mut j = k.verifying_key().to_jwk().to_value();
    j["use"] = json!("sig");
    json!({ "keys": [j] })
}

/// Response signature over `body` by `k` (RFC 9421 + Content-Digest).
fn signed_resp(body: &[u8], k: &SigningKey) -> Resp {
    let fields = agentsig::httpsig::static_response_fields(
        body,
        "application/json",
        &[(k, k.kid().unwrap().to_owned())],
        now(),
        Some(now() + 600),
    )
    .unwrap();
    let mut r = Resp::ok("application/json", body.to_vec());
    r.headers.clear();
    for (n, v) in fields {
        r = r.header(&n, &v);
    }
    r
}

#[test]
fn card_signed_with_sign_card_verifies() {
    let e = env();
    let k = key("card-key");
    e.srv.route(
        "/.well-known/agent-card.json",
        Resp::ok("application/json", signed_card(&k, None)),
    );
    let url = e.srv.url("agent.example", "/.well-known/agent-card.json");
    let v = Resolver::with_options(e.fetcher.clone(), pinned(&[&k]))
        .verify_url(&url)
        .unwrap();
    assert!(v.card.as_ref().is_some_and(|c| c.verified()));
    assert_eq!(v.checked(), vec!["a2a-card"]);

    // With a response signature too, both are checked.
    let r = key("resp-key");
    e.srv
        .route("/card.json", signed_resp(&signed_card(&k, None), &r));
    let url = e.srv.url("agent.example", "/card.json");
    let v = Resolver::with_options(e.fetcher.clone(), pinned(&[&k, &r]))
        .verify_url(&url)
        .unwrap();
    assert_eq!(v.checked(), vec!["rfc9421", "a2a-card"]);
}

/// A card whose embedded signature is broken is not verified, even though
/// its response signature (over the served bytes) is fine.
#[test]
fn broken_embedded_signature_fails_despite_a_good_response_signature() {
    let e = env();
    let (k, r) = (key("card-key"), key("resp-key"));
    let mut c: Value = serde_json::from_slice(&signed_card(&k, None)).unwrap();
    c["description"] = json!("tampered after signing");
    let body = serde_json::to_vec(&c).unwrap();
    e.srv.route("/card.json", signed_resp(&body, &r));
    let url = e.srv.url("agent.example", "/card.json");
    let err = Resolver::with_options(e.fetcher.clone(), pinned(&[&k, &r]))
        .verify_url(&url)
        .unwrap_err();
    assert!(matches!(err, UrlVerifyError::Card { .. }), "{err:?}");
    assert_eq!(err.code(), "a2a.not-verified");
}

/// `jku` on the card's own origin is followed only with the opt-in; a
/// cross-origin `jku` is refused and never fetched.
#[test]
fn jku_only_on_opt_in_and_same_origin() {
    let e = env();
    let k = key("card-key");
    e.srv.route("/jwks.json", Resp::json(&jwks(&k)));
    let same = e.srv.url("agent.example", "/jwks.json");
    e.srv.route(
        "/same.json",
        Resp::ok("application/json", signed_card(&k, Some(&same))),
    );
    let url = e.srv.url("agent.example", "/same.json");
    let mut o = UrlVerifyOptions::default();
    // The default refuses an unsigned descriptor.

    // Without the opt-in: ignored, no key source, nothing fetched.
    let err = Resolver::with_options(e.fetcher.clone(), o.clone())
        .verify_url(&url)
        .unwrap_err();
    assert_eq!(err.code(), "keys.no-source", "{err}");
    assert_eq!(e.srv.hit_count("/jwks.json"), 0);

    // With it: the same-origin key set verifies the card.
    o.follow_jku = true;
    let v = Resolver::with_options(e.fetcher.clone(), o.clone())
        .verify_url(&url)
        .unwrap();
    assert_eq!(v.checked(), vec!["a2a-card"]);
    assert_eq!(e.srv.hit_count("/jwks.json"), 1);

    // Cross-origin (another host on the same server): refused unfetched.
    e.srv.route("/other-jwks.json", Resp::json(&jwks(&k)));
    let other = e.srv.url("other.example", "/other-jwks.json");
    e.srv.route(
        "/cross.json",
        Resp::ok("application/json", signed_card(&k, Some(&other))),
    );
    let err = Resolver::with_options(e.fetcher.clone(), o.clone())
        .verify_url(&e.srv.url("agent.example", "/cross.json"))
        .unwrap_err();
    assert_eq!(err.code(), "discovery.jku-refused", "{err}");
    assert_eq!(e.srv.hit_count("/other-jwks.json"), 0);

    // Not https: refused as well.
    e.srv.route(
        "/http.json",
        Resp::ok(
            "application/json",
            signed_card(&k, Some(&same.replace("https://", "http://"))),
        ),
    );
    let err = Resolver::with_options(e.fetcher.clone(), o)
        .verify_url(&e.srv.url("agent.example", "/http.json"))
        .unwrap_err();
    assert_eq!(err.code(), "discovery.jku-refused", "{err}");
}

/// The CLI says which signatures were checked, in text and `--json`;
/// `--follow-jku` is the opt-in for a same-origin `jku`.
#[test]
fn cli_reports_the_card_signatures_checked() {
    let e = env();
    let k = key("card-key");
    let dir = std::env::temp_dir().join(format!(
        "agentsig-a2a-url-{}-{}",
        std::process::id(),
        e.srv.port
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let ca = dir.join("ca.pem");
    std::fs::write(&ca, e._ca.pem()).unwrap();
    let jwks_file = dir.join("jwks.json");
    std::fs::write(&jwks_file, jwks(&k).to_string()).unwrap();
    e.srv.route(
        "/.well-known/agent-card.json",
        Resp::ok("application/json", signed_card(&k, None)),
    );
    e.srv.route("/jwks.json", Resp::json(&jwks(&k)));
    let same = e.srv.url("agent.example", "/jwks.json");
    e.srv.route(
        "/jku.json",
        Resp::ok("application/json", signed_card(&k, Some(&same))),
    );
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_agentsig"))
            .args(args)
            .arg("--ca-file")
            .arg(&ca)
            .arg("--resolve-to")
            .arg("agent.example=127.0.0.1")
            .env("AGENTSIG_ALLOW_PRIVATE_NETWORKS", "1")
            .env_remove("AGENTSIG_CA_FILE")
            .output()
            .unwrap()
    };
    let url = e.srv.url("agent.example", "/.well-known/agent-card.json");
    let o = run(&[
        "verify",
        &url,
        "--jwks",
        jwks_file.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["verdict"], "verified");
    assert_eq!(r["details"]["checked"], json!(["a2a-card"]), "{r}");
    let o = run(&["verify", &url, "--jwks", jwks_file.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("A2A card signatures"));

    let url = e.srv.url("agent.example", "/jku.json");
    let o = run(&["verify", &url, "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["error"]["code"], "keys.no-source");
    let msg = r["error"]["message"].as_str().unwrap_or_default();
    assert!(
        msg.starts_with("no key to check the signature with: give --key PUBLIC-KEY or --jwks JWKS"),
        "an A2A card URL without keys says what to give: {msg}"
    );
    let o = run(&["verify", &url, "--follow-jku", "--json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
