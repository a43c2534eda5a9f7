//! Web Bot Auth end to end over loopback HTTPS: an agent signs with
//! `agentsig http sign --profile web-bot-auth`, its key directory is served
//! by `agentsig serve --web-bot-auth-key`, and a site verifies with
//! `agentsig http verify --profile web-bot-auth` and with the tower
//! `BotAuthLayer`; `agentsig directory build` writes a static directory.
#![cfg(all(unix, feature = "net", feature = "server"))]

mod net_support;

#[path = "tmp_support/mod.rs"]
mod tmp_support;

use agentsig::httpsig::SiteAuthorities;
use agentsig::net::webbotauth::DirectoryClient;
use agentsig::net::{FetchPolicy, Fetcher};
use agentsig::server::webbotauth::{AgentIdentity, BotAuthConfig, BotAuthLayer};
use agentsig::webbotauth::{Policy, WebBotAuthVerifier, WELL_KNOWN_PATH};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use net_support::{loopback, Ca};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use tower::{Layer, ServiceExt};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agentsig"))
}

/// The test's directory, removed when it is dropped.
fn tmp(name: &str) -> tmp_support::TempDir {
    tmp_support::TempDir::new(&format!("wba-{name}"))
}

fn keygen(dir: &Path, name: &str) -> String {
    let prefix = dir.join(name);
    let st = bin()
        .args(["keygen", "--alg", "ed25519", "--out"])
        .arg(&prefix)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success());
    format!("{}.pem", prefix.display())
}

struct Served {
    child: Child,
    port: u16,
    ca: PathBuf,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `agentsig serve` over TLS for agent.example with the directory of `keys`.
fn serve(dir: &Path, keys: &[&str]) -> Served {
    let ca = Ca::new();
    let p = rcgen::CertificateParams::new(vec!["agent.example".to_string()]).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = p.signed_by(&key, &ca.cert, &ca.key).unwrap();
    std::fs::write(dir.join("tls.pem"), cert.pem()).unwrap();
    std::fs::write(dir.join("tls.key"), key.serialize_pem()).unwrap();
    std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
    let site = dir.join("site");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::copy("examples/agent.json", site.join("agent.json")).unwrap();
    // The directory is signed for the agent's own authority only, which
    // holds the port: take a free one first.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut cmd = bin();
    cmd.arg("serve")
        .arg(&site)
        .args(["--key", "keys/rfc9421/test-key-ecc-p256.pem"])
        .args([
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--reload-interval",
            "0",
        ])
        .args(["--authority", &format!("agent.example:{port}")])
        .arg("--tls-cert")
        .arg(dir.join("tls.pem"))
        .arg("--tls-key")
        .arg(dir.join("tls.key"));
    for k in keys {
        cmd.args(["--web-bot-auth-key", k]);
    }
    let mut child = cmd
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    // The address line; a warning (e.g. about a published test key) may
    // come first.
    let mut line = String::new();
    for _ in 0..8 {
        line.clear();
        err.read_line(&mut line).unwrap();
        if line.contains("https://127.0.0.1:") {
            break;
        }
    }
    let port = line
        .split("https://127.0.0.1:")
        .nth(1)
        .and_then(|s| s.split('/').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || {
        let mut sink = String::new();
        while err.read_line(&mut sink).is_ok_and(|n| n > 0) {
            sink.clear();
        }
    });
    Served {
        child,
        port,
        ca: dir.join("ca.pem"),
    }
}

fn sign(dir: &Path, key: &str, agent: &str, name: &str) -> PathBuf {
    let req = dir.join("req.http");
    std::fs::write(
        &req,
        b"GET /catalog?page=2 HTTP/1.1\r\nHost: shop.example\r\n\r\n",
    )
    .unwrap();
    let out = dir.join(name);
    let o = bin()
        .args(["http", "sign"])
        .arg(&req)
        .args([
            "--key",
            key,
            "--profile",
            "web-bot-auth",
            "--signature-agent",
            agent,
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

fn verify(s: &Served, file: &Path, extra: &[&str]) -> (i32, serde_json::Value) {
    let o = bin()
        .args(["http", "verify"])
        .arg(file)
        .args([
            "--profile",
            "web-bot-auth",
            "--json",
            "--allow-private-networks",
            "--authority",
            "shop.example",
        ])
        .arg("--ca-file")
        .arg(&s.ca)
        .args(["--resolve-to", "agent.example=127.0.0.1"])
        .args(extra)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&o.stderr)));
    (o.status.code().unwrap_or(-1), v)
}

#[test]
fn sign_serve_verify_and_rotate() {
    let d = tmp("e2e");
    let old = keygen(&d, "old");
    let new = keygen(&d, "new");
    let s = serve(&d, &[&new, &old]);
    let agent = format!("https://agent.example:{}", s.port);
    let by_old = sign(&d, &old, &agent, "old.http");
    let by_new = sign(&d, &new, &agent, "new.http");
    for f in [&by_old, &by_new] {
        let (code, v) = verify(&s, f, &["--require-directory-signature"]);
        assert_eq!(code, 0, "{v}");
        assert_eq!(v["verdict"], "verified");
        assert_eq!(v["details"]["web_bot_auth"]["agent"], agent);
        assert_eq!(
            v["details"]["web_bot_auth"]["key_set_url"],
            format!("{agent}{WELL_KNOWN_PATH}")
        );
    }
    // Policy: another agent only.
    let (code, v) = verify(&s, &by_new, &["--agent", "https://chatgpt.com"]);
    assert_eq!(code, 1);
    assert_eq!(v["error"]["code"], "agent-not-allowed");
    // A tampered request.
    let text = std::fs::read_to_string(&by_new)
        .unwrap()
        .replace("page=2", "page=3");
    let tampered = d.join("tampered.http");
    std::fs::write(&tampered, text.replace("/catalog?page=3", "/admin")).unwrap();
    let (code, v) = verify(&s, &tampered, &[]);
    assert_eq!(code, 1);
    assert_eq!(v["error"]["code"], "bad-signature");
    // Unsigned: exit 1, "unverified".
    let (code, v) = verify(&s, &d.join("req.http"), &[]);
    assert_eq!(code, 1);
    assert_eq!(v["details"]["web_bot_auth"]["status"], "unverified");
    // Rotation: the old key is dropped from the directory.
    drop(s);
    let s = serve(&d, &[&new]);
    let agent = format!("https://agent.example:{}", s.port);
    let by_old = sign(&d, &old, &agent, "old2.http");
    let by_new = sign(&d, &new, &agent, "new2.http");
    assert_eq!(verify(&s, &by_new, &[]).0, 0);
    let (code, v) = verify(&s, &by_old, &[]);
    assert_eq!(code, 1);
    assert_eq!(v["error"]["code"], "unknown-key");
}

#[test]
fn tower_layer_admits_signed_agents() {
    let d = tmp("tower");
    let key = keygen(&d, "agent");
    let s = serve(&d, &[&key]);
    let agent = format!("https://agent.example:{}", s.port);
    let signed = std::fs::read(sign(&d, &key, &agent, "signed.http")).unwrap();
    let pem = std::fs::read(&s.ca).unwrap();
    // The blocking HTTPS client is built and dropped outside the runtime
    // (reqwest's blocking client must not be dropped in async context).
    let f = Fetcher::with_policy(
        FetchPolicy::default()
            .extra_root_pem(pem)
            .allow_private_networks(true)
            .pin("agent.example", loopback()),
    )
    .unwrap();
    let dir = Arc::new(DirectoryClient::new(Arc::new(f)).require_proof(true));
    let keep = dir.clone();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async move {
        let mut cfg = BotAuthConfig::new(
            WebBotAuthVerifier::new(Policy::default()),
            dir,
            SiteAuthorities::only(["shop.example"]).unwrap(),
        );
        cfg.admit_unsigned = false;
        let app = tower::service_fn(|req: http::Request<Full<Bytes>>| async move {
            let who = match req.extensions().get::<AgentIdentity>() {
                Some(AgentIdentity::Verified(a)) => a.agent.clone(),
                Some(AgentIdentity::Anonymous(_)) => "anonymous".into(),
                None => "none".into(),
            };
            Ok::<_, std::convert::Infallible>(http::Response::new(Full::new(Bytes::from(who))))
        });
        let svc = BotAuthLayer::new(cfg).layer(app);
        let to_request = |raw: &[u8]| {
            let text = String::from_utf8(raw.to_vec()).unwrap();
            let mut lines = text.split("\r\n");
            let target = lines.next().unwrap().split(' ').nth(1).unwrap().to_owned();
            let mut b = http::Request::get(format!("https://shop.example{target}"));
            for l in lines.take_while(|l| !l.is_empty()) {
                let (n, v) = l.split_once(": ").unwrap();
                b = b.header(n, v);
            }
            b.body(Full::new(Bytes::new())).unwrap()
        };
        let res = svc.clone().oneshot(to_request(&signed)).await.unwrap();
        assert_eq!(res.status(), 200);
        let body = res.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(body, agent.as_bytes());
        // The same signed request with a Host naming another site (the
        // signature covers the target's authority, shop.example): refused,
        // never passed on as verified to a service that routes by Host.
        let mut replayed = to_request(&signed);
        replayed.headers_mut().insert(
            http::header::HOST,
            http::HeaderValue::from_static("victim.example"),
        );
        let res = svc.clone().oneshot(replayed).await.unwrap();
        assert_eq!(res.status(), 400);
        // Unsigned: refused by this configuration.
        let unsigned = b"GET /catalog HTTP/1.1\r\nHost: shop.example\r\n\r\n";
        let res = svc.clone().oneshot(to_request(unsigned)).await.unwrap();
        assert_eq!(res.status(), 401);
    });
    drop(rt);
    drop(keep);
}

#[test]
fn directory_build_writes_a_verifiable_static_directory() {
    let d = tmp("build");
    let key = keygen(&d, "agent");
    let old = keygen(&d, "old");
    let out = d.join("dir");
    let o = bin()
        .args([
            "directory",
            "build",
            "--key",
            &key,
            "--key",
            &old,
            "--authority",
            "agent.example",
        ])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let body = std::fs::read(&out).unwrap();
    let headers: Vec<(String, String)> =
        std::fs::read_to_string(format!("{}.headers", out.display()))
            .unwrap()
            .lines()
            .map(|l| {
                let (n, v) = l.split_once(": ").unwrap();
                (n.to_owned(), v.to_owned())
            })
            .collect();
    assert!(headers.contains(&(
        "Content-Type".into(),
        "application/http-message-signatures-directory+json".into()
    )));
    let url = agentsig::webbotauth::resolve_agent_url("https://agent.example", None).unwrap();
    let set = agentsig::webbotauth::directory::parse_key_set(&url, &body).unwrap();
    assert_eq!(set.keys.len(), 2);
    let now = agentsig::clock::Clock::now(&agentsig::clock::SystemClock);
    let labels = agentsig::webbotauth::directory::verify_directory(
        &set,
        "agent.example",
        &headers,
        &body,
        now,
    )
    .unwrap();
    assert_eq!(labels, ["binding0", "binding1"]);
    // Offline verification against the built file.
    let signed = sign(&d, &key, "https://agent.example", "signed.http");
    let o = bin()
        .args(["http", "verify"])
        .arg(&signed)
        .args(["--profile", "web-bot-auth", "--authority", "shop.example"])
        .arg("--key-set")
        .arg(format!(
            "https://agent.example{WELL_KNOWN_PATH}={}",
            out.display()
        ))
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // Usage errors exit 2.
    let o = bin()
        .args(["http", "sign"])
        .arg(&signed)
        .args(["--key", &key, "--profile", "web-bot-auth"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let o = bin()
        .args(["http", "sign"])
        .arg(d.join("req.http"))
        .args([
            "--key",
            &key,
            "--profile",
            "web-bot-auth",
            "--signature-agent",
            "http://agent.example",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

/// The drafts' Appendix E.2.1 request through the CLI: refused as signed by
/// an RFC 9421 test key unless --allow-test-keys, then verified.
#[test]
fn cli_replays_the_draft_vector_only_with_allow_test_keys() {
    let d = tmp("vector");
    let req = d.join("e21.http");
    std::fs::write(&req, concat!(
        "GET /path/to/resource HTTP/1.1\r\nHost: example.com\r\n",
        "Signature-Agent: agent2=\"https://signature-agent.test\"\r\n",
        "Signature-Input: sig2=(\"@authority\" \"signature-agent\";key=\"agent2\");created=1735689600;keyid=\"poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U\";alg=\"ed25519\";expires=4889289600;nonce=\"n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA==\";tag=\"web-bot-auth\"\r\n",
        "Signature: sig2=:RdNFx5Bj6au3YgAMQL/RzmUlZE8QZLIaXGRpw985hWnwPfMxT228NMk6ehRS1PSl4e8PhbNZACSanGdhEwYCCg==:\r\n\r\n"
    )).unwrap();
    let dir = d.join("dir.json");
    std::fs::write(&dir, r#"{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs","use":"sig"}]}"#).unwrap();
    let run = |extra: &[&str]| {
        let o = bin()
            .args(["http", "verify"])
            .arg(&req)
            .args(["--profile", "web-bot-auth", "--json", "--now", "1735689700"])
            .args(["--authority", "example.com"])
            .args(["--max-validity", "3153600000", "--key-set"])
            .arg(format!(
                "https://signature-agent.test{WELL_KNOWN_PATH}={}",
                dir.display()
            ))
            .args(extra)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        (o.status.code(), v)
    };
    let (code, v) = run(&[]);
    assert_eq!(code, Some(1));
    assert_eq!(v["error"]["code"], "test-key");
    let (code, v) = run(&["--allow-test-keys"]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(
        v["details"]["web_bot_auth"]["agent"],
        "https://signature-agent.test"
    );
}

/// A request with content: `http sign` covers `content-digest` by default;
/// one signed with `--no-content-digest` is refused unless the verifier
/// passes `--allow-uncovered-content`; a changed body fails the digest.
#[test]
fn content_is_covered_by_default_and_required() {
    let d = tmp("content");
    let key = keygen(&d, "k");
    let s = serve(&d, &[&key]);
    let agent = format!("https://agent.example:{}", s.port);
    let req = d.join("post.http");
    std::fs::write(
        &req,
        b"POST /orders HTTP/1.1\r\nHost: shop.example\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\n{\"n\": 1}\n",
    )
    .unwrap();
    let sign_post = |name: &str, extra: &[&str]| {
        let out = d.join(name);
        let o = bin()
            .args(["http", "sign"])
            .arg(&req)
            .args([
                "--key",
                &key,
                "--profile",
                "web-bot-auth",
                "--signature-agent",
                &agent,
            ])
            .args(extra)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        out
    };
    let covered = sign_post("covered.http", &[]);
    let text = std::fs::read_to_string(&covered).unwrap();
    assert!(text.contains("\"content-digest\""), "{text}");
    let (code, v) = verify(&s, &covered, &[]);
    assert_eq!(code, 0, "{v}");
    let changed = d.join("changed.http");
    std::fs::write(&changed, text.replace("{\"n\": 1}", "{\"n\": 9}")).unwrap();
    let (code, v) = verify(&s, &changed, &[]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["error"]["code"], "content-digest");

    let bare = sign_post("bare.http", &["--no-content-digest"]);
    let (code, v) = verify(&s, &bare, &[]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["error"]["code"], "required-component-not-covered");
    let (code, v) = verify(&s, &bare, &["--allow-uncovered-content"]);
    assert_eq!(code, 0, "{v}");
}
