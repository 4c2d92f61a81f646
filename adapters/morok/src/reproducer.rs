//! Reproducers (docs/protocol.md, section 5): a Rust test a Morok
//! maintainer pastes into Morok's own test suite. It uses only the pinned
//! Morok crates: it builds the input with Morok's API (the adapter's very
//! calls, spelled by [`crate::convert::Spell`]), runs the entry point the
//! adapter ran, prints both expressions, compiles both literally with
//! Morok's C backend and clang ([`crate::harness`], inlined verbatim as a
//! module of the test), runs them at the failing point, and fails while
//! their outcomes differ. A `peer-crash` reproducer only runs the entry
//! point: it fails while Morok panics.

use crate::convert::{Spell, VarPlan, build_tree, i64_literal};
use crate::entry::{Entry, MOROK_VERSION};
use tileproof_adapter::{Case, Refuse, ReproducerRequest, RunValue, Script};

/// The harness, as the reproducer inlines it.
const HARNESS: &str = include_str!("harness.rs");

/// FNV-1a of the case, for a stable test name.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn expected_literal(v: &RunValue) -> String {
    match v {
        RunValue::Int(i) => format!("harness::Val::Int({})", i64_literal(*i)),
        RunValue::Bool(b) => format!("harness::Val::Bool({b})"),
        RunValue::Invalid => "harness::Val::Invalid".into(),
    }
}

/// The test's source.
pub fn write(
    entry: Entry,
    case: &Case,
    plans: &[VarPlan],
    req: &ReproducerRequest,
) -> Result<Script, Refuse> {
    let mut spell = Spell::default();
    let roots: Vec<String> = case
        .trees
        .iter()
        .map(|t| build_tree(&mut spell, t, plans).map(|v| v.0))
        .collect::<Result<_, _>>()?;
    // The variables in the case's order, built by the statements above
    // when the expressions use them (a variable they do not use is built
    // here, so that the point's values line up).
    let vars: Vec<String> = plans
        .iter()
        .map(|p| {
            let t = tileproof_adapter::Tree::Var(p.name.clone());
            build_tree(&mut spell, &t, plans).map(|v| v.0)
        })
        .collect::<Result<_, _>>()?;
    let class = if req.class.is_empty() {
        "finding"
    } else {
        req.class.as_str()
    };
    // The test's name says what it shows: a bounds finding by its kind.
    let what = if req.kind == "unsound-bounds" {
        "unsound-bounds"
    } else {
        class
    };
    let id = fnv(format!(
        "{}{:?}{:?}{class}",
        entry.name(),
        case.trees,
        plans.iter().map(|p| (p.lo, p.hi)).collect::<Vec<_>>()
    )
    .as_bytes());
    let test = format!("tileproof_{}_{id:010x}", what.replace('-', "_"))
        .chars()
        .take(60)
        .collect::<String>();
    let exprs = case.exprs.join("; ");
    let vars_doc: Vec<String> = plans
        .iter()
        .map(|p| match p.kind {
            crate::convert::VarKind::Define => {
                format!("{} in [{}, {}] (DEFINE_VAR)", p.name, p.lo, p.hi)
            }
            crate::convert::VarKind::Range { axis, end } => {
                format!("{} in [0, {}] (RANGE({end}), axis {axis})", p.name, end - 1)
            }
        })
        .collect();
    let point: Vec<String> = req.point.iter().map(|v| i64_literal(*v)).collect();
    let point_doc: Vec<String> = plans
        .iter()
        .zip(&req.point)
        .map(|(p, v)| format!("{} = {v}", p.name))
        .collect();
    let mut s = String::new();
    let mut line = |l: &str| {
        s.push_str(l);
        s.push('\n');
    };
    // The class beside the kind only where they differ (a bounds finding
    // is a wrong value of a compiled node).
    let shown = if what == class {
        what.to_string()
    } else {
        format!("{what} ({class})")
    };
    line(&format!(
        "//! tileproof reproducer: {shown} in Morok {}'s {}.",
        MOROK_VERSION,
        entry.call()
    ));
    line(&format!("//! Input: {exprs}"));
    line(&format!("//! Variables: {}.", vars_doc.join(", ")));
    if req.kind == "unsound-bounds" {
        line(&format!(
            "//! At {}, a node of the input, compiled as written by Morok's C backend, takes",
            point_doc.join(", ")
        ));
        line(
            "//! a value outside the bounds Morok's range analysis (vmin/vmax) gives it, which its rules",
        );
        line(
            "//! and its index lowering trust. The test fails while it does; it passes once Morok is fixed.",
        );
    } else if req.backend.is_some() {
        line(&format!(
            "//! At {}, the input and Morok's answer, both compiled as written by Morok's C",
            point_doc.join(", ")
        ));
        line(
            "//! backend and clang, differ. The test fails while they do; it passes once Morok is fixed.",
        );
    } else {
        line(
            "//! Morok panics on it: its simplifier, or its range analysis (vmin/vmax) of a node, which",
        );
        line(
            "//! tileproof asked for too. The test fails while either panics; it passes once Morok is fixed.",
        );
    }
    line(
        "//! It needs only morok-ir, morok-dtype, morok-schedule, morok-codegen and morok-runtime",
    );
    line(&format!(
        "//! {} (and clang on PATH, for Morok's C backend): paste it into a test module",
        MOROK_VERSION
    ));
    line(
        "//! of a crate that depends on them, or run `cargo test` in tileproof's adapters/morok/reproducers.",
    );
    line("//! Written by tileproof's Morok adapter (adapters/morok).");
    line("");
    line("#[test]");
    line(&format!("fn {test}() {{"));
    line("    #[allow(unused_imports)]");
    line("    use morok_dtype::DType;");
    line("    #[allow(unused_imports)]");
    line("    use morok_ir::{ConstValue, UOp};");
    line("    use morok_schedule::graph_rewrite;");
    line("");
    line("    // The input, built with Morok's API.");
    for l in &spell.lines {
        line(&format!("    {l}"));
    }
    line(&format!(
        "    let input = vec![{}];",
        roots
            .iter()
            .map(|r| format!("{r}.clone()"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    line("    for e in &input {");
    line("        println!(\"input:\\n{}\", e.tree());");
    line("    }");
    line(&format!("    // Morok's {}.", entry.call()));
    line(&format!(
        "    let output: Vec<_> = {};",
        entry.rust_apply("input")
    ));
    line("    for e in &output {");
    line("        println!(\"Morok's answer:\\n{}\", e.tree());");
    line("    }");
    if req.kind == "unsound-bounds" {
        line("");
        line(
            "    // Every node of the input, compiled alone as written by Morok's C backend and run at the",
        );
        line(
            "    // failing point, against the bounds Morok's range analysis gives it (vmin, vmax).",
        );
        line(&format!(
            "    let vars = vec![{}];",
            vars.iter()
                .map(|v| format!("{v}.clone()"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        line(&format!("    let point = [{}];", point.join(", ")));
        line("    let mut seen = std::collections::HashSet::new();");
        line("    for node in input.iter().flat_map(|e| e.toposort()) {");
        line("        if !seen.insert(node.id) { continue; }");
        line("        let Ok(k) = harness::compile(&vars, &[node.clone()]) else { continue };");
        line("        let (lo, hi) = (node.vmin().clone(), node.vmax().clone());");
        line("        let got = k.run(&point)[0];");
        line("        let inside = match (got, lo, hi) {");
        line(
            "            (harness::Val::Int(v), ConstValue::Int(lo), ConstValue::Int(hi)) => lo <= v && v <= hi,",
        );
        line(
            "            (harness::Val::Bool(v), ConstValue::Bool(lo), ConstValue::Bool(hi)) => lo <= v && v <= hi,",
        );
        line("            _ => true,");
        line("        };");
        line(&format!(
            "        println!(\"at {}: {{got}} by the compiled node, bounds [{{lo:?}}, {{hi:?}}] for\\n{{}}\", node.tree());",
            point_doc.join(", ")
        ));
        line(
            "        assert!(inside, \"Morok's bounds of this node exclude the value its compiled code takes\");",
        );
        line("    }");
    } else if let Some(backend) = &req.backend {
        line("");
        line(&format!(
            "    // Both compiled as written by Morok's C backend ({backend}), run at the failing point."
        ));
        line(&format!(
            "    let vars = vec![{}];",
            vars.iter()
                .map(|v| format!("{v}.clone()"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        line(&format!("    let point = [{}];", point.join(", ")));
        line(&format!(
            "    let expected = vec![{}];",
            req.expected
                .iter()
                .map(expected_literal)
                .collect::<Vec<_>>()
                .join(", ")
        ));
        line("    let source = match harness::compile(&vars, &input) {");
        line("        Ok(k) => { println!(\"input's C:\\n{}\", k.code); k.run(&point) }");
        line(
            "        // Morok never compiles this input as written: its values by tileproof's semantics.",
        );
        line(
            "        Err(e) => { println!(\"the input does not compile as written ({e:?}): expected values used\"); expected }",
        );
        line("    };");
        line(
            "    let answer = harness::compile(&vars, &output).expect(\"Morok's answer compiles\");",
        );
        line("    println!(\"answer's C:\\n{}\", answer.code);");
        line("    let got = answer.run(&point);");
        line(&format!(
            "    println!(\"at {}: input {{source:?}}, Morok's answer {{got:?}}\");",
            point_doc.join(", ")
        ));
        line(
            "    assert_eq!(got, source, \"Morok's answer computes another value than its input\");",
        );
    } else {
        line("    // Morok's range analysis of every node of the input.");
        line("    for node in input.iter().flat_map(|e| e.toposort()) {");
        line(
            "        println!(\"[{:?}, {:?}] for {}\", node.vmin(), node.vmax(), node.op().as_ref());",
        );
        line("    }");
    }
    line("}");
    if req.backend.is_some() || req.kind == "unsound-bounds" {
        line("");
        line("#[allow(dead_code)]");
        line("mod harness {");
        for l in HARNESS.lines() {
            line(l);
        }
        line("}");
    }
    Ok(Script {
        text: s,
        extension: "rs".into(),
    })
}
