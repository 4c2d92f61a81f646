//! The domain oracle finds known differences, accepts equal forms, and
//! agrees with the interpreter-based comparison (same points, same order,
//! same first failure), exhaustive and sampled; on small domains, where
//! `check_jit` runs the batched evaluator, the compiled oracle agrees too.

use engine::dtype::Width;
use engine::interp::{PointCheck, Val};
use engine::ir::{DType, Graph, NodeId, Op};
use engine::semantics::Failure;
use engine::walk::Limits;
use fuzz::oracle::{
    check_interp, check_interp_graphs, check_jit, check_jit_graphs, meaningful_somewhere,
    CompiledOracle, Domain, OracleConfig, Report,
};

fn var(g: &mut Graph, name: &str, lo: i64, hi: i64) -> NodeId {
    let v = g.declare_var(name, DType::Index, lo, hi).unwrap();
    g.var_node(v)
}

fn idx(g: &mut Graph, k: i64) -> NodeId {
    g.cnst(k, DType::Index)
}

fn cfg(w: u32) -> OracleConfig {
    OracleConfig::at_width(Width(w))
}

/// Runs the oracles (`check_jit`, batched on small domains; the compiled
/// oracle; the interpreter) and checks they report exactly the same thing.
fn both(g: &Graph, src: &[NodeId], tgt: &[NodeId], cfg: &OracleConfig) -> Report {
    let jit = check_jit(g, src, tgt, cfg).unwrap();
    let int = check_interp(g, src, tgt, cfg).unwrap();
    assert_eq!(jit, int, "JIT oracle and interpreter disagree");
    // The compiled oracle attaches no replay.
    let mut bare = jit.clone();
    if let Some(f) = &mut bare.failure {
        f.replay = None;
    }
    let compiled = CompiledOracle::new(g, src, tgt, cfg).unwrap().run(g);
    assert_eq!(compiled, bare, "compiled and batched oracles disagree");
    if let Some(f) = &jit.failure {
        assert_eq!(
            f.replay.as_ref().unwrap().check,
            PointCheck::Fails(f.failure)
        );
    }
    jit
}

#[test]
fn truncating_rem_versus_floor_mod_differs_at_the_first_negative_point() {
    let mut g = Graph::new();
    let x = var(&mut g, "x", -3, 3);
    let four = idx(&mut g, 4);
    let rem = g.mk(Op::Rem, &[x, four]);
    let md = g.mk(Op::Mod, &[x, four]);
    let rep = both(&g, &[rem], &[md], &cfg(32));
    let f = rep.failure.as_ref().expect("a difference");
    assert_eq!(f.failure, Failure::ValueDiffers);
    assert_eq!(f.point, vec![("x".to_string(), -3)]);
    assert_eq!(f.root, Some(0));
    assert_eq!(f.index, 0);
    assert_eq!(rep.points, 1);
    assert!(!rep.sampled);
    let r = f.replay.as_ref().unwrap();
    assert_eq!(r.src, Ok(vec![Val::Int(-3)]));
    assert_eq!(r.tgt, Ok(vec![Val::Int(1)]));
    assert!(
        rep.to_string()
            .starts_with("value-differs (output 1) at x = -3"),
        "{rep}"
    );
}

#[test]
fn adding_zero_refines_on_the_whole_domain() {
    let mut g = Graph::new();
    let x = var(&mut g, "x", -3, 3);
    let zero = idx(&mut g, 0);
    let sum = g.mk(Op::Add, &[x, zero]);
    let rep = both(&g, &[sum], &[x], &cfg(8));
    assert!(rep.refines());
    assert_eq!(rep.points, 7);
    assert_eq!(rep.domain.size(), 7);
    assert!(!rep.sampled);
}

#[test]
fn target_undefined_where_source_is_defined_is_reported() {
    let mut g = Graph::new();
    let x = var(&mut g, "x", 1, 4);
    let y = var(&mut g, "y", 0, 2);
    let q = g.mk(Op::Div, &[x, y]);
    let rep = both(&g, &[x], &[q], &cfg(16));
    let f = rep.failure.unwrap();
    assert_eq!(f.failure, Failure::TargetUndefined);
    assert_eq!(f.root, None);
    assert_eq!(f.point, vec![("x".into(), 1), ("y".into(), 0)]);
}

#[test]
fn no_obligation_where_the_source_is_undefined() {
    let mut g = Graph::new();
    let x = var(&mut g, "x", -4, 4);
    let zero = idx(&mut g, 0);
    let seven = idx(&mut g, 7);
    // x // 0 is undefined everywhere: any target refines it.
    let q = g.mk(Op::FloorDiv, &[x, zero]);
    assert!(both(&g, &[q], &[seven], &cfg(8)).refines());
    // x in [0, 300] at width 8: the source overflows above 127.
    let mut g = Graph::new();
    let x = var(&mut g, "x", 0, 300);
    let one = idx(&mut g, 1);
    let s = g.mk(Op::Add, &[x, one]);
    let t = g.mk(Op::Max, &[s, one]);
    let rep = both(&g, &[s], &[t], &cfg(8));
    assert!(rep.refines());
    assert_eq!(rep.points, 301);
}

#[test]
fn masked_lanes_must_stay_masked() {
    // x * 0 => 0 is unsound when x may be invalid (docs/semantics.md).
    let mut g = Graph::new();
    let x = var(&mut g, "x", 0, 5);
    let two = idx(&mut g, 2);
    let zero = idx(&mut g, 0);
    let inv = g.invalid();
    let lt = g.mk(Op::Lt, &[x, two]);
    let gated = g.mk(Op::Where, &[lt, x, inv]);
    let prod = g.mk(Op::Mul, &[gated, zero]);
    let rep = both(&g, &[prod], &[zero], &cfg(32));
    let f = rep.failure.unwrap();
    assert_eq!(f.failure, Failure::ValidityDiffers);
    assert_eq!(f.point, vec![("x".into(), 2)]);
    // ... and an unconstrained source allows anything.
    let c = g.mk(Op::Lt, &[gated, two]);
    let t = g.bool_const(true);
    let f_ = g.bool_const(false);
    let gate = g.mk(Op::Where, &[c, t, f_]);
    let rep = both(&g, &[c], &[gate], &cfg(32));
    assert!(rep.refines());
    let rep = both(&g, &[c], &[t], &cfg(32));
    assert!(
        rep.refines(),
        "x < 2 holds wherever the source is constrained"
    );
}

#[test]
fn the_first_failing_point_is_the_smallest_index_across_chunks() {
    // Three variables, the difference only at (x, y, z) = (2, -1, 3) and at
    // a later point; chunks of 5 points, run in parallel.
    let mut g = Graph::new();
    let x = var(&mut g, "x", 0, 3);
    let y = var(&mut g, "y", -2, 2);
    let z = var(&mut g, "z", 0, 6);
    let at = |g: &mut Graph, v: NodeId, k: i64| {
        let c = idx(g, k);
        g.mk(Op::Eq, &[v, c])
    };
    let (cx, cy, cz) = (at(&mut g, x, 2), at(&mut g, y, -1), at(&mut g, z, 3));
    let cxy = g.mk(Op::And, &[cx, cy]);
    let hit = g.mk(Op::And, &[cxy, cz]);
    let late = at(&mut g, x, 3);
    let hit = g.mk(Op::Or, &[hit, late]);
    let s0 = g.mk(Op::Add, &[x, y]);
    let s = g.mk(Op::Add, &[s0, z]);
    let one = idx(&mut g, 1);
    let s1 = g.mk(Op::Add, &[s, one]);
    let t = g.mk(Op::Where, &[hit, s1, s]);
    for parallel in [true, false] {
        let c = OracleConfig {
            chunk: 5,
            parallel,
            ..cfg(64)
        };
        let rep = both(&g, &[s, x], &[t, x], &c);
        let f = rep.failure.unwrap();
        assert_eq!(
            f.point,
            vec![("x".into(), 2), ("y".into(), -1), ("z".into(), 3)]
        );
        assert_eq!(f.index, 2 * 35 + 7 + 3);
        assert_eq!(rep.points, f.index + 1);
        assert_eq!(f.env, vec![2, -1, 3]);
    }
}

#[test]
fn rows_report_the_first_failing_point_wherever_it_falls() {
    // 100 rows of 1004 points, the rows' bounds known to the compiled
    // code (it drops checks by them); chunks of 2^15 points start
    // mid-row. The difference is at one point and two points later: the
    // first point of a row, inside one, near its end, at a chunk's first
    // point, at the very last point.
    let mut g = Graph::new();
    let x = var(&mut g, "x", 0, 99);
    let y = var(&mut g, "y", -3, 1000);
    let row = 1004i64;
    for (xk, yk) in [(0, -3), (7, 40), (51, 997), (32, 637), (99, 1000)] {
        let (cx, cy) = (idx(&mut g, xk), idx(&mut g, yk));
        let on_x = g.mk(Op::Eq, &[x, cx]);
        let on_y = g.mk(Op::Eq, &[y, cy]);
        let two = idx(&mut g, 2);
        let y2 = g.mk(Op::Sub, &[y, two]);
        let on_y2 = g.mk(Op::Eq, &[y2, cy]);
        let on_ys = g.mk(Op::Or, &[on_y, on_y2]);
        let hit = g.mk(Op::And, &[on_x, on_ys]);
        let (k, one) = (idx(&mut g, row), idx(&mut g, 1));
        let xr = g.mk(Op::Mul, &[x, k]);
        let s = g.mk(Op::Add, &[xr, y]);
        let s1 = g.mk(Op::Add, &[s, one]);
        let t = g.mk(Op::Where, &[hit, s1, s]);
        for parallel in [true, false] {
            let c = OracleConfig {
                parallel,
                ..cfg(64)
            };
            let rep = both(&g, &[s], &[t], &c);
            let f = rep.failure.expect("a difference");
            assert_eq!(f.index as i64, xk * row + yk + 3, "at ({xk}, {yk})");
            assert_eq!(f.failure, Failure::ValueDiffers);
            assert_eq!(f.env, vec![xk, yk]);
        }
    }
}

#[test]
fn variables_bounded_by_i64_max_are_walked_without_overflow() {
    let mut g = Graph::new();
    let x = var(&mut g, "x", i64::MAX - 2, i64::MAX);
    let y = var(&mut g, "y", i64::MIN, i64::MIN + 1);
    let s = g.mk(Op::Add, &[x, y]);
    let t = g.mk(Op::Add, &[y, x]);
    let rep = both(&g, &[s], &[t], &cfg(64));
    assert!(rep.refines());
    assert_eq!(rep.points, 6);
    let m = g.mk(Op::Max, &[x, y]);
    let rep = both(&g, &[m], &[s], &cfg(64));
    assert_eq!(rep.failure.unwrap().index, 0);
}

#[test]
fn large_domains_are_sampled_deterministically() {
    let mut g = Graph::new();
    let x = var(&mut g, "x", -1_000_000, 1_000_000);
    let y = var(&mut g, "y", 1, 1_000_000);
    let s = g.mk(Op::FloorDiv, &[x, y]);
    let t = g.mk(Op::Div, &[x, y]);
    let c = OracleConfig {
        limits: Limits {
            whole: 1 << 20,
            samples: 20_000,
        },
        seed: 42,
        ..cfg(32)
    };
    let rep = both(&g, &[s], &[t], &c);
    assert!(rep.sampled);
    assert_eq!(rep.domain.size(), 2_000_001 * 1_000_000);
    let f = rep.failure.clone().unwrap();
    assert_eq!(f.failure, Failure::ValueDiffers);
    assert_eq!(
        check_jit(&g, &[s], &[t], &c).unwrap(),
        rep,
        "same seed, same report"
    );
    // equal forms: every sample is checked
    let rep = both(&g, &[s], &[s], &c);
    assert!(rep.refines() && rep.sampled);
    assert_eq!(rep.points, 20_000);
    // sampling hits the bounds
    let d = Domain::new(&g, &[s]);
    let mut p = [0i64; 2];
    let mut seen_lo = false;
    for k in 0..200 {
        d.sample(1, k, &mut p);
        assert!((-1_000_000..=1_000_000).contains(&p[0]) && (1..=1_000_000).contains(&p[1]));
        seen_lo |= p[0] == -1_000_000;
    }
    assert!(seen_lo);
}

#[test]
fn forms_in_two_graphs_are_merged_by_variable_name() {
    let mut gs = Graph::new();
    let x = var(&mut gs, "x", -8, 8);
    let four = idx(&mut gs, 4);
    let s = g_mk(&mut gs, Op::FloorDiv, x, four);
    let mut gt = Graph::new();
    let _pad = var(&mut gt, "unrelated", 0, 1);
    let xt = var(&mut gt, "x", -8, 8);
    let two = idx(&mut gt, 2);
    let t = g_mk(&mut gt, Op::FloorDiv, xt, two);
    let t = {
        let two = idx(&mut gt, 2);
        g_mk(&mut gt, Op::FloorDiv, t, two)
    };
    let c = cfg(8);
    let rep = check_jit_graphs(&gs, &[s], &gt, &[t], &c).unwrap();
    assert!(rep.refines(), "{rep}");
    assert_eq!(rep, check_interp_graphs(&gs, &[s], &gt, &[t], &c).unwrap());
    // conflicting bounds for the same name are an error, not a panic
    let mut gb = Graph::new();
    let xb = var(&mut gb, "x", 0, 3);
    assert!(check_jit_graphs(&gs, &[s], &gb, &[xb], &c).is_err());
}

#[test]
fn the_loop_visits_every_point_in_row_major_order() {
    // For each point of a 3 x 4 x 5 domain, a target that differs exactly
    // there: the reported index must be that point's, whatever the chunking
    // (chunks start anywhere, and the odometer carries across them).
    let mut g = Graph::new();
    let x = var(&mut g, "x", -1, 1);
    let y = var(&mut g, "y", 0, 3);
    let z = var(&mut g, "z", -2, 2);
    let s0 = g.mk(Op::Mul, &[x, y]);
    let s = g.mk(Op::Add, &[s0, z]);
    let one = idx(&mut g, 1);
    let s1 = g.mk(Op::Add, &[s, one]);
    let mut h = 0;
    for xv in -1..=1 {
        for yv in 0..=3 {
            for zv in -2..=2 {
                let mut at = |v: NodeId, k: i64| {
                    let c = idx(&mut g, k);
                    g.mk(Op::Eq, &[v, c])
                };
                let (cx, cy, cz) = (at(x, xv), at(y, yv), at(z, zv));
                let cxy = g.mk(Op::And, &[cx, cy]);
                let hit = g.mk(Op::And, &[cxy, cz]);
                let t = g.mk(Op::Where, &[hit, s1, s]);
                for chunk in [1, 7, 13, 1000] {
                    let c = OracleConfig { chunk, ..cfg(8) };
                    let rep = check_jit(&g, &[s], &[t], &c).unwrap();
                    let f = rep.failure.expect("the planted difference");
                    assert_eq!(f.index, h, "chunk {chunk}");
                    assert_eq!(f.env, vec![xv, yv, zv]);
                    assert_eq!(
                        f.replay.unwrap().check,
                        PointCheck::Fails(Failure::ValueDiffers)
                    );
                }
                h += 1;
            }
        }
    }
}

#[test]
fn forms_without_variables_have_a_one_point_domain() {
    let mut g = Graph::new();
    let (one, two, three, four) = (
        idx(&mut g, 1),
        idx(&mut g, 2),
        idx(&mut g, 3),
        idx(&mut g, 4),
    );
    let s = g.mk(Op::Add, &[one, two]);
    let rep = both(&g, &[s], &[three], &cfg(8));
    assert!(rep.refines());
    assert_eq!((rep.points, rep.domain.size()), (1, 1));
    let rep = both(&g, &[s], &[four], &cfg(8));
    let f = rep.failure.unwrap();
    assert!(f.point.is_empty());
    assert_eq!(f.failure, Failure::ValueDiffers);
    // a constant that does not fit the width makes the target undefined
    let big = idx(&mut g, 1000);
    let t = g.mk(Op::Sub, &[big, big]);
    let z = idx(&mut g, 0);
    let rep = both(&g, &[z], &[t], &cfg(8));
    assert_eq!(rep.failure.unwrap().failure, Failure::TargetUndefined);
    assert!(both(&g, &[z], &[t], &cfg(16)).refines());
}

fn g_mk(g: &mut Graph, op: Op, a: NodeId, b: NodeId) -> NodeId {
    g.mk(op, &[a, b])
}

#[test]
fn mismatched_root_counts_are_an_error() {
    let mut g = Graph::new();
    let x = var(&mut g, "x", 0, 1);
    assert!(check_jit(&g, &[x], &[x, x], &cfg(8)).is_err());
    assert!(check_jit(&g, &[x], &[x], &cfg(12)).is_err());
}

/// Deterministic pseudo-random stream (splitmix64).
struct Rng(u64);
impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n
    }
}

/// A random index expression over `leaves`, with gated (`where` with an
/// `invalid` arm) subterms.
fn random_expr(g: &mut Graph, rng: &mut Rng, leaves: &[NodeId], depth: u32) -> NodeId {
    if depth == 0 || rng.next(4) == 0 {
        return leaves[rng.next(leaves.len() as u64) as usize];
    }
    let a = random_expr(g, rng, leaves, depth - 1);
    let b = random_expr(g, rng, leaves, depth - 1);
    match rng.next(12) {
        0 => {
            let c = g.mk(Op::Lt, &[a, b]);
            let inv = g.invalid();
            g.mk(Op::Where, &[c, a, inv])
        }
        1 => {
            let c = g.mk(Op::Le, &[b, a]);
            g.mk(Op::Where, &[c, a, b])
        }
        k => {
            let ops = [
                Op::Add,
                Op::Sub,
                Op::Mul,
                Op::Min,
                Op::Max,
                Op::Div,
                Op::Rem,
                Op::FloorDiv,
                Op::Mod,
                Op::CeilDiv,
            ];
            g.mk(ops[(k as usize - 2) % ops.len()], &[a, b])
        }
    }
}

/// Rebuilds `e` with one plausible-but-maybe-wrong rewrite applied to one
/// node (operation swapped within its family).
fn mutate(g: &mut Graph, rng: &mut Rng, e: NodeId) -> NodeId {
    let nodes = g.reachable(&[e]);
    let target = nodes[rng.next(nodes.len() as u64) as usize];
    let mut map = std::collections::HashMap::new();
    for id in nodes {
        let n = *g.node(id);
        let src: Vec<NodeId> = n.src().iter().map(|s| map[s]).collect();
        let new = if src.is_empty() {
            id
        } else {
            let op = if id == target {
                match n.op {
                    Op::Div => Op::FloorDiv,
                    Op::FloorDiv => Op::CeilDiv,
                    Op::CeilDiv => Op::Div,
                    Op::Rem => Op::Mod,
                    Op::Mod => Op::Rem,
                    Op::Min => Op::Max,
                    Op::Add => Op::Sub,
                    Op::Lt => Op::Le,
                    op => op,
                }
            } else {
                n.op
            };
            g.mk(op, &src)
        };
        map.insert(id, new);
    }
    map[&e]
}

#[test]
fn jit_oracle_agrees_with_interpreter_on_random_expressions() {
    let mut failures = 0;
    for seed in 0..24u64 {
        let mut rng = Rng(seed);
        let mut g = Graph::new();
        let x = var(&mut g, "x", -6, 9);
        let y = var(&mut g, "y", -3, 4);
        let z = var(&mut g, "z", 0, 5);
        let consts: Vec<NodeId> = [-3, -1, 0, 2, 4, 100]
            .iter()
            .map(|&k| idx(&mut g, k))
            .collect();
        let mut leaves = vec![x, y, z];
        leaves.extend(consts);
        let s = random_expr(&mut g, &mut rng, &leaves, 4);
        let s2 = random_expr(&mut g, &mut rng, &leaves, 3);
        let t = mutate(&mut g, &mut rng, s);
        let t2 = mutate(&mut g, &mut rng, s2);
        for w in [8, 16, 64] {
            let c = OracleConfig {
                chunk: 97,
                ..cfg(w)
            };
            let rep = both(&g, &[s, s2], &[t, t2], &c);
            failures += rep.failure.is_some() as u32;
            // sampled mode over the same small domain agrees too
            let c = OracleConfig {
                limits: Limits {
                    whole: 10,
                    samples: 500,
                },
                seed,
                ..c
            };
            both(&g, &[s, s2], &[t, t2], &c);
        }
    }
    assert!(failures > 5, "the mutations should break some expressions");
}

#[test]
fn a_root_meaningless_on_its_own_variables_makes_a_too_large_source_meaningless() {
    // r0's domain (131,072 points) is past the walk's 65,536, but the other
    // root has no variable and divides by zero at its only point.
    let mut g = Graph::new();
    let r0 = var(&mut g, "r0", -131_071, 0);
    let (m1, zero, one) = (idx(&mut g, -1), idx(&mut g, 0), idx(&mut g, 1));
    let q = g.mk(Op::Div, &[zero, one]);
    let bad = g.mk(Op::Rem, &[m1, q]);
    assert_eq!(meaningful_somewhere(&g, &[bad, r0], Width(64)), Some(false));
    // A defined root beside it: a meaningful point is found by sampling.
    let fine = g.mk(Op::Rem, &[m1, one]);
    assert_eq!(meaningful_somewhere(&g, &[fine, r0], Width(64)), Some(true));
}

#[test]
fn a_subterm_undefined_on_its_own_variables_makes_a_too_large_source_meaningless() {
    // One point past the walk, and `-1 % (0 * 0)` divides by zero at its
    // only point: undefined is whole-evaluation.
    let mut g = Graph::new();
    let r0 = var(&mut g, "r0", 0, 65_536);
    let (m1, zero) = (idx(&mut g, -1), idx(&mut g, 0));
    let sq = g.mk(Op::Mul, &[zero, zero]);
    let rem = g.mk(Op::Rem, &[m1, sq]);
    let sum = g.mk(Op::Add, &[r0, rem]);
    assert_eq!(meaningful_somewhere(&g, &[sum], Width(64)), Some(false));
    // Under a divisor that is not always zero, sampling finds a point.
    let d = g.mk(Op::Rem, &[m1, r0]);
    let sum = g.mk(Op::Add, &[r0, d]);
    assert_eq!(meaningful_somewhere(&g, &[sum], Width(64)), Some(true));
}
