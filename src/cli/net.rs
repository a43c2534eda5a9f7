//! `agentsig verify https://...` and `agentsig resolve agent://...`
//! (feature `net`): thin wrappers over [`agentsig::net`].

use super::args::FetchArgs;
use super::{CliError, CliResult, TrustedKeyArgs};
use agentsig::net::resolve::{resolve_agent, AgentResolveError, Resolution};
use agentsig::net::verify::{verify_url, UrlVerified, UrlVerifyOptions};
use agentsig::net::Fetcher;
use agentsig::report::{Report, Verdict};
use std::process::ExitCode;
use std::sync::Arc;

/// Options of every command that fetches and verifies.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct NetArgs {
    #[command(flatten)]
    pub fetch: FetchArgs,
    /// Keep fetched JWK Sets and the unknown-kid refetch cooldown in DIR between runs (same
    /// freshness rules; no-store never written). DIR must be private: it is created mode
    /// 0700, and refused (exit 2) when owned by another user or group/world-writable;
    /// entries that are symlinks, not ours or group/world-writable are ignored.
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<String>,
    /// Refuse a document no trusted key vouches for (verdict unsigned, exit 1). It is the
    /// default of `verify`; `resolve` without it returns an unsigned descriptor labelled
    /// unsigned (exit 0). For an AI Catalog: fail unless every entry carries a verified Trust
    /// Manifest.
    #[arg(long, conflicts_with = "allow_unsigned")]
    pub require_signed: bool,
    /// Accept a document no trusted key vouches for (neither an RFC 9421 signature, nor a
    /// detached JWS (URL.jws), nor an A2A card's embedded signatures, nor a verified Trust
    /// Manifest for every catalog entry; or only signatures by keys that are not trusted): exit
    /// 0 with the verdict unsigned, never verified (draft-narvaneni-agent-uri-03 section 10.3
    /// lets a policy accept unsigned descriptors). By default `verify` refuses it (exit 1).
    #[arg(long)]
    pub allow_unsigned: bool,
    /// Fail unless the response carries an RFC 9421 signature that verifies with a trusted key,
    /// whatever else verifies. By default a URL is verified when at least one of its signatures
    /// (response signature, URL.jws, A2A card signatures) verifies and none is invalid; one by a
    /// key that is not trusted is not checked (docs/report.md, "One verdict rule").
    #[arg(long)]
    pub require_response_signature: bool,
    /// A2A Agent Card: use a card signature's jku header as a key source, only when it is an
    /// https URL on the card's own origin (fetched through the SSRF guard; a cross-origin jku
    /// is refused). Off by default: card keys come from --key/--jwks.
    #[arg(long)]
    pub follow_jku: bool,
}

impl NetArgs {
    fn fetcher(&self) -> Result<Fetcher, CliError> {
        self.fetch.fetcher()
    }
}

/// `agentsig resolve`.
#[derive(clap::Args)]
pub struct ResolveArgs {
    /// The agent URI: agent://host[:port]/name[/...], agent://did%3Aweb%3A.../name, agent+https://...
    pub uri: String,
    #[command(flatten)]
    pub net: NetArgs,
    #[command(flatten)]
    pub trust: TrustedKeyArgs,
    /// Largest age of an RFC 9421 signature's created: DURATION (seconds, or 5m, 12h, 30d);
    /// default: none (expires is enforced).
    #[arg(long, value_parser = super::args::parse_duration, value_name = "DURATION")]
    pub max_age: Option<u64>,
    /// Key continuity: pin the resolved descriptor's key on first sight and fail with
    /// pin.key-changed when it later verifies with another key, as `verify --pin-store` does.
    /// STORE is PATH or file:PATH (one machine), redis[s]://[USER:PASS@]HOST:PORT/DB (a fleet;
    /// rediss: TLS; or redis+cluster://HOST:PORT,..., redis+sentinel://HOST:PORT,.../MASTER, each
    /// with ?wait=N for acknowledged writes: docs/fleet.md), memory:.
    #[arg(long, allow_hyphen_values = true, value_name = "STORE")]
    pub pin_store: Option<String>,
    /// Print one JSON report (agentsig.report/1, docs/report.md) instead of the descriptor,
    /// whatever the outcome.
    #[arg(long)]
    pub json: bool,
}

pub(super) fn options(
    net: &NetArgs,
    trust: &TrustedKeyArgs,
    max_age: Option<u64>,
    now: Option<i64>,
) -> Result<UrlVerifyOptions, CliError> {
    let mut o = UrlVerifyOptions::default();
    o.strict_low_s = trust.strict_low_s;
    o.allow_unsigned = net.allow_unsigned;
    o.require_response_signature = net.require_response_signature;
    o.follow_jku = net.follow_jku;
    if let Some(d) = &net.cache_dir {
        agentsig::net::disk::ensure_private_dir(std::path::Path::new(d))
            .map_err(|e| CliError::usage(format!("--cache-dir: {e}")))?;
        o.discovery = o.discovery.cache_dir(d);
    }
    o.max_age = max_age;
    o.now = now;
    if !trust.alg.is_empty() {
        o.algorithms = Some(trust.allow_list());
    }
    if !trust.is_empty() {
        o.keys = Some(Arc::new(trust.resolver()?));
    }
    Ok(o)
}

/// The text line of a URL that did not verify, its verdict first.
pub fn failure_text(subject: &str, verdict: Verdict, message: &str) -> String {
    match verdict {
        Verdict::Unsigned => format!(
            "{subject}: NOT verified: unsigned: {message} (--allow-unsigned accepts it as unsigned)"
        ),
        Verdict::Unavailable => format!("{subject}: NOT verified: unavailable: {message}"),
        _ => format!("{subject}: NOT verified: {message}"),
    }
}

fn url_failure(
    command: &str,
    subject: &str,
    e: &agentsig::net::verify::UrlVerifyError,
    json: bool,
) -> CliResult {
    if json {
        super::print_report(&e.report(command, subject));
    } else {
        errln!("{}", failure_text(subject, e.verdict(), &e.to_string()));
    }
    Ok(ExitCode::from(1))
}

fn failure(command: &str, subject: &str, code: &str, message: String, json: bool) -> CliResult {
    if json {
        let mut r = Report::error(command, Some(subject), code, &message);
        r.set_verdict(Verdict::NotVerified);
        super::print_report(&r);
    } else {
        errln!("{subject}: NOT verified: {message}");
    }
    Ok(ExitCode::from(1))
}

fn success(command: &str, subject: &str, v: &UrlVerified, json: bool) -> CliResult {
    if json {
        super::print_report(&v.report(command, subject));
    } else {
        for r in &v.redirects {
            if r.authority_changed {
                errln!(
                    "note: redirected to another authority: {} -> {}",
                    r.from,
                    r.to
                );
            }
        }
        for n in not_checked_notes(v) {
            errln!("{n}");
        }
        if v.signed() {
            errln!("{subject}: verified ({})", checked_text(v));
        } else {
            errln!(
                "{subject}: unsigned, NOT verified: {}; accepted by policy (--allow-unsigned, or resolve without --require-signed)",
                v.unsigned_reason()
            );
        }
        use std::io::Write as _;
        let _ = std::io::stdout().lock().write_all(&v.body);
    }
    Ok(ExitCode::SUCCESS)
}

/// What was verified, for people.
fn checked_text(v: &UrlVerified) -> String {
    v.checked()
        .iter()
        .map(|c| match *c {
            "rfc9421" => "RFC 9421 response signature",
            "jws" => "detached JWS",
            "a2a-card" => "A2A card signatures",
            other => other,
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The options of `verify --response` that `verify URL` takes too.
pub struct Served<'a> {
    pub net: &'a NetArgs,
    pub trust: &'a TrustedKeyArgs,
    pub max_age: Option<u64>,
    pub now: Option<i64>,
    pub pin_store: Option<&'a str>,
}

/// `verify [FILE] --response SAVED.http`: the saved response `m` (served
/// at `name`) and the detached JWS `jws` verified by the library as `verify
/// URL --require-response-signature` verifies a fetched one
/// ([`agentsig::net::Resolver::verify_served`]); keys from --key/--jwks,
/// or discovered as `verify URL` discovers them.
pub fn verify_served(
    o: &Served<'_>,
    name: &str,
    m: &agentsig::httpsig::Message,
    jws: Option<&str>,
) -> Result<Result<UrlVerified, agentsig::net::verify::UrlVerifyError>, CliError> {
    // The pin store is opened before anything is checked: an unusable
    // store is a usage error.
    open_pins(o.pin_store)?;
    let mut opts = options(o.net, o.trust, o.max_age, o.now)?;
    // --response verifies the response signature above all.
    opts.require_response_signature = true;
    let resolver = agentsig::net::Resolver::with_options(o.net.fetcher()?, opts);
    Ok(resolver.verify_served(name, m, jws))
}

/// The key-continuity decision of `--pin-store` on a verified served
/// response, as `verify URL` takes it ([`pin_decision`]).
pub fn served_pin_decision(
    pin_store: Option<&str>,
    v: &UrlVerified,
) -> Result<Option<agentsig::pin::PinDecision>, CliError> {
    Ok(open_pins(pin_store)?.map(|pins| pin_decision(&pins, v)))
}

/// One note per signature that no trusted key matches (it counts neither
/// way under the one verdict rule).
pub fn not_checked_notes(v: &UrlVerified) -> Vec<String> {
    v.not_checked
        .iter()
        .map(|n| {
            format!(
                "note: {} not checked: no trusted key matches it (it counts neither way; --require-response-signature demands the response signature)",
                match *n {
                    "rfc9421" => "the RFC 9421 response signature",
                    "jws" => "the detached JWS",
                    _ => "the A2A card signatures",
                }
            )
        })
        .collect()
}

/// `agentsig verify https://...`. A URL that serves an AI Catalog (by its
/// media type or content, [`agentsig::net::verify::UrlVerifyError::Catalog`])
/// is verified as one by `as_catalog`, as `verify FILE` verifies a catalog
/// file.
#[allow(clippy::too_many_arguments)]
pub fn verify_url_cmd(
    url: &str,
    net: &NetArgs,
    trust: &TrustedKeyArgs,
    max_age: Option<u64>,
    now: Option<i64>,
    json: bool,
    pin_store: Option<&str>,
    as_catalog: &dyn Fn() -> CliResult,
) -> CliResult {
    let pins = open_pins(pin_store)?;
    let f = net.fetcher()?;
    let o = options(net, trust, max_age, now)?;
    match verify_url(&f, url, &o) {
        Ok(v) => success_pinned("verify", url, &v, json, pins.as_ref()),
        Err(agentsig::net::verify::UrlVerifyError::Catalog { .. }) => as_catalog(),
        Err(e) => url_failure("verify", url, &e, json),
    }
}

/// The pin store of `--pin-store`, opened before anything is fetched: an
/// unusable store is a usage error, whatever the network says.
fn open_pins(pin_store: Option<&str>) -> Result<Option<agentsig::pin::Pins>, CliError> {
    pin_store
        .map(|s| {
            agentsig::pin::open_pin_store(s)
                .map(agentsig::pin::Pins::new)
                .map_err(|e| CliError::usage(e.to_string()))
        })
        .transpose()
}

/// [`success`], after the key-continuity decision when a pin store is
/// given: a refused decision is exit 1 with its code.
fn success_pinned(
    command: &str,
    subject: &str,
    v: &UrlVerified,
    json: bool,
    pins: Option<&agentsig::pin::Pins>,
) -> CliResult {
    let Some(pins) = pins else {
        return success(command, subject, v, json);
    };
    let d = pin_decision(pins, v);
    if d.passed {
        if json {
            let mut r = v.report(command, subject);
            r.check(d.code, true, d.message);
            super::print_report(&r);
            return Ok(ExitCode::SUCCESS);
        }
        errln!("{subject}: {}", d.message);
        return success(command, subject, v, json);
    }
    if json {
        let mut r = v.report(command, subject);
        r.check(d.code, false, d.message.clone());
        r.set_verdict(Verdict::NotVerified);
        r.error = Some(agentsig::report::Problem::new(d.code, d.message));
        super::print_report(&r);
    } else {
        errln!("{subject}: NOT verified: {}", d.message);
    }
    Ok(ExitCode::from(1))
}

/// Key continuity for a fetched descriptor or card (the rule is the
/// library's, [`agentsig::pin::Pins::decide`]): the thumbprints of the keys
/// that verified its signatures (RFC 9421 response signature, detached JWS,
/// embedded A2A card signatures), under the identity of what those
/// signatures cover (for a card, its signed normal form only, so that an
/// uncovered member cannot choose the pin). An unsigned descriptor has no
/// key to pin and fails (`pin.no-key`).
fn pin_decision(pins: &agentsig::pin::Pins, v: &UrlVerified) -> agentsig::pin::PinDecision {
    let mut tps: Vec<&str> = Vec::new();
    if let Some(h) = &v.http_signature {
        tps.extend(
            h.results
                .iter()
                .filter(|l| l.is_valid())
                .filter_map(|l| l.key_thumbprint.as_deref()),
        );
    }
    if let Some(j) = &v.jws {
        tps.extend(j.jws.valid_thumbprints());
    }
    let identity = match &v.card {
        Some(card) => {
            for r in card.signatures.iter().flatten() {
                tps.extend(r.valid_thumbprints());
            }
            serde_json::to_vec(card.signed_card())
                .ok()
                .and_then(|b| agentsig::descriptor::identity(&b))
        }
        None => agentsig::descriptor::identity(&v.body),
    };
    pins.decide(identity.as_deref(), &tps)
}

/// `agentsig resolve agent://...`.
pub fn resolve(a: ResolveArgs) -> CliResult {
    let pins = open_pins(a.pin_store.as_deref())?;
    let f = a.net.fetcher()?;
    let mut o = options(&a.net, &a.trust, a.max_age, None)?;
    // `resolve` returns an unsigned descriptor labelled `unsigned` unless
    // --require-signed (draft-narvaneni-agent-uri-03 section 10.3).
    o.allow_unsigned = !a.net.require_signed;
    match resolve_agent(&f, &a.uri, &o) {
        Ok(Resolution::Descriptor { verified, .. }) => {
            success_pinned("resolve", &a.uri, &verified, a.json, pins.as_ref())
        }
        Ok(Resolution::Direct { .. }) if pins.is_some() => failure(
            "resolve",
            &a.uri,
            "pin.no-key",
            "an explicit agent+https binding has no descriptor and no signature: no key to pin"
                .into(),
            a.json,
        ),
        Ok(Resolution::Direct { endpoint }) => {
            if a.json {
                let mut r = Report::error("resolve", Some(&a.uri), "", "");
                r.error = None;
                r.detail("direct_endpoint", &endpoint);
                r.check(
                    "resolve.direct-binding",
                    true,
                    "no registry; explicit agent+https binding",
                );
                r.set_verdict(Verdict::Verified);
                super::print_report(&r);
            } else {
                errln!("{}: no registry; invoke directly (no descriptor)", a.uri);
                outln!("{endpoint}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Ok(_) => Err(CliError::failed("unsupported resolution result")),
        Err(e @ AgentResolveError::BadUri(_)) => Err(CliError::usage(e.to_string())),
        Err(AgentResolveError::Verification(e)) => url_failure("resolve", &a.uri, &e, a.json),
        Err(e) => failure("resolve", &a.uri, e.code(), e.to_string(), a.json),
    }
}
