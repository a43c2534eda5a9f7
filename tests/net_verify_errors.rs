//! `verify URL` over loopback HTTPS: a network or discovery failure has its
//! own code, distinct from a signature that does not verify; DID keys count
//! only when the descriptor binds the DID; the fetch and operation
//! deadlines end a slow server's hold on the verifier.
#![cfg(feature = "net")]

mod net_support;

use agentsig::net::discovery::{DiscoveryError, KeyAuthority};
use agentsig::net::verify::{verify_url, UrlVerifyError, UrlVerifyOptions};
use agentsig::net::{FetchError, FetchPolicy, Fetcher};
use agentsig::{descriptor, did, Algorithm, SigningKey};
use net_support::{loopback, Ca, Resp, Server};
use serde_json::{json, Value};
use std::time::Duration;

struct Env {
    ca: Ca,
    srv: Server,
}

fn env() -> Env {
    let ca = Ca::new();
    let srv = Server::start(&ca, &["agent.example", "as.example"]);
    Env { ca, srv }
}

fn policy(e: &Env) -> FetchPolicy {
    FetchPolicy::default()
        .extra_root_pem(e.ca.pem())
        .allow_private_networks(true)
        .pin("agent.example", loopback())
        .pin("as.example", loopback())
}

fn fetcher(e: &Env) -> Fetcher {
    Fetcher::with_policy(policy(e)).unwrap()
}

fn key(kid: &str) -> SigningKey {
    SigningKey::generate(Algorithm::EcdsaP256Sha256)
        .unwrap()
        .with_kid(kid)
}

fn jwks(keys: &[&SigningKey]) -> Value {
    json!({ "keys": keys.iter().map(|k| {
        let mut j = k.verifying_key().to_jwk().to_value();
        j["use"] = json!("sig");
        j
    }).collect::<Vec<_>>() })
}

fn strict() -> UrlVerifyOptions {
    let o = UrlVerifyOptions::default();
    // The default refuses an unsigned descriptor.
    o
}

/// Publish `desc` at `path` with a detached JWS by `k`.
fn publish(e: &Env, path: &str, desc: &Value, k: &SigningKey) -> String {
    let body = serde_json::to_vec(desc).unwrap();
    let jws = descriptor::sign(&body, k).unwrap().jws;
    e.srv.route(path, Resp::ok("application/json", body));
    e.srv
        .route(&format!("{path}.jws"), Resp::ok("application/jose", jws));
    e.srv.url("agent.example", path)
}

fn fails(e: &Env, url: &str) -> UrlVerifyError {
    verify_url(&fetcher(e), url, &strict()).unwrap_err()
}

/// RFC 8414 section 3.3 issuer mismatch, a key set answering 500, a key
/// set over the size cap, and a `.jws` answering 500: each has its own
/// code, none is `jws.not-verified`, and no message says "key discovery
/// failed" twice.
#[test]
fn discovery_and_fetch_failures_have_their_own_codes() {
    let e = env();
    let k = key("k1");
    let issuer = e.srv.url("as.example", "");
    e.srv.route(
        "/.well-known/oauth-authorization-server",
        Resp::json(&json!({"issuer": "https://evil.example", "jwks_uri": e.srv.url("as.example", "/jwks")})),
    );
    let url = publish(
        &e,
        "/mismatch.json",
        &json!({"name": "a", "authentication": {"authorizationServer": issuer}}),
        &k,
    );
    let err = fails(&e, &url);
    assert!(
        matches!(
            err,
            UrlVerifyError::Discovery(DiscoveryError::IssuerMismatch { .. })
        ),
        "{err:?}"
    );
    assert_eq!(err.code(), "discovery.issuer-mismatch");
    assert_eq!(
        err.to_string().matches("key discovery failed").count(),
        1,
        "{err}"
    );

    e.srv.route(
        "/broken-jwks",
        Resp {
            status: 500,
            ..Resp::ok("text/plain", "oops")
        },
    );
    let url = publish(
        &e,
        "/jwks500.json",
        &json!({"name": "a", "authentication": {"jwksUri": e.srv.url("agent.example", "/broken-jwks")}}),
        &k,
    );
    let err = fails(&e, &url);
    assert_eq!(err.code(), "discovery.fetch-failed", "{err}");
    assert!(
        matches!(
            &err,
            UrlVerifyError::KeysUnavailable {
                source: DiscoveryError::Fetch(FetchError::Status { status: 500, .. }),
                signatures,
            } if signatures.len() == 1 && signatures[0].verdict == "not-checked"
        ),
        "{err:?}"
    );
    // The key set could not be fetched: not a bad signature.
    assert_eq!(err.verdict(), agentsig::report::Verdict::Unavailable);

    let many: Vec<SigningKey> = (0..65).map(|i| key(&format!("m{i}"))).collect();
    e.srv.route(
        "/big-jwks",
        Resp::json(&jwks(&many.iter().collect::<Vec<_>>())),
    );
    let url = publish(
        &e,
        "/many.json",
        &json!({"name": "a", "authentication": {"jwksUri": e.srv.url("agent.example", "/big-jwks")}}),
        &many[0],
    );
    assert_eq!(fails(&e, &url).code(), "discovery.too-many-keys");

    // The detached JWS answering 500 is not a descriptor fetch failure.
    e.srv.route("/good-jwks", Resp::json(&jwks(&[&k])));
    let url = publish(
        &e,
        "/jws500.json",
        &json!({"name": "a", "authentication": {"jwksUri": e.srv.url("agent.example", "/good-jwks")}}),
        &k,
    );
    e.srv.route(
        "/jws500.json.jws",
        Resp {
            status: 500,
            ..Resp::ok("text/plain", "oops")
        },
    );
    let err = fails(&e, &url);
    assert_eq!(err.code(), "fetch.jws-failed", "{err}");
    assert!(
        !err.to_string().contains("descriptor fetch failed"),
        "{err}"
    );

    // Control: a real bad signature keeps its own code.
    let stranger = key("k1");
    let url = publish(
        &e,
        "/stranger.json",
        &json!({"name": "a", "authentication": {"jwksUri": e.srv.url("agent.example", "/good-jwks")}}),
        &stranger,
    );
    assert_eq!(fails(&e, &url).code(), "jws.not-verified");
}

fn did_key_signer() -> (SigningKey, String) {
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let d = did::did_key(k.verifying_key()).unwrap();
    let frag = d.strip_prefix("did:key:").unwrap().to_owned();
    let kid = format!("{d}#{frag}");
    (k.with_kid(kid), d)
}

/// A descriptor whose `authentication.did` binds a did:key or did:jwk
/// verifies with that DID's key; no fetch of keys is needed.
#[test]
fn bound_did_key_and_did_jwk_verify() {
    let e = env();
    let (k, d) = did_key_signer();
    let url = publish(
        &e,
        "/didkey.json",
        &json!({"name": "a", "authentication": {"did": d}}),
        &k,
    );
    let v = verify_url(&fetcher(&e), &url, &strict()).unwrap();
    assert!(v.jws.is_some());
    assert_eq!(v.key_authority, Some(KeyAuthority::Did(d)));

    let k = SigningKey::generate(Algorithm::EcdsaP256Sha256).unwrap();
    let d = did::did_jwk(k.verifying_key()).unwrap();
    let k = k.with_kid(format!("{d}#0"));
    let url = publish(
        &e,
        "/didjwk.json",
        &json!({"name": "a", "authentication": {"did": d}}),
        &k,
    );
    let v = verify_url(&fetcher(&e), &url, &strict()).unwrap();
    assert!(v.jws.is_some());
}

/// A DID key named only by the JWS `kid` is no key source: refused with
/// `keys.did-not-bound`, whether the descriptor binds no DID or another.
#[test]
fn unbound_did_kid_refused() {
    let e = env();
    let (k, _) = did_key_signer();
    let url = publish(&e, "/nobind.json", &json!({"name": "a"}), &k);
    let err = fails(&e, &url);
    assert!(matches!(err, UrlVerifyError::DidNotBound(_)), "{err:?}");
    assert_eq!(err.code(), "keys.did-not-bound");

    let (_, other) = did_key_signer();
    let url = publish(
        &e,
        "/otherbind.json",
        &json!({"name": "a", "authentication": {"did": other}}),
        &k,
    );
    let err = fails(&e, &url);
    assert_eq!(err.code(), "keys.did-not-bound", "{err}");
}

/// A key set trickled a byte at a time ends at the fetch deadline, and
/// the failure is a discovery timeout, not a bad signature.
#[test]
fn slow_key_set_ends_at_the_deadline_with_a_timeout_code() {
    let e = env();
    let k = key("k1");
    let mut body = serde_json::to_vec(&jwks(&[&k])).unwrap();
    body.truncate(60);
    e.srv.route(
        "/slow-jwks",
        Resp::ok("application/json", body).trickle(Duration::from_millis(200)),
    );
    let url = publish(
        &e,
        "/slow.json",
        &json!({"name": "a", "authentication": {"jwksUri": e.srv.url("agent.example", "/slow-jwks")}}),
        &k,
    );
    let f =
        Fetcher::with_policy(policy(&e).timeouts(Duration::from_secs(1), Duration::from_secs(1)))
            .unwrap();
    let err = verify_url(&f, &url, &strict()).unwrap_err();
    assert!(
        matches!(
            err,
            UrlVerifyError::KeysUnavailable {
                source: DiscoveryError::Fetch(FetchError::Deadline { .. }),
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(err.code(), "discovery.timeout");
}

/// The whole `verify URL` is bounded by the operation deadline even when
/// every single fetch is within its own.
#[test]
fn slow_descriptor_ends_at_the_operation_deadline() {
    let e = env();
    e.srv.route(
        "/trickle.json",
        Resp::ok("application/json", vec![b' '; 60]).trickle(Duration::from_millis(200)),
    );
    let f = Fetcher::with_policy(policy(&e).operation_timeout(Duration::from_secs(1))).unwrap();
    let err = verify_url(&f, &e.srv.url("agent.example", "/trickle.json"), &strict()).unwrap_err();
    assert!(
        matches!(
            err,
            UrlVerifyError::Fetch(FetchError::Deadline {
                scope: "operation",
                ..
            })
        ),
        "{err:?}"
    );
    assert_eq!(err.code(), "fetch.timeout");
}

/// `resolve` runs under the operation deadline too: a registry trickled a
/// byte at a time ends as `resolve.timeout`.
#[test]
fn slow_registry_ends_as_a_resolve_timeout() {
    let e = env();
    e.srv.route(
        "/.well-known/agents.json",
        Resp::ok("application/json", vec![b' '; 60]).trickle(Duration::from_millis(200)),
    );
    let f = Fetcher::with_policy(policy(&e).operation_timeout(Duration::from_secs(1))).unwrap();
    let uri = format!("agent://agent.example:{}/planner", e.srv.port);
    let err = agentsig::net::resolve::resolve_agent(&f, &uri, &strict()).unwrap_err();
    assert_eq!(err.code(), "resolve.timeout", "{err}");
}
