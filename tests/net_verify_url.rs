//! `verify URL` as a library call over loopback HTTPS: the good
//! case, and a tampered descriptor, a wrong digest, an expired signature,
//! an unknown key and an unsigned descriptor under require_signed, each
//! with its own error.
#![cfg(feature = "net")]

mod net_support;

use agentsig::net::verify::{verify_url, UrlVerifyError, UrlVerifyOptions};
use agentsig::net::{FetchPolicy, Fetcher};
use agentsig::{descriptor, Algorithm, SigningKey};
use net_support::{key_served_at_jwks, loopback, signed_resp, Ca, Resp, Server};
use serde_json::json;

struct Env {
    _ca: Ca,
    srv: Server,
    fetcher: Fetcher,
    key: SigningKey,
    body: Vec<u8>,
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

fn env() -> Env {
    env_with(Server::start)
}

fn env_with(start: fn(&Ca, &[&str]) -> Server) -> Env {
    let ca = Ca::new();
    let srv = start(&ca, &["agent.example"]);
    let fetcher = Fetcher::with_policy(
        FetchPolicy::default()
            .extra_root_pem(ca.pem())
            .allow_private_networks(true)
            .pin("agent.example", loopback()),
    )
    .unwrap();
    let key = key_served_at_jwks(&srv);
    let body = serde_json::to_vec(&json!({
        "name": "planner",
        "authentication": {"jwksUri": srv.url("agent.example", "/jwks")}
    }))
    .unwrap();
    Env {
        _ca: ca,
        srv,
        fetcher,
        key,
        body,
    }
}

fn jws(body: &[u8], key: &SigningKey) -> String {
    descriptor::sign(body, key).unwrap().jws
}

fn strict() -> UrlVerifyOptions {
    let o = UrlVerifyOptions::default();
    // The default refuses an unsigned descriptor.
    o
}

#[test]
fn verified_by_response_signature_and_detached_jws() {
    let e = env();
    e.srv.route(
        "/a.json",
        signed_resp(&e.body, &e.key, now(), Some(now() + 600)),
    );
    e.srv.route(
        "/a.json.jws",
        Resp::ok("application/jose", jws(&e.body, &e.key)),
    );
    let got = verify_url(
        &e.fetcher,
        &e.srv.url("agent.example", "/a.json"),
        &strict(),
    )
    .unwrap();
    assert!(got.signed() && got.http_signature.is_some() && got.jws.is_some());
    assert!(got.digest_checked);
    assert_eq!(got.descriptor()["name"], "planner");
}

/// Fewest round trips: the detached JWS is requested while the
/// descriptor request is still open (the server holds the descriptor until
/// the `.jws` request has arrived; a sequential client would miss the gate).
#[test]
fn descriptor_and_detached_jws_are_fetched_concurrently() {
    let e = env();
    e.srv.route(
        "/c.json",
        signed_resp(&e.body, &e.key, now(), Some(now() + 600)).after("/c.json.jws"),
    );
    e.srv.route(
        "/c.json.jws",
        Resp::ok("application/jose", jws(&e.body, &e.key)),
    );
    let got = verify_url(
        &e.fetcher,
        &e.srv.url("agent.example", "/c.json"),
        &strict(),
    )
    .unwrap();
    assert!(got.jws.is_some());
    assert_eq!(
        e.srv.missed_gates.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "the .jws request was not in flight while the descriptor was pending"
    );
    assert_eq!(e.srv.hit_count("/c.json.jws"), 1, "fetched once");
}

#[test]
fn tampered_descriptor_fails_jws() {
    let e = env();
    let mut tampered = e.body.clone();
    tampered.splice(9..16, b"hacker!".iter().copied());
    e.srv
        .route("/t.json", Resp::ok("application/json", tampered));
    e.srv.route(
        "/t.json.jws",
        Resp::ok("application/jose", jws(&e.body, &e.key)),
    );
    let err = verify_url(
        &e.fetcher,
        &e.srv.url("agent.example", "/t.json"),
        &strict(),
    )
    .unwrap_err();
    assert!(matches!(err, UrlVerifyError::Jws { .. }), "{err:?}");
}

#[test]
fn wrong_digest_fails_digest() {
    let e = env();
    let mut r = signed_resp(&e.body, &e.key, now(), None);
    for h in r.headers.iter_mut() {
        if h.0.eq_ignore_ascii_case("content-digest") {
            h.1 = agentsig::digest::content_digest(b"something else");
        }
    }
    e.srv.route("/d.json", r);
    let err = verify_url(
        &e.fetcher,
        &e.srv.url("agent.example", "/d.json"),
        &strict(),
    )
    .unwrap_err();
    assert!(matches!(err, UrlVerifyError::Digest(_)), "{err:?}");
}

#[test]
fn expired_signature_fails() {
    let e = env();
    e.srv.route(
        "/x.json",
        signed_resp(&e.body, &e.key, now() - 7200, Some(now() - 3600)),
    );
    let err = verify_url(
        &e.fetcher,
        &e.srv.url("agent.example", "/x.json"),
        &strict(),
    )
    .unwrap_err();
    assert!(matches!(err, UrlVerifyError::HttpSignature(_)), "{err:?}");
    assert!(err.to_string().contains("expire"), "{err}");
}

#[test]
fn unknown_key_fails() {
    let e = env();
    let stranger = SigningKey::generate(Algorithm::EcdsaP256Sha256)
        .unwrap()
        .with_kid("k-unknown");
    e.srv
        .route("/u.json", signed_resp(&e.body, &stranger, now(), None));
    let err = verify_url(
        &e.fetcher,
        &e.srv.url("agent.example", "/u.json"),
        &strict(),
    )
    .unwrap_err();
    // Nothing failed, but no trusted key vouches for it: unsigned.
    assert!(
        matches!(&err, UrlVerifyError::Untrusted(e) if matches!(**e, UrlVerifyError::HttpSignature(_))),
        "{err:?}"
    );
    assert_eq!(err.verdict(), agentsig::report::Verdict::Unsigned);
    assert!(err.to_string().contains("no trusted key"), "{err}");
}

#[test]
fn unsigned_descriptor_under_require_signed() {
    let e = env();
    e.srv
        .route("/n.json", Resp::ok("application/json", e.body.clone()));
    let url = e.srv.url("agent.example", "/n.json");
    let err = verify_url(&e.fetcher, &url, &strict()).unwrap_err();
    assert!(matches!(err, UrlVerifyError::Unsigned(_)), "{err:?}");
    // The default refuses it as well; accepted by policy, it is `unsigned`.
    let err = verify_url(&e.fetcher, &url, &UrlVerifyOptions::default()).unwrap_err();
    assert_eq!(err.verdict(), agentsig::report::Verdict::Unsigned);
    let mut o = UrlVerifyOptions::default();
    o.allow_unsigned = true;
    let got = verify_url(&e.fetcher, &url, &o).unwrap();
    assert!(!got.signed());
    assert_eq!(got.verdict(), agentsig::report::Verdict::Unsigned);
}

// --- RFC 9111 caching and the long-lived Resolver -------------------------

use agentsig::net::{CacheStatus, Resolver};

/// A signed descriptor at `/c.json` whose responses carry `cache` headers.
fn cached_route(e: &Env, path: &str, extra: &[(&str, &str)]) {
    let mut r = signed_resp(&e.body, &e.key, now(), Some(now() + 600));
    let mut j = Resp::ok("application/jose", jws(&e.body, &e.key));
    for (k, v) in extra {
        r = r.header(k, v);
        j = j.header(k, v);
    }
    e.srv.route(path, r);
    e.srv.route(&format!("{path}.jws"), j);
}

#[test]
fn fresh_cached_descriptor_is_not_fetched_again_but_verified_again() {
    let e = env();
    cached_route(&e, "/c.json", &[("cache-control", "max-age=300")]);
    let url = e.srv.url("agent.example", "/c.json");
    let r = Resolver::with_options(e.fetcher.clone(), strict());
    let first = r.verify_url(&url).unwrap();
    assert_eq!(first.cache, CacheStatus::Network);
    for _ in 0..3 {
        let again = r.verify_url(&url).unwrap();
        assert_eq!(again.cache, CacheStatus::Fresh);
        assert!(again.http_signature.is_some() && again.jws.is_some());
        assert_eq!(again.descriptor()["name"], "planner");
    }
    assert_eq!(e.srv.hit_count("/c.json"), 1);
    assert_eq!(e.srv.hit_count("/c.json.jws"), 1);
    // The JWK Set was fetched once: the Resolver keeps its Discovery.
    assert_eq!(e.srv.hit_count("/jwks"), 1);

    // The cache saves the round trip, never the verification: the same
    // cached response, verified at a time past its `expires`, fails.
    let mut late = strict();
    late.now = Some(now() + 3600);
    let err = Resolver::with_options(e.fetcher.clone(), late)
        .verify_url(&url)
        .unwrap_err();
    assert!(matches!(err, UrlVerifyError::HttpSignature(_)), "{err:?}");
    assert_eq!(e.srv.hit_count("/c.json"), 1, "served from the cache");
}

#[test]
fn no_store_descriptor_is_fetched_every_time() {
    let e = env();
    cached_route(&e, "/s.json", &[("cache-control", "no-store, max-age=300")]);
    let url = e.srv.url("agent.example", "/s.json");
    let r = Resolver::with_options(e.fetcher.clone(), strict());
    for _ in 0..3 {
        assert_eq!(r.verify_url(&url).unwrap().cache, CacheStatus::Network);
    }
    assert_eq!(e.srv.hit_count("/s.json"), 3);
}

#[test]
fn no_cache_descriptor_is_revalidated_with_its_etag() {
    let e = env();
    cached_route(
        &e,
        "/v.json",
        &[("cache-control", "no-cache"), ("etag", "\"v1\"")],
    );
    let url = e.srv.url("agent.example", "/v.json");
    let r = Resolver::with_options(e.fetcher.clone(), strict());
    assert_eq!(r.verify_url(&url).unwrap().cache, CacheStatus::Network);
    let again = r.verify_url(&url).unwrap();
    assert_eq!(again.cache, CacheStatus::Revalidated);
    assert!(again.http_signature.is_some() && again.jws.is_some());
    assert_eq!(again.body, e.body);
    assert_eq!(e.srv.hit_count("/v.json"), 2);
    assert_eq!(e.srv.conditional_count("/v.json"), 1);

    // The publisher changes the descriptor (new ETag): the next
    // revalidation gets the new bytes, and they are verified.
    let mut body2: serde_json::Value = serde_json::from_slice(&e.body).unwrap();
    body2["name"] = json!("planner-2");
    let body2 = serde_json::to_vec(&body2).unwrap();
    e.srv.route(
        "/v.json",
        signed_resp(&body2, &e.key, now(), None)
            .header("cache-control", "no-cache")
            .header("etag", "\"v2\""),
    );
    e.srv.route(
        "/v.json.jws",
        Resp::ok("application/jose", jws(&body2, &e.key))
            .header("cache-control", "no-cache")
            .header("etag", "\"j2\""),
    );
    let got = r.verify_url(&url).unwrap();
    assert_eq!(got.cache, CacheStatus::Network);
    assert_eq!(got.descriptor()["name"], "planner-2");
}

#[test]
fn a_missing_detached_jws_is_remembered_briefly() {
    let e = env();
    let mut r = signed_resp(&e.body, &e.key, now(), None);
    r = r.header("cache-control", "max-age=300");
    e.srv.route("/h.json", r);
    let url = e.srv.url("agent.example", "/h.json");
    let res = Resolver::with_options(e.fetcher.clone(), strict());
    for _ in 0..3 {
        let v = res.verify_url(&url).unwrap();
        assert!(v.http_signature.is_some() && v.jws.is_none());
    }
    assert_eq!(e.srv.hit_count("/h.json"), 1);
    assert_eq!(
        e.srv.hit_count("/h.json.jws"),
        1,
        "404 cached (RFC 9111 4.2.2)"
    );
}

#[test]
fn a_cache_can_be_turned_off() {
    let e = env();
    cached_route(&e, "/o.json", &[("cache-control", "max-age=300")]);
    let url = e.srv.url("agent.example", "/o.json");
    let f = Fetcher::with_policy(
        FetchPolicy::default()
            .extra_root_pem(e._ca.pem())
            .allow_private_networks(true)
            .pin("agent.example", loopback())
            .cache(agentsig::net::CachePolicy::disabled()),
    )
    .unwrap();
    let r = Resolver::with_options(f, strict());
    r.verify_url(&url).unwrap();
    r.verify_url(&url).unwrap();
    assert_eq!(e.srv.hit_count("/o.json"), 2);
}

#[test]
fn duplicate_member_names_are_refused_even_with_only_a_response_signature() {
    let e = env();
    let jwks = e.srv.url("agent.example", "/jwks");
    let body =
        format!(r#"{{"name":"planner","authentication":{{"jwksUri":"{jwks}"}},"name":"other"}}"#)
            .into_bytes();
    e.srv
        .route("/d.json", signed_resp(&body, &e.key, now(), None));
    let err = verify_url(
        &e.fetcher,
        &e.srv.url("agent.example", "/d.json"),
        &strict(),
    )
    .unwrap_err();
    assert!(matches!(err, UrlVerifyError::BadJson { .. }), "{err:?}");
    assert_eq!(err.code(), "descriptor.not-json");
}

/// Bulk mode (`sequential_fetches`, as `verify --batch` uses): the
/// descriptor and then its `.jws` on the calling thread's own kept-alive
/// connection, every check the same; after a redirect only the `.jws`
/// beside the final URL is asked for.
#[test]
fn sequential_fetches_verify_on_one_connection() {
    let e = env_with(Server::start_keep_alive);
    for p in ["/s1.json", "/s2.json"] {
        e.srv
            .route(p, signed_resp(&e.body, &e.key, now(), Some(now() + 600)));
        e.srv.route(
            &format!("{p}.jws"),
            Resp::ok("application/jose", jws(&e.body, &e.key)),
        );
    }
    e.srv.route("/moved.json", Resp::redirect("/s2.json"));
    let mut o = strict();
    o.sequential_fetches = true;
    let r = agentsig::net::Resolver::with_options(e.fetcher.clone(), o);
    std::thread::scope(|s| {
        s.spawn(|| {
            for p in ["/s1.json", "/s2.json", "/moved.json"] {
                let got = r.verify_url(&e.srv.url("agent.example", p)).unwrap();
                assert!(got.http_signature.is_some() && got.jws.is_some(), "{p}");
            }
        });
    });
    assert_eq!(e.srv.hit_count("/moved.json.jws"), 0, "no early .jws fetch");
    assert_eq!(e.srv.hit_count("/s2.json.jws"), 2);
    assert_eq!(e.srv.accepted(), 1, "one kept-alive connection");
    // A tampered body still fails the same way.
    let mut tampered = e.body.clone();
    tampered.splice(9..16, b"hacker!".iter().copied());
    e.srv
        .route("/t.json", Resp::ok("application/json", tampered));
    e.srv.route(
        "/t.json.jws",
        Resp::ok("application/jose", jws(&e.body, &e.key)),
    );
    let err = r
        .verify_url(&e.srv.url("agent.example", "/t.json"))
        .unwrap_err();
    assert!(matches!(err, UrlVerifyError::Jws { .. }), "{err:?}");
}

/// draft-narvaneni-agent-uri-03 section 10.3: a response signature protects a descriptor
/// served over HTTP. With `skip_jws_when_http_signed` (as `verify --batch`
/// sets it) a response whose signature verifies is a verified descriptor
/// without asking for its `.jws`; a response without a signature still has
/// its `.jws` fetched and checked, and a response signature that does not
/// verify is still a failure.
#[test]
fn a_verified_response_signature_makes_the_jws_fetch_unneeded() {
    let e = env_with(Server::start_keep_alive);
    e.srv.route(
        "/h.json",
        signed_resp(&e.body, &e.key, now(), Some(now() + 600)),
    );
    // Would fail the verification if it were fetched.
    let mut broken = Resp::ok("text/plain", "server error");
    broken.status = 500;
    e.srv.route("/h.json.jws", broken);
    e.srv
        .route("/u.json", Resp::ok("application/json", e.body.clone()));
    e.srv.route(
        "/u.json.jws",
        Resp::ok("application/jose", jws(&e.body, &e.key)),
    );
    let mut tampered = e.body.clone();
    tampered.splice(9..16, b"hacker!".iter().copied());
    let mut bad = signed_resp(&e.body, &e.key, now(), Some(now() + 600));
    bad.body = tampered;
    e.srv.route("/bad.json", bad);
    let mut o = strict();
    o.sequential_fetches = true;
    o.skip_jws_when_http_signed = true;
    let r = agentsig::net::Resolver::with_options(e.fetcher.clone(), o);
    std::thread::scope(|s| {
        s.spawn(|| {
            let got = r
                .verify_url(&e.srv.url("agent.example", "/h.json"))
                .unwrap();
            assert!(got.http_signature.is_some() && got.jws.is_none() && got.jws_skipped);
            assert!(got.signed() && got.digest_checked);
            assert_eq!(got.checked(), vec!["rfc9421"]);
            assert_eq!(got.descriptor()["name"], "planner");
            let got = r
                .verify_url(&e.srv.url("agent.example", "/u.json"))
                .unwrap();
            assert!(got.http_signature.is_none() && got.jws.is_some() && !got.jws_skipped);
            let err = r
                .verify_url(&e.srv.url("agent.example", "/bad.json"))
                .unwrap_err();
            assert_eq!(err.code(), "digest.mismatch", "{err:?}");
        });
    });
    assert_eq!(e.srv.hit_count("/h.json.jws"), 0, "not asked for");
    assert_eq!(e.srv.hit_count("/u.json.jws"), 1);
    assert_eq!(e.srv.hit_count("/bad.json.jws"), 0);
    // Without the option every published signature is checked: the failing
    // `.jws` fetch fails the verification.
    let mut o = strict();
    o.sequential_fetches = true;
    let all = agentsig::net::Resolver::with_options(e.fetcher.clone(), o);
    std::thread::scope(|s| {
        s.spawn(|| {
            let err = all
                .verify_url(&e.srv.url("agent.example", "/h.json"))
                .unwrap_err();
            assert!(matches!(err, UrlVerifyError::JwsFetch { .. }), "{err:?}");
        });
    });
    assert_eq!(e.srv.hit_count("/h.json.jws"), 1);
}
