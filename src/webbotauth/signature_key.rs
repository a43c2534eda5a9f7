//! `Signature-Key` (`draft-hardt-httpbis-signature-key-07`, 4 July 2026):
//! an optional way for a request to say where its signing key comes from.
//! **This tracks an Internet-Draft whose next revision is announced as
//! incompatible; it is not part of Web Bot Auth (protocol-02 and WG-00 drop
//! the reference) and is used only when asked for.**
//!
//! `Signature-Key` is an RFC 9651 Dictionary keyed by signature label; each
//! member is a Token naming the scheme, with the scheme's parameters. Two
//! schemes are verified:
//! * `hwk`: the public key inline (`kty` plus `crv`/`x`, `crv`/`x`/`y` or
//!   `n`/`e`, all Strings; `alg` MUST NOT be present). The identity is the
//!   key's RFC 7638 thumbprint only (pseudonymous).
//! * `jwks_uri`: `id` (the signer's https URL), `dwk` (a well-known name)
//!   and `kid`: the key is the one with that `kid` in the JWK Set named by
//!   the `jwks_uri` of `{id}/.well-known/{dwk}`. The identity is `id`. The
//!   fetching is done by a [`JwksUriResolver`] (the network one is
//!   `crate::net::webbotauth::DirectoryClient`).
//!
//! The signature must cover `signature-key` (section 3: verifiers SHOULD
//! reject requests that do not; agentsig does), so the scheme and identity
//! cannot be swapped; the rest of the [`Policy`] applies as for Web Bot Auth
//! (algorithms, allowed agents for `jwks_uri`, validity bound, nonce and
//! replay). Other schemes (`jkt-jwt`, `jwt`, `self-jwt`, `x509`) are
//! reported as unsupported.

use super::{DirectoryError, Error, Policy, WebBotAuthVerifier};
use crate::alg::Algorithm;
use crate::httpsig::components::{ComponentId, Derived};
use crate::httpsig::message::Message;
use crate::httpsig::{HttpPolicy, SigError};
use crate::keys::VerifyingKey;
use crate::sfv::{self, BareItem, Entry};
use crate::trust::{KeySource, TrustedKey};

/// The field name, lowercase.
pub const SIGNATURE_KEY: &str = "signature-key";

/// One `Signature-Key` member.
#[derive(Debug, Clone, PartialEq)]
pub enum Scheme {
    /// `hwk`: an inline public key.
    Hwk(Box<crate::jwk::Jwk>),
    /// `jwks_uri`: a key published by the signer.
    JwksUri {
        /// The signer's https URL.
        id: String,
        /// The well-known name of its metadata document.
        dwk: String,
        /// The key's `kid`.
        kid: String,
    },
    /// Another scheme; holds its name.
    Unsupported(String),
}

/// Where `jwks_uri` keys come from.
pub trait JwksUriResolver: Send + Sync {
    /// The key with `kid` in the JWK Set named by the `jwks_uri` member of
    /// `{id}/.well-known/{dwk}`.
    ///
    /// # Errors
    /// [`DirectoryError`] when the key cannot be obtained. The network resolver,
    /// `crate::net::webbotauth::DirectoryClient`, answers why the fetch of either document failed
    /// (connection, DNS or TLS failure, SSRF refusal, redirect, a status other than 200, too
    /// large, timeout, or [`DirectoryError::Busy`] when it already has its most fetches in
    /// progress); [`DirectoryError::Malformed`] for a metadata document that is not strict
    /// I-JSON or has no `https` `jwks_uri`, for a JWK Set that cannot be read, or for a key it
    /// cannot use; [`DirectoryError::TooManyKeys`] for a set of more than
    /// [`MAX_KEYS`](super::directory::MAX_KEYS) keys; and [`DirectoryError::NotKnown`] when the
    /// set has no public key with `kid`.
    fn jwks_uri_key(&self, id: &str, dwk: &str, kid: &str) -> Result<VerifyingKey, DirectoryError>;
}

/// The verified signer of one label.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct SignatureKeyVerified {
    /// The label.
    pub label: String,
    /// `hwk` or `jwks_uri`.
    pub scheme: &'static str,
    /// `jwks_uri`: the `id` URL; `hwk`: `urn:jkt:sha-256:<thumbprint>`.
    pub identity: String,
    /// The key's RFC 7638 thumbprint.
    pub thumbprint: String,
    /// The key's algorithm.
    pub alg: &'static str,
}

fn param<'a>(p: &'a sfv::Params, k: &str) -> Option<&'a str> {
    p.iter().find(|(n, _)| n == k).and_then(|(_, v)| match v {
        BareItem::String(s) => Some(s.as_str()),
        _ => None,
    })
}

/// Parse the `Signature-Key` field: one entry per label.
///
/// # Errors
/// [`Error::SignatureAgentMalformed`] (the variant is shared with `Signature-Agent`) when the
/// joined field is larger than [`MAX_SIGNATURE_AGENT_FIELD`](super::MAX_SIGNATURE_AGENT_FIELD),
/// is not an RFC 9651 Dictionary, repeats a label or has more than
/// [`MAX_MEMBERS`](super::MAX_MEMBERS) members, or has a member that is not a Token, an `hwk`
/// member with an `alg` parameter, or a `jwks_uri` member without String `id`, `dwk` and `kid`
/// parameters. A member of another scheme is [`Scheme::Unsupported`], not an error, and an `hwk`
/// key is checked only when verifying.
pub fn parse(msg: &Message) -> Result<Vec<(String, Scheme)>, Error> {
    let lines: Vec<&[u8]> = msg.field_lines(SIGNATURE_KEY, false).collect();
    if lines.is_empty() {
        return Ok(Vec::new());
    }
    let joined = lines.join(&b", "[..]);
    if joined.len() > super::MAX_SIGNATURE_AGENT_FIELD {
        return Err(Error::SignatureAgentMalformed(
            "Signature-Key is too large".into(),
        ));
    }
    let d = sfv::parse_dictionary_raw(&joined)
        .map_err(|e| Error::SignatureAgentMalformed(format!("Signature-Key: {e}")))?;
    if d.first_duplicate().is_some() || d.0.len() > super::MAX_MEMBERS {
        return Err(Error::SignatureAgentMalformed(
            "Signature-Key has a repeated label or too many members".into(),
        ));
    }
    let mut out = Vec::new();
    for (label, e) in d.0 {
        let Entry::Item(it) = e else {
            return Err(Error::SignatureAgentMalformed(format!(
                "Signature-Key member {label:?} is not a Token"
            )));
        };
        let BareItem::Token(scheme) = &it.bare else {
            return Err(Error::SignatureAgentMalformed(format!(
                "Signature-Key member {label:?} is not a Token"
            )));
        };
        let p = &it.params;
        let s = match scheme.as_str() {
            "hwk" => {
                if p.iter().any(|(n, _)| n == "alg") {
                    return Err(Error::SignatureAgentMalformed(
                        "hwk must not carry alg (Signature-Key section 4.1)".into(),
                    ));
                }
                let get = |k: &str| param(p, k).map(str::to_owned);
                let jwk = crate::jwk::Jwk {
                    kty: get("kty").unwrap_or_default(),
                    crv: get("crv"),
                    x: get("x"),
                    y: get("y"),
                    n: get("n"),
                    e: get("e"),
                    ..Default::default()
                };
                Scheme::Hwk(Box::new(jwk))
            }
            "jwks_uri" => match (param(p, "id"), param(p, "dwk"), param(p, "kid")) {
                (Some(id), Some(dwk), Some(kid)) => Scheme::JwksUri {
                    id: id.to_owned(),
                    dwk: dwk.to_owned(),
                    kid: kid.to_owned(),
                },
                _ => {
                    return Err(Error::SignatureAgentMalformed(
                        "jwks_uri needs id, dwk and kid".into(),
                    ))
                }
            },
            other => Scheme::Unsupported(other.to_owned()),
        };
        out.push((label, s));
    }
    Ok(out)
}

/// One result per `Signature-Key` member: the label and the verified signer
/// or why not.
pub type SignatureKeyResults = Vec<(String, Result<SignatureKeyVerified, Error>)>;

/// Whether `dwk` is a usable well-known name (one path segment).
pub fn valid_dwk(dwk: &str) -> bool {
    !dwk.is_empty()
        && dwk.len() <= 128
        && dwk
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b))
        && dwk != "."
        && dwk != ".."
}

impl WebBotAuthVerifier {
    /// Verify the signatures a `Signature-Key` field names (see the module
    /// documentation). `jwks` resolves `jwks_uri` members; without it they
    /// fail with `directory-unknown`. One result per member, in order.
    /// Each `jwks_uri` signer costs two fetches made before its signature
    /// can be checked, so one request gets at most
    /// [`MAX_KEY_SETS_PER_REQUEST`](super::MAX_KEY_SETS_PER_REQUEST)
    /// distinct signers resolved, as for key directories; a member naming
    /// one more fails with `too-many-key-sets`, unresolved.
    ///
    /// # Errors
    /// [`Error::SignatureAgentMalformed`] when the `Signature-Key` field is malformed (see
    /// [`parse`]). Every failure of one member (unsupported scheme, unusable key, unresolvable
    /// `jwks_uri`, a signature that does not verify) is its result instead.
    pub fn verify_signature_key(
        &self,
        msg: &Message,
        jwks: Option<&dyn JwksUriResolver>,
        now: i64,
    ) -> Result<SignatureKeyResults, Error> {
        let members = parse(msg)?;
        let budgeted = jwks.map(|inner| Budgeted {
            inner,
            consulted: super::KeySetBudget::default(),
        });
        let jwks = budgeted.as_ref().map(|b| b as &dyn JwksUriResolver);
        Ok(members
            .into_iter()
            .map(|(label, scheme)| {
                let r = self.verify_one_key(msg, &label, &scheme, jwks, now);
                (label, r)
            })
            .collect())
    }

    fn verify_one_key(
        &self,
        msg: &Message,
        label: &str,
        scheme: &Scheme,
        jwks: Option<&dyn JwksUriResolver>,
        now: i64,
    ) -> Result<SignatureKeyVerified, Error> {
        let policy: &Policy = &self.policy;
        let claimed_alg = claimed_alg(msg, label);
        let (key, scheme_name, identity) = match scheme {
            Scheme::Unsupported(s) => return Err(Error::MemberType(s.clone())),
            Scheme::Hwk(jwk) => {
                // A key the request asserts about itself identifies only
                // "this key" (Signature-Key section 4.1: pseudonymous), never
                // an agent: it cannot satisfy an allow-list of agents.
                if policy.allowed_agents.is_some() {
                    return Err(Error::AgentNotAllowed(
                        "an inline hwk key (its identity is the key itself, not an agent)".into(),
                    ));
                }
                let hint = match jwk.kty.as_str() {
                    // An inline RSA key names no algorithm (alg MUST NOT be
                    // present): the signature's own alg binds it, and only
                    // to an RSA algorithm on the allow-list.
                    "RSA" => match claimed_alg {
                        Some(a @ (Algorithm::RsaPssSha512 | Algorithm::RsaV15Sha256)) => Some(a),
                        _ => return Err(Error::Signature(SigError::MissingParam("alg"))),
                    },
                    "oct" => return Err(Error::MemberType("hwk with a shared secret".into())),
                    _ => None,
                };
                let key = jwk
                    .to_verifying_key(hint)
                    .map_err(|e| Error::SignatureAgentMalformed(format!("hwk key: {e}")))?;
                let tp = key.thumbprint();
                (key, "hwk", format!("urn:jkt:sha-256:{tp}"))
            }
            Scheme::JwksUri { id, dwk, kid } => {
                let url = super::resolve_agent_url(id, Some("jwks_uri"))?;
                if !valid_dwk(dwk) {
                    return Err(Error::AgentUrl(format!("{id} (dwk {dwk:?})")));
                }
                if let Some(allowed) = &policy.allowed_agents {
                    // The keys come from under `id`, the signer's identity:
                    // an allow-list entry admits that exact identity only.
                    if !allowed.iter().any(|a| {
                        super::resolve_agent_url(a, None).is_ok_and(|x| x.agent == url.agent)
                    }) {
                        return Err(Error::AgentNotAllowed(url.agent.clone()));
                    }
                }
                let r = jwks.ok_or_else(|| DirectoryError::NotKnown(url.agent.clone()))?;
                // `{id}/.well-known/{dwk}`: the identity is `id` with its path, so
                // the metadata must come from under it, not from its origin.
                let key = r.jwks_uri_key(&url.agent, dwk, kid)?;
                (key, "jwks_uri", url.agent.clone())
            }
        };
        if key.is_symmetric() {
            return Err(Error::MemberType("a shared secret".into()));
        }
        let (created, expires) = (
            param_int(msg, label, "created"),
            param_int(msg, label, "expires"),
        );
        if let (Some(c), Some(e)) = (created, expires) {
            let lifetime = e.saturating_sub(c);
            if lifetime > i64::try_from(policy.max_validity).unwrap_or(i64::MAX) {
                return Err(Error::ValidityTooLong {
                    lifetime,
                    max: policy.max_validity,
                });
            }
        }
        let thumbprint = key.thumbprint();
        if policy.reject_test_keys && super::RFC9421_TEST_KEYS.contains(&thumbprint.as_str()) {
            return Err(Error::TestKey(thumbprint));
        }
        if policy.require_tls {
            if let crate::httpsig::message::Kind::Request(line) = &msg.kind {
                if !line.scheme.eq_ignore_ascii_case("https") {
                    return Err(Error::NotTls(line.scheme.clone()));
                }
            }
        }
        let alg = key.algorithm().httpsig_name();
        let trusted = TrustedKey::new(key, KeySource::Discovered(identity.clone()));
        let mut hp = HttpPolicy::new();
        hp.labels = Some(vec![label.to_owned()]);
        hp.require_keyid = false;
        hp.require_expires = true;
        hp.require_nonce = policy.require_nonce;
        hp.require_content_digest = policy.require_content_digest;
        hp.max_age = None;
        hp.check_time = policy.check_time;
        hp.required = policy.required.clone();
        hp.required
            .push(ComponentId::field(SIGNATURE_KEY).map_err(|e| Error::Sign(e.to_string()))?);
        hp.request_target_one_of = vec![
            ComponentId::derived(Derived::Authority),
            ComponentId::derived(Derived::TargetUri),
        ];
        hp.authorities = policy.authorities.clone();
        self.verify_one(msg, &hp, trusted, now)?;
        Ok(SignatureKeyVerified {
            label: label.to_owned(),
            scheme: scheme_name,
            identity,
            thumbprint,
            alg,
        })
    }
}

/// A [`JwksUriResolver`] that resolves at most
/// [`MAX_KEY_SETS_PER_REQUEST`](super::MAX_KEY_SETS_PER_REQUEST) distinct
/// signers (`id` and `dwk`): one per request being verified.
struct Budgeted<'a> {
    inner: &'a dyn JwksUriResolver,
    consulted: super::KeySetBudget,
}

impl JwksUriResolver for Budgeted<'_> {
    fn jwks_uri_key(&self, id: &str, dwk: &str, kid: &str) -> Result<VerifyingKey, DirectoryError> {
        // The signer's metadata URL names it (`id` and `dwk`).
        self.consulted
            .admit(&format!("{}/.well-known/{dwk}", id.trim_end_matches('/')))?;
        self.inner.jwks_uri_key(id, dwk, kid)
    }
}

fn input_params(msg: &Message, label: &str) -> Option<sfv::Params> {
    let lines: Vec<&[u8]> = msg.field_lines("signature-input", false).collect();
    let d = sfv::parse_dictionary_raw(&lines.join(&b", "[..])).ok()?;
    match d.get(label)? {
        Entry::InnerList(l) => Some(l.params.clone()),
        _ => None,
    }
}

fn claimed_alg(msg: &Message, label: &str) -> Option<Algorithm> {
    let p = input_params(msg, label)?;
    crate::httpsig::param_str(&p, "alg").and_then(Algorithm::from_httpsig_name)
}

fn param_int(msg: &Message, label: &str, name: &str) -> Option<i64> {
    crate::httpsig::param_int(&input_params(msg, label)?, name)
}

/// The `Signature-Key` member of an inline key: `label=hwk;kty=...;...`.
///
/// # Errors
/// [`Error::Sign`] when `label` is not a valid label (an sf-key of 1 to
/// [`MAX_LABEL`](crate::httpsig::MAX_LABEL) characters).
pub fn hwk_member(label: &str, key: &VerifyingKey) -> Result<String, Error> {
    if !crate::httpsig::valid_label(label) {
        return Err(Error::Sign(format!("{label:?} is not a valid label")));
    }
    let j = key.to_jwk();
    let mut params: sfv::Params = vec![("kty".into(), BareItem::String(j.kty.clone()))];
    for (n, v) in [
        ("crv", &j.crv),
        ("x", &j.x),
        ("y", &j.y),
        ("n", &j.n),
        ("e", &j.e),
    ] {
        if let Some(v) = v {
            params.push((n.into(), BareItem::String(v.clone())));
        }
    }
    let mut out = format!("{label}=hwk");
    sfv::write_params(&mut out, &params);
    Ok(out)
}
