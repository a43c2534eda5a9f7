//! RFC 8785 JSON Canonicalization Scheme (JCS) over strict I-JSON.
//!
//! # Security contract
//!
//! * [`canonicalize`] accepts exactly the input [`crate::json::parse_strict`]
//!   accepts (RFC 8785 section 3.1 requires I-JSON input) and refuses
//!   everything else with a typed [`JsonError`] that names the place. In
//!   particular duplicate member names are refused rather than resolved
//!   first-wins or last-wins, so no two parties can read one signed document
//!   two ways; lone surrogates and invalid UTF-8 are refused rather than
//!   replaced; integer literals outside ±(2^53−1) are refused rather than
//!   rounded (agentsig's policy, see [`crate::json`]).
//! * The output is the RFC 8785 section 3.2 serialization, byte for byte:
//!   no whitespace (3.2.1), literals as-is (3.2.2.1), strings per 3.2.2.2,
//!   numbers per 3.2.2.3 (ECMAScript `Number.prototype.toString`), object
//!   members sorted by the UTF-16 code units of their names (3.2.3), arrays
//!   in order. There is no Unicode normalization (section 3.1 and Appendix
//!   E's `unicode.json`): two strings that differ in bytes canonicalize
//!   differently.
//! * Two inputs canonicalize to the same bytes if and only if they are the
//!   same JSON data in the I-JSON data model, where numbers are doubles:
//!   `1.0`, `1` and `1e0` are the same number, and so are `0.1` and
//!   `0.10000000000000000555`. A signature over the canonical form covers the
//!   data, not the spelling of the input.
//! * No panic on any input, no recursion on input structure (nesting depth
//!   is bounded by [`JsonLimits::max_depth`] and walked with explicit stacks), no
//!   `unsafe`.
//!
//! # Implementation
//!
//! One pass parses into a flat tree of byte ranges of the input (strings
//! without escapes and integer literals are their own canonical form and are
//! copied, never decoded); object members are sorted when the object closes,
//! which also finds duplicates; one pass writes the output.

use crate::json::{
    self, cmp_utf16, decode_escape, find_special, push_char, Doc, JsonError, JsonLimits, Node,
    MAX_SAFE_INTEGER, REASON_OVERFLOW, REASON_UNSAFE_INTEGER,
};
use serde_json::{Number, Value};

/// Why a `serde_json::Value` has no RFC 8785 canonical form under agentsig's
/// policy.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JcsError {
    /// A number that is not finite, or an integer outside ±(2^53−1)
    /// (RFC 8785 section 3.2.2.3 and agentsig's integer policy).
    #[error("number {text} at {q0} has no canonical form: {reason}", q0 = crate::text::quoted(.pointer))]
    Number {
        /// RFC 6901 pointer of the number.
        pointer: String,
        /// The number as `serde_json` writes it.
        text: String,
        /// Why it has no canonical form, e.g. [`REASON_UNSAFE_INTEGER`].
        reason: &'static str,
    },
}

/// Parse strict I-JSON (default [`JsonLimits`]) and return its RFC 8785
/// canonical form (section 3.2).
///
/// # Errors
///
/// A [`JsonError`] naming the place when the input is not strict I-JSON
/// (see [`crate::json`]).
///
/// # Example
///
/// ```
/// let canon = agentsig::jcs::canonicalize(br#"{ "b": 1.0, "a": [true, "\u0041"] }"#)?;
/// assert_eq!(canon, br#"{"a":[true,"A"],"b":1}"#);
///
/// // Duplicate member names are refused, never resolved.
/// assert!(agentsig::jcs::canonicalize(br#"{"a":1,"a":2}"#).is_err());
/// # Ok::<(), agentsig::json::JsonError>(())
/// ```
pub fn canonicalize(input: &[u8]) -> Result<Vec<u8>, JsonError> {
    canonicalize_with(input, &JsonLimits::default())
}

/// [`canonicalize`] with explicit [`JsonLimits`].
///
/// # Errors
/// [`JsonError`] when the input is not strict I-JSON (RFC 7493): bad UTF-8, duplicate member names,
/// lone surrogates, numbers out of range, or over the size or depth limit.
pub fn canonicalize_with(input: &[u8], limits: &JsonLimits) -> Result<Vec<u8>, JsonError> {
    let doc = json::parse_doc(input, limits)?;
    let mut out = Vec::with_capacity(input.len());
    write_doc(&doc, &mut out)?;
    Ok(out)
}

/// One strict parse, two results: the canonical form of `input` and the
/// value of its top-level member `name` (`None` when absent), with a flag
/// saying whether the document is an object at all.
#[cfg(feature = "net")]
pub(crate) fn canonicalize_and_member(
    input: &[u8],
    limits: &JsonLimits,
    name: &str,
) -> Result<(Vec<u8>, bool, Option<Value>), JsonError> {
    let doc = json::parse_doc(input, limits)?;
    let mut out = Vec::with_capacity(input.len());
    write_doc(&doc, &mut out)?;
    let member = doc.top_member(name)?;
    Ok((out, doc.is_object(), member))
}

/// RFC 8785 canonical form of a `serde_json::Value`.
///
/// Refuses what [`canonicalize`] would refuse in a `Value`: non-finite
/// numbers and integers outside ±(2^53−1). (A `Value` cannot hold duplicate
/// names, lone surrogates or invalid UTF-8.) Object members are sorted here,
/// whatever the map's own order.
///
/// # Errors
/// [`JcsError`] when the input has no canonical form (not strict I-JSON, or a number JCS cannot
/// serialize).
pub fn canonicalize_value(v: &Value) -> Result<Vec<u8>, JcsError> {
    let mut out = Vec::new();
    write_value(v, None, &mut out)?;
    Ok(out)
}

/// RFC 8785 canonical form of `v` without its top-level member `skip`
/// (when `v` is an object): the same bytes as [`canonicalize_value`] of a
/// copy of `v` with `skip` removed, without making the copy. For a signed
/// object whose signature is one of its own members (an AI Catalog Trust
/// Manifest's `signature`, AI Catalog "Trust Manifest Signatures").
///
/// # Errors
/// [`JcsError`] as [`canonicalize_value`].
pub fn canonicalize_value_without(v: &Value, skip: &str) -> Result<Vec<u8>, JcsError> {
    // Room for a small object (a Trust Manifest) without regrowing.
    let mut out = Vec::with_capacity(512);
    write_value(v, Some(skip), &mut out)?;
    Ok(out)
}

// ---------------------------------------------------------------------------
// Leaves.
// ---------------------------------------------------------------------------

/// RFC 8785 section 3.2.2.3: ECMAScript `Number.prototype.toString` of a
/// finite double (`-0` is written `0`).
#[inline]
fn write_f64(f: f64, out: &mut Vec<u8>) {
    let mut buf = ryu_js::Buffer::new();
    out.extend_from_slice(buf.format_finite(f).as_bytes());
}

/// RFC 8785 section 3.2.2.2: one character of a string, escaped only if it
/// is `"`, `\` or a C0 control, with the two-character forms where JSON has
/// them and `\u00xx` (lowercase hex) otherwise.
#[inline]
fn write_char(cp: u32, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match cp {
        0x22 => out.extend_from_slice(b"\\\""),
        0x5C => out.extend_from_slice(b"\\\\"),
        0x08 => out.extend_from_slice(b"\\b"),
        0x09 => out.extend_from_slice(b"\\t"),
        0x0A => out.extend_from_slice(b"\\n"),
        0x0C => out.extend_from_slice(b"\\f"),
        0x0D => out.extend_from_slice(b"\\r"),
        0x00..=0x1F => {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[(cp >> 4) as usize & 0xF]);
            out.push(HEX[cp as usize & 0xF]);
        }
        _ => push_char(out, cp),
    }
}

/// A string given as UTF-8, quoted and escaped per RFC 8785 section 3.2.2.2.
fn write_str(s: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    let mut i = 0;
    loop {
        let j = find_special(s, i);
        out.extend_from_slice(s.get(i..j).unwrap_or(&[]));
        match s.get(j) {
            Some(&b) => write_char(u32::from(b), out),
            None => break,
        }
        i = j + 1;
    }
    out.push(b'"');
}

/// The content of a JSON string as written in the input (escapes validated
/// by the parser), re-escaped per RFC 8785 section 3.2.2.2 in one pass:
/// unescaped runs cannot contain `"`, `\` or controls and are copied.
fn write_raw_escaped(raw: &[u8], out: &mut Vec<u8>) -> Result<(), JsonError> {
    out.push(b'"');
    let mut i = 0;
    while i < raw.len() {
        let j = raw
            .get(i..)
            .and_then(|r| r.iter().position(|&b| b == b'\\'))
            .map_or(raw.len(), |p| p + i);
        out.extend_from_slice(raw.get(i..j).unwrap_or(&[]));
        if j >= raw.len() {
            break;
        }
        let (cp, after) = decode_escape(raw, j).ok_or_else(json::internal)?;
        write_char(cp, out);
        i = after;
    }
    out.push(b'"');
    Ok(())
}

// ---------------------------------------------------------------------------
// Parsed documents.
// ---------------------------------------------------------------------------

enum WFrame {
    /// `next`: node index of the next element; `end`: one past the last.
    Array { next: u32, end: u32 },
    /// `next`: member index of the next member; `end`: one past the last.
    Object { next: u32, end: u32 },
}

/// A string without escapes as the input writes it: its content
/// `input[start..end]` and the two quotes around it, one copy instead of
/// three (RFC 8785 section 3.2.2.2 writes such a string unchanged).
#[inline]
fn quoted<'a>(doc: &Doc<'a>, start: u32, end: u32) -> Result<&'a [u8], JsonError> {
    doc.slice(
        start.checked_sub(1).ok_or_else(json::internal)?,
        end.saturating_add(1),
    )
}

fn write_member_name(doc: &Doc, m: &json::Member, out: &mut Vec<u8>) -> Result<(), JsonError> {
    if m.in_arena {
        write_str(doc.key(m), out);
    } else {
        // No escapes in the input: no `"`, `\` or control inside, so the
        // name is written as the input has it, quotes included.
        out.extend_from_slice(quoted(doc, m.start, m.end)?);
    }
    out.push(b':');
    Ok(())
}

fn write_doc(doc: &Doc, out: &mut Vec<u8>) -> Result<(), JsonError> {
    let mut stack: Vec<WFrame> = Vec::new();
    let mut i: u32 = 0;
    'node: loop {
        match doc.node(i)? {
            Node::Null => out.extend_from_slice(b"null"),
            Node::True => out.extend_from_slice(b"true"),
            Node::False => out.extend_from_slice(b"false"),
            // An integer literal within ±(2^53−1) is its own shortest
            // round-trip form, and below 10^21 Number.prototype.toString
            // writes it in plain decimal; `-0` never reaches here.
            Node::Int { start, end } => out.extend_from_slice(doc.slice(start, end)?),
            Node::Float(f) => write_f64(f, out),
            Node::Str {
                start,
                end,
                escaped,
            } => {
                if escaped {
                    write_raw_escaped(doc.slice(start, end)?, out)?;
                } else {
                    out.extend_from_slice(quoted(doc, start, end)?);
                }
            }
            Node::Array { end, .. } => {
                out.push(b'[');
                let first = i + 1;
                if first < end {
                    stack.push(WFrame::Array {
                        next: doc.subtree_end(first),
                        end,
                    });
                    i = first;
                    continue 'node;
                }
                out.push(b']');
            }
            Node::Object { first, len, .. } => {
                out.push(b'{');
                if len > 0 {
                    let m = doc.member(first)?;
                    write_member_name(doc, m, out)?;
                    stack.push(WFrame::Object {
                        next: first + 1,
                        end: first + len,
                    });
                    i = m.value;
                    continue 'node;
                }
                out.push(b'}');
            }
        }
        loop {
            match stack.last_mut() {
                None => return Ok(()),
                Some(WFrame::Array { next, end }) => {
                    if *next < *end {
                        out.push(b',');
                        i = *next;
                        *next = doc.subtree_end(i);
                        continue 'node;
                    }
                    out.push(b']');
                }
                Some(WFrame::Object { next, end }) => {
                    if *next < *end {
                        out.push(b',');
                        let m = doc.member(*next)?;
                        *next += 1;
                        write_member_name(doc, m, out)?;
                        i = m.value;
                        continue 'node;
                    }
                    out.push(b'}');
                }
            }
            stack.pop();
        }
    }
}

// ---------------------------------------------------------------------------
// serde_json::Value.
// ---------------------------------------------------------------------------

enum VFrame<'v> {
    Array {
        items: std::slice::Iter<'v, Value>,
        index: usize,
    },
    Object {
        members: std::vec::IntoIter<(&'v String, &'v Value)>,
        name: Option<&'v String>,
    },
}

fn value_pointer(stack: &[VFrame]) -> String {
    let path: Vec<String> = stack
        .iter()
        .map(|f| match f {
            VFrame::Array { index, .. } => index.saturating_sub(1).to_string(),
            VFrame::Object { name, .. } => name.map(|s| s.to_string()).unwrap_or_default(),
        })
        .collect();
    json::pointer(&path)
}

fn write_number(n: &Number, out: &mut Vec<u8>) -> Result<(), &'static str> {
    // Integers within ±(2^53−1) are exact doubles; RFC 8785 serializes the double.
    if let Some(i) = n.as_i64() {
        if i.unsigned_abs() > MAX_SAFE_INTEGER {
            return Err(REASON_UNSAFE_INTEGER);
        }
        write_f64(i as f64, out);
    } else if let Some(u) = n.as_u64() {
        if u > MAX_SAFE_INTEGER {
            return Err(REASON_UNSAFE_INTEGER);
        }
        write_f64(u as f64, out);
    } else {
        match n.as_f64() {
            Some(f) if f.is_finite() => write_f64(f, out),
            _ => return Err(REASON_OVERFLOW),
        }
    }
    Ok(())
}

/// Write `root`; `skip` names a member of the root object left out.
fn write_value(root: &Value, skip: Option<&str>, out: &mut Vec<u8>) -> Result<(), JcsError> {
    let mut stack: Vec<VFrame> = Vec::new();
    let mut v = root;
    'value: loop {
        match v {
            Value::Null => out.extend_from_slice(b"null"),
            Value::Bool(true) => out.extend_from_slice(b"true"),
            Value::Bool(false) => out.extend_from_slice(b"false"),
            Value::Number(n) => {
                if let Err(reason) = write_number(n, out) {
                    return Err(JcsError::Number {
                        pointer: value_pointer(&stack),
                        text: n.to_string(),
                        reason,
                    });
                }
            }
            Value::String(s) => write_str(s.as_bytes(), out),
            Value::Array(a) => {
                out.push(b'[');
                stack.push(VFrame::Array {
                    items: a.iter(),
                    index: 0,
                });
            }
            Value::Object(o) => {
                out.push(b'{');
                let root = stack.is_empty();
                let mut members: Vec<(&String, &Value)> = o
                    .iter()
                    .filter(|(k, _)| !(root && skip == Some(k.as_str())))
                    .collect();
                members.sort_unstable_by(|a, b| cmp_utf16(a.0.as_bytes(), b.0.as_bytes()));
                stack.push(VFrame::Object {
                    members: members.into_iter(),
                    name: None,
                });
            }
        }
        while let Some(top) = stack.last_mut() {
            match top {
                VFrame::Array { items, index } => {
                    if let Some(next) = items.next() {
                        if *index > 0 {
                            out.push(b',');
                        }
                        *index += 1;
                        v = next;
                        continue 'value;
                    }
                    out.push(b']');
                }
                VFrame::Object { members, name } => {
                    if let Some((k, next)) = members.next() {
                        if name.is_some() {
                            out.push(b',');
                        }
                        *name = Some(k);
                        write_str(k.as_bytes(), out);
                        out.push(b':');
                        v = next;
                        continue 'value;
                    }
                    out.push(b'}');
                }
            }
            stack.pop();
        }
        return Ok(());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(s: &str) -> String {
        String::from_utf8(canonicalize(s.as_bytes()).unwrap()).unwrap()
    }

    #[test]
    fn without_a_member_is_the_form_of_the_object_without_it() {
        let v: Value = serde_json::from_str(
            r#"{"signature":"x","b":{"signature":1,"z":[{"signature":2}]},"a":"\u00e9","sig":null}"#,
        )
        .unwrap();
        let mut copy = v.as_object().unwrap().clone();
        copy.remove("signature");
        let expected = canonicalize_value(&Value::Object(copy)).unwrap();
        assert_eq!(
            canonicalize_value_without(&v, "signature").unwrap(),
            expected
        );
        // Only the top-level member is left out: nested ones are signed.
        assert_eq!(
            String::from_utf8(expected).unwrap(),
            r#"{"a":"é","b":{"signature":1,"z":[{"signature":2}]},"sig":null}"#
        );
        // Nothing but the member: an empty object; a non-object as is.
        let only: Value = serde_json::json!({"signature": "x"});
        assert_eq!(
            canonicalize_value_without(&only, "signature").unwrap(),
            b"{}"
        );
        let arr = serde_json::json!([{"signature": 1}]);
        assert_eq!(
            canonicalize_value_without(&arr, "signature").unwrap(),
            canonicalize_value(&arr).unwrap()
        );
        // A number without a canonical form is still refused, with its place.
        let bad = serde_json::json!({"signature": "x", "n": 9_007_199_254_740_993_u64});
        assert!(matches!(
            canonicalize_value_without(&bad, "signature"),
            Err(JcsError::Number { pointer, .. }) if pointer == "/n"
        ));
    }

    #[test]
    fn basics() {
        assert_eq!(
            c(r#" { "b" : [ 1 , 2.50 , -0 , 1E3 ] , "a" : "\u00e9\/\u001F" } "#),
            "{\"a\":\"é/\\u001f\",\"b\":[1,2.5,0,1000]}"
        );
        assert_eq!(c("[]"), "[]");
        assert_eq!(c("{}"), "{}");
        assert_eq!(c("[[],{},[{}]]"), "[[],{},[{}]]");
        assert_eq!(
            c(r#"{"\u0061":1,"b":{"d":[true,false,null],"c":"x"}}"#),
            r#"{"a":1,"b":{"c":"x","d":[true,false,null]}}"#
        );
        assert_eq!(
            c(r#""\ud83d\ude02\"\\\b\f\n\r\t\u0000\u007f""#),
            "\"😂\\\"\\\\\\b\\f\\n\\r\\t\\u0000\u{7f}\""
        );
    }

    #[test]
    fn value_matches_bytes() {
        let text = r#"{"z":[1,-2.5e-7,"a\u0000"],"😂":{},"דּ":null,"a":9007199254740991}"#;
        let v: Value = serde_json::from_str(text).unwrap();
        assert_eq!(
            canonicalize_value(&v).unwrap(),
            canonicalize(text.as_bytes()).unwrap()
        );
        let big = serde_json::json!({"a": [1, {"b": 9007199254740992u64}]});
        assert_eq!(
            canonicalize_value(&big),
            Err(JcsError::Number {
                pointer: "/a/1/b".into(),
                text: "9007199254740992".into(),
                reason: REASON_UNSAFE_INTEGER
            })
        );
        assert!(canonicalize_value(&serde_json::json!(i64::MIN)).is_err());
        assert_eq!(
            canonicalize_value(&serde_json::json!(-9007199254740991i64)).unwrap(),
            b"-9007199254740991"
        );
    }

    /// The one-parse helper of `net::Resolver` agrees with the separate
    /// canonicalization and the strict parser's value of the member.
    #[cfg(feature = "net")]
    #[test]
    fn canonicalize_and_member_agrees_with_separate_parses() {
        let docs: &[&[u8]] = &[
            br#"{"name":"a","authentication":{"jwksUri":"https://x/j","z":[1,2.5,{"b":null}]}}"#,
            br#"{"\u0061uthentication":{"jwks":{"keys":[]}},"b":true}"#,
            br#"{"authenticatio":1,"authentications":2}"#,
            br#"{"x":{"authentication":1}}"#,
            br#"[{"authentication":1}]"#,
            br#""authentication""#,
            br#"{}"#,
            br#"{"\u20ac":"\ud83d\ude00","authentication":"last"}"#,
        ];
        for d in docs {
            let (canon, is_object, member) =
                canonicalize_and_member(d, &JsonLimits::default(), "authentication").unwrap();
            assert_eq!(canon, canonicalize(d).unwrap());
            let v = crate::json::parse_strict(d).unwrap();
            assert_eq!(is_object, v.is_object());
            assert_eq!(
                member.as_ref(),
                v.get("authentication"),
                "{}",
                String::from_utf8_lossy(d)
            );
        }
        assert!(canonicalize_and_member(br#"{"a":1,"a":2}"#, &JsonLimits::default(), "a").is_err());
    }
}
