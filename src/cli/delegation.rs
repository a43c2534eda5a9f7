//! `agentsig delegation audit | mint | exchange` (RFC 8693 delegation chains).

use super::TrustedKeyArgs;
use super::{load_signing, parse_alg, read_input, CliError, CliResult};
use agentsig::clock::{FixedClock, SystemClock};
use agentsig::delegation::mint::{self, ActorSpec, ExchangeRequest, MintRequest};
use agentsig::delegation::{self, report, AuditPolicy, ScopeMode, ScopePolicy, Severity};
use agentsig::jwt::JwtPolicy;
use agentsig::trust::{KeyResolver, KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::Algorithm;
use clap::{Args, Subcommand};
use std::io::Write;
use std::process::ExitCode;

/// Write text to standard output; a closed pipe (`| head`) is not a panic.
/// Control and bidi characters from the (unverified) tokens are escaped.
fn emit(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(agentsig::text::escape_controls_keep_newlines(text).as_bytes());
    let _ = out.flush();
}

#[derive(Subcommand)]
pub enum DelegationCommand {
    /// Audit one delegation token, or a bundle of tokens one per hop (subject token first).
    Audit(Box<AuditArgs>),
    /// Mint a delegation token with nested act and scope, signed with a local key.
    Mint(Box<MintArgs>),
    /// Local RFC 8693 token exchange: subject token + new actor -> narrowed token.
    Exchange(Box<ExchangeArgs>),
}

impl DelegationCommand {
    /// The token file(s), for the report's `subject`.
    pub fn subject(&self) -> Option<String> {
        match self {
            DelegationCommand::Audit(a) => Some(a.tokens.join(" ")),
            DelegationCommand::Mint(_) => None,
            DelegationCommand::Exchange(a) => Some(a.subject_token.clone()),
        }
    }
}

pub fn run(c: DelegationCommand) -> CliResult {
    match c {
        DelegationCommand::Audit(a) => audit(*a),
        DelegationCommand::Mint(a) => mint_cmd(*a),
        DelegationCommand::Exchange(a) => exchange(*a),
    }
}

#[derive(Args)]
pub struct TrustArgs {
    /// Trusted keys. With --issuer, each --key/--jwks is bound to one issuer, written
    /// ISSUER=FILE (RFC 8725 3.8): a token's key is looked up only among its own iss's keys.
    /// A bare FILE is allowed only with exactly one --issuer, and is bound to it.
    #[command(flatten)]
    keys: TrustedKeyArgs,
    /// Accepted issuer, compared exactly (repeatable). Without it iss is not checked (warning).
    #[arg(long, allow_hyphen_values = true, value_name = "ISS")]
    issuer: Vec<String>,
    /// Accepted typ (repeatable; RFC 7515 4.1.9 comparison). Default at+jwt (RFC 9068).
    #[arg(long, allow_hyphen_values = true, value_name = "TYP")]
    typ: Vec<String>,
    /// Accept any typ, or none.
    #[arg(long, conflicts_with = "typ")]
    any_typ: bool,
    /// Tolerated clock skew: DURATION (seconds, or 5m).
    #[arg(
        long,
        value_parser = super::args::parse_duration,
        default_value = "60",
        value_name = "DURATION"
    )]
    skew: u64,
    /// Verify as if the time were this (Unix seconds); default: now.
    #[arg(long, allow_hyphen_values = true, value_name = "UNIX-SECONDS")]
    now: Option<i64>,
}

impl TrustArgs {
    /// The trusted keys. Without --issuer: one flat set (iss is then not
    /// checked, and the audit warns). With --issuer: keys bound per issuer
    /// ([`agentsig::trust::PerIssuer`]), so that a token naming issuer A is
    /// never accepted on issuer B's key (RFC 8725 3.8).
    fn resolver(&self) -> Result<Box<dyn KeyResolver>, CliError> {
        if self.issuer.is_empty() {
            return Ok(Box::new(self.keys.resolver()?));
        }
        let mut per: Vec<(String, Vec<String>, Vec<String>)> = self
            .issuer
            .iter()
            .map(|i| (i.clone(), Vec::new(), Vec::new()))
            .collect();
        for (specs, is_jwks) in [(&self.keys.key, false), (&self.keys.jwks, true)] {
            for spec in specs {
                // The binding rule is the library's (RFC 8725 section 3.8).
                let (iss, src) = match agentsig::trust::bind_source(spec, &self.issuer) {
                    Ok((i, s)) => (i.to_owned(), s.to_owned()),
                    Err(_) => {
                        return Err(CliError::usage(format!(
                            "{}: with several --issuer, bind each key source to its issuer: {} ISSUER={spec} (ISSUER one of the --issuer values)",
                            agentsig::text::quoted(spec),
                            if is_jwks { "--jwks" } else { "--key" },
                        )))
                    }
                };
                if let Some(e) = per.iter_mut().find(|e| e.0 == iss) {
                    if is_jwks {
                        e.2.push(src);
                    } else {
                        e.1.push(src);
                    }
                }
            }
        }
        let mut r = agentsig::trust::PerIssuer::new();
        let mut any = false;
        for (iss, keys, jwks) in per {
            if keys.is_empty() && jwks.is_empty() {
                continue;
            }
            r.insert(iss, super::trusted_keys(&keys, &jwks, &self.keys.alg)?);
            any = true;
        }
        if !any {
            return Err(CliError::usage(
                "no usable verification key: give --key PUBLIC-KEY or --jwks JWKS (nothing verified is never a success)",
            ));
        }
        Ok(Box::new(r))
    }

    fn jwt_policy(&self, audience: Option<String>) -> JwtPolicy {
        let mut p = JwtPolicy::delegation();
        p.expected_typ = if self.any_typ {
            None
        } else if self.typ.is_empty() {
            Some(vec![delegation::DEFAULT_TYP.into()])
        } else {
            Some(self.typ.clone())
        };
        p.issuers = (!self.issuer.is_empty()).then(|| self.issuer.clone());
        p.audience = audience;
        p
    }

    /// The verifier: keys bound to their issuers, the allow-list, the JWT
    /// policy, skew and clock.
    fn verifier(&self, resolver: Box<dyn KeyResolver>, jwt: JwtPolicy) -> Verifier {
        let b = Verifier::builder(resolver)
            .algorithms(self.keys.allow_list())
            .strict_low_s(self.keys.strict_low_s)
            .skew(self.skew)
            .jwt(jwt);
        match self.now {
            Some(t) => b.clock(FixedClock(t)).build(),
            None => b.clock(SystemClock).build(),
        }
    }
}

#[derive(Args)]
pub struct AuditArgs {
    /// Files holding compact JWTs (whitespace-separated, in hop order, subject token first), or
    /// - for standard input.
    #[arg(required = true)]
    tokens: Vec<String>,
    #[command(flatten)]
    trust: TrustArgs,
    /// This verifier's identifier: the last token's aud must contain it.
    #[arg(long, allow_hyphen_values = true)]
    audience: Option<String>,
    /// Most actors in one act chain (hard cap 10).
    #[arg(long, default_value_t = delegation::DEFAULT_MAX_DEPTH, value_name = "N")]
    max_depth: usize,
    /// Scope comparison: set (exact values) or hierarchical (segment prefixes).
    #[arg(
        long,
        default_value = "set",
        value_parser = ["set", "hierarchical"],
        value_name = "MODE"
    )]
    scope_mode: String,
    /// Segment separators for --scope-mode hierarchical.
    #[arg(
        long,
        allow_hyphen_values = true,
        default_value = "./:",
        value_name = "CHARS"
    )]
    scope_separators: String,
    /// Fail a hop whose previous token has no may_act.
    #[arg(long)]
    require_may_act: bool,
    /// Treat an actor equal to the subject as an error (default: warning).
    #[arg(long)]
    deny_subject_as_actor: bool,
    /// Fail on warnings too.
    #[arg(long)]
    deny_warnings: bool,
    /// Store of seen (iss, jti) pairs: a token audited twice is a replay. STORE is PATH or
    /// file:PATH (one machine), redis[s]://[USER:PASS@]HOST:PORT/DB (a fleet; rediss: TLS; or redis+cluster://HOST:PORT,..., redis+sentinel://HOST:PORT,.../MASTER, each with ?wait=N for acknowledged writes: docs/fleet.md), memory:.
    #[arg(long, allow_hyphen_values = true, value_name = "STORE")]
    replay_store: Option<String>,
    /// Print one JSON report (agentsig.report/1, docs/report.md) on standard output, whatever
    /// the outcome.
    #[arg(long)]
    json: bool,
}

fn read_tokens(files: &[String]) -> Result<Vec<String>, CliError> {
    let mut out = Vec::new();
    for f in files {
        let bytes = read_input(f)?;
        let text =
            String::from_utf8(bytes).map_err(|_| CliError::malformed(format!("{f}: not UTF-8")))?;
        out.extend(text.split_whitespace().map(str::to_owned));
        if out.len() > delegation::MAX_HOPS * 4 {
            return Err(CliError::malformed(format!("{f}: too many tokens")));
        }
    }
    if out.is_empty() {
        return Err(CliError::malformed("no token found in the input"));
    }
    Ok(out)
}

fn audit(a: AuditArgs) -> CliResult {
    let tokens = read_tokens(&a.tokens)?;
    let resolver = a.trust.resolver()?;
    if a.max_depth == 0 || a.max_depth > delegation::HARD_MAX_DEPTH {
        return Err(CliError::usage(format!(
            "--max-depth must be 1..={}",
            delegation::HARD_MAX_DEPTH
        )));
    }
    let policy = AuditPolicy::default()
        .max_depth(a.max_depth)
        .scope(ScopePolicy {
            mode: if a.scope_mode == "hierarchical" {
                ScopeMode::Hierarchical
            } else {
                ScopeMode::Set
            },
            separators: a.scope_separators.chars().collect(),
        })
        .require_may_act(a.require_may_act)
        .actor_is_subject(if a.deny_subject_as_actor {
            Severity::Error
        } else {
            Severity::Warning
        })
        .deny_warnings(a.deny_warnings);
    let mut v = a
        .trust
        .verifier(resolver, a.trust.jwt_policy(a.audience.clone()));
    if let Some(p) = &a.replay_store {
        let store =
            agentsig::replay::open_store(p, v.now()).map_err(|e| CliError::usage(e.to_string()))?;
        v = v.to_builder().replay_store(store).build();
    }
    let v = v.to_builder().audit(policy).build();
    let refs: Vec<&str> = tokens.iter().map(String::as_str).collect();
    let r = v
        .audit_delegation(&refs)
        .unwrap_or_else(|e| e.into_report());
    // One verdict for the exit code, the text and the JSON (--deny-warnings turns warnings into a failure).
    let ok = report::verdict(&r, a.deny_warnings);
    if a.json {
        let subject = a.tokens.join(" ");
        let mut j = agentsig::report::Report::from_audit(
            "delegation audit",
            Some(&subject),
            &r,
            a.deny_warnings,
        );
        j.detail("result", if ok { "pass" } else { "fail" });
        super::print_report(&j);
    } else {
        emit(&report::text_with(&r, a.deny_warnings));
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The private key of `delegation exchange`, which also takes the trusted
/// keys of the subject token as --key/--jwks/--alg: its private key is
/// --signing-key and --signing-alg.
#[derive(Args)]
pub struct SignArgs {
    /// Private key to sign the new token with: a path, or env:NAME. (--key names the trusted
    /// keys of the subject token here.)
    #[arg(
        long = "signing-key",
        allow_hyphen_values = true,
        alias = "sign-key",
        value_name = "KEY"
    )]
    signing_key: String,
    /// Algorithm of the private key (RFC 9421 or JOSE name): required for RSA keys, checked
    /// against all others.
    #[arg(long = "signing-alg", value_parser = parse_alg, value_name = "ALG")]
    signing_alg: Option<Algorithm>,
    /// Key id for the JWT header; default: the key's own kid, else its RFC 7638 thumbprint.
    #[arg(long, allow_hyphen_values = true, value_name = "KID")]
    kid: Option<String>,
    /// File holding the passphrase of an encrypted PKCS#8 private key (else
    /// $AGENTSIG_PASSPHRASE).
    #[arg(long, allow_hyphen_values = true, value_name = "FILE")]
    passphrase_file: Option<String>,
}

impl SignArgs {
    fn load(&self) -> Result<agentsig::SigningKey, CliError> {
        load_key(
            &self.signing_key,
            self.signing_alg,
            self.kid.as_deref(),
            self.passphrase_file.as_deref(),
        )
    }
}

/// The private key of `delegation mint`: --key and --alg, as on every
/// command that signs (--signing-key and --signing-alg are hidden aliases
/// kept for scripts written before).
#[derive(Args)]
pub struct MintKeyArgs {
    /// Private key to sign with: a path, or env:NAME.
    #[arg(
        long = "key",
        alias = "signing-key",
        alias = "sign-key",
        allow_hyphen_values = true,
        value_name = "KEY"
    )]
    key: String,
    /// Algorithm of the private key (RFC 9421 or JOSE name): required for RSA keys, checked
    /// against all others.
    #[arg(long = "alg", alias = "signing-alg", value_parser = parse_alg, value_name = "ALG")]
    alg: Option<Algorithm>,
    /// Key id for the JWT header; default: the key's own kid, else its RFC 7638 thumbprint.
    #[arg(long, allow_hyphen_values = true, value_name = "KID")]
    kid: Option<String>,
    /// File holding the passphrase of an encrypted PKCS#8 private key (else
    /// $AGENTSIG_PASSPHRASE).
    #[arg(long, allow_hyphen_values = true, value_name = "FILE")]
    passphrase_file: Option<String>,
}

fn load_key(
    spec: &str,
    alg: Option<Algorithm>,
    kid: Option<&str>,
    pass: Option<&str>,
) -> Result<agentsig::SigningKey, CliError> {
    let k = load_signing(spec, alg, None, pass)?;
    Ok(match kid {
        Some(kid) => k.with_kid(kid.to_owned()),
        None => k,
    })
}

#[derive(Args)]
pub struct MintArgs {
    #[command(flatten)]
    sign: MintKeyArgs,
    /// Issuer.
    #[arg(long, allow_hyphen_values = true)]
    iss: String,
    /// Subject (the user or principal delegating).
    #[arg(long, allow_hyphen_values = true)]
    sub: String,
    /// Audience (repeatable).
    #[arg(long, allow_hyphen_values = true)]
    aud: Vec<String>,
    /// Space-separated scope.
    #[arg(long, allow_hyphen_values = true)]
    scope: Option<String>,
    /// Actor, oldest first; the last one is the current actor (outermost act, RFC 8693 4.1). Repeatable.
    /// SUB or SUB=SCOPE to give the actor its own (non-standard) scope.
    #[arg(long, allow_hyphen_values = true, value_name = "SUB[=SCOPE]")]
    act: Vec<String>,
    /// Who may act next (RFC 8693 4.4 may_act.sub).
    #[arg(long, allow_hyphen_values = true, value_name = "SUB")]
    may_act: Option<String>,
    /// client_id claim.
    #[arg(long, allow_hyphen_values = true, value_name = "ID")]
    client_id: Option<String>,
    /// Lifetime in seconds.
    #[arg(
        long,
        allow_hyphen_values = true,
        default_value_t = 3600,
        value_name = "SECONDS"
    )]
    ttl: i64,
    /// jti (default: random).
    #[arg(long, allow_hyphen_values = true)]
    jti: Option<String>,
    /// typ header.
    #[arg(
        long,
        allow_hyphen_values = true,
        default_value = delegation::DEFAULT_TYP,
        value_name = "TYP"
    )]
    typ: String,
    /// Issue as if the time were this (Unix seconds); default: now.
    #[arg(long, allow_hyphen_values = true, value_name = "UNIX-SECONDS")]
    now: Option<i64>,
    /// Print one JSON report (agentsig.report/1, docs/report.md) instead of the bare token: the
    /// token, kid and algorithm in its details.
    #[arg(long)]
    json: bool,
}

fn actor_spec(s: &str) -> ActorSpec {
    match s.split_once('=') {
        Some((sub, scope)) => ActorSpec {
            sub: sub.to_owned(),
            iss: None,
            scope: Some(scope.to_owned()),
        },
        None => ActorSpec::new(s),
    }
}

fn mint_cmd(a: MintArgs) -> CliResult {
    let key = load_key(
        &a.sign.key,
        a.sign.alg,
        a.sign.kid.as_deref(),
        a.sign.passphrase_file.as_deref(),
    )?;
    let now = a
        .now
        .unwrap_or_else(|| agentsig::clock::Clock::now(&SystemClock));
    if a.ttl <= 0 {
        return Err(CliError::usage("--ttl must be positive"));
    }
    let mut req = MintRequest::new(&a.iss, &a.sub, now, a.ttl);
    req.aud = a.aud.clone();
    req.scope = a.scope.clone();
    req.actors = a.act.iter().map(|s| actor_spec(s)).collect();
    req.may_act = a.may_act.as_deref().map(ActorSpec::new);
    req.client_id = a.client_id.clone();
    req.jti = a.jti.clone();
    req.typ = a.typ.clone();
    let tok = mint::mint(&req, &key).map_err(|e| CliError::usage(e.to_string()))?;
    if a.json {
        let mut r = agentsig::report::Report::done("delegation mint", None);
        if let Some(w) = super::published_test_key(&a.sign.key, &key) {
            r.warn("key.published-test-key", w);
        }
        r.detail("token", &tok);
        r.detail("kid", key.kid_or_thumbprint());
        r.detail("algorithm", key.algorithm().jose_name());
        r.detail("iat", now);
        r.detail("exp", now.saturating_add(a.ttl));
        super::print_report(&r);
    } else {
        emit(&format!("{tok}\n"));
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct ExchangeArgs {
    #[command(flatten)]
    sign: SignArgs,
    /// File holding the subject token, or - for standard input.
    #[arg(long, allow_hyphen_values = true, value_name = "FILE")]
    subject_token: String,
    /// The new actor's identifier (unverified: prefer --actor-token).
    #[arg(
        long,
        allow_hyphen_values = true,
        required_unless_present = "actor_token",
        value_name = "SUB"
    )]
    actor: Option<String>,
    /// File holding the actor token: verified, its sub becomes the new actor.
    #[arg(long, allow_hyphen_values = true, value_name = "FILE")]
    actor_token: Option<String>,
    /// Issuer of the new token.
    #[arg(long, allow_hyphen_values = true)]
    iss: String,
    /// Audience of the new token (repeatable).
    #[arg(long, allow_hyphen_values = true, required = true)]
    aud: Vec<String>,
    /// Requested scope; must be covered by the subject token's (default: the same).
    #[arg(long, allow_hyphen_values = true)]
    scope: Option<String>,
    /// Scope comparison for the request: set or hierarchical.
    #[arg(
        long,
        default_value = "set",
        value_parser = ["set", "hierarchical"],
        value_name = "MODE"
    )]
    scope_mode: String,
    /// Who may act next (RFC 8693 4.4 may_act.sub).
    #[arg(long, allow_hyphen_values = true, value_name = "SUB")]
    may_act: Option<String>,
    /// Lifetime in seconds (capped by the subject token's exp).
    #[arg(
        long,
        allow_hyphen_values = true,
        default_value_t = 900,
        value_name = "SECONDS"
    )]
    ttl: i64,
    /// typ header of the new token. (--typ names the accepted typ of the subject token here.)
    #[arg(
        long,
        allow_hyphen_values = true,
        default_value = delegation::DEFAULT_TYP,
        value_name = "TYP"
    )]
    new_typ: String,
    #[command(flatten)]
    trust: TrustArgs,
    /// Print one JSON report (agentsig.report/1, docs/report.md) instead of the bare token: the
    /// RFC 8693 2.2.1 response (or 2.2.2 error response) as its details.response.
    #[arg(long)]
    json: bool,
}

fn read_one_token(path: &str) -> Result<String, CliError> {
    let t = read_tokens(&[path.to_owned()])?;
    match t.as_slice() {
        [one] => Ok(one.clone()),
        _ => Err(CliError::malformed(format!(
            "{path}: expected exactly one token"
        ))),
    }
}

fn exchange(a: ExchangeArgs) -> CliResult {
    let key = a.sign.load()?;
    let subject = read_one_token(&a.subject_token)?;
    let actor_token = match &a.actor_token {
        Some(p) => Some(read_one_token(p)?),
        None => None,
    };
    let resolver: Box<dyn KeyResolver> = if a.trust.keys.is_empty() {
        errln!("agentsig: no --key/--jwks: trusting only the signing key's public half for the subject token");
        Box::new(StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned))
    } else {
        a.trust.resolver()?
    };
    let mut jp = a.trust.jwt_policy(None);
    jp.require_jti = false;
    let scope_policy = ScopePolicy {
        mode: if a.scope_mode == "hierarchical" {
            ScopeMode::Hierarchical
        } else {
            ScopeMode::Set
        },
        ..ScopePolicy::default()
    };
    let req = ExchangeRequest {
        subject_token: &subject,
        actor: a.actor.as_deref().map(ActorSpec::new),
        actor_token: actor_token.as_deref(),
        iss: a.iss.clone(),
        aud: a.aud.clone(),
        scope: a.scope.clone(),
        may_act: a.may_act.as_deref().map(ActorSpec::new),
        ttl: a.ttl,
        typ: a.new_typ.clone(),
    };
    let v = a.trust.verifier(resolver, jp);
    match mint::exchange(&req, v.context(), v.jwt_policy(), &scope_policy, &key) {
        Ok(r) => {
            if a.json {
                let mut rep =
                    agentsig::report::Report::done("delegation exchange", Some(&a.subject_token));
                rep.detail("response", &r.response);
                super::print_report(&rep);
            } else {
                emit(&format!("{}\n", r.token));
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) if e.code() == "mint.invalid" || e.code() == "mint.sign" => {
            Err(CliError::usage(e.to_string()))
        }
        Err(e) => {
            // The report's details.response has the RFC 8693 2.2.2 error
            // response shape.
            let oauth = if e.code() == "exchange.scope-widened" {
                "invalid_scope"
            } else {
                "invalid_request"
            };
            Err(CliError::failed(format!("{}: {e}", e.code()))
                .with_kind(e.code())
                .with_detail(
                    "response",
                    serde_json::json!({
                        "error": oauth,
                        "error_description": e.to_string(),
                    }),
                ))
        }
    }
}
