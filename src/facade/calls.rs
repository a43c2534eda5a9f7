//! The calls of a binding whose host language hands over JSON text: one
//! JSON object of arguments per call, the document or body as bytes, and
//! the result (a report as the CLI prints it under `--json`, a JWS, or
//! header pairs) as JSON text. The WebAssembly package binds these; the
//! argument names are the Node.js package's (camelCase, `index.d.ts`).
//!
//! Every rule stays where it is ([`VerifierOptions`], [`Facade`], the
//! signing functions); this module reads arguments and dispatches.
//!
//! ```
//! use agentsig::facade::calls::{self, Args};
//!
//! let key = agentsig::SigningKey::from_ed25519_seed(&[4u8; 32])?;
//! let doc = br#"{"name":"planner"}"#;
//! let jws = calls::sign(&key, "descriptor", &Args::parse("{}")?, doc.to_vec())?;
//! let jwk = agentsig::facade::public_jwk(&key)?.to_string();
//! let opts = serde_json::json!({"keys": [jwk], "nowSeconds": 1_760_000_000}).to_string();
//! let v = calls::verifier(&Args::parse(&opts)?, None)?;
//! let args = serde_json::json!({"jws": jws}).to_string();
//! let report = calls::verify(&v, "descriptor", &Args::parse(&args)?, doc.to_vec(), Vec::new())?;
//! assert!(report.contains(r#""verdict":"verified""#));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use super::{
    add_agent_keys, algorithm, check_headers, jwks_keys, load_public, parse_json, sign_card,
    sign_descriptor, sign_request, sign_response, status_code, Facade, Failure, Network, Outcome,
    RequestCheck, RequestSigning, ResponseSigning, Spelling, VerifierOptions, MAX_AGENTS,
    MAX_INPUT_BYTES,
};
use crate::report::Report;
use crate::trust::KeySource;
use crate::webbotauth::StaticDirectory;
use crate::{SigningKey, VerifyingKey};
use serde_json::{json, Map, Value};

/// The arguments of a call: one JSON object.
#[derive(Clone, Debug, Default)]
pub struct Args(Map<String, Value>);

impl Args {
    /// The arguments in `text`, a JSON object.
    ///
    /// # Errors
    /// `usage` when `text` is not a JSON object.
    pub fn parse(text: &str) -> Outcome<Args> {
        match serde_json::from_str(text) {
            Ok(Value::Object(m)) => Ok(Args(m)),
            _ => Err(Failure::usage("the arguments are not a JSON object")),
        }
    }
    /// The argument `k`; `null` is absent.
    pub fn get(&self, k: &str) -> Option<&Value> {
        self.0.get(k).filter(|v| !v.is_null())
    }
    /// A string argument.
    ///
    /// # Errors
    /// `usage` for another type.
    pub fn str(&self, k: &str) -> Outcome<Option<String>> {
        match self.get(k) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(Failure::usage(format!("{k} must be a string"))),
        }
    }
    fn need_str(&self, k: &str) -> Outcome<String> {
        self.str(k)?
            .ok_or_else(|| Failure::usage(format!("{k} is required")))
    }
    /// A boolean argument, false when absent.
    ///
    /// # Errors
    /// `usage` for another type.
    pub fn bool(&self, k: &str) -> Outcome<bool> {
        match self.get(k) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(Failure::usage(format!("{k} must be a boolean"))),
        }
    }
    fn number<T>(&self, k: &str, as_n: fn(&Value) -> Option<T>) -> Outcome<Option<T>> {
        self.get(k)
            .map(|v| as_n(v).ok_or_else(|| Failure::usage(format!("{k} must be a whole number"))))
            .transpose()
    }
    fn u64(&self, k: &str) -> Outcome<Option<u64>> {
        self.number(k, Value::as_u64)
    }
    fn i64(&self, k: &str) -> Outcome<Option<i64>> {
        self.number(k, Value::as_i64)
    }
    /// A list of strings.
    ///
    /// # Errors
    /// `usage` for another type.
    pub fn strings(&self, k: &str) -> Outcome<Option<Vec<String>>> {
        match self.get(k) {
            None => Ok(None),
            Some(Value::Array(a)) => a
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| Failure::usage(format!("{k} must be a list of strings")))
                })
                .collect::<Outcome<Vec<_>>>()
                .map(Some),
            Some(_) => Err(Failure::usage(format!("{k} must be a list of strings"))),
        }
    }
    /// Header fields given as a flat list `[name, value, name, value, ...]`
    /// (Node's `rawHeaders` form), checked by [`check_headers`].
    ///
    /// # Errors
    /// `usage` for an odd list; the header checks' failures.
    pub fn headers(&self, k: &str) -> Outcome<Vec<(String, String)>> {
        header_pairs(self.strings(k)?.unwrap_or_default(), k)
    }
}

/// Header fields from the flat list `[name, value, name, value, ...]`
/// (Node's `rawHeaders` form; `what` names the argument), checked by
/// [`check_headers`].
///
/// # Errors
/// `usage` for an odd list; the header checks' failures.
pub fn header_pairs(flat: Vec<String>, what: &str) -> Outcome<Vec<(String, String)>> {
    if !flat.len().is_multiple_of(2) {
        return Err(Failure::usage(format!("{what}: an odd number of items")));
    }
    let mut pairs = Vec::with_capacity(flat.len() / 2);
    let mut it = flat.into_iter();
    while let (Some(n), Some(v)) = (it.next(), it.next()) {
        pairs.push((n, v));
    }
    check_headers(&pairs)?;
    Ok(pairs)
}

/// The bounds a binding checks before it copies an argument, as JSON text:
/// `maxInputBytes` (a body, card or bundle), `maxDocumentBytes` (a JSON
/// document), `maxCatalogBytes` (an AI Catalog), `maxFieldLines` and
/// `maxHeadBytes` (the RFC 9421 message limits), `maxJwsBytes`,
/// `maxJwtBytes`, `defaultExpiresIn`.
pub fn limits() -> String {
    let l = crate::policy::Limits::default();
    json!({
        "maxInputBytes": MAX_INPUT_BYTES,
        "maxDocumentBytes": l.max_document_bytes,
        "maxCatalogBytes": crate::catalog::MAX_CATALOG_BYTES,
        "maxJwsBytes": l.max_jws_bytes,
        "maxJwtBytes": l.max_jwt_bytes,
        "maxFieldLines": crate::httpsig::message::MAX_FIELD_LINES,
        "maxHeadBytes": crate::httpsig::message::MAX_HEAD_BYTES,
        "defaultExpiresIn": super::DEFAULT_EXPIRES_IN,
        "maxKeySetBytes": MAX_KEY_SET_BYTES,
    })
    .to_string()
}

/// The largest input of operation `op` (`descriptor`, `card`, `catalog`,
/// anything else a body): what a binding checks before copying it.
pub fn max_input(op: &str) -> usize {
    match op {
        "descriptor" | "card" => crate::policy::Limits::default().max_document_bytes,
        "catalog" => crate::catalog::MAX_CATALOG_BYTES,
        _ => MAX_INPUT_BYTES,
    }
}

/// A report as its `--json` text.
///
/// # Errors
/// `internal` if it cannot be serialized.
pub fn report_text(r: &Report) -> Outcome<String> {
    // A report is rarely under 1 KiB: room for it at once rather than
    // growing from serde_json's 128 bytes.
    let mut out = Vec::with_capacity(1024);
    serde_json::to_writer(&mut out, r)
        .map_err(|e| Failure::bad_input("internal", format!("report: {e}")))?;
    String::from_utf8(out).map_err(|e| Failure::bad_input("internal", format!("report: {e}")))
}

/// The report of an input that could not be fetched, so that nothing of it
/// was checked: the `verify` command over `subject` (its URL), the error's
/// `code` and `message`, and the verdict `unavailable`, as `agentsig verify
/// URL --json` gives for a catalog or a descriptor it could not fetch. For
/// a binding that fetches with its runtime's own `fetch` (the WebAssembly
/// package), so that its error carries the report the other surfaces give.
///
/// # Errors
/// `internal` if the report cannot be serialized.
pub fn unavailable_report(subject: &str, code: &str, message: &str) -> Outcome<String> {
    let mut r = Report::error("verify", Some(subject), code, message);
    r.set_verdict(crate::report::Verdict::Unavailable);
    report_text(&r)
}

/// A failure as the JSON object a binding's host half turns into its typed
/// error: `{class, code, message, report}`, `class` the
/// [`ErrorKind`](super::ErrorKind) name.
pub fn failure_json(f: Failure) -> String {
    let report = f
        .report
        .and_then(|r| serde_json::to_value(&*r).ok())
        .unwrap_or(Value::Null);
    json!({
        "class": f.kind.name(),
        "code": f.code,
        "message": f.message,
        "report": report,
    })
    .to_string()
}

fn pairs_json(h: &[(String, String)]) -> String {
    Value::Array(h.iter().map(|(n, v)| json!([n, v])).collect()).to_string()
}

/// Sign with `key`: `op` is `descriptor` (the detached JWS), `card` (the
/// signed card's JSON; argument `force`), `request` or `response` (the
/// headers with the added fields, as JSON pairs); `data` the document or
/// body.
///
/// # Errors
/// The signing functions' failures; `usage` for an unknown operation or a
/// bad argument.
pub fn sign(key: &SigningKey, op: &str, a: &Args, data: Vec<u8>) -> Outcome<String> {
    match op {
        "descriptor" => sign_descriptor(&data, key),
        "card" => {
            let v = parse_json(&data, "card")?;
            sign_card(&v, key, a.bool("force")?).map(|c| c.to_string())
        }
        "request" => {
            let method = a.need_str("method")?;
            let url = a.need_str("url")?;
            let h = a.headers("headers")?;
            let mut o = RequestSigning {
                web_bot_auth: a.bool("webBotAuth")?,
                signature_agent: a.str("signatureAgent")?,
                ..Default::default()
            };
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
            sign_request(&method, &url, &h, data, key, &o).map(|h| pairs_json(&h))
        }
        "response" => {
            let status = status_code(a.i64("status")?.unwrap_or(-1))?;
            let h = a.headers("headers")?;
            let mut o = ResponseSigning::default();
            if let Some(l) = a.str("label")? {
                o.label = l;
            }
            o.created = a.i64("created")?;
            o.expires_in = a.u64("expiresIn")?;
            sign_response(status, &h, data, key, &o).map(|h| pairs_json(&h))
        }
        _ => Err(Failure::usage(format!("unknown operation {op:?}"))),
    }
}

fn key_list(list: &[Value], what: &str) -> Outcome<Vec<VerifyingKey>> {
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
/// `Signature-Agent` value) with `{jwks}` (JSON text) or `{keys}` (PEM or
/// JWK texts), by [`add_agent_keys`].
fn agent_key_sets(m: &Map<String, Value>) -> Outcome<StaticDirectory> {
    if m.len() > MAX_AGENTS {
        return Err(Failure::usage(format!(
            "agentKeys: {} agents, at most {MAX_AGENTS}",
            m.len()
        )));
    }
    let mut dir = StaticDirectory::new();
    for (url, v) in m {
        let keys = match (v.get("keys"), v.get("jwks")) {
            (Some(Value::Array(l)), _) => key_list(l, "agentKeys")?,
            (_, Some(Value::String(j))) => jwks_keys(j.as_bytes(), "agentKeys", MAX_INPUT_BYTES)?
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
        add_agent_keys(&mut dir, url, keys, Spelling::Camel)?;
    }
    Ok(dir)
}

/// The verifier of the options `o` (the Node.js package's names, with
/// durations and times in seconds: `maxAgeSeconds`, `skewSeconds`,
/// `nowSeconds`); `net` as for [`VerifierOptions::build`].
///
/// # Errors
/// `usage` or `BadKey` for options that cannot be used.
pub fn verifier(o: &Args, net: Option<&'static dyn Network>) -> Outcome<Facade> {
    let mut opts = VerifierOptions {
        spelling: Spelling::Camel,
        ..Default::default()
    };
    if let Some(j) = o.str("jwks")? {
        opts.keys
            .extend(jwks_keys(j.as_bytes(), "jwks", MAX_INPUT_BYTES)?);
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
        .map(|names| {
            names
                .iter()
                .map(|n| algorithm(n))
                .collect::<Outcome<Vec<_>>>()
        })
        .transpose()?;
    opts.max_age = o.u64("maxAgeSeconds")?;
    opts.skew = o.u64("skewSeconds")?;
    opts.strict_low_s = o.bool("strictLowS")?;
    opts.now = o.i64("nowSeconds")?;
    opts.replay_store = o.str("replayStore")?;
    opts.agents = o.strings("agents")?;
    opts.key_cache = o.str("keyCache")?;
    opts.fleet_secret_file = o.str("fleetSecretFile")?.map(std::path::PathBuf::from);
    opts.build(net)
}

/// Verify with `v`: `op` is `descriptor` (argument `jws`), `card`
/// (`requireAll`), `response` (`status`, `headers`, `request`: `{method,
/// url, headers}` with `data2` its body), `request` (`method`, `url`,
/// `headers`, `scheme`, `webBotAuth`, `authorities`, `strict`, and
/// `keySets`: the Web Bot Auth key sets the host fetched, see
/// [`key_set_urls`]), `audit`
/// (`tokens`, `issuer`, `audience`, `denyWarnings`), `catalog`
/// (`requireSigned`, `allowUnsigned`, `jws`: the catalog's detached JWS,
/// [`Facade::verify_catalog_signed`]) or `inspect` ([`inspect`]: the report whatever the
/// verdict); `data` the document or body. The report's `--json` text.
///
/// # Errors
/// The verification's [`Failure`]; `usage` for an unknown operation or a
/// bad argument.
pub fn verify(v: &Facade, op: &str, a: &Args, data: Vec<u8>, data2: Vec<u8>) -> Outcome<String> {
    let r = match op {
        "inspect" => return inspect(v, a, data),
        "descriptor" => v.verify_descriptor(&data, &a.need_str("jws")?)?,
        "card" => v.verify_card(&parse_json(&data, "card")?, a.bool("requireAll")?)?,
        "response" => {
            let status = status_code(a.i64("status")?.unwrap_or(-1))?;
            let h = a.headers("headers")?;
            match a.get("request") {
                None => v.verify_response(status, &h, data, None)?,
                Some(Value::Object(r)) => {
                    let r = Args(r.clone());
                    let (m, u, rh) = (
                        r.need_str("method")?,
                        r.need_str("url")?,
                        r.headers("headers")?,
                    );
                    v.verify_response(status, &h, data, Some((&m, &u, &rh, data2)))?
                }
                Some(_) => return Err(Failure::usage("request must be an object")),
            }
        }
        "request" => {
            let check = RequestCheck {
                method: a.need_str("method")?,
                target: a.need_str("url")?,
                headers: a.headers("headers")?,
                body: data,
                scheme: a.str("scheme")?,
                web_bot_auth: a.bool("webBotAuth")?,
                authorities: a.strings("authorities")?,
                strict: a.bool("strict")?,
            };
            return report_text(&request_with(v, check, a.get("keySets"))?);
        }
        "audit" => v.audit_delegation(
            &a.strings("tokens")?.unwrap_or_default(),
            a.strings("issuer")?,
            a.str("audience")?,
            a.bool("denyWarnings")?,
        )?,
        "catalog" => v.verify_catalog_signed(
            &data,
            a.str("jws")?.as_deref(),
            None,
            a.bool("requireSigned")?,
            a.bool("allowUnsigned")?,
        )?,
        _ => return Err(Failure::usage(format!("unknown operation {op:?}"))),
    };
    report_text(&r)
}

/// Verify the request `r` with `v` (the `request` operation of [`verify`],
/// for a binding that hands the request over in typed parts rather than
/// one JSON object): `key_sets` is the JSON text of the Web Bot Auth key
/// sets the host fetched (`{keySetUrl: {body, contentType}}`, see
/// [`key_set_urls`]), used in place of the verifier's own for this
/// verification. The report's `--json` text.
///
/// # Errors
/// The verification's [`Failure`]; `usage` for key sets that are not a
/// JSON object.
pub fn verify_request(v: &Facade, r: RequestCheck, key_sets: Option<&str>) -> Outcome<String> {
    report_text(&request_report(v, r, key_sets)?)
}

/// [`verify_request`] with the report in the tape form
/// ([`super::tape`]), which a JavaScript host reads without `JSON.parse`.
///
/// # Errors
/// As [`verify_request`].
pub fn verify_request_tape(v: &Facade, r: RequestCheck, key_sets: Option<&str>) -> Outcome<String> {
    use super::verify::{RequestResult, WEB_BOT_AUTH_COMMAND};
    let sets = key_sets
        .map(|t| {
            serde_json::from_str::<Value>(t).map_err(|_| Failure::usage("keySets are not JSON"))
        })
        .transpose()?;
    match request_result(v, r, sets.as_ref())? {
        // A verified request's report written from the verification's
        // results, without the report built first (the same values:
        // `webbotauth::Report::verified_view`).
        RequestResult::WebBotAuth { report, target } => {
            match report.verified_view(WEB_BOT_AUTH_COMMAND, Some(&target)) {
                Some(view) => super::tape::tape_of(&view),
                None => super::tape::report_tape(
                    &RequestResult::WebBotAuth { report, target }.into_report()?,
                ),
            }
        }
        done => super::tape::report_tape(&done.into_report()?),
    }
}

fn request_report(v: &Facade, r: RequestCheck, key_sets: Option<&str>) -> Outcome<Report> {
    let sets = key_sets
        .map(|t| {
            serde_json::from_str::<Value>(t).map_err(|_| Failure::usage("keySets are not JSON"))
        })
        .transpose()?;
    request_with(v, r, sets.as_ref())
}

fn request_with(v: &Facade, r: RequestCheck, key_sets: Option<&Value>) -> Outcome<Report> {
    request_result(v, r, key_sets)?.into_report()
}

fn request_result(
    v: &Facade,
    r: RequestCheck,
    key_sets: Option<&Value>,
) -> Outcome<super::verify::RequestResult> {
    let fetched;
    let v = match key_sets {
        None | Some(Value::Null) => v,
        Some(Value::Object(m)) => {
            fetched = v.with_key_sets(std::sync::Arc::new(self::key_sets(m)?));
            &fetched
        }
        Some(_) => return Err(Failure::usage("keySets must be an object")),
    };
    v.verify_request_result(r)
}

/// Inspect `data` with `v` ([`crate::inspect::inspect`]): the report of
/// `agentsig inspect --json` as text, whatever the verdict, with the
/// analysis in `details.inspection` (docs/inspect.md). Arguments: `kind`
/// (`http-request`, `http-response`, `descriptor`, `a2a-card`,
/// `ai-catalog`, `mcp-server-card`, `delegation`; default detected), `jws`
/// (a descriptor's or catalog's detached JWS), `scheme`, `authorities`, `maxAgeSeconds`
/// (default 300, the command line's) or `noMaxAge`, `request` (the raw
/// request a response answers), `requireAll`, `allowUnsigned`.
///
/// # Errors
/// `usage` for a bad argument; the inspection's [`Failure`] for input that
/// cannot be inspected (a verdict is not an error: it is in the report).
pub fn inspect(v: &Facade, a: &Args, data: Vec<u8>) -> Outcome<String> {
    use crate::inspect::{InspectOptions, Kind};
    let kind = match a.str("kind")? {
        None => None,
        Some(k) => {
            Some(Kind::from_name(&k).ok_or_else(|| Failure::usage(format!("unknown kind {k:?}")))?)
        }
    };
    let o = InspectOptions {
        kind,
        jws: a.str("jws")?,
        scheme: a.str("scheme")?.unwrap_or_else(|| "https".into()),
        authorities: a.strings("authorities")?,
        max_age: if a.bool("noMaxAge")? {
            None
        } else {
            Some(a.u64("maxAgeSeconds")?.unwrap_or(300))
        },
        request: a.str("request")?.map(String::into_bytes),
        require_all: a.bool("requireAll")?,
        allow_unsigned: a.bool("allowUnsigned")?,
    };
    let (report, _) = crate::inspect::inspect(&data, v, &o)?;
    report_text(&report)
}

/// The key sets a request's `Signature-Agent` field names (RFC 9651
/// Dictionary or the legacy String; draft-meunier-webbotauth-httpsig-protocol
/// section 5.2), for a host that fetches them itself: JSON
/// `[{"agent", "keySetUrl", "directory"}]`, `directory` true when the URL is
/// the agent's well-known directory (served with the directory media type,
/// [`crate::webbotauth::MEDIA_TYPE`]). Members that are not `https` URLs
/// the fetcher may use are left out (the verification reports them), and
/// so is a field that does not parse; at most
/// [`crate::webbotauth::MAX_KEY_SETS_PER_REQUEST`] URLs.
///
/// # Errors
/// The header checks' failures.
pub fn key_set_urls(a: &Args) -> Outcome<String> {
    use crate::webbotauth::{resolve_agent_url, Discovery, SignatureAgent, SIGNATURE_AGENT};
    let h = a.headers("headers")?;
    let lines: Vec<&[u8]> = h
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case(SIGNATURE_AGENT))
        .map(|(_, v)| v.as_bytes())
        .collect();
    let mut out: Vec<Value> = Vec::new();
    if lines.is_empty() {
        return Ok("[]".into());
    }
    let Ok(field) = SignatureAgent::parse(&lines) else {
        return Ok("[]".into());
    };
    for m in &field.members {
        let Ok(u) = resolve_agent_url(&m.value, m.kind.as_deref()) else {
            continue;
        };
        if out.iter().any(|o| o["keySetUrl"] == u.key_set_url.as_str()) {
            continue;
        }
        if out.len() == crate::webbotauth::MAX_KEY_SETS_PER_REQUEST {
            break;
        }
        out.push(json!({
            "agent": u.agent,
            "keySetUrl": u.key_set_url,
            "directory": u.discovery == Discovery::Directory,
        }));
    }
    Ok(Value::Array(out).to_string())
}

/// Largest key set a host hands over: 64 KiB, the bound of the `net`
/// feature's fetcher (a directory of
/// [`MAX_KEYS`](crate::webbotauth::directory::MAX_KEYS) RSA keys fits).
pub const MAX_KEY_SET_BYTES: usize = 64 * 1024;

/// The key sets a host fetched, `{keySetUrl: {body, contentType}}` (at
/// most [`MAX_AGENTS`]), each of a media type its discovery admits
/// ([`crate::webbotauth::media_type_accepted`]) and read by [`crate::webbotauth::parse_key_set`] (a
/// bounded JWK Set; at a well-known directory each `kid` must be the key's
/// RFC 7638 thumbprint). A set that cannot be read is left out, so the
/// verification reports its agent's keys as unavailable.
fn key_sets(m: &Map<String, Value>) -> Outcome<StaticDirectory> {
    use crate::webbotauth::{directory::parse_key_set, AgentUrl, Discovery};
    if m.len() > MAX_AGENTS {
        return Err(Failure::usage(format!(
            "keySets: {} key sets, at most {MAX_AGENTS}",
            m.len()
        )));
    }
    let mut dir = StaticDirectory::new();
    for (url, v) in m {
        let (Some(body), Some(ctype)) = (
            v.get("body").and_then(Value::as_str),
            v.get("contentType").and_then(Value::as_str),
        ) else {
            return Err(Failure::usage(
                "keySets: each value is {body, contentType}, as fetched",
            ));
        };
        if body.len() > MAX_KEY_SET_BYTES || !url.starts_with("https://") {
            continue;
        }
        let au = AgentUrl {
            value: url.clone(),
            agent: url.clone(),
            key_set_url: url.clone(),
            discovery: if url.ends_with(crate::webbotauth::WELL_KNOWN_PATH) {
                Discovery::Directory
            } else {
                Discovery::JwksUri
            },
        };
        if !crate::webbotauth::media_type_accepted(au.discovery, ctype) {
            continue;
        }
        if let Ok(set) = parse_key_set(&au, body.as_bytes()) {
            dir.insert(url, set.keys.into_iter().map(|(_, k)| k).collect());
        }
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_760_000_000;
    const AGENT: &str = "https://bot.example";
    const DIRECTORY: &str = "https://bot.example/.well-known/http-message-signatures-directory";

    fn key() -> SigningKey {
        SigningKey::from_ed25519_seed(&[9u8; 32]).unwrap()
    }

    /// A request signed under Web Bot Auth for `AGENT`, as `verify` args.
    fn request(key_sets: Value) -> Args {
        let signing = Args::parse(
            &json!({"method": "GET", "url": "https://site.example/p", "headers": [],
                    "webBotAuth": true, "signatureAgent": AGENT, "created": NOW})
            .to_string(),
        )
        .unwrap();
        let pairs: Vec<Vec<String>> =
            serde_json::from_str(&sign(&key(), "request", &signing, Vec::new()).unwrap()).unwrap();
        let flat: Vec<String> = pairs.into_iter().flatten().collect();
        Args::parse(
            &json!({"method": "GET", "url": "https://site.example/p", "headers": flat,
                    "webBotAuth": true, "keySets": key_sets})
            .to_string(),
        )
        .unwrap()
    }

    fn wba_verifier() -> Facade {
        let o = json!({"agentKeys": {}, "nowSeconds": NOW}).to_string();
        verifier(&Args::parse(&o).unwrap(), None).unwrap()
    }

    fn directory_body() -> String {
        json!({"keys": [crate::webbotauth::directory::directory_jwk(key().verifying_key())]})
            .to_string()
    }

    #[test]
    fn an_input_not_fetched_is_reported_unavailable_not_unverified() {
        let url = "https://catalog.example/ai-catalog.json";
        let text = unavailable_report(url, "fetch.failed", "catalog: HTTP 503").unwrap();
        let r: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(r["command"], "verify");
        assert_eq!(r["subject"], url);
        assert_eq!(r["verdict"], "unavailable");
        assert_eq!(r["verified"], false);
        assert_eq!(r["error"]["code"], "fetch.failed");
        assert_eq!(r["error"]["message"], "catalog: HTTP 503");
        assert_eq!(r["signatures"], json!([]));
    }

    #[test]
    fn the_key_set_urls_of_a_request_are_its_signature_agent_directories() {
        let a = request(json!({}));
        let urls: Value = serde_json::from_str(&key_set_urls(&a).unwrap()).unwrap();
        assert_eq!(
            urls,
            json!([{"agent": AGENT, "keySetUrl": DIRECTORY, "directory": true}])
        );
        let none = Args::parse(r#"{"headers": ["Signature-Agent", "http://plain.example"]}"#);
        assert_eq!(key_set_urls(&none.unwrap()).unwrap(), "[]");
    }

    #[test]
    fn a_fetched_key_set_verifies_only_with_the_directory_media_type() {
        let v = wba_verifier();
        let ok = request(json!({DIRECTORY: {"body": directory_body(),
            "contentType": "application/http-message-signatures-directory+json; charset=utf-8"}}));
        let r = verify(&v, "request", &ok, Vec::new(), Vec::new()).unwrap();
        assert!(r.contains(r#""verdict":"verified""#), "{r}");
        // The same keys served as plain JSON at a well-known directory are
        // refused (section 5.5), so the agent's keys are not available.
        let plain = request(json!({DIRECTORY: {"body": directory_body(),
            "contentType": "application/json"}}));
        let f = verify(&v, "request", &plain, Vec::new(), Vec::new()).unwrap_err();
        assert!(f.kind.is_verdict(), "{:?}: {}", f.kind, f.message);
        assert!(!f.report.unwrap().verified);
        let bad = request(json!({DIRECTORY: "a body without its type"}));
        assert_eq!(
            verify(&v, "request", &bad, Vec::new(), Vec::new())
                .unwrap_err()
                .code,
            "usage"
        );
    }

    #[test]
    fn media_types_by_discovery() {
        use crate::webbotauth::{media_type_accepted, Discovery};
        assert!(media_type_accepted(
            Discovery::Directory,
            "Application/HTTP-Message-Signatures-Directory+JSON"
        ));
        assert!(!media_type_accepted(
            Discovery::Directory,
            "application/jwk-set+json"
        ));
        assert!(media_type_accepted(
            Discovery::JwksUri,
            "application/json; charset=utf-8"
        ));
        assert!(!media_type_accepted(Discovery::JwksUri, "text/html"));
    }
}
