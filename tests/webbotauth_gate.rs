//! The Web Bot Auth gate and `http verify` bind a request signature to the
//! site that verifies it (RFC 9421 section 7.2.1), make a captured signature
//! short-lived and single-use where they can (RFC 9421 section 7.2.2), never
//! let a self-asserted key pass an agent allow-list, and refuse content the
//! signature does not cover (RFC 9421 section 7.2.8).
#![cfg(feature = "server")]

use agentsig::httpsig::{self, ComponentId, Derived, Message, SignatureSpec, SiteAuthorities};
use agentsig::server::webbotauth::{AgentIdentity, BotAuthConfig, BotAuthLayer};
use agentsig::webbotauth::directory::directory_body;
use agentsig::webbotauth::signature_key::hwk_member;
use agentsig::webbotauth::{
    sign_message, Policy, SignOptions, StaticDirectory, WebBotAuthVerifier, WELL_KNOWN_PATH,
};
use agentsig::{Algorithm, SigningKey};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tower::{Layer, ServiceExt};

const AGENT: &str = "https://agent.example";

fn now() -> i64 {
    agentsig::clock::Clock::now(&agentsig::clock::SystemClock)
}

/// A request (raw text), signed by the agent under the profile; the raw
/// text with the fields added.
fn wba_signed(key: &SigningKey, raw: &str, o: &SignOptions) -> Vec<u8> {
    let mut m = Message::parse_keep_raw(raw.as_bytes(), "https").unwrap();
    let s = sign_message(&mut m, key, o).unwrap();
    m.with_fields_inserted(&s.fields).unwrap()
}

fn parsed(raw: &[u8]) -> Message {
    Message::parse(raw, "https").unwrap()
}

fn get_for(host: &str) -> String {
    format!("GET /account/42 HTTP/1.1\r\nHost: {host}\r\n\r\n")
}

fn directory(key: &SigningKey) -> StaticDirectory {
    StaticDirectory::new().with(
        &format!("{AGENT}{WELL_KNOWN_PATH}"),
        vec![key.verifying_key().clone()],
    )
}

fn to_http(raw: &[u8]) -> http::Request<Full<Bytes>> {
    let text = String::from_utf8(raw.to_vec()).unwrap();
    let (head, _) = text.split_once("\r\n\r\n").unwrap();
    let mut lines = head.split("\r\n");
    let target = lines.next().unwrap().split(' ').nth(1).unwrap().to_owned();
    let mut b = http::Request::get(target);
    for l in lines {
        let (n, v) = l.split_once(": ").unwrap();
        b = b.header(n, v);
    }
    b.body(Full::new(Bytes::new())).unwrap()
}

/// One request through a `BotAuthLayer` configured for `site`: status and
/// body.
async fn gate(layer: &BotAuthLayer, req: http::Request<Full<Bytes>>) -> (u16, String) {
    let svc = layer.layer(tower::service_fn(
        |r: http::Request<Full<Bytes>>| async move {
            let who = match r.extensions().get::<AgentIdentity>() {
                Some(AgentIdentity::Verified(a)) => a.agent.clone(),
                _ => "anonymous".into(),
            };
            Ok::<_, std::convert::Infallible>(http::Response::new(Full::new(Bytes::from(who))))
        },
    ));
    let res = svc.oneshot(req).await.unwrap();
    let status = res.status().as_u16();
    let body = res.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}

fn layer_for(key: &SigningKey, site: &str, policy: Policy) -> BotAuthLayer {
    BotAuthLayer::new(BotAuthConfig::new(
        WebBotAuthVerifier::new(policy),
        Arc::new(directory(key)),
        SiteAuthorities::only([site]).unwrap(),
    ))
}

/// A request the agent signed for `a.example`, sent with `Host: a.example`
/// to the gate of `b.example` (a server answering any `Host`), is refused
/// with `wrong-authority`; at `a.example`'s gate it passes.
#[tokio::test]
async fn layer_refuses_a_request_signed_for_another_site() {
    let key = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let m = wba_signed(&key, &get_for("a.example"), &SignOptions::new(AGENT, now()));
    let (status, body) = gate(
        &layer_for(&key, "b.example", Policy::default()),
        to_http(&m),
    )
    .await;
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("(wrong-authority)"), "{body}");
    let (status, body) = gate(
        &layer_for(&key, "a.example", Policy::default()),
        to_http(&m),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, AGENT);
}

/// The layer has a replay store by default: the same signed request (same
/// nonce) passes once, then is refused as a replay.
#[tokio::test]
async fn layer_accepts_a_nonce_once_by_default() {
    let key = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let m = wba_signed(&key, &get_for("a.example"), &SignOptions::new(AGENT, now()));
    let l = layer_for(&key, "a.example", Policy::default());
    assert_eq!(gate(&l, to_http(&m)).await.0, 200);
    let (status, body) = gate(&l, to_http(&m)).await;
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("(replay)"), "{body}");
}

/// Defaults make a captured signature short-lived (1 h at most); the strict
/// preset also refuses an authority-only signature and one without a nonce.
#[test]
fn default_validity_is_one_hour_and_the_strict_preset_binds_the_request() {
    let key = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let dir = directory(&key);
    let t = now();
    let verify = |p: Policy, o: &SignOptions| {
        let m = parsed(&wba_signed(&key, &get_for("a.example"), o));
        let r = WebBotAuthVerifier::new(p).verify(&m, &dir, t);
        r.first_error().map(|e| e.code())
    };
    let mut long = SignOptions::new(AGENT, t);
    long.lifetime = 2 * 3600;
    assert_eq!(verify(Policy::default(), &long), Some("validity-too-long"));
    let mut hour = SignOptions::new(AGENT, t);
    hour.lifetime = 3600;
    assert_eq!(verify(Policy::default(), &hour), None);

    let mut authority_only = SignOptions::new(AGENT, t);
    authority_only.method_and_path = false;
    assert_eq!(verify(Policy::default(), &authority_only), None);
    assert_eq!(
        verify(Policy::strict(), &authority_only),
        Some("required-component-not-covered")
    );
    let mut no_nonce = SignOptions::new(AGENT, t);
    no_nonce.no_nonce = true;
    assert_eq!(
        verify(Policy::strict(), &no_nonce),
        Some("missing-parameter")
    );
    assert_eq!(verify(Policy::strict(), &SignOptions::new(AGENT, t)), None);
}

/// A key the request carries about itself (`Signature-Key: hwk`) verifies
/// as "this key", but never satisfies an allow-list of agents.
#[test]
fn a_self_asserted_key_never_satisfies_an_agent_allow_list() {
    let key = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let m = hwk_request(&key);
    let t = now();
    let r = WebBotAuthVerifier::new(Policy::default())
        .verify_signature_key(&m, None, t)
        .unwrap();
    assert!(r[0].1.is_ok(), "{:?}", r[0].1);
    let mut p = Policy::default();
    p.allowed_agents = Some(vec![AGENT.into()]);
    let r = WebBotAuthVerifier::new(p)
        .verify_signature_key(&m, None, t)
        .unwrap();
    assert_eq!(
        r[0].1.as_ref().unwrap_err().code(),
        "agent-not-allowed",
        "an hwk key passed --agent"
    );
}

fn hwk_request(key: &SigningKey) -> Message {
    let mut m = parsed(get_for("a.example").as_bytes());
    let member = hwk_member("sig", key.verifying_key()).unwrap();
    m.add_header("Signature-Key", &member);
    let t = now();
    let spec = SignatureSpec::new("sig")
        .component(ComponentId::derived(Derived::Authority))
        .component(ComponentId::field("signature-key").unwrap())
        .created(t)
        .expires(t + 60)
        .alg(key.algorithm());
    httpsig::sign(&m, None, &spec, key).unwrap().apply(&mut m);
    m
}

// ---- the command line ----

fn bin() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_agentsig"))
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("agentsig-gate-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

struct Out {
    code: i32,
    json: serde_json::Value,
    stderr: String,
}

fn verify_cli(file: &Path, args: &[&str]) -> Out {
    let o = bin()
        .args(["http", "verify"])
        .arg(file)
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    Out {
        code: o.status.code().unwrap_or(-1),
        json: serde_json::from_slice(&o.stdout).unwrap_or(serde_json::Value::Null),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// A directory holding `req.http`, a GET for `a.example` the agent
/// signed, and `dir.json`, the agent's key directory: (directory, key,
/// request, key set).
fn signed_files(name: &str) -> (PathBuf, SigningKey, PathBuf, PathBuf) {
    let d = tmp(name);
    let key = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let m = wba_signed(&key, &get_for("a.example"), &SignOptions::new(AGENT, now()));
    let file = d.join("req.http");
    std::fs::write(&file, &m).unwrap();
    let set = d.join("dir.json");
    std::fs::write(&set, directory_body(&[key.verifying_key()])).unwrap();
    (d, key, file, set)
}

/// `http verify --profile web-bot-auth`: refused with `wrong-authority` at
/// another site's authority, verified at its own; a request verified with
/// neither `--authority` nor `--any-authority` is a usage error saying what
/// to give. `--key-set` takes the agent's origin as `Signature-Agent`
/// carries it.
#[test]
fn cli_profile_binds_the_request_to_the_site() {
    let (d, key, file, set) = signed_files("wba");
    let key_set = format!("{AGENT}={}", set.display());
    let base = ["--profile", "web-bot-auth", "--key-set", &key_set];

    let o = verify_cli(&file, &[&base[..], &["--authority", "b.example"]].concat());
    assert_eq!(o.code, 1, "{}", o.json);
    assert_eq!(o.json["error"]["code"], "wrong-authority", "{}", o.json);

    let o = verify_cli(&file, &[&base[..], &["--authority", "a.example"]].concat());
    assert_eq!(o.code, 0, "{} {}", o.json, o.stderr);
    assert_eq!(o.json["details"]["web_bot_auth"]["agent"], AGENT);

    let o = verify_cli(&file, &base);
    assert_eq!(o.code, 2, "{}", o.json);
    let msg = o.json["error"]["message"].as_str().unwrap_or_default();
    assert!(
        msg.contains("--authority HOST") && msg.contains("--authority a.example"),
        "{msg}"
    );
    assert!(msg.contains("--any-authority"), "{msg}");
    let o = verify_cli(&file, &[&base[..], &["--any-authority"]].concat());
    assert_eq!(o.code, 0, "{}", o.json);

    // --strict: an authority-only signature no longer verifies.
    let mut ao = SignOptions::new(AGENT, now());
    ao.method_and_path = false;
    let m = wba_signed(&key, &get_for("a.example"), &ao);
    let bare = d.join("authority-only.http");
    std::fs::write(&bare, &m).unwrap();
    let site = [&base[..], &["--authority", "a.example"]].concat();
    assert_eq!(verify_cli(&bare, &site).code, 0);
    let o = verify_cli(&bare, &[&site[..], &["--strict"]].concat());
    assert_eq!(o.code, 1, "{}", o.json);
    assert_eq!(o.json["error"]["code"], "required-component-not-covered");
    let _ = std::fs::remove_dir_all(&d);
}

/// `--profile web-bot-auth` with `--jwks`/`--key` does not ignore the keys
/// and fetch the directory: it is a usage error naming the exact
/// `--key-set` to give for this request's agent.
#[test]
fn cli_profile_refuses_jwks_and_names_the_key_set_to_give() {
    let (d, _key, file, set) = signed_files("jwks");
    let set_s = set.display().to_string();
    let o = verify_cli(
        &file,
        &[
            "--profile",
            "web-bot-auth",
            "--authority",
            "a.example",
            "--jwks",
            &set_s,
        ],
    );
    assert_eq!(o.code, 2, "{}", o.json);
    let msg = o.json["error"]["message"].as_str().unwrap_or_default();
    assert!(msg.contains(&format!("--key-set {AGENT}={set_s}")), "{msg}");
    let o = verify_cli(
        &file,
        &[
            "--profile",
            "signature-key",
            "--authority",
            "a.example",
            "--jwks",
            &set_s,
        ],
    );
    assert_eq!(o.code, 2, "{}", o.json);
    let _ = std::fs::remove_dir_all(&d);
}

/// Plain `http verify`: the site's authority is required and checked, and
/// a request whose content the signature does not cover is refused unless
/// waived, as the layers refuse it.
#[test]
fn cli_plain_verify_binds_the_site_and_requires_covered_content() {
    let d = tmp("plain");
    let key = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let jwks = d.join("k.jwks.json");
    std::fs::write(&jwks, directory_body(&[key.verifying_key()])).unwrap();
    let jwks_s = jwks.display().to_string();
    let sign = |name: &str, raw: &str, comps: &[ComponentId]| {
        let m = Message::parse_keep_raw(raw.as_bytes(), "https").unwrap();
        let mut spec = SignatureSpec::new("sig1")
            .created(now())
            .keyid(&key.verifying_key().thumbprint());
        for c in comps {
            spec = spec.component(c.clone());
        }
        let s = httpsig::sign(&m, None, &spec, &key).unwrap();
        let text = m
            .with_fields_inserted(&[
                ("Signature-Input".into(), s.signature_input.clone()),
                ("Signature".into(), s.signature.clone()),
            ])
            .unwrap();
        let p = d.join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let target = [
        ComponentId::derived(Derived::Method),
        ComponentId::derived(Derived::Authority),
        ComponentId::derived(Derived::Path),
    ];
    let get = sign("get.http", &get_for("a.example"), &target);
    let keys = ["--jwks", jwks_s.as_str()];
    let o = verify_cli(&get, &[&keys[..], &["--authority", "b.example"]].concat());
    assert_eq!(o.code, 1, "{}", o.json);
    assert_eq!(
        o.json["signatures"][0]["reason"]["code"], "wrong-authority",
        "{}",
        o.json
    );
    let o = verify_cli(&get, &[&keys[..], &["--authority", "a.example"]].concat());
    assert_eq!(o.code, 0, "{}", o.json);
    let o = verify_cli(&get, &keys);
    assert_eq!(o.code, 2, "{}", o.json);

    let post = sign(
        "post.http",
        "DELETE /account/42 HTTP/1.1\r\nHost: a.example\r\nContent-Length: 7\r\n\r\nconfirm",
        &target,
    );
    let site = [&keys[..], &["--authority", "a.example"]].concat();
    let o = verify_cli(&post, &site);
    assert_eq!(o.code, 1, "{}", o.json);
    assert_eq!(
        o.json["signatures"][0]["reason"]["code"], "required-component-not-covered",
        "{}",
        o.json
    );
    let o = verify_cli(&post, &[&site[..], &["--allow-uncovered-content"]].concat());
    assert_eq!(o.code, 0, "{}", o.json);
    let _ = std::fs::remove_dir_all(&d);
}

/// `serve --web-bot-auth-key` does not sign a directory for whatever Host
/// asks: without `--authority` (or `--any-authority`) it refuses to start.
#[test]
fn serve_refuses_a_directory_without_its_authorities() {
    let d = tmp("serve");
    let site = d.join("site");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::copy("examples/agent.json", site.join("agent.json")).unwrap();
    let o = bin()
        .arg("serve")
        .arg(&site)
        .args(["--key", "keys/rfc9421/test-key-ecc-p256.pem"])
        .args(["--web-bot-auth-key", "keys/rfc9421/test-key-ed25519.pem"])
        .args(["--listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--authority HOST"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}
