//! Key discovery over loopback HTTPS (RFC 8414, RFC 9728,
//! jwksUri, JWKS rotation, did:web), and the URL rules of
//! tests/vectors/discovery_url_vectors.json (every entry).
#![cfg(feature = "net")]

mod net_support;

use agentsig::net::discovery::{
    rfc8414_metadata_url, rfc9728_metadata_url, rfc9728_resource_of, Discovery, DiscoveryError,
    DiscoveryPolicy, KeyAuthority,
};
use agentsig::net::{FetchPolicy, Fetcher};
use agentsig::trust::{KeyRequest, KeyResolver, KeySource};
use agentsig::verifier::Verifier;
use agentsig::{descriptor, Algorithm, SigningKey};
use net_support::{loopback, Ca, Resp, Server};
use serde_json::{json, Value};
use std::time::Duration;

#[test]
fn discovery_url_vectors() {
    let v: Value =
        serde_json::from_str(include_str!("vectors/discovery_url_vectors.json")).unwrap();
    let mut n = 0;
    for c in v["cases"].as_array().unwrap() {
        let want = c["metadata_url"].as_str();
        match c["kind"].as_str().unwrap() {
            "as" => {
                let iss = c["issuer"].as_str().unwrap();
                assert_eq!(rfc8414_metadata_url(iss).unwrap(), want.unwrap(), "{c}");
                n += 1;
            }
            "oidc" => {
                // Contrast only: RFC 8414 inserts, OIDC appends.
                let iss = c["issuer"].as_str().unwrap();
                assert_ne!(rfc8414_metadata_url(iss).unwrap(), want.unwrap());
                n += 1;
            }
            "rs" => {
                let res = c["resource"].as_str().unwrap();
                assert_eq!(rfc9728_metadata_url(res).unwrap(), want.unwrap(), "{c}");
                assert_eq!(rfc9728_resource_of(want.unwrap()).unwrap(), res, "{c}");
                n += 1;
            }
            // WWW-Authenticate challenges are not a discovery path here: a
            // descriptor names its metadata; the metadata URL in the
            // challenge still maps back to its resource.
            "rs-challenge" => {
                let h = c["www_authenticate"].as_str().unwrap();
                let url = h.split('"').nth(1).unwrap();
                assert_eq!(
                    rfc9728_resource_of(url).unwrap(),
                    "https://resource.example.com"
                );
                n += 1;
            }
            k => panic!("unknown case kind {k}"),
        }
    }
    for c in v["negative"].as_array().unwrap() {
        if let (Some(iss), None) = (c["issuer"].as_str(), c.get("returned_issuer")) {
            assert!(
                matches!(
                    rfc8414_metadata_url(iss),
                    Err(DiscoveryError::BadIdentifier(_))
                ),
                "{c}"
            );
            n += 1;
        }
    }
    assert_eq!(n, 10);
}

struct Env {
    ca: Ca,
    srv: Server,
}

fn env() -> Env {
    let ca = Ca::new();
    let srv = Server::start(&ca, &["as.example", "agent.example", "did.example"]);
    Env { ca, srv }
}

fn fetcher(e: &Env) -> Fetcher {
    Fetcher::with_policy(
        FetchPolicy::default()
            .extra_root_pem(e.ca.pem())
            .allow_private_networks(true)
            .pin("as.example", loopback())
            .pin("agent.example", loopback())
            .pin("did.example", loopback()),
    )
    .unwrap()
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

const DESC: &[u8] = br#"{"name":"planner","version":"1.0.0"}"#;

fn verify_with(d: Discovery, jws: &str) -> Result<descriptor::Report, descriptor::DescriptorError> {
    Verifier::builder(d).build().verify_descriptor(DESC, jws)
}

fn sign(k: &SigningKey) -> String {
    descriptor::sign(DESC, k).unwrap().jws
}

#[test]
fn rfc8414_metadata_then_jwks_uri() {
    let e = env();
    let k = key("k1");
    let issuer = e.srv.url("as.example", "/tenants/a");
    e.srv.route(
        "/.well-known/oauth-authorization-server/tenants/a",
        Resp::json(&json!({"issuer": issuer, "jwks_uri": e.srv.url("as.example", "/jwks")})),
    );
    e.srv.route("/jwks", Resp::json(&jwks(&[&k])));
    let d = Discovery::new(fetcher(&e), KeyAuthority::AuthorizationServer(issuer));
    let r = verify_with(d, &sign(&k)).unwrap();
    assert!(r.verified());
    let src = format!("{:?}", r.jws.valid_signature().unwrap());
    assert!(src.contains("RFC 8414 metadata"), "{src}");
    // Appended (OIDC-style) path is never asked for.
    assert_eq!(
        e.srv
            .hit_count("/tenants/a/.well-known/oauth-authorization-server"),
        0
    );
}

#[test]
fn rfc8414_issuer_mismatch_refused() {
    let e = env();
    let k = key("k1");
    let issuer = e.srv.url("as.example", "");
    e.srv.route(
        "/.well-known/oauth-authorization-server",
        Resp::json(
            &json!({"issuer": format!("{issuer}/"), "jwks_uri": e.srv.url("as.example", "/jwks")}),
        ),
    );
    e.srv.route("/jwks", Resp::json(&jwks(&[&k])));
    let d = Discovery::new(fetcher(&e), KeyAuthority::AuthorizationServer(issuer));
    let err = d.resolve(&KeyRequest::new().kid("k1")).unwrap_err();
    assert!(err.to_string().contains("expected exactly"), "{err}");
    assert_eq!(
        e.srv.hit_count("/jwks"),
        0,
        "a mismatched issuer's keys are never fetched"
    );
}

#[test]
fn rfc9728_resource_then_authorization_server() {
    let e = env();
    let k = key("k1");
    let issuer = e.srv.url("as.example", "");
    let resource = e.srv.url("agent.example", "/r1");
    e.srv.route(
        "/.well-known/oauth-protected-resource/r1",
        Resp::json(&json!({"resource": resource, "authorization_servers": [issuer]})),
    );
    e.srv.route(
        "/.well-known/oauth-authorization-server",
        Resp::json(&json!({"issuer": issuer, "jwks_uri": e.srv.url("as.example", "/jwks")})),
    );
    e.srv.route("/jwks", Resp::json(&jwks(&[&k])));
    let murl = e
        .srv
        .url("agent.example", "/.well-known/oauth-protected-resource/r1");
    let d = Discovery::new(
        fetcher(&e),
        KeyAuthority::ProtectedResourceMetadata(murl.clone()),
    );
    assert!(verify_with(d, &sign(&k)).unwrap().verified());
    // A metadata document naming another resource is refused.
    e.srv.route(
        "/.well-known/oauth-protected-resource/r1",
        Resp::json(&json!({"resource": e.srv.url("agent.example", "/other"), "jwks_uri": e.srv.url("as.example", "/jwks")})),
    );
    let d = Discovery::new(fetcher(&e), KeyAuthority::ProtectedResourceMetadata(murl));
    let err = d.resolve(&KeyRequest::new()).unwrap_err();
    assert!(
        err.to_string()
            .contains("protected resource metadata names resource"),
        "{err}"
    );
}

#[test]
fn descriptor_authority_order() {
    let d = json!({"authentication": {
        "jwksUri": "https://a.example/jwks",
        "authorizationServer": "https://as.example",
        "jwks": {"keys": []}
    }});
    assert_eq!(
        KeyAuthority::from_descriptor(&d),
        Some(KeyAuthority::AuthorizationServer(
            "https://as.example".into()
        ))
    );
    let d = json!({"authentication": {"jwks": {"keys": []}, "jwksUri": "https://a.example/jwks"}});
    assert_eq!(
        KeyAuthority::from_descriptor(&d),
        Some(KeyAuthority::JwksUri("https://a.example/jwks".into()))
    );
    assert_eq!(KeyAuthority::from_descriptor(&json!({})), None);
}

#[test]
fn jwks_rotation_unknown_kid_refetched_once_per_cooldown() {
    let e = env();
    let (old, new, newer) = (key("old"), key("new"), key("newer"));
    e.srv.route("/jwks", Resp::json(&jwks(&[&old])));
    let url = e.srv.url("agent.example", "/jwks");
    let d = Discovery::with_policy(
        fetcher(&e),
        KeyAuthority::JwksUri(url.clone()),
        DiscoveryPolicy::default().refresh_cooldown(Duration::from_secs(3600)),
    );
    assert_eq!(d.resolve(&KeyRequest::new().kid("old")).unwrap().len(), 1);
    assert_eq!(e.srv.hit_count("/jwks"), 1, "cached");
    assert_eq!(d.resolve(&KeyRequest::new().kid("old")).unwrap().len(), 1);
    assert_eq!(e.srv.hit_count("/jwks"), 1, "still cached");
    // Rotation: the set now holds `new`; an unknown kid forces one refetch.
    e.srv.route("/jwks", Resp::json(&jwks(&[&old, &new])));
    let v = Verifier::builder(d).build();
    assert!(v.verify_descriptor(DESC, &sign(&new)).unwrap().verified());
    assert_eq!(e.srv.hit_count("/jwks"), 2);
    // Another unknown kid inside the cooldown: no refetch (no amplification).
    e.srv.route("/jwks", Resp::json(&jwks(&[&newer])));
    assert!(v.verify_descriptor(DESC, &sign(&newer)).is_err());
    assert!(v
        .keys()
        .resolve(&KeyRequest::new().kid("bogus"))
        .unwrap()
        .is_empty());
    assert_eq!(e.srv.hit_count("/jwks"), 2);
    // With no cooldown the rotated key is found.
    let d = Discovery::with_policy(
        fetcher(&e),
        KeyAuthority::JwksUri(url),
        DiscoveryPolicy::default().refresh_cooldown(Duration::ZERO),
    );
    e.srv.route("/jwks", Resp::json(&jwks(&[&old])));
    assert_eq!(d.resolve(&KeyRequest::new().kid("old")).unwrap().len(), 1);
    e.srv.route("/jwks", Resp::json(&jwks(&[&newer])));
    assert_eq!(d.resolve(&KeyRequest::new().kid("newer")).unwrap().len(), 1);
}

#[test]
fn jwks_http_caching_rules() {
    let e = env();
    let k = key("k");
    let url = e.srv.url("agent.example", "/jwks");
    // no-store: every resolution fetches.
    e.srv.route(
        "/jwks",
        Resp::json(&jwks(&[&k])).header("cache-control", "no-store"),
    );
    let d = Discovery::new(fetcher(&e), KeyAuthority::JwksUri(url.clone()));
    d.resolve(&KeyRequest::new().kid("k")).unwrap();
    d.resolve(&KeyRequest::new().kid("k")).unwrap();
    assert_eq!(e.srv.hit_count("/jwks"), 2);
    // no-cache + ETag: revalidated with If-None-Match.
    e.srv.route(
        "/jwks",
        Resp::json(&jwks(&[&k]))
            .header("cache-control", "no-cache")
            .header("etag", "\"v1\""),
    );
    let d = Discovery::new(fetcher(&e), KeyAuthority::JwksUri(url));
    d.resolve(&KeyRequest::new().kid("k")).unwrap();
    d.resolve(&KeyRequest::new().kid("k")).unwrap();
    let hits = e.srv.hits.lock().unwrap().clone();
    assert!(hits
        .last()
        .unwrap()
        .to_ascii_lowercase()
        .contains("if-none-match: \"v1\""));
}

#[test]
fn jwks_member_rules_and_limits() {
    let e = env();
    let k = key("sig");
    let mut set = jwks(&[&k]);
    let mut enc = set["keys"][0].clone();
    enc["use"] = json!("enc");
    enc["kid"] = json!("enc");
    let mut ops = set["keys"][0].clone();
    ops.as_object_mut().unwrap().remove("use");
    ops["key_ops"] = json!(["sign"]);
    ops["kid"] = json!("ops");
    let mut private = set["keys"][0].clone();
    private["kid"] = json!("priv");
    private["d"] = json!("AAAA");
    let oct = json!({"kty": "oct", "k": "c2VjcmV0", "kid": "oct", "alg": "HS256"});
    // An EC key that claims an RSA algorithm: alg/kty inconsistent.
    let mut mismatch = set["keys"][0].clone();
    mismatch["kid"] = json!("mismatch");
    mismatch["alg"] = json!("RS256");
    for m in [enc, ops, private, oct, mismatch] {
        set["keys"].as_array_mut().unwrap().push(m);
    }
    e.srv.route("/jwks", Resp::json(&set));
    let d = Discovery::new(
        fetcher(&e),
        KeyAuthority::JwksUri(e.srv.url("agent.example", "/jwks")),
    );
    for kid in ["enc", "ops", "priv", "oct", "mismatch"] {
        assert!(
            d.resolve(&KeyRequest::new().kid(kid)).unwrap().is_empty(),
            "{kid}"
        );
    }
    assert_eq!(d.resolve(&KeyRequest::new().kid("sig")).unwrap().len(), 1);

    // Two keys and a signature naming neither: an error, not a guess.
    let (a, b) = (key("a"), key("b"));
    e.srv.route("/two", Resp::json(&jwks(&[&a, &b])));
    let d = Discovery::new(
        fetcher(&e),
        KeyAuthority::JwksUri(e.srv.url("agent.example", "/two")),
    );
    let err = d.resolve(&KeyRequest::new()).unwrap_err();
    assert!(err.to_string().contains("2 discovered keys match"), "{err}");

    // Size cap.
    let many: Vec<SigningKey> = (0..5).map(|i| key(&format!("k{i}"))).collect();
    e.srv
        .route("/many", Resp::json(&jwks(&many.iter().collect::<Vec<_>>())));
    let d = Discovery::with_policy(
        fetcher(&e),
        KeyAuthority::JwksUri(e.srv.url("agent.example", "/many")),
        DiscoveryPolicy::default().max_keys(4),
    );
    let err = d.resolve(&KeyRequest::new().kid("k0")).unwrap_err();
    assert!(err.to_string().contains("more than 4"), "{err}");

    // A JWKS endpoint that redirects is not used (panva/jose: 200 only).
    e.srv.route(
        "/moved",
        Resp::redirect(&e.srv.url("agent.example", "/jwks")),
    );
    let d = Discovery::new(
        fetcher(&e),
        KeyAuthority::JwksUri(e.srv.url("agent.example", "/moved")),
    );
    let err = d.resolve(&KeyRequest::new().kid("sig")).unwrap_err();
    assert!(err.to_string().contains("redirect"), "{err}");
}

#[test]
fn did_web_document_keys() {
    let e = env();
    let did = format!("did:web:did.example%3A{}", e.srv.port);
    let k = key(&format!("{did}#key-1"));
    let other = key("other");
    let vm = |id: &str, k: &SigningKey| json!({"id": id, "type": "JsonWebKey2020", "controller": did, "publicKeyJwk": k.verifying_key().to_jwk().to_value()});
    e.srv.route(
        "/.well-known/did.json",
        Resp::json(&json!({
            "id": did,
            "verificationMethod": [vm(&format!("{did}#key-1"), &k), vm("#unreferenced", &other)],
            "assertionMethod": ["#key-1"],
        })),
    );
    let d = Discovery::new(fetcher(&e), KeyAuthority::Did(did.clone()));
    let got = d
        .resolve(&KeyRequest::new().kid(format!("{did}#key-1")))
        .unwrap();
    assert_eq!(got.len(), 1);
    assert!(matches!(&got[0].source, KeySource::Discovered(s) if s.contains("DID document")));
    assert!(d
        .resolve(&KeyRequest::new().kid("#unreferenced"))
        .unwrap()
        .is_empty());
    // End to end: a JWS whose kid is the DID URL verifies.
    assert!(verify_with(d, &sign(&k)).unwrap().verified());

    // A document whose id is another DID is refused.
    e.srv.route(
        "/.well-known/did.json",
        Resp::json(&json!({"id": "did:web:evil.example", "assertionMethod": []})),
    );
    let d = Discovery::new(fetcher(&e), KeyAuthority::Did(did));
    let err = d.resolve(&KeyRequest::new()).unwrap_err();
    assert!(err.to_string().contains("is not"), "{err}");
}

#[test]
fn did_key_and_inline_jwks_need_no_fetch() {
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let did = agentsig::did::did_key(k.verifying_key()).unwrap();
    let d = Discovery::new(Fetcher::new().unwrap(), KeyAuthority::Did(did.clone()));
    let frag = did.strip_prefix("did:key:").unwrap();
    let signer = k.with_kid(format!("{did}#{frag}"));
    assert!(verify_with(d, &sign(&signer)).unwrap().verified());

    let k = key("inline");
    let d = Discovery::new(Fetcher::new().unwrap(), KeyAuthority::Jwks(jwks(&[&k])));
    assert!(verify_with(d, &sign(&k)).unwrap().verified());
}

#[test]
fn jwks_404_negatively_cached() {
    let e = env();
    let url = e.srv.url("agent.example", "/nojwks");
    let d = Discovery::new(fetcher(&e), KeyAuthority::JwksUri(url.clone()));
    for _ in 0..3 {
        let err = d.resolve(&KeyRequest::new().kid("k")).unwrap_err();
        assert!(err.to_string().contains("404"), "{err}");
    }
    assert_eq!(
        e.srv.hit_count("/nojwks"),
        1,
        "a 404 is remembered, not refetched"
    );
}

/// publicKeyMultibase methods, embedded methods, and methods referenced
/// only from other relationships (keyAgreement) are not used.
#[test]
fn did_document_multibase_and_relationships() {
    use agentsig::net::discovery::did_document_keys;
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let mb = agentsig::did::did_key(k.verifying_key())
        .unwrap()
        .strip_prefix("did:key:")
        .unwrap()
        .to_owned();
    let did = "did:web:example.com";
    let doc = json!({
        "id": did,
        "verificationMethod": [
            {"id": "#mb", "type": "Multikey", "controller": did, "publicKeyMultibase": mb},
            {"id": "#ka", "type": "Multikey", "controller": did, "publicKeyMultibase": mb}
        ],
        "authentication": [
            {"id": "did:web:example.com#embedded", "type": "JsonWebKey2020", "controller": did,
             "publicKeyJwk": k.verifying_key().to_jwk().to_value()}
        ],
        "assertionMethod": ["did:web:example.com#mb"],
        "keyAgreement": ["#ka"]
    });
    let keys = did_document_keys(&doc, did, "https://example.com/.well-known/did.json").unwrap();
    let kids: Vec<String> = keys
        .keys()
        .iter()
        .map(|t| t.key.kid().unwrap().to_owned())
        .collect();
    assert_eq!(
        kids,
        ["did:web:example.com#embedded", "did:web:example.com#mb"]
    );
    assert!(matches!(
        did_document_keys(&doc, "did:web:other.example", "u"),
        Err(DiscoveryError::DidIdMismatch { .. })
    ));
}

/// RFC 8414 metadata is read once per TTL, not on every signature.
#[test]
fn metadata_cached_within_ttl() {
    let e = env();
    let k = key("k1");
    let issuer = e.srv.url("as.example", "");
    e.srv.route(
        "/.well-known/oauth-authorization-server",
        Resp::json(&json!({"issuer": issuer, "jwks_uri": e.srv.url("as.example", "/jwks")})),
    );
    e.srv.route("/jwks", Resp::json(&jwks(&[&k])));
    let d = Discovery::new(fetcher(&e), KeyAuthority::AuthorizationServer(issuer));
    for _ in 0..3 {
        assert_eq!(d.resolve(&KeyRequest::new().kid("k1")).unwrap().len(), 1);
    }
    assert_eq!(
        e.srv.hit_count("/.well-known/oauth-authorization-server"),
        1
    );
    assert_eq!(e.srv.hit_count("/jwks"), 1);
}

/// `cache_dir`: a second resolver (a second CLI run) uses the stored set
/// without a fetch while it is fresh; an unknown kid still refetches.
#[test]
fn disk_cache_shared_between_resolvers() {
    let e = env();
    let (k, rotated) = (key("k"), key("rotated"));
    let dir = std::env::temp_dir().join(format!(
        "agentsig-jwks-cache-{}-{}",
        std::process::id(),
        e.srv.port
    ));
    e.srv.route(
        "/jwks",
        Resp::json(&jwks(&[&k])).header("cache-control", "max-age=600"),
    );
    let url = e.srv.url("agent.example", "/jwks");
    let mk = || {
        Discovery::with_policy(
            fetcher(&e),
            KeyAuthority::JwksUri(url.clone()),
            DiscoveryPolicy::default()
                .cache_dir(&dir)
                .refresh_cooldown(Duration::ZERO),
        )
    };
    assert_eq!(mk().resolve(&KeyRequest::new().kid("k")).unwrap().len(), 1);
    assert_eq!(mk().resolve(&KeyRequest::new().kid("k")).unwrap().len(), 1);
    assert_eq!(
        e.srv.hit_count("/jwks"),
        1,
        "second resolver read the disk cache"
    );
    e.srv.route("/jwks", Resp::json(&jwks(&[&k, &rotated])));
    assert_eq!(
        mk().resolve(&KeyRequest::new().kid("rotated"))
            .unwrap()
            .len(),
        1
    );
    assert_eq!(e.srv.hit_count("/jwks"), 2);
    // no-store responses are never written.
    e.srv.route(
        "/ns",
        Resp::json(&jwks(&[&k])).header("cache-control", "no-store"),
    );
    let ns = e.srv.url("agent.example", "/ns");
    for _ in 0..2 {
        let d = Discovery::with_policy(
            fetcher(&e),
            KeyAuthority::JwksUri(ns.clone()),
            DiscoveryPolicy::default().cache_dir(&dir),
        );
        d.resolve(&KeyRequest::new().kid("k")).unwrap();
    }
    assert_eq!(e.srv.hit_count("/ns"), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// With a fleet key-set cache (here the in-process store, shared by four
/// verifiers that each have their own fetcher), RFC 8414 metadata, the JWK
/// Set it names and a did:web document are fetched once for the four;
/// every verifier still verifies the signature with the keys it got. A
/// forced refetch (an unknown `kid`) asks the origin and shares the new
/// set, so the others take the rotated key without asking.
#[test]
fn a_fleet_cache_shares_metadata_jwks_and_did_documents() {
    use agentsig::net::fleet::{FleetCache, FleetSecret};
    use agentsig::replay::blob::{BlobStore, MemoryBlobStore};
    use std::sync::Arc;
    let e = env();
    let k = key("k1");
    let issuer = e.srv.url("as.example", "");
    e.srv.route(
        "/.well-known/oauth-authorization-server",
        Resp::json(&json!({"issuer": issuer, "jwks_uri": e.srv.url("as.example", "/jwks")}))
            .header("cache-control", "max-age=600"),
    );
    e.srv.route(
        "/jwks",
        Resp::json(&jwks(&[&k])).header("cache-control", "max-age=600"),
    );
    let store: Arc<dyn BlobStore> = Arc::new(MemoryBlobStore::new());
    let secret = FleetSecret::from_bytes(vec![3; 32]).unwrap();
    let fleet: Vec<Arc<FleetCache>> = (0..4)
        .map(|_| Arc::new(FleetCache::new(store.clone(), &secret)))
        .collect();
    let discovery = |f: &Arc<FleetCache>| {
        Discovery::new(
            fetcher(&e).with_fleet_cache(f.clone()),
            KeyAuthority::AuthorizationServer(issuer.clone()),
        )
    };
    for f in &fleet {
        assert!(verify_with(discovery(f), &sign(&k)).unwrap().verified());
    }
    assert_eq!(
        e.srv.hit_count("/.well-known/oauth-authorization-server"),
        1
    );
    assert_eq!(e.srv.hit_count("/jwks"), 1);
    assert!(fleet[1..].iter().all(|f| f.stats().hits >= 2));
    // A signature by a key the shared set lacks fails on every verifier:
    // the shared bytes are checked like fetched ones.
    let other = key("k1");
    assert!(!verify_with(discovery(&fleet[0]), &sign(&other)).is_ok_and(|r| r.verified()));
    // Rotation: the origin now serves k2; a verifier meeting kid k2 forces
    // a refetch and shares it; another verifier then has k2 from the fleet.
    let k2 = key("k2");
    e.srv.route(
        "/jwks",
        Resp::json(&jwks(&[&k, &k2])).header("cache-control", "max-age=600"),
    );
    let before = e.srv.hit_count("/jwks");
    assert!(verify_with(discovery(&fleet[0]), &sign(&k2))
        .unwrap()
        .verified());
    assert_eq!(e.srv.hit_count("/jwks"), before + 1);
    assert!(verify_with(discovery(&fleet[2]), &sign(&k2))
        .unwrap()
        .verified());
    assert_eq!(e.srv.hit_count("/jwks"), before + 1, "taken from the fleet");
    // did:web documents go through it too.
    let did = format!("did:web:did.example%3A{}", e.srv.port);
    let dk = key(&format!("{did}#key-1"));
    e.srv.route(
        "/.well-known/did.json",
        Resp::json(&json!({
            "id": did,
            "verificationMethod": [{"id": format!("{did}#key-1"), "type": "JsonWebKey2020",
                "controller": did, "publicKeyJwk": dk.verifying_key().to_jwk().to_value()}],
            "assertionMethod": ["#key-1"],
        }))
        .header("cache-control", "max-age=600"),
    );
    for f in &fleet {
        let d = Discovery::new(
            fetcher(&e).with_fleet_cache(f.clone()),
            KeyAuthority::Did(did.clone()),
        );
        assert!(verify_with(d, &sign(&dk)).unwrap().verified());
    }
    assert_eq!(e.srv.hit_count("/.well-known/did.json"), 1);
}
