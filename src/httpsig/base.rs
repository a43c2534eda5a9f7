//! The signature base (RFC 9421 section 2.5).

use super::components::{ComponentError, ComponentId, FieldCache, SfType};
use super::message::Message;
use super::sfv;

/// Serialize the `@signature-params` value: the Inner List of covered
/// component identifiers with the signature parameters, in the order given
/// (RFC 9421 section 2.3).
pub fn signature_params_value(covered: &[ComponentId], params: &sfv::Params) -> String {
    let mut s = String::with_capacity(64 + covered.len() * 24);
    s.push('(');
    for (i, c) in covered.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        let name = match &c.target {
            super::components::Target::Derived(d) => d.name(),
            super::components::Target::Field(f) => f.as_str(),
        };
        s.push('"');
        s.push_str(name);
        s.push('"');
        sfv::write_params(&mut s, &c.params);
    }
    s.push(')');
    sfv::write_params(&mut s, params);
    s
}

/// Build the signature base (RFC 9421 section 2.5): one line per covered
/// component, `identifier: value`, then the `@signature-params` line; lines
/// joined by LF and no LF after the last.
///
/// `params_value` is the serialized `@signature-params` value, as produced
/// by [`signature_params_value`] for the Inner List received or to be sent.
///
/// # Errors
/// [`ComponentError`] when the component identifier or its value is malformed, missing from the
/// message, or not allowed in this context (RFC 9421 section 2).
pub fn signature_base(
    msg: &Message,
    related: Option<&Message>,
    covered: &[ComponentId],
    params_value: &str,
    sf_types: &dyn Fn(&str) -> Option<SfType>,
) -> Result<Vec<u8>, ComponentError> {
    signature_base_cached(
        msg,
        related,
        covered,
        params_value,
        sf_types,
        &mut FieldCache::default(),
    )
}

/// [`signature_base`] sharing the structured-field work and the
/// [`MAX_BASE_BYTES`](super::MAX_BASE_BYTES) budget of one message with the
/// other bases built for it.
pub(crate) fn signature_base_cached(
    msg: &Message,
    related: Option<&Message>,
    covered: &[ComponentId],
    params_value: &str,
    sf_types: &dyn Fn(&str) -> Option<SfType>,
    cache: &mut FieldCache,
) -> Result<Vec<u8>, ComponentError> {
    let budget = super::MAX_BASE_BYTES;
    let over = |spent: usize, len: usize| spent.saturating_add(len) > budget;
    let mut out = Vec::with_capacity(256 + msg.headers.len() * 32);
    for (i, c) in covered.iter().enumerate() {
        if covered.iter().take(i).any(|o| o.same_as(c)) {
            return Err(ComponentError::Duplicate(c.to_string()));
        }
        let start = out.len();
        let name = match &c.target {
            super::components::Target::Derived(d) => d.name(),
            super::components::Target::Field(f) => f.as_str(),
        };
        out.push(b'"');
        out.extend_from_slice(name.as_bytes());
        out.push(b'"');
        if !c.params.is_empty() {
            let mut params = String::new();
            sfv::write_params(&mut params, &c.params);
            out.extend_from_slice(params.as_bytes());
        }
        out.extend_from_slice(b": ");
        c.write_value_cached(&mut out, msg, related, sf_types, cache)?;
        if over(cache.base_bytes, out.len()) {
            cache.base_bytes = cache.base_bytes.saturating_add(out.len());
            return Err(ComponentError::WorkBudget { budget });
        }
        let value = out.get(start..).unwrap_or(&[]);
        // A value must not break the line structure of the base.
        if value.iter().any(|b| matches!(b, b'\n' | b'\r' | 0)) {
            return Err(ComponentError::BadValueByte(c.to_string()));
        }
        // Section 2.5 (and 2.1): the base is ASCII; `;bs` carries other bytes.
        if !value.is_ascii() {
            return Err(ComponentError::NonAsciiValue(c.to_string()));
        }
        out.push(b'\n');
    }
    out.extend_from_slice(b"\"@signature-params\": ");
    out.extend_from_slice(params_value.as_bytes());
    cache.base_bytes = cache.base_bytes.saturating_add(out.len());
    if cache.base_bytes > budget {
        return Err(ComponentError::WorkBudget { budget });
    }
    Ok(out)
}

/// One line of a signature base with what it came from: the component
/// identifier and a sentence naming its source (RFC 9421 section 2.5), for
/// a reader of the base (`agentsig inspect`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct BaseLine {
    /// The line exactly as in the base, without the LF.
    pub line: String,
    /// The component identifier without its quoting (`content-digest;req`,
    /// `@method`, `@signature-params`).
    pub component: String,
    /// Where the value came from, for people.
    pub source: String,
}

/// The lines of `base`, a signature base built by [`signature_base`] over
/// `covered`, each tied to the component it came from: line `i` is
/// `covered[i]` (a value never holds an LF, section 2.5), the last is
/// `@signature-params` (section 2.3). Joined with LF, the lines are `base`.
pub fn base_lines(base: &[u8], covered: &[ComponentId]) -> Vec<BaseLine> {
    let text = String::from_utf8_lossy(base);
    let lines: Vec<&str> = text.split('\n').collect();
    let last = lines.len().saturating_sub(1);
    lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let (component, source) = match covered.get(i) {
                Some(c) if i < last => (unquoted(c), component_source(c)),
                _ => (
                    "@signature-params".to_owned(),
                    "the signature parameters: the covered components and the parameters, as received (RFC 9421 section 2.3)".to_owned(),
                ),
            };
            BaseLine {
                line: (*l).to_owned(),
                component,
                source,
            }
        })
        .collect()
}

/// `"content-digest";req` as `content-digest;req`.
fn unquoted(c: &ComponentId) -> String {
    let mut s = String::new();
    s.push_str(match &c.target {
        super::components::Target::Derived(d) => d.name(),
        super::components::Target::Field(f) => f.as_str(),
    });
    sfv::write_params(&mut s, &c.params);
    s
}

/// A sentence naming where the value of `c` comes from (RFC 9421 sections
/// 2.1 and 2.2), e.g. "derived component: the request method (RFC 9421
/// section 2.2.1)" or "header field content-digest".
pub fn component_source(c: &ComponentId) -> String {
    use super::components::{Derived as D, Target};
    let mut s = match &c.target {
        Target::Derived(d) => {
            let (what, sec) = match d {
                D::Method => ("the request method", "2.2.1"),
                D::TargetUri => ("the full target URI", "2.2.2"),
                D::Authority => ("the authority (host and non-default port)", "2.2.3"),
                D::Scheme => ("the URI scheme", "2.2.4"),
                D::RequestTarget => ("the request target as sent", "2.2.5"),
                D::Path => ("the absolute path of the target URI", "2.2.6"),
                D::Query => ("the query, with its leading ?", "2.2.7"),
                D::QueryParam => ("one query parameter", "2.2.8"),
                D::Status => ("the response status code", "2.2.9"),
            };
            let named = match (&c.qname, d) {
                (Some(n), D::QueryParam) => format!(" {n:?}"),
                _ => String::new(),
            };
            format!("derived component: {what}{named} (RFC 9421 section {sec})")
        }
        Target::Field(f) => {
            let place = if c.tr {
                "trailer field"
            } else {
                "header field"
            };
            let mut t = format!("{place} {f}");
            if c.sf {
                t.push_str(", re-serialized as a structured field (RFC 9421 section 2.1.1)");
            }
            if let Some(k) = &c.key {
                t.push_str(&format!(
                    ", the Dictionary member {k:?} (RFC 9421 section 2.1.2)"
                ));
            }
            if c.bs {
                t.push_str(", each field line as a Byte Sequence (RFC 9421 section 2.1.3)");
            }
            t
        }
    };
    if c.req {
        s.push_str(", taken from the request this response answers (RFC 9421 section 2.4)");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each covered field is parsed once per message: 16 bases (labels)
    /// covering `;sf` and many `;key` of two fields share one cache, and
    /// four parses serve them all (x and y, Dictionary and `;sf` each).
    #[test]
    fn each_field_is_parsed_once_per_message() {
        let raw = "GET / HTTP/1.1\r\nHost: e.example\r\nX: a=1, b=2, c=3\r\nY: a=9, b=8\r\n\r\n";
        let m = Message::parse(raw.as_bytes(), "https").unwrap();
        let mut ids = vec!["\"x\";sf".to_owned(), "\"y\";sf".to_owned()];
        for k in ["a", "b"] {
            ids.push(format!("\"x\";key=\"{k}\""));
            ids.push(format!("\"y\";key=\"{k}\""));
        }
        let covered: Vec<ComponentId> =
            ids.iter().map(|c| ComponentId::parse(c).unwrap()).collect();
        let pv = signature_params_value(&covered, &Vec::new());
        let mut cache = FieldCache::default();
        let mut bases = Vec::new();
        for _ in 0..16 {
            bases.push(
                signature_base_cached(&m, None, &covered, &pv, &|_| None, &mut cache).unwrap(),
            );
        }
        assert_eq!(cache.parses, 4);
        assert!(bases.iter().all(|b| *b == bases[0]));
        assert_eq!(
            bases[0],
            signature_base(&m, None, &covered, &pv, &|_| None).unwrap()
        );
        assert_eq!(cache.base_bytes, 16 * bases[0].len());
    }

    /// The lines joined are the base; each names its component and source.
    #[test]
    fn base_lines_are_the_base_with_their_sources() {
        let raw = "GET /p?a=1&b=2 HTTP/1.1\r\nHost: e.example\r\nX: a=1, b=2\r\n\r\n";
        let m = Message::parse(raw.as_bytes(), "https").unwrap();
        let ids = [
            "\"@method\"",
            "\"@query-param\";name=\"b\"",
            "\"x\";sf",
            "\"x\";key=\"a\"",
            "\"x\";bs",
        ];
        let covered: Vec<ComponentId> =
            ids.iter().map(|c| ComponentId::parse(c).unwrap()).collect();
        let pv = signature_params_value(&covered, &Vec::new());
        let base = signature_base(&m, None, &covered, &pv, &|_| None).unwrap();
        let lines = base_lines(&base, &covered);
        let joined: Vec<&str> = lines.iter().map(|l| l.line.as_str()).collect();
        assert_eq!(joined.join("\n").as_bytes(), &base[..]);
        let comps: Vec<&str> = lines.iter().map(|l| l.component.as_str()).collect();
        assert_eq!(
            comps,
            [
                "@method",
                "@query-param;name=\"b\"",
                "x;sf",
                "x;key=\"a\"",
                "x;bs",
                "@signature-params"
            ]
        );
        assert!(lines[0]
            .source
            .contains("request method (RFC 9421 section 2.2.1)"));
        assert!(lines[1]
            .source
            .contains("one query parameter \"b\" (RFC 9421 section 2.2.8)"));
        assert!(lines[2]
            .source
            .contains("structured field (RFC 9421 section 2.1.1)"));
        assert!(lines[3].source.contains("Dictionary member \"a\""));
        assert!(lines[4]
            .source
            .contains("Byte Sequence (RFC 9421 section 2.1.3)"));
        assert!(lines[5].source.contains("RFC 9421 section 2.3"));
        let req = ComponentId::parse("\"content-digest\";req").unwrap();
        assert!(component_source(&req)
            .starts_with("header field content-digest, taken from the request"));
    }

    /// The budget counts every base built for the message.
    #[test]
    fn budget_is_shared_by_the_bases_of_one_message() {
        let big = "z".repeat(100 * 1024);
        let raw = format!("GET / HTTP/1.1\r\nHost: e.example\r\nX: {big}\r\n\r\n");
        let m = Message::parse(raw.as_bytes(), "https").unwrap();
        let covered = vec![ComponentId::parse("\"x\"").unwrap()];
        let pv = signature_params_value(&covered, &Vec::new());
        let mut cache = FieldCache::default();
        let fits = crate::httpsig::MAX_BASE_BYTES / (big.len() + 32);
        for _ in 0..fits {
            signature_base_cached(&m, None, &covered, &pv, &|_| None, &mut cache).unwrap();
        }
        assert_eq!(
            signature_base_cached(&m, None, &covered, &pv, &|_| None, &mut cache),
            Err(ComponentError::WorkBudget {
                budget: crate::httpsig::MAX_BASE_BYTES
            })
        );
        // A fresh message (cache) has its own budget.
        assert!(signature_base(&m, None, &covered, &pv, &|_| None).is_ok());
    }
}
