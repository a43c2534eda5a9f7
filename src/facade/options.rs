//! The options a binding fills to build a verifier, with secure defaults,
//! and the rules that bind them together.

use super::error::{Failure, Outcome};
use crate::trust::StaticKeys;
use crate::webbotauth::StaticDirectory;
use crate::Algorithm;

/// Most agents whose Web Bot Auth keys may be given in advance.
pub const MAX_AGENTS: usize = 1024;

/// How option names are spelled in messages: as the Python package spells
/// them (`fetch_directories=True`) or as the Node.js one does
/// (`fetchDirectories: true`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Spelling {
    /// `snake_case=value` (Python, Rust).
    #[default]
    Snake,
    /// `camelCase: value` (JavaScript).
    Camel,
}

impl Spelling {
    /// `name` (given in snake case) spelled this way.
    ///
    /// ```
    /// use agentsig::facade::Spelling;
    /// assert_eq!(Spelling::Camel.name("fetch_directories"), "fetchDirectories");
    /// assert_eq!(Spelling::Snake.name("fetch_directories"), "fetch_directories");
    /// ```
    pub fn name(self, name: &str) -> String {
        match self {
            Spelling::Snake => name.to_owned(),
            Spelling::Camel => {
                let mut out = String::with_capacity(name.len());
                let mut up = false;
                for c in name.chars() {
                    if c == '_' {
                        up = true;
                    } else if up {
                        out.extend(c.to_uppercase());
                        up = false;
                    } else {
                        out.push(c);
                    }
                }
                out
            }
        }
    }

    /// `name` set to true, as a caller writes it (`fetch_directories=True`,
    /// `fetchDirectories: true`).
    pub fn set_true(self, name: &str) -> String {
        match self {
            Spelling::Snake => format!("{name}=True"),
            Spelling::Camel => format!("{}: true", self.name(name)),
        }
    }
}

/// What a verifier is built from. [`Default`] is the secure setting: the
/// asymmetric algorithms only (a shared secret is never accepted unless
/// named), no replay store, the library's skew and signature age, the
/// system clock, Web Bot Auth off, the SSRF guard and the public TLS roots
/// on for any fetch.
///
/// ```
/// use agentsig::facade::VerifierOptions;
/// let key = agentsig::SigningKey::from_ed25519_seed(&[1u8; 32])?;
/// let mut o = VerifierOptions::default();
/// o.keys.add(key.verifying_key().clone(), agentsig::trust::KeySource::Pinned);
/// let v = o.build(None)?;
/// assert!(!v.web_bot_auth_keys());
/// assert!(!v.verifier().algorithms().iter().any(|a| a.is_symmetric()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct VerifierOptions {
    /// The trusted keys (pinned keys and JWK Sets).
    pub keys: StaticKeys,
    /// The algorithms accepted; `None`: every asymmetric one
    /// ([`crate::AllowList::asymmetric`]). An empty list is refused.
    pub algorithms: Option<Vec<Algorithm>>,
    /// The oldest a signature's `created` may be, seconds (RFC 9421
    /// section 7.2.5); also caps a Web Bot Auth signature's validity.
    pub max_age: Option<u64>,
    /// The clock skew tolerated, seconds (default: the library's).
    pub skew: Option<u64>,
    /// A replay store for nonces (`memory`, a file path, `redis://...`;
    /// RFC 9421 section 7.2.2), shared by RFC 9421 and Web Bot Auth.
    pub replay_store: Option<String>,
    /// Refuse ECDSA signatures with a high S.
    pub strict_low_s: bool,
    /// A fixed time (Unix seconds) in place of the system clock.
    pub now: Option<i64>,
    /// The Web Bot Auth agents allowed (their `Signature-Agent` URLs);
    /// `None`: any agent whose key set verifies.
    pub agents: Option<Vec<String>>,
    /// The Web Bot Auth key sets given per agent.
    pub agent_keys: Option<StaticDirectory>,
    /// Fetch Web Bot Auth key directories over HTTPS (exclusive with
    /// `agent_keys`).
    pub fetch_directories: bool,
    /// Require a directory's own response signature
    /// (draft-meunier-webbotauth-httpsig-protocol section 5.5); needs
    /// `fetch_directories`.
    pub require_directory_proof: bool,
    /// Hosts that may resolve to private addresses (tests, internal
    /// agents); needs `fetch_directories`.
    pub allow_private_hosts: Option<Vec<String>>,
    /// Extra TLS roots (PEM) for fetching; needs `fetch_directories`.
    pub extra_roots_pem: Option<Vec<String>>,
    /// The fleet key-set cache (`docs/fleet.md`): a store URL
    /// (`redis://...`, `redis+cluster://...`, `redis+sentinel://...`,
    /// `memory:`) shared by every verifier of a fleet, so that the fleet
    /// fetches an agent's key set once per freshness lifetime; used by every
    /// verification that fetches (Web Bot Auth directories, catalogs by
    /// URL). Needs the fleet secret.
    pub key_cache: Option<String>,
    /// The file holding the fleet secret that authenticates `key_cache`
    /// entries (at least 32 bytes, writable by its owner only); without
    /// it, the `AGENTSIG_FLEET_SECRET` environment variable. The secret is
    /// never an option value, so it stays out of argument lists and logs.
    pub fleet_secret_file: Option<std::path::PathBuf>,
    /// How option names are spelled in messages.
    pub spelling: Spelling,
}

impl VerifierOptions {
    /// Check the rules between options: keys of some kind are given,
    /// `agent_keys` and `fetch_directories` exclude each other, fetch
    /// settings need fetching, a fleet secret file needs a key cache, the
    /// algorithm list is not empty. (The secret itself is read and checked
    /// when the verifier is built.)
    ///
    /// # Errors
    /// `usage`, with the option names spelled as the caller spells them.
    pub fn check(&self) -> Outcome<()> {
        let s = self.spelling;
        let n = |x: &str| s.name(x);
        if self.agent_keys.is_some() && self.fetch_directories {
            return Err(Failure::usage(format!(
                "{} and {} are exclusive: keys given for an agent, or fetched from its directory",
                n("agent_keys"),
                s.set_true("fetch_directories")
            )));
        }
        if self.keys.is_empty() && self.agent_keys.is_none() && !self.fetch_directories {
            return Err(Failure::usage(format!(
                "a Verifier needs trusted keys: pass {} or {} (or, for Web Bot Auth only, {} or {})",
                n("jwks"),
                n("keys"),
                n("agent_keys"),
                s.set_true("fetch_directories")
            )));
        }
        if !self.fetch_directories
            && (self.require_directory_proof
                || self.allow_private_hosts.is_some()
                || self.extra_roots_pem.is_some())
        {
            return Err(Failure::usage(format!(
                "{}, {} and {} need {}",
                n("require_directory_proof"),
                n("allow_private_hosts"),
                n("extra_roots_pem"),
                s.set_true("fetch_directories")
            )));
        }
        if self.fleet_secret_file.is_some() && self.key_cache.is_none() {
            return Err(Failure::usage(format!(
                "{} is the secret of {}: give both",
                n("fleet_secret_file"),
                n("key_cache")
            )));
        }
        if self.algorithms.as_ref().is_some_and(Vec::is_empty) {
            return Err(Failure::usage("algorithms is empty"));
        }
        Ok(())
    }

    /// The fleet key-set cache of `key_cache`, its secret read from
    /// `fleet_secret_file` or else from `AGENTSIG_FLEET_SECRET`, as the
    /// command line's `--key-cache` and `--fleet-secret-file` do
    /// (`docs/fleet.md`). The store is not contacted: an unreachable store
    /// is reported when used and the origin asked instead.
    ///
    /// # Errors
    /// `usage` (BadInput) for no secret or an unknown store URL,
    /// `input.unreadable` (BadInput) for a secret file that cannot be read,
    /// `key.unusable` (BadKey) for a secret shorter than 32 bytes (the
    /// HMAC-SHA-256 key length, RFC 2104 section 3) or a secret file that
    /// its group or others can write (whoever can replace it chooses the
    /// keys the fleet trusts).
    #[cfg(feature = "net")]
    pub fn fleet_cache(&self) -> Outcome<Option<std::sync::Arc<crate::net::fleet::FleetCache>>> {
        use crate::net::fleet::{FleetCache, FleetSecret, FleetSecretError, FLEET_SECRET_ENV};
        let s = self.spelling;
        let Some(store) = &self.key_cache else {
            return Ok(None);
        };
        let what = s.name("key_cache");
        let secret = match &self.fleet_secret_file {
            Some(path) => FleetSecret::from_file(path),
            None => FleetSecret::from_env(FLEET_SECRET_ENV),
        }
        .map_err(|e| match e {
            FleetSecretError::Missing { .. } => Failure::usage(format!(
                "{what} needs the fleet secret: give {} (a file of at least 32 bytes, mode 0600, \
                 the same on every verifier) or set {FLEET_SECRET_ENV}",
                s.name("fleet_secret_file")
            )),
            FleetSecretError::Io { .. } => Failure::bad_input("input.unreadable", e.to_string()),
            _ => Failure::bad_key(format!("{what}: {e}")),
        })?;
        let fleet =
            FleetCache::open(store, &secret).map_err(|e| Failure::usage(format!("{what}: {e}")))?;
        Ok(Some(std::sync::Arc::new(fleet)))
    }
}

/// How to fetch Web Bot Auth key directories, from [`VerifierOptions`].
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct DirectoryFetch {
    /// Require a directory's own response signature.
    pub require_proof: bool,
    /// Hosts that may resolve to private addresses.
    pub allow_private_hosts: Vec<String>,
    /// Extra TLS roots (PEM).
    pub extra_roots_pem: Vec<String>,
    /// A fixed time (Unix seconds) for the directory client's checks.
    pub now: Option<i64>,
    /// The fleet key-set cache the directory fetcher shares
    /// ([`VerifierOptions::fleet_cache`]).
    #[cfg(feature = "net")]
    pub fleet: Option<std::sync::Arc<crate::net::fleet::FleetCache>>,
}

/// Add the Web Bot Auth keys of the agent `url` (its `Signature-Agent`
/// value: an origin, whose key directory is at the well-known path, or a
/// JWK Set URL) to `dir`. A key verifies only the agent it is given for:
/// the agent identity a verification reports is bound by its key set
/// (draft-meunier-webbotauth-httpsig-protocol section 5.2), never by the
/// `Signature-Agent` value alone.
///
/// # Errors
/// `usage` for a URL that names no agent, `key.unusable` for no key.
pub fn add_agent_keys(
    dir: &mut StaticDirectory,
    url: &str,
    keys: Vec<crate::VerifyingKey>,
    spelling: Spelling,
) -> Outcome<()> {
    let what = spelling.name("agent_keys");
    let agent = crate::webbotauth::resolve_agent_url(url, None)
        .map_err(|e| Failure::usage(format!("{what}: {e}")))?;
    if keys.is_empty() {
        return Err(Failure::bad_key(format!("{what}: no key for {url}")));
    }
    dir.insert(&agent.key_set_url, keys);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_key() -> VerifierOptions {
        let k = crate::SigningKey::from_ed25519_seed(&[2u8; 32]).unwrap();
        let mut o = VerifierOptions::default();
        o.keys
            .add(k.verifying_key().clone(), crate::trust::KeySource::Pinned);
        o
    }

    #[test]
    fn the_rules_between_options_in_both_spellings() {
        let none = VerifierOptions::default();
        let e = none.check().unwrap_err();
        assert_eq!(e.code, "usage");
        assert!(
            e.message.contains("fetch_directories=True"),
            "{}",
            e.message
        );
        let camel = VerifierOptions {
            spelling: Spelling::Camel,
            ..Default::default()
        };
        assert!(camel
            .check()
            .unwrap_err()
            .message
            .contains("agentKeys or fetchDirectories: true"));

        let mut o = with_key();
        assert!(o.check().is_ok());
        o.require_directory_proof = true;
        assert!(o
            .check()
            .unwrap_err()
            .message
            .contains("need fetch_directories"));
        o.fetch_directories = true;
        assert!(o.check().is_ok());
        o.agent_keys = Some(StaticDirectory::new());
        assert!(o.check().unwrap_err().message.contains("exclusive"));

        let mut o = with_key();
        o.fleet_secret_file = Some("/run/secrets/fleet".into());
        let e = o.check().unwrap_err();
        assert_eq!(
            (e.code.as_str(), e.message.as_str()),
            (
                "usage",
                "fleet_secret_file is the secret of key_cache: give both"
            )
        );
        o.spelling = Spelling::Camel;
        assert!(o
            .check()
            .unwrap_err()
            .message
            .starts_with("fleetSecretFile"));
        o.key_cache = Some("memory:".into());
        assert!(o.check().is_ok());

        let mut o = with_key();
        o.algorithms = Some(Vec::new());
        assert_eq!(o.check().unwrap_err().message, "algorithms is empty");
    }

    #[cfg(all(feature = "net", unix))]
    #[test]
    fn the_fleet_secret_is_checked_when_the_cache_is_made() {
        use crate::facade::ErrorKind;
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
        let mut o = with_key();
        assert!(o.fleet_cache().unwrap().is_none());
        o.key_cache = Some("memory:".into());
        o.fleet_secret_file = file("short", &[7u8; 31], 0o600);
        let e = o.fleet_cache().unwrap_err();
        assert_eq!(e.kind, ErrorKind::BadKey);
        assert!(e.message.contains("31 bytes"), "{}", e.message);
        o.fleet_secret_file = file("open", &[7u8; 32], 0o620);
        let e = o.fleet_cache().unwrap_err();
        assert_eq!(e.kind, ErrorKind::BadKey);
        assert!(
            e.message.contains("group- or world-writable"),
            "{}",
            e.message
        );
        o.fleet_secret_file = Some(dir.join("absent"));
        assert_eq!(o.fleet_cache().unwrap_err().code, "input.unreadable");
        o.fleet_secret_file = file("good", &[7u8; 32], 0o600);
        assert!(o.fleet_cache().unwrap().is_some());
        o.key_cache = Some("ftp://store.example".into());
        assert_eq!(o.fleet_cache().unwrap_err().code, "usage");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn agent_keys_need_an_agent_url_and_a_key() {
        let k = crate::SigningKey::from_ed25519_seed(&[2u8; 32]).unwrap();
        let mut d = StaticDirectory::new();
        let vk = vec![k.verifying_key().clone()];
        assert!(
            add_agent_keys(&mut d, "https://agent.example", vk.clone(), Spelling::Snake).is_ok()
        );
        let e = add_agent_keys(&mut d, "https://agent.example", Vec::new(), Spelling::Camel)
            .unwrap_err();
        assert_eq!(
            (e.code.as_str(), e.message.as_str()),
            (
                "key.unusable",
                "agentKeys: no key for https://agent.example"
            )
        );
        assert_eq!(
            add_agent_keys(&mut d, "not a url", vk, Spelling::Snake)
                .unwrap_err()
                .code,
            "usage"
        );
    }
}
