//! A key is published under one kid and signs with it, on every surface:
//! the command line and the bindings' facade read the kid `agentsig keygen
//! --kid` wrote beside the PEM (one rule, `facade::keys`), and a signature
//! that names its key by RFC 7638 thumbprint, when the trusted key is
//! published under another kid, is refused with that kid named.

use agentsig::facade::keys::{
    published_kid, recorded_kid, signing_key_from_file, signing_key_from_pem,
};
use agentsig::jws::{self, SignOptions};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::{Algorithm, SigningKey};
use std::process::Command;

#[path = "tmp_support/mod.rs"]
mod tmp;

fn keygen(dir: &std::path::Path, prefix: &str, kid: &str) {
    let o = Command::new(env!("CARGO_BIN_EXE_agentsig"))
        .args(["keygen", "--out", prefix, "--kid", kid])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn the_facade_reads_the_kid_keygen_wrote_beside_the_pem() {
    let dir = tmp::TempDir::new("keys-kid-facade");
    keygen(&dir, "pub", "publisher-1");
    let key = signing_key_from_file(&dir.join("pub.pem"), None).unwrap();
    assert_eq!(key.kid(), Some("publisher-1"));
    assert_eq!(
        recorded_kid(&dir.join("pub.pub.pem"), key.verifying_key()).as_deref(),
        Some("publisher-1")
    );
    // An explicit kid wins; a PEM under another name has no record.
    let named = signing_key_from_file(&dir.join("pub.pem"), Some("other".into())).unwrap();
    assert_eq!(named.kid(), Some("other"));
    std::fs::copy(dir.join("pub.pem"), dir.join("copy.pem")).unwrap();
    let bare = signing_key_from_file(&dir.join("copy.pem"), None).unwrap();
    assert_eq!(bare.kid(), None);
    assert_eq!(bare.kid_or_thumbprint(), key.verifying_key().thumbprint());
    // From PEM text with the published JWK Set beside it.
    let pem = std::fs::read_to_string(dir.join("pub.pem")).unwrap();
    let jwks = std::fs::read(dir.join("pub.jwks.json")).unwrap();
    let k = signing_key_from_pem(&pem, None, Some(&jwks)).unwrap();
    assert_eq!(k.kid(), Some("publisher-1"));
    // A JWK Set of another key names nothing.
    let other = SigningKey::generate(Algorithm::EcdsaP256Sha256).unwrap();
    assert_eq!(published_kid(&jwks, other.verifying_key()), None);
    // Unreadable file: input.unreadable, not a key error.
    let e = signing_key_from_file(&dir.join("missing.pem"), None).unwrap_err();
    assert_eq!(e.code, "input.unreadable", "{e:?}");
}

#[test]
fn a_thumbprint_kid_names_the_kid_its_key_is_published_under() {
    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256).unwrap();
    let tp = key.verifying_key().thumbprint();
    let published = key.verifying_key().clone().with_kid("publisher-1");
    let keys = StaticKeys::new().with(published, KeySource::Pinned);
    let verifier = Verifier::builder(keys).build();
    let payload = br#"{"name":"a"}"#;
    // Signed by the same key, named by its thumbprint (no kid loaded).
    let jws = jws::sign_compact_detached(payload, &key, &SignOptions::default()).unwrap();
    let err = verifier.verify_jws(&jws, Some(payload)).unwrap_err();
    let jws::JwsVerifyError::NotVerified(report) = err else {
        panic!("not a report")
    };
    assert_eq!(report.signatures[0].kid.as_deref(), Some(tp.as_str()));
    let reason = report.signatures[0].reason.as_ref().unwrap().to_string();
    assert!(
        reason.contains(&format!("no trusted key has kid \"{tp}\", but that is the RFC 7638 thumbprint of the trusted key published with kid \"publisher-1\"")),
        "{reason}"
    );
    // A kid that is no thumbprint of a trusted key: the plain message.
    let other = SigningKey::generate(Algorithm::EcdsaP256Sha256).unwrap();
    let jws = jws::sign_compact_detached(payload, &other, &SignOptions::default()).unwrap();
    let err = verifier.verify_jws(&jws, Some(payload)).unwrap_err();
    let jws::JwsVerifyError::NotVerified(report) = err else {
        panic!("not a report")
    };
    let reason = report.signatures[0].reason.as_ref().unwrap().to_string();
    assert!(!reason.contains("published with kid"), "{reason}");
}
