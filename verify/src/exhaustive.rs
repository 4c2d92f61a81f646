//! A rule at a small width decided by walking every assignment, where the
//! solvers left it unknown.
//!
//! A pattern variable of the query is a value, a lane state (valid,
//! invalid, unconstrained) and bounds; a constant is a value. Where the
//! guard reads no variable's bounds (no `vmin`, `vmax`, `fits` of one, no
//! `is_const`), the bounds change nothing: the rule fails somewhere iff it
//! fails at some constant values, lane states and values of the valid
//! variables. At 8 bits (16 for few operands) that is few enough to try
//! each: every constant assignment is realized as a program
//! ([`crate::counterexample::realize`], whose guard check is the engine's),
//! and every value of its valid variables evaluated on both sides by the
//! reference interpreter. No failing point is a proof at that width; a
//! failing one is a counterexample, confirmed as a solver's is.

use crate::counterexample::{
    realize, reproduce, type_names, Counterexample, InternalError, RealizeError, State,
    Unconfirmed, VarValue,
};
use engine::dtype::{DType, Width};
use engine::interp::{refines, Evaluator};
use engine::rules::{Guard, IExpr, InstantiateError, Rule};
use engine::semantics::Failure;
use std::time::Instant;

/// The most assignments a walk tries: constants times the states of the
/// variables (a value each where valid, plus invalid and unconstrained):
/// three 8-bit operands, two of them constants, with room to spare;
/// seconds of the interpreter.
pub const POINTS: u128 = 1 << 25;

/// The most constant assignments a walk realizes as programs: each is a
/// graph built and its guard judged by the engine (microseconds).
pub const CONSTANT_ASSIGNMENTS: u128 = 1 << 20;

/// What a walk found.
#[derive(Debug)]
pub enum Walked {
    /// No assignment fails: proved at this width.
    Proved {
        points: u128,
    },
    /// No assignment satisfies the premise.
    Vacuous,
    Failed(Box<Counterexample>),
    /// The walk's time ran out after `points` of `of`.
    OutOfTime {
        points: u128,
        of: u128,
    },
    /// A failing point the interpreter does not reproduce on its case.
    InternalError(Box<InternalError>),
}

/// Why a rule instance is not walked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotWalked {
    #[error(
        "its guard reads the bounds or constness of `{0}`, which a walk of values does not vary"
    )]
    ReadsBounds(String),
    #[error("{points} assignments at {width} bits, over the walk's {POINTS}")]
    TooMany { points: u128, width: u32 },
    #[error("{assignments} constant assignments at {width} bits, over the walk's {CONSTANT_ASSIGNMENTS}")]
    TooManyConstants { assignments: u128, width: u32 },
    #[error("an assignment has no program: {0}")]
    Unrealizable(RealizeError),
}

/// The lane states a pattern variable of dtype `dt` takes in the query.
fn states(dt: DType) -> &'static [State] {
    match dt {
        DType::Bool => &[State::Valid, State::Unconstrained],
        _ => &[State::Valid, State::Invalid, State::Unconstrained],
    }
}

/// How many assignments a walk of `rule` (type instance `types`) at
/// `width` tries, or why it is not walked.
pub fn size(rule: &Rule, types: &[DType], width: u32) -> Result<u128, NotWalked> {
    if let Some(g) = &rule.guard {
        if let Some(v) = reads_bounds(rule, g) {
            return Err(NotWalked::ReadsBounds(rule.vars[v].name.clone()));
        }
    }
    let (mut points, mut constants) = (1u128, 1u128);
    for (v, pv) in rule.vars.iter().enumerate() {
        let (lo, hi) = Width(width).dtype_bounds(var_dtype(rule, types, v));
        let values = (hi - lo + 1) as u128;
        if pv.is_const {
            constants = constants.saturating_mul(values);
            points = points.saturating_mul(values);
        } else {
            let extra = states(var_dtype(rule, types, v)).len() as u128 - 1;
            points = points.saturating_mul(values + extra);
        }
    }
    if constants > CONSTANT_ASSIGNMENTS {
        return Err(NotWalked::TooManyConstants {
            assignments: constants,
            width,
        });
    }
    if points > POINTS {
        return Err(NotWalked::TooMany { points, width });
    }
    Ok(points)
}

fn var_dtype(rule: &Rule, types: &[DType], v: usize) -> DType {
    rule.pat_dtype(&engine::rules::Pat::Var(v), types)
}

/// The first non-constant pattern variable whose bounds or constness the
/// guard reads.
fn reads_bounds(rule: &Rule, g: &Guard) -> Option<usize> {
    let plain = |v: usize| (!rule.vars[v].is_const).then_some(v);
    match g {
        Guard::VMin(e) | Guard::VMax(e) | Guard::Fits(e, _) => iexpr_var(rule, e),
        Guard::IsConst(v) => plain(*v),
        Guard::Un(_, a) => reads_bounds(rule, a),
        Guard::Bin(_, a, b) => reads_bounds(rule, a).or_else(|| reads_bounds(rule, b)),
        Guard::Call(_, args) => args.iter().find_map(|a| reads_bounds(rule, a)),
        Guard::Int(_)
        | Guard::Bool(_)
        | Guard::Val(_)
        | Guard::Valid(_)
        | Guard::Constrained(_)
        | Guard::TyMin(_)
        | Guard::TyMax(_) => None,
    }
}

/// Whether a guard reads a variable's lane state.
fn reads_lanes(g: &Guard) -> bool {
    match g {
        Guard::Valid(_) | Guard::Constrained(_) => true,
        Guard::Un(_, a) => reads_lanes(a),
        Guard::Bin(_, a, b) => reads_lanes(a) || reads_lanes(b),
        Guard::Call(_, args) => args.iter().any(reads_lanes),
        _ => false,
    }
}

/// The assignments of the lane states from `lanes` (the all-valid one,
/// when the walk skips them) on: every state combination's values.
fn lanes_left(lanes: &[usize], plain: &[usize], dts: &[DType], bounds: &[(i128, i128)]) -> u128 {
    debug_assert!(lanes.iter().all(|&l| l == 0));
    plain
        .iter()
        .map(|&v| {
            let values = (bounds[v].1 - bounds[v].0 + 1) as u128;
            values + states(dts[v]).len() as u128 - 1
        })
        .product()
}

/// The first non-constant pattern variable under an interval expression.
fn iexpr_var(rule: &Rule, e: &IExpr) -> Option<usize> {
    match e {
        IExpr::Var(v) => (!rule.vars[*v].is_const).then_some(*v),
        IExpr::Scalar(g) => reads_bounds(rule, g),
        IExpr::Neg(a) => iexpr_var(rule, a),
        IExpr::Bin(_, a, b) => iexpr_var(rule, a).or_else(|| iexpr_var(rule, b)),
    }
}

/// Walks every assignment of `rule`'s type instance `types` at `width`
/// (see the module's documentation) until `deadline`.
pub fn walk(
    rule: &Rule,
    types: &[DType],
    width: u32,
    deadline: Instant,
) -> Result<Walked, NotWalked> {
    let of = size(rule, types, width)?;
    let dts: Vec<DType> = (0..rule.vars.len())
        .map(|v| var_dtype(rule, types, v))
        .collect();
    let bounds: Vec<(i128, i128)> = dts.iter().map(|&d| Width(width).dtype_bounds(d)).collect();
    let consts: Vec<usize> = (0..rule.vars.len())
        .filter(|&v| rule.vars[v].is_const)
        .collect();
    let plain: Vec<usize> = (0..rule.vars.len())
        .filter(|&v| !rule.vars[v].is_const)
        .collect();
    let mut vars: Vec<VarValue> = rule
        .vars
        .iter()
        .zip(&dts)
        .zip(&bounds)
        .map(|((pv, &dtype), &(lo, hi))| VarValue {
            name: pv.name.clone(),
            dtype,
            constant: pv.is_const,
            state: State::Valid,
            value: lo,
            lo,
            hi: if pv.is_const { lo } else { hi },
        })
        .collect();
    // Whether the guard reads a lane (`valid`, `constrained`): if not, an
    // assignment of constants whose premise fails with every variable
    // valid fails with every lane state.
    let lanes_matter = rule.guard.as_ref().is_some_and(reads_lanes);
    let (mut points, mut premise_held) = (0u128, false);
    let mut constants: Vec<i128> = consts.iter().map(|&v| bounds[v].0).collect();
    loop {
        for (k, &v) in consts.iter().enumerate() {
            let c = constants[k];
            (vars[v].value, vars[v].lo, vars[v].hi) = (c, c, c);
        }
        // Every lane state of the plain variables (an odometer over them).
        let mut lanes = vec![0usize; plain.len()];
        loop {
            if Instant::now() >= deadline {
                return Ok(Walked::OutOfTime { points, of });
            }
            for (k, &v) in plain.iter().enumerate() {
                vars[v].state = states(dts[v])[lanes[k]];
                vars[v].value = bounds[v].0;
            }
            match walk_values(rule, types, width, &mut vars, &plain, &bounds, deadline) {
                Values::Fails(cex) => {
                    return Ok(match reproduce(rule, types, *cex) {
                        Ok(cex) => Walked::Failed(Box::new(cex)),
                        Err(e) => Walked::InternalError(e),
                    })
                }
                Values::Hold => premise_held = true,
                Values::Skipped if !lanes_matter => {
                    points += lanes_left(&lanes, &plain, &dts, &bounds);
                    break;
                }
                Values::Skipped => {}
                Values::OutOfTime => return Ok(Walked::OutOfTime { points, of }),
                Values::Unrealizable(e) => return Err(NotWalked::Unrealizable(e)),
            }
            points += plain
                .iter()
                .zip(&lanes)
                .map(|(&v, &l)| match states(dts[v])[l] {
                    State::Valid => (bounds[v].1 - bounds[v].0 + 1) as u128,
                    _ => 1,
                })
                .product::<u128>();
            if !step(&mut lanes, |k| states(dts[plain[k]]).len() - 1) {
                break;
            }
        }
        let mut at = vec![0usize; consts.len()];
        for (k, &v) in consts.iter().enumerate() {
            at[k] = (constants[k] - bounds[v].0) as usize;
        }
        if !step(&mut at, |k| {
            let (lo, hi) = bounds[consts[k]];
            (hi - lo) as usize
        }) {
            break;
        }
        for (k, &v) in consts.iter().enumerate() {
            constants[k] = bounds[v].0 + at[k] as i128;
        }
    }
    Ok(if premise_held {
        Walked::Proved { points }
    } else {
        Walked::Vacuous
    })
}

/// Steps an odometer (`max(k)` the last digit value of position `k`, the
/// last position fastest); false once it wraps to all zeros.
fn step(digits: &mut [usize], max: impl Fn(usize) -> usize) -> bool {
    for k in (0..digits.len()).rev() {
        if digits[k] < max(k) {
            digits[k] += 1;
            return true;
        }
        digits[k] = 0;
    }
    false
}

/// What the values of one realized assignment give.
enum Values {
    /// A failing point, as a counterexample not yet confirmed.
    Fails(Box<Counterexample>),
    /// No failing point.
    Hold,
    /// The premise does not hold: the guard is false, or a constant the
    /// right side computes is undefined.
    Skipped,
    OutOfTime,
    /// The assignment has no program (a realization this walk cannot make
    /// is not a point it may pass over).
    Unrealizable(RealizeError),
}

/// Points walked between looks at the clock.
const CLOCK_EVERY: usize = 1 << 14;

/// Realizes the constants and lane states in `vars` and evaluates both
/// sides at every value of the valid plain variables.
fn walk_values(
    rule: &Rule,
    types: &[DType],
    width: u32,
    vars: &mut [VarValue],
    plain: &[usize],
    bounds: &[(i128, i128)],
    deadline: Instant,
) -> Values {
    let r = match realize(rule, types, vars, width) {
        Ok(r) => r,
        Err(RealizeError::WouldNotFire(InstantiateError::Guard | InstantiateError::Computed)) => {
            return Values::Skipped
        }
        Err(e) => return Values::Unrealizable(e),
    };
    let valid: Vec<(usize, u32)> = plain
        .iter()
        .filter(|&&v| vars[v].state == State::Valid)
        .filter_map(|&v| r.graph.var_named(&vars[v].name).map(|id| (v, id)))
        .collect();
    let mut src = Evaluator::new(&r.graph, &[r.src], Width(width));
    let mut tgt = Evaluator::new(&r.graph, &[r.tgt], Width(width));
    let mut env = r.env.clone();
    let mut digits = vec![0usize; valid.len()];
    let mut n = 0usize;
    loop {
        n += 1;
        if n.is_multiple_of(CLOCK_EVERY) && Instant::now() >= deadline {
            return Values::OutOfTime;
        }
        for (k, &(v, id)) in valid.iter().enumerate() {
            env[id as usize] = bounds[v].0 + digits[k] as i128;
        }
        // The source undefined: nothing to refine. Both sides evaluated
        // in place (no allocation per point: a walk is millions).
        let failure = match src.eval_all(&env) {
            Err(_) => None,
            Ok(sv) => {
                let s = sv[r.src.index()];
                match tgt.eval_all(&env) {
                    Err(_) => Some(Failure::TargetUndefined),
                    Ok(tv) => refines(s, tv[r.tgt.index()]),
                }
            }
        };
        if let Some(failure) = failure {
            for &(v, id) in &valid {
                vars[v].value = env[id as usize];
            }
            return Values::Fails(Box::new(Counterexample {
                rule: rule.name.clone(),
                width,
                unbounded: false,
                types: type_names(rule, types),
                failure,
                vars: vars.to_vec(),
                nodes: Vec::new(),
                case: None,
                confirmed: Err(Unconfirmed::NotYetChecked),
            }));
        }
        if !step(&mut digits, |k| {
            let (lo, hi) = bounds[valid[k].0];
            (hi - lo) as usize
        }) {
            return Values::Hold;
        }
    }
}
