//! Making untrusted values safe and stable to print in text output.
//!
//! Claims, key ids, labels and header values come from unverified input.
//! Printed raw, a C0/C1 control (e.g. `ESC [31m`) or a bidirectional
//! override (U+202E) can recolour a terminal or reorder what a reader sees
//! (Unicode TR #9; CVE-2021-42574 "Trojan Source"). Every text report writes
//! such values through [`escape_controls`]; values quoted inside a message
//! go through [`quoted`], never Rust's `{:?}` Debug form.

use std::borrow::Cow;
use std::fmt::Write as _;

/// True for a character that must not reach a terminal raw: C0 controls,
/// DEL, C1 controls, and the bidirectional embeddings, overrides and
/// isolates (U+202A..U+202E, U+2066..U+2069), plus the implicit marks
/// U+200E, U+200F and U+061C.
pub fn is_unsafe_char(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}')
}

fn escape(s: &str, keep_newlines: bool) -> Cow<'_, str> {
    let keep = |c: char| keep_newlines && (c == '\n' || c == '\t');
    if !s.chars().any(|c| is_unsafe_char(c) && !keep(c)) {
        return Cow::Borrowed(s);
    }
    let mut o = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if !is_unsafe_char(c) || keep(c) {
            o.push(c);
        } else if (c as u32) < 0x80 {
            let _ = write!(o, "\\x{:02x}", c as u32);
        } else {
            let _ = write!(o, "\\u{{{:04x}}}", c as u32);
        }
    }
    Cow::Owned(o)
}

/// The value with every unsafe character (see [`is_unsafe_char`]) written as
/// a visible escape: `\x1b` for ASCII controls, `\u{202e}` otherwise.
///
/// # Example
///
/// ```
/// use agentsig::text::escape_controls;
///
/// assert_eq!(escape_controls("plain"), "plain");
/// assert_eq!(escape_controls("bell\x07\n"), r"bell\x07\x0a");
/// ```
pub fn escape_controls(s: &str) -> Cow<'_, str> {
    escape(s, false)
}

/// Like [`escape_controls`] but keeps line feeds and tabs: for whole lines of
/// report text whose layout uses them.
pub fn escape_controls_keep_newlines(s: &str) -> Cow<'_, str> {
    escape(s, true)
}

/// A value quoted for a message: `"value"`, with `"` and `\` backslash-escaped
/// and unsafe characters escaped as in [`escape_controls`]. The same value
/// always prints the same way, in every error and report.
///
/// # Example
///
/// ```
/// use agentsig::text::quoted;
///
/// assert_eq!(quoted("kid-1"), r#""kid-1""#);
/// // Quotes are escaped, and a terminal escape sequence cannot reach the terminal.
/// assert_eq!(quoted("a\"b\x1b[2J"), r#""a\"b\x1b[2J""#);
/// // A right-to-left override is shown, not obeyed.
/// assert_eq!(quoted("abc\u{202e}"), r#""abc\u{202e}""#);
/// ```
pub fn quoted(s: &str) -> String {
    let e = escape_controls(s);
    let mut o = String::with_capacity(e.len() + 2);
    o.push('"');
    for c in e.chars() {
        if c == '"' {
            o.push_str("\\\"");
        } else {
            o.push(c);
        }
    }
    o.push('"');
    o
}

/// Several values, each [`quoted`], separated by `, ` (`(none)` when empty).
pub fn quoted_list<S: AsRef<str>>(v: &[S]) -> String {
    if v.is_empty() {
        return "(none)".into();
    }
    v.iter()
        .map(|s| quoted(s.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// An optional value [`quoted`], or `(none)`.
pub fn quoted_opt(v: Option<&str>) -> String {
    v.map_or_else(|| "(none)".into(), quoted)
}

/// The one wording for "no trusted key matched", shared by the JWS and
/// RFC 9421 verifiers: `no trusted key has kid "X"`, or
/// `no trusted key matches` when the signature names no key.
pub fn no_trusted_key(kid: Option<&str>) -> String {
    no_trusted_key_for(kid, None)
}

/// [`no_trusted_key`], saying which kid a trusted key is published under
/// when the kid asked for is that key's RFC 7638 thumbprint: the signer
/// named the key by its thumbprint, not by the kid its JWK Set gives it.
pub fn no_trusted_key_for(kid: Option<&str>, published_as: Option<&str>) -> String {
    match (kid, published_as) {
        (Some(k), Some(p)) => format!(
            "no trusted key has kid {}, but that is the RFC 7638 thumbprint of the trusted key published with kid {}: the signer named its key by thumbprint; sign with kid {} (the kid `agentsig keygen --kid` wrote beside the key)",
            quoted(k),
            quoted(p),
            quoted(p)
        ),
        (Some(k), None) => format!("no trusted key has kid {}", quoted(k)),
        (None, _) => "no trusted key matches".into(),
    }
}

/// Seconds since the epoch as an RFC 3339 UTC timestamp
/// (`2025-10-09T08:53:20Z`), by Howard Hinnant's `civil_from_days`.
///
/// # Example
///
/// ```
/// assert_eq!(agentsig::text::rfc3339(0), "1970-01-01T00:00:00Z");
/// assert_eq!(agentsig::text::rfc3339(1_760_000_000), "2025-10-09T08:53:20Z");
/// ```
pub fn rfc3339(t: i64) -> String {
    let days = t.div_euclid(86_400);
    let secs = t.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        (secs % 3600) / 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_terminal_and_bidi_controls() {
        assert_eq!(
            escape_controls("a\u{1b}[31mb\u{202e}c"),
            "a\\x1b[31mb\\u{202e}c"
        );
        assert_eq!(escape_controls("x\ny\u{85}\u{7f}"), "x\\x0ay\\u{0085}\\x7f");
        assert_eq!(
            escape_controls_keep_newlines("x\ny\u{2066}"),
            "x\ny\\u{2066}"
        );
        assert!(matches!(escape_controls("plain é"), Cow::Borrowed(_)));
    }

    #[test]
    fn quotes_stably() {
        assert_eq!(quoted("a\"b\\c"), "\"a\\\"b\\c\"");
        assert_eq!(quoted("k\u{1b}"), "\"k\\x1b\"");
    }

    #[test]
    fn rfc3339_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_760_000_000), "2025-10-09T08:53:20Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(-1), "1969-12-31T23:59:59Z");
    }
}
