//! An axum service that admits signed AI agents (Web Bot Auth,
//! draft-ietf-webbotauth-httpsig-protocol-00): `BotAuthLayer` verifies each
//! request's signature and puts the agent's identity in the request
//! extensions; the handler greets verified agents by name and anonymous
//! callers as such.
//!
//! Run: `cargo run --example bot_gate`. It starts the service on loopback,
//! then plays an agent: one signed request, one unsigned, one tampered, the
//! signed one again (a replay) and one signed for another site.
//!
//! In production the directory is `agentsig::net::webbotauth::DirectoryClient`,
//! which fetches each agent's key directory over HTTPS (SSRF-guarded,
//! cached); this example gives the agent's key in a `StaticDirectory`.

use agentsig::httpsig::SiteAuthorities;
use agentsig::server::webbotauth::{AgentIdentity, BotAuthConfig, BotAuthLayer};
use agentsig::webbotauth::{
    sign_request, Policy, SignOptions, StaticDirectory, WebBotAuthVerifier, WELL_KNOWN_PATH,
};
use agentsig::{Algorithm, SigningKey};
use axum::{routing::get, Extension, Router};
use http_body_util::{BodyExt, Empty};
use std::sync::Arc;

async fn hello(Extension(who): Extension<AgentIdentity>) -> String {
    match who {
        AgentIdentity::Verified(a) => format!("hello agent {} (key {})\n", a.agent, a.keyid),
        AgentIdentity::Anonymous(_) => "hello anonymous visitor\n".to_owned(),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    // The agent's key, as its directory at https://agent.example publishes it.
    let agent_key = SigningKey::generate(Algorithm::Ed25519)?;
    let directory = StaticDirectory::new().with(
        &format!("https://agent.example{WELL_KNOWN_PATH}"),
        vec![agent_key.verifying_key().clone()],
    );

    // The site: admit unsigned visitors as anonymous, refuse bad signatures.
    let mut policy = Policy::default();
    policy.allowed_agents = Some(vec!["https://agent.example".into()]);
    policy.require_tls = false;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    // The gate serves this site's own authority only: a request an agent
    // signed for another site is refused here even when it arrives with
    // that site's Host (RFC 9421 section 7.2.1). A bounded in-process replay
    // store is on by default, so each signed request is accepted once.
    let site = SiteAuthorities::only([addr.to_string()])?;
    let mut cfg = BotAuthConfig::new(WebBotAuthVerifier::new(policy), Arc::new(directory), site);
    // The example runs without TLS; a real site terminates TLS (section
    // 5.4: signatures on plain-HTTP requests SHOULD be refused).
    cfg.scheme = "http";
    let app = Router::new()
        .route("/", get(hello))
        .layer(BotAuthLayer::new(cfg));
    tokio::spawn(async move { axum::serve(listener, app).await });

    // The agent: sign a request for this site.
    let now = agentsig::clock::Clock::now(&agentsig::clock::SystemClock);
    let mut signed = http::Request::get("/")
        .header("host", addr.to_string())
        .body(Vec::new())?;
    sign_request(
        &mut signed,
        "http",
        &agent_key,
        &SignOptions::new("https://agent.example", now),
    )?;
    let unsigned = http::Request::get("/")
        .header("host", addr.to_string())
        .body(Vec::new())?;
    let mut tampered = signed.clone();
    *tampered.uri_mut() = "/admin".parse()?;
    let replayed = signed.clone();
    // Signed by the same agent for another site, and sent here with that
    // site's Host, as that site could replay it.
    let mut elsewhere = http::Request::get("/")
        .header("host", "other.example")
        .body(Vec::new())?;
    sign_request(
        &mut elsewhere,
        "http",
        &agent_key,
        &SignOptions::new("https://agent.example", now),
    )?;

    for (what, req) in [
        ("signed", signed),
        ("unsigned", unsigned),
        ("tampered", tampered),
        ("replayed", replayed),
        ("signed for another site", elsewhere),
    ] {
        let stream = tokio::net::TcpStream::connect(addr).await?;
        let (mut send, conn) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
        tokio::spawn(conn);
        let (parts, _) = req.into_parts();
        let req = http::Request::from_parts(parts, Empty::<bytes::Bytes>::new());
        let res = send.send_request(req).await?;
        let status = res.status();
        let body = res.into_body().collect().await?.to_bytes();
        print!("{what}: {status} {}", String::from_utf8_lossy(&body));
    }
    Ok(())
}
