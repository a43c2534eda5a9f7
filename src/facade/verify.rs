//! The verifier a binding holds: the library [`Verifier`], the Web Bot Auth
//! verifier and where its key sets come from, with one method per
//! `verify_*` call of the bindings, each returning the report the CLI
//! prints under `--json` or the [`Failure`] to raise.

use super::error::{settle, Failure, Outcome};
use super::message::{fields, into_fields, request_message, verified_request_line, Headers};
use super::options::{DirectoryFetch, KeyCache, KeyCacheError, Spelling, VerifierOptions};
use crate::clock::FixedClock;
use crate::httpsig::{ComponentId, HttpPolicy, HttpSigError, Message};
use crate::replay::ReplayStore;
use crate::report::{Report, Verdict};
use crate::verifier::Verifier;
use crate::webbotauth::{KeyDirectory, WebBotAuthVerifier};
use crate::AllowList;
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the `net` feature supplies to a [`Facade`]: fetching Web Bot Auth
/// key directories over HTTPS (SSRF-guarded), and a bound on the time every
/// fetch of one verification may take together. The facade knows the
/// rules; the network layer knows how to fetch.
pub trait Network: Send + Sync {
    /// A key directory client with `o`'s settings.
    ///
    /// # Errors
    /// Why the HTTPS client could not be built (a bad root certificate).
    fn directories(&self, o: &DirectoryFetch) -> Result<Arc<dyn KeyDirectory>, String>;
    /// The longest one verification's fetches may take in all.
    fn deadline(&self) -> Duration;
    /// Run `f` with every fetch it makes ending by `deadline`.
    fn within(&self, deadline: Instant, f: &mut dyn FnMut());
    /// The fleet key-set cache over the store `store`, authenticated with
    /// the secret in `secret_file`, else in the environment variable the
    /// command line reads (`AGENTSIG_FLEET_SECRET`); the store is not
    /// contacted.
    ///
    /// # Errors
    /// Why the secret or the store URL cannot be used.
    fn key_cache(
        &self,
        store: &str,
        secret_file: Option<&std::path::Path>,
    ) -> Result<KeyCache, KeyCacheError>;
    /// Verify an AI Catalog document with each Trust Manifest identity's
    /// keys resolved through a fetcher with `o`'s settings (DID documents,
    /// HTTPS JWK Sets; `agentsig::net::catalog::verify_catalog_resolved`),
    /// `base` giving the algorithms, JWS policy, limits and low-S setting.
    ///
    /// # Errors
    /// The outer error: why the HTTPS client could not be built; the
    /// inner: the document is too large or not strict JSON.
    fn verify_catalog_resolved(
        &self,
        base: &Verifier,
        o: &DirectoryFetch,
        catalog: &[u8],
        opts: &crate::catalog::CatalogOptions,
    ) -> Result<Result<crate::catalog::CatalogReport, crate::catalog::CatalogError>, String>;
}

/// A verifier built from [`VerifierOptions`]: thread-safe, reusable.
#[derive(Clone)]
pub struct Facade {
    inner: Verifier,
    wba: WebBotAuthVerifier,
    /// Where Web Bot Auth key sets come from: the keys given per agent, or
    /// the agents' directories fetched over HTTPS; `None`: not configured.
    directory: Option<Arc<dyn KeyDirectory>>,
    net: Option<&'static dyn Network>,
    spelling: Spelling,
    /// Whether trusted keys were given (`keys`, `jwks`): a catalog's
    /// manifests are then checked with them, else each identity's keys are
    /// resolved ([`Facade::resolves_catalog_keys`]).
    keys_given: bool,
    /// How this verifier fetches, when it may (`fetch_directories`).
    fetching: Option<DirectoryFetch>,
    /// The fleet key-set cache every fetch of this verifier shares.
    key_cache: Option<KeyCache>,
}

impl std::fmt::Debug for Facade {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Facade")
            .field("algorithms", self.inner.algorithms())
            .field("web_bot_auth_keys", &self.directory.is_some())
            .finish_non_exhaustive()
    }
}

/// A request to verify, as a server received it.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct RequestCheck {
    /// The method.
    pub method: String,
    /// An absolute http(s) URL, or with `scheme` an origin-form target
    /// ([`verified_request_message`](super::verified_request_message)).
    pub target: String,
    /// `https` or `http` for an origin-form target.
    pub scheme: Option<String>,
    /// The header pairs, in received order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
    /// Verify under the Web Bot Auth profile.
    pub web_bot_auth: bool,
    /// The site's own authorities (`host[:port]`): a signature must cover
    /// `@authority` or `@target-uri`, naming one of them (RFC 9421 section
    /// 7.2.1).
    pub authorities: Option<Vec<String>>,
    /// Also require `@method`, `@path` and a `nonce` (RFC 9421 sections
    /// 7.2.1 and 7.2.2).
    pub strict: bool,
}

impl VerifierOptions {
    /// Build the verifier ([`VerifierOptions::check`] first). `net` fetches
    /// key directories when `fetch_directories` is set (the `net`
    /// feature's `agentsig::net::facade::network()`).
    ///
    /// # Errors
    /// `usage` for options that break a rule, an unknown replay store, or
    /// `fetch_directories` without `net`.
    pub fn build(self, net: Option<&'static dyn Network>) -> Outcome<Facade> {
        self.check()?;
        let s = self.spelling;
        let key_cache = match &self.key_cache {
            None => None,
            Some(store) => {
                let Some(n) = net else {
                    return Err(Failure::usage(format!(
                        "{} needs the net feature",
                        s.name("key_cache")
                    )));
                };
                Some(
                    n.key_cache(store, self.fleet_secret_file.as_deref())
                        .map_err(|e| e.failure(s))?,
                )
            }
        };
        let allow = match &self.algorithms {
            None => AllowList::asymmetric(),
            Some(list) => AllowList::new(list.iter().copied()),
        };
        let mut http = HttpPolicy::new();
        http.max_age = self.max_age;
        // One default for a request in every surface: content must be
        // covered through `content-digest` unless waived.
        http.require_content_digest = !self.allow_uncovered_content;
        let keys_given = !self.keys.is_empty();
        let mut b = Verifier::builder(self.keys)
            .algorithms(allow.clone())
            .strict_low_s(self.strict_low_s)
            .http(http);
        if let Some(sk) = self.skew {
            b = b.skew(sk);
        }
        let start = self.now.unwrap_or_else(super::sign::now_secs);
        let store = match &self.replay_store {
            None => None,
            Some(url) => Some(open_store(url, start)?),
        };
        if let Some(st) = &store {
            b = b.replay_store(st.clone());
        }
        if let Some(n) = self.now {
            b = b.clock(FixedClock(n));
        }
        let inner = b.build();
        let mut policy = crate::webbotauth::Policy {
            algorithms: AllowList::new(allow.iter().filter(|a| !a.is_symmetric())),
            skew: inner.skew(),
            allowed_agents: self.agents,
            require_content_digest: !self.allow_uncovered_content,
            ..Default::default()
        };
        if let Some(m) = self.max_age {
            policy.max_validity = m.min(crate::webbotauth::MAX_LIFETIME);
        }
        let mut wba = WebBotAuthVerifier::new(policy);
        if let Some(st) = store {
            wba = wba.with_replay_store(st);
        }
        let mut fetching = None;
        let directory: Option<Arc<dyn KeyDirectory>> = if self.fetch_directories {
            let Some(n) = net else {
                return Err(Failure::usage(format!(
                    "{} needs the net feature",
                    s.set_true("fetch_directories")
                )));
            };
            let o = DirectoryFetch {
                require_proof: self.require_directory_proof,
                allow_private_hosts: self.allow_private_hosts.unwrap_or_default(),
                extra_roots_pem: self.extra_roots_pem.unwrap_or_default(),
                now: self.now,
                key_cache: key_cache.clone(),
            };
            let d = n
                .directories(&o)
                .map_err(|e| Failure::usage(format!("HTTPS client: {e}")))?;
            fetching = Some(o);
            Some(d)
        } else {
            self.agent_keys
                .map(|d| Arc::new(d) as Arc<dyn KeyDirectory>)
        };
        Ok(Facade {
            inner,
            wba,
            directory,
            net,
            spelling: s,
            keys_given,
            fetching,
            key_cache,
        })
    }
}

/// A replay store from its URL (`memory` or `memory:`, a file path,
/// `redis://...`).
fn open_store(url: &str, now: i64) -> Outcome<Arc<dyn ReplayStore>> {
    let url = if url == "memory" { "memory:" } else { url };
    crate::replay::open_store(url, now).map_err(|e| Failure::usage(format!("replay store: {e}")))
}

/// The components `strict` requires beyond the profile's: `@method` and
/// `@path`, so a captured signature cannot be spent on another method or
/// resource (RFC 9421 section 7.2.1); with `require_nonce`, a replay store
/// makes it good for one request (section 7.2.2).
fn add_strict(required: &mut Vec<ComponentId>) {
    for c in crate::httpsig::strict_request_components() {
        if !required.contains(&c) {
            required.push(c);
        }
    }
}

/// The site's own authorities (`host[:port]`, RFC 3986 section 3.2) as the
/// policy takes them.
///
/// # Errors
/// `usage` for an authority that is not one.
pub fn authorities_policy(list: &[String]) -> Outcome<Vec<String>> {
    crate::httpsig::SiteAuthorities::only(list)
        .map(|a| a.to_policy().unwrap_or_default())
        .map_err(|e| Failure::usage(format!("authorities: {e}")))
}

/// A Web Bot Auth report lists no covered components (the profile's
/// verifier keeps the identity, not the list): fill them in, for each
/// signature that verified, from the components its verification read
/// in its `Signature-Input` member (RFC 9421 section 4.1), so the identity
/// says what the agent signed.
fn fill_covered(report: &mut Report, wba: &crate::webbotauth::Report) {
    for s in report
        .signatures
        .iter_mut()
        .filter(|s| s.verdict == "valid")
    {
        let Some(v) = wba
            .labels
            .iter()
            .find(|l| l.label == s.id)
            .and_then(|l| l.result.as_ref().ok())
        else {
            continue;
        };
        // In the form the RFC 9421 report gives them (`Report::from_http`).
        s.covered = v
            .covered
            .iter()
            .map(|c| crate::report::unquote_component(c))
            .collect();
    }
}

/// A request's verification ([`Facade::verify_request_result`]) before
/// its report is made.
pub(crate) enum RequestResult {
    /// A Web Bot Auth verification's results, for the request at `target`.
    WebBotAuth {
        /// The profile's results.
        report: crate::webbotauth::Report,
        /// The request's target, the report's subject.
        target: String,
    },
    /// An RFC 9421 verification's report, settled.
    Done(Report),
}

/// The command of a Web Bot Auth request's report.
pub(crate) const WEB_BOT_AUTH_COMMAND: &str = "web-bot-auth verify";

impl RequestResult {
    /// The report ([`Facade::verify_request`]'s): made, then settled.
    ///
    /// # Errors
    /// The [`Failure`] of a report that did not verify.
    pub(crate) fn into_report(self) -> Outcome<Report> {
        match self {
            RequestResult::WebBotAuth { report, target } => {
                let mut out = report.to_report(WEB_BOT_AUTH_COMMAND, Some(&target));
                fill_covered(&mut out, &report);
                settle(out)
            }
            RequestResult::Done(r) => Ok(r),
        }
    }
}

/// An RFC 9421 verification by `v`, as the CLI's `http verify` reports it.
fn http_report(v: &Verifier, msg: &Message, related: Option<&Message>) -> Outcome<Report> {
    let command = "http verify";
    match v.verify_http(msg, related) {
        Ok(r) => settle(Report::from_http(command, None, &r)),
        Err(HttpSigError::NotVerified(r)) => settle(Report::from_http(command, None, &r)),
        Err(e) => {
            let mut rep = Report::error(command, None, "header", &e.to_string());
            rep.set_verdict(Verdict::NotVerified);
            Err(Failure::not_verified(rep))
        }
    }
}

/// A report of `command` that failed with `code` before any signature was
/// examined.
fn refused(command: &str, code: &str, message: &str) -> Failure {
    let mut rep = Report::error(command, None, code, message);
    rep.set_verdict(Verdict::NotVerified);
    Failure::not_verified(rep)
}

impl Facade {
    /// The library verifier.
    pub fn verifier(&self) -> &Verifier {
        &self.inner
    }

    /// Whether Web Bot Auth key sets are configured (given per agent, or
    /// fetched).
    pub fn web_bot_auth_keys(&self) -> bool {
        self.directory.is_some()
    }

    /// The fleet key-set cache its fetches share (`key_cache`), if any.
    pub fn key_cache(&self) -> Option<&KeyCache> {
        self.key_cache.as_ref()
    }

    /// Whether a catalog's Trust Manifests are checked with each identity's
    /// resolved keys rather than this verifier's own, the rule of
    /// `agentsig verify CATALOG` (`docs/catalog.md`): keys given (`keys`,
    /// `jwks`) are trusted for every identity; without them each identity's
    /// keys are resolved (a DID document, an HTTPS JWK Set URL with the
    /// `kid`), so the same catalog gets the same verdict from the command
    /// line and from a binding.
    pub fn resolves_catalog_keys(&self) -> bool {
        !self.keys_given
    }

    /// The fetch settings of a verifier built with `fetch_directories`.
    pub fn fetching(&self) -> Option<&DirectoryFetch> {
        self.fetching.as_ref()
    }

    /// This verifier with the replay store at `url` in place of its own,
    /// every other setting kept; the store is shared by its RFC 9421 and
    /// Web Bot Auth verifications.
    ///
    /// # Errors
    /// `usage` for a store that cannot be opened.
    pub fn with_replay_store(&self, url: &str) -> Outcome<Facade> {
        let store = open_store(url, self.inner.now())?;
        Ok(Facade {
            inner: self.inner.to_builder().replay_store(store.clone()).build(),
            wba: self.wba.clone().with_replay_store(store),
            ..self.clone()
        })
    }

    /// This verifier with the Web Bot Auth key sets of `sets` in place of
    /// its own, every other setting (and the replay store) kept: for a host
    /// that fetches the agents' key sets itself (the WebAssembly package,
    /// through the runtime's `fetch`) and hands them over for one
    /// verification.
    pub fn with_key_sets(&self, sets: Arc<dyn KeyDirectory>) -> Facade {
        Facade {
            directory: Some(sets),
            ..self.clone()
        }
    }

    /// Verify a descriptor against its detached JWS over the RFC 8785
    /// canonical form (draft-narvaneni-agent-uri-03 section 10.3), as
    /// `agentsig verify` reports it (`details.canonical_sha256`).
    ///
    /// # Errors
    /// A [`Failure`]: not verified (with the report), or bad input.
    pub fn verify_descriptor(&self, doc: &[u8], jws: &str) -> Outcome<Report> {
        use crate::descriptor::DescriptorError as E;
        let limits = *self.inner.limits();
        if jws.len() > limits.max_jws_bytes {
            return Err(Failure::too_large("jws", jws.len(), limits.max_jws_bytes));
        }
        let r = match self.inner.verify_descriptor(doc, jws) {
            Ok(r) => r,
            Err(E::NotVerified(r)) => *r,
            Err(E::TooLarge(n)) => {
                return Err(Failure::too_large("doc", n, limits.max_document_bytes))
            }
            Err(E::Json(e)) => {
                return Err(Failure::malformed(format!(
                    "descriptor is not strict I-JSON: {e}"
                )))
            }
            Err(E::Jws(crate::jws::JwsError::PayloadDiffers)) => {
                return Err(refused(
                    "verify",
                    "payload-differs",
                    "the JWS carries a payload that differs from the descriptor",
                ))
            }
            Err(e) => return Err(Failure::malformed(format!("JWS: {e}"))),
        };
        let mut json = Report::from_jws("verify", None, &r.jws);
        json.detail("canonical_sha256", r.canonical_sha256());
        settle(json)
    }

    /// Verify the embedded signatures of an A2A Agent Card; `require_all`:
    /// every signature must verify.
    ///
    /// # Errors
    /// A [`Failure`]: not verified (with the report), or bad input.
    pub fn verify_card(&self, card: &Value, require_all: bool) -> Outcome<Report> {
        use crate::a2a::A2aError as E;
        let r = match self.inner.verify_agent_card_value(card) {
            Ok(r) => r,
            Err(E::NotVerified(r)) => *r,
            Err(E::Json(e)) => return Err(Failure::malformed(format!("card: {e}"))),
            Err(e) => {
                let code = match e {
                    E::NoSignatures => "a2a.no-signatures",
                    E::BadSignature { .. } => "a2a.bad-signature-entry",
                    _ => "a2a.malformed-card",
                };
                return Err(refused("verify", code, &e.to_string()));
            }
        };
        settle(Report::from_card("verify", None, &r, require_all))
    }

    /// Verify the RFC 9421 signatures of a response with its covered
    /// Content-Digest (RFC 9530); `related` is the request it answers
    /// (method, absolute URL, headers, body), for `;req` components.
    ///
    /// # Errors
    /// A [`Failure`]: not verified (with the report), or bad input.
    pub fn verify_response(
        &self,
        status: u16,
        headers: &Headers,
        body: Vec<u8>,
        related: Option<(&str, &str, &Headers, Vec<u8>)>,
    ) -> Outcome<Report> {
        let msg = Message::response(status, fields(headers), body);
        let rel = match related {
            Some((m, u, h, b)) => Some(request_message(m, u, h, b)?),
            None => None,
        };
        http_report(&self.inner, &msg, rel.as_ref())
    }

    /// Verify the RFC 9421 signatures of a request with its covered
    /// Content-Digest, plainly or under the Web Bot Auth profile (a
    /// `tag="web-bot-auth"` signature covering `Signature-Agent`, keyid the
    /// RFC 7638 thumbprint of a key of that agent;
    /// draft-meunier-webbotauth-httpsig-protocol section 5.2).
    ///
    /// # Errors
    /// A [`Failure`]: not verified, refused by policy, a key directory that
    /// could not be fetched (each with the report), or bad input.
    pub fn verify_request(&self, r: RequestCheck) -> Outcome<Report> {
        self.verify_request_result(r)?.into_report()
    }

    /// [`Facade::verify_request`] before its report is made: a Web Bot
    /// Auth verification's own results, which a binding that only
    /// serializes the report can write without building it
    /// ([`RequestResult::WebBotAuth`]).
    pub(crate) fn verify_request_result(&self, r: RequestCheck) -> Outcome<RequestResult> {
        let authorities = r
            .authorities
            .as_deref()
            .map(authorities_policy)
            .transpose()?;
        // The request's fields move into the message: no copy of them.
        let line = verified_request_line(&r.method, &r.target, r.scheme.as_deref(), &r.headers)?;
        let msg = crate::httpsig::Message::request(line, into_fields(r.headers), r.body);
        if r.web_bot_auth {
            let Some(directory) = &self.directory else {
                let s = self.spelling;
                return Err(Failure::usage(format!(
                    "Web Bot Auth needs the agents' keys: build the Verifier with {} or {}",
                    s.name("agent_keys"),
                    s.set_true("fetch_directories")
                )));
            };
            let mut wba = self.wba.clone();
            wba.policy.authorities = authorities;
            if r.strict {
                add_strict(&mut wba.policy.required);
                wba.policy.require_nonce = true;
            }
            let now = self.inner.now();
            let run = || wba.verify(&msg, directory.as_ref(), now);
            // Every key-directory fetch of this verification ends by the
            // deadline, so a request naming slow directories cannot hold
            // the caller for long.
            let rep = match self.net {
                Some(n) => {
                    let mut out = None;
                    n.within(Instant::now() + n.deadline(), &mut || out = Some(run()));
                    match out {
                        Some(rep) => rep,
                        None => run(),
                    }
                }
                None => run(),
            };
            return Ok(RequestResult::WebBotAuth {
                report: rep,
                target: r.target,
            });
        }
        if authorities.is_none() && !r.strict {
            return http_report(&self.inner, &msg, None).map(RequestResult::Done);
        }
        let mut hp = self.inner.http_policy().clone();
        hp.authorities = authorities;
        if r.strict {
            add_strict(&mut hp.required);
            hp.require_nonce = true;
        }
        let v = self.inner.to_builder().http(hp).build();
        http_report(&v, &msg, None).map(RequestResult::Done)
    }

    /// Audit a delegation chain (RFC 8693, RFC 9068, RFC 8725), subject
    /// token first, as `agentsig delegation audit` does; `issuer` and
    /// `audience` are required of the tokens when given, `deny_warnings`
    /// fails the audit on a warning.
    ///
    /// # Errors
    /// A [`Failure`]: not verified or refused (with the report), or bad
    /// input (no token, more than [`crate::policy::MAX_HOPS`], a token
    /// above the JWT bound).
    pub fn audit_delegation(
        &self,
        tokens: &[String],
        issuer: Option<Vec<String>>,
        audience: Option<String>,
        deny_warnings: bool,
    ) -> Outcome<Report> {
        if tokens.is_empty() {
            return Err(Failure::malformed("no token to audit"));
        }
        if tokens.len() > crate::policy::MAX_HOPS {
            return Err(Failure::malformed(format!(
                "{} tokens: a bundle holds at most {}",
                tokens.len(),
                crate::policy::MAX_HOPS
            )));
        }
        let max = self.inner.limits().max_jwt_bytes;
        if let Some(t) = tokens.iter().find(|t| t.len() > max) {
            return Err(Failure::too_large("a token", t.len(), max));
        }
        let mut jwt = crate::policy::JwtPolicy::delegation();
        if let Some(i) = issuer {
            jwt = jwt.issuers(i);
        }
        if let Some(a) = audience {
            jwt = jwt.audience(a);
        }
        let v = self
            .inner
            .to_builder()
            .jwt(jwt)
            .audit(
                self.inner
                    .audit_policy()
                    .clone()
                    .deny_warnings(deny_warnings),
            )
            .build();
        let refs: Vec<&str> = tokens.iter().map(String::as_str).collect();
        let r = match v.audit_delegation(&refs) {
            Ok(r) => r,
            Err(e) => *e.report,
        };
        settle(Report::from_audit(
            "delegation audit",
            None,
            &r,
            deny_warnings,
        ))
    }

    /// Verify an AI Catalog document ([`Verifier::verify_catalog`]) as
    /// `agentsig verify CATALOG --json` reports it (one check and one
    /// `details.entries` result per entry): with this verifier's trusted
    /// keys for every manifest identity when it has some (`--key K`), else
    /// with each identity's keys resolved through its fetcher
    /// ([`Facade::resolves_catalog_keys`]; the verifier must fetch:
    /// `fetch_directories`); `allow_unsigned`: a catalog some entry of
    /// which no trusted key vouches for, with nothing failed, is returned
    /// with the verdict `unsigned` instead of raised (code
    /// `catalog.unsigned`); `require_signed`: every entry must carry a
    /// verified Trust Manifest.
    ///
    /// # Errors
    /// A [`Failure`]: not verified (code `catalog.not-verified`, with the
    /// report), or bad input (above [`crate::catalog::MAX_CATALOG_BYTES`],
    /// not strict JSON; `usage` for no keys and no fetching).
    pub fn verify_catalog(
        &self,
        catalog: &[u8],
        subject: Option<&str>,
        require_signed: bool,
        allow_unsigned: bool,
    ) -> Outcome<Report> {
        self.verify_catalog_signed(catalog, None, subject, require_signed, allow_unsigned)
    }

    /// [`Facade::verify_catalog`] with the catalog's detached JWS
    /// (`ai-catalog.json.jws`: a JWS over the RFC 8785 form of the whole
    /// document, draft-narvaneni-agent-uri-03 section 10.3), checked with
    /// the keys of `host.identifier` only: verified, it binds every inline
    /// artifact of the document (binding `catalog-signature`); by a key not
    /// trusted it is not checked; failing with a trusted key it fails the
    /// catalog ([`crate::catalog::CatalogOptions::catalog_jws`]).
    ///
    /// # Errors
    /// As [`Facade::verify_catalog`]; bad input (`input.unreadable`) for a
    /// JWS above the verifier's `max_jws_bytes`, the bound of every JWS.
    pub fn verify_catalog_signed(
        &self,
        catalog: &[u8],
        catalog_jws: Option<&str>,
        subject: Option<&str>,
        require_signed: bool,
        allow_unsigned: bool,
    ) -> Outcome<Report> {
        let max = self.inner.limits().max_jws_bytes;
        if let Some(j) = catalog_jws.filter(|j| j.len() > max) {
            return Err(Failure::too_large("jws", j.len(), max));
        }
        let opts = crate::catalog::CatalogOptions::default()
            .require_signed(require_signed)
            .catalog_jws(catalog_jws.map(str::to_owned));
        let r = if self.resolves_catalog_keys() {
            let (Some(net), Some(o)) = (self.net, &self.fetching) else {
                return Err(Failure::usage(format!(
                    "no keys: give {} or {}, or {} to resolve each Trust Manifest identity's keys",
                    self.spelling.name("keys"),
                    self.spelling.name("jwks"),
                    self.spelling.set_true("fetch_directories")
                )));
            };
            net.verify_catalog_resolved(&self.inner, o, catalog, &opts)
                .map_err(|e| Failure::usage(format!("HTTPS client: {e}")))?
        } else {
            self.inner.verify_catalog(catalog, &opts)
        }
        .map_err(catalog_error)?;
        super::error::settle_accepting(
            Report::from_catalog("verify", subject, &r),
            allow_unsigned && !require_signed,
        )
    }
}

/// A catalog that could not be read at all: too large (`input.unreadable`)
/// or not strict JSON (`input.malformed`).
pub fn catalog_error(e: crate::catalog::CatalogError) -> Failure {
    match e {
        crate::catalog::CatalogError::TooLarge { len, max } => {
            Failure::too_large("the catalog", len, max)
        }
        other => Failure::malformed(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facade::{sign_request, ErrorKind, RequestSigning};
    use crate::trust::KeySource;
    use crate::SigningKey;
    use serde_json::json;

    const NOW: i64 = 1_760_000_000;

    fn key() -> SigningKey {
        SigningKey::from_ed25519_seed(&[8u8; 32]).unwrap()
    }

    fn facade(o: impl FnOnce(&mut VerifierOptions)) -> Facade {
        let mut opts = VerifierOptions::default();
        opts.keys
            .add(key().verifying_key().clone(), KeySource::Pinned);
        opts.now = Some(NOW);
        o(&mut opts);
        opts.build(None).unwrap()
    }

    fn signed_catalog() -> Value {
        // Inline, so that signing binds it (a url entry at hand is not
        // fetched: nothing binds its bytes).
        let entry = json!({"identifier": "urn:a", "displayName": "A", "mediaType": "application/zip", "data": {"a": 1}});
        let mut doc = json!({"specVersion": "1.0", "entries": [entry]});
        crate::catalog::sign_catalog(&mut doc, &key(), &crate::catalog::SignTarget::Every).unwrap();
        doc
    }

    #[test]
    fn a_signed_catalog_verifies_with_one_result_per_entry() {
        let text = signed_catalog().to_string();
        let r = facade(|_| {})
            .verify_catalog(text.as_bytes(), None, true, false)
            .unwrap();
        let j = serde_json::to_value(&r).unwrap();
        assert_eq!(j["verdict"], "verified");
        assert_eq!(j["details"]["entries"][0]["manifest"]["status"], "verified");
        assert_eq!(j["details"]["entries"][0]["binding"], "manifest-digest");
        assert_eq!(j["details"]["require_signed"], true);
    }

    /// The catalog's detached JWS by a trusted key binds an inline entry
    /// no manifest binds; the entry changed after signing is no longer
    /// bound and the JWS fails the catalog; without the JWS it is unbound.
    #[test]
    fn the_catalog_jws_binds_inline_entries() {
        let doc = json!({"specVersion": "1.0", "host": {"displayName": "H", "identifier": "did:web:h.example"},
            "entries": [{"identifier": "urn:a", "displayName": "A", "mediaType": "application/zip", "data": {"a": 1}}]});
        let text = doc.to_string();
        let jws = crate::descriptor::sign(text.as_bytes(), &key())
            .unwrap()
            .jws;
        let binding = |r: &Report| {
            serde_json::to_value(r).unwrap()["details"]["entries"][0]["binding"].clone()
        };
        let r = facade(|_| {})
            .verify_catalog_signed(text.as_bytes(), Some(&jws), None, false, false)
            .unwrap();
        assert_eq!(binding(&r), "catalog-signature");
        let mut changed = doc.clone();
        changed["entries"][0]["data"]["a"] = json!(2);
        let f = facade(|_| {})
            .verify_catalog_signed(
                changed.to_string().as_bytes(),
                Some(&jws),
                None,
                false,
                true,
            )
            .unwrap_err();
        assert_eq!(f.code, "catalog.not-verified");
        let r = f.report.expect("report");
        assert_eq!(binding(&r), "unbound");
        let r = facade(|_| {})
            .verify_catalog_signed(text.as_bytes(), None, None, false, true)
            .unwrap();
        assert_eq!(
            (binding(&r), r.verdict),
            (json!("unbound"), Verdict::Unsigned)
        );
    }

    /// The bindings' `catalog` call (the WebAssembly package) reads the
    /// catalog's detached JWS as `jws`: the inline entry it binds makes the
    /// catalog verified, as `agentsig verify FILE --jws`; a JWS that is not
    /// a string or is above the JWS bound is bad input.
    #[test]
    fn the_catalog_call_takes_the_catalog_jws() {
        use crate::facade::calls::{verify, Args};
        let doc = json!({"specVersion": "1.0", "host": {"displayName": "H", "identifier": "urn:h"},
            "entries": [{"identifier": "urn:a", "displayName": "A", "mediaType": "application/zip", "data": {"a": 1}}]});
        let text = doc.to_string().into_bytes();
        let jws = crate::descriptor::sign(&text, &key()).unwrap().jws;
        let v = facade(|_| {});
        let call = |args: Value| {
            verify(
                &v,
                "catalog",
                &Args::parse(&args.to_string()).unwrap(),
                text.clone(),
                Vec::new(),
            )
        };
        let r: Value = serde_json::from_str(&call(json!({"jws": jws})).unwrap()).unwrap();
        assert_eq!(r["verdict"], "verified", "{r}");
        assert_eq!(r["details"]["entries"][0]["binding"], "catalog-signature");
        let unsigned = call(json!({"requireSigned": false})).unwrap_err();
        assert_eq!(unsigned.code, "catalog.unsigned");
        assert_eq!(call(json!({"jws": 7})).unwrap_err().code, "usage");
        let big = "a".repeat(crate::policy::MAX_JWS_BYTES + 1);
        assert_eq!(
            call(json!({"jws": big})).unwrap_err().code,
            "input.unreadable"
        );
    }

    /// A catalog in which nothing failed but no trusted key vouches for an
    /// entry is `unsigned`: raised by default, returned (never verified)
    /// when the caller accepts unsigned documents, raised again under
    /// `require_signed`.
    #[test]
    fn an_unsigned_catalog_is_unsigned_refused_unless_accepted() {
        let mut doc = signed_catalog();
        doc["entries"]
            .as_array_mut()
            .unwrap()
            .push(json!({"identifier": "urn:b", "displayName": "B", "mediaType": "application/zip", "url": "https://example.com/b"}));
        let text = doc.to_string();
        let f = facade(|_| {})
            .verify_catalog(text.as_bytes(), None, false, false)
            .unwrap_err();
        assert_eq!(
            (f.kind, f.code.as_str()),
            (ErrorKind::NotVerified, "catalog.unsigned")
        );
        let r = facade(|_| {})
            .verify_catalog(text.as_bytes(), None, false, true)
            .unwrap();
        assert_eq!((r.verdict, r.verified), (Verdict::Unsigned, false));
        assert!(r.error.as_ref().unwrap().message.contains("urn:b"));
        let f = facade(|_| {})
            .verify_catalog(text.as_bytes(), None, true, true)
            .unwrap_err();
        assert_eq!(f.report.unwrap().verdict, Verdict::Unsigned);
    }

    #[test]
    fn a_tampered_manifest_is_not_verified_with_the_report() {
        let mut doc = signed_catalog();
        doc["entries"][0]["trustManifest"]["termsOfServiceUrl"] = json!("https://evil.example/");
        let f = facade(|_| {})
            .verify_catalog(doc.to_string().as_bytes(), None, false, false)
            .unwrap_err();
        assert_eq!(
            (f.kind, f.code.as_str()),
            (ErrorKind::NotVerified, "catalog.not-verified")
        );
        let j = serde_json::to_value(f.report.unwrap()).unwrap();
        assert_eq!(j["details"]["entries"][0]["manifest"]["status"], "failed");
        assert!(j["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["code"] == "catalog.entry" && c["passed"] == false));
    }

    #[test]
    fn an_oversized_or_broken_catalog_is_bad_input() {
        let big = vec![b' '; crate::catalog::MAX_CATALOG_BYTES + 1];
        let f = facade(|_| {})
            .verify_catalog(&big, None, false, false)
            .unwrap_err();
        assert_eq!(
            (f.kind, f.code.as_str()),
            (ErrorKind::BadInput, "input.unreadable")
        );
        let f = facade(|_| {})
            .verify_catalog(b"{", None, false, false)
            .unwrap_err();
        assert_eq!(
            (f.kind, f.code.as_str()),
            (ErrorKind::BadInput, "input.malformed")
        );
    }

    #[test]
    fn without_keys_a_catalog_needs_a_verifier_that_fetches() {
        let given = facade(|_| {});
        assert!(!given.resolves_catalog_keys());
        let mut dir = crate::webbotauth::StaticDirectory::new();
        dir.insert(
            "https://agent.example/keys",
            vec![key().verifying_key().clone()],
        );
        let mut o = VerifierOptions {
            agent_keys: Some(dir),
            spelling: Spelling::Camel,
            ..Default::default()
        };
        o.now = Some(NOW);
        let wba_only = o.build(None).unwrap();
        assert!(wba_only.resolves_catalog_keys());
        let doc = serde_json::to_vec(&signed_catalog()).unwrap();
        let f = wba_only
            .verify_catalog(&doc, None, false, false)
            .unwrap_err();
        assert_eq!((f.kind, f.code.as_str()), (ErrorKind::BadInput, "usage"));
        assert_eq!(
            f.message,
            "no keys: give keys or jwks, or fetchDirectories: true to resolve each Trust Manifest identity's keys"
        );
    }

    fn signed_request(o: &RequestSigning) -> RequestCheck {
        let h = sign_request("GET", "https://api.example/p", &[], Vec::new(), &key(), o).unwrap();
        RequestCheck {
            method: "GET".into(),
            target: "https://api.example/p".into(),
            headers: h,
            ..RequestCheck::default()
        }
    }

    #[test]
    fn strict_and_authorities_are_policy_refusals() {
        let o = RequestSigning {
            created: Some(NOW),
            components: Some(vec!["@authority".into()]),
            ..Default::default()
        };
        let v = facade(|_| {});
        assert!(v.verify_request(signed_request(&o)).unwrap().verified);
        let mut strict = signed_request(&o);
        strict.strict = true;
        assert_eq!(
            v.verify_request(strict).unwrap_err().kind,
            ErrorKind::PolicyRefused
        );
        let mut elsewhere = signed_request(&o);
        elsewhere.authorities = Some(vec!["other.example".into()]);
        let f = v.verify_request(elsewhere).unwrap_err();
        assert_eq!(
            (f.kind, f.code.as_str()),
            (ErrorKind::PolicyRefused, "wrong-authority")
        );
        let mut bad = signed_request(&o);
        bad.authorities = Some(vec!["not an authority/".into()]);
        assert_eq!(v.verify_request(bad).unwrap_err().code, "usage");
    }

    #[test]
    fn web_bot_auth_needs_agent_keys_and_a_replay_store_is_shared() {
        let o = RequestSigning {
            created: Some(NOW),
            ..Default::default()
        };
        let mut c = signed_request(&o);
        c.web_bot_auth = true;
        let f = facade(|_| {}).verify_request(c).unwrap_err();
        assert_eq!(f.code, "usage");
        assert!(f.message.contains("agent_keys"), "{}", f.message);
        let v = facade(|_| {});
        assert!(v.verifier().replay_store().is_none());
        let r = v.with_replay_store("memory").unwrap();
        assert!(r.verifier().replay_store().is_some());
        assert_eq!(v.with_replay_store("bogus://x").unwrap_err().code, "usage");
    }

    #[test]
    fn a_verified_web_bot_auth_view_is_the_report() {
        const AGENT: &str = "https://agent.example";
        let mut dir = crate::webbotauth::StaticDirectory::new();
        dir.insert(
            &format!("{AGENT}/.well-known/http-message-signatures-directory"),
            vec![key().verifying_key().clone()],
        );
        let v = facade(|o| o.agent_keys = Some(dir));
        let wba = |label: &str| RequestSigning {
            web_bot_auth: true,
            signature_agent: Some(AGENT.into()),
            label: label.into(),
            created: Some(NOW),
            ..Default::default()
        };
        let url = "https://api.example/p";
        let one = sign_request("GET", url, &[], Vec::new(), &key(), &wba("sig1")).unwrap();
        // A second label by a key the agent's set does not hold: the
        // request verifies by the first, the second does not verify.
        let other = SigningKey::from_ed25519_seed(&[9u8; 32]).unwrap();
        let two = sign_request("GET", url, &one, Vec::new(), &other, &wba("late")).unwrap();
        let mut unsigned = one.clone();
        unsigned.retain(|(n, _)| !n.eq_ignore_ascii_case("signature"));
        for (headers, labels) in [(one, 1), (two, 2), (unsigned, 0)] {
            let check = || RequestCheck {
                method: "GET".into(),
                target: url.into(),
                headers: headers.clone(),
                web_bot_auth: true,
                ..RequestCheck::default()
            };
            let RequestResult::WebBotAuth { report, target } =
                v.verify_request_result(check()).unwrap()
            else {
                panic!("not a Web Bot Auth result");
            };
            let view = report.verified_view(WEB_BOT_AUTH_COMMAND, Some(&target));
            let Ok(full) = v.verify_request(check()) else {
                assert!(view.is_none(), "a view of a request that did not verify");
                assert_eq!(labels, 0);
                continue;
            };
            let view = view.expect("a view of a verified request");
            assert_eq!(full.signatures.len(), labels);
            assert_eq!(
                serde_json::to_string(&view).unwrap(),
                serde_json::to_string(&full).unwrap()
            );
            assert_eq!(
                crate::facade::tape::tape_of(&view).unwrap(),
                crate::facade::tape::report_tape(&full).unwrap()
            );
        }
    }
}
