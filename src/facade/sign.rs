//! Signing as the bindings offer it: descriptors, A2A cards, RFC 9421
//! responses and requests (Web Bot Auth or plain), with the default
//! components each one covers.

use super::error::{Failure, Outcome};
use super::message::{fields, has_field, has_query, request_message, Headers};
use crate::httpsig::{ComponentId, Derived, Message, SignatureSpec};
use crate::SigningKey;
use serde_json::{Map, Value};

/// Default lifetime of a request signature (`expires - created`), seconds:
/// the Web Bot Auth default.
pub const DEFAULT_EXPIRES_IN: u64 = crate::webbotauth::DEFAULT_LIFETIME;

/// The compact detached JWS (RFC 7515 Appendix F) over the RFC 8785
/// canonical form of the descriptor `doc` (draft-narvaneni-agent-uri-03
/// section 10.3).
///
/// # Errors
/// `input.malformed` for a document that is not strict I-JSON,
/// `input.unreadable` above the document bound, `key.unusable` when the key
/// cannot sign.
pub fn sign_descriptor(doc: &[u8], key: &SigningKey) -> Outcome<String> {
    use crate::descriptor::DescriptorError as E;
    let max = crate::policy::Limits::default().max_document_bytes;
    crate::descriptor::sign(doc, key)
        .map(|s| s.jws)
        .map_err(|e| match e {
            E::Json(e) => Failure::malformed(format!("descriptor is not strict I-JSON: {e}")),
            E::TooLarge(n) => Failure::too_large("doc", n, max),
            other => Failure::bad_key(other.to_string()),
        })
}

/// A JSON document's bytes as strict I-JSON (RFC 7493), `what` naming it.
///
/// # Errors
/// `input.malformed`.
pub fn parse_json(b: &[u8], what: &str) -> Outcome<Value> {
    crate::json::parse_strict(b)
        .map_err(|e| Failure::malformed(format!("{what} is not strict I-JSON: {e}")))
}

/// The A2A Agent Card `card` signed as the A2A SDKs sign it: its normal
/// form plus `signatures`; `force` re-signs a card that already carries
/// signatures.
///
/// # Errors
/// `input.malformed` for a card that cannot be signed.
pub fn sign_card(card: &Value, key: &SigningKey, force: bool) -> Outcome<Value> {
    crate::a2a::sign_card(card, key, &Map::new(), force)
        .map(|s| s.card)
        .map_err(|e| Failure::malformed(format!("A2A card: {e}")))
}

/// Sign `msg` (RFC 9421 section 3.1) over `spec`'s components with
/// `created`, `expires` (`created + expires_in`, when given), `keyid` and
/// `alg` from `key`: the `Signature-Input` and `Signature` fields to add.
fn sign_spec(
    msg: &Message,
    spec: SignatureSpec,
    key: &SigningKey,
    created: i64,
    expires_in: Option<u64>,
) -> Outcome<[(String, String); 2]> {
    let mut spec = spec
        .created(created)
        .keyid(&key.kid_or_thumbprint())
        .alg(key.algorithm());
    if let Some(e) = expires_in {
        spec = spec.expires(created.saturating_add(i64::try_from(e).unwrap_or(i64::MAX)));
    }
    let s = crate::httpsig::sign(msg, None, &spec, key)
        .map_err(|e| Failure::malformed(format!("RFC 9421 signing: {e}")))?;
    Ok([
        ("Signature-Input".to_owned(), s.signature_input),
        ("Signature".to_owned(), s.signature),
    ])
}

fn field_id(name: &str) -> Outcome<ComponentId> {
    ComponentId::field(name).map_err(|e| Failure::malformed(e.to_string()))
}

/// Add `Content-Digest` (RFC 9530, SHA-256) to `msg` when it has none:
/// the pair added, if any.
fn add_digest(msg: &mut Message) -> Option<(String, String)> {
    if has_field(msg, "content-digest") {
        return None;
    }
    let d = crate::digest::content_digest(&msg.body);
    msg.add_header("Content-Digest", &d);
    Some(("Content-Digest".to_owned(), d))
}

/// What [`sign_response`] signs and how.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ResponseSigning {
    /// The signature's label (default `sig1`).
    pub label: String,
    /// `created`, Unix seconds (default: now).
    pub created: Option<i64>,
    /// `expires - created`, seconds (default: no `expires`).
    pub expires_in: Option<u64>,
}

impl Default for ResponseSigning {
    fn default() -> Self {
        ResponseSigning {
            label: "sig1".into(),
            created: None,
            expires_in: None,
        }
    }
}

/// Sign a response (RFC 9421 section 3.1) with `Content-Digest` (RFC 9530,
/// added when absent) over `@status`, `content-type` when present and
/// `content-digest`: `headers` with the added fields after them.
///
/// # Errors
/// `input.malformed` when the message cannot be signed.
pub fn sign_response(
    status: u16,
    headers: &Headers,
    body: Vec<u8>,
    key: &SigningKey,
    o: &ResponseSigning,
) -> Outcome<Vec<(String, String)>> {
    let mut msg = Message::response(status, fields(headers), body);
    let mut out = headers.to_vec();
    out.extend(add_digest(&mut msg));
    let created = o.created.unwrap_or_else(now_secs);
    let mut spec =
        SignatureSpec::new(o.label.clone()).component(ComponentId::derived(Derived::Status));
    for f in ["content-type", "content-digest"] {
        if has_field(&msg, f) {
            spec = spec.component(field_id(f)?);
        }
    }
    out.extend(sign_spec(&msg, spec, key, created, o.expires_in)?);
    Ok(out)
}

/// What [`sign_request`] signs and how.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RequestSigning {
    /// Sign under the Web Bot Auth profile (needs `signature_agent`).
    pub web_bot_auth: bool,
    /// The agent's `Signature-Agent` URL (Web Bot Auth).
    pub signature_agent: Option<String>,
    /// `expires - created`, seconds ([`DEFAULT_EXPIRES_IN`]).
    pub expires_in: u64,
    /// Components to cover (plain RFC 9421 only; default: see
    /// [`sign_request`]).
    pub components: Option<Vec<String>>,
    /// The signature's label (default `sig1`).
    pub label: String,
    /// `created`, Unix seconds (default: now).
    pub created: Option<i64>,
}

impl Default for RequestSigning {
    fn default() -> Self {
        RequestSigning {
            web_bot_auth: false,
            signature_agent: None,
            expires_in: DEFAULT_EXPIRES_IN,
            components: None,
            label: "sig1".into(),
            created: None,
        }
    }
}

/// Sign a request: under the Web Bot Auth profile
/// (draft-ietf-webbotauth-httpsig-protocol section 5.2; `tag="web-bot-auth"`,
/// `Signature-Agent`, keyid the RFC 7638 thumbprint, `created`/`expires`, a
/// nonce, `Content-Digest`) when `o.web_bot_auth`, else plain RFC 9421 over
/// the `components` named or, by default, `@method`, `@authority`, `@path`
/// (`@query` when there is one), `content-type` when present and
/// `content-digest` (added, RFC 9530) when there is a body: `headers` with
/// the added fields after them.
///
/// ```
/// use agentsig::facade::{sign_request, RequestSigning};
/// let key = agentsig::SigningKey::from_ed25519_seed(&[9u8; 32])?;
/// let mut o = RequestSigning::default();
/// o.created = Some(1_760_000_000);
/// let h = sign_request("GET", "https://api.example/x?q=1", &[], Vec::new(), &key, &o)?;
/// let input = &h.iter().find(|(n, _)| n == "Signature-Input").unwrap().1;
/// assert!(input.starts_with(r#"sig1=("@method" "@authority" "@path" "@query")"#));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// `usage` for Web Bot Auth without a signature agent or an unknown
/// component; `input.malformed` for a request that cannot be signed.
pub fn sign_request(
    method: &str,
    url: &str,
    headers: &Headers,
    body: Vec<u8>,
    key: &SigningKey,
    o: &RequestSigning,
) -> Outcome<Vec<(String, String)>> {
    let mut msg = request_message(method, url, headers, body)?;
    let created = o.created.unwrap_or_else(now_secs);
    let mut out = headers.to_vec();
    if o.web_bot_auth {
        let Some(agent) = &o.signature_agent else {
            return Err(Failure::usage(
                "Web Bot Auth needs a signature agent (the agent's https URL); or sign plain RFC 9421",
            ));
        };
        let mut w = crate::webbotauth::SignOptions::new(agent.clone(), created);
        w.label = o.label.clone();
        w.lifetime = o.expires_in;
        w.content_digest = true;
        let s = crate::webbotauth::sign_message(&mut msg, key, &w)
            .map_err(|e| Failure::malformed(format!("Web Bot Auth: {e}")))?;
        out.extend(s.fields);
        return Ok(out);
    }
    if !msg.body.is_empty() {
        out.extend(add_digest(&mut msg));
    }
    let mut spec = SignatureSpec::new(o.label.clone());
    match &o.components {
        Some(cs) => {
            for c in cs {
                spec = spec.component(
                    ComponentId::parse(c)
                        .or_else(|_| ComponentId::parse(&format!("\"{c}\"")))
                        .map_err(|e| Failure::usage(format!("component {c:?}: {e}")))?,
                );
            }
        }
        None => {
            for d in [Derived::Method, Derived::Authority, Derived::Path] {
                spec = spec.component(ComponentId::derived(d));
            }
            if has_query(&msg) {
                spec = spec.component(ComponentId::derived(Derived::Query));
            }
            for f in ["content-type", "content-digest"] {
                if has_field(&msg, f) {
                    spec = spec.component(field_id(f)?);
                }
            }
        }
    }
    out.extend(sign_spec(&msg, spec, key, created, Some(o.expires_in))?);
    Ok(out)
}

/// The current time, Unix seconds.
pub(crate) fn now_secs() -> i64 {
    crate::clock::Clock::now(&crate::clock::SystemClock)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> SigningKey {
        SigningKey::from_ed25519_seed(&[5u8; 32]).unwrap()
    }

    #[test]
    fn a_response_gets_a_digest_and_covers_status_type_and_digest() {
        let h = vec![("Content-Type".to_owned(), "application/json".to_owned())];
        let o = ResponseSigning {
            created: Some(1_760_000_000),
            expires_in: Some(60),
            ..Default::default()
        };
        let out = sign_response(200, &h, b"{}".to_vec(), &key(), &o).unwrap();
        let names: Vec<&str> = out.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "Content-Type",
                "Content-Digest",
                "Signature-Input",
                "Signature"
            ]
        );
        assert!(out[2]
            .1
            .starts_with(r#"sig1=("@status" "content-type" "content-digest");created=1760000000;expires=1760000060"#));
    }

    #[test]
    fn a_request_without_body_has_no_digest_and_web_bot_auth_needs_an_agent() {
        let mut o = RequestSigning {
            created: Some(1_760_000_000),
            ..Default::default()
        };
        let out = sign_request("GET", "https://a.example/p", &[], Vec::new(), &key(), &o).unwrap();
        assert!(!out.iter().any(|(n, _)| n == "Content-Digest"));
        o.web_bot_auth = true;
        let e =
            sign_request("GET", "https://a.example/p", &[], Vec::new(), &key(), &o).unwrap_err();
        assert_eq!(e.code, "usage");
        o.signature_agent = Some("https://agent.example".into());
        let out =
            sign_request("GET", "https://a.example/p", &[], b"x".to_vec(), &key(), &o).unwrap();
        assert!(out.iter().any(|(n, _)| n == "Signature-Agent"));
        assert!(out
            .iter()
            .any(|(n, v)| n == "Signature-Input" && v.contains("web-bot-auth")));
    }

    #[test]
    fn named_components_may_be_bare_field_names() {
        let mut o = RequestSigning {
            components: Some(vec!["@method".into(), "x-a".into()]),
            ..Default::default()
        };
        let h = vec![("X-A".to_owned(), "1".to_owned())];
        let out = sign_request("GET", "https://a.example/", &h, Vec::new(), &key(), &o).unwrap();
        assert!(out
            .iter()
            .any(|(_, v)| v.starts_with(r#"sig1=("@method" "x-a")"#)));
        o.components = Some(vec!["@bogus".into()]);
        assert_eq!(
            sign_request("GET", "https://a.example/", &h, Vec::new(), &key(), &o)
                .unwrap_err()
                .code,
            "usage"
        );
    }
}
