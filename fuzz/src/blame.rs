//! The rule a finding is blamed on: a step of the simplification that,
//! taken alone, fails the way the finding does.
//!
//! One wrong rule shows up in many shapes (tinygrad's division moved under
//! its divisor's gate: `0 / where(c, x, invalid)`, `-1 mod where(c, x,
//! invalid)`, ...), and bucketed by shape a maintainer reads a report per
//! shape. So the shrunk case's steps are judged one by one, as `prove
//! --simplifier` judges a rule on one instance: tileproof's engine by its
//! trace (each firing's node before and after), a peer that applies its
//! rules one at a time (`apply`, docs/protocol.md section 6) by each rule
//! that fired on the case, at each node of the case. The first step whose
//! result fails the oracle with the finding's own failure names the rule;
//! the node it rewrote is that rule's instance, kept as a seed of the rule
//! for `prove --simplifier` ([`save_seed`]). A peer's wrong step may come
//! after sound ones rewrote the case, so the cases its rules make are
//! searched breadth first, a few steps deep. No step failing alone blames
//! nothing: the finding keeps its shape for a cause.

use crate::checks::{self, CheckConfig};
use crate::corpus::{self, case_body, fnv1a, write_atomic};
use crate::generate::RuleSeed;
use crate::kind::Kind;
use crate::oracle;
use crate::subject::{Answer, Profile, Refusal, Subject};
use engine::ir::{Graph, NodeId};
use engine::op::Op;
use engine::semantics::{Failure, Model};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The rule a finding is blamed on, and the instance it fails on alone
/// ([`crate::blame`]): its cause, whatever shape the finding has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blame {
    /// The rule, as the subject names it.
    pub rule: String,
    /// The one pattern of the rule that fails alone (`RULE/PATTERN`), when
    /// the peer names the patterns of its rules (a Morok group's closure).
    pub pattern: Option<String>,
    /// The instance it fails on alone.
    pub instance: BlamedAt,
    /// Where the pattern fails on its own, when the patterns before it in
    /// the rule's step left the instance rewritten: the nodes they built
    /// (whose bounds it may have trusted) are there and not in `instance`.
    pub pattern_instance: Option<BlamedAt>,
    /// Where the subject defines the rule (`file:line`), when it says.
    pub location: Option<String>,
}

/// A blamed rule's instance: expressions `roots` of `graph` (the case's
/// graph, or one a sequence of the peer's steps made from it).
#[derive(Clone)]
pub struct BlamedAt {
    graph: Graph,
    roots: Vec<NodeId>,
    /// The instance is the case itself, as found (its peer's bounds are
    /// the case's).
    whole_case: bool,
    /// Its `var` and `expr` lines, printed once when first read (the
    /// cause's detail, the header, the seed file and equality read them;
    /// most instances a triage builds are never shown).
    text: OnceLock<String>,
}

impl BlamedAt {
    pub fn new(graph: Graph, roots: Vec<NodeId>, whole_case: bool) -> BlamedAt {
        BlamedAt {
            graph,
            roots,
            whole_case,
            text: OnceLock::new(),
        }
    }

    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    pub fn roots(&self) -> &[NodeId] {
        &self.roots
    }

    pub fn whole_case(&self) -> bool {
        self.whole_case
    }

    /// Its `var` and `expr` lines, as a report and a seed file show it.
    pub fn text(&self) -> &str {
        self.text
            .get_or_init(|| case_body(&self.graph, &self.roots, None))
    }
}

impl std::fmt::Debug for BlamedAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.text())
    }
}

/// Two instances are the same program when they print the same (their
/// graphs may number the nodes differently).
impl PartialEq for BlamedAt {
    fn eq(&self, other: &Self) -> bool {
        self.whole_case == other.whole_case && self.text() == other.text()
    }
}

impl Eq for BlamedAt {}

impl Blame {
    /// What the cause names: the pattern, else the rule.
    pub fn culprit(&self) -> &str {
        self.pattern.as_deref().unwrap_or(&self.rule)
    }
}

/// Of the patterns that made a step together (in the order they first
/// matched), the first whose own step fails, each taken from where the
/// ones before it left the instance: the step of a group is a sequence of
/// its closures' rewrites, and the wrong one may come after right ones.
/// With it, where it failed when the ones before it had rewritten the
/// instance. `step`: the rule's own step at `instance` (its check there).
fn first_wrong_pattern(
    subject: &dyn Subject,
    instance: &BlamedAt,
    step: &checks::Checked,
    patterns: &[String],
    judge: &Judge<'_>,
) -> Option<(String, Option<BlamedAt>)> {
    let (cfg, fails) = (&judge.cfg, |c: &checks::Checked| judge.fails(c));
    let (mut g, mut at, mut moved) = (instance.graph.clone(), instance.roots.clone(), false);
    // The group rewrites to a fixed point, so a pattern may take its turn
    // again after the others (`0 * 0 * x`: `x * 0 -> 0` right on `0 * 0`,
    // then wrong on `0 * x`): rounds while some pattern moves the instance.
    for _ in 0..MAX_PATTERN_ROUNDS {
        let mut moves = 0;
        for p in patterns {
            let Some(alone) = subject.rule_alone(p) else {
                continue;
            };
            // A pattern that gives its rule's whole answer there makes the
            // comparison the rule's step made: its verdict is the step's.
            let c = judge.check(&g, &at, p, alone.as_ref(), Some(step));
            if fails(&c) {
                return Some(blamed_pattern(p, g, at, moved));
            }
            if let (true, [root]) = (c.declined, at.as_slice()) {
                // A pattern is applied once at the root (Morok's closure
                // alone), where its rule rewrote below it: it is applied at
                // the outermost node under the root where it rewrites, as the
                // rule's own rewrite to a fixed point did, and the instance
                // with that node rewritten is judged whole.
                let root = *root;
                for n in g.reachable(&at).into_iter().rev().filter(|&n| n != root) {
                    let cn = judge.check(&g, &[n], p, alone.as_ref(), None);
                    let Some(to) = cn.tgt.as_ref().and_then(|t| t.first().copied()) else {
                        continue;
                    };
                    let mut h = cn.graph;
                    let after = replace(&mut h, root, n, to);
                    let step = Step {
                        after,
                        profile: subject.profile(),
                    };
                    let whole = checks::check(&h, &at, &step, cfg, None);
                    if fails(&whole) {
                        return Some(blamed_pattern(p, g, at, moved));
                    }
                    if whole.ok() {
                        (g, at, moved) = (h, vec![after], true);
                        moves += 1;
                    }
                    break;
                }
                continue;
            }
            if let (true, Some(to)) = (c.ok(), c.tgt) {
                (g, at, moved) = (c.graph, to, true);
                moves += 1;
            }
        }
        if moves == 0 {
            break;
        }
    }
    None
}

/// Pattern `p` found failing at `at` of `g`: its instance, kept when the
/// patterns before it had `moved` it from the blamed one.
fn blamed_pattern(p: &str, g: Graph, at: Vec<NodeId>, moved: bool) -> (String, Option<BlamedAt>) {
    let here = moved.then_some(BlamedAt::new(g, at, false));
    (p.to_string(), here)
}

/// Rounds of a group's patterns [`first_wrong_pattern`] takes, at most.
const MAX_PATTERN_ROUNDS: usize = 4;

/// A pattern's name (`RULE/PATTERN`, as a peer's `patterns` gives it) as
/// its rule and the pattern's own name; a rule's name is itself alone.
pub fn rule_and_pattern(name: &str) -> (&str, Option<&str>) {
    match name.split_once('/') {
        Some((rule, pattern)) => (rule, Some(pattern)),
        None => (name, None),
    }
}

/// Nodes of a shrunk case tried as a peer rule's instance (a shrunk case
/// has a handful; a case kept unshrunk is not worth hundreds of requests).
const MAX_NODES: usize = 32;

/// Rules fired on a case tried at each node.
const MAX_RULES: usize = 16;

/// Steps taken from the source in search of the wrong one.
const MAX_DEPTH: usize = 3;

/// Rule applications judged per kept finding, at most.
const MAX_STEPS: usize = 400;

/// Rule applications judged past the root's per finding a campaign meets
/// (most are of causes already kept, and a rule that is wrong alone is
/// wrong at the root): a shallow search.
const QUICK_STEPS: usize = 48;

/// The instance a blamed rule is shown failing on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Instance {
    /// The innermost node it fails on alone: a seed of the rule, and what
    /// a report shows (a request per node, for a kept finding).
    Smallest,
    /// The case itself, when the rule fails on it alone: enough to name
    /// the cause of a finding a campaign only counts.
    Case,
}

/// A blamed rule and the name it fired under (its step alone at the
/// blame's instance, the check that showed it, is in the blame's
/// [`Tried`]).
pub struct Shown {
    pub blame: Blame,
    /// The rule as the subject's `fired` names it (`None`: a step of the
    /// engine's trace, judged as the step itself).
    pub fired: Option<String>,
}

/// The checks of rules alone the blames of one triage made, each by its
/// instance: the same rule at the same nodes of the same graph (held by
/// one graph, [`Graph::holder`], and as many) is the same check. A triage
/// judges a blamed step again for its bounds and for how it is wrong (a
/// search for another failure, through the same steps), and a search
/// meets the case's root again among the nodes below it; each is the
/// check made before, not made again. So are the cases a search makes
/// from its steps, whose nodes the checks past the first step are at.
/// Made under one configuration.
#[derive(Default)]
pub struct Tried {
    checks: RefCell<HashMap<TriedAt, checks::Checked>>,
    /// The cases a search made from a step, by the step and the case's
    /// roots: a search through the same steps reads the graphs the first
    /// made, so the checks at the nodes they built are read too (a case
    /// made again would be a graph of its own, and its checks new).
    made: RefCell<HashMap<(TriedAt, Vec<NodeId>), Made>>,
}

/// A case a search made: a step's answer put in place of its instance.
#[derive(Clone)]
struct Made {
    graph: Graph,
    roots: Vec<NodeId>,
    /// Its text, which the search tells the cases it has met apart by.
    text: String,
}

/// A rule alone at an instance: its graph's nodes (their holder and
/// count: two graphs with the same hold the same nodes, numbered the
/// same, and a check's answer is numbered the same in both), its roots,
/// the rule's name.
#[derive(PartialEq, Eq, Hash)]
struct TriedAt {
    nodes: (u64, usize, usize),
    roots: Vec<NodeId>,
    rule: String,
}

impl Tried {
    /// `alone` (the rule `rule` names) at `roots` of `g` under `cfg`:
    /// the check made there before, else a new one (knowing `known`,
    /// [`checks::check_knowing`]), kept.
    pub fn check(
        &self,
        g: &Graph,
        roots: &[NodeId],
        rule: &str,
        alone: &dyn Subject,
        cfg: &CheckConfig,
        known: Option<&checks::Checked>,
    ) -> checks::Checked {
        let at = TriedAt::new(g, roots, rule);
        if let Some(c) = self.checks.borrow().get(&at) {
            return c.clone();
        }
        let c = checks::check_knowing(g, roots, alone, cfg, None, known);
        self.checks.borrow_mut().insert(at, c.clone());
        c
    }

    /// Case `roots` of `g` with node `n` replaced by `to`, which `step`
    /// (`rule` alone at `n`, [`Tried::check`]) answered: the one made
    /// before from the same step, else made in `step`'s graph and kept.
    fn made(
        &self,
        g: &Graph,
        roots: &[NodeId],
        n: NodeId,
        rule: &str,
        step: checks::Checked,
        to: NodeId,
    ) -> Made {
        let key = (TriedAt::new(g, &[n], rule), roots.to_vec());
        if let Some(m) = self.made.borrow().get(&key) {
            return m.clone();
        }
        let mut graph = step.graph;
        let roots: Vec<NodeId> = roots
            .iter()
            .map(|&r| replace(&mut graph, r, n, to))
            .collect();
        let text = case_body(&graph, &roots, None);
        let m = Made { graph, roots, text };
        self.made.borrow_mut().insert(key, m.clone());
        m
    }
}

impl TriedAt {
    fn new(g: &Graph, roots: &[NodeId], rule: &str) -> TriedAt {
        let top = g.len().checked_sub(1).map(|i| NodeId(i as u32));
        TriedAt {
            nodes: (g.holder(top.as_slice()), g.len(), g.vars().len()),
            roots: roots.to_vec(),
            rule: rule.to_string(),
        }
    }
}

/// How a blame judges a step: under the oracle alone, failing the
/// finding's way where the oracle's walk shows it or at one of `points`
/// (a counterexample the solver found where the walk sampled past it).
struct Judge<'a> {
    cfg: CheckConfig,
    model: Model,
    failure: Failure,
    points: &'a [Vec<i64>],
    tried: &'a Tried,
}

impl<'a> Judge<'a> {
    fn new(
        subject: &dyn Subject,
        failure: Failure,
        cfg: &CheckConfig,
        points: &'a [Vec<i64>],
        tried: &'a Tried,
    ) -> Judge<'a> {
        let cfg = cfg.only(Kind::Oracle);
        let model = subject.profile().model_at(cfg.width);
        Judge {
            cfg,
            model,
            failure,
            points,
            tried,
        }
    }

    /// `alone` (as `rule` names it) at `roots` of `g`, under the oracle
    /// alone ([`Tried::check`]).
    fn check(
        &self,
        g: &Graph,
        roots: &[NodeId],
        rule: &str,
        alone: &dyn Subject,
        known: Option<&checks::Checked>,
    ) -> checks::Checked {
        self.tried.check(g, roots, rule, alone, &self.cfg, known)
    }

    fn fails(&self, c: &checks::Checked) -> bool {
        let walked = c
            .oracle
            .as_ref()
            .and_then(|o| o.failure.as_ref())
            .is_some_and(|f| f.failure == self.failure);
        walked
            || c.tgt.as_deref().is_some_and(|tgt| {
                self.points.iter().any(|env| {
                    oracle::fails_at(&c.graph, &c.src, tgt, env, self.model) == Some(self.failure)
                })
            })
    }

    /// `rule` (as `fired` names it) blamed at `at`, where `c`, its step
    /// alone, fails: narrowed to the one pattern of it that fails alone
    /// when the peer said which of its patterns made the step (a group's
    /// two wrong closures are two defects).
    fn shown(&self, subject: &dyn Subject, rule: &str, at: BlamedAt, c: &checks::Checked) -> Shown {
        let (pattern, pattern_instance) = match c.patterns.as_slice() {
            [one] => (Some(one.clone()), None),
            many => match first_wrong_pattern(subject, &at, c, many, self) {
                Some((p, moved)) => (Some(p), moved),
                None => (None, None),
            },
        };
        let (name, _) = rule_and_pattern(rule);
        Shown {
            blame: Blame {
                location: subject.rule_location(name),
                rule: name.to_string(),
                pattern,
                instance: at,
                pattern_instance,
            },
            fired: Some(rule.to_string()),
        }
    }
}

/// The step of simplifying `src` in `g` (a finding's shrunk case) that
/// fails alone with `failure`, judged under `cfg` (the oracle only, off
/// the backends), with the check that showed it; `fired`: the subject's
/// rules that fired on the case; `covered`: whether the subject's profile
/// covers the case, when the caller knows (its check was judged on it);
/// `tried`: the checks of rules alone made before under `cfg`, which
/// this blame's are added to.
#[allow(clippy::too_many_arguments)]
pub fn blame(
    subject: &dyn Subject,
    g: &Graph,
    src: &[NodeId],
    covered: Option<bool>,
    failure: Failure,
    fired: &[(String, usize)],
    cfg: &CheckConfig,
    instance: Instance,
    points: &[Vec<i64>],
    tried: &Tried,
) -> Option<Shown> {
    let judge = Judge::new(subject, failure, cfg, points, tried);
    let cfg = &judge.cfg;
    if let Some(simp) = subject.engine() {
        let mut traced = g.clone();
        let out = simp.simplify(&mut traced, src, true).ok()?;
        let names = simp.rule_names();
        return out.trace.iter().find_map(|f| {
            let step = Step {
                after: f.after,
                profile: subject.profile(),
            };
            let c = checks::check(&traced, &[f.before], &step, cfg, None);
            judge.fails(&c).then(|| Shown {
                blame: Blame {
                    rule: names[f.rule].clone(),
                    pattern: None,
                    instance: BlamedAt::new(traced.clone(), vec![f.before], false),
                    pattern_instance: None,
                    location: None,
                },
                fired: None,
            })
        });
    }
    // Each rule that fired, alone at the root first: one request a rule
    // names the wrong one when it rewrites the whole case (Morok applies a
    // group over the whole expression), and its instance is then the
    // innermost node it fails on alone. None is asked about a case its
    // profile does not cover.
    let profile = subject.profile();
    let covered = covered.unwrap_or_else(|| profile.covers(g, src));
    for (rule, _) in fired.iter().take(MAX_RULES).filter(|_| covered) {
        let Some(alone) = subject.rule_alone(rule) else {
            continue;
        };
        let whole = judge.check(g, src, rule, alone.as_ref(), None);
        if !judge.fails(&whole) {
            continue;
        }
        let (at, c) = match instance {
            Instance::Case => (src.to_vec(), whole),
            Instance::Smallest => smallest(&judge, rule, alone.as_ref(), g, src)
                .unwrap_or_else(|| (src.to_vec(), whole)),
        };
        let whole_case = at.as_slice() == src;
        return Some(judge.shown(subject, rule, BlamedAt::new(g.clone(), at, whole_case), &c));
    }
    // The peer's wrong step may come after sound ones rewrote the case
    // (tinygrad moves a division under a gate, then folds the gate's
    // condition into the divisor): the cases its rules make are searched
    // breadth first, each step judged alone.
    let mut frontier = vec![(g.clone(), src.to_vec())];
    let mut seen = HashSet::new();
    let mut budget = match instance {
        Instance::Smallest => MAX_STEPS,
        Instance::Case => QUICK_STEPS,
    };
    for _ in 0..MAX_DEPTH {
        let mut next = Vec::new();
        for (sg, roots) in &frontier {
            for n in innermost_first(sg, roots) {
                if !profile.covers(sg, &[n]) {
                    continue;
                }
                for (rule, _) in fired.iter().take(MAX_RULES) {
                    if budget == 0 {
                        return None;
                    }
                    budget -= 1;
                    let Some(alone) = subject.rule_alone(rule) else {
                        continue;
                    };
                    let c = judge.check(sg, &[n], rule, alone.as_ref(), None);
                    if judge.fails(&c) {
                        let at = BlamedAt::new(sg.clone(), vec![n], false);
                        return Some(judge.shown(subject, rule, at, &c));
                    }
                    let Some(&[to]) = c.tgt.as_deref() else {
                        continue;
                    };
                    if to == n || !c.ok() {
                        continue;
                    }
                    let made = judge.tried.made(sg, roots, n, rule, c, to);
                    if seen.insert(made.text) {
                        next.push((made.graph, made.roots));
                    }
                }
            }
        }
        frontier = next;
    }
    None
}

/// A rule blamed on the whole case (`b`, fired as `fired`, by
/// [`blame`] with [`Instance::Case`]) narrowed to the innermost node
/// it fails on alone: what [`Instance::Smallest`] gives, without judging
/// the rules before it at the root again. `None` where it stays the case.
pub fn narrow(
    subject: &dyn Subject,
    failure: Failure,
    cfg: &CheckConfig,
    points: &[Vec<i64>],
    b: &Blame,
    fired: Option<&str>,
    tried: &Tried,
) -> Option<Shown> {
    let judge = Judge::new(subject, failure, cfg, points, tried);
    let at = &b.instance;
    let (Some(rule), true) = (fired, at.whole_case()) else {
        return None;
    };
    let alone = subject.rule_alone(rule)?;
    let (g, src) = (at.graph(), at.roots());
    let (small, c) = smallest(&judge, rule, alone.as_ref(), g, src)?;
    let at = BlamedAt::new(g.clone(), small, false);
    Some(judge.shown(subject, rule, at, &c))
}

/// The innermost node below `src` (a case `alone` fails on, which the
/// profile covers, and so every node of it: the cover is a test of each
/// node) where `alone` (as `rule` names it) fails too, and its check
/// there. `None` where only the case itself fails: its check was made by
/// the caller.
fn smallest(
    judge: &Judge<'_>,
    rule: &str,
    alone: &dyn Subject,
    g: &Graph,
    src: &[NodeId],
) -> Option<(Vec<NodeId>, checks::Checked)> {
    innermost_first(g, src)
        .into_iter()
        .filter(|&n| src != [n])
        .find_map(|n| {
            let c = judge.check(g, &[n], rule, alone, None);
            judge.fails(&c).then(|| (vec![n], c))
        })
}

/// The operations below `roots`, innermost first: the step nearest the
/// leaves is the one that made the case wrong, where an outer rule only
/// carried it along.
fn innermost_first(g: &Graph, roots: &[NodeId]) -> Vec<NodeId> {
    g.reachable(roots)
        .into_iter()
        .filter(|&n| !matches!(g.node(n).op, Op::Var(_) | Op::Const(_) | Op::Invalid))
        .take(MAX_NODES)
        .collect()
}

/// `root` with node `from` replaced by `to` wherever it occurs.
fn replace(g: &mut Graph, root: NodeId, from: NodeId, to: NodeId) -> NodeId {
    g.rebuild(&[root], |_, n, _, _| (n == from).then_some(to))[0]
}

/// One firing of the engine's trace as a subject: its answer is the node
/// the firing made, already in the graph the check clones.
struct Step<'p> {
    after: NodeId,
    profile: &'p Profile,
}

impl Subject for Step<'_> {
    fn name(&self) -> String {
        "one step of the engine's trace".into()
    }

    fn profile(&self) -> &Profile {
        self.profile
    }

    fn rule_names(&self) -> &[String] {
        &[]
    }

    fn simplify(&self, _g: &mut Graph, _roots: &[NodeId]) -> Result<Answer, Refusal> {
        Ok(Answer::Simplified {
            roots: vec![self.after],
            counts: Vec::new(),
            patterns: Vec::new(),
            bounds: None,
        })
    }

    fn reproduce_args(&self) -> String {
        String::new()
    }
}

/// Where a peer's rule seeds are kept: in `seeds/` of the directory its
/// rules' own counterexamples go to (`corpus/peers/NAME/rules`, where
/// `prove --simplifier` writes and reads).
pub fn seeds_dir(rules_dir: &Path) -> PathBuf {
    rules_dir.join("seeds")
}

/// Keeps a blamed finding's instance as a seed of its rule in `dir`, so
/// that `prove --simplifier` judges the rule on it first (`finding`: where
/// the finding was written). A seed already kept is left as it is.
pub fn save_seed(dir: &Path, b: &Blame, finding: &str) -> io::Result<PathBuf> {
    fs::create_dir_all(dir)?;
    let instance = b.instance.text();
    let key = format!("{}\n{instance}", b.rule);
    let path = dir.join(format!("seed-{:010x}.txt", fnv1a(key.as_bytes()) >> 24));
    if !path.exists() {
        let text = format!(
            "# seed of the peer's rule below: a campaign's finding was blamed on it ({finding})\n\
             {RULE_HEADER}{}\n{instance}",
            b.rule
        );
        write_atomic(&path, &text)?;
    }
    Ok(path)
}

/// Where a seed's file names its rule.
const RULE_HEADER: &str = "# rule: ";

/// Why a rule seed could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SeedError {
    #[error("{path}: {source}")]
    Io { path: String, source: io::Error },
    #[error("{path}: no `{}NAME` line", RULE_HEADER.trim_end())]
    NoRule { path: String },
    #[error("{path}: {source}")]
    Parse {
        path: String,
        source: engine::parse::ParseError,
    },
}

/// The seeds kept in `dir` (none when it does not exist), in name order.
pub fn read_seeds(dir: &Path) -> Result<Vec<RuleSeed>, SeedError> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let io = |path: &Path| {
        let path = path.display().to_string();
        move |source| SeedError::Io { path, source }
    };
    let mut out = Vec::new();
    for path in corpus::files(dir).map_err(io(dir))? {
        let text = fs::read_to_string(&path).map_err(io(&path))?;
        let shown = path.display().to_string();
        let rule = text
            .lines()
            .find_map(|l| l.strip_prefix(RULE_HEADER))
            .ok_or_else(|| SeedError::NoRule {
                path: shown.clone(),
            })?;
        let program = engine::parse::parse_program(&text).map_err(|source| SeedError::Parse {
            path: shown,
            source,
        })?;
        out.push(RuleSeed {
            rule: rule.trim().to_string(),
            program,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subject::Engine;
    use engine::parse::parse_program;
    use engine::rewrite::Simplifier;
    use engine::rules::RuleSet;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// The built-in rules with `text` laid over them.
    fn rules_with(text: &str) -> RuleSet {
        engine::rules::builtin_with(&[("wrong.rules".into(), text.into())]).unwrap()
    }

    fn blame_of(rules: &RuleSet, case: &str, failure: Failure) -> Option<Blame> {
        let p = parse_program(case).unwrap();
        let engine = Engine::new(Simplifier::new(rules), Vec::new());
        blame(
            &engine,
            &p.graph,
            &p.outputs,
            None,
            failure,
            &[],
            &CheckConfig::default(),
            Instance::Smallest,
            &[],
            &Tried::default(),
        )
        .map(|s| s.blame)
    }

    #[test]
    fn a_wrong_engine_rule_is_blamed_by_its_own_step() {
        let rules = rules_with(
            "group wrong\n# x mod y == x (the guard forgets x < y)\nrule mod_forgets_bound: x mod y => x if vmin(y) > 0 && vmin(x) >= 0\n",
        );
        let b = blame_of(
            &rules,
            "var x in [0, 9]\nexpr (x mod 4) * 2 + 1\n",
            Failure::ValueDiffers,
        )
        .expect("the wrong rule's step fails alone");
        assert_eq!(b.rule, "mod_forgets_bound");
        assert_eq!(b.instance.text(), "var x in [0, 9]\nexpr x mod 4\n");
    }

    #[test]
    fn a_check_of_an_answer_a_known_check_compared_keeps_the_known_verdict() {
        // Wrong at one point of a million: a whole walk finds it, a
        // triage's sample of the domain's edges does not.
        let p = parse_program("var x in [0, 999999]\nexpr x + where(x == 654321, 1, 0)\n").unwrap();
        let x = p
            .graph
            .reachable(&p.outputs)
            .into_iter()
            .find(|&n| matches!(p.graph.node(n).op, Op::Var(_)))
            .unwrap();
        let profile = Profile::engine(engine::dtype::Width::W64);
        let step = |after| Step {
            after,
            profile: &profile,
        };
        let whole = CheckConfig::default().only(Kind::Oracle);
        let quick = whole.quick();
        let known = checks::check(&p.graph, &p.outputs, &step(x), &whole, None);
        assert!(known.failed(Kind::Oracle));
        assert!(checks::check(&p.graph, &p.outputs, &step(x), &quick, None).ok());
        // The same answer in a clone of the graph: the whole walk's verdict.
        let again = |after| {
            let g = p.graph.clone();
            checks::check_knowing(&g, &p.outputs, &step(after), &quick, None, Some(&known))
        };
        let same = again(x);
        assert_eq!(same.failures, known.failures);
        assert_eq!(same.oracle, known.oracle);
        // Another answer is compared anew.
        assert!(again(p.outputs[0]).ok());
    }

    /// A peer whose one rule, alone, answers a root's first operand (wrong
    /// wherever the rest mattered), counting the steps it is asked.
    #[derive(Clone, Copy)]
    struct FirstOperand<'a> {
        profile: &'a Profile,
        asked: &'a AtomicUsize,
    }

    impl Subject for FirstOperand<'_> {
        fn name(&self) -> String {
            "first operand".into()
        }

        fn rule_names(&self) -> &[String] {
            &[]
        }

        fn simplify(&self, g: &mut Graph, roots: &[NodeId]) -> Result<Answer, Refusal> {
            self.asked.fetch_add(1, Ordering::Relaxed);
            let after = g.node(roots[0]).src().first().copied().unwrap_or(roots[0]);
            let profile = self.profile;
            Step { after, profile }.simplify(g, roots)
        }

        fn rule_alone(&self, _rule: &str) -> Option<Box<dyn Subject + '_>> {
            Some(Box::new(*self))
        }

        fn profile(&self) -> &Profile {
            self.profile
        }

        fn reproduce_args(&self) -> String {
            String::new()
        }
    }

    /// Blames of `x * 2 + 1` under [`FirstOperand`] sharing `tried`, and
    /// the steps it was asked.
    fn first_operand_blames(failures: &[Failure]) -> (Vec<Option<Blame>>, usize) {
        first_operand_blames_of("var x in [0, 9]\nexpr x * 2 + 1\n", failures)
    }

    /// Blames of `case` under [`FirstOperand`] sharing `tried`, and the
    /// steps it was asked.
    fn first_operand_blames_of(case: &str, failures: &[Failure]) -> (Vec<Option<Blame>>, usize) {
        let p = parse_program(case).unwrap();
        let profile = Profile::engine(engine::dtype::Width::W64);
        let asked = AtomicUsize::new(0);
        let peer = FirstOperand {
            profile: &profile,
            asked: &asked,
        };
        let (tried, fired) = (Tried::default(), [("first".to_string(), 1)]);
        let cfg = CheckConfig::default().quick();
        let blames = failures
            .iter()
            .map(|&failure| {
                let (g, src) = (&p.graph, &p.outputs);
                let shown = blame(
                    &peer,
                    g,
                    src,
                    None,
                    failure,
                    &fired,
                    &cfg,
                    Instance::Smallest,
                    &[],
                    &tried,
                );
                shown.map(|s| s.blame)
            })
            .collect();
        (blames, asked.load(Ordering::Relaxed))
    }

    #[test]
    fn a_search_past_the_root_asks_the_root_once() {
        // Nothing fails undefined: the root, then the nodes below it and
        // the root again, are searched; the root's step is asked once.
        let (blames, asked) = first_operand_blames(&[Failure::ValidityDiffers]);
        assert_eq!(blames, [None]);
        assert_eq!(asked, 2);
    }

    #[test]
    fn a_blame_for_another_failure_asks_no_step_the_first_asked() {
        let (blames, asked) =
            first_operand_blames(&[Failure::ValueDiffers, Failure::ValidityDiffers]);
        let first = blames[0].as_ref().expect("the rule's step fails alone");
        assert_eq!(first.instance.text(), "var x in [0, 9]\nexpr x * 2\n");
        assert_eq!(blames[1], None);
        // The root and `x * 2`, by the first blame; the second, through
        // the same steps, reads them.
        assert_eq!(asked, 2);
    }

    #[test]
    fn a_search_for_another_failure_asks_no_step_of_the_cases_the_first_made() {
        // `x - 0 -> x` is sound: it makes the case `x * 2 + 1`, where both
        // steps are asked once. Nothing fails undefined, so each search
        // goes through every step; the second reads the first's.
        let case = "var x in [0, 9]\nexpr (x - 0) * 2 + 1\n";
        let (one, asked_once) = first_operand_blames_of(case, &[Failure::ValidityDiffers]);
        assert_eq!(one, [None]);
        assert_eq!(asked_once, 5);
        let twice = [Failure::ValidityDiffers, Failure::ValidityDiffers];
        let (blames, asked) = first_operand_blames_of(case, &twice);
        assert_eq!(blames, [None, None]);
        assert_eq!(asked, asked_once);
    }

    #[test]
    fn a_sound_simplification_blames_nothing() {
        let b = blame_of(
            engine::rules::builtin(),
            "var x in [0, 9]\nexpr (x mod 4) * 2 + 1\n",
            Failure::ValueDiffers,
        );
        assert_eq!(b, None);
    }

    #[test]
    fn a_seed_is_read_back_with_its_rule_and_kept_once() {
        let dir = std::env::temp_dir().join(format!("tileproof-seeds-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let p = engine::parse::parse_program(
            "var r0 in [0, 1]\nexpr 0 / where(r0 != 0, r0, invalid)\n",
        )
        .unwrap();
        let b = Blame {
            rule: "sym.12.lambda".into(),
            pattern: None,
            instance: BlamedAt::new(p.graph, p.outputs, false),
            pattern_instance: None,
            location: None,
        };
        let first = save_seed(&dir, &b, "corpus/peers/x/oracle-1.txt").unwrap();
        let again = save_seed(&dir, &b, "corpus/peers/x/oracle-2.txt").unwrap();
        assert_eq!(first, again);
        let seeds = read_seeds(&dir).unwrap();
        assert_eq!(seeds.len(), 1);
        assert_eq!(seeds[0].rule, "sym.12.lambda");
        assert_eq!(
            engine::print::expr(&seeds[0].program.graph, seeds[0].program.outputs[0]),
            "0 / where(r0 != 0, r0, invalid)"
        );
        fs::write(dir.join("seed-bad.txt"), "var x in [0, 1]\nexpr x\n").unwrap();
        assert!(matches!(read_seeds(&dir), Err(SeedError::NoRule { .. })));
        fs::remove_dir_all(&dir).unwrap();
    }
}
