//! `agentsig.node`: the native half of the `agentsig` Node.js package
//! (napi-rs). It binds the settled Rust API, as the Python package does:
//! [`agentsig::Verifier`] and its `verify_*` methods, [`agentsig::SigningKey`],
//! descriptor, A2A card and RFC 9421 signing, RFC 8785 canonicalization and
//! the Web Bot Auth profile.
//!
//! # Contract
//! * The JavaScript half (`index.js`) checks every argument's type (a wrong
//!   type is a JavaScript `TypeError` there) and hands this module plain
//!   values: strings, one JSON text of options or arguments, and `Buffer`s,
//!   whose length is checked against a bound before they are copied.
//! * Success returns a string: the report as the CLI prints it under
//!   `--json` (the very [`agentsig::report::Report`], serialized by serde),
//!   a JWS, or a JSON text. Failure throws an `Error` whose message is
//!   [`MARK`] followed by a JSON object `{class, code, message, report}`,
//!   which the JavaScript half turns into the typed error (`NotVerified`,
//!   `PolicyRefused`, `FetchError`, `BadKey`, `BadInput`).
//! * No input reaches an `unwrap`/`expect`, and every call runs under
//!   `catch_unwind`: a bug is a `BadInput` with code `internal`, never an
//!   abort of the Node.js process.
//! * The `...Async` forms run the same code on the libuv thread pool
//!   (napi `AsyncTask`), so a key fetch or an RSA verification never holds
//!   the event loop.

// `deny`, not `forbid`: the napi macros generate the FFI glue under
// `allow(unsafe_code)`; this file itself holds no unsafe code.
#![deny(unsafe_code)]
#![deny(clippy::unwrap_used, clippy::expect_used)]

use agentsig::clock::FixedClock;
use agentsig::httpsig::message::{Field, RequestLine, MAX_FIELD_LINES, MAX_HEAD_BYTES};
use agentsig::httpsig::{ComponentId, Derived, HttpPolicy, HttpSigError, Message, SignatureSpec};
use agentsig::replay::ReplayStore;
use agentsig::report::{Report, Verdict};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::webbotauth::{KeyDirectory, StaticDirectory, WebBotAuthVerifier};
use agentsig::{Algorithm, AllowList, SigningKey, VerifyingKey};
use napi::bindgen_prelude::{AsyncTask, Buffer};
use napi::{Env, Task};
use napi_derive::napi;
use serde_json::{json, Map, Value};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

mod pkcs11;

/// The prefix of the message of every error this module throws: the rest is
/// the JSON failure the JavaScript half turns into a typed error.
pub const MARK: &str = "\u{0}agentsig:";

/// Largest HTTP body (and A2A card or delegation bundle) accepted by a
/// call: 16 MiB, the CLI's bound on any input (`docs/report.md`,
/// `input.unreadable`).
pub const MAX_INPUT_BYTES: usize = 16 * 1024 * 1024;

/// Default lifetime of a request signature (`expires - created`), seconds:
/// the Web Bot Auth default.
pub const DEFAULT_EXPIRES_IN: u64 = agentsig::webbotauth::DEFAULT_LIFETIME;

/// Most agents `agentKeys` may name.
const MAX_AGENTS: usize = 1024;

// ---------------------------------------------------------------- errors

/// What a failed call throws: the error class of `errors.js`, the stable
/// code (`docs/report.md`) and the message, and the report when there is
/// one.
struct Failure {
    class: &'static str,
    code: String,
    message: String,
    report: Option<Box<Report>>,
}

impl Failure {
    fn bad_input(code: &str, message: impl Into<String>) -> Failure {
        Failure {
            class: "BadInput",
            code: code.to_owned(),
            message: message.into(),
            report: None,
        }
    }
    fn malformed(message: impl Into<String>) -> Failure {
        Failure::bad_input("input.malformed", message)
    }
    fn too_large(what: &str, n: usize, max: usize) -> Failure {
        Failure::bad_input(
            "input.unreadable",
            format!("{what} of {n} bytes is larger than the {max}-byte bound"),
        )
    }
    fn bad_key(message: impl Into<String>) -> Failure {
        Failure {
            class: "BadKey",
            code: "key.unusable".into(),
            message: message.into(),
            report: None,
        }
    }
    fn usage(message: impl Into<String>) -> Failure {
        Failure::bad_input("usage", message)
    }
    /// A report that did not verify: `FetchError` when a key directory
    /// could not be fetched, `PolicyRefused` when policy refused it (see
    /// [`policy_refusal`]), else `NotVerified`.
    fn not_verified(report: Report) -> Failure {
        let (code, message) = match &report.error {
            Some(p) => (p.code.clone(), p.message.clone()),
            None => ("failed".to_owned(), "nothing verified".to_owned()),
        };
        Failure {
            class: if FETCH_CODES.contains(&code.as_str()) {
                "FetchError"
            } else if policy_refusal(&report) {
                "PolicyRefused"
            } else {
                "NotVerified"
            },
            message: format!("{}: not verified: {message}", report.command),
            code,
            report: Some(Box::new(report)),
        }
    }
    /// The error thrown to JavaScript: [`MARK`] and the failure as JSON.
    fn into_napi(self) -> napi::Error {
        let report = self
            .report
            .and_then(|r| serde_json::to_value(&*r).ok())
            .unwrap_or(Value::Null);
        let body = json!({
            "class": self.class,
            "code": self.code,
            "message": self.message,
            "report": report,
        });
        napi::Error::from_reason(format!("{MARK}{body}"))
    }
}

/// Codes of a Web Bot Auth key directory that could not be fetched
/// (`DirectoryError::code`): the network, TLS, the SSRF guard, the HTTP
/// exchange, or too many directory fetches under way (`directory-busy`)
/// (`docs/web-bot-auth.md`: "the fetch"); thrown as `FetchError`.
/// A directory fetched and refused for its content stays `NotVerified`.
const FETCH_CODES: [&str; 7] = [
    "directory-busy",
    "directory-fetch-failed",
    "directory-refused",
    "directory-redirect",
    "directory-status",
    "directory-too-large",
    "directory-timeout",
];

/// Codes of policy refusals, beyond any signature whose verdict is
/// `refused` (`docs/report.md`): the signature may be genuine, but the
/// verifier's policy does not accept it.
const POLICY_CODES: [&str; 14] = [
    "alg-not-allowed",
    "algorithm-not-allowed",
    "too-old",
    "expired",
    "created-in-future",
    "replay",
    "tag-mismatch",
    "required-component-not-covered",
    "request-target-not-covered",
    "typ-mismatch",
    "key-header-offered",
    "jwt.expired",
    "jwt.replay",
    "exchange.scope-widened",
];

/// Whether a report that did not verify was refused by policy rather than
/// by a signature that does not match: no signature is `invalid`, and one
/// is `refused` or the first reason has a policy code.
fn policy_refusal(r: &Report) -> bool {
    // Delegation codes are namespaced (`jwt.alg-not-allowed`): the last
    // part names the rule.
    let policy_code = |c: &str| {
        POLICY_CODES.contains(&c)
            || POLICY_CODES.contains(&c.rsplit('.').next().unwrap_or(c))
            || c.contains("replay")
            || c.contains("widen")
    };
    let code = r.error.as_ref().map_or("", |e| e.code.as_str());
    if r.signatures.iter().any(|s| s.verdict == "invalid") && !policy_code(code) {
        return false;
    }
    policy_code(code) || r.signatures.iter().any(|s| s.verdict == "refused")
}

type Out<T> = Result<T, Failure>;

/// A report that must be `verified`: its `--json` text, or the failure.
fn settle(r: Report) -> Out<String> {
    if r.verified {
        serde_json::to_string(&r)
            .map_err(|e| Failure::bad_input("internal", format!("report: {e}")))
    } else {
        Err(Failure::not_verified(r))
    }
}

/// Run `f`, turning a panic into a failure (a panic must never cross into
/// Node.js, where it would abort the process).
fn guarded<T>(f: impl FnOnce() -> Out<T>) -> napi::Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(e.into_napi()),
        Err(_) => Err(Failure::bad_input(
            "internal",
            "agentsig failed internally on this input; please report it with the input",
        )
        .into_napi()),
    }
}

// -------------------------------------------------------------- arguments

/// The arguments of a call: one JSON object the JavaScript half built.
struct Args(Map<String, Value>);

impl Args {
    fn parse(text: &str) -> Out<Args> {
        match serde_json::from_str(text) {
            Ok(Value::Object(m)) => Ok(Args(m)),
            _ => Err(Failure::usage("the arguments are not a JSON object")),
        }
    }
    fn get(&self, k: &str) -> Option<&Value> {
        self.0.get(k).filter(|v| !v.is_null())
    }
    fn str(&self, k: &str) -> Out<Option<String>> {
        match self.get(k) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(Failure::usage(format!("{k} must be a string"))),
        }
    }
    fn need_str(&self, k: &str) -> Out<String> {
        self.str(k)?
            .ok_or_else(|| Failure::usage(format!("{k} is required")))
    }
    fn bool(&self, k: &str) -> Out<bool> {
        match self.get(k) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(Failure::usage(format!("{k} must be a boolean"))),
        }
    }
    /// A whole number, read by `as_n` (`Value::as_u64`, `Value::as_i64`).
    fn number<T>(&self, k: &str, as_n: fn(&Value) -> Option<T>) -> Out<Option<T>> {
        self.get(k)
            .map(|v| as_n(v).ok_or_else(|| Failure::usage(format!("{k} must be a whole number"))))
            .transpose()
    }
    fn u64(&self, k: &str) -> Out<Option<u64>> {
        self.number(k, Value::as_u64)
    }
    fn i64(&self, k: &str) -> Out<Option<i64>> {
        self.number(k, Value::as_i64)
    }
    fn strings(&self, k: &str) -> Out<Option<Vec<String>>> {
        match self.get(k) {
            None => Ok(None),
            Some(Value::Array(a)) => a
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| Failure::usage(format!("{k} must be a list of strings")))
                })
                .collect::<Out<Vec<_>>>()
                .map(Some),
            Some(_) => Err(Failure::usage(format!("{k} must be a list of strings"))),
        }
    }
    /// Header fields given as a flat list `[name, value, name, value, ...]`
    /// (Node's `rawHeaders` form), checked as [`check_headers`] does.
    fn headers(&self, k: &str) -> Out<Vec<(String, String)>> {
        let flat = self.strings(k)?.unwrap_or_default();
        if flat.len() % 2 != 0 {
            return Err(Failure::usage(format!("{k}: an odd number of items")));
        }
        let pairs = flat
            .chunks(2)
            .map(|c| (c[0].clone(), c[1].clone()))
            .collect::<Vec<_>>();
        check_headers(&pairs)?;
        Ok(pairs)
    }
}

/// The bytes of a `Buffer` argument, checked against `max` before they are
/// copied.
fn bytes(b: Option<&Buffer>, what: &str, max: usize) -> Out<Vec<u8>> {
    let Some(b) = b else { return Ok(Vec::new()) };
    if b.len() > max {
        return Err(Failure::too_large(what, b.len(), max));
    }
    Ok(b.to_vec())
}

/// Header fields bounded by the RFC 9421 message limits (field lines,
/// header section bytes), with names that are tokens (RFC 9110 section
/// 5.1) and values free of CR, LF and NUL (RFC 9110 section 5.5).
fn check_headers(h: &[(String, String)]) -> Out<()> {
    if h.len() > MAX_FIELD_LINES {
        return Err(Failure::bad_input(
            "input.unreadable",
            format!("headers: more than {MAX_FIELD_LINES} field lines"),
        ));
    }
    let mut total = 0usize;
    for (name, value) in h {
        total = total.saturating_add(name.len() + value.len() + 4);
        if total > MAX_HEAD_BYTES {
            return Err(Failure::too_large(
                "the header section",
                total,
                MAX_HEAD_BYTES,
            ));
        }
        if name.is_empty() || !name.bytes().all(is_tchar) {
            return Err(Failure::malformed(format!(
                "{name:?} is not a field name (RFC 9110 section 5.1)"
            )));
        }
        if value.bytes().any(|c| c == b'\r' || c == b'\n' || c == 0) {
            return Err(Failure::malformed(format!(
                "the value of {name} holds CR, LF or NUL (RFC 9110 section 5.5)"
            )));
        }
    }
    Ok(())
}

fn is_tchar(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c)
}

fn fields(headers: &[(String, String)]) -> Vec<Field> {
    headers
        .iter()
        .map(|(n, v)| Field {
            name: n.to_ascii_lowercase(),
            value: v.trim_matches([' ', '\t']).as_bytes().to_vec(),
        })
        .collect()
}

fn pairs_json(h: &[(String, String)]) -> String {
    Value::Array(h.iter().map(|(n, v)| json!([n, v])).collect()).to_string()
}

/// A request model to verify: `target` is an absolute http(s) URL, or, with
/// `scheme`, an origin-form target (`/path?query`, RFC 9112 section 3.2.1)
/// whose authority is the one `Host` field (RFC 9112 section 3.2). A target
/// with a fragment (a request target has none, RFC 9112 section 3.2) and an
/// absolute URL with userinfo (RFC 9110 section 4.2.4) are refused, so the
/// target verified is the target served.
fn verified_request_message(
    method: &str,
    target: &str,
    scheme: Option<&str>,
    headers: &[(String, String)],
    body: Vec<u8>,
) -> Out<Message> {
    if target.contains('#') {
        return Err(Failure::malformed(format!(
            "{target:?} holds a fragment (#): a request target has none (RFC 9112 section 3.2); send the path and query only"
        )));
    }
    let Some(scheme) = scheme else {
        if let Some((_, rest)) = target.split_once("://") {
            let end = rest.find(['/', '?']).unwrap_or(rest.len());
            if rest[..end].contains('@') {
                return Err(Failure::malformed(format!(
                    "{target:?} holds userinfo (user@host): give the URL without it (RFC 9110 section 4.2.4)"
                )));
            }
        }
        return request_message(method, target, headers, body);
    };
    if !matches!(scheme, "https" | "http") {
        return Err(Failure::usage(format!(
            "scheme {scheme:?}: give \"https\" or \"http\""
        )));
    }
    if !target.starts_with('/') {
        return Err(Failure::malformed(format!(
            "{target:?} is not an origin-form target (it must start with /, RFC 9112 section 3.2.1); with scheme give the path and query, else an absolute URL"
        )));
    }
    let hosts: Vec<&str> = headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("host"))
        .map(|(_, v)| v.trim_matches([' ', '\t']))
        .collect();
    let [host] = hosts[..] else {
        return Err(Failure::malformed(format!(
            "{} Host fields: an origin-form request carries exactly one (RFC 9112 section 3.2)",
            hosts.len()
        )));
    };
    agentsig::httpsig::authority::parse_authority(host)
        .map_err(|e| Failure::malformed(format!("Host: {e}")))?;
    let line = RequestLine::new(method, target, Some(host), scheme)
        .map_err(|e| Failure::malformed(format!("request: {e}")))?;
    Ok(Message::request(line, fields(headers), body))
}

/// A request model from its method, absolute URL, fields and body.
fn request_message(
    method: &str,
    url: &str,
    headers: &[(String, String)],
    body: Vec<u8>,
) -> Out<Message> {
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        return Err(Failure::malformed(format!(
            "{url:?} is not an absolute http(s) URL"
        )));
    }
    let line = RequestLine::new(method, url, None, "https")
        .map_err(|e| Failure::malformed(format!("request: {e}")))?;
    if line.authority.is_empty() {
        return Err(Failure::malformed(format!("{url:?} has no authority")));
    }
    Ok(Message::request(line, fields(headers), body))
}

fn has_field(m: &Message, name: &str) -> bool {
    m.field_lines(name, false).next().is_some()
}

fn now_secs() -> i64 {
    agentsig::clock::Clock::now(&agentsig::clock::SystemClock)
}

fn algorithm(name: &str) -> Out<Algorithm> {
    Algorithm::from_any_name(name).ok_or_else(|| {
        Failure::usage(format!(
            "unknown algorithm {name:?} (JOSE names ES256, ES384, EdDSA, PS512, RS256, HS256, or RFC 9421 names)"
        ))
    })
}

// ------------------------------------------------------------------- keys

/// A private key bound to one algorithm (the native half of `SigningKey`).
#[napi]
pub struct NativeKey {
    key: Arc<SigningKey>,
}

#[napi]
impl NativeKey {
    /// Generate a new key for `alg` (JOSE or RFC 9421 name).
    #[napi(factory)]
    pub fn generate(alg: String) -> napi::Result<NativeKey> {
        guarded(|| {
            let alg = algorithm(&alg)?;
            let key = SigningKey::generate(alg)
                .map_err(|e| Failure::bad_key(format!("cannot generate a {alg:?} key: {e}")))?;
            Ok(NativeKey { key: Arc::new(key) })
        })
    }

    /// Load a private key from PEM (PKCS#8, SEC1, PKCS#1); `kid` names it in
    /// signatures (default: its RFC 7638 thumbprint).
    #[napi(factory)]
    pub fn from_pem(pem: String, kid: Option<String>) -> napi::Result<NativeKey> {
        guarded(|| {
            let key =
                SigningKey::from_pem(&pem).map_err(|e| Failure::bad_key(format!("key: {e}")))?;
            Ok(NativeKey {
                key: Arc::new(match kid {
                    Some(k) => key.with_kid(k),
                    None => key,
                }),
            })
        })
    }

    /// The key id signatures carry: the given kid, else the thumbprint.
    #[napi]
    pub fn kid(&self) -> String {
        self.key.kid_or_thumbprint()
    }

    /// The RFC 7638 thumbprint of the public key.
    #[napi]
    pub fn thumbprint(&self) -> String {
        self.key.verifying_key().thumbprint()
    }

    /// The JOSE name of the key's one algorithm.
    #[napi]
    pub fn algorithm(&self) -> String {
        self.key.algorithm().jose_name().to_owned()
    }

    /// The public JWK (RFC 7517) as JSON text, with `kid` when one was
    /// given. A shared secret (HS256) has no public form: `BadKey`.
    #[napi]
    pub fn public_jwk(&self) -> napi::Result<String> {
        guarded(|| {
            if self.key.verifying_key().is_symmetric() {
                return Err(Failure::bad_key(
                    "a shared secret (HS256) has no public JWK: its JWK would be the secret",
                ));
            }
            let mut j = self.key.verifying_key().to_jwk().to_value();
            if let (Value::Object(m), Some(k)) = (&mut j, self.key.kid()) {
                m.insert("kid".into(), Value::String(k.to_owned()));
            }
            Ok(j.to_string())
        })
    }

    /// The private key as PKCS#8 PEM, when it has that form.
    #[napi]
    pub fn private_pem(&self) -> Option<String> {
        self.key.pkcs8_pem().map(|p| p.to_string())
    }

    /// Sign: `op` is `descriptor`, `card`, `request` or `response`, `args`
    /// the JSON arguments, `data` the document or body.
    #[napi]
    pub fn sign(&self, op: String, args: String, data: Option<Buffer>) -> napi::Result<String> {
        let job = self.sign_job(op, args, data.as_ref())?;
        guarded(|| job.run())
    }

    /// [`sign`](Self::sign) on the libuv pool.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn sign_async(
        &self,
        op: String,
        args: String,
        data: Option<Buffer>,
    ) -> napi::Result<AsyncTask<Job>> {
        Ok(AsyncTask::new(self.sign_job(op, args, data.as_ref())?))
    }
}

impl NativeKey {
    fn sign_job(&self, op: String, args: String, data: Option<&Buffer>) -> napi::Result<Job> {
        guarded(|| {
            let max = match op.as_str() {
                "descriptor" | "card" => max_document_bytes(),
                _ => MAX_INPUT_BYTES,
            };
            Ok(Job(Some(Work::Sign {
                key: self.key.clone(),
                op,
                args: Args::parse(&args)?,
                data: bytes(data, "the input", max)?,
            })))
        })
    }
}

fn max_document_bytes() -> usize {
    agentsig::policy::Limits::default().max_document_bytes
}

/// RFC 8785 canonical form of a JSON text (strict I-JSON).
#[napi]
pub fn canonicalize(doc: Buffer) -> napi::Result<Buffer> {
    guarded(|| {
        let b = bytes(Some(&doc), "the document", max_document_bytes())?;
        agentsig::jcs::canonicalize(&b)
            .map(Buffer::from)
            .map_err(|e| Failure::malformed(format!("JSON: {e}")))
    })
}

/// The bounds the JavaScript half checks before it copies an argument, as
/// JSON text: `maxInputBytes` (a body, card or bundle), `maxDocumentBytes`
/// (a JSON document), `maxFieldLines` and `maxHeadBytes` (the RFC 9421
/// message limits), `maxJwsBytes`, `maxJwtBytes`.
#[napi]
pub fn limits() -> String {
    let l = agentsig::policy::Limits::default();
    json!({
        "maxInputBytes": MAX_INPUT_BYTES,
        "maxDocumentBytes": l.max_document_bytes,
        "maxJwsBytes": l.max_jws_bytes,
        "maxJwtBytes": l.max_jwt_bytes,
        "maxFieldLines": MAX_FIELD_LINES,
        "maxHeadBytes": MAX_HEAD_BYTES,
        "defaultExpiresIn": DEFAULT_EXPIRES_IN,
    })
    .to_string()
}

fn sign_descriptor(doc: &[u8], key: &SigningKey) -> Out<String> {
    let max = max_document_bytes();
    agentsig::descriptor::sign(doc, key)
        .map(|s| s.jws)
        .map_err(|e| match e {
            agentsig::descriptor::DescriptorError::Json(e) => {
                Failure::malformed(format!("descriptor is not strict I-JSON: {e}"))
            }
            agentsig::descriptor::DescriptorError::TooLarge(n) => Failure::too_large("doc", n, max),
            other => Failure::bad_key(other.to_string()),
        })
}

fn parse_json(b: &[u8], what: &str) -> Out<Value> {
    agentsig::json::parse_strict(b)
        .map_err(|e| Failure::malformed(format!("{what} is not strict I-JSON: {e}")))
}

fn sign_card(card: &[u8], key: &SigningKey, a: &Args) -> Out<String> {
    let v = parse_json(card, "card")?;
    agentsig::a2a::sign_card(&v, key, &Map::new(), a.bool("force")?)
        .map(|s| s.card.to_string())
        .map_err(|e| Failure::malformed(format!("A2A card: {e}")))
}

/// Sign `msg` (RFC 9421 section 3.1) over `spec`'s components with
/// `created`, `expires` (`created + expires_in`, when given), `keyid` and
/// `alg` from `key`: the `Signature-Input` and `Signature` fields to add.
fn sign_spec(
    msg: &Message,
    spec: SignatureSpec,
    key: &SigningKey,
    created: i64,
    expires_in: Option<u64>,
) -> Out<[(String, String); 2]> {
    let mut spec = spec
        .created(created)
        .keyid(&key.kid_or_thumbprint())
        .alg(key.algorithm());
    if let Some(e) = expires_in {
        spec = spec.expires(created.saturating_add(i64::try_from(e).unwrap_or(i64::MAX)));
    }
    let s = agentsig::httpsig::sign(msg, None, &spec, key)
        .map_err(|e| Failure::malformed(format!("RFC 9421 signing: {e}")))?;
    Ok([
        ("Signature-Input".to_owned(), s.signature_input),
        ("Signature".to_owned(), s.signature),
    ])
}

fn field_id(name: &str) -> Out<ComponentId> {
    ComponentId::field(name).map_err(|e| Failure::malformed(e.to_string()))
}

/// Sign a response (RFC 9421 section 3.1) with `Content-Digest` (RFC 9530,
/// added when absent) over `@status`, `content-type` when present and
/// `content-digest`; the headers with the added fields, as JSON pairs.
fn sign_response(body: Vec<u8>, key: &SigningKey, a: &Args) -> Out<String> {
    let status = a
        .u64("status")?
        .and_then(|s| u16::try_from(s).ok())
        .filter(|s| (100..=999).contains(s))
        .ok_or_else(|| {
            Failure::malformed("status is not a three-digit HTTP status code (RFC 9110 section 15)")
        })?;
    let mut h = a.headers("headers")?;
    let mut msg = Message::response(status, fields(&h), body);
    let mut added = Vec::new();
    if !has_field(&msg, "content-digest") {
        let d = agentsig::digest::content_digest(&msg.body);
        msg.add_header("Content-Digest", &d);
        added.push(("Content-Digest".to_owned(), d));
    }
    let created = a.i64("created")?.unwrap_or_else(now_secs);
    let label = a.str("label")?.unwrap_or_else(|| "sig1".into());
    let mut spec = SignatureSpec::new(label).component(ComponentId::derived(Derived::Status));
    for f in ["content-type", "content-digest"] {
        if has_field(&msg, f) {
            spec = spec.component(field_id(f)?);
        }
    }
    added.extend(sign_spec(&msg, spec, key, created, a.u64("expiresIn")?)?);
    h.extend(added);
    Ok(pairs_json(&h))
}

/// Sign a request: under the Web Bot Auth profile
/// (draft-ietf-webbotauth-httpsig-protocol section 5.2; `tag="web-bot-auth"`,
/// `Signature-Agent`, keyid the RFC 7638 thumbprint, `created`/`expires`, a
/// nonce) when `webBotAuth` is true, else plain RFC 9421 over `@method`,
/// `@authority`, `@path` (`@query` when there is one), `content-type` when
/// present and `content-digest` when there is a body, or the `components`
/// named. The headers with the added fields, as JSON pairs.
fn sign_request(body: Vec<u8>, key: &SigningKey, a: &Args) -> Out<String> {
    let method = a.need_str("method")?;
    let url = a.need_str("url")?;
    let mut h = a.headers("headers")?;
    let mut msg = request_message(&method, &url, &h, body)?;
    let created = a.i64("created")?.unwrap_or_else(now_secs);
    let label = a.str("label")?.unwrap_or_else(|| "sig1".into());
    let expires_in = a.u64("expiresIn")?.unwrap_or(DEFAULT_EXPIRES_IN);
    if a.bool("webBotAuth")? {
        let Some(agent) = a.str("signatureAgent")? else {
            return Err(Failure::usage(
                "Web Bot Auth needs signatureAgent (the agent's https URL), or pass webBotAuth: false",
            ));
        };
        let mut o = agentsig::webbotauth::SignOptions::new(agent, created);
        o.label = label;
        o.lifetime = expires_in;
        o.content_digest = true;
        let s = agentsig::webbotauth::sign_message(&mut msg, key, &o)
            .map_err(|e| Failure::malformed(format!("Web Bot Auth: {e}")))?;
        h.extend(s.fields);
        return Ok(pairs_json(&h));
    }
    let mut added = Vec::new();
    if !msg.body.is_empty() && !has_field(&msg, "content-digest") {
        let d = agentsig::digest::content_digest(&msg.body);
        msg.add_header("Content-Digest", &d);
        added.push(("Content-Digest".to_owned(), d));
    }
    let mut spec = SignatureSpec::new(label);
    match a.strings("components")? {
        Some(cs) => {
            for c in cs {
                spec = spec.component(
                    ComponentId::parse(&c)
                        .or_else(|_| ComponentId::parse(&format!("\"{c}\"")))
                        .map_err(|e| Failure::usage(format!("component {c:?}: {e}")))?,
                );
            }
        }
        None => {
            for d in [Derived::Method, Derived::Authority, Derived::Path] {
                spec = spec.component(ComponentId::derived(d));
            }
            if matches!(&msg.kind, agentsig::httpsig::message::Kind::Request(l) if l.query.is_some())
            {
                spec = spec.component(ComponentId::derived(Derived::Query));
            }
            for f in ["content-type", "content-digest"] {
                if has_field(&msg, f) {
                    spec = spec.component(field_id(f)?);
                }
            }
        }
    }
    added.extend(sign_spec(&msg, spec, key, created, Some(expires_in))?);
    h.extend(added);
    Ok(pairs_json(&h))
}

// --------------------------------------------------------------- verifier

/// The trusted keys of a JWK Set's JSON text (RFC 7517 section 5); a JWK
/// Set never yields a shared secret (RFC 8725 section 3.1), and one with no
/// usable key is refused.
fn jwks_keys(text: &str, what: &str) -> Out<StaticKeys> {
    if text.len() > MAX_INPUT_BYTES {
        return Err(Failure::too_large(what, text.len(), MAX_INPUT_BYTES));
    }
    let set = StaticKeys::from_jwks(text.as_bytes(), KeySource::Jwks(what.into()), None)
        .map_err(|e| Failure::bad_key(format!("{what}: JWK Set: {e}")))?;
    if set.keys.is_empty() {
        return Err(Failure::bad_key(format!(
            "{what}: JWK Set: no usable key ({} skipped)",
            set.skipped.len()
        )));
    }
    Ok(set.keys)
}

/// A public key from PEM (SPKI, or a private key's PEM) or a JWK's JSON
/// text; a shared secret (`kty` `oct`) is not a public key.
fn load_public(text: &str) -> Out<VerifyingKey> {
    if text.trim_start().starts_with('{') {
        let v: Value =
            serde_json::from_str(text).map_err(|e| Failure::bad_key(format!("JWK: {e}")))?;
        let j = agentsig::jwk::Jwk::from_value(&v)
            .map_err(|e| Failure::bad_key(format!("JWK: {e}")))?;
        if j.kty == "oct" {
            return Err(Failure::bad_key(
                "JWK: a shared secret (kty oct) is not a public key",
            ));
        }
        return j
            .to_verifying_key(None)
            .map_err(|e| Failure::bad_key(format!("JWK: {e}")));
    }
    VerifyingKey::from_pem(text)
        .or_else(|_| SigningKey::from_pem(text).map(|k| k.verifying_key().clone()))
        .map_err(|e| Failure::bad_key(format!("key: {e}")))
}

fn key_list(list: &[Value], what: &str) -> Out<Vec<VerifyingKey>> {
    list.iter()
        .map(|k| match k.as_str() {
            Some(s) => load_public(s),
            None => Err(Failure::usage(format!(
                "{what}: a key must be PEM or JWK text"
            ))),
        })
        .collect()
}

/// The Web Bot Auth key sets given in advance: each agent (its
/// `Signature-Agent` value) with `{jwks}` or `{keys}`. A key verifies only
/// the agent it is given for (draft-meunier-webbotauth-httpsig-protocol
/// section 5.2), never by the `Signature-Agent` value alone.
fn agent_key_sets(m: &Map<String, Value>) -> Out<StaticDirectory> {
    if m.len() > MAX_AGENTS {
        return Err(Failure::usage(format!(
            "agentKeys: {} agents, at most {MAX_AGENTS}",
            m.len()
        )));
    }
    let mut dir = StaticDirectory::new();
    for (url, v) in m {
        let agent = agentsig::webbotauth::resolve_agent_url(url, None)
            .map_err(|e| Failure::usage(format!("agentKeys: {e}")))?;
        let keys = match (v.get("keys"), v.get("jwks")) {
            (Some(Value::Array(l)), _) => key_list(l, "agentKeys")?,
            (_, Some(Value::String(j))) => jwks_keys(j, "agentKeys")?
                .keys()
                .iter()
                .map(|k| k.key.clone())
                .collect(),
            _ => {
                return Err(Failure::usage(
                    "agentKeys: each value is a JWK Set or a list of keys",
                ))
            }
        };
        if keys.is_empty() {
            return Err(Failure::bad_key(format!("agentKeys: no key for {url}")));
        }
        dir.insert(&agent.key_set_url, keys);
    }
    Ok(dir)
}

/// The shared state of a verifier: the library verifier, the Web Bot Auth
/// verifier and where its key sets come from.
struct Inner {
    inner: agentsig::Verifier,
    wba: WebBotAuthVerifier,
    /// The keys given per agent (`agentKeys`) or the agents' key
    /// directories fetched over HTTPS; `None`: Web Bot Auth is not set up.
    directory: Option<Arc<dyn KeyDirectory>>,
    /// The deadline of one Web Bot Auth verification, every fetch included.
    fetch_deadline: std::time::Duration,
}

/// Verifies descriptors, A2A cards, RFC 9421 messages and delegation
/// chains with one configuration (the native half of `Verifier`).
#[napi]
pub struct NativeVerifier {
    inner: Arc<Inner>,
}

#[napi]
impl NativeVerifier {
    /// A verifier from its options (JSON text, normalized by `index.js`).
    #[napi(constructor)]
    pub fn new(options: String) -> napi::Result<NativeVerifier> {
        guarded(|| build_verifier(&Args::parse(&options)?)).map(|inner| NativeVerifier {
            inner: Arc::new(inner),
        })
    }

    /// Whether Web Bot Auth key sets are configured.
    #[napi]
    pub fn web_bot_auth_keys(&self) -> bool {
        self.inner.directory.is_some()
    }

    /// Whether nonces are checked against a replay store.
    #[napi]
    pub fn has_replay_store(&self) -> bool {
        self.inner.inner.replay_store().is_some()
    }

    /// This verifier with a replay store (`memory`, a file path,
    /// `redis://...`) in place of its own, every other setting kept; the
    /// store is shared by its RFC 9421 and Web Bot Auth verifications.
    #[napi]
    pub fn with_replay_store(&self, store: String) -> napi::Result<NativeVerifier> {
        guarded(|| {
            let url = if store == "memory" { "memory:" } else { &store };
            let v = &self.inner;
            let store = agentsig::replay::open_store(url, v.inner.now())
                .map_err(|e| Failure::usage(format!("replay store: {e}")))?;
            Ok(NativeVerifier {
                inner: Arc::new(Inner {
                    inner: v.inner.to_builder().replay_store(store.clone()).build(),
                    wba: v.wba.clone().with_replay_store(store),
                    directory: v.directory.clone(),
                    fetch_deadline: v.fetch_deadline,
                }),
            })
        })
    }

    /// Verify: `op` is `descriptor`, `card`, `response`, `request` or
    /// `audit`; `args` the JSON arguments; `data` the document or body,
    /// `data2` the body of the related request (`response`). Returns the
    /// report's JSON text.
    #[napi]
    pub fn run(
        &self,
        op: String,
        args: String,
        data: Option<Buffer>,
        data2: Option<Buffer>,
    ) -> napi::Result<String> {
        let job = self.job(op, args, data.as_ref(), data2.as_ref())?;
        guarded(|| job.run())
    }

    /// [`run`](Self::run) on the libuv pool.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn run_async(
        &self,
        op: String,
        args: String,
        data: Option<Buffer>,
        data2: Option<Buffer>,
    ) -> napi::Result<AsyncTask<Job>> {
        Ok(AsyncTask::new(self.job(
            op,
            args,
            data.as_ref(),
            data2.as_ref(),
        )?))
    }
}

impl NativeVerifier {
    fn job(
        &self,
        op: String,
        args: String,
        data: Option<&Buffer>,
        data2: Option<&Buffer>,
    ) -> napi::Result<Job> {
        guarded(|| {
            let max = match op.as_str() {
                "descriptor" | "card" => self.inner.inner.limits().max_document_bytes,
                _ => MAX_INPUT_BYTES,
            };
            Ok(Job(Some(Work::Verify {
                v: self.inner.clone(),
                op,
                args: Args::parse(&args)?,
                data: bytes(data, "the input", max)?,
                data2: bytes(data2, "the request body", MAX_INPUT_BYTES)?,
            })))
        })
    }
}

fn build_verifier(o: &Args) -> Out<Inner> {
    let mut trusted = StaticKeys::new();
    if let Some(j) = o.str("jwks")? {
        trusted.extend(jwks_keys(&j, "jwks")?);
    }
    if let Some(Value::Array(ks)) = o.get("keys") {
        for vk in key_list(ks, "keys")? {
            trusted.add(vk, KeySource::Pinned);
        }
    }
    let agent_keys = match o.get("agentKeys") {
        Some(Value::Object(m)) => Some(agent_key_sets(m)?),
        Some(_) => return Err(Failure::usage("agentKeys must be an object")),
        None => None,
    };
    let fetch_directories = o.bool("fetchDirectories")?;
    let require_proof = o.bool("requireDirectoryProof")?;
    let private_hosts = o.strings("allowPrivateHosts")?;
    let extra_roots = o.strings("extraRootsPem")?;
    if agent_keys.is_some() && fetch_directories {
        return Err(Failure::usage(
            "agentKeys and fetchDirectories: true are exclusive: keys given for an agent, or fetched from its directory",
        ));
    }
    if trusted.is_empty() && agent_keys.is_none() && !fetch_directories {
        return Err(Failure::usage(
            "a Verifier needs trusted keys: pass jwks or keys (or, for Web Bot Auth only, agentKeys or fetchDirectories: true)",
        ));
    }
    if !fetch_directories && (require_proof || private_hosts.is_some() || extra_roots.is_some()) {
        return Err(Failure::usage(
            "requireDirectoryProof, allowPrivateHosts and extraRootsPem need fetchDirectories: true",
        ));
    }
    let allow = match o.strings("algorithms")? {
        None => AllowList::asymmetric(),
        Some(names) => {
            if names.is_empty() {
                return Err(Failure::usage("algorithms is empty"));
            }
            AllowList::new(
                names
                    .iter()
                    .map(|n| algorithm(n))
                    .collect::<Out<Vec<_>>>()?,
            )
        }
    };
    let max_age = o.u64("maxAgeSeconds")?;
    let mut http = HttpPolicy::new();
    http.max_age = max_age;
    let mut b = agentsig::Verifier::builder(trusted)
        .algorithms(allow.clone())
        .strict_low_s(o.bool("strictLowS")?)
        .http(http);
    if let Some(s) = o.u64("skewSeconds")? {
        b = b.skew(s);
    }
    let now = o.i64("nowSeconds")?;
    let start = now.unwrap_or_else(now_secs);
    let store: Option<Arc<dyn ReplayStore>> = match o.str("replayStore")?.as_deref() {
        None => None,
        Some(url) => {
            let url = if url == "memory" { "memory:" } else { url };
            Some(
                agentsig::replay::open_store(url, start)
                    .map_err(|e| Failure::usage(format!("replay store: {e}")))?,
            )
        }
    };
    if let Some(s) = &store {
        b = b.replay_store(s.clone());
    }
    if let Some(n) = now {
        b = b.clock(FixedClock(n));
    }
    let inner = b.build();
    let mut policy = agentsig::webbotauth::Policy::default();
    policy.algorithms = AllowList::new(allow.iter().filter(|a| !a.is_symmetric()));
    policy.skew = inner.skew();
    policy.allowed_agents = o.strings("agents")?;
    if let Some(m) = max_age {
        policy.max_validity = m.min(agentsig::webbotauth::MAX_LIFETIME);
    }
    let mut wba = WebBotAuthVerifier::new(policy);
    if let Some(s) = store {
        wba = wba.with_replay_store(s);
    }
    let mut fetch = agentsig::net::fetch::FetchPolicy::default();
    let fetch_deadline = fetch.timeout;
    let directory: Option<Arc<dyn KeyDirectory>> = if fetch_directories {
        for h in private_hosts.unwrap_or_default() {
            fetch = fetch.allow_private_host(h);
        }
        for pem in extra_roots.unwrap_or_default() {
            fetch = fetch.extra_root_pem(pem.into_bytes());
        }
        let fetcher = agentsig::net::fetch::Fetcher::with_policy(fetch)
            .map_err(|e| Failure::usage(format!("HTTPS client: {e}")))?;
        let mut client = agentsig::net::webbotauth::DirectoryClient::new(Arc::new(fetcher))
            .require_proof(require_proof);
        if let Some(n) = now {
            client = client.clock(FixedClock(n));
        }
        Some(Arc::new(client))
    } else {
        agent_keys.map(|d| Arc::new(d) as Arc<dyn KeyDirectory>)
    };
    Ok(Inner {
        inner,
        wba,
        directory,
        fetch_deadline,
    })
}

/// One call's work, run on the calling thread or on the libuv pool (once:
/// the pool takes it).
pub struct Job(Option<Work>);

/// What a [`Job`] does.
enum Work {
    /// A signing operation with `key`.
    Sign {
        /// The signing key.
        key: Arc<SigningKey>,
        /// `descriptor`, `card`, `request` or `response`.
        op: String,
        /// The JSON arguments.
        args: Args,
        /// The document or body.
        data: Vec<u8>,
    },
    /// A verification by `v`.
    Verify {
        /// The verifier's state.
        v: Arc<Inner>,
        /// `descriptor`, `card`, `response`, `request` or `audit`.
        op: String,
        /// The JSON arguments.
        args: Args,
        /// The document or body.
        data: Vec<u8>,
        /// The body of the related request (`response`).
        data2: Vec<u8>,
    },
}

impl Job {
    fn run(mut self) -> Out<String> {
        match self.0.take() {
            None => Err(Failure::bad_input("internal", "this call already ran")),
            Some(Work::Sign {
                key,
                op,
                args,
                data,
            }) => match op.as_str() {
                "descriptor" => sign_descriptor(&data, &key),
                "card" => sign_card(&data, &key, &args),
                "request" => sign_request(data, &key, &args),
                "response" => sign_response(data, &key, &args),
                _ => Err(Failure::usage(format!("unknown operation {op:?}"))),
            },
            Some(Work::Verify {
                v,
                op,
                args,
                data,
                data2,
            }) => match op.as_str() {
                "descriptor" => verify_descriptor(&v, &data, &args),
                "card" => verify_card(&v, &data, &args),
                "response" => verify_response(&v, data, data2, &args),
                "request" => verify_request(&v, data, &args),
                "audit" => audit_delegation(&v, &args),
                _ => Err(Failure::usage(format!("unknown operation {op:?}"))),
            },
        }
    }
}

impl Task for Job {
    type Output = String;
    type JsValue = String;

    fn compute(&mut self) -> napi::Result<String> {
        let job = Job(self.0.take());
        guarded(|| job.run())
    }

    fn resolve(&mut self, _env: Env, output: String) -> napi::Result<String> {
        Ok(output)
    }
}

fn verify_descriptor(v: &Inner, doc: &[u8], a: &Args) -> Out<String> {
    use agentsig::descriptor::DescriptorError as E;
    let limits = *v.inner.limits();
    let jws = a.need_str("jws")?;
    if jws.len() > limits.max_jws_bytes {
        return Err(Failure::too_large("jws", jws.len(), limits.max_jws_bytes));
    }
    let r = match v.inner.verify_descriptor(doc, &jws) {
        Ok(r) => r,
        Err(E::NotVerified(r)) => *r,
        Err(E::TooLarge(n)) => return Err(Failure::too_large("doc", n, limits.max_document_bytes)),
        Err(E::Json(e)) => {
            return Err(Failure::malformed(format!(
                "descriptor is not strict I-JSON: {e}"
            )))
        }
        Err(E::Jws(agentsig::jws::JwsError::PayloadDiffers)) => {
            let mut rep = Report::error(
                "verify",
                None,
                "payload-differs",
                "the JWS carries a payload that differs from the descriptor",
            );
            rep.set_verdict(Verdict::NotVerified);
            return Err(Failure::not_verified(rep));
        }
        Err(e) => return Err(Failure::malformed(format!("JWS: {e}"))),
    };
    let mut json = Report::from_jws("verify", None, &r.jws);
    json.detail("canonical_sha256", r.canonical_sha256());
    settle(json)
}

fn verify_card(v: &Inner, card: &[u8], a: &Args) -> Out<String> {
    use agentsig::a2a::A2aError as E;
    let card = parse_json(card, "card")?;
    let r = match v.inner.verify_agent_card_value(&card) {
        Ok(r) => r,
        Err(E::NotVerified(r)) => *r,
        Err(E::Json(e)) => return Err(Failure::malformed(format!("card: {e}"))),
        Err(e) => {
            let code = match e {
                E::NoSignatures => "a2a.no-signatures",
                E::BadSignature { .. } => "a2a.bad-signature-entry",
                _ => "a2a.malformed-card",
            };
            let mut rep = Report::error("verify", None, code, &e.to_string());
            rep.set_verdict(Verdict::NotVerified);
            return Err(Failure::not_verified(rep));
        }
    };
    settle(Report::from_card("verify", None, &r, a.bool("requireAll")?))
}

fn verify_response(v: &Inner, body: Vec<u8>, req_body: Vec<u8>, a: &Args) -> Out<String> {
    let status = a
        .u64("status")?
        .and_then(|s| u16::try_from(s).ok())
        .filter(|s| (100..=999).contains(s))
        .ok_or_else(|| {
            Failure::malformed("status is not a three-digit HTTP status code (RFC 9110 section 15)")
        })?;
    let h = a.headers("headers")?;
    let msg = Message::response(status, fields(&h), body);
    let related = match a.get("request") {
        None => None,
        Some(Value::Object(r)) => {
            let r = Args(r.clone());
            let rh = r.headers("headers")?;
            Some(request_message(
                &r.need_str("method")?,
                &r.need_str("url")?,
                &rh,
                req_body,
            )?)
        }
        Some(_) => return Err(Failure::usage("request must be an object")),
    };
    http_report(&v.inner, "http verify", &msg, related.as_ref())
}

fn verify_request(v: &Inner, body: Vec<u8>, a: &Args) -> Out<String> {
    let method = a.need_str("method")?;
    let url = a.need_str("url")?;
    let h = a.headers("headers")?;
    let strict = a.bool("strict")?;
    let authorities = match a.strings("authorities")? {
        None => None,
        Some(list) => Some(
            agentsig::httpsig::SiteAuthorities::only(&list)
                .map(|s| s.to_policy().unwrap_or_default())
                .map_err(|e| Failure::usage(format!("authorities: {e}")))?,
        ),
    };
    let msg = verified_request_message(&method, &url, a.str("scheme")?.as_deref(), &h, body)?;
    if a.bool("webBotAuth")? {
        let Some(directory) = &v.directory else {
            return Err(Failure::usage(
                "Web Bot Auth needs the agents' keys: new Verifier({agentKeys: {[agentUrl]: keys}}) or new Verifier({fetchDirectories: true})",
            ));
        };
        let mut wba = v.wba.clone();
        wba.policy.authorities = authorities;
        if strict {
            add_strict(&mut wba.policy.required);
            wba.policy.require_nonce = true;
        }
        // Every key-directory fetch of this verification ends by the
        // deadline, so a request naming slow directories cannot hold the
        // caller (or a libuv pool thread) for long.
        let deadline = std::time::Instant::now() + v.fetch_deadline;
        let rep = agentsig::net::fetch::with_deadline(deadline, || {
            wba.verify(&msg, directory.as_ref(), v.inner.now())
        });
        let mut report = rep.to_report("web-bot-auth verify", Some(&url));
        fill_covered(&mut report, &msg);
        return settle(report);
    }
    if authorities.is_none() && !strict {
        return http_report(&v.inner, "http verify", &msg, None);
    }
    let mut hp = v.inner.http_policy().clone();
    hp.authorities = authorities;
    if strict {
        add_strict(&mut hp.required);
        hp.require_nonce = true;
    }
    let verifier = v.inner.to_builder().http(hp).build();
    http_report(&verifier, "http verify", &msg, None)
}

/// The components `strict: true` requires beyond the profile's: `@method`
/// and `@path` (RFC 9421 section 7.2.1); with `require_nonce`, a replay
/// store makes a signature good for one request (section 7.2.2).
fn add_strict(required: &mut Vec<ComponentId>) {
    for c in agentsig::httpsig::strict_request_components() {
        if !required.contains(&c) {
            required.push(c);
        }
    }
}

/// A Web Bot Auth report lists no covered components: fill them in, for
/// each signature that verified, from its `Signature-Input` member (RFC
/// 9421 section 4.1), so the identity says what the agent signed.
fn fill_covered(report: &mut Report, msg: &Message) {
    let lines: Vec<&[u8]> = msg.field_lines("signature-input", false).collect();
    let Ok(dict) = agentsig::sfv::parse_dictionary_raw(&lines.join(&b", "[..])) else {
        return;
    };
    for s in report
        .signatures
        .iter_mut()
        .filter(|s| s.verdict == "valid")
    {
        let Some((_, entry)) = dict.0.iter().find(|(l, _)| *l == s.id) else {
            continue;
        };
        let Some(list) = agentsig::httpsig::components::inner_list_items(entry) else {
            continue;
        };
        if let Ok(c) = agentsig::httpsig::components::parse_covered(&list.items) {
            s.covered = c
                .iter()
                .map(|c| agentsig::report::unquote_component(&c.to_string()))
                .collect();
        }
    }
}

/// An RFC 9421 verification by `v`, as the CLI's `http verify` reports it.
fn http_report(
    v: &agentsig::Verifier,
    command: &str,
    msg: &Message,
    related: Option<&Message>,
) -> Out<String> {
    match v.verify_http(msg, related) {
        Ok(r) => settle(Report::from_http(command, None, &r)),
        Err(HttpSigError::NotVerified(r)) => settle(Report::from_http(command, None, &r)),
        Err(e) => {
            let mut rep = Report::error(command, None, "header", &e.to_string());
            rep.set_verdict(Verdict::NotVerified);
            Err(Failure::not_verified(rep))
        }
    }
}

/// Audit a delegation chain (RFC 8693, RFC 9068, RFC 8725), subject token
/// first, as `agentsig delegation audit` does.
fn audit_delegation(v: &Inner, a: &Args) -> Out<String> {
    let tokens = a.strings("tokens")?.unwrap_or_default();
    if tokens.is_empty() {
        return Err(Failure::malformed("no token to audit"));
    }
    if tokens.len() > agentsig::policy::MAX_HOPS {
        return Err(Failure::malformed(format!(
            "{} tokens: a bundle holds at most {}",
            tokens.len(),
            agentsig::policy::MAX_HOPS
        )));
    }
    let max = v.inner.limits().max_jwt_bytes;
    if let Some(t) = tokens.iter().find(|t| t.len() > max) {
        return Err(Failure::too_large("a token", t.len(), max));
    }
    let deny_warnings = a.bool("denyWarnings")?;
    let mut jwt = agentsig::policy::JwtPolicy::delegation();
    if let Some(i) = a.strings("issuer")? {
        jwt = jwt.issuers(i);
    }
    if let Some(aud) = a.str("audience")? {
        jwt = jwt.audience(aud);
    }
    let verifier = v
        .inner
        .to_builder()
        .jwt(jwt)
        .audit(v.inner.audit_policy().clone().deny_warnings(deny_warnings))
        .build();
    let refs: Vec<&str> = tokens.iter().map(String::as_str).collect();
    let r = match verifier.audit_delegation(&refs) {
        Ok(r) => r,
        Err(e) => *e.report,
    };
    settle(Report::from_audit(
        "delegation audit",
        None,
        &r,
        deny_warnings,
    ))
}
