//! What a new user reads when something fails: each message names what
//! failed and what to do (the key's thumbprint and the JWS kid for a wrong
//! key, the rewritten fields and --print-base for a broken response
//! signature, --max-age, the formats lint knows, the public key to give
//! verify, the text near a JSON error), and the three refusals met when
//! trying a server on this machine (a loopback host, a local CA, an MCP
//! Server Card's endpoint on an internal host) each name their flag.

#[cfg(feature = "net")]
mod net_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

struct Tmp(PathBuf);
impl Tmp {
    fn new(tag: &str) -> Tmp {
        let d = std::env::temp_dir().join(format!("agentsig-msg-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Tmp(d)
    }
    fn run(&self, args: &[&str]) -> (i32, String) {
        let o: Output = Command::new(env!("CARGO_BIN_EXE_agentsig"))
            .args(args)
            .current_dir(&self.0)
            .env_remove("AGENTSIG_PASSPHRASE")
            .env_remove("AGENTSIG_ALLOW_PRIVATE_NETWORKS")
            .env_remove("AGENTSIG_CA_FILE")
            .output()
            .unwrap();
        let text =
            String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
        (o.status.code().unwrap_or(-1), text)
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}
impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn signed_descriptor(t: &Tmp) {
    let agent = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/agent.json");
    std::fs::copy(agent, t.path("agent.json")).unwrap();
    assert_eq!(t.run(&["keygen", "--out", "k", "--kid", "k1"]).0, 0);
    let (code, out) = t.run(&["sign", "agent.json", "--key", "k.pem"]);
    assert_eq!(code, 0, "{out}");
}

/// `verify` of the descriptor against the saved response.
const VERIFY_SAVED: [&str; 6] = [
    "verify",
    "agent.json",
    "--response",
    "saved.http",
    "--jwks",
    "k.jwks.json",
];

fn thumbprint(jwk: &Path) -> String {
    let j: serde_json::Value = serde_json::from_slice(&std::fs::read(jwk).unwrap()).unwrap();
    agentsig::jwk::Jwk::from_value(&j)
        .unwrap()
        .to_verifying_key(None)
        .unwrap()
        .thumbprint()
}

#[test]
fn a_wrong_key_names_its_thumbprint_and_the_jws_kid() {
    let t = Tmp::new("wrongkey");
    signed_descriptor(&t);
    // Another key published under the same kid.
    assert_eq!(t.run(&["keygen", "--out", "other", "--kid", "k1"]).0, 0);
    let (code, out) = t.run(&["verify", "agent.json", "--jwks", "other.jwks.json"]);
    assert_eq!(code, 1, "{out}");
    let tp = thumbprint(&t.path("other.jwk.json"));
    assert!(
        out.contains(&format!(
            "the key tried has thumbprint {tp} and the JWS names kid \"k1\""
        )),
        "{out}"
    );
}

/// A saved response of the signed descriptor, with its fields as
/// `sign` wrote them to FILE.headers, `edit` applied to them.
fn saved_response(t: &Tmp, edit: impl Fn(&str) -> String) -> String {
    let fields = std::fs::read_to_string(t.path("agent.json.headers")).unwrap();
    let mut r = b"HTTP/1.1 200 OK\r\n".to_vec();
    for l in fields.lines() {
        r.extend_from_slice(edit(l).as_bytes());
        r.extend_from_slice(b"\r\n");
    }
    r.extend_from_slice(b"\r\n");
    r.extend_from_slice(&std::fs::read(t.path("agent.json")).unwrap());
    std::fs::write(t.path("saved.http"), r).unwrap();
    fields
}

#[test]
fn a_host_changed_content_type_is_named_with_print_base() {
    let t = Tmp::new("ctype");
    signed_descriptor(&t);
    saved_response(&t, |l| {
        if l.to_ascii_lowercase().starts_with("content-type:") {
            format!("{l}; charset=utf-8")
        } else {
            l.to_owned()
        }
    });
    let (code, out) = t.run(&VERIFY_SAVED);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("content-type (a host may add \"; charset=utf-8\")")
            && out.contains("--print-base"),
        "{out}"
    );
}

#[test]
fn a_signature_too_old_names_max_age() {
    let t = Tmp::new("maxage");
    signed_descriptor(&t);
    let fields = saved_response(&t, str::to_owned);
    let created: i64 = fields
        .split("created=")
        .nth(1)
        .and_then(|s| s.split(';').next())
        .and_then(|s| s.parse().ok())
        .unwrap();
    let now = (created + 441).to_string();
    let mut args = VERIFY_SAVED.to_vec();
    args.extend(["--max-age", "300", "--now", &now]);
    let (code, out) = t.run(&args);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("441 s old, more than the 300 s allowed") && out.contains("--max-age SECONDS"),
        "{out}"
    );
}

#[test]
fn lint_of_an_unknown_document_lists_the_formats() {
    let t = Tmp::new("lint");
    std::fs::write(t.path("notes.json"), br#"{"hello": "world"}"#).unwrap();
    let (code, out) = t.run(&["lint", "notes.json"]);
    assert_eq!(code, 2, "{out}");
    for f in agentsig::formats::ALL {
        assert!(
            out.contains(&format!("{} (", f.name())),
            "{}: {out}",
            f.name()
        );
    }
}

#[test]
fn a_private_key_given_to_verify_gets_a_hint() {
    let t = Tmp::new("private");
    signed_descriptor(&t);
    let (code, out) = t.run(&["verify", "agent.json", "--key", "k.pem"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("k.pem: note: this is a private key; verifying needs only the public key"),
        "{out}"
    );
    let (code, out) = t.run(&["verify", "agent.json", "--key", "k.pub.pem"]);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("private key"), "{out}");
}

#[test]
fn a_json_error_shows_the_text_near_it() {
    let t = Tmp::new("json");
    std::fs::write(
        t.path("bad.json"),
        "{\n  \"name\": \"x\",\n  \"skills\": [1, 2,]\n}\n",
    )
    .unwrap();
    let (code, out) = t.run(&["lint", "bad.json"]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains(r#"line 3, column 19, near "  \"skills\": [1, 2,]""#),
        "{out}"
    );
    assert!(!out.contains("(at \"\")"), "{out}");
}

/// A usage error's `--json` report says what the text says (the argument
/// and why it is refused), not only the kind of mistake; a crawl name Redis
/// keys could not carry is such an error, named before any connection.
#[test]
fn a_usage_error_in_json_names_the_argument() {
    let message = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_agentsig"))
            .args(args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{o:?}");
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one report");
        assert_eq!(r["error"]["code"], "usage", "{r}");
        r["error"]["message"].as_str().unwrap().to_owned()
    };
    let m = message(&["verify", "--no-such-flag", "--json"]);
    assert!(m.contains("'--no-such-flag'"), "{m}");
    let m = message(&["pin", "check", "--json"]);
    assert!(m.contains("--pin-store <STORE>"), "{m}");
    let m = message(&[
        "crawl",
        "status",
        "a}b",
        "--redis",
        "redis://127.0.0.1:1",
        "--json",
    ]);
    assert!(
        m.contains("'a}b'") && m.contains("1 to 64 characters of A-Z a-z 0-9 . _ -"),
        "{m}"
    );
}

/// The three first mistakes of a new publisher name their fix: verifying
/// before signing (no FILE.jws), a URL given to `--jwks`, a PEM key given
/// to `--jwks`.
#[test]
fn first_mistakes_name_their_fix() {
    let t = Tmp::new("first");
    let agent = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/agent.json");
    std::fs::copy(agent, t.path("agent.json")).unwrap();
    assert_eq!(t.run(&["keygen", "--out", "k", "--kid", "k1"]).0, 0);
    let (code, out) = t.run(&["verify", "agent.json", "--jwks", "k.jwks.json"]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("agent.json: not signed: there is no agent.json.jws beside it; run `agentsig sign agent.json --key KEY`, or give `--jws`"),
        "{out}"
    );
    assert_eq!(t.run(&["sign", "agent.json", "--key", "k.pem"]).0, 0);
    let (code, out) = t.run(&[
        "verify",
        "agent.json",
        "--jwks",
        "https://example.com/jwks.json",
    ]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("`--jwks` takes a file; discovery from a URL is `agentsig verify URL`"),
        "{out}"
    );
    for pem in ["k.pem", "k.pub.pem"] {
        let (code, out) = t.run(&["verify", "agent.json", "--jwks", pem]);
        assert_eq!(code, 2, "{out}");
        assert!(
            out.contains(&format!(
                "{pem}: a PEM key, not a JWK Set: use `--key {pem}`"
            )),
            "{out}"
        );
    }
    let (code, out) = t.run(&["verify", "agent.json", "--key", "k.pub.pem"]);
    assert_eq!(code, 0, "{out}");
}

/// Commands say what they did: `http sign --out` names the file and the
/// fields it added; `serve --base-url` names the catalog and the
/// `/server-card` paths it built; `sign --help` lists every `--format`.
#[test]
fn commands_say_what_they_wrote_and_built() {
    let t = Tmp::new("said");
    assert_eq!(t.run(&["keygen", "--out", "k", "--kid", "k1"]).0, 0);
    std::fs::write(
        t.path("req.http"),
        "GET /x HTTP/1.1\r\nHost: api.example\r\n\r\n",
    )
    .unwrap();
    let (code, out) = t.run(&[
        "http",
        "sign",
        "req.http",
        "--key",
        "k.pem",
        "--out",
        "signed.http",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("signed req.http: wrote signed.http (")
            && out.contains(
                "Signature-Input, Signature added (label sig1, keyid k1, ecdsa-p256-sha256)"
            ),
        "{out}"
    );

    let (code, help) = t.run(&["sign", "--help"]);
    assert_eq!(code, 0);
    for f in agentsig::formats::ALL {
        assert!(
            help.contains(f.name()),
            "sign --help lacks {}: {help}",
            f.name()
        );
    }

    std::fs::create_dir(t.path("site")).unwrap();
    let card = serde_json::json!({
        "$schema": "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
        "name": "com.example/weather", "version": "1.0.0", "description": "Forecasts.",
        "remotes": [{"type": "streamable-http", "url": "https://example.com/mcp"}]
    });
    std::fs::write(t.path("site/card.json"), card.to_string()).unwrap();
    let log = std::fs::File::create(t.path("serve.log")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentsig"))
        .args(["serve", "site", "--key", "k.pem", "--listen", "127.0.0.1:0"])
        .args(["--base-url", "https://example.com"])
        .current_dir(&t.0)
        .stderr(log)
        .spawn()
        .unwrap();
    let mut text = String::new();
    for _ in 0..200 {
        text = std::fs::read_to_string(t.path("serve.log")).unwrap_or_default();
        if text.contains("serving site") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        text.contains("built /.well-known/ai-catalog.json from site: 1 entries"),
        "{text}"
    );
    assert!(
        text.contains("MCP Server Cards also served at /mcp/server-card"),
        "{text}"
    );
}

/// Verifying a URL on a loopback host without the opt-in: refused before
/// connecting, and the refusal names `--allow-private-networks`.
#[cfg(feature = "net")]
#[test]
fn a_loopback_url_refusal_names_allow_private_networks() {
    let t = Tmp::new("loopback");
    let srv = net_support::Server::start(&net_support::Ca::new(), &["localhost"]);
    for host in ["localhost", "127.0.0.1"] {
        let (code, out) = t.run(&["verify", &srv.url(host, "/agent.json")]);
        assert_eq!(code, 1, "{host}: {out}");
        assert!(
            out.contains("is loopback") && out.contains("opt in with --allow-private-networks"),
            "{host}: {out}"
        );
    }
    assert_eq!(srv.accepted(), 0);
}

/// A server whose certificate a CA the verifier does not trust issued:
/// rustls's `UnknownIssuer`, and the failure names `--ca-file`.
#[cfg(feature = "net")]
#[test]
fn an_unknown_issuer_names_ca_file() {
    let t = Tmp::new("issuer");
    let srv = net_support::Server::start(&net_support::Ca::new(), &["agent.example"]);
    srv.route(
        "/agent.json",
        net_support::Resp::ok("application/json", "{}"),
    );
    let (code, out) = t.run(&[
        "verify",
        &srv.url("agent.example", "/agent.json"),
        "--allow-private-networks",
        "--resolve-to",
        "agent.example=127.0.0.1",
    ]);
    assert_ne!(code, 0, "{out}");
    assert!(
        out.contains("UnknownIssuer") && out.contains("give its certificate with --ca-file FILE"),
        "{out}"
    );
}

/// An MCP Server Card whose remote is on a loopback host.
const LOOPBACK_MCP_CARD: &str = r#"{"$schema": "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
 "name": "io.example/weather", "version": "1.0.0", "description": "Weather",
 "remotes": [{"type": "streamable-http", "url": "https://127.0.0.1:8443/mcp"}]}"#;

/// The `addr/internal` message on an MCP Server Card cites the MCP
/// Server Card draft, not the agent URI drafts, and names the flags of a
/// local trial.
fn assert_cites_the_mcp_draft(out: &str) {
    assert!(
        out.contains("addr/internal")
            && out.contains("the MCP Server Card draft")
            && out.contains("--resolve-to HOST=127.0.0.1")
            && out.contains("--allow-private-networks")
            && !out.contains("draft-narvaneni-agent-uri"),
        "{out}"
    );
}

/// An AI Catalog of one entry, the loopback MCP Server Card inline.
fn catalog_with_the_card() -> String {
    let card: serde_json::Value = serde_json::from_str(LOOPBACK_MCP_CARD).unwrap();
    serde_json::json!({"specVersion": "1.0", "entries": [
        {"identifier": "urn:example:weather", "displayName": "Weather",
         "mediaType": "application/mcp-server-card+json", "data": card}]})
    .to_string()
}

#[test]
fn an_mcp_card_endpoint_on_loopback_cites_the_mcp_draft_and_names_resolve_to() {
    let t = Tmp::new("mcp");
    std::fs::write(t.path("card.json"), LOOPBACK_MCP_CARD).unwrap();
    let (code, out) = t.run(&["lint", "card.json"]);
    assert_eq!(code, 1, "{out}");
    assert_cites_the_mcp_draft(&out);
    // Inside a catalog: the entry fails with the same message...
    std::fs::write(t.path("catalog.json"), catalog_with_the_card()).unwrap();
    let (code, out) = t.run(&["verify", "catalog.json", "--allow-unsigned"]);
    assert_eq!(code, 1, "{out}");
    assert_cites_the_mcp_draft(&out);
}

/// ...and a local trial's `--allow-private-networks` accepts the endpoint
/// (`Verifier::allow_internal_endpoints`), for a catalog read from a file
/// and for one served on this machine: the card is then unsigned, not
/// failed, and says why it passed.
#[cfg(feature = "net")]
#[test]
fn a_local_trial_of_a_catalog_passes_the_mcp_endpoint_lint() {
    let t = Tmp::new("mcp-local");
    std::fs::write(t.path("catalog.json"), catalog_with_the_card()).unwrap();
    let (code, out) = t.run(&[
        "verify",
        "catalog.json",
        "--allow-unsigned",
        "--allow-private-networks",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("accepted for a local trial") && !out.contains("addr/internal"),
        "{out}"
    );

    let ca = net_support::Ca::new();
    std::fs::write(t.path("ca.pem"), ca.pem()).unwrap();
    let srv = net_support::Server::start(&ca, &["agent.example"]);
    srv.route(
        "/card.json",
        net_support::Resp::ok("application/mcp-server-card+json", LOOPBACK_MCP_CARD),
    );
    let catalog = serde_json::json!({"specVersion": "1.0", "entries": [
        {"identifier": "urn:example:weather", "displayName": "Weather",
         "mediaType": "application/mcp-server-card+json",
         "url": srv.url("agent.example", "/card.json")}]});
    srv.route(
        "/.well-known/ai-catalog.json",
        net_support::Resp::ok("application/ai-catalog+json", catalog.to_string()),
    );
    let (code, out) = t.run(&[
        "verify",
        &srv.url("agent.example", "/.well-known/ai-catalog.json"),
        "--allow-unsigned",
        "--allow-private-networks",
        "--ca-file",
        "ca.pem",
        "--resolve-to",
        "agent.example=127.0.0.1",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("accepted for a local trial") && !out.contains("addr/internal"),
        "{out}"
    );
    assert_eq!(srv.hit_count("/card.json"), 1);
}
