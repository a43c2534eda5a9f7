//! The client-side tower layer: every outgoing request is signed under the
//! Web Bot Auth profile with a fresh nonce, and verifies at the site.
#![cfg(feature = "server")]

use agentsig::httpsig::Message;
use agentsig::server::webbotauth::AgentSignLayer;
use agentsig::webbotauth::{Policy, StaticDirectory, Status, WebBotAuthVerifier, WELL_KNOWN_PATH};
use agentsig::{Algorithm, SigningKey};
use std::sync::{Arc, Mutex};
use tower::{Layer, ServiceExt};

#[tokio::test]
async fn every_outgoing_request_is_signed_afresh() {
    let key = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let dir = StaticDirectory::new().with(
        &format!("https://agent.example{WELL_KNOWN_PATH}"),
        vec![key.verifying_key().clone()],
    );
    let seen: Arc<Mutex<Vec<http::Request<Vec<u8>>>>> = Arc::default();
    let s2 = seen.clone();
    let transport = tower::service_fn(move |req: http::Request<Vec<u8>>| {
        let s2 = s2.clone();
        async move {
            s2.lock().unwrap().push(req);
            Ok::<_, std::convert::Infallible>(http::Response::new(()))
        }
    });
    let client = AgentSignLayer::new(key, "https://agent.example")
        .unwrap()
        .layer(transport);
    for path in ["/a", "/b"] {
        let req = http::Request::get(format!("https://shop.example{path}"))
            .body(Vec::new())
            .unwrap();
        client.clone().oneshot(req).await.unwrap();
    }
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    let now = agentsig::clock::Clock::now(&agentsig::clock::SystemClock);
    let mut nonces = Vec::new();
    for r in seen.iter() {
        let m = Message::from_request(r, "https").unwrap();
        let rep = WebBotAuthVerifier::new(Policy::default()).verify(&m, &dir, now);
        assert_eq!(rep.status(), Status::Verified, "{:?}", rep.first_error());
        nonces.push(rep.verified().unwrap().nonce.clone().unwrap());
    }
    assert_ne!(nonces[0], nonces[1]);
    // A bad agent URL is refused when the layer is built, not per request.
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    assert!(AgentSignLayer::new(k, "http://agent.example").is_err());
}
