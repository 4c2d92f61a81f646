//! A finding's cause: the defect a maintainer acts on.
//!
//! A campaign against a buggy simplifier finds the same defect in many
//! clothes. Grouped by the shape of each finding, one wrong transfer
//! function of a range analysis becomes a hundred causes; grouped by the
//! rule that made the wrong step, a right rule that trusted a wrong bound
//! takes the blame. A [`Cause`] names the code that is wrong, found layer
//! by layer ([`triage`]): the peer's range analysis (the transfer function
//! of the lowest node whose bound excludes a value it takes, when the
//! answer is right wherever the bounds hold: [`transfer`]), a pipeline
//! stage (the first whose output fails: [`stage`]), a rule (whose step
//! fails alone: [`crate::blame`]), the peer's backend (a construct its
//! compiled code gets wrong: [`backend`]), a crash site or a loop
//! ([`site`]), a hang; and when none of these can be named, the innermost
//! subterm the simplifier gets wrong alone, or the finding's shape.
//!
//! A cause has one stable text, its [`Cause::key`]: what a corpus header
//! records (`# cause:`), what buckets a campaign's findings, and what
//! `tileproof report` files a report under. [`Cause::parse`] reads it back.

pub mod backend;
pub mod crash;
pub mod found;
pub mod implied;
pub mod introduced;
pub mod misread;
pub mod site;
pub mod stage;
pub mod subterm;
pub mod transfer;
pub mod triage;
pub mod wrapped;

use crate::checks::{CheckConfig, Checked};
use crate::kind::Kind;
use crate::subject::Subject;
use backend::LiteralCache;
use engine::ir::op::Family;
use engine::semantics::{Failure, Ub};
use found::Found;
use std::fmt;

/// The cause of a `model-only` finding: the part of tileproof's model its
/// peer's compiled code does not share (the undefined behaviour the model
/// saw in the answer, else how the model's answer failed).
pub fn model_only(checked: &Checked) -> Option<Cause> {
    let c = checked.class.as_ref()?;
    if c.class != crate::confirm::Class::ModelOnly {
        return None;
    }
    let failing = checked.oracle.as_ref().and_then(|o| o.failure.as_ref());
    let ub = failing
        .and_then(|f| f.replay.as_ref())
        .and_then(|r| r.tgt.as_ref().err())
        .map(|u| u.reason);
    Some(Cause::Model(match (ub, failing) {
        (Some(ub), _) => ub.to_string(),
        (None, Some(f)) => f.failure.to_string(),
        (None, None) => "bounds".to_string(),
    }))
}

/// The cause a checked case's `kind` failure is filed under: the backend
/// when its classified finding is one its compiled code gets wrong, else
/// what [`triage`] finds (`checked` must have been checked with the
/// peer's bounds asked, and classified when it is a peer's).
pub fn attribute(
    subject: &dyn Subject,
    checked: &Checked,
    kind: Kind,
    cfg: &CheckConfig,
    literals: &LiteralCache,
) -> Found {
    if let Some(cause) = backend::of_classified(subject, checked, cfg.width, literals)
        .or_else(|| model_only(checked))
    {
        return Found::just(cause);
    }
    match checked.failure(kind) {
        Some(f) => triage::triage(subject, checked, f, cfg, triage::Depth::Full),
        None => Found::just(triage::shape_of(checked, kind)),
    }
}

/// What a peer's backend compiles wrongly.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Construct {
    /// An integer literal: compiled in every context probed, it does not
    /// mean its value (a C renderer writing `i64::MIN` as
    /// `-9223372036854775808LL`, an unsigned literal negated).
    Literal(i64),
    /// An operation (tileproof's name for it): a node whose compiled value
    /// differs from its meaning where it is defined while its operands'
    /// compiled values are right.
    Op(String),
}

impl fmt::Display for Construct {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Construct::Literal(c) => write!(f, "literal {c}"),
            Construct::Op(op) => write!(f, "op {op}"),
        }
    }
}

/// What the bound a pipeline stage folded with was of ([`Cause::Implied`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BoundOf {
    /// A node of this op (tileproof's name), nodes that change nothing
    /// looked through.
    Op(String),
    /// A numerator whose values pass 64 bits over the integers: a bound
    /// computed in 64-bit arithmetic wraps there, whichever op is on top.
    Overflow,
}

impl BoundOf {
    /// Its text in a cause's key: the op, or `overflow`.
    const OVERFLOW: &'static str = "overflow";

    fn parse(s: &str) -> BoundOf {
        match s {
            BoundOf::OVERFLOW => BoundOf::Overflow,
            op => BoundOf::Op(op.to_string()),
        }
    }
}

impl std::fmt::Display for BoundOf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BoundOf::Op(op) => f.write_str(op),
            BoundOf::Overflow => f.write_str(BoundOf::OVERFLOW),
        }
    }
}

/// How a blamed rule's step is wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fault {
    /// Its answer takes another value or lane than its source.
    Wrong,
    /// Its answer is undefined where its source is not: an overflow or a
    /// division by zero it brings in with no check.
    Undefined,
}

impl Fault {
    /// The fault of a step that fails with `failure`.
    pub fn of(failure: Failure) -> Fault {
        match failure {
            Failure::TargetUndefined => Fault::Undefined,
            Failure::ValueDiffers | Failure::ValidityDiffers => Fault::Wrong,
        }
    }

    /// What a key adds after the rule's name.
    const UNDEFINED_KEY: &'static str = " introduces UB";
}

/// The defect a finding is filed under.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Cause {
    /// A rule of the simplifier: its step, applied alone, fails the way the
    /// finding does, and not only where the peer's bounds are wrong. A rule
    /// that computes a wrong answer and one that brings in an overflow or
    /// a division by zero are two defects (two fixes), so `fault` is part
    /// of the cause.
    Rule { rule: String, fault: Fault },
    /// A transfer function of the peer's range analysis, by the peer's op
    /// (`MUL`; tileproof's op name when the peer does not say): the bound
    /// of a node of that op excludes a value the node takes while its
    /// operands' bounds hold.
    Transfer(String),
    /// A range analysis the peer does not expose, read from a later
    /// pipeline stage's folds: the stage folded a quotient or remainder as
    /// if its numerator, of `op`, stayed in a bound it leaves
    /// ([`implied`]: MLIR's bound of a `mod`), or whose values pass 64
    /// bits (a bound computed in wrapping arithmetic: MLIR's flattened
    /// sum). Not keyed by the stage: the stages of a peer fold with its
    /// one range analysis (MLIR's `canonicalize` and
    /// `affine-simplify-structures` both ask `getBoundForAffineExpr`), so
    /// the stage is where the defect showed, not what is wrong.
    Implied(BoundOf),
    /// The peer's backend: its compiled code gets a construct wrong.
    Backend {
        backend: String,
        construct: Construct,
    },
    /// A stage of the peer's pipeline (MLIR's construction, before any
    /// pass): the first whose output fails, and the innermost subterm it
    /// gets wrong alone (its linear forms abstracted:
    /// [`crate::bucket::linear_shape`]).
    Stage { stage: String, subterm: String },
    /// The innermost subterm the simplifier gets wrong alone (its linear
    /// forms abstracted: [`crate::bucket::linear_shape`]) and how the
    /// answer fails: a peer with neither rules nor stages to blame. An
    /// answer undefined where the source is not (a rewrite that overflows)
    /// and one of another value (a wrong fold) are two defects of one
    /// shape.
    Subterm { failure: Failure, shape: String },
    /// A rewrite with no check for undefined behaviour: the answer for the
    /// innermost subterm the simplifier gets wrong brings in `ub` where
    /// the source has none, and is right once that is taken away. An
    /// index overflow: the answer overflows at a node it built and is
    /// right computed wide (TVM's rewrites that move a constant in int32),
    /// or a constant the rewrite computed wraps ([`wrapped`]: folded from
    /// the source's, or at the type's edge). A division by zero or bad
    /// shift: in a lane the answer does not select (a guard dropped in an
    /// eager `where`). Keyed by the undefined behaviour, not by the
    /// subterm's shape; where it shows is the finding's `how`.
    Introduced { ub: Ub },
    /// A rewrite that reads a division family as another: the answer for
    /// the innermost subterm the simplifier gets wrong equals, over its
    /// whole domain, the subterm with its `read` divisions (quotients and
    /// remainders) taken as another family's ([`misread`]: TVM's
    /// comparison folding, which splits a truncating remainder as if it
    /// floored; Morok's gcd of a quotient, which rounds a truncating one
    /// down or up). Keyed by the family misread, not by the subterm's
    /// shape; the family it was read as is the finding's `how`.
    Misread { read: Family },
    /// The peer raised, panicked or died: where (a panic's `file:line`, an
    /// exception's innermost frame and type).
    Crash(String),
    /// The peer's rewriting does not stop: the rules of the cycle.
    Loop(Vec<String>),
    /// The peer did not answer in time.
    Hang,
    /// No defect of the peer: its compiled code computes the source's
    /// values where tileproof's model flagged the answer (a `model-only`
    /// finding), by the part of the model that differs (`index overflow`
    /// that wraps, a division the optimiser removed, ...).
    Model(String),
    /// What is left: the failure and the shrunk case's shape (names and
    /// constants abstracted), tileproof's own checks (ranges, lowering,
    /// idempotence) among them.
    Shape(String),
}

impl Cause {
    /// The cause's one stable text: `rule NAME`, `transfer OP`, `implied OP`, `backend
    /// NAME literal C`, `backend NAME op OP`, `stage NAME: SHAPE`,
    /// `subterm FAILURE: SHAPE`, `introduced UB`, `misread FAMILY`, `crash SITE`, `loop R1, R2`, `hang`, `shape TEXT`.
    pub fn key(&self) -> String {
        match self {
            Cause::Rule {
                rule,
                fault: Fault::Wrong,
            } => format!("rule {rule}"),
            Cause::Rule {
                rule,
                fault: Fault::Undefined,
            } => format!("rule {rule}{}", Fault::UNDEFINED_KEY),
            Cause::Transfer(op) => format!("transfer {op}"),
            Cause::Implied(bound) => format!("implied {bound}"),
            Cause::Backend { backend, construct } => format!("backend {backend} {construct}"),
            Cause::Stage { stage, subterm } => format!("stage {stage}: {subterm}"),
            Cause::Subterm { failure, shape } => format!("subterm {}: {shape}", failure.name()),
            Cause::Introduced { ub } => format!("introduced {ub}"),
            Cause::Misread { read } => format!("misread {read}"),
            Cause::Crash(site) => format!("crash {site}"),
            Cause::Loop(rules) => format!("loop {}", rules.join(", ")),
            Cause::Hang => "hang".into(),
            Cause::Model(part) => format!("model {part}"),
            Cause::Shape(s) => format!("shape {s}"),
        }
    }

    /// Reads a [`Cause::key`] back.
    pub fn parse(key: &str) -> Option<Cause> {
        let (head, rest) = key.split_once(' ').unwrap_or((key, ""));
        let rest = rest.to_string();
        Some(match head {
            "rule" if !rest.is_empty() => match rest.strip_suffix(Fault::UNDEFINED_KEY) {
                Some(rule) if !rule.is_empty() => Cause::Rule {
                    rule: rule.to_string(),
                    fault: Fault::Undefined,
                },
                _ => Cause::Rule {
                    rule: rest,
                    fault: Fault::Wrong,
                },
            },
            "transfer" if !rest.is_empty() => Cause::Transfer(rest),
            // `implied STAGE: BOUND` is how a corpus before the stage
            // left the key spelled it.
            "implied" if !rest.is_empty() => Cause::Implied(BoundOf::parse(
                rest.split_once(": ")
                    .map_or(rest.as_str(), |(_, bound)| bound),
            )),
            "backend" => {
                let (backend, construct) = rest.split_once(' ')?;
                let construct = match construct.split_once(' ')? {
                    ("literal", c) => Construct::Literal(c.parse().ok()?),
                    ("op", op) => Construct::Op(op.to_string()),
                    _ => return None,
                };
                Cause::Backend {
                    backend: backend.to_string(),
                    construct,
                }
            }
            "stage" => {
                let (stage, subterm) = rest.split_once(": ")?;
                Cause::Stage {
                    stage: stage.to_string(),
                    subterm: subterm.to_string(),
                }
            }
            "subterm" => {
                let (failure, shape) = rest.split_once(": ")?;
                Cause::Subterm {
                    failure: *Failure::ALL.iter().find(|f| f.name() == failure)?,
                    shape: shape.to_string(),
                }
            }
            "introduced" => Cause::Introduced {
                ub: *Ub::ALL.iter().find(|u| u.to_string() == rest)?,
            },
            "misread" => Cause::Misread {
                read: Family::PAIRED.into_iter().find(|f| f.name() == rest)?,
            },
            "crash" if !rest.is_empty() => Cause::Crash(rest),
            "loop" if !rest.is_empty() => {
                Cause::Loop(rest.split(", ").map(str::to_string).collect())
            }
            "hang" if rest.is_empty() => Cause::Hang,
            "model" if !rest.is_empty() => Cause::Model(rest),
            "shape" if !rest.is_empty() => Cause::Shape(rest),
            _ => return None,
        })
    }

    /// The layer the defect is in, for reports and summaries.
    pub fn layer(&self) -> Layer {
        match self {
            Cause::Rule { .. } => Layer::Rule,
            Cause::Transfer(_) | Cause::Implied(_) => Layer::RangeAnalysis,
            Cause::Backend { .. } => Layer::Backend,
            Cause::Stage { .. } => Layer::Stage,
            Cause::Subterm { .. }
            | Cause::Introduced { .. }
            | Cause::Misread { .. }
            | Cause::Shape(_) => Layer::Unattributed,
            Cause::Crash(_) => Layer::Crash,
            Cause::Loop(_) => Layer::Loop,
            Cause::Hang => Layer::Hang,
            Cause::Model(_) => Layer::Model,
        }
    }

    /// One line naming what is wrong, for a summary or a report's title.
    pub fn describe(&self) -> String {
        match self {
            Cause::Rule {
                rule,
                fault: Fault::Wrong,
            } => format!("rule {rule} rewrites wrongly"),
            Cause::Rule {
                rule,
                fault: Fault::Undefined,
            } => format!(
                "rule {rule} brings an overflow or a division by zero into an answer whose source has none"
            ),
            Cause::Transfer(op) => format!(
                "the range analysis's bounds of {op} exclude values the node takes while its operands' bounds hold"
            ),
            Cause::Implied(BoundOf::Overflow) => "a stage folds with a bound computed in wrapping arithmetic: the values it bounds pass 64 bits".to_string(),
            Cause::Implied(BoundOf::Op(op)) => format!(
                "a stage folds as if a value of {op} stayed in a bound it leaves: the range analysis's bound of {op} (read from its folds)"
            ),
            Cause::Backend { backend, construct } => {
                format!("the {backend} backend compiles {construct} wrongly")
            }
            Cause::Stage { stage, subterm } => {
                format!("stage {stage} already gets {subterm} wrong")
            }
            Cause::Subterm { failure, shape } => {
                format!("the simplifier gets {shape} wrong ({})", failure.name())
            }
            Cause::Introduced { ub } => format!(
                "a rewrite brings {ub} into an answer whose source has none, and is otherwise right"
            ),
            Cause::Misread { read } => format!(
                "a rewrite reads {read} division and remainder as another rounding: its answer is right for that one"
            ),
            Cause::Crash(site) => format!("the simplifier crashes at {site}"),
            Cause::Loop(rules) => format!("rewriting loops through {}", rules.join(", ")),
            Cause::Hang => "the simplifier does not answer in time".into(),
            Cause::Model(part) => format!(
                "not the peer's: its compiled code computes the source's values where tileproof's model flags {part}"
            ),
            Cause::Shape(s) => format!("unattributed: {s}"),
        }
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.key())
    }
}

impl serde::Serialize for Cause {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.key())
    }
}

/// Where in a peer a defect is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Layer {
    Rule,
    RangeAnalysis,
    Backend,
    Stage,
    Crash,
    Loop,
    Hang,
    /// tileproof's model, not the peer.
    Model,
    Unattributed,
}

impl Layer {
    pub fn name(self) -> &'static str {
        match self {
            Layer::Rule => "rule",
            Layer::RangeAnalysis => "range analysis",
            Layer::Backend => "backend",
            Layer::Stage => "pipeline stage",
            Layer::Crash => "crash",
            Layer::Loop => "loop",
            Layer::Hang => "hang",
            Layer::Model => "tileproof's model",
            Layer::Unattributed => "unattributed",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cause_reads_back_from_its_key() {
        let causes = [
            Cause::Rule {
                rule: "symbolic.84.fold_where_closure".into(),
                fault: Fault::Wrong,
            },
            Cause::Rule {
                rule: "range_based_mod_div_patterns/Binary(Mod)#6".into(),
                fault: Fault::Undefined,
            },
            Cause::Transfer("MUL".into()),
            Cause::Implied(BoundOf::Op("mod".into())),
            Cause::Implied(BoundOf::Overflow),
            Cause::Backend {
                backend: "clang".into(),
                construct: Construct::Literal(i64::MIN),
            },
            Cause::Backend {
                backend: "x86".into(),
                construct: Construct::Op("neg".into()),
            },
            Cause::Stage {
                stage: "construct".into(),
                subterm: "(v0 + v1) // C".into(),
            },
            Cause::Subterm {
                failure: Failure::TargetUndefined,
                shape: "v0 // C * C".into(),
            },
            Cause::Introduced {
                ub: Ub::IndexOverflow,
            },
            Cause::Introduced { ub: Ub::DivByZero },
            Cause::Misread {
                read: Family::Trunc,
            },
            Cause::Crash("morok-schedule/src/symbolic/divmod.rs:464".into()),
            Cause::Loop(vec!["a".into(), "b".into()]),
            Cause::Hang,
            Cause::Model("index overflow".into()),
            Cause::Shape("oracle value-differs: v0 % C".into()),
        ];
        for c in causes {
            assert_eq!(Cause::parse(&c.key()), Some(c.clone()), "{}", c.key());
        }
        assert_eq!(Cause::parse("rule"), None);
        assert_eq!(Cause::parse("backend clang literal x"), None);
    }
}
