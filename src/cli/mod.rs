//! The `agentsig` command line: a thin layer over the library that maps its
//! typed errors to messages and exit codes.
//!
//! Exit codes (every command): 0 verified or done; 1 verification failed or
//! policy refused; 2 usage error or unreadable input.

use clap::{Parser, Subcommand};
use std::io::{Read, Write};
use std::process::ExitCode;

/// `println!` that ignores a closed standard output (`agentsig ... | head`)
/// instead of panicking on EPIPE.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// `print!` that ignores a closed standard output.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout().lock(), $($arg)*);
    }};
}

mod delegation;
mod http;
mod keygen;
mod lint;
mod sign;

use agentsig::keys::LoadOptions;
use agentsig::trust::{KeySource, StaticKeys};
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
    /// Print the manual page (roff) on standard output: agentsig man > agentsig.1
    Man,
    /// Generate a key pair: PKCS#8 private key (mode 0600) and the public key as JWK and JWK Set.
    Keygen(keygen::KeygenArgs),
    /// Print the RFC 8785 canonical form of a JSON document.
    Canon(sign::CanonArgs),
    /// Check a descriptor against its format's MUST rules (detected, or --format).
    Lint(lint::LintArgs),
    /// Sign a descriptor: write a detached JWS over its canonical form beside it (FILE.jws).
    Sign(sign::SignArgs),
    /// Verify a descriptor against its detached JWS, or a saved HTTP response (--response).
    Verify(sign::VerifyArgs),
    /// RFC 9421 HTTP Message Signatures over raw HTTP messages.
    #[command(subcommand)]
    Http(http::HttpCommand),
    /// Print the RFC 9530 Content-Digest of a file.
    Digest(http::DigestArgs),
    /// Audit, mint and exchange RFC 8693 delegation tokens (nested act, scope narrowing).
    #[command(subcommand)]
    Delegation(delegation::DelegationCommand),
}

/// An error that ends a command, with its exit code.
#[derive(Debug)]
pub struct CliError {
    pub code: u8,
    pub message: String,
}

impl CliError {
    /// Exit 2: usage error or unreadable input.
    pub fn usage(msg: impl Into<String>) -> CliError {
        CliError {
            code: 2,
            message: msg.into(),
        }
    }
    /// Exit 1: verification failed or policy refused.
    pub fn failed(msg: impl Into<String>) -> CliError {
        CliError {
            code: 1,
            message: msg.into(),
        }
    }
}

impl From<KeyError> for CliError {
    fn from(e: KeyError) -> Self {
        CliError::usage(format!("key: {e}"))
    }
}

pub type CliResult = Result<ExitCode, CliError>;

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let result = match cli.command {
        Command::Completions { shell } => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut cmd, "agentsig", &mut std::io::stdout());
            Ok(ExitCode::SUCCESS)
        }
        Command::Man => {
            let cmd = <Cli as clap::CommandFactory>::command();
            let mut buf = Vec::new();
            match clap_mangen::Man::new(cmd).render(&mut buf) {
                Ok(()) => {
                    out!("{}", String::from_utf8_lossy(&buf));
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => Err(CliError::usage(format!("man page: {e}"))),
            }
        }
        Command::Keygen(a) => keygen::run(a),
        Command::Canon(a) => sign::canon(a),
        Command::Lint(a) => lint::run(a),
        Command::Sign(a) => sign::sign(a),
        Command::Verify(a) => sign::verify(a),
        Command::Http(c) => http::run(c),
        Command::Digest(a) => http::digest_cmd(a),
        Command::Delegation(c) => delegation::run(c),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("agentsig: {}", e.message);
            ExitCode::from(e.code)
        }
    }
}

/// Read a file, or standard input for `-`, with a size bound.
pub fn read_input(path: &str) -> Result<Vec<u8>, CliError> {
    let mut buf = Vec::new();
    if path == "-" {
        std::io::stdin()
            .take(MAX_INPUT + 1)
            .read_to_end(&mut buf)
            .map_err(|e| CliError::usage(format!("standard input: {e}")))?;
    } else {
        std::fs::File::open(path)
            .and_then(|f| f.take(MAX_INPUT + 1).read_to_end(&mut buf))
            .map_err(|e| CliError::usage(format!("{path}: {e}")))?;
    }
    if buf.len() as u64 > MAX_INPUT {
        return Err(CliError::usage(format!(
            "{path}: larger than {MAX_INPUT} bytes"
        )));
    }
    Ok(buf)
}

/// Read key material: a path, or `env:NAME` for an environment variable.
pub fn read_key_material(spec: &str) -> Result<zeroize::Zeroizing<Vec<u8>>, CliError> {
    if let Some(var) = spec.strip_prefix("env:") {
        let v = std::env::var_os(var)
            .ok_or_else(|| CliError::usage(format!("environment variable {var} is not set")))?;
        let s = v
            .into_string()
            .map_err(|_| CliError::usage(format!("environment variable {var} is not UTF-8")))?;
        return Ok(zeroize::Zeroizing::new(s.into_bytes()));
    }
    Ok(zeroize::Zeroizing::new(read_input(spec)?))
}

/// The passphrase for an encrypted private key: `--passphrase-file`, else
/// the `AGENTSIG_PASSPHRASE` environment variable.
pub fn passphrase(file: Option<&str>) -> Result<Option<zeroize::Zeroizing<Vec<u8>>>, CliError> {
    if let Some(f) = file {
        let mut v = read_input(f)?;
        while v.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
            v.pop();
        }
        return Ok(Some(zeroize::Zeroizing::new(v)));
    }
    Ok(std::env::var_os("AGENTSIG_PASSPHRASE")
        .map(|v| zeroize::Zeroizing::new(v.to_string_lossy().into_owned().into_bytes())))
}

/// Load a signing key from a `--key` spec.
pub fn load_signing(
    spec: &str,
    alg: Option<Algorithm>,
    kid: Option<&str>,
    pass_file: Option<&str>,
) -> Result<SigningKey, CliError> {
    let data = read_key_material(spec)?;
    let opts = LoadOptions {
        alg,
        kid: kid.map(str::to_owned),
        passphrase: passphrase(pass_file)?,
    };
    agentsig::keys::load_signing_key(&data, &opts)
        .map_err(|e| CliError::usage(format!("{spec}: {e}")))
}

/// The verifier's trusted keys and algorithm allow-list: the same three
/// options, with the same meaning, on every command that verifies.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct TrustedKeyArgs {
    /// Trusted public key (PEM, DER, JWK, or a private key's public half): a path or env:NAME.
    /// Repeatable. A key without a kid matches any kid or keyid.
    #[arg(long)]
    pub key: Vec<String>,
    /// Trusted JWK Set; its symmetric (oct) keys are never used. Repeatable.
    #[arg(long)]
    pub jwks: Vec<String>,
    /// Allowed algorithm (repeatable); default: every asymmetric algorithm. A single --alg also
    /// binds RSA keys that do not name their algorithm; hmac-sha256 must be named to verify with a
    /// shared secret given by --key.
    #[arg(long, value_parser = parse_alg)]
    pub alg: Vec<Algorithm>,
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
    fn allow_list(&self) -> agentsig::AllowList {
        allow_list(&self.alg)
    }
}

/// Build the trusted key set from `--key` and `--jwks` arguments.
///
/// A JWK Set is a published source: its symmetric (`oct`) keys are never
/// trusted (RFC 8725 3.1). An HMAC secret is trusted only from `--key` with
/// `--alg hmac-sha256`.
fn trusted_keys(
    keys: &[String],
    jwks: &[String],
    algs: &[Algorithm],
) -> Result<StaticKeys, CliError> {
    // A single --alg also binds keys that do not name their algorithm (RSA).
    let alg = match algs {
        [one] => Some(*one),
        _ => None,
    };
    let mut set = StaticKeys::new();
    for spec in keys {
        let data = read_key_material(spec)?;
        let opts = LoadOptions {
            alg,
            ..LoadOptions::default()
        };
        for k in agentsig::keys::load_verifying_keys(&data, &opts)
            .map_err(|e| CliError::usage(format!("{spec}: {e}")))?
        {
            set.add(k, KeySource::File(spec.clone()));
        }
    }
    for spec in jwks {
        let data = read_key_material(spec)?;
        let jwk_list = agentsig::jwk::parse_keys(&data)
            .map_err(|e| CliError::usage(format!("{spec}: {e}")))?;
        for j in jwk_list {
            if j.kty == "oct" {
                continue;
            }
            // A key whose alg we cannot bind (RSA without alg and no --alg) or
            // whose type is unsupported is skipped, as RFC 7517 5 suggests.
            // The JWK's own kty/crv/alg bind it; --alg only binds an RSA key that has no alg.
            let loaded = match j.to_verifying_key(None) {
                Err(KeyError::AlgorithmRequired) => j.to_verifying_key(alg),
                other => other,
            };
            if let Ok(k) = loaded {
                set.add(k, KeySource::Jwks(spec.clone()));
            }
        }
    }
    if set.is_empty() {
        return Err(CliError::usage(
            "no usable verification key: give --key PUBLIC-KEY or --jwks JWKS (nothing verified is never a success)",
        ));
    }
    Ok(set)
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
            CliError::usage(format!(
                "{}: already exists; refusing to overwrite",
                path.display()
            ))
        } else {
            CliError::usage(format!("{}: {e}", path.display()))
        }
    })?;
    f.write_all(bytes)
        .map_err(|e| CliError::usage(format!("{}: {e}", path.display())))
}

/// Print a JSON value on standard output.
pub fn print_json(v: &serde_json::Value) {
    let s = serde_json::to_string_pretty(v).unwrap_or_else(|_| String::from("{}"));
    outln!("{s}");
}

/// Parse an algorithm name (either naming).
pub fn parse_alg(s: &str) -> Result<Algorithm, String> {
    s.parse::<Algorithm>().map_err(|e| e.to_string())
}
