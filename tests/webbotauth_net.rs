//! Web Bot Auth key discovery over loopback HTTPS (section 5.5 of
//! draft-ietf-webbotauth-httpsig-protocol-00): the directory is fetched
//! through the SSRF-guarded fetcher, its response signature checked, and
//! every way a directory can be wrong refused with its own code.
#![cfg(feature = "net")]

mod net_support;

use agentsig::httpsig::Message;
use agentsig::net::webbotauth::DirectoryClient;
use agentsig::net::{FetchPolicy, Fetcher};
use agentsig::webbotauth::directory::{directory_body, directory_headers};
use agentsig::webbotauth::{
    sign_message, KeyDirectory, Policy, SignOptions, Status, WebBotAuthVerifier, MEDIA_TYPE,
    WELL_KNOWN_PATH,
};
use agentsig::{Algorithm, SigningKey};
use net_support::{loopback, Ca, Resp, Server};
use std::sync::Arc;
use std::time::Duration;

struct Env {
    ca: Ca,
    srv: Server,
}

fn env() -> Env {
    let ca = Ca::new();
    let srv = Server::start(&ca, &["agent.example"]);
    Env { ca, srv }
}

fn client(e: &Env) -> DirectoryClient {
    let f = Fetcher::with_policy(
        FetchPolicy::default()
            .extra_root_pem(e.ca.pem())
            .allow_private_networks(true)
            .pin("agent.example", loopback())
            .timeouts(Duration::from_secs(2), Duration::from_secs(2)),
    )
    .unwrap();
    DirectoryClient::new(Arc::new(f))
}

fn now() -> i64 {
    agentsig::clock::Clock::now(&agentsig::clock::SystemClock)
}

/// The directory for `keys`, signed for the server's authority.
fn signed_dir(e: &Env, keys: &[&SigningKey]) -> Resp {
    let vks: Vec<_> = keys.iter().map(|k| k.verifying_key()).collect();
    let body = directory_body(&vks);
    let authority = format!("agent.example:{}", e.srv.port);
    let mut r = Resp::ok(MEDIA_TYPE, body.clone());
    r.headers.clear();
    for (n, v) in directory_headers(&body, &authority, keys, now() - 10, now() + 3600).unwrap() {
        r = r.header(&n.to_ascii_lowercase(), &v);
    }
    r
}

fn signed_request(e: &Env, k: &SigningKey) -> Message {
    let mut m =
        Message::parse(b"GET /page HTTP/1.1\r\nHost: site.example\r\n\r\n", "https").unwrap();
    let agent = e.srv.url("agent.example", "");
    sign_message(&mut m, k, &SignOptions::new(agent, now())).unwrap();
    m
}

fn verify(c: &DirectoryClient, m: &Message) -> agentsig::webbotauth::Report {
    WebBotAuthVerifier::new(Policy::default()).verify(m, c, now())
}

fn code(r: &agentsig::webbotauth::Report) -> &'static str {
    r.first_error().map_or("none", |e| e.code())
}

#[test]
fn fetched_signed_directory_verifies_and_is_cached() {
    let e = env();
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    e.srv.route(WELL_KNOWN_PATH, signed_dir(&e, &[&k]));
    let c = client(&e);
    let m = signed_request(&e, &k);
    let r = verify(&c, &m);
    assert_eq!(r.status(), Status::Verified, "{:?}", r.first_error());
    let v = r.verified().unwrap();
    assert_eq!(v.agent, e.srv.url("agent.example", ""));
    assert_eq!(v.key_set_url, e.srv.url("agent.example", WELL_KNOWN_PATH));
    // Cache-Control: max-age=86400: the second verification asks nobody.
    let r = verify(&c, &signed_request(&e, &k));
    assert_eq!(r.status(), Status::Verified);
    assert_eq!(e.srv.hit_count(WELL_KNOWN_PATH), 1);
    // The directory proof was checked.
    let url =
        agentsig::webbotauth::resolve_agent_url(&e.srv.url("agent.example", ""), None).unwrap();
    assert_eq!(c.key_set(&url).unwrap().proven_by, ["binding0"]);
}

/// Rotation by overlap (section 5.5.2): the directory lists old and new;
/// requests signed by either verify; once the old key is removed, its
/// requests no longer do.
#[test]
fn key_rotation_by_overlap() {
    let e = env();
    let old = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let new = SigningKey::generate(Algorithm::Ed25519).unwrap();
    e.srv.route(
        WELL_KNOWN_PATH,
        signed_dir(&e, &[&new, &old]).header("cache-control", "no-store"),
    );
    let c = client(&e);
    assert_eq!(
        verify(&c, &signed_request(&e, &old)).status(),
        Status::Verified
    );
    assert_eq!(
        verify(&c, &signed_request(&e, &new)).status(),
        Status::Verified
    );
    e.srv.route(
        WELL_KNOWN_PATH,
        signed_dir(&e, &[&new]).header("cache-control", "no-store"),
    );
    assert_eq!(
        verify(&c, &signed_request(&e, &new)).status(),
        Status::Verified
    );
    let r = verify(&c, &signed_request(&e, &old));
    assert_eq!(code(&r), "unknown-key");
    // The agent's directory vouches for no key of it: no trusted key, not
    // a signature that does not match (docs/report.md).
    let rep = r.to_report("http verify", None);
    assert_eq!(rep.signatures[0].verdict, "no-trusted-key");
    assert_eq!(rep.verdict, agentsig::report::Verdict::NotVerified);
    // A signature changed after signing: the agent's key was tried and it
    // does not match: `invalid`.
    let mut m = signed_request(&e, &new);
    let sig = m
        .headers
        .iter_mut()
        .find(|f| f.name == "signature")
        .expect("a Signature field");
    let i = sig.value.len() / 2;
    sig.value[i] = if sig.value[i] == b'A' { b'B' } else { b'A' };
    let r = verify(&c, &m);
    assert_eq!(code(&r), "bad-signature");
    let rep = r.to_report("http verify", None);
    assert_eq!(rep.signatures[0].verdict, "invalid");
    assert_eq!(rep.verdict, agentsig::report::Verdict::NotVerified);
    // Verified later than it may be (an hour past `expires`): policy
    // refuses it before any cryptography: `refused`.
    let r = WebBotAuthVerifier::new(Policy::default()).verify(
        &signed_request(&e, &new),
        &c,
        now() + 7 * 24 * 3600,
    );
    assert_eq!(code(&r), "expired");
    assert_eq!(
        r.to_report("http verify", None).signatures[0].verdict,
        "refused"
    );
}

#[test]
fn hostile_directories_each_have_their_code() {
    let e = env();
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let other = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let body = directory_body(&[k.verifying_key()]);
    let cases: Vec<(&str, Resp)> = vec![
        (
            "directory-redirect",
            Resp::redirect(&e.srv.url("agent.example", "/elsewhere")),
        ),
        (
            "directory-too-large",
            Resp::ok(MEDIA_TYPE, vec![b' '; 100 * 1024]),
        ),
        (
            "directory-timeout",
            Resp::ok(MEDIA_TYPE, body.clone()).trickle(Duration::from_millis(200)),
        ),
        ("directory-media-type", Resp::ok("text/html", body.clone())),
        (
            "directory-malformed",
            Resp::ok(MEDIA_TYPE, b"{\"keys\":1}".to_vec()),
        ),
        (
            "directory-kid-mismatch",
            Resp::ok(
                MEDIA_TYPE,
                serde_json::json!({"keys": [{"kty": "OKP", "crv": "Ed25519",
                    "kid": other.verifying_key().thumbprint(),
                    "x": k.verifying_key().to_jwk().x.unwrap()}]})
                .to_string(),
            ),
        ),
        ("directory-status", {
            let mut r = Resp::ok(MEDIA_TYPE, body.clone());
            r.status = 503;
            r
        }),
        ("directory-signature-invalid", {
            // Signed for another authority.
            let mut r = Resp::ok(MEDIA_TYPE, body.clone());
            r.headers.clear();
            for (n, v) in
                directory_headers(&body, "evil.example", &[&k], now() - 10, now() + 60).unwrap()
            {
                r = r.header(&n.to_ascii_lowercase(), &v);
            }
            r
        }),
    ];
    e.srv
        .route("/elsewhere", Resp::ok(MEDIA_TYPE, body.clone()));
    for (want, resp) in cases {
        e.srv
            .route(WELL_KNOWN_PATH, resp.header("cache-control", "no-store"));
        let r = verify(&client(&e), &signed_request(&e, &k));
        assert_eq!(r.status(), Status::Invalid, "{want}");
        assert_eq!(code(&r), want, "{:?}", r.first_error());
        // The report says what it was (docs/report.md): a key set that
        // could not be obtained leaves the signature not checked and the
        // request unavailable; one obtained but unusable vouches for no
        // key. Neither is a signature that does not match (`invalid`).
        let rep = r.to_report("http verify", None);
        let fetched = !matches!(
            want,
            "directory-redirect" | "directory-too-large" | "directory-timeout" | "directory-status"
        );
        let (signature, verdict) = if fetched {
            ("no-trusted-key", agentsig::report::Verdict::NotVerified)
        } else {
            ("not-checked", agentsig::report::Verdict::Unavailable)
        };
        assert_eq!(rep.verdict, verdict, "{want}");
        assert_eq!(rep.signatures.len(), 1, "{want}");
        assert_eq!(rep.signatures[0].verdict, signature, "{want}");
        assert_eq!(
            rep.error.as_ref().map(|e| e.code.as_str()),
            Some(want),
            "{want}"
        );
    }
    // Discovery does not follow redirects: the redirect's target was never
    // requested (it would have answered a good directory).
    assert_eq!(e.srv.hit_count("/elsewhere"), 0);
}

#[test]
fn required_proof_and_failed_refetch_keeps_the_good_set() {
    let e = env();
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let body = directory_body(&[k.verifying_key()]);
    e.srv.route(
        WELL_KNOWN_PATH,
        Resp::ok(MEDIA_TYPE, body.clone()).header("cache-control", "no-store"),
    );
    let strict = client(&e).require_proof(true);
    assert_eq!(
        code(&verify(&strict, &signed_request(&e, &k))),
        "directory-signature-missing"
    );

    let c = client(&e);
    assert_eq!(
        verify(&c, &signed_request(&e, &k)).status(),
        Status::Verified
    );
    // The directory now fails; the last good set still verifies.
    let mut down = Resp::ok("text/plain", b"down".to_vec());
    down.status = 500;
    e.srv
        .route(WELL_KNOWN_PATH, down.header("cache-control", "no-store"));
    let r = verify(&c, &signed_request(&e, &k));
    assert_eq!(r.status(), Status::Verified, "{:?}", r.first_error());
    assert_eq!(e.srv.hit_count(WELL_KNOWN_PATH), 3);
}

/// With `require_proof`, every key used must have signed the directory
/// itself (Appendix B.1): a directory listing two keys and signed by one
/// vouches for that one only; the other is withheld, and a request it
/// signed fails with `directory-key-not-proven`. Without `require_proof`
/// both keys verify (section 5.5: a fetched key MAY be used without a
/// proof).
#[test]
fn required_proof_is_required_of_every_key_used() {
    let e = env();
    let signer = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let other = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let body = directory_body(&[signer.verifying_key(), other.verifying_key()]);
    let authority = format!("agent.example:{}", e.srv.port);
    let mut r = Resp::ok(MEDIA_TYPE, body.clone());
    r.headers.clear();
    for (n, v) in
        directory_headers(&body, &authority, &[&signer], now() - 10, now() + 3600).unwrap()
    {
        r = r.header(&n.to_ascii_lowercase(), &v);
    }
    e.srv.route(WELL_KNOWN_PATH, r);
    let strict = client(&e).require_proof(true);
    let ok = verify(&strict, &signed_request(&e, &signer));
    assert_eq!(ok.status(), Status::Verified, "{:?}", ok.first_error());
    let refused = verify(&strict, &signed_request(&e, &other));
    assert_eq!(code(&refused), "directory-key-not-proven");
    let url =
        agentsig::webbotauth::resolve_agent_url(&e.srv.url("agent.example", ""), None).unwrap();
    let set = strict.key_set(&url).unwrap();
    assert_eq!(set.keys.len(), 1);
    assert_eq!(set.withheld, [other.verifying_key().thumbprint()]);
    let lax = client(&e);
    assert_eq!(
        verify(&lax, &signed_request(&e, &other)).status(),
        Status::Verified
    );
}

/// The SSRF guard applies: without the private-network opt-in a loopback
/// directory is refused before connecting.
#[test]
fn ssrf_guard_applies_to_directories() {
    let e = env();
    let k = SigningKey::generate(Algorithm::Ed25519).unwrap();
    let f = Fetcher::with_policy(
        FetchPolicy::default()
            .extra_root_pem(e.ca.pem())
            .pin("agent.example", loopback()),
    )
    .unwrap();
    let c = DirectoryClient::new(Arc::new(f));
    let r = verify(&c, &signed_request(&e, &k));
    assert_eq!(code(&r), "directory-refused");
    assert_eq!(e.srv.accepted(), 0);
}
