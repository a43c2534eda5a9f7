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
    /// Accept a request or response with content whose signature does not
    /// cover `content-digest` (refused by default: anyone on the way could
    /// have changed the content; RFC 9421 section 7.2.8). The explicit
    /// waiver of the command line's `--allow-uncovered-content`
    /// ([`crate::httpsig::HttpPolicy::allow_uncovered_content`]); also
    /// for Web Bot Auth.
    pub allow_uncovered_content: bool,
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
    /// by the network layer when the verifier is built, each failure turned
    /// into an error by [`KeyCacheError::failure`].)
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
}

/// The fleet key-set cache a [`crate::facade::Network`] made for
/// `key_cache` (the `net` feature's `FleetCache`), opaque to the facade:
/// the network layer hands it to every fetcher it builds.
#[derive(Clone)]
pub struct KeyCache(pub std::sync::Arc<dyn std::any::Any + Send + Sync>);

impl std::fmt::Debug for KeyCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeyCache(..)")
    }
}

/// Why the network layer could not make the fleet key-set cache; the
/// facade turns each into the error a binding raises
/// ([`KeyCacheError::failure`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyCacheError {
    /// No secret file was named and the environment variable `var` is
    /// unset or empty.
    NoSecret {
        /// The variable.
        var: String,
    },
    /// The secret file could not be read (the message names it).
    Unreadable(String),
    /// The secret cannot be used: shorter than 32 bytes (the HMAC-SHA-256
    /// key length, RFC 2104 section 3), or in a file its group or others
    /// can write (whoever can replace it chooses the keys the fleet
    /// trusts).
    Unusable(String),
    /// The store URL names no store.
    Store(String),
}

impl KeyCacheError {
    /// The error a binding raises, the option names spelled its way:
    /// `usage` (BadInput) for no secret or an unknown store URL,
    /// `input.unreadable` (BadInput) for an unreadable secret file,
    /// `key.unusable` (BadKey) for a short secret or a secret file others
    /// can write.
    pub fn failure(self, s: Spelling) -> Failure {
        let what = s.name("key_cache");
        match self {
            KeyCacheError::NoSecret { var } => Failure::usage(format!(
                "{what} needs the fleet secret: give {} (a file of at least 32 bytes, mode 0600, \
                 the same on every verifier) or set {var}",
                s.name("fleet_secret_file")
            )),
            KeyCacheError::Unreadable(m) => Failure::bad_input("input.unreadable", m),
            KeyCacheError::Unusable(m) => Failure::bad_key(format!("{what}: {m}")),
            KeyCacheError::Store(m) => Failure::usage(format!("{what}: {m}")),
        }
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
    /// The fleet key-set cache the fetcher shares (`key_cache`).
    pub key_cache: Option<KeyCache>,
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

    #[test]
    fn key_cache_errors_name_the_cause_in_both_spellings() {
        use crate::facade::ErrorKind;
        let e = KeyCacheError::NoSecret {
            var: "AGENTSIG_FLEET_SECRET".into(),
        }
        .failure(Spelling::Camel);
        assert_eq!((e.kind, e.code.as_str()), (ErrorKind::BadInput, "usage"));
        assert!(
            e.message
                .starts_with("keyCache needs the fleet secret: give fleetSecretFile")
                && e.message.ends_with("or set AGENTSIG_FLEET_SECRET"),
            "{}",
            e.message
        );
        let e = KeyCacheError::Unusable("too short".into()).failure(Spelling::Snake);
        assert_eq!(
            (e.kind, e.message.as_str()),
            (ErrorKind::BadKey, "key_cache: too short")
        );
        let e = KeyCacheError::Unreadable("no such file".into()).failure(Spelling::Snake);
        assert_eq!(e.code, "input.unreadable");
        // Without a network there is no key cache.
        let mut o = with_key();
        o.key_cache = Some("memory:".into());
        let e = o.build(None).unwrap_err();
        assert_eq!(e.message, "key_cache needs the net feature");
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
