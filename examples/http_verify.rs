//! Sign an `http::Response` serving a descriptor with RFC 9421 and an RFC
//! 9530 Content-Digest, then verify it as a resolver would.
//!
//! Run: `cargo run --example http_verify`

use agentsig::httpsig::SignHttp;
use agentsig::httpsig::{descriptor_response_components, HttpPolicy, SignatureSpec};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::verifier::VerifyHttp;
use agentsig::{digest, Algorithm, SigningKey};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256)?;
    let body = std::fs::read("examples/agent.json")?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_secs() as i64;

    // The publisher signs @status, content-type and content-digest.
    let mut res = http::Response::builder()
        .status(200)
        .header("content-type", "application/agent+json")
        .header("content-digest", digest::content_digest(&body))
        .body(body.clone())?;
    let mut spec = SignatureSpec::new("sig1")
        .created(now)
        .keyid(&key.kid_or_thumbprint())
        .alg(key.algorithm());
    for c in descriptor_response_components() {
        spec = spec.component(c);
    }
    res.sign_signature(&spec, &key)?;
    println!(
        "Signature-Input: {}",
        res.headers()["signature-input"].to_str()?
    );

    // The resolver requires those components and checks the digest.
    let keys = StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned);
    let verifier = Verifier::builder(keys)
        .http(HttpPolicy::descriptor_response())
        .build();
    let report = res.verify_signature(&verifier)?;
    println!("verified label(s): {:?}", report.valid_labels());

    // A changed body no longer matches Content-Digest.
    *res.body_mut() = body.iter().map(|b| b.to_ascii_uppercase()).collect();
    let err = res
        .verify_signature(&verifier)
        .expect_err("a changed body must not verify");
    println!("changed body refused: {err}");
    Ok(())
}
