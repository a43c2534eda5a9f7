//! RFC 9421 Ed25519 verification of one signed request, agentsig against
//! Cloudflare's `web-bot-auth` 0.7 (ed25519-dalek), the same message,
//! signature and key, in the same run.
//!
//! The message is a request signed over `@method`, `@authority`, `@path`
//! with `created`, `keyid` and `alg`. agentsig verifies it with one shared
//! `Verifier` (strict policy: `created` and `keyid` required, age checked,
//! the key bound to its algorithm, `verify_strict`); `web-bot-auth` parses
//! the `Signature-Input`/`Signature` fields, builds the base and verifies
//! with a key from its `KeyRing` (it decodes the key on every verify).
//!
//! Prints the ratio (agentsig time / web-bot-auth time; below 1.0: agentsig
//! is faster).
//!
//! Then, in the same run: RFC 9421 ES256 verification of a signed 10 KB
//! descriptor response with its RFC 9530 `Content-Digest` (the fields
//! `agentsig sign --headers` and `agentsig serve` publish: `@status`,
//! `content-type`, `content-digest`, with `created`, `expires`, `keyid`,
//! `alg`) against `httpsig-hyper` 0.0.26 (signature, then
//! `verify_content_digest`), each building its message from the same
//! field lines and body, in interleaved rounds. Run: `cargo bench --bench httpsig_peers -- --warm-up-time 1 --measurement-time 2`

use agentsig::httpsig::{self, ComponentId, Derived, HttpPolicy, Message, SignatureSpec};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::{Algorithm, SigningKey};
use base64::Engine as _;
use criterion::{black_box, Criterion};
use web_bot_auth::components::{CoveredComponent, DerivedComponent, HTTPField};
use web_bot_auth::keyring::KeyRing;
use web_bot_auth::message_signatures::{MessageVerifier, SignedMessage};

#[path = "support/interleaved.rs"]
mod interleaved;

const CREATED: i64 = 1_735_689_600;

/// A 10 KB JSON descriptor body.
fn descriptor_10k() -> Vec<u8> {
    let mut s = String::from("{\"name\":\"bench-agent\",\"skills\":[");
    let mut i = 0;
    while s.len() < 10 * 1024 - 40 {
        s.push_str(&format!(
            "{{\"id\":\"skill-{i}\",\"description\":\"does thing {i}\"}},"
        ));
        i += 1;
    }
    s.push_str("{\"id\":\"last\"}]}");
    s.into_bytes()
}

/// RFC 9421 ES256 + Content-Digest on a 10 KB response: agentsig against
/// httpsig-hyper, same fields, body and key.
fn es256_digest_vs_httpsig_hyper() {
    use bytes::Bytes;
    use http_body_util::Full;
    use httpsig_hyper::prelude::{AlgorithmName, PublicKey};
    use httpsig_hyper::{MessageSignatureResSync, ResponseContentDigest};

    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256)
        .expect("key")
        .with_kid("k1");
    let body = descriptor_10k();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64;
    let fields = httpsig::static_response_fields(
        &body,
        "application/json",
        &[(&key, "k1".to_owned())],
        now - 5,
        Some(now + 3600),
    )
    .expect("sign");
    let verifier =
        Verifier::builder(StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned))
            .http(HttpPolicy::descriptor_response())
            .build();
    let ours = || {
        let mut m = Message::response(200, Vec::new(), body.clone());
        for (n, v) in &fields {
            m.add_header(n, v);
        }
        verifier
            .verify_http(black_box(&m), None)
            .map(|r| r.all_valid())
            .unwrap_or(false)
    };
    let pk = PublicKey::from_pem(
        &AlgorithmName::EcdsaP256Sha256,
        &key.verifying_key().to_spki_pem().expect("spki"),
    )
    .expect("peer key");
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let body_bytes = Bytes::from(body.clone());
    let theirs = || {
        let mut b = http::Response::builder().status(200);
        for (n, v) in &fields {
            b = b.header(n.as_str(), v.as_str());
        }
        let res = b.body(Full::new(body_bytes.clone())).expect("response");
        res.verify_message_signature_sync(&pk, Some("k1"), None::<&http::Request<()>>)
            .is_ok()
            && rt.block_on(black_box(res).verify_content_digest()).is_ok()
    };
    assert!(ours(), "agentsig verifies");
    assert!(theirs(), "httpsig-hyper verifies");
    let t = interleaved::interleaved_medians(&[&|| assert!(ours()), &|| assert!(theirs())], 15);
    println!(
        "\nRFC 9421 ES256 + Content-Digest, 10 KB response (medians of 15 interleaved rounds):\n  {}",
        interleaved::line("verify", t[0], t[1], "httpsig-hyper 0.0.26")
    );
}

/// The request as `web-bot-auth` looks its components up.
struct Request {
    input: String,
    signature: String,
}

impl SignedMessage for Request {
    fn lookup_component(&self, name: &CoveredComponent) -> Vec<String> {
        match name {
            CoveredComponent::HTTP(HTTPField { name, .. }) => match name.as_str() {
                "signature-input" => vec![self.input.clone()],
                "signature" => vec![self.signature.clone()],
                _ => vec![],
            },
            CoveredComponent::Derived(DerivedComponent::Method { .. }) => vec!["GET".into()],
            CoveredComponent::Derived(DerivedComponent::Authority { .. }) => {
                vec!["agent.example".into()]
            }
            CoveredComponent::Derived(DerivedComponent::Path { .. }) => {
                vec!["/.well-known/agent.json".into()]
            }
            CoveredComponent::Derived(_) => vec![],
        }
    }
}

fn main() {
    let key = SigningKey::generate(Algorithm::Ed25519)
        .expect("key")
        .with_kid("k1");
    let mut msg = Message::parse(
        b"GET /.well-known/agent.json HTTP/1.1\r\nHost: agent.example\r\n\r\n",
        "https",
    )
    .expect("request");
    let spec = SignatureSpec::new("sig1")
        .component(ComponentId::derived(Derived::Method))
        .component(ComponentId::derived(Derived::Authority))
        .component(ComponentId::derived(Derived::Path))
        .created(CREATED)
        .keyid("k1")
        .alg(Algorithm::Ed25519);
    let signed = httpsig::sign(&msg, None, &spec, &key).expect("sign");
    signed.apply(&mut msg);
    let verifier =
        Verifier::builder(StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned))
            .clock(agentsig::clock::FixedClock(CREATED + 10))
            .http(HttpPolicy::default())
            .build();
    let ours = || {
        verifier
            .verify_http(black_box(&msg), None)
            .map(|r| r.all_valid())
            .unwrap_or(false)
    };
    assert!(ours());

    let req = Request {
        input: signed.signature_input.clone(),
        signature: signed.signature.clone(),
    };
    let jwk = key.verifying_key().to_jwk().to_value();
    let pk = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(jwk["x"].as_str().expect("x"))
        .expect("base64url");
    let mut ring = KeyRing::default();
    assert!(ring.import_raw("k1".into(), web_bot_auth::keyring::Algorithm::Ed25519, pk));
    let theirs = || {
        MessageVerifier::parse(black_box(&req), |_| true)
            .and_then(|v| v.verify(&ring, None))
            .is_ok()
    };
    assert!(theirs());

    let mut c = Criterion::default().configure_from_args();
    {
        let mut g = c.benchmark_group("rfc9421_ed25519_verify");
        g.bench_function("agentsig", |b| b.iter(ours));
        g.bench_function("web-bot-auth 0.7", |b| b.iter(theirs));
        g.finish();
    }
    c.final_summary();
    // `cargo test --all-targets` runs this once as a smoke test (no
    // `--bench` argument): the interleaved timing loops are for `cargo
    // bench` only.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let a = interleaved::per_call(2000, &ours);
    let w = interleaved::per_call(2000, &theirs);
    // The signature check alone, on the same base: agentsig's parsed key
    // (verify_strict) and web-bot-auth's way (decode the key, verify).
    let vk = key.verifying_key().clone();
    let sig = signed.signature_bytes.clone();
    let base = signed.base.clone();
    let raw_ours = interleaved::per_call(2000, &|| vk.verify(black_box(&base), &sig).is_ok());
    let pk2: [u8; 32] = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(jwk["x"].as_str().expect("x"))
        .expect("base64url")
        .try_into()
        .expect("32 bytes");
    let raw_theirs = interleaved::per_call(2000, &|| {
        use ed25519_dalek::Verifier as _;
        let k = ed25519_dalek::VerifyingKey::from_bytes(&pk2).expect("key");
        let s = ed25519_dalek::Signature::from_slice(&sig).expect("sig");
        k.verify(black_box(&base), &s).is_ok()
    });
    println!(
        "signature check alone: agentsig {:.1} µs, decode + ed25519-dalek verify {:.1} µs",
        raw_ours / 1e3,
        raw_theirs / 1e3
    );
    println!(
        "\nRFC 9421 Ed25519 verify of one request (median of 7 interleaved batches): \
         agentsig {:.1} µs, web-bot-auth 0.7 {:.1} µs, ratio {:.2}x (agentsig / web-bot-auth)",
        a / 1e3,
        w / 1e3,
        a / w
    );
    let t = interleaved::interleaved_medians(&[&|| assert!(ours()), &|| assert!(theirs())], 15);
    println!(
        "  the same, 15 rounds taking turns: {}",
        interleaved::line("verify", t[0], t[1], "web-bot-auth 0.7")
    );
    es256_digest_vs_httpsig_hyper();
}
