//! Delegation audit: the RFC 8693 vectors, the synthetic single-token and
//! bundle cases, and one test per rule of checklist sections 1.7 B and C
//! that breaks exactly that rule and expects its own code.

mod delegation_support;
use delegation_support::*;

use agentsig::delegation::mint::{self, ActorSpec, ExchangeRequest, MintRequest};
use agentsig::delegation::{self, report, AuditPolicy, ScopeMode, ScopePolicy, Severity};
use agentsig::jwt::{self, JwtPolicy};
use agentsig::replay::MemoryReplayStore;
use agentsig::replay::ReplayStore;
use serde_json::{json, Value};
use std::sync::Arc;

fn hier() -> AuditPolicy {
    let mut p = policy();
    p.scope.mode = ScopeMode::Hierarchical;
    p
}

/// [`jwt_policy`] without an audience check.
fn jwt_any_audience() -> JwtPolicy {
    let mut jp = jwt_policy();
    jp.audience = None;
    jp
}

/// Audit one token's claims (audience not checked: not the point here).
fn single(claims: &Value) -> delegation::AuditReport {
    let mut jp = jwt_policy();
    jp.audience = jwt::audiences(claims.as_object().unwrap())
        .first()
        .map(|s| s.to_string());
    audit_claims_with(std::slice::from_ref(claims), &jp, &policy())
}

fn base_token() -> Value {
    json!({"iss": AS, "sub": "user@example.com", "aud": CAL, "iat": NOW - 10,
           "nbf": NOW - 10, "exp": NOW + 600, "jti": "s1", "scope": "a b"})
}

// ---------------------------------------------------------------- vectors

#[test]
fn rfc8693_examples_audit_as_single_tokens() {
    // Re-signed with a local key (the RFC's keys are not published); times
    // shifted so that the tokens are current.
    let v = vectors();
    for ex in v["examples"].as_array().unwrap() {
        let Some(c) = ex.get("claims") else { continue };
        let mut c = c.clone();
        c["iss"] = json!(AS);
        c["exp"] = json!(NOW + 100);
        if c.get("nbf").is_some() {
            c["nbf"] = json!(NOW - 100);
        }
        c["jti"] = json!(ex["id"]);
        c["scope"] = c.get("scope").cloned().unwrap_or(json!("status"));
        let r = single(&c);
        assert!(r.passed(), "{}: {:?}", ex["id"], errors(&r));
        if ex["id"] == "rfc8693-4.1-fig6-nested-actor" {
            assert!(r.failed_codes().contains(&"act.history-asserted"));
            assert_eq!(
                r.hops[0].current_actor().unwrap().sub,
                "https://service16.example.com"
            );
        }
    }
}

#[test]
fn synthetic_single_token_negatives() {
    let v = vectors();
    for case in v["synthetic_negative_cases_for_auditor"]
        .as_array()
        .unwrap()
    {
        let id = case["id"].as_str().unwrap();
        let expected = match id {
            "neg-cycle" => ("act.cycle", true),
            "neg-self-delegation" => ("act.actor-is-subject", false),
            "neg-exp-inside-act" => ("act.claim-not-meaningful", false),
            "neg-act-missing-sub" => ("act.sub-missing", true),
            "neg-act-not-object" => ("act.not-object", true),
            "neg-depth" | "neg-may_act-mismatch" => continue, // below
            other => panic!("unhandled vector {other}"),
        };
        let mut c = base_token();
        for (k, val) in case["claims"].as_object().unwrap() {
            c[k] = val.clone();
        }
        let r = single(&c);
        if expected.1 {
            assert_eq!(errors(&r), vec![expected.0], "{id}");
        } else {
            assert!(errors(&r).is_empty(), "{id}: {:?}", errors(&r));
            assert_eq!(warnings(&r), vec![expected.0], "{id}");
        }
    }
}

fn nested(n: usize) -> Value {
    let mut act = json!({"sub": "agent-0"});
    for i in 1..n {
        act = json!({"sub": format!("agent-{i}"), "act": act});
    }
    act
}

#[test]
fn depth_bound_default_configurable_and_hard_cap() {
    let mut c = base_token();
    c["act"] = nested(5);
    assert!(errors(&single(&c)).is_empty());
    c["act"] = nested(6);
    assert_eq!(errors(&single(&c)), vec!["act.depth-exceeded"]);
    let jp = jwt_any_audience();
    let mut p = policy();
    p.max_depth = 3;
    c["act"] = nested(4);
    assert_eq!(
        errors(&audit_claims_with(&[c.clone()], &jp, &p)),
        vec!["act.depth-exceeded"]
    );
    p.max_depth = 1000; // clamped to the hard cap of 10
    c["act"] = nested(10);
    assert!(errors(&audit_claims_with(&[c.clone()], &jp, &p)).is_empty());
    c["act"] = nested(11);
    assert_eq!(
        errors(&audit_claims_with(&[c.clone()], &jp, &p)),
        vec!["act.depth-exceeded"]
    );
    // The vector's 33 levels: refused by the JSON depth bound before any walk.
    c["act"] = nested(33);
    assert_eq!(errors(&audit_claims_with(&[c], &jp, &p)), vec!["jwt.json"]);
}

#[test]
fn may_act_mismatch_vector() {
    let v = vectors();
    let case = v["synthetic_negative_cases_for_auditor"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "neg-may_act-mismatch")
        .unwrap()
        .clone();
    let mut t0 = base_token();
    t0["aud"] = json!("mallory@example.net");
    t0["may_act"] = case["subject_claims"]["may_act"].clone();
    let mut t1 = base_token();
    t1["jti"] = json!("s2");
    t1["act"] = json!({"sub": case["actor_claims"]["sub"]});
    assert_eq!(
        errors(&audit_claims(&[t0, t1], &policy())),
        vec!["bundle.may-act-violation"]
    );
}

#[test]
fn valid_bundle_passes() {
    let r = audit_claims(&valid_bundle(), &policy());
    assert!(r.passed(), "{:?}", errors(&r));
    assert!(warnings(&r).is_empty(), "{:?}", warnings(&r));
    assert_eq!(
        r.effective_scope.as_ref().unwrap().to_claim(),
        "calendar:read"
    );
    assert_eq!(
        r.effective_window,
        (Some(1_760_000_120), Some(1_760_000_900))
    );
    assert_eq!(r.hops[1].scope_removed, vec!["calendar:write"]);
    assert_eq!(r.hops[2].scope_removed, vec!["mail:read"]);
    let text = report::text(&r);
    assert!(
        text.contains("PASS") && text.contains("removed: mail:read"),
        "{text}"
    );
    let j = report::json(&r);
    assert_eq!(j["result"], "pass");
    assert!(j["checks"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["code"].is_string()));
}

#[test]
fn invalid_bundle_vectors() {
    let v = vectors();
    for case in v["synthetic_bundle_cases"]["invalid"].as_array().unwrap() {
        let id = case["id"].as_str().unwrap();
        let want = match id {
            "scope-widening" => "bundle.scope-widened",
            "scope-missing" => "scope.missing",
            "exp-extends-parent" => "bundle.exp-extends",
            "subject-switch" => "bundle.subject-changed",
            "history-rewritten" => "bundle.history-mismatch",
            "may_act-violation" => "bundle.may-act-violation",
            "audience-misaligned" => "bundle.audience-misaligned",
            "jti-reuse" => "bundle.jti-duplicate",
            "cycle" => "act.cycle",
            "segment-prefix-trap" => "bundle.scope-widened",
            other => panic!("unhandled bundle vector {other}"),
        };
        let toks = case["tokens"].as_array().unwrap();
        let jp = if toks.len() < 3 {
            jwt_any_audience()
        } else {
            jwt_policy()
        };
        let r = audit_claims_with(toks, &jp, &policy());
        assert!(!r.passed(), "{id} passed");
        assert!(errors(&r).contains(&want), "{id}: {:?}", errors(&r));
        if id == "segment-prefix-trap" {
            let r = audit_claims_with(toks, &jp, &hier());
            assert!(errors(&r).contains(&want), "hierarchical {id}");
        }
    }
}

// ------------------------------------------------ one rule, one code (1.7 C)

fn bundle_breaking(f: impl Fn(&mut Vec<Value>)) -> Vec<&'static str> {
    let mut b = valid_bundle();
    f(&mut b);
    errors(&audit_claims(&b, &policy()))
}

#[test]
fn rule_subject_kept() {
    assert_eq!(
        bundle_breaking(|b| b[2]["sub"] = json!("mallory@example.com")),
        vec!["bundle.subject-changed"]
    );
}

#[test]
fn rule_history_extended_by_one() {
    assert_eq!(
        bundle_breaking(|b| b[2]["act"]["act"]["sub"] = json!("https://agent-x.example.com")),
        vec!["bundle.history-mismatch"]
    );
    // an actor dropped
    assert_eq!(
        bundle_breaking(|b| b[2]["act"] = json!({"sub": "https://agent-b.example.com"})),
        vec!["bundle.history-mismatch"]
    );
}

#[test]
fn rule_actor_aligned_with_audience() {
    // agent-b is the audience of hop 1 but hop 1 has no may_act: the new
    // actor agent-c matches neither.
    assert_eq!(
        bundle_breaking(|b| {
            b[1].as_object_mut().unwrap().remove("may_act");
            b[2]["act"]["sub"] = json!("https://agent-c.example.com");
        }),
        vec!["bundle.audience-misaligned"]
    );
}

#[test]
fn rule_may_act() {
    // Aligned with the audience but not named by may_act.
    assert_eq!(
        bundle_breaking(|b| {
            b[1]["aud"] = json!(["https://agent-b.example.com", "https://agent-c.example.com"]);
            b[2]["act"]["sub"] = json!("https://agent-c.example.com");
        }),
        vec!["bundle.may-act-violation"]
    );
    // Required by policy and absent.
    let mut b = valid_bundle();
    b[1].as_object_mut().unwrap().remove("may_act");
    let mut p = policy();
    p.require_may_act = true;
    assert_eq!(
        errors(&audit_claims(&b, &p)),
        vec!["bundle.may-act-missing"]
    );
}

#[test]
fn rule_scope_narrows_set_mode() {
    assert_eq!(
        bundle_breaking(|b| b[2]["scope"] = json!("calendar:read calendar:write")),
        vec!["bundle.scope-widened"]
    );
    assert_eq!(
        bundle_breaking(|b| {
            b[1].as_object_mut().unwrap().remove("scope");
        }),
        vec!["scope.missing"]
    );
    assert_eq!(
        bundle_breaking(|b| b[1]["scope"] = json!(["calendar:read"])),
        vec!["scope.malformed"]
    );
    assert_eq!(
        bundle_breaking(|b| b[1]["scope"] = json!("calendar:read  mail:read")),
        vec!["scope.malformed"]
    );
}

#[test]
fn rule_scope_hierarchical_mode() {
    let mut b = valid_bundle();
    b[0]["scope"] = json!("billing.read mail");
    b[1]["scope"] = json!("billing.read.invoices");
    b[2]["scope"] = json!("billing.read.invoices.2025");
    let r = audit_claims(&b, &hier());
    assert!(r.passed(), "{:?}", errors(&r));
    assert_eq!(
        r.effective_scope.unwrap().to_claim(),
        "billing.read.invoices.2025"
    );
    // the same bundle fails in the default set mode
    assert_eq!(
        errors(&audit_claims(&b, &policy())),
        vec!["bundle.scope-widened"]
    );
    b[1]["scope"] = json!("billing.reader");
    b[2]["scope"] = json!("billing.reader");
    assert_eq!(
        errors(&audit_claims(&b, &hier())),
        vec!["bundle.scope-widened"]
    );
    b[1]["scope"] = json!("billing.*.x");
    assert_eq!(errors(&audit_claims(&b, &hier())), vec!["scope.malformed"]);
}

#[test]
fn rule_time_windows_nest() {
    assert_eq!(
        bundle_breaking(|b| b[2]["exp"] = json!(1_760_001_900)),
        vec!["bundle.exp-extends"]
    );
    assert_eq!(
        bundle_breaking(|b| b[2]["nbf"] = json!(1_760_000_000)),
        vec!["bundle.nbf-precedes"]
    );
    assert_eq!(
        bundle_breaking(|b| b[2]["iat"] = json!(1_759_999_900)),
        vec!["bundle.iat-regressed"]
    );
}

#[test]
fn rule_jti_distinct_and_replay() {
    assert_eq!(
        bundle_breaking(|b| b[2]["jti"] = json!("t0")),
        vec!["bundle.jti-duplicate"]
    );
    let k = key();
    let toks: Vec<String> = valid_bundle().iter().map(|c| sign(c, &k)).collect();
    let refs: Vec<&str> = toks.iter().map(String::as_str).collect();
    let dup = [refs[0], refs[0]];
    let r = audit(&dup, &verifier(&k), &policy());
    assert!(errors(&r).contains(&"bundle.token-duplicate"));
    let v = with_store(&verifier(&k), Arc::new(MemoryReplayStore::new()));
    let r = audit(&refs, &v, &policy());
    assert!(r.passed());
    // Recorded once, for the whole bundle.
    assert_eq!(replay_checks(&r), vec![(true, Severity::Info)]);
    let r = audit(&refs, &v, &policy());
    assert_eq!(errors(&r), vec!["jwt.jti-replay"]);
    assert_eq!(replay_checks(&r), vec![(false, Severity::Error)]);
}

fn with_store(
    v: &agentsig::verifier::Verifier,
    store: Arc<dyn ReplayStore>,
) -> agentsig::verifier::Verifier {
    v.to_builder().replay_store(store).build()
}

/// The `jwt.jti-replay` checks of a report as (passed, severity). It is
/// one bundle-level check (hop `None`), made after
/// every other check.
fn replay_checks(r: &delegation::AuditReport) -> Vec<(bool, Severity)> {
    r.checks
        .iter()
        .filter(|c| c.code == "jwt.jti-replay")
        .map(|c| {
            assert_eq!(c.hop, None, "{c:?}");
            (c.passed, c.severity)
        })
        .collect()
}

/// An audit that fails records no `jti`, none of its
/// tokens; the same tokens audited afterwards in a passing audit are first
/// sightings (and only then recorded).
#[test]
fn failed_audit_records_no_jti() {
    let k = key();
    let other = key();
    let b = valid_bundle();
    let good: Vec<String> = b.iter().map(|c| sign(c, &k)).collect();
    // Two ways for hop 1 to fail: an untrusted signer, a widened scope
    // (found only across hops, after every token verified).
    let mut widened = b[1].clone();
    widened["scope"] = json!("calendar:read calendar:write mail:read admin");
    let bad_hops = [
        ("jwt.signature", sign(&b[1], &other)),
        ("bundle.scope-widened", sign(&widened, &k)),
    ];
    for (want, bad) in &bad_hops {
        let store: Arc<dyn ReplayStore> = Arc::new(MemoryReplayStore::new());
        let v = with_store(&verifier(&k), Arc::clone(&store));
        let r = audit(&[&good[0], bad, &good[2]], &v, &policy());
        assert!(errors(&r).contains(want), "{want}: {:?}", errors(&r));
        assert!(!errors(&r).contains(&"jwt.jti-replay"), "{want}");
        // Not recorded: an informational failed check says so.
        assert_eq!(replay_checks(&r), vec![(false, Severity::Info)], "{want}");
        // The valid first token alone is still a first sighting in the
        // same store ...
        let v0 = with_store(
            &verifier_with(keys_for(&k), jwt_any_audience()),
            Arc::clone(&store),
        );
        let r = audit(&[&good[0]], &v0, &policy());
        assert!(r.passed(), "{want}: {:?}", errors(&r));
        assert_eq!(replay_checks(&r), vec![(true, Severity::Info)], "{want}");
        // ... and now it is recorded, so the store is not a no-op.
        let r = audit(&[&good[0]], &v0, &policy());
        assert_eq!(errors(&r), vec!["jwt.jti-replay"], "{want}");
    }
    // The other hops were not recorded either: the whole valid bundle
    // passes in a store that saw the failed audit.
    let store: Arc<dyn ReplayStore> = Arc::new(MemoryReplayStore::new());
    let v = with_store(&verifier(&k), store);
    for (want, bad) in &bad_hops {
        let r = audit(&[&good[0], bad, &good[2]], &v, &policy());
        assert!(!r.passed(), "{want}");
    }
    let refs: Vec<&str> = good.iter().map(String::as_str).collect();
    let r = audit(&refs, &v, &policy());
    assert!(r.passed(), "{:?}", errors(&r));
    let r = audit(&refs, &v, &policy());
    assert_eq!(errors(&r), vec!["jwt.jti-replay"]);
}

#[test]
fn rule_hop_bound_and_per_hop_verification() {
    let b = valid_bundle();
    let many: Vec<Value> = (0..11).map(|_| b[0].clone()).collect();
    assert_eq!(
        errors(&audit_claims(&many, &policy())),
        vec!["bundle.too-many-hops"]
    );
    // a hop signed by an untrusted key
    let k = key();
    let other = key();
    let toks: Vec<String> = b
        .iter()
        .enumerate()
        .map(|(i, c)| sign(c, if i == 1 { &other } else { &k }))
        .collect();
    let refs: Vec<&str> = toks.iter().map(String::as_str).collect();
    let r = audit(&refs, &verifier(&k), &policy());
    assert_eq!(errors(&r), vec!["jwt.signature"]);
    assert!(r.hops[1].evidence.is_none());
    // garbage in a bundle is reported, not a panic
    let r = audit(&[refs[0], "not-a-jwt"], &verifier(&k), &policy());
    assert!(errors(&r).contains(&"jwt.malformed"));
    // the verifier's audience applies to the last token only
    let mut jp = jwt_policy();
    jp.audience = Some("https://agent-a.example.com".into());
    assert_eq!(
        errors(&audit_claims_with(&b, &jp, &policy())),
        vec!["jwt.aud-mismatch"]
    );
}

// ----------------------------------------------- one token (1.7 B), act.scope

#[test]
fn single_token_actor_scopes() {
    let mut c = base_token();
    c["scope"] = json!("a");
    c["act"] = json!({"sub": "agent-b", "scope": "a b",
                      "act": {"sub": "agent-a", "scope": "a b c"}});
    assert!(single(&c).passed());
    c["act"]["scope"] = json!("a b d");
    assert_eq!(errors(&single(&c)), vec!["act.scope-widened"]);
    c["act"]["scope"] = json!("a b");
    c["scope"] = json!("a z");
    assert_eq!(errors(&single(&c)), vec!["act.scope-widened"]);
    c["scope"] = json!("a");
    c["act"]["act"].as_object_mut().unwrap().remove("scope");
    let r = single(&c);
    assert!(r.passed());
    assert_eq!(warnings(&r), vec!["act.scope-partial"]);
    c["act"]["scope"] = json!(7);
    assert_eq!(errors(&single(&c)), vec!["act.scope-malformed"]);
}

#[test]
fn single_token_cycle_uses_iss_and_sub() {
    let mut c = base_token();
    // same sub in different issuer namespaces: not a cycle
    c["act"] =
        json!({"sub": "agent-a", "iss": "https://other.example.com", "act": {"sub": "agent-a"}});
    assert!(single(&c).passed());
    c["act"] = json!({"sub": "agent-a", "act": {"sub": "agent-a", "iss": AS}});
    assert_eq!(errors(&single(&c)), vec!["act.cycle"]);
    c["may_act"] = json!("agent-a");
    c["act"] = json!({"sub": "agent-a"});
    assert_eq!(errors(&single(&c)), vec!["may-act.malformed"]);
}

// ----------------------------------------------------------- mint/exchange

#[test]
fn mint_and_exchange_produce_an_auditable_bundle() {
    let k = key();
    let keys = keys_for(&k);
    let mut req = MintRequest::new(AS, "user@example.com", NOW - 60, 3600);
    req.aud = vec!["https://agent-a.example.com".into()];
    req.scope = Some("calendar:read calendar:write mail:read".into());
    req.may_act = Some(ActorSpec::new("https://agent-a.example.com"));
    let t0 = mint::mint(&req, &k).unwrap();
    let xv = verifier_with(keys.clone(), jwt_any_audience());
    let ex = |subject: &str, actor: &str, aud: &str, scope: Option<&str>, next: Option<&str>| {
        mint::exchange(
            &ExchangeRequest {
                subject_token: subject,
                actor: Some(ActorSpec::new(actor)),
                actor_token: None,
                iss: AS.into(),
                aud: vec![aud.into()],
                scope: scope.map(str::to_owned),
                may_act: next.map(ActorSpec::new),
                ttl: 900,
                typ: "at+jwt".into(),
            },
            xv.context(),
            xv.jwt_policy(),
            &ScopePolicy::default(),
            &k,
        )
    };
    let t1 = ex(
        &t0,
        "https://agent-a.example.com",
        "https://agent-b.example.com",
        Some("calendar:read mail:read"),
        Some("https://agent-b.example.com"),
    )
    .unwrap();
    let t2 = ex(
        &t1.token,
        "https://agent-b.example.com",
        CAL,
        Some("calendar:read"),
        None,
    )
    .unwrap();
    assert_eq!(
        t2.claims["act"]["act"]["sub"],
        "https://agent-a.example.com"
    );
    assert_eq!(t2.response["token_type"], "N_A");
    let r = audit(&[&t0, &t1.token, &t2.token], &verifier(&k), &policy());
    assert!(r.passed(), "{:?}", errors(&r));
    assert_eq!(r.effective_scope.unwrap().to_claim(), "calendar:read");
    // exchange refuses what the audit would reject
    let e = ex(&t1.token, "https://agent-z.example.com", CAL, None, None).unwrap_err();
    assert_eq!(e.code(), "exchange.may-act-violation");
    let e = ex(
        &t1.token,
        "https://agent-b.example.com",
        CAL,
        Some("calendar:write"),
        None,
    )
    .unwrap_err();
    assert_eq!(e.code(), "exchange.scope-widened");
    let e = ex(&t2.token, "https://agent-a.example.com", CAL, None, None).unwrap_err();
    assert_eq!(e.code(), "exchange.cycle");
    let e = ex("garbage", "x", CAL, None, None).unwrap_err();
    assert_eq!(e.code(), "exchange.subject-token");
}

/// The audit is a `Result`: `Ok` only when nothing of severity error failed
/// (the old API returned a bare report that could be ignored). With
/// `AuditPolicy::deny_warnings` a warning fails it too, and such a refused
/// audit records no `jti` (so the same token still passes without it).
#[test]
fn audit_is_a_result_and_deny_warnings_refuses_without_burning_jti() {
    let k = key();
    let t = sign(&base_token(), &k);
    // No issuer configured: the audit warns `policy.issuer-unset`.
    let jp = JwtPolicy::default()
        .audience(CAL)
        .expected_typ(["at+jwt"])
        .require_jti(true);
    let store: Arc<dyn ReplayStore> = Arc::new(MemoryReplayStore::new());
    let v = verifier_with(keys_for(&k), jp)
        .to_builder()
        .replay_store(store)
        .build();
    let strict = v
        .to_builder()
        .audit(AuditPolicy::default().deny_warnings(true))
        .build();
    let err = strict.audit_delegation(&[&t]).unwrap_err();
    assert!(err.report.failed_codes().contains(&"policy.issuer-unset"));
    assert!(err.to_string().contains("policy.issuer-unset"), "{err}");
    let ok = v.audit_delegation(&[&t]).expect("warnings only: passes");
    assert!(ok.failed_codes().contains(&"policy.issuer-unset"));
    // Recorded by the passing audit: now a replay, an error.
    let again = v.audit_delegation(&[&t]).unwrap_err();
    assert_eq!(errors(&again.report), vec!["jwt.jti-replay"]);
}
