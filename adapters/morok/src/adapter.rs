//! The adapter: Morok's entry points behind tileproof's protocol.

use crate::backend;
use crate::bounds;
use crate::convert::{self, VarMode, VarPlan, plan_vars, to_tree};
use crate::divmod_steps;
use crate::entry::{Entry, MOROK_VERSION};
use crate::groups::{GROUPS, PRIVATE, PRIVATE_GROUPS, Tracker};
use crate::lower;
use crate::morok_source;
use crate::patterns;
use crate::reproducer;
use crate::translate;
use morok_ir::UOp;
use morok_ir::pattern::RewriteResult;
use morok_schedule::graph_rewrite;
use std::path::PathBuf;
use std::sync::Arc;
use tileproof_adapter::{
    Adapter, Case, Dtype, Exprs, Hello, InputLanguage, InstanceSource, Instantiable, Integers,
    PartialOps, PeerBounds, Profile, Refuse, ReproducerRequest, RuleInfo, Run, RunRequest, Script,
    Simplified, Translation, Tree,
};

pub struct Morok {
    entry: Entry,
    vars: VarMode,
    gc_every: u64,
    served: u64,
    /// `--patterns FILE`: the patterns.rs entries are translated from
    /// (default: the pinned crate's, found by `cargo metadata`).
    patterns: Option<PathBuf>,
}

impl Morok {
    pub fn new(entry: Entry, vars: VarMode, gc_every: u64) -> Morok {
        Morok {
            entry,
            vars,
            gc_every,
            served: 0,
            patterns: None,
        }
    }

    /// Translations from `path` instead of the pinned crate's patterns.rs.
    pub fn with_patterns(mut self, path: Option<PathBuf>) -> Morok {
        self.patterns = path;
        self
    }

    /// The entries of the tier's groups, each a rule with its translation
    /// (docs/peers/morok.md, "Each entry proved for all constants").
    fn entry_rules(&self) -> Result<Vec<RuleInfo>, Refuse> {
        let Entry::Tier(tier) = self.entry else {
            return Ok(Vec::new());
        };
        let path = match &self.patterns {
            Some(p) => p.clone(),
            // Without cargo (a copied binary), the groups stay the rules.
            None => match morok_source::locate() {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("tileproof-morok: no patterns! entries as rules: {e}");
                    return Ok(Vec::new());
                }
            },
        };
        let groups = morok_source::read(&path).map_err(|e| Refuse::Error(e.to_string()))?;
        let mut out = Vec::new();
        for g in tier.groups() {
            let Some(src) = groups.iter().find(|s| s.name == g.name) else {
                continue;
            };
            let Ok(entries) = &src.entries else { continue };
            for e in entries {
                let (instantiable, instances) = g.reach();
                out.push(RuleInfo {
                    name: e.name(),
                    pattern: e.rule.lhs_text.clone(),
                    location: format!("{}:{}", path.display(), e.line),
                    function: g.name.to_string(),
                    tree: serde_json::Value::Null,
                    instantiable,
                    instances,
                    translation: Some(match translate::translate(e) {
                        Ok(rules) => Translation::Rules(rules),
                        Err(why) => Translation::Untranslatable(why),
                    }),
                });
            }
        }
        Ok(out)
    }

    /// Morok interns every node it builds and records where each was built
    /// (its provenance tracker, a thread-local that only grows): both are
    /// released between requests, so a 40-minute campaign runs in bounded
    /// memory.
    fn housekeeping(&mut self) {
        morok_ir::provenance::PROVENANCE_TRACKER.with(|t| t.borrow_mut().clear());
        self.served += 1;
        if self.served % self.gc_every == 0 {
            morok_ir::uop::hash_consing::gc_dead_refs();
        }
    }

    fn plans(&self, case: &Case) -> Result<Vec<VarPlan>, Refuse> {
        plan_vars(case, self.vars)
    }

    /// The answer trees of `outs` (each of its input's dtype).
    fn answer(&self, outs: &[Arc<UOp>], plans: &[VarPlan]) -> Result<Vec<Tree>, Refuse> {
        outs.iter()
            .map(|u| {
                let t = to_tree(u, plans)
                    .map_err(|why| Refuse::Unsupported(format!("Morok's answer has {why}")))?;
                // A lowered root comes back concrete: as an index again.
                let dt = u.dtype();
                Ok(
                    if dt == morok_dtype::DType::Int32 || dt == morok_dtype::DType::Int64 {
                        Tree::Cast(Dtype::Index, Box::new(t))
                    } else {
                        t
                    },
                )
            })
            .collect()
    }
}

impl Adapter for Morok {
    fn hello(&self) -> Hello {
        let profile = Profile {
            ops: convert::ops(),
            invalid: true,
            integers: Integers::Int64,
            bool_vars: false,
            partial_ops: PartialOps::Undefined,
            // Morok builds INVALID only as the masked arm of an index's
            // WHERE (`UOp::valid`): no comparison sees a gated value.
            input_language: InputLanguage {
                invalid_compared: false,
                affine: false,
                positive_divisors: false,
                defined_everywhere: false,
            },
        };
        Hello {
            backends: backend::BACKENDS.iter().map(|b| b.to_string()).collect(),
            reproducer: true,
            rules: true,
            bounds: true,
            ..Hello::new(
                format!("morok.{}", self.entry.name()),
                MOROK_VERSION,
                profile,
            )
        }
    }

    fn simplify(&mut self, case: &Case) -> Result<Simplified, Refuse> {
        self.housekeeping();
        let plans = self.plans(case)?;
        let exprs = convert::build(case, &plans)?;
        let (outs, fired) = match self.entry {
            Entry::Tier(tier) => {
                let mut fired: Vec<(String, u64)> = Vec::new();
                let mut outs = Vec::new();
                for e in &exprs {
                    let tracker = Tracker::tier(tier, e);
                    outs.push(graph_rewrite(&tracker, e.clone(), &mut ()));
                    for (name, n) in tracker.fired() {
                        match fired.iter_mut().find(|(f, _)| *f == name) {
                            Some((_, m)) => *m += n,
                            None => fired.push((name, n)),
                        }
                    }
                }
                (outs, fired)
            }
            Entry::Lower => (lower::lower(&exprs).map_err(Refuse::Error)?, Vec::new()),
        };
        Ok(Simplified {
            exprs: Exprs::Trees(self.answer(&outs, &plans)?),
            fired,
            patterns: Vec::new(),
        })
    }

    fn run(&mut self, case: &Case, req: &RunRequest) -> Result<Run, Refuse> {
        self.housekeeping();
        let plans = self.plans(case)?;
        backend::run(case, &plans, req)
    }

    fn reproducer(&mut self, case: &Case, req: &ReproducerRequest) -> Result<Script, Refuse> {
        self.housekeeping();
        let plans = self.plans(case)?;
        reproducer::write(self.entry, case, &plans, req)
    }

    fn bounds(&mut self, case: &Case) -> Result<PeerBounds, Refuse> {
        self.housekeeping();
        let plans = self.plans(case)?;
        bounds::of(case, &plans)
    }

    fn rules(&mut self) -> Result<Vec<RuleInfo>, Refuse> {
        let mut out: Vec<RuleInfo> = GROUPS
            .iter()
            .map(|g| {
                let (instantiable, instances) = g.reach();
                RuleInfo {
                    name: g.name.to_string(),
                    pattern: format!(
                        "the {} closures of morok_schedule::symbolic::{}()",
                        (g.matcher)().len(),
                        g.name
                    ),
                    location: g.location.to_string(),
                    function: g.name.to_string(),
                    tree: serde_json::Value::Null,
                    instantiable,
                    instances,
                    translation: Some(Translation::Untranslatable(format!(
                        "a group of closures: each is a rule of its own, {}/KEY#i",
                        g.name
                    ))),
                }
            })
            .collect();
        out.push(RuleInfo {
            name: PRIVATE.into(),
            pattern: format!("the tiers' private groups: {PRIVATE_GROUPS}"),
            location: "schedule/src/symbolic/patterns.rs".into(),
            function: PRIVATE.into(),
            tree: serde_json::Value::Null,
            instantiable: Instantiable::No(
                "morok-schedule does not export them: they run only inside their tier".into(),
            ),
            instances: InstanceSource::Adapter,
            translation: None,
        });
        out.extend(self.entry_rules()?);
        Ok(out)
    }

    /// `rule`: a group (run alone to a fixed point), or one of its
    /// closures (`GROUP/KEY#i`, as an answer's `patterns` names it),
    /// applied once at the root where it is the group's first closure to
    /// match (Morok's matcher gives no way to run one closure alone: where
    /// an earlier one matches first, the instance is `unsupported`).
    fn apply(&mut self, rule: &str, case: &Case) -> Result<Simplified, Refuse> {
        self.housekeeping();
        let (group, only) = match rule.split_once('/') {
            Some((g, p)) => (g, Some(p)),
            None => (rule, None),
        };
        let i = GROUPS
            .iter()
            .position(|g| g.name == group)
            .ok_or_else(|| Refuse::Error(format!("bad request: no group `{group}`")))?;
        let g = &GROUPS[i];
        let plans = self.plans(case)?;
        let exprs = convert::build(case, &plans)?;
        let (outs, matched): (Vec<Arc<UOp>>, Vec<String>) = if g.name == "pm_lower_index_dtype" {
            if only.is_some() {
                return Err(Refuse::Error(format!(
                    "bad request: {group} is not a pattern group"
                )));
            }
            (lower::lower(&exprs).map_err(Refuse::Error)?, Vec::new())
        } else if let Some(only) = only {
            let mut outs = Vec::new();
            // A step of `fold_divmod_general` is its closure where that step
            // answers; the closure's own name, where a later one does.
            let step = divmod_steps::Step::named(only).filter(|_| g.name == divmod_steps::GROUP);
            for e in &exprs {
                let closure = match step {
                    None => only,
                    Some(_) => match divmod_steps::closure_for(e) {
                        Some(c) => c,
                        None => {
                            outs.push(e.clone());
                            continue;
                        }
                    },
                };
                let answers_here = divmod_steps::step_of(g.name, closure, e) == step;
                let (r, last) = patterns::record_last(|| (g.matcher)().rewrite(e, &mut ()));
                // The matcher tries the node's key's closures in order,
                // then the wildcards: one after `closure` matched, so
                // `closure` declined.
                let index = |name: &str| {
                    name.rsplit_once('#')
                        .map(|(k, i)| (k == "*", i.parse::<usize>().ok()))
                };
                match (r, last.as_deref()) {
                    (RewriteResult::Rewritten(n), Some(m)) if m == closure && answers_here => {
                        outs.push(n)
                    }
                    (RewriteResult::Rewritten(_), Some(m)) if m == closure => outs.push(e.clone()),
                    (RewriteResult::NoMatch, _) => outs.push(e.clone()),
                    (_, Some(m)) if index(m) > index(closure) => outs.push(e.clone()),
                    (_, Some(m)) => {
                        return Err(Refuse::Unsupported(format!(
                            "{group}/{m} matches first: {rule} cannot run alone there"
                        )));
                    }
                    (_, None) => {
                        return Err(Refuse::Error(format!(
                            "{group} rewrote without naming its closure (another tracing subscriber?)"
                        )));
                    }
                }
            }
            (outs, vec![only.to_string()])
        } else {
            patterns::record(|| {
                exprs
                    .iter()
                    .map(|e| graph_rewrite(&Tracker::group(i, e), e.clone(), &mut ()))
                    .collect()
            })
        };
        if outs.iter().zip(&exprs).all(|(o, e)| Arc::ptr_eq(o, e)) {
            return Err(Refuse::Declined(format!("{rule} does not rewrite it")));
        }
        Ok(Simplified {
            exprs: Exprs::Trees(self.answer(&outs, &plans)?),
            fired: vec![(rule.to_string(), 1)],
            // A closure asked for alone made every rewrite (the others'
            // matches were not taken).
            patterns: match only {
                Some(_) => vec![rule.to_string()],
                None => matched.iter().map(|p| format!("{group}/{p}")).collect(),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::groups::Tier;

    #[test]
    fn the_version_in_the_hello_is_the_one_cargo_lock_pins() {
        let lock =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.lock")).unwrap();
        for krate in [
            "morok-ir",
            "morok-dtype",
            "morok-schedule",
            "morok-codegen",
            "morok-runtime",
        ] {
            let entry = format!("name = \"{krate}\"\nversion = \"{MOROK_VERSION}\"");
            assert!(
                lock.contains(&entry),
                "Cargo.lock does not pin {krate} {MOROK_VERSION}"
            );
        }
    }

    /// A group alone names the closures that rewrote (Morok's own debug
    /// log's names), and each is a rule of its own: the wrong `(a*n + b)
    /// % n -> b % n` closure rewrites alone, another of the group does not.
    #[test]
    fn a_group_names_its_closures_that_rewrote_and_applies_one_alone() {
        let mut adapter = Morok::new(Entry::Tier(Tier::Symbolic), VarMode::Mixed, 2000);
        let ask = |adapter: &mut Morok, rule: &str| {
            let line = serde_json::json!({"id": 1, "vars": [{"name": "r0", "lo": -5, "hi": 5}],
                "exprs": ["(r0 * 2 + 1) % 2"],
                "trees": [["rem", ["add", ["mul", ["var", "r0"], ["const", 2]], ["const", 1]], ["const", 2]]],
                "apply": {"rule": rule}});
            tileproof_adapter::answer_line(adapter, &line.to_string())
        };
        let group = ask(&mut adapter, "range_based_mod_div_patterns");
        let named = group.patterns.clone().unwrap_or_default();
        assert!(named.len() >= 2, "{group:?}");
        assert!(
            named
                .iter()
                .all(|p| p.starts_with("range_based_mod_div_patterns/Binary(Mod)#"))
        );
        let first = ask(&mut adapter, &named[0]);
        assert_eq!(first.patterns.as_deref(), Some(&named[..1]), "{first:?}");
        assert!(first.trees.is_some(), "{first:?}");
        let other = ask(&mut adapter, "range_based_mod_div_patterns/Binary(Mod)#0");
        assert!(other.declined.is_some(), "{other:?}");
    }

    /// `fold_divmod_general`'s `cancel_divmod` is named apart from the
    /// closure that calls it (two wrong steps of one closure are two
    /// defects): a group run names the step, the step applies alone where
    /// it answers, and the closure's own name declines there.
    #[test]
    fn a_step_of_fold_divmod_general_is_named_and_applied_apart_from_its_closure() {
        let mut adapter = Morok::new(Entry::Tier(Tier::Symbolic), VarMode::Define, 2000);
        let ask = |adapter: &mut Morok, hi: i64, rule: &str| {
            let line = serde_json::json!({"id": 1,
                "vars": [{"name": "x", "lo": 4, "hi": hi}, {"name": "y", "lo": 8, "hi": 9}],
                "exprs": ["x / y"], "trees": [["div", ["var", "x"], ["var", "y"]]],
                "apply": {"rule": rule}});
            tileproof_adapter::answer_line(adapter, &line.to_string())
        };
        let step = "range_based_mod_div_patterns/fold_divmod_general:cancel_divmod";
        let group = ask(&mut adapter, 7, "range_based_mod_div_patterns");
        assert_eq!(
            group.patterns.as_deref(),
            Some(&[step.to_string()][..]),
            "{group:?}"
        );
        let alone = ask(&mut adapter, 7, step);
        assert_eq!(
            alone.trees,
            Some(vec![Tree::Const(0, Dtype::Index)]),
            "{alone:?}"
        );
        let closure = ask(
            &mut adapter,
            7,
            "range_based_mod_div_patterns/Binary(Idiv)#10",
        );
        assert!(closure.declined.is_some(), "{closure:?}");
        // x in [4, 40]: the quotient spans blocks, so no step of the two.
        let across = ask(&mut adapter, 40, step);
        assert!(across.declined.is_some(), "{across:?}");
    }

    /// A closure asked for alone is applied once, at the root (not to a
    /// fixed point over the expression); where an earlier closure of its
    /// group matches first, the instance is unsupported, not declined.
    #[test]
    fn a_closure_applies_once_at_the_root_or_is_unsupported_where_an_earlier_one_matches() {
        let mut adapter = Morok::new(Entry::Tier(Tier::Symbolic), VarMode::Define, 2000);
        let ask =
            |adapter: &mut Morok, lo: i64, expr: &str, tree: serde_json::Value, rule: &str| {
                let line = serde_json::json!({"id": 1, "vars": [{"name": "x", "lo": lo, "hi": 0}],
                "exprs": [expr], "trees": [tree], "apply": {"rule": rule}});
                tileproof_adapter::answer_line(adapter, &line.to_string())
            };
        let add0 = serde_json::json!(["add", ["add", ["var", "x"], ["const", 0]], ["const", 0]]);
        let a = ask(
            &mut adapter,
            -3,
            "x + 0 + 0",
            add0,
            "identity_and_zero_patterns/Binary(Add)#0",
        );
        // Once at the root: the inner `x + 0` stays.
        assert_eq!(
            serde_json::to_value(&a.trees).unwrap(),
            serde_json::json!([["add", ["var", "x"], ["const", 0]]]),
            "{a:?}"
        );
        let lt = serde_json::json!([
            "lt",
            ["add", ["var", "x"], ["const", -1]],
            ["const", i64::MAX]
        ]);
        let point = ask(
            &mut adapter,
            0,
            "x + -1 < MAX",
            lt.clone(),
            "comparison_dsl_patterns/Binary(Lt)#1",
        );
        assert!(
            point
                .unsupported
                .as_deref()
                .is_some_and(|u| u.contains("Binary(Lt)#0 matches first")),
            "{point:?}"
        );
        let wide = ask(
            &mut adapter,
            i64::MIN,
            "x + -1 < MAX",
            lt,
            "comparison_dsl_patterns/Binary(Lt)#1",
        );
        assert!(wide.trees.is_some(), "{wide:?}");
    }

    /// The controls of run-reproducers.sh are what this adapter writes now
    /// for their requests (`reproducers/control/requests.jsonl`, one per
    /// control in file-name order of its test): a stale control would
    /// check a reproducer the adapter no longer writes.
    #[test]
    fn the_controls_are_the_reproducers_the_adapter_writes_now() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/reproducers/control");
        let requests = std::fs::read_to_string(format!("{dir}/requests.jsonl")).unwrap();
        let mut adapter = Morok::new(Entry::Tier(Tier::Symbolic), VarMode::Mixed, 2000);
        for (line, name) in requests
            .lines()
            .zip(["sound_answer", "sound_bounds", "no_panic"])
        {
            let answer = tileproof_adapter::answer_line(&mut adapter, line);
            let script = answer
                .script
                .as_deref()
                .unwrap_or_else(|| panic!("{answer:?}"));
            let kept = std::fs::read_to_string(format!("{dir}/{name}.rs")).unwrap();
            let body: String = kept.lines().skip(3).map(|l| format!("{l}\n")).collect();
            assert_eq!(
                body, script,
                "{name}.rs is stale: regenerate it from requests.jsonl"
            );
        }
    }
}
