//! Missed simplifications: where a peer's sound answer costs more than what
//! tileproof's engine makes of the same input under the peer's semantics.
//!
//! The engine simplifies the source at the peer's width; its answer counts
//! only if it uses nothing the peer's profile lacks ([`Profile::covers`]),
//! is strictly cheaper ([`Cost`]: fewer div/mod, then fewer nodes), and is
//! proved to refine the source under the peer's own model (its integers and
//! its partial ops): by the exact interpreter at every point of a small
//! domain, else by the prover hook (SMT, supplied by the command line, as
//! this crate does not depend on the verifier). Anything less (a
//! counterexample, an unknown) is rejected and counted, never reported: the
//! engine's rules may be candidates laid over the built-in ones, unproved.
//!
//! A missed case is traced to the engine's rules that made the difference:
//! the firings that lower the cost, first of the engine run on the peer's
//! own answer (what the peer lacks on top of what it did), else of its run
//! on the source. Cases are bucketed by those rules ([`Tally`]).
//!
//! The other direction is kept too: where the peer's sound answer is
//! strictly cheaper than the engine's, by the same cost, it is a missed
//! simplification of tileproof's own engine ([`Direction::PeerCheaper`]),
//! proved the same way (the peer's answer against the source under the
//! peer's model), counted and written apart, never a finding.

use crate::checks::{ValidationVerdict, Validator};
use crate::oracle::{Domain, OracleConfig};
use crate::propose::{propose, Language, Proposal};
use crate::subject::{Integers, Profile};
use engine::interp::{check_point, Evaluator, PointCheck};
use engine::ir::{Graph, NodeId, Op};
use engine::rewrite::{Firing, Simplifier};
use engine::rules::{Rule, RuleSet};
use engine::semantics::{Model, Ub};
use engine::walk::{self, Purpose, Way};
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

/// Points of a large domain at which the source is looked at for one
/// where it is defined (else the walk proves nothing worth reporting, and
/// the prover decides).
const DEFINED_PROBES: u64 = 64;

/// What an expression costs at run time: div/mod first (tens of cycles
/// each), then nodes. Ordered lexicographically. A negation counts as the
/// product by -1 it is in tinygrad's IR (2 nodes), `a - b` as `a + -b` (a
/// constant `b` folded), and a negated comparison as the one comparison
/// it compiles to (tinygrad writes `a >= b` as `!(a < b)`), so that how a
/// peer spells them is never a missed simplification.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct Cost {
    pub divmod: usize,
    pub nodes: usize,
}

impl Cost {
    /// The cost of the distinct nodes of `roots`.
    pub fn of(g: &Graph, roots: &[NodeId]) -> Cost {
        let nodes = g.reachable(roots);
        let weight = |n: NodeId| {
            let node = g.node(n);
            match node.op {
                Op::Neg => 2,
                Op::Not if g.node(node.src()[0]).op.is_comparison() => 0,
                Op::Sub if g.node(node.src()[1]).as_const().is_some() => 1,
                Op::Sub => 3,
                _ => 1,
            }
        };
        Cost {
            divmod: nodes.iter().filter(|&&n| g.node(n).op.is_divmod()).count(),
            nodes: nodes.iter().map(|&n| weight(n)).sum(),
        }
    }
}

impl fmt::Display for Cost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} div/mod, {} nodes", self.divmod, self.nodes)
    }
}

/// Why a cheaper answer of the engine was not reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rejection {
    /// A point where it does not refine the source under the peer's model
    /// (an unsound rule or pass of the engine, or one unsound under the
    /// peer's semantics only).
    Refuted,
    /// Neither walked nor proved (the solver's unknown, no prover).
    Unproved,
    /// The source means nothing at any point: there is nothing to miss.
    Vacuous,
    /// Too large to walk, and the prover's budget for its rules was spent
    /// ([`Budget`]).
    Budget,
}

impl Rejection {
    pub fn name(self) -> &'static str {
        match self {
            Rejection::Refuted => "refuted",
            Rejection::Unproved => "unproved",
            Rejection::Vacuous => "vacuous",
            Rejection::Budget => "beyond the solver's budget",
        }
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A rule of the engine that made a difference.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct Cause {
    pub rule: String,
    /// A declarative rule as written (`lhs => rhs if guard`); `None` for an
    /// algorithmic pass's rule (validated where it fires).
    pub text: Option<String>,
}

/// Which answer a missed simplification found cheaper.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    /// tileproof's engine: a simplification the peer misses.
    EngineCheaper,
    /// The peer's: a simplification tileproof's engine misses.
    PeerCheaper,
}

impl Direction {
    /// The corpus folder its cases are written to.
    pub fn dir(self) -> &'static str {
        match self {
            Direction::EngineCheaper => "missed",
            Direction::PeerCheaper => "engine-missed",
        }
    }

    /// How a proof line names the answer it proves (the engine's is the
    /// default).
    pub fn proved(self) -> &'static str {
        match self {
            Direction::EngineCheaper => "",
            Direction::PeerCheaper => " (the peer's answer)",
        }
    }
}

/// A missed simplification, proved.
#[derive(Clone)]
pub struct Missed {
    pub direction: Direction,
    /// The source's graph with both answers' nodes added.
    pub graph: Graph,
    pub src: Vec<NodeId>,
    pub peer: Vec<NodeId>,
    pub engine: Vec<NodeId>,
    pub peer_cost: Cost,
    pub engine_cost: Cost,
    /// How the cheaper answer was shown to refine the source.
    pub verdict: ValidationVerdict,
    pub proof: String,
    /// The engine's rules that made the difference (none where the peer
    /// is cheaper).
    pub causes: Vec<Cause>,
    /// Its declarative rules in the peer's own pattern language, when
    /// tileproof writes that language.
    pub proposal: Option<Proposal>,
}

impl fmt::Debug for Missed {
    // The graph has no Debug: the case as text says it all.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Missed")
            .field("source", &engine::print::program(&self.graph, &self.src))
            .field(
                "tileproof",
                &engine::print::program(&self.graph, &self.engine),
            )
            .field("peer_cost", &self.peer_cost)
            .field("engine_cost", &self.engine_cost)
            .field("causes", &self.causes)
            .finish()
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.text {
            Some(t) => write!(f, "{}: {t}", self.rule),
            None => write!(f, "{} (algorithmic pass)", self.rule),
        }
    }
}

impl Missed {
    /// `roots` (the source, the peer's or the engine's) as expressions,
    /// `; `-separated.
    pub fn show(&self, roots: &[NodeId]) -> String {
        let v: Vec<String> = roots
            .iter()
            .map(|&r| engine::print::expr(&self.graph, r))
            .collect();
        v.join("; ")
    }

    /// Its rules' names, joined (a file name's stem; `peer` where the
    /// peer is cheaper, which no rule of the engine explains).
    pub fn key(&self) -> String {
        let names: Vec<&str> = self.causes.iter().map(|c| c.rule.as_str()).collect();
        match self.direction {
            Direction::EngineCheaper => names.join("+"),
            Direction::PeerCheaper => "peer".to_string(),
        }
    }

    /// The cheaper answer, the one proved.
    pub fn cheaper(&self) -> &[NodeId] {
        match self.direction {
            Direction::EngineCheaper => &self.engine,
            Direction::PeerCheaper => &self.peer,
        }
    }
}

/// A missed case as JSON: the three programs as text (the graph itself
/// has no serialized form), costs, proof and rules.
impl serde::Serialize for Missed {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let exprs = |roots: &[NodeId]| -> Vec<String> {
            roots
                .iter()
                .map(|&r| engine::print::expr(&self.graph, r))
                .collect()
        };
        let mut st = s.serialize_struct("Missed", 10)?;
        st.serialize_field("direction", &self.direction)?;
        st.serialize_field("source", &exprs(&self.src))?;
        st.serialize_field("peer", &exprs(&self.peer))?;
        st.serialize_field("tileproof", &exprs(&self.engine))?;
        st.serialize_field("peer_cost", &self.peer_cost)?;
        st.serialize_field("tileproof_cost", &self.engine_cost)?;
        st.serialize_field("verdict", &self.verdict)?;
        st.serialize_field("proof", &self.proof)?;
        st.serialize_field("rules", &self.causes)?;
        st.serialize_field("proposal", &self.proposal)?;
        st.end()
    }
}

/// What looking for a missed simplification on one answer found.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Hunt {
    /// Not looked at: a variable of the source has one point (a loop of
    /// one iteration, which a compiler's pipeline usually removes before
    /// index simplification; the engine folds it, and every rule after
    /// would look missed).
    OnePoint(String),
    /// The engine is not cheaper than the peer.
    NotCheaper,
    /// The engine's cheaper answer uses something the peer lacks.
    OutsideProfile,
    /// A cheaper answer of the engine, not reported.
    Rejected(Rejection, String),
    /// A cheaper answer of the peer, not reported.
    PeerRejected(Rejection, String),
    /// A cheaper answer no walk could settle: for the prover
    /// ([`Hunter::settle`]), within its [`Budget`].
    Unsettled(Box<Missed>),
    Missed(Box<Missed>),
}

impl Hunt {
    /// A cheaper answer of `direction` rejected.
    pub fn rejected(direction: Direction, why: Rejection, detail: String) -> Hunt {
        match direction {
            Direction::EngineCheaper => Hunt::Rejected(why, detail),
            Direction::PeerCheaper => Hunt::PeerRejected(why, detail),
        }
    }
}

/// How many cases of each rule the prover (SMT, far slower than a walk)
/// is asked to settle in one campaign: the cases of a rule walks settle are
/// all counted; a rule seen only on large domains is shown by this many
/// (one a walk has shown takes none, [`Budget::shown`]).
pub const SOLVER_PER_RULE: u32 = 1;

/// The prover's time per case in a campaign: a case it cannot settle
/// quickly is rejected (unproved), not waited for. The proofs it finds take
/// a tenth of a second; Z3 4.8, given more, can enter a phase it does not
/// leave when interrupted (seconds of `x mod (y >> y)`), which the batch
/// would wait for.
pub const SOLVER_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(250);

/// The prover's budget, spent in case order (so that what a campaign
/// reports does not depend on its threads).
#[derive(Debug, Default)]
pub struct Budget {
    tries: std::collections::HashMap<String, u32>,
}

impl Budget {
    /// Whether `m` may go to the prover: one of its rules has tries left
    /// (each of them then spends one).
    /// The peer's cheaper answers share one budget, under the key a file
    /// of theirs is named by.
    fn take(&mut self, m: &Missed) -> bool {
        let keys = Budget::keys(m);
        let left = |r: &str| self.tries.get(r).copied().unwrap_or(0) < SOLVER_PER_RULE;
        if !keys.iter().any(|k| left(k)) {
            return false;
        }
        for k in keys {
            *self.tries.entry(k).or_default() += 1;
        }
        true
    }

    /// `m` is proved (by a walk): its rules need the prover no more (the
    /// prover's calls are most of what looking for missed simplifications
    /// costs a campaign).
    fn shown(&mut self, m: &Missed) {
        for k in Budget::keys(m) {
            self.tries.insert(k, SOLVER_PER_RULE);
        }
    }

    /// Decides, in case order, which of `hunts` the prover settles: those
    /// it has tries left for, after every rule the walks among them showed;
    /// the others are rejected.
    pub fn spend(&mut self, hunts: &mut [Hunt]) {
        for hunt in hunts.iter() {
            if let Hunt::Missed(m) = hunt {
                self.shown(m);
            }
        }
        for hunt in hunts.iter_mut() {
            if let Hunt::Unsettled(m) = hunt {
                if !self.take(m) {
                    *hunt = Hunt::rejected(m.direction, Rejection::Budget, String::new());
                }
            }
        }
    }

    fn keys(m: &Missed) -> Vec<String> {
        match m.direction {
            Direction::EngineCheaper => m.causes.iter().map(|c| c.rule.clone()).collect(),
            Direction::PeerCheaper => vec![m.key()],
        }
    }
}

/// Looks for missed simplifications: the engine (with its rules) under a
/// peer's profile, and how to prove an answer where walking cannot.
pub struct Hunter<'a> {
    rules: &'a RuleSet,
    simp: Simplifier<'a>,
    profile: Profile,
    /// The peer's own model (its integers, its partial ops).
    model: Model,
    prover: Option<&'a Validator<'a>>,
    /// The peer's pattern language, when tileproof writes it.
    language: Option<Language>,
}

impl<'a> Hunter<'a> {
    /// The engine with `rules` at the profile's width; `prover` decides
    /// under [`Hunter::model_of`]`(profile)`.
    pub fn new(
        rules: &'a RuleSet,
        profile: Profile,
        prover: Option<&'a Validator<'a>>,
    ) -> Hunter<'a> {
        let mut simp = Simplifier::new(rules);
        simp.width = profile.width();
        Hunter {
            model: Hunter::model_of(&profile),
            rules,
            simp,
            profile,
            prover,
            language: None,
        }
    }

    /// Proposes the rules of each missed case in `language`.
    pub fn proposing(mut self, language: Option<Language>) -> Hunter<'a> {
        self.language = language;
        self
    }

    /// The model a missed case is proved under: the peer's own (its
    /// relaxation of partial ops, if it declares one), since that is what
    /// the peer's maintainers would add the rule under.
    pub fn model_of(profile: &Profile) -> Model {
        profile.relaxed().unwrap_or_else(|| profile.model())
    }

    /// The model in words, for reports.
    pub fn describe_model(&self) -> String {
        let ints = match self.profile.integers {
            Integers::Unbounded => "unbounded integers".to_string(),
            Integers::Fixed(w) => format!("index at {w} bits, overflow impossible"),
        };
        format!("{ints}, partial ops {}", self.model.partial.name())
    }

    pub fn width(&self) -> engine::dtype::Width {
        self.profile.width()
    }

    /// Looks at the peer's answer `peer` to `src` (nodes of `g`, already
    /// judged sound).
    pub fn hunt(&self, g: &Graph, src: &[NodeId], peer: &[NodeId]) -> Hunt {
        let vars = g.reachable_vars(src);
        if let Some(v) = vars.iter().map(|&v| g.var(v)).find(|v| v.lo == v.hi) {
            return Hunt::OnePoint(format!("{} in [{}, {}]", v.name, v.lo, v.hi));
        }
        let mut g = g.clone();
        let Ok(out) = self.simp.simplify(&mut g, src, true) else {
            return Hunt::NotCheaper;
        };
        let (peer_cost, engine_cost) = (Cost::of(&g, peer), Cost::of(&g, &out.roots));
        // Not proved yet: [`Hunter::proved`] walks it.
        let unproved = |direction, graph, engine, causes, proposal| Missed {
            direction,
            src: src.to_vec(),
            peer: peer.to_vec(),
            engine,
            graph,
            peer_cost,
            engine_cost,
            verdict: ValidationVerdict::Unknown,
            proof: "not proved yet".to_string(),
            causes,
            proposal,
        };
        if peer_cost < engine_cost {
            let m = unproved(Direction::PeerCheaper, g, out.roots, Vec::new(), None);
            return self.proved(m);
        }
        if engine_cost >= peer_cost {
            return Hunt::NotCheaper;
        }
        if !self.profile.covers(&g, &out.roots) {
            return Hunt::OutsideProfile;
        }
        let causes = self.causes(&mut g, peer, (peer_cost, engine_cost), &out.trace);
        let proposal = self.language.and_then(|l| {
            let rules: Vec<&Rule> = causes
                .iter()
                .filter_map(|c| self.rules.rule(&c.rule))
                .collect();
            (!rules.is_empty()).then(|| propose(l, &rules))
        });
        self.proved(unproved(
            Direction::EngineCheaper,
            g,
            out.roots,
            causes,
            proposal,
        ))
    }

    /// `m` with its cheaper answer walked against the source: missed,
    /// rejected, or unsettled (for the prover).
    fn proved(&self, mut m: Missed) -> Hunt {
        match self.walk_any(&m.graph, &m.src, m.cheaper()) {
            Some(Ok((verdict, proof))) => {
                m.verdict = verdict;
                m.proof = proof;
                Hunt::Missed(Box::new(m))
            }
            Some(Err((why, detail))) => Hunt::rejected(m.direction, why, detail),
            None => Hunt::Unsettled(Box::new(m)),
        }
    }

    /// [`Hunter::hunt`], with an unsettled case settled by the prover.
    pub fn hunt_settled(&self, g: &Graph, src: &[NodeId], peer: &[NodeId]) -> Hunt {
        self.settled(self.hunt(g, src, peer))
    }

    /// `h`, settled by the prover if no walk settled it.
    pub fn settled(&self, h: Hunt) -> Hunt {
        match h {
            Hunt::Unsettled(m) => self.settle(m),
            h => h,
        }
    }

    /// A case no walk settled, proved by the prover hook (SMT) or rejected.
    fn settle(&self, mut m: Box<Missed>) -> Hunt {
        let Some(prover) = self.prover else {
            return Hunt::rejected(
                m.direction,
                Rejection::Unproved,
                "too many points to walk and no prover".into(),
            );
        };
        let v = prover(&m.graph, &m.src, m.cheaper());
        let detail = v.detail.unwrap_or_default();
        let why = match v.verdict {
            ValidationVerdict::Equivalent | ValidationVerdict::EquivalentByEnumeration => {
                m.verdict = v.verdict;
                m.proof = detail;
                return Hunt::Missed(m);
            }
            ValidationVerdict::Vacuous => Rejection::Vacuous,
            ValidationVerdict::Counterexample => Rejection::Refuted,
            ValidationVerdict::Unknown => Rejection::Unproved,
        };
        Hunt::rejected(m.direction, why, detail)
    }

    /// `tgt` against `src` under the peer's model by the walks the policy
    /// names for a missed simplification ([`Purpose::Missed`]), in order:
    /// the exact interpreter, or the compiled oracle where it is a proof;
    /// `None` when no walk settles it (the prover's, then).
    fn walk_any(
        &self,
        g: &Graph,
        src: &[NodeId],
        tgt: &[NodeId],
    ) -> Option<Result<(ValidationVerdict, String), (Rejection, String)>> {
        let domain = Domain::new(g, src);
        let all: Vec<NodeId> = src.iter().chain(tgt).copied().collect();
        let decision = walk::decide(Purpose::Missed, domain.size(), g.reachable(&all).len());
        decision.ways().find_map(|way| match way {
            Way::Interpreter => Some(self.walk(g, src, tgt, &domain)),
            Way::Batched | Way::Compiled => self.walk_compiled(g, src, tgt, &domain),
            Way::Sampled { .. } | Way::Smt => None,
        })
    }

    /// Every point of `domain` with the exact interpreter, at the width a
    /// failing point is confirmed at (wider than any check for unbounded
    /// integers: a point where the source overflows even there is not one
    /// the peer excuses, so it proves nothing).
    fn walk(
        &self,
        g: &Graph,
        src: &[NodeId],
        tgt: &[NodeId],
        domain: &Domain,
    ) -> Result<(ValidationVerdict, String), (Rejection, String)> {
        let model = Model {
            width: self.profile.confirm_width(),
            ..self.model
        };
        let (mut s, mut t) = (Evaluator::new(g, src, model), Evaluator::new(g, tgt, model));
        let mut point = vec![0i64; domain.len()];
        let mut defined = false;
        let n = domain.size() as u64;
        for k in 0..n {
            domain.decode(k, &mut point);
            let env: Vec<i128> = domain.env(g, &point).iter().map(|&v| v as i128).collect();
            let sv = s.eval(&env);
            if let Err(u) = &sv {
                if self.profile.integers == Integers::Unbounded && u.reason == Ub::IndexOverflow {
                    return Err((
                        Rejection::Unproved,
                        "the source overflows the interpreter's width".into(),
                    ));
                }
            }
            defined |= sv.is_ok();
            if let PointCheck::Fails(f) = check_point(sv, t.eval(&env)) {
                let named = domain
                    .vars
                    .iter()
                    .zip(&point)
                    .map(|(&v, &x)| format!("{} = {x}", g.var(v).name))
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err((Rejection::Refuted, format!("{f} at {named}")));
            }
        }
        if !defined {
            return Err((
                Rejection::Vacuous,
                "the source is undefined everywhere".into(),
            ));
        }
        Ok((
            ValidationVerdict::EquivalentByEnumeration,
            format!("every one of {n} points, by the exact interpreter"),
        ))
    }

    /// The oracle's exhaustive walk under the peer's model, where it is
    /// one: at a fixed width always (overflow is the peer's undefined), for
    /// unbounded integers only where no node's range leaves 64 bits (the
    /// walk would excuse a point the peer does not). `None`: not walked, or
    /// the source is undefined at every point probed.
    fn walk_compiled(
        &self,
        g: &Graph,
        src: &[NodeId],
        tgt: &[NodeId],
        domain: &Domain,
    ) -> Option<Result<(ValidationVerdict, String), (Rejection, String)>> {
        let inside = |id: NodeId| {
            let n = g.node(id);
            n.dtype != engine::dtype::DType::Index
                || n.vmin > n.vmax
                || (n.vmin > i64::MIN && n.vmax < i64::MAX)
        };
        let all: Vec<NodeId> = src.iter().chain(tgt).copied().collect();
        if self.profile.integers == Integers::Unbounded
            && !g.reachable(&all).into_iter().all(inside)
        {
            return None;
        }
        let mut s = Evaluator::new(g, src, self.model);
        let mut point = vec![0i64; domain.len()];
        let defined = (0..DEFINED_PROBES.min(domain.size() as u64)).any(|k| {
            domain.decode(k, &mut point);
            let env: Vec<i128> = domain.env(g, &point).iter().map(|&v| v as i128).collect();
            s.eval(&env).is_ok()
        });
        if !defined {
            return None;
        }
        let cfg = OracleConfig {
            width: self.profile.width(),
            partial: self.model.partial,
            unbounded: self.model.unbounded,
            limits: Purpose::Missed.limits(),
            // Campaign workers are the parallelism.
            parallel: false,
            ..OracleConfig::default()
        };
        let rep = crate::oracle::check_jit(g, src, tgt, &cfg).ok()?;
        Some(match &rep.failure {
            _ if rep.sampled => return None,
            None => Ok((
                ValidationVerdict::EquivalentByEnumeration,
                format!("every one of {} points, by the compiled oracle", rep.points),
            )),
            Some(_) => Err((Rejection::Refuted, rep.to_string())),
        })
    }

    /// The engine's rules whose firings lower what the engine saves (div/mod
    /// where it has fewer, else nodes): on the peer's own answer first (what
    /// the peer lacks on top of what it did), else in `trace` (the run on
    /// the source); else every rule that fired there. Sorted by name, so
    /// that one set of rules is one cause.
    fn causes(
        &self,
        g: &mut Graph,
        peer: &[NodeId],
        (peer_cost, engine_cost): (Cost, Cost),
        trace: &[Firing],
    ) -> Vec<Cause> {
        let by_divmod = engine_cost.divmod < peer_cost.divmod;
        let on_peer = match self.simp.simplify(g, peer, true) {
            Ok(o) if Cost::of(g, &o.roots) < peer_cost => lowering(g, &o.trace, by_divmod),
            _ => Vec::new(),
        };
        let mut rules = if on_peer.is_empty() {
            lowering(g, trace, by_divmod)
        } else {
            on_peer
        };
        if rules.is_empty() {
            rules = trace.iter().map(|f| f.rule).collect();
        }
        let mut causes: Vec<Cause> = rules
            .into_iter()
            .map(|r| {
                let name = self.simp.rule_names()[r].clone();
                let text = (!self.simp.is_algorithmic(r))
                    .then(|| self.rules.rule(&name).map(|rule| rule.text.clone()))
                    .flatten();
                Cause { rule: name, text }
            })
            .collect();
        causes.sort();
        causes.dedup();
        causes
    }
}

/// The rules of the firings in `trace` that lower the div/mod count of the
/// node they rewrite (`by_divmod`), else its cost.
fn lowering(g: &Graph, trace: &[Firing], by_divmod: bool) -> Vec<usize> {
    trace
        .iter()
        .filter(|f| {
            let (before, after) = (Cost::of(g, &[f.before]), Cost::of(g, &[f.after]));
            if by_divmod {
                after.divmod < before.divmod
            } else {
                after < before
            }
        })
        .map(|f| f.rule)
        .collect()
}

/// The missed simplifications one rule of the engine takes part in.
#[derive(Clone, Debug)]
pub struct Bucket {
    pub cause: Cause,
    pub count: u64,
    /// The cheapest case (by the engine's cost, then the source's size).
    pub cheapest: Box<Missed>,
    /// Files written (at most the campaign's `max_findings`).
    pub written: usize,
    pub first_path: Option<PathBuf>,
}

/// A campaign's missed simplifications: one bucket per rule, so that a
/// thousand cases of one missing rule are one line, whatever rules it
/// combines with.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    /// The campaign looked for them.
    pub on: bool,
    /// Missed cases (each counted once, in every bucket of its rules).
    pub cases: u64,
    /// By rule, in the order first met.
    pub buckets: Vec<Bucket>,
    /// Cheaper answers not reported, by why.
    pub rejected: BTreeMap<Rejection, u64>,
    /// Cheaper answers that use something the peer lacks.
    pub outside_profile: u64,
    /// Sound answers not looked at: a variable of one point.
    pub one_point: u64,
    /// Files that could not be written, with the error.
    pub unwritten: Vec<String>,
    /// Where the peer's sound answer is the cheaper one: tileproof's own
    /// missed simplifications.
    pub engine_missed: EngineMissed,
}

/// A campaign's missed simplifications of tileproof's engine (one count:
/// no rule of the engine explains them).
#[derive(Clone, Debug, Default)]
pub struct EngineMissed {
    pub cases: u64,
    /// Files written (at most the campaign's `max_findings`).
    pub written: usize,
    pub first_path: Option<PathBuf>,
    /// Cheaper answers of the peer not proved, by why.
    pub rejected: BTreeMap<Rejection, u64>,
}

impl Tally {
    /// The buckets, most frequent first.
    pub fn by_count(&self) -> Vec<&Bucket> {
        let mut v: Vec<&Bucket> = self.buckets.iter().collect();
        v.sort_by(|a, b| b.count.cmp(&a.count).then(a.cause.cmp(&b.cause)));
        v
    }

    /// Counts one hunt; a missed case is saved (`save`: its path, or why
    /// not) once, if one of its rules' buckets has fewer than `max_files`
    /// files.
    pub fn add(
        &mut self,
        hunt: Hunt,
        max_files: Option<usize>,
        save: impl FnOnce(&Missed) -> Result<PathBuf, String>,
    ) {
        let m = match hunt {
            Hunt::NotCheaper => return,
            Hunt::OnePoint(_) => {
                self.one_point += 1;
                return;
            }
            Hunt::OutsideProfile => {
                self.outside_profile += 1;
                return;
            }
            Hunt::Rejected(r, _) => {
                *self.rejected.entry(r).or_default() += 1;
                return;
            }
            Hunt::PeerRejected(r, _) => {
                *self.engine_missed.rejected.entry(r).or_default() += 1;
                return;
            }
            Hunt::Unsettled(m) => {
                let rejected = match m.direction {
                    Direction::EngineCheaper => &mut self.rejected,
                    Direction::PeerCheaper => &mut self.engine_missed.rejected,
                };
                *rejected.entry(Rejection::Unproved).or_default() += 1;
                return;
            }
            Hunt::Missed(m) if m.direction == Direction::PeerCheaper => {
                let e = &mut self.engine_missed;
                e.cases += 1;
                if max_files.is_none_or(|n| e.written < n) {
                    match save(&m) {
                        Ok(path) => {
                            e.written += 1;
                            e.first_path.get_or_insert(path);
                        }
                        Err(err) => self.unwritten.push(err),
                    }
                }
                return;
            }
            Hunt::Missed(m) => m,
        };
        self.cases += 1;
        let size = |x: &Missed| (x.engine_cost, Cost::of(&x.graph, &x.src));
        let mut mine = Vec::new();
        for c in &m.causes {
            let b = match self.buckets.iter().position(|b| &b.cause == c) {
                Some(b) => b,
                None => {
                    self.buckets.push(Bucket {
                        cause: c.clone(),
                        count: 0,
                        cheapest: m.clone(),
                        written: 0,
                        first_path: None,
                    });
                    self.buckets.len() - 1
                }
            };
            let bucket = &mut self.buckets[b];
            bucket.count += 1;
            if size(&m) < size(&bucket.cheapest) {
                bucket.cheapest = m.clone();
            }
            mine.push(b);
        }
        let room = |b: &Bucket| max_files.is_none_or(|n| b.written < n);
        if !mine.iter().any(|&b| room(&self.buckets[b])) {
            return;
        }
        match save(&m) {
            Ok(path) => {
                for &b in &mine {
                    let bucket = &mut self.buckets[b];
                    bucket.written += 1;
                    bucket.first_path.get_or_insert_with(|| path.clone());
                }
            }
            Err(e) => self.unwritten.push(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::dtype::Width;
    use engine::parse::parse_program;

    /// The source `x mod 2 * (x mod 2)` (its `expr` line) and a peer's
    /// answer (its `expect` line) in one graph, hunted by the built-in
    /// engine under the engine's own profile.
    fn hunt(text: &str) -> Hunt {
        let p = parse_program(text).unwrap();
        let rules = engine::rules::builtin();
        let h = Hunter::new(rules, Profile::engine(Width::W64), None);
        h.hunt(&p.graph, &p.outputs, &p.expects)
    }

    #[test]
    fn a_cheaper_peer_answer_that_is_wrong_is_rejected_apart() {
        // x mod 2 is not x mod 4 at x = 2.
        let h = hunt("var x in [0, 3]\nexpr x mod 2 * (x mod 2)\nexpect x mod 4\n");
        assert!(
            matches!(h, Hunt::PeerRejected(Rejection::Refuted, _)),
            "{h:?}"
        );
        let mut t = Tally::default();
        t.add(h, None, |_| unreachable!("nothing to save"));
        assert_eq!(t.engine_missed.rejected[&Rejection::Refuted], 1);
        assert!(t.rejected.is_empty());
    }

    #[test]
    fn an_answer_of_the_same_cost_is_no_missed_simplification() {
        let h = hunt("var x in [0, 3]\nexpr x mod 2 * (x mod 2)\nexpect x mod 2 * (x mod 2)\n");
        assert!(matches!(h, Hunt::NotCheaper), "{h:?}");
    }

    #[test]
    fn a_negated_comparison_costs_the_comparison_it_spells() {
        // tinygrad's `!(x < 2)` is the engine's `2 <= x`.
        let h = hunt("var x in [0, 3]\nexpr 2 <= x\nexpect !(x < 2)\n");
        assert!(matches!(h, Hunt::NotCheaper), "{h:?}");
        let p = parse_program("var x in [0, 9]\nexpr !(x < 2)\nexpect 2 <= x\n").unwrap();
        let cost = |r: &[NodeId]| Cost::of(&p.graph, r);
        assert_eq!(cost(&p.outputs), cost(&p.expects));
    }

    #[test]
    fn a_rule_a_walk_has_shown_takes_no_more_of_the_prover() {
        let h = hunt("var x in [0, 3]\nexpr x * 1 + 0\nexpect x * 1 + 0\n");
        let Hunt::Missed(m) = h else {
            panic!("the engine's x is cheaper: {h:?}")
        };
        assert!(Budget::default().take(&m));
        let mut b = Budget::default();
        b.shown(&m);
        assert!(!b.take(&m));
    }

    #[test]
    fn a_source_with_a_variable_of_one_point_is_not_looked_at() {
        // The engine folds `x * 45` to 0 here; the peer's rules are not
        // what is missing.
        let h = hunt("var x in [0, 0]\nvar y in [0, 3]\nexpr x * 45 + y\nexpect x * 45 + y\n");
        assert!(
            matches!(&h, Hunt::OnePoint(v) if v == "x in [0, 0]"),
            "{h:?}"
        );
        let mut t = Tally::default();
        t.add(h, None, |_| unreachable!("nothing to save"));
        assert_eq!((t.one_point, t.cases), (1, 0));
    }
}
