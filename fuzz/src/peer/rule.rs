//! One rule of a peer, alone, as a simplifier: the protocol's `apply`
//! request (docs/protocol.md, section 6). `prove --simplifier` judges a rule
//! through it, and a campaign's finding is blamed on the rule whose step,
//! applied alone, fails the same way ([`crate::blame`]).

use super::Peer;
use crate::backend::{ReproducerSpec, Run, Script};
use crate::subject::{shell_quote, Answer, Profile, Refusal, Subject};
use engine::ir::{Graph, NodeId};

/// One rule of a peer as a simplifier: its `apply` request, alone, at the
/// root. Everything else (profile, backends) is the peer's.
pub struct RuleSubject<'p> {
    peer: &'p Peer,
    rule: String,
}

impl<'p> RuleSubject<'p> {
    pub fn new(peer: &'p Peer, rule: &str) -> RuleSubject<'p> {
        RuleSubject {
            peer,
            rule: rule.to_string(),
        }
    }
}

impl Subject for RuleSubject<'_> {
    fn name(&self) -> String {
        format!("{} rule {}", self.peer.name(), self.rule)
    }

    fn profile(&self) -> &Profile {
        self.peer.profile()
    }

    fn rule_names(&self) -> &[String] {
        &[]
    }

    fn simplify(&self, g: &mut Graph, roots: &[NodeId]) -> Result<Answer, Refusal> {
        if roots.len() != 1 {
            return Ok(Answer::Unsupported(format!(
                "a rule applies to one expression, this case has {}",
                roots.len()
            )));
        }
        self.peer.apply(&self.rule, g, roots)
    }

    fn reproduce_args(&self) -> String {
        format!(
            "{}--peer-rule {} ",
            self.peer.reproduce_args(),
            shell_quote(&self.rule)
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
        // The peer's reproducer runs its whole simplifier, not this rule:
        // the case's reproduce line (`--peer-rule`) is the reproducer.
        Ok(None)
    }
}
