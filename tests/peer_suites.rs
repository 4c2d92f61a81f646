//! The peers' own public test suites as regression cases (`tests/peers/`):
//! the integer index-arithmetic cases of tinygrad, TVM (rewrite and
//! canonical simplifiers), XLA (indexing maps, with and without
//! constraints) and Halide, each converted to the text format with the
//! peer's expected result as a `peer` line (and its own domain as `peer
//! constraint` lines).
//!
//! For every case this test
//! 1. parses it (a parse error fails the test, naming `file:line`);
//! 2. checks that the peer's form refines the input over the domain with the
//!    reference interpreter: a failure is a bad conversion and fails the test
//!    (with constraints, the roots are the results under the domain, so a
//!    peer domain that drops or adds a point fails too: validity differs);
//! 3. simplifies the input with the built-in rules at the suite's width and
//!    checks the engine's result the same way: a failure fails the test;
//! 4. compares the engine's result with the peer's form (division-family
//!    nodes, node count and constraints, [`engine::suite::cost`]; structural
//!    equality) and prints a table per suite and the work list of cases
//!    where the engine leaves more than the peer. The comparison is a
//!    report, not an assertion.
//!
//! Soundness is judged exhaustively on domains of at most 65,536 points;
//! larger domains get their corner points (up to 2^12 of them) plus 65,536
//! deterministic samples (`fuzz::oracle::Domain::sample`, which favours
//! bounds, 0 and ±1).
//!
//! Run: `cargo test --release --test peer_suites -- --nocapture`.

use engine::dtype::Width;
use engine::interp::{self, Val};
use engine::ir::{Graph, NodeId};
use engine::parse::parse_program;
use engine::rewrite::Simplifier;
use engine::rules::builtin;
use engine::semantics::Failure as Obligation;
use engine::suite::{cost, Cost, Reach, Suite, SuiteCase, SUITE_FILES};
use fuzz::oracle::Domain;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// Domains up to this many points are checked exhaustively.
const MAX_EXHAUSTIVE: u128 = 65_536;
/// Samples checked on a larger domain (after its corners).
const SAMPLES: u64 = 65_536;
/// Corner points are enumerated for at most this many variables.
const MAX_CORNER_VARS: usize = 12;

fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers")
}

/// A suite file read with the one `.cases` reader ([`engine::suite`]);
/// a file that does not read fails the test, naming it.
fn read_suite(path: &Path) -> Suite {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    engine::suite::read_suite(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

// ---- evaluation -------------------------------------------------------------------

/// Evaluates several root sets of one graph at many points, each node once
/// per point, with the interpreter's operations ([`interp::apply`]): a set
/// is undefined at a point when any node reachable from it is, as in
/// [`interp::eval`].
struct Evaluator<'g> {
    g: &'g Graph,
    w: Width,
    /// Reachable nodes of every set, in topological (id) order.
    order: Vec<NodeId>,
    /// Node id -> slot in `order`.
    slot: Vec<usize>,
    /// Per set: the slots reachable from it, and the slots of its roots.
    sets: Vec<(Vec<usize>, Vec<usize>)>,
}

impl<'g> Evaluator<'g> {
    fn new(g: &'g Graph, sets: &[&[NodeId]], w: Width) -> Evaluator<'g> {
        let all: Vec<NodeId> = sets.iter().flat_map(|s| s.iter().copied()).collect();
        let order = g.reachable(&all);
        let mut slot = vec![usize::MAX; order.last().map_or(0, |l| l.index() + 1)];
        for (k, id) in order.iter().enumerate() {
            slot[id.index()] = k;
        }
        let sets = sets
            .iter()
            .map(|roots| {
                let reach = g
                    .reachable(roots)
                    .iter()
                    .map(|id| slot[id.index()])
                    .collect();
                let rs = roots.iter().map(|id| slot[id.index()]).collect();
                (reach, rs)
            })
            .collect();
        Evaluator {
            g,
            w,
            order,
            slot,
            sets,
        }
    }

    /// Values of every set's roots at `env` (indexed like the variable
    /// table), or `None` for a set that is undefined there.
    fn eval(&self, env: &[i128], vals: &mut Vec<Option<Val>>) -> Vec<Option<Vec<Val>>> {
        vals.clear();
        let mut args: Vec<Val> = Vec::with_capacity(3);
        for &id in &self.order {
            args.clear();
            let mut ok = true;
            for &s in self.g.node(id).src() {
                match vals[self.slot[s.index()]] {
                    Some(a) => args.push(a),
                    None => ok = false,
                }
            }
            let v = if ok {
                interp::eval_node(self.g, id, &args, env, self.w).ok()
            } else {
                None
            };
            vals.push(v);
        }
        self.sets
            .iter()
            .map(|(reach, roots)| {
                if reach.iter().all(|&k| vals[k].is_some()) {
                    Some(roots.iter().map(|&k| vals[k].unwrap()).collect())
                } else {
                    None
                }
            })
            .collect()
    }
}

/// The first point where a target set does not refine the source set (set
/// 0), per target: `(env, verdict)`.
type Failure = Option<(Vec<(String, i64)>, Obligation)>;

/// What a refinement check saw.
struct Checked {
    /// Per target: the first point where it does not refine the source.
    fails: Vec<Failure>,
    /// The domain was too large and was sampled.
    sampled: bool,
    /// Checked points where the source is defined (0: the check is vacuous).
    defined: u64,
}

/// Checks targets `1..` of `sets` against set 0 over the domain of all of
/// them.
fn check_refinement(g: &Graph, sets: &[&[NodeId]], w: Width, seed: u64) -> Checked {
    let all: Vec<NodeId> = sets.iter().flat_map(|s| s.iter().copied()).collect();
    let domain = Domain::new(g, &all);
    let ev = Evaluator::new(g, sets, w);
    let mut fails: Vec<Failure> = vec![None; sets.len() - 1];
    let mut env: Vec<i128> = g.vars().iter().map(|d| d.lo as i128).collect();
    let mut point = vec![0i64; domain.len()];
    let mut vals = Vec::with_capacity(ev.order.len());
    let mut defined = 0u64;
    let mut visit = |point: &[i64], fails: &mut Vec<Failure>| {
        for (k, &v) in domain.vars.iter().enumerate() {
            env[v as usize] = point[k] as i128;
        }
        let out = ev.eval(&env, &mut vals);
        let Some(src) = &out[0] else {
            return; // no obligation where the source is undefined
        };
        defined += 1;
        for (t, f) in fails.iter_mut().enumerate() {
            if f.is_some() {
                continue;
            }
            let verdict = match &out[t + 1] {
                None => Some(Obligation::TargetUndefined),
                Some(tgt) => src
                    .iter()
                    .zip(tgt)
                    .find_map(|(&a, &b)| interp::refines(a, b)),
            };
            if let Some(verdict) = verdict {
                let named = domain
                    .names
                    .iter()
                    .cloned()
                    .zip(point.iter().copied())
                    .collect();
                *f = Some((named, verdict));
            }
        }
    };
    let size = domain.size();
    let sampled = size > MAX_EXHAUSTIVE;
    if !sampled {
        for idx in 0..size as u64 {
            domain.decode(idx, &mut point);
            visit(&point, &mut fails);
        }
    } else {
        let n = domain.len().min(MAX_CORNER_VARS);
        for mask in 0u64..(1 << n) {
            for (k, x) in point.iter_mut().enumerate() {
                *x = if k < n && mask >> k & 1 == 1 {
                    domain.hi[k]
                } else {
                    domain.lo[k]
                };
            }
            visit(&point, &mut fails);
        }
        for k in 0..SAMPLES {
            domain.sample(seed, k, &mut point);
            visit(&point, &mut fails);
        }
    }
    Checked {
        fails,
        sampled,
        defined,
    }
}

// ---- measuring --------------------------------------------------------------------

fn show(g: &Graph, roots: &[NodeId]) -> String {
    roots
        .iter()
        .map(|&r| engine::print::expr(g, r))
        .collect::<Vec<_>>()
        .join("; ")
}

fn show_failure(f: &(Vec<(String, i64)>, Obligation)) -> String {
    let pt: Vec<String> = f.0.iter().map(|(n, v)| format!("{n}={v}")).collect();
    format!("{} at {}", f.1.name(), pt.join(", "))
}

/// What one case gave.
struct Outcome {
    name: String,
    line: usize,
    /// Parse error, bad conversion or unsound engine result: test failures.
    errors: Vec<String>,
    /// The engine hit its firing cap (reported, not asserted).
    cap: Option<String>,
    sampled: bool,
    /// The input is undefined at every checked point.
    vacuous: bool,
    input: String,
    engine: String,
    peer: String,
    /// What the engine's result and the peer's form leave.
    engine_cost: Cost,
    peer_cost: Cost,
    equal: bool,
}

fn run_case(file: &str, w: Width, c: &SuiteCase, seed: u64) -> Outcome {
    let mut out = Outcome {
        name: c.name.clone(),
        line: c.line,
        errors: Vec::new(),
        cap: None,
        sampled: false,
        vacuous: false,
        input: String::new(),
        engine: String::new(),
        peer: String::new(),
        engine_cost: Cost::default(),
        peer_cost: Cost::default(),
        equal: false,
    };
    let mut prog = match parse_program(&c.body) {
        Ok(p) => p,
        Err(e) => {
            let line = c.line + e.span.line as usize;
            out.errors.push(format!(
                "{file}:{line}: parse error in {}: {}",
                c.name, e.msg
            ));
            return out;
        }
    };
    if prog.outputs.len() != prog.expects.len() {
        out.errors.push(format!(
            "{file}:{}: {} has {} expr and {} peer lines",
            c.line,
            c.name,
            prog.outputs.len(),
            prog.expects.len()
        ));
        return out;
    }
    let src = prog.outputs.clone();
    let peer = prog.expects.clone();
    let mut simp = Simplifier::new(builtin());
    simp.width = w;
    let engine = match simp.simplify(&mut prog.graph, &src, false) {
        Ok(o) => o.roots,
        Err(e) => {
            out.cap = Some(e.to_string());
            src.clone()
        }
    };
    let g = &prog.graph;
    let Checked {
        fails,
        sampled,
        defined,
    } = check_refinement(g, &[&src, &peer, &engine], w, seed);
    out.sampled = sampled;
    out.vacuous = defined == 0;
    if let Some(f) = &fails[0] {
        out.errors.push(format!(
            "{file}:{}: bad conversion: the peer form of {} does not refine its input ({})",
            c.line,
            c.name,
            show_failure(f)
        ));
    }
    if let Some(f) = &fails[1] {
        out.errors.push(format!(
            "{file}:{}: UNSOUND: the engine's result for {} does not refine its input ({}): {} => {}",
            c.line,
            c.name,
            show_failure(f),
            show(g, &src),
            show(g, &engine)
        ));
    }
    out.input = show(g, &src);
    out.engine = show(g, &engine);
    out.peer = show(g, &peer);
    out.equal = engine == peer;
    let peer_domain = prog
        .expect_constraints
        .clone()
        .unwrap_or_else(|| prog.constraints.clone());
    out.engine_cost = cost(&mut prog.graph, &engine, &prog.constraints);
    out.peer_cost = cost(&mut prog.graph, &peer, &peer_domain);
    out
}

fn seed_of(name: &str) -> u64 {
    // FNV-1a: a deterministic seed per case.
    name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// One suite's row of the table and its block of the work list: the cases
/// where the engine leaves more div/mod, more constraints or more nodes than
/// the peer, the vacuous ones and those that hit the firing cap.
fn report(suite: &str, w: Width, outs: &[Outcome]) -> (String, String) {
    let mut row = [0usize; 13];
    let mut caps = Vec::new();
    let mut vacuous = Vec::new();
    let mut work = Vec::new();
    for o in outs {
        if !o.errors.is_empty() && o.engine.is_empty() {
            continue;
        }
        let (e, p) = (o.engine_cost, o.peer_cost);
        row[0] += 1;
        if o.errors.iter().all(|e| !e.contains("UNSOUND")) {
            row[1] += 1;
        }
        match e.divmod.cmp(&p.divmod) {
            std::cmp::Ordering::Less => row[2] += 1,
            std::cmp::Ordering::Equal => row[3] += 1,
            std::cmp::Ordering::Greater => row[4] += 1,
        }
        row[5] += o.equal as usize;
        row[6] += e.divmod;
        row[7] += p.divmod;
        row[8] += e.constraints;
        row[9] += p.constraints;
        row[10] += o.sampled as usize;
        row[11] += o.vacuous as usize;
        if o.vacuous {
            vacuous.push(format!("  {} (line {}): {}", o.name, o.line, o.input));
        }
        if let Some(cap) = &o.cap {
            caps.push(format!("  {} (line {}): {cap}", o.name, o.line));
        }
        if Reach::of(e, p) == Reach::Worse || e.nodes > p.nodes {
            row[12] += 1;
            work.push(format!(
                "  {}  [div/mod {} vs {}, constraints {} vs {}, nodes {} vs {}]\n    input:  {}\n    engine: {}\n    peer:   {}",
                o.name,
                e.divmod,
                p.divmod,
                e.constraints,
                p.constraints,
                e.nodes,
                p.nodes,
                o.input,
                o.engine,
                o.peer
            ));
        }
    }
    let line = format!(
        "{:<15} {:>3} {:>6} {:>6} {:>6} {:>6} {:>6} {:>7} {:>7} {:>7} {:>7} {:>7} {:>6} {:>8} {:>8}",
        suite,
        w.0,
        row[0],
        row[1],
        row[2],
        row[3],
        row[4],
        row[5],
        row[6],
        row[7],
        row[8],
        row[9],
        format!("{:.1}%", 100.0 * row[12] as f64 / row[0].max(1) as f64),
        row[10],
        row[11]
    );
    let mut block = format!(
        "{suite}: {} cases where the engine leaves more div/mod, more constraints or a larger expression than the peer:",
        work.len()
    );
    for wline in &work {
        block.push('\n');
        block.push_str(wline);
    }
    if !vacuous.is_empty() {
        block.push_str(&format!(
            "\n{suite}: {} cases whose input is undefined at every checked point (vacuous checks):\n{}",
            vacuous.len(),
            vacuous.join("\n")
        ));
    }
    if !caps.is_empty() {
        block.push_str(&format!(
            "\n{suite}: {} cases where the engine hit its firing cap (input kept):\n{}",
            caps.len(),
            caps.join("\n")
        ));
    }
    (line, block)
}

#[test]
fn peer_suites_convert_soundly_and_the_engine_stays_sound_on_them() {
    let started = std::time::Instant::now();
    let mut failures: Vec<String> = Vec::new();
    let mut table: Vec<String> = Vec::new();
    let mut worklists: Vec<String> = Vec::new();
    let mut total_cases = 0;
    for file in SUITE_FILES {
        let path = peers_dir().join(file);
        let Suite { width: w, cases } = read_suite(&path);
        let mut names = std::collections::HashSet::new();
        for c in &cases {
            if !names.insert(c.name.as_str()) {
                failures.push(format!("{file}:{}: duplicate case name {}", c.line, c.name));
            }
        }
        let outs: Vec<Outcome> = cases
            .par_iter()
            .map(|c| run_case(file, w, c, seed_of(&c.name)))
            .collect();
        total_cases += outs.len();
        failures.extend(outs.iter().flat_map(|o| o.errors.iter().cloned()));
        let (row, block) = report(file.trim_end_matches(".cases"), w, &outs);
        table.push(row);
        worklists.push(block);
    }
    println!();
    for block in &worklists {
        println!("{block}\n");
    }
    println!(
        "{:<15} {:>3} {:>6} {:>6} {:>6} {:>6} {:>6} {:>7} {:>7} {:>7} {:>7} {:>7} {:>6} {:>8} {:>8}",
        "suite",
        "w",
        "cases",
        "sound",
        "fewer",
        "equal",
        "more",
        "same",
        "dm-eng",
        "dm-peer",
        "cn-eng",
        "cn-peer",
        "worse",
        "sampled",
        "vacuous"
    );
    for row in &table {
        println!("{row}");
    }
    println!(
        "fewer/equal/more: distinct div/mod nodes (/ % // mod ceildiv) the engine leaves vs the peer's form; \
         same: structurally equal to the peer's form; dm-eng/dm-peer: div/mod nodes in all; \
         cn-eng/cn-peer: constraints (not bounds) left on the domains in all; \
         worse: the share of cases where the engine leaves more div/mod, more constraints or more nodes than the peer (listed above); \
         sampled: domains over {MAX_EXHAUSTIVE} points, checked at their corners plus {SAMPLES} samples \
         (the others exhaustively); vacuous: inputs undefined at every checked point"
    );
    println!(
        "{total_cases} cases in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
