//! The nginx snippet `sign --headers-format nginx` writes, and the one
//! docs/static-publishing.md shows, turn off byte ranges (`max_ranges 0`):
//! nginx would otherwise answer a Range request with a 206 carrying the
//! 200's Content-Digest and Signature, which cannot verify.

use std::process::Command;

#[test]
fn nginx_snippets_turn_off_byte_ranges() {
    let dir = std::env::temp_dir().join(format!("agentsig-static-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let agent = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/agent.json");
    std::fs::copy(agent, dir.join("agent.json")).unwrap();
    let key = concat!(env!("CARGO_MANIFEST_DIR"), "/keys/example-p256.pem");
    let o = Command::new(env!("CARGO_BIN_EXE_agentsig"))
        .args([
            "sign",
            "agent.json",
            "--key",
            key,
            "--headers-format",
            "nginx",
            "--headers-out",
            "agent.nginx",
        ])
        .current_dir(&dir)
        .output()
        .unwrap();
    let snippet = std::fs::read_to_string(dir.join("agent.nginx"));
    let _ = std::fs::remove_dir_all(&dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let snippet = snippet.unwrap();
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/static-publishing.md"
    ))
    .unwrap();
    // Every directive the generator writes (other than the signature
    // values) is in the documented snippet, max_ranges 0 among them.
    assert!(snippet.lines().any(|l| l == "max_ranges 0;"), "{snippet}");
    for l in snippet.lines().filter(|l| {
        !l.starts_with('#') && !l.starts_with("add_header") && !l.starts_with("default_type")
    }) {
        assert!(
            doc.contains(&format!("    {l}")),
            "docs/static-publishing.md lacks {l:?}"
        );
    }
}
