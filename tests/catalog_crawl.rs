//! The crawler side of AI Catalogs over loopback HTTPS: `verify https://HOST`
//! finding the well-known catalog, MCP Server Cards by `url` with their
//! response signature or detached JWS, declared digests of fetched
//! artifacts (provenance `sourceDigest`), `publisher-identity` attestation
//! JWTs, and the host identity.
#![cfg(feature = "net")]

#[path = "b64_support/mod.rs"]
mod b64;
mod net_support;

use agentsig::catalog::{self, CatalogOptions, CatalogReport, SignTarget, Status};
use agentsig::net::catalog::{verify_catalog_url, well_known_catalog_url, CatalogKeys};
use agentsig::net::{FetchPolicy, Fetcher};
use agentsig::trust::StaticKeys;
use agentsig::{Algorithm, SigningKey, Verifier};
use net_support::{key_served_at_jwks, loopback, Ca, Resp, Server};
use serde_json::{json, Value};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const MCP: &str = "application/mcp-server-card+json";

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64
}

/// A fetcher (its own HTTP cache) that trusts `ca` and reaches the test
/// server's two names on loopback.
fn fetcher(ca: &Ca) -> Fetcher {
    Fetcher::with_policy(
        FetchPolicy::default()
            .extra_root_pem(ca.pem())
            .allow_private_networks(true)
            .pin("agent.example", loopback())
            .pin("other.example", loopback()),
    )
    .expect("fetcher")
}

struct Env {
    ca: Ca,
    srv: Server,
    key: SigningKey,
    /// The entries' identity: the JWK Set URL that serves `key`.
    identity: String,
}

fn env() -> Env {
    let ca = Ca::new();
    let srv = Server::start(&ca, &["agent.example", "other.example"]);
    let key = key_served_at_jwks(&srv);
    let identity = srv.url("agent.example", "/jwks");
    Env {
        ca,
        srv,
        key,
        identity,
    }
}

impl Env {
    fn url(&self, path: &str) -> String {
        self.srv.url("agent.example", path)
    }
    /// Serve `doc` (its manifests signed) as the well-known catalog, and
    /// verify it with keys resolved from the identities.
    fn serve_and_verify(&self, mut doc: Value, opts: CatalogOptions) -> CatalogReport {
        if !doc["entries"].as_array().expect("entries").is_empty() {
            catalog::sign_catalog(&mut doc, &self.key, &SignTarget::Every).expect("sign");
        }
        self.srv.route(
            "/.well-known/ai-catalog.json",
            Resp::ok("application/ai-catalog+json", doc.to_string()),
        );
        verify_catalog_url(
            &Verifier::builder(StaticKeys::new()).build(),
            CatalogKeys::Resolved,
            &fetcher(&self.ca),
            &self.url("/.well-known/ai-catalog.json"),
            &opts,
        )
        .expect("root fetched")
    }
    fn entry(&self, mt: &str, path: &str) -> Value {
        json!({"identifier": self.identity, "displayName": "E", "mediaType": mt, "url": self.url(path)})
    }
}

fn server_card() -> Vec<u8> {
    std::fs::read(format!(
        "{ROOT}/tests/vectors/mcp-server-card/valid/templated-remote.json"
    ))
    .expect("card")
}

fn card_resp(body: &[u8], key: &SigningKey) -> Resp {
    let fields = agentsig::httpsig::static_response_fields(
        body,
        MCP,
        &[(key, key.kid().expect("kid").to_owned())],
        now(),
        Some(now() + 600),
    )
    .expect("fields");
    let mut r = Resp::ok(MCP, body.to_vec());
    r.headers.clear();
    for (k, v) in fields {
        r = r.header(&k, &v);
    }
    r
}

fn with_status(mut r: Resp, status: u16) -> Resp {
    r.status = status;
    r
}

fn sha256(b: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

// ---- 1. verify https://HOST -------------------------------------------

#[test]
fn an_origin_names_its_well_known_catalog() {
    assert_eq!(
        well_known_catalog_url("https://Example.COM").as_deref(),
        Some("https://example.com/.well-known/ai-catalog.json")
    );
    assert_eq!(
        well_known_catalog_url("https://example.com:8443/").as_deref(),
        Some("https://example.com:8443/.well-known/ai-catalog.json")
    );
    for not in [
        "https://example.com/agent.json",
        "https://example.com/?q=1",
        "https://example.com/#x",
        "http://example.com/",
        "https://user@example.com/",
    ] {
        assert_eq!(well_known_catalog_url(not), None, "{not}");
    }
}

fn cli(e: &Env, args: &[&str]) -> std::process::Output {
    let dir = std::env::temp_dir().join(format!(
        "agentsig-catalog-crawl-{}-{}",
        std::process::id(),
        e.srv.port
    ));
    std::fs::create_dir_all(&dir).expect("dir");
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, e.ca.pem()).expect("ca");
    let o = net_support::agentsig_cli(&ca_file, args);
    let _ = std::fs::remove_dir_all(&dir);
    o
}

/// `verify https://HOST` verifies the host's `/.well-known/ai-catalog.json`
/// as a catalog when the host serves one; without one (404) the origin URL
/// is verified as a descriptor, exactly as before catalogs existed.
#[test]
fn verify_an_origin_finds_the_well_known_catalog_or_falls_back() {
    let e = env();
    // The skill is bound by the digest its signed manifest declares.
    let zip = b"PK\x03\x04 skill".to_vec();
    e.srv
        .route("/skill.zip", Resp::ok("application/zip", zip.clone()));
    let mut cat = json!({"specVersion": "1.0", "entries": [
        {"identifier": e.identity, "displayName": "Skill", "mediaType": "application/zip",
         "url": e.url("/skill.zip"), "trustManifest": {"identity": e.identity, "provenance": [
            {"relation": "publishedFrom", "sourceId": e.url("/skill.zip"),
             "sourceDigest": format!("sha256:{}", sha256(&zip))}]}}]});
    catalog::sign_catalog(&mut cat, &e.key, &SignTarget::Every).expect("sign");
    e.srv
        .route("/", Resp::json(&json!({"name": "root descriptor"})));
    e.srv
        .route("/.well-known/ai-catalog.json", Resp::json(&cat));
    let origin = e.srv.url("agent.example", "/");
    let origin = origin.trim_end_matches('/');
    let o = cli(&e, &["verify", origin, "--require-signed"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        out.contains("/.well-known/ai-catalog.json: verified (1 of 1 entries)"),
        "{out}"
    );
    assert_eq!(e.srv.hit_count("/"), 0, "the origin itself is not fetched");

    // With --json: the catalog report.
    let o = cli(&e, &["verify", &format!("{origin}/"), "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["details"]["format"], "ai-catalog", "{v}");

    // No catalog: the origin is verified as a descriptor (today's rule).
    e.srv.route(
        "/.well-known/ai-catalog.json",
        with_status(Resp::ok("text/plain", "gone"), 404),
    );
    let o = cli(&e, &["verify", origin, "--allow-unsigned"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("no AI Catalog there"), "{err}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("root descriptor"));
    assert_eq!(e.srv.hit_count("/"), 1);
    // An HTML page served for any path is no catalog either.
    e.srv.route(
        "/.well-known/ai-catalog.json",
        Resp::ok("text/html; charset=utf-8", "<!doctype html><p>home"),
    );
    let o = cli(&e, &["verify", origin, "--allow-unsigned"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("no AI Catalog there"), "{err}");
    assert_eq!(e.srv.hit_count("/"), 2);
}

/// A well-known catalog the host fails to serve (a 500) is a failure, not
/// a silent fall-back to the origin. Nothing could be checked: the verdict
/// is `unavailable`, as for a descriptor the host fails to serve, in
/// `verify URL` and `verify --batch` alike.
#[test]
fn a_failing_well_known_catalog_is_not_skipped() {
    let e = env();
    e.srv.route(
        "/.well-known/ai-catalog.json",
        with_status(Resp::ok("text/plain", "boom"), 500),
    );
    e.srv.route("/", Resp::json(&json!({"name": "x"})));
    e.srv.route(
        "/agent.json",
        with_status(Resp::ok("text/plain", "boom"), 500),
    );
    let origin = e.srv.url("agent.example", "/");
    let o = cli(&e, &["verify", &origin]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(e.srv.hit_count("/"), 0);

    let verdict = |o: &std::process::Output| -> Vec<(String, String)> {
        serde_json::Deserializer::from_slice(&o.stdout)
            .into_iter::<Value>()
            .map(|v| {
                let v = v.expect("JSON reports");
                (
                    v["verdict"].as_str().unwrap_or("").to_owned(),
                    v["error"]["code"].as_str().unwrap_or("").to_owned(),
                )
            })
            .collect()
    };
    let unavailable = ("unavailable".to_owned(), "fetch.failed".to_owned());
    let document = e.url("/agent.json");
    for url in [origin.as_str(), document.as_str()] {
        let o = cli(&e, &["verify", url, "--json"]);
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(verdict(&o), std::slice::from_ref(&unavailable), "{url}");
    }
    let dir =
        std::env::temp_dir().join(format!("agentsig-crawl-unavailable-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let list = dir.join("list.txt");
    std::fs::write(&list, format!("{origin}\n{document}\n")).expect("list");
    let list = list.to_str().expect("path").to_owned();
    let o = cli(&e, &["verify", "--batch", &list, "--ordered", "--json"]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(o.status.code(), Some(1));
    // One report an input, then the run's summary.
    assert_eq!(verdict(&o)[..2], [unavailable.clone(), unavailable]);
}

// ---- 2. MCP Server Cards by url -----------------------------------------

#[test]
fn a_server_card_by_url_is_verified_by_its_response_signature() {
    let e = env();
    let body = server_card();
    e.srv.route("/mcp/server-card", card_resp(&body, &e.key));
    let r = e.serve_and_verify(
        json!({"specVersion": "1.0", "entries": [e.entry(MCP, "/mcp/server-card")]}),
        CatalogOptions::default().require_signed(true),
    );
    assert!(r.verified(), "{:?}", r.first_failure());
    let a = &r.entries[0].artifact;
    assert_eq!(a.status, Status::Verified, "{}", a.message);
    assert!(
        a.message.contains("RFC 9421 response signature verified"),
        "{}",
        a.message
    );
    assert!(
        a.message.contains("nothing about how the server behaves"),
        "{}",
        a.message
    );
    assert!(r.entries[0].fetched);
    // Asked for by its media type (MCP Server Card docs/discovery.md).
    let asked = e
        .srv
        .hits
        .lock()
        .expect("hits")
        .iter()
        .find(|h| h.starts_with("GET /mcp/server-card "))
        .map(|h| h.to_ascii_lowercase())
        .expect("fetched");
    assert!(
        asked.contains("accept: application/mcp-server-card+json"),
        "{asked}"
    );
}

#[test]
fn a_server_card_by_url_is_verified_by_its_detached_jws() {
    let e = env();
    let body = server_card();
    e.srv.route("/card.json", Resp::ok(MCP, body.clone()));
    let jws = agentsig::descriptor::sign(&body, &e.key).expect("sign").jws;
    e.srv
        .route("/card.json.jws", Resp::ok("application/jose", jws));
    let r = e.serve_and_verify(
        json!({"specVersion": "1.0", "entries": [e.entry(MCP, "/card.json")]}),
        CatalogOptions::default().require_signed(true),
    );
    assert!(r.verified(), "{:?}", r.first_failure());
    assert!(r.entries[0]
        .artifact
        .message
        .contains("detached JWS verified"));
}

/// A card served with no signature is unsigned: it passes by default (as
/// `verify URL` of an unsigned descriptor does) and fails under
/// `--require-signed`; it is never reported verified.
#[test]
fn an_unsigned_server_card_by_url_fails_only_under_require_signed() {
    let e = env();
    e.srv.route("/card.json", Resp::ok(MCP, server_card()));
    let doc = json!({"specVersion": "1.0", "entries": [e.entry(MCP, "/card.json")]});
    let r = e.serve_and_verify(doc.clone(), CatalogOptions::default());
    assert!(r.verified(), "{:?}", r.first_failure());
    assert_eq!(r.entries[0].artifact.status, Status::Unsigned);
    assert_eq!(r.entries[0].manifest.status, Status::Verified);
    let r = e.serve_and_verify(doc, CatalogOptions::default().require_signed(true));
    assert!(!r.verified());
    assert_eq!(r.failure_code(), Some("catalog.unbound"));
    let why = r.first_failure().expect("why");
    assert!(why.contains("unbound"), "{why}");
}

/// A card signed by a key the entry's identity does not publish is not
/// checked (the one verdict rule: an untrusted signer counts neither way),
/// so nothing binds it; one whose body no longer matches its
/// Content-Digest fails its entry.
#[test]
fn a_server_card_signed_by_another_key_is_not_checked_and_a_changed_one_fails() {
    let e = env();
    let body = server_card();
    // Another key under the identity's kid: the trusted key is tried and
    // fails (invalid); under a kid the identity does not publish: no
    // trusted key, not checked.
    let other = SigningKey::generate(Algorithm::EcdsaP256Sha256)
        .expect("key")
        .with_kid("k1");
    e.srv.route("/a.json", card_resp(&body, &other));
    let stranger = SigningKey::generate(Algorithm::EcdsaP256Sha256)
        .expect("key")
        .with_kid("stranger");
    e.srv.route("/c.json", card_resp(&body, &stranger));
    let mut changed = card_resp(&body, &e.key);
    let mut tampered = body.clone();
    let i = tampered.iter().position(|b| *b == b'{').expect("{") + 1;
    tampered.insert(i, b' ');
    changed.body = tampered;
    e.srv.route("/b.json", changed);
    let r = e.serve_and_verify(
        json!({"specVersion": "1.0", "entries": [e.entry(MCP, "/a.json"),
            {"identifier": "urn:b", "displayName": "B", "mediaType": MCP, "url": e.url("/b.json")},
            {"identifier": format!("{}#c", e.identity), "displayName": "C", "mediaType": MCP, "url": e.url("/c.json")}]}),
        CatalogOptions::default(),
    );
    assert!(!r.verified());
    assert_eq!(r.entries[0].artifact.status, Status::Failed);
    assert_eq!(r.entries[1].artifact.status, Status::Failed);
    let c = &r.entries[2];
    assert_eq!(
        c.artifact.status,
        Status::NotChecked,
        "{}",
        c.artifact.message
    );
    assert!(
        c.artifact.message.contains("not checked"),
        "{}",
        c.artifact.message
    );
    assert_eq!(c.binding, catalog::Binding::Unbound);
    assert!(
        r.entries[1].artifact.message.contains("Content-Digest"),
        "{}",
        r.entries[1].artifact.message
    );
}

/// A signed card whose entry identity has no key source agentsig can
/// resolve (a URN) is unsupported: never passed, and not called a bad
/// signature.
#[test]
fn a_signed_server_card_of_an_unresolvable_identity_is_unsupported() {
    let e = env();
    e.srv.route("/card.json", card_resp(&server_card(), &e.key));
    let r = e.serve_and_verify(
        json!({"specVersion": "1.0", "entries": [
            {"identifier": "urn:acme:card", "displayName": "C", "mediaType": MCP, "url": e.url("/card.json")}]}),
        CatalogOptions::default(),
    );
    assert!(!r.verified());
    let a = &r.entries[0].artifact;
    assert_eq!(a.status, Status::Unsupported, "{}", a.message);
    assert!(a.message.contains("urn:acme:card"), "{}", a.message);
}

/// An A2A card fetched by `url` and signed by a key other than the
/// identity's is not checked, not failed (the verdict rule of the rest of
/// the tool); signed by the identity's key it is bound by its own
/// signature.
#[test]
fn an_a2a_card_by_url_signed_by_another_key_is_not_checked() {
    let e = env();
    let card: Value = serde_json::from_slice(
        &std::fs::read(format!("{ROOT}/examples/catalog/a2a-agent-card.json")).expect("card"),
    )
    .expect("json");
    let other = SigningKey::generate(Algorithm::EcdsaP256Sha256)
        .expect("key")
        .with_kid("other");
    let by = |k: &SigningKey| {
        let mut c = card.clone();
        c.as_object_mut().expect("card").remove("signatures");
        agentsig::a2a::sign_card(&c, k, &serde_json::Map::new(), true)
            .expect("sign")
            .card
            .to_string()
    };
    const A2A: &str = "application/a2a-agent-card+json";
    e.srv
        .route("/other.json", Resp::ok("application/json", by(&other)));
    e.srv
        .route("/own.json", Resp::ok("application/json", by(&e.key)));
    let doc = json!({"specVersion": "1.0", "entries": [e.entry(A2A, "/other.json"),
        {"identifier": format!("{}#own", e.identity), "displayName": "O", "mediaType": A2A, "url": e.url("/own.json")}]});
    let r = e.serve_and_verify(doc.clone(), CatalogOptions::default());
    let a = &r.entries[0];
    assert_eq!(
        a.artifact.status,
        Status::NotChecked,
        "{}",
        a.artifact.message
    );
    assert!(!a.failed());
    assert_eq!(a.binding, catalog::Binding::Unbound);
    let b = &r.entries[1];
    assert_eq!(
        b.artifact.status,
        Status::Verified,
        "{}",
        b.artifact.message
    );
    assert_eq!(b.binding, catalog::Binding::OwnSignature);
    let r = e.serve_and_verify(doc, CatalogOptions::default().require_signed(true));
    assert!(!r.verified());
    assert_eq!(r.counts().unbound, 1);
    assert_eq!(r.counts().bound, 1);
}

/// A relative entry `url` is resolved against the catalog's URL (RFC 3986
/// section 5) and checked like any other: fetched, its declared digest
/// compared.
#[test]
fn a_relative_entry_url_is_resolved_against_the_catalog_url() {
    let e = env();
    let zip = b"PK\x03\x04 relative".to_vec();
    e.srv
        .route("/skills/r.zip", Resp::ok("application/zip", zip.clone()));
    let entry = json!({"identifier": e.identity, "displayName": "R", "mediaType": "application/zip",
        "url": "../skills/r.zip",
        "trustManifest": {"identity": e.identity, "provenance": [
            {"relation": "publishedFrom", "sourceId": "../skills/r.zip",
             "sourceDigest": format!("sha256:{}", sha256(&zip))}]}});
    let r = e.serve_and_verify(
        json!({"specVersion": "1.0", "entries": [entry.clone()]}),
        CatalogOptions::default().require_signed(true),
    );
    assert!(r.verified(), "{:?}", r.first_failure());
    assert_eq!(r.entries[0].binding, catalog::Binding::ManifestDigest);
    assert_eq!(e.srv.hit_count("/skills/r.zip"), 1);
    // Another body there: the digest differs.
    e.srv.route(
        "/skills/r.zip",
        Resp::ok("application/zip", b"evil".to_vec()),
    );
    let r = e.serve_and_verify(
        json!({"specVersion": "1.0", "entries": [entry]}),
        CatalogOptions::default(),
    );
    assert_eq!(r.entries[0].artifact.status, Status::Failed);
}

/// An entry `url` on a loopback or private address, without the opt-in, is
/// failed with the reason, whatever its media type, and no connection is
/// made.
#[test]
fn an_entry_url_on_a_private_address_fails_without_a_connection() {
    let e = env();
    let mut doc = json!({"specVersion": "1.0", "entries": [
        {"identifier": "urn:a", "displayName": "A", "mediaType": "application/zip",
         "url": format!("https://127.0.0.1:{}/x.zip", e.srv.port)},
        {"identifier": "urn:b", "displayName": "B", "mediaType": MCP,
         "url": format!("https://localhost:{}/card.json", e.srv.port)}]});
    catalog::sign_catalog(&mut doc, &e.key, &SignTarget::Every).expect("sign");
    e.srv.route(
        "/.well-known/ai-catalog.json",
        Resp::ok("application/ai-catalog+json", doc.to_string()),
    );
    // Only the test server's own names may be on loopback.
    let f = Fetcher::with_policy(
        FetchPolicy::default()
            .extra_root_pem(e.ca.pem())
            .allow_private_host("agent.example")
            .pin("agent.example", loopback()),
    )
    .expect("fetcher");
    let before = e.srv.accepted();
    let r = verify_catalog_url(
        &Verifier::builder(StaticKeys::new()).build(),
        CatalogKeys::Resolved,
        &f,
        &e.url("/.well-known/ai-catalog.json"),
        &CatalogOptions::default(),
    )
    .expect("root fetched");
    for x in &r.entries {
        assert_eq!(x.artifact.status, Status::Failed, "{}", x.artifact.message);
        assert!(
            x.artifact.message.contains("no connection made"),
            "{}",
            x.artifact.message
        );
    }
    assert!(!r.verified());
    assert_eq!(e.srv.hit_count("/x.zip") + e.srv.hit_count("/card.json"), 0);
    // The root catalog only (one connection, maybe two for its keys).
    assert!(e.srv.accepted() - before <= 2);
}

// ---- 3. Declared digests of fetched artifacts -----------------------------

#[test]
fn provenance_source_digests_are_checked_against_the_fetched_artifact() {
    let e = env();
    let zip = b"PK\x03\x04 a skill".to_vec();
    e.srv
        .route("/skill.zip", Resp::ok("application/zip", zip.clone()));
    let with = |digest: &str| {
        let mut x = e.entry("application/zip", "/skill.zip");
        x["trustManifest"] = json!({"identity": e.identity, "provenance": [
            {"relation": "publishedFrom", "sourceId": "https://github.com/acme/skill",
             "sourceDigest": format!("sha256:{}", "ab".repeat(32))},
            {"relation": "materializedFrom", "sourceId": e.url("/skill.zip"), "sourceDigest": digest}]});
        x
    };
    let r = e.serve_and_verify(
        json!({"specVersion": "1.0", "entries": [with(&format!("sha256:{}", sha256(&zip)))]}),
        CatalogOptions::default(),
    );
    assert!(r.verified(), "{:?}", r.first_failure());
    let a = &r.entries[0].artifact;
    assert_eq!(a.status, Status::Verified, "{}", a.message);
    assert!(a.message.contains("sourceDigest"), "{}", a.message);
    assert_eq!(e.srv.hit_count("/skill.zip"), 1);

    // A mismatch fails; so does a digest weaker than SHA-256.
    let r = e.serve_and_verify(
        json!({"specVersion": "1.0", "entries": [with(&format!("sha256:{}", "00".repeat(32)))]}),
        CatalogOptions::default(),
    );
    assert_eq!(r.entries[0].artifact.status, Status::Failed);
    assert!(!r.verified());
    let r = e.serve_and_verify(
        json!({"specVersion": "1.0", "entries": [with(&format!("sha1:{}", "00".repeat(20)))]}),
        CatalogOptions::default(),
    );
    assert!(!r.verified());

    // An opaque artifact without a declared digest is not fetched.
    let before = e.srv.hit_count("/skill.zip");
    let r = e.serve_and_verify(
        json!({"specVersion": "1.0", "entries": [e.entry("application/zip", "/skill.zip")]}),
        CatalogOptions::default(),
    );
    assert_eq!(r.entries[0].artifact.status, Status::NotChecked);
    assert_eq!(e.srv.hit_count("/skill.zip"), before);
}

// ---- 4. publisher-identity attestations ------------------------------------

fn identity_jwt(key: &SigningKey, iss: &str, sub: &str) -> String {
    let claims = json!({"iss": iss, "sub": sub, "exp": now() + 600, "iat": now()});
    agentsig::jwt::sign(claims.as_object().expect("obj"), key, "JWT").expect("jwt")
}

/// The entry, its publisher being the JWK Set URL `/pub-jwks` and its
/// manifest carrying a publisher-identity attestation at `/publisher.jwt`.
fn published_entry(e: &Env, token: &str) -> Value {
    e.srv.route(
        "/publisher.jwt",
        Resp::ok("application/jwt", token.to_owned()),
    );
    let mut x = e.entry("application/zip", "/skill.zip");
    x["publisher"] = json!({"identifier": e.url("/pub-jwks"), "displayName": "Acme"});
    x["trustManifest"] = json!({"identity": e.identity, "attestations": [
        {"type": "publisher-identity", "uri": e.url("/publisher.jwt"), "mediaType": "application/jwt",
         "digest": format!("sha256:{}", sha256(token.as_bytes()))}]});
    x
}

#[test]
fn a_publisher_identity_jwt_binds_the_publisher_to_the_identity() {
    let e = env();
    let publisher = SigningKey::generate(Algorithm::EcdsaP256Sha256)
        .expect("key")
        .with_kid("p1");
    let jwk = publisher.verifying_key().to_jwk().to_value();
    e.srv
        .route("/pub-jwks", Resp::json(&json!({"keys": [jwk]})));
    let pub_id = e.url("/pub-jwks");
    let good = identity_jwt(&publisher, &pub_id, &e.identity);
    let r = e.serve_and_verify(
        json!({"specVersion": "1.0", "entries": [published_entry(&e, &good)]}),
        CatalogOptions::default(),
    );
    assert!(r.verified(), "{:?}", r.first_failure());
    let m = &r.entries[0].manifest;
    assert!(
        m.message.contains("publisher-identity JWT verified"),
        "{}",
        m.message
    );

    let refused = |token: &str, why: &str| {
        let r = e.serve_and_verify(
            json!({"specVersion": "1.0", "entries": [published_entry(&e, token)]}),
            CatalogOptions::default(),
        );
        assert_eq!(r.entries[0].manifest.status, Status::Failed, "{why}");
        let msg = &r.entries[0].manifest.message;
        assert!(msg.contains("publisher-identity"), "{why}: {msg}");
        msg.clone()
    };
    // Bound to another identity.
    let m = refused(
        &identity_jwt(&publisher, &pub_id, "urn:someone-else"),
        "sub",
    );
    assert!(m.contains("sub"), "{m}");
    // Issued by another than the entry's publisher (the identity itself,
    // with its own key, claiming its publisher).
    let m = refused(&identity_jwt(&e.key, &e.identity, &e.identity), "iss");
    assert!(m.contains("jwt.iss-mismatch"), "{m}");
    // Signed by a key the publisher does not publish (the identity's).
    let m = refused(&identity_jwt(&e.key, &pub_id, &e.identity), "key");
    assert!(m.contains("JWT jwt."), "{m}");
    // alg none.
    let none = {
        let b64 = |v: Value| b64::encode(v.to_string().as_bytes());
        format!(
            "{}.{}.AAAA",
            b64(json!({"alg": "none"})),
            b64(json!({"iss": pub_id, "sub": e.identity, "exp": now() + 600}))
        )
    };
    let m = refused(&none, "alg none");
    assert!(m.contains("jwt.alg-none"), "{m}");
    // A token changed after its digest was declared.
    let mut x = published_entry(&e, &good);
    x["trustManifest"]["attestations"][0]["digest"] = json!(format!("sha256:{}", "00".repeat(32)));
    let r = e.serve_and_verify(
        json!({"specVersion": "1.0", "entries": [x]}),
        CatalogOptions::default(),
    );
    assert_eq!(r.entries[0].manifest.status, Status::Failed);
    // No publisher to bind.
    let mut x = published_entry(&e, &good);
    x.as_object_mut().expect("obj").remove("publisher");
    let r = e.serve_and_verify(
        json!({"specVersion": "1.0", "entries": [x]}),
        CatalogOptions::default(),
    );
    assert_eq!(r.entries[0].manifest.status, Status::Failed);
}

// ---- 5. Host identity ---------------------------------------------------------

fn with_host(identifier: &str) -> Value {
    json!({"specVersion": "1.0", "host": {"displayName": "Host", "identifier": identifier}, "entries": []})
}

#[test]
fn the_host_identifier_must_name_the_origin_the_catalog_came_from() {
    let e = env();
    let port = e.srv.port;
    for (id, ok) in [
        ("agent.example", true),
        ("AGENT.example.", true),
        ("other.example", false),
        ("did:web:agent.example", true),
        (&*format!("did:web:agent.example%3A{port}"), true),
        (
            "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK",
            false,
        ),
        ("urn:acme:host", false),
        // Not a domain, and no panic on a character that straddles a
        // prefix's byte boundary.
        ("didé.example", false),
        ("did:web:é.example", false),
    ] {
        let r = e.serve_and_verify(with_host(id), CatalogOptions::default());
        let h = r.host_identity.as_ref().expect("checked");
        assert_eq!(r.verified(), ok, "{id}: {}", h.message);
    }
}

#[test]
fn a_did_host_names_the_origin_among_its_service_endpoints() {
    let e = env();
    let did = format!("did:web:other.example%3A{}", e.srv.port);
    let doc = |endpoint: &str| {
        json!({"id": did, "service": [{"id": "#catalog", "type": "AICatalog",
            "serviceEndpoint": {"catalog": endpoint}}]})
    };
    e.srv.route(
        "/.well-known/did.json",
        Resp::json(&doc("https://agent.example/.well-known/ai-catalog.json")),
    );
    let r = e.serve_and_verify(with_host(&did), CatalogOptions::default());
    assert!(r.verified(), "{:?}", r.first_failure());
    e.srv.route(
        "/.well-known/did.json",
        Resp::json(&doc("https://elsewhere.example/")),
    );
    let r = e.serve_and_verify(with_host(&did), CatalogOptions::default());
    assert!(!r.verified());
    assert!(r.first_failure().expect("why").contains("host identity"));
}

/// A signed host manifest must verify with host.identifier's keys: one
/// signed for another identity fails; one on the host's own domain passes.
#[test]
fn a_signed_host_manifest_verifies_with_the_host_identifiers_keys() {
    let e = env();
    let mut doc = with_host("agent.example");
    doc["host"]["trustManifest"] = json!({"identity": e.identity});
    catalog::sign_catalog(&mut doc, &e.key, &SignTarget::Host).expect("sign");
    let r = e.serve_and_verify(doc.clone(), CatalogOptions::default());
    assert!(r.verified(), "{:?}", r.first_failure());
    let mut doc = with_host(&e.url("/other-jwks"));
    doc["host"]["trustManifest"] = json!({"identity": e.identity});
    catalog::sign_catalog(&mut doc, &e.key, &SignTarget::Host).expect("sign");
    let r = e.serve_and_verify(doc, CatalogOptions::default());
    assert!(!r.verified());
    let h = r.host.as_ref().expect("host");
    assert!(
        h.message.contains("host.identifier's keys"),
        "{}",
        h.message
    );
}

/// The one rule of `verify --batch` and `agentsig crawl` for a URL input
/// (`verify_or_expand`): an origin's well-known catalog and a URL that
/// serves a catalog (by its media type, at any path) expand into their
/// entries; an origin without a catalog (404) is verified as a descriptor,
/// as `verify URL` alone does; a missing document is its failure.
#[test]
fn one_rule_takes_a_url_input_as_verify_url_does() {
    use agentsig::net::catalog::{verify_or_expand, UrlInput};
    let e = env();
    let resolver = agentsig::net::Resolver::new(fetcher(&e.ca));
    let opts = CatalogOptions::default();
    let origin = format!("https://agent.example:{}", e.srv.port);
    let cat = json!({"specVersion": "1.0", "entries": [e.entry(MCP, "/good.json"), e.entry(MCP, "/two.json")]});
    // No well-known catalog: the origin is a document, as alone.
    match verify_or_expand(&resolver, &origin, &opts) {
        UrlInput::Document(r) => assert!(r.is_err()),
        other => panic!("{other:?}"),
    }
    // A catalog served at a path that does not look like one.
    e.srv.route(
        "/feed.json",
        Resp::ok("application/ai-catalog+json", cat.to_string()),
    );
    match verify_or_expand(&resolver, &e.url("/feed.json"), &opts) {
        UrlInput::Catalog { url, entries, .. } => {
            assert_eq!(url, e.url("/feed.json"));
            assert_eq!(entries.len(), 2);
        }
        other => panic!("{other:?}"),
    }
    // The well-known catalog of the origin.
    e.srv.route(
        "/.well-known/ai-catalog.json",
        Resp::ok("application/ai-catalog+json", cat.to_string()),
    );
    match verify_or_expand(&resolver, &origin, &opts) {
        UrlInput::Catalog { url, entries, .. } => {
            assert_eq!(url, e.url("/.well-known/ai-catalog.json"));
            assert_eq!(entries.len(), 2);
        }
        other => panic!("{other:?}"),
    }
    match verify_or_expand(&resolver, &e.url("/missing.json"), &opts) {
        UrlInput::Document(r) => {
            let err = r.expect_err("missing");
            assert_eq!(err.code(), "fetch.failed");
        }
        other => panic!("{other:?}"),
    }
}

// ---- 6. verify --batch with catalogs as sources ---------------------------

/// A catalog given to `verify --batch` (its URL in a LIST file, or the
/// catalog file itself) becomes one input per entry: each entry URL gets
/// the verdict `verify URL` gives it alone, a nested catalog is expanded
/// (a cycle refused), an opaque or inline entry is reported not checked;
/// one line per entry, within the per-host bound.
#[test]
fn batch_expands_a_catalog_into_its_entries() {
    let e = env();
    let body = server_card();
    let other = SigningKey::generate(Algorithm::EcdsaP256Sha256)
        .expect("key")
        .with_kid("k1");
    e.srv.route("/good.json", card_resp(&body, &e.key));
    e.srv.route("/bad.json", card_resp(&body, &other));
    let root = e.url("/.well-known/ai-catalog.json");
    let sub = json!({"specVersion": "1.0", "entries": [
        {"identifier": "urn:bad", "displayName": "B", "mediaType": MCP, "url": e.url("/bad.json")},
        {"identifier": "urn:loop", "displayName": "L", "mediaType": "application/ai-catalog+json", "url": root}]});
    e.srv.route("/sub.json", Resp::json(&sub));
    let cat = json!({"specVersion": "1.0", "entries": [
        {"identifier": "urn:good", "displayName": "G", "mediaType": MCP, "url": e.url("/good.json")},
        {"identifier": "urn:zip", "displayName": "Z", "mediaType": "application/zip", "url": e.url("/z.zip")},
        {"identifier": "urn:inline", "displayName": "I", "mediaType": MCP,
         "data": serde_json::from_slice::<Value>(&body).expect("card")},
        {"identifier": "urn:sub", "displayName": "S", "mediaType": "application/ai-catalog+json", "url": e.url("/sub.json")}]});
    e.srv.route(
        "/.well-known/ai-catalog.json",
        Resp::ok("application/ai-catalog+json", cat.to_string()),
    );
    let dir = std::env::temp_dir().join(format!("agentsig-crawl-batch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let jwks = dir.join("k.jwks.json");
    std::fs::write(
        &jwks,
        agentsig::jwk::jwks_document(&[e.key.verifying_key()]).to_string(),
    )
    .expect("jwks");
    let jwks = jwks.to_str().expect("path").to_owned();
    let list = dir.join("list.txt");
    std::fs::write(&list, format!("{root}\n")).expect("list");
    let list_arg = list.to_str().expect("path").to_owned();
    let batch = |extra: &[&str]| {
        let mut args = vec!["verify", "--batch", &list_arg, "--jwks", &jwks, "--ordered"];
        args.extend_from_slice(extra);
        cli(&e, &args)
    };
    let o = batch(&["--per-host", "2"]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 5, "one line per entry: {out}");
    assert!(lines[0].contains("/good.json: verified ("), "{out}");
    assert!(lines[1].contains("/z.zip: not checked"), "{out}");
    assert!(
        lines[2].contains("/entries/2: not checked") && lines[2].contains("inline"),
        "{out}"
    );
    assert!(lines[3].contains("/bad.json: NOT verified"), "{out}");
    assert!(lines[4].contains("cycle"), "{out}");
    // The two entries not checked are `unsigned`: refused by default,
    // accepted (never verified) with --allow-unsigned.
    assert!(err.contains("1 of 5 verified, 4 failed"), "{err}");
    let o = batch(&["--per-host", "2", "--allow-unsigned"]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        err.contains("1 of 5 verified, 2 accepted unsigned (--allow-unsigned), 2 failed"),
        "{err}"
    );
    assert!(
        e.srv.most_open() <= 2,
        "per-host bound: {}",
        e.srv.most_open()
    );
    assert_eq!(
        e.srv.hit_count("/z.zip"),
        0,
        "an opaque entry is not fetched"
    );

    // The origin names the same catalog, as `verify https://HOST` alone
    // reads it.
    std::fs::write(&list, format!("{}\n", e.srv.url("agent.example", "/"))).expect("list");
    let o = batch(&[]);
    let again = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(again.lines().count(), 5, "{again}");
    assert!(again.contains("/good.json: verified ("), "{again}");
    // Without a catalog there, the origin is one descriptor, as alone.
    e.srv.route(
        "/.well-known/ai-catalog.json",
        with_status(Resp::ok("text/plain", "none"), 404),
    );
    e.srv.route("/", Resp::json(&json!({"name": "root"})));
    let o = batch(&[]);
    let plain = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(plain.lines().count(), 1, "{plain}");
    assert!(plain.contains("NOT verified: unsigned"), "{plain}");
    let o = batch(&["--allow-unsigned"]);
    let plain = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        plain.contains("unsigned, NOT verified (accepted by --allow-unsigned)"),
        "{plain}"
    );
    e.srv.route(
        "/.well-known/ai-catalog.json",
        Resp::ok("application/ai-catalog+json", cat.to_string()),
    );

    // Each entry URL alone gets the same verdict.
    for (path, code) in [("/good.json", 0), ("/bad.json", 1)] {
        let o = cli(&e, &["verify", &e.url(path), "--jwks", &jwks]);
        assert_eq!(o.status.code(), Some(code), "{path} alone");
    }

    // The catalog as a local file, in --json: the same entries, each
    // report in the one shape with the catalog and the entry named.
    let local = dir.join("ai-catalog.json");
    std::fs::write(&local, cat.to_string()).expect("catalog");
    std::fs::write(&list, format!("{}\n", local.display())).expect("list");
    let o = batch(&["--json"]);
    let reports: Vec<Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    // The file is not the served root, so the nested catalog's link back
    // to the served root expands that once (3 entries: its own nested
    // catalog is not expanded twice), and the summary.
    assert_eq!(reports.len(), 9, "{reports:?}");
    assert_eq!(reports[0]["verdict"], "verified", "{}", reports[0]);
    assert_eq!(
        reports[0]["details"]["catalog_entry"],
        format!("{}#/entries/0", local.display())
    );
    assert_eq!(reports[3]["verdict"], "not-verified", "{}", reports[3]);
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- 7. Refusals over the network --------------------------------------------

/// A 10 MB catalog served as the root or as a nested catalog is refused
/// (the fetcher's body bound or the 4 MiB catalog bound, before parsing).
#[test]
fn a_served_10_mb_catalog_is_refused() {
    let e = env();
    let mut big = br#"{"specVersion":"1.0","entries":[],"metadata":{"pad":""#.to_vec();
    big.resize(10 * 1000 * 1000, b'a');
    big.extend_from_slice(br#""}}"#);
    e.srv
        .route("/big.json", Resp::ok("application/ai-catalog+json", big));
    let r = e.serve_and_verify(
        json!({"specVersion": "1.0", "entries": [e.entry("application/ai-catalog+json", "/big.json")]}),
        CatalogOptions::default(),
    );
    assert!(!r.verified());
    assert_eq!(r.entries[0].artifact.status, Status::Failed);
    let m = r.entries[0].artifact.message.to_ascii_lowercase();
    assert!(m.contains("exceeds") || m.contains("limit"), "{m}");
    let root = verify_catalog_url(
        &Verifier::builder(StaticKeys::new()).build(),
        CatalogKeys::Resolved,
        &fetcher(&e.ca),
        &e.url("/big.json"),
        &CatalogOptions::default(),
    );
    assert!(root.is_err(), "a 10 MB root catalog is not verified");
}
