//! Properties of the engine on generated cases (both generators, with
//! proptest shrinking): ranges are sound, printing round-trips, simplifying
//! preserves the interpreter's results, simplifying twice changes nothing,
//! and no input makes the parser panic.

use engine::dtype::Width;
use engine::interp::{check_point, eval_all, Val};
use engine::ir::{Graph, NodeId};
use engine::parse::{build, parse_ast, parse_program};
use engine::print;
use engine::rewrite::Simplifier;
use engine::rules::builtin;
use fuzz::generate::{build as build_case, strategy, Case, Generator};
use proptest::prelude::*;

/// A few points of the case's domain: corners first, then pseudo-random.
fn points(g: &Graph, roots: &[NodeId], k: usize, seed: u64) -> Vec<Vec<i128>> {
    let vars = g.vars();
    let used: Vec<bool> = {
        let mut u = vec![false; vars.len()];
        for id in g.reachable(roots) {
            if let engine::ir::Op::Var(v) = g.node(id).op {
                u[v as usize] = true;
            }
        }
        u
    };
    let mut state = seed;
    let mut out = Vec::new();
    for i in 0..k {
        let p = vars
            .iter()
            .enumerate()
            .map(|(j, d)| {
                let (lo, hi) = (d.lo as i128, d.hi as i128);
                if !used[j] {
                    return lo;
                }
                match i {
                    0 => lo,
                    1 => hi,
                    _ => {
                        let r = fuzz::rng::splitmix64(&mut state) as u128;
                        lo + (r % ((hi - lo) as u128 + 1)) as i128
                    }
                }
            })
            .collect();
        out.push(p);
    }
    out
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 200,
        max_shrink_iters: 2000,
        ..ProptestConfig::default()
    }
}

fn case_strategy() -> impl Strategy<Value = Case> {
    prop_oneof![strategy(Generator::Tiled), strategy(Generator::Expr)].prop_map(|g| build_case(&g))
}

proptest! {
    #![proptest_config(config())]

    /// Every value the interpreter yields at any point lies in the node's
    /// computed [vmin, vmax].
    #[test]
    fn every_interpreted_value_lies_in_its_range(case in case_strategy(), seed in any::<u64>()) {
        let g = &case.graph;
        for w in [Width(64), Width(32), Width(16)] {
            for env in points(g, &case.roots, 24, seed) {
                let Ok(vals) = eval_all(g, &case.roots, &env, w) else { continue };
                for id in g.reachable(&case.roots) {
                    let n = g.node(id);
                    let v = match vals[id.index()] {
                        Val::Int(v) => v,
                        Val::Bool(b) => b as i128,
                        _ => continue,
                    };
                    prop_assert!(
                        (n.vmin as i128) <= v && v <= n.vmax as i128,
                        "{} = {v} outside [{}, {}] at width {} ({:?})",
                        print::expr(g, id), n.vmin, n.vmax, w.0, env
                    );
                }
            }
        }
    }

    /// Printing a node and parsing the text back gives the same node.
    #[test]
    fn printing_then_parsing_gives_the_same_node(case in case_strategy()) {
        let mut g = case.graph.clone();
        for id in g.reachable(&case.roots) {
            let text = print::expr(&g, id);
            let ast = parse_ast(&text, 1).map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
            let back = build(&mut g, &ast).map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
            prop_assert_eq!(back, id, "`{}` read back as `{}`", text, print::expr(&g, back));
        }
        // And a whole program round-trips through the file format.
        let text = case.program();
        let p = parse_program(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(print::program(&p.graph, &p.outputs), text);
    }

    /// Simplification at a width preserves the interpreter's result
    /// (refinement) at that width on points of the domain, and terminates
    /// under the cap.
    #[test]
    fn simplification_preserves_interpreted_results(case in case_strategy(), seed in any::<u64>()) {
        for w in [Width(64), Width(32), Width(8)] {
            let mut g = case.graph.clone();
            let mut simp = Simplifier::new(builtin());
            simp.width = w;
            let out = simp.simplify(&mut g, &case.roots, false).map_err(|e| TestCaseError::fail(e.to_string()))?;
            for env in points(&g, &case.roots, 32, seed) {
                let s = engine::interp::eval(&g, &case.roots, &env, w);
                let t = engine::interp::eval(&g, &out.roots, &env, w);
                let v = check_point(s.clone(), t.clone());
                prop_assert!(
                    v.failure().is_none(),
                    "{v:?} at width {} {:?}\nsource {}\ntarget {}\nsource value {:?}, target value {:?}",
                    w.0, env, print::program(&g, &case.roots), print::program(&g, &out.roots), s, t
                );
            }
        }
    }

    /// simplify(simplify(x)) == simplify(x).
    #[test]
    fn simplifying_twice_changes_nothing(case in case_strategy()) {
        let mut g = case.graph.clone();
        let simp = Simplifier::new(builtin());
        let once = simp.simplify(&mut g, &case.roots, false).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let twice = simp.simplify(&mut g, &once.roots, false).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&once.roots, &twice.roots, "second pass fired {:?}", twice.fired(&simp));
    }

    /// Arbitrary text never makes the parser panic: it parses or reports a
    /// line and column.
    #[test]
    fn parser_never_panics_on_arbitrary_text(text in ".{0,200}") {
        if let Err(e) = parse_program(&text) {
            prop_assert!(e.span.line >= 1 && e.span.col >= 1);
        }
    }

    /// Nor on valid programs with bytes flipped, cut or repeated.
    #[test]
    fn parser_never_panics_on_mutated_programs(case in case_strategy(), cut in any::<prop::sample::Index>(), junk in "[-+*/%()\\[\\],:<>=!&|^a-z0-9 ]{0,12}") {
        let text = case.to_text();
        let at = cut.index(text.len().max(1)).min(text.len());
        let at = (0..=at).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
        let mutated = format!("{}{}{}", &text[..at], junk, &text[at..]);
        let _ = parse_program(&mutated);
        let deep = format!("var x in [0, 1]\nexpr {}x", "(".repeat(10_000));
        prop_assert!(parse_program(&deep).is_err());
    }
}
