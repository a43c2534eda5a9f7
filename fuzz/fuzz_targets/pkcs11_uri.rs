//! Any text as an RFC 7512 `pkcs11:` URI (`Pkcs11Uri::parse`). Asserts:
//! never a panic; no URI longer than `MAX_URI` parses; the scheme is
//! case-insensitive (the same URI with `PKCS11:` parses to the same value);
//! a parsed URI describes itself.
#![no_main]
use agentsig::keys::pkcs11::{Pkcs11Uri, MAX_URI};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = Pkcs11Uri::parse(s);
    if let Ok(u) = &parsed {
        assert!(s.len() <= MAX_URI);
        let _ = u.describe();
    }
    let scheme = s.get(..7).is_some_and(|p| p.eq_ignore_ascii_case("pkcs11:"));
    if let Some(rest) = s.get(7..).filter(|_| scheme) {
        let upper = format!("PKCS11:{rest}");
        let again = Pkcs11Uri::parse(&upper);
        match (&parsed, &again) {
            (Ok(a), Ok(b)) => assert_eq!(a, b),
            (Err(_), Err(_)) => {}
            _ => panic!("the scheme's case changed the result"),
        }
    }
});
