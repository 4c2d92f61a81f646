//! The algorithmic passes, and their one registry ([`PASSES`]).
//!
//! A pass is a rewrite written in Rust rather than in the rule DSL: it
//! reads a node through [`crate::algebra`] and returns a smaller or more
//! canonical node of the same value. **The contract** every pass keeps
//! (the rewriter relies on it, the gate checks it per firing):
//!
//! - **sound per firing**: the result refines the node it replaces (the
//!   semantics' refinement: defined wherever the node is, invalid exactly
//!   where it is, equal where it is a value). A pass that drops, moves or
//!   duplicates operands only does so where none can be invalid, and
//!   checks every node it adds with [`crate::algebra::defined`];
//! - **named per sub-rule**: it returns `(i, result)` with `i` an index
//!   into its row's `rules`, the name the firing is recorded and validated
//!   under (so each sub-rule is validated, and reported, on its own);
//! - **terminating**: each sub-rule states what its firings decrease
//!   ([`Decreases`]: the declarative rules' reduction order, the
//!   divisions, or nothing but a canonical form the rewriter does not take
//!   twice at one node), and the gate checks it on every firing it
//!   validates;
//! - **quiet where it does not apply**: `None`, not its input;
//! - **an operation's**: a pass reads an operation and its operands, so it
//!   is never tried at a leaf (a constant, a variable, `invalid`); the
//!   declarative rules still are (`int_decided` folds a variable whose
//!   range is one value).
//!
//! Adding a pass is its file here, one row of [`PASSES`] and its fire cases
//! (`fire_cases.txt`, [`fire_cases`]): the rewriter tries the rows in order
//! after the declarative groups, the firings are named from the row, and
//! the gate validates a firing of every rule of every row on its cases.

pub mod absorb;
pub mod compare;
pub mod context;
pub mod divmod;
pub mod facts;
pub mod gated;
pub mod linear;
pub mod minmax;
pub mod residue;
pub mod symdiv;

use crate::ir::dtype::Width;
use crate::ir::{Graph, NodeId, Op};
use rustc_hash::FxHashMap;

/// A pass at a node: `(graph, node, the node is read whole, width)` to
/// `(index into the row's rules, result)`.
pub type PassFn = fn(&mut Graph, NodeId, bool, Width) -> Option<(usize, NodeId)>;

/// The nodes a pass is tried at: operations only, never a leaf (at a
/// leaf no pass fired in the peers' suites and 100,000 generated cases,
/// and trying every pass there was about 3% of simplifying a typical
/// expression).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum At {
    /// Every operation.
    Any,
    /// A division or remainder (either family).
    Division,
    /// A `where`.
    Where,
    /// A node read whole: the root of a sum, or of an `&&`, `||`, `min` or
    /// `max` chain (its parent is not the same chain), as the rewriter
    /// reads chains (see [`crate::rewrite`]).
    Whole,
}

impl At {
    /// Whether a pass of this kind is tried at a node of `op`; `whole`: the
    /// node is read whole.
    #[inline]
    pub fn applies(self, op: Op, whole: bool) -> bool {
        if op.arity() == 0 {
            // A leaf: nothing for a pass to read.
            return false;
        }
        match self {
            At::Any => true,
            At::Division => op.is_divmod(),
            At::Where => op == Op::Where,
            At::Whole => whole,
        }
    }
}

/// What a firing of an algorithmic rule decreases: why the rewriter stops
/// with it, checked on every firing the gate validates
/// ([`Decreases::check`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decreases {
    /// The reduction order every declarative rule decreases
    /// ([`crate::rules::reduction`]).
    Order,
    /// The divisions, compared in turn: how many there are, the sum of
    /// their constant divisors' magnitudes, the size of their numerators,
    /// the ranks of their numerators' constants (counted as a tree: a
    /// shared node once per occurrence).
    Divisions,
    /// No measure: the result is a canonical form, which the pass does not
    /// rewrite back into its input, and which the rewriter takes once per
    /// node.
    Canonical,
}

impl Decreases {
    pub fn name(self) -> &'static str {
        match self {
            Decreases::Order => "the reduction order",
            Decreases::Divisions => "the divisions",
            Decreases::Canonical => "a canonical form",
        }
    }

    /// Whether `pass` rewriting `before` to `after` (nodes of `g`) keeps
    /// this statement; why not.
    pub fn check(
        self,
        g: &mut Graph,
        pass: &Pass,
        before: NodeId,
        after: NodeId,
        w: Width,
    ) -> Result<(), String> {
        match self {
            Decreases::Order => crate::rules::reduction::compare(g, before, after)
                .map(|_| ())
                .map_err(|e| e.to_string()),
            Decreases::Divisions => {
                let (b, a) = (divisions(g, before), divisions(g, after));
                if a < b {
                    Ok(())
                } else {
                    Err(format!(
                        "the divisions do not decrease: (count, divisors, numerator sizes, numerator constants) {b:?} to {a:?}"
                    ))
                }
            }
            Decreases::Canonical => {
                // Read whole or not, the pass must not give the input back
                // (tried only where the rewriter would try it).
                let op = g.node(after).op;
                for whole in [true, false]
                    .into_iter()
                    .filter(|&x| pass.at.applies(op, x))
                {
                    if let Some((_, back)) = (pass.run)(g, after, whole, w) {
                        if back == before {
                            return Err(format!(
                                "{} rewrites its result back into its input",
                                pass.name
                            ));
                        }
                    }
                }
                Ok(())
            }
        }
    }
}

/// The divisions' measure of the term at `root` (see
/// [`Decreases::Divisions`]), saturating.
fn divisions(g: &Graph, root: NodeId) -> [i128; 4] {
    use crate::rules::reduction::rank_of;
    // Per node: its divisions' measure, its size and its constants' ranks.
    let mut memo: FxHashMap<NodeId, ([i128; 4], i128, i128)> = FxHashMap::default();
    for n in g.post_order(root, |_| false) {
        let node = g.node(n);
        let mut d = [0i128; 4];
        let (mut size, mut ranks) = (1i128, 0i128);
        if let Some(c) = node.as_const() {
            ranks = rank_of(c);
        }
        for s in node.src() {
            let (cd, cs, cr) = memo[s];
            for k in 0..4 {
                d[k] = d[k].saturating_add(cd[k]);
            }
            size = size.saturating_add(cs);
            ranks = ranks.saturating_add(cr);
        }
        if node.op.is_divmod() {
            let (num, den) = (node.src()[0], node.src()[1]);
            let divisor = g.node(den).as_const().map_or(0, |c| (c as i128).abs());
            let (_, ns, nr) = memo[&num];
            d[0] = d[0].saturating_add(1);
            d[1] = d[1].saturating_add(divisor);
            d[2] = d[2].saturating_add(ns);
            d[3] = d[3].saturating_add(nr);
        }
        memo.insert(n, (d, size, ranks));
    }
    memo[&root].0
}

/// One algorithmic pass.
#[derive(Clone, Copy, Debug)]
pub struct Pass {
    /// The pass's name (its module's).
    pub name: &'static str,
    /// Its sub-rules, the names its firings are recorded under; the pass
    /// returns an index into this list.
    pub rules: &'static [&'static str],
    /// What each sub-rule's firings decrease (one per rule, in order).
    pub decreases: &'static [Decreases],
    /// Where it is tried.
    pub at: At,
    /// Its results are canonical forms: one that comes back at the same
    /// node (another rule undid part of it) is not taken again.
    pub canonicalizing: bool,
    pub run: PassFn,
}

/// Every algorithmic pass, in the order the rewriter tries them after the
/// declarative groups (the first that fires wins).
pub const PASSES: [Pass; 10] = [
    Pass {
        name: "divmod",
        rules: &divmod::RULES,
        decreases: &[Decreases::Divisions; 8],
        at: At::Division,
        canonicalizing: false,
        run: |g, n, _, w| divmod::fold_divmod_general(g, n, w),
    },
    Pass {
        name: "symdiv",
        rules: &symdiv::RULES,
        decreases: &[Decreases::Order],
        at: At::Division,
        canonicalizing: true,
        run: |g, n, _, w| symdiv::rewrite(g, n, w),
    },
    Pass {
        name: "linear",
        rules: &linear::RULES,
        decreases: &[Decreases::Canonical, Decreases::Divisions],
        at: At::Any,
        canonicalizing: true,
        run: linear::rewrite,
    },
    Pass {
        name: "compare",
        rules: &compare::RULES,
        decreases: &[Decreases::Canonical, Decreases::Order],
        at: At::Any,
        canonicalizing: true,
        run: |g, n, _, w| compare::rewrite(g, n, w),
    },
    Pass {
        name: "facts",
        rules: &facts::RULES,
        decreases: &[Decreases::Canonical; 2],
        at: At::Whole,
        canonicalizing: true,
        run: |g, n, _, w| facts::rewrite(g, n, w),
    },
    Pass {
        name: "minmax",
        rules: &minmax::RULES,
        decreases: &[Decreases::Canonical],
        at: At::Whole,
        canonicalizing: true,
        run: |g, n, _, w| minmax::rewrite(g, n, w),
    },
    Pass {
        name: "absorb",
        rules: &absorb::RULES,
        decreases: &[Decreases::Order],
        at: At::Whole,
        canonicalizing: true,
        run: |g, n, _, w| absorb::rewrite(g, n, w),
    },
    Pass {
        name: "gated",
        rules: &gated::RULES,
        decreases: &[Decreases::Canonical; 3],
        at: At::Where,
        canonicalizing: true,
        run: |g, n, _, w| gated::rewrite(g, n, w),
    },
    Pass {
        name: "residue",
        rules: &residue::RULES,
        decreases: &[Decreases::Order; 3],
        at: At::Any,
        canonicalizing: true,
        run: |g, n, _, w| residue::rewrite(g, n, w),
    },
    Pass {
        name: "context",
        rules: &context::RULES,
        decreases: &[
            Decreases::Order,
            Decreases::Order,
            Decreases::Order,
            Decreases::Order,
            Decreases::Order,
            // Two nested `where`s swapped: as big as before.
            Decreases::Canonical,
        ],
        at: At::Any,
        canonicalizing: true,
        run: context::rewrite,
    },
];

/// Every algorithmic rule name, in registry order (the order
/// [`crate::rewrite::Simplifier::rule_names`] lists them after the
/// declarative ones).
pub fn rules() -> impl Iterator<Item = &'static str> {
    PASSES.iter().flat_map(|p| p.rules.iter().copied())
}

/// The pass a rule name belongs to, if it is an algorithmic rule.
pub fn pass_of(rule: &str) -> Option<&'static Pass> {
    PASSES.iter().find(|p| p.rules.contains(&rule))
}

/// One fire case: a program (`var` lines and one `expr`) whose
/// simplification fires `rule`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FireCase {
    pub rule: String,
    pub program: String,
}

/// A line of `fire_cases.txt` that is not a case.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("fire_cases.txt line {line}: {what}")]
pub struct FireCaseError {
    pub line: usize,
    pub what: String,
}

/// The fire cases of every algorithmic rule (`fire_cases.txt`), in file
/// order.
pub fn fire_cases() -> Result<Vec<FireCase>, FireCaseError> {
    let mut out = Vec::new();
    let mut rule: Option<&str> = None;
    let mut vars = String::new();
    for (i, line) in include_str!("fire_cases.txt").lines().enumerate() {
        let t = line.trim();
        let err = |what: String| FireCaseError { line: i + 1, what };
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if let Some(name) = t.strip_prefix("rule ") {
            let name = name.trim();
            if pass_of(name).is_none() {
                return Err(err(format!("no algorithmic rule named `{name}`")));
            }
            rule = Some(name);
            vars.clear();
        } else if t.starts_with("var ") {
            vars.push_str(t);
            vars.push('\n');
        } else if let Some(expr) = t.strip_prefix("fires ") {
            let rule = rule.ok_or_else(|| err("a case before any `rule` line".into()))?;
            out.push(FireCase {
                rule: rule.to_string(),
                program: format!("{vars}expr {}\n", expr.trim()),
            });
        } else {
            return Err(err(format!("not a `rule`, `var` or `fires` line: `{t}`")));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::simp;

    #[test]
    fn no_pass_is_tried_at_a_leaf_while_the_rules_still_fold_a_one_value_variable() {
        for leaf in [Op::Const(3), Op::Var(0), Op::Invalid] {
            for pass in &PASSES {
                for whole in [true, false] {
                    assert!(!pass.at.applies(leaf, whole), "{} at {leaf:?}", pass.name);
                }
            }
        }
        assert_eq!(
            simp("var x in [3, 3]\nvar y in [0, 9]", "x * y + x"),
            "y * 3 + 3"
        );
    }
}
