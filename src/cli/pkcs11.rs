//! `agentsig keygen --pkcs11 URI`: the command-line side of a key pair
//! generated in a PKCS#11 token (the rules live in `agentsig::keys::pkcs11`).

use super::CliError;
use agentsig::{Algorithm, SigningKey};
use std::path::PathBuf;

/// Generate a key pair in the token the URI names, after checking that
/// none of the public files to write exists: a refused write must not
/// leave a new key in the token that no file publishes.
pub fn keygen(uri: &str, alg: Algorithm, targets: &[PathBuf]) -> Result<SigningKey, CliError> {
    for p in targets {
        if p.exists() {
            return Err(CliError::unwritable(format!(
                "{}: already exists; refusing to overwrite (no key was generated)",
                p.display()
            )));
        }
    }
    generate(uri, alg)
}

#[cfg(feature = "pkcs11")]
fn generate(uri: &str, alg: Algorithm) -> Result<SigningKey, CliError> {
    agentsig::keys::pkcs11::generate(uri, alg, &agentsig::keys::LoadOptions::default())
        .map_err(|e| CliError::key(format!("pkcs11 keygen: {e}")))
}

#[cfg(not(feature = "pkcs11"))]
fn generate(_uri: &str, _alg: Algorithm) -> Result<SigningKey, CliError> {
    Err(CliError::key(
        "pkcs11 keygen: this agentsig was built without the `pkcs11` feature; rebuild with --features pkcs11",
    ))
}
