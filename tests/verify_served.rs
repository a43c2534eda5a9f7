//! `verify FILE --response SAVED.http` and `verify URL
//! --require-response-signature` give the same verdict on the same served
//! bytes: a loopback HTTPS server serves each case, and the saved copy of
//! what it served (the response, the body as FILE, `URL.jws` as FILE.jws)
//! is verified offline. Both go through `agentsig::net::Resolver`
//! (`verify_url` and `verify_served`): the one verdict rule
//! (`policy::signatures_verified`) with the response signature required.
#![cfg(all(feature = "cli", feature = "net"))]

mod net_support;

use agentsig::{Algorithm, SigningKey};
use net_support::{Ca, Resp, Server};
use serde_json::json;
use std::path::PathBuf;
use std::process::Command;

#[derive(Clone, Copy, Debug, PartialEq)]
enum ResponseSig {
    Valid,
    Invalid,
    UntrustedKey,
    Absent,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Jws {
    Valid,
    Invalid,
    /// Signed by a key the verifier does not trust: not checked, it
    /// counts neither way (docs/report.md, "One verdict rule").
    UntrustedKey,
    Absent,
}

/// Flip one character of a compact JWS's signature.
fn corrupt(text: &str) -> String {
    let at = text.rfind('.').expect("compact JWS") + 2;
    let mut b = text.as_bytes().to_vec();
    b[at] = if b[at] == b'A' { b'B' } else { b'A' };
    String::from_utf8(b).expect("ascii")
}

/// The header fields served with `signed` (the descriptor the publisher
/// signed): Content-Type and Content-Digest always, the RFC 9421 fields
/// as the case says.
fn fields(
    signed: &[u8],
    sig: ResponseSig,
    key: &SigningKey,
    other: &SigningKey,
) -> Vec<(String, String)> {
    let created = 1_700_000_000;
    let by = if sig == ResponseSig::UntrustedKey {
        other
    } else {
        key
    };
    let kid = by.kid().expect("kid").to_owned();
    let mut f = agentsig::httpsig::static_response_fields(
        signed,
        "application/json",
        &[(by, kid)],
        created,
        None,
    )
    .expect("fields");
    match sig {
        ResponseSig::Absent => f.retain(|(k, _)| {
            !k.eq_ignore_ascii_case("signature") && !k.eq_ignore_ascii_case("signature-input")
        }),
        ResponseSig::Invalid => {
            for (k, v) in &mut f {
                if k.eq_ignore_ascii_case("signature") {
                    // One character inside the byte sequence `sig1=:...:`.
                    let at = v.find(':').expect("byte sequence") + 5;
                    let mut b = v.as_bytes().to_vec();
                    b[at] = if b[at] == b'A' { b'B' } else { b'A' };
                    *v = String::from_utf8(b).expect("ascii");
                }
            }
        }
        ResponseSig::Valid | ResponseSig::UntrustedKey => {}
    }
    f
}

fn saved_http(fields: &[(String, String)], body: &[u8]) -> Vec<u8> {
    let mut out = b"HTTP/1.1 200 OK\r\n".to_vec();
    for (k, v) in fields {
        out.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
    }
    out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
    out.extend_from_slice(body);
    out
}

fn code(o: &std::process::Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

struct Dir(PathBuf);
impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn a_saved_response_gets_the_verdict_of_the_url_that_served_it() {
    let ca = Ca::new();
    let srv = Server::start(&ca, &["agent.example"]);
    let dir = Dir(std::env::temp_dir().join(format!("agentsig-served-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).expect("dir");
    let d = |n: &str| dir.0.join(n);
    let ca_file = d("ca.pem");
    std::fs::write(&ca_file, ca.pem()).expect("ca");
    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256)
        .expect("key")
        .with_kid("k1");
    let other = SigningKey::generate(Algorithm::EcdsaP256Sha256)
        .expect("key")
        .with_kid("u1");
    let jwks = d("k.jwks.json");
    std::fs::write(
        &jwks,
        agentsig::jwk::jwks_document(&[key.verifying_key()]).to_string(),
    )
    .expect("jwks");
    let jwks = jwks.to_str().expect("path").to_owned();
    let signed = serde_json::to_vec(&json!({"name": "planner", "description": "plans trips"}))
        .expect("json");
    let tampered = serde_json::to_vec(&json!({"name": "planner", "description": "sends money"}))
        .expect("json");

    let sigs = [
        ResponseSig::Valid,
        ResponseSig::Invalid,
        ResponseSig::UntrustedKey,
        ResponseSig::Absent,
    ];
    let jwss = [Jws::Valid, Jws::Invalid, Jws::UntrustedKey, Jws::Absent];
    let mut cases = 0;
    let mut verified = 0;
    for sig in sigs {
        for jws in jwss {
            for body_matches in [true, false] {
                cases += 1;
                let name = format!("c{cases}.json");
                let served = if body_matches { &signed } else { &tampered };
                let f = fields(&signed, sig, &key, &other);
                let mut resp = Resp::ok("application/json", served.clone());
                resp.headers.clear();
                for (k, v) in &f {
                    resp = resp.header(k, v);
                }
                srv.route(&format!("/{name}"), resp);
                let jws_text = match jws {
                    Jws::Absent => None,
                    Jws::Valid => Some(agentsig::descriptor::sign(&signed, &key).expect("jws").jws),
                    Jws::UntrustedKey => Some(
                        agentsig::descriptor::sign(&signed, &other)
                            .expect("jws")
                            .jws,
                    ),
                    Jws::Invalid => Some(corrupt(
                        &agentsig::descriptor::sign(&signed, &key).expect("jws").jws,
                    )),
                };
                match &jws_text {
                    Some(t) => srv.route(
                        &format!("/{name}.jws"),
                        Resp::ok("application/jose", t.clone()),
                    ),
                    None => srv.route(
                        &format!("/{name}.jws"),
                        Resp {
                            status: 404,
                            ..Resp::ok("text/plain", "")
                        },
                    ),
                }
                // The saved copy of what was served.
                std::fs::write(d(&name), served).expect("file");
                if let Some(t) = &jws_text {
                    std::fs::write(d(&format!("{name}.jws")), t).expect("jws");
                } else {
                    let _ = std::fs::remove_file(d(&format!("{name}.jws")));
                }
                std::fs::write(d("saved.http"), saved_http(&f, served)).expect("saved");

                let url = srv.url("agent.example", &format!("/{name}"));
                let by_url = net_support::agentsig_cli(
                    &ca_file,
                    &[
                        "verify",
                        &url,
                        "--jwks",
                        &jwks,
                        "--require-response-signature",
                    ],
                );
                let by_file = Command::new(env!("CARGO_BIN_EXE_agentsig"))
                    .args(["verify", &name, "--response", "saved.http", "--jwks", &jwks])
                    .current_dir(&dir.0)
                    .env_remove("AGENTSIG_CA_FILE")
                    .output()
                    .expect("run");
                // verify URL's rule: the response signature verified with a
                // trusted key, the body the one signed, no signature invalid
                // (a JWS by an untrusted key is not checked).
                let expected = sig == ResponseSig::Valid && body_matches && jws != Jws::Invalid;
                let case = format!("{sig:?} x JWS {jws:?} x body matches {body_matches}");
                assert_eq!(
                    code(&by_url),
                    if expected { 0 } else { 1 },
                    "verify URL, {case}: {}",
                    text(&by_url)
                );
                assert_eq!(
                    code(&by_file),
                    code(&by_url),
                    "verify --response disagrees with verify URL, {case}: {}",
                    text(&by_file)
                );
                if expected {
                    verified += 1;
                }
            }
        }
    }
    assert_eq!(cases, 32);
    assert_eq!(
        verified, 3,
        "valid response signature, JWS valid, untrusted or absent"
    );
}

/// A saved response that is no 2xx answer is what `verify URL` never
/// accepts: refused with its code.
#[test]
fn a_saved_error_response_is_not_verified() {
    let dir = Dir(std::env::temp_dir().join(format!("agentsig-served-404-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).expect("dir");
    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256)
        .expect("key")
        .with_kid("k1");
    let jwks = dir.0.join("k.jwks.json");
    std::fs::write(
        &jwks,
        agentsig::jwk::jwks_document(&[key.verifying_key()]).to_string(),
    )
    .expect("jwks");
    let body = br#"{"name":"planner"}"#;
    let f = agentsig::httpsig::static_response_fields(
        body,
        "application/json",
        &[(&key, "k1".to_owned())],
        1_700_000_000,
        None,
    )
    .expect("fields");
    let mut saved = saved_http(&f, body);
    saved.splice(0..15, b"HTTP/1.1 404 Not Found".iter().copied());
    std::fs::write(dir.0.join("saved.http"), &saved).expect("saved");
    let o = Command::new(env!("CARGO_BIN_EXE_agentsig"))
        .args(["verify", "--response", "saved.http", "--jwks"])
        .arg(&jwks)
        .arg("--json")
        .current_dir(&dir.0)
        .output()
        .expect("run");
    let out = text(&o);
    assert_eq!(code(&o), 1, "{out}");
    assert!(out.contains("response.malformed"), "{out}");
}
