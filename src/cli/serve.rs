//! `agentsig serve DIR`: publish a directory of descriptors, every response
//! signed (RFC 9421 + RFC 9530 Content-Digest). See [`agentsig::server`].

use super::{load_signing, parse_alg, CliError, CliResult};
use agentsig::server::{self, KeyRing, PublishConfig, Publisher, ServeOptions};
use agentsig::Algorithm;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

#[derive(clap::Args)]
pub struct ServeArgs {
    /// Directory of descriptors (.json) and their detached JWS (.jws).
    dir: std::path::PathBuf,
    /// Private key to sign with: a path, or env:NAME. Repeat for rotation: the first signs, all
    /// are listed in the JWK Set at /.well-known/jwks.json (so .jws files made with an older key
    /// still verify).
    #[arg(long, allow_hyphen_values = true, required = true, value_name = "KEY")]
    key: Vec<String>,
    /// Algorithm of the private key (RFC 9421 or JOSE name): required for RSA keys, checked
    /// against all others.
    #[arg(long, value_parser = parse_alg, value_name = "ALG")]
    alg: Option<Algorithm>,
    /// File holding the passphrase of an encrypted PKCS#8 private key (else
    /// $AGENTSIG_PASSPHRASE).
    #[arg(long, allow_hyphen_values = true, value_name = "FILE")]
    passphrase_file: Option<String>,
    /// Address to listen on (port 0 picks a free port; the address is logged).
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR")]
    listen: std::net::SocketAddr,
    /// PEM certificate chain: serve HTTPS (rustls). Needs --tls-key.
    #[arg(long, requires = "tls_key", value_name = "FILE")]
    tls_cert: Option<std::path::PathBuf>,
    /// PEM private key of the certificate.
    #[arg(long, requires = "tls_cert", value_name = "FILE")]
    tls_key: Option<std::path::PathBuf>,
    /// The site's own URL (e.g. https://example.com): the prefix of the URLs in a built
    /// /.well-known/agents.json, and what AI Catalog discovery needs: with it, each MCP Server
    /// Card whose streamable-http remote URL is on this site is also served at
    /// <that path>/server-card, and /.well-known/ai-catalog.json is built from the served
    /// descriptors (unless DIR has its own), every entry's Trust Manifest signed by the first
    /// --key, its identity BASE/.well-known/jwks.json#PATH (docs/serve.md).
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// Serve RFC 8414 style metadata (issuer, jwks_uri) at
    /// /.well-known/oauth-authorization-server with this issuer URL.
    #[arg(long, value_name = "URL")]
    issuer: Option<String>,
    /// Sign each served A2A Agent Card in card: one embedded JWS per --key appended to its
    /// "signatures" (verifiable by the A2A SDKs), made once per file version; the response
    /// signature then covers the signed card. Each JWS header names its key by kid, as listed in
    /// /.well-known/jwks.json.
    #[arg(long)]
    sign_cards: bool,
    /// Largest file served, in bytes; larger files answer 404 (the reason is logged).
    #[arg(long, default_value_t = server::publish::DEFAULT_MAX_FILE, value_name = "BYTES")]
    max_file_size: u64,
    /// Largest total of the files held in memory, in bytes; files past it answer 404.
    #[arg(long, default_value_t = server::publish::DEFAULT_MAX_TOTAL, value_name = "BYTES")]
    max_total_size: u64,
    /// Cache-Control max-age of served documents, in seconds.
    #[arg(long, default_value_t = 300, value_name = "SECONDS")]
    cache_max_age: u32,
    /// Most connections at once; more get 503 (plain HTTP) or are closed (TLS).
    #[arg(long, default_value_t = 512, value_name = "N")]
    max_connections: usize,
    /// Seconds between checks of DIR for changes (0: never reload).
    #[arg(long, default_value_t = 1, value_name = "SECONDS")]
    reload_interval: u64,
    /// Seconds allowed for a request head or a TLS handshake.
    #[arg(long, default_value_t = 10, value_name = "SECONDS")]
    header_timeout: u64,
    /// Also serve the Web Bot Auth key directory of these request-signing keys at
    /// /.well-known/http-message-signatures-directory, signed for each --authority
    /// (repeatable: the current key first, then keys kept during rotation).
    #[arg(long, allow_hyphen_values = true, value_name = "KEY")]
    web_bot_auth_key: Vec<String>,
    /// The agent's own host (host[:port], repeatable) the Web Bot Auth directory is served
    /// and signed for; other Hosts get 421. Required with --web-bot-auth-key (or
    /// --any-authority): the directory proof covers "@authority";req, so a proof signed for
    /// a Host an attacker chose passes as that origin's directory.
    #[arg(
        long = "authority",
        visible_alias = "web-bot-auth-authority",
        requires = "web_bot_auth_key",
        value_name = "HOST"
    )]
    web_bot_auth_authority: Vec<String>,
    /// Sign the Web Bot Auth directory for whatever Host asks (only behind a proxy that
    /// forwards the agent's own hosts alone).
    #[arg(
        long,
        requires = "web_bot_auth_key",
        conflicts_with = "web_bot_auth_authority"
    )]
    any_authority: bool,
}

impl ServeArgs {
    /// The directory, for the report's `subject`.
    pub fn subject(&self) -> Option<String> {
        Some(self.dir.display().to_string())
    }
}

pub fn run(a: ServeArgs) -> CliResult {
    let wba = web_bot_auth_directory(
        &a.web_bot_auth_key,
        &a.web_bot_auth_authority,
        a.any_authority,
        a.passphrase_file.as_deref(),
    )?;
    let mut keys = Vec::new();
    for k in &a.key {
        keys.push(load_signing(k, a.alg, None, a.passphrase_file.as_deref())?);
    }
    let ring = Arc::new(KeyRing::new(keys).map_err(|e| CliError::usage(e.to_string()))?);
    let mut cfg = PublishConfig::new(&a.dir, ring);
    cfg.max_file = a.max_file_size;
    cfg.max_total = a.max_total_size;
    cfg.cache_max_age = a.cache_max_age;
    cfg.base_url = a.base_url;
    cfg.issuer = a.issuer;
    cfg.sign_cards = a.sign_cards;
    let publisher = Arc::new(Publisher::new(cfg).map_err(|e| CliError::usage(e.to_string()))?);
    let tls = match (&a.tls_cert, &a.tls_key) {
        (Some(c), Some(k)) => {
            let read = |p: &std::path::Path| {
                std::fs::read(p).map_err(|e| CliError::usage(format!("{}: {e}", p.display())))
            };
            let (cert, key) = (read(c)?, read(k)?);
            let names = (c.display().to_string(), k.display().to_string());
            Some(
                server::tls_config(&cert, &key, (&names.0, &names.1))
                    .map_err(|e| CliError::usage(e.to_string()))?,
            )
        }
        _ => None,
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    let opts = ServeOptions {
        tls,
        header_timeout: Duration::from_secs(a.header_timeout.max(1)),
        max_connections: a.max_connections.max(1),
        reload_interval: (a.reload_interval > 0).then(|| Duration::from_secs(a.reload_interval)),
        web_bot_auth: wba,
        ..ServeOptions::default()
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("AGENTSIG_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let log = server::run::BufferedStderr::start();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(log.clone())
        .with_ansi(false)
        .try_init();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::usage(format!("runtime: {e}")))?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(a.listen)
            .await
            .map_err(|e| CliError::usage(format!("{}: {e}", a.listen)))?;
        let addr = listener
            .local_addr()
            .map_err(|e| CliError::usage(e.to_string()))?;
        let site = publisher.site();
        // Said loudly at start: a refused file answers 404 like an absent
        // one (nobody can probe which files exist), so the log is the only
        // place its reason appears.
        // Files refused for one same reason (e.g. not .json) are one line.
        let mut by_reason: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
        for (path, why) in site.refused() {
            by_reason.entry(why).or_default().push(path);
        }
        for (why, paths) in by_reason {
            if let [path] = paths[..] {
                tracing::warn!(path = %agentsig::text::escape_controls(path), "not served (answers 404): {why}");
            } else {
                tracing::warn!(
                    "not served (answers 404): {why}: {} files ({})",
                    paths.len(),
                    agentsig::text::escape_controls(&paths.join(", "))
                );
            }
        }
        for (path, why) in site.unlisted() {
            tracing::warn!(
                path = %agentsig::text::escape_controls(path),
                "left out of the built {}: {why}",
                server::publish::AGENTS_PATH
            );
        }
        for n in site.notes() {
            tracing::warn!("{}", agentsig::text::escape_controls(n));
        }
        if publisher.config().base_url.is_none()
            && site.get(agentsig::catalog::WELL_KNOWN_PATH).is_none()
        {
            tracing::info!(
                "no {} and no MCP Server Card /server-card paths are built: give --base-url https://HOST (their URLs and Trust Manifest identities are absolute)",
                agentsig::catalog::WELL_KNOWN_PATH
            );
        }
        // What --base-url built, so the publisher sees which URLs exist.
        let cards = site.server_card_paths();
        if let Some(c) = site.built_catalog() {
            let entries = c.get("entries").and_then(|e| e.as_array()).map_or(0, Vec::len);
            tracing::info!(
                "built {} from {}: {entries} entries, each with a signed Trust Manifest",
                agentsig::catalog::WELL_KNOWN_PATH,
                a.dir.display()
            );
        } else if site.get(agentsig::catalog::WELL_KNOWN_PATH).is_some() {
            tracing::info!(
                "serving the directory's own catalog at {}",
                agentsig::catalog::WELL_KNOWN_PATH
            );
        }
        if !cards.is_empty() {
            tracing::info!(
                "MCP Server Cards also served at {}",
                agentsig::text::escape_controls(&cards.join(", "))
            );
        }
        tracing::info!(
            "serving {} ({} paths) on {scheme}://{addr}/ ; keys at {scheme}://{addr}{}",
            a.dir.display(),
            site.paths().len(),
            server::publish::JWKS_PATH
        );
        server::serve(listener, publisher, opts, shutdown_signal())
            .await
            .map_err(|e| CliError::usage(format!("server: {e}")))?;
        tracing::info!("stopped");
        Ok(ExitCode::SUCCESS)
    })
}

/// Ctrl-C, or SIGTERM on Unix.
/// The Web Bot Auth directory of `--web-bot-auth-key`, if any.
fn web_bot_auth_directory(
    specs: &[String],
    authorities: &[String],
    any_authority: bool,
    passphrase_file: Option<&str>,
) -> Result<Option<Arc<server::webbotauth::DirectoryPublisher>>, CliError> {
    if specs.is_empty() {
        return Ok(None);
    }
    let sites = super::site_authorities(authorities, any_authority)?.ok_or_else(|| {
        CliError::usage(
            "--web-bot-auth-key needs --authority HOST (the agent's own host[:port], \
             repeatable), or --any-authority: the directory proof is signed for the Host \
             it is served at, and one signed for any Host can be re-hosted elsewhere",
        )
    })?;
    let mut keys = Vec::new();
    for k in specs {
        keys.push(load_signing(k, None, None, passphrase_file)?);
    }
    let d = server::webbotauth::DirectoryPublisher::new(keys, sites)
        .map_err(|e| CliError::usage(format!("--web-bot-auth-key: {e}")))?;
    Ok(Some(Arc::new(d)))
}

async fn shutdown_signal() {
    super::interrupted().await;
    tracing::info!("shutting down: finishing requests in flight");
}
