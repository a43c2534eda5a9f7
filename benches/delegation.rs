//! Audit of a three-hop bundle against the raw cost of its three ES256
//! signature verifications. Run: cargo bench --bench delegation

use agentsig::clock::FixedClock;
use agentsig::delegation::mint::{self, ActorSpec, ExchangeRequest, MintRequest};
use agentsig::delegation::{AuditPolicy, ScopePolicy};
use agentsig::jwt::JwtPolicy;
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::{Algorithm, SigningKey};
use criterion::{black_box, criterion_group, criterion_main, Criterion};

#[path = "../tests/b64_support/mod.rs"]
mod b64;

const AS: &str = "https://as.example.com";
const NOW: i64 = 1_760_000_000;

fn bundle(k: &SigningKey, keys: &StaticKeys) -> Vec<String> {
    let mut req = MintRequest::new(AS, "user@example.com", NOW, 3600);
    req.aud = vec!["https://agent-a.example.com".into()];
    req.scope = Some("calendar:read calendar:write mail:read".into());
    req.may_act = Some(ActorSpec::new("https://agent-a.example.com"));
    let t0 = mint::mint(&req, k).expect("mint");
    let ex = |s: &str, actor: &str, aud: &str, scope: &str, next: Option<&str>, at: i64| {
        mint::exchange(
            &ExchangeRequest {
                subject_token: s,
                actor: Some(ActorSpec::new(actor)),
                actor_token: None,
                iss: AS.into(),
                aud: vec![aud.into()],
                scope: Some(scope.into()),
                may_act: next.map(ActorSpec::new),
                ttl: 900,
                typ: "at+jwt".into(),
            },
            Verifier::builder(keys.clone())
                .clock(FixedClock(at))
                .build()
                .context(),
            &JwtPolicy::default(),
            &ScopePolicy::default(),
            k,
        )
        .expect("exchange")
        .token
    };
    let t1 = ex(
        &t0,
        "https://agent-a.example.com",
        "https://agent-b.example.com",
        "calendar:read mail:read",
        Some("https://agent-b.example.com"),
        NOW + 60,
    );
    let t2 = ex(
        &t1,
        "https://agent-b.example.com",
        "https://calendar.example.com",
        "calendar:read",
        None,
        NOW + 120,
    );
    vec![t0, t1, t2]
}

fn bench(c: &mut Criterion) {
    let k = SigningKey::generate(Algorithm::EcdsaP256Sha256).expect("keygen");
    let keys = StaticKeys::new().with(k.verifying_key().clone(), KeySource::Pinned);
    let toks = bundle(&k, &keys);
    let refs: Vec<&str> = toks.iter().map(String::as_str).collect();
    let verifier = Verifier::builder(keys)
        .clock(FixedClock(NOW + 200))
        .jwt(
            JwtPolicy::default()
                .issuers([AS])
                .audience("https://calendar.example.com")
                .expected_typ(["at+jwt"])
                .require_jti(true),
        )
        .audit(AuditPolicy::default())
        .build();
    assert!(verifier.audit_delegation(&refs).is_ok());

    // Raw cost: the three signatures over their signing inputs, nothing else.
    let raw: Vec<(Vec<u8>, Vec<u8>)> = toks
        .iter()
        .map(|t| {
            let i = t.rfind('.').expect("dot");
            (
                t.as_bytes()[..i].to_vec(),
                b64::decode(&t[i + 1..]).expect("sig"),
            )
        })
        .collect();
    let vk = k.verifying_key().clone();
    let mut g = c.benchmark_group("delegation");
    g.bench_function("raw_3x_es256_verify", |b| {
        b.iter(|| {
            for (si, sig) in &raw {
                vk.verify(black_box(si), black_box(sig)).expect("verify");
            }
        })
    });
    g.bench_function("jwt_verify_3_tokens", |b| {
        b.iter(|| {
            for t in &refs {
                verifier.verify_jwt(black_box(t)).ok();
            }
        })
    });
    g.bench_function("audit_3_hop_bundle", |b| {
        b.iter(|| verifier.audit_delegation(black_box(&refs)).is_ok())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
