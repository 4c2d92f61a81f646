//! Walk or prove: the one policy for how a domain (the box of a case's
//! variables, up to 2^64 points a variable) is decided. Every point walked
//! by the exact interpreter, by the batched evaluator or by compiled code,
//! a sample of points, or the SMT solver: which of them, in what order, is
//! decided here from the domain's point count, the forms' node count where
//! it matters, and the purpose ([`decide`]), and nowhere else.
//!
//! It lives in the engine because the verifier and the fuzz crate both
//! decide by it, and they depend on the engine but not on each other. It
//! is a plain decision about counts: it names no solver or compiler crate,
//! runs nothing, and imports nothing, so it sits below every layer. The
//! costs it weighs (measured by `tileproof bench oracle`) are summed up in
//! each threshold's comment.

/// A way of deciding a domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Way {
    /// Every point, by the exact interpreter: nothing to build.
    Interpreter,
    /// Every point, by the batched evaluator: nothing compiled.
    Batched,
    /// Every point, by compiled code.
    Compiled,
    /// This many points drawn from the domain, by the fastest evaluator the
    /// caller has: a search, never a proof.
    Sampled { samples: u64 },
    /// The SMT solver: a proof at every point when it answers.
    Smt,
}

/// A walk of at most this many points is the interpreter's where it is the
/// cheaper: it costs 20 to 40 ns a node and point, compiling 10 to 50 us a
/// node, so up to a few hundred points interpreting never costs more.
pub const INTERPRETED: u128 = 256;

/// A domain of at most this many points is walked without compiling: the
/// batched evaluator (1 to 3 ns a node and point) beats a compile below a
/// few thousand points, and where there is none the interpreter walks it
/// in a few milliseconds for a case of tens of nodes.
pub const SMALL: u128 = 4096;

/// A domain of at most this many points is walked whole by compiled code
/// where the walk is a verdict (a case's, or a proof where the solver
/// could not decide): about a second on one core.
pub const WHOLE: u128 = 1 << 24;

/// Forms of more nodes than this take seconds to compile (a 10^6-node
/// chain took 150 s and 11 GB), so the oracle interprets them over at
/// most [`INTERPRETED`] points.
pub const LARGE_FUNCTION_NODES: usize = 20_000;

/// Graphs reaching more nodes than this are not handed to the solver:
/// building and preprocessing a query is not interrupted by the timeout
/// and grows faster than the graph (a product chain of 3,000 factors takes
/// 11 s, of 30,000 factors 44 s and 3.7 GB), and a solver that needs its
/// whole timeout on far smaller graphs will not decide one this large. The
/// domain is walked instead, where it can be.
pub const SMT_NODES: usize = 10_000;

/// Where the interpreter is the only evaluator at hand (a proof the solver
/// could not decide, a finding's failing points, a peer error's triage),
/// it walks at most this many points whole: tens of milliseconds for a
/// case of tens of nodes.
pub const INTERPRETER_WALK: u128 = 1 << 16;

/// ... and, for a proof, at most this many node evaluations (points times
/// nodes): about a second.
pub const INTERPRETER_EVALS: u128 = 1 << 25;

/// What a purpose walks of one domain: every point of a domain of at most
/// `whole` points, else `samples` of them (none: a sample would prove
/// nothing, and the domain is left to the next way).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub whole: u128,
    pub samples: u64,
}

impl Limits {
    /// The checks of a campaign's case, and of its replay, import, gate
    /// stage and blame, which must reach the campaign's verdict: a sample
    /// of 2^18 points is a few milliseconds of compiled code, a case's
    /// share of a campaign.
    pub const CASE: Limits = Limits {
        whole: WHOLE,
        samples: 1 << 18,
    };

    /// The oracle on its own (`lower`, `bench oracle`): one program, so a
    /// larger sample.
    pub const ONE_SHOT: Limits = Limits {
        whole: WHOLE,
        samples: 1 << 20,
    };

    /// One libFuzzer input: executions per second are what find bugs, and
    /// libFuzzer runs one input at a time.
    pub const FUZZ_INPUT: Limits = Limits {
        whole: 1 << 16,
        samples: 1 << 10,
    };

    /// One instance of a peer's rule (`prove --simplifier`): its variables
    /// come from a pool of small ranges, so its domain is small, and every
    /// instance asks the peer.
    pub const PEER_RULE: Limits = Limits {
        whole: 1 << 20,
        samples: 1 << 16,
    };

    /// One step of finding a finding's cause, or of shrinking it while it
    /// keeps its cause (a rule applied alone, a subterm, a candidate): the
    /// failure is already known to show at a domain's edges and special
    /// values, which a sample draws first, and a campaign takes a step for
    /// every finding it meets, a shrink hundreds.
    pub const TRIAGE: Limits = Limits {
        whole: 1 << 16,
        samples: 1 << 12,
    };

    /// What the solver could not decide, walked compiled: a walk of every
    /// point is a proof at that width, a sample never is.
    const PROOF: Limits = Limits {
        whole: WHOLE,
        samples: 0,
    };

    /// A campaign's missed simplification, walked compiled: a walk of this
    /// size costs less than one SMT query, and the solver's budget is a few
    /// queries per rule.
    const MISSED: Limits = Limits {
        whole: 1 << 22,
        samples: 0,
    };

    /// A peer's bounds, checked on every case of its campaign: every node's
    /// value at every point of 2^16, else at the corners and 2^12 samples
    /// (the interpreter's walk was most of a TVM campaign's bounds cost).
    const BOUNDS: Limits = Limits {
        whole: 1 << 16,
        samples: 1 << 12,
    };

    /// The points a finding is confirmed at on a peer's backend, once per
    /// finding, by the interpreter.
    const FAILING_POINTS: Limits = Limits {
        whole: INTERPRETER_WALK,
        samples: 1 << 14,
    };

    /// Whether a source means something somewhere, once per peer error, by
    /// the interpreter: as many samples as it walks.
    const MEANING: Limits = Limits {
        whole: INTERPRETER_WALK,
        samples: 1 << 16,
    };

    /// A subterm of a source too large to walk, looked at alone for being
    /// undefined everywhere: every subterm is tried, so only small ones.
    const SUBTERM: Limits = Limits {
        whole: SMALL,
        samples: 0,
    };

    /// Whether a peer's answer is right wherever its bounds hold, once per
    /// finding, by the interpreter (values of every node at each point).
    const PREMISE: Limits = Limits {
        whole: SMALL,
        samples: 1 << 12,
    };

    /// A value read off a peer's answer for a subterm (a constant it is
    /// shifted by, whether it is defined anywhere, whether an unwrapped
    /// constant makes it right), by the interpreter, several times per
    /// finding: a few dozen points.
    const READING: Limits = Limits {
        whole: 64,
        samples: 64,
    };
}

/// Why a domain is decided: each purpose spends its own budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// The domain oracle within `Limits`: every point when they allow (a
    /// large function's few points interpreted, a small domain batched,
    /// else compiled), else a sample; never the solver.
    Oracle(Limits),
    /// A target proved to refine its source (`check`, the gate, a
    /// validator): the solver first; where it cannot decide, every point
    /// by the interpreter within a second of evaluations, else compiled.
    Proof,
    /// A missed simplification found by a campaign: walked where a walk
    /// costs less than the solver (the interpreter on a few points, else
    /// the oracle's walk, else the interpreter where that one declines);
    /// else the solver, within the campaign's budget for its rules.
    Missed,
    /// A peer's bounds against every node's values: a small domain
    /// interpreted, a larger one compiled (the interpreter where it does
    /// not compile), a larger one still sampled after its corners.
    Bounds,
    /// The failing points a finding is confirmed at on a peer's backend.
    FailingPoints,
    /// Whether a source means something at some point (a peer's error
    /// excused).
    Meaning,
    /// Whether a subterm is undefined at every point of its own domain.
    Subterm,
    /// Whether a peer's answer is right wherever the bounds its range
    /// analysis gives hold (a finding's cause: the analysis or the rule
    /// that trusted it).
    Premise,
    /// A value read off a peer's answer for a subterm, to name what is
    /// wrong with it (a finding's cause).
    Reading,
}

impl Purpose {
    /// What it walks of one domain.
    pub fn limits(self) -> Limits {
        match self {
            Purpose::Oracle(l) => l,
            Purpose::Proof => Limits::PROOF,
            Purpose::Missed => Limits::MISSED,
            Purpose::Bounds => Limits::BOUNDS,
            Purpose::FailingPoints => Limits::FAILING_POINTS,
            Purpose::Meaning => Limits::MEANING,
            Purpose::Subterm => Limits::SUBTERM,
            Purpose::Premise => Limits::PREMISE,
            Purpose::Reading => Limits::READING,
        }
    }
}

/// The ways to try, in order, until one settles the domain; a caller runs
/// the ones it has (the verifier has no compiled code, the fuzz crate no
/// solver) and skips the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    ways: [Option<Way>; 3],
}

impl Decision {
    fn of(list: impl IntoIterator<Item = Way>) -> Decision {
        let mut ways = [None; 3];
        for (slot, w) in ways.iter_mut().zip(list) {
            *slot = Some(w);
        }
        Decision { ways }
    }

    pub fn ways(self) -> impl Iterator<Item = Way> {
        self.ways.into_iter().flatten()
    }

    pub fn first(&self) -> Option<Way> {
        self.ways().next()
    }

    pub fn has(&self, way: Way) -> bool {
        self.ways().any(|w| w == way)
    }

    /// How many points are drawn, when the first way is a sample.
    pub fn samples(&self) -> Option<u64> {
        match self.first() {
            Some(Way::Sampled { samples }) => Some(samples),
            _ => None,
        }
    }

    /// Whether the domain is walked by the oracle (batched or compiled).
    pub fn walks_compiled(&self) -> bool {
        self.has(Way::Batched) || self.has(Way::Compiled)
    }
}

/// The number of points of a box of inclusive bounds (saturating at
/// `u128::MAX`).
pub fn points(bounds: impl IntoIterator<Item = (i64, i64)>) -> u128 {
    bounds.into_iter().fold(1u128, |acc, (lo, hi)| {
        acc.saturating_mul((hi as i128 - lo as i128 + 1) as u128)
    })
}

/// How `purpose` decides a domain of `points` points over forms of `nodes`
/// nodes.
pub fn decide(purpose: Purpose, points: u128, nodes: usize) -> Decision {
    let limits = purpose.limits();
    let whole = points <= limits.whole;
    let sampled = Way::Sampled {
        samples: limits.samples,
    };
    // The oracle's walk of every point: nothing compiled where it can be
    // helped.
    let oracle = if points <= SMALL {
        Way::Batched
    } else {
        Way::Compiled
    };
    match purpose {
        Purpose::Oracle(_) if !whole => Decision::of([sampled]),
        Purpose::Oracle(_) if nodes > LARGE_FUNCTION_NODES && points <= INTERPRETED => {
            Decision::of([Way::Interpreter, oracle])
        }
        Purpose::Oracle(_) => Decision::of([oracle]),
        Purpose::Proof => {
            let smt = (nodes <= SMT_NODES).then_some(Way::Smt);
            let evals = INTERPRETER_EVALS / nodes.max(1) as u128;
            let interpreted = (points <= INTERPRETER_WALK.min(evals)).then_some(Way::Interpreter);
            let compiled = whole.then_some(oracle);
            Decision::of([smt, interpreted, compiled].into_iter().flatten())
        }
        Purpose::Missed if points <= INTERPRETED => Decision::of([Way::Interpreter]),
        Purpose::Missed if points <= SMALL => Decision::of([oracle, Way::Interpreter]),
        Purpose::Missed if whole => Decision::of([oracle, Way::Smt]),
        Purpose::Missed => Decision::of([Way::Smt]),
        Purpose::Bounds if !whole => Decision::of([sampled]),
        Purpose::Bounds if points <= SMALL => Decision::of([Way::Interpreter]),
        Purpose::Bounds => Decision::of([Way::Compiled, Way::Interpreter]),
        Purpose::FailingPoints
        | Purpose::Meaning
        | Purpose::Subterm
        | Purpose::Premise
        | Purpose::Reading
            if whole =>
        {
            Decision::of([Way::Interpreter])
        }
        Purpose::FailingPoints | Purpose::Meaning | Purpose::Premise | Purpose::Reading => {
            Decision::of([sampled])
        }
        Purpose::Subterm => Decision::of([]),
    }
}

#[cfg(test)]
mod premise_tests {
    use super::*;

    #[test]
    fn a_premise_is_interpreted_up_to_4096_points_then_sampled_4096_times() {
        let ways = |points| {
            decide(Purpose::Premise, points, 10)
                .ways()
                .collect::<Vec<_>>()
        };
        assert_eq!(ways(4096), [Way::Interpreter]);
        assert_eq!(ways(4097), [Way::Sampled { samples: 4096 }]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ways(purpose: Purpose, points: u128, nodes: usize) -> Vec<Way> {
        decide(purpose, points, nodes).ways().collect()
    }

    const CASE: Purpose = Purpose::Oracle(Limits::CASE);

    #[test]
    fn a_box_counts_its_points_and_saturates() {
        assert_eq!(points([]), 1);
        assert_eq!(points([(0, 9), (-2, 2)]), 50);
        assert_eq!(points([(i64::MIN, i64::MAX), (0, 1)]), 1 << 65);
        assert_eq!(points([(i64::MIN, i64::MAX); 3]), u128::MAX);
    }

    #[test]
    fn the_oracle_walks_a_domain_of_4096_points_batched_and_one_more_compiled() {
        assert_eq!(ways(CASE, 1, 10), [Way::Batched]);
        assert_eq!(ways(CASE, 4096, 10), [Way::Batched]);
        assert_eq!(ways(CASE, 4097, 10), [Way::Compiled]);
        assert_eq!(ways(CASE, 1 << 24, 10), [Way::Compiled]);
    }

    #[test]
    fn the_oracle_samples_a_domain_past_its_limits_as_many_times_as_they_say() {
        let sampled = |samples| [Way::Sampled { samples }];
        assert_eq!(ways(CASE, (1 << 24) + 1, 10), sampled(1 << 18));
        let one_shot = Purpose::Oracle(Limits::ONE_SHOT);
        assert_eq!(ways(one_shot, (1 << 24) + 1, 10), sampled(1 << 20));
        let fuzz = Purpose::Oracle(Limits::FUZZ_INPUT);
        assert_eq!(ways(fuzz, 1 << 16, 10), [Way::Compiled]);
        assert_eq!(ways(fuzz, (1 << 16) + 1, 10), sampled(1 << 10));
        let rule = Purpose::Oracle(Limits::PEER_RULE);
        assert_eq!(ways(rule, 1 << 20, 10), [Way::Compiled]);
        assert_eq!(ways(rule, (1 << 20) + 1, 10), sampled(1 << 16));
        // Even a large function: a sample is compiled.
        assert_eq!(ways(CASE, u128::MAX, 1 << 20), sampled(1 << 18));
    }

    #[test]
    fn a_function_of_more_than_20000_nodes_is_interpreted_over_at_most_256_points() {
        assert_eq!(ways(CASE, 256, 20_001), [Way::Interpreter, Way::Batched]);
        assert_eq!(ways(CASE, 256, 20_000), [Way::Batched]);
        assert_eq!(ways(CASE, 257, 20_001), [Way::Batched]);
        assert_eq!(ways(CASE, 5000, 1 << 20), [Way::Compiled]);
    }

    #[test]
    fn a_proof_asks_the_solver_then_interprets_a_domain_within_2_pow_25_evaluations() {
        let proof = |points, nodes| ways(Purpose::Proof, points, nodes);
        assert_eq!(proof(1000, 10), [Way::Smt, Way::Interpreter, Way::Batched]);
        assert_eq!(
            proof(1 << 16, 10),
            [Way::Smt, Way::Interpreter, Way::Compiled]
        );
        // 1,000 points: interpreted for a small graph, not for one whose
        // point count times node count is past the evaluation budget.
        let huge = (INTERPRETER_EVALS / 1000 + 1) as usize;
        assert_eq!(proof(1000, huge), [Way::Batched]);
        assert_eq!(proof((1 << 16) + 1, 10), [Way::Smt, Way::Compiled]);
    }

    #[test]
    fn a_proof_over_10000_nodes_is_walked_without_the_solver() {
        assert_eq!(
            ways(Purpose::Proof, 10, 10_001),
            [Way::Interpreter, Way::Batched]
        );
        assert_eq!(ways(Purpose::Proof, 10, 10_000)[0], Way::Smt);
        assert_eq!(ways(Purpose::Proof, 1 << 30, 10_001), []);
    }

    #[test]
    fn a_proof_of_more_than_2_pow_24_points_is_the_solvers_alone() {
        assert_eq!(ways(Purpose::Proof, 1 << 24, 10), [Way::Smt, Way::Compiled]);
        assert_eq!(ways(Purpose::Proof, (1 << 24) + 1, 10), [Way::Smt]);
    }

    #[test]
    fn a_missed_simplification_of_256_points_is_interpreted_and_of_4096_batched_first() {
        let missed = |points| ways(Purpose::Missed, points, 10);
        assert_eq!(missed(256), [Way::Interpreter]);
        assert_eq!(missed(257), [Way::Batched, Way::Interpreter]);
        assert_eq!(missed(4096), [Way::Batched, Way::Interpreter]);
    }

    #[test]
    fn a_missed_simplification_past_4096_points_is_walked_compiled_up_to_2_pow_22_then_proved() {
        let missed = |points| ways(Purpose::Missed, points, 10);
        assert_eq!(missed(4097), [Way::Compiled, Way::Smt]);
        assert_eq!(missed(1 << 22), [Way::Compiled, Way::Smt]);
        assert_eq!(missed((1 << 22) + 1), [Way::Smt]);
    }

    #[test]
    fn bounds_are_interpreted_up_to_4096_points_compiled_up_to_2_pow_16_then_sampled() {
        let bounds = |points| ways(Purpose::Bounds, points, 10);
        assert_eq!(bounds(4096), [Way::Interpreter]);
        assert_eq!(bounds(4097), [Way::Compiled, Way::Interpreter]);
        assert_eq!(bounds(1 << 16), [Way::Compiled, Way::Interpreter]);
        assert_eq!(bounds((1 << 16) + 1), [Way::Sampled { samples: 1 << 12 }]);
    }

    #[test]
    fn failing_points_and_meaning_are_interpreted_up_to_2_pow_16_points_then_sampled() {
        for (purpose, samples) in [
            (Purpose::FailingPoints, 1 << 14),
            (Purpose::Meaning, 1 << 16),
        ] {
            assert_eq!(ways(purpose, 1 << 16, 10), [Way::Interpreter]);
            assert_eq!(ways(purpose, (1 << 16) + 1, 10), [Way::Sampled { samples }]);
        }
    }

    #[test]
    fn a_subterm_is_interpreted_up_to_4096_points_and_not_walked_past_them() {
        assert_eq!(ways(Purpose::Subterm, 4096, 10), [Way::Interpreter]);
        assert_eq!(ways(Purpose::Subterm, 4097, 10), []);
    }
}
