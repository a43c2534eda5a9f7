//! Lint and A2A normalization never panic: every node of every example,
//! replaced by every JSON type, linted as every format.

use agentsig::{a2a, formats};
use serde_json::{json, Value};

fn examples() -> Vec<Value> {
    [
        "agent.json",
        "agents.json",
        "awp.agent.json",
        "woa.json",
        "agentcard.json",
        "aidip.json",
        "a2a-agent-card.json",
    ]
    .iter()
    .map(|f| {
        let p = format!("{}/examples/{f}", env!("CARGO_MANIFEST_DIR"));
        serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
    })
    .collect()
}

/// JSON pointers of every node.
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    out.push(at.clone());
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                pointers(
                    x,
                    format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                pointers(x, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn type_confusion_never_panics() {
    let replacements = [
        json!(null),
        json!(0),
        json!(-1.5e300),
        json!(""),
        json!("[::ffff:0:0"),
        json!(true),
        json!([]),
        json!({}),
        json!([null]),
        json!({"": ""}),
    ];
    let mut runs = 0usize;
    let mut with_errors = 0usize;
    for doc in examples() {
        let mut ps = Vec::new();
        pointers(&doc, String::new(), &mut ps);
        for p in &ps {
            for r in &replacements {
                let mut d = doc.clone();
                if let Some(slot) = d.pointer_mut(p) {
                    *slot = r.clone();
                }
                for f in formats::ALL {
                    let report = formats::lint(f, &d);
                    runs += 1;
                    with_errors += usize::from(report.has_errors());
                }
                let _ = formats::detect(&d);
                let _ = a2a::normalize(&d);
            }
        }
    }
    assert!(runs > 1000, "{runs}");
    assert!(with_errors > runs / 2, "{with_errors} of {runs}");
}
