//! No two rules fight over operand order (or anything else): on cases from
//! both fuzz generators, the rewriter reaches a fixed point well below its
//! cap, and simplifying the result again changes nothing.

use engine::rewrite::Simplifier;
use engine::rules::builtin;
use fuzz::generate::{Case, Generator};

#[test]
fn generated_cases_simplify_without_hitting_the_cap_and_are_fixed_points() {
    let mut simp = Simplifier::new(builtin());
    // Far below the default cap: a fight between two rules would loop
    // forever, so any bound catches it; a low one catches it fast.
    simp.cap = 20_000;
    let mut worst = 0;
    for generator in Generator::ALL {
        for seed in 0..1500u64 {
            let mut case = Case::from_seed(generator, seed);
            let out = simp
                .simplify(&mut case.graph, &case.roots, false)
                .unwrap_or_else(|e| panic!("{generator} seed {seed}: {e}\n{case}"));
            worst = worst.max(out.total_firings());
            let again = simp.simplify(&mut case.graph, &out.roots, false).unwrap();
            assert_eq!(
                again.roots, out.roots,
                "{generator} seed {seed} is not a fixed point\n{case}"
            );
            assert_eq!(
                again.total_firings(),
                0,
                "{generator} seed {seed}: rules fire on the result: {:?}\n{case}",
                again.fired(&simp)
            );
        }
    }
    println!("most firings on one case: {worst}");
}
