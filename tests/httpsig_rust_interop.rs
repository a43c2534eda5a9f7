//! Interop with the most used Rust RFC 9421 crates, `httpsig` and
//! `httpsig-hyper` 0.0.26, both directions, ES256 and Ed25519: httpsig-hyper
//! signs and agentsig verifies; agentsig signs (a request through the
//! `SignatureSpec` setters the CLI and serve layer use, and the static
//! response fields `agentsig sign` writes) and httpsig-hyper verifies.
//!
//! httpsig 0.0.26 rebuilds `@signature-params` in a fixed order (created,
//! expires, nonce, alg, keyid, tag) instead of using the received value, so
//! it refuses a valid signature whose parameters are in another order. Any
//! order is valid RFC 9421; agentsig's setters emit that order
//! (`httpsig::PARAM_ORDER`) so that its signatures verify there. The
//! peer's limit is pinned by `peer_refuses_other_parameter_orders`.

use agentsig::httpsig::SignHttp;
use agentsig::httpsig::{self, ComponentId, HttpPolicy, SignatureSpec};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::verifier::VerifyHttp;
use agentsig::{Algorithm, SigningKey};
use bytes::Bytes;
use http_body_util::Full;
use httpsig_hyper::prelude::{
    message_component::HttpMessageComponentId, AlgorithmName, HttpSignatureParams, PublicKey,
    SecretKey,
};
use httpsig_hyper::{MessageSignatureReqSync, MessageSignatureResSync};

const BODY: &[u8] = br#"{"hello": "world"}"#;
const COMPONENTS: [&str; 4] = ["@method", "@authority", "@path", "content-type"];

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// A fresh key pair for `alg`: agentsig's, and the same key for the peer.
struct Pair {
    alg: Algorithm,
    ours: SigningKey,
    peer_secret: SecretKey,
    peer_public: PublicKey,
}

fn pairs() -> Vec<Pair> {
    [
        (Algorithm::EcdsaP256Sha256, AlgorithmName::EcdsaP256Sha256),
        (Algorithm::Ed25519, AlgorithmName::Ed25519),
    ]
    .into_iter()
    .map(|(alg, name)| {
        let ours = SigningKey::generate(alg).unwrap().with_kid("k1");
        let pem = ours.pkcs8_pem().unwrap();
        let spki = ours.verifying_key().to_spki_pem().unwrap();
        Pair {
            alg,
            peer_secret: SecretKey::from_pem(&name, &pem).unwrap(),
            peer_public: PublicKey::from_pem(&name, &spki).unwrap(),
            ours,
        }
    })
    .collect()
}

fn request() -> http::Request<Vec<u8>> {
    http::Request::builder()
        .method("POST")
        .uri("https://agent.example/tasks?id=7")
        .header("content-type", "application/json")
        .body(BODY.to_vec())
        .unwrap()
}

/// The same request with the body type httpsig-hyper takes.
fn to_peer(req: &http::Request<Vec<u8>>) -> http::Request<Full<Bytes>> {
    let mut b = http::Request::builder()
        .method(req.method())
        .uri(req.uri().clone());
    for (n, v) in req.headers() {
        b = b.header(n, v);
    }
    b.body(Full::new(Bytes::from(req.body().clone()))).unwrap()
}

fn spec(p: &Pair) -> SignatureSpec {
    let mut s = SignatureSpec::new("sig1");
    for c in COMPONENTS {
        s = s.component(ComponentId::parse(c).unwrap());
    }
    // The order agentsig's CLI and serve layer call the setters in.
    s.created(now() - 5).keyid("k1").alg(p.alg)
}

fn verifier(p: &Pair) -> Verifier {
    let keys = StaticKeys::new().with(p.ours.verifying_key().clone(), KeySource::Pinned);
    Verifier::builder(keys)
        .http(HttpPolicy::new().allow_uncovered_content())
        .build()
}

fn peer_params(p: &Pair) -> HttpSignatureParams {
    let ids: Vec<HttpMessageComponentId> = COMPONENTS
        .iter()
        .map(|c| HttpMessageComponentId::try_from(*c).unwrap())
        .collect();
    let mut params = HttpSignatureParams::try_new(&ids).unwrap();
    params.set_key_info(&p.peer_secret);
    params.set_keyid("k1");
    params
}

#[test]
fn agentsig_signs_httpsig_hyper_verifies() {
    for p in pairs() {
        let mut req = request();
        let signed = req.sign_signature(&spec(&p), &p.ours).unwrap();
        assert!(
            signed.signature_input.contains(";alg=")
                && signed.params_value.ends_with(";keyid=\"k1\""),
            "{}",
            signed.signature_input
        );
        let name = to_peer(&req)
            .verify_message_signature_sync(&p.peer_public, Some("k1"))
            .unwrap_or_else(|e| panic!("{}: httpsig-hyper refused: {e}", p.alg));
        assert_eq!(name, "sig1");
        // And agentsig verifies its own signature.
        let r = req.verify_signature(&verifier(&p)).unwrap();
        assert!(r.all_valid());
    }
}

#[test]
fn httpsig_hyper_signs_agentsig_verifies() {
    for p in pairs() {
        let mut peer = to_peer(&request());
        peer.set_message_signature_sync(&peer_params(&p), &p.peer_secret, Some("peer"))
            .unwrap();
        let input = peer.headers()["signature-input"]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(
            input.contains(";alg=") && input.contains(";keyid=\"k1\""),
            "{input}"
        );
        let mut ours = request();
        *ours.headers_mut() = peer.headers().clone();
        let r = ours
            .verify_signature(&verifier(&p))
            .unwrap_or_else(|e| panic!("{}: agentsig refused {input}: {e}", p.alg));
        assert!(r.all_valid(), "{}: {input}", p.alg);
        // A changed covered field is refused (the check is not vacuous).
        ours.headers_mut()
            .insert("content-type", "text/plain".parse().unwrap());
        assert!(ours
            .verify_signature(&verifier(&p))
            .map(|r| !r.all_valid())
            .unwrap_or(true));
    }
}

/// The peer's limit that the fixed order works around: the same valid
/// signature with `created;keyid;alg` (agentsig's order before) verifies in
/// agentsig and is refused by httpsig-hyper.
#[test]
fn peer_refuses_other_parameter_orders() {
    use agentsig::sfv::BareItem;
    for p in pairs() {
        let mut s = SignatureSpec::new("sig1");
        for c in COMPONENTS {
            s = s.component(ComponentId::parse(c).unwrap());
        }
        let s = s
            .param("created", BareItem::Integer(now() - 5))
            .param("keyid", BareItem::String("k1".into()))
            .param("alg", BareItem::String(p.alg.httpsig_name().into()));
        let mut req = request();
        req.sign_signature(&s, &p.ours).unwrap();
        let r = req.verify_signature(&verifier(&p)).unwrap();
        assert!(r.all_valid());
        assert!(to_peer(&req)
            .verify_message_signature_sync(&p.peer_public, Some("k1"))
            .is_err());
    }
}

/// A response signed by `agentsig sign` style static fields verifies with
/// httpsig-hyper too (created, expires, alg, keyid).
#[test]
fn agentsig_static_response_fields_verify_in_httpsig_hyper() {
    for p in pairs() {
        let fields = httpsig::static_response_fields(
            BODY,
            "application/json",
            &[(&p.ours, "k1".to_owned())],
            now() - 5,
            Some(now() + 3600),
        )
        .unwrap();
        let mut b = http::Response::builder().status(200);
        for (n, v) in &fields {
            b = b.header(n.as_str(), v.as_str());
        }
        let res = b.body(Full::new(Bytes::from_static(BODY))).unwrap();
        res.verify_message_signature_sync(&p.peer_public, Some("k1"), None::<&http::Request<()>>)
            .unwrap_or_else(|e| panic!("{}: httpsig-hyper refused: {e}", p.alg));
    }
}
