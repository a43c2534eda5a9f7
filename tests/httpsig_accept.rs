//! Answering `Accept-Signature` (RFC 9421 section 5), the
//! signer's clock decides `created`/`expires`, and `created` and `keyid` are
//! always included.

use agentsig::httpsig::accept::{self, AcceptError};
use agentsig::keys::{load_signing_key, LoadOptions};
use agentsig::sfv::BareItem;
use agentsig::SigningKey;

fn ed_key() -> SigningKey {
    load_signing_key(
        &std::fs::read("keys/rfc9421/test-key-ed25519.pem").unwrap(),
        &LoadOptions::default(),
    )
    .unwrap()
}

fn params(field: &str) -> Result<Vec<(String, BareItem)>, AcceptError> {
    let reqs = accept::parse(&[field.as_bytes()])?;
    Ok(accept::spec_for(&reqs[0], &ed_key(), "my-key", 1_000_000, 300)?.params)
}

fn int(n: i64) -> BareItem {
    BareItem::Integer(n)
}

#[test]
fn requested_times_are_replaced_by_the_signers_clock() {
    let p = params("sig1=(\"@method\");created=5;expires=99999999999;nonce=\"n\"").unwrap();
    assert_eq!(
        p,
        vec![
            ("created".into(), int(1_000_000)),
            ("expires".into(), int(1_000_300)),
            ("nonce".into(), BareItem::String("n".into())),
            ("keyid".into(), BareItem::String("my-key".into())),
        ]
    );
    let p = params("sig1=(\"@method\");expires;created").unwrap();
    assert_eq!(
        p,
        // RFC 9421 section 2.3's order, whatever the requested one.
        vec![
            ("created".into(), int(1_000_000)),
            ("expires".into(), int(1_000_300)),
            ("keyid".into(), BareItem::String("my-key".into())),
        ]
    );
}

#[test]
fn created_and_keyid_are_always_included() {
    assert_eq!(
        params("sig1=(\"@method\")").unwrap(),
        vec![
            ("created".into(), int(1_000_000)),
            ("keyid".into(), BareItem::String("my-key".into())),
        ]
    );
    assert_eq!(
        params("sig1=(\"@method\");keyid=\"my-key\";tag=\"t\"").unwrap(),
        vec![
            ("created".into(), int(1_000_000)),
            ("keyid".into(), BareItem::String("my-key".into())),
            ("tag".into(), BareItem::String("t".into())),
        ]
    );
    assert!(matches!(
        params("sig1=(\"@method\");keyid=\"other\""),
        Err(AcceptError::KeyidUnavailable { .. })
    ));
}
