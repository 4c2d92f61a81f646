//! A part of a peer as a simplifier of its own: one of its rules alone, at
//! the root (the protocol's `apply` request, docs/protocol.md section 6),
//! or its pipeline up to one of its stages (the `stage` request, "Pipeline
//! stages"). `prove --simplifier` judges a rule through it, a campaign's
//! finding is blamed on the rule whose step, applied alone, fails the same
//! way ([`crate::blame`]), and judging each stage says where in a pipeline
//! (MLIR's canonicalize: construct, parse, the pass) a wrong answer first
//! appears.

use super::Peer;
use crate::backend::{ReproducerSpec, Run, Script};
use crate::subject::{shell_quote, Answer, Profile, Refusal, Subject};
use engine::ir::{Graph, NodeId};
use tileproof_adapter::{ApplyRequest, Request};

/// Which part of the peer.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    /// One rule, by the name its `rules` answer lists.
    Rule(String),
    /// The pipeline up to and including this stage of its hello's `stages`.
    Stage(String),
}

/// A part of a peer as a simplifier: only how a case is simplified is the
/// part's; everything else (profile, backends) is the peer's.
pub struct PeerPart<'p> {
    peer: &'p Peer,
    part: Part,
}

impl<'p> PeerPart<'p> {
    /// The peer's rule `rule` alone, at the root.
    pub fn rule(peer: &'p Peer, rule: &str) -> PeerPart<'p> {
        PeerPart {
            peer,
            part: Part::Rule(rule.to_string()),
        }
    }

    /// The peer's pipeline up to and including its stage `stage`.
    pub fn stage(peer: &'p Peer, stage: &str) -> PeerPart<'p> {
        PeerPart {
            peer,
            part: Part::Stage(stage.to_string()),
        }
    }
}

impl Subject for PeerPart<'_> {
    fn name(&self) -> String {
        match &self.part {
            Part::Rule(rule) => format!("{} rule {rule}", self.peer.name()),
            Part::Stage(_) => self.peer.name(),
        }
    }

    fn profile(&self) -> &Profile {
        self.peer.profile()
    }

    fn rule_names(&self) -> &[String] {
        // A rule's or a stage's answer may say which of the peer's rules
        // fired (a Morok group applied alone names its patterns): its
        // counts are indexed like the peer's.
        self.peer.rule_names()
    }

    fn simplify(&self, g: &mut Graph, roots: &[NodeId]) -> Result<Answer, Refusal> {
        match &self.part {
            Part::Rule(_) if roots.len() != 1 => Ok(Answer::Unsupported(format!(
                "a rule applies to one expression, this case has {}",
                roots.len()
            ))),
            // The rule applied alone at the root (an `apply` request): its
            // result, or `Declined` when it does not rewrite it.
            Part::Rule(rule) => self.peer.ask_part(g, roots, |req| Request {
                apply: Some(ApplyRequest { rule: rule.clone() }),
                ..req
            }),
            // The expressions after the stage (a `stage` request).
            Part::Stage(stage) => self.peer.ask_part(g, roots, |req| Request {
                stage: Some(stage.clone()),
                ..req
            }),
        }
    }

    fn reproduce_args(&self) -> String {
        let (option, name) = match &self.part {
            Part::Rule(rule) => ("--peer-rule", rule),
            Part::Stage(stage) => ("--peer-stage", stage),
        };
        format!(
            "{}{option} {} ",
            self.peer.reproduce_args(),
            shell_quote(name)
        )
    }

    fn backends(&self) -> &[String] {
        self.peer.backends()
    }

    fn run(
        &self,
        g: &Graph,
        roots: &[NodeId],
        backend: &str,
        points: &[Vec<i64>],
    ) -> Result<Run, Refusal> {
        self.peer.run(g, roots, backend, points)
    }

    fn reproducer(
        &self,
        _g: &Graph,
        _roots: &[NodeId],
        _spec: &ReproducerSpec,
    ) -> Result<Option<Script>, Refusal> {
        // The peer's reproducer runs its whole simplifier, not this part:
        // the case's reproduce line (`--peer-rule`, `--peer-stage`) is the
        // reproducer.
        Ok(None)
    }
}
