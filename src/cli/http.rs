//! `agentsig http sign`, `agentsig http verify` (RFC 9421 over raw HTTP
//! messages) and `agentsig digest` (RFC 9530).

use super::TrustedKeyArgs;
use super::{load_signing, parse_alg, read_input, CliError, CliResult};
use agentsig::clock::{FixedClock, SystemClock};
use agentsig::digest::{self, DigestAlgorithm};
use agentsig::httpsig::{
    self, accept, ComponentId, HttpPolicy, HttpSigError, Message, SignatureSpec, VerifyReport,
};
use agentsig::report::Report;
use agentsig::verifier::Verifier;
use agentsig::Algorithm;
use clap::{Args, Subcommand};
use std::io::Write;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum HttpCommand {
    /// Sign a raw HTTP message (RFC 9421): prints the message with Signature-Input and Signature added.
    Sign(HttpSignArgs),
    /// Verify the signatures of a raw HTTP message (RFC 9421): one result per label.
    Verify(HttpVerifyArgs),
}

impl HttpCommand {
    /// The message file, for the report's `subject`.
    pub fn subject(&self) -> Option<String> {
        Some(match self {
            HttpCommand::Sign(a) => a.file.clone(),
            HttpCommand::Verify(a) => a.file.clone(),
        })
    }
}

pub fn run(c: HttpCommand) -> CliResult {
    match c {
        HttpCommand::Sign(a) => sign(a),
        HttpCommand::Verify(a) => verify(a),
    }
}

use super::args::parse_duration;

fn parse_component(s: &str) -> Result<ComponentId, String> {
    ComponentId::parse(s).map_err(|e| e.to_string())
}

fn parse_digest_alg(s: &str) -> Result<DigestAlgorithm, String> {
    s.parse::<DigestAlgorithm>().map_err(|e| e.to_string())
}

fn now_unix() -> i64 {
    use agentsig::clock::Clock;
    SystemClock.now()
}

fn read_message(path: &str, scheme: &str) -> Result<Message, CliError> {
    let data = read_input(path)?;
    Message::parse_keep_raw(&data, scheme).map_err(|e| CliError::malformed(format!("{path}: {e}")))
}

#[derive(Args)]
pub struct HttpSignArgs {
    /// Raw HTTP/1.1 message (request or response), or - for standard input.
    file: String,
    /// Private key to sign with: a path, or env:NAME.
    #[arg(long, allow_hyphen_values = true, value_name = "KEY")]
    key: String,
    /// Algorithm of the private key (RFC 9421 or JOSE name): required for RSA keys, checked
    /// against all others.
    #[arg(long, value_parser = parse_alg, value_name = "ALG")]
    alg: Option<Algorithm>,
    /// Key id, sent as the keyid parameter; default: the key's own kid, else its RFC 7638
    /// thumbprint.
    #[arg(
        long = "kid",
        visible_alias = "keyid",
        allow_hyphen_values = true,
        value_name = "KID"
    )]
    keyid: Option<String>,
    /// Signature label.
    #[arg(long, allow_hyphen_values = true, default_value = "sig1")]
    label: String,
    /// Covered component, in order, e.g. @method, content-type, "@query-param";name="id",
    /// content-digest;req. Repeatable. Default: responses @status content-type content-digest;
    /// requests @method @authority @path, plus content-type and content-digest when present.
    #[arg(long = "component", short = 'c', value_parser = parse_component, value_name = "COMPONENT")]
    components: Vec<ComponentId>,
    /// created parameter (Unix seconds); default: now.
    #[arg(long, allow_hyphen_values = true, value_name = "UNIX-SECONDS")]
    created: Option<i64>,
    /// Leave out the created parameter.
    #[arg(long, conflicts_with = "created")]
    no_created: bool,
    /// Add expires = created + DURATION (seconds, or 5m, 12h, 30d).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    expires_in: Option<u64>,
    /// nonce parameter.
    #[arg(long, allow_hyphen_values = true)]
    nonce: Option<String>,
    /// tag parameter.
    #[arg(long, allow_hyphen_values = true)]
    tag: Option<String>,
    /// Leave out the alg parameter (it is included by default).
    #[arg(long)]
    no_alg: bool,
    /// The request this response answers, a raw HTTP/1.1 message file (for ;req components and
    /// --accept-signature).
    #[arg(long, allow_hyphen_values = true, value_name = "FILE")]
    request: Option<String>,
    /// Honour the Accept-Signature field of --request (RFC 9421 section 5): its member
    /// labelled --label (or its only member) gives the components and parameters.
    #[arg(long, requires = "request")]
    accept_signature: bool,
    /// Add a Content-Digest field of the body first (unless present). Repeat for several algorithms.
    #[arg(long, value_parser = parse_digest_alg, value_name = "ALG")]
    add_content_digest: Vec<DigestAlgorithm>,
    /// Scheme the message was received over, for @scheme/@target-uri of origin-form requests.
    #[arg(long, allow_hyphen_values = true, default_value = "https")]
    scheme: String,
    /// Where to write the signed message; default: standard output.
    #[arg(long, allow_hyphen_values = true, value_name = "FILE")]
    out: Option<String>,
    /// Print one JSON report (agentsig.report/1, docs/report.md) instead of the message: label,
    /// Signature-Input, Signature and signature base in its details.
    #[arg(long)]
    json: bool,
    /// File holding the passphrase of an encrypted PKCS#8 private key (else
    /// $AGENTSIG_PASSPHRASE).
    #[arg(long, allow_hyphen_values = true, value_name = "FILE")]
    passphrase_file: Option<String>,
    #[command(flatten)]
    wba: super::webbotauth::WbaSignArgs,
}

fn sign(a: HttpSignArgs) -> CliResult {
    let mut m = read_message(&a.file, &a.scheme)?;
    if a.wba.profile.is_some() {
        let i = super::webbotauth::SignInput {
            file: &a.file,
            key: &a.key,
            alg: a.alg,
            passphrase_file: a.passphrase_file.as_deref(),
            label: &a.label,
            created: a.created,
            expires_in: a.expires_in,
            nonce: a.nonce.as_deref(),
            json: a.json,
            out: a.out.as_deref(),
        };
        return super::webbotauth::http_sign(m, i, &a.wba);
    }
    let key = load_signing(&a.key, a.alg, None, a.passphrase_file.as_deref())?;
    let keyid = a.keyid.clone().unwrap_or_else(|| key.kid_or_thumbprint());
    let related = a
        .request
        .as_deref()
        .map(|r| read_message(r, &a.scheme))
        .transpose()?;
    let mut extra: Vec<(String, String)> = Vec::new();
    if !a.add_content_digest.is_empty() && m.field_lines("content-digest", false).next().is_none() {
        let v = digest::field_value(&m.body, &a.add_content_digest);
        m.add_header("Content-Digest", &v);
        extra.push(("Content-Digest".into(), v));
    }
    let created = if a.no_created {
        None
    } else {
        Some(a.created.unwrap_or_else(now_unix))
    };
    let spec = if a.accept_signature {
        let req = related
            .as_ref()
            .ok_or_else(|| CliError::usage("--accept-signature needs --request"))?;
        let lifetime = i64::try_from(a.expires_in.unwrap_or(300)).unwrap_or(300);
        accept::negotiate(
            req,
            &a.label,
            &key,
            &keyid,
            created.unwrap_or_else(now_unix),
            lifetime,
        )
        .map_err(|e| {
            CliError::failed(format!("cannot honour Accept-Signature: {e}"))
                .with_kind("http.accept-signature")
        })?
    } else {
        let mut spec = SignatureSpec::new(a.label.clone());
        spec.components = if a.components.is_empty() {
            httpsig::default_components(&m)
        } else {
            a.components.clone()
        };
        if let Some(c) = created {
            spec = spec.created(c);
        }
        if let Some(e) = a.expires_in {
            let base = created.unwrap_or_else(now_unix);
            spec = spec.expires(base.saturating_add(i64::try_from(e).unwrap_or(i64::MAX)));
        }
        if let Some(n) = &a.nonce {
            spec = spec.nonce(n);
        }
        spec = spec.keyid(&keyid);
        if !a.no_alg {
            spec = spec.alg(key.algorithm());
        }
        if let Some(t) = &a.tag {
            spec = spec.tag(t);
        }
        spec
    };
    let no_digest = !m.is_request()
        && m.field_lines("content-digest", false).next().is_none()
        && spec.components.iter().any(
            |c| matches!(&c.target, httpsig::components::Target::Field(f) if f == "content-digest"),
        );
    let signed = httpsig::sign(&m, related.as_ref(), &spec, &key).map_err(|e| {
        let hint = if no_digest {
            "; the response has no Content-Digest field: add one with --add-content-digest sha-256"
        } else {
            ""
        };
        CliError::usage(format!("{}: {e}{hint}", a.file))
    })?;
    if a.json {
        let mut r = Report::done("http sign", Some(&a.file));
        if let Some(w) = super::published_test_key(&a.key, &key) {
            r.warn("key.published-test-key", w);
        }
        r.detail("label", &signed.label);
        r.detail("kid", &keyid);
        r.detail("algorithm", key.algorithm().httpsig_name());
        r.detail("signature_input", &signed.signature_input);
        r.detail("signature", &signed.signature);
        r.detail("signature_base", String::from_utf8_lossy(&signed.base));
        r.detail(
            "added_fields",
            extra
                .iter()
                .map(|(n, v)| format!("{n}: {v}"))
                .collect::<Vec<_>>(),
        );
        super::print_report(&r);
        return Ok(ExitCode::SUCCESS);
    }
    extra.push(("Signature-Input".into(), signed.signature_input.clone()));
    extra.push(("Signature".into(), signed.signature.clone()));
    let out = m
        .with_fields_inserted(&extra)
        .ok_or_else(|| CliError::usage("internal: message lost its raw form"))?;
    match a.out.as_deref() {
        None | Some("-") => std::io::stdout()
            .write_all(&out)
            .map_err(|e| CliError::unwritable(format!("standard output: {e}")))?,
        Some(p) => {
            std::fs::write(p, &out).map_err(|e| CliError::unwritable(format!("{p}: {e}")))?;
            let added: Vec<&str> = extra.iter().map(|(n, _)| n.as_str()).collect();
            errln!(
                "signed {}: wrote {} ({} bytes): the message with {} added (label {}, keyid {}, {})",
                agentsig::text::escape_controls(&a.file),
                agentsig::text::escape_controls(p),
                out.len(),
                added.join(", "),
                agentsig::text::escape_controls(&signed.label),
                agentsig::text::escape_controls(&keyid),
                key.algorithm().httpsig_name()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct HttpVerifyArgs {
    /// Raw HTTP/1.1 message (request or response, e.g. saved by curl -i), or - for standard input.
    file: String,
    #[command(flatten)]
    trust: TrustedKeyArgs,
    /// Verify only this label (repeatable); default every label. Each must verify.
    #[arg(long, allow_hyphen_values = true)]
    label: Vec<String>,
    /// Component every signature must cover (repeatable). Default for responses:
    /// @status content-type content-digest; for requests none.
    #[arg(long, value_parser = parse_component, value_name = "COMPONENT")]
    require: Vec<ComponentId>,
    /// Require no component (overrides the response default).
    #[arg(long, conflicts_with = "require")]
    require_none: bool,
    /// Largest age of created: DURATION (seconds, or 5m, 12h, 30d).
    #[arg(long, value_parser = parse_duration, default_value = "300", value_name = "DURATION")]
    max_age: u64,
    /// Do not limit the age of created (expires is still enforced).
    #[arg(long)]
    no_max_age: bool,
    /// Tolerated clock skew: DURATION (seconds, or 5m).
    #[arg(long, value_parser = parse_duration, default_value = "60", value_name = "DURATION")]
    skew: u64,
    /// Verify as if the time were this (Unix seconds); default: now.
    #[arg(long, allow_hyphen_values = true, value_name = "UNIX-SECONDS")]
    now: Option<i64>,
    /// Skip created/expires checks entirely (only for replaying archived test vectors).
    #[arg(long)]
    no_time_check: bool,
    /// Required tag parameter.
    #[arg(long, allow_hyphen_values = true)]
    tag: Option<String>,
    /// Refuse signatures without expires.
    #[arg(long)]
    require_expires: bool,
    /// Store of seen nonces (RFC 9421 7.2.2): a nonce seen before is a replay. STORE is PATH
    /// or file:PATH (one machine), redis[s]://[USER:PASS@]HOST:PORT/DB (a fleet; rediss: TLS; or redis+cluster://HOST:PORT,..., redis+sentinel://HOST:PORT,.../MASTER, each with ?wait=N for acknowledged writes: docs/fleet.md), memory:.
    #[arg(long, allow_hyphen_values = true, value_name = "STORE")]
    replay_store: Option<String>,
    /// The request this response answers, a raw HTTP/1.1 message file (for ;req components).
    #[arg(long, allow_hyphen_values = true, value_name = "FILE")]
    request: Option<String>,
    /// Scheme the message was received over.
    #[arg(long, allow_hyphen_values = true, default_value = "https")]
    scheme: String,
    /// Include the signature base in the output.
    #[arg(long)]
    print_base: bool,
    /// Print one JSON report (agentsig.report/1, docs/report.md) on standard output, whatever
    /// the outcome.
    #[arg(long)]
    json: bool,
    /// The site's own authority (host[:port], repeatable): a request signature must cover
    /// @authority or @target-uri naming one of these, whatever Host says, or a request signed
    /// for another site verifies here (RFC 9421 section 7.2.1). A request needs this or
    /// --any-authority.
    #[arg(long = "authority", value_name = "HOST")]
    authorities: Vec<String>,
    /// Accept a request signature whatever authority it was made for (only when the site
    /// checks the authority itself).
    #[arg(long, conflicts_with = "authorities")]
    any_authority: bool,
    /// Accept a message with content whose signature does not cover content-digest (refused
    /// by default: the content could have been changed by anyone on the way).
    #[arg(long)]
    allow_uncovered_content: bool,
    #[command(flatten)]
    wba: super::webbotauth::WbaVerifyArgs,
}

impl HttpVerifyArgs {
    /// The site's authorities for a request (`None` for a response), or
    /// the usage error saying what to give.
    fn site(&self, m: &Message) -> Result<Option<agentsig::httpsig::SiteAuthorities>, CliError> {
        if !m.is_request() {
            return Ok(None);
        }
        let got = super::site_authorities(&self.authorities, self.any_authority)?;
        if got.is_none() {
            let host = match &m.kind {
                agentsig::httpsig::message::Kind::Request(l) => l.authority.clone(),
                agentsig::httpsig::message::Kind::Response { .. } => String::new(),
            };
            return Err(CliError::usage(format!(
                "{}: a request is verified for a site: give --authority HOST, the host[:port] \
                 of the site that received it (repeatable; e.g. --authority {}), or \
                 --any-authority to accept a signature made for any site (RFC 9421 section \
                 7.2.1: otherwise a request signed for another site verifies here)",
                self.file,
                esc(&host)
            )));
        }
        Ok(got)
    }
}

/// What a verification command asks for, shared by `http verify` and `verify --response`.
pub struct VerifyRequest<'a> {
    pub file: &'a str,
    pub message: &'a Message,
    pub related: Option<&'a Message>,
    pub trust: &'a TrustedKeyArgs,
    pub labels: &'a [String],
    pub required: Vec<ComponentId>,
    pub max_age: Option<u64>,
    pub skew: u64,
    pub now: Option<i64>,
    pub check_time: bool,
    pub tag: Option<String>,
    pub require_expires: bool,
    pub replay_store: Option<&'a str>,
    pub print_base: bool,
    pub json: bool,
    /// The site's own authorities ([`HttpPolicy::authorities`]).
    pub authorities: Option<Vec<String>>,
    /// [`HttpPolicy::require_content_digest`].
    pub require_content_digest: bool,
}

/// The outcome of an RFC 9421 verification: the verdict, the JSON report,
/// and the text lines (one per label), without the closing verdict line.
pub struct HttpOutcome {
    pub verified: bool,
    pub json: Report,
    pub lines: Vec<String>,
}

/// Run a verification and print one result per label. Exit 0 only when every
/// examined label verified.
pub fn run_verify(v: VerifyRequest<'_>) -> CliResult {
    let file = v.file.to_owned();
    let json = v.json;
    let o = verify_outcome(v)?;
    if json {
        super::print_report(&o.json);
    } else {
        for l in &o.lines {
            outln!("{l}");
        }
        if o.verified {
            outln!("{}: verified", esc(&file));
        } else {
            outln!("{}: NOT verified", esc(&file));
        }
    }
    Ok(if o.verified {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn esc(s: &str) -> std::borrow::Cow<'_, str> {
    agentsig::text::escape_controls(s)
}

/// Verify and build the report, printing nothing.
pub fn verify_outcome(v: VerifyRequest<'_>) -> Result<HttpOutcome, CliError> {
    let resolver = v.trust.resolver()?;
    let mut policy = HttpPolicy::new();
    policy.required = v.required;
    policy.max_age = v.max_age;
    policy.check_time = v.check_time;
    policy.expected_tag = v.tag;
    policy.require_expires = v.require_expires;
    policy.labels = (!v.labels.is_empty()).then(|| v.labels.to_vec());
    policy.keep_base = v.print_base;
    policy.authorities = v.authorities;
    policy.require_content_digest = v.require_content_digest;
    let mut b = Verifier::builder(resolver)
        .algorithms(v.trust.allow_list())
        .strict_low_s(v.trust.strict_low_s)
        .skew(v.skew)
        .http(policy);
    if let Some(url) = v.replay_store {
        let now = v
            .now
            .unwrap_or_else(|| agentsig::clock::Clock::now(&agentsig::clock::SystemClock));
        let store =
            agentsig::replay::open_store(url, now).map_err(|e| CliError::usage(e.to_string()))?;
        b = b.replay_store(store);
    }
    let verifier = match v.now {
        Some(n) => b.clock(FixedClock(n)).build(),
        None => b.build(),
    };
    match verifier.verify_http(v.message, v.related) {
        Ok(r) => Ok(report_outcome(v.file, &r)),
        Err(HttpSigError::NotVerified(r)) => Ok(report_outcome(v.file, &r)),
        Err(e) => {
            let mut rep = Report::error("http verify", Some(v.file), "header", &e.to_string());
            rep.set_verdict(agentsig::report::Verdict::NotVerified);
            Ok(HttpOutcome {
                verified: false,
                json: rep,
                lines: vec![format!("{}: {}", esc(v.file), esc(&e.to_string()))],
            })
        }
    }
}

fn time_text(t: Option<i64>) -> String {
    t.map_or_else(|| "-".into(), agentsig::text::rfc3339)
}

fn report_outcome(file: &str, report: &VerifyReport) -> HttpOutcome {
    let mut json = Report::from_http("http verify", Some(file), report);
    if report.results.iter().any(|r| r.signature_base.is_some()) {
        let bases: Vec<_> = report
            .results
            .iter()
            .map(|r| {
                serde_json::json!({"label": r.label,
                    "signature_base": r.signature_base.as_ref().map(|b| String::from_utf8_lossy(b).into_owned())})
            })
            .collect();
        json.detail("signature_bases", bases);
    }
    let verified = json.verified;
    let mut lines = Vec::new();
    for r in &report.results {
        let mut line = format!(
            "{}: {} (keyid {}, alg {}, created {}, expires {})",
            esc(&r.label),
            if r.is_valid() { "valid" } else { "INVALID" },
            r.keyid.as_deref().map_or_else(|| "-".into(), esc),
            r.alg.map_or("-", |a| a.httpsig_name()),
            time_text(r.created),
            time_text(r.expires),
        );
        if let Some(src) = &r.key_source {
            line.push_str(&format!(", key from {}", esc(&src.to_string())));
        }
        if let Err(e) = &r.outcome {
            line.push_str(&format!(
                ": {}",
                esc(&r.explain().unwrap_or_else(|| e.to_string()))
            ));
        }
        lines.push(line);
        if let Some(b) = &r.signature_base {
            lines.push(format!(
                "--- signature base of {} ---\n{}\n---",
                esc(&r.label),
                agentsig::text::escape_controls_keep_newlines(&String::from_utf8_lossy(b))
            ));
        }
    }
    HttpOutcome {
        verified,
        json,
        lines,
    }
}

fn verify(a: HttpVerifyArgs) -> CliResult {
    let m = read_message(&a.file, &a.scheme)?;
    let site = a.site(&m)?;
    if a.wba.profile.is_some() {
        let i = super::webbotauth::VerifyInput {
            file: &a.file,
            required: a.require.clone(),
            skew: a.skew,
            now: a.now,
            check_time: !a.no_time_check,
            replay_store: a.replay_store.as_deref(),
            json: a.json,
            authorities: site,
            allow_uncovered_content: a.allow_uncovered_content,
            trust: &a.trust,
        };
        return super::webbotauth::http_verify(&m, i, &a.wba);
    }
    let related = a
        .request
        .as_deref()
        .map(|r| read_message(r, &a.scheme))
        .transpose()?;
    let required = if a.require_none {
        Vec::new()
    } else if a.require.is_empty() && !m.is_request() {
        httpsig::descriptor_response_components()
    } else {
        a.require.clone()
    };
    run_verify(VerifyRequest {
        file: &a.file,
        message: &m,
        related: related.as_ref(),
        trust: &a.trust,
        labels: &a.label,
        required,
        max_age: (!a.no_max_age).then_some(a.max_age),
        skew: a.skew,
        now: a.now,
        check_time: !a.no_time_check,
        tag: a.tag.clone(),
        require_expires: a.require_expires,
        replay_store: a.replay_store.as_deref(),
        print_base: a.print_base,
        json: a.json,
        authorities: site.and_then(|s| s.to_policy()),
        require_content_digest: !a.allow_uncovered_content,
    })
}

#[derive(Args)]
pub struct DigestArgs {
    /// File whose bytes are the content, or - for standard input.
    file: String,
    /// Digest algorithm (repeatable): sha-256 (default) or sha-512.
    #[arg(long, value_parser = parse_digest_alg, value_name = "ALG")]
    alg: Vec<DigestAlgorithm>,
    /// Print a Repr-Digest field instead of Content-Digest (same bytes: give the representation).
    #[arg(long)]
    repr: bool,
    /// Print one JSON report (agentsig.report/1, docs/report.md): the field name and value in
    /// its details.
    #[arg(long)]
    json: bool,
}

impl DigestArgs {
    /// The file, for the report's `subject`.
    pub fn subject(&self) -> Option<String> {
        Some(self.file.clone())
    }
}

/// `agentsig digest`: print an RFC 9530 digest field for a file.
pub fn digest_cmd(a: DigestArgs) -> CliResult {
    let data = read_input(&a.file)?;
    let algs = if a.alg.is_empty() {
        vec![DigestAlgorithm::Sha256]
    } else {
        a.alg
    };
    let name = if a.repr {
        "Repr-Digest"
    } else {
        "Content-Digest"
    };
    let value = digest::field_value(&data, &algs);
    if a.json {
        let mut r = Report::done("digest", Some(&a.file));
        r.detail("field", name);
        r.detail("value", &value);
        r.detail(
            "algorithms",
            algs.iter().map(|d| d.key()).collect::<Vec<_>>(),
        );
        r.detail("length", data.len());
        super::print_report(&r);
    } else {
        outln!("{name}: {value}");
    }
    Ok(ExitCode::SUCCESS)
}

/// Read a saved response (`curl -i`) for `agentsig verify --response`.
#[cfg(feature = "net")]
pub fn read_saved_response(path: &str) -> Result<Message, CliError> {
    let m = read_message(path, "https")?;
    if m.is_request() {
        return Err(CliError::usage(format!(
            "{path}: is a request; --response expects a saved response (status line, headers, body)"
        )));
    }
    Ok(m)
}

fn nginx_quote(v: &str) -> String {
    format!("'{}'", v.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// Write the response fields a static host must send with a signed
/// descriptor (draft-narvaneni-agent-uri-03 section 10.3), as plain `Name: value` lines or as
/// an nginx or Caddy snippet. Returns the signature's created and expires.
pub fn write_static_headers(
    path: &str,
    file: &str,
    body: &[u8],
    content_type: &str,
    keys: &[agentsig::SigningKey],
    expires_in: Option<u64>,
    format: &str,
) -> Result<(i64, Option<i64>), CliError> {
    let created = now_unix();
    let expires = expires_in.map(|e| created.saturating_add(i64::try_from(e).unwrap_or(i64::MAX)));
    let pairs: Vec<(&agentsig::SigningKey, String)> =
        keys.iter().map(|k| (k, k.kid_or_thumbprint())).collect();
    if content_type.bytes().any(|c| c < 0x20 || c == 0x7f) {
        return Err(CliError::usage("--content-type holds control characters"));
    }
    let fields = httpsig::static_response_fields(body, content_type, &pairs, created, expires)
        .map_err(|e| CliError::usage(format!("{file}: {e}")))?;
    let name = std::path::Path::new(file)
        .file_name()
        .map_or_else(|| file.to_owned(), |n| n.to_string_lossy().into_owned());
    let mut text = String::new();
    match format {
        "nginx" => {
            text.push_str(&format!(
                "# agentsig: response fields for {name}; paste inside its location block.\n\
                 # The body must be served byte for byte: no gzip, no charset rewriting.\n\
                 default_type {ct};\ntypes {{ }}\ncharset off;\ngzip off;\nmax_ranges 0;\n",
                ct = nginx_quote(content_type)
            ));
            for (n, v) in fields.iter().filter(|(n, _)| n != "Content-Type") {
                text.push_str(&format!("add_header {n} {};\n", nginx_quote(v)));
            }
        }
        "caddy" => {
            text.push_str(&format!(
                "# agentsig: response fields for {name}; paste inside the site block.\n\
                 # Do not let an `encode` directive compress this path.\nheader /{name} {{\n"
            ));
            for (n, v) in &fields {
                text.push_str(&format!("\t{n} `{v}`\n"));
            }
            text.push_str("}\n");
        }
        _ => {
            for (n, v) in &fields {
                text.push_str(&format!("{n}: {v}\n"));
            }
        }
    }
    std::fs::write(path, text.as_bytes()).map_err(|e| CliError::usage(format!("{path}: {e}")))?;
    Ok((created, expires))
}
