//! `agentsig.node`: the native half of the `agentsig` Node.js package
//! (napi-rs). It binds the library facade ([`agentsig::facade`]), as the
//! Python package does: the [`Facade`] verifier and its `verify_*` methods,
//! [`agentsig::SigningKey`], descriptor, A2A card and RFC 9421 signing,
//! RFC 8785 canonicalization, the Web Bot Auth profile and AI Catalogs.
//! Every rule (which error a failure is, the options' defaults and the
//! rules between them, how a request is assembled from its parts) lives in
//! the facade; this file converts arguments and throws.
//!
//! # Contract
//! * The JavaScript half (`index.js`) checks every argument's type (a wrong
//!   type is a JavaScript `TypeError` there) and hands this module plain
//!   values: strings, one JSON text of options or arguments, and `Buffer`s,
//!   whose length is checked against a bound before they are copied.
//! * Success returns a string: the report as the CLI prints it under
//!   `--json` (the very [`agentsig::report::Report`], serialized by serde),
//!   a JWS, or a JSON text. Failure throws an `Error` whose message is
//!   [`MARK`] followed by a JSON object `{class, code, message, report}`
//!   (`class` the facade's [`facade::ErrorKind`] name), which the
//!   JavaScript half turns into the typed error (`NotVerified`,
//!   `PolicyRefused`, `FetchError`, `BadKey`, `BadInput`).
//! * No input reaches an `unwrap`/`expect`, and every call runs under
//!   `catch_unwind`: a bug is a `BadInput` with code `internal`, never an
//!   abort of the Node.js process.
//! * The `...Async` forms run the same code on the libuv thread pool
//!   (napi `AsyncTask`), so a key fetch, an RSA verification or an RSA key
//!   generation never holds the event loop.

// `deny`, not `forbid`: the napi macros generate the FFI glue under
// `allow(unsafe_code)`; this file itself holds no unsafe code.
#![deny(unsafe_code)]
#![deny(clippy::unwrap_used, clippy::expect_used)]

use agentsig::facade::{self, algorithm, Facade, Failure, RequestCheck, VerifierOptions};
use agentsig::httpsig::message::{MAX_FIELD_LINES, MAX_HEAD_BYTES};
use agentsig::report::Report;
use agentsig::trust::KeySource;
use agentsig::webbotauth::StaticDirectory;
use agentsig::{SigningKey, VerifyingKey};
use napi::bindgen_prelude::{AsyncTask, Buffer};
use napi::{Env, Task};
use napi_derive::napi;
use serde_json::{json, Map, Value};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// `SigningKey.fromPkcs11`: keys held in a PKCS#11 token (public, as every
/// exported function of the addon is reachable from its root).
pub mod pkcs11;

/// The prefix of the message of every error this module throws: the rest is
/// the JSON failure the JavaScript half turns into a typed error.
pub const MARK: &str = "\u{0}agentsig:";

/// Largest HTTP body (and A2A card or delegation bundle) accepted by a
/// call: [`facade::MAX_INPUT_BYTES`], the CLI's bound on any input.
pub const MAX_INPUT_BYTES: usize = facade::MAX_INPUT_BYTES;

/// Default lifetime of a request signature (`expires - created`), seconds.
pub const DEFAULT_EXPIRES_IN: u64 = facade::DEFAULT_EXPIRES_IN;

// ---------------------------------------------------------------- errors

/// The error thrown to JavaScript: [`MARK`] and the failure as JSON.
fn into_napi(f: Failure) -> napi::Error {
    let report = f
        .report
        .and_then(|r| serde_json::to_value(&*r).ok())
        .unwrap_or(Value::Null);
    let body = json!({
        "class": f.kind.name(),
        "code": f.code,
        "message": f.message,
        "report": report,
    });
    napi::Error::from_reason(format!("{MARK}{body}"))
}

type Out<T> = facade::Outcome<T>;

/// A report as its `--json` text.
fn text(r: Report) -> Out<String> {
    serde_json::to_string(&r).map_err(|e| Failure::bad_input("internal", format!("report: {e}")))
}

/// Run `f`, turning a panic into a failure (a panic must never cross into
/// Node.js, where it would abort the process).
fn guarded<T>(f: impl FnOnce() -> Out<T>) -> napi::Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(into_napi(e)),
        Err(_) => Err(into_napi(Failure::bad_input(
            "internal",
            "agentsig failed internally on this input; please report it with the input",
        ))),
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
    /// (Node's `rawHeaders` form), checked by [`facade::check_headers`].
    fn headers(&self, k: &str) -> Out<Vec<(String, String)>> {
        let flat = self.strings(k)?.unwrap_or_default();
        if flat.len() % 2 != 0 {
            return Err(Failure::usage(format!("{k}: an odd number of items")));
        }
        let pairs = flat
            .chunks(2)
            .map(|c| (c[0].clone(), c[1].clone()))
            .collect::<Vec<_>>();
        facade::check_headers(&pairs)?;
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

fn pairs_json(h: &[(String, String)]) -> String {
    Value::Array(h.iter().map(|(n, v)| json!([n, v])).collect()).to_string()
}

// ------------------------------------------------------------------- keys

/// A private key bound to one algorithm (the native half of `SigningKey`).
#[napi]
pub struct NativeKey {
    key: Arc<SigningKey>,
}

/// Generate a key for the algorithm named `alg`.
fn generate(alg: &str) -> Out<NativeKey> {
    let alg = algorithm(alg)?;
    let key = SigningKey::generate(alg)
        .map_err(|e| Failure::bad_key(format!("cannot generate a {alg:?} key: {e}")))?;
    Ok(NativeKey { key: Arc::new(key) })
}

/// Key generation on the libuv pool: an RSA key (RS256, PS512) takes a
/// search for two large primes, tens to hundreds of milliseconds, which
/// must not hold the event loop.
pub struct KeyGen(String);

impl Task for KeyGen {
    type Output = NativeKey;
    type JsValue = NativeKey;

    fn compute(&mut self) -> napi::Result<NativeKey> {
        guarded(|| generate(&self.0))
    }

    fn resolve(&mut self, _env: Env, output: NativeKey) -> napi::Result<NativeKey> {
        Ok(output)
    }
}

#[napi]
impl NativeKey {
    /// Generate a new key for `alg` (JOSE or RFC 9421 name).
    #[napi(factory)]
    pub fn generate(alg: String) -> napi::Result<NativeKey> {
        guarded(|| generate(&alg))
    }

    /// [`generate`](Self::generate) on the libuv pool.
    #[napi(ts_return_type = "Promise<NativeKey>")]
    pub fn generate_async(alg: String) -> AsyncTask<KeyGen> {
        AsyncTask::new(KeyGen(alg))
    }

    /// Load a private key from PEM (PKCS#8, SEC1, PKCS#1); `kid` names it in
    /// signatures, else the kid `jwk` (its published JWK or a JWK Set
    /// holding it) gives it, else its RFC 7638 thumbprint
    /// ([`facade::keys::signing_key_from_pem`]).
    #[napi(factory)]
    pub fn from_pem(
        pem: String,
        kid: Option<String>,
        jwk: Option<String>,
    ) -> napi::Result<NativeKey> {
        guarded(|| {
            let key =
                facade::keys::signing_key_from_pem(&pem, kid, jwk.as_deref().map(str::as_bytes))?;
            Ok(NativeKey { key: Arc::new(key) })
        })
    }

    /// Load a private key from a PEM file, named as `agentsig sign --key`
    /// names it: `kid`, else the kid `agentsig keygen --kid` wrote beside
    /// the file, else its RFC 7638 thumbprint
    /// ([`facade::keys::signing_key_from_file`]).
    #[napi(factory)]
    pub fn from_file(path: String, kid: Option<String>) -> napi::Result<NativeKey> {
        guarded(|| {
            let key = facade::keys::signing_key_from_file(std::path::Path::new(&path), kid)?;
            Ok(NativeKey { key: Arc::new(key) })
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
        guarded(|| facade::public_jwk(&self.key).map(|j| j.to_string()))
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
/// (a JSON document), `maxCatalogBytes` (an AI Catalog), `maxFieldLines`
/// and `maxHeadBytes` (the RFC 9421 message limits), `maxJwsBytes`,
/// `maxJwtBytes`.
#[napi]
pub fn limits() -> String {
    let l = agentsig::policy::Limits::default();
    json!({
        "maxInputBytes": MAX_INPUT_BYTES,
        "maxDocumentBytes": l.max_document_bytes,
        "maxCatalogBytes": agentsig::catalog::MAX_CATALOG_BYTES,
        "maxJwsBytes": l.max_jws_bytes,
        "maxJwtBytes": l.max_jwt_bytes,
        "maxFieldLines": MAX_FIELD_LINES,
        "maxHeadBytes": MAX_HEAD_BYTES,
        "defaultExpiresIn": DEFAULT_EXPIRES_IN,
    })
    .to_string()
}

/// The status of a response: a three-digit code ([`facade::status_code`]).
fn status(a: &Args) -> Out<u16> {
    let n = a.i64("status")?.unwrap_or(-1);
    facade::status_code(n)
}

fn sign_card(card: &[u8], key: &SigningKey, a: &Args) -> Out<String> {
    let v = facade::parse_json(card, "card")?;
    facade::sign_card(&v, key, a.bool("force")?).map(|c| c.to_string())
}

/// Sign a response ([`facade::sign_response`]); the headers with the added
/// fields, as JSON pairs.
fn sign_response(body: Vec<u8>, key: &SigningKey, a: &Args) -> Out<String> {
    let status = status(a)?;
    let h = a.headers("headers")?;
    let mut o = facade::ResponseSigning::default();
    if let Some(l) = a.str("label")? {
        o.label = l;
    }
    o.created = a.i64("created")?;
    o.expires_in = a.u64("expiresIn")?;
    facade::sign_response(status, &h, body, key, &o).map(|h| pairs_json(&h))
}

/// Sign a request ([`facade::sign_request`]): Web Bot Auth when
/// `webBotAuth` is true, else plain RFC 9421; the headers with the added
/// fields, as JSON pairs.
fn sign_request(body: Vec<u8>, key: &SigningKey, a: &Args) -> Out<String> {
    let method = a.need_str("method")?;
    let url = a.need_str("url")?;
    let h = a.headers("headers")?;
    let mut o = facade::RequestSigning::default();
    o.web_bot_auth = a.bool("webBotAuth")?;
    o.signature_agent = a.str("signatureAgent")?;
    if o.web_bot_auth && o.signature_agent.is_none() {
        return Err(Failure::usage(
            "Web Bot Auth needs signatureAgent (the agent's https URL), or pass webBotAuth: false",
        ));
    }
    if let Some(e) = a.u64("expiresIn")? {
        o.expires_in = e;
    }
    o.components = a.strings("components")?;
    if let Some(l) = a.str("label")? {
        o.label = l;
    }
    o.created = a.i64("created")?;
    facade::sign_request(&method, &url, &h, body, key, &o).map(|h| pairs_json(&h))
}

// --------------------------------------------------------------- verifier

fn key_list(list: &[Value], what: &str) -> Out<Vec<VerifyingKey>> {
    list.iter()
        .map(|k| match k.as_str() {
            Some(s) => facade::load_public(s),
            None => Err(Failure::usage(format!(
                "{what}: a key must be PEM or JWK text"
            ))),
        })
        .collect()
}

/// The Web Bot Auth key sets given in advance: each agent (its
/// `Signature-Agent` value) with `{jwks}` or `{keys}`
/// ([`facade::add_agent_keys`]).
fn agent_key_sets(m: &Map<String, Value>) -> Out<StaticDirectory> {
    if m.len() > facade::MAX_AGENTS {
        return Err(Failure::usage(format!(
            "agentKeys: {} agents, at most {}",
            m.len(),
            facade::MAX_AGENTS
        )));
    }
    let mut dir = StaticDirectory::new();
    for (url, v) in m {
        let keys = match (v.get("keys"), v.get("jwks")) {
            (Some(Value::Array(l)), _) => key_list(l, "agentKeys")?,
            (_, Some(Value::String(j))) => {
                facade::jwks_keys(j.as_bytes(), "agentKeys", MAX_INPUT_BYTES)?
                    .keys()
                    .iter()
                    .map(|k| k.key.clone())
                    .collect()
            }
            _ => {
                return Err(Failure::usage(
                    "agentKeys: each value is a JWK Set or a list of keys",
                ))
            }
        };
        facade::add_agent_keys(&mut dir, url, keys, facade::Spelling::Camel)?;
    }
    Ok(dir)
}

/// Verifies descriptors, A2A cards, RFC 9421 messages, delegation chains
/// and AI Catalogs with one configuration (the native half of `Verifier`).
#[napi]
pub struct NativeVerifier {
    inner: Arc<Facade>,
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
        self.inner.web_bot_auth_keys()
    }

    /// Whether nonces are checked against a replay store.
    #[napi]
    pub fn has_replay_store(&self) -> bool {
        self.inner.verifier().replay_store().is_some()
    }

    /// This verifier with a replay store (`memory`, a file path,
    /// `redis://...`) in place of its own, every other setting kept; the
    /// store is shared by its RFC 9421 and Web Bot Auth verifications.
    #[napi]
    pub fn with_replay_store(&self, store: String) -> napi::Result<NativeVerifier> {
        guarded(|| {
            Ok(NativeVerifier {
                inner: Arc::new(self.inner.with_replay_store(&store)?),
            })
        })
    }

    /// Verify: `op` is `descriptor`, `card`, `response`, `request`,
    /// `audit`, `catalog` or `catalogUrl`; `args` the JSON arguments; `data`
    /// the document or body, `data2` the body of the related request
    /// (`response`). Returns the report's JSON text.
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
                "descriptor" | "card" => self.inner.verifier().limits().max_document_bytes,
                "catalog" => agentsig::catalog::MAX_CATALOG_BYTES,
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

/// The verifier of the options `index.js` normalized (camelCase names).
fn build_verifier(o: &Args) -> Out<Facade> {
    let mut opts = VerifierOptions::default();
    opts.spelling = facade::Spelling::Camel;
    if let Some(j) = o.str("jwks")? {
        opts.keys
            .extend(facade::jwks_keys(j.as_bytes(), "jwks", MAX_INPUT_BYTES)?);
    }
    if let Some(Value::Array(ks)) = o.get("keys") {
        for vk in key_list(ks, "keys")? {
            opts.keys.add(vk, KeySource::Pinned);
        }
    }
    opts.agent_keys = match o.get("agentKeys") {
        Some(Value::Object(m)) => Some(agent_key_sets(m)?),
        Some(_) => return Err(Failure::usage("agentKeys must be an object")),
        None => None,
    };
    opts.fetch_directories = o.bool("fetchDirectories")?;
    opts.require_directory_proof = o.bool("requireDirectoryProof")?;
    opts.allow_private_hosts = o.strings("allowPrivateHosts")?;
    opts.extra_roots_pem = o.strings("extraRootsPem")?;
    opts.algorithms = o
        .strings("algorithms")?
        .map(|names| names.iter().map(|n| algorithm(n)).collect::<Out<Vec<_>>>())
        .transpose()?;
    opts.max_age = o.u64("maxAgeSeconds")?;
    opts.skew = o.u64("skewSeconds")?;
    opts.strict_low_s = o.bool("strictLowS")?;
    opts.allow_uncovered_content = o.bool("allowUncoveredContent")?;
    opts.now = o.i64("nowSeconds")?;
    opts.replay_store = o.str("replayStore")?;
    opts.agents = o.strings("agents")?;
    opts.key_cache = o.str("keyCache")?;
    opts.fleet_secret_file = o.str("fleetSecretFile")?.map(std::path::PathBuf::from);
    opts.build(Some(agentsig::net::facade::network()))
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
        /// The verifier.
        v: Arc<Facade>,
        /// `descriptor`, `card`, `response`, `request`, `audit`, `catalog`
        /// or `catalogUrl`.
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
                "descriptor" => facade::sign_descriptor(&data, &key),
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
            }) => text(match op.as_str() {
                "descriptor" => v.verify_descriptor(&data, &args.need_str("jws")?)?,
                "card" => v.verify_card(
                    &facade::parse_json(&data, "card")?,
                    args.bool("requireAll")?,
                )?,
                "response" => verify_response(&v, data, data2, &args)?,
                "request" => verify_request(&v, data, &args)?,
                "audit" => v.audit_delegation(
                    &args.strings("tokens")?.unwrap_or_default(),
                    args.strings("issuer")?,
                    args.str("audience")?,
                    args.bool("denyWarnings")?,
                )?,
                "catalog" => v.verify_catalog_signed(
                    &data,
                    args.str("jws")?.as_deref(),
                    None,
                    args.bool("requireSigned")?,
                    args.bool("allowUnsigned")?,
                )?,
                "catalogUrl" => {
                    let mut o = agentsig::net::facade::CatalogFetch::default();
                    o.require_signed = args.bool("requireSigned")?;
                    o.allow_unsigned = args.bool("allowUnsigned")?;
                    o.allow_private_hosts = args.strings("allowPrivateHosts")?.unwrap_or_default();
                    o.extra_roots_pem = args.strings("extraRootsPem")?.unwrap_or_default();
                    agentsig::net::facade::verify_catalog_url(&v, &args.need_str("url")?, &o)?
                }
                _ => return Err(Failure::usage(format!("unknown operation {op:?}"))),
            }),
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

fn verify_response(v: &Facade, body: Vec<u8>, req_body: Vec<u8>, a: &Args) -> Out<Report> {
    let status = status(a)?;
    let h = a.headers("headers")?;
    match a.get("request") {
        None => v.verify_response(status, &h, body, None),
        Some(Value::Object(r)) => {
            let r = Args(r.clone());
            let (m, u, rh) = (
                r.need_str("method")?,
                r.need_str("url")?,
                r.headers("headers")?,
            );
            v.verify_response(status, &h, body, Some((&m, &u, &rh, req_body)))
        }
        Some(_) => Err(Failure::usage("request must be an object")),
    }
}

fn verify_request(v: &Facade, body: Vec<u8>, a: &Args) -> Out<Report> {
    let mut c = RequestCheck::default();
    c.method = a.need_str("method")?;
    c.target = a.need_str("url")?;
    c.headers = a.headers("headers")?;
    c.body = body;
    c.scheme = a.str("scheme")?;
    c.web_bot_auth = a.bool("webBotAuth")?;
    c.authorities = a.strings("authorities")?;
    c.strict = a.bool("strict")?;
    v.verify_request(c)
}
