//! Keys is a folder of modules with one-way dependencies, and the
//! public paths other code uses are unchanged.

// The public paths, as before the split.
#[allow(unused_imports)]
use agentsig::jwk::{jwks_document, parse_keys, select, Jwk, ToJwk};
#[allow(unused_imports)]
use agentsig::keys::{
    load_signing_key, load_verifying_key, load_verifying_keys, verifying_from_spki, KeyError,
    LoadOptions, SigningKey, VerifyError, VerifyingKey,
};

fn src(path: &str) -> String {
    std::fs::read_to_string(format!("{}/src/{path}", env!("CARGO_MANIFEST_DIR"))).expect(path)
}

/// `jwk` depends on `keys` only for the leaf error type; the key types
/// depend on `jwk`, never the reverse; DID forms are not in `keys`.
#[test]
fn keys_and_jwk_do_not_form_a_cycle() {
    for m in ["types", "load", "generate", "encode", "error", "from_jwk"] {
        assert!(
            std::path::Path::new(&format!("{}/src/keys/{m}.rs", env!("CARGO_MANIFEST_DIR")))
                .is_file(),
            "src/keys/{m}.rs"
        );
    }
    let jwk = src("jwk.rs");
    let uses: Vec<&str> = jwk
        .lines()
        .filter(|l| l.trim_start().starts_with("use ") && l.contains("keys"))
        .collect();
    assert_eq!(
        uses,
        vec!["use crate::keys::error::KeyError;"],
        "jwk.rs imports {uses:?}"
    );
    assert!(!jwk.contains("VerifyingKey::") && !jwk.contains("SigningKey::"));
    let error = src("keys/error.rs");
    assert!(
        error
            .lines()
            .filter(|l| l.starts_with("use "))
            .all(|l| l == "use crate::alg::Algorithm;"),
        "keys/error.rs must stay a leaf"
    );
    for m in [
        "types", "load", "generate", "encode", "error", "from_jwk", "mod",
    ] {
        assert!(
            !src(&format!("keys/{m}.rs")).contains("did:key:z"),
            "DID encoding in keys/{m}.rs"
        );
    }
}

#[test]
fn jwks_document_still_takes_verifying_keys() {
    let k = SigningKey::from_ed25519_seed(&[1u8; 32]).expect("seed");
    let doc = jwks_document(&[k.verifying_key()]);
    let keys = parse_keys(doc.to_string().as_bytes()).expect("parse");
    assert_eq!(keys.len(), 1);
    assert_eq!(
        keys[0].to_verifying_key(None).expect("key").thumbprint(),
        k.verifying_key().thumbprint()
    );
}

/// Every file under `dir` (recursively) whose name ends with one of `exts`.
fn files_under(dir: &std::path::Path, exts: &[&str], out: &mut Vec<std::path::PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            if p.file_name()
                .is_some_and(|n| n != "target" && n != "node_modules")
            {
                files_under(&p, exts, out);
            }
        } else if exts.iter().any(|x| p.to_string_lossy().ends_with(x)) {
            out.push(p);
        }
    }
}

/// Comments state the rule and its RFC or seed section: a pointer to an
/// issue tracker number or to a note outside the repository says nothing to
/// a reader of the source. Upstream references such as `A2A#2096` are fine.
#[test]
fn no_comment_points_to_an_issue_number_or_an_outside_note() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for d in ["src", "tests", "benches", "examples", ".ci", "scripts"] {
        files_under(&root.join(d), &[".rs", ".sh", ".md", "run"], &mut files);
    }
    files.push(root.join("Cargo.toml"));
    let pointer = |l: &str| {
        let l = l.to_ascii_lowercase();
        l.contains("research note")
            || l.match_indices("issue ")
                .any(|(i, _)| l[i + 6..].starts_with(|c: char| c.is_ascii_digit()))
            || l.match_indices("issues ")
                .any(|(i, _)| l[i + 7..].starts_with(|c: char| c.is_ascii_digit()))
    };
    let mut found = Vec::new();
    for f in &files {
        // The Redis store is being replaced by the `redis` crate in its own
        // change; its header is rewritten there.
        if f.ends_with("src/replay/redis.rs") || f.ends_with("tests/module_layout.rs") {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap_or_default();
        for (n, l) in text.lines().enumerate() {
            if pointer(l) {
                found.push(format!("{}:{}: {l}", f.display(), n + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "comments pointing to issue numbers or notes:\n{}",
        found.join("\n")
    );
}

/// The layer of each top-level module of the library, from
/// /work/shared/design/layers.md as adopted in `docs/embedding.md`: each
/// module imports only modules of its own layer or below (tests, benches,
/// examples and the command line in `src/cli` may reach anywhere).
const LAYERS: &[(usize, &[&str])] = &[
    (
        1,
        &[
            "alg", "b64", "text", "json", "jcs", "sfv", "clock", "digest", "lockfile",
        ],
    ),
    (2, &["keys", "jwk", "did", "trust"]),
    (3, &["replay", "pin"]),
    (4, &["policy"]),
    (
        5,
        &[
            "jws",
            "jwt",
            "httpsig",
            "descriptor",
            "a2a",
            "delegation",
            "formats",
            "announce",
            "webbotauth",
            "catalog",
        ],
    ),
    (
        6,
        &[
            "verifier",
            "report",
            "webbotauth_report",
            "batch",
            "facade",
            "inspect",
        ],
    ),
    (7, &["server", "net"]),
];

/// Every library module (`a::b` for src/a/b.rs, `a` for src/a.rs or
/// src/a/mod.rs) with its source, `#[cfg(test)] mod tests` and comment lines
/// removed. The binary (src/main.rs, src/cli) is not part of the library.
fn library_modules() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    files_under(&root, &[".rs"], &mut files);
    let mut out = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&root).expect("under src");
        let mut parts: Vec<String> = rel
            .with_extension("")
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.last().is_some_and(|p| p == "mod") {
            parts.pop();
        }
        if parts == ["lib"] || parts == ["main"] || parts[0] == "cli" {
            continue;
        }
        let text = std::fs::read_to_string(&f).expect("read");
        let text = match text.find("#[cfg(test)]\nmod tests") {
            Some(i) => &text[..i],
            None => &text[..],
        };
        let code: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .map(|l| format!("{l}\n"))
            .collect();
        out.push((parts.join("::"), code));
    }
    out
}

/// The path items after `prefix` at each of its occurrences in `code`:
/// `crate::a::b::C` gives `a::b::C`, `crate::{a, b::{c, d}}` gives `a` and
/// `b`.
fn paths_after(code: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in code.match_indices(prefix) {
        if code[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
        {
            continue;
        }
        let rest = &code[i + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0usize;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => out.push(std::mem::take(&mut item)),
                    _ if depth == 0 => item.push(c),
                    _ => {}
                }
            }
            out.push(item);
        } else {
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            out.push(rest[..end].to_owned());
        }
    }
    out.into_iter()
        .map(|p| p.trim().trim_end_matches("::").to_owned())
        .filter(|p| !p.is_empty())
        .collect()
}

/// The dependency edges between library modules (file level), from every
/// `crate::` and `super::` path. A module's use of its own ancestors
/// (a child reaching the items its parent re-exports) is not an edge.
fn module_edges() -> Edges {
    let modules = library_modules();
    let names: std::collections::BTreeSet<&str> = modules.iter().map(|(n, _)| n.as_str()).collect();
    // Items the crate root re-exports (`crate::SigningKey`): their module.
    let lib = std::fs::read_to_string(format!("{}/src/lib.rs", env!("CARGO_MANIFEST_DIR")))
        .expect("lib.rs");
    let mut root_items = std::collections::BTreeMap::new();
    for l in lib.lines().filter(|l| l.starts_with("pub use ")) {
        let body = &l["pub use ".len()..];
        let (m, items) = body.split_once("::").expect("pub use m::...");
        for it in items
            .trim_end_matches(';')
            .trim_matches(|c| c == '{' || c == '}')
            .split(',')
        {
            let name = it.rsplit("::").next().unwrap_or(it).trim().to_owned();
            root_items.insert(name, m.trim().to_owned());
        }
    }
    let resolve = |path: &str| -> Option<String> {
        let segs: Vec<&str> = path.split("::").map(str::trim).collect();
        if segs.len() == 1 {
            if let Some(m) = root_items.get(segs[0]) {
                return Some(m.clone());
            }
        }
        (1..=segs.len())
            .rev()
            .map(|k| segs[..k].join("::"))
            .find(|c| names.contains(c.as_str()))
    };
    let mut edges = std::collections::BTreeMap::new();
    for (m, code) in &modules {
        let parent = m.rsplit_once("::").map(|(p, _)| p.to_owned());
        let mut deps = std::collections::BTreeSet::new();
        let mut paths = paths_after(code, "crate::");
        for p in paths_after(code, "super::") {
            paths.push(match &parent {
                Some(pa) => format!("{pa}::{p}"),
                None => p,
            });
        }
        for p in paths {
            if let Some(d) = resolve(&p) {
                let ancestor = m.starts_with(&format!("{d}::"));
                if &d != m && !ancestor {
                    deps.insert(d);
                }
            }
        }
        edges.insert(m.clone(), deps);
    }
    edges
}

type Edges = std::collections::BTreeMap<String, std::collections::BTreeSet<String>>;

/// The import cycles of `edges`: each module that reaches itself, with the
/// direct dependencies that lead back to it.
fn cycles(edges: &Edges) -> Vec<String> {
    let reach = |from: &str| {
        let mut seen = std::collections::BTreeSet::new();
        let mut stack: Vec<String> = edges
            .get(from)
            .map(|d| d.iter().cloned().collect())
            .unwrap_or_default();
        while let Some(n) = stack.pop() {
            if seen.insert(n.clone()) {
                if let Some(next) = edges.get(&n) {
                    stack.extend(next.iter().cloned());
                }
            }
        }
        seen
    };
    let mut out = Vec::new();
    for m in edges.keys() {
        if reach(m).contains(m) {
            let back: Vec<&String> = edges[m].iter().filter(|d| reach(d).contains(m)).collect();
            out.push(format!("{m} -> {back:?} -> ... -> {m}"));
        }
    }
    out
}

/// The imports of `edges` that go up the layer table, and the modules with
/// no layer.
fn upward_imports(edges: &Edges) -> Vec<String> {
    let layer = |m: &str| {
        let top = m.split("::").next().unwrap_or(m);
        LAYERS
            .iter()
            .find(|(_, ms)| ms.contains(&top))
            .map(|(l, _)| *l)
    };
    let mut wrong = Vec::new();
    for (m, deps) in edges {
        let Some(lm) = layer(m) else {
            wrong.push(format!("{m} has no layer in LAYERS"));
            continue;
        };
        for d in deps {
            match layer(d) {
                Some(ld) if ld > lm => {
                    wrong.push(format!("{m} (layer {lm}) imports {d} (layer {ld})"))
                }
                _ => {}
            }
        }
    }
    wrong
}

/// No module imports one that imports it back, directly or through others
/// (file level: `keys::error` is a leaf `jwk` may use while `keys::load`
/// uses `jwk`), and no module imports a module of a higher layer.
#[test]
fn no_import_cycle_and_no_import_up_the_layers() {
    let edges = module_edges();
    let c = cycles(&edges);
    assert!(c.is_empty(), "import cycles:\n{}", c.join("\n"));
    let w = upward_imports(&edges);
    assert!(w.is_empty(), "imports up the layers:\n{}", w.join("\n"));
}

/// The two checks find what they are for: the former `verifier <-> jws`
/// circle and `pin` (state) importing `jws` (a format).
#[test]
fn the_checks_catch_a_cycle_and_an_upward_import() {
    let mut e = Edges::new();
    e.entry("verifier".into())
        .or_default()
        .insert("jws".to_owned());
    e.entry("jws".into())
        .or_default()
        .insert("verifier".to_owned());
    e.entry("pin".into()).or_default().insert("jws".to_owned());
    assert_eq!(cycles(&e).len(), 2);
    let w = upward_imports(&e);
    assert!(
        w.iter()
            .any(|x| x.starts_with("jws (layer 5) imports verifier")),
        "{w:?}"
    );
    assert!(
        w.iter().any(|x| x.starts_with("pin (layer 3) imports jws")),
        "{w:?}"
    );
    e.entry("newmod".into()).or_default();
    assert!(upward_imports(&e)
        .iter()
        .any(|x| x.contains("newmod has no layer")));
}

/// The checker itself: a cycle and an upward import in made-up sources are
/// found by the path extraction the test relies on.
#[test]
fn the_layout_checker_reads_paths() {
    let code = "use crate::{jws::{self, X}, keys};\nlet a = crate::verifier::Verifier::builder();\nuse super::fetch::Fetched;";
    assert_eq!(
        paths_after(code, "crate::"),
        vec!["jws", "keys", "verifier::Verifier::builder"]
    );
    assert_eq!(paths_after(code, "super::"), vec!["fetch::Fetched"]);
    // `lib.rs` is not itself a module here, the binary is skipped, and every
    // library module has a layer.
    let edges = module_edges();
    assert!(edges.contains_key("httpsig::verify") && edges.contains_key("verifier"));
    assert!(!edges.keys().any(|m| m.starts_with("cli")));
    assert!(edges["verifier"].contains("jws"), "{:?}", edges["verifier"]);
}

/// The command-line modules (src/cli/*.rs) import no circle either: an
/// argument type or helper shared by several commands lives in one module
/// they all import (`cli::args`), never in one of the commands.
#[test]
fn the_command_line_modules_import_no_circle() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cli");
    let mut files = Vec::new();
    files_under(&dir, &[".rs"], &mut files);
    let names: Vec<String> = files
        .iter()
        .filter_map(|f| f.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .filter(|n| n != "mod")
        .collect();
    assert!(names.iter().any(|n| n == "http") && names.iter().any(|n| n == "args"));
    let mut edges = Edges::new();
    for f in &files {
        let Some(me) = f.file_stem().map(|s| s.to_string_lossy().into_owned()) else {
            continue;
        };
        if me == "mod" {
            continue;
        }
        let text = std::fs::read_to_string(f).expect("read");
        let code = match text.find("#[cfg(test)]\nmod tests") {
            Some(i) => &text[..i],
            None => &text[..],
        };
        let code: String = code
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .map(|l| format!("{l}\n"))
            .collect();
        let deps = edges.entry(me.clone()).or_default();
        for p in paths_after(&code, "super::") {
            let first = p.split("::").next().unwrap_or("").trim().to_owned();
            if first != me && names.contains(&first) {
                deps.insert(first);
            }
        }
    }
    let c = cycles(&edges);
    assert!(c.is_empty(), "import cycles in src/cli:\n{}", c.join("\n"));
}

/// The Python, Node.js and WebAssembly packages sit over the facade, like
/// the command line, and hold no rule of their own: which failure is a `PolicyRefused`
/// or a `FetchError`, a verifier's options and their defaults, how a
/// request is assembled from its parts and which components are signed by
/// default live in `agentsig::facade`, not in a binding.
#[test]
fn the_bindings_hold_no_rule_of_their_own() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    // Markers of the rules the facade holds: the classification tables, the
    // policy built by hand, the request assembled from its parts, the
    // default covered components, the Web Bot Auth profile's settings.
    let rules = [
        "POLICY_CODES",
        "FETCH_CODES",
        "fn policy_refusal",
        "HttpPolicy::new",
        "webbotauth::Policy",
        "RequestLine::new",
        "SignatureSpec::new",
        "Derived::Authority",
        "fn fill_covered",
        "fn add_strict",
        "AllowList::asymmetric",
        "open_store(",
        "resolve_agent_url",
    ];
    for binding in ["python/src/lib.rs", "node/src/lib.rs", "wasm/src/lib.rs"] {
        let text = std::fs::read_to_string(root.join(binding)).expect(binding);
        let found: Vec<&&str> = rules.iter().filter(|r| text.contains(**r)).collect();
        assert!(
            found.is_empty(),
            "{binding} holds rules of agentsig::facade: {found:?}"
        );
        assert!(
            text.contains("agentsig::facade"),
            "{binding} binds the facade"
        );
    }
}
