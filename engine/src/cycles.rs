//! Rules that undo each other: a rule's right side that another rule (or
//! a short chain of them) rewrites back into a term its left side matches
//! again, so that rewriting never stops.
//!
//! Only a rule that does not decrease the reduction order
//! ([`crate::rules::reduction`]) can take part in such a cycle: every
//! search starts from one. From its left side, the search rewrites the
//! right side by the rules of the set at every position where a rule's
//! left side unifies with it (narrowing: the term's variables get as
//! specific as the rule needs, commutative operands in either order,
//! constant variables only with constants, a guard's `valid`/`is_const`
//! facts respected), up to [`MAX_STEPS`] rewrites; a term that again
//! contains an instance of the (narrowed) start is a cycle, reported with
//! its rules in order and that term. Guards on values are not looked at
//! while searching, so each cycle found is then run: the term, its
//! variables given small ranges and its constants small values, is
//! simplified by the cycle's rules alone, and a run that hits the cap
//! confirms the loop ([`Cycle::instance`]).

use crate::ir::{DType, Graph, NodeId, Op};
use crate::rewrite::Simplifier;
use crate::rules::ast::{Pat, PatVar, Rule, Ty};
use crate::rules::reduction::{var_kinds, VarKind};
use crate::rules::{Group, RuleSet};
use rustc_hash::FxHashMap;

/// The most rewrites after the first rule in a cycle: pairs and chains of
/// up to four rules.
pub const MAX_STEPS: usize = 3;

/// The most terms the search looks at from one rule (the deepest chains
/// from a rule whose right side many rules unify with are cut short).
const MAX_TERMS: usize = 20_000;

/// The largest term the search rewrites further: a rule of more pattern
/// nodes than this takes no part in the search (a generated rule may be a
/// chain of 10^6 terms; every step looks for the start at every position).
const MAX_NODES: usize = 256;

/// Rules that rewrite a term back into one that contains it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cycle {
    /// The rules in the order they fire, the first being the one that
    /// does not decrease the order.
    pub rules: Vec<String>,
    /// The term that cycles, in rule syntax (its variables any terms, its
    /// uppercase names constants).
    pub term: String,
    /// The term as a program the cycle's rules loop on (the rewriter hit
    /// its cap), when one was found: the loop confirmed.
    pub instance: Option<String>,
}

impl Cycle {
    /// `a -> b -> a on TERM` (and the confirming instance).
    pub fn describe(&self) -> String {
        let mut chain = self.rules.clone();
        chain.push(self.rules[0].clone());
        format!(
            "{} on `{}`{}",
            chain.join(" -> "),
            self.term,
            match &self.instance {
                Some(p) => format!(" (loops on {p})"),
                None => " (not confirmed: no instance tried satisfies the guards)".into(),
            }
        )
    }
}

/// A term of the search: a rule's pattern with its variables renamed
/// apart.
#[derive(Clone, Debug, PartialEq, Eq)]
enum T {
    /// An op; a cast carries its target dtype.
    Op(Op, Option<DType>, Vec<T>),
    Lit(i64, DType),
    /// A constant of unknown value: a constant variable, or a constant
    /// the right side computes.
    Const(u32, DType),
    Var(u32),
    Invalid,
}

/// Variables' bindings, kinds, dtypes and names, and the fresh-name
/// counter.
#[derive(Clone, Default)]
struct Subst {
    bound: FxHashMap<u32, T>,
    kind: FxHashMap<u32, VarKind>,
    dtype: FxHashMap<u32, DType>,
    name: FxHashMap<u32, String>,
    next: u32,
}

impl Subst {
    fn fresh(&mut self, name: &str, dtype: DType, kind: Option<VarKind>) -> u32 {
        let id = self.next;
        self.next += 1;
        self.name.insert(id, name.to_string());
        self.dtype.insert(id, dtype);
        if let Some(k) = kind {
            self.kind.insert(id, k);
        }
        id
    }

    /// `t` with its top bound variable followed.
    fn walk(&self, t: &T) -> T {
        let mut t = t.clone();
        while let T::Var(v) | T::Const(v, _) = &t {
            match self.bound.get(v) {
                Some(b) => t = b.clone(),
                None => break,
            }
        }
        t
    }

    /// `t` with every bound variable replaced.
    fn apply(&self, t: &T) -> T {
        crate::deep::grow(|| match self.walk(t) {
            T::Op(op, c, args) => T::Op(op, c, args.iter().map(|a| self.apply(a)).collect()),
            other => other,
        })
    }

    fn occurs(&self, v: u32, t: &T) -> bool {
        crate::deep::grow(|| match self.walk(t) {
            T::Var(w) => w == v,
            T::Op(_, _, args) => args.iter().any(|a| self.occurs(v, a)),
            _ => false,
        })
    }
}

/// A rule's side as a term, its variables fresh (`ids`: pattern variable
/// to fresh id, shared by both sides).
fn term(
    rule: &Rule,
    p: &Pat,
    types: &[DType],
    kinds: &[VarKind],
    ids: &mut Vec<Option<u32>>,
    s: &mut Subst,
) -> T {
    crate::deep::grow(|| match p {
        Pat::Var(v) => {
            let dt = rule.pat_dtype(p, types);
            let id = *ids[*v].get_or_insert_with(|| {
                let k = kinds[*v];
                s.fresh(&rule.vars[*v].name, dt, (!k.only_const).then_some(k))
            });
            if s.kind.contains_key(&id) {
                T::Var(id)
            } else {
                T::Const(id, dt)
            }
        }
        Pat::Lit(v, _) => T::Lit(*v, rule.pat_dtype(p, types)),
        Pat::Invalid => T::Invalid,
        Pat::Computed(_) | Pat::Bound(..) | Pat::Helper(..) => {
            let dt = rule.pat_dtype(p, types);
            T::Const(s.fresh("K", dt, None), dt)
        }
        Pat::Op(op, _, args) => T::Op(
            *op,
            (*op == Op::Cast).then(|| rule.pat_dtype(p, types)),
            args.iter()
                .map(|a| term(rule, a, types, kinds, ids, s))
                .collect(),
        ),
    })
}

/// Every most general unifier of `a` and `b` under `s` (commutative
/// operands in both orders).
fn unify(a: &T, b: &T, s: Subst, out: &mut Vec<Subst>) {
    crate::deep::grow(|| {
        let (a, b) = (s.walk(a), s.walk(b));
        match (&a, &b) {
            (T::Var(x), T::Var(y)) if x == y => out.push(s),
            (T::Const(x, _), T::Const(y, _)) if x == y => out.push(s),
            // The newer variable takes the older one's name (the start's
            // names are the ones a report shows).
            (T::Var(x), T::Var(y)) => bind((*x).max(*y), &T::Var((*x).min(*y)), s, out),
            (T::Var(x), t) | (t, T::Var(x)) => bind(*x, t, s, out),
            (T::Const(x, _), t @ (T::Lit(..) | T::Const(..)))
            | (t @ T::Lit(..), T::Const(x, _)) => {
                let mut s = s;
                s.bound.insert(*x, t.clone());
                out.push(s);
            }
            (T::Lit(v, _), T::Lit(w, _)) if v == w => out.push(s),
            (T::Invalid, T::Invalid) => out.push(s),
            (T::Op(f, c, xs), T::Op(g, d, ys)) if f == g && c == d && xs.len() == ys.len() => {
                unify_args(xs, ys, s.clone(), out);
                if f.is_commutative() && xs.len() == 2 {
                    let swapped = [ys[1].clone(), ys[0].clone()];
                    unify_args(xs, &swapped, s, out);
                }
            }
            _ => {}
        }
    })
}

fn unify_args(xs: &[T], ys: &[T], s: Subst, out: &mut Vec<Subst>) {
    let mut states = vec![s];
    for (x, y) in xs.iter().zip(ys) {
        let mut next = Vec::new();
        for st in states {
            unify(x, y, st, &mut next);
        }
        if next.is_empty() {
            return;
        }
        states = next;
    }
    out.extend(states);
}

/// Binds variable `x` to `t` where its kind allows.
fn bind(x: u32, t: &T, mut s: Subst, out: &mut Vec<Subst>) {
    let k = s.kind[&x];
    let ok = match t {
        T::Lit(..) | T::Const(..) => k.may_const,
        T::Invalid => k.may_invalid,
        T::Var(y) => {
            // The two stand for the same term: what both allow.
            let ky = s.kind[y];
            s.kind.insert(
                *y,
                VarKind {
                    may_invalid: k.may_invalid && ky.may_invalid,
                    may_const: k.may_const && ky.may_const,
                    only_const: false,
                },
            );
            true
        }
        T::Op(..) => !s.occurs(x, t),
    };
    if ok {
        s.bound.insert(x, t.clone());
        out.push(s);
    }
}

/// Whether `p` matches `u` (whose variables are rigid), with `m` the
/// bindings so far.
fn matches(p: &T, u: &T, m: &mut FxHashMap<u32, T>) -> bool {
    crate::deep::grow(|| match (p, u) {
        (T::Var(x), _) | (T::Const(x, _), T::Lit(..) | T::Const(..)) => match m.get(x) {
            Some(b) => b == u,
            None => {
                m.insert(*x, u.clone());
                true
            }
        },
        (T::Lit(v, _), T::Lit(w, _)) => v == w,
        (T::Invalid, T::Invalid) => true,
        (T::Op(f, c, xs), T::Op(g, d, ys)) if f == g && c == d && xs.len() == ys.len() => {
            let saved = m.clone();
            if xs.iter().zip(ys).all(|(x, y)| matches(x, y, m)) {
                return true;
            }
            *m = saved;
            if f.is_commutative() && xs.len() == 2 {
                let ok = matches(&xs[0], &ys[1], m) && matches(&xs[1], &ys[0], m);
                if !ok {
                    m.clear();
                }
                return ok;
            }
            false
        }
        _ => false,
    })
}

/// Every subterm of `t` with its path, preorder.
fn positions(t: &T) -> Vec<(Vec<usize>, &T)> {
    let mut out = Vec::new();
    let mut todo = vec![(Vec::new(), t)];
    while let Some((path, x)) = todo.pop() {
        if let T::Op(_, _, args) = x {
            for (i, a) in args.iter().enumerate().rev() {
                let mut p = path.clone();
                p.push(i);
                todo.push((p, a));
            }
        }
        out.push((path, x));
    }
    out
}

fn size(t: &T) -> usize {
    positions(t).len()
}

/// `t` with the subterm at `path` replaced by `by`.
fn replace(t: &T, path: &[usize], by: T) -> T {
    crate::deep::grow(|| match (path.split_first(), t) {
        (None, _) => by,
        (Some((&i, rest)), T::Op(op, c, args)) => {
            let mut args = args.clone();
            args[i] = replace(&args[i], rest, by);
            T::Op(*op, *c, args)
        }
        _ => unreachable!("a path of the term"),
    })
}

/// `start` (narrowed) again inside `t`.
fn leads_back(start: &T, t: &T) -> bool {
    positions(t)
        .iter()
        .any(|(_, u)| !matches!(u, T::Var(_)) && matches(start, u, &mut FxHashMap::default()))
}

/// One state of the search: the narrowed start, the term it became, the
/// rules so far, and the bindings.
struct State {
    start: T,
    now: T,
    rules: Vec<usize>,
    s: Subst,
    /// Where the last rule rewrote: the next rewrite overlaps it (inside
    /// it, or above it), or it could have come first.
    at: Vec<usize>,
}

/// The cycles through each of `starts` (rules of `set`, by name) that the
/// rules of `set` close within [`MAX_STEPS`] further rewrites, each
/// confirmed or not by running it. One cycle per start rule and set of
/// rules.
pub fn find(set: &RuleSet, starts: &[&str]) -> Vec<Cycle> {
    let rules: Vec<&Rule> = set
        .rules()
        .filter(|r| r.lhs.size() + r.rhs.size() <= MAX_NODES)
        .collect();
    let kinds: Vec<Vec<VarKind>> = rules.iter().map(|r| var_kinds(r)).collect();
    // Each rule's first dtype instance, the one its terms are built at.
    let types: Vec<Vec<DType>> = rules
        .iter()
        .map(|r| r.instances().into_iter().next().unwrap_or_default())
        .collect();
    let mut out: Vec<Cycle> = Vec::new();
    for name in starts {
        let Some(i) = rules.iter().position(|r| r.name == *name) else {
            continue;
        };
        let r = rules[i];
        let mut s = Subst::default();
        let mut ids = vec![None; r.vars.len()];
        let start = term(r, &r.lhs, &types[i], &kinds[i], &mut ids, &mut s);
        let now = term(r, &r.rhs, &types[i], &kinds[i], &mut ids, &mut s);
        let mut found: Vec<(Vec<usize>, T, Subst)> = Vec::new();
        if leads_back(&start, &now) {
            found.push((vec![i], start.clone(), s.clone()));
        }
        let mut frontier = vec![State {
            start,
            now,
            rules: vec![i],
            s,
            at: Vec::new(),
        }];
        let mut seen = 0;
        for _ in 0..MAX_STEPS {
            if !found.is_empty() {
                break;
            }
            let mut next = Vec::new();
            for st in &frontier {
                if seen >= MAX_TERMS {
                    break;
                }
                for (path, sub) in positions(&st.now) {
                    let overlaps = path.starts_with(&st.at) || st.at.starts_with(&path);
                    if matches!(sub, T::Var(_)) || !overlaps {
                        continue;
                    }
                    for (j, q) in rules.iter().enumerate() {
                        if !could_unify(&q.lhs, sub) {
                            continue;
                        }
                        let mut s = st.s.clone();
                        let mut ids = vec![None; q.vars.len()];
                        let lhs = term(q, &q.lhs, &types[j], &kinds[j], &mut ids, &mut s);
                        let rhs = term(q, &q.rhs, &types[j], &kinds[j], &mut ids, &mut s);
                        let mut unifiers = Vec::new();
                        unify(sub, &lhs, s, &mut unifiers);
                        for u in unifiers {
                            seen += 1;
                            let now = u.apply(&replace(&st.now, &path, rhs.clone()));
                            let start = u.apply(&st.start);
                            let mut rs = st.rules.clone();
                            rs.push(j);
                            if leads_back(&start, &now) {
                                found.push((rs, start, u));
                            } else if size(&now) <= MAX_NODES {
                                next.push(State {
                                    start,
                                    now,
                                    rules: rs,
                                    s: u,
                                    at: path.clone(),
                                });
                            }
                        }
                    }
                }
            }
            frontier = next;
        }
        // One cycle per set of rules: the first found (shortest).
        let mut kept: Vec<Vec<usize>> = Vec::new();
        for (rs, start, s) in found {
            let mut key = rs.clone();
            key.sort_unstable();
            key.dedup();
            if kept.contains(&key) {
                continue;
            }
            kept.push(key);
            let cycle_rules: Vec<&Rule> = rs.iter().map(|&k| rules[k]).collect();
            out.push(Cycle {
                rules: cycle_rules.iter().map(|r| r.name.clone()).collect(),
                term: show(r, &start, &s),
                instance: confirm(&cycle_rules, &start, &s),
            });
        }
    }
    // A cycle through more rules than another one (the same loop, with a
    // detour) says nothing more.
    let sets: Vec<Vec<&String>> = out
        .iter()
        .map(|c| {
            let mut v: Vec<&String> = c.rules.iter().collect();
            v.sort();
            v.dedup();
            v
        })
        .collect();
    let keep: Vec<bool> = (0..out.len())
        .map(|i| {
            !(0..out.len()).any(|j| {
                j != i
                    && sets[j].len() < sets[i].len()
                    && sets[j].iter().all(|n| sets[i].contains(n))
            })
        })
        .collect();
    let mut k = keep.into_iter();
    out.retain(|_| k.next().unwrap_or(true));
    // The shortest first.
    out.sort_by_key(|c| c.rules.len());
    out
}

/// The left side `p` may unify with `t`: their shapes agree wherever both
/// are built (an unbound variable of `t` agrees with anything; commutative
/// operands in either order). A cheap filter before a rule's terms are
/// built and unified: it never rejects a pair that unifies.
fn could_unify(p: &Pat, t: &T) -> bool {
    match (p, t) {
        (Pat::Var(_), _) | (_, T::Var(_)) => true,
        (Pat::Op(f, _, xs), T::Op(g, _, ys)) => {
            f == g
                && xs.len() == ys.len()
                && (xs.iter().zip(ys).all(|(x, y)| could_unify(x, y))
                    || (f.is_commutative()
                        && xs.len() == 2
                        && could_unify(&xs[0], &ys[1])
                        && could_unify(&xs[1], &ys[0])))
        }
        (Pat::Lit(v, _), T::Lit(w, _)) => v == w,
        (Pat::Lit(..), T::Const(..)) => true,
        (Pat::Invalid, T::Invalid) => true,
        (Pat::Computed(_) | Pat::Bound(..) | Pat::Helper(..), _) => true,
        _ => false,
    }
}

/// A search term in rule syntax (printed by the rule printer, through a
/// rule whose variables are the term's).
fn show(any: &Rule, t: &T, s: &Subst) -> String {
    let mut names: Vec<(u32, PatVar)> = Vec::new();
    let p = to_pat(t, s, &mut names);
    let mut r = any.clone();
    r.vars = names.into_iter().map(|(_, v)| v).collect();
    r.show(&p)
}

fn to_pat(t: &T, s: &Subst, names: &mut Vec<(u32, PatVar)>) -> Pat {
    crate::deep::grow(|| match t {
        T::Var(v) => Pat::Var(pat_var(*v, false, s, names)),
        T::Const(v, _) => Pat::Var(pat_var(*v, true, s, names)),
        T::Lit(v, d) => Pat::Lit(*v, Ty::Fixed(*d)),
        T::Invalid => Pat::Invalid,
        T::Op(op, c, args) => Pat::Op(
            *op,
            Ty::Fixed(c.unwrap_or(DType::Index)),
            args.iter().map(|a| to_pat(a, s, names)).collect(),
        ),
    })
}

/// The pattern variable for search variable `id`: its rule's name, made
/// distinct.
fn pat_var(id: u32, is_const: bool, s: &Subst, names: &mut Vec<(u32, PatVar)>) -> usize {
    if let Some(k) = names.iter().position(|(i, _)| *i == id) {
        return k;
    }
    let base = s.name.get(&id).cloned().unwrap_or_else(|| "x".into());
    let taken = |n: &str| names.iter().any(|(_, v)| v.name == n);
    let mut name = base.clone();
    let mut k = 1;
    while taken(&name) {
        name = format!("{base}{k}");
        k += 1;
    }
    let ty = Ty::Fixed(s.dtype.get(&id).copied().unwrap_or(DType::Index));
    names.push((id, PatVar { name, is_const, ty }));
    names.len() - 1
}

/// Small values for the constants of an instance.
const CONSTANTS: [i64; 12] = [2, 3, -1, 1, 4, 0, 8, -2, 5, 7, 16, -3];

/// Ranges for the variables of an instance.
const RANGES: [(i64, i64); 3] = [(0, 7), (-8, 7), (1, 16)];

/// How many instances a cycle is run on before it is left unconfirmed.
const TRIES: usize = 48;

/// Runs the cycle's rules alone on instances of `t`: the first on which
/// the rewriter hits its cap, printed as a program.
fn confirm(rules: &[&Rule], t: &T, s: &Subst) -> Option<String> {
    let mut set = RuleSet::default();
    let mut group = Group {
        name: "cycle".into(),
        rules: Vec::new(),
    };
    for r in rules {
        if !group.rules.iter().any(|q| q.name == r.name) {
            group.rules.push((*r).clone());
        }
    }
    set.groups.push(group);
    let mut simp = Simplifier::new(&set);
    simp.algorithmic = false;
    simp.cap = 64;
    for attempt in 0..TRIES {
        let mut g = Graph::new();
        let mut vars: FxHashMap<u32, NodeId> = FxHashMap::default();
        let mut consts = 0usize;
        let Some(root) = build(t, s, &mut g, &mut vars, &mut consts, attempt) else {
            continue;
        };
        if simp.simplify(&mut g, &[root], false).is_err() {
            return Some(
                crate::print::program(&g, &[root])
                    .trim_end()
                    .replace('\n', "; "),
            );
        }
    }
    None
}

/// `t` as a node: variables declared with one of [`RANGES`], constants
/// drawn from [`CONSTANTS`] (which ones depends on `attempt`); `None` when
/// it does not type.
fn build(
    t: &T,
    s: &Subst,
    g: &mut Graph,
    vars: &mut FxHashMap<u32, NodeId>,
    consts: &mut usize,
    attempt: usize,
) -> Option<NodeId> {
    crate::deep::grow(|| match t {
        T::Var(v) => {
            if let Some(&n) = vars.get(v) {
                return Some(n);
            }
            let dt = s.dtype.get(v).copied().unwrap_or(DType::Index);
            let (lo, hi) = if dt == DType::Bool {
                (0, 1)
            } else {
                RANGES[(attempt + *v as usize) % RANGES.len()]
            };
            let name = format!("v{}", vars.len());
            let id = g.declare_var(&name, dt, lo, hi).ok()?;
            let n = g.var_node(id);
            vars.insert(*v, n);
            Some(n)
        }
        T::Const(v, dt) => {
            if let Some(&n) = vars.get(v) {
                return Some(n);
            }
            *consts += 1;
            let n = if *dt == DType::Bool {
                g.bool_const((attempt + *consts) % 2 == 1)
            } else {
                let k = (attempt * 7 + *consts * 5) % CONSTANTS.len();
                g.cnst(CONSTANTS[k], *dt)
            };
            vars.insert(*v, n);
            Some(n)
        }
        T::Lit(v, dt) => {
            let (lo, hi) = dt.bounds();
            (lo <= *v && *v <= hi).then(|| g.cnst(*v, *dt))
        }
        T::Invalid => Some(g.invalid()),
        T::Op(op, c, args) => {
            let src: Vec<NodeId> = args
                .iter()
                .map(|a| build(a, s, g, vars, consts, attempt))
                .collect::<Option<_>>()?;
            g.try_mk(*op, *c, &src).ok()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::builtin;

    #[test]
    fn a_rule_that_undoes_a_builtin_one_is_found_with_its_term_and_confirmed() {
        let set = builtin()
            .with_file("pair.rules", "group combine\nrule double: a * 2 => a + a\n")
            .unwrap();
        let cycles = find(&set, &["double"]);
        let c = cycles
            .iter()
            .find(|c| c.rules.contains(&"add_self".to_string()))
            .unwrap_or_else(|| panic!("{cycles:?}"));
        assert_eq!(c.rules, ["double", "add_self"]);
        assert_eq!(c.term, "a * 2");
        assert!(c.instance.is_some(), "{c:?}");
    }

    #[test]
    fn a_rule_whose_right_side_contains_its_left_side_cycles_alone() {
        let set = RuleSet::parse("grow.rules", "rule grow: x * y => (x * y) * 1\n").unwrap();
        let cycles = find(&set, &["grow"]);
        assert_eq!(cycles.len(), 1, "{cycles:?}");
        assert_eq!(cycles[0].rules, ["grow"]);
        assert!(cycles[0].instance.is_some());
    }

    #[test]
    fn the_rules_that_move_constants_outward_do_not_cycle_with_the_builtin_ones() {
        let cycles = find(builtin(), &["add_push_const", "mul_push_const"]);
        assert!(cycles.is_empty(), "{cycles:?}");
    }
}
