//! The reduction order: why rewriting stops.
//!
//! Every declarative rule must make the term it rewrites strictly smaller
//! in one well-founded order, for every instance its guard allows; then no
//! sequence of rewrites is infinite, whatever order they fire in. The
//! order is stated in docs/architecture.md ("Termination"); it compares
//! four measures in turn ([`Component`]), the first that differs deciding:
//!
//! 1. **size**: the number of nodes, weighted ([`weight`]: `!` weighs
//!    nothing, `+`, `-` and `where` two);
//! 2. **gates**: the `where`s whose true arm is `invalid` (the gate keeps
//!    `invalid` in the false arm);
//! 3. **ops**: the recursive path order (multiset status, so commutative
//!    operands may come in either order) over the precedence [`rank`]:
//!    `invalid` < constants < variables < `where` < `!` < `&& || ^` <
//!    comparisons < casts < `+` < `-` < negation < shifts and `&` < `*` <
//!    `min max` < `/ %` < `// mod ceildiv`. An op is pushed below a lower
//!    one
//!    (`where(c, x, invalid) + y` into `where(c, x + y, invalid)`), never
//!    above one;
//! 4. **constants**: the sum of the constants' ranks, `2|c|`, plus 1 for a
//!    negative `c` ([`rank`]): a constant that shrinks in magnitude, or
//!    keeps it and turns positive.
//!
//! Each measure grows when a subterm grows (a rewrite inside a term
//! shrinks the whole), so a rule is checked on its two sides alone, with
//! its pattern variables standing for any term. [`check`] decides the
//! first three syntactically (the variables' multiplicities, where they
//! sit, the path order on patterns); where everything comes down to the
//! constants and one of them is computed (`C mod N`) or moved, it returns
//! the comparison for the verifier to prove with Z3 over the rule's
//! symbolic constants, under its guard. [`compare`] compares two concrete
//! terms of a graph: how an algorithmic pass's firing is checked.

use super::ast::{Guard, Pat, Rule, Ty};
use crate::ir::{DType, Graph, NodeId, Op};
use rustc_hash::FxHashMap;
use std::fmt;

/// One measure of the order, in the order they are compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Component {
    Size,
    Gates,
    Ops,
    Constants,
}

impl Component {
    pub const ALL: [Component; 4] = [
        Component::Size,
        Component::Gates,
        Component::Ops,
        Component::Constants,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Component::Size => "size",
            Component::Gates => "gates",
            Component::Ops => "ops",
            Component::Constants => "constants",
        }
    }
}

impl fmt::Display for Component {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A node's weight in the size. `!` weighs nothing (a negated condition
/// is no bigger than the condition: flipping a gate costs nothing); a sum,
/// a difference and a `where` weigh two (`x + x` is heavier than `x * 2`,
/// and a `where` at least as heavy as a sum lifted into its arms); every
/// other node, leaves included, one.
fn weight(op: Op) -> i128 {
    match op {
        Op::Not => 0,
        Op::Add | Op::Sub | Op::Where => 2,
        _ => 1,
    }
}

/// The precedence of the path order: a higher op may be pushed below a
/// lower one. Ops of one rank are equivalent (`<` and `<=`: `!(x < y)` is
/// `y <= x`).
pub fn rank(op: Op) -> u8 {
    match op {
        Op::Invalid => 0,
        Op::Const(_) => 1,
        Op::Var(_) => 2,
        Op::Where => 3,
        Op::Not => 4,
        Op::And | Op::Or | Op::Xor => 5,
        Op::Lt | Op::Le | Op::Eq | Op::Ne => 6,
        Op::Cast => 7,
        Op::Add => 8,
        Op::Sub => 9,
        Op::Neg => 10,
        Op::Shl | Op::Shr | Op::BitAnd => 11,
        Op::Mul => 12,
        Op::Min | Op::Max => 13,
        Op::Div | Op::Rem => 14,
        Op::FloorDiv | Op::Mod | Op::CeilDiv => 15,
    }
}

/// The arithmetic a constant's rank is computed in: exact integers here,
/// Z3 terms in the verifier.
pub trait RankArith {
    type N: Clone;
    fn lit(&mut self, v: i128) -> Self::N;
    fn add(&mut self, a: &Self::N, b: &Self::N) -> Self::N;
    fn mul(&mut self, a: &Self::N, b: &Self::N) -> Self::N;
    fn neg(&mut self, a: &Self::N) -> Self::N;
    fn max(&mut self, a: &Self::N, b: &Self::N) -> Self::N;
    fn min(&mut self, a: &Self::N, b: &Self::N) -> Self::N;
}

/// A constant's rank in the constants measure: `2|c|`, plus 1 when `c`
/// is negative (`min(1, max(0, -c))`), so that a constant that keeps its
/// magnitude and turns positive decreases too (`x % -3` to `x % 3`).
pub fn constant_rank<A: RankArith>(a: &mut A, c: &A::N) -> A::N {
    let neg = a.neg(c);
    let abs = a.max(c, &neg);
    let two = a.lit(2);
    let twice = a.mul(&two, &abs);
    let (zero, one) = (a.lit(0), a.lit(1));
    let positive_part = a.max(&zero, &neg);
    let negative = a.min(&one, &positive_part);
    a.add(&twice, &negative)
}

/// Exact arithmetic for ranks, saturating (a rank sum never wraps).
struct Exact;

impl RankArith for Exact {
    type N = i128;
    fn lit(&mut self, v: i128) -> i128 {
        v
    }
    fn add(&mut self, a: &i128, b: &i128) -> i128 {
        a.saturating_add(*b)
    }
    fn mul(&mut self, a: &i128, b: &i128) -> i128 {
        a.saturating_mul(*b)
    }
    fn neg(&mut self, a: &i128) -> i128 {
        a.saturating_neg()
    }
    fn max(&mut self, a: &i128, b: &i128) -> i128 {
        *a.max(b)
    }
    fn min(&mut self, a: &i128, b: &i128) -> i128 {
        *a.min(b)
    }
}

fn exact_rank(v: i128) -> i128 {
    constant_rank(&mut Exact, &v)
}

/// A constant's rank ([`constant_rank`]) in exact arithmetic.
pub fn rank_of(c: i64) -> i128 {
    exact_rank(c as i128)
}

/// What a pattern variable may stand for, from its dtype and the guard's
/// top-level conjuncts (`valid(x)`, `is_const(x)`, `!is_const(x)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct VarKind {
    pub(crate) may_invalid: bool,
    pub(crate) may_const: bool,
    /// A constant variable, or one the guard says `is_const`.
    pub(crate) only_const: bool,
}

/// What the order sees at a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Head {
    Op(Op),
    /// A constant, whatever its value (a literal, a constant variable, a
    /// computed constant): all constants are equivalent in the path order.
    Const,
    /// A variable of the program (all equivalent).
    Leaf,
    Invalid,
    /// A pattern variable: any term of its kind.
    Var(usize, VarKind),
}

impl Head {
    /// The precedence of a head that is not a pattern variable.
    fn rank(self) -> Option<u8> {
        match self {
            Head::Op(op) => Some(rank(op)),
            Head::Const => Some(rank(Op::Const(0))),
            Head::Leaf => Some(rank(Op::Var(0))),
            Head::Invalid => Some(rank(Op::Invalid)),
            Head::Var(..) => None,
        }
    }
}

/// Terms as the path order walks them: a rule's patterns, or a graph's
/// nodes.
trait Terms {
    type T: Copy + Eq + std::hash::Hash;
    fn head(&self, t: Self::T) -> Head;
    fn args(&self, t: Self::T) -> Vec<Self::T>;
}

/// How one side compares with the other in one measure, over every
/// instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cmp {
    /// Greater in every instance.
    Gt,
    /// Equal (equivalent) in every instance.
    Eq,
    /// Greater or equal in every instance, equal in some.
    Ge,
    /// Smaller, or incomparable, in some instance.
    No,
}

/// The path order, with memoized comparisons (a graph's nodes are shared)
/// and a budget of steps (a comparison of two large terms gives up).
struct PathOrder<'v, V: Terms> {
    v: &'v V,
    cmp_memo: FxHashMap<(V::T, V::T), Cmp>,
    eq_memo: FxHashMap<(V::T, V::T), bool>,
    steps: usize,
}

/// The most steps one ground comparison takes before it gives up.
const PATH_STEPS: usize = 200_000;

struct OverBudget;

impl<'v, V: Terms> PathOrder<'v, V> {
    fn new(v: &'v V) -> Self {
        PathOrder {
            v,
            cmp_memo: FxHashMap::default(),
            eq_memo: FxHashMap::default(),
            steps: 0,
        }
    }

    fn tick(&mut self) -> Result<(), OverBudget> {
        self.steps += 1;
        if self.steps > PATH_STEPS {
            return Err(OverBudget);
        }
        Ok(())
    }

    /// `s` and `t` are equivalent: equal up to the values of constants,
    /// the variables of a program, ops of one rank and operand order.
    fn equiv(&mut self, s: V::T, t: V::T) -> Result<bool, OverBudget> {
        if s == t {
            return Ok(true);
        }
        if let Some(&e) = self.eq_memo.get(&(s, t)) {
            return Ok(e);
        }
        self.tick()?;
        let e = crate::deep::grow(|| -> Result<bool, OverBudget> {
            Ok(match (self.v.head(s), self.v.head(t)) {
                (Head::Var(a, _), Head::Var(b, _)) => a == b,
                (Head::Var(..), _) | (_, Head::Var(..)) => false,
                (Head::Op(f), Head::Op(g)) => {
                    let (a, b) = (self.v.args(s), self.v.args(t));
                    rank(f) == rank(g) && a.len() == b.len() && self.multiset(&a, &b)? == Cmp::Eq
                }
                (x, y) => x.rank() == y.rank(),
            })
        })?;
        self.eq_memo.insert((s, t), e);
        Ok(e)
    }

    fn occurs(&self, var: usize, s: V::T) -> bool {
        let mut todo = vec![s];
        while let Some(x) = todo.pop() {
            match self.v.head(x) {
                Head::Var(v, _) if v == var => return true,
                _ => todo.extend(self.v.args(x)),
            }
        }
        false
    }

    /// `s` against `t` in the path order.
    fn cmp(&mut self, s: V::T, t: V::T) -> Result<Cmp, OverBudget> {
        if self.equiv(s, t)? {
            return Ok(Cmp::Eq);
        }
        if let Some(&c) = self.cmp_memo.get(&(s, t)) {
            return Ok(c);
        }
        self.tick()?;
        let c = crate::deep::grow(|| self.cmp_step(s, t))?;
        self.cmp_memo.insert((s, t), c);
        Ok(c)
    }

    fn cmp_step(&mut self, s: V::T, t: V::T) -> Result<Cmp, OverBudget> {
        let (hs, ht) = (self.v.head(s), self.v.head(t));
        if let Head::Var(x, _) = ht {
            // A term is above a variable only by containing it.
            return Ok(if self.occurs(x, s) { Cmp::Gt } else { Cmp::No });
        }
        let rt = ht.rank().expect("not a pattern variable");
        match hs {
            Head::Var(_, kind) => Ok(match ht {
                // Any term but `invalid` is at least a constant; above
                // one unless it may be a constant itself.
                Head::Const if !kind.may_invalid => {
                    if kind.may_const {
                        Cmp::Ge
                    } else {
                        Cmp::Gt
                    }
                }
                Head::Invalid if kind.may_invalid => Cmp::Ge,
                Head::Invalid => Cmp::Gt,
                _ => Cmp::No,
            }),
            Head::Op(f) => {
                let args = self.v.args(s);
                for &a in &args {
                    if self.cmp(a, t)? != Cmp::No {
                        return Ok(Cmp::Gt);
                    }
                }
                let rs = rank(f);
                let targs = self.v.args(t);
                if rs > rt {
                    for &b in &targs {
                        if self.cmp(s, b)? != Cmp::Gt {
                            return Ok(Cmp::No);
                        }
                    }
                    return Ok(Cmp::Gt);
                }
                if rs == rt {
                    return self.multiset(&args, &targs);
                }
                Ok(Cmp::No)
            }
            leaf => Ok(match leaf.rank().cmp(&Some(rt)) {
                std::cmp::Ordering::Greater => Cmp::Gt,
                std::cmp::Ordering::Equal => Cmp::Eq,
                std::cmp::Ordering::Less => Cmp::No,
            }),
        }
    }

    /// The multiset extension: after equivalent operands cancel, every
    /// operand left on the right is below one left on the left.
    fn multiset(&mut self, l: &[V::T], r: &[V::T]) -> Result<Cmp, OverBudget> {
        let mut l = l.to_vec();
        let mut r = r.to_vec();
        let mut i = 0;
        while i < r.len() {
            let mut hit = None;
            for (j, &a) in l.iter().enumerate() {
                if self.equiv(a, r[i])? {
                    hit = Some(j);
                    break;
                }
            }
            match hit {
                Some(j) => {
                    l.remove(j);
                    r.remove(i);
                }
                None => i += 1,
            }
        }
        if l.is_empty() {
            return Ok(if r.is_empty() { Cmp::Eq } else { Cmp::No });
        }
        for &b in &r {
            let mut above = false;
            for &a in &l {
                if self.cmp(a, b)? == Cmp::Gt {
                    above = true;
                    break;
                }
            }
            if !above {
                return Ok(Cmp::No);
            }
        }
        Ok(Cmp::Gt)
    }
}

// ---------------------------------------------------------------------
// Rules: the order decided on patterns.

/// A rule's two sides as the path order walks them.
struct Patterns<'r> {
    kinds: Vec<VarKind>,
    _rule: std::marker::PhantomData<&'r Rule>,
}

/// A pattern node, compared and hashed by identity (a memo key).
#[derive(Clone, Copy, Debug)]
struct PatRef<'r>(&'r Pat);

impl PartialEq for PatRef<'_> {
    fn eq(&self, o: &Self) -> bool {
        std::ptr::eq(self.0, o.0)
    }
}

impl Eq for PatRef<'_> {}

impl std::hash::Hash for PatRef<'_> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        std::ptr::hash(self.0, h)
    }
}

impl<'r> Terms for Patterns<'r> {
    type T = PatRef<'r>;

    fn head(&self, t: PatRef<'r>) -> Head {
        match t.0 {
            Pat::Var(v) if self.constant_like(*v) => Head::Const,
            Pat::Var(v) => Head::Var(*v, self.kinds[*v]),
            Pat::Lit(..) | Pat::Computed(_) | Pat::Bound(..) | Pat::Helper(..) => Head::Const,
            Pat::Invalid => Head::Invalid,
            Pat::Op(op, ..) => Head::Op(*op),
        }
    }

    fn args(&self, t: PatRef<'r>) -> Vec<PatRef<'r>> {
        match t.0 {
            Pat::Op(_, _, args) => args.iter().map(PatRef).collect(),
            _ => Vec::new(),
        }
    }
}

impl Patterns<'_> {
    /// Variable `v` only ever stands for a constant.
    fn constant_like(&self, v: usize) -> bool {
        self.kinds[v].only_const
    }
}

/// The guard's top-level conjuncts.
fn conjuncts(g: &Guard) -> Vec<&Guard> {
    let mut out = Vec::new();
    let mut todo = vec![g];
    while let Some(x) = todo.pop() {
        match x {
            Guard::Bin(Op::And, a, b) => {
                todo.push(b);
                todo.push(a);
            }
            other => out.push(other),
        }
    }
    out
}

/// The dtype could be `index` (only an `index` value can be `invalid`).
fn may_be_index(rule: &Rule, ty: Ty) -> bool {
    match ty {
        Ty::Fixed(d) => d == DType::Index,
        Ty::Var(k) => rule.tyvars[k].domain.contains(&DType::Index),
    }
}

/// What each pattern variable may stand for. A constant variable, or
/// one the guard says `is_const`, is a constant; `valid(x)` rules out
/// `invalid`, `!is_const(x)` a constant.
pub(crate) fn var_kinds(rule: &Rule) -> Vec<VarKind> {
    let facts: Vec<&Guard> = rule.guard.as_ref().map(conjuncts).unwrap_or_default();
    let has = |f: &dyn Fn(&Guard) -> bool| facts.iter().any(|g| f(g));
    rule.vars
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let is_const = v.is_const || has(&|g| matches!(g, Guard::IsConst(x) if *x == i));
            if is_const {
                return VarKind {
                    may_invalid: false,
                    may_const: true,
                    only_const: true,
                };
            }
            let not_const = has(&|g| {
                matches!(g, Guard::Un(Op::Not, inner) if matches!(**inner, Guard::IsConst(x) if x == i))
            });
            let valid = has(&|g| matches!(g, Guard::Valid(x) if *x == i));
            VarKind {
                may_invalid: !valid && may_be_index(rule, v.ty),
                may_const: !not_const,
                only_const: false,
            }
        })
        .collect()
}

/// A side of a rule in a measure that adds up over nodes: a fixed part and
/// a multiplicity per pattern variable (standing for the variable's own
/// measure, at least `min`).
#[derive(Clone, Debug)]
struct Sum {
    fixed: i128,
    per_var: Vec<i128>,
}

impl Sum {
    fn new(vars: usize) -> Sum {
        Sum {
            fixed: 0,
            per_var: vec![0; vars],
        }
    }
}

/// Why a rule does not decrease the order: the first measure that does
/// not settle it, and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotDecreasing {
    pub component: Component,
    pub why: String,
}

impl fmt::Display for NotDecreasing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.component, self.why)
    }
}

/// The constants' comparison a rule comes down to, for the verifier:
/// every other measure is equal on both sides, and the sum of the ranks
/// of `lhs` must exceed that of `rhs` wherever the rule fires (constants
/// common to both sides cancelled).
#[derive(Clone, Debug)]
pub struct ConstantsQuery<'r> {
    /// Constant occurrences: literals, constant variables, and (on the
    /// right) computed constants and bounds.
    pub lhs: Vec<&'r Pat>,
    pub rhs: Vec<&'r Pat>,
}

/// What [`check`] decided for a rule.
#[derive(Clone, Debug)]
pub enum Check<'r> {
    /// The rule decreases the order, decided by this measure.
    Decreases(Component),
    /// It does, if the constants' ranks decrease: for the verifier.
    Constants(ConstantsQuery<'r>),
    Fails(NotDecreasing),
    /// Not decided: the path order gave up on two large sides.
    Undecided(String),
}

/// Whether `rule` strictly decreases the order in every instance (its
/// guard's `valid`/`is_const` facts taken into account), as far as syntax
/// decides; the constants, when they decide, are left to the verifier.
/// The components in turn: each either decides (`Err`) or ties.
pub fn check(rule: &Rule) -> Check<'_> {
    let terms = Patterns {
        kinds: var_kinds(rule),
        _rule: std::marker::PhantomData,
    };
    let decide = || -> Result<Check<'_>, Check<'_>> {
        size_order(rule, &terms)?;
        gate_order(rule, &terms)?;
        path_order(rule, &terms)?;
        Ok(constant_order(rule, &terms))
    };
    decide().unwrap_or_else(|decided| decided)
}

fn fail<'r>(component: Component, why: String) -> Check<'r> {
    Check::Fails(NotDecreasing { component, why })
}

/// 1. Size: `Err` when it decides.
fn size_order<'r>(rule: &'r Rule, terms: &Patterns<'r>) -> Result<(), Check<'r>> {
    let n = rule.vars.len();
    let (mut l, mut r) = (Sum::new(n), Sum::new(n));
    size(&rule.lhs, terms, &mut l);
    size(&rule.rhs, terms, &mut r);
    for v in 0..n {
        if r.per_var[v] > l.per_var[v] {
            return Err(fail(
                Component::Size,
                format!(
                    "`{}` occurs {} on the right and {} on the left",
                    rule.vars[v].name,
                    times(r.per_var[v]),
                    times(l.per_var[v])
                ),
            ));
        }
    }
    // Every term has at least one node.
    let extra: i128 = (0..n).map(|v| l.per_var[v] - r.per_var[v]).sum();
    let least = l.fixed - r.fixed + extra;
    if least > 0 {
        Err(Check::Decreases(Component::Size))
    } else if least < 0 {
        Err(fail(
            Component::Size,
            format!("the right side is larger by {}", least.unsigned_abs()),
        ))
    } else {
        Ok(())
    }
}

/// 2. Gates: `Err` when it decides.
///
/// The measure looks at a `where`'s true arm, so a rule whose right side
/// may be `invalid` where its left is not would add a gate to the term
/// around it.
fn gate_order<'r>(rule: &'r Rule, terms: &Patterns<'r>) -> Result<(), Check<'r>> {
    let (kinds, n) = (&terms.kinds, rule.vars.len());
    let root_invalid = |p: &Pat| match p {
        Pat::Invalid => true,
        Pat::Var(v) => kinds[*v].may_invalid,
        _ => false,
    };
    let same_root = match (&rule.lhs, &rule.rhs) {
        (Pat::Invalid, Pat::Invalid) => true,
        (Pat::Var(a), Pat::Var(b)) => a == b,
        _ => false,
    };
    if root_invalid(&rule.rhs) && !same_root {
        return Err(fail(
            Component::Gates,
            "the right side may be `invalid` where the left side is not".into(),
        ));
    }
    let (lg, la) = gates(&rule.lhs, terms, n);
    let (rg, ra) = gates(&rule.rhs, terms, n);
    let mut low = lg - rg;
    for v in 0..n {
        if kinds[v].may_invalid {
            low += (la[v] - ra[v]).min(0);
        }
    }
    if low > 0 {
        Err(Check::Decreases(Component::Gates))
    } else if low < 0 {
        Err(fail(
            Component::Gates,
            "the right side may put `invalid` in a `where`'s true arm".into(),
        ))
    } else {
        Ok(())
    }
}

/// 3. The path order: `Err` unless the sides tie.
fn path_order<'r>(rule: &'r Rule, terms: &Patterns<'r>) -> Result<(), Check<'r>> {
    let mut po = PathOrder::new(terms);
    let Ok(by_ops) = po.cmp(PatRef(&rule.lhs), PatRef(&rule.rhs)) else {
        return Err(Check::Undecided(format!(
            "the path order gave up after {PATH_STEPS} steps on its {}-node sides",
            rule.lhs.size() + rule.rhs.size()
        )));
    };
    match by_ops {
        Cmp::Gt => Err(Check::Decreases(Component::Ops)),
        Cmp::Eq => Ok(()),
        Cmp::Ge | Cmp::No => Err(fail(
            Component::Ops,
            format!(
                "`{}` is not above `{}` in the path order",
                shown(rule, &rule.lhs),
                shown(rule, &rule.rhs)
            ),
        )),
    }
}

/// 4. The constants, the sides being the same up to constants.
fn constant_order<'r>(rule: &'r Rule, terms: &Patterns<'r>) -> Check<'r> {
    let mut lc = Vec::new();
    let mut rc = Vec::new();
    constants(&rule.lhs, terms, &mut lc);
    constants(&rule.rhs, terms, &mut rc);
    // Constants on both sides cancel: equal literals, one constant variable.
    let same = |a: &Pat, b: &Pat| match (a, b) {
        (Pat::Lit(x, _), Pat::Lit(y, _)) => x == y,
        (Pat::Var(x), Pat::Var(y)) => x == y,
        _ => false,
    };
    let mut i = 0;
    while i < rc.len() {
        match lc.iter().position(|a| same(a, rc[i])) {
            Some(j) => {
                lc.remove(j);
                rc.remove(i);
            }
            None => i += 1,
        }
    }
    let literal = |p: &Pat| match p {
        Pat::Lit(v, _) => Some(*v as i128),
        _ => None,
    };
    let known = |side: &[&Pat]| -> Option<i128> {
        side.iter()
            .map(|p| literal(p).map(exact_rank))
            .try_fold(0i128, |acc, r| r.map(|r| acc.saturating_add(r)))
    };
    match (known(&lc), known(&rc)) {
        (Some(a), Some(b)) if a > b => Check::Decreases(Component::Constants),
        (Some(_), Some(_)) => fail(
            Component::Constants,
            "the two sides are the same up to constants, and the constants do not shrink".into(),
        ),
        _ => Check::Constants(ConstantsQuery { lhs: lc, rhs: rc }),
    }
}

/// A side as a report shows it: its text, or its size when long.
fn shown(rule: &Rule, p: &Pat) -> String {
    match p.size() {
        n if n > 64 => format!("({n}-node pattern)"),
        _ => rule.show(p),
    }
}

fn times(n: i128) -> String {
    match n {
        0 => "no times".into(),
        1 => "once".into(),
        2 => "twice".into(),
        n => format!("{n} times"),
    }
}

/// A side's size: nodes other than pattern variables (a constant-like
/// variable is one node), and the variables' multiplicities.
fn size(p: &Pat, terms: &Patterns, out: &mut Sum) {
    crate::deep::grow(|| match p {
        Pat::Var(v) if terms.constant_like(*v) => out.fixed += 1,
        Pat::Var(v) => out.per_var[*v] += 1,
        Pat::Op(op, _, args) => {
            out.fixed += weight(*op);
            for a in args {
                size(a, terms, out);
            }
        }
        _ => out.fixed += 1,
    })
}

/// A side's gates: `where`s whose true arm is the literal `invalid`, and
/// per variable how often it is a true arm (a gate where it is `invalid`).
fn gates(p: &Pat, terms: &Patterns, vars: usize) -> (i128, Vec<i128>) {
    let mut fixed = 0;
    let mut arm = vec![0; vars];
    let mut todo = vec![p];
    while let Some(x) = todo.pop() {
        if let Pat::Op(op, _, args) = x {
            if *op == Op::Where {
                match &args[1] {
                    Pat::Invalid => fixed += 1,
                    Pat::Var(v) if !terms.constant_like(*v) => arm[*v] += 1,
                    _ => {}
                }
            }
            todo.extend(args);
        }
    }
    (fixed, arm)
}

/// A side's constant occurrences.
fn constants<'r>(p: &'r Pat, terms: &Patterns<'r>, out: &mut Vec<&'r Pat>) {
    let mut todo = vec![p];
    while let Some(x) = todo.pop() {
        match x {
            Pat::Op(_, _, args) => todo.extend(args.iter().rev()),
            Pat::Var(v) if !terms.constant_like(*v) => {}
            Pat::Invalid => {}
            c => out.push(c),
        }
    }
}

// ---------------------------------------------------------------------
// Terms of a graph: the order decided on two concrete terms.

impl Terms for Graph {
    type T = NodeId;

    fn head(&self, t: NodeId) -> Head {
        match self.node(t).op {
            Op::Const(_) => Head::Const,
            Op::Var(_) => Head::Leaf,
            Op::Invalid => Head::Invalid,
            op => Head::Op(op),
        }
    }

    fn args(&self, t: NodeId) -> Vec<NodeId> {
        self.node(t).src().to_vec()
    }
}

/// Why a concrete rewrite does not decrease the order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ground {
    NotDecreasing(NotDecreasing),
    /// The path order gave up on two large terms: not decided.
    TooLarge,
}

impl fmt::Display for Ground {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ground::NotDecreasing(n) => write!(f, "does not decrease the order ({n})"),
            Ground::TooLarge => f.write_str("not decided (the terms are too large to compare)"),
        }
    }
}

/// The size, gates and constants of the term at each node (as a tree: a
/// shared node counts once per occurrence), saturating.
fn measures(g: &Graph, root: NodeId) -> [i128; 3] {
    let mut memo: FxHashMap<NodeId, [i128; 3]> = FxHashMap::default();
    for n in g.post_order(root, |_| false) {
        let node = g.node(n);
        let mut m = match node.op {
            Op::Const(v) => [1, 0, exact_rank(v as i128)],
            Op::Var(_) | Op::Invalid => [1, 0, 0],
            op => [weight(op), 0, 0],
        };
        if node.op == Op::Where && g.node(node.src()[1]).op == Op::Invalid {
            m[1] = 1;
        }
        for s in node.src() {
            let c = memo[s];
            for k in 0..3 {
                m[k] = m[k].saturating_add(c[k]);
            }
        }
        memo.insert(n, m);
    }
    memo[&root]
}

/// Whether rewriting `before` to `after` (two nodes of one graph)
/// decreases the order, and by which measure.
pub fn compare(g: &Graph, before: NodeId, after: NodeId) -> Result<Component, Ground> {
    let fail =
        |component, why: String| Err(Ground::NotDecreasing(NotDecreasing { component, why }));
    let [bs, bg, bc] = measures(g, before);
    let [a_s, ag, ac] = measures(g, after);
    if bs != a_s {
        return if bs > a_s {
            Ok(Component::Size)
        } else {
            fail(Component::Size, format!("{bs} to {a_s} nodes"))
        };
    }
    if bg != ag {
        return if bg > ag {
            Ok(Component::Gates)
        } else {
            fail(Component::Gates, format!("{bg} to {ag} gates"))
        };
    }
    match PathOrder::new(g).cmp(before, after) {
        Err(OverBudget) => Err(Ground::TooLarge),
        Ok(Cmp::Gt) => Ok(Component::Ops),
        Ok(Cmp::Eq) if bc > ac => Ok(Component::Constants),
        Ok(Cmp::Eq) => fail(
            Component::Constants,
            format!("the same up to constants, whose ranks go from {bc} to {ac}"),
        ),
        Ok(_) => fail(
            Component::Ops,
            "the result is not below the term in the path order".into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::RuleSet;

    fn rule(text: &str) -> Rule {
        RuleSet::parse("t.rules", text)
            .expect("parses")
            .rules()
            .next()
            .expect("one rule")
            .clone()
    }

    fn decided(text: &str) -> Result<Component, String> {
        match check(&rule(text)) {
            Check::Decreases(c) => Ok(c),
            Check::Constants(_) => Err("constants: for the solver".into()),
            Check::Fails(n) => Err(n.to_string()),
            Check::Undecided(why) => Err(why),
        }
    }

    #[test]
    fn a_rule_that_duplicates_a_variable_does_not_decrease() {
        let e = decided("rule twice: a * 2 => a + a\n").unwrap_err();
        assert!(
            e.contains("`a` occurs twice on the right and once on the left"),
            "{e}"
        );
    }

    #[test]
    fn a_rule_whose_right_side_contains_its_left_does_not_decrease() {
        let e = decided("rule grow: x + y => (x + y) + 0\n").unwrap_err();
        assert!(e.starts_with("size"), "{e}");
    }

    #[test]
    fn each_measure_decides_the_rules_it_is_for() {
        assert_eq!(decided("rule r: x + 0 => x\n"), Ok(Component::Size));
        // `!` weighs nothing: flipping the gate is decided by the gates.
        assert_eq!(
            decided("rule r: where(c, invalid, x) => where(!c, x, invalid) if valid(x)\n"),
            Ok(Component::Gates)
        );
        // An op pushed into a gate, a product distributed over a sum.
        assert_eq!(
            decided("rule r: where(c, x, invalid) + y => where(c, x + y, invalid)\n"),
            Ok(Component::Ops)
        );
        assert_eq!(
            decided("rule r: (x + C1) * C2 => x * C2 + C1 * C2\n"),
            Ok(Component::Ops)
        );
        // The reverse of a decreasing rule does not decrease.
        assert!(decided("rule r: x * C2 + C3 => (x + C3) * C2\n").is_err());
        // A literal constant that shrinks.
        assert_eq!(
            decided("rule r: x % -3 => x % 3\n"),
            Ok(Component::Constants)
        );
        assert!(decided("rule r: x % 3 => x % -3\n").is_err());
    }

    #[test]
    fn a_computed_constant_is_left_to_the_solver() {
        match check(&rule("rule r: x % C => x % -C if C < -1\n")) {
            Check::Constants(q) => {
                assert_eq!(q.lhs.len(), 1);
                assert_eq!(q.rhs.len(), 1);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_guard_that_a_variable_is_no_constant_lets_it_outrank_one() {
        assert_eq!(
            decided("rule r: x => vmin(x) if vmin(x) == vmax(x) && valid(x) && !is_const(x)\n"),
            Ok(Component::Ops)
        );
        assert!(decided("rule r: x => vmin(x) if vmin(x) == vmax(x) && valid(x)\n").is_err());
    }

    #[test]
    fn concrete_terms_compare_by_the_first_measure_that_differs() {
        let mut p = crate::text::parse::parse_program(
            "var x in [0, 7]\nexpr x * 2\nexpr x + x\nexpr (x + 1) * 2\nexpr x * 2 + 2\n",
        )
        .unwrap();
        let o = p.outputs.clone();
        let g = &mut p.graph;
        assert!(matches!(
            compare(g, o[0], o[1]),
            Err(Ground::NotDecreasing(_))
        ));
        assert_eq!(compare(g, o[1], o[0]), Ok(Component::Size));
        assert_eq!(compare(g, o[2], o[3]), Ok(Component::Ops));
    }
}
