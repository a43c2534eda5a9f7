//! Strict I-JSON (RFC 7493) parsing for everything agentsig reads as JSON:
//! descriptors, JWS headers, JWT claims, JWKs.
//!
//! # Contract
//!
//! The grammar is RFC 8259 section 2 to 7, exactly: no comments, no trailing
//! commas, no leading zeros, no `NaN`/`Infinity`, no byte order mark (RFC 8259
//! section 8.1 lets a parser ignore one; this one refuses it), whitespace is
//! only space, tab, line feed and carriage return, and any value may stand at
//! the top level. On top of the grammar, agentsig's I-JSON policy refuses,
//! each with an error that names the place:
//!
//! * duplicate member names, compared after unescaping, so `"a"` and
//!   `"\u0061"` are the same name (RFC 7493 section 2.3; RFC 8785 section 3.1
//!   requires I-JSON input, and a signer and a verifier that disagree on
//!   first-wins or last-wins could be made to see different documents);
//! * invalid UTF-8, including UTF-8-encoded surrogates and overlong forms
//!   (RFC 8259 section 8.1, RFC 7493 section 2.1), reported as
//!   [`JsonError::InvalidUtf8`];
//! * escaped lone surrogates: a `\uD800`–`\uDBFF` escape not followed by a
//!   `\uDC00`–`\uDFFF` escape, or a low surrogate escape on its own
//!   (RFC 7493 section 2.1), reported as [`JsonError::LoneSurrogate`];
//! * numbers whose magnitude overflows an IEEE 754 double (RFC 7493 section
//!   2.2). Numbers that underflow or lose precision are rounded to the nearest
//!   double, as every JSON parser does with `0.1`;
//! * **integer literals** (no fraction, no exponent) outside ±(2^53−1).
//!   This is agentsig's policy for RFC 7493 section 2.2: such an integer would
//!   silently change value when read as a double (`9007199254740993` becomes
//!   `9007199254740992`), so a signature over it would cover a number other
//!   than the one written. Literals with a fraction or an exponent (`1e20`,
//!   `9007199254740993.0`) are read as doubles, as RFC 8785 section 3.2.2.3
//!   prescribes.
//! * inputs larger than [`JsonLimits::max_bytes`] (and in any case larger than
//!   4 GiB) and nesting deeper than [`JsonLimits::max_depth`].
//!
//! Unicode noncharacters (U+FDD0–U+FDEF, U+xFFFE, U+xFFFF), which RFC 7493
//! section 2.1 also forbids, are accepted: RFC 8785 implementations in other
//! languages accept them, and refusing them here would make agentsig fail to
//! verify signatures that every other verifier accepts.
//!
//! Positions: `line` and `column` are 1-based; a line ends at a line feed;
//! `column` counts characters (Unicode scalar values), not bytes. `pointer`
//! is the RFC 6901 JSON pointer of the value being read when the error
//! occurred (`""` is the whole document).
//!
//! The parser is iterative (no recursion on input structure), does not panic
//! on any input, and contains no `unsafe` code.

use serde_json::{Map, Number, Value};
use std::cmp::Ordering;

/// Bounds on untrusted JSON.
#[derive(Clone, Copy, Debug)]
pub struct JsonLimits {
    /// Maximum input size in bytes (never more than 4 GiB, whatever is set).
    pub max_bytes: usize,
    /// Maximum nesting depth of arrays and objects.
    pub max_depth: usize,
}

impl Default for JsonLimits {
    fn default() -> Self {
        JsonLimits {
            max_bytes: 16 * 1024 * 1024,
            max_depth: 100,
        }
    }
}

/// Why input is not strict I-JSON.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JsonError {
    /// The input is larger than [`JsonLimits::max_bytes`].
    #[error("input of {size} bytes exceeds the limit of {limit} bytes")]
    TooLarge {
        /// The input size in bytes.
        size: usize,
        /// The limit in bytes.
        limit: usize,
    },
    /// The input is not UTF-8 (this includes UTF-8-encoded surrogates).
    #[error("invalid UTF-8 at byte {offset} (line {line}, column {column})")]
    InvalidUtf8 {
        /// 0-based byte offset of the first invalid byte.
        offset: usize,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
    },
    /// The input does not follow the RFC 8259 grammar.
    #[error("JSON syntax error at line {line}, column {column}, near {q0}{p}: {message}", q0 = crate::text::quoted(.near), p = in_pointer(.pointer))]
    Syntax {
        /// 1-based line of the error.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
        /// RFC 6901 JSON pointer of the value being read.
        pointer: String,
        /// The text around the error, on its line (at most
        /// [`NEAR_CHARS`] characters before it and half that after).
        near: String,
        /// What the grammar expected.
        message: &'static str,
    },
    /// An object has two members with the same name (RFC 7493 section 2.3).
    /// `pointer` names the object, `name` the member, and the position is the
    /// second occurrence.
    #[error("duplicate member name {q0} in the object at {q1} (line {line}, column {column})", q0 = crate::text::quoted(.name), q1 = crate::text::quoted(.pointer))]
    DuplicateMember {
        /// RFC 6901 JSON pointer of the object.
        pointer: String,
        /// The repeated member name, unescaped.
        name: String,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
    },
    /// A `\u` escape is a surrogate that is not part of a pair
    /// (RFC 7493 section 2.1). The position is the escape's backslash.
    #[error("lone surrogate escape at line {line}, column {column}{p}", p = in_pointer(.pointer))]
    LoneSurrogate {
        /// 1-based line of the error.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
        /// RFC 6901 JSON pointer of the value being read.
        pointer: String,
    },
    /// A number that is not an I-JSON number (RFC 7493 section 2.2, and
    /// agentsig's integer policy, see the module documentation).
    #[error("number {text} at line {line}, column {column}{p} is not an I-JSON number: {reason}", p = in_pointer(.pointer))]
    Number {
        /// The number literal as written.
        text: String,
        /// Why it is refused, e.g. [`REASON_UNSAFE_INTEGER`].
        reason: &'static str,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
        /// RFC 6901 JSON pointer of the value being read.
        pointer: String,
    },
    /// Arrays and objects nest deeper than [`JsonLimits::max_depth`].
    #[error("nesting deeper than {limit} at line {line}, column {column}{p}", p = in_pointer(.pointer))]
    TooDeep {
        /// The depth limit.
        limit: usize,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
        /// RFC 6901 JSON pointer of the value being read.
        pointer: String,
    },
}

/// The " (in /a/b)" part of an error message: nothing at the top level,
/// where an empty RFC 6901 pointer would read as `(at "")`.
fn in_pointer(p: &str) -> String {
    if p.is_empty() {
        String::new()
    } else {
        format!(" (in {})", crate::text::quoted(p))
    }
}

/// Most characters of context [`JsonError::Syntax`] shows before the error.
pub const NEAR_CHARS: usize = 24;

/// The text of `input`'s line around byte `at`: up to [`NEAR_CHARS`]
/// characters before and half that from `at` on (invalid UTF-8 replaced).
fn near(input: &[u8], at: usize) -> String {
    let at = at.min(input.len());
    let (before, after) = input.split_at(at);
    let start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let end = after
        .iter()
        .position(|&b| b == b'\n')
        .unwrap_or(after.len());
    let before = String::from_utf8_lossy(before.get(start..).unwrap_or(&[]));
    let after = String::from_utf8_lossy(after.get(..end).unwrap_or(&[]));
    let skip = before.chars().count().saturating_sub(NEAR_CHARS);
    let mut out: String = before.chars().skip(skip).collect();
    out.extend(after.chars().take(NEAR_CHARS / 2));
    out.trim_end_matches('\r').to_string()
}

/// Reason given in [`JsonError::Number`] for an integer literal outside ±(2^53−1).
pub const REASON_UNSAFE_INTEGER: &str = "integer literal outside ±(2^53−1)";
/// Reason given in [`JsonError::Number`] for a number beyond the range of a double.
pub const REASON_OVERFLOW: &str = "magnitude overflows an IEEE 754 double";

/// Largest integer magnitude agentsig accepts as an integer literal: 2^53−1.
pub const MAX_SAFE_INTEGER: u64 = (1u64 << 53) - 1;

/// Parse strict I-JSON with the default [`JsonLimits`].
///
/// # Errors
/// [`JsonError`] when the input is not strict I-JSON (RFC 7493): bad UTF-8, duplicate member names,
/// lone surrogates, numbers out of range, or over the size or depth limit.
pub fn parse_strict(input: &[u8]) -> Result<Value, JsonError> {
    parse_strict_with(input, &JsonLimits::default())
}

/// Parse strict I-JSON. Object members keep their document order.
///
/// # Errors
/// [`JsonError`] when the input is not strict I-JSON (RFC 7493): bad UTF-8, duplicate member names,
/// lone surrogates, numbers out of range, or over the size or depth limit.
pub fn parse_strict_with(input: &[u8], limits: &JsonLimits) -> Result<Value, JsonError> {
    let doc = parse_doc(input, limits)?;
    doc.to_value()
}

/// Objects with at most this many members are searched by comparing
/// names (see [`member`]).
const SCAN_MEMBERS: usize = 8;

/// The member `name` of `o` with its key, as `Map::get_key_value` finds
/// it. Most objects of a signed document have a few members, and comparing
/// a few names costs less than hashing one (serde_json's ordered map hashes
/// with SipHash), so a small object is searched by comparing names; names
/// are unique in a map, so the member found is the same.
#[inline]
pub(crate) fn member_entry<'a>(
    o: &'a Map<String, Value>,
    name: &str,
) -> Option<(&'a String, &'a Value)> {
    if o.len() <= SCAN_MEMBERS {
        o.iter().find(|(k, _)| k.as_str() == name)
    } else {
        o.get_key_value(name)
    }
}

/// The member `name` of `o`, as `Map::get` finds it (see [`member_entry`]).
#[inline]
pub(crate) fn member<'a>(o: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    member_entry(o, name).map(|(_, v)| v)
}

/// The member `name` of `v` when it is an object, as `Value::get` finds it
/// (see [`member_entry`]).
#[inline]
pub(crate) fn get<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
    match v {
        Value::Object(o) => member(o, name),
        _ => None,
    }
}

/// RFC 6901 JSON pointer of a path: `""` for the whole document, and each
/// member name or array index escaped (`~` as `~0`, `/` as `~1`).
pub fn pointer(path: &[String]) -> String {
    let mut s = String::new();
    for p in path {
        push_pointer_token(&mut s, p);
    }
    s
}

/// Append `/` and `token` escaped as an RFC 6901 reference token (section 3:
/// `~` as `~0`, `/` as `~1`) to `s`.
pub(crate) fn push_pointer_token(s: &mut String, token: &str) {
    s.push('/');
    for c in token.chars() {
        match c {
            '~' => s.push_str("~0"),
            '/' => s.push_str("~1"),
            c => s.push(c),
        }
    }
}

// ---------------------------------------------------------------------------
// The document tree.
//
// A parsed document is a flat vector of nodes in document (pre-)order. A
// container records the index one past its last descendant, so its children
// are found by skipping subtrees. Strings and integers are kept as byte
// ranges of the input: a string without escapes is already its own value,
// and an integer literal within ±(2^53−1) is already its canonical form.
// Object members live in a separate vector, each object's members contiguous
// and sorted by their names' UTF-16 code units (RFC 8785 section 3.2.3).
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
pub(crate) enum Node {
    Null,
    False,
    True,
    /// An integer literal within ±(2^53−1), not `-0`: `input[start..end]`.
    Int {
        start: u32,
        end: u32,
    },
    /// Any other number, already checked finite.
    Float(f64),
    /// The characters between the quotes, `input[start..end]`; `escaped` if
    /// they contain a backslash (escapes already validated).
    Str {
        start: u32,
        end: u32,
        escaped: bool,
    },
    /// `end` is one past the last descendant node.
    Array {
        end: u32,
        len: u32,
    },
    /// `end` as for arrays; members are `members[first..first + len]`.
    Object {
        end: u32,
        first: u32,
        len: u32,
    },
}

/// An object member. The name is `input[start..end]` when it has no escapes,
/// else `arena[start..end]` (unescaped UTF-8).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Member {
    /// The first eight bytes of the unescaped name, zero-padded, with lead
    /// bytes 0xEE/0xEF mapped to 0xFE/0xFF, read big-endian: comparing these
    /// orders names as [`cmp_utf16`] does, except that equal prefixes need
    /// the full comparison (see [`sort_prefix`]).
    pub(crate) prefix: u64,
    pub(crate) start: u32,
    pub(crate) end: u32,
    pub(crate) in_arena: bool,
    /// Byte offset of the name's opening quote.
    pub(crate) pos: u32,
    /// Node index of the value.
    pub(crate) value: u32,
}

pub(crate) struct Doc<'a> {
    pub(crate) input: &'a [u8],
    pub(crate) nodes: Vec<Node>,
    pub(crate) members: Vec<Member>,
    pub(crate) arena: Vec<u8>,
}

impl<'a> Doc<'a> {
    /// Whether the document is an object.
    #[cfg(feature = "net")]
    pub(crate) fn is_object(&self) -> bool {
        matches!(self.nodes.first(), Some(Node::Object { .. }))
    }

    /// The value of the top-level member `name`, when the document is an
    /// object that has it (member names are unique: duplicates were refused).
    #[cfg(feature = "net")]
    pub(crate) fn top_member(&self, name: &str) -> Result<Option<Value>, JsonError> {
        let Some(Node::Object { first, len, .. }) = self.nodes.first().copied() else {
            return Ok(None);
        };
        for i in first..first.saturating_add(len) {
            let m = self.member(i)?;
            if self.key(m) == name.as_bytes() {
                return self.subtree_value(m.value).map(Some);
            }
        }
        Ok(None)
    }

    /// The unescaped name of a member, as UTF-8 bytes.
    #[inline]
    pub(crate) fn key(&self, m: &Member) -> &[u8] {
        key_bytes(self.input, &self.arena, m)
    }

    pub(crate) fn node(&self, i: u32) -> Result<Node, JsonError> {
        self.nodes.get(i as usize).copied().ok_or_else(internal)
    }

    pub(crate) fn member(&self, i: u32) -> Result<&Member, JsonError> {
        self.members.get(i as usize).ok_or_else(internal)
    }

    pub(crate) fn slice(&self, start: u32, end: u32) -> Result<&'a [u8], JsonError> {
        self.input
            .get(start as usize..end as usize)
            .ok_or_else(internal)
    }

    /// Index one past the subtree rooted at node `i`.
    #[inline]
    pub(crate) fn subtree_end(&self, i: u32) -> u32 {
        match self.nodes.get(i as usize) {
            Some(Node::Array { end, .. }) | Some(Node::Object { end, .. }) => *end,
            _ => i.saturating_add(1),
        }
    }

    fn str_value(&self, start: u32, end: u32, escaped: bool) -> Result<String, JsonError> {
        let raw = self.slice(start, end)?;
        if !escaped {
            return std::str::from_utf8(raw)
                .map(str::to_owned)
                .map_err(|_| internal());
        }
        let mut out = Vec::with_capacity(raw.len());
        unescape_into(raw, &mut out);
        String::from_utf8(out).map_err(|_| internal())
    }

    /// Build a `serde_json::Value`, members in document order. Iterative:
    /// nodes are visited in reverse document order, so every container finds
    /// its children's values, in reverse, on top of the stack.
    pub(crate) fn to_value(&self) -> Result<Value, JsonError> {
        self.subtree_value(0)
    }

    /// When the document is an object whose member `name` is an array: that
    /// array's node and the node of each of its elements, in order. With
    /// [`Doc::values`] and [`Doc::with_array`], the elements' values can be
    /// built on several threads, and the document's value made from them is
    /// the one [`Doc::to_value`] gives.
    pub(crate) fn array_member(&self, name: &str) -> Option<(u32, Vec<u32>)> {
        let Some(Node::Object { first, len, .. }) = self.nodes.first().copied() else {
            return None;
        };
        let ms = self
            .members
            .get(first as usize..(first as usize).saturating_add(len as usize))?;
        let m = ms.iter().find(|m| self.key(m) == name.as_bytes())?;
        let Node::Array { end, len } = self.node(m.value).ok()? else {
            return None;
        };
        let mut elements = Vec::with_capacity(len as usize);
        let mut at = m.value.saturating_add(1);
        while at < end {
            elements.push(at);
            at = self.subtree_end(at);
        }
        Some((m.value, elements))
    }

    /// The values of the subtrees rooted at `nodes`, in order.
    pub(crate) fn values(&self, nodes: &[u32]) -> Result<Vec<Value>, JsonError> {
        nodes.iter().map(|&n| self.subtree_value(n)).collect()
    }

    /// The value of the document (an object), the array at node `array`
    /// (from [`Doc::array_member`]) being `elements`.
    pub(crate) fn with_array(&self, array: u32, elements: Vec<Value>) -> Result<Value, JsonError> {
        let Some(Node::Object { first, len, .. }) = self.nodes.first().copied() else {
            return Err(internal());
        };
        let ms = self
            .members
            .get(first as usize..(first as usize).saturating_add(len as usize))
            .ok_or_else(internal)?;
        // Members in document order, as `subtree_value` builds them.
        let mut order: Vec<&Member> = ms.iter().collect();
        order.sort_unstable_by_key(|m| m.value);
        let mut elements = Some(elements);
        let mut map = Map::with_capacity(ms.len());
        for m in order {
            let name = std::str::from_utf8(self.key(m)).map_err(|_| internal())?;
            let v = if m.value == array {
                Value::Array(elements.take().ok_or_else(internal)?)
            } else {
                self.subtree_value(m.value)?
            };
            map.insert(name.to_owned(), v);
        }
        match elements {
            None => Ok(Value::Object(map)),
            Some(_) => Err(internal()),
        }
    }

    /// The value of the subtree rooted at node `root` (see `to_value`).
    pub(crate) fn subtree_value(&self, root: u32) -> Result<Value, JsonError> {
        let mut stack: Vec<Value> = Vec::new();
        let mut order: Vec<&Member> = Vec::new();
        let end = (self.subtree_end(root) as usize).min(self.nodes.len());
        for idx in (root as usize..end).rev() {
            let node = self.nodes.get(idx).copied().ok_or_else(internal)?;
            let v = match node {
                Node::Null => Value::Null,
                Node::False => Value::Bool(false),
                Node::True => Value::Bool(true),
                Node::Int { start, end } => {
                    let text = self.slice(start, end)?;
                    let (neg, digits) = match text.split_first() {
                        Some((b'-', rest)) => (true, rest),
                        _ => (false, text),
                    };
                    let mag = digits.iter().fold(0i64, |acc, d| {
                        acc.wrapping_mul(10)
                            .wrapping_add(i64::from(d.wrapping_sub(b'0')))
                    });
                    Value::Number(Number::from(if neg { -mag } else { mag }))
                }
                Node::Float(f) => Value::Number(Number::from_f64(f).ok_or_else(internal)?),
                Node::Str {
                    start,
                    end,
                    escaped,
                } => Value::String(self.str_value(start, end, escaped)?),
                Node::Array { len, .. } => {
                    let at = stack.len().checked_sub(len as usize).ok_or_else(internal)?;
                    // The children are on top of the stack, last child lowest.
                    Value::Array(stack.drain(at..).rev().collect())
                }
                Node::Object { first, len, .. } => {
                    let at = stack.len().checked_sub(len as usize).ok_or_else(internal)?;
                    let ms = self
                        .members
                        .get(first as usize..(first as usize).saturating_add(len as usize))
                        .ok_or_else(internal)?;
                    // Members are sorted by name; values are in document order.
                    order.clear();
                    order.extend(ms.iter());
                    order.sort_unstable_by_key(|m| m.value);
                    let mut map = Map::with_capacity(ms.len());
                    for (m, v) in order.iter().zip(stack.drain(at..).rev()) {
                        let name = std::str::from_utf8(self.key(m)).map_err(|_| internal())?;
                        map.insert(name.to_owned(), v);
                    }
                    Value::Object(map)
                }
            };
            stack.push(v);
        }
        match (stack.pop(), stack.is_empty()) {
            (Some(v), true) => Ok(v),
            _ => Err(internal()),
        }
    }
}

#[inline]
pub(crate) fn key_bytes<'k>(input: &'k [u8], arena: &'k [u8], m: &Member) -> &'k [u8] {
    let src = if m.in_arena { arena } else { input };
    src.get(m.start as usize..m.end as usize).unwrap_or(&[])
}

/// An invariant of the parser itself failed. Never produced for any input
/// (the tests and the fuzz-style tests hold it to that), but reported rather
/// than panicking.
pub(crate) fn internal() -> JsonError {
    JsonError::Syntax {
        line: 0,
        column: 0,
        pointer: String::new(),
        near: String::new(),
        message: "internal error in the JSON parser (please report)",
    }
}

/// Compare two strings, given as UTF-8, by their UTF-16 code units
/// (RFC 8785 section 3.2.3).
///
/// UTF-8 byte order is code point order. UTF-16 order differs from it only
/// where a character in U+E000..U+FFFF meets a supplementary character
/// (U+10000 and up), which UTF-16 writes with surrogates D800..DFFF and so
/// sorts first. At the first differing byte both strings are at the same
/// position in the same character (the prefixes are equal), so either both
/// bytes are continuation bytes of characters with the same lead byte (and
/// code point order is right) or both start a character. In the second case
/// lead bytes 0xEE and 0xEF (U+E000..U+FFFF) are moved above 0xF0..0xF4
/// (supplementary) and the bytes are compared.
#[inline]
pub(crate) fn cmp_utf16(a: &[u8], b: &[u8]) -> Ordering {
    let n = common_prefix(a, b);
    match (a.get(n), b.get(n)) {
        (Some(&x), Some(&y)) => utf16_rank(x).cmp(&utf16_rank(y)),
        _ => a.len().cmp(&b.len()),
    }
}

#[inline]
fn utf16_rank(b: u8) -> u16 {
    if b == 0xEE || b == 0xEF {
        u16::from(b) + 0x100
    } else {
        u16::from(b)
    }
}

/// Sort key of a name (UTF-8): see [`Member::prefix`].
///
/// Mapping every byte 0xEE to 0xFE and 0xEF to 0xFF (bytes that occur in
/// UTF-8 only as lead bytes of U+E000..U+FFFF, and bytes 0xFE/0xFF never
/// occur) turns UTF-8 byte order into UTF-16 code unit order, as explained
/// at [`cmp_utf16`]. If the padded prefix of `a` is below that of `b`, then
/// `a` sorts before `b`: either they differ at a real byte, or `a` ended
/// there and is a prefix of `b`.
#[inline]
pub(crate) fn sort_prefix(name: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    let n = name.len().min(8);
    if let (Some(dst), Some(src)) = (w.get_mut(..n), name.get(..n)) {
        dst.copy_from_slice(src);
    }
    let x = u64::from_be_bytes(w);
    if x & 0x8080_8080_8080_8080 == 0 {
        return x;
    }
    for b in &mut w {
        if *b == 0xEE || *b == 0xEF {
            *b += 0x10;
        }
    }
    u64::from_be_bytes(w)
}

#[inline]
fn cmp_members(input: &[u8], arena: &[u8], a: &Member, b: &Member) -> Ordering {
    match a.prefix.cmp(&b.prefix) {
        Ordering::Equal => cmp_utf16(key_bytes(input, arena, a), key_bytes(input, arena, b)),
        o => o,
    }
}

#[inline]
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let mut n = 0;
    for (ca, cb) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        let (x, y) = (load8(ca), load8(cb));
        if x != y {
            return n + ((x ^ y).trailing_zeros() / 8) as usize;
        }
        n += 8;
    }
    let ra = a.get(n..).unwrap_or(&[]);
    let rb = b.get(n..).unwrap_or(&[]);
    n + ra.iter().zip(rb).take_while(|(x, y)| x == y).count()
}

#[inline]
fn load8(c: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(c.get(..8).unwrap_or(&[0; 8]));
    u64::from_le_bytes(w)
}

// ---------------------------------------------------------------------------
// Byte scanning.
// ---------------------------------------------------------------------------

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// Index of the first byte at or after `i` that is `"`, `\` or below 0x20,
/// or `s.len()`. Eight bytes at a time: the lowest flagged byte of each
/// SWAR test is always exact (false positives can only sit above a true one).
#[inline]
pub(crate) fn find_special(s: &[u8], i: usize) -> usize {
    let mut unused = 0;
    scan_special::<false>(s, i, &mut unused)
}

/// The bytes a JSON string cannot hold raw: `"`, `\\` and C0 controls.
#[inline]
fn is_special(b: u8) -> bool {
    b == b'"' || b == b'\\' || b < 0x20
}

/// SWAR: the high bit of each byte of `x` that [`is_special`] (the lowest
/// flagged byte is exact; ones above it may be false positives).
#[inline]
fn special_mask(x: u64) -> u64 {
    let q = x ^ (LO * u64::from(b'"'));
    let bs = x ^ (LO * u64::from(b'\\'));
    ((q.wrapping_sub(LO) & !q) | (bs.wrapping_sub(LO) & !bs) | (x.wrapping_sub(LO * 0x20) & !x))
        & HI
}

/// [`find_special`], also OR-ing the bytes it passes (and possibly a few
/// after the one it finds) into `seen`.
#[inline]
fn find_special_seen(s: &[u8], i: usize, seen: &mut u64) -> usize {
    scan_special::<true>(s, i, seen)
}

/// The scan behind both: `SEEN` decides at compile time whether passed
/// bytes are accumulated.
#[inline(always)]
fn scan_special<const SEEN: bool>(s: &[u8], mut i: usize, seen: &mut u64) -> usize {
    while let Some(c) = s.get(i..i + 8) {
        let x = load8(c);
        if SEEN {
            *seen |= x;
        }
        let m = special_mask(x);
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&b) = s.get(i) {
        if SEEN {
            *seen |= u64::from(b);
        }
        if is_special(b) {
            return i;
        }
        i += 1;
    }
    s.len()
}

fn invalid_utf8(input: &[u8], offset: usize) -> JsonError {
    let (line, column) = line_col(input, offset);
    JsonError::InvalidUtf8 {
        offset,
        line,
        column,
    }
}

#[inline]
fn hex4(s: &[u8], i: usize) -> Option<u32> {
    let h = s.get(i..i + 4)?;
    let mut v = 0u32;
    for &c in h {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        v = (v << 4) | u32::from(d);
    }
    Some(v)
}

/// Escape at `raw[i]` (a backslash), already validated: the code point and
/// the index after the escape.
#[inline]
pub(crate) fn decode_escape(raw: &[u8], i: usize) -> Option<(u32, usize)> {
    let c = match raw.get(i + 1)? {
        b'"' => 0x22,
        b'\\' => 0x5C,
        b'/' => 0x2F,
        b'b' => 0x08,
        b'f' => 0x0C,
        b'n' => 0x0A,
        b'r' => 0x0D,
        b't' => 0x09,
        b'u' => {
            let hi = hex4(raw, i + 2)?;
            if (0xD800..0xDC00).contains(&hi) {
                if raw.get(i + 6) != Some(&b'\\') || raw.get(i + 7) != Some(&b'u') {
                    return None;
                }
                let lo = hex4(raw, i + 8)?;
                if !(0xDC00..0xE000).contains(&lo) {
                    return None;
                }
                return Some((0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00), i + 12));
            }
            if (0xDC00..0xE000).contains(&hi) {
                return None;
            }
            return Some((hi, i + 6));
        }
        _ => return None,
    };
    Some((c, i + 2))
}

#[inline]
pub(crate) fn push_char(out: &mut Vec<u8>, cp: u32) {
    if let Some(ch) = char::from_u32(cp) {
        let mut buf = [0u8; 4];
        out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
    }
}

/// Unescape validated string content into UTF-8.
pub(crate) fn unescape_into(raw: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    while i < raw.len() {
        let next = raw
            .get(i..)
            .and_then(|r| r.iter().position(|&b| b == b'\\'))
            .map_or(raw.len(), |p| p + i);
        out.extend_from_slice(raw.get(i..next).unwrap_or(&[]));
        if next >= raw.len() {
            break;
        }
        match decode_escape(raw, next) {
            Some((cp, after)) => {
                push_char(out, cp);
                i = after;
            }
            None => break, // unreachable: validated by the parser
        }
    }
}

#[inline]
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t')
}

/// 1-based line and column (in characters) of a byte offset.
pub(crate) fn line_col(input: &[u8], offset: usize) -> (usize, usize) {
    let before = input.get(..offset.min(input.len())).unwrap_or(input);
    let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
    let start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let column = 1 + before
        .get(start..)
        .unwrap_or(&[])
        .iter()
        .filter(|&&b| (b & 0xC0) != 0x80)
        .count();
    (line, column)
}

// ---------------------------------------------------------------------------
// The parser: iterative, one pass, no allocation per value.
// ---------------------------------------------------------------------------

#[derive(Clone, Copy)]
enum Frame {
    /// `count`: index of the element being read.
    Array { node: u32, count: u32 },
    /// `key`: index in `pending` of the member whose value is being read.
    Object {
        node: u32,
        pending_start: u32,
        key: Option<u32>,
    },
}

struct Parser<'a, 'l> {
    input: &'a [u8],
    pos: usize,
    limits: &'l JsonLimits,
    nodes: Vec<Node>,
    members: Vec<Member>,
    arena: Vec<u8>,
    pending: Vec<Member>,
    frames: Vec<Frame>,
}

/// One strict parse (RFC 7493) of `input` without canonicalizing it:
/// whether it is an object, and the value of its top-level member `name`
/// (`None` when absent).
#[cfg(feature = "net")]
pub(crate) fn object_member(
    input: &[u8],
    limits: &JsonLimits,
    name: &str,
) -> Result<(bool, Option<Value>), JsonError> {
    let doc = parse_doc(input, limits)?;
    Ok((doc.is_object(), doc.top_member(name)?))
}

/// Parse strict I-JSON into the flat tree used by [`crate::jcs`].
pub(crate) fn parse_doc<'a>(input: &'a [u8], limits: &JsonLimits) -> Result<Doc<'a>, JsonError> {
    let limit = limits.max_bytes.min(u32::MAX as usize - 1);
    if input.len() > limit {
        return Err(JsonError::TooLarge {
            size: input.len(),
            limit,
        });
    }
    let p = Parser {
        input,
        pos: 0,
        limits,
        nodes: Vec::with_capacity(input.len() / 12 + 4),
        members: Vec::with_capacity(input.len() / 48 + 4),
        arena: Vec::new(),
        pending: Vec::with_capacity(64),
        frames: Vec::with_capacity(limits.max_depth.min(64)),
    };
    // UTF-8 is checked string by string as the parser meets them. When the
    // parse fails, an input that is not UTF-8 reports that first, so the
    // error is the same as if the whole input had been validated up front.
    p.run().map_err(|e| match (&e, std::str::from_utf8(input)) {
        (JsonError::InvalidUtf8 { .. }, _) | (_, Ok(_)) => e,
        (_, Err(u)) => invalid_utf8(input, u.valid_up_to()),
    })
}

impl<'a> Parser<'a, '_> {
    #[inline]
    fn peek(&self) -> Option<u8> {
        self.input.get(self.pos).copied()
    }

    #[inline]
    fn skip_ws(&mut self) {
        // Every JSON token starts above 0x20; whitespace is at or below it.
        match self.input.get(self.pos) {
            Some(&b) if b > b' ' => return,
            None => return,
            _ => {}
        }
        loop {
            // Runs of spaces (indentation) eight at a time.
            while let Some(c) = self.input.get(self.pos..self.pos + 8) {
                let y = load8(c) ^ (LO * u64::from(b' '));
                if y != 0 {
                    self.pos += (y.trailing_zeros() / 8) as usize;
                    break;
                }
                self.pos += 8;
            }
            match self.input.get(self.pos) {
                Some(&b) if is_ws(b) => self.pos += 1,
                _ => return,
            }
        }
    }

    #[inline]
    fn push_node(&mut self, n: Node) -> u32 {
        let i = self.nodes.len() as u32;
        self.nodes.push(n);
        i
    }

    fn current_pointer(&self) -> String {
        let mut s = String::new();
        for f in &self.frames {
            match *f {
                Frame::Array { count, .. } => push_pointer_token(&mut s, &count.to_string()),
                Frame::Object { key: Some(k), .. } => {
                    let name = self
                        .pending
                        .get(k as usize)
                        .map(|m| key_bytes(self.input, &self.arena, m))
                        .unwrap_or(&[]);
                    push_pointer_token(&mut s, &String::from_utf8_lossy(name));
                }
                Frame::Object { key: None, .. } => {}
            }
        }
        s
    }

    fn syntax(&self, at: usize, message: &'static str) -> JsonError {
        let (line, column) = line_col(self.input, at);
        JsonError::Syntax {
            line,
            column,
            pointer: self.current_pointer(),
            near: near(self.input, at),
            message,
        }
    }

    fn run(mut self) -> Result<Doc<'a>, JsonError> {
        'value: loop {
            self.skip_ws();
            let Some(b) = self.peek() else {
                return Err(self.syntax(self.pos, "unexpected end of input, expected a value"));
            };
            match b {
                b'{' => {
                    self.check_depth()?;
                    let node = self.push_node(Node::Object {
                        end: 0,
                        first: 0,
                        len: 0,
                    });
                    self.pos += 1;
                    self.frames.push(Frame::Object {
                        node,
                        pending_start: self.pending.len() as u32,
                        key: None,
                    });
                    self.skip_ws();
                    if self.peek() == Some(b'}') {
                        self.pos += 1;
                        self.close_object()?;
                    } else {
                        self.member_name()?;
                        continue 'value;
                    }
                }
                b'[' => {
                    self.check_depth()?;
                    let node = self.push_node(Node::Array { end: 0, len: 0 });
                    self.pos += 1;
                    self.frames.push(Frame::Array { node, count: 0 });
                    self.skip_ws();
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                        self.close_array(0)?;
                    } else {
                        continue 'value;
                    }
                }
                b'"' => {
                    let (start, end, escaped) = self.scan_string()?;
                    self.push_node(Node::Str {
                        start,
                        end,
                        escaped,
                    });
                }
                b'-' | b'0'..=b'9' => {
                    let n = self.scan_number()?;
                    self.push_node(n);
                }
                b't' => self.literal(b"true", Node::True)?,
                b'f' => self.literal(b"false", Node::False)?,
                b'n' => self.literal(b"null", Node::Null)?,
                b'N' | b'I' => {
                    return Err(self.syntax(self.pos, "NaN and Infinity are not JSON numbers"))
                }
                b'}' | b']' => {
                    return Err(self.syntax(self.pos, "expected a value (trailing comma?)"))
                }
                0xEF if self.pos == 0 && self.input.starts_with(b"\xEF\xBB\xBF") => {
                    return Err(self.syntax(0, "byte order mark before the JSON text"))
                }
                _ => return Err(self.syntax(self.pos, "expected a value")),
            }
            // A value is complete: continue the enclosing containers.
            loop {
                self.skip_ws();
                let Some(frame) = self.frames.last_mut() else {
                    if self.pos < self.input.len() {
                        return Err(
                            self.syntax(self.pos, "trailing characters after the JSON value")
                        );
                    }
                    return Ok(Doc {
                        input: self.input,
                        nodes: self.nodes,
                        members: self.members,
                        arena: self.arena,
                    });
                };
                match frame {
                    Frame::Array { count, .. } => match self.input.get(self.pos) {
                        Some(b',') => {
                            *count += 1;
                            self.pos += 1;
                            continue 'value;
                        }
                        Some(b']') => {
                            let len = *count + 1;
                            self.pos += 1;
                            self.close_array(len)?;
                        }
                        _ => {
                            return Err(
                                self.syntax(self.pos, "expected ',' or ']' after an array element")
                            )
                        }
                    },
                    Frame::Object { key, .. } => match self.input.get(self.pos) {
                        Some(b',') => {
                            *key = None;
                            self.pos += 1;
                            self.skip_ws();
                            self.member_name()?;
                            continue 'value;
                        }
                        Some(b'}') => {
                            *key = None;
                            self.pos += 1;
                            self.close_object()?;
                        }
                        _ => {
                            return Err(
                                self.syntax(self.pos, "expected ',' or '}' after an object member")
                            )
                        }
                    },
                }
            }
        }
    }

    fn check_depth(&self) -> Result<(), JsonError> {
        if self.frames.len() >= self.limits.max_depth {
            let (line, column) = line_col(self.input, self.pos);
            return Err(JsonError::TooDeep {
                limit: self.limits.max_depth,
                line,
                column,
                pointer: self.current_pointer(),
            });
        }
        Ok(())
    }

    fn literal(&mut self, word: &'static [u8], node: Node) -> Result<(), JsonError> {
        if self.input.get(self.pos..self.pos + word.len()) == Some(word) {
            self.pos += word.len();
            self.push_node(node);
            Ok(())
        } else {
            Err(self.syntax(self.pos, "invalid literal (expected true, false or null)"))
        }
    }

    /// Read `"name"` and `:` of a member; the value follows.
    fn member_name(&mut self) -> Result<(), JsonError> {
        if self.peek() != Some(b'"') {
            return Err(self.syntax(self.pos, "expected a member name (a string)"));
        }
        let pos = self.pos as u32;
        let (mut start, mut end, escaped) = self.scan_string()?;
        if escaped {
            let raw = self
                .input
                .get(start as usize..end as usize)
                .ok_or_else(internal)?;
            let a = self.arena.len();
            unescape_into(raw, &mut self.arena);
            start = a as u32;
            end = self.arena.len() as u32;
        }
        let src: &[u8] = if escaped { &self.arena } else { self.input };
        let prefix = sort_prefix(src.get(start as usize..end as usize).unwrap_or(&[]));
        self.pending.push(Member {
            prefix,
            start,
            end,
            in_arena: escaped,
            pos,
            value: self.nodes.len() as u32,
        });
        let k = (self.pending.len() - 1) as u32;
        if let Some(Frame::Object { key, .. }) = self.frames.last_mut() {
            *key = Some(k);
        }
        self.skip_ws();
        if self.peek() != Some(b':') {
            return Err(self.syntax(self.pos, "expected ':' after a member name"));
        }
        self.pos += 1;
        Ok(())
    }

    fn close_array(&mut self, len: u32) -> Result<(), JsonError> {
        let Some(Frame::Array { node, .. }) = self.frames.pop() else {
            return Err(internal());
        };
        let end = self.nodes.len() as u32;
        let n = self.nodes.get_mut(node as usize).ok_or_else(internal)?;
        *n = Node::Array { end, len };
        Ok(())
    }

    fn close_object(&mut self) -> Result<(), JsonError> {
        let Some(Frame::Object {
            node,
            pending_start,
            ..
        }) = self.frames.pop()
        else {
            return Err(internal());
        };
        let ps = pending_start as usize;
        let (input, arena) = (self.input, &self.arena);
        let ms = self.pending.get_mut(ps..).ok_or_else(internal)?;
        ms.sort_unstable_by(|a, b| cmp_members(input, arena, a, b));
        if ms.windows(2).any(|w| {
            matches!(w, [a, b] if a.prefix == b.prefix
                && key_bytes(input, arena, a) == key_bytes(input, arena, b))
        }) {
            return Err(self.duplicate(ps));
        }
        let first = self.members.len() as u32;
        let len = (self.pending.len() - ps) as u32;
        self.members
            .extend_from_slice(self.pending.get(ps..).unwrap_or(&[]));
        self.pending.truncate(ps);
        let end = self.nodes.len() as u32;
        let n = self.nodes.get_mut(node as usize).ok_or_else(internal)?;
        *n = Node::Object { end, first, len };
        Ok(())
    }

    /// Error path: the first member, in document order, whose name was
    /// already used in the object (frame already popped).
    fn duplicate(&self, ps: usize) -> JsonError {
        let mut ms: Vec<&Member> = self.pending.get(ps..).unwrap_or(&[]).iter().collect();
        ms.sort_unstable_by_key(|m| m.pos);
        let mut seen = std::collections::HashSet::new();
        let dup = ms
            .into_iter()
            .find(|m| !seen.insert(key_bytes(self.input, &self.arena, m)));
        let Some(m) = dup else { return internal() };
        let (line, column) = line_col(self.input, m.pos as usize);
        JsonError::DuplicateMember {
            pointer: self.current_pointer(),
            name: String::from_utf8_lossy(key_bytes(self.input, &self.arena, m)).into_owned(),
            line,
            column,
        }
    }

    /// At an opening quote: validate the string and return the range of its
    /// content and whether it has escapes.
    #[inline]
    fn scan_string(&mut self) -> Result<(u32, u32, bool), JsonError> {
        let open = self.pos;
        let start = open + 1;
        let mut i = start;
        let mut escaped = false;
        // OR of the bytes seen (and maybe a few after the string): tells
        // whether the string needs UTF-8 validation.
        let mut seen = 0u64;
        loop {
            i = find_special_seen(self.input, i, &mut seen);
            match self.input.get(i) {
                Some(b'"') => break,
                Some(b'\\') => {
                    escaped = true;
                    i = self.check_escape(i)?;
                }
                Some(_) => {
                    return Err(self.syntax(
                        i,
                        "control character (U+0000 to U+001F) in a string must be escaped",
                    ))
                }
                None => return Err(self.syntax(open, "unterminated string")),
            }
        }
        if seen & HI != 0 {
            // Bytes outside strings are all ASCII (the grammar admits no
            // others), so validating the strings validates the input.
            let content = self.input.get(start..i).ok_or_else(internal)?;
            if let Err(e) = std::str::from_utf8(content) {
                return Err(invalid_utf8(self.input, start + e.valid_up_to()));
            }
        }
        self.pos = i + 1;
        Ok((start as u32, i as u32, escaped))
    }

    fn check_escape(&self, i: usize) -> Result<usize, JsonError> {
        match self.input.get(i + 1) {
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => Ok(i + 2),
            Some(b'u') => {
                let Some(hi) = hex4(self.input, i + 2) else {
                    return Err(self.syntax(i, "invalid \\u escape (four hex digits expected)"));
                };
                if (0xDC00..0xE000).contains(&hi) {
                    return Err(self.lone_surrogate(i));
                }
                if !(0xD800..0xDC00).contains(&hi) {
                    return Ok(i + 6);
                }
                if self.input.get(i + 6..i + 8) != Some(b"\\u") {
                    return Err(self.lone_surrogate(i));
                }
                match hex4(self.input, i + 8) {
                    Some(lo) if (0xDC00..0xE000).contains(&lo) => Ok(i + 12),
                    Some(_) => Err(self.lone_surrogate(i)),
                    None => {
                        Err(self.syntax(i + 6, "invalid \\u escape (four hex digits expected)"))
                    }
                }
            }
            _ => Err(self.syntax(i, "invalid escape sequence")),
        }
    }

    fn lone_surrogate(&self, at: usize) -> JsonError {
        let (line, column) = line_col(self.input, at);
        JsonError::LoneSurrogate {
            line,
            column,
            pointer: self.current_pointer(),
        }
    }

    #[inline]
    fn digits_from(&self, mut i: usize) -> usize {
        while let Some(b'0'..=b'9') = self.input.get(i) {
            i += 1;
        }
        i
    }

    /// RFC 8259 section 6: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    fn scan_number(&mut self) -> Result<Node, JsonError> {
        let start = self.pos;
        let neg = self.input.get(start) == Some(&b'-');
        let mut i = start + usize::from(neg);
        match self.input.get(i) {
            Some(b'0') => {
                i += 1;
                if let Some(b'0'..=b'9') = self.input.get(i) {
                    return Err(self.syntax(start, "leading zeros are not allowed in a number"));
                }
            }
            Some(b'1'..=b'9') => i = self.digits_from(i + 1),
            Some(b'I') => return Err(self.syntax(start, "NaN and Infinity are not JSON numbers")),
            _ => return Err(self.syntax(i, "expected a digit after '-'")),
        }
        let int_end = i;
        if self.input.get(i) == Some(&b'.') {
            let j = self.digits_from(i + 1);
            if j == i + 1 {
                return Err(self.syntax(i + 1, "expected a digit after the decimal point"));
            }
            i = j;
        }
        if let Some(b'e' | b'E') = self.input.get(i) {
            i += 1;
            if let Some(b'+' | b'-') = self.input.get(i) {
                i += 1;
            }
            let j = self.digits_from(i);
            if j == i {
                return Err(self.syntax(i, "expected a digit in the exponent"));
            }
            i = j;
        }
        self.pos = i;
        let text = self.input.get(start..i).ok_or_else(internal)?;
        if i == int_end {
            // An integer literal: agentsig's ±(2^53−1) policy.
            let digits = text.get(usize::from(neg)..).unwrap_or(&[]);
            if digits == b"0" {
                return Ok(if neg {
                    Node::Float(-0.0)
                } else {
                    Node::Int {
                        start: start as u32,
                        end: i as u32,
                    }
                });
            }
            let safe = digits.len() < 16
                || (digits.len() == 16
                    && digits
                        .iter()
                        .fold(0u64, |a, d| a * 10 + u64::from(d - b'0'))
                        <= MAX_SAFE_INTEGER);
            if !safe {
                return Err(self.number_error(start, text, REASON_UNSAFE_INTEGER));
            }
            return Ok(Node::Int {
                start: start as u32,
                end: i as u32,
            });
        }
        let s = std::str::from_utf8(text).map_err(|_| internal())?;
        match s.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(Node::Float(f)),
            _ => Err(self.number_error(start, text, REASON_OVERFLOW)),
        }
    }

    fn number_error(&self, at: usize, text: &[u8], reason: &'static str) -> JsonError {
        let (line, column) = line_col(self.input, at);
        let mut t = String::from_utf8_lossy(text.get(..64).unwrap_or(text)).into_owned();
        if text.len() > 64 {
            t.push('…');
        }
        JsonError::Number {
            text: t,
            reason,
            line,
            column,
            pointer: self.current_pointer(),
        }
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
            Err(JsonError::InvalidUtf8 { offset: 1, .. })
        ));
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert!(matches!(
            parse_strict(deep.as_bytes()),
            Err(JsonError::TooDeep { .. })
        ));
    }

    #[test]
    fn values_keep_document_order_and_types() {
        let v = parse_strict(br#"{"z":1,"a":[true,null,-0,1.5,"x\u00e9"],"\u0041":{}}"#).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["z", "a", "A"]);
        assert_eq!(v["z"].as_i64(), Some(1));
        assert_eq!(v["a"][2].as_f64().map(f64::is_sign_negative), Some(true));
        assert_eq!(v["a"][3].as_f64(), Some(1.5));
        assert_eq!(v["a"][4].as_str(), Some("xé"));
        assert_eq!(parse_strict(b" 7 ").unwrap(), Value::from(7));
    }

    #[test]
    fn utf16_order() {
        // U+FB33 (EF AC B3) sorts after U+1F602 (F0 9F 98 82) in UTF-16.
        assert_eq!(
            cmp_utf16("\u{1F602}".as_bytes(), "\u{FB33}".as_bytes()),
            Ordering::Less
        );
        assert_eq!(
            cmp_utf16("\u{E000}".as_bytes(), "\u{10000}".as_bytes()),
            Ordering::Greater
        );
        assert_eq!(
            cmp_utf16("\u{D7FF}".as_bytes(), "\u{10000}".as_bytes()),
            Ordering::Less
        );
        assert_eq!(cmp_utf16(b"abcdefghij", b"abcdefghik"), Ordering::Less);
        assert_eq!(cmp_utf16(b"abc", b"abcd"), Ordering::Less);
        assert_eq!(cmp_utf16(b"", b""), Ordering::Equal);
    }

    #[test]
    fn pointer_is_rfc6901() {
        assert_eq!(pointer(&[]), "");
        assert_eq!(
            pointer(&["a/b".into(), "m~n".into(), "0".into()]),
            "/a~1b/m~0n/0"
        );
    }

    #[test]
    fn syntax_errors_show_the_text_near_them_and_no_empty_pointer() {
        let e = parse_strict(br#"{"a": 1,, }"#).unwrap_err().to_string();
        assert_eq!(
            e,
            r#"JSON syntax error at line 1, column 9, near "{\"a\": 1,, }": expected a member name (a string)"#
        );
        let e = parse_strict(b"{\n  \"skills\": [1, 2,]\n}")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(r#"line 2, column 19, near "  \"skills\": [1, 2,]" (in "/skills/2")"#),
            "{e}"
        );
        // A long line: at most NEAR_CHARS characters before the error.
        let long = format!("[{}x]", "1, ".repeat(100));
        let e = parse_strict(long.as_bytes()).unwrap_err().to_string();
        assert!(e.contains(r#"near "1, 1, 1, 1, 1, 1, 1, 1, x]""#), "{e}");
        let e = parse_strict(b"1e999").unwrap_err().to_string();
        assert!(!e.contains("(at"), "{e}");
    }
}
