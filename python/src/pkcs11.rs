//! `SigningKey.from_pkcs11(uri)`: a signing key that never leaves a PKCS#11
//! token (an HSM, a cloud KMS's PKCS#11 library, SoftHSM), named by an
//! RFC 7512 `pkcs11:` URI. The library's [`agentsig::keys::pkcs11`] does
//! the work; this file binds it and maps its errors to `BadKey`.
//!
//! * The module is loaded at run time (`module-path` in the URI, else
//!   `AGENTSIG_PKCS11_MODULE`): the extension links no PKCS#11 library.
//! * The PIN comes only from the URI's `pin-source=file:...` or from
//!   `AGENTSIG_PKCS11_PIN`; a URI carrying `pin-value` (RFC 7512 section
//!   2.3) is refused with `BadKey`, since a PIN written into a URI ends up
//!   in logs, shell history and process listings.
//! * Loading and signing talk to the token and may block: both run without
//!   the GIL, so other Python threads keep running meanwhile.

use crate::{str_arg, IntoPyErr, PySigningKey};
use agentsig::facade::keys::load_pkcs11;
use agentsig::keys::pkcs11::MAX_URI;
use pyo3::prelude::*;
use std::sync::Arc;

/// Load the private key a `pkcs11:` URI names (RFC 7512). `alg` is needed
/// for RSA keys (`PS512` or `RS256`) and checked for the others; `kid`
/// replaces the default, the RFC 7638 thumbprint of the public key read
/// from the token. Raises `BadKey` naming the cause: a malformed URI, a
/// `pin-value`, no module or a file that is not one, no PIN or a wrong
/// one, no such token or key.
#[pyfunction]
#[pyo3(signature = (uri, *, alg = None, kid = None))]
fn from_pkcs11(
    py: Python<'_>,
    uri: &Bound<'_, PyAny>,
    alg: Option<&str>,
    kid: Option<String>,
) -> PyResult<PySigningKey> {
    let uri = str_arg(py, uri, "uri", MAX_URI)?;
    let key = py
        .detach(|| load_pkcs11(&uri, alg, kid))
        .map_err(|e| e.into_pyerr(py))?;
    Ok(PySigningKey { key: Arc::new(key) })
}

/// Attach `from_pkcs11` to `SigningKey` as a static method (the class's
/// other constructors are in `lib.rs`).
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let f = wrap_pyfunction!(from_pkcs11, m)?;
    let sm = py
        .import("builtins")?
        .getattr("staticmethod")?
        .call1((f,))?;
    m.getattr("SigningKey")?.setattr("from_pkcs11", sm)
}
