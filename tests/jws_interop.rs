//! Interoperability of detached JWS over JCS with independent JOSE
//! implementations, for every asymmetric algorithm (ES256, ES384, EdDSA,
//! PS512, RS256), both ways:
//!
//! * agentsig -> other: the `agentsig sign` CLI binary signs
//!   `tests/vectors/jws/sample_agent.json`; the other side verifies the
//!   compact detached JWS over the JCS bytes. A tampered payload must fail
//!   there too (so the harness cannot pass vacuously).
//! * other -> agentsig: the other side canonicalizes the same document with
//!   its own RFC 8785 code and signs; agentsig's `descriptor::verify` (and the
//!   `agentsig verify` CLI) must accept it, and the canonical bytes must match.
//!
//! Implementations: PyPI `joserfc` + `rfc8785` (tests/interop/jose_joserfc.py)
//! and npm `jose` (tests/interop/jose_panva.mjs, resolved from tests/interop/node_modules).
//! A missing interpreter or module prints a skip notice, unless
//! `AGENTSIG_REQUIRE_INTEROP=1`, which turns it into a failure (CI sets it).

use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::{jcs, jwk, Algorithm, SigningKey};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[path = "b64_support/mod.rs"]
mod b64;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn require() -> bool {
    std::env::var("AGENTSIG_REQUIRE_INTEROP").is_ok_and(|v| v == "1")
}

/// One test key per algorithm, as a private JWK (the other side needs it to sign).
fn private_jwks() -> Vec<(Algorithm, Value)> {
    let read = |n: &str| -> Value {
        serde_json::from_slice(&std::fs::read(root().join("keys/rfc9421").join(n)).unwrap())
            .unwrap()
    };
    // P-384: a fixed scalar, public point computed with the p384 crate.
    let d = [0x11u8; 48];
    let sk = p384::SecretKey::from_slice(&d).unwrap();
    use p384::elliptic_curve::sec1::ToEncodedPoint;
    let pt = sk.public_key().to_encoded_point(false);
    let p384 = json!({
        "kty": "EC", "crv": "P-384", "kid": "interop-p384",
        "x": b64::encode(pt.x().unwrap()), "y": b64::encode(pt.y().unwrap()),
        "d": b64::encode(&d),
    });
    let mut rsa = read("test-key-rsa.jwk.json");
    rsa["alg"] = json!("RS256");
    let mut pss = read("test-key-rsa-pss.jwk.json");
    pss["alg"] = json!("PS512");
    vec![
        (
            Algorithm::EcdsaP256Sha256,
            read("test-key-ecc-p256.jwk.json"),
        ),
        (Algorithm::EcdsaP384Sha384, p384),
        (Algorithm::Ed25519, read("test-key-ed25519.jwk.json")),
        (Algorithm::RsaPssSha512, pss),
        (Algorithm::RsaV15Sha256, rsa),
    ]
}

fn signing_key(j: &Value) -> SigningKey {
    jwk::parse_keys(j.to_string().as_bytes()).unwrap()[0]
        .to_signing_key(None)
        .unwrap()
}

enum Outcome {
    Ran(Value),
    Missing(String),
}

/// Run a helper with the request on stdin; exit 3 means a module is missing.
fn run_helper(program: &str, script: &Path, request: &Value) -> Outcome {
    let child = Command::new(program)
        .arg(script)
        .current_dir(script.parent().unwrap())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return Outcome::Missing(format!("{program}: {e}")),
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(request.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    if out.status.code() == Some(3) {
        let v: Value = serde_json::from_str(&stdout).unwrap_or(Value::Null);
        return Outcome::Missing(format!("module {}", v["missing"]));
    }
    assert!(
        out.status.success(),
        "{program} {}: {}\n{}",
        script.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    Outcome::Ran(serde_json::from_str(&stdout).unwrap())
}

fn skip_or_fail(which: &str, why: &str, install: &str) {
    if require() {
        panic!("interop with {which} is required (AGENTSIG_REQUIRE_INTEROP=1) but {why} is missing; install with: {install}");
    }
    // Straight to the process's stderr: libtest captures println!/eprintln!,
    // and a skip must be visible in a plain `cargo test` run.
    let _ = writeln!(
        std::io::stderr().lock(),
        "SKIPPED interop with {which}: {why} is missing (install: {install}; set AGENTSIG_REQUIRE_INTEROP=1 to make this a failure)"
    );
}

fn agentsig_bin() -> &'static str {
    env!("CARGO_BIN_EXE_agentsig")
}

struct Fixture {
    _dir: TempDir,
    doc_path: PathBuf,
    doc: Vec<u8>,
    canonical: Vec<u8>,
    /// (alg, private JWK, path of the private JWK file)
    keys: Vec<(Algorithm, Value, PathBuf)>,
}

/// A scratch directory removed on drop.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn fixture(tag: &str) -> Fixture {
    let dir = std::env::temp_dir().join(format!(
        "agentsig-interop-{tag}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let doc = std::fs::read(root().join("tests/vectors/jws/sample_agent.json")).unwrap();
    let doc_path = dir.join("agent.json");
    std::fs::write(&doc_path, &doc).unwrap();
    let canonical = jcs::canonicalize(&doc).unwrap();
    let keys = private_jwks()
        .into_iter()
        .map(|(alg, j)| {
            let p = dir.join(format!("{}.jwk.json", alg.httpsig_name()));
            std::fs::write(&p, j.to_string()).unwrap();
            (alg, j, p)
        })
        .collect();
    Fixture {
        _dir: TempDir(dir),
        doc_path,
        doc,
        canonical,
        keys,
    }
}

/// `agentsig sign FILE --key JWK --alg ALG --out -`: the compact detached JWS.
fn cli_sign(f: &Fixture, alg: Algorithm, key: &Path) -> String {
    let out = Command::new(agentsig_bin())
        .args(["sign"])
        .arg(&f.doc_path)
        .arg("--key")
        .arg(key)
        .args(["--alg", alg.httpsig_name(), "--out", "-"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "agentsig sign: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let jws = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    assert!(jws.contains(".."), "compact detached: {jws}");
    jws
}

/// `agentsig verify FILE --jws JWS --key PUB --alg ALG`: exit status 0?
fn cli_verify(f: &Fixture, jws: &str, alg: Algorithm, key: &Path) -> bool {
    let jws_path = f
        .doc_path
        .with_extension(format!("{}.jws", alg.httpsig_name()));
    std::fs::write(&jws_path, jws).unwrap();
    let out = Command::new(agentsig_bin())
        .arg("verify")
        .arg(&f.doc_path)
        .arg("--jws")
        .arg(&jws_path)
        .arg("--key")
        .arg(key)
        .args(["--alg", alg.httpsig_name()])
        .output()
        .unwrap();
    out.status.success()
}

fn interop(which: &str, program: &str, script: &str, install: &str) {
    let f = fixture(which);
    let script = root().join("tests/interop").join(script);
    // agentsig -> other.
    let mut verify_reqs = Vec::new();
    for (alg, j, path) in &f.keys {
        let jws = cli_sign(&f, *alg, path);
        let public = signing_key(j).verifying_key().to_jwk().to_value();
        for payload in [f.canonical.clone(), b"{\"tampered\":true}".to_vec()] {
            verify_reqs.push(json!({
                "alg": alg.jose_name(),
                "jwk": public,
                "jws": jws,
                "payload_b64u": b64::encode(&payload),
            }));
        }
    }
    // other -> agentsig.
    let sign_reqs: Vec<Value> = f
        .keys
        .iter()
        .map(|(alg, j, _)| {
            json!({
                "alg": alg.jose_name(),
                "jwk": j,
                // The kid the trusted key carries (StaticKeys selects by kid).
                "kid": j["kid"],
                "document": String::from_utf8(f.doc.clone()).unwrap(),
            })
        })
        .collect();
    let resp = match run_helper(
        program,
        &script,
        &json!({"verify": verify_reqs, "sign": sign_reqs}),
    ) {
        Outcome::Ran(v) => v,
        Outcome::Missing(why) => return skip_or_fail(which, &why, install),
    };
    let verified = resp["verify"].as_array().unwrap();
    assert_eq!(verified.len(), 2 * f.keys.len());
    for (i, (alg, _, _)) in f.keys.iter().enumerate() {
        let good = &verified[2 * i];
        let bad = &verified[2 * i + 1];
        assert_eq!(
            good["ok"], true,
            "{which} rejected agentsig's {alg}: {}",
            good["error"]
        );
        assert_eq!(
            bad["ok"], false,
            "{which} accepted a tampered payload for {alg}"
        );
        println!(
            "interop {which}: agentsig CLI -> {which} {} verified, tampered refused",
            alg.jose_name()
        );
    }
    let signed = resp["sign"].as_array().unwrap();
    assert_eq!(signed.len(), f.keys.len());
    for ((alg, j, path), s) in f.keys.iter().zip(signed) {
        // Same canonical bytes from an independent RFC 8785 implementation.
        assert_eq!(
            b64::decode(s["jcs_b64u"].as_str().unwrap()).unwrap(),
            f.canonical,
            "{which} JCS differs"
        );
        let jws = s["jws"].as_str().unwrap();
        let vk = signing_key(j).verifying_key().clone();
        let v = Verifier::builder(StaticKeys::new().with(vk, KeySource::Pinned)).build();
        let rep = v
            .verify_descriptor(&f.doc, jws)
            .unwrap_or_else(|e| panic!("agentsig rejected {which}'s {alg}: {e}"));
        assert!(
            rep.verified(),
            "agentsig rejected {which}'s {alg}: {:?}",
            rep.jws.signatures
        );
        let sig = &rep.jws.signatures[0];
        assert_eq!(sig.alg.as_deref(), Some(alg.jose_name()));
        // A changed document must fail.
        let changed = String::from_utf8(f.doc.clone())
            .unwrap()
            .replace("Recipe Agent", "Recipe Agent!");
        let e = v.verify_descriptor(changed.as_bytes(), jws).unwrap_err();
        let rep = e
            .report()
            .expect("the JWS was read: a report, not a parse error");
        assert!(!rep.verified());
        // And through the CLI, with the key file (its public half is used).
        assert!(
            cli_verify(&f, jws, *alg, path),
            "agentsig verify CLI rejected {which}'s {alg}"
        );
        println!(
            "interop {which}: {which} -> agentsig {} verified (library and CLI)",
            alg.jose_name()
        );
    }
}

#[test]
fn interop_joserfc_python() {
    interop(
        "joserfc",
        "python3",
        "jose_joserfc.py",
        "pip install joserfc rfc8785",
    );
}

#[test]
fn interop_jose_node() {
    interop(
        "jose",
        "node",
        "jose_panva.mjs",
        "npm install --no-save --prefix tests/interop jose",
    );
}
