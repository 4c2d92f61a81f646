//! Context substitution (`engine::passes::context`) on inputs made to exercise it:
//! every firing of its sub-rules is checked by the verifier, as the gate's
//! firings stage does for the generators' cases (whose random conditions
//! rarely repeat an atom, so this is where `context_and`/`context_or` fire).

use engine::dtype::Width;
use engine::parse::parse_program;
use engine::rewrite::Simplifier;
use engine::rules::builtin;
use std::time::Duration;
use verify::check::{check, CheckResult};

const VARS: &str = "var x in [-8, 8]\nvar y in [-8, 8]\nvar z in [-8, 8]\nvar w in [-8, 8]\nvar b0: bool\nvar b1: bool\nvar b2: bool";

/// Inputs with a condition repeated inside what it guards: the Halide cases
/// the module is for, arms that may be invalid or unconstrained, conditions
/// that may be unconstrained (left alone), and nested contexts.
const INPUTS: &[&str] = &[
    "b0 && (b0 && b1)",
    "b0 || (b0 || b1)",
    "b1 && b2 && !(b1 ^ true)",
    "x < y && (y <= x || b2 || b1)",
    "x < y && (x < y || b2 || b1)",
    "x == y && (x != y || b2 || b1)",
    "x == y && (y == x || b2 || b1)",
    "b0 || (b0 && b1 || b2 && b1) && (b0 || (b0 || (b0 && z < w || b2 && z < w) || b2)) || b2",
    "b0 && !b0 && b1",
    "!b0 || (b0 && b1)",
    "where(x < y, z, where(x < y, w, x) + 3)",
    "where(x < y, where(x < y, w, x) + 3, z)",
    "where(x < y, z, 3 - where(x < y, w, x))",
    "where(x < y, z, (where(x < y, w, x) + 3) // 2)",
    "where(x < y, (where(x < y, w, x) + 3) // 2, z)",
    "where(x < y, z, where(x < y, w, x) // 2)",
    "where(x < y && b1, where(b1, z, w) * where(y <= x, 2, w), x)",
    "where(x < y || b1, z, where(b1, w, z) + where(x < y, 1, 2))",
    "where(b0, b0 && b1, b0 || b2)",
    "where(x < y, where(x < y, where(z < 0, x, invalid), w) + 1, z)",
    "where(x < y, z, where(x < y, where(z < 0, x, invalid), w) + 1)",
    "where(where(z < 0, x, invalid) < y, z, where(where(z < 0, x, invalid) < y, w, x) + 1)",
    "where(x < y, where(where(z < 0, x, invalid) < 1, w, where(x < y, w, 4)), 2)",
    "where(x < y, where(z < w, where(x < y, z, w), where(z < w, x, y)), where(w < z, x, w) // where(x < y, 0, 3))",
    "max(x, where(x == 7, 1, x))",
    "min(x, where(x == -7, -1, x))",
    "max(x, where(x == -1, 1, x))",
    "where(x == 3, x * y + x, y)",
    "where(x != 3, x, 3)",
    // Nested selects on one condition swap so that their arms factor.
    "where(x * x == 16, where(y < 0, -(x // -y), x // y), where(y < 0, -(z // -y), z // y))",
    "where(b0, where(x < y, z + 1, w mod 3), where(x < y, z + 2, x mod 3))",
    "where(3 == x, 3, x) + where(x != 3, where(x == 3, 1, 2), 3)",
    "max(where(z < 0, x, invalid), where(x == 2, 5, where(z < 0, x, invalid)))",
    "min(where(where(z < 0, x, invalid) == 2, 5, y), y)",
];

#[test]
fn every_context_firing_on_repeated_conditions_validates() {
    let rules = builtin();
    let simp = Simplifier::new(rules);
    let names = simp.rule_names().to_vec();
    let mut fired = std::collections::BTreeMap::new();
    for input in INPUTS {
        let mut p = parse_program(&format!("{VARS}\nexpr {input}\n")).unwrap();
        let root = p.outputs[0];
        let out = simp.simplify(&mut p.graph, &[root], true).unwrap();
        for f in &out.trace {
            let name = names[f.rule].as_str();
            if !name.starts_with("context_") {
                continue;
            }
            *fired.entry(name.to_string()).or_insert(0) += 1;
            for w in [Width(8), Width::W64] {
                let r = check(
                    &p.graph,
                    &[f.before],
                    &[f.after],
                    w,
                    Duration::from_secs(10),
                );
                assert!(
                    matches!(r, CheckResult::Equivalent { .. }),
                    "{name} on {input}: {} => {} at {w:?}: {}",
                    engine::print::expr(&p.graph, f.before),
                    engine::print::expr(&p.graph, f.after),
                    r.name()
                );
            }
        }
        // The whole simplification refines too.
        let r = check(
            &p.graph,
            &[root],
            &out.roots,
            Width::W64,
            Duration::from_secs(10),
        );
        assert!(
            matches!(r, CheckResult::Equivalent { .. }),
            "{input}: {}",
            r.name()
        );
    }
    eprintln!("context firings: {fired:?}");
    for rule in engine::passes::context::RULES {
        assert!(fired.contains_key(rule), "{rule} never fired: {fired:?}");
    }
}
