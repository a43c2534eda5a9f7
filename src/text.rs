//! Safe text for people: every value that came from input (a `kid`, an
//! issuer, a label, a header) is escaped before it reaches a terminal, so a
//! hostile value cannot move the cursor, recolour the screen or reorder what
//! follows it (ANSI escapes, C0/C1 controls, Unicode bidi overrides).

use std::borrow::Cow;

/// Whether `c` must not reach a terminal as is: C0 and C1 controls, DEL, and
/// the Unicode bidirectional embedding, override and isolate controls
/// (U+202A..U+202E, U+2066..U+2069) plus the marks U+200E/U+200F/U+061C.
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}'
        )
}

/// `s` with every unsafe character written as `\u{XXXX}` (and `\\` for a
/// backslash, so the escape is unambiguous). Safe text is returned as is.
///
/// ```
/// assert_eq!(agentsig::text::escape("kid-1"), "kid-1");
/// assert_eq!(agentsig::text::escape("a\u{1b}[31m"), "a\\u{1b}[31m");
/// ```
pub fn escape(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| is_unsafe(c) || c == '\\') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c == '\\' {
            out.push_str("\\\\");
        } else if is_unsafe(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `s` escaped and in double quotes: the one way agentsig shows an
/// input value inside a sentence (never Rust's `{:?}`).
///
/// ```
/// assert_eq!(agentsig::text::quote("k1"), "\"k1\"");
/// ```
pub fn quote(s: &str) -> String {
    let e = escape(s);
    let mut out = String::with_capacity(e.len() + 2);
    out.push('"');
    for c in e.chars() {
        if c == '"' {
            out.push_str("\\\"");
        } else {
            out.push(c);
        }
    }
    out.push('"');
    out
}

/// An RFC 3339 UTC timestamp (`2026-11-23T15:04:05Z`) for a Unix time, for
/// text output; `--json` carries the Unix value.
///
/// ```
/// assert_eq!(agentsig::text::rfc3339(0), "1970-01-01T00:00:00Z");
/// assert_eq!(agentsig::text::rfc3339(1618884473), "2021-04-20T02:07:53Z");
/// ```
pub fn rfc3339(t: i64) -> String {
    let days = t.div_euclid(86_400);
    let secs = t.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
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
    fn escapes_terminal_controls_and_bidi() {
        assert_eq!(escape("\u{1b}[2J"), "\\u{1b}[2J");
        assert_eq!(escape("a\u{202e}b"), "a\\u{202e}b");
        assert_eq!(escape("\u{85}"), "\\u{85}");
        assert_eq!(escape("x\\u{1b}"), "x\\\\u{1b}");
        assert_eq!(quote("a\"b\n"), "\"a\\\"b\\u{a}\"");
    }

    #[test]
    fn rfc3339_dates() {
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(-1), "1969-12-31T23:59:59Z");
        assert_eq!(rfc3339(4_102_444_800), "2100-01-01T00:00:00Z");
    }
}
