//! The one internal message model that raw HTTP/1.1 text and the `http`
//! crate's `Request`/`Response` both convert into (RFC 9421 section 1.4:
//! signatures are over an abstract message, not a wire form).

use crate::sfv::is_tchar;

/// Limits applied to every message (bounded sizes for untrusted input).
pub const MAX_HEAD_BYTES: usize = 128 * 1024;
/// Largest number of field lines (header plus trailer) in a message.
pub const MAX_FIELD_LINES: usize = 512;

/// Why a message could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MessageError {
    /// The input holds no message: it is empty or only line ends, or
    /// nothing follows the interim 1xx responses.
    #[error("empty message")]
    Empty,
    /// The header section is longer than [`MAX_HEAD_BYTES`].
    #[error("header section larger than {MAX_HEAD_BYTES} bytes")]
    HeadTooLarge,
    /// More than [`MAX_FIELD_LINES`] header plus trailer field lines.
    #[error("more than {MAX_FIELD_LINES} field lines")]
    TooManyFields,
    /// The request or status line is not RFC 9112 section 3 or 4 syntax
    /// (or the request has more than one `Host`); holds the line (at most
    /// 80 characters) or what is wrong with it.
    #[error("malformed start line: {0:?}")]
    StartLine(String),
    /// A field line is not `name: value` (RFC 9112 section 5).
    #[error("malformed field line {line}: {what}")]
    FieldLine {
        /// The line number: 1-based in the header section (the start line is
        /// line 1); 0-based within a chunked body's trailer section.
        line: usize,
        /// What is wrong, for a person to read.
        what: &'static str,
    },
    /// No empty line ends the header section (RFC 9112 section 2.1).
    #[error("the header section does not end with an empty line")]
    NoEndOfHead,
    /// The chunked transfer coding is broken (RFC 9112 section 7.1); holds
    /// what is wrong.
    #[error("invalid chunked body: {0}")]
    Chunked(&'static str),
    /// `Content-Length` disagrees with the bytes after the header section
    /// (RFC 9112 section 6.3), so the content to digest is ambiguous.
    #[error("Content-Length {declared} but the body holds {actual} bytes")]
    ContentLength {
        /// The `Content-Length` value as received.
        declared: String,
        /// The number of body bytes present.
        actual: usize,
    },
    /// A field name is not an RFC 9110 token; holds the name (at most 64
    /// characters).
    #[error("field {0:?}: name is not a token")]
    BadFieldName(String),
    /// A field value holds CR, LF or NUL (RFC 9110 section 5.5); holds the
    /// field name.
    #[error("field {0:?}: value holds CR, LF or NUL")]
    BadFieldValue(String),
    /// A request with neither a `Host` field nor an absolute-form target,
    /// so `@authority` cannot be derived (RFC 9421 section 2.2.3).
    #[error("the request has no authority (no Host field and no absolute-form target)")]
    NoAuthority,
    /// The message framing is ambiguous or not RFC 9112 section 6.3: several
    /// or non-digit `Content-Length` values, `Transfer-Encoding` together with
    /// `Content-Length`, a transfer coding other than one final `chunked`;
    /// holds what is wrong.
    #[error("invalid message framing: {0}")]
    Framing(&'static str),
    /// Bytes follow the end of the message (RFC 9112 section 6.3: a request
    /// with neither `Content-Length` nor `Transfer-Encoding` has no body, so
    /// what follows would be a second message); holds their number.
    #[error(
        "{0} bytes after the end of the message: a request without Content-Length or \
         Transfer-Encoding has no content, nor has a 204 or 304 response (RFC 9112 section \
         6.3), so they would be a second message; if they are the content, give the message \
         a Content-Length field with their number of bytes (Content-Length: {0})"
    )]
    TrailingBytes(usize),
    /// The request target is empty, holds a control byte or space, or is
    /// not one of the RFC 9112 section 3.2 forms; holds it (at most 64
    /// characters).
    #[error("invalid request target {0:?}")]
    BadTarget(String),
}

/// One field line: its lowercased name and its value with leading and
/// trailing whitespace removed and obs-fold replaced by one SP (RFC 9421 section 2.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The field name, lowercased (RFC 9421 section 2.1).
    pub name: String,
    /// The field value bytes, trimmed, obs-fold replaced by one SP.
    pub value: Vec<u8>,
}

/// The request-specific parts of a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestLine {
    /// The method as sent, case kept (`@method`, RFC 9421 section 2.2.1).
    pub method: String,
    /// The request target exactly as sent (RFC 9112 section 3.2).
    pub target: String,
    /// Lowercase scheme.
    pub scheme: String,
    /// Authority as derived for `@authority` (lowercase, default port removed).
    pub authority: String,
    /// Authority as received (Host, `:authority` or absolute-form), for `@target-uri`.
    pub raw_authority: String,
    /// Absolute path (`/` when empty), percent-escapes kept.
    pub path: String,
    /// Query without `?`, when the target has a `?`.
    pub query: Option<String>,
}

/// Request or response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A request, with the parts its derived components come from.
    Request(RequestLine),
    /// A response.
    Response {
        /// The status code (`@status`, RFC 9421 section 2.2.9); a parsed
        /// status line must hold 100 to 999.
        status: u16,
    },
}

/// An HTTP message as RFC 9421 sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Request or response, with the request line's parts.
    pub kind: Kind,
    /// The header fields, one entry per field line, in received order.
    pub headers: Vec<Field>,
    /// The trailer fields (from a chunked body), in received order; read
    /// by components with `;tr` (RFC 9421 section 2.1.3).
    pub trailers: Vec<Field>,
    /// The content: the body with transfer codings removed.
    pub body: Vec<u8>,
    /// For a parsed raw message: where the blank line ending the header
    /// section starts, so that fields can be inserted verbatim.
    pub(crate) head_end: Option<usize>,
    pub(crate) raw: Option<Vec<u8>>,
}

fn trim_ows(v: &[u8]) -> &[u8] {
    let start = v
        .iter()
        .position(|c| *c != b' ' && *c != b'\t')
        .unwrap_or(v.len());
    let end = v
        .iter()
        .rposition(|c| *c != b' ' && *c != b'\t')
        .map_or(start, |e| e + 1);
    v.get(start..end.max(start)).unwrap_or(&[])
}

fn check_name(name: &str) -> Result<String, MessageError> {
    if name.is_empty() || !name.bytes().all(is_tchar) {
        return Err(MessageError::BadFieldName(name.chars().take(64).collect()));
    }
    Ok(name.to_ascii_lowercase())
}

fn check_value(name: &str, v: &[u8]) -> Result<Vec<u8>, MessageError> {
    if v.iter().any(|c| matches!(c, b'\r' | b'\n' | 0)) {
        return Err(MessageError::BadFieldValue(name.to_owned()));
    }
    Ok(trim_ows(v).to_vec())
}

/// Split a line iterator over `\n`, dropping a preceding `\r`.
fn split_lines(head: &[u8]) -> Vec<&[u8]> {
    head.split(|c| *c == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .collect()
}

/// Find the end of the header section: returns (index of the blank line start, body start).
fn find_head_end(data: &[u8]) -> Option<(usize, usize)> {
    let mut i = 0;
    while i < data.len() {
        // at the start of a line
        if data.get(i..i + 2) == Some(b"\r\n") {
            return Some((i, i + 2));
        }
        if data.get(i) == Some(&b'\n') {
            return Some((i, i + 1));
        }
        match data
            .get(i..)
            .and_then(|r| r.iter().position(|c| *c == b'\n'))
        {
            Some(p) => i += p + 1,
            None => return None,
        }
    }
    None
}

fn parse_fields(lines: &[&[u8]], first_line_no: usize) -> Result<Vec<Field>, MessageError> {
    let mut out: Vec<Field> = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        let line_no = first_line_no + n;
        if matches!(line.first(), Some(b' ' | b'\t')) {
            // obs-fold (RFC 9112 section 5.2): replace by one SP.
            let Some(last) = out.last_mut() else {
                return Err(MessageError::FieldLine {
                    line: line_no,
                    what: "continuation line before any field",
                });
            };
            let cont = trim_ows(line);
            if cont.iter().any(|c| *c == 0 || *c == b'\r') {
                return Err(MessageError::FieldLine {
                    line: line_no,
                    what: "CR or NUL in a field value",
                });
            }
            if !cont.is_empty() {
                if !last.value.is_empty() {
                    last.value.push(b' ');
                }
                last.value.extend_from_slice(cont);
            }
            continue;
        }
        let Some(colon) = line.iter().position(|c| *c == b':') else {
            return Err(MessageError::FieldLine {
                line: line_no,
                what: "no ':'",
            });
        };
        let (name, rest) = line.split_at(colon);
        let name = std::str::from_utf8(name).map_err(|_| MessageError::FieldLine {
            line: line_no,
            what: "field name is not ASCII",
        })?;
        if name.ends_with([' ', '\t']) {
            return Err(MessageError::FieldLine {
                line: line_no,
                what: "whitespace between field name and ':' (RFC 9112 section 5.1)",
            });
        }
        let name = check_name(name)?;
        let value = check_value(&name, rest.get(1..).unwrap_or(&[]))?;
        out.push(Field { name, value });
        if out.len() > MAX_FIELD_LINES {
            return Err(MessageError::TooManyFields);
        }
    }
    Ok(out)
}

fn dechunk(data: &[u8]) -> Result<(Vec<u8>, Vec<Field>), MessageError> {
    let mut body = Vec::new();
    let mut i = 0usize;
    loop {
        let rest = data.get(i..).ok_or(MessageError::Chunked("truncated"))?;
        let nl = rest
            .iter()
            .position(|c| *c == b'\n')
            .ok_or(MessageError::Chunked("chunk size line not terminated"))?;
        let line = rest.get(..nl).unwrap_or(&[]);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let size_txt = line.split(|c| *c == b';').next().unwrap_or(&[]);
        let size_txt = std::str::from_utf8(trim_ows(size_txt))
            .map_err(|_| MessageError::Chunked("chunk size not ASCII"))?;
        // chunk-size = 1*HEXDIG (RFC 9112 section 7.1): no sign, which
        // from_str_radix alone would accept.
        if size_txt.is_empty()
            || size_txt.len() > 8
            || !size_txt.bytes().all(|c| c.is_ascii_hexdigit())
        {
            return Err(MessageError::Chunked("bad chunk size"));
        }
        let size = usize::from_str_radix(size_txt, 16)
            .map_err(|_| MessageError::Chunked("bad chunk size"))?;
        i += nl + 1;
        if size == 0 {
            // trailer section up to the first empty line (or end of input);
            // only empty lines may follow it (RFC 9112 section 7.1.2).
            let rest = data.get(i..).unwrap_or(&[]);
            let (section, after) = match find_head_end(rest) {
                Some((end, after)) => (rest.get(..end).unwrap_or(&[]), after),
                None => (rest, rest.len()),
            };
            let mut lines = split_lines(section);
            while lines.last().is_some_and(|l| l.is_empty()) {
                lines.pop();
            }
            let trailers = parse_fields(&lines, 0)?;
            no_trailing_bytes(rest.get(after..).unwrap_or(&[]))?;
            return Ok((body, trailers));
        }
        let chunk = data
            .get(i..i + size)
            .ok_or(MessageError::Chunked("chunk shorter than its size"))?;
        body.extend_from_slice(chunk);
        i += size;
        if data.get(i..i + 2) == Some(b"\r\n") {
            i += 2;
        } else if data.get(i) == Some(&b'\n') {
            i += 1;
        } else {
            return Err(MessageError::Chunked(
                "chunk data not followed by a line end",
            ));
        }
    }
}

/// Refuse bytes after the end of a message, other than empty lines (which
/// RFC 9112 section 2.2 lets a recipient ignore before a next message).
fn no_trailing_bytes(rest: &[u8]) -> Result<(), MessageError> {
    if rest.iter().all(|c| matches!(c, b'\r' | b'\n')) {
        Ok(())
    } else {
        Err(MessageError::TrailingBytes(rest.len()))
    }
}

/// How the body of a message is delimited (RFC 9112 section 6.3).
enum Framing {
    /// No body (a request without length, a 204 or 304 response).
    None,
    /// `Content-Length` bytes.
    Length(usize),
    /// The chunked transfer coding.
    Chunked,
    /// The rest of the input (a response without length, which is read
    /// until the connection closes).
    ToEnd,
}

/// The framing of a message from its header fields (RFC 9112 section 6.3),
/// refusing every ambiguous case: several `Content-Length` values (equal or
/// not, in one line or several), a value other than `1*DIGIT` (no sign, no
/// space), `Transfer-Encoding` with `Content-Length`, a transfer coding
/// list (all `Transfer-Encoding` lines together) other than `chunked` alone.
fn framing(headers: &[Field], kind: &Kind) -> Result<Framing, MessageError> {
    let te: Vec<&[u8]> = headers
        .iter()
        .filter(|f| f.name == "transfer-encoding")
        .flat_map(|f| f.value.split(|c| *c == b','))
        .map(trim_ows)
        .filter(|t| !t.is_empty())
        .collect();
    let te_lines = headers.iter().any(|f| f.name == "transfer-encoding");
    let cl: Vec<&[u8]> = headers
        .iter()
        .filter(|f| f.name == "content-length")
        .flat_map(|f| f.value.split(|c| *c == b','))
        .collect();
    let no_body = match kind {
        Kind::Response { status } => matches!(status, 204 | 304),
        Kind::Request(_) => false,
    };
    if te_lines {
        if !cl.is_empty() {
            return Err(MessageError::Framing(
                "Transfer-Encoding together with Content-Length",
            ));
        }
        return match te.as_slice() {
            [one] if one.eq_ignore_ascii_case(b"chunked") => Ok(Framing::Chunked),
            [.., last] if last.eq_ignore_ascii_case(b"chunked") => Err(MessageError::Framing(
                "a transfer coding other than chunked (only chunked is decoded)",
            )),
            _ => Err(MessageError::Framing(
                "the final transfer coding is not chunked",
            )),
        };
    }
    match cl.as_slice() {
        [] if no_body => Ok(Framing::None),
        [] => Ok(match kind {
            Kind::Request(_) => Framing::None,
            Kind::Response { .. } => Framing::ToEnd,
        }),
        [one] => {
            if one.is_empty() || one.len() > 19 || !one.iter().all(u8::is_ascii_digit) {
                return Err(MessageError::Framing(
                    "Content-Length is not a decimal number",
                ));
            }
            let n = std::str::from_utf8(one)
                .ok()
                .and_then(|t| t.parse::<usize>().ok())
                .ok_or(MessageError::Framing(
                    "Content-Length is not a decimal number",
                ))?;
            Ok(Framing::Length(n))
        }
        _ => Err(MessageError::Framing("more than one Content-Length value")),
    }
}

/// Lowercase the host and drop the scheme's default port (RFC 9421 section 2.2.3).
pub fn normalize_authority(authority: &str, scheme: &str) -> String {
    let a = authority.to_ascii_lowercase();
    let default = match scheme {
        "https" => Some(":443"),
        "http" => Some(":80"),
        _ => None,
    };
    match default {
        Some(d) if a.ends_with(d) && !a.ends_with(']') => a[..a.len() - d.len()].to_owned(),
        _ => a,
    }
}

/// Split an absolute URI `scheme://authority/path?query` (RFC 3986 section 3).
fn split_absolute(target: &str) -> Option<(String, String, &str)> {
    let (scheme, rest) = target.split_once("://")?;
    if scheme.is_empty()
        || !scheme
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'))
    {
        return None;
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = rest.get(..end)?;
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    Some((
        scheme.to_ascii_lowercase(),
        authority.to_owned(),
        rest.get(end..).unwrap_or(""),
    ))
}

fn split_path_query(pq: &str) -> (String, Option<String>) {
    let pq = pq.split('#').next().unwrap_or("");
    let (path, query) = match pq.split_once('?') {
        Some((p, q)) => (p, Some(q.to_owned())),
        None => (pq, None),
    };
    let path = if path.is_empty() { "/" } else { path };
    (path.to_owned(), query)
}

impl RequestLine {
    /// Derive the request parts from a request target (RFC 9112 section 3.2),
    /// the Host field value and the scheme the message was received over.
    ///
    /// # Errors
    /// [`MessageError`] when the HTTP message is malformed, too large, or has too many fields (RFC
    /// 9112).
    pub fn new(
        method: &str,
        target: &str,
        host: Option<&str>,
        scheme: &str,
    ) -> Result<RequestLine, MessageError> {
        if method.is_empty() || !method.bytes().all(is_tchar) {
            return Err(MessageError::StartLine(format!("bad method {method:?}")));
        }
        if target.is_empty() || target.bytes().any(|c| c <= b' ' || c == 0x7f) {
            return Err(MessageError::BadTarget(target.chars().take(64).collect()));
        }
        let (scheme, authority, path, query) = if target.starts_with('/') {
            let host = host.ok_or(MessageError::NoAuthority)?;
            let (p, q) = split_path_query(target);
            (scheme.to_ascii_lowercase(), host.to_owned(), p, q)
        } else if let Some((s, a, pq)) = split_absolute(target) {
            let (p, q) = split_path_query(pq);
            (s, a, p, q)
        } else if target == "*" {
            let host = host.ok_or(MessageError::NoAuthority)?;
            (
                scheme.to_ascii_lowercase(),
                host.to_owned(),
                "*".to_owned(),
                None,
            )
        } else if method == "CONNECT" {
            (
                scheme.to_ascii_lowercase(),
                target.to_owned(),
                String::new(),
                None,
            )
        } else {
            return Err(MessageError::BadTarget(target.chars().take(64).collect()));
        };
        Ok(RequestLine {
            method: method.to_owned(),
            target: target.to_owned(),
            authority: normalize_authority(&authority, &scheme),
            raw_authority: authority,
            scheme,
            path,
            query,
        })
    }

    /// `@target-uri` (RFC 9421 section 2.2.2; RFC 9112 section 3.3 reconstruction).
    pub fn target_uri(&self) -> String {
        if split_absolute(&self.target).is_some() {
            return self.target.clone();
        }
        if self.target == "*" || self.method == "CONNECT" && !self.target.starts_with('/') {
            return format!("{}://{}", self.scheme, self.raw_authority);
        }
        format!("{}://{}{}", self.scheme, self.raw_authority, self.target)
    }
}

impl Message {
    /// A request built from parts (the headers must not hold the request line).
    pub fn request(line: RequestLine, headers: Vec<Field>, body: Vec<u8>) -> Message {
        Message {
            kind: Kind::Request(line),
            headers,
            trailers: Vec::new(),
            body,
            head_end: None,
            raw: None,
        }
    }

    /// A response built from parts.
    pub fn response(status: u16, headers: Vec<Field>, body: Vec<u8>) -> Message {
        Message {
            kind: Kind::Response { status },
            headers,
            trailers: Vec::new(),
            body,
            head_end: None,
            raw: None,
        }
    }

    /// Parse raw HTTP/1.1 message text (CRLF or bare LF line ends; RFC 9112).
    ///
    /// Requests in origin-form take their authority from `Host` and their
    /// scheme from `scheme` (the connection's, e.g. `https`). Responses may
    /// carry an `HTTP/2` or `HTTP/3` status line as `curl -i` writes; interim
    /// 1xx responses before the final one are skipped. A chunked body is
    /// decoded and its trailer fields kept for `;tr`.
    ///
    /// The body is delimited as RFC 9112 section 6.3 says, and every
    /// ambiguous framing is an error ([`MessageError::Framing`]): a request
    /// with neither `Content-Length` nor `Transfer-Encoding` has no body, so
    /// bytes after its header section are refused
    /// ([`MessageError::TrailingBytes`]) rather than taken as its content; a
    /// response without a length reads to the end of the input; a 204 or 304
    /// response has no body. Empty lines after a message are ignored.
    ///
    /// # Errors
    /// [`MessageError`] when the HTTP message is malformed, too large, or has too many fields (RFC
    /// 9112).
    pub fn parse(data: &[u8], scheme: &str) -> Result<Message, MessageError> {
        let mut data = data;
        let mut offset = 0usize;
        loop {
            // tolerate leading empty lines (RFC 9112 section 2.2)
            while let Some(rest) = data
                .strip_prefix(b"\r\n".as_slice())
                .or_else(|| data.strip_prefix(b"\n".as_slice()))
            {
                offset += data.len() - rest.len();
                data = rest;
            }
            if data.is_empty() {
                return Err(MessageError::Empty);
            }
            let (head_end, body_start) = match find_head_end(data) {
                Some(x) => x,
                None if data.len() > MAX_HEAD_BYTES => return Err(MessageError::HeadTooLarge),
                None => return Err(MessageError::NoEndOfHead),
            };
            if head_end > MAX_HEAD_BYTES {
                return Err(MessageError::HeadTooLarge);
            }
            let head = data.get(..head_end).unwrap_or(&[]);
            let mut lines = split_lines(head);
            if lines.last().is_some_and(|l| l.is_empty()) {
                lines.pop();
            }
            let start = lines.first().copied().unwrap_or(&[]);
            let start = std::str::from_utf8(start)
                .map_err(|_| MessageError::StartLine("not ASCII".into()))?;
            let headers = parse_fields(lines.get(1..).unwrap_or(&[]), 2)?;
            let rest = data.get(body_start..).unwrap_or(&[]);
            let kind = parse_start_line(start, &headers, scheme)?;
            if let Kind::Response { status } = kind {
                if (100..200).contains(&status) && status != 101 {
                    offset += body_start;
                    data = rest;
                    continue;
                }
            }
            let (body, trailers) = match framing(&headers, &kind)? {
                Framing::Chunked => dechunk(rest)?,
                Framing::None => {
                    no_trailing_bytes(rest)?;
                    (Vec::new(), Vec::new())
                }
                Framing::ToEnd => (rest.to_vec(), Vec::new()),
                Framing::Length(n) => {
                    if n != rest.len() {
                        return Err(MessageError::ContentLength {
                            declared: n.to_string(),
                            actual: rest.len(),
                        });
                    }
                    (rest.to_vec(), Vec::new())
                }
            };
            return Ok(Message {
                kind,
                headers,
                trailers,
                body,
                head_end: Some(offset + head_end),
                raw: None,
            });
        }
    }

    /// Parse and keep the raw bytes, so that [`Message::with_fields_inserted`] can
    /// emit the original message with new header fields.
    ///
    /// # Errors
    /// [`MessageError`] when the HTTP message is malformed, too large, or has too many fields (RFC
    /// 9112).
    pub fn parse_keep_raw(data: &[u8], scheme: &str) -> Result<Message, MessageError> {
        let mut m = Message::parse(data, scheme)?;
        m.raw = Some(data.to_vec());
        Ok(m)
    }

    /// The raw message with extra header lines inserted before the end of the
    /// header section (line ends match the message's own). `None` when the
    /// message was not parsed with [`Message::parse_keep_raw`].
    pub fn with_fields_inserted(&self, fields: &[(String, String)]) -> Option<Vec<u8>> {
        let raw = self.raw.as_ref()?;
        let at = self.head_end?;
        let crlf = raw.get(..at).is_some_and(|h| h.ends_with(b"\r\n")) || at == 0;
        let eol: &[u8] = if crlf { b"\r\n" } else { b"\n" };
        let mut out = Vec::with_capacity(raw.len() + 256);
        out.extend_from_slice(raw.get(..at)?);
        for (n, v) in fields {
            out.extend_from_slice(n.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(v.as_bytes());
            out.extend_from_slice(eol);
        }
        out.extend_from_slice(raw.get(at..)?);
        Some(out)
    }

    /// True for a request.
    pub fn is_request(&self) -> bool {
        matches!(self.kind, Kind::Request(_))
    }

    /// The field lines named `name` (lowercase), in order.
    pub fn field_lines<'a>(
        &'a self,
        name: &'a str,
        trailer: bool,
    ) -> impl Iterator<Item = &'a [u8]> + 'a {
        let src = if trailer {
            &self.trailers
        } else {
            &self.headers
        };
        src.iter()
            .filter(move |f| f.name == name)
            .map(|f| f.value.as_slice())
    }

    /// Append a header field.
    pub fn add_header(&mut self, name: &str, value: &str) {
        self.headers.push(Field {
            name: name.to_ascii_lowercase(),
            value: value.as_bytes().to_vec(),
        });
    }

    /// Convert an `http::Request`. The authority comes from the URI when it
    /// has one (HTTP/2 `:authority`, absolute-form), else from `Host`; the
    /// scheme from the URI, else `default_scheme`.
    ///
    /// # Errors
    /// [`MessageError`] when the request has no authority (neither in its URI nor a `Host` field),
    /// a field value that is not text, or too many fields.
    pub fn from_request<B: AsRef<[u8]>>(
        req: &http::Request<B>,
        default_scheme: &str,
    ) -> Result<Message, MessageError> {
        let mut m = Message::from_request_head(
            req.method(),
            req.uri(),
            req.headers(),
            default_scheme,
            &|_| true,
        )?;
        m.body = req.body().as_ref().to_vec();
        Ok(m)
    }

    /// [`Message::from_request`] over a request head, without content,
    /// keeping only the field lines whose name `keep` accepts and every
    /// `Host` line (the authority may come from it): a model for the
    /// components that name only those fields, since a field component
    /// reads only the lines of its own name (RFC 9421 section 2.1). The
    /// whole map is still held to [`MAX_FIELD_LINES`].
    ///
    /// # Errors
    /// As [`Message::from_request`].
    pub(crate) fn from_request_head(
        method: &http::Method,
        uri: &http::Uri,
        h: &http::HeaderMap,
        default_scheme: &str,
        keep: &dyn Fn(&http::HeaderName) -> bool,
    ) -> Result<Message, MessageError> {
        if h.len() > MAX_FIELD_LINES {
            return Err(MessageError::TooManyFields);
        }
        let headers: Vec<Field> = h
            .iter()
            .filter(|(n, _)| *n == http::header::HOST || keep(n))
            .map(|(n, v)| Field::from_http(n, v))
            .collect();
        let pq = uri.path_and_query().map_or("/", |p| p.as_str());
        let host = headers
            .iter()
            .find(|f| f.name == "host")
            .and_then(|f| std::str::from_utf8(&f.value).ok());
        let line = match (uri.scheme_str(), uri.authority()) {
            (_, Some(a)) => {
                let scheme = uri
                    .scheme_str()
                    .unwrap_or(default_scheme)
                    .to_ascii_lowercase();
                let (path, query) = split_path_query(pq);
                RequestLine {
                    method: method.as_str().to_owned(),
                    target: pq.to_owned(),
                    authority: normalize_authority(a.as_str(), &scheme),
                    raw_authority: a.as_str().to_owned(),
                    scheme,
                    path,
                    query,
                }
            }
            _ => RequestLine::new(method.as_str(), pq, host, default_scheme)?,
        };
        Ok(Message::request(line, headers, Vec::new()))
    }

    /// Convert an `http::Response`.
    ///
    /// # Errors
    /// [`MessageError`] when a field value is not text, or there are too many fields.
    pub fn from_response<B: AsRef<[u8]>>(res: &http::Response<B>) -> Result<Message, MessageError> {
        Ok(Message::response(
            res.status().as_u16(),
            from_header_map(res.headers())?,
            res.body().as_ref().to_vec(),
        ))
    }
}

fn from_header_map(h: &http::HeaderMap) -> Result<Vec<Field>, MessageError> {
    if h.len() > MAX_FIELD_LINES {
        return Err(MessageError::TooManyFields);
    }
    Ok(h.iter().map(|(n, v)| Field::from_http(n, v)).collect())
}

impl Field {
    /// One `http` field line as RFC 9421 section 2.1 reads it: the name
    /// (already lowercase in `http`), the value with leading and trailing
    /// whitespace removed.
    pub(crate) fn from_http(n: &http::HeaderName, v: &http::HeaderValue) -> Field {
        Field {
            name: n.as_str().to_owned(),
            value: trim_ows(v.as_bytes()).to_vec(),
        }
    }
}

fn parse_start_line(start: &str, headers: &[Field], scheme: &str) -> Result<Kind, MessageError> {
    let bad = || MessageError::StartLine(start.chars().take(80).collect());
    if let Some(rest) = start.strip_prefix("HTTP/") {
        let mut parts = rest.splitn(3, ' ');
        let _version = parts.next().ok_or_else(bad)?;
        let code = parts.next().ok_or_else(bad)?;
        if code.len() != 3 || !code.bytes().all(|c| c.is_ascii_digit()) {
            return Err(bad());
        }
        let status: u16 = code.parse().map_err(|_| bad())?;
        if !(100..=999).contains(&status) {
            return Err(bad());
        }
        return Ok(Kind::Response { status });
    }
    let mut parts = start.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad());
    };
    if !version.starts_with("HTTP/") {
        return Err(bad());
    }
    let hosts: Vec<&Field> = headers.iter().filter(|f| f.name == "host").collect();
    if hosts.len() > 1 {
        return Err(MessageError::StartLine("more than one Host field".into()));
    }
    let host = match hosts.first() {
        Some(f) => Some(
            std::str::from_utf8(&f.value)
                .map_err(|_| MessageError::BadFieldValue("host".into()))?,
        ),
        None => None,
    };
    Ok(Kind::Request(RequestLine::new(
        method, target, host, scheme,
    )?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_request_and_fold() {
        let m = Message::parse(
            b"GET /a?b=c HTTP/1.1\r\nHost: Example.COM:443\r\nX: a\r\n   b\r\n\r\n",
            "https",
        )
        .unwrap();
        let Kind::Request(r) = &m.kind else { panic!() };
        assert_eq!(r.authority, "example.com");
        assert_eq!(r.path, "/a");
        assert_eq!(r.query.as_deref(), Some("b=c"));
        assert_eq!(m.headers[1].value, b"a b");
        assert!(
            Message::parse(b"GET / HTTP/1.1\r\nHost: a\r\nBad Name: x\r\n\r\n", "https").is_err()
        );
        assert!(Message::parse(b"GET / HTTP/1.1\r\nHost: a\r\n", "https").is_err());
    }

    #[test]
    fn chunked_with_trailer() {
        let m = Message::parse(
            b"HTTP/1.1 200 OK\nTransfer-Encoding: chunked\nTrailer: Expires\n\n4\nHTTP\n0\nExpires: x\n",
            "https",
        )
        .unwrap();
        assert_eq!(m.body, b"HTTP");
        assert_eq!(m.trailers[0].name, "expires");
    }

    fn parse_err(raw: &[u8]) -> MessageError {
        Message::parse(raw, "https").unwrap_err()
    }

    #[test]
    fn request_without_length_has_no_body_and_trailing_bytes_are_refused() {
        // A second request appended to a body-less GET is not its body.
        let e =
            parse_err(b"GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /admin HTTP/1.1\r\nHost: a\r\n\r\n");
        assert_eq!(e, MessageError::TrailingBytes(32));
        // The message says why and what to add.
        let text = parse_err(b"POST /a HTTP/1.1\nHost: a\n\nhello").to_string();
        assert!(text.contains("RFC 9112 section 6.3"), "{text}");
        assert!(text.contains("Content-Length: 5"), "{text}");
        assert_eq!(
            parse_err(b"POST /a HTTP/1.1\nHost: a\n\nhello"),
            MessageError::TrailingBytes(5)
        );
        // Empty lines after the message are ignored (RFC 9112 section 2.2).
        let m = Message::parse(b"GET /a HTTP/1.1\r\nHost: a\r\n\r\n\r\n", "https").unwrap();
        assert!(m.body.is_empty());
    }

    #[test]
    fn response_without_length_reads_to_the_end() {
        let m = Message::parse(b"HTTP/1.1 200 OK\nX: y\n\nall of it", "https").unwrap();
        assert_eq!(m.body, b"all of it");
        assert_eq!(
            parse_err(b"HTTP/1.1 204 No Content\n\nsmuggled"),
            MessageError::TrailingBytes(8)
        );
    }

    #[test]
    fn content_length_must_be_one_decimal_number() {
        for raw in [
            &b"POST / HTTP/1.1\nHost: a\nContent-Length: 2\nContent-Length: 2\n\nhi"[..],
            b"POST / HTTP/1.1\nHost: a\nContent-Length: 2\nContent-Length: 3\n\nhi",
            b"POST / HTTP/1.1\nHost: a\nContent-Length: 2, 2\n\nhi",
            b"POST / HTTP/1.1\nHost: a\nContent-Length: +2\n\nhi",
            b"POST / HTTP/1.1\nHost: a\nContent-Length: 0x2\n\nhi",
            b"POST / HTTP/1.1\nHost: a\nContent-Length: \n\n",
            b"HTTP/1.1 200 OK\nContent-Length: 2\nContent-Length: 2\n\nhi",
        ] {
            assert!(
                matches!(parse_err(raw), MessageError::Framing(_)),
                "{}",
                String::from_utf8_lossy(raw)
            );
        }
        let m = Message::parse(
            b"POST / HTTP/1.1\nHost: a\nContent-Length: 2\n\nhi",
            "https",
        )
        .unwrap();
        assert_eq!(m.body, b"hi");
    }

    #[test]
    fn transfer_encoding_must_be_chunked_alone_and_without_length() {
        let chunked = b"4\nHTTP\n0\n\n";
        for head in [
            // chunked, then a second line making the final coding identity
            &b"POST / HTTP/1.1\nHost: a\nTransfer-Encoding: chunked\nTransfer-Encoding: identity\n\n"[..],
            b"POST / HTTP/1.1\nHost: a\nTransfer-Encoding: chunked, identity\n\n",
            b"POST / HTTP/1.1\nHost: a\nTransfer-Encoding: gzip, chunked\n\n",
            b"POST / HTTP/1.1\nHost: a\nTransfer-Encoding: chunked, chunked\n\n",
            b"POST / HTTP/1.1\nHost: a\nTransfer-Encoding: chunked\nContent-Length: 4\n\n",
            b"POST / HTTP/1.1\nHost: a\nTransfer-Encoding: \n\n",
            b"HTTP/1.1 200 OK\nTransfer-Encoding: gzip\n\n",
        ] {
            let raw = [head, &chunked[..]].concat();
            assert!(
                matches!(parse_err(&raw), MessageError::Framing(_)),
                "{}",
                String::from_utf8_lossy(&raw)
            );
        }
        let m = Message::parse(
            b"POST / HTTP/1.1\nHost: a\nTransfer-Encoding: Chunked\n\n4\nHTTP\n0\n\n",
            "https",
        )
        .unwrap();
        assert_eq!(m.body, b"HTTP");
    }

    #[test]
    fn chunk_size_is_hex_digits_only() {
        let e =
            parse_err(b"POST / HTTP/1.1\nHost: a\nTransfer-Encoding: chunked\n\n+4\nHTTP\n0\n\n");
        assert_eq!(e, MessageError::Chunked("bad chunk size"));
    }

    #[test]
    fn bytes_after_the_chunked_trailer_section_are_refused() {
        let e = parse_err(
            b"POST / HTTP/1.1\nHost: a\nTransfer-Encoding: chunked\n\n0\n\nGET http://a/ HTTP/1.1\n\n",
        );
        assert!(matches!(e, MessageError::TrailingBytes(_)), "{e:?}");
    }
}
