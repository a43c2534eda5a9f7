//! Signature-Key (draft-hardt-httpbis-signature-key-07, an optional draft
//! mechanism): the `hwk` and `jwks_uri` schemes, the signature required to
//! cover `signature-key`, and the CLI's `--profile signature-key`.
#![cfg(feature = "net")]

mod net_support;

use agentsig::httpsig::{self, ComponentId, Derived, Message, SignatureSpec};
use agentsig::net::webbotauth::DirectoryClient;
use agentsig::net::{FetchPolicy, Fetcher};
use agentsig::webbotauth::signature_key::{hwk_member, parse, Scheme};
use agentsig::webbotauth::{Policy, WebBotAuthVerifier};
use agentsig::{Algorithm, SigningKey};
use net_support::{loopback, Ca, Resp, Server};
use std::sync::Arc;

const NOW: i64 = 1_800_000_000;

/// A request with `Signature-Key: sig=<member>`, signed by `key` over
/// `@authority` (and `signature-key` when `cover`).
fn signed(member: &str, key: &SigningKey, cover: bool, keyid: Option<&str>) -> Message {
    let mut m = Message::parse(b"GET /x HTTP/1.1\r\nHost: shop.example\r\n\r\n", "https").unwrap();
    m.add_header("Signature-Key", member);
    let mut spec = SignatureSpec::new("sig")
        .component(ComponentId::derived(Derived::Authority))
        .created(NOW)
        .expires(NOW + 60)
        .alg(key.algorithm());
    if cover {
        spec = spec.component(ComponentId::field("signature-key").unwrap());
    }
    if let Some(k) = keyid {
        spec = spec.keyid(k);
    }
    httpsig::sign(&m, None, &spec, key).unwrap().apply(&mut m);
    m
}

fn results(
    m: &Message,
) -> Vec<(
    String,
    Result<agentsig::webbotauth::signature_key::SignatureKeyVerified, agentsig::webbotauth::Error>,
)> {
    WebBotAuthVerifier::new(Policy::default())
        .verify_signature_key(m, None, NOW + 1)
        .unwrap()
}

#[test]
fn hwk_inline_key_verifies_with_a_thumbprint_identity() {
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let member = hwk_member("sig", k.verifying_key()).unwrap();
    assert!(
        member.starts_with("sig=hwk;kty=\"OKP\";crv=\"Ed25519\";x=\""),
        "{member}"
    );
    let m = signed(&member, &k, true, None);
    let r = results(&m);
    let v = r[0].1.as_ref().unwrap();
    assert_eq!(v.scheme, "hwk");
    assert_eq!(
        v.identity,
        format!("urn:jkt:sha-256:{}", k.verifying_key().thumbprint())
    );

    // P-256 too.
    let p = SigningKey::generate(Algorithm::EcdsaP256Sha256).unwrap();
    let m = signed(
        &hwk_member("sig", p.verifying_key()).unwrap(),
        &p,
        true,
        None,
    );
    assert!(results(&m)[0].1.is_ok());
}

#[test]
fn hwk_refusals() {
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let other = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let member = hwk_member("sig", k.verifying_key()).unwrap();
    // signature-key not covered: the scheme could be swapped.
    let m = signed(&member, &k, false, None);
    assert_eq!(
        results(&m)[0].1.as_ref().unwrap_err().code(),
        "required-component-not-covered"
    );
    // Another key inline than the signer's.
    let m = signed(
        &hwk_member("sig", other.verifying_key()).unwrap(),
        &k,
        true,
        None,
    );
    assert_eq!(
        results(&m)[0].1.as_ref().unwrap_err().code(),
        "bad-signature"
    );
    // alg must not be present on hwk.
    let m = signed(&format!("{member};alg=\"ed25519\""), &k, true, None);
    assert!(WebBotAuthVerifier::new(Policy::default())
        .verify_signature_key(&m, None, NOW)
        .is_err());
    // Other schemes are reported, not guessed.
    let m = signed("sig=jkt-jwt;jwt=\"e30.e30.\"", &k, true, None);
    assert_eq!(
        results(&m)[0].1.as_ref().unwrap_err().code(),
        "agent-type-unsupported"
    );
    assert!(matches!(&parse(&m).unwrap()[0].1, Scheme::Unsupported(s) if s == "jkt-jwt"));
}

#[test]
fn jwks_uri_scheme_fetches_the_signers_keys() {
    let ca = Ca::new();
    let srv = Server::start(&ca, &["signer.example"]);
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let mut jwk = k.verifying_key().to_jwk().to_value();
    jwk["kid"] = "key-2026".into();
    srv.route(
        "/jwks.json",
        Resp::json(&serde_json::json!({"keys": [jwk]})),
    );
    srv.route(
        "/.well-known/agent-meta",
        Resp::json(&serde_json::json!({"jwks_uri": srv.url("signer.example", "/jwks.json")})),
    );
    let id = srv.url("signer.example", "");
    let member = format!("sig=jwks_uri;id=\"{id}\";dwk=\"agent-meta\";kid=\"key-2026\"");
    let m = signed(&member, &k, true, Some("key-2026"));
    let f = Fetcher::with_policy(
        FetchPolicy::default()
            .extra_root_pem(ca.pem())
            .allow_private_networks(true)
            .pin("signer.example", loopback()),
    )
    .unwrap();
    let c = DirectoryClient::new(Arc::new(f));
    let v = WebBotAuthVerifier::new(Policy::default());
    let r = v.verify_signature_key(&m, Some(&c), NOW + 1).unwrap();
    let ok = r[0].1.as_ref().unwrap();
    assert_eq!(ok.scheme, "jwks_uri");
    assert_eq!(ok.identity, id);
    // An unknown kid, and an id off the allow-list.
    let m = signed(&member.replace("key-2026", "key-1999"), &k, true, None);
    let r = v.verify_signature_key(&m, Some(&c), NOW + 1).unwrap();
    assert_eq!(r[0].1.as_ref().unwrap_err().code(), "directory-unknown");
    let mut p = Policy::default();
    p.allowed_agents = Some(vec!["https://trusted.example".into()]);
    let m = signed(&member, &k, true, None);
    let r = WebBotAuthVerifier::new(p)
        .verify_signature_key(&m, Some(&c), NOW + 1)
        .unwrap();
    assert_eq!(r[0].1.as_ref().unwrap_err().code(), "agent-not-allowed");
    // The identity itself on the allow-list: admitted.
    let mut p = Policy::default();
    p.allowed_agents = Some(vec![id.clone()]);
    let r = WebBotAuthVerifier::new(p)
        .verify_signature_key(&m, Some(&c), NOW + 1)
        .unwrap();
    assert!(r[0].1.is_ok(), "{:?}", r[0].1);
    // An id with a path is the identity: its metadata is fetched from under
    // that path, not from the origin's (which would let any key of the
    // host's root set claim every path).
    let m = signed(
        &member.replace(&format!("id=\"{id}\""), &format!("id=\"{id}/someone\"")),
        &k,
        true,
        None,
    );
    let r = v.verify_signature_key(&m, Some(&c), NOW + 1).unwrap();
    assert_eq!(
        r[0].1.as_ref().unwrap_err().code(),
        "directory-status",
        "{:?}",
        r[0].1
    );
    assert_eq!(srv.hit_count("/someone/.well-known/agent-meta"), 1);
    // A dwk that is not one path segment.
    let m = signed(&member.replace("agent-meta", "../x"), &k, true, None);
    let r = v.verify_signature_key(&m, Some(&c), NOW + 1).unwrap();
    assert_eq!(r[0].1.as_ref().unwrap_err().code(), "agent-url-invalid");
}

#[cfg(feature = "cli")]
#[test]
fn cli_profile_signature_key() {
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let m = signed(
        &hwk_member("sig", k.verifying_key()).unwrap(),
        &k,
        true,
        None,
    );
    let mut raw = String::from("GET /x HTTP/1.1\r\n");
    for f in &m.headers {
        raw.push_str(&format!(
            "{}: {}\r\n",
            f.name,
            String::from_utf8_lossy(&f.value)
        ));
    }
    raw.push_str("\r\n");
    let p = std::env::temp_dir().join(format!("agentsig-sigkey-{}.http", std::process::id()));
    std::fs::write(&p, raw).unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_agentsig"))
        .args(["http", "verify"])
        .arg(&p)
        .args([
            "--profile",
            "signature-key",
            "--authority",
            "shop.example",
            "--now",
            &(NOW + 1).to_string(),
            "--json",
        ])
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&p);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["schema"], "agentsig.report/1");
    assert_eq!(v["verdict"], "verified");
    assert_eq!(v["signatures"][0]["verdict"], "valid");
    assert_eq!(v["details"]["signers"][0]["scheme"], "hwk");
}
