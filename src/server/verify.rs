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
//!
//! Beyond the verifier's own policy the layer requires, of at least one
//! verified signature (RFC 9421 section 3.2 step 5: the verifier's
//! requirements; section 7.2.1):
//! * `content-digest` whenever the request has content, checked against
//!   the buffered bytes (RFC 9530 section 2), so a changed body never
//!   reaches the service as verified;
//! * by default ([`VerifyConfig::require_target`]) `@method` and the
//!   target: `@authority` and `@path` (with `@query` when the request has
//!   one), or `@target-uri`.
//!
//! The layer is built for the site's own authorities ([`SiteAuthorities`]):
//! a signature whose covered `@authority` (or `@target-uri`) names another
//! site is refused with `wrong-authority`, so a request signed for site A
//! cannot be replayed here with `Host: A` (RFC 9421 section 7.2.1). A
//! bounded in-process replay store is on by default (RFC 9421 section
//! 7.2.2).
//!
//! A request whose `Host` disagrees with the authority of its target URI
//! (absolute-form or HTTP/2 `:authority`, which `@authority` is taken
//! from, RFC 9421 section 2.2.3), or that has several `Host` fields, is
//! refused with `400` (RFC 9112 section 3.2).

use super::layer::{text_response, BoxError, SignedBody};
use crate::httpsig::{Message, SiteAuthorities, VerifyReport};
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

/// The verification of an accepted request, as a request extension.
#[derive(Clone, Debug)]
pub struct VerifiedRequest {
    /// The full report, one result per label.
    pub report: VerifyReport,
    /// The label of the verified signature that met the layer's
    /// requirements.
    pub label: String,
    /// The components that signature covers, serialized as in
    /// `Signature-Input` (e.g. `"@method"`, `"content-digest"`).
    pub covered: Vec<String>,
}

/// What the verifying layer does.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct VerifyConfig {
    /// Keys, algorithms, clock, replay store and [`crate::httpsig::HttpPolicy`].
    /// [`VerifyConfig::new`] gives it an in-process replay store when it has
    /// none.
    pub verifier: Verifier,
    /// The site's own authorities: a signature is accepted only when it
    /// covers `@authority` (or `@target-uri`) naming one of them, whatever
    /// `Host` says (RFC 9421 section 7.2.1). [`VerifyLayer::with_config`]
    /// writes them into the verifier's
    /// [`HttpPolicy::authorities`](crate::httpsig::HttpPolicy::authorities).
    pub authorities: SiteAuthorities,
    /// Largest request body buffered, in bytes.
    pub max_body: usize,
    /// Scheme of requests whose URI has none (`@scheme`, `@target-uri`).
    pub scheme: &'static str,
    /// Sent as `Accept-Signature` with a `401` (RFC 9421 section 5.1), if set.
    pub accept_signature: Option<HeaderValue>,
    /// Require `@method` and the target (`@authority` and `@path`, with
    /// `@query` when there is one, or `@target-uri`) to be covered (default
    /// `true`). `content-digest` is
    /// required whenever the request has content, whatever this says.
    pub require_target: bool,
}

impl VerifyConfig {
    /// A gate for the site serving `authorities` (give
    /// [`SiteAuthorities::any`] only when the application checks the
    /// authority itself: a request signed for another site then verifies
    /// here when it arrives with that site's `Host`).
    ///
    /// Defaults: 1 MiB bodies, `https`, no `Accept-Signature` hint,
    /// `@method`, `@authority` and `@path` (or `@target-uri`) required, and,
    /// when `verifier` has no replay store, a bounded in-process one
    /// ([`MemoryReplayStore`](crate::replay::MemoryReplayStore)), so that a
    /// signature with a `nonce` is accepted once (RFC 9421 section 7.2.2).
    pub fn new(verifier: Verifier, authorities: SiteAuthorities) -> VerifyConfig {
        let verifier = if verifier.replay_store().is_some() {
            verifier
        } else {
            verifier
                .to_builder()
                .replay_store(Arc::new(crate::replay::MemoryReplayStore::new()))
                .build()
        };
        VerifyConfig {
            verifier,
            authorities,
            max_body: DEFAULT_MAX_REQUEST_BODY,
            scheme: "https",
            accept_signature: None,
            require_target: true,
        }
    }
}

/// The verifying layer.
#[derive(Clone, Debug)]
pub struct VerifyLayer {
    cfg: Arc<VerifyConfig>,
}

impl VerifyLayer {
    /// Verify with this verifier and default settings, for the site serving
    /// `authorities` (see [`VerifyConfig::new`]).
    pub fn new(verifier: Verifier, authorities: SiteAuthorities) -> VerifyLayer {
        VerifyLayer::with_config(VerifyConfig::new(verifier, authorities))
    }
    /// Verify with explicit settings; the configuration's
    /// [`authorities`](VerifyConfig::authorities) become the verifier's.
    pub fn with_config(mut cfg: VerifyConfig) -> VerifyLayer {
        let mut policy = cfg.verifier.http_policy().clone();
        policy.authorities = cfg.authorities.to_policy();
        cfg.verifier = cfg.verifier.to_builder().http(policy).build();
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

/// The inner service's response body, boxed as the layers answer.
pub(super) fn boxed<B>(b: B) -> SignedBody
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
            let req = match buffered(req, cfg.max_body, cfg.scheme).await {
                Ok(req) => req,
                Err(refused) => return Ok(refused),
            };
            let report = Message::from_request(&req, cfg.scheme)
                .map_err(|e| e.to_string())
                .and_then(|m| cfg.verifier.verify_http(&m, None).map_err(|e| refusal(&e)))
                .and_then(|rep| accepted(&cfg, &req, rep));
            match report {
                Ok(verified) => {
                    let (mut parts, bytes) = req.into_parts();
                    parts.extensions.insert(verified);
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

/// Why a request's signatures did not verify, with the stable code of the
/// first failure (`wrong-authority`, `replay`, ...) for logs and clients.
fn refusal(e: &crate::httpsig::HttpSigError) -> String {
    if let crate::httpsig::HttpSigError::NotVerified(r) = e {
        if let Some(first) = r.results.iter().find_map(|l| l.outcome.as_ref().err()) {
            return format!("{e} ({})", first.code());
        }
    }
    e.to_string()
}

/// The request with its body buffered, or the answer refusing it: `413`
/// for a body over `max_body` bytes (or one that cannot be read), `400`
/// for a `Host` that is repeated or disagrees with the authority of the
/// request target ([`check_host`]). Both verifying layers start here: a
/// signature over `@authority` is only worth something when the `Host` the
/// inner service routes by names the same authority (RFC 9110 section 7.2,
/// RFC 9421 section 2.2.3), and `content-digest` is checked against the
/// whole content (RFC 9530 section 2).
pub(super) async fn buffered<B>(
    req: Request<B>,
    max_body: usize,
    scheme: &str,
) -> Result<Request<Bytes>, Response<SignedBody>>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    let (parts, body) = req.into_parts();
    let bytes = match Limited::new(body, max_body).collect().await {
        Ok(c) => c.to_bytes(),
        Err(_) => {
            return Err(text_response(
                StatusCode::PAYLOAD_TOO_LARGE,
                "request body too large or unreadable",
            ))
        }
    };
    if let Err(why) = check_host(&parts, scheme) {
        tracing::info!("request refused: {why}");
        return Err(text_response(StatusCode::BAD_REQUEST, why));
    }
    Ok(Request::from_parts(parts, bytes))
}

/// The authority of `uri` or a `Host` value, lowercased, without the
/// scheme's default port (RFC 9110 section 4.2.3).
fn normal_authority(a: &str, scheme: &str) -> String {
    let a = a.to_ascii_lowercase();
    let default = if scheme.eq_ignore_ascii_case("http") {
        ":80"
    } else {
        ":443"
    };
    a.strip_suffix(default).map(str::to_owned).unwrap_or(a)
}

/// `Host` must be single and agree with the target URI's authority when
/// both are present (RFC 9112 section 3.2; RFC 9113 section 8.3.1).
pub(super) fn check_host(
    parts: &http::request::Parts,
    default_scheme: &str,
) -> Result<(), &'static str> {
    let mut hosts = parts.headers.get_all(http::header::HOST).iter();
    let host = hosts.next();
    if hosts.next().is_some() {
        return Err("several Host fields");
    }
    let (Some(host), Some(auth)) = (host, parts.uri.authority()) else {
        return Ok(());
    };
    let host = host.to_str().map_err(|_| "Host is not visible ASCII")?;
    let scheme = parts.uri.scheme_str().unwrap_or(default_scheme);
    if normal_authority(host.trim(), scheme) != normal_authority(auth.as_str(), scheme) {
        return Err("Host disagrees with the authority of the request target");
    }
    Ok(())
}

/// The verified signature meeting the layer's requirements (see the
/// module documentation), or why none does.
fn accepted<B: AsRef<[u8]>>(
    cfg: &VerifyConfig,
    req: &Request<B>,
    report: VerifyReport,
) -> Result<VerifiedRequest, String> {
    use crate::httpsig::{ComponentId, Derived};
    let id = |d| ComponentId::derived(d).to_string();
    let digest =
        ComponentId::field("content-digest").map_or_else(|_| String::new(), |c| c.to_string());
    let body = req.body().as_ref();
    let has_content = !body.is_empty();
    if has_content {
        let lines: Vec<&[u8]> = req
            .headers()
            .get_all("content-digest")
            .iter()
            .map(HeaderValue::as_bytes)
            .collect();
        crate::digest::verify_content_digest(&lines, body)
            .map_err(|e| format!("Content-Digest: {e}"))?;
    }
    // A query the signature does not cover could be changed in transit:
    // with one, `@path` needs `@query` beside it (or `@target-uri`, which
    // holds both; RFC 9421 sections 2.2.2, 2.2.6, 2.2.7).
    let has_query = req.uri().query().is_some();
    let meets = |covered: &[String]| {
        let has = |c: &String| covered.contains(c);
        (!has_content || has(&digest))
            && (!cfg.require_target
                || has(&id(Derived::Method))
                    && (has(&id(Derived::TargetUri))
                        || has(&id(Derived::Authority))
                            && has(&id(Derived::Path))
                            && (!has_query || has(&id(Derived::Query)))))
    };
    let Some(found) = report
        .results
        .iter()
        .find(|r| r.is_valid() && meets(&r.covered))
    else {
        let mut need = Vec::new();
        if cfg.require_target && has_query {
            need.push("@method and @authority with @path and @query (or @target-uri)");
        } else if cfg.require_target {
            need.push("@method and @authority with @path (or @target-uri)");
        }
        if has_content {
            need.push("content-digest (the request has content)");
        }
        return Err(format!(
            "no verified signature covers {}",
            need.join(" and ")
        ));
    };
    Ok(VerifiedRequest {
        label: found.label.clone(),
        covered: found.covered.clone(),
        report,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::httpsig::SignHttp;
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
        signed_over(
            key,
            body,
            &[Derived::Method, Derived::Authority, Derived::Path],
            true,
        )
    }

    fn signed_over(
        key: &SigningKey,
        body: &[u8],
        derived: &[Derived],
        digest: bool,
    ) -> Request<Vec<u8>> {
        signed_over_uri(key, "https://example.com/tasks", body, derived, digest)
    }

    fn signed_over_uri(
        key: &SigningKey,
        uri: &str,
        body: &[u8],
        derived: &[Derived],
        digest: bool,
    ) -> Request<Vec<u8>> {
        let mut req = Request::builder()
            .method("POST")
            .uri(uri)
            .header("content-type", "application/json")
            .header("content-digest", crate::digest::content_digest(body))
            .body(body.to_vec())
            .unwrap();
        let mut spec = SignatureSpec::new("sig1");
        for d in derived {
            spec = spec.component(ComponentId::derived(*d));
        }
        if digest {
            spec = spec.component(ComponentId::field("content-digest").unwrap());
        }
        spec = spec.created(now()).keyid("k1");
        req.sign_signature(&spec, key).unwrap();
        req
    }

    fn layer(key: &SigningKey, max_body: usize) -> VerifyLayer {
        layer_for(key, max_body, "example.com")
    }

    fn layer_for(key: &SigningKey, max_body: usize, site: &str) -> VerifyLayer {
        let vk = key.verifying_key().clone().with_kid("k1");
        let v = Verifier::builder(StaticKeys::new().with(vk, KeySource::Pinned))
            .http(HttpPolicy::new())
            .build();
        let mut cfg = VerifyConfig::new(v, SiteAuthorities::only([site]).unwrap());
        cfg.max_body = max_body;
        cfg.accept_signature = Some(HeaderValue::from_static(
            r#"sig1=("@method" "@authority" "@path" "content-digest")"#,
        ));
        VerifyLayer::with_config(cfg)
    }

    async fn call(l: VerifyLayer, req: Request<Vec<u8>>) -> (StatusCode, String, bool) {
        let svc = l.layer(service_fn(|r: Request<Full<Bytes>>| async move {
            let covered = r
                .extensions()
                .get::<VerifiedRequest>()
                .map(|v| v.covered.join(" "));
            let body = r.into_body().collect().await.unwrap().to_bytes();
            let mut res = Response::new(Full::new(body));
            if let Some(c) = covered {
                res.headers_mut()
                    .insert("x-verified", HeaderValue::from_str(&c).unwrap());
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

    #[tokio::test]
    async fn a_request_with_content_must_cover_content_digest() {
        let key = SigningKey::generate(Algorithm::EcdsaP256Sha256).unwrap();
        let target = [Derived::Method, Derived::Authority, Derived::Path];
        // Signed without content-digest: its body could be anything.
        let mut r = signed_over(&key, b"{\"a\":1}", &target, false);
        let (s, body, _) = call(layer(&key, 1024), r.clone()).await;
        assert_eq!(s, 401, "{body}");
        assert!(body.contains("content-digest"), "{body}");
        *r.body_mut() = b"{\"a\":2}".to_vec();
        let (s, _, _) = call(layer(&key, 1024), r).await;
        assert_eq!(s, 401);
        // Without content, content-digest is not needed.
        let r = signed_over(&key, b"", &target, false);
        let (s, body, verified) = call(layer(&key, 1024), r).await;
        assert_eq!(s, 200, "{body}");
        assert!(verified);
    }

    #[tokio::test]
    async fn method_and_target_are_required_and_listed() {
        let key = SigningKey::generate(Algorithm::EcdsaP256Sha256).unwrap();
        for derived in [
            &[Derived::Method][..],
            &[Derived::Authority, Derived::Path],
            &[Derived::Method, Derived::Path],
        ] {
            let (s, body, _) =
                call(layer(&key, 1024), signed_over(&key, b"{}", derived, true)).await;
            assert_eq!(s, 401, "{derived:?}: {body}");
            // Without @authority the signature is not bound to this site
            // at all; with it, the layer lists what is missing.
            assert!(
                body.contains("@method and @authority") || body.contains("neither @authority"),
                "{body}"
            );
        }
        let l = layer(&key, 1024);
        let svc = l.layer(service_fn(|r: Request<Full<Bytes>>| async move {
            let v = r.extensions().get::<VerifiedRequest>().unwrap().clone();
            Ok::<_, std::convert::Infallible>(Response::new(Full::new(Bytes::from(format!(
                "{} {}",
                v.label,
                v.covered.join(" ")
            )))))
        }));
        let req = signed_over(&key, b"{}", &[Derived::Method, Derived::TargetUri], true);
        let res = svc
            .oneshot(req.map(|b| Full::new(Bytes::from(b))))
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
        let body = res.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(body, r#"sig1 "@method" "@target-uri" "content-digest""#);
    }

    /// With a query, `@authority` + `@path` leave it unsigned: `@query` (or
    /// `@target-uri`) must be covered too, else the query could be changed.
    #[tokio::test]
    async fn a_query_must_be_covered() {
        let key = SigningKey::generate(Algorithm::EcdsaP256Sha256).unwrap();
        let uri = "https://example.com/tasks?owner=alice";
        let path_only = [Derived::Method, Derived::Authority, Derived::Path];
        let (s, body, _) = call(
            layer(&key, 1024),
            signed_over_uri(&key, uri, b"{}", &path_only, true),
        )
        .await;
        assert_eq!(s, 401, "{body}");
        assert!(body.contains("@query"), "{body}");
        let with_query = [
            Derived::Method,
            Derived::Authority,
            Derived::Path,
            Derived::Query,
        ];
        let (s, body, _) = call(
            layer(&key, 1024),
            signed_over_uri(&key, uri, b"{}", &with_query, true),
        )
        .await;
        assert_eq!(s, 200, "{body}");
        let target = [Derived::Method, Derived::TargetUri];
        let (s, body, _) = call(
            layer(&key, 1024),
            signed_over_uri(&key, uri, b"{}", &target, true),
        )
        .await;
        assert_eq!(s, 200, "{body}");
    }

    #[tokio::test]
    async fn a_host_that_disagrees_with_the_target_authority_is_refused() {
        let key = SigningKey::generate(Algorithm::EcdsaP256Sha256).unwrap();
        let mut r = signed(&key, b"{}");
        r.headers_mut()
            .insert(http::header::HOST, HeaderValue::from_static("evil.example"));
        let (s, body, verified) = call(layer(&key, 1024), r).await;
        assert_eq!(s, 400, "{body}");
        assert!(body.contains("Host disagrees"), "{body}");
        assert!(!verified);
        let mut r = signed(&key, b"{}");
        r.headers_mut()
            .append(http::header::HOST, HeaderValue::from_static("example.com"));
        r.headers_mut()
            .append(http::header::HOST, HeaderValue::from_static("evil.example"));
        let (s, _, _) = call(layer(&key, 1024), r).await;
        assert_eq!(s, 400);
        // The same authority, with the default port: accepted.
        let mut r = signed(&key, b"{}");
        r.headers_mut().insert(
            http::header::HOST,
            HeaderValue::from_static("Example.com:443"),
        );
        let (s, body, _) = call(layer(&key, 1024), r).await;
        assert_eq!(s, 200, "{body}");
    }

    /// A request signed for `example.com`, sent with `Host: example.com` to
    /// a gate of another site (one that answers any `Host`), is refused:
    /// the covered authority is not one the gate serves (RFC 9421 section
    /// 7.2.1). At `example.com`'s own gate it passes.
    #[tokio::test]
    async fn a_request_signed_for_another_site_is_refused_with_wrong_authority() {
        let key = SigningKey::generate(Algorithm::EcdsaP256Sha256).unwrap();
        let req = || {
            let mut r = signed(&key, b"{}");
            r.headers_mut()
                .insert(http::header::HOST, HeaderValue::from_static("example.com"));
            r
        };
        let (s, body, verified) = call(layer_for(&key, 1024, "b.example"), req()).await;
        assert_eq!(s, 401, "{body}");
        assert!(body.contains("(wrong-authority)"), "{body}");
        assert!(verified, "the 401 carries Accept-Signature");
        let (s, body, _) = call(layer_for(&key, 1024, "example.com"), req()).await;
        assert_eq!(s, 200, "{body}");
    }

    /// The layer has a replay store by default: the same signed request
    /// (same nonce) is accepted once.
    #[tokio::test]
    async fn a_nonce_is_accepted_once_by_default() {
        let key = SigningKey::generate(Algorithm::EcdsaP256Sha256).unwrap();
        let mut req = Request::builder()
            .method("POST")
            .uri("https://example.com/tasks")
            .header("content-digest", crate::digest::content_digest(b"{}"))
            .body(b"{}".to_vec())
            .unwrap();
        let spec = SignatureSpec::new("sig1")
            .component(ComponentId::derived(Derived::Method))
            .component(ComponentId::derived(Derived::Authority))
            .component(ComponentId::derived(Derived::Path))
            .component(ComponentId::field("content-digest").unwrap())
            .created(now())
            .nonce("n-0001")
            .keyid("k1");
        req.sign_signature(&spec, &key).unwrap();
        let l = layer(&key, 1024);
        let (s, body, _) = call(l.clone(), req.clone()).await;
        assert_eq!(s, 200, "{body}");
        let (s, body, _) = call(l, req).await;
        assert_eq!(s, 401, "{body}");
        assert!(body.contains("replay"), "{body}");
    }
}
