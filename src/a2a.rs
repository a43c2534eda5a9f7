//! A2A Agent Card signatures, computed exactly as the reference SDKs do
//! (PyPI `a2a-sdk` 1.1.4 to 1.3, npm `@a2a-js/sdk` 1.0.1 to 1.3; A2A
//! specification v1.0 section 8.4).
//!
//! Each member of the card's `signatures` array is a JWS JSON serialization
//! without its payload (`{protected, signature, header?}`, RFC 7515 section
//! 7.2.2 and Appendix F). The payload is detached and **base64url-encoded in
//! the signing input** (standard `b64=true`, not RFC 7797). It is the RFC
//! 8785 JCS of the card in its *normal form*, which the SDKs build this way
//! (research note jws-jcs-a2a.md section 1.7):
//!
//! 1. project the card onto the A2A v1.0 protobuf schema (`lf.a2a.v1.AgentCard`):
//!    members the schema does not know are dropped (unknown members, the v0.3
//!    compatibility members a server adds: `url`, `preferredTransport`,
//!    `protocolVersion`, `additionalInterfaces`...); both lowerCamelCase and
//!    snake_case names are read, lowerCamelCase is written;
//! 2. proto3 defaults of fields without explicit presence are dropped
//!    (`""`, `false`: e.g. `AgentExtension.required:false`,
//!    `AuthorizationCodeOAuthFlow.pkceRequired:false`), while the optional
//!    bools `streaming`, `pushNotifications`, `extendedAgentCard` are kept
//!    when set, even to `false`;
//! 3. `signatures` is removed;
//! 4. `null`, `""`, `[]` and `{}` are removed recursively, containers that
//!    become empty too, Struct contents (`params`) included.
//!
//! What the normal form drops is not covered by any signature. [`normalize`]
//! reports each such member with its JSON pointer; dropped *security*
//! declarations (a `mtlsSecurityScheme` with no fields, a security
//! requirement without scopes: the SDKs sign a card declaring "mTLS only"
//! exactly like one declaring no security) are flagged as such.
//!
//! [`sign_card`] writes the card in its normal form (so that plain
//! "JCS of the card minus signatures" verifiers agree with the SDKs) and
//! appends a signature whose protected header carries `alg`, `kid` and
//! `typ: "JOSE"` (the JS SDK's verifier skips entries without all three).
//! [`verify_card`] recomputes the payload and verifies every signature with
//! keys from the caller's resolver only: `jku` is never followed (A2A#2096).

use crate::jcs;
use crate::json::{self, JsonError};
use crate::jws::{self, JwsError, JwsReport, JwsVerifyError, KeyHeaderPolicy, SignOptions};
use crate::keys::SigningKey;
use crate::verifier::Verifier;
use serde_json::{Map, Value};

/// The media type an A2A Agent Card is served with.
pub const MEDIA_TYPE: &str = "application/json";
/// Where an A2A Agent Card is published (A2A v1.0 section 8.2).
pub const WELL_KNOWN_PATH: &str = "/.well-known/agent-card.json";
/// Deepest nesting normalized (the Python SDK's `_jcs.MAX_DEPTH`).
pub const MAX_DEPTH: usize = 128;

/// Why a card cannot be normalized, signed or verified.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum A2aError {
    /// Not strict I-JSON.
    #[error("card is not strict JSON: {0}")]
    Json(#[from] JsonError),
    /// The card (or a nested message) is not a JSON object.
    #[error("{pointer}: expected {expected}")]
    Type {
        /// Where.
        pointer: String,
        /// What the schema expects there.
        expected: &'static str,
    },
    /// A member is given under both its lowerCamelCase and snake_case names,
    /// or two members of one oneof are set: the SDKs refuse such a card.
    #[error("{pointer}: {detail}")]
    Conflict {
        /// Where.
        pointer: String,
        /// What conflicts.
        detail: String,
    },
    /// Nesting deeper than [`MAX_DEPTH`].
    #[error("card nesting exceeds {MAX_DEPTH}")]
    TooDeep,
    /// Read, and no signature verified with a trusted key (or one by a
    /// trusted key is invalid); the report says why.
    #[error("the card's signatures did not verify")]
    NotVerified(Box<CardReport>),
    /// `signatures` is not an array of `{protected, signature, header?}`.
    #[error("signatures/{index}: {detail}")]
    BadSignature {
        /// Index in `signatures`.
        index: usize,
        /// What is wrong.
        detail: String,
    },
    /// The card has no signature to verify.
    #[error("the card has no signatures")]
    NoSignatures,
    /// Signing would leave security declarations uncovered (see
    /// [`Uncovered::security`]); pass `force` to sign anyway.
    #[error("the signature would not cover these security declarations: {0}")]
    UncoveredSecurity(String),
    /// RFC 8785 serialization failed.
    #[error("canonicalization failed: {0}")]
    Jcs(String),
    /// JWS signing failed.
    #[error(transparent)]
    Jws(#[from] JwsError),
}

/// A member of the card that no signature covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Uncovered {
    /// RFC 6901 pointer into the card as given.
    pub pointer: String,
    /// Why: `"unknown member"`, `"empty value"`, `"proto3 default"`.
    pub reason: &'static str,
    /// True for a security declaration (`securitySchemes`,
    /// `securityRequirements`), where being uncovered lets an attacker strip
    /// or add an authentication requirement without breaking the signature.
    pub security: bool,
}

/// The normal form of a card.
#[derive(Clone, Debug)]
pub struct Normalized {
    /// The card as the SDKs see it, without `signatures`.
    pub card: Value,
    /// Its RFC 8785 bytes: the JWS payload.
    pub payload: Vec<u8>,
    /// What the payload does not cover.
    pub uncovered: Vec<Uncovered>,
}

#[derive(Clone, Copy)]
enum Kind {
    Str,
    Bool,
    Msg(&'static [Field]),
    RepStr,
    RepMsg(&'static [Field]),
    MapStr,
    MapMsg(&'static [Field]),
    Struct,
}

#[derive(Clone, Copy)]
struct Field {
    proto: &'static str,
    json: &'static str,
    kind: Kind,
    /// proto3 explicit presence (`optional` or a message): a set default is kept.
    presence: bool,
    /// Name of the oneof the field belongs to.
    oneof: Option<&'static str>,
}

const fn f(proto: &'static str, json: &'static str, kind: Kind) -> Field {
    Field {
        proto,
        json,
        kind,
        presence: false,
        oneof: None,
    }
}
const fn opt(proto: &'static str, json: &'static str, kind: Kind) -> Field {
    Field {
        proto,
        json,
        kind,
        presence: true,
        oneof: None,
    }
}
const fn one(proto: &'static str, json: &'static str, kind: Kind, oneof: &'static str) -> Field {
    Field {
        proto,
        json,
        kind,
        presence: true,
        oneof: Some(oneof),
    }
}

// The lf.a2a.v1 schema of a2a-sdk 1.3.0 (`a2a.types`, from specification/a2a.proto).
const AGENT_INTERFACE: &[Field] = &[
    f("url", "url", Kind::Str),
    f("protocol_binding", "protocolBinding", Kind::Str),
    f("tenant", "tenant", Kind::Str),
    f("protocol_version", "protocolVersion", Kind::Str),
];
const AGENT_PROVIDER: &[Field] = &[
    f("url", "url", Kind::Str),
    f("organization", "organization", Kind::Str),
];
const AGENT_EXTENSION: &[Field] = &[
    f("uri", "uri", Kind::Str),
    f("description", "description", Kind::Str),
    f("required", "required", Kind::Bool),
    opt("params", "params", Kind::Struct),
];
const AGENT_CAPABILITIES: &[Field] = &[
    opt("streaming", "streaming", Kind::Bool),
    opt("push_notifications", "pushNotifications", Kind::Bool),
    f("extensions", "extensions", Kind::RepMsg(AGENT_EXTENSION)),
    opt("extended_agent_card", "extendedAgentCard", Kind::Bool),
];
const API_KEY_SCHEME: &[Field] = &[
    f("description", "description", Kind::Str),
    f("location", "location", Kind::Str),
    f("name", "name", Kind::Str),
];
const HTTP_AUTH_SCHEME: &[Field] = &[
    f("description", "description", Kind::Str),
    f("scheme", "scheme", Kind::Str),
    f("bearer_format", "bearerFormat", Kind::Str),
];
const AUTH_CODE_FLOW: &[Field] = &[
    f("authorization_url", "authorizationUrl", Kind::Str),
    f("token_url", "tokenUrl", Kind::Str),
    f("refresh_url", "refreshUrl", Kind::Str),
    f("scopes", "scopes", Kind::MapStr),
    f("pkce_required", "pkceRequired", Kind::Bool),
];
const CLIENT_CREDENTIALS_FLOW: &[Field] = &[
    f("token_url", "tokenUrl", Kind::Str),
    f("refresh_url", "refreshUrl", Kind::Str),
    f("scopes", "scopes", Kind::MapStr),
];
const IMPLICIT_FLOW: &[Field] = &[
    f("authorization_url", "authorizationUrl", Kind::Str),
    f("refresh_url", "refreshUrl", Kind::Str),
    f("scopes", "scopes", Kind::MapStr),
];
const PASSWORD_FLOW: &[Field] = &[
    f("token_url", "tokenUrl", Kind::Str),
    f("refresh_url", "refreshUrl", Kind::Str),
    f("scopes", "scopes", Kind::MapStr),
];
const DEVICE_CODE_FLOW: &[Field] = &[
    f(
        "device_authorization_url",
        "deviceAuthorizationUrl",
        Kind::Str,
    ),
    f("token_url", "tokenUrl", Kind::Str),
    f("refresh_url", "refreshUrl", Kind::Str),
    f("scopes", "scopes", Kind::MapStr),
];
const OAUTH_FLOWS: &[Field] = &[
    one(
        "authorization_code",
        "authorizationCode",
        Kind::Msg(AUTH_CODE_FLOW),
        "flow",
    ),
    one(
        "client_credentials",
        "clientCredentials",
        Kind::Msg(CLIENT_CREDENTIALS_FLOW),
        "flow",
    ),
    one("implicit", "implicit", Kind::Msg(IMPLICIT_FLOW), "flow"),
    one("password", "password", Kind::Msg(PASSWORD_FLOW), "flow"),
    one(
        "device_code",
        "deviceCode",
        Kind::Msg(DEVICE_CODE_FLOW),
        "flow",
    ),
];
const OAUTH2_SCHEME: &[Field] = &[
    f("description", "description", Kind::Str),
    opt("flows", "flows", Kind::Msg(OAUTH_FLOWS)),
    f("oauth2_metadata_url", "oauth2MetadataUrl", Kind::Str),
];
const OIDC_SCHEME: &[Field] = &[
    f("description", "description", Kind::Str),
    f("open_id_connect_url", "openIdConnectUrl", Kind::Str),
];
const MTLS_SCHEME: &[Field] = &[f("description", "description", Kind::Str)];
const SECURITY_SCHEME: &[Field] = &[
    one(
        "api_key_security_scheme",
        "apiKeySecurityScheme",
        Kind::Msg(API_KEY_SCHEME),
        "scheme",
    ),
    one(
        "http_auth_security_scheme",
        "httpAuthSecurityScheme",
        Kind::Msg(HTTP_AUTH_SCHEME),
        "scheme",
    ),
    one(
        "oauth2_security_scheme",
        "oauth2SecurityScheme",
        Kind::Msg(OAUTH2_SCHEME),
        "scheme",
    ),
    one(
        "open_id_connect_security_scheme",
        "openIdConnectSecurityScheme",
        Kind::Msg(OIDC_SCHEME),
        "scheme",
    ),
    one(
        "mtls_security_scheme",
        "mtlsSecurityScheme",
        Kind::Msg(MTLS_SCHEME),
        "scheme",
    ),
];
const STRING_LIST: &[Field] = &[f("list", "list", Kind::RepStr)];
const SECURITY_REQUIREMENT: &[Field] = &[f("schemes", "schemes", Kind::MapMsg(STRING_LIST))];
const AGENT_SKILL: &[Field] = &[
    f("id", "id", Kind::Str),
    f("name", "name", Kind::Str),
    f("description", "description", Kind::Str),
    f("tags", "tags", Kind::RepStr),
    f("examples", "examples", Kind::RepStr),
    f("input_modes", "inputModes", Kind::RepStr),
    f("output_modes", "outputModes", Kind::RepStr),
    f(
        "security_requirements",
        "securityRequirements",
        Kind::RepMsg(SECURITY_REQUIREMENT),
    ),
];
const SIGNATURE: &[Field] = &[
    f("protected", "protected", Kind::Str),
    f("signature", "signature", Kind::Str),
    opt("header", "header", Kind::Struct),
];
const AGENT_CARD: &[Field] = &[
    f("name", "name", Kind::Str),
    f("description", "description", Kind::Str),
    f(
        "supported_interfaces",
        "supportedInterfaces",
        Kind::RepMsg(AGENT_INTERFACE),
    ),
    opt("provider", "provider", Kind::Msg(AGENT_PROVIDER)),
    f("version", "version", Kind::Str),
    opt("documentation_url", "documentationUrl", Kind::Str),
    opt(
        "capabilities",
        "capabilities",
        Kind::Msg(AGENT_CAPABILITIES),
    ),
    f(
        "security_schemes",
        "securitySchemes",
        Kind::MapMsg(SECURITY_SCHEME),
    ),
    f(
        "security_requirements",
        "securityRequirements",
        Kind::RepMsg(SECURITY_REQUIREMENT),
    ),
    f("default_input_modes", "defaultInputModes", Kind::RepStr),
    f("default_output_modes", "defaultOutputModes", Kind::RepStr),
    f("skills", "skills", Kind::RepMsg(AGENT_SKILL)),
    f("signatures", "signatures", Kind::RepMsg(SIGNATURE)),
    opt("icon_url", "iconUrl", Kind::Str),
];

struct Ctx {
    uncovered: Vec<Uncovered>,
}

/// Is a dropped member a security declaration, whose absence changes what
/// the card requires of a client? A whole scheme (`/securitySchemes/NAME`,
/// its `…SecurityScheme` wrapper, or its OAuth `flows`) or a whole
/// requirement (`/securityRequirements/I`, its `schemes`, a scheme's scope
/// `list`), on the card or on a skill. A purged leaf inside them (a
/// `pkceRequired:false`, an empty scope description) is not.
fn is_security(path: &str) -> bool {
    let t: Vec<&str> = path.split('/').skip(1).collect();
    let (t, _) = match t.as_slice() {
        ["skills", _, rest @ ..] => (rest, true),
        rest => (rest, false),
    };
    match t {
        ["securitySchemes", rest @ ..] => {
            rest.len() <= 2 || (rest.len() <= 4 && rest.get(2) == Some(&"flows"))
        }
        ["securityRequirements", rest @ ..] => rest.len() <= 4,
        _ => false,
    }
}

fn push_token(base: &str, token: &str) -> String {
    let mut s = base.to_string();
    s.push_str(&json::pointer(&[token.to_string()]));
    s
}

impl Ctx {
    fn uncovered(&mut self, pointer: String, reason: &'static str) {
        let security = is_security(&pointer);
        self.uncovered.push(Uncovered {
            pointer,
            reason,
            security,
        });
    }

    /// Project a message: `Ok(None)` when, after projection, proto3 would
    /// not serialize it at all (only possible for a message without any set
    /// field; kept as `{}` here and purged later).
    fn message(
        &mut self,
        v: &Value,
        schema: &'static [Field],
        at: &str,
        depth: usize,
    ) -> Result<Map<String, Value>, A2aError> {
        if depth > MAX_DEPTH {
            return Err(A2aError::TooDeep);
        }
        let obj = v.as_object().ok_or_else(|| A2aError::Type {
            pointer: at.to_string(),
            expected: "an object",
        })?;
        let mut out = Map::new();
        let mut oneofs: Vec<(&str, &str)> = Vec::new();
        for (k, val) in obj {
            let p = push_token(at, k);
            let Some(field) = schema.iter().find(|f| f.json == k || f.proto == k) else {
                self.uncovered(p, "unknown member");
                continue;
            };
            if out.contains_key(field.json) {
                return Err(A2aError::Conflict {
                    pointer: p,
                    detail: format!(
                        "{} given twice (as {} and {})",
                        field.json, field.json, field.proto
                    ),
                });
            }
            if val.is_null() {
                self.uncovered(p, "empty value");
                continue;
            }
            if let Some(group) = field.oneof {
                if let Some((_, other)) = oneofs.iter().find(|(g, _)| *g == group) {
                    return Err(A2aError::Conflict {
                        pointer: p,
                        detail: format!("oneof {group} has both {other} and {}", field.json),
                    });
                }
                oneofs.push((group, field.json));
            }
            let projected = self.value(val, field, &p, depth + 1)?;
            if let Some(pv) = projected {
                out.insert(field.json.to_string(), pv);
            }
        }
        Ok(out)
    }

    fn value(
        &mut self,
        v: &Value,
        field: &Field,
        at: &str,
        depth: usize,
    ) -> Result<Option<Value>, A2aError> {
        let ty = |expected| A2aError::Type {
            pointer: at.to_string(),
            expected,
        };
        Ok(match field.kind {
            Kind::Str => {
                let s = v.as_str().ok_or_else(|| ty("a string"))?;
                if s.is_empty() && !field.presence {
                    self.uncovered(at.to_string(), "proto3 default");
                    None
                } else {
                    Some(v.clone())
                }
            }
            Kind::Bool => {
                let b = v.as_bool().ok_or_else(|| ty("a boolean"))?;
                if !b && !field.presence {
                    self.uncovered(at.to_string(), "proto3 default");
                    None
                } else {
                    Some(v.clone())
                }
            }
            Kind::Msg(schema) => Some(Value::Object(self.message(v, schema, at, depth)?)),
            Kind::RepStr => {
                let a = v.as_array().ok_or_else(|| ty("an array"))?;
                if a.iter().any(|x| !x.is_string()) {
                    return Err(ty("an array of strings"));
                }
                Some(v.clone())
            }
            Kind::RepMsg(schema) => {
                let a = v.as_array().ok_or_else(|| ty("an array"))?;
                let mut out = Vec::with_capacity(a.len());
                for (i, x) in a.iter().enumerate() {
                    out.push(Value::Object(self.message(
                        x,
                        schema,
                        &push_token(at, &i.to_string()),
                        depth + 1,
                    )?));
                }
                Some(Value::Array(out))
            }
            Kind::MapStr => {
                let o = v.as_object().ok_or_else(|| ty("an object"))?;
                if o.values().any(|x| !x.is_string()) {
                    return Err(ty("an object of strings"));
                }
                Some(v.clone())
            }
            Kind::MapMsg(schema) => {
                let o = v.as_object().ok_or_else(|| ty("an object"))?;
                let mut out = Map::new();
                for (k, x) in o {
                    out.insert(
                        k.clone(),
                        Value::Object(self.message(x, schema, &push_token(at, k), depth + 1)?),
                    );
                }
                Some(Value::Object(out))
            }
            Kind::Struct => {
                if !v.is_object() {
                    return Err(ty("an object"));
                }
                Some(v.clone())
            }
        })
    }
}

/// The SDKs' `_clean_empty` / `cleanEmpty`: drop `null`, `""`, `[]`, `{}`
/// recursively, containers emptied by the purge included. `None` means the
/// value itself is empty. Purged members are reported at their pointer.
fn clean_empty(
    v: &Value,
    at: &str,
    ctx: &mut Ctx,
    depth: usize,
) -> Result<Option<Value>, A2aError> {
    if depth > MAX_DEPTH {
        return Err(A2aError::TooDeep);
    }
    Ok(match v {
        Value::Null => None,
        Value::String(s) if s.is_empty() => None,
        Value::Object(o) => {
            let mut out = Map::new();
            for (k, x) in o {
                let p = push_token(at, k);
                match clean_empty(x, &p, ctx, depth + 1)? {
                    Some(c) => {
                        out.insert(k.clone(), c);
                    }
                    None => {
                        if !matches!(x, Value::Object(_) | Value::Array(_)) || is_leaf_empty(x) {
                            ctx.uncovered(p, "empty value");
                        }
                    }
                }
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
        Value::Array(a) => {
            let mut out = Vec::new();
            for (i, x) in a.iter().enumerate() {
                let p = push_token(at, &i.to_string());
                match clean_empty(x, &p, ctx, depth + 1)? {
                    Some(c) => out.push(c),
                    None => {
                        if !matches!(x, Value::Object(_) | Value::Array(_)) || is_leaf_empty(x) {
                            ctx.uncovered(p, "empty value");
                        }
                    }
                }
            }
            (!out.is_empty()).then_some(Value::Array(out))
        }
        other => Some(other.clone()),
    })
}

/// An empty container (reported itself; a container emptied by the purge of
/// its children is reported through them).
fn is_leaf_empty(v: &Value) -> bool {
    match v {
        Value::Object(o) => o.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

/// The normal form of a parsed card and its JWS payload (module docs).
pub fn normalize(card: &Value) -> Result<Normalized, A2aError> {
    let mut ctx = Ctx {
        uncovered: Vec::new(),
    };
    let mut projected = ctx.message(card, AGENT_CARD, "", 0)?;
    projected.remove("signatures");
    // The projection pointers use the input's names; the purge runs over the
    // projected (lowerCamelCase) card, whose pointers match for camelCase input.
    let cleaned = clean_empty(&Value::Object(projected), "", &mut ctx, 0)?
        .unwrap_or_else(|| Value::Object(Map::new()));
    let payload = jcs::canonicalize_value(&cleaned).map_err(|e| A2aError::Jcs(e.to_string()))?;
    ctx.uncovered.sort_by(|a, b| a.pointer.cmp(&b.pointer));
    ctx.uncovered.dedup();
    Ok(Normalized {
        card: cleaned,
        payload,
        uncovered: ctx.uncovered,
    })
}

/// Parse strictly ([`crate::json`]) and [`normalize`].
pub fn normalize_bytes(card: &[u8]) -> Result<Normalized, A2aError> {
    normalize(&json::parse_strict(card)?)
}

/// The outcome of [`sign_card`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SignedCard {
    /// The card to publish: its normal form plus `signatures` (the ones it
    /// had, then the new one).
    pub card: Value,
    /// What the signature does not cover (dropped from `card`).
    pub uncovered: Vec<Uncovered>,
}

/// Sign a card as the A2A SDKs do: append `{protected, signature}` over the
/// normal form, protected header `{"alg","kid","typ":"JOSE"}` plus `extra`
/// (e.g. `jku`). Refuses ([`A2aError::UncoveredSecurity`]) when security
/// declarations would be left uncovered, unless `force`.
pub fn sign_card(
    card: &Value,
    key: &SigningKey,
    extra: &Map<String, Value>,
    force: bool,
) -> Result<SignedCard, A2aError> {
    let n = normalize(card)?;
    let security: Vec<&str> = n
        .uncovered
        .iter()
        .filter(|u| u.security)
        .map(|u| u.pointer.as_str())
        .collect();
    if !security.is_empty() && !force {
        return Err(A2aError::UncoveredSecurity(security.join(", ")));
    }
    let opts = SignOptions {
        typ: Some("JOSE".into()),
        b64: true,
        extra: extra.clone(),
    };
    let compact = jws::sign_compact_detached(&n.payload, key, &opts)?;
    let (protected, signature) = compact
        .split_once("..")
        .ok_or_else(|| A2aError::Jcs("signer returned no detached compact JWS".into()))?;
    let mut sigs = existing_signatures(card)?;
    let mut entry = Map::new();
    entry.insert("protected".into(), Value::String(protected.to_string()));
    entry.insert("signature".into(), Value::String(signature.to_string()));
    sigs.push(Value::Object(entry));
    let mut out = match n.card {
        Value::Object(o) => o,
        _ => Map::new(),
    };
    out.insert("signatures".into(), Value::Array(sigs));
    Ok(SignedCard {
        card: Value::Object(out),
        uncovered: n.uncovered,
    })
}

fn existing_signatures(card: &Value) -> Result<Vec<Value>, A2aError> {
    match card.get("signatures") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => {
            for (index, s) in a.iter().enumerate() {
                let ok = s.get("protected").is_some_and(Value::is_string)
                    && s.get("signature").is_some_and(Value::is_string)
                    && s.get("header").is_none_or(Value::is_object);
                if !ok {
                    return Err(A2aError::BadSignature {
                        index,
                        detail: "expected {protected: string, signature: string, header?: object}"
                            .into(),
                    });
                }
            }
            Ok(a.clone())
        }
        Some(_) => Err(A2aError::Type {
            pointer: "/signatures".into(),
            expected: "an array",
        }),
    }
}

/// The outcome of [`verify_card`].
#[derive(Debug)]
#[non_exhaustive]
pub struct CardReport {
    /// One JWS report per entry of `signatures`, in order; an entry that is
    /// not a JWS at all is an `Err`.
    pub signatures: Vec<Result<JwsReport, JwsError>>,
    /// The payload every signature was checked against.
    pub payload: Vec<u8>,
    /// Members of the card no signature covers.
    pub uncovered: Vec<Uncovered>,
}

impl CardReport {
    /// At least one signature verified with a trusted key and none was
    /// invalid under a trusted key (a tampered card fails even if another
    /// signature is valid).
    pub fn verified(&self) -> bool {
        let reports = || self.signatures.iter().filter_map(|r| r.as_ref().ok());
        reports().any(|r| r.valid_signature().is_some())
            && !reports().any(|r| {
                r.signatures
                    .iter()
                    .any(|s| s.verdict == jws::Verdict::Invalid)
            })
    }
}

/// Verify every signature of a card against its normal form, with the
/// verifier's keys and algorithms. Key-bearing headers (`jku`, which the SDKs
/// put in the protected header) are ignored rather than refused: keys come
/// only from the verifier's resolver, never from a URL the signer nominates
/// (A2A#2096, RFC 8725 section 3.10).
///
/// `Ok` only when [`CardReport::verified`]; otherwise
/// [`A2aError::NotVerified`] carries the report.
pub fn verify_card(v: &Verifier, card: &Value) -> Result<CardReport, A2aError> {
    let sigs = existing_signatures(card)?;
    if sigs.is_empty() {
        return Err(A2aError::NoSignatures);
    }
    let n = normalize(card)?;
    let v = v.to_builder().key_headers(KeyHeaderPolicy::Ignore).build();
    let mut out = Vec::with_capacity(sigs.len());
    for s in &sigs {
        // Flattened JWS JSON without payload (RFC 7515 7.2.2, Appendix F).
        let jws_text = s.to_string();
        out.push(match jws::verify(&v, &jws_text, Some(&n.payload)) {
            Ok(r) => Ok(r),
            Err(JwsVerifyError::NotVerified(r)) => Ok(*r),
            Err(JwsVerifyError::Jws(e)) => Err(e),
        });
    }
    let report = CardReport {
        signatures: out,
        payload: n.payload,
        uncovered: n.uncovered,
    };
    if report.verified() {
        Ok(report)
    } else {
        Err(A2aError::NotVerified(Box::new(report)))
    }
}

/// [`verify_card`] over the card's bytes (strict I-JSON).
pub fn verify_card_bytes(v: &Verifier, card: &[u8]) -> Result<CardReport, A2aError> {
    verify_card(v, &json::parse_strict(card)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn normal_form_drops_what_the_sdks_drop() {
        let card = json!({
            "name": "A",
            "description": "",
            "url": "https://compat.example/",
            "x-unknown": {"a": 1},
            "capabilities": {"streaming": false, "extensions": [{"uri": "u", "required": false, "params": {"k": "", "n": 1}}]},
            "securitySchemes": {"m": {"mtlsSecurityScheme": {}}},
            "security_requirements": [{"schemes": {"m": {"list": []}}}],
            "skills": [],
            "signatures": [{"protected": "e30", "signature": "AA"}]
        });
        let n = normalize(&card).unwrap();
        assert_eq!(
            String::from_utf8(n.payload).unwrap(),
            r#"{"capabilities":{"extensions":[{"params":{"n":1},"uri":"u"}],"streaming":false},"name":"A"}"#
        );
        let sec: Vec<&str> = n
            .uncovered
            .iter()
            .filter(|u| u.security)
            .map(|u| u.pointer.as_str())
            .collect();
        // Purged members are reported under their lowerCamelCase names.
        assert_eq!(
            sec,
            vec![
                "/securityRequirements/0/schemes/m/list",
                "/securitySchemes/m/mtlsSecurityScheme"
            ]
        );
        assert!(n
            .uncovered
            .iter()
            .any(|u| u.pointer == "/x-unknown" && u.reason == "unknown member"));
        assert!(n.uncovered.iter().any(|u| u.pointer == "/url"));
    }

    #[test]
    fn security_declarations_versus_purged_leaves() {
        for p in [
            "/securitySchemes/m",
            "/securitySchemes/m/mtlsSecurityScheme",
            "/securitySchemes/o/oauth2SecurityScheme/flows",
            "/securityRequirements/0",
            "/securityRequirements/0/schemes/b/list",
            "/skills/2/securityRequirements/0/schemes/b",
        ] {
            assert!(is_security(p), "{p}");
        }
        for p in [
            "/securitySchemes/o/oauth2SecurityScheme/flows/authorizationCode/pkceRequired",
            "/securitySchemes/o/oauth2SecurityScheme/flows/implicit/scopes/read",
            "/securityRequirements/0/schemes/b/list/0",
            "/skills/0/tags",
            "/description",
        ] {
            assert!(!is_security(p), "{p}");
        }
    }

    #[test]
    fn sign_refuses_uncovered_security_unless_forced() {
        let key = SigningKey::generate(crate::Algorithm::EcdsaP256Sha256).unwrap();
        let card = json!({"name": "A", "securitySchemes": {"m": {"mtlsSecurityScheme": {}}}});
        assert!(matches!(
            sign_card(&card, &key, &Map::new(), false),
            Err(A2aError::UncoveredSecurity(p)) if p == "/securitySchemes/m/mtlsSecurityScheme"
        ));
        let signed = sign_card(&card, &key, &Map::new(), true).unwrap();
        assert_eq!(signed.card["name"], "A");
        assert!(signed.card.get("securitySchemes").is_none());
        assert_eq!(signed.card["signatures"].as_array().map(Vec::len), Some(1));
    }

    #[test]
    fn conflicts_and_types_are_errors() {
        assert!(matches!(
            normalize(&json!({"iconUrl": "a", "icon_url": "b"})),
            Err(A2aError::Conflict { .. })
        ));
        assert!(matches!(
            normalize(
                &json!({"securitySchemes": {"x": {"mtlsSecurityScheme": {}, "apiKeySecurityScheme": {}}}})
            ),
            Err(A2aError::Conflict { .. })
        ));
        assert!(matches!(
            normalize(&json!({"name": 1})),
            Err(A2aError::Type { .. })
        ));
        assert!(matches!(normalize(&json!([1])), Err(A2aError::Type { .. })));
    }
}
