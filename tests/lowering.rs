//! Index dtype lowering, checked for real: the lowered program is compiled
//! by the JIT with its concrete dtypes (i32 arithmetic wraps in 32 bits)
//! and compared with the abstract program over the whole domain (sampled
//! above the oracle's limit), gates included: the lowered root stands for
//! `where(gate, index(value), invalid)`.

use engine::ir::DType;
use engine::lower::{as_roots, lower, Select};
use engine::parse::parse_program;
use engine::rewrite::Simplifier;
use engine::rules::builtin;
use engine::walk::Limits;
use fuzz::generate::{Case, Generator};
use fuzz::oracle::{check_jit, OracleConfig};

fn cfg() -> OracleConfig {
    OracleConfig {
        limits: Limits {
            whole: 1 << 20,
            samples: 1 << 12,
        },
        ..OracleConfig::default()
    }
}

#[test]
fn lowered_generated_cases_agree_with_the_abstract_program_under_the_jit() {
    let simp = Simplifier::new(builtin());
    let (mut lowered, mut skipped, mut i64_nodes) = (0, 0, 0);
    for generator in Generator::ALL {
        for seed in 0..200u64 {
            let mut case = Case::from_seed(generator, seed);
            let out = simp.simplify(&mut case.graph, &case.roots, false).unwrap();
            let g = &mut case.graph;
            let Ok(ts) = lower(g, &out.roots, Select::Ranges) else {
                // `invalid` below a root (the expression generator builds
                // such cases on purpose): not lowerable, and said so.
                skipped += 1;
                continue;
            };
            lowered += 1;
            let tgt = as_roots(g, &out.roots, &ts);
            i64_nodes += g
                .reachable(&tgt)
                .iter()
                .filter(|&&n| g.node(n).dtype == DType::I64)
                .count();
            // No index op is left in the lowered program but the final casts.
            for &t in &ts {
                for n in g.reachable(&[t.value]) {
                    let node = g.node(n);
                    assert!(
                        node.dtype != DType::Index || matches!(node.op, engine::ir::Op::Var(_)),
                        "{generator} seed {seed}: an index node is left: {}",
                        engine::print::expr(g, n)
                    );
                }
            }
            let rep = check_jit(g, &case.roots, &tgt, &cfg()).expect("the JIT compiles");
            assert!(rep.refines(), "{generator} seed {seed}: {rep}\n{case}");
        }
    }
    println!("lowered {lowered} cases ({i64_nodes} i64 nodes), {skipped} not lowerable");
    assert!(lowered >= 300, "only {lowered} cases lowered");
}

#[test]
fn a_wrong_dtype_selection_is_caught_by_the_jit() {
    // The result fits i32 but the product does not: the lowering must
    // compute it in i64; forcing i32 wraps it and the JIT sees it.
    let text = "var r in [0, 4000]\nvar c in [0, 9]\nexpr where(c < 8, (r * 1000000 + c) // 1000000, invalid)\n";
    let mut p = parse_program(text).unwrap();
    for (select, ok) in [(Select::Ranges, true), (Select::ForceI32, false)] {
        let ts = lower(&mut p.graph, &p.outputs, select).unwrap();
        assert!(ts[0].gate.is_some());
        let tgt = as_roots(&mut p.graph, &p.outputs, &ts);
        let rep = check_jit(&p.graph, &p.outputs, &tgt, &cfg()).unwrap();
        assert_eq!(rep.refines(), ok, "{select:?}: {rep}");
    }
}

#[test]
fn fixed_seed_campaigns_with_lowering_checks_report_no_finding() {
    use fuzz::campaign::{run, CampaignConfig, GeneratorChoice, Hooks};
    use fuzz::checks::{CheckConfig, Kind, KindSet};
    for generator in Generator::ALL {
        let cfg = CampaignConfig {
            seed: 5,
            generator: GeneratorChoice::One(generator),
            cases: Some(300),
            check: CheckConfig {
                kinds: KindSet::only(Kind::Lower).with(Kind::Oracle),
                limits: Limits {
                    whole: 1 << 16,
                    samples: 1 << 10,
                },
                ..CheckConfig::default()
            },
            shrink_steps: 0,
            ..CampaignConfig::default()
        };
        let s = run(&cfg, builtin(), &Hooks::default()).unwrap();
        assert_eq!(s.cases, 300);
        assert_eq!(
            s.total_findings(),
            0,
            "{generator}: {:?}",
            s.findings.iter().map(|f| &f.message).collect::<Vec<_>>()
        );
        let fired: Vec<String> = s
            .fired()
            .into_iter()
            .filter(|(n, _)| engine::passes::divmod::RULES.contains(n))
            .map(|(n, c)| format!("{n} {c}"))
            .collect();
        println!(
            "{generator}: 300 cases, no finding; fold_divmod_general fired: {}",
            fired.join(", ")
        );
    }
}

/// A concrete root is compared in its own dtype: `i32(-129)` at 8 bits is
/// an `i32` value, not an `index` that would have to fit 8 bits (the
/// `lower` findings of `fuzz --width 8` before the fix).
#[test]
fn a_concrete_root_is_compared_in_its_own_dtype_at_a_narrow_width() {
    let mut p =
        parse_program("var r in [0, 3]\nexpr i32(-129)\nexpr i64(r) * i64(-300)\n").unwrap();
    let ts = lower(&mut p.graph, &p.outputs, Select::Ranges).unwrap();
    let tgt = as_roots(&mut p.graph, &p.outputs, &ts);
    for (&s, &t) in p.outputs.iter().zip(&tgt) {
        assert_eq!(p.graph.node(s).dtype, p.graph.node(t).dtype);
    }
    let narrow = OracleConfig {
        width: engine::dtype::Width(8),
        ..cfg()
    };
    let rep = check_jit(&p.graph, &p.outputs, &tgt, &narrow).unwrap();
    assert!(rep.refines(), "{rep}");
}
