//! The client-side tower layer: every outgoing request is signed under the
//! Web Bot Auth profile with a fresh nonce, and verifies at the site.
#![cfg(feature = "server")]

use agentsig::httpsig::{Message, SiteAuthorities};
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

/// The directory publisher signs for the requesting Host, answers HEAD
/// without a body, and with an authority list refuses other Hosts (421)
/// instead of signing proofs for them.
#[test]
fn directory_publisher_signs_per_host_and_honours_its_authority_list() {
    use agentsig::server::webbotauth::DirectoryPublisher;
    use agentsig::webbotauth::directory::{parse_key_set, verify_directory};
    use http_body_util::BodyExt;
    let key = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let d = DirectoryPublisher::new(vec![key], SiteAuthorities::any()).unwrap();
    let get = |d: &DirectoryPublisher, host: &str, method: &str| {
        let req = http::Request::builder()
            .method(method)
            .uri(WELL_KNOWN_PATH)
            .header("host", host)
            .body(())
            .unwrap();
        let res = d.respond(&req);
        let status = res.status();
        let headers: Vec<(String, String)> = res
            .headers()
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_str().unwrap().to_owned()))
            .collect();
        let body = block_on(res.into_body().collect())
            .unwrap()
            .to_bytes()
            .to_vec();
        (status, headers, body)
    };
    let (st, headers, body) = get(&d, "agent.example", "GET");
    assert_eq!(st, 200);
    let url = agentsig::webbotauth::resolve_agent_url("https://agent.example", None).unwrap();
    let set = parse_key_set(&url, &body).unwrap();
    let now = agentsig::clock::Clock::now(&agentsig::clock::SystemClock);
    assert_eq!(
        verify_directory(&set, "agent.example", &headers, &body, now).unwrap(),
        ["binding0"]
    );
    assert!(verify_directory(&set, "other.example", &headers, &body, now).is_err());
    let (st, _, body) = get(&d, "agent.example", "HEAD");
    assert_eq!(st, 200);
    assert!(body.is_empty());
    assert_eq!(get(&d, "agent.example", "POST").0, 405);

    // Built for the agent's own authority, it signs for that one only: a
    // proof made for a Host an attacker chose could be re-hosted there.
    let d = DirectoryPublisher::new(
        vec![SigningKey::generate(Algorithm::Ed25519).unwrap()],
        SiteAuthorities::only(["agent.example"]).unwrap(),
    )
    .unwrap();
    assert_eq!(get(&d, "agent.example", "GET").0, 200);
    assert_eq!(get(&d, "Agent.Example:443", "GET").0, 200);
    let (status, headers, _) = get(&d, "evil.example", "GET");
    assert_eq!(status, 421);
    assert!(
        !headers.iter().any(|(n, _)| n == "signature"),
        "a proof was signed for a Host not configured"
    );
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(f)
}
