//! Scope comparison: the policy draft-narvaneni-agent-uri-03 section 10.2 requires verifiers to
//! document ("Verifiers MUST document their scope-comparison policy, and
//! SHOULD reject tokens whose scope structure they cannot compare").
//!
//! # Policy
//! * The `scope` claim is a string of space-delimited scope tokens (RFC 8693
//!   section 4.2, RFC 9068 section 2.2.3, grammar of RFC 6749 section 3.3:
//!   `scope-token *( SP scope-token )`, each token of `%x21 / %x23-5B /
//!   %x5D-7E`). Anything else (not a string, empty, doubled or edge spaces,
//!   other characters, more than [`MAX_SCOPE_VALUES`] values) cannot be
//!   compared and is rejected (`scope.malformed`). Order does not matter;
//!   duplicates are removed.
//! * A missing `scope` is never "unconstrained" (Transaction Tokens draft:
//!   "MUST NOT treat an unknown scope as unconstrained"): it is an error.
//! * [`ScopeMode::Set`] (default): scope A covers scope B when every value of
//!   B is, byte for byte, a value of A (set inclusion). `*` is an ordinary
//!   character.
//! * [`ScopeMode::Hierarchical`]: values are paths of segments separated by
//!   any of [`ScopePolicy::separators`] (default `.`, `/`, `:`). A value
//!   covers itself and every value that extends it at a segment boundary:
//!   `billing.read` covers `billing.read.invoices` but not `billing.reader`;
//!   `/crypto` covers `/crypto/sign` but not `/cryptocurrency` (the UCAN
//!   command rule). A final `*` segment (`billing.read.*`) covers the strict
//!   descendants of its prefix, not the prefix itself. A `*` anywhere else
//!   or an empty segment (`billing..read`, `billing.`) cannot be compared
//!   and is rejected.

pub use crate::policy::{ScopeMode, ScopePolicy};
use std::collections::BTreeSet;

/// Most values accepted in one scope claim.
pub const MAX_SCOPE_VALUES: usize = 256;
/// Longest scope claim accepted, in bytes.
pub const MAX_SCOPE_BYTES: usize = 8 * 1024;

/// Why a scope cannot be compared.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScopeError {
    /// There is no `scope` claim (RFC 8693 section 4.2) where one is needed.
    #[error("scope is missing; a missing scope is never treated as unconstrained")]
    Missing,
    /// The `scope` claim is not a space-separated string of values (RFC 6749
    /// section 3.3) that can be compared.
    #[error("scope cannot be compared: {0}")]
    Malformed(String),
}

impl ScopeError {
    /// A stable, machine-readable code, `"scope.missing"` or `"scope.malformed"`.
    pub fn code(&self) -> &'static str {
        match self {
            ScopeError::Missing => "scope.missing",
            ScopeError::Malformed(_) => "scope.malformed",
        }
    }
}

/// A parsed scope: a set of values.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Scope {
    /// The distinct scope values, sorted.
    pub values: BTreeSet<String>,
    /// True when the claim repeated a value.
    pub had_duplicates: bool,
}

impl Scope {
    /// Parse a `scope` claim value under `policy`.
    ///
    /// # Errors
    /// [`ScopeError`] when a scope value is malformed or over a limit, or two scopes cannot be
    /// compared.
    pub fn parse(v: Option<&serde_json::Value>, policy: &ScopePolicy) -> Result<Scope, ScopeError> {
        let s = match v {
            None => return Err(ScopeError::Missing),
            Some(serde_json::Value::String(s)) => s,
            Some(_) => {
                return Err(ScopeError::Malformed(
                    "not a string of space-delimited values (RFC 8693 4.2)".into(),
                ))
            }
        };
        Scope::parse_str(s, policy)
    }

    /// Parse a space-delimited scope string.
    ///
    /// # Errors
    /// [`ScopeError`] when a scope value is malformed or over a limit, or two scopes cannot be
    /// compared.
    pub fn parse_str(s: &str, policy: &ScopePolicy) -> Result<Scope, ScopeError> {
        if s.is_empty() {
            return Err(ScopeError::Malformed(
                "empty (RFC 6749 3.3 needs at least one scope-token)".into(),
            ));
        }
        if s.len() > MAX_SCOPE_BYTES {
            return Err(ScopeError::Malformed(format!(
                "longer than {MAX_SCOPE_BYTES} bytes"
            )));
        }
        let mut values = BTreeSet::new();
        let mut dup = false;
        for (n, tok) in s.split(' ').enumerate() {
            if n >= MAX_SCOPE_VALUES {
                return Err(ScopeError::Malformed(format!(
                    "more than {MAX_SCOPE_VALUES} values"
                )));
            }
            if tok.is_empty() {
                return Err(ScopeError::Malformed(
                    "empty value (leading, trailing or doubled space; RFC 6749 3.3)".into(),
                ));
            }
            if let Some(c) = tok
                .chars()
                .find(|c| !matches!(*c as u32, 0x21 | 0x23..=0x5B | 0x5D..=0x7E))
            {
                return Err(ScopeError::Malformed(format!(
                    "value {} has {}, outside RFC 6749 3.3 scope-token",
                    crate::text::quoted(tok),
                    crate::text::quoted(&c.to_string())
                )));
            }
            if policy.mode == ScopeMode::Hierarchical {
                check_hierarchical(tok, &policy.separators)?;
            }
            if !values.insert(tok.to_owned()) {
                dup = true;
            }
        }
        Ok(Scope {
            values,
            had_duplicates: dup,
        })
    }

    /// The values as a space-delimited string (sorted).
    pub fn to_claim(&self) -> String {
        self.values.iter().cloned().collect::<Vec<_>>().join(" ")
    }

    /// True when every value of `child` is covered by a value of `self`.
    pub fn covers(&self, child: &Scope, policy: &ScopePolicy) -> bool {
        self.added_by(child, policy).is_empty()
    }

    /// Values of `child` that `self` does not cover (a widening).
    pub fn added_by(&self, child: &Scope, policy: &ScopePolicy) -> Vec<String> {
        child
            .values
            .iter()
            .filter(|c| !self.values.iter().any(|p| value_covers(p, c, policy)))
            .cloned()
            .collect()
    }

    /// Values of `self` that `child` no longer holds literally (a narrowing).
    pub fn removed_by(&self, child: &Scope) -> Vec<String> {
        self.values
            .iter()
            .filter(|p| !child.values.contains(*p))
            .cloned()
            .collect()
    }

    /// The intersection of several scopes: the values (from any of them)
    /// covered by every one, without values covered by another kept value.
    pub fn intersection(scopes: &[&Scope], policy: &ScopePolicy) -> Scope {
        let mut keep: BTreeSet<String> = BTreeSet::new();
        for s in scopes {
            for v in &s.values {
                if scopes
                    .iter()
                    .all(|o| o.values.iter().any(|p| value_covers(p, v, policy)))
                {
                    keep.insert(v.clone());
                }
            }
        }
        let minimal: BTreeSet<String> = keep
            .iter()
            .filter(|v| !keep.iter().any(|o| o != *v && value_covers(o, v, policy)))
            .cloned()
            .collect();
        Scope {
            values: minimal,
            had_duplicates: false,
        }
    }
}

fn check_hierarchical(tok: &str, seps: &[char]) -> Result<(), ScopeError> {
    let segs: Vec<&str> = tok.split(|c| seps.contains(&c)).collect();
    let last = segs.len().saturating_sub(1);
    for (i, seg) in segs.iter().enumerate() {
        // A leading separator ("/crypto") gives an empty first segment.
        if seg.is_empty() && i != 0 {
            return Err(ScopeError::Malformed(format!(
                "value {} has an empty segment",
                crate::text::quoted(tok)
            )));
        }
        if seg.contains('*') && !(*seg == "*" && i == last && i > 0) {
            return Err(ScopeError::Malformed(format!(
                "value {}: '*' is understood only as a whole final segment",
                crate::text::quoted(tok)
            )));
        }
    }
    if segs.len() == 1 && segs[0].is_empty() {
        return Err(ScopeError::Malformed(format!(
            "value {tok_q} is empty",
            tok_q = crate::text::quoted(tok)
        )));
    }
    Ok(())
}

/// Does scope value `p` cover value `c` under `policy`?
pub fn value_covers(p: &str, c: &str, policy: &ScopePolicy) -> bool {
    if p == c {
        return true;
    }
    if policy.mode == ScopeMode::Set {
        return false;
    }
    let seps = &policy.separators;
    // "prefix<sep>*" covers strict descendants of prefix.
    if let Some(base) = p.strip_suffix('*') {
        if base.ends_with(|ch| seps.contains(&ch)) {
            return c.len() > base.len() && c.starts_with(base);
        }
        return false;
    }
    match c.strip_prefix(p) {
        Some(rest) => rest.starts_with(|ch| seps.contains(&ch)),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h() -> ScopePolicy {
        ScopePolicy {
            mode: ScopeMode::Hierarchical,
            ..ScopePolicy::default()
        }
    }

    #[test]
    fn hierarchical_segments() {
        let p = h();
        assert!(value_covers("billing.read", "billing.read.invoices", &p));
        assert!(!value_covers("billing.read", "billing.reader", &p));
        assert!(value_covers("/crypto", "/crypto/sign", &p));
        assert!(!value_covers("/crypto", "/cryptocurrency", &p));
        assert!(value_covers("billing.read.*", "billing.read.x", &p));
        assert!(!value_covers("billing.read.*", "billing.read", &p));
        assert!(value_covers("billing.read", "billing.read.*", &p));
        assert!(!value_covers(
            "billing.read",
            "billing.read.invoices",
            &ScopePolicy::default()
        ));
        assert!(Scope::parse_str("a..b", &p).is_err());
        assert!(Scope::parse_str("a.*.b", &p).is_err());
        assert!(Scope::parse_str("a  b", &ScopePolicy::default()).is_err());
        assert!(Scope::parse_str("a\"b", &ScopePolicy::default()).is_err());
    }

    #[test]
    fn intersection_minimal() {
        let p = h();
        let a = Scope::parse_str("billing.read mail", &p).unwrap_or_default();
        let b = Scope::parse_str("billing.read.invoices calendar", &p).unwrap_or_default();
        let i = Scope::intersection(&[&a, &b], &p);
        assert_eq!(i.to_claim(), "billing.read.invoices");
    }
}
