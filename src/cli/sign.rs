//! `agentsig canon`, `agentsig sign`, `agentsig verify`: detached JWS over
//! JCS, and for A2A Agent Cards the signatures embedded in the card's
//! `signatures` array (docs/a2a.md).

use super::args::parse_duration;
use super::TrustedKeyArgs;
use super::{load_signing, parse_alg, read_input, CliError, CliResult};
use agentsig::a2a::{self, A2aError};
use agentsig::descriptor::{self, DescriptorError, JwsForm};
use agentsig::jws::{self, JwsPolicy, KeyHeaderPolicy, SignOptions, Verdict};
use agentsig::report::Report;
use agentsig::verifier::Verifier;
use agentsig::Algorithm;
use clap::Args;
use std::io::Write;
use std::process::ExitCode;

#[derive(Args)]
pub struct CanonArgs {
    /// JSON file, or - for standard input.
    file: String,
    /// Print one JSON report (agentsig.report/1, docs/report.md): the canonical form and its
    /// SHA-256 in its details.
    #[arg(long)]
    json: bool,
}

impl CanonArgs {
    /// The file, for the report's `subject`.
    pub fn subject(&self) -> Option<String> {
        Some(self.file.clone())
    }
}

pub fn canon(a: CanonArgs) -> CliResult {
    let input = read_input(&a.file)?;
    let out = agentsig::jcs::canonicalize(&input)
        .map_err(|e| CliError::malformed(format!("{}: {e}", a.file)))?;
    if a.json {
        let mut r = Report::done("canon", Some(&a.file));
        // RFC 8785 output is UTF-8 JSON text.
        r.detail("canonical", String::from_utf8_lossy(&out));
        r.detail("canonical_sha256", descriptor::sha256_hex(&out));
        r.detail("length", out.len());
        super::print_report(&r);
        return Ok(ExitCode::SUCCESS);
    }
    std::io::stdout()
        .write_all(&out)
        .map_err(|e| CliError::unwritable(format!("standard output: {e}")))?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct SignArgs {
    /// Descriptor (JSON) to sign, or - for standard input (the JWS, or the signed A2A card,
    /// then goes to standard output).
    file: String,
    /// Private key to sign with: a path, or env:NAME. Repeat for several signatures (implies
    /// --json-serialization; an A2A card gets one `signatures` entry per key).
    #[arg(long, allow_hyphen_values = true, required = true, value_name = "KEY")]
    key: Vec<String>,
    /// Key id for the protected header; default: the key's own kid, else the kid of the
    /// PREFIX.jwk.json (or PREFIX.jwks.json) `agentsig keygen` wrote beside PREFIX.pem when it
    /// holds the same key, else the RFC 7638 thumbprint. Warns when it differs from that file's kid.
    #[arg(long, allow_hyphen_values = true, value_name = "KID")]
    kid: Option<String>,
    /// Algorithm of the private key (RFC 9421 or JOSE name): required for RSA keys
    /// (rsa-pss-sha512 or rsa-v1_5-sha256), checked against all others.
    #[arg(long, value_parser = parse_alg, value_name = "ALG")]
    alg: Option<Algorithm>,
    /// Where to write the JWS; default FILE.jws (standard output for -). For an A2A card
    /// (without --detached): where to write the signed card; default FILE itself, in place.
    #[arg(long, allow_hyphen_values = true, value_name = "FILE")]
    out: Option<String>,
    /// For an A2A Agent Card: write a detached JWS over the plain JCS of the file (FILE.jws)
    /// and leave the card unchanged, instead of adding a signature to its `signatures` array.
    /// A2A clients and SDKs do not read that file.
    #[arg(long)]
    detached: bool,
    /// For an A2A Agent Card: drop every signature already on the card, not only the earlier
    /// ones by the signing keys (which are always replaced), and sign it anew.
    #[arg(long, conflicts_with = "detached")]
    replace: bool,
    /// For an A2A Agent Card: sign even when security-relevant members would be left
    /// unsigned (v0.3 url, preferredTransport, additionalInterfaces, protocolVersion, security,
    /// supportsAuthenticatedExtendedCard beside their v1.0 equivalents; security declarations
    /// the normal form drops). They are removed from the signed card.
    #[arg(long)]
    allow_uncovered: bool,
    /// For an A2A Agent Card: after signing its v1.0 normal form, add the v0.3 members v0.3
    /// clients read (url, preferredTransport, protocolVersion, additionalInterfaces, security,
    /// supportsAuthenticatedExtendedCard, v0.3 scheme members), as the A2A Python SDK's server
    /// does. No signature covers them; `verify` warns about each. Needs a supportedInterfaces
    /// entry with a 0.3 protocolVersion; v0.3 members already on the card are replaced.
    #[arg(long)]
    a2a_v03_compat: bool,
    /// Write the JWS JSON general serialization (several signatures, for key rotation).
    #[arg(long)]
    json_serialization: bool,
    /// The `typ` header (default JOSE, or JOSE+JSON with --json-serialization).
    #[arg(long, allow_hyphen_values = true, value_name = "TYP")]
    typ: Option<String>,
    /// Use the RFC 7797 unencoded payload (b64=false, crit ["b64"]). Not understood by A2A SDKs.
    #[arg(long)]
    unencoded_payload: bool,
    /// File holding the passphrase of an encrypted PKCS#8 private key (else
    /// $AGENTSIG_PASSPHRASE).
    #[arg(long, allow_hyphen_values = true, value_name = "FILE")]
    passphrase_file: Option<String>,
    /// Media type a static host serves the descriptor with; it is signed (RFC 9421 content-type).
    /// Default: the detected format's media type (application/agent+json, application/woa+json,
    /// application/agentcard+json, application/json).
    #[arg(long, allow_hyphen_values = true, value_name = "MEDIA-TYPE")]
    content_type: Option<String>,
    /// The descriptor format, instead of detecting it: agent, agents-registry, awp, woa,
    /// agentcard, aidip, a2a, ai-catalog, mcp-server-card.
    #[arg(long, value_name = "FORMAT")]
    format: Option<agentsig::formats::Format>,
    /// Sign even when `agentsig lint` finds errors (a malformed descriptor, or endpoints on
    /// private, loopback or link-local hosts). The findings are still printed.
    #[arg(long)]
    force: bool,
    /// Give the HTTP signature an expires parameter this far after created: DURATION
    /// (seconds, or 5m, 12h, 30d). Default: no expires (see docs/static-publishing.md).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    expires_in: Option<u64>,
    /// Where to write the HTTP response fields a static host must send; default FILE.headers.
    #[arg(long, allow_hyphen_values = true, value_name = "FILE")]
    headers_out: Option<String>,
    /// Form of the response-fields file: plain (Name: value), nginx or caddy.
    #[arg(
        long,
        default_value = "plain",
        value_parser = ["plain", "nginx", "caddy"],
        value_name = "FORMAT"
    )]
    headers_format: String,
    /// Do not write the response-fields file.
    #[arg(long, conflicts_with = "headers_out")]
    no_headers: bool,
    /// Print one JSON report (agentsig.report/1, docs/report.md) on standard output: the files
    /// written, the signers and the lint findings; a JWS or card bound for standard output (-)
    /// goes into its details instead.
    #[arg(long)]
    json: bool,
    /// For an AI Catalog: sign the Trust Manifest of the entry with this identifier (a missing
    /// manifest is created with identity = IDENTIFIER). Default: every entry's. The catalog is
    /// written in place (or to --out).
    #[arg(
        long,
        allow_hyphen_values = true,
        value_name = "IDENTIFIER",
        conflicts_with = "host"
    )]
    entry: Option<String>,
    /// For an AI Catalog, with --entry: the entry's version, when several entries share the
    /// identifier.
    #[arg(
        long = "version",
        allow_hyphen_values = true,
        value_name = "V",
        requires = "entry"
    )]
    entry_version: Option<String>,
    /// For an AI Catalog: sign the host's Trust Manifest (created with identity =
    /// host.identifier when missing).
    #[arg(long)]
    host: bool,
    /// For an AI Catalog: before signing, fill the declared digests of the manifests signed from
    /// local files: each attestation's `digest` (sha256) and `size`, and the `sourceDigest` of a
    /// provenance link whose `sourceId` is the entry's `url`. DIR maps every URL's path under
    /// DIR; PREFIX=DIR maps the URLs beginning with PREFIX. Repeatable, first match wins. A
    /// mapped file that is missing is an error (exit 2) and nothing is written.
    #[arg(long, allow_hyphen_values = true, value_name = "[PREFIX=]DIR")]
    digest_from: Vec<String>,
}

impl SignArgs {
    /// The descriptor, for the report's `subject`.
    pub fn subject(&self) -> Option<String> {
        Some(self.file.clone())
    }
}

/// The signers of a `sign` report: algorithm, kid and thumbprint per key.
fn signers_detail(keys: &[agentsig::SigningKey]) -> Vec<serde_json::Value> {
    keys.iter()
        .map(|k| {
            serde_json::json!({
                "algorithm": k.algorithm().jose_name(),
                "kid": k.kid_or_thumbprint(),
                "thumbprint": k.verifying_key().thumbprint(),
            })
        })
        .collect()
}

pub fn sign(a: SignArgs) -> CliResult {
    let input = read_input(&a.file)?;
    // Lint first; a descriptor with errors is not signed unless
    // forced (a signature over a malformed descriptor, or one pointing at an
    // internal address, protects nothing).
    let print_finding = |f: &agentsig::formats::Finding| {
        errln!(
            "{}: {} {} at {}: {}",
            esc(&a.file),
            f.severity.as_str(),
            f.code,
            if f.pointer.is_empty() {
                "/"
            } else {
                &f.pointer
            },
            esc(&f.message)
        )
    };
    let mut format = None;
    let mut rep = Report::done("sign", Some(&a.file));
    let content_type = match agentsig::formats::check_before_signing(&input, a.format, a.force) {
        Ok(report) => {
            report.findings.iter().for_each(&print_finding);
            rep.lint_findings(&report.findings);
            format = Some(report.format);
            a.content_type
                .clone()
                .unwrap_or_else(|| report.format.media_type().to_owned())
        }
        Err(agentsig::formats::SignGateError::Refused(report)) => {
            report.errors().for_each(&print_finding);
            let msg = format!(
                "{}: not signed: `agentsig lint` finds {} error(s) in this {}; fix them, or sign anyway with --force",
                esc(&a.file),
                report.errors().count(),
                report.format.title()
            );
            if a.json {
                // The findings are the reasons: report them as checks.
                errln!("agentsig: {msg}");
                let mut r = Report::from_lint(Some(&a.file), &report);
                r.command = "sign".to_owned();
                r.error = Some(agentsig::report::Problem::new("sign.lint-errors", &msg));
                super::print_report(&r);
                return Ok(ExitCode::from(1));
            }
            return Err(CliError::failed(msg).with_kind("sign.lint-errors"));
        }
        Err(agentsig::formats::SignGateError::Detect(
            agentsig::formats::DetectError::Unrecognized,
        )) => {
            errln!(
                "{}: not a recognized descriptor format, so not linted (give --format to choose one); signing as application/json",
                esc(&a.file)
            );
            a.content_type
                .clone()
                .unwrap_or_else(|| "application/json".into())
        }
        Err(e) => return Err(CliError::malformed(format!("{}: {e}", esc(&a.file)))),
    };
    if a.kid.is_some() && a.key.len() > 1 {
        return Err(CliError::usage(
            "--kid names one key; with several --key, put kid in each JWK",
        ));
    }
    let mut keys = Vec::new();
    for spec in &a.key {
        let k = load_signing(spec, a.alg, None, a.passphrase_file.as_deref())?;
        keys.push(match &a.kid {
            Some(kid) => {
                let recorded = k
                    .kid()
                    .map(str::to_owned)
                    .or_else(|| super::sibling_jwk_kid(spec, k.verifying_key()));
                if let Some(r) = recorded.filter(|r| r != kid) {
                    errln!(
                        "agentsig: warning: --kid {} differs from the kid {} recorded for {}; verifiers looking the key up by kid in its JWK Set will not find it",
                        esc(kid),
                        esc(&r),
                        esc(spec)
                    );
                }
                k.with_kid(kid.clone())
            }
            None => k,
        });
    }
    for (spec, k) in a.key.iter().zip(&keys) {
        if let Some(w) = super::published_test_key(spec, k) {
            rep.warn("key.published-test-key", w);
        }
    }
    rep.detail("format", format.map(|f| f.name()));
    rep.detail("content_type", &content_type);
    rep.detail("signers", signers_detail(&keys));
    if format == Some(agentsig::formats::Format::A2a) && !a.detached {
        return sign_a2a_card(&a, &input, &content_type, &keys, rep);
    }
    if format == Some(agentsig::formats::Format::AiCatalog) && !a.detached {
        let target = super::catalog::target(a.entry.as_deref(), a.entry_version.as_deref(), a.host);
        let what = super::catalog::SignCatalog {
            file: &a.file,
            out: a.out.as_deref(),
            target,
            digest_from: &a.digest_from,
        };
        return super::catalog::sign(&what, &input, &keys, rep, a.json);
    }
    if a.entry.is_some() || a.host || !a.digest_from.is_empty() {
        return Err(CliError::usage(
            "--entry, --host and --digest-from apply to an AI Catalog",
        ));
    }
    if a.a2a_v03_compat {
        return Err(CliError::usage(
            "--a2a-v03-compat applies to an A2A Agent Card signed in the card (not --detached, not another format)",
        ));
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
    let opts = descriptor::DescriptorOptions::default()
        .form(form)
        .jws(opts);
    let signed = descriptor::sign_with(&input, &refs, &opts).map_err(|e| match e {
        DescriptorError::Json(j) => CliError::malformed(format!("{}: {j}", a.file)),
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
    if out == "-" && a.json {
        rep.detail("jws", &signed.jws);
    } else if out == "-" {
        out!("{text}");
    } else {
        std::fs::write(&out, text.as_bytes())
            .map_err(|e| CliError::unwritable(format!("{out}: {e}")))?;
        rep.detail("jws_file", &out);
    }
    rep.detail(
        "canonical_sha256",
        descriptor::sha256_hex(&signed.canonical),
    );
    let signers: Vec<String> = keys
        .iter()
        .map(|k| {
            format!(
                "{} kid {}",
                k.algorithm().jose_name(),
                k.kid_or_thumbprint()
            )
        })
        .collect();
    let headers_path = match (&a.headers_out, a.file.as_str()) {
        _ if a.no_headers => None,
        (Some(h), _) => Some(h.clone()),
        (None, "-") => None,
        (None, f) => Some(format!("{f}.headers")),
    };
    let headers = match &headers_path {
        Some(path) => Some(super::http::write_static_headers(
            path,
            &a.file,
            &input,
            &content_type,
            &keys,
            a.expires_in,
            &a.headers_format,
        )?),
        None => None,
    };
    // One summary naming every file written (standard output is not a file).
    let mut wrote = Vec::new();
    if out != "-" {
        wrote.push(format!("{out} (detached JWS, {})", signers.join("; ")));
    }
    if let (Some(path), Some((created, expires))) = (&headers_path, headers) {
        wrote.push(format!(
            "{path} (HTTP response fields for a static host, {} format, created {}{})",
            a.headers_format,
            agentsig::text::rfc3339(created),
            expires.map_or_else(String::new, |e| format!(
                ", expires {}",
                agentsig::text::rfc3339(e)
            ))
        ));
    }
    if let (Some(path), Some((created, expires))) = (&headers_path, headers) {
        rep.detail("headers_file", path);
        rep.detail("created", created);
        rep.detail("expires", expires);
    }
    if !wrote.is_empty() {
        errln!("signed {}: wrote {}", a.file, wrote.join(" and "));
    }
    if a.json {
        super::print_report(&rep);
    }
    Ok(ExitCode::SUCCESS)
}

/// `sign` on an A2A Agent Card: one `signatures` entry per key, over the
/// card's normal form, the card written in that normal form (docs/a2a.md).
fn sign_a2a_card(
    a: &SignArgs,
    input: &[u8],
    content_type: &str,
    keys: &[agentsig::SigningKey],
    mut rep: Report,
) -> CliResult {
    if a.json_serialization || a.unencoded_payload || a.typ.is_some() {
        return Err(CliError::usage(
            "--json-serialization, --unencoded-payload and --typ apply to a detached JWS; an A2A card's embedded signatures always use typ JOSE and a base64url payload (add --detached for a detached JWS)",
        ));
    }
    let card = agentsig::json::parse_strict(input)
        .map_err(|e| CliError::usage(format!("{}: {e}", esc(&a.file))))?;
    let mut card = resign(a, &card, keys, &mut rep)?;
    let mut uncovered = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        let sign = if a.a2a_v03_compat {
            a2a::sign_card_v03_compat
        } else {
            a2a::sign_card
        };
        let signed = sign(&card, key, &serde_json::Map::new(), a.allow_uncovered)
            .map_err(|e| match e {
                A2aError::UncoveredSecurity(list) => CliError::failed(format!(
                    "{}: not signed: these security-relevant members would not be covered by the signature, so anyone could change them: {}; {} (docs/a2a.md), or sign anyway with --allow-uncovered (they are then removed from the signed card)",
                    esc(&a.file),
                    esc(&list),
                    a2a::uncovered_fix(&list)
                ))
                .with_kind("a2a.uncovered-security"),
                A2aError::Jws(j) => CliError::usage(format!("{}: {j}", esc(&a.key[i]))),
                other => CliError::usage(format!("{}: {other}", esc(&a.file))),
            })?;
        if i == 0 {
            uncovered = signed.uncovered;
        }
        card = signed.card;
    }
    let out = match (&a.out, a.file.as_str()) {
        (Some(o), _) => o.clone(),
        (None, f) => f.to_owned(),
    };
    let written_to = if out == "-" {
        "standard output".to_owned()
    } else {
        esc(&out).into_owned()
    };
    for u in &uncovered {
        if u.reason == a2a::SCOPELESS_REQUIREMENT {
            // What was written: the requirement as given, beside a
            // signature that covers it as absent.
            let scheme = u
                .pointer
                .trim_end_matches("/list")
                .rsplit('/')
                .next()
                .unwrap_or_default();
            errln!(
                "{}: note: member {} ({}): written to {written_to} as {{\"{}\": {{}}}} in securityRequirements, which clients read, and signed as absent; the scheme itself, /securitySchemes/{}, is signed",
                esc(&a.file),
                esc(&u.pointer),
                u.reason,
                esc(scheme),
                esc(scheme)
            );
            continue;
        }
        errln!(
            "{}: {} {} ({}): removed, not signed",
            esc(&a.file),
            if u.security {
                "warning: security-relevant member"
            } else {
                "note: member"
            },
            esc(&u.pointer),
            u.reason,
        );
    }
    if a.a2a_v03_compat {
        errln!(
            "{}: warning: the v0.3 compatibility members (url, preferredTransport, protocolVersion, additionalInterfaces, security, v0.3 scheme members) were added after signing: no signature covers them, and `agentsig verify` lists each; v0.3 clients that act on them trust the host, not the signature",
            esc(&a.file)
        );
    }
    let mut text = serde_json::to_string_pretty(&card)
        .map_err(|e| CliError::usage(format!("{}: {e}", esc(&a.file))))?;
    text.push('\n');
    if out == "-" && a.json {
        rep.detail("signed_card", &card);
    } else if out == "-" {
        let _ = std::io::stdout().lock().write_all(text.as_bytes());
    } else {
        replace_file(&out, text.as_bytes())?;
        rep.detail("signed_card_file", &out);
    }
    let signers: Vec<String> = keys
        .iter()
        .map(|k| {
            format!(
                "{} kid {}",
                k.algorithm().jose_name(),
                k.kid_or_thumbprint()
            )
        })
        .collect();
    let headers_path = match (&a.headers_out, out.as_str()) {
        _ if a.no_headers => None,
        (Some(h), _) => Some(h.clone()),
        (None, "-") => None,
        (None, f) => Some(format!("{f}.headers")),
    };
    let mut wrote = Vec::new();
    if out != "-" {
        wrote.push(format!(
            "{out} (A2A Agent Card in its signed normal form, {} signature(s) added: {})",
            keys.len(),
            signers.join("; ")
        ));
    }
    if let Some(path) = &headers_path {
        let (created, expires) = super::http::write_static_headers(
            path,
            &out,
            text.as_bytes(),
            content_type,
            keys,
            a.expires_in,
            &a.headers_format,
        )?;
        rep.detail("headers_file", path);
        rep.detail("created", created);
        rep.detail("expires", expires);
        wrote.push(format!(
            "{path} (HTTP response fields for a static host, {} format, created {}{})",
            a.headers_format,
            agentsig::text::rfc3339(created),
            expires.map_or_else(String::new, |e| format!(
                ", expires {}",
                agentsig::text::rfc3339(e)
            ))
        ));
    }
    if !wrote.is_empty() {
        errln!("signed {}: wrote {}", esc(&a.file), wrote.join(" and "));
    }
    if a.json {
        super::print_report(&rep);
    }
    Ok(ExitCode::SUCCESS)
}

/// The signatures already on a card about to be signed again
/// (`a2a::prepare_resign`): earlier ones by the signing keys are replaced
/// and said so, all of them with --replace. A kept signature by another key
/// that no longer verifies over the card's content (the signing keys' own
/// earlier signatures show the content changed) is refused, not warned
/// about: written, it would be an invalid signature under a trusted key,
/// which fails the whole card (docs/a2a.md); the message names the fixes.
fn resign(
    a: &SignArgs,
    card: &serde_json::Value,
    keys: &[agentsig::SigningKey],
    rep: &mut Report,
) -> Result<serde_json::Value, CliError> {
    let plan = a2a::prepare_resign(card, keys, a.replace)
        .map_err(|e| CliError::usage(format!("{}: {e}", esc(&a.file))))?;
    let list = |v: &[a2a::PriorSignature]| {
        v.iter()
            .map(|p| match &p.kid {
                Some(k) => format!("signatures/{} (kid {})", p.index, esc(k)),
                None => format!("signatures/{} (no kid)", p.index),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let stale = plan.stale();
    if !stale.is_empty() {
        return Err(CliError::failed(format!(
            "{}: not signed: the card changed since its signatures were made (the signing key's own earlier signature no longer verifies over it), so the kept {} by other keys would no longer verify and `agentsig verify` would fail the card; sign with every key at once (--key A --key B), or drop them with --replace",
            esc(&a.file),
            list(stale)
        ))
        .with_kind("a2a.stale-signature"));
    }
    if !plan.replaced.is_empty() {
        let why = if a.replace {
            "--replace"
        } else {
            "signed again by the same key"
        };
        errln!(
            "{}: replaced {} earlier signature(s) ({why}): {}",
            esc(&a.file),
            plan.replaced.len(),
            list(&plan.replaced)
        );
        rep.detail(
            "replaced_signatures",
            plan.replaced.iter().map(|p| p.index).collect::<Vec<_>>(),
        );
    }
    if !plan.kept.is_empty() {
        let how = if plan.changed == Some(false) {
            "the card's content is unchanged since they were made"
        } else {
            "their keys are not here to check them: if the card was edited since they were made, they no longer verify; sign with every key at once, or drop them with --replace"
        };
        errln!(
            "{}: kept {} signature(s) by other keys: {} ({how})",
            esc(&a.file),
            plan.kept.len(),
            list(&plan.kept)
        );
    }
    // Signatures already on the card cover its normal form; when this card
    // holds v0.3 members that the normal form converts, a signature made
    // over the unconverted reading (the JS SDK's) will not verify on the
    // card as rewritten.
    let had = plan.kept.len();
    if had > 0 && a2a::normalize(&plan.card).is_ok_and(|n| n.converted_v03) {
        errln!(
            "{}: warning: the card's {had} existing signature(s) are kept, but it is rewritten with its v0.3 members converted: a signature made over the unconverted card will no longer verify; check with `agentsig verify`",
            esc(&a.file)
        );
    }
    Ok(plan.card)
}

/// Replace `path` with `bytes` through a new temporary file beside it and a
/// rename, so that an interrupted write never leaves a truncated card.
fn replace_file(path: &str, bytes: &[u8]) -> Result<(), CliError> {
    let target = std::path::Path::new(path);
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| std::path::Path::new("."));
    let name = target
        .file_name()
        .map_or_else(|| "card".into(), |n| n.to_string_lossy().into_owned());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    // Opened with create_new (O_EXCL): an existing file or link is refused.
    let tmp = dir.join(format!(".{name}.{}-{nanos}.tmp", std::process::id()));
    super::write_new_file(&tmp, bytes, 0o644)?;
    std::fs::rename(&tmp, target).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        CliError::usage(format!("{path}: {e}"))
    })
}

#[derive(Args)]
pub struct VerifyArgs {
    /// Descriptor (JSON) to verify, or - for standard input (optional with --response).
    /// An AI Catalog (file or URL, docs/catalog.md) is verified entry by entry; with it,
    /// --key/--jwks keys are trusted for every Trust Manifest identity in place of resolving
    /// each one (a did:key or did:jwk identity still verifies with the key it carries, and
    /// only with it), and the report names the key set, not the identity.
    #[arg(default_value = "", hide_default_value = true)]
    file: String,
    /// Verify a saved HTTP response (status line, headers, body, e.g. from curl -i) with
    /// RFC 9421: @status, content-type and content-digest must be signed, Content-Digest must match the body.
    /// With FILE: the response body must be FILE's bytes exactly, and FILE's detached JWS
    /// (FILE.jws, or --jws) is verified too when present. Without FILE: only the response.
    #[arg(long, allow_hyphen_values = true, value_name = "FILE")]
    response: Option<String>,
    /// With --response or a URL: largest age of the signature's created: DURATION (seconds, or
    /// 5m, 12h, 30d); default: none (expires is enforced).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    max_age: Option<u64>,
    /// With --response or a URL: verify as if the time were this (Unix seconds); default: now.
    #[arg(long, allow_hyphen_values = true, value_name = "UNIX-SECONDS")]
    now: Option<i64>,
    /// Fetching options when FILE is an https:// URL.
    #[cfg(feature = "net")]
    #[command(flatten)]
    net: super::net::NetArgs,
    /// The detached JWS; default FILE.jws. An A2A Agent Card is verified by the signatures in
    /// its `signatures` array instead (docs/a2a.md), unless --jws is given, or it has no
    /// `signatures` member and FILE.jws exists. An AI Catalog FILE's detached JWS is over the whole
    /// document and checked with the keys of its host.identifier (docs/catalog.md).
    #[arg(long, allow_hyphen_values = true, value_name = "FILE")]
    jws: Option<String>,
    /// For an A2A Agent Card: require every entry of `signatures` to be valid under a trusted
    /// key. Default: at least one valid signature by a trusted key and none invalid.
    #[arg(long)]
    require_all: bool,
    #[command(flatten)]
    trust: TrustedKeyArgs,
    /// Required `typ` header value (RFC 7515 4.1.9 comparison). Repeatable.
    #[arg(long, allow_hyphen_values = true, value_name = "TYP")]
    typ: Vec<String>,
    /// Ignore jku/jwk/x5u/x5c/x5t headers instead of refusing the signature. Keys still come only from --key/--jwks.
    #[arg(long)]
    ignore_key_headers: bool,
    /// Key continuity: pin the descriptor's key on first sight and fail with pin.key-changed when
    /// it later verifies with another key. STORE is PATH or file:PATH (one machine),
    /// redis[s]://[USER:PASS@]HOST:PORT/DB (a fleet; rediss: TLS; or redis+cluster://HOST:PORT,..., redis+sentinel://HOST:PORT,.../MASTER, each with ?wait=N for acknowledged writes: docs/fleet.md), memory:. The identity is the descriptor's "id", else
    /// "url", else "name". Refused with an AI Catalog, which names many identities (docs/catalog.md).
    #[arg(long, allow_hyphen_values = true, value_name = "STORE")]
    pin_store: Option<String>,
    /// Print one JSON report (agentsig.report/1, docs/report.md) on standard output, whatever
    /// the outcome.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    batch: super::batch::BatchArgs,
}

impl VerifyArgs {
    /// The saved response (with --response), else the descriptor or URL,
    /// for the report's `subject`.
    pub fn subject(&self) -> Option<String> {
        match &self.response {
            Some(r) => Some(r.clone()),
            None => (!self.file.is_empty()).then(|| self.file.clone()),
        }
    }
}

/// Check the verified keys against the pin store; the decision is the
/// library's ([`agentsig::pin::Pins::decide`]).
fn check_pins(
    url: &str,
    input: &[u8],
    report: &agentsig::jws::JwsReport,
) -> Result<(bool, &'static str, String), CliError> {
    check_pins_for(url, agentsig::descriptor::identity(input), &[report])
}

/// [`check_pins`] for an identity and the valid signatures of several
/// reports (an A2A card's `signatures` entries).
fn check_pins_for(
    url: &str,
    identity: Option<String>,
    reports: &[&agentsig::jws::JwsReport],
) -> Result<(bool, &'static str, String), CliError> {
    use agentsig::pin::{open_pin_store, Pins};
    let pins = Pins::new(open_pin_store(url).map_err(|e| CliError::usage(e.to_string()))?);
    let tps: Vec<&str> = reports.iter().flat_map(|r| r.valid_thumbprints()).collect();
    let d = pins.decide(identity.as_deref(), &tps);
    Ok((d.passed, d.code, d.message))
}

fn esc(s: &str) -> std::borrow::Cow<'_, str> {
    agentsig::text::escape_controls(s)
}

/// The outcome of a detached-JWS check: the verdict, the JSON report and
/// one text line per signature.
struct JwsOutcome {
    verified: bool,
    json: Report,
    lines: Vec<String>,
}

/// The `verify` options given that an AI Catalog cannot honour, each with
/// why (docs/catalog.md, "Options"): a catalog is refused with them rather
/// than verified as if they were absent.
fn catalog_unsupported(a: &VerifyArgs) -> Vec<(&'static str, &'static str)> {
    let mut out = Vec::new();
    if a.pin_store.is_some() {
        out.push(("--pin-store", "a pin is the key of one identity, the descriptor's or card's (docs/fleet.md); a catalog names many identities, each checked against its Trust Manifest's own keys on every run. Verify one entry by its URL with --pin-store, or pin an identity with `agentsig pin add`"));
    }
    if a.jws.is_some() && (a.file.starts_with("https://") || a.file.starts_with("http://")) {
        out.push(("--jws", "a catalog URL's detached JWS is fetched from URL.jws; save the catalog and verify the FILE to give another one"));
    }
    if a.require_all {
        out.push(("--require-all", "it is the rule of one A2A card's embedded signatures; --require-signed asks every catalog entry for a verified Trust Manifest"));
    }
    if a.max_age.is_some() || a.now.is_some() {
        out.push(("--max-age/--now", "the cards of a catalog are checked at the current time, with no bound on the age of their response signatures"));
    }
    #[cfg(feature = "net")]
    {
        if a.net.cache_dir.is_some() {
            out.push(("--cache-dir", "the keys of a catalog's identities are fetched for this run only, never kept in DIR"));
        }
        if a.net.require_response_signature {
            out.push(("--require-response-signature", "a card fetched from a catalog entry passes with its response signature or its detached JWS; use --require-signed to require one"));
        }
        if a.net.follow_jku {
            out.push((
                "--follow-jku",
                "a catalog card's keys are its entry identity's (or --key/--jwks), never a jku",
            ));
        }
    }
    out
}

/// The options of `verify` an AI Catalog uses.
/// The detached JWS of a catalog FILE (draft-narvaneni-agent-uri-03
/// section 10.3 form, over the whole document): `--jws`, else `FILE.jws`
/// when it exists; none for standard input or a URL (whose `URL.jws` is
/// fetched).
fn catalog_jws(a: &VerifyArgs) -> Result<Option<String>, CliError> {
    let is_url = a.file.starts_with("https://") || a.file.starts_with("http://");
    let path = match &a.jws {
        _ if is_url => return Ok(None),
        Some(p) => p.clone(),
        None if a.file == "-" => return Ok(None),
        None => {
            let p = format!("{}.jws", a.file);
            if !std::path::Path::new(&p).exists() {
                return Ok(None);
            }
            p
        }
    };
    let bytes = read_input(&path)?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| CliError::unreadable(format!("{}: not UTF-8 text", esc(&path))))
}

fn catalog_args(a: &VerifyArgs) -> Result<super::catalog::VerifyCatalog<'_>, CliError> {
    Ok(super::catalog::VerifyCatalog {
        file: &a.file,
        trust: &a.trust,
        typ: &a.typ,
        #[cfg(feature = "net")]
        require_signed: a.net.require_signed,
        #[cfg(not(feature = "net"))]
        require_signed: false,
        #[cfg(feature = "net")]
        allow_unsigned: a.net.allow_unsigned,
        #[cfg(not(feature = "net"))]
        allow_unsigned: false,
        ignore_key_headers: a.ignore_key_headers,
        unsupported: catalog_unsupported(a),
        catalog_jws: catalog_jws(a)?,
        json: a.json,
        #[cfg(feature = "net")]
        fetcher: Some(a.net.fetch.fetcher()?),
    })
}

pub fn verify(a: VerifyArgs) -> CliResult {
    if let Some(list) = &a.batch.batch {
        if !a.file.is_empty()
            || a.response.is_some()
            || a.jws.is_some()
            || a.require_all
            || a.pin_store.is_some()
        {
            return Err(CliError::usage(
                "--batch takes no FILE, --response, --jws, --require-all or --pin-store",
            ));
        }
        let cx = super::batch::BatchContext {
            trust: &a.trust,
            typ: &a.typ,
            ignore_key_headers: a.ignore_key_headers,
            json: a.json,
            max_age: a.max_age,
            now: a.now,
            #[cfg(feature = "net")]
            net: &a.net,
        };
        return super::batch::run(list, &a.batch, &cx);
    }
    let is_url = a.file.starts_with("https://") || a.file.starts_with("http://");
    #[cfg(feature = "net")]
    if agentsig::catalog::is_catalog_url(&a.file) && a.response.is_none() {
        return super::catalog::verify_url(&catalog_args(&a)?, &a.file);
    }
    #[cfg(feature = "net")]
    if a.response.is_none() {
        if let Some(wk) = agentsig::net::catalog::well_known_catalog_url(&a.file) {
            let mut c = catalog_args(&a)?;
            c.file = &wk;
            if let Some(code) = super::catalog::verify_well_known(&c, &wk)? {
                return Ok(code);
            }
        }
    }
    #[cfg(feature = "net")]
    if is_url && a.response.is_none() {
        // A URL's detached JWS is fetched from URL.jws and an A2A card's
        // signatures decide by the one verdict rule: neither option would
        // change what `verify URL` checks.
        if a.jws.is_some() || a.require_all {
            return Err(CliError::usage(
                "--jws and --require-all apply to a local FILE: a URL's detached JWS is fetched from URL.jws, and its signatures decide by the one verdict rule (docs/report.md); save the document and verify the FILE to use them",
            ));
        }
        return super::net::verify_url_cmd(
            &a.file,
            &a.net,
            &a.trust,
            a.max_age,
            a.now,
            a.json,
            a.pin_store.as_deref(),
            &|| super::catalog::verify_url(&catalog_args(&a)?, &a.file),
        );
    }
    if (a.max_age.is_some() || a.now.is_some()) && a.response.is_none() && !is_url {
        return Err(CliError::usage(
            "--max-age and --now apply to --response or a URL",
        ));
    }
    if let Some(resp) = &a.response {
        return verify_response(&a, resp);
    }
    if a.file.is_empty() {
        return Err(CliError::usage(
            "give the descriptor FILE, or --response SAVED.http",
        ));
    }
    let input = read_input(&a.file)?;
    if let Ok((agentsig::formats::Format::AiCatalog, _)) = agentsig::formats::detect_bytes(&input) {
        return super::catalog::verify(&catalog_args(&a)?, &input);
    }
    if a.jws.is_none() {
        if let Ok((agentsig::formats::Format::A2a, card)) = agentsig::formats::detect_bytes(&input)
        {
            let detached_beside = a.file != "-"
                && card.get("signatures").is_none()
                && std::path::Path::new(&format!("{}.jws", a.file)).exists();
            if !detached_beside {
                return verify_a2a_card(&a, &card);
            }
        }
    }
    if a.require_all {
        return Err(CliError::usage(
            "--require-all applies to an A2A card's embedded signatures",
        ));
    }
    let jws_path = match (&a.jws, a.file.as_str()) {
        (Some(j), _) => j.clone(),
        (None, "-") => {
            return Err(CliError::usage(
                "reading the descriptor from standard input needs --jws FILE",
            ))
        }
        (None, f) => format!("{f}.jws"),
    };
    let o = check_jws(&a, &input, &jws_path, Pin::Decide)
        .map_err(|e| e.with_detail("jws", &jws_path))?;
    if a.json {
        super::print_report(&o.json);
    } else {
        for l in &o.lines {
            errln!("{l}");
        }
        if o.verified {
            outln!("{}: verified", esc(&a.file));
        } else {
            outln!("{}: NOT verified", esc(&a.file));
        }
    }
    Ok(if o.verified {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `verify CARD`: the signatures embedded in an A2A Agent Card, each
/// checked against the card's normal form with the trusted keys; verified
/// when at least one is valid and none invalid under a trusted key, or with
/// `--require-all` when every one is valid (docs/a2a.md).
fn verify_a2a_card(a: &VerifyArgs, card: &serde_json::Value) -> CliResult {
    let o = check_card(a, card, Pin::Decide)?;
    if a.json {
        super::print_report(&o.json);
    } else {
        for l in &o.lines {
            errln!("{l}");
        }
        if o.json.signatures.is_empty() {
            outln!("{}: NOT verified", esc(&a.file));
        } else {
            let valid = o
                .json
                .signatures
                .iter()
                .filter(|s| s.verdict == "valid")
                .count();
            let rule = if a.require_all {
                "every signature valid under a trusted key (--require-all)"
            } else {
                "at least one valid signature by a trusted key, none invalid"
            };
            outln!(
                "{}: {} ({valid} of {} signature(s) valid; rule: {rule})",
                esc(&a.file),
                if o.verified {
                    "verified"
                } else {
                    "NOT verified"
                },
                o.json.signatures.len()
            );
        }
    }
    Ok(if o.verified {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Check an A2A card's embedded signatures; prints nothing. A card without
/// signatures, or one that is no valid card, is a failed outcome (exit 1).
/// Whether a check takes the key-continuity decision of `--pin-store`
/// itself, or leaves it to its caller (`--response`, whose verdict is the
/// library's).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pin {
    Decide,
    #[cfg(feature = "net")]
    Leave,
}

fn check_card(a: &VerifyArgs, card: &serde_json::Value, pin: Pin) -> Result<JwsOutcome, CliError> {
    let resolver = a.trust.resolver()?;
    let mut policy = JwsPolicy::default();
    if !a.typ.is_empty() {
        policy = policy.expected_typ(a.typ.clone());
    }
    let v = Verifier::builder(resolver)
        .algorithms(a.trust.allow_list())
        .jws(policy)
        .build();
    let report = match v.verify_agent_card_value(card) {
        Ok(r) => r,
        Err(A2aError::NotVerified(r)) => *r,
        Err(e) => {
            let code = match e {
                A2aError::NoSignatures => "a2a.no-signatures",
                A2aError::BadSignature { .. } => "a2a.bad-signature-entry",
                _ => "a2a.malformed-card",
            };
            let message = match e {
                A2aError::NoSignatures => "the A2A card has no signatures (its `signatures` array is absent or empty): nothing verified".to_owned(),
                other => other.to_string(),
            };
            let mut rep = Report::error("verify", Some(&a.file), code, &message);
            rep.set_verdict(agentsig::report::Verdict::NotVerified);
            return Ok(JwsOutcome {
                verified: false,
                json: rep,
                lines: vec![format!("{}: {}", esc(&a.file), esc(&message))],
            });
        }
    };
    let mut json = Report::from_card("verify", Some(&a.file), &report, a.require_all);
    let mut verified = json.verified;
    let mut lines = Vec::new();
    for (i, entry) in report.signatures.iter().enumerate() {
        match entry {
            Ok(j) => {
                for s in &j.signatures {
                    lines.push(format!("signatures/{i}: {}", signature_line(s)));
                }
            }
            Err(e) => lines.push(format!("signatures/{i}: REFUSED: {}", esc(&e.to_string()))),
        }
    }
    if let (Some(url), true, Pin::Decide) = (&a.pin_store, verified, pin) {
        let reports: Vec<&agentsig::jws::JwsReport> = report
            .signatures
            .iter()
            .filter_map(|r| r.as_ref().ok())
            .collect();
        // The identity comes from the signed card only: an uncovered member
        // (the v0.3 `url`) could otherwise choose the pin.
        let identity = serde_json::to_vec(report.signed_card())
            .ok()
            .and_then(|b| agentsig::descriptor::identity(&b));
        let (ok, code, message) = check_pins_for(url, identity, &reports)?;
        json.check(code, ok, message.clone());
        lines.push(message);
        if !ok {
            verified = false;
            json.set_verdict(agentsig::report::Verdict::NotVerified);
        }
    }
    for u in report.uncovered_security() {
        lines.push(format!(
            "warning: {} ({}) is not covered by any signature: anyone can change it; act only on the signed members",
            esc(&u.pointer),
            u.reason
        ));
    }
    if report.converted_v03 {
        lines.push("note: the v0.3 members were read as their v1.0 equivalents (as the A2A Python SDK does)".into());
    }
    Ok(JwsOutcome {
        verified,
        json,
        lines,
    })
}

/// One text line for a JWS signature's verdict.
fn signature_line(s: &agentsig::jws::SignatureReport) -> String {
    let what = match s.verdict {
        Verdict::Valid => "valid",
        Verdict::Invalid => "INVALID",
        Verdict::Refused => "REFUSED",
        _ => "NO TRUSTED KEY",
    };
    let mut line = format!(
        "{what}: alg {} kid {}",
        s.alg.as_deref().map_or_else(|| "-".into(), esc),
        s.kid.as_deref().map_or_else(|| "-".into(), esc)
    );
    if let Some(src) = &s.key_source {
        line.push_str(&format!(", key from {}", esc(&src.to_string())));
    }
    if let Some(why) = s.explain() {
        line.push_str(&format!(": {}", esc(&why)));
    }
    line
}

/// `verify [FILE] --response SAVED.http` in a build without the `net`
/// feature: refused, since the verdict on a served response is `verify
/// URL`'s ([`agentsig::net::Resolver::verify_served`]).
#[cfg(not(feature = "net"))]
fn verify_response(_a: &VerifyArgs, _resp: &str) -> CliResult {
    Err(CliError::usage(
        "--response is verified as `verify URL` verifies what the URL served, which needs the net feature; `agentsig http verify SAVED.http` checks the RFC 9421 signature alone",
    ))
}

/// `verify [FILE] --response SAVED.http`: the saved response verified as
/// `verify URL --require-response-signature` verifies what the URL served
/// (the library's [`agentsig::net::Resolver::verify_served`]: the
/// `Content-Digest`, the RFC 9421 response signature, the detached JWS
/// FILE.jws or --jws as URL.jws, an A2A card's embedded signatures, the one
/// verdict rule); with FILE, also that the response body is FILE's bytes
/// exactly. The lines and the report list every signature; the verdict is
/// the library's, and says what was checked.
#[cfg(feature = "net")]
fn verify_response(a: &VerifyArgs, resp: &str) -> CliResult {
    let m = super::http::read_saved_response(resp)?;
    let file = (!a.file.is_empty()).then_some(a.file.as_str());
    // A named FILE that cannot be read is a usage error, never skipped.
    let input = file.map(read_input).transpose()?;
    let jws_path = match (&a.jws, file) {
        (Some(j), _) => Some(j.clone()),
        (None, Some("-")) | (None, None) => None,
        (None, Some(f)) => {
            let p = format!("{f}.jws");
            std::path::Path::new(&p).exists().then_some(p)
        }
    };
    if jws_path.is_some() && input.is_none() {
        return Err(CliError::usage(
            "--jws needs the descriptor FILE as well as --response",
        ));
    }
    let http = super::http::verify_outcome(super::http::VerifyRequest {
        file: resp,
        message: &m,
        related: None,
        trust: &a.trust,
        labels: &[],
        required: agentsig::httpsig::descriptor_response_components(),
        max_age: a.max_age,
        skew: 60,
        now: a.now,
        check_time: true,
        tag: None,
        require_expires: false,
        replay_store: None,
        print_base: false,
        json: a.json,
        authorities: None,
        require_content_digest: true,
    })?;
    let mut checked = vec![format!("RFC 9421 signature of the response {resp}")];
    let mut failed: Vec<String> = Vec::new();
    let mut lines = http.lines.clone();
    let body_matches = match (&input, file) {
        (Some(bytes), Some(f)) => {
            let same = bytes.as_slice() == m.body.as_slice();
            checked.push(format!("response body is the bytes of {f}"));
            if same {
                lines.push(format!(
                    "{}: the response body is its bytes exactly ({} bytes)",
                    esc(f),
                    bytes.len()
                ));
            } else {
                failed.push(format!("response body is the bytes of {f}"));
                lines.push(format!(
                    "{}: DIFFERS from the response body ({} bytes in the file, {} in the response)",
                    esc(f),
                    bytes.len(),
                    m.body.len()
                ));
            }
            Some(same)
        }
        _ => None,
    };
    // A served media type that does not fit the format is reported (each
    // seed names its media type; crate::formats).
    let media_warning = input
        .as_deref()
        .and_then(|bytes| agentsig::formats::served_media_type(bytes, &m));
    if let Some(f) = &media_warning {
        lines.push(format!("warning {}: {}", f.code, esc(&f.message)));
    }
    // An A2A card with a `signatures` member and no detached JWS: its
    // embedded signatures (docs/a2a.md).
    let card = match (&jws_path, &input) {
        (None, Some(bytes)) => agentsig::a2a::card_with_signatures(bytes),
        _ => None,
    };
    let jws = match (&jws_path, &input, &card) {
        (Some(p), Some(bytes), _) => {
            checked.push(format!("detached JWS {p}"));
            let o = check_jws(a, bytes, p, Pin::Leave)?;
            lines.extend(o.lines.iter().cloned());
            Some(o)
        }
        (None, Some(_), Some(card)) => {
            checked.push("the A2A card's embedded signatures".to_owned());
            let o = check_card(a, card, Pin::Leave)?;
            lines.extend(o.lines.iter().cloned());
            Some(o)
        }
        _ => None,
    };
    // The verdict: `verify URL`'s on the same bytes (the saved response is
    // what the URL served, FILE.jws what URL.jws served).
    let jws_text = jws_path
        .as_deref()
        .map(|p| {
            String::from_utf8(read_input(p)?)
                .map_err(|_| CliError::malformed(format!("{p}: not UTF-8")))
        })
        .transpose()?;
    let served = super::net::verify_served(
        &super::net::Served {
            net: &a.net,
            trust: &a.trust,
            max_age: a.max_age,
            now: a.now,
            pin_store: a.pin_store.as_deref(),
        },
        file.unwrap_or(resp),
        &m,
        jws_text.as_deref(),
    )?;
    let mut pin_check = None;
    match &served {
        Ok(v) => {
            lines.extend(super::net::not_checked_notes(v));
            if let Some(d) = super::net::served_pin_decision(a.pin_store.as_deref(), v)? {
                lines.push(d.message.clone());
                if !d.passed {
                    failed.push(d.message.clone());
                }
                pin_check = Some(d);
            }
        }
        Err(e) => failed.push(format!("{e} ({})", e.code())),
    }
    let verified = failed.is_empty();
    let subject = file.unwrap_or(resp);
    if a.json {
        let mut j = http.json.clone();
        j.command = "verify --response".into();
        if let Some(o) = &jws {
            j.signatures.extend(o.json.signatures.iter().cloned());
            j.checks.extend(o.json.checks.iter().cloned());
            for (k, v) in &o.json.details {
                j.details.insert(k.clone(), v.clone());
            }
        }
        if let (Some(same), Some(f)) = (body_matches, file) {
            j.check(
                "response.body-matches-file",
                same,
                format!("response body is the bytes of {f}"),
            );
        }
        if let Some(f) = &media_warning {
            j.warn(f.code, f.message.clone());
        }
        match &served {
            Ok(v) if !v.not_checked.is_empty() => j.detail("not_checked", &v.not_checked),
            Ok(_) => {}
            Err(e) => j.check(e.code(), false, e.to_string()),
        }
        if let Some(d) = &pin_check {
            j.check(d.code, d.passed, d.message.clone());
        }
        j.detail("descriptor_file", file);
        j.detail("checked", &checked);
        j.detail("failed", &failed);
        j.error = None;
        j.settle();
        if j.verified != verified {
            // The JWS keeps its own multi-signature rule; the text and the
            // exit code use `verified`, and so does the JSON.
            j.set_verdict(if verified {
                agentsig::report::Verdict::Verified
            } else {
                agentsig::report::Verdict::NotVerified
            });
            if verified {
                j.error = None;
            }
        }
        super::print_report(&j);
    } else {
        for l in &lines {
            outln!("{l}");
        }
        if verified {
            let note = if file.is_none() {
                "; no descriptor file was compared with the body"
            } else if jws.is_none() {
                "; no detached JWS was found beside it, nor embedded A2A signatures"
            } else {
                ""
            };
            outln!(
                "{}: verified (checked: {}{note})",
                esc(subject),
                esc(&checked.join("; "))
            );
        } else {
            outln!(
                "{}: NOT verified (failed: {})",
                esc(subject),
                esc(&failed.join("; "))
            );
        }
    }
    Ok(if verified {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Check the detached JWS at `jws_path` over `input`; prints nothing.
fn check_jws(
    a: &VerifyArgs,
    input: &[u8],
    jws_path: &str,
    pin: Pin,
) -> Result<JwsOutcome, CliError> {
    if a.jws.is_none() && !std::path::Path::new(jws_path).exists() {
        return Err(CliError::unreadable(format!(
            "{}: not signed: there is no {} beside it; run `agentsig sign {} --key KEY`, or give `--jws` the detached JWS",
            esc(&a.file),
            esc(jws_path),
            esc(&a.file)
        )));
    }
    let jws_bytes = read_input(jws_path)?;
    let jws_text = String::from_utf8(jws_bytes)
        .map_err(|_| CliError::malformed(format!("{jws_path}: not UTF-8")))?;
    let resolver = a.trust.resolver()?;
    let mut policy = JwsPolicy::default();
    if !a.typ.is_empty() {
        policy = policy.expected_typ(a.typ.clone());
    }
    let v = Verifier::builder(resolver)
        .algorithms(a.trust.allow_list())
        .strict_low_s(a.trust.strict_low_s)
        .jws(policy)
        .key_headers(if a.ignore_key_headers {
            KeyHeaderPolicy::Ignore
        } else {
            KeyHeaderPolicy::Refuse
        })
        .build();
    let report = match v.verify_descriptor(input, &jws_text) {
        Ok(r) => r,
        Err(DescriptorError::NotVerified(r)) => *r,
        Err(DescriptorError::TooLarge(n)) => {
            return Err(CliError::usage(format!(
                "{}: {n} bytes is too large",
                a.file
            )))
        }
        Err(DescriptorError::Json(e)) => {
            return Err(CliError::malformed(format!("{}: {e}", a.file)))
        }
        Err(DescriptorError::Jws(jws::JwsError::PayloadDiffers)) => {
            let reason = "the JWS carries a payload that differs from the descriptor";
            let mut rep = Report::error("verify", Some(&a.file), "payload-differs", reason);
            rep.set_verdict(agentsig::report::Verdict::NotVerified);
            return Ok(JwsOutcome {
                verified: false,
                json: rep,
                lines: vec![format!("{jws_path}: {reason}")],
            });
        }
        Err(e) => return Err(CliError::malformed(format!("{jws_path}: {e}"))),
    };
    let mut verified = report.verified();
    let mut json = Report::from_jws("verify", Some(&a.file), &report.jws);
    json.detail("jws", jws_path);
    json.detail("canonical_sha256", report.canonical_sha256());
    let mut lines = Vec::new();
    if let (Some(url), true, Pin::Decide) = (&a.pin_store, verified, pin) {
        let (ok, code, message) = check_pins(url, input, &report.jws)?;
        json.check(code, ok, message.clone());
        lines.push(message);
        if !ok {
            verified = false;
            json.set_verdict(agentsig::report::Verdict::NotVerified);
        }
    }
    for s in &report.jws.signatures {
        lines.push(signature_line(s));
    }
    lines.push(format!("canonical sha256 {}", report.canonical_sha256()));
    Ok(JwsOutcome {
        verified,
        json,
        lines,
    })
}
