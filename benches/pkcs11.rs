//! Signatures through a PKCS#11 token: agentsig's `SigningKey::sign` on a
//! `pkcs11:` key against a bare `cryptoki` `C_Sign` loop on the same key,
//! session and message (the module's own speed, which no binding can
//! beat), on a SoftHSM2 token the bench makes itself
//! (tests/pkcs11_support). ECDSA's bare loop hashes the message too, as
//! agentsig does before `CKM_ECDSA`.
//!
//! Run: `cargo bench --bench pkcs11` (needs softhsm2 and opensc). Under
//! `cargo test --all-targets` it only checks that it starts.

#[path = "support/interleaved.rs"]
mod interleaved;
#[path = "../tests/pkcs11_support/mod.rs"]
mod pkcs11_support;

use agentsig::keys::{pkcs11, LoadOptions};
use agentsig::Algorithm;
use cryptoki::mechanism::eddsa::{EddsaParams, EddsaSignatureScheme};
use cryptoki::mechanism::Mechanism;
use cryptoki::object::{Attribute, ObjectClass};
use sha2::Digest as _;

const MSG: &[u8] = b"\"@status\": 200\n\"content-type\": application/json\n\"content-digest\": sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:\n\"@signature-params\": (\"@status\" \"content-type\" \"content-digest\");created=1700000000;keyid=\"k\"";

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let Some((t, _token)) = pkcs11_support::token() else {
        return;
    };
    for (label, id, alg) in [
        ("p256", 0x01u8, Algorithm::EcdsaP256Sha256),
        ("ed25519", 0x03, Algorithm::Ed25519),
        ("rsa", 0x04, Algorithm::RsaV15Sha256),
    ] {
        let hint = (alg == Algorithm::RsaV15Sha256).then_some(alg);
        let key = pkcs11::load(
            &t.uri(label),
            &LoadOptions {
                alg: hint,
                ..Default::default()
            },
        )
        .expect("load");
        // The bare side: a session of the same (already initialized and
        // logged-in) module, the same private key.
        let c = cryptoki::context::Pkcs11::new(&t.module).expect("module");
        let slot = c
            .get_slots_with_token()
            .unwrap()
            .into_iter()
            .find(|s| c.get_token_info(*s).unwrap().label() == pkcs11_support::LABEL)
            .unwrap();
        let s = c.open_ro_session(slot).unwrap();
        let h = s
            .find_objects(&[
                Attribute::Class(ObjectClass::PRIVATE_KEY),
                Attribute::Id(vec![id]),
            ])
            .unwrap()[0];
        let bare = || match alg {
            Algorithm::EcdsaP256Sha256 => s
                .sign(&Mechanism::Ecdsa, h, &sha2::Sha256::digest(MSG))
                .unwrap(),
            Algorithm::Ed25519 => s
                .sign(
                    &Mechanism::Eddsa(EddsaParams::new(EddsaSignatureScheme::Pure)),
                    h,
                    MSG,
                )
                .unwrap(),
            _ => s.sign(&Mechanism::Sha256RsaPkcs, h, MSG).unwrap(),
        };
        assert!(key.verifying_key().verify(MSG, &bare()).is_ok());
        let ours = || {
            std::hint::black_box(key.sign(std::hint::black_box(MSG)).unwrap());
        };
        let theirs = || {
            std::hint::black_box(bare());
        };
        let m = interleaved::interleaved_medians(&[&ours, &theirs], 21);
        println!(
            "{} -> {:.0} signatures/s through agentsig, {:.0}/s bare C_Sign",
            interleaved::line(
                &format!("pkcs11 sign {}", alg.jose_name()),
                m[0],
                m[1],
                "bare cryptoki C_Sign"
            ),
            1.0 / m[0].as_secs_f64(),
            1.0 / m[1].as_secs_f64()
        );
    }
}
