//! An axum app whose every response is signed (RFC 9421 + RFC 9530
//! Content-Digest), in one line: `.layer(SignLayer::new(keys))`.
//!
//! Run: `cargo run --example axum_publisher` (feature `server`, on by
//! default). It serves on a free loopback port, fetches its own descriptor
//! once, verifies the response with agentsig's verifier and the published
//! JWK Set, prints the signed fields and exits.

use agentsig::httpsig::HttpPolicy;
use agentsig::server::{KeyRing, SignLayer};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::verifier::VerifyHttp;
use agentsig::{Algorithm, SigningKey};
use axum::{http::header, routing::get, Json, Router};
use http_body_util::{BodyExt, Empty};
use std::sync::Arc;

const AGENT: &str = r#"{"name":"planner","version":"1.0.0","description":"Plans trips"}"#;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let keys = Arc::new(KeyRing::single(SigningKey::generate(
        Algorithm::EcdsaP256Sha256,
    )?)?);
    let jwks = keys.jwks();

    let app = Router::new()
        .route(
            "/agent.json",
            get(|| async { ([(header::CONTENT_TYPE, "application/agent+json")], AGENT) }),
        )
        .route(
            "/.well-known/jwks.json",
            get(move || async move { Json(jwks) }),
        )
        .layer(SignLayer::new(keys.clone())); // <- every response signed

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
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
    Ok(())
}
