//! Minting delegation tokens and local token exchange (RFC 8693), for
//! tests, demos and local development. Not an authorization server: no
//! client authentication, no consent, keys are local.

use super::chain::may_act_allows;
use super::scope::{Scope, ScopeError, ScopePolicy};
use super::{DEFAULT_TYP, HARD_MAX_DEPTH};
use crate::jwt::{self, JwtError};
use crate::keys::SigningKey;
use crate::policy::{Context, JwtPolicy};
use serde_json::{json, Map, Value};

/// RFC 8693 section 3: the token type of the issued JWT access token.
pub const ISSUED_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:access_token";

/// An actor to put in `act` (RFC 8693 4.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActorSpec {
    /// The actor's subject identifier, `act.sub` (RFC 8693 section 4.1).
    pub sub: String,
    /// The actor's issuer, `act.iss`, when the `sub` is scoped to one.
    pub iss: Option<String>,
    /// Non-standard per-actor scope (lets one token show narrowing).
    pub scope: Option<String>,
}

impl ActorSpec {
    /// An actor with only a `sub`.
    pub fn new(sub: impl Into<String>) -> ActorSpec {
        ActorSpec {
            sub: sub.into(),
            iss: None,
            scope: None,
        }
    }
    fn to_object(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("sub".into(), Value::String(self.sub.clone()));
        if let Some(i) = &self.iss {
            m.insert("iss".into(), Value::String(i.clone()));
        }
        if let Some(s) = &self.scope {
            m.insert("scope".into(), Value::String(s.clone()));
        }
        m
    }
}

/// Why minting or exchanging failed. Each has a stable [`MintError::code`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MintError {
    /// The request itself is inconsistent (e.g. `exp` not after `iat`, empty `sub`).
    #[error("invalid request: {0}")]
    Invalid(String),
    /// The subject token does not verify (RFC 8693 section 2.1 `subject_token`).
    #[error("subject token: {0}")]
    Subject(JwtError),
    /// The actor token does not verify (RFC 8693 section 2.1 `actor_token`).
    #[error("actor token: {0}")]
    ActorToken(JwtError),
    /// The subject token's `may_act` does not name the new actor (the actor's `sub`).
    #[error("actor {q0} is not authorized by the subject token's may_act (RFC 8693 4.4)", q0 = crate::text::quoted(.0))]
    MayAct(String),
    /// The subject token's `scope` claim is malformed.
    #[error("subject token scope: {0}")]
    SubjectScope(ScopeError),
    /// The requested scope is malformed.
    #[error("requested scope: {0}")]
    RequestedScope(ScopeError),
    /// The requested scope asks for values the subject token does not hold (the extra values).
    #[error("requested scope widens the subject token's: {0}")]
    Widening(String),
    /// The `act` chain would be longer than the hard bound (the actor count).
    #[error("the act chain would have {0} actors, above the hard bound {HARD_MAX_DEPTH}")]
    Depth(usize),
    /// The new actor already appears in the `act` chain (its `sub`).
    #[error("actor {q0} is already in the chain (cycle)", q0 = crate::text::quoted(.0))]
    Cycle(String),
    /// The subject token expires before the new token could start.
    #[error("the subject token's validity leaves no window")]
    NoWindow,
    /// Signing the new token failed.
    #[error("signing: {0}")]
    Sign(JwtError),
}

impl MintError {
    /// A stable, machine-readable code, e.g. `"exchange.cycle"`.
    pub fn code(&self) -> &'static str {
        match self {
            MintError::Invalid(_) => "mint.invalid",
            MintError::Subject(_) => "exchange.subject-token",
            MintError::ActorToken(_) => "exchange.actor-token",
            MintError::MayAct(_) => "exchange.may-act-violation",
            MintError::SubjectScope(_) => "exchange.subject-scope",
            MintError::RequestedScope(_) => "exchange.requested-scope",
            MintError::Widening(_) => "exchange.scope-widened",
            MintError::Depth(_) => "exchange.depth-exceeded",
            MintError::Cycle(_) => "exchange.cycle",
            MintError::NoWindow => "exchange.window-empty",
            MintError::Sign(_) => "mint.sign",
        }
    }
}

/// What to mint.
#[derive(Clone, Debug)]
pub struct MintRequest {
    /// The `iss` claim (RFC 7519 section 4.1.1).
    pub iss: String,
    /// The `sub` claim, the subject on whose behalf actors act (RFC 7519 section 4.1.2).
    pub sub: String,
    /// The `aud` claim; empty: none (RFC 7519 section 4.1.3).
    pub aud: Vec<String>,
    /// The `scope` claim, space-separated (RFC 8693 section 4.2).
    pub scope: Option<String>,
    /// Actors in chronological order: the first is the least recent (nested
    /// deepest), the last is the current actor (outermost, RFC 8693 4.1).
    pub actors: Vec<ActorSpec>,
    /// The `may_act` claim: who may act next (RFC 8693 section 4.4).
    pub may_act: Option<ActorSpec>,
    /// The `client_id` claim (RFC 8693 section 4.3).
    pub client_id: Option<String>,
    /// The `iat` claim, seconds since the Unix epoch (RFC 7519 section 4.1.6).
    pub iat: i64,
    /// The `nbf` claim, seconds since the Unix epoch (RFC 7519 section 4.1.5).
    pub nbf: Option<i64>,
    /// The `exp` claim, seconds since the Unix epoch (RFC 7519 section 4.1.4).
    pub exp: i64,
    /// Random when `None`.
    pub jti: Option<String>,
    /// The JOSE `typ` header, e.g. the default delegation token type.
    pub typ: String,
}

impl MintRequest {
    /// A request for a token from `iss` about `sub`, issued and valid from
    /// `now` for `ttl` seconds (times in seconds since the Unix epoch), with
    /// no audience, scope or actors.
    pub fn new(iss: &str, sub: &str, now: i64, ttl: i64) -> MintRequest {
        MintRequest {
            iss: iss.into(),
            sub: sub.into(),
            aud: Vec::new(),
            scope: None,
            actors: Vec::new(),
            may_act: None,
            client_id: None,
            iat: now,
            nbf: Some(now),
            exp: now.saturating_add(ttl),
            jti: None,
            typ: DEFAULT_TYP.into(),
        }
    }
}

/// Nest actors (chronological order) into one `act` value: the last actor
/// is outermost.
pub fn build_act(actors: &[ActorSpec]) -> Option<Value> {
    let mut acc: Option<Map<String, Value>> = None;
    for a in actors {
        let mut m = a.to_object();
        if let Some(inner) = acc.take() {
            m.insert("act".into(), Value::Object(inner));
        }
        acc = Some(m);
    }
    acc.map(Value::Object)
}

/// A random `jti` (128 bits, base64url).
pub fn random_jti() -> String {
    use rand_core::RngCore;
    let mut b = [0u8; 16];
    rand_core::OsRng.fill_bytes(&mut b);
    crate::b64::encode(&b)
}

/// Build the claims of a [`MintRequest`].
///
/// # Errors
/// [`MintError`] when the request is invalid (scope widened, history broken, window outside the
/// subject token's), a presented token does not verify, or the key cannot sign.
pub fn claims(req: &MintRequest) -> Result<Map<String, Value>, MintError> {
    if req.iss.is_empty() || req.sub.is_empty() {
        return Err(MintError::Invalid("iss and sub must be non-empty".into()));
    }
    if req.actors.len() > HARD_MAX_DEPTH {
        return Err(MintError::Depth(req.actors.len()));
    }
    if req.actors.iter().any(|a| a.sub.is_empty()) {
        return Err(MintError::Invalid("an actor sub is empty".into()));
    }
    if req.exp <= req.iat {
        return Err(MintError::Invalid("exp must be after iat".into()));
    }
    let mut c = Map::new();
    c.insert("iss".into(), json!(req.iss));
    c.insert("sub".into(), json!(req.sub));
    match req.aud.len() {
        0 => {}
        1 => {
            c.insert("aud".into(), json!(req.aud[0]));
        }
        _ => {
            c.insert("aud".into(), json!(req.aud));
        }
    }
    c.insert("iat".into(), json!(req.iat));
    if let Some(n) = req.nbf {
        c.insert("nbf".into(), json!(n));
    }
    c.insert("exp".into(), json!(req.exp));
    c.insert(
        "jti".into(),
        json!(req.jti.clone().unwrap_or_else(random_jti)),
    );
    if let Some(cid) = &req.client_id {
        c.insert("client_id".into(), json!(cid));
    }
    if let Some(s) = &req.scope {
        Scope::parse_str(s, &ScopePolicy::default()).map_err(MintError::RequestedScope)?;
        c.insert("scope".into(), json!(s));
    }
    if let Some(act) = build_act(&req.actors) {
        c.insert("act".into(), act);
    }
    if let Some(m) = &req.may_act {
        c.insert("may_act".into(), Value::Object(m.to_object()));
    }
    Ok(c)
}

/// Mint a signed delegation token.
///
/// # Errors
/// [`MintError`] when the request is invalid (scope widened, history broken, window outside the
/// subject token's), a presented token does not verify, or the key cannot sign.
pub fn mint(req: &MintRequest, key: &SigningKey) -> Result<String, MintError> {
    jwt::sign(&claims(req)?, key, &req.typ).map_err(MintError::Sign)
}

/// A local token exchange (RFC 8693 section 2.1 with `actor_token`).
#[derive(Clone, Debug)]
pub struct ExchangeRequest<'a> {
    /// The compact JWT being exchanged (RFC 8693 section 2.1 `subject_token`).
    pub subject_token: &'a str,
    /// The new actor; ignored when `actor_token` is given (its `sub` and
    /// `iss` are used instead).
    pub actor: Option<ActorSpec>,
    /// A compact JWT naming the new actor (RFC 8693 section 2.1 `actor_token`).
    pub actor_token: Option<&'a str>,
    /// Issuer of the new token (this local "authorization server").
    pub iss: String,
    /// The `aud` of the new token (RFC 8693 section 2.1 `audience`).
    pub aud: Vec<String>,
    /// Requested scope; default: the subject token's. Must be covered by it.
    pub scope: Option<String>,
    /// Who may act next (RFC 8693 4.4).
    pub may_act: Option<ActorSpec>,
    /// Lifetime of the new token in seconds (clipped to the subject token's `exp`).
    pub ttl: i64,
    /// The JOSE `typ` header of the new token.
    pub typ: String,
}

/// The issued token and the RFC 8693 section 2.2.1 response.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ExchangeResult {
    /// The issued compact JWT.
    pub token: String,
    /// Its claims set.
    pub claims: Map<String, Value>,
    /// The RFC 8693 section 2.2.1 token response (`access_token`,
    /// `issued_token_type`, `token_type`, `expires_in`, `scope`).
    pub response: Value,
}

/// Exchange `subject_token` for a token naming a new actor, with the actor
/// history preserved, scope narrowed (never widened) and the validity
/// window nested in the subject token's. The subject (and actor) token is
/// verified under `cx` (keys, clock, replay store) and `jwt`
/// (`Verifier::context` and `Verifier::jwt_policy` give both).
///
/// # Errors
/// [`MintError::Subject`] or [`MintError::ActorToken`] when a presented
/// token does not verify; [`MintError::Invalid`] or a scope error when the
/// request would widen the scope, break the actor history or outlive the
/// subject token; a signing error from `key`.
pub fn exchange(
    req: &ExchangeRequest<'_>,
    cx: &Context,
    jwt_policy: &JwtPolicy,
    scope_policy: &ScopePolicy,
    key: &SigningKey,
) -> Result<ExchangeResult, MintError> {
    let v = cx;
    let now = v.now();
    let subject = jwt::verify(v, jwt_policy, req.subject_token).map_err(MintError::Subject)?;
    let actor = match (req.actor_token, &req.actor) {
        (Some(t), _) => {
            let mut p = jwt_policy.clone();
            p.audience = None;
            p.expected_typ = None;
            let a = jwt::verify(v, &p, t).map_err(MintError::ActorToken)?;
            let sub = a
                .claims
                .get("sub")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .ok_or_else(|| MintError::Invalid("actor token has no sub".into()))?;
            let a_iss = a.claims.get("iss").and_then(Value::as_str);
            ActorSpec {
                sub: sub.to_owned(),
                iss: a_iss.filter(|i| *i != req.iss).map(str::to_owned),
                scope: None,
            }
        }
        (None, Some(a)) => a.clone(),
        (None, None) => {
            return Err(MintError::Invalid(
                "an actor or actor token is required".into(),
            ))
        }
    };
    let sc = &subject.claims;
    if let Some(m) = sc.get("may_act") {
        let actor_iss = actor.iss.as_deref().or(Some(req.iss.as_str()));
        if !may_act_allows(m, &actor.sub, actor_iss) && !may_act_allows(m, &actor.sub, None) {
            return Err(MintError::MayAct(actor.sub));
        }
    }
    let subject_scope =
        Scope::parse(sc.get("scope"), scope_policy).map_err(MintError::SubjectScope)?;
    let scope = match &req.scope {
        Some(s) => {
            let want = Scope::parse_str(s, scope_policy).map_err(MintError::RequestedScope)?;
            let added = subject_scope.added_by(&want, scope_policy);
            if !added.is_empty() {
                return Err(MintError::Widening(added.join(" ")));
            }
            s.clone()
        }
        None => sc
            .get("scope")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
    };
    // History: the subject token's actors, then the new one.
    let mut history: Vec<ActorSpec> = Vec::new();
    let mut cur = sc.get("act");
    while let Some(Value::Object(o)) = cur {
        if history.len() >= HARD_MAX_DEPTH {
            return Err(MintError::Depth(history.len() + 1));
        }
        history.push(ActorSpec {
            sub: o
                .get("sub")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
            iss: o.get("iss").and_then(Value::as_str).map(str::to_owned),
            scope: o.get("scope").and_then(Value::as_str).map(str::to_owned),
        });
        cur = o.get("act");
    }
    history.reverse();
    let subject_sub = sc
        .get("sub")
        .and_then(Value::as_str)
        .ok_or_else(|| MintError::Invalid("subject token has no sub".into()))?
        .to_owned();
    if history.iter().any(|h| h.sub == actor.sub) {
        return Err(MintError::Cycle(actor.sub));
    }
    history.push(actor);
    if history.len() > HARD_MAX_DEPTH {
        return Err(MintError::Depth(history.len()));
    }
    let sub_exp = jwt::numeric_date(sc, "exp").unwrap_or(now);
    let sub_start = jwt::numeric_date(sc, "nbf")
        .or_else(|| jwt::numeric_date(sc, "iat"))
        .unwrap_or(now);
    let exp = now.saturating_add(req.ttl.max(1)).min(sub_exp);
    let nbf = now.max(sub_start);
    if nbf >= exp {
        return Err(MintError::NoWindow);
    }
    let mreq = MintRequest {
        iss: req.iss.clone(),
        sub: subject_sub,
        aud: req.aud.clone(),
        scope: Some(scope.clone()),
        actors: history,
        may_act: req.may_act.clone(),
        client_id: None,
        iat: now.max(jwt::numeric_date(sc, "iat").unwrap_or(now)),
        nbf: Some(nbf),
        exp,
        jti: None,
        typ: req.typ.clone(),
    };
    if mreq.exp <= mreq.iat {
        return Err(MintError::NoWindow);
    }
    let claims = claims(&mreq)?;
    let token = jwt::sign(&claims, key, &mreq.typ).map_err(MintError::Sign)?;
    let response = json!({
        "access_token": token,
        "issued_token_type": ISSUED_TOKEN_TYPE,
        "token_type": "N_A",
        "expires_in": exp - now,
        "scope": scope,
    });
    Ok(ExchangeResult {
        token,
        claims,
        response,
    })
}
