//! Any text as a JWS (compact or JSON) against a fixed trusted key: never a
//! panic, and never "verified" unless the signature is the real one.
#![no_main]
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::{Algorithm, AllowList, VerifyingKey};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // RFC 7515 A.3 public key: no fuzz input can produce a signature for it.
    let pt = [
        4u8, 127, 205, 206, 39, 112, 246, 196, 93, 65, 131, 203, 238, 111, 219, 75, 123, 88, 7, 51,
        53, 123, 233, 239, 19, 186, 207, 110, 60, 123, 209, 84, 69, 199, 241, 68, 205, 27, 189,
        155, 126, 135, 44, 223, 237, 185, 238, 185, 244, 179, 105, 93, 110, 169, 11, 36, 173, 138,
        70, 35, 40, 133, 136, 229, 173,
    ];
    let Ok(key) = VerifyingKey::from_sec1_point(Algorithm::EcdsaP256Sha256, &pt) else {
        return;
    };
    let keys = StaticKeys::new().with(key, KeySource::Pinned);
    let v = Verifier::builder(keys).algorithms(AllowList::all()).build();
    let _ = v.verify_jws(text, Some(b"{}"));
    let _ = v.verify_jws(text, None);
});
