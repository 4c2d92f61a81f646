//! fold_divmod_general's eight rules, validated per firing.
//!
//! Generated division expressions (both families, negative ranges included,
//! constant and symbolic divisors) go through the full rewriter with
//! tracing on. Every firing of an algorithmic rule is a (before, after)
//! pair of one graph, and each is checked by translation validation
//! (`verify::check`, SMT over the variables' bounds, at 64 bits) and, when
//! its domain has at most 2^20 points, by the JIT oracle over the whole
//! domain. Every rule must fire at least 50 times, with zero failures.

use engine::dtype::Width;
use engine::ir::{DType, Graph, NodeId, Op};
use engine::parse::parse_program;
use engine::passes::divmod::RULES;
use engine::print;
use engine::rewrite::Simplifier;
use engine::rules::builtin;
use fuzz::oracle::{check_jit, Domain, OracleConfig};
use fuzz::rng::splitmix64;
use std::time::Duration;
use verify::check::{check, CheckResult};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        splitmix64(&mut self.0)
    }
    fn below(&mut self, n: u64) -> i64 {
        (self.next() % n) as i64
    }
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64)
    }
    fn coin(&mut self) -> bool {
        self.next() & 1 == 1
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
}

/// One generated division, shaped so that (mostly) rule `target` is the
/// one that applies, but any rule may fire: all firings are validated.
fn generate(rng: &mut Rng, target: usize) -> (Graph, NodeId) {
    let mut g = Graph::new();
    let floor = rng.coin();
    let (div, rem) = if floor {
        (Op::FloorDiv, Op::Mod)
    } else {
        (Op::Div, Op::Rem)
    };
    let op = if rng.coin() { div } else { rem };
    // Floor division may see negative numerators; truncation mostly not,
    // so that its guarded rules get to fire too.
    let neg = floor || rng.below(4) == 0;
    let var = |g: &mut Graph, name: &str, lo: i64, hi: i64| {
        let v = g.declare_var(name, DType::Index, lo, hi).unwrap();
        g.var_node(v)
    };
    let bounds = |rng: &mut Rng, span: i64| -> (i64, i64) {
        let lo = if neg && rng.coin() {
            -rng.range(0, span)
        } else {
            rng.range(0, 3)
        };
        (lo, lo + rng.range(1, span))
    };
    let k = |g: &mut Graph, v: i64| g.cnst(v, DType::Index);
    let lin = |g: &mut Graph, terms: &[(NodeId, i64)], c: i64| -> NodeId {
        let mut s: Option<NodeId> = None;
        for &(t, f) in terms {
            let fc = g.cnst(f, DType::Index);
            let p = if f == 1 { t } else { g.mk(Op::Mul, &[t, fc]) };
            s = Some(match s {
                None => p,
                Some(s) => g.mk(Op::Add, &[s, p]),
            });
        }
        let s = s.unwrap();
        if c == 0 {
            s
        } else {
            let cc = g.cnst(c, DType::Index);
            g.mk(Op::Add, &[s, cc])
        }
    };
    let root = match target {
        // cancel_divmod: a symbolic divisor whose quotient is one value.
        0 => {
            let ylo = rng.range(2, 12);
            let y = var(&mut g, "y", ylo, ylo + rng.range(0, 3));
            let q = rng.range(1, 4);
            let xlo = q * (ylo + 3) + rng.range(0, 2);
            let (xlo, xhi) = if neg && rng.coin() {
                (-xlo - rng.range(0, 2), -xlo)
            } else {
                (xlo, xlo + rng.range(0, 2))
            };
            let x = var(&mut g, "x", xlo, xhi);
            g.mk(op, &[x, y])
        }
        // remove_nested_mod: a term (a mod m) or (a % m) with c | m.
        1 => {
            let c = rng.range(2, 6);
            let m = c * rng.range(2, 4);
            let (alo, ahi) = bounds(rng, 40);
            let a = var(&mut g, "a", alo, ahi);
            let (blo, bhi) = bounds(rng, 9);
            let b = var(&mut g, "b", blo, bhi);
            let inner_op = if rng.coin() { Op::Mod } else { Op::Rem };
            let mc = k(&mut g, m);
            let am = g.mk(inner_op, &[a, mc]);
            let f = rng.pick(&[1, 1, 2, 3]);
            let x = lin(&mut g, &[(am, f), (b, rng.range(1, 3))], rng.range(0, 5));
            let cc = k(&mut g, c);
            g.mk(rem, &[x, cc])
        }
        // fold_binary_numerator: one term taking two values.
        2 => {
            let lo = if neg {
                rng.range(-6, 6)
            } else {
                rng.range(0, 6)
            };
            let v = var(&mut g, "v", lo, lo + 1);
            let f = rng.pick(&[2, 3, 5, 6, 7, -3, 9, 11]);
            let x = lin(&mut g, &[(v, f)], rng.range(0, 9));
            let cc = k(&mut g, rng.range(3, 9));
            g.mk(op, &[x, cc])
        }
        // fold_divmod_congruence: coefficients near multiples of c.
        3 => {
            let c = rng.range(3, 12);
            let (alo, ahi) = bounds(rng, 10);
            let a = var(&mut g, "a", alo, ahi);
            let b = var(&mut g, "b", 0, rng.range(1, 3));
            let fa = c * rng.range(1, 3) + rng.pick(&[1, -1, 0]);
            let fb = rng.pick(&[1, 1, c + 1, c - 1]);
            let x = lin(&mut g, &[(a, fa), (b, fb)], rng.range(0, c));
            let cc = k(&mut g, c);
            g.mk(op, &[x, cc])
        }
        // gcd_with_remainder: a factor of c and a coefficient, the rest
        // below it: (a*f + b) OP (f*m), b below f.
        4 if rng.coin() => {
            let f = rng.pick(&[2, 3, 4, 8]);
            let m = rng.range(2, 5);
            let (alo, ahi) = bounds(rng, 30);
            let a = var(&mut g, "a", alo, ahi);
            let b = var(&mut g, "b", 0, f - 1);
            let x = lin(&mut g, &[(a, f), (b, 1)], 0);
            let cc = k(&mut g, f * m);
            g.mk(op, &[x, cc])
        }
        // gcd_with_remainder: a common factor of coefficients and c.
        4 => {
            let gg = rng.pick(&[2, 3, 4]);
            let c = gg * rng.range(3, 6);
            let a = var(&mut g, "a", 0, rng.range(20, 60));
            let b = var(&mut g, "b", 0, rng.range(20, 60));
            let x = lin(
                &mut g,
                &[(a, gg * rng.range(1, 3)), (b, gg * rng.range(1, 2) + gg)],
                rng.range(1, gg - 1),
            );
            let cc = k(&mut g, c);
            g.mk(op, &[x, cc])
        }
        // divide_by_gcd: everything shares a factor; a negative numerator
        // (truncation), a negative or a symbolic divisor.
        5 => {
            let gg = rng.pick(&[2, 3, 4]);
            let (alo, ahi) = (-rng.range(1, 30), rng.range(1, 30));
            let a = var(&mut g, "a", alo, ahi);
            let x = lin(&mut g, &[(a, gg * rng.range(1, 3))], gg * rng.range(0, 3));
            let y = match rng.below(3) {
                0 => k(&mut g, gg * rng.range(2, 5)),
                1 => k(&mut g, -gg * rng.range(2, 5)),
                _ => {
                    let n = var(&mut g, "n", 1, rng.range(2, 9));
                    lin(&mut g, &[(n, gg)], 0)
                }
            };
            let ops = if floor {
                [Op::FloorDiv, Op::Mod]
            } else {
                [Op::Div, Op::Rem]
            };
            let op = rng.pick(&ops);
            g.mk(op, &[x, y])
        }
        // factor_remainder: a multiple of the divisor (or of part of it).
        6 => {
            if rng.coin() {
                let c = rng.range(3, 9);
                let a = var(&mut g, "a", 0, rng.range(10, 40));
                let b = var(&mut g, "b", 0, rng.range(10, 40));
                let fa = c * rng.range(1, 3) + rng.range(1, c - 1);
                let x = lin(
                    &mut g,
                    &[(a, fa), (b, rng.range(1, c - 1))],
                    rng.range(0, 2 * c),
                );
                let cc = k(&mut g, c);
                g.mk(op, &[x, cc])
            } else {
                let n = var(&mut g, "n", 1, rng.range(2, 16));
                let i = var(&mut g, "i", 0, rng.range(2, 16));
                let j = var(&mut g, "j", 0, rng.range(2, 30));
                let ni = g.mk(Op::Mul, &[n, i]);
                let x = g.mk(Op::Add, &[ni, j]);
                g.mk(op, &[x, n])
            }
        }
        // nest_div_by_smallest_factor: (a*f + b*3 + k) OP (f*m) with b
        // taking two values, so that the rest is not below f but the inner
        // quotient by f folds (a line through two values).
        _ => {
            let f = rng.pick(&[2, 4]);
            let m = rng.range(2, 5);
            let (alo, ahi) = bounds(rng, 30);
            let a = var(&mut g, "a", alo, ahi);
            let b = var(&mut g, "b", 0, 1);
            let x = lin(&mut g, &[(a, f), (b, 3)], rng.range(0, f - 1));
            let cc = k(&mut g, f * m);
            g.mk(op, &[x, cc])
        }
    };
    (g, root)
}

/// Validates one firing; `None` when it refines, else why not.
fn validate(g: &Graph, before: NodeId, after: NodeId, jit: &mut usize) -> Option<String> {
    match check(
        g,
        &[before],
        &[after],
        engine::dtype::Width::W64,
        Duration::from_secs(20),
    ) {
        CheckResult::Equivalent { .. } | CheckResult::Vacuous => {}
        other => return Some(format!("SMT: {}", serde_json::to_string(&other).unwrap())),
    }
    let domain = Domain::new(g, &[before, after]);
    if domain.size() <= 1 << 20 {
        *jit += 1;
        let cfg = OracleConfig {
            parallel: false,
            ..OracleConfig::at_width(Width::W64)
        };
        let rep = check_jit(g, &[before], &[after], &cfg).expect("the oracle compiles");
        if !rep.refines() {
            return Some(format!("JIT: {rep}"));
        }
    }
    None
}

#[test]
fn every_divmod_general_rule_fires_50_times_and_every_firing_validates() {
    let rules = builtin();
    let simp = Simplifier::new(rules);
    let first = simp
        .rule_names()
        .iter()
        .position(|n| n == RULES[0])
        .expect("the algorithmic rules are registered");
    let mut fired = [0usize; RULES.len()];
    let mut failures: Vec<String> = Vec::new();
    let (mut smt, mut jit) = (0usize, 0usize);
    let mut rng = Rng(0x5eed_d1f0);
    let mut cases = 0;
    while fired.iter().any(|&c| c < 50) && cases < 40_000 {
        // Aim at the rules that are still short of 50.
        let short: Vec<usize> = (0..RULES.len()).filter(|&r| fired[r] < 50).collect();
        let target = short[cases % short.len()];
        cases += 1;
        let (mut g, root) = generate(&mut rng, target);
        let out = match simp.simplify(&mut g, &[root], true) {
            Ok(o) => o,
            Err(e) => {
                failures.push(format!("{}: {e}", print::expr(&g, root)));
                continue;
            }
        };
        for f in &out.trace {
            // Only fold_divmod_general's firings (the linear form's have
            // their own test, tests/linear_firings.rs).
            if f.rule < first || f.rule >= first + RULES.len() {
                continue;
            }
            let r = f.rule - first;
            fired[r] += 1;
            smt += 1;
            if let Some(why) = validate(&g, f.before, f.after, &mut jit) {
                let vars: Vec<String> = g.vars().iter().map(print::var_decl).collect();
                failures.push(format!(
                    "{}: {} => {} ({}): {why}",
                    RULES[r],
                    print::expr(&g, f.before),
                    print::expr(&g, f.after),
                    vars.join("; ")
                ));
            }
        }
    }
    println!("fold_divmod_general over {cases} generated cases:");
    for (name, n) in RULES.iter().zip(fired) {
        println!("  {name:<28} fired {n:>5}");
    }
    println!(
        "  validated: {smt} firings by SMT (64 bits), {jit} also by the JIT over the whole domain"
    );
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
    for (name, n) in RULES.iter().zip(fired) {
        assert!(n >= 50, "{name} fired only {n} times");
    }
}

/// Simplifies `expr` over `vars` with the built-in rules; returns the graph,
/// the source root and the result.
fn simplify(vars: &str, expr: &str) -> (Graph, NodeId, NodeId) {
    let mut p = parse_program(&format!("{vars}\nexpr {expr}\n")).unwrap();
    let simp = Simplifier::new(builtin());
    let out = simp.simplify(&mut p.graph, &p.outputs, false).unwrap();
    (p.graph, p.outputs[0], out.roots[0])
}

/// `expr` simplifies to exactly `want`, and the JIT confirms it refines.
fn assert_simplifies(vars: &str, expr: &str, want: &str) {
    let (mut g, src, got) = simplify(vars, expr);
    let w = parse_program(&format!("{vars}\nexpr {want}\n")).unwrap();
    let want_id = g.import(&w.graph, &w.outputs).unwrap()[0];
    assert_eq!(print::expr(&g, got), print::expr(&g, want_id), "{expr}");
    assert_eq!(got, want_id);
    let rep = check_jit(&g, &[src], &[got], &OracleConfig::default()).unwrap();
    assert!(rep.refines(), "{expr} => {}: {rep}", print::expr(&g, got));
}

#[test]
fn nested_floor_division_with_an_offset_merges() {
    assert_simplifies("var a in [0, 124]", "(a // 2 + 1) // 2", "(a + 2) // 4");
}

#[test]
fn nested_floor_division_through_a_negative_inner_divisor_merges() {
    assert_simplifies("var a in [0, 124]", "(a // -2) // 3", "a // -6");
}

#[test]
fn nested_floor_division_with_a_negative_outer_divisor_does_not_merge() {
    let (g, src, got) = simplify("var a in [0, 124]", "(a // -2) // -3");
    assert_ne!(print::expr(&g, got), "a // 6");
    // Whatever it became, it must still be the same function (a = 5 is
    // where a // 6 would be wrong).
    let rep = check_jit(&g, &[src], &[got], &OracleConfig::default()).unwrap();
    assert!(rep.refines(), "{rep}");
}

#[test]
fn floor_division_folds_on_a_negative_range() {
    // The example: tinygrad and XLA fold it for n < 0 too.
    assert_simplifies(
        "var n in [-10, 10]\nvar b in [0, 3]",
        "(n*4 + b) // 12",
        "n // 3",
    );
}

#[test]
fn truncating_division_keeps_the_non_negative_guard() {
    // (n*4 + b) / 12 == n / 3 is wrong at n = -3, b = 3: -9 / 12 == 0 but
    // -3 / 3 == -1.
    let (g, src, got) = simplify("var n in [-10, 10]\nvar b in [0, 3]", "(n*4 + b) / 12");
    assert_ne!(print::expr(&g, got), "n / 3");
    let rep = check_jit(&g, &[src], &[got], &OracleConfig::default()).unwrap();
    assert!(rep.refines(), "{rep}");
}

#[test]
fn the_per_firing_validation_rejects_a_wrong_result() {
    // The validator the test above relies on must be able to fail: an
    // off-by-one result of a real firing is caught by SMT.
    let (mut g, src, got) = simplify("var r in [0, 3]\nvar v in [0, 2]", "(r*8 + v) // 7");
    let one = g.cnst(1, DType::Index);
    let wrong = g.mk(Op::Add, &[got, one]);
    let mut jit = 0;
    assert!(validate(&g, src, got, &mut jit).is_none());
    assert!(validate(&g, src, wrong, &mut jit).is_some());
}
