//! RFC 9530 conformance over tests/vectors/rfc9530.json (errata corrected there).

use agentsig::digest::{self, DigestAlgorithm, DigestError};
use serde_json::Value;

fn vectors() -> Value {
    serde_json::from_slice(&std::fs::read("tests/vectors/rfc9530.json").unwrap()).unwrap()
}

fn body_of(e: &Value) -> Vec<u8> {
    match (e["body_utf8"].as_str(), e["body_hex"].as_str()) {
        (_, Some(h)) => hex::decode(h).unwrap(),
        (Some(s), None) => s.as_bytes().to_vec(),
        (None, None) => panic!("no body"),
    }
}

#[test]
fn sample_digest_values_active_verify_deprecated_never_count() {
    let v = vectors();
    let s = &v["sample_digest_values"];
    let input = s["input_utf8"].as_str().unwrap().as_bytes();
    for val in s["values"].as_array().unwrap() {
        let alg = val["algorithm"].as_str().unwrap();
        let field = format!("{alg}={}", val["value"].as_str().unwrap());
        let r = digest::verify_content_digest(&[field.as_bytes()], input);
        match DigestAlgorithm::from_key(alg) {
            Some(a) => {
                assert_eq!(r.unwrap().verified, vec![a]);
                assert_eq!(digest::field_value(input, &[a]), field);
            }
            None => {
                assert!(digest::DEPRECATED.contains(&alg), "{alg}");
                assert!(
                    matches!(r, Err(DigestError::NoActiveAlgorithm { .. })),
                    "{alg} must never count as integrity"
                );
            }
        }
    }
    // All the deprecated values together still are not integrity.
    let all_deprecated: Vec<String> = s["values"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| DigestAlgorithm::from_key(v["algorithm"].as_str().unwrap()).is_none())
        .map(|v| {
            format!(
                "{}={}",
                v["algorithm"].as_str().unwrap(),
                v["value"].as_str().unwrap()
            )
        })
        .collect();
    let joined = all_deprecated.join(", ");
    assert!(matches!(
        digest::verify_content_digest(&[joined.as_bytes()], input),
        Err(DigestError::NoActiveAlgorithm { found, .. }) if found.len() == 6
    ));
}

#[test]
fn extra_vectors_both_algorithms() {
    let v = vectors();
    for e in v["extra_vectors"].as_array().unwrap() {
        let body = e["body_utf8"].as_str().unwrap().as_bytes();
        let expected = format!(
            "sha-256={}, sha-512={}",
            e["sha-256"].as_str().unwrap(),
            e["sha-512"].as_str().unwrap()
        );
        assert_eq!(
            digest::field_value(body, &[DigestAlgorithm::Sha256, DigestAlgorithm::Sha512]),
            expected
        );
        let ok = digest::verify_content_digest(&[expected.as_bytes()], body).unwrap();
        assert_eq!(ok.verified.len(), 2);
        // A two-member dictionary where one member is wrong fails as a whole.
        let wrong = format!(
            "sha-256={}, sha-512={}",
            e["sha-256"].as_str().unwrap(),
            v["extra_vectors"][0]["sha-512"].as_str().unwrap()
        );
        if e["body_utf8"] != v["extra_vectors"][0]["body_utf8"] {
            assert!(matches!(
                digest::verify_content_digest(&[wrong.as_bytes()], body),
                Err(DigestError::Mismatch { .. })
            ));
        }
    }
}

#[test]
fn section2_examples_parse() {
    let v = vectors();
    let body = b"{\"hello\": \"world\"}\n";
    let one = v["section2_examples"][0]["field_line"].as_str().unwrap();
    let value = one.split_once(": ").unwrap().1;
    assert!(digest::verify_content_digest(&[value.as_bytes()], body).is_ok());
    // The second example mixes a digest of the br-encoded bytes (sha-256) with
    // one of the plain bytes (sha-512): against either byte string one member
    // fails, so the field as a whole is refused (no "any member wins").
    let two = v["section2_examples"][1]["field_line"].as_str().unwrap();
    let value = two.split_once(": ").unwrap().1;
    assert!(matches!(
        digest::verify_content_digest(&[value.as_bytes()], body),
        Err(DigestError::Mismatch { .. })
    ));
}

#[test]
fn appendix_examples_recomputed_and_errata_refused() {
    let v = vectors();
    let examples = v["examples"].as_array().unwrap();
    assert!(examples.len() >= 20);
    for e in examples {
        let body = body_of(e);
        let alg = DigestAlgorithm::from_key(e["algorithm"].as_str().unwrap()).unwrap();
        let computed = e["computed_value"].as_str().unwrap();
        let field = format!("{}={computed}", alg.key());
        assert_eq!(
            digest::field_value(&body, &[alg]),
            field,
            "{}",
            e["section"]
        );
        let is_repr = e["field"].as_str().unwrap().starts_with("Repr");
        let r = if is_repr {
            digest::verify_repr_digest(&[field.as_bytes()], &body)
        } else {
            digest::verify_content_digest(&[field.as_bytes()], &body)
        };
        assert!(r.is_ok(), "{}", e["section"]);
        let printed = e["printed_value"].as_str().unwrap();
        if !e["printed_value_is_canonical_base64"].as_bool().unwrap() {
            // The RFC text's "RK/0...DbDg==" has a spurious "=": not a valid Byte Sequence.
            let bad = format!("{}={printed}", alg.key());
            assert!(matches!(
                digest::verify_repr_digest(&[bad.as_bytes()], &body),
                Err(DigestError::Malformed { .. })
            ));
        }
    }
}

#[test]
fn want_digest_preferences() {
    // RFC 9530 section 4 examples.
    let p = digest::parse_want("Want-Repr-Digest", &[b"sha-256=1"]).unwrap();
    assert_eq!(digest::choose(&p), vec![DigestAlgorithm::Sha256]);
    let p = digest::parse_want(
        "Want-Content-Digest",
        &[b"sha-512=3, sha-256=10, unixsum=0"],
    )
    .unwrap();
    assert_eq!(
        digest::choose(&p),
        vec![DigestAlgorithm::Sha256, DigestAlgorithm::Sha512]
    );
    // Only deprecated algorithms requested: nothing usable is chosen.
    let p = digest::parse_want("Want-Repr-Digest", &[b"md5=10, crc32c=5"]).unwrap();
    assert!(digest::choose(&p).is_empty());
    // sha-256=0 means "not acceptable".
    let p = digest::parse_want("Want-Repr-Digest", &[b"sha-256=0, sha-512=1"]).unwrap();
    assert_eq!(digest::choose(&p), vec![DigestAlgorithm::Sha512]);
    assert!(digest::parse_want("Want-Repr-Digest", &[b"sha-256=-1"]).is_err());
    assert!(digest::parse_want("Want-Repr-Digest", &[b"sha-256=\"10\""]).is_err());
}

#[test]
fn malformed_digest_fields() {
    let body = b"x";
    let good = digest::content_digest(body);
    for bad in [
        "sha-256",               // boolean, not bytes
        "sha-256=:AAAA:",        // wrong length
        "sha-256=:not base64!:", // invalid
        "sha-256=(:AAAA:)",      // inner list
        "SHA-256=:AAAA:",        // not an sf-key
    ] {
        assert!(
            digest::verify_content_digest(&[bad.as_bytes()], body).is_err(),
            "{bad}"
        );
    }
    let dup = format!("{good}, {good}");
    assert!(matches!(
        digest::verify_content_digest(&[dup.as_bytes()], body),
        Err(DigestError::DuplicateKey { .. })
    ));
    assert!(matches!(
        digest::verify_content_digest(&[], body),
        Err(DigestError::Missing { .. })
    ));
    // Several field lines combine into one dictionary.
    let l2 = digest::field_value(body, &[DigestAlgorithm::Sha512]);
    let r = digest::verify_content_digest(&[good.as_bytes(), l2.as_bytes()], body).unwrap();
    assert_eq!(r.verified.len(), 2);
}
