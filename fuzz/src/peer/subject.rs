//! A peer as a [`Subject`]: simplification, backend runs, reproducers and
//! bounds requests, each sent through the pool.

use super::codec::{read_bounds, read_run, read_script, MAX_REQUEST_BYTES};
use super::pool::{Peer, RUN_TIMEOUT};
use crate::backend::{self, ReproducerSpec, Run, Script};
use crate::bounds::PeerBounds;
use crate::kind::Kind;
use crate::subject::{Answer, Profile, Refusal, Subject};
use engine::ir::{Graph, NodeId};
use tileproof_adapter::{Empty, ReproducerRequest, Request, RunRequest, RunValue};

impl Subject for Peer {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn profile(&self) -> &Profile {
        &self.profile
    }

    fn rule_names(&self) -> &[String] {
        &self.rule_names
    }

    fn simplify(&self, g: &mut Graph, roots: &[NodeId]) -> Result<Answer, Refusal> {
        if !self.bounds {
            return self.ask_case(g, roots, |req| req);
        }
        // Its bounds of the source come beside the answer, for the bounds
        // check that follows (one round trip, not two).
        let (id, case, sent) = self.request_about(g, roots, |req, _| Request {
            with_bounds: Some(Empty {}),
            ..req
        });
        self.answer_beside(g, roots, case.budget, id, &sent, true, None)
    }

    fn printed(&self, g: &Graph, roots: &[NodeId], exprs: Vec<String>) {
        self.cases.printed(g, roots, exprs);
    }

    fn backends(&self) -> &[String] {
        &self.backends
    }

    fn rule_location(&self, rule: &str) -> Option<String> {
        let i = self.rule_names.iter().position(|n| n == rule)?;
        self.rule_locations
            .get(i)
            .filter(|l| !l.is_empty())
            .cloned()
    }

    fn rule_alone(&self, rule: &str) -> Option<Box<dyn Subject + '_>> {
        // A rule its adapter says no input can reach alone (Morok's private
        // groups run only inside their tier) is not asked.
        let reachable = match self.rule_names.iter().position(|n| n == rule) {
            Some(i) => self.rule_reachable.get(i).copied().unwrap_or(true),
            None => true,
        };
        (self.rules && reachable)
            .then(|| Box::new(super::PeerPart::rule(self, rule)) as Box<dyn Subject>)
    }

    fn stages(&self) -> &[String] {
        &self.stages
    }

    fn stage(&self, name: &str) -> Option<Box<dyn Subject + '_>> {
        self.stages
            .iter()
            .any(|s| s == name)
            .then(|| Box::new(super::PeerPart::stage(self, name)) as Box<dyn Subject>)
    }

    fn run(
        &self,
        g: &Graph,
        roots: &[NodeId],
        backend: &str,
        points: &[Vec<i64>],
    ) -> Result<Run, Refusal> {
        let (id, _, sent) = self.request_about(g, roots, |req, case| Request {
            run: Some(RunRequest {
                backend: backend.to_string(),
                points: points
                    .iter()
                    .map(|env| case.vars.iter().map(|&v| env[v as usize]).collect())
                    .collect(),
            }),
            ..req
        });
        let (p, answer) = self.exchange(&sent, RUN_TIMEOUT.max(self.timeout))?;
        match read_run(&answer, id, roots.len(), points.len()) {
            Ok(Ok(run)) => {
                self.give_back(p);
                Ok(run)
            }
            Ok(Err(e)) => {
                self.give_back(p);
                Err(Refusal {
                    kind: Kind::PeerError,
                    message: format!("the adapter failed to run it on {backend}: {e}"),
                })
            }
            Err(why) => Err(self.garbage(p, why, &answer)),
        }
    }

    fn reproducer(
        &self,
        g: &Graph,
        roots: &[NodeId],
        spec: &ReproducerSpec,
    ) -> Result<Option<Script>, Refusal> {
        if !self.reproducer {
            return Ok(None);
        }
        // The wire's values are 64-bit: a source whose expected values do
        // not fit gets no reproducer.
        let Some(expected) = spec.expected.iter().map(run_value).collect() else {
            return Ok(None);
        };
        let (id, _, sent) = self.request_about(g, roots, |req, case| Request {
            reproducer: Some(ReproducerRequest {
                backend: spec.backend.clone(),
                point: case.vars.iter().map(|&v| spec.env[v as usize]).collect(),
                expected,
                class: spec.class.clone(),
                kind: spec.kind.clone(),
            }),
            ..req
        });
        let (p, answer) = self.exchange(&sent, RUN_TIMEOUT.max(self.timeout))?;
        match read_script(&answer, id) {
            Ok(script) => {
                self.give_back(p);
                script.map(Some).map_err(|e| Refusal {
                    kind: Kind::PeerError,
                    message: format!("the adapter wrote no reproducer: {e}"),
                })
            }
            Err(why) => Err(self.garbage(p, why, &answer)),
        }
    }

    fn reproduce_args(&self) -> String {
        format!("--simplifier {} ", crate::subject::shell_quote(&self.cmd))
    }

    fn bounds(&self, g: &Graph, roots: &[NodeId]) -> Result<Option<PeerBounds>, Refusal> {
        if !self.bounds {
            return Ok(None);
        }
        let (id, _, text) = self.request_about(g, roots, |req, _| Request {
            bounds: Some(Empty {}),
            ..req
        });
        if text.len() > MAX_REQUEST_BYTES {
            return Ok(None);
        }
        let (p, answer) = self.exchange(&text, self.timeout)?;
        match read_bounds(&answer, id) {
            Ok(Ok(b)) => {
                self.give_back(p);
                Ok(b)
            }
            Ok(Err(e)) => {
                self.give_back(p);
                Err(Refusal {
                    kind: Kind::PeerError,
                    message: format!("the peer failed to give its bounds: {e}"),
                })
            }
            Err(why) => Err(self.garbage(p, why, &answer)),
        }
    }
}

/// A value of tileproof's semantics as the wire writes it, when it fits.
fn run_value(v: &backend::Value) -> Option<RunValue> {
    Some(match *v {
        backend::Value::Int(i) => RunValue::Int(i64::try_from(i).ok()?),
        backend::Value::Bool(b) => RunValue::Bool(b),
        backend::Value::Invalid => RunValue::Invalid,
    })
}
