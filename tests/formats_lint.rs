//! Issue 11: detection, publication facts and lint of every descriptor
//! format, over the examples in `examples/` and over targeted mutations of
//! them (each trust-relevant MUST rule, with its stable code and pointer).

use agentsig::formats::{self, lint, lint_bytes, Format, Severity};
use agentsig::jws::{self, SignOptions};
use agentsig::trust::{KeySource, StaticKeys};
use agentsig::verifier::Verifier;
use agentsig::{jcs, Algorithm, SigningKey};
use serde_json::{json, Value};
use std::path::PathBuf;

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
        let r = jws::verify(&v, &compact, Some(&canonical)).expect(file);
        assert!(r.verified(), "{file}");
        let mut tampered = canonical.clone();
        tampered.pop();
        tampered.extend_from_slice(b",\"x\":1}");
        let e = jws::verify(&v, &compact, Some(&tampered)).expect_err(file);
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
