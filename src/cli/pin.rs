//! `agentsig pin check | add | rotate | list | announce | accept`: key
//! continuity per agent identity (trust on first use, like SSH
//! `known_hosts`), over `--pin-store URL`.

use super::{load_signing, read_input, CliError, CliResult, TrustedKeyArgs};
use agentsig::clock::{Clock, SystemClock};
use agentsig::pin::{open_pin_store, PinOutcome, Pins};
use agentsig::report::{Report, Verdict};
use clap::{Args, Subcommand};
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum PinCommand {
    /// Check a key against the pins of IDENTITY: first sight pins it (exit 0), a pinned key
    /// matches (exit 0), another key is a KEY CHANGE (exit 1, nothing recorded).
    Check(CheckArgs),
    /// Pin more keys for IDENTITY (operator command; keeps the existing pins).
    Add(AddArgs),
    /// Accept a key change: replace the pins of IDENTITY with --to (operator command).
    Rotate(RotateArgs),
    /// List every identity and its pinned thumbprints.
    List(StoreArgs),
    /// Sign a key announcement with a pinned key: writes --out FILE (the JSON) and FILE.jws.
    Announce(AnnounceArgs),
    /// Accept an announcement signed by a pinned key (candidates from --key/--jwks): the
    /// announced keys are pinned too.
    Accept(AcceptArgs),
}

#[derive(Args)]
pub struct StoreArgs {
    /// The pin store: STORE is PATH or file:PATH (one machine), redis[s]://[USER:PASS@]HOST:PORT/DB (a fleet; rediss: TLS; or redis+cluster://HOST:PORT,..., redis+sentinel://HOST:PORT,.../MASTER, each with ?wait=N for acknowledged writes: docs/fleet.md),
    /// memory:.
    #[arg(long, allow_hyphen_values = true, value_name = "STORE")]
    pin_store: String,
    /// Print one JSON report (agentsig.report/1, docs/report.md) on standard output, whatever
    /// the outcome.
    #[arg(long)]
    json: bool,
}

impl PinCommand {
    /// The identity (or the store, for `list`), for the report's `subject`.
    pub fn subject(&self) -> Option<String> {
        Some(match self {
            PinCommand::Check(a) => a.identity.clone(),
            PinCommand::Add(a) => a.identity.clone(),
            PinCommand::Rotate(a) => a.identity.clone(),
            PinCommand::List(a) => a.pin_store.clone(),
            PinCommand::Announce(a) => a.identity.clone(),
            PinCommand::Accept(a) => a.identity.clone(),
        })
    }
}

/// Print the `--json` report of a pin command, or its text line.
fn emit(json: bool, r: &Report, text: &str) {
    if json {
        super::print_report(r);
    } else if !text.is_empty() {
        outln!("{text}");
    }
}

#[derive(Args)]
pub struct CheckArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// The agent identity (e.g. the descriptor's id or URL).
    identity: String,
    /// The key: an RFC 7638 thumbprint, or a public key file.
    key: String,
}

#[derive(Args)]
pub struct AddArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// The agent identity.
    identity: String,
    /// Keys to pin: thumbprints or public key files.
    #[arg(required = true)]
    keys: Vec<String>,
}

#[derive(Args)]
pub struct RotateArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// The agent identity.
    identity: String,
    /// The new pins: thumbprints or public key files (repeatable).
    #[arg(long, required = true, allow_hyphen_values = true, value_name = "KEY")]
    to: Vec<String>,
}

#[derive(Args)]
pub struct AnnounceArgs {
    /// The agent identity.
    identity: String,
    /// New keys: thumbprints or public key files (repeatable).
    #[arg(
        long = "new-key",
        required = true,
        allow_hyphen_values = true,
        value_name = "KEY"
    )]
    new_keys: Vec<String>,
    /// Private key to sign with, the pinned (old) one: a path, or env:NAME.
    #[arg(
        long = "key",
        alias = "signing-key",
        allow_hyphen_values = true,
        value_name = "KEY"
    )]
    signing_key: String,
    /// Algorithm of the private key (RFC 9421 or JOSE name): required for RSA keys, checked
    /// against all others.
    #[arg(long = "alg", alias = "signing-alg", value_parser = super::parse_alg, value_name = "ALG")]
    signing_alg: Option<agentsig::Algorithm>,
    /// File holding the passphrase of an encrypted PKCS#8 private key (else
    /// $AGENTSIG_PASSPHRASE).
    #[arg(long, allow_hyphen_values = true, value_name = "FILE")]
    passphrase_file: Option<String>,
    /// Where to write the announcement JSON (the JWS goes to FILE.jws).
    #[arg(long, allow_hyphen_values = true, value_name = "FILE")]
    out: String,
    /// Sign as if the time were this (Unix seconds; the announcement's iat); default: now.
    #[arg(long, allow_hyphen_values = true, value_name = "UNIX-SECONDS")]
    now: Option<i64>,
    /// Print one JSON report (agentsig.report/1, docs/report.md) on standard output, whatever
    /// the outcome.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct AcceptArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// The agent identity.
    identity: String,
    /// The announcement JSON (its JWS is ANNOUNCEMENT.jws unless --jws).
    announcement: String,
    /// The detached JWS; default: ANNOUNCEMENT.jws.
    #[arg(long, allow_hyphen_values = true, value_name = "FILE")]
    jws: Option<String>,
    /// Candidate keys; only those pinned for IDENTITY are trusted.
    #[command(flatten)]
    trust: TrustedKeyArgs,
    /// Verify as if the time were this (Unix seconds; checks iat); default: now.
    #[arg(long, allow_hyphen_values = true, value_name = "UNIX-SECONDS")]
    now: Option<i64>,
}

pub fn run(c: PinCommand) -> CliResult {
    match c {
        PinCommand::Check(a) => check(a),
        PinCommand::Add(a) => {
            let keys = thumbprints(&a.keys)?;
            let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
            let now = store(&a.store)?
                .store()
                .add(&a.identity, &refs)
                .map_err(|e| CliError::usage(e.to_string()))?;
            let mut r = Report::done("pin add", Some(&a.identity));
            r.detail("pins", &now);
            emit(
                a.store.json,
                &r,
                &format!("{}: pinned {}", a.identity, now.join(" ")),
            );
            Ok(ExitCode::SUCCESS)
        }
        PinCommand::Rotate(a) => {
            let keys = thumbprints(&a.to)?;
            let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
            store(&a.store)?
                .store()
                .replace(&a.identity, &refs)
                .map_err(|e| CliError::usage(e.to_string()))?;
            let mut r = Report::done("pin rotate", Some(&a.identity));
            r.detail("pins", &keys);
            emit(
                a.store.json,
                &r,
                &format!("{}: pins replaced by {}", a.identity, keys.join(" ")),
            );
            Ok(ExitCode::SUCCESS)
        }
        PinCommand::List(a) => {
            let all = store(&a)?
                .store()
                .list()
                .map_err(|e| CliError::usage(e.to_string()))?;
            if a.json {
                let mut r = Report::done("pin list", Some(&a.pin_store));
                let map: serde_json::Map<String, serde_json::Value> = all
                    .iter()
                    .map(|(id, keys)| (id.clone(), serde_json::json!(keys)))
                    .collect();
                r.detail("pins", map);
                super::print_report(&r);
            } else {
                for (id, keys) in all {
                    outln!("{id} {}", keys.join(" "));
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        PinCommand::Announce(a) => announce(a),
        PinCommand::Accept(a) => accept(a),
    }
}

fn store(a: &StoreArgs) -> Result<Pins, CliError> {
    Ok(Pins::new(
        open_pin_store(&a.pin_store).map_err(|e| CliError::usage(e.to_string()))?,
    ))
}

/// A thumbprint given as is, or computed from a public key file.
fn thumbprints(specs: &[String]) -> Result<Vec<String>, CliError> {
    let mut out = Vec::new();
    for s in specs {
        if agentsig::pin::is_thumbprint(s) && !std::path::Path::new(s).exists() {
            out.push(s.clone());
            continue;
        }
        let keys = TrustedKeyArgs {
            key: vec![s.clone()],
            ..Default::default()
        }
        .resolver()?;
        out.extend(keys.keys().iter().map(|k| k.key.thumbprint()));
    }
    Ok(out)
}

fn check(a: CheckArgs) -> CliResult {
    let t = thumbprints(std::slice::from_ref(&a.key))?;
    let [t] = t.as_slice() else {
        return Err(CliError::usage(format!("{}: not exactly one key", a.key)));
    };
    let mut r = Report::done("pin check", Some(&a.identity));
    r.detail("thumbprint", t);
    let (text, code) = match store(&a.store)?.check(&a.identity, t) {
        Ok(PinOutcome::FirstSeen) => {
            r.check("pin.first-seen", true, format!("{t} pinned (first seen)"));
            (format!("{}: {t} pinned (first seen)", a.identity), 0)
        }
        Ok(PinOutcome::Match) => {
            r.check("pin.match", true, format!("{t} matches the pin"));
            (format!("{}: {t} matches the pin", a.identity), 0)
        }
        Ok(PinOutcome::Changed { pinned }) => {
            let msg = format!(
                "KEY CHANGED: {t} is not pinned (pinned: {})",
                pinned.join(" ")
            );
            r.check("pin.key-changed", false, msg.clone());
            r.detail("pinned", &pinned);
            (format!("{}: {msg}", a.identity), 1)
        }
        Err(e) => return Err(CliError::usage(e.to_string())),
    };
    r.set_verdict(Verdict::NotVerified);
    r.settle();
    emit(a.store.json, &r, &text);
    Ok(ExitCode::from(code))
}

fn announce(a: AnnounceArgs) -> CliResult {
    let keys = thumbprints(&a.new_keys)?;
    let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
    let key = load_signing(
        &a.signing_key,
        a.signing_alg,
        None,
        a.passphrase_file.as_deref(),
    )?;
    let iat = a.now.unwrap_or_else(|| SystemClock.now());
    let (payload, jws) = agentsig::announce::sign_announcement(&a.identity, &refs, iat, &key)
        .map_err(|e| CliError::usage(e.to_string()))?;
    std::fs::write(&a.out, &payload)
        .map_err(|e| CliError::unwritable(format!("{}: {e}", a.out)))?;
    let jws_path = format!("{}.jws", a.out);
    std::fs::write(&jws_path, jws).map_err(|e| CliError::unwritable(format!("{jws_path}: {e}")))?;
    let mut r = Report::done("pin announce", Some(&a.identity));
    r.detail("announcement_file", &a.out);
    r.detail("jws_file", &jws_path);
    r.detail("new_keys", &keys);
    r.detail("iat", iat);
    emit(a.json, &r, &format!("wrote {} and {jws_path}", a.out));
    Ok(ExitCode::SUCCESS)
}

fn accept(a: AcceptArgs) -> CliResult {
    let payload = read_input(&a.announcement)?;
    let jws_path = a
        .jws
        .clone()
        .unwrap_or_else(|| format!("{}.jws", a.announcement));
    let jws = String::from_utf8(read_input(&jws_path)?)
        .map_err(|_| CliError::malformed(format!("{jws_path}: not UTF-8")))?;
    let cands: Vec<agentsig::VerifyingKey> = a
        .trust
        .resolver()?
        .keys()
        .iter()
        .map(|k| k.key.clone())
        .collect();
    let now = a.now.unwrap_or_else(|| SystemClock.now());
    match store(&a.store)?.accept_announcement(
        &a.identity,
        &payload,
        jws.trim(),
        &cands,
        now,
        agentsig::policy::DEFAULT_SKEW as i64,
    ) {
        Ok(pins) => {
            let mut r = Report::done("pin accept", Some(&a.identity));
            r.check(
                "pin.announcement",
                true,
                "the announcement is signed by a pinned key",
            );
            r.set_verdict(Verdict::NotVerified);
            r.settle();
            r.detail("pins", &pins);
            emit(
                a.store.json,
                &r,
                &format!(
                    "{}: announcement accepted; pinned {}",
                    a.identity,
                    pins.join(" ")
                ),
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e @ agentsig::pin::PinError::Announcement(_)) => {
            Err(CliError::failed(e.to_string()).with_kind("pin.announcement"))
        }
        Err(e) => Err(CliError::usage(e.to_string())),
    }
}
