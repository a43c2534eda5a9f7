//! Any bytes as a raw HTTP message, parsed and verified under the default
//! policy with a fixed key: never a panic.
#![no_main]
use agentsig::httpsig::Message;
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::VerifyingKey;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(key) = VerifyingKey::from_ed25519_bytes(&[
        0x11, 0x5a, 0x98, 0x01, 0x82, 0xb1, 0x0a, 0xb7, 0xd5, 0x4b, 0xfe, 0xd3, 0xc9, 0x64, 0x07,
        0x3a, 0x0e, 0xe1, 0x72, 0xf3, 0xda, 0xa6, 0x23, 0x25, 0xaf, 0x02, 0x1a, 0x68, 0xf7, 0x07,
        0x51, 0x1a,
    ]) else {
        return;
    };
    let v = Verifier::builder(StaticKeys::new().with(key, KeySource::Pinned)).build();
    if let Ok(msg) = Message::parse(data, "https") {
        let _ = v.verify_http(&msg, None);
        let _ = v.verify_http(&msg, Some(&msg));
    }
});
