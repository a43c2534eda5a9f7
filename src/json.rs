//! Strict I-JSON (RFC 7493) parsing for everything agentsig reads as JSON:
//! descriptors, JWS headers, JWT claims, JWKs.
//!
//! Refused, each with an error that names the place: duplicate member names
//! (RFC 7493 section 2.3; RFC 8785 section 3.1 requires I-JSON input), invalid
//! UTF-8 and lone surrogates (2.1), numbers that are not finite doubles, and
//! integers outside ±(2^53−1) (2.2). Size and nesting depth are bounded.

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::fmt;

/// Bounds on untrusted JSON.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Maximum input size in bytes.
    pub max_bytes: usize,
    /// Maximum nesting depth of arrays and objects.
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 16 * 1024 * 1024,
            max_depth: 100,
        }
    }
}

/// Why input is not strict I-JSON.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonError {
    #[error("input of {size} bytes exceeds the limit of {limit} bytes")]
    TooLarge { size: usize, limit: usize },
    #[error("invalid UTF-8 at byte {offset}")]
    InvalidUtf8 { offset: usize },
    #[error("JSON syntax error at line {line}, column {column}: {message}")]
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("duplicate member name {name:?} at {pointer} (line {line}, column {column})")]
    DuplicateMember {
        pointer: String,
        name: String,
        line: usize,
        column: usize,
    },
    #[error("lone surrogate in a string at line {line}, column {column}")]
    LoneSurrogate { line: usize, column: usize },
    #[error("number {text} at line {line}, column {column} is not an I-JSON number: {reason}")]
    Number {
        text: String,
        reason: &'static str,
        line: usize,
        column: usize,
    },
    #[error("nesting deeper than {limit} at line {line}, column {column}")]
    TooDeep {
        limit: usize,
        line: usize,
        column: usize,
    },
}

/// Parse strict I-JSON with the default [`Limits`].
pub fn parse_strict(input: &[u8]) -> Result<Value, JsonError> {
    parse_strict_with(input, &Limits::default())
}

/// Parse strict I-JSON.
pub fn parse_strict_with(input: &[u8], limits: &Limits) -> Result<Value, JsonError> {
    if input.len() > limits.max_bytes {
        return Err(JsonError::TooLarge {
            size: input.len(),
            limit: limits.max_bytes,
        });
    }
    let text = std::str::from_utf8(input).map_err(|e| JsonError::InvalidUtf8 {
        offset: e.valid_up_to(),
    })?;
    let mut de = serde_json::Deserializer::from_str(text);
    let mut path = Vec::new();
    let seed = StrictSeed {
        depth: 0,
        limits,
        path: &mut path,
    };
    let v = seed.deserialize(&mut de).map_err(|e| classify(e, text))?;
    de.end().map_err(|e| classify(e, text))?;
    Ok(v)
}

// Errors travel through serde as a tagged message; classify() turns them back.
const TAG_DUP: &str = "\u{1}dup\u{1}";
const TAG_NUM: &str = "\u{1}num\u{1}";
const TAG_DEEP: &str = "\u{1}deep\u{1}";

fn classify(e: serde_json::Error, _text: &str) -> JsonError {
    let (line, column) = (e.line(), e.column());
    let msg = e.to_string();
    if let Some(rest) = msg.strip_prefix(TAG_DUP) {
        let rest = strip_position(rest);
        let (pointer, name) = rest.split_once('\u{1}').unwrap_or((rest, ""));
        return JsonError::DuplicateMember {
            pointer: pointer.to_owned(),
            name: name.to_owned(),
            line,
            column,
        };
    }
    if let Some(rest) = msg.strip_prefix(TAG_NUM) {
        let rest = strip_position(rest);
        let (text, reason) = rest.split_once('\u{1}').unwrap_or((rest, ""));
        let reason = match reason {
            "big" => "integer outside ±(2^53−1)",
            _ => "not a finite double",
        };
        return JsonError::Number {
            text: text.to_owned(),
            reason,
            line,
            column,
        };
    }
    if let Some(rest) = msg.strip_prefix(TAG_DEEP) {
        let limit = strip_position(rest).parse().unwrap_or(0);
        return JsonError::TooDeep {
            limit,
            line,
            column,
        };
    }
    // serde_json 1.0.15x reports a lead surrogate not followed by a
    // `\u` trail as "unexpected end of hex escape" (no "surrogate" in it).
    if msg.contains("lone leading surrogate") || msg.contains("unexpected end of hex escape") {
        return JsonError::LoneSurrogate { line, column };
    }
    if msg.contains("surrogate") {
        return JsonError::LoneSurrogate { line, column };
    }
    if msg.contains("number out of range") {
        return JsonError::Number {
            text: String::from("(overflow)"),
            reason: "not a finite double",
            line,
            column,
        };
    }
    let message = match msg.find(" at line ") {
        Some(i) => msg[..i].to_owned(),
        None => msg,
    };
    JsonError::Syntax {
        line,
        column,
        message,
    }
}

fn strip_position(s: &str) -> &str {
    match s.rfind(" at line ") {
        Some(i) => &s[..i],
        None => s,
    }
}

/// RFC 6901 JSON pointer of a path.
pub fn pointer(path: &[String]) -> String {
    if path.is_empty() {
        return String::from("/");
    }
    let mut s = String::new();
    for p in path {
        s.push('/');
        s.push_str(&p.replace('~', "~0").replace('/', "~1"));
    }
    s
}

struct StrictSeed<'a> {
    depth: usize,
    limits: &'a Limits,
    path: &'a mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for StrictSeed<'_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

const MAX_SAFE: u64 = (1u64 << 53) - 1;

impl<'de> Visitor<'de> for StrictSeed<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        if v.unsigned_abs() > MAX_SAFE {
            return Err(E::custom(format!("{TAG_NUM}{v}\u{1}big")));
        }
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        if v > MAX_SAFE {
            return Err(E::custom(format!("{TAG_NUM}{v}\u{1}big")));
        }
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        match Number::from_f64(v) {
            Some(n) => Ok(Value::Number(n)),
            None => Err(E::custom(format!("{TAG_NUM}{v}\u{1}nonfinite"))),
        }
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        if self.depth >= self.limits.max_depth {
            return Err(de::Error::custom(format!(
                "{TAG_DEEP}{}",
                self.limits.max_depth
            )));
        }
        let mut out = Vec::new();
        let mut i = 0usize;
        loop {
            self.path.push(i.to_string());
            let next = seq.next_element_seed(StrictSeed {
                depth: self.depth + 1,
                limits: self.limits,
                path: self.path,
            });
            self.path.pop();
            match next? {
                Some(v) => out.push(v),
                None => break,
            }
            i += 1;
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        if self.depth >= self.limits.max_depth {
            return Err(de::Error::custom(format!(
                "{TAG_DEEP}{}",
                self.limits.max_depth
            )));
        }
        let mut out = Map::new();
        while let Some(k) = map.next_key::<String>()? {
            if out.contains_key(&k) {
                return Err(de::Error::custom(format!(
                    "{TAG_DUP}{}\u{1}{k}",
                    pointer(self.path)
                )));
            }
            self.path.push(k.clone());
            let v = map.next_value_seed(StrictSeed {
                depth: self.depth + 1,
                limits: self.limits,
                path: self.path,
            });
            self.path.pop();
            out.insert(k, v?);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_i_json_refuses() {
        assert!(matches!(
            parse_strict(br#"{"a":1,"b":{"c":1,"c":2}}"#),
            Err(JsonError::DuplicateMember { ref pointer, ref name, .. }) if pointer == "/b" && name == "c"
        ));
        assert!(matches!(
            parse_strict(br#"{"a":9007199254740992}"#),
            Err(JsonError::Number { .. })
        ));
        assert!(parse_strict(br#"{"a":9007199254740991}"#).is_ok());
        assert!(matches!(
            parse_strict(br#"["\ud800"]"#),
            Err(JsonError::LoneSurrogate { .. })
        ));
        assert!(matches!(
            parse_strict(b"[1e400]"),
            Err(JsonError::Number { .. })
        ));
        assert!(matches!(
            parse_strict(b"[NaN]"),
            Err(JsonError::Syntax { .. })
        ));
        assert!(matches!(
            parse_strict(b"\"\xff\""),
            Err(JsonError::InvalidUtf8 { offset: 1 })
        ));
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert!(matches!(
            parse_strict(deep.as_bytes()),
            Err(JsonError::TooDeep { .. })
        ));
    }
}
