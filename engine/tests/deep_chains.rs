//! Long flat chains (generated kernels are large) go through the whole
//! pipeline: parse, ranges, simplify, print. A chain of 10^6 terms is read
//! and simplified in linear time, on a test thread's small stack: nothing
//! recurses on the input's depth.

use engine::parse::{parse_program, Program};
use engine::rewrite::Simplifier;

const N: usize = 1_000_000;

fn program(expr: &str) -> Program {
    let text = format!("var x in [0, 100]\nvar y in [0, 100]\nexpr {expr}\n");
    parse_program(&text).unwrap_or_else(|e| panic!("the chain parses: {e}"))
}

/// Parses `expr`, checks the root's range, simplifies and prints.
fn simplified(expr: &str, range: (i64, i64)) -> String {
    let mut p = program(expr);
    let root = p.outputs[0];
    let n = p.graph.node(root);
    assert_eq!((n.vmin, n.vmax), range, "range of the chain");
    let s = Simplifier::new(engine::rules::builtin());
    let out = s
        .simplify(&mut p.graph, &[root], false)
        .unwrap_or_else(|e| panic!("the chain simplifies: {e}"));
    engine::print::expr(&p.graph, out.roots[0])
}

fn chain(term: &str, op: &str) -> String {
    vec![term; N].join(&format!(" {op} "))
}

#[test]
fn a_million_term_sum_simplifies_to_a_product() {
    let n = N as i64;
    assert_eq!(
        simplified(&chain("x", "+"), (0, 100 * n)),
        format!("x * {N}")
    );
}

#[test]
fn a_million_term_difference_simplifies_to_a_product() {
    let n = N as i64;
    assert_eq!(
        simplified(&chain("x", "-"), (100 * (1 - n), 100)),
        format!("x * -{}", N - 2)
    );
}

#[test]
fn a_million_increments_fold_into_one_constant() {
    let n = N as i64;
    let expr = format!("x{}", " + 1".repeat(N - 1));
    assert_eq!(simplified(&expr, (n - 1, n + 99)), format!("x + {}", N - 1));
}

#[test]
fn a_million_term_conjunction_of_one_comparison_is_that_comparison() {
    assert_eq!(simplified(&chain("x < y", "&&"), (0, 1)), "x < y");
}

#[test]
fn a_million_factor_product_prints_deeply_nested_and_reads_back() {
    // Nothing simplifies x^N; the canonical operand order nests the
    // product to the right, so the printed form has N - 1 parentheses.
    let printed = simplified(&chain("x", "*"), (0, i64::MAX));
    assert!(printed.starts_with("x * (x * (x * "), "{}", &printed[..40]);
    let p = program(&printed);
    let q = program(&chain("x", "*"));
    let (a, b) = (p.outputs[0], q.outputs[0]);
    // The same structure: the graphs agree node for node.
    assert_eq!(p.graph.len(), q.graph.len());
    assert_eq!(
        engine::print::expr(&p.graph, a),
        engine::print::expr(&q.graph, b)
    );
}

#[test]
fn a_million_term_equality_chain_is_a_type_error_with_its_position() {
    // `x == x` is a bool, and `==` compares integers: the second `==`
    // (column 13 of `expr x == x == x ...`) is the error.
    let text = format!("var x in [0, 100]\nexpr {}\n", chain("x", "=="));
    let e = parse_program(&text).err().expect("a type error");
    assert_eq!((e.span.line, e.span.col), (2, 13), "{e}");
    assert!(e.msg.contains("needs integer operands"), "{e}");
}

#[test]
fn a_million_nested_parentheses_read() {
    let text = format!(
        "var x in [0, 100]\nexpr {}x + 1{}\n",
        "(".repeat(N),
        ")".repeat(N)
    );
    let p = parse_program(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(engine::print::expr(&p.graph, p.outputs[0]), "x + 1");
}

/// A candidate rule file of a 100,000-term rule in a group of its own goes
/// through the one loader every command uses: the rule is cloned into the
/// engine's set and compared, on a test thread's small stack (the derived
/// `Clone` recursed on the pattern's depth: `prove --rules` aborted).
#[test]
fn a_rule_of_a_hundred_thousand_terms_is_laid_over_the_builtin_rules() {
    let chain = vec!["a"; 100_000].join(" + ");
    let text = format!("group chains\nrule chain: {chain} => {chain}\n");
    let loaded = engine::rules::load_candidates(&[("chains.rules".into(), text)])
        .unwrap_or_else(|e| panic!("the rule loads: {e}"));
    let rule = loaded.engine.rule("chain").expect("laid over the engine");
    assert!(rule.lhs == loaded.candidates.rules().next().expect("the rule").lhs);
    assert_eq!(loaded.notes.len(), 1, "{:?}", loaded.notes);
}

/// A rule's left side is matched by a loop over its slots, not by
/// recursion: a 100,000-term rule matches a 100,000-term sum on a test
/// thread's small stack (the sum's operands stand the other way round
/// from the pattern's at every level, so each level is tried both ways).
#[test]
fn a_rule_of_a_hundred_thousand_terms_matches_its_sum() {
    let terms = 100_000;
    let lhs = vec!["z"; terms].join(" + ");
    let rules = engine::rules::RuleSet::parse("chain.rules", &format!("rule chain: {lhs} => z\n"))
        .unwrap_or_else(|e| panic!("the rule parses: {e}"));
    let rule = rules.rule("chain").expect("the rule");
    let mut p = program(&vec!["x"; terms].join(" + "));
    let out = rule
        .apply(&mut p.graph, p.outputs[0])
        .expect("the rule matches");
    assert_eq!(engine::print::expr(&p.graph, out), "x");
}
