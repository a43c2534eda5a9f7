//! Signing keys in a PKCS#11 token (src/keys/pkcs11): every algorithm on a
//! real SoftHSM2 token the test makes itself (tests/pkcs11_support), the
//! signatures verified by agentsig's verifier against the public keys
//! OpenSC's pkcs11-tool reads from the token; the private keys sensitive and
//! not extractable; the typed errors; the session pool; and the commands
//! (`sign`, `http sign`, `keygen --pkcs11`, `serve`) given a `pkcs11:` URI.

mod pkcs11_support;

use agentsig::keys::pkcs11::{self, Pkcs11Error};
use agentsig::keys::{KeyError, LoadOptions};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::Algorithm;
use pkcs11_support::{token, PIN};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_agentsig");

fn opts(alg: Option<Algorithm>) -> LoadOptions {
    LoadOptions {
        alg,
        ..Default::default()
    }
}

/// (label, the hint given, the algorithm expected)
const CASES: [(&str, Option<Algorithm>, Algorithm); 5] = [
    ("p256", None, Algorithm::EcdsaP256Sha256),
    ("p384", None, Algorithm::EcdsaP384Sha384),
    ("ed25519", None, Algorithm::Ed25519),
    (
        "rsa",
        Some(Algorithm::RsaPssSha512),
        Algorithm::RsaPssSha512,
    ),
    (
        "rsa",
        Some(Algorithm::RsaV15Sha256),
        Algorithm::RsaV15Sha256,
    ),
];

#[test]
fn every_algorithm_signs_in_the_token_and_verifies_under_the_tokens_public_key() {
    let Some((t, _token)) = token() else { return };
    for (label, hint, alg) in CASES {
        let key = pkcs11::load(&t.uri(label), &opts(hint)).unwrap();
        assert_eq!(key.algorithm(), alg, "{label}");
        assert!(key.pkcs8_pem().is_none(), "a token key has no PKCS#8 form");
        // The public key as pkcs11-tool reads it, independently of agentsig.
        let independent = t.public_key(label, alg);
        assert_eq!(
            key.kid_or_thumbprint(),
            independent.thumbprint(),
            "{label}: the kid is the RFC 7638 thumbprint of the token's public key"
        );
        for msg in [&b""[..], b"hello", &[7u8; 5000][..]] {
            let sig = key.sign(msg).unwrap();
            independent.verify(msg, &sig).unwrap();
            assert!(independent.verify(b"other", &sig).is_err(), "{label}");
        }
        // The algorithm is bound: asking for another is refused.
        let other = if alg == Algorithm::Ed25519 {
            Algorithm::EcdsaP256Sha256
        } else {
            Algorithm::Ed25519
        };
        assert!(matches!(
            key.sign_as(other, b"x"),
            Err(KeyError::AlgorithmMismatch { .. })
        ));
    }
}

#[test]
fn a_descriptor_signed_with_a_token_key_verifies() {
    let Some((t, _token)) = token() else { return };
    let key = pkcs11::load(&t.uri("p384"), &opts(None)).unwrap();
    let doc = br#"{"name":"token agent","url":"https://agent.example"}"#;
    let signed = agentsig::descriptor::sign(doc, &key).unwrap();
    // agentsig's verifier, trusting the public key pkcs11-tool reads.
    let independent = t.public_key("p384", Algorithm::EcdsaP384Sha384);
    let v = Verifier::builder(StaticKeys::new().with(independent, KeySource::Pinned)).build();
    assert!(v.verify_descriptor(doc, &signed.jws).is_ok());
    let tampered = br#"{"name":"token agent","url":"https://evil.example"}"#;
    assert!(v.verify_descriptor(tampered, &signed.jws).is_err());
}

#[test]
fn keys_from_the_token_are_sensitive_and_not_extractable() {
    let Some((t, _token)) = token() else { return };
    for (label, hint, _) in CASES {
        let key = pkcs11::load(&t.uri(label), &opts(hint)).unwrap();
        let info = key.token_key().unwrap().info().clone();
        assert!(info.sensitive && info.always_sensitive, "{label}: {info:?}");
        assert!(
            !info.extractable && info.never_extractable,
            "{label}: {info:?}"
        );
        assert_eq!(info.label, label);
    }
}

#[test]
fn keygen_in_the_token_makes_a_sensitive_non_extractable_pair() {
    let Some((t, _token)) = token() else { return };
    for (label, alg) in [
        ("gen-p256", Algorithm::EcdsaP256Sha256),
        ("gen-ed25519", Algorithm::Ed25519),
        ("gen-rs256", Algorithm::RsaV15Sha256),
    ] {
        let uri = t.uri(label);
        let key = pkcs11::generate(&uri, alg, &LoadOptions::default()).unwrap();
        assert_eq!(key.algorithm(), alg);
        let info = key.token_key().unwrap().info().clone();
        assert!(info.sensitive && !info.extractable, "{info:?}");
        assert_eq!(info.id.len(), 16, "a random CKA_ID links the pair");
        // OpenSC reads the same attributes from the token.
        let listing = t.tool(&[
            "--login",
            "--pin",
            PIN,
            "--list-objects",
            "--type",
            "privkey",
        ]);
        let block = listing
            .split("Private Key Object")
            .find(|b| b.contains(&format!("label:      {label}\n")))
            .unwrap();
        assert!(
            block.contains("sensitive, always sensitive, never extractable"),
            "{block}"
        );
        // The private value cannot be read out: C_GetAttributeValue of
        // CKA_VALUE answers CKR_ATTRIBUTE_SENSITIVE (PKCS#11 v2.40 section
        // 5.7), and cryptoki returns no value.
        assert!(
            private_value(t, &info.id).is_none(),
            "{label}: CKA_VALUE read"
        );
        // It signs, and the public key pkcs11-tool lists verifies it.
        let sig = key.sign(b"m").unwrap();
        if alg != Algorithm::RsaV15Sha256 {
            t.public_key(label, alg).verify(b"m", &sig).unwrap();
        }
        key.verifying_key().verify(b"m", &sig).unwrap();
        // The same URI again: refused, the existing key is kept.
        assert!(matches!(
            pkcs11::generate(&uri, alg, &LoadOptions::default()),
            Err(KeyError::Pkcs11(Pkcs11Error::ObjectExists(_)))
        ));
    }
}

/// CKA_VALUE of the private key with CKA_ID `id`, read through a session
/// of this process (logged in by the key's load).
fn private_value(t: &pkcs11_support::Token, id: &[u8]) -> Option<Vec<u8>> {
    use cryptoki::object::{Attribute, AttributeType, ObjectClass};
    let c = cryptoki::context::Pkcs11::new(&t.module).unwrap();
    let slot = c
        .get_slots_with_token()
        .unwrap()
        .into_iter()
        .find(|s| c.get_token_info(*s).unwrap().label() == pkcs11_support::LABEL)
        .unwrap();
    let s = c.open_ro_session(slot).unwrap();
    let found = s
        .find_objects(&[
            Attribute::Class(ObjectClass::PRIVATE_KEY),
            Attribute::Id(id.to_vec()),
        ])
        .unwrap();
    assert_eq!(
        found.len(),
        1,
        "the key is visible to the logged-in session"
    );
    match s.get_attributes(found[0], &[AttributeType::Value]) {
        Ok(attrs) => attrs.into_iter().find_map(|a| match a {
            Attribute::Value(v) => Some(v),
            _ => None,
        }),
        Err(e) => {
            assert!(e.to_string().contains("AttributeSensitive"), "{e}");
            None
        }
    }
}

fn err(uri: &str, hint: Option<Algorithm>) -> Pkcs11Error {
    match pkcs11::load(uri, &opts(hint)) {
        Err(KeyError::Pkcs11(e)) => e,
        other => panic!("{uri}: {other:?}"),
    }
}

/// The PIN file must be a regular file only its owner can read or write,
/// opened without blocking: one readable by others and a FIFO with no
/// writer are refused at once (the FIFO does not hang the load).
#[test]
fn a_pin_file_others_can_read_or_a_fifo_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let Some((t, _token)) = token() else { return };
    let m = &t.module;
    let uri = |pin: &std::path::Path| {
        format!(
            "pkcs11:token=agentsig-test;object=p256?module-path={m}&pin-source=file:{}",
            pin.display()
        )
    };
    let open = t.dir.join("pin-readable");
    std::fs::write(&open, format!("{PIN}\n")).unwrap();
    for mode in [0o644, 0o640] {
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(mode)).unwrap();
        match err(&uri(&open), None) {
            Pkcs11Error::PinSource { detail, .. } => {
                assert!(detail.contains("chmod 600"), "{detail}")
            }
            other => panic!("{mode:o}: {other:?}"),
        }
    }
    let fifo = t.dir.join("pin-fifo");
    let _ = std::fs::remove_file(&fifo);
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    assert!(matches!(
        err(&uri(&fifo), None),
        Pkcs11Error::PinSource { detail, .. } if detail.contains("not a regular file")
    ));
}

#[test]
fn each_cause_of_failure_is_a_typed_error() {
    let Some((t, _token)) = token() else { return };
    let m = &t.module;
    let wrong_pin = t.dir.join("wrong-pin");
    pkcs11_support::write_private(&wrong_pin, b"0000\n");
    assert_eq!(
        err(
            &format!(
                "pkcs11:token=agentsig-test;object=p256?module-path={m}&pin-source=file:{}",
                wrong_pin.display()
            ),
            None
        ),
        Pkcs11Error::WrongPin
    );
    let pin = t.pin_file.display();
    assert!(matches!(
        err(&format!("pkcs11:token=no-such-token;object=p256?module-path={m}&pin-source=file:{pin}"), None),
        Pkcs11Error::TokenNotFound(w) if w.contains("no-such-token")
    ));
    assert!(matches!(
        err(&format!("pkcs11:token=agentsig-test;object=nope?module-path={m}&pin-source=file:{pin}"), None),
        Pkcs11Error::ObjectNotFound(w) if w.contains("nope")
    ));
    // Four private keys (and those keygen adds) match a URI without object=.
    assert!(matches!(
        err(&format!("pkcs11:token=agentsig-test?module-path={m}&pin-source=file:{pin}"), None),
        Pkcs11Error::AmbiguousObject(n) if n >= 4
    ));
    // A file that is not a shared library, and one that is but is not a
    // PKCS#11 module (no C_GetFunctionList).
    let text = t.dir.join("not-a-module.so");
    std::fs::write(&text, "not an ELF file").unwrap();
    assert!(matches!(
        err(&format!("pkcs11:object=p256?module-path={}", text.display()), None),
        Pkcs11Error::Module { detail, .. } if detail.contains("shared library")
    ));
    let libc = [
        "/lib/x86_64-linux-gnu/libc.so.6",
        "/lib/aarch64-linux-gnu/libc.so.6",
        "/usr/lib64/libc.so.6",
    ]
    .into_iter()
    .find(|p| std::path::Path::new(p).is_file());
    if let Some(libc) = libc {
        assert!(matches!(
            err(&format!("pkcs11:object=p256?module-path={libc}"), None),
            Pkcs11Error::Module { detail, .. } if detail.contains("C_GetFunctionList")
        ));
    }
    assert!(matches!(
        err("pkcs11:object=p256?module-path=libsofthsm2.so", None),
        Pkcs11Error::Module { detail, .. } if detail.contains("absolute")
    ));
    assert_eq!(
        err(
            &format!("pkcs11:object=p256?module-path={m}&pin-value={PIN}"),
            None
        ),
        Pkcs11Error::PinValueRefused
    );
    assert!(matches!(
        err(
            &format!("pkcs11:object=p256?module-path={m}&pin-source=https://pin.example/"),
            None
        ),
        Pkcs11Error::PinSource { .. }
    ));
    // RSA needs its algorithm; an EC key refuses another one.
    assert!(matches!(
        err(&t.uri("rsa"), None),
        Pkcs11Error::Unsupported(w) if w.contains("--alg")
    ));
    assert!(matches!(
        err(&t.uri("p256"), Some(Algorithm::EcdsaP384Sha384)),
        Pkcs11Error::Unsupported(w) if w.contains("requested")
    ));
}

#[test]
fn threads_share_a_small_pool_of_sessions() {
    let Some((t, _token)) = token() else { return };
    let key = std::sync::Arc::new(pkcs11::load(&t.uri("ed25519"), &opts(None)).unwrap());
    let threads: Vec<_> = (0..8)
        .map(|i| {
            let key = key.clone();
            std::thread::spawn(move || {
                for j in 0..40 {
                    let msg = format!("thread {i} message {j}");
                    let sig = key.sign(msg.as_bytes()).unwrap();
                    key.verifying_key().verify(msg.as_bytes(), &sig).unwrap();
                }
            })
        })
        .collect();
    for th in threads {
        th.join().unwrap();
    }
    // 320 signatures; at most one session per thread at a time, plus the
    // one opened at load.
    let opened = key.token_key().unwrap().sessions_opened();
    assert!((1..=9).contains(&opened), "{opened} sessions for 8 threads");
}

// ---------------------------------------------------------------------------
// The commands

fn agentsig(t: &pkcs11_support::Token, args: &[&str]) -> Output {
    Command::new(BIN)
        .env("SOFTHSM2_CONF", &t.conf)
        .env_remove("AGENTSIG_PKCS11_PIN")
        .env_remove("AGENTSIG_PKCS11_MODULE")
        .current_dir(&t.dir)
        .args(args)
        .output()
        .unwrap()
}

fn ok(o: &Output) -> String {
    pkcs11_support::stdout_of("agentsig", o)
}

/// The public key of `label` as pkcs11-tool reads it, written as a JWK Set
/// the verifier trusts.
fn jwks_file(t: &pkcs11_support::Token, label: &str, alg: Algorithm) -> String {
    let vk = t.public_key(label, alg);
    let path = t.dir.join(format!("{label}-{}.jwks.json", alg.jose_name()));
    std::fs::write(
        &path,
        serde_json::to_vec(&agentsig::jwk::jwks_document(&[&vk])).unwrap(),
    )
    .unwrap();
    path.display().to_string()
}

#[test]
fn sign_and_verify_descriptors_with_token_keys() {
    let Some((t, _token)) = token() else { return };
    for (label, hint, alg) in CASES {
        let doc = t
            .dir
            .join(format!("agent-{label}-{}.json", alg.jose_name()));
        std::fs::write(
            &doc,
            br#"{"name":"token agent","url":"https://agent.example"}"#,
        )
        .unwrap();
        let doc = doc.display().to_string();
        let mut args = vec!["sign", &doc, "--key"];
        let uri = t.uri(label);
        args.push(&uri);
        let alg_name = alg.httpsig_name();
        if hint.is_some() {
            args.extend(["--alg", alg_name]);
        }
        ok(&agentsig(t, &args));
        let jwks = jwks_file(t, label, alg);
        let out = ok(&agentsig(t, &["verify", &doc, "--jwks", &jwks]));
        assert!(out.contains("verified"), "{out}");
    }
}

#[test]
fn http_sign_with_token_keys_verifies() {
    let Some((t, _token)) = token() else { return };
    let req = t.dir.join("req.http");
    std::fs::write(
        &req,
        "GET /data?x=1 HTTP/1.1\r\nHost: api.example\r\nAccept: application/json\r\n\r\n",
    )
    .unwrap();
    let req = req.display().to_string();
    for (label, hint, alg) in CASES {
        let uri = t.uri(label);
        let mut args = vec!["http", "sign", &req, "--key", &uri];
        let alg_name = alg.httpsig_name();
        if hint.is_some() {
            args.extend(["--alg", alg_name]);
        }
        let signed = ok(&agentsig(t, &args));
        let out_path = t
            .dir
            .join(format!("signed-{label}-{}.http", alg.jose_name()));
        std::fs::write(&out_path, &signed).unwrap();
        let jwks = jwks_file(t, label, alg);
        let v = agentsig(
            t,
            &[
                "http",
                "verify",
                out_path.to_str().unwrap(),
                "--jwks",
                &jwks,
                "--authority",
                "api.example",
            ],
        );
        ok(&v);
    }
    // Web Bot Auth: Ed25519 from the token, keyid = its thumbprint.
    let uri = t.uri("ed25519");
    let signed = ok(&agentsig(
        t,
        &[
            "http",
            "sign",
            &req,
            "--key",
            &uri,
            "--profile",
            "web-bot-auth",
            "--signature-agent",
            "https://bot.example/.well-known/http-message-signatures-directory",
        ],
    ));
    let tp = t.public_key("ed25519", Algorithm::Ed25519).thumbprint();
    assert!(signed.contains(&format!("keyid=\"{tp}\"")), "{signed}");
    assert!(signed.contains("tag=\"web-bot-auth\""), "{signed}");
    let out_path = t.dir.join("signed-wba.http");
    std::fs::write(&out_path, &signed).unwrap();
    let jwks = jwks_file(t, "ed25519", Algorithm::Ed25519);
    ok(&agentsig(
        t,
        &[
            "http",
            "verify",
            out_path.to_str().unwrap(),
            "--jwks",
            &jwks,
            "--authority",
            "api.example",
        ],
    ));
}

#[test]
fn keygen_pkcs11_writes_the_public_files_and_the_uri_signs() {
    let Some((t, _token)) = token() else { return };
    let uri = t.uri("cli-p384");
    let prefix = t.dir.join("cli-p384").display().to_string();
    let keygen = |out: &str| {
        agentsig(
            t,
            &[
                "keygen",
                "--alg",
                "ecdsa-p384-sha384",
                "--pkcs11",
                &uri,
                "--out",
                out,
            ],
        )
    };
    let out = ok(&keygen(&prefix));
    assert!(out.contains("wrote"), "{out}");
    for suffix in [".pub.pem", ".jwk.json", ".jwks.json"] {
        assert!(std::path::Path::new(&format!("{prefix}{suffix}")).is_file());
    }
    assert!(
        !std::path::Path::new(&format!("{prefix}.pem")).exists(),
        "no private key file"
    );
    let doc = t.dir.join("keygen-agent.json");
    std::fs::write(&doc, br#"{"name":"a"}"#).unwrap();
    let doc = doc.display().to_string();
    ok(&agentsig(t, &["sign", &doc, "--key", &uri]));
    ok(&agentsig(
        t,
        &["verify", &doc, "--jwks", &format!("{prefix}.jwks.json")],
    ));
    // Again with the same label: exit 2, nothing written or generated.
    let again = t.dir.join("cli-p384-again").display().to_string();
    let o = keygen(&again);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("already holds a key"));
    assert!(!std::path::Path::new(&format!("{again}.jwk.json")).exists());
    // Existing output files: refused before anything is made in the token.
    let o = agentsig(
        t,
        &[
            "keygen",
            "--pkcs11",
            &t.uri("cli-never-made"),
            "--out",
            &prefix,
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let listing = t.tool(&["--login", "--pin", PIN, "--list-objects"]);
    assert!(!listing.contains("cli-never-made"), "{listing}");
}

#[test]
fn command_errors_exit_2_name_the_cause_and_write_nothing() {
    let Some((t, _token)) = token() else { return };
    let doc = t.dir.join("err-agent.json");
    std::fs::write(&doc, br#"{"name":"a"}"#).unwrap();
    let doc = doc.display().to_string();
    let m = &t.module;
    let pin = t.pin_file.display();
    let wrong = t.dir.join("cli-wrong-pin");
    pkcs11_support::write_private(&wrong, b"9999");
    let notmod = t.dir.join("cli-not-a-module.so");
    std::fs::write(&notmod, "text").unwrap();
    for (uri, cause) in [
        (
            format!(
                "pkcs11:token=agentsig-test;object=p256?module-path={m}&pin-source=file:{}",
                wrong.display()
            ),
            "refused the PIN",
        ),
        (
            format!("pkcs11:token=absent;object=p256?module-path={m}&pin-source=file:{pin}"),
            "no token matches",
        ),
        (
            format!(
                "pkcs11:token=agentsig-test;object=absent?module-path={m}&pin-source=file:{pin}"
            ),
            "no private key on the token matches",
        ),
        (
            format!("pkcs11:object=p256?module-path={}", notmod.display()),
            "is not a usable PKCS#11 module",
        ),
        (
            format!("pkcs11:object=p256?module-path={m}&pin-value=secret-pin"),
            "pin-value: refused",
        ),
        ("pkcs11:object=p256".to_owned(), "no PKCS#11 module given"),
    ] {
        let out = t.dir.join("never-written.jws");
        let o = agentsig(
            t,
            &["sign", &doc, "--key", &uri, "--out", out.to_str().unwrap()],
        );
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{uri}: {stderr}");
        assert!(stderr.contains(cause), "{uri}: {stderr}");
        assert!(!stderr.contains("secret-pin"), "the PIN is never echoed");
        assert!(!out.exists(), "{uri}: a file was written");
        assert!(!std::path::Path::new(&format!("{doc}.headers")).exists());
    }
}

/// `agentsig key public pkcs11:...` prints the token key's public JWK (the
/// one pkcs11-tool reads); a URI the shell cut at `;` or `&`, and a file
/// whose name begins with `pkcs11:`, get a hint instead of "No such file".
#[test]
fn key_public_reads_a_token_key_and_hints_at_a_cut_uri() {
    let Some((t, _token)) = token() else { return };
    let m = &t.module;
    let pin = t.pin_file.display();
    let uri =
        format!("pkcs11:token=agentsig-test;object=p256?module-path={m}&pin-source=file:{pin}");
    let o = agentsig(t, &["key", "public", &uri]);
    let jwk: serde_json::Value = serde_json::from_str(&ok(&o)).unwrap();
    let want = t.public_key("p256", agentsig::Algorithm::EcdsaP256Sha256);
    assert_eq!(jwk["kid"], want.thumbprint(), "{jwk}");
    assert!(jwk.get("d").is_none());
    // What the shell passes on of an unquoted URI: up to the first ';'.
    for cut in [
        "pkcs11:token=agentsig-test",
        "pkcs11:object=p256?module-path=/x.so",
    ] {
        let o = agentsig(t, &["key", "public", cut]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{cut}: {stderr}");
        assert!(stderr.contains("quote it"), "{cut}: {stderr}");
        assert!(!stderr.contains("No such file"), "{cut}: {stderr}");
    }
    let file = "pkcs11:looks-like-a-uri.pem";
    std::fs::write(t.dir.join(file), "x").unwrap();
    let o = agentsig(t, &["key", "public", file]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("write ./"), "{stderr}");
}

/// `agentsig serve` with a token key: responses signed by the token verify
/// under the JWK Set it serves, whose key is the token's public key.
#[cfg(unix)]
#[test]
fn serve_signs_responses_with_a_token_key() {
    use std::io::{BufRead, BufReader, Read, Write};
    let Some((t, _token)) = token() else { return };
    let site = t.dir.join("site");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(site.join("agent.json"), br#"{"name":"served"}"#).unwrap();
    let uri = t.uri("p256");
    let mut child = Command::new(BIN)
        .env("SOFTHSM2_CONF", &t.conf)
        .args(["serve", site.to_str().unwrap(), "--key", &uri])
        .args(["--listen", "127.0.0.1:0", "--reload-interval", "0"])
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut addr = None;
    let mut seen = String::new();
    for _ in 0..8 {
        let mut line = String::new();
        if err.read_line(&mut line).unwrap() == 0 {
            break;
        }
        seen.push_str(&line);
        if let Some(a) = line
            .split("http://")
            .nth(1)
            .and_then(|s| s.split('/').next())
        {
            addr = Some(a.to_owned());
            break;
        }
    }
    let Some(addr) = addr else {
        let _ = child.kill();
        let mut rest = String::new();
        let _ = err.read_to_string(&mut rest);
        panic!("serve logged no address: {seen}{rest}");
    };
    let get = |path: &str| {
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        write!(
            s,
            "GET {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\r\n"
        )
        .unwrap();
        let mut out = Vec::new();
        s.read_to_end(&mut out).unwrap();
        out
    };
    let jwks_raw = get("/.well-known/jwks.json");
    let split = jwks_raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let keys = agentsig::keys::load_verifying_keys(&jwks_raw[split + 4..], &LoadOptions::default())
        .unwrap();
    let independent = t.public_key("p256", Algorithm::EcdsaP256Sha256);
    assert!(keys
        .iter()
        .any(|k| k.thumbprint() == independent.thumbprint()));
    // Verify the signed response with the token's public key, as read by
    // pkcs11-tool.
    let resp = t.dir.join("served.http");
    for _ in 0..3 {
        std::fs::write(&resp, get("/agent.json")).unwrap();
        let jwks = jwks_file(t, "p256", Algorithm::EcdsaP256Sha256);
        ok(&agentsig(
            t,
            &["http", "verify", resp.to_str().unwrap(), "--jwks", &jwks],
        ));
    }
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

/// Run an interop peer script of tests/interop with `python3`; `None` (a
/// printed skip, or a failure under AGENTSIG_REQUIRE_INTEROP=1) when its
/// Python packages are missing.
fn python_peer(script: &str, args: &[&str], stdin: Option<&[u8]>) -> Option<Output> {
    use std::io::Write as _;
    let mut child = Command::new("python3")
        .arg(format!("tests/interop/{script}"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    if let Some(mut w) = child.stdin.take() {
        w.write_all(stdin.unwrap_or_default()).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    // Both scripts exit 3 (joserfc) or fail `check` (pyauth) without their
    // packages.
    if out.status.code() == Some(3) || (args == ["check"] && !out.status.success()) {
        if std::env::var("AGENTSIG_REQUIRE_INTEROP").as_deref() == Ok("1") {
            panic!("{script}: its Python packages are missing and AGENTSIG_REQUIRE_INTEROP=1 (bash scripts/test.sh installs them)");
        }
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED pkcs11 interop: {script} cannot import its packages (bash scripts/test.sh installs them)"
        );
        return None;
    }
    Some(out)
}

/// The token's signatures verify with independent implementations: PyPI
/// joserfc over rfc8785's JCS for the detached JWS of a descriptor, and
/// pyauth (http-message-signatures) for RFC 9421 requests, each given the
/// public key pkcs11-tool reads from the token.
#[test]
fn token_signatures_verify_with_joserfc_and_pyauth() {
    let Some((t, _token)) = token() else { return };
    use base64::Engine as _;
    let b64u = |b: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b);
    let doc = br#"{"name":"token agent","url":"https://agent.example","version":"1.0"}"#;
    let mut checks = Vec::new();
    for (label, hint, alg) in CASES {
        let key = pkcs11::load(&t.uri(label), &opts(hint)).unwrap();
        let signed = agentsig::descriptor::sign(doc, &key).unwrap();
        checks.push(serde_json::json!({
            "alg": alg.jose_name(),
            "jwk": t.public_key(label, alg).to_jwk().to_value(),
            "jws": signed.jws,
            "payload_b64u": b64u(&signed.canonical),
        }));
    }
    let req = serde_json::to_vec(&serde_json::json!({ "verify": checks, "sign": [] })).unwrap();
    if let Some(out) = python_peer("jose_joserfc.py", &[], Some(&req)) {
        let resp: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
        let results = resp["verify"].as_array().unwrap();
        assert_eq!(results.len(), CASES.len());
        for (r, (label, _, alg)) in results.iter().zip(CASES) {
            assert_eq!(r["ok"], true, "joserfc refused {label} {alg}: {r}");
        }
    }

    if python_peer("httpsig_pyauth.py", &["check"], None).is_none() {
        return;
    }
    let req = t.dir.join("pyauth-req.http");
    std::fs::write(
        &req,
        "GET /data HTTP/1.1\r\nHost: api.example\r\nAccept: application/json\r\n\r\n",
    )
    .unwrap();
    for (label, hint, alg) in CASES {
        let uri = t.uri(label);
        let mut args = vec!["http", "sign", req.to_str().unwrap(), "--key", &uri];
        if hint.is_some() {
            args.extend(["--alg", alg.httpsig_name()]);
        }
        let signed = ok(&agentsig(t, &args));
        let msg = t
            .dir
            .join(format!("pyauth-{label}-{}.http", alg.jose_name()));
        std::fs::write(&msg, signed).unwrap();
        let public = t.public_key(label, alg);
        let pem = t.dir.join(format!("pyauth-{label}.pub.pem"));
        std::fs::write(&pem, public.to_spki_pem().unwrap()).unwrap();
        let out = python_peer(
            "httpsig_pyauth.py",
            &[
                "verify",
                "--alg",
                alg.httpsig_name(),
                "--key",
                pem.to_str().unwrap(),
                // One form: a thumbprint may begin with '-', which
                // argparse would take for an option.
                &format!("--keyid={}", public.thumbprint()),
                "--message",
                msg.to_str().unwrap(),
            ],
            None,
        )
        .unwrap();
        assert!(
            out.status.success(),
            "pyauth refused {label} {alg}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The other commands that take a private key load it through the same
/// function: `delegation mint` (audited with the token's public key),
/// `pin announce` (its JWS verified) and `directory build` (the published
/// key is the token's).
#[test]
fn delegation_pin_and_directory_commands_take_a_token_key() {
    let Some((t, _token)) = token() else { return };
    let uri = t.uri("p256");
    let public = t.public_key("p256", Algorithm::EcdsaP256Sha256);
    let pem = t.dir.join("cmds-p256.pub.pem");
    std::fs::write(&pem, public.to_spki_pem().unwrap()).unwrap();
    let pem = pem.to_str().unwrap();

    let token_jwt = ok(&agentsig(
        t,
        &[
            "delegation",
            "mint",
            "--key",
            &uri,
            "--iss",
            "https://as.example",
            "--sub",
            "alice",
            "--aud",
            "https://api.example",
            "--scope",
            "read",
        ],
    ));
    let jwt = t.dir.join("cmds.jwt");
    std::fs::write(&jwt, token_jwt).unwrap();
    let audit = ok(&agentsig(
        t,
        &["delegation", "audit", jwt.to_str().unwrap(), "--key", pem],
    ));
    assert!(audit.contains("VERIFIED ES256"), "{audit}");

    let ann = t.dir.join("cmds-announce.json");
    let new_key = t.dir.join("cmds-new.pub.pem");
    std::fs::write(
        &new_key,
        t.public_key("ed25519", Algorithm::Ed25519)
            .to_spki_pem()
            .unwrap(),
    )
    .unwrap();
    ok(&agentsig(
        t,
        &[
            "pin",
            "announce",
            "--key",
            &uri,
            "--new-key",
            new_key.to_str().unwrap(),
            "--out",
            ann.to_str().unwrap(),
            "agent://agent.example/a",
        ],
    ));
    let jws = format!("{}.jws", ann.display());
    ok(&agentsig(
        t,
        &["verify", ann.to_str().unwrap(), "--jws", &jws, "--key", pem],
    ));

    let ed = t.uri("ed25519");
    let dir_out = t.dir.join("cmds-directory");
    ok(&agentsig(
        t,
        &[
            "directory",
            "build",
            "--key",
            &ed,
            "--authority",
            "bot.example",
            "--out",
            dir_out.to_str().unwrap(),
        ],
    ));
    let published = agentsig::keys::load_verifying_keys(
        &std::fs::read(&dir_out).unwrap(),
        &LoadOptions::default(),
    )
    .unwrap();
    let ed_public = t.public_key("ed25519", Algorithm::Ed25519);
    assert_eq!(published.len(), 1);
    assert_eq!(published[0].thumbprint(), ed_public.thumbprint());
}

/// `serve`'s signing layer keeps its signature cache with a token key: the
/// token signs one file version once per second of the layer's clock,
/// however many requests ask for it (counted at the token, not timed).
#[test]
fn the_signature_cache_spares_the_token() {
    let Some((t, _token)) = token() else { return };
    let served = pkcs11::load(&t.uri("p256"), &opts(None)).unwrap();
    let ring = std::sync::Arc::new(agentsig::server::KeyRing::new(vec![served]).unwrap());
    let mut cfg = agentsig::server::SignConfig::new(ring.clone());
    cfg.clock = std::sync::Arc::new(agentsig::clock::FixedClock(1_800_000_000));
    let layer = agentsig::server::SignLayer::with_config(cfg);
    let count = || ring.current().key.token_key().unwrap().token_signatures();
    let before = count();
    for _ in 0..50 {
        assert_eq!(pkcs11_support::serve_once(&layer, 1), (200, true));
    }
    assert_eq!(
        count() - before,
        1,
        "50 requests for one version: one token signature"
    );
    assert_eq!(pkcs11_support::serve_once(&layer, 2), (200, true));
    assert_eq!(count() - before, 2, "a new version is signed once more");
}
