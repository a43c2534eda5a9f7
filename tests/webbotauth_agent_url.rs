//! The agent identity is the origin its keys are fetched from: every
//! `Signature-Agent` value `resolve_agent_url` accepts names, as text, the
//! URL a WHATWG parser (the `url` crate, the fetcher's) reads from it.

use agentsig::webbotauth::{resolve_agent_url, Discovery};

/// Values a WHATWG parser reads differently from their text, or that differ
/// only in spelling: each is either refused or resolved to the origin the
/// parser yields.
const CORPUS: &[&str] = &[
    "https://attacker.example\\.victim.example",
    "https://attacker.example\\@victim.example",
    "https://attacker.example%5C.victim.example",
    "https://attacker%2eexample",
    "https://%61gent.example",
    "https://agent.example:0443",
    "https://agent.example:443",
    "https://agent.example:8443",
    "https://agent.example:08443",
    "https://agent.example:",
    "https://agent.example:65536",
    "https://agent.example:0",
    "https://AGENT.Example",
    "HTTPS://agent.example/",
    "https://agent.example.",
    "https://agent..example",
    "https://0x7f.1",
    "https://2130706433",
    "https://127.0.0.1",
    "https://127.000.0.1",
    "https://1.2.3.4.",
    "https://1.2.3.256",
    "https://[::1]",
    "https://[0:0::1]",
    "https://user@agent.example",
    "https://agent.example/keys/../other.json",
    "https://agent.example/keys/%2e%2E/other.json",
    "https://agent.example/./jwks.json",
    "https://agent.example/jwks.json",
    "https://agent.example?x=1",
    "https://agent.example/a?x='1'",
    "https://agent.example/a\"b",
    "https://agent.example/a<b>",
    "https://agent.example/a`b",
    "https://agent.example/{a}",
    "https://agent.example/a#frag",
    "https://agent.example/a%20b",
    "https://xn--bcher-kva.example",
    "https://agent_1.example",
    "https://agent.example/.well-known/http-message-signatures-directory",
];

#[test]
fn refused_look_alikes() {
    for v in [
        "https://attacker.example\\.victim.example",
        "https://attacker.example%5C.victim.example",
        "https://%61gent.example",
        "https://agent.example:0443",
        "https://agent.example:",
        "https://0x7f.1",
        "https://2130706433",
        "https://1.2.3.4.",
        "https://agent.example.",
        "https://[::1]",
        "https://agent.example/keys/../other.json",
        "https://agent.example/keys/%2e%2E/other.json",
    ] {
        assert!(resolve_agent_url(v, None).is_err(), "{v:?} accepted");
    }
    let a = resolve_agent_url("https://AGENT.example:443/", None).unwrap();
    assert_eq!(a.agent, "https://agent.example");
    assert_eq!(a.origin(), "https://agent.example");
}

#[cfg(feature = "net")]
#[test]
fn whenever_accepted_the_whatwg_parse_has_the_same_origin_and_url() {
    let mut accepted = 0;
    for v in CORPUS {
        let Ok(a) = resolve_agent_url(v, None) else {
            continue;
        };
        accepted += 1;
        let u = url::Url::parse(v).unwrap_or_else(|e| panic!("{v:?} accepted, url: {e}"));
        assert_eq!(
            u.origin().ascii_serialization(),
            a.origin(),
            "{v:?}: the reported origin is not the parsed one"
        );
        match a.discovery {
            Discovery::Directory => {
                assert_eq!(u.path(), "/", "{v:?}");
                assert!(u.query().is_none(), "{v:?}");
            }
            Discovery::JwksUri => assert_eq!(u.as_str(), a.key_set_url, "{v:?}"),
        }
        let fetched = url::Url::parse(&a.key_set_url).unwrap();
        assert_eq!(fetched.origin().ascii_serialization(), a.origin(), "{v:?}");
        assert_eq!(fetched.as_str(), a.key_set_url, "{v:?}");
    }
    // The corpus holds plain values too: the check is not vacuous.
    assert!(accepted >= 8, "only {accepted} accepted");
}
