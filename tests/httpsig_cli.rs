//! The `agentsig http`, `agentsig digest` and static-publishing commands.

#[path = "tmp_support/mod.rs"]
mod tmp_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const MSG: &str = "tests/vectors/rfc9421/messages";
const KEYS: &str = "keys/rfc9421";

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agentsig"))
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap()
}

/// The test's directory, removed when it is dropped.
fn tmpdir(name: &str) -> tmp_support::TempDir {
    tmp_support::TempDir::new(&format!("httpsig-{name}"))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn rfc_response_verifies_with_injected_clock() {
    let o = run(&[
        "http",
        "verify",
        &format!("{MSG}/b2.4-sig-b24.http"),
        "--key",
        &format!("{KEYS}/test-key-ecc-p256.pub.pem"),
        "--now",
        "1618884473",
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stdout));
    // With today's clock the 2021 signature is too old.
    let o = run(&[
        "http",
        "verify",
        &format!("{MSG}/b2.4-sig-b24.http"),
        "--json",
        "--key",
        &format!("{KEYS}/test-key-ecc-p256.pub.pem"),
    ]);
    assert_eq!(code(&o), 1);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["signatures"][0]["reason"]["code"], "too-old");
}

#[test]
fn request_bound_response_needs_the_request() {
    let args = |with_req: bool| {
        let mut a = vec![
            "http".to_owned(),
            "verify".into(),
            format!("{MSG}/s2.4-response-reqres1.http"),
            "--key".into(),
            format!("{KEYS}/test-key-ecc-p256.pub.pem"),
            "--now".into(),
            "1618884479".into(),
            "--require-none".into(),
        ];
        if with_req {
            a.push("--request".into());
            a.push(format!("{MSG}/s2.4-request.http"));
        }
        a
    };
    let o = bin().args(args(true)).output().unwrap();
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stdout));
    let o = bin().args(args(false)).output().unwrap();
    assert_eq!(code(&o), 1);
    assert!(String::from_utf8_lossy(&o.stdout).contains("no related request"));
}

#[test]
fn sign_then_verify_each_algorithm_and_tamper() {
    let d = tmpdir("sign");
    for (key, pubkey, alg) in [
        ("test-key-ecc-p256.pem", "test-key-ecc-p256.pub.pem", None),
        ("test-key-ed25519.pem", "test-key-ed25519.pub.pem", None),
        (
            "test-key-rsa-pss.pem",
            "test-key-rsa-pss.pub.pem",
            Some("rsa-pss-sha512"),
        ),
        (
            "test-key-rsa.pem",
            "test-key-rsa.pub.pem",
            Some("rsa-v1_5-sha256"),
        ),
        (
            "test-shared-secret.b64",
            "test-shared-secret.b64",
            Some("hmac-sha256"),
        ),
    ] {
        let out = d.join(format!("{key}.http"));
        let mut a = vec![
            "http".to_owned(),
            "sign".into(),
            format!("{MSG}/test-request.http"),
            "--key".into(),
            format!("{KEYS}/{key}"),
            "--out".into(),
            s(&out).into(),
            "-c".into(),
            "@method".into(),
            "-c".into(),
            "@authority".into(),
            "-c".into(),
            "\"@query-param\";name=\"Pet\"".into(),
            "-c".into(),
            "content-digest".into(),
            "--nonce".into(),
            "n-1".into(),
            "--tag".into(),
            "t".into(),
        ];
        if let Some(al) = alg {
            a.push("--alg".into());
            a.push(al.into());
        }
        let o = bin().args(&a).output().unwrap();
        assert_eq!(code(&o), 0, "{key}: {}", String::from_utf8_lossy(&o.stderr));
        let mut v = vec![
            "http".to_owned(),
            "verify".into(),
            s(&out).into(),
            "--key".into(),
            format!("{KEYS}/{pubkey}"),
            "--tag".into(),
            "t".into(),
            "--authority".into(),
            "example.com".into(),
        ];
        if let Some(al) = alg {
            v.push("--alg".into());
            v.push(al.into());
        }
        let o = bin().args(&v).output().unwrap();
        assert_eq!(code(&o), 0, "{key}: {}", String::from_utf8_lossy(&o.stdout));
        // Tampering with a covered query parameter breaks it.
        let text = std::fs::read_to_string(&out)
            .unwrap()
            .replace("Pet=dog", "Pet=cat");
        let bad = d.join(format!("{key}.bad.http"));
        std::fs::write(&bad, text).unwrap();
        v[2] = s(&bad).into();
        let o = bin().args(&v).output().unwrap();
        assert_eq!(code(&o), 1, "{key}");
    }
}

#[test]
fn unreadable_message_is_usage_error_and_malformed_signature_fails() {
    let d = tmpdir("bad");
    let p = d.join("junk.http");
    std::fs::write(&p, "not http at all").unwrap();
    let o = run(&[
        "http",
        "verify",
        s(&p),
        "--key",
        &format!("{KEYS}/test-key-ed25519.pub.pem"),
    ]);
    assert_eq!(code(&o), 2);
    let text = std::fs::read_to_string(format!("{MSG}/b2.6-sig-b26.http")).unwrap();
    let broken = text.replace("Signature-Input: sig-b26=(", "Signature-Input: sig-b26=((");
    let p = d.join("broken.http");
    std::fs::write(&p, broken).unwrap();
    let o = run(&[
        "http",
        "verify",
        s(&p),
        "--key",
        &format!("{KEYS}/test-key-ed25519.pub.pem"),
        "--authority",
        "example.com",
        "--json",
    ]);
    assert_eq!(code(&o), 1);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["verdict"], "not-verified");
    assert_eq!(v["error"]["code"], "header");
    assert!(v["error"]["message"]
        .as_str()
        .unwrap()
        .contains("Signature-Input"));
}

#[test]
fn accept_signature_is_honoured() {
    let d = tmpdir("accept");
    let req = d.join("req.http");
    std::fs::write(
        &req,
        "GET /agent.json HTTP/1.1\r\nHost: example.com\r\nAccept-Signature: sig1=(\"@status\" \"content-type\" \"content-digest\" \"@path\";req);created;keyid=\"test-key-ecc-p256\";tag=\"app-123\"\r\n\r\n",
    )
    .unwrap();
    let res = d.join("res.http");
    std::fs::write(
        &res,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
    )
    .unwrap();
    let out = d.join("signed.http");
    let o = run(&[
        "http",
        "sign",
        s(&res),
        "--key",
        &format!("{KEYS}/test-key-ecc-p256.pem"),
        "--keyid",
        "test-key-ecc-p256",
        "--request",
        s(&req),
        "--accept-signature",
        "--add-content-digest",
        "sha-256",
        "--out",
        s(&out),
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let signed = std::fs::read_to_string(&out).unwrap();
    assert!(signed.contains("Signature-Input: sig1=(\"@status\" \"content-type\" \"content-digest\" \"@path\";req);created="));
    assert!(signed.contains(";keyid=\"test-key-ecc-p256\";tag=\"app-123\""));
    let o = run(&[
        "http",
        "verify",
        s(&out),
        "--key",
        &format!("{KEYS}/test-key-ecc-p256.pub.pem"),
        "--request",
        s(&req),
        "--tag",
        "app-123",
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stdout));
    // A request for a key we do not hold is refused, not silently changed.
    std::fs::write(
        &req,
        "GET /agent.json HTTP/1.1\r\nHost: example.com\r\nAccept-Signature: sig1=(\"@status\");keyid=\"other\"\r\n\r\n",
    )
    .unwrap();
    let o = run(&[
        "http",
        "sign",
        s(&res),
        "--key",
        &format!("{KEYS}/test-key-ecc-p256.pem"),
        "--keyid",
        "test-key-ecc-p256",
        "--request",
        s(&req),
        "--accept-signature",
    ]);
    assert_eq!(code(&o), 1);
}

#[test]
fn digest_command_prints_content_digest() {
    let d = tmpdir("digest");
    let p = d.join("body");
    std::fs::write(&p, "{\"hello\": \"world\"}").unwrap();
    let o = run(&["digest", s(&p), "--alg", "sha-256", "--alg", "sha-512"]);
    assert_eq!(code(&o), 0);
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        "Content-Digest: sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:, sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:\n"
    );
    assert_eq!(code(&run(&["digest", s(&p), "--alg", "md5"])), 2);
}

#[test]
fn static_publishing_headers_verify_as_a_saved_response() {
    let d = tmpdir("static");
    let desc = d.join("agent.json");
    std::fs::write(&desc, "{\"name\":\"demo\",\"version\":\"1\"}").unwrap();
    let o = run(&[
        "sign",
        s(&desc),
        "--key",
        &format!("{KEYS}/test-key-ecc-p256.pem"),
        "--kid",
        "test-key-ecc-p256",
        "--content-type",
        "application/agent+json",
        "--expires-in",
        "30d",
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let headers = std::fs::read_to_string(d.join("agent.json.headers")).unwrap();
    assert!(headers.starts_with("Content-Type: application/agent+json\nContent-Digest: sha-256=:"));
    assert!(headers.contains(
        "Signature-Input: sig1=(\"@status\" \"content-type\" \"content-digest\");created="
    ));
    // Parameters in RFC 9421 section 2.3's order (httpsig::PARAM_ORDER).
    let input = headers
        .lines()
        .find(|l| l.starts_with("Signature-Input:"))
        .unwrap();
    assert!(input.contains(";created="), "{input}");
    assert!(input.contains(";expires="), "{input}");
    assert!(input.find(";created=") < input.find(";expires="), "{input}");
    assert!(
        input.ends_with(";alg=\"ecdsa-p256-sha256\";keyid=\"test-key-ecc-p256\""),
        "{input}"
    );
    // What `curl -i` would save from a host that sends those fields.
    let body = std::fs::read(&desc).unwrap();
    let mut saved = b"HTTP/2 200 \r\nserver: test\r\n".to_vec();
    for l in headers.lines() {
        saved.extend_from_slice(l.as_bytes());
        saved.extend_from_slice(b"\r\n");
    }
    saved.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes());
    saved.extend_from_slice(&body);
    let resp = d.join("saved.http");
    std::fs::write(&resp, &saved).unwrap();
    let o = run(&[
        "verify",
        "--response",
        s(&resp),
        "--key",
        &format!("{KEYS}/test-key-ecc-p256.pub.pem"),
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stdout));
    // A host that rewrites the media type (e.g. adds a charset) breaks the signature.
    let bad = String::from_utf8(saved.clone()).unwrap().replace(
        "Content-Type: application/agent+json",
        "Content-Type: application/agent+json; charset=utf-8",
    );
    std::fs::write(&resp, bad).unwrap();
    let o = run(&[
        "verify",
        "--response",
        s(&resp),
        "--key",
        &format!("{KEYS}/test-key-ecc-p256.pub.pem"),
    ]);
    assert_eq!(code(&o), 1);
    // A 30-day expiry is enforced: 31 days later it fails.
    std::fs::write(&resp, &saved).unwrap();
    let later = (std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 31 * 86400)
        .to_string();
    let o = run(&[
        "verify",
        "--response",
        s(&resp),
        "--key",
        &format!("{KEYS}/test-key-ecc-p256.pub.pem"),
        "--now",
        &later,
    ]);
    assert_eq!(code(&o), 1);
    assert!(String::from_utf8_lossy(&o.stdout).contains("expired"));
}

/// Sign `agent.json` (JWS + response fields) and save the response a host
/// sending those fields would give, as `curl -i` writes it.
fn signed_site(name: &str) -> (tmp_support::TempDir, PathBuf, PathBuf) {
    let d = tmpdir(name);
    let desc = d.join("agent.json");
    std::fs::write(&desc, "{\"name\":\"demo\",\"version\":\"1\"}").unwrap();
    let o = run(&[
        "sign",
        s(&desc),
        "--key",
        &format!("{KEYS}/test-key-ecc-p256.pem"),
        "--kid",
        "test-key-ecc-p256",
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let headers = std::fs::read_to_string(d.join("agent.json.headers")).unwrap();
    let body = std::fs::read(&desc).unwrap();
    let mut saved = b"HTTP/1.1 200 OK\r\n".to_vec();
    for l in headers.lines() {
        saved.extend_from_slice(l.as_bytes());
        saved.extend_from_slice(b"\r\n");
    }
    saved.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes());
    saved.extend_from_slice(&body);
    let resp = d.join("saved.http");
    std::fs::write(&resp, &saved).unwrap();
    (d, desc, resp)
}

/// `verify FILE --response saved.http` must check FILE.
#[test]
fn verify_response_checks_the_named_file() {
    let (d, desc, resp) = signed_site("resp-file");
    let pubkey = format!("{KEYS}/test-key-ecc-p256.pub.pem");
    // Good: body = FILE, JWS beside FILE verifies; the report says all three were checked.
    let o = run(&["verify", s(&desc), "--response", s(&resp), "--key", &pubkey]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(code(&o), 0, "{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("response body is the bytes of"), "{out}");
    assert!(out.contains("detached JWS"), "{out}");
    // A tampered FILE: the response still verifies, the verdict must not.
    std::fs::write(&desc, "{\"name\":\"evil\",\"version\":\"1\"}").unwrap();
    let o = run(&["verify", s(&desc), "--response", s(&resp), "--key", &pubkey]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(code(&o), 1, "{out}");
    assert!(out.contains("NOT verified"), "{out}");
    assert!(out.contains("DIFFERS from the response body"), "{out}");
    let o = run(&[
        "verify",
        s(&desc),
        "--response",
        s(&resp),
        "--key",
        &pubkey,
        "--json",
    ]);
    assert_eq!(code(&o), 1);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["verified"], false);
    assert_eq!(j["verdict"], "not-verified");
    assert_eq!(
        j["signatures"][0]["verdict"], "valid",
        "the response signature itself verified"
    );
    let body = j["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["code"] == "response.body-matches-file")
        .expect("body check");
    assert_eq!(body["passed"], false);
    // Same bytes as the body but a JWS that does not verify: fails on the JWS.
    std::fs::write(&desc, "{\"name\":\"demo\",\"version\":\"1\"}").unwrap();
    let jws = std::fs::read_to_string(d.join("agent.json.jws")).unwrap();
    let mut broken: Vec<char> = jws.trim_end().chars().collect();
    let i = jws.rfind('.').unwrap() + 5;
    broken[i] = if broken[i] == 'A' { 'B' } else { 'A' };
    let broken: String = broken.into_iter().collect();
    std::fs::write(d.join("agent.json.jws"), broken).unwrap();
    let o = run(&["verify", s(&desc), "--response", s(&resp), "--key", &pubkey]);
    assert_eq!(code(&o), 1, "{}", String::from_utf8_lossy(&o.stdout));
    assert!(String::from_utf8_lossy(&o.stdout).contains("failed: detached JWS"));
    // A missing FILE is a usage error, not a pass.
    let o = run(&[
        "verify",
        s(&d.join("missing.json")),
        "--response",
        s(&resp),
        "--key",
        &pubkey,
    ]);
    assert_eq!(code(&o), 2);
    // Without FILE the response alone is verified, and the report says so.
    let o = run(&["verify", "--response", s(&resp), "--key", &pubkey]);
    assert_eq!(code(&o), 0);
    assert!(String::from_utf8_lossy(&o.stdout).contains("no descriptor file was compared"));
}

/// Signing a response without Content-Digest suggests
/// --add-content-digest; the verify text shows times as RFC 3339.
#[test]
fn sign_without_content_digest_suggests_the_option() {
    let d = tmpdir("nodigest");
    let r = d.join("r.http");
    std::fs::write(
        &r,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{}",
    )
    .unwrap();
    let key = format!("{KEYS}/test-key-ecc-p256.pem");
    let o = run(&["http", "sign", s(&r), "--key", &key]);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("--add-content-digest"));
    let o = run(&[
        "http",
        "sign",
        s(&r),
        "--key",
        &key,
        "--add-content-digest",
        "sha-256",
        "--created",
        "1760000000",
    ]);
    assert_eq!(code(&o), 0);
    std::fs::write(&r, &o.stdout).unwrap();
    let o = run(&[
        "http",
        "verify",
        s(&r),
        "--key",
        &format!("{KEYS}/test-key-ecc-p256.pub.pem"),
        "--now",
        "1760000001",
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stdout));
    assert!(String::from_utf8_lossy(&o.stdout).contains("created 2025-10-09T08:53:20Z"));
}

/// No Rust Debug text (`Some("…")`), and the same situation
/// gets the same words in the JWS and the RFC 9421 report.
#[test]
fn no_trusted_key_same_words_in_jws_and_rfc9421() {
    let (d, desc, resp) = signed_site("same-words");
    let o = run(&["keygen", "--out", s(&d.join("other")), "--kid", "other"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let jwks = d.join("other.jwks.json");
    let want = "no trusted key has kid \"test-key-ecc-p256\"";
    let o = run(&[
        "http",
        "verify",
        s(&resp),
        "--jwks",
        s(&jwks),
        "--no-max-age",
    ]);
    assert_eq!(code(&o), 1);
    let http = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(http.contains(want), "{http}");
    assert!(!http.contains("Some("), "{http}");
    let o = run(&["verify", s(&desc), "--jwks", s(&jwks)]);
    assert_eq!(code(&o), 1);
    let jws = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(jws.contains(want), "{jws}");
}

/// The order n of P-256 (SEC 2 section 2.4.2), big-endian.
const P256_N: &str = "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551";

/// `(r, n - s)` from an ECDSA `(r, s)`: the other signature of the pair.
fn malleate(sig: &[u8], n_hex: &str) -> Vec<u8> {
    let n = hex::decode(n_hex).unwrap();
    let half = sig.len() / 2;
    let mut out = sig[..half].to_vec();
    let mut low = vec![0u8; half];
    let mut borrow = 0i16;
    for i in (0..half).rev() {
        let mut d = i16::from(n[i]) - i16::from(sig[half + i]) - borrow;
        borrow = 0;
        if d < 0 {
            d += 256;
            borrow = 1;
        }
        low[i] = d as u8;
    }
    out.extend_from_slice(&low);
    out
}

/// `--strict-low-s` on `http verify` (and `verify --response`, which shares
/// its path): the high-S one of the pair (r, s) / (r, n - s) made from the
/// RFC 9421 B.2.4 signature verifies by default and is refused with the flag;
/// the low-S one verifies either way.
#[test]
fn strict_low_s_flag_refuses_the_high_s_signature() {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    let raw = std::fs::read_to_string(format!("{MSG}/b2.4-sig-b24.http")).unwrap();
    let orig =
        "wNmSUAhwb5LxtOtOpNa6W5xj067m5hFrj0XQ4fvpaCLx0NKocgPquLgyahnzDnDAUy5eCdlYUEkLIj+32oiasw==";
    assert!(raw.contains(orig));
    let sig = b64.decode(orig).unwrap();
    let other = malleate(&sig, P256_N);
    // s is high when it is above n/2, i.e. when it is greater than n - s.
    let (high, low) = if sig[32..] > other[32..] {
        (sig, other)
    } else {
        (other, sig)
    };
    let d = tmpdir("lows");
    for (name, sigv, strict_code) in [("high", &high, 1), ("low", &low, 0)] {
        let f = d.join(format!("{name}.http"));
        std::fs::write(&f, raw.replace(orig, &b64.encode(sigv))).unwrap();
        let key = format!("{KEYS}/test-key-ecc-p256.pub.pem");
        let base = [
            "http",
            "verify",
            s(&f),
            "--key",
            &key,
            "--now",
            "1618884473",
        ];
        let o = run(&base);
        assert_eq!(
            code(&o),
            0,
            "{name}: {}",
            String::from_utf8_lossy(&o.stdout)
        );
        let o = run(&[&base[..], &["--strict-low-s", "--json"]].concat());
        assert_eq!(
            code(&o),
            strict_code,
            "{name}: {}",
            String::from_utf8_lossy(&o.stdout)
        );
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let want = if strict_code == 0 { "valid" } else { "refused" };
        assert_eq!(v["signatures"][0]["verdict"], want, "{v}");
        if strict_code == 1 {
            assert_eq!(v["signatures"][0]["reason"]["code"], "ecdsa-high-s", "{v}");
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// RFC 9112 section 6.3: a request without Content-Length or
/// Transfer-Encoding has no body. A second request appended to a signed GET
/// is not taken as its content: `http verify` refuses the input (exit 2)
/// instead of verifying the first request; the GET alone verifies.
#[test]
fn request_smuggled_after_a_signed_get_is_refused() {
    let d = tmpdir("smuggle");
    let get = d.join("get.http");
    std::fs::write(&get, "GET /tasks HTTP/1.1\r\nHost: agent.example\r\n\r\n").unwrap();
    let signed = d.join("signed.http");
    let o = run(&[
        "http",
        "sign",
        s(&get),
        "--key",
        &format!("{KEYS}/test-key-ed25519.pem"),
        "--keyid",
        "k",
        "--out",
        s(&signed),
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let key = format!("{KEYS}/test-key-ed25519.pub.pem");
    let site = ["--authority", "agent.example"];
    let o = run(&[
        "http",
        "verify",
        s(&signed),
        "--key",
        &key,
        site[0],
        site[1],
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let mut bytes = std::fs::read(&signed).unwrap();
    bytes.extend_from_slice(b"DELETE /tasks/7 HTTP/1.1\r\nHost: agent.example\r\n\r\n");
    let smuggled = d.join("smuggled.http");
    std::fs::write(&smuggled, &bytes).unwrap();
    let o = run(&[
        "http",
        "verify",
        s(&smuggled),
        "--key",
        &key,
        site[0],
        site[1],
        "--json",
    ]);
    assert_eq!(code(&o), 2, "{}", String::from_utf8_lossy(&o.stdout));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("bytes after the end of the message"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let _ = std::fs::remove_dir_all(&d);
}
