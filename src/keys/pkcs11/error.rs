//! Why a token key could not be loaded, generated or used. A leaf: the
//! PKCS#11 return values (PKCS#11 v2.40 base specification section 3.6,
//! `CKR_*`) are mapped here to the causes a user can act on.

/// Why a `pkcs11:` key could not be loaded, generated or used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Pkcs11Error {
    /// The `pkcs11:` URI does not follow RFC 7512 (the detail says where).
    #[error("malformed pkcs11: URI (RFC 7512): {0}")]
    Uri(String),
    /// The URI carries `pin-value` (RFC 7512 section 2.3): refused, since a
    /// URI given on a command line is visible to every local user (`ps`,
    /// `/proc/PID/cmdline`) and kept in shell history.
    #[error("the pkcs11: URI carries pin-value: refused, a PIN on the command line is visible to other local users and kept in shell history; give pin-source=file:/path/to/pin-file in the URI or set AGENTSIG_PKCS11_PIN")]
    PinValueRefused,
    /// The token needs a login and no PIN was given.
    #[error("the token requires a PIN and none was given: add pin-source=file:/path/to/pin-file to the URI or set AGENTSIG_PKCS11_PIN")]
    PinRequired,
    /// The `pin-source` could not be read or is not a `file:` URI.
    #[error("cannot read the PIN from pin-source {source_uri}: {detail}")]
    PinSource {
        /// The pin-source value.
        source_uri: String,
        /// What went wrong.
        detail: String,
    },
    /// No module was named: neither `module-path` in the URI nor
    /// `AGENTSIG_PKCS11_MODULE`.
    #[error("no PKCS#11 module given: add module-path=/path/to/module.so to the URI or set AGENTSIG_PKCS11_MODULE")]
    ModuleRequired,
    /// The module could not be loaded: missing, not a shared library, or
    /// without `C_GetFunctionList` (PKCS#11 v2.40 section 5.2).
    #[error("{path} is not a usable PKCS#11 module: {detail}")]
    Module {
        /// The module path.
        path: String,
        /// What went wrong.
        detail: String,
    },
    /// No slot holds a token matching the URI's token attributes.
    #[error("no token matches {0}: check the token label (softhsm2-util --show-slots, pkcs11-tool --list-slots)")]
    TokenNotFound(String),
    /// More than one token matches the URI.
    #[error("{0} tokens match the URI: add token=, serial= or slot-id= to select one")]
    AmbiguousToken(usize),
    /// The token refused the PIN (`CKR_PIN_INCORRECT`).
    #[error("the token refused the PIN (CKR_PIN_INCORRECT): check the pin-source file or AGENTSIG_PKCS11_PIN")]
    WrongPin,
    /// The token's user PIN is locked (`CKR_PIN_LOCKED`) after too many
    /// failed logins.
    #[error(
        "the token's user PIN is locked (CKR_PIN_LOCKED): the security officer must unlock it"
    )]
    PinLocked,
    /// The token refused the PIN when a reconnect logged in again (it was
    /// changed while the process ran): not tried again, since each refused
    /// login counts toward the token's lockout.
    #[error("the token's PIN no longer works ({0}); not tried again so as not to lock the token: fix the PIN source and restart")]
    PinNotRetried(String),
    /// No private key object matches the URI's object attributes.
    #[error("no private key on the token matches {0}: check object= and id= (pkcs11-tool --list-objects --login)")]
    ObjectNotFound(String),
    /// More than one private key object matches the URI.
    #[error("{0} private keys on the token match the URI: add object= or id= to select one")]
    AmbiguousObject(usize),
    /// The key is of a type or curve agentsig does not sign with.
    #[error("unsupported token key: {0}")]
    Unsupported(String),
    /// An object with the URI's label or id already exists (keygen).
    #[error("the token already holds a key matching {0}: choose another object= or id=, or delete the old one")]
    ObjectExists(String),
    /// The token is not reachable now (removed, restarted, sessions lost);
    /// nothing was signed. Later calls reconnect.
    #[error("the token is unavailable, nothing was signed: {0}")]
    Unavailable(String),
    /// A reconnect to the token did not return within the reconnect timeout
    /// (a hung token or library), or an earlier one is still stuck: nothing
    /// was signed. A later call reconnects once the stuck call returns.
    #[error("the token is not answering, nothing was signed: {0}")]
    TimedOut(String),
    /// The key on the token no longer has the public key it had when it was
    /// loaded (the token was re-provisioned): refused, so a signature never
    /// carries the wrong `kid`.
    #[error("the key at the URI changed since it was loaded (public key thumbprint {loaded} is now {now}): restart to load the new key")]
    KeyChanged {
        /// The thumbprint at load.
        loaded: String,
        /// The thumbprint found now.
        now: String,
    },
    /// Any other PKCS#11 failure, with the function and its `CKR_*` value.
    #[error("PKCS#11 call failed: {0}")]
    Device(String),
}
