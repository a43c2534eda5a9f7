//! Component identifiers and component values (RFC 9421 section 2).

use super::message::{Kind, Message};
use crate::sfv::{self, BareItem, Entry, Item, SfError};
use std::fmt::Write as _;

/// The derived components of RFC 9421 section 2.2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Derived {
    /// `@method`: the request method, e.g. `POST` (section 2.2.1).
    Method,
    /// `@target-uri`: the full target URI (section 2.2.2).
    TargetUri,
    /// `@authority`: host and non-default port, lowercased (section 2.2.3).
    Authority,
    /// `@scheme`: the URI scheme, lowercased (section 2.2.4).
    Scheme,
    /// `@request-target`: the request target as sent (section 2.2.5).
    RequestTarget,
    /// `@path`: the absolute path, `/` when empty (section 2.2.6).
    Path,
    /// `@query`: the query with its leading `?`, `?` when absent (section 2.2.7).
    Query,
    /// `@query-param`: one named query parameter, needs `;name` (section 2.2.8).
    QueryParam,
    /// `@status`: the three-digit response status code (section 2.2.9).
    Status,
}

impl Derived {
    /// The component name with its `@`, e.g. `@target-uri` (RFC 9421
    /// section 6.4.2 registry).
    pub fn name(self) -> &'static str {
        match self {
            Derived::Method => "@method",
            Derived::TargetUri => "@target-uri",
            Derived::Authority => "@authority",
            Derived::Scheme => "@scheme",
            Derived::RequestTarget => "@request-target",
            Derived::Path => "@path",
            Derived::Query => "@query",
            Derived::QueryParam => "@query-param",
            Derived::Status => "@status",
        }
    }

    /// The derived component named `n` (exact, lowercase, with the `@`);
    /// `None` for a name RFC 9421 section 2.2 does not define.
    pub fn from_name(n: &str) -> Option<Derived> {
        Some(match n {
            "@method" => Derived::Method,
            "@target-uri" => Derived::TargetUri,
            "@authority" => Derived::Authority,
            "@scheme" => Derived::Scheme,
            "@request-target" => Derived::RequestTarget,
            "@path" => Derived::Path,
            "@query" => Derived::Query,
            "@query-param" => Derived::QueryParam,
            "@status" => Derived::Status,
            _ => return None,
        })
    }
}

/// What a component identifier names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A derived component (RFC 9421 section 2.2).
    Derived(Derived),
    /// A field, by lowercase name.
    Field(String),
}

/// A component identifier: a name plus parameters, kept in the order given
/// (RFC 9421 section 2). Its serialization is the identifier as it appears
/// in the signature base and in `Signature-Input`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentId {
    /// The derived component or field this identifier names.
    pub target: Target,
    /// The parameters as given, in order (`sf`, `key`, `bs`, `req`, `tr`, `name`).
    pub params: sfv::Params,
    pub(crate) sf: bool,
    pub(crate) key: Option<String>,
    pub(crate) bs: bool,
    pub(crate) req: bool,
    pub(crate) tr: bool,
    pub(crate) qname: Option<String>,
}

/// Why a component identifier or value is unusable (RFC 9421 sections 2.1, 2.2 and 2.5).
///
/// Where a variant holds a `String` or a `component` field, it is the
/// component identifier serialized as in the signature base (e.g.
/// `"content-digest";sf`), unless its documentation says otherwise.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ComponentError {
    /// The identifier is not an sf-string (section 2); holds the item as
    /// serialized.
    #[error("component identifier is not a String: {0}")]
    NotAString(String),
    /// The component name has an uppercase letter (section 2.1: field names
    /// are lowercased); holds the name.
    #[error("component name {0:?} is not lowercase")]
    NotLowercase(String),
    /// A name starting with `@` that section 2.2 does not define; holds the
    /// name.
    #[error("unknown derived component {0:?}")]
    UnknownDerived(String),
    /// The name is not a field name (an RFC 9110 token); holds the name.
    #[error("component name {0:?} is not a valid field name")]
    BadFieldName(String),
    /// A component parameter outside the section 6.5.2 registry (`sf`,
    /// `key`, `bs`, `req`, `tr`, `name`).
    #[error("component {component}: unknown parameter {param:?}")]
    UnknownParam {
        /// The component identifier.
        component: String,
        /// The unknown parameter's name.
        param: String,
    },
    /// A component parameter has the wrong type: `sf`, `bs`, `req` and `tr`
    /// must be Boolean `true`, `key` and `name` Strings (section 2.1).
    #[error("component {component}: parameter {param:?} has the wrong type")]
    ParamType {
        /// The component identifier.
        component: String,
        /// The parameter's name.
        param: String,
    },
    /// A component parameter occurs twice on one identifier.
    #[error("component {component}: parameter {param:?} given twice")]
    DuplicateParam {
        /// The component identifier.
        component: String,
        /// The repeated parameter's name.
        param: String,
    },
    /// A known parameter on a component it does not apply to, e.g. `;sf`
    /// on a derived component or `;name` on anything but `@query-param`.
    #[error("component {component}: parameter {param:?} does not apply to this component")]
    ParamNotApplicable {
        /// The component identifier.
        component: String,
        /// The parameter's name.
        param: String,
    },
    /// `;bs` together with `;sf` or `;key`, which section 2.1.3 forbids.
    #[error("component {component}: 'bs' cannot be combined with 'sf' or 'key'")]
    BsWithSf {
        /// The component identifier.
        component: String,
    },
    /// `@query-param` without its `;name` parameter (section 2.2.8).
    #[error("@query-param needs a name parameter")]
    QueryParamNameMissing,
    /// The same identifier (same name and parameters) is covered twice
    /// (section 2.5).
    #[error("component {0} is covered twice")]
    Duplicate(String),
    /// A covered component is absent from the message: an error, never
    /// skipped (section 2.5).
    #[error("component {0} is not present in the message")]
    Missing(String),
    /// A request-only derived component (e.g. `@method`) on a response
    /// without `;req` (section 2.2).
    #[error("component {0} applies only to requests")]
    RequestOnly(String),
    /// `@status` on a request, or with `;req` (section 2.2.9).
    #[error("component {0} applies only to responses")]
    ResponseOnly(String),
    /// A `;req` component (section 2.4) but no related request was given.
    #[error("component {0} has ;req but no related request was given")]
    NoRelatedRequest(String),
    /// `;req` in a request's own signature (section 2.4 allows it only in
    /// a response's).
    #[error("component {0}: ;req is only valid in a response's signature")]
    ReqInRequest(String),
    /// The `@query-param` name occurs more than once in the query, so its
    /// value is ambiguous (section 2.2.8); holds the parameter name.
    #[error("query parameter {0:?} occurs more than once (RFC 9421 section 2.2.8)")]
    QueryParamRepeated(String),
    /// A `;sf` or `;key` component whose field does not parse as its
    /// structured type (sections 2.1.1 and 2.1.2).
    #[error("component {component}: the field is not a valid structured field: {err}")]
    Structured {
        /// The component identifier.
        component: String,
        /// The parse error.
        err: SfError,
    },
    /// A `;key` component whose Dictionary has no such member (section 2.1.2).
    #[error("component {component}: dictionary has no member {key:?}")]
    KeyMissing {
        /// The component identifier.
        component: String,
        /// The `;key` parameter value.
        key: String,
    },
    /// A component value holds CR, LF or NUL, which would break the line
    /// structure of the signature base (section 2.5).
    #[error("component {0}: value holds a byte that cannot appear in a signature base")]
    BadValueByte(String),
    /// RFC 9421 sections 2.1 and 2.5: the signature base is ASCII, so a
    /// component value with a byte above 0x7F cannot be covered plainly;
    /// `;bs` (section 2.1.3) is how such a field is covered.
    #[error("component {0}: value holds a non-ASCII byte (RFC 9421 section 2.5); cover the field with ;bs")]
    NonAsciiValue(String),
    /// A query name or value percent-decodes to bytes that are not UTF-8.
    /// WHATWG decoding would replace them with U+FFFD, making distinct
    /// queries (`%FF`, `%FE`) sign alike; refused instead (RFC 9421 section 2.2.8).
    #[error("component {component}: query parameter text {text:?} percent-decodes to bytes that are not UTF-8")]
    QueryNotUtf8 {
        /// The component identifier.
        component: String,
        /// The query name or value as received, before decoding.
        text: String,
    },
    /// The signature bases built for one message (every label together)
    /// would exceed [`MAX_BASE_BYTES`](super::MAX_BASE_BYTES): the work a
    /// message can cause is bounded, whatever its labels and components.
    #[error("the signature bases of this message exceed {budget} bytes in total (the work per message is bounded)")]
    WorkBudget {
        /// The budget, in bytes.
        budget: usize,
    },
}

/// The structured-field type of a field, for `;sf` (RFC 9421 section 2.1.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SfType {
    /// An Item (RFC 9651 section 3.3).
    Item,
    /// A List (RFC 9651 section 3.1).
    List,
    /// A Dictionary (RFC 9651 section 3.2); only these support `;key`.
    Dictionary,
}

/// Types of the structured fields agentsig knows (RFC 9421, RFC 9530,
/// RFC 9651 section 3 and the retrofit fields of RFC 9651 section 3 / RFC 8941 users).
pub fn known_sf_type(name: &str) -> Option<SfType> {
    Some(match name {
        "signature-input"
        | "signature"
        | "accept-signature"
        | "content-digest"
        | "repr-digest"
        | "want-content-digest"
        | "want-repr-digest"
        | "priority"
        | "cdn-cache-control" => SfType::Dictionary,
        "accept-ch" | "cache-status" | "proxy-status" | "client-cert-chain" => SfType::List,
        "client-cert" | "sec-ch-ua-mobile" | "sec-ch-ua-platform" => SfType::Item,
        _ => return None,
    })
}

fn write_id(out: &mut String, target: &Target, params: &sfv::Params) {
    let name = match target {
        Target::Derived(d) => d.name(),
        Target::Field(f) => f.as_str(),
    };
    sfv::write_string(out, name);
    sfv::write_params(out, params);
}

impl std::fmt::Display for ComponentId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.serialized())
    }
}

impl ComponentId {
    /// A field component with no parameters.
    ///
    /// # Errors
    /// [`ComponentError`] when the component identifier or its value is malformed, missing from the
    /// message, or not allowed in this context (RFC 9421 section 2).
    pub fn field(name: &str) -> Result<ComponentId, ComponentError> {
        Self::from_item(&Item {
            bare: BareItem::String(name.to_owned()),
            params: Vec::new(),
        })
    }

    /// The identifier as serialized in a covered list (RFC 9421 section
    /// 2.1: the name as an sf-string, then the parameters): its `Display`
    /// text, made in one allocation where it has no parameters.
    pub(crate) fn serialized(&self) -> String {
        let mut s = String::new();
        write_id(&mut s, &self.target, &self.params);
        s
    }

    /// A derived component with no parameters.
    pub fn derived(d: Derived) -> ComponentId {
        ComponentId {
            target: Target::Derived(d),
            params: Vec::new(),
            sf: false,
            key: None,
            bs: false,
            req: false,
            tr: false,
            qname: None,
        }
    }

    /// Parse the text form used on the command line and in `Signature-Input`,
    /// e.g. `"content-type"`, `"@query-param";name="Pet"`, or unquoted
    /// `content-digest;req`.
    ///
    /// # Errors
    /// [`ComponentError`] when the component identifier or its value is malformed, missing from the
    /// message, or not allowed in this context (RFC 9421 section 2).
    pub fn parse(text: &str) -> Result<ComponentId, ComponentError> {
        let t = text.trim();
        let quoted;
        let t = if t.starts_with('"') {
            t
        } else {
            let (n, rest) = t.split_at(t.find(';').unwrap_or(t.len()));
            quoted = format!("\"{n}\"{rest}");
            quoted.as_str()
        };
        let item = sfv::parse_item(t.as_bytes()).map_err(|e| ComponentError::Structured {
            component: text.to_owned(),
            err: e,
        })?;
        Self::from_item(&item)
    }

    /// Validate an identifier from a parsed Inner List member (RFC 9421 section 2).
    ///
    /// # Errors
    /// [`ComponentError`] when the component identifier or its value is malformed, missing from the
    /// message, or not allowed in this context (RFC 9421 section 2).
    pub fn from_item(item: &Item) -> Result<ComponentId, ComponentError> {
        let BareItem::String(name) = &item.bare else {
            let mut s = String::new();
            sfv::write_item(&mut s, item);
            return Err(ComponentError::NotAString(s));
        };
        if name.bytes().any(|c| c.is_ascii_uppercase()) {
            return Err(ComponentError::NotLowercase(name.clone()));
        }
        let target = if name.starts_with('@') {
            Target::Derived(
                Derived::from_name(name)
                    .ok_or_else(|| ComponentError::UnknownDerived(name.clone()))?,
            )
        } else {
            if name.is_empty() || !name.bytes().all(sfv::is_tchar) {
                return Err(ComponentError::BadFieldName(name.clone()));
            }
            Target::Field(name.clone())
        };
        let mut id = ComponentId {
            target,
            params: item.params.clone(),
            sf: false,
            key: None,
            bs: false,
            req: false,
            tr: false,
            qname: None,
        };
        // The identifier as serialized, for the errors only (made when one
        // is returned: a valid identifier costs no formatting).
        let comp = || {
            let mut s = String::new();
            write_id(&mut s, &id.target, &item.params);
            s
        };
        if let Some(p) = sfv::duplicate_param(&item.params) {
            return Err(ComponentError::DuplicateParam {
                component: comp(),
                param: p.to_owned(),
            });
        }
        let is_field = matches!(id.target, Target::Field(_));
        for (k, v) in &item.params {
            let bad_type = || ComponentError::ParamType {
                component: comp(),
                param: k.clone(),
            };
            let not_app = || ComponentError::ParamNotApplicable {
                component: comp(),
                param: k.clone(),
            };
            let flag = || -> Result<bool, ComponentError> {
                if *v == BareItem::Boolean(true) {
                    Ok(true)
                } else {
                    Err(bad_type())
                }
            };
            match k.as_str() {
                "sf" if is_field => id.sf = flag()?,
                "bs" if is_field => id.bs = flag()?,
                "tr" if is_field => id.tr = flag()?,
                "req" => id.req = flag()?,
                "key" if is_field => match v {
                    BareItem::String(s) => id.key = Some(s.clone()),
                    _ => return Err(bad_type()),
                },
                "name" if id.target == Target::Derived(Derived::QueryParam) => match v {
                    BareItem::String(s) => id.qname = Some(s.clone()),
                    _ => return Err(bad_type()),
                },
                "sf" | "bs" | "tr" | "key" | "name" => return Err(not_app()),
                other => {
                    return Err(ComponentError::UnknownParam {
                        component: comp(),
                        param: other.to_owned(),
                    })
                }
            }
        }
        if id.bs && (id.sf || id.key.is_some()) {
            return Err(ComponentError::BsWithSf { component: comp() });
        }
        if id.target == Target::Derived(Derived::QueryParam) && id.qname.is_none() {
            return Err(ComponentError::QueryParamNameMissing);
        }
        Ok(id)
    }

    /// Parameters compared as a set, for duplicate detection (RFC 9421 section 2.5).
    pub(crate) fn same_as(&self, other: &ComponentId) -> bool {
        self.target == other.target
            && self.params.len() == other.params.len()
            && self.params.iter().all(|p| other.params.contains(p))
    }

    /// True if this names a field (not a derived component).
    pub fn field_name(&self) -> Option<&str> {
        match &self.target {
            Target::Field(f) => Some(f),
            Target::Derived(_) => None,
        }
    }

    /// True when `;req` is set.
    pub fn is_req(&self) -> bool {
        self.req
    }

    /// Append the component value to `out` (RFC 9421 sections 2.1 and 2.2).
    ///
    /// `msg` is the message being signed; `related` the request a response
    /// answers, for `;req`.
    ///
    /// # Errors
    /// [`ComponentError`] when the component identifier or its value is malformed, missing from the
    /// message, or not allowed in this context (RFC 9421 section 2).
    pub fn write_value(
        &self,
        out: &mut Vec<u8>,
        msg: &Message,
        related: Option<&Message>,
        sf_types: &dyn Fn(&str) -> Option<SfType>,
    ) -> Result<(), ComponentError> {
        self.write_value_cached(out, msg, related, sf_types, &mut FieldCache::default())
    }

    /// [`Self::write_value`] with the parsed `;key` dictionaries and the
    /// `;sf` serializations of one message shared in `cache`.
    pub(crate) fn write_value_cached(
        &self,
        out: &mut Vec<u8>,
        msg: &Message,
        related: Option<&Message>,
        sf_types: &dyn Fn(&str) -> Option<SfType>,
        cache: &mut FieldCache,
    ) -> Result<(), ComponentError> {
        let src = if self.req {
            if msg.is_request() {
                return Err(ComponentError::ReqInRequest(self.to_string()));
            }
            related.ok_or_else(|| ComponentError::NoRelatedRequest(self.to_string()))?
        } else {
            msg
        };
        match &self.target {
            Target::Derived(d) => self.write_derived(out, *d, src),
            Target::Field(name) => self.write_field(out, name, src, sf_types, cache),
        }
    }

    fn write_derived(
        &self,
        out: &mut Vec<u8>,
        d: Derived,
        m: &Message,
    ) -> Result<(), ComponentError> {
        let req = match (&m.kind, d) {
            (Kind::Response { status }, Derived::Status) => {
                let _ = write!(ByteWriter(out), "{status:03}");
                return Ok(());
            }
            (Kind::Request(_), Derived::Status) => {
                return Err(ComponentError::ResponseOnly(self.to_string()))
            }
            (Kind::Response { .. }, _) => {
                return Err(ComponentError::RequestOnly(self.to_string()))
            }
            (Kind::Request(r), _) => r,
        };
        match d {
            Derived::Method => out.extend_from_slice(req.method.as_bytes()),
            Derived::TargetUri => out.extend_from_slice(req.target_uri().as_bytes()),
            Derived::Authority => out.extend_from_slice(req.authority.as_bytes()),
            Derived::Scheme => out.extend_from_slice(req.scheme.as_bytes()),
            Derived::RequestTarget => out.extend_from_slice(req.target.as_bytes()),
            Derived::Path => out.extend_from_slice(req.path.as_bytes()),
            Derived::Query => {
                out.push(b'?');
                if let Some(q) = &req.query {
                    out.extend_from_slice(q.as_bytes());
                }
            }
            Derived::QueryParam => {
                let want = self.qname.as_deref().unwrap_or("");
                let mut found: Option<String> = None;
                let pairs = form_pairs(req.query.as_deref().unwrap_or("")).map_err(|text| {
                    ComponentError::QueryNotUtf8 {
                        component: self.to_string(),
                        text,
                    }
                })?;
                for (n, v) in pairs {
                    if form_encode(&n) == want {
                        if found.is_some() {
                            return Err(ComponentError::QueryParamRepeated(want.to_owned()));
                        }
                        found = Some(form_encode(&v));
                    }
                }
                let v = found.ok_or_else(|| ComponentError::Missing(self.to_string()))?;
                out.extend_from_slice(v.as_bytes());
            }
            Derived::Status => {}
        }
        Ok(())
    }

    fn write_field(
        &self,
        out: &mut Vec<u8>,
        name: &str,
        m: &Message,
        sf_types: &dyn Fn(&str) -> Option<SfType>,
        cache: &mut FieldCache,
    ) -> Result<(), ComponentError> {
        let lines: Vec<&[u8]> = m.field_lines(name, self.tr).collect();
        if lines.is_empty() {
            return Err(ComponentError::Missing(self.to_string()));
        }
        let structured = |e| ComponentError::Structured {
            component: self.to_string(),
            err: e,
        };
        if self.bs {
            for (i, l) in lines.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                out.push(b':');
                out.extend_from_slice(crate::b64::encode_std(l).as_bytes());
                out.push(b':');
            }
            return Ok(());
        }
        if let Some(key) = &self.key {
            let field = (self.req, self.tr, name.to_owned());
            let parses = &mut cache.parses;
            let dict = cache
                .dicts
                .entry(field)
                .or_insert_with(|| {
                    *parses += 1;
                    sfv::parse_dictionary(&lines.join(&b", "[..]))
                })
                .as_ref()
                .map_err(|e| structured(e.clone()))?;
            let entry = dict.get(key).ok_or_else(|| ComponentError::KeyMissing {
                component: self.to_string(),
                key: key.clone(),
            })?;
            let mut s = String::new();
            sfv::write_entry(&mut s, entry);
            out.extend_from_slice(s.as_bytes());
            return Ok(());
        }
        if self.sf {
            let field = (self.req, self.tr, name.to_owned());
            let parses = &mut cache.parses;
            let s = cache
                .sf
                .entry(field)
                .or_insert_with(|| {
                    *parses += 1;
                    sf_serialize(&lines.join(&b", "[..]), sf_types(name))
                })
                .as_ref()
                .map_err(|e| structured(e.clone()))?;
            out.extend_from_slice(s.as_bytes());
            return Ok(());
        }
        for (i, l) in lines.iter().enumerate() {
            if i > 0 {
                out.extend_from_slice(b", ");
            }
            out.extend_from_slice(l);
        }
        Ok(())
    }
}

/// The `;sf` serialization of a field value (RFC 9421 section 2.1.1).
fn sf_serialize(joined: &[u8], ty: Option<SfType>) -> Result<String, SfError> {
    let mut s = String::new();
    match ty {
        Some(SfType::Dictionary) => sfv::write_dictionary(&mut s, &sfv::parse_dictionary(joined)?),
        Some(SfType::List) => sfv::write_list(&mut s, &sfv::parse_list(joined)?),
        Some(SfType::Item) => sfv::write_item(&mut s, &sfv::parse_item(joined)?),
        // Unknown type: a value that parses as both a Dictionary and a
        // List (or List and Item) serializes identically either way,
        // so trying Dictionary, then List, is unambiguous.
        None => match sfv::parse_dictionary(joined) {
            Ok(d) => sfv::write_dictionary(&mut s, &d),
            Err(_) => sfv::write_list(&mut s, &sfv::parse_list(joined)?),
        },
    }
    Ok(s)
}

/// The structured-field work of one message, shared by every signature
/// base built for it (all labels): the `;key` Dictionary and the `;sf`
/// serialization of each field, by (`;req`, `;tr`, field name), so each
/// covered field is parsed at most once per kind per message however many
/// labels and parameters name it; and the bytes of signature base built so
/// far, bounded by [`MAX_BASE_BYTES`](super::MAX_BASE_BYTES).
#[derive(Default)]
pub(crate) struct FieldCache {
    dicts: std::collections::HashMap<(bool, bool, String), Result<sfv::Dictionary, SfError>>,
    sf: std::collections::HashMap<(bool, bool, String), Result<String, SfError>>,
    /// Structured-field parses done (one per field and kind).
    pub(crate) parses: usize,
    /// Signature base bytes built for this message so far.
    pub(crate) base_bytes: usize,
}

struct ByteWriter<'a>(&'a mut Vec<u8>);
impl std::fmt::Write for ByteWriter<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

/// application/x-www-form-urlencoded parsing (WHATWG URL, section 5.1):
/// split on `&`, first `=` separates name and value, `+` is a space, then
/// percent-decode and UTF-8 decode. Unlike WHATWG, bytes that are not UTF-8
/// are refused rather than replaced by U+FFFD (so `%FF` and `%FE` cannot
/// compare equal, RFC 9421 section 2.2.8): `Err` holds the
/// offending name or value as received.
///
/// # Errors
/// a message naming the offending value.
pub fn form_pairs(query: &str) -> Result<Vec<(String, String)>, String> {
    query
        .split('&')
        .filter(|s| !s.is_empty())
        .map(|s| {
            let (n, v) = s.split_once('=').unwrap_or((s, ""));
            let dec = |t: &str| form_decode(t).ok_or_else(|| t.to_owned());
            Ok((dec(n)?, dec(v)?))
        })
        .collect()
}

fn hex_val(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

fn form_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        match c {
            b'+' => out.push(b' '),
            b'%' => {
                let h = b.get(i + 1).and_then(|x| hex_val(*x));
                let l = b.get(i + 2).and_then(|x| hex_val(*x));
                if let (Some(h), Some(l)) = (h, l) {
                    out.push(h * 16 + l);
                    i += 2;
                } else {
                    out.push(b'%');
                }
            }
            _ => out.push(c),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// Percent-encode with the application/x-www-form-urlencoded percent-encode
/// set, but a space as `%20` (RFC 9421 section 2.2.8).
pub fn form_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'*' | b'-' | b'.' | b'_') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// Parse an Inner List of component identifiers, refusing duplicates
/// (RFC 9421 section 2.5: each identifier occurs once).
///
/// # Errors
/// [`ComponentError`] when the component identifier or its value is malformed, missing from the
/// message, or not allowed in this context (RFC 9421 section 2).
pub fn parse_covered(items: &[Item]) -> Result<Vec<ComponentId>, ComponentError> {
    let mut out: Vec<ComponentId> = Vec::with_capacity(items.len());
    for it in items {
        let id = ComponentId::from_item(it)?;
        if out.iter().any(|o| o.same_as(&id)) {
            return Err(ComponentError::Duplicate(id.to_string()));
        }
        out.push(id);
    }
    Ok(out)
}

/// The identifiers of an Inner List entry, if it is one.
pub fn inner_list_items(e: &Entry) -> Option<&sfv::InnerList> {
    match e {
        Entry::InnerList(l) => Some(l),
        Entry::Item(_) => None,
    }
}
