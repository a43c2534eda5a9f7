//! The README as a new user reads it: it says how to install the
//! `agentsig` command before it uses it bare, its command table keeps one
//! short line per command (the detail is in docs/cli.md), and every command
//! it names exists.

use std::process::Command;

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap()
}

#[test]
fn install_comes_before_the_first_bare_agentsig_command() {
    let r = readme();
    let install = r
        .find("cargo install --locked --path .")
        .expect("the README says how to install agentsig");
    let first_bare = r
        .lines()
        .scan(0usize, |pos, l| {
            let at = *pos;
            *pos += l.len() + 1;
            Some((at, l))
        })
        .find(|(_, l)| l.trim_start().starts_with("agentsig "))
        .map(|(at, _)| at)
        .expect("a bare agentsig command line");
    assert!(
        install < first_bare,
        "install at {install}, first bare agentsig at {first_bare}"
    );
}

/// The rows of the README's command table.
fn table_rows(r: &str) -> Vec<(String, String)> {
    let start = r.find("| command | what |").expect("the command table");
    r[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            // Split on the cell separator " | " outside backquotes.
            let mut cells = Vec::new();
            let (mut cur, mut code) = (String::new(), false);
            let chars: Vec<char> = l.trim().trim_matches('|').chars().collect();
            let mut i = 0;
            while i < chars.len() {
                let c = chars[i];
                if c == '`' {
                    code = !code;
                }
                if c == '|' && !code && (i == 0 || chars[i - 1] != '\\') {
                    cells.push(cur.trim().to_owned());
                    cur.clear();
                } else {
                    cur.push(c);
                }
                i += 1;
            }
            cells.push(cur.trim().to_owned());
            (cells[0].clone(), cells.get(1).cloned().unwrap_or_default())
        })
        .collect()
}

#[test]
fn the_command_table_keeps_one_short_line_per_command() {
    let rows = table_rows(&readme());
    assert!(rows.len() >= 10, "{rows:?}");
    for (cmd, what) in &rows {
        let words = what.split_whitespace().count();
        assert!(
            words <= 25,
            "{words} words for {cmd}: keep the detail in docs/cli.md"
        );
    }
    let detail =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/cli.md")).unwrap();
    assert!(detail.contains("| command | what |"));
}

#[test]
fn every_command_the_table_names_exists() {
    for (cmd, _) in table_rows(&readme()) {
        // `agentsig WORD ...`: the first word after agentsig, for each
        // command the cell names.
        for part in cmd.split("`agentsig ").skip(1) {
            let word = part
                .split(|c: char| c.is_whitespace() || c == '`' || c == '\\')
                .next()
                .unwrap();
            let o = Command::new(env!("CARGO_BIN_EXE_agentsig"))
                .args([word, "--help"])
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "agentsig {word}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
    }
}

/// Every source draft is cited by its name (draft-narvaneni-agent-uri-03,
/// the Web of Agents draft, AWP v0.2, the AgentCard draft, AIDIP), never by
/// the number of a file a reader of the repository does not have, in the
/// docs, the code's comments and messages, and the packages alike.
#[test]
fn drafts_are_cited_by_name_not_by_seed_number() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut stack = vec![
        root.join("README.md"),
        root.join("docs"),
        root.join("src"),
        root.join("python"),
        root.join("node"),
        root.join("examples"),
    ];
    let mut bad = Vec::new();
    let mut read = 0;
    while let Some(p) = stack.pop() {
        if p.is_dir() {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if matches!(name, "node_modules" | "target" | "__pycache__") {
                continue;
            }
            for e in std::fs::read_dir(&p).unwrap() {
                stack.push(e.unwrap().path());
            }
            continue;
        }
        let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !matches!(ext, "rs" | "md" | "py" | "pyi" | "js" | "mjs" | "ts") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        read += 1;
        // A citation may be wrapped across comment lines: compare with the
        // comment markers and line breaks folded to single spaces.
        let folded: String = text
            .lines()
            .map(|l| {
                l.trim()
                    .trim_start_matches("//!")
                    .trim_start_matches("///")
                    .trim_start_matches("//")
                    .trim()
            })
            .collect::<Vec<_>>()
            .join(" ")
            .to_ascii_lowercase();
        for n in 0..5 {
            if folded.contains(&format!("seed 00{n}")) || folded.contains(&format!("seeds 00{n}")) {
                bad.push(format!("{}: seed 00{n}", p.display()));
            }
        }
        if folded.contains("shared/seeds") {
            bad.push(format!("{}: shared/seeds", p.display()));
        }
    }
    assert!(read > 100, "only {read} files read");
    assert!(
        bad.is_empty(),
        "cite the draft by its name:\n{}",
        bad.join("\n")
    );
}
