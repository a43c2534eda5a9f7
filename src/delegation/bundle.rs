//! Bundle audit: one token per hop, subject token first (draft-narvaneni-agent-uri-03 section
//! 10.2, RFC 8693 section 4.1). Every token is verified on its own (RFC 7519, RFC 8725),
//! then the hops are tied together: same subject, history extended by
//! exactly one actor (RFC 8693 4.1 order), the new actor aligned with the
//! previous token's audience or `may_act` (RFC 8693 4.4), scope narrowing
//! (draft-narvaneni-agent-uri-03 section 10.2), nested time windows, distinct `jti` (RFC 7519 4.1.7).

use super::chain;
use super::scope::Scope;
use super::{AuditPolicy, AuditReport, Checks, Hop, Severity, MAX_HOPS};
use crate::jwt;
use crate::policy::{Context, JwtPolicy};
use serde_json::Map;
use std::collections::HashMap;

/// Compare principals: exact, except that a DID URL's fragment is ignored
/// (UCAN principal alignment: the audience of hop k-1 is the actor or
/// issuer of hop k).
pub(crate) fn same_principal(a: &str, b: &str) -> bool {
    fn base(s: &str) -> &str {
        if s.starts_with("did:") {
            s.split('#').next().unwrap_or(s)
        } else {
            s
        }
    }
    base(a) == base(b)
}

/// See [`super::audit`]: the report, passed or not.
pub(crate) fn audit(
    tokens: &[&str],
    v: &Context,
    jwt_policy: &JwtPolicy,
    policy: &AuditPolicy,
) -> AuditReport {
    let now = v.now();
    let skew = v.skew_i64();
    let mut checks = Checks::default();
    let mut hops: Vec<Hop> = Vec::new();
    let report = |hops, checks: Checks| AuditReport {
        hops,
        checks: checks.0,
        effective_scope: None,
        effective_window: (None, None),
        now,
        scope_mode: policy.scope.mode,
        max_depth: policy.depth_bound(),
        deny_warnings: policy.deny_warnings,
    };
    if tokens.is_empty() {
        checks.error("bundle.empty", None, "no token to audit");
        return report(hops, checks);
    }
    if tokens.len() > MAX_HOPS {
        checks.error(
            "bundle.too-many-hops",
            None,
            format!(
                "{} tokens exceed the limit of {MAX_HOPS} hops",
                tokens.len()
            ),
        );
        return report(hops, checks);
    }
    if jwt_policy.issuers.is_none() {
        checks.warn(
            "policy.issuer-unset",
            None,
            "no issuer configured: iss is not checked, the trusted keys are the only anchor (RFC 8725 3.8)",
        );
    }
    if jwt_policy.audience.is_none() {
        checks.warn(
            "policy.audience-unset",
            None,
            "no audience configured: the last token's aud is not checked (RFC 7519 4.1.3)",
        );
    }
    let n = tokens.len();
    for (i, t) in tokens.iter().enumerate() {
        let hop = Some(i);
        let mut jp = jwt_policy.clone();
        if i + 1 != n {
            jp.audience = None;
        }
        let d = match jwt::decode(t.trim(), v.limits().max_jwt_bytes) {
            Ok(d) => d,
            Err(e) => {
                checks.error(e.code(), hop, e.to_string());
                hops.push(Hop {
                    index: i,
                    header: Map::new(),
                    claims: Map::new(),
                    decoded: false,
                    evidence: None,
                    actors: Vec::new(),
                    scope: None,
                    scope_removed: Vec::new(),
                    scope_added: Vec::new(),
                });
                continue;
            }
        };
        let evidence = match d.verify_signature(v, &jp) {
            Ok(ev) => {
                checks.pass(
                    "jwt.signature",
                    hop,
                    format!("{} signature verified with {}", ev.alg, ev.key_source),
                );
                Some(ev)
            }
            Err(e) => {
                checks.error(e.code(), hop, e.to_string());
                None
            }
        };
        let errs = d.check_claims(&jp, skew, now);
        if errs.is_empty() {
            checks.pass("jwt.claims", hop, "iss, aud, exp, nbf, iat, jti acceptable");
        }
        for e in errs {
            checks.error(e.code(), hop, e.to_string());
        }
        let (actors, scope) = chain::check_token(&d.claims, policy, hop, &mut checks);
        if i > 0 {
            // In a bundle the history of hop i is verified by the linkage to
            // hop i-1, and narrowing by the bundle rules: the single-token
            // notes do not apply.
            checks.0.retain(|c| {
                !(c.hop == hop && matches!(c.code, "act.history-asserted" | "act.scope-unproven"))
            });
        }
        hops.push(Hop {
            index: i,
            header: d.header,
            claims: d.claims,
            decoded: true,
            evidence,
            actors,
            scope,
            scope_removed: Vec::new(),
            scope_added: Vec::new(),
        });
    }

    // Across hops.
    for k in 1..hops.len() {
        let (before, after) = hops.split_at_mut(k);
        let prev = &before[k - 1];
        let cur = &mut after[0];
        if !prev.decoded || !cur.decoded {
            continue;
        }
        cross_hop(prev, cur, policy, skew, &mut checks);
    }
    let mut jtis: HashMap<&str, usize> = HashMap::new();
    let mut texts: HashMap<&str, usize> = HashMap::new();
    let mut jti_ok = true;
    for (i, t) in tokens.iter().enumerate() {
        if let Some(first) = texts.insert(t.trim(), i) {
            jti_ok = false;
            checks.error(
                "bundle.token-duplicate",
                Some(i),
                format!("token {i} repeats token {first}"),
            );
        }
    }
    for h in &hops {
        if let Some(j) = h.str_claim("jti") {
            if let Some(first) = jtis.insert(j, h.index) {
                jti_ok = false;
                checks.error(
                    "bundle.jti-duplicate",
                    Some(h.index),
                    format!(
                        "jti {} of hop {} repeats hop {first}",
                        crate::text::quoted(j),
                        h.index
                    ),
                );
            }
        }
    }
    if jti_ok && hops.len() > 1 {
        checks.pass("bundle.jti-duplicate", None, "all jti values distinct");
    }

    let start = hops.iter().filter_map(Hop::start).max();
    let end = hops.iter().filter_map(|h| h.time("exp")).min();
    if let (Some(s), Some(e)) = (start, end) {
        checks.check(
            s < e,
            "bundle.window-empty",
            Severity::Error,
            None,
            format!("effective window [{}, {})", t(s), t(e)),
        );
    }
    // jti replay (RFC 7519 4.1.7): recorded last, all tokens or none, and
    // only for an audit that passed everything else, so a refused bundle
    // never burns its ids.
    if let Some(store) = v.replay_store() {
        let passed_so_far = !checks.0.iter().any(|c| {
            !c.passed
                && (c.severity == Severity::Error
                    || (policy.deny_warnings && c.severity == Severity::Warning))
        });
        if passed_so_far {
            let entries: Vec<(&str, &str, i64)> = hops
                .iter()
                .filter_map(|h| {
                    let jti = h.str_claim("jti")?;
                    let iss = h.str_claim("iss").unwrap_or("");
                    let until = h.time("exp").unwrap_or(now).saturating_add(skew.max(0));
                    Some((iss, jti, until))
                })
                .collect();
            match jwt::check_replay(store, &entries, now) {
                Ok(()) => checks.pass("jwt.jti-replay", None, "jti not seen before; recorded"),
                Err(e) => checks.error(e.code(), None, e.to_string()),
            }
        } else {
            checks.fail(
                "jwt.jti-replay",
                Severity::Info,
                None,
                "jti not recorded: the audit failed",
            );
        }
    }
    let effective_scope = if hops.iter().all(|h| h.scope.is_some()) {
        let scopes: Vec<&Scope> = hops.iter().filter_map(|h| h.scope.as_ref()).collect();
        Some(Scope::intersection(&scopes, &policy.scope))
    } else {
        None
    };
    AuditReport {
        hops,
        checks: checks.0,
        effective_scope,
        effective_window: (start, end),
        now,
        scope_mode: policy.scope.mode,
        max_depth: policy.depth_bound(),
        deny_warnings: policy.deny_warnings,
    }
}

fn cross_hop(prev: &Hop, cur: &mut Hop, policy: &AuditPolicy, skew: i64, checks: &mut Checks) {
    let hop = Some(cur.index);
    // Same subject: delegation keeps the subject (RFC 8693 section 4.1).
    let (ps, cs) = (prev.str_claim("sub"), cur.str_claim("sub"));
    checks.check(
        ps.is_some() && ps == cs,
        "bundle.subject-changed",
        Severity::Error,
        hop,
        format!(
            "sub {} after {}",
            crate::text::quoted_opt(cs),
            crate::text::quoted_opt(ps)
        ),
    );
    // History = previous history + one actor.
    let history_ok = !cur.actors.is_empty()
        && cur.actors.len() == prev.actors.len() + 1
        && cur.actors[..prev.actors.len()] == prev.actors[..];
    checks.check(
        history_ok,
        "bundle.history-mismatch",
        Severity::Error,
        hop,
        if history_ok {
            "act history extends the previous hop's by one actor".to_string()
        } else if prev.actors.len() > cur.actors.len()
            && prev.actors[..cur.actors.len()] == cur.actors[..]
        {
            // The previous token extends this one: the bundle is reversed.
            format!(
                "act history [{}] is shorter than the previous hop's [{}]: the tokens are in the wrong order; give the subject token first, then one token per hop in the order they were exchanged",
                names(&cur.actors),
                names(&prev.actors)
            )
        } else if cur.actors.is_empty() {
            "no act: the hop records no actor".to_string()
        } else {
            format!(
                "act history [{}] is not the previous hop's [{}] plus one actor",
                names(&cur.actors),
                names(&prev.actors)
            )
        },
    );
    if let Some(new) = cur.current_actor() {
        let token_iss = cur.str_claim("iss");
        let (new_iss, new_sub) = new.identity(token_iss);
        let may_act = prev.claims.get("may_act");
        let in_may_act = may_act.is_some_and(|m| chain::may_act_allows(m, new_sub, new_iss));
        let in_aud = jwt::audiences(&prev.claims)
            .iter()
            .any(|a| same_principal(a, new_sub));
        checks.check(
            in_aud || in_may_act,
            "bundle.audience-misaligned",
            Severity::Error,
            hop,
            format!(
                "new actor {} vs previous aud [{}]",
                crate::text::quoted(new_sub),
                jwt::audiences(&prev.claims).join(", ")
            ),
        );
        match may_act {
            Some(_) => checks.check(
                in_may_act,
                "bundle.may-act-violation",
                Severity::Error,
                hop,
                format!(
                    "new actor {new_sub_q} against the previous hop's may_act (RFC 8693 4.4)",
                    new_sub_q = crate::text::quoted(new_sub)
                ),
            ),
            None if policy.require_may_act => checks.error(
                "bundle.may-act-missing",
                hop,
                "the previous hop has no may_act and policy requires it",
            ),
            None => {}
        }
    }
    // Scope narrowing (draft-narvaneni-agent-uri-03 section 10.2).
    if let (Some(p), Some(c)) = (&prev.scope, &cur.scope) {
        cur.scope_added = p.added_by(c, &policy.scope);
        cur.scope_removed = p.removed_by(c);
        checks.check(
            cur.scope_added.is_empty(),
            "bundle.scope-widened",
            Severity::Error,
            hop,
            if cur.scope_added.is_empty() {
                format!("scope narrows ({} mode)", policy.scope.mode.as_str())
            } else {
                format!(
                    "adds {} not held by the previous hop ({} mode)",
                    cur.scope_added.join(" "),
                    policy.scope.mode.as_str()
                )
            },
        );
    }
    // Time windows nest (UCAN v0.10 timely delegation).
    if let (Some(pe), Some(ce)) = (prev.time("exp"), cur.time("exp")) {
        checks.check(
            ce <= pe,
            "bundle.exp-extends",
            Severity::Error,
            hop,
            format!("exp {} vs previous exp {}", t(ce), t(pe)),
        );
    }
    if let Some(pstart) = prev.start() {
        let ok = cur.start().is_some_and(|c| c >= pstart);
        checks.check(
            ok,
            "bundle.nbf-precedes",
            Severity::Error,
            hop,
            format!(
                "start {} vs previous start {}",
                cur.start().map_or_else(|| "(none)".into(), t),
                t(pstart)
            ),
        );
    }
    if let (Some(pi), Some(ci)) = (prev.time("iat"), cur.time("iat")) {
        checks.check(
            ci >= pi.saturating_sub(skew.max(0)),
            "bundle.iat-regressed",
            Severity::Error,
            hop,
            format!("iat {} vs previous iat {}", t(ci), t(pi)),
        );
    }
    if cur.claims.contains_key("cnf") {
        checks.fail(
            "bundle.cnf-unchecked",
            Severity::Info,
            hop,
            "cnf present: the presenter's proof of possession is not checked by this audit",
        );
    }
}

/// A NumericDate (RFC 7519 section 2) as RFC 3339 text.
fn t(secs: i64) -> String {
    crate::text::rfc3339(secs)
}

fn names(actors: &[super::Actor]) -> String {
    actors
        .iter()
        .map(|a| a.sub.as_str())
        .collect::<Vec<_>>()
        .join(" -> ")
}
