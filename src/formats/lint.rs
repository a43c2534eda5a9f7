//! `agentsig lint`: each format's MUST rules, checked on the parsed document.
//!
//! A signature over a malformed descriptor, or over one that points its
//! endpoints at an internal address, protects nothing; so MUST violations
//! are [`Severity::Error`] (and `sign` refuses them unless forced), SHOULD
//! violations are [`Severity::Warning`].
//!
//! The rules are data: [`RULES`] holds one [`Rule`] per row (format, JSON
//! pointer pattern, [`Check`], stable code, severity, seed section), and
//! [`lint`] runs every row of the document's format, all rows in one walk
//! of the document (a value several rows select is reached once), the
//! findings in row order. `docs/formats.md`
//! lists every MUST / REQUIRED / SHALL of the drafts with the code that
//! checks it, or why a static lint cannot.
//!
//! Every finding carries a stable `code` and the RFC 6901 JSON pointer of
//! the offending value. Codes shared by all formats:
//!
//! | code | rule |
//! |---|---|
//! | `json/type` | a member has the wrong JSON type (the section that defines it) |
//! | `addr/internal` | an endpoint names a private, loopback, link-local or otherwise internal host ([`super::classify_host`]; draft-narvaneni-agent-uri-03 section 5.2, the Web of Agents draft section 8.2) |
//! | `addr/invalid-host` | an endpoint URI has no valid host |
//! | `addr/cleartext` | an endpoint uses `http:` (warning; draft-narvaneni-agent-uri-03 section 5.2, the Web of Agents draft section 8.1, AIDIP "Security") |
//! | `publish/media-type` | served with a media type other than the format's ([`served_media_type_finding`]; warning) |
//! | `publish/path` | served at a path other than the format's well-known path ([`served_path_finding`]; warning) |

use super::addr::{classify_host, uri_host, uri_scheme};
use super::{detect, DetectError, Format};
use crate::json;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// How bad a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// A MUST rule is broken: `sign` refuses, `lint` exits 1.
    Error,
    /// A SHOULD rule or an advisory.
    Warning,
}

impl Severity {
    /// `"error"` or `"warning"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One broken rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// Stable code (see the module documentation), e.g. `addr/internal`.
    pub code: &'static str,
    /// Error or warning.
    pub severity: Severity,
    /// RFC 6901 JSON pointer of the offending value (`""` = the document).
    pub pointer: String,
    /// What is wrong, for people.
    pub message: String,
}

/// The findings of one document.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct LintReport {
    /// The format the document was linted as.
    pub format: Format,
    /// Findings, in document order of the checks.
    pub findings: Vec<Finding>,
}

impl LintReport {
    /// True when any finding is an error.
    pub fn has_errors(&self) -> bool {
        self.findings.iter().any(|f| f.severity == Severity::Error)
    }

    /// The errors only.
    pub fn errors(&self) -> impl Iterator<Item = &Finding> {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
    }

    /// Machine-readable form: `{"format", "media_type", "well_known_path",
    /// "ok", "findings":[{"code","severity","pointer","message"}]}`.
    pub fn to_json(&self) -> Value {
        let findings = self
            .findings
            .iter()
            .map(|f| {
                serde_json::json!({
                    "code": f.code,
                    "severity": f.severity.as_str(),
                    "pointer": f.pointer,
                    "message": f.message,
                })
            })
            .collect::<Vec<_>>();
        serde_json::json!({
            "format": self.format.name(),
            "media_type": self.format.media_type(),
            "well_known_path": self.format.well_known_path(),
            "ok": !self.has_errors(),
            "findings": findings,
        })
    }
}

/// Parse strictly, detect the format (unless `format` is given) and lint.
///
/// An AgentCard may arrive as a JSON string holding the card (the embedded
/// form of the AgentCard draft "Serialisation": "Implementations MUST accept both
/// embedded-string and direct-object forms"): a top-level string whose
/// content is a JSON object is linted as that object when it is an
/// AgentCard (detected, or `format` is [`Format::AgentCard`]).
///
/// # Errors
/// [`DetectError`] when the document is not strict I-JSON or is no known descriptor format.
pub fn lint_bytes(input: &[u8], format: Option<Format>) -> Result<LintReport, DetectError> {
    let mut doc = json::parse_strict(input)?;
    if let Value::String(s) = &doc {
        if let Ok(inner) = json::parse_strict(s.as_bytes()) {
            let is_card = match format {
                Some(f) => f == Format::AgentCard,
                None => detect(&inner).is_ok_and(|f| f == Format::AgentCard),
            };
            if is_card && inner.is_object() {
                doc = inner;
            }
        }
    }
    let format = match format {
        Some(f) => f,
        None => detect(&doc)?,
    };
    Ok(lint(format, &doc))
}

/// Lint a parsed document as `format`: every row of [`RULES`] for it.
pub fn lint(format: Format, doc: &Value) -> LintReport {
    lint_where(format, doc, |_| true)
}

/// [`lint`] of an AI Catalog without the rows that lint its inline MCP
/// Server Cards: the catalog verifier checks each such card itself as the
/// entry's artifact, under its own options (a local trial's internal
/// endpoints), so its findings are not reported twice.
pub(crate) fn lint_catalog_own(doc: &Value) -> LintReport {
    lint_where(Format::AiCatalog, doc, |r| !r.code.starts_with("mcp/"))
}

fn lint_where(format: Format, doc: &Value, keep: impl Fn(&Rule) -> bool) -> LintReport {
    let mut l = Linter::default();
    if doc.is_object() {
        let rules: Vec<&Rule> = super::all_rules()
            .filter(|r| r.format == format && keep(r))
            .collect();
        run_rules(&mut l, &rules, doc);
    } else {
        l.push(
            "json/type",
            Severity::Error,
            "",
            "the document must be a JSON object".into(),
        );
    }
    LintReport {
        format,
        findings: l.findings,
    }
}

/// A JSON type a member must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    /// A string.
    String,
    /// An object.
    Object,
    /// An array (of anything).
    Array,
    /// `true` or `false`.
    Bool,
    /// A number.
    Number,
    /// An array of strings.
    StringArray,
}

impl Ty {
    fn fits(self, v: &Value) -> bool {
        match self {
            Ty::String => v.is_string(),
            Ty::Object => v.is_object(),
            Ty::Array => v.is_array(),
            Ty::Bool => v.is_boolean(),
            Ty::Number => v.is_number(),
            Ty::StringArray => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
        }
    }

    /// `"a string"`, `"an object"`, ...
    pub fn name(self) -> &'static str {
        match self {
            Ty::String => "a string",
            Ty::Object => "an object",
            Ty::Array => "an array",
            Ty::Bool => "a boolean",
            Ty::Number => "a number",
            Ty::StringArray => "an array of strings",
        }
    }
}

/// What a [`Rule`] checks at the values its pointer pattern selects. All
/// checks but `Required` and `Recommended` apply only where the value is
/// present (the presence of a member is its own rule).
#[derive(Clone, Copy, Debug)]
pub enum Check {
    /// The last pointer segment names a member that every selected parent
    /// object must have; missing is the rule's code, another type is
    /// `json/type`.
    Required(Ty),
    /// Like `Required`, for a member that should be present (the rule is a
    /// warning); the type is not checked.
    Recommended,
    /// The value has this type.
    Type(Ty),
    /// The value is one of these strings.
    OneOf(&'static [&'static str]),
    /// The array or object has at least one entry.
    NonEmpty,
    /// The predicate holds; the text says what the value must be.
    Value(fn(&Value) -> bool, &'static str),
    /// The value is a JSON Schema (2020-12) in shape: a boolean, or an
    /// object whose `type`, `properties`, `required`, `items`, `enum` and
    /// subschemas have their defined types ([`schema_problem`]).
    Schema,
    /// The value is an advertised endpoint URI: `addr/internal`,
    /// `addr/invalid-host` (errors), `addr/cleartext` (warning).
    Endpoint,
    /// Any other check, run at each selected value.
    Custom(fn(&mut Cx<'_>)),
}

/// One rule: where, what, which code, which seed section.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    /// The format it belongs to.
    pub format: Format,
    /// RFC 6901 pointer pattern; `*` selects every array element or object
    /// member, `""` is the document.
    pub pointer: &'static str,
    /// What is checked there.
    pub check: Check,
    /// The stable code of its findings.
    pub code: &'static str,
    /// Error (a MUST) or warning.
    pub severity: Severity,
    /// The seed (or A2A specification) section that states the rule.
    pub section: &'static str,
}

/// The context of a [`Check::Custom`] check.
pub struct Cx<'a> {
    l: &'a mut Linter,
    rule: &'a Rule,
    sel: &'a Sel<'a, 'a>,
    val: &'a Value,
    doc: &'a Value,
}

impl Cx<'_> {
    /// The selected value.
    pub(super) fn value(&self) -> &Value {
        self.val
    }
    /// Its member name or array index.
    fn key(&self) -> std::borrow::Cow<'_, str> {
        self.sel.key()
    }
    /// A finding of the rule at the selected value's pointer plus `suffix`.
    pub(super) fn fail(&mut self, suffix: &str, msg: String) {
        let p = format!("{}{suffix}", self.sel.ptr());
        let m = format!("{msg} ({})", self.rule.section);
        self.l.push(self.rule.code, self.rule.severity, &p, m);
    }
    /// A finding with another code (e.g. `json/type`).
    pub(super) fn fail_as(&mut self, code: &'static str, suffix: &str, msg: String) {
        let p = format!("{}{suffix}", self.sel.ptr());
        let m = format!("{msg} ({})", self.rule.section);
        self.l.push(code, Severity::Error, &p, m);
    }
    /// Lint `doc` as `format` ([`lint`]), as a file of its own would be,
    /// and report each finding with its own code at the selected value's
    /// pointer plus `suffix` plus the finding's pointer: an inline
    /// artifact (an AI Catalog entry's `data`) gets the findings its file
    /// would, located in the catalog.
    pub(super) fn lint_inline(&mut self, suffix: &str, format: Format, doc: &Value) {
        let base = format!("{}{suffix}", self.sel.ptr());
        for f in lint(format, doc).findings {
            let p = format!("{base}{}", f.pointer);
            self.l.push(f.code, f.severity, &p, f.message);
        }
    }
    pub(super) fn endpoint(&mut self, suffix: &str, uri: &str) {
        let p = format!("{}{suffix}", self.sel.ptr());
        self.l.endpoint(&p, uri, self.rule.format);
    }
}

#[derive(Default)]
struct Linter {
    findings: Vec<Finding>,
    /// The index of the rule each finding came from, beside `findings`.
    rule_of: Vec<usize>,
    /// The index of the rule being run.
    rule: usize,
    /// AWP action ids, computed once per document (each reference to an
    /// action is looked up here, so the check stays linear).
    action_ids: Option<BTreeSet<String>>,
}

impl Linter {
    fn push(&mut self, code: &'static str, severity: Severity, pointer: &str, message: String) {
        self.findings.push(Finding {
            code,
            severity,
            pointer: pointer.to_string(),
            message,
        });
        self.rule_of.push(self.rule);
    }

    /// The findings in rule order, each rule's in the order it made them
    /// (a stable sort by rule index).
    fn in_rule_order(&mut self) {
        if self.rule_of.windows(2).all(|w| w[0] <= w[1]) {
            return;
        }
        let mut tagged: Vec<(usize, Finding)> = self
            .rule_of
            .drain(..)
            .zip(self.findings.drain(..))
            .collect();
        tagged.sort_by_key(|(rule, _)| *rule);
        (self.rule_of, self.findings) = tagged.into_iter().unzip();
    }

    /// Why an advertised endpoint on an internal host is an error, citing the
    /// text of the format's own specification.
    fn internal_endpoint_rule(format: Format) -> &'static str {
        match format {
        Format::McpServerCard => "a published card must not advertise private endpoints (the MCP Server Card draft, docs/discovery.md \"Security Considerations\", Information Disclosure; repository modelcontextprotocol/experimental-ext-server-card); to try it on this machine, keep a public host name in the card and map it here with --resolve-to HOST=127.0.0.1, or verify with --allow-private-networks, which accepts such endpoints",
        _ => "clients refuse it (draft-narvaneni-agent-uri-03 section 5.2, the Web of Agents draft section 8.2)",
    }
    }

    /// An advertised network endpoint: internal hosts are errors, `http:`
    /// a warning.
    fn endpoint(&mut self, pointer: &str, uri: &str, format: Format) {
        let Some(host) = uri_host(uri) else {
            return;
        };
        let class = classify_host(host);
        if class == super::HostClass::Invalid {
            self.push(
                "addr/invalid-host",
                Severity::Error,
                pointer,
                format!("endpoint {} has no valid host", crate::text::quoted(uri)),
            );
        } else if class.is_internal() {
            self.push(
                "addr/internal",
                Severity::Error,
                pointer,
                format!(
                    "endpoint {} names a {} host {}: {}",
                    crate::text::quoted(uri),
                    class.label(),
                    crate::text::quoted(host),
                    Self::internal_endpoint_rule(format)
                ),
            );
        }
        if uri_scheme(uri).as_deref() == Some("http") {
            self.push(
                "addr/cleartext",
                Severity::Warning,
                pointer,
                format!("endpoint {} is cleartext http", crate::text::quoted(uri)),
            );
        }
    }
}

/// The key of a selected value in its parent.
#[derive(Clone, Copy)]
enum Key<'v> {
    /// The document itself.
    Root,
    /// An array element.
    Index(usize),
    /// An object member.
    Name(&'v str),
}

/// A selected value, its key and its parent's selection: the RFC 6901
/// pointer is written only for a finding ([`Sel::ptr`]), so a value that
/// passes its rows costs no allocation.
struct Sel<'s, 'v> {
    up: Option<&'s Sel<'s, 'v>>,
    key: Key<'v>,
    val: &'v Value,
}

impl<'v> Sel<'_, 'v> {
    /// The RFC 6901 pointer (section 3: `~` as `~0`, `/` as `~1`).
    fn ptr(&self) -> String {
        let mut keys = Vec::new();
        let mut at = Some(self);
        while let Some(s) = at {
            keys.push(s.key);
            at = s.up;
        }
        let mut ptr = String::new();
        for k in keys.into_iter().rev() {
            match k {
                Key::Root => {}
                Key::Index(i) => json::push_pointer_token(&mut ptr, &i.to_string()),
                Key::Name(n) => json::push_pointer_token(&mut ptr, n),
            }
        }
        ptr
    }

    /// The member name or array index (`""` for the document).
    fn key(&self) -> std::borrow::Cow<'v, str> {
        match self.key {
            Key::Root => "".into(),
            Key::Index(i) => i.to_string().into(),
            Key::Name(n) => n.into(),
        }
    }
}

/// The values `pattern` selects in `doc` (see [`Rule::pointer`]), in
/// document order.
fn select<'v>(doc: &'v Value, pattern: &str) -> Vec<&'v Value> {
    let mut cur = vec![doc];
    for seg in pattern.split('/').skip(1) {
        let mut next = Vec::new();
        for v in cur {
            match (seg, v) {
                ("*", Value::Array(a)) => next.extend(a.iter()),
                ("*", Value::Object(o)) => next.extend(o.values()),
                (name, Value::Object(o)) => next.extend(o.get(name)),
                _ => {}
            }
        }
        cur = next;
    }
    cur
}

/// What a rule selects: the parent of the member for
/// [`Check::Required`] and [`Check::Recommended`], its pointer otherwise.
fn selection(rule: &Rule) -> &'static str {
    match rule.check {
        Check::Required(_) | Check::Recommended => rule
            .pointer
            .rsplit_once('/')
            .map_or("", |(parent, _)| parent),
        _ => rule.pointer,
    }
}

/// The rows of one format as a tree of their selections' segments: the
/// rows that select a node, then the node's children by segment (`*` for
/// every element or member).
#[derive(Default)]
struct Trie {
    rows: Vec<usize>,
    next: Vec<(&'static str, Trie)>,
}

impl Trie {
    fn of(rules: &[&Rule]) -> Trie {
        let mut root = Trie::default();
        for (i, rule) in rules.iter().enumerate() {
            let mut node = &mut root;
            for seg in selection(rule).split('/').skip(1) {
                let k = match node.next.iter().position(|(s, _)| *s == seg) {
                    Some(k) => k,
                    None => {
                        node.next.push((seg, Trie::default()));
                        node.next.len() - 1
                    }
                };
                node = &mut node.next[k].1;
            }
            node.rows.push(i);
        }
        root
    }
}

/// Run `rules` (one format's rows, in table order) over `doc` in one walk:
/// each value that several rows select (every entry of a catalog, for the
/// dozens of `/entries/*` rows) is reached once and checked by each of
/// them in turn. The findings are then put back in the order of running
/// each row on its own, row after row; a row's findings are in document
/// order either way.
fn run_rules(l: &mut Linter, rules: &[&Rule], doc: &Value) {
    let root = Sel {
        up: None,
        key: Key::Root,
        val: doc,
    };
    visit(l, &Trie::of(rules), &root, rules, doc);
    l.in_rule_order();
}

/// The rows of `node` at `s`, then its children's under the values they
/// select. The recursion is as deep as the rows' pointers, not the input.
fn visit(l: &mut Linter, node: &Trie, s: &Sel<'_, '_>, rules: &[&Rule], doc: &Value) {
    for &j in &node.rows {
        l.rule = j;
        if let Some(rule) = rules.get(j) {
            run_rule_at(l, rule, s, doc);
        }
    }
    for (seg, child) in &node.next {
        let at = |key, val| Sel {
            up: Some(s),
            key,
            val,
        };
        match (*seg, s.val) {
            ("*", Value::Array(a)) => {
                #[cfg(test)]
                tests::CHILDREN.with(|n| n.set(n.get() + a.len()));
                for (i, v) in a.iter().enumerate() {
                    visit(l, child, &at(Key::Index(i), v), rules, doc);
                }
            }
            ("*", Value::Object(o)) => {
                #[cfg(test)]
                tests::CHILDREN.with(|n| n.set(n.get() + o.len()));
                for (k, v) in o {
                    visit(l, child, &at(Key::Name(k), v), rules, doc);
                }
            }
            (name, Value::Object(o)) => {
                if let Some((k, v)) = crate::json::member_entry(o, name) {
                    visit(l, child, &at(Key::Name(k), v), rules, doc);
                }
            }
            _ => {}
        }
    }
}

/// A value for a message: strings quoted and escaped, others as JSON, cut
/// at 80 characters.
fn show(v: &Value) -> String {
    let s = match v {
        Value::String(s) => crate::text::quoted(s).to_string(),
        other => other.to_string(),
    };
    if s.chars().count() > 80 {
        s.chars().take(77).collect::<String>() + "..."
    } else {
        s
    }
}

fn member_name(key: &str) -> String {
    if key.is_empty() {
        "the document".into()
    } else {
        crate::text::quoted(key).to_string()
    }
}

/// Run `rule` at one value it selects (for [`Check::Required`] and
/// [`Check::Recommended`], the parent object of the member). Pointers and
/// messages are written only for a finding.
fn run_rule_at(l: &mut Linter, rule: &Rule, s: &Sel<'_, '_>, doc: &Value) {
    let sec = rule.section;
    if let Check::Required(_) | Check::Recommended = rule.check {
        let member = rule
            .pointer
            .rsplit_once('/')
            .map_or(rule.pointer, |(_, m)| m);
        let Some(o) = s.val.as_object() else { return };
        let p = || {
            let mut p = s.ptr();
            json::push_pointer_token(&mut p, member);
            p
        };
        match (crate::json::member(o, member), rule.check) {
            (None, Check::Recommended) => l.push(
                rule.code,
                rule.severity,
                &p(),
                format!("{} is missing ({sec})", member_name(member)),
            ),
            (None, _) => l.push(
                rule.code,
                rule.severity,
                &p(),
                format!("required member {} is missing ({sec})", member_name(member)),
            ),
            (Some(v), Check::Required(ty)) if !ty.fits(v) => l.push(
                "json/type",
                Severity::Error,
                &p(),
                format!("{} must be {} ({sec})", member_name(member), ty.name()),
            ),
            _ => {}
        }
        return;
    }
    let name = || member_name(&s.key());
    let bad = match rule.check {
        Check::Type(ty) => (!ty.fits(s.val)).then(|| format!("{} must be {}", name(), ty.name())),
        Check::OneOf(list) => (!s.val.as_str().is_some_and(|x| list.contains(&x))).then(|| {
            format!(
                "{} {} is not one of {}",
                name(),
                show(s.val),
                list.join(", ")
            )
        }),
        Check::NonEmpty => {
            let empty = match s.val {
                Value::Array(a) => a.is_empty(),
                Value::Object(o) => o.is_empty(),
                _ => false,
            };
            empty.then(|| format!("{} must have at least one entry", name()))
        }
        Check::Value(ok, what) => {
            (!ok(s.val)).then(|| format!("{} {} must be {what}", name(), show(s.val)))
        }
        Check::Schema => {
            schema_problem(s.val, 0).map(|p| format!("{} is not a JSON Schema: {p}", name()))
        }
        Check::Endpoint => {
            if let Some(u) = s.val.as_str() {
                l.endpoint(&s.ptr(), u, rule.format);
            }
            None
        }
        Check::Custom(f) => {
            let mut cx = Cx {
                l: &mut *l,
                rule,
                sel: s,
                val: s.val,
                doc,
            };
            f(&mut cx);
            None
        }
        Check::Required(_) | Check::Recommended => None,
    };
    if let Some(m) = bad {
        l.push(rule.code, rule.severity, &s.ptr(), format!("{m} ({sec})"));
    }
}

/// Why `v` is not a JSON Schema (2020-12) document in shape, if it is not:
/// a schema is a boolean or an object; `type` is one of the seven type
/// names or a non-empty array of distinct ones; `properties`, `$defs` and
/// `patternProperties` are objects of schemas; `required` is an array of
/// distinct strings; `enum` an array; `items`, `additionalProperties`,
/// `not` schemas; `allOf`/`anyOf`/`oneOf` non-empty arrays of schemas
/// (JSON Schema Validation 2020-12 section 6, Core section 10). Nesting
/// deeper than 64 is refused.
pub fn schema_problem(v: &Value, depth: usize) -> Option<String> {
    const TYPES: [&str; 7] = [
        "null", "boolean", "object", "array", "number", "string", "integer",
    ];
    if depth > 64 {
        return Some("nested deeper than 64".into());
    }
    let o = match v {
        Value::Bool(_) => return None,
        Value::Object(o) => o,
        other => {
            return Some(format!(
                "{} is neither an object nor a boolean",
                show(other)
            ))
        }
    };
    let type_name = |t: &Value| t.as_str().is_some_and(|s| TYPES.contains(&s));
    match o.get("type") {
        None => {}
        Some(t) if type_name(t) => {}
        Some(Value::Array(ts))
            if !ts.is_empty()
                && ts.iter().all(type_name)
                && ts
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<BTreeSet<_>>()
                    .len()
                    == ts.len() => {}
        Some(t) => {
            return Some(format!(
                "\"type\" {} is not a JSON Schema type name",
                show(t)
            ))
        }
    }
    if let Some(r) = o.get("required") {
        let ok = r.as_array().is_some_and(|a| {
            a.iter().all(Value::is_string)
                && a.iter()
                    .filter_map(Value::as_str)
                    .collect::<BTreeSet<_>>()
                    .len()
                    == a.len()
        });
        if !ok {
            return Some("\"required\" must be an array of distinct strings".into());
        }
    }
    if o.get("enum").is_some_and(|e| !e.is_array()) {
        return Some("\"enum\" must be an array".into());
    }
    for k in ["properties", "$defs", "patternProperties"] {
        match o.get(k) {
            None => {}
            Some(Value::Object(m)) => {
                for (name, sub) in m {
                    if let Some(p) = schema_problem(sub, depth + 1) {
                        return Some(format!("{k}.{name}: {p}"));
                    }
                }
            }
            Some(_) => return Some(format!("{} must be an object", member_name(k))),
        }
    }
    for k in [
        "items",
        "additionalProperties",
        "not",
        "contains",
        "propertyNames",
    ] {
        if let Some(sub) = o.get(k) {
            if let Some(p) = schema_problem(sub, depth + 1) {
                return Some(format!("{k}: {p}"));
            }
        }
    }
    for k in ["allOf", "anyOf", "oneOf", "prefixItems"] {
        match o.get(k) {
            None => {}
            Some(Value::Array(a)) if !a.is_empty() => {
                for (i, sub) in a.iter().enumerate() {
                    if let Some(p) = schema_problem(sub, depth + 1) {
                        return Some(format!("{k}[{i}]: {p}"));
                    }
                }
            }
            Some(_) => return Some(format!("{} must be a non-empty array", member_name(k))),
        }
    }
    None
}

// ---- predicates and custom checks used by RULES ----

fn semver_value(v: &Value) -> bool {
    v.as_str().is_some_and(is_semver)
}

fn is_agent_scheme(s: &str) -> bool {
    s.starts_with("agent:") || s.starts_with("agent+")
}

fn agent_uri_or_other(v: &Value) -> bool {
    v.as_str().is_some_and(is_agent_scheme)
}

/// draft-narvaneni-agent-uri-03 sections 4.2 and 4.3: `"agent" ["+" protocol] "://" authority
/// path-abempty`, protocol `ALPHA *( ALPHA / DIGIT / "-" )`, authority not
/// empty, a DID authority percent-encoded (no raw `:` after `did`).
pub fn agent_uri_problem(uri: &str) -> Option<&'static str> {
    let (scheme, rest) = uri.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let proto_ok = match scheme.strip_prefix("agent") {
        Some("") => true,
        Some(p) => p.strip_prefix('+').is_some_and(|p| {
            let mut b = p.bytes();
            b.next().is_some_and(|c| c.is_ascii_alphabetic())
                && b.all(|c| c.is_ascii_alphanumeric() || c == b'-')
        }),
        None => return None,
    };
    if !proto_ok {
        return Some("the +protocol must be ALPHA *( ALPHA / DIGIT / \"-\" )");
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    if authority.is_empty() {
        return Some("the authority component MUST NOT be empty");
    }
    if authority
        .get(..4)
        .is_some_and(|p| p.eq_ignore_ascii_case("did:"))
    {
        return Some("a DID authority MUST be percent-encoded (did%3Amethod%3A...)");
    }
    None
}

fn agent_uri(cx: &mut Cx<'_>) {
    if let Some(u) = cx.val.as_str() {
        if let Some(p) = agent_uri_problem(u) {
            cx.fail(
                "",
                format!(
                    "{} is not a valid agent:// URI: {p}",
                    crate::text::quoted(u)
                ),
            );
        }
    }
}

fn depends_entry(v: &Value) -> bool {
    v.get("uri")
        .and_then(Value::as_str)
        .is_some_and(|u| u.starts_with("agent://") || u.starts_with("agent+"))
}

fn duplicates_at(cx: &mut Cx<'_>, array: &str, member: &str, what: &str) {
    let Some(Value::Array(items)) = cx.doc.get(array) else {
        return;
    };
    let mut seen = BTreeSet::new();
    let mut hits = Vec::new();
    for (i, it) in items.iter().enumerate() {
        if let Some(id) = it.get(member).and_then(Value::as_str) {
            if !seen.insert(id) {
                hits.push((format!("/{array}/{i}/{member}"), id.to_string()));
            }
        }
    }
    for (p, id) in hits {
        cx.fail(
            &p,
            format!(
                "{what} {} is not unique in the document",
                crate::text::quoted(&id)
            ),
        );
    }
}

fn skill_id_unique(cx: &mut Cx<'_>) {
    duplicates_at(cx, "skills", "id", "skill id");
}

fn depends_graph(doc: &Value) -> BTreeMap<String, Vec<String>> {
    let me = doc
        .get("url")
        .and_then(Value::as_str)
        .unwrap_or("(this descriptor)")
        .to_string();
    let mut graph: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for s in select(doc, "/skills/*/depends/*/uri") {
        if let Some(u) = s.as_str().filter(|u| is_agent_scheme(u)) {
            graph.entry(me.clone()).or_default().push(u.to_string());
        }
    }
    graph
}

fn depends_cycle(cx: &mut Cx<'_>) {
    for p in check_depends_graph(&depends_graph(cx.doc), DEPENDS_MAX_DEPTH) {
        if let DependsProblem::Cycle(c) = p {
            cx.fail(
                "/skills",
                format!("depends graph has a cycle: {}", c.join(" -> ")),
            );
        }
    }
}

const TRANSPORT_KEYS: [&str; 7] = ["endpoint", "https", "wss", "grpc", "mqtt", "local", "unix"];

fn transport_not_empty(v: &Value) -> bool {
    v.as_object()
        .is_none_or(|t| TRANSPORT_KEYS.iter().any(|k| t.contains_key(*k)))
}

/// draft-narvaneni-agent-uri-03 section 7.1.2: each transport value is "a URI appropriate to
/// that transport" (section 6.2).
fn transport_scheme(cx: &mut Cx<'_>) {
    let key = cx.key().into_owned();
    if !TRANSPORT_KEYS.contains(&key.as_str()) {
        return;
    }
    let Some(uri) = cx.val.as_str() else {
        cx.fail_as(
            "json/type",
            "",
            format!("transport.{key} must be a URI string"),
        );
        return;
    };
    let scheme = uri_scheme(uri);
    let allowed: &[&str] = match key.as_str() {
        "https" => &["https", "agent+https"],
        "wss" => &["wss", "agent+wss"],
        "grpc" => &["grpc", "grpcs", "https", "agent+grpc"],
        "mqtt" => &["mqtt", "mqtts", "agent+mqtt"],
        "local" => &["agent+local"],
        "unix" => &["unix", "agent+unix"],
        _ => &[],
    };
    // transport.unix may be a bare socket path (section 6.2.6 example).
    let unix_path = key == "unix" && uri.starts_with('/');
    let fits = match (&scheme, key.as_str()) {
        (_, "endpoint") => scheme.is_some(),
        (Some(s), _) => allowed.contains(&s.as_str()),
        (None, _) => unix_path,
    };
    if !fits {
        cx.fail(
            "",
            format!(
                "transport.{key} {} is not a {key} URI",
                crate::text::quoted(uri)
            ),
        );
    }
}

fn https_url(v: &Value) -> bool {
    v.as_str()
        .is_some_and(|u| uri_scheme(u).as_deref() == Some("https") && uri_host(u).is_some())
}

/// An `agents.json` entry: an absolute `https` URL, or a relative
/// reference, which resolves against the registry's own URL (RFC 3986
/// section 5.2), itself `https` by draft-narvaneni-agent-uri-03 section 5.1 step 1, so it
/// stays on the registry's HTTPS origin or path. A network-path reference
/// (`//host/...`) keeps the `https` scheme too, but names another host:
/// it must then name one (the host rules apply to it as to any entry).
fn https_or_relative_url(v: &Value) -> bool {
    v.as_str().is_some_and(|u| match uri_scheme(u) {
        Some(_) => https_url(v),
        None => !u.is_empty(),
    })
}

fn major_minor(v: &Value) -> bool {
    v.as_str().is_some_and(|v| {
        v.split_once('.').is_some_and(|(a, b)| {
            !a.is_empty() && !b.is_empty() && a.bytes().chain(b.bytes()).all(|c| c.is_ascii_digit())
        })
    })
}

fn awp_domain(cx: &mut Cx<'_>) {
    if let Some(d) = cx.val.as_str() {
        let u = format!("https://{d}/");
        cx.endpoint("", &u);
    }
}

/// AWP v0.2 section 5.5: `endpoint` is required for transport and tool
/// protocols (the registered a2a, mcp and acp).
fn awp_protocol_endpoint(cx: &mut Cx<'_>) {
    if ["a2a", "mcp", "acp"].contains(&&*cx.key())
        && cx.val.is_object()
        && !cx.val.get("endpoint").is_some_and(Value::is_string)
    {
        let k = cx.key().into_owned();
        cx.fail(
            "/endpoint",
            format!(
                "protocol {} is a transport or tool protocol and needs an endpoint",
                crate::text::quoted(&k)
            ),
        );
    }
}

fn awp_action_endpoint(cx: &mut Cx<'_>) {
    let Some(a) = cx.val.as_object() else { return };
    if a.contains_key("via") {
        return;
    }
    for k in ["endpoint", "method"] {
        if !a.contains_key(k) {
            cx.fail(
                &format!("/{k}"),
                format!("an action without via requires {k}"),
            );
        }
    }
}

fn awp_via_declared(cx: &mut Cx<'_>) {
    if let Some(via) = cx.val.as_str() {
        if cx.doc.get("protocols").is_none_or(|p| p.get(via).is_none()) {
            cx.fail(
                "",
                format!(
                    "via {} names no protocol declared in protocols",
                    crate::text::quoted(via)
                ),
            );
        }
    }
}

/// Whether `id` names an action of the document (the set is built once).
fn awp_is_action(cx: &mut Cx<'_>, id: &str) -> bool {
    let doc = cx.doc;
    cx.l.action_ids
        .get_or_insert_with(|| {
            select(doc, "/actions/*/id")
                .into_iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .contains(id)
}

fn awp_action_id_unique(cx: &mut Cx<'_>) {
    duplicates_at(cx, "actions", "id", "action id");
}

/// An action id named elsewhere (auth, dependencies, agent_status) exists.
fn awp_known_action(cx: &mut Cx<'_>) {
    if let Some(id) = cx.val.as_str() {
        if !awp_is_action(cx, id) {
            cx.fail(
                "",
                format!(
                    "{} is not the id of a declared action",
                    crate::text::quoted(id)
                ),
            );
        }
    }
}

/// A key of `dependencies` is an action id.
fn awp_known_action_key(cx: &mut Cx<'_>) {
    let k = cx.key().into_owned();
    if !awp_is_action(cx, &k) {
        cx.fail(
            "",
            format!(
                "{} is not the id of a declared action",
                crate::text::quoted(&k)
            ),
        );
    }
}

fn awp_dependency_cycle(cx: &mut Cx<'_>) {
    let Some(Value::Object(deps)) = cx.doc.get("dependencies") else {
        return;
    };
    let graph: BTreeMap<String, Vec<String>> = deps
        .iter()
        .map(|(k, v)| {
            let pre = v
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            (k.clone(), pre)
        })
        .collect();
    for p in check_depends_graph(&graph, usize::MAX) {
        if let DependsProblem::Cycle(c) = p {
            cx.fail(
                "/dependencies",
                format!(
                    "prerequisites form a cycle, so no action in it can run: {}",
                    c.join(" -> ")
                ),
            );
        }
    }
}

/// AWP v0.2 section 14: a synthetic file declares its origin.
fn awp_synthetic(cx: &mut Cx<'_>) {
    if cx.val.get("source").and_then(Value::as_str) != Some("synthetic") {
        return;
    }
    let o = cx.val;
    if !o.get("generated_by").is_some_and(non_empty_string) {
        cx.fail(
            "/generated_by",
            "a synthetic file MUST declare generated_by (a non-empty string)".into(),
        );
    }
    if !o
        .get("confidence")
        .and_then(Value::as_f64)
        .is_some_and(|c| (0.0..=1.0).contains(&c))
    {
        cx.fail(
            "/confidence",
            "a synthetic file MUST declare confidence, a number from 0 to 1".into(),
        );
    }
    if !o
        .get("last_verified")
        .and_then(Value::as_str)
        .is_some_and(is_rfc3339)
    {
        cx.fail(
            "/last_verified",
            "a synthetic file MUST declare last_verified, an RFC 3339 date-time".into(),
        );
    }
}

/// RFC 3339 section 5.6 `date-time`, by shape.
pub fn is_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    let d = |r: std::ops::Range<usize>| b.get(r).is_some_and(|x| x.iter().all(u8::is_ascii_digit));
    if !(b.len() >= 20
        && d(0..4)
        && b[4] == b'-'
        && d(5..7)
        && b[7] == b'-'
        && d(8..10)
        && matches!(b[10], b'T' | b't')
        && d(11..13)
        && b[13] == b':'
        && d(14..16)
        && b[16] == b':'
        && d(17..19))
    {
        return false;
    }
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return false;
        }
        rest = &frac[n..];
    }
    match rest.as_bytes() {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => [h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit()),
        _ => false,
    }
}

fn non_empty_string(v: &Value) -> bool {
    v.as_str().is_some_and(|s| !s.trim().is_empty())
}

fn woa_version(cx: &mut Cx<'_>) {
    if cx.val.get("woa_version").and_then(Value::as_str) != Some("1") {
        cx.fail(
            "/woa_version",
            "woa_version MUST be the string \"1\"".into(),
        );
    }
}

fn woa_agent_id(v: &Value) -> bool {
    v.as_str().is_some_and(|id| {
        !id.is_empty()
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    })
}

fn woa_agent_id_unique(cx: &mut Cx<'_>) {
    duplicates_at(cx, "agents", "id", "agent id");
}

fn woa_transport_declared(cx: &mut Cx<'_>) {
    if let Some(name) = cx.val.as_str() {
        if cx
            .doc
            .get("transports")
            .is_none_or(|t| t.get(name).is_none())
        {
            cx.fail(
                "",
                format!(
                    "transport {} is not a key of the top-level transports object",
                    crate::text::quoted(name)
                ),
            );
        }
    }
}

fn woa_private_name(cx: &mut Cx<'_>) {
    let k = cx.key().into_owned();
    if !matches!(k.as_str(), "rest" | "mcp") && !k.contains('.') {
        cx.fail(
            "",
            format!(
                "private transport {} MUST use a reverse DNS prefix such as \"com.example.{k}\"",
                crate::text::quoted(&k)
            ),
        );
    }
}

/// The URLs a private transport configuration holds are endpoints too.
fn woa_private_endpoints(cx: &mut Cx<'_>) {
    if matches!(&*cx.key(), "rest" | "mcp") {
        return;
    }
    let Some(c) = cx.val.as_object() else { return };
    let urls: Vec<(String, String)> = c
        .iter()
        .filter_map(|(k, v)| {
            v.as_str()
                .filter(|u| u.contains("://"))
                .map(|u| (json::pointer(std::slice::from_ref(k)), u.to_string()))
        })
        .collect();
    for (p, u) in urls {
        cx.endpoint(&p, &u);
    }
}

fn ulid(v: &Value) -> bool {
    const CROCKFORD: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    // 26 characters of Crockford Base32, at most 7ZZ...Z (128 bits).
    v.as_str().is_some_and(|id| {
        id.len() == 26 && id.bytes().all(|b| CROCKFORD.contains(&b)) && id.as_bytes()[0] <= b'7'
    })
}

fn capability_id(v: &Value) -> bool {
    v.as_str().is_some_and(|id| {
        let b = id.as_bytes();
        !b.is_empty()
            && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
            && b.iter()
                .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || b"._-".contains(&c))
    })
}

/// the AgentCard draft "endpoint": url is a URI consistent with the protocol (an
/// https endpoint begins with https://); a network endpoint's host is
/// checked like every advertised endpoint.
fn agentcard_endpoint_url(cx: &mut Cx<'_>) {
    let Some(u) = cx.val.as_str() else { return };
    let proto = cx
        .doc
        .get("endpoint")
        .and_then(|e| e.get("protocol"))
        .and_then(Value::as_str);
    let Some(scheme) = uri_scheme(u) else {
        cx.fail(
            "",
            format!(
                "endpoint.url {} is not a URI (RFC 3986)",
                crate::text::quoted(u)
            ),
        );
        return;
    };
    let consistent = match proto {
        Some("http") => scheme == "http",
        Some("https") => scheme == "https",
        Some("grpc") => matches!(scheme.as_str(), "grpc" | "grpcs" | "https" | "http"),
        _ => true,
    };
    if !consistent {
        cx.fail(
            "",
            format!(
                "endpoint.url {} is not consistent with protocol {}",
                crate::text::quoted(u),
                crate::text::quoted(proto.unwrap_or(""))
            ),
        );
    }
    if proto != Some("stdio") {
        cx.endpoint("", u);
    }
}

/// k_B * 300 K * ln 2, rounded as the AgentCard draft states it.
const LANDAUER_300K: f64 = 2.854e-21;

fn landauer(v: &Value) -> bool {
    v.as_f64().is_none_or(|j| j == 0.0 || j >= LANDAUER_300K)
}

fn non_negative(v: &Value) -> bool {
    v.as_f64().is_some_and(|x| x >= 0.0)
}

fn unit_interval(v: &Value) -> bool {
    v.as_f64().is_some_and(|x| (0.0..=1.0).contains(&x))
}

fn conformance_level(v: &Value) -> bool {
    v.as_u64().is_some_and(|n| n <= 3)
}

fn aidip_endpoint_tls(cx: &mut Cx<'_>) {
    let Some(e) = cx.val.as_str() else { return };
    if e.contains("://") {
        if uri_scheme(e).as_deref() != Some("https") {
            cx.fail(
                "",
                format!(
                    "endpoint {} is not https: all invocation traffic MUST be protected with TLS",
                    crate::text::quoted(e)
                ),
            );
        }
        cx.endpoint("", e);
    }
}

fn aidip_io(cx: &mut Cx<'_>) {
    let o = cx.val;
    if o.get("operations").is_none()
        && !(o.get("inputs").is_some_and(Value::is_object)
            && o.get("outputs").is_some_and(Value::is_object))
    {
        cx.fail(
            "/operations",
            "each agent MUST describe its input and output formats: operations, or top-level inputs and outputs".into(),
        );
    }
}

fn a2a_interfaces(cx: &mut Cx<'_>) {
    let o = cx.val;
    if o.get("supportedInterfaces").is_none() && !o.get("url").is_some_and(Value::is_string) {
        cx.fail(
            "/supportedInterfaces",
            "a card needs supportedInterfaces (v1.0) or url (v0.3)".into(),
        );
    }
}

fn base64url(v: &Value) -> bool {
    v.as_str()
        .is_some_and(|s| !s.is_empty() && crate::b64::is_url_alphabet(s))
}

// ---- the rule table ----

const AG: Format = Format::AgentDescriptor;
const REG: Format = Format::AgentsRegistry;
const AWP: Format = Format::Awp;
const WOA: Format = Format::Woa;
const CARD: Format = Format::AgentCard;
const AIDIP: Format = Format::Aidip;
const A2A: Format = Format::A2a;

/// An error row.
pub(super) const fn e(
    format: Format,
    pointer: &'static str,
    check: Check,
    code: &'static str,
    section: &'static str,
) -> Rule {
    Rule {
        format,
        pointer,
        check,
        code,
        severity: Severity::Error,
        section,
    }
}
/// A warning row.
pub(super) const fn w(
    format: Format,
    pointer: &'static str,
    check: Check,
    code: &'static str,
    section: &'static str,
) -> Rule {
    Rule {
        format,
        pointer,
        check,
        code,
        severity: Severity::Warning,
        section,
    }
}

use Check::{Custom, Endpoint, NonEmpty, OneOf, Recommended, Required, Schema, Type};
const STR: Ty = Ty::String;
const OBJ: Ty = Ty::Object;
const ARR: Ty = Ty::Array;
const BOOL: Ty = Ty::Bool;
const NUM: Ty = Ty::Number;
const STRS: Ty = Ty::StringArray;
const J: &str = "json/type";

const S001_42: &str = "draft-narvaneni-agent-uri-03 section 4.2";
const S001_51: &str = "draft-narvaneni-agent-uri-03 section 5.1";
const S001_52: &str = "draft-narvaneni-agent-uri-03 section 5.2";
const S001_711: &str = "draft-narvaneni-agent-uri-03 section 7.1.1";
const S001_712: &str = "draft-narvaneni-agent-uri-03 section 7.1.2";
const S001_713: &str = "draft-narvaneni-agent-uri-03 section 7.1.3";
const S001_714: &str = "draft-narvaneni-agent-uri-03 section 7.1.4";
const S001_E: &str = "draft-narvaneni-agent-uri-03 Appendix E";
const S002_5: &str = "AWP v0.2 sections 5, 15";
const S002_55: &str = "AWP v0.2 section 5.5";
const S002_6: &str = "AWP v0.2 section 6";
const S002_7: &str = "AWP v0.2 section 7";
const S002_9: &str = "AWP v0.2 section 9";
const S002_10: &str = "AWP v0.2 section 10";
const S002_11: &str = "AWP v0.2 section 11";
const S002_13: &str = "AWP v0.2 section 13";
const S002_14: &str = "AWP v0.2 section 14";
const S000_4: &str = "the Web of Agents draft section 4";
const S000_41: &str = "the Web of Agents draft section 4.1";
const S000_42: &str = "the Web of Agents draft section 4.2";
const S000_431: &str = "the Web of Agents draft section 4.3.1";
const S000_432: &str = "the Web of Agents draft section 4.3.2";
const S000_433: &str = "the Web of Agents draft section 4.3.3";
const S003_F: &str = "the AgentCard draft \"AgentCard Fields\"";
const S003_V: &str = "the AgentCard draft \"Validation Rules\"";
const S003_C: &str = "the AgentCard draft \"capabilities\"";
const S003_E: &str = "the AgentCard draft \"endpoint\"";
const S003_G: &str = "the AgentCard draft \"goal_subscriptions\"";
const S004_M: &str = "AIDIP \"Agent Metadata Specification\"";
const S004_S: &str = "AIDIP \"Security Considerations\"";
const A2A_C: &str = "A2A v1.0 section 4.4.1 AgentCard";
const A2A_I: &str = "A2A v1.0 AgentInterface";
const A2A_P: &str = "A2A v1.0 AgentProvider";
const A2A_S: &str = "A2A v1.0 AgentSkill";
const A2A_SIG: &str = "A2A v1.0 AgentCardSignature (RFC 7515 section 7.2.1)";

/// Every rule `lint` checks, one row each: format, pointer pattern, check,
/// code, seed section. `docs/formats.md` lists them with the MUSTs no static
/// lint can check.
#[rustfmt::skip]
pub const RULES: &[Rule] = &[
    // agent:// descriptor (draft-narvaneni-agent-uri-03 section 7.1)
    e(AG, "/name", Required(STR), "agent/required", S001_711),
    e(AG, "/version", Required(STR), "agent/required", S001_711),
    e(AG, "/version", Check::Value(semver_value, "SemVer 2.0.0"), "agent/version", S001_711),
    e(AG, "/skills", Required(ARR), "agent/required", S001_711),
    e(AG, "/skills", NonEmpty, "agent/skills-empty", S001_711),
    w(AG, "/url", Check::Value(agent_uri_or_other, "an agent:// URI"), "agent/url", S001_712),
    e(AG, "/url", Custom(agent_uri), "agent/uri", S001_42),
    e(AG, "/description", Type(STR), J, S001_712),
    e(AG, "/transport", Type(OBJ), J, S001_712),
    e(AG, "/transport", Check::Value(transport_not_empty, "an object with endpoint or one of https, wss, grpc, mqtt, local, unix"), "agent/transport-empty", S001_712),
    e(AG, "/transport/*", Custom(transport_scheme), "agent/transport-scheme", "draft-narvaneni-agent-uri-03 sections 6.2, 7.1.2"),
    e(AG, "/transport/endpoint", Endpoint, "addr/internal", S001_52),
    e(AG, "/transport/https", Endpoint, "addr/internal", S001_52),
    e(AG, "/transport/wss", Endpoint, "addr/internal", S001_52),
    e(AG, "/transport/grpc", Endpoint, "addr/internal", S001_52),
    e(AG, "/transport/mqtt", Endpoint, "addr/internal", S001_52),
    e(AG, "/authentication", Type(OBJ), J, S001_712),
    e(AG, "/provider", Type(OBJ), J, S001_712),
    e(AG, "/provider/organization", Required(STR), "agent/provider", S001_712),
    e(AG, "/provider/url", Endpoint, "addr/internal", S001_52),
    e(AG, "/conformanceLevel", Check::Value(conformance_level, "an integer from 0 to 3"), "agent/conformance-level", "draft-narvaneni-agent-uri-03 sections 3.1, 7.1.2"),
    e(AG, "/status", OneOf(&["active", "deprecated", "experimental"]), "agent/status", S001_713),
    e(AG, "/supportedVersions", Type(OBJ), J, S001_713),
    e(AG, "/documentationUrl", Endpoint, "addr/internal", S001_52),
    e(AG, "/environment", Type(STR), J, S001_713),
    e(AG, "/interactionModel", Type(STRS), J, S001_713),
    e(AG, "/interactionModel/*", OneOf(&["agent2agent", "mcp", "fipa-acl", "openapi"]), "agent/interaction-model", "draft-narvaneni-agent-uri-03 sections 7.1.3, 12.5"),
    e(AG, "/skills/*", Type(OBJ), J, S001_714),
    e(AG, "/skills/*/id", Required(STR), "agent/skill-required", S001_714),
    e(AG, "/skills/*/name", Required(STR), "agent/skill-required", S001_714),
    e(AG, "/skills/*/description", Required(STR), "agent/skill-required", S001_714),
    w(AG, "", Custom(skill_id_unique), "agent/skill-id-duplicate", S001_714),
    e(AG, "/skills/*/version", Check::Value(semver_value, "SemVer 2.0.0"), "agent/version", S001_714),
    e(AG, "/skills/*/tags", Type(STRS), J, S001_714),
    e(AG, "/skills/*/input", Schema, "agent/schema", S001_714),
    e(AG, "/skills/*/output", Schema, "agent/schema", S001_714),
    e(AG, "/skills/*/contentTypes", Type(OBJ), J, S001_714),
    e(AG, "/skills/*/streaming", Type(BOOL), J, S001_714),
    e(AG, "/skills/*/idempotent", Type(BOOL), J, S001_714),
    e(AG, "/skills/*/status", OneOf(&["active", "deprecated", "experimental"]), "agent/status", S001_714),
    e(AG, "/skills/*/depends", Type(ARR), J, S001_714),
    e(AG, "/skills/*/depends/*", Check::Value(depends_entry, "an object with an agent:// uri"), "agent/depends-uri", S001_714),
    e(AG, "/skills/*/depends/*/uri", Custom(agent_uri), "agent/uri", S001_42),
    e(AG, "", Custom(depends_cycle), "agent/depends-cycle", S001_714),
    // agent:// registry (draft-narvaneni-agent-uri-03 section 5.1)
    e(REG, "/agents", Required(OBJ), "registry/agents", S001_51),
    e(REG, "/agents", NonEmpty, "registry/agents-empty", S001_E),
    e(REG, "/agents/*", Type(STR), J, S001_51),
    e(REG, "/agents/*", Check::Value(https_or_relative_url, "an https URL (or a reference relative to the registry's https URL): resolvers MUST restrict fetches to HTTPS"), "registry/url-https", S001_52),
    e(REG, "/agents/*", Endpoint, "addr/internal", S001_52),
    // AWP v0.2
    e(AWP, "/awp_version", Required(STR), "awp/required", S002_5),
    e(AWP, "/awp_version", Check::Value(major_minor, "MAJOR.MINOR"), "awp/version", "AWP v0.2 section 4"),
    e(AWP, "/domain", Required(STR), "awp/required", S002_5),
    e(AWP, "/domain", Custom(awp_domain), "addr/internal", S001_52),
    e(AWP, "/intent", Required(STR), "awp/required", S002_5),
    e(AWP, "/actions", Required(ARR), "awp/required", S002_5),
    e(AWP, "/protocols", Type(OBJ), J, S002_55),
    e(AWP, "/protocols/*", Type(OBJ), J, S002_55),
    e(AWP, "/protocols/*/version", Required(STR), "awp/protocol-version", S002_55),
    e(AWP, "/protocols/*", Custom(awp_protocol_endpoint), "awp/protocol-endpoint", S002_55),
    e(AWP, "/protocols/*/endpoint", Endpoint, "addr/internal", S001_52),
    e(AWP, "/protocols/*/agent_card", Endpoint, "addr/internal", S001_52),
    e(AWP, "/capabilities", Type(OBJ), J, S002_6),
    e(AWP, "/capabilities/streaming", Type(BOOL), J, S002_6),
    e(AWP, "/capabilities/batch_actions", Type(BOOL), J, S002_6),
    e(AWP, "/capabilities/webhooks", Type(BOOL), J, S002_6),
    e(AWP, "/capabilities/idempotency", Type(BOOL), J, S002_6),
    e(AWP, "/capabilities/pagination", OneOf(&["cursor", "offset", "page", "none"]), "awp/pagination", S002_6),
    e(AWP, "/auth", Type(OBJ), J, S002_7),
    e(AWP, "/auth/type", OneOf(&["oauth2", "api_key", "bearer", "none"]), "awp/auth-type", S002_7),
    e(AWP, "/auth/required_for", Type(STRS), J, S002_7),
    e(AWP, "/auth/optional_for", Type(STRS), J, S002_7),
    e(AWP, "/auth/required_for/*", Custom(awp_known_action), "awp/action-unknown", S002_7),
    e(AWP, "/auth/optional_for/*", Custom(awp_known_action), "awp/action-unknown", S002_7),
    e(AWP, "/entities", Type(OBJ), J, "AWP v0.2 section 8"),
    e(AWP, "/actions/*", Type(OBJ), J, S002_9),
    e(AWP, "/actions/*/id", Required(STR), "awp/action-required", S002_9),
    e(AWP, "", Custom(awp_action_id_unique), "awp/action-id-duplicate", S002_9),
    e(AWP, "/actions/*/description", Required(STR), "awp/action-required", S002_9),
    e(AWP, "/actions/*/auth_required", Required(BOOL), "awp/action-required", S002_9),
    e(AWP, "/actions/*/inputs", Required(OBJ), "awp/action-required", S002_9),
    e(AWP, "/actions/*/outputs", Required(OBJ), "awp/action-required", S002_9),
    e(AWP, "/actions/*/inputs/*", Type(OBJ), J, S002_9),
    e(AWP, "/actions/*/inputs/*/type", Required(STR), "awp/input-type", S002_9),
    e(AWP, "/actions/*/inputs/*/required", Type(BOOL), J, S002_9),
    e(AWP, "/actions/*/inputs/*/options", Type(ARR), J, S002_9),
    e(AWP, "/actions/*", Custom(awp_action_endpoint), "awp/action-endpoint", S002_9),
    e(AWP, "/actions/*/method", OneOf(&["GET", "POST", "PUT", "DELETE", "PATCH"]), "awp/method", S002_9),
    e(AWP, "/actions/*/via", Type(STR), J, S002_9),
    e(AWP, "/actions/*/via", Custom(awp_via_declared), "awp/via-undeclared", S002_55),
    e(AWP, "/actions/*/operation", Type(STR), J, S002_9),
    e(AWP, "/actions/*/endpoint", Endpoint, "addr/internal", S001_52),
    e(AWP, "/actions/*/idempotency", Type(OBJ), J, S002_9),
    e(AWP, "/actions/*/execution_model", OneOf(&["sync", "async"]), "awp/execution-model", S002_9),
    e(AWP, "/actions/*/sensitivity", OneOf(&["standard", "destructive", "irreversible"]), "awp/sensitivity", S002_9),
    e(AWP, "/actions/*/requires_human_confirmation", Type(BOOL), J, S002_9),
    e(AWP, "/actions/*/reversible", Type(BOOL), J, S002_9),
    e(AWP, "/errors", Type(OBJ), J, S002_10),
    e(AWP, "/errors/*", Type(OBJ), J, S002_10),
    e(AWP, "/errors/*/recovery", Required(STR), "awp/error-recovery", S002_10),
    e(AWP, "/errors/*/recovery", Check::Value(non_empty_string, "a non-empty instruction"), "awp/error-recovery", S002_10),
    e(AWP, "/dependencies", Type(OBJ), J, S002_11),
    e(AWP, "/dependencies/*", Type(STRS), J, S002_11),
    e(AWP, "/dependencies/*", Custom(awp_known_action_key), "awp/action-unknown", S002_11),
    e(AWP, "/dependencies/*/*", Custom(awp_known_action), "awp/action-unknown", S002_11),
    e(AWP, "", Custom(awp_dependency_cycle), "awp/dependency-cycle", S002_11),
    e(AWP, "/agent_hints", Type(OBJ), J, "AWP v0.2 section 12"),
    e(AWP, "/agent_status", Type(OBJ), J, S002_13),
    e(AWP, "/agent_status/operational", Type(BOOL), J, S002_13),
    e(AWP, "/agent_status/degraded_actions", Type(STRS), J, S002_13),
    e(AWP, "/agent_status/degraded_actions/*", Custom(awp_known_action), "awp/action-unknown", S002_13),
    e(AWP, "", Custom(awp_synthetic), "awp/synthetic-origin", S002_14),
    // the Web of Agents draft
    e(WOA, "", Custom(woa_version), "woa/version", S000_4),
    e(WOA, "/transports", Required(OBJ), "woa/required", S000_4),
    e(WOA, "/agents", Required(ARR), "woa/required", S000_4),
    e(WOA, "/transports/*", Type(OBJ), J, "the Web of Agents draft section 4.3"),
    e(WOA, "/transports/rest/base", Required(STR), "woa/rest-base-https", S000_431),
    e(WOA, "/transports/rest/base", Check::Value(https_url, "an absolute https URL"), "woa/rest-base-https", S000_431),
    e(WOA, "/transports/rest/base", Endpoint, "addr/internal", "the Web of Agents draft section 8.2"),
    e(WOA, "/transports/rest/invoke_path", Required(STR), "woa/rest-invoke-path", S000_431),
    e(WOA, "/transports/rest/invoke_path", Check::Value(|v| v.as_str().is_some_and(|p| p.starts_with('/')), "an absolute path beginning with \"/\""), "woa/rest-invoke-path", S000_431),
    e(WOA, "/transports/mcp/server", Required(STR), "woa/mcp-required", S000_432),
    e(WOA, "/transports/mcp/tool_namespace", Required(STR), "woa/mcp-required", S000_432),
    e(WOA, "/transports/mcp/tool_field", Required(STR), "woa/mcp-required", S000_432),
    e(WOA, "/transports/mcp/server", Endpoint, "addr/internal", "the Web of Agents draft section 8.2"),
    e(WOA, "/transports/*", Custom(woa_private_name), "woa/private-transport-name", S000_433),
    e(WOA, "/transports/*", Custom(woa_private_endpoints), "addr/internal", "the Web of Agents draft section 8.2"),
    e(WOA, "/agents/*", Type(OBJ), J, S000_41),
    e(WOA, "/agents/*/id", Required(STR), "woa/agent-required", S000_41),
    e(WOA, "/agents/*/id", Check::Value(woa_agent_id, "1*( ALPHA / DIGIT / \"-\" / \"_\" )"), "woa/agent-id", S000_41),
    e(WOA, "", Custom(woa_agent_id_unique), "woa/agent-id-duplicate", S000_41),
    e(WOA, "/agents/*/name", Required(STR), "woa/agent-required", S000_41),
    e(WOA, "/agents/*/description", Required(STR), "woa/agent-required", S000_41),
    e(WOA, "/agents/*/inputs", Required(OBJ), "woa/agent-required", S000_41),
    e(WOA, "/agents/*/outputs", Required(OBJ), "woa/agent-required", S000_41),
    e(WOA, "/agents/*/inputs", Schema, "woa/schema", S000_42),
    e(WOA, "/agents/*/outputs", Schema, "woa/schema", S000_42),
    e(WOA, "/agents/*/transports", Required(ARR), "woa/agent-required", S000_41),
    e(WOA, "/agents/*/transports/*", Type(STR), J, S000_41),
    e(WOA, "/agents/*/transports/*", Custom(woa_transport_declared), "woa/transport-undeclared", S000_41),
    e(WOA, "/agents/*/version", Type(STR), J, S000_41),
    e(WOA, "/agents/*/capabilities", Type(STRS), J, S000_41),
    e(WOA, "/agents/*/operations", Type(ARR), J, S000_41),
    e(WOA, "/agents/*/operations/*", Type(OBJ), J, S000_41),
    e(WOA, "/agents/*/operations/*/name", Required(STR), "woa/operation-required", S000_41),
    e(WOA, "/agents/*/operations/*/description", Required(STR), "woa/operation-required", S000_41),
    e(WOA, "/agents/*/operations/*/inputs", Schema, "woa/schema", S000_42),
    e(WOA, "/agents/*/operations/*/outputs", Schema, "woa/schema", S000_42),
    // the AgentCard draft
    e(CARD, "/agent_id", Required(STR), "agentcard/required", S003_F),
    e(CARD, "/agent_id", Check::Value(ulid, "a ULID: 26 characters of Crockford Base32 [0-9A-HJKMNP-TV-Z], at most 7ZZZZZZZZZZZZZZZZZZZZZZZZZ"), "agentcard/agent-id", S003_V),
    e(CARD, "/name", Required(STR), "agentcard/required", S003_F),
    e(CARD, "/version", Required(STR), "agentcard/required", S003_F),
    e(CARD, "/version", Check::Value(semver_value, "SemVer 2.0.0"), "agentcard/version", S003_V),
    e(CARD, "/capabilities", Required(ARR), "agentcard/required", S003_F),
    e(CARD, "/capabilities", NonEmpty, "agentcard/capabilities-empty", S003_V),
    e(CARD, "/capabilities/*", Type(OBJ), J, S003_C),
    e(CARD, "/capabilities/*/id", Required(STR), "agentcard/required", S003_C),
    e(CARD, "/capabilities/*/id", Check::Value(capability_id, "an id matching ^[a-z0-9][a-z0-9._-]*$"), "agentcard/capability-id", S003_V),
    e(CARD, "/capabilities/*/description", Type(STR), J, S003_C),
    e(CARD, "/capabilities/*/tags", Type(STRS), J, S003_C),
    e(CARD, "/capabilities/*/input_schema", Schema, "agentcard/schema", S003_C),
    e(CARD, "/capabilities/*/output_schema", Schema, "agentcard/schema", S003_C),
    e(CARD, "/endpoint", Required(OBJ), "agentcard/required", S003_F),
    e(CARD, "/endpoint/protocol", Required(STR), "agentcard/required", S003_E),
    e(CARD, "/endpoint/protocol", OneOf(&["http", "https", "grpc", "stdio", "mcp"]), "agentcard/endpoint-protocol", S003_V),
    e(CARD, "/endpoint/url", Required(STR), "agentcard/required", S003_E),
    e(CARD, "/endpoint/url", Custom(agentcard_endpoint_url), "agentcard/endpoint-url", S003_E),
    e(CARD, "/endpoint/auth", Type(OBJ), J, S003_E),
    e(CARD, "/endpoint/auth/scheme", OneOf(&["none", "bearer", "api_key", "oauth2", "mtls"]), "agentcard/auth-scheme", S003_E),
    e(CARD, "/pricing", Type(OBJ), J, "the AgentCard draft \"pricing\""),
    e(CARD, "/pricing/base_cost_joules", Type(NUM), J, "the AgentCard draft \"pricing\""),
    e(CARD, "/pricing/base_cost_joules", Check::Value(landauer, "0 or at least the Landauer limit 2.854e-21 J at 300 K"), "agentcard/landauer", S003_V),
    e(CARD, "/pricing/per_token_joules", Check::Value(non_negative, "a non-negative number"), "agentcard/per-token", S003_V),
    e(CARD, "/metadata", Type(OBJ), J, "the AgentCard draft \"metadata\""),
    e(CARD, "/metadata/pacr:trust_tier", OneOf(&["untrusted", "basic", "established", "verified", "banned"]), "agentcard/trust-tier", S003_V),
    e(CARD, "/goal_subscriptions", Type(ARR), J, S003_G),
    e(CARD, "/goal_subscriptions/*", Type(OBJ), J, S003_G),
    e(CARD, "/goal_subscriptions/*/goal_id", Required(STR), "agentcard/goal-required", S003_G),
    e(CARD, "/goal_subscriptions/*/description", Type(STR), J, S003_G),
    e(CARD, "/goal_subscriptions/*/priority", Check::Value(unit_interval, "a number in [0, 1]"), "agentcard/goal-priority", S003_G),
    // AIDIP
    e(AIDIP, "/name", Required(STR), "aidip/required", S004_M),
    e(AIDIP, "/description", Required(STR), "aidip/required", S004_M),
    e(AIDIP, "/endpoint", Required(STR), "aidip/required", S004_M),
    e(AIDIP, "/endpoint", Custom(aidip_endpoint_tls), "aidip/endpoint-tls", S004_S),
    w(AIDIP, "/id", Recommended, "aidip/recommended", S004_M),
    w(AIDIP, "/version", Recommended, "aidip/recommended", S004_M),
    w(AIDIP, "/publisher", Recommended, "aidip/recommended", S004_M),
    w(AIDIP, "/capabilities", Recommended, "aidip/recommended", S004_M),
    e(AIDIP, "/id", Type(STR), J, S004_M),
    e(AIDIP, "/version", Type(STR), J, S004_M),
    e(AIDIP, "/publisher", Type(STR), J, S004_M),
    e(AIDIP, "/capabilities", Type(STRS), J, S004_M),
    e(AIDIP, "/tags", Type(STRS), J, S004_M),
    e(AIDIP, "/supported_languages", Type(STRS), J, S004_M),
    e(AIDIP, "/status", Type(STR), J, S004_M),
    e(AIDIP, "/authentication", Type(OBJ), J, S004_M),
    e(AIDIP, "/authentication/type", Type(STR), J, S004_M),
    e(AIDIP, "/authentication/instructions", Type(STR), J, S004_M),
    e(AIDIP, "/authentication/scopes", Type(STRS), J, S004_M),
    e(AIDIP, "", Custom(aidip_io), "aidip/io", S004_M),
    e(AIDIP, "/inputs", Schema, "aidip/schema", S004_M),
    e(AIDIP, "/outputs", Schema, "aidip/schema", S004_M),
    e(AIDIP, "/operations", Type(ARR), J, S004_M),
    e(AIDIP, "/operations/*", Type(OBJ), J, S004_M),
    e(AIDIP, "/operations/*/name", Required(STR), "aidip/operation-required", S004_M),
    e(AIDIP, "/operations/*/description", Required(STR), "aidip/operation-required", S004_M),
    e(AIDIP, "/operations/*/inputs", Required(OBJ), "aidip/operation-required", S004_M),
    e(AIDIP, "/operations/*/outputs", Required(OBJ), "aidip/operation-required", S004_M),
    e(AIDIP, "/operations/*/inputs", Schema, "aidip/schema", S004_M),
    e(AIDIP, "/operations/*/outputs", Schema, "aidip/schema", S004_M),
    e(AIDIP, "/operations/*/examples", Type(ARR), J, S004_M),
    e(AIDIP, "/operations/*/examples/*", Type(OBJ), J, S004_M),
    // A2A Agent Card (A2A v1.0; v0.3 url accepted)
    e(A2A, "/name", Required(STR), "a2a/required", A2A_C),
    e(A2A, "/description", Required(STR), "a2a/required", A2A_C),
    e(A2A, "/version", Required(STR), "a2a/required", A2A_C),
    e(A2A, "/capabilities", Required(OBJ), "a2a/required", A2A_C),
    e(A2A, "/defaultInputModes", Required(STRS), "a2a/required", A2A_C),
    e(A2A, "/defaultOutputModes", Required(STRS), "a2a/required", A2A_C),
    e(A2A, "/skills", Required(ARR), "a2a/required", A2A_C),
    e(A2A, "", Custom(a2a_interfaces), "a2a/interface", A2A_C),
    e(A2A, "/supportedInterfaces", Type(ARR), J, A2A_C),
    e(A2A, "/supportedInterfaces", NonEmpty, "a2a/interface", A2A_C),
    e(A2A, "/supportedInterfaces/*", Type(OBJ), J, A2A_I),
    e(A2A, "/supportedInterfaces/*/url", Required(STR), "a2a/interface", A2A_I),
    e(A2A, "/supportedInterfaces/*/protocolBinding", Required(STR), "a2a/interface", A2A_I),
    e(A2A, "/supportedInterfaces/*/url", Endpoint, "addr/internal", S001_52),
    e(A2A, "/url", Endpoint, "addr/internal", S001_52),
    e(A2A, "/additionalInterfaces/*/url", Endpoint, "addr/internal", S001_52),
    e(A2A, "/documentationUrl", Endpoint, "addr/internal", S001_52),
    e(A2A, "/iconUrl", Endpoint, "addr/internal", S001_52),
    e(A2A, "/capabilities/streaming", Type(BOOL), J, "A2A v1.0 AgentCapabilities"),
    e(A2A, "/capabilities/pushNotifications", Type(BOOL), J, "A2A v1.0 AgentCapabilities"),
    e(A2A, "/capabilities/extendedAgentCard", Type(BOOL), J, "A2A v1.0 AgentCapabilities"),
    e(A2A, "/provider", Type(OBJ), J, A2A_P),
    e(A2A, "/provider/organization", Required(STR), "a2a/provider-required", A2A_P),
    e(A2A, "/provider/url", Required(STR), "a2a/provider-required", A2A_P),
    e(A2A, "/provider/url", Endpoint, "addr/internal", S001_52),
    e(A2A, "/skills/*", Type(OBJ), J, A2A_S),
    e(A2A, "/skills/*/id", Required(STR), "a2a/skill-required", A2A_S),
    e(A2A, "/skills/*/name", Required(STR), "a2a/skill-required", A2A_S),
    e(A2A, "/skills/*/description", Required(STR), "a2a/skill-required", A2A_S),
    e(A2A, "/skills/*/tags", Required(STRS), "a2a/skill-required", A2A_S),
    e(A2A, "/skills/*/examples", Type(STRS), J, A2A_S),
    e(A2A, "/skills/*/inputModes", Type(STRS), J, A2A_S),
    e(A2A, "/skills/*/outputModes", Type(STRS), J, A2A_S),
    e(A2A, "/signatures", Type(ARR), J, A2A_SIG),
    e(A2A, "/signatures/*", Type(OBJ), J, A2A_SIG),
    e(A2A, "/signatures/*/protected", Required(STR), "a2a/signature", A2A_SIG),
    e(A2A, "/signatures/*/signature", Required(STR), "a2a/signature", A2A_SIG),
    e(A2A, "/signatures/*/protected", Check::Value(base64url, "base64url without padding"), "a2a/signature-encoding", A2A_SIG),
    e(A2A, "/signatures/*/signature", Check::Value(base64url, "base64url without padding"), "a2a/signature-encoding", A2A_SIG),
    e(A2A, "/signatures/*/header", Type(OBJ), J, A2A_SIG),
];

/// The rules of one format.
pub fn rules_for(format: Format) -> impl Iterator<Item = &'static Rule> {
    super::all_rules().filter(move |r| r.format == format)
}

/// Semantic Versioning 2.0.0, exactly (numeric identifiers without leading
/// zeros, non-empty dot-separated identifiers).
pub fn is_semver(s: &str) -> bool {
    let (rest, build) = match s.split_once('+') {
        Some((r, b)) => (r, Some(b)),
        None => (s, None),
    };
    let (core, pre) = match rest.split_once('-') {
        Some((c, p)) => (c, Some(p)),
        None => (rest, None),
    };
    let numeric = |x: &str| {
        !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit()) && (x == "0" || !x.starts_with('0'))
    };
    let ident =
        |x: &str| !x.is_empty() && x.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    let core_ok = {
        let parts: Vec<&str> = core.split('.').collect();
        parts.len() == 3 && parts.iter().all(|p| numeric(p))
    };
    let pre_ok = pre.is_none_or(|p| {
        p.split('.')
            .all(|i| ident(i) && (!i.bytes().all(|b| b.is_ascii_digit()) || numeric(i)))
    });
    let build_ok = build.is_none_or(|b| b.split('.').all(ident));
    core_ok && pre_ok && build_ok
}

/// A problem in an agent:// depends graph (draft-narvaneni-agent-uri-03 section 7.1.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DependsProblem {
    /// A cycle, as the path of agent URIs that closes it.
    Cycle(Vec<String>),
    /// A chain longer than the bound, starting at this agent.
    TooDeep(String),
}

/// Check a depends graph (agent URI → the agent URIs its skills depend on)
/// for cycles, which tooling MUST reject, and for chains longer than
/// `max_depth` (16 RECOMMENDED), draft-narvaneni-agent-uri-03 section 7.1.4. Iterative DFS; each
/// cycle is reported once. A resolver that fetched several descriptors
/// passes the union of their edges.
pub fn check_depends_graph(
    graph: &BTreeMap<String, Vec<String>>,
    max_depth: usize,
) -> Vec<DependsProblem> {
    let mut problems = Vec::new();
    // 0 = unseen, 1 = on stack, 2 = done; depth = longest chain below.
    let mut state: BTreeMap<&str, u8> = BTreeMap::new();
    let mut depth: BTreeMap<&str, usize> = BTreeMap::new();
    let mut too_deep_reported = false;
    for start in graph.keys() {
        if state.get(start.as_str()).copied().unwrap_or(0) != 0 {
            continue;
        }
        let mut stack: Vec<(&str, usize)> = vec![(start.as_str(), 0)];
        state.insert(start.as_str(), 1);
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            let edges = graph.get(node).map(Vec::as_slice).unwrap_or(&[]);
            if *next < edges.len() {
                let child = edges[*next].as_str();
                *next += 1;
                match state.get(child).copied().unwrap_or(0) {
                    0 => {
                        state.insert(child, 1);
                        stack.push((child, 0));
                    }
                    1 => {
                        let from = stack.iter().position(|(n, _)| *n == child).unwrap_or(0);
                        let mut cycle: Vec<String> =
                            stack[from..].iter().map(|(n, _)| n.to_string()).collect();
                        cycle.push(child.to_string());
                        problems.push(DependsProblem::Cycle(cycle));
                    }
                    _ => {}
                }
            } else {
                let d = edges
                    .iter()
                    .map(|c| depth.get(c.as_str()).copied().unwrap_or(0) + 1)
                    .max()
                    .unwrap_or(0);
                depth.insert(node, d);
                state.insert(node, 2);
                stack.pop();
                if d > max_depth && !too_deep_reported {
                    too_deep_reported = true;
                    problems.push(DependsProblem::TooDeep(node.to_string()));
                }
            }
        }
    }
    problems
}

/// The maximum depends traversal depth draft-narvaneni-agent-uri-03 section 7.1.4 recommends.
pub const DEPENDS_MAX_DEPTH: usize = 16;

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// Elements and members selected by a `*` segment on this thread.
        pub(super) static CHILDREN: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// A catalog of `n` entries, each breaking several `/entries/*` rows.
    fn faulty_catalog(n: usize) -> Value {
        let entries: Vec<Value> = (0..n)
            .map(|i| {
                serde_json::json!({
                    "identifier": if i % 3 == 0 { Value::from(7) } else { Value::from(format!("urn:x:{}", i % 5)) },
                    "url": "https://a.example/x",
                    "data": {},
                    "tags": ["ok", 1],
                    "metadata": {"": 1},
                    "trustManifest": {
                        "identity": "urn:other",
                        "signature": "a.b.c",
                        "attestations": [{"type": "t"}, {"uri": "u", "digest": "md5:00"}]
                    }
                })
            })
            .collect();
        serde_json::json!({"specVersion": "1.0", "entries": entries})
    }

    /// The findings of running each row on its own, row after row, over
    /// the whole document: the order the one-pass evaluation must keep.
    fn row_by_row(format: Format, doc: &Value) -> Vec<Finding> {
        let mut l = Linter::default();
        let rules: Vec<&Rule> = super::super::all_rules()
            .filter(|r| r.format == format)
            .collect();
        let root = Sel {
            up: None,
            key: Key::Root,
            val: doc,
        };
        for i in 0..rules.len() {
            // A tree of this one row: its values, in document order.
            let mut one = Trie::of(&rules[i..=i]);
            shift(&mut one, i);
            visit(&mut l, &one, &root, &rules, doc);
        }
        assert!(l.rule_of.windows(2).all(|w| w[0] <= w[1]));
        l.findings
    }

    fn shift(t: &mut Trie, by: usize) {
        t.rows.iter_mut().for_each(|r| *r += by);
        t.next.iter_mut().for_each(|(_, n)| shift(n, by));
    }

    #[test]
    fn catalog_entries_are_walked_once_for_all_rows() {
        let doc = serde_json::json!({
            "specVersion": "1.0",
            "entries": (0..100).map(|i| serde_json::json!({
                "identifier": format!("urn:x:{i}"), "displayName": "x",
                "mediaType": "application/json", "data": {}
            })).collect::<Vec<_>>()
        });
        CHILDREN.with(|n| n.set(0));
        let r = lint(Format::AiCatalog, &doc);
        assert!(r.findings.is_empty(), "{:?}", r.findings);
        // Each entry is selected once, not once per `/entries/*` row
        // (there are dozens of them).
        assert_eq!(CHILDREN.with(std::cell::Cell::get), 100);
    }

    #[test]
    fn one_pass_keeps_the_codes_pointers_and_order_of_row_by_row() {
        let doc = faulty_catalog(12);
        let one_pass = lint(Format::AiCatalog, &doc).findings;
        assert!(one_pass.len() > 12 * 8, "{}", one_pass.len());
        assert_eq!(one_pass, row_by_row(Format::AiCatalog, &doc));
        // The first rows' findings come first: every entry's type error of
        // `identifier` before any entry's `catalog/media-type`.
        let first_media = one_pass
            .iter()
            .position(|f| f.code == "catalog/media-type")
            .expect("media-type findings");
        assert!(one_pass[..first_media]
            .iter()
            .any(|f| f.pointer == "/entries/9/identifier"));
    }

    #[test]
    fn semver() {
        for ok in [
            "0.0.0",
            "1.2.3",
            "1.0.0-alpha.1",
            "1.0.0+build.5",
            "1.0.0-0.3.7",
            "10.20.30-rc-1+x",
        ] {
            assert!(is_semver(ok), "{ok}");
        }
        for bad in [
            "1.2",
            "01.2.3",
            "1.2.3-",
            "1.2.3-01",
            "1.2.3+",
            "1.2.3-a..b",
            "v1.2.3",
            "1.2.3.4",
            "",
        ] {
            assert!(!is_semver(bad), "{bad}");
        }
    }

    #[test]
    fn agent_uri_syntax() {
        for ok in [
            "agent://planner.example.com/",
            "agent+https://planner.example.com:8443/a?b#c",
            "agent://did%3Aweb%3Aexample.com/x",
            "https://not-an-agent-uri.example.com/",
        ] {
            assert_eq!(agent_uri_problem(ok), None, "{ok}");
        }
        for bad in [
            "agent:///planner",
            "agent://",
            "agent+://x.example.com/",
            "agent+9p://x.example.com/",
            "agent+a_b://x.example.com/",
            "agent://did:web:example.com/x",
            "agent://DID:web:example.com/x",
        ] {
            assert!(agent_uri_problem(bad).is_some(), "{bad}");
        }
        // Non-ASCII authorities are judged, never sliced mid-character.
        assert_eq!(agent_uri_problem("agent://\u{e9}\u{20ac}x/"), None);
        assert_eq!(agent_uri_problem("agent://di\u{e9}:x/"), None);
    }

    #[test]
    fn rfc3339_shape() {
        for ok in ["2026-03-15T10:00:00Z", "2026-03-15t10:00:00.123+05:30"] {
            assert!(is_rfc3339(ok), "{ok}");
        }
        for bad in [
            "2026-03-15",
            "2026-03-15T10:00:00",
            "2026-03-15T10:00:00.Z",
            "2026-03-15T10:00:00+0530",
            "\u{e9}026-03-15T10:00:00Z",
        ] {
            assert!(!is_rfc3339(bad), "{bad}");
        }
    }

    #[test]
    fn schema_shapes() {
        use serde_json::json;
        for ok in [
            json!(true),
            json!({}),
            json!({"type": ["string", "null"], "properties": {"a": {"items": {"type": "integer"}}}, "required": ["a"]}),
        ] {
            assert_eq!(schema_problem(&ok, 0), None, "{ok}");
        }
        for bad in [
            json!("object"),
            json!({"type": "objekt"}),
            json!({"type": []}),
            json!({"required": ["a", "a"]}),
            json!({"properties": {"a": 1}}),
            json!({"anyOf": []}),
            json!({"items": {"type": 1}}),
        ] {
            assert!(schema_problem(&bad, 0).is_some(), "{bad}");
        }
        let mut deep = json!(true);
        for _ in 0..70 {
            deep = json!({ "items": deep });
        }
        assert!(schema_problem(&deep, 0).is_some(), "depth is bounded");
    }

    #[test]
    fn depends_graph() {
        let g = |edges: &[(&str, &str)]| {
            let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for (a, b) in edges {
                m.entry(a.to_string()).or_default().push(b.to_string());
            }
            m
        };
        assert!(check_depends_graph(&g(&[("a", "b"), ("b", "c"), ("a", "c")]), 16).is_empty());
        let p = check_depends_graph(&g(&[("a", "b"), ("b", "c"), ("c", "a")]), 16);
        assert_eq!(
            p,
            vec![DependsProblem::Cycle(vec![
                "a".into(),
                "b".into(),
                "c".into(),
                "a".into()
            ])]
        );
        // chain of 17 edges: n0 -> n1 -> ... -> n17
        let names: Vec<String> = (0..18).map(|i| format!("n{i:02}")).collect();
        let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for w in names.windows(2) {
            m.entry(w[0].clone()).or_default().push(w[1].clone());
        }
        assert_eq!(
            check_depends_graph(&m, 16),
            vec![DependsProblem::TooDeep("n00".into())]
        );
        m.remove("n16");
        assert!(
            check_depends_graph(&m, 16).is_empty(),
            "16 edges is allowed"
        );
    }
}

/// Why [`check_before_signing`] refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SignGateError {
    /// The document is not JSON or its format is not recognized.
    #[error(transparent)]
    Detect(#[from] DetectError),
    /// The document breaks MUST rules: `sign` lints first and refuses a
    /// descriptor with errors unless forced.
    #[error("{} lint error(s), first: {} at {}: {}", .0.errors().count(),
        .0.errors().next().map_or("", |f| f.code),
        .0.errors().next().map_or("", |f| f.pointer.as_str()),
        .0.errors().next().map_or("", |f| f.message.as_str()))]
    Refused(LintReport),
}

/// The lint step of `sign`: parse strictly, detect (or take `format`), lint;
/// refuse a document with errors unless `force`. On success the report
/// (warnings, or errors when forced) is returned, and its `format` gives the
/// media type to sign as the content type ([`Format::media_type`]).
///
/// # Errors
/// [`SignGateError`] when the descriptor does not pass lint and signing is not forced.
pub fn check_before_signing(
    input: &[u8],
    format: Option<Format>,
    force: bool,
) -> Result<LintReport, SignGateError> {
    let report = lint_bytes(input, format)?;
    if report.has_errors() && !force {
        return Err(SignGateError::Refused(report));
    }
    Ok(report)
}

/// For `verify` and `serve`: a finding when the `Content-Type` a document
/// was (or would be) served with does not fit its format
/// ([`Format::media_type_fits`]), code `publish/media-type`; a missing
/// header is reported too. A warning: the bytes verified are the same, but a
/// client dispatching on the media type would treat the document as
/// something else.
pub fn served_media_type_finding(format: Format, content_type: Option<&str>) -> Option<Finding> {
    match content_type {
        Some(ct) if format.media_type_fits(ct) => None,
        other => Some(Finding {
            code: "publish/media-type",
            severity: Severity::Warning,
            pointer: String::new(),
            message: format!(
                "served as {}, but a {} is served as {}",
                other.map_or("(no Content-Type)".to_string(), |c| crate::text::quoted(c)
                    .to_string()),
                format.title(),
                format.media_type()
            ),
        }),
    }
}

/// [`served_media_type_finding`] for a descriptor file served as
/// `response`: its format is detected from `descriptor` and the response's
/// first `Content-Type` line is compared; `None` when the media type fits
/// or the format is unknown (a body that is no known format is reported by
/// lint, not here).
pub fn served_media_type(descriptor: &[u8], response: &crate::httpsig::Message) -> Option<Finding> {
    let (format, _) = super::detect_bytes(descriptor).ok()?;
    let ct = response
        .field_lines("content-type", false)
        .next()
        .map(|v| String::from_utf8_lossy(v).trim().to_owned());
    served_media_type_finding(format, ct.as_deref())
}

/// For `verify` and `serve`: a finding (`publish/path`, warning) when a
/// document is served at a path other than its format's well-known path.
/// Formats without a fixed path accept any path.
pub fn served_path_finding(format: Format, path: &str) -> Option<Finding> {
    let want = format.well_known_path()?;
    (path != want).then(|| Finding {
        code: "publish/path",
        severity: Severity::Warning,
        pointer: String::new(),
        message: format!(
            "served at {}, but a {} is published at {want}",
            crate::text::quoted(path),
            format.title()
        ),
    })
}
