//! CLI key handling end to end: keys written by keygen work as written, and
//! key material given by mistake where a path belongs is never echoed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[path = "b64_support/mod.rs"]
mod b64;

fn run(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agentsig"))
        .args(args)
        .current_dir(dir)
        .env_remove("AGENTSIG_PASSPHRASE")
        .output()
        .expect("run agentsig")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exit code")
}

struct Tmp(PathBuf);
impl Tmp {
    fn new(name: &str) -> Tmp {
        let p =
            std::env::temp_dir().join(format!("agentsig-keys-cli-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("mkdir");
        Tmp(p)
    }
}
impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const DOC: &str = r#"{"name":"planner","version":"1.0.0"}"#;

fn keygen(t: &Tmp, alg: &str) {
    std::fs::write(t.0.join("agent.json"), DOC).expect("write");
    let o = run(&["keygen", "--alg", alg, "--out", "k"], &t.0);
    assert_eq!(
        code(&o),
        0,
        "keygen: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A private key pasted as the value of --key (PEM text, a
/// JWK, a base64 blob) is never repeated in the error.
#[test]
fn key_material_given_as_key_value_is_never_echoed() {
    let t = Tmp::new("echo");
    keygen(&t, "ecdsa-p256-sha256");
    let pem = std::fs::read_to_string(t.0.join("k.pem")).expect("pem");
    let body: String = pem.lines().nth(1).expect("body line").to_owned();
    let jwk =
        r#"{"kty":"EC","crv":"P-256","d":"c2VjcmV0LXNjYWxhci1kby1ub3QtZWNobw","x":"a","y":"b"}"#;
    let blob = "c2VjcmV0LWJ5dGVzLXRoYXQtbXVzdC1uZXZlci1iZS1lY2hvZWQtYmFjaw";
    let o = run(&["sign", "agent.json", "--key", "k.pem"], &t.0);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    for (value, secret_part) in [
        (pem.as_str(), body.as_str()),
        (jwk, "c2VjcmV0LXNjYWxhci1kby1ub3QtZWNobw"),
        (blob, blob),
    ] {
        for cmd in [
            vec!["sign", "agent.json", "--key", value],
            vec!["verify", "agent.json", "--key", value],
            vec!["verify", "agent.json", "--jwks", value],
        ] {
            let o = run(&cmd, &t.0);
            let err = String::from_utf8_lossy(&o.stderr);
            let out = String::from_utf8_lossy(&o.stdout);
            assert_eq!(code(&o), 2, "{err}");
            assert!(!err.contains(secret_part), "{:?} echoed: {err}", cmd[2]);
            assert!(!out.contains(secret_part), "{:?} echoed on stdout", cmd[2]);
            assert!(err.contains("looks like key material"), "{err}");
            assert!(err.contains("env:NAME"), "{err}");
        }
    }
    // A passphrase given as the value of --passphrase-file is not echoed.
    let o = run(
        &[
            "sign",
            "agent.json",
            "--key",
            "k.pem",
            "--passphrase-file",
            "hunter2-correct-horse",
        ],
        &t.0,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 2, "{err}");
    assert!(!err.contains("hunter2"), "{err}");
    // A missing ordinary path is still named.
    let o = run(&["sign", "agent.json", "--key", "missing.pem"], &t.0);
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.pem"));
}

/// Every key keygen writes signs and verifies as written.
/// RSA keys need no --alg: rsa-pss-sha512 is recorded in the PEM files
/// (id-RSASSA-PSS), rsa-v1_5-sha256 in PREFIX.jwk.json's alg. HMAC is the
/// exception by policy: a shared secret is used only when hmac-sha256 is
/// named (RFC 8725 section 3.1), on both sides.
#[test]
fn keygen_keys_sign_and_verify_as_written() {
    for alg in [
        "ecdsa-p256-sha256",
        "ecdsa-p384-sha384",
        "ed25519",
        "rsa-pss-sha512",
        "rsa-v1_5-sha256",
        "hmac-sha256",
    ] {
        let t = Tmp::new(&format!("rt-{alg}"));
        keygen(&t, alg);
        let (sign_key, verifiers, extra): (&str, Vec<[&str; 2]>, Vec<&str>) =
            if alg == "hmac-sha256" {
                (
                    "k.secret",
                    vec![["--key", "k.secret"]],
                    vec!["--alg", "hmac-sha256"],
                )
            } else {
                (
                    "k.pem",
                    vec![
                        ["--key", "k.pem"],
                        ["--key", "k.pub.pem"],
                        ["--key", "k.jwk.json"],
                        ["--jwks", "k.jwks.json"],
                    ],
                    vec![],
                )
            };
        let mut args = vec!["sign", "agent.json", "--key", sign_key];
        args.extend(&extra);
        let o = run(&args, &t.0);
        assert_eq!(
            code(&o),
            0,
            "{alg} sign: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        for v in verifiers {
            let mut args = vec!["verify", "agent.json", v[0], v[1]];
            args.extend(&extra);
            let o = run(&args, &t.0);
            assert_eq!(
                code(&o),
                0,
                "{alg} verify {v:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
    }
}

/// An RSA PEM with nothing recording its algorithm gets an
/// error naming --alg; an encrypted key without passphrase names
/// --passphrase-file and AGENTSIG_PASSPHRASE.
#[test]
fn key_errors_name_the_flag_to_use() {
    let t = Tmp::new("errs");
    keygen(&t, "rsa-v1_5-sha256");
    std::fs::rename(t.0.join("k.jwk.json"), t.0.join("elsewhere.json")).expect("mv");
    let o = run(&["sign", "agent.json", "--key", "k.pem"], &t.0);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 2, "{err}");
    assert!(err.contains("--alg rsa-pss-sha512"), "{err}");
    let o = run(
        &[
            "sign",
            "agent.json",
            "--key",
            "k.pem",
            "--alg",
            "rsa-v1_5-sha256",
        ],
        &t.0,
    );
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    // An encrypted PKCS#8 key without a passphrase.
    let enc = include_str!("vectors/keys/test-key-ecc-p256.enc.pem");
    std::fs::write(t.0.join("enc.pem"), enc).expect("write");
    let o = run(&["sign", "agent.json", "--key", "enc.pem"], &t.0);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 2, "{err}");
    assert!(
        err.contains("--passphrase-file") && err.contains("AGENTSIG_PASSPHRASE"),
        "{err}"
    );
}

fn require_interop() -> bool {
    std::env::var("AGENTSIG_REQUIRE_INTEROP").is_ok_and(|v| v == "1")
}

/// Run a peer tool; `None` (the check is skipped) when the program is not
/// installed, unless AGENTSIG_REQUIRE_INTEROP=1 makes that a failure.
fn peer(program: &str, args: &[&str], dir: &Path) -> Option<Output> {
    match Command::new(program).args(args).current_dir(dir).output() {
        Ok(o) => Some(o),
        Err(e) => {
            assert!(
                !require_interop(),
                "{program} is required (AGENTSIG_REQUIRE_INTEROP=1) but unavailable: {e}"
            );
            println!("SKIPPED key interop with {program}: {e}");
            None
        }
    }
}

/// The public members of a JWK (the RFC 7638 thumbprint members).
fn public_members(v: &serde_json::Value) -> serde_json::Value {
    let mut out = serde_json::Map::new();
    for k in ["kty", "crv", "x", "y", "n", "e"] {
        if let Some(x) = v.get(k) {
            out.insert(k.into(), x.clone());
        }
    }
    serde_json::Value::Object(out)
}

/// The base64 body of a PEM file, on one line.
fn pem_body(pem: &str) -> String {
    pem.lines().filter(|l| !l.starts_with("-----")).collect()
}

const NODE_READ_KEY: &str = r#"
const c = require('crypto');
const k = c.createPrivateKey(require('fs').readFileSync(process.argv[1]));
const p = c.createPublicKey(k);
let jwk = null;
try { jwk = p.export({ format: 'jwk' }); } catch (e) { if (e.code !== 'ERR_CRYPTO_JWK_UNSUPPORTED_KEY_TYPE') throw e; }
console.log(JSON.stringify({ type: k.asymmetricKeyType, spki: p.export({ type: 'spki', format: 'der' }).toString('base64'), jwk }));
"#;

const PYTHON_READ_KEY: &str = r#"
import base64, json, sys
from cryptography.hazmat.primitives import serialization as s
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
k = s.load_pem_private_key(open(sys.argv[1], 'rb').read(), password=None)
p = k.public_key()
b = lambda x: base64.urlsafe_b64encode(x).rstrip(b'=').decode()
i = lambda n, size=None: b(n.to_bytes(size or (n.bit_length() + 7) // 8, 'big'))
if isinstance(p, ed25519.Ed25519PublicKey):
    jwk = {'kty': 'OKP', 'crv': 'Ed25519', 'x': b(p.public_bytes(s.Encoding.Raw, s.PublicFormat.Raw))}
elif isinstance(p, ec.EllipticCurvePublicKey):
    size = (p.curve.key_size + 7) // 8
    n = p.public_numbers()
    jwk = {'kty': 'EC', 'crv': {'secp256r1': 'P-256', 'secp384r1': 'P-384'}[p.curve.name], 'x': i(n.x, size), 'y': i(n.y, size)}
elif isinstance(p, rsa.RSAPublicKey):
    n = p.public_numbers()
    jwk = {'kty': 'RSA', 'n': i(n.n), 'e': i(n.e)}
spki = base64.b64encode(p.public_bytes(s.Encoding.DER, s.PublicFormat.SubjectPublicKeyInfo)).decode()
print(json.dumps({'type': type(k).__name__, 'spki': spki, 'jwk': jwk}))
"#;

/// Every private key keygen writes is PKCS#8 that OpenSSL 3.0 (`openssl
/// pkey`), Node (`crypto.createPrivateKey`) and Python `cryptography` (what
/// the A2A Python SDK uses) read, and the public key each derives equals
/// PREFIX.pub.pem and PREFIX.jwk.json. Ed25519 is the case that failed with
/// PKCS#8 v2 (RFC 5958 with the public key): keygen writes v1 (RFC 8410).
/// HMAC secrets are not asymmetric keys and have no such form.
#[test]
fn keygen_private_keys_load_in_openssl_node_and_python() {
    for alg in [
        "ecdsa-p256-sha256",
        "ecdsa-p384-sha384",
        "ed25519",
        "rsa-pss-sha512",
        "rsa-v1_5-sha256",
    ] {
        let t = Tmp::new(&format!("peer-{alg}"));
        keygen(&t, alg);
        let pem = std::fs::read_to_string(t.0.join("k.pem")).expect("pem");
        let ours_pub = std::fs::read_to_string(t.0.join("k.pub.pem")).expect("pub");
        let ours_jwk: serde_json::Value =
            serde_json::from_slice(&std::fs::read(t.0.join("k.jwk.json")).expect("jwk"))
                .expect("jwk json");
        let ours_jwk = public_members(&ours_jwk);
        // PKCS#8 v1: PrivateKeyInfo version 0 (RFC 5208), no [1] publicKey.
        let der = b64::decode_std(&pem_body(&pem)).expect("PEM base64");
        let body = match der[1] {
            0x81 => 3,
            0x82 => 4,
            n => usize::from(n < 0x80) * 2,
        };
        assert_eq!(&der[body..body + 3], &[2, 1, 0], "{alg}: PKCS#8 version");
        if alg == "ed25519" {
            // SEQUENCE { INTEGER 0, AlgorithmIdentifier, OCTET STRING (seed) }
            assert_eq!(der.len(), 48, "{alg}: RFC 8410 section 7 form");
        }

        if let Some(o) = peer(
            "openssl",
            &["pkey", "-in", "k.pem", "-pubout", "-text_pub"],
            &t.0,
        ) {
            let out = String::from_utf8_lossy(&o.stdout);
            assert!(
                o.status.success(),
                "{alg}: openssl pkey: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            let their_pub: String = out
                .split_inclusive('\n')
                .take_while(|l| !l.starts_with("-----END"))
                .collect::<String>()
                + "-----END PUBLIC KEY-----\n";
            assert_eq!(their_pub, ours_pub, "{alg}: openssl's public key");
            let o = peer(
                "openssl",
                &["pkey", "-in", "k.pem", "-noout", "-text"],
                &t.0,
            )
            .expect("openssl ran before");
            assert!(o.status.success(), "{alg}");
        }

        if let Some(o) = peer("node", &["-e", NODE_READ_KEY, "k.pem"], &t.0) {
            assert!(
                o.status.success(),
                "{alg}: node createPrivateKey: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("node json");
            assert_eq!(v["spki"], pem_body(&ours_pub), "{alg}: node's SPKI");
            if alg == "rsa-pss-sha512" {
                // Node has no JWK form for RSASSA-PSS keys; the SPKI carries it.
                assert_eq!(v["type"], "rsa-pss", "{alg}");
            } else {
                assert_eq!(public_members(&v["jwk"]), ours_jwk, "{alg}: node's JWK");
            }
        }

        if let Some(o) = peer("python3", &["-c", PYTHON_READ_KEY, "k.pem"], &t.0) {
            let err = String::from_utf8_lossy(&o.stderr);
            if err.contains("ModuleNotFoundError") {
                assert!(
                    !require_interop(),
                    "python3 cryptography is required (AGENTSIG_REQUIRE_INTEROP=1): {err}"
                );
                println!("SKIPPED key interop with python3 cryptography: {err}");
                continue;
            }
            assert!(o.status.success(), "{alg}: python cryptography: {err}");
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("python json");
            assert_eq!(v["jwk"], ours_jwk, "{alg}: python's public key");
            if alg != "rsa-pss-sha512" {
                // cryptography reads an RSASSA-PSS key as a plain RSA key and
                // writes its SPKI as rsaEncryption; the others must agree.
                assert_eq!(v["spki"], pem_body(&ours_pub), "{alg}: python's SPKI");
            }
        }
    }
}

fn json_out(o: &Output) -> serde_json::Value {
    assert_eq!(code(o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("JSON on standard output")
}

/// `key public` prints the public JWK (or JWK Set) of every key form
/// agentsig reads, the same key under the same kid, and never a private
/// member.
#[test]
fn key_public_prints_the_public_jwk_of_every_key_form() {
    let t = Tmp::new("public");
    let o = run(&["keygen", "--out", "k", "--kid", "pub-1"], &t.0);
    assert_eq!(code(&o), 0);
    let jwk: serde_json::Value =
        serde_json::from_slice(&std::fs::read(t.0.join("k.jwk.json")).unwrap()).unwrap();
    for form in ["k.pem", "k.pub.pem", "k.jwk.json", "k.jwks.json"] {
        let got = json_out(&run(&["key", "public", form], &t.0));
        assert_eq!(got, jwk, "{form}");
        let set = json_out(&run(&["key", "public", form, "--as-jwks"], &t.0));
        assert_eq!(set, serde_json::json!({"keys": [jwk.clone()]}), "{form}");
    }
    // A private JWK: its public half only.
    let ed = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/keys/rfc9421/test-key-ed25519.jwk.json"
    );
    let got = json_out(&run(&["key", "public", ed], &t.0));
    assert!(got.get("d").is_none() && got["crv"] == "Ed25519", "{got}");
    // A JWK Set of two keys needs --kid.
    let o = run(&["keygen", "--out", "k2", "--kid", "pub-2"], &t.0);
    assert_eq!(code(&o), 0);
    let k2: serde_json::Value =
        serde_json::from_slice(&std::fs::read(t.0.join("k2.jwk.json")).unwrap()).unwrap();
    std::fs::write(
        t.0.join("two.jwks.json"),
        serde_json::to_vec(&serde_json::json!({"keys": [jwk.clone(), k2.clone()]})).unwrap(),
    )
    .unwrap();
    let o = run(&["key", "public", "two.jwks.json"], &t.0);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("--kid"));
    assert_eq!(
        json_out(&run(
            &["key", "public", "two.jwks.json", "--kid", "pub-2"],
            &t.0
        )),
        k2
    );
}

/// `keygen --passphrase-file/--passphrase-env` writes an encrypted PKCS#8
/// key that `key public`, `sign` and `verify` read with the same options;
/// the passphrase is never taken from the command line.
#[test]
fn keygen_writes_an_encrypted_pkcs8_key_read_back_with_its_passphrase() {
    let t = Tmp::new("encrypted");
    std::fs::write(t.0.join("pass.txt"), "correct horse\n").unwrap();
    std::fs::write(t.0.join("agent.json"), DOC).unwrap();
    let o = run(
        &[
            "keygen",
            "--out",
            "e",
            "--kid",
            "enc-1",
            "--passphrase-file",
            "pass.txt",
        ],
        &t.0,
    );
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let pem = std::fs::read_to_string(t.0.join("e.pem")).unwrap();
    assert!(
        pem.starts_with("-----BEGIN ENCRYPTED PRIVATE KEY-----"),
        "{pem}"
    );
    // Without the passphrase: a key error that says how to give it.
    let o = run(&["key", "public", "e.pem"], &t.0);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("passphrase"));
    // From an environment variable named on the command line.
    let o = Command::new(env!("CARGO_BIN_EXE_agentsig"))
        .args(["key", "public", "e.pem", "--passphrase-env", "MY_KEY_PASS"])
        .current_dir(&t.0)
        .env_remove("AGENTSIG_PASSPHRASE")
        .env("MY_KEY_PASS", "correct horse")
        .output()
        .unwrap();
    let jwk: serde_json::Value =
        serde_json::from_slice(&std::fs::read(t.0.join("e.jwk.json")).unwrap()).unwrap();
    assert_eq!(json_out(&o), jwk);
    // A wrong passphrase fails clearly.
    std::fs::write(t.0.join("wrong.txt"), "battery staple\n").unwrap();
    let o = run(
        &["key", "public", "e.pem", "--passphrase-file", "wrong.txt"],
        &t.0,
    );
    assert_eq!(code(&o), 2);
    // There is no option that takes the passphrase itself.
    let o = run(
        &["keygen", "--out", "x", "--passphrase", "correct horse"],
        &t.0,
    );
    assert_eq!(code(&o), 2);
    assert!(!t.0.join("x.pem").exists());
    // sign reads it; verify with the encrypted private key says to give the public key.
    let o = run(
        &[
            "sign",
            "agent.json",
            "--key",
            "e.pem",
            "--passphrase-file",
            "pass.txt",
            "--no-headers",
        ],
        &t.0,
    );
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(&["verify", "agent.json", "--key", "e.pem"], &t.0);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("verifying needs only the public key")
            && err.contains("key public e.pem --as-jwks"),
        "{err}"
    );
    let o = run(&["verify", "agent.json", "--jwks", "e.jwks.json"], &t.0);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
}
