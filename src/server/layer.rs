//! A tower [`Layer`] that signs every response of the service it wraps:
//! RFC 9530 `Content-Digest` over the exact bytes sent, then an RFC 9421
//! signature (section 3.1) covering `@status`, `content-type` (when the
//! response has one) and `content-digest`, with `created`, `keyid` and
//! `alg` (section 2.3). When the request carries `Accept-Signature`
//! (RFC 9421 section 5), each member the signer can honour is signed as
//! well, with the related request for `;req` components (section 2.4).
//!
//! The body is buffered up to [`SignConfig::max_body`]. A body that is
//! larger, or of unknown length (streaming), is handled by
//! [`Unsignable`]: refused (a 500 in place of the response, the default) or
//! passed through unsigned and untouched. A response is never signed over
//! bytes other than the ones sent: a body that turns out longer than its
//! size hint, or that fails while being read, becomes a 500.

use super::keys::KeyRing;
use crate::httpsig::{accept, components::ComponentId, sign, SignatureSpec};
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
}

impl SignConfig {
    /// Defaults: label `sig1`, 1 MiB bound, refuse unsignable bodies, no
    /// `expires`, `https`.
    pub fn new(keys: Arc<KeyRing>) -> SignConfig {
        SignConfig {
            keys,
            label: "sig1".to_owned(),
            max_body: DEFAULT_MAX_BODY,
            unsignable: Unsignable::Refuse,
            expires_in: None,
            accept_lifetime: 300,
            scheme: "https",
        }
    }
}

/// The tower layer: `ServiceBuilder::new().layer(SignLayer::new(keys))`.
#[derive(Clone, Debug)]
pub struct SignLayer {
    cfg: Arc<SignConfig>,
}

impl SignLayer {
    /// Sign with the current key of `keys`, default settings.
    pub fn new(keys: Arc<KeyRing>) -> SignLayer {
        SignLayer::with_config(SignConfig::new(keys))
    }
    /// Sign with explicit settings.
    pub fn with_config(cfg: SignConfig) -> SignLayer {
        SignLayer { cfg: Arc::new(cfg) }
    }
}

impl<S> Layer<S> for SignLayer {
    type Service = SignService<S>;
    fn layer(&self, inner: S) -> SignService<S> {
        SignService {
            inner,
            cfg: self.cfg.clone(),
        }
    }
}

/// The service produced by [`SignLayer`].
#[derive(Clone, Debug)]
pub struct SignService<S> {
    inner: S,
    cfg: Arc<SignConfig>,
}

/// What the signer keeps of the request: enough for `;req` components.
struct RequestHead {
    method: Method,
    related: Option<Request<Vec<u8>>>,
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
        let related = if req.headers().contains_key("accept-signature") {
            let mut r = Request::new(Vec::new());
            *r.method_mut() = req.method().clone();
            *r.uri_mut() = req.uri().clone();
            *r.version_mut() = req.version();
            *r.headers_mut() = req.headers().clone();
            Some(r)
        } else {
            None
        };
        let head = RequestHead {
            method: req.method().clone(),
            related,
        };
        let fut = self.inner.call(req);
        let cfg = self.cfg.clone();
        Box::pin(async move {
            let res = fut.await?;
            Ok(sign_response(&cfg, res, &head).await)
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

async fn sign_response<B>(
    cfg: &SignConfig,
    res: Response<B>,
    head: &RequestHead,
) -> Response<SignedBody>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    if !signs_status(res.status()) {
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
    match sign_parts(cfg, &mut parts, &bytes, head.related.as_ref()) {
        Ok(()) => Response::from_parts(parts, full(bytes)),
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

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Add `Content-Digest`, `Content-Length` and the signatures to a response
/// head whose content is `body`. `related` is the request (for
/// `Accept-Signature` and `;req` components).
pub fn sign_parts(
    cfg: &SignConfig,
    parts: &mut http::response::Parts,
    body: &[u8],
    related: Option<&Request<Vec<u8>>>,
) -> Result<(), SignResponseError> {
    let digest = crate::digest::content_digest(body);
    let h = &mut parts.headers;
    h.insert(
        "content-digest",
        HeaderValue::from_str(&digest)
            .map_err(|_| crate::httpsig::SignError::BadString(digest.clone()))?,
    );
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
    let current = cfg.keys.current();
    // The signature base never includes the content itself (RFC 9421
    // section 2): the model needs the header block only.
    let mut model = Response::new(&[][..]);
    *model.status_mut() = parts.status;
    *model.headers_mut() = parts.headers.clone();
    let msg = crate::httpsig::Message::from_response(&model)?;
    let rel = related
        .map(|r| crate::httpsig::Message::from_request(r, cfg.scheme))
        .transpose()?;
    let t = now();
    let mut specs = Vec::new();
    let requested = related
        .map(|r| {
            let lines: Vec<&[u8]> = r
                .headers()
                .get_all("accept-signature")
                .iter()
                .map(|v| v.as_bytes())
                .collect();
            accept::parse(&lines).unwrap_or_default()
        })
        .unwrap_or_default();
    for r in requested.iter().take(MAX_ACCEPTED) {
        match accept::spec_for(r, &current.key, &current.keyid, t, cfg.accept_lifetime) {
            Ok(s) => specs.push(s),
            Err(e) => tracing::debug!("Accept-Signature member {:?} not honoured: {e}", r.label),
        }
    }
    if !specs.iter().any(|s| s.label == cfg.label) {
        let mut spec = SignatureSpec::new(cfg.label.clone());
        spec.components = vec![ComponentId::derived(crate::httpsig::Derived::Status)];
        if parts.headers.contains_key(header::CONTENT_TYPE) {
            spec.components
                .extend(ComponentId::field("content-type").ok());
        }
        spec.components
            .extend(ComponentId::field("content-digest").ok());
        spec = spec
            .created(t)
            .keyid(&current.keyid)
            .alg(current.key.algorithm());
        if let Some(e) = cfg.expires_in {
            spec = spec.expires(t.saturating_add(e));
        }
        specs.insert(0, spec);
    }
    if parts.headers.contains_key("signature-input") {
        return Err(SignResponseError::LabelTaken(cfg.label.clone()));
    }
    for spec in &specs {
        let s = sign(&msg, rel.as_ref(), spec, &current.key)?;
        s.apply_headers(&mut parts.headers)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::httpsig::{verify_response, HttpPolicy};
    use crate::trust::{KeySource, StaticKeys};
    use crate::verifier::Verifier;
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
        let report = verify_response::<_, Vec<u8>>(&verifier(&ring), &res, None, "https").unwrap();
        assert!(report.all_valid());
        let si = res.headers()["signature-input"].to_str().unwrap();
        assert!(
            si.starts_with(r#"sig1=("@status" "content-type" "content-digest");created="#),
            "{si}"
        );
        assert!(si.contains(&format!("keyid=\"{}\"", ring.current().keyid)));
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
        assert!(verify_response::<_, Vec<u8>>(&verifier(&ring), &res, None, "https").is_err());
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
        let (parts, body) = run(SignLayer::new(ring.clone()), req, b"{}").await;
        let res = Response::from_parts(parts, body.to_vec());
        let v = verifier(&ring);
        let report = verify_response(&v, &res, Some(&related), "https").unwrap();
        assert!(report.get("sig1").unwrap().is_valid());
        assert!(report.get("sig2").unwrap().is_valid());
        // Another request: the ;req-bound signature no longer verifies.
        let other = Request::builder()
            .method("GET")
            .uri("https://evil.example/agent.json")
            .body(Vec::new())
            .unwrap();
        let report = match verify_response(&v, &res, Some(&other), "https") {
            Ok(r) => r,
            Err(e) => e.report().cloned().unwrap(),
        };
        assert!(!report.get("sig2").unwrap().is_valid());
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

    #[test]
    fn symmetric_keys_are_refused() {
        let k = SigningKey::generate(Algorithm::HmacSha256).unwrap();
        assert!(matches!(
            KeyRing::single(k),
            Err(super::super::KeyRingError::Symmetric(_))
        ));
    }
}
