//! A defect of the peer's backend: its compiled code gets a construct wrong.
//!
//! A finding is classified by the peer's compiled code, source and answer
//! side by side. When the two differ because the backend compiles one of
//! them wrongly, the simplifier is not to blame. Morok's C renderer writes
//! `i64::MIN` as `-9223372036854775808LL`, the negation of a literal that
//! does not fit `long long` (so unsigned): `(x + i64::MIN) % 2` then
//! computes in unsigned arithmetic. Two ways to see it, cheapest first:
//!
//! - **a literal**: each integer literal of the case is compiled in a few
//!   probes that are defined everywhere (`c < v`, `v == c`, `c / 2`, `c %
//!   3` at `v = 0` and `v = c`); one the backend gets wrong is a literal
//!   it miscompiles. If replacing it by a variable holding the same value
//!   makes the compiled answer agree with the compiled source, that literal
//!   is the finding's cause ([`Construct::Literal`]). Probes are cached per
//!   backend and literal ([`LiteralCache`]): a campaign compiles them once.
//! - **an operation**: each node of a side whose compiled value differs from
//!   its meaning at the point (where it is defined) is compiled alone; the
//!   lowest whose operands are compiled right is the construct
//!   ([`Construct::Op`]; tinygrad's C renderer writes `-(-x)` as `--x`).

use super::{Cause, Construct};
use crate::backend::{PointRun, Run, Value};
use crate::checks::Checked;
use crate::confirm::{Class, CompiledAt};
use crate::subject::Subject;
use engine::dtype::DType;
use engine::dtype::Width;
use engine::ir::{Graph, NodeId, Op};
use engine::semantics::Model;
use std::collections::HashMap;
use std::sync::Mutex;

/// Which literals a backend compiles wrongly, probed once per campaign.
#[derive(Default)]
pub struct LiteralCache {
    known: Mutex<HashMap<(String, i64), bool>>,
}

impl LiteralCache {
    /// Whether `backend` compiles literal `c` wrongly (probing it the first
    /// time it is asked; `false` when the probes could not run).
    pub fn miscompiled(&self, subject: &dyn Subject, backend: &str, c: i64) -> bool {
        let key = (backend.to_string(), c);
        if let Some(&known) = self.known.lock().expect("cache").get(&key) {
            return known;
        }
        let wrong = probe_literal(subject, backend, c);
        self.known.lock().expect("cache").insert(key, wrong);
        wrong
    }

    /// Those of `literals` a backend was seen to compile wrongly (no probe
    /// is run), in increasing order: a finding holding one may be the
    /// backend's, which only a compile tells.
    pub fn known_among(&self, literals: &[i64]) -> Vec<i64> {
        let known = self.known.lock().expect("cache");
        let mut out: Vec<i64> = literals
            .iter()
            .copied()
            .filter(|&c| known.iter().any(|((_, k), &wrong)| wrong && *k == c))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// The integer literals below `roots`, each once, in node order.
pub fn literals(g: &Graph, roots: &[NodeId]) -> Vec<i64> {
    let mut out = Vec::new();
    for n in g.reachable(roots) {
        let node = g.node(n);
        if let (Op::Const(c), DType::Index) = (node.op, node.dtype) {
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    out
}

/// The values `roots` have at `env` under `model`, as a backend reports
/// them; `None` where undefined (or a root is unconstrained).
fn meaning(g: &Graph, roots: &[NodeId], env: &[i64], model: Model) -> Option<Vec<Value>> {
    crate::confirm::interp_values(g, roots, env, model)?
        .into_iter()
        .collect()
}

/// The values the backend computes for `roots` at each of `envs`: per
/// point, `None` where it trapped or timed out; `None` as a whole when it
/// would not compile them.
fn compiled(
    subject: &dyn Subject,
    backend: &str,
    g: &Graph,
    roots: &[NodeId],
    envs: &[Vec<i64>],
) -> Option<Vec<Option<Vec<Value>>>> {
    match subject.run(g, roots, backend, envs).ok()? {
        Run::Results(rs) if rs.len() == envs.len() => Some(
            rs.into_iter()
                .map(|r| match r {
                    PointRun::Values(v) if v.len() == roots.len() => Some(v),
                    _ => None,
                })
                .collect(),
        ),
        _ => None,
    }
}

/// Whether `backend` computes a probe of literal `c` (defined at every
/// point probed) otherwise than its meaning.
fn probe_literal(subject: &dyn Subject, backend: &str, c: i64) -> bool {
    let mut g = Graph::new();
    let Ok(v) = g.declare_var("v", DType::Index, c.min(0), c.max(0)) else {
        return false;
    };
    let v = g.var_node(v);
    let lit = g.cnst(c, DType::Index);
    let (two, three) = (g.cnst(2, DType::Index), g.cnst(3, DType::Index));
    let profile = subject.profile();
    let mut probes = Vec::new();
    for (op, a, b) in [
        (Op::Lt, lit, v),
        (Op::Lt, v, lit),
        (Op::Eq, v, lit),
        (Op::Div, lit, two),
        (Op::Rem, lit, three),
    ] {
        if profile.allows(op) {
            probes.push(g.mk(op, &[a, b]));
        }
    }
    if probes.is_empty() {
        return false;
    }
    let envs = vec![vec![0], vec![c]];
    let Some(runs) = compiled(subject, backend, &g, &probes, &envs) else {
        return false;
    };
    envs.iter().zip(runs).any(|(env, got)| {
        // What a probe means: 64-bit `index`, strict.
        let want = meaning(&g, &probes, env, Model::from(Width::W64));
        matches!((want, got), (Some(w), Some(c)) if w != c)
    })
}

/// `roots` of `g` copied into a new graph with every literal `c` replaced by
/// a variable holding `c` alone (named `lit`), and the point `env` extended
/// by its value.
fn without_literal(
    g: &Graph,
    roots: &[&[NodeId]],
    c: i64,
    env: &[i64],
) -> Option<(Graph, Vec<Vec<NodeId>>, Vec<i64>)> {
    let mut out = g.clone();
    let name = (0..)
        .map(|i| format!("lit{i}"))
        .find(|n| out.var_named(n).is_none())?;
    let v = out.declare_var(&name, DType::Index, c, c).ok()?;
    let var = out.var_node(v);
    let mut map: HashMap<NodeId, NodeId> = HashMap::new();
    let all: Vec<NodeId> = roots.iter().flat_map(|r| r.iter().copied()).collect();
    for id in g.reachable(&all) {
        let n = *g.node(id);
        let new = match (n.op, n.dtype) {
            (Op::Const(k), DType::Index) if k == c => var,
            _ => {
                let src: Vec<NodeId> = n.src().iter().map(|s| map[s]).collect();
                if src.as_slice() == n.src() {
                    id
                } else {
                    out.with_src(id, &src)
                }
            }
        };
        map.insert(id, new);
    }
    let mut env = env.to_vec();
    env.resize(out.vars().len(), c);
    let rebuilt = roots
        .iter()
        .map(|r| r.iter().map(|x| map[x]).collect())
        .collect();
    Some((out, rebuilt, env))
}

/// The backend's cause of a classified finding: a wrong value or a trap
/// on a backend that gets a construct of it wrong (the answer is not to
/// blame), judged at `width`.
pub fn of_classified(
    subject: &dyn Subject,
    checked: &Checked,
    width: Width,
    cache: &LiteralCache,
) -> Option<Cause> {
    let c = checked.class.as_ref()?;
    let tgt = checked.tgt.as_deref()?;
    if !matches!(c.class, Class::WrongValue | Class::Trap) {
        return None;
    }
    let (backend, env) = (c.backend.as_ref()?, c.env.as_ref()?);
    let model = subject.profile().model_at(width);
    let construct = attribute(
        subject,
        backend,
        &checked.graph,
        &checked.src,
        tgt,
        env,
        model,
        cache,
        c.compiled.as_ref(),
    )?;
    Some(Cause::Backend {
        backend: backend.clone(),
        construct,
    })
}

/// The construct `backend` gets wrong in the finding `tgt` of `src` at
/// `env` (its compiled values differ there), or `None` when the backend
/// computes both as they mean and only the answer is wrong. `model`: the
/// peer's (strict) model at the width the finding is judged at; `known`:
/// what the backend computed for both at `env` when the finding was
/// classified (not compiled again).
#[allow(clippy::too_many_arguments)]
pub fn attribute(
    subject: &dyn Subject,
    backend: &str,
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    env: &[i64],
    model: Model,
    cache: &LiteralCache,
    known: Option<&CompiledAt>,
) -> Option<Construct> {
    let both: Vec<NodeId> = src.iter().chain(tgt).copied().collect();
    for c in literals(g, &both) {
        if !cache.miscompiled(subject, backend, c) {
            continue;
        }
        // The literal is miscompiled; is it what makes this finding?
        let (h, roots, env2) = without_literal(g, &[src, tgt], c, env)?;
        let s = compiled(subject, backend, &h, &roots[0], std::slice::from_ref(&env2))?;
        let t = compiled(subject, backend, &h, &roots[1], std::slice::from_ref(&env2))?;
        if let (Some(Some(s)), Some(Some(t))) = (s.first(), t.first()) {
            let s_right = meaning(&h, &roots[0], &env2, model).is_none_or(|m| &m == s);
            if s == t && s_right {
                return Some(Construct::Literal(c));
            }
        }
    }
    // An operation compiled wrongly: a side defined at the point whose
    // compiled value differs from its meaning.
    let sides = [
        (src, known.map(|k| (&k.src, Some(&k.meaning)))),
        (tgt, known.map(|k| (&k.tgt, Some(&k.answer_meaning)))),
    ];
    for (side, known) in sides {
        let meant = match known.and_then(|(_, m)| m) {
            Some(m) => m.clone().and_then(|m| m.into_iter().collect()),
            None => meaning(g, side, env, model),
        };
        let Some(want) = meant else { continue };
        let compiled = known.map(|(c, _)| c);
        if let Some(op) = wrong_op(subject, backend, g, side, env, model, &want, compiled) {
            return Some(Construct::Op(op));
        }
    }
    None
}

/// The lowest node of `roots` whose compiled value (alone) differs from its
/// meaning at `env` where it is defined, its operands' compiled values
/// being right: its op's name, when `roots`' compiled values differ from
/// their meaning `want`. `known`: the compiled values of `roots` at `env`
/// (`None` in it: none), when they were computed already.
#[allow(clippy::too_many_arguments)]
fn wrong_op(
    subject: &dyn Subject,
    backend: &str,
    g: &Graph,
    roots: &[NodeId],
    env: &[i64],
    model: Model,
    want: &[Value],
    known: Option<&Option<Vec<Value>>>,
) -> Option<String> {
    let got = match known {
        Some(k) => k.clone()?,
        None => compiled(subject, backend, g, roots, &[env.to_vec()])?
            .into_iter()
            .next()??,
    };
    if got == want {
        return None;
    }
    let nodes: Vec<NodeId> = g
        .reachable(roots)
        .into_iter()
        .filter(|&n| !matches!(g.node(n).op, Op::Var(_) | Op::Invalid))
        .collect();
    let each: Vec<(NodeId, Option<Value>)> = nodes
        .iter()
        .map(|&n| {
            let v = meaning(g, &[n], env, model).map(|v| v[0]);
            (n, v)
        })
        .collect();
    let runs = compiled(subject, backend, g, &nodes, &[env.to_vec()])?;
    let got = runs.into_iter().next()??;
    let right = |n: NodeId| -> bool {
        match nodes.iter().position(|&x| x == n) {
            Some(i) => each[i].1.is_some_and(|m| m == got[i]),
            None => true,
        }
    };
    nodes.iter().enumerate().find_map(|(i, &n)| {
        let defined_and_wrong = each[i].1.is_some_and(|m| m != got[i]);
        (defined_and_wrong && g.node(n).src().iter().all(|&s| right(s)))
            .then(|| g.node(n).op.name().to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subject::{Answer, Profile, Refusal};
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A subject whose one backend computes `x + 1` as `x + 2` (and
    /// everything else as it means), counting the programs it compiles.
    struct OffByOne {
        profile: Profile,
        backends: Vec<String>,
        runs: AtomicUsize,
    }

    impl Subject for OffByOne {
        fn name(&self) -> String {
            "off-by-one".into()
        }
        fn profile(&self) -> &Profile {
            &self.profile
        }
        fn rule_names(&self) -> &[String] {
            &[]
        }
        fn simplify(&self, _g: &mut Graph, _roots: &[NodeId]) -> Result<Answer, Refusal> {
            unreachable!("only its backend is asked")
        }
        fn reproduce_args(&self) -> String {
            String::new()
        }
        fn backends(&self) -> &[String] {
            &self.backends
        }
        fn run(
            &self,
            g: &Graph,
            roots: &[NodeId],
            _backend: &str,
            points: &[Vec<i64>],
        ) -> Result<Run, Refusal> {
            self.runs.fetch_add(1, Ordering::Relaxed);
            let model = Model::from(Width::W64);
            let rs = points
                .iter()
                .map(|env| {
                    let vals =
                        crate::confirm::interp_values(g, roots, env, model).expect("defined");
                    PointRun::Values(
                        roots
                            .iter()
                            .zip(vals)
                            .map(|(&n, v)| match (v.expect("constrained"), g.node(n).op) {
                                (Value::Int(i), Op::Add) => Value::Int(i + 1),
                                (v, _) => v,
                            })
                            .collect(),
                    )
                })
                .collect();
            Ok(Run::Results(rs))
        }
    }

    #[test]
    fn the_values_and_meaning_a_classification_found_are_not_computed_again_to_find_the_wrong_op() {
        let p = engine::parse::parse_program("var x in [0, 3]\nexpr x + 1\nexpr x * 2\n").unwrap();
        let (g, src, tgt) = (&p.graph, &p.outputs[..1], &p.outputs[1..]);
        let subject = OffByOne {
            profile: Profile::engine(Width::W64),
            backends: vec!["c".into()],
            runs: AtomicUsize::new(0),
        };
        let model = Model::from(Width::W64);
        let env = vec![3];
        let cache = LiteralCache::default();
        // The literals probed once, as a campaign's cache keeps them.
        let first = attribute(&subject, "c", g, src, tgt, &env, model, &cache, None);
        assert_eq!(first, Some(Construct::Op("add".into())));
        subject.runs.store(0, Ordering::Relaxed);
        // Compiled again: the source at the point, then its nodes at once.
        let again = attribute(&subject, "c", g, src, tgt, &env, model, &cache, None);
        assert_eq!(again, first);
        let compiles = subject.runs.swap(0, Ordering::Relaxed);
        assert_eq!(compiles, 2);
        // Known from the classification: only the nodes are compiled.
        let known = CompiledAt {
            src: Some(vec![Value::Int(5)]),
            tgt: Some(vec![Value::Int(6)]),
            meaning: Some(vec![Some(Value::Int(4))]),
            answer_meaning: Some(vec![Some(Value::Int(6))]),
        };
        let read = attribute(
            &subject,
            "c",
            g,
            src,
            tgt,
            &env,
            model,
            &cache,
            Some(&known),
        );
        assert_eq!(read, again);
        assert_eq!(subject.runs.load(Ordering::Relaxed), compiles - 1);
        // The source's meaning is read from the classification too, not
        // interpreted again: told it means what was compiled, the source
        // is right and nothing is blamed.
        let told = CompiledAt {
            meaning: Some(vec![Some(Value::Int(5))]),
            ..known
        };
        let none = attribute(&subject, "c", g, src, tgt, &env, model, &cache, Some(&told));
        assert_eq!(none, None);
    }
}
