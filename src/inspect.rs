//! See what was signed: one input (an RFC 9421 request or response, a
//! descriptor with its detached JWS, an A2A Agent Card, an AI Catalog, a
//! delegation token chain) analysed into an [`Inspection`]: the signature
//! base line by line with each line's source (RFC 9421 section 2.5), the
//! parameters, each signature's verdict and reason, the RFC 8785 canonical
//! form and its digest (RFC 7515 section 5.2 signing input), the delegation
//! hops (RFC 8693 section 4.1) and the catalog's entries.
//!
//! Every verdict comes from the verifier the command line uses, through
//! the [`Facade`] the bindings use: the verdict words and reason codes are
//! exactly those of `agentsig verify`, `agentsig http verify` and
//! `agentsig delegation audit` (docs/report.md). The signature base shown is
//! the one the RFC 9421 verifier built ([`HttpPolicy::keep_base`]), split by
//! [`base_lines`]. No network: the keys are the facade's.
//!
//! ```
//! use agentsig::facade::{public_jwk, sign_descriptor, VerifierOptions};
//! use agentsig::inspect::{inspect, InspectOptions, Kind};
//! use agentsig::trust::KeySource;
//!
//! let key = agentsig::SigningKey::from_ed25519_seed(&[4u8; 32])?;
//! let doc = br#"{"name":"planner","url":"https://planner.example/"}"#;
//! let mut o = VerifierOptions::default();
//! o.keys.add(key.verifying_key().clone(), KeySource::Pinned);
//! let v = o.build(None)?;
//! let opts = InspectOptions { jws: Some(sign_descriptor(doc, &key)?), ..Default::default() };
//! let (report, i) = inspect(doc, &v, &opts)?;
//! assert_eq!(i.kind, Kind::Descriptor);
//! assert_eq!(i.verdict, "verified");
//! assert_eq!(report.details["inspection"]["signatures"][0]["verdict"], "valid");
//! assert_eq!(
//!     i.signatures[0].canonical.as_deref(),
//!     Some(r#"{"name":"planner","url":"https://planner.example/"}"#)
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::facade::{authorities_policy, Facade, Failure, Outcome, MAX_INPUT_BYTES};
use crate::httpsig::base::{base_lines, signature_base, BaseLine};
use crate::httpsig::{ComponentId, HttpPolicy, HttpSigError, Message};
use crate::report::{Problem, Report, SignatureResult, Verdict};
use serde::Serialize;
use serde_json::{Map, Value};

/// The largest input inspected: the command line's bound on any input.
pub const MAX_INSPECT_BYTES: usize = MAX_INPUT_BYTES;

/// The command name of an inspection report.
pub const COMMAND: &str = "inspect";

/// What an input is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Kind {
    /// An RFC 9421 signed HTTP/1.1 request (RFC 9112 section 3).
    HttpRequest,
    /// An RFC 9421 signed HTTP/1.1 response (RFC 9112 section 4).
    HttpResponse,
    /// A JSON document with a detached JWS over its RFC 8785 form
    /// (draft-narvaneni-agent-uri-03 section 10.3).
    Descriptor,
    /// An A2A Agent Card with embedded signatures (A2A v1.0 section 8.4).
    A2aCard,
    /// An AI Catalog with Trust Manifests.
    AiCatalog,
    /// An MCP Server Card with a detached JWS.
    McpServerCard,
    /// Delegation tokens, one JWT a line, subject token first (RFC 8693).
    Delegation,
}

impl Kind {
    /// The name as the report writes it (`http-request`, `a2a-card`...).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::HttpRequest => "http-request",
            Kind::HttpResponse => "http-response",
            Kind::Descriptor => "descriptor",
            Kind::A2aCard => "a2a-card",
            Kind::AiCatalog => "ai-catalog",
            Kind::McpServerCard => "mcp-server-card",
            Kind::Delegation => "delegation",
        }
    }

    /// The kind named `n` ([`Kind::as_str`]).
    pub fn from_name(n: &str) -> Option<Kind> {
        [
            Kind::HttpRequest,
            Kind::HttpResponse,
            Kind::Descriptor,
            Kind::A2aCard,
            Kind::AiCatalog,
            Kind::McpServerCard,
            Kind::Delegation,
        ]
        .into_iter()
        .find(|k| k.as_str() == n)
    }
}

/// What the caller gives beside the input and the keys. The defaults are
/// those of the commands whose verdicts are reported.
#[derive(Clone, Debug)]
pub struct InspectOptions {
    /// The kind, instead of detecting it from the content.
    pub kind: Option<Kind>,
    /// The detached JWS of a descriptor, MCP Server Card or AI Catalog.
    pub jws: Option<String>,
    /// The scheme an origin-form request was received over (default `https`).
    pub scheme: String,
    /// The site's own authorities (`host[:port]`): a request signature must
    /// cover `@authority` or `@target-uri` naming one (RFC 9421 section
    /// 7.2.1). `None`: any authority, as `http verify --any-authority`.
    pub authorities: Option<Vec<String>>,
    /// The largest age of an RFC 9421 `created` (`http verify --max-age`,
    /// default 300 seconds); `None` as `--no-max-age`.
    pub max_age: Option<u64>,
    /// The request a response answers, raw HTTP/1.1 (for `;req` components).
    pub request: Option<Vec<u8>>,
    /// A2A card: every signature must verify (`verify --require-all`).
    pub require_all: bool,
    /// AI Catalog: an unsigned catalog is reported, not refused
    /// (`verify --allow-unsigned`).
    pub allow_unsigned: bool,
}

impl Default for InspectOptions {
    fn default() -> InspectOptions {
        InspectOptions {
            kind: None,
            jws: None,
            scheme: "https".into(),
            authorities: None,
            max_age: Some(300),
            request: None,
            require_all: false,
            allow_unsigned: false,
        }
    }
}

/// The analysis of one input (`details.inspection` of the report).
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct Inspection {
    /// What the input is.
    pub kind: Kind,
    /// The report's verdict word (`verified`, `not-verified`, `unsigned`,
    /// `unavailable`).
    pub verdict: &'static str,
    /// The command whose verdict this is (`http verify`, `verify`,
    /// `delegation audit`).
    pub command: &'static str,
    /// Why it is not verified: the report's `error`.
    pub error: Option<Problem>,
    /// One entry per signature.
    pub signatures: Vec<SignatureView>,
    /// The delegation hops, subject token first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub chain: Vec<Hop>,
    /// The catalog's entries as a tree.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub catalog: Option<CatalogView>,
    /// The report's checks that did not pass (errors and warnings), for a
    /// text form; in the report they are its `checks`.
    #[serde(skip)]
    pub failed_checks: Vec<crate::report::CheckResult>,
}

/// One signature, what it covers and how it was judged.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct SignatureView {
    /// `rfc9421`, `jws` or `jwt`.
    pub form: &'static str,
    /// The RFC 9421 label, the JWS signature index, the card's
    /// `signatures` index, or the hop index.
    pub label: String,
    /// The report's word: `valid`, `invalid`, `refused`, `no-trusted-key`,
    /// `not-checked`.
    pub verdict: &'static str,
    /// The reason code when not valid.
    pub reason: Option<String>,
    /// The reason for people.
    pub message: Option<String>,
    /// The RFC 9421 signature parameters (section 2.3), or the JWS / JWT
    /// protected header.
    pub params: Map<String, Value>,
    /// The covered components (RFC 9421), unquoted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub covered: Vec<String>,
    /// The RFC 9421 signature base, a line per component.
    pub base: Option<Vec<BaseLine>>,
    /// Why the base could not be built.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_error: Option<String>,
    /// The RFC 8785 canonical form signed (descriptor, card).
    pub canonical: Option<String>,
    /// Its SHA-256, hex.
    pub canonical_sha256: Option<String>,
    /// The JWS signing input, `BASE64URL(header).payload` (RFC 7515 section 5.1).
    pub signing_input: Option<String>,
}

/// One delegation hop.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct Hop {
    /// Its index, subject token 0.
    pub hop: usize,
    /// `iss`.
    pub issuer: Value,
    /// `sub`.
    pub subject: Value,
    /// The current actor: the outermost `act` `sub` (RFC 8693 section 4.1).
    pub actor: Value,
    /// The scope values.
    pub scope: Value,
    /// `iat`.
    pub iat: Value,
    /// `exp`.
    pub exp: Value,
    /// Its signature verified and no error-severity check of it failed.
    pub ok: bool,
    /// The first failed check's code.
    pub reason: Option<String>,
    /// Its message.
    pub message: Option<String>,
}

/// An AI Catalog as a tree.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct CatalogView {
    /// The host's Trust Manifest status (`null`: none).
    pub host: Value,
    /// The host identity's status (`null`: not checked).
    pub host_identity: Value,
    /// The status of a signature over the whole catalog (`null`: none).
    pub catalog_signature: Value,
    /// The root catalog's entries.
    pub entries: Vec<EntryView>,
}

/// One catalog entry.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct EntryView {
    /// Its RFC 6901 pointer.
    pub pointer: String,
    /// `identifier`.
    pub identifier: Value,
    /// `mediaType`.
    pub media_type: Value,
    /// What binds the artifact to a trusted key.
    pub binding: Value,
    /// The artifact's status.
    pub artifact: Value,
    /// The Trust Manifest's status.
    pub manifest: Value,
    /// Its `catalog.entry` check passed.
    pub passed: bool,
    /// The entries of a nested catalog.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<EntryView>,
}

/// The kind of `input` from its content: a status line is a response, a
/// request line a request (RFC 9112 sections 3 and 4), JSON by its members
/// ([`crate::formats::detect_bytes`]; an A2A card with `jws` given is a
/// descriptor), lines of three dot-separated base64url parts delegation
/// tokens (RFC 7519 section 3).
pub fn detect(input: &[u8], jws_given: bool) -> Option<Kind> {
    use crate::formats::Format;
    let text = std::str::from_utf8(input).ok()?;
    let t = text.trim_start();
    if t.starts_with('{') {
        return Some(match crate::formats::detect_bytes(input) {
            Ok((Format::AiCatalog, _)) => Kind::AiCatalog,
            Ok((Format::A2a, _)) if !jws_given => Kind::A2aCard,
            Ok((Format::McpServerCard, _)) => Kind::McpServerCard,
            _ => Kind::Descriptor,
        });
    }
    let first = t.lines().next()?;
    if first.starts_with("HTTP/") {
        return Some(Kind::HttpResponse);
    }
    let parts: Vec<&str> = first.split(' ').collect();
    if parts.len() == 3
        && parts[2].starts_with("HTTP/")
        && !parts[0].is_empty()
        && parts[0].bytes().all(|b| b.is_ascii_alphabetic())
    {
        return Some(Kind::HttpRequest);
    }
    let jwt = |l: &str| {
        l.split('.').count() == 3
            && l.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    };
    let mut lines = t
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .peekable();
    (lines.peek().is_some() && lines.all(jwt)).then_some(Kind::Delegation)
}

/// Inspect `input` with the keys and policy of `v`: the report of the
/// command that judges this kind of input (its verdict, signatures,
/// checks and error unchanged, `command` set to [`COMMAND`]) with the
/// [`Inspection`] in `details.inspection`, and the inspection.
///
/// # Errors
/// A [`Failure`] for input that cannot be inspected: above
/// [`MAX_INSPECT_BYTES`], of no known kind, malformed, or missing what its
/// kind needs (a descriptor's `jws`; keys for a catalog). A verification
/// that fails is not an error: its report says why.
pub fn inspect(input: &[u8], v: &Facade, o: &InspectOptions) -> Outcome<(Report, Inspection)> {
    if input.len() > MAX_INSPECT_BYTES {
        return Err(Failure::too_large(
            "the input",
            input.len(),
            MAX_INSPECT_BYTES,
        ));
    }
    let kind = match o.kind {
        Some(k) => k,
        None => detect(input, o.jws.is_some()).ok_or_else(|| {
            Failure::malformed(
                "not an HTTP message, a JSON document or a delegation token chain: \
                 give the kind (http-request, http-response, descriptor, a2a-card, ai-catalog, \
                 mcp-server-card, delegation)",
            )
        })?,
    };
    let (command, mut report, signatures, chain, catalog) = match kind {
        Kind::HttpRequest | Kind::HttpResponse => {
            let (r, s) = http(input, v, o)?;
            ("http verify", r, s, Vec::new(), None)
        }
        Kind::Descriptor | Kind::McpServerCard => {
            let (r, s) = descriptor(input, v, o)?;
            ("verify", r, s, Vec::new(), None)
        }
        Kind::A2aCard => {
            let (r, s) = card(input, v, o)?;
            ("verify", r, s, Vec::new(), None)
        }
        Kind::AiCatalog => {
            // The catalog's detached JWS (FILE.jws, draft-narvaneni-agent-uri-03
            // section 10.3) binds its inline artifacts, as for `verify FILE`.
            let r = settled(v.verify_catalog_signed(
                input,
                o.jws.as_deref(),
                None,
                false,
                o.allow_unsigned,
            ))?;
            let c = catalog_tree(&r);
            ("verify", r, Vec::new(), Vec::new(), Some(c))
        }
        Kind::Delegation => {
            let (r, s, c) = delegation(input, v)?;
            ("delegation audit", r, s, c, None)
        }
    };
    let i = Inspection {
        kind,
        verdict: report.verdict.as_str(),
        command,
        error: report.error.clone(),
        signatures,
        chain,
        catalog,
        failed_checks: report
            .checks
            .iter()
            .filter(|c| !c.passed)
            .cloned()
            .collect(),
    };
    report.command = COMMAND.to_owned();
    report.detail("inspection", &i);
    Ok((report, i))
}

/// The report of a verification, whether it verified or not; a failure
/// without a report (bad input) stays one.
fn settled(r: Outcome<Report>) -> Outcome<Report> {
    match r {
        Ok(r) => Ok(r),
        Err(Failure {
            report: Some(r), ..
        }) => Ok(*r),
        Err(f) => Err(f),
    }
}

fn view(form: &'static str, s: &SignatureResult) -> SignatureView {
    SignatureView {
        form,
        label: s.id.clone(),
        verdict: s.verdict,
        reason: s.reason.as_ref().map(|p| p.code.clone()),
        message: s.reason.as_ref().map(|p| p.message.clone()),
        params: Map::new(),
        covered: s.covered.clone(),
        base: None,
        base_error: None,
        canonical: None,
        canonical_sha256: None,
        signing_input: None,
    }
}

/// An RFC 9421 message, as `agentsig http verify FILE --any-authority`
/// (or `--authority`) verifies it: the responses' default components
/// `@status`, `content-type`, `content-digest`
/// (draft-narvaneni-agent-uri-03 section 10.3), the verifier keeping each
/// base it built.
fn http(input: &[u8], v: &Facade, o: &InspectOptions) -> Outcome<(Report, Vec<SignatureView>)> {
    let parse = |b: &[u8], what: &str| {
        Message::parse_keep_raw(b, &o.scheme)
            .map_err(|e| Failure::malformed(format!("{what}: {e}")))
    };
    let msg = parse(input, "the HTTP message")?;
    let related = o
        .request
        .as_deref()
        .map(|r| parse(r, "the request"))
        .transpose()?;
    let mut hp: HttpPolicy = v.verifier().http_policy().clone();
    hp.keep_base = true;
    hp.max_age = o.max_age;
    if !msg.is_request() {
        hp.required = crate::httpsig::descriptor_response_components();
    } else {
        hp.authorities = o
            .authorities
            .as_deref()
            .map(authorities_policy)
            .transpose()?;
    }
    let ver = v.verifier().to_builder().http(hp.clone()).build();
    let r = match ver.verify_http(&msg, related.as_ref()) {
        Ok(r) => r,
        Err(HttpSigError::NotVerified(r)) => *r,
        Err(e) => {
            // No signature field to read: the CLI's `header` error.
            let mut rep = Report::error("http verify", None, "header", &e.to_string());
            rep.set_verdict(Verdict::NotVerified);
            return Ok((rep, Vec::new()));
        }
    };
    let report = Report::from_http("http verify", None, &r);
    let lookup = crate::httpsig::sf_type_lookup(&hp.sf_types);
    let mut views = Vec::new();
    for (l, s) in r.results.iter().zip(&report.signatures) {
        let mut sv = view("rfc9421", s);
        let covered: Vec<ComponentId> = l
            .covered
            .iter()
            .filter_map(|c| ComponentId::parse(c).ok())
            .collect();
        sv.covered = l
            .covered
            .iter()
            .map(|c| crate::report::unquote_component(c))
            .collect();
        // In the order RFC 9421 section 2.3 lists them.
        let p = &mut sv.params;
        for (k, val) in [("created", l.created), ("expires", l.expires)] {
            if let Some(x) = val {
                p.insert(k.into(), x.into());
            }
        }
        if let Some(x) = &l.nonce {
            p.insert("nonce".into(), x.clone().into());
        }
        if let Some(a) = l.alg {
            p.insert("alg".into(), a.httpsig_name().into());
        }
        for (k, val) in [("keyid", &l.keyid), ("tag", &l.tag)] {
            if let Some(x) = val {
                p.insert(k.into(), x.clone().into());
            }
        }
        // The base the verifier built; when a policy check refused the
        // signature before it was built, the same code builds it here.
        let base = match (&l.signature_base, &l.params_value) {
            (Some(b), _) => Some(Ok(b.clone())),
            (None, Some(pv)) if covered.len() == l.covered.len() => Some(signature_base(
                &msg,
                related.as_ref(),
                &covered,
                pv,
                &lookup,
            )),
            _ => None,
        };
        match base {
            Some(Ok(b)) => sv.base = Some(base_lines(&b, &covered)),
            Some(Err(e)) => sv.base_error = Some(e.to_string()),
            None => {}
        }
        views.push(sv);
    }
    Ok((report, views))
}

/// The JWS parts of a signature over `payload`: its protected header and
/// signing input (RFC 7515 section 5.1; `b64: false` as RFC 7797 section 3).
fn jws_parts(sv: &mut SignatureView, protected_b64: &str, payload: &[u8]) {
    let Ok(h) = crate::jws::ProtectedHeader::decode(protected_b64) else {
        return;
    };
    sv.params = (*h.members).clone();
    let raw = sv.params.get("b64") == Some(&Value::Bool(false));
    let body = if raw {
        String::from_utf8_lossy(payload).into_owned()
    } else {
        crate::b64::encode(payload)
    };
    sv.signing_input = Some(format!("{protected_b64}.{body}"));
    sv.canonical = Some(String::from_utf8_lossy(payload).into_owned());
    sv.canonical_sha256 = Some(crate::descriptor::sha256_hex(payload));
}

/// A descriptor with its detached JWS, as `agentsig verify FILE --jws F`.
fn descriptor(
    input: &[u8],
    v: &Facade,
    o: &InspectOptions,
) -> Outcome<(Report, Vec<SignatureView>)> {
    if let Err(e) = crate::json::parse_strict(input) {
        return Err(Failure::malformed(format!(
            "the document is not strict I-JSON: {e}"
        )));
    }
    let Some(jws) = &o.jws else {
        return Err(Failure::usage(
            "a descriptor is signed by a detached JWS over its RFC 8785 form \
             (draft-narvaneni-agent-uri-03 section 10.3): give the JWS",
        ));
    };
    let report = settled(v.verify_descriptor(input, jws))?;
    let canonical = crate::jcs::canonicalize(input).ok();
    let parsed = crate::jws::ParsedJws::parse(jws).ok();
    let mut views = Vec::new();
    for (i, s) in report.signatures.iter().enumerate() {
        let mut sv = view("jws", s);
        if let (Some(c), Some(p)) = (
            &canonical,
            parsed.as_ref().and_then(|p| p.signatures.get(i)),
        ) {
            jws_parts(&mut sv, &p.protected.encoded, c);
        }
        views.push(sv);
    }
    Ok((report, views))
}

/// An A2A Agent Card's embedded signatures, as `agentsig verify CARD`: the
/// payload is the RFC 8785 form of the signed card the verifier reports
/// (`details.signed_card`, A2A v1.0 section 8.4.2).
fn card(input: &[u8], v: &Facade, o: &InspectOptions) -> Outcome<(Report, Vec<SignatureView>)> {
    let value =
        crate::json::parse_strict(input).map_err(|e| Failure::malformed(format!("card: {e}")))?;
    let report = settled(v.verify_card(&value, o.require_all))?;
    let payload = report
        .details
        .get("signed_card")
        .and_then(|c| crate::jcs::canonicalize_value(c).ok());
    let entries = value.get("signatures").and_then(Value::as_array);
    let mut views = Vec::new();
    for s in &report.signatures {
        let mut sv = view("jws", s);
        let protected =
            s.id.parse::<usize>()
                .ok()
                .and_then(|i| entries?.get(i)?.get("protected")?.as_str());
        if let (Some(p), Some(pl)) = (protected, &payload) {
            jws_parts(&mut sv, p, pl);
        }
        views.push(sv);
    }
    Ok((report, views))
}

/// A delegation chain, one token a line, as `agentsig delegation audit`.
fn delegation(input: &[u8], v: &Facade) -> Outcome<(Report, Vec<SignatureView>, Vec<Hop>)> {
    let text = std::str::from_utf8(input)
        .map_err(|_| Failure::malformed("delegation tokens are ASCII text"))?;
    let tokens: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect();
    let report = settled(v.audit_delegation(&tokens, None, None, false))?;
    let empty = Vec::new();
    let hops = report
        .details
        .get("hops")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let mut views = Vec::new();
    let mut chain = Vec::new();
    for (i, s) in report.signatures.iter().enumerate() {
        let mut sv = view("jwt", s);
        if let Some(t) = tokens.get(i) {
            if let Some((si, _)) = t.rsplit_once('.') {
                sv.signing_input = Some(si.to_owned());
                if let Some((h, _)) = si.split_once('.') {
                    if let Ok(ph) = crate::jws::ProtectedHeader::decode(h) {
                        sv.params = (*ph.members).clone();
                    }
                }
            }
        }
        views.push(sv);
    }
    for (i, h) in hops.iter().enumerate() {
        let failed = report
            .checks
            .iter()
            .find(|c| c.hop == Some(i) && !c.passed && c.severity == "error");
        let actor = h
            .get("actors_chronological")
            .and_then(Value::as_array)
            .and_then(|a| a.last())
            .and_then(|a| a.get("sub"))
            .cloned()
            .unwrap_or(Value::Null);
        let field = |k: &str| h.get(k).cloned().unwrap_or(Value::Null);
        chain.push(Hop {
            hop: i,
            issuer: field("iss"),
            subject: field("sub"),
            actor,
            scope: field("scope"),
            iat: field("iat"),
            exp: field("exp"),
            ok: h.get("verified") == Some(&Value::Bool(true)) && failed.is_none(),
            reason: failed.map(|c| c.code.clone()),
            message: failed.map(|c| c.message.clone()),
        });
    }
    Ok((report, views, chain))
}

/// The catalog's entries (`details.entries`, flat with RFC 6901 pointers)
/// as a tree: an entry whose pointer extends another's is its child.
fn catalog_tree(r: &Report) -> CatalogView {
    let empty = Vec::new();
    let entries = r
        .details
        .get("entries")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let passed: Vec<bool> = r
        .checks
        .iter()
        .filter(|c| c.code == "catalog.entry")
        .map(|c| c.passed)
        .collect();
    let flat: Vec<EntryView> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let f = |k: &str| e.get(k).cloned().unwrap_or(Value::Null);
            EntryView {
                pointer: e
                    .get("pointer")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                identifier: f("identifier"),
                media_type: f("media_type"),
                binding: f("binding"),
                artifact: f("artifact"),
                manifest: f("manifest"),
                passed: passed.get(i).copied().unwrap_or(false),
                children: Vec::new(),
            }
        })
        .collect();
    let d = |k: &str| r.details.get(k).cloned().unwrap_or(Value::Null);
    CatalogView {
        host: d("host"),
        host_identity: d("host_identity"),
        catalog_signature: d("catalog_signature"),
        entries: nest(flat),
    }
}

/// Nest entries: an entry whose pointer is `P/data/entries/N` goes under
/// the entry at `P` (a nested inline catalog, AI Catalog "Nested
/// Catalogs"); one whose parent is not listed stays at the top. Linear in
/// the number of entries.
fn nest(flat: Vec<EntryView>) -> Vec<EntryView> {
    let index: std::collections::HashMap<String, usize> = flat
        .iter()
        .enumerate()
        .map(|(i, e)| (e.pointer.clone(), i))
        .collect();
    let parent: Vec<Option<usize>> = flat
        .iter()
        .enumerate()
        .map(|(i, e)| {
            e.pointer
                .rsplit_once("/data/entries/")
                .and_then(|(p, _)| index.get(p).copied())
                .filter(|&p| p < i)
        })
        .collect();
    let mut slots: Vec<Option<EntryView>> = flat.into_iter().map(Some).collect();
    // Children come after their parent: attach from the last entry back,
    // so each child is complete when it is moved under its parent.
    let mut roots = Vec::new();
    for i in (0..slots.len()).rev() {
        let Some(mut e) = slots.get_mut(i).and_then(Option::take) else {
            continue;
        };
        // Its children (all after it) were pushed last first.
        e.children.reverse();
        match parent.get(i).copied().flatten() {
            Some(p) => {
                if let Some(Some(pe)) = slots.get_mut(p) {
                    pe.children.push(e);
                }
            }
            None => roots.push(e),
        }
    }
    roots.reverse();
    roots
}
