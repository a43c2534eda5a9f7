//! Hostile input never panics: deterministic mutation of valid inputs (bit
//! flips, truncation, splicing, byte insertion) fed to every parser that
//! reads untrusted bytes. Each call must return `Ok` or a typed error.
//!
//! This is a cheap, always-on complement to coverage-guided fuzzing.

use agentsig::keys::{load_signing_key, load_verifying_keys, LoadOptions};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::{Algorithm, SigningKey};

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

const INTERESTING: &[&[u8]] = &[
    b"\"",
    b"\\",
    b"\\u",
    b"\\ud800",
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b"1e999",
    b"-",
    b"0",
    b".",
    b"\xff",
    b"\xc3",
    b"\x00",
    b"null",
    b"\"a\":1,\"a\":2",
    b"=",
    b"-----BEGIN ",
    b"\x30\x82",
];

fn mutate(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
    let mut v = input.to_vec();
    for _ in 0..=rng.below(4) {
        match rng.below(6) {
            0 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] ^= 1 << rng.below(8);
            }
            1 if !v.is_empty() => {
                let n = rng.below(v.len());
                v.truncate(n);
            }
            2 => {
                let i = rng.below(v.len() + 1);
                let ins = INTERESTING[rng.below(INTERESTING.len())];
                v.splice(i..i, ins.iter().copied());
            }
            3 if !v.is_empty() => {
                let i = rng.below(v.len());
                let j = (i + rng.below(16)).min(v.len());
                v.drain(i..j);
            }
            4 if v.len() > 2 => {
                let i = rng.below(v.len());
                let j = rng.below(v.len());
                v[i] = v[j];
            }
            _ => {
                let i = rng.below(v.len() + 1);
                v.insert(i, rng.next() as u8);
            }
        }
    }
    v
}

const ROUNDS: usize = 3000;

#[test]
fn json_and_jcs_never_panic() {
    let seeds: [&[u8]; 3] = [
        br#"{"name":"a","n":[1,2.5,-0,1e21,1e-7],"s":"\u00e9\ud83d\ude00\n","o":{"z":null,"a":true}}"#,
        include_bytes!("../examples/agent.json"),
        br#"[[[[[[[[{"a":[{"b":"c"}]}]]]]]]]]"#,
    ];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut ok = 0usize;
    for round in 0..ROUNDS {
        let m = mutate(&mut rng, seeds[round % seeds.len()]);
        let a = agentsig::json::parse_strict(&m);
        let b = agentsig::jcs::canonicalize(&m);
        // Both must agree on whether the input is acceptable.
        assert_eq!(
            a.is_ok(),
            b.is_ok(),
            "parse and canonicalize disagree on {:?}",
            String::from_utf8_lossy(&m)
        );
        if let Ok(c) = b {
            ok += 1;
            // The canonical form is a fixed point, with one documented
            // exception: RFC 8785 writes whole doubles in [2^53, 1e21) as
            // integer literals (1e20 -> 100000000000000000000), which the
            // I-JSON integer policy then refuses on re-reading.
            match agentsig::jcs::canonicalize(&c) {
                Ok(again) => assert_eq!(again, c),
                Err(agentsig::json::JsonError::Number { .. }) => {}
                Err(e) => panic!("canonical output does not re-read: {e}"),
            }
        }
    }
    assert!(
        ok > 0,
        "some mutants must stay valid, or the test explores nothing"
    );
}

#[test]
fn jws_verify_never_panics() {
    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256).expect("keygen");
    let keys = StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned);
    let doc = br#"{"name":"a"}"#;
    let compact =
        agentsig::jws::sign_compact_detached(doc, &key, &Default::default()).expect("sign");
    let general = agentsig::jws::sign_general_detached(doc, &[&key], &Default::default())
        .expect("sign")
        .to_string();
    let v = Verifier::builder(keys).build();
    let mut rng = Rng(42);
    let mut verified = 0;
    for round in 0..ROUNDS {
        let seed = if round % 2 == 0 {
            compact.as_bytes()
        } else {
            general.as_bytes()
        };
        let m = mutate(&mut rng, seed);
        let text = String::from_utf8_lossy(&m);
        match v.verify_jws(&text, Some(doc)) {
            Ok(r) => {
                assert!(r.verified(), "Ok is only for a verified JWS");
                verified += 1;
            }
            Err(e) => {
                if let Some(r) = e.report() {
                    assert!(!r.verified(), "NotVerified carries a report that verified");
                }
            }
        }
    }
    // A mutant that still verifies must be one that left the signed parts
    // intact (e.g. whitespace around JSON); it can never be a forgery, but
    // count them so a regression that accepts everything is visible.
    assert!(verified < ROUNDS / 2, "{verified} mutants verified");
}

#[test]
fn key_loaders_never_panic() {
    let seeds: Vec<Vec<u8>> = vec![
        std::fs::read("keys/rfc9421/test-key-ecc-p256.pem").expect("key"),
        std::fs::read("keys/rfc9421/test-key-rsa-pss.pem").expect("key"),
        std::fs::read("keys/rfc9421/test-key-ed25519.pem").expect("key"),
        std::fs::read("keys/rfc9421/test-key-rsa.pem").expect("key"),
        std::fs::read("keys/rfc9421/test-key-ecc-p256.jwk.json").expect("key"),
        std::fs::read("keys/example-p256.jwks.json").expect("key"),
    ];
    let mut rng = Rng(7);
    for round in 0..ROUNDS / 3 {
        let m = mutate(&mut rng, &seeds[round % seeds.len()]);
        for alg in [
            None,
            Some(Algorithm::RsaPssSha512),
            Some(Algorithm::HmacSha256),
        ] {
            let opts = LoadOptions {
                alg,
                ..LoadOptions::default()
            };
            let _ = load_signing_key(&m, &opts);
            let _ = load_verifying_keys(&m, &opts);
        }
        // DER bodies too.
        if let Ok(text) = std::str::from_utf8(&seeds[round % 4]) {
            if let Ok((_, der)) = der_of(text) {
                let m = mutate(&mut rng, &der);
                let _ = load_signing_key(&m, &LoadOptions::default());
                let _ = load_verifying_keys(&m, &LoadOptions::default());
            }
        }
    }
}

fn der_of(pem: &str) -> Result<(String, Vec<u8>), ()> {
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(body)
        .map(|d| (String::new(), d))
        .map_err(|_| ())
}
