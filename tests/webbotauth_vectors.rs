//! The test vectors of draft-ietf-webbotauth-httpsig-protocol-00 Appendix E
//! (the same values as draft-meunier-web-bot-auth-architecture-05), both
//! directions: each received signature verifies, and signing the same
//! inputs reproduces the signature base (and, for deterministic Ed25519,
//! the signature) byte for byte. Keys: RFC 9421 Appendix B.1.2 (RSA-PSS)
//! and B.1.4 (Ed25519), in keys/rfc9421.

use agentsig::clock::FixedClock;
use agentsig::httpsig::{self, ComponentId, Derived, HttpPolicy, Message, SignatureSpec};
use agentsig::sfv::BareItem;
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::webbotauth::directory::{
    directory_body, parse_key_set, sign_directory, verify_directory,
};
use agentsig::webbotauth::{
    self, resolve_agent_url, Policy, StaticDirectory, Status, WebBotAuthVerifier, WELL_KNOWN_PATH,
};
use agentsig::{Algorithm, LoadOptions, SigningKey};

const ED_THUMB: &str = "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";
const RSA_THUMB: &str = "oD0HwocPBSfpNy5W3bpJeyFGY_IQ_YpqxSjQ3Yd-CLA";
const CREATED: i64 = 1735689600;
const NOW: i64 = CREATED + 100;

fn key(name: &str, alg: Algorithm) -> SigningKey {
    let data = std::fs::read(format!("keys/rfc9421/{name}.pem")).unwrap();
    agentsig::keys::load_signing_key(
        &data,
        &LoadOptions {
            alg: Some(alg),
            ..Default::default()
        },
    )
    .unwrap()
}

fn ed() -> SigningKey {
    key("test-key-ed25519", Algorithm::Ed25519)
}

fn request(extra: &str) -> Message {
    let raw = format!("GET /path/to/resource HTTP/1.1\r\nHost: example.com\r\n{extra}\r\n");
    Message::parse(raw.as_bytes(), "https").unwrap()
}

const E21_AGENT: &str = r#"agent2="https://signature-agent.test""#;
const E21_INPUT: &str = r#"sig2=("@authority" "signature-agent";key="agent2");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=4889289600;nonce="n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA==";tag="web-bot-auth""#;
const E21_SIG: &str = "sig2=:RdNFx5Bj6au3YgAMQL/RzmUlZE8QZLIaXGRpw985hWnwPfMxT228NMk6ehRS1PSl4e8PhbNZACSanGdhEwYCCg==:";

const E22_INPUT: &str = r#"sig2=("@authority" "signature-agent");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=1735693200;nonce="e8N7S2MFd/qrd6T2R3tdfAuuANngKI7LFtKYI/vowzk4lAZYadIX6wW25MwG7DCT9RUKAJ0qVkU0mEeLElW1qg==";tag="web-bot-auth""#;
const E22_SIG: &str = "sig2=:jdq0SqOwHdyHr9+r5jw3iYZH6aNGKijYp/EstF4RQTQdi5N5YYKrD+mCT1HA1nZDsi6nJKuHxUi/5Syp3rLWBA==:";

const DIR_BODY: &str = r#"{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs","use":"sig"}]}"#;
const DIR_DIGEST: &str = "sha-256=:CADMT2aBdV/rqQr/NIru64ERQkCobVvllA4V0fLFDu0=:";
const DIR_INPUT: &str = r#"binding=("@authority";req "content-digest");created=1735689600;expires=4889289600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";tag="http-message-signatures-directory""#;
const DIR_SIG: &str = "binding=:l6P8R67tm3kujAxbHWio7ll01qrEZ0dKD/WWlGhNYEmTnFZM8Wt0VQ9zqGfvo7T/UMkBxsigzChM1Gpz7gOVBg==:";

fn directory() -> StaticDirectory {
    StaticDirectory::new().with(
        &format!("https://signature-agent.test{WELL_KNOWN_PATH}"),
        vec![ed().verifying_key().clone()],
    )
}

/// The vectors are valid until 2124: the profile's 24 h bound is lifted.
fn vector_policy() -> Policy {
    let mut p = test_key_policy();
    p.max_validity = u64::MAX;
    p
}

/// The vectors are signed with the RFC 9421 test keys, which the default
/// policy refuses (section 5.2: verifiers SHOULD reject them).
fn test_key_policy() -> Policy {
    let mut p = Policy::default();
    p.reject_test_keys = false;
    p
}

#[test]
fn thumbprints_are_the_drafts() {
    assert_eq!(ed().verifying_key().thumbprint(), ED_THUMB);
    assert_eq!(
        key("test-key-rsa-pss", Algorithm::RsaPssSha512)
            .verifying_key()
            .thumbprint(),
        RSA_THUMB
    );
}

#[test]
fn e21_dictionary_form_verifies_and_names_the_agent() {
    let msg = request(&format!(
        "Signature-Agent: {E21_AGENT}\r\nSignature-Input: {E21_INPUT}\r\nSignature: {E21_SIG}\r\n"
    ));
    let r = WebBotAuthVerifier::new(vector_policy()).verify(&msg, &directory(), NOW);
    assert_eq!(r.status(), Status::Verified, "{:?}", r.first_error());
    let v = r.verified().unwrap();
    assert_eq!(v.label, "sig2");
    assert_eq!(v.agent, "https://signature-agent.test");
    assert_eq!(
        v.key_set_url,
        "https://signature-agent.test/.well-known/http-message-signatures-directory"
    );
    assert_eq!(v.keyid, ED_THUMB);
    assert!(!v.legacy);
}

/// Sign direction: the same inputs, in the vector's parameter order, give
/// the same signature base and (Ed25519 is deterministic) the same
/// signature.
#[test]
fn e21_signing_reproduces_the_signature() {
    let msg = request(&format!("Signature-Agent: {E21_AGENT}\r\n"));
    let spec = SignatureSpec::new("sig2")
        .component(ComponentId::derived(Derived::Authority))
        .component(webbotauth::signature_agent_component("agent2").unwrap())
        .param("created", BareItem::Integer(CREATED))
        .param("keyid", BareItem::String(ED_THUMB.into()))
        .param("alg", BareItem::String("ed25519".into()))
        .param("expires", BareItem::Integer(4889289600))
        .param("nonce", BareItem::String("n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA==".into()))
        .param("tag", BareItem::String("web-bot-auth".into()));
    let s = httpsig::sign(&msg, None, &spec, &ed()).unwrap();
    assert_eq!(
        String::from_utf8(s.base).unwrap(),
        format!(
            "\"@authority\": example.com\n\"signature-agent\";key=\"agent2\": \"https://signature-agent.test\"\n\"@signature-params\": {}",
            &E21_INPUT["sig2=".len()..]
        )
    );
    assert_eq!(s.signature_input, E21_INPUT);
    assert_eq!(s.signature, E21_SIG);
}

#[test]
fn e22_legacy_string_form_verifies() {
    let msg = request(&format!(
        "Signature-Agent: \"https://signature-agent.test\"\r\nSignature-Input: {E22_INPUT}\r\nSignature: {E22_SIG}\r\n"
    ));
    let r = WebBotAuthVerifier::new(test_key_policy()).verify(&msg, &directory(), NOW);
    assert_eq!(r.status(), Status::Verified, "{:?}", r.first_error());
    assert!(r.verified().unwrap().legacy);
    // The same signature is expired an hour later.
    let r = WebBotAuthVerifier::new(test_key_policy()).verify(&msg, &directory(), 1735693200 + 120);
    assert_eq!(r.status(), Status::Invalid);
    assert_eq!(r.first_error().unwrap().code(), "expired");
    // A policy that refuses the legacy form says so.
    let mut p = test_key_policy();
    p.accept_legacy = false;
    let r = WebBotAuthVerifier::new(p).verify(&msg, &directory(), NOW);
    assert_eq!(r.first_error().unwrap().code(), "signature-agent-malformed");
}

#[test]
fn e22_signing_reproduces_the_signature() {
    let msg = request("Signature-Agent: \"https://signature-agent.test\"\r\n");
    let spec = SignatureSpec::new("sig2")
        .component(ComponentId::derived(Derived::Authority))
        .component(ComponentId::field("signature-agent").unwrap())
        .param("created", BareItem::Integer(CREATED))
        .param("keyid", BareItem::String(ED_THUMB.into()))
        .param("alg", BareItem::String("ed25519".into()))
        .param("expires", BareItem::Integer(1735693200))
        .param("nonce", BareItem::String("e8N7S2MFd/qrd6T2R3tdfAuuANngKI7LFtKYI/vowzk4lAZYadIX6wW25MwG7DCT9RUKAJ0qVkU0mEeLElW1qg==".into()))
        .param("tag", BareItem::String("web-bot-auth".into()));
    let s = httpsig::sign(&msg, None, &spec, &ed()).unwrap();
    assert_eq!(s.signature_input, E22_INPUT);
    assert_eq!(s.signature, E22_SIG);
}

const V2_ED_INPUT: &str = r#"sig1=("@authority");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=4889289600;nonce="zIW8+cdmA3vdYagbxojpONwa/l0EKJ/O3/wD486VvsQjO/RxPaSt6ZxvQaMcQzNnqKN/mQ6hpGiFro2L2qkz5A==";tag="web-bot-auth""#;
const V2_ED_SIG: &str = "sig1=:QKN4fTdIYfh82fvoZCQiQA1weuozfCS/Led2zTMbewMMqH8PI2Wsy/5c4ao6B6D09nraNQdBNOADg8aM1MqfCg==:";
const E11_RSA_INPUT: &str = r#"sig1=("@authority");created=1735689600;keyid="oD0HwocPBSfpNy5W3bpJeyFGY_IQ_YpqxSjQ3Yd-CLA";alg="rsa-pss-sha512";expires=4889289600;nonce="JojDFWJ90jf+gZhdKeTyJYsu1XvNPZSFAGhvYq5SuV3gneOEUAhq+xl792WGuD1W+Dr6NRmx+m+t06NsYnL4iA==";tag="web-bot-auth""#;
const E11_RSA_SIG: &str = "sig1=:hWPaj85MWQiRkzU4jnIKvdPQiDfMCPIoxOP8nZveNc3aFQ7r/UmXWCwGNImw588iRvTFey5TR3fVEgnXpcttlyK+u5pN831z9Wlr+IMNfub4uEM3SuO+SKFygJZyLG0pf7OAiRcU4C0gyx1BS/+z9ydQTRzDLr88wCkBBRqwGRrSi8HTwxkqg1jugobh93hcnU6gV8MK1n+VnhRprIgl2RQSO6q5cfbB4OS8C4t/8ndW0lYmP2SWzKZJXnpX5Wrj17PuLqnVW6MO8pJnLAMXNvxUdx32KHeq/cHFrzZazZsua3UOoP+k+niHwoQ8bBWj1Vi4mM1mYJK+fk366cCLsQ==:";
const E12_RSA_INPUT: &str = r#"sig2=("@authority" "signature-agent";key="agent2");created=1735689600;keyid="oD0HwocPBSfpNy5W3bpJeyFGY_IQ_YpqxSjQ3Yd-CLA";alg="rsa-pss-sha512";expires=4889289600;nonce="wcfPQPh7SzkvrIVvhD00vNk9PkxJNY2NVbYl2PVBB4zmUoluSwE7W6bPtF60QA3k8g06FU7PPCD+J58YofY1zg==";tag="web-bot-auth""#;
const E12_RSA_SIG: &str = "sig2=:gHzpLNeHaHIO19NaJH9YMW5dcVSi2s0wOMBr6p18vcofS106sfC4KBIS0/szPlBBd1vIcyQ88B6CTEWIhRAiVrb9zfX0mx1aG12CSGWcYkSirHeyTxhbuJvXd27ed6skWoy4PjXItq38936ivUQjfdIwXh1aX6HxkAC3vRnEdSNfntkLWeEuIQ5BLIOBGE39fSwg27Qjq6OVWYas/9/aFUr3HA34MXWYdp+//cvlEKDp3kRoLOw9ro0AOr6srHrTeEtxon2afcws1aZVSlPdd2fZSEIGmw9HAHLDCEkFTERu1gH2k/zIEqgy7CAYXI9E5slog0cLg/Vc6+f8gih33g==:";

/// The RSA-PSS request of Appendix E.1 with its Signature-Agent member
/// verifies under the profile.
#[test]
fn e1_rsa_pss_dictionary_form_verifies() {
    let rsa = key("test-key-rsa-pss", Algorithm::RsaPssSha512);
    let msg = request(&format!(
        "Signature-Agent: {E21_AGENT}\r\nSignature-Input: {E12_RSA_INPUT}\r\nSignature: {E12_RSA_SIG}\r\n"
    ));
    let dir = StaticDirectory::new().with(
        &format!("https://signature-agent.test{WELL_KNOWN_PATH}"),
        vec![rsa.verifying_key().clone()],
    );
    let r = WebBotAuthVerifier::new(vector_policy()).verify(&msg, &dir, NOW);
    assert_eq!(r.status(), Status::Verified, "{:?}", r.first_error());
    assert_eq!(r.verified().unwrap().alg, "rsa-pss-sha512");
    assert_eq!(r.verified().unwrap().keyid, RSA_THUMB);
}

/// The drafts' Appendix E.1 requests carry no Signature-Agent (it was
/// added to the drafts later, and is required since protocol-02): the RFC
/// 9421 signatures verify byte for byte, and the profile reports them as
/// lacking the field rather than verified.
#[test]
fn e1_requests_without_signature_agent() {
    let rsa = key("test-key-rsa-pss", Algorithm::RsaPssSha512);
    for (input, sig, k) in [
        (V2_ED_INPUT, V2_ED_SIG, ed()),
        (E11_RSA_INPUT, E11_RSA_SIG, rsa),
    ] {
        let msg = request(&format!("Signature-Input: {input}\r\nSignature: {sig}\r\n"));
        let keys = StaticKeys::new().with(k.verifying_key().clone(), KeySource::Pinned);
        let mut p = HttpPolicy::new();
        p.max_age = None;
        let v = Verifier::builder(keys)
            .clock(FixedClock(NOW))
            .http(p)
            .build();
        let ok = v.verify_http(&msg, None).unwrap();
        assert_eq!(ok.valid_labels().len(), 1);
        let mut dir = directory();
        dir.insert(
            &format!("https://signature-agent.test{WELL_KNOWN_PATH}"),
            vec![k.verifying_key().clone()],
        );
        let r = WebBotAuthVerifier::new(vector_policy()).verify(&msg, &dir, NOW);
        assert_eq!(r.status(), Status::Invalid);
        assert_eq!(r.first_error().unwrap().code(), "signature-agent-missing");
    }
}

/// RSA-PSS signing is randomised: the base is reproduced byte for byte and
/// the new signature verifies.
#[test]
fn e11_rsa_pss_signing_reproduces_the_base() {
    let rsa = key("test-key-rsa-pss", Algorithm::RsaPssSha512);
    let msg = request("");
    let spec = SignatureSpec::new("sig1")
        .component(ComponentId::derived(Derived::Authority))
        .param("created", BareItem::Integer(CREATED))
        .param("keyid", BareItem::String(RSA_THUMB.into()))
        .param("alg", BareItem::String("rsa-pss-sha512".into()))
        .param("expires", BareItem::Integer(4889289600))
        .param("nonce", BareItem::String("JojDFWJ90jf+gZhdKeTyJYsu1XvNPZSFAGhvYq5SuV3gneOEUAhq+xl792WGuD1W+Dr6NRmx+m+t06NsYnL4iA==".into()))
        .param("tag", BareItem::String("web-bot-auth".into()));
    let s = httpsig::sign(&msg, None, &spec, &rsa).unwrap();
    assert_eq!(s.signature_input, E11_RSA_INPUT);
    assert_eq!(
        String::from_utf8(s.base).unwrap(),
        format!(
            "\"@authority\": example.com\n\"@signature-params\": {}",
            &E11_RSA_INPUT["sig1=".len()..]
        )
    );
}

/// An RSA-PSS agent under the profile (with Signature-Agent) verifies end to end.
#[test]
fn rsa_pss_profile_round_trip() {
    let rsa = key("test-key-rsa-pss", Algorithm::RsaPssSha512);
    let mut msg = request("");
    let mut o = webbotauth::SignOptions::new("https://signature-agent.test", NOW - 5);
    o.label = "agent".into();
    webbotauth::sign_message(&mut msg, &rsa, &o).unwrap();
    let dir = StaticDirectory::new().with(
        &format!("https://signature-agent.test{WELL_KNOWN_PATH}"),
        vec![rsa.verifying_key().clone()],
    );
    let r = WebBotAuthVerifier::new(test_key_policy()).verify(&msg, &dir, NOW);
    assert_eq!(r.status(), Status::Verified, "{:?}", r.first_error());
    assert_eq!(r.verified().unwrap().alg, "rsa-pss-sha512");
}

#[test]
fn e23_directory_body_and_signature_reproduce() {
    assert_eq!(directory_body(&[ed().verifying_key()]), DIR_BODY.as_bytes());
    assert_eq!(
        agentsig::digest::content_digest(DIR_BODY.as_bytes()),
        DIR_DIGEST
    );
    let s = sign_directory(
        DIR_BODY.as_bytes(),
        "signature-agent.test",
        &ed(),
        "binding",
        CREATED,
        4889289600,
    )
    .unwrap();
    assert_eq!(s.signature_input, DIR_INPUT);
    assert_eq!(s.signature, DIR_SIG);
}

#[test]
fn e23_directory_signature_verifies() {
    let url = resolve_agent_url("https://signature-agent.test", None).unwrap();
    let set = parse_key_set(&url, DIR_BODY.as_bytes()).unwrap();
    assert_eq!(set.keys.len(), 1);
    assert_eq!(set.keys[0].0, ED_THUMB);
    let headers = vec![
        ("Content-Digest".to_owned(), DIR_DIGEST.to_owned()),
        ("Signature-Input".to_owned(), DIR_INPUT.to_owned()),
        ("Signature".to_owned(), DIR_SIG.to_owned()),
    ];
    let labels = verify_directory(
        &set,
        "signature-agent.test",
        &headers,
        DIR_BODY.as_bytes(),
        NOW,
    )
    .unwrap();
    assert_eq!(labels, ["binding"]);
    // The proof is bound to the authority it was fetched from.
    let e = verify_directory(&set, "other.test", &headers, DIR_BODY.as_bytes(), NOW).unwrap_err();
    assert_eq!(e.code(), "directory-signature-invalid");
    // And to the body, through Content-Digest.
    let mut body = DIR_BODY.as_bytes().to_vec();
    body.push(b' ');
    let e = verify_directory(&set, "signature-agent.test", &headers, &body, NOW).unwrap_err();
    assert_eq!(e.code(), "directory-signature-invalid");
}

/// A proof in the older drafts' form, `("@authority";req)` without
/// `content-digest` (as npm web-bot-auth 0.1.3 still emits), is not a proof
/// under the current text: skipped as absent, neither counted nor fatal.
#[test]
fn authority_only_directory_proof_is_not_counted() {
    let url = resolve_agent_url("https://signature-agent.test", None).unwrap();
    let set = parse_key_set(&url, DIR_BODY.as_bytes()).unwrap();
    let mut spec = SignatureSpec::new("binding0")
        .created(CREATED)
        .expires(4889289600)
        .keyid(ED_THUMB)
        .tag("http-message-signatures-directory");
    spec.components = vec![ComponentId::parse("\"@authority\";req").unwrap()];
    let req = Message::parse(
        b"GET /.well-known/http-message-signatures-directory HTTP/1.1\r\nHost: signature-agent.test\r\n\r\n",
        "https",
    )
    .unwrap();
    let res = Message::response(200, Vec::new(), DIR_BODY.as_bytes().to_vec());
    let s = httpsig::sign(&res, Some(&req), &spec, &ed()).unwrap();
    let headers = vec![
        ("Signature-Input".to_owned(), s.signature_input),
        ("Signature".to_owned(), s.signature),
    ];
    let labels = verify_directory(
        &set,
        "signature-agent.test",
        &headers,
        DIR_BODY.as_bytes(),
        NOW,
    )
    .unwrap();
    assert!(labels.is_empty());
}

/// By default the test keys themselves are refused, with their own code.
#[test]
fn rfc9421_test_keys_are_refused_by_default() {
    let msg = request(&format!(
        "Signature-Agent: {E21_AGENT}\r\nSignature-Input: {E21_INPUT}\r\nSignature: {E21_SIG}\r\n"
    ));
    let mut p = Policy::default();
    p.max_validity = u64::MAX;
    let r = WebBotAuthVerifier::new(p).verify(&msg, &directory(), NOW);
    assert_eq!(r.status(), Status::Invalid);
    assert_eq!(r.first_error().unwrap().code(), "test-key");
}
