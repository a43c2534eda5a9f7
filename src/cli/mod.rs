//! The `agentsig` command line: a thin layer over the library that maps its
//! typed errors to messages and exit codes.
//!
//! Exit codes (every command): 0 verified or done; 1 verification failed or
//! policy refused; 2 usage error or unreadable input.

use clap::{Parser, Subcommand};
use std::io::{Read, Write};
use std::process::ExitCode;

/// `println!` that ignores a closed standard output (`agentsig ... | head`)
/// instead of panicking on EPIPE. The text is passed through
/// [`agentsig::text::escape_controls`] (line breaks kept): values taken from
/// unverified input never reach the terminal as control sequences.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let s = format!($($arg)*);
        let _ = writeln!(std::io::stdout().lock(), "{}", agentsig::text::escape_controls_keep_newlines(&s));
    }};
}

/// `print!` that ignores a closed standard output (escaped like [`outln!`]).
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let s = format!($($arg)*);
        let _ = write!(std::io::stdout().lock(), "{}", agentsig::text::escape_controls_keep_newlines(&s));
    }};
}

/// `eprintln!` with the same escaping as [`outln!`].
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let s = format!($($arg)*);
        let _ = writeln!(std::io::stderr().lock(), "{}", agentsig::text::escape_controls_keep_newlines(&s));
    }};
}

mod args;
mod batch;
mod catalog;
#[cfg(all(feature = "net", feature = "redis"))]
mod crawl;
mod delegation;
mod http;
mod inspect;
#[cfg(feature = "server")]
mod inspect_serve;
mod key;
mod keygen;
mod lint;
#[cfg(feature = "net")]
mod net;
mod pin;
mod pkcs11;
#[cfg(feature = "server")]
mod serve;
mod sign;
mod webbotauth;

use agentsig::keys::LoadOptions;
use agentsig::trust::{StaticKeys, TrustError};
use agentsig::{Algorithm, KeyError, SigningKey};

/// Largest input file read (descriptor, message, key): 16 MiB.
pub const MAX_INPUT: u64 = 16 * 1024 * 1024;

#[derive(Parser)]
#[command(
    name = "agentsig",
    version,
    about = "Sign and verify AI-agent descriptors",
    long_about = "Sign and verify AI-agent descriptors.\n\n\
Publishers sign the documents that advertise their agents (agent.json, agent cards) before publishing them; \
resolvers verify what they fetch.\n\n\
Exit codes: 0 verified or done; 1 verification failed or refused by policy; 2 usage error or unreadable input.\n\n\
Keys are read by content: PEM (PKCS#8, SEC1, PKCS#1, SPKI), DER, JWK or JWK Set. \
Secrets never go on the command line: give a path, or env:NAME to read the key from an environment variable.",
    after_help = "Typical use:\n  agentsig keygen --out publisher\n  agentsig sign agent.json --key publisher.pem\n  agentsig verify agent.json --jwks publisher.jwks.json"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions { shell: clap_complete::Shell },
    /// Print the manual (roff): the agentsig page, then one page per subcommand with every
    /// option. With --out DIR, write them as files: agentsig.1, agentsig-sign.1, agentsig-http-verify.1 ...
    Man {
        /// Directory to write one page per command into (created when missing).
        #[arg(long, allow_hyphen_values = true, value_name = "DIR")]
        out: Option<std::path::PathBuf>,
    },
    /// Generate a key pair: PKCS#8 private key (mode 0600; encrypted when a passphrase is given)
    /// and the public key as JWK and JWK Set.
    Keygen(keygen::KeygenArgs),
    /// Key tools: `key public KEY [--as-jwks]` prints the public JWK or JWK Set of any key.
    #[command(subcommand)]
    Key(key::KeyCommand),
    /// Print the RFC 8785 canonical form of a JSON document.
    Canon(sign::CanonArgs),
    /// Check a descriptor against its format's MUST rules (detected, or --format).
    Lint(lint::LintArgs),
    /// Sign a descriptor: write a detached JWS over its canonical form beside it (FILE.jws);
    /// an A2A Agent Card gets the signature in its own `signatures` array instead.
    Sign(sign::SignArgs),
    /// Verify a descriptor against its detached JWS (an A2A Agent Card by the signatures it
    /// embeds), or a saved HTTP response (--response).
    Verify(sign::VerifyArgs),
    /// RFC 9421 HTTP Message Signatures over raw HTTP messages.
    #[command(subcommand)]
    Http(http::HttpCommand),
    /// Print the RFC 9530 Content-Digest of a file.
    Digest(http::DigestArgs),
    /// Show what was signed and how each signature was judged: an RFC 9421 message's signature
    /// base line by line with each line's source, a JWS's canonical form, a delegation chain's
    /// hops, an AI Catalog's entries (docs/inspect.md).
    Inspect(inspect::InspectArgs),
    /// Audit, mint and exchange RFC 8693 delegation tokens (nested act, scope narrowing).
    #[command(subcommand)]
    Delegation(delegation::DelegationCommand),
    /// Publish a directory of descriptors over HTTP(S), every response signed (RFC 9421):
    /// /.well-known/agents.json, the JWK Set at /.well-known/jwks.json, ETag, 304, HEAD.
    #[cfg(feature = "server")]
    Serve(serve::ServeArgs),
    /// Key continuity per agent identity (known_hosts for agents): check, add, rotate, list,
    /// announce and accept pinned key thumbprints in --pin-store.
    #[command(subcommand)]
    Pin(pin::PinCommand),
    /// Resolve agent://authority/name (agents.json, DID AgentDescriptor service), fetch and
    /// verify the descriptor with keys found by discovery (draft-narvaneni-agent-uri-03 sections 5.1, 10.3).
    #[cfg(feature = "net")]
    Resolve(net::ResolveArgs),
    /// A verification crawl over a fleet of workers on Redis Streams: add inputs, run workers
    /// on any machines, watch the status (docs/crawl.md).
    #[cfg(all(feature = "net", feature = "redis"))]
    #[command(subcommand)]
    Crawl(crawl::CrawlCommand),
    /// Web Bot Auth key directory (draft-ietf-webbotauth-httpsig-protocol-00 section 5.5).
    #[command(subcommand)]
    Directory(webbotauth::DirectoryCommand),
}

/// An error that ends a command, with its exit code and the stable code
/// its `--json` report gives as `error.code` (docs/report.md).
#[derive(Debug)]
pub struct CliError {
    /// The exit code: 1 or 2.
    pub code: u8,
    /// The report's `error.code`: `usage`, `input.unreadable`,
    /// `input.malformed`, `key.unusable`, `output.unwritable`, `failed`...
    pub kind: &'static str,
    /// What happened, for people.
    pub message: String,
    /// Extras for the report's `details` (what the command knew when it
    /// stopped: the JWS path, the output path...).
    pub details: serde_json::Map<String, serde_json::Value>,
    /// The report's verdict when it is not the exit code's usual one
    /// (`not-verified` for 1, `error` for 2): `unavailable` when what was
    /// to be checked could not be fetched.
    pub verdict: Option<agentsig::report::Verdict>,
}

impl CliError {
    fn new(code: u8, kind: &'static str, msg: impl Into<String>) -> CliError {
        CliError {
            code,
            kind,
            message: msg.into(),
            details: serde_json::Map::new(),
            verdict: None,
        }
    }
    /// Exit 2: the command was misused (options, arguments).
    pub fn usage(msg: impl Into<String>) -> CliError {
        CliError::new(2, "usage", msg)
    }
    /// Exit 2: an input file (or standard input) could not be read.
    pub fn unreadable(msg: impl Into<String>) -> CliError {
        CliError::new(2, "input.unreadable", msg)
    }
    /// Exit 2: an input was read but is not what the command takes (not
    /// JSON, not an HTTP message, not a token).
    pub fn malformed(msg: impl Into<String>) -> CliError {
        CliError::new(2, "input.malformed", msg)
    }
    /// Exit 2: a key could not be read or used.
    pub fn key(msg: impl Into<String>) -> CliError {
        CliError::new(2, "key.unusable", msg)
    }
    /// Exit 2: an output file could not be written.
    pub fn unwritable(msg: impl Into<String>) -> CliError {
        CliError::new(2, "output.unwritable", msg)
    }
    /// Exit 1: verification failed or policy refused.
    pub fn failed(msg: impl Into<String>) -> CliError {
        CliError::new(1, "failed", msg)
    }
    /// The same error with another report code.
    pub fn with_kind(mut self, kind: &'static str) -> CliError {
        self.kind = kind;
        self
    }
    /// The same error with the verdict its report gives (exit 1). Only a
    /// fetched input has another verdict than `not-verified` for an error.
    #[cfg(feature = "net")]
    pub fn with_verdict(mut self, verdict: agentsig::report::Verdict) -> CliError {
        self.verdict = Some(verdict);
        self
    }
    /// The same error with a `details` member for its report.
    pub fn with_detail(mut self, key: &str, value: impl serde::Serialize) -> CliError {
        self.details.insert(
            key.to_owned(),
            serde_json::to_value(value).unwrap_or(serde_json::Value::Null),
        );
        self
    }
}

impl From<KeyError> for CliError {
    fn from(e: KeyError) -> Self {
        CliError::key(format!("key: {e}"))
    }
}

pub type CliResult = Result<ExitCode, CliError>;

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            if code == 2 && json_requested() {
                // What the text says, its first paragraph on one line
                // ("invalid value 'x' for '<NAME>': ..."), not only the
                // kind of mistake.
                let text = e.render().to_string();
                let said: Vec<&str> = text
                    .lines()
                    .map(str::trim)
                    .take_while(|l| !l.is_empty())
                    .collect();
                let msg = said
                    .join(" ")
                    .strip_prefix("error: ")
                    .map_or_else(|| e.kind().to_string(), str::to_owned);
                print_report(&agentsig::report::Report::error(
                    &command_words(),
                    None,
                    "usage",
                    &msg,
                ));
            }
            return ExitCode::from(code);
        }
    };
    let subject = subject_of(&cli.command);
    let result = match cli.command {
        Command::Completions { shell } => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut cmd, "agentsig", &mut std::io::stdout());
            Ok(ExitCode::SUCCESS)
        }
        Command::Man { out } => man(out.as_deref()),
        Command::Keygen(a) => keygen::run(a),
        Command::Key(c) => key::run(c),
        Command::Canon(a) => sign::canon(a),
        Command::Lint(a) => lint::run(a),
        Command::Sign(a) => sign::sign(a),
        Command::Verify(a) => sign::verify(a),
        Command::Http(c) => http::run(c),
        Command::Digest(a) => http::digest_cmd(a),
        Command::Inspect(a) => inspect::run(a),
        Command::Directory(c) => webbotauth::run_directory(c),
        Command::Delegation(c) => delegation::run(c),
        #[cfg(feature = "server")]
        Command::Serve(a) => serve::run(a),
        Command::Pin(c) => pin::run(c),
        #[cfg(feature = "net")]
        Command::Resolve(a) => net::resolve(a),
        #[cfg(all(feature = "net", feature = "redis"))]
        Command::Crawl(c) => crawl::run(c),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            errln!("agentsig: {}", e.message);
            if json_requested() {
                let mut r = agentsig::report::Report::error(
                    &command_words(),
                    subject.as_deref(),
                    e.kind,
                    &e.message,
                );
                if e.code == 1 {
                    r.set_verdict(e.verdict.unwrap_or(agentsig::report::Verdict::NotVerified));
                }
                r.details = e.details;
                print_report(&r);
            }
            ExitCode::from(e.code)
        }
    }
}

/// What a command works on, for the `subject` of its report: the file,
/// message, token, identity, URI or directory its arguments name.
fn subject_of(c: &Command) -> Option<String> {
    match c {
        Command::Completions { .. } | Command::Man { .. } => None,
        Command::Keygen(a) => a.subject(),
        Command::Key(c) => c.subject(),
        Command::Canon(a) => a.subject(),
        Command::Lint(a) => Some(a.file.clone()),
        Command::Sign(a) => a.subject(),
        Command::Verify(a) => a.subject(),
        Command::Http(c) => c.subject(),
        Command::Digest(a) => a.subject(),
        Command::Inspect(a) => a.subject(),
        Command::Delegation(c) => c.subject(),
        #[cfg(feature = "server")]
        Command::Serve(a) => a.subject(),
        Command::Pin(c) => c.subject(),
        #[cfg(feature = "net")]
        Command::Resolve(a) => Some(a.uri.clone()),
        #[cfg(all(feature = "net", feature = "redis"))]
        Command::Crawl(c) => c.subject(),
        Command::Directory(c) => c.subject(),
    }
}

/// `agentsig man`: every command's page, to standard output or one file each.
fn man(out: Option<&std::path::Path>) -> CliResult {
    let mut cmd = <Cli as clap::CommandFactory>::command().disable_help_subcommand(true);
    cmd.build();
    if let Some(dir) = out {
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::unwritable(format!("{}: {e}", dir.display())))?;
        clap_mangen::generate_to(cmd, dir)
            .map_err(|e| CliError::unwritable(format!("{}: {e}", dir.display())))?;
        errln!("wrote the manual pages into {}", dir.display());
        return Ok(ExitCode::SUCCESS);
    }
    fn all(c: &clap::Command, v: &mut Vec<clap::Command>) {
        v.push(c.clone());
        for s in c.get_subcommands().filter(|s| !s.is_hide_set()) {
            all(s, v);
        }
    }
    let mut cmds = Vec::new();
    all(&cmd, &mut cmds);
    let mut buf = Vec::new();
    for c in cmds {
        clap_mangen::Man::new(c)
            .render(&mut buf)
            .map_err(|e| CliError::usage(format!("man page: {e}")))?;
    }
    let _ = std::io::stdout().lock().write_all(&buf);
    Ok(ExitCode::SUCCESS)
}

/// Read a file, or standard input for `-`, with a size bound.
pub fn read_input(path: &str) -> Result<Vec<u8>, CliError> {
    let buf = if path == "-" {
        read_bounded(std::io::stdin().lock())
            .map_err(|e| CliError::unreadable(format!("standard input: {e}")))?
    } else {
        std::fs::File::open(path)
            .and_then(read_bounded)
            .map_err(|e| CliError::unreadable(format!("{path}: {e}")))?
    };
    if buf.len() as u64 > MAX_INPUT {
        return Err(CliError::unreadable(format!(
            "{path}: larger than {MAX_INPUT} bytes"
        )));
    }
    Ok(buf)
}

/// The first [`MAX_INPUT`] + 1 bytes of `f` (one more than allowed, so that
/// the caller can tell an oversized input).
///
/// A descriptor or a JWS is usually a few kilobytes: the first read asks for
/// 16 KiB and the second sees the end, so a file costs `open`, two `read`s
/// and `close`. `std::fs::read` adds a `statx` for the size, and
/// `read_to_end` without it reads at most 8 KiB at a time; in `verify
/// --batch` those system calls were a tenth of the time per descriptor.
///
/// Key material is read here too ([`read_key_material`]): a buffer that
/// grows is copied into a new one and the old one is zeroized, so no copy
/// of the bytes read so far is left behind in freed memory.
fn read_bounded(mut f: impl Read) -> std::io::Result<Vec<u8>> {
    const FIRST: usize = 16 * 1024;
    let cap = usize::try_from(MAX_INPUT + 1).unwrap_or(usize::MAX);
    let mut buf = vec![0u8; FIRST];
    let mut len = 0;
    loop {
        if len == buf.len() {
            if len >= cap {
                break;
            }
            let mut bigger = vec![0u8; len.saturating_mul(2).min(cap)];
            if let (Some(dst), Some(src)) = (bigger.get_mut(..len), buf.get(..len)) {
                dst.copy_from_slice(src);
            }
            zeroize::Zeroize::zeroize(&mut buf);
            buf = bigger;
        }
        let Some(spare) = buf.get_mut(len..) else {
            break;
        };
        match f.read(spare) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf.truncate(len);
    Ok(buf)
}

/// Read key material: a path, or `env:NAME` for an environment variable.
pub fn read_key_material(spec: &str) -> Result<zeroize::Zeroizing<Vec<u8>>, CliError> {
    read_key_option("--key", spec)
}

/// True when an option value that should be a path looks like key material
/// itself (PEM text, a JWK, a long base64 blob), so it must never be echoed.
pub fn looks_like_key_text(value: &str) -> bool {
    let t = value.trim();
    t.contains("-----BEGIN")
        || t.contains('\n')
        || t.starts_with('{')
        || (t.len() >= 32
            && t.bytes().all(|b| {
                b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'-' | b'_')
            }))
}

/// Read key material given to `option`: a path, or `env:NAME`. When the
/// value is not a readable path and looks like key material (a key pasted
/// as `--key "$(cat key.pem)"`), the error does not repeat the value.
pub fn read_key_option(option: &str, spec: &str) -> Result<zeroize::Zeroizing<Vec<u8>>, CliError> {
    if let Some(var) = spec.strip_prefix("env:") {
        let v = std::env::var_os(var)
            .ok_or_else(|| CliError::key(format!("environment variable {var} is not set")))?;
        let s = v
            .into_string()
            .map_err(|_| CliError::key(format!("environment variable {var} is not UTF-8")))?;
        return Ok(zeroize::Zeroizing::new(s.into_bytes()));
    }
    if is_pkcs11_spec(spec) && !std::path::Path::new(spec).exists() {
        // Not echoed: the URI may carry a pin-value.
        return Err(CliError::key(format!(
            "the {option} value is a pkcs11: URI, which this option does not take (it reads a key file); for a token key's public key run: agentsig key public 'pkcs11:...' (quoted)"
        )));
    }
    if looks_like_key_text(spec) && !std::path::Path::new(spec).is_file() {
        return Err(CliError::key(format!(
            "the {option} value is not a readable path; it looks like key material (not shown): pass a path or env:NAME"
        )));
    }
    Ok(zeroize::Zeroizing::new(read_input(spec)?))
}

/// The passphrase for an encrypted private key: `--passphrase-file`, else
/// the `AGENTSIG_PASSPHRASE` environment variable.
pub fn passphrase(file: Option<&str>) -> Result<Option<zeroize::Zeroizing<Vec<u8>>>, CliError> {
    if let Some(f) = file {
        // Not echoed: the value may be the passphrase itself.
        let mut v = read_input(f).map_err(|_| CliError::unreadable(
                "the --passphrase-file value is not a readable file (value not shown): give the path of a file holding the passphrase, or set AGENTSIG_PASSPHRASE",
            ))?;
        while v.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
            v.pop();
        }
        return Ok(Some(zeroize::Zeroizing::new(v)));
    }
    Ok(std::env::var_os("AGENTSIG_PASSPHRASE")
        .map(|v| zeroize::Zeroizing::new(v.to_string_lossy().into_owned().into_bytes())))
}

/// Where a passphrase comes from: a file, or an environment variable named
/// on the command line; never the command line itself (other users can read
/// a process's arguments).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct PassphraseArgs {
    /// File holding the passphrase (one line; a trailing newline is dropped).
    #[arg(
        long,
        allow_hyphen_values = true,
        value_name = "FILE",
        conflicts_with = "passphrase_env"
    )]
    pub passphrase_file: Option<String>,
    /// Environment variable holding the passphrase.
    #[arg(long, value_name = "VAR")]
    pub passphrase_env: Option<String>,
}

impl PassphraseArgs {
    /// The passphrase named by `--passphrase-file` or `--passphrase-env`,
    /// else `$AGENTSIG_PASSPHRASE` (reading a key).
    pub fn read(&self) -> Result<Option<zeroize::Zeroizing<Vec<u8>>>, CliError> {
        match self.read_explicit()? {
            Some(p) => Ok(Some(p)),
            None => passphrase(None),
        }
    }

    /// Only an explicitly named passphrase (writing a key: encryption is
    /// asked for by naming one, never by an ambient variable).
    pub fn read_explicit(&self) -> Result<Option<zeroize::Zeroizing<Vec<u8>>>, CliError> {
        if let Some(var) = &self.passphrase_env {
            let v = std::env::var_os(var).ok_or_else(|| {
                CliError::usage(format!(
                    "--passphrase-env {}: that environment variable is not set",
                    agentsig::text::escape_controls(var)
                ))
            })?;
            return Ok(Some(zeroize::Zeroizing::new(
                v.to_string_lossy().into_owned().into_bytes(),
            )));
        }
        match &self.passphrase_file {
            Some(f) => passphrase(Some(f)),
            None => Ok(None),
        }
    }
}

/// True when a key spec is an RFC 7512 `pkcs11:` URI (the scheme is
/// case-insensitive, RFC 3986 section 3.1).
pub fn is_pkcs11_spec(spec: &str) -> bool {
    spec.get(..7)
        .is_some_and(|p| p.eq_ignore_ascii_case("pkcs11:"))
}

/// The hint added to a failed `pkcs11:` key load when the URI may have been
/// cut by the shell: unquoted, `;` ends the command and `&` sends it to the
/// background, so `pkcs11:token=t;object=k?module-path=m&pin-source=file:p`
/// reaches agentsig as `pkcs11:token=t`. A file whose name begins with
/// `pkcs11:` is read as a file only when written as a path (`./pkcs11:...`).
#[cfg(feature = "pkcs11")]
fn pkcs11_hint(spec: &str) -> &'static str {
    if std::path::Path::new(spec).is_file() {
        " (a file of that name exists: to read it as a key file, write ./ before its name)"
    } else if !spec.contains(';') || !spec.contains('&') {
        " (if the URI went on after a ';' or '&', quote it whole, as 'pkcs11:token=...;object=...?module-path=...&pin-source=file:...': unquoted, the shell ends the command at ';' and '&')"
    } else {
        ""
    }
}

/// Load a signing key from a `--key` spec.
///
/// A key file without a kid of its own (PEM, DER) takes the kid that
/// `agentsig keygen --kid` recorded in the `PREFIX.jwk.json` (or
/// `PREFIX.jwks.json`) beside `PREFIX.pem`, when that JWK holds the same
/// public key (RFC 7638 thumbprint): a key is published under one kid and
/// signs with it. An explicit `kid` argument wins.
pub fn load_signing(
    spec: &str,
    alg: Option<Algorithm>,
    kid: Option<&str>,
    pass_file: Option<&str>,
) -> Result<SigningKey, CliError> {
    load_signing_with(spec, alg, kid, passphrase(pass_file)?)
}

/// [`load_signing`] with the passphrase already read.
pub fn load_signing_with(
    spec: &str,
    alg: Option<Algorithm>,
    kid: Option<&str>,
    passphrase: Option<zeroize::Zeroizing<Vec<u8>>>,
) -> Result<SigningKey, CliError> {
    if is_pkcs11_spec(spec) {
        return load_pkcs11(spec, alg, kid);
    }
    let data = read_key_material(spec)?;
    let mut opts = LoadOptions {
        alg,
        kid: kid.map(str::to_owned),
        passphrase,
    };
    let key = match agentsig::keys::load_signing_key(&data, &opts) {
        Err(KeyError::AlgorithmRequired) => {
            // An RSA key written by keygen: its algorithm is the `alg` of
            // the PREFIX.jwk.json written beside it, when that JWK is this
            // key's public half.
            let recorded = companion_jwk(spec)
                .and_then(|j| agentsig::keys::algorithm_from_companion_jwk(&data, &j, &opts));
            opts.alg = Some(recorded.ok_or_else(|| key_error(spec, KeyError::AlgorithmRequired))?);
            agentsig::keys::load_signing_key(&data, &opts).map_err(|e| key_error(spec, e))?
        }
        other => other.map_err(|e| key_error(spec, e))?,
    };
    warn_published_test_key(spec, &key);
    if key.kid().is_some() {
        return Ok(key);
    }
    Ok(match sibling_jwk_kid(spec, key.verifying_key()) {
        Some(k) => key.with_kid(k),
        None => key,
    })
}

/// A signing key in a PKCS#11 token, named by an RFC 7512 `pkcs11:` URI
/// (see `agentsig::keys::pkcs11`). The error does not repeat the URI: the
/// library's message names the token and object it looked for, and a URI
/// refused for its `pin-value` must not be echoed.
#[cfg(feature = "pkcs11")]
fn load_pkcs11(
    spec: &str,
    alg: Option<Algorithm>,
    kid: Option<&str>,
) -> Result<SigningKey, CliError> {
    let opts = LoadOptions {
        alg,
        kid: kid.map(str::to_owned),
        passphrase: None,
    };
    agentsig::keys::pkcs11::load(spec, &opts)
        .map_err(|e| CliError::key(format!("pkcs11 key: {e}{}", pkcs11_hint(spec))))
}

/// Without feature `pkcs11`, a `pkcs11:` URI is refused with the reason.
#[cfg(not(feature = "pkcs11"))]
fn load_pkcs11(
    _spec: &str,
    _alg: Option<Algorithm>,
    _kid: Option<&str>,
) -> Result<SigningKey, CliError> {
    Err(CliError::key(
        "pkcs11 key: this agentsig was built without the `pkcs11` feature; rebuild with --features pkcs11",
    ))
}

/// The private keys this repository publishes in `keys/` (RFC 9421
/// appendix B.1 test keys, and the example key of `examples/`), by the RFC
/// 7638 thumbprint of their public half: anyone can sign with them.
const PUBLISHED_TEST_KEYS: [(&str, &str); 6] = [
    (
        "hO-KX3WX0WXRqaNBv0Q8N7werKr_9KFpQ8r6fFpAaL8",
        "keys/example-p256.pem",
    ),
    (
        "ydQXMtvbsOsZyFir-Y7A8t7fKEM1gbKPvyFkdpu4fvI",
        "RFC 9421 B.1.3 test-key-ecc-p256",
    ),
    (
        "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U",
        "RFC 9421 B.1.4 test-key-ed25519",
    ),
    (
        "BHj8s0GPnMEQtkaULIM-PLgEhLBbuGUQ1vMxmBWZzEo",
        "RFC 9421 B.1.1 test-key-rsa",
    ),
    (
        "oD0HwocPBSfpNy5W3bpJeyFGY_IQ_YpqxSjQ3Yd-CLA",
        "RFC 9421 B.1.2 test-key-rsa-pss",
    ),
    (
        "CB3RFzX-1pAtHPl7fOKnQgQV1gnrFFXGXoObwmcm4rY",
        "RFC 9421 B.1.5 test-shared-secret",
    ),
];

/// Warn on standard error when a signing key is one of the published test
/// keys ([`PUBLISHED_TEST_KEYS`]), recognised by its public key's RFC 7638
/// thumbprint whatever file or variable it was read from: signatures made
/// with it prove nothing.
pub fn warn_published_test_key(spec: &str, key: &SigningKey) {
    if let Some(w) = published_test_key(spec, key) {
        errln!("agentsig: warning: {w}");
    }
}

/// The warning for a published test key ([`PUBLISHED_TEST_KEYS`]), or
/// `None` for any other key; for the `key.published-test-key` warning of a
/// `--json` report.
pub fn published_test_key(spec: &str, key: &SigningKey) -> Option<String> {
    let tp = key.verifying_key().thumbprint();
    PUBLISHED_TEST_KEYS
        .iter()
        .find(|(t, _)| *t == tp)
        .map(|(_, name)| {
            format!(
                "{spec} is a published test key ({name}, thumbprint {tp}): anyone can sign with it; never use it for anything real"
            )
        })
}

/// The kid recorded for `key` in the JWK beside the key file at `spec`
/// (the library facade's one rule, `facade::keys::recorded_kid`); none for
/// `env:NAME`.
pub fn sibling_jwk_kid(spec: &str, key: &agentsig::VerifyingKey) -> Option<String> {
    if spec.starts_with("env:") {
        return None;
    }
    agentsig::facade::keys::recorded_kid(std::path::Path::new(spec), key)
}

/// A key loading error, with the flag or variable that fixes it named.
fn key_error(spec: &str, e: KeyError) -> CliError {
    let hint = match e {
        KeyError::AlgorithmRequired => {
            " (pass --alg rsa-pss-sha512 or --alg rsa-v1_5-sha256, or use the key's JWK, which records its alg)"
        }
        KeyError::PassphraseRequired | KeyError::Decrypt => {
            " (give --passphrase-file FILE, or set AGENTSIG_PASSPHRASE)"
        }
        _ => "",
    };
    CliError::key(format!("{spec}: {e}{hint}"))
}

/// The companion JWK keygen writes beside an RSA PEM: `PREFIX.jwk.json`
/// next to `PREFIX.pem` / `PREFIX.pub.pem` (the library decides whether it
/// applies: [`agentsig::trust::TrustedKeys::add_key`]).
fn companion_jwk(spec: &str) -> Option<Vec<u8>> {
    if spec.starts_with("env:") {
        return None;
    }
    let prefix = spec.strip_suffix(".pem")?;
    let prefix = prefix.strip_suffix(".pub").unwrap_or(prefix);
    std::fs::read(format!("{prefix}.jwk.json")).ok()
}

/// The verifier's trusted keys and algorithm allow-list: the same three
/// options, with the same meaning, on every command that verifies.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct TrustedKeyArgs {
    /// Trusted public key (PEM, DER, JWK, or a private key's public half): a path or env:NAME.
    /// Repeatable. A key without a kid matches any kid or keyid.
    #[arg(long, allow_hyphen_values = true)]
    pub key: Vec<String>,
    /// Trusted JWK Set; its symmetric (oct) keys are never used. Repeatable.
    #[arg(long, allow_hyphen_values = true)]
    pub jwks: Vec<String>,
    /// Allowed algorithm (repeatable); default: every asymmetric algorithm. A single --alg also
    /// binds RSA keys that do not name their algorithm; hmac-sha256 must be named to verify with a
    /// shared secret given by --key.
    #[arg(long, value_parser = parse_alg)]
    pub alg: Vec<Algorithm>,
    /// Refuse ECDSA signatures whose s is above n/2 (high-S, malleable: anyone can turn a valid
    /// (r, s) into (r, n-s)). Default: accept both forms, as honest signers emit both (see
    /// docs/httpsig.md). Use it where signature bytes identify a message (a replay cache keyed by
    /// signature).
    #[arg(long)]
    pub strict_low_s: bool,
}

impl TrustedKeyArgs {
    /// True when no key source was given.
    pub fn is_empty(&self) -> bool {
        self.key.is_empty() && self.jwks.is_empty()
    }

    /// The trusted key set (see [`trusted_keys`]).
    pub fn resolver(&self) -> Result<StaticKeys, CliError> {
        trusted_keys(&self.key, &self.jwks, &self.alg)
    }

    /// The allow-list (see [`allow_list`]).
    pub fn allow_list(&self) -> agentsig::AllowList {
        allow_list(&self.alg)
    }
}

/// Build the trusted key set from `--key` and `--jwks` arguments; the
/// rules are the library's ([`agentsig::trust::TrustedKeys`]).
fn trusted_keys(
    keys: &[String],
    jwks: &[String],
    algs: &[Algorithm],
) -> Result<StaticKeys, CliError> {
    let mut set = agentsig::trust::TrustedKeys::new(algs);
    let err = |e: TrustError| match e {
        TrustError::Key { source_name, error } => key_error(&source_name, error),
        TrustError::NoUsableKey(skipped) => {
            let why = if skipped.is_empty() {
                String::new()
            } else {
                format!(" (skipped: {})", skipped.join("; "))
            };
            CliError::usage(format!(
                "no usable verification key: give --key PUBLIC-KEY or --jwks JWKS (nothing verified is never a success){why}"
            ))
        }
        other => CliError::usage(other.to_string()),
    };
    for spec in keys {
        let data = read_key_material(spec)?;
        let private = agentsig::keys::holds_private_key(&data);
        set.add_key(spec, &data, companion_jwk(spec).as_deref())
            .map_err(|e| match e {
                TrustError::Key {
                    source_name,
                    error: e @ (KeyError::PassphraseRequired | KeyError::Decrypt),
                } => CliError::key(format!(
                    "{source_name}: {e}: this is an encrypted private key, and verifying needs only the public key: give the public key or JWK Set instead (`agentsig key public {source_name} --as-jwks` prints it)"
                )),
                other => err(other),
            })?;
        if private {
            errln!(
                "{}: note: this is a private key; verifying needs only the public key: give the public key or JWK Set (`agentsig key public {} --as-jwks` prints it) and keep private keys off the hosts that verify",
                agentsig::text::escape_controls(spec),
                agentsig::text::escape_controls(spec)
            );
        }
    }
    for spec in jwks {
        let is_url = ["https://", "http://"].iter().any(|p| {
            spec.get(..p.len())
                .is_some_and(|h| h.eq_ignore_ascii_case(p))
        });
        if is_url && !std::path::Path::new(spec).exists() {
            return Err(CliError::usage(format!(
                "{}: `--jwks` takes a file; discovery from a URL is `agentsig verify URL` (docs/net.md), or save the JWK Set and give its path",
                agentsig::text::escape_controls(spec)
            )));
        }
        let data = read_key_option("--jwks", spec)?;
        if data.trim_ascii_start().starts_with(b"-----BEGIN") {
            return Err(CliError::key(format!(
                "{}: a PEM key, not a JWK Set: use `--key {}` (or give the JWK Set `agentsig keygen` wrote beside it, PREFIX.jwks.json)",
                agentsig::text::escape_controls(spec),
                agentsig::text::escape_controls(spec)
            )));
        }
        set.add_jwks(spec, &data).map_err(|e| match e {
            TrustError::Key { source_name, error } => {
                CliError::key(format!("{source_name}: {error}"))
            }
            other => err(other),
        })?;
    }
    set.finish().map_err(err)
}

/// The allow-list from repeated `--alg`: the named algorithms, or every
/// asymmetric algorithm when none is named (HMAC must always be named).
fn allow_list(algs: &[Algorithm]) -> agentsig::AllowList {
    if algs.is_empty() {
        agentsig::AllowList::asymmetric()
    } else {
        agentsig::AllowList::new(algs.iter().copied())
    }
}

/// Write `bytes` to a new file with the given mode, refusing to overwrite.
pub fn write_new_file(path: &std::path::Path, bytes: &[u8], mode: u32) -> Result<(), CliError> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(mode);
    }
    #[cfg(not(unix))]
    let _ = mode;
    let mut f = opts.open(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            CliError::unwritable(format!(
                "{}: already exists; refusing to overwrite",
                path.display()
            ))
        } else {
            CliError::unwritable(format!("{}: {e}", path.display()))
        }
    })?;
    f.write_all(bytes)
        .map_err(|e| CliError::unwritable(format!("{}: {e}", path.display())))
}

/// The site's own authorities from `--authority HOST` (repeatable) and
/// `--any-authority`: `None` when neither is given, for the caller to say
/// what to give.
pub fn site_authorities(
    authorities: &[String],
    any: bool,
) -> Result<Option<agentsig::httpsig::SiteAuthorities>, CliError> {
    if any {
        return Ok(Some(agentsig::httpsig::SiteAuthorities::any()));
    }
    if authorities.is_empty() {
        return Ok(None);
    }
    agentsig::httpsig::SiteAuthorities::only(authorities)
        .map(Some)
        .map_err(|e| CliError::usage(format!("--authority: {e}")))
}

/// Print a report (the one `--json` shape, docs/report.md).
pub fn print_report(r: &agentsig::report::Report) {
    match serde_json::to_value(r) {
        Ok(v) => print_json(&v),
        Err(_) => outln!("{{}}"),
    }
}

/// Ctrl-C, or SIGTERM on Unix (what a service manager sends to stop a
/// service): resolves when one arrives. From its first call the process is
/// no longer ended by them; the caller ends it.
#[cfg(any(feature = "server", all(feature = "net", feature = "redis")))]
pub(crate) async fn interrupted() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Whether `--json` was asked for, read from the raw arguments so that even
/// a usage error (exit 2) answers with a JSON object.
fn json_requested() -> bool {
    std::env::args_os().skip(1).any(|a| a == "--json")
}

/// The command words (`verify`, `http verify`, `pin add`...) from the raw
/// arguments: only names of real subcommands, so that a mistyped command
/// reports `agentsig`, never the typo (the report's `command` is one of
/// the documented names).
fn command_words() -> String {
    let mut cmd = <Cli as clap::CommandFactory>::command();
    let mut w: Vec<String> = Vec::new();
    for a in std::env::args().skip(1) {
        let Some(sub) = cmd.find_subcommand(&a).cloned() else {
            break;
        };
        w.push(sub.get_name().to_owned());
        cmd = sub;
    }
    if w.is_empty() {
        return String::from("agentsig");
    }
    // `verify --response` reports under its own name, as it does when it
    // runs (docs/report.md).
    let response = std::env::args()
        .skip(2)
        .any(|a| a == "--response" || a.starts_with("--response="));
    if w == ["verify"] && response {
        return String::from("verify --response");
    }
    w.join(" ")
}

/// Print a JSON value on standard output (serde_json escapes control
/// characters itself; the text is not rewritten, so it stays valid JSON).
pub fn print_json(v: &serde_json::Value) {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_else(|_| String::from("{}"));
    s.push('\n');
    let _ = std::io::stdout().lock().write_all(s.as_bytes());
}

/// Parse an algorithm name (either naming).
pub fn parse_alg(s: &str) -> Result<Algorithm, String> {
    s.parse::<Algorithm>().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory under the system's temporary one, removed on drop.
    struct TempDir(std::path::PathBuf);
    impl TempDir {
        fn new(name: &str) -> TempDir {
            let p =
                std::env::temp_dir().join(format!("agentsig-cli-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p).expect("mkdir");
            TempDir(p)
        }
        fn path(&self) -> &std::path::Path {
            &self.0
        }
    }
    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// A file in `dir` holding `len` patterned bytes.
    fn file_of(dir: &std::path::Path, len: usize) -> (String, Vec<u8>) {
        let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        let path = dir.join(format!("f{len}"));
        std::fs::write(&path, &bytes).expect("write");
        (path.to_string_lossy().into_owned(), bytes)
    }

    #[test]
    fn files_are_read_whole_across_the_first_read_size() {
        let dir = TempDir::new("read-sizes");
        for len in [
            0,
            1,
            195,
            16 * 1024 - 1,
            16 * 1024,
            16 * 1024 + 1,
            40_000,
            1 << 20,
        ] {
            let (path, bytes) = file_of(dir.path(), len);
            assert_eq!(read_input(&path).expect("readable"), bytes, "{len} bytes");
        }
    }

    /// A reader that gives at most `step` bytes per call and is
    /// interrupted once before its first byte (standard input, a pipe).
    struct Trickle {
        data: Vec<u8>,
        at: usize,
        step: usize,
        interrupted: bool,
    }
    impl Read for Trickle {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            if !self.interrupted {
                self.interrupted = true;
                return Err(std::io::ErrorKind::Interrupted.into());
            }
            let rest = self.data.get(self.at..).unwrap_or(&[]);
            let n = rest.len().min(out.len()).min(self.step);
            out[..n].copy_from_slice(&rest[..n]);
            self.at += n;
            Ok(n)
        }
    }

    #[test]
    fn short_and_interrupted_reads_are_assembled_and_the_bound_holds() {
        for (len, step) in [(0, 1), (100_003, 4093), (40_000, 1 << 20)] {
            let data: Vec<u8> = (0..len).map(|i| (i % 253) as u8).collect();
            let r = Trickle {
                data: data.clone(),
                at: 0,
                step,
                interrupted: false,
            };
            assert_eq!(
                read_bounded(r).expect("read"),
                data,
                "{len} bytes by {step}"
            );
        }
        let max = usize::try_from(MAX_INPUT).expect("fits");
        let r = Trickle {
            data: vec![7; max + 5],
            at: 0,
            step: 1 << 20,
            interrupted: false,
        };
        assert_eq!(
            read_bounded(r).expect("read").len(),
            max + 1,
            "one byte past the bound, no more"
        );
    }

    #[test]
    fn a_file_over_the_bound_is_refused_and_one_at_it_is_read() {
        let dir = TempDir::new("read-bound");
        let max = usize::try_from(MAX_INPUT).expect("fits");
        let (path, bytes) = file_of(dir.path(), max);
        assert_eq!(read_input(&path).expect("at the bound").len(), bytes.len());
        let (path, _) = file_of(dir.path(), max + 1);
        let e = read_input(&path).expect_err("over the bound");
        assert_eq!((e.code, e.kind), (2, "input.unreadable"));
        assert!(e.message.contains("larger than"), "{}", e.message);
        let e = read_input(&dir.path().join("absent").to_string_lossy()).expect_err("absent");
        assert_eq!((e.code, e.kind), (2, "input.unreadable"));
    }
}
