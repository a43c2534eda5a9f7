//! `agentsig inspect FILE|-`: what was signed, and how each signature was
//! judged. The analysis is the library's ([`agentsig::inspect`]); this
//! module reads the arguments and prints it as text or, under `--json`, as
//! the one report (`details.inspection`). Exit codes as `verify`: 0
//! verified, 1 not verified, 2 unreadable input or usage.

use super::{read_input, CliError, CliResult, TrustedKeyArgs};
use agentsig::facade::{Failure, VerifierOptions};
use agentsig::inspect::{self, InspectOptions, Inspection, Kind, SignatureView};
use agentsig::text::escape_controls as esc;
use clap::Args;
use serde_json::Value;
use std::process::ExitCode;

/// The kinds `--kind` takes.
fn parse_kind(s: &str) -> Result<Kind, String> {
    Kind::from_name(s).ok_or_else(|| {
        "one of http-request, http-response, descriptor, a2a-card, ai-catalog, mcp-server-card, \
         delegation"
            .to_owned()
    })
}

#[derive(Args)]
#[command(after_help = "\
WHAT IT SHOWS
  RFC 9421 request or response: each label's parameters (created and expires as dates and
  relative times), its verdict and reason, and the signature base line by line with the field
  or derived component each line came from. Descriptor (--jws) and A2A Agent Card: each JWS's
  protected header, the RFC 8785 canonical form signed, its SHA-256 and the signing input.
  Delegation chain (one JWT a line, subject token first): each hop's issuer, subject, actor,
  scope and lifetime as an indented tree, the failing hop marked. AI Catalog: the entries as a
  tree with each artifact's binding and Trust Manifest status.

VERDICTS
  The verdicts and reason codes are exactly those of the command that judges the input:
  `agentsig http verify FILE --any-authority` (or --authority), `agentsig verify FILE --jws F`,
  `agentsig verify CARD`, `agentsig verify CATALOG`, `agentsig delegation audit`. Keys are the
  ones given (--key, --jwks): nothing is fetched, so a Web Bot Auth request is checked as plain
  RFC 9421 with the agent's key given, and a catalog's identities are not resolved.

EXIT CODES
  0 verified; 1 not verified (or unsigned without --allow-unsigned); 2 unreadable input, input
  of no known kind, a descriptor without its JWS, or a usage error.

EXAMPLES
  agentsig inspect request.http --key agent.pub.pem
  agentsig inspect response.http --key site.jwk.json --now 1764600000
  agentsig inspect agent.json --jws agent.json.jws --key publisher.pub.pem
  agentsig inspect chain.txt --jwks issuers.jwks.json --json")]
pub struct InspectArgs {
    /// The input: a raw HTTP/1.1 request or response, a descriptor, an A2A Agent Card, an AI
    /// Catalog, or delegation tokens one a line; - for standard input.
    #[arg(required_unless_present = "serve")]
    pub file: Option<String>,
    #[command(flatten)]
    pub trust: TrustedKeyArgs,
    /// The kind, instead of detecting it from the content: http-request, http-response,
    /// descriptor, a2a-card, ai-catalog, mcp-server-card, delegation.
    #[arg(long, value_parser = parse_kind, value_name = "KIND")]
    pub kind: Option<Kind>,
    /// The detached JWS of a descriptor, MCP Server Card or AI Catalog (a file); default
    /// FILE.jws when it exists.
    #[arg(long, allow_hyphen_values = true, value_name = "FILE")]
    pub jws: Option<String>,
    /// The request a response answers, a raw HTTP/1.1 message file (for ;req components).
    #[arg(long, allow_hyphen_values = true, value_name = "FILE")]
    pub request: Option<String>,
    /// The site's own authority (host[:port], repeatable): a request signature must cover
    /// @authority or @target-uri naming one (RFC 9421 section 7.2.1). Default: any authority,
    /// as `http verify --any-authority`.
    #[arg(long = "authority", value_name = "HOST")]
    pub authorities: Vec<String>,
    /// Scheme an origin-form request was received over.
    #[arg(long, allow_hyphen_values = true, default_value = "https")]
    pub scheme: String,
    /// Largest age of an RFC 9421 created: DURATION (seconds, or 5m, 12h, 30d).
    #[arg(long, value_parser = super::args::parse_duration, default_value = "300", value_name = "DURATION")]
    pub max_age: u64,
    /// Do not limit the age of created (expires is still enforced).
    #[arg(long)]
    pub no_max_age: bool,
    /// Judge as if the time were this (Unix seconds); relative times are shown against it.
    #[arg(long, allow_hyphen_values = true, value_name = "UNIX-SECONDS")]
    pub now: Option<i64>,
    /// A2A card: every signature must verify.
    #[arg(long)]
    pub require_all: bool,
    /// AI Catalog: accept a catalog no trusted key vouches for (exit 0, verdict unsigned).
    #[arg(long)]
    pub allow_unsigned: bool,
    /// Print one JSON report (agentsig.report/1, docs/report.md) with the inspection in
    /// details.inspection (docs/inspect.md), whatever the outcome.
    #[arg(long)]
    pub json: bool,
    /// Serve the inspector page (the same analysis in a browser, through the WebAssembly
    /// package) on 127.0.0.1 and print its URL; nothing is inspected on the server.
    #[arg(long, conflicts_with = "file")]
    pub serve: bool,
    /// Port for --serve (0: a free one).
    #[arg(long, requires = "serve", default_value_t = 8421, value_name = "N")]
    pub port: u16,
    /// The WebAssembly package for --serve: its directory (package.json and the scripts it
    /// lists, dist/ built by scripts/wasm-build.sh); default: the wasm/ directory of the source
    /// tree this binary was built from.
    #[arg(long, requires = "serve", value_name = "DIR")]
    pub assets: Option<std::path::PathBuf>,
}

impl InspectArgs {
    /// The file, for the report's `subject`.
    pub fn subject(&self) -> Option<String> {
        self.file.clone()
    }
}

/// A library failure as the command line reports it (exit 2 for bad input
/// or keys, 1 for a verdict).
fn cli_error(f: Failure) -> CliError {
    let kind: &'static str = match f.code.as_str() {
        "input.unreadable" => "input.unreadable",
        "key.unusable" => "key.unusable",
        "usage" => "usage",
        _ => "input.malformed",
    };
    let e = match kind {
        "usage" => CliError::usage(f.message),
        "key.unusable" => CliError::key(f.message),
        "input.unreadable" => CliError::unreadable(f.message),
        _ => CliError::malformed(f.message),
    };
    e.with_kind(kind)
}

pub fn run(a: InspectArgs) -> CliResult {
    if a.serve {
        return serve(a.port, a.assets);
    }
    let file = a.file.clone().unwrap_or_else(|| "-".to_owned());
    let input = read_input(&file)?;
    let mut o = VerifierOptions::default();
    if !a.trust.is_empty() {
        o.keys = a.trust.resolver()?;
    }
    if !a.trust.alg.is_empty() {
        o.algorithms = Some(a.trust.alg.clone());
    }
    o.strict_low_s = a.trust.strict_low_s;
    o.now = a.now;
    let v = o.build(None).map_err(cli_error)?;
    let jws = match &a.jws {
        Some(p) => Some(read_input(p)?),
        None if file != "-" => std::fs::read(format!("{file}.jws")).ok(),
        None => None,
    }
    .map(|b| String::from_utf8_lossy(&b).trim().to_owned());
    let opts = InspectOptions {
        kind: a.kind,
        jws,
        scheme: a.scheme.clone(),
        authorities: (!a.authorities.is_empty()).then(|| a.authorities.clone()),
        max_age: (!a.no_max_age).then_some(a.max_age),
        request: a.request.as_deref().map(read_input).transpose()?,
        require_all: a.require_all,
        allow_unsigned: a.allow_unsigned,
    };
    let (mut report, i) = inspect::inspect(&input, &v, &opts).map_err(cli_error)?;
    report.subject = Some(file.clone());
    let code = report.verdict.exit_code(a.allow_unsigned);
    if a.json {
        super::print_report(&report);
    } else {
        let now = a
            .now
            .unwrap_or_else(|| agentsig::clock::Clock::now(&agentsig::clock::SystemClock));
        for l in text(&file, &i, now) {
            outln!("{l}");
        }
    }
    Ok(ExitCode::from(code))
}

/// `t` as a date and relative to `now`: `2026-12-01T14:40:00Z (in 4 min)`.
fn when(t: i64, now: i64) -> String {
    let d = t.saturating_sub(now);
    let a = d.unsigned_abs();
    let span = if a < 60 {
        format!("{a} s")
    } else if a < 3600 {
        format!("{} min", a / 60)
    } else if a < 86_400 {
        format!("{} h", a / 3600)
    } else {
        format!("{} days", a / 86_400)
    };
    let rel = match d {
        0 => "now".to_owned(),
        d if d > 0 => format!("in {span}"),
        _ => format!("{span} ago"),
    };
    format!("{t} = {} ({rel})", agentsig::text::rfc3339(t))
}

/// The text form of an inspection.
fn text(file: &str, i: &Inspection, now: i64) -> Vec<String> {
    let mut out = vec![format!(
        "{}: {} (judged as `agentsig {}`)",
        esc(file),
        i.kind.as_str(),
        i.command
    )];
    for s in &i.signatures {
        signature(&mut out, s, now);
    }
    if !i.chain.is_empty() {
        out.push("delegation chain (subject token first; RFC 8693 section 4.1):".into());
        for h in &i.chain {
            let pad = "  ".repeat(h.hop + 1);
            let status = if h.ok { "ok" } else { "FAILED" };
            out.push(format!(
                "{pad}hop {}: {status}: issuer {}, subject {}, actor {}",
                h.hop,
                val(&h.issuer),
                val(&h.subject),
                val(&h.actor)
            ));
            out.push(format!("{pad}  scope {}", val(&h.scope)));
            for (k, t) in [("iat", &h.iat), ("exp", &h.exp)] {
                if let Some(t) = t.as_i64() {
                    out.push(format!("{pad}  {k} {}", when(t, now)));
                }
            }
            if let (Some(c), Some(m)) = (&h.reason, &h.message) {
                out.push(format!("{pad}  reason {c}: {}", esc(m)));
            }
        }
    }
    if let Some(c) = &i.catalog {
        for (what, v) in [
            ("host Trust Manifest", &c.host),
            ("host identity", &c.host_identity),
            ("catalog signature", &c.catalog_signature),
        ] {
            if let Some(st) = v.get("status").and_then(Value::as_str) {
                let m = v.get("message").and_then(Value::as_str).unwrap_or("");
                out.push(format!("{what}: {st}: {}", esc(m)));
            }
        }
        out.push("catalog entries:".into());
        entries(&mut out, &c.entries, 1);
    }
    for c in &i.failed_checks {
        out.push(format!("{} {}: {}", c.severity, c.code, esc(&c.message)));
    }
    match &i.error {
        Some(e) if i.verdict != "verified" => out.push(format!(
            "{}: {} ({}: {})",
            esc(file),
            verdict_word(i.verdict),
            e.code,
            esc(&e.message)
        )),
        _ => out.push(format!("{}: {}", esc(file), verdict_word(i.verdict))),
    }
    out
}

/// The closing verdict as the other commands print it.
fn verdict_word(v: &str) -> String {
    match v {
        "verified" => "verified".into(),
        "not-verified" => "NOT verified".into(),
        other => other.to_owned(),
    }
}

fn val(v: &Value) -> String {
    match v {
        Value::String(s) => esc(s).into_owned(),
        Value::Null => "-".into(),
        Value::Array(a) => a.iter().map(val).collect::<Vec<_>>().join(" "),
        other => esc(&other.to_string()).into_owned(),
    }
}

fn signature(out: &mut Vec<String>, s: &SignatureView, now: i64) {
    let mut head = format!("{} signature {}: {}", s.form, esc(&s.label), s.verdict);
    if let (Some(c), Some(m)) = (&s.reason, &s.message) {
        head.push_str(&format!(" ({c}: {})", esc(m)));
    }
    out.push(head);
    if !s.params.is_empty() {
        out.push(if s.form == "rfc9421" {
            "  parameters (RFC 9421 section 2.3):".into()
        } else {
            "  protected header (RFC 7515 section 4):".into()
        });
        for (k, v) in &s.params {
            let shown = match (k.as_str(), v.as_i64()) {
                ("created" | "expires" | "iat" | "exp" | "nbf", Some(t)) => when(t, now),
                _ => val(v),
            };
            out.push(format!("    {:<9} {shown}", esc(k)));
        }
    }
    if let Some(base) = &s.base {
        out.push("  signature base (RFC 9421 section 2.5), each line with its source:".into());
        let width = base.iter().map(|l| l.line.len()).max().unwrap_or(0).min(72);
        for l in base {
            let line = esc(&l.line);
            if line.len() > width {
                out.push(format!("    {line}"));
                out.push(format!("    {:<width$}  <- {}", "", esc(&l.source)));
            } else {
                out.push(format!("    {line:<width$}  <- {}", esc(&l.source)));
            }
        }
    }
    if let Some(e) = &s.base_error {
        out.push(format!("  signature base: cannot be built: {}", esc(e)));
    }
    if let Some(c) = &s.canonical {
        out.push("  RFC 8785 canonical form signed:".into());
        out.push(format!("    {}", esc(c)));
    }
    if let Some(h) = &s.canonical_sha256 {
        out.push(format!("  sha-256 of it: {h}"));
    }
    if let Some(si) = &s.signing_input {
        out.push(format!("  signing input: {}", esc(si)));
    }
}

fn entries(out: &mut Vec<String>, list: &[inspect::EntryView], depth: usize) {
    let pad = "  ".repeat(depth);
    for e in list {
        let status = |v: &Value| {
            v.get("status")
                .and_then(Value::as_str)
                .unwrap_or("-")
                .to_owned()
        };
        out.push(format!(
            "{pad}{} {} [{}]: {}; binding {}, artifact {}, manifest {}",
            esc(&e.pointer),
            val(&e.identifier),
            val(&e.media_type),
            if e.passed { "ok" } else { "FAILED" },
            val(&e.binding),
            status(&e.artifact),
            status(&e.manifest)
        ));
        entries(out, &e.children, depth + 1);
    }
}

/// `--serve`: the inspector page on loopback ([`super::inspect_serve`]).
#[cfg(feature = "server")]
fn serve(port: u16, assets: Option<std::path::PathBuf>) -> CliResult {
    super::inspect_serve::run(port, assets)
}

#[cfg(not(feature = "server"))]
fn serve(_: u16, _: Option<std::path::PathBuf>) -> CliResult {
    Err(CliError::usage(
        "inspect --serve needs the server feature (cargo build --features server)",
    ))
}
