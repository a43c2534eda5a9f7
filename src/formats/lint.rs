//! `agentsig lint`: each format's MUST rules, checked on the parsed document.
//!
//! A signature over a malformed descriptor, or over one that points its
//! endpoints at an internal address, protects nothing; so MUST violations
//! are [`Severity::Error`] (and `sign` refuses them unless forced), SHOULD
//! violations are [`Severity::Warning`].
//!
//! Every finding carries a stable `code` and the RFC 6901 JSON pointer of
//! the offending value. The codes:
//!
//! | code | rule |
//! |---|---|
//! | `json/type` | a member has the wrong JSON type (the section that defines it) |
//! | `addr/internal` | an endpoint names a private, loopback, link-local or otherwise internal host ([`super::addr`]; seed 001 section 5.2, seed 000 section 8.2) |
//! | `addr/invalid-host` | an endpoint URI has no valid host |
//! | `addr/cleartext` | an endpoint uses `http:` (warning; seed 001 section 5.2, seed 000 section 8.1, seed 004 "Security") |
//! | `agent/required` | agent:// name, version, skills missing (001 section 7.1.1) |
//! | `agent/version` | version is not SemVer 2.0.0 (001 section 7.1.1, 7.1.4) |
//! | `agent/url` | url is not an agent:// URI (warning; 001 section 7.1.2) |
//! | `agent/skills-empty` | skills has no entry ("one or more", 001 section 7.1.1) |
//! | `agent/skill-required` | a skill lacks id, name or description (001 section 7.1.4) |
//! | `agent/skill-id-duplicate` | two skills share an id (warning) |
//! | `agent/depends-uri` | a depends entry has no agent:// uri (001 section 7.1.4) |
//! | `agent/depends-cycle` | the depends graph has a cycle (001 section 7.1.4, MUST reject) |
//! | `agent/depends-depth` | the depends graph is deeper than 16 (001 section 7.1.4) |
//! | `agent/transport-empty` | transport has none of endpoint/https/wss/grpc/mqtt/local/unix (001 section 7.1.2) |
//! | `agent/transport-scheme` | a transport URI's scheme does not fit its key (001 sections 6.2, 7.1.2) |
//! | `registry/agents` | agents.json has no `agents` object (001 section 5.1) |
//! | `registry/url-https` | a descriptor URL is not https (001 section 5.2) |
//! | `awp/required` | awp_version, domain, intent, actions missing (002 sections 5, 15) |
//! | `awp/version` | awp_version is not MAJOR.MINOR (002 section 4) |
//! | `awp/action-required` | an action lacks id, description, auth_required, inputs or outputs (002 section 9) |
//! | `awp/action-endpoint` | an action without via lacks endpoint or method (002 section 9) |
//! | `awp/method` | method is not GET, POST, PUT, DELETE or PATCH (002 section 9) |
//! | `awp/via-undeclared` | via names a protocol not declared in protocols (002 section 5.5) |
//! | `awp/protocol-version` | a declared protocol has no version (002 section 5.5) |
//! | `woa/version` | woa_version is not "1" (000 section 4) |
//! | `woa/required` | agents or transports missing (000 section 4) |
//! | `woa/agent-required` | an agent lacks id, name, description, inputs, outputs or transports (000 section 4.1) |
//! | `woa/agent-id` | an agent id does not match `1*(ALPHA / DIGIT / "-" / "_")` (000 section 4.1) |
//! | `woa/agent-id-duplicate` | two agents share an id (000 section 4.1) |
//! | `woa/transport-undeclared` | an agent names a transport not in `transports` (000 section 4.1) |
//! | `woa/rest-base-https` | a rest base is not an absolute https URL (000 section 4.3.1) |
//! | `woa/rest-invoke-path` | invoke_path missing or not starting with "/" (000 section 4.3.1) |
//! | `woa/mcp-required` | mcp transport lacks server, tool_namespace or tool_field (000 section 4.3.2) |
//! | `woa/private-transport-name` | a private transport name has no reverse-DNS prefix (000 section 4.3.3) |
//! | `agentcard/required` | agent_id, name, version, capabilities, endpoint missing (003 "Fields") |
//! | `agentcard/agent-id` | agent_id is not a 26-character Crockford Base32 ULID (003 "Validation") |
//! | `agentcard/version` | version is not SemVer 2.0.0 (003 "Validation") |
//! | `agentcard/capabilities-empty` | capabilities has no entry (003 "Validation") |
//! | `agentcard/capability-id` | a capability id does not match `^[a-z0-9][a-z0-9._-]*$` (003 "Validation") |
//! | `agentcard/endpoint-protocol` | endpoint.protocol not http, https, grpc, stdio, mcp (003 "Validation") |
//! | `agentcard/endpoint-url` | endpoint.url not a URI or not consistent with the protocol (003 "endpoint") |
//! | `agentcard/auth-scheme` | auth.scheme not none, bearer, api_key, oauth2, mtls (003 "endpoint") |
//! | `agentcard/landauer` | base_cost_joules non-zero and below 2.854e-21 J (003 "pricing", "Validation") |
//! | `agentcard/per-token` | per_token_joules negative (003 "Validation") |
//! | `agentcard/trust-tier` | pacr:trust_tier not untrusted, basic, established, verified, banned (003 "Validation") |
//! | `aidip/required` | name, description, endpoint missing (004 "Agent Metadata") |
//! | `aidip/io` | neither operations nor top-level inputs/outputs (004, "Each agent MUST describe its input and output formats") |
//! | `aidip/operation-required` | an operation lacks name, description, inputs or outputs (004) |
//! | `aidip/recommended` | id, version, publisher, capabilities missing (warning) |
//! | `aidip/endpoint-tls` | endpoint is not https ("All communication MUST be encrypted", 004 "Security") |
//! | `a2a/required` | name, description, version, capabilities, defaultInputModes, defaultOutputModes, skills missing (A2A v1.0 section 4.4.1) |
//! | `a2a/interface` | no supportedInterfaces (nor v0.3 url), or an interface without url/protocolBinding |
//! | `a2a/skill-required` | a skill lacks id, name, description or tags |
//! | `publish/media-type` | served with a media type other than the format's ([`served_media_type_finding`]; warning) |
//! | `publish/path` | served at a path other than the format's well-known path ([`served_path_finding`]; warning) |

use super::addr::{classify_host, uri_host, uri_scheme};
use super::{detect, DetectError, Format};
use crate::json;
use serde_json::{Map, Value};
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
pub fn lint_bytes(input: &[u8], format: Option<Format>) -> Result<LintReport, DetectError> {
    let doc = json::parse_strict(input)?;
    let format = match format {
        Some(f) => f,
        None => detect(&doc)?,
    };
    Ok(lint(format, &doc))
}

/// Lint a parsed document as `format`.
pub fn lint(format: Format, doc: &Value) -> LintReport {
    let mut l = Linter::default();
    match doc.as_object() {
        None => l.err("json/type", "", "the document must be a JSON object".into()),
        Some(o) => match format {
            Format::AgentDescriptor => agent_descriptor(&mut l, o),
            Format::AgentsRegistry => agents_registry(&mut l, o),
            Format::Awp => awp(&mut l, o),
            Format::Woa => woa(&mut l, o),
            Format::AgentCard => agentcard(&mut l, o),
            Format::Aidip => aidip(&mut l, o),
            Format::A2a => a2a(&mut l, o),
        },
    }
    LintReport {
        format,
        findings: l.findings,
    }
}

#[derive(Default)]
struct Linter {
    findings: Vec<Finding>,
}

fn ptr(parts: &[&str]) -> String {
    json::pointer(&parts.iter().map(|s| s.to_string()).collect::<Vec<_>>())
}

impl Linter {
    fn push(&mut self, code: &'static str, severity: Severity, pointer: &str, message: String) {
        self.findings.push(Finding {
            code,
            severity,
            pointer: pointer.to_string(),
            message,
        });
    }
    fn err(&mut self, code: &'static str, pointer: &str, message: String) {
        self.push(code, Severity::Error, pointer, message)
    }
    fn warn(&mut self, code: &'static str, pointer: &str, message: String) {
        self.push(code, Severity::Warning, pointer, message)
    }

    /// Required string member: missing → `code`; wrong type → `json/type`.
    fn req_str<'a>(
        &mut self,
        o: &'a Map<String, Value>,
        base: &str,
        key: &str,
        code: &'static str,
        section: &str,
    ) -> Option<&'a str> {
        let p = format!("{base}{}", ptr(&[key]));
        match o.get(key) {
            None => {
                self.err(
                    code,
                    &p,
                    format!(
                        "required member {} is missing ({section})",
                        crate::text::quoted(key)
                    ),
                );
                None
            }
            Some(Value::String(s)) => Some(s),
            Some(_) => {
                self.err(
                    "json/type",
                    &p,
                    format!("{} must be a string ({section})", crate::text::quoted(key)),
                );
                None
            }
        }
    }

    /// Required member of any type, checked by `ok`.
    fn req_typed<'a>(
        &mut self,
        o: &'a Map<String, Value>,
        base: &str,
        key: &str,
        code: &'static str,
        section: &str,
        (tname, ok): (&str, fn(&Value) -> bool),
    ) -> Option<&'a Value> {
        let p = format!("{base}{}", ptr(&[key]));
        match o.get(key) {
            None => {
                self.err(
                    code,
                    &p,
                    format!(
                        "required member {} is missing ({section})",
                        crate::text::quoted(key)
                    ),
                );
                None
            }
            Some(v) if ok(v) => Some(v),
            Some(_) => {
                self.err(
                    "json/type",
                    &p,
                    format!("{} must be {tname} ({section})", crate::text::quoted(key)),
                );
                None
            }
        }
    }

    /// An advertised network endpoint: internal hosts are errors, `http:`
    /// a warning.
    fn endpoint(&mut self, pointer: &str, uri: &str) {
        let Some(host) = uri_host(uri) else {
            return;
        };
        let class = classify_host(host);
        if class == super::HostClass::Invalid {
            self.err(
                "addr/invalid-host",
                pointer,
                format!("endpoint {} has no valid host", crate::text::quoted(uri)),
            );
        } else if class.is_internal() {
            self.err(
                "addr/internal",
                pointer,
                format!(
                    "endpoint {} names a {} host {}: clients refuse it (seed 001 section 5.2, seed 000 section 8.2)",
                    crate::text::quoted(uri),
                    class.label(),
                    crate::text::quoted(host)
                ),
            );
        }
        if uri_scheme(uri).as_deref() == Some("http") {
            self.warn(
                "addr/cleartext",
                pointer,
                format!("endpoint {} is cleartext http", crate::text::quoted(uri)),
            );
        }
    }
}

const OBJECT: (&str, fn(&Value) -> bool) = ("an object", Value::is_object);
const ARRAY: (&str, fn(&Value) -> bool) = ("an array", Value::is_array);
const BOOL: (&str, fn(&Value) -> bool) = ("a boolean", Value::is_boolean);

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

/// A problem in an agent:// depends graph (seed 001 section 7.1.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DependsProblem {
    /// A cycle, as the path of agent URIs that closes it.
    Cycle(Vec<String>),
    /// A chain longer than the bound, starting at this agent.
    TooDeep(String),
}

/// Check a depends graph (agent URI → the agent URIs its skills depend on)
/// for cycles, which tooling MUST reject, and for chains longer than
/// `max_depth` (16 RECOMMENDED), seed 001 section 7.1.4. Iterative DFS; each
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

/// The maximum depends traversal depth seed 001 section 7.1.4 recommends.
pub const DEPENDS_MAX_DEPTH: usize = 16;

fn agent_descriptor(l: &mut Linter, o: &Map<String, Value>) {
    const S: &str = "seed 001 section 7.1.1";
    l.req_str(o, "", "name", "agent/required", S);
    if let Some(v) = l.req_str(o, "", "version", "agent/required", S) {
        if !is_semver(v) {
            l.err(
                "agent/version",
                "/version",
                format!(
                    "version {} is not SemVer 2.0.0 ({S})",
                    crate::text::quoted(v)
                ),
            );
        }
    }
    let me = match o.get("url") {
        Some(Value::String(u)) => {
            if !u.starts_with("agent:") && !u.starts_with("agent+") {
                l.warn(
                    "agent/url",
                    "/url",
                    format!(
                        "url {} is not an agent:// URI (seed 001 section 7.1.2)",
                        crate::text::quoted(u)
                    ),
                );
            }
            u.clone()
        }
        _ => String::from("(this descriptor)"),
    };
    let mut graph: BTreeMap<String, Vec<String>> = BTreeMap::new();
    if let Some(Value::Array(skills)) = l.req_typed(o, "", "skills", "agent/required", S, ARRAY) {
        if skills.is_empty() {
            l.err(
                "agent/skills-empty",
                "/skills",
                format!("skills must hold one or more skills ({S})"),
            );
        }
        let mut ids = BTreeSet::new();
        for (i, s) in skills.iter().enumerate() {
            let base = ptr(&["skills", &i.to_string()]);
            let Some(so) = s.as_object() else {
                l.err(
                    "json/type",
                    &base,
                    "a skill must be an object (seed 001 section 7.1.4)".into(),
                );
                continue;
            };
            const S4: &str = "seed 001 section 7.1.4";
            if let Some(id) = l.req_str(so, &base, "id", "agent/skill-required", S4) {
                if !ids.insert(id.to_string()) {
                    l.warn(
                        "agent/skill-id-duplicate",
                        &format!("{base}/id"),
                        format!("skill id {} appears twice", crate::text::quoted(id)),
                    );
                }
            }
            l.req_str(so, &base, "name", "agent/skill-required", S4);
            l.req_str(so, &base, "description", "agent/skill-required", S4);
            if let Some(Value::String(v)) = so.get("version") {
                if !is_semver(v) {
                    l.err(
                        "agent/version",
                        &format!("{base}/version"),
                        format!(
                            "skill version {} is not SemVer 2.0.0 ({S4})",
                            crate::text::quoted(v)
                        ),
                    );
                }
            }
            match so.get("depends") {
                None => {}
                Some(Value::Array(deps)) => {
                    for (j, d) in deps.iter().enumerate() {
                        let dp = format!("{base}/depends/{j}");
                        match d.get("uri").and_then(Value::as_str) {
                            Some(u) if u.starts_with("agent://") || u.starts_with("agent+") => {
                                graph.entry(me.clone()).or_default().push(u.to_string());
                            }
                            _ => l.err(
                                "agent/depends-uri",
                                &dp,
                                format!(
                                    "a depends entry must be an object with an agent:// uri ({S4})"
                                ),
                            ),
                        }
                    }
                }
                Some(_) => l.err(
                    "json/type",
                    &format!("{base}/depends"),
                    format!("depends must be an array ({S4})"),
                ),
            }
        }
    }
    for p in check_depends_graph(&graph, DEPENDS_MAX_DEPTH) {
        match p {
            DependsProblem::Cycle(c) => l.err("agent/depends-cycle", "/skills", format!("depends graph has a cycle: {} (seed 001 section 7.1.4)", c.join(" -> "))),
            DependsProblem::TooDeep(n) => l.err("agent/depends-depth", "/skills", format!("depends chain from {n} is deeper than {DEPENDS_MAX_DEPTH} (seed 001 section 7.1.4)")),
        }
    }
    match o.get("transport") {
        None => {}
        Some(Value::Object(t)) => agent_transport(l, t),
        Some(_) => l.err(
            "json/type",
            "/transport",
            "transport must be an object (seed 001 section 7.1.2)".into(),
        ),
    }
    if let Some(Value::Object(p)) = o.get("provider") {
        if let Some(Value::String(u)) = p.get("url") {
            l.endpoint("/provider/url", u);
        }
    }
}

/// seed 001 section 7.1.2: transport holds endpoint and/or the per-transport
/// keys, each "a URI appropriate to that transport" (section 6.2).
fn agent_transport(l: &mut Linter, t: &Map<String, Value>) {
    const KEYS: [&str; 7] = ["endpoint", "https", "wss", "grpc", "mqtt", "local", "unix"];
    if !KEYS.iter().any(|k| t.contains_key(*k)) {
        l.err("agent/transport-empty", "/transport", "transport must contain endpoint or one of https, wss, grpc, mqtt, local, unix (seed 001 section 7.1.2)".into());
    }
    for key in KEYS {
        let Some(v) = t.get(key) else { continue };
        let p = ptr(&["transport", key]);
        let Some(uri) = v.as_str() else {
            l.err(
                "json/type",
                &p,
                format!("transport.{key} must be a URI string (seed 001 section 7.1.2)"),
            );
            continue;
        };
        let scheme = uri_scheme(uri);
        let allowed: &[&str] = match key {
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
        let fits = match (&scheme, key) {
            (_, "endpoint") => scheme.is_some(),
            (Some(s), _) => allowed.contains(&s.as_str()),
            (None, _) => unix_path,
        };
        if !fits {
            l.err(
                "agent/transport-scheme",
                &p,
                format!(
                    "transport.{key} {} is not a {key} URI (seed 001 sections 6.2, 7.1.2)",
                    crate::text::quoted(uri)
                ),
            );
        }
        if !matches!(key, "local" | "unix") {
            l.endpoint(&p, uri);
        }
    }
}

fn agents_registry(l: &mut Linter, o: &Map<String, Value>) {
    const S: &str = "seed 001 section 5.1";
    if let Some(Value::Object(agents)) = l.req_typed(o, "", "agents", "registry/agents", S, OBJECT)
    {
        for (name, url) in agents {
            let p = ptr(&["agents", name]);
            let Some(u) = url.as_str() else {
                l.err(
                    "json/type",
                    &p,
                    format!("agents.{name} must be a descriptor URL string ({S})"),
                );
                continue;
            };
            if uri_scheme(u).as_deref() != Some("https") {
                l.err("registry/url-https", &p, format!("descriptor URL {} is not https: resolvers MUST restrict fetches to HTTPS (seed 001 section 5.2)", crate::text::quoted(u)));
            }
            l.endpoint(&p, u);
        }
    }
}

fn awp(l: &mut Linter, o: &Map<String, Value>) {
    const S: &str = "seed 002 sections 5, 15";
    if let Some(v) = l.req_str(o, "", "awp_version", "awp/required", S) {
        let ok = v.split_once('.').is_some_and(|(a, b)| {
            !a.is_empty() && !b.is_empty() && a.bytes().chain(b.bytes()).all(|c| c.is_ascii_digit())
        });
        if !ok {
            l.err(
                "awp/version",
                "/awp_version",
                format!(
                    "awp_version {} is not MAJOR.MINOR (seed 002 section 4)",
                    crate::text::quoted(v)
                ),
            );
        }
    }
    if let Some(d) = l.req_str(o, "", "domain", "awp/required", S) {
        l.endpoint("/domain", &format!("https://{d}/"));
    }
    l.req_str(o, "", "intent", "awp/required", S);
    let protocols = match o.get("protocols") {
        None => Map::new(),
        Some(Value::Object(p)) => p.clone(),
        Some(_) => {
            l.err(
                "json/type",
                "/protocols",
                "protocols must be an object (seed 002 section 5.5)".into(),
            );
            Map::new()
        }
    };
    for (name, decl) in &protocols {
        let p = ptr(&["protocols", name]);
        let Some(d) = decl.as_object() else {
            l.err(
                "json/type",
                &p,
                "a protocol declaration must be an object (seed 002 section 5.5)".into(),
            );
            continue;
        };
        if !d.get("version").is_some_and(Value::is_string) {
            l.err(
                "awp/protocol-version",
                &format!("{p}/version"),
                format!(
                    "protocol {} has no version string (seed 002 section 5.5)",
                    crate::text::quoted(name)
                ),
            );
        }
        for k in ["endpoint", "agent_card"] {
            if let Some(Value::String(u)) = d.get(k) {
                l.endpoint(&format!("{p}/{k}"), u);
            }
        }
    }
    if let Some(Value::Array(actions)) = l.req_typed(o, "", "actions", "awp/required", S, ARRAY) {
        for (i, a) in actions.iter().enumerate() {
            let base = ptr(&["actions", &i.to_string()]);
            let Some(ao) = a.as_object() else {
                l.err(
                    "json/type",
                    &base,
                    "an action must be an object (seed 002 section 9)".into(),
                );
                continue;
            };
            const S9: &str = "seed 002 section 9";
            l.req_str(ao, &base, "id", "awp/action-required", S9);
            l.req_str(ao, &base, "description", "awp/action-required", S9);
            l.req_typed(ao, &base, "auth_required", "awp/action-required", S9, BOOL);
            l.req_typed(ao, &base, "inputs", "awp/action-required", S9, OBJECT);
            l.req_typed(ao, &base, "outputs", "awp/action-required", S9, OBJECT);
            match ao.get("via") {
                Some(Value::String(via)) => {
                    if !protocols.contains_key(via) {
                        l.err("awp/via-undeclared", &format!("{base}/via"), format!("via {} names no protocol declared in protocols (seed 002 section 5.5)", crate::text::quoted(via)));
                    }
                }
                Some(_) => l.err(
                    "json/type",
                    &format!("{base}/via"),
                    "via must be a string (seed 002 section 9)".into(),
                ),
                None => {
                    for k in ["endpoint", "method"] {
                        if !ao.contains_key(k) {
                            l.err(
                                "awp/action-endpoint",
                                &format!("{base}/{k}"),
                                format!("an action without via requires {k} (seed 002 section 9)"),
                            );
                        }
                    }
                }
            }
            if let Some(Value::String(m)) = ao.get("method") {
                if !["GET", "POST", "PUT", "DELETE", "PATCH"].contains(&m.as_str()) {
                    l.err(
                        "awp/method",
                        &format!("{base}/method"),
                        format!(
                            "method {} is not GET, POST, PUT, DELETE or PATCH (seed 002 section 9)",
                            crate::text::quoted(m)
                        ),
                    );
                }
            }
            if let Some(Value::String(e)) = ao.get("endpoint") {
                l.endpoint(&format!("{base}/endpoint"), e);
            }
        }
    }
}

fn woa(l: &mut Linter, o: &Map<String, Value>) {
    const S: &str = "seed 000 section 4";
    match o.get("woa_version") {
        Some(Value::String(v)) if v == "1" => {}
        _ => l.err(
            "woa/version",
            "/woa_version",
            format!("woa_version MUST be the string \"1\" ({S})"),
        ),
    }
    let transports = match l.req_typed(o, "", "transports", "woa/required", S, OBJECT) {
        Some(Value::Object(t)) => t.clone(),
        _ => Map::new(),
    };
    for (name, cfg) in &transports {
        let p = ptr(&["transports", name]);
        let Some(c) = cfg.as_object() else {
            l.err(
                "json/type",
                &p,
                "a transport configuration must be an object (seed 000 section 4.3)".into(),
            );
            continue;
        };
        match name.as_str() {
            "rest" => {
                const S1: &str = "seed 000 section 4.3.1";
                if let Some(b) = l.req_str(c, &p, "base", "woa/rest-base-https", S1) {
                    if uri_scheme(b).as_deref() != Some("https") || uri_host(b).is_none() {
                        l.err(
                            "woa/rest-base-https",
                            &format!("{p}/base"),
                            format!(
                                "rest base {} MUST be an absolute https URL ({S1})",
                                crate::text::quoted(b)
                            ),
                        );
                    }
                    l.endpoint(&format!("{p}/base"), b);
                }
                if let Some(ip) = l.req_str(c, &p, "invoke_path", "woa/rest-invoke-path", S1) {
                    if !ip.starts_with('/') {
                        l.err(
                            "woa/rest-invoke-path",
                            &format!("{p}/invoke_path"),
                            format!(
                                "invoke_path {} MUST begin with \"/\" ({S1})",
                                crate::text::quoted(ip)
                            ),
                        );
                    }
                }
            }
            "mcp" => {
                const S2: &str = "seed 000 section 4.3.2";
                if let Some(s) = l.req_str(c, &p, "server", "woa/mcp-required", S2) {
                    l.endpoint(&format!("{p}/server"), s);
                }
                l.req_str(c, &p, "tool_namespace", "woa/mcp-required", S2);
                l.req_str(c, &p, "tool_field", "woa/mcp-required", S2);
            }
            other => {
                if !other.contains('.') {
                    l.err("woa/private-transport-name", &p, format!("private transport {} MUST use a reverse DNS prefix such as \"com.example.{other}\" (seed 000 section 4.3.3)", crate::text::quoted(other)));
                }
                for (k, v) in c {
                    if let Some(u) = v.as_str() {
                        if u.contains("://") {
                            l.endpoint(&format!("{p}/{}", ptr(&[k]).trim_start_matches('/')), u);
                        }
                    }
                }
            }
        }
    }
    if let Some(Value::Array(agents)) = l.req_typed(o, "", "agents", "woa/required", S, ARRAY) {
        let mut ids = BTreeSet::new();
        for (i, a) in agents.iter().enumerate() {
            const S1: &str = "seed 000 section 4.1";
            let base = ptr(&["agents", &i.to_string()]);
            let Some(ao) = a.as_object() else {
                l.err(
                    "json/type",
                    &base,
                    format!("an agent must be an object ({S1})"),
                );
                continue;
            };
            if let Some(id) = l.req_str(ao, &base, "id", "woa/agent-required", S1) {
                let ok = !id.is_empty()
                    && id
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
                if !ok {
                    l.err(
                        "woa/agent-id",
                        &format!("{base}/id"),
                        format!(
                            "agent id {} does not match 1*( ALPHA / DIGIT / \"-\" / \"_\" ) ({S1})",
                            crate::text::quoted(id)
                        ),
                    );
                }
                if !ids.insert(id.to_string()) {
                    l.err(
                        "woa/agent-id-duplicate",
                        &format!("{base}/id"),
                        format!(
                            "agent id {} is not unique in the document ({S1})",
                            crate::text::quoted(id)
                        ),
                    );
                }
            }
            l.req_str(ao, &base, "name", "woa/agent-required", S1);
            l.req_str(ao, &base, "description", "woa/agent-required", S1);
            l.req_typed(ao, &base, "inputs", "woa/agent-required", S1, OBJECT);
            l.req_typed(ao, &base, "outputs", "woa/agent-required", S1, OBJECT);
            if let Some(Value::Array(ts)) =
                l.req_typed(ao, &base, "transports", "woa/agent-required", S1, ARRAY)
            {
                for (j, t) in ts.iter().enumerate() {
                    let tp = format!("{base}/transports/{j}");
                    match t.as_str() {
                        Some(name) if transports.contains_key(name) => {}
                        Some(name) => l.err("woa/transport-undeclared", &tp, format!("transport {} is not a key of the top-level transports object ({S1})", crate::text::quoted(name))),
                        None => l.err("json/type", &tp, format!("a transport name must be a string ({S1})")),
                    }
                }
            }
        }
    }
}

fn agentcard(l: &mut Linter, o: &Map<String, Value>) {
    const S: &str = "seed 003 \"AgentCard Fields\"";
    const V: &str = "seed 003 \"Validation Rules\"";
    if let Some(id) = l.req_str(o, "", "agent_id", "agentcard/required", S) {
        const CROCKFORD: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
        let ok = id.len() == 26 && id.bytes().all(|b| CROCKFORD.contains(&b));
        if !ok {
            l.err(
                "agentcard/agent-id",
                "/agent_id",
                format!(
                    "agent_id {} is not 26 characters of Crockford Base32 [0-9A-HJKMNP-TV-Z] ({V})",
                    crate::text::quoted(id)
                ),
            );
        } else if id.as_bytes()[0] > b'7' {
            l.err(
                "agentcard/agent-id",
                "/agent_id",
                format!(
                    "agent_id {} exceeds the largest ULID 7ZZZZZZZZZZZZZZZZZZZZZZZZZ (128 bits)",
                    crate::text::quoted(id)
                ),
            );
        }
    }
    l.req_str(o, "", "name", "agentcard/required", S);
    if let Some(v) = l.req_str(o, "", "version", "agentcard/required", S) {
        if !is_semver(v) {
            l.err(
                "agentcard/version",
                "/version",
                format!(
                    "version {} is not SemVer 2.0.0 ({V})",
                    crate::text::quoted(v)
                ),
            );
        }
    }
    if let Some(Value::Array(caps)) =
        l.req_typed(o, "", "capabilities", "agentcard/required", S, ARRAY)
    {
        if caps.is_empty() {
            l.err(
                "agentcard/capabilities-empty",
                "/capabilities",
                format!("capabilities MUST contain at least one entry ({V})"),
            );
        }
        for (i, c) in caps.iter().enumerate() {
            let base = ptr(&["capabilities", &i.to_string()]);
            let Some(co) = c.as_object() else {
                l.err(
                    "json/type",
                    &base,
                    format!("a capability must be an object ({S})"),
                );
                continue;
            };
            if let Some(id) = l.req_str(co, &base, "id", "agentcard/required", S) {
                let b = id.as_bytes();
                let ok = !b.is_empty()
                    && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
                    && b.iter().all(|&c| {
                        c.is_ascii_lowercase() || c.is_ascii_digit() || b"._-".contains(&c)
                    });
                if !ok {
                    l.err(
                        "agentcard/capability-id",
                        &format!("{base}/id"),
                        format!(
                            "capability id {} does not match ^[a-z0-9][a-z0-9._-]*$ ({V})",
                            crate::text::quoted(id)
                        ),
                    );
                }
            }
        }
    }
    if let Some(Value::Object(ep)) = l.req_typed(o, "", "endpoint", "agentcard/required", S, OBJECT)
    {
        let proto = l.req_str(ep, "/endpoint", "protocol", "agentcard/required", S);
        const PROTOS: [&str; 5] = ["http", "https", "grpc", "stdio", "mcp"];
        if let Some(p) = proto {
            if !PROTOS.contains(&p) {
                l.err(
                    "agentcard/endpoint-protocol",
                    "/endpoint/protocol",
                    format!(
                        "endpoint.protocol {} is not one of http, https, grpc, stdio, mcp ({V})",
                        crate::text::quoted(p)
                    ),
                );
            }
        }
        if let Some(u) = l.req_str(ep, "/endpoint", "url", "agentcard/required", S) {
            match uri_scheme(u) {
                None => l.err(
                    "agentcard/endpoint-url",
                    "/endpoint/url",
                    format!(
                        "endpoint.url {} is not a URI (RFC 3986; {V})",
                        crate::text::quoted(u)
                    ),
                ),
                Some(scheme) => {
                    let consistent = match proto {
                        Some("http") => scheme == "http",
                        Some("https") => scheme == "https",
                        Some("grpc") => {
                            matches!(scheme.as_str(), "grpc" | "grpcs" | "https" | "http")
                        }
                        _ => true,
                    };
                    if !consistent {
                        l.err("agentcard/endpoint-url", "/endpoint/url", format!("endpoint.url {} is not consistent with protocol {} ({S} \"endpoint\")", crate::text::quoted(u), crate::text::quoted(proto.unwrap_or(""))));
                    }
                    if proto != Some("stdio") {
                        l.endpoint("/endpoint/url", u);
                    }
                }
            }
        }
        if let Some(auth) = ep.get("auth") {
            match auth.get("scheme") {
                None => {}
                Some(Value::String(s)) if ["none", "bearer", "api_key", "oauth2", "mtls"].contains(&s.as_str()) => {}
                Some(other) => l.err("agentcard/auth-scheme", "/endpoint/auth/scheme", format!("auth.scheme {other} is not one of none, bearer, api_key, oauth2, mtls ({S} \"endpoint\")")),
            }
        }
    }
    if let Some(pricing) = o.get("pricing").and_then(Value::as_object) {
        /// k_B * 300 K * ln 2, rounded as seed 003 states it.
        const LANDAUER_300K: f64 = 2.854e-21;
        match pricing.get("base_cost_joules") {
            None => {}
            Some(Value::Number(n)) => {
                let j = n.as_f64().unwrap_or(f64::NAN);
                if !(j == 0.0 || j >= LANDAUER_300K) {
                    l.err("agentcard/landauer", "/pricing/base_cost_joules", format!("base_cost_joules {n} is neither 0 nor at least the Landauer limit 2.854e-21 J at 300 K ({V})"));
                }
            }
            Some(_) => l.err(
                "json/type",
                "/pricing/base_cost_joules",
                format!("base_cost_joules must be a number ({S})"),
            ),
        }
        match pricing.get("per_token_joules") {
            None => {}
            Some(Value::Number(n)) if n.as_f64().is_some_and(|x| x >= 0.0) => {}
            Some(v) => l.err(
                "agentcard/per-token",
                "/pricing/per_token_joules",
                format!("per_token_joules {v} must be a non-negative number ({V})"),
            ),
        }
    }
    if let Some(tier) = o.get("metadata").and_then(|m| m.get("pacr:trust_tier")) {
        const TIERS: [&str; 5] = ["untrusted", "basic", "established", "verified", "banned"];
        if !tier.as_str().is_some_and(|t| TIERS.contains(&t)) {
            l.err("agentcard/trust-tier", "/metadata/pacr:trust_tier", format!("pacr:trust_tier {tier} is not one of untrusted, basic, established, verified, banned ({V})"));
        }
    }
}

fn aidip(l: &mut Linter, o: &Map<String, Value>) {
    const S: &str = "seed 004 \"Agent Metadata Specification\"";
    l.req_str(o, "", "name", "aidip/required", S);
    l.req_str(o, "", "description", "aidip/required", S);
    if let Some(e) = l.req_str(o, "", "endpoint", "aidip/required", S) {
        if e.contains("://") {
            if uri_scheme(e).as_deref() != Some("https") {
                l.err("aidip/endpoint-tls", "/endpoint", format!("endpoint {} is not https: all invocation traffic MUST be protected with TLS (seed 004 \"Security Considerations\")", crate::text::quoted(e)));
            }
            l.endpoint("/endpoint", e);
        }
    }
    for k in ["id", "version", "publisher", "capabilities"] {
        if !o.contains_key(k) {
            l.warn(
                "aidip/recommended",
                &ptr(&[k]),
                format!("{} is missing ({S})", crate::text::quoted(k)),
            );
        }
    }
    match o.get("operations") {
        Some(Value::Array(ops)) => {
            for (i, op) in ops.iter().enumerate() {
                let base = ptr(&["operations", &i.to_string()]);
                let Some(oo) = op.as_object() else {
                    l.err(
                        "json/type",
                        &base,
                        format!("an operation must be an object ({S})"),
                    );
                    continue;
                };
                l.req_str(oo, &base, "name", "aidip/operation-required", S);
                l.req_str(oo, &base, "description", "aidip/operation-required", S);
                l.req_typed(oo, &base, "inputs", "aidip/operation-required", S, OBJECT);
                l.req_typed(oo, &base, "outputs", "aidip/operation-required", S, OBJECT);
            }
        }
        Some(_) => l.err(
            "json/type",
            "/operations",
            format!("operations must be an array ({S})"),
        ),
        None => {
            if !(o.get("inputs").is_some_and(Value::is_object)
                && o.get("outputs").is_some_and(Value::is_object))
            {
                l.err("aidip/io", "/operations", format!("each agent MUST describe its input and output formats: operations, or top-level inputs and outputs ({S})"));
            }
        }
    }
}

fn a2a(l: &mut Linter, o: &Map<String, Value>) {
    const S: &str = "A2A v1.0 section 4.4.1 AgentCard";
    l.req_str(o, "", "name", "a2a/required", S);
    l.req_str(o, "", "description", "a2a/required", S);
    l.req_str(o, "", "version", "a2a/required", S);
    l.req_typed(o, "", "capabilities", "a2a/required", S, OBJECT);
    l.req_typed(o, "", "defaultInputModes", "a2a/required", S, ARRAY);
    l.req_typed(o, "", "defaultOutputModes", "a2a/required", S, ARRAY);
    match o.get("supportedInterfaces") {
        Some(Value::Array(ifs)) => {
            if ifs.is_empty() {
                l.err(
                    "a2a/interface",
                    "/supportedInterfaces",
                    format!("supportedInterfaces must name at least one interface ({S})"),
                );
            }
            for (i, itf) in ifs.iter().enumerate() {
                let base = ptr(&["supportedInterfaces", &i.to_string()]);
                match itf.get("url").and_then(Value::as_str) {
                    Some(u) => l.endpoint(&format!("{base}/url"), u),
                    None => l.err(
                        "a2a/interface",
                        &format!("{base}/url"),
                        format!("an interface requires a url ({S})"),
                    ),
                }
                if !itf.get("protocolBinding").is_some_and(Value::is_string) {
                    l.err(
                        "a2a/interface",
                        &format!("{base}/protocolBinding"),
                        format!("an interface requires a protocolBinding ({S})"),
                    );
                }
            }
        }
        Some(_) => l.err(
            "json/type",
            "/supportedInterfaces",
            format!("supportedInterfaces must be an array ({S})"),
        ),
        None => match o.get("url") {
            Some(Value::String(u)) => l.endpoint("/url", u),
            _ => l.err(
                "a2a/interface",
                "/supportedInterfaces",
                format!("a card needs supportedInterfaces (v1.0) or url (v0.3) ({S})"),
            ),
        },
    }
    if let Some(Value::Array(ai)) = o.get("additionalInterfaces") {
        for (i, itf) in ai.iter().enumerate() {
            if let Some(u) = itf.get("url").and_then(Value::as_str) {
                l.endpoint(&format!("/additionalInterfaces/{i}/url"), u);
            }
        }
    }
    for k in ["documentationUrl", "iconUrl"] {
        if let Some(Value::String(u)) = o.get(k) {
            l.endpoint(&ptr(&[k]), u);
        }
    }
    if let Some(Value::Array(skills)) = l.req_typed(o, "", "skills", "a2a/required", S, ARRAY) {
        for (i, s) in skills.iter().enumerate() {
            let base = ptr(&["skills", &i.to_string()]);
            let Some(so) = s.as_object() else {
                l.err(
                    "json/type",
                    &base,
                    format!("a skill must be an object ({S})"),
                );
                continue;
            };
            for k in ["id", "name", "description"] {
                l.req_str(so, &base, k, "a2a/skill-required", S);
            }
            l.req_typed(so, &base, "tags", "a2a/skill-required", S, ARRAY);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    /// The document breaks MUST rules (issue 11: "sign lints first and
    /// refuses a descriptor with errors unless forced").
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
