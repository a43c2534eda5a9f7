//! Rendering an [`AuditReport`]: a readable tree and a JSON document with
//! every check's stable code, severity and result, keeping *verified* hops
//! (signed evidence) apart from *asserted* ones (a nested `act` only).

use super::{AuditReport, Hop, Severity};
use serde_json::{json, Value};

pub use crate::text::rfc3339;

fn t(v: Option<i64>) -> String {
    match v {
        Some(x) => format!("{} ({x})", rfc3339(x)),
        None => "-".into(),
    }
}

fn evidence_line(h: &Hop) -> String {
    match &h.evidence {
        Some(ev) => format!(
            "VERIFIED {} kid {} with {}",
            e(&ev.alg),
            e(ev.kid.as_deref().unwrap_or("-")),
            e(&ev.key_source.to_string())
        ),
        None if h.decoded => "NOT VERIFIED (signature not accepted)".into(),
        None => "UNREADABLE".into(),
    }
}

/// The verdict: [`AuditReport::passed`] (which already counts warnings when
/// the audit's policy denied them), and with `deny_warnings` also no failed
/// check of severity warning. The text and JSON reports and the exit code
/// all use this one verdict.
pub fn verdict(r: &AuditReport, deny_warnings: bool) -> bool {
    r.passed()
        && !(deny_warnings
            && r.checks
                .iter()
                .any(|c| !c.passed && c.severity == Severity::Warning))
}

/// An unverified value, escaped for a terminal (see [`crate::text`]).
fn e(s: &str) -> String {
    crate::text::escape_controls(s).into_owned()
}

/// The human-readable tree, with the verdict of [`AuditReport::passed`].
pub fn text(r: &AuditReport) -> String {
    text_with(r, false)
}

/// The human-readable tree; with `deny_warnings` a failed warning fails the
/// verdict (see [`verdict`]).
pub fn text_with(r: &AuditReport, deny_warnings: bool) -> String {
    let mut o = String::new();
    let bundle = r.hops.len() > 1;
    let pass = verdict(r, deny_warnings);
    o.push_str(&format!(
        "delegation {}: {}  ({} token{}, scope mode {}, act depth bound {}, now {})\n",
        if bundle { "bundle" } else { "token" },
        if pass { "PASS" } else { "FAIL" },
        r.hops.len(),
        if r.hops.len() == 1 { "" } else { "s" },
        r.scope_mode.as_str(),
        r.max_depth,
        rfc3339(r.now)
    ));
    o.push_str("order: RFC 8693 4.1 - the outermost act is the current actor, the deepest is the least recent\n");
    let Some(first) = r.hops.first() else {
        return o;
    };
    // Asserted history: actors already present in the first token, except the
    // current actor of a single token (which its signed token names).
    let asserted: Vec<&super::Actor> = if bundle {
        first.actors.iter().collect()
    } else {
        first
            .actors
            .iter()
            .take(first.actors.len().saturating_sub(1))
            .collect()
    };
    o.push_str(&format!(
        "subject {}\n",
        e(first.str_claim("sub").unwrap_or("(none)"))
    ));
    if !asserted.is_empty() {
        o.push_str("│ asserted history (informational only, RFC 8693 4.1; not verified):\n");
        for a in &asserted {
            o.push_str(&format!(
                "│   ~ {}{}\n",
                e(&a.sub),
                a.iss
                    .as_ref()
                    .map(|i| format!(" (iss {})", e(i)))
                    .unwrap_or_default()
            ));
        }
    }
    for (i, h) in r.hops.iter().enumerate() {
        let last = i + 1 == r.hops.len();
        let (branch, pad) = if last {
            ("└─", "   ")
        } else {
            ("├─", "│  ")
        };
        let who = if i == 0 && bundle {
            format!(
                "hop 0 subject token (holder: aud {})",
                e(&crate::jwt::audiences(&h.claims).join(", "))
            )
        } else {
            let actor = h
                .current_actor()
                .map(|a| e(&a.sub))
                .unwrap_or_else(|| "(no actor)".into());
            format!("hop {i} actor {actor}")
        };
        o.push_str(&format!("{branch} {who}\n"));
        o.push_str(&format!("{pad} evidence: {}\n", evidence_line(h)));
        o.push_str(&format!(
            "{pad} iss {}  aud {}  jti {}\n",
            e(h.str_claim("iss").unwrap_or("-")),
            e(&crate::jwt::audiences(&h.claims).join(",")),
            e(h.str_claim("jti").unwrap_or("-"))
        ));
        o.push_str(&format!(
            "{pad} valid {} .. {}  (iat {})\n",
            t(h.start()),
            t(h.time("exp")),
            t(h.time("iat"))
        ));
        match &h.scope {
            Some(s) => o.push_str(&format!("{pad} scope {}\n", e(&s.to_claim()))),
            None => o.push_str(&format!("{pad} scope (missing or uncomparable)\n")),
        }
        if !h.scope_removed.is_empty() {
            o.push_str(&format!(
                "{pad}   removed: {}\n",
                e(&h.scope_removed.join(" "))
            ));
        }
        if !h.scope_added.is_empty() {
            o.push_str(&format!(
                "{pad}   ADDED:   {}\n",
                e(&h.scope_added.join(" "))
            ));
        }
        if let Some(m) = h.claims.get("may_act") {
            o.push_str(&format!("{pad} may_act {}\n", e(&m.to_string())));
        }
    }
    o.push_str(&format!(
        "effective scope: {}\n",
        r.effective_scope
            .as_ref()
            .map(|s| e(&s.to_claim()))
            .unwrap_or_else(|| "(none: a hop's scope is missing or uncomparable)".into())
    ));
    o.push_str(&format!(
        "effective window: {} .. {}\n",
        t(r.effective_window.0),
        t(r.effective_window.1)
    ));
    let failed: Vec<_> = r.checks.iter().filter(|c| !c.passed).collect();
    let passed = r.checks.len() - failed.len();
    let count = |sev: Severity| failed.iter().filter(|c| c.severity == sev).count();
    let (errors, warnings, notes) = (
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Info),
    );
    o.push_str(&format!(
        "checks: {passed} passed, {errors} failed, {warnings} warning{}{}{}\n",
        if warnings == 1 { "" } else { "s" },
        if deny_warnings && warnings > 0 {
            " (denied by --deny-warnings)"
        } else {
            ""
        },
        if notes > 0 {
            format!(", {notes} note{}", if notes == 1 { "" } else { "s" })
        } else {
            String::new()
        }
    ));
    for c in failed {
        let sev = match c.severity {
            Severity::Error => "ERROR",
            Severity::Warning => "warn ",
            Severity::Info => "info ",
        };
        let hop = c.hop.map(|h| format!("hop {h} ")).unwrap_or_default();
        o.push_str(&format!("  {sev} {hop}{}: {}\n", c.code, e(&c.message)));
    }
    o
}

/// The JSON report.
pub fn json(r: &AuditReport) -> Value {
    let base_actors = r.hops.first().map(|h| h.actors.len()).unwrap_or(0);
    let hops: Vec<Value> = r
        .hops
        .iter()
        .map(|h| {
            let bundle = r.hops.len() > 1;
            let actors: Vec<Value> = h
                .actors
                .iter()
                .enumerate()
                .map(|(j, a)| {
                    let current = j + 1 == h.actors.len();
                    // Actors already in the subject token are only asserted;
                    // each later one was introduced by a signed hop.
                    let inherited = if bundle { base_actors } else { h.actors.len() - 1 };
                    let status = if j < inherited {
                        "asserted"
                    } else if current {
                        "signed-current-actor"
                    } else {
                        "verified-earlier-hop"
                    };
                    json!({"sub": a.sub, "iss": a.iss, "current": current, "status": status,
                           "scope": a.members.get("scope")})
                })
                .collect();
            json!({
                "index": h.index,
                "decoded": h.decoded,
                "verified": h.evidence.is_some(),
                "alg": h.evidence.as_ref().map(|e| e.alg.clone()).or_else(|| h.header.get("alg").and_then(Value::as_str).map(str::to_owned)),
                "kid": h.header.get("kid"),
                "typ": h.header.get("typ"),
                "key_source": h.evidence.as_ref().map(|e| e.key_source.to_string()),
                "key_thumbprint": h.evidence.as_ref().map(|e| e.key_thumbprint.clone()),
                "iss": h.claims.get("iss"),
                "sub": h.claims.get("sub"),
                "aud": h.claims.get("aud"),
                "iat": h.claims.get("iat"),
                "nbf": h.claims.get("nbf"),
                "exp": h.claims.get("exp"),
                "jti": h.claims.get("jti"),
                "scope": h.scope.as_ref().map(|s| s.values.iter().cloned().collect::<Vec<_>>()),
                "scope_removed": h.scope_removed,
                "scope_added": h.scope_added,
                "may_act": h.claims.get("may_act"),
                "actors_chronological": actors,
            })
        })
        .collect();
    let checks: Vec<Value> = r
        .checks
        .iter()
        .map(|c| {
            json!({
                "code": c.code,
                "severity": c.severity.as_str(),
                "result": if c.passed { "pass" } else { "fail" },
                "hop": c.hop,
                "message": c.message,
            })
        })
        .collect();
    json!({
        "result": if r.passed() { "pass" } else { "fail" },
        "mode": if r.hops.len() > 1 { "bundle" } else { "single" },
        "now": r.now,
        "order": "RFC 8693 4.1: outermost act is the current actor; actors_chronological lists the least recent first",
        "policy": {
            "scope_mode": r.scope_mode.as_str(),
            "max_act_depth": r.max_depth,
            "missing_scope": "rejected, never unconstrained",
        },
        "effective_scope": r.effective_scope.as_ref().map(|s| s.values.iter().cloned().collect::<Vec<_>>()),
        "effective_window": {"start": r.effective_window.0, "exp": r.effective_window.1},
        "hops": hops,
        "checks": checks,
    })
}
