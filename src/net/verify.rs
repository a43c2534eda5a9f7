//! `verify URL` as a library call: fetch a descriptor through the guarded
//! [`Fetcher`], check its `Content-Digest` (RFC 9530), its RFC 9421
//! response signature and/or the detached JWS published beside it
//! (`URL.jws`, seed 001 section 10.3), with keys found by
//! [`Discovery`] (or given by the caller).

use super::discovery::{Discovery, DiscoveryPolicy, KeyAuthority};
use super::fetch::{FetchError, Fetched, Fetcher, Redirect};
use crate::alg::AllowList;
use crate::httpsig::message::Field;
use crate::httpsig::verify::HttpPolicy;
use crate::httpsig::Message;
use crate::trust::KeyResolver;
use crate::verifier::Verifier;
use std::sync::Arc;

/// What [`verify_url`] requires.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct UrlVerifyOptions {
    /// Fail when the descriptor carries neither an RFC 9421 signature nor
    /// a detached JWS (seed 001 section 10.3: "MUST refuse to accept
    /// unsigned descriptors when ... policy requires signed descriptors").
    pub require_signed: bool,
    /// Largest age of an RFC 9421 signature's `created`, in seconds.
    pub max_age: Option<u64>,
    /// Algorithms accepted (default: every asymmetric algorithm).
    pub algorithms: Option<AllowList>,
    /// Keys to use instead of discovery (pinned by the caller).
    pub keys: Option<Arc<dyn KeyResolver>>,
    /// Verify as if the time were this (Unix seconds), for tests and audits.
    pub now: Option<i64>,
    /// The key authority used when the descriptor names none (a DID
    /// authority's document, seed 001 section 10.3 item 3).
    pub default_authority: Option<KeyAuthority>,
    /// Discovery bounds and caching (e.g. a cache directory).
    pub discovery: DiscoveryPolicy,
}

/// Why a URL did not verify. Each failure keeps its own variant.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UrlVerifyError {
    /// Fetching failed (SSRF refusal, DNS, TLS, status, size).
    #[error("descriptor fetch failed: {0}")]
    Fetch(#[from] FetchError),
    /// The body is not a JSON object.
    #[error("the descriptor at {0} is not a JSON object")]
    NotJson(String),
    /// `Content-Digest` does not match the body (RFC 9530).
    #[error("Content-Digest does not match the body: {0}")]
    Digest(#[from] crate::digest::DigestError),
    /// The RFC 9421 response signature did not verify.
    #[error("RFC 9421 response signature: {0}")]
    HttpSignature(#[from] crate::httpsig::verify::HttpSigError),
    /// The detached JWS did not verify.
    #[error("detached JWS {url}: {source}")]
    Jws {
        /// The JWS URL.
        url: String,
        /// Why.
        #[source]
        source: crate::descriptor::DescriptorError,
    },
    /// Neither a response signature nor a detached JWS, and one is required.
    #[error("the descriptor at {0} is not signed (neither RFC 9421 Signature nor {0}.jws)")]
    Unsigned(String),
    /// A signature is present but there is no key source.
    #[error("the descriptor names no key source (authentication.authorizationServer, protectedResourceMetadata, jwksUri or jwks) and no key was given")]
    NoKeySource,
}

impl UrlVerifyError {
    /// A stable code for reports.
    pub fn code(&self) -> &'static str {
        match self {
            UrlVerifyError::Fetch(e) if e.is_refusal() => "fetch.ssrf-refused",
            UrlVerifyError::Fetch(FetchError::Dns { .. }) => "fetch.dns-failure",
            UrlVerifyError::Fetch(_) => "fetch.failed",
            UrlVerifyError::NotJson(_) => "descriptor.not-json",
            UrlVerifyError::Digest(_) => "digest.mismatch",
            UrlVerifyError::HttpSignature(_) => "httpsig.not-verified",
            UrlVerifyError::Jws { .. } => "jws.not-verified",
            UrlVerifyError::Unsigned(_) => "descriptor.unsigned",
            UrlVerifyError::NoKeySource => "keys.no-source",
        }
    }
}

/// A verified (or, without `require_signed`, an unsigned but
/// digest-checked) descriptor.
#[derive(Debug)]
#[non_exhaustive]
pub struct UrlVerified {
    /// The URL finally fetched.
    pub url: String,
    /// The redirects followed.
    pub redirects: Vec<Redirect>,
    /// The descriptor bytes as served.
    pub body: Vec<u8>,
    /// The parsed descriptor.
    pub descriptor: serde_json::Value,
    /// Whether a `Content-Digest` was present and matched.
    pub digest_checked: bool,
    /// The RFC 9421 report, when the response was signed.
    pub http_signature: Option<crate::httpsig::verify::VerifyReport>,
    /// The detached JWS report, when `URL.jws` was published.
    pub jws: Option<crate::descriptor::Report>,
    /// Where the keys came from.
    pub key_authority: Option<KeyAuthority>,
}

impl UrlVerified {
    /// Whether at least one signature verified.
    pub fn signed(&self) -> bool {
        self.http_signature.is_some() || self.jws.is_some()
    }
}

fn message_of(f: &Fetched) -> Message {
    let headers = f
        .headers
        .iter()
        .map(|(k, v)| Field {
            name: k.as_str().to_ascii_lowercase(),
            value: v.as_bytes().to_vec(),
        })
        .collect();
    Message::response(f.status, headers, f.body.clone())
}

/// Fetch `url` and verify it; see the module documentation.
pub fn verify_url(
    fetcher: &Fetcher,
    url: &str,
    opts: &UrlVerifyOptions,
) -> Result<UrlVerified, UrlVerifyError> {
    // The descriptor and its detached JWS are fetched concurrently (one
    // round trip, not two: the draft's fewest). If the descriptor was
    // redirected, the JWS beside its final URL is fetched afterwards.
    let early_jws_url = format!("{url}.jws");
    let (f, early_jws) = std::thread::scope(|s| {
        let jws = s.spawn(|| fetcher.get(&early_jws_url));
        let f = fetcher.get_with(url, &[("accept", "application/json")]);
        (f, jws.join())
    });
    let f = f?;
    let descriptor: serde_json::Value = serde_json::from_slice(&f.body)
        .ok()
        .filter(|v: &serde_json::Value| v.is_object())
        .ok_or_else(|| UrlVerifyError::NotJson(f.url.clone()))?;
    let digest_lines: Vec<&[u8]> = f
        .headers
        .get_all("content-digest")
        .iter()
        .map(|v| v.as_bytes())
        .collect();
    let digest_checked = !digest_lines.is_empty();
    if digest_checked {
        crate::digest::verify_content_digest(&digest_lines, &f.body)?;
    }
    let has_http_sig = f.headers.contains_key("signature");
    let jws_url = format!("{}.jws", f.url);
    let jws_fetched = match early_jws {
        Ok(r) if jws_url == early_jws_url => r,
        _ => fetcher.get(&jws_url),
    };
    let jws_text = match jws_fetched {
        Ok(j) => Some(String::from_utf8_lossy(&j.body).trim().to_owned()),
        Err(FetchError::Status { status: 404, .. })
        | Err(FetchError::Status { status: 410, .. }) => None,
        Err(e) => return Err(e.into()),
    };
    let mut out = UrlVerified {
        url: f.url.clone(),
        redirects: f.redirects.clone(),
        body: f.body.clone(),
        descriptor,
        digest_checked,
        http_signature: None,
        jws: None,
        key_authority: None,
    };
    if !has_http_sig && jws_text.is_none() {
        if opts.require_signed {
            return Err(UrlVerifyError::Unsigned(f.url));
        }
        return Ok(out);
    }
    let keys: Arc<dyn KeyResolver> = match &opts.keys {
        Some(k) => k.clone(),
        None => {
            let a = KeyAuthority::from_descriptor(&out.descriptor)
                .or_else(|| opts.default_authority.clone())
                .ok_or(UrlVerifyError::NoKeySource)?;
            out.key_authority = Some(a.clone());
            Arc::new(Discovery::with_policy(
                fetcher.clone(),
                a,
                opts.discovery.clone(),
            ))
        }
    };
    let mut http = HttpPolicy::new();
    http.required = crate::httpsig::verify::descriptor_response_components();
    http.max_age = opts.max_age;
    http.check_content_digest = true;
    let mut b = Verifier::builder_arc(keys).http(http);
    if let Some(a) = &opts.algorithms {
        b = b.algorithms(a.clone());
    }
    if let Some(now) = opts.now {
        b = b.clock(crate::clock::FixedClock(now));
    }
    let v = b.build();
    if has_http_sig {
        out.http_signature = Some(v.verify_http(&message_of(&f), None)?);
    }
    if let Some(j) = jws_text {
        out.jws = Some(
            v.verify_descriptor(&f.body, &j)
                .map_err(|source| UrlVerifyError::Jws {
                    url: jws_url,
                    source,
                })?,
        );
    }
    Ok(out)
}
