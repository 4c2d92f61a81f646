//! Variants derived from a case: signed ones move variables across zero,
//! discard ones put one subterm where a rule may drop it; both are
//! reproducible from their seed.

use engine::ir::{DType, Op};
use engine::parse::parse_program;
use fuzz::mutate::{discard, signed, Rng};

#[test]
fn signed_variants_shift_nonnegative_variables_to_straddle_zero() {
    let p = parse_program(
        "var r0 in [0, 7]\nvar r1 in [2, 5]\nvar n in [-3, 3]\nexpr (r0 * 4 + r1) % 4 + n\n",
    )
    .unwrap();
    for seed in 0..20 {
        let (g, roots) = signed(&p.graph, &p.outputs, &mut Rng::new(seed)).unwrap();
        assert_eq!(roots.len(), 1);
        let shifted: Vec<_> = g
            .vars()
            .iter()
            .filter(|d| d.lo < 0 && d.name != "n")
            .collect();
        assert!(!shifted.is_empty());
        for d in g.vars() {
            let orig = p.graph.var(p.graph.var_named(&d.name).unwrap());
            assert_eq!(d.hi - d.lo, orig.hi - orig.lo, "spans are kept");
            if d.lo != orig.lo {
                assert!(d.lo < 0 && d.hi >= 0, "{d:?}");
            }
        }
        assert_eq!(g.var(g.var_named("n").unwrap()).lo, -3);
        // The same seed, the same variant.
        let (g2, _) = signed(&p.graph, &p.outputs, &mut Rng::new(seed)).unwrap();
        assert_eq!(g.vars(), g2.vars());
    }
    let q = parse_program("var n in [-3, 3]\nexpr n + 1\n").unwrap();
    assert!(signed(&q.graph, &q.outputs, &mut Rng::new(0)).is_none());
}

#[test]
fn discard_variants_wrap_one_subterm_and_prefer_tangled_maybe_invalid_ones() {
    let p = parse_program(
        "var c: bool\nvar x in [0, 5]\nexpr where(c, x, where(x < 3, x + 1, invalid)) + 2\n",
    )
    .unwrap();
    let mut tangled = 0;
    for seed in 0..64 {
        let (g, roots) = discard(&p.graph, &p.outputs, &mut Rng::new(seed)).unwrap();
        assert!(g.reachable(&roots).len() > p.graph.reachable(&p.outputs).len());
        // The where with a gate in its false arm is maybe-invalid but not a
        // plain gate: the variants pick it often.
        let text = engine::print::program(&g, &roots);
        if text.contains("where(c, x, where(x < 3, x + 1, invalid)) *")
            || text.contains("where(c, x, where(x < 3, x + 1, invalid)) %")
            || text.contains("where(c, x, where(x < 3, x + 1, invalid)) mod")
            || text.contains("/ where(c, x")
            || text.contains("// where(c, x")
            || text.contains("% where(c, x")
            || text.contains("mod where(c, x")
        {
            tangled += 1;
        }
        for id in g.reachable(&roots) {
            let n = g.node(id);
            if n.op == Op::Invalid {
                assert_eq!(n.dtype, DType::Index);
            }
        }
    }
    assert!(tangled >= 10, "{tangled}");
}
