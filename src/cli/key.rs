//! `agentsig key public KEY [--as-jwks]`: the public JWK (RFC 7517) or JWK Set
//! of any key agentsig reads, as `step crypto key format` or `jose jwk pub`
//! print one.

use super::{load_signing_with, parse_alg, read_key_material, CliError, CliResult};
use agentsig::Algorithm;
use clap::{Args, Subcommand};
use std::process::ExitCode;

/// `agentsig key ...`
#[derive(Subcommand)]
pub enum KeyCommand {
    /// Print the public JWK (or, with --as-jwks, a JWK Set of it) of a key: PEM (SEC1, PKCS#8,
    /// encrypted PKCS#8, SPKI), DER, a JWK, or a JWK Set with one key (--kid picks one of
    /// several). Never prints a private member. The kid is --kid, else the key's own, else the
    /// one `agentsig keygen` recorded beside PREFIX.pem, else the RFC 7638 thumbprint.
    Public(PublicArgs),
}

impl KeyCommand {
    /// The key, for the report's `subject`.
    pub fn subject(&self) -> Option<String> {
        match self {
            KeyCommand::Public(a) => Some(a.key.clone()),
        }
    }
}

/// `agentsig key public`
#[derive(Args)]
pub struct PublicArgs {
    /// The key: a path, env:NAME, or - for standard input.
    #[arg(allow_hyphen_values = true, value_name = "KEY")]
    key: String,
    /// Print a JWK Set ({"keys": [JWK]}) instead of the JWK.
    #[arg(long)]
    as_jwks: bool,
    /// The kid to publish it under; in a JWK Set of several keys, the one to print.
    #[arg(long, allow_hyphen_values = true, value_name = "KID")]
    kid: Option<String>,
    /// Algorithm of an RSA key that does not name its own (rsa-pss-sha512 or rsa-v1_5-sha256).
    #[arg(long, value_parser = parse_alg, value_name = "ALG")]
    alg: Option<Algorithm>,
    #[command(flatten)]
    passphrase: super::PassphraseArgs,
    /// Print one JSON report (agentsig.report/1, docs/report.md) instead: the JWK (and with
    /// --as-jwks the JWK Set), kid, thumbprint and algorithm in its details.
    #[arg(long)]
    json: bool,
}

pub fn run(c: KeyCommand) -> CliResult {
    let KeyCommand::Public(a) = c;
    // A key in a PKCS#11 token (RFC 7512 URI): its public half, read from
    // the token; the private key stays there.
    let public = if super::is_pkcs11_spec(&a.key) {
        load_signing_with(&a.key, a.alg, a.kid.as_deref(), None)?
            .verifying_key()
            .clone()
    } else {
        public_of_material(&a)?
    };
    let public = match (&a.kid, public.kid()) {
        (Some(k), _) => public.with_kid(k.clone()),
        (None, Some(_)) => public,
        (None, None) => {
            let kid =
                super::sibling_jwk_kid(&a.key, &public).unwrap_or_else(|| public.thumbprint());
            public.with_kid(kid)
        }
    };
    if public.algorithm() == Algorithm::HmacSha256 {
        return Err(CliError::key(format!(
            "{}: an HMAC secret has no public half to publish",
            agentsig::text::escape_controls(&a.key)
        )));
    }
    let jwk = public.to_jwk().to_value();
    let set = a.as_jwks.then(|| agentsig::jwk::jwks_document(&[&public]));
    if a.json {
        let mut r = agentsig::report::Report::done("key public", Some(&a.key));
        r.detail("jwk", &jwk);
        if let Some(s) = &set {
            r.detail("jwks", s);
        }
        r.detail("kid", public.kid().unwrap_or_default());
        r.detail("thumbprint", public.thumbprint());
        r.detail("algorithm", public.algorithm().httpsig_name());
        super::print_report(&r);
    } else {
        super::print_json(set.as_ref().unwrap_or(&jwk));
    }
    Ok(ExitCode::SUCCESS)
}

/// The public key of a key file, a JWK or a JWK Set (`a.key` is not a
/// `pkcs11:` URI).
fn public_of_material(a: &PublicArgs) -> Result<agentsig::keys::VerifyingKey, CliError> {
    let data = read_key_material(&a.key)?;
    Ok(if agentsig::keys::holds_private_key(&data) {
        load_signing_with(&a.key, a.alg, a.kid.as_deref(), a.passphrase.read()?)?
            .verifying_key()
            .clone()
    } else {
        let opts = agentsig::LoadOptions {
            alg: a.alg,
            kid: a.kid.clone(),
            ..Default::default()
        };
        agentsig::keys::load_verifying_key(&data, &opts).map_err(|e| {
            CliError::key(format!(
                "{}: {e}{}",
                agentsig::text::escape_controls(&a.key),
                match e {
                    agentsig::KeyError::AmbiguousKeySet(_) => " (give --kid KID to choose one)",
                    _ => "",
                }
            ))
        })?
    })
}
