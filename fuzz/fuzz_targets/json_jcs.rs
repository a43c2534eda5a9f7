//! Strict I-JSON parsing and RFC 8785 canonicalization agree on what they
//! accept, never panic, and canonical output re-canonicalizes to itself
//! (except the documented 2^53..1e21 integer-policy case).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let parsed = agentsig::json::parse_strict(data);
    let canon = agentsig::jcs::canonicalize(data);
    assert_eq!(parsed.is_ok(), canon.is_ok());
    if let (Ok(v), Ok(c)) = (parsed, canon) {
        match agentsig::jcs::canonicalize(&c) {
            Ok(again) => assert_eq!(again, c),
            Err(agentsig::json::JsonError::Number { .. }) => {}
            Err(e) => panic!("canonical output does not re-read: {e}"),
        }
        if let Ok(from_value) = agentsig::jcs::canonicalize_value(&v) {
            assert_eq!(from_value, c);
        }
    }
});
