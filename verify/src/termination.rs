//! Termination of a rule set: every rule must strictly decrease the
//! reduction order (`engine::rules::reduction`, stated in
//! docs/architecture.md), for every instance its guard allows.
//!
//! The engine decides what syntax can; where a rule comes down to its
//! constants (a constant that moves or is computed: `x % C => x % -C if
//! C < -1`), the decrease of the constants' ranks is proved here with Z3,
//! at every width and type instance, wherever the engine fires the rule
//! (its guard, and its computed constants defined): unsat is "terminates",
//! a model is "does not decrease" with the constants that show it, and a
//! timeout is unknown, never "terminates". A rule that does not decrease is
//! accepted only with a written justification in its file (`terminates:`),
//! shown in every report. Rules that undo each other are searched from
//! every rule that does not decrease (`engine::cycles`).

use crate::encode::{Enc, Mode, Num, Term};
use crate::query::RuleQuery;
use crate::solver::{check_within, unknown_reason};
use engine::cycles::Cycle;
use engine::rules::reduction::{self, Check, Component, RankArith};
use engine::rules::{Pat, Rule, RuleSet};
use rayon::prelude::*;
use serde::Serialize;
use std::time::Duration;
use z3::ast::Int;
use z3::{SatResult, Solver};

/// How a rule's decrease was decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// By the patterns alone.
    Syntax,
    /// By Z3, over the rule's symbolic constants.
    Solver,
}

/// A rule's termination verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum TerminationVerdict {
    /// It decreases the order, first in `component`.
    Terminates {
        #[serde(serialize_with = "component_name")]
        component: Component,
        method: Method,
    },
    /// It does not, and its file says why it stops anyway.
    Justified {
        failure: String,
        justification: String,
    },
    DoesNotDecrease {
        failure: String,
    },
    /// The solver did not settle the constants: not "terminates".
    Unknown {
        reason: String,
    },
}

fn component_name<S: serde::Serializer>(c: &Component, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(c.name())
}

impl TerminationVerdict {
    /// The verdict in words, as reports print it.
    pub fn line(&self) -> String {
        match self {
            TerminationVerdict::Terminates { component, method } => format!(
                "terminates ({component}{})",
                if *method == Method::Solver {
                    ", by Z3"
                } else {
                    ""
                }
            ),
            TerminationVerdict::Justified {
                failure,
                justification,
            } => format!("does not decrease ({failure}); justified: {justification}"),
            TerminationVerdict::DoesNotDecrease { failure } => {
                format!("does not decrease ({failure})")
            }
            TerminationVerdict::Unknown { reason } => format!("unknown ({reason})"),
        }
    }

    /// What a report says after the rule's name and the tag of a verdict
    /// that is not "terminates" (`DOES NOT DECREASE`, `JUSTIFIED`, ...).
    pub fn detail(&self) -> String {
        match self {
            TerminationVerdict::Justified {
                failure,
                justification,
            } => format!("{failure}; terminates: {justification}"),
            TerminationVerdict::DoesNotDecrease { failure } => failure.clone(),
            TerminationVerdict::Unknown { reason } => reason.clone(),
            TerminationVerdict::Terminates { component, method } => format!(
                "the order decreases in its {component}{}",
                if *method == Method::Solver {
                    " (Z3)"
                } else {
                    ""
                }
            ),
        }
    }

    /// The rule passes: it decreases the order, or its file justifies it.
    pub fn holds(&self) -> bool {
        matches!(
            self,
            TerminationVerdict::Terminates { .. } | TerminationVerdict::Justified { .. }
        )
    }
}

/// One rule's verdict.
#[derive(Clone, Debug, Serialize)]
pub struct RuleTermination {
    pub rule: String,
    #[serde(flatten)]
    pub verdict: TerminationVerdict,
}

/// A cycle, as reported.
#[derive(Clone, Debug, Serialize)]
pub struct CycleReport {
    pub rules: Vec<String>,
    pub term: String,
    /// The program the rules loop on (`None`: not confirmed).
    pub instance: Option<String>,
    pub line: String,
}

impl From<&Cycle> for CycleReport {
    fn from(c: &Cycle) -> CycleReport {
        CycleReport {
            rules: c.rules.clone(),
            term: c.term.clone(),
            instance: c.instance.clone(),
            line: c.describe(),
        }
    }
}

/// Termination of the rules checked, and the cycles they take part in.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub rules: Vec<RuleTermination>,
    pub cycles: Vec<CycleReport>,
}

impl Report {
    /// Rules that decrease the order.
    pub fn decreasing(&self) -> usize {
        self.rules
            .iter()
            .filter(|r| matches!(r.verdict, TerminationVerdict::Terminates { .. }))
            .count()
    }

    pub fn justified(&self) -> impl Iterator<Item = &RuleTermination> {
        self.rules
            .iter()
            .filter(|r| matches!(r.verdict, TerminationVerdict::Justified { .. }))
    }

    /// Rules that neither decrease nor are justified (unknown included).
    pub fn failing(&self) -> impl Iterator<Item = &RuleTermination> {
        self.rules.iter().filter(|r| !r.verdict.holds())
    }

    /// Cycles confirmed by running them: a loop.
    pub fn loops(&self) -> impl Iterator<Item = &CycleReport> {
        self.cycles.iter().filter(|c| c.instance.is_some())
    }

    /// Every rule decreases the order or is justified, and no cycle loops.
    pub fn holds(&self) -> bool {
        self.failing().next().is_none() && self.loops().next().is_none()
    }

    /// `K of N rules decrease the order`, and the rest.
    pub fn summary(&self) -> String {
        let justified = self.justified().count();
        let failing = self.failing().count();
        let loops = self.loops().count();
        format!(
            "{} of {} decrease the order{}{}{}",
            self.decreasing(),
            engine::print::count(self.rules.len(), "rule"),
            if justified > 0 {
                format!(", {justified} justified")
            } else {
                String::new()
            },
            if failing > 0 {
                format!(", {failing} do not")
            } else {
                String::new()
            },
            match (loops, self.cycles.len() - loops) {
                (0, 0) => String::new(),
                (l, 0) => format!(", {} that loop", engine::print::count(l, "cycle")),
                (l, u) => format!(
                    ", {} that loop and {u} not confirmed",
                    engine::print::count(l, "cycle")
                ),
            }
        )
    }
}

/// Z3 integers for the constants' ranks.
struct Z3Rank;

impl RankArith for Z3Rank {
    type N = Int;
    fn lit(&mut self, v: i128) -> Int {
        Int::from_i64(v as i64)
    }
    fn add(&mut self, a: &Int, b: &Int) -> Int {
        Int::add(&[a, b])
    }
    fn mul(&mut self, a: &Int, b: &Int) -> Int {
        Int::mul(&[a, b])
    }
    fn neg(&mut self, a: &Int) -> Int {
        a.unary_minus()
    }
    fn max(&mut self, a: &Int, b: &Int) -> Int {
        a.ge(b).ite(a, b)
    }
    fn min(&mut self, a: &Int, b: &Int) -> Int {
        a.le(b).ite(a, b)
    }
}

/// A constant's value as a Z3 integer (a bool constant is 0 or 1).
fn int_of(t: &Term) -> Int {
    match t {
        Term::N(Num::I(p)) => p.to_int(),
        Term::N(Num::B(b)) => b.to_int(true),
        Term::B(b) => b.ite(&Int::from_i64(1), &Int::from_i64(0)),
    }
}

/// Proves that the constants' ranks decrease wherever the rule fires, at
/// every width and type instance.
fn constants_decrease(
    rule: &Rule,
    q: &reduction::ConstantsQuery<'_>,
    widths: &[u32],
    timeout: Duration,
) -> TerminationVerdict {
    for types in rule.instances() {
        for &w in widths {
            let mut rq = RuleQuery::firing(rule, &types, Enc::new(Mode::Int, w));
            let sum = |side: &[&Pat], rq: &mut RuleQuery<'_>| -> Int {
                let mut total = Int::from_i64(0);
                for p in side {
                    let v = int_of(&rq.constant_value(p));
                    let r = reduction::constant_rank(&mut Z3Rank, &v);
                    total = Int::add(&[&total, &r]);
                }
                total
            };
            let (l, r) = (sum(&q.lhs, &mut rq), sum(&q.rhs, &mut rq));
            let solver = Solver::new();
            let fires = rq.fires.clone().expect("a query made by RuleQuery::firing");
            solver.assert(&fires);
            solver.assert(l.le(&r));
            match check_within(&solver, timeout) {
                SatResult::Unsat => {}
                SatResult::Sat => {
                    let at = solver
                        .get_model()
                        .map(|m| {
                            rq.syms
                                .iter()
                                .filter(|s| s.is_const_var)
                                .filter_map(|s| {
                                    let v = crate::encode::model_int(&m, s.val.val.num())?;
                                    Some(format!(
                                        "{} = {v}",
                                        s.name.split('#').next().unwrap_or("")
                                    ))
                                })
                                .collect::<Vec<_>>()
                                .join(", ")
                        })
                        .unwrap_or_default();
                    return TerminationVerdict::DoesNotDecrease {
                        failure: format!(
                            "constants: their ranks do not shrink at width {w}{}",
                            if at.is_empty() {
                                String::new()
                            } else {
                                format!(" ({at})")
                            }
                        ),
                    };
                }
                SatResult::Unknown => {
                    return TerminationVerdict::Unknown {
                        reason: unknown_reason(&solver, "the constants' decrease"),
                    }
                }
            }
        }
    }
    TerminationVerdict::Terminates {
        component: Component::Constants,
        method: Method::Solver,
    }
}

/// One rule's verdict: the order (syntax, then Z3 for the constants), and
/// its file's justification where it does not decrease.
pub fn check_rule(rule: &Rule, widths: &[u32], timeout: Duration) -> TerminationVerdict {
    let verdict = match reduction::check(rule) {
        Check::Decreases(component) => TerminationVerdict::Terminates {
            component,
            method: Method::Syntax,
        },
        Check::Constants(q) => constants_decrease(rule, &q, widths, timeout),
        Check::Fails(n) => TerminationVerdict::DoesNotDecrease {
            failure: n.to_string(),
        },
        Check::Undecided(reason) => TerminationVerdict::Unknown { reason },
    };
    match (verdict, &rule.terminates) {
        (TerminationVerdict::DoesNotDecrease { failure }, Some(why)) => {
            TerminationVerdict::Justified {
                failure,
                justification: why.clone(),
            }
        }
        (v, _) => v,
    }
}

/// The verdicts of `rules` (rules of `set`), and the cycles through them:
/// searched from every rule of `set` that does not decrease the order,
/// kept when they involve one of `rules`.
pub fn check(rules: &[&Rule], set: &RuleSet, widths: &[u32], timeout: Duration) -> Report {
    let all: Vec<&Rule> = set
        .rules()
        .chain(
            rules
                .iter()
                .copied()
                .filter(|r| set.rule(&r.name).is_none()),
        )
        .collect();
    // In parallel: a rule whose constants decide it takes Z3 queries, a
    // second or two over the built-in set.
    let verdicts: Vec<(&Rule, TerminationVerdict)> = all
        .par_iter()
        .map(|&r| (r, check_rule(r, widths, timeout)))
        .collect();
    let starts: Vec<&str> = verdicts
        .iter()
        .filter(|(_, v)| !matches!(v, TerminationVerdict::Terminates { .. }))
        .map(|(r, _)| r.name.as_str())
        .collect();
    let checked = |name: &str| rules.iter().any(|r| r.name == name);
    let cycles = engine::cycles::find(set, &starts)
        .iter()
        .filter(|c| c.rules.iter().any(|n| checked(n)))
        .map(CycleReport::from)
        .collect();
    Report {
        rules: rules
            .iter()
            .map(|r| RuleTermination {
                rule: r.name.clone(),
                verdict: verdicts
                    .iter()
                    .find(|(q, _)| q.name == r.name)
                    .map(|(_, v)| v.clone())
                    .expect("every rule checked has a verdict"),
            })
            .collect(),
        cycles,
    }
}
