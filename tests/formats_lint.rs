//! Detection, publication facts and lint of every descriptor
//! format, over the examples in `examples/` and over targeted mutations of
//! them (each trust-relevant MUST rule, with its stable code and pointer).

use agentsig::formats::{self, lint, lint_bytes, Format, Severity};
use agentsig::jws::{self, SignOptions};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::{jcs, Algorithm, SigningKey};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::PathBuf;

mod lint_support;

fn example(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

const EXAMPLES: [(&str, Format); 7] = [
    ("agent.json", Format::AgentDescriptor),
    ("agents.json", Format::AgentsRegistry),
    ("awp.agent.json", Format::Awp),
    ("woa.json", Format::Woa),
    ("agentcard.json", Format::AgentCard),
    ("aidip.json", Format::Aidip),
    ("a2a-agent-card.json", Format::A2a),
];

#[test]
fn every_example_is_detected_and_lints_clean() {
    for (file, want) in EXAMPLES {
        let (got, _) = formats::detect_bytes(&example(file)).expect(file);
        assert_eq!(got, want, "{file}");
        let report = lint_bytes(&example(file), None).expect(file);
        assert_eq!(report.format, want);
        assert!(report.findings.is_empty(), "{file}: {:#?}", report.findings);
    }
}

#[test]
fn every_example_is_signed_and_verified() {
    let key = SigningKey::generate(Algorithm::EcdsaP256Sha256).expect("keygen");
    let keys = StaticKeys::new().with(key.verifying_key().clone(), KeySource::Pinned);
    let v = Verifier::builder(keys).build();
    for (file, format) in EXAMPLES {
        let canonical = jcs::canonicalize(&example(file)).expect(file);
        let mut opts = SignOptions::default();
        opts.extra
            .insert("cty".into(), Value::String(format.media_type().into()));
        let compact = jws::sign_compact_detached(&canonical, &key, &opts).expect(file);
        let r = v.verify_jws(&compact, Some(&canonical)).expect(file);
        assert!(r.verified(), "{file}");
        let mut tampered = canonical.clone();
        tampered.pop();
        tampered.extend_from_slice(b",\"x\":1}");
        let e = v.verify_jws(&compact, Some(&tampered)).expect_err(file);
        let r = e.report().expect("the JWS is readable");
        assert!(!r.verified(), "{file}: tampered verified");
    }
}

#[test]
fn publication_facts() {
    let facts: Vec<(Format, Option<&str>, &str)> = formats::ALL
        .iter()
        .map(|f| (*f, f.well_known_path(), f.media_type()))
        .collect();
    assert_eq!(
        facts,
        vec![
            (Format::AgentDescriptor, None, "application/agent+json"),
            (
                Format::AgentsRegistry,
                Some("/.well-known/agents.json"),
                "application/json"
            ),
            (Format::Awp, Some("/agent.json"), "application/json"),
            (
                Format::Woa,
                Some("/.well-known/woa.json"),
                "application/woa+json"
            ),
            (
                Format::AgentCard,
                Some("/.well-known/agentcard"),
                "application/agentcard+json"
            ),
            (Format::Aidip, None, "application/json"),
            (
                Format::A2a,
                Some("/.well-known/agent-card.json"),
                "application/json"
            ),
            (
                Format::AiCatalog,
                Some("/.well-known/ai-catalog.json"),
                "application/ai-catalog+json"
            ),
            (
                Format::McpServerCard,
                None,
                "application/mcp-server-card+json"
            ),
        ]
    );
}

#[test]
fn detection_failures_are_typed() {
    assert!(matches!(
        formats::detect_bytes(b"[1]"),
        Err(formats::DetectError::NotAnObject)
    ));
    assert!(matches!(
        formats::detect_bytes(br#"{"hello":"world"}"#),
        Err(formats::DetectError::Unrecognized)
    ));
    assert!(matches!(
        formats::detect_bytes(br#"{"a":1,"a":2}"#),
        Err(formats::DetectError::Json(_))
    ));
}

/// Apply `edit` to an example, lint it as its format, and return the
/// (code, pointer) of every error.
fn errors_after(
    file: &str,
    format: Format,
    edit: impl FnOnce(&mut Value),
) -> Vec<(String, String)> {
    let mut v: Value = serde_json::from_slice(&example(file)).expect(file);
    edit(&mut v);
    lint(format, &v)
        .findings
        .into_iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| (f.code.to_string(), f.pointer))
        .collect()
}

fn one(code: &str, pointer: &str) -> Vec<(String, String)> {
    vec![(code.to_string(), pointer.to_string())]
}

#[test]
fn agent_descriptor_rules() {
    let f = |e: &dyn Fn(&mut Value)| errors_after("agent.json", Format::AgentDescriptor, e);
    assert_eq!(
        f(&|v| {
            v.as_object_mut().unwrap().remove("name");
        }),
        one("agent/required", "/name")
    );
    assert_eq!(
        f(&|v| v["version"] = json!("3.1")),
        one("agent/version", "/version")
    );
    assert_eq!(
        f(&|v| v["skills"] = json!([])),
        one("agent/skills-empty", "/skills")
    );
    assert_eq!(
        f(&|v| {
            v["skills"][0]
                .as_object_mut()
                .unwrap()
                .remove("description");
        }),
        one("agent/skill-required", "/skills/0/description")
    );
    assert_eq!(
        f(&|v| v["skills"][0]["depends"] = json!([{"uri": "agent://planner.example.com/"}])),
        one("agent/depends-cycle", "/skills")
    );
    assert_eq!(
        f(&|v| v["skills"][0]["depends"] = json!([{"uri": "https://x.example/"}])),
        one("agent/depends-uri", "/skills/0/depends/0")
    );
    assert_eq!(
        f(&|v| v["transport"]["wss"] = json!("https://planner.example.com/ws")),
        one("agent/transport-scheme", "/transport/wss")
    );
    assert_eq!(
        f(&|v| v["transport"] = json!({"docs": "x"})),
        one("agent/transport-empty", "/transport")
    );
    assert_eq!(
        f(&|v| v["transport"]["https"] = json!("https://169.254.169.254/latest/meta-data")),
        one("addr/internal", "/transport/https")
    );
    assert_eq!(
        f(&|v| v["transport"]["endpoint"] = json!("https://[::ffff:127.0.0.1]:8080/")),
        one("addr/internal", "/transport/endpoint")
    );
    // A local or unix transport is local by design: not an SSRF finding.
    assert!(f(&|v| v["transport"]["unix"] = json!("/var/run/agent/planner.sock")).is_empty());
}

#[test]
fn registry_rules() {
    let f = |e: &dyn Fn(&mut Value)| errors_after("agents.json", Format::AgentsRegistry, e);
    assert_eq!(
        f(&|v| v["agents"]["planner"] = json!("http://planner.example.com/agent.json")),
        one("registry/url-https", "/agents/planner")
    );
    // A relative reference resolves against the registry's https URL
    // (RFC 3986 section 5.2): what `agentsig serve` builds without a base URL.
    assert!(f(&|v| v["agents"]["planner"] = json!("/planner.json")).is_empty());
    assert_eq!(
        f(&|v| v["agents"]["planner"] = json!("ftp://planner.example.com/a.json")),
        one("registry/url-https", "/agents/planner")
    );
    assert_eq!(
        f(&|v| v["agents"]["planner"] = json!("https://10.0.0.7/agent.json")),
        one("addr/internal", "/agents/planner")
    );
    assert_eq!(
        f(&|v| *v = json!({"agent": {}})),
        one("registry/agents", "/agents")
    );
}

#[test]
fn awp_rules() {
    let f = |e: &dyn Fn(&mut Value)| errors_after("awp.agent.json", Format::Awp, e);
    assert_eq!(
        f(&|v| v["actions"][1]["via"] = json!("acp")),
        one("awp/via-undeclared", "/actions/1/via")
    );
    assert_eq!(
        f(&|v| {
            v.as_object_mut().unwrap().remove("intent");
        }),
        one("awp/required", "/intent")
    );
    assert_eq!(
        f(&|v| {
            v["actions"][0].as_object_mut().unwrap().remove("method");
        }),
        one("awp/action-endpoint", "/actions/0/method")
    );
    assert_eq!(
        f(&|v| v["protocols"]["mcp"]["endpoint"] = json!("https://localhost:3000/mcp")),
        one("addr/internal", "/protocols/mcp/endpoint")
    );
    assert_eq!(
        f(&|v| v["domain"] = json!("192.168.1.10")),
        one("addr/internal", "/domain")
    );
}

#[test]
fn woa_rules() {
    let f = |e: &dyn Fn(&mut Value)| errors_after("woa.json", Format::Woa, e);
    assert_eq!(
        f(&|v| v["woa_version"] = json!(1)),
        one("woa/version", "/woa_version")
    );
    assert_eq!(
        f(&|v| v["agents"][0]["id"] = json!("sum marizer")),
        one("woa/agent-id", "/agents/0/id")
    );
    assert_eq!(
        f(&|v| v["agents"][1]["id"] = json!("summarizer")),
        one("woa/agent-id-duplicate", "/agents/1/id")
    );
    assert_eq!(
        f(&|v| v["transports"]["rest"]["base"] = json!("http://agents.example.com")),
        one("woa/rest-base-https", "/transports/rest/base")
    );
    assert_eq!(
        f(&|v| v["agents"][1]["transports"] = json!(["grpc"])),
        one("woa/transport-undeclared", "/agents/1/transports/0")
    );
    assert_eq!(
        f(&|v| v["transports"]["rest"]["base"] = json!("https://metadata.google.internal")),
        one("addr/internal", "/transports/rest/base")
    );
}

#[test]
fn agentcard_rules() {
    let f = |e: &dyn Fn(&mut Value)| errors_after("agentcard.json", Format::AgentCard, e);
    assert_eq!(
        f(&|v| v["agent_id"] = json!("01HZQK3P8EMXR9V7T5N2W4J6CU")),
        one("agentcard/agent-id", "/agent_id"),
        "U is not Crockford Base32"
    );
    assert_eq!(
        f(&|v| v["agent_id"] = json!("01HZQK3P8EMXR9V7T5N2W4J6C")),
        one("agentcard/agent-id", "/agent_id")
    );
    assert_eq!(
        f(&|v| v["version"] = json!("1.0")),
        one("agentcard/version", "/version")
    );
    assert_eq!(
        f(&|v| v["capabilities"][0]["id"] = json!("Search.Web")),
        one("agentcard/capability-id", "/capabilities/0/id")
    );
    assert_eq!(
        f(&|v| v["endpoint"]["url"] = json!("http://agents.example.com/websearch")),
        one("agentcard/endpoint-url", "/endpoint/url")
    );
    assert_eq!(
        f(&|v| v["endpoint"]["protocol"] = json!("ftp")),
        one("agentcard/endpoint-protocol", "/endpoint/protocol")
    );
    assert_eq!(
        f(&|v| v["pricing"]["base_cost_joules"] = json!(2.853e-21)),
        one("agentcard/landauer", "/pricing/base_cost_joules")
    );
    assert!(f(&|v| v["pricing"]["base_cost_joules"] = json!(0)).is_empty());
    assert_eq!(
        f(&|v| v["pricing"]["base_cost_joules"] = json!(-1.0)),
        one("agentcard/landauer", "/pricing/base_cost_joules")
    );
    assert_eq!(
        f(&|v| v["metadata"]["pacr:trust_tier"] = json!("root")),
        one("agentcard/trust-tier", "/metadata/pacr:trust_tier")
    );
    assert_eq!(
        f(&|v| v["endpoint"]["url"] = json!("https://127.0.0.1/websearch")),
        one("addr/internal", "/endpoint/url")
    );
}

#[test]
fn aidip_rules() {
    let f = |e: &dyn Fn(&mut Value)| errors_after("aidip.json", Format::Aidip, e);
    assert_eq!(
        f(&|v| {
            v.as_object_mut().unwrap().remove("endpoint");
        }),
        one("aidip/required", "/endpoint")
    );
    assert_eq!(
        f(&|v| {
            v.as_object_mut().unwrap().remove("operations");
        }),
        one("aidip/io", "/operations")
    );
    assert_eq!(
        f(&|v| v["endpoint"] = json!("https://[fd12:3456::1]/invoke")),
        one("addr/internal", "/endpoint")
    );
}

#[test]
fn a2a_rules() {
    let f = |e: &dyn Fn(&mut Value)| errors_after("a2a-agent-card.json", Format::A2a, e);
    assert_eq!(
        f(&|v| v["supportedInterfaces"][0]["url"] = json!("https://100.64.1.1/a2a")),
        one("addr/internal", "/supportedInterfaces/0/url")
    );
    assert_eq!(
        f(&|v| {
            v.as_object_mut().unwrap().remove("skills");
        }),
        one("a2a/required", "/skills")
    );
}

#[test]
fn json_output_has_codes_and_pointers() {
    let mut v: Value = serde_json::from_slice(&example("woa.json")).unwrap();
    v["woa_version"] = json!("2");
    let out = lint(Format::Woa, &v).to_json();
    assert_eq!(out["format"], "woa");
    assert_eq!(out["media_type"], "application/woa+json");
    assert_eq!(out["well_known_path"], "/.well-known/woa.json");
    assert_eq!(out["ok"], false);
    assert_eq!(out["findings"][0]["code"], "woa/version");
    assert_eq!(out["findings"][0]["pointer"], "/woa_version");
    assert_eq!(out["findings"][0]["severity"], "error");
}

#[test]
fn sign_gate_refuses_errors_unless_forced() {
    let bad = br#"{"woa_version":"1","agents":[],"transports":{"rest":{"base":"https://10.1.2.3","invoke_path":"/x"}}}"#;
    match formats::check_before_signing(bad, None, false) {
        Err(formats::SignGateError::Refused(r)) => {
            assert_eq!(r.errors().next().map(|f| f.code), Some("addr/internal"))
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    let forced = formats::check_before_signing(bad, None, true).expect("forced");
    assert!(forced.has_errors());
    assert_eq!(forced.format.media_type(), "application/woa+json");
    let ok = formats::check_before_signing(&example("woa.json"), None, false).expect("clean");
    assert!(!ok.has_errors());
}

#[test]
fn served_media_type_and_path_findings() {
    use formats::{served_media_type_finding as mt, served_path_finding as path};
    assert!(mt(Format::Woa, Some("application/woa+json; charset=utf-8")).is_none());
    assert_eq!(
        mt(Format::Woa, Some("application/json")).map(|f| f.code),
        Some("publish/media-type")
    );
    assert_eq!(
        mt(Format::AgentCard, None).map(|f| f.code),
        Some("publish/media-type")
    );
    assert!(path(Format::A2a, "/.well-known/agent-card.json").is_none());
    assert_eq!(
        path(Format::A2a, "/agent.json").map(|f| f.code),
        Some("publish/path")
    );
    assert!(path(Format::AgentDescriptor, "/anything.json").is_none());
}

fn example_of(format: Format) -> Value {
    let file = EXAMPLES
        .iter()
        .find(|(_, f)| *f == format)
        .expect("an example of every format")
        .0;
    serde_json::from_slice(&example(file)).expect(file)
}

const R: &str = "-";
const J: &str = "json/type";
use Format::{
    A2a as A2A, AgentCard as CARD, AgentDescriptor as AG, AgentsRegistry as REG, Aidip as AIDIP,
    Awp as AWP, Woa as WOA,
};

use lint_support::Case;

/// For each row of `formats::RULES` (format, pointer pattern, code):
/// edits to the format's shipped example that break exactly that rule.
#[rustfmt::skip]
const CASES: &[Case] = &[
    // agent:// descriptor, draft-narvaneni-agent-uri-03
    (AG, "/name", "agent/required", &[("/name", R)]),
    (AG, "/version", "agent/required", &[("/version", R)]),
    (AG, "/version", "agent/version", &[("/version", r#""1.0""#)]),
    (AG, "/skills", "agent/required", &[("/skills", R)]),
    (AG, "/skills", "agent/skills-empty", &[("/skills", "[]")]),
    (AG, "/url", "agent/url", &[("/url", r#""https://planner.example.com/""#)]),
    (AG, "/url", "agent/uri", &[("/url", r#""agent:///planner""#)]),
    (AG, "/url", "agent/uri", &[("/url", r#""agent://did:web:example.com/planner""#)]),
    (AG, "/url", "agent/uri", &[("/url", r#""agent+9p://planner.example.com/""#)]),
    (AG, "/description", J, &[("/description", "1")]),
    (AG, "/transport", J, &[("/transport", r#""https://planner.example.com/""#)]),
    (AG, "/transport", "agent/transport-empty", &[("/transport", r#"{"ftp":"ftp://x.example.com/"}"#)]),
    (AG, "/transport/*", "agent/transport-scheme", &[("/transport/wss", r#""https://planner.example.com/ws""#)]),
    (AG, "/transport/endpoint", "addr/internal", &[("/transport/endpoint", r#""https://10.0.0.1/api""#)]),
    (AG, "/transport/https", "addr/internal", &[("/transport/https", r#""https://127.0.0.1/api""#)]),
    (AG, "/transport/wss", "addr/internal", &[("/transport/wss", r#""wss://192.168.1.1/ws""#)]),
    (AG, "/transport/grpc", "addr/internal", &[("/transport/grpc", r#""grpc://169.254.1.1:443""#)]),
    (AG, "/transport/mqtt", "addr/internal", &[("/transport/mqtt", r#""mqtts://localhost:8883""#)]),
    (AG, "/authentication", J, &[("/authentication", "[]")]),
    (AG, "/provider", J, &[("/provider", r#""Example AI Org""#)]),
    (AG, "/provider/organization", "agent/provider", &[("/provider/organization", R)]),
    (AG, "/provider/url", "addr/internal", &[("/provider/url", r#""https://[::1]/""#)]),
    (AG, "/conformanceLevel", "agent/conformance-level", &[("/conformanceLevel", "4")]),
    (AG, "/status", "agent/status", &[("/status", r#""retired""#)]),
    (AG, "/supportedVersions", J, &[("/supportedVersions", "[]")]),
    (AG, "/documentationUrl", "addr/internal", &[("/documentationUrl", r#""https://169.254.169.254/docs""#)]),
    (AG, "/environment", J, &[("/environment", "1")]),
    (AG, "/interactionModel", J, &[("/interactionModel", r#""mcp""#)]),
    (AG, "/interactionModel/*", "agent/interaction-model", &[("/interactionModel", r#"["agent2agent","carrier-pigeon"]"#)]),
    (AG, "/skills/*", J, &[("/skills/0", r#""gen-iti""#)]),
    (AG, "/skills/*/id", "agent/skill-required", &[("/skills/0/id", R)]),
    (AG, "/skills/*/name", "agent/skill-required", &[("/skills/0/name", R)]),
    (AG, "/skills/*/description", "agent/skill-required", &[("/skills/0/description", R)]),
    (AG, "", "agent/skill-id-duplicate", &[("/skills/-", r#"{"id":"gen-iti","name":"n","description":"d"}"#)]),
    (AG, "/skills/*/version", "agent/version", &[("/skills/0/version", r#""2.1""#)]),
    (AG, "/skills/*/tags", J, &[("/skills/0/tags", r#""travel""#)]),
    (AG, "/skills/*/input", "agent/schema", &[("/skills/0/input", r#"{"type":"thing"}"#)]),
    (AG, "/skills/*/output", "agent/schema", &[("/skills/0/output", "[1]")]),
    (AG, "/skills/*/contentTypes", J, &[("/skills/0/contentTypes", r#""application/json""#)]),
    (AG, "/skills/*/streaming", J, &[("/skills/0/streaming", r#""yes""#)]),
    (AG, "/skills/*/idempotent", J, &[("/skills/0/idempotent", "1")]),
    (AG, "/skills/*/status", "agent/status", &[("/skills/0/status", r#""gone""#)]),
    (AG, "/skills/*/depends", J, &[("/skills/0/depends", r#"{"uri":"agent://x.example.com/"}"#)]),
    (AG, "/skills/*/depends/*", "agent/depends-uri", &[("/skills/0/depends/0/uri", r#""https://translator.example.com/""#)]),
    (AG, "/skills/*/depends/*/uri", "agent/uri", &[("/skills/0/depends/0/uri", r#""agent:///translate""#)]),
    (AG, "", "agent/depends-cycle", &[("/skills/0/depends/0/uri", r#""agent://planner.example.com/""#)]),
    // agent:// registry, draft-narvaneni-agent-uri-03
    (REG, "/agents", "registry/agents", &[("/agents", R)]),
    (REG, "/agents", "registry/agents-empty", &[("/agents", "{}")]),
    (REG, "/agents/*", J, &[("/agents/planner", "1")]),
    (REG, "/agents/*", "registry/url-https", &[("/agents/planner", r#""http://planner.example.com/agent.json""#)]),
    (REG, "/agents/*", "addr/internal", &[("/agents/planner", r#""https://10.0.0.2/agent.json""#)]),
    // AWP v0.2
    (AWP, "/awp_version", "awp/required", &[("/awp_version", R)]),
    (AWP, "/awp_version", "awp/version", &[("/awp_version", r#""0.2.1""#)]),
    (AWP, "/domain", "awp/required", &[("/domain", R)]),
    (AWP, "/domain", "addr/internal", &[("/domain", r#""localhost""#)]),
    (AWP, "/intent", "awp/required", &[("/intent", R)]),
    (AWP, "/actions", "awp/required", &[("/actions", R)]),
    (AWP, "/protocols", J, &[("/protocols", "[]")]),
    (AWP, "/protocols/*", J, &[("/protocols/a2a", r#""0.3""#)]),
    (AWP, "/protocols/*/version", "awp/protocol-version", &[("/protocols/mcp/version", R)]),
    (AWP, "/protocols/*", "awp/protocol-endpoint", &[("/protocols/mcp/endpoint", R)]),
    (AWP, "/protocols/*/endpoint", "addr/internal", &[("/protocols/a2a/endpoint", r#""https://169.254.169.254/""#)]),
    (AWP, "/protocols/*/agent_card", "addr/internal", &[("/protocols/a2a/agent_card", r#""https://[::1]/card""#)]),
    (AWP, "/capabilities", J, &[("/capabilities", r#""streaming""#)]),
    (AWP, "/capabilities/streaming", J, &[("/capabilities/streaming", r#""no""#)]),
    (AWP, "/capabilities/batch_actions", J, &[("/capabilities/batch_actions", "1")]),
    (AWP, "/capabilities/webhooks", J, &[("/capabilities/webhooks", r#""yes""#)]),
    (AWP, "/capabilities/idempotency", J, &[("/capabilities/idempotency", "0")]),
    (AWP, "/capabilities/pagination", "awp/pagination", &[("/capabilities/pagination", r#""scroll""#)]),
    (AWP, "/auth", J, &[("/auth", r#""oauth2""#)]),
    (AWP, "/auth/type", "awp/auth-type", &[("/auth/type", r#""saml""#)]),
    (AWP, "/auth/required_for", J, &[("/auth/required_for", r#""checkout""#)]),
    (AWP, "/auth/optional_for", J, &[("/auth/optional_for", "1")]),
    (AWP, "/auth/required_for/*", "awp/action-unknown", &[("/auth/required_for", r#"["book"]"#)]),
    (AWP, "/auth/optional_for/*", "awp/action-unknown", &[("/auth/optional_for", r#"["book"]"#)]),
    (AWP, "/entities", J, &[("/entities", "[]")]),
    (AWP, "/actions/*", J, &[("/actions/0", r#""search_products""#)]),
    (AWP, "/actions/*/id", "awp/action-required", &[("/actions/0/id", R)]),
    (AWP, "", "awp/action-id-duplicate", &[("/actions/1/id", r#""search_products""#)]),
    (AWP, "/actions/*/description", "awp/action-required", &[("/actions/0/description", R)]),
    (AWP, "/actions/*/auth_required", "awp/action-required", &[("/actions/0/auth_required", R)]),
    (AWP, "/actions/*/inputs", "awp/action-required", &[("/actions/0/inputs", R)]),
    (AWP, "/actions/*/outputs", "awp/action-required", &[("/actions/0/outputs", R)]),
    (AWP, "/actions/*/inputs/*", J, &[("/actions/0/inputs/query", r#""string""#)]),
    (AWP, "/actions/*/inputs/*/type", "awp/input-type", &[("/actions/0/inputs/query/type", R)]),
    (AWP, "/actions/*/inputs/*/required", J, &[("/actions/0/inputs/query/required", r#""yes""#)]),
    (AWP, "/actions/*/inputs/*/options", J, &[("/actions/0/inputs/query/options", r#""a,b""#)]),
    (AWP, "/actions/*", "awp/action-endpoint", &[("/actions/0/method", R)]),
    (AWP, "/actions/*/method", "awp/method", &[("/actions/0/method", r#""FETCH""#)]),
    (AWP, "/actions/*/via", J, &[("/actions/1/via", "1")]),
    (AWP, "/actions/*/via", "awp/via-undeclared", &[("/actions/1/via", r#""x402""#)]),
    (AWP, "/actions/*/operation", J, &[("/actions/1/operation", "1")]),
    (AWP, "/actions/*/endpoint", "addr/internal", &[("/actions/0/endpoint", r#""https://10.0.0.1/api""#)]),
    (AWP, "/actions/*/idempotency", J, &[("/actions/0/idempotency", "true")]),
    (AWP, "/actions/*/execution_model", "awp/execution-model", &[("/actions/0/execution_model", r#""batch""#)]),
    (AWP, "/actions/*/sensitivity", "awp/sensitivity", &[("/actions/2/sensitivity", r#""fatal""#)]),
    (AWP, "/actions/*/requires_human_confirmation", J, &[("/actions/2/requires_human_confirmation", r#""yes""#)]),
    (AWP, "/actions/*/reversible", J, &[("/actions/2/reversible", r#""no""#)]),
    (AWP, "/errors", J, &[("/errors", "[]")]),
    (AWP, "/errors/*", J, &[("/errors/RATE_LIMITED", r#""wait""#)]),
    (AWP, "/errors/*/recovery", "awp/error-recovery", &[("/errors/RATE_LIMITED", "{}")]),
    (AWP, "/errors/*/recovery", "awp/error-recovery", &[("/errors/RATE_LIMITED", r#"{"recovery":" "}"#)]),
    (AWP, "/dependencies", J, &[("/dependencies", "[]")]),
    (AWP, "/dependencies/*", J, &[("/dependencies/checkout", r#""search_products""#)]),
    (AWP, "/dependencies/*", "awp/action-unknown", &[("/dependencies/book", r#"["search_products"]"#)]),
    (AWP, "/dependencies/*/*", "awp/action-unknown", &[("/dependencies/checkout", r#"["book"]"#)]),
    (AWP, "", "awp/dependency-cycle", &[("/dependencies", r#"{"checkout":["search_products"],"search_products":["checkout"]}"#)]),
    (AWP, "/agent_hints", J, &[("/agent_hints", r#""cache 5 minutes""#)]),
    (AWP, "/agent_status", J, &[("/agent_status", "true")]),
    (AWP, "/agent_status/operational", J, &[("/agent_status/operational", r#""yes""#)]),
    (AWP, "/agent_status/degraded_actions", J, &[("/agent_status/degraded_actions", r#""checkout""#)]),
    (AWP, "/agent_status/degraded_actions/*", "awp/action-unknown", &[("/agent_status/degraded_actions", r#"["book"]"#)]),
    (AWP, "", "awp/synthetic-origin", &[("/source", r#""synthetic""#)]),
    (AWP, "", "awp/synthetic-origin", &[("/source", r#""synthetic""#), ("/generated_by", r#""gen""#), ("/confidence", "0.9"), ("/last_verified", r#""2026-03-15""#)]),
    // the Web of Agents draft
    (WOA, "", "woa/version", &[("/woa_version", r#""2""#)]),
    (WOA, "", "woa/version", &[("/woa_version", "1")]),
    (WOA, "/transports", "woa/required", &[("/transports", R)]),
    (WOA, "/agents", "woa/required", &[("/agents", R)]),
    (WOA, "/transports/*", J, &[("/transports/com.example.grpc", r#""grpc://x.example.com""#)]),
    (WOA, "/transports/rest/base", "woa/rest-base-https", &[("/transports/rest/base", R)]),
    (WOA, "/transports/rest/base", "woa/rest-base-https", &[("/transports/rest/base", r#""http://agents.example.com""#)]),
    (WOA, "/transports/rest/base", "addr/internal", &[("/transports/rest/base", r#""https://10.1.2.3""#)]),
    (WOA, "/transports/rest/invoke_path", "woa/rest-invoke-path", &[("/transports/rest/invoke_path", R)]),
    (WOA, "/transports/rest/invoke_path", "woa/rest-invoke-path", &[("/transports/rest/invoke_path", r#""woa/agents""#)]),
    (WOA, "/transports/mcp/server", "woa/mcp-required", &[("/transports/mcp/server", R)]),
    (WOA, "/transports/mcp/tool_namespace", "woa/mcp-required", &[("/transports/mcp/tool_namespace", R)]),
    (WOA, "/transports/mcp/tool_field", "woa/mcp-required", &[("/transports/mcp/tool_field", R)]),
    (WOA, "/transports/mcp/server", "addr/internal", &[("/transports/mcp/server", r#""https://127.0.0.1/mcp""#)]),
    (WOA, "/transports/*", "woa/private-transport-name", &[("/transports/grpcx", "{}")]),
    (WOA, "/transports/*", "addr/internal", &[("/transports/com.example.grpc", r#"{"url":"https://10.0.0.9/"}"#)]),
    (WOA, "/agents/*", J, &[("/agents/0", r#""summarizer""#)]),
    (WOA, "/agents/*/id", "woa/agent-required", &[("/agents/0/id", R)]),
    (WOA, "/agents/*/id", "woa/agent-id", &[("/agents/0/id", r#""sum marizer""#)]),
    (WOA, "", "woa/agent-id-duplicate", &[("/agents/1/id", r#""summarizer""#)]),
    (WOA, "/agents/*/name", "woa/agent-required", &[("/agents/0/name", R)]),
    (WOA, "/agents/*/description", "woa/agent-required", &[("/agents/0/description", R)]),
    (WOA, "/agents/*/inputs", "woa/agent-required", &[("/agents/0/inputs", R)]),
    (WOA, "/agents/*/outputs", "woa/agent-required", &[("/agents/0/outputs", R)]),
    (WOA, "/agents/*/inputs", "woa/schema", &[("/agents/0/inputs", r#"{"type":"objekt"}"#)]),
    (WOA, "/agents/*/outputs", "woa/schema", &[("/agents/0/outputs", r#"{"type":"object","required":"summary"}"#)]),
    (WOA, "/agents/*/transports", "woa/agent-required", &[("/agents/0/transports", R)]),
    (WOA, "/agents/*/transports/*", J, &[("/agents/0/transports", "[1]")]),
    (WOA, "/agents/*/transports/*", "woa/transport-undeclared", &[("/agents/0/transports", r#"["grpc"]"#)]),
    (WOA, "/agents/*/version", J, &[("/agents/0/version", "1")]),
    (WOA, "/agents/*/capabilities", J, &[("/agents/0/capabilities", r#""summarization""#)]),
    (WOA, "/agents/*/operations", J, &[("/agents/0/operations", r#"{"name":"x"}"#)]),
    (WOA, "/agents/*/operations/*", J, &[("/agents/0/operations", "[1]")]),
    (WOA, "/agents/*/operations/*/name", "woa/operation-required", &[("/agents/0/operations", r#"[{"description":"d"}]"#)]),
    (WOA, "/agents/*/operations/*/description", "woa/operation-required", &[("/agents/0/operations", r#"[{"name":"n"}]"#)]),
    (WOA, "/agents/*/operations/*/inputs", "woa/schema", &[("/agents/0/operations", r#"[{"name":"n","description":"d","inputs":{"properties":[]}}]"#)]),
    (WOA, "/agents/*/operations/*/outputs", "woa/schema", &[("/agents/0/operations", r#"[{"name":"n","description":"d","outputs":{"type":["string","string"]}}]"#)]),
    // the AgentCard draft
    (CARD, "/agent_id", "agentcard/required", &[("/agent_id", R)]),
    (CARD, "/agent_id", "agentcard/agent-id", &[("/agent_id", r#""01HZQK3P8EMXR9V7T5N2W4J6CU""#)]),
    (CARD, "/agent_id", "agentcard/agent-id", &[("/agent_id", r#""81HZQK3P8EMXR9V7T5N2W4J6C0""#)]),
    (CARD, "/name", "agentcard/required", &[("/name", R)]),
    (CARD, "/version", "agentcard/required", &[("/version", R)]),
    (CARD, "/version", "agentcard/version", &[("/version", r#""1.0""#)]),
    (CARD, "/capabilities", "agentcard/required", &[("/capabilities", R)]),
    (CARD, "/capabilities", "agentcard/capabilities-empty", &[("/capabilities", "[]")]),
    (CARD, "/capabilities/*", J, &[("/capabilities/0", r#""search.web""#)]),
    (CARD, "/capabilities/*/id", "agentcard/required", &[("/capabilities/0/id", R)]),
    (CARD, "/capabilities/*/id", "agentcard/capability-id", &[("/capabilities/0/id", r#""Search.Web""#)]),
    (CARD, "/capabilities/*/description", J, &[("/capabilities/0/description", "1")]),
    (CARD, "/capabilities/*/tags", J, &[("/capabilities/0/tags", r#""search""#)]),
    (CARD, "/capabilities/*/input_schema", "agentcard/schema", &[("/capabilities/0/input_schema", r#""object""#)]),
    (CARD, "/capabilities/*/output_schema", "agentcard/schema", &[("/capabilities/0/output_schema", r#"{"type":1}"#)]),
    (CARD, "/endpoint", "agentcard/required", &[("/endpoint", R)]),
    (CARD, "/endpoint/protocol", "agentcard/required", &[("/endpoint/protocol", R)]),
    (CARD, "/endpoint/protocol", "agentcard/endpoint-protocol", &[("/endpoint/protocol", r#""ftp""#)]),
    (CARD, "/endpoint/url", "agentcard/required", &[("/endpoint/url", R)]),
    (CARD, "/endpoint/url", "agentcard/endpoint-url", &[("/endpoint/url", r#""agents.example.com/websearch""#)]),
    (CARD, "/endpoint/url", "agentcard/endpoint-url", &[("/endpoint/url", r#""http://agents.example.com/websearch""#)]),
    (CARD, "/endpoint/auth", J, &[("/endpoint/auth", r#""bearer""#)]),
    (CARD, "/endpoint/auth/scheme", "agentcard/auth-scheme", &[("/endpoint/auth/scheme", r#""basic""#)]),
    (CARD, "/pricing", J, &[("/pricing", "[]")]),
    (CARD, "/pricing/base_cost_joules", J, &[("/pricing/base_cost_joules", r#""1e-20""#)]),
    (CARD, "/pricing/base_cost_joules", "agentcard/landauer", &[("/pricing/base_cost_joules", "1e-22")]),
    (CARD, "/pricing/per_token_joules", "agentcard/per-token", &[("/pricing/per_token_joules", "-1e-24")]),
    (CARD, "/metadata", J, &[("/metadata", "[]")]),
    (CARD, "/metadata/pacr:trust_tier", "agentcard/trust-tier", &[("/metadata/pacr:trust_tier", r#""gold""#)]),
    (CARD, "/goal_subscriptions", J, &[("/goal_subscriptions", "{}")]),
    (CARD, "/goal_subscriptions/*", J, &[("/goal_subscriptions", "[1]")]),
    (CARD, "/goal_subscriptions/*/goal_id", "agentcard/goal-required", &[("/goal_subscriptions", r#"[{"priority":0.5}]"#)]),
    (CARD, "/goal_subscriptions/*/description", J, &[("/goal_subscriptions", r#"[{"goal_id":"g","description":1}]"#)]),
    (CARD, "/goal_subscriptions/*/priority", "agentcard/goal-priority", &[("/goal_subscriptions", r#"[{"goal_id":"g","priority":2}]"#)]),
    // AIDIP
    (AIDIP, "/name", "aidip/required", &[("/name", R)]),
    (AIDIP, "/description", "aidip/required", &[("/description", R)]),
    (AIDIP, "/endpoint", "aidip/required", &[("/endpoint", R)]),
    (AIDIP, "/endpoint", "aidip/endpoint-tls", &[("/endpoint", r#""http://translate.example.com/invoke""#)]),
    (AIDIP, "/id", "aidip/recommended", &[("/id", R)]),
    (AIDIP, "/version", "aidip/recommended", &[("/version", R)]),
    (AIDIP, "/publisher", "aidip/recommended", &[("/publisher", R)]),
    (AIDIP, "/capabilities", "aidip/recommended", &[("/capabilities", R)]),
    (AIDIP, "/id", J, &[("/id", "12345")]),
    (AIDIP, "/version", J, &[("/version", "1")]),
    (AIDIP, "/publisher", J, &[("/publisher", "[]")]),
    (AIDIP, "/capabilities", J, &[("/capabilities", r#""translation""#)]),
    (AIDIP, "/tags", J, &[("/tags", r#""nlp""#)]),
    (AIDIP, "/supported_languages", J, &[("/supported_languages", r#""en""#)]),
    (AIDIP, "/status", J, &[("/status", "1")]),
    (AIDIP, "/authentication", J, &[("/authentication", r#""oauth2""#)]),
    (AIDIP, "/authentication/type", J, &[("/authentication/type", "1")]),
    (AIDIP, "/authentication/instructions", J, &[("/authentication/instructions", "[]")]),
    (AIDIP, "/authentication/scopes", J, &[("/authentication/scopes", r#""translate.invoke""#)]),
    (AIDIP, "", "aidip/io", &[("/operations", R)]),
    (AIDIP, "/inputs", "aidip/schema", &[("/inputs", r#"{"type":"objects"}"#)]),
    (AIDIP, "/outputs", "aidip/schema", &[("/outputs", r#"{"enum":1}"#)]),
    (AIDIP, "/operations", J, &[("/operations", r#"{"name":"x"}"#)]),
    (AIDIP, "/operations/*", J, &[("/operations/0", r#""translateText""#)]),
    (AIDIP, "/operations/*/name", "aidip/operation-required", &[("/operations/0/name", R)]),
    (AIDIP, "/operations/*/description", "aidip/operation-required", &[("/operations/0/description", R)]),
    (AIDIP, "/operations/*/inputs", "aidip/operation-required", &[("/operations/0/inputs", R)]),
    (AIDIP, "/operations/*/outputs", "aidip/operation-required", &[("/operations/0/outputs", R)]),
    (AIDIP, "/operations/*/inputs", "aidip/schema", &[("/operations/0/inputs/required", "[1]")]),
    (AIDIP, "/operations/*/outputs", "aidip/schema", &[("/operations/0/outputs/properties/translated_text", "1")]),
    (AIDIP, "/operations/*/examples", J, &[("/operations/0/examples", r#"{"input":{}}"#)]),
    (AIDIP, "/operations/*/examples/*", J, &[("/operations/0/examples", "[1]")]),
    // A2A Agent Card
    (A2A, "/name", "a2a/required", &[("/name", R)]),
    (A2A, "/description", "a2a/required", &[("/description", R)]),
    (A2A, "/version", "a2a/required", &[("/version", R)]),
    (A2A, "/capabilities", "a2a/required", &[("/capabilities", R)]),
    (A2A, "/defaultInputModes", "a2a/required", &[("/defaultInputModes", R)]),
    (A2A, "/defaultOutputModes", "a2a/required", &[("/defaultOutputModes", R)]),
    (A2A, "/skills", "a2a/required", &[("/skills", R)]),
    (A2A, "", "a2a/interface", &[("/supportedInterfaces", R)]),
    (A2A, "/supportedInterfaces", J, &[("/supportedInterfaces", r#""https://currency.example.com/a2a/v1""#)]),
    (A2A, "/supportedInterfaces", "a2a/interface", &[("/supportedInterfaces", "[]")]),
    (A2A, "/supportedInterfaces/*", J, &[("/supportedInterfaces/0", r#""JSONRPC""#)]),
    (A2A, "/supportedInterfaces/*/url", "a2a/interface", &[("/supportedInterfaces/0/url", R)]),
    (A2A, "/supportedInterfaces/*/protocolBinding", "a2a/interface", &[("/supportedInterfaces/0/protocolBinding", R)]),
    (A2A, "/supportedInterfaces/*/url", "addr/internal", &[("/supportedInterfaces/0/url", r#""https://192.168.0.1/a2a""#)]),
    (A2A, "/url", "addr/internal", &[("/url", r#""https://10.0.0.1/a2a""#)]),
    (A2A, "/additionalInterfaces/*/url", "addr/internal", &[("/additionalInterfaces", r#"[{"url":"https://127.0.0.1/"}]"#)]),
    (A2A, "/documentationUrl", "addr/internal", &[("/documentationUrl", r#""https://localhost/docs""#)]),
    (A2A, "/iconUrl", "addr/internal", &[("/iconUrl", r#""https://[fe80::1]/i.png""#)]),
    (A2A, "/capabilities/streaming", J, &[("/capabilities/streaming", r#""yes""#)]),
    (A2A, "/capabilities/pushNotifications", J, &[("/capabilities/pushNotifications", "0")]),
    (A2A, "/capabilities/extendedAgentCard", J, &[("/capabilities/extendedAgentCard", r#""no""#)]),
    (A2A, "/provider", J, &[("/provider", r#""Example FX""#)]),
    (A2A, "/provider/organization", "a2a/provider-required", &[("/provider/organization", R)]),
    (A2A, "/provider/url", "a2a/provider-required", &[("/provider/url", R)]),
    (A2A, "/provider/url", "addr/internal", &[("/provider/url", r#""https://10.9.9.9/""#)]),
    (A2A, "/skills/*", J, &[("/skills/0", r#""convert""#)]),
    (A2A, "/skills/*/id", "a2a/skill-required", &[("/skills/0/id", R)]),
    (A2A, "/skills/*/name", "a2a/skill-required", &[("/skills/0/name", R)]),
    (A2A, "/skills/*/description", "a2a/skill-required", &[("/skills/0/description", R)]),
    (A2A, "/skills/*/tags", "a2a/skill-required", &[("/skills/0/tags", R)]),
    (A2A, "/skills/*/examples", J, &[("/skills/0/examples", r#""How much?""#)]),
    (A2A, "/skills/*/inputModes", J, &[("/skills/0/inputModes", r#""text/plain""#)]),
    (A2A, "/skills/*/outputModes", J, &[("/skills/0/outputModes", "[1]")]),
    (A2A, "/signatures", J, &[("/signatures", r#"{"protected":"e30","signature":"AA"}"#)]),
    (A2A, "/signatures/*", J, &[("/signatures", r#"["e30..AA"]"#)]),
    (A2A, "/signatures/*/protected", "a2a/signature", &[("/signatures", r#"[{"signature":"AA"}]"#)]),
    (A2A, "/signatures/*/signature", "a2a/signature", &[("/signatures", r#"[{"protected":"e30"}]"#)]),
    (A2A, "/signatures/*/protected", "a2a/signature-encoding", &[("/signatures", r#"[{"protected":"e30=","signature":"AA"}]"#)]),
    (A2A, "/signatures/*/signature", "a2a/signature-encoding", &[("/signatures", r#"[{"protected":"e30","signature":"A+/A"}]"#)]),
    (A2A, "/signatures/*/header", J, &[("/signatures", r#"[{"protected":"e30","signature":"AA","header":"kid"}]"#)]),
];

/// Every rule of the table has a failing document here, and each one gives
/// its code at a pointer under the rule's pattern, while the unedited
/// example is clean. A rule added without a case fails this test.
#[test]
fn every_rule_has_a_failing_document() {
    lint_support::every_rule_has_a_failing_document(formats::RULES, CASES, example_of);
}

/// The examples the task names, each with the code it must give.
#[test]
fn named_seed_violations() {
    let cases: &[(&str, Format, &str)] = &[
        // 004: capabilities given as a string.
        (
            r#"{"name":"n","description":"d","endpoint":"https://a.example.com/x","capabilities":"translation","publisher":"p","operations":[]}"#,
            AIDIP,
            J,
        ),
        // 000 4.1: an operation without description.
        (
            r#"{"woa_version":"1","transports":{},"agents":[{"id":"a","name":"n","description":"d","inputs":{},"outputs":{},"transports":[],"operations":[{"name":"op"}]}]}"#,
            WOA,
            "woa/operation-required",
        ),
        // 001 4.2: empty authority.
        (
            r#"{"name":"p","version":"1.0.0","url":"agent:///planner","skills":[{"id":"a","name":"n","description":"d"}]}"#,
            AG,
            "agent/uri",
        ),
        // 001 7.1.3: unregistered interactionModel.
        (
            r#"{"name":"p","version":"1.0.0","interactionModel":["smoke-signals"],"skills":[{"id":"a","name":"n","description":"d"}]}"#,
            AG,
            "agent/interaction-model",
        ),
        // 001 Appendix E: agents: {}.
        (r#"{"agents":{}}"#, REG, "registry/agents-empty"),
        // 002 9: an input parameter without type.
        (
            r#"{"awp_version":"0.2","domain":"a.example.com","intent":"i","actions":[{"id":"a","description":"d","auth_required":false,"inputs":{"q":{"required":true}},"outputs":{},"endpoint":"/a","method":"GET"}]}"#,
            AWP,
            "awp/input-type",
        ),
        // 002 14: synthetic without its origin fields.
        (
            r#"{"awp_version":"0.2","domain":"a.example.com","intent":"i","actions":[],"source":"synthetic"}"#,
            AWP,
            "awp/synthetic-origin",
        ),
        // 003: goal_subscriptions entry without goal_id; input_schema not a schema.
        (
            r#"{"agent_id":"01HZQK3P8EMXR9V7T5N2W4J6C0","name":"n","version":"1.0.0","capabilities":[{"id":"a"}],"endpoint":{"protocol":"https","url":"https://a.example.com/"},"goal_subscriptions":[{"priority":0.1}]}"#,
            CARD,
            "agentcard/goal-required",
        ),
        (
            r#"{"agent_id":"01HZQK3P8EMXR9V7T5N2W4J6C0","name":"n","version":"1.0.0","capabilities":[{"id":"a","input_schema":"object"}],"endpoint":{"protocol":"https","url":"https://a.example.com/"}}"#,
            CARD,
            "agentcard/schema",
        ),
    ];
    for (doc, format, code) in cases {
        let r = lint_bytes(doc.as_bytes(), None).expect(doc);
        assert_eq!(r.format, *format, "{doc}");
        assert!(
            r.findings
                .iter()
                .any(|f| f.code == *code && f.severity == Severity::Error),
            "{doc}: {code} not in {:#?}",
            r.findings
        );
    }
}

/// the AgentCard draft "Serialisation": validators MUST accept the card embedded as a
/// JSON string as well as the object; the string form is linted as the card.
#[test]
fn agentcard_embedded_as_a_json_string_is_accepted() {
    let card = String::from_utf8(example("agentcard.json")).expect("utf-8");
    let embedded = serde_json::to_vec(&Value::String(card)).expect("json");
    let r = lint_bytes(&embedded, None).expect("the embedded form is accepted");
    assert_eq!(r.format, Format::AgentCard);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    let r = lint_bytes(&embedded, Some(Format::AgentCard)).expect("forced");
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    // Errors inside the embedded card are found as in the object form.
    let mut v: Value = serde_json::from_slice(&example("agentcard.json")).expect("json");
    v["capabilities"] = json!([]);
    let embedded = serde_json::to_vec(&Value::String(v.to_string())).expect("json");
    let r = lint_bytes(&embedded, None).expect("embedded");
    assert!(r
        .findings
        .iter()
        .any(|f| f.code == "agentcard/capabilities-empty"));
    // A string holding something else is no descriptor.
    assert!(lint_bytes(br#""{\"woa_version\":\"1\"}""#, None).is_err());
}

/// Every code in the table is documented in docs/formats.md.
#[test]
fn every_code_is_in_the_docs() {
    let doc =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/formats.md"))
            .expect("docs/formats.md");
    let undocumented: BTreeSet<&str> = formats::RULES
        .iter()
        .map(|r| r.code)
        .filter(|c| !doc.contains(&format!("`{c}`")))
        .collect();
    assert!(
        undocumented.is_empty(),
        "not in docs/formats.md: {undocumented:?}"
    );
}
