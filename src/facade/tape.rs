//! A report in a compact form a JavaScript host reads without `JSON.parse`:
//! the same values, in the same order, as the report's `--json` text (the
//! serializer is `serde_json`'s, only its output format differs), for a
//! binding that builds the report object itself (the WebAssembly package's
//! `agentsig.js`, `reportOfTape`). The format, one string:
//!
//! * `n`, `t`, `f`: null, true, false;
//! * `#` a number's JSON text `;`;
//! * `"` a string's characters, ended by NUL (U+0000); `x` the same for a
//!   string that holds NUL, each NUL within it doubled;
//! * `[` values `]`: an array;
//! * `{` (key value)... `}`: an object, a key either `k` and one character
//!   whose code less 32 is its index in [`REPORT_KEYS`], or a string as
//!   above.
//!
//! A string's characters are its own, unescaped: a host slices them out
//! (found by the NUL that ends them) with no escapes to undo, and a key of
//! [`REPORT_KEYS`] is a name the host already holds.
//!
//! ```
//! use agentsig::facade::tape::report_tape;
//! use agentsig::report::{Report, Verdict};
//!
//! let mut r = Report::done("http verify", None);
//! r.set_verdict(Verdict::Verified);
//! let t = report_tape(&r)?;
//! assert!(t.starts_with("{k\u{20}\"agentsig.report/1\u{0}"));
//! # Ok::<(), agentsig::facade::Failure>(())
//! ```

use super::{Failure, Outcome};
use crate::report::Report;
use serde::Serialize;
use serde_json::ser::{CharEscape, Formatter};
use std::io;

/// The member names a report's objects use most, by index (the `k` form):
/// the report's own (`docs/report.schema.json`) and those of the Web Bot
/// Auth details. A name not here is written as a string; the list is only
/// ever appended to (a host holds it by index).
pub const REPORT_KEYS: [&str; 44] = [
    "schema",
    "command",
    "subject",
    "verdict",
    "verified",
    "signatures",
    "checks",
    "error",
    "details",
    "kind",
    "id",
    "algorithm",
    "kid",
    "key",
    "source",
    "from",
    "thumbprint",
    "covered",
    "created",
    "expires",
    "reason",
    "code",
    "message",
    "severity",
    "passed",
    "hop",
    "pointer",
    "web_bot_auth",
    "status",
    "agent",
    "key_set_url",
    "label",
    "legacy_signature_agent",
    "agent_urls",
    "valid",
    "agent_url",
    "profile",
    "signers",
    "scheme",
    "identity",
    "alg",
    "content_digest",
    "components",
    "nonce",
];

/// The longest name of [`REPORT_KEYS`] and more.
const MAX_KEY_LEN: usize = 32;

/// The index of `name` in [`REPORT_KEYS`]: the names of its length only
/// are compared (a report has some forty members; each was compared with
/// every name of the table, about a third of the tape's time).
fn key_index(name: &[u8]) -> Option<u8> {
    static BY_LEN: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
    let by_len = BY_LEN.get_or_init(|| {
        let mut v = vec![Vec::new(); MAX_KEY_LEN + 1];
        for (i, k) in REPORT_KEYS.iter().enumerate() {
            if let (Some(b), Ok(i)) = (v.get_mut(k.len()), u8::try_from(i)) {
                b.push(i);
            }
        }
        v
    });
    by_len
        .get(name.len())?
        .iter()
        .copied()
        .find(|&i| REPORT_KEYS[usize::from(i)].as_bytes() == name)
}

/// `serde_json`'s formatter events written as the tape (the writer it is
/// handed is a sink: the tape goes to `out`).
struct Tape<'a> {
    out: &'a mut Vec<u8>,
    /// Within a string (a number is then its digits only: an integer map
    /// key).
    in_string: bool,
    /// Where the string being written starts (its tag).
    string_at: usize,
}

impl Tape<'_> {
    /// A number: `#`, its text, `;` (within a string, its text alone).
    fn number(&mut self, text: std::fmt::Arguments<'_>) -> io::Result<()> {
        use std::io::Write as _;
        if !self.in_string {
            self.out.push(b'#');
        }
        self.out.write_fmt(text)?;
        if !self.in_string {
            self.out.push(b';');
        }
        Ok(())
    }
}

macro_rules! numbers {
    ($($f:ident: $t:ty),*) => {$(
        fn $f<W: ?Sized + io::Write>(&mut self, _: &mut W, v: $t) -> io::Result<()> {
            self.number(format_args!("{v}"))
        }
    )*};
}

impl Formatter for Tape<'_> {
    fn write_null<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.out.push(b'n');
        Ok(())
    }
    fn write_bool<W: ?Sized + io::Write>(&mut self, _: &mut W, v: bool) -> io::Result<()> {
        self.out.push(if v { b't' } else { b'f' });
        Ok(())
    }
    numbers!(write_i8: i8, write_i16: i16, write_i32: i32, write_i64: i64, write_i128: i128,
        write_u8: u8, write_u16: u16, write_u32: u32, write_u64: u64, write_u128: u128);
    fn write_f32<W: ?Sized + io::Write>(&mut self, w: &mut W, v: f32) -> io::Result<()> {
        self.write_f64(w, f64::from(v))
    }
    fn write_f64<W: ?Sized + io::Write>(&mut self, _: &mut W, v: f64) -> io::Result<()> {
        // The shortest text that reads back as `v` (a host's number parse
        // gives the same double as its JSON parse of serde_json's text).
        self.number(format_args!("{v:?}"))
    }
    fn write_number_str<W: ?Sized + io::Write>(&mut self, _: &mut W, v: &str) -> io::Result<()> {
        self.number(format_args!("{v}"))
    }
    fn begin_string<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.in_string = true;
        self.string_at = self.out.len();
        self.out.push(b'"');
        Ok(())
    }
    fn end_string<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.in_string = false;
        self.out.push(0);
        Ok(())
    }
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        _: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        self.out.extend_from_slice(fragment.as_bytes());
        Ok(())
    }
    fn write_char_escape<W: ?Sized + io::Write>(
        &mut self,
        _: &mut W,
        e: CharEscape,
    ) -> io::Result<()> {
        let c = match e {
            CharEscape::Quote => b'"',
            CharEscape::ReverseSolidus => b'\\',
            CharEscape::Solidus => b'/',
            CharEscape::Backspace => 8,
            CharEscape::FormFeed => 12,
            CharEscape::LineFeed => b'\n',
            CharEscape::CarriageReturn => b'\r',
            CharEscape::Tab => b'\t',
            CharEscape::AsciiControl(c) => c,
        };
        if c == 0 {
            // The string's NUL doubled, its tag `x`.
            self.out[self.string_at] = b'x';
            self.out.push(0);
        }
        self.out.push(c);
        Ok(())
    }
    fn begin_array<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.out.push(b'[');
        Ok(())
    }
    fn end_array<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.out.push(b']');
        Ok(())
    }
    fn begin_array_value<W: ?Sized + io::Write>(&mut self, _: &mut W, _: bool) -> io::Result<()> {
        Ok(())
    }
    fn end_array_value<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        Ok(())
    }
    fn begin_object<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.out.push(b'{');
        Ok(())
    }
    fn end_object<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.out.push(b'}');
        Ok(())
    }
    fn begin_object_key<W: ?Sized + io::Write>(&mut self, _: &mut W, _: bool) -> io::Result<()> {
        Ok(())
    }
    fn end_object_key<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        // A key of the table in its short form (a string key's text lies
        // between its tag and its NUL).
        let at = self.string_at;
        let end = self.out.len();
        if end > at + 1 && self.out[at] == b'"' {
            if let Some(i) = key_index(&self.out[at + 1..end - 1]) {
                self.out.truncate(at);
                self.out.push(b'k');
                self.out.push(i + 32);
            }
        }
        Ok(())
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        Ok(())
    }
    fn end_object_value<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        Ok(())
    }
    fn write_byte_array<W: ?Sized + io::Write>(&mut self, w: &mut W, v: &[u8]) -> io::Result<()> {
        self.begin_array(w)?;
        for b in v {
            self.write_u8(w, *b)?;
        }
        self.end_array(w)
    }
    fn write_raw_fragment<W: ?Sized + io::Write>(&mut self, _: &mut W, _: &str) -> io::Result<()> {
        // A raw JSON value has no tape form; no report holds one.
        Err(io::Error::other("a raw JSON value in a report"))
    }
}

/// A report in the tape form (this module's documentation).
///
/// # Errors
/// `internal` if it cannot be serialized.
pub fn report_tape(r: &Report) -> Outcome<String> {
    let mut out = Vec::with_capacity(512);
    let tape = Tape {
        out: &mut out,
        in_string: false,
        string_at: 0,
    };
    let mut ser = serde_json::Serializer::with_formatter(io::sink(), tape);
    r.serialize(&mut ser)
        .map_err(|e| Failure::bad_input("internal", format!("report: {e}")))?;
    String::from_utf8(out).map_err(|e| Failure::bad_input("internal", format!("report: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// The tape read back, as a host reads it.
    fn read(t: &str) -> Value {
        fn string(b: &[u8], at: &mut usize, doubled: bool) -> String {
            let mut s = Vec::new();
            loop {
                let c = b[*at];
                *at += 1;
                if c == 0 {
                    if doubled && b.get(*at) == Some(&0) {
                        *at += 1;
                    } else {
                        break;
                    }
                }
                s.push(c);
            }
            String::from_utf8(s).unwrap()
        }
        fn value(b: &[u8], at: &mut usize) -> Value {
            let c = b[*at];
            *at += 1;
            match c {
                b'n' => Value::Null,
                b't' => Value::Bool(true),
                b'f' => Value::Bool(false),
                b'#' => {
                    let end = *at + b[*at..].iter().position(|&c| c == b';').unwrap();
                    let v = serde_json::from_slice(&b[*at..end]).unwrap();
                    *at = end + 1;
                    v
                }
                b'"' | b'x' => Value::String(string(b, at, c == b'x')),
                b'[' => {
                    let mut a = Vec::new();
                    while b[*at] != b']' {
                        a.push(value(b, at));
                    }
                    *at += 1;
                    Value::Array(a)
                }
                b'{' => {
                    let mut m = serde_json::Map::new();
                    while b[*at] != b'}' {
                        let k = match b[*at] {
                            b'k' => {
                                *at += 2;
                                REPORT_KEYS[usize::from(b[*at - 1] - 32)].to_owned()
                            }
                            q => {
                                *at += 1;
                                string(b, at, q == b'x')
                            }
                        };
                        m.insert(k, value(b, at));
                    }
                    *at += 1;
                    Value::Object(m)
                }
                other => panic!("tag {other}"),
            }
        }
        let mut at = 0;
        let v = value(t.as_bytes(), &mut at);
        assert_eq!(at, t.len());
        v
    }

    #[test]
    fn a_tape_reads_back_as_the_reports_json() {
        let mut r = Report::done("web-bot-auth verify", Some("https://a.example/\u{0}\u{e9}"));
        r.detail_value(
            "web_bot_auth",
            json!({"status": "verified", "odd \"key\"\n": [1, -2, 2.5, 1e300, null, true, false],
                "nul\u{0}\u{0}key": {}, "\u{1f600}": "tab\tquote\"back\\slash/\u{1}"}),
        );
        r.detail_value("n", json!(18_446_744_073_709_551_615u64));
        let t = report_tape(&r).unwrap();
        let want = serde_json::to_value(&r).unwrap();
        assert_eq!(read(&t), want);
        // The same order of members as the JSON text.
        assert_eq!(read(&t).to_string(), serde_json::to_string(&r).unwrap());
        assert!(t.contains("k\u{20}"), "{t:?}");
        assert!(
            t.contains("xhttps://a.example/\u{0}\u{0}\u{e9}\u{0}"),
            "{t:?}"
        );
    }

    #[test]
    fn key_indices_fit_one_printable_character() {
        assert!(REPORT_KEYS.len() + 32 < 127);
        assert!(REPORT_KEYS.iter().all(|k| k.len() <= MAX_KEY_LEN));
        for (i, k) in REPORT_KEYS.iter().enumerate() {
            assert_eq!(key_index(k.as_bytes()).map(usize::from), Some(i));
        }
        assert_eq!(key_index(b"schemas"), None);
        let mut seen = std::collections::HashSet::new();
        assert!(REPORT_KEYS.iter().all(|k| seen.insert(k)));
    }
}
