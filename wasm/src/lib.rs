//! `agentsig_wasm`: the WebAssembly half of the `agentsig` package for
//! Workers, Deno, edge runtimes and web pages (wasm-bindgen). It binds the
//! library facade's JSON calls ([`agentsig::facade::calls`]), as the
//! Node.js addon binds the facade: every rule (which error a failure is,
//! the options' defaults, how a request is assembled from its parts) lives
//! in the facade; this file converts arguments and throws.
//!
//! # Contract
//! * The JavaScript half (`agentsig.js`) checks every argument's type and
//!   bound before it is copied into the module's memory, and hands this
//!   module strings, one JSON text of options or arguments, and bytes; a
//!   request to verify, the hot call of a Web Bot Auth gate, crosses
//!   without JSON ([`NativeVerifier::request`]: its strings joined, their
//!   lengths, flags).
//! * Success returns a string: the report as the CLI prints it under
//!   `--json` (a request's in the tape form of [`agentsig::facade::tape`]),
//!   a JWS, or a JSON text. Failure throws an `Error` whose
//!   message is [`MARK`] followed by a JSON object `{class, code, message,
//!   report}` ([`calls::failure_json`]), which the JavaScript half turns
//!   into the typed error (`NotVerified`, `PolicyRefused`, `FetchError`,
//!   `BadKey`, `BadInput`).
//! * No input reaches an `unwrap`/`expect`: a panic would be a trap of the
//!   module (`wasm32-unknown-unknown` aborts on panic).
//! * No I/O: key sets that must be fetched are fetched by the JavaScript
//!   half with the runtime's `fetch` ([`key_set_urls`] says which) and
//!   handed over as the `keySets` argument.

#![forbid(unsafe_code)]
#![deny(clippy::unwrap_used, clippy::expect_used)]

use agentsig::facade::calls::{self, Args};
use agentsig::facade::{self, algorithm, Facade, Failure, Outcome};
use agentsig::keys::oracle;
use agentsig::{Algorithm, SigningKey};
use std::sync::Arc;
use wasm_bindgen::prelude::*;

/// The prefix of the message of every error this module throws: the rest is
/// the JSON failure the JavaScript half turns into a typed error.
pub const MARK: &str = "\u{0}agentsig:";

/// The error thrown to JavaScript: [`MARK`] and the failure as JSON.
fn thrown(f: Failure) -> JsError {
    JsError::new(&format!("{MARK}{}", calls::failure_json(f)))
}

fn out<T>(r: Outcome<T>) -> Result<T, JsError> {
    r.map_err(thrown)
}

/// The bytes of an argument, checked against `max` (the JavaScript half
/// checks first; this is the second line).
fn bounded(b: Option<Vec<u8>>, what: &str, max: usize) -> Outcome<Vec<u8>> {
    let b = b.unwrap_or_default();
    if b.len() > max {
        return Err(Failure::too_large(what, b.len(), max));
    }
    Ok(b)
}

/// A private key bound to one algorithm (the module half of `SigningKey`).
#[wasm_bindgen]
pub struct NativeKey {
    key: Arc<SigningKey>,
}

#[wasm_bindgen]
impl NativeKey {
    /// A new key for `alg` (JOSE or RFC 9421 name); randomness from the
    /// runtime's `crypto.getRandomValues`.
    pub fn generate(alg: &str) -> Result<NativeKey, JsError> {
        out((|| {
            let alg = algorithm(alg)?;
            let key = SigningKey::generate(alg)
                .map_err(|e| Failure::bad_key(format!("cannot generate a {alg:?} key: {e}")))?;
            Ok(NativeKey { key: Arc::new(key) })
        })())
    }

    /// A private key from PEM (PKCS#8, SEC1, PKCS#1); `kid` names it in
    /// signatures (default: its RFC 7638 thumbprint).
    #[wasm_bindgen(js_name = fromPem)]
    pub fn from_pem(pem: &str, kid: Option<String>) -> Result<NativeKey, JsError> {
        out((|| {
            let key =
                SigningKey::from_pem(pem).map_err(|e| Failure::bad_key(format!("key: {e}")))?;
            Ok(NativeKey {
                key: Arc::new(match kid {
                    Some(k) => key.with_kid(k),
                    None => key,
                }),
            })
        })())
    }

    /// The key id signatures carry: the given kid, else the thumbprint.
    pub fn kid(&self) -> String {
        self.key.kid_or_thumbprint()
    }

    /// The RFC 7638 thumbprint of the public key.
    pub fn thumbprint(&self) -> String {
        self.key.verifying_key().thumbprint()
    }

    /// The JOSE name of the key's one algorithm.
    pub fn algorithm(&self) -> String {
        self.key.algorithm().jose_name().to_owned()
    }

    /// The public JWK (RFC 7517) as JSON text; a shared secret has none.
    #[wasm_bindgen(js_name = publicJwk)]
    pub fn public_jwk(&self) -> Result<String, JsError> {
        out(facade::public_jwk(&self.key).map(|j| j.to_string()))
    }

    /// The private key as PKCS#8 PEM, when it has that form.
    #[wasm_bindgen(js_name = privatePem)]
    pub fn private_pem(&self) -> Option<String> {
        self.key.pkcs8_pem().map(|p| p.to_string())
    }

    /// Sign ([`calls::sign`]): `op` is `descriptor`, `card`, `request` or
    /// `response`, `args` the JSON arguments, `data` the document or body.
    pub fn sign(&self, op: &str, args: &str, data: Option<Vec<u8>>) -> Result<String, JsError> {
        out((|| {
            let data = bounded(data, "the input", calls::max_input(op))?;
            calls::sign(&self.key, op, &Args::parse(args)?, data)
        })())
    }
}

/// A verifier (the module half of `Verifier`).
#[wasm_bindgen]
pub struct NativeVerifier {
    inner: Arc<Facade>,
}

#[wasm_bindgen]
impl NativeVerifier {
    /// A verifier from its options (JSON text, normalized by the JavaScript
    /// half; durations and times in seconds).
    #[wasm_bindgen(constructor)]
    pub fn new(options: &str) -> Result<NativeVerifier, JsError> {
        out((|| calls::verifier(&Args::parse(options)?, None))())
            .map(|f| NativeVerifier { inner: Arc::new(f) })
    }

    /// Whether Web Bot Auth key sets were given (`agentKeys`).
    #[wasm_bindgen(js_name = webBotAuthKeys)]
    pub fn web_bot_auth_keys(&self) -> bool {
        self.inner.web_bot_auth_keys()
    }

    /// Whether nonces are checked against a replay store.
    #[wasm_bindgen(js_name = hasReplayStore)]
    pub fn has_replay_store(&self) -> bool {
        self.inner.verifier().replay_store().is_some()
    }

    /// This verifier with a replay store (`memory`) in place of its own.
    #[wasm_bindgen(js_name = withReplayStore)]
    pub fn with_replay_store(&self, store: &str) -> Result<NativeVerifier, JsError> {
        out(self.inner.with_replay_store(store)).map(|f| NativeVerifier { inner: Arc::new(f) })
    }

    /// Verify ([`calls::verify`]); the report's `--json` text.
    pub fn run(
        &self,
        op: &str,
        args: &str,
        data: Option<Vec<u8>>,
        data2: Option<Vec<u8>>,
    ) -> Result<String, JsError> {
        oracle::clear();
        out((|| {
            let data = bounded(data, "the input", calls::max_input(op))?;
            let data2 = bounded(data2, "the request body", facade::MAX_INPUT_BYTES)?;
            calls::verify(&self.inner, op, &Args::parse(args)?, data, data2)
        })())
    }

    /// [`NativeVerifier::run`] with `oracle` answering the signature
    /// primitive: a probing pass (`probe`) leaves the checks it could not
    /// answer in the oracle, a final pass computes them here. A failure is
    /// returned, not thrown: [`MARK`] and the failure as JSON (an `Error`
    /// made in the module costs a stack trace of wasm frames, about a
    /// millisecond in V8, more than the verification). A probing pass
    /// that passed over a replay store (its result is never the final
    /// one) returns the empty string; one with checks pending returns the
    /// result on their assumption, which stands only if all verify.
    #[wasm_bindgen(js_name = runWith)]
    pub fn run_with(
        &self,
        oracle: &mut NativeOracle,
        probe: bool,
        op: &str,
        args: &str,
        data: Option<Vec<u8>>,
        data2: Option<Vec<u8>>,
    ) -> String {
        let r = oracle.inner.run(probe, || {
            let data = bounded(data, "the input", calls::max_input(op))?;
            let data2 = bounded(data2, "the request body", facade::MAX_INPUT_BYTES)?;
            calls::verify(&self.inner, op, &Args::parse(args)?, data, data2)
        });
        if probe && oracle.inner.deferred_replay() {
            return String::new();
        }
        match r {
            Ok(report) => report,
            Err(f) => format!("{MARK}{}", calls::failure_json(f)),
        }
    }

    /// Verify a request ([`calls::verify_request`], the `request`
    /// operation of [`NativeVerifier::run`]) handed over without JSON: the
    /// hot call of a Web Bot Auth gate. `text` is the request's strings
    /// joined, `lens` their lengths (UTF-16 code units): the method, the
    /// URL, the scheme (empty unless `flags` says it is given), then
    /// `authorities` authorities, then the header fields as name, value,
    /// name, value... `flags`: 1 Web Bot Auth, 2 strict, 4 a scheme, 8
    /// authorities given. `key_sets`: the key sets fetched, as JSON
    /// ([`calls::verify`]'s `keySets`). `oracle` and `probe` as for
    /// [`NativeVerifier::run_with`] (an oracle answering for no algorithm
    /// and no probe: every primitive here, as `run`). The result: the
    /// report in the tape form ([`agentsig::facade::tape`]: the same values
    /// as its `--json` text, read without `JSON.parse`), or [`MARK`] and
    /// the failure as JSON.
    #[allow(clippy::too_many_arguments)]
    pub fn request(
        &self,
        oracle: &mut NativeOracle,
        probe: bool,
        text: &str,
        lens: &[u32],
        authorities: u32,
        flags: u32,
        key_sets: Option<String>,
        body: Option<Vec<u8>>,
    ) -> String {
        let r = oracle.inner.run(probe, || {
            let check = request_check(text, lens, authorities, flags, body)?;
            calls::verify_request_tape(&self.inner, check, key_sets.as_deref())
        });
        if probe && oracle.inner.deferred_replay() {
            return String::new();
        }
        match r {
            Ok(report) => report,
            Err(f) => format!("{MARK}{}", calls::failure_json(f)),
        }
    }
}

/// The failure of parts that do not match their lengths.
fn mismatch() -> Failure {
    Failure::usage("the request's parts do not match their lengths")
}

/// The strings of `text` cut at `lens`, lengths in UTF-16 code units (a
/// JavaScript string's `length`): the parts a caller joined into one
/// string, handed over in one copy. The lengths must cover `text` exactly.
fn cut(text: &str, lens: &[u32]) -> Outcome<Vec<String>> {
    let mut out = Vec::with_capacity(lens.len());
    if text.is_ascii() {
        // One UTF-16 code unit per byte.
        let mut start = 0usize;
        for &n in lens {
            let end = usize::try_from(n)
                .ok()
                .and_then(|n| start.checked_add(n))
                .filter(|&e| e <= text.len())
                .ok_or_else(mismatch)?;
            out.push(text[start..end].to_owned());
            start = end;
        }
        if start != text.len() {
            return Err(mismatch());
        }
        return Ok(out);
    }
    let mut chars = text.char_indices().peekable();
    let mut start = 0;
    for &n in lens {
        let mut units = 0u32;
        while units < n {
            let Some((_, c)) = chars.next() else { break };
            units = units.saturating_add(u32::try_from(c.len_utf16()).unwrap_or(2));
        }
        let end = chars.peek().map_or(text.len(), |(i, _)| *i);
        if units != n {
            return Err(Failure::usage(
                "the request's parts do not match their lengths",
            ));
        }
        out.push(text[start..end].to_owned());
        start = end;
    }
    if start != text.len() {
        return Err(Failure::usage(
            "the request's parts do not match their lengths",
        ));
    }
    Ok(out)
}

/// [`NativeVerifier::request`]'s `flags`: verify under Web Bot Auth.
const WEB_BOT_AUTH: u32 = 1;
/// [`NativeVerifier::request`]'s `flags`: `strict`.
const STRICT: u32 = 2;
/// [`NativeVerifier::request`]'s `flags`: the third part is `scheme`.
const SCHEME: u32 = 4;
/// [`NativeVerifier::request`]'s `flags`: `authorities` were given.
const AUTHORITIES: u32 = 8;

/// The request of [`NativeVerifier::request`]'s parts.
fn request_check(
    text: &str,
    lens: &[u32],
    authorities: u32,
    flags: u32,
    body: Option<Vec<u8>>,
) -> Outcome<agentsig::facade::RequestCheck> {
    let mut parts = cut(text, lens)?.into_iter();
    let n = usize::try_from(authorities).unwrap_or(usize::MAX);
    let (Some(method), Some(target), Some(scheme)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(Failure::usage("the request has no method, url or scheme"));
    };
    let auth: Vec<String> = parts.by_ref().take(n).collect();
    if auth.len() != n {
        return Err(Failure::usage(
            "the request has fewer authorities than announced",
        ));
    }
    let mut r = agentsig::facade::RequestCheck::default();
    r.method = method;
    r.target = target;
    r.scheme = (flags & SCHEME != 0).then_some(scheme);
    r.authorities = (flags & AUTHORITIES != 0).then_some(auth);
    r.headers = calls::header_pairs(parts.collect(), "headers")?;
    r.body = bounded(body, "the input", calls::max_input("request"))?;
    r.web_bot_auth = flags & WEB_BOT_AUTH != 0;
    r.strict = flags & STRICT != 0;
    Ok(r)
}

/// The answers of the runtime's WebCrypto for one verification
/// ([`oracle::Oracle`]): the JavaScript half runs the checks a probing pass
/// left pending (`pending`) with `crypto.subtle.verify` and hands back the
/// verdicts (`answer`); the rules stay in the library.
#[wasm_bindgen]
pub struct NativeOracle {
    inner: oracle::Oracle,
    algs: Vec<Algorithm>,
    /// The encoding of the pending checks [`NativeOracle::pending_at`]
    /// last wrote, which the JavaScript half reads in place.
    blob: Vec<u8>,
}

/// The code of an algorithm in [`NativeOracle::pending`]'s encoding.
fn oracle_code(a: Algorithm) -> u8 {
    match a {
        Algorithm::EcdsaP256Sha256 => 1,
        Algorithm::EcdsaP384Sha384 => 2,
        _ => 3,
    }
}

#[wasm_bindgen]
impl NativeOracle {
    /// An oracle answering for `algs` (JOSE names, comma-separated: the
    /// ones the runtime's WebCrypto verifies; of ES256, ES384, EdDSA).
    #[wasm_bindgen(constructor)]
    pub fn new(algs: &str) -> NativeOracle {
        let algs: Vec<Algorithm> = algs.split(',').filter_map(|a| algorithm(a).ok()).collect();
        NativeOracle {
            inner: oracle::Oracle::new(algs.clone()),
            algs,
            blob: Vec::new(),
        }
    }

    /// Forget every answer and pending check, for the next verification
    /// (answers never outlive the verification they were given for).
    pub fn reset(&mut self) {
        self.inner = oracle::Oracle::new(self.algs.clone());
    }

    /// How many checks the last probing pass left unanswered.
    #[wasm_bindgen(js_name = pendingCount)]
    pub fn pending_count(&self) -> usize {
        self.inner.pending().len()
    }

    /// Whether the last probing pass passed over a replay store.
    #[wasm_bindgen(js_name = deferredReplay)]
    pub fn deferred_replay(&self) -> bool {
        self.inner.deferred_replay()
    }

    /// The unanswered checks, written in this oracle and read in place by
    /// the JavaScript half (through [`module_memory`]: no copy of them made for
    /// it). Returns where they start in the module's memory: their length
    /// in bytes (u32, little-endian), then each check as an algorithm code
    /// (1 ES256, 2 ES384, 3 EdDSA) and three little-endian
    /// u32-length-prefixed byte strings: the public key (uncompressed SEC1
    /// point or Ed25519's 32 bytes), the message, the signature (`r || s`
    /// or Ed25519's 64 bytes). The bytes stay as they are until the next
    /// call on this oracle.
    #[wasm_bindgen(js_name = pendingAt)]
    pub fn pending_at(&mut self) -> usize {
        let b = &mut self.blob;
        b.clear();
        b.extend_from_slice(&[0; 4]);
        for q in self.inner.pending() {
            b.push(oracle_code(q.alg));
            for part in [&q.key, &q.msg, &q.sig] {
                let n = u32::try_from(part.len()).unwrap_or(u32::MAX);
                b.extend_from_slice(&n.to_le_bytes());
                b.extend_from_slice(part);
            }
        }
        let n = u32::try_from(b.len() - 4).unwrap_or(u32::MAX);
        b[..4].copy_from_slice(&n.to_le_bytes());
        b.as_ptr() as usize
    }

    /// The verdicts of the pending checks, in order: 1 verified, 0 not,
    /// any other byte not known (computed here on the next pass).
    pub fn answer(&mut self, verdicts: &[u8]) {
        self.inner.answer(verdicts.iter().map(|v| match v {
            1 => Some(true),
            0 => Some(false),
            _ => None,
        }));
    }
}

/// RFC 8785 canonical form of a JSON text (strict I-JSON).
#[wasm_bindgen]
pub fn canonicalize(doc: Vec<u8>) -> Result<Vec<u8>, JsError> {
    out((|| {
        let b = bounded(Some(doc), "the document", calls::max_input("descriptor"))?;
        agentsig::jcs::canonicalize(&b).map_err(|e| Failure::malformed(format!("JSON: {e}")))
    })())
}

/// The module's memory (a `WebAssembly.Memory`), in which the JavaScript
/// half reads [`NativeOracle::pending_at`]'s checks.
#[wasm_bindgen(js_name = moduleMemory)]
pub fn module_memory() -> JsValue {
    wasm_bindgen::memory()
}

/// The member names of [`agentsig::facade::tape::REPORT_KEYS`], in order,
/// separated by spaces: the names a report's tape gives by index.
#[wasm_bindgen(js_name = reportKeys)]
pub fn report_keys() -> String {
    agentsig::facade::tape::REPORT_KEYS.join(" ")
}

/// The report of an input at `subject` that could not be fetched (verdict
/// `unavailable`), as JSON text ([`calls::unavailable_report`]).
#[wasm_bindgen(js_name = unavailableReport)]
pub fn unavailable_report(subject: &str, code: &str, message: &str) -> Result<String, JsError> {
    out(calls::unavailable_report(subject, code, message))
}

/// The bounds the JavaScript half checks, as JSON text ([`calls::limits`]).
#[wasm_bindgen]
pub fn limits() -> String {
    calls::limits()
}

/// The key sets a request's `Signature-Agent` names, as JSON
/// ([`calls::key_set_urls`]); `args` is `{headers}`.
#[wasm_bindgen(js_name = keySetUrls)]
pub fn key_set_urls(args: &str) -> Result<String, JsError> {
    out((|| calls::key_set_urls(&Args::parse(args)?))())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lens(parts: &[&str]) -> Vec<u32> {
        parts
            .iter()
            .map(|p| u32::try_from(p.encode_utf16().count()).unwrap_or(u32::MAX))
            .collect()
    }

    #[test]
    fn parts_are_cut_at_their_utf16_lengths() {
        let parts = [
            "GET",
            "https://a.example/",
            "",
            "x-a",
            "caf\u{e9}",
            "x-b",
            "\u{1f600}!",
        ];
        assert_eq!(
            cut(&parts.concat(), &lens(&parts)).ok(),
            Some(parts.map(String::from).to_vec())
        );
        let ascii = ["GET", "https://a.example/", "", "x-a", "b"];
        assert_eq!(
            cut(&ascii.concat(), &lens(&ascii)).ok(),
            Some(ascii.map(String::from).to_vec())
        );
        // Lengths that fall short of the text, run past it, or split a
        // surrogate pair are refused.
        for (t, l) in [
            ("abc", &[1u32, 1][..]),
            ("abc", &[2, 2][..]),
            ("a\u{1f600}", &[2, 1][..]),
            ("a\u{e9}", &[1, 2][..]),
        ] {
            assert_eq!(
                cut(t, l).err().map(|f| f.code),
                Some("usage".into()),
                "{t:?} {l:?}"
            );
        }
    }

    #[test]
    fn a_request_of_parts_takes_its_options_from_the_flags() {
        let parts = [
            "POST",
            "/p",
            "https",
            "site.example",
            "Host",
            "site.example",
        ];
        let r = request_check(
            &parts.concat(),
            &lens(&parts),
            1,
            WEB_BOT_AUTH | SCHEME | AUTHORITIES,
            None,
        );
        let Ok(r) = r else { panic!("{:?}", r.err()) };
        assert_eq!((r.method.as_str(), r.target.as_str()), ("POST", "/p"));
        assert_eq!(r.scheme.as_deref(), Some("https"));
        assert_eq!(r.authorities, Some(vec!["site.example".to_owned()]));
        assert_eq!(r.headers, [("Host".to_owned(), "site.example".to_owned())]);
        assert!(r.web_bot_auth && !r.strict);
        // Without the authorities flag the fourth part is a header name:
        // an odd list of fields.
        let r = request_check(&parts.concat(), &lens(&parts), 0, STRICT, None);
        assert_eq!(r.err().map(|f| f.code), Some("usage".into()));
        let r = request_check("GETx", &[3, 1], 0, 0, None);
        assert_eq!(r.err().map(|f| f.code), Some("usage".into()));
    }
}
