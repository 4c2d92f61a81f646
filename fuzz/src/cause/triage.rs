//! The cause of a failed check, found without compiling anything: what a
//! campaign files a finding under before it spends a shrink or a compile
//! on it (a finding of a cause already kept is only counted).
//!
//! Layer by layer, the first that explains the failure:
//!
//! 1. a peer that failed names itself: a crash site, a loop, a hang
//!    ([`super::site`]), unless the crash needed a wrong bound
//!    ([`super::crash`]);
//! 2. an unsound bound is its lowest node's transfer function; a wrong
//!    answer is the range analysis's when it is right wherever the peer's
//!    bounds hold ([`super::transfer`]);
//! 3. the first stage of a pipeline whose output fails ([`super::stage`]);
//!    a rule whose step fails alone ([`crate::blame`]);
//! 4. for a peer with neither, the innermost subterm it gets wrong alone;
//! 5. the failure and the case's shape.
//!
//! The backend ([`super::backend`]) needs the peer's compiler: it is asked
//! only of a finding that is kept, after its class is known
//! ([`crate::finding`]).

use super::found::{Found, WrongBound};
use super::subterm::{how_wrong, innermost_wrong, wrong_subterm};
use super::transfer::{self, Wrong};
use super::{crash, site, stage, Cause, Fault};
use crate::blame::{self, Instance};
use crate::blame::{Blame, BlamedAt};
use crate::bucket;
use crate::checks::{self, CheckConfig, CheckFailure, Checked};
use crate::kind::Kind;
use crate::oracle;
use crate::subject::Subject;
use engine::ir::{Graph, NodeId, Op};
use engine::semantics::{Failure, Model};

/// How far a triage looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    /// Where a campaign finds a finding: the cause named, its rule's
    /// instance the case itself, unless the rule must be judged on the
    /// innermost node it fails on to be named as a kept finding names it
    /// (a finding of a known cause is only counted).
    Quick,
    /// A kept finding: its rule's instance the innermost node it fails on.
    Full,
}

/// The cause of `failure` (a failed check of `checked`, the case simplified
/// by `subject` under `cfg`).
pub fn triage(
    subject: &dyn Subject,
    checked: &Checked,
    failure: &CheckFailure,
    cfg: &CheckConfig,
    depth: Depth,
) -> Found {
    let peer = subject.engine().is_none();
    let cfg = &cfg.quick();
    let model = subject.profile().model_at(cfg.width);
    match failure.kind {
        Kind::PeerError | Kind::Crash | Kind::Garbage => {
            let own = site::of_message(&failure.message);
            if matches!(own, Cause::Crash(_)) {
                if let Some(found) = crash::after_wrong_bound(subject, checked, cfg) {
                    return found;
                }
            }
            return Found::just(own);
        }
        Kind::Hang => return Found::just(Cause::Hang),
        Kind::Bounds => {
            if let Some(w) = &checked.wrong_bound {
                return Found {
                    cause: Cause::Transfer(w.op.clone()),
                    blame: None,
                    wrong_bound: Some(WrongBound::new(&checked.graph, w, &checked.peer_bounds)),
                    how: None,
                };
            }
        }
        Kind::Oracle | Kind::Validate => {
            let focused = focus(checked);
            let checked = focused.as_ref().unwrap_or(checked);
            if let Some(found) = oracle_cause(subject, checked, failure, cfg, model, peer, depth) {
                return found;
            }
        }
        _ => {}
    }
    Found::just(shape(checked, failure.kind, failure.node))
}

/// `checked` narrowed to the output its oracle failure is of, when it has
/// several and the failure names one: a rule applies to one expression,
/// and the other outputs are not the finding's.
fn focus(checked: &Checked) -> Option<Checked> {
    let root = checked.oracle.as_ref()?.failure.as_ref()?.root?;
    let tgt = checked.tgt.as_ref()?;
    if checked.src.len() < 2 || root >= checked.src.len() || root >= tgt.len() {
        return None;
    }
    let mut narrow = checked.clone();
    narrow.src = vec![checked.src[root]];
    narrow.tgt = Some(vec![tgt[root]]);
    let below: std::collections::HashSet<NodeId> =
        checked.graph.reachable(&narrow.src).into_iter().collect();
    narrow.peer_bounds.retain(|b| below.contains(&b.node));
    narrow.bounds_violations.retain(|v| below.contains(&v.node));
    narrow.wrong_bound = transfer::lowest_among(
        &narrow.graph,
        &narrow.src,
        &narrow.peer_bounds,
        &narrow.bounds_violations,
    );
    Some(narrow)
}

/// The cause of an oracle failure: the range analysis, a rule, a subterm.
fn oracle_cause(
    subject: &dyn Subject,
    checked: &Checked,
    failure: &CheckFailure,
    cfg: &CheckConfig,
    model: Model,
    peer: bool,
    depth: Depth,
) -> Option<Found> {
    let (g, src) = (&checked.graph, &checked.src);
    let how = oracle_failure(checked, model)?;
    let asked = AnswerBounds::default();
    let env = failure.env.as_slice();
    if let Some(found) = bounds_explain(subject, checked, env, cfg, model, &asked) {
        return Some(found);
    }
    if let Some(found) = stage::first_wrong(subject, g, src, cfg) {
        return Some(found);
    }
    let fired = checked.fired(subject.rule_names());
    let instance = match depth {
        Depth::Quick => Instance::Case,
        Depth::Full => Instance::Smallest,
    };
    let points: Vec<Vec<i64>> = failure.env.iter().cloned().collect();
    let tried = blame::Tried::default();
    let known = Known {
        case: checked,
        points: &points,
        asked: &asked,
        tried: &tried,
    };
    if let Some(found) = blamed(subject, how, &fired, cfg, model, instance, known) {
        return Some(found);
    }
    if !peer {
        return None;
    }
    // A one-expression case the quick walks pass (a failure in a narrow
    // window of a sampled domain) is itself the subterm: its own check
    // holds the failure the walk found.
    let (n, inner) = match (innermost_wrong(subject, g, src, cfg), src.as_slice()) {
        (Some((n, c)), _) => (n, Some(c)),
        (None, &[root]) => (root, None),
        (None, _) => return None,
    };
    // The innermost subterm it gets wrong alone is a case of its own,
    // smaller: its cause may show where the whole case's did not (a rule
    // among many, a bound of a node the case rewrote first). Its oracle
    // check is the search's; the bounds that came with its answer are
    // checked now.
    let sub = match inner.filter(|_| src.as_slice() != [n]) {
        Some(mut c) => {
            checks::check_bounds(&mut c, subject, cfg);
            if let Some(f) = c.failure(Kind::Oracle) {
                if let Some(found) = oracle_cause(subject, &c, f, cfg, model, false, depth) {
                    return Some(found);
                }
            }
            c
        }
        None => checked.clone(),
    };
    if let Some(found) = how_wrong(subject, &sub, model, cfg) {
        return Some(found);
    }
    Some(Found::just(Cause::Subterm {
        failure: how,
        shape: bucket::linear_shape(g, n),
    }))
}

/// The cause a rule's step shows: the rule (its failing pattern) whose
/// step fails alone like the finding, or the transfer function of a bound
/// that step trusted (right wherever the peer's bounds of its instance
/// hold); `fired`: the rules tried.
fn blamed(
    subject: &dyn Subject,
    how: Failure,
    fired: &[(String, usize)],
    cfg: &CheckConfig,
    model: Model,
    instance: Instance,
    known: Known<'_>,
) -> Option<Found> {
    let (checked, points, tried) = (known.case, known.points, known.tried);
    let (g, src) = (&checked.graph, &checked.src);
    let shown = blame::blame(
        subject,
        g,
        src,
        checked.covered,
        how,
        fired,
        cfg,
        instance,
        points,
        tried,
    )?;
    let whole_case = shown.blame.instance.whole_case();
    // The rule's premises: a step that is right wherever the peer's
    // bounds of its instance hold trusted a wrong bound.
    if let Some(found) = instance_bounds_explain(subject, &shown, cfg, model, known) {
        return Some(found);
    }
    let mut b = shown.blame;
    // Blamed on the whole case, the rule is judged again on the innermost
    // node it fails on alone, as a kept finding's is: the bound it trusted
    // may be of a node only its own rewrites there build, and the pattern
    // named there is the one a kept finding of the same defect names.
    if whole_case && instance == Instance::Case {
        let fired = shown.fired.as_deref();
        if let Some(small) = blame::narrow(subject, how, cfg, points, &b, fired, tried) {
            if let Some(found) = instance_bounds_explain(subject, &small, cfg, model, known) {
                return Some(found);
            }
            b = small.blame;
        }
    }
    let fault = step_fault(subject, &b, how, cfg, known);
    Some(Found {
        cause: Cause::Rule {
            rule: b.culprit().to_string(),
            fault,
        },
        blame: Some(b),
        wrong_bound: None,
        how: None,
    })
}

/// How `b`'s step is wrong. A step whose case fails undefined may owe it
/// to a wrong value it computed inside its instance (Morok's `(2k + 1) /
/// 2 -> k` for a negative `k`, then used as a divisor that became 0):
/// where the same pattern, applied alone at a node of the instance, takes
/// another value or lane than that node, the step is wrong, the undefined
/// behaviour only what the wrong value led to. Each search makes the
/// steps the blame made at the instance and the other search makes again,
/// and the cases past them: they are `known.tried`'s.
fn step_fault(
    subject: &dyn Subject,
    b: &Blame,
    how: Failure,
    cfg: &CheckConfig,
    known: Known<'_>,
) -> Fault {
    let fault = Fault::of(how);
    if fault != Fault::Undefined {
        return fault;
    }
    let at = &b.instance;
    let fired = [(b.rule.clone(), 1)];
    let wrong_inside = [Failure::ValueDiffers, Failure::ValidityDiffers]
        .into_iter()
        .any(|wrong| {
            blame::blame(
                subject,
                at.graph(),
                at.roots(),
                None,
                wrong,
                &fired,
                cfg,
                Instance::Smallest,
                known.points,
                known.tried,
            )
            .is_some_and(|inner| inner.blame.culprit() == b.culprit())
        });
    if wrong_inside {
        Fault::Wrong
    } else {
        Fault::Undefined
    }
}

/// The range analysis's transfer function, when the peer's bounds of
/// `checked`'s source, or of the nodes its answer built, exclude a value
/// some node takes and its answer is right wherever they hold
/// (`failing`: where it fails). A closure bounds the nodes it builds
/// before it trusts them (Morok's `fold_divmod_general` builds `A * 59`
/// and asks `vmin >= 0`): the answer that keeps such a node shows the
/// bound it trusted.
fn bounds_explain(
    subject: &dyn Subject,
    checked: &Checked,
    failing: &[Vec<i64>],
    cfg: &CheckConfig,
    model: Model,
    asked: &AnswerBounds,
) -> Option<Found> {
    let (g, src) = (&checked.graph, &checked.src);
    let tgt = checked.tgt.as_deref()?;
    if checked.peer_bounds.is_empty() {
        return None;
    }
    let found = |w: &Wrong, bounded: &[transfer::PeerBound]| Found {
        cause: Cause::Transfer(w.op.clone()),
        blame: None,
        wrong_bound: Some(WrongBound::new(g, w, bounded)),
        how: None,
    };
    let right = |built: &[transfer::PeerBound]| {
        transfer::right_where_bounds_hold(
            g,
            src,
            tgt,
            &checked.peer_bounds,
            built,
            model,
            cfg.seed,
            failing,
        )
    };
    if let Some(w) = &checked.wrong_bound {
        if right(&[]) {
            return Some(found(w, &checked.peer_bounds));
        }
    }
    // The nodes the answer built: the peer's bounds of the answer, kept
    // for the integer nodes the source has not.
    let below: std::collections::HashSet<NodeId> = g.reachable(src).into_iter().collect();
    let built: std::collections::HashSet<NodeId> = g
        .reachable(tgt)
        .into_iter()
        .filter(|&n| {
            !below.contains(&n) && !matches!(g.node(n).op, Op::Var(_) | Op::Const(_) | Op::Invalid)
        })
        .collect();
    if built.is_empty() {
        return None;
    }
    let (bounded, violations) = asked.of(g, tgt, || {
        // The same graph: the answer's nodes keep their ids.
        let c = checks::check(g, tgt, subject, &cfg.only(Kind::Bounds), None);
        (c.peer_bounds, c.bounds_violations)
    });
    let keep = |n: NodeId| built.contains(&n);
    let bounded: Vec<transfer::PeerBound> = bounded.into_iter().filter(|b| keep(b.node)).collect();
    let violations: Vec<crate::bounds::Violation> =
        violations.into_iter().filter(|v| keep(v.node)).collect();
    let w = transfer::lowest_among(g, tgt, &bounded, &violations)?;
    right(&bounded).then(|| found(&w, &bounded))
}

/// [`bounds_explain`] for a blamed rule's instance: its step (the rule
/// alone) judged against the peer's bounds of the instance, which may hold
/// nodes the case's source has not (Morok rewrites `-c / x` to `c * -1 /
/// x` before another group trusts the product's bound). The blame's own
/// checks are the step's where they are the same rule alone at the same
/// instance (`known.tried`).
fn instance_bounds_explain(
    subject: &dyn Subject,
    shown: &blame::Shown,
    cfg: &CheckConfig,
    model: Model,
    known: Known<'_>,
) -> Option<Found> {
    let case = known.case;
    // A pattern that failed after others of its rule's step rewrote the
    // instance is judged there, alone: the nodes they built are bounded
    // there (Morok's `x * -512 + c < 512` folded to `x * -1 < 1`, then
    // decided from the product's bound).
    let b = &shown.blame;
    let (rule, at) = match (&b.pattern, &b.pattern_instance) {
        (Some(p), Some(at)) => (p, at),
        _ => (&b.rule, &b.instance),
    };
    let mut alone = subject.rule_alone(rule)?;
    let step_cfg = cfg.only(Kind::Oracle);
    let (mut g, mut roots) = placed(at, case);
    let mut step = known
        .tried
        .check(g, roots, rule, alone.as_ref(), &step_cfg, None);
    let mut at = at;
    if step.declined && b.pattern.is_some() {
        // The pattern cannot run alone at its instance's root (an earlier
        // pattern of its group matches there first; the blame applied it
        // below): its group's step there builds what it trusted.
        alone = subject.rule_alone(&b.rule)?;
        at = &b.instance;
        (g, roots) = placed(at, case);
        step = known
            .tried
            .check(g, roots, &b.rule, alone.as_ref(), &step_cfg, None);
    }
    let mins: Vec<NodeId> = g
        .reachable(roots)
        .into_iter()
        .filter(|&n| g.node(n).op == Op::Min)
        .collect();
    // The answer, kept to be compared with the spelled instance's.
    let was = step
        .tgt
        .clone()
        .filter(|_| !mins.is_empty())
        .map(|tgt| (step.graph.clone(), tgt));
    if let Some(found) = step_bounds_explain(subject, step, at.whole_case(), cfg, model, known) {
        return Some(found);
    }
    // A peer with no `min` spells it with ops it has, whose nodes the
    // case's bounds do not show (Morok's `-max(-a, -b)`: the bound of `-b`
    // is its product's, or `where(a < b, a, b)` where a negation would
    // overflow). The instance spelled so, each `min` one way or the other,
    // where the peer answers it as it answered the instance (the same
    // program to it), shows them.
    let (was_graph, was_tgt) = was?;
    let spellings: Vec<Vec<MinSpelling>> = match mins.len() {
        k if k <= MAX_RESPELLED => (0..1u32 << k)
            .map(|mask| {
                (0..k)
                    .map(|i| match mask >> i & 1 {
                        0 => MinSpelling::Negation,
                        _ => MinSpelling::Select,
                    })
                    .collect()
            })
            .collect(),
        k => MinSpelling::ALL.iter().map(|&how| vec![how; k]).collect(),
    };
    spellings.into_iter().find_map(|how| {
        let mut spelled = g.clone();
        let roots = MinSpelling::respell(&how, &mins, &mut spelled, roots);
        let mut step = checks::check(&spelled, &roots, alone.as_ref(), &step_cfg, None);
        // The same answer: the first's, copied into this step's graph, is
        // its very nodes (the graph is hash-consed).
        let same = step.graph.import(&was_graph, &was_tgt).ok();
        if same.is_none() || same != step.tgt {
            return None;
        }
        step_bounds_explain(subject, step, false, cfg, model, known)
    })
}

/// Where a blamed instance is judged: the case's own graph when it is
/// the case (its bounds are the case's), else the instance's.
fn placed<'a>(at: &'a BlamedAt, case: &'a Checked) -> (&'a Graph, &'a [NodeId]) {
    match at.whole_case() {
        true => (&case.graph, &case.src),
        false => (at.graph(), at.roots()),
    }
}

/// `min`s of an instance past which only the two uniform spellings are
/// tried, not every mix.
const MAX_RESPELLED: usize = 3;

/// [`bounds_explain`] of a rule's `step` alone, with the peer's bounds of
/// its source (the case's own when it is the case, `whole`).
fn step_bounds_explain(
    subject: &dyn Subject,
    mut step: Checked,
    whole: bool,
    cfg: &CheckConfig,
    model: Model,
    known: Known<'_>,
) -> Option<Found> {
    let (case, points) = (known.case, known.points);
    // Where the step fails: where its walk shows it, and at the finding's
    // points (a failure in a narrow window the walk samples past, as the
    // blame judged the step).
    let tgt = step.tgt.as_deref()?;
    let vars = step.graph.vars().len();
    let failing: Vec<Vec<i64>> = step
        .failure(Kind::Oracle)
        .and_then(|f| f.env.clone())
        .into_iter()
        .chain(
            points
                .iter()
                .filter(|env| {
                    env.len() == vars
                        && oracle::fails_at(&step.graph, &step.src, tgt, env, model).is_some()
                })
                .cloned(),
        )
        .collect();
    if failing.is_empty() {
        return None;
    }
    if whole {
        step.peer_bounds = case.peer_bounds.clone();
        step.bounds_violations = case.bounds_violations.clone();
        step.wrong_bound = case.wrong_bound.clone();
    } else {
        let bounds_cfg = cfg.only(Kind::Bounds);
        let of_source = checks::check(&step.graph, &step.src, subject, &bounds_cfg, None);
        // The check copied the step's graph: the instance's nodes have
        // the same ids in both.
        step.peer_bounds = of_source.peer_bounds;
        step.bounds_violations = of_source.bounds_violations;
        step.wrong_bound = of_source.wrong_bound;
    }
    bounds_explain(subject, &step, &failing, cfg, model, known.asked)
}

/// What the bounds judgement of a blamed rule reads: the case triaged, the
/// points it fails at, the answers' bounds asked so far, and the checks
/// of rules alone the blames made.
#[derive(Clone, Copy)]
struct Known<'a> {
    case: &'a Checked,
    points: &'a [Vec<i64>],
    asked: &'a AnswerBounds,
    tried: &'a blame::Tried,
}

/// The peer's bounds of an answer's nodes (and the values outside them),
/// asked once in a triage: a rule's step at the whole case that gives the
/// case's own answer asks of the same program (its graph is a clone of
/// the case's, so the answer has the case's node ids under the same
/// holder, [`Graph::holder`]).
#[derive(Default)]
struct AnswerBounds(std::cell::RefCell<Option<AskedOf>>);

/// An answer (its holder and roots) and the bounds asked of it.
type AskedOf = (
    (u64, Vec<NodeId>),
    Vec<transfer::PeerBound>,
    Vec<crate::bounds::Violation>,
);

impl AnswerBounds {
    /// The bounds of `tgt` in `g`: those asked before of the same answer,
    /// else `ask`'s.
    fn of(
        &self,
        g: &Graph,
        tgt: &[NodeId],
        ask: impl FnOnce() -> (Vec<transfer::PeerBound>, Vec<crate::bounds::Violation>),
    ) -> (Vec<transfer::PeerBound>, Vec<crate::bounds::Violation>) {
        let key = (g.holder(tgt), tgt.to_vec());
        if let Some((k, b, v)) = self.0.borrow().as_ref() {
            if *k == key {
                return (b.clone(), v.clone());
            }
        }
        let (b, v) = ask();
        *self.0.borrow_mut() = Some((key, b.clone(), v.clone()));
        (b, v)
    }
}

/// How a peer with no `min` may spell `min(a, b)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MinSpelling {
    /// `-max(-a, -b)` (tinygrad's and Morok's).
    Negation,
    /// `where(a < b, a, b)`.
    Select,
}

impl MinSpelling {
    const ALL: [MinSpelling; 2] = [MinSpelling::Negation, MinSpelling::Select];

    /// `roots` of `g` with the `min`s `mins` spelled `how` (one each).
    fn respell(
        how: &[MinSpelling],
        mins: &[NodeId],
        g: &mut Graph,
        roots: &[NodeId],
    ) -> Vec<NodeId> {
        g.rebuild(roots, |g, n, _, src| {
            let i = mins.iter().position(|&m| m == n)?;
            let [a, b] = *src else { return None };
            Some(match how[i] {
                MinSpelling::Negation => {
                    let (na, nb) = (g.mk(Op::Neg, &[a]), g.mk(Op::Neg, &[b]));
                    let m = g.mk(Op::Max, &[na, nb]);
                    g.mk(Op::Neg, &[m])
                }
                MinSpelling::Select => {
                    let lt = g.mk(Op::Lt, &[a, b]);
                    g.mk(Op::Where, &[lt, a, b])
                }
            })
        })
    }
}

/// `checked`'s `kind` failure triaged as far as it takes to tell whether
/// its cause is still `want` (a shrink candidate kept to its finding's
/// cause), and what shows it there: asking only what that cause and the
/// layers before it need (its bound; its rule alone; its message). A shape
/// cannot be kept (shrinking changes it). `cfg` is the triage's quick
/// configuration ([`CheckConfig::quick`]) and `model` the profile's at its
/// width, made once for all the candidates of a shrink.
pub fn holding(
    subject: &dyn Subject,
    checked: &Checked,
    kind: Kind,
    cfg: &CheckConfig,
    model: Model,
    want: &Cause,
) -> Option<Found> {
    let failure = checked.failure(kind)?;
    let (g, src) = (&checked.graph, &checked.src);
    let found = match want {
        Cause::Crash(_) | Cause::Loop(_) => Found::just(site::of_message(&failure.message)),
        Cause::Hang if failure.kind == Kind::Hang => Found::just(Cause::Hang),
        Cause::Transfer(_) if failure.kind == Kind::Bounds => {
            let w = checked.wrong_bound.as_ref()?;
            Found {
                cause: Cause::Transfer(w.op.clone()),
                blame: None,
                wrong_bound: Some(WrongBound::new(g, w, &checked.peer_bounds)),
                how: None,
            }
        }
        Cause::Transfer(_) | Cause::Rule { .. } => {
            let how = oracle_failure(checked, model)?;
            let asked = AnswerBounds::default();
            if let Some(found) =
                bounds_explain(subject, checked, failure.env.as_slice(), cfg, model, &asked)
                    .or_else(|| stage::first_wrong(subject, g, src, cfg))
            {
                found
            } else {
                let only = match want {
                    Cause::Rule { rule, .. } => vec![(rule.clone(), 1)],
                    _ => checked.fired(subject.rule_names()),
                };
                let points: Vec<Vec<i64>> = failure.env.iter().cloned().collect();
                let tried = blame::Tried::default();
                let known = Known {
                    case: checked,
                    points: &points,
                    asked: &asked,
                    tried: &tried,
                };
                blamed(subject, how, &only, cfg, model, Instance::Case, known)?
            }
        }
        Cause::Subterm { failure, shape } => {
            if oracle_failure(checked, model) != Some(*failure)
                || wrong_subterm(subject, g, src, cfg).as_deref() != Some(shape.as_str())
            {
                return None;
            }
            Found::just(want.clone())
        }
        Cause::Introduced { .. } | Cause::Misread { .. } => {
            // A pipeline's: its first wrong stage's.
            match stage::first_wrong(subject, g, src, cfg) {
                Some(found) => found,
                None => {
                    let (_, sub) = innermost_wrong(subject, g, src, cfg)?;
                    how_wrong(subject, &sub, model, cfg)?
                }
            }
        }
        Cause::Stage { .. } | Cause::Implied(_) => stage::first_wrong(subject, g, src, cfg)?,
        Cause::Hang | Cause::Backend { .. } | Cause::Model(_) | Cause::Shape(_) => return None,
    };
    (found.cause == *want).then_some(found)
}

/// How the answer failed: by the oracle's walk, else at the point the
/// validator found (a counterexample the walk sampled past).
fn oracle_failure(checked: &Checked, model: Model) -> Option<Failure> {
    let walked = checked
        .oracle
        .as_ref()
        .and_then(|o| o.failure.as_ref())
        .map(|f| f.failure);
    walked.or_else(|| {
        let tgt = checked.tgt.as_deref()?;
        let env = checked.failure(Kind::Validate)?.env.as_ref()?;
        crate::oracle::fails_at(&checked.graph, &checked.src, tgt, env, model)
    })
}

/// The failure and the shape of the node it is about (a bound's), else of
/// the case.
fn shape(checked: &Checked, kind: Kind, node: Option<NodeId>) -> Cause {
    let roots: Vec<NodeId> = match node {
        Some(n) => vec![n],
        None => checked.src.clone(),
    };
    // The walk's failure (the shape keeps what it said before a validator's
    // counterexample could be judged too).
    let how = (kind == Kind::Oracle)
        .then(|| {
            checked
                .oracle
                .as_ref()
                .and_then(|o| o.failure.as_ref())
                .map(|f| f.failure)
        })
        .flatten();
    let mut head = kind.name().to_string();
    if let Some(f) = how {
        head.push(' ');
        head.push_str(f.name());
    }
    Cause::Shape(format!(
        "{head}: {}",
        bucket::abstract_shape(&checked.graph, &roots)
    ))
}

/// The shape cause of the `kind` failure of `checked` (what a case is
/// filed under when nothing more can be said of it).
pub fn shape_of(checked: &Checked, kind: Kind) -> Cause {
    shape(checked, kind, checked.failure(kind).and_then(|f| f.node))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subject::PlusOne;
    use engine::parse::parse_program;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn spelled(text: &str, how: &[MinSpelling]) -> String {
        let p = parse_program(text).unwrap();
        let mut g = p.graph.clone();
        let mins: Vec<NodeId> = g
            .reachable(&p.outputs)
            .into_iter()
            .filter(|&n| g.node(n).op == Op::Min)
            .collect();
        let roots = MinSpelling::respell(how, &mins, &mut g, &p.outputs);
        crate::corpus::case_body(&g, &roots, None)
    }

    #[test]
    fn an_answers_bounds_are_asked_once_in_the_clones_that_hold_it() {
        let p = parse_program("var x in [0, 9]\nexpr x * 2 + 1\n").unwrap();
        let asked = AnswerBounds::default();
        let asks = std::cell::Cell::new(0);
        let ask = || {
            asks.set(asks.get() + 1);
            (Vec::new(), Vec::new())
        };
        asked.of(&p.graph, &p.outputs, ask);
        // A clone (a step's graph) holds the same answer at the same ids.
        let mut step = p.graph.clone();
        asked.of(&step, &p.outputs, ask);
        assert_eq!(asks.get(), 1);
        // Another answer, built in the clone, is asked.
        let x = step.reachable(&p.outputs)[0];
        let other = step.mk(Op::Neg, &[x]);
        asked.of(&step, &[other], ask);
        assert_eq!(asks.get(), 2);
    }

    #[test]
    fn the_innermost_subterm_a_peer_gets_wrong_is_asked_once_in_its_triage() {
        let p = parse_program("var x in [0, 9]\nexpr (x * 3) * 2\n").unwrap();
        // A peer without rules or bounds, wrong everywhere.
        let subject = PlusOne {
            profile: crate::subject::Profile::engine(engine::dtype::Width::W64),
            asked: AtomicUsize::new(0),
        };
        let cfg = CheckConfig::default().only(Kind::Oracle);
        let checked = checks::check(&p.graph, &p.outputs, &subject, &cfg, None);
        let failure = checked.failure(Kind::Oracle).unwrap().clone();
        subject.asked.store(0, Ordering::Relaxed);
        let found = triage(&subject, &checked, &failure, &cfg, Depth::Quick);
        assert!(
            matches!(found.cause, Cause::Subterm { .. }),
            "{:?}",
            found.cause
        );
        // The search asks `x * 3` alone and finds it wrong; its bounds are
        // checked on that answer, not on the subterm asked again.
        assert_eq!(subject.asked.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn each_min_is_spelled_the_way_asked_and_nothing_else_changes() {
        // Operands first: the inner `min` is the first one found (the
        // graph keeps a commutative op's operands in its own order).
        let text = "var x in [0, 9]\nvar y in [0, 9]\nexpr min(min(x, y) + 1, x) * 2\n";
        let both = spelled(text, &[MinSpelling::Negation, MinSpelling::Negation]);
        assert!(
            both.ends_with("expr -max(-x, -(-max(-x, -y) + 1)) * 2\n"),
            "{both}"
        );
        let mixed = spelled(text, &[MinSpelling::Select, MinSpelling::Negation]);
        assert!(
            mixed.ends_with("expr -max(-x, -(where(x < y, x, y) + 1)) * 2\n"),
            "{mixed}"
        );
    }
}
