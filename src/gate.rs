//! The soundness gate's policy: what its stages found ([`Report`]), its
//! run budget, and why it fails ([`Problem`], one per kind of failure,
//! decided on the stages' typed verdicts). `tileproof gate` runs the stages
//! and prints; whether the gate passes is decided here.

use engine::print::count;
use fuzz::campaign::Summary;
use fuzz::checks::Validation;
use fuzz::corpus::CaseReport;
use fuzz::firings::Firings;
use fuzz::generate::Generator;
use std::fmt;
use std::time::{Duration, Instant};
use verify::prove::RuleResult;
use verify::verdict::VerdictKind;

/// Everything the stages found, for the verdict and the reports.
pub struct Report {
    pub proofs: Vec<RuleResult>,
    pub prove_seconds: f64,
    pub termination: verify::termination::Report,
    pub termination_seconds: f64,
    pub cases: Vec<CaseReport>,
    pub corpus_seconds: f64,
    pub firings: Firings,
    pub campaigns: Vec<(Generator, Summary)>,
    /// ` --rules FILE` for each overlay: what a reproducing command needs.
    pub rules_args: String,
}

/// Why the gate fails: one kind of failure, with what it names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// Proofs with a verdict other than proved, as `rule@width`.
    Proofs {
        verdict: VerdictKind,
        rule_widths: Vec<String>,
    },
    /// Rules not shown to decrease the reduction order.
    NotDecreasing(Vec<String>),
    /// Rule cycles that loop, each `a -> b on `term``.
    Loops(Vec<String>),
    /// Corpus cases that failed their replay.
    CorpusCases(Vec<String>),
    /// Algorithmic firings that did not validate, by rule.
    Firings(Vec<String>),
    /// Algorithmic rules with no validated firing.
    NeverValidated(Vec<String>),
    /// Cases the simplifier could not finish in the firings stage.
    Unfinished(usize),
    /// Findings of the smoke campaigns.
    CampaignFindings(u64),
    /// Stages the run's budget did not reach.
    OutOfBudget(Vec<String>),
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Proofs {
                verdict,
                rule_widths,
            } => {
                let what = match verdict {
                    VerdictKind::Failed => "failed (counterexample)",
                    VerdictKind::Unknown => "unknown (not proved)",
                    VerdictKind::Vacuous => "vacuous",
                    VerdictKind::InternalError => {
                        "internal error (a counterexample the interpreter does not reproduce)"
                    }
                    other => other.name(),
                };
                write!(
                    f,
                    "{} {what}: {}",
                    count(rule_widths.len(), "rule-width"),
                    shorten(rule_widths)
                )
            }
            Problem::NotDecreasing(r) => write!(
                f,
                "{} not shown to decrease the order: {}",
                count(r.len(), "rule"),
                shorten(r)
            ),
            Problem::Loops(l) => write!(
                f,
                "{} that loop: {}",
                count(l.len(), "rule cycle"),
                shorten(l)
            ),
            Problem::CorpusCases(c) => write!(
                f,
                "{} failed: {}",
                count(c.len(), "corpus case"),
                shorten(c)
            ),
            Problem::Firings(r) => write!(
                f,
                "{} not validated: {}",
                count(r.len(), "algorithmic firing"),
                shorten(r)
            ),
            Problem::NeverValidated(r) => write!(
                f,
                "{} with no validated firing: {}",
                count(r.len(), "algorithmic rule"),
                shorten(r)
            ),
            Problem::Unfinished(n) => {
                write!(f, "{} the simplifier could not finish", count(*n, "case"))
            }
            Problem::CampaignFindings(n) => f.write_str(&count(*n, "campaign finding")),
            Problem::OutOfBudget(stages) => write!(f, "out of budget: {}", stages.join(", ")),
        }
    }
}

/// Proof results with the verdict `verdict`.
pub fn with_verdict(results: &[RuleResult], verdict: VerdictKind) -> usize {
    results
        .iter()
        .filter(|r| r.verdict.kind() == verdict)
        .count()
}

impl Report {
    /// Why the gate fails (empty: it passes): every proof not proved
    /// (unknown and vacuous count against it), every rule that does not
    /// terminate, every corpus case, firing and campaign finding.
    pub fn problems(&self) -> Vec<Problem> {
        let mut p = Vec::new();
        for verdict in [
            VerdictKind::Failed,
            VerdictKind::Unknown,
            VerdictKind::Vacuous,
            VerdictKind::InternalError,
        ] {
            let rule_widths: Vec<String> = self
                .proofs
                .iter()
                .filter(|x| x.verdict.kind() == verdict)
                .map(|x| format!("{}@{}", x.rule, x.width))
                .collect();
            if !rule_widths.is_empty() {
                p.push(Problem::Proofs {
                    verdict,
                    rule_widths,
                });
            }
        }
        let bad: Vec<String> = self.termination.failing().map(|t| t.rule.clone()).collect();
        if !bad.is_empty() {
            p.push(Problem::NotDecreasing(bad));
        }
        let loops: Vec<String> = self
            .termination
            .loops()
            .map(|c| format!("{} on `{}`", c.rules.join(" -> "), c.term))
            .collect();
        if !loops.is_empty() {
            p.push(Problem::Loops(loops));
        }
        let bad: Vec<String> = self
            .cases
            .iter()
            .filter(|c| !c.ok)
            .map(|c| c.path.clone())
            .collect();
        if !bad.is_empty() {
            p.push(Problem::CorpusCases(bad));
        }
        let bad: Vec<String> = self.firings.failed().map(|f| f.rule.clone()).collect();
        if !bad.is_empty() {
            p.push(Problem::Firings(bad));
        }
        let never = self.firings.unvalidated();
        if !never.is_empty() {
            p.push(Problem::NeverValidated(never));
        }
        if !self.firings.errors.is_empty() {
            p.push(Problem::Unfinished(self.firings.errors.len()));
        }
        let found: u64 = self.campaigns.iter().map(|(_, s)| s.total_findings()).sum();
        if found > 0 {
            p.push(Problem::CampaignFindings(found));
        }
        p
    }
}

/// At most eight names, then a count.
fn shorten(names: &[String]) -> String {
    if names.len() <= 8 {
        names.join(", ")
    } else {
        format!("{}, and {} more", names[..8].join(", "), names.len() - 8)
    }
}

/// The whole gate's deadline (`--budget`), if any: what is left of it, and
/// a solver call bounded by it.
#[derive(Clone, Copy)]
pub struct RunBudget(pub Option<Instant>);

impl RunBudget {
    pub fn left(self) -> Option<Duration> {
        self.0.map(|d| d.saturating_duration_since(Instant::now()))
    }

    pub fn spent(self) -> bool {
        self.left().is_some_and(|l| l.is_zero())
    }

    pub fn within(self, f: &dyn Fn() -> Validation) -> Validation {
        match self.0 {
            Some(d) => verify::solver::with_budget(d, f),
            None => f(),
        }
    }
}
