//! The Web Bot Auth verifier's rules (draft-ietf-webbotauth-httpsig-protocol-00
//! section 5.4): attribution only to the covered Signature-Agent member,
//! (URL, thumbprint) key lookup, policy, replay, each with its own code.

use agentsig::httpsig::Message;
use agentsig::replay::MemoryReplayStore;
use agentsig::webbotauth::directory::parse_key_set;
use agentsig::webbotauth::{
    resolve_agent_url, sign_message, Discovery, Policy, SignOptions, SignatureAgent,
    StaticDirectory, Status, WebBotAuthVerifier, WELL_KNOWN_PATH,
};
use agentsig::{Algorithm, SigningKey};
use std::sync::Arc;

const NOW: i64 = 1_800_000_000;

fn req() -> Message {
    Message::parse(
        b"GET /catalog?page=2 HTTP/1.1\r\nHost: shop.example\r\n\r\n",
        "https",
    )
    .unwrap()
}

fn dir_for(url: &str, k: &SigningKey) -> StaticDirectory {
    StaticDirectory::new().with(
        &format!("{url}{WELL_KNOWN_PATH}"),
        vec![k.verifying_key().clone()],
    )
}

fn code(r: &agentsig::webbotauth::Report) -> &'static str {
    r.first_error().map_or("none", |e| e.code())
}

#[test]
fn signed_request_verifies_and_carries_profile_parameters() {
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let mut m = req();
    let s = sign_message(&mut m, &k, &SignOptions::new("https://agent.example", NOW)).unwrap();
    let input = &s.signed.signature_input;
    assert!(input.starts_with(
        "sig1=(\"@method\" \"@authority\" \"@path\" \"signature-agent\";key=\"sig1\");created=1800000000;expires=1800000300;nonce="
    ), "{input}");
    assert!(input.contains(&format!("keyid=\"{}\"", k.verifying_key().thumbprint())));
    assert!(input.ends_with("tag=\"web-bot-auth\""));
    let r = WebBotAuthVerifier::new(Policy::default()).verify(
        &m,
        &dir_for("https://agent.example", &k),
        NOW + 1,
    );
    assert_eq!(r.status(), Status::Verified, "{:?}", r.first_error());
    assert_eq!(r.verified().unwrap().agent, "https://agent.example");
}

#[test]
fn unsigned_request_is_unverified_not_invalid() {
    let r = WebBotAuthVerifier::new(Policy::default()).verify(&req(), &StaticDirectory::new(), NOW);
    assert_eq!(r.status(), Status::Unverified);
}

/// A second member the signature does not cover is never the identity:
/// swapping which member the covered key names breaks the signature, and a
/// signature covering no member is refused outright.
#[test]
fn never_attributed_to_an_uncovered_member() {
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let mut m = req();
    sign_message(&mut m, &k, &SignOptions::new("https://agent.example", NOW)).unwrap();
    // An intermediary adds a member pointing elsewhere: still the covered one.
    m.add_header("Signature-Agent", "evil=\"https://evil.example\"");
    let mut dir = dir_for("https://agent.example", &k);
    dir.insert(
        &format!("https://evil.example{WELL_KNOWN_PATH}"),
        vec![k.verifying_key().clone()],
    );
    let r = WebBotAuthVerifier::new(Policy::default()).verify(&m, &dir, NOW);
    assert_eq!(r.verified().unwrap().agent, "https://agent.example");

    // Rewriting the covered member's value breaks the signature.
    let mut m2 = req();
    sign_message(&mut m2, &k, &SignOptions::new("https://agent.example", NOW)).unwrap();
    for f in &mut m2.headers {
        if f.name == "signature-agent" {
            f.value = b"sig1=\"https://evil.example\"".to_vec();
        }
    }
    let r = WebBotAuthVerifier::new(Policy::default()).verify(&m2, &dir, NOW);
    assert_eq!(r.status(), Status::Invalid);
    assert_eq!(code(&r), "bad-signature");

    // A web-bot-auth signature over @authority only, with a Signature-Agent
    // it does not cover.
    let spec = agentsig::httpsig::SignatureSpec::new("sig1")
        .component(agentsig::httpsig::ComponentId::derived(
            agentsig::httpsig::Derived::Authority,
        ))
        .created(NOW)
        .expires(NOW + 60)
        .keyid(&k.verifying_key().thumbprint())
        .tag("web-bot-auth");
    let mut m3 = req();
    m3.add_header("Signature-Agent", "sig1=\"https://agent.example\"");
    agentsig::httpsig::sign(&m3, None, &spec, &k)
        .unwrap()
        .apply(&mut m3);
    let r = WebBotAuthVerifier::new(Policy::default()).verify(&m3, &dir, NOW);
    assert_eq!(code(&r), "signature-agent-not-covered");
}

#[test]
fn keys_are_looked_up_by_url_and_thumbprint() {
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let other = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let mut m = req();
    sign_message(&mut m, &k, &SignOptions::new("https://agent.example", NOW)).unwrap();
    // The right key, published by another agent, does not verify this one.
    let dir = dir_for("https://other.example", &k).with(
        &format!("https://agent.example{WELL_KNOWN_PATH}"),
        vec![other.verifying_key().clone()],
    );
    let r = WebBotAuthVerifier::new(Policy::default()).verify(&m, &dir, NOW);
    assert_eq!(code(&r), "unknown-key");
}

#[test]
fn policy_allow_list_validity_nonce_and_replay() {
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let dir = dir_for("https://agent.example", &k);
    let mut m = req();
    sign_message(&mut m, &k, &SignOptions::new("https://agent.example", NOW)).unwrap();

    let mut p = Policy::default();
    p.allowed_agents = Some(vec!["https://trusted.example".into()]);
    assert_eq!(
        code(&WebBotAuthVerifier::new(p.clone()).verify(&m, &dir, NOW)),
        "agent-not-allowed"
    );
    p.allowed_agents = Some(vec!["https://AGENT.example:443/".into()]);
    assert_eq!(
        WebBotAuthVerifier::new(p.clone())
            .verify(&m, &dir, NOW)
            .status(),
        Status::Verified
    );
    // An allow-listed origin admits its well-known directory only: a key set
    // at another URL on that origin (a file anyone with write access there
    // could place) must be listed by its exact URL.
    let other_set = "https://agent.example/uploads/keys.json";
    let mut m2 = req();
    sign_message(&mut m2, &k, &SignOptions::new(other_set, NOW)).unwrap();
    let dir2 = StaticDirectory::new().with(other_set, vec![k.verifying_key().clone()]);
    assert_eq!(
        code(&WebBotAuthVerifier::new(p.clone()).verify(&m2, &dir2, NOW)),
        "agent-not-allowed"
    );
    p.allowed_agents = Some(vec![other_set.into()]);
    assert_eq!(
        WebBotAuthVerifier::new(p).verify(&m2, &dir2, NOW).status(),
        Status::Verified
    );

    let mut p = Policy::default();
    p.max_validity = 60;
    assert_eq!(
        code(&WebBotAuthVerifier::new(p).verify(&m, &dir, NOW)),
        "validity-too-long"
    );

    let store = Arc::new(MemoryReplayStore::new());
    let v = WebBotAuthVerifier::new(Policy::default()).with_replay_store(store);
    assert_eq!(v.verify(&m, &dir, NOW).status(), Status::Verified);
    assert_eq!(code(&v.verify(&m, &dir, NOW)), "replay");

    let mut o = SignOptions::new("https://agent.example", NOW);
    o.no_nonce = true;
    let mut m = req();
    sign_message(&mut m, &k, &o).unwrap();
    let mut p = Policy::default();
    p.require_nonce = true;
    assert_eq!(
        code(&WebBotAuthVerifier::new(p).verify(&m, &dir, NOW)),
        "missing-parameter"
    );
}

/// One request consults at most MAX_KEY_SETS_PER_REQUEST key sets: labels
/// naming further agents fail with `too-many-key-sets`, without a lookup.
#[test]
fn one_request_consults_a_bounded_number_of_key_sets() {
    use agentsig::webbotauth::MAX_KEY_SETS_PER_REQUEST;
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let mut m = req();
    let mut dir = StaticDirectory::new();
    let n = MAX_KEY_SETS_PER_REQUEST + 1;
    for i in 0..n {
        let agent = format!("https://agent{i}.example");
        let mut o = SignOptions::new(&agent, NOW);
        o.label = format!("sig{i}");
        sign_message(&mut m, &k, &o).unwrap();
        dir = dir.with(
            &format!("{agent}{WELL_KNOWN_PATH}"),
            vec![k.verifying_key().clone()],
        );
    }
    let r = WebBotAuthVerifier::new(Policy::default()).verify(&m, &dir, NOW + 1);
    assert_eq!(r.labels.len(), n);
    let codes: Vec<&str> = r
        .labels
        .iter()
        .map(|l| l.result.as_ref().map_or_else(|e| e.code(), |_| "ok"))
        .collect();
    assert_eq!(
        codes.iter().filter(|c| **c == "ok").count(),
        MAX_KEY_SETS_PER_REQUEST,
        "{codes:?}"
    );
    assert_eq!(
        codes.iter().filter(|c| **c == "too-many-key-sets").count(),
        1,
        "{codes:?}"
    );
}

#[test]
fn signer_refuses_hmac_long_lifetimes_and_non_https_agents() {
    let h = SigningKey::generate(Algorithm::HmacSha256).unwrap();
    assert!(sign_message(
        &mut req(),
        &h,
        &SignOptions::new("https://agent.example", NOW)
    )
    .is_err());
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let mut o = SignOptions::new("https://agent.example", NOW);
    o.lifetime = 86_401;
    assert!(sign_message(&mut req(), &k, &o).is_err());
    let e = sign_message(
        &mut req(),
        &k,
        &SignOptions::new("http://agent.example", NOW),
    )
    .unwrap_err();
    assert_eq!(e.code(), "agent-url-invalid");
}

#[test]
fn signature_agent_forms_and_resolution() {
    let d = SignatureAgent::parse(&[
        b"a=\"https://x.example\", b=\"https://y.example/keys.json\";type=jwks_uri",
    ])
    .unwrap();
    assert!(!d.legacy);
    assert_eq!(d.members.len(), 2);
    assert_eq!(d.member("b").unwrap().kind.as_deref(), Some("jwks_uri"));
    let l = SignatureAgent::parse(&[b"\"https://chatgpt.com\""]).unwrap();
    assert!(l.legacy);
    assert!(SignatureAgent::parse(&[b"a=1"]).is_err());
    assert!(SignatureAgent::parse(&[b"a=(\"x\")"]).is_err());

    let u = resolve_agent_url("https://Agent.Example:443/", None).unwrap();
    assert_eq!(u.discovery, Discovery::Directory);
    assert_eq!(
        u.key_set_url,
        "https://agent.example/.well-known/http-message-signatures-directory"
    );
    let u = resolve_agent_url("https://agent.example/keys.json", None).unwrap();
    assert_eq!(u.discovery, Discovery::JwksUri);
    assert_eq!(u.key_set_url, "https://agent.example/keys.json");
    assert_eq!(
        resolve_agent_url("https://a.example", Some("cimd"))
            .unwrap_err()
            .code(),
        "agent-type-unsupported"
    );
    for bad in [
        "http://a.example",
        "https://",
        "https://u@a.example",
        "https://a.example/#x",
        "ftp://a",
    ] {
        assert_eq!(
            resolve_agent_url(bad, None).unwrap_err().code(),
            "agent-url-invalid",
            "{bad}"
        );
    }
}

#[test]
fn directory_kid_must_be_the_thumbprint() {
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let mut jwk = k.verifying_key().to_jwk().to_value();
    jwk["kid"] = "not-the-thumbprint".into();
    let body = serde_json::json!({"keys": [jwk]}).to_string();
    let dir = resolve_agent_url("https://agent.example", None).unwrap();
    assert_eq!(
        parse_key_set(&dir, body.as_bytes()).unwrap_err().code(),
        "directory-kid-mismatch"
    );
    // At a plain JWK Set URL a kid is the operator's label: the key is indexed by thumbprint.
    let jwks = resolve_agent_url("https://agent.example/jwks.json", None).unwrap();
    let set = parse_key_set(&jwks, body.as_bytes()).unwrap();
    assert!(set.get(&k.verifying_key().thumbprint()).is_some());
    let many =
        serde_json::json!({"keys": vec![k.verifying_key().to_jwk().to_value(); 65]}).to_string();
    assert_eq!(
        parse_key_set(&jwks, many.as_bytes()).unwrap_err().code(),
        "directory-too-many-keys"
    );
}

/// Section 5.4: a signature on a request that did not arrive over TLS is
/// refused by default.
#[test]
fn plain_http_requests_are_refused_by_default() {
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let mut m = Message::parse(b"GET / HTTP/1.1\r\nHost: shop.example\r\n\r\n", "http").unwrap();
    sign_message(&mut m, &k, &SignOptions::new("https://agent.example", NOW)).unwrap();
    let dir = dir_for("https://agent.example", &k);
    assert_eq!(
        code(&WebBotAuthVerifier::new(Policy::default()).verify(&m, &dir, NOW)),
        "request-not-tls"
    );
    let mut p = Policy::default();
    p.require_tls = false;
    assert_eq!(
        WebBotAuthVerifier::new(p).verify(&m, &dir, NOW).status(),
        Status::Verified
    );
}

/// Hostile Signature-Agent fields are refused with a code, never a panic:
/// too large, too many members, repeated keys, non-String members, and a
/// member that is not an https URL.
#[test]
fn hostile_signature_agent_fields() {
    let big = format!("a=\"https://{}.example\"", "x".repeat(9000));
    assert!(SignatureAgent::parse(&[big.as_bytes()]).is_err());
    let many: Vec<String> = (0..17)
        .map(|i| format!("m{i}=\"https://a.example\""))
        .collect();
    assert!(SignatureAgent::parse(&[many.join(", ").as_bytes()]).is_err());
    assert!(SignatureAgent::parse(&[b"a=\"https://x.example\", a=\"https://y.example\""]).is_err());
    assert!(SignatureAgent::parse(&[b"a=:AAAA:"]).is_err());
    assert!(SignatureAgent::parse(&[b"\"unterminated"]).is_err());
    assert!(SignatureAgent::parse(&[b"a=\"https://x.example\";type"]).is_ok());

    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let dir = dir_for("https://agent.example", &k);
    for (value, want) in [
        ("sig1=\"http://agent.example\"", "agent-url-invalid"),
        (
            "sig1=\"https://agent.example\";type=cimd",
            "agent-type-unsupported",
        ),
        (
            "sig1=(\"https://agent.example\")",
            "signature-agent-malformed",
        ),
        (
            "other=\"https://agent.example\"",
            "signature-agent-member-missing",
        ),
    ] {
        let mut m = req();
        let mut o = SignOptions::new("https://agent.example", NOW);
        o.label = "sig1".into();
        sign_message(&mut m, &k, &o).unwrap();
        for f in &mut m.headers {
            if f.name == "signature-agent" {
                f.value = value.as_bytes().to_vec();
            }
        }
        let r = WebBotAuthVerifier::new(Policy::default()).verify(&m, &dir, NOW);
        assert_eq!(r.status(), Status::Invalid, "{value}");
        assert_eq!(code(&r), want, "{value}");
    }
}

/// A request with content is accepted only when its signature covers
/// `content-digest` (RFC 9421 section 7.2.8, RFC 9530 section 2), so a
/// verified agent never vouches for content it did not sign; a request
/// without content needs none, and the policy can waive the rule.
#[test]
fn content_must_be_covered_by_content_digest() {
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let dir = dir_for("https://agent.example", &k);
    let post = || {
        Message::parse(
            b"POST /orders HTTP/1.1\r\nHost: shop.example\r\nContent-Length: 9\r\n\r\n{\"n\": 1}\n",
            "https",
        )
        .unwrap()
    };
    let mut bare = post();
    let mut uncovered = SignOptions::new("https://agent.example", NOW);
    uncovered.content_digest = false;
    sign_message(&mut bare, &k, &uncovered).unwrap();
    let r = WebBotAuthVerifier::new(Policy::default()).verify(&bare, &dir, NOW);
    assert_eq!(r.status(), Status::Invalid);
    assert!(
        r.first_error()
            .unwrap()
            .to_string()
            .contains("content-digest"),
        "{:?}",
        r.first_error()
    );
    let mut waived = Policy::default();
    waived.require_content_digest = false;
    assert_eq!(
        WebBotAuthVerifier::new(waived)
            .verify(&bare, &dir, NOW)
            .status(),
        Status::Verified
    );

    // Signing covers the content by default.
    let mut covered = post();
    sign_message(
        &mut covered,
        &k,
        &SignOptions::new("https://agent.example", NOW),
    )
    .unwrap();
    assert!(covered
        .field_lines("content-digest", false)
        .next()
        .is_some());
    assert_eq!(
        WebBotAuthVerifier::new(Policy::default())
            .verify(&covered, &dir, NOW)
            .status(),
        Status::Verified
    );
    // The covered digest is checked against the content.
    let mut changed = covered.clone();
    changed.body = b"{\"n\": 9}\n".to_vec();
    assert_eq!(
        WebBotAuthVerifier::new(Policy::default())
            .verify(&changed, &dir, NOW)
            .status(),
        Status::Invalid
    );
}
