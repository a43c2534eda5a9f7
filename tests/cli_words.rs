//! The same words for the same things on every subcommand (docs/report.md,
//! "Command-line words"): an option name takes the same value name
//! wherever it appears, a signing command takes its private key as --key
//! and --alg, and `delegation mint` still accepts the names it had before
//! (--signing-key, --signing-alg) as hidden aliases.

use std::collections::BTreeMap;
use std::process::Command;

fn help(words: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_agentsig"))
        .args(words)
        .arg("--help")
        .output()
        .unwrap();
    assert!(o.status.success(), "{words:?}");
    String::from_utf8(o.stdout).unwrap()
}

/// The subcommand names in a `--help` "Commands:" list.
fn commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut on = false;
    for line in text.lines() {
        if line.starts_with("Commands:") {
            on = true;
            continue;
        }
        if on {
            if !line.starts_with("  ") {
                break;
            }
            let rest = &line[2..];
            if rest.starts_with(' ') {
                continue;
            }
            if let Some(n) = rest.split_whitespace().next() {
                if n != "help" {
                    out.push(n.to_owned());
                }
            }
        }
    }
    out
}

/// Every leaf subcommand, as its words.
fn leaves() -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for top in commands(&help(&[])) {
        let subs = commands(&help(&[&top]));
        if subs.is_empty() {
            out.push(vec![top]);
        } else {
            out.extend(subs.into_iter().map(|s| vec![top.clone(), s]));
        }
    }
    out
}

/// `(--option, VALUE-NAME or "")` for each option line of a help text.
fn options(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        // Option lines start at a small indent; wrapped description lines
        // are indented further and never begin with "--NAME <" or "-c, ".
        if line.len() - t.len() > 6 {
            continue;
        }
        let t = t
            .strip_prefix("-c, ")
            .or_else(|| t.strip_prefix("-h, "))
            .or_else(|| t.strip_prefix("-V, "))
            .unwrap_or(t);
        let Some(rest) = t.strip_prefix("--") else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        let after = &rest[name.len()..];
        let value = after
            .strip_prefix(" <")
            .and_then(|v| v.split_once('>'))
            .map(|(v, _)| v.to_owned())
            .unwrap_or_default();
        out.push((format!("--{name}"), value));
    }
    out
}

#[test]
fn an_option_takes_the_same_value_name_everywhere() {
    // Options whose name is shared by things that differ: --out is a FILE,
    // keygen's PREFIX or man's DIR; --issuer is an accepted iss (delegation)
    // or the URL serve publishes as.
    const DIFFERENT: &[&str] = &["--out", "--issuer"];
    let mut seen: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for words in leaves() {
        let refs: Vec<&str> = words.iter().map(String::as_str).collect();
        for (opt, value) in options(&help(&refs)) {
            seen.entry(opt)
                .or_default()
                .entry(value)
                .or_default()
                .push(words.join(" "));
        }
    }
    assert!(
        seen.contains_key("--key") && seen.contains_key("--json"),
        "{seen:?}"
    );
    let mut bad = Vec::new();
    for (opt, values) in &seen {
        if values.len() > 1 && !DIFFERENT.contains(&opt.as_str()) {
            bad.push(format!("{opt}: {values:?}"));
        }
        // clap's default value names (the field name in capitals, with
        // underscores) are replaced by the shared words.
        for v in values.keys() {
            assert!(!v.contains('_'), "{opt} <{v}>: use the shared value names");
        }
    }
    assert!(bad.is_empty(), "value names differ:\n{}", bad.join("\n"));
    // The shared words themselves.
    for (opt, want) in [
        ("--key", "KEY"),
        ("--alg", "ALG"),
        ("--kid", "KID"),
        ("--passphrase-file", "FILE"),
        ("--now", "UNIX-SECONDS"),
        ("--max-age", "DURATION"),
        ("--skew", "DURATION"),
        ("--expires-in", "DURATION"),
        ("--pin-store", "STORE"),
        ("--replay-store", "STORE"),
        ("--jws", "FILE"),
        ("--request", "FILE"),
        ("--ca-file", "FILE"),
    ] {
        let values = seen.get(opt).unwrap_or_else(|| panic!("{opt} not found"));
        assert!(
            values.len() == 1 && values.contains_key(want),
            "{opt}: {values:?}"
        );
    }
}

#[test]
fn signing_commands_take_key_and_alg() {
    for words in [
        &["sign"][..],
        &["http", "sign"],
        &["delegation", "mint"],
        &["pin", "announce"],
        &["serve"],
    ] {
        let text = help(words);
        let opts = options(&text);
        for want in ["--key", "--alg", "--passphrase-file"] {
            assert!(opts.iter().any(|(o, _)| o == want), "{words:?}: {text}");
        }
        assert!(
            !text.contains("--signing-key"),
            "{words:?}: --signing-key is a hidden alias only: {text}"
        );
        assert!(
            text.contains("Private key to sign with"),
            "{words:?}: the --key wording: {text}"
        );
    }
    // exchange verifies the subject token with --key/--jwks/--alg, so its
    // own private key keeps --signing-key.
    let text = help(&["delegation", "exchange"]);
    assert!(text.contains("--signing-key <KEY>"), "{text}");
}

#[test]
fn old_option_names_of_mint_and_announce_still_work() {
    let d = std::env::temp_dir().join(format!("agentsig-words-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_agentsig"))
            .args(args)
            .current_dir(&d)
            .output()
            .unwrap()
    };
    assert!(run(&["keygen", "--out", "k", "--alg", "ed25519"])
        .status
        .success());
    for (key_opt, alg_opt) in [("--key", "--alg"), ("--signing-key", "--signing-alg")] {
        let o = run(&[
            "delegation",
            "mint",
            key_opt,
            "k.pem",
            alg_opt,
            "EdDSA",
            "--iss",
            "https://as.example",
            "--sub",
            "u",
        ]);
        assert!(
            o.status.success(),
            "{key_opt} {alg_opt}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let tok = String::from_utf8(o.stdout).unwrap();
        let header = tok.split('.').next().unwrap();
        let header: serde_json::Value = serde_json::from_slice(&{
            use base64::Engine as _;
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(header)
                .unwrap()
        })
        .unwrap();
        assert_eq!(header["alg"], "EdDSA", "{key_opt}");
        let o = run(&[
            "pin",
            "announce",
            "id",
            "--new-key",
            "k.pub.pem",
            key_opt,
            "k.pem",
            alg_opt,
            "ed25519",
            "--out",
            &format!("ann{key_opt}.json"),
        ]);
        assert!(
            o.status.success(),
            "pin announce {key_opt}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    // http sign: --kid, and --keyid as its alias (the RFC 9421 parameter).
    std::fs::write(
        d.join("resp.http"),
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi",
    )
    .unwrap();
    for opt in ["--kid", "--keyid"] {
        let o = run(&[
            "http",
            "sign",
            "resp.http",
            "--key",
            "k.pem",
            opt,
            "pub-1",
            "--add-content-digest",
            "sha-256",
        ]);
        assert!(
            o.status.success(),
            "{opt}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("keyid=\"pub-1\""),
            "{opt}"
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}
