//! The discovery cache directory (`DiscoveryPolicy::cache_dir`, CLI
//! `--cache-dir`) over loopback HTTPS: only a private directory and private
//! entries are trusted, an entry stored "in the future" is stale, and the
//! unknown-`kid` refetch cooldown is shared between processes through it.
#![cfg(all(feature = "net", unix))]

mod net_support;

use agentsig::net::discovery::{Discovery, DiscoveryPolicy, KeyAuthority};
use agentsig::net::{FetchPolicy, Fetcher};
use agentsig::trust::{KeyRequest, KeyResolver};
use agentsig::verifier::Verifier;
use agentsig::{descriptor, Algorithm, SigningKey};
use net_support::{loopback, Ca, Resp, Server};
use serde_json::{json, Value};
use sha2::Digest as _;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

struct Env {
    ca: Ca,
    srv: Server,
}

fn env() -> Env {
    let ca = Ca::new();
    let srv = Server::start(&ca, &["agent.example"]);
    Env { ca, srv }
}

fn fetcher(e: &Env) -> Fetcher {
    Fetcher::with_policy(
        FetchPolicy::default()
            .extra_root_pem(e.ca.pem())
            .allow_private_networks(true)
            .pin("agent.example", loopback()),
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

const DESC: &[u8] = br#"{"name":"planner"}"#;

fn sign(k: &SigningKey) -> String {
    descriptor::sign(DESC, k).unwrap().jws
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn tmp(e: &Env, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "agentsig-cachedir-{}-{}-{name}",
        std::process::id(),
        e.srv.port
    ));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn entry_path(dir: &Path, kind: &str, url: &str) -> PathBuf {
    let h = sha2::Sha256::digest(url.as_bytes());
    let name: String = h.iter().map(|b| format!("{b:02x}")).collect();
    dir.join(format!("{kind}-{name}.json"))
}

/// Write a JWK Set entry as the cache writes it.
fn plant(dir: &Path, url: &str, set: &Value, stored: u64, mode: u32) -> PathBuf {
    let p = entry_path(dir, "jwks", url);
    let e = json!({
        "url": url, "stored": stored, "ttl": 3600, "etag": null,
        "last_modified": null, "body": set.to_string(),
    });
    std::fs::write(&p, serde_json::to_vec(&e).unwrap()).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
    p
}

fn discovery(e: &Env, url: &str, dir: &Path) -> Discovery {
    Discovery::with_policy(
        fetcher(e),
        KeyAuthority::JwksUri(url.to_owned()),
        DiscoveryPolicy::default().cache_dir(dir),
    )
}

fn verifies(d: Discovery, jws: &str) -> bool {
    Verifier::builder(d)
        .build()
        .verify_descriptor(DESC, jws)
        .is_ok()
}

/// A key set planted in a directory others may write (or as an entry others
/// may write, or as a symlink) is not used: the origin is asked and the
/// attacker's signature does not verify.
#[test]
fn planted_entries_outside_a_private_directory_are_not_trusted() {
    let e = env();
    let (good, evil) = (key("k"), key("k"));
    e.srv.route(
        "/jwks",
        Resp::json(&jwks(&[&good])).header("cache-control", "max-age=600"),
    );
    let url = e.srv.url("agent.example", "/jwks");
    let attack = sign(&evil);

    // A world-writable directory: not read at all.
    let open = tmp(&e, "open");
    std::fs::create_dir_all(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    plant(&open, &url, &jwks(&[&evil]), unix_now(), 0o600);
    assert!(!verifies(discovery(&e, &url, &open), &attack));
    assert_eq!(e.srv.hit_count("/jwks"), 1, "the origin was asked");
    assert!(verifies(discovery(&e, &url, &open), &sign(&good)));

    // A private directory, but a group/world-writable entry or a symlink.
    let private = tmp(&e, "private");
    agentsig::net::disk::ensure_private_dir(&private).unwrap();
    for mode in [0o666, 0o620] {
        plant(&private, &url, &jwks(&[&evil]), unix_now(), mode);
        let before = e.srv.hit_count("/jwks");
        assert!(
            !verifies(discovery(&e, &url, &private), &attack),
            "{mode:o}"
        );
        assert_eq!(e.srv.hit_count("/jwks"), before + 1, "{mode:o}");
    }
    let elsewhere = tmp(&e, "elsewhere");
    agentsig::net::disk::ensure_private_dir(&elsewhere).unwrap();
    let target = plant(&elsewhere, &url, &jwks(&[&evil]), unix_now(), 0o600);
    let link = entry_path(&private, "jwks", &url);
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let before = e.srv.hit_count("/jwks");
    assert!(!verifies(discovery(&e, &url, &private), &attack));
    assert_eq!(e.srv.hit_count("/jwks"), before + 1, "symlink ignored");

    // What the cache writes itself is private and reused.
    let own = tmp(&e, "own");
    assert!(verifies(discovery(&e, &url, &own), &sign(&good)));
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&own), 0o700);
    assert_eq!(mode(&entry_path(&own, "jwks", &url)), 0o600);
    let before = e.srv.hit_count("/jwks");
    assert!(verifies(discovery(&e, &url, &own), &sign(&good)));
    assert_eq!(
        e.srv.hit_count("/jwks"),
        before,
        "fresh private entry reused"
    );
    for d in [open, private, elsewhere, own] {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// An entry whose `stored` time is in the future (clock set back, or a
/// forged entry) is stale, not fresh forever.
#[test]
fn entry_stored_in_the_future_is_stale() {
    let e = env();
    let (good, old) = (key("k"), key("k"));
    e.srv.route(
        "/jwks",
        Resp::json(&jwks(&[&good])).header("cache-control", "max-age=600"),
    );
    let url = e.srv.url("agent.example", "/jwks");
    let dir = tmp(&e, "future");
    agentsig::net::disk::ensure_private_dir(&dir).unwrap();
    plant(&dir, &url, &jwks(&[&old]), unix_now() + 3600, 0o600);
    assert!(!verifies(discovery(&e, &url, &dir), &sign(&old)));
    assert_eq!(e.srv.hit_count("/jwks"), 1, "the origin was asked");
    // Control: the same entry stored now is fresh and used unasked.
    plant(&dir, &url, &jwks(&[&old]), unix_now(), 0o600);
    assert!(verifies(discovery(&e, &url, &dir), &sign(&old)));
    assert_eq!(e.srv.hit_count("/jwks"), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The unknown-kid refetch cooldown holds across processes sharing a cache
/// directory: a fleet of short-lived runs asking for an unknown kid refetches
/// once per cooldown, not once per run.
#[test]
fn unknown_kid_cooldown_persists_in_the_cache_directory() {
    let e = env();
    let k = key("k");
    e.srv.route(
        "/jwks",
        Resp::json(&jwks(&[&k])).header("cache-control", "max-age=600"),
    );
    let url = e.srv.url("agent.example", "/jwks");
    let dir = tmp(&e, "cooldown");
    let mk = || {
        Discovery::with_policy(
            fetcher(&e),
            KeyAuthority::JwksUri(url.clone()),
            DiscoveryPolicy::default()
                .cache_dir(&dir)
                .refresh_cooldown(Duration::from_secs(600)),
        )
    };
    let unknown = KeyRequest::new().kid("nope");
    // Run 1 fetches the set (and so does not refetch for the unknown kid).
    assert!(mk().resolve(&unknown).unwrap().is_empty());
    assert_eq!(e.srv.hit_count("/jwks"), 1);
    // Run 2 reads the fresh set from disk; the unknown kid forces one refetch.
    assert!(mk().resolve(&unknown).unwrap().is_empty());
    assert_eq!(e.srv.hit_count("/jwks"), 2);
    // Runs 3.. are within the cooldown recorded on disk: no refetch.
    for _ in 0..3 {
        assert!(mk().resolve(&unknown).unwrap().is_empty());
    }
    assert_eq!(
        e.srv.hit_count("/jwks"),
        2,
        "cooldown shared via the cache dir"
    );
    // A cooldown entry others could write is not trusted either way; one
    // stamped in the future does not hold the cooldown.
    let cd = entry_path(&dir, "cooldown", &url);
    let v = json!({"url": url, "at": unix_now() + 3600});
    std::fs::write(&cd, v.to_string()).unwrap();
    assert!(mk().resolve(&unknown).unwrap().is_empty());
    assert_eq!(e.srv.hit_count("/jwks"), 3, "future cooldown stamp ignored");
    let _ = std::fs::remove_dir_all(&dir);
}
