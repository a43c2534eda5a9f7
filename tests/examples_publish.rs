//! examples/publish.rs: the JWK Set it publishes carries the `kid` its JWS
//! names, and verifies the JWS.

#[path = "../examples/publish.rs"]
mod publish;

#[path = "b64_support/mod.rs"]
mod b64;

#[test]
fn the_published_jwks_carries_the_kid_the_jws_names() {
    let (jws, jwks) = publish::publish().unwrap();
    let header: serde_json::Value =
        serde_json::from_slice(&b64::decode(jws.split('.').next().unwrap()).unwrap()).unwrap();
    let kid = header["kid"].as_str().expect("the JWS names a kid");
    assert_eq!(jwks["keys"][0]["kid"], kid, "{jwks}");
    // And a verifier holding only that JWK Set verifies it.
    let keys = agentsig::keys::load_verifying_keys(
        jwks.to_string().as_bytes(),
        &agentsig::LoadOptions::default(),
    )
    .unwrap();
    let mut trusted = agentsig::trust::StaticKeys::new();
    for k in keys {
        trusted = trusted.with(k, agentsig::trust::KeySource::Pinned);
    }
    let doc = std::fs::read("examples/agent.json").unwrap();
    let v = agentsig::verifier::Verifier::builder(trusted).build();
    assert!(v.verify_descriptor(&doc, &jws).is_ok());
}
