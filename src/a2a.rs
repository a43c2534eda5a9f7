//! A2A Agent Card signatures, computed exactly as the reference SDKs do
//! (PyPI `a2a-sdk` 1.1.4 to 1.3, npm `@a2a-js/sdk` 1.0.1 to 1.3; A2A
//! specification v1.0 section 8.4).
//!
//! Each member of the card's `signatures` array is a JWS JSON serialization
//! without its payload (`{protected, signature, header?}`, RFC 7515 section
//! 7.2.2 and Appendix F). The payload is detached and **base64url-encoded in
//! the signing input** (standard `b64=true`, not RFC 7797). It is the RFC
//! 8785 JCS of the card in its *normal form*, which the SDKs build this way
//! (a2a-python `a2a.utils.signing` and a2a-js `canonicalizeAgentCard`):
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
//! Before the projection, the v0.3 members are converted as the Python
//! SDK's `parse_agent_card` does ([`upgrade_v03`]): `url`,
//! `preferredTransport`, `protocolVersion` and `additionalInterfaces` become
//! `supportedInterfaces` when the card has none, `security` becomes
//! `securityRequirements` (card and skills) when absent,
//! `supportsAuthenticatedExtendedCard: true` becomes
//! `capabilities.extendedAgentCard`, and a v0.3 security scheme
//! `{"type": "http", ...}` becomes `{"httpAuthSecurityScheme": {...}}`.
//! Where the card already has the v1.0 member, the v0.3 one is dropped.
//!
//! What the normal form drops is not covered by any signature. [`normalize`]
//! reports each such member with its JSON pointer; dropped *security*
//! declarations (a `mtlsSecurityScheme` with no fields, an empty security
//! requirement: the SDKs sign a card declaring "mTLS only" exactly like one
//! declaring no security) are flagged as such, and so are
//! dropped v0.3 members (`url`, `preferredTransport`, `additionalInterfaces`,
//! `protocolVersion`, `security`, `supportsAuthenticatedExtendedCard`):
//! v0.3 clients act on them (where to send requests, which credentials to
//! present), yet an attacker can rewrite them without breaking a signature.
//! Callers act only on [`CardReport::signed_card`]. A scheme required
//! without scopes (`{"list": []}`, v0.3 `[]`) is not flagged: an empty
//! repeated field equals an absent one (proto3), the SDKs sign the
//! requirement as absent yet serve it, and so does [`sign_card`]
//! ([`SCOPELESS_REQUIREMENT`]). [`sign_card_v03_compat`] adds the v0.3
//! members after signing, for v0.3 clients, uncovered.
//!
//! [`sign_card`] writes the card in its normal form (so that plain
//! "JCS of the card minus signatures" verifiers agree with the SDKs) and
//! appends a signature whose protected header carries `alg`, `kid` and
//! `typ: "JOSE"` (the JS SDK's verifier skips entries without all three).
//! [`Verifier::verify_agent_card`](crate::verifier::Verifier::verify_agent_card) recomputes the payload and verifies every signature with
//! keys from the caller's resolver only: `jku` is never followed (A2A#2096).

use crate::jcs;
use crate::json::{self, JsonError};
use crate::jws::{self, JwsError, JwsReport, JwsVerifyError, KeyHeaderPolicy, SignOptions};
use crate::keys::SigningKey;
use crate::policy::{Context, JwsPolicy};
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
    /// v0.3 compatibility members were asked for ([`add_v03_compat`]) but no
    /// `supportedInterfaces` entry has a v0.3 protocol version.
    #[error("no supportedInterfaces entry has a v0.3 protocolVersion (0.3 up to 1.0): v0.3 clients could not use this card; add an interface with protocolVersion \"0.3.0\" or leave out the v0.3 compatibility members")]
    NoV03Interface,
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
    /// Why: `"unknown member"`, `"empty value"`, `"proto3 default"`,
    /// `"v0.3 compatibility member"`.
    pub reason: &'static str,
    /// True for a security-relevant member: a security declaration
    /// (`securitySchemes`, `securityRequirements`), where being uncovered
    /// lets an attacker strip or add an authentication requirement without
    /// breaking the signature, or a v0.3 member clients act on (see
    /// [`V03_MEMBERS`]).
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
    /// True when v0.3 members were converted into v1.0 ones
    /// ([`upgrade_v03`]) and so are covered by the payload.
    pub converted_v03: bool,
}

/// The top-level v0.3 members (A2A v0.3 `AgentCard`) that the v1.0 normal
/// form drops, in lowerCamelCase and snake_case. Clients of v0.3 send their
/// requests to `url`/`additionalInterfaces` with `preferredTransport`, and
/// present the credentials `security` names: each is security-relevant.
pub const V03_MEMBERS: [&str; 10] = [
    "url",
    "preferredTransport",
    "preferred_transport",
    "additionalInterfaces",
    "additional_interfaces",
    "protocolVersion",
    "protocol_version",
    "security",
    "supportsAuthenticatedExtendedCard",
    "supports_authenticated_extended_card",
];

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
        ["securityRequirements", rest @ ..] => rest.len() <= 2,
        _ => false,
    }
}

/// Is a dropped member a scheme required without scopes
/// (`/securityRequirements/I/schemes/NAME` or its empty `list`, on the card
/// or a skill)? In the A2A v1.0 protobuf schema an empty repeated field
/// equals an absent one (proto3), so `{"list": []}` carries nothing; the
/// SDKs' `_clean_empty` / `cleanEmpty` then drop the emptied `NAME: {}`
/// entry from the signed payload, while the Python SDK still serves it
/// (`MessageToDict` keeps a map entry). [`sign_card`] keeps it in the
/// written card the same way, uncovered: it names a scheme whose
/// declaration (`securitySchemes`, covered) says where credentials go.
fn is_scopeless_requirement(path: &str) -> bool {
    let t: Vec<&str> = path.split('/').skip(1).collect();
    let t = match t.as_slice() {
        ["skills", _, rest @ ..] => rest,
        rest => rest,
    };
    matches!(
        t,
        ["securityRequirements", _, "schemes", _]
            | ["securityRequirements", _, "schemes", _, "list"]
    )
}

/// The reason [`Uncovered`] gives for a scheme required without scopes
/// (`/securityRequirements/I/schemes/NAME`, or its empty `list`).
pub const SCOPELESS_REQUIREMENT: &str =
    "scheme required without scopes: the A2A normal form signs it as absent (proto3: an empty list equals no list)";

/// Is a dropped member one of the v0.3 members clients act on: a top-level
/// [`V03_MEMBERS`] entry (or anything inside it), or a skill's `security`?
fn is_v03(path: &str) -> bool {
    let t: Vec<&str> = path.split('/').skip(1).collect();
    match t.as_slice() {
        [m, ..] if V03_MEMBERS.contains(m) => true,
        ["skills", _, "security", ..] => true,
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
        let v03 = is_v03(&pointer);
        let scopeless = !v03 && is_scopeless_requirement(&pointer);
        let security = v03 || (!scopeless && is_security(&pointer));
        let reason = if v03 {
            "v0.3 compatibility member"
        } else if scopeless {
            SCOPELESS_REQUIREMENT
        } else {
            reason
        };
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

/// Convert the v0.3 members of a card into their v1.0 equivalents, as the
/// Python SDK's `parse_agent_card` does before it signs or verifies (A2A
/// v1.0 section 8.4 leaves the v0.3 members out of the schema):
///
/// * `supportsAuthenticatedExtendedCard` true, and no
///   `capabilities.extendedAgentCard` → `capabilities.extendedAgentCard: true`;
/// * no `supportedInterfaces` and a `url` → `supportedInterfaces` from `url`,
///   `preferredTransport` (default `JSONRPC`), `protocolVersion` (default
///   `0.3.0`) and each `additionalInterfaces` entry's `url` and `transport`;
/// * no `securityRequirements` and a `security` list (on the card or a
///   skill) → `securityRequirements: [{"schemes": {NAME: {"list": SCOPES}}}]`;
/// * a scheme `{"type": T, ...}` with T one of `apiKey`, `http`, `oauth2`,
///   `openIdConnect`, `mutualTLS` → `{"<T>SecurityScheme": {...}}` (an
///   `apiKey` scheme's `in` renamed `location`).
///
/// A converted member is removed; one that is not converted (the v1.0
/// member is already there) is left in place, so [`normalize`] drops it and
/// reports it as an uncovered, security-relevant v0.3 member. Returns the
/// card and whether anything was converted.
///
/// # Errors
/// [`A2aError`] when the card is not strict I-JSON, has a member of the wrong type or a malformed
/// `signatures` entry, or cannot be signed.
pub fn upgrade_v03(card: &Value) -> Result<(Value, bool), A2aError> {
    let Some(obj) = card.as_object() else {
        return Ok((card.clone(), false));
    };
    let mut c = obj.clone();
    let mut converted = false;
    let ty = |pointer: &str, expected| A2aError::Type {
        pointer: pointer.to_string(),
        expected,
    };
    // supportsAuthenticatedExtendedCard -> capabilities.extendedAgentCard.
    if c.get("supportsAuthenticatedExtendedCard")
        .is_some_and(truthy)
    {
        let caps = c
            .entry("capabilities")
            .or_insert_with(|| Value::Object(Map::new()));
        let caps = caps
            .as_object_mut()
            .ok_or_else(|| ty("/capabilities", "an object"))?;
        if !caps.contains_key("extendedAgentCard") {
            caps.insert("extendedAgentCard".into(), Value::Bool(true));
            c.remove("supportsAuthenticatedExtendedCard");
            converted = true;
        }
    }
    // url, preferredTransport, protocolVersion, additionalInterfaces ->
    // supportedInterfaces.
    if !c.contains_key("supportedInterfaces") && c.get("url").is_some_and(truthy) {
        let optional = |c: &Map<String, Value>, k: &str, default: &str| match c.get(k) {
            None => Some(Value::String(default.into())),
            Some(Value::Null) => None,
            Some(v) => Some(v.clone()),
        };
        let binding = optional(&c, "preferredTransport", "JSONRPC");
        let version = optional(&c, "protocolVersion", "0.3.0");
        let iface = |url: Option<&Value>, binding: Option<Value>| {
            let mut m = Map::new();
            if let Some(u) = url.filter(|u| !u.is_null()) {
                m.insert("url".into(), u.clone());
            }
            if let Some(b) = binding.filter(|b| !b.is_null()) {
                m.insert("protocolBinding".into(), b);
            }
            if let Some(v) = &version {
                m.insert("protocolVersion".into(), v.clone());
            }
            Value::Object(m)
        };
        let mut list = vec![iface(c.get("url"), binding)];
        match c.get("additionalInterfaces") {
            Some(Value::Array(a)) => {
                for (i, x) in a.iter().enumerate() {
                    let o = x
                        .as_object()
                        .ok_or_else(|| ty(&format!("/additionalInterfaces/{i}"), "an object"))?;
                    list.push(iface(o.get("url"), o.get("transport").cloned()));
                }
            }
            Some(v) if truthy(v) => return Err(ty("/additionalInterfaces", "an array")),
            _ => {}
        }
        remove_v03_interface_members(&mut c);
        c.insert("supportedInterfaces".into(), Value::Array(list));
        converted = true;
    }
    // security -> securityRequirements, on the card and on each skill.
    converted |= upgrade_security(&mut c, "")?;
    if let Some(Value::Array(skills)) = c.get_mut("skills") {
        for (i, skill) in skills.iter_mut().enumerate() {
            if let Some(o) = skill.as_object_mut() {
                converted |= upgrade_security(o, &format!("/skills/{i}"))?;
            }
        }
    }
    // {"type": T, ...} -> {"<T>SecurityScheme": {...}}.
    if let Some(Value::Object(schemes)) = c.get_mut("securitySchemes") {
        for scheme in schemes.values_mut() {
            let Some(o) = scheme.as_object_mut() else {
                continue;
            };
            let wrapper = match o.get("type").and_then(Value::as_str) {
                Some("apiKey") => "apiKeySecurityScheme",
                Some("http") => "httpAuthSecurityScheme",
                Some("oauth2") => "oauth2SecurityScheme",
                Some("openIdConnect") => "openIdConnectSecurityScheme",
                Some("mutualTLS") => "mtlsSecurityScheme",
                _ => continue,
            };
            let mut inner = o.clone();
            inner.remove("type");
            if wrapper == "apiKeySecurityScheme" {
                if let Some(loc) = inner.remove("in") {
                    inner.insert("location".into(), loc);
                }
            }
            let mut w = Map::new();
            w.insert(wrapper.into(), Value::Object(inner));
            *o = w;
            converted = true;
        }
    }
    Ok((Value::Object(c), converted))
}

/// Remove the v0.3 members `supportedInterfaces` replaces.
fn remove_v03_interface_members(c: &mut Map<String, Value>) {
    for k in [
        "url",
        "preferredTransport",
        "protocolVersion",
        "additionalInterfaces",
    ] {
        c.remove(k);
    }
}

/// Python truthiness of a JSON value (what `parse_agent_card` tests).
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// v0.3 `security: [{NAME: [SCOPE...]}]` → v1.0 `securityRequirements`, when
/// the object has no `securityRequirements`.
fn upgrade_security(o: &mut Map<String, Value>, at: &str) -> Result<bool, A2aError> {
    if o.contains_key("securityRequirements") {
        return Ok(false);
    }
    let Some(legacy) = o.get("security").filter(|v| !v.is_null()) else {
        return Ok(false);
    };
    let ty = |expected| A2aError::Type {
        pointer: format!("{at}/security"),
        expected,
    };
    let list = legacy
        .as_array()
        .ok_or_else(|| ty("an array of {scheme: [scopes]}"))?;
    let mut out = Vec::with_capacity(list.len());
    for req in list {
        let req = req
            .as_object()
            .ok_or_else(|| ty("an array of {scheme: [scopes]}"))?;
        let mut schemes = Map::new();
        for (name, scopes) in req {
            let mut l = Map::new();
            l.insert("list".into(), scopes.clone());
            schemes.insert(name.clone(), Value::Object(l));
        }
        let mut r = Map::new();
        r.insert("schemes".into(), Value::Object(schemes));
        out.push(Value::Object(r));
    }
    o.remove("security");
    o.insert("securityRequirements".into(), Value::Array(out));
    Ok(true)
}

/// The normal form of a parsed card and its JWS payload (module docs): the
/// v0.3 members converted as the Python SDK does ([`upgrade_v03`]), then
/// projected onto the v1.0 schema and purged.
///
/// # Errors
/// [`A2aError`] when the card is not strict I-JSON, has a member of the wrong type or a malformed
/// `signatures` entry, or cannot be signed.
pub fn normalize(card: &Value) -> Result<Normalized, A2aError> {
    let (upgraded, converted) = upgrade_v03(card)?;
    let mut n = normalize_unconverted(&upgraded)?;
    n.converted_v03 = converted;
    if converted {
        for u in &mut n.uncovered {
            if let Some(p) = v03_security_pointer(card, &u.pointer) {
                u.pointer = p;
            }
        }
        n.uncovered.sort_by(|a, b| a.pointer.cmp(&b.pointer));
    }
    Ok(n)
}

/// A pointer into a converted v0.3 `security` list, named as the author
/// wrote it: `(/skills/I)/securityRequirements/J/schemes/NAME[/list]`
/// becomes `(/skills/I)/security/J/NAME` when that object's `security` was
/// converted ([`upgrade_v03`]: it has no `securityRequirements`).
fn v03_security_pointer(card: &Value, pointer: &str) -> Option<String> {
    let t: Vec<&str> = pointer.split('/').skip(1).collect();
    let (prefix, rest) = match t.as_slice() {
        ["skills", i, rest @ ..] => (format!("/skills/{i}"), rest),
        rest => (String::new(), rest),
    };
    let ["securityRequirements", j, "schemes", name, tail @ ..] = rest else {
        return None;
    };
    let holder = if prefix.is_empty() {
        card
    } else {
        card.pointer(&prefix)?
    };
    if holder.get("securityRequirements").is_some() || holder.get("security").is_none() {
        return None;
    }
    let mut p = format!("{prefix}/security/{j}/{name}");
    if let ["list", scope @ ..] = tail {
        for x in scope {
            p.push('/');
            p.push_str(x);
        }
    }
    Some(p)
}

/// A card's (or skill's) security requirements in the protobuf JSON form
/// the Python SDK serves (`MessageToDict`): a scheme required without
/// scopes kept as `NAME: {}`, an empty scope string dropped. `None` when no
/// requirement names a scheme without scopes (the normal form is then the
/// same). Entries are already type-checked by [`normalize`].
fn served_requirements(o: &Map<String, Value>) -> Option<Value> {
    let reqs = o
        .get("securityRequirements")
        .or_else(|| o.get("security_requirements"))?
        .as_array()?;
    let mut scopeless = false;
    let mut out = Vec::with_capacity(reqs.len());
    for r in reqs {
        let Some(schemes) = r.get("schemes").and_then(Value::as_object) else {
            continue;
        };
        let mut m = Map::new();
        for (name, v) in schemes {
            let list: Vec<Value> = v
                .get("list")
                .and_then(Value::as_array)
                .map(|l| {
                    l.iter()
                        .filter(|x| x.as_str().is_some_and(|x| !x.is_empty()))
                        .cloned()
                        .collect()
                })
                .unwrap_or_default();
            let mut entry = Map::new();
            if list.is_empty() {
                scopeless = true;
            } else {
                entry.insert("list".into(), Value::Array(list));
            }
            m.insert(name.clone(), Value::Object(entry));
        }
        if !m.is_empty() {
            let mut req = Map::new();
            req.insert("schemes".into(), Value::Object(m));
            out.push(Value::Object(req));
        }
    }
    scopeless.then_some(Value::Array(out))
}

/// Put back into the written card, as the Python SDK serves them, the
/// requirements that name a scheme without scopes ([`served_requirements`]),
/// which the normal form drops: a client reading the card still learns
/// which declared scheme to use, though no signature covers the choice.
fn keep_scopeless_requirements(upgraded: &Value, out: &mut Map<String, Value>) {
    let Some(src) = upgraded.as_object() else {
        return;
    };
    if let Some(r) = served_requirements(src) {
        out.insert("securityRequirements".into(), r);
    }
    let (Some(Value::Array(from)), Some(Value::Array(to))) =
        (src.get("skills"), out.get_mut("skills"))
    else {
        return;
    };
    for (f, t) in from.iter().zip(to.iter_mut()) {
        if let (Some(f), Some(t)) = (f.as_object(), t.as_object_mut()) {
            if let Some(r) = served_requirements(f) {
                t.insert("securityRequirements".into(), r);
            }
        }
    }
}

/// The normal form without the v0.3 conversion: what the JS SDK's
/// `canonicalizeAgentCard` computes on a card as given (its v0.3 members,
/// if any, dropped and reported). Equal to [`normalize`] for a card
/// without v0.3 members.
///
/// # Errors
/// [`A2aError`] when the card is not strict I-JSON, has a member of the wrong type or a malformed
/// `signatures` entry, or cannot be signed.
pub fn normalize_unconverted(card: &Value) -> Result<Normalized, A2aError> {
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
        converted_v03: false,
    })
}

/// Parse strictly ([`crate::json`]) and [`normalize`].
///
/// # Errors
/// [`A2aError`] when the card is not strict I-JSON, has a member of the wrong type or a malformed
/// `signatures` entry, or cannot be signed.
pub fn normalize_bytes(card: &[u8]) -> Result<Normalized, A2aError> {
    normalize(&json::parse_strict(card)?)
}

/// The card, when `descriptor` is an A2A Agent Card (format detection of
/// [`crate::formats::detect_bytes`]) with a `signatures` member: what a served
/// card is checked by when no detached JWS accompanies it (docs/a2a.md).
pub fn card_with_signatures(descriptor: &[u8]) -> Option<Value> {
    match crate::formats::detect_bytes(descriptor) {
        Ok((crate::formats::Format::A2a, card)) if card.get("signatures").is_some() => Some(card),
        _ => None,
    }
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
///
/// # Errors
/// [`A2aError`] when the card is not a JSON object of the A2A schema's types or has malformed
/// `signatures` entries; [`A2aError::UncoveredSecurity`] when security declarations would be left
/// uncovered and `force` is false; a JWS error when the key cannot sign.
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
    keep_scopeless_requirements(&upgrade_v03(card)?.0, &mut out);
    out.insert("signatures".into(), Value::Array(sigs));
    Ok(SignedCard {
        card: Value::Object(out),
        uncovered: n.uncovered,
    })
}

/// A signature already on a card, as [`prepare_resign`] sorts it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PriorSignature {
    /// Its index in the card's `signatures` array before re-signing.
    pub index: usize,
    /// The `kid` of its protected header, if it has one.
    pub kid: Option<String>,
}

/// What re-signing a card does with the signatures already on it
/// ([`prepare_resign`]).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Resign {
    /// The card without the signatures to be replaced: sign this.
    pub card: Value,
    /// Earlier signatures by one of the signing keys (or all of them, when
    /// every signature is dropped): removed, to be replaced.
    pub replaced: Vec<PriorSignature>,
    /// Signatures by other keys: kept as they are.
    pub kept: Vec<PriorSignature>,
    /// Whether the card's signed content changed since a replaced
    /// signature was made: `Some(true)` when one of them no longer verifies
    /// with its own key over the card's normal form, `Some(false)` when
    /// every one still does, `None` when none was replaced by key (the
    /// signers of the kept ones hold the only keys that could tell).
    pub changed: Option<bool>,
}

impl Resign {
    /// The kept signatures that no longer verify over the card's content as
    /// it is now, as far as the signing keys can tell: every kept one when
    /// [`Resign::changed`] is `Some(true)` (the content they covered, the
    /// one a replaced signature covered too, has changed), else none.
    pub fn stale(&self) -> &[PriorSignature] {
        if self.changed == Some(true) {
            &self.kept
        } else {
            &[]
        }
    }
}

/// Sort the signatures on a card before signing it again with `keys`: an
/// entry whose protected `kid` is a signing key's kid or RFC 7638 thumbprint,
/// or which verifies with a signing key over the card's normal form, is that
/// key's earlier signature and is replaced (a card keeps one signature per
/// key: an edited card's old one would be invalid under a trusted key, which
/// fails the whole card, A2A specification v1.0 section 8.4 and
/// RFC 7515 section 7.2.1); `replace_all` drops every entry. The others are
/// kept, and [`Resign::changed`] says whether the content they were made over
/// has changed, as the replaced signatures show.
///
/// # Errors
/// [`A2aError`] when the card is no valid card or its `signatures` member is
/// malformed.
pub fn prepare_resign(
    card: &Value,
    keys: &[SigningKey],
    replace_all: bool,
) -> Result<Resign, A2aError> {
    let sigs = existing_signatures(card)?;
    let payload = if sigs.is_empty() {
        Vec::new()
    } else {
        normalize(card)?.payload
    };
    let input_tail = crate::b64::encode(&payload);
    let (mut replaced, mut kept, mut kept_entries) = (Vec::new(), Vec::new(), Vec::new());
    let mut changed = None;
    for (index, s) in sigs.into_iter().enumerate() {
        let protected = s.get("protected").and_then(Value::as_str).unwrap_or("");
        let header: Option<Map<String, Value>> = crate::b64::decode(protected)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        let kid = header
            .as_ref()
            .and_then(|h| h.get("kid"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let alg = header
            .as_ref()
            .and_then(|h| h.get("alg"))
            .and_then(Value::as_str)
            .and_then(crate::alg::Algorithm::from_jose_name);
        let sig = s
            .get("signature")
            .and_then(Value::as_str)
            .and_then(|t| crate::b64::decode(t).ok());
        let input = format!("{protected}.{input_tail}");
        let verifies = |k: &SigningKey| {
            alg == Some(k.algorithm())
                && sig
                    .as_ref()
                    .is_some_and(|g| k.verifying_key().verify(input.as_bytes(), g).is_ok())
        };
        let by_kid = keys.iter().any(|k| {
            kid.as_deref().is_some_and(|id| {
                id == k.kid_or_thumbprint() || id == k.verifying_key().thumbprint()
            })
        });
        let by_sig = keys.iter().any(verifies);
        let prior = PriorSignature { index, kid };
        if by_sig {
            changed.get_or_insert(false);
            replaced.push(prior);
        } else if by_kid {
            // Its kid names a signing key, yet it does not verify with that
            // key over the card as it is: the card changed since.
            changed = Some(true);
            replaced.push(prior);
        } else if replace_all {
            replaced.push(prior);
        } else {
            kept.push(prior);
            kept_entries.push(s);
        }
    }
    let mut out = card.as_object().cloned().unwrap_or_default();
    if kept_entries.is_empty() {
        out.remove("signatures");
    } else {
        out.insert("signatures".into(), Value::Array(kept_entries));
    }
    Ok(Resign {
        card: Value::Object(out),
        replaced,
        kept,
        changed,
    })
}

/// What to do about the members [`A2aError::UncoveredSecurity`] lists (its
/// comma-separated pointers): a v0.3 member beside its v1.0 member is
/// removed (the v1.0 one is signed) or regenerated after signing
/// ([`sign_card_v03_compat`]); a scheme with no members gets a
/// `description`; an empty requirement (`{}`: "no authentication is one
/// option") has no signed form in the A2A normal form.
pub fn uncovered_fix(list: &str) -> String {
    let mut fixes: Vec<&str> = Vec::new();
    for p in list.split(", ") {
        let fix = if is_v03(p) {
            "remove the v0.3 members (their v1.0 members are signed), or keep them for v0.3 clients with --a2a-v03-compat (added after signing, unsigned)"
        } else if p.starts_with("/securitySchemes/") || p.contains("/securitySchemes/") {
            "give each scheme with no members a \"description\" so the scheme is signed"
        } else {
            "an empty security requirement ({}: no authentication is an option) cannot be signed in the A2A normal form; drop it"
        };
        if !fixes.contains(&fix) {
            fixes.push(fix);
        }
    }
    fixes.join("; ")
}

/// The v1.0 wrapper member of each security scheme type, with its v0.3
/// `type` (A2A v0.3 `SecurityScheme`).
const SCHEME_TYPES: [(&str, &str); 5] = [
    ("apiKeySecurityScheme", "apiKey"),
    ("httpAuthSecurityScheme", "http"),
    ("oauth2SecurityScheme", "oauth2"),
    ("openIdConnectSecurityScheme", "openIdConnect"),
    ("mtlsSecurityScheme", "mutualTLS"),
];

/// [`sign_card`] for a card that v0.3 clients must read too, as the Python
/// SDK's server publishes one (`agent_card_to_dict`): v0.3 members that sit
/// beside their v1.0 members are removed first (they would be refused as
/// uncovered: [`V03_MEMBERS`]), the card is signed in its v1.0 normal form,
/// then [`add_v03_compat`] adds the v0.3 members derived from the signed
/// ones. No signature covers them (A2A v1.0 section 8.4 signs the v1.0
/// form): a verifier warns about each, and a client must act on the signed
/// v1.0 members only.
///
/// # Errors
/// As [`sign_card`], and [`A2aError::NoV03Interface`] when no
/// `supportedInterfaces` entry has a v0.3 protocol version.
pub fn sign_card_v03_compat(
    card: &Value,
    key: &SigningKey,
    extra: &Map<String, Value>,
    force: bool,
) -> Result<SignedCard, A2aError> {
    let mut signed = sign_card(&without_v03_copies(card), key, extra, force)?;
    signed.card = add_v03_compat(&signed.card)?;
    Ok(signed)
}

/// The card without the v0.3 members that duplicate a v1.0 member it has
/// (what [`add_v03_compat`] adds): top-level [`V03_MEMBERS`] beside
/// `supportedInterfaces` / `securityRequirements` /
/// `capabilities.extendedAgentCard`, a skill's `security` beside its
/// `securityRequirements`, a scheme's v0.3 members beside its v1.0 wrapper.
fn without_v03_copies(card: &Value) -> Value {
    let Some(o) = card.as_object() else {
        return card.clone();
    };
    let mut c = o.clone();
    if c.contains_key("supportedInterfaces") {
        remove_v03_interface_members(&mut c);
    }
    if c.contains_key("securityRequirements") {
        c.remove("security");
    }
    if c.get("capabilities")
        .and_then(|x| x.get("extendedAgentCard"))
        .is_some()
    {
        c.remove("supportsAuthenticatedExtendedCard");
    }
    if let Some(Value::Array(skills)) = c.get_mut("skills") {
        for s in skills.iter_mut().filter_map(Value::as_object_mut) {
            if s.contains_key("securityRequirements") {
                s.remove("security");
            }
        }
    }
    if let Some(Value::Object(schemes)) = c.get_mut("securitySchemes") {
        for s in schemes.values_mut().filter_map(Value::as_object_mut) {
            if SCHEME_TYPES.iter().any(|(w, _)| s.contains_key(*w)) {
                s.retain(|k, _| SCHEME_TYPES.iter().any(|(w, _)| w == k));
            }
        }
    }
    Value::Object(c)
}

/// Is `v` an A2A v0.3 protocol version (at least 0.3, below 1.0), as the
/// Python SDK's `is_legacy_version` decides which interfaces v0.3 clients
/// can use?
fn is_v03_version(v: &str) -> bool {
    let mut parts = v.split('.');
    let num = |p: Option<&str>| {
        p.and_then(|p| {
            let digits: String = p.chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<u64>().ok()
        })
    };
    num(parts.next()) == Some(0) && num(parts.next()).is_some_and(|m| m >= 3)
}

/// Add to a (signed) v1.0 card the v0.3 members a v0.3 client reads, as the
/// Python SDK's `agent_card_to_dict` does when it serves a card (members
/// already present are left alone):
///
/// * `url`, `preferredTransport`, `protocolVersion` from the first
///   `supportedInterfaces` entry with a v0.3 protocol version (0.3 to
///   below 1.0), `additionalInterfaces` (`url`, `transport`) from the others;
/// * `security` (`[{NAME: [SCOPE...]}]`) from `securityRequirements`, on the
///   card and on each skill;
/// * `supportsAuthenticatedExtendedCard: true` from
///   `capabilities.extendedAgentCard: true`;
/// * in each security scheme, `type` and the v1.0 wrapper's members (an
///   API key's `location` as `in`).
///
/// None of them is covered by a signature ([`normalize`] drops them): a
/// verifier reports each as an uncovered, security-relevant member.
///
/// # Errors
/// [`A2aError::NoV03Interface`] when no `supportedInterfaces` entry has a
/// v0.3 protocol version (the SDK serves such a card without v0.3 members:
/// v0.3 clients cannot use it); [`A2aError::Type`] when the card is not an
/// object.
pub fn add_v03_compat(card: &Value) -> Result<Value, A2aError> {
    let mut c = card
        .as_object()
        .ok_or_else(|| A2aError::Type {
            pointer: String::new(),
            expected: "an object",
        })?
        .clone();
    let legacy: Vec<&Map<String, Value>> = c
        .get("supportedInterfaces")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_object)
                .filter(|i| {
                    i.get("protocolVersion")
                        .and_then(Value::as_str)
                        .is_some_and(is_v03_version)
                })
                .collect()
        })
        .unwrap_or_default();
    let Some((first, rest)) = legacy.split_first() else {
        return Err(A2aError::NoV03Interface);
    };
    let mut add = Map::new();
    for (from, to) in [
        ("url", "url"),
        ("protocolBinding", "preferredTransport"),
        ("protocolVersion", "protocolVersion"),
    ] {
        if let Some(v) = first.get(from) {
            add.insert(to.into(), v.clone());
        }
    }
    if !rest.is_empty() {
        let extra = rest
            .iter()
            .map(|i| {
                let mut m = Map::new();
                if let Some(t) = i.get("protocolBinding") {
                    m.insert("transport".into(), t.clone());
                }
                if let Some(u) = i.get("url") {
                    m.insert("url".into(), u.clone());
                }
                Value::Object(m)
            })
            .collect();
        add.insert("additionalInterfaces".into(), Value::Array(extra));
    }
    if let Some(sec) = v03_security(&c) {
        add.insert("security".into(), sec);
    }
    if c.get("capabilities")
        .and_then(|x| x.get("extendedAgentCard"))
        .and_then(Value::as_bool)
        == Some(true)
    {
        add.insert(
            "supportsAuthenticatedExtendedCard".into(),
            Value::Bool(true),
        );
    }
    for (k, v) in add {
        c.entry(k).or_insert(v);
    }
    if let Some(Value::Array(skills)) = c.get_mut("skills") {
        for s in skills.iter_mut().filter_map(Value::as_object_mut) {
            if let Some(sec) = v03_security(s) {
                s.entry("security").or_insert(sec);
            }
        }
    }
    if let Some(Value::Object(schemes)) = c.get_mut("securitySchemes") {
        for s in schemes.values_mut().filter_map(Value::as_object_mut) {
            let Some((inner, ty)) = SCHEME_TYPES.iter().find_map(|(w, t)| {
                s.get(*w)
                    .and_then(Value::as_object)
                    .map(|i| (i.clone(), *t))
            }) else {
                continue;
            };
            s.entry("type").or_insert_with(|| Value::String(ty.into()));
            for (k, v) in inner {
                let k = if ty == "apiKey" && k == "location" {
                    "in".to_string()
                } else {
                    k
                };
                s.entry(k).or_insert(v);
            }
        }
    }
    Ok(Value::Object(c))
}

/// v1.0 `securityRequirements` as v0.3 `security: [{NAME: [SCOPE...]}]`.
fn v03_security(o: &Map<String, Value>) -> Option<Value> {
    let reqs = o.get("securityRequirements")?.as_array()?;
    let out = reqs
        .iter()
        .map(|r| {
            let mut m = Map::new();
            if let Some(schemes) = r.get("schemes").and_then(Value::as_object) {
                for (name, v) in schemes {
                    let list = v
                        .get("list")
                        .cloned()
                        .unwrap_or_else(|| Value::Array(Vec::new()));
                    m.insert(name.clone(), list);
                }
            }
            Value::Object(m)
        })
        .collect();
    Some(Value::Array(out))
}

fn existing_signatures(card: &Value) -> Result<Vec<Value>, A2aError> {
    match card.get("signatures") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => {
            // Each entry is verified as its own JWS (and may name a key set
            // to fetch): the count is bounded as for one JWS (RFC 7515
            // section 7.2.1 signatures, `jws::MAX_SIGNATURES`).
            if a.len() > jws::MAX_SIGNATURES {
                return Err(A2aError::BadSignature {
                    index: jws::MAX_SIGNATURES,
                    detail: format!(
                        "more than {} signatures: refused unverified",
                        jws::MAX_SIGNATURES
                    ),
                });
            }
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

/// The outcome of [`Verifier::verify_agent_card`](crate::verifier::Verifier::verify_agent_card).
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
    /// The normal form the signatures were checked against (without
    /// `signatures`): see [`CardReport::signed_card`].
    pub card: Value,
    /// True when that normal form has the card's v0.3 members converted
    /// ([`upgrade_v03`], the Python SDK's reading); false when they were
    /// dropped (the JS SDK's reading, or a card without v0.3 members).
    pub converted_v03: bool,
}

impl CardReport {
    /// Whether a signature was checked with a trusted key and failed
    /// ([`crate::policy::SignatureStatus::Invalid`]); without one, a card
    /// that did not verify is "not checked", never invalid (the one verdict
    /// rule, [`crate::policy::signatures_verified`]).
    pub fn any_invalid(&self) -> bool {
        self.signatures
            .iter()
            .filter_map(|r| r.as_ref().ok())
            .flat_map(|r| r.signatures.iter())
            .any(|s| s.verdict.status() == crate::policy::SignatureStatus::Invalid)
    }

    /// At least one signature verified with a trusted key and none was
    /// invalid under a trusted key (a tampered card fails even if another
    /// signature is valid).
    pub fn verified(&self) -> bool {
        // The one verdict rule (crate::policy::signatures_verified).
        crate::policy::signatures_verified(
            self.signatures
                .iter()
                .filter_map(|r| r.as_ref().ok())
                .flat_map(|r| r.signatures.iter().map(|s| s.verdict.status())),
        )
    }

    /// Every entry of `signatures` verified with a trusted key (none
    /// unreadable, none by an unknown key): the `--require-all` rule.
    pub fn verified_all(&self) -> bool {
        !self.signatures.is_empty()
            && self.signatures.iter().all(|r| {
                r.as_ref().is_ok_and(|r| {
                    !r.signatures.is_empty()
                        && r.signatures
                            .iter()
                            .all(|s| s.verdict == jws::Verdict::Valid)
                })
            })
    }

    /// The card as signed: its normal form, holding only members a
    /// signature covers (no `signatures`). Act on this, never on the card
    /// as received: members outside it (see [`CardReport::uncovered`]),
    /// such as the v0.3 `url`, can be changed by anyone without breaking a
    /// signature.
    pub fn signed_card(&self) -> &Value {
        &self.card
    }

    /// The uncovered members that are security-relevant
    /// ([`Uncovered::security`]).
    pub fn uncovered_security(&self) -> impl Iterator<Item = &Uncovered> {
        self.uncovered.iter().filter(|u| u.security)
    }
}

/// Verify every signature of a card against its normal form, with the
/// verifier's keys and algorithms. Key-bearing headers (`jku`, which the SDKs
/// put in the protected header) are ignored rather than refused: keys come
/// only from the verifier's resolver, never from a URL the signer nominates
/// (A2A#2096, RFC 8725 section 3.10).
///
/// A card with v0.3 members is checked against its [`normalize`] form (v0.3
/// members converted, as the Python SDK reads it) and, when that does not
/// verify, against its [`normalize_unconverted`] form (as the JS SDK reads
/// it, the v0.3 members uncovered); the report says which
/// ([`CardReport::converted_v03`]).
///
/// `Ok` only when [`CardReport::verified`]; otherwise
/// [`A2aError::NotVerified`] carries the report. The one public way is
/// [`Verifier::verify_agent_card`](crate::verifier::Verifier::verify_agent_card).
pub(crate) fn verify_card(
    cx: &Context,
    policy: &JwsPolicy,
    card: &Value,
) -> Result<CardReport, A2aError> {
    let sigs = existing_signatures(card)?;
    if sigs.is_empty() {
        return Err(A2aError::NoSignatures);
    }
    let mut cx = cx.clone();
    cx.key_headers = KeyHeaderPolicy::Ignore;
    let n = normalize(card)?;
    let converted = n.converted_v03;
    let report = check_signatures(&cx, policy, &sigs, n);
    let report = if !report.verified() && converted {
        let plain = check_signatures(&cx, policy, &sigs, normalize_unconverted(card)?);
        if plain.verified() {
            plain
        } else {
            report
        }
    } else {
        report
    };
    if report.verified() {
        Ok(report)
    } else {
        Err(A2aError::NotVerified(Box::new(report)))
    }
}

fn check_signatures(cx: &Context, policy: &JwsPolicy, sigs: &[Value], n: Normalized) -> CardReport {
    let mut out = Vec::with_capacity(sigs.len());
    for s in sigs {
        // Flattened JWS JSON without payload (RFC 7515 7.2.2, Appendix F).
        let jws_text = s.to_string();
        out.push(match jws::verify(cx, policy, &jws_text, Some(&n.payload)) {
            Ok(r) => Ok(r),
            Err(JwsVerifyError::NotVerified(r)) => Ok(*r),
            Err(JwsVerifyError::Jws(e)) => Err(e),
        });
    }
    CardReport {
        signatures: out,
        payload: n.payload,
        uncovered: n.uncovered,
        card: n.card,
        converted_v03: n.converted_v03,
    }
}

/// [`verify_card`] over the card's bytes (strict I-JSON).
pub(crate) fn verify_card_bytes(
    cx: &Context,
    policy: &JwsPolicy,
    card: &[u8],
) -> Result<CardReport, A2aError> {
    verify_card(cx, policy, &json::parse_strict(card)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Each entry is verified on its own (and may name a key set to
    /// fetch): more than `jws::MAX_SIGNATURES` are refused unverified.
    #[test]
    fn too_many_signatures_are_refused() {
        let sigs: Vec<Value> = (0..=jws::MAX_SIGNATURES)
            .map(|_| json!({"protected": "e30", "signature": "AA"}))
            .collect();
        let card = json!({"name": "A", "signatures": sigs});
        assert!(matches!(
            existing_signatures(&card),
            Err(A2aError::BadSignature { .. })
        ));
        let mut ok = card.clone();
        ok["signatures"]
            .as_array_mut()
            .unwrap()
            .truncate(jws::MAX_SIGNATURES);
        assert_eq!(existing_signatures(&ok).unwrap().len(), jws::MAX_SIGNATURES);
    }

    #[test]
    fn normal_form_drops_what_the_sdks_drop() {
        let card = json!({
            "name": "A",
            "description": "",
            "url": "https://compat.example/",
            "supportedInterfaces": [],
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
        assert_eq!(sec, vec!["/securitySchemes/m/mtlsSecurityScheme", "/url"]);
        // A scheme required without scopes: uncovered, not security-relevant
        // (an empty list equals no list).
        assert!(n
            .uncovered
            .iter()
            .any(|u| u.pointer == "/securityRequirements/0/schemes/m/list"
                && u.reason == SCOPELESS_REQUIREMENT
                && !u.security));
        assert!(n
            .uncovered
            .iter()
            .any(|u| u.pointer == "/x-unknown" && u.reason == "unknown member"));
        // Beside a `supportedInterfaces` member (even an empty one) the v0.3
        // url is not converted: dropped, and security-relevant.
        assert!(n
            .uncovered
            .iter()
            .any(|u| u.pointer == "/url" && u.reason == "v0.3 compatibility member"));
    }

    #[test]
    fn security_declarations_versus_purged_leaves() {
        for p in [
            "/securitySchemes/m",
            "/securitySchemes/m/mtlsSecurityScheme",
            "/securitySchemes/o/oauth2SecurityScheme/flows",
            "/securityRequirements/0",
            "/securityRequirements/0/schemes",
            "/skills/2/securityRequirements/0",
        ] {
            assert!(is_security(p), "{p}");
        }
        for p in [
            "/securityRequirements/0/schemes/b/list",
            "/skills/2/securityRequirements/0/schemes/b",
        ] {
            assert!(!is_security(p) && is_scopeless_requirement(p), "{p}");
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

    fn v03_card() -> Value {
        json!({
            "name": "Legacy",
            "version": "1",
            "url": "https://legacy.example/a2a",
            "preferredTransport": "HTTP+JSON",
            "protocolVersion": "0.3.0",
            "additionalInterfaces": [{"url": "https://legacy.example/grpc", "transport": "GRPC"}],
            "supportsAuthenticatedExtendedCard": true,
            "securitySchemes": {
                "k": {"type": "apiKey", "in": "header", "name": "X-Key"},
                "b": {"type": "http", "scheme": "bearer"}
            },
            "security": [{"k": ["use"]}, {"b": ["read"]}],
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"], "security": [{"b": ["x"]}]}]
        })
    }

    #[test]
    fn v03_members_are_converted_as_the_python_sdk_does() {
        let n = normalize(&v03_card()).unwrap();
        assert!(n.converted_v03);
        assert_eq!(
            n.card["supportedInterfaces"],
            json!([
                {"url": "https://legacy.example/a2a", "protocolBinding": "HTTP+JSON", "protocolVersion": "0.3.0"},
                {"url": "https://legacy.example/grpc", "protocolBinding": "GRPC", "protocolVersion": "0.3.0"}
            ])
        );
        assert_eq!(n.card["capabilities"]["extendedAgentCard"], true);
        assert_eq!(
            n.card["securitySchemes"]["k"],
            json!({"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}})
        );
        assert_eq!(
            n.card["securityRequirements"],
            json!([{"schemes": {"k": {"list": ["use"]}}}, {"schemes": {"b": {"list": ["read"]}}}])
        );
        assert_eq!(
            n.card["skills"][0]["securityRequirements"],
            json!([{"schemes": {"b": {"list": ["x"]}}}])
        );
        // Everything converted is covered: nothing v0.3 is left uncovered.
        assert!(
            n.uncovered
                .iter()
                .all(|u| u.reason != "v0.3 compatibility member"),
            "{:?}",
            n.uncovered
        );
        // Without the conversion (the JS SDK's reading) they are dropped and flagged.
        let plain = normalize_unconverted(&v03_card()).unwrap();
        assert!(!plain.converted_v03);
        for p in [
            "/url",
            "/preferredTransport",
            "/protocolVersion",
            "/additionalInterfaces",
            "/security",
            "/supportsAuthenticatedExtendedCard",
            "/skills/0/security",
        ] {
            assert!(
                plain.uncovered.iter().any(|u| u.pointer == p
                    && u.security
                    && u.reason == "v0.3 compatibility member"),
                "{p}: {:?}",
                plain.uncovered
            );
        }
    }

    #[test]
    fn v03_members_beside_v1_members_are_security_relevant_and_refused() {
        let key = SigningKey::generate(crate::Algorithm::EcdsaP256Sha256).unwrap();
        let card = json!({
            "name": "A",
            "supportedInterfaces": [{"url": "https://a.example/a2a", "protocolBinding": "JSONRPC"}],
            "url": "https://elsewhere.example/a2a",
            "preferredTransport": "JSONRPC",
            "securityRequirements": [{"schemes": {"o": {"list": ["r"]}}}],
            "security": [{"none": []}]
        });
        let n = normalize(&card).unwrap();
        let sec: Vec<&str> = n
            .uncovered
            .iter()
            .filter(|u| u.security)
            .map(|u| u.pointer.as_str())
            .collect();
        assert_eq!(sec, vec!["/preferredTransport", "/security", "/url"]);
        assert!(matches!(
            sign_card(&card, &key, &Map::new(), false),
            Err(A2aError::UncoveredSecurity(p)) if p == "/preferredTransport, /security, /url"
        ));
        let signed = sign_card(&card, &key, &Map::new(), true).unwrap();
        assert!(signed.card.get("url").is_none());
    }

    #[test]
    fn report_hands_out_the_signed_card_and_flags_rewritten_v03_members() {
        use crate::trust::{KeySource, StaticKeys};
        let key = SigningKey::generate(crate::Algorithm::Ed25519)
            .unwrap()
            .with_kid("a");
        let keys = StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned);
        let v = crate::verifier::Verifier::builder(keys).build();
        let signed = sign_card(&v03_card(), &key, &Map::new(), false).unwrap();
        assert!(signed.card.get("url").is_none(), "written in v1.0 form");
        // A server adds (or an attacker rewrites) the v0.3 url: still valid,
        // but reported, and absent from the signed card.
        let mut served = signed.card.clone();
        served["url"] = json!("https://attacker.example/a2a");
        let r = v.verify_agent_card_value(&served).unwrap();
        assert!(r.verified() && r.verified_all());
        assert!(r.uncovered_security().any(|u| u.pointer == "/url"));
        assert!(r.signed_card().get("url").is_none());
        assert_eq!(
            r.signed_card()["supportedInterfaces"][0]["url"],
            "https://legacy.example/a2a"
        );
        // A signature over the unconverted form (the JS SDK signing a v0.3
        // card as given) verifies too, with the v0.3 members uncovered.
        let plain = normalize_unconverted(&v03_card()).unwrap();
        let opts = SignOptions {
            typ: Some("JOSE".into()),
            b64: true,
            extra: Map::new(),
        };
        let compact = jws::sign_compact_detached(&plain.payload, &key, &opts).unwrap();
        let (p, sig) = compact.split_once("..").unwrap();
        let mut js = v03_card();
        js["signatures"] = json!([{"protected": p, "signature": sig}]);
        let r = v.verify_agent_card_value(&js).unwrap();
        assert!(!r.converted_v03);
        assert!(r.uncovered_security().any(|u| u.pointer == "/url"));
        // --require-all: an entry by an unknown key fails it, not the default rule.
        let other = SigningKey::generate(crate::Algorithm::Ed25519)
            .unwrap()
            .with_kid("b");
        let two = sign_card(&signed.card, &other, &Map::new(), false).unwrap();
        let r = v.verify_agent_card_value(&two.card).unwrap();
        assert!(r.verified());
        assert!(!r.verified_all());
    }
}
