//! Issue 8: keys is a folder of modules with one-way dependencies, and the
//! public paths other code uses are unchanged.

// The public paths, as before the split.
#[allow(unused_imports)]
use agentsig::jwk::{jwks_document, parse_keys, select, Jwk, ToJwk};
#[allow(unused_imports)]
use agentsig::keys::{
    load_signing_key, load_verifying_key, load_verifying_keys, verifying_from_spki, KeyError,
    LoadOptions, SigningKey, VerifyError, VerifyingKey,
};

fn src(path: &str) -> String {
    std::fs::read_to_string(format!("{}/src/{path}", env!("CARGO_MANIFEST_DIR"))).expect(path)
}

/// `jwk` depends on `keys` only for the leaf error type; the key types
/// depend on `jwk`, never the reverse; DID forms are not in `keys`.
#[test]
fn keys_and_jwk_do_not_form_a_cycle() {
    for m in ["types", "load", "generate", "encode", "error", "from_jwk"] {
        assert!(
            std::path::Path::new(&format!("{}/src/keys/{m}.rs", env!("CARGO_MANIFEST_DIR")))
                .is_file(),
            "src/keys/{m}.rs"
        );
    }
    let jwk = src("jwk.rs");
    let uses: Vec<&str> = jwk
        .lines()
        .filter(|l| l.trim_start().starts_with("use ") && l.contains("keys"))
        .collect();
    assert_eq!(
        uses,
        vec!["use crate::keys::error::KeyError;"],
        "jwk.rs imports {uses:?}"
    );
    assert!(!jwk.contains("VerifyingKey::") && !jwk.contains("SigningKey::"));
    let error = src("keys/error.rs");
    assert!(
        error
            .lines()
            .filter(|l| l.starts_with("use "))
            .all(|l| l == "use crate::alg::Algorithm;"),
        "keys/error.rs must stay a leaf"
    );
    for m in [
        "types", "load", "generate", "encode", "error", "from_jwk", "mod",
    ] {
        assert!(
            !src(&format!("keys/{m}.rs")).contains("did:key:z"),
            "DID encoding in keys/{m}.rs"
        );
    }
}

#[test]
fn jwks_document_still_takes_verifying_keys() {
    let k = SigningKey::from_ed25519_seed(&[1u8; 32]).expect("seed");
    let doc = jwks_document(&[k.verifying_key()]);
    let keys = parse_keys(doc.to_string().as_bytes()).expect("parse");
    assert_eq!(keys.len(), 1);
    assert_eq!(
        keys[0].to_verifying_key(None).expect("key").thumbprint(),
        k.verifying_key().thumbprint()
    );
}
