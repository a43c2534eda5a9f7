//! `agent://` resolution over loopback HTTPS (draft-narvaneni-agent-uri-03 section
//! 5.1), with the error conditions of section 9.2 kept distinct.
#![cfg(feature = "net")]

mod net_support;

use agentsig::net::resolve::{parse_agent_uri, resolve_agent, AgentResolveError, Resolution};
use agentsig::net::verify::UrlVerifyOptions;
use agentsig::net::{FetchPolicy, Fetcher};
use agentsig::{descriptor, Algorithm, SigningKey};
use net_support::{loopback, Ca, Resp, Server};
use serde_json::json;

fn strict() -> UrlVerifyOptions {
    let o = UrlVerifyOptions::default();
    // The default refuses an unsigned descriptor.
    o
}

struct Env {
    ca: Ca,
    srv: Server,
    key: SigningKey,
}

fn env() -> Env {
    let ca = Ca::new();
    let srv = Server::start(&ca, &["registry.example", "did.example"]);
    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256)
        .unwrap()
        .with_kid("k1");
    let mut j = key.verifying_key().to_jwk().to_value();
    j["use"] = json!("sig");
    srv.route("/jwks", Resp::json(&json!({ "keys": [j] })));
    let desc = serde_json::to_vec(&json!({
        "name": "planner",
        "authentication": {"jwksUri": srv.url("registry.example", "/jwks")}
    }))
    .unwrap();
    let jws = descriptor::sign(&desc, &key).unwrap().jws;
    srv.route("/planner.json", Resp::ok("application/json", desc));
    srv.route("/planner.json.jws", Resp::ok("application/jose", jws));
    srv.route(
        "/.well-known/agents.json",
        Resp::json(&json!({"agents": {
            "planner": srv.url("registry.example", "/planner.json"),
            "relative": "/planner.json",
            "gone": srv.url("registry.example", "/missing.json"),
            "inside": "https://10.1.2.3/agent.json",
            "unsigned": srv.url("registry.example", "/unsigned.json"),
        }})),
    );
    srv.route(
        "/unsigned.json",
        Resp::ok("application/json", "{\"name\":\"x\"}"),
    );
    Env { ca, srv, key }
}

fn fetcher(e: &Env, all_private: bool) -> Fetcher {
    let p = FetchPolicy::default()
        .extra_root_pem(e.ca.pem())
        .pin("registry.example", loopback())
        .pin("did.example", loopback());
    let p = if all_private {
        p.allow_private_networks(true)
    } else {
        p.allow_private_host("registry.example")
    };
    Fetcher::with_policy(p).unwrap()
}

#[test]
fn parse_forms() {
    let u = parse_agent_uri("agent://example.com:8443/planner/run?x=1").unwrap();
    assert_eq!(
        (u.authority.as_str(), u.agent.as_str()),
        ("example.com:8443", "planner")
    );
    assert!(!u.is_did && u.binding.is_none());
    let u = parse_agent_uri("agent+https://example.com/a").unwrap();
    assert_eq!(u.binding.as_deref(), Some("https"));
    let u = parse_agent_uri("agent://did%3Aweb%3Aexample.com%253A8443/r").unwrap();
    assert_eq!(u.authority, "did:web:example.com%3A8443");
    let u = parse_agent_uri("agent://did:web:example.com%3A8443/r").unwrap();
    assert_eq!(u.authority, "did:web:example.com%3A8443");
    assert!(u.is_did);
    for bad in [
        "https://x/a",
        "agent://x",
        "agent://x/",
        "agent://u@x/a",
        "agent+://x/a",
    ] {
        assert!(
            matches!(parse_agent_uri(bad), Err(AgentResolveError::BadUri(_))),
            "{bad}"
        );
    }
}

#[test]
fn resolves_and_verifies_through_agents_json() {
    let e = env();
    let f = fetcher(&e, false);
    for name in ["planner", "relative"] {
        let uri = format!("agent://registry.example:{}/{name}/run", e.srv.port);
        match resolve_agent(&f, &uri, &strict()).unwrap() {
            Resolution::Descriptor {
                verified, registry, ..
            } => {
                assert!(verified.jws.is_some());
                assert_eq!(verified.descriptor()["name"], "planner");
                assert_eq!(
                    registry,
                    e.srv.url("registry.example", "/.well-known/agents.json")
                );
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn resolution_errors_are_distinct() {
    let e = env();
    let f = fetcher(&e, false);
    let p = e.srv.port;
    let r = |u: &str| resolve_agent(&f, u, &strict()).unwrap_err();
    assert!(matches!(
        r(&format!("agent://registry.example:{p}/nobody")),
        AgentResolveError::AgentNotFound { .. }
    ));
    assert!(matches!(
        r(&format!("agent://registry.example:{p}/gone")),
        AgentResolveError::DescriptorFetch(_)
    ));
    assert!(matches!(
        r(&format!("agent://registry.example:{p}/inside")),
        AgentResolveError::Ssrf(_)
    ));
    assert!(matches!(
        r(&format!("agent://registry.example:{p}/unsigned")),
        AgentResolveError::Verification(_)
    ));
    assert!(matches!(
        r(&format!("agent://127.0.0.1:{p}/planner")),
        AgentResolveError::Ssrf(_)
    ));
    assert!(matches!(
        r("agent://no-such-host.invalid/planner"),
        AgentResolveError::Dns(_)
    ));
    e.srv.route(
        "/.well-known/agents.json",
        Resp {
            status: 404,
            headers: vec![],
            body: vec![],
            after: None,
            trickle: None,
        },
    );
    assert!(matches!(
        r(&format!("agent://registry.example:{p}/planner")),
        AgentResolveError::RegistryNotFound(_)
    ));
    // With an explicit binding, a missing registry means "invoke directly".
    match resolve_agent(
        &f,
        &format!("agent+https://registry.example:{p}/planner/run"),
        &strict(),
    )
    .unwrap()
    {
        Resolution::Direct { endpoint } => {
            assert_eq!(endpoint, e.srv.url("registry.example", "/planner/run"))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn did_web_authority_service_and_keys() {
    let e = env();
    let did = format!("did:web:did.example%3A{}", e.srv.port);
    let key = SigningKey::generate(Algorithm::Ed25519)
        .unwrap()
        .with_kid(format!("{did}#key-1"));
    let desc = br#"{"name":"researcher"}"#.to_vec();
    let jws = descriptor::sign(&desc, &key).unwrap().jws;
    e.srv
        .route("/researcher.json", Resp::ok("application/json", desc));
    e.srv
        .route("/researcher.json.jws", Resp::ok("application/jose", jws));
    e.srv.route(
        "/.well-known/did.json",
        Resp::json(&json!({
            "id": did,
            "verificationMethod": [{"id": "#key-1", "type": "JsonWebKey2020", "controller": did,
                "publicKeyJwk": key.verifying_key().to_jwk().to_value()}],
            "assertionMethod": ["#key-1"],
            "service": [{"id": "#agents", "type": "AgentDescriptor",
                "serviceEndpoint": e.srv.url("did.example", "/researcher.json")}]
        })),
    );
    let f = fetcher(&e, true);
    let canonical = format!(
        "agent://{}/researcher",
        did.replace('%', "%25").replace(':', "%3A")
    );
    for uri in [format!("agent://{did}/researcher"), canonical] {
        match resolve_agent(&f, &uri, &strict()).unwrap() {
            Resolution::Descriptor { verified, .. } => {
                assert_eq!(verified.descriptor()["name"], "researcher");
                let src = format!("{:?}", verified.jws.unwrap().jws.valid_signature().unwrap());
                assert!(src.contains("DID document"), "{src}");
            }
            other => panic!("{other:?}"),
        }
    }
    let _ = &e.key;
}

/// `resolve` that meets an AI Catalog where a descriptor should be (by its
/// media type, or by its content under `application/json`) refuses it with
/// `descriptor.is-catalog`, never passing it as a descriptor with its Trust
/// Manifests unchecked.
#[test]
fn a_catalog_where_a_descriptor_should_be_is_refused() {
    let e = env();
    let f = fetcher(&e, false);
    let cat = json!({"specVersion": "1.0", "entries": []}).to_string();
    e.srv.route(
        "/.well-known/agents.json",
        Resp::json(&json!({"agents": {
            "typed": e.srv.url("registry.example", "/typed.json"),
            "content": e.srv.url("registry.example", "/content.json"),
        }})),
    );
    e.srv.route(
        "/typed.json",
        Resp::ok("application/ai-catalog+json", "{\"name\":\"x\"}"),
    );
    e.srv
        .route("/content.json", Resp::ok("application/json", cat));
    let plain = UrlVerifyOptions::default();
    for name in ["typed", "content"] {
        let uri = format!("agent://registry.example:{}/{name}/run", e.srv.port);
        match resolve_agent(&f, &uri, &plain) {
            Err(AgentResolveError::Verification(v)) => {
                assert_eq!(v.code(), "descriptor.is-catalog", "{name}: {v}")
            }
            other => panic!("{name}: {other:?}"),
        }
    }
}
