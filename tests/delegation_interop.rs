//! Cross-implementation: bundles minted by PyJWT and joserfc audit in
//! agentsig, and tokens minted by agentsig verify in both. The Python side
//! is tests/interop/delegation_interop.py. A missing module is a skip
//! notice, unless AGENTSIG_REQUIRE_INTEROP=1 (CI), where it fails.

#[path = "tmp_support/mod.rs"]
mod tmp_support;

use agentsig::clock::{Clock, SystemClock};
use agentsig::delegation::mint::{self, ActorSpec, ExchangeRequest, MintRequest};
use agentsig::delegation::{ScopePolicy, Severity};
use agentsig::jwt::JwtPolicy;
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::{Algorithm, SigningKey};
use std::path::PathBuf;
use std::process::Command;

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/interop/delegation_interop.py"
);
const AS: &str = "https://as.example.com";
const CAL: &str = "https://calendar.example.com";

fn available(lib: &str) -> bool {
    let required = std::env::var("AGENTSIG_REQUIRE_INTEROP").is_ok_and(|v| v == "1");
    let st = Command::new("python3")
        .args([SCRIPT, "check", "--lib", lib])
        .output();
    let ok = matches!(&st, Ok(o) if o.status.success());
    if !ok {
        let msg = format!(
            "interop: python3 module for {lib} unavailable ({}); pip install \"PyJWT[crypto]\" joserfc",
            match &st { Ok(o) => String::from_utf8_lossy(&o.stderr).trim().to_string(), Err(e) => e.to_string() }
        );
        if required {
            panic!("{msg} (AGENTSIG_REQUIRE_INTEROP=1)");
        }
        eprintln!("SKIP {msg}");
    }
    ok
}

/// A key and its PEM files in a directory removed when the returned guard
/// is dropped.
fn setup(name: &str) -> (SigningKey, tmp_support::TempDir, PathBuf, PathBuf) {
    let k = SigningKey::generate(Algorithm::EcdsaP256Sha256)
        .unwrap()
        .with_kid("interop-1");
    let d = tmp_support::TempDir::new(&format!("interop-{name}"));
    let priv_pem = d.join("k.pem");
    let pub_pem = d.join("k.pub.pem");
    std::fs::write(&priv_pem, k.pkcs8_pem().unwrap().as_bytes()).unwrap();
    std::fs::write(&pub_pem, k.verifying_key().to_spki_pem().unwrap()).unwrap();
    (k, d, priv_pem, pub_pem)
}

/// The JWT policy of the audit: issuer AS, audience CAL, `typ` at+jwt,
/// `jti` required.
fn jwt_policy() -> JwtPolicy {
    JwtPolicy::default()
        .issuers([AS])
        .audience(CAL)
        .expected_typ(["at+jwt"])
        .require_jti(true)
}

#[test]
fn python_minted_bundles_audit_in_agentsig() {
    let (k, _dir, priv_pem, _) = setup("py-mint");
    let keys = StaticKeys::new().with(k.verifying_key().clone(), KeySource::Pinned);
    for lib in ["pyjwt", "joserfc"] {
        if !available(lib) {
            continue;
        }
        for widen in [false, true] {
            let mut args = vec![
                SCRIPT.to_string(),
                "mint-bundle".into(),
                "--lib".into(),
                lib.into(),
                "--key".into(),
                priv_pem.display().to_string(),
                "--kid".into(),
                "interop-1".into(),
            ];
            if widen {
                args.push("--widen".into());
            }
            let o = Command::new("python3").args(&args).output().unwrap();
            assert!(
                o.status.success(),
                "{lib}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            let text = String::from_utf8(o.stdout).unwrap();
            let toks: Vec<&str> = text.split_whitespace().collect();
            assert_eq!(toks.len(), 3);
            let v = Verifier::builder(keys.clone()).jwt(jwt_policy()).build();
            let r = v
                .audit_delegation(&toks)
                .unwrap_or_else(|e| e.into_report());
            let errs: Vec<&str> = r
                .checks
                .iter()
                .filter(|c| !c.passed && c.severity == Severity::Error)
                .map(|c| c.code)
                .collect();
            if widen {
                assert_eq!(errs, vec!["bundle.scope-widened"], "{lib}");
            } else {
                assert!(r.passed(), "{lib}: {errs:?}");
                assert_eq!(r.effective_scope.unwrap().to_claim(), "calendar:read");
            }
        }
    }
}

#[test]
fn agentsig_minted_tokens_verify_in_python() {
    let (k, _dir, _, pub_pem) = setup("rs-mint");
    let keys = StaticKeys::new().with(k.verifying_key().clone(), KeySource::Pinned);
    let now = SystemClock.now();
    let mut req = MintRequest::new(AS, "user@example.com", now, 3600);
    req.aud = vec!["https://agent-a.example.com".into()];
    req.scope = Some("calendar:read mail:read".into());
    req.may_act = Some(ActorSpec::new("https://agent-a.example.com"));
    let t0 = mint::mint(&req, &k).unwrap();
    let xv = Verifier::builder(keys)
        .clock(SystemClock)
        .jwt(JwtPolicy::default().issuers([AS]))
        .build();
    let t1 = mint::exchange(
        &ExchangeRequest {
            subject_token: &t0,
            actor: Some(ActorSpec::new("https://agent-a.example.com")),
            actor_token: None,
            iss: AS.into(),
            aud: vec![CAL.into()],
            scope: Some("calendar:read".into()),
            may_act: None,
            ttl: 600,
            typ: "at+jwt".into(),
        },
        xv.context(),
        xv.jwt_policy(),
        &ScopePolicy::default(),
        &k,
    )
    .unwrap();
    for lib in ["pyjwt", "joserfc"] {
        if !available(lib) {
            continue;
        }
        let o = Command::new("python3")
            .args([
                SCRIPT,
                "verify",
                "--lib",
                lib,
                "--pub",
                &pub_pem.display().to_string(),
                "--iss",
                AS,
                "--aud",
                CAL,
                &t1.token,
            ])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{lib}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let claims: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(claims["act"]["sub"], "https://agent-a.example.com", "{lib}");
        assert_eq!(claims["scope"], "calendar:read");
        // and a tampered token is refused there too
        let mut bad = t1.token.clone();
        bad.replace_range(bad.len() - 4.., "AAAA");
        let o = Command::new("python3")
            .args([
                SCRIPT,
                "verify",
                "--lib",
                lib,
                "--pub",
                &pub_pem.display().to_string(),
                "--iss",
                AS,
                "--aud",
                CAL,
                &bad,
            ])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{lib} accepted a tampered token");
    }
}
