//! Web Bot Auth: the RFC 9421 profile by which AI agents and crawlers sign
//! their requests (`draft-ietf-webbotauth-httpsig-protocol-00`, the same
//! text as `draft-meunier-webbotauth-httpsig-protocol-02`).
//!
//! * Signing (section 5.2): `tag="web-bot-auth"`, `created`, `expires`,
//!   `keyid` = the RFC 7638 thumbprint of the key, and the covered
//!   components `@authority` and `"signature-agent";key="<label>"` (plus
//!   `@method` and `@path` by default, and `content-digest` on request).
//!   [`sign_request`] signs an `http::Request` in one call; [`sign_message`]
//!   signs agentsig's own [`Message`] model.
//! * `Signature-Agent` (section 5.2.1): an RFC 9651 Dictionary whose
//!   members are Strings holding an `https` URI ([`SignatureAgent`]). The
//!   legacy sf-string form that deployed agents still send
//!   (`Signature-Agent: "https://chatgpt.com"`) is read as a one-member
//!   dictionary keyed by the covering signature's label.
//! * Verifying (section 5.4): [`WebBotAuthVerifier::verify`] takes the
//!   key sets from a [`KeyDirectory`] (an in-memory one,
//!   [`StaticDirectory`], or the fetching one of
//!   `crate::net::webbotauth`) and reports, per label, the verified agent
//!   identity (the resolved key-set URL) or exactly why not.
//! * The key directory and its response signature (section 5.5, Appendix
//!   B): [`directory`].
//!
//! # Security contract
//! * A signature is attributed only to the `Signature-Agent` member it
//!   covers (section 5.4): the member named by its covered
//!   `"signature-agent";key=...` component, never another.
//! * Keys are looked up by the (key-set URL, keyid) pair, and the keyid is
//!   matched against the RFC 7638 thumbprint computed from the key, never
//!   against a `kid` the directory claims.
//! * The algorithm comes from the key (its JWK `kty`/`crv`/`alg`), never
//!   from the signature's `alg` alone; HMAC is refused (section 6.4).
//! * `created`, `expires`, `keyid` and `tag` are required; `expires -
//!   created` is bounded ([`Policy::max_validity`], 1 h by default:
//!   [`DEFAULT_MAX_VALIDITY`]).
//! * A `nonce` is checked against the replay store when one is given (RFC
//!   9421 section 7.2.2); the server gates attach an in-process store by
//!   default. [`Policy::strict`] also requires `@method`, `@path` and a
//!   `nonce`, so that a captured signature is single-use and good for one
//!   request only.
//! * With [`Policy::authorities`] set, the covered authority must be one the
//!   site serves (RFC 9421 section 7.2.1), whatever `Host` says.
//! * The agent identity is the origin the keys are fetched from:
//!   [`resolve_agent_url`] refuses any value a WHATWG URL parser (the
//!   fetcher's) would read as another origin than its text says.

pub mod directory;
pub mod signature_key;

use crate::alg::{Algorithm, AllowList};
use crate::httpsig::components::{ComponentId, Derived};
use crate::httpsig::message::Message;
use crate::httpsig::{HttpPolicy, SigError, SignError, SignatureSpec, Signed};
use crate::keys::{SigningKey, VerifyingKey};
use crate::replay::ReplayStore;
use crate::sfv::{self, BareItem, Entry};
use crate::trust::{KeyRequest, KeyResolver, KeySource, ResolveError, TrustedKey};
use std::sync::Arc;

/// The `tag` of a request signature (section 5.2).
pub const TAG: &str = "web-bot-auth";
/// The `tag` of a directory response signature (Appendix B.1).
pub const DIRECTORY_TAG: &str = "http-message-signatures-directory";
/// The well-known path of the key directory (section 5.5).
pub const WELL_KNOWN_PATH: &str = "/.well-known/http-message-signatures-directory";
/// The media type of the key directory (section 5.5.1).
pub const MEDIA_TYPE: &str = "application/http-message-signatures-directory+json";
/// The `Signature-Agent` field name (section 5.2.1), lowercase.
pub const SIGNATURE_AGENT: &str = "signature-agent";
/// Default lifetime of a request signature: 5 minutes.
pub const DEFAULT_LIFETIME: u64 = 300;
/// Longest lifetime a signer gives: `expires` SHOULD be at most 24 hours
/// after `created` (section 5.2).
pub const MAX_LIFETIME: u64 = 24 * 3600;
/// The longest `expires - created` a verifier accepts by default
/// ([`Policy::max_validity`]): 1 hour. The profile allows up to 24 hours
/// (section 5.2), but a signature without a nonce (or checked without a
/// replay store) can be replayed by whoever captured it until it expires
/// (RFC 9421 section 7.2.2), so a gate keeps that window short; deployed
/// agents sign with lifetimes of 1 hour at most (OpenAI's agent signs for
/// 1 hour), so a shorter bound would refuse them.
pub const DEFAULT_MAX_VALIDITY: u64 = 3600;
/// Largest `Signature-Agent` field read, in bytes.
pub const MAX_SIGNATURE_AGENT_FIELD: usize = 8 * 1024;
/// Most `Signature-Agent` members read.
pub const MAX_MEMBERS: usize = 16;
/// Most distinct key sets (directories or JWK Sets) one request may make a
/// verifier consult: each may be a fetch, made before any signature is
/// checked, so a request with many labels naming many agents must not cost
/// a fetch each.
pub const MAX_KEY_SETS_PER_REQUEST: usize = 2;
/// Longest agent URL accepted.
pub const MAX_URL_LEN: usize = 2048;
/// Bytes of randomness in a generated `nonce` (64, as the drafts' vectors).
pub const NONCE_BYTES: usize = 64;

/// Why a Web Bot Auth message could not be signed or verified; [`Error::code`]
/// is stable and distinct per cause.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The request carries no signature with `tag="web-bot-auth"`.
    #[error("the request carries no web-bot-auth signature")]
    NoSignature,
    /// `Signature-Input` or `Signature` is malformed (RFC 9421 section 4).
    #[error("malformed signature fields: {0}")]
    Header(String),
    /// The signature covers `signature-agent` but the request has no
    /// `Signature-Agent` field, or the signature covers none at all.
    #[error("the request has no Signature-Agent field (required on every signed request, section 5.2.1)")]
    SignatureAgentMissing,
    /// `Signature-Agent` is neither an RFC 9651 Dictionary nor the legacy
    /// sf-string, or is too large.
    #[error("the Signature-Agent field is malformed: {0}")]
    SignatureAgentMalformed(String),
    /// The signature does not cover its `Signature-Agent` member
    /// (`"signature-agent";key="<member>"`), so no agent can be attributed
    /// to it (section 5.4).
    #[error("signature {0:?} does not cover a Signature-Agent member")]
    SignatureAgentNotCovered(String),
    /// The covered member key is not in the `Signature-Agent` Dictionary.
    #[error("Signature-Agent has no member {0:?}, which the signature covers")]
    MemberMissing(String),
    /// The member value is not an absolute `https` URI (section 5.2.1).
    #[error("agent URL {0:?} is not a usable https URL")]
    AgentUrl(String),
    /// The member has a `type` this verifier does not resolve (`cimd`, or
    /// unknown: section 5.2.1 says to ignore it, never to guess).
    #[error("Signature-Agent member type {0:?} is not supported")]
    MemberType(String),
    /// The agent's origin is not on the policy's allow-list.
    #[error("agent {0:?} is not on the allow-list")]
    AgentNotAllowed(String),
    /// `expires - created` is longer than [`Policy::max_validity`].
    #[error("the signature is valid for {lifetime} s, more than the {max} s allowed")]
    ValidityTooLong {
        /// `expires - created`, seconds.
        lifetime: i64,
        /// The policy's bound.
        max: u64,
    },
    /// The request did not arrive over TLS (section 5.4: verifiers SHOULD
    /// refuse signatures on non-TLS requests); holds the scheme.
    #[error("the request was received over {0}, not https")]
    NotTls(String),
    /// The key is one of the RFC 9421 Appendix B test keys, which MUST NOT
    /// be used in production and which verifiers SHOULD reject (section 5.2);
    /// holds its thumbprint.
    #[error("key {0} is an RFC 9421 test key")]
    TestKey(String),
    /// The key set could not be obtained or is not acceptable.
    #[error("{0}")]
    Directory(#[from] DirectoryError),
    /// The key set has no key whose thumbprint is the signature's keyid.
    #[error("the key set {url} has no key with thumbprint {keyid:?}")]
    UnknownKey {
        /// The key-set URL.
        url: String,
        /// The signature's keyid.
        keyid: String,
    },
    /// RFC 9421 verification of the label failed (bad signature, expired,
    /// wrong tag, missing parameter, replay, ...).
    #[error("{0}")]
    Signature(SigError),
    /// Signing failed.
    #[error("{0}")]
    Sign(String),
}

impl Error {
    /// A short stable code for reports.
    pub fn code(&self) -> &'static str {
        match self {
            Error::NoSignature => "no-web-bot-auth-signature",
            Error::Header(_) => "malformed-signature-fields",
            Error::SignatureAgentMissing => "signature-agent-missing",
            Error::SignatureAgentMalformed(_) => "signature-agent-malformed",
            Error::SignatureAgentNotCovered(_) => "signature-agent-not-covered",
            Error::MemberMissing(_) => "signature-agent-member-missing",
            Error::AgentUrl(_) => "agent-url-invalid",
            Error::MemberType(_) => "agent-type-unsupported",
            Error::AgentNotAllowed(_) => "agent-not-allowed",
            Error::ValidityTooLong { .. } => "validity-too-long",
            Error::NotTls(_) => "request-not-tls",
            Error::TestKey(_) => "test-key",
            Error::Directory(d) => d.code(),
            Error::UnknownKey { .. } => "unknown-key",
            Error::Signature(s) => s.code(),
            Error::Sign(_) => "sign-failed",
        }
    }
}

/// Why a key set (directory or JWK Set) is unusable; [`DirectoryError::code`]
/// is stable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DirectoryError {
    /// The fetch failed (connection, DNS, TLS, SSRF refusal).
    #[error("fetching {url} failed: {message}")]
    Fetch {
        /// The key-set URL.
        url: String,
        /// What failed.
        message: String,
    },
    /// The fetch was refused by the SSRF guard (not https, internal address).
    #[error("fetching {url} refused: {message}")]
    Refused {
        /// The key-set URL.
        url: String,
        /// Why.
        message: String,
    },
    /// The directory answered a redirect: discovery requires a 200 and MUST
    /// NOT follow redirects (section 5.5).
    #[error("{0} answered a redirect; key discovery does not follow redirects")]
    Redirect(String),
    /// A status other than 200.
    #[error("{url} answered HTTP {status}, not 200")]
    Status {
        /// The key-set URL.
        url: String,
        /// The status.
        status: u16,
    },
    /// The body is larger than the fetch limit.
    #[error("the key set at {0} is too large")]
    TooLarge(String),
    /// No complete answer within the fetch's own deadline: the directory
    /// was given the fetcher's full time and did not answer in it.
    #[error("no complete answer from {0} within the fetch's own deadline")]
    Timeout(String),
    /// The key set was not fetched to the end because the deadline of the
    /// verification in progress ran out first (a deadline the caller set,
    /// spent before or during this fetch). It says nothing of the
    /// directory, so it is neither remembered nor shared.
    #[error("{url} was not fetched to the end: {deadline} ran out first")]
    DeadlineSpent {
        /// The key-set URL.
        url: String,
        /// The deadline that ran out, in words.
        deadline: String,
    },
    /// The well-known directory is not served as
    /// `application/http-message-signatures-directory+json` (section 5.5.1).
    #[error("{url} is served as {got:?}, not {MEDIA_TYPE}")]
    MediaType {
        /// The key-set URL.
        url: String,
        /// The Content-Type received.
        got: String,
    },
    /// The body is not a JWK Set.
    #[error("the key set at {url} is malformed: {message}")]
    Malformed {
        /// The key-set URL.
        url: String,
        /// Why.
        message: String,
    },
    /// More keys than [`directory::MAX_KEYS`].
    #[error("the key set at {0} lists too many keys")]
    TooManyKeys(String),
    /// A directory key's `kid` differs from its RFC 7638 thumbprint
    /// (section 5.5.1: it MUST equal the thumbprint).
    #[error("the directory at {url} lists key {thumbprint} under kid {kid:?}")]
    KidMismatch {
        /// The key-set URL.
        url: String,
        /// The `kid` claimed.
        kid: String,
        /// The thumbprint of the key.
        thumbprint: String,
    },
    /// The directory's own response signature does not verify (Appendix B).
    #[error("the directory response signature of {url} does not verify: {message}")]
    BadDirectorySignature {
        /// The key-set URL.
        url: String,
        /// Why.
        message: String,
    },
    /// The directory has no response signature and the policy requires one.
    #[error("the directory at {0} carries no response signature")]
    DirectorySignatureMissing(String),
    /// No key set is known for this URL (an offline [`StaticDirectory`]).
    #[error("no key set is known for {0}")]
    NotKnown(String),
    /// The request names more key sets than
    /// [`MAX_KEY_SETS_PER_REQUEST`]: the further ones are not consulted
    /// (each may cost a fetch, and nothing is verified yet).
    #[error("{0}: more than {MAX_KEY_SETS_PER_REQUEST} key sets named by one request")]
    TooManyKeySets(String),
    /// The key set is not being fetched: the verifier already has its most
    /// key-set fetches in progress at once (`DirectoryClient::max_fetches`),
    /// and a verification needing one more fails at once rather than
    /// queueing behind directories that may never answer.
    #[error("{0} was not fetched: the verifier has its most key-set fetches in progress; try again shortly")]
    Busy(String),
    /// The directory lists the key, but no directory response signature
    /// made by that key (Appendix B.1) came with it, and the client
    /// requires every key used to prove the directory
    /// (`DirectoryClient::require_proof`): a proof by another key of the
    /// same directory does not vouch for this one.
    #[error("the directory at {url} carries no response signature by key {keyid}, which the client requires of every key it uses")]
    KeyNotProven {
        /// The key-set URL.
        url: String,
        /// The key's thumbprint (the signature's keyid).
        keyid: String,
    },
}

impl DirectoryError {
    /// Whether the key set could not be obtained at all (the fetch failed,
    /// was refused by the SSRF guard, redirected, answered another status,
    /// was too large, ran out of time, or the verifier had no fetch free):
    /// nothing is known of the signature, which is not checked, rather
    /// than a key set that was obtained and is unusable.
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            DirectoryError::Fetch { .. }
                | DirectoryError::Refused { .. }
                | DirectoryError::Redirect(_)
                | DirectoryError::Status { .. }
                | DirectoryError::TooLarge(_)
                | DirectoryError::Timeout(_)
                | DirectoryError::DeadlineSpent { .. }
                | DirectoryError::Busy(_)
        )
    }

    /// A short stable code for reports.
    pub fn code(&self) -> &'static str {
        match self {
            DirectoryError::Fetch { .. } => "directory-fetch-failed",
            DirectoryError::Refused { .. } => "directory-refused",
            DirectoryError::Redirect(_) => "directory-redirect",
            DirectoryError::Status { .. } => "directory-status",
            DirectoryError::TooLarge(_) => "directory-too-large",
            DirectoryError::Timeout(_) | DirectoryError::DeadlineSpent { .. } => {
                "directory-timeout"
            }
            DirectoryError::MediaType { .. } => "directory-media-type",
            DirectoryError::Malformed { .. } => "directory-malformed",
            DirectoryError::TooManyKeys(_) => "directory-too-many-keys",
            DirectoryError::KidMismatch { .. } => "directory-kid-mismatch",
            DirectoryError::BadDirectorySignature { .. } => "directory-signature-invalid",
            DirectoryError::DirectorySignatureMissing(_) => "directory-signature-missing",
            DirectoryError::NotKnown(_) => "directory-unknown",
            DirectoryError::TooManyKeySets(_) => "too-many-key-sets",
            DirectoryError::Busy(_) => "directory-busy",
            DirectoryError::KeyNotProven { .. } => "directory-key-not-proven",
        }
    }
}

/// How a `Signature-Agent` value is to be resolved into a key set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Discovery {
    /// An origin: the key set is the directory at
    /// `<origin>/.well-known/http-message-signatures-directory`, served with
    /// [`MEDIA_TYPE`] (WG-00 `type=directory`, the default).
    Directory,
    /// A URL with a path, or `type=jwks_uri`: the value is itself the JWK
    /// Set URL (WG-00 `jwks_uri`; every value in the editor's copy).
    JwksUri,
}

/// Whether a fetched key set's `Content-Type` is one its discovery admits
/// (section 5.5): the directory media type ([`MEDIA_TYPE`]) at a
/// well-known directory; that, `application/jwk-set+json` (RFC 7517
/// section 8.5.2) or `application/json` at a JWK Set URL. Parameters and
/// case are ignored (RFC 9110 section 8.3.1).
pub fn media_type_accepted(discovery: Discovery, content_type: &str) -> bool {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match discovery {
        Discovery::Directory => essence == MEDIA_TYPE,
        Discovery::JwksUri => {
            essence == MEDIA_TYPE
                || essence == "application/jwk-set+json"
                || essence == "application/json"
        }
    }
}

/// Whether the allow-list entry `allowed` admits the resolved agent `url`.
/// An origin admits that origin's well-known directory only (whose keys
/// carry `kid` = thumbprint and the directory's own proof); a key set at
/// any other URL on the origin (`type=jwks_uri`, or a value with a path)
/// must be listed by its exact URL, since anyone who can put a JSON file
/// under the origin could otherwise stand in for the agent.
fn agent_allowed(allowed: &str, url: &AgentUrl) -> bool {
    let Ok(a) = resolve_agent_url(allowed, None) else {
        return false;
    };
    match url.discovery {
        Discovery::Directory => a.origin() == url.origin(),
        Discovery::JwksUri => a.key_set_url == url.key_set_url,
    }
}

/// A `Signature-Agent` member resolved to the URL of its key set.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AgentUrl {
    /// The member value as sent (`https://agent.example`).
    pub value: String,
    /// The normalised agent identifier: lowercase scheme and host, no
    /// default port, no query (RFC 3986 sections 6.2.2 and 6.2.3).
    pub agent: String,
    /// The URL the key set is fetched from.
    pub key_set_url: String,
    /// How it resolves.
    pub discovery: Discovery,
}

impl AgentUrl {
    /// The agent's origin, `https://host[:port]`.
    pub fn origin(&self) -> &str {
        let rest = self.agent.strip_prefix("https://").unwrap_or(&self.agent);
        let cut = rest.find('/').unwrap_or(rest.len());
        self.agent
            .get(..self.agent.len() - rest.len() + cut)
            .unwrap_or(&self.agent)
    }
}

/// Resolve a `Signature-Agent` value (and its optional WG-00 `type`) into a
/// key-set URL. An origin (no path, or `/`) resolves to its well-known
/// directory; any other `https` URL (or `type=jwks_uri`) is the JWK Set URL
/// itself, which also reads the editor's copy's "every value is a JWKS URI"
/// for values with a path.
///
/// The agent identity reported ([`AgentUrl::agent`]) must be the origin the
/// keys are fetched from. The fetcher parses URLs as the WHATWG URL Standard
/// does (section 4.3, the basic URL parser: `\` read as `/`, percent-decoding
/// and IPv4 parsing of the host, dot segments removed from the path), so
/// `https://attacker.example\.victim.example` is fetched from
/// `attacker.example`. This function accepts only values whose text *is*
/// their parsed URL: it refuses every form a WHATWG parser would read
/// differently, so the identity it reports and the origin the keys come
/// from are one, with or without feature `net`.
///
/// # Errors
/// [`Error::AgentUrl`] (holding the first 128 characters of `value`) when `value` is longer than
/// [`MAX_URL_LEN`], is not ASCII or holds a space or control character, is not `https://...` (the
/// scheme in any case), has a fragment, holds a `\` or a character the WHATWG parser would
/// percent-encode (`"`, `'`, `<`, `>`, `` ` ``, `{`, `}`), or a `.` or `..` path segment (in
/// any spelling); or has an authority that is empty, carries userinfo (`@`) or a `%`, is an IP
/// literal in brackets, has a host that is not dot-separated labels of letters, digits, `-`
/// and `_` (an empty label, a trailing dot), that ends in a number without being a dotted-decimal
/// IPv4 address in canonical form, or has a port that is empty, not digits, has a leading zero,
/// or is not 1 to 65535; also when `kind` is `directory` and `value` is not an origin (it has a
/// path other than `/`, or a query).
/// [`Error::MemberType`] when `kind` is another type than `directory` or `jwks_uri`.
pub fn resolve_agent_url(value: &str, kind: Option<&str>) -> Result<AgentUrl, Error> {
    let bad = || Error::AgentUrl(value.chars().take(128).collect());
    if value.len() > MAX_URL_LEN
        || !value.is_ascii()
        || value.bytes().any(|b| b <= b' ' || b == 0x7f)
    {
        return Err(bad());
    }
    let (scheme, rest) = value.split_once("://").ok_or_else(bad)?;
    if !scheme.eq_ignore_ascii_case("https") {
        return Err(bad());
    }
    // WHATWG URL Standard section 4.3: `\` is a path separator in a special
    // URL, and these characters are percent-encoded in a path or query, so
    // the fetched URL would differ from the text.
    if rest.contains(['#', '\\', '"', '\'', '<', '>', '`', '{', '}']) {
        return Err(bad());
    }
    let auth_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let authority = &rest[..auth_end];
    let path_query = &rest[auth_end..];
    let host = canonical_authority(authority).ok_or_else(bad)?;
    let (path, query) = match path_query.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (path_query, None),
    };
    // Dot segments are removed by the parser (WHATWG URL Standard section
    // 4.3, path state; RFC 3986 section 5.2.4), `%2e` being a dot.
    if path.split('/').any(is_dot_segment) {
        return Err(bad());
    }
    let origin = ["https://", host.as_str()].concat();
    let is_origin = (path.is_empty() || path == "/") && query.is_none();
    let discovery = match kind {
        None | Some("directory") if is_origin => Discovery::Directory,
        None => Discovery::JwksUri,
        Some("directory") => return Err(bad()),
        Some("jwks_uri") => Discovery::JwksUri,
        Some(other) => return Err(Error::MemberType(other.to_owned())),
    };
    let agent = [origin.as_str(), if path == "/" { "" } else { path }].concat();
    let key_set_url = match discovery {
        Discovery::Directory => [origin.as_str(), WELL_KNOWN_PATH].concat(),
        // An empty path is serialized as `/` (WHATWG URL Standard section 4.5).
        Discovery::JwksUri if path.is_empty() => [origin.as_str(), "/", path_query].concat(),
        Discovery::JwksUri => [origin.as_str(), path_query].concat(),
    };
    Ok(AgentUrl {
        value: value.to_owned(),
        agent,
        key_set_url,
        discovery,
    })
}

/// Whether a path segment is a dot segment once `%2e` (any case) is read
/// as a dot (WHATWG URL Standard section 4.3, single- and double-dot URL
/// path segments): one or two parts, each `.` or `%2e`.
fn is_dot_segment(seg: &str) -> bool {
    let dot = |b: &[u8]| b == b"." || b.eq_ignore_ascii_case(b"%2e");
    let b = seg.as_bytes();
    dot(b) || (1..b.len()).any(|i| dot(&b[..i]) && dot(&b[i..]))
}

/// The authority of an agent URL as the WHATWG URL Standard (section 3.5,
/// host parsing; section 4.3, port state) serializes it: lowercase host,
/// no default port. `None` for any authority the parser would read as
/// another host or port than its text, or refuse: userinfo, `%`, an IP
/// literal in brackets, an empty label or trailing dot, a host ending in a
/// number that is not a canonical dotted-decimal IPv4 address (the parser
/// reads `0x7f.1` or `2130706433` as `127.0.0.1`), a port with a leading
/// zero, empty, or out of 1 to 65535.
fn canonical_authority(authority: &str) -> Option<String> {
    if authority.contains(['@', '%', '[', ']']) {
        return None;
    }
    let lower = authority.to_ascii_lowercase();
    let (host, port) = match lower.split_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (lower.as_str(), None),
    };
    let labels: Vec<&str> = host.split('.').collect();
    if host.len() > 253
        || labels.iter().any(|l| {
            l.is_empty()
                || l.len() > 63
                || !l
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
    {
        return None;
    }
    // WHATWG URL Standard section 3.5, "ends in a number": the last label
    // all digits, or 0x followed by hex digits, makes the host IPv4.
    let last = labels.last().copied().unwrap_or_default();
    let numeric = last.bytes().all(|b| b.is_ascii_digit())
        || last
            .strip_prefix("0x")
            .is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
    if numeric {
        let canonical = labels.len() == 4
            && labels.iter().all(|l| {
                l.bytes().all(|b| b.is_ascii_digit())
                    && (*l == "0" || !l.starts_with('0'))
                    && l.parse::<u8>().is_ok()
            });
        if !canonical {
            return None;
        }
    }
    match port {
        None => Some(host.to_owned()),
        Some(p) => {
            let n = p.parse::<u16>().ok()?;
            if n == 0 || p.starts_with('0') || !p.bytes().all(|b| b.is_ascii_digit()) {
                None
            } else if n == 443 {
                Some(host.to_owned())
            } else {
                Some(format!("{host}:{n}"))
            }
        }
    }
}

/// One `Signature-Agent` member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// The Dictionary key; `None` for the legacy sf-string form.
    pub key: Option<String>,
    /// The member value (a URI).
    pub value: String,
    /// The WG-00 `type` parameter (a Token), when present.
    pub kind: Option<String>,
}

/// A parsed `Signature-Agent` field (section 5.2.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureAgent {
    /// The members, in order.
    pub members: Vec<Member>,
    /// Whether the field was the legacy sf-string form.
    pub legacy: bool,
}

impl SignatureAgent {
    /// Parse the field from its lines (joined with `, ` as RFC 9110 section
    /// 5.3 combines them). A value that starts with `"` is the legacy
    /// sf-string form; anything else must be an RFC 9651 Dictionary whose
    /// members are Strings.
    ///
    /// # Errors
    /// [`Error::SignatureAgentMalformed`] when the joined field is larger than
    /// [`MAX_SIGNATURE_AGENT_FIELD`]; when a value starting with `"` is not one sf-string Item;
    /// when any other value is not an RFC 9651 Dictionary, repeats a member key, has more than
    /// [`MAX_MEMBERS`] members, or has a member that is an Inner List or not a String. The member
    /// values are not checked here (see [`resolve_agent_url`]).
    pub fn parse(lines: &[&[u8]]) -> Result<SignatureAgent, Error> {
        let joined = lines.join(&b", "[..]);
        if joined.len() > MAX_SIGNATURE_AGENT_FIELD {
            return Err(Error::SignatureAgentMalformed(
                "the field is too large".into(),
            ));
        }
        let trimmed = trim_ascii(&joined);
        if trimmed.first() == Some(&b'"') {
            let item = sfv::parse_item(trimmed)
                .map_err(|e| Error::SignatureAgentMalformed(e.to_string()))?;
            let BareItem::String(value) = item.bare else {
                return Err(Error::SignatureAgentMalformed("not a String".into()));
            };
            return Ok(SignatureAgent {
                members: vec![Member {
                    key: None,
                    value,
                    kind: None,
                }],
                legacy: true,
            });
        }
        let d = sfv::parse_dictionary_raw(trimmed)
            .map_err(|e| Error::SignatureAgentMalformed(e.to_string()))?;
        if d.first_duplicate().is_some() {
            return Err(Error::SignatureAgentMalformed(
                "a member key is repeated".into(),
            ));
        }
        if d.0.len() > MAX_MEMBERS {
            return Err(Error::SignatureAgentMalformed("too many members".into()));
        }
        let mut members = Vec::new();
        for (k, e) in d.0 {
            let Entry::Item(it) = e else {
                return Err(Error::SignatureAgentMalformed(format!(
                    "member {k:?} is an Inner List"
                )));
            };
            let BareItem::String(value) = it.bare else {
                return Err(Error::SignatureAgentMalformed(format!(
                    "member {k:?} is not a String"
                )));
            };
            let kind = it
                .params
                .iter()
                .find(|(n, _)| n == "type")
                .and_then(|(_, v)| match v {
                    BareItem::Token(t) => Some(t.clone()),
                    _ => None,
                });
            members.push(Member {
                key: Some(k),
                value,
                kind,
            });
        }
        Ok(SignatureAgent {
            members,
            legacy: false,
        })
    }

    /// Read the field of a message; `Ok(None)` when it is absent.
    ///
    /// # Errors
    /// As [`SignatureAgent::parse`], when the field is present.
    pub fn from_message(msg: &Message) -> Result<Option<SignatureAgent>, Error> {
        let lines: Vec<&[u8]> = msg.field_lines(SIGNATURE_AGENT, false).collect();
        if lines.is_empty() {
            return Ok(None);
        }
        SignatureAgent::parse(&lines).map(Some)
    }

    /// The member with this Dictionary key.
    pub fn member(&self, key: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.key.as_deref() == Some(key))
    }

    /// Serialise one member as the Dictionary form signers MUST send:
    /// `label="https://agent.example"` (section 5.2.1).
    ///
    /// # Errors
    /// [`Error::Sign`] when `label` is not a valid label (an sf-key of 1 to
    /// [`MAX_LABEL`](crate::httpsig::MAX_LABEL) characters); [`Error::AgentUrl`] when `url` holds
    /// a character an sf-string cannot carry (anything but printable ASCII). `url` is not
    /// otherwise checked (see [`resolve_agent_url`]).
    pub fn serialize_member(label: &str, url: &str) -> Result<String, Error> {
        if !crate::httpsig::valid_label(label) {
            return Err(Error::Sign(format!("{label:?} is not a valid label")));
        }
        if !sfv::is_sf_string(url) {
            return Err(Error::AgentUrl(url.chars().take(128).collect()));
        }
        let mut out = format!("{label}=");
        sfv::write_bare(&mut out, &BareItem::String(url.to_owned()));
        Ok(out)
    }
}

fn trim_ascii(b: &[u8]) -> &[u8] {
    let start = b
        .iter()
        .position(|c| *c != b' ' && *c != b'\t')
        .unwrap_or(b.len());
    let end = b
        .iter()
        .rposition(|c| *c != b' ' && *c != b'\t')
        .map_or(start, |e| e + 1);
    &b[start..end]
}

/// What to sign with, besides the key.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SignOptions {
    /// The agent URL written to `Signature-Agent` (an `https` origin, or a
    /// JWK Set URL).
    pub signature_agent: String,
    /// The signature label, also the `Signature-Agent` member key.
    pub label: String,
    /// `created`, seconds since the Unix epoch.
    pub created: i64,
    /// `expires - created`, seconds: at most [`MAX_LIFETIME`].
    pub lifetime: u64,
    /// Also cover `@method` and `@path` (default true).
    pub method_and_path: bool,
    /// Cover `content-digest` (adding the field when absent) when the
    /// request has a body (default true: a verifier with the default
    /// [`Policy::require_content_digest`] refuses content left uncovered).
    pub content_digest: bool,
    /// The `nonce`; `None` draws [`NONCE_BYTES`] random bytes (standard
    /// base64, as the drafts' vectors).
    pub nonce: Option<String>,
    /// Send no `nonce` at all.
    pub no_nonce: bool,
}

impl SignOptions {
    /// Defaults: label `sig1`, 5 minutes, `@method` and `@path` covered,
    /// `content-digest` covered when there is a body, a fresh nonce.
    pub fn new(signature_agent: impl Into<String>, created: i64) -> SignOptions {
        SignOptions {
            signature_agent: signature_agent.into(),
            label: "sig1".into(),
            created,
            lifetime: DEFAULT_LIFETIME,
            method_and_path: true,
            content_digest: true,
            nonce: None,
            no_nonce: false,
        }
    }
}

/// A fresh `nonce`: [`NONCE_BYTES`] random bytes in standard base64.
///
/// # Errors
/// [`Error::Sign`] when the system random number generator fails.
pub fn fresh_nonce() -> Result<String, Error> {
    use ring::rand::SecureRandom;
    let mut b = [0u8; NONCE_BYTES];
    ring::rand::SystemRandom::new()
        .fill(&mut b)
        .map_err(|_| Error::Sign("no system randomness".into()))?;
    Ok(crate::b64::encode_std(&b))
}

/// The `"signature-agent";key="<member>"` component.
///
/// # Errors
/// [`Error::Sign`] when `member` holds a character an sf-string cannot carry (anything but
/// printable ASCII).
pub fn signature_agent_component(member: &str) -> Result<ComponentId, Error> {
    let mut s = String::from("\"signature-agent\";key=");
    sfv::write_bare(&mut s, &BareItem::String(member.to_owned()));
    ComponentId::parse(&s).map_err(|e| Error::Sign(e.to_string()))
}

/// The signature specification of the profile for `msg` (section 5.2).
///
/// # Errors
/// [`Error::Sign`] when `key` is a shared secret (HMAC, section 6.4); when `o.lifetime` is 0 or
/// more than [`MAX_LIFETIME`]; when `o.label` holds a character other than printable ASCII; or
/// when a nonce is to be drawn ([`SignOptions::nonce`] is `None` and [`SignOptions::no_nonce`]
/// is false) and the system random number generator fails. The label's syntax, the nonce's
/// characters and the sign of `o.created` are checked only when signing ([`sign_message`]).
pub fn signature_spec(
    msg: &Message,
    key: &SigningKey,
    o: &SignOptions,
) -> Result<SignatureSpec, Error> {
    if key.algorithm().is_symmetric() {
        return Err(Error::Sign(
            "Web Bot Auth forbids shared-secret (HMAC) keys (section 6.4)".into(),
        ));
    }
    if o.lifetime == 0 || o.lifetime > MAX_LIFETIME {
        return Err(Error::Sign(format!(
            "the lifetime must be 1 s to {MAX_LIFETIME} s (24 h)"
        )));
    }
    let mut spec = SignatureSpec::new(o.label.clone());
    if o.method_and_path {
        spec = spec.component(ComponentId::derived(Derived::Method));
    }
    spec = spec.component(ComponentId::derived(Derived::Authority));
    if o.method_and_path {
        spec = spec.component(ComponentId::derived(Derived::Path));
    }
    spec = spec.component(signature_agent_component(&o.label)?);
    if o.content_digest && !msg.body.is_empty() {
        spec = spec.component(
            ComponentId::field("content-digest").map_err(|e| Error::Sign(e.to_string()))?,
        );
    }
    let nonce = match (&o.nonce, o.no_nonce) {
        (_, true) => None,
        (Some(n), false) => Some(n.clone()),
        (None, false) => Some(fresh_nonce()?),
    };
    let expires = o
        .created
        .saturating_add(i64::try_from(o.lifetime).unwrap_or(i64::MAX));
    spec = spec.created(o.created).expires(expires);
    if let Some(n) = &nonce {
        spec = spec.nonce(n);
    }
    Ok(spec
        .alg(key.algorithm())
        .keyid(&key.verifying_key().thumbprint())
        .tag(TAG))
}

/// What [`sign_message`] added: the fields to insert, in order, and the
/// signature.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SignedRequest {
    /// Field lines added to the request (`Signature-Agent`, optionally
    /// `Content-Digest`, `Signature-Input`, `Signature`).
    pub fields: Vec<(String, String)>,
    /// The RFC 9421 signature.
    pub signed: Signed,
}

/// Sign a request model under the profile: adds `Signature-Agent` (the
/// Dictionary form), `Content-Digest` when asked and absent, then
/// `Signature-Input` and `Signature`. A request that already has a
/// `Signature-Agent` field gets its member appended (section 5.2.2: each
/// signer provides its own member).
///
/// # Errors
/// [`Error::AgentUrl`] when `o.signature_agent` is not a usable `https` URL (see
/// [`resolve_agent_url`]); [`Error::SignatureAgentMalformed`] when `msg` already has a
/// `Signature-Agent` field that is malformed; [`Error::Sign`] when `o.label` is not a valid
/// label, when `msg` already has a legacy `Signature-Agent` field or a member named `o.label`,
/// for the reasons of [`signature_spec`], or when RFC 9421 signing fails: `msg` already carries
/// a signature labelled `o.label` or a malformed `Signature-Input`, `o.created` is negative,
/// `o.nonce` is not printable ASCII, a covered component cannot be read from `msg` (it is a
/// response, or a value is not ASCII, breaks the line, or exceeds
/// [`MAX_BASE_BYTES`](crate::httpsig::MAX_BASE_BYTES)), or the key cannot sign. An error raised
/// by [`signature_spec`] or by the signing leaves the `Signature-Agent` member (and any
/// `Content-Digest`) already added to `msg`.
pub fn sign_message(
    msg: &mut Message,
    key: &SigningKey,
    o: &SignOptions,
) -> Result<SignedRequest, Error> {
    resolve_agent_url(&o.signature_agent, None)?;
    let member = SignatureAgent::serialize_member(&o.label, &o.signature_agent)?;
    if let Some(existing) = SignatureAgent::from_message(msg)? {
        if existing.legacy || existing.member(&o.label).is_some() {
            return Err(Error::Sign(format!(
                "the request already has a Signature-Agent member {:?} (or a legacy field)",
                o.label
            )));
        }
    }
    let mut fields = vec![("Signature-Agent".to_owned(), member.clone())];
    msg.add_header("Signature-Agent", &member);
    if o.content_digest
        && !msg.body.is_empty()
        && msg.field_lines("content-digest", false).next().is_none()
    {
        let v = crate::digest::content_digest(&msg.body);
        msg.add_header("Content-Digest", &v);
        fields.push(("Content-Digest".into(), v));
    }
    let spec = signature_spec(msg, key, o)?;
    let signed = crate::httpsig::sign(msg, None, &spec, key)
        .map_err(|e: SignError| Error::Sign(e.to_string()))?;
    signed.apply(msg);
    fields.push(("Signature-Input".into(), signed.signature_input.clone()));
    fields.push(("Signature".into(), signed.signature.clone()));
    Ok(SignedRequest { fields, signed })
}

/// Sign an `http::Request` in place under the profile (see
/// [`sign_message`]); `default_scheme` is used when the URI has none.
///
/// ```
/// use agentsig::webbotauth::{self, SignOptions};
/// use agentsig::{Algorithm, SigningKey};
///
/// let key = SigningKey::generate(Algorithm::Ed25519)?;
/// let mut req = http::Request::get("https://shop.example/cart").body(Vec::new())?;
/// let o = SignOptions::new("https://agent.example", 1_700_000_000);
/// webbotauth::sign_request(&mut req, "https", &key, &o)?;
/// assert_eq!(req.headers()["signature-agent"], "sig1=\"https://agent.example\"");
/// assert!(req.headers()["signature-input"].to_str()?.contains("tag=\"web-bot-auth\""));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`Error::Sign`] when `req` cannot be read as a request: neither its URI nor a `Host` field
/// gives an authority, or it has more than
/// [`MAX_FIELD_LINES`](crate::httpsig::message::MAX_FIELD_LINES) header field lines; otherwise as
/// [`sign_message`]. `req` is changed only when signing succeeds.
pub fn sign_request<B: AsRef<[u8]>>(
    req: &mut http::Request<B>,
    default_scheme: &str,
    key: &SigningKey,
    o: &SignOptions,
) -> Result<Signed, Error> {
    let mut m =
        Message::from_request(req, default_scheme).map_err(|e| Error::Sign(e.to_string()))?;
    let s = sign_message(&mut m, key, o)?;
    for (n, v) in &s.fields {
        let name = http::header::HeaderName::from_bytes(n.as_bytes())
            .map_err(|e| Error::Sign(e.to_string()))?;
        let value = http::HeaderValue::from_str(v).map_err(|e| Error::Sign(e.to_string()))?;
        req.headers_mut().append(name, value);
    }
    Ok(s.signed)
}

/// The keys of one key set, each with its RFC 7638 thumbprint.
#[derive(Debug, Clone, Default)]
pub struct KeySet {
    /// The URL the set was obtained from.
    pub url: String,
    /// (thumbprint, key) pairs.
    pub keys: Vec<(String, VerifyingKey)>,
    /// The labels of the directory response signatures that verified, if
    /// the set came with any (Appendix B).
    pub proven_by: Vec<String>,
    /// Thumbprints of keys the directory lists but that are not used, for
    /// want of a directory response signature of their own (a client that
    /// requires one of every key, Appendix B.1); they are not in `keys`.
    pub withheld: Vec<String>,
}

impl KeySet {
    /// The key whose thumbprint is `keyid`.
    pub fn get(&self, keyid: &str) -> Option<&VerifyingKey> {
        self.keys.iter().find(|(t, _)| t == keyid).map(|(_, k)| k)
    }
}

/// Where a verifier gets the key set of an agent URL. The fetching
/// implementation is `crate::net::webbotauth::DirectoryClient` (feature
/// `net`); [`StaticDirectory`] holds sets given in code or files.
pub trait KeyDirectory: Send + Sync {
    /// The key set published at `url` (section 5.5).
    ///
    /// # Errors
    /// [`DirectoryError`] when no acceptable key set is available for `url`.
    /// [`StaticDirectory`] answers [`DirectoryError::NotKnown`] for a key-set URL it was not
    /// given. The fetching `crate::net::webbotauth::DirectoryClient` answers why its fetch failed
    /// (connection, DNS or TLS failure, SSRF refusal, redirect, a status other than 200, too
    /// large, timeout, wrong media type) or why the set is refused (malformed, too many keys, a
    /// `kid` that is not the thumbprint, a directory signature that does not verify or is missing
    /// when required), or [`DirectoryError::Busy`] when it already has its most fetches in
    /// progress, unless the last good set for the URL is still within its `max_stale`; a failure
    /// is answered again, without fetching, for its `failure_ttl`.
    fn key_set(&self, url: &AgentUrl) -> Result<Arc<KeySet>, DirectoryError>;

    /// The key sets published at each of `urls`, in the same order:
    /// [`KeyDirectory::key_set`] of each, one after the other. A directory
    /// that fetches overrides it to fetch them concurrently, each under the
    /// whole deadline of the verification, so that a directory that never
    /// answers does not spend the time of the others
    /// (`crate::net::webbotauth::DirectoryClient` does).
    /// [`WebBotAuthVerifier::verify`] asks once per request, for the distinct
    /// key sets of the signatures that passed every check needing no key.
    fn key_sets(&self, urls: &[&AgentUrl]) -> Vec<Result<Arc<KeySet>, DirectoryError>> {
        urls.iter().map(|u| self.key_set(u)).collect()
    }
}

/// A [`KeyDirectory`] that consults at most [`MAX_KEY_SETS_PER_REQUEST`]
/// distinct key sets: one per request being verified.
struct Budgeted<'a> {
    inner: &'a dyn KeyDirectory,
    consulted: KeySetBudget,
}

impl KeyDirectory for Budgeted<'_> {
    fn key_set(&self, url: &AgentUrl) -> Result<Arc<KeySet>, DirectoryError> {
        self.consulted.admit(&url.key_set_url)?;
        self.inner.key_set(url)
    }

    fn key_sets(&self, urls: &[&AgentUrl]) -> Vec<Result<Arc<KeySet>, DirectoryError>> {
        // The first admitted sets are consulted together; the further ones
        // are refused without asking the directory.
        let admitted: Vec<Result<(), DirectoryError>> = urls
            .iter()
            .map(|u| self.consulted.admit(&u.key_set_url))
            .collect();
        let asked: Vec<&AgentUrl> = urls
            .iter()
            .zip(&admitted)
            .filter(|(_, a)| a.is_ok())
            .map(|(u, _)| *u)
            .collect();
        let mut sets = self.inner.key_sets(&asked).into_iter();
        urls.iter()
            .zip(admitted)
            .map(|(u, a)| match a {
                Ok(()) => sets
                    .next()
                    .unwrap_or_else(|| Err(DirectoryError::NotKnown(u.key_set_url.clone()))),
                Err(e) => Err(e),
            })
            .collect()
    }
}

/// The distinct key sources (key-set URLs, `Signature-Key` signers) one
/// request has made a verifier consult: at most
/// [`MAX_KEY_SETS_PER_REQUEST`].
#[derive(Debug, Default)]
pub(crate) struct KeySetBudget(std::sync::Mutex<Vec<String>>);

impl KeySetBudget {
    /// Admit `source` (again, or as one of the first
    /// [`MAX_KEY_SETS_PER_REQUEST`]), or refuse it with
    /// [`DirectoryError::TooManyKeySets`].
    pub(crate) fn admit(&self, source: &str) -> Result<(), DirectoryError> {
        let mut seen = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !seen.iter().any(|s| s == source) {
            if seen.len() >= MAX_KEY_SETS_PER_REQUEST {
                return Err(DirectoryError::TooManyKeySets(source.to_owned()));
            }
            seen.push(source.to_owned());
        }
        Ok(())
    }
}

/// Key sets given in advance, by key-set URL (no I/O).
#[derive(Debug, Clone, Default)]
pub struct StaticDirectory {
    sets: Vec<Arc<KeySet>>,
}

impl StaticDirectory {
    /// An empty directory.
    pub fn new() -> StaticDirectory {
        StaticDirectory::default()
    }
    /// Add the keys published at `key_set_url`.
    pub fn insert(&mut self, key_set_url: &str, keys: Vec<VerifyingKey>) {
        let keys = keys.into_iter().map(|k| (k.thumbprint(), k)).collect();
        self.sets.push(Arc::new(KeySet {
            url: key_set_url.to_owned(),
            keys,
            proven_by: Vec::new(),
            withheld: Vec::new(),
        }));
    }
    /// Builder form of [`StaticDirectory::insert`].
    pub fn with(mut self, key_set_url: &str, keys: Vec<VerifyingKey>) -> StaticDirectory {
        self.insert(key_set_url, keys);
        self
    }
}

impl KeyDirectory for StaticDirectory {
    fn key_set(&self, url: &AgentUrl) -> Result<Arc<KeySet>, DirectoryError> {
        self.sets
            .iter()
            .find(|s| s.url == url.key_set_url)
            .cloned()
            .ok_or_else(|| DirectoryError::NotKnown(url.key_set_url.clone()))
    }
}

/// What a site requires of a Web Bot Auth signature.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Policy {
    /// Agents accepted: an origin (`https://agent.example`) admits the key
    /// directory at its well-known path; a key set anywhere else (a value
    /// with a path, `type=jwks_uri`) must be listed by its exact URL. `None`
    /// accepts any agent whose key set verifies the signature.
    pub allowed_agents: Option<Vec<String>>,
    /// Components every accepted signature must cover, beyond the profile's.
    pub required: Vec<ComponentId>,
    /// Largest `expires - created`, seconds (default
    /// [`DEFAULT_MAX_VALIDITY`], 1 h; the profile allows up to
    /// [`MAX_LIFETIME`]).
    pub max_validity: u64,
    /// Require a `nonce` (default false: WG-00 defers to RFC 9421 section 7.2.2).
    pub require_nonce: bool,
    /// Accept the legacy sf-string `Signature-Agent` (default true).
    pub accept_legacy: bool,
    /// Algorithms accepted (default every asymmetric one).
    pub algorithms: AllowList,
    /// Tolerated clock skew, seconds (default 60).
    pub skew: u64,
    /// Check `created`/`expires` against the clock (false only to replay
    /// archived vectors).
    pub check_time: bool,
    /// Refuse requests received over another scheme than `https` (default
    /// true; section 5.4).
    pub require_tls: bool,
    /// Refuse the RFC 9421 Appendix B test keys ([`RFC9421_TEST_KEYS`];
    /// default true; false only to replay the drafts' vectors).
    pub reject_test_keys: bool,
    /// A request with content must be signed over `content-digest`
    /// (default true), so that an accepted request's content is the
    /// content the agent signed (RFC 9421 section 7.2.8, RFC 9530 section
    /// 2): the profile itself covers no content. A request without content
    /// needs none.
    pub require_content_digest: bool,
    /// The site's own authorities (`host[:port]`): a signature is accepted
    /// only when the authority it covers (`@authority`, or the authority of
    /// `@target-uri`) is one of them, whatever `Host` says, so a request an
    /// agent signed for another site cannot be replayed here (RFC 9421
    /// section 7.2.1; the profile requires `@authority` or `@target-uri` to
    /// be covered, section 5.2, and this is what makes that binding
    /// hold). `None` does not
    /// check it; the gates (`BotAuthLayer`, `SignatureMiddleware`,
    /// `agentsig http verify --profile web-bot-auth`) require an explicit
    /// [`SiteAuthorities`](crate::httpsig::SiteAuthorities).
    pub authorities: Option<Vec<String>>,
}

/// RFC 7638 thumbprints of the RFC 9421 Appendix B.1 test keys
/// (`test-key-rsa`, `test-key-rsa-pss`, `test-key-ecc-p256`,
/// `test-key-ed25519`): public, so anyone can sign with them.
pub const RFC9421_TEST_KEYS: [&str; 4] = [
    "BHj8s0GPnMEQtkaULIM-PLgEhLBbuGUQ1vMxmBWZzEo",
    "oD0HwocPBSfpNy5W3bpJeyFGY_IQ_YpqxSjQ3Yd-CLA",
    "ydQXMtvbsOsZyFir-Y7A8t7fKEM1gbKPvyFkdpu4fvI",
    "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U",
];

impl Default for Policy {
    fn default() -> Self {
        Policy {
            allowed_agents: None,
            required: Vec::new(),
            max_validity: DEFAULT_MAX_VALIDITY,
            require_nonce: false,
            accept_legacy: true,
            algorithms: AllowList::asymmetric(),
            skew: 60,
            check_time: true,
            require_tls: true,
            require_content_digest: true,
            reject_test_keys: true,
            authorities: None,
        }
    }
}

impl Policy {
    /// The strict preset: the defaults plus `@method` and `@path` covered
    /// and a `nonce` required. The profile lets an agent sign
    /// `@authority` alone (section 5.2), and such a signature, captured,
    /// authorises any request to the site until it expires; with the method
    /// and path covered it authorises only the request it was made for, and
    /// with a nonce checked against a replay store (RFC 9421 section 7.2.2;
    /// `BotAuthLayer` has one by default) only once. It refuses agents that
    /// sign the authority alone or send no nonce, which is why it is not the
    /// default. `agentsig http verify --strict` and the Python `strict=True`
    /// are this preset.
    ///
    /// ```
    /// let p = agentsig::webbotauth::Policy::strict();
    /// assert!(p.require_nonce);
    /// assert_eq!(p.required.len(), 2);
    /// ```
    pub fn strict() -> Policy {
        Policy {
            required: crate::httpsig::strict_request_components(),
            require_nonce: true,
            ..Policy::default()
        }
    }
}

/// The verified identity of a signing agent.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct VerifiedAgent {
    /// The signature label.
    pub label: String,
    /// The agent identifier: the resolved URL (section 4.3).
    pub agent: String,
    /// The URL its key came from.
    pub key_set_url: String,
    /// The `keyid` (the key's thumbprint).
    pub keyid: String,
    /// The algorithm of the key.
    pub alg: &'static str,
    /// `created`.
    pub created: i64,
    /// `expires`.
    pub expires: i64,
    /// The `nonce`, if any.
    pub nonce: Option<String>,
    /// Whether the Signature-Agent field was the legacy sf-string.
    pub legacy: bool,
    /// The covered components, serialized as RFC 9421 section 2.3 writes
    /// them (for the report, which lists them).
    #[serde(skip)]
    pub(crate) covered: Vec<String>,
}

/// The result for one `web-bot-auth` label.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LabelOutcome {
    /// The label.
    pub label: String,
    /// The agent URL the signature covers, when it was found.
    pub agent: Option<String>,
    /// Verified, or why not.
    pub result: Result<VerifiedAgent, Error>,
}

/// The three outcomes of Appendix C.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// At least one web-bot-auth signature verified.
    Verified,
    /// Web-bot-auth signatures are present and none verified.
    Invalid,
    /// No web-bot-auth signature at all.
    Unverified,
}

/// One result per `web-bot-auth` label.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Report {
    /// Per label, in `Signature-Input` order.
    pub labels: Vec<LabelOutcome>,
    /// A message-level error (malformed signature fields), if any.
    pub error: Option<Error>,
}

impl Report {
    /// The first verified agent.
    pub fn verified(&self) -> Option<&VerifiedAgent> {
        self.labels.iter().find_map(|l| l.result.as_ref().ok())
    }
    /// Verified, invalid or unverified (Appendix C.1).
    pub fn status(&self) -> Status {
        if self.verified().is_some() {
            Status::Verified
        } else if self.labels.is_empty() && self.error.is_none() {
            Status::Unverified
        } else {
            Status::Invalid
        }
    }
    /// The first error, for a one-line reason.
    pub fn first_error(&self) -> Option<&Error> {
        self.error
            .as_ref()
            .or_else(|| self.labels.iter().find_map(|l| l.result.as_ref().err()))
    }
    /// A JSON form: status, agent, and one entry per label with its code.
    pub fn to_json(&self) -> serde_json::Value {
        let labels: Vec<_> = self
            .labels
            .iter()
            .map(|l| match &l.result {
                Ok(v) => serde_json::json!({"label": l.label, "valid": true, "agent": v}),
                Err(e) => serde_json::json!({"label": l.label, "valid": false,
                    "agent_url": l.agent, "code": e.code(), "message": e.to_string()}),
            })
            .collect();
        serde_json::json!({
            "status": self.status(),
            "agent": self.verified().map(|v| v.agent.clone()),
            "error": self.error.as_ref().map(|e| serde_json::json!({"code": e.code(), "message": e.to_string()})),
            "signatures": labels,
        })
    }
}

/// A verifier of the profile: policy, optional replay store.
#[derive(Debug, Clone, Default)]
pub struct WebBotAuthVerifier {
    /// The policy.
    pub policy: Policy,
    replay: Option<Arc<dyn ReplayStore>>,
}

#[derive(Debug)]
struct OneKey(TrustedKey);

impl WebBotAuthVerifier {
    /// RFC 9421 verification (section 3.2) of the one label `hp` selects,
    /// with `trusted` as the only key, under this verifier's algorithms,
    /// skew and replay store, at `now`.
    fn verify_one(
        &self,
        msg: &Message,
        hp: &HttpPolicy,
        trusted: TrustedKey,
        now: i64,
    ) -> Result<crate::httpsig::LabelResult, Error> {
        let mut cx = self.context(Arc::new(OneKey(trusted)), now);
        cx.replay = self.replay.clone();
        let rep =
            crate::httpsig::report(&cx, hp, msg, None).map_err(|e| Error::Header(e.to_string()))?;
        let r = rep
            .results
            .into_iter()
            .next()
            .ok_or_else(|| Error::Header("no result".into()))?;
        r.outcome.clone().map_err(Error::Signature)?;
        Ok(r)
    }

    /// The rest of the RFC 9421 verification (section 3.2) of a label that
    /// passed [`WebBotAuthVerifier::precheck`] (`hp`, its `result` and
    /// `checked`), with `trusted` as the only key, under this verifier's
    /// algorithms, skew and replay store, at `now` (the precheck's).
    fn verify_prepared(
        &self,
        msg: &Message,
        (hp, result, checked): (
            &HttpPolicy,
            crate::httpsig::LabelResult,
            &crate::httpsig::CheckedLabel,
        ),
        trusted: TrustedKey,
        now: i64,
    ) -> Result<crate::httpsig::LabelResult, Error> {
        let mut cx = self.context(Arc::new(OneKey(trusted)), now);
        cx.replay = self.replay.clone();
        let mut r = crate::httpsig::finish_checked(&cx, hp, msg, checked, result);
        std::mem::replace(&mut r.outcome, Ok(())).map_err(Error::Signature)?;
        Ok(r)
    }

    /// The RFC 9421 context of this verifier (algorithms, skew, `now`)
    /// over `keys`, without the replay store.
    fn context(&self, keys: Arc<dyn KeyResolver>, now: i64) -> crate::policy::Context {
        let mut cx = crate::policy::Context::new(keys);
        cx.algorithms = self.policy.algorithms.clone();
        cx.skew = self.policy.skew;
        cx.clock = Arc::new(crate::clock::FixedClock(now));
        cx
    }

    /// Every RFC 9421 check of `label` under `hp` that needs no key
    /// (section 3.2 steps 1 to 5 and 7: the fields, the label, the
    /// parameters, the tag, the time window, the covered components, the
    /// authority, the signature base), without the replay store: the label
    /// when it reaches the choice of its key, so that fetching that key can
    /// make a difference, with what its keyed check reuses (nothing is
    /// parsed or rebuilt twice: `covered`, the label's components as its
    /// candidate read them from `inputs`, is used as it is).
    fn precheck(
        &self,
        msg: &Message,
        (inputs, covered): (Option<&sfv::Dictionary>, Vec<ComponentId>),
        hp: &HttpPolicy,
        label: &str,
        now: i64,
    ) -> Result<(crate::httpsig::LabelResult, crate::httpsig::CheckedLabel), Error> {
        let probe = Arc::new(Probe::default());
        let cx = self.context(probe.clone(), now);
        let covered = inputs.is_some().then_some(covered);
        let (r, checked) = crate::httpsig::check_one(&cx, hp, msg, label, inputs, covered)
            .map_err(|e| Error::Header(e.to_string()))?;
        let checked = checked.map_err(Error::Signature)?;
        let probed = crate::httpsig::probe_checked(&cx, hp, msg, &checked);
        if !probe.0.load(std::sync::atomic::Ordering::Relaxed) {
            probed.map_err(Error::Signature)?;
        }
        Ok((r, checked))
    }

    /// The report of a request that can be decided without any key set,
    /// without I/O: one with no `web-bot-auth` signature, or one whose
    /// every such signature fails a check made before its key set is looked
    /// up (see [`WebBotAuthVerifier::verify`]). `None` when a key set
    /// could make a signature verify: [`WebBotAuthVerifier::verify`] then
    /// decides, with a [`KeyDirectory`] that may fetch. A gate answers the
    /// requests this decides without handing them to a thread that may
    /// block on the network.
    pub fn decide_without_keys(&self, msg: &Message, now: i64) -> Option<Report> {
        let probe = AskedDirectory::default();
        let report = self.verify(msg, &probe, now);
        (!probe.0.load(std::sync::atomic::Ordering::Relaxed)).then_some(report)
    }
}

/// A key resolver that holds no key and records that it was asked: a label
/// that reaches the choice of its key passed every check made before it.
#[derive(Debug, Default)]
struct Probe(std::sync::atomic::AtomicBool);

impl KeyResolver for Probe {
    fn resolve(&self, _req: &KeyRequest) -> Result<Vec<TrustedKey>, ResolveError> {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
        Ok(Vec::new())
    }
}

/// A key directory that holds no set and records that it was asked.
#[derive(Debug, Default)]
struct AskedDirectory(std::sync::atomic::AtomicBool);

impl KeyDirectory for AskedDirectory {
    fn key_set(&self, url: &AgentUrl) -> Result<Arc<KeySet>, DirectoryError> {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
        Err(DirectoryError::NotKnown(url.key_set_url.clone()))
    }
}

impl KeyResolver for OneKey {
    fn resolve(&self, _req: &KeyRequest) -> Result<Vec<TrustedKey>, ResolveError> {
        Ok(vec![self.0.clone()])
    }
}

impl WebBotAuthVerifier {
    /// A verifier with this policy.
    pub fn new(policy: Policy) -> WebBotAuthVerifier {
        WebBotAuthVerifier {
            policy,
            replay: None,
        }
    }
    /// Check every `nonce` against this store (RFC 9421 section 7.2.2).
    pub fn with_replay_store(mut self, store: Arc<dyn ReplayStore>) -> WebBotAuthVerifier {
        self.replay = Some(store);
        self
    }

    /// Whether a replay store checks the nonces.
    pub fn has_replay_store(&self) -> bool {
        self.replay.is_some()
    }

    /// Verify the `web-bot-auth` signatures of a request at time `now`
    /// (section 5.4). Labels with another `tag` are not examined (section
    /// 5.4: a verifier MAY discard them).
    pub fn verify(&self, msg: &Message, dir: &dyn KeyDirectory, now: i64) -> Report {
        let mut report = Report::default();
        // The parsed Signature-Input, which each label's RFC 9421 checks
        // reuse (parsed once).
        let (candidates, inputs) = match candidates(msg) {
            Ok(c) => c,
            Err(e) => {
                report.error = Some(e);
                return report;
            }
        };
        if candidates.is_empty() {
            return report;
        }
        let agents = match SignatureAgent::from_message(msg) {
            Ok(a) => a,
            Err(e) => {
                report.error = Some(e);
                return report;
            }
        };
        let dir = Budgeted {
            inner: dir,
            consulted: KeySetBudget::default(),
        };
        // Every check needing no key first, for every label: a signature
        // that fails one makes no fetch. Then the distinct key sets of the
        // others, asked for together (a fetching directory fetches them
        // concurrently, each under the whole deadline, so that a directory
        // that never answers, named by one label, does not spend the time
        // of another's); then each label against its set.
        let prepared: Vec<(String, Option<String>, Result<Prepared, Error>)> = candidates
            .into_iter()
            .map(|c| {
                let mut agent = None;
                let label = c.label.clone();
                let p =
                    self.prepare_label(msg, inputs.as_ref(), c, agents.as_ref(), now, &mut agent);
                (label, agent, p)
            })
            .collect();
        let mut urls: Vec<&AgentUrl> = Vec::new();
        for p in prepared.iter().filter_map(|(_, _, p)| p.as_ref().ok()) {
            if !urls.iter().any(|u| u.key_set_url == p.url.key_set_url) {
                urls.push(&p.url);
            }
        }
        let sets = dir.key_sets(&urls);
        // Each prepared label's set, by its place among the URLs asked for.
        let of_label: Vec<Option<usize>> = prepared
            .iter()
            .map(|(_, _, p)| {
                let p = p.as_ref().ok()?;
                urls.iter().position(|u| u.key_set_url == p.url.key_set_url)
            })
            .collect();
        for ((label, agent, p), i) in prepared.into_iter().zip(of_label) {
            let result = p.and_then(|p| {
                let set = i
                    .and_then(|i| sets.get(i).cloned())
                    .unwrap_or_else(|| Err(DirectoryError::NotKnown(p.url.key_set_url.clone())));
                self.finish_label(msg, p, set, now)
            });
            report.labels.push(LabelOutcome {
                label,
                agent,
                result,
            });
        }
        report
    }

    /// Every check of the label `c` that needs no key (section 5.4 and
    /// RFC 9421 section 3.2 up to the choice of the key).
    fn prepare_label(
        &self,
        msg: &Message,
        inputs: Option<&sfv::Dictionary>,
        c: Candidate,
        agents: Option<&SignatureAgent>,
        now: i64,
        agent_out: &mut Option<String>,
    ) -> Result<Prepared, Error> {
        if self.policy.require_tls {
            if let crate::httpsig::message::Kind::Request(line) = &msg.kind {
                if !line.scheme.eq_ignore_ascii_case("https") {
                    return Err(Error::NotTls(line.scheme.clone()));
                }
            }
        }
        let agents = agents.ok_or(Error::SignatureAgentMissing)?;
        // Section 5.4: the signature is attributed only to the member it covers.
        let (member, component) = if agents.legacy {
            if !self.policy.accept_legacy {
                return Err(Error::SignatureAgentMalformed(
                    "the legacy sf-string form is not accepted by policy".into(),
                ));
            }
            let comp = c
                .covered
                .iter()
                .find(|id| {
                    id.field_name() == Some(SIGNATURE_AGENT)
                        && id.key.is_none()
                        && !id.sf
                        && !id.bs
                        && !id.req
                        && !id.tr
                })
                .ok_or_else(|| Error::SignatureAgentNotCovered(c.label.clone()))?;
            let first = agents
                .members
                .first()
                .ok_or_else(|| Error::SignatureAgentMalformed("no member".into()))?;
            (first, comp.clone())
        } else {
            let comp = c
                .covered
                .iter()
                .find(|id| {
                    id.field_name() == Some(SIGNATURE_AGENT)
                        && id.key.is_some()
                        && !id.req
                        && !id.tr
                })
                .ok_or_else(|| Error::SignatureAgentNotCovered(c.label.clone()))?;
            let k = comp.key.as_deref().unwrap_or_default();
            let m = agents
                .member(k)
                .ok_or_else(|| Error::MemberMissing(k.to_owned()))?;
            (m, comp.clone())
        };
        let url = resolve_agent_url(&member.value, member.kind.as_deref())?;
        *agent_out = Some(url.agent.clone());
        if let Some(allowed) = &self.policy.allowed_agents {
            if !allowed.iter().any(|a| agent_allowed(a, &url)) {
                return Err(Error::AgentNotAllowed(url.agent.clone()));
            }
        }
        if let (Some(cr), Some(ex)) = (c.created, c.expires) {
            let lifetime = ex.saturating_sub(cr);
            if lifetime > i64::try_from(self.policy.max_validity).unwrap_or(i64::MAX) {
                return Err(Error::ValidityTooLong {
                    lifetime,
                    max: self.policy.max_validity,
                });
            }
        }
        let keyid = c
            .keyid
            .clone()
            .ok_or(Error::Signature(SigError::MissingParam("keyid")))?;
        if self.policy.reject_test_keys && RFC9421_TEST_KEYS.contains(&keyid.as_str()) {
            return Err(Error::TestKey(keyid));
        }
        let mut hp = HttpPolicy::new();
        hp.labels = Some(vec![c.label.clone()]);
        hp.expected_tag = Some(TAG.into());
        hp.require_expires = true;
        hp.require_nonce = self.policy.require_nonce;
        hp.max_age = None;
        hp.check_time = self.policy.check_time;
        hp.required = self.policy.required.clone();
        hp.required.push(component);
        // The profile's own setting, waiver included (the content-digest
        // requirement is added to `required` below).
        hp.require_content_digest = false;
        if self.policy.require_content_digest && !msg.body.is_empty() {
            hp.required.push(
                ComponentId::field("content-digest").map_err(|e| Error::Header(e.to_string()))?,
            );
        }
        hp.request_target_one_of = vec![
            ComponentId::derived(Derived::Authority),
            ComponentId::derived(Derived::TargetUri),
        ];
        hp.authorities = self.policy.authorities.clone();
        // The key set may be a fetch the request itself names: it is made
        // only for a signature that passes every check needing no key.
        let (result, checked) = self.precheck(msg, (inputs, c.covered), &hp, &c.label, now)?;
        Ok(Prepared {
            label: c.label,
            url,
            keyid,
            hp,
            legacy: agents.legacy,
            result,
            checked,
        })
    }

    /// The rest of the checks of a label that passed
    /// [`WebBotAuthVerifier::prepare_label`], against its key set.
    fn finish_label(
        &self,
        msg: &Message,
        p: Prepared,
        set: Result<Arc<KeySet>, DirectoryError>,
        now: i64,
    ) -> Result<VerifiedAgent, Error> {
        let Prepared {
            label,
            url,
            keyid,
            hp,
            legacy,
            result,
            checked,
        } = p;
        let set = set?;
        let key = set.get(&keyid).ok_or_else(|| {
            if set.withheld.contains(&keyid) {
                Error::Directory(DirectoryError::KeyNotProven {
                    url: url.key_set_url.clone(),
                    keyid: keyid.clone(),
                })
            } else {
                Error::UnknownKey {
                    url: url.key_set_url.clone(),
                    keyid: keyid.clone(),
                }
            }
        })?;
        let trusted = TrustedKey::new(key.clone(), KeySource::Discovered(url.key_set_url.clone()));
        let alg = key.algorithm().httpsig_name();
        let r = self.verify_prepared(msg, (&hp, result, &checked), trusted, now)?;
        Ok(VerifiedAgent {
            label,
            agent: url.agent,
            key_set_url: url.key_set_url,
            keyid,
            alg,
            created: r.created.unwrap_or_default(),
            expires: r.expires.unwrap_or_default(),
            nonce: r.nonce,
            legacy,
            covered: r.covered,
        })
    }
}

/// A label that passed every check needing no key, waiting for its key set.
struct Prepared {
    label: String,
    url: AgentUrl,
    keyid: String,
    hp: HttpPolicy,
    legacy: bool,
    /// The label's RFC 9421 result up to the choice of its key.
    result: crate::httpsig::LabelResult,
    /// What its keyed check reuses.
    checked: crate::httpsig::CheckedLabel,
}

struct Candidate {
    label: String,
    covered: Vec<ComponentId>,
    keyid: Option<String>,
    created: Option<i64>,
    expires: Option<i64>,
}

/// The labels whose `tag` is `web-bot-auth`, with what they cover.
fn candidates(msg: &Message) -> Result<(Vec<Candidate>, Option<sfv::Dictionary>), Error> {
    let lines: Vec<&[u8]> = msg.field_lines("signature-input", false).collect();
    if lines.is_empty() {
        return Ok((Vec::new(), None));
    }
    let total: usize = lines.iter().map(|l| l.len() + 2).sum();
    if total > crate::httpsig::MAX_SIGNATURE_FIELD {
        return Err(Error::Header("Signature-Input is too large".into()));
    }
    let d = sfv::parse_dictionary_raw(&lines.join(&b", "[..]))
        .map_err(|e| Error::Header(e.to_string()))?;
    if d.0.len() > crate::httpsig::MAX_SIGNATURES {
        return Err(Error::Header("too many signatures".into()));
    }
    let mut out = Vec::new();
    for (label, e) in &d.0 {
        let Entry::InnerList(list) = e else { continue };
        if crate::httpsig::param_str(&list.params, "tag") != Some(TAG) {
            continue;
        }
        if list.items.len() > crate::httpsig::MAX_COMPONENTS {
            return Err(Error::Header("too many covered components".into()));
        }
        let covered = crate::httpsig::components::parse_covered(&list.items)
            .map_err(|e| Error::Signature(SigError::Component(e)))?;
        out.push(Candidate {
            label: label.clone(),
            covered,
            keyid: crate::httpsig::param_str(&list.params, "keyid").map(str::to_owned),
            created: crate::httpsig::param_int(&list.params, "created"),
            expires: crate::httpsig::param_int(&list.params, "expires"),
        });
    }
    Ok((out, Some(d)))
}

/// Algorithms a Web Bot Auth signer may use: every asymmetric one.
pub fn signing_algorithms() -> Vec<Algorithm> {
    Algorithm::ALL
        .into_iter()
        .filter(|a| !a.is_symmetric())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_segments_are_those_the_url_parser_removes() {
        // The definition: lowercased, `%2e` read as `.`, the segment is
        // `.` or `..`.
        let by_definition = |seg: &str| {
            let s = seg.to_ascii_lowercase().replace("%2e", ".");
            s == "." || s == ".."
        };
        let parts = ["", ".", "%2e", "%2E", "%2", "e", "a", "%", "..", "%2e%2e"];
        let mut n = 0;
        for a in parts {
            for b in parts {
                for c in parts {
                    let seg = [a, b, c].concat();
                    assert_eq!(is_dot_segment(&seg), by_definition(&seg), "{seg:?}");
                    n += usize::from(by_definition(&seg));
                }
            }
        }
        assert!(n > 20, "{n} dot segments among the cases");
    }
}
