//! The one verifier configuration shared by every format: detached JWS and
//! descriptors ([`crate::jws`], [`crate::descriptor`]), JWT and delegation
//! audits ([`crate::jwt`], [`crate::delegation`]) and RFC 9421 messages
//! ([`crate::httpsig`]).
//!
//! A [`Verifier`] is owned, `Clone` (cheaply: its parts are behind `Arc`),
//! `Send + Sync`: build it once with [`Verifier::builder`] and share it
//! between threads, requests and a tower layer, as rustls shares a
//! `ClientConfig`.
//!
//! # Security contract
//! * Keys come only from the [`KeyResolver`]; algorithms only from the
//!   [`AllowList`] (default: the asymmetric algorithms; HMAC must be named).
//! * Every `verify` returns `Ok` only when something verified; a report of
//!   nothing verified is an `Err` that still carries the report.
//! * Time is the [`Clock`]'s; the tolerated skew is explicit (default 60 s),
//!   and so is the largest signature age (per format policy).
//! * With a [`ReplayStore`], JWT `jti` and RFC 9421 `nonce` are recorded
//!   only after everything else verified; a store that fails refuses.
//!
//! ```
//! use agentsig::trust::{KeySource, StaticKeys};
//! use agentsig::verifier::Verifier;
//! use agentsig::{descriptor, Algorithm, SigningKey};
//!
//! let key = SigningKey::generate(Algorithm::EcdsaP256Sha256).unwrap();
//! let doc = br#"{"name":"planner","version":"1.0.0"}"#;
//! let signed = descriptor::sign(doc, &key).unwrap();
//!
//! let verifier = Verifier::builder(StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned)).build();
//! let report = verifier.verify_descriptor(doc, &signed.jws).unwrap();
//! assert!(report.verified());
//! ```

use crate::alg::AllowList;
use crate::clock::Clock;
use crate::policy::{AuditPolicy, Context, JwsPolicy, JwtPolicy, KeyHeaderPolicy, Limits};
use crate::replay::ReplayStore;
use crate::trust::KeyResolver;
use std::sync::Arc;

/// The verifier: the shared [`Context`] (keys, algorithms, clock, replay
/// store, limits) and one policy per format (see the module documentation).
#[derive(Clone, Debug)]
#[must_use]
pub struct Verifier {
    cx: Context,
    jws: JwsPolicy,
    jwt: JwtPolicy,
    http: crate::httpsig::HttpPolicy,
    audit: AuditPolicy,
}

/// Builds a [`Verifier`]; every setting has a secure default.
#[derive(Clone, Debug)]
#[must_use]
pub struct VerifierBuilder {
    v: Verifier,
}

impl Verifier {
    /// Start a verifier that trusts the keys of `keys`.
    pub fn builder(keys: impl KeyResolver + 'static) -> VerifierBuilder {
        Verifier::builder_arc(Arc::new(keys))
    }

    /// Start a verifier from a shared resolver.
    pub fn builder_arc(keys: Arc<dyn KeyResolver>) -> VerifierBuilder {
        VerifierBuilder {
            v: Verifier {
                cx: Context::new(keys),
                jws: JwsPolicy::default(),
                jwt: JwtPolicy::default(),
                http: crate::httpsig::HttpPolicy::default(),
                audit: AuditPolicy::default(),
            },
        }
    }

    /// A builder holding this verifier's settings, to derive a variant.
    pub fn to_builder(&self) -> VerifierBuilder {
        VerifierBuilder { v: self.clone() }
    }

    /// The settings every format shares (keys, algorithms, clock, replay
    /// store, limits, skew, low-S, key headers).
    pub fn context(&self) -> &Context {
        &self.cx
    }
    /// The key resolver.
    pub fn keys(&self) -> &dyn KeyResolver {
        self.cx.keys()
    }
    /// The algorithm allow-list.
    pub fn algorithms(&self) -> &AllowList {
        self.cx.algorithms()
    }
    /// The clock.
    pub fn clock(&self) -> &dyn Clock {
        self.cx.clock()
    }
    /// The current time by the verifier's clock.
    pub fn now(&self) -> i64 {
        self.cx.now()
    }
    /// The replay store, if any.
    pub fn replay_store(&self) -> Option<&dyn ReplayStore> {
        self.cx.replay_store()
    }
    /// The size limits.
    pub fn limits(&self) -> &Limits {
        self.cx.limits()
    }
    /// The tolerated clock skew in seconds.
    pub fn skew(&self) -> u64 {
        self.cx.skew()
    }
    /// Whether ECDSA signatures must be in low-S form.
    pub fn strict_low_s(&self) -> bool {
        self.cx.strict_low_s()
    }
    /// What to do with JWS key headers.
    pub fn key_headers(&self) -> KeyHeaderPolicy {
        self.cx.key_headers()
    }
    /// The JWS policy.
    pub fn jws_policy(&self) -> &JwsPolicy {
        &self.jws
    }
    /// The JWT policy.
    pub fn jwt_policy(&self) -> &JwtPolicy {
        &self.jwt
    }
    /// The RFC 9421 policy.
    pub fn http_policy(&self) -> &crate::httpsig::HttpPolicy {
        &self.http
    }
    /// The delegation audit policy.
    pub fn audit_policy(&self) -> &AuditPolicy {
        &self.audit
    }

    /// Verify a JWS (RFC 7515): compact or JSON serialization, its payload
    /// attached or given as `detached` (RFC 7515 Appendix F, RFC 7797).
    ///
    /// # Errors
    /// [`JwsVerifyError::Jws`](crate::jws::JwsVerifyError::Jws) when the JWS
    /// cannot be read (too large, malformed, a payload that differs from
    /// `detached`); [`JwsVerifyError::NotVerified`](crate::jws::JwsVerifyError::NotVerified)
    /// with the per-signature report when no signature verified with a
    /// trusted key or one is invalid.
    ///
    /// # Example
    /// ```
    /// use agentsig::jws::{self, JwsVerifyError, SignOptions};
    /// use agentsig::trust::{KeySource, StaticKeys};
    /// use agentsig::{verifier::Verifier, Algorithm, SigningKey};
    ///
    /// let key = SigningKey::generate(Algorithm::Ed25519)?;
    /// let token = jws::sign_compact_detached(b"hello", &key, &SignOptions::default())?;
    /// let v = Verifier::builder(StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned)).build();
    /// assert!(v.verify_jws(&token, Some(b"hello")).is_ok());
    /// assert!(matches!(v.verify_jws(&token, Some(b"hellO")), Err(JwsVerifyError::NotVerified(_))));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn verify_jws(
        &self,
        jws: &str,
        detached: Option<&[u8]>,
    ) -> Result<crate::jws::JwsReport, crate::jws::JwsVerifyError> {
        crate::jws::verify(&self.cx, &self.jws, jws, detached)
    }

    /// Verify a descriptor against its detached JWS over the RFC 8785
    /// canonical form (draft-narvaneni-agent-uri-03 section 10.3).
    ///
    /// # Errors
    /// [`DescriptorError::TooLarge`](crate::descriptor::DescriptorError::TooLarge)
    /// over [`Limits::max_document_bytes`]; `Json` when the descriptor is not
    /// strict I-JSON; `Jws` when the JWS cannot be read; `NotVerified` with
    /// the report when nothing verified. See the module example.
    pub fn verify_descriptor(
        &self,
        descriptor: &[u8],
        jws: &str,
    ) -> Result<crate::descriptor::Report, crate::descriptor::DescriptorError> {
        crate::descriptor::verify(&self.cx, &self.jws, descriptor, jws)
    }

    /// Verify a compact JWT (RFC 7519, RFC 8725): signature, claims under
    /// [`Verifier::jwt_policy`] and, with a replay store, a fresh `jti`.
    ///
    /// # Errors
    /// [`JwtError`](crate::jwt::JwtError): the first failure, with a stable
    /// `code()`.
    ///
    /// # Example
    /// ```
    /// use agentsig::{jwt, trust::{KeySource, StaticKeys}, verifier::Verifier, Algorithm, SigningKey};
    /// let key = SigningKey::generate(Algorithm::EcdsaP256Sha256)?;
    /// let claims = serde_json::json!({"iss": "https://as.example", "sub": "alice", "exp": 4_000_000_000i64});
    /// let token = jwt::sign(claims.as_object().unwrap(), &key, "JWT")?;
    /// let v = Verifier::builder(StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned)).build();
    /// assert_eq!(v.verify_jwt(&token)?.claims["sub"], "alice");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn verify_jwt(&self, token: &str) -> Result<crate::jwt::VerifiedJwt, crate::jwt::JwtError> {
        crate::jwt::verify(&self.cx, &self.jwt, token)
    }

    /// Verify the signatures of an A2A Agent Card (its JSON bytes, strict
    /// I-JSON) against its normal form; see [`crate::a2a`].
    ///
    /// # Errors
    /// [`A2aError`](crate::a2a::A2aError): `Json` for a card that is not
    /// strict I-JSON, `NoSignatures` for an unsigned card, `NotVerified`
    /// with the report when a signature did not verify.
    ///
    /// # Example
    /// ```
    /// use agentsig::trust::{KeySource, StaticKeys};
    /// use agentsig::{a2a, Algorithm, SigningKey, Verifier};
    ///
    /// let key = SigningKey::generate(Algorithm::EcdsaP256Sha256)?;
    /// let card = serde_json::json!({"name": "Planner", "description": "plans",
    ///     "supportedInterfaces": [{"url": "https://planner.example/a2a", "protocolBinding": "JSONRPC"}],
    ///     "version": "1.0.0", "capabilities": {}, "defaultInputModes": ["text/plain"],
    ///     "defaultOutputModes": ["text/plain"], "skills": []});
    /// let signed = a2a::sign_card(&card, &key, &serde_json::Map::new(), false)?;
    /// let v = Verifier::builder(StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned)).build();
    /// let report = v.verify_agent_card(&serde_json::to_vec(&signed.card)?)?;
    /// assert!(report.verified_all());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn verify_agent_card(
        &self,
        card: &[u8],
    ) -> Result<crate::a2a::CardReport, crate::a2a::A2aError> {
        crate::a2a::verify_card_bytes(&self.cx, &self.jws, card)
    }

    /// [`Verifier::verify_agent_card`] for a card already parsed.
    ///
    /// # Errors
    /// As [`Verifier::verify_agent_card`].
    pub fn verify_agent_card_value(
        &self,
        card: &serde_json::Value,
    ) -> Result<crate::a2a::CardReport, crate::a2a::A2aError> {
        crate::a2a::verify_card(&self.cx, &self.jws, card)
    }

    /// Verify an AI Catalog document: lint (every MUST of the catalog
    /// text), the host's and each entry's Trust Manifest (identity equal to
    /// the entry's `identifier`, a compact detached JWS over the RFC 8785
    /// form without `signature`, by a key this verifier's resolver gives for
    /// that identity, asked for with the identity as issuer), and each
    /// inline artifact by its media type. See [`crate::catalog`].
    ///
    /// # Errors
    /// [`CatalogError`](crate::catalog::CatalogError) when the document is
    /// too large or not strict JSON; every other outcome is in the report
    /// ([`CatalogReport::verified`](crate::catalog::CatalogReport::verified)).
    pub fn verify_catalog(
        &self,
        catalog: &[u8],
        opts: &crate::catalog::CatalogOptions,
    ) -> Result<crate::catalog::CatalogReport, crate::catalog::CatalogError> {
        let cx = self.catalog_context();
        let mut r = crate::catalog::parallel::verify_catalog(&cx, &self.jws, catalog, opts)?;
        self.apply_catalog_jws(&cx, &mut r, catalog, opts);
        Ok(r)
    }

    /// The catalog's detached JWS ([`CatalogOptions::catalog_jws`](crate::catalog::CatalogOptions::catalog_jws)),
    /// when given, checked and applied to `report`.
    fn apply_catalog_jws(
        &self,
        cx: &Context,
        report: &mut crate::catalog::CatalogReport,
        catalog: &[u8],
        opts: &crate::catalog::CatalogOptions,
    ) {
        if let Some(jws) = &opts.catalog_jws {
            let o = crate::catalog::manifest::verify_catalog_jws(cx, &self.jws, catalog, jws);
            report.apply_catalog_signature(o);
        }
    }

    /// This verifier's context for a catalog: `did:key` and `did:jwk`
    /// identities answered with the key their identifier encodes (did:key
    /// and did:jwk Method "Read": decoding, no I/O), whatever keys were
    /// given, which replace network resolution but never a self-certifying
    /// identifier ([`crate::catalog::manifest::SelfCertifyingKeys`]). Every
    /// surface (CLI, library, Python, Node) verifies catalogs through here.
    fn catalog_context(&self) -> Context {
        let mut cx = self.cx.clone();
        cx.keys = Arc::new(crate::catalog::manifest::SelfCertifyingKeys::new(
            self.cx.keys.clone(),
        ));
        cx
    }

    /// [`Verifier::verify_catalog`] of the catalog fetched from `url`, its
    /// entries referenced by `url` (nested catalogs, A2A cards, MCP Server
    /// Cards) fetched through `fetch`, nested catalogs to
    /// [`CatalogOptions::max_depth`](crate::catalog::CatalogOptions::max_depth)
    /// levels with cycles refused. The `net` feature's
    /// `agentsig::net::catalog::verify_catalog_url` supplies the
    /// SSRF-guarded fetcher.
    ///
    /// # Errors
    /// As [`Verifier::verify_catalog`].
    pub fn verify_catalog_from(
        &self,
        catalog: &[u8],
        url: &str,
        fetch: &mut dyn crate::catalog::Fetch,
        opts: &crate::catalog::CatalogOptions,
    ) -> Result<crate::catalog::CatalogReport, crate::catalog::CatalogError> {
        let cx = self.catalog_context();
        let mut r = crate::catalog::verify::verify_catalog_with(
            &cx,
            &self.jws,
            catalog,
            opts,
            Some(url),
            Some(fetch),
        )?;
        self.apply_catalog_jws(&cx, &mut r, catalog, opts);
        Ok(r)
    }

    /// Verify one Trust Manifest (see [`Verifier::verify_catalog`]); when
    /// `identifier` is given (the entry's), the manifest's `identity` must
    /// equal it.
    pub fn verify_trust_manifest(
        &self,
        manifest: &serde_json::Value,
        identifier: Option<&str>,
    ) -> crate::catalog::Outcome {
        crate::catalog::manifest::verify_manifest(&self.cx, &self.jws, manifest, identifier)
    }

    /// Audit a delegation chain (RFC 8693): one token, or a bundle of
    /// tokens, one per hop, subject token first. Each token is verified as a
    /// JWT under [`Verifier::jwt_policy`] (the audience is checked on the
    /// last hop only); the chain under [`Verifier::audit_policy`].
    ///
    /// # Errors
    /// [`AuditError`](crate::delegation::AuditError), carrying the full
    /// report, when any check of severity error failed (or of severity
    /// warning, with [`AuditPolicy::deny_warnings`]): a bad signature, an
    /// untrusted key, an expired token, a broken linkage, a widened scope, a
    /// replayed `jti`, ...
    ///
    /// # Example
    ///
    /// ```
    /// use agentsig::delegation::mint::{mint, ActorSpec, MintRequest};
    /// use agentsig::clock::FixedClock;
    /// use agentsig::trust::{KeySource, StaticKeys};
    /// use agentsig::verifier::Verifier;
    /// use agentsig::{Algorithm, SigningKey};
    ///
    /// let now = 1_760_000_000;
    /// let key = SigningKey::generate(Algorithm::EcdsaP256Sha256)?;
    /// let mut req = MintRequest::new("https://as.example.com", "alice", now, 300);
    /// req.scope = Some("calendar.read".into());
    /// req.actors = vec![ActorSpec::new("agent-1")];
    /// let token = mint(&req, &key)?;
    ///
    /// let keys = StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned);
    /// let v = Verifier::builder(keys).clock(FixedClock(now)).build();
    /// let report = v.audit_delegation(&[&token])?;
    /// assert_eq!(report.hops[0].current_actor().map(|a| a.sub.as_str()), Some("agent-1"));
    ///
    /// // A tampered token fails: the error carries the report.
    /// let bad = format!("{token}x");
    /// let err = v.audit_delegation(&[&bad]).unwrap_err();
    /// assert!(!err.report.passed());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn audit_delegation(
        &self,
        tokens: &[&str],
    ) -> Result<crate::delegation::AuditReport, crate::delegation::AuditError> {
        crate::delegation::audit(&self.cx, &self.jwt, &self.audit, tokens)
    }

    /// Verify the RFC 9421 signatures of a message (every label, or the
    /// labels [`HttpPolicy::labels`](crate::httpsig::HttpPolicy::labels)
    /// names) with the verifier's keys, algorithms, clock, skew, replay store
    /// and `HttpPolicy`; `related` is the request a response answers (for
    /// `;req` components). For `http` crate types use [`VerifyHttp`].
    ///
    /// `Ok` only when at least one label was examined and every examined
    /// label verified. To accept a message that also carries signatures you
    /// do not trust (a proxy's), name your labels in the policy.
    ///
    /// # Example
    /// ```
    /// use agentsig::digest::content_digest;
    /// use agentsig::clock::FixedClock;
    /// use agentsig::httpsig::{self, ComponentId, Derived, HttpPolicy, HttpSigError,
    ///     Message, SigError, SignatureSpec};
    /// use agentsig::trust::{KeySource, StaticKeys};
    /// use agentsig::verifier::Verifier;
    /// use agentsig::{Algorithm, SigningKey};
    ///
    /// let key = SigningKey::generate(Algorithm::Ed25519)?;
    /// let keyid = key.kid_or_thumbprint();
    /// let now = 1_700_000_000;
    ///
    /// // The signer: a response with its Content-Digest, signed (section 3.1).
    /// let body = br#"{"name":"agent"}"#.to_vec();
    /// let mut res = Message::response(200, Vec::new(), body);
    /// res.add_header("Content-Type", "application/json");
    /// res.add_header("Content-Digest", &content_digest(&res.body));
    /// let spec = SignatureSpec::new("sig1")
    ///     .component(ComponentId::derived(Derived::Status))
    ///     .component(ComponentId::field("content-type")?)
    ///     .component(ComponentId::field("content-digest")?)
    ///     .created(now - 10)
    ///     .keyid(&keyid)
    ///     .alg(Algorithm::Ed25519);
    /// httpsig::sign(&res, None, &spec, &key)?.apply(&mut res);
    ///
    /// // The verifier trusts exactly this key; the clock is fixed for the example.
    /// let keys = StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned);
    /// let verifier = Verifier::builder(keys)
    ///     .clock(FixedClock(now))
    ///     .http(HttpPolicy::descriptor_response())
    ///     .build();
    /// let report = verifier.verify_http(&res, None)?;
    /// assert_eq!(report.valid_labels(), ["sig1"]);
    /// assert_eq!(report.results[0].keyid.as_deref(), Some(keyid.as_str()));
    ///
    /// // Changed content no longer matches the signed Content-Digest.
    /// res.body = br#"{"name":"evil"}"#.to_vec();
    /// let err = verifier.verify_http(&res, None).unwrap_err();
    /// let r = err.report().and_then(|r| r.get("sig1")).expect("a result for sig1");
    /// assert!(matches!(r.outcome, Err(SigError::ContentDigest(_))));
    /// assert!(matches!(err, HttpSigError::NotVerified(_)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`HttpSigError::Header`](crate::httpsig::HttpSigError) when the
    /// `Signature`/`Signature-Input` fields are missing or malformed;
    /// `NotVerified` with one result per label when any examined label did
    /// not verify (bad signature, untrusted key, expired, a covered
    /// `Content-Digest` that does not match the content, a replayed nonce).
    pub fn verify_http(
        &self,
        msg: &crate::httpsig::Message,
        related: Option<&crate::httpsig::Message>,
    ) -> Result<crate::httpsig::VerifyReport, crate::httpsig::HttpSigError> {
        crate::httpsig::verify(&self.cx, &self.http, msg, related)
    }
    /// Check a served descriptor response as a resolver receives it (draft-narvaneni-agent-uri-03
    /// section 10.3): the RFC 9421 signature of `response` under
    /// [`Verifier::http_policy`] (set
    /// [`HttpPolicy::descriptor_response`](crate::httpsig::HttpPolicy::descriptor_response)
    /// to require `@status`, `content-type` and `content-digest`); with the
    /// `descriptor` file, that the body is its bytes exactly, that the served
    /// media type fits its format (a warning), and its detached `jws` when
    /// given, or else, for a signed A2A Agent Card, the card's embedded
    /// signatures. `Ok` only when every check made passed.
    ///
    /// # Errors
    /// [`ServedError`], carrying the [`ServedReport`], when any check failed
    /// ([`ServedReport::failed`] names which).
    ///
    /// # Example
    /// ```
    /// use agentsig::digest::content_digest;
    /// use agentsig::httpsig::{descriptor_response_components, HttpPolicy, Message, SignatureSpec};
    /// use agentsig::trust::{KeySource, StaticKeys};
    /// use agentsig::{descriptor, httpsig, Algorithm, SigningKey, Verifier};
    ///
    /// let key = SigningKey::generate(Algorithm::Ed25519)?;
    /// let doc = br#"{"name":"planner"}"#.to_vec();
    /// let jws = descriptor::sign(&doc, &key)?.jws;
    /// let mut res = Message::response(200, Vec::new(), doc.clone());
    /// res.add_header("Content-Type", "application/json");
    /// res.add_header("Content-Digest", &content_digest(&doc));
    /// let now = 1_700_000_000;
    /// let mut spec = SignatureSpec::new("sig1").created(now).keyid(&key.kid_or_thumbprint());
    /// for c in descriptor_response_components() {
    ///     spec = spec.component(c);
    /// }
    /// httpsig::sign(&res, None, &spec, &key)?.apply(&mut res);
    ///
    /// let keys = StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned);
    /// let v = Verifier::builder(keys)
    ///     .clock(agentsig::clock::FixedClock(now))
    ///     .http(HttpPolicy::descriptor_response())
    ///     .build();
    /// let report = v.verify_served(&res, Some(&doc), Some(&jws))?;
    /// assert_eq!(report.checked().len(), 3); // signature, body, detached JWS
    ///
    /// // A file that is not what was served fails, and says so.
    /// let err = v.verify_served(&res, Some(br#"{"name":"other"}"#), None).unwrap_err();
    /// assert_eq!(err.report.failed(), ["the response body is the descriptor's bytes"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn verify_served(
        &self,
        response: &crate::httpsig::Message,
        descriptor: Option<&[u8]>,
        jws: Option<&str>,
    ) -> Result<ServedReport, ServedError> {
        let http = self.verify_http(response, None);
        let body_matches = descriptor.map(|d| d == response.body.as_slice());
        let media_type = descriptor.and_then(|d| crate::formats::served_media_type(d, response));
        let jws = match (descriptor, jws) {
            (Some(d), Some(j)) => Some(self.verify_descriptor(d, j)),
            _ => None,
        };
        let card = match (&jws, descriptor.and_then(crate::a2a::card_with_signatures)) {
            (None, Some(card)) => Some(self.verify_agent_card_value(&card)),
            _ => None,
        };
        let report = ServedReport {
            http,
            body_matches,
            media_type,
            jws,
            card,
        };
        if report.failed().is_empty() {
            Ok(report)
        } else {
            Err(ServedError {
                report: Box::new(report),
            })
        }
    }
}

/// What [`Verifier::verify_served`] checked of a served descriptor
/// response, and each outcome.
#[derive(Debug)]
#[must_use]
#[non_exhaustive]
pub struct ServedReport {
    /// The RFC 9421 signature of the response.
    pub http: Result<crate::httpsig::VerifyReport, crate::httpsig::HttpSigError>,
    /// Whether the body is the descriptor's bytes exactly (`None`: no
    /// descriptor was given).
    pub body_matches: Option<bool>,
    /// A served media type that does not fit the descriptor's format (a
    /// warning: it does not fail the check).
    pub media_type: Option<crate::formats::Finding>,
    /// The detached JWS over the descriptor, when one was given.
    pub jws: Option<Result<crate::descriptor::Report, crate::descriptor::DescriptorError>>,
    /// The embedded signatures of a signed A2A Agent Card, when no detached
    /// JWS was given.
    pub card: Option<Result<crate::a2a::CardReport, crate::a2a::A2aError>>,
}

impl ServedReport {
    /// What was checked, in order.
    pub fn checked(&self) -> Vec<&'static str> {
        self.parts().into_iter().map(|(what, _)| what).collect()
    }
    /// What failed, in order (empty: verified).
    pub fn failed(&self) -> Vec<&'static str> {
        self.parts()
            .into_iter()
            .filter(|(_, ok)| !ok)
            .map(|(what, _)| what)
            .collect()
    }
    fn parts(&self) -> Vec<(&'static str, bool)> {
        let mut v = vec![("the RFC 9421 signature of the response", self.http.is_ok())];
        if let Some(same) = self.body_matches {
            v.push(("the response body is the descriptor's bytes", same));
        }
        if let Some(j) = &self.jws {
            v.push(("the detached JWS of the descriptor", j.is_ok()));
        }
        if let Some(c) = &self.card {
            v.push(("the A2A card's embedded signatures", c.is_ok()));
        }
        v
    }
}

/// A served descriptor response that did not verify: the report says what
/// was checked and what failed.
#[derive(Debug, thiserror::Error)]
#[error("served response not verified: {}", .report.failed().join("; "))]
pub struct ServedError {
    /// The full report.
    pub report: Box<ServedReport>,
}

impl VerifierBuilder {
    /// The algorithms accepted (default: every asymmetric algorithm).
    pub fn algorithms(mut self, allowed: AllowList) -> Self {
        self.v.cx.algorithms = allowed;
        self
    }
    /// The clock (default: the system clock).
    pub fn clock(mut self, clock: impl Clock + 'static) -> Self {
        self.v.cx.clock = Arc::new(clock);
        self
    }
    /// A replay store for JWT `jti` and RFC 9421 `nonce` (default: none).
    pub fn replay_store(mut self, store: Arc<dyn ReplayStore>) -> Self {
        self.v.cx.replay = Some(store);
        self
    }
    /// Size limits.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.v.cx.limits = limits;
        self
    }
    /// Tolerated clock skew in seconds (default
    /// [`DEFAULT_SKEW`](crate::policy::DEFAULT_SKEW), 60).
    pub fn skew(mut self, seconds: u64) -> Self {
        self.v.cx.skew = seconds;
        self
    }
    /// Refuse ECDSA signatures whose `s` is above n/2 (default: accept, as
    /// JOSE and RFC 9421 peers emit both forms; see docs/jws.md).
    pub fn strict_low_s(mut self, on: bool) -> Self {
        self.v.cx.low_s = on;
        self
    }
    /// Accept endpoints on loopback, private and link-local hosts in the
    /// documents checked (an MCP Server Card's `remotes[].url` in a
    /// catalog), which their lint otherwise refuses (`addr/internal`): for a
    /// local trial, with the fetcher's private-network opt-in
    /// (`net::fetch::FetchPolicy::allow_private_networks`, `--allow-private-networks`).
    /// Default: refused.
    pub fn allow_internal_endpoints(mut self, on: bool) -> Self {
        self.v.cx.internal_endpoints = on;
        self
    }
    /// What to do when a JWS offers `jku`/`jwk`/`x5u`/`x5c`/`x5t` (default:
    /// refuse; keys never come from them either way).
    pub fn key_headers(mut self, p: KeyHeaderPolicy) -> Self {
        self.v.cx.key_headers = p;
        self
    }
    /// The JWS and descriptor policy.
    pub fn jws(mut self, p: JwsPolicy) -> Self {
        self.v.jws = p;
        self
    }
    /// The JWT policy.
    pub fn jwt(mut self, p: JwtPolicy) -> Self {
        self.v.jwt = p;
        self
    }
    /// The RFC 9421 policy.
    pub fn http(mut self, p: crate::httpsig::HttpPolicy) -> Self {
        self.v.http = p;
        self
    }
    /// The delegation audit policy (default: [`AuditPolicy::default`]).
    pub fn audit(mut self, p: AuditPolicy) -> Self {
        self.v.audit = p;
        self
    }
    /// The verifier.
    pub fn build(self) -> Verifier {
        self.v
    }
}

/// RFC 9421 verification of `http` crate requests and responses with a
/// [`Verifier`] (as httpsig-hyper's `verify_message_signature`). A request
/// whose URI has no scheme (as a server receives it) is taken as
/// [`DEFAULT_SCHEME`](crate::httpsig::DEFAULT_SCHEME), `https`.
///
/// # Example
/// ```
/// use agentsig::digest::content_digest;
/// use agentsig::httpsig::{descriptor_response_components, HttpPolicy, SignHttp, SignatureSpec};
/// use agentsig::trust::{KeySource, StaticKeys};
/// use agentsig::verifier::{Verifier, VerifyHttp};
/// use agentsig::{clock::FixedClock, Algorithm, SigningKey};
///
/// let key = SigningKey::generate(Algorithm::Ed25519)?;
/// let now = 1_700_000_000;
/// let body = br#"{"name":"agent"}"#.to_vec();
/// let mut res = http::Response::builder()
///     .status(200)
///     .header("content-type", "application/json")
///     .header("content-digest", content_digest(&body))
///     .body(body)?;
/// let mut spec = SignatureSpec::new("sig1").created(now).keyid(&key.kid_or_thumbprint());
/// for c in descriptor_response_components() {
///     spec = spec.component(c);
/// }
/// res.sign_signature(&spec, &key)?;
///
/// let keys = StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned);
/// let v = Verifier::builder(keys)
///     .clock(FixedClock(now))
///     .http(HttpPolicy::descriptor_response())
///     .build();
/// assert_eq!(res.verify_signature(&v)?.valid_labels(), ["sig1"]);
///
/// // Changed content no longer matches the signed Content-Digest.
/// *res.body_mut() = br#"{"name":"evil"}"#.to_vec();
/// assert!(res.verify_signature(&v).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait VerifyHttp {
    /// Verify the message's signatures under `verifier`'s keys and
    /// [`HttpPolicy`](crate::httpsig::HttpPolicy).
    ///
    /// # Errors
    /// [`HttpSigError::Message`](crate::httpsig::HttpSigError::Message) when
    /// the message cannot be read; otherwise as [`Verifier::verify_http`].
    fn verify_signature(
        &self,
        verifier: &Verifier,
    ) -> Result<crate::httpsig::VerifyReport, crate::httpsig::HttpSigError>;
}

/// Verifying a response whose signature covers components of the request
/// it answers (`;req`, RFC 9421 section 2.4).
pub trait VerifyHttpResponse {
    /// As [`VerifyHttp::verify_signature`], `request` being the request this
    /// response answers.
    ///
    /// # Errors
    /// As [`VerifyHttp::verify_signature`].
    fn verify_signature_for<C: AsRef<[u8]>>(
        &self,
        request: &http::Request<C>,
        verifier: &Verifier,
    ) -> Result<crate::httpsig::VerifyReport, crate::httpsig::HttpSigError>;
}

impl<B: AsRef<[u8]>> VerifyHttp for http::Request<B> {
    fn verify_signature(
        &self,
        verifier: &Verifier,
    ) -> Result<crate::httpsig::VerifyReport, crate::httpsig::HttpSigError> {
        let m = crate::httpsig::Message::from_request(self, crate::httpsig::DEFAULT_SCHEME)?;
        verifier.verify_http(&m, None)
    }
}

impl<B: AsRef<[u8]>> VerifyHttp for http::Response<B> {
    fn verify_signature(
        &self,
        verifier: &Verifier,
    ) -> Result<crate::httpsig::VerifyReport, crate::httpsig::HttpSigError> {
        let m = crate::httpsig::Message::from_response(self)?;
        verifier.verify_http(&m, None)
    }
}

impl<B: AsRef<[u8]>> VerifyHttpResponse for http::Response<B> {
    fn verify_signature_for<C: AsRef<[u8]>>(
        &self,
        request: &http::Request<C>,
        verifier: &Verifier,
    ) -> Result<crate::httpsig::VerifyReport, crate::httpsig::HttpSigError> {
        let m = crate::httpsig::Message::from_response(self)?;
        let r = crate::httpsig::Message::from_request(request, crate::httpsig::DEFAULT_SCHEME)?;
        verifier.verify_http(&m, Some(&r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync_clone<T: Send + Sync + Clone + 'static>() {}

    #[test]
    fn verifier_is_shareable() {
        assert_send_sync_clone::<Verifier>();
    }

    /// A `did:key` identity's manifest verifies with the key its DID
    /// encodes even when the library is given other keys, and the same
    /// manifest signed by a given key (not the DID's) does not verify.
    #[test]
    fn a_did_key_identity_keeps_its_key_when_other_keys_are_given() {
        use crate::keys::SigningKey;
        let own = SigningKey::from_ed25519_seed(&[3u8; 32]).expect("key");
        let given = SigningKey::from_ed25519_seed(&[4u8; 32]).expect("key");
        let did = crate::did::did_key(own.verifying_key()).expect("did:key");
        let mut keys = crate::trust::StaticKeys::new();
        keys.add(
            given.verifying_key().clone(),
            crate::trust::KeySource::Pinned,
        );
        let v = Verifier::builder(keys).build();
        let catalog = |signer: &SigningKey| {
            let mut m = serde_json::json!({"identity": did});
            crate::catalog::sign_manifest(&mut m, signer).expect("sign");
            serde_json::json!({"specVersion": "1.0", "host": {"displayName": "H", "trustManifest": m}, "entries": []})
                .to_string()
        };
        let opts = crate::catalog::CatalogOptions::default();
        let r = v
            .verify_catalog(catalog(&own).as_bytes(), &opts)
            .expect("report");
        let host = r.host.as_ref().expect("host outcome");
        assert_eq!(host.status, crate::catalog::Status::Verified, "{host:?}");
        let r = v
            .verify_catalog(catalog(&given).as_bytes(), &opts)
            .expect("report");
        let host = r.host.as_ref().expect("host outcome");
        assert_ne!(host.status, crate::catalog::Status::Verified, "{host:?}");
    }
}
