//! `agentsig verify --batch LIST`: verify many descriptors on all cores
//! with one shared verifier ([`agentsig::batch`]), one result line per
//! input in input order, then a summary.
//!
//! LIST is a directory (each `*.json` file against its `FILE.jws`), a file
//! of paths or `https://` URLs (one a line; empty lines and lines starting
//! with `#` skipped), or `-` for JSON Lines on standard input (each line a
//! path or URL string, or an object with `"path"`, `"url"`, or an inline
//! `"descriptor"` with its `"jws"`). URLs are fetched through the
//! SSRF-guarded fetcher of `agentsig verify URL`, with one shared
//! [`agentsig::net::Resolver`] (its RFC 9111 cache and key discoveries
//! shared by all workers) and at most `--per-host` fetches at once to one
//! host.

use super::{CliError, CliResult, TrustedKeyArgs};
use agentsig::batch::{run_ordered_grouped, BatchOptions};
use agentsig::descriptor::DescriptorError;
use agentsig::jws::{self, JwsPolicy, KeyHeaderPolicy};
use agentsig::report::{Report, Verdict};
use agentsig::verifier::Verifier;
use std::io::{BufRead, IsTerminal, Read, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Longest line of a LIST file or of the JSON Lines input.
const MAX_LINE: usize = 64 * 1024;

/// Default of `--per-host`.
const DEFAULT_PER_HOST: usize = 4;

/// The `--batch` options of `agentsig verify`.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct BatchArgs {
    /// Verify many descriptors on all cores: LIST is a directory (each *.json against its .jws),
    /// a file of paths or https URLs (one a line), or - for JSON Lines on standard input (a
    /// path or URL string, or {"path"|"url"|"descriptor"+"jws"} per line). One result line per
    /// input (--json: one report per line), then a summary; exit 0 only when all verified.
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub batch: Option<String>,
    /// With --batch: worker threads (default: the number of cores).
    #[arg(short = 'j', long = "jobs", value_name = "N", requires = "batch")]
    pub jobs: Option<usize>,
    /// With --batch: most fetches at once to one host (default 4).
    #[arg(long, value_name = "N", requires = "batch")]
    pub per_host: Option<usize>,
    /// With --batch: also fetch and verify URL.jws beside a URL whose RFC 9421 response
    /// signature verified. By default a batch looks for the detached JWS only beside a
    /// response without one (seed 001 section 10.3: response signatures protect descriptors
    /// served over HTTP, the JWS is for those that cannot use them): one request per signed
    /// descriptor instead of two.
    #[arg(long, requires = "batch")]
    pub also_jws: bool,
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
    /// A descriptor file, verified against `FILE.jws`.
    Local(String),
    /// An `https://` URL, as `verify URL`.
    Url(String),
    /// A descriptor and its JWS given in the JSON Lines input.
    Inline {
        name: String,
        descriptor: Vec<u8>,
        jws: String,
    },
    /// An input line that could not be understood.
    Bad { name: String, message: String },
}

/// The result of one input.
struct Outcome {
    verified: bool,
    /// The JSON report (absent for a verified item in text mode).
    report: Option<Report>,
    line: String,
}

impl Outcome {
    fn failed(subject: &str, code: &str, message: String) -> Outcome {
        let mut report = Report::error("verify", Some(subject), code, &message);
        report.set_verdict(Verdict::NotVerified);
        Outcome {
            verified: false,
            line: format!("{subject}: NOT verified: {message}"),
            report: Some(report),
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
    let urls = Urls::new(cx, per_host, args.also_jws)?;
    #[cfg(not(feature = "net"))]
    let _ = per_host;
    let opts = BatchOptions::with_threads(threads);
    let mut progress = Progress::new();
    let (total, verified);
    let work = |item: Item| -> Outcome {
        match item {
            Item::Local(path) => local(verifier.as_ref(), &path, cx.json),
            Item::Inline {
                name,
                descriptor,
                jws,
            } => check(verifier.as_ref(), &name, &descriptor, &jws, None, cx.json),
            Item::Bad { name, message } => Outcome::failed(&name, "batch.bad-input", message),
            #[cfg(feature = "net")]
            Item::Url(url) => urls.verify(&url, cx.json),
            #[cfg(not(feature = "net"))]
            Item::Url(url) => Outcome::failed(
                &url,
                "batch.no-net",
                "this build has no network support (feature net)".into(),
            ),
        }
    };
    // The lines of a group of results are written with one `write(2)`
    // (one per line cost as much as a tenth of a verification), and each
    // group as soon as it is complete.
    let out = std::cell::RefCell::new(Vec::new());
    let counts = std::cell::Cell::new((0usize, 0usize));
    run_ordered_grouped(
        items,
        &opts,
        work,
        |_, o| {
            let (t, v) = counts.get();
            counts.set((t + 1, v + usize::from(o.verified)));
            let mut out = out.borrow_mut();
            if let (true, Some(r)) = (cx.json, &o.report) {
                push_json_line(&mut out, r);
            } else {
                out.extend_from_slice(
                    agentsig::text::escape_controls_keep_newlines(&o.line).as_bytes(),
                );
                out.push(b'\n');
            }
        },
        || {
            let (t, v) = counts.get();
            progress.clear();
            let mut out = out.borrow_mut();
            let _ = std::io::stdout().lock().write_all(&out);
            out.clear();
            progress.show(t, v);
        },
    );
    (total, verified) = counts.get();
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
        r.detail("verified_count", verified);
        r.detail("failed", failed);
        r.check(
            "batch.all-verified",
            failed == 0,
            format!("{verified} of {total} verified"),
        );
        r.set_verdict(if failed == 0 {
            Verdict::Verified
        } else {
            Verdict::NotVerified
        });
        print_line(&r);
    } else {
        errln!("{verified} of {total} verified, {failed} failed");
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

/// A local descriptor and its `FILE.jws`.
fn local(v: Option<&Verifier>, path: &str, json: bool) -> Outcome {
    let descriptor = match super::read_input(path) {
        Ok(b) => b,
        Err(e) => return Outcome::failed(path, "batch.unreadable", e.message),
    };
    let jws_path = format!("{path}.jws");
    let jws = match super::read_input(&jws_path) {
        Ok(b) => b,
        Err(e) => return Outcome::failed(path, "batch.no-jws", e.message),
    };
    let Ok(jws) = String::from_utf8(jws) else {
        return Outcome::failed(path, "batch.no-jws", format!("{jws_path}: not UTF-8"));
    };
    check(v, path, &descriptor, &jws, Some(&jws_path), json)
}

/// A descriptor against its detached JWS, as `verify FILE` does. The
/// report is built only when printed (`--json`) or needed for the reason
/// of a failure.
fn check(
    v: Option<&Verifier>,
    subject: &str,
    descriptor: &[u8],
    jws_text: &str,
    jws_path: Option<&str>,
    json: bool,
) -> Outcome {
    let Some(v) = v else {
        return Outcome::failed(
            subject,
            "batch.no-trusted-key",
            "a local descriptor needs --key or --jwks".into(),
        );
    };
    let report = match v.verify_descriptor(descriptor, jws_text) {
        Ok(r) => r,
        Err(DescriptorError::NotVerified(r)) => *r,
        Err(DescriptorError::Jws(jws::JwsError::PayloadDiffers)) => {
            return Outcome::failed(
                subject,
                "payload-differs",
                "the JWS carries a payload that differs from the descriptor".into(),
            )
        }
        Err(DescriptorError::TooLarge(n)) => {
            return Outcome::failed(subject, "too-large", format!("{n} bytes is too large"))
        }
        Err(e) => return Outcome::failed(subject, "batch.malformed", e.to_string()),
    };
    let verified = report.verified();
    if verified && !json {
        return Outcome {
            verified,
            report: None,
            line: format!("{subject}: verified"),
        };
    }
    let mut json = Report::from_jws("verify", Some(subject), &report.jws);
    if let Some(p) = jws_path {
        json.detail("jws", p);
    }
    json.detail("canonical_sha256", report.canonical_sha256());
    let line = if verified {
        format!("{subject}: verified")
    } else {
        let why = json
            .error
            .as_ref()
            .map_or_else(String::new, |p| format!(": {}", p.message));
        format!("{subject}: NOT verified{why}")
    };
    Outcome {
        verified,
        report: Some(json),
        line,
    }
}

/// The inputs of LIST, read lazily (a list file or standard input is read
/// one line at a time, as the window allows).
fn inputs(list: &str) -> Result<Box<dyn Iterator<Item = Item>>, CliError> {
    if list == "-" {
        let lines = Lines::new(Box::new(std::io::BufReader::new(std::io::stdin())));
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
    let lines = Lines::new(Box::new(std::io::BufReader::new(f)));
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

/// One JSON Lines input line.
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
            let Some(jws) = field("jws") else {
                return bad("an inline descriptor needs its \"jws\" string".into());
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
                jws: jws.to_owned(),
            }
        }
        _ => bad(
            "expected a path or URL string, or an object with one of \"path\", \"url\" or \"descriptor\" (with \"jws\")".into(),
        ),
    }
}

/// Lines of at most [`MAX_LINE`] bytes, numbered from 1; a longer line or
/// a read error becomes a bad item (the rest of a long line is skipped).
struct Lines {
    r: Box<dyn BufRead>,
    n: usize,
    done: bool,
}

impl Lines {
    fn new(r: Box<dyn BufRead>) -> Lines {
        Lines {
            r,
            n: 0,
            done: false,
        }
    }
}

impl Iterator for Lines {
    type Item = Result<(usize, String), Item>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let mut buf = Vec::new();
        self.n += 1;
        let name = format!("line {}", self.n);
        match self
            .r
            .by_ref()
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut buf)
        {
            Ok(0) => {
                self.done = true;
                None
            }
            Ok(_) if buf.len() > MAX_LINE && buf.last() != Some(&b'\n') => {
                // Skip to the end of the over-long line.
                let mut rest = Vec::new();
                loop {
                    rest.clear();
                    match self
                        .r
                        .by_ref()
                        .take(MAX_LINE as u64)
                        .read_until(b'\n', &mut rest)
                    {
                        Ok(0) | Err(_) => {
                            self.done = true;
                            break;
                        }
                        Ok(_) if rest.last() == Some(&b'\n') => break,
                        Ok(_) => {}
                    }
                }
                Some(Err(Item::Bad {
                    name,
                    message: format!("longer than {MAX_LINE} bytes"),
                }))
            }
            Ok(_) => match String::from_utf8(buf) {
                Ok(s) => Some(Ok((self.n, s.trim_end_matches(['\n', '\r']).to_owned()))),
                Err(_) => Some(Err(Item::Bad {
                    name,
                    message: "not UTF-8".into(),
                })),
            },
            Err(e) => {
                self.done = true;
                Some(Err(Item::Bad {
                    name,
                    message: e.to_string(),
                }))
            }
        }
    }
}

/// URLs: one shared resolver and a per-host limit on fetches at once.
#[cfg(feature = "net")]
struct Urls {
    resolver: agentsig::net::Resolver,
    hosts: std::sync::Mutex<std::collections::HashMap<String, usize>>,
    freed: std::sync::Condvar,
    per_host: usize,
}

#[cfg(feature = "net")]
impl Urls {
    fn new(cx: &BatchContext<'_>, per_host: usize, also_jws: bool) -> Result<Urls, CliError> {
        let fetcher = cx.net.fetch.fetcher()?;
        let mut o = super::net::options(cx.net, cx.trust, cx.max_age, cx.now)?;
        // The workers overlap the round trips of many items: no thread per
        // item for the `.jws`.
        o.sequential_fetches = true;
        o.skip_jws_when_http_signed = !also_jws;
        Ok(Urls {
            resolver: agentsig::net::Resolver::with_options(fetcher, o),
            hosts: std::sync::Mutex::default(),
            freed: std::sync::Condvar::new(),
            per_host,
        })
    }

    /// Verify one URL; the JSON report is built only for `--json`.
    fn verify(&self, url: &str, json: bool) -> Outcome {
        let host = url::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(|h| format!("{h}:{:?}", u.port())))
            .unwrap_or_default();
        let _slot = self.acquire(&host);
        match self.resolver.verify_url(url) {
            Ok(v) => {
                let line = if v.signed() {
                    format!("{url}: verified")
                } else {
                    format!("{url}: verified (NOT signed: Content-Digest only; use --require-signed to refuse)")
                };
                Outcome {
                    verified: true,
                    report: json.then(|| super::net::success_report("verify", url, &v)),
                    line,
                }
            }
            Err(e) => Outcome::failed(url, e.code(), e.to_string()),
        }
    }

    /// Wait until `host` has fewer than `per_host` fetches in flight.
    fn acquire(&self, host: &str) -> Option<HostSlot<'_>> {
        let mut m = self.hosts.lock().ok()?;
        while m.get(host).copied().unwrap_or(0) >= self.per_host {
            m = self.freed.wait(m).ok()?;
        }
        *m.entry(host.to_owned()).or_insert(0) += 1;
        Some(HostSlot {
            urls: self,
            host: host.to_owned(),
        })
    }
}

/// One fetch slot of a host, given back on drop.
#[cfg(feature = "net")]
struct HostSlot<'a> {
    urls: &'a Urls,
    host: String,
}

#[cfg(feature = "net")]
impl Drop for HostSlot<'_> {
    fn drop(&mut self) {
        if let Ok(mut m) = self.urls.hosts.lock() {
            if let Some(n) = m.get_mut(&self.host) {
                *n -= 1;
                if *n == 0 {
                    m.remove(&self.host);
                }
            }
        }
        self.urls.freed.notify_all();
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
