//! RFC 8785 JSON Canonicalization Scheme (provisional implementation; being
//! replaced by the fast single-pass canonicalizer).

use crate::json::JsonError;
use serde_json::Value;

/// Strictly parse `input` (I-JSON) and return its canonical bytes.
pub fn canonicalize(input: &[u8]) -> Result<Vec<u8>, JsonError> {
    let v = crate::json::parse_strict(input)?;
    let mut out = Vec::with_capacity(input.len());
    write_value(&v, &mut out);
    Ok(out)
}

/// Canonical bytes of a value.
pub fn canonicalize_value(v: &Value) -> Result<Vec<u8>, JsonError> {
    let mut out = Vec::new();
    write_value(v, &mut out);
    Ok(out)
}

fn write_value(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Number(n) => {
            let f = n.as_f64().unwrap_or(0.0);
            let mut buf = ryu_js::Buffer::new();
            out.extend_from_slice(buf.format(f).as_bytes());
        }
        Value::String(s) => write_string(s, out),
        Value::Array(a) => {
            out.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(x, out);
            }
            out.push(b']');
        }
        Value::Object(m) => {
            let mut keys: Vec<(&String, &Value)> = m.iter().collect();
            keys.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
            out.push(b'{');
            for (i, (k, x)) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_string(k, out);
                out.push(b':');
                write_value(x, out);
            }
            out.push(b'}');
        }
    }
}

fn write_string(s: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\u{8}' => out.extend_from_slice(b"\\b"),
            '\t' => out.extend_from_slice(b"\\t"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\u{c}' => out.extend_from_slice(b"\\f"),
            '\r' => out.extend_from_slice(b"\\r"),
            c if (c as u32) < 0x20 => {
                out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes())
            }
            c => {
                let mut b = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
            }
        }
    }
    out.push(b'"');
}
