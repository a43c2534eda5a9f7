//! Signing keys held in a PKCS#11 token (an HSM, a cloud KMS's PKCS#11
//! library, SoftHSM), named by an RFC 7512 `pkcs11:` URI. Feature `pkcs11`.
//!
//! The private key never leaves the token: [`load`] finds it, reads its
//! public half from the token (so the `kid` is that key's RFC 7638
//! thumbprint) and returns an ordinary [`SigningKey`] whose
//! [`sign`](SigningKey::sign) asks the token. Nothing above this module
//! knows where a key lives.
//!
//! * The module is loaded at run time (`dlopen`, through `cryptoki`): from
//!   the URI's `module-path` (RFC 7512 section 2.3), else
//!   [`MODULE_ENV`]. Nothing is linked at build time.
//! * The PIN comes from the URI's `pin-source=file:...` (a regular file only
//!   its owner can read or write, opened without blocking), else [`PIN_ENV`]
//!   (read once per process);
//!   a URI carrying `pin-value` is refused ([`Pkcs11Error::PinValueRefused`]).
//! * Mechanisms (PKCS#11 v3.0 Current Mechanisms, sections 2.3, 2.3.6 and
//!   2.1): ECDSA P-256/P-384 as `CKM_ECDSA` over a hash computed here (the
//!   token returns `r || s`, the JWS and RFC 9421 form); Ed25519 as
//!   `CKM_EDDSA`; RSA-PSS SHA-512 as `CKM_SHA512_RSA_PKCS_PSS` (MGF1-SHA-512,
//!   64-byte salt, RFC 7518 section 3.5); RSASSA-PKCS1-v1_5 SHA-256 as
//!   `CKM_SHA256_RSA_PKCS`.
//! * Sessions: one `C_Initialize` per module and one login per token per
//!   process (a login holds for every session of the application, PKCS#11
//!   v2.40 section 5.6 `C_Login`); signing takes a session from a pool, so
//!   threads sign in parallel. When the token goes away (sessions closed,
//!   device removed, library finalized, logged out) the pool is dropped and
//!   the next call reconnects: find the token, log in, find the key, check
//!   its public key is still the one loaded. Meanwhile every call fails
//!   ([`Pkcs11Error::Unavailable`]): nothing is ever returned unsigned. The
//!   reconnect runs on a helper thread, one at a time, and signers wait for
//!   it at most [`RECONNECT_TIMEOUT`]; a token that hangs fails them with
//!   [`Pkcs11Error::TimedOut`], at once while the stuck call has not
//!   returned. A
//!   PIN the token refuses at a reconnect is not tried again
//!   ([`Pkcs11Error::PinNotRetried`]): each refused login counts toward the
//!   token's lockout.
//! * An RSA or Ed25519 signature is verified before it is returned: a
//!   faulty RSA-CRT signature reveals the private key (Boneh, DeMillo and
//!   Lipton, "On the Importance of Checking Cryptographic Protocols for
//!   Faults", 1997), and so can a faulty deterministic signature, whose
//!   nonce is the same for a message signed twice (Ed25519, RFC 8032
//!   section 5.1.6; Ambrose et al., "Differential Attacks on Deterministic
//!   Signatures", CT-RSA 2018). The check costs one verification per
//!   signature (docs/benchmarks.md, "Signing through a PKCS#11 token").

pub(crate) mod error;
mod reconnect;
mod uri;

pub use error::Pkcs11Error;
pub use reconnect::RECONNECT_TIMEOUT;
pub use uri::{Pkcs11Uri, MAX_URI};

use super::{KeyError, LoadOptions, SigningKey, VerifyingKey};
use crate::alg::Algorithm;
use cryptoki::context::{CInitializeArgs, CInitializeFlags, Pkcs11};
use cryptoki::error::{Error as CkError, RvError};
use cryptoki::mechanism::eddsa::{EddsaParams, EddsaSignatureScheme};
use cryptoki::mechanism::rsa::{PkcsMgfType, PkcsPssParams};
use cryptoki::mechanism::{Mechanism, MechanismType};
use cryptoki::object::{Attribute, AttributeType, KeyType, ObjectClass, ObjectHandle};
use cryptoki::session::{Session, UserType};
use cryptoki::slot::Slot;
use cryptoki::types::AuthPin;
use sha2::Digest;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// The environment variable holding the PIN when the URI has no
/// `pin-source`.
pub const PIN_ENV: &str = "AGENTSIG_PKCS11_PIN";
/// The environment variable naming the module when the URI has no
/// `module-path`.
pub const MODULE_ENV: &str = "AGENTSIG_PKCS11_MODULE";
/// Idle sessions kept open per key; more threads open more sessions, and
/// those beyond this are closed when returned.
pub const MAX_IDLE_SESSIONS: usize = 16;
/// The largest PIN file read, in bytes (PINs are short; PKCS#11 tokens
/// state `ulMaxPinLen`, typically 255 or less).
const MAX_PIN_FILE: u64 = 1024;
/// The message signed at load to check that the private key and the public
/// key read beside it are a pair.
const PAIR_CHECK: &[u8] = b"agentsig pkcs11 key pair check";

/// DER of the P-256 curve OID 1.2.840.10045.3.1.7 (RFC 5480 section 2.1.1.1),
/// the `CKA_EC_PARAMS` of a P-256 key.
const OID_P256: &[u8] = &[0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
/// DER of the P-384 curve OID 1.3.132.0.34 (RFC 5480 section 2.1.1.1).
const OID_P384: &[u8] = &[0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22];
/// DER of the Ed25519 OID 1.3.101.112 (RFC 8410 section 3).
const OID_ED25519: &[u8] = &[0x06, 0x03, 0x2b, 0x65, 0x70];
/// DER PrintableString "edwards25519", the other `CKA_EC_PARAMS` form PKCS#11
/// v3.0 (Current Mechanisms section 2.3.5) allows for Ed25519.
const NAME_ED25519: &[u8] = b"\x13\x0cedwards25519";

/// What the token says about a private key's protection (PKCS#11 v2.40
/// section 4.9, Table 36).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenKeyInfo {
    /// `CKA_LABEL`, as UTF-8 (lossy).
    pub label: String,
    /// `CKA_ID`.
    pub id: Vec<u8>,
    /// `CKA_SENSITIVE`: the key's secret value cannot be read.
    pub sensitive: bool,
    /// `CKA_EXTRACTABLE`: the key can be wrapped out of the token.
    pub extractable: bool,
    /// `CKA_ALWAYS_SENSITIVE`: sensitive since it was made.
    pub always_sensitive: bool,
    /// `CKA_NEVER_EXTRACTABLE`: never extractable since it was made.
    pub never_extractable: bool,
}

/// A private key on a token, with its sessions. Held by a [`SigningKey`].
pub struct TokenKey {
    ctx: Pkcs11,
    uri: Pkcs11Uri,
    pin: Arc<Option<AuthPin>>,
    alg: Algorithm,
    public: VerifyingKey,
    info: TokenKeyInfo,
    state: Arc<Mutex<State>>,
    reconnect: reconnect::Reconnect,
    /// Signatures the token made (C_Sign calls that succeeded).
    signatures: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for TokenKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenKey")
            .field("alg", &self.alg)
            .field("key", &self.uri.describe())
            .finish_non_exhaustive()
    }
}

/// The connection: the slot and key handle found at the last connect, the
/// idle sessions, and a generation that every reset advances (a session
/// checked out before a reset is closed, not pooled, when it comes back).
#[derive(Default)]
struct State {
    conn: Option<(Slot, ObjectHandle)>,
    idle: Vec<Session>,
    generation: u64,
    /// Sessions opened so far, for tests and the bench: the pool reuses them.
    opened: u64,
    /// C_Login calls made by reconnects.
    logins: u64,
    /// The token refused the PIN at a reconnect: never tried again, since
    /// every refused login counts toward the token's lockout
    /// (CKR_PIN_LOCKED, PKCS#11 v2.40 section 5.6 `C_Login`). Survives
    /// resets.
    pin_refused: bool,
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    // A panic while holding the lock leaves only sessions and handles,
    // which a reset rebuilds: the poisoned state is still usable.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The `CKR_*` values after which a reconnect can succeed: the session or
/// the login is gone, or the token or the library went away and may come
/// back (PKCS#11 v2.40 section 5.1, return values).
fn transient(e: &CkError) -> bool {
    matches!(
        e,
        CkError::Pkcs11(
            RvError::SessionHandleInvalid
                | RvError::SessionClosed
                | RvError::DeviceRemoved
                | RvError::DeviceError
                | RvError::TokenNotPresent
                | RvError::TokenNotRecognized
                | RvError::UserNotLoggedIn
                | RvError::KeyHandleInvalid
                | RvError::ObjectHandleInvalid
                | RvError::CryptokiNotInitialized
                | RvError::SlotIdInvalid,
            _
        )
    )
}

fn ck(e: CkError) -> Pkcs11Error {
    match &e {
        CkError::Pkcs11(RvError::PinIncorrect, _) => Pkcs11Error::WrongPin,
        CkError::Pkcs11(RvError::PinLocked, _) => Pkcs11Error::PinLocked,
        _ if transient(&e) => Pkcs11Error::Unavailable(e.to_string()),
        _ => Pkcs11Error::Device(e.to_string()),
    }
}

/// One context per module path per process: `C_Initialize` once
/// (PKCS#11 v2.40 section 5.4: a second call fails with
/// `CKR_CRYPTOKI_ALREADY_INITIALIZED`, taken here as done).
fn module(path: &str) -> Result<Pkcs11, Pkcs11Error> {
    static MODULES: OnceLock<Mutex<HashMap<String, Pkcs11>>> = OnceLock::new();
    let mut m = MODULES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(c) = m.get(path) {
        return Ok(c.clone());
    }
    let err = |detail: String| Pkcs11Error::Module {
        path: path.to_owned(),
        detail,
    };
    // An absolute path only: a bare name would be searched for along the
    // loader's library path, and loading a module runs its code.
    if !std::path::Path::new(path).is_absolute() {
        return Err(err("module-path must be an absolute path".into()));
    }
    if !std::path::Path::new(path).is_file() {
        return Err(err("no such file".into()));
    }
    let ctx = Pkcs11::new(path).map_err(|e| match e {
        CkError::LibraryLoading(e) => err(format!("cannot load it as a shared library: {e}")),
        CkError::MissingSymbol(s) => err(format!("it has no {s}: not a PKCS#11 module")),
        other => err(other.to_string()),
    })?;
    initialize(&ctx).map_err(|e| err(format!("C_Initialize failed: {e}")))?;
    m.insert(path.to_owned(), ctx.clone());
    Ok(ctx)
}

fn initialize(ctx: &Pkcs11) -> Result<(), CkError> {
    match ctx.initialize(CInitializeArgs::new(CInitializeFlags::OS_LOCKING_OK)) {
        Ok(()) | Err(CkError::Pkcs11(RvError::CryptokiAlreadyInitialized, _)) => Ok(()),
        Err(e) => Err(e),
    }
}

/// The module path: the URI's `module-path`, else [`MODULE_ENV`].
fn module_path(uri: &Pkcs11Uri) -> Result<String, Pkcs11Error> {
    if let Some(p) = &uri.module_path {
        return Ok(p.clone());
    }
    if let Some(name) = &uri.module_name {
        return Err(Pkcs11Error::Uri(format!(
            "module-name={name}: agentsig loads a module by its path only; give module-path=/path/to/{name}.so or set {MODULE_ENV}"
        )));
    }
    match std::env::var(MODULE_ENV) {
        Ok(p) if !p.is_empty() => Ok(p),
        _ => Err(Pkcs11Error::ModuleRequired),
    }
}

/// The PIN: from the URI's `pin-source` (a `file:` URI, RFC 8089), else
/// [`PIN_ENV`], else none. One trailing line end is not part of it.
///
/// The file must be a regular file only its owner can read or write, and
/// is opened without blocking (a FIFO at the path is refused, not waited
/// on). [`PIN_ENV`] is read once per process: every later load (a second
/// key, a reconnect) uses that value, whatever the environment says since.
fn read_pin(uri: &Pkcs11Uri) -> Result<Option<AuthPin>, Pkcs11Error> {
    let Some(src) = &uri.pin_source else {
        static ENV_PIN: OnceLock<Option<zeroize::Zeroizing<String>>> = OnceLock::new();
        let pin = ENV_PIN.get_or_init(|| std::env::var(PIN_ENV).ok().map(zeroize::Zeroizing::new));
        return Ok(pin.as_ref().map(|p| AuthPin::from(p.as_str().to_owned())));
    };
    let fail = |detail: String| Pkcs11Error::PinSource {
        source_uri: src.clone(),
        detail,
    };
    // file:/abs, file:///abs, file://localhost/abs (RFC 8089 section 2).
    let path = src
        .strip_prefix("file://localhost")
        .or_else(|| src.strip_prefix("file://"))
        .or_else(|| src.strip_prefix("file:"))
        .ok_or_else(|| fail("only file: URIs are supported (pin-source=file:/path)".into()))?;
    if !path.starts_with('/') {
        return Err(fail("the file: URI must hold an absolute path".into()));
    }
    use super::secret_file::{read_private, SecretFileError};
    let buf = read_private(std::path::Path::new(path), MAX_PIN_FILE).map_err(|e| match e {
        SecretFileError::Io(m) => fail(m),
        SecretFileError::NotPrivate(why) => fail(format!(
            "{why}: the PIN file must be a regular file only its owner can read and write (chmod 600)"
        )),
    })?;
    let mut end = buf.len();
    if buf[..end].ends_with(b"\n") {
        end -= 1;
    }
    if buf[..end].ends_with(b"\r") {
        end -= 1;
    }
    let pin = std::str::from_utf8(&buf[..end])
        .map_err(|_| fail("the PIN is not UTF-8".into()))?
        .to_owned();
    Ok(Some(AuthPin::from(pin)))
}

/// The one slot whose token matches the URI's token, slot and library
/// attributes (RFC 7512 section 3.3: absent attributes match anything).
fn find_slot(ctx: &Pkcs11, uri: &Pkcs11Uri) -> Result<Slot, CkOr> {
    let lib = ctx.get_library_info()?;
    let eq = |want: &Option<String>, have: &str| want.as_deref().is_none_or(|w| w == have);
    if !eq(&uri.library_manufacturer, lib.manufacturer_id())
        || !eq(&uri.library_description, lib.library_description())
        || uri.library_version.is_some_and(|(maj, min)| {
            let v = lib.library_version();
            (v.major(), v.minor()) != (maj, min)
        })
    {
        return Err(Pkcs11Error::TokenNotFound(format!(
            "{} (the module's library attributes differ)",
            uri.describe()
        ))
        .into());
    }
    let mut found = Vec::new();
    for slot in ctx.get_slots_with_token()? {
        if uri.slot_id.is_some_and(|id| id != slot.id()) {
            continue;
        }
        if uri.slot_description.is_some() || uri.slot_manufacturer.is_some() {
            let si = ctx.get_slot_info(slot)?;
            if !eq(&uri.slot_description, si.slot_description())
                || !eq(&uri.slot_manufacturer, si.manufacturer_id())
            {
                continue;
            }
        }
        let ti = ctx.get_token_info(slot)?;
        if eq(&uri.token, ti.label())
            && eq(&uri.manufacturer, ti.manufacturer_id())
            && eq(&uri.model, ti.model())
            && eq(&uri.serial, ti.serial_number())
        {
            found.push(slot);
        }
    }
    match found.len() {
        1 => Ok(found[0]),
        0 => Err(Pkcs11Error::TokenNotFound(uri.describe()).into()),
        n => Err(Pkcs11Error::AmbiguousToken(n).into()),
    }
}

/// A PKCS#11 failure not yet classified, or an error already classified:
/// the reconnect logic needs the raw `CKR_*` value.
enum CkOr {
    Ck(CkError),
    Err(Pkcs11Error),
}

impl From<CkError> for CkOr {
    fn from(e: CkError) -> Self {
        CkOr::Ck(e)
    }
}

impl From<Pkcs11Error> for CkOr {
    fn from(e: Pkcs11Error) -> Self {
        CkOr::Err(e)
    }
}

impl From<CkOr> for Pkcs11Error {
    fn from(e: CkOr) -> Self {
        match e {
            CkOr::Ck(e) => ck(e),
            CkOr::Err(e) => e,
        }
    }
}

/// Log in, once for the application (a second login answers
/// `CKR_USER_ALREADY_LOGGED_IN`, taken as done).
fn login(ctx: &Pkcs11, slot: Slot, session: &Session, pin: Option<&AuthPin>) -> Result<(), CkOr> {
    let ti = ctx.get_token_info(slot)?;
    if !ti.login_required() {
        return Ok(());
    }
    let pin = pin.ok_or(Pkcs11Error::PinRequired)?;
    match session.login(UserType::User, Some(pin)) {
        Ok(()) | Err(CkError::Pkcs11(RvError::UserAlreadyLoggedIn, _)) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// The template selecting the URI's objects of `class`.
fn template(uri: &Pkcs11Uri, class: ObjectClass) -> Vec<Attribute> {
    let mut t = vec![Attribute::Class(class)];
    if let Some(l) = &uri.object {
        t.push(Attribute::Label(l.as_bytes().to_vec()));
    }
    if let Some(id) = &uri.id {
        t.push(Attribute::Id(id.clone()));
    }
    t
}

fn find_private(session: &Session, uri: &Pkcs11Uri) -> Result<ObjectHandle, CkOr> {
    let found = session.find_objects(&template(uri, ObjectClass::PRIVATE_KEY))?;
    match found.len() {
        1 => Ok(found[0]),
        0 => Err(Pkcs11Error::ObjectNotFound(uri.describe()).into()),
        n => Err(Pkcs11Error::AmbiguousObject(n).into()),
    }
}

/// The content of a DER OCTET STRING, or `b` itself when it is not one of
/// `raw_len` bytes' wrapping (`CKA_EC_POINT` is DER-wrapped per PKCS#11
/// v2.40 Current Mechanisms section 2.3.3; some tokens give the raw point).
fn unwrap_octets(b: &[u8], raw_len: usize) -> &[u8] {
    if b.len() == raw_len {
        return b;
    }
    match b {
        [0x04, n, rest @ ..] if usize::from(*n) == rest.len() && *n < 0x80 => rest,
        [0x04, 0x81, n, rest @ ..] if usize::from(*n) == rest.len() => rest,
        _ => b,
    }
}

fn attr_bytes(attrs: &[Attribute], want: AttributeType) -> Option<Vec<u8>> {
    attrs.iter().find_map(|a| match (a, want) {
        (Attribute::EcParams(v), AttributeType::EcParams)
        | (Attribute::EcPoint(v), AttributeType::EcPoint)
        | (Attribute::Modulus(v), AttributeType::Modulus)
        | (Attribute::PublicExponent(v), AttributeType::PublicExponent)
        | (Attribute::Label(v), AttributeType::Label)
        | (Attribute::Id(v), AttributeType::Id) => Some(v.clone()),
        _ => None,
    })
}

fn attr_bool(attrs: &[Attribute], want: AttributeType) -> Option<bool> {
    attrs.iter().find_map(|a| match (a, want) {
        (Attribute::Sensitive(v), AttributeType::Sensitive)
        | (Attribute::Extractable(v), AttributeType::Extractable)
        | (Attribute::AlwaysSensitive(v), AttributeType::AlwaysSensitive)
        | (Attribute::NeverExtractable(v), AttributeType::NeverExtractable) => Some(*v),
        _ => None,
    })
}

/// The algorithm and the public key of the private key `key`: the curve
/// from its `CKA_EC_PARAMS`, the point from the public key object with the
/// same `CKA_ID` (or label); RSA's modulus and exponent from the private
/// key object itself, where PKCS#11 v2.40 section 2.1.3 keeps them.
fn read_public(
    session: &Session,
    key: ObjectHandle,
    hint: Option<Algorithm>,
) -> Result<(VerifyingKey, TokenKeyInfo), CkOr> {
    let attrs = session.get_attributes(
        key,
        &[
            AttributeType::KeyType,
            AttributeType::Id,
            AttributeType::Label,
            AttributeType::Sensitive,
            AttributeType::Extractable,
            AttributeType::AlwaysSensitive,
            AttributeType::NeverExtractable,
        ],
    )?;
    let key_type = attrs.iter().find_map(|a| match a {
        Attribute::KeyType(t) => Some(*t),
        _ => None,
    });
    let id = attr_bytes(&attrs, AttributeType::Id).unwrap_or_default();
    let label = attr_bytes(&attrs, AttributeType::Label).unwrap_or_default();
    let info = TokenKeyInfo {
        label: String::from_utf8_lossy(&label).into_owned(),
        id: id.clone(),
        sensitive: attr_bool(&attrs, AttributeType::Sensitive).unwrap_or(false),
        extractable: attr_bool(&attrs, AttributeType::Extractable).unwrap_or(true),
        always_sensitive: attr_bool(&attrs, AttributeType::AlwaysSensitive).unwrap_or(false),
        never_extractable: attr_bool(&attrs, AttributeType::NeverExtractable).unwrap_or(false),
    };
    let unsupported = |m: String| CkOr::Err(Pkcs11Error::Unsupported(m));
    let public = match key_type {
        Some(t) if t == KeyType::RSA => {
            let a = session.get_attributes(
                key,
                &[AttributeType::Modulus, AttributeType::PublicExponent],
            )?;
            let (Some(n), Some(e)) = (
                attr_bytes(&a, AttributeType::Modulus),
                attr_bytes(&a, AttributeType::PublicExponent),
            ) else {
                return Err(unsupported(
                    "the RSA private key does not show its modulus and public exponent".into(),
                ));
            };
            let alg = hint.ok_or(CkOr::Err(Pkcs11Error::Unsupported(
                "an RSA key serves rsa-pss-sha512 and rsa-v1_5-sha256: give the algorithm (--alg)"
                    .into(),
            )))?;
            VerifyingKey::from_rsa_components(alg, &n, &e)
                .map_err(|e| unsupported(format!("the token's RSA public key: {e}")))?
        }
        Some(t) if t == KeyType::EC || t == KeyType::EC_EDWARDS => {
            let a = session.get_attributes(key, &[AttributeType::EcParams])?;
            let params = attr_bytes(&a, AttributeType::EcParams).unwrap_or_default();
            let (alg, raw_len) = match params.as_slice() {
                p if p == OID_P256 => (Algorithm::EcdsaP256Sha256, 65),
                p if p == OID_P384 => (Algorithm::EcdsaP384Sha384, 97),
                p if p == OID_ED25519 || p == NAME_ED25519 => (Algorithm::Ed25519, 32),
                _ => {
                    return Err(unsupported(
                        "the key's curve is none of P-256, P-384, Ed25519".into(),
                    ))
                }
            };
            // The public key object of the pair: the same CKA_ID (PKCS#11
            // v2.40 section 4.7: the ID links a key pair), else the label.
            let mut t = vec![Attribute::Class(ObjectClass::PUBLIC_KEY)];
            if !id.is_empty() {
                t.push(Attribute::Id(id.clone()));
            } else {
                t.push(Attribute::Label(label.clone()));
            }
            let pubs = session.find_objects(&t)?;
            let [pk] = pubs.as_slice() else {
                return Err(unsupported(format!(
                    "{} public key objects share the private key's CKA_ID; exactly one is needed to read the public key",
                    pubs.len()
                )));
            };
            let a = session.get_attributes(*pk, &[AttributeType::EcPoint])?;
            let point = attr_bytes(&a, AttributeType::EcPoint).unwrap_or_default();
            let point = unwrap_octets(&point, raw_len);
            let vk = if alg == Algorithm::Ed25519 {
                VerifyingKey::from_ed25519_bytes(point)
            } else {
                VerifyingKey::from_sec1_point(alg, point)
            };
            vk.map_err(|e| unsupported(format!("the token's public key: {e}")))?
        }
        _ => {
            return Err(unsupported(
                "the key is not an RSA, EC or EC Edwards key".into(),
            ))
        }
    };
    if let Some(h) = hint {
        if h != public.algorithm() {
            return Err(unsupported(format!(
                "the key is for {} but {h} was requested",
                public.algorithm()
            )));
        }
    }
    Ok((public, info))
}

/// The mechanism and the data the token signs for `alg`.
fn mechanism(alg: Algorithm, msg: &[u8]) -> Result<(Mechanism<'static>, Vec<u8>), Pkcs11Error> {
    Ok(match alg {
        // CKM_ECDSA signs a hash computed by the caller (Current Mechanisms
        // section 2.3.6); JWS ES256/ES384 hash with SHA-256/SHA-384 (RFC
        // 7518 section 3.4), as do RFC 9421 sections 3.3.4 and 3.3.5.
        Algorithm::EcdsaP256Sha256 => (Mechanism::Ecdsa, sha2::Sha256::digest(msg).to_vec()),
        Algorithm::EcdsaP384Sha384 => (Mechanism::Ecdsa, sha2::Sha384::digest(msg).to_vec()),
        // Pure Ed25519 (RFC 8032 section 5.1): CKM_EDDSA without parameters.
        Algorithm::Ed25519 => (
            Mechanism::Eddsa(EddsaParams::new(EddsaSignatureScheme::Pure)),
            msg.to_vec(),
        ),
        // RFC 7518 section 3.5 and RFC 9421 section 3.3.1: MGF1 with SHA-512,
        // a 64-byte salt.
        Algorithm::RsaPssSha512 => (
            Mechanism::Sha512RsaPkcsPss(PkcsPssParams {
                hash_alg: MechanismType::SHA512,
                mgf: PkcsMgfType::MGF1_SHA512,
                s_len: 64u64.into(),
            }),
            msg.to_vec(),
        ),
        Algorithm::RsaV15Sha256 => (Mechanism::Sha256RsaPkcs, msg.to_vec()),
        other => {
            return Err(Pkcs11Error::Unsupported(format!(
                "{other} is not signed through PKCS#11"
            )))
        }
    })
}

/// What a reconnect needs, owned: it runs on a helper thread that may
/// outlive the signer waiting for it (a hung token).
struct Target {
    ctx: Pkcs11,
    uri: Pkcs11Uri,
    pin: Arc<Option<AuthPin>>,
    alg: Algorithm,
    thumbprint: String,
    state: Arc<Mutex<State>>,
}

impl Target {
    /// Find the slot, log in, find the key and check its public key, then
    /// pool the session: the state after a (re)connect.
    fn connect(self) -> Result<(), Pkcs11Error> {
        let slot = match find_slot(&self.ctx, &self.uri) {
            Err(CkOr::Ck(CkError::Pkcs11(RvError::CryptokiNotInitialized, _))) => {
                // The library was finalized (a restarted HSM client):
                // initialize it again, then look again.
                initialize(&self.ctx).map_err(ck)?;
                find_slot(&self.ctx, &self.uri)?
            }
            other => other?,
        };
        let session = self.ctx.open_ro_session(slot).map_err(ck)?;
        {
            let mut st = lock(&self.state);
            st.opened += 1;
            st.logins += 1;
        }
        match login(&self.ctx, slot, &session, self.pin.as_ref().as_ref()) {
            Err(CkOr::Ck(CkError::Pkcs11(RvError::PinIncorrect | RvError::PinLocked, f))) => {
                lock(&self.state).pin_refused = true;
                return Err(Pkcs11Error::PinNotRetried(format!(
                    "{f}: the token refused the PIN"
                )));
            }
            other => other?,
        }
        let key = find_private(&session, &self.uri)?;
        let (public, _) = read_public(&session, key, Some(self.alg))?;
        if public.thumbprint() != self.thumbprint {
            return Err(Pkcs11Error::KeyChanged {
                loaded: self.thumbprint,
                now: public.thumbprint(),
            });
        }
        let mut st = lock(&self.state);
        st.conn = Some((slot, key));
        st.idle.push(session);
        Ok(())
    }
}

impl TokenKey {
    /// The algorithm the key signs with.
    pub fn algorithm(&self) -> Algorithm {
        self.alg
    }

    /// The key's protection attributes as read at load.
    pub fn info(&self) -> &TokenKeyInfo {
        &self.info
    }

    /// How many sessions this key has opened so far (the pool reuses them;
    /// a reconnect opens new ones).
    pub fn sessions_opened(&self) -> u64 {
        lock(&self.state).opened
    }

    /// How many signatures the token has made for this key (the pair
    /// check at load included): what a signature cache saves is counted
    /// here.
    pub fn token_signatures(&self) -> u64 {
        self.signatures.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many times a reconnect has called `C_Login` (the login at load
    /// not counted).
    pub fn login_attempts(&self) -> u64 {
        lock(&self.state).logins
    }

    /// How many reconnects this key has started (each on a helper thread,
    /// one at a time).
    pub fn reconnects(&self) -> u64 {
        self.reconnect.attempts()
    }

    /// A pooled session and the key handle, and the generation they belong
    /// to, when connected.
    fn pooled(&self) -> Result<Option<(Session, ObjectHandle, u64)>, CkOr> {
        let mut st = lock(&self.state);
        let Some((slot, key)) = st.conn else {
            return Ok(None);
        };
        let s = match st.idle.pop() {
            Some(s) => s,
            None => {
                let s = self.ctx.open_ro_session(slot)?;
                st.opened += 1;
                s
            }
        };
        Ok(Some((s, key, st.generation)))
    }

    /// A session and the key handle, and the generation they belong to:
    /// reconnects first when not connected, waiting for it at most the
    /// reconnect timeout.
    fn checkout(&self) -> Result<(Session, ObjectHandle, u64), CkOr> {
        if let Some(c) = self.pooled()? {
            return Ok(c);
        }
        if lock(&self.state).pin_refused {
            return Err(CkOr::Err(Pkcs11Error::PinNotRetried(
                "the token refused the PIN at an earlier reconnect".into(),
            )));
        }
        let target = Target {
            ctx: self.ctx.clone(),
            uri: self.uri.clone(),
            pin: self.pin.clone(),
            alg: self.alg,
            thumbprint: self.public.thumbprint(),
            state: self.state.clone(),
        };
        self.reconnect
            .run(move || target.connect())
            .map_err(CkOr::Err)?;
        self.pooled()?.ok_or(CkOr::Err(Pkcs11Error::Unavailable(
            "the token went away again after reconnecting".into(),
        )))
    }

    fn checkin(&self, s: Session, generation: u64) {
        let mut st = lock(&self.state);
        if st.generation == generation && st.idle.len() < MAX_IDLE_SESSIONS {
            st.idle.push(s);
        }
    }

    /// Forget the connection (once per generation: threads failing on the
    /// same lost token reset it once).
    fn reset(&self, generation: u64) {
        let mut st = lock(&self.state);
        if st.generation == generation {
            st.idle.clear();
            st.conn = None;
            st.generation += 1;
        }
    }

    /// Sign `msg`: the token's signature in the JWS / RFC 9421 form.
    ///
    /// # Errors
    /// [`Pkcs11Error::Unavailable`] when the token cannot be reached even
    /// after reconnecting (nothing is signed); the other variants when the
    /// reconnect finds something wrong (PIN, key changed).
    pub fn sign(&self, msg: &[u8]) -> Result<Vec<u8>, Pkcs11Error> {
        let (mech, data) = mechanism(self.alg, msg)?;
        let mut last = None;
        // Twice at most: the second try after a reconnect.
        for _ in 0..2 {
            let (session, key, generation) = match self.checkout() {
                Ok(c) => c,
                Err(CkOr::Ck(e)) if transient(&e) => {
                    self.reset(lock(&self.state).generation);
                    last = Some(ck(e));
                    continue;
                }
                Err(CkOr::Err(e @ Pkcs11Error::Unavailable(_))) => {
                    // The token is not back yet: one more reconnect.
                    self.reset(lock(&self.state).generation);
                    last = Some(e);
                    continue;
                }
                Err(e) => {
                    // Not connected: the next call starts from scratch.
                    let g = lock(&self.state).generation;
                    self.reset(g);
                    return Err(e.into());
                }
            };
            match session.sign(&mech, key, &data) {
                Ok(sig) => {
                    self.checkin(session, generation);
                    self.signatures
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    return self.check(msg, sig);
                }
                Err(e) if transient(&e) => {
                    drop(session);
                    self.reset(generation);
                    last = Some(ck(e));
                }
                Err(e) => {
                    self.checkin(session, generation);
                    return Err(ck(e));
                }
            }
        }
        Err(match last {
            Some(Pkcs11Error::Unavailable(m)) => Pkcs11Error::Unavailable(m),
            Some(e) => e,
            None => Pkcs11Error::Unavailable("the token did not answer".into()),
        })
    }

    fn check(&self, msg: &[u8], sig: Vec<u8>) -> Result<Vec<u8>, Pkcs11Error> {
        release(&self.public, msg, sig)
    }
}

/// Check a token's signature of `msg` before it leaves: its length, and
/// for RSA and Ed25519 that it verifies under the key's public key (the
/// fault attacks of the module documentation; ECDSA's random nonce makes
/// one faulty signature far less telling, and it is not checked).
fn release(public: &VerifyingKey, msg: &[u8], sig: Vec<u8>) -> Result<Vec<u8>, Pkcs11Error> {
    let alg = public.algorithm();
    if let Some(n) = alg.fixed_signature_len() {
        if sig.len() != n {
            return Err(Pkcs11Error::Device(format!(
                "the token returned a {}-byte {alg} signature, not {n} bytes",
                sig.len()
            )));
        }
    }
    if matches!(
        alg,
        Algorithm::RsaPssSha512 | Algorithm::RsaV15Sha256 | Algorithm::Ed25519
    ) && public.verify(msg, &sig).is_err()
    {
        return Err(Pkcs11Error::Device(format!(
            "the token's {alg} signature does not verify under its public key: not released"
        )));
    }
    Ok(sig)
}

impl super::types::ExternalKey for TokenKey {
    fn sign(&self, msg: &[u8]) -> Result<Vec<u8>, KeyError> {
        TokenKey::sign(self, msg).map_err(KeyError::Pkcs11)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// True when `spec` is a `pkcs11:` URI (the scheme is case-insensitive,
/// RFC 3986 section 3.1).
pub fn is_pkcs11_uri(spec: &str) -> bool {
    spec.get(..7)
        .is_some_and(|p| p.eq_ignore_ascii_case("pkcs11:"))
}

/// Load the private key the `pkcs11:` URI names as a [`SigningKey`].
///
/// `opts.alg` is needed for RSA keys (PS512 or RS256) and checked for
/// every other; `opts.kid` replaces the default `kid`, the RFC 7638
/// thumbprint of the public key read from the token. The pair is checked
/// by one signature at load.
///
/// # Errors
/// [`KeyError::Pkcs11`] naming the cause: a malformed URI, no module or a
/// file that is not one, no PIN or a wrong one, no token, no key, a key of
/// an unsupported type.
pub fn load(uri: &str, opts: &LoadOptions) -> Result<SigningKey, KeyError> {
    load_inner(uri, opts).map_err(KeyError::Pkcs11)
}

fn load_inner(uri: &str, opts: &LoadOptions) -> Result<SigningKey, Pkcs11Error> {
    let parsed = Pkcs11Uri::parse(uri)?;
    let path = module_path(&parsed)?;
    let pin = read_pin(&parsed)?;
    let ctx = module(&path)?;
    let mut st = State::default();
    let (public, info) = {
        let slot = find_slot(&ctx, &parsed)?;
        let session = ctx.open_ro_session(slot).map_err(ck)?;
        st.opened += 1;
        login(&ctx, slot, &session, pin.as_ref())?;
        let key = find_private(&session, &parsed)?;
        let (public, info) = read_public(&session, key, opts.alg)?;
        st.conn = Some((slot, key));
        st.idle.push(session);
        (public, info)
    };
    let public = match &opts.kid {
        Some(k) => public.with_kid(k.clone()),
        None => public,
    };
    let tk = TokenKey {
        ctx,
        uri: parsed,
        pin: Arc::new(pin),
        alg: public.algorithm(),
        public: public.clone(),
        info,
        state: Arc::new(Mutex::new(st)),
        reconnect: reconnect::Reconnect::new(RECONNECT_TIMEOUT),
        signatures: Default::default(),
    };
    // The pair check: the private key signs, the public key read beside it
    // verifies (a public object with a stale CKA_ID would publish a kid no
    // signature matches).
    let sig = tk.sign(PAIR_CHECK)?;
    if public.verify(PAIR_CHECK, &sig).is_err() {
        return Err(Pkcs11Error::Unsupported(
            "the public key object beside the private key is not its pair (a test signature does not verify)".into(),
        ));
    }
    Ok(SigningKey {
        alg: tk.alg,
        inner: super::types::PrivateInner::External(Arc::new(tk)),
        public,
        pkcs8: None,
    })
}

/// Generate a key pair of `alg` in the token the URI names, with the
/// URI's `object` as its label and its `id` (or 16 random bytes) as its
/// `CKA_ID`: the private key `CKA_SENSITIVE` and not `CKA_EXTRACTABLE`
/// (PKCS#11 v2.40 section 4.9), both token objects. Then loads it as
/// [`load`] does.
///
/// # Errors
/// As [`load`], and [`Pkcs11Error::ObjectExists`] when a key already
/// matches the URI, [`Pkcs11Error::Uri`] when it has no `object`.
pub fn generate(uri: &str, alg: Algorithm, opts: &LoadOptions) -> Result<SigningKey, KeyError> {
    generate_inner(uri, alg).map_err(KeyError::Pkcs11)?;
    let opts = LoadOptions {
        alg: Some(alg),
        ..opts.clone()
    };
    load(uri, &opts)
}

fn generate_inner(uri: &str, alg: Algorithm) -> Result<(), Pkcs11Error> {
    let parsed = Pkcs11Uri::parse(uri)?;
    let Some(label) = parsed.object.clone() else {
        return Err(Pkcs11Error::Uri(
            "keygen needs object=LABEL in the URI, so the same URI names the new key".into(),
        ));
    };
    let path = module_path(&parsed)?;
    let pin = read_pin(&parsed)?;
    let ctx = module(&path)?;
    let slot = find_slot(&ctx, &parsed)?;
    let session = ctx.open_rw_session(slot).map_err(ck)?;
    login(&ctx, slot, &session, pin.as_ref())?;
    for class in [ObjectClass::PRIVATE_KEY, ObjectClass::PUBLIC_KEY] {
        if !session
            .find_objects(&template(&parsed, class))
            .map_err(ck)?
            .is_empty()
        {
            return Err(Pkcs11Error::ObjectExists(parsed.describe()));
        }
    }
    let id = match &parsed.id {
        Some(id) => id.clone(),
        None => {
            let mut id = vec![0u8; 16];
            ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut id)
                .map_err(|_| Pkcs11Error::Device("the system random generator failed".into()))?;
            id
        }
    };
    let common = |t: &mut Vec<Attribute>| {
        t.push(Attribute::Token(true));
        t.push(Attribute::Label(label.as_bytes().to_vec()));
        t.push(Attribute::Id(id.clone()));
    };
    let mut public = vec![Attribute::Verify(true), Attribute::Private(false)];
    common(&mut public);
    let mut private = vec![
        Attribute::Sign(true),
        Attribute::Private(true),
        Attribute::Sensitive(true),
        Attribute::Extractable(false),
    ];
    common(&mut private);
    let mech = match alg {
        Algorithm::EcdsaP256Sha256 | Algorithm::EcdsaP384Sha384 => {
            let oid = if alg == Algorithm::EcdsaP256Sha256 {
                OID_P256
            } else {
                OID_P384
            };
            public.push(Attribute::EcParams(oid.to_vec()));
            Mechanism::EccKeyPairGen
        }
        Algorithm::Ed25519 => {
            public.push(Attribute::EcParams(OID_ED25519.to_vec()));
            Mechanism::EccEdwardsKeyPairGen
        }
        Algorithm::RsaPssSha512 | Algorithm::RsaV15Sha256 => {
            // 3072 bits: NIST SP 800-57 Part 1 Rev. 5 Table 2, 128-bit
            // security, as `keygen` makes for files.
            public.push(Attribute::ModulusBits(3072u64.into()));
            public.push(Attribute::PublicExponent(vec![0x01, 0x00, 0x01]));
            Mechanism::RsaPkcsKeyPairGen
        }
        other => {
            return Err(Pkcs11Error::Unsupported(format!(
                "{other} keys are not generated in a token"
            )))
        }
    };
    session
        .generate_key_pair(&mech, &public, &private)
        .map_err(ck)?;
    Ok(())
}

impl SigningKey {
    /// The token key behind this signing key, when it was loaded from a
    /// `pkcs11:` URI (feature `pkcs11`).
    pub fn token_key(&self) -> Option<&TokenKey> {
        match &self.inner {
            super::types::PrivateInner::External(k) => k.as_any().downcast_ref::<TokenKey>(),
            _ => None,
        }
    }
}

/// A signing key whose every signature fails with `err`, as a token that
/// does not answer: for the tests of what its callers do then.
#[cfg(test)]
pub(crate) fn failing_key(err: Pkcs11Error) -> SigningKey {
    struct Failing(Pkcs11Error);
    impl super::types::ExternalKey for Failing {
        fn sign(&self, _: &[u8]) -> Result<Vec<u8>, KeyError> {
            Err(KeyError::Pkcs11(self.0.clone()))
        }
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
    }
    let alg = Algorithm::Ed25519;
    let public = SigningKey::generate(alg)
        .map(|k| k.verifying_key().clone())
        .unwrap_or_else(|e| panic!("{e}"));
    SigningKey {
        alg,
        inner: super::types::PrivateInner::External(Arc::new(Failing(err))),
        public,
        pkcs8: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A token's Ed25519 signature is released only when it verifies
    /// (deterministic, so open to fault attacks as RSA-CRT is): one flipped
    /// bit is kept back. (RSA is checked the same way; no RSA key is
    /// generated here.)
    #[test]
    fn a_faulty_ed25519_signature_is_not_released() {
        for alg in [Algorithm::Ed25519, Algorithm::EcdsaP256Sha256] {
            let k = SigningKey::generate(alg).unwrap();
            let sig = k.sign(PAIR_CHECK).unwrap();
            assert_eq!(
                release(k.verifying_key(), PAIR_CHECK, sig.clone()).unwrap(),
                sig
            );
            if alg != Algorithm::Ed25519 {
                continue;
            }
            let mut bad = sig;
            bad[7] ^= 1;
            assert!(
                matches!(
                    release(k.verifying_key(), PAIR_CHECK, bad),
                    Err(Pkcs11Error::Device(m)) if m.contains("not released")
                ),
                "{alg}"
            );
        }
    }
}
