//! `agentsig canon`, `agentsig sign`, `agentsig verify` (detached JWS over JCS).

use super::http::parse_duration;
use super::TrustedKeyArgs;
use super::{load_signing, parse_alg, print_json, read_input, CliError, CliResult};
use agentsig::descriptor::{self, DescriptorError, JwsForm};
use agentsig::jws::{self, KeyHeaderPolicy, SignOptions, Verdict, VerifyPolicy};
use agentsig::Algorithm;
use clap::Args;
use std::io::Write;
use std::process::ExitCode;

#[derive(Args)]
pub struct CanonArgs {
    /// JSON file, or - for standard input.
    file: String,
}

pub fn canon(a: CanonArgs) -> CliResult {
    let input = read_input(&a.file)?;
    let out = agentsig::jcs::canonicalize(&input)
        .map_err(|e| CliError::usage(format!("{}: {e}", a.file)))?;
    std::io::stdout()
        .write_all(&out)
        .map_err(|e| CliError::usage(format!("standard output: {e}")))?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct SignArgs {
    /// Descriptor (JSON) to sign, or - for standard input (the JWS then goes to standard output).
    file: String,
    /// Private key: a path, or env:NAME. Repeat for several signatures (implies --json-serialization).
    #[arg(long, required = true, allow_hyphen_values = true)]
    key: Vec<String>,
    /// Key id for the protected header; default: the key's own kid, else its RFC 7638 thumbprint.
    #[arg(long)]
    kid: Option<String>,
    /// Algorithm, required for RSA keys (rsa-pss-sha512 or rsa-v1_5-sha256); checked for all others.
    #[arg(long, value_parser = parse_alg)]
    alg: Option<Algorithm>,
    /// Where to write the JWS; default FILE.jws (standard output for -).
    #[arg(long)]
    out: Option<String>,
    /// Write the JWS JSON general serialization (several signatures, for key rotation).
    #[arg(long)]
    json_serialization: bool,
    /// The `typ` header (default JOSE, or JOSE+JSON with --json-serialization).
    #[arg(long)]
    typ: Option<String>,
    /// Use the RFC 7797 unencoded payload (b64=false, crit ["b64"]). Not understood by A2A SDKs.
    #[arg(long)]
    unencoded_payload: bool,
    /// File holding the passphrase of an encrypted PKCS#8 key (else $AGENTSIG_PASSPHRASE).
    #[arg(long, allow_hyphen_values = true)]
    passphrase_file: Option<String>,
    /// Media type a static host serves the descriptor with; it is signed (RFC 9421 content-type).
    #[arg(long, default_value = "application/json")]
    content_type: String,
    /// Give the HTTP signature an expires parameter this far after created (e.g. 30d).
    /// Default: no expires (see docs/static-publishing.md).
    #[arg(long, value_parser = parse_duration)]
    expires_in: Option<u64>,
    /// Where to write the HTTP response fields a static host must send; default FILE.headers.
    #[arg(long)]
    headers_out: Option<String>,
    /// Form of the response-fields file: plain (Name: value), nginx or caddy.
    #[arg(long, default_value = "plain", value_parser = ["plain", "nginx", "caddy"])]
    headers_format: String,
    /// Do not write the response-fields file.
    #[arg(long, conflicts_with = "headers_out")]
    no_headers: bool,
}

pub fn sign(a: SignArgs) -> CliResult {
    let input = read_input(&a.file)?;
    if a.kid.is_some() && a.key.len() > 1 {
        return Err(CliError::usage(
            "--kid names one key; with several --key, put kid in each JWK",
        ));
    }
    let mut keys = Vec::new();
    for spec in &a.key {
        let k = load_signing(spec, a.alg, None, a.passphrase_file.as_deref())?;
        keys.push(match &a.kid {
            Some(kid) => k.with_kid(kid.clone()),
            None => k,
        });
    }
    let form = if a.json_serialization || keys.len() > 1 {
        JwsForm::General
    } else {
        JwsForm::Compact
    };
    let opts = SignOptions {
        typ: a.typ.clone(),
        b64: !a.unencoded_payload,
        ..SignOptions::default()
    };
    let refs: Vec<&agentsig::SigningKey> = keys.iter().collect();
    let signed = descriptor::sign(&input, &refs, form, &opts).map_err(|e| match e {
        DescriptorError::Json(j) => CliError::usage(format!("{}: {j}", a.file)),
        other => CliError::usage(other.to_string()),
    })?;
    let out = match (&a.out, a.file.as_str()) {
        (Some(o), _) => o.clone(),
        (None, "-") => String::from("-"),
        (None, f) => format!("{f}.jws"),
    };
    let mut text = signed.jws.clone();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    if out == "-" {
        out!("{text}");
    } else {
        std::fs::write(&out, text.as_bytes())
            .map_err(|e| CliError::usage(format!("{out}: {e}")))?;
        for k in &keys {
            eprintln!(
                "signed {} with {} (kid {}) -> {out}",
                a.file,
                k.algorithm().jose_name(),
                k.kid_or_thumbprint()
            );
        }
    }
    let headers_path = match (&a.headers_out, a.file.as_str()) {
        _ if a.no_headers => None,
        (Some(h), _) => Some(h.clone()),
        (None, "-") => None,
        (None, f) => Some(format!("{f}.headers")),
    };
    if let Some(path) = headers_path {
        super::http::write_static_headers(
            &path,
            &a.file,
            &input,
            &a.content_type,
            &keys,
            a.expires_in,
            &a.headers_format,
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct VerifyArgs {
    /// Descriptor (JSON) to verify, or - for standard input (not needed with --response).
    #[arg(default_value = "", hide_default_value = true)]
    file: String,
    /// Verify a saved HTTP response (status line, headers, body, e.g. from curl -i) with
    /// RFC 9421: @status, content-type and content-digest must be signed, Content-Digest must match the body.
    #[arg(long, conflicts_with_all = ["jws", "typ", "ignore_key_headers"])]
    response: Option<String>,
    /// With --response: largest age of the signature's created (e.g. 30d); default none (expires is enforced).
    #[arg(long, value_parser = parse_duration, requires = "response")]
    max_age: Option<u64>,
    /// With --response: verify as if the time were this (Unix seconds).
    #[arg(long, requires = "response")]
    now: Option<i64>,
    /// The detached JWS; default FILE.jws.
    #[arg(long)]
    jws: Option<String>,
    #[command(flatten)]
    trust: TrustedKeyArgs,
    /// Required `typ` header value (RFC 7515 4.1.9 comparison). Repeatable.
    #[arg(long)]
    typ: Vec<String>,
    /// Ignore jku/jwk/x5u/x5c/x5t headers instead of refusing the signature. Keys still come only from --key/--jwks.
    #[arg(long)]
    ignore_key_headers: bool,
    /// Print a machine-readable JSON report.
    #[arg(long)]
    json: bool,
}

pub fn verify(a: VerifyArgs) -> CliResult {
    if let Some(resp) = &a.response {
        return super::http::verify_saved_response(resp, &a.trust, a.max_age, a.now, a.json);
    }
    if a.file.is_empty() {
        return Err(CliError::usage(
            "give the descriptor FILE, or --response SAVED.http",
        ));
    }
    let input = read_input(&a.file)?;
    let jws_path = match (&a.jws, a.file.as_str()) {
        (Some(j), _) => j.clone(),
        (None, "-") => {
            return Err(CliError::usage(
                "reading the descriptor from standard input needs --jws FILE",
            ))
        }
        (None, f) => format!("{f}.jws"),
    };
    let jws_bytes = read_input(&jws_path)?;
    let jws_text = String::from_utf8(jws_bytes)
        .map_err(|_| CliError::usage(format!("{jws_path}: not UTF-8")))?;
    let resolver = a.trust.resolver()?;
    let allowed = a.trust.allow_list();
    let policy = VerifyPolicy {
        allowed,
        expected_typ: (!a.typ.is_empty()).then(|| a.typ.clone()),
        key_headers: if a.ignore_key_headers {
            KeyHeaderPolicy::Ignore
        } else {
            KeyHeaderPolicy::Refuse
        },
        low_s: false,
    };
    let report = match descriptor::verify(&input, &jws_text, &resolver, &policy) {
        Ok(r) => r,
        Err(DescriptorError::Json(e)) => return Err(CliError::usage(format!("{}: {e}", a.file))),
        Err(DescriptorError::Jws(jws::JwsError::PayloadDiffers)) => {
            return report_failure(
                &a,
                "the JWS carries a payload that differs from the descriptor",
                "payload-differs",
            )
        }
        Err(DescriptorError::Jws(e)) => return Err(CliError::usage(format!("{jws_path}: {e}"))),
    };
    let verified = report.verified();
    if a.json {
        let sigs: Vec<serde_json::Value> = report
            .jws
            .signatures
            .iter()
            .map(|s| {
                serde_json::json!({
                    "verdict": s.verdict.as_str(),
                    "algorithm": s.alg,
                    "kid": s.kid,
                    "typ": s.typ,
                    "key_source": s.key_source.as_ref().map(|k| k.to_string()),
                    "key_thumbprint": s.key_thumbprint,
                    "reason_code": s.reason.as_ref().map(|r| r.code()),
                    "reason": s.reason.as_ref().map(|r| r.to_string()),
                })
            })
            .collect();
        let first = report
            .jws
            .valid_signature()
            .or(report.jws.signatures.first());
        print_json(&serde_json::json!({
            "verified": verified,
            "verdict": if verified { "valid" } else { first.map(|s| s.verdict.as_str()).unwrap_or("invalid") },
            "file": a.file,
            "jws": jws_path,
            "algorithm": first.and_then(|s| s.alg.clone()),
            "kid": first.and_then(|s| s.kid.clone()),
            "key_source": first.and_then(|s| s.key_source.as_ref().map(|k| k.to_string())),
            "key_thumbprint": first.and_then(|s| s.key_thumbprint.clone()),
            "canonical_sha256": report.canonical_sha256(),
            "reason": if verified { None } else { first.and_then(|s| s.reason.as_ref().map(|r| r.to_string())) },
            "signatures": sigs,
        }));
    } else {
        for s in &report.jws.signatures {
            let what = match s.verdict {
                Verdict::Valid => "valid",
                Verdict::Invalid => "INVALID",
                Verdict::Refused => "REFUSED",
                Verdict::NoTrustedKey => "NO TRUSTED KEY",
            };
            let mut line = format!(
                "{what}: alg {} kid {}",
                s.alg.as_deref().unwrap_or("-"),
                s.kid.as_deref().unwrap_or("-")
            );
            if let Some(src) = &s.key_source {
                line.push_str(&format!(", key from {src}"));
            }
            if let Some(r) = &s.reason {
                line.push_str(&format!(": {r}"));
            }
            eprintln!("{line}");
        }
        eprintln!("canonical sha256 {}", report.canonical_sha256());
        if verified {
            outln!("{}: verified", a.file);
        } else {
            outln!("{}: NOT verified", a.file);
        }
    }
    Ok(if verified {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn report_failure(a: &VerifyArgs, reason: &str, code: &str) -> CliResult {
    if a.json {
        print_json(&serde_json::json!({
            "verified": false, "verdict": "invalid", "file": a.file,
            "reason_code": code, "reason": reason, "signatures": [],
        }));
    } else {
        outln!("{}: NOT verified: {reason}", a.file);
    }
    Ok(ExitCode::from(1))
}
