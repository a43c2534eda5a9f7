//! `SigningKey.fromPkcs11(uri)`: a signing key that never leaves a PKCS#11
//! token (an HSM, a cloud KMS's PKCS#11 library, SoftHSM), named by an
//! RFC 7512 `pkcs11:` URI. The library's [`agentsig::keys::pkcs11`] does
//! the work; this file binds it and maps its errors to `BadKey`.
//!
//! * The module is loaded at run time (`module-path` in the URI, else
//!   `AGENTSIG_PKCS11_MODULE`): the addon links no PKCS#11 library.
//! * The PIN comes only from the URI's `pin-source=file:...` or from
//!   `AGENTSIG_PKCS11_PIN`; a URI carrying `pin-value` (RFC 7512 section
//!   2.3) is refused with `BadKey`, since a PIN written into a URI ends up
//!   in logs, shell history and process listings.
//! * Loading talks to the token (a login, a test signature) and may block:
//!   `fromPkcs11Async` runs it on the libuv pool, as `signAsync` runs a
//!   token signature there, so the event loop never waits on the token.

use crate::{guarded, NativeKey, Out};
use agentsig::facade::keys::load_pkcs11;
use napi::bindgen_prelude::AsyncTask;
use napi::{Env, Task};
use napi_derive::napi;
use std::sync::Arc;

/// What a load needs: the URI and the options, loaded by the library
/// facade's [`load_pkcs11`] (its bounds and its errors).
pub struct Pkcs11Load {
    uri: String,
    alg: Option<String>,
    kid: Option<String>,
}

impl Pkcs11Load {
    fn new(uri: String, alg: Option<String>, kid: Option<String>) -> Pkcs11Load {
        Pkcs11Load { uri, alg, kid }
    }

    fn run(&self) -> Out<NativeKey> {
        let key = load_pkcs11(&self.uri, self.alg.as_deref(), self.kid.clone())?;
        Ok(NativeKey { key: Arc::new(key) })
    }
}

/// Load the private key a `pkcs11:` URI names (RFC 7512); `alg` is needed
/// for RSA keys (`PS512` or `RS256`) and checked for the others, `kid`
/// replaces the default (the RFC 7638 thumbprint of the public key read
/// from the token). Throws `BadKey` naming the cause.
#[napi]
pub fn pkcs11_key(
    uri: String,
    alg: Option<String>,
    kid: Option<String>,
) -> napi::Result<NativeKey> {
    guarded(|| Pkcs11Load::new(uri, alg, kid).run())
}

/// [`pkcs11_key`] on the libuv pool.
#[napi(ts_return_type = "Promise<NativeKey>")]
pub fn pkcs11_key_async(
    uri: String,
    alg: Option<String>,
    kid: Option<String>,
) -> napi::Result<AsyncTask<Pkcs11Load>> {
    Ok(AsyncTask::new(Pkcs11Load::new(uri, alg, kid)))
}

impl Task for Pkcs11Load {
    type Output = NativeKey;
    type JsValue = NativeKey;

    fn compute(&mut self) -> napi::Result<NativeKey> {
        guarded(|| self.run())
    }

    fn resolve(&mut self, _env: Env, output: NativeKey) -> napi::Result<NativeKey> {
        Ok(output)
    }
}
