//! A tower [`Layer`] that signs every response of the service it wraps:
//! RFC 9530 `Content-Digest` over the exact bytes sent, then an RFC 9421
//! signature (section 3.1) covering `@status`, `content-type` (when the
//! response has one) and `content-digest`, with `created`, `keyid` and
//! `alg` (section 2.3): the default signature, always present under
//! [`SignConfig::label`].
//!
//! `Accept-Signature` (RFC 9421 section 5) is honoured only when
//! [`SignConfig::accept_signature`] is on (off by default; on in `agentsig
//! serve`), and then only as extra signatures beside the default one:
//! * a member is signed only if it covers the layer's mandatory set
//!   (`@status`, `content-type` when the response has one, and
//!   `content-digest`, as response components), so no requested signature
//!   fits another response (draft-narvaneni-agent-uri-03 section 10.3);
//! * a member labelled like the default signature is skipped (the default
//!   signature is never replaced or removed);
//! * a member the signer cannot honour (a component the response or the
//!   related request lacks, `;req` on `@status`, a derived request
//!   component without `;req`, another key or algorithm...) is skipped:
//!   the response is still a `200` with the default signature;
//! * a requested `tag` is dropped unless listed in
//!   [`SignConfig::allowed_tags`] (a tag names the application a signature
//!   is for, RFC 9421 section 2.3; the server decides which it issues);
//! * at most [`MAX_ACCEPTED`] members are considered.
//!
//! With `Accept-Signature` support on, every signed response (and every
//! `304`) carries `Vary: Accept-Signature` (RFC 9110 section 12.5.5), and one carrying a
//! requested signature (made for one request: its `created`, `nonce` and
//! `;req` components) gets `Cache-Control: no-store` (RFC 9111 section
//! 5.2.2.5) so that no shared cache hands it to another client.
//!
//! The default signature depends only on the status, the `Content-Type`,
//! the body's bytes, the key and `created` (one-second resolution), so the
//! layer computes the `Content-Digest` once per body and the default
//! signature at most once per (body, key, second), shared by every
//! connection through the clones of one [`SignLayer`] (see [`SignCache`]).
//! A cached signature is served only within the second it was `created`
//! in ([`SignConfig::clock`]) and only over the very bytes it was made
//! for; a signature requested through `Accept-Signature` is shared only
//! with requests whose label and signature base are byte for byte the
//! same in the same second (the same covered response and `;req` request
//! component values) and never when a `nonce` is requested: otherwise it
//! is made for the request. The parse of an `Accept-Signature` value is
//! kept per exact value (a few values, see [`SignCache`]); the request and
//! the response are modelled with only the fields the requested
//! components name.
//!
//! The body is buffered up to [`SignConfig::max_body`]. A body that is
//! larger, or of unknown length (streaming), is handled by
//! [`Unsignable`]: refused (a 500 in place of the response, the default) or
//! passed through unsigned and untouched. A response is never signed over
//! bytes other than the ones sent: a body that turns out longer than its
//! size hint, or that fails while being read, becomes a 500.

mod accept;
mod cache;

use self::accept::{requested_model, Accepted, ParsedAccept, RequestedFields};
use self::cache::{DefaultKey, DefaultSignature};
pub use self::cache::{SignCache, ACCEPT_MAX_FIELD, ACCEPT_SLOTS};
use super::keys::KeyRing;
use crate::clock::{Clock, SystemClock};
use crate::httpsig::components::ComponentId;
use bytes::{Buf, Bytes};
use http::{header, HeaderValue, Method, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::{combinators::UnsyncBoxBody, BodyExt, Full, Limited};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tower_layer::Layer;
use tower_service::Service;

/// The error type of the boxed bodies this module produces.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The response body of a [`SignService`]: the buffered, signed bytes, or
/// (under [`Unsignable::PassUnsigned`]) the inner body untouched.
pub type SignedBody = UnsyncBoxBody<Bytes, BoxError>;

/// Default largest body buffered for signing: 1 MiB.
pub const DEFAULT_MAX_BODY: usize = 1024 * 1024;

/// Most `Accept-Signature` members honoured on one request.
pub const MAX_ACCEPTED: usize = 4;

/// What to do with a response whose body cannot be buffered within
/// [`SignConfig::max_body`] (too large, or streaming without a length).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Unsignable {
    /// Replace it with a `500 Internal Server Error` saying why (default):
    /// a client that requires signatures never sees it unsigned.
    #[default]
    Refuse,
    /// Send it as it is, without `Content-Digest` or signature.
    PassUnsigned,
}

/// What the signing layer does; shared by every clone of the service.
#[derive(Clone, Debug)]
pub struct SignConfig {
    /// The keys; the current one signs.
    pub keys: Arc<KeyRing>,
    /// Label of the default signature (`sig1`).
    pub label: String,
    /// Largest body buffered, in bytes.
    pub max_body: usize,
    /// Policy for bodies larger than `max_body` or of unknown length.
    pub unsignable: Unsignable,
    /// Seconds until `expires`; `None` (default) sends no `expires`.
    pub expires_in: Option<i64>,
    /// Lifetime given when an `Accept-Signature` member requests `expires`.
    pub accept_lifetime: i64,
    /// Scheme assumed for the related request (`;req` components,
    /// `@scheme`) when its URI has none: `https` or `http`.
    pub scheme: &'static str,
    /// Honour `Accept-Signature` (RFC 9421 section 5) with extra
    /// signatures under the rules of this module; `false` (default) signs
    /// the default signature only.
    pub accept_signature: bool,
    /// `tag` values a requester may have put on a requested signature;
    /// any other requested `tag` is dropped. Empty by default.
    pub allowed_tags: Vec<String>,
    /// The time source of `created` (and of the signature cache's
    /// one-second validity); the system clock by default.
    pub clock: Arc<dyn Clock>,
}

impl SignConfig {
    /// Defaults: label `sig1`, 1 MiB bound, refuse unsignable bodies, no
    /// `expires`, `https`, `Accept-Signature` not honoured.
    pub fn new(keys: Arc<KeyRing>) -> SignConfig {
        SignConfig {
            keys,
            label: "sig1".to_owned(),
            max_body: DEFAULT_MAX_BODY,
            unsignable: Unsignable::Refuse,
            expires_in: None,
            accept_lifetime: 300,
            scheme: "https",
            accept_signature: false,
            allowed_tags: Vec::new(),
            clock: Arc::new(SystemClock),
        }
    }
}

/// The tower layer: `ServiceBuilder::new().layer(SignLayer::new(keys))`.
#[derive(Clone, Debug)]
pub struct SignLayer {
    cfg: Arc<SignConfig>,
    cache: Arc<SignCache>,
}

impl SignLayer {
    /// Sign with the current key of `keys`, default settings.
    pub fn new(keys: Arc<KeyRing>) -> SignLayer {
        SignLayer::with_config(SignConfig::new(keys))
    }
    /// Sign with explicit settings.
    pub fn with_config(cfg: SignConfig) -> SignLayer {
        SignLayer {
            cfg: Arc::new(cfg),
            cache: Arc::new(SignCache::default()),
        }
    }
}

impl<S> Layer<S> for SignLayer {
    type Service = SignService<S>;
    fn layer(&self, inner: S) -> SignService<S> {
        SignService {
            inner,
            cfg: self.cfg.clone(),
            cache: self.cache.clone(),
        }
    }
}

/// The service produced by [`SignLayer`].
#[derive(Clone, Debug)]
pub struct SignService<S> {
    inner: S,
    cfg: Arc<SignConfig>,
    cache: Arc<SignCache>,
}

/// What the signer keeps of the request: its method, and its
/// `Accept-Signature` with what its `;req` components read.
struct RequestHead {
    method: Method,
    accepted: Option<Accepted>,
}

/// Read the `Accept-Signature` of a request (when it has one), through
/// `cache` when given, and model the request for its `;req` components.
fn accepted(
    cfg: &SignConfig,
    cache: Option<&SignCache>,
    method: &Method,
    uri: &http::Uri,
    headers: &http::HeaderMap,
) -> Option<Accepted> {
    let mut lines = headers.get_all("accept-signature").iter();
    let first = lines.next()?;
    let parsed = match (lines.next(), cache) {
        (None, Some(c)) => c.accept_parsed(first.as_bytes()),
        _ => {
            let all: Vec<&[u8]> = headers
                .get_all("accept-signature")
                .iter()
                .map(|v| v.as_bytes())
                .collect();
            Arc::new(ParsedAccept::parse(&all.join(&b", "[..])))
        }
    };
    let rel = match &parsed.members {
        Ok(m) if !m.is_empty() => {
            crate::httpsig::Message::from_request_head(method, uri, headers, cfg.scheme, &|n| {
                parsed.req_fields.contains(n)
            })
            .ok()
        }
        _ => None,
    };
    Some(Accepted { parsed, rel })
}

/// Lock a slot; a poisoned slot only means another request panicked while
/// holding it, and its entry is checked or replaced as any other.
fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

impl<S, ReqB, ResB> Service<Request<ReqB>> for SignService<S>
where
    S: Service<Request<ReqB>, Response = Response<ResB>>,
    S::Future: Send + 'static,
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
        let accepted = if self.cfg.accept_signature {
            accepted(
                &self.cfg,
                Some(&self.cache),
                req.method(),
                req.uri(),
                req.headers(),
            )
        } else {
            None
        };
        let head = RequestHead {
            method: req.method().clone(),
            accepted,
        };
        let fut = self.inner.call(req);
        let cfg = self.cfg.clone();
        let cache = self.cache.clone();
        Box::pin(async move {
            let res = fut.await?;
            Ok(sign_response(&cfg, &cache, res, &head).await)
        })
    }
}

/// Statuses whose responses are signed: 2xx with content (not 204 or 206).
pub fn signs_status(s: StatusCode) -> bool {
    s.is_success() && s != StatusCode::NO_CONTENT && s != StatusCode::PARTIAL_CONTENT
}

fn to_bytes_body<B>(b: B) -> SignedBody
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    b.map_frame(|f| f.map_data(|mut d| d.copy_to_bytes(d.remaining())))
        .map_err(Into::into)
        .boxed_unsync()
}

fn full(b: Bytes) -> SignedBody {
    Full::new(b).map_err(|e| match e {}).boxed_unsync()
}

/// A plain-text error response (never signed).
pub(crate) fn text_response(status: StatusCode, msg: &str) -> Response<SignedBody> {
    let mut r = Response::new(full(Bytes::from(format!("{msg}\n"))));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// `r` as an answer to come back later: 503 with `Retry-After: 1` (RFC
/// 9110 sections 15.6.4 and 10.2.3), what a response or a key directory
/// whose signing key cannot sign now (a PKCS#11 token away) gets.
pub(crate) fn retry_later<B>(mut r: Response<B>) -> Response<B> {
    *r.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    r
}

async fn sign_response<B>(
    cfg: &SignConfig,
    cache: &SignCache,
    res: Response<B>,
    head: &RequestHead,
) -> Response<SignedBody>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    if !signs_status(res.status()) {
        let mut res = res;
        // A 304 carries the Vary its 200 would have (RFC 9110 section
        // 15.4.5).
        if cfg.accept_signature && res.status() == StatusCode::NOT_MODIFIED {
            add_vary(res.headers_mut());
        }
        return res.map(to_bytes_body);
    }
    let hint = res.body().size_hint();
    let fits = matches!(hint.upper(), Some(u) if u <= cfg.max_body as u64);
    if !fits {
        return match cfg.unsignable {
            Unsignable::PassUnsigned => {
                tracing::debug!("response body too large or streaming: passed unsigned");
                res.map(to_bytes_body)
            }
            Unsignable::Refuse => text_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                "response body too large or of unknown length to sign; refused",
            ),
        };
    }
    let (mut parts, body) = res.into_parts();
    let bytes = match Limited::new(body, cfg.max_body).collect().await {
        Ok(c) => c.to_bytes(),
        Err(e) => {
            tracing::warn!("response body could not be read for signing: {e}");
            return text_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                "response body could not be read for signing",
            );
        }
    };
    // A HEAD response without its content: its digest is unknown here.
    if head.method == Method::HEAD && bytes.is_empty() {
        let declared = parts
            .headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.unwrap_or(0) != 0 {
            return Response::from_parts(parts, full(bytes));
        }
    }
    match sign_parts_with(cfg, Some(cache), &mut parts, &bytes, head.accepted.as_ref()) {
        Ok(()) => Response::from_parts(parts, full(bytes)),
        Err(e) if e.signer_unavailable() => {
            // A key in a PKCS#11 token that cannot sign now (the token or
            // its login is gone and a reconnect failed): fail closed with
            // 503 and Retry-After (RFC 9110 sections 15.6.4 and 10.2.3); a
            // later request reconnects.
            tracing::warn!("response not signed, the signing token is unavailable: {e}");
            retry_later(text_response(
                StatusCode::SERVICE_UNAVAILABLE,
                "the signing key's token is unavailable; try again",
            ))
        }
        Err(e) => {
            tracing::warn!("response not signed: {e}");
            text_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the response could not be signed",
            )
        }
    }
}

/// Why a response could not be signed.
#[derive(Debug, thiserror::Error)]
pub enum SignResponseError {
    /// The header block cannot be modelled (RFC 9421 section 2).
    #[error(transparent)]
    Message(#[from] crate::httpsig::MessageError),
    /// Signing failed (a label collision, a key failure...).
    #[error(transparent)]
    Sign(#[from] crate::httpsig::SignError),
    /// The response already carries the layer's label.
    #[error("the response already carries a signature labelled {0:?}")]
    LabelTaken(String),
}

impl SignResponseError {
    /// True when the key's holder (a PKCS#11 token) failed to sign: a
    /// condition that passes, answered with 503, not 500.
    pub fn signer_unavailable(&self) -> bool {
        matches!(self, SignResponseError::Sign(e) if e.signer_unavailable())
    }
}

/// Add `Content-Digest`, `Content-Length` and the signatures to a response
/// head whose content is `body`. `related` is the request (for
/// `Accept-Signature` and `;req` components). Signs afresh every time; the
/// [`SignLayer`] shares its default signatures through a [`SignCache`].
///
/// # Errors
/// [`SignResponseError`] when the response cannot be read or signed.
pub fn sign_parts(
    cfg: &SignConfig,
    parts: &mut http::response::Parts,
    body: &[u8],
    related: Option<&Request<Vec<u8>>>,
) -> Result<(), SignResponseError> {
    let accepted = match related {
        Some(r) if cfg.accept_signature => accepted(cfg, None, r.method(), r.uri(), r.headers()),
        _ => None,
    };
    sign_parts_with(
        cfg,
        None,
        parts,
        &Bytes::copy_from_slice(body),
        accepted.as_ref(),
    )
}

/// [`sign_parts`], taking the digest and the default signature from
/// `cache` when it holds them for these bytes in the current second.
fn sign_parts_with(
    cfg: &SignConfig,
    cache: Option<&SignCache>,
    parts: &mut http::response::Parts,
    body: &Bytes,
    accepted: Option<&Accepted>,
) -> Result<(), SignResponseError> {
    if parts.headers.contains_key("signature-input") {
        return Err(SignResponseError::LabelTaken(cfg.label.clone()));
    }
    let current = cfg.keys.current();
    let t = cfg.clock.now();
    let content_type = parts.headers.get(header::CONTENT_TYPE).cloned();
    let key = DefaultKey {
        status: parts.status,
        content_type: content_type.as_ref(),
        body,
    };
    // A Content-Type sent on several field lines is signed as their
    // combination (RFC 9421 section 2.1): signed from the whole head, not
    // cached.
    let one_type = parts
        .headers
        .get_all(header::CONTENT_TYPE)
        .iter()
        .nth(1)
        .is_none();
    let default = match cache {
        Some(c) if one_type => c.get_or_sign(cfg, &current, t, &key)?,
        _ => DefaultSignature::make(cfg, &current, t, &key, None, Some(&parts.headers))?,
    };
    let h = &mut parts.headers;
    h.insert(
        header::HeaderName::from_static("content-digest"),
        default.digest.clone(),
    );
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
    let requested = match accepted {
        Some(a) => a.parsed.prepared(cfg, &current, t, content_type.is_some()),
        None => Arc::new(Vec::new()),
    };
    if cfg.accept_signature {
        add_vary(&mut parts.headers);
    }
    let mut extra = Vec::new();
    if let (Some(a), false) = (accepted, requested.is_empty()) {
        // Made for one request: never stored for another (RFC 9111
        // section 5.2.2.5). Modelled with it, since a member may cover
        // it, and set only if some member is signed.
        let msg = requested_model(parts.status, &parts.headers, &a.parsed.res_fields)?;
        for p in requested.iter() {
            let signed = match (&p.params_value, cache) {
                (Err(e), _) => Err(e.clone()),
                (Ok(pv), Some(c)) if !p.nonce => {
                    c.requested_signature(&current, t, &msg, a.rel.as_ref(), &p.spec, pv)
                }
                (Ok(pv), _) => RequestedFields::sign(&current, &msg, a.rel.as_ref(), &p.spec, pv),
            };
            match signed {
                Ok(s) => extra.push(s),
                Err(e) => {
                    tracing::debug!(
                        "Accept-Signature member {:?} not honoured: {e}",
                        p.spec.label
                    )
                }
            }
        }
        if !extra.is_empty() {
            parts
                .headers
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        }
    }
    let h = &mut parts.headers;
    h.append(
        header::HeaderName::from_static("signature-input"),
        default.input.clone(),
    );
    h.append(
        header::HeaderName::from_static("signature"),
        default.signature.clone(),
    );
    for s in extra {
        h.append(header::HeaderName::from_static("signature-input"), s.input);
        h.append(header::HeaderName::from_static("signature"), s.signature);
    }
    Ok(())
}

/// The components every signature of this layer covers: `@status`,
/// `content-type` (when present) and `content-digest` (draft-narvaneni-agent-uri-03 section
/// 10.3).
fn mandatory(content_type: bool) -> Vec<ComponentId> {
    let mut c = vec![ComponentId::derived(crate::httpsig::Derived::Status)];
    if content_type {
        c.extend(ComponentId::field("content-type").ok());
    }
    c.extend(ComponentId::field("content-digest").ok());
    c
}

/// Add `Accept-Signature` to `Vary` (RFC 9110 section 12.5.5), keeping
/// what the inner service listed.
fn add_vary(headers: &mut http::HeaderMap) {
    let listed = headers
        .get_all(header::VARY)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| t.trim() == "*" || t.trim().eq_ignore_ascii_case("accept-signature"));
    if !listed {
        headers.append(header::VARY, HeaderValue::from_static("accept-signature"));
    }
}

#[cfg(test)]
mod tests {
    use super::cache::slot_of;
    use super::*;
    use crate::httpsig::HttpPolicy;
    use crate::trust::{KeySource, StaticKeys};
    use crate::verifier::Verifier;
    use crate::verifier::{VerifyHttp, VerifyHttpResponse};
    use crate::{Algorithm, SigningKey};
    use tower::{service_fn, ServiceExt};

    fn ring() -> Arc<KeyRing> {
        let k = SigningKey::generate(Algorithm::EcdsaP256Sha256).unwrap();
        Arc::new(KeyRing::single(k).unwrap())
    }

    fn verifier(ring: &KeyRing) -> Verifier {
        let mut keys = StaticKeys::new();
        for k in ring.all() {
            keys = keys.with(k.key.verifying_key().clone(), KeySource::Pinned);
        }
        Verifier::builder(keys)
            .http(HttpPolicy::descriptor_response())
            .build()
    }

    async fn run(
        layer: SignLayer,
        req: Request<()>,
        body: &'static [u8],
    ) -> (http::response::Parts, Bytes) {
        let svc = layer.layer(service_fn(|_r: Request<()>| async move {
            let mut r = Response::new(Full::new(Bytes::from_static(body)));
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            Ok::<_, std::convert::Infallible>(r)
        }));
        let res = svc.oneshot(req).await.unwrap();
        let (p, b) = res.into_parts();
        (p, b.collect().await.unwrap().to_bytes())
    }

    #[tokio::test]
    async fn signed_response_verifies_with_the_library_verifier() {
        let ring = ring();
        let (parts, body) = run(
            SignLayer::new(ring.clone()),
            Request::new(()),
            br#"{"name":"a"}"#,
        )
        .await;
        assert_eq!(parts.status, 200);
        assert_eq!(body.as_ref(), br#"{"name":"a"}"#);
        let res = Response::from_parts(parts, body.to_vec());
        let report = res.verify_signature(&verifier(&ring)).unwrap();
        assert!(report.all_valid());
        let si = res.headers()["signature-input"].to_str().unwrap();
        assert!(
            si.starts_with(r#"sig1=("@status" "content-type" "content-digest");created="#),
            "{si}"
        );
        assert!(si.contains(&format!("keyid=\"{}\"", ring.current().keyid)));
    }

    /// A token that does not answer a reconnect (the wait for it timed
    /// out): the response is not sent unsigned but answered 503 with
    /// Retry-After (RFC 9110 sections 15.6.4 and 10.2.3).
    #[cfg(feature = "pkcs11")]
    #[tokio::test]
    async fn a_hung_token_is_answered_503_with_retry_after() {
        use crate::keys::pkcs11::{failing_key, Pkcs11Error};
        let k = failing_key(Pkcs11Error::TimedOut("a reconnect did not return".into()));
        let ring = Arc::new(KeyRing::single(k).unwrap());
        let (parts, body) = run(SignLayer::new(ring), Request::new(()), br#"{"name":"a"}"#).await;
        assert_eq!(parts.status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(parts.headers[header::RETRY_AFTER], "1");
        assert!(!parts.headers.contains_key("signature"));
        assert!(!body.as_ref().starts_with(br#"{"name""#));
    }

    #[tokio::test]
    async fn tampered_body_does_not_verify() {
        let ring = ring();
        let (parts, _) = run(
            SignLayer::new(ring.clone()),
            Request::new(()),
            br#"{"name":"a"}"#,
        )
        .await;
        let res = Response::from_parts(parts, br#"{"name":"b"}"#.to_vec());
        assert!(res.verify_signature(&verifier(&ring)).is_err());
    }

    #[tokio::test]
    async fn accept_signature_adds_a_req_bound_signature() {
        let ring = ring();
        let req = Request::builder()
            .method("GET")
            .uri("https://example.com/agent.json")
            .header(
                "accept-signature",
                r#"sig2=("@status" "content-type" "content-digest" "@method";req "@authority";req);nonce="n1""#,
            )
            .body(())
            .unwrap();
        let related = Request::builder()
            .method("GET")
            .uri("https://example.com/agent.json")
            .body(Vec::new())
            .unwrap();
        let (parts, body) = run(accepting(&ring), req, b"{}").await;
        let res = Response::from_parts(parts, body.to_vec());
        let v = verifier(&ring);
        let report = res.verify_signature_for(&related, &v).unwrap();
        assert!(report.get("sig1").unwrap().is_valid());
        assert!(report.get("sig2").unwrap().is_valid());
        // Another request: the ;req-bound signature no longer verifies.
        let other = Request::builder()
            .method("GET")
            .uri("https://evil.example/agent.json")
            .body(Vec::new())
            .unwrap();
        let report = match res.verify_signature_for(&other, &v) {
            Ok(r) => r,
            Err(e) => e.report().cloned().unwrap(),
        };
        assert!(!report.get("sig2").unwrap().is_valid());
    }

    fn accepting(ring: &Arc<KeyRing>) -> SignLayer {
        let mut cfg = SignConfig::new(ring.clone());
        cfg.accept_signature = true;
        SignLayer::with_config(cfg)
    }

    fn asking(accept: &str) -> Request<()> {
        Request::builder()
            .uri("https://example.com/agent.json")
            .header("accept-signature", accept)
            .body(())
            .unwrap()
    }

    /// Every `Signature-Input` line, joined (RFC 9110 section 5.3).
    fn inputs(h: &http::HeaderMap) -> String {
        let lines: Vec<&str> = h
            .get_all("signature-input")
            .iter()
            .map(|v| v.to_str().unwrap())
            .collect();
        lines.join(", ")
    }

    fn labels(parts: &http::response::Parts) -> Vec<String> {
        let si = inputs(&parts.headers);
        crate::sfv::parse_dictionary_raw(si.as_bytes())
            .unwrap()
            .0
            .into_iter()
            .map(|(k, _)| k)
            .collect()
    }

    /// The response verifies under the strict descriptor policy (the
    /// default signature covers `@status`, `content-type`, `content-digest`).
    fn strict_ok(ring: &KeyRing, parts: http::response::Parts, body: Bytes) {
        let res = Response::from_parts(parts, body.to_vec());
        let report = res.verify_signature(&verifier(ring)).unwrap();
        assert!(report.get("sig1").unwrap().is_valid());
        let si = res.headers()["signature-input"].to_str().unwrap();
        assert!(
            si.contains(r#"sig1=("@status" "content-type" "content-digest")"#),
            "{si}"
        );
    }

    #[tokio::test]
    async fn a_requested_member_never_replaces_the_default_signature() {
        let ring = ring();
        let (parts, body) = run(accepting(&ring), asking(r#"sig1=("@method";req)"#), b"{}").await;
        assert_eq!(parts.status, 200);
        assert_eq!(labels(&parts), ["sig1"]);
        strict_ok(&ring, parts, body);
    }

    #[tokio::test]
    async fn members_the_signer_cannot_honour_are_skipped_not_a_500() {
        let ring = ring();
        for member in [
            r#"sig2=("@status" "content-type" "content-digest" "x-missing";req)"#,
            r#"sig2=("@status" "content-type" "content-digest" "@method")"#,
            r#"sig2=("@status";req "@status" "content-type" "content-digest")"#,
            r#"sig2=("@status" "content-type" "content-digest" "x-absent")"#,
        ] {
            let (parts, body) = run(accepting(&ring), asking(member), b"{}").await;
            assert_eq!(parts.status, 200, "{member}");
            assert_eq!(labels(&parts), ["sig1"], "{member}");
            strict_ok(&ring, parts, body);
        }
    }

    #[tokio::test]
    async fn a_member_must_cover_the_mandatory_components() {
        let ring = ring();
        for member in [
            r#"sig2=("@status")"#,
            r#"sig2=("@status" "content-digest")"#,
            r#"sig2=("content-type" "content-digest" "@method";req)"#,
        ] {
            let (parts, _) = run(accepting(&ring), asking(member), b"{}").await;
            assert_eq!(labels(&parts), ["sig1"], "{member}");
            assert!(
                !parts.headers.contains_key(header::CACHE_CONTROL),
                "{member}"
            );
        }
        let ok = r#"sig2=("@status" "content-type" "content-digest" "@method";req)"#;
        let (parts, _) = run(accepting(&ring), asking(ok), b"{}").await;
        assert_eq!(labels(&parts), ["sig1", "sig2"]);
    }

    #[tokio::test]
    async fn requested_tags_are_dropped_unless_allowed() {
        let ring = ring();
        let member = r#"sig2=("@status" "content-type" "content-digest");tag="app""#;
        let (parts, _) = run(accepting(&ring), asking(member), b"{}").await;
        let si = inputs(&parts.headers);
        assert!(si.contains("sig2=") && !si.contains("tag="), "{si}");
        let mut cfg = SignConfig::new(ring.clone());
        cfg.accept_signature = true;
        cfg.allowed_tags = vec!["app".into()];
        let (parts, _) = run(SignLayer::with_config(cfg), asking(member), b"{}").await;
        let si = inputs(&parts.headers);
        assert!(si.contains(r#"tag="app""#), "{si}");
    }

    #[tokio::test]
    async fn accept_signature_is_opt_in() {
        let ring = ring();
        let member = r#"sig2=("@status" "content-type" "content-digest" "@method";req)"#;
        let (parts, _) = run(SignLayer::new(ring.clone()), asking(member), b"{}").await;
        assert_eq!(labels(&parts), ["sig1"]);
        assert!(!parts.headers.contains_key(header::VARY));
    }

    #[tokio::test]
    async fn requested_signatures_vary_and_are_never_stored_for_others() {
        let ring = ring();
        let inner = |_r: Request<()>| async {
            let mut r = json_response(Some("public, max-age=300"));
            r.headers_mut()
                .insert(header::VARY, HeaderValue::from_static("accept-encoding"));
            Ok::<_, std::convert::Infallible>(r)
        };
        // Without a request for a signature: cacheable, but varying.
        let res = accepting(&ring)
            .layer(service_fn(inner))
            .oneshot(Request::new(()))
            .await
            .unwrap();
        let vary: Vec<_> = res.headers().get_all(header::VARY).iter().collect();
        assert_eq!(vary, ["accept-encoding", "accept-signature"]);
        assert_eq!(res.headers()[header::CACHE_CONTROL], "public, max-age=300");
        // A 304 says the same Vary.
        let res = accepting(&ring)
            .layer(service_fn(|_r: Request<()>| async {
                let mut r = Response::new(Full::new(Bytes::new()));
                *r.status_mut() = StatusCode::NOT_MODIFIED;
                Ok::<_, std::convert::Infallible>(r)
            }))
            .oneshot(Request::new(()))
            .await
            .unwrap();
        assert_eq!(res.headers()[header::VARY], "accept-signature");
        // With a request-bound signature: not storable.
        let member = r#"sig2=("@status" "content-type" "content-digest" "@method";req)"#;
        let res = accepting(&ring)
            .layer(service_fn(inner))
            .oneshot(asking(member))
            .await
            .unwrap();
        assert_eq!(res.headers()[header::CACHE_CONTROL], "no-store");
        assert!(res
            .headers()
            .get_all(header::VARY)
            .iter()
            .any(|v| v == "accept-signature"));
        assert!(inputs(res.headers()).contains("sig2="));
    }

    /// A body of unknown length, as a stream has.
    struct Streaming(Option<Bytes>);
    impl Body for Streaming {
        type Data = Bytes;
        type Error = std::convert::Infallible;
        fn poll_frame(
            mut self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
        ) -> Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
            Poll::Ready(self.0.take().map(|b| Ok(http_body::Frame::data(b))))
        }
    }
    fn streaming() -> Response<Streaming> {
        Response::new(Streaming(Some(Bytes::from_static(b"{}"))))
    }

    #[tokio::test]
    async fn streaming_body_is_refused_by_default_and_passed_unsigned_by_policy() {
        let ring = ring();
        for (policy, status) in [(Unsignable::Refuse, 500), (Unsignable::PassUnsigned, 200)] {
            let mut cfg = SignConfig::new(ring.clone());
            cfg.unsignable = policy;
            let svc = SignLayer::with_config(cfg).layer(service_fn(|_r: Request<()>| async {
                Ok::<_, std::convert::Infallible>(streaming())
            }));
            let res = svc.oneshot(Request::new(())).await.unwrap();
            assert_eq!(res.status(), status);
            assert!(!res.headers().contains_key("signature"));
            assert!(!res.headers().contains_key("content-digest"));
        }
    }

    #[tokio::test]
    async fn body_over_the_bound_is_never_signed() {
        let ring = ring();
        let mut cfg = SignConfig::new(ring);
        cfg.max_body = 4;
        let (parts, _) = run(SignLayer::with_config(cfg), Request::new(()), b"0123456789").await;
        assert_eq!(parts.status, 500);
        assert!(!parts.headers.contains_key("signature"));
    }

    #[tokio::test]
    async fn not_modified_and_errors_pass_unsigned() {
        let ring = ring();
        for status in [304u16, 404, 204] {
            let svc =
                SignLayer::new(ring.clone()).layer(service_fn(move |_r: Request<()>| async move {
                    let mut r = Response::new(Full::new(Bytes::new()));
                    *r.status_mut() = StatusCode::from_u16(status).unwrap();
                    Ok::<_, std::convert::Infallible>(r)
                }));
            let res = svc.oneshot(Request::new(())).await.unwrap();
            assert_eq!(res.status(), status);
            assert!(!res.headers().contains_key("signature"));
            assert!(!res.headers().contains_key("content-digest"));
        }
    }

    #[tokio::test]
    async fn head_response_without_its_content_is_not_signed() {
        let ring = ring();
        let svc = SignLayer::new(ring).layer(service_fn(|_r: Request<()>| async {
            let mut r = Response::new(Full::new(Bytes::new()));
            r.headers_mut()
                .insert(header::CONTENT_LENGTH, HeaderValue::from_static("10"));
            Ok::<_, std::convert::Infallible>(r)
        }));
        let req = Request::builder().method("HEAD").body(()).unwrap();
        let res = svc.oneshot(req).await.unwrap();
        assert_eq!(res.status(), 200);
        assert!(!res.headers().contains_key("signature"));
        assert!(!res.headers().contains_key("content-digest"));
        assert_eq!(res.headers()[header::CONTENT_LENGTH], "10");
    }

    /// A clock the test moves by hand.
    #[derive(Debug)]
    struct ManualClock(std::sync::atomic::AtomicI64);
    impl Clock for ManualClock {
        fn now(&self) -> i64 {
            self.0.load(std::sync::atomic::Ordering::SeqCst)
        }
    }

    /// A response head and body, to come.
    type Answer = Pin<Box<dyn Future<Output = (http::response::Parts, Bytes)>>>;

    /// One layer (one cache) answering with whatever body and type the
    /// request names in `x-body` / `x-type`.
    fn echo_layer(
        ring: &Arc<KeyRing>,
        clock: Arc<ManualClock>,
    ) -> impl Fn(&'static str, &'static str) -> Answer {
        let mut cfg = SignConfig::new(ring.clone());
        cfg.clock = clock;
        let layer = SignLayer::with_config(cfg);
        move |body: &'static str, ctype: &'static str| {
            let svc = layer.layer(service_fn(move |_r: Request<()>| async move {
                // Fresh bytes every time (as an axum handler makes them).
                let mut r = Response::new(Full::new(Bytes::copy_from_slice(body.as_bytes())));
                r.headers_mut()
                    .insert(header::CONTENT_TYPE, HeaderValue::from_static(ctype));
                Ok::<_, std::convert::Infallible>(r)
            }));
            Box::pin(async move {
                let (p, b) = svc.oneshot(Request::new(())).await.unwrap().into_parts();
                (p, b.collect().await.unwrap().to_bytes())
            })
        }
    }

    fn created(parts: &http::response::Parts) -> i64 {
        let si = parts.headers["signature-input"].to_str().unwrap();
        let c = si.split(";created=").nth(1).unwrap();
        c.split(';').next().unwrap().parse().unwrap()
    }

    #[tokio::test]
    async fn the_default_signature_is_shared_within_one_second_only() {
        let ring = ring();
        let start = SystemClock.now();
        let clock = Arc::new(ManualClock(start.into()));
        let get = echo_layer(&ring, clock.clone());
        // ECDSA signatures are randomized: equal bytes mean one signing.
        let (a, body) = get(r#"{"name":"a"}"#, "application/json").await;
        let (b, _) = get(r#"{"name":"a"}"#, "application/json").await;
        assert_eq!(a.headers["signature"], b.headers["signature"]);
        assert_eq!(a.headers["signature-input"], b.headers["signature-input"]);
        assert_eq!(created(&a), start);
        strict_ok(&ring, b, body.clone());
        // The next second: a new signature, created now.
        clock
            .0
            .store(start + 1, std::sync::atomic::Ordering::SeqCst);
        let (c, _) = get(r#"{"name":"a"}"#, "application/json").await;
        assert_ne!(c.headers["signature"], a.headers["signature"]);
        assert_eq!(created(&c), start + 1);
        assert_eq!(c.headers["content-digest"], a.headers["content-digest"]);
        strict_ok(&ring, c, body);
        // A clock set back is no reason to serve a newer `created` either.
        clock.0.store(start, std::sync::atomic::Ordering::SeqCst);
        let (d, _) = get(r#"{"name":"a"}"#, "application/json").await;
        assert_eq!(created(&d), start);
    }

    /// Bodies whose cache slots collide keep their own signatures: served
    /// in turn within one second, each is signed once (with a key in a
    /// PKCS#11 token, each signing is a token call).
    #[tokio::test]
    async fn bodies_sharing_a_slot_are_each_signed_once_per_second() {
        let ring = ring();
        let start = SystemClock.now();
        let clock = Arc::new(ManualClock(start.into()));
        let get = echo_layer(&ring, clock);
        // Same length, the same first and last 64 bytes: one home slot.
        let pad = "x".repeat(100);
        let bodies: Vec<&'static str> = (0..3)
            .map(|n| -> &'static str {
                Box::leak(format!(r#"{{"p":"{pad}","n":"{n}","q":"{pad}"}}"#).into())
            })
            .collect();
        let mut first = Vec::new();
        for b in &bodies {
            first.push(get(b, "application/json").await.0.headers["signature"].clone());
        }
        for _ in 0..3 {
            for (b, sig) in bodies.iter().zip(&first) {
                // ECDSA signatures are randomized: equal bytes, one signing.
                let (p, body) = get(b, "application/json").await;
                assert_eq!(&p.headers["signature"], sig, "{b}");
                strict_ok(&ring, p, body);
            }
        }
    }

    #[tokio::test]
    async fn other_bytes_or_type_never_get_the_cached_signature() {
        let ring = ring();
        let start = SystemClock.now();
        let clock = Arc::new(ManualClock(start.into()));
        let get = echo_layer(&ring, clock);
        let (a, _) = get(r#"{"name":"a"}"#, "application/json").await;
        // Same length, the same first and last 64 bytes (one cache slot),
        // the same second: other bytes in the middle.
        let pad = "x".repeat(100);
        let long_a: &'static str =
            Box::leak(format!(r#"{{"p":"{pad}","n":"a","q":"{pad}"}}"#).into());
        let long_b: &'static str =
            Box::leak(format!(r#"{{"p":"{pad}","n":"b","q":"{pad}"}}"#).into());
        let (la, _) = get(long_a, "application/json").await;
        let (lb, body) = get(long_b, "application/json").await;
        assert_ne!(lb.headers["signature"], la.headers["signature"]);
        assert_ne!(lb.headers["content-digest"], la.headers["content-digest"]);
        strict_ok(&ring, lb, body);
        for (body, ctype) in [
            (r#"{"name":"b"}"#, "application/json"),
            (r#"{"name":"a"}"#, "application/agent+json"),
        ] {
            let (p, b) = get(body, ctype).await;
            assert_eq!(b.as_ref(), body.as_bytes());
            assert_ne!(
                p.headers["signature"], a.headers["signature"],
                "{body} {ctype}"
            );
            let res = Response::from_parts(p, b.to_vec());
            let report = res.verify_signature(&verifier(&ring)).unwrap();
            assert!(report.all_valid(), "{body} {ctype}");
        }
        // The first body, again cached under its own slot or signed anew,
        // still verifies over its own bytes.
        let (p, b) = get(r#"{"name":"a"}"#, "application/json").await;
        strict_ok(&ring, p, b);
    }

    /// A requested `;req` signature is shared only by requests whose
    /// base is byte for byte the same in the same second; another method,
    /// another path, another second or a requested nonce is signed anew.
    #[tokio::test]
    async fn requested_signatures_are_shared_only_for_identical_bases() {
        let ring = ring();
        let start = SystemClock.now();
        let clock = Arc::new(ManualClock(start.into()));
        let mut cfg = SignConfig::new(ring.clone());
        cfg.accept_signature = true;
        cfg.clock = clock.clone();
        let layer = SignLayer::with_config(cfg);
        let member =
            r#"sig2=("@status" "content-type" "content-digest" "@method";req "@path";req)"#;
        let with_nonce =
            r#"sig2=("@status" "content-type" "content-digest" "@method";req);nonce="n1""#;
        let call = |method: &'static str, path: &'static str, accept: &'static str| {
            let svc = layer.clone().layer(service_fn(|_r: Request<()>| async {
                Ok::<_, std::convert::Infallible>(json_response(None))
            }));
            let req = Request::builder()
                .method(method)
                .uri(format!("https://example.com{path}"))
                .header("accept-signature", accept)
                .body(())
                .unwrap();
            async move {
                let res = svc.oneshot(req).await.unwrap();
                let (p, b) = res.into_parts();
                let b = b.collect().await.unwrap().to_bytes();
                let sigs: Vec<_> = p.headers.get_all("signature").iter().cloned().collect();
                assert_eq!(sigs.len(), 2, "{method} {path} {accept}");
                (sigs[1].clone(), inputs(&p.headers), p, b)
            }
        };
        // ECDSA signatures are randomized: equal bytes mean one signing.
        let (a, a_in, _, _) = call("GET", "/agent.json", member).await;
        let (b, b_in, _, _) = call("GET", "/agent.json", member).await;
        assert_eq!(a, b, "the same base in the same second: shared");
        assert_eq!(a_in, b_in);
        for (m, p) in [("HEAD", "/agent.json"), ("GET", "/other.json")] {
            let (c, _, _, _) = call(m, p, member).await;
            assert_ne!(c, a, "{m} {p}: another covered value, signed anew");
        }
        let (n1, _, _, _) = call("GET", "/agent.json", with_nonce).await;
        let (n2, _, _, _) = call("GET", "/agent.json", with_nonce).await;
        assert_ne!(n1, n2, "a requested nonce is always signed anew");
        clock
            .0
            .store(start + 1, std::sync::atomic::Ordering::SeqCst);
        let (d, d_in, parts, body) = call("GET", "/agent.json", member).await;
        assert_ne!(d, a, "a new second, a new signature");
        assert!(d_in.contains(&format!("created={}", start + 1)), "{d_in}");
        // The shared signature verifies over its own response and request.
        let req = Request::builder()
            .method("GET")
            .uri("https://example.com/agent.json")
            .body(Vec::new())
            .unwrap();
        let res = Response::from_parts(parts, body.to_vec());
        let msg = crate::httpsig::Message::from_response(&res).unwrap();
        let rel = crate::httpsig::Message::from_request(&req, "https").unwrap();
        let report = verifier(&ring).verify_http(&msg, Some(&rel)).unwrap();
        assert!(report.all_valid());
    }

    /// One layer with a fixed clock, answering with the `etag` the
    /// request names in `x-etag`; returns the signature labelled `sig2`
    /// (or `None`), after checking that every signature of the response
    /// verifies over the whole response and the whole request.
    /// A `200` with the body `{}`, `Content-Type: application/json` and,
    /// when given, that `Cache-Control`.
    fn json_response(cache_control: Option<&'static str>) -> Response<Full<Bytes>> {
        let mut r = Response::new(Full::new(Bytes::from_static(b"{}")));
        let h = r.headers_mut();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        if let Some(c) = cache_control {
            h.insert(header::CACHE_CONTROL, HeaderValue::from_static(c));
        }
        r
    }

    fn requesting_layer(ring: &Arc<KeyRing>) -> SignLayer {
        let mut cfg = SignConfig::new(ring.clone());
        cfg.accept_signature = true;
        cfg.clock = Arc::new(ManualClock(SystemClock.now().into()));
        SignLayer::with_config(cfg)
    }

    async fn requested(
        ring: &Arc<KeyRing>,
        layer: &SignLayer,
        headers: &[(&str, &str)],
    ) -> (Option<HeaderValue>, String) {
        let svc = layer.clone().layer(service_fn(|r: Request<()>| async move {
            let mut res = json_response(Some("public, max-age=60"));
            if let Some(e) = r.headers().get("x-etag") {
                res.headers_mut().insert(header::ETAG, e.clone());
            }
            Ok::<_, std::convert::Infallible>(res)
        }));
        let mut req = Request::builder().uri("/agent.json");
        for (n, v) in headers {
            req = req.header(*n, *v);
        }
        let req = req.body(()).unwrap();
        let (rp, ()) = req.into_parts();
        let full_req = Request::from_parts(rp.clone(), Vec::new());
        let res = svc.oneshot(Request::from_parts(rp, ())).await.unwrap();
        let (p, b) = res.into_parts();
        let b = b.collect().await.unwrap().to_bytes();
        let si = inputs(&p.headers);
        let sig2 = labels(&p).iter().position(|l| l == "sig2").map(|i| {
            p.headers
                .get_all("signature")
                .iter()
                .nth(i)
                .unwrap()
                .clone()
        });
        let res = Response::from_parts(p, b.to_vec());
        let msg = crate::httpsig::Message::from_response(&res).unwrap();
        let rel = crate::httpsig::Message::from_request(&full_req, "https").unwrap();
        let report = verifier(ring).verify_http(&msg, Some(&rel)).unwrap();
        assert!(report.all_valid(), "{headers:?}: {si}");
        (sig2, si)
    }

    /// The requested signature is made over models holding only the
    /// covered fields: it verifies over the whole messages, `Host` still
    /// gives `@authority`, `Cache-Control` is signed as sent (`no-store`),
    /// a field nobody covers changes nothing, and another value of any
    /// covered request or response field is signed anew.
    #[tokio::test]
    async fn requested_signatures_cover_the_values_the_whole_messages_carry() {
        let ring = ring();
        let layer = requesting_layer(&ring);
        let member = r#"sig2=("@status" "content-type" "content-digest" "cache-control" "etag" "x-client";req "@authority";req "x-etag";req)"#;
        let base = [
            ("host", "example.com"),
            ("x-client", "a"),
            ("x-other", "1"),
            ("x-etag", "\"e1\""),
            ("accept-signature", member),
        ];
        let with = |n: &'static str, v: &'static str| {
            let mut h = base.to_vec();
            for f in h.iter_mut() {
                if f.0 == n {
                    f.1 = v;
                }
            }
            h
        };
        let (a, a_in) = requested(&ring, &layer, &base).await;
        let a = a.expect("sig2 signed");
        assert!(a_in.contains("\"@authority\";req"), "{a_in}");
        let (same, _) = requested(&ring, &layer, &with("x-other", "2")).await;
        assert_eq!(same, Some(a.clone()), "an uncovered field: the same base");
        for (n, v) in [
            ("x-client", "b"),
            ("host", "other.example"),
            ("x-etag", "\"e2\""),
        ] {
            let (other, _) = requested(&ring, &layer, &with(n, v)).await;
            let other = other.expect("sig2 signed");
            assert_ne!(other, a, "{n}: {v}: another covered value, signed anew");
        }
    }

    /// `Accept-Signature` values are parsed once per distinct value, kept
    /// in at most `ACCEPT_SLOTS` slots, a hit decided by the whole value:
    /// every value, however many and in whatever order, gets its own
    /// members; a value too long to keep, or sent on several lines, is
    /// parsed for its request and not kept.
    #[tokio::test]
    async fn accept_signature_parses_are_kept_per_exact_value_and_bounded() {
        let ring = ring();
        let layer = requesting_layer(&ring);
        let value =
            |i: usize| format!(r#"s{i}=("@status" "content-type" "content-digest" "@method";req)"#);
        let kept = |layer: &SignLayer| {
            layer
                .cache
                .accept
                .iter()
                .filter_map(|s| lock(s).as_ref().map(|e| e.field.clone()))
                .collect::<Vec<_>>()
        };
        // Two values in one slot: the second never gets the first's parse.
        let first = value(0);
        let twin = (1..1000)
            .map(value)
            .find(|v| {
                slot_of(&[v.as_bytes()], ACCEPT_SLOTS) == slot_of(&[first.as_bytes()], ACCEPT_SLOTS)
            })
            .unwrap();
        for v in [&first, &twin, &first] {
            let label = v.split('=').next().unwrap();
            let (parts, _) = run(layer.clone(), asking(v), b"{}").await;
            assert_eq!(labels(&parts), ["sig1", label], "{v}");
        }
        // Many values: each answered with its own label, twice over.
        for round in 0..2 {
            for i in 0..3 * ACCEPT_SLOTS {
                let (parts, _) = run(layer.clone(), asking(&value(i)), b"{}").await;
                assert_eq!(
                    labels(&parts),
                    ["sig1".to_owned(), format!("s{i}")],
                    "{round}"
                );
            }
        }
        let held = kept(&layer);
        assert!(
            !held.is_empty() && held.len() <= ACCEPT_SLOTS,
            "{}",
            held.len()
        );
        // A value longer than ACCEPT_MAX_FIELD is honoured, not kept.
        let nonce = "n".repeat(ACCEPT_MAX_FIELD);
        let long = format!(
            r#"sig2=("@status" "content-type" "content-digest" "@method";req);nonce="{nonce}""#
        );
        let (parts, _) = run(layer.clone(), asking(&long), b"{}").await;
        assert_eq!(labels(&parts), ["sig1", "sig2"]);
        assert!(inputs(&parts.headers).contains(&nonce));
        assert!(kept(&layer).iter().all(|f| f != long.as_bytes()));
        // Several lines are one Dictionary (RFC 9421 section 5.1), parsed
        // for the request and not kept.
        let two = Request::builder()
            .uri("https://example.com/agent.json")
            .header("accept-signature", value(1))
            .header("accept-signature", value(2))
            .body(())
            .unwrap();
        let before = kept(&layer);
        let (parts, _) = run(layer.clone(), two, b"{}").await;
        assert_eq!(labels(&parts), ["sig1", "s1", "s2"]);
        assert_eq!(kept(&layer), before);
    }

    /// The members of one `Accept-Signature` value are signed as the
    /// response requires, whichever response came before in the same
    /// second: a member without `content-type` is honoured only for
    /// responses without one (draft-narvaneni-agent-uri-03 section 10.3).
    #[tokio::test]
    async fn kept_members_are_checked_against_each_response() {
        let ring = ring();
        let layer = requesting_layer(&ring);
        let member = r#"sig2=("@status" "content-digest" "@method";req)"#;
        for typed in [false, true, false, true] {
            let svc = layer
                .clone()
                .layer(service_fn(move |_r: Request<()>| async move {
                    let mut r = Response::new(Full::new(Bytes::from_static(b"{}")));
                    if typed {
                        r.headers_mut().insert(
                            header::CONTENT_TYPE,
                            HeaderValue::from_static("application/json"),
                        );
                    }
                    Ok::<_, std::convert::Infallible>(r)
                }));
            let (parts, _) = svc.oneshot(asking(member)).await.unwrap().into_parts();
            let want: &[&str] = if typed { &["sig1"] } else { &["sig1", "sig2"] };
            assert_eq!(labels(&parts), want, "typed: {typed}");
        }
    }

    #[test]
    fn symmetric_keys_are_refused() {
        let k = SigningKey::generate(Algorithm::HmacSha256).unwrap();
        assert!(matches!(
            KeyRing::single(k),
            Err(super::super::KeyRingError::Symmetric(_))
        ));
    }
}
