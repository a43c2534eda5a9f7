//! `verify https://HOST/.well-known/ai-catalog.json` over loopback HTTPS:
//! a nested catalog and an A2A card fetched by URL through the SSRF-guarded
//! fetcher, each manifest's key resolved from its `https` identity (a JWK
//! Set URL), a cycle between two served catalogs refused.
#![cfg(feature = "net")]

mod net_support;

use agentsig::catalog::{self, CatalogOptions, Status};
use agentsig::net::catalog::{verify_catalog_url, CatalogKeys};
use agentsig::net::{FetchPolicy, Fetcher};
use agentsig::trust::StaticKeys;
use agentsig::{a2a, Verifier};
use net_support::{key_served_at_jwks, loopback, Ca, Resp, Server};
use serde_json::{json, Map, Value};

/// A fetcher (its own HTTP cache) that trusts `ca` and reaches the test
/// server's loopback address.
fn fetcher(ca: &Ca) -> Fetcher {
    Fetcher::with_policy(
        FetchPolicy::default()
            .extra_root_pem(ca.pem())
            .allow_private_networks(true)
            .pin("agent.example", loopback()),
    )
    .expect("fetcher")
}

fn setup() -> (Ca, Server, Fetcher) {
    let ca = Ca::new();
    let srv = Server::start(&ca, &["agent.example"]);
    let f = fetcher(&ca);
    (ca, srv, f)
}

fn base() -> Verifier {
    Verifier::builder(StaticKeys::new()).build()
}

/// Verify the catalog at `url`, keys resolved from the identities.
fn resolved(f: &Fetcher, url: &str, opts: CatalogOptions) -> catalog::CatalogReport {
    verify_catalog_url(&base(), CatalogKeys::Resolved, f, url, &opts).expect("root fetched")
}

#[test]
fn a_served_catalog_with_a_nested_catalog_and_a_card_by_url_verifies() {
    let (ca, srv, fetcher) = setup();
    let key = key_served_at_jwks(&srv);
    let identity = srv.url("agent.example", "/jwks");
    let card = json!({"name": "Planner", "description": "plans",
        "supportedInterfaces": [{"url": "https://agent.example/a2a", "protocolBinding": "JSONRPC"}],
        "version": "1.0.0", "capabilities": {}, "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"], "skills": []});
    let signed = a2a::sign_card(&card, &key, &Map::new(), false).expect("card");
    srv.route("/card.json", Resp::json(&signed.card));
    let mut sub = json!({"specVersion": "1.0", "entries": [
        {"identifier": identity, "displayName": "Planner", "mediaType": "application/a2a-agent-card+json",
         "url": srv.url("agent.example", "/card.json")}]});
    catalog::sign_catalog(&mut sub, &key, &catalog::SignTarget::Every).expect("sign");
    srv.route(
        "/sub.json",
        Resp::ok("application/ai-catalog+json", sub.to_string()),
    );
    let root_url = srv.url("agent.example", "/.well-known/ai-catalog.json");
    let root = json!({"specVersion": "1.0", "entries": [
        {"identifier": "urn:example:team", "displayName": "Team", "mediaType": "application/ai-catalog+json",
         "url": srv.url("agent.example", "/sub.json")}]});
    srv.route(
        "/.well-known/ai-catalog.json",
        Resp::ok("application/ai-catalog+json", root.to_string()),
    );

    let r = resolved(&fetcher, &root_url, CatalogOptions::default());
    assert!(r.verified(), "{:?}", r.first_failure());
    assert_eq!(r.entries.len(), 2);
    assert_eq!(
        r.entries[1].artifact.status,
        Status::Verified,
        "{}",
        r.entries[1].artifact.message
    );
    assert_eq!(
        r.entries[1].manifest.status,
        Status::Verified,
        "{}",
        r.entries[1].manifest.message
    );
    assert_eq!(r.entries[1].depth, 2);
    // With --require-signed the root entry (no manifest) fails.
    let r = verify_catalog_url(
        &base(),
        CatalogKeys::Resolved,
        &fetcher,
        &root_url,
        &CatalogOptions::default().require_signed(true),
    )
    .expect("fetched");
    assert!(!r.verified());

    // The card changed after signing: its entry fails.
    let mut bad: Value = signed.card.clone();
    bad["description"] = json!("evil");
    srv.route("/card.json", Resp::json(&bad));
    let fresh = self::fetcher(&ca);
    let r = resolved(&fresh, &root_url, CatalogOptions::default());
    assert!(!r.verified());
    assert_eq!(r.entries[1].artifact.status, Status::Failed);
}

#[test]
fn a_cycle_between_served_catalogs_is_refused() {
    let (_ca, srv, fetcher) = setup();
    let a = srv.url("agent.example", "/a.json");
    let root_url = srv.url("agent.example", "/.well-known/ai-catalog.json");
    let entry = |id: &str, url: &str| json!({"identifier": id, "displayName": "N", "mediaType": "application/ai-catalog+json", "url": url});
    srv.route(
        "/.well-known/ai-catalog.json",
        Resp::json(&json!({"specVersion": "1.0", "entries": [entry("urn:a", &a)]})),
    );
    srv.route(
        "/a.json",
        Resp::json(&json!({"specVersion": "1.0", "entries": [entry("urn:root", &root_url)]})),
    );
    let r = resolved(&fetcher, &root_url, CatalogOptions::default());
    assert!(!r.verified());
    assert!(
        r.first_failure().expect("why").contains("cycle"),
        "{:?}",
        r.first_failure()
    );
    assert_eq!(
        srv.hit_count("/.well-known/ai-catalog.json"),
        1,
        "the root is not fetched again"
    );
    assert_eq!(srv.hit_count("/a.json"), 1);
}

/// An entry whose URL names a private address is refused by the fetcher's
/// SSRF guard before any connection (the guard checks the address first);
/// the rest of the catalog is still checked.
#[test]
fn an_entry_on_a_private_address_is_refused_without_connecting() {
    let (ca, srv, _) = setup();
    // Only agent.example (the test server, on loopback) may be internal.
    let guarded = Fetcher::with_policy(
        FetchPolicy::default()
            .extra_root_pem(ca.pem())
            .allow_private_host("agent.example")
            .pin("agent.example", loopback()),
    )
    .expect("fetcher");
    let root_url = srv.url("agent.example", "/.well-known/ai-catalog.json");
    let root = json!({"specVersion": "1.0", "entries": [
        {"identifier": "urn:x", "displayName": "X", "mediaType": "application/a2a-agent-card+json",
         "url": "https://10.0.0.1/card.json"},
        {"identifier": "urn:y", "displayName": "Y", "mediaType": "application/a2a-agent-card+json",
         "url": "https://127.0.0.1/card.json"}]});
    srv.route("/.well-known/ai-catalog.json", Resp::json(&root));
    let r = resolved(&guarded, &root_url, CatalogOptions::default());
    assert!(!r.verified());
    for e in &r.entries {
        assert_eq!(e.artifact.status, Status::Failed, "{}", e.artifact.message);
        let m = e.artifact.message.to_ascii_lowercase();
        assert!(
            m.contains("private") || m.contains("loopback") || m.contains("internal"),
            "{m}"
        );
    }
    assert_eq!(
        srv.accepted(),
        2,
        "only the root catalog's connections (the catalog and its URL.jws)"
    );
}

/// The catalog's detached JWS at `URL.jws` (draft-narvaneni-agent-uri-03
/// section 10.3, as for a descriptor), checked with the keys of
/// `host.identifier`: verified, it binds an inline entry no manifest binds;
/// over a catalog changed after signing it fails the catalog and binds
/// nothing; absent, the entry stays unbound.
#[test]
fn a_catalog_url_jws_binds_inline_entries() {
    let (_ca, srv, fetcher) = setup();
    let key = key_served_at_jwks(&srv);
    let identity = srv.url("agent.example", "/jwks");
    let cat = json!({"specVersion": "1.0", "host": {"displayName": "H", "identifier": identity},
        "entries": [{"identifier": "urn:a", "displayName": "A", "mediaType": "application/zip", "data": {"a": 1}}]});
    let url = srv.url("agent.example", "/.well-known/ai-catalog.json");
    srv.route("/.well-known/ai-catalog.json", Resp::json(&cat));
    let r = resolved(&fetcher, &url, CatalogOptions::default());
    assert_eq!(r.entries[0].binding, catalog::Binding::Unbound);
    assert!(r.catalog_signature.is_none(), "{:?}", r.catalog_signature);
    let jws = agentsig::descriptor::sign(cat.to_string().as_bytes(), &key)
        .expect("sign")
        .jws;
    srv.route(
        "/.well-known/ai-catalog.json.jws",
        Resp::ok("application/jose", jws.into_bytes()),
    );
    let r = resolved(&fetcher, &url, CatalogOptions::default());
    assert_eq!(
        r.catalog_signature.as_ref().map(|o| o.status),
        Some(Status::Verified),
        "{:?}",
        r.catalog_signature
    );
    assert_eq!(r.entries[0].binding, catalog::Binding::CatalogSignature);
    assert!(r.verified(), "{:?}", r.first_failure());
    let mut changed = cat.clone();
    changed["entries"][0]["data"]["a"] = json!(2);
    srv.route("/.well-known/ai-catalog.json", Resp::json(&changed));
    let r = resolved(&fetcher, &url, CatalogOptions::default());
    assert_eq!(r.entries[0].binding, catalog::Binding::Unbound);
    assert_eq!(
        r.catalog_signature.as_ref().map(|o| o.status),
        Some(Status::Failed)
    );
    assert!(!r.verified());
}

/// A server with a well-known catalog of one entry whose Trust Manifest is
/// signed by the key of its `https` identity (a JWK Set it serves), and a
/// directory `agentsig-catalog-TAG-PID` holding the test CA as `ca.pem`
/// (for the CLI's `--ca-file`): the server, the directory, the CA file.
fn served_signed_catalog(tag: &str) -> (Server, std::path::PathBuf, std::path::PathBuf) {
    let (ca, srv, _) = setup();
    let key = key_served_at_jwks(&srv);
    let identity = srv.url("agent.example", "/jwks");
    // The skill is fetched from its url and bound by the digest its signed
    // manifest declares.
    let zip = b"PK\x03\x04 skill".to_vec();
    srv.route("/skill.zip", Resp::ok("application/zip", zip.clone()));
    let url = srv.url("agent.example", "/skill.zip");
    let mut cat = json!({"specVersion": "1.0", "entries": [
        {"identifier": identity, "displayName": "Skill", "mediaType": "application/zip",
         "url": url, "trustManifest": {"identity": identity, "provenance": [
            {"relation": "publishedFrom", "sourceId": url,
             "sourceDigest": catalog::manifest::sha256_digest(&zip)}]}}]});
    catalog::sign_catalog(&mut cat, &key, &catalog::SignTarget::Every).expect("sign");
    srv.route("/.well-known/ai-catalog.json", Resp::json(&cat));
    let dir = std::env::temp_dir().join(format!("agentsig-catalog-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, ca.pem()).expect("ca");
    (srv, dir, ca_file)
}

/// `agentsig verify https://HOST/.well-known/ai-catalog.json`: the CLI
/// fetches the catalog and its entries, one line per entry, exit 0/1.
#[test]
fn the_cli_verifies_a_catalog_url() {
    let (srv, dir, ca_file) = served_signed_catalog("net");
    let url = srv.url("agent.example", "/.well-known/ai-catalog.json");
    let run = |extra: &[&str]| {
        let mut args = vec!["verify", url.as_str()];
        args.extend_from_slice(extra);
        net_support::agentsig_cli(&ca_file, &args)
    };
    let o = run(&["--require-signed"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("verified (1 of 1 entries)"), "{out}");
    // Another key set given explicitly: not verified.
    let other = dir.join("other.jwks.json");
    let k2 = agentsig::SigningKey::generate(agentsig::Algorithm::EcdsaP256Sha256).expect("key");
    std::fs::write(
        &other,
        agentsig::jwk::jwks_document(&[k2.verifying_key()]).to_string(),
    )
    .expect("jwks");
    let o = run(&["--jwks", other.to_str().expect("path")]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A catalog at a path of its own (not `/ai-catalog.json`) is recognised
/// by its media type (`application/ai-catalog+json`) or by its content, as
/// `verify FILE` recognises one: `verify URL` checks its Trust Manifests (a
/// tampered one fails), never passes it as an unsigned descriptor; a
/// `verify --batch` line of such a URL expands into its entries.
#[test]
fn a_catalog_at_any_path_is_verified_as_a_catalog_by_media_type_or_content() {
    let (srv, dir, ca_file) = served_signed_catalog("anypath");
    let good = srv.url("agent.example", "/.well-known/ai-catalog.json");
    let fetcher = {
        let ca = std::fs::read(&ca_file).expect("ca");
        Fetcher::with_policy(
            FetchPolicy::default()
                .extra_root_pem(ca)
                .allow_private_networks(true)
                .pin("agent.example", loopback()),
        )
        .expect("fetcher")
    };
    let mut signed: Value =
        serde_json::from_slice(&fetcher.get(&good).expect("catalog").body).expect("json");
    srv.route(
        "/catalogs/good.json",
        Resp::ok("application/ai-catalog+json", signed.to_string()),
    );
    // The manifest changed after signing.
    signed["entries"][0]["trustManifest"]["metadata"] = json!({"tier": "gold"});
    srv.route(
        "/catalogs/finance.json",
        Resp::ok("application/ai-catalog+json", signed.to_string()),
    );
    srv.route(
        "/catalogs/plain.json",
        Resp::ok("application/json", signed.to_string()),
    );
    // By media type alone: a body that is no readable catalog fails as one.
    srv.route(
        "/catalogs/typed.json",
        Resp::ok("application/ai-catalog+json", "{\"name\": \"x\"}"),
    );
    let run = |path: &str, extra: &[&str]| {
        let url = srv.url("agent.example", path);
        let mut args = vec!["verify", url.as_str()];
        args.extend_from_slice(extra);
        let o = net_support::agentsig_cli(&ca_file, &args);
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        (o.status.code(), all)
    };
    let (code, out) = run("/catalogs/good.json", &["--require-signed"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("verified (1 of 1 entries)"), "{out}");
    for path in ["/catalogs/finance.json", "/catalogs/plain.json"] {
        let (code, out) = run(path, &[]);
        assert_eq!(code, Some(1), "{path}: {out}");
        assert!(!out.contains("NOT signed"), "{path}: {out}");
    }
    let (code, out) = run("/catalogs/typed.json", &[]);
    assert_ne!(code, Some(0), "{out}");

    // A batch line: the catalog by media type (no `specVersion`, so not
    // by content) expands into its entries, each checked as alone.
    srv.route(
        "/catalogs/team.json",
        Resp::ok(
            "application/ai-catalog+json",
            json!({"entries": [{"identifier": "urn:x", "displayName": "X",
                "mediaType": "application/mcp-server-card+json",
                "url": srv.url("agent.example", "/missing-card.json")}]})
            .to_string(),
        ),
    );
    let list = dir.join("list.txt");
    std::fs::write(
        &list,
        format!("{}\n", srv.url("agent.example", "/catalogs/team.json")),
    )
    .expect("list");
    let o = net_support::agentsig_cli(
        &ca_file,
        &["verify", "--batch", list.to_str().expect("path")],
    );
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("/missing-card.json"), "{out}");
    assert!(!out.contains("NOT signed"), "{out}");
    assert_eq!(srv.hit_count("/missing-card.json"), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Identities that differ only in their fragment name one JWK Set (the
/// fragment is never sent, RFC 3986 section 3.5): 300 entries signed under
/// `https://agent.example/jwks#entry-N` verify with one fetch of `/jwks`,
/// past the bound of 256 distinct identities.
#[test]
fn identities_differing_in_their_fragment_share_one_jwk_set_fetch() {
    let (_ca, srv, fetcher) = setup();
    let key = key_served_at_jwks(&srv);
    let jwks = srv.url("agent.example", "/jwks");
    let entries: Vec<Value> = (0..300)
        .map(|i| {
            json!({"identifier": format!("{jwks}#entry-{i}"), "displayName": format!("Entry {i}"),
                "mediaType": "application/example+json", "data": {"n": i}})
        })
        .collect();
    let mut doc = json!({"specVersion": "1.0", "entries": entries});
    catalog::sign_catalog(&mut doc, &key, &catalog::SignTarget::Every).expect("sign");
    srv.route(
        "/many.json",
        Resp::ok("application/ai-catalog+json", doc.to_string()),
    );
    let r = resolved(
        &fetcher,
        &srv.url("agent.example", "/many.json"),
        CatalogOptions::default(),
    );
    assert_eq!(r.entries.len(), 300);
    for e in &r.entries {
        assert_eq!(
            e.manifest.status,
            Status::Verified,
            "{}",
            e.manifest.message
        );
    }
    assert_eq!(srv.hit_count("/jwks"), 1);
}

/// A catalog of `size` bytes (padded with an extension member) whose one
/// entry is a nested catalog at `nested`, or with no entry.
fn padded_catalog(size: usize, nested: Option<&str>) -> Vec<u8> {
    let entries = match nested {
        Some(url) => json!([{"identifier": "urn:example:sub", "displayName": "Sub",
            "mediaType": "application/ai-catalog+json", "url": url}]),
        None => json!([]),
    };
    let mut doc = json!({"specVersion": "1.0", "entries": entries, "x-padding": ""});
    let len = doc.to_string().len();
    assert!(size >= len);
    doc["x-padding"] = json!("a".repeat(size - len));
    let bytes = doc.to_string().into_bytes();
    assert_eq!(bytes.len(), size);
    bytes
}

/// A catalog may be up to `catalog::MAX_CATALOG_BYTES` (4 MiB) read from a
/// file; fetched, as the root, as a nested catalog, and as a `verify
/// --batch` source, it gets the same limit (not the fetcher's 1 MiB
/// default for descriptors and key sets), and one byte more is refused
/// both ways. The fetcher's own cap still holds for every other fetch.
#[test]
fn a_catalog_has_the_same_size_limit_fetched_as_read_from_a_file() {
    let (_ca, srv, fetcher) = setup();
    let opts = CatalogOptions::default();
    let max = catalog::MAX_CATALOG_BYTES;
    assert!(max > agentsig::net::fetch::DEFAULT_MAX_BODY);
    let sub_url = srv.url("agent.example", "/sub.json");
    let root_url = srv.url("agent.example", "/.well-known/ai-catalog.json");
    let big = 3 * 1024 * 1024;
    let sub = padded_catalog(big, None);
    let root = padded_catalog(big, Some(&sub_url));
    let ctype = "application/ai-catalog+json";
    srv.route("/sub.json", Resp::ok(ctype, sub.clone()));
    srv.route(
        "/.well-known/ai-catalog.json",
        Resp::ok(ctype, root.clone()),
    );

    // As a file: verified.
    let file = base().verify_catalog(&root, &opts);
    assert!(file.is_ok(), "{:?}", file.err());
    // By URL, the root and its nested catalog: the same verdict.
    let r = resolved(&fetcher, &root_url, opts.clone());
    assert!(r.verified(), "{:?}", r.first_failure());
    assert_eq!(srv.hit_count("/sub.json"), 1, "the nested catalog fetched");
    // As a batch source: expanded, the nested catalog fetched too.
    let inputs = agentsig::net::catalog::expand_catalog_url(&fetcher, &root_url, &opts)
        .expect("a 3 MiB catalog expands by URL");
    assert!(
        inputs.iter().all(|i| !format!("{i:?}").contains("exceeds")),
        "{inputs:?}"
    );
    assert_eq!(
        srv.hit_count("/sub.json"),
        2,
        "the nested catalog fetched again"
    );
    // Not a global raise: the same 3 MiB body fetched as anything else
    // is refused at the fetcher's own cap.
    let e = fetcher.get(&sub_url).expect_err("the default cap holds");
    assert!(e.to_string().contains("exceeds"), "{e}");

    // One byte over the catalog limit: refused as a file, as the root by
    // URL, and as a nested catalog.
    let over = padded_catalog(max + 1, None);
    assert!(base().verify_catalog(&over, &opts).is_err());
    srv.route(
        "/.well-known/ai-catalog.json",
        Resp::ok(ctype, over.clone()),
    );
    let e = verify_catalog_url(&base(), CatalogKeys::Resolved, &fetcher, &root_url, &opts)
        .expect_err("the root over the limit");
    assert!(e.to_string().contains(&max.to_string()), "{e}");
    let e = agentsig::net::catalog::expand_catalog_url(&fetcher, &root_url, &opts)
        .expect_err("the batch source over the limit");
    assert!(e.to_string().contains(&max.to_string()), "{e}");
    srv.route("/.well-known/ai-catalog.json", Resp::ok(ctype, root));
    srv.route("/sub.json", Resp::ok(ctype, over));
    let r = resolved(&fetcher, &root_url, opts);
    assert!(!r.verified());
    let why = r.first_failure().expect("why");
    assert!(why.contains(&max.to_string()), "{why}");
}

/// Every `verify` option a catalog cannot honour is refused (exit 2, the
/// flag and why named) for a catalog URL, before anything is fetched, and
/// for an origin once its well-known URL answered a catalog; never a
/// verdict computed as if the option were absent. The options a catalog
/// honours (`--require-signed`, `--jwks`, `--typ`) still decide.
#[test]
fn verify_options_a_catalog_cannot_honour_are_refused_by_url() {
    let (srv, dir, ca_file) = served_signed_catalog("flags");
    let cache = dir.join("cache");
    let cache = cache.to_str().expect("path");
    let catalog_url = srv.url("agent.example", "/.well-known/ai-catalog.json");
    let origin = srv.url("agent.example", "/");
    // (the options, the flag the refusal names)
    let refused: &[(&[&str], &str)] = &[
        (&["--pin-store", "memory:"], "--pin-store"),
        (&["--jws", "x.jws"], "--jws"),
        (&["--require-all"], "--require-all"),
        (&["--max-age", "5m"], "--max-age/--now"),
        (&["--now", "1700000000"], "--max-age/--now"),
        (&["--cache-dir", cache], "--cache-dir"),
        (
            &["--require-response-signature"],
            "--require-response-signature",
        ),
        (&["--follow-jku"], "--follow-jku"),
    ];
    let run = |url: &str, extra: &[&str]| {
        let mut args = vec!["verify", url];
        args.extend_from_slice(extra);
        let o = net_support::agentsig_cli(&ca_file, &args);
        (
            o.status.code(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            ),
        )
    };
    for (opts, flag) in refused {
        let before = srv.hit_count("/.well-known/ai-catalog.json");
        let (code, out) = run(&catalog_url, opts);
        assert_eq!(code, Some(2), "{opts:?}: {out}");
        assert!(out.contains(&format!("{flag}: ")), "{opts:?}: {out}");
        assert!(out.contains("AI Catalog"), "{opts:?}: {out}");
        assert_eq!(
            srv.hit_count("/.well-known/ai-catalog.json"),
            before,
            "{opts:?}: refused before fetching"
        );
        let (code, out) = run(&origin, opts);
        assert_eq!(code, Some(2), "origin {opts:?}: {out}");
        assert!(out.contains(&format!("{flag}: ")), "origin {opts:?}: {out}");
        assert_eq!(
            srv.hit_count("/.well-known/ai-catalog.json"),
            before + 1,
            "origin {opts:?}: the well-known catalog was read, then refused"
        );
    }
    assert!(!std::path::Path::new(cache).exists(), "--cache-dir unused");
    // Honoured: the verdict with them.
    let (code, out) = run(&catalog_url, &["--require-signed"]);
    assert_eq!(code, Some(0), "{out}");
    let (code, out) = run(&origin, &["--typ", "JOSE"]);
    assert_eq!(code, Some(0), "{out}");
    let (code, out) = run(&catalog_url, &["--typ", "not-jose"]);
    assert_eq!(code, Some(1), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
