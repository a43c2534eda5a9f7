//! `agentsig verify --batch LIST`: verify many descriptors on all cores
//! with one shared verifier ([`agentsig::batch`]), one result line per
//! input, printed as soon as it is known (`--ordered`: in input order),
//! then a summary.
//!
//! LIST is a directory (each `*.json` file as `verify FILE` checks it), a
//! file of paths or `https://` URLs (one a line; empty lines and lines
//! starting with `#` skipped), or `-` for JSON Lines on standard input
//! (each line a URL string, or an object with `"url"` or an inline
//! `"descriptor"` with its `"jws"`; local paths only under `--root`).
//! Every input gets the verdict its single-input command gives
//! ([`agentsig::batch::verify_document`], [`agentsig::net::Resolver`]).
//! URLs are fetched through the SSRF-guarded fetcher of `agentsig verify
//! URL`, with one shared resolver (its RFC 9111 cache and key discoveries
//! shared by all workers) and at most `--per-host` connections open to
//! one host ([`agentsig::net::FetchPolicy::max_connections_per_host`]).

use super::args::BoundedLines;
use super::{CliError, CliResult, TrustedKeyArgs};
use agentsig::batch::{run_grouped, BatchOptions, InputError, LocalFiles, Order};
use agentsig::jws::{JwsPolicy, KeyHeaderPolicy};
use agentsig::report::{Report, Verdict};
use agentsig::text::escape_controls as esc;
use agentsig::verifier::Verifier;
use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Longest line of a LIST file or of the JSON Lines input.
const MAX_LINE: usize = 64 * 1024;

/// Default of `--per-host`.
const DEFAULT_PER_HOST: usize = 4;

/// The `--batch` options of `agentsig verify`.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct BatchArgs {
    /// Verify many inputs on all cores, each with the verdict `verify` gives it alone: LIST is a
    /// directory (each *.json as `verify FILE` checks it: an A2A card by its embedded signatures,
    /// another descriptor against FILE.jws), a file of paths or https URLs (one a line), or - for
    /// JSON Lines on standard input (a URL string, or {"url"} or {"descriptor","jws"} per line;
    /// local paths there only with --root). One result line per input, printed as soon as it is
    /// known (--ordered: in input order; --json: one report per line, with details.batch_index),
    /// then a summary; exit 0 only when all verified.
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub batch: Option<String>,
    /// With --batch: worker threads (default: the number of cores).
    #[arg(short = 'j', long = "jobs", value_name = "N", requires = "batch")]
    pub jobs: Option<usize>,
    /// With --batch: most connections open at once to one host, in flight or kept alive for
    /// reuse, shared by all workers (default 4).
    #[arg(long, value_name = "N", requires = "batch")]
    pub per_host: Option<usize>,
    /// With --batch: print the results in input order (a result then waits for every earlier
    /// one). Default: each result as soon as it is known.
    #[arg(long, requires = "batch")]
    pub ordered: bool,
    /// With --batch: read local files only under DIR (their real path, symbolic links
    /// resolved). Required for local paths given on standard input (--batch -), which are
    /// refused without it.
    #[arg(long, value_name = "DIR", requires = "batch")]
    pub root: Option<String>,
    /// With --batch: for a URL whose RFC 9421 response signature verifies, do not fetch URL.jws
    /// (one request instead of two). Faster, but a broken URL.jws beside a signed response is
    /// then not seen, so `verify URL` may refuse what the batch accepts. Default: both checked,
    /// fetched concurrently, the verdict of `verify URL`.
    #[arg(long, requires = "batch")]
    pub response_signature_first: bool,
    /// With --batch: fetch nothing. Local files and inline inputs are verified as usual; a URL
    /// input, a catalog entry given by `url` and a nested catalog by `url` are not fetched and
    /// are reported as such ("not fetched (--offline)"), never as verified: they count as not
    /// verified in the summary and the exit code.
    #[arg(long, requires = "batch")]
    pub offline: bool,
}

/// What `verify` passes to the batch: its trust and policy options.
pub struct BatchContext<'a> {
    /// Trusted keys and algorithms.
    pub trust: &'a TrustedKeyArgs,
    /// Required `typ` values.
    pub typ: &'a [String],
    /// `--ignore-key-headers`.
    pub ignore_key_headers: bool,
    /// `--json`.
    pub json: bool,
    /// `--max-age` (URLs).
    pub max_age: Option<u64>,
    /// `--now` (URLs).
    pub now: Option<i64>,
    /// Fetching options (URLs).
    #[cfg(feature = "net")]
    pub net: &'a super::net::NetArgs,
}

/// One input.
enum Item {
    /// A local descriptor or card, as `verify FILE`.
    Local(String),
    /// An `https://` URL, as `verify URL`.
    Url(String),
    /// A descriptor and its JWS (or a card alone) given in the JSON Lines
    /// input.
    Inline {
        name: String,
        descriptor: Vec<u8>,
        jws: Option<String>,
    },
    /// An input line that could not be understood.
    Bad { name: String, message: String },
}

/// The result of one input.
struct Outcome {
    /// Accepted: verified, or `unsigned` under `--allow-unsigned`.
    verified: bool,
    /// Accepted as `unsigned`, not verified (docs/report.md).
    unsigned: bool,
    /// The JSON report (absent for a verified URL in text mode).
    report: Option<Report>,
    /// The text line, its subject escaped ([`agentsig::text::escape_controls`]).
    line: String,
}

impl Outcome {
    fn failed(subject: &str, code: &str, message: String) -> Outcome {
        let mut report = Report::error("verify", Some(subject), code, &message);
        report.set_verdict(Verdict::NotVerified);
        Outcome {
            verified: false,
            unsigned: false,
            line: format!("{}: NOT verified: {}", esc(subject), esc(&message)),
            report: Some(report),
        }
    }

    /// A URL that did not verify, with the library's verdict (`unsigned`,
    /// `unavailable`, `not-verified`), as `verify URL` reports it.
    #[cfg(feature = "net")]
    fn url_failed(subject: &str, e: &agentsig::net::verify::UrlVerifyError) -> Outcome {
        let report = e.report("verify", subject);
        Outcome {
            verified: false,
            unsigned: false,
            line: super::net::failure_text(&esc(subject), e.verdict(), &esc(&e.to_string())),
            report: Some(report),
        }
    }

    /// A catalog that could not be checked, with the library's verdict
    /// (`unavailable` when it could not be fetched), as `verify URL`
    /// reports it.
    #[cfg(feature = "net")]
    fn catalog_failed(subject: &str, e: &agentsig::net::catalog::CatalogUrlError) -> Outcome {
        Outcome {
            verified: false,
            unsigned: false,
            line: super::net::failure_text(&esc(subject), e.verdict(), &esc(&e.to_string())),
            report: Some(e.report("verify", subject)),
        }
    }

    /// An input by URL that `--offline` does not fetch: not verified, and
    /// said so.
    fn offline(subject: &str) -> Outcome {
        let message = "not fetched (--offline): nothing about it was checked";
        let mut report = Report::error("verify", Some(subject), "batch.offline", message);
        report.set_verdict(Verdict::NotVerified);
        Outcome {
            verified: false,
            unsigned: false,
            line: format!("{}: not fetched (--offline)", esc(subject)),
            report: Some(report),
        }
    }

    fn of_report(subject: &str, report: Report) -> Outcome {
        let line = if report.verified {
            format!("{}: verified", esc(subject))
        } else {
            let why = report
                .error
                .as_ref()
                .map_or_else(String::new, |p| format!(": {}", esc(&p.message)));
            format!("{}: NOT verified{why}", esc(subject))
        };
        Outcome {
            verified: report.verified,
            unsigned: false,
            report: Some(report),
            line,
        }
    }
}

/// `agentsig verify --batch LIST`.
pub fn run(list: &str, args: &BatchArgs, cx: &BatchContext<'_>) -> CliResult {
    let threads = match args.jobs {
        Some(0) => return Err(CliError::usage("-j must be at least 1")),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let per_host = match args.per_host {
        Some(0) => return Err(CliError::usage("--per-host must be at least 1")),
        Some(n) => n,
        None => DEFAULT_PER_HOST,
    };
    let under = match &args.root {
        Some(r) => Some(
            LocalFiles::under(std::path::Path::new(r))
                .map_err(|e| CliError::usage(format!("--root {r}: {e}")))?,
        ),
        None => None,
    };
    // Paths from standard input come from whatever produced the stream:
    // read only under a root the operator chose.
    let files = match (&under, list) {
        (Some(u), _) => u.clone(),
        (None, "-") => LocalFiles::refused(),
        (None, _) => LocalFiles::anywhere(),
    };
    let items = inputs(list)?;
    let verifier = if cx.trust.is_empty() {
        None
    } else {
        let mut policy = JwsPolicy::default();
        if !cx.typ.is_empty() {
            policy = policy.expected_typ(cx.typ.to_vec());
        }
        Some(
            Verifier::builder(cx.trust.resolver()?)
                .algorithms(cx.trust.allow_list())
                .strict_low_s(cx.trust.strict_low_s)
                .jws(policy)
                .key_headers(if cx.ignore_key_headers {
                    KeyHeaderPolicy::Ignore
                } else {
                    KeyHeaderPolicy::Refuse
                })
                .build(),
        )
    };
    #[cfg(feature = "net")]
    let urls = Urls::new(cx, per_host, args.response_signature_first, args.offline)?;
    #[cfg(not(feature = "net"))]
    let _ = per_host;
    // Only URLs carry a response signature whose age is checked: a build
    // without `net` reads no URL, so the options would do nothing.
    #[cfg(not(feature = "net"))]
    if cx.max_age.is_some() || cx.now.is_some() {
        return Err(CliError::usage(
            "--max-age and --now apply to URLs, and this build has no network support (feature net)",
        ));
    }
    let opts = BatchOptions::with_threads(threads);
    let mut progress = Progress::new();
    let (total, verified);
    let work = |item: Item| -> Vec<Outcome> {
        let one = match item {
            Item::Local(path) => {
                let document = match files.read(&path) {
                    Ok(b) => b,
                    Err(e) => return vec![Outcome::failed(&path, input_code(&e), e.to_string())],
                };
                if agentsig::catalog::is_catalog_document(&document) {
                    #[cfg(feature = "net")]
                    return urls.expand_bytes(&path, &document, cx.json);
                    #[cfg(not(feature = "net"))]
                    return vec![Outcome::failed(
                        &path,
                        "batch.no-net",
                        "a catalog's entries are fetched: this build has no network support (feature net)".into(),
                    )];
                }
                local(verifier.as_ref(), &files, &path, &document)
            }
            Item::Inline {
                name,
                descriptor,
                jws,
            } => check(
                verifier.as_ref(),
                &name,
                &descriptor,
                jws.as_deref(),
                || {
                    "an inline descriptor needs its \"jws\" string (only an A2A card with embedded signatures verifies alone)".into()
                },
            ),
            Item::Bad { name, message } => Outcome::failed(&name, "batch.bad-input", message),
            Item::Url(url) if args.offline => Outcome::offline(&url),
            #[cfg(feature = "net")]
            Item::Url(url) => return urls.verify_or_expand(&url, cx.json),
            #[cfg(not(feature = "net"))]
            Item::Url(url) => Outcome::failed(
                &url,
                "batch.no-net",
                "this build has no network support (feature net)".into(),
            ),
        };
        vec![one]
    };
    // The lines of a group of results are written with one `write(2)`
    // (one per line cost as much as a tenth of a verification), and each
    // group as soon as it is complete.
    let out = std::cell::RefCell::new(Vec::new());
    // (results, accepted, accepted as unsigned)
    let counts = std::cell::Cell::new((0usize, 0usize, 0usize));
    let order = if args.ordered {
        Order::Input
    } else {
        Order::Finished
    };
    run_grouped(
        items,
        &opts,
        order,
        work,
        |i, outcomes: Vec<Outcome>| {
            // One line per result: one for an input, one per entry of a
            // catalog given as an input.
            for o in outcomes {
                let (t, v, u) = counts.get();
                counts.set((
                    t + 1,
                    v + usize::from(o.verified),
                    u + usize::from(o.unsigned),
                ));
                let mut out = out.borrow_mut();
                if let (true, Some(mut r)) = (cx.json, o.report) {
                    r.detail("batch_index", i);
                    push_json_line(&mut out, &r);
                } else {
                    // One result, one line: every control character of the
                    // line (a subject's newline above all) is escaped.
                    out.extend_from_slice(esc(&o.line).as_bytes());
                    out.push(b'\n');
                }
            }
        },
        || {
            let (t, v, _) = counts.get();
            progress.clear();
            let mut out = out.borrow_mut();
            let _ = std::io::stdout().lock().write_all(&out);
            out.clear();
            progress.show(t, v);
        },
    );
    let unsigned;
    (total, verified, unsigned) = counts.get();
    progress.clear();
    let failed = total - verified;
    if total == 0 {
        return Err(CliError::usage(format!("{list}: no inputs to verify")));
    }
    if cx.json {
        let mut r = Report::error("verify", Some(list), "", "");
        r.error = None;
        r.detail("batch", true);
        r.detail("total", total);
        r.detail("verified_count", verified - unsigned);
        r.detail("unsigned_count", unsigned);
        r.detail("failed", failed);
        r.check(
            "batch.all-verified",
            failed == 0,
            format!(
                "{} of {total} verified, {unsigned} accepted unsigned",
                verified - unsigned
            ),
        );
        r.set_verdict(if failed > 0 {
            Verdict::NotVerified
        } else if unsigned > 0 {
            // Accepted by --allow-unsigned: never `verified`.
            Verdict::Unsigned
        } else {
            Verdict::Verified
        });
        if failed == 0 && unsigned > 0 {
            r.error = Some(agentsig::report::Problem::new(
                "batch.unsigned",
                format!("{unsigned} of {total} results accepted unsigned (--allow-unsigned): no trusted key vouches for them"),
            ));
        }
        if failed > 0 {
            // A report that is not verified says why (docs/report.md).
            r.error = Some(agentsig::report::Problem::new(
                "batch.not-all-verified",
                format!("{failed} of {total} results not verified: see their lines"),
            ));
        }
        print_line(&r);
    } else {
        let offline = if args.offline {
            " (--offline: inputs by URL were not fetched, and count as not verified)"
        } else {
            ""
        };
        if unsigned == 0 {
            errln!("{verified} of {total} verified, {failed} failed{offline}");
        } else {
            errln!(
                "{} of {total} verified, {unsigned} accepted unsigned (--allow-unsigned), {failed} failed{offline}",
                verified - unsigned
            );
        }
    }
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// One compact JSON report on one line (JSON Lines).
fn print_line(r: &Report) {
    let mut s = Vec::new();
    push_json_line(&mut s, r);
    let _ = std::io::stdout().lock().write_all(&s);
}

/// Append `r` as one compact JSON line to `out`.
fn push_json_line(out: &mut Vec<u8>, r: &Report) {
    if serde_json::to_writer(&mut *out, r).is_err() {
        out.extend_from_slice(b"{}");
    }
    out.push(b'\n');
}

/// The stable code of a local input refused or unreadable.
fn input_code(e: &InputError) -> &'static str {
    match e {
        InputError::NotRegular { .. } => "batch.not-a-regular-file",
        InputError::OutsideRoot { .. } => "batch.outside-root",
        InputError::Stdin => "batch.stdin-entry",
        InputError::PathsRefused { .. } => "batch.path-refused",
        _ => "batch.unreadable",
    }
}

/// A local file as `verify FILE` checks it: `FILE.jws` beside it is read
/// when present (an A2A card with embedded signatures needs none).
fn local(v: Option<&Verifier>, files: &LocalFiles, path: &str, document: &[u8]) -> Outcome {
    let jws_path = format!("{path}.jws");
    let (jws, missing) = match files.read(&jws_path) {
        Ok(b) => match String::from_utf8(b) {
            Ok(s) => (Some(s), String::new()),
            Err(_) => {
                return Outcome::failed(path, "batch.no-jws", format!("{jws_path}: not UTF-8"))
            }
        },
        Err(InputError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            (None, format!("{jws_path}: no such file (a descriptor is verified against its detached JWS; only an A2A card with embedded signatures verifies alone)"))
        }
        Err(e) => return Outcome::failed(path, input_code(&e), e.to_string()),
    };
    let mut o = check(v, path, document, jws.as_deref(), || missing);
    if let (Some(r), true) = (o.report.as_mut(), jws.is_some()) {
        if !r.details.contains_key("signed_card") {
            r.detail("jws", &jws_path);
        }
    }
    o
}

/// A document (and its detached JWS, when given) as `verify FILE` checks
/// it ([`agentsig::batch::verify_document`]).
fn check(
    v: Option<&Verifier>,
    subject: &str,
    document: &[u8],
    jws: Option<&str>,
    missing: impl FnOnce() -> String,
) -> Outcome {
    let Some(v) = v else {
        return Outcome::failed(
            subject,
            "batch.no-trusted-key",
            "a local descriptor needs --key or --jwks".into(),
        );
    };
    match agentsig::batch::verify_document(v, subject, document, jws) {
        Some(r) => Outcome::of_report(subject, r),
        None => Outcome::failed(subject, "batch.no-jws", missing()),
    }
}

/// The inputs of LIST, read lazily (a list file or standard input is read
/// one line at a time, as the window allows).
fn inputs(list: &str) -> Result<Box<dyn Iterator<Item = Item>>, CliError> {
    if list == "-" {
        let lines = lines(Box::new(std::io::BufReader::new(std::io::stdin())));
        return Ok(Box::new(lines.map(|r| match r {
            Ok((n, line)) => json_line(n, &line),
            Err(e) => e,
        })));
    }
    let meta = std::fs::metadata(list).map_err(|e| CliError::usage(format!("{list}: {e}")))?;
    if meta.is_dir() {
        let mut names = Vec::new();
        for e in std::fs::read_dir(list).map_err(|e| CliError::usage(format!("{list}: {e}")))? {
            let e = e.map_err(|e| CliError::usage(format!("{list}: {e}")))?;
            let name = e.file_name();
            let Some(name) = name.to_str() else { continue };
            if name.starts_with('.') || !name.ends_with(".json") {
                continue;
            }
            if e.file_type().is_ok_and(|t| t.is_file()) {
                names.push(name.to_owned());
            }
        }
        names.sort();
        let dir = std::path::PathBuf::from(list);
        return Ok(Box::new(names.into_iter().map(move |n| {
            Item::Local(dir.join(n).to_string_lossy().into_owned())
        })));
    }
    let f = std::fs::File::open(list).map_err(|e| CliError::usage(format!("{list}: {e}")))?;
    let lines = lines(Box::new(std::io::BufReader::new(f)));
    Ok(Box::new(lines.filter_map(|r| match r {
        Ok((_, line)) => {
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') {
                None
            } else {
                Some(path_or_url(t))
            }
        }
        Err(e) => Some(e),
    })))
}

fn path_or_url(s: &str) -> Item {
    if s.starts_with("https://") || s.starts_with("http://") {
        Item::Url(s.to_owned())
    } else {
        Item::Local(s.to_owned())
    }
}

/// One JSON Lines input line: a URL or path string, or an object with
/// `"url"`, `"path"`, or the inline `"descriptor"` (a JSON value or its
/// text) with its `"jws"` (absent for an A2A card with embedded
/// signatures), and an optional `"name"` for the reports.
fn json_line(n: usize, line: &str) -> Item {
    let name = format!("-:{n}");
    let bad = |message: String| Item::Bad {
        name: name.clone(),
        message,
    };
    let v = match agentsig::json::parse_strict(line.as_bytes()) {
        Ok(v) => v,
        Err(e) => return bad(format!("not JSON: {e}")),
    };
    let field = |k: &str| v.get(k).and_then(serde_json::Value::as_str);
    match (&v, field("path"), field("url"), v.get("descriptor")) {
        (serde_json::Value::String(s), _, _, _) => path_or_url(s),
        (_, Some(p), None, None) => Item::Local(p.to_owned()),
        (_, None, Some(u), None) => Item::Url(u.to_owned()),
        (_, None, None, Some(d)) => {
            let jws = match v.get("jws") {
                None => None,
                Some(serde_json::Value::String(j)) => Some(j.clone()),
                Some(_) => return bad("\"jws\" must be the JWS text (a string)".into()),
            };
            let descriptor = match d {
                serde_json::Value::String(s) => s.as_bytes().to_vec(),
                other => match serde_json::to_vec(other) {
                    Ok(b) => b,
                    Err(e) => return bad(e.to_string()),
                },
            };
            Item::Inline {
                name: field("name").map_or(name.clone(), str::to_owned),
                descriptor,
                jws,
            }
        }
        _ => bad(
            "expected a URL string, or an object with one of \"url\", \"descriptor\" (with \"jws\" unless an A2A card with embedded signatures) or \"path\" (with --root)".into(),
        ),
    }
}

/// The lines of a list, each of at most [`MAX_LINE`] bytes; a longer line
/// or a read error becomes a bad item.
fn lines(r: Box<dyn BufRead>) -> impl Iterator<Item = Result<(usize, String), Item>> {
    BoundedLines::new(r, MAX_LINE).map(|(n, line)| {
        line.map(|l| (n, l)).map_err(|e| Item::Bad {
            name: format!("line {n}"),
            message: e.to_string(),
        })
    })
}

/// URLs: one shared resolver whose fetcher keeps at most `--per-host`
/// connections open to one host.
#[cfg(feature = "net")]
struct Urls {
    resolver: agentsig::net::Resolver,
    /// The bounds of a catalog given as an input (nesting, entries,
    /// fetches).
    catalog: agentsig::catalog::CatalogOptions,
    /// `--per-host`: the threads that check one catalog's entries.
    per_host: usize,
    /// `--offline`: no entry or nested catalog is fetched.
    offline: bool,
}

#[cfg(feature = "net")]
impl Urls {
    fn new(
        cx: &BatchContext<'_>,
        per_host: usize,
        response_signature_first: bool,
        offline: bool,
    ) -> Result<Urls, CliError> {
        let policy = cx.net.fetch.policy()?.max_connections_per_host(per_host);
        let fetcher = cx.net.fetch.fetcher_with(policy)?;
        let mut o = super::net::options(cx.net, cx.trust, cx.max_age, cx.now)?;
        // The descriptor and its `.jws` are fetched concurrently, as
        // `verify URL` does, within the per-host connection bound.
        o.skip_jws_when_http_signed = response_signature_first;
        Ok(Urls {
            resolver: agentsig::net::Resolver::with_options(fetcher, o),
            catalog: {
                // Offline: a nested catalog by `url` is not fetched either.
                let mut c = agentsig::catalog::CatalogOptions::default();
                if offline {
                    c.max_fetches = 0;
                }
                c
            },
            per_host,
            offline,
        })
    }

    /// Verify one URL as `verify URL` does, through `resolver`; the JSON
    /// report is built only for `--json`.
    fn verify(&self, resolver: &Resolver, url: &str, json: bool) -> Outcome {
        match resolver.verify_url(url) {
            Ok(v) => self.verified(url, &v, json),
            Err(e) => Outcome::url_failed(url, &e),
        }
    }

    /// The result of a URL that verified.
    fn verified(&self, url: &str, v: &agentsig::net::verify::UrlVerified, json: bool) -> Outcome {
        let line = if v.signed() {
            format!("{}: verified", esc(url))
        } else {
            format!(
                "{}: unsigned, NOT verified (accepted by --allow-unsigned)",
                esc(url)
            )
        };
        Outcome {
            verified: true,
            unsigned: !v.signed(),
            report: json.then(|| v.report("verify", url)),
            line,
        }
    }
}

#[cfg(feature = "net")]
use agentsig::net::{catalog::job_budget, Resolver};

#[cfg(feature = "net")]
impl Urls {
    /// A URL input, by the library's one rule
    /// ([`agentsig::net::catalog::verify_or_expand`]): a catalog expands
    /// into one result per entry; anything else is one result, as `verify
    /// URL` gives it.
    fn verify_or_expand(&self, url: &str, json: bool) -> Vec<Outcome> {
        use agentsig::net::catalog::{verify_or_expand, UrlInput};
        match verify_or_expand(&self.resolver, url, &self.catalog) {
            UrlInput::Document(r) => match *r {
                Ok(v) => vec![self.verified(url, &v, json)],
                Err(e) => vec![Outcome::url_failed(url, &e)],
            },
            UrlInput::Catalog { url, entries, job } => self.entries(&job, &url, &entries, json),
            UrlInput::CatalogFailed { url, error } => vec![Outcome::catalog_failed(&url, &error)],
            _ => vec![Outcome::failed(
                url,
                "batch.bad-input",
                "an input this version cannot check".into(),
            )],
        }
    }

    /// A catalog at hand (a local file), named `name`: one job.
    fn expand_bytes(&self, name: &str, document: &[u8], json: bool) -> Vec<Outcome> {
        let job = self.job(job_budget(&self.catalog));
        self.expand_job(job, name, document, json)
    }

    /// A resolver for one catalog job: this one's options over a fetcher
    /// whose every request (nested catalogs, entries, their detached JWS,
    /// key sets) counts toward `budget`, the bounds of a catalog
    /// ([`agentsig::net::catalog::job_budget`]); the HTTP cache and the
    /// connection pool stay shared.
    fn job(&self, budget: std::sync::Arc<agentsig::net::FetchBudget>) -> Resolver {
        Resolver::with_options(
            self.resolver.fetcher().with_budget(budget),
            self.resolver.options().clone(),
        )
    }

    /// The catalog `document`, named `name`, expanded and its entries
    /// checked within the bounds of `job`'s fetcher.
    fn expand_job(&self, job: Resolver, name: &str, document: &[u8], json: bool) -> Vec<Outcome> {
        match agentsig::net::catalog::expand_catalog_bytes(
            job.fetcher(),
            name,
            document,
            &self.catalog,
        ) {
            Ok(inputs) => self.entries(&job, name, &inputs, json),
            Err(e) => vec![Outcome::failed(name, "catalog.unreadable", e.to_string())],
        }
    }

    /// One result per entry, in catalog order, each checked by its media
    /// type ([`agentsig::catalog::CatalogInput::check`]): an entry URL
    /// exactly as `verify URL` alone checks it. The entries of one catalog
    /// are checked `--per-host` at a time (the fetcher's per-host bound
    /// holds whatever the threads).
    fn entries(
        &self,
        job: &Resolver,
        catalog: &str,
        inputs: &[agentsig::catalog::CatalogInput],
        json: bool,
    ) -> Vec<Outcome> {
        use agentsig::catalog::EntryCheck;
        let mut out: Vec<Option<Outcome>> = Vec::new();
        out.resize_with(inputs.len(), || None);
        let opts = BatchOptions::with_threads(self.per_host.min(inputs.len()).max(1));
        agentsig::batch::run_ordered(
            inputs,
            &opts,
            |input| {
                let mut o = match input.check() {
                    EntryCheck::VerifyUrl(u) if self.offline => Outcome::offline(u),
                    // A nested catalog by `url`: refused for the fetch
                    // limit of 0 that --offline sets.
                    EntryCheck::Refused(_)
                        if self.offline
                            && input.media_type.as_deref()
                                == Some(agentsig::catalog::MEDIA_TYPE) =>
                    {
                        Outcome::offline(input.url.as_deref().unwrap_or(&input.pointer))
                    }
                    EntryCheck::VerifyUrl(u) => self.verify(job, u, json),
                    EntryCheck::Refused(why) => {
                        Outcome::failed(&input.pointer, "catalog.entry-refused", why.to_owned())
                    }
                    EntryCheck::NotChecked(why) => {
                        let subject = input.url.as_deref().unwrap_or(&input.pointer);
                        // Nothing failed, but no key vouches for the entry:
                        // `unsigned`, accepted only under --allow-unsigned.
                        let accepted = self.resolver.options().allow_unsigned;
                        let mut r =
                            Report::error("verify", Some(subject), "catalog.not-checked", &why);
                        r.check("catalog.not-checked", accepted, why.clone());
                        r.set_verdict(Verdict::Unsigned);
                        Outcome {
                            verified: accepted,
                            unsigned: accepted,
                            line: format!(
                                "{}: not checked (unsigned): {}",
                                esc(subject),
                                esc(&why)
                            ),
                            report: Some(r),
                        }
                    }
                    _ => Outcome::failed(
                        &input.pointer,
                        "catalog.entry-refused",
                        "an entry this version cannot check".into(),
                    ),
                };
                if let Some(r) = o.report.as_mut() {
                    r.detail("catalog", catalog);
                    r.detail("catalog_entry", &input.pointer);
                    r.detail("identifier", &input.identifier);
                    r.detail("media_type", &input.media_type);
                }
                o.line = format!("{} ({})", o.line, esc(&input.pointer));
                o
            },
            |i, o| out[i] = Some(o),
        );
        out.into_iter().flatten().collect()
    }
}

/// A progress line on standard error, only when it is a terminal.
struct Progress {
    on: bool,
    last: Option<Instant>,
    shown: bool,
}

impl Progress {
    fn new() -> Progress {
        Progress {
            on: std::io::stderr().is_terminal(),
            last: None,
            shown: false,
        }
    }

    fn show(&mut self, total: usize, verified: usize) {
        if !self.on
            || self
                .last
                .is_some_and(|t| t.elapsed() < Duration::from_millis(100))
        {
            return;
        }
        self.last = Some(Instant::now());
        let _ = write!(
            std::io::stderr().lock(),
            "\r\x1b[2K{total} done, {verified} verified, {} failed",
            total - verified
        );
        self.shown = true;
    }

    fn clear(&mut self) {
        if self.shown {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
            self.shown = false;
        }
    }
}
