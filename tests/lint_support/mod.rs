//! Shared by the lint tests (`formats_lint.rs`, `catalog_lint.rs`): edit a
//! document at a JSON pointer, and check that every rule of a table has a
//! document that breaks it.

#![allow(dead_code)]

use agentsig::formats::{lint, Format, Rule};
use serde_json::{json, Value};

/// (format, rule pointer pattern, code, edits: (pointer, JSON value or `-` to remove)).
pub type Case = (
    Format,
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

/// Remove the value at `ptr` (`"-"` as the value) or set it, creating
/// missing objects on the way; `-` as the last token appends to an array.
pub fn edit(doc: &mut Value, ptr: &str, value: &str) {
    let tokens: Vec<String> = ptr
        .split('/')
        .skip(1)
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect();
    let (last, parents) = tokens.split_last().expect("a member pointer");
    let mut cur = doc;
    for t in parents {
        cur = match cur {
            Value::Array(a) => &mut a[t.parse::<usize>().expect("index")],
            Value::Object(o) => o.entry(t.clone()).or_insert_with(|| json!({})),
            other => panic!("{ptr}: cannot descend into {other}"),
        };
    }
    let new: Option<Value> = (value != "-").then(|| serde_json::from_str(value).expect(value));
    match (cur, new) {
        (Value::Object(o), None) => {
            o.remove(last)
                .unwrap_or_else(|| panic!("{ptr}: nothing to remove"));
        }
        (Value::Object(o), Some(v)) => {
            o.insert(last.clone(), v);
        }
        (Value::Array(a), Some(v)) if last == "-" => a.push(v),
        (Value::Array(a), Some(v)) => a[last.parse::<usize>().expect("index")] = v,
        (Value::Array(a), None) => {
            a.remove(last.parse::<usize>().expect("index"));
        }
        (other, _) => panic!("{ptr}: {other} holds no members"),
    }
}

/// Whether a finding's pointer lies at or under a rule's pointer pattern
/// (`*` matches any one token).
pub fn under(pattern: &str, pointer: &str) -> bool {
    let p: Vec<&str> = pattern.split('/').skip(1).collect();
    let f: Vec<&str> = pointer.split('/').skip(1).collect();
    f.len() >= p.len() && p.iter().zip(&f).all(|(a, b)| *a == "*" || a == b)
}

/// Every row of `rules` has a case in `cases`, every case names a row, and
/// each case's edits to `example_of(format)` give the row's code at a
/// pointer under its pattern, with the row's severity (`json/type` is
/// always an error).
pub fn every_rule_has_a_failing_document(
    rules: &[Rule],
    cases: &[Case],
    example_of: fn(Format) -> Value,
) {
    let mut missing = Vec::new();
    for r in rules {
        if !cases
            .iter()
            .any(|c| c.0 == r.format && c.1 == r.pointer && c.2 == r.code)
        {
            missing.push(format!("{} {:?} {}", r.format, r.pointer, r.code));
        }
    }
    assert!(
        missing.is_empty(),
        "rules without a failing document: {missing:#?}"
    );
    for (format, pattern, code, edits) in cases {
        assert!(
            rules
                .iter()
                .any(|r| r.format == *format && r.pointer == *pattern && r.code == *code),
            "case names no rule: {format} {pattern:?} {code}"
        );
        let mut doc = example_of(*format);
        for (p, v) in *edits {
            edit(&mut doc, p, v);
        }
        let report = lint(*format, &doc);
        let hit = report
            .findings
            .iter()
            .find(|f| f.code == *code && under(pattern, &f.pointer));
        let hit = hit.unwrap_or_else(|| {
            panic!(
                "{format} {pattern:?} {code} after {edits:?}: not found in {:#?}",
                report.findings
            )
        });
        let rule_sev = rules
            .iter()
            .filter(|r| r.format == *format && r.pointer == *pattern && r.code == *code)
            .map(|r| r.severity)
            .collect::<Vec<_>>();
        assert!(
            rule_sev.contains(&hit.severity) || *code == "json/type",
            "{format} {pattern:?} {code}: severity {:?}",
            hit.severity
        );
    }
}
