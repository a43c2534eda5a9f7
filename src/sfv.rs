//! A strict RFC 8941 / RFC 9651 Structured Field Values parser and serializer,
//! just large enough for RFC 9421 and RFC 9530.
//!
//! * Parsing follows RFC 9651 section 4.2 (leading/trailing SP removed, any
//!   other deviation is an error). Dates (`@123`) and Display Strings
//!   (`%"..."`) of RFC 9651 are accepted.
//! * [`parse_dictionary_raw`] keeps every member, duplicates included, so
//!   callers that must refuse duplicate keys (RFC 9421 labels) can; the
//!   RFC 8941 "last value wins, first position kept" rule is applied by
//!   [`Dictionary::normalized`].
//! * Serialization follows RFC 9651 section 4.1, so parse-then-serialize is
//!   the strict re-serialization RFC 9421 section 2.1.1 (`sf`) asks for.
//!
//! No panics on any input: every index is checked.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Largest input accepted by the parsers (bytes).
pub const MAX_SF_LEN: usize = 64 * 1024;

/// Most members accepted in one List or Dictionary. RFC 9651 sections 3.1
/// and 3.2 require parsers to support at least 1024; more is refused so the
/// work done per field stays bounded (linear in the field's length).
pub const MAX_MEMBERS: usize = 1024;

/// Most parameters accepted on one item or inner list (RFC 9651 section
/// 3.1.2 requires support for at least 256).
pub const MAX_PARAMS: usize = 256;

/// Most items accepted in one inner list (RFC 9651 section 3.1.1 requires
/// support for at least 256).
pub const MAX_INNER_LIST: usize = 256;

/// Why a structured field did not parse (RFC 9651 section 4.2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SfError {
    /// The input is longer than [`MAX_SF_LEN`] bytes; nothing was parsed.
    #[error("structured field larger than {MAX_SF_LEN} bytes")]
    TooLong,
    /// The input does not follow the grammar of RFC 9651 section 4.2.
    #[error("invalid structured field at byte {pos}: {what}")]
    Syntax {
        /// Byte offset into the input where parsing failed (0-based).
        pos: usize,
        /// What was expected or found there, for a person to read.
        what: &'static str,
    },
    /// More than [`MAX_MEMBERS`] List or Dictionary members.
    #[error("structured field has more than {MAX_MEMBERS} list or dictionary members")]
    TooManyMembers,
    /// More than [`MAX_PARAMS`] parameters on one item or inner list.
    #[error("structured field has more than {MAX_PARAMS} parameters on one item")]
    TooManyParams,
    /// More than [`MAX_INNER_LIST`] items in one inner list.
    #[error("structured field has more than {MAX_INNER_LIST} items in one inner list")]
    TooManyInnerItems,
}

/// A bare item (RFC 9651 section 3.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BareItem {
    /// An Integer (RFC 9651 section 3.3.1): at most 15 decimal digits,
    /// -999,999,999,999,999 to 999,999,999,999,999.
    Integer(i64),
    /// A Decimal (RFC 9651 section 3.3.2), in thousandths: `1.5` is
    /// `Decimal(1500)` (at most 12 integer and 3 fractional digits).
    Decimal(i64),
    /// A String (RFC 9651 section 3.3.3): printable ASCII, unescaped.
    String(String),
    /// A Token (RFC 9651 section 3.3.4), e.g. `text/html` or `*foo`.
    Token(String),
    /// A Byte Sequence (RFC 9651 section 3.3.5): the decoded bytes of
    /// `:base64:`.
    ByteSeq(Vec<u8>),
    /// A Boolean (RFC 9651 section 3.3.6): `?1` or `?0`.
    Boolean(bool),
    /// A Date (RFC 9651 section 3.3.7): `@` and seconds since the Unix epoch.
    Date(i64),
    /// A Display String (RFC 9651 section 3.3.8): `%"..."`, the decoded
    /// Unicode text.
    DisplayString(String),
}

/// Parameters, in received order (RFC 9651 section 3.1.2).
pub type Params = Vec<(String, BareItem)>;

/// An item with its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// The value.
    pub bare: BareItem,
    /// Its parameters, in received order (duplicates kept).
    pub params: Params,
}

/// An inner list with its parameters (RFC 9651 section 3.1.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InnerList {
    /// The members, in order, each with its own parameters.
    pub items: Vec<Item>,
    /// The parameters of the inner list itself, in received order.
    pub params: Params,
}

/// A list member or dictionary value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A single Item (RFC 9651 section 3.3).
    Item(Item),
    /// An Inner List (RFC 9651 section 3.1.1), e.g. a `Signature-Input` member.
    InnerList(InnerList),
}

/// A dictionary in received order, duplicates kept (see [`Dictionary::normalized`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Dictionary(pub Vec<(String, Entry)>);

impl Dictionary {
    /// The first duplicated key, if any (linear: one hash set pass).
    pub fn first_duplicate(&self) -> Option<&str> {
        first_dup(self.0.iter().map(|(k, _)| k.as_str()))
    }

    /// RFC 9651 section 4.2.2: a repeated key overwrites the value and keeps
    /// the position of its first occurrence. Linear in the member count
    /// (keys are indexed in a hash map, never rescanned).
    pub fn normalized(&self) -> Dictionary {
        Dictionary(last_wins(&self.0).into_owned())
    }

    /// The value of `key` under RFC 9651 semantics (last occurrence wins).
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// Up to this many keys, a key is looked up by comparing it with the
/// others (at most `SMALL * SMALL / 2` comparisons, cheaper than hashing
/// such a few); beyond, in a hash map, so that the work stays linear.
const SMALL: usize = 16;

/// First key seen twice, in one pass.
fn first_dup<'a>(keys: impl Iterator<Item = &'a str> + Clone) -> Option<&'a str> {
    if keys.clone().nth(SMALL).is_none() {
        // Each key against those before it, walked again from the start:
        // no set to allocate (a field's parameters and labels are checked
        // on every verification, and are few).
        return keys
            .clone()
            .enumerate()
            .find(|&(i, k)| keys.clone().take(i).any(|p| p == k))
            .map(|(_, k)| k);
    }
    let mut seen = std::collections::HashSet::new();
    keys.into_iter().find(|k| !seen.insert(*k))
}

/// RFC 9651 sections 4.2.2 and 4.2.3.2: last value wins, first position kept.
/// When no key repeats (the usual case) that is the members as they are,
/// borrowed, not copied; otherwise one pass with a key -> output index map.
fn last_wins<V: Clone>(members: &[(String, V)]) -> Cow<'_, [(String, V)]> {
    if first_dup(members.iter().map(|(k, _)| k.as_str())).is_none() {
        return Cow::Borrowed(members);
    }
    if members.len() <= SMALL {
        let mut out: Vec<(String, V)> = Vec::with_capacity(members.len());
        for (k, v) in members {
            match out.iter_mut().find(|(o, _)| o == k) {
                Some(slot) => slot.1 = v.clone(),
                None => out.push((k.clone(), v.clone())),
            }
        }
        return Cow::Owned(out);
    }
    let mut index: std::collections::HashMap<&str, usize> =
        std::collections::HashMap::with_capacity(members.len());
    let mut out: Vec<(String, V)> = Vec::with_capacity(members.len());
    for (k, v) in members {
        match index.get(k.as_str()) {
            Some(&i) => {
                if let Some(slot) = out.get_mut(i) {
                    slot.1 = v.clone();
                }
            }
            None => {
                index.insert(k.as_str(), out.len());
                out.push((k.clone(), v.clone()));
            }
        }
    }
    Cow::Owned(out)
}

/// The first key that occurs twice in a parameter list.
pub fn duplicate_param(p: &Params) -> Option<&str> {
    first_dup(p.iter().map(|(k, _)| k.as_str()))
}

// ---------------------------------------------------------------------------
// Parser

struct P<'a> {
    s: &'a [u8],
    i: usize,
}

type R<T> = Result<T, SfError>;

impl<'a> P<'a> {
    fn new(s: &'a [u8]) -> R<P<'a>> {
        if s.len() > MAX_SF_LEN {
            return Err(SfError::TooLong);
        }
        let mut p = P { s, i: 0 };
        p.skip_sp();
        Ok(p)
    }
    fn err<T>(&self, what: &'static str) -> R<T> {
        Err(SfError::Syntax { pos: self.i, what })
    }
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn eof(&self) -> bool {
        self.i >= self.s.len()
    }
    fn skip_sp(&mut self) {
        while self.peek() == Some(b' ') {
            self.i += 1;
        }
    }
    fn skip_ows(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
    }
    fn finish(&mut self) -> R<()> {
        self.skip_sp();
        if self.eof() {
            Ok(())
        } else {
            self.err("trailing characters")
        }
    }

    fn list(&mut self) -> R<Vec<Entry>> {
        let mut out = Vec::new();
        while !self.eof() {
            if out.len() >= MAX_MEMBERS {
                return Err(SfError::TooManyMembers);
            }
            out.push(self.item_or_inner_list()?);
            self.skip_ows();
            if self.eof() {
                return Ok(out);
            }
            if self.peek() != Some(b',') {
                return self.err("expected ',' between list members");
            }
            self.i += 1;
            self.skip_ows();
            if self.eof() {
                return self.err("trailing ',' in list");
            }
        }
        Ok(out)
    }

    fn dictionary(&mut self) -> R<Dictionary> {
        let mut out = Vec::new();
        while !self.eof() {
            if out.len() >= MAX_MEMBERS {
                return Err(SfError::TooManyMembers);
            }
            let key = self.key()?;
            let entry = if self.peek() == Some(b'=') {
                self.i += 1;
                self.item_or_inner_list()?
            } else {
                let params = self.params()?;
                Entry::Item(Item {
                    bare: BareItem::Boolean(true),
                    params,
                })
            };
            out.push((key, entry));
            self.skip_ows();
            if self.eof() {
                return Ok(Dictionary(out));
            }
            if self.peek() != Some(b',') {
                return self.err("expected ',' between dictionary members");
            }
            self.i += 1;
            self.skip_ows();
            if self.eof() {
                return self.err("trailing ',' in dictionary");
            }
        }
        Ok(Dictionary(out))
    }

    fn item_or_inner_list(&mut self) -> R<Entry> {
        if self.peek() == Some(b'(') {
            Ok(Entry::InnerList(self.inner_list()?))
        } else {
            Ok(Entry::Item(self.item()?))
        }
    }

    fn inner_list(&mut self) -> R<InnerList> {
        // caller checked '('
        self.i += 1;
        let mut items = Vec::new();
        loop {
            self.skip_sp();
            match self.peek() {
                Some(b')') => {
                    self.i += 1;
                    let params = self.params()?;
                    return Ok(InnerList { items, params });
                }
                None => return self.err("unterminated inner list"),
                _ => {}
            }
            if items.len() >= MAX_INNER_LIST {
                return Err(SfError::TooManyInnerItems);
            }
            items.push(self.item()?);
            match self.peek() {
                Some(b' ' | b')') => {}
                _ => return self.err("expected SP or ')' in inner list"),
            }
        }
    }

    fn item(&mut self) -> R<Item> {
        let bare = self.bare()?;
        let params = self.params()?;
        Ok(Item { bare, params })
    }

    fn params(&mut self) -> R<Params> {
        let mut out = Vec::new();
        while self.peek() == Some(b';') {
            if out.len() >= MAX_PARAMS {
                return Err(SfError::TooManyParams);
            }
            self.i += 1;
            self.skip_sp();
            let key = self.key()?;
            let value = if self.peek() == Some(b'=') {
                self.i += 1;
                self.bare()?
            } else {
                BareItem::Boolean(true)
            };
            if out.is_empty() {
                // A signature's parameters (RFC 9421 section 2.3) are
                // usually five or six: one allocation, not a grow at four.
                out.reserve_exact(8);
            }
            out.push((key, value));
        }
        Ok(out)
    }

    fn key(&mut self) -> R<String> {
        match self.peek() {
            Some(c) if c.is_ascii_lowercase() || c == b'*' => {}
            _ => return self.err("key must start with a lowercase letter or '*'"),
        }
        let start = self.i;
        while let Some(c) = self.peek() {
            if c.is_ascii_lowercase()
                || c.is_ascii_digit()
                || matches!(c, b'_' | b'-' | b'.' | b'*')
            {
                self.i += 1;
            } else {
                break;
            }
        }
        Ok(ascii(&self.s[start..self.i]))
    }

    fn bare(&mut self) -> R<BareItem> {
        match self.peek() {
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b'"') => Ok(BareItem::String(self.string()?)),
            Some(b':') => Ok(BareItem::ByteSeq(self.byte_seq()?)),
            Some(b'?') => {
                self.i += 1;
                match self.peek() {
                    Some(b'1') => {
                        self.i += 1;
                        Ok(BareItem::Boolean(true))
                    }
                    Some(b'0') => {
                        self.i += 1;
                        Ok(BareItem::Boolean(false))
                    }
                    _ => self.err("boolean must be ?0 or ?1"),
                }
            }
            Some(b'@') => {
                self.i += 1;
                match self.number()? {
                    BareItem::Integer(n) => Ok(BareItem::Date(n)),
                    _ => self.err("date must be an integer"),
                }
            }
            Some(b'%') => Ok(BareItem::DisplayString(self.display_string()?)),
            Some(c) if c.is_ascii_alphabetic() || c == b'*' => Ok(BareItem::Token(self.token())),
            None => self.err("expected an item, found end of input"),
            _ => self.err("unexpected character where an item was expected"),
        }
    }

    fn number(&mut self) -> R<BareItem> {
        let neg = if self.peek() == Some(b'-') {
            self.i += 1;
            true
        } else {
            false
        };
        if !matches!(self.peek(), Some(b'0'..=b'9')) {
            return self.err("expected a digit");
        }
        let mut int: i64 = 0;
        let mut int_digits = 0usize;
        while let Some(c @ b'0'..=b'9') = self.peek() {
            int_digits += 1;
            if int_digits > 15 {
                return self.err("integer has more than 15 digits");
            }
            int = int * 10 + i64::from(c - b'0');
            self.i += 1;
        }
        if self.peek() != Some(b'.') {
            return Ok(BareItem::Integer(if neg { -int } else { int }));
        }
        if int_digits > 12 {
            return self.err("decimal has more than 12 integer digits");
        }
        self.i += 1;
        let mut frac: i64 = 0;
        let mut frac_digits = 0u32;
        while let Some(c @ b'0'..=b'9') = self.peek() {
            frac_digits += 1;
            if frac_digits > 3 {
                return self.err("decimal has more than 3 fractional digits");
            }
            frac = frac * 10 + i64::from(c - b'0');
            self.i += 1;
        }
        if frac_digits == 0 {
            return self.err("decimal ends with '.'");
        }
        let v = int * 1000 + frac * 10i64.pow(3 - frac_digits);
        Ok(BareItem::Decimal(if neg { -v } else { v }))
    }

    fn string(&mut self) -> R<String> {
        self.i += 1; // '"'
        let mut out = String::new();
        loop {
            // A run of printable ASCII other than '"' and '\\', copied at once.
            let run = self.s[self.i..]
                .iter()
                .take_while(|c| matches!(c, 0x20..=0x7e) && !matches!(c, b'"' | b'\\'))
                .count();
            if run > 0 {
                push_ascii(&mut out, &self.s[self.i..self.i + run]);
                self.i += run;
            }
            match self.peek() {
                None => return self.err("unterminated string"),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.i += 1;
                    match self.peek() {
                        Some(c @ (b'"' | b'\\')) => {
                            out.push(char::from(c));
                            self.i += 1;
                        }
                        _ => return self.err("invalid escape in string"),
                    }
                }
                Some(c @ 0x20..=0x7e) => {
                    out.push(char::from(c));
                    self.i += 1;
                }
                Some(_) => return self.err("string holds a non-printable or non-ASCII byte"),
            }
        }
    }

    fn token(&mut self) -> String {
        let start = self.i;
        while let Some(c) = self.peek() {
            if is_tchar(c) || c == b':' || c == b'/' {
                self.i += 1;
            } else {
                break;
            }
        }
        ascii(&self.s[start..self.i])
    }

    fn byte_seq(&mut self) -> R<Vec<u8>> {
        self.i += 1; // ':'
        let start = self.i;
        while let Some(c) = self.peek() {
            if c == b':' {
                break;
            }
            if !(c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'=')) {
                return self.err("invalid character in byte sequence");
            }
            self.i += 1;
        }
        if self.peek() != Some(b':') {
            return self.err("unterminated byte sequence");
        }
        // Checked above: base64 characters only, ASCII, read in place.
        let text = std::str::from_utf8(&self.s[start..self.i]).map_err(|_| SfError::Syntax {
            pos: start,
            what: "invalid character in byte sequence",
        })?;
        self.i += 1;
        crate::b64::decode_std(text).map_err(|_| SfError::Syntax {
            pos: start,
            what: "byte sequence is not canonical padded base64",
        })
    }

    fn display_string(&mut self) -> R<String> {
        self.i += 1; // '%'
        if self.peek() != Some(b'"') {
            return self.err("display string must start with %\"");
        }
        self.i += 1;
        let mut bytes = Vec::new();
        loop {
            match self.peek() {
                None => return self.err("unterminated display string"),
                Some(b'"') => {
                    self.i += 1;
                    return String::from_utf8(bytes).map_err(|_| SfError::Syntax {
                        pos: self.i,
                        what: "display string is not UTF-8",
                    });
                }
                Some(b'%') => {
                    let h = self.s.get(self.i + 1..self.i + 3);
                    let v = h.and_then(|h| {
                        if h.iter()
                            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
                        {
                            std::str::from_utf8(h)
                                .ok()
                                .and_then(|t| u8::from_str_radix(t, 16).ok())
                        } else {
                            None
                        }
                    });
                    match v {
                        Some(b) => bytes.push(b),
                        None => return self.err("invalid percent escape in display string"),
                    }
                    self.i += 3;
                }
                Some(c @ 0x20..=0x7e) => {
                    bytes.push(c);
                    self.i += 1;
                }
                Some(_) => return self.err("invalid byte in display string"),
            }
        }
    }
}

fn ascii(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len());
    push_ascii(&mut s, b);
    s
}

/// Append bytes as the characters of their values (the parser hands over
/// ASCII, copied at once).
fn push_ascii(out: &mut String, b: &[u8]) {
    match std::str::from_utf8(b) {
        Ok(t) if b.is_ascii() => out.push_str(t),
        _ => out.extend(b.iter().map(|&c| char::from(c))),
    }
}

/// RFC 9110 tchar.
pub fn is_tchar(c: u8) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            b'!' | b'#'
                | b'$'
                | b'%'
                | b'&'
                | b'\''
                | b'*'
                | b'+'
                | b'-'
                | b'.'
                | b'^'
                | b'_'
                | b'`'
                | b'|'
                | b'~'
        )
}

/// Parse a Dictionary, keeping duplicate keys (RFC 9651 section 4.2.2).
///
/// # Errors
/// [`SfError`] when the input is not a valid RFC 9651 structured field or exceeds a limit.
pub fn parse_dictionary_raw(input: &[u8]) -> Result<Dictionary, SfError> {
    let mut p = P::new(input)?;
    let d = p.dictionary()?;
    p.finish()?;
    Ok(d)
}

/// Parse a Dictionary (RFC 9651 section 4.2.2) with its duplicate
/// semantics applied: a repeated key keeps its first position and takes its
/// last value. Use [`parse_dictionary_raw`] to see or refuse duplicates.
/// Leading and trailing spaces are removed; any other deviation from the
/// grammar is an [`SfError`].
///
/// ```
/// use agentsig::sfv::{parse_dictionary, BareItem, Entry, SfError};
///
/// let d = parse_dictionary(b"a=1, b=(\"x\" \"y\");p, a=?0")?;
/// assert_eq!(d.0.len(), 2);
/// // "a" keeps its first position but takes its last value.
/// assert_eq!(d.0[0].0, "a");
/// match d.get("a") {
///     Some(Entry::Item(it)) => assert_eq!(it.bare, BareItem::Boolean(false)),
///     other => panic!("{other:?}"),
/// }
/// match d.get("b") {
///     Some(Entry::InnerList(l)) => {
///         assert_eq!(l.items.len(), 2);
///         assert_eq!(l.params, [("p".to_owned(), BareItem::Boolean(true))]);
///     }
///     other => panic!("{other:?}"),
/// }
/// assert!(matches!(parse_dictionary(b"a=1,"), Err(SfError::Syntax { .. })));
/// # Ok::<(), SfError>(())
/// ```
///
/// # Errors
/// [`SfError`] when the input is not a valid RFC 9651 structured field or exceeds a limit.
pub fn parse_dictionary(input: &[u8]) -> Result<Dictionary, SfError> {
    let raw = parse_dictionary_raw(input)?;
    // No key repeated (the usual case): already normalized, kept as parsed.
    let resolved = match last_wins(&raw.0) {
        Cow::Owned(members) => Some(members),
        Cow::Borrowed(_) => None,
    };
    Ok(resolved.map_or(raw, Dictionary))
}

/// Parse a List (RFC 9651 section 4.2.1).
///
/// # Errors
/// [`SfError`] when the input is not a valid RFC 9651 structured field or exceeds a limit.
pub fn parse_list(input: &[u8]) -> Result<Vec<Entry>, SfError> {
    let mut p = P::new(input)?;
    let l = p.list()?;
    p.finish()?;
    Ok(l)
}

/// Parse an Item (RFC 9651 section 4.2.3).
///
/// # Errors
/// [`SfError`] when the input is not a valid RFC 9651 structured field or exceeds a limit.
pub fn parse_item(input: &[u8]) -> Result<Item, SfError> {
    let mut p = P::new(input)?;
    let it = p.item()?;
    p.finish()?;
    Ok(it)
}

// ---------------------------------------------------------------------------
// Serializer (RFC 9651 section 4.1)

/// Serialize `s` as a String (RFC 9651 section 4.1.6): quoted, `"` and
/// `\` escaped.
pub fn write_string(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    // Runs without a character to escape are copied at once.
    let mut rest = s;
    while let Some(i) = rest.bytes().position(|b| b == b'"' || b == b'\\') {
        out.push_str(&rest[..i]);
        out.push('\\');
        out.push_str(&rest[i..=i]);
        rest = &rest[i + 1..];
    }
    out.push_str(rest);
    out.push('"');
}

/// Serialize a bare item.
pub fn write_bare(out: &mut String, b: &BareItem) {
    match b {
        BareItem::Integer(n) => {
            let _ = write!(out, "{n}");
        }
        BareItem::Decimal(t) => {
            if *t < 0 {
                out.push('-');
            }
            let a = t.unsigned_abs();
            let _ = write!(out, "{}.", a / 1000);
            let frac = a % 1000;
            let s = format!("{frac:03}");
            let s = s.trim_end_matches('0');
            out.push_str(if s.is_empty() { "0" } else { s });
        }
        BareItem::String(s) => write_string(out, s),
        BareItem::Token(t) => out.push_str(t),
        BareItem::ByteSeq(b) => {
            out.push(':');
            out.push_str(&crate::b64::encode_std(b));
            out.push(':');
        }
        BareItem::Boolean(v) => out.push_str(if *v { "?1" } else { "?0" }),
        BareItem::Date(n) => {
            let _ = write!(out, "@{n}");
        }
        BareItem::DisplayString(s) => {
            out.push_str("%\"");
            for b in s.bytes() {
                if b == b'%' || b == b'"' || !(0x20..=0x7e).contains(&b) {
                    let _ = write!(out, "%{b:02x}");
                } else {
                    out.push(char::from(b));
                }
            }
            out.push('"');
        }
    }
}

/// Serialize parameters (duplicates resolved, RFC 9651 section 4.1.1.2).
pub fn write_params(out: &mut String, p: &[(String, BareItem)]) {
    for (k, v) in p {
        out.push(';');
        out.push_str(k);
        if *v != BareItem::Boolean(true) {
            out.push('=');
            write_bare(out, v);
        }
    }
}

/// Serialize an item with its parameters.
pub fn write_item(out: &mut String, it: &Item) {
    write_bare(out, &it.bare);
    write_params(out, &last_wins(&it.params));
}

/// Serialize an inner list with its parameters.
pub fn write_inner_list(out: &mut String, l: &InnerList) {
    out.push('(');
    for (i, it) in l.items.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        write_item(out, it);
    }
    out.push(')');
    write_params(out, &last_wins(&l.params));
}

/// Serialize a list member or dictionary value.
pub fn write_entry(out: &mut String, e: &Entry) {
    match e {
        Entry::Item(it) => write_item(out, it),
        Entry::InnerList(l) => write_inner_list(out, l),
    }
}

/// Serialize a list.
pub fn write_list(out: &mut String, l: &[Entry]) {
    for (i, e) in l.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_entry(out, e);
    }
}

/// Serialize a dictionary (duplicates resolved).
pub fn write_dictionary(out: &mut String, d: &Dictionary) {
    // Duplicates resolved (RFC 9651 section 4.2.2).
    for (i, (k, v)) in last_wins(&d.0).iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(k);
        match v {
            Entry::Item(Item {
                bare: BareItem::Boolean(true),
                params,
            }) => write_params(out, &last_wins(params)),
            other => {
                out.push('=');
                write_entry(out, other);
            }
        }
    }
}

/// True if `s` is a valid sf-key.
pub fn is_key(s: &str) -> bool {
    let b = s.as_bytes();
    matches!(b.first(), Some(c) if c.is_ascii_lowercase() || *c == b'*')
        && b.iter().all(|c| {
            c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, b'_' | b'-' | b'.' | b'*')
        })
}

/// True if `s` is a printable-ASCII sf-string content.
pub fn is_sf_string(s: &str) -> bool {
    s.bytes().all(|c| (0x20..=0x7e).contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt_dict(s: &str) -> String {
        let mut o = String::new();
        write_dictionary(&mut o, &parse_dictionary(s.as_bytes()).unwrap());
        o
    }

    #[test]
    fn duplicates_and_last_wins_alike_below_and_above_the_small_bound() {
        for n in [3, SMALL, SMALL + 1, 40] {
            let keys: Vec<String> = (0..n).map(|i| format!("k{i}")).collect();
            let text = keys.join(", ");
            let d = parse_dictionary_raw(text.as_bytes()).unwrap();
            assert_eq!(d.first_duplicate(), None, "{n}");
            let dup = format!("{text}, k1=2, k0=3");
            let d = parse_dictionary_raw(dup.as_bytes()).unwrap();
            assert_eq!(d.first_duplicate(), Some("k1"), "{n}");
            let norm = d.normalized();
            assert_eq!(norm.0.len(), n, "{n}");
            assert_eq!(norm.0[0].0, "k0");
            assert!(matches!(&norm.0[0].1, Entry::Item(i) if i.bare == BareItem::Integer(3)));
            assert!(matches!(&norm.0[1].1, Entry::Item(i) if i.bare == BareItem::Integer(2)));
        }
    }

    #[test]
    fn strings_with_escapes_and_runs() {
        let d = parse_dictionary_raw(br#"a="plain run", b="x\"y\\z", c="""#).unwrap();
        let s = |k: &str| match d.get(k) {
            Some(Entry::Item(Item {
                bare: BareItem::String(s),
                ..
            })) => s.clone(),
            e => panic!("{e:?}"),
        };
        assert_eq!(s("a"), "plain run");
        assert_eq!(s("b"), r#"x"y\z"#);
        assert_eq!(s("c"), "");
        assert!(parse_dictionary_raw(b"a=\"\x01\"").is_err());
        assert!(parse_dictionary_raw("a=\"caf\u{e9}\"".as_bytes()).is_err());
        assert!(parse_dictionary_raw(br#"a="\n""#).is_err());
        assert!(parse_dictionary_raw(br#"a="open"#).is_err());
    }

    #[test]
    fn strings_serialize_with_their_escapes() {
        for (v, want) in [
            ("", r#""""#),
            ("plain run", r#""plain run""#),
            (r#"x"y\z"#, r#""x\"y\\z""#),
            (r#""\"#, r#""\"\\""#),
        ] {
            let mut out = String::from("k=");
            write_string(&mut out, v);
            assert_eq!(&out[2..], want, "{v:?}");
            let d = parse_dictionary_raw(out.as_bytes()).unwrap();
            assert!(
                matches!(d.get("k"), Some(Entry::Item(Item { bare: BareItem::String(s), .. })) if s == v)
            );
        }
    }

    #[test]
    fn dictionary_round_trip() {
        assert_eq!(
            rt_dict("a=1,    b=2;x=1;y=2,   c=(a   b   c)"),
            "a=1, b=2;x=1;y=2, c=(a b c)"
        );
        assert_eq!(rt_dict("a=?0, b, c;foo=bar"), "a=?0, b, c;foo=bar");
        assert_eq!(rt_dict("a=1, a=2, b=3"), "a=2, b=3");
        assert_eq!(rt_dict("a=1.50, b=-0.0"), "a=1.5, b=0.0");
        assert_eq!(
            rt_dict(r#"s="x\"y", d=%"f%c3%bc""#),
            r#"s="x\"y", d=%"f%c3%bc""#
        );
    }

    #[test]
    fn rejects() {
        for bad in [
            "a=",
            "a=1,",
            "A=1",
            "a=(1 2",
            "a=\"x",
            "a=:YQ:",
            "a=1.",
            "a=1.1234",
            "a=?2",
            "a=1 b=2",
            "a=1234567890123456",
            "a=%\"%C3\"",
        ] {
            assert!(parse_dictionary(bad.as_bytes()).is_err(), "{bad}");
        }
        let raw = parse_dictionary_raw(b"a=1, b=2, a=3").unwrap();
        assert_eq!(raw.first_duplicate(), Some("a"));
    }

    #[test]
    fn list_and_item() {
        let l = parse_list(b"a, (b c);x, \"d\"").unwrap();
        let mut o = String::new();
        write_list(&mut o, &l);
        assert_eq!(o, "a, (b c);x, \"d\"");
        assert!(parse_item(b"1, 2").is_err());
        assert!(parse_list(b"").unwrap().is_empty());
    }
}
