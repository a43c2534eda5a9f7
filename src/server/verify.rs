//! A tower [`Layer`] that verifies the RFC 9421 signatures of incoming
//! requests (section 3.2) with a [`Verifier`] before the wrapped service
//! sees them.
//!
//! The request body is buffered up to [`VerifyConfig::max_body`] so a
//! covered `content-digest` is checked against it (RFC 9530 section 2);
//! a larger body answers `413`. A request whose signatures do not verify
//! under the verifier's policy answers `401` with the reason; nothing else
//! reaches the service. A verified request carries its [`VerifiedRequest`]
//! as an extension.

use super::layer::{text_response, BoxError, SignedBody};
use crate::httpsig::{Message, VerifyReport};
use crate::verifier::Verifier;
use bytes::{Buf, Bytes};
use http::{HeaderValue, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, Full, Limited};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tower_layer::Layer;
use tower_service::Service;

/// Default largest request body buffered for verification: 1 MiB.
pub const DEFAULT_MAX_REQUEST_BODY: usize = 1024 * 1024;

/// The verification report of an accepted request, as a request extension.
#[derive(Clone, Debug)]
pub struct VerifiedRequest(pub VerifyReport);

/// What the verifying layer does.
#[derive(Clone, Debug)]
pub struct VerifyConfig {
    /// Keys, algorithms, clock, replay store and [`crate::httpsig::HttpPolicy`].
    pub verifier: Verifier,
    /// Largest request body buffered, in bytes.
    pub max_body: usize,
    /// Scheme of requests whose URI has none (`@scheme`, `@target-uri`).
    pub scheme: &'static str,
    /// Sent as `Accept-Signature` with a `401` (RFC 9421 section 5.1), if set.
    pub accept_signature: Option<HeaderValue>,
}

impl VerifyConfig {
    /// Defaults: 1 MiB bodies, `https`, no `Accept-Signature` hint.
    pub fn new(verifier: Verifier) -> VerifyConfig {
        VerifyConfig {
            verifier,
            max_body: DEFAULT_MAX_REQUEST_BODY,
            scheme: "https",
            accept_signature: None,
        }
    }
}

/// The verifying layer.
#[derive(Clone, Debug)]
pub struct VerifyLayer {
    cfg: Arc<VerifyConfig>,
}

impl VerifyLayer {
    /// Verify with this verifier and default settings.
    pub fn new(verifier: Verifier) -> VerifyLayer {
        VerifyLayer::with_config(VerifyConfig::new(verifier))
    }
    /// Verify with explicit settings.
    pub fn with_config(cfg: VerifyConfig) -> VerifyLayer {
        VerifyLayer { cfg: Arc::new(cfg) }
    }
}

impl<S> Layer<S> for VerifyLayer {
    type Service = VerifyService<S>;
    fn layer(&self, inner: S) -> VerifyService<S> {
        VerifyService {
            inner,
            cfg: self.cfg.clone(),
        }
    }
}

/// The service produced by [`VerifyLayer`]; the wrapped service receives
/// `Request<Full<Bytes>>`.
#[derive(Clone, Debug)]
pub struct VerifyService<S> {
    inner: S,
    cfg: Arc<VerifyConfig>,
}

fn boxed<B>(b: B) -> SignedBody
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    b.map_frame(|f| f.map_data(|mut d| d.copy_to_bytes(d.remaining())))
        .map_err(Into::into)
        .boxed_unsync()
}

impl<S, ReqB, ResB> Service<Request<ReqB>> for VerifyService<S>
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
        // The instance that was polled ready serves this call.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let cfg = self.cfg.clone();
        Box::pin(async move {
            let (parts, body) = req.into_parts();
            let bytes = match Limited::new(body, cfg.max_body).collect().await {
                Ok(c) => c.to_bytes(),
                Err(_) => {
                    return Ok(text_response(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        "request body too large or unreadable",
                    ))
                }
            };
            let req = Request::from_parts(parts, bytes);
            let report = Message::from_request(&req, cfg.scheme)
                .map_err(|e| e.to_string())
                .and_then(|m| {
                    cfg.verifier
                        .verify_http(&m, None)
                        .map_err(|e| e.to_string())
                });
            match report {
                Ok(rep) => {
                    let (mut parts, bytes) = req.into_parts();
                    parts.extensions.insert(VerifiedRequest(rep));
                    let res = inner
                        .call(Request::from_parts(parts, Full::new(bytes)))
                        .await?;
                    Ok(res.map(boxed))
                }
                Err(why) => {
                    tracing::info!("request signature refused: {why}");
                    let mut r = text_response(
                        StatusCode::UNAUTHORIZED,
                        &format!("request signature not verified: {why}"),
                    );
                    if let Some(a) = &cfg.accept_signature {
                        r.headers_mut().insert("accept-signature", a.clone());
                    }
                    Ok(r)
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::httpsig::sign::sign_request;
    use crate::httpsig::{ComponentId, Derived, HttpPolicy, SignatureSpec};
    use crate::trust::{KeySource, StaticKeys};
    use crate::{Algorithm, SigningKey};
    use tower::{service_fn, ServiceExt};

    fn now() -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64
    }

    fn signed(key: &SigningKey, body: &[u8]) -> Request<Vec<u8>> {
        let mut req = Request::builder()
            .method("POST")
            .uri("https://example.com/tasks")
            .header("content-type", "application/json")
            .header("content-digest", crate::digest::content_digest(body))
            .body(body.to_vec())
            .unwrap();
        let mut spec = SignatureSpec::new("sig1");
        for d in [Derived::Method, Derived::Authority, Derived::Path] {
            spec = spec.component(ComponentId::derived(d));
        }
        spec = spec
            .component(ComponentId::field("content-digest").unwrap())
            .created(now())
            .keyid("k1");
        sign_request(&mut req, "https", &spec, key).unwrap();
        req
    }

    fn layer(key: &SigningKey, max_body: usize) -> VerifyLayer {
        let vk = key.verifying_key().clone().with_kid("k1");
        let v = Verifier::builder(StaticKeys::new().with(vk, KeySource::Pinned))
            .http(HttpPolicy::new())
            .build();
        let mut cfg = VerifyConfig::new(v);
        cfg.max_body = max_body;
        cfg.accept_signature = Some(HeaderValue::from_static(
            r#"sig1=("@method" "@authority" "@path" "content-digest")"#,
        ));
        VerifyLayer::with_config(cfg)
    }

    async fn call(l: VerifyLayer, req: Request<Vec<u8>>) -> (StatusCode, String, bool) {
        let svc = l.layer(service_fn(|r: Request<Full<Bytes>>| async move {
            let ok = r.extensions().get::<VerifiedRequest>().is_some();
            let body = r.into_body().collect().await.unwrap().to_bytes();
            let mut res = Response::new(Full::new(body));
            if ok {
                res.headers_mut()
                    .insert("x-verified", HeaderValue::from_static("1"));
            }
            Ok::<_, std::convert::Infallible>(res)
        }));
        let res = svc
            .oneshot(req.map(|b| Full::new(Bytes::from(b))))
            .await
            .unwrap();
        let status = res.status();
        let has_accept = res.headers().contains_key("accept-signature");
        let verified = res.headers().contains_key("x-verified");
        let body = res.into_body().collect().await.unwrap().to_bytes();
        (
            status,
            String::from_utf8_lossy(&body).into_owned(),
            verified || has_accept && status == 401,
        )
    }

    #[tokio::test]
    async fn signed_request_reaches_the_service_with_its_report() {
        let key = SigningKey::generate(Algorithm::EcdsaP256Sha256).unwrap();
        let (s, body, verified) = call(layer(&key, 1024), signed(&key, b"{\"a\":1}")).await;
        assert_eq!(s, 200);
        assert_eq!(body, "{\"a\":1}");
        assert!(verified);
    }

    #[tokio::test]
    async fn unsigned_tampered_and_oversized_requests_are_refused() {
        let key = SigningKey::generate(Algorithm::EcdsaP256Sha256).unwrap();
        let unsigned = Request::builder()
            .uri("https://example.com/tasks")
            .body(Vec::new())
            .unwrap();
        let (s, body, hint) = call(layer(&key, 1024), unsigned).await;
        assert_eq!(s, 401, "{body}");
        assert!(hint, "401 without Accept-Signature");
        let mut t = signed(&key, b"{\"a\":1}");
        *t.body_mut() = b"{\"a\":2}".to_vec();
        let (s, body, _) = call(layer(&key, 1024), t).await;
        assert_eq!(s, 401);
        assert!(body.contains("not verified"), "{body}");
        let other = SigningKey::generate(Algorithm::EcdsaP256Sha256).unwrap();
        let (s, _, _) = call(layer(&key, 1024), signed(&other, b"{}")).await;
        assert_eq!(s, 401);
        let (s, _, _) = call(layer(&key, 4), signed(&key, b"{\"a\":1}")).await;
        assert_eq!(s, 413);
    }
}
