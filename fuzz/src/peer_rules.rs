//! A peer's own rewrite rules, checked one by one (`tileproof prove
//! --simplifier CMD`; docs/protocol.md, section 6).
//!
//! A peer whose hello says `"rules": true` lists its rules (a stable name,
//! the pattern printed and as a structured tree, its source location), builds
//! instances of a rule's left side from tileproof's pools (constants and
//! variable ranges: [`Pools`]), and applies one rule alone at the root of a
//! case (`apply`). Each instance the rule rewrites is judged like any answer
//! of a peer ([`crate::checks::check`] through [`PeerPart`], a subject
//! that *is* that one rule): the JIT oracle over its domain and SMT, under the
//! strict model first with the profile's relaxation recorded beside it; a
//! failing instance is shrunk, classified by the peer's own compiled code
//! (its `run` backends) and written to the corpus
//! ([`crate::finding::prepare_finding`], the campaigns' own path).
//!
//! Why the instances are built by the adapter: a tileproof tree does not say
//! which of the peer's nodes it stands for (tinygrad spells a negation as NEG
//! or as MUL by -1, a bool inequality as `!=` or `^`), and the pattern must
//! match the peer's node itself. tileproof owns what the instances range over
//! (the pools, their number, the seed) and everything after them.
//!
//! A rule's verdict ([`RuleVerdict`]) is never "proved" from samples: it is
//! `refuted` (an instance fails), `crashed` (the rule raised on an instance
//! that means something), `checked on N instances` (each instance walked
//! whole by the JIT or proved by SMT), `sampled` (some instance neither:
//! unknown), or `not instantiated` with the reason. Each result is also
//! given to the rule again, a few times: a rule that rewrites it back to a
//! term it already produced loops, and is reported so beside its verdict.

use crate::cause::backend::LiteralCache;
use crate::checks::{self, CheckConfig, Kind, Validator};
use crate::classify::Confirm;
use crate::confirm::Class;
use crate::finding::Preparer;
use crate::generate::RuleSeed;
use crate::peer::{from_tree, Peer, PeerPart};
use crate::subject::{Answer, Profile, Refusal, Subject};
use crate::translation::{self, Agreement, ConstantsVerdict, Translation};
use engine::dtype::DType;
use engine::ir::{Graph, NodeId};
use engine::parse::Program;
use engine::semantics::Failure;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tileproof_adapter::{Case, Empty, InstancesRequest, Instantiable, Reply, Request, VarDtype};

/// How long a `rules` or `instances` request may take (the adapter
/// introspects the peer and builds up to a few hundred instances).
const LIST_TIMEOUT: Duration = Duration::from_secs(300);

/// Why a peer's rules could not be had.
#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    #[error("{0} does not list its rules: its hello has no `\"rules\": true` (docs/protocol.md, section 6)")]
    NoCapability(String),
    #[error("{0}")]
    Refused(#[from] Refusal),
    #[error("the adapter's answer to `{request}` is not valid: {why}")]
    Malformed { request: &'static str, why: String },
    #[error("the adapter has no rule named `{name}`{hint}")]
    NoSuchRule { name: String, hint: String },
}

/// One rule of a peer, as its adapter lists it.
#[derive(Clone, Debug, Serialize)]
pub struct PeerRule {
    /// Stable across runs (tinygrad: `MATCHER.INDEX.FUNCTION`).
    pub name: String,
    /// The pattern, printed readably.
    pub pattern: String,
    /// Where it is defined (`file:line`).
    pub location: String,
    /// The function that builds its result.
    pub function: String,
    /// The pattern as a structured tree (docs/protocol.md, section 6).
    pub tree: Value,
    /// Why no instance of it can be built, when the adapter knows.
    pub not_instantiable: Option<String>,
    /// Who builds its instances.
    pub instances: InstanceSource,
    /// The rule in tileproof's DSL, when the adapter translates it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub translation: Option<Translation>,
}

/// Who builds a rule's instances: the adapter, from tileproof's pools
/// (`instances` requests), or tileproof, from its own suites and
/// generators, keeping the cases the rule rewrites (`"instances":
/// "tileproof"`: for a peer whose rules are opaque, like Morok's pattern
/// groups, closures with no pattern tree to instantiate).
pub use tileproof_adapter::InstanceSource;

fn malformed(request: &'static str, why: impl Into<String>) -> RulesError {
    RulesError::Malformed {
        request,
        why: why.into(),
    }
}

/// The peer's rules, in its order.
pub fn list(peer: &Peer) -> Result<Vec<PeerRule>, RulesError> {
    if !peer.has_rules() {
        return Err(RulesError::NoCapability(peer.name()));
    }
    let r = peer.ask(
        Request {
            rules: Some(Empty {}),
            ..Request::default()
        },
        LIST_TIMEOUT,
    )?;
    rules_of(&r)
}

/// A refusal of a `rules` or `instances` request, as the reason it is not
/// a valid answer to it.
fn refused(request: &'static str, r: &Reply) -> Result<(), RulesError> {
    match r.error.as_ref().or(r.unsupported.as_ref()) {
        Some(e) => Err(malformed(
            request,
            format!("it answered {}", Value::from(e.as_str())),
        )),
        None => Ok(()),
    }
}

/// The rules a `rules` answer lists.
pub(crate) fn rules_of(r: &Reply) -> Result<Vec<PeerRule>, RulesError> {
    refused("rules", r)?;
    let items = r
        .rules
        .as_ref()
        .ok_or_else(|| malformed("rules", "no `rules` list"))?;
    let mut out: Vec<PeerRule> = Vec::new();
    for r in items {
        if out.iter().any(|o| o.name == r.name) {
            return Err(malformed(
                "rules",
                format!("two rules are named `{}`", r.name),
            ));
        }
        out.push(PeerRule {
            name: r.name.clone(),
            pattern: r.pattern.clone(),
            location: r.location.clone(),
            function: r.function.clone(),
            tree: r.tree.clone(),
            not_instantiable: match &r.instantiable {
                Instantiable::Yes => None,
                Instantiable::No(why) => Some(why.clone()),
            },
            instances: r.instances,
            translation: r.translation.clone(),
        });
    }
    Ok(out)
}

/// The rules named (all of them when none are), in the peer's order.
pub fn select<'a>(
    rules: &'a [PeerRule],
    names: &[String],
) -> Result<Vec<&'a PeerRule>, RulesError> {
    if names.is_empty() {
        return Ok(rules.iter().collect());
    }
    for n in names {
        if !rules.iter().any(|r| &r.name == n) {
            let close: Vec<&str> = rules
                .iter()
                .map(|r| r.name.as_str())
                .filter(|r| r.contains(n.as_str()) || n.contains(r.split('.').next().unwrap_or("")))
                .take(5)
                .collect();
            return Err(RulesError::NoSuchRule {
                name: n.clone(),
                hint: if close.is_empty() {
                    String::new()
                } else {
                    format!(" (did you mean {}?)", close.join(", "))
                },
            });
        }
    }
    Ok(rules.iter().filter(|r| names.contains(&r.name)).collect())
}

/// What instances range over: tileproof's constant and range pools.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pools {
    pub constants: Vec<i64>,
    /// Inclusive `[lo, hi]` ranges for index variables.
    pub ranges: Vec<(i64, i64)>,
}

impl Default for Pools {
    /// Zero, ±1, small divisors and their multiples (so that some divide
    /// and some do not), powers of two, and the edges of 32 and 64 bits;
    /// ranges that start at 0, cross zero, are negative, are a single
    /// point, and sit at 2^31 and near ±2^62.
    fn default() -> Pools {
        let p31 = 1i64 << 31;
        let p62 = 1i64 << 62;
        Pools {
            constants: vec![
                0,
                1,
                -1,
                2,
                -2,
                3,
                -3,
                4,
                -4,
                5,
                6,
                7,
                8,
                -8,
                12,
                16,
                24,
                32,
                64,
                100,
                255,
                256,
                1024,
                65536,
                p31 - 1,
                p31,
                -p31,
                p62,
            ],
            ranges: vec![
                (0, 0),
                (0, 1),
                (0, 3),
                (0, 7),
                (1, 8),
                (0, 15),
                (-1, 0),
                (-4, 3),
                (-8, -1),
                (-3, 3),
                (2, 10),
                (-20, 20),
                (0, 100),
                (-128, 127),
                (p31 - 8, p31 + 8),
                (-p62, -p62 + 7),
                (p62 - 7, p62),
            ],
        }
    }
}

/// The instances an adapter built for one rule, and why the attempts that
/// gave none failed (reason -> count).
#[derive(Clone, Default)]
pub struct Instances {
    pub programs: Vec<Program>,
    pub failures: BTreeMap<String, u64>,
}

/// Asks the peer for up to `limit` instances of `rule` from `pools`.
pub fn instances(
    peer: &Peer,
    rule: &str,
    pools: &Pools,
    limit: usize,
    seed: u64,
) -> Result<Instances, RulesError> {
    let req = InstancesRequest {
        rule: rule.to_string(),
        constants: pools.constants.clone(),
        ranges: pools.ranges.clone(),
        limit,
        seed,
    };
    let r = peer.ask(
        Request {
            instances: Some(req),
            ..Request::default()
        },
        LIST_TIMEOUT,
    )?;
    instances_of(&r)
}

/// The instances an `instances` answer holds.
pub(crate) fn instances_of(r: &Reply) -> Result<Instances, RulesError> {
    refused("instances", r)?;
    let items = r
        .instances
        .as_ref()
        .ok_or_else(|| malformed("instances", "no `instances` list"))?;
    let mut out = Instances::default();
    for it in items {
        // One bad instance is the adapter's bug, counted; the others stand.
        match instance_program(it) {
            Ok(p) => out.programs.push(p),
            Err(why) => {
                *out.failures
                    .entry(format!("the adapter's instance is not valid ({why})"))
                    .or_default() += 1
            }
        }
    }
    for (k, n) in r.failures.iter().flatten() {
        out.failures.insert(k.clone(), *n);
    }
    Ok(out)
}

/// Candidates drawn for a rule whose instances tileproof builds: the
/// suites' cases first (the shapes the peers' rules were written for),
/// then generated ones, cycling through the generators; each projected
/// onto the peer's profile and split into one program per expression.
const DRAWN_CANDIDATES: usize = 4000;

/// Up to `limit` candidate instances for a rule that tileproof
/// instantiates itself: [`DRAWN_CANDIDATES`] cases of its suites and
/// generators, in the peer's input language; the rule's `apply` keeps
/// those it rewrites.
pub fn drawn(profile: &Profile, limit: usize, seed: u64) -> Instances {
    use crate::generate::{Case, Generator};
    let mut out = Instances::default();
    let push = |g: &Graph, roots: &[NodeId], out: &mut Instances| {
        let (pg, proots) = profile.project(g, roots);
        for &r in &proots {
            if out.programs.len() >= limit {
                return;
            }
            if !profile.covers(&pg, &[r]) {
                *out.failures
                    .entry("outside the peer's input language".into())
                    .or_default() += 1;
                continue;
            }
            let text = engine::print::program(&pg, &[r]);
            match engine::parse::parse_program(&text) {
                Ok(p) => out.programs.push(p),
                Err(e) => {
                    *out.failures
                        .entry(format!("does not read back: {e}"))
                        .or_default() += 1
                }
            }
        }
    };
    for (_, _, p) in crate::suite::seeds() {
        push(&p.graph, &p.outputs, &mut out);
    }
    let mut k = 0u64;
    // Bounded even if every generated case fell outside the input language.
    while out.programs.len() < limit && k < 4 * limit as u64 {
        let g = Generator::ALL[(k % Generator::ALL.len() as u64) as usize];
        let case = Case::from_seed(g, seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ k);
        push(&case.graph, &case.roots, &mut out);
        k += 1;
    }
    out
}

/// [`drawn`] with [`DRAWN_CANDIDATES`], computed once per profile and seed:
/// every rule of a run tries the same candidates.
fn drawn_once(profile: &Profile, seed: u64) -> Instances {
    type Cached = Option<(Profile, u64, Instances)>;
    static CACHE: std::sync::Mutex<Cached> = std::sync::Mutex::new(None);
    let mut c = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    match &*c {
        Some((p, s, inst)) if p == profile && *s == seed => inst.clone(),
        _ => {
            let inst = drawn(profile, DRAWN_CANDIDATES, seed);
            *c = Some((profile.clone(), seed, inst.clone()));
            inst
        }
    }
}

/// Seeds for a campaign's seeded generator: up to `per_rule` instances of
/// each of `rules` that can be instantiated, from the default pools. A rule
/// whose instances the adapter cannot build gives none (it is reported by
/// `prove --simplifier`, not here); a failed request fails the whole.
pub fn rule_seeds(
    peer: &Peer,
    rules: &[PeerRule],
    per_rule: usize,
    seed: u64,
) -> Result<Vec<RuleSeed>, RulesError> {
    let pools = Pools::default();
    let mut out = Vec::new();
    for r in rules
        .iter()
        .filter(|r| r.not_instantiable.is_none() && r.instances == InstanceSource::Adapter)
    {
        let inst = instances(peer, &r.name, &pools, per_rule, seed)?;
        out.extend(inst.programs.into_iter().map(|program| RuleSeed {
            rule: r.name.clone(),
            program,
        }));
    }
    Ok(out)
}

/// Per rule (`names`, with its fire counts over a campaign): whether an
/// input tileproof can express can match it, as measured: it fired, or one
/// of its instances (`seeds`) is in the peer's input language.
pub fn reachable(
    names: &[String],
    fired: &[u64],
    seeds: &[RuleSeed],
    profile: &Profile,
) -> Vec<bool> {
    names
        .iter()
        .zip(fired)
        .map(|(n, &count)| {
            count > 0
                || seeds
                    .iter()
                    .any(|s| &s.rule == n && profile.covers(&s.program.graph, &s.program.outputs))
        })
        .collect()
}

/// One instance (`{"vars": [...], "trees": [tree]}`) as a program.
fn instance_program(it: &Case) -> Result<Program, String> {
    let mut g = Graph::new();
    for v in &it.vars {
        let dtype = match &v.dtype {
            VarDtype::Bool => DType::Bool,
            VarDtype::Index => DType::Index,
            VarDtype::Other(other) => return Err(format!("var `{}` has dtype `{other}`", v.name)),
        };
        g.declare_var(&v.name, dtype, v.lo, v.hi)
            .map_err(|e| e.to_string())?;
    }
    let [tree] = &it.trees[..] else {
        return Err("an instance is one tree".into());
    };
    let root = from_tree(&mut g, tree).map_err(|e| e.to_string())?;
    Ok(Program {
        graph: g,
        outputs: vec![root],
        expects: Vec::new(),
        header: Vec::new(),
        constraints: Vec::new(),
        expect_constraints: None,
    })
}

/// How the rules are checked.
#[derive(Clone, Debug)]
pub struct Options {
    /// Instances asked for per rule.
    pub instances: usize,
    pub seed: u64,
    pub pools: Pools,
    /// How each instance is judged.
    pub check: CheckConfig,
    /// Which of the peer's backends classify a kept finding.
    pub confirm: Confirm,
    /// Failing instances per rule that are shrunk, classified and written.
    pub max_findings: usize,
    pub shrink_steps: usize,
    /// Where counterexamples are written (`corpus/peers/NAME/rules`).
    pub corpus: Option<PathBuf>,
    /// Instances kept from campaign findings blamed on a rule
    /// ([`crate::blame`]): judged before the adapter's own.
    pub seeds: Vec<RuleSeed>,
    /// Check each rule's translation (where the adapter gives one) against
    /// the rule on its instances ([`crate::translation`]), for the proof
    /// for every constant that follows.
    pub translations: bool,
}

/// A rule's verdict.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum RuleVerdict {
    /// Some instance's result does not refine it.
    Refuted {
        failing: usize,
        classes: Classes,
    },
    /// The rule raised (or hung) on an instance that means something.
    Crashed {
        crashing: usize,
    },
    /// Every instance judged was walked whole by the JIT or proved by SMT.
    Checked {
        instances: usize,
    },
    /// Some instance was only sampled (the SMT check unknown): not proved.
    Sampled {
        instances: usize,
        proved: usize,
    },
    NotInstantiated {
        why: String,
    },
}

impl RuleVerdict {
    pub fn word(&self) -> &'static str {
        match self {
            RuleVerdict::Refuted { .. } => "refuted",
            RuleVerdict::Crashed { .. } => "crashed",
            RuleVerdict::Checked { .. } => "checked",
            RuleVerdict::Sampled { .. } => "sampled",
            RuleVerdict::NotInstantiated { .. } => "not instantiated",
        }
    }
}

/// The classes of a refuted rule's failing oracle and validator findings,
/// in the order met (`None`: not classified on the peer's backend); in
/// reports, their names (`unclassified` for `None`).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Classes(pub Vec<Option<Class>>);

impl Classes {
    pub fn names(&self) -> Vec<&'static str> {
        self.0
            .iter()
            .map(|c| c.map_or("unclassified", Class::name))
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for Classes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.names().serialize(s)
    }
}

/// A failing instance, as kept.
#[derive(Clone, Debug, Serialize)]
pub struct RuleFinding {
    /// The failed check.
    pub kind: Kind,
    /// Its class by the peer's compiled code, with what showed it.
    pub class: Option<Class>,
    pub backend: Option<String>,
    /// The (shrunk) instance and the rule's result, as text.
    pub instance: String,
    pub result: String,
    /// One line: what failed.
    pub message: String,
    pub relaxed: Option<String>,
    /// What the peer's whole simplifier does with the same instance: a
    /// rule unsound alone may be shadowed by an earlier rule in the peer's
    /// own order (its pipeline never lets it see such an instance).
    pub whole: Option<String>,
    /// The corpus file written, and its reproduce line.
    pub file: Option<String>,
    pub reproduce: Option<String>,
    pub note: Option<String>,
    /// How the oracle's answer failed (for ordering by severity).
    #[serde(skip)]
    pub failure: Option<Failure>,
}

/// What checking one rule found.
#[derive(Clone, Debug, Serialize)]
pub struct RuleReport {
    pub rule: PeerRule,
    /// Instances the adapter built, with the seeds.
    pub built: usize,
    /// Of those: seeds kept from campaign findings blamed on the rule.
    #[serde(skip_serializing_if = "is_zero")]
    pub seeds: usize,
    /// Instances the rule rewrote and whose result was judged.
    pub judged: usize,
    /// Of those: walked whole by the JIT, proved by SMT (not walked whole).
    pub exhaustive: usize,
    pub smt: usize,
    pub failing: usize,
    pub crashing: usize,
    /// Instances the rule did not rewrite, or whose result has no
    /// tileproof form, by reason; and why attempts built no instance.
    pub skipped: BTreeMap<String, usize>,
    pub build_failures: BTreeMap<String, u64>,
    pub findings: Vec<RuleFinding>,
    /// Instances whose result the rule, applied to it again, rewrites
    /// back to a term it had already produced; the first one's terms.
    pub looping: usize,
    pub loop_example: Option<String>,
    #[serde(flatten)]
    pub verdict: RuleVerdict,
    /// How the rule's translation fared on its instances (when checked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agreement: Option<Agreement>,
    /// The verdict for every constant (when asked for): set here where the
    /// instances settle it (no translation, one that disagrees), by the
    /// proof otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub constants: Option<ConstantsVerdict>,
    pub seconds: f64,
}

impl RuleReport {
    fn new(rule: &PeerRule, verdict: RuleVerdict) -> RuleReport {
        RuleReport {
            rule: rule.clone(),
            built: 0,
            seeds: 0,
            judged: 0,
            exhaustive: 0,
            smt: 0,
            failing: 0,
            crashing: 0,
            skipped: BTreeMap::new(),
            build_failures: BTreeMap::new(),
            findings: Vec::new(),
            looping: 0,
            loop_example: None,
            verdict,
            agreement: None,
            constants: None,
            seconds: 0.0,
        }
    }

    /// The verdict in words: `refuted: 3 of 32 instances fail (trap (x86))`,
    /// and whether the rule loops on its own results.
    pub fn verdict_line(&self) -> String {
        let verdict = self.soundness_line();
        match &self.loop_example {
            Some(terms) => format!(
                "{verdict}; LOOPS on {} of {}: {terms}",
                self.looping,
                engine::print::count(self.judged, "instance")
            ),
            None => verdict,
        }
    }

    fn soundness_line(&self) -> String {
        match &self.verdict {
            RuleVerdict::Refuted { failing, classes } => format!(
                "refuted: {failing} of {} fail{}",
                engine::print::count(self.judged, "instance"),
                if classes.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", classes.names().join(", "))
                }
            ),
            RuleVerdict::Crashed { crashing } => format!(
                "crashed: raised on {crashing} of {} (peer-crash)",
                engine::print::count(self.judged, "instance")
            ),
            RuleVerdict::Checked { instances } => format!(
                "checked on {} ({} exhaustive, {} by SMT)",
                engine::print::count(*instances, "instance"),
                self.exhaustive,
                self.smt
            ),
            RuleVerdict::Sampled { instances, proved } => format!(
                "sampled, not proved: {proved} of {} walked whole or proved by SMT",
                engine::print::count(*instances, "instance")
            ),
            RuleVerdict::NotInstantiated { why } => format!("not instantiated ({why})"),
        }
    }
}

/// The most frequent reasons of a count map, for a message.
fn top_reasons<V: Copy + Into<u64>>(m: &BTreeMap<String, V>, n: usize) -> String {
    let mut v: Vec<(&String, u64)> = m.iter().map(|(k, c)| (k, (*c).into())).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    v.iter()
        .take(n)
        .map(|(k, c)| format!("{c}x {k}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Checks one rule: asks for its instances, applies it alone to each,
/// judges each result, and keeps the failing instances (shrunk, classified,
/// written to `opts.corpus`).
pub fn check_rule(
    peer: &Peer,
    rule: &PeerRule,
    opts: &Options,
    validator: Option<&Validator<'_>>,
) -> RuleReport {
    let start = Instant::now();
    let mut rep = check_rule_inner(peer, rule, opts, validator);
    if rep.constants.is_none() && rep.agreement.is_none() {
        // A rule with no instance to judge: its translation (if any)
        // cannot be checked against it, and says so.
        translated_rules(rule, opts, &mut rep);
    }
    rep.seconds = start.elapsed().as_secs_f64();
    rep
}

fn check_rule_inner(
    peer: &Peer,
    rule: &PeerRule,
    opts: &Options,
    validator: Option<&Validator<'_>>,
) -> RuleReport {
    if let Some(why) = &rule.not_instantiable {
        return RuleReport::new(rule, RuleVerdict::NotInstantiated { why: why.clone() });
    }
    let drawing = rule.instances == InstanceSource::Tileproof;
    let inst = if drawing {
        drawn_once(peer.profile(), opts.seed)
    } else {
        match instances(peer, &rule.name, &opts.pools, opts.instances, opts.seed) {
            Ok(i) => i,
            Err(e) => {
                return RuleReport::new(
                    rule,
                    RuleVerdict::NotInstantiated {
                        why: format!("the adapter built no instance: {e}"),
                    },
                )
            }
        }
    };
    // A campaign's instance of the rule comes first: it failed once.
    let mut inst = inst;
    let seeded: Vec<Program> = opts
        .seeds
        .iter()
        .filter(|s| s.rule == rule.name)
        .map(|s| s.program.clone())
        .collect();
    let seeds = seeded.len();
    inst.programs.splice(0..0, seeded);
    let mut rep = RuleReport::new(rule, RuleVerdict::NotInstantiated { why: String::new() });
    rep.seeds = seeds;
    rep.built = inst.programs.len();
    rep.build_failures = inst.failures.clone();
    let subject = PeerPart::rule(peer, &rule.name);
    let translated = translated_rules(rule, opts, &mut rep);
    let model = peer.profile().model();
    let compare_cfg = crate::oracle::OracleConfig {
        partial: model.partial,
        unbounded: model.unbounded,
        ..opts.check.oracle()
    };
    // Judged without the backends first: only the kept findings are run
    // there (each costs the peer's compiler several runs).
    let fast = opts.check.clone();
    let mut failing: Vec<(usize, Program, Kind, Option<Failure>)> = Vec::new();
    for (k, p) in inst.programs.iter().enumerate() {
        // Drawn candidates are many: enough once the rule rewrote as many
        // as an adapter would have built.
        if drawing && rep.judged >= opts.instances {
            rep.built = k;
            break;
        }
        let c = checks::check(&p.graph, &p.outputs, &subject, &fast, validator);
        if let (Some(rules), Some(a)) = (&translated, rep.agreement.as_mut()) {
            translation::compare(rules, &c, &compare_cfg, a);
        }
        if let Some(why) = &c.unsupported {
            *rep.skipped.entry(checks::short(why)).or_default() += 1;
            continue;
        }
        rep.judged += 1;
        if let Some(terms) = reapplied(&subject, &c) {
            rep.looping += 1;
            rep.loop_example.get_or_insert(terms);
        }
        if let Some(f) = c.failures.first() {
            match f.kind {
                Kind::PeerError | Kind::Crash | Kind::Hang | Kind::Garbage => rep.crashing += 1,
                _ => rep.failing += 1,
            }
            let how = c.oracle.as_ref().and_then(|o| o.failure.as_ref());
            failing.push((k, p.clone(), f.kind, how.map(|f| f.failure)));
            continue;
        }
        let verdict = c.validation.as_ref().map(|v| v.verdict);
        if c.oracle.as_ref().is_some_and(|o| o.exhaustive_pass())
            || verdict == Some(checks::ValidationVerdict::EquivalentByEnumeration)
        {
            rep.exhaustive += 1;
        } else if matches!(
            verdict,
            Some(checks::ValidationVerdict::Equivalent | checks::ValidationVerdict::Vacuous)
        ) {
            rep.smt += 1;
        }
    }
    // The soundness failures first, the most severe first, then the
    // crashes.
    failing.sort_by_key(|(k, _, kind, how)| {
        (
            !matches!(kind, Kind::Oracle | Kind::Validate),
            how.map_or(0, severity),
            *k,
        )
    });
    // Kept findings are distinct after shrinking (two instances often
    // shrink to one case); a few more are tried to find distinct ones. A
    // seed (a campaign finding's instance) is always tried, and kept past
    // `max_findings` when it shows a class no kept one does: the rule's
    // report has a counterexample of each class its campaigns found.
    let tries = opts.max_findings.saturating_mul(3);
    let rc = RuleCheck {
        peer,
        rule,
        opts,
        validator,
        subject: &subject,
        fast: &fast,
    };
    for (i, (k, p, kind, _)) in failing.iter().enumerate() {
        let seed = *k < rep.seeds;
        let room = rep.findings.len() < opts.max_findings;
        if !seed && (i >= tries || !room) {
            continue;
        }
        let at = Instance {
            k: *k,
            program: p,
            kind: *kind,
        };
        let Some(f) = kept_finding(&rc, at, &rep.findings) else {
            continue;
        };
        if room || !rep.findings.iter().any(|x| x.class == f.class) {
            rep.findings.push(f);
        }
    }
    // The most severe counterexample first: a bug the peer's compiled
    // code shows, then by how the answer fails (a wrong value or a trap
    // before a validity difference on a masked lane).
    rep.findings.sort_by_key(|f| {
        (
            !f.class.is_some_and(Class::is_bug),
            f.failure.map_or(0, severity),
        )
    });
    rep.verdict = verdict(&rep, drawing);
    if let Some(d) = rep.agreement.as_ref().and_then(|a| a.disagreement.clone()) {
        rep.constants = Some(ConstantsVerdict::TranslationDisagrees { disagreement: d });
    }
    rep
}

/// The rule's translation as DSL rules, where one is to be checked; where
/// it is not translatable (or its text does not read), the verdict for
/// every constant says so in `rep`.
fn translated_rules(
    rule: &PeerRule,
    opts: &Options,
    rep: &mut RuleReport,
) -> Option<Vec<engine::rules::Rule>> {
    if !opts.translations {
        return None;
    }
    let why = match &rule.translation {
        None => "the adapter gives no translation".to_string(),
        Some(Translation::Untranslatable(why)) => why.clone(),
        Some(Translation::Rules(texts)) => match translation::parse(texts) {
            Ok(rules) => {
                rep.agreement = Some(Agreement::default());
                return Some(rules);
            }
            Err(e) => e.to_string(),
        },
    };
    rep.constants = Some(ConstantsVerdict::NotTranslatable { why });
    None
}

/// A counterexample of the rule's translation, as an instance: the peer's
/// rule applied alone to it and judged like any instance. Its failure, kept
/// (shrunk, classified on the peer's backends, written to the corpus), or
/// why the rule does not fail there.
///
/// The counterexample is tried as the prover wrote it, then projected onto
/// the peer's profile where it is outside it (a bool variable the peer has
/// not becomes a comparison), then each with its variables widened
/// ([`crate::widen`]: a peer whose rules read bounds may settle a point
/// range before the rule under test runs). Only a failure of the peer's
/// rule refutes; where none fails, the reasons are the first of the prover's
/// case and of its projection.
pub fn judge_refutation(
    peer: &Peer,
    rule: &PeerRule,
    opts: &Options,
    validator: Option<&Validator<'_>>,
    program: &Program,
) -> Result<RuleFinding, String> {
    let profile = peer.profile();
    let mut bases = vec![program.clone()];
    if !profile.covers(&program.graph, &program.outputs) {
        let (graph, outputs) = profile.project(&program.graph, &program.outputs);
        if let Ok(p) = engine::parse::parse_program(&engine::print::program(&graph, &outputs)) {
            bases.push(p);
        }
    }
    // Each base's first reason: the prover's own case is often outside
    // the profile, and why its projection fails is the telling one.
    let mut reasons: Vec<String> = Vec::new();
    let mut tried = 0;
    for b in &bases {
        let mut first = None;
        for p in std::iter::once(b.clone()).chain(crate::widen::variants(b, opts.check.width)) {
            tried += 1;
            match judge_one(peer, rule, opts, validator, &p) {
                Ok(f) => return Ok(f),
                Err(why) => {
                    first.get_or_insert(why);
                }
            }
        }
        reasons.extend(first);
    }
    let why = reasons.join("; in the peer's profile: ");
    Err(if tried > 1 {
        format!(
            "{why} (and on {} with wider variables or in the peer's profile)",
            engine::print::count(tried - 1, "variant")
        )
    } else {
        why
    })
}

fn judge_one(
    peer: &Peer,
    rule: &PeerRule,
    opts: &Options,
    validator: Option<&Validator<'_>>,
    program: &Program,
) -> Result<RuleFinding, String> {
    let subject = PeerPart::rule(peer, &rule.name);
    let c = checks::check(
        &program.graph,
        &program.outputs,
        &subject,
        &opts.check,
        validator,
    );
    if c.declined {
        return Err(format!(
            "the peer's rule does not fire on it ({})",
            c.unsupported
                .as_deref()
                .map_or_else(|| "declined".to_string(), checks::short)
        ));
    }
    if let Some(why) = &c.unsupported {
        return Err(format!("the peer cannot judge it ({})", checks::short(why)));
    }
    let Some(f) = c.failures.first() else {
        return Err("the peer's rule fires and its result refines it".into());
    };
    let at = Instance {
        k: 0,
        program,
        kind: f.kind,
    };
    let rc = RuleCheck {
        peer,
        rule,
        opts,
        validator,
        subject: &subject,
        fast: &opts.check,
    };
    kept_finding(&rc, at, &[]).ok_or_else(|| "it shrank to nothing new".to_string())
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// How severe a failure is, most severe lowest: a wrong value or an
/// undefined target where the source means something, before a validity
/// difference (often a masked lane nothing reads).
fn severity(f: Failure) -> u8 {
    match f {
        Failure::ValueDiffers | Failure::TargetUndefined => 0,
        Failure::ValidityDiffers => 1,
    }
}

/// A failing instance: its number, program and the kind of its failure.
struct Instance<'p> {
    k: usize,
    program: &'p Program,
    kind: Kind,
}

/// A rule being checked, as its failing instances are kept: the peer, the
/// rule and the rule alone as the subject, the options, and the check its
/// instances were judged with (`fast`).
struct RuleCheck<'a> {
    peer: &'a Peer,
    rule: &'a PeerRule,
    opts: &'a Options,
    validator: Option<&'a Validator<'a>>,
    subject: &'a PeerPart<'a>,
    fast: &'a CheckConfig,
}

/// A failing instance shrunk keeping its kind, classified on the peer's
/// backends and written to the corpus (`opts.corpus`), as reported; `None`
/// when it shrank to an instance and result already `kept`.
fn kept_finding(rc: &RuleCheck<'_>, at: Instance<'_>, kept: &[RuleFinding]) -> Option<RuleFinding> {
    let RuleCheck {
        peer,
        rule,
        opts,
        validator,
        subject,
        fast,
    } = *rc;
    let Instance {
        k,
        program: p,
        kind,
    } = at;
    let origin = format!(
        "peer rule {} ({}), instance {k} of seed {}",
        rule.name, rule.location, opts.seed
    );
    let literals = LiteralCache::default();
    let preparer = Preparer {
        subject,
        check: &opts.check,
        confirm: &opts.confirm,
        validator,
        shrink_steps: opts.shrink_steps,
        deadline: None,
        literals: &literals,
    };
    let prep = preparer.prepare_one(p, kind, origin);
    let e = &prep.entry;
    let instance = e
        .body
        .lines()
        .filter(|l| !l.starts_with("expect"))
        .collect::<Vec<_>>()
        .join("; ");
    let result = e
        .body
        .lines()
        .filter_map(|l| l.strip_prefix("expect "))
        .collect::<Vec<_>>()
        .join("; ");
    if kept
        .iter()
        .any(|f| f.instance == instance && f.result == result)
    {
        return None;
    }
    let mut f = RuleFinding {
        kind,
        class: e.class.as_ref().map(|c| c.class),
        backend: e.class.as_ref().map(|c| c.header()),
        instance,
        result,
        message: checks::one_line(&e.message),
        relaxed: e.relaxed.clone(),
        whole: whole_simplifier(peer, &e.body, fast),
        file: None,
        reproduce: None,
        note: prep.note.clone(),
        failure: prep.failure,
    };
    if let Some(dir) = &opts.corpus {
        match crate::corpus::save(dir, e) {
            Ok(saved) => {
                f.reproduce = Some(crate::corpus::replay_line(&e.reproduce_args, &saved.path));
                f.file = Some(saved.path.display().to_string());
            }
            Err(err) => f.note = Some(format!("not written: {err}")),
        }
    }
    Some(f)
}

/// A rule's verdict from what its instances showed.
fn verdict(rep: &RuleReport, drawing: bool) -> RuleVerdict {
    let mut classes = Classes::default();
    for f in rep
        .findings
        .iter()
        .filter(|f| matches!(f.kind, Kind::Oracle | Kind::Validate))
    {
        if !classes.0.contains(&f.class) {
            classes.0.push(f.class);
        }
    }
    if rep.failing > 0 {
        RuleVerdict::Refuted {
            failing: rep.failing,
            classes,
        }
    } else if rep.crashing > 0 {
        RuleVerdict::Crashed {
            crashing: rep.crashing,
        }
    } else if rep.judged == 0 {
        let why = if rep.built == 0 {
            format!(
                "no instance could be built: {}",
                top_reasons(&rep.build_failures, 3)
            )
        } else {
            format!(
                "the rule rewrote none of the {} {}: {}",
                engine::print::count(rep.built, "instance"),
                if drawing {
                    "tileproof drew from its suites and generators"
                } else {
                    "built"
                },
                top_reasons(
                    &rep.skipped
                        .iter()
                        .map(|(k, v)| (k.clone(), *v as u64))
                        .collect(),
                    3
                )
            )
        };
        RuleVerdict::NotInstantiated { why }
    } else if rep.exhaustive + rep.smt == rep.judged {
        RuleVerdict::Checked {
            instances: rep.judged,
        }
    } else {
        RuleVerdict::Sampled {
            instances: rep.judged,
            proved: rep.exhaustive + rep.smt,
        }
    }
}

/// How many times an instance's result is given to its rule again.
const REAPPLY: usize = 3;

/// The rule applied to its own result again, up to [`REAPPLY`] times: the
/// terms it went through (`a -> b -> a`) when it came back to one it had
/// already produced, i.e. it loops. A result equal to the term the rule
/// was given (as tileproof reads it) is not a change, so not a loop; nor
/// is a cycle whose terms differ only in how an associative chain is
/// ordered and grouped: tileproof reads every term into its own canonical
/// operand order, so a peer rule that sorts a chain its own way would seem
/// to loop on each one.
fn reapplied(subject: &PeerPart<'_>, c: &checks::Checked) -> Option<String> {
    let (&first, &src) = (c.tgt.as_ref()?.first()?, c.src.first()?);
    if first == src {
        return None;
    }
    let mut g = c.graph.clone();
    let mut seen = vec![src, first];
    for _ in 0..REAPPLY {
        let cur = *seen.last().expect("two terms at least");
        let Ok(Answer::Simplified { roots, .. }) = subject.simplify(&mut g, &[cur]) else {
            return None;
        };
        let next = *roots.first()?;
        // A term the rule leaves as it is (as tileproof reads it: Morok's
        // groups rebuild a term they do not change) is a fixed point.
        if next == cur {
            return None;
        }
        let back = seen.contains(&next);
        seen.push(next);
        let reordered = || {
            let key = chain_key(&g, src);
            seen.iter().all(|&n| chain_key(&g, n) == key)
        };
        if back && reordered() {
            return None;
        }
        if back {
            // Whole: the cycle is the finding (instances are small).
            let terms: Vec<String> = seen.iter().map(|&n| engine::print::expr(&g, n)).collect();
            return Some(terms.join(" -> "));
        }
    }
    None
}

/// A term's text up to the order and grouping of its associative chains
/// (`+ * min max & && || ^`: the commutative ops but the comparisons).
fn chain_key(g: &Graph, n: NodeId) -> String {
    engine::deep::grow(|| {
        let node = g.node(n);
        if node.src().is_empty() {
            return engine::print::expr(g, n);
        }
        let chain = node.op.is_commutative() && !node.op.is_comparison();
        let parts = if chain {
            g.chain_operands(n, node.op, usize::MAX).0
        } else {
            node.src().to_vec()
        };
        let mut keys: Vec<String> = parts.iter().map(|&p| chain_key(g, p)).collect();
        if chain {
            keys.sort();
        }
        format!("{}:{}({})", node.op.name(), node.dtype, keys.join(","))
    })
}

/// The peer's whole simplifier on a finding's instance (its `expr` lines),
/// judged like the rule's result (no backend): one line.
fn whole_simplifier(peer: &Peer, body: &str, cfg: &CheckConfig) -> Option<String> {
    let p = engine::parse::parse_program(body).ok()?;
    let c = checks::check(&p.graph, &p.outputs, peer, cfg, None);
    let answer = c.tgt.as_ref().map(|t| {
        t.iter()
            .map(|&r| checks::short_expr(&c.graph, r))
            .collect::<Vec<_>>()
            .join(", ")
    });
    Some(match (c.unsupported, c.failures.first(), answer) {
        (Some(why), _, _) => format!(
            "the peer's simplifier as a whole declines it ({})",
            checks::short(&why)
        ),
        (None, Some(f), Some(a)) => format!(
            "the peer's simplifier as a whole answers {a}, which fails too: {}",
            checks::short(&f.message)
        ),
        (None, Some(f), None) => format!(
            "the peer's simplifier as a whole fails too: {}",
            checks::short(&f.message)
        ),
        (None, None, Some(a)) => format!(
            "the peer's simplifier as a whole answers {a}, which refines it: the rule's bug does not show through it on this instance"
        ),
        (None, None, None) => return None,
    })
}

/// Counts over every rule checked.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RulesSummary {
    pub rules: usize,
    /// Rules that rewrote at least one instance.
    pub fired: usize,
    pub instantiated: usize,
    pub refuted: usize,
    pub checked: usize,
    pub not_instantiated: usize,
    pub crashed: usize,
    pub sampled: usize,
    pub instances: usize,
    pub exhaustive: usize,
    pub smt: usize,
    pub failing: usize,
    /// Rules that rewrite some result of theirs back (they loop).
    pub looping: usize,
}

impl RulesSummary {
    pub fn of(reports: &[RuleReport]) -> RulesSummary {
        let mut s = RulesSummary {
            rules: reports.len(),
            ..RulesSummary::default()
        };
        for r in reports {
            match r.verdict {
                RuleVerdict::Refuted { .. } => s.refuted += 1,
                RuleVerdict::Crashed { .. } => s.crashed += 1,
                RuleVerdict::Checked { .. } => s.checked += 1,
                RuleVerdict::Sampled { .. } => s.sampled += 1,
                RuleVerdict::NotInstantiated { .. } => s.not_instantiated += 1,
            }
            if r.judged > 0 {
                s.fired += 1;
            }
            s.instances += r.judged;
            s.exhaustive += r.exhaustive;
            s.smt += r.smt;
            s.failing += r.failing;
            s.looping += usize::from(r.looping > 0);
        }
        s.instantiated = s.rules - s.not_instantiated;
        s
    }

    /// Everything held: no rule refuted, crashed, only sampled or looping.
    pub fn holds(&self) -> bool {
        self.refuted + self.crashed + self.sampled + self.looping == 0
    }

    /// `peer rules: M, instantiated N, refuted K, checked C, not
    /// instantiated U, ...`
    pub fn line(&self) -> String {
        format!(
            "peer rules: {} ({} fired, {} never fired), instantiated {}, refuted {}, checked {}, not instantiated {}, crashed {}, sampled {}, looping {}; {} judged ({} exhaustive, {} by SMT, {} failing)",
            self.rules,
            self.fired,
            self.rules - self.fired,
            self.instantiated,
            self.refuted,
            self.checked,
            self.not_instantiated,
            self.crashed,
            self.sampled,
            self.looping,
            engine::print::count(self.instances, "instance"),
            self.exhaustive,
            self.smt,
            self.failing
        )
    }
}
