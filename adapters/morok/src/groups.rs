//! Morok's pattern groups and the three tiers its pipeline runs.
//!
//! Morok's symbolic simplifier is a sum of pattern groups
//! (`morok_schedule::symbolic::patterns::*`, each a matcher of closures):
//! `symbolic_simple()` (tier 1), `symbolic()` (tier 2, tier 1 and more),
//! `sym()` (tier 3). The public groups work alone with `graph_rewrite`: they
//! are this adapter's "rules" (docs/protocol.md, section 6), applied one at
//! a time by `tileproof prove --simplifier`. A few groups are private to
//! `morok-schedule` and run only inside their tier.
//!
//! Which group fired on a node: a tier tries the patterns of the node's op
//! group by group, in the order the tier adds them; the first one that
//! rewrites wins. [`Tracker`] runs the tier itself and, when a node is
//! rewritten, names the first public group in that order that rewrites the
//! node to the very same result (Morok hash-conses, so equal means the
//! same node); a rewrite none of them makes is a private group's.

use crate::divmod_steps;
use crate::patterns;
use morok_ir::UOp;
use morok_ir::pattern::{Matcher, RewriteResult, TypedPatternMatcher};
use morok_schedule::symbolic::patterns as p;
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, LazyLock};
use tileproof_adapter::{InstanceSource, Instantiable};

/// One public pattern group.
pub struct Group {
    /// Its function's name in `morok_schedule::symbolic` (the rule's name).
    pub name: &'static str,
    pub matcher: fn() -> &'static TypedPatternMatcher,
    /// Where it is defined in morok-schedule 0.1.0-alpha.2.
    pub location: &'static str,
    /// Why tileproof can never build an input it rewrites, when that is
    /// known from what it matches (ops tileproof has no form for).
    pub unreachable: Option<&'static str>,
}

impl Group {
    /// Whether tileproof can build its instances (then it draws them), or
    /// why not (then only the adapter's own instances serve): for the group
    /// and for each of its entries alike.
    pub fn reach(&self) -> (Instantiable, InstanceSource) {
        match self.unreachable {
            Some(why) => (Instantiable::No(why.to_string()), InstanceSource::Adapter),
            None => (Instantiable::Yes, InstanceSource::Tileproof),
        }
    }
}

static FAST_DIVISION: LazyLock<TypedPatternMatcher> =
    LazyLock::new(morok_schedule::symbolic::fast_division_patterns);
static LOWER_INDEX_DTYPE: LazyLock<TypedPatternMatcher> =
    LazyLock::new(morok_schedule::symbolic::pm_lower_index_dtype);

const NO_VECTORS: &str =
    "it matches vector ops (VECTORIZE, VCONST, GEP), which tileproof has no form for";
const NO_MEMORY: &str =
    "it matches memory ops (LOAD, STORE, INDEX), which tileproof has no form for";
const NO_FLOATS: &str = "it matches float or power ops, which tileproof has no form for";
const NO_AFTER: &str = "it matches AFTER and kernel structure, which tileproof has no form for";

macro_rules! group {
    ($f:ident, $loc:literal) => {
        Group {
            name: stringify!($f),
            matcher: p::$f,
            location: $loc,
            unreachable: None,
        }
    };
    ($f:ident, $loc:literal, $why:expr) => {
        Group {
            name: stringify!($f),
            matcher: p::$f,
            location: $loc,
            unreachable: Some($why),
        }
    };
}

/// Every public group, in the order `sym()` adds them, then the groups no
/// tier runs (`pm_move_where_on_load`, fast division, index lowering).
pub static GROUPS: LazyLock<Vec<Group>> = LazyLock::new(|| {
    vec![
        group!(propagate_invalid, "schedule/src/symbolic/patterns.rs:205"),
        group!(
            constant_folding_dsl_patterns,
            "schedule/src/symbolic/patterns.rs:36"
        ),
        group!(
            vconst_folding_patterns,
            "schedule/src/symbolic/patterns.rs:71",
            NO_VECTORS
        ),
        group!(
            bool_arithmetic_patterns,
            "schedule/src/symbolic/patterns.rs:136"
        ),
        group!(
            identity_and_zero_patterns,
            "schedule/src/symbolic/patterns.rs:155"
        ),
        group!(
            self_folding_dsl_patterns,
            "schedule/src/symbolic/patterns.rs:458"
        ),
        group!(
            zero_folding_dsl_patterns,
            "schedule/src/symbolic/patterns.rs:480"
        ),
        group!(
            division_dsl_patterns,
            "schedule/src/symbolic/patterns.rs:802"
        ),
        group!(cast_dsl_patterns, "schedule/src/symbolic/patterns.rs:913"),
        group!(
            div_mod_recombine_dsl_patterns,
            "schedule/src/symbolic/patterns.rs:2396"
        ),
        group!(
            power_dsl_patterns,
            "schedule/src/symbolic/patterns.rs:1826",
            NO_FLOATS
        ),
        group!(
            boolean_dsl_simple_patterns,
            "schedule/src/symbolic/patterns.rs:1723"
        ),
        group!(
            dce_dsl_simple_patterns,
            "schedule/src/symbolic/patterns.rs:1236"
        ),
        group!(dead_loop_patterns, "schedule/src/symbolic/patterns.rs:1139"),
        group!(
            boolean_dsl_patterns,
            "schedule/src/symbolic/patterns.rs:1747"
        ),
        group!(
            term_combining_dsl_patterns,
            "schedule/src/symbolic/patterns.rs:964"
        ),
        group!(dce_dsl_patterns, "schedule/src/symbolic/patterns.rs:1273"),
        group!(
            where_alu_combining_patterns,
            "schedule/src/symbolic/patterns.rs:2177"
        ),
        group!(
            vmin_vmax_collapse_patterns,
            "schedule/src/symbolic/patterns.rs:1192"
        ),
        group!(
            minmax_dsl_patterns,
            "schedule/src/symbolic/patterns.rs:1768"
        ),
        group!(
            alu_folding_dsl_patterns,
            "schedule/src/symbolic/patterns.rs:1068"
        ),
        group!(
            comparison_dsl_patterns,
            "schedule/src/symbolic/patterns.rs:1549"
        ),
        group!(
            range_based_mod_div_patterns,
            "schedule/src/symbolic/patterns.rs:499"
        ),
        group!(
            advanced_division_dsl_patterns,
            "schedule/src/symbolic/patterns.rs:1024"
        ),
        group!(
            long_to_int_narrowing_patterns,
            "schedule/src/symbolic/patterns.rs:2457"
        ),
        group!(
            vectorize_to_vconst_patterns,
            "schedule/src/symbolic/patterns.rs:123",
            NO_VECTORS
        ),
        group!(
            after_simplification_patterns,
            "schedule/src/symbolic/patterns.rs:1289",
            NO_AFTER
        ),
        group!(
            where_bound_patterns,
            "schedule/src/symbolic/patterns.rs:1789"
        ),
        group!(
            gep_pushing_patterns,
            "schedule/src/symbolic/patterns.rs:2220",
            NO_VECTORS
        ),
        Group {
            name: "pm_simplify_valid",
            matcher: morok_schedule::symbolic::pm_simplify_valid,
            location: "schedule/src/symbolic/valid_simplification.rs:318",
            unreachable: None,
        },
        group!(
            cast_where_dsl_patterns,
            "schedule/src/symbolic/patterns.rs:1530"
        ),
        group!(
            fold_invalid_load_store,
            "schedule/src/symbolic/patterns.rs:307",
            NO_MEMORY
        ),
        group!(
            store_load_folding_patterns,
            "schedule/src/symbolic/patterns.rs:2136",
            NO_MEMORY
        ),
        group!(
            sym_phase3_patterns,
            "schedule/src/symbolic/patterns.rs:2093"
        ),
        group!(
            pm_move_where_on_load,
            "schedule/src/symbolic/patterns.rs:1349",
            NO_MEMORY
        ),
        Group {
            name: "fast_division_patterns",
            matcher: || &FAST_DIVISION,
            location: "schedule/src/symbolic/fast_div.rs:127",
            unreachable: None,
        },
        Group {
            name: "pm_lower_index_dtype",
            matcher: || &LOWER_INDEX_DTYPE,
            location: "schedule/src/symbolic/index_lowering.rs",
            unreachable: None,
        },
    ]
});

/// The pseudo-rule a rewrite no public group makes is counted under.
pub const PRIVATE: &str = "private_groups";

/// The private groups of each tier, by name (morok-schedule does not
/// export them).
pub const PRIVATE_GROUPS: &str = "commutative_canonicalization, range_based_cast_patterns (symbolic); \
    alu_vectorize_reorder_patterns, ne_zero_fold_patterns, reciprocal_patterns, reduce_sym_patterns (sym)";

/// A simplifier tier Morok's pipeline runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    SymbolicSimple,
    Symbolic,
    Sym,
}

impl Tier {
    pub fn name(self) -> &'static str {
        match self {
            Tier::SymbolicSimple => "symbolic_simple",
            Tier::Symbolic => "symbolic",
            Tier::Sym => "sym",
        }
    }

    pub fn matcher(self) -> &'static TypedPatternMatcher {
        match self {
            Tier::SymbolicSimple => morok_schedule::symbolic::symbolic_simple(),
            Tier::Symbolic => morok_schedule::symbolic::symbolic(),
            Tier::Sym => morok_schedule::symbolic::sym(),
        }
    }

    /// The public groups the tier runs, in its order.
    pub fn groups(self) -> &'static [Group] {
        let n = match self {
            Tier::SymbolicSimple => 14,
            Tier::Symbolic => 29,
            Tier::Sym => 34,
        };
        &GROUPS[..n]
    }
}

/// Rewrites a graph may make per node of its input before the adapter calls
/// it a loop (and a flat allowance for small inputs): far more than any
/// rewrite to a fixed point takes, far fewer than Morok's own guard, which
/// panics only once its rewrite stack holds 500,000 entries (about a
/// second, while a campaign checks a case in a fraction of a millisecond).
const REWRITES_PER_NODE: u64 = 500;
const REWRITES_FLAT: u64 = 20_000;

/// How often one node may be rewritten to the same result. Morok's engine
/// records a node's result once it is linked, so it rewrites a node again
/// only while that node waits on its own result (a cycle), or when several
/// nodes rebuild into one; a cycle repeats its rewrites without end.
const SAME_REWRITE: u32 = 16;

/// Rewrites remembered to name a loop's groups.
const RECENT: usize = 24;

/// Runs a matcher (a tier, or one group alone), counting which group made
/// each rewrite, and stops a rewrite that loops with a panic naming the
/// groups that keep firing.
pub struct Tracker {
    matcher: &'static TypedPatternMatcher,
    /// The groups a rewrite is attributed to, in the matcher's order.
    groups: &'static [Group],
    fired: RefCell<Vec<u64>>,
    private: RefCell<u64>,
    /// The input, whose size sets the allowance past the flat one (counted
    /// only when a rewrite gets that far).
    input: Arc<UOp>,
    /// Rewrites made so far, and how many the input allows (once counted).
    made_count: Cell<u64>,
    limit: Cell<Option<u64>>,
    recent: RefCell<VecDeque<&'static str>>,
    /// How often each (node, result) rewrite was made, by UOp ids.
    made: RefCell<HashMap<(u64, u64), u32>>,
}

impl Tracker {
    fn new(
        matcher: &'static TypedPatternMatcher,
        groups: &'static [Group],
        input: &Arc<UOp>,
    ) -> Tracker {
        Tracker {
            matcher,
            groups,
            fired: RefCell::new(vec![0; groups.len()]),
            private: RefCell::new(0),
            input: input.clone(),
            made_count: Cell::new(0),
            limit: Cell::new(None),
            recent: RefCell::new(VecDeque::with_capacity(RECENT)),
            made: RefCell::new(HashMap::new()),
        }
    }

    /// For `graph_rewrite` with `tier()` on `input`.
    pub fn tier(tier: Tier, input: &Arc<UOp>) -> Tracker {
        Tracker::new(tier.matcher(), tier.groups(), input)
    }

    /// For `graph_rewrite` with the group `GROUPS[i]` alone on `input`.
    pub fn group(i: usize, input: &Arc<UOp>) -> Tracker {
        let g = &GROUPS[i..=i];
        Tracker::new((g[0].matcher)(), g, input)
    }

    /// The groups that fired, with their counts.
    pub fn fired(&self) -> Vec<(String, u64)> {
        let mut out: Vec<(String, u64)> = self
            .groups
            .iter()
            .zip(self.fired.borrow().iter())
            .filter(|(_, n)| **n > 0)
            .map(|(g, n)| (g.name.to_string(), *n))
            .collect();
        let private = *self.private.borrow();
        if private > 0 {
            out.push((PRIVATE.to_string(), private));
        }
        out
    }

    /// The message of a rewrite stopped as a loop: the groups of its last
    /// rewrites, and their cycle when they repeat one.
    fn loop_message(&self) -> String {
        let recent: Vec<&str> = self.recent.borrow().iter().copied().collect();
        let period =
            (1..=recent.len() / 2).find(|&p| (p..recent.len()).all(|i| recent[i] == recent[i - p]));
        let tail = match period {
            Some(1) => format!("{} keeps rewriting what it rewrote", recent[0]),
            Some(p) => {
                // From the cycle's first group in the tier's order, so that
                // one loop reads the same wherever it was stopped.
                let cycle = &recent[recent.len() - p..];
                let rank = |name: &str| self.groups.iter().position(|g| g.name == name);
                let k = (0..p).min_by_key(|&i| rank(cycle[i])).unwrap_or(0);
                let rotated: Vec<&str> = cycle[k..].iter().chain(&cycle[..k]).copied().collect();
                format!("the groups {} rewrite in a cycle", rotated.join(" -> "))
            }
            None => format!("its last rewrites are by {}", recent.join(", ")),
        };
        format!(
            "graph_rewrite loops: {} rewrites without a fixed point ({tail}); Morok's own guard panics later, \
             \"infinite loop in graph_rewrite\", at a 500,000-entry stack",
            self.fired.borrow().iter().sum::<u64>() + *self.private.borrow()
        )
    }
}

impl Matcher<()> for Tracker {
    fn rewrite(&self, uop: &Arc<UOp>, ctx: &mut ()) -> RewriteResult {
        let mark = patterns::mark();
        let r = self.matcher.rewrite(uop, ctx);
        if let RewriteResult::Rewritten(new) = &r {
            // A group run alone made its own rewrites (its matcher is the
            // one that ran, and matchers are functions of the node).
            let by = match self.groups {
                [_] => Some(0),
                _ => self.groups.iter().position(|g| {
                    matches!((g.matcher)().rewrite(uop, &mut ()), RewriteResult::Rewritten(x) if Arc::ptr_eq(&x, new))
                }),
            };
            if let Some(i) = by {
                let group = self.groups[i].name;
                patterns::rename_last(mark, |closure| {
                    divmod_steps::step_of(group, closure, uop).map(divmod_steps::Step::name)
                });
            }
            let name = match by {
                Some(i) => {
                    self.fired.borrow_mut()[i] += 1;
                    self.groups[i].name
                }
                None => {
                    *self.private.borrow_mut() += 1;
                    PRIVATE
                }
            };
            let mut recent = self.recent.borrow_mut();
            if recent.len() == RECENT {
                recent.pop_front();
            }
            recent.push_back(name);
            drop(recent);
            let again = {
                let mut made = self.made.borrow_mut();
                let n = made.entry((uop.id, new.id)).or_insert(0);
                *n += 1;
                *n > SAME_REWRITE
            };
            let n = self.made_count.get() + 1;
            self.made_count.set(n);
            let too_many = n > REWRITES_FLAT && {
                let limit = self.limit.get().unwrap_or_else(|| {
                    REWRITES_FLAT + REWRITES_PER_NODE * self.input.toposort().len() as u64
                });
                self.limit.set(Some(limit));
                n > limit
            };
            if again || too_many {
                // Unwound like a panic, through Morok's engine to the serve
                // loop, but without the hook: the message is the finding,
                // and the adapter's own source line is not part of it.
                std::panic::resume_unwind(Box::new(self.loop_message()));
            }
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tier_is_its_public_groups_and_its_private_ones() {
        // A tier's closures are its groups' closures: the public groups
        // this adapter names account for all but the private groups'.
        let public = |t: Tier| {
            t.groups()
                .iter()
                .map(|g| (g.matcher)().len())
                .sum::<usize>()
        };
        for t in [Tier::SymbolicSimple, Tier::Symbolic, Tier::Sym] {
            assert!(public(t) <= t.matcher().len(), "{}", t.name());
        }
        assert_eq!(
            public(Tier::SymbolicSimple),
            Tier::SymbolicSimple.matcher().len()
        );
        let names: Vec<&str> = GROUPS.iter().map(|g| g.name).collect();
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "a group is listed twice");
    }

    #[test]
    fn a_loop_reads_from_its_first_group_wherever_it_was_stopped() {
        let input = UOp::index_const(0);
        let message = |recent: &[&'static str]| {
            let t = Tracker::tier(Tier::Symbolic, &input);
            t.recent.borrow_mut().extend(recent.iter().copied());
            t.loop_message()
        };
        let (a, b) = (
            "constant_folding_dsl_patterns",
            "range_based_mod_div_patterns",
        );
        let cycle = format!("the groups {a} -> {b} rewrite in a cycle");
        assert!(message(&[a, b, a, b]).contains(&cycle));
        assert!(message(&[b, a, b, a]).contains(&cycle));
    }
}
