//! Web Bot Auth interop with Cloudflare's Rust reference implementation,
//! the `web-bot-auth` crate 0.7.0: signed here and verified there, signed
//! there and verified here. The crate leaves component lookup to its caller
//! (`SignedMessage::lookup_component`); this adapter applies RFC 9421
//! section 2.1.2 itself: `"signature-agent";key="k"` is the value of member
//! `k`, not the whole field. The crate's own example returns the whole
//! field there; a signature made that way is refused here (last test).

use agentsig::httpsig::Message;
use agentsig::webbotauth::{
    sign_message, Policy, SignOptions, StaticDirectory, Status, WebBotAuthVerifier, WELL_KNOWN_PATH,
};
use agentsig::{Algorithm, LoadOptions, SigningKey};
use indexmap::IndexMap;
use std::time::Duration;
use web_bot_auth::components::{
    CoveredComponent, DerivedComponent, HTTPField, HTTPFieldParameters, HTTPFieldParametersSet,
};
use web_bot_auth::keyring::{Algorithm as WbaAlg, KeyRing};
use web_bot_auth::message_signatures::{MessageSigner, SignedMessage, UnsignedMessage};
use web_bot_auth::WebBotAuthVerifier as CfVerifier;

const THUMB: &str = "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";
/// RFC 9421 Appendix B.1.4 (test-key-ed25519), raw.
const SEED_B64URL: &str = "n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU";
const PUB_B64URL: &str = "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs";

fn ours() -> SigningKey {
    let data = std::fs::read("keys/rfc9421/test-key-ed25519.pem").unwrap();
    agentsig::keys::load_signing_key(
        &data,
        &LoadOptions {
            alg: Some(Algorithm::Ed25519),
            ..Default::default()
        },
    )
    .unwrap()
}

fn b64url(s: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s)
        .unwrap()
}

fn now() -> i64 {
    agentsig::clock::Clock::now(&agentsig::clock::SystemClock)
}

/// agentsig's message model seen through the crate's `SignedMessage`.
struct Adapter<'a> {
    m: &'a Message,
    /// Return the whole Signature-Agent field for `;key=` (the crate
    /// example's behaviour, which is not RFC 9421).
    whole_field: bool,
}

fn fields(m: &Message, name: &str) -> Vec<String> {
    m.field_lines(name, false)
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .collect()
}

impl SignedMessage for Adapter<'_> {
    fn lookup_component(&self, name: &CoveredComponent) -> Vec<String> {
        let line = match &self.m.kind {
            agentsig::httpsig::message::Kind::Request(l) => l,
            _ => return vec![],
        };
        match name {
            CoveredComponent::Derived(DerivedComponent::Authority { .. }) => {
                vec![line.authority.clone()]
            }
            CoveredComponent::Derived(DerivedComponent::Method { .. }) => vec![line.method.clone()],
            CoveredComponent::Derived(DerivedComponent::Path { .. }) => vec![line.path.clone()],
            CoveredComponent::HTTP(HTTPField { name, parameters }) => {
                let whole = fields(self.m, name);
                let key = parameters.0.iter().find_map(|p| match p {
                    HTTPFieldParameters::Key(k) => Some(k.clone()),
                    _ => None,
                });
                match key {
                    Some(_) if self.whole_field => vec![whole.join(", ")],
                    Some(k) => member_value(&whole.join(", "), &k).into_iter().collect(),
                    None => whole,
                }
            }
            _ => vec![],
        }
    }
}

/// RFC 9421 section 2.1.2: the serialized value of one Dictionary member
/// (Signature-Agent members are sf-strings).
fn member_value(field: &str, key: &str) -> Option<String> {
    let d = agentsig::webbotauth::SignatureAgent::parse(&[field.as_bytes()]).ok()?;
    let v = &d.member(key)?.value;
    Some(format!(
        "\"{}\"",
        v.replace('\\', "\\\\").replace('"', "\\\"")
    ))
}

#[test]
fn signed_by_agentsig_verified_by_web_bot_auth_crate() {
    let mut m = Message::parse(
        b"GET /path/to/resource HTTP/1.1\r\nHost: example.com\r\n\r\n",
        "https",
    )
    .unwrap();
    let mut o = SignOptions::new("https://signature-agent.test", now());
    o.label = "agent2".into();
    sign_message(&mut m, &ours(), &o).unwrap();
    let v = CfVerifier::parse(&Adapter {
        m: &m,
        whole_field: false,
    })
    .unwrap();
    let mut ring = KeyRing::default();
    assert!(ring.import_raw(THUMB.into(), WbaAlg::Ed25519, b64url(PUB_B64URL)));
    v.verify(&ring, None).unwrap();

    // A changed member value no longer verifies there either.
    for f in &mut m.headers {
        if f.name == "signature-agent" {
            f.value = b"agent2=\"https://evil.test\"".to_vec();
        }
    }
    let v = CfVerifier::parse(&Adapter {
        m: &m,
        whole_field: false,
    })
    .unwrap();
    assert!(v.verify(&ring, None).is_err());
}

/// A request the crate signs: `@authority` and the Signature-Agent member.
struct Outgoing {
    member_value: String,
    input: String,
    sig: String,
}

impl UnsignedMessage for Outgoing {
    fn fetch_components_to_cover(&self) -> IndexMap<CoveredComponent, String> {
        IndexMap::from_iter([
            (
                CoveredComponent::Derived(DerivedComponent::Authority { req: false }),
                "example.com".to_string(),
            ),
            (
                CoveredComponent::HTTP(HTTPField {
                    name: "signature-agent".into(),
                    parameters: HTTPFieldParametersSet(vec![HTTPFieldParameters::Key(
                        "sig1".into(),
                    )]),
                }),
                self.member_value.clone(),
            ),
        ])
    }
    fn register_header_contents(&mut self, signature_input: String, signature_header: String) {
        self.input = format!("sig1={signature_input}");
        self.sig = format!("sig1={signature_header}");
    }
}

fn signed_there(member_value: &str) -> Message {
    let mut out = Outgoing {
        member_value: member_value.into(),
        input: String::new(),
        sig: String::new(),
    };
    let signer = MessageSigner {
        keyid: THUMB.into(),
        nonce: "bm9uY2UtZnJvbS10aGUtY3JhdGU=".into(),
        tag: "web-bot-auth".into(),
    };
    let seed: [u8; 32] = b64url(SEED_B64URL).try_into().unwrap();
    signer
        .generate_signature_headers_content(
            &mut out,
            Duration::from_secs(60),
            WbaAlg::Ed25519,
            &seed,
        )
        .unwrap();
    let raw = format!(
        "GET /path/to/resource HTTP/1.1\r\nHost: example.com\r\nSignature-Agent: sig1=\"https://signature-agent.test\"\r\nSignature-Input: {}\r\nSignature: {}\r\n\r\n",
        out.input, out.sig
    );
    Message::parse(raw.as_bytes(), "https").unwrap()
}

fn directory() -> StaticDirectory {
    StaticDirectory::new().with(
        &format!("https://signature-agent.test{WELL_KNOWN_PATH}"),
        vec![ours().verifying_key().clone()],
    )
}

#[test]
fn signed_by_web_bot_auth_crate_verified_by_agentsig() {
    let m = signed_there("\"https://signature-agent.test\"");
    let r = WebBotAuthVerifier::new(test_key_policy()).verify(&m, &directory(), now());
    assert_eq!(r.status(), Status::Verified, "{:?}", r.first_error());
    assert_eq!(r.verified().unwrap().agent, "https://signature-agent.test");
}

/// The crate's example signs the whole Signature-Agent field value on the
/// `"signature-agent";key="sig1"` line. RFC 9421 section 2.1.2 says that
/// line holds the member's value only, so the signature base differs and
/// agentsig refuses it as a bad signature (never as verified).
#[test]
fn whole_field_under_key_parameter_is_refused() {
    let m = signed_there("sig1=\"https://signature-agent.test\"");
    let r = WebBotAuthVerifier::new(test_key_policy()).verify(&m, &directory(), now());
    assert_eq!(r.status(), Status::Invalid);
    assert_eq!(r.first_error().unwrap().code(), "bad-signature");
    // The crate verifies it only when its lookup is equally non-conforming.
    let v = CfVerifier::parse(&Adapter {
        m: &m,
        whole_field: true,
    })
    .unwrap();
    let mut ring = KeyRing::default();
    ring.import_raw(THUMB.into(), WbaAlg::Ed25519, b64url(PUB_B64URL));
    v.verify(&ring, None).unwrap();
}

/// The RFC 9421 test key signs these requests; the default policy refuses
/// it (section 5.2), so the peers' signatures are checked with that rule off.
fn test_key_policy() -> Policy {
    let mut p = Policy::default();
    p.reject_test_keys = false;
    p
}
