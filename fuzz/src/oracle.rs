//! The domain oracle: does a simplified form refine the original on every
//! point of the iteration domain?
//!
//! The source (original) and target (simplified) root lists are compiled
//! together into ONE native function (nodes the two forms share are computed
//! once) that loops over a range of points by itself and stops at the first
//! point where [`engine::interp::check_point`] would fail: the source is
//! defined there and the target is undefined, or a root's validity differs,
//! or a valid root's value differs (an unconstrained source root allows
//! anything). Calling native code once per chunk instead of once per point
//! is what makes exhaustive checking of ~10^7-point domains practical.
//!
//! The domain is the cartesian product of the inclusive bounds `[lo, hi]` of
//! the variables the two forms use (from the graph's variable table), in
//! row-major order: the last variable varies fastest, like nested loops. The
//! exhaustive loop walks it as an odometer (no division per point); rayon
//! splits it into chunks across cores, and the reported failure is the one
//! with the smallest linear index, whatever the scheduling.
//!
//! Whether a domain is walked or sampled, and by which evaluator, is the
//! walk policy's ([`engine::walk`]) within [`OracleConfig::limits`]. A
//! domain past them is sampled: deterministic pseudo-random points derived
//! from [`OracleConfig::seed`] and the sample number (so a report
//! reproduces exactly), biased towards each variable's bounds and towards
//! 0 and +-1, where overflow and rounding bugs live. The report then says
//! so.
//!
//! [`check_interp`] performs the same comparison, over the same points in
//! the same order, with the reference interpreter: the slow definition that
//! the JIT is tested against, and the baseline of the points/second
//! benchmark.

use crate::batch::{self, Arg, BatchEval};
use crate::jit::{
    and, check_width, compile_function, fold_any, mem, not, or, ptr_type, CompiledEval, Cond,
    JitCode, JitError, Lower, UbCond,
};
use crate::rng::{mix, wyrand, WYRAND_STEP};
use cranelift_codegen::ir::{condcodes::IntCC, types, Block, InstBuilder, Value};
use cranelift_frontend::{FunctionBuilder, Variable};
use engine::dtype::Width;
use engine::interp::{self, Evaluator, PointCheck, Undefined, Val};
use engine::ir::{Graph, NodeId};
use engine::print::count;
use engine::semantics::{self, Failure, Model, Partial};
use engine::walk::{self, Decision, Limits, Purpose, Way};
use rayon::prelude::*;
use std::fmt;

// ---- configuration and reports --------------------------------------------------

/// How a comparison runs.
#[derive(Clone, Debug)]
pub struct OracleConfig {
    /// The width `index` is checked at.
    pub width: Width,
    /// What partial ops do (the subject's profile says).
    pub partial: Partial,
    /// Whether `index` stands for the unbounded integers (the profile says).
    pub unbounded: bool,
    /// Every point of a domain within them, else this many samples.
    pub limits: Limits,
    /// Seed of the sampled points.
    pub seed: u64,
    /// Points per call of the compiled function (and per rayon task).
    pub chunk: u64,
    /// Split the domain across cores with rayon.
    pub parallel: bool,
}

impl Default for OracleConfig {
    fn default() -> OracleConfig {
        OracleConfig {
            width: Width::W64,
            partial: Partial::Undefined,
            unbounded: false,
            limits: Limits::ONE_SHOT,
            seed: 0,
            chunk: 1 << 15,
            parallel: true,
        }
    }
}

impl OracleConfig {
    pub fn at_width(width: Width) -> OracleConfig {
        OracleConfig {
            width,
            ..OracleConfig::default()
        }
    }

    /// The model points are evaluated under.
    pub fn model(&self) -> Model {
        Model {
            width: self.width,
            partial: self.partial,
            unbounded: self.unbounded,
        }
    }
}

/// What the interpreter says at a failing point (filled in by
/// [`check_jit`] by replaying the JIT's finding, so a report is
/// self-explanatory and a JIT/interpreter disagreement is visible).
#[derive(Clone, Debug, PartialEq)]
pub struct Replay {
    /// The model both forms were evaluated under.
    pub model: Model,
    pub src: Result<Vec<Val>, Undefined>,
    pub tgt: Result<Vec<Val>, Undefined>,
    /// `interp::check_point(src, tgt)`; the same failure unless the JIT is
    /// wrong.
    pub check: PointCheck,
}

/// The first point where the target does not refine the source.
#[derive(Clone, Debug, PartialEq)]
pub struct FailingPoint {
    /// Linear index in the domain (row-major), or the sample number when
    /// the domain was sampled.
    pub index: u64,
    /// The domain variables' names and values.
    pub point: Vec<(String, i64)>,
    /// The point as the input syntax writes it (`engine::print::point`).
    pub shown: String,
    /// Values indexed like the graph's variable table (variables neither
    /// form uses hold their lower bound): ready for `interp::eval`.
    pub env: Vec<i64>,
    pub failure: Failure,
    /// The first root that fails (`None` when the target is undefined).
    pub root: Option<usize>,
    pub replay: Option<Replay>,
}

/// The outcome of one comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// Points checked: the whole domain (or every sample) when nothing
    /// fails; otherwise the points up to and including the failing one, in
    /// order.
    pub points: u64,
    /// The domain was too large and was sampled.
    pub sampled: bool,
    /// The domain compared over: what a finding's failing points are
    /// looked for in next, without walking the forms for it again.
    pub domain: Domain,
    /// The two forms' node count, which the walk policy weighs.
    pub nodes: usize,
    pub failure: Option<FailingPoint>,
}

impl Report {
    pub fn refines(&self) -> bool {
        self.failure.is_none()
    }

    /// Whether every point of the domain was checked and refines: a proof
    /// by enumeration at this width.
    pub fn exhaustive_pass(&self) -> bool {
        !self.sampled && self.failure.is_none()
    }

    /// What was walked, for a verdict line: `exhaustive, 12 points`,
    /// `exhaustive, failed at point 3 of 12` (the walk stops at the first
    /// failure) or `sampled, 1000 of 1.0e12 points`.
    pub fn coverage(&self) -> String {
        if self.sampled {
            format!(
                "sampled, {} of {:.1e} points",
                self.points,
                self.domain.size() as f64
            )
        } else if self.failure.is_some() {
            format!(
                "exhaustive, failed at point {} of {}",
                self.points,
                self.domain.size()
            )
        } else {
            format!("exhaustive, {}", count(self.points, "point"))
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.failure {
            None => write!(f, "refines ({})", self.coverage()),
            Some(fail) => {
                write!(f, "{}", fail.failure.name())?;
                // Counted from 1, as `check` and the parser count `expr` lines.
                if let Some(r) = fail.root {
                    write!(f, " (output {})", r + 1)?;
                }
                write!(f, " at {}", fail.shown)?;
                if let Some(r) = &fail.replay {
                    write!(f, "; source {}, target {}", show(&r.src), show(&r.tgt))?;
                }
                write!(f, " [{}]", self.coverage())
            }
        }
    }
}

fn show(r: &Result<Vec<Val>, Undefined>) -> String {
    match r {
        Err(u) => format!("undefined ({} at node {})", u.reason, u.node.0),
        Ok(v) => {
            let parts: Vec<String> = v.iter().map(|x| x.to_string()).collect();
            format!("({})", parts.join(", "))
        }
    }
}

// ---- the domain -------------------------------------------------------------------

/// The variables two forms use and their bounds: the points to check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Domain {
    /// Variable indices in the graph's table, increasing.
    pub vars: Vec<u32>,
    pub names: Vec<String>,
    pub lo: Vec<i64>,
    pub hi: Vec<i64>,
}

/// A variable's draws: the five special values, and the uniform draw's
/// offset range (`span` 0: all 2^64 values).
struct Draw {
    lo: i64,
    span: u64,
    /// The five special values, then a slot for each pick that draws the
    /// uniform value (never read).
    special: [i64; 16],
}

impl Draw {
    fn of(lo: i64, hi: i64) -> Draw {
        let mut special = [0; 16];
        special[..5].copy_from_slice(&[
            lo,
            hi,
            0i64.clamp(lo, hi),
            1i64.clamp(lo, hi),
            (-1i64).clamp(lo, hi),
        ]);
        Draw {
            lo,
            span: (hi.wrapping_sub(lo) as u64).wrapping_add(1),
            special,
        }
    }

    /// A value: special value number `pick` if it names one, else the
    /// uniform draw that is the random word `h`.
    #[inline]
    fn pick(&self, h: u64, pick: usize) -> i64 {
        let off = match self.span {
            0 => h,
            span => ((h as u128 * span as u128) >> 64) as u64,
        };
        let uniform = self.lo.wrapping_add(off as i64);
        // Both draws computed and one picked without a branch: a branch on
        // the random pick mispredicts about once per variable, which cost
        // more than the JIT's evaluation of the point (the table has a
        // slot for every pick, so its load needs no test either).
        std::hint::select_unpredictable(pick < 5, self.special[pick & 15], uniform)
    }
}

/// The point whose hash is `base`: variable `j`'s word is the `j+1`-th
/// output of wyrand from `base`, and its pick (a special value, else the
/// uniform draw) four bits of one word per sixteen variables, drawn the
/// other way from `base`, so no bit of a value is tied to its pick. One
/// multiplication per variable and one per sixteen: a campaign draws
/// hundreds of millions of points.
#[inline]
fn draw_point<D: std::borrow::Borrow<Draw>>(
    draws: impl Iterator<Item = D>,
    base: u64,
    point: &mut [i64],
) {
    let mut picks = 0u64;
    for (j, (slot, d)) in point.iter_mut().zip(draws).enumerate() {
        if j % 16 == 0 {
            picks = wyrand(base.wrapping_sub((j as u64 / 16 + 1).wrapping_mul(WYRAND_STEP)));
        }
        let h = wyrand(base.wrapping_add((j as u64 + 1).wrapping_mul(WYRAND_STEP)));
        *slot = d
            .borrow()
            .pick(h, ((picks >> (4 * (j % 16))) & 15) as usize);
    }
}

impl Domain {
    /// The variables reachable from `roots`.
    pub fn new(g: &Graph, roots: &[NodeId]) -> Domain {
        Domain::with_size(g, roots).0
    }

    /// The variables reachable from `roots`, and the number of nodes they
    /// reach (what the walk policy weighs with the domain's size): one walk.
    pub fn with_size(g: &Graph, roots: &[NodeId]) -> (Domain, usize) {
        let (vars, nodes) = g.reachable_vars_and_size(roots);
        let domain = Domain {
            names: vars.iter().map(|&v| g.var(v).name.clone()).collect(),
            lo: vars.iter().map(|&v| g.var(v).lo).collect(),
            hi: vars.iter().map(|&v| g.var(v).hi).collect(),
            vars,
        };
        (domain, nodes)
    }

    pub fn len(&self) -> usize {
        self.vars.len()
    }

    pub fn is_empty(&self) -> bool {
        self.vars.is_empty()
    }

    fn span(&self, k: usize) -> u128 {
        (self.hi[k] as i128 - self.lo[k] as i128 + 1) as u128
    }

    /// Number of points (saturating at `u128::MAX`).
    pub fn size(&self) -> u128 {
        walk::points(self.lo.iter().copied().zip(self.hi.iter().copied()))
    }

    /// The point with linear index `index` (row-major, last variable
    /// fastest); `index` must be below [`Domain::size`].
    pub fn decode(&self, mut index: u64, out: &mut [i64]) {
        for k in (0..self.len()).rev() {
            let span = self.span(k);
            let off = (index as u128 % span) as i128;
            out[k] = (self.lo[k] as i128 + off) as i64;
            index = (index as u128 / span) as u64;
        }
    }

    /// Sample number `k` of seed `seed`: each variable is its lower bound,
    /// its upper bound, 0, 1 or -1 (clamped into the bounds) with
    /// probability 1/16 each, and uniform otherwise.
    pub fn sample(&self, seed: u64, k: u64, out: &mut [i64]) {
        let n = self.len();
        self.samples(seed, k, &mut out[..n]);
    }

    /// Samples `start`, `start + 1`, ... of seed `seed` ([`Domain::sample`]),
    /// one after another in `out` (a whole number of points): what depends
    /// only on the domain is worked out once, and the points' draws
    /// overlap in the processor.
    pub fn samples(&self, seed: u64, start: u64, out: &mut [i64]) {
        let n = self.len();
        if n == 0 {
            return;
        }
        // One point (what most callers draw, point by point) needs no
        // table: allocating one per point was most of a sample's cost.
        if out.len() == n {
            let draws = (0..n).map(|j| Draw::of(self.lo[j], self.hi[j]));
            draw_point(draws, mix(seed, start), out);
            return;
        }
        let draws: Vec<Draw> = (0..n).map(|j| Draw::of(self.lo[j], self.hi[j])).collect();
        for (k, point) in out.chunks_exact_mut(n).enumerate() {
            // A replay judges a finding's recorded point besides the
            // samples (`oracle::failing_at_point`), so a failure in a
            // narrow window is found again whatever the sequence.
            let base = mix(seed, start.wrapping_add(k as u64));
            draw_point(draws.iter(), base, point);
        }
    }

    /// Samples `start .. start + count` of seed `seed`, drawn a block at a
    /// time into this thread's buffer (a fresh zeroed chunk per walk cost
    /// the allocator as much as the draws, and a block stays in cache for
    /// the code that reads it): `f` gets each block's first sample number,
    /// its number of points and its points row by row; the first `Some`
    /// it returns ends the walk.
    pub fn sample_blocks<T>(
        &self,
        seed: u64,
        start: u64,
        count: u64,
        mut f: impl FnMut(u64, u64, &[i64]) -> Option<T>,
    ) -> Option<T> {
        let mut walk = |buf: &mut Vec<i64>| {
            let mut off = 0;
            while off < count {
                let m = (count - off).min(SAMPLE_BLOCK_POINTS);
                let len = self.len() * m as usize;
                if buf.len() < len {
                    buf.resize(len, 0);
                }
                self.samples(seed, start + off, &mut buf[..len]);
                if let Some(t) = f(start + off, m, &buf[..len]) {
                    return Some(t);
                }
                off += m;
            }
            None
        };
        // A walk inside another's visit (the buffer in use) draws into a
        // buffer of its own.
        SAMPLE_BLOCK.with(|cell| match cell.try_borrow_mut() {
            Ok(mut buf) => walk(&mut buf),
            Err(_) => walk(&mut Vec::new()),
        })
    }

    /// A full environment (indexed like the graph's variable table) from the
    /// values of the domain variables.
    pub fn env(&self, g: &Graph, point: &[i64]) -> Vec<i64> {
        let mut env: Vec<i64> = g.vars().iter().map(|d| d.lo).collect();
        self.fill_env(point, &mut env);
        env
    }

    /// Writes the domain variables' values into an environment built by
    /// [`Domain::env`] (the other variables keep theirs).
    pub fn fill_env(&self, point: &[i64], env: &mut [i64]) {
        for (k, &v) in self.vars.iter().enumerate() {
            env[v as usize] = point[k];
        }
    }

    /// Steps `point` to the next point in row-major order (an odometer,
    /// last variable fastest; the last point wraps to the first).
    pub(crate) fn step(&self, point: &mut [i64]) {
        for k in (0..self.len()).rev() {
            if point[k] < self.hi[k] {
                point[k] += 1;
                return;
            }
            point[k] = self.lo[k];
        }
    }

    fn named(&self, point: &[i64]) -> Vec<(String, i64)> {
        self.names
            .iter()
            .cloned()
            .zip(point.iter().copied())
            .collect()
    }
}

/// Which points a comparison visits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Plan {
    /// Every point, by linear index.
    Exhaustive(u64),
    /// This many samples.
    Sampled(u64),
}

impl Plan {
    fn of(domain: &Domain, decision: Decision) -> Plan {
        match decision.samples() {
            Some(samples) => Plan::Sampled(samples),
            None => Plan::Exhaustive(domain.size() as u64),
        }
    }

    fn total(self) -> u64 {
        match self {
            Plan::Exhaustive(n) | Plan::Sampled(n) => n,
        }
    }

    fn point(self, domain: &Domain, seed: u64, index: u64, out: &mut [i64]) {
        match self {
            Plan::Exhaustive(_) => domain.decode(index, out),
            Plan::Sampled(_) => domain.sample(seed, index, out),
        }
    }
}

/// A failure before it is dressed up with names and a replay.
#[derive(Clone, Copy, Debug)]
struct RawFail {
    index: u64,
    failure: Failure,
    root: Option<usize>,
}

/// Runs `f(start, count)` over `[0, total)` in chunks; the failure with the
/// smallest index wins (rayon's `find_map_first` keeps order and stops
/// scheduling later chunks once one is found).
fn first_failing_chunk<F>(total: u64, chunk: u64, parallel: bool, f: F) -> Option<RawFail>
where
    F: Fn(u64, u64) -> Option<RawFail> + Sync + Send,
{
    let chunk = chunk.max(1);
    let n = total.div_ceil(chunk);
    let run = |c: u64| {
        let start = c * chunk;
        f(start, chunk.min(total - start))
    };
    if parallel {
        (0..n).into_par_iter().find_map_first(run)
    } else {
        (0..n).find_map(run)
    }
}

fn report(g: &Graph, made: &Made, seed: u64, raw: Option<RawFail>) -> Report {
    let (domain, plan) = (&made.domain, made.plan);
    let sampled = matches!(plan, Plan::Sampled(_));
    let failure = raw.map(|r| {
        let mut point = vec![0i64; domain.len()];
        plan.point(domain, seed, r.index, &mut point);
        let named = domain.named(&point);
        FailingPoint {
            index: r.index,
            shown: engine::print::point(g, &named),
            point: named,
            env: domain.env(g, &point),
            failure: r.failure,
            root: r.root,
            replay: None,
        }
    });
    Report {
        points: failure.as_ref().map_or(plan.total(), |f| f.index + 1),
        sampled,
        domain: domain.clone(),
        nodes: made.nodes,
        failure,
    }
}

/// The domain, node count, plan and the policy's decision of comparing
/// `src` with `tgt` under `cfg`, once the width and the root counts are
/// checked.
fn domain_and_plan(
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    cfg: &OracleConfig,
) -> Result<Made, JitError> {
    check_width(cfg.width)?;
    if src.len() != tgt.len() {
        return Err(JitError::RootCount {
            src: src.len(),
            tgt: tgt.len(),
        });
    }
    let all: Vec<NodeId> = src.iter().chain(tgt).copied().collect();
    let (domain, nodes) = Domain::with_size(g, &all);
    let decision = walk::decide(Purpose::Oracle(cfg.limits), domain.size(), nodes);
    let plan = Plan::of(&domain, decision);
    Ok(Made {
        domain,
        nodes,
        plan,
        decision,
    })
}

/// A comparison's domain, its forms' node count, and how the walk policy
/// decided it: made once per comparison, whichever evaluator walks it.
struct Made {
    domain: Domain,
    nodes: usize,
    plan: Plan,
    decision: Decision,
}

// ---- the compiled oracle -------------------------------------------------------------

const V_TARGET_UNDEFINED: i64 = 1;
const V_VALIDITY: i64 = 2;
const V_VALUE: i64 = 3;

fn failure_of(code: i64) -> Failure {
    match code {
        V_TARGET_UNDEFINED => Failure::TargetUndefined,
        V_VALIDITY => Failure::ValidityDiffers,
        _ => Failure::ValueDiffers,
    }
}

/// `(points, count, out) -> processed`: checks `count` points and returns
/// how many refined before the first failure (`count` if none), writing the
/// failure's verdict code and root (-1 for none) to `out[0..2]`. `points` is
/// the first point (exhaustive plan: the loop steps an odometer from it) or
/// `count` points laid out row by row (sampled plan).
type OracleFn = unsafe extern "C" fn(*const i64, u64, *mut i64) -> u64;

/// Sampled points drawn and compared at a time: a few thousand points of a
/// few variables stay in a core's cache between the draw and the walk.
const SAMPLE_BLOCK_POINTS: u64 = 1 << 12;

thread_local! {
    /// Each worker's buffer of drawn points, reused from walk to walk.
    static SAMPLE_BLOCK: std::cell::RefCell<Vec<i64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Source and target compiled into one domain-looping function. Owns its
/// code (freed on drop).
pub struct CompiledOracle {
    code: JitCode,
    func: OracleFn,
    made: Made,
    cfg: OracleConfig,
}

impl CompiledOracle {
    /// Compiles the comparison of `src` with `tgt` (two root lists of the
    /// same graph, same length) over their domain under `cfg`. Whether the
    /// domain is walked or sampled is decided here, from its size.
    pub fn new(
        g: &Graph,
        src: &[NodeId],
        tgt: &[NodeId],
        cfg: &OracleConfig,
    ) -> Result<CompiledOracle, JitError> {
        CompiledOracle::with_plan(g, src, tgt, cfg, domain_and_plan(g, src, tgt, cfg)?)
    }

    /// [`CompiledOracle::new`] over a domain and plan already made (the
    /// check that chose to compile has them).
    fn with_plan(
        g: &Graph,
        src: &[NodeId],
        tgt: &[NodeId],
        cfg: &OracleConfig,
        made: Made,
    ) -> Result<CompiledOracle, JitError> {
        let (code, fptr) = build_oracle(g, src, tgt, cfg.model(), &made.domain, made.plan)?;
        // SAFETY: built with exactly this signature.
        let func: OracleFn = unsafe { std::mem::transmute::<*const u8, OracleFn>(fptr) };
        Ok(CompiledOracle {
            code,
            func,
            made,
            cfg: cfg.clone(),
        })
    }

    pub fn domain(&self) -> &Domain {
        &self.made.domain
    }

    pub fn sampled(&self) -> bool {
        matches!(self.made.plan, Plan::Sampled(_))
    }

    /// Points [`CompiledOracle::run`] visits when nothing fails.
    pub fn points(&self) -> u64 {
        self.made.plan.total()
    }

    /// Runs the comparison. `g` is the graph the oracle was compiled from
    /// (for the failing point's environment); no replay is attached.
    pub fn run(&self, g: &Graph) -> Report {
        let n = self.made.domain.len();
        let (plan, seed) = (self.made.plan, self.cfg.seed);
        let raw = first_failing_chunk(
            plan.total(),
            self.cfg.chunk,
            self.cfg.parallel,
            |start, count| match plan {
                Plan::Exhaustive(_) => {
                    let mut p = vec![0i64; n];
                    self.made.domain.decode(start, &mut p);
                    self.walk(&p, start, count)
                }
                Plan::Sampled(_) => {
                    self.made
                        .domain
                        .sample_blocks(seed, start, count, |at, m, block| self.walk(block, at, m))
                }
            },
        );
        report(g, &self.made, seed, raw)
    }

    /// The compiled comparison over `count` points from point number
    /// `start`: `points` holds the first point (exhaustive plan) or all of
    /// them (sampled plan).
    fn walk(&self, points: &[i64], start: u64, count: u64) -> Option<RawFail> {
        let mut out = [0i64; 2];
        // SAFETY: the function reads `n` values (exhaustive) or
        // `n * count` values (sampled) from `points`, which holds them, and
        // writes two to `out`; `self.code` keeps the code alive.
        let done = self
            .code
            .call(|| unsafe { (self.func)(points.as_ptr(), count, out.as_mut_ptr()) });
        (done < count).then(|| RawFail {
            index: start + done,
            failure: failure_of(out[0]),
            root: usize::try_from(out[1]).ok(),
        })
    }
}

/// The nodes of two forms, which form each node belongs to, and each
/// variable's slot in the domain.
struct Forms {
    /// Every node either form reaches, in increasing id order.
    union: Vec<NodeId>,
    in_src: Vec<bool>,
    in_tgt: Vec<bool>,
    /// Indexed by variable; `usize::MAX` for variables neither form uses.
    slot: Vec<usize>,
}

impl Forms {
    fn new(g: &Graph, src: &[NodeId], tgt: &[NodeId], domain: &Domain) -> Forms {
        let mut in_src = vec![false; g.len()];
        let mut in_tgt = vec![false; g.len()];
        for id in g.reachable(src) {
            in_src[id.index()] = true;
        }
        for id in g.reachable(tgt) {
            in_tgt[id.index()] = true;
        }
        let union: Vec<NodeId> = (0..g.len())
            .filter(|&i| in_src[i] || in_tgt[i])
            .map(|i| NodeId(i as u32))
            .collect();
        let mut slot = vec![usize::MAX; g.vars().len()];
        for (k, &v) in domain.vars.iter().enumerate() {
            slot[v as usize] = k;
        }
        Forms {
            union,
            in_src,
            in_tgt,
            slot,
        }
    }
}

/// Emits the oracle loop. See [`OracleFn`] for the contract. An
/// exhaustive walk goes row by row ([`build_rows`]); samples, and forms
/// without variables, point by point.
fn build_oracle(
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    m: Model,
    domain: &Domain,
    plan: Plan,
) -> Result<(JitCode, *const u8), JitError> {
    let forms = Forms::new(g, src, tgt, domain);
    if matches!(plan, Plan::Exhaustive(_)) && !domain.is_empty() {
        return build_rows(g, src, tgt, m, domain, &forms);
    }
    let n = domain.len();
    let sampled = matches!(plan, Plan::Sampled(_));
    let ptr = ptr_type()?;

    compile_function(&[ptr, types::I64, ptr], |b, args| {
        let (pts, count, out) = (args[0], args[1], args[2]);
        let header = b.create_block();
        let body = b.create_block();
        let fail = b.create_block();
        let latch = b.create_block();
        let exit = b.create_block();

        let (iv, i) = loop_header(b, count, header, body, exit);

        // body: evaluate both forms at point i (a row of `pts` when
        // sampled; the one point of a domain without variables).
        b.switch_to_block(body);
        let point: Vec<Value> = if sampled {
            let off = b.ins().imul_imm_s(i, 8 * n as i64);
            let row = b.ins().iadd(pts, off);
            (0..n)
                .map(|k| b.ins().load(types::I64, mem(), row, 8 * k as i32))
                .collect()
        } else {
            (0..n)
                .map(|k| b.ins().load(types::I64, mem(), pts, 8 * k as i32))
                .collect()
        };
        let mut lower = Lower::new(g, m);
        let mut env = |_: &mut FunctionBuilder<'_>, v: u32| point[forms.slot[v as usize]];
        let mut ub = SideUb::new(&forms);
        lower.lower(b, &forms.union, &mut env, true, &mut |b, u| ub.add(b, u));
        let (checks, failing) = refinement_checks(b, &mut lower, src, tgt, &ub);
        branch(b, failing, fail, latch);

        b.switch_to_block(fail);
        emit_fail(b, fail, &checks, ub.tgt, out, i);

        // latch: i += 1.
        b.switch_to_block(latch);
        let i1 = b.ins().iadd_imm_s(i, 1);
        b.def_var(iv, i1);
        b.ins().jump(header, &[]);

        b.switch_to_block(exit);
        b.ins().return_(&[count]);
        Ok(())
    })
}

/// The exhaustive walk, row by row: a row is a run of points where only
/// the last (fastest) variable changes. The nodes that do not depend on
/// that variable are computed once per row, outside the inner loop, which
/// evaluates the rest point by point and leaves at the first failing one.
/// `pts` holds the starting point; an odometer steps the other variables
/// between rows.
fn build_rows(
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    m: Model,
    domain: &Domain,
    forms: &Forms,
) -> Result<(JitCode, *const u8), JitError> {
    let n = domain.len();
    let last = n - 1;
    // Which nodes depend on the last variable (operands come first).
    let mut inner = vec![false; g.len()];
    for &id in &forms.union {
        let node = g.node(id);
        inner[id.index()] = match node.op {
            engine::ir::Op::Var(v) => forms.slot[v as usize] == last,
            _ => node.src().iter().any(|s| inner[s.index()]),
        };
    }
    let (per_row, per_point): (Vec<NodeId>, Vec<NodeId>) =
        forms.union.iter().partition(|id| !inner[id.index()]);
    let ptr = ptr_type()?;

    compile_function(&[ptr, types::I64, ptr], |b, args| {
        let (pts, count, out) = (args[0], args[1], args[2]);
        let header = b.create_block();
        let row = b.create_block();
        let inner_loop = b.create_block();
        let next = b.create_block();
        let fail = b.create_block();
        let after = b.create_block();
        let exit = b.create_block();
        // The odometer of the other variables, last of them first.
        let odometer: Vec<_> = (0..last).map(|_| b.create_block()).collect();

        // entry: the starting point, then the loop counter.
        let jv = b.declare_var(types::I64);
        let vars: Vec<_> = (0..n).map(|_| b.declare_var(types::I64)).collect();
        for (k, &var) in vars.iter().enumerate() {
            let x = b.ins().load(types::I64, mem(), pts, 8 * k as i32);
            b.def_var(var, x);
        }
        let (iv, i) = loop_header(b, count, header, row, exit);

        // row: the nodes the last variable does not reach, and the row's
        // length: up to the last variable's bound, at most what is left of
        // `count` (as unsigned differences: hi - x0 may exceed i64::MAX).
        b.switch_to_block(row);
        let point: Vec<Value> = vars.iter().map(|&v| b.use_var(v)).collect();
        let x0 = point[last];
        let mut lower = Lower::new(g, m);
        let mut ub = SideUb::new(forms);
        let mut outer_env = |_: &mut FunctionBuilder<'_>, v: u32| point[forms.slot[v as usize]];
        lower.lower(b, &per_row, &mut outer_env, true, &mut |b, u| ub.add(b, u));
        let hi = b.ins().iconst(types::I64, domain.hi[last]);
        let to_hi = b.ins().isub(hi, x0);
        let left = b.ins().isub(count, i);
        let left = b.ins().iadd_imm_s(left, -1);
        let steps = b.ins().umin(to_hi, left);
        let zero = b.ins().iconst(types::I64, 0);
        b.def_var(jv, zero);
        b.ins().jump(inner_loop, &[]);

        // inner loop: point j of the row.
        b.switch_to_block(inner_loop);
        let j = b.use_var(jv);
        let x = b.ins().iadd(x0, j);
        let mut inner_env = |_: &mut FunctionBuilder<'_>, v: u32| {
            let k = forms.slot[v as usize];
            if k == last {
                x
            } else {
                point[k]
            }
        };
        lower.lower(b, &per_point, &mut inner_env, true, &mut |b, u| {
            ub.add(b, u)
        });
        let (checks, failing) = refinement_checks(b, &mut lower, src, tgt, &ub);
        branch(b, failing, fail, next);

        b.switch_to_block(fail);
        let at = b.ins().iadd(i, j);
        emit_fail(b, fail, &checks, ub.tgt, out, at);

        // next: j < steps, the row goes on.
        b.switch_to_block(next);
        let more = b.ins().icmp(IntCC::UnsignedLessThan, j, steps);
        let j1 = b.ins().iadd_imm_s(j, 1);
        b.def_var(jv, j1);
        b.ins().brif(more, inner_loop, &[], after, &[]);

        // after: i += the row's length; the last variable wraps to its
        // lower bound (and the odometer carries) when the row reached its
        // bound, else the count is used up and the loop ends.
        b.switch_to_block(after);
        let len = b.ins().iadd_imm_s(steps, 1);
        let i1 = b.ins().iadd(i, len);
        b.def_var(iv, i1);
        let wrapped = b.ins().icmp(IntCC::Equal, steps, to_hi);
        let lo = b.ins().iconst(types::I64, domain.lo[last]);
        let moved = b.ins().iadd(x0, len);
        let nx = b.ins().select(wrapped, lo, moved);
        b.def_var(vars[last], nx);
        let carry = odometer.last().copied().unwrap_or(header);
        b.ins().brif(wrapped, carry, &[], header, &[]);

        // The odometer: compare before incrementing (no overflow at
        // hi == i64::MAX); a wrap carries into the variable before.
        for k in (0..odometer.len()).rev() {
            b.switch_to_block(odometer[k]);
            let x = b.use_var(vars[k]);
            let wrap = b.ins().icmp_imm_s(IntCC::Equal, x, domain.hi[k]);
            let x1 = b.ins().iadd_imm_s(x, 1);
            let lo = b.ins().iconst(types::I64, domain.lo[k]);
            let nx = b.ins().select(wrap, lo, x1);
            b.def_var(vars[k], nx);
            let carry = if k == 0 { header } else { odometer[k - 1] };
            b.ins().brif(wrap, carry, &[], header, &[]);
        }

        b.switch_to_block(exit);
        b.ins().return_(&[count]);
        Ok(())
    })
}

/// In the entry block: the loop counter `i`, 0, then a jump to `header`,
/// which goes on to `body` while `i < count`, else to `exit`. Returns the
/// counter and its value in the header (where the builder is left).
fn loop_header(
    b: &mut FunctionBuilder<'_>,
    count: Value,
    header: Block,
    body: Block,
    exit: Block,
) -> (Variable, Value) {
    let iv = b.declare_var(types::I64);
    let zero = b.ins().iconst(types::I64, 0);
    b.def_var(iv, zero);
    b.ins().jump(header, &[]);
    b.switch_to_block(header);
    let i = b.use_var(iv);
    let done = b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, i, count);
    b.ins().brif(done, exit, &[], body, &[]);
    (iv, i)
}

/// The undefinedness of each form, folded as nodes are lowered.
struct SideUb<'f> {
    forms: &'f Forms,
    src: Cond,
    tgt: Cond,
}

impl<'f> SideUb<'f> {
    fn new(forms: &'f Forms) -> SideUb<'f> {
        SideUb {
            forms,
            src: Cond::Const(false),
            tgt: Cond::Const(false),
        }
    }

    fn add(&mut self, b: &mut FunctionBuilder<'_>, u: UbCond) {
        if self.forms.in_src[u.node.index()] {
            self.src = or(b, self.src, u.cond);
        }
        if self.forms.in_tgt[u.node.index()] {
            self.tgt = or(b, self.tgt, u.cond);
        }
    }
}

/// Per root: (fails, fails because of validity); and whether the point
/// fails: the source is defined and the target undefined or some root
/// fails.
fn refinement_checks(
    b: &mut FunctionBuilder<'_>,
    lower: &mut Lower<'_>,
    src: &[NodeId],
    tgt: &[NodeId],
    ub: &SideUb<'_>,
) -> (Vec<(Cond, Cond)>, Cond) {
    let mut checks: Vec<(Cond, Cond)> = Vec::with_capacity(src.len());
    for (&s_id, &t_id) in src.iter().zip(tgt) {
        if s_id == t_id {
            checks.push((Cond::Const(false), Cond::Const(false)));
            continue;
        }
        let (s, t) = (lower.get(s_id).clone(), lower.get(t_id).clone());
        let (validity, value) =
            semantics::refinement(&mut lower.prims(b, s_id), &s.sem, &t.sem, s.dtype);
        let bad = or(b, validity, value);
        checks.push((bad, validity));
    }
    let any_bad = fold_any(b, checks.iter().map(|c| c.0));
    let src_def = not(b, ub.src);
    let t_fails = or(b, ub.tgt, any_bad);
    (checks, and(b, src_def, t_fails))
}

/// Jumps to `fail` where `failing` holds, else to `next`.
fn branch(b: &mut FunctionBuilder<'_>, failing: Cond, fail: Block, next: Block) {
    match failing {
        Cond::Const(false) => {
            b.ins().jump(next, &[]);
        }
        Cond::Const(true) => {
            b.ins().jump(fail, &[]);
        }
        Cond::Dyn(c) => {
            b.ins().brif(c, fail, &[], next, &[]);
        }
    }
}

/// The failure block (current): which verdict, which root (the first
/// failing one), written to `out`; returns `index`.
fn emit_fail(
    b: &mut FunctionBuilder<'_>,
    fail: Block,
    checks: &[(Cond, Cond)],
    tgt_ub: Cond,
    out: Value,
    index: Value,
) {
    b.set_cold_block(fail);
    let mut verdict = b.ins().iconst(types::I64, 0);
    let mut root = b.ins().iconst(types::I64, -1);
    for (r, &(bad, validity)) in checks.iter().enumerate().rev() {
        let vcode = {
            let (a, c) = (
                b.ins().iconst(types::I64, V_VALIDITY),
                b.ins().iconst(types::I64, V_VALUE),
            );
            pick(b, validity, a, c)
        };
        verdict = pick(b, bad, vcode, verdict);
        let rv = b.ins().iconst(types::I64, r as i64);
        root = pick(b, bad, rv, root);
    }
    let tu = b.ins().iconst(types::I64, V_TARGET_UNDEFINED);
    verdict = pick(b, tgt_ub, tu, verdict);
    let none = b.ins().iconst(types::I64, -1);
    root = pick(b, tgt_ub, none, root);
    b.ins().store(mem(), verdict, out, 0);
    b.ins().store(mem(), root, out, 8);
    b.ins().return_(&[index]);
}

/// `c ? x : y`, folded when `c` is known.
fn pick(b: &mut FunctionBuilder<'_>, c: Cond, x: Value, y: Value) -> Value {
    match c {
        Cond::Const(true) => x,
        Cond::Const(false) => y,
        Cond::Dyn(v) => b.ins().select(v, x, y),
    }
}

// ---- the batched oracle ---------------------------------------------------------------

/// Whether [`check_jit`] runs the batched evaluator ([`crate::batch`])
/// instead of compiled code: the same points, the same verdict, nothing
/// compiled. The policy's first way but the interpreter, which
/// [`check_cheapest`] alone takes.
fn batched(decision: Decision) -> bool {
    decision.ways().find(|&w| w != Way::Interpreter) == Some(Way::Batched)
}

/// The comparison of two forms as a batched program: the same
/// conditions as [`build_oracle`]'s function, per lane.
struct BatchOracle {
    prog: batch::Program,
    /// The target fails to refine the source at this point.
    failing: Arg,
    tgt_ub: Arg,
    /// Per root: (fails, fails because of validity).
    checks: Vec<(Arg, Arg)>,
}

impl BatchOracle {
    fn new(g: &Graph, src: &[NodeId], tgt: &[NodeId], m: Model, domain: &Domain) -> BatchOracle {
        let forms = Forms::new(g, src, tgt, domain);
        let mut b = batch::Builder::new(m.width);
        let mut lower = batch::Lower::new(g, m);
        let (mut src_ub, mut tgt_ub) = (Arg::K(0), Arg::K(0));
        lower.lower(
            &mut b,
            &forms.union,
            &mut |b, v| b.load(forms.slot[v as usize] as u32),
            true,
            &mut |b, u| {
                if forms.in_src[u.node.index()] {
                    src_ub = b.or(src_ub, u.cond);
                }
                if forms.in_tgt[u.node.index()] {
                    tgt_ub = b.or(tgt_ub, u.cond);
                }
            },
        );
        let mut checks = Vec::with_capacity(src.len());
        for (&s_id, &t_id) in src.iter().zip(tgt) {
            if s_id == t_id {
                checks.push((Arg::K(0), Arg::K(0)));
                continue;
            }
            let (s, t) = (lower.get(s_id).clone(), lower.get(t_id).clone());
            let dt = g.node(s_id).dtype;
            let (validity, value) =
                semantics::refinement(&mut lower.prims(&mut b, s_id), &s, &t, dt);
            let bad = b.or(validity, value);
            checks.push((bad, validity));
        }
        let any_bad = checks.iter().fold(Arg::K(0), |acc, c| b.or(acc, c.0));
        let src_def = b.not(src_ub);
        let t_fails = b.or(tgt_ub, any_bad);
        let failing = b.and(src_def, t_fails);
        let mut keep = vec![failing, tgt_ub];
        keep.extend(checks.iter().flat_map(|c| [c.0, c.1]));
        BatchOracle {
            prog: b.finish(&keep),
            failing,
            tgt_ub,
            checks,
        }
    }

    /// The first of the first `total` points of `domain` (row-major) where
    /// the target fails.
    fn first_failure(&self, domain: &Domain, total: u64) -> Option<RawFail> {
        if self.failing == Arg::K(0) {
            return None;
        }
        let l = self.prog.lanes();
        let nv = domain.len();
        let mut m = self.prog.machine();
        let mut inputs = vec![0i64; nv * l];
        let mut point = vec![0i64; nv];
        domain.decode(0, &mut point);
        let mut start = 0u64;
        while start < total {
            let n = (total - start).min(l as u64) as usize;
            for i in 0..n {
                for (k, &x) in point.iter().enumerate() {
                    inputs[k * l + i] = x;
                }
                domain.step(&mut point);
            }
            m.run(&inputs, n);
            if let Some(i) = (0..n).find(|&i| m.holds(self.failing, i)) {
                // The verdict and root as the compiled function's failure
                // block picks them.
                let (failure, root) = if m.holds(self.tgt_ub, i) {
                    (Failure::TargetUndefined, None)
                } else {
                    let r = (0..self.checks.len())
                        .find(|&r| m.holds(self.checks[r].0, i))
                        .expect("a failing point has a failing root");
                    let failure = if m.holds(self.checks[r].1, i) {
                        Failure::ValidityDiffers
                    } else {
                        Failure::ValueDiffers
                    };
                    (failure, Some(r))
                };
                return Some(RawFail {
                    index: start + i as u64,
                    failure,
                    root,
                });
            }
            start += n as u64;
        }
        None
    }
}

/// A single-point evaluator of both forms (the source's roots, then the
/// target's): the one [`check_jit`] walks the forms' domain with, so that
/// a check of it against the interpreter checks what judged the case.
pub enum PointEval {
    Jit(Box<CompiledEval>),
    Batch(BatchEval),
}

impl PointEval {
    /// The roots' values at `env` (indexed like the graph's variable
    /// table), or why the evaluation is undefined.
    pub fn eval(&self, env: &[i64]) -> Result<Vec<Val>, Undefined> {
        match self {
            PointEval::Jit(c) => c.eval(env),
            PointEval::Batch(b) => b.eval(env),
        }
    }

    pub fn checker(&self) -> Checker {
        match self {
            PointEval::Jit(_) => Checker::Jit,
            PointEval::Batch(_) => Checker::Batch,
        }
    }
}

/// The [`PointEval`] of the evaluator [`check_jit`] runs for `src` and
/// `tgt` under `cfg`.
pub fn point_evaluator(
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    cfg: &OracleConfig,
) -> Result<PointEval, JitError> {
    let decision = domain_and_plan(g, src, tgt, cfg)?.decision;
    let all: Vec<NodeId> = src.iter().chain(tgt).copied().collect();
    Ok(if batched(decision) {
        PointEval::Batch(BatchEval::new(g, &all, cfg.model()))
    } else {
        PointEval::Jit(Box::new(CompiledEval::new(g, &all, cfg.model())?))
    })
}

// ---- entry points ----------------------------------------------------------------------

/// Copies `tgt` of `gt` into a clone of `gs` (variables are matched by
/// name), so two forms living in different graphs can be compiled into one
/// function. Returns the merged graph and the target roots in it; the
/// source roots and variable indices of `gs` are unchanged.
pub fn merge_graphs(
    gs: &Graph,
    gt: &Graph,
    tgt: &[NodeId],
) -> Result<(Graph, Vec<NodeId>), JitError> {
    let mut g = gs.clone();
    let t = g.import(gt, tgt).map_err(JitError::Import)?;
    Ok((g, t))
}

/// Does `tgt` refine `src` on the whole domain (or a sample of it)? The JIT
/// oracle; a small exhaustive domain ([`Way::Batched`]) is walked by the
/// batched evaluator instead (the same points in the same order, the same
/// verdict, nothing compiled). A failure comes with the interpreter's
/// replay of that point.
pub fn check_jit(
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    cfg: &OracleConfig,
) -> Result<Report, JitError> {
    let made = domain_and_plan(g, src, tgt, cfg)?;
    Ok(check_fast_over(g, src, tgt, cfg, made)?.0)
}

/// [`check_jit`] over a domain already made, and which evaluator walked
/// it.
fn check_fast_over(
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    cfg: &OracleConfig,
    made: Made,
) -> Result<(Report, Checker), JitError> {
    let (mut rep, checker) = if batched(made.decision) {
        (run_batched(g, src, tgt, cfg, &made), Checker::Batch)
    } else {
        let oracle = CompiledOracle::with_plan(g, src, tgt, cfg, made)?;
        (oracle.run(g), Checker::Jit)
    };
    if let Some(f) = &mut rep.failure {
        f.replay = Some(replay(g, src, tgt, &f.env, cfg.model()));
    }
    Ok((rep, checker))
}

/// The batched oracle's report of `plan` (an exhaustive one), without a
/// replay.
fn run_batched(
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    cfg: &OracleConfig,
    made: &Made,
) -> Report {
    let domain = &made.domain;
    let raw =
        BatchOracle::new(g, src, tgt, cfg.model(), domain).first_failure(domain, made.plan.total());
    report(g, made, cfg.seed, raw)
}

/// [`check_jit`] with the batched evaluator whatever the domain's size (a
/// sampled domain is compiled as usual): for benchmarks and tests.
pub fn check_batched(
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    cfg: &OracleConfig,
) -> Result<Report, JitError> {
    let made = domain_and_plan(g, src, tgt, cfg)?;
    if matches!(made.plan, Plan::Sampled(_)) {
        return check_jit(g, src, tgt, cfg);
    }
    let mut rep = run_batched(g, src, tgt, cfg, &made);
    if let Some(f) = &mut rep.failure {
        f.replay = Some(replay(g, src, tgt, &f.env, cfg.model()));
    }
    Ok(rep)
}

/// Which evaluator checked a [`Report`] of [`check_cheapest`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checker {
    Jit,
    /// The batched evaluator ([`crate::batch`]).
    Batch,
    Interpreter,
}

impl fmt::Display for Checker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Checker::Jit => "the JIT",
            Checker::Batch => "the batched evaluator",
            Checker::Interpreter => "the interpreter",
        })
    }
}

/// [`check_jit`] (compiled or batched), or [`check_interp`] (the same
/// points, the same verdict) where the policy interprets: a large
/// function over a few points, which would take longer to compile than to
/// interpret.
pub fn check_cheapest(
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    cfg: &OracleConfig,
) -> Result<(Report, Checker), JitError> {
    let made = domain_and_plan(g, src, tgt, cfg)?;
    if made.decision.first() == Some(Way::Interpreter) {
        return Ok((interp_over(g, src, tgt, cfg, &made), Checker::Interpreter));
    }
    check_fast_over(g, src, tgt, cfg, made)
}

/// [`check_jit`] for forms in two graphs (see [`merge_graphs`]); the
/// failure's environment is indexed like the merged graph's variable table,
/// which extends `gs`'s.
pub fn check_jit_graphs(
    gs: &Graph,
    src: &[NodeId],
    gt: &Graph,
    tgt: &[NodeId],
    cfg: &OracleConfig,
) -> Result<Report, JitError> {
    let (g, t) = merge_graphs(gs, gt, tgt)?;
    check_jit(&g, src, &t, cfg)
}

/// [`check_jit`] over every point of the domain at `width`, where the
/// policy walks a proof's domain compiled ([`Purpose::Proof`]); `None`
/// (nothing compiled) where it does not. An exhaustive walk that finds no
/// failure is a proof at that width: the fallback of the SMT checks when
/// the solver cannot decide.
pub fn enumerate(
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    width: Width,
) -> Option<Result<Report, JitError>> {
    let all: Vec<NodeId> = src.iter().chain(tgt).copied().collect();
    let (domain, nodes) = Domain::with_size(g, &all);
    if !walk::decide(Purpose::Proof, domain.size(), nodes).walks_compiled() {
        return None;
    }
    let cfg = OracleConfig {
        limits: Purpose::Proof.limits(),
        ..OracleConfig::at_width(width)
    };
    Some(check_jit(g, src, tgt, &cfg))
}

/// The interpreter's evaluation of both forms at one point.
pub fn replay(g: &Graph, src: &[NodeId], tgt: &[NodeId], env: &[i64], w: Model) -> Replay {
    let env: Vec<i128> = env.iter().map(|&v| v as i128).collect();
    let s = interp::eval(g, src, &env, w);
    let t = interp::eval(g, tgt, &env, w);
    let check = interp::check_point(s.clone(), t.clone());
    Replay {
        model: w,
        src: s,
        tgt: t,
        check,
    }
}

/// The same comparison as [`check_jit`], over the same points in the same
/// order, with the reference interpreter (slow; the definition).
pub fn check_interp(
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    cfg: &OracleConfig,
) -> Result<Report, JitError> {
    let made = domain_and_plan(g, src, tgt, cfg)?;
    Ok(interp_over(g, src, tgt, cfg, &made))
}

/// [`check_interp`] over a domain already made.
fn interp_over(
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    cfg: &OracleConfig,
    made: &Made,
) -> Report {
    let (domain, plan) = (&made.domain, made.plan);
    let (w, seed) = (cfg.model(), cfg.seed);
    let raw = first_failing_chunk(plan.total(), cfg.chunk, cfg.parallel, |start, count| {
        let mut point = vec![0i64; domain.len()];
        let mut env: Vec<i128> = domain.env(g, &point).iter().map(|&v| v as i128).collect();
        let (mut eval_src, mut eval_tgt) = (Evaluator::new(g, src, w), Evaluator::new(g, tgt, w));
        for idx in start..start + count {
            plan.point(domain, seed, idx, &mut point);
            for (k, &v) in domain.vars.iter().enumerate() {
                env[v as usize] = point[k] as i128;
            }
            let Ok(s) = eval_src.eval(&env) else {
                continue; // no obligation where the source is undefined
            };
            let t = eval_tgt.eval(&env);
            let root = t
                .as_ref()
                .ok()
                .and_then(|t| interp::first_differing(&s, t))
                .map(|(root, _)| root);
            if let PointCheck::Fails(failure) = interp::check_point(Ok(s), t) {
                return Some(RawFail {
                    index: idx,
                    failure,
                    root,
                });
            }
        }
        None
    });
    let mut rep = report(g, made, seed, raw);
    if let Some(f) = &mut rep.failure {
        f.replay = Some(replay(g, src, tgt, &f.env, w));
    }
    rep
}

/// Whether `roots` means something at some point of its domain, by the
/// interpreter under model `w`: the evaluation is defined and no root is
/// unconstrained there (a root that is unconstrained everywhere, like
/// `x // 0` where partial ops are unspecified, carries no value a
/// simplifier could get wrong). `Some(true)` when such a point is found,
/// `Some(false)` when every point was tried and none is, or when a part
/// walked on its own settles it; `None` when the domain is too large to
/// walk ([`Purpose::Meaning`]) and no sampled point was (the answer is not
/// known).
pub fn meaningful_somewhere(g: &Graph, roots: &[NodeId], w: impl Into<Model>) -> Option<bool> {
    let w = w.into();
    let (walked, none) = never(g, roots, w, Purpose::Meaning, Some(0), means_something);
    if !none {
        return Some(true);
    }
    if walked == Some(Way::Interpreter) {
        return Some(false);
    }
    // Too large to walk: a part that means nothing on its own smaller
    // domain settles it. Every root must mean something at the same point,
    // and undefined is whole-evaluation, so a subterm undefined at every
    // point of its own domain leaves nothing defined anywhere (`-1 % (0 /
    // 1)` beside `r0` in [-131071, 0]; `r0 + -1 % (0 * 0)`, r0 in [0,
    // 65536]: one point past the walk).
    let root_alone = || {
        roots.len() > 1
            && roots
                .iter()
                .any(|&r| never(g, &[r], w, Purpose::Meaning, None, means_something).1)
    };
    let subterm = || {
        g.reachable(roots).into_iter().any(|n| {
            !g.node(n).src().is_empty() && never(g, &[n], w, Purpose::Subterm, None, defined).1
        })
    };
    (root_alone() || subterm()).then_some(false)
}

/// Whether the roots are undefined at some point of their domain: `Some(true)`
/// at a point walked or sampled, `Some(false)` when every point was walked,
/// `None` when a sample found none or the domain is too large to look at.
pub fn undefined_somewhere(g: &Graph, roots: &[NodeId], w: impl Into<Model>) -> Option<bool> {
    let (walked, none) = never(g, roots, w.into(), Purpose::Meaning, Some(0), |r| {
        r.is_err()
    });
    match walked {
        Some(_) if !none => Some(true),
        Some(Way::Interpreter) => Some(false),
        _ => None,
    }
}

/// Defined, and no root unconstrained.
fn means_something(r: Result<Vec<Val>, Undefined>) -> bool {
    r.is_ok_and(|vals| vals.iter().all(|v| *v != Val::Unconstrained))
}

fn defined(r: Result<Vec<Val>, Undefined>) -> bool {
    r.is_ok()
}

/// How `purpose` walks the domain of `roots` (`None`: not at all, or a
/// sample where `sample`, the sampler's stream, is not given), and whether
/// `ok` holds of their evaluation at none of the points walked (false,
/// without trying, when nothing is walked).
fn never(
    g: &Graph,
    roots: &[NodeId],
    w: Model,
    purpose: Purpose,
    sample: Option<u64>,
    ok: fn(Result<Vec<Val>, Undefined>) -> bool,
) -> (Option<Way>, bool) {
    let (domain, nodes) = Domain::with_size(g, roots);
    let walked = walk::decide(purpose, domain.size(), nodes).first();
    let (n, stream) = match (walked, sample) {
        (Some(Way::Interpreter), _) => (domain.size() as u64, None),
        (Some(Way::Sampled { samples }), Some(stream)) => (samples, Some(stream)),
        _ => return (None, false),
    };
    let mut point = vec![0i64; domain.len()];
    let mut eval = Evaluator::new(g, roots, w);
    let none = (0..n).all(|k| {
        match stream {
            Some(stream) => domain.sample(stream, k, &mut point),
            None => domain.decode(k, &mut point),
        }
        let env: Vec<i128> = domain.env(g, &point).iter().map(|&v| v as i128).collect();
        !ok(eval.eval(&env))
    });
    (walked, none)
}

/// [`check_interp`] for forms in two graphs.
pub fn check_interp_graphs(
    gs: &Graph,
    src: &[NodeId],
    gt: &Graph,
    tgt: &[NodeId],
    cfg: &OracleConfig,
) -> Result<Report, JitError> {
    let (g, t) = merge_graphs(gs, gt, tgt)?;
    check_interp(&g, src, &t, cfg)
}

/// `rep`, a walk that sampled the domain and passed, failing instead at
/// `env` (a point found before: a kept finding's `# point:`), when `tgt`
/// fails to refine `src` there under `model`: a sample drawn another way
/// may miss a failure in a narrow window, the point it was found at does
/// not. The point counts as one more after the samples.
pub fn failing_at_point(
    rep: &Report,
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    env: &[i64],
    model: Model,
) -> Option<Report> {
    if !rep.sampled || rep.failure.is_some() || src.len() != tgt.len() {
        return None;
    }
    let failure = fails_at(g, src, tgt, env, model)?;
    let root = match failure {
        Failure::TargetUndefined => None,
        _ => (0..src.len()).find(|&i| fails_at(g, &src[i..=i], &tgt[i..=i], env, model).is_some()),
    };
    let point: Vec<i64> = rep.domain.vars.iter().map(|&v| env[v as usize]).collect();
    let named = rep.domain.named(&point);
    Some(Report {
        points: rep.points + 1,
        sampled: true,
        domain: rep.domain.clone(),
        nodes: rep.nodes,
        failure: Some(FailingPoint {
            index: rep.points,
            shown: engine::print::point(g, &named),
            point: named,
            env: env.to_vec(),
            failure,
            root,
            replay: Some(replay(g, src, tgt, env, model)),
        }),
    })
}

/// How `tgt` fails to refine `src` at `env` under `model`, if it does.
pub fn fails_at(
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    env: &[i64],
    model: Model,
) -> Option<Failure> {
    let wide: Vec<i128> = env.iter().map(|&v| v as i128).collect();
    let s = interp::eval(g, src, &wide, model);
    let t = interp::eval(g, tgt, &wide, model);
    interp::check_point(s, t).failure()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The draw written out on its own: one splitmix step per point, one
    /// hash per variable, a 128-bit product for the uniform draw, the pick
    /// from the top bits of one multiplication of the hash.
    fn drawn_as_found(d: &Domain, seed: u64, k: u64) -> Vec<i64> {
        use crate::rng::{wyrand, WYRAND_STEP};
        let base = crate::rng::mix(seed, k);
        (0..d.len())
            .map(|j| {
                let h = wyrand(base.wrapping_add((j as u64 + 1).wrapping_mul(WYRAND_STEP)));
                let word = wyrand(base.wrapping_sub((j as u64 / 16 + 1).wrapping_mul(WYRAND_STEP)));
                let pick = (word >> (4 * (j % 16))) & 15;
                let (lo, hi) = (d.lo[j], d.hi[j]);
                let span = (hi as i128 - lo as i128 + 1) as u128;
                // All 2^64 values: the offset is the word itself.
                let off = if span >> 64 == 1 {
                    h as u128
                } else {
                    (h as u128 * span) >> 64
                };
                let uniform = (lo as i128 + off as i128) as i64;
                let special = [
                    lo,
                    hi,
                    0i64.clamp(lo, hi),
                    1i64.clamp(lo, hi),
                    (-1i64).clamp(lo, hi),
                    uniform,
                ];
                special[(pick as usize).min(5)]
            })
            .collect()
    }

    #[test]
    fn each_special_value_is_drawn_a_sixteenth_of_the_time_and_the_rest_spread_over_the_range() {
        let d = Domain {
            vars: vec![0, 1],
            names: vec!["x".into(), "y".into()],
            lo: vec![-1000, i64::MIN],
            hi: vec![1000, i64::MAX],
        };
        let n = 1 << 16;
        let mut pts = vec![0i64; 2 * n];
        d.samples(11, 0, &mut pts);
        for (j, specials) in [[-1000, 1000, 0, 1, -1], [i64::MIN, i64::MAX, 0, 1, -1]]
            .iter()
            .enumerate()
        {
            let xs: Vec<i64> = pts.iter().skip(j).step_by(2).copied().collect();
            for s in specials {
                let share = xs.iter().filter(|&&x| x == *s).count() as f64 / n as f64;
                // 1/16, plus what the uniform draw gives the value itself.
                assert!(
                    (share - 1.0 / 16.0).abs() < 0.01,
                    "var {j}: {s} drawn {share}"
                );
            }
            let (neg, pos) = (
                xs.iter().filter(|&&x| x < -1).count(),
                xs.iter().filter(|&&x| x > 1).count(),
            );
            let (neg, pos) = (neg as f64 / n as f64, pos as f64 / n as f64);
            assert!(
                (neg - pos).abs() < 0.02 && neg > 0.3,
                "var {j}: {neg} below, {pos} above"
            );
        }
        // The two variables' picks are independent: both special at once
        // about (5/16)^2 of the time.
        let both = (0..n)
            .filter(|&k| {
                [pts[2 * k], pts[2 * k + 1]]
                    .iter()
                    .zip([[-1000i64, 1000, 0, 1, -1], [i64::MIN, i64::MAX, 0, 1, -1]])
                    .all(|(x, sp)| sp.contains(x))
            })
            .count() as f64
            / n as f64;
        assert!((both - 25.0 / 256.0).abs() < 0.01, "both special: {both}");
    }

    #[test]
    fn a_chunk_of_samples_is_the_samples_drawn_one_by_one() {
        // Eighteen variables: the picks of the last two come from a
        // second word.
        let bounds: Vec<(i64, i64)> = [
            (i64::MIN, i64::MAX),
            (0, 0),
            (-3, 17),
            (i64::MIN, -1),
            (5, i64::MAX),
            (-(1 << 40), 1 << 40),
        ]
        .into_iter()
        .cycle()
        .take(18)
        .collect();
        let d = Domain {
            vars: (0..bounds.len() as u32).collect(),
            names: (0..bounds.len()).map(|i| format!("v{i}")).collect(),
            lo: bounds.iter().map(|b| b.0).collect(),
            hi: bounds.iter().map(|b| b.1).collect(),
        };
        let n = d.len();
        for seed in [0, 7, 0xDEAD_BEEF] {
            let start = 167_900;
            let mut chunk = vec![0i64; n * 64];
            d.samples(seed, start, &mut chunk);
            for k in 0..64 {
                let want = drawn_as_found(&d, seed, start + k as u64);
                assert_eq!(
                    &chunk[k * n..(k + 1) * n],
                    &want[..],
                    "seed {seed}, sample {}",
                    start + k as u64
                );
                let mut one = vec![0i64; n];
                d.sample(seed, start + k as u64, &mut one);
                assert_eq!(one, want);
            }
        }
    }
}
