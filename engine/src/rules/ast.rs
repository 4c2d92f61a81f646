//! The rule DSL's syntax tree: patterns (left sides), templates (right
//! sides), guards, and the rule itself, with its pattern and type
//! variables.

use crate::ir::truediv::Round;
use crate::ir::{DType, NodeId, Op};

/// The dtype of a pattern node: fixed, or a type variable of the rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    Fixed(DType),
    Var(usize),
}

/// A type variable of a rule and the dtypes it ranges over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TyVar {
    /// The name written in the rule (`T`), or `_` for an inferred one.
    pub name: String,
    pub domain: Vec<DType>,
}

/// A pattern variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatVar {
    pub name: String,
    /// Matches constants only (name starts with an uppercase letter).
    pub is_const: bool,
    pub ty: Ty,
}

/// A pattern (left side) or template (right side).
#[derive(Debug, Eq)]
pub enum Pat {
    /// A pattern variable (index into [`Rule::vars`]).
    Var(usize),
    /// An integer or bool literal.
    Lit(i64, Ty),
    Invalid,
    /// An operation; `Ty` is its result dtype (the target for casts).
    Op(Op, Ty, Vec<Pat>),
    /// Right side only: a subterm of constants, literals and range bounds,
    /// computed when the rule fires.
    Computed(Box<Pat>),
    /// Right side only: `vmin(x)` (false) or `vmax(x)` (true) of a matched
    /// subterm, as a constant.
    Bound(usize, bool),
    /// Right side only, inside a computed constant: a guard helper on
    /// constants (`log2(C)`).
    Helper(Helper, Vec<Pat>),
}

/// Dropping a deep pattern frees its nodes from a list, not by recursion
/// (a generated rule may be a chain of 10^6 terms).
impl Drop for Pat {
    fn drop(&mut self) {
        let mut stack: Vec<Pat> = Vec::new();
        let take = |p: &mut Pat, stack: &mut Vec<Pat>| match p {
            Pat::Op(_, _, args) | Pat::Helper(_, args) => stack.append(args),
            Pat::Computed(inner) => stack.push(std::mem::replace(&mut **inner, Pat::Invalid)),
            _ => {}
        };
        take(self, &mut stack);
        // Each node is dropped with its children already moved to the
        // list, so its own drop finds nothing to do.
        while let Some(mut p) = stack.pop() {
            take(&mut p, &mut stack);
        }
    }
}

/// Cloning and comparing recurse on a pattern's depth through
/// [`crate::deep::grow`] (a generated rule may be a chain of 10^6 terms:
/// laying it over the built-in rules clones it).
impl Clone for Pat {
    fn clone(&self) -> Pat {
        crate::deep::grow(|| match self {
            Pat::Var(v) => Pat::Var(*v),
            Pat::Lit(v, t) => Pat::Lit(*v, *t),
            Pat::Invalid => Pat::Invalid,
            Pat::Op(op, t, args) => Pat::Op(*op, *t, args.clone()),
            Pat::Computed(inner) => Pat::Computed(inner.clone()),
            Pat::Bound(v, hi) => Pat::Bound(*v, *hi),
            Pat::Helper(h, args) => Pat::Helper(*h, args.clone()),
        })
    }
}

impl PartialEq for Pat {
    fn eq(&self, other: &Pat) -> bool {
        crate::deep::grow(|| match (self, other) {
            (Pat::Var(a), Pat::Var(b)) => a == b,
            (Pat::Lit(a, s), Pat::Lit(b, t)) => a == b && s == t,
            (Pat::Invalid, Pat::Invalid) => true,
            (Pat::Op(o, s, a), Pat::Op(p, t, b)) => o == p && s == t && a == b,
            (Pat::Computed(a), Pat::Computed(b)) => a == b,
            (Pat::Bound(a, x), Pat::Bound(b, y)) => a == b && x == y,
            (Pat::Helper(g, a), Pat::Helper(h, b)) => g == h && a == b,
            _ => false,
        })
    }
}

impl Pat {
    /// Number of pattern nodes.
    pub fn size(&self) -> usize {
        self.nodes().len()
    }

    /// The patterns directly inside this one.
    pub fn children(&self) -> &[Pat] {
        match self {
            Pat::Op(_, _, args) | Pat::Helper(_, args) => args,
            Pat::Computed(inner) => std::slice::from_ref(&**inner),
            Pat::Var(_) | Pat::Lit(..) | Pat::Invalid | Pat::Bound(..) => &[],
        }
    }

    /// This pattern and every pattern inside it, found without recursion
    /// (a generated rule may be a chain of any length).
    pub fn nodes(&self) -> Vec<&Pat> {
        let (mut out, mut todo) = (Vec::new(), vec![self]);
        while let Some(p) = todo.pop() {
            out.push(p);
            todo.extend(p.children());
        }
        out
    }
}

/// Guard helpers beyond the operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Helper {
    /// `gcd(a, b)`: non-negative, `gcd(0, 0) == 0`.
    Gcd,
    /// `abs(a)`.
    Abs,
    /// `min(a, b)`, `max(a, b)`.
    Min,
    Max,
    /// `divides(d, n)`: `d != 0` and `n` is a multiple of `d`.
    Divides,
    /// `is_pow2(n)`: `n` is a positive power of two.
    IsPow2,
    /// `log2(n)`: `k` with `2^k == n`, for a positive power of two
    /// (undefined otherwise).
    Log2,
    /// `ceil_truediv(a, b)`, `floor_truediv(a, b)`, `trunc_truediv(a, b)`:
    /// Python's `math.ceil(a / b)`, `math.floor(a / b)`, `int(a / b)` on
    /// ints (the correctly rounded double of `a / b`, rounded to an
    /// integer); undefined where Python raises (`b == 0`, an overflow).
    TrueDiv(Round),
}

impl Helper {
    pub const ALL: [Helper; 10] = [
        Helper::Gcd,
        Helper::Abs,
        Helper::Min,
        Helper::Max,
        Helper::Divides,
        Helper::IsPow2,
        Helper::Log2,
        Helper::TrueDiv(Round::Ceil),
        Helper::TrueDiv(Round::Floor),
        Helper::TrueDiv(Round::Trunc),
    ];

    /// The name a guard writes.
    pub fn name(self) -> &'static str {
        match self {
            Helper::Gcd => "gcd",
            Helper::Abs => "abs",
            Helper::Min => "min",
            Helper::Max => "max",
            Helper::Divides => "divides",
            Helper::IsPow2 => "is_pow2",
            Helper::Log2 => "log2",
            Helper::TrueDiv(r) => r.helper_name(),
        }
    }

    pub fn by_name(name: &str) -> Option<Helper> {
        Helper::ALL.into_iter().find(|h| h.name() == name)
    }

    pub fn arity(self) -> usize {
        match self {
            Helper::Abs | Helper::IsPow2 | Helper::Log2 => 1,
            _ => 2,
        }
    }

    /// A condition (else a number).
    pub fn is_condition(self) -> bool {
        matches!(self, Helper::Divides | Helper::IsPow2)
    }
}

/// An interval expression: `+ - *` and negation over matched subterms,
/// constants and literals, evaluated by interval arithmetic on their ranges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IExpr {
    /// A matched subterm (its range) or constant (a point).
    Var(usize),
    /// A number computed from constants alone (a point).
    Scalar(Box<Guard>),
    Neg(Box<IExpr>),
    Bin(Op, Box<IExpr>, Box<IExpr>),
}

/// A guard expression. Integer-valued parts are exact (mathematical
/// integers); a guard that divides by zero anywhere is false.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Guard {
    Int(i128),
    Bool(bool),
    /// The value of a constant variable.
    Val(usize),
    /// `vmin(e)` / `vmax(e)`: bounds of an interval expression over matched
    /// subterms (for a lone variable, its range).
    VMin(IExpr),
    VMax(IExpr),
    /// `fits(e)`: every value `e` can take (by interval arithmetic) fits the
    /// dtype `Ty`: computing it cannot overflow.
    Fits(IExpr, Ty),
    /// `valid(x)`: the matched subterm can never be invalid (no `invalid`
    /// leaf below it).
    Valid(usize),
    /// `constrained(x)`: the matched subterm can never be unconstrained (no
    /// comparison of a possibly invalid value below it).
    Constrained(usize),
    /// `is_const(x)`: the matched subterm is a constant node. A matching
    /// restriction (for termination), not a fact about values.
    IsConst(usize),
    /// `min_of(T)` / `max_of(T)`: the value bounds of a dtype.
    TyMin(Ty),
    TyMax(Ty),
    /// `-a`, `!a`.
    Un(Op, Box<Guard>),
    /// Arithmetic (both division families), comparisons, `&& ||`.
    Bin(Op, Box<Guard>, Box<Guard>),
    Call(Helper, Vec<Guard>),
}

/// A lemma a rule cites as a proof hint (`using NAME` or
/// `using NAME(ARGS)`): the verifier assumes the proved lemma's instances
/// in the rule's query; the engine ignores it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LemmaUse {
    pub name: String,
    /// Arguments, expressions over the rule's pattern variables (`None`:
    /// every assignment of the rule's integer pattern variables to the
    /// lemma's parameters).
    pub args: Option<Vec<crate::text::parse::Ast>>,
}

/// One declarative rule.
#[derive(Clone, Debug)]
pub struct Rule {
    pub name: String,
    /// The comment line(s) right above the rule: the identity it states.
    pub comment: String,
    pub group: String,
    /// Where it is written (file label and line), for messages.
    pub file: String,
    pub line: u32,
    pub lhs: Pat,
    pub rhs: Pat,
    pub guard: Option<Guard>,
    pub vars: Vec<PatVar>,
    pub tyvars: Vec<TyVar>,
    /// The rule as written (after the name), for reports.
    pub text: String,
    /// Lemmas cited as proof hints (`using ...`), in order.
    pub lemmas: Vec<LemmaUse>,
    /// Why the rule stops although it does not decrease the reduction
    /// order (a `terminates:` line in its file; see
    /// [`crate::rules::reduction`]), shown in every report; `None` for a
    /// rule that must decrease it.
    pub terminates: Option<String>,
}

impl Rule {
    /// The root op of the left side, for dispatch (`None`: any node).
    pub fn root_op(&self) -> Option<Op> {
        match &self.lhs {
            Pat::Op(op, ..) => Some(*op),
            Pat::Lit(..) => Some(Op::Const(0)),
            Pat::Invalid => Some(Op::Invalid),
            _ => None,
        }
    }

    /// Every assignment of dtypes to the rule's type variables.
    pub fn instances(&self) -> Vec<Vec<DType>> {
        let mut out = vec![Vec::new()];
        for tv in &self.tyvars {
            out = out
                .into_iter()
                .flat_map(|prefix| {
                    tv.domain.iter().map(move |&d| {
                        let mut p = prefix.clone();
                        p.push(d);
                        p
                    })
                })
                .collect();
        }
        out
    }

    /// The dtype of a pattern under a type assignment.
    pub fn pat_dtype(&self, p: &Pat, types: &[DType]) -> DType {
        crate::deep::grow(|| {
            let bound: Vec<Option<DType>> = types.iter().map(|&d| Some(d)).collect();
            match p {
                Pat::Var(v) | Pat::Bound(v, _) => resolve_ty(self.vars[*v].ty, &bound),
                Pat::Lit(_, t) | Pat::Op(_, t, _) => resolve_ty(*t, &bound),
                Pat::Invalid => DType::Index,
                Pat::Computed(inner) => self.pat_dtype(inner, types),
                Pat::Helper(_, args) => self.pat_dtype(&args[0], types),
            }
        })
    }
}

/// The dtype a pattern type has under a binding.
pub fn resolve_ty(t: Ty, types: &[Option<DType>]) -> DType {
    match t {
        Ty::Fixed(d) => d,
        Ty::Var(k) => types[k].expect("every type variable is bound by the left side"),
    }
}

/// The bindings of one match: a node per pattern variable, a dtype per type
/// variable.
#[derive(Clone, Debug)]
pub struct Binding {
    // Inline: a binding is made for every rule tried at a node, and rules
    // have few variables.
    pub nodes: smallvec::SmallVec<[Option<NodeId>; 8]>,
    pub types: smallvec::SmallVec<[Option<DType>; 4]>,
}
