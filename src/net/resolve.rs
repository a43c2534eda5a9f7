//! `agent://` resolution (draft-narvaneni-agent-uri-03 section 5.1) and verification of the
//! descriptor found, with the error conditions of section 9.2 kept
//! distinct.
//!
//! * `agent://host[:port]/name/...`: `https://host[:port]/.well-known/agents.json`
//!   (port preserved), the first path segment is the agent name, its
//!   entry in `agents` is the descriptor URL.
//! * DID authorities (section 4.3, canonical `did%3Aweb%3A...` or the
//!   convenience `did:web:...` form): the DID document's service of type
//!   `AgentDescriptor` is the descriptor URL; its verification methods are
//!   the key source when the descriptor names none (section 10.3 item 3).
//! * `agent+https://...`: an explicit binding; when the registry is absent
//!   (404) the resolver reports the direct endpoint instead of failing.
//!
//! Every fetch goes through the SSRF-guarded [`Fetcher`].

use super::discovery::{DiscoveryError, KeyAuthority};
use super::fetch::{FetchError, Fetcher};
use super::verify::{Resolver, UrlVerified, UrlVerifyError, UrlVerifyOptions};
use serde_json::Value;

/// A parsed `agent://` URI.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AgentUri {
    /// The transport of an explicit binding (`https` for `agent+https://`).
    pub binding: Option<String>,
    /// The authority: `host[:port]`, or a decoded DID.
    pub authority: String,
    /// Whether the authority is a DID.
    pub is_did: bool,
    /// The first path segment.
    pub agent: String,
    /// The path after the authority, from its leading `/` (query included).
    pub path: String,
}

/// Why resolution failed (draft-narvaneni-agent-uri-03 section 9.2).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentResolveError {
    /// Not an `agent://` URI this resolver reads.
    #[error("not a usable agent URI: {0}")]
    BadUri(String),
    /// DNS resolution failure.
    #[error("DNS resolution failure: {0}")]
    Dns(FetchError),
    /// SSRF violation: an address in a private or loopback range (or a
    /// non-https location), refused before connecting.
    #[error("SSRF violation: {0}")]
    Ssrf(FetchError),
    /// `/.well-known/agents.json` answered 404.
    #[error("registry not found: {0} answered 404")]
    RegistryNotFound(String),
    /// The registry could not be fetched or read.
    #[error("registry fetch failure: {0}")]
    RegistryFetch(String),
    /// The agent name is not in the registry (or the DID document has no
    /// AgentDescriptor service).
    #[error("agent not found: {agent:?} is not in {registry}")]
    AgentNotFound {
        /// The agent name.
        agent: String,
        /// The registry or DID document URL.
        registry: String,
    },
    /// The descriptor could not be fetched.
    #[error("descriptor fetch failure: {0}")]
    DescriptorFetch(FetchError),
    /// A fetch of the registry, DID document or descriptor ran past the
    /// fetch or operation deadline.
    #[error("timeout: {0}")]
    Timeout(FetchError),
    /// The descriptor was fetched but did not verify.
    #[error("descriptor verification failed: {0}")]
    Verification(UrlVerifyError),
    /// The DID authority could not be resolved.
    #[error("DID resolution failure: {0}")]
    Did(DiscoveryError),
}

impl AgentResolveError {
    /// A stable code for reports.
    pub fn code(&self) -> &'static str {
        match self {
            AgentResolveError::BadUri(_) => "resolve.bad-uri",
            AgentResolveError::Dns(_) => "resolve.dns-failure",
            AgentResolveError::Ssrf(_) => "resolve.ssrf-refused",
            AgentResolveError::RegistryNotFound(_) => "resolve.registry-not-found",
            AgentResolveError::RegistryFetch(_) => "resolve.registry-fetch-failure",
            AgentResolveError::AgentNotFound { .. } => "resolve.agent-not-found",
            AgentResolveError::DescriptorFetch(_) => "resolve.descriptor-fetch-failure",
            AgentResolveError::Timeout(_) => "resolve.timeout",
            AgentResolveError::Verification(e) => e.code(),
            AgentResolveError::Did(_) => "resolve.did-failure",
        }
    }
}

fn classify_fetch(
    e: FetchError,
    other: impl FnOnce(FetchError) -> AgentResolveError,
) -> AgentResolveError {
    if e.is_refusal() {
        AgentResolveError::Ssrf(e)
    } else if matches!(e, FetchError::Dns { .. }) {
        AgentResolveError::Dns(e)
    } else if e.is_timeout() {
        AgentResolveError::Timeout(e)
    } else {
        other(e)
    }
}

/// Parse `agent://` or `agent+TRANSPORT://`.
///
/// # Errors
/// [`AgentResolveError`] when the URI is not an `agent://` URI, the registry or descriptor cannot
/// be fetched, or the descriptor does not verify.
pub fn parse_agent_uri(uri: &str) -> Result<AgentUri, AgentResolveError> {
    let bad = |m: &str| AgentResolveError::BadUri(format!("{uri}: {m}"));
    if uri.len() > 8 * 1024 || uri.chars().any(|c| c.is_control() || c == ' ') {
        return Err(bad("too long or contains spaces/control characters"));
    }
    let (scheme, rest) = uri.split_once("://").ok_or_else(|| bad("no \"://\""))?;
    let scheme = scheme.to_ascii_lowercase();
    let binding = match scheme.as_str() {
        "agent" => None,
        s => match s.strip_prefix("agent+") {
            Some(t) if !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphanumeric()) => {
                Some(t.to_owned())
            }
            _ => return Err(bad("scheme is not agent or agent+TRANSPORT")),
        },
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (auth, path) = rest.split_at(end);
    if auth.is_empty() || auth.contains('@') {
        return Err(bad("empty authority or userinfo"));
    }
    let lower = auth.to_ascii_lowercase();
    let is_did = lower.starts_with("did:") || lower.starts_with("did%3a");
    // Canonical form: every ':' of the DID percent-encoded (then "%25" for
    // a literal '%', e.g. did:web's "%3A" port separator). The convenience
    // form is the DID as written.
    let authority = if lower.starts_with("did%3a") {
        auth.replace("%3A", ":")
            .replace("%3a", ":")
            .replace("%25", "%")
    } else {
        auth.to_owned()
    };
    let agent = path
        .trim_start_matches('/')
        .split(['/', '?', '#'])
        .next()
        .unwrap_or("")
        .to_owned();
    if agent.is_empty() {
        return Err(bad("no agent name (first path segment)"));
    }
    Ok(AgentUri {
        binding,
        authority,
        is_did,
        agent,
        path: path.to_owned(),
    })
}

/// What [`resolve_agent`] found.
#[derive(Debug)]
#[non_exhaustive]
pub enum Resolution {
    /// A descriptor, fetched and checked by [`verify_url`](super::verify::verify_url).
    Descriptor {
        /// The registry (or DID document) URL consulted.
        registry: String,
        /// The descriptor URL.
        descriptor_url: String,
        /// The verification outcome.
        verified: Box<UrlVerified>,
    },
    /// No registry (404) but an explicit `agent+https` binding: the
    /// endpoint to invoke directly, with no descriptor (section 5.1).
    Direct {
        /// The endpoint.
        endpoint: String,
    },
}

/// Resolve `uri` and verify the descriptor with `opts`.
///
/// # Errors
/// [`AgentResolveError`] when the URI is not an `agent://` URI, the registry or descriptor cannot
/// be fetched, or the descriptor does not verify.
pub fn resolve_agent(
    fetcher: &Fetcher,
    uri: &str,
    opts: &UrlVerifyOptions,
) -> Result<Resolution, AgentResolveError> {
    Resolver::with_options(fetcher.clone(), opts.clone()).resolve(uri)
}

impl Resolver {
    /// Resolve `uri` (draft-narvaneni-agent-uri-03 section 5.1) and verify the descriptor found
    /// with this resolver's options; see [`resolve_agent`] and the module
    /// documentation.
    ///
    /// Every fetch (registry, DID document, descriptor, key discovery) is
    /// bounded by the fetcher's
    /// [`FetchPolicy::operation_timeout`](super::FetchPolicy::operation_timeout)
    /// in total.
    ///
    /// # Errors
    /// [`AgentResolveError`] when the URI is not an `agent://` URI, the registry or descriptor
    /// cannot be fetched, or the descriptor does not verify.
    pub fn resolve(&self, uri: &str) -> Result<Resolution, AgentResolveError> {
        self.fetcher().operation(|| self.resolve_inner(uri))
    }

    fn resolve_inner(&self, uri: &str) -> Result<Resolution, AgentResolveError> {
        let fetcher = self.fetcher();
        let u = parse_agent_uri(uri)?;
        let (registry, descriptor_url, did_authority) = if u.is_did {
            let (doc_url, endpoint) = descriptor_url_from_did(fetcher, &u)?;
            (
                doc_url,
                endpoint,
                Some(KeyAuthority::Did(u.authority.clone())),
            )
        } else {
            let registry = format!("https://{}/.well-known/agents.json", u.authority);
            let reg = match fetcher.get_cached(&registry, &[("accept", "application/json")]) {
                Ok(r) => r,
                Err(FetchError::Status { status: 404, .. }) => {
                    if u.binding.as_deref() == Some("https") {
                        return Ok(Resolution::Direct {
                            endpoint: format!("https://{}{}", u.authority, u.path),
                        });
                    }
                    return Err(AgentResolveError::RegistryNotFound(registry));
                }
                Err(e) => {
                    return Err(classify_fetch(e, |e| {
                        AgentResolveError::RegistryFetch(e.to_string())
                    }))
                }
            };
            let v: Value = serde_json::from_slice(&reg.body).map_err(|e| {
                AgentResolveError::RegistryFetch(format!("{registry}: not JSON: {e}"))
            })?;
            let agents = v.get("agents").and_then(Value::as_object).ok_or_else(|| {
                AgentResolveError::RegistryFetch(format!("{registry}: no \"agents\" object"))
            })?;
            let entry = agents
                .get(&u.agent)
                .and_then(Value::as_str)
                .ok_or_else(|| AgentResolveError::AgentNotFound {
                    agent: u.agent.clone(),
                    registry: registry.clone(),
                })?;
            let base = url::Url::parse(&reg.url)
                .map_err(|e| AgentResolveError::RegistryFetch(e.to_string()))?;
            let d = base.join(entry).map_err(|e| {
                AgentResolveError::RegistryFetch(format!(
                    "{registry}: bad descriptor URL {entry:?}: {e}"
                ))
            })?;
            (registry, d.to_string(), None)
        };
        match self.verify_url_with(&descriptor_url, did_authority.as_ref()) {
            Ok(v) => Ok(Resolution::Descriptor {
                registry,
                descriptor_url,
                verified: Box::new(v),
            }),
            Err(UrlVerifyError::Fetch(e)) => {
                Err(classify_fetch(e, AgentResolveError::DescriptorFetch))
            }
            Err(e) => Err(AgentResolveError::Verification(e)),
        }
    }
}

/// Section 4.3: the DID document's `AgentDescriptor` service.
fn descriptor_url_from_did(
    fetcher: &Fetcher,
    u: &AgentUri,
) -> Result<(String, String), AgentResolveError> {
    let did = u.authority.clone();
    let doc_url = crate::did::did_web_url(&did)
        .map_err(|e| AgentResolveError::Did(DiscoveryError::Did(e)))?;
    let f = fetcher
        .get_cached(
            &doc_url,
            &[("accept", "application/did+json, application/json")],
        )
        .map_err(|e| classify_fetch(e, |e| AgentResolveError::Did(DiscoveryError::Fetch(e))))?;
    let doc: Value = serde_json::from_slice(&f.body).map_err(|e| {
        AgentResolveError::Did(DiscoveryError::BadDocument {
            url: doc_url.clone(),
            message: format!("not JSON: {e}"),
        })
    })?;
    let id = doc.get("id").and_then(Value::as_str).unwrap_or("");
    if id != did {
        return Err(AgentResolveError::Did(DiscoveryError::DidIdMismatch {
            expected: did,
            got: id.to_owned(),
        }));
    }
    let is_agent_desc = |t: &Value| match t {
        Value::String(s) => s == "AgentDescriptor",
        Value::Array(a) => a.iter().any(|x| x.as_str() == Some("AgentDescriptor")),
        _ => false,
    };
    let endpoint = doc
        .get("service")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|s| s.get("type").is_some_and(is_agent_desc))
        .find_map(|s| s.get("serviceEndpoint").and_then(Value::as_str))
        .ok_or_else(|| AgentResolveError::AgentNotFound {
            agent: u.agent.clone(),
            registry: format!("{doc_url} (no AgentDescriptor service)"),
        })?;
    Ok((doc_url, endpoint.to_owned()))
}
