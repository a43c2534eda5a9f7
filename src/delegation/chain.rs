//! The chain inside one token: nested `act` (RFC 8693 section 4.1) and
//! `may_act` (section 4.4), checked without recursion and with a depth bound.

use super::scope::Scope;
use super::{Actor, AuditPolicy, Checks, Severity};
use serde_json::{Map, Value};

/// Members that are "not meaningful" inside `act` or `may_act` (RFC 8693
/// sections 4.1 and 4.4: "SHOULD NOT be used").
pub const NOT_MEANINGFUL: [&str; 3] = ["exp", "nbf", "aud"];

/// Parse the `act` chain of `claims` iteratively. Returns the actors in
/// chronological order (least recent first, RFC 8693 4.1), as far as they
/// could be read, recording structural failures in `checks`.
pub fn parse_actors(
    claims: &Map<String, Value>,
    bound: usize,
    hop: Option<usize>,
    checks: &mut Checks,
) -> Vec<Actor> {
    let mut outer_first: Vec<Actor> = Vec::new();
    let mut cur = claims.get("act");
    let mut ok_object = true;
    let mut ok_sub = true;
    let mut ok_depth = true;
    let mut meaningless: Vec<String> = Vec::new();
    while let Some(v) = cur {
        if outer_first.len() >= bound {
            ok_depth = false;
            checks.error(
                "act.depth-exceeded",
                hop,
                format!("act nesting exceeds the bound of {bound} actors"),
            );
            break;
        }
        let Some(obj) = v.as_object() else {
            ok_object = false;
            checks.error(
                "act.not-object",
                hop,
                format!(
                    "act at level {} is not a JSON object (RFC 8693 4.1)",
                    outer_first.len() + 1
                ),
            );
            break;
        };
        let sub = match obj.get("sub") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            _ => {
                ok_sub = false;
                checks.error(
                    "act.sub-missing",
                    hop,
                    format!(
                        "actor at level {} has no non-empty string sub",
                        outer_first.len() + 1
                    ),
                );
                String::new()
            }
        };
        let iss = match obj.get("iss") {
            None => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => {
                ok_sub = false;
                checks.error(
                    "act.sub-missing",
                    hop,
                    format!(
                        "actor at level {} has a non-string iss",
                        outer_first.len() + 1
                    ),
                );
                None
            }
        };
        for m in NOT_MEANINGFUL {
            if obj.contains_key(m) {
                meaningless.push(format!("act level {}: {m}", outer_first.len() + 1));
            }
        }
        let mut members = obj.clone();
        members.remove("act");
        outer_first.push(Actor { sub, iss, members });
        cur = obj.get("act");
    }
    if claims.contains_key("act") {
        if ok_object {
            checks.pass("act.not-object", hop, "every act level is an object");
        }
        if ok_sub {
            checks.pass("act.sub-missing", hop, "every actor has a sub");
        }
        if ok_depth {
            checks.pass(
                "act.depth-exceeded",
                hop,
                format!("{} actor(s), bound {bound}", outer_first.len()),
            );
        }
    }
    if let Some(ma) = claims.get("may_act") {
        match ma.as_object() {
            Some(o)
                if o.get("sub")
                    .and_then(Value::as_str)
                    .is_some_and(|s| !s.is_empty()) =>
            {
                checks.pass("may-act.malformed", hop, "may_act names a sub");
                for m in NOT_MEANINGFUL {
                    if o.contains_key(m) {
                        meaningless.push(format!("may_act: {m}"));
                    }
                }
            }
            _ => checks.error(
                "may-act.malformed",
                hop,
                "may_act must be an object with a non-empty sub (RFC 8693 4.4)",
            ),
        }
    }
    if claims.contains_key("act") || claims.contains_key("may_act") {
        if meaningless.is_empty() {
            checks.pass(
                "act.claim-not-meaningful",
                hop,
                "no exp/nbf/aud inside act or may_act",
            );
        } else {
            checks.warn(
                "act.claim-not-meaningful",
                hop,
                format!(
                    "exp/nbf/aud are not meaningful inside act/may_act and SHOULD NOT be used (RFC 8693 4.1, 4.4): {}",
                    meaningless.join(", ")
                ),
            );
        }
    }
    outer_first.reverse();
    outer_first
}

/// Structural and scope checks on one token's own chain (RFC 8693 sections
/// 4.1 and 4.4): cycles, actor equal to subject, per-actor scope narrowing
/// when actors carry `scope`, and the top-level `scope`.
pub fn check_token(
    claims: &Map<String, Value>,
    policy: &AuditPolicy,
    hop: Option<usize>,
    checks: &mut Checks,
) -> (Vec<Actor>, Option<Scope>) {
    let actors = parse_actors(claims, policy.depth_bound(), hop, checks);
    let iss = claims.get("iss").and_then(Value::as_str);
    let sub = claims.get("sub").and_then(Value::as_str);

    if !actors.is_empty() {
        // Cycle: the same (iss, sub) twice among the actors.
        let mut cycle = None;
        for (i, a) in actors.iter().enumerate() {
            if a.sub.is_empty() {
                continue;
            }
            if actors[..i]
                .iter()
                .any(|b| b.identity(iss) == a.identity(iss))
            {
                cycle = Some(a.sub.clone());
                break;
            }
        }
        match cycle {
            Some(s) => checks.error(
                "act.cycle",
                hop,
                format!(
                    "actor {s_q} appears twice in the act chain (cycle or self-delegation)",
                    s_q = crate::text::quoted(&s)
                ),
            ),
            None => checks.pass("act.cycle", hop, "no actor appears twice"),
        }
        // The subject acting for itself.
        let subject_acts = sub.is_some_and(|s| actors.iter().any(|a| a.identity(iss) == (iss, s)));
        if subject_acts {
            checks.fail(
                "act.actor-is-subject",
                policy.actor_is_subject,
                hop,
                format!(
                    "the subject {} appears as an actor",
                    crate::text::quoted(sub.unwrap_or(""))
                ),
            );
        } else {
            checks.pass("act.actor-is-subject", hop, "no actor is the subject");
        }
        check_actor_scopes(&actors, claims, policy, hop, checks);
        if actors.len() > 1 {
            checks.fail(
                "act.history-asserted",
                Severity::Info,
                hop,
                format!(
                    "{} prior actor(s) are informational history asserted by the issuer (RFC 8693 4.1), not verified evidence",
                    actors.len() - 1
                ),
            );
        }
    }

    let scope = match Scope::parse(claims.get("scope"), &policy.scope) {
        Ok(s) => {
            checks.pass("scope.missing", hop, "scope present");
            checks.pass(
                "scope.malformed",
                hop,
                format!("scope comparable ({} values)", s.values.len()),
            );
            if s.had_duplicates {
                checks.fail(
                    "scope.duplicates",
                    Severity::Info,
                    hop,
                    "scope repeats a value; duplicates ignored",
                );
            }
            Some(s)
        }
        Err(e) => {
            checks.error(e.code(), hop, e.to_string());
            None
        }
    };
    (actors, scope)
}

/// When actors carry their own (non-standard) `scope`, each later actor's
/// scope must be covered by its delegator's, and the token's scope by the
/// current actor's.
fn check_actor_scopes(
    actors: &[Actor],
    claims: &Map<String, Value>,
    policy: &AuditPolicy,
    hop: Option<usize>,
    checks: &mut Checks,
) {
    let with_scope = actors
        .iter()
        .filter(|a| a.members.contains_key("scope"))
        .count();
    if with_scope == 0 {
        checks.fail(
            "act.scope-unproven",
            Severity::Info,
            hop,
            "actors carry no scope: one token cannot prove per-hop narrowing (audit a bundle, one token per hop)",
        );
        return;
    }
    if with_scope < actors.len() {
        checks.warn(
            "act.scope-partial",
            hop,
            format!(
                "{with_scope} of {} actors carry scope; the others cannot be compared and are skipped",
                actors.len()
            ),
        );
    }
    let mut prev: Option<(String, Scope)> = None;
    let mut ok = true;
    let mut seq: Vec<(String, Option<&Value>)> = actors
        .iter()
        .map(|a| {
            (
                format!("actor {}", crate::text::quoted(&a.sub)),
                a.members.get("scope"),
            )
        })
        .collect();
    if claims.contains_key("scope") {
        seq.push(("the token scope".into(), claims.get("scope")));
    }
    for (name, v) in seq {
        let Some(v) = v else { continue };
        let s = match Scope::parse(Some(v), &policy.scope) {
            Ok(s) => s,
            Err(e) => {
                ok = false;
                checks.error("act.scope-malformed", hop, format!("{name}: {e}"));
                continue;
            }
        };
        if let Some((pname, p)) = &prev {
            let added = p.added_by(&s, &policy.scope);
            if !added.is_empty() {
                ok = false;
                checks.error(
                    "act.scope-widened",
                    hop,
                    format!(
                        "{name} holds {} beyond its delegator {pname} (draft-narvaneni-agent-uri-03 section 10.2 monotonic narrowing)",
                        added.join(" ")
                    ),
                );
            }
        }
        prev = Some((name, s));
    }
    if ok {
        checks.pass(
            "act.scope-widened",
            hop,
            "actor scopes narrow monotonically",
        );
    }
}

/// Does `actor` match a `may_act` object (RFC 8693 4.4)? `sub` must equal;
/// `iss` must equal when `may_act` names one.
pub fn may_act_allows(may_act: &Value, actor_sub: &str, actor_iss: Option<&str>) -> bool {
    let Some(o) = may_act.as_object() else {
        return false;
    };
    let sub_ok = o.get("sub").and_then(Value::as_str) == Some(actor_sub);
    let iss_ok = match o.get("iss").and_then(Value::as_str) {
        None => true,
        Some(i) => actor_iss == Some(i),
    };
    sub_ok && iss_ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn vectors() -> Value {
        serde_json::from_str(include_str!("../../tests/vectors/rfc8693_examples.json"))
            .expect("vector file is JSON")
    }

    /// RFC 8693 section 4.1 figures: the outermost `act` is the current
    /// actor; the chain is kept least recent first.
    #[test]
    fn rfc8693_figures_chain_order() {
        let v = vectors();
        for ex in v["examples"].as_array().unwrap() {
            let Some(expected) = ex.get("expected_chain") else {
                continue;
            };
            let claims = ex["claims"].as_object().unwrap();
            let mut checks = Checks::default();
            let actors = parse_actors(claims, 5, None, &mut checks);
            // expected_chain: depth 0 subject, depth 1 current actor, deeper = prior.
            let exp = expected.as_array().unwrap();
            assert_eq!(exp[0]["sub"], claims["sub"]);
            let outer_first: Vec<&str> = actors.iter().rev().map(|a| a.sub.as_str()).collect();
            let want: Vec<&str> = exp[1..]
                .iter()
                .map(|e| e["sub"].as_str().unwrap())
                .collect();
            assert_eq!(outer_first, want, "{}", ex["id"]);
            assert_eq!(exp[1]["role"], "current_actor");
            assert_eq!(actors.last().unwrap().sub, exp[1]["sub"].as_str().unwrap());
        }
    }

    /// RFC 8693 Appendix A.2: the subject token's `may_act` allows the actor
    /// that the issued token names, and nobody else.
    #[test]
    fn rfc8693_a2_may_act() {
        let v = vectors();
        let a2 = v["examples"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["id"] == "rfc8693-A.2-delegation")
            .unwrap();
        let decode =
            |k: &str| crate::jwt::decode(a2[k]["compact"].as_str().unwrap(), 16384).unwrap();
        let (st, at, it) = (
            decode("subject_token"),
            decode("actor_token"),
            decode("issued_token"),
        );
        let actor = at.claims["sub"].as_str().unwrap();
        assert!(may_act_allows(&st.claims["may_act"], actor, None));
        assert_eq!(it.claims["act"]["sub"], actor);
        assert_eq!(it.claims["sub"], st.claims["sub"]);
        assert!(!may_act_allows(
            &st.claims["may_act"],
            "mallory@example.net",
            None
        ));
    }
}
