//! An axum app whose every descriptor response is signed (RFC 9421 + RFC
//! 9530 Content-Digest), in one line: `.layer(SignLayer::new(keys))`.
//!
//! Incoming requests to `/tasks` (a route merged after the signing layer,
//! so its answers are not signed) go through `VerifyLayer`, built for this
//! site's own authority: a request signed for another site is refused even
//! when it carries that site's `Host` (RFC 9421 section 7.2.1).
//!
//! Run: `cargo run --example axum_publisher` (feature `server`, on by
//! default). It serves on a free loopback port, fetches its own descriptor
//! once, verifies the response with agentsig's verifier and the published
//! JWK Set, prints the signed fields, sends one signed request to `/tasks`
//! and exits.

use agentsig::httpsig::{
    ComponentId, Derived, HttpPolicy, SignHttp, SignatureSpec, SiteAuthorities,
};
use agentsig::server::{KeyRing, SignLayer, VerifyLayer};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::verifier::VerifyHttp;
use agentsig::{Algorithm, SigningKey};
use axum::{
    http::header,
    routing::{get, post},
    Json, Router,
};
use http_body_util::{BodyExt, Empty};
use std::sync::Arc;

const AGENT: &str = r#"{"name":"planner","version":"1.0.0","description":"Plans trips"}"#;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let keys = Arc::new(KeyRing::single(SigningKey::generate(
        Algorithm::EcdsaP256Sha256,
    )?)?);
    let jwks = keys.jwks();

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;

    // A caller whose key the site trusts, for signed requests to /tasks.
    let caller = SigningKey::generate(Algorithm::Ed25519)?;
    let inbound = Verifier::builder(StaticKeys::new().with(
        caller.verifying_key().clone().with_kid("caller"),
        KeySource::Pinned,
    ))
    .build();
    let tasks = Router::new()
        .route("/tasks", post(|| async { "accepted\n" }))
        // <- signed requests only, made for this site's own authority
        .layer(VerifyLayer::new(
            inbound,
            SiteAuthorities::only([addr.to_string()])?,
        ));

    let app = Router::new()
        .route(
            "/agent.json",
            get(|| async { ([(header::CONTENT_TYPE, "application/agent+json")], AGENT) }),
        )
        .route(
            "/.well-known/jwks.json",
            get(move || async move { Json(jwks) }),
        )
        .layer(SignLayer::new(keys.clone())) // <- every response signed
        .merge(tasks);
    tokio::spawn(async move { axum::serve(listener, app).await });

    // A client: fetch the descriptor and check its signature.
    let stream = tokio::net::TcpStream::connect(addr).await?;
    let (mut send, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
    tokio::spawn(conn);
    let req = http::Request::get("/agent.json")
        .header("host", addr.to_string())
        .body(Empty::<bytes::Bytes>::new())?;
    let (parts, body) = send.send_request(req).await?.into_parts();
    let body = body.collect().await?.to_bytes().to_vec();
    let res = http::Response::from_parts(parts, body);
    for f in [
        "content-type",
        "content-digest",
        "signature-input",
        "signature",
    ] {
        println!("{f}: {}", res.headers()[f].to_str()?);
    }

    let trusted = StaticKeys::new().with(
        keys.current().key.verifying_key().clone(),
        KeySource::Pinned,
    );
    let verifier = Verifier::builder(trusted)
        .http(HttpPolicy::descriptor_response())
        .build();
    let report = res.verify_signature(&verifier)?;
    println!("verified: {:?}", report.valid_labels());

    // The caller: a signed POST to /tasks, over its method, authority, path
    // and content.
    let body = br#"{"task":"plan"}"#.to_vec();
    let mut req = http::Request::post("/tasks")
        .header("host", addr.to_string())
        .header("content-digest", agentsig::digest::content_digest(&body))
        .body(body)?;
    let now = agentsig::clock::Clock::now(&agentsig::clock::SystemClock);
    let spec = SignatureSpec::new("sig1")
        .component(ComponentId::derived(Derived::Method))
        .component(ComponentId::derived(Derived::Authority))
        .component(ComponentId::derived(Derived::Path))
        .component(ComponentId::field("content-digest")?)
        .created(now)
        .keyid("caller");
    req.sign_signature(&spec, &caller)?;
    let stream = tokio::net::TcpStream::connect(addr).await?;
    let (mut send, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
    tokio::spawn(conn);
    let res = send
        .send_request(req.map(|b| http_body_util::Full::new(bytes::Bytes::from(b))))
        .await?;
    let status = res.status();
    let text = res.into_body().collect().await?.to_bytes();
    print!(
        "signed request to /tasks: {status} {}",
        String::from_utf8_lossy(&text)
    );
    if !status.is_success() {
        return Err("the signed request was refused".into());
    }
    Ok(())
}
