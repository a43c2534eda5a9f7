//! Any text as a bundle of delegation tokens (split on newlines): the audit
//! never panics and always returns a report (in `Ok` or in the error).
#![no_main]
use agentsig::trust::StaticKeys;
use agentsig::verifier::Verifier;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let tokens: Vec<&str> = text.lines().take(12).collect();
    if tokens.is_empty() {
        return;
    }
    let v = Verifier::builder(StaticKeys::new()).build();
    let _ = agentsig::jwt::decode(tokens[0], 16 * 1024);
    let _ = v.audit_delegation(&tokens);
});
