//! Every built-in rule has a case where it fires (with the exact result it
//! must build) and a case where it must not fire: its guard blocks it, or,
//! for an unguarded rule, a near miss of its pattern. The cases live in
//! `rule_cases.txt`; each is applied to the root of its expression with that
//! rule alone, so no other rule can make it pass by accident. The rule's
//! shape (what the rewriter checks before matching) must admit each case
//! where it fires.

use engine::dtype::Width;
use engine::parse::parse_program;
use engine::rules::builtin;
use engine::rules::shape::{Shape, Site};
use std::collections::BTreeMap;

const CASES: &str = include_str!("rule_cases.txt");

#[derive(Default)]
struct Tally {
    fires: usize,
    blocks: usize,
}

#[test]
fn every_rule_fires_on_its_case_and_is_blocked_on_its_near_miss() {
    let rules = builtin();
    let mut tally: BTreeMap<String, Tally> = rules
        .rules()
        .map(|r| (r.name.clone(), Tally::default()))
        .collect();
    let mut failures = Vec::new();
    let mut current: Option<String> = None;
    let mut vars = String::new();
    for (i, line) in CASES.lines().enumerate() {
        let line_no = i + 1;
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if let Some(name) = t.strip_prefix("rule ") {
            current = Some(name.trim().to_string());
            vars.clear();
            if !tally.contains_key(name.trim()) {
                failures.push(format!(
                    "line {line_no}: no built-in rule named `{}`",
                    name.trim()
                ));
            }
            continue;
        }
        if t.starts_with("var ") {
            vars.push_str(t);
            vars.push('\n');
            continue;
        }
        let Some(name) = current.clone() else {
            failures.push(format!("line {line_no}: case before any `rule` line"));
            continue;
        };
        let Some(rule) = rules.rule(&name) else {
            continue;
        };
        let (kind, body) = t.split_once(' ').unwrap_or((t, ""));
        match kind {
            "fires" => {
                let Some((src, want)) = body.split_once("=>") else {
                    failures.push(format!("line {line_no}: `fires` needs `EXPR => EXPECTED`"));
                    continue;
                };
                let text = format!("{vars}expr {}\nexpect {}\n", src.trim(), want.trim());
                let mut p = match parse_program(&text) {
                    Ok(p) => p,
                    Err(e) => {
                        failures.push(format!("line {line_no}: {e}"));
                        continue;
                    }
                };
                let (root, expect) = (p.outputs[0], p.expects[0]);
                // The rewriter passes over a rule whose shape refuses a
                // node: a shape must admit every node its rule fires at.
                if !Shape::of(rule).admits(&Site::of(&p.graph, root, Width::W64)) {
                    failures.push(format!(
                        "line {line_no}: the shape of {name} refuses `{}`, where it fires",
                        src.trim()
                    ));
                }
                match rule.apply(&mut p.graph, root) {
                    Some(got) if got == expect => tally.get_mut(&name).unwrap().fires += 1,
                    Some(got) => failures.push(format!(
                        "line {line_no}: {name} gave `{}`, expected `{}`",
                        engine::print::expr(&p.graph, got),
                        want.trim()
                    )),
                    None => failures.push(format!(
                        "line {line_no}: {name} did not fire on `{}`",
                        src.trim()
                    )),
                }
            }
            "blocks" => {
                let text = format!("{vars}expr {body}\n");
                let mut p = match parse_program(&text) {
                    Ok(p) => p,
                    Err(e) => {
                        failures.push(format!("line {line_no}: {e}"));
                        continue;
                    }
                };
                let root = p.outputs[0];
                match rule.apply(&mut p.graph, root) {
                    Some(got) if got != root => failures.push(format!(
                        "line {line_no}: {name} fired on `{body}` giving `{}`",
                        engine::print::expr(&p.graph, got)
                    )),
                    _ => tally.get_mut(&name).unwrap().blocks += 1,
                }
            }
            other => failures.push(format!("line {line_no}: unknown case kind `{other}`")),
        }
    }
    for (name, t) in &tally {
        if t.fires == 0 {
            failures.push(format!("rule {name} has no case where it fires"));
        }
        if t.blocks == 0 {
            failures.push(format!("rule {name} has no case where it is blocked"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} rule case failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
