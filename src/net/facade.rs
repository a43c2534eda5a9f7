//! The network half of [`crate::facade`]: Web Bot Auth key directories
//! fetched through the SSRF-guarded fetcher, each verification's fetches
//! bounded by one deadline, and AI Catalogs verified by URL.

use super::fetch::{FetchPolicy, Fetcher};
use super::fleet::{FleetCache, FleetSecret, FleetSecretError};
use crate::catalog::{CatalogError, CatalogOptions, CatalogReport};
use crate::clock::FixedClock;
use crate::facade::{
    catalog_error, DirectoryFetch, Facade, Failure, KeyCache, KeyCacheError, Network, Outcome,
};
use crate::report::Report;
use crate::verifier::Verifier;
use crate::webbotauth::KeyDirectory;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The [`Network`] of the `net` feature.
struct Net;

static NET: Net = Net;

/// The network a binding gives [`crate::facade::VerifierOptions::build`].
pub fn network() -> &'static dyn Network {
    &NET
}

/// The fetch policy of `o`: the default (SSRF guard on, public TLS roots)
/// with the private hosts and extra roots it names.
fn policy(allow_private_hosts: &[String], extra_roots_pem: &[String]) -> FetchPolicy {
    let mut p = FetchPolicy::default();
    for h in allow_private_hosts {
        p = p.allow_private_host(h.clone());
    }
    for pem in extra_roots_pem {
        p = p.extra_root_pem(pem.clone().into_bytes());
    }
    p
}

/// The SSRF-guarded fetcher of `o`, sharing its fleet key-set cache.
fn fetcher(o: &DirectoryFetch) -> Result<Fetcher, String> {
    let f = Fetcher::with_policy(policy(&o.allow_private_hosts, &o.extra_roots_pem))
        .map_err(|e| e.to_string())?;
    Ok(with_fleet(f, o.key_cache.as_ref()))
}

/// `f` sharing the fleet key-set cache `k`, when there is one (one this
/// network made, [`Net::key_cache`]).
fn with_fleet(f: Fetcher, k: Option<&KeyCache>) -> Fetcher {
    match k.and_then(|k| k.0.clone().downcast::<FleetCache>().ok()) {
        Some(c) => f.with_fleet_cache(c),
        None => f,
    }
}

impl Network for Net {
    fn directories(&self, o: &DirectoryFetch) -> Result<Arc<dyn KeyDirectory>, String> {
        let fetcher = fetcher(o)?;
        let mut client = super::webbotauth::DirectoryClient::new(Arc::new(fetcher))
            .require_proof(o.require_proof);
        if let Some(n) = o.now {
            client = client.clock(FixedClock(n));
        }
        Ok(Arc::new(client))
    }

    fn deadline(&self) -> Duration {
        FetchPolicy::default().timeout
    }

    fn within(&self, deadline: Instant, f: &mut dyn FnMut()) {
        super::fetch::with_deadline(deadline, f);
    }

    fn key_cache(
        &self,
        store: &str,
        secret_file: Option<&std::path::Path>,
    ) -> Result<KeyCache, KeyCacheError> {
        let secret = FleetSecret::from_file_or_env(secret_file).map_err(|e| match e {
            FleetSecretError::Missing { var } => KeyCacheError::NoSecret { var },
            FleetSecretError::Io { .. } => KeyCacheError::Unreadable(e.to_string()),
            other => KeyCacheError::Unusable(other.to_string()),
        })?;
        let fleet =
            FleetCache::open(store, &secret).map_err(|e| KeyCacheError::Store(e.to_string()))?;
        Ok(KeyCache(Arc::new(fleet)))
    }

    fn verify_catalog_resolved(
        &self,
        base: &Verifier,
        o: &DirectoryFetch,
        catalog: &[u8],
        opts: &CatalogOptions,
    ) -> Result<Result<CatalogReport, CatalogError>, String> {
        let f = fetcher(o)?;
        let deadline = Instant::now() + super::catalog::DEADLINE;
        Ok(super::fetch::with_deadline(deadline, || {
            super::catalog::verify_catalog_resolved(base, &f, catalog, opts)
        }))
    }
}

/// How [`verify_catalog_url`] fetches.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct CatalogFetch {
    /// Every entry must carry a verified Trust Manifest.
    pub require_signed: bool,
    /// Accept a catalog some entry of which no trusted key vouches for
    /// (nothing failed), with the verdict `unsigned` (the command line's
    /// `--allow-unsigned`).
    pub allow_unsigned: bool,
    /// Hosts that may resolve to private addresses (tests, internal
    /// catalogs); none by default.
    pub allow_private_hosts: Vec<String>,
    /// Extra TLS roots (PEM).
    pub extra_roots_pem: Vec<String>,
}

/// Fetch the AI Catalog at `url` through the SSRF-guarded fetcher (sharing
/// `v`'s fleet key-set cache, if any) and verify it
/// ([`super::catalog::verify_catalog_url`]: nested catalogs and cards
/// fetched, bounded in depth, fetches, bytes and time), as
/// `agentsig verify URL --json` reports it: with `v`'s trusted keys for
/// every manifest identity when it has some (`--key K`), else with each
/// identity's keys resolved ([`Facade::resolves_catalog_keys`]).
///
/// # Errors
/// A [`Failure`]: `FetchError` (code `fetch.failed`, with an `unavailable`
/// report) when the catalog cannot be fetched, not verified (code `catalog.not-verified`,
/// with the report), or bad input (not `https`, too large, not JSON).
pub fn verify_catalog_url(v: &Facade, url: &str, o: &CatalogFetch) -> Outcome<Report> {
    use super::catalog::{CatalogKeys, CatalogUrlError};
    if !url.starts_with("https://") {
        return Err(Failure::malformed(format!(
            "{}: a catalog is fetched over HTTPS only",
            crate::text::quoted(url)
        )));
    }
    let fetcher = Fetcher::with_policy(policy(&o.allow_private_hosts, &o.extra_roots_pem))
        .map_err(|e| Failure::usage(format!("HTTPS client: {e}")))?;
    let fetcher = with_fleet(fetcher, v.key_cache());
    let keys = if v.resolves_catalog_keys() {
        CatalogKeys::Resolved
    } else {
        CatalogKeys::Given
    };
    let opts = CatalogOptions::default().require_signed(o.require_signed);
    match super::catalog::verify_catalog_url(v.verifier(), keys, &fetcher, url, &opts) {
        Ok(r) => crate::facade::error::settle_accepting(
            Report::from_catalog("verify", Some(url), &r),
            o.allow_unsigned && !o.require_signed,
        ),
        Err(CatalogUrlError::Catalog(e)) => Err(catalog_error(e)),
        // Not fetched (`unavailable`), or refused: the report `verify URL
        // --json` gives.
        Err(e) => Err(Failure::not_verified(e.report("verify", url))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facade::{ErrorKind, VerifierOptions};

    fn with_key() -> VerifierOptions {
        let k = crate::SigningKey::from_ed25519_seed(&[6u8; 32]).unwrap();
        let mut o = VerifierOptions::default();
        o.keys
            .add(k.verifying_key().clone(), crate::trust::KeySource::Pinned);
        o
    }

    fn facade() -> Facade {
        with_key().build(Some(network())).unwrap()
    }

    #[test]
    fn a_catalog_url_on_a_private_address_is_a_fetch_error_without_a_connection() {
        // 127.0.0.1 is refused by the SSRF guard before any connection
        // (nothing listens there in this test).
        let f = verify_catalog_url(
            &facade(),
            "https://127.0.0.1:9/.well-known/ai-catalog.json",
            &CatalogFetch::default(),
        )
        .unwrap_err();
        assert_eq!(f.kind, ErrorKind::FetchError);
        assert_eq!(f.code, "fetch.failed");
        assert!(f.report.is_some());
        let f = verify_catalog_url(&facade(), "http://a.example/", &CatalogFetch::default())
            .unwrap_err();
        assert_eq!(f.kind, ErrorKind::BadInput);
    }

    #[cfg(all(feature = "net", unix))]
    #[test]
    fn the_fleet_secret_is_checked_when_the_verifier_is_built() {
        use std::os::unix::fs::PermissionsExt;
        let dir =
            std::env::temp_dir().join(format!("agentsig-fleet-secret-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = |name: &str, secret: &[u8], mode: u32| {
            let p = dir.join(name);
            std::fs::write(&p, secret).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
            Some(p)
        };
        let build = |o: &VerifierOptions| o.clone().build(Some(network()));
        let mut o = with_key();
        assert!(build(&o).unwrap().key_cache().is_none());
        o.key_cache = Some("memory:".into());
        o.fleet_secret_file = file("short", &[7u8; 31], 0o600);
        let e = build(&o).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BadKey);
        assert!(e.message.contains("31 bytes"), "{}", e.message);
        o.fleet_secret_file = file("open", &[7u8; 32], 0o620);
        let e = build(&o).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BadKey);
        assert!(
            e.message.contains("open to its group or others"),
            "{}",
            e.message
        );
        o.fleet_secret_file = Some(dir.join("absent"));
        assert_eq!(build(&o).unwrap_err().code, "input.unreadable");
        o.fleet_secret_file = file("good", &[7u8; 32], 0o600);
        assert!(build(&o).unwrap().key_cache().is_some());
        o.key_cache = Some("ftp://store.example".into());
        assert_eq!(build(&o).unwrap_err().code, "usage");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn fetching_directories_needs_the_network() {
        let o = VerifierOptions {
            fetch_directories: true,
            ..Default::default()
        };
        assert_eq!(o.clone().build(None).unwrap_err().code, "usage");
        assert!(o.build(Some(network())).unwrap().web_bot_auth_keys());
    }
}
