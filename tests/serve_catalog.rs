//! `serve` and AI Catalog discovery, end to end over loopback HTTPS (a test
//! CA made with rcgen): the built `/.well-known/ai-catalog.json` verifies
//! with `agentsig verify https://127.0.0.1:PORT/.well-known/ai-catalog.json
//! --require-signed` (each manifest's key resolved from its identity, the
//! JWK Set `serve` publishes), the MCP Server Card is served at
//! `<streamable-HTTP path>/server-card` with its media type and a response
//! signature, and the catalog is rebuilt when the directory changes.
#![cfg(all(feature = "server", feature = "net"))]

mod net_support;
#[path = "tmp_support/mod.rs"]
mod tmp_support;

use agentsig::catalog::{self, CatalogOptions, Status};
use agentsig::keys::{load_verifying_keys, LoadOptions};
use agentsig::net::{FetchPolicy, Fetcher};
use agentsig::server::{self, KeyRing, PublishConfig, Publisher, ServeOptions};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::{Verifier, VerifyHttp};
use agentsig::{Algorithm, SigningKey};
use net_support::Ca;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::Arc;

fn mcp_card(base: &str) -> Value {
    json!({
        "$schema": "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
        "name": "com.example/weather",
        "version": "1.0.0",
        "description": "Weather forecasts.",
        "title": "Weather",
        "remotes": [{"type": "streamable-http", "url": format!("{base}/mcp")}]
    })
}

struct Served {
    rt: tokio::runtime::Runtime,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
    publisher: Arc<Publisher>,
    base: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.task.take() {
            let _ = self.rt.block_on(t);
        }
    }
}

/// `serve` of `dir` over TLS on 127.0.0.1 with `--base-url
/// https://HOST:PORT` and `--sign-cards`; reloads only when the test asks.
fn serve(dir: &Path, ca: &Ca, host: &str, files: impl FnOnce(&str)) -> Served {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    let base = format!(
        "https://{host}:{}",
        listener.local_addr().expect("addr").port()
    );
    files(&base);
    let leaf_key = rcgen::KeyPair::generate().expect("key");
    let leaf =
        rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned(), "agent.example".to_owned()])
            .expect("params")
            .signed_by(&leaf_key, &ca.cert, &ca.key)
            .expect("leaf");
    let tls = server::tls_config(
        leaf.pem().as_bytes(),
        leaf_key.serialize_pem().as_bytes(),
        ("cert.pem", "key.pem"),
    )
    .expect("tls");
    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256).expect("key");
    let mut cfg = PublishConfig::new(dir, Arc::new(KeyRing::single(key).expect("ring")));
    cfg.base_url = Some(base.clone());
    cfg.sign_cards = true;
    let publisher = Arc::new(Publisher::new(cfg).expect("publisher"));
    let opts = ServeOptions {
        tls: Some(tls),
        reload_interval: None,
        ..ServeOptions::default()
    };
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let task = rt.spawn(server::serve(listener, publisher.clone(), opts, async {
        let _ = rx.await;
    }));
    Served {
        rt,
        stop: Some(tx),
        task: Some(task),
        publisher,
        base,
    }
}

fn fetcher(ca: &Ca) -> Fetcher {
    Fetcher::with_policy(
        FetchPolicy::default()
            .extra_root_pem(ca.pem())
            .allow_private_networks(true)
            .pin("agent.example", net_support::loopback()),
    )
    .expect("fetcher")
}

/// `agentsig verify URL --require-signed --json`: exit code and report.
fn cli_verify(url: &str, ca_file: &Path) -> (i32, Value, String) {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_agentsig"))
        .args(["verify", url, "--require-signed", "--json", "--ca-file"])
        .arg(ca_file)
        .args(["--resolve-to", "agent.example=127.0.0.1"])
        .env("AGENTSIG_ALLOW_PRIVATE_NETWORKS", "1")
        .env_remove("AGENTSIG_CA_FILE")
        .output()
        .expect("run");
    let rep = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (
        o.status.code().unwrap_or(-1),
        rep,
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The brief's flow at `https://127.0.0.1:PORT`: an A2A card (signed in
/// card by `--sign-cards`) and an MCP Server Card whose endpoint is
/// elsewhere (listed by its file's URL); `agentsig verify
/// https://127.0.0.1:PORT/.well-known/ai-catalog.json --require-signed`
/// passes, and the catalog is rebuilt when the directory changes.
#[test]
fn serve_builds_a_signed_catalog_that_verify_accepts_over_https() {
    let dir = tmp_support::TempDir::new("serve-catalog");
    let ca = Ca::new();
    let ca_file = dir.join("ca.pem");
    let site = dir.join("site");
    std::fs::create_dir_all(site.join("agents")).expect("dir");
    std::fs::write(&ca_file, ca.pem()).expect("ca");
    let srv = serve(&site, &ca, "127.0.0.1", |_| {
        std::fs::copy(
            "examples/a2a-agent-card.json",
            site.join("agents/planner.json"),
        )
        .expect("card");
        std::fs::write(
            site.join("weather.json"),
            serde_json::to_vec_pretty(&mcp_card("https://mcp.example.com")).expect("json"),
        )
        .expect("mcp");
    });
    let url = format!("{}{}", srv.base, catalog::WELL_KNOWN_PATH);
    let f = fetcher(&ca);

    // The built catalog: one entry per artifact, identity = identifier =
    // the served JWK Set URL with the artifact's path as fragment.
    let cat = f
        .get_with(&url, &[("accept", catalog::MEDIA_TYPE)])
        .expect("catalog");
    assert_eq!(cat.headers["content-type"], catalog::MEDIA_TYPE);
    let doc: Value = serde_json::from_slice(&cat.body).expect("json");
    let entries = doc["entries"].as_array().expect("entries");
    assert_eq!(entries.len(), 2, "{doc:#}");
    let jwks_url = format!("{}/.well-known/jwks.json", srv.base);
    assert_eq!(
        entries[0]["identifier"],
        format!("{jwks_url}#/agents/planner.json")
    );
    assert_eq!(entries[0]["mediaType"], catalog::A2A_CARD_MEDIA_TYPE);
    assert_eq!(entries[0]["displayName"], "Currency Agent");
    assert_eq!(entries[1]["type"], catalog::MCP_SERVER_CARD_MEDIA_TYPE);
    assert_eq!(entries[1]["mediaType"], catalog::MCP_SERVER_CARD_MEDIA_TYPE);
    assert_eq!(entries[1]["url"], format!("{}/weather.json", srv.base));
    assert_eq!(entries[1]["displayName"], "Weather");
    assert_eq!(doc["host"]["trustManifest"]["identity"], jwks_url);

    // agentsig verify URL: every manifest (keys from the identity's JWK Set),
    // the A2A card by its embedded signature, the server card fetched.
    let (code, rep, err) = cli_verify(&url, &ca_file);
    assert_eq!(code, 0, "{rep:#}{err}");
    let got = rep["details"]["entries"].as_array().expect("entries");
    assert_eq!(got.len(), 2);
    for e in got {
        assert_eq!(e["manifest"]["status"], "verified", "{e:#}");
        assert_eq!(e["artifact"]["status"], "verified", "{e:#}");
        assert_ne!(e["binding"], "unbound", "{e:#}");
    }
    // Each manifest declares the digest of the bytes served at its url.
    for e in entries {
        let link = &e["trustManifest"]["provenance"][0];
        assert_eq!(link["sourceId"], e["url"], "{e:#}");
        assert!(link["sourceDigest"]
            .as_str()
            .is_some_and(|d| d.starts_with("sha256:")));
    }
    assert_eq!(rep["details"]["host"]["status"], "verified", "{rep:#}");

    // Rebuilt when the directory changes: a new descriptor is listed and
    // the catalog still verifies.
    std::fs::copy("examples/agent.json", site.join("agent.json")).expect("agent");
    assert!(srv.publisher.reload_if_changed().expect("reload"));
    let r = verify_resolved(&f, &url);
    assert!(r.verified(), "{:?}", r.first_failure());
    assert_eq!(r.entries.len(), 3);
    assert_eq!(
        r.entries[0].identifier.as_deref(),
        Some(&*format!("{jwks_url}#/agent.json"))
    );
    assert_eq!(r.entries[0].manifest.status, Status::Verified);
    // A change outside the catalog's content keeps its bytes (no new
    // signature, same ETag).
    let before = srv.publisher.site();
    std::fs::write(site.join("agent.json.jws"), b"eyJhbGciOiJFUzI1NiJ9..c2ln\n").expect("jws");
    assert!(srv.publisher.reload_if_changed().expect("reload"));
    let after = srv.publisher.site();
    let etag = |s: &server::publish::Site| match s.get(catalog::WELL_KNOWN_PATH) {
        Some(server::publish::Entry::File { etag, .. }) => etag.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(etag(&before), etag(&after));
}

/// An MCP Server Card whose streamable-HTTP endpoint is on the site is
/// served at `<that path>/server-card` with its media type and the response
/// signature, and the catalog entry points there; `verify` of the catalog
/// fetches it from there.
#[test]
fn serve_serves_the_server_card_at_its_endpoint_and_lists_it() {
    let dir = tmp_support::TempDir::new("serve-server-card");
    let ca = Ca::new();
    let ca_file = dir.join("ca.pem");
    let site = dir.join("site");
    std::fs::create_dir_all(&site).expect("dir");
    std::fs::write(&ca_file, ca.pem()).expect("ca");
    let srv = serve(&site, &ca, "agent.example", |base| {
        std::fs::write(
            site.join("weather.json"),
            serde_json::to_vec_pretty(&mcp_card(base)).expect("json"),
        )
        .expect("mcp");
    });
    let f = fetcher(&ca);
    let card = f
        .get_with(
            &format!("{}/mcp/server-card", srv.base),
            &[("accept", catalog::MCP_SERVER_CARD_MEDIA_TYPE)],
        )
        .expect("server card");
    assert_eq!(
        card.headers["content-type"],
        catalog::MCP_SERVER_CARD_MEDIA_TYPE
    );
    let jwks = f
        .get(&format!("{}/.well-known/jwks.json", srv.base))
        .expect("jwks");
    let mut keys = StaticKeys::new();
    for k in load_verifying_keys(&jwks.body, &LoadOptions::default()).expect("keys") {
        keys = keys.with(k, KeySource::Pinned);
    }
    let v = Verifier::builder(keys)
        .http(agentsig::httpsig::HttpPolicy::descriptor_response())
        .build();
    let mut resp = http::Response::new(card.body.clone());
    *resp.headers_mut() = card.headers.clone();
    assert!(resp.verify_signature(&v).is_ok_and(|r| r.all_valid()));
    assert_eq!(
        serde_json::from_slice::<Value>(&card.body).expect("json")["name"],
        "com.example/weather"
    );
    let url = format!("{}{}", srv.base, catalog::WELL_KNOWN_PATH);
    let (code, rep, err) = cli_verify(&url, &ca_file);
    assert_eq!(code, 0, "{rep:#}{err}");
    let e = &rep["details"]["entries"][0];
    assert!(
        e["artifact"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("lints clean")),
        "{e:#}"
    );
    let doc: Value = serde_json::from_slice(&f.get(&url).expect("catalog").body).expect("json");
    assert_eq!(
        doc["entries"][0]["url"],
        format!("{}/mcp/server-card", srv.base)
    );
}

fn verify_resolved(f: &Fetcher, url: &str) -> catalog::CatalogReport {
    let base = Verifier::builder(StaticKeys::new()).build();
    agentsig::net::catalog::verify_catalog_url(
        &base,
        agentsig::net::catalog::CatalogKeys::Resolved,
        f,
        url,
        &CatalogOptions::default().require_signed(true),
    )
    .expect("fetched")
}

/// Without `--base-url` nothing is built (identities and URLs must be
/// absolute, and `serve` does not take them from a request's `Host`); a
/// `/server-card` path claimed by two cards is served for neither, and said.
#[test]
fn nothing_is_built_without_base_url_and_conflicts_are_named() {
    let dir = tmp_support::TempDir::new("serve-catalog-off");
    std::fs::write(
        dir.join("a.json"),
        serde_json::to_vec(&mcp_card("https://example.com")).expect("json"),
    )
    .expect("a");
    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256).expect("key");
    let ring = Arc::new(KeyRing::single(key).expect("ring"));
    let site = server::publish::scan(&PublishConfig::new(&*dir, ring.clone())).expect("scan");
    assert!(site.get(catalog::WELL_KNOWN_PATH).is_none());
    assert!(site.get("/mcp/server-card").is_none());
    let mut cfg = PublishConfig::new(&*dir, ring);
    cfg.base_url = Some("https://example.com/".into());
    let site = server::publish::scan(&cfg).expect("scan");
    assert!(site.get("/mcp/server-card").is_some());
    assert!(site.get(catalog::WELL_KNOWN_PATH).is_some());
    // What serve says it built at start-up.
    assert_eq!(site.server_card_paths(), ["/mcp/server-card"]);
    assert_eq!(
        site.built_catalog()
            .and_then(|c| c["entries"].as_array())
            .map(Vec::len),
        Some(1)
    );
    std::fs::copy(dir.join("a.json"), dir.join("b.json")).expect("b");
    let site = server::publish::scan(&cfg).expect("scan");
    assert!(site.get("/mcp/server-card").is_none());
    assert!(
        site.notes().iter().any(|n| n.contains("/mcp/server-card")
            && n.contains("/a.json")
            && n.contains("/b.json")),
        "{:?}",
        site.notes()
    );
}

/// A built catalog above the 4 MiB that catalog verifiers read
/// (`catalog::MAX_CATALOG_BYTES`) is not served, and `serve` says why.
#[test]
fn a_built_catalog_too_large_to_verify_is_not_served() {
    let dir = tmp_support::TempDir::new("serve-catalog-large");
    for i in 0..5 {
        let mut card = mcp_card("https://example.com");
        card["title"] = json!("t".repeat(900_000));
        card["name"] = json!(format!("com.example/w{i}"));
        std::fs::write(
            dir.join(format!("c{i}.json")),
            serde_json::to_vec(&card).expect("json"),
        )
        .expect("card");
    }
    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256).expect("key");
    let mut cfg = PublishConfig::new(&*dir, Arc::new(KeyRing::single(key).expect("ring")));
    cfg.base_url = Some("https://example.com".into());
    let site = server::publish::scan(&cfg).expect("scan");
    assert!(site.get(catalog::WELL_KNOWN_PATH).is_none());
    assert!(
        site.notes()
            .iter()
            .any(|n| n.contains("not built") && n.contains("nested catalogs")),
        "{:?}",
        site.notes()
    );
}

/// A directory's own catalog served by `serve`: its RFC 9421 response
/// signature by the host's key (`host.identifier`, the served JWK Set) is a
/// signature over the whole catalog document, so an inline artifact whose
/// manifest declares no digest of it is bound by it (`catalog-signature`)
/// when the catalog is verified by URL, and unbound read from a file.
#[test]
fn a_served_catalog_signature_binds_its_inline_artifacts() {
    let dir = tmp_support::TempDir::new("serve-catalog-sig");
    let ca = Ca::new();
    let site = dir.join("site");
    std::fs::create_dir_all(site.join(".well-known")).expect("dir");
    let publisher = SigningKey::generate(Algorithm::EcdsaP256Sha256).expect("key");
    let did = agentsig::did::did_key(publisher.verifying_key()).expect("did:key");
    let publisher = publisher.with_kid(format!("{did}#{}", &did["did:key:".len()..]));
    let mut doc_file = None;
    let srv = serve(&site, &ca, "127.0.0.1", |base| {
        let mut m = catalog::manifest::new_manifest(&did);
        catalog::sign_manifest(&mut m, &publisher).expect("sign");
        let doc = serde_json::json!({"specVersion": "1.0",
            "host": {"displayName": "H", "identifier": format!("{base}/.well-known/jwks.json")},
            "entries": [{"identifier": did, "displayName": "W",
                "type": catalog::MCP_SERVER_CARD_MEDIA_TYPE, "data": mcp_card("https://mcp.example.com"),
                "trustManifest": m}]});
        let path = site.join(".well-known/ai-catalog.json");
        std::fs::write(&path, serde_json::to_vec_pretty(&doc).expect("json")).expect("write");
        doc_file = Some(path);
    });
    let url = format!("{}{}", srv.base, catalog::WELL_KNOWN_PATH);
    let r = verify_resolved(&fetcher(&ca), &url);
    assert!(r.verified(), "{:?}", r.first_failure());
    assert_eq!(r.entries[0].binding, catalog::Binding::CatalogSignature);
    let sig = r.catalog_signature.as_ref().expect("checked");
    assert_eq!(sig.status, Status::Verified, "{}", sig.message);
    // The same document from a file: nothing covers the inline card.
    let bytes = std::fs::read(doc_file.expect("file")).expect("read");
    let v = Verifier::builder(catalog::manifest::SelfCertifyingKeys::new(Arc::new(
        StaticKeys::new(),
    )))
    .build();
    let r = v
        .verify_catalog(&bytes, &CatalogOptions::default().require_signed(true))
        .expect("read");
    assert_eq!(
        r.entries[0].manifest.status,
        Status::Verified,
        "{}",
        r.entries[0].manifest.message
    );
    assert_eq!(r.entries[0].binding, catalog::Binding::Unbound);
    assert!(!r.verified());
}
