//! The bounds of a catalog fetched over HTTPS (loopback, the test CA).
//!
//! One catalog is one job with one set of bounds: every request it causes
//! (the catalog, nested catalogs, entries, their detached JWS, key sets)
//! counts toward [`CatalogOptions::max_fetches`], whether the catalog is
//! verified (`verify URL`) or expanded and its entries checked (`verify
//! --batch`). Proved by counting the requests the loopback server
//! receives, never by timing. And the root catalog comes from the origin
//! asked for: a cross-origin redirect is refused, a same-origin one is
//! followed and the report names the URL whose bytes were checked.
#![cfg(feature = "net")]

mod net_support;

use agentsig::catalog::{self, CatalogOptions, SignTarget, Status};
use agentsig::net::catalog::{verify_catalog_url, CatalogKeys, CatalogUrlError};
use agentsig::net::{FetchPolicy, Fetcher};
use agentsig::trust::StaticKeys;
use agentsig::{Algorithm, SigningKey, Verifier};
use net_support::{loopback, Ca, Resp, Server};
use serde_json::{json, Value};

const MCP: &str = "application/mcp-server-card+json";

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

/// `verify --batch` over a catalog of 1,000 MCP Server Cards by URL on the
/// host it names: the expansion and the entry checks (each card and its
/// `.jws`) share the catalog's bound of 256 requests; the entries beyond
/// are refused with the reason (`catalog.budget`), not fetched.
#[test]
fn batch_over_a_catalog_is_one_job_within_the_catalog_bounds() {
    let ca = Ca::new();
    let srv = Server::start(&ca, &["agent.example"]);
    let entries: Vec<Value> = (0..1000)
        .map(|i| {
            json!({"identifier": format!("urn:example:card:{i}"), "displayName": format!("Card {i}"),
                "mediaType": MCP, "url": srv.url("agent.example", &format!("/cards/{i}.json"))})
        })
        .collect();
    let cat = json!({"specVersion": "1.0", "entries": entries});
    srv.route(
        "/catalogs/big.json",
        Resp::ok("application/ai-catalog+json", cat.to_string()),
    );
    let dir = std::env::temp_dir().join(format!("agentsig-budget-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, ca.pem()).expect("ca");
    let list = dir.join("list.txt");
    // By its media type (a path of its own), and by the well-known form.
    std::fs::write(
        &list,
        format!("{}\n", srv.url("agent.example", "/catalogs/big.json")),
    )
    .expect("list");
    let o = net_support::agentsig_cli(
        &ca_file,
        &["verify", "--batch", list.to_str().expect("path"), "--json"],
    );
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(1));
    let requests = srv.total_hits();
    assert!(
        requests <= catalog::MAX_FETCHES,
        "{requests} requests for one catalog job (bound {})",
        catalog::MAX_FETCHES
    );
    let reports: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("one JSON report a line"))
        .filter(|r| r["details"]["catalog_entry"].is_string())
        .collect();
    assert_eq!(
        reports.len(),
        1000,
        "one result per entry: {}",
        out.lines().last().unwrap_or("")
    );
    let refused = reports
        .iter()
        .filter(|r| r["error"]["code"] == "catalog.budget")
        .count();
    assert!(refused >= 1000 - catalog::MAX_FETCHES, "{refused} refused");
    let why = reports
        .iter()
        .find(|r| r["error"]["code"] == "catalog.budget")
        .map(|r| r["error"]["message"].to_string())
        .expect("a refusal");
    assert!(why.contains("more than 256 requests"), "{why}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `verify URL` of a catalog: the key sets of the manifests' identities
/// count toward the same bound as the documents. 300 signed manifests,
/// each under its own `https` identity (a JWK Set URL), with a bound of 20
/// requests: at most 20 requests reach the server, the root included, and
/// the manifests whose keys were not fetched are not verified.
#[test]
fn key_discovery_for_identities_counts_toward_the_catalog_bounds() {
    let ca = Ca::new();
    let srv = Server::start(&ca, &["agent.example"]);
    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256)
        .expect("key")
        .with_kid("k1");
    let mut j = key.verifying_key().to_jwk().to_value();
    j["use"] = json!("sig");
    let mut entries = Vec::new();
    for i in 0..300 {
        let path = format!("/jwks/{i}");
        srv.route(&path, Resp::json(&json!({ "keys": [j.clone()] })));
        entries.push(
            json!({"identifier": srv.url("agent.example", &path), "displayName": format!("E{i}"),
            "mediaType": "application/example+json", "data": {"n": i}}),
        );
    }
    let mut doc = json!({"specVersion": "1.0", "entries": entries});
    catalog::sign_catalog(&mut doc, &key, &SignTarget::Every).expect("sign");
    srv.route(
        "/catalogs/keys.json",
        Resp::ok("application/ai-catalog+json", doc.to_string()),
    );
    let mut opts = CatalogOptions::default();
    opts.max_fetches = 20;
    let r = verify_catalog_url(
        &Verifier::builder(StaticKeys::new()).build(),
        CatalogKeys::Resolved,
        &fetcher(&ca),
        &srv.url("agent.example", "/catalogs/keys.json"),
        &opts,
    )
    .expect("root fetched");
    let requests = srv.total_hits();
    assert!(requests <= 20, "{requests} requests, bound 20");
    let verified = r
        .entries
        .iter()
        .filter(|e| e.manifest.status == Status::Verified)
        .count();
    assert!((1..20).contains(&verified), "{verified} verified");
    assert!(!r.verified());
    let refused = r
        .entries
        .iter()
        .find(|e| e.manifest.status != Status::Verified)
        .expect("one not verified");
    assert!(
        refused.manifest.message.contains("catalog.budget"),
        "{}",
        refused.manifest.message
    );
}

/// A catalog URL that redirects to another origin is refused
/// (`fetch.redirect-cross-origin`): its host identity could only be checked
/// against an origin the caller never named. A redirect within the origin
/// is followed; the host identity is checked against that origin and the
/// report names the URL whose content was checked.
#[test]
fn a_cross_origin_redirect_of_a_catalog_is_refused_and_the_checked_url_named() {
    let ca = Ca::new();
    let srv = Server::start(&ca, &["agent.example", "other.example"]);
    let elsewhere = srv.url("other.example", "/cat.json");
    // The other origin's catalog names the origin asked for as its host.
    let cat = json!({"specVersion": "1.0", "host": {"displayName": "Agent", "identifier": "agent.example"},
        "entries": [{"identifier": "urn:x", "displayName": "X", "mediaType": "application/zip",
                     "url": "https://agent.example/x.zip"}]});
    srv.route(
        "/cat.json",
        Resp::ok("application/ai-catalog+json", cat.to_string()),
    );
    srv.route("/.well-known/ai-catalog.json", Resp::redirect(&elsewhere));
    let asked = srv.url("agent.example", "/.well-known/ai-catalog.json");
    let base = Verifier::builder(StaticKeys::new()).build();
    let f = fetcher(&ca);
    match verify_catalog_url(
        &base,
        CatalogKeys::Resolved,
        &f,
        &asked,
        &CatalogOptions::default(),
    ) {
        Err(e @ CatalogUrlError::CrossOrigin { .. }) => {
            assert_eq!(e.code(), "fetch.redirect-cross-origin");
            assert!(e.to_string().contains(&elsewhere), "{e}");
        }
        other => panic!("a cross-origin redirect was followed: {other:?}"),
    }
    // The CLI: exit 1 with the reason code.
    let dir = std::env::temp_dir().join(format!("agentsig-bounds-redir-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, ca.pem()).expect("ca");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_agentsig"))
        .args(["verify", &asked, "--json", "--ca-file"])
        .arg(&ca_file)
        .args([
            "--resolve-to",
            "agent.example=127.0.0.1",
            "--resolve-to",
            "other.example=127.0.0.1",
        ])
        .env("AGENTSIG_ALLOW_PRIVATE_NETWORKS", "1")
        .env_remove("AGENTSIG_CA_FILE")
        .output()
        .expect("run");
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(
        o.status.code(),
        Some(1),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("fetch.redirect-cross-origin"), "{out}");

    // Within the origin: followed, and the checked URL named.
    srv.route(
        "/catalogs/new.json",
        Resp::ok("application/ai-catalog+json", cat.to_string()),
    );
    let moved = srv.url("agent.example", "/catalogs/new.json");
    srv.route("/.well-known/ai-catalog.json", Resp::redirect(&moved));
    let r = verify_catalog_url(
        &base,
        CatalogKeys::Resolved,
        &f,
        &asked,
        &CatalogOptions::default(),
    )
    .expect("a same-origin redirect is followed");
    assert_eq!(r.url.as_deref(), Some(moved.as_str()));
    assert_eq!(
        r.host_identity.as_ref().map(|h| h.status),
        Some(Status::Verified),
        "{:?}",
        r.host_identity
    );
    let rep = agentsig::report::Report::from_catalog("verify", Some(&asked), &r);
    assert_eq!(
        serde_json::to_value(&rep).expect("json")["details"]["checked_url"],
        json!(moved)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
