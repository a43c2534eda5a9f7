//! Every command block of the README and docs/ that a reader is meant to
//! paste runs here as written, so a doc that stops working fails CI.
//!
//! The convention (stated in docs/cli.md, "Command blocks in these docs"):
//! * a block fenced as ```` ```sh ```` is meant to be pasted: it runs, in
//!   order with the other blocks of its file, in a scratch copy of the
//!   repository (README.md, docs/, examples/, keys/) with this build's
//!   `agentsig` first on `PATH`, under `bash -e -o pipefail`;
//! * a block that is a synopsis or needs what CI does not have (a public
//!   host, minutes of benchmarks, a second terminal) says so on the line
//!   before its fence: `<!-- illustrative: REASON -->`; a whole file of
//!   such blocks says `<!-- illustrative-file: REASON -->` once;
//! * a block without a language whose lines begin with a bare `agentsig`
//!   command is refused: it looks pasteable, so it is either ```` ```sh ````
//!   (and runs) or ```` ```text ```` (a synopsis). Transcripts (`$ agentsig
//!   ...` followed by the output) are read, not pasted.

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[path = "tmp_support/mod.rs"]
mod tmp;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// Each block's time limit (the SoftHSM walkthrough is the slowest: a
/// token, a key, four signatures).
const BLOCK_SECONDS: &str = "120";

#[derive(Debug)]
struct Block {
    /// 1-based line of the opening fence.
    line: usize,
    lang: String,
    body: String,
    /// The reason of an `<!-- illustrative: REASON -->` marker before it.
    illustrative: Option<String>,
}

fn blocks(text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if let Some(rest) = l.strip_prefix("```") {
            let lang = rest.trim().to_owned();
            let start = i;
            let mut body = String::new();
            i += 1;
            while i < lines.len() && lines[i].trim_end() != "```" {
                body.push_str(lines[i]);
                body.push('\n');
                i += 1;
            }
            let illustrative = start
                .checked_sub(1)
                .map(|p| lines[p].trim())
                .and_then(|p| p.strip_prefix("<!-- illustrative:"))
                .and_then(|p| p.strip_suffix("-->"))
                .map(|r| r.trim().to_owned());
            out.push(Block {
                line: start + 1,
                lang,
                body,
                illustrative,
            });
        }
        i += 1;
    }
    out
}

fn doc_files() -> Vec<PathBuf> {
    let mut files = vec![Path::new(ROOT).join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

fn is_shell(lang: &str) -> bool {
    matches!(lang, "sh" | "bash" | "shell")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

/// A scratch copy of what the docs' commands read.
fn scratch(dir: &Path) {
    std::fs::copy(Path::new(ROOT).join("README.md"), dir.join("README.md")).unwrap();
    for d in ["docs", "examples", "keys"] {
        copy_dir(&Path::new(ROOT).join(d), &dir.join(d));
    }
}

#[test]
fn bare_command_blocks_say_whether_they_run() {
    let mut bad = Vec::new();
    for f in doc_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        for b in blocks(&text) {
            let bare = b
                .body
                .lines()
                .any(|l| l.trim_start().starts_with("agentsig "));
            if b.lang.is_empty() && bare {
                bad.push(format!(
                    "{}:{}: a bare agentsig command in a block without a language: fence it as ```sh (it then runs in CI) or ```text (a synopsis)",
                    f.display(),
                    b.line
                ));
            }
            if is_shell(&b.lang) && b.illustrative.as_deref() == Some("") {
                bad.push(format!(
                    "{}:{}: an illustrative marker says why",
                    f.display(),
                    b.line
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn pasted_command_blocks_run_as_written() {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_agentsig"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut ran = 0;
    let mut failed = Vec::new();
    for f in doc_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        if text.contains("<!-- illustrative-file:") {
            continue;
        }
        let runnable: Vec<Block> = blocks(&text)
            .into_iter()
            .filter(|b| is_shell(&b.lang) && b.illustrative.is_none())
            .collect();
        if runnable.is_empty() {
            continue;
        }
        let name = f.file_stem().unwrap().to_string_lossy().into_owned();
        let dir = tmp::TempDir::new(&format!("docblocks-{name}"));
        scratch(&dir);
        for b in runnable {
            ran += 1;
            eprintln!("running {}:{}", f.display(), b.line);
            // Its own process group, its output in files: a server the
            // block left running (a failure before its `kill`) neither
            // holds a pipe open nor outlives the block.
            let out_path = dir.join(".block.out");
            let err_path = dir.join(".block.err");
            let mut child = Command::new("timeout")
                .args([BLOCK_SECONDS, "bash", "-e", "-o", "pipefail", "-c", &b.body])
                .current_dir(&*dir)
                .env("PATH", &path)
                .env("HOME", &*dir)
                .env_remove("AGENTSIG_ALLOW_PRIVATE_NETWORKS")
                .env_remove("AGENTSIG_CA_FILE")
                .stdin(Stdio::null())
                .stdout(std::fs::File::create(&out_path).unwrap())
                .stderr(std::fs::File::create(&err_path).unwrap())
                .process_group(0)
                .spawn()
                .unwrap();
            let status = child.wait().unwrap();
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .stderr(Stdio::null())
                .status();
            let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
            let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
            if !status.success() {
                failed.push(format!(
                    "{}:{} exited {:?}\n--- block\n{}--- stdout\n{}--- stderr\n{}",
                    f.display(),
                    b.line,
                    status.code(),
                    b.body,
                    stdout,
                    stderr
                ));
            }
        }
    }
    assert!(ran >= 5, "only {ran} blocks ran");
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}
