//! `agentsig._agentsig`: the native half of the `agentsig` Python package
//! (PyO3, abi3). It binds the library facade ([`agentsig::facade`]): the
//! [`Facade`] verifier and its `verify_*` methods, [`agentsig::SigningKey`],
//! descriptor, A2A card and RFC 9421 signing, RFC 8785 canonicalization,
//! the Web Bot Auth profile and AI Catalogs. Every rule (which error a
//! failure is, the options' defaults and the rules between them, how a
//! request is assembled from its parts) lives in the facade; this file
//! converts Python values and raises.
//!
//! # Contract
//! * Every call copies its inputs into Rust values (after checking their
//!   size against a bound, so an oversized input is refused before it is
//!   copied), then runs without the GIL (`Python::detach`).
//! * Success returns a report; anything else raises one of the exceptions
//!   of `agentsig._errors` (Python), the class named by the facade's
//!   [`facade::ErrorKind`], each with the stable `code` the CLI reports
//!   (`docs/report.md`). The report is the very
//!   [`agentsig::report::Report`] the CLI prints under `--json`, converted
//!   from its serde form, so the shapes cannot drift.
//! * No input reaches an `unwrap`/`expect`: bad input is `BadInput`,
//!   unusable keys `BadKey`, wrong Python types `TypeError`.

#![forbid(unsafe_code)]

use agentsig::facade::{
    self, algorithm, jwk_key, load_public, refuse_secret, Facade, Failure, RequestCheck,
    VerifierOptions,
};
use agentsig::httpsig::message::{MAX_FIELD_LINES, MAX_HEAD_BYTES};
use agentsig::httpsig::Message;
use agentsig::report::Report;
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::webbotauth::StaticDirectory;
use agentsig::{Algorithm, SigningKey, VerifyingKey};
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
/// call: [`facade::MAX_INPUT_BYTES`], the CLI's bound on any input.
pub const MAX_INPUT_BYTES: usize = facade::MAX_INPUT_BYTES;

/// Largest JSON document (descriptor, A2A card, JSON given as a Python
/// object): the library's default [`agentsig::policy::Limits`].
fn max_document_bytes() -> usize {
    agentsig::policy::Limits::default().max_document_bytes
}

/// Deepest nesting of a Python object converted to JSON (`canonicalize`,
/// `sign_card`, JWK dicts): the strict JSON parser's default depth.
pub const MAX_DEPTH: usize = 64;

/// Default lifetime of a request signature (`expires - created`), seconds.
pub const DEFAULT_EXPIRES_IN: u64 = facade::DEFAULT_EXPIRES_IN;

// ---------------------------------------------------------------- errors

/// A facade [`Failure`] as the Python exception of `agentsig._errors`
/// its kind names.
trait IntoPyErr {
    fn into_pyerr(self, py: Python<'_>) -> PyErr;
}

impl IntoPyErr for Failure {
    fn into_pyerr(self, py: Python<'_>) -> PyErr {
        let build = || -> PyResult<PyErr> {
            let report = match &self.report {
                Some(r) => Some(report_object(py, r)?),
                None => None,
            };
            let cls = py.import("agentsig._errors")?.getattr(self.kind.name())?;
            let inst = cls.call1((self.message.as_str(), self.code.as_str(), report))?;
            Ok(PyErr::from_value(inst))
        };
        build().unwrap_or_else(|e| e)
    }
}

type Out<T> = facade::Outcome<T>;

/// Run `f` without the GIL and convert its failure.
fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> Out<T> + Send) -> PyResult<T> {
    py.detach(f).map_err(|e| e.into_pyerr(py))
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
/// 9421 message limits ([`facade::check_headers`]).
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
        // Stop copying at the first line or byte past the bounds; the
        // facade says which bound.
        if out.len() > MAX_FIELD_LINES || total > MAX_HEAD_BYTES {
            break;
        }
        let pair = if let Ok(t) = item.cast::<PyTuple>() {
            (t.len() == 2).then(|| Ok::<_, PyErr>((t.get_item(0)?, t.get_item(1)?)))
        } else if let Ok(l) = item.cast::<PyList>() {
            (l.len() == 2).then(|| Ok::<_, PyErr>((l.get_item(0)?, l.get_item(1)?)))
        } else {
            return Err(PyTypeError::new_err(format!(
                "a header must be a (name, value) pair, not {}",
                type_name(&item)
            )));
        };
        let Some(pair) = pair else {
            return Err(PyTypeError::new_err(
                "a header must be a (name, value) pair of two items",
            ));
        };
        let (n, v) = pair?;
        let (name, value) = (
            field_text(py, &n, "a header name")?,
            field_text(py, &v, "a header value")?,
        );
        total = total.saturating_add(name.len() + value.len() + 4);
        out.push((name, value));
    }
    facade::check_headers(&out).map_err(|e| e.into_pyerr(py))?;
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
    /// in signatures, else the kid `jwk` (its published JWK or a JWK Set
    /// holding it) gives it, else its RFC 7638 thumbprint
    /// ([`facade::keys::signing_key_from_pem`]).
    #[staticmethod]
    #[pyo3(signature = (pem, *, kid = None, jwk = None))]
    fn from_pem(
        py: Python<'_>,
        pem: &Bound<'_, PyAny>,
        kid: Option<String>,
        jwk: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PySigningKey> {
        let pem = str_arg(py, pem, "pem", 1024 * 1024)?;
        let jwk = jwk
            .map(|j| str_arg(py, j, "jwk", MAX_INPUT_BYTES))
            .transpose()?;
        let key = facade::keys::signing_key_from_pem(&pem, kid, jwk.as_deref().map(str::as_bytes))
            .map_err(|e| e.into_pyerr(py))?;
        Ok(PySigningKey { key: Arc::new(key) })
    }

    /// Load a private key from a PEM file, named as `agentsig sign --key`
    /// names it: `kid`, else the kid `agentsig keygen --kid` wrote beside
    /// the file (`PREFIX.jwk.json` or `PREFIX.jwks.json` for `PREFIX.pem`),
    /// else its RFC 7638 thumbprint ([`facade::keys::signing_key_from_file`]).
    #[staticmethod]
    #[pyo3(signature = (path, *, kid = None))]
    fn from_file(
        py: Python<'_>,
        path: std::path::PathBuf,
        kid: Option<String>,
    ) -> PyResult<PySigningKey> {
        let key = py
            .detach(|| facade::keys::signing_key_from_file(&path, kid))
            .map_err(|e| e.into_pyerr(py))?;
        Ok(PySigningKey { key: Arc::new(key) })
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
        let j = facade::public_jwk(&self.key).map_err(|e| e.into_pyerr(py))?;
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
    let doc = bytes_arg(py, doc, "doc", max_document_bytes())?;
    let key = signing_key(key)?;
    detached(py, move || facade::sign_descriptor(&doc, &key))
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
    let signed = detached(py, move || facade::sign_card(&v, &key, force))?;
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

/// An HTTP status code: an `int` of three digits ([`facade::status_code`]).
fn status_arg(py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<u16> {
    if o.cast::<PyBool>().is_ok() || o.cast::<PyInt>().is_err() {
        return Err(PyTypeError::new_err(format!(
            "status must be an int, not {}",
            type_name(o)
        )));
    }
    facade::status_code(o.extract::<i64>().unwrap_or(-1)).map_err(|e| e.into_pyerr(py))
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
    let h = headers_arg(py, headers)?;
    let body = bytes_arg(py, body, "body", MAX_INPUT_BYTES)?;
    let key = signing_key(key)?;
    let mut o = facade::ResponseSigning::default();
    o.label = label.to_owned();
    o.created = created;
    o.expires_in = expires_in;
    let signed = detached(py, move || {
        facade::sign_response(status, &h, body, &key, &o)
    })?;
    pairs(py, &signed)
}

/// Sign a request: under the Web Bot Auth profile
/// (draft-ietf-webbotauth-httpsig-protocol-00 section 5.2; `tag="web-bot-auth"`,
/// `Signature-Agent`, keyid = RFC 7638 thumbprint, `created`/`expires`, a
/// nonce) when `signature_agent` is given (`web_bot_auth=None`, the default
/// shared with `agentsig.httpx.SignatureAuth`, means exactly that), else plain RFC 9421 over `@method`, `@authority`,
/// `@path` (`@query` when there is one), `content-type` when present and
/// `content-digest` when there is a body ([`facade::sign_request`]).
/// Returns the headers with the added fields.
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
    let h = headers_arg(py, headers)?;
    let body = bytes_arg(py, body, "body", MAX_INPUT_BYTES)?;
    let key = signing_key(key)?;
    let method = method.to_owned();
    let mut o = facade::RequestSigning::default();
    o.web_bot_auth = web_bot_auth.unwrap_or(signature_agent.is_some());
    if o.web_bot_auth && signature_agent.is_none() {
        return Err(Failure::usage(
            "Web Bot Auth needs signature_agent (the agent's https URL), or pass web_bot_auth=False",
        )
        .into_pyerr(py));
    }
    o.signature_agent = signature_agent;
    o.expires_in = expires_in;
    o.components = components;
    o.label = label.to_owned();
    o.created = created;
    let signed = detached(py, move || {
        facade::sign_request(&method, &url, &h, body, &key, &o)
    })?;
    pairs(py, &signed)
}

// --------------------------------------------------------------- verifier

/// The trusted keys of a JWK Set given as a dict, str or bytes (RFC 7517
/// section 5), or a path-like naming its file ([`facade::jwks_keys`]).
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
    facade::jwks_keys(&bytes, what, MAX_INPUT_BYTES).map_err(|e| e.into_pyerr(py))
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
/// `Signature-Agent` value) with its keys, a JWK Set or a list of keys
/// ([`facade::add_agent_keys`]).
fn agent_key_sets(py: Python<'_>, d: &Bound<'_, PyAny>) -> PyResult<StaticDirectory> {
    let d = d.cast::<PyDict>().map_err(|_| {
        PyTypeError::new_err(format!(
            "agent_keys must be a dict of agent URL to keys, not {}",
            type_name(d)
        ))
    })?;
    if d.len() > facade::MAX_AGENTS {
        return Err(Failure::usage(format!(
            "agent_keys: {} agents, at most {}",
            d.len(),
            facade::MAX_AGENTS
        ))
        .into_pyerr(py));
    }
    let mut dir = StaticDirectory::new();
    for (url, keys) in d.iter() {
        let url = str_arg(py, &url, "agent URL", agentsig::webbotauth::MAX_URL_LEN)?;
        let keys = if keys.cast::<PyList>().is_ok() || keys.cast::<PyTuple>().is_ok() {
            key_list(py, &keys, "agent_keys values")?
        } else {
            jwks_keys(py, &keys, "agent_keys")?
                .keys()
                .iter()
                .map(|k| k.key.clone())
                .collect()
        };
        facade::add_agent_keys(&mut dir, &url, keys, facade::Spelling::Snake)
            .map_err(|e| e.into_pyerr(py))?;
    }
    Ok(dir)
}

/// Verifies descriptors, A2A cards, RFC 9421 messages, delegation chains
/// and AI Catalogs with one configuration; thread-safe, reusable, releases
/// the GIL while it verifies.
#[pyclass(frozen, module = "agentsig._agentsig", name = "Verifier")]
pub struct PyVerifier {
    inner: Facade,
}

#[pymethods]
impl PyVerifier {
    #[new]
    #[pyo3(signature = (*, jwks = None, keys = None, algorithms = None, max_age = None, skew = None, replay_store = None, strict_low_s = false, now = None, agents = None, agent_keys = None, fetch_directories = false, require_directory_proof = false, allow_private_hosts = None, extra_roots_pem = None, key_cache = None, fleet_secret_file = None, allow_uncovered_content = false))]
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
        key_cache: Option<String>,
        fleet_secret_file: Option<std::path::PathBuf>,
        allow_uncovered_content: bool,
    ) -> PyResult<PyVerifier> {
        let mut o = VerifierOptions::default();
        if let Some(j) = jwks {
            o.keys.extend(jwks_keys(py, j, "jwks")?);
        }
        if let Some(ks) = keys {
            for vk in key_list(py, ks, "keys")? {
                o.keys.add(vk, KeySource::Pinned);
            }
        }
        o.agent_keys = agent_keys.map(|d| agent_key_sets(py, d)).transpose()?;
        o.algorithms = algorithms
            .map(|names| names.iter().map(|n| algorithm(n)).collect::<Out<Vec<_>>>())
            .transpose()
            .map_err(|e| e.into_pyerr(py))?;
        o.max_age = max_age;
        o.skew = skew;
        o.replay_store = replay_store;
        o.strict_low_s = strict_low_s;
        o.now = now;
        o.agents = agents;
        o.fetch_directories = fetch_directories;
        o.require_directory_proof = require_directory_proof;
        o.allow_private_hosts = allow_private_hosts;
        o.extra_roots_pem = extra_roots_pem;
        o.key_cache = key_cache;
        o.fleet_secret_file = fleet_secret_file;
        o.allow_uncovered_content = allow_uncovered_content;
        let inner = o
            .build(Some(agentsig::net::facade::network()))
            .map_err(|e| e.into_pyerr(py))?;
        Ok(PyVerifier { inner })
    }

    /// Whether this verifier can verify Web Bot Auth requests: it was
    /// given `agent_keys` or `fetch_directories=True`.
    #[getter]
    fn web_bot_auth_keys(&self) -> bool {
        self.inner.web_bot_auth_keys()
    }

    /// Verify a descriptor (JSON bytes) against its detached JWS over the
    /// RFC 8785 canonical form (draft-narvaneni-agent-uri-03 section 10.3).
    fn verify_descriptor<'py>(
        &self,
        py: Python<'py>,
        doc: &Bound<'py, PyAny>,
        jws: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let limits = *self.inner.verifier().limits();
        let doc = bytes_arg(py, doc, "doc", limits.max_document_bytes)?;
        let jws = str_arg(py, jws, "jws", limits.max_jws_bytes)?;
        let r = detached(py, || self.inner.verify_descriptor(&doc, &jws))?;
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
        let r = detached(py, || self.inner.verify_card(&v, require_all))?;
        report_object(py, &r)
    }

    /// Verify an AI Catalog (dict, JSON bytes or str): lint, each entry's
    /// manifest (identity equal to the entry's `identifier`, a detached JWS
    /// over the RFC 8785 form without `signature`), inline artifacts by
    /// their media type, nested inline catalogs. The keys are chosen as
    /// `agentsig verify CATALOG` chooses them: this verifier's trusted keys
    /// for every identity when it has `keys`/`jwks` (`--key K`), else each
    /// identity's keys resolved (DID document, HTTPS JWK Set), which needs
    /// `fetch_directories=True`. The report is the one the command prints
    /// under `--json` (one `catalog.entry` check and one `details.entries`
    /// result per entry); `require_signed`: every entry must carry a
    /// verified Trust Manifest; `allow_unsigned`: a catalog some entry of
    /// which no trusted key vouches for (nothing failed) is returned with
    /// the verdict `unsigned` (`verified` false) instead of raising
    /// `NotVerified` (code `catalog.unsigned`), as `--allow-unsigned`;
    /// `jws`: the catalog's detached JWS (`ai-catalog.json.jws`, over the
    /// RFC 8785 form of the whole document, draft-narvaneni-agent-uri-03
    /// section 10.3), checked with the keys of `host.identifier`: verified,
    /// it binds every inline artifact, as `agentsig verify FILE --jws`.
    #[pyo3(signature = (catalog, *, require_signed = false, allow_unsigned = false, jws = None))]
    fn verify_catalog<'py>(
        &self,
        py: Python<'py>,
        catalog: &Bound<'py, PyAny>,
        require_signed: bool,
        allow_unsigned: bool,
        jws: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let jws = jws
            .filter(|j| !j.is_none())
            .map(|j| str_arg(py, j, "jws", self.inner.verifier().limits().max_jws_bytes))
            .transpose()?;
        let max = agentsig::catalog::MAX_CATALOG_BYTES;
        let bytes = if catalog.cast::<PyDict>().is_ok() {
            serde_json::to_vec(&json_value(py, catalog, max)?)
                .map_err(|e| Failure::malformed(format!("catalog: {e}")).into_pyerr(py))?
        } else if catalog.cast::<PyString>().is_ok() {
            str_arg(py, catalog, "catalog", max)?.into_bytes()
        } else {
            bytes_arg(py, catalog, "catalog", max)?
        };
        let r = detached(py, || {
            self.inner.verify_catalog_signed(
                &bytes,
                jws.as_deref(),
                None,
                require_signed,
                allow_unsigned,
            )
        })?;
        report_object(py, &r)
    }

    /// Fetch the AI Catalog at `url` (https; e.g.
    /// `https://HOST/.well-known/ai-catalog.json`) through the SSRF-guarded
    /// fetcher, with its nested catalogs and cards (bounded in depth,
    /// fetches, bytes and time), and verify it as
    /// [`verify_catalog`](Self::verify_catalog) does. A catalog that cannot
    /// be fetched raises `FetchError`. `allow_private_hosts` and
    /// `extra_roots_pem` loosen the fetcher for internal catalogs and tests.
    #[pyo3(signature = (url, *, require_signed = false, allow_unsigned = false, allow_private_hosts = None, extra_roots_pem = None))]
    #[allow(clippy::too_many_arguments)]
    fn verify_catalog_url<'py>(
        &self,
        py: Python<'py>,
        url: &Bound<'py, PyAny>,
        require_signed: bool,
        allow_unsigned: bool,
        allow_private_hosts: Option<Vec<String>>,
        extra_roots_pem: Option<Vec<String>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let url = str_arg(py, url, "url", 8 * 1024)?;
        let mut o = agentsig::net::facade::CatalogFetch::default();
        o.require_signed = require_signed;
        o.allow_unsigned = allow_unsigned;
        o.allow_private_hosts = allow_private_hosts.unwrap_or_default();
        o.extra_roots_pem = extra_roots_pem.unwrap_or_default();
        let r = detached(py, || {
            agentsig::net::facade::verify_catalog_url(&self.inner, &url, &o)
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
            let rel = related
                .as_ref()
                .map(|(m, u, h, b)| (m.as_str(), u.as_str(), h.as_slice(), b.clone()));
            self.inner.verify_response(status, &h, body, rel)
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
        let mut check = RequestCheck::default();
        check.method = str_arg(py, method, "method", 64)?;
        check.target = str_arg(py, url, "url", 8 * 1024)?;
        check.headers = headers_arg(py, headers)?;
        if let Some(b) = body {
            check.body = bytes_arg(py, b, "body", MAX_INPUT_BYTES)?;
        }
        check.authorities = authorities.map(|a| authorities_arg(py, a)).transpose()?;
        check.web_bot_auth = web_bot_auth;
        check.strict = strict;
        check.scheme = scheme;
        let r = detached(py, || self.inner.verify_request(check))?;
        report_object(py, &r)
    }

    /// Whether this verifier checks nonces against a replay store (RFC 9421
    /// section 7.2.2): it was built with `replay_store=...` or by
    /// [`with_replay_store`](Self::with_replay_store).
    #[getter]
    fn has_replay_store(&self) -> bool {
        self.inner.verifier().replay_store().is_some()
    }

    /// This verifier with a replay store (`"memory"`, a file path,
    /// `redis://...`) in place of its own: every other setting is kept, and
    /// the store is shared by its RFC 9421 and Web Bot Auth verifications.
    fn with_replay_store(&self, py: Python<'_>, replay_store: &str) -> PyResult<PyVerifier> {
        self.inner
            .with_replay_store(replay_store)
            .map(|inner| PyVerifier { inner })
            .map_err(|e| e.into_pyerr(py))
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
        let max = self.inner.verifier().limits().max_jwt_bytes;
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
            self.inner
                .audit_delegation(&list, issuer, audience, deny_warnings)
        })?;
        report_object(py, &r)
    }

    fn __repr__(&self) -> String {
        format!(
            "<agentsig.Verifier algorithms={:?}>",
            self.inner
                .verifier()
                .algorithms()
                .iter()
                .map(Algorithm::jose_name)
                .collect::<Vec<_>>()
        )
    }
}

/// `authorities=[...]`: the site's own authorities, each `host[:port]`
/// (RFC 3986 section 3.2), at most the library's bound, checked by the
/// facade ([`facade::authorities_policy`]).
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
    facade::authorities_policy(&list).map_err(|e| e.into_pyerr(py))?;
    Ok(list)
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
