//! A peer as a [`Subject`]: simplification, backend runs, reproducers and
//! bounds requests, each sent through the pool.

use super::codec::{read_bounds, read_run, read_script, request, MAX_REQUEST_BYTES};
use super::pool::{Peer, RUN_TIMEOUT};
use crate::backend::{ReproducerSpec, Run, Script};
use crate::bounds::Bounds;
use crate::kind::Kind;
use crate::subject::{Answer, Profile, Refusal, Subject};
use engine::ir::{Graph, NodeId};
use serde_json::json;
use std::sync::atomic::Ordering;

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
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let line = request(g, roots, id, None);
        self.answer(g, roots, id, &line)
    }

    fn backends(&self) -> &[String] {
        &self.backends
    }

    fn rule_alone(&self, rule: &str) -> Option<Box<dyn Subject + '_>> {
        self.has_rules()
            .then(|| Box::new(super::RuleSubject::new(self, rule)) as Box<dyn Subject>)
    }

    fn run(
        &self,
        g: &Graph,
        roots: &[NodeId],
        backend: &str,
        points: &[Vec<i64>],
    ) -> Result<Run, Refusal> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let vars = g.reachable_vars(roots);
        let pts: Vec<Vec<i64>> = points
            .iter()
            .map(|env| vars.iter().map(|&v| env[v as usize]).collect())
            .collect();
        let line = request(
            g,
            roots,
            id,
            Some(("run", json!({"backend": backend, "points": pts}))),
        );
        let (p, answer) = self.exchange(&line, RUN_TIMEOUT.max(self.timeout))?;
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
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let vars = g.reachable_vars(roots);
        let point: Vec<i64> = vars.iter().map(|&v| spec.env[v as usize]).collect();
        let line = request(
            g,
            roots,
            id,
            Some((
                "reproducer",
                json!({"backend": spec.backend, "point": point, "expected": spec.expected,
                       "class": spec.class, "kind": spec.kind}),
            )),
        );
        let (p, answer) = self.exchange(&line, RUN_TIMEOUT.max(self.timeout))?;
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

    fn bounds(&self, g: &Graph, roots: &[NodeId]) -> Result<Option<Bounds>, Refusal> {
        if !self.bounds {
            return Ok(None);
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let line = request(g, roots, id, Some(("bounds", json!({}))));
        if line.len() > MAX_REQUEST_BYTES {
            return Ok(None);
        }
        let (p, answer) = self.exchange(&line, self.timeout)?;
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
