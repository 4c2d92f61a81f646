//! A case with its variables' ranges widened, its points kept.
//!
//! A prover's counterexample comes with the narrowest ranges that hold its
//! point (`var x in [0, 0]`). A peer whose rules read bounds may then
//! settle the case by them before the rule under test is reached (Morok's
//! first comparison closure decides `x*3 < c` from `x`'s range alone,
//! so its `c0*x < c1` closure never runs there). Every point of the
//! original stays in the widened case's domain, so a failure at the
//! counterexample's point is still one.

use engine::dtype::Width;
use engine::ir::ranges::{self, Range};
use engine::ir::{DType, Graph, NodeId, Op};
use engine::parse::Program;

/// Variants of `p` with wider `index` variables, distinct, in order: each
/// range widened as far as no `index` node of the case may overflow
/// `width` (upward, then downward), then to the width's extremes (up,
/// down, both). Empty where `p` has no `index` variable.
pub fn variants(p: &Program, width: Width) -> Vec<Program> {
    let vars: Vec<u32> = p
        .graph
        .reachable_vars(&p.outputs)
        .into_iter()
        .filter(|&v| p.graph.var(v).dtype == DType::Index)
        .collect();
    if vars.is_empty() {
        return Vec::new();
    }
    let (min, max) = (width.min() as i64, width.max() as i64);
    let names: Vec<&str> = vars.iter().map(|&v| p.graph.var(v).name.as_str()).collect();
    let base = bounds_of(p, &names);
    let mut out: Vec<Program> = Vec::new();
    let push = |b: &[(i64, i64)], out: &mut Vec<Program>| {
        if b == base.as_slice() || out.iter().any(|o| bounds_of(o, &names) == b) {
            return;
        }
        if let Some(q) = with_bounds(p, &vars, b) {
            out.push(q);
        }
    };
    for up in [true, false] {
        let mut b = base.clone();
        for i in 0..vars.len() {
            // The farthest bound that keeps the case free of overflow
            // (the original is: a counterexample's source is defined).
            let (lo, hi) = b[i];
            let (mut good, mut bad) = if up {
                (hi as i128, max as i128 + 1)
            } else {
                (lo as i128, min as i128 - 1)
            };
            while (bad - good).abs() > 1 {
                let mid = good + (bad - good) / 2;
                let mut t = b.clone();
                if up {
                    t[i].1 = mid as i64;
                } else {
                    t[i].0 = mid as i64;
                }
                match with_bounds(p, &vars, &t) {
                    Some(q) if !may_overflow(&q.graph, &q.outputs, width) => good = mid,
                    _ => bad = mid,
                }
            }
            if up {
                b[i].1 = good as i64;
            } else {
                b[i].0 = good as i64;
            }
        }
        push(&b, &mut out);
    }
    for (up, down) in [(true, false), (false, true), (true, true)] {
        let b: Vec<(i64, i64)> = base
            .iter()
            .map(|&(lo, hi)| (if down { min } else { lo }, if up { max } else { hi }))
            .collect();
        push(&b, &mut out);
    }
    out
}

/// The ranges of the variables `names` in `p`.
fn bounds_of(p: &Program, names: &[&str]) -> Vec<(i64, i64)> {
    names
        .iter()
        .filter_map(|n| p.graph.var_named(n))
        .map(|v| (p.graph.var(v).lo, p.graph.var(v).hi))
        .collect()
}

/// `p` with the variables `vars` in the ranges `b` (read back from its
/// text, so that every node's range is the new one).
fn with_bounds(p: &Program, vars: &[u32], b: &[(i64, i64)]) -> Option<Program> {
    let text = engine::print::program(&p.graph, &p.outputs);
    let mut lines = Vec::new();
    for line in text.lines() {
        let widened = vars.iter().zip(b).find_map(|(&v, &(lo, hi))| {
            let name = &p.graph.var(v).name;
            line.starts_with(&format!("var {name} in "))
                .then(|| format!("var {name} in [{lo}, {hi}]"))
        });
        lines.push(widened.unwrap_or_else(|| line.to_string()));
    }
    engine::parse::parse_program(&(lines.join("\n") + "\n")).ok()
}

/// Whether some `index` node reachable from `roots` may take a value
/// outside `width` (by interval arithmetic over its operands' ranges).
pub fn may_overflow(g: &Graph, roots: &[NodeId], width: Width) -> bool {
    let (min, max) = (width.min(), width.max());
    g.reachable(roots).into_iter().any(|id| {
        let n = g.node(id);
        if n.dtype != DType::Index || matches!(n.op, Op::Const(_) | Op::Var(_) | Op::Invalid) {
            return false;
        }
        let args: Vec<Range> = n
            .src()
            .iter()
            .map(|&s| {
                let m = g.node(s);
                if m.vmin > m.vmax {
                    Range::empty()
                } else {
                    Range::new(m.vmin as i128, m.vmax as i128)
                }
            })
            .collect();
        if args.iter().any(Range::is_empty) {
            return false;
        }
        let r = ranges::transfer(n.op, &args);
        !r.is_empty() && (r.lo < min || r.hi > max)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_range_widens_as_far_as_its_product_fits() {
        let p = engine::parse::parse_program("var x in [0, 0]\nexpr x * 3 < 100\n").unwrap();
        let v = variants(&p, Width(64));
        let first = engine::print::program(&v[0].graph, &v[0].outputs);
        assert!(
            first.contains("var x in [0, 3074457345618258602]"),
            "{first}"
        );
        // Downward, then the extremes.
        let texts: Vec<String> = v
            .iter()
            .map(|q| engine::print::program(&q.graph, &q.outputs))
            .collect();
        assert!(
            texts
                .iter()
                .any(|t| t.contains("var x in [-3074457345618258602, 0]")),
            "{texts:?}"
        );
        assert!(
            texts
                .iter()
                .any(|t| t.contains("var x in [0, 9223372036854775807]")),
            "{texts:?}"
        );
    }

    #[test]
    fn a_case_without_index_variables_has_no_variant() {
        let p = engine::parse::parse_program("expr 3 < 100\n").unwrap();
        assert!(variants(&p, Width(64)).is_empty());
    }
}
