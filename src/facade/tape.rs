//! A report in a compact form a JavaScript host reads without `JSON.parse`:
//! the same values, in the same order, as the report's `--json` text (the
//! report's own `serde::Serialize`, written by this module's serializer,
//! which follows `serde_json`'s rules for what it writes: only the output
//! format differs), for a binding that builds the report object itself
//! (the WebAssembly package's `agentsig.js`, `reportOfTape`). The format,
//! one string:
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

/// The index of `name` in [`REPORT_KEYS`] (a `match`, which the compiler
/// turns into comparisons by length and bytes: a report has some forty
/// members, each looked up; a test checks it against the table).
fn key_index(name: &[u8]) -> Option<u8> {
    Some(match name {
        b"schema" => 0,
        b"command" => 1,
        b"subject" => 2,
        b"verdict" => 3,
        b"verified" => 4,
        b"signatures" => 5,
        b"checks" => 6,
        b"error" => 7,
        b"details" => 8,
        b"kind" => 9,
        b"id" => 10,
        b"algorithm" => 11,
        b"kid" => 12,
        b"key" => 13,
        b"source" => 14,
        b"from" => 15,
        b"thumbprint" => 16,
        b"covered" => 17,
        b"created" => 18,
        b"expires" => 19,
        b"reason" => 20,
        b"code" => 21,
        b"message" => 22,
        b"severity" => 23,
        b"passed" => 24,
        b"hop" => 25,
        b"pointer" => 26,
        b"web_bot_auth" => 27,
        b"status" => 28,
        b"agent" => 29,
        b"key_set_url" => 30,
        b"label" => 31,
        b"legacy_signature_agent" => 32,
        b"agent_urls" => 33,
        b"valid" => 34,
        b"agent_url" => 35,
        b"profile" => 36,
        b"signers" => 37,
        b"scheme" => 38,
        b"identity" => 39,
        b"alg" => 40,
        b"content_digest" => 41,
        b"components" => 42,
        b"nonce" => 43,
        _ => return None,
    })
}

/// The tape's serializer: a [`serde::Serializer`] writing straight into
/// `out`. A string is copied as it is (only a NUL within it needs a
/// change: the `x` form), so no byte is examined for JSON's escapes, and a
/// member name is looked up in [`REPORT_KEYS`] as it is written; the values
/// and their order are the ones `serde_json`'s serializer gives the same
/// value (its rules for what it writes as null and for map keys), so the
/// tape holds what the `--json` text holds.
struct Tape<'a> {
    out: &'a mut Vec<u8>,
}

/// Why a value has no tape form (as `serde_json` refuses it: a map key
/// that is not a string, or a value's own error).
#[derive(Debug)]
struct TapeError(String);

impl std::fmt::Display for TapeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TapeError {}

impl serde::ser::Error for TapeError {
    fn custom<T: std::fmt::Display>(msg: T) -> TapeError {
        TapeError(msg.to_string())
    }
}

impl Tape<'_> {
    /// A string: `"`, its bytes, NUL; with a NUL within it, `x` and each
    /// NUL doubled.
    fn string(&mut self, s: &str) {
        let b = s.as_bytes();
        if b.contains(&0) {
            self.out.push(b'x');
            for part in b.split(|&c| c == 0) {
                self.out.extend_from_slice(part);
                self.out.extend_from_slice(&[0, 0]);
            }
            // The last part's doubled NUL is the end: one NUL.
            self.out.pop();
        } else {
            self.out.push(b'"');
            self.out.extend_from_slice(b);
            self.out.push(0);
        }
    }

    /// A member name: `k` and its index in [`REPORT_KEYS`], or a string.
    fn key(&mut self, name: &str) {
        match key_index(name.as_bytes()) {
            Some(i) => self.out.extend_from_slice(&[b'k', i + 32]),
            None => self.string(name),
        }
    }

    /// A number: `#`, its text, `;`.
    fn number(&mut self, text: std::fmt::Arguments<'_>) -> Result<(), TapeError> {
        use std::io::Write as _;
        self.out.push(b'#');
        self.out
            .write_fmt(text)
            .map_err(|e| TapeError(e.to_string()))?;
        self.out.push(b';');
        Ok(())
    }
}

impl Tape<'_> {
    /// A floating-point number: the shortest text that reads back as it,
    /// as serde_json's (a host's number parse gives the same double as its
    /// JSON parse of serde_json's text); a NaN or an infinity null, as
    /// serde_json writes them.
    fn float(&mut self, finite: bool, text: std::fmt::Arguments<'_>) -> Result<(), TapeError> {
        if finite {
            self.number(text)
        } else {
            self.out.push(b'n');
            Ok(())
        }
    }
}

macro_rules! numbers {
    ($($f:ident: $t:ty),*) => {$(
        fn $f(self, v: $t) -> Result<(), TapeError> {
            self.number(format_args!("{v}"))
        }
    )*};
}

impl serde::Serializer for &mut Tape<'_> {
    type Ok = ();
    type Error = TapeError;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    fn serialize_bool(self, v: bool) -> Result<(), TapeError> {
        self.out.push(if v { b't' } else { b'f' });
        Ok(())
    }
    numbers!(serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64,
        serialize_i128: i128, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
        serialize_u64: u64, serialize_u128: u128);
    fn serialize_f32(self, v: f32) -> Result<(), TapeError> {
        self.float(v.is_finite(), format_args!("{v:?}"))
    }
    fn serialize_f64(self, v: f64) -> Result<(), TapeError> {
        self.float(v.is_finite(), format_args!("{v:?}"))
    }
    fn serialize_char(self, v: char) -> Result<(), TapeError> {
        self.string(v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result<(), TapeError> {
        self.string(v);
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), TapeError> {
        // As serde_json: an array of numbers.
        self.out.push(b'[');
        for b in v {
            self.number(format_args!("{b}"))?;
        }
        self.out.push(b']');
        Ok(())
    }
    fn serialize_none(self) -> Result<(), TapeError> {
        self.serialize_unit()
    }
    fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> Result<(), TapeError> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), TapeError> {
        self.out.push(b'n');
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), TapeError> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), TapeError> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), TapeError> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<(), TapeError> {
        self.out.push(b'{');
        self.key(variant);
        v.serialize(&mut *self)?;
        self.out.push(b'}');
        Ok(())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self, TapeError> {
        self.out.push(b'[');
        Ok(self)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self, TapeError> {
        self.serialize_seq(None)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self, TapeError> {
        self.serialize_seq(None)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self, TapeError> {
        self.out.push(b'{');
        self.key(variant);
        self.serialize_seq(None)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self, TapeError> {
        self.out.push(b'{');
        Ok(self)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, TapeError> {
        self.serialize_map(None)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self, TapeError> {
        self.out.push(b'{');
        self.key(variant);
        self.serialize_map(None)
    }
}

// The compound parts of a value: an array's elements (a sequence, a tuple,
// a tuple struct or variant) and an object's named fields (a struct or a
// struct variant), each written as it comes; `end` closes the array or
// object (and, for a variant, the object naming it).
macro_rules! elements {
    ($($part:ident :: $add:ident => $end:expr),*) => {$(
        impl serde::ser::$part for &mut Tape<'_> {
            type Ok = ();
            type Error = TapeError;
            fn $add<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), TapeError> {
                v.serialize(&mut **self)
            }
            fn end(self) -> Result<(), TapeError> {
                self.out.extend_from_slice($end);
                Ok(())
            }
        }
    )*};
}

elements!(
    SerializeSeq::serialize_element => b"]",
    SerializeTuple::serialize_element => b"]",
    SerializeTupleStruct::serialize_field => b"]",
    SerializeTupleVariant::serialize_field => b"]}"
);

macro_rules! fields {
    ($($part:ident => $end:expr),*) => {$(
        impl serde::ser::$part for &mut Tape<'_> {
            type Ok = ();
            type Error = TapeError;
            fn serialize_field<T: ?Sized + Serialize>(
                &mut self,
                name: &'static str,
                v: &T,
            ) -> Result<(), TapeError> {
                self.key(name);
                v.serialize(&mut **self)
            }
            fn end(self) -> Result<(), TapeError> {
                self.out.extend_from_slice($end);
                Ok(())
            }
        }
    )*};
}

fields!(SerializeStruct => b"}", SerializeStructVariant => b"}}");

impl serde::ser::SerializeMap for &mut Tape<'_> {
    type Ok = ();
    type Error = TapeError;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, k: &T) -> Result<(), TapeError> {
        k.serialize(MapKey(self))
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), TapeError> {
        v.serialize(&mut **self)
    }
    fn end(self) -> Result<(), TapeError> {
        self.out.push(b'}');
        Ok(())
    }
}

/// A map's key, as `serde_json` takes one: a string (a unit variant's
/// name, a char), or an integer, a bool or a finite number written as its
/// text; anything else is refused.
struct MapKey<'t, 'a>(&'t mut Tape<'a>);

fn key_must_be_a_string() -> TapeError {
    TapeError("key must be a string".into())
}

impl MapKey<'_, '_> {
    /// A floating-point key: its text, as serde_json writes it; a NaN or an
    /// infinity refused, as serde_json refuses them.
    fn float(self, finite: bool, text: std::fmt::Arguments<'_>) -> Result<(), TapeError> {
        if !finite {
            return Err(TapeError(
                "float key must be finite (got NaN or +/-inf)".into(),
            ));
        }
        self.0.key(&text.to_string());
        Ok(())
    }
}

macro_rules! integer_keys {
    ($($f:ident: $t:ty),*) => {$(
        fn $f(self, v: $t) -> Result<(), TapeError> {
            self.0.key(&v.to_string());
            Ok(())
        }
    )*};
}

macro_rules! refused_keys {
    ($($f:ident: $t:ty),*) => {$(
        fn $f(self, _: $t) -> Result<(), TapeError> {
            Err(key_must_be_a_string())
        }
    )*};
}

impl serde::Serializer for MapKey<'_, '_> {
    type Ok = ();
    type Error = TapeError;
    type SerializeSeq = serde::ser::Impossible<(), TapeError>;
    type SerializeTuple = serde::ser::Impossible<(), TapeError>;
    type SerializeTupleStruct = serde::ser::Impossible<(), TapeError>;
    type SerializeTupleVariant = serde::ser::Impossible<(), TapeError>;
    type SerializeMap = serde::ser::Impossible<(), TapeError>;
    type SerializeStruct = serde::ser::Impossible<(), TapeError>;
    type SerializeStructVariant = serde::ser::Impossible<(), TapeError>;

    fn serialize_str(self, v: &str) -> Result<(), TapeError> {
        self.0.key(v);
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result<(), TapeError> {
        self.0.key(v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_bool(self, v: bool) -> Result<(), TapeError> {
        self.0.key(if v { "true" } else { "false" });
        Ok(())
    }
    integer_keys!(serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64,
        serialize_i128: i128, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
        serialize_u64: u64, serialize_u128: u128);
    refused_keys!(serialize_bytes: &[u8]);
    fn serialize_f32(self, v: f32) -> Result<(), TapeError> {
        self.float(v.is_finite(), format_args!("{v:?}"))
    }
    fn serialize_f64(self, v: f64) -> Result<(), TapeError> {
        self.float(v.is_finite(), format_args!("{v:?}"))
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), TapeError> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), TapeError> {
        v.serialize(self)
    }
    fn serialize_none(self) -> Result<(), TapeError> {
        Err(key_must_be_a_string())
    }
    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<(), TapeError> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit(self) -> Result<(), TapeError> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), TapeError> {
        Err(key_must_be_a_string())
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), TapeError> {
        Err(key_must_be_a_string())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, TapeError> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, TapeError> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, TapeError> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, TapeError> {
        Err(key_must_be_a_string())
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, TapeError> {
        Err(key_must_be_a_string())
    }
    fn serialize_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, TapeError> {
        Err(key_must_be_a_string())
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, TapeError> {
        Err(key_must_be_a_string())
    }
}

/// A report in the tape form (this module's documentation).
///
/// # Errors
/// `internal` if it cannot be serialized.
pub fn report_tape(r: &Report) -> Outcome<String> {
    tape_of(r)
}

/// Any value in the tape form: a report, or a view of one with the same
/// members and values (`webbotauth::Report::verified_view`).
///
/// # Errors
/// `internal` if it cannot be serialized.
pub(crate) fn tape_of(r: &impl Serialize) -> Outcome<String> {
    let mut out = Vec::with_capacity(1024);
    r.serialize(&mut Tape { out: &mut out })
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
    fn every_serde_shape_reads_back_as_serde_jsons_text() {
        use serde::Serialize;
        use std::collections::BTreeMap;
        #[derive(Serialize)]
        enum E {
            Unit,
            New(i8),
            Tuple(u16, &'static str),
            Struct { kind: char, hop: Option<u32> },
        }
        #[derive(Serialize)]
        struct Pair(i32, bool);
        #[derive(Serialize)]
        struct Unit;
        #[derive(Serialize)]
        struct All {
            enums: Vec<E>,
            pair: Pair,
            unit: Unit,
            tuple: (u64, i128, f32, f64),
            #[serde(with = "serde_bytes_as_slice")]
            bytes: Vec<u8>,
            int_keys: BTreeMap<i64, &'static str>,
            bool_keys: BTreeMap<bool, u8>,
            none: Option<String>,
            nan: f64,
            nul: &'static str,
        }
        mod serde_bytes_as_slice {
            pub fn serialize<S: serde::Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(v)
            }
        }
        let v = All {
            enums: vec![
                E::Unit,
                E::New(-8),
                E::Tuple(7, "t"),
                E::Struct {
                    kind: '\u{e9}',
                    hop: None,
                },
            ],
            pair: Pair(-1, true),
            unit: Unit,
            tuple: (u64::MAX, i128::MIN, 0.1, -2.5e-300),
            bytes: vec![0, 1, 255],
            int_keys: BTreeMap::from([(-3, "a"), (12, "b")]),
            bool_keys: BTreeMap::from([(false, 0), (true, 1)]),
            none: None,
            nan: f64::NAN,
            nul: "\u{0}a\u{0}\u{0}",
        };
        let mut out = Vec::new();
        v.serialize(&mut Tape { out: &mut out }).unwrap();
        let t = String::from_utf8(out).unwrap();
        let text = serde_json::to_string(&v).unwrap();
        let want: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(read(&t), want, "{t:?}");
        assert_eq!(read(&t).to_string(), want.to_string());
        // A key serde_json refuses is refused.
        let bad = BTreeMap::from([(vec![1u8], 1u8)]);
        assert!(serde_json::to_string(&bad).is_err());
        assert!(bad
            .serialize(&mut Tape {
                out: &mut Vec::new()
            })
            .is_err());
    }

    #[test]
    fn key_indices_fit_one_printable_character() {
        assert!(REPORT_KEYS.len() + 32 < 127);
        for (i, k) in REPORT_KEYS.iter().enumerate() {
            assert_eq!(key_index(k.as_bytes()).map(usize::from), Some(i));
        }
        assert_eq!(key_index(b"schemas"), None);
        let mut seen = std::collections::HashSet::new();
        assert!(REPORT_KEYS.iter().all(|k| seen.insert(k)));
    }
}
