//! Web Bot Auth on the command line (draft-ietf-webbotauth-httpsig-protocol-00):
//! `http sign --profile web-bot-auth`, `http verify --profile web-bot-auth`
//! and `directory build`.

use super::{load_signing, CliError, CliResult};
use agentsig::httpsig::Message;
use agentsig::webbotauth::directory::{directory_body, directory_headers, DEFAULT_PROOF_LIFETIME};
use agentsig::webbotauth::{
    self, KeyDirectory, Policy, SignOptions, StaticDirectory, Status, WebBotAuthVerifier,
    DEFAULT_LIFETIME, MAX_LIFETIME,
};
use clap::{Args, Subcommand, ValueEnum};
use std::io::Write;
use std::process::ExitCode;

/// An RFC 9421 profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Profile {
    /// Web Bot Auth (draft-ietf-webbotauth-httpsig-protocol-00): tag web-bot-auth, keyid =
    /// RFC 7638 thumbprint, created/expires, Signature-Agent covered by its member.
    WebBotAuth,
    /// Signature-Key (draft-hardt-httpbis-signature-key-07, tracking a draft; verify only):
    /// the key named by the Signature-Key member of each signature's label, schemes hwk
    /// (inline key, identity = thumbprint) and jwks_uri (id, dwk, kid; fetched); the
    /// signature must cover signature-key.
    SignatureKey,
}

/// `http sign` options of the Web Bot Auth profile.
#[derive(Args, Debug, Default)]
pub struct WbaSignArgs {
    /// Sign under a profile. web-bot-auth: covers @method @authority @path and
    /// "signature-agent";key=LABEL, sets created, expires (default 5m, at most 24h), a
    /// 64-byte nonce, keyid = the key's RFC 7638 thumbprint, tag="web-bot-auth", and adds
    /// Signature-Agent: LABEL="URL".
    #[arg(long, value_enum, requires = "signature_agent",
          conflicts_with_all = ["components", "tag", "keyid", "no_alg", "accept_signature", "add_content_digest", "request", "no_created"])]
    pub profile: Option<Profile>,
    /// The agent's https URL for Signature-Agent: its origin (keys at
    /// /.well-known/http-message-signatures-directory) or a JWK Set URL.
    #[arg(long, requires = "profile", value_name = "URL")]
    pub signature_agent: Option<String>,
    /// Cover only @authority and the Signature-Agent member (not @method, @path).
    #[arg(long, requires = "profile")]
    pub authority_only: bool,
    /// Do not cover the body: by default a request with a body gets a Content-Digest
    /// (RFC 9530) that the signature covers, and verifiers refuse content left uncovered.
    #[arg(long, requires = "profile")]
    pub no_content_digest: bool,
    /// Send no nonce.
    #[arg(long, requires = "profile", conflicts_with = "nonce")]
    pub no_nonce: bool,
}

/// What `http sign` hands over for the profile.
pub struct SignInput<'a> {
    pub file: &'a str,
    pub key: &'a str,
    pub alg: Option<agentsig::Algorithm>,
    pub passphrase_file: Option<&'a str>,
    pub label: &'a str,
    pub created: Option<i64>,
    pub expires_in: Option<u64>,
    pub nonce: Option<&'a str>,
    pub json: bool,
    pub out: Option<&'a str>,
}

/// `http sign --profile web-bot-auth`.
pub fn http_sign(mut m: Message, i: SignInput<'_>, w: &WbaSignArgs) -> CliResult {
    if !m.is_request() {
        return Err(CliError::usage(format!(
            "{}: Web Bot Auth signs requests; this is a response",
            i.file
        )));
    }
    let agent = w
        .signature_agent
        .clone()
        .ok_or_else(|| CliError::usage("--profile web-bot-auth needs --signature-agent URL"))?;
    let key = load_signing(i.key, i.alg, None, i.passphrase_file)?;
    let lifetime = i.expires_in.unwrap_or(DEFAULT_LIFETIME);
    if lifetime == 0 || lifetime > MAX_LIFETIME {
        return Err(CliError::usage(
            "--expires-in must be 1 s to 24 h under the web-bot-auth profile",
        ));
    }
    let mut o = SignOptions::new(agent, i.created.unwrap_or_else(now));
    o.label = i.label.to_owned();
    o.lifetime = lifetime;
    o.method_and_path = !w.authority_only;
    o.content_digest = !w.no_content_digest;
    o.nonce = i.nonce.map(str::to_owned);
    o.no_nonce = w.no_nonce;
    let s = webbotauth::sign_message(&mut m, &key, &o)
        .map_err(|e| CliError::usage(format!("{}: {e}", i.file)))?;
    if i.json {
        let mut r = agentsig::report::Report::done("http sign", Some(i.file));
        r.detail("profile", "web-bot-auth");
        r.detail("label", &s.signed.label);
        r.detail("kid", key.verifying_key().thumbprint());
        r.detail("algorithm", key.algorithm().httpsig_name());
        r.detail("signature_input", &s.signed.signature_input);
        r.detail("signature", &s.signed.signature);
        r.detail("signature_base", String::from_utf8_lossy(&s.signed.base));
        r.detail(
            "added_fields",
            s.fields
                .iter()
                .map(|(n, v)| format!("{n}: {v}"))
                .collect::<Vec<_>>(),
        );
        super::print_report(&r);
        return Ok(ExitCode::SUCCESS);
    }
    // The raw form is unchanged by signing: the new fields are inserted into it.
    let out = m
        .with_fields_inserted(&s.fields)
        .ok_or_else(|| CliError::usage("internal: message lost its raw form"))?;
    write_out(i.out, &out)
}

fn write_out(out: Option<&str>, data: &[u8]) -> CliResult {
    match out {
        None | Some("-") => std::io::stdout()
            .write_all(data)
            .map_err(|e| CliError::usage(format!("standard output: {e}")))?,
        Some(p) => std::fs::write(p, data).map_err(|e| CliError::usage(format!("{p}: {e}")))?,
    }
    Ok(ExitCode::SUCCESS)
}

fn now() -> i64 {
    agentsig::clock::Clock::now(&agentsig::clock::SystemClock)
}

/// `http verify` options of the Web Bot Auth profile.
#[derive(Args, Debug, Default)]
pub struct WbaVerifyArgs {
    /// Verify under a profile. web-bot-auth: finds the Signature-Agent member each
    /// web-bot-auth signature covers, fetches that agent's key directory (or JWK Set) over
    /// HTTPS through the SSRF guard, checks the directory's own signature when present, and
    /// reports the verified agent. Exit 0 verified, 1 invalid or unsigned.
    #[arg(long, value_enum)]
    pub profile: Option<Profile>,
    /// Accept only these agent origins (repeatable), e.g. --agent https://chatgpt.com.
    #[arg(long = "agent", value_name = "URL", requires = "profile")]
    pub agents: Vec<String>,
    /// Largest expires - created accepted (default 1h; the profile allows up to 24h, but a
    /// captured signature can be replayed until it expires).
    #[arg(
        long,
        value_parser = super::args::parse_duration,
        requires = "profile",
        value_name = "DURATION"
    )]
    pub max_validity: Option<u64>,
    /// Refuse signatures without a nonce.
    #[arg(long, requires = "profile")]
    pub require_nonce: bool,
    /// Accept the RFC 9421 Appendix B test keys (refused by default: anyone can sign with
    /// them; only for replaying the drafts' vectors).
    #[arg(long, requires = "profile")]
    pub allow_test_keys: bool,
    /// Accept requests received over plain http (--scheme http; refused by default).
    #[arg(long, requires = "profile")]
    pub allow_plain_http: bool,
    /// The strict preset: also require @method, @path and a nonce, so a captured signature
    /// authorises only the request it was made for (and, with --replay-store, only once).
    /// Refuses agents that sign @authority alone or send no nonce.
    #[arg(long, requires = "profile")]
    pub strict: bool,
    /// Refuse a directory without a valid response signature (Appendix B.1).
    #[arg(long, requires = "profile")]
    pub require_directory_signature: bool,
    /// Use this file as the key set of URL instead of fetching it (repeatable; URL is the
    /// agent's origin as Signature-Agent carries it, e.g. https://agent.example, or the
    /// key-set URL, e.g. https://agent.example/.well-known/http-message-signatures-directory).
    #[arg(long, value_name = "URL=FILE", requires = "profile")]
    pub key_set: Vec<String>,
    #[cfg(feature = "net")]
    #[command(flatten)]
    pub fetch: super::args::FetchArgs,
}

/// What `http verify` hands over for the profile.
pub struct VerifyInput<'a> {
    pub file: &'a str,
    pub required: Vec<agentsig::httpsig::ComponentId>,
    pub skew: u64,
    pub now: Option<i64>,
    pub check_time: bool,
    pub replay_store: Option<&'a str>,
    pub json: bool,
    /// The site's own authorities (`None` for a response).
    pub authorities: Option<agentsig::httpsig::SiteAuthorities>,
    pub allow_uncovered_content: bool,
    /// `--key` / `--jwks`, which this profile does not take.
    pub trust: &'a super::TrustedKeyArgs,
}

/// `http verify --profile web-bot-auth`.
pub fn http_verify(m: &Message, i: VerifyInput<'_>, w: &WbaVerifyArgs) -> CliResult {
    let now = i.now.unwrap_or_else(now);
    match w.profile {
        Some(Profile::WebBotAuth) if !i.trust.is_empty() => {
            return Err(key_set_hint(m, i.file, i.trust));
        }
        Some(Profile::SignatureKey) if !i.trust.is_empty() => {
            return Err(CliError::usage(format!(
                "{}: --profile signature-key takes each signature's key from its Signature-Key \
                 member (hwk: inline; jwks_uri: fetched), not from --key/--jwks: leave them out",
                i.file
            )));
        }
        _ => {}
    }
    let mut p = if w.strict {
        Policy::strict()
    } else {
        Policy::default()
    };
    p.authorities = i.authorities.as_ref().and_then(|a| a.to_policy());
    if !w.agents.is_empty() {
        for a in &w.agents {
            webbotauth::resolve_agent_url(a, None)
                .map_err(|e| CliError::usage(format!("--agent {a}: {e}")))?;
        }
        p.allowed_agents = Some(w.agents.clone());
    }
    p.required.extend(i.required.iter().cloned());
    if let Some(v) = w.max_validity {
        p.max_validity = v;
    }
    p.require_nonce |= w.require_nonce;
    p.reject_test_keys = !w.allow_test_keys;
    p.require_tls = !w.allow_plain_http;
    p.require_content_digest = !i.allow_uncovered_content;
    p.skew = i.skew;
    p.check_time = i.check_time;
    let mut v = WebBotAuthVerifier::new(p);
    if let Some(url) = i.replay_store {
        let store =
            agentsig::replay::open_store(url, now).map_err(|e| CliError::usage(e.to_string()))?;
        v = v.with_replay_store(store);
    }
    if w.profile == Some(Profile::SignatureKey) {
        return signature_key_verify(m, &v, w, &i, now);
    }
    let dir = directory(w, now)?;
    let report = v.verify(m, dir.as_ref(), now);
    let status = report.status();
    if i.json {
        super::print_report(&report.to_report("http verify", Some(i.file)));
    } else {
        for l in &report.labels {
            match &l.result {
                Ok(a) => outln!(
                    "{}: valid: agent {} (key {} from {}, alg {})",
                    l.label,
                    a.agent,
                    a.keyid,
                    a.key_set_url,
                    a.alg
                ),
                Err(e) => outln!("{}: INVALID [{}]: {e}", l.label, e.code()),
            }
        }
        if let Some(e) = &report.error {
            outln!("{}: [{}] {e}", i.file, e.code());
        }
        match (status, report.verified()) {
            (Status::Verified, Some(a)) => outln!("{}: verified agent {}", i.file, a.agent),
            (Status::Unverified, _) => {
                outln!("{}: NOT verified: no web-bot-auth signature", i.file)
            }
            _ => outln!("{}: NOT verified", i.file),
        }
    }
    Ok(if status == Status::Verified {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn signature_key_verify(
    m: &Message,
    v: &WebBotAuthVerifier,
    w: &WbaVerifyArgs,
    i: &VerifyInput<'_>,
    now: i64,
) -> CliResult {
    #[cfg(feature = "net")]
    let client =
        agentsig::net::webbotauth::DirectoryClient::new(std::sync::Arc::new(w.fetch.fetcher()?))
            .clock(agentsig::clock::FixedClock(now));
    #[cfg(feature = "net")]
    let jwks: Option<&dyn agentsig::webbotauth::signature_key::JwksUriResolver> = Some(&client);
    #[cfg(not(feature = "net"))]
    let jwks: Option<&dyn agentsig::webbotauth::signature_key::JwksUriResolver> = {
        let _ = w;
        None
    };
    let results = match v.verify_signature_key(m, jwks, now) {
        Ok(r) => r,
        Err(e) => {
            if i.json {
                let mut r = agentsig::report::Report::error(
                    "http verify",
                    Some(i.file),
                    e.code(),
                    &e.to_string(),
                );
                r.set_verdict(agentsig::report::Verdict::NotVerified);
                r.detail("profile", "signature-key");
                super::print_report(&r);
            } else {
                outln!("{}: [{}] {e}", i.file, e.code());
            }
            return Ok(ExitCode::from(1));
        }
    };
    let ok = !results.is_empty() && results.iter().all(|(_, r)| r.is_ok());
    if i.json {
        super::print_report(&agentsig::report::Report::from_signature_key(
            &results,
            "http verify",
            Some(i.file),
        ));
    } else {
        for (l, r) in &results {
            match r {
                Ok(v) => outln!(
                    "{l}: valid: {} signer {} (key {}, alg {}){}",
                    v.scheme,
                    v.identity,
                    v.thumbprint,
                    v.alg,
                    if v.scheme == "hwk" {
                        "; the key is self-asserted: the identity is this key only, not an agent"
                    } else {
                        ""
                    }
                ),
                Err(e) => outln!("{l}: INVALID [{}]: {e}", e.code()),
            }
        }
        if results.is_empty() {
            outln!("{}: NOT verified: no Signature-Key field", i.file);
        } else if ok {
            outln!("{}: verified", i.file);
        } else {
            outln!("{}: NOT verified", i.file);
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The usage error for `--key` / `--jwks` under `--profile web-bot-auth`:
/// the keys of a Web Bot Auth signature are the signing agent's, named by
/// the `Signature-Agent` member it covers (section 5.4), so a file of keys
/// is given for that agent with `--key-set`; the error spells out the
/// exact option for this request.
fn key_set_hint(m: &Message, file: &str, trust: &super::TrustedKeyArgs) -> CliError {
    let keys = trust
        .jwks
        .first()
        .or(trust.key.first())
        .map_or("FILE", String::as_str);
    let agents: Vec<String> = webbotauth::SignatureAgent::from_message(m)
        .ok()
        .flatten()
        .map(|sa| {
            sa.members
                .iter()
                .filter_map(|mb| webbotauth::resolve_agent_url(&mb.value, mb.kind.as_deref()).ok())
                .map(|u| u.agent)
                .collect()
        })
        .unwrap_or_default();
    let give = match agents.first() {
        Some(a) => format!("--key-set {a}={keys}"),
        None => format!("--key-set URL={keys} (URL: the agent's origin in Signature-Agent)"),
    };
    CliError::usage(format!(
        "{file}: --profile web-bot-auth takes the signing agent's keys as its key set, not \
         --key/--jwks: give {give}{}",
        if trust.jwks.is_empty() {
            " (a JWK Set file; a single public key is not a key set)"
        } else {
            ""
        }
    ))
}

fn directory(w: &WbaVerifyArgs, now: i64) -> Result<Box<dyn KeyDirectory>, CliError> {
    if !w.key_set.is_empty() {
        let mut d = StaticDirectory::new();
        for spec in &w.key_set {
            let (url, file) = spec
                .rsplit_once('=')
                .ok_or_else(|| CliError::usage(format!("--key-set {spec}: expected URL=FILE")))?;
            let data = super::read_input(file)?;
            // An origin (as Signature-Agent carries it) names its well-known
            // directory; any other URL is the key-set URL itself (section 5.2.1).
            let agent = webbotauth::resolve_agent_url(url, None)
                .map_err(|e| CliError::usage(format!("--key-set {url}: {e}")))?;
            let set = webbotauth::directory::parse_key_set(&agent, &data)
                .map_err(|e| CliError::usage(format!("--key-set {file}: {e}")))?;
            d.insert(
                &agent.key_set_url,
                set.keys.into_iter().map(|(_, k)| k).collect(),
            );
        }
        return Ok(Box::new(d));
    }
    #[cfg(feature = "net")]
    {
        let f = w.fetch.fetcher()?;
        let c = agentsig::net::webbotauth::DirectoryClient::new(std::sync::Arc::new(f))
            .require_proof(w.require_directory_signature)
            .clock(agentsig::clock::FixedClock(now));
        Ok(Box::new(c))
    }
    #[cfg(not(feature = "net"))]
    {
        let _ = now;
        Err(CliError::usage(
            "this build has no network access (feature net): give --key-set URL=FILE",
        ))
    }
}

/// `agentsig directory ...`: the Web Bot Auth key directory.
#[derive(Subcommand)]
pub enum DirectoryCommand {
    /// Write the HTTP Message Signatures Directory (a JWK Set of the agent's public keys,
    /// kid = RFC 7638 thumbprint) and, beside it, FILE.headers: the response fields a static
    /// host must send (Content-Type, Cache-Control, Content-Digest and, with --authority,
    /// one signature per key over ("@authority";req "content-digest")).
    Build(DirectoryBuildArgs),
}

/// `directory build` options.
#[derive(Args)]
pub struct DirectoryBuildArgs {
    /// Private key (repeatable: the current key first, then keys kept during rotation).
    #[arg(long, required = true, allow_hyphen_values = true)]
    key: Vec<String>,
    /// The host (and port) the directory is served at, e.g. agent.example: the directory
    /// signature covers "@authority";req, so a static file is signed for one authority.
    /// Without it the directory carries no signature.
    #[arg(long, value_name = "HOST")]
    authority: Option<String>,
    /// Validity of the directory signatures (default 30d).
    #[arg(long, value_parser = super::args::parse_duration, value_name = "DURATION")]
    expires_in: Option<u64>,
    /// Where to write the directory (FILE.headers is written beside it).
    #[arg(
        long,
        default_value = "http-message-signatures-directory",
        value_name = "FILE"
    )]
    out: String,
    /// Print one JSON report (agentsig.report/1, docs/report.md): the files written, the key
    /// thumbprints and the signature's validity in its details.
    #[arg(long)]
    json: bool,
    /// File holding the passphrase of encrypted PKCS#8 keys (else $AGENTSIG_PASSPHRASE).
    #[arg(long, allow_hyphen_values = true, value_name = "FILE")]
    passphrase_file: Option<String>,
}

impl DirectoryCommand {
    /// The report's subject: the directory file written.
    pub fn subject(&self) -> Option<String> {
        match self {
            DirectoryCommand::Build(a) => Some(a.out.clone()),
        }
    }
}

/// Run `agentsig directory ...`.
pub fn run_directory(c: DirectoryCommand) -> CliResult {
    match c {
        DirectoryCommand::Build(a) => build(a),
    }
}

fn build(a: DirectoryBuildArgs) -> CliResult {
    let mut keys = Vec::new();
    for k in &a.key {
        let key = load_signing(k, None, None, a.passphrase_file.as_deref())?;
        if key.algorithm().is_symmetric() {
            return Err(CliError::usage(format!(
                "--key {k}: a shared secret cannot be published (Web Bot Auth section 6.4)"
            )));
        }
        keys.push(key);
    }
    let vks: Vec<_> = keys.iter().map(|k| k.verifying_key()).collect();
    let body = directory_body(&vks);
    let created = now();
    let expires = created.saturating_add(
        i64::try_from(a.expires_in.unwrap_or(DEFAULT_PROOF_LIFETIME)).unwrap_or(i64::MAX),
    );
    let refs: Vec<&agentsig::SigningKey> = keys.iter().collect();
    let signers: &[&agentsig::SigningKey] = if a.authority.is_some() { &refs } else { &[] };
    let authority = a.authority.as_deref().unwrap_or("unused.invalid");
    if authority
        .bytes()
        .any(|b| b <= b' ' || b == b'/' || b == 0x7f)
    {
        return Err(CliError::usage("--authority must be a host[:port]"));
    }
    let headers = directory_headers(&body, authority, signers, created, expires)
        .map_err(|e| CliError::usage(e.to_string()))?;
    std::fs::write(&a.out, &body).map_err(|e| CliError::unwritable(format!("{}: {e}", a.out)))?;
    let hpath = format!("{}.headers", a.out);
    let text: String = headers.iter().map(|(n, v)| format!("{n}: {v}\n")).collect();
    std::fs::write(&hpath, text).map_err(|e| CliError::unwritable(format!("{hpath}: {e}")))?;
    if a.json {
        let mut r = agentsig::report::Report::done("directory build", Some(&a.out));
        r.detail("directory", &a.out);
        r.detail("headers", &hpath);
        r.detail(
            "keys",
            keys.iter()
                .map(|k| k.verifying_key().thumbprint())
                .collect::<Vec<_>>(),
        );
        r.detail("authority", &a.authority);
        r.detail("signed", a.authority.is_some());
        r.detail("created", created);
        r.detail("expires", a.authority.as_ref().map(|_| expires));
        super::print_report(&r);
    } else {
        outln!(
            "wrote {} ({} key(s)) and {hpath}{}",
            a.out,
            keys.len(),
            if a.authority.is_some() {
                ""
            } else {
                " (unsigned: give --authority HOST to sign it)"
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}
