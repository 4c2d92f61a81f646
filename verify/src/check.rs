//! Translation validation: is one concrete program a refinement of another
//! over every point of its variables' bounds, at a width?
//!
//! This is what `tileproof check` runs, what every algorithmic rewrite and
//! every fuzz finding is validated with. The two programs are node lists of
//! one engine graph (`expr` lines: the source, `expect` lines: the target);
//! each node is encoded once with [`Enc::apply`]. A counterexample is a
//! point; the reference interpreter re-evaluates it and must agree.

use crate::counterexample::{failure_condition, point_verdict, Failure, Unconfirmed};
use crate::encode::{model_bool, model_int, Enc, Mode, SVal, Term};
use crate::solver::{check_with_hints, check_within};
use engine::interp;
use engine::ir::{DType, Graph, NodeId, Op};
use engine::semantics::Model;
use engine::walk::{self, Purpose, Way};
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::time::Duration;
use z3::ast::Bool;
use z3::{SatResult, Solver};

/// How a check was decided: every point walked, or the solver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Every point of a tiny domain walked by the interpreter.
    Interpreter,
    /// Every point walked by the JIT.
    Jit,
    /// The solver, on this encoding.
    Solver(Mode),
    /// The solver, over the mathematical integers
    /// ([`crate::encode::Enc::unbounded_integers`]).
    Unbounded,
}

impl Method {
    /// Every point was walked (nothing was left to the solver).
    pub fn by_enumeration(self) -> bool {
        matches!(self, Method::Interpreter | Method::Jit)
    }

    pub fn name(self) -> &'static str {
        match self {
            Method::Interpreter => "exhaustive",
            Method::Jit => "exhaustive, JIT",
            Method::Solver(mode) => mode.name(),
            Method::Unbounded => "unbounded-integer",
        }
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Method {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// The result of validating `src` against `tgt`.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum CheckResult {
    /// Every point refines: Z3 answered unsat to all three obligations.
    Equivalent {
        method: Method,
    },
    /// A point where the target does not refine the source.
    Counterexample {
        #[serde(serialize_with = "crate::counterexample::ser_failure")]
        failure: Failure,
        method: Method,
        /// Variable values, in declaration order.
        point: Vec<(String, i128)>,
        /// The first root (output) that differs, when both sides are
        /// defined at the point.
        root: Option<usize>,
        /// What the interpreter says at that point.
        #[serde(serialize_with = "crate::counterexample::ser_confirmed")]
        confirmed: Result<String, Unconfirmed>,
    },
    /// No point of the domain fits the width (or the source is undefined
    /// everywhere): nothing to check.
    Vacuous,
    Unknown {
        reason: String,
    },
}

impl CheckResult {
    pub fn name(&self) -> &'static str {
        match self {
            CheckResult::Equivalent { .. } => "equivalent",
            CheckResult::Counterexample { .. } => "counterexample",
            CheckResult::Vacuous => "vacuous",
            CheckResult::Unknown { .. } => "unknown",
        }
    }
}

/// Encodes every node reachable from `roots` (memoized: the DAG's sharing
/// is kept). Variables are fresh symbols within their declared bounds.
struct GraphEnc<'g> {
    g: &'g Graph,
    enc: Enc,
    vals: FxHashMap<NodeId, SVal>,
    vars: Vec<Option<Term>>,
    constraints: Vec<Bool>,
}

impl<'g> GraphEnc<'g> {
    fn new(g: &'g Graph, enc: Enc) -> GraphEnc<'g> {
        GraphEnc {
            g,
            enc,
            vals: FxHashMap::default(),
            vars: vec![None; g.vars().len()],
            constraints: Vec::new(),
        }
    }

    fn var(&mut self, v: u32) -> SVal {
        let d = self.g.var(v).clone();
        let t = Bool::from_bool(true);
        let f = Bool::from_bool(false);
        if let Some(term) = &self.vars[v as usize] {
            return SVal {
                def: t.clone(),
                inv: f.clone(),
                unc: f,
                val: term.clone(),
            };
        }
        let name = format!("{}#{v}", d.name);
        let (term, c) = if d.dtype == DType::Bool {
            let b = Bool::new_const(name);
            // A bool declared [1, 1] is true, [0, 0] false.
            let c = Bool::and(&[
                Bool::or(&[Bool::from_bool(d.lo == 0), b.clone()]),
                Bool::or(&[Bool::from_bool(d.hi == 1), b.not()]),
            ]);
            (Term::B(b), c)
        } else {
            // Points outside the width are undefined (no obligation), so the
            // domain at this width is the bounds cut to the dtype's range.
            let (tlo, thi) = self.enc.bounds(d.dtype);
            let (lo, hi) = ((d.lo as i128).max(tlo), (d.hi as i128).min(thi));
            let (n, c0) = self.enc.fresh_num(&name, d.dtype);
            let c = Bool::and(&[
                c0,
                self.enc.le(&self.enc.lit(lo.min(hi), d.dtype), &n),
                self.enc.le(&n, &self.enc.lit(hi, d.dtype)),
                Bool::from_bool(lo <= hi),
            ]);
            (Term::N(n), c)
        };
        self.constraints.push(c);
        self.vars[v as usize] = Some(term.clone());
        SVal {
            def: t,
            inv: f.clone(),
            unc: f,
            val: term,
        }
    }

    fn node(&mut self, id: NodeId) -> SVal {
        if let Some(v) = self.vals.get(&id) {
            return v.clone();
        }
        // Operands first, in the order a recursion would encode them: a
        // deep graph must not overflow the stack.
        for n in self.g.post_order(id, |n| self.vals.contains_key(&n)) {
            let v = self.encode(n);
            self.vals.insert(n, v);
        }
        self.vals[&id].clone()
    }

    /// Every node `roots` reach is defined (undefined is whole-evaluation,
    /// so this is the definedness of the tuple of roots).
    fn defined(&mut self, roots: &[NodeId]) -> Bool {
        let own: Vec<Bool> = self
            .g
            .reachable(roots)
            .into_iter()
            .map(|n| self.node(n).def)
            .filter(|d| d.as_bool() != Some(true))
            .collect();
        Bool::and(&own)
    }

    /// Encodes one node whose operands are encoded.
    fn encode(&mut self, id: NodeId) -> SVal {
        let n = *self.g.node(id);
        match n.op {
            Op::Const(c) => self.enc.constant(c as i128, n.dtype),
            Op::Var(v) => self.var(v),
            Op::Invalid => self.enc.invalid(),
            op => {
                // Operands count as defined here: a node keeps only its own
                // condition, and a side's definedness is the flat
                // conjunction over the nodes it reaches (`defined`). Nested
                // per-node conjunctions cost Z3 quadratic time and memory
                // on long chains (24 GB for a 100,000-term sum).
                let args: Vec<SVal> = n
                    .src()
                    .iter()
                    .map(|&s| SVal {
                        def: Bool::from_bool(true),
                        ..self.node(s)
                    })
                    .collect();
                let dts: Vec<DType> = n.src().iter().map(|&s| self.g.node(s).dtype).collect();
                self.enc.apply(op, n.dtype, &args, &dts)
            }
        }
    }
}

/// Validates `tgt` against `src` (root lists of equal length over `g`)
/// under `model` (or at a width): bitvectors at 8 and 16 (bounded integers
/// if they time out), bounded integers at 32 and 64; a domain small enough
/// is enumerated when Z3 cannot decide (see [`exhaustively`]). Whether Z3
/// is asked at all, and whether the domain is enumerated, is the walk
/// policy's ([`Purpose::Proof`]).
pub fn check(
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    model: impl Into<Model>,
    timeout: Duration,
) -> CheckResult {
    let model = model.into();
    let nodes = g.reachable(&[src, tgt].concat()).len();
    let points = walk::points(g.vars().iter().map(|d| (d.lo, d.hi)));
    let decision = walk::decide(Purpose::Proof, points, nodes);
    let modes: &[Mode] = if !decision.has(Way::Smt) {
        &[]
    } else if model.width.0 <= 16 {
        &[Mode::Bv, Mode::Int]
    } else {
        &[Mode::Int]
    };
    let mut last = CheckResult::Unknown {
        reason: format!(
            "{}: over the SMT limit of {}",
            engine::print::count(nodes, "node"),
            walk::SMT_NODES
        ),
    };
    for &mode in modes {
        // A Z3 context of its own: Z3 4.8.12's model (the counterexample
        // shown) follows what its context solved before, so a case
        // replayed with a corpus would show another point than alone.
        let enc = Enc::of_model(mode, model);
        last = z3::with_z3_config(&z3::Config::new(), || check_in(g, src, tgt, enc, timeout));
        if !matches!(last, CheckResult::Unknown { .. }) {
            return last;
        }
    }
    if decision.has(Way::Interpreter) {
        exhaustively(g, src, tgt, model)
    } else {
        last
    }
}

/// The verdict of the reference interpreter at every point of the domain
/// (a complete check, as good as a proof), where the policy has it walk a
/// small one: Z3 can time out on a small domain whose terms are non-linear
/// (products of variables, divisions of sums) when the machine is loaded.
fn exhaustively(g: &Graph, src: &[NodeId], tgt: &[NodeId], model: Model) -> CheckResult {
    let defined_somewhere = || {
        let mut source = interp::Evaluator::new(g, src, model);
        interp::points(g).any(|env| source.eval(&env).is_ok())
    };
    match interp::first_failure(g, src, tgt, model) {
        Some((env, failure)) => {
            counterexample_at(g, src, tgt, &env, failure, Method::Interpreter, model)
        }
        None if defined_somewhere() => CheckResult::Equivalent {
            method: Method::Interpreter,
        },
        None => CheckResult::Vacuous,
    }
}

/// The counterexample an enumeration found at `env` (indexed like the
/// graph's variable table), with the interpreter's confirmation and the
/// first root that differs.
pub fn counterexample_at(
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    env: &[i128],
    failure: Failure,
    method: Method,
    model: Model,
) -> CheckResult {
    let (confirmed, root) = confirm(g, src, tgt, env, model);
    CheckResult::Counterexample {
        failure,
        method,
        point: g
            .vars()
            .iter()
            .zip(env)
            .map(|(d, &v)| (d.name.clone(), v))
            .collect(),
        root,
        confirmed,
    }
}

fn check_in(g: &Graph, src: &[NodeId], tgt: &[NodeId], enc: Enc, timeout: Duration) -> CheckResult {
    assert_eq!(src.len(), tgt.len(), "tuples of equal length");
    // Facts other encodings left on this thread are not this query's.
    crate::encode::take_facts();
    let mut ge = GraphEnc::new(g, enc);
    let (sdef, tdef) = (ge.defined(src), ge.defined(tgt));
    let side = |ge: &mut GraphEnc, roots: &[NodeId], def: &Bool| -> Vec<SVal> {
        roots
            .iter()
            .map(|&r| SVal {
                def: def.clone(),
                ..ge.node(r)
            })
            .collect()
    };
    let s = side(&mut ge, src, &sdef);
    let t = side(&mut ge, tgt, &tdef);
    let hints = crate::encode::take_facts();
    let solver = Solver::new();
    // The source as a whole must be defined (undefined is whole-evaluation).
    let mut premise = ge.constraints.clone();
    premise.extend(s.iter().map(|v| v.def.clone()));
    solver.assert(Bool::and(&premise));
    match check_within(&solver, timeout) {
        SatResult::Unsat => return CheckResult::Vacuous,
        SatResult::Unknown => {
            return CheckResult::Unknown {
                reason: solver.get_reason_unknown().unwrap_or_default(),
            }
        }
        SatResult::Sat => {}
    }
    let tgt_def = Bool::and(&t.iter().map(|v| v.def.clone()).collect::<Vec<_>>());
    for failure in Failure::ALL {
        let cond = match failure {
            Failure::TargetUndefined => tgt_def.not(),
            _ => {
                let per_root: Vec<Bool> = s
                    .iter()
                    .zip(&t)
                    .zip(src)
                    .map(|((a, b), &r)| failure_condition(failure, a, b, &enc, g.node(r).dtype))
                    .collect();
                Bool::and(&[tgt_def.clone(), Bool::or(&per_root)])
            }
        };
        let hints_first = failure == Failure::TargetUndefined;
        match check_with_hints(&solver, &cond, &hints, hints_first, timeout) {
            SatResult::Unsat => solver.pop(1),
            SatResult::Unknown => {
                return CheckResult::Unknown {
                    reason: format!(
                        "{}: {}",
                        failure.name(),
                        solver.get_reason_unknown().unwrap_or_default()
                    ),
                }
            }
            SatResult::Sat => {
                let m = solver.get_model().expect("sat has a model");
                let point: Vec<(String, i128)> = g
                    .vars()
                    .iter()
                    .enumerate()
                    .map(|(i, d)| {
                        let v = match &ge.vars[i] {
                            Some(Term::N(n)) => model_int(&m, n).unwrap_or(d.lo as i128),
                            Some(Term::B(b)) => model_bool(&m, b).unwrap_or(false) as i128,
                            // Unused by either side: any in-bounds value.
                            None => d.lo as i128,
                        };
                        (d.name.clone(), v)
                    })
                    .collect();
                let env: Vec<i128> = point.iter().map(|p| p.1).collect();
                let (confirmed, root) = confirm(g, src, tgt, &env, enc.model());
                return CheckResult::Counterexample {
                    failure,
                    method: Method::Solver(enc.mode),
                    point,
                    root,
                    confirmed,
                };
            }
        }
    }
    CheckResult::Equivalent {
        method: Method::Solver(enc.mode),
    }
}

/// What the interpreter says at a point: the failure's name, or why
/// there is none; and the first root that differs.
fn confirm(
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    env: &[i128],
    model: Model,
) -> (Result<String, Unconfirmed>, Option<usize>) {
    let confirmed = point_verdict(g, src, tgt, env, model)
        .map(|(f, _)| f.name().to_string())
        .map_err(Unconfirmed::NoFailure);
    let root = match (
        interp::eval(g, src, env, model),
        interp::eval(g, tgt, env, model),
    ) {
        (Ok(s), Ok(t)) => interp::first_differing(&s, &t).map(|(root, _)| root),
        _ => None,
    };
    (confirmed, root)
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::parse::parse_program;

    fn decide(text: &str) -> CheckResult {
        let p = parse_program(text).unwrap();
        let w = engine::dtype::Width::W64.into();
        exhaustively(&p.graph, &p.outputs, &p.expects, w)
    }

    #[test]
    fn a_small_domain_is_decided_point_by_point() {
        let ok = decide("var x in [0, 99]\nexpr x // 4 * 4 + x mod 4\nexpect x\n");
        assert!(matches!(ok, CheckResult::Equivalent { .. }), "{ok:?}");
        let bad = decide("var x in [0, 99]\nexpr x // 4 * 4\nexpect x\n");
        match bad {
            CheckResult::Counterexample {
                point, confirmed, ..
            } => {
                assert_eq!(point, vec![("x".to_string(), 1)]);
                assert!(confirmed.is_ok(), "{confirmed:?}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_graph_over_the_smt_limit_is_not_encoded_and_says_why() {
        // A sum of SMT_NODES + 1 distinct terms over a wide domain: no
        // encoding, no enumeration, an unknown that names the limit.
        let terms: Vec<String> = (0..=walk::SMT_NODES / 2)
            .map(|k| format!("x * {}", k + 2))
            .collect();
        let text = format!(
            "var x in [0, 1000000000]\nexpr {}\nexpect x * {}\n",
            terms.join(" + "),
            (0..=walk::SMT_NODES / 2)
                .map(|k| k as i128 + 2)
                .sum::<i128>()
        );
        let p = parse_program(&text).unwrap();
        let r = check(
            &p.graph,
            &p.outputs,
            &p.expects,
            engine::dtype::Width::W64,
            Duration::from_secs(1),
        );
        match r {
            CheckResult::Unknown { reason } => {
                assert!(reason.contains("over the SMT limit"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
    }
}
