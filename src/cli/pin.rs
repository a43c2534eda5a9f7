//! `agentsig pin check | add | rotate | list | announce | accept`: key
//! continuity per agent identity (trust on first use, like SSH
//! `known_hosts`), over `--pin-store URL`.

use super::{load_signing, read_input, CliError, CliResult, TrustedKeyArgs};
use agentsig::clock::{Clock, SystemClock};
use agentsig::pin::{open_pin_store, PinOutcome, Pins};
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
    /// Sign a key announcement with a pinned key: writes OUT (the JSON) and OUT.jws.
    Announce(AnnounceArgs),
    /// Accept an announcement signed by a pinned key (candidates from --key/--jwks): the
    /// announced keys are pinned too.
    Accept(AcceptArgs),
}

#[derive(Args)]
pub struct StoreArgs {
    /// The pin store: PATH, file:PATH, redis://HOST:PORT/DB or memory:.
    #[arg(long, allow_hyphen_values = true)]
    pin_store: String,
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
    #[arg(long, required = true, allow_hyphen_values = true)]
    to: Vec<String>,
}

#[derive(Args)]
pub struct AnnounceArgs {
    /// The agent identity.
    identity: String,
    /// New keys: thumbprints or public key files (repeatable).
    #[arg(long = "new-key", required = true, allow_hyphen_values = true)]
    new_keys: Vec<String>,
    /// The pinned (old) private key that signs: a path or env:NAME.
    #[arg(long, allow_hyphen_values = true)]
    signing_key: String,
    /// Algorithm of the signing key (required for RSA).
    #[arg(long, value_parser = super::parse_alg)]
    signing_alg: Option<agentsig::Algorithm>,
    /// Output file for the announcement JSON (the JWS goes to OUT.jws).
    #[arg(long, allow_hyphen_values = true)]
    out: String,
    /// iat (seconds since the epoch; default now).
    #[arg(long, allow_hyphen_values = true)]
    now: Option<i64>,
}

#[derive(Args)]
pub struct AcceptArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// The agent identity.
    identity: String,
    /// The announcement JSON (its JWS is ANNOUNCEMENT.jws unless --jws).
    announcement: String,
    /// The detached JWS.
    #[arg(long, allow_hyphen_values = true)]
    jws: Option<String>,
    /// Candidate keys; only those pinned for IDENTITY are trusted.
    #[command(flatten)]
    trust: TrustedKeyArgs,
    /// Check iat as of this time (seconds since the epoch; default now).
    #[arg(long, allow_hyphen_values = true)]
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
            outln!("{}: pinned {}", a.identity, now.join(" "));
            Ok(ExitCode::SUCCESS)
        }
        PinCommand::Rotate(a) => {
            let keys = thumbprints(&a.to)?;
            let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
            store(&a.store)?
                .store()
                .replace(&a.identity, &refs)
                .map_err(|e| CliError::usage(e.to_string()))?;
            outln!("{}: pins replaced by {}", a.identity, keys.join(" "));
            Ok(ExitCode::SUCCESS)
        }
        PinCommand::List(a) => {
            let all = store(&a)?
                .store()
                .list()
                .map_err(|e| CliError::usage(e.to_string()))?;
            for (id, keys) in all {
                outln!("{id} {}", keys.join(" "));
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
    match store(&a.store)?.check(&a.identity, t) {
        Ok(PinOutcome::FirstSeen) => {
            outln!("{}: {t} pinned (first seen)", a.identity);
            Ok(ExitCode::SUCCESS)
        }
        Ok(PinOutcome::Match) => {
            outln!("{}: {t} matches the pin", a.identity);
            Ok(ExitCode::SUCCESS)
        }
        Ok(PinOutcome::Changed { pinned }) => {
            outln!(
                "{}: KEY CHANGED: {t} is not pinned (pinned: {})",
                a.identity,
                pinned.join(" ")
            );
            Ok(ExitCode::from(1))
        }
        Err(e) => Err(CliError::usage(e.to_string())),
    }
}

fn announce(a: AnnounceArgs) -> CliResult {
    let keys = thumbprints(&a.new_keys)?;
    let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
    let key = load_signing(&a.signing_key, a.signing_alg, None, None)?;
    let iat = a.now.unwrap_or_else(|| SystemClock.now());
    let (payload, jws) = agentsig::announce::sign_announcement(&a.identity, &refs, iat, &key)
        .map_err(|e| CliError::usage(e.to_string()))?;
    std::fs::write(&a.out, &payload).map_err(|e| CliError::usage(format!("{}: {e}", a.out)))?;
    let jws_path = format!("{}.jws", a.out);
    std::fs::write(&jws_path, jws).map_err(|e| CliError::usage(format!("{jws_path}: {e}")))?;
    outln!("wrote {} and {jws_path}", a.out);
    Ok(ExitCode::SUCCESS)
}

fn accept(a: AcceptArgs) -> CliResult {
    let payload = read_input(&a.announcement)?;
    let jws_path = a
        .jws
        .clone()
        .unwrap_or_else(|| format!("{}.jws", a.announcement));
    let jws = String::from_utf8(read_input(&jws_path)?)
        .map_err(|_| CliError::usage(format!("{jws_path}: not UTF-8")))?;
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
            outln!(
                "{}: announcement accepted; pinned {}",
                a.identity,
                pins.join(" ")
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e @ agentsig::pin::PinError::Announcement(_)) => Err(CliError::failed(e.to_string())),
        Err(e) => Err(CliError::usage(e.to_string())),
    }
}
