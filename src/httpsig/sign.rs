//! Creating signatures (RFC 9421 section 3.1).

use super::base::{signature_base, signature_params_value};
use super::components::{ComponentError, ComponentId, SfType};
use super::message::Message;
use super::{check_params, valid_label, ParamError};
use crate::keys::{KeyError, SigningKey};
use crate::sfv::{self, BareItem};
use crate::Algorithm;

/// What to sign: a label, the covered components in order, and the
/// signature parameters in the order they will be serialized (RFC 9421
/// section 2.3): the named setters keep the registered parameters in
/// [`PARAM_ORDER`], [`SignatureSpec::param`] appends where it is called.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureSpec {
    /// The label: the `Signature-Input` and `Signature` Dictionary key (an
    /// sf-key of at most [`MAX_LABEL`](super::MAX_LABEL) characters, RFC
    /// 9421 section 4.1).
    pub label: String,
    /// The covered components, in the order they appear in the signature
    /// base (RFC 9421 section 2.5).
    pub components: Vec<ComponentId>,
    /// The signature parameters, in serialization order (RFC 9421 section
    /// 2.3); `created` and `expires` are Integers in seconds since the Unix
    /// epoch.
    pub params: sfv::Params,
    /// Structured-field types for `;sf` beyond the built-in table.
    pub sf_types: Vec<(String, SfType)>,
}

impl SignatureSpec {
    /// An empty specification with this label.
    pub fn new(label: impl Into<String>) -> SignatureSpec {
        SignatureSpec {
            label: label.into(),
            components: Vec::new(),
            params: Vec::new(),
            sf_types: Vec::new(),
        }
    }
    /// Cover a component (in order).
    pub fn component(mut self, c: ComponentId) -> Self {
        self.components.push(c);
        self
    }
    /// Append a parameter after those already given, exactly where it is
    /// called (use it to reproduce a given serialization, e.g. a test
    /// vector's).
    pub fn param(mut self, name: &str, v: BareItem) -> Self {
        self.params.push((name.to_owned(), v));
        self
    }
    /// Insert a registered parameter at its place in [`PARAM_ORDER`],
    /// before every parameter that comes later in it and before unknown
    /// parameters.
    fn place(mut self, name: &str, v: BareItem) -> Self {
        let rank = |n: &str| {
            PARAM_ORDER
                .iter()
                .position(|p| *p == n)
                .unwrap_or(PARAM_ORDER.len())
        };
        let mine = rank(name);
        let at = self
            .params
            .iter()
            .position(|(n, _)| rank(n) > mine)
            .unwrap_or(self.params.len());
        self.params.insert(at, (name.to_owned(), v));
        self
    }
    /// `created` (section 2.3), placed in [`PARAM_ORDER`].
    pub fn created(self, t: i64) -> Self {
        self.place("created", BareItem::Integer(t))
    }
    /// `expires` (section 2.3), placed in [`PARAM_ORDER`].
    pub fn expires(self, t: i64) -> Self {
        self.place("expires", BareItem::Integer(t))
    }
    /// `nonce` (section 2.3), placed in [`PARAM_ORDER`].
    pub fn nonce(self, n: &str) -> Self {
        self.place("nonce", BareItem::String(n.to_owned()))
    }
    /// `alg` (section 2.3): must equal the signing key's algorithm; placed
    /// in [`PARAM_ORDER`].
    pub fn alg(self, a: Algorithm) -> Self {
        self.place("alg", BareItem::String(a.httpsig_name().to_owned()))
    }
    /// `keyid` (section 2.3), placed in [`PARAM_ORDER`].
    pub fn keyid(self, k: &str) -> Self {
        self.place("keyid", BareItem::String(k.to_owned()))
    }
    /// `tag` (section 2.3), placed in [`PARAM_ORDER`].
    pub fn tag(self, t: &str) -> Self {
        self.place("tag", BareItem::String(t.to_owned()))
    }
}

/// The order in which [`SignatureSpec`]'s named setters place the
/// registered signature parameters: that of RFC 9421 section 2.3's list
/// (`created`, `expires`, `nonce`, `alg`, `keyid`, `tag`), whatever order
/// they are called in. Any order is valid RFC 9421 (the received
/// `@signature-params` value is signed as sent, and agentsig verifies any
/// order), but some verifiers (the `httpsig` crate up to at least 0.0.26)
/// rebuild `@signature-params` in this fixed order instead of using the
/// received value, and so refuse a signature whose parameters are in
/// another; signing in this order verifies everywhere.
pub const PARAM_ORDER: [&str; 6] = super::KNOWN_PARAMS;

/// Why a message could not be signed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SignError {
    /// The label is not an sf-key of 1 to [`MAX_LABEL`](super::MAX_LABEL)
    /// characters (RFC 9421 section 4.1); holds it.
    #[error("label {0:?} is not a valid label (an sf-key of at most 64 characters)")]
    BadLabel(String),
    /// The message's `Signature-Input` already has this label; a second
    /// member would make the Dictionary ambiguous (RFC 9421 section 4.1).
    #[error("the message already carries a signature labelled {0:?}")]
    LabelExists(String),
    /// A covered component is invalid or cannot be read from the message
    /// (RFC 9421 section 2).
    #[error(transparent)]
    Component(#[from] ComponentError),
    /// A signature parameter is repeated or has the wrong type (RFC 9421
    /// section 2.3).
    #[error(transparent)]
    Param(#[from] ParamError),
    /// A String parameter holds a character an sf-string cannot carry (RFC
    /// 9651 section 3.3.3: printable ASCII only), or the produced fields are
    /// not valid `http` header values; holds the text.
    #[error("parameter value {0:?} is not a printable ASCII string")]
    BadString(String),
    /// The `alg` parameter names another algorithm than the key's (RFC 9421
    /// section 3.1: the key determines the algorithm).
    #[error("alg parameter {param:?} does not match the key's algorithm {key}")]
    AlgMismatch {
        /// The `alg` parameter as given.
        param: String,
        /// The signing key's algorithm.
        key: Algorithm,
    },
    /// More than [`MAX_COMPONENTS`](super::MAX_COMPONENTS) covered components.
    #[error("too many covered components (at most {max})", max = super::MAX_COMPONENTS)]
    TooManyComponents,
    /// The key failed to sign the signature base.
    #[error("signing failed: {0}")]
    Key(#[from] KeyError),
    /// The message already has a `Signature-Input` field that is not a
    /// valid Dictionary, so the new label cannot be checked against it.
    #[error("the existing Signature-Input field is malformed: {0}")]
    ExistingInput(sfv::SfError),
}

impl SignError {
    /// True when the key's holder failed to sign (a PKCS#11 token away, its
    /// login lost, a reconnect failed): a condition that passes, which a
    /// server answers with 503 and Retry-After (RFC 9110 sections 15.6.4
    /// and 10.2.3), not 500.
    pub fn signer_unavailable(&self) -> bool {
        #[cfg(feature = "pkcs11")]
        {
            matches!(self, SignError::Key(KeyError::Pkcs11(_)))
        }
        #[cfg(not(feature = "pkcs11"))]
        {
            false
        }
    }
}

/// A produced signature.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Signed {
    /// The label it was produced under.
    pub label: String,
    /// The `@signature-params` value (the Inner List with parameters).
    pub params_value: String,
    /// The `Signature-Input` dictionary member, `label=(...);...`.
    pub signature_input: String,
    /// The `Signature` dictionary member, `label=:...:`.
    pub signature: String,
    /// The raw signature bytes.
    pub signature_bytes: Vec<u8>,
    /// The exact signature base that was signed.
    pub base: Vec<u8>,
}

/// Sign `msg` (RFC 9421 section 3.1). `related` is the request a response
/// answers, needed for `;req` components.
///
/// The signature base is built from `spec` (section 2.5) and signed with
/// `key`; the message itself is not changed: add the result with
/// [`Signed::apply`] or [`Signed::apply_headers`]. The label must not
/// already be in the message's `Signature-Input`.
///
/// ```
/// use agentsig::httpsig::{self, ComponentId, Derived, Message, SignatureSpec};
/// use agentsig::{Algorithm, SigningKey};
///
/// let mut request = Message::parse(
///     b"POST /tasks?id=7 HTTP/1.1\r\nHost: agent.example\r\n\
///       Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
///     "https",
/// )?;
/// let key = SigningKey::generate(Algorithm::Ed25519)?;
/// let spec = SignatureSpec::new("sig1")
///     .component(ComponentId::derived(Derived::Method))
///     .component(ComponentId::derived(Derived::Authority))
///     .component(ComponentId::derived(Derived::Path))
///     .component(ComponentId::field("content-type")?)
///     .created(1_700_000_000)
///     .keyid("agent-key-1");
/// let signed = httpsig::sign(&request, None, &spec, &key)?;
/// assert_eq!(
///     String::from_utf8(signed.base.clone())?,
///     "\"@method\": POST\n\
///      \"@authority\": agent.example\n\
///      \"@path\": /tasks\n\
///      \"content-type\": application/json\n\
///      \"@signature-params\": (\"@method\" \"@authority\" \"@path\" \"content-type\")\
///      ;created=1700000000;keyid=\"agent-key-1\""
/// );
/// assert!(signed.signature_input.starts_with("sig1=(\"@method\""));
/// signed.apply(&mut request);
/// // The same label cannot be used twice.
/// assert!(httpsig::sign(&request, None, &spec, &key).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`SignError`] when a covered component is missing or malformed, a parameter is invalid, or the
/// key cannot sign under the requested algorithm.
pub fn sign(
    msg: &Message,
    related: Option<&Message>,
    spec: &SignatureSpec,
    key: &SigningKey,
) -> Result<Signed, SignError> {
    let (params_value, base) = prepare(msg, related, spec, key)?;
    let sig = key.sign(&base)?;
    let mut signature = format!("{}=", spec.label);
    sfv::write_bare(&mut signature, &BareItem::ByteSeq(sig.clone()));
    Ok(Signed {
        label: spec.label.clone(),
        signature_input: format!("{}={}", spec.label, params_value),
        params_value,
        signature,
        signature_bytes: sig,
        base,
    })
}

/// The checks of [`sign`] (label, components, parameters, `alg` bound to
/// `key`, RFC 9421 section 3.1) and what it signs: the `@signature-params`
/// value and the signature base (section 2.5).
fn prepare(
    msg: &Message,
    related: Option<&Message>,
    spec: &SignatureSpec,
    key: &SigningKey,
) -> Result<(String, Vec<u8>), SignError> {
    let params_value = checked_params_value(spec, key)?;
    let base = base_for(msg, related, spec, &params_value)?;
    Ok((params_value, base))
}

/// The checks of [`sign`] that depend on `spec` and `key` alone (label,
/// number of components, parameters, `alg` bound to `key`, RFC 9421
/// section 3.1), and the `@signature-params` value (section 2.3).
pub(crate) fn checked_params_value(
    spec: &SignatureSpec,
    key: &SigningKey,
) -> Result<String, SignError> {
    if !valid_label(&spec.label) {
        return Err(SignError::BadLabel(spec.label.clone()));
    }
    if spec.components.len() > super::MAX_COMPONENTS {
        return Err(SignError::TooManyComponents);
    }
    check_params(&spec.params)?;
    for (_, v) in &spec.params {
        if let BareItem::String(s) = v {
            if !sfv::is_sf_string(s) {
                return Err(SignError::BadString(s.clone()));
            }
        }
    }
    if let Some(a) = super::param_str(&spec.params, "alg") {
        if Algorithm::from_httpsig_name(a) != Some(key.algorithm()) {
            return Err(SignError::AlgMismatch {
                param: a.to_owned(),
                key: key.algorithm(),
            });
        }
    }
    Ok(signature_params_value(&spec.components, &spec.params))
}

/// The signature base of `spec` over `msg` (section 2.5), `params_value`
/// being [`checked_params_value`]'s, after checking that `msg` carries no
/// signature of the same label (section 4.1).
pub(crate) fn base_for(
    msg: &Message,
    related: Option<&Message>,
    spec: &SignatureSpec,
    params_value: &str,
) -> Result<Vec<u8>, SignError> {
    let existing: Vec<&[u8]> = msg.field_lines("signature-input", false).collect();
    if !existing.is_empty() {
        let d = sfv::parse_dictionary_raw(&existing.join(&b", "[..]))
            .map_err(SignError::ExistingInput)?;
        if d.0.iter().any(|(k, _)| *k == spec.label) {
            return Err(SignError::LabelExists(spec.label.clone()));
        }
    }
    let lookup = super::sf_type_lookup(&spec.sf_types);
    Ok(signature_base(
        msg,
        related,
        &spec.components,
        params_value,
        &lookup,
    )?)
}

impl Signed {
    /// Add the `Signature-Input` and `Signature` fields to a message model.
    pub fn apply(&self, msg: &mut Message) {
        msg.add_header("Signature-Input", &self.signature_input);
        msg.add_header("Signature", &self.signature);
    }

    /// Append the fields to an `http` header map (as new field lines).
    ///
    /// # Errors
    /// [`SignError`] when a field value cannot be put in an `http` header (not visible ASCII).
    pub fn apply_headers(&self, h: &mut http::HeaderMap) -> Result<(), SignError> {
        let bad = |_| SignError::BadString(self.signature_input.clone());
        h.append(
            http::header::HeaderName::from_static("signature-input"),
            http::HeaderValue::from_str(&self.signature_input).map_err(bad)?,
        );
        h.append(
            http::header::HeaderName::from_static("signature"),
            http::HeaderValue::from_str(&self.signature).map_err(bad)?,
        );
        Ok(())
    }
}

/// The scheme taken for a request whose URI has none (as a server receives
/// it): `https`. For another scheme, convert with [`Message::from_request`].
pub const DEFAULT_SCHEME: &str = "https";

/// RFC 9421 signing of `http` crate requests and responses in place: the
/// `Signature-Input` and `Signature` fields are appended to the headers
/// (as httpsig-hyper's `MessageSignatureReq`/`MessageSignatureRes` do).
///
/// # Example
/// ```
/// use agentsig::httpsig::{ComponentId, Derived, SignHttp, SignatureSpec};
/// use agentsig::{Algorithm, SigningKey};
///
/// let key = SigningKey::generate(Algorithm::Ed25519)?;
/// let mut res = http::Response::builder()
///     .status(200)
///     .header("content-type", "application/json")
///     .body(br#"{"name":"agent"}"#.to_vec())?;
/// let spec = SignatureSpec::new("sig1")
///     .component(ComponentId::derived(Derived::Status))
///     .component(ComponentId::field("content-type")?)
///     .keyid(&key.kid_or_thumbprint());
/// res.sign_signature(&spec, &key)?;
/// assert!(res.headers().contains_key("signature"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait SignHttp {
    /// Sign the message with `key` as `spec` says and add the fields.
    ///
    /// # Errors
    /// [`SignatureOnHttpError::Message`] when the message cannot be read
    /// (a request without authority, a non-ASCII field);
    /// [`SignatureOnHttpError::Sign`] when a covered component is missing
    /// or the key cannot sign under the requested algorithm.
    fn sign_signature(
        &mut self,
        spec: &SignatureSpec,
        key: &SigningKey,
    ) -> Result<Signed, SignatureOnHttpError>;
}

/// Signing a response that covers components of the request it answers
/// (`;req`, RFC 9421 section 2.4).
pub trait SignHttpResponse {
    /// As [`SignHttp::sign_signature`], `request` being the request this
    /// response answers.
    ///
    /// # Errors
    /// As [`SignHttp::sign_signature`].
    fn sign_signature_for<C: AsRef<[u8]>>(
        &mut self,
        request: &http::Request<C>,
        spec: &SignatureSpec,
        key: &SigningKey,
    ) -> Result<Signed, SignatureOnHttpError>;
}

impl<B: AsRef<[u8]>> SignHttp for http::Request<B> {
    fn sign_signature(
        &mut self,
        spec: &SignatureSpec,
        key: &SigningKey,
    ) -> Result<Signed, SignatureOnHttpError> {
        let m = Message::from_request(self, DEFAULT_SCHEME)?;
        let s = sign(&m, None, spec, key)?;
        s.apply_headers(self.headers_mut())?;
        Ok(s)
    }
}

impl<B: AsRef<[u8]>> SignHttp for http::Response<B> {
    fn sign_signature(
        &mut self,
        spec: &SignatureSpec,
        key: &SigningKey,
    ) -> Result<Signed, SignatureOnHttpError> {
        let m = Message::from_response(self)?;
        let s = sign(&m, None, spec, key)?;
        s.apply_headers(self.headers_mut())?;
        Ok(s)
    }
}

impl<B: AsRef<[u8]>> SignHttpResponse for http::Response<B> {
    fn sign_signature_for<C: AsRef<[u8]>>(
        &mut self,
        request: &http::Request<C>,
        spec: &SignatureSpec,
        key: &SigningKey,
    ) -> Result<Signed, SignatureOnHttpError> {
        let m = Message::from_response(self)?;
        let r = Message::from_request(request, DEFAULT_SCHEME)?;
        let s = sign(&m, Some(&r), spec, key)?;
        s.apply_headers(self.headers_mut())?;
        Ok(s)
    }
}

/// Errors of [`SignHttp`] and [`SignHttpResponse`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SignatureOnHttpError {
    /// The `http` request or response could not be converted to a
    /// [`Message`] (e.g. it has no authority).
    #[error(transparent)]
    Message(#[from] super::message::MessageError),
    /// Signing failed.
    #[error(transparent)]
    Sign(#[from] SignError),
}

/// The response fields a static host must send with a descriptor (draft-narvaneni-agent-uri-03
/// section 10.3): `Content-Type`, `Content-Digest` (sha-256 of the body,
/// RFC 9530), and `Signature-Input`/`Signature` covering `@status`,
/// `content-type` and `content-digest` with `created`, `expires` when
/// given, `alg` and `keyid`, in [`PARAM_ORDER`] (RFC 9421 section 2.3).
/// The signed `@status` is 200.
///
/// Returned in the order to send them, as (name, value) pairs.
///
/// # Errors
/// [`SignError`] when a covered component is missing or malformed, a parameter is invalid, or the
/// key cannot sign under the requested algorithm.
pub fn static_response_fields(
    body: &[u8],
    content_type: &str,
    keys: &[(&SigningKey, String)],
    created: i64,
    expires: Option<i64>,
) -> Result<Vec<(String, String)>, SignError> {
    let digest = crate::digest::content_digest(body);
    let mut res = Message::response(200, Vec::new(), body.to_vec());
    res.add_header("Content-Type", content_type);
    res.add_header("Content-Digest", &digest);
    let mut fields = vec![
        ("Content-Type".to_owned(), content_type.to_owned()),
        ("Content-Digest".to_owned(), digest),
    ];
    for (i, (key, keyid)) in keys.iter().enumerate() {
        let mut spec = SignatureSpec::new(format!("sig{}", i + 1));
        spec.components = super::verify::descriptor_response_components();
        spec = spec.created(created).keyid(keyid).alg(key.algorithm());
        if let Some(e) = expires {
            spec = spec.expires(e);
        }
        let s = sign(&res, None, &spec, key)?;
        s.apply(&mut res);
        fields.push(("Signature-Input".to_owned(), s.signature_input));
        fields.push(("Signature".to_owned(), s.signature));
    }
    Ok(fields)
}

/// The components agentsig signs when the caller names none: for a request
/// `@method`, `@authority`, `@path` and, when present, `content-type` and
/// `content-digest`; for a response the descriptor-response set of draft-narvaneni-agent-uri-03
/// section 10.3 (`@status`, `content-type`, `content-digest`).
pub fn default_components(msg: &Message) -> Vec<ComponentId> {
    use super::components::Derived;
    if msg.is_request() {
        let mut v = vec![
            ComponentId::derived(Derived::Method),
            ComponentId::derived(Derived::Authority),
            ComponentId::derived(Derived::Path),
        ];
        for f in ["content-type", "content-digest"] {
            if msg.field_lines(f, false).next().is_some() {
                v.extend(ComponentId::field(f).ok());
            }
        }
        v
    } else {
        super::verify::descriptor_response_components()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(spec: &SignatureSpec) -> Vec<&str> {
        spec.params.iter().map(|(n, _)| n.as_str()).collect()
    }

    #[test]
    fn named_setters_keep_rfc_9421_section_2_3_order() {
        // The order agentsig's CLI, serve layer and static fields call them in.
        let spec = SignatureSpec::new("sig1")
            .created(1)
            .keyid("k")
            .alg(Algorithm::Ed25519)
            .expires(2);
        assert_eq!(names(&spec), ["created", "expires", "alg", "keyid"]);
        let spec = SignatureSpec::new("sig1")
            .tag("t")
            .keyid("k")
            .nonce("n")
            .alg(Algorithm::EcdsaP256Sha256)
            .expires(2)
            .created(1);
        assert_eq!(names(&spec), PARAM_ORDER);
        // Unknown parameters stay after the registered ones, and `param`
        // appends exactly where it is called.
        let spec = SignatureSpec::new("sig1")
            .param("x-ext", BareItem::Integer(1))
            .keyid("k")
            .created(1)
            .param("created2", BareItem::Integer(1));
        assert_eq!(names(&spec), ["created", "keyid", "x-ext", "created2"]);
    }

    #[test]
    fn static_response_fields_use_the_fixed_order() {
        let key = SigningKey::generate(Algorithm::Ed25519).unwrap();
        let fields = static_response_fields(
            b"{}",
            "application/json",
            &[(&key, "k1".to_owned())],
            10,
            Some(20),
        )
        .unwrap();
        let input = fields
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("signature-input"))
            .map(|(_, v)| v.clone())
            .unwrap();
        assert!(
            input.ends_with(";created=10;expires=20;alg=\"ed25519\";keyid=\"k1\""),
            "{input}"
        );
    }
}
