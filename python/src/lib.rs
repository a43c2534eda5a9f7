//! `agentsig._agentsig`: the native half of the `agentsig` Python package
//! (PyO3, abi3). It binds the settled Rust API: [`agentsig::Verifier`] and
//! its `verify_*` methods, [`agentsig::SigningKey`], descriptor, A2A card and
//! RFC 9421 signing, RFC 8785 canonicalization and the Web Bot Auth profile.
//!
//! # Contract
//! * Every call copies its inputs into Rust values (after checking their
//!   size against a bound, so an oversized input is refused before it is
//!   copied), then runs without the GIL (`Python::detach`).
//! * Success returns a report; anything else raises one of the exceptions
//!   of `agentsig._errors` (Python), each with the stable `code` the CLI
//!   reports (`docs/report.md`). The report is the very
//!   [`agentsig::report::Report`] the CLI prints under `--json`, converted
//!   from its serde form, so the shapes cannot drift.
//! * No input reaches an `unwrap`/`expect`: bad input is `BadInput`,
//!   unusable keys `BadKey`, wrong Python types `TypeError`.

#![forbid(unsafe_code)]

use agentsig::clock::FixedClock;
use agentsig::httpsig::message::{Field, RequestLine, MAX_FIELD_LINES, MAX_HEAD_BYTES};
use agentsig::httpsig::{ComponentId, Derived, HttpPolicy, HttpSigError, Message, SignatureSpec};
use agentsig::replay::ReplayStore;
use agentsig::report::{Report, Verdict};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::webbotauth::{KeyDirectory, StaticDirectory, WebBotAuthVerifier};
use agentsig::{Algorithm, AllowList, SigningKey, VerifyingKey};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType,
};
use serde_json::{Map, Value};
use std::sync::Arc;

mod pkcs11;

/// Largest HTTP body (and A2A card or delegation bundle) accepted by a
/// call: 16 MiB, the CLI's bound on any input (`docs/report.md`,
/// `input.unreadable`).
pub const MAX_INPUT_BYTES: usize = 16 * 1024 * 1024;

/// Largest JSON document (descriptor, A2A card, JSON given as a Python
/// object): the library's default [`agentsig::policy::Limits`].
fn max_document_bytes() -> usize {
    agentsig::policy::Limits::default().max_document_bytes
}

/// Deepest nesting of a Python object converted to JSON (`canonicalize`,
/// `sign_card`, JWK dicts): the strict JSON parser's default depth.
pub const MAX_DEPTH: usize = 64;

/// Default lifetime of a request signature (`expires - created`), seconds:
/// the Web Bot Auth default.
pub const DEFAULT_EXPIRES_IN: u64 = agentsig::webbotauth::DEFAULT_LIFETIME;

// ---------------------------------------------------------------- errors

/// What a failed call raises: an exception class of `agentsig._errors`,
/// the stable code and the message, and the report when there is one.
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
    /// A report that did not verify: `PolicyRefused` when policy refused
    /// it (see [`policy_refusal`]), else `NotVerified`.
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
    fn into_pyerr(self, py: Python<'_>) -> PyErr {
        let build = || -> PyResult<PyErr> {
            let report = match &self.report {
                Some(r) => Some(report_object(py, r)?),
                None => None,
            };
            let cls = py.import("agentsig._errors")?.getattr(self.class)?;
            let inst = cls.call1((self.message.as_str(), self.code.as_str(), report))?;
            Ok(PyErr::from_value(inst))
        };
        build().unwrap_or_else(|e| e)
    }
}

/// Codes of a Web Bot Auth key directory that could not be fetched
/// (`DirectoryError::code`): the network, TLS, the SSRF guard, the HTTP
/// exchange (`docs/web-bot-auth.md`: "the fetch"); raised as `FetchError`.
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
/// verifier's policy does not accept it (too old, expired, replayed, an
/// algorithm not allowed, a widened delegation scope...).
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
    // Delegation codes are namespaced (`jwt.alg-not-allowed`,
    // `act.scope-widened`): the last part names the rule.
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

/// Run `f` without the GIL and convert its failure.
fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> Out<T> + Send) -> PyResult<T> {
    py.detach(f).map_err(|e| e.into_pyerr(py))
}

/// A report that must be `verified`: the Python `Report`, or the failure.
fn settle(r: Report) -> Out<Report> {
    if r.verified {
        Ok(r)
    } else {
        Err(Failure::not_verified(r))
    }
}

// ------------------------------------------------------- JSON <-> Python

/// A `serde_json::Value` as Python objects (dict, list, str, int, float,
/// bool, None).
fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(a) => {
            let l = PyList::empty(py);
            for x in a {
                l.append(to_py(py, x)?)?;
            }
            l.into_any()
        }
        Value::Object(m) => {
            let d = PyDict::new(py);
            for (k, x) in m {
                d.set_item(k, to_py(py, x)?)?;
            }
            d.into_any()
        }
    })
}

/// The Python `agentsig.Report` of a library report: its serde JSON text
/// (the CLI's `--json` output, byte for byte), which the Python class
/// parses on first access.
fn report_object<'py>(py: Python<'py>, r: &Report) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(r)
        .map_err(|e| PyErr::new::<PyTypeError, _>(format!("report: {e}")))?;
    // Imported once: a lookup per call costs as much as a small report.
    static REPORT: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    REPORT
        .import(py, "agentsig._report", "Report")?
        .call_method1("_from_json", (text,))
}

/// Why a Python object is not JSON.
enum JsonFail {
    Type(String),
    Bad(Failure),
}

impl From<PyErr> for JsonFail {
    fn from(e: PyErr) -> Self {
        JsonFail::Type(e.to_string())
    }
}

/// A Python object as JSON, exactly: str, int (within i64/u64), finite
/// float, bool, None, list/tuple, dict with str keys; bounded in depth and
/// in total size (`budget`: about the length of its JSON text, two bytes
/// per value at least plus each string's length and quotes), so an object
/// is held to the same bound as the JSON bytes it stands for.
fn from_py(o: &Bound<'_, PyAny>, depth: usize, budget: &mut usize) -> Result<Value, JsonFail> {
    if depth > MAX_DEPTH {
        return Err(JsonFail::Bad(Failure::malformed(format!(
            "the object nests deeper than {MAX_DEPTH} levels"
        ))));
    }
    let spend = |budget: &mut usize, n: usize| -> Result<(), JsonFail> {
        *budget = budget.checked_sub(n).ok_or_else(|| {
            JsonFail::Bad(Failure::bad_input(
                "input.unreadable",
                "the object is larger than the document size bound",
            ))
        })?;
        Ok(())
    };
    spend(budget, 2)?;
    if o.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = o.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if o.cast::<PyInt>().is_ok() {
        if let Ok(i) = o.extract::<i64>() {
            return Ok(Value::from(i));
        }
        if let Ok(u) = o.extract::<u64>() {
            return Ok(Value::from(u));
        }
        return Err(JsonFail::Bad(Failure::malformed(
            "an integer outside the 64-bit range has no JSON form here",
        )));
    }
    if let Ok(f) = o.cast::<PyFloat>() {
        let x = f.value();
        return serde_json::Number::from_f64(x)
            .map(Value::Number)
            .ok_or_else(|| {
                JsonFail::Bad(Failure::malformed(format!(
                    "{x} is not a JSON number (NaN and infinities have no JSON form)"
                )))
            });
    }
    if let Ok(s) = o.cast::<PyString>() {
        let s = s.to_cow().map_err(|e| {
            JsonFail::Bad(Failure::malformed(format!(
                "a string is not valid Unicode: {e}"
            )))
        })?;
        spend(budget, s.len() + 2)?;
        return Ok(Value::String(s.into_owned()));
    }
    if let Ok(d) = o.cast::<PyDict>() {
        let mut m = Map::new();
        for (k, v) in d.iter() {
            let Ok(ks) = k.cast::<PyString>() else {
                return Err(JsonFail::Bad(Failure::malformed(format!(
                    "a JSON object's keys are strings, not {}",
                    type_name(&k)
                ))));
            };
            let ks = ks.to_cow().map_err(|e| {
                JsonFail::Bad(Failure::malformed(format!(
                    "a key is not valid Unicode: {e}"
                )))
            })?;
            spend(budget, ks.len() + 3)?;
            m.insert(ks.into_owned(), from_py(&v, depth + 1, budget)?);
        }
        return Ok(Value::Object(m));
    }
    if o.cast::<PyList>().is_ok() || o.cast::<PyTuple>().is_ok() {
        let mut a = Vec::new();
        for x in o.try_iter()? {
            a.push(from_py(&x?, depth + 1, budget)?);
        }
        return Ok(Value::Array(a));
    }
    Err(JsonFail::Type(format!(
        "{} is not JSON (dict, list, tuple, str, int, float, bool or None)",
        type_name(o)
    )))
}

fn type_name(o: &Bound<'_, PyAny>) -> String {
    o.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".into())
}

/// A Python object as JSON, or the exception.
fn json_value(py: Python<'_>, o: &Bound<'_, PyAny>, max_bytes: usize) -> PyResult<Value> {
    let mut budget = max_bytes;
    from_py(o, 0, &mut budget).map_err(|e| match e {
        JsonFail::Type(m) => PyTypeError::new_err(m),
        JsonFail::Bad(f) => f.into_pyerr(py),
    })
}

/// The bytes of a `bytes`/`bytearray` argument, checked against `max`
/// before they are copied.
fn bytes_arg(py: Python<'_>, o: &Bound<'_, PyAny>, what: &str, max: usize) -> PyResult<Vec<u8>> {
    let copy = |b: &[u8]| {
        if b.len() > max {
            Err(Failure::too_large(what, b.len(), max).into_pyerr(py))
        } else {
            Ok(b.to_vec())
        }
    };
    if let Ok(b) = o.cast::<PyBytes>() {
        return copy(b.as_bytes());
    }
    if let Ok(b) = o.cast::<PyByteArray>() {
        // The length first: a bytearray is copied only within the bound.
        if b.len() > max {
            return Err(Failure::too_large(what, b.len(), max).into_pyerr(py));
        }
        return copy(&b.to_vec());
    }
    Err(PyTypeError::new_err(format!(
        "{what} must be bytes, not {}",
        type_name(o)
    )))
}

/// A `str` argument (`bytes` accepted when UTF-8), checked against `max`.
fn str_arg(py: Python<'_>, o: &Bound<'_, PyAny>, what: &str, max: usize) -> PyResult<String> {
    let s: std::borrow::Cow<'_, str> =
        if let Ok(s) = o.cast::<PyString>() {
            // The length in code points bounds the UTF-8 length (at most 4
            // bytes each): refuse before encoding a huge string.
            let n = s.len()?;
            if n > max {
                return Err(Failure::too_large(what, n, max).into_pyerr(py));
            }
            s.to_cow().map_err(|e| {
                Failure::malformed(format!("{what} is not valid Unicode: {e}")).into_pyerr(py)
            })?
        } else if let Ok(b) = o.cast::<PyBytes>() {
            if b.as_bytes().len() > max {
                return Err(Failure::too_large(what, b.as_bytes().len(), max).into_pyerr(py));
            }
            std::borrow::Cow::Borrowed(std::str::from_utf8(b.as_bytes()).map_err(|e| {
                Failure::malformed(format!("{what} is not UTF-8: {e}")).into_pyerr(py)
            })?)
        } else {
            return Err(PyTypeError::new_err(format!(
                "{what} must be str, not {}",
                type_name(o)
            )));
        };
    if s.len() > max {
        return Err(Failure::too_large(what, s.len(), max).into_pyerr(py));
    }
    Ok(s.into_owned())
}

// ------------------------------------------------------------ HTTP fields

/// Header fields from a list of `(name, value)` pairs, a mapping, or an
/// object with `multi_items()` (httpx, Starlette): names and values `str`
/// or `bytes` (UTF-8), repeated fields kept in order; bounded by the RFC
/// 9421 message limits (field lines, header section bytes).
fn headers_arg(py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Vec<(String, String)>> {
    // Lists and tuples first: `hasattr` on them would raise and swallow an
    // AttributeError per call.
    let items: Bound<'_, PyAny> = if o.cast::<PyList>().is_ok() || o.cast::<PyTuple>().is_ok() {
        o.clone()
    } else if o.cast::<PyDict>().is_ok() {
        o.call_method0("items")?
    } else if o.hasattr("multi_items")? {
        o.call_method0("multi_items")?
    } else if o.hasattr("items")? {
        o.call_method0("items")?
    } else {
        return Err(PyTypeError::new_err(format!(
            "headers must be a list of (name, value) pairs or a mapping, not {}",
            type_name(o)
        )));
    };
    let mut out = Vec::new();
    let mut total = 0usize;
    for item in items.try_iter()? {
        let item = item?;
        if out.len() >= MAX_FIELD_LINES {
            return Err(Failure::bad_input(
                "input.unreadable",
                format!("headers: more than {MAX_FIELD_LINES} field lines"),
            )
            .into_pyerr(py));
        }
        let (name, value) = if let Ok(t) = item.cast::<PyTuple>() {
            if t.len() != 2 {
                return Err(PyTypeError::new_err(
                    "a header must be a (name, value) pair of two items",
                ));
            }
            (
                field_text(py, &t.get_item(0)?, "a header name")?,
                field_text(py, &t.get_item(1)?, "a header value")?,
            )
        } else if let Ok(l) = item.cast::<PyList>() {
            if l.len() != 2 {
                return Err(PyTypeError::new_err(
                    "a header must be a (name, value) pair of two items",
                ));
            }
            (
                field_text(py, &l.get_item(0)?, "a header name")?,
                field_text(py, &l.get_item(1)?, "a header value")?,
            )
        } else {
            return Err(PyTypeError::new_err(format!(
                "a header must be a (name, value) pair, not {}",
                type_name(&item)
            )));
        };
        total = total.saturating_add(name.len() + value.len() + 4);
        if total > MAX_HEAD_BYTES {
            return Err(
                Failure::too_large("the header section", total, MAX_HEAD_BYTES).into_pyerr(py),
            );
        }
        if name.is_empty() || !name.bytes().all(is_tchar) {
            return Err(Failure::malformed(format!(
                "{name:?} is not a field name (RFC 9110 section 5.1)"
            ))
            .into_pyerr(py));
        }
        if value.bytes().any(|c| c == b'\r' || c == b'\n' || c == 0) {
            return Err(Failure::malformed(format!(
                "the value of {name} holds CR, LF or NUL (RFC 9110 section 5.5)"
            ))
            .into_pyerr(py));
        }
        out.push((name, value));
    }
    Ok(out)
}

fn field_text(py: Python<'_>, o: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    if o.cast::<PyString>().is_err() && o.cast::<PyBytes>().is_err() {
        return Err(PyTypeError::new_err(format!(
            "{what} must be str or bytes, not {}",
            type_name(o)
        )));
    }
    str_arg(py, o, what, MAX_HEAD_BYTES)
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

/// A request model to verify: `target` is an absolute http(s) URL, or, with
/// `scheme`, an origin-form target (`/path?query`, RFC 9112 section 3.2.1)
/// whose authority is the one `Host` field of `headers` (RFC 9112 section
/// 3.2), so the message is built from the parts a server received rather
/// than from one string glued together. A target with a fragment (`#`: a
/// request target never has one, RFC 9112 section 3.2) and an absolute URL
/// with userinfo (`user@host`, deprecated by RFC 9110 section 4.2.4, and
/// which moves the authority a reader sees) are refused, so the target
/// verified is the target served.
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
            "{target:?} is not an origin-form target (it must start with /, RFC 9112 section 3.2.1); with scheme= give the path and query, else an absolute URL"
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

/// A private key bound to one algorithm (ES256, ES384, EdDSA, PS512,
/// RS256; HS256 for shared secrets).
#[pyclass(frozen, module = "agentsig._agentsig", name = "SigningKey")]
pub struct PySigningKey {
    key: Arc<SigningKey>,
}

#[pymethods]
impl PySigningKey {
    /// Generate a new key for `alg` (JOSE or RFC 9421 name; default ES256).
    #[staticmethod]
    #[pyo3(signature = (alg = "ES256"))]
    fn generate(py: Python<'_>, alg: &str) -> PyResult<PySigningKey> {
        let alg = algorithm(alg).map_err(|e| e.into_pyerr(py))?;
        let key = py.detach(|| SigningKey::generate(alg)).map_err(|e| {
            Failure::bad_key(format!("cannot generate a {alg:?} key: {e}")).into_pyerr(py)
        })?;
        Ok(PySigningKey { key: Arc::new(key) })
    }

    /// Load a private key from PEM (PKCS#8, SEC1, PKCS#1); `kid` names it
    /// in signatures (default: its RFC 7638 thumbprint).
    #[staticmethod]
    #[pyo3(signature = (pem, *, kid = None))]
    fn from_pem(
        py: Python<'_>,
        pem: &Bound<'_, PyAny>,
        kid: Option<String>,
    ) -> PyResult<PySigningKey> {
        let pem = str_arg(py, pem, "pem", 1024 * 1024)?;
        let key = SigningKey::from_pem(&pem)
            .map_err(|e| Failure::bad_key(format!("key: {e}")).into_pyerr(py))?;
        Ok(PySigningKey {
            key: Arc::new(match kid {
                Some(k) => key.with_kid(k),
                None => key,
            }),
        })
    }

    /// The key id signatures carry: the given `kid`, else the RFC 7638
    /// thumbprint of the public key.
    #[getter]
    fn kid(&self) -> String {
        self.key.kid_or_thumbprint()
    }

    /// The RFC 7638 thumbprint of the public key (the Web Bot Auth `keyid`).
    #[getter]
    fn thumbprint(&self) -> String {
        self.key.verifying_key().thumbprint()
    }

    /// The JOSE name of the key's one algorithm (`ES256`, `EdDSA`...).
    #[getter]
    fn algorithm(&self) -> &'static str {
        self.key.algorithm().jose_name()
    }

    /// The public JWK (RFC 7517) as a dict, with `alg`, `use` and `kid`.
    /// A shared secret (HS256) has no public form: `BadKey`.
    fn public_jwk<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        refuse_secret(self.key.verifying_key()).map_err(|e| e.into_pyerr(py))?;
        let mut j = self.key.verifying_key().to_jwk().to_value();
        if let (Value::Object(m), Some(k)) = (&mut j, self.key.kid()) {
            m.insert("kid".into(), Value::String(k.to_owned()));
        }
        to_py(py, &j)
    }

    /// The public key.
    fn public_key(&self) -> PyPublicKey {
        PyPublicKey {
            key: self.key.verifying_key().clone(),
        }
    }

    /// The private key as PKCS#8 PEM, when it has that form (generated
    /// keys); `None` otherwise.
    fn private_pem(&self) -> Option<String> {
        self.key.pkcs8_pem().map(|p| p.to_string())
    }

    fn __repr__(&self) -> String {
        format!(
            "<agentsig.SigningKey {} kid={:?}>",
            self.key.algorithm().jose_name(),
            self.key.kid_or_thumbprint()
        )
    }
}

/// A public key bound to one algorithm.
#[pyclass(frozen, module = "agentsig._agentsig", name = "PublicKey")]
pub struct PyPublicKey {
    key: VerifyingKey,
}

#[pymethods]
impl PyPublicKey {
    /// Load a public key from PEM (SPKI) or a JWK (JSON text).
    #[staticmethod]
    fn from_pem(py: Python<'_>, pem: &Bound<'_, PyAny>) -> PyResult<PyPublicKey> {
        let pem = str_arg(py, pem, "pem", 1024 * 1024)?;
        load_public(&pem)
            .map(|key| PyPublicKey { key })
            .map_err(|e| e.into_pyerr(py))
    }

    /// Load a public key from a JWK dict (RFC 7517).
    #[staticmethod]
    fn from_jwk(py: Python<'_>, jwk: &Bound<'_, PyAny>) -> PyResult<PyPublicKey> {
        let v = json_value(py, jwk, 1024 * 1024)?;
        jwk_key(&v)
            .map(|key| PyPublicKey { key })
            .map_err(|e| e.into_pyerr(py))
    }

    /// The JOSE name of the key's algorithm.
    #[getter]
    fn algorithm(&self) -> &'static str {
        self.key.algorithm().jose_name()
    }

    /// The key's `kid`, if it has one.
    #[getter]
    fn kid(&self) -> Option<String> {
        self.key.kid().map(str::to_owned)
    }

    /// The RFC 7638 thumbprint.
    #[getter]
    fn thumbprint(&self) -> String {
        self.key.thumbprint()
    }

    /// The JWK (RFC 7517) as a dict. A shared secret (HS256) is never
    /// written out: `BadKey`.
    fn jwk<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        refuse_secret(&self.key).map_err(|e| e.into_pyerr(py))?;
        to_py(py, &self.key.to_jwk().to_value())
    }

    fn __repr__(&self) -> String {
        format!(
            "<agentsig.PublicKey {} {}>",
            self.key.algorithm().jose_name(),
            self.key.thumbprint()
        )
    }
}

/// The JWK of a shared secret is the secret itself (`kty` `oct`, member
/// `k`): it is never handed out as a "public" key.
fn refuse_secret(key: &VerifyingKey) -> Out<()> {
    if key.is_symmetric() {
        return Err(Failure::bad_key(
            "a shared secret (HS256) has no public JWK: its JWK would be the secret",
        ));
    }
    Ok(())
}

fn load_public(text: &str) -> Out<VerifyingKey> {
    if text.trim_start().starts_with('{') {
        let v: Value =
            serde_json::from_str(text).map_err(|e| Failure::bad_key(format!("JWK: {e}")))?;
        return jwk_key(&v);
    }
    VerifyingKey::from_pem(text)
        .or_else(|_| SigningKey::from_pem(text).map(|k| k.verifying_key().clone()))
        .map_err(|e| Failure::bad_key(format!("key: {e}")))
}

fn jwk_key(v: &Value) -> Out<VerifyingKey> {
    let j = agentsig::jwk::Jwk::from_value(v).map_err(|e| Failure::bad_key(format!("JWK: {e}")))?;
    if j.kty == "oct" {
        return Err(Failure::bad_key(
            "JWK: a shared secret (kty oct) is not a public key",
        ));
    }
    j.to_verifying_key(None)
        .map_err(|e| Failure::bad_key(format!("JWK: {e}")))
}

/// The signing key of a `key` argument.
fn signing_key(o: &Bound<'_, PyAny>) -> PyResult<Arc<SigningKey>> {
    o.cast::<PySigningKey>()
        .map(|k| k.get().key.clone())
        .map_err(|_| {
            PyTypeError::new_err(format!(
                "key must be an agentsig.SigningKey, not {}",
                type_name(o)
            ))
        })
}

// --------------------------------------------------------------- signing

/// RFC 8785 canonical form of a JSON document (`bytes`, strict I-JSON)
/// or of a Python object (dict, list, str, int, float, bool, None).
#[pyfunction]
fn canonicalize<'py>(py: Python<'py>, obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let max = agentsig::policy::Limits::default().max_document_bytes;
    let out = if obj.cast::<PyBytes>().is_ok() || obj.cast::<PyByteArray>().is_ok() {
        let b = bytes_arg(py, obj, "document", max)?;
        detached(py, move || {
            agentsig::jcs::canonicalize(&b).map_err(|e| Failure::malformed(format!("JSON: {e}")))
        })?
    } else {
        let v = json_value(py, obj, max)?;
        detached(py, move || {
            agentsig::jcs::canonicalize_value(&v)
                .map_err(|e| Failure::malformed(format!("JSON: {e}")))
        })?
    };
    Ok(PyBytes::new(py, &out))
}

/// Sign a descriptor (JSON bytes): the compact detached JWS (RFC 7515
/// Appendix F) over its RFC 8785 canonical form (draft-narvaneni-agent-uri-03 section 10.3).
#[pyfunction]
fn sign_descriptor(
    py: Python<'_>,
    doc: &Bound<'_, PyAny>,
    key: &Bound<'_, PyAny>,
) -> PyResult<String> {
    let max = agentsig::policy::Limits::default().max_document_bytes;
    let doc = bytes_arg(py, doc, "doc", max)?;
    let key = signing_key(key)?;
    detached(py, move || {
        agentsig::descriptor::sign(&doc, &key)
            .map(|s| s.jws)
            .map_err(|e| match e {
                agentsig::descriptor::DescriptorError::Json(e) => {
                    Failure::malformed(format!("descriptor is not strict I-JSON: {e}"))
                }
                agentsig::descriptor::DescriptorError::TooLarge(n) => {
                    Failure::too_large("doc", n, max)
                }
                other => Failure::bad_key(other.to_string()),
            })
    })
}

/// Sign an A2A Agent Card (dict or JSON bytes) as the A2A SDKs do; returns
/// the card to publish (its normal form plus `signatures`).
#[pyfunction]
#[pyo3(signature = (card, key, *, force = false))]
fn sign_card<'py>(
    py: Python<'py>,
    card: &Bound<'py, PyAny>,
    key: &Bound<'py, PyAny>,
    force: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let v = card_value(py, card)?;
    let key = signing_key(key)?;
    let signed = detached(py, move || {
        agentsig::a2a::sign_card(&v, &key, &Map::new(), force)
            .map(|s| s.card)
            .map_err(|e| Failure::malformed(format!("A2A card: {e}")))
    })?;
    to_py(py, &signed)
}

fn card_value(py: Python<'_>, card: &Bound<'_, PyAny>) -> PyResult<Value> {
    if card.cast::<PyBytes>().is_ok() || card.cast::<PyByteArray>().is_ok() {
        let b = bytes_arg(py, card, "card", max_document_bytes())?;
        agentsig::json::parse_strict(&b).map_err(|e| {
            Failure::malformed(format!("card is not strict I-JSON: {e}")).into_pyerr(py)
        })
    } else if card.cast::<PyDict>().is_ok() {
        json_value(py, card, max_document_bytes())
    } else {
        Err(PyTypeError::new_err(format!(
            "card must be a dict or JSON bytes, not {}",
            type_name(card)
        )))
    }
}

/// `(name, value)` pairs as a Python list of tuples.
fn pairs<'py>(py: Python<'py>, h: &[(String, String)]) -> PyResult<Bound<'py, PyList>> {
    let l = PyList::empty(py);
    for (n, v) in h {
        l.append((n.as_str(), v.as_str()))?;
    }
    Ok(l)
}

/// An HTTP status code: an `int` of three digits (RFC 9110 section 15;
/// `@status` is its three-digit form, RFC 9421 section 2.2.9).
fn status_arg(py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<u16> {
    if o.cast::<PyBool>().is_ok() || o.cast::<PyInt>().is_err() {
        return Err(PyTypeError::new_err(format!(
            "status must be an int, not {}",
            type_name(o)
        )));
    }
    match o.extract::<i64>() {
        Ok(n @ 100..=999) => Ok(n as u16),
        _ => Err(Failure::malformed(format!(
            "status {o} is not a three-digit HTTP status code (RFC 9110 section 15)"
        ))
        .into_pyerr(py)),
    }
}

/// Sign a response (RFC 9421 section 3.1) with `Content-Digest` (RFC
/// 9530, added when absent): covers `@status`, `content-type` when present
/// and `content-digest`. Returns the headers with the added fields.
#[pyfunction]
#[pyo3(signature = (status, headers, body, key, *, label = "sig1", created = None, expires_in = None))]
#[allow(clippy::too_many_arguments)]
fn sign_response<'py>(
    py: Python<'py>,
    status: &Bound<'py, PyAny>,
    headers: &Bound<'py, PyAny>,
    body: &Bound<'py, PyAny>,
    key: &Bound<'py, PyAny>,
    label: &str,
    created: Option<i64>,
    expires_in: Option<u64>,
) -> PyResult<Bound<'py, PyList>> {
    let status = status_arg(py, status)?;
    let mut h = headers_arg(py, headers)?;
    let body = bytes_arg(py, body, "body", MAX_INPUT_BYTES)?;
    let key = signing_key(key)?;
    let label = label.to_owned();
    let added = detached(py, move || {
        let mut msg = Message::response(status, fields(&h), body);
        let mut added = Vec::new();
        if !has_field(&msg, "content-digest") {
            let d = agentsig::digest::content_digest(&msg.body);
            msg.add_header("Content-Digest", &d);
            added.push(("Content-Digest".to_owned(), d));
        }
        let created = created.unwrap_or_else(now_secs);
        let mut spec = SignatureSpec::new(label).component(ComponentId::derived(Derived::Status));
        for f in ["content-type", "content-digest"] {
            if has_field(&msg, f) {
                spec = spec.component(field_id(f)?);
            }
        }
        added.extend(sign_spec(&msg, spec, &key, created, expires_in)?);
        h.extend(added);
        Ok(h)
    })?;
    pairs(py, &added)
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

/// Sign a request: under the Web Bot Auth profile
/// (draft-ietf-webbotauth-httpsig-protocol-00 section 5.2; `tag="web-bot-auth"`,
/// `Signature-Agent`, keyid = RFC 7638 thumbprint, `created`/`expires`, a
/// nonce) when `signature_agent` is given (`web_bot_auth=None`, the default
/// shared with `agentsig.httpx.SignatureAuth`, means exactly that), else plain RFC 9421 over `@method`, `@authority`,
/// `@path` (`@query` when there is one), `content-type` when present and
/// `content-digest` when there is a body. Returns the headers with the added
/// fields.
#[pyfunction]
#[pyo3(signature = (method, url, headers, body, key, *, web_bot_auth = None, signature_agent = None, expires_in = DEFAULT_EXPIRES_IN, components = None, label = "sig1", created = None))]
#[allow(clippy::too_many_arguments)]
fn sign_request<'py>(
    py: Python<'py>,
    method: &str,
    url: &Bound<'py, PyAny>,
    headers: &Bound<'py, PyAny>,
    body: &Bound<'py, PyAny>,
    key: &Bound<'py, PyAny>,
    web_bot_auth: Option<bool>,
    signature_agent: Option<String>,
    expires_in: u64,
    components: Option<Vec<String>>,
    label: &str,
    created: Option<i64>,
) -> PyResult<Bound<'py, PyList>> {
    let url = str_arg(py, url, "url", 8 * 1024)?;
    let mut h = headers_arg(py, headers)?;
    let body = bytes_arg(py, body, "body", MAX_INPUT_BYTES)?;
    let key = signing_key(key)?;
    let method = method.to_owned();
    let label = label.to_owned();
    let web_bot_auth = web_bot_auth.unwrap_or(signature_agent.is_some());
    let added = detached(py, move || {
        let mut msg = request_message(&method, &url, &h, body)?;
        let created = created.unwrap_or_else(now_secs);
        if web_bot_auth {
            let Some(agent) = signature_agent else {
                return Err(Failure::usage(
                    "Web Bot Auth needs signature_agent (the agent's https URL), or pass web_bot_auth=False",
                ));
            };
            let mut o = agentsig::webbotauth::SignOptions::new(agent, created);
            o.label = label;
            o.lifetime = expires_in;
            o.content_digest = true;
            let s = agentsig::webbotauth::sign_message(&mut msg, &key, &o)
                .map_err(|e| Failure::malformed(format!("Web Bot Auth: {e}")))?;
            h.extend(s.fields);
            return Ok(h);
        }
        let mut added = Vec::new();
        if !msg.body.is_empty() && !has_field(&msg, "content-digest") {
            let d = agentsig::digest::content_digest(&msg.body);
            msg.add_header("Content-Digest", &d);
            added.push(("Content-Digest".to_owned(), d));
        }
        let mut spec = SignatureSpec::new(label);
        match components {
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
                if request_query(&msg) {
                    spec = spec.component(ComponentId::derived(Derived::Query));
                }
                for f in ["content-type", "content-digest"] {
                    if has_field(&msg, f) {
                        spec = spec.component(field_id(f)?);
                    }
                }
            }
        }
        added.extend(sign_spec(&msg, spec, &key, created, Some(expires_in))?);
        h.extend(added);
        Ok(h)
    })?;
    pairs(py, &added)
}

fn request_query(m: &Message) -> bool {
    matches!(&m.kind, agentsig::httpsig::message::Kind::Request(l) if l.query.is_some())
}

// --------------------------------------------------------------- verifier

/// The trusted keys of a JWK Set given as a dict, str or bytes (RFC 7517
/// section 5); a JWK Set never yields a shared secret (RFC 8725 section
/// 3.1), and one with no usable key is refused.
fn jwks_keys(py: Python<'_>, j: &Bound<'_, PyAny>, what: &str) -> PyResult<StaticKeys> {
    let bytes = if j.hasattr("__fspath__")? {
        // A path-like (`pathlib.Path`): the file holding the JWK Set.
        let path: std::path::PathBuf = j.extract()?;
        read_bounded(&path, MAX_INPUT_BYTES).map_err(|e| {
            Failure::bad_input(
                "input.unreadable",
                format!("{what}: {}: {e}", path.display()),
            )
            .into_pyerr(py)
        })?
    } else if j.cast::<PyDict>().is_ok() {
        serde_json::to_vec(&json_value(py, j, MAX_INPUT_BYTES)?)
            .map_err(|e| Failure::bad_key(e.to_string()).into_pyerr(py))?
    } else if j.cast::<PyString>().is_ok() {
        let text = str_arg(py, j, what, MAX_INPUT_BYTES)?;
        if !text.trim_start().starts_with('{') {
            return Err(Failure::bad_key(format!(
                "{what}: a str is the JWK Set's JSON text itself ({{\"keys\": [...]}}, RFC 7517 section 5), not a file name; to read a file pass pathlib.Path(...)"
            ))
            .into_pyerr(py));
        }
        text.into_bytes()
    } else {
        bytes_arg(py, j, what, MAX_INPUT_BYTES)?
    };
    let set = StaticKeys::from_jwks(&bytes, KeySource::Jwks(what.into()), None)
        .map_err(|e| Failure::bad_key(format!("{what}: JWK Set: {e}")).into_pyerr(py))?;
    if set.keys.is_empty() {
        return Err(Failure::bad_key(format!(
            "{what}: JWK Set: no usable key ({} skipped)",
            set.skipped.len()
        ))
        .into_pyerr(py));
    }
    Ok(set.keys)
}

/// The bytes of the file at `path`, refused beyond `max` bytes (read at
/// most `max + 1`, so a huge file is never read whole).
fn read_bounded(path: &std::path::Path, max: usize) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    f.take(u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| e.to_string())?;
    if out.len() > max {
        return Err(format!("larger than the {max}-byte bound"));
    }
    Ok(out)
}

/// Public keys from a list of `PublicKey`, `SigningKey`, PEM text or JWK
/// dicts.
fn key_list(py: Python<'_>, ks: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<VerifyingKey>> {
    if ks.cast::<PyList>().is_err() && ks.cast::<PyTuple>().is_err() {
        return Err(PyTypeError::new_err(format!(
            "{what} must be a list, not {}",
            type_name(ks)
        )));
    }
    let mut out = Vec::new();
    for k in ks.try_iter()? {
        let k = k?;
        let vk = if let Ok(s) = k.cast::<PySigningKey>() {
            s.get().key.verifying_key().clone()
        } else if let Ok(p) = k.cast::<PyPublicKey>() {
            p.get().key.clone()
        } else if k.cast::<PyString>().is_ok() || k.cast::<PyBytes>().is_ok() {
            load_public(&str_arg(py, &k, "key", 1024 * 1024)?).map_err(|e| e.into_pyerr(py))?
        } else if k.cast::<PyDict>().is_ok() {
            jwk_key(&json_value(py, &k, 1024 * 1024)?).map_err(|e| e.into_pyerr(py))?
        } else {
            return Err(PyTypeError::new_err(format!(
                "a key must be a PublicKey, SigningKey, PEM str or JWK dict, not {}",
                type_name(&k)
            )));
        };
        out.push(vk);
    }
    Ok(out)
}

/// The Web Bot Auth key sets given in advance: each agent (its
/// `Signature-Agent` value: an origin, whose key directory is at the
/// well-known path, or a JWK Set URL) with its keys, a JWK Set or a list
/// of keys. A key verifies only the agent it is given for: the agent
/// identity a verification reports is bound by its key set
/// (draft-meunier-webbotauth-httpsig-protocol section 5.2), never by the
/// `Signature-Agent` value alone.
fn agent_key_sets(py: Python<'_>, d: &Bound<'_, PyAny>) -> PyResult<StaticDirectory> {
    let d = d.cast::<PyDict>().map_err(|_| {
        PyTypeError::new_err(format!(
            "agent_keys must be a dict of agent URL to keys, not {}",
            type_name(d)
        ))
    })?;
    if d.len() > MAX_AGENTS {
        return Err(Failure::usage(format!(
            "agent_keys: {} agents, at most {MAX_AGENTS}",
            d.len()
        ))
        .into_pyerr(py));
    }
    let mut dir = StaticDirectory::new();
    for (url, keys) in d.iter() {
        let url = str_arg(py, &url, "agent URL", agentsig::webbotauth::MAX_URL_LEN)?;
        let agent = agentsig::webbotauth::resolve_agent_url(&url, None)
            .map_err(|e| Failure::usage(format!("agent_keys: {e}")).into_pyerr(py))?;
        let keys = if keys.cast::<PyList>().is_ok() || keys.cast::<PyTuple>().is_ok() {
            key_list(py, &keys, "agent_keys values")?
        } else {
            jwks_keys(py, &keys, "agent_keys")?
                .keys()
                .iter()
                .map(|k| k.key.clone())
                .collect()
        };
        if keys.is_empty() {
            return Err(Failure::bad_key(format!("agent_keys: no key for {url}")).into_pyerr(py));
        }
        dir.insert(&agent.key_set_url, keys);
    }
    Ok(dir)
}

/// Most agents `agent_keys` may name.
const MAX_AGENTS: usize = 1024;

/// Verifies descriptors, A2A cards, RFC 9421 messages and delegation
/// chains with one configuration; thread-safe, reusable, releases the GIL
/// while it verifies.
#[pyclass(frozen, module = "agentsig._agentsig", name = "Verifier")]
pub struct PyVerifier {
    inner: agentsig::Verifier,
    wba: WebBotAuthVerifier,
    /// Where Web Bot Auth key sets come from: the keys given per agent
    /// (`agent_keys`), or the agents' key directories fetched over HTTPS;
    /// `None`: Web Bot Auth verification is not configured.
    directory: Option<Arc<dyn KeyDirectory>>,
    /// The deadline of one Web Bot Auth verification, every fetch included.
    fetch_deadline: std::time::Duration,
}

#[pymethods]
impl PyVerifier {
    #[new]
    #[pyo3(signature = (*, jwks = None, keys = None, algorithms = None, max_age = None, skew = None, replay_store = None, strict_low_s = false, now = None, agents = None, agent_keys = None, fetch_directories = false, require_directory_proof = false, allow_private_hosts = None, extra_roots_pem = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        jwks: Option<&Bound<'_, PyAny>>,
        keys: Option<&Bound<'_, PyAny>>,
        algorithms: Option<Vec<String>>,
        max_age: Option<u64>,
        skew: Option<u64>,
        replay_store: Option<String>,
        strict_low_s: bool,
        now: Option<i64>,
        agents: Option<Vec<String>>,
        agent_keys: Option<&Bound<'_, PyAny>>,
        fetch_directories: bool,
        require_directory_proof: bool,
        allow_private_hosts: Option<Vec<String>>,
        extra_roots_pem: Option<Vec<String>>,
    ) -> PyResult<PyVerifier> {
        let mut trusted = StaticKeys::new();
        if let Some(j) = jwks {
            trusted.extend(jwks_keys(py, j, "jwks")?);
        }
        if let Some(ks) = keys {
            for vk in key_list(py, ks, "keys")? {
                trusted.add(vk, KeySource::Pinned);
            }
        }
        let agent_keys = agent_keys.map(|d| agent_key_sets(py, d)).transpose()?;
        if agent_keys.is_some() && fetch_directories {
            return Err(Failure::usage(
                "agent_keys and fetch_directories=True are exclusive: keys given for an agent, or fetched from its directory",
            )
            .into_pyerr(py));
        }
        if trusted.is_empty() && agent_keys.is_none() && !fetch_directories {
            return Err(Failure::usage(
                "a Verifier needs trusted keys: pass jwks=... or keys=[...] (or, for Web Bot Auth only, agent_keys={...} or fetch_directories=True)",
            )
            .into_pyerr(py));
        }
        if !fetch_directories
            && (require_directory_proof
                || allow_private_hosts.is_some()
                || extra_roots_pem.is_some())
        {
            return Err(Failure::usage(
                "require_directory_proof, allow_private_hosts and extra_roots_pem need fetch_directories=True",
            )
            .into_pyerr(py));
        }
        let allow = match algorithms {
            None => AllowList::asymmetric(),
            Some(names) => {
                let mut v = Vec::new();
                for n in &names {
                    v.push(algorithm(n).map_err(|e| e.into_pyerr(py))?);
                }
                if v.is_empty() {
                    return Err(Failure::usage("algorithms is empty").into_pyerr(py));
                }
                AllowList::new(v)
            }
        };
        let mut http = HttpPolicy::new();
        http.max_age = max_age;
        let mut b = agentsig::Verifier::builder(trusted)
            .algorithms(allow.clone())
            .strict_low_s(strict_low_s)
            .http(http);
        if let Some(s) = skew {
            b = b.skew(s);
        }
        let start = now.unwrap_or_else(now_secs);
        let store: Option<Arc<dyn ReplayStore>> = match replay_store.as_deref() {
            None => None,
            Some(url) => {
                let url = if url == "memory" { "memory:" } else { url };
                Some(
                    agentsig::replay::open_store(url, start)
                        .map_err(|e| Failure::usage(format!("replay store: {e}")).into_pyerr(py))?,
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
        policy.allowed_agents = agents;
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
            for h in allow_private_hosts.unwrap_or_default() {
                fetch = fetch.allow_private_host(h);
            }
            for pem in extra_roots_pem.unwrap_or_default() {
                fetch = fetch.extra_root_pem(pem.into_bytes());
            }
            let fetcher = agentsig::net::fetch::Fetcher::with_policy(fetch)
                .map_err(|e| Failure::usage(format!("HTTPS client: {e}")).into_pyerr(py))?;
            let mut client = agentsig::net::webbotauth::DirectoryClient::new(Arc::new(fetcher))
                .require_proof(require_directory_proof);
            if let Some(n) = now {
                client = client.clock(FixedClock(n));
            }
            Some(Arc::new(client))
        } else {
            agent_keys.map(|d| Arc::new(d) as Arc<dyn KeyDirectory>)
        };
        Ok(PyVerifier {
            inner,
            wba,
            directory,
            fetch_deadline,
        })
    }

    /// Whether this verifier can verify Web Bot Auth requests: it was
    /// given `agent_keys` or `fetch_directories=True`.
    #[getter]
    fn web_bot_auth_keys(&self) -> bool {
        self.directory.is_some()
    }

    /// Verify a descriptor (JSON bytes) against its detached JWS over the
    /// RFC 8785 canonical form (draft-narvaneni-agent-uri-03 section 10.3).
    fn verify_descriptor<'py>(
        &self,
        py: Python<'py>,
        doc: &Bound<'py, PyAny>,
        jws: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let limits = *self.inner.limits();
        let doc = bytes_arg(py, doc, "doc", limits.max_document_bytes)?;
        let jws = str_arg(py, jws, "jws", limits.max_jws_bytes)?;
        let r = detached(py, || {
            use agentsig::descriptor::DescriptorError as E;
            let r = match self.inner.verify_descriptor(&doc, &jws) {
                Ok(r) => r,
                Err(E::NotVerified(r)) => *r,
                Err(E::TooLarge(n)) => {
                    return Err(Failure::too_large("doc", n, limits.max_document_bytes))
                }
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
        })?;
        report_object(py, &r)
    }

    /// Verify the embedded signatures of an A2A Agent Card (dict or JSON
    /// bytes); `require_all`: every signature must verify (default: one
    /// valid signature by a trusted key and none invalid).
    #[pyo3(signature = (card, *, require_all = false))]
    fn verify_card<'py>(
        &self,
        py: Python<'py>,
        card: &Bound<'py, PyAny>,
        require_all: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let v = card_value(py, card)?;
        let r = detached(py, || {
            use agentsig::a2a::A2aError as E;
            let r = match self.inner.verify_agent_card_value(&v) {
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
            settle(Report::from_card("verify", None, &r, require_all))
        })?;
        report_object(py, &r)
    }

    /// Verify the RFC 9421 signatures of a response (status, headers, body)
    /// with its covered Content-Digest (RFC 9530); `request`, a
    /// `(method, url, headers, body)` tuple, is the request it answers (for
    /// `;req` components).
    #[pyo3(signature = (status, headers, body, *, request = None))]
    fn verify_response<'py>(
        &self,
        py: Python<'py>,
        status: &Bound<'py, PyAny>,
        headers: &Bound<'py, PyAny>,
        body: &Bound<'py, PyAny>,
        request: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let status = status_arg(py, status)?;
        let h = headers_arg(py, headers)?;
        let body = bytes_arg(py, body, "body", MAX_INPUT_BYTES)?;
        let related = match request {
            None => None,
            Some(r) => {
                let t = r.cast::<PyTuple>().map_err(|_| {
                    PyTypeError::new_err("request must be a (method, url, headers, body) tuple")
                })?;
                if t.len() != 4 {
                    return Err(PyTypeError::new_err(
                        "request must be a (method, url, headers, body) tuple",
                    ));
                }
                Some((
                    str_arg(py, &t.get_item(0)?, "method", 64)?,
                    str_arg(py, &t.get_item(1)?, "url", 8 * 1024)?,
                    headers_arg(py, &t.get_item(2)?)?,
                    bytes_arg(py, &t.get_item(3)?, "body", MAX_INPUT_BYTES)?,
                ))
            }
        };
        let r = detached(py, || {
            let msg = Message::response(status, fields(&h), body);
            let rel = match related {
                Some((m, u, rh, rb)) => Some(request_message(&m, &u, &rh, rb)?),
                None => None,
            };
            self.http("http verify", &msg, rel.as_ref())
        })?;
        report_object(py, &r)
    }

    /// Verify the RFC 9421 signatures of a request (method, absolute URL,
    /// headers, body) with its covered Content-Digest (RFC 9530); with
    /// `web_bot_auth=True`, under the Web Bot Auth profile (a
    /// `tag="web-bot-auth"` signature covering `Signature-Agent`, keyid the
    /// RFC 7638 thumbprint of one of the verifier's keys).
    ///
    /// `scheme` ("https" or "http"): `url` is then the origin-form target a
    /// server received (`/path?query`) and the authority is the one `Host`
    /// field (RFC 9112 section 3.2). `authorities`: the site's own
    /// authorities (`host[:port]`); a signature must cover `@authority` or
    /// `@target-uri` and the request's authority must be one of them
    /// (`authority-not-covered`, `wrong-authority`; RFC 9421 section 7.2.1).
    /// `strict`: a signature must also cover `@method` and `@path` and
    /// carry a `nonce` (RFC 9421 section 7.2.2), so that, with a replay
    /// store, a captured signature is good for one request only.
    #[pyo3(signature = (method, url, headers, body = None, *, web_bot_auth = false, authorities = None, strict = false, scheme = None))]
    #[allow(clippy::too_many_arguments)]
    fn verify_request<'py>(
        &self,
        py: Python<'py>,
        method: &Bound<'py, PyAny>,
        url: &Bound<'py, PyAny>,
        headers: &Bound<'py, PyAny>,
        body: Option<&Bound<'py, PyAny>>,
        web_bot_auth: bool,
        authorities: Option<&Bound<'py, PyAny>>,
        strict: bool,
        scheme: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let method = str_arg(py, method, "method", 64)?;
        let url = str_arg(py, url, "url", 8 * 1024)?;
        let h = headers_arg(py, headers)?;
        let body = match body {
            Some(b) => bytes_arg(py, b, "body", MAX_INPUT_BYTES)?,
            None => Vec::new(),
        };
        let authorities = authorities.map(|a| authorities_arg(py, a)).transpose()?;
        let r = detached(py, || {
            let msg = verified_request_message(&method, &url, scheme.as_deref(), &h, body)?;
            if web_bot_auth {
                let Some(directory) = &self.directory else {
                    return Err(Failure::usage(
                        "Web Bot Auth needs the agents' keys: Verifier(agent_keys={agent_url: keys}) or Verifier(fetch_directories=True)",
                    ));
                };
                let mut wba = self.wba.clone();
                wba.policy.authorities = authorities;
                if strict {
                    add_strict(&mut wba.policy.required);
                    wba.policy.require_nonce = true;
                }
                // Every key-directory fetch of this verification ends by the
                // deadline, so a request naming slow directories cannot hold
                // the caller for long.
                let deadline = std::time::Instant::now() + self.fetch_deadline;
                let rep = agentsig::net::fetch::with_deadline(deadline, || {
                    wba.verify(&msg, directory.as_ref(), self.inner.now())
                });
                let mut report = rep.to_report("web-bot-auth verify", Some(&url));
                fill_covered(&mut report, &msg);
                return settle(report);
            }
            if authorities.is_none() && !strict {
                return http_report(&self.inner, "http verify", &msg, None);
            }
            let mut hp = self.inner.http_policy().clone();
            hp.authorities = authorities;
            if strict {
                add_strict(&mut hp.required);
                hp.require_nonce = true;
            }
            let v = self.inner.to_builder().http(hp).build();
            http_report(&v, "http verify", &msg, None)
        })?;
        report_object(py, &r)
    }

    /// Whether this verifier checks nonces against a replay store (RFC 9421
    /// section 7.2.2): it was built with `replay_store=...` or by
    /// [`with_replay_store`](Self::with_replay_store).
    #[getter]
    fn has_replay_store(&self) -> bool {
        self.inner.replay_store().is_some()
    }

    /// This verifier with a replay store (`"memory"`, a file path,
    /// `redis://...`) in place of its own: every other setting is kept, and
    /// the store is shared by its RFC 9421 and Web Bot Auth verifications.
    fn with_replay_store(&self, py: Python<'_>, replay_store: &str) -> PyResult<PyVerifier> {
        let url = if replay_store == "memory" {
            "memory:"
        } else {
            replay_store
        };
        let store = agentsig::replay::open_store(url, self.inner.now())
            .map_err(|e| Failure::usage(format!("replay store: {e}")).into_pyerr(py))?;
        Ok(PyVerifier {
            inner: self.inner.to_builder().replay_store(store.clone()).build(),
            wba: self.wba.clone().with_replay_store(store),
            directory: self.directory.clone(),
            fetch_deadline: self.fetch_deadline,
        })
    }

    /// Audit a delegation chain (RFC 8693, RFC 9068, RFC 8725): one token or
    /// a list, subject token first. `issuer` and `audience` are required of
    /// the tokens when given; `deny_warnings` fails the audit on a warning.
    #[pyo3(signature = (tokens, *, issuer = None, audience = None, deny_warnings = false))]
    fn audit_delegation<'py>(
        &self,
        py: Python<'py>,
        tokens: &Bound<'py, PyAny>,
        issuer: Option<&Bound<'py, PyAny>>,
        audience: Option<String>,
        deny_warnings: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let issuer: Option<Vec<String>> = match issuer {
            None => None,
            Some(i) if i.cast::<PyString>().is_ok() => {
                Some(vec![str_arg(py, i, "issuer", 8 * 1024)?])
            }
            Some(i) => Some(i.extract().map_err(|_| {
                PyTypeError::new_err(format!(
                    "issuer must be a str or a list of str, not {}",
                    type_name(i)
                ))
            })?),
        };
        let max = self.inner.limits().max_jwt_bytes;
        let list: Vec<String> = if tokens.cast::<PyString>().is_ok() {
            vec![str_arg(py, tokens, "token", max)?]
        } else if tokens.cast::<PyList>().is_ok() || tokens.cast::<PyTuple>().is_ok() {
            let n = tokens.len()?;
            if n > agentsig::policy::MAX_HOPS {
                return Err(Failure::malformed(format!(
                    "{n} tokens: a bundle holds at most {}",
                    agentsig::policy::MAX_HOPS
                ))
                .into_pyerr(py));
            }
            let mut v = Vec::new();
            for t in tokens.try_iter()? {
                v.push(str_arg(py, &t?, "token", max)?);
            }
            v
        } else {
            return Err(PyTypeError::new_err(format!(
                "tokens must be a str or a list of str, not {}",
                type_name(tokens)
            )));
        };
        let r = detached(py, || {
            let mut jwt = agentsig::policy::JwtPolicy::delegation();
            if let Some(i) = issuer {
                jwt = jwt.issuers(i);
            }
            if let Some(a) = audience {
                jwt = jwt.audience(a);
            }
            let v = self
                .inner
                .to_builder()
                .jwt(jwt)
                .audit(
                    self.inner
                        .audit_policy()
                        .clone()
                        .deny_warnings(deny_warnings),
                )
                .build();
            let refs: Vec<&str> = list.iter().map(String::as_str).collect();
            let r = match v.audit_delegation(&refs) {
                Ok(r) => r,
                Err(e) => *e.report,
            };
            settle(Report::from_audit(
                "delegation audit",
                None,
                &r,
                deny_warnings,
            ))
        })?;
        report_object(py, &r)
    }

    fn __repr__(&self) -> String {
        format!(
            "<agentsig.Verifier algorithms={:?}>",
            self.inner
                .algorithms()
                .iter()
                .map(Algorithm::jose_name)
                .collect::<Vec<_>>()
        )
    }
}

impl PyVerifier {
    /// An RFC 9421 verification as the CLI's `http verify` reports it.
    fn http(&self, command: &str, msg: &Message, related: Option<&Message>) -> Out<Report> {
        http_report(&self.inner, command, msg, related)
    }
}

/// The components `strict=True` requires beyond the profile's: `@method`
/// and `@path`, so a captured signature cannot be spent on another method
/// or resource (RFC 9421 section 7.2.1); with `require_nonce`, a replay
/// store makes it good for one request (section 7.2.2).
fn add_strict(required: &mut Vec<ComponentId>) {
    for c in agentsig::httpsig::strict_request_components() {
        if !required.contains(&c) {
            required.push(c);
        }
    }
}

/// `authorities=[...]`: the site's own authorities, each `host[:port]`
/// (RFC 3986 section 3.2), checked as the gates check them.
fn authorities_arg(py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if o.cast::<PyString>().is_ok() || o.cast::<PyBytes>().is_ok() {
        return Err(PyTypeError::new_err(
            "authorities must be a list of str (host[:port]), not a single str",
        ));
    }
    let max = agentsig::httpsig::authority::MAX_AUTHORITIES;
    let mut list = Vec::new();
    for a in o.try_iter()? {
        if list.len() >= max {
            return Err(
                Failure::usage(format!("authorities: more than {max} given")).into_pyerr(py),
            );
        }
        list.push(str_arg(
            py,
            &a?,
            "an authority",
            agentsig::httpsig::authority::MAX_AUTHORITY_LEN,
        )?);
    }
    agentsig::httpsig::SiteAuthorities::only(&list)
        .map(|a| a.to_policy().unwrap_or_default())
        .map_err(|e| Failure::usage(format!("authorities: {e}")).into_pyerr(py))
}

/// A Web Bot Auth report lists no covered components (the profile's
/// verifier keeps the identity, not the list): fill them in, for each
/// signature that verified, from its `Signature-Input` member (RFC 9421
/// section 4.1), so the identity says what the agent signed.
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
            // In the form the RFC 9421 report gives them (`Report::from_http`).
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
) -> Out<Report> {
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

/// Parse a saved raw HTTP response (what `curl -si URL` prints: status
/// line, header section, content; RFC 9112 sections 4 to 6) into the
/// `(status, headers, body)` that `Verifier.verify_response` takes. Interim
/// 1xx responses before the final one are skipped, a chunked body is
/// decoded, and ambiguous framing is an error (RFC 9112 section 6.3).
#[pyfunction]
fn parse_response<'py>(py: Python<'py>, raw: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
    let raw = bytes_arg(py, raw, "raw", MAX_INPUT_BYTES)?;
    let msg = detached(py, move || {
        Message::parse(&raw, "https").map_err(|e| Failure::malformed(format!("HTTP response: {e}")))
    })?;
    let agentsig::httpsig::message::Kind::Response { status } = msg.kind else {
        return Err(Failure::malformed(
            "this is a request, not a response: a response starts with a status line (HTTP/1.1 200 OK, RFC 9112 section 4)",
        )
        .into_pyerr(py));
    };
    let headers = PyList::empty(py);
    for f in &msg.headers {
        let value = std::str::from_utf8(&f.value).map_err(|_| {
            Failure::malformed(format!("the value of {} is not UTF-8", f.name)).into_pyerr(py)
        })?;
        headers.append((f.name.as_str(), value))?;
    }
    PyTuple::new(
        py,
        [
            status.into_pyobject(py)?.into_any(),
            headers.into_any(),
            PyBytes::new(py, &msg.body).into_any(),
        ],
    )
}

/// The native module.
#[pymodule]
fn _agentsig(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySigningKey>()?;
    pkcs11::register(m)?;
    m.add_class::<PyPublicKey>()?;
    m.add_class::<PyVerifier>()?;
    m.add_function(wrap_pyfunction!(canonicalize, m)?)?;
    m.add_function(wrap_pyfunction!(sign_descriptor, m)?)?;
    m.add_function(wrap_pyfunction!(sign_card, m)?)?;
    m.add_function(wrap_pyfunction!(sign_response, m)?)?;
    m.add_function(wrap_pyfunction!(sign_request, m)?)?;
    m.add_function(wrap_pyfunction!(parse_response, m)?)?;
    m.add("MAX_INPUT_BYTES", MAX_INPUT_BYTES)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
