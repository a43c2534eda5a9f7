//! Web Bot Auth for servers (feature `server`;
//! draft-ietf-webbotauth-httpsig-protocol-00):
//!
//! * [`DirectoryPublisher`] serves the agent's key directory at
//!   `/.well-known/http-message-signatures-directory` (section 5.5), signed
//!   for each of the agent's own authorities it is configured with
//!   (Appendix B.1: the proof covers `"@authority";req`), the proofs kept
//!   per authority until half their validity is spent. `agentsig serve
//!   --web-bot-auth-key` uses it.
//! * [`BotAuthLayer`] verifies the Web Bot Auth signatures of incoming
//!   requests for an axum or hyper service: a verified request carries
//!   [`AgentIdentity::Verified`] as a request extension; unsigned and
//!   failed requests are refused with `401`, or passed as
//!   [`AgentIdentity::Anonymous`], as [`BotAuthConfig`] says. The gate is
//!   built for the site's own authorities ([`SiteAuthorities`]) and has an
//!   in-process replay store by default.

use super::layer::{retry_later, text_response, BoxError, SignedBody};
use crate::httpsig::{Message, SiteAuthorities};
use crate::keys::SigningKey;
use crate::webbotauth::directory::{
    directory_body, proof_headers, ProofError, DEFAULT_PROOF_LIFETIME,
};
use crate::webbotauth::{KeyDirectory, Status, VerifiedAgent, WebBotAuthVerifier, WELL_KNOWN_PATH};
use bytes::Bytes;
use http::{header, HeaderValue, Method, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, Full};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tower_layer::Layer;
use tower_service::Service;

/// Most authorities whose directory proofs are kept at once.
pub const MAX_AUTHORITIES: usize = 256;
/// Longest `Host` a directory proof is made for.
pub const MAX_AUTHORITY_LEN: usize = 255;

type Proofs = HashMap<String, (Vec<(String, String)>, i64, i64)>;

/// Serves the HTTP Message Signatures Directory of an agent's keys.
#[derive(Debug)]
pub struct DirectoryPublisher {
    keys: Vec<SigningKey>,
    body: Bytes,
    /// Validity of each directory proof, seconds (default 30 days).
    pub proof_lifetime: u64,
    /// The authorities the directory is served and signed for; another
    /// `Host` gets `421 Misdirected Request`. The proof covers
    /// `"@authority";req` (Appendix B.1), so a proof made for a `Host` an
    /// attacker chose can be re-hosted at that origin and pass there:
    /// [`SiteAuthorities::any`] (sign for whatever `Host` asks, bounded by
    /// [`MAX_AUTHORITIES`] cached proofs) only behind a proxy that forwards
    /// the agent's own hosts alone.
    authorities: SiteAuthorities,
    proofs: Mutex<Proofs>,
}

impl DirectoryPublisher {
    /// Publish these keys (the current one first, then keys kept during
    /// rotation, section 5.5.2) at `authorities`, the agent's own hosts: the
    /// directory is served and its proof signed for those only (see
    /// [`DirectoryPublisher::authorities`]). Shared secrets are refused.
    ///
    /// # Errors
    /// [`KeyError::InvalidKey`](crate::KeyError::InvalidKey) when any of `keys` is a shared
    /// secret (HMAC).
    pub fn new(
        keys: Vec<SigningKey>,
        authorities: SiteAuthorities,
    ) -> Result<DirectoryPublisher, crate::KeyError> {
        if keys.iter().any(|k| k.algorithm().is_symmetric()) {
            return Err(crate::KeyError::InvalidKey(
                "a shared secret cannot be published in a key directory".into(),
            ));
        }
        let vks: Vec<_> = keys.iter().map(|k| k.verifying_key()).collect();
        let body = Bytes::from(directory_body(&vks));
        Ok(DirectoryPublisher {
            keys,
            body,
            proof_lifetime: DEFAULT_PROOF_LIFETIME,
            authorities,
            proofs: Mutex::new(HashMap::new()),
        })
    }

    /// The authorities the directory is served and signed for.
    pub fn authorities(&self) -> &SiteAuthorities {
        &self.authorities
    }

    /// The directory body (a JWK Set).
    pub fn body(&self) -> &Bytes {
        &self.body
    }

    fn headers_for(&self, authority: &str, now: i64) -> Result<Vec<(String, String)>, ProofError> {
        if let Ok(map) = self.proofs.lock() {
            if let Some((h, created, expires)) = map.get(authority) {
                // Re-sign once half the validity is spent.
                if now < created + (expires - created) / 2 {
                    return Ok(h.clone());
                }
            }
        }
        let expires = now.saturating_add(i64::try_from(self.proof_lifetime).unwrap_or(i64::MAX));
        let refs: Vec<&SigningKey> = self.keys.iter().collect();
        let h = proof_headers(&self.body, authority, &refs, now, expires)?;
        if let Ok(mut map) = self.proofs.lock() {
            if map.len() >= MAX_AUTHORITIES {
                map.clear();
            }
            map.insert(authority.to_owned(), (h.clone(), now, expires));
        }
        Ok(h)
    }

    /// Answer a request for the directory: `GET` or `HEAD`, signed for the
    /// request's authority (its `Host`, or the URI authority).
    pub fn respond<B>(&self, req: &Request<B>) -> Response<Full<Bytes>> {
        let plain = |s: StatusCode, m: &str| {
            let mut r = Response::new(Full::new(Bytes::from(format!("{m}\n"))));
            *r.status_mut() = s;
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            r
        };
        if req.method() != Method::GET && req.method() != Method::HEAD {
            return plain(StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD");
        }
        let authority = req
            .uri()
            .authority()
            .map(|a| a.as_str().to_owned())
            .or_else(|| {
                req.headers()
                    .get(header::HOST)
                    .and_then(|h| h.to_str().ok())
                    .map(|h| h.trim().to_ascii_lowercase())
            });
        let Some(authority) = authority.filter(|a| {
            !a.is_empty()
                && a.len() <= MAX_AUTHORITY_LEN
                && a.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b".-:[]_".contains(&b))
        }) else {
            return plain(StatusCode::BAD_REQUEST, "no usable Host");
        };
        let scheme = req.uri().scheme_str().unwrap_or("https");
        if !self.authorities.admits(&authority, scheme) {
            return plain(
                StatusCode::MISDIRECTED_REQUEST,
                "this directory is not served for that Host",
            );
        }
        let h = match self.headers_for(
            &authority,
            crate::clock::Clock::now(&crate::clock::SystemClock),
        ) {
            Ok(h) => h,
            Err(e) if e.signer_unavailable() => {
                // A key in a PKCS#11 token that cannot sign now: fail
                // closed as signed responses do (src/server/layer), with
                // 503 and Retry-After (RFC 9110 sections 15.6.4 and
                // 10.2.3), never an unsigned directory; a later request
                // reconnects.
                tracing::warn!("key directory not signed, the signing token is unavailable: {e}");
                return retry_later(plain(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the directory's signing key is unavailable; try again",
                ));
            }
            Err(e) => {
                tracing::warn!("key directory not signed: {e}");
                return plain(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "directory signing failed",
                );
            }
        };
        let body = if req.method() == Method::HEAD {
            Bytes::new()
        } else {
            self.body.clone()
        };
        let mut r = Response::new(Full::new(body));
        for (n, v) in h {
            if let (Ok(n), Ok(v)) = (
                header::HeaderName::from_bytes(n.as_bytes()),
                HeaderValue::from_str(&v),
            ) {
                r.headers_mut().append(n, v);
            }
        }
        r.headers_mut()
            .insert(header::CONTENT_LENGTH, HeaderValue::from(self.body.len()));
        r.headers_mut().insert(
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        );
        r.headers_mut()
            .insert(header::VARY, HeaderValue::from_static("Host"));
        r
    }

    /// [`DirectoryPublisher::respond`] with the body type of the signing
    /// layer's responses.
    pub fn respond_boxed<B>(&self, req: &Request<B>) -> Response<SignedBody> {
        self.respond(req)
            .map(|b| b.map_err(|e| match e {}).boxed_unsync())
    }

    /// Whether `req` asks for the directory.
    pub fn matches<B>(req: &Request<B>) -> bool {
        req.uri().path() == WELL_KNOWN_PATH
    }
}

/// Who sent a request, as a request extension set by [`BotAuthLayer`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AgentIdentity {
    /// A Web Bot Auth signature verified: the agent and its key.
    Verified(VerifiedAgent),
    /// No signature, or one that did not verify (when the configuration
    /// admits such requests); holds the reason code, if any.
    Anonymous(Option<&'static str>),
}

/// What [`BotAuthLayer`] does.
#[derive(Clone)]
#[non_exhaustive]
pub struct BotAuthConfig {
    /// The profile verifier (policy, replay store). [`BotAuthConfig::new`]
    /// gives it an in-process replay store when it has none.
    pub verifier: WebBotAuthVerifier,
    /// Where key sets come from (`crate::net::webbotauth::DirectoryClient`
    /// to fetch them, or a [`crate::webbotauth::StaticDirectory`]).
    pub directory: Arc<dyn KeyDirectory>,
    /// The site's own authorities: a signature is accepted only when the
    /// authority it covers is one of them, whatever `Host` says (RFC 9421
    /// section 7.2.1). [`BotAuthLayer::new`] writes them into the
    /// verifier's [`Policy::authorities`](crate::webbotauth::Policy::authorities),
    /// replacing what was there.
    pub authorities: SiteAuthorities,
    /// Admit requests without a web-bot-auth signature as anonymous
    /// (default true); else answer `401`.
    pub admit_unsigned: bool,
    /// Admit requests whose signature failed as anonymous (default false:
    /// answer `401` with the reason code).
    pub admit_invalid: bool,
    /// Largest request body buffered (for a covered `content-digest`).
    pub max_body: usize,
    /// Scheme of requests whose URI has none.
    pub scheme: &'static str,
    /// Total time the verification of one request may spend fetching key
    /// sets (every fetch it makes ends by then; default 10 s), so that a
    /// request naming slow directories cannot hold a worker for long. The
    /// key sets of its labels are fetched concurrently, each under the whole
    /// of it ([`crate::webbotauth::KeyDirectory::key_sets`]).
    pub verify_deadline: std::time::Duration,
}

impl std::fmt::Debug for BotAuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BotAuthConfig")
            .field("authorities", &self.authorities)
            .field("admit_unsigned", &self.admit_unsigned)
            .field("admit_invalid", &self.admit_invalid)
            .finish_non_exhaustive()
    }
}

impl BotAuthConfig {
    /// A gate for the site serving `authorities`: a request an agent signed
    /// for another site is refused (`wrong-authority`) even when it arrives
    /// with that site's `Host`, which a server answering for any `Host`
    /// would otherwise accept (RFC 9421 section 7.2.1). Give
    /// [`SiteAuthorities::any`] only when the application checks the
    /// authority itself.
    ///
    /// Defaults: unsigned requests admitted as anonymous, failed ones
    /// refused, 1 MiB bodies, `https`, and, when `verifier` has no replay
    /// store, a bounded in-process one
    /// ([`MemoryReplayStore`](crate::replay::MemoryReplayStore)), so that a
    /// signature with a `nonce` is accepted once (RFC 9421 section 7.2.2).
    /// A fleet of gates shares one store instead (`agentsig::replay::open_store`),
    /// and fetches each agent's key directory once for the whole fleet when
    /// `directory` is a `DirectoryClient` over a fetcher with a fleet
    /// key-set cache (`Fetcher::with_fleet_cache`, `agentsig::net::fleet`).
    pub fn new(
        verifier: WebBotAuthVerifier,
        directory: Arc<dyn KeyDirectory>,
        authorities: SiteAuthorities,
    ) -> BotAuthConfig {
        let verifier = if verifier.has_replay_store() {
            verifier
        } else {
            verifier.with_replay_store(Arc::new(crate::replay::MemoryReplayStore::new()))
        };
        BotAuthConfig {
            verifier,
            directory,
            authorities,
            admit_unsigned: true,
            admit_invalid: false,
            max_body: super::verify::DEFAULT_MAX_REQUEST_BODY,
            scheme: "https",
            verify_deadline: std::time::Duration::from_secs(10),
        }
    }
}

/// A tower layer verifying Web Bot Auth request signatures.
#[derive(Clone, Debug)]
pub struct BotAuthLayer {
    cfg: Arc<BotAuthConfig>,
}

impl BotAuthLayer {
    /// A layer with this configuration; its
    /// [`authorities`](BotAuthConfig::authorities) become the verifier's.
    pub fn new(mut cfg: BotAuthConfig) -> BotAuthLayer {
        cfg.verifier.policy.authorities = cfg.authorities.to_policy();
        BotAuthLayer { cfg: Arc::new(cfg) }
    }
}

impl<S> Layer<S> for BotAuthLayer {
    type Service = BotAuthService<S>;
    fn layer(&self, inner: S) -> BotAuthService<S> {
        BotAuthService {
            inner,
            cfg: self.cfg.clone(),
        }
    }
}

/// The service produced by [`BotAuthLayer`]; the wrapped service receives
/// `Request<Full<Bytes>>` with an [`AgentIdentity`] extension.
#[derive(Clone, Debug)]
pub struct BotAuthService<S> {
    inner: S,
    cfg: Arc<BotAuthConfig>,
}

impl<S, ReqB, ResB> Service<Request<ReqB>> for BotAuthService<S>
where
    S: Service<Request<Full<Bytes>>, Response = Response<ResB>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send,
    ReqB: Body + Send + 'static,
    ReqB::Data: Send,
    ReqB::Error: Into<BoxError>,
    ResB: Body + Send + 'static,
    ResB::Data: Send,
    ResB::Error: Into<BoxError>,
{
    type Response = Response<SignedBody>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<ReqB>) -> Self::Future {
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let cfg = self.cfg.clone();
        Box::pin(async move {
            // `@authority` is taken from the request target; a `Host` the
            // inner service routes by must name the same authority, or a
            // request signed for one site could be replayed to another
            // (RFC 9110 section 7.2, RFC 9421 section 2.2.3).
            let req = match super::verify::buffered(req, cfg.max_body, cfg.scheme).await {
                Ok(req) => req,
                Err(refused) => return Ok(refused),
            };
            let identity = match Message::from_request(&req, cfg.scheme) {
                Err(_) => Err("malformed-request"),
                Ok(m) => {
                    let c = cfg.clone();
                    let now = crate::clock::Clock::now(&crate::clock::SystemClock);
                    // A request with no web-bot-auth signature, or whose
                    // signatures fail a check needing no key, is decided
                    // here: it never waits for a blocking thread that
                    // requests naming slow directories may all hold.
                    let decided = cfg.verifier.decide_without_keys(&m, now);
                    // The directory may fetch over the network (blocking I/O).
                    let report = if let Some(r) = decided {
                        Ok(r)
                    } else {
                        tokio::task::spawn_blocking(move || {
                            let verify = || c.verifier.verify(&m, c.directory.as_ref(), now);
                            #[cfg(feature = "net")]
                            let r = crate::net::fetch::with_deadline(
                                std::time::Instant::now() + c.verify_deadline,
                                verify,
                            );
                            #[cfg(not(feature = "net"))]
                            let r = verify();
                            r
                        })
                        .await
                    };
                    match report {
                        Err(_) => Err("verification-failed"),
                        Ok(r) => match (r.status(), r.verified()) {
                            (Status::Verified, Some(v)) => Ok(AgentIdentity::Verified(v.clone())),
                            (Status::Unverified, _) if cfg.admit_unsigned => {
                                Ok(AgentIdentity::Anonymous(None))
                            }
                            (Status::Unverified, _) => Err("no-web-bot-auth-signature"),
                            _ => {
                                let code = r.first_error().map_or("invalid", |e| e.code());
                                if cfg.admit_invalid {
                                    Ok(AgentIdentity::Anonymous(Some(code)))
                                } else {
                                    Err(code)
                                }
                            }
                        },
                    }
                }
            };
            match identity {
                Ok(id) => {
                    let (mut parts, bytes) = req.into_parts();
                    parts.extensions.insert(id);
                    let res = inner
                        .call(Request::from_parts(parts, Full::new(bytes)))
                        .await?;
                    Ok(res.map(super::verify::boxed))
                }
                Err(code) => {
                    tracing::info!("web bot auth refused: {code}");
                    Ok(text_response(
                        StatusCode::UNAUTHORIZED,
                        &format!("web bot auth: not verified ({code})"),
                    ))
                }
            }
        })
    }
}

/// A tower layer for HTTP clients (a hyper client, or any
/// `Service<Request<B>>`): every outgoing request is signed under the Web
/// Bot Auth profile with a fresh `created` and `nonce`, and gets its
/// `Signature-Agent`, `Signature-Input` and `Signature` fields. The body is
/// not read, so `content-digest` is not covered, and a verifier with the
/// default [`Policy::require_content_digest`](crate::webbotauth::Policy::require_content_digest)
/// refuses such a request when it has content: sign requests with content
/// through [`crate::webbotauth::sign_request`], which covers
/// `content-digest` ([`SignOptions::content_digest`](crate::webbotauth::SignOptions::content_digest)).
#[derive(Clone, Debug)]
pub struct AgentSignLayer {
    key: Arc<SigningKey>,
    template: crate::webbotauth::SignOptions,
}

impl AgentSignLayer {
    /// Sign with `key` for the agent at `signature_agent` (its origin or JWK
    /// Set URL). The URL and key are checked here, so a request never fails
    /// to sign for a reason known in advance.
    ///
    /// # Errors
    /// [`Error::AgentUrl`](crate::webbotauth::Error::AgentUrl) when `signature_agent` is not a
    /// usable `https` URL (see [`resolve_agent_url`](crate::webbotauth::resolve_agent_url));
    /// [`Error::Sign`](crate::webbotauth::Error::Sign) when `key` is a shared secret (HMAC), or
    /// when signing a probe request fails (the system random number generator, for its nonce, or
    /// the key cannot sign).
    pub fn new(
        key: SigningKey,
        signature_agent: &str,
    ) -> Result<AgentSignLayer, crate::webbotauth::Error> {
        let template = crate::webbotauth::SignOptions::new(signature_agent, 0);
        let mut probe = Request::get("https://probe.invalid/")
            .body(Vec::new())
            .map_err(|e| crate::webbotauth::Error::Sign(e.to_string()))?;
        crate::webbotauth::sign_request(&mut probe, "https", &key, &template)?;
        Ok(AgentSignLayer {
            key: Arc::new(key),
            template,
        })
    }

    /// Change the lifetime of each signature (default 5 minutes, at most 24 h).
    pub fn lifetime(mut self, seconds: u64) -> AgentSignLayer {
        self.template.lifetime = seconds.clamp(1, crate::webbotauth::MAX_LIFETIME);
        self
    }
}

impl<S> Layer<S> for AgentSignLayer {
    type Service = AgentSignService<S>;
    fn layer(&self, inner: S) -> AgentSignService<S> {
        AgentSignService {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service produced by [`AgentSignLayer`].
#[derive(Clone, Debug)]
pub struct AgentSignService<S> {
    inner: S,
    layer: AgentSignLayer,
}

impl<S, B> Service<Request<B>> for AgentSignService<S>
where
    S: Service<Request<B>>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, mut req: Request<B>) -> Self::Future {
        let mut o = self.layer.template.clone();
        o.created = crate::clock::Clock::now(&crate::clock::SystemClock);
        // The signature base needs the head only: sign a bodiless copy.
        let mut head = Request::new(Vec::<u8>::new());
        *head.method_mut() = req.method().clone();
        *head.uri_mut() = req.uri().clone();
        *head.headers_mut() = req.headers().clone();
        match crate::webbotauth::sign_request(&mut head, "https", &self.layer.key, &o) {
            Ok(_) => {
                *req.headers_mut() = std::mem::take(head.headers_mut());
                let fut = self.inner.call(req);
                Box::pin(async move { fut.await.map_err(Into::into) })
            }
            Err(e) => Box::pin(async move { Err(Box::new(e) as BoxError) }),
        }
    }
}
