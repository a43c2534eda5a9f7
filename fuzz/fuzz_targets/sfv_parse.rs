//! Structured Field Values (RFC 9651): any bytes parsed as Dictionary, List
//! and Item never panic, and whatever parses round-trips: the serialization
//! (RFC 9651 section 4.1) re-parses, and re-serializes to the same text.
#![no_main]
use agentsig::sfv;
use libfuzzer_sys::fuzz_target;

fn dict(b: &[u8]) -> Option<String> {
    let d = sfv::parse_dictionary(b).ok()?;
    let mut s = String::new();
    sfv::write_dictionary(&mut s, &d);
    Some(s)
}

fn list(b: &[u8]) -> Option<String> {
    let l = sfv::parse_list(b).ok()?;
    let mut s = String::new();
    sfv::write_list(&mut s, &l);
    Some(s)
}

fn item(b: &[u8]) -> Option<String> {
    let i = sfv::parse_item(b).ok()?;
    let mut s = String::new();
    sfv::write_item(&mut s, &i);
    Some(s)
}

fuzz_target!(|data: &[u8]| {
    for f in [dict, list, item] {
        if let Some(s) = f(data) {
            match f(s.as_bytes()) {
                Some(again) => assert_eq!(again, s, "serialization is not a fixpoint"),
                None => panic!("serialized form {s:?} does not re-parse"),
            }
        }
    }
    // The raw dictionary (duplicates kept) normalizes to what parse_dictionary gives.
    if let (Ok(raw), Ok(norm)) = (sfv::parse_dictionary_raw(data), sfv::parse_dictionary(data)) {
        assert_eq!(raw.normalized(), norm);
        assert_eq!(raw.first_duplicate().is_some(), raw.0.len() != norm.0.len());
    }
});
