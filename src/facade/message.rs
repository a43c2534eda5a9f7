//! HTTP messages assembled from the parts a caller holds (a method, a
//! target, `(name, value)` header pairs in received order, a body), with
//! the bounds and checks every binding applies before verifying or
//! signing.

use super::error::{Failure, Outcome};
use crate::httpsig::message::{Field, Kind, RequestLine, MAX_FIELD_LINES, MAX_HEAD_BYTES};
use crate::httpsig::Message;

/// Header fields as `(name, value)` pairs, in the order received: RFC 9421
/// section 2.1 signs repeated fields in that order, so a merged map would
/// lose what was signed.
pub type Headers = [(String, String)];

/// Check header pairs against the RFC 9421 message limits (at most
/// [`MAX_FIELD_LINES`] field lines and [`MAX_HEAD_BYTES`] of header
/// section), with names that are tokens (RFC 9110 section 5.1) and values
/// free of CR, LF and NUL (RFC 9110 section 5.5).
///
/// ```
/// use agentsig::facade::check_headers;
/// let ok = [("Host".to_owned(), "example.com".to_owned())];
/// assert!(check_headers(&ok).is_ok());
/// let split = [("X-A".to_owned(), "a\r\nInjected: 1".to_owned())];
/// assert_eq!(check_headers(&split).unwrap_err().code, "input.malformed");
/// ```
///
/// # Errors
/// `input.unreadable` beyond a bound, `input.malformed` for a bad name or
/// value.
pub fn check_headers(h: &Headers) -> Outcome<()> {
    if h.len() > MAX_FIELD_LINES {
        return Err(Failure::bad_input(
            "input.unreadable",
            format!("headers: more than {MAX_FIELD_LINES} field lines"),
        ));
    }
    let mut total = 0usize;
    for (name, value) in h {
        total = total.saturating_add(name.len() + value.len() + 4);
        if total > MAX_HEAD_BYTES {
            return Err(Failure::too_large(
                "the header section",
                total,
                MAX_HEAD_BYTES,
            ));
        }
        if name.is_empty() || !name.bytes().all(is_tchar) {
            return Err(Failure::malformed(format!(
                "{name:?} is not a field name (RFC 9110 section 5.1)"
            )));
        }
        if value.bytes().any(|c| c == b'\r' || c == b'\n' || c == 0) {
            return Err(Failure::malformed(format!(
                "the value of {name} holds CR, LF or NUL (RFC 9110 section 5.5)"
            )));
        }
    }
    Ok(())
}

/// A `tchar` of RFC 9110 section 5.6.2.
fn is_tchar(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c)
}

/// The message fields of header pairs: names lowercased, values without
/// leading and trailing whitespace (RFC 9110 section 5.5).
pub fn fields(headers: &Headers) -> Vec<Field> {
    headers
        .iter()
        .map(|(n, v)| Field {
            name: n.to_ascii_lowercase(),
            value: v.trim_matches([' ', '\t']).as_bytes().to_vec(),
        })
        .collect()
}

/// [`fields`] of headers the caller gives up: each name lowercased and
/// each value trimmed in the string it came in (no copy of a field unless
/// its value has whitespace to trim).
pub(crate) fn into_fields(headers: Vec<(String, String)>) -> Vec<Field> {
    headers
        .into_iter()
        .map(|(mut name, value)| {
            name.make_ascii_lowercase();
            let trimmed = value.trim_matches([' ', '\t']);
            let value = if trimmed.len() == value.len() {
                value.into_bytes()
            } else {
                trimmed.as_bytes().to_vec()
            };
            Field { name, value }
        })
        .collect()
}

/// Does `m` carry a field `name`?
pub fn has_field(m: &Message, name: &str) -> bool {
    m.field_lines(name, false).next().is_some()
}

/// A request model from its method, absolute http(s) URL, fields and body.
///
/// # Errors
/// `input.malformed` when `url` is not an absolute http(s) URL with an
/// authority, or the method is not a token.
pub fn request_message(
    method: &str,
    url: &str,
    headers: &Headers,
    body: Vec<u8>,
) -> Outcome<Message> {
    Ok(Message::request(
        request_line(method, url)?,
        fields(headers),
        body,
    ))
}

/// The request line of [`request_message`].
fn request_line(method: &str, url: &str) -> Outcome<RequestLine> {
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        return Err(Failure::malformed(format!(
            "{url:?} is not an absolute http(s) URL"
        )));
    }
    let line = RequestLine::new(method, url, None, "https")
        .map_err(|e| Failure::malformed(format!("request: {e}")))?;
    if line.authority.is_empty() {
        return Err(Failure::malformed(format!("{url:?} has no authority")));
    }
    Ok(line)
}

/// A request model to verify: `target` is an absolute http(s) URL, or, with
/// `scheme`, an origin-form target (`/path?query`, RFC 9112 section 3.2.1)
/// whose authority is the one `Host` field of `headers` (RFC 9112 section
/// 3.2), so the message is built from the parts a server received rather
/// than from one string glued together. A target with a fragment (`#`: a
/// request target never has one, RFC 9112 section 3.2) and an absolute URL
/// with userinfo (`user@host`, deprecated by RFC 9110 section 4.2.4, and
/// which moves the authority a reader sees) are refused, so the target
/// verified is the target served.
///
/// ```
/// use agentsig::facade::verified_request_message;
/// let h = [("Host".to_owned(), "api.example.com".to_owned())];
/// let m = verified_request_message("GET", "/x?y=1", Some("https"), &h, Vec::new())?;
/// assert!(verified_request_message("GET", "https://u@evil.example/", None, &[], Vec::new()).is_err());
/// assert!(verified_request_message("GET", "/x#frag", Some("https"), &h, Vec::new()).is_err());
/// # Ok::<(), agentsig::facade::Failure>(())
/// ```
///
/// # Errors
/// `usage` for a scheme other than `https`/`http`; `input.malformed` for
/// the refusals above, a missing or repeated `Host`, a bad authority.
pub fn verified_request_message(
    method: &str,
    target: &str,
    scheme: Option<&str>,
    headers: &Headers,
    body: Vec<u8>,
) -> Outcome<Message> {
    let line = verified_request_line(method, target, scheme, headers)?;
    Ok(Message::request(line, fields(headers), body))
}

/// The request line of [`verified_request_message`], after its checks.
pub(crate) fn verified_request_line(
    method: &str,
    target: &str,
    scheme: Option<&str>,
    headers: &Headers,
) -> Outcome<RequestLine> {
    if target.contains('#') {
        return Err(Failure::malformed(format!(
            "{target:?} holds a fragment (#): a request target has none (RFC 9112 section 3.2); send the path and query only"
        )));
    }
    let Some(scheme) = scheme else {
        if let Some((_, rest)) = target.split_once("://") {
            let end = rest.find(['/', '?']).unwrap_or(rest.len());
            if rest[..end].contains('@') {
                return Err(Failure::malformed(format!(
                    "{target:?} holds userinfo (user@host): give the URL without it (RFC 9110 section 4.2.4)"
                )));
            }
        }
        return request_line(method, target);
    };
    if !matches!(scheme, "https" | "http") {
        return Err(Failure::usage(format!(
            "scheme {scheme:?}: give \"https\" or \"http\""
        )));
    }
    if !target.starts_with('/') {
        return Err(Failure::malformed(format!(
            "{target:?} is not an origin-form target (it must start with /, RFC 9112 section 3.2.1); with a scheme give the path and query, else an absolute URL"
        )));
    }
    let hosts: Vec<&str> = headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("host"))
        .map(|(_, v)| v.trim_matches([' ', '\t']))
        .collect();
    let [host] = hosts[..] else {
        return Err(Failure::malformed(format!(
            "{} Host fields: an origin-form request carries exactly one (RFC 9112 section 3.2)",
            hosts.len()
        )));
    };
    crate::httpsig::authority::parse_authority(host)
        .map_err(|e| Failure::malformed(format!("Host: {e}")))?;
    RequestLine::new(method, target, Some(host), scheme)
        .map_err(|e| Failure::malformed(format!("request: {e}")))
}

/// A three-digit HTTP status code (RFC 9110 section 15; `@status` is its
/// three-digit form, RFC 9421 section 2.2.9).
///
/// # Errors
/// `input.malformed` outside 100..=999.
pub fn status_code(n: i64) -> Outcome<u16> {
    match u16::try_from(n) {
        Ok(s @ 100..=999) => Ok(s),
        _ => Err(Failure::malformed(format!(
            "status {n} is not a three-digit HTTP status code (RFC 9110 section 15)"
        ))),
    }
}

/// Does the request `m` have a query (`@query` is then covered by default)?
pub fn has_query(m: &Message) -> bool {
    matches!(&m.kind, Kind::Request(l) if l.query.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    }

    #[test]
    fn header_bounds_and_syntax() {
        assert!(check_headers(&h(&[("Content-Type", "a/b")])).is_ok());
        assert_eq!(
            check_headers(&h(&[("bad name", "x")])).unwrap_err().code,
            "input.malformed"
        );
        assert_eq!(
            check_headers(&h(&[("x", "a\0b")])).unwrap_err().code,
            "input.malformed"
        );
        let many = vec![("x".to_owned(), "y".to_owned()); MAX_FIELD_LINES + 1];
        assert_eq!(check_headers(&many).unwrap_err().code, "input.unreadable");
        let big = vec![("x".to_owned(), "y".repeat(MAX_HEAD_BYTES))];
        assert_eq!(check_headers(&big).unwrap_err().code, "input.unreadable");
    }

    #[test]
    fn origin_form_takes_its_authority_from_the_one_host_field() {
        let m = verified_request_message(
            "POST",
            "/a?b=1",
            Some("https"),
            &h(&[("Host", " api.example.com:8443 ")]),
            b"{}".to_vec(),
        )
        .unwrap();
        let Kind::Request(l) = &m.kind else {
            panic!("a request")
        };
        assert_eq!(l.authority, "api.example.com:8443");
        assert!(has_query(&m));
        for headers in [h(&[]), h(&[("Host", "a.example"), ("host", "b.example")])] {
            let e = verified_request_message("GET", "/", Some("https"), &headers, Vec::new())
                .unwrap_err();
            assert!(e.message.contains("Host fields"), "{}", e.message);
        }
        let e = verified_request_message("GET", "/", Some("ftp"), &h(&[]), Vec::new()).unwrap_err();
        assert_eq!(e.code, "usage");
        let e =
            verified_request_message("GET", "x", Some("https"), &h(&[]), Vec::new()).unwrap_err();
        assert!(e.message.contains("origin-form"));
    }

    #[test]
    fn absolute_targets_refuse_userinfo_fragments_and_other_schemes() {
        for t in [
            "https://user@evil.example/",
            "https://a.example/#x",
            "ftp://a.example/",
            "/relative",
            "https:///nohost",
        ] {
            assert!(
                verified_request_message("GET", t, None, &[], Vec::new()).is_err(),
                "{t}"
            );
        }
        assert!(
            verified_request_message("GET", "https://a.example/p", None, &[], Vec::new()).is_ok()
        );
    }

    #[test]
    fn status_codes_have_three_digits() {
        assert_eq!(status_code(200).unwrap(), 200);
        for n in [99, 1000, -1, i64::MAX] {
            assert!(status_code(n).is_err(), "{n}");
        }
    }
}
