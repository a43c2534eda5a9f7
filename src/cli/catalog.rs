//! `agentsig sign CATALOG` and `agentsig verify CATALOG` for AI Catalogs:
//! thin wrappers over [`agentsig::catalog`] (signing Trust Manifests,
//! verifying a catalog document) and, with the `net` feature, over
//! [`agentsig::net::catalog`] (keys resolved from each manifest identity).

use super::{CliError, CliResult, TrustedKeyArgs};
use agentsig::catalog::{self, CatalogOptions, CatalogReport, SignCatalogError, SignTarget};
use agentsig::report::Report;
use agentsig::verifier::Verifier;
use std::process::ExitCode;

fn esc(s: &str) -> std::borrow::Cow<'_, str> {
    agentsig::text::escape_controls(s)
}

/// Which manifests `sign` signs, from `--entry`, `--version` and `--host`.
pub fn target(entry: Option<&str>, version: Option<&str>, host: bool) -> SignTarget {
    match (entry, host) {
        (_, true) => SignTarget::Host,
        (Some(id), false) => SignTarget::Entry {
            identifier: id.to_owned(),
            version: version.map(str::to_owned),
        },
        (None, false) => SignTarget::Every,
    }
}

/// What `sign` does to a catalog: the file, where to write it, which
/// manifests, and the local files declared digests are filled from.
pub struct SignCatalog<'a> {
    /// The catalog file named (`-`: standard input).
    pub file: &'a str,
    /// `--out` (default: in place; `-` for standard output).
    pub out: Option<&'a str>,
    /// `--entry`/`--version`/`--host`.
    pub target: SignTarget,
    /// `--digest-from` mappings.
    pub digest_from: &'a [String],
}

/// Sign the Trust Manifests `s.target` names in the catalog `input` with
/// `key`, after filling declared digests from `s.digest_from`, and write
/// the catalog.
pub fn sign(
    s: &SignCatalog<'_>,
    input: &[u8],
    keys: &[agentsig::SigningKey],
    mut rep: Report,
    json: bool,
) -> CliResult {
    let (file, out, target, digest_from) = (s.file, s.out, &s.target, s.digest_from);
    let [key] = keys else {
        return Err(CliError::usage(
            "a Trust Manifest signature is one compact JWS: give exactly one --key",
        ));
    };
    let mut doc = agentsig::json::parse_strict(input)
        .map_err(|e| CliError::malformed(format!("{}: {e}", esc(file))))?;
    let refused = |e: SignCatalogError| match e {
        SignCatalogError::Manifest(m) => CliError::malformed(format!("{}: {m}", esc(file))),
        other => CliError::usage(format!("{}: {other}", esc(file))),
    };
    if !digest_from.is_empty() {
        let mut files = catalog::LocalFiles::new();
        digest_from.iter().for_each(|d| files.add(d));
        let filled = catalog::fill_digests(&mut doc, target, &files).map_err(refused)?;
        if !json {
            for f in &filled {
                errln!(
                    "{}: {} = {} ({} bytes, {})",
                    esc(file),
                    f.pointer,
                    f.digest,
                    f.size,
                    f.file.as_ref().map_or_else(
                        || "data: URI".to_owned(),
                        |p| esc(&p.display().to_string()).into_owned()
                    )
                );
            }
        }
        rep.detail("digests_filled", &filled);
    }
    let signed = catalog::sign_catalog(&mut doc, key, target).map_err(refused)?;
    let mut text = serde_json::to_string_pretty(&doc)
        .map_err(|e| CliError::malformed(format!("{}: {e}", esc(file))))?;
    text.push('\n');
    let out = out.unwrap_or(file);
    // The detached JWS over the whole document (draft-narvaneni-agent-uri-03
    // section 10.3, the descriptors' form), checked with the keys of
    // host.identifier: written whenever the catalog is, so a `.jws` beside
    // it never goes stale; none when no host.identifier names whose keys
    // would check it.
    let has_host = doc
        .get("host")
        .and_then(|h| h.get("identifier"))
        .is_some_and(serde_json::Value::is_string);
    let catalog_jws = if has_host {
        let signed = agentsig::descriptor::sign(text.as_bytes(), key)
            .map_err(|e| CliError::usage(format!("{}: {e}", esc(file))))?;
        Some(signed.jws)
    } else {
        None
    };
    let jws_file = format!("{out}.jws");
    if out == "-" && json {
        rep.detail("catalog", &doc);
        if let Some(j) = &catalog_jws {
            rep.detail("catalog_jws", j);
        }
    } else if out == "-" {
        out!("{text}");
    } else {
        std::fs::write(out, text.as_bytes())
            .map_err(|e| CliError::unwritable(format!("{out}: {e}")))?;
        rep.detail("catalog_file", out);
        if let Some(j) = &catalog_jws {
            std::fs::write(&jws_file, format!("{j}\n"))
                .map_err(|e| CliError::unwritable(format!("{jws_file}: {e}")))?;
            rep.detail("jws_file", &jws_file);
        } else if std::path::Path::new(&jws_file).exists() {
            // A JWS over the previous document would fail the catalog.
            std::fs::remove_file(&jws_file)
                .map_err(|e| CliError::unwritable(format!("{jws_file}: {e}")))?;
        }
    }
    rep.detail("manifests_signed", &signed);
    if json {
        super::print_report(&rep);
    } else {
        errln!(
            "{}: signed {} Trust Manifest(s) ({}) with {} kid {}{}",
            esc(file),
            signed.len(),
            signed.join(", "),
            key.algorithm().jose_name(),
            esc(&key.kid_or_thumbprint()),
            match (out, &catalog_jws) {
                ("-", _) => String::new(),
                (_, Some(_)) => format!(
                    "; wrote {} and its detached JWS {}",
                    esc(out),
                    esc(&jws_file)
                ),
                _ => format!("; wrote {}", esc(out)),
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// How `verify` finds the keys of a catalog's manifests.
pub struct VerifyCatalog<'a> {
    /// The file named, for messages and the report.
    pub file: &'a str,
    /// `--key`/`--jwks`/`--alg`: when keys are given they are trusted for
    /// every identity; without them each identity's keys are resolved.
    pub trust: &'a TrustedKeyArgs,
    /// `--typ`.
    pub typ: &'a [String],
    /// `--require-signed`.
    pub require_signed: bool,
    /// `--allow-unsigned`: a catalog some entry of which no trusted key
    /// vouches for (nothing failed) is accepted, verdict `unsigned`.
    pub allow_unsigned: bool,
    /// `--ignore-key-headers`: a manifest signature's jku/jwk/x5u/x5c/x5t
    /// header is ignored instead of refusing the signature.
    pub ignore_key_headers: bool,
    /// The `verify` options given that no catalog can honour (the flag
    /// and why): a catalog with any of them is refused, exit 2
    /// ([`refuse_unsupported`]).
    pub unsupported: Vec<(&'static str, &'static str)>,
    /// The catalog file's detached JWS (`--jws`, or `FILE.jws` beside it).
    pub catalog_jws: Option<String>,
    /// `--json`.
    pub json: bool,
    /// The fetcher for resolving identities' keys.
    #[cfg(feature = "net")]
    pub fetcher: Option<agentsig::net::fetch::Fetcher>,
}

/// A usage error (exit 2) naming each option of
/// [`VerifyCatalog::unsupported`] and why a catalog cannot honour it;
/// never a verdict computed without it.
pub fn refuse_unsupported(v: &VerifyCatalog<'_>) -> Result<(), CliError> {
    if v.unsupported.is_empty() {
        return Ok(());
    }
    let why: Vec<String> = v
        .unsupported
        .iter()
        .map(|(flag, why)| format!("{flag}: {why}"))
        .collect();
    Err(CliError::usage(format!(
        "{} is an AI Catalog, and these options do not apply to one (docs/catalog.md): {}",
        esc(v.file),
        why.join("; ")
    )))
}

/// Fetch the catalog at `url`, its nested catalogs and cards, and verify
/// them ([`agentsig::net::catalog::verify_catalog_url`]).
#[cfg(feature = "net")]
pub fn verify_url(v: &VerifyCatalog<'_>, url: &str) -> CliResult {
    refuse_unsupported(v)?;
    match fetch_and_verify(v, url)? {
        Ok(code) => Ok(code),
        Err(e) => Err(unchecked(url, &e)),
    }
}

/// A catalog URL that could not be checked: exit 1 with the library's code
/// and verdict (`unavailable` when the catalog could not be fetched, as for
/// a descriptor; [`agentsig::net::catalog::CatalogUrlError::verdict`]).
#[cfg(feature = "net")]
fn unchecked(url: &str, e: &agentsig::net::catalog::CatalogUrlError) -> CliError {
    CliError::failed(format!("{}: {e}", esc(url)))
        .with_kind(e.code())
        .with_verdict(e.verdict())
}

/// `verify https://HOST`: the host's well-known catalog `wk` verified as
/// [`verify_url`] does, or `None` when the host answers 404 or 410 there
/// (no catalog: the caller then verifies the origin URL as a descriptor,
/// as before catalogs existed; docs/catalog.md).
#[cfg(feature = "net")]
pub fn verify_well_known(v: &VerifyCatalog<'_>, wk: &str) -> Result<Option<ExitCode>, CliError> {
    match fetch_and_verify(v, wk)? {
        Ok(code) => Ok(Some(code)),
        Err(e) => {
            if !v.json {
                errln!(
                    "note: {}: no AI Catalog there ({e}); verifying the URL itself as a descriptor",
                    esc(wk)
                );
            }
            Ok(None)
        }
    }
}

/// Fetch the catalog at `url` and verify it: the exit code, or
/// [`agentsig::net::catalog::CatalogUrlError::NotServed`] when nothing is
/// published there.
#[cfg(feature = "net")]
fn fetch_and_verify(
    v: &VerifyCatalog<'_>,
    url: &str,
) -> Result<Result<ExitCode, agentsig::net::catalog::CatalogUrlError>, CliError> {
    use agentsig::net::catalog::{verify_catalog_url, CatalogKeys, CatalogUrlError};
    let Some(fetcher) = &v.fetcher else {
        return Err(CliError::usage(
            "fetching a catalog needs the fetch options",
        ));
    };
    let (base, keys) = if v.trust.is_empty() {
        (
            verifier(v, agentsig::trust::StaticKeys::new()),
            CatalogKeys::Resolved,
        )
    } else {
        (verifier(v, v.trust.resolver()?), CatalogKeys::Given)
    };
    let opts = CatalogOptions::default().require_signed(v.require_signed);
    let report = match verify_catalog_url(&base, keys, fetcher, url, &opts) {
        // An origin is known to name a catalog only now (its well-known
        // URL answered one): the options it cannot honour are refused
        // here, before any verdict.
        Ok(r) => {
            refuse_unsupported(v)?;
            r
        }
        Err(e @ CatalogUrlError::NotServed(_)) => return Ok(Err(e)),
        Err(e @ CatalogUrlError::Catalog(_)) => {
            return Err(CliError::malformed(format!("{}: {e}", esc(url))))
        }
        Err(e) => return Err(unchecked(url, &e)),
    };
    finish(v, &report).map(Ok)
}

/// A verifier over `keys` with the command's algorithms, low-S and `typ`;
/// `did:key` and `did:jwk` identities keep their own key
/// ([`Verifier::verify_catalog`] answers them with the key they encode).
fn verifier(v: &VerifyCatalog<'_>, keys: agentsig::trust::StaticKeys) -> Verifier {
    // A local trial's --allow-private-networks also accepts the cards'
    // endpoints on those hosts (Verifier::allow_internal_endpoints).
    #[cfg(feature = "net")]
    let local = v
        .fetcher
        .as_ref()
        .is_some_and(|f| f.policy().allow_private_networks);
    #[cfg(not(feature = "net"))]
    let local = false;
    Verifier::builder(keys)
        .allow_internal_endpoints(local)
        .algorithms(v.trust.allow_list())
        .strict_low_s(v.trust.strict_low_s)
        .jws(policy(v.typ))
        .key_headers(if v.ignore_key_headers {
            agentsig::jws::KeyHeaderPolicy::Ignore
        } else {
            agentsig::jws::KeyHeaderPolicy::Refuse
        })
        .build()
}

fn policy(typ: &[String]) -> agentsig::jws::JwsPolicy {
    let p = agentsig::jws::JwsPolicy::default();
    if typ.is_empty() {
        p
    } else {
        p.expected_typ(typ.to_vec())
    }
}

fn finish(v: &VerifyCatalog<'_>, report: &CatalogReport) -> CliResult {
    let rep = to_report(v.file, report);
    if v.json {
        super::print_report(&rep);
    } else {
        print_lines(v.file, report);
    }
    // `unsigned` is accepted only by --allow-unsigned (docs/report.md).
    Ok(ExitCode::from(rep.verdict.exit_code(v.allow_unsigned)))
}

/// Verify a catalog document and print one line per entry (or the report).
pub fn verify(v: &VerifyCatalog<'_>, input: &[u8]) -> CliResult {
    refuse_unsupported(v)?;
    let opts = CatalogOptions::default()
        .require_signed(v.require_signed)
        .catalog_jws(v.catalog_jws.clone());
    let result = if v.trust.is_empty() {
        resolved(v, input, &opts)?
    } else {
        verifier(v, v.trust.resolver()?).verify_catalog(input, &opts)
    };
    let report = result.map_err(|e| CliError::malformed(format!("{}: {e}", esc(v.file))))?;
    finish(v, &report)
}

#[cfg(feature = "net")]
fn resolved(
    v: &VerifyCatalog<'_>,
    input: &[u8],
    opts: &CatalogOptions,
) -> Result<Result<CatalogReport, catalog::CatalogError>, CliError> {
    let Some(fetcher) = &v.fetcher else {
        return Err(CliError::usage("no keys: give --key or --jwks"));
    };
    let base = verifier(v, agentsig::trust::StaticKeys::new());
    Ok(agentsig::net::catalog::verify_catalog_resolved(
        &base, fetcher, input, opts,
    ))
}

#[cfg(not(feature = "net"))]
fn resolved(
    _v: &VerifyCatalog<'_>,
    _input: &[u8],
    _opts: &CatalogOptions,
) -> Result<Result<CatalogReport, catalog::CatalogError>, CliError> {
    Err(CliError::usage(
        "resolving Trust Manifest keys needs the net feature: give --key or --jwks",
    ))
}

/// The one report shape ([`Report::from_catalog`]).
fn to_report(file: &str, r: &CatalogReport) -> Report {
    Report::from_catalog("verify", Some(file), r)
}

fn print_lines(file: &str, r: &CatalogReport) {
    if let Some(u) = r.url.as_deref().filter(|u| *u != file) {
        errln!(
            "{}: the catalog checked is the one served at {}",
            esc(file),
            esc(u)
        );
    }
    for f in &r.lint {
        errln!(
            "{}: {} {} at {}: {}",
            esc(file),
            f.severity,
            f.code,
            f.pointer,
            esc(&f.message)
        );
    }
    if let Some(h) = &r.host {
        errln!(
            "{}: host Trust Manifest: {}: {}",
            esc(file),
            h.status.as_str(),
            esc(&h.message)
        );
    }
    if let Some(h) = &r.host_identity {
        errln!(
            "{}: host identity: {}: {}",
            esc(file),
            h.status.as_str(),
            esc(&h.message)
        );
    }
    for e in &r.entries {
        errln!(
            "{}: {} {}: artifact {}: {}; manifest {}: {}; binding {}",
            esc(file),
            e.pointer,
            esc(e.identifier.as_deref().unwrap_or("?")),
            e.artifact.status.as_str(),
            esc(&e.artifact.message),
            e.manifest.status.as_str(),
            esc(&e.manifest.message),
            e.binding.as_str()
        );
    }
    if let Some(s) = &r.catalog_signature {
        errln!(
            "{}: catalog signature: {}: {}",
            esc(file),
            s.status.as_str(),
            esc(&s.message)
        );
    }
    outln!("{}", summary(file, r));
}

/// The one summary line: `verified` only when the catalog verified and
/// every artifact is verified or bound ([`CatalogReport::all_bound`]);
/// `unsigned` when nothing failed but some artifact is unbound (no trusted
/// key vouches for its bytes: refused unless `--allow-unsigned`), with how
/// many; otherwise how many entries are bound, unbound and failed, and why.
fn summary(file: &str, r: &CatalogReport) -> String {
    let c = r.counts();
    if r.all_bound() {
        format!(
            "{}: verified ({} of {} entries)",
            esc(file),
            c.bound,
            c.total
        )
    } else if let Some(e) = agentsig::report::catalog_unvouched(r) {
        let why = r
            .first_failure()
            .unwrap_or_else(|| format!("no trusted key vouches for {}", e.pointer));
        let hint = if r.require_signed {
            ""
        } else {
            " (--allow-unsigned accepts it as unsigned)"
        };
        format!(
            "{}: unsigned, NOT verified: {} of {} entries unbound (nothing a trusted key signed covers their artifact), nothing failed: {}{hint}",
            esc(file),
            c.unbound,
            c.total,
            esc(&why)
        )
    } else {
        format!(
            "{}: NOT verified ({} of {} entries verified or bound, {} unbound, {} failed): {}",
            esc(file),
            c.bound,
            c.total,
            c.unbound,
            c.failed,
            esc(&r.first_failure().unwrap_or_default())
        )
    }
}
