//! The tower `SignLayer` in an axum app, for `scripts/bench-serve.sh`:
//! serves FILE at `/agent.json` (the same bytes every time, as a handler
//! returning a loaded document does), every response signed with the key,
//! until killed. The layer's signature cache applies as in `agentsig
//! serve`: one digest per body, one default signature per second.
//!
//! `cargo run --release --example axum_serve_bench -- FILE KEY.pem ADDR`

use agentsig::keys::{load_signing_key, LoadOptions};
use agentsig::server::{KeyRing, SignLayer};
use axum::{http::header, routing::get, Router};
use bytes::Bytes;
use std::sync::Arc;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let mut args = std::env::args().skip(1);
    let (Some(file), Some(key), Some(addr)) = (args.next(), args.next(), args.next()) else {
        return Err("usage: axum_serve_bench FILE KEY.pem ADDR".into());
    };
    let body = Bytes::from(std::fs::read(&file)?);
    let key = load_signing_key(&std::fs::read(&key)?, &LoadOptions::default())?;
    let keys = Arc::new(KeyRing::single(key)?);
    let app = Router::new()
        .route(
            "/agent.json",
            get(move || {
                let body = body.clone();
                async move { ([(header::CONTENT_TYPE, "application/json")], body) }
            }),
        )
        .layer(SignLayer::new(keys));
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    axum::serve(listener, app).await?;
    Ok(())
}
