//! A rule's shape: what a node must be for the rule's left side to match
//! it, read once from the pattern's root and operands (and from the
//! guard's top-level conjuncts about a bare root variable: `!is_const(x)`,
//! `valid(x)`, comparisons of `vmin(x)`, `vmax(x)` and literals), so that
//! the rewriter can pass over a rule without binding anything.
//!
//! Every condition here is one that matching ([`super::matching`]) or the
//! guard checks anyway: a node a shape refuses is a node the rule does not
//! fire at. A shape only says no sooner.

use super::ast::{Guard, IExpr, Pat, Rule, Ty};
use super::guard::{conjuncts, range_at};
use crate::ir::dtype::Width;
use crate::ir::{DType, Graph, NodeId, Op};
use smallvec::SmallVec;

/// What one node must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Req {
    Any,
    /// A constant (a constant variable).
    Const,
    /// Not a constant (a root variable whose guard says `!is_const`).
    NonConst,
    /// This constant (a literal).
    Lit(i64),
    /// A node of this op (its position in the op table; not a leaf).
    Op(usize),
    Invalid,
}

impl Req {
    fn of(rule: &Rule, p: &Pat) -> Req {
        match p {
            Pat::Var(v) if rule.vars[*v].is_const => Req::Const,
            Pat::Lit(v, _) => Req::Lit(*v),
            Pat::Invalid => Req::Invalid,
            Pat::Op(op, ..) => Req::Op(op.index()),
            _ => Req::Any,
        }
    }

    /// Whether a node of operand kind `k` ([`Fact::kind`]) may satisfy
    /// this; false only where [`Req::admits`] is false for every such node.
    fn admits_kind(self, k: usize) -> bool {
        match self {
            Req::Any => true,
            Req::Const | Req::Lit(_) => k == KIND_CONST,
            Req::NonConst | Req::Op(_) => k != KIND_CONST,
            Req::Invalid => k == KIND_INVALID,
        }
    }

    /// The op (its position in the op table) a node must have, when this
    /// asks for one: what the packed test ([`Shape::admits`]) compares.
    fn op_byte(self) -> Option<u8> {
        match self {
            Req::Const | Req::Lit(_) => Some(const_index()),
            Req::Op(op) => Some(op as u8),
            Req::Invalid => Some(Op::Invalid.index() as u8),
            Req::Any | Req::NonConst => None,
        }
    }

    /// Whether the packed code says all this asks (a literal's low byte
    /// does not).
    fn packed_is_all(self) -> bool {
        !matches!(self, Req::Lit(_))
    }

    #[inline]
    fn admits(self, n: &Fact) -> bool {
        match self {
            Req::Any => true,
            Req::Const => n.konst.is_some(),
            Req::NonConst => n.konst.is_none(),
            Req::Lit(v) => n.konst == Some(v),
            Req::Op(op) => n.op == op,
            Req::Invalid => n.invalid,
        }
    }
}

/// The position of constants in the op table.
fn const_index() -> u8 {
    Op::Const(0).index() as u8
}

/// Bytes of the packed code ([`Site::code`]): the node's op, its
/// operands' ops, its dtype, the low bytes of its first two operands'
/// constant values (0 for an operand that is not a constant: a literal's
/// low byte is necessary, not sufficient), and whether the node is a
/// constant.
const ROOT: u32 = 0;
const ARG: [u32; 3] = [8, 16, 24];
const DTYPE: u32 = 32;
const LOW: [u32; 2] = [40, 48];
const IS_CONST: u32 = 56;

/// The low byte of a constant's value, as the packed code holds it.
fn low_byte(v: i64) -> u64 {
    v as u64 & 0xff
}

/// What a node and its operands are, as shapes ask.
#[derive(Clone, Copy, Debug, Default)]
struct Fact {
    op: usize,
    konst: Option<i64>,
    invalid: bool,
}

/// The kinds of operand the rewriter's dispatch tables tell apart: a
/// constant, `invalid`, anything else.
const KIND_CONST: usize = 0;
const KIND_INVALID: usize = 1;
const KIND_OTHER: usize = 2;

/// How many pairs of the first two operands' kinds there are
/// ([`Site::kinds`], [`Shape::admits_kinds`]).
pub const KIND_PAIRS: usize = 9;

impl Fact {
    fn kind(&self) -> usize {
        if self.konst.is_some() {
            KIND_CONST
        } else if self.invalid {
            KIND_INVALID
        } else {
            KIND_OTHER
        }
    }

    fn of(g: &Graph, n: NodeId) -> Fact {
        let node = g.node(n);
        Fact {
            op: node.op.index(),
            konst: node.as_const(),
            invalid: node.op == Op::Invalid,
        }
    }
}

/// A node and its operands, read once for every rule tried at it.
#[derive(Clone, Copy, Debug)]
pub struct Site {
    node: Fact,
    dtype: DType,
    /// The node's range as a guard at the width sees it
    /// ([`super::guard::range_at`]).
    range: Option<(i128, i128)>,
    maybe_invalid: bool,
    args: [Fact; 3],
    src: [NodeId; 3],
    /// The ops of the node and its operands and its dtype, one byte each
    /// ([`ROOT`], [`ARG`], [`DTYPE`]), and the same with the first two
    /// operands swapped: most shapes are told by one mask and compare.
    code: u64,
    swapped: u64,
}

impl Site {
    /// Node `n`, for rules judged at width `w`.
    pub fn of(g: &Graph, n: NodeId, w: Width) -> Site {
        let node = g.node(n);
        let mut args = [Fact::default(); 3];
        let mut src = [NodeId::NONE; 3];
        for ((a, s), &c) in args.iter_mut().zip(&mut src).zip(node.src()) {
            *a = Fact::of(g, c);
            *s = c;
        }
        let byte =
            |f: &Fact, at: usize| (f.op as u64) << ARG[at] | f.konst.map_or(0, low_byte) << LOW[at];
        let fact = Fact::of(g, n);
        let common = (fact.op as u64) << ROOT
            | (args[2].op as u64) << ARG[2]
            | (node.dtype as u64) << DTYPE
            | u64::from(fact.konst.is_some()) << IS_CONST;
        Site {
            code: common | byte(&args[0], 0) | byte(&args[1], 1),
            swapped: common | byte(&args[1], 0) | byte(&args[0], 1),
            node: fact,
            dtype: node.dtype,
            range: range_at(node, w),
            maybe_invalid: node.maybe_invalid,
            args,
            src,
        }
    }
}

impl Site {
    /// The kinds of the first two operands (a missing one is "other"), as
    /// one index below [`KIND_PAIRS`].
    #[inline]
    pub fn kinds(&self) -> usize {
        self.args[0].kind() * 3 + self.args[1].kind()
    }
}

/// A term of a root condition: a bound of the root's range, or a literal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Term {
    Lo,
    Hi,
    Int(i128),
}

impl Term {
    /// `vmin(x)`, `vmax(x)` of the root variable `x`, or a literal.
    fn of(g: &Guard, root: usize) -> Option<Term> {
        match g {
            Guard::VMin(IExpr::Var(v)) if *v == root => Some(Term::Lo),
            Guard::VMax(IExpr::Var(v)) if *v == root => Some(Term::Hi),
            Guard::Int(c) => Some(Term::Int(*c)),
            _ => None,
        }
    }

    fn value(self, (lo, hi): (i128, i128)) -> i128 {
        match self {
            Term::Lo => lo,
            Term::Hi => hi,
            Term::Int(c) => c,
        }
    }
}

/// A top-level conjunct of a guard about a bare root variable, judged on
/// the site alone: exactly the conjunct's value there, since the guard
/// evaluator reads the same node facts (and a bound of a range with no
/// value left has no value, so a comparison of it does not hold).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RootCond {
    Valid,
    /// `a op b` with `op` one of `< <= == !=`.
    Cmp(Op, Term, Term),
}

impl RootCond {
    fn of(g: &Guard, root: usize) -> Option<RootCond> {
        match g {
            Guard::Valid(v) if *v == root => Some(RootCond::Valid),
            Guard::Bin(op @ (Op::Lt | Op::Le | Op::Eq | Op::Ne), a, b) => {
                Some(RootCond::Cmp(*op, Term::of(a, root)?, Term::of(b, root)?))
            }
            _ => None,
        }
    }

    #[inline]
    fn holds(self, site: &Site) -> bool {
        match self {
            RootCond::Valid => !site.maybe_invalid,
            RootCond::Cmp(op, a, b) => site.range.is_some_and(|r| {
                let (a, b) = (a.value(r), b.value(r));
                match op {
                    Op::Lt => a < b,
                    Op::Le => a <= b,
                    Op::Eq => a == b,
                    _ => a != b,
                }
            }),
        }
    }
}

/// A rule's shape (see the module documentation).
#[derive(Clone, Debug)]
pub struct Shape {
    root: Req,
    dtype: Option<DType>,
    /// Inline: the rewriter reads every candidate rule's shape at every
    /// node, and following a pointer per rule was most of that cost.
    args: SmallVec<[Req; 3]>,
    /// The root op is commutative: the operands may match swapped.
    commutative: bool,
    /// Two operands that are one pattern variable: the same node.
    same: Option<(usize, usize)>,
    /// Conjuncts of the guard about a bare root variable.
    conds: Vec<RootCond>,
    /// The packed test: a site whose code ([`Site::code`], or its swapped
    /// code for a commutative root) masked is `value` may match; one whose
    /// code is not cannot.
    mask: u64,
    value: u64,
    /// The packed test is the whole test (no literal, no repeated
    /// variable, no condition).
    packed_is_all: bool,
}

impl Shape {
    pub fn of(rule: &Rule) -> Shape {
        let (mut root, dtype, args, commutative) = match &rule.lhs {
            Pat::Op(op, t, args) => (
                Req::Op(op.index()),
                fixed(*t),
                args.iter().map(|a| Req::of(rule, a)).collect(),
                op.is_commutative() && args.len() == 2,
            ),
            Pat::Var(v) => (
                Req::of(rule, &rule.lhs),
                fixed(rule.vars[*v].ty),
                SmallVec::new(),
                false,
            ),
            p => (Req::of(rule, p), None, SmallVec::new(), false),
        };
        let mut conds = Vec::new();
        if let Pat::Var(v) = rule.lhs {
            for c in rule.guard.iter().flat_map(conjuncts) {
                // `x => ... if ... && !is_const(x)`: never at a constant.
                if matches!(c, Guard::Un(Op::Not, inner) if **inner == Guard::IsConst(v))
                    && root == Req::Any
                {
                    root = Req::NonConst;
                }
                conds.extend(RootCond::of(c, v));
            }
        }
        let same = match &rule.lhs {
            Pat::Op(_, _, a) => (0..a.len()).find_map(|i| {
                let Pat::Var(v) = a[i] else { return None };
                (i + 1..a.len())
                    .find(|&j| matches!(a[j], Pat::Var(u) if u == v))
                    .map(|j| (i, j))
            }),
            _ => None,
        };
        let (mut mask, mut value) = (0u64, 0u64);
        for (req, at) in std::iter::once((root, ROOT)).chain(args.iter().copied().zip(ARG)) {
            if let Some(b) = req.op_byte() {
                mask |= 0xff << at;
                value |= (b as u64) << at;
            }
        }
        for (req, at) in args.iter().zip(LOW) {
            if let Req::Lit(v) = req {
                mask |= 0xff << at;
                value |= low_byte(*v) << at;
            }
        }
        if root == Req::NonConst {
            mask |= 1 << IS_CONST;
        }
        if let Some(d) = dtype {
            mask |= 0xff << DTYPE;
            value |= (d as u64) << DTYPE;
        }
        let packed_is_all = same.is_none()
            && conds.is_empty()
            && std::iter::once(root)
                .chain(args.iter().copied())
                .all(Req::packed_is_all);
        Shape {
            root,
            dtype,
            args,
            commutative,
            same,
            conds,
            mask,
            value,
            packed_is_all,
        }
    }

    /// Whether the rule may match at a site whose first two operands have
    /// the kinds `kinds` ([`Site::kinds`]); false only where [`Shape::admits`]
    /// is false at every such site, so a table of the rules admitting each
    /// pair of kinds drops no rule that could fire.
    pub fn admits_kinds(&self, kinds: usize) -> bool {
        let (k0, k1) = (kinds / 3, kinds % 3);
        let ok = |a: usize, b: usize| self.args.iter().zip([a, b]).all(|(r, k)| r.admits_kind(k));
        ok(k0, k1) || (self.commutative && ok(k1, k0))
    }

    /// Whether the rule may match a node of `op`, whatever the node; false
    /// only where [`Shape::admits`] is false at every such node (a leaf's
    /// op says what the leaf is).
    pub fn admits_op(&self, op: Op) -> bool {
        match self.root {
            Req::Any => true,
            Req::Const | Req::Lit(_) => matches!(op, Op::Const(_)),
            Req::NonConst => !matches!(op, Op::Const(_)),
            Req::Op(i) => op.index() == i,
            Req::Invalid => op == Op::Invalid,
        }
    }

    /// Whether the rule may match at `site`; false only where it cannot.
    #[inline]
    pub fn admits(&self, site: &Site) -> bool {
        let packed = site.code & self.mask == self.value
            || (self.commutative && site.swapped & self.mask == self.value);
        packed && (self.packed_is_all || self.admits_each(site))
    }

    /// [`Shape::admits`] requirement by requirement.
    fn admits_each(&self, site: &Site) -> bool {
        if !self.root.admits(&site.node) || self.dtype.is_some_and(|d| d != site.dtype) {
            return false;
        }
        if self.same.is_some_and(|(i, j)| site.src[i] != site.src[j])
            || !self.conds.iter().all(|c| c.holds(site))
        {
            return false;
        }
        let in_order = self.args.iter().zip(&site.args).all(|(r, a)| r.admits(a));
        in_order
            || (self.commutative
                && self.args[0].admits(&site.args[1])
                && self.args[1].admits(&site.args[0]))
    }
}

fn fixed(t: Ty) -> Option<DType> {
    match t {
        Ty::Fixed(d) => Some(d),
        Ty::Var(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::builtin;
    use crate::text::parse::parse_program;

    /// The shape of built-in rule `name` at the root of `src`.
    fn admits(name: &str, src: &str) -> bool {
        let p = parse_program(&format!("var x in [3, 3]\nvar y in [0, 9]\nexpr {src}\n")).unwrap();
        let rule = builtin().rule(name).unwrap();
        Shape::of(rule).admits(&Site::of(&p.graph, p.outputs[0], Width::W64))
    }

    #[test]
    fn the_guard_of_a_bare_root_variable_is_judged_on_the_node() {
        // int_decided: x => vmin(x) if vmin(x) == vmax(x) && valid(x) && !is_const(x)
        assert!(!admits("int_decided", "5"));
        assert!(admits("int_decided", "x"));
        assert!(admits("int_decided", "x * 2"));
        assert!(!admits("int_decided", "x + y"));
        assert!(!admits("int_decided", "where(y < 4, x, invalid)"));
        // bool_decided_true: x:bool => true if vmin(x) == 1 && !is_const(x)
        assert!(admits("bool_decided_true", "y < 10"));
        assert!(!admits("bool_decided_true", "y < 5"));
        assert!(!admits("bool_decided_true", "y"));
        // bool_decided_false: x:bool => false if vmax(x) == 0 && !is_const(x)
        assert!(admits("bool_decided_false", "y > 10"));
        assert!(!admits("bool_decided_false", "y > 5"));
    }

    #[test]
    fn a_range_cut_to_the_width_is_the_one_the_guard_sees() {
        // At 8 bits, [100, 1000] is [100, 127]; [127, 1027] is one value.
        let p = parse_program("var x in [100, 1000]\nexpr x\nexpr x + 27\n").unwrap();
        let rule = builtin().rule("int_decided").unwrap();
        let at = |n, w| Shape::of(rule).admits(&Site::of(&p.graph, n, w));
        assert!(!at(p.outputs[0], Width(8)) && !at(p.outputs[0], Width::W64));
        assert!(at(p.outputs[1], Width(8)) && !at(p.outputs[1], Width::W64));
    }

    #[test]
    fn operands_are_checked_in_either_order_for_a_commutative_root() {
        // fold_add: (C1:T) + C2
        assert!(admits("fold_add", "1 + 2"));
        assert!(!admits("fold_add", "x + 2"));
        // lt_offset: x + C1 < C2 (not commutative)
        assert!(admits("lt_offset", "y + 1 < 4"));
        assert!(!admits("lt_offset", "4 < y + 1"));
        assert!(!admits("lt_offset", "y * 2 < 4"));
    }

    #[test]
    fn the_packed_test_says_what_the_requirements_say() {
        let programs = [
            "var x in [0, 9]\nvar y in [-4, 4]\nexpr (x + 3) * 2 + y mod 4 - x // 2\n",
            "var x in [0, 9]\nvar y in [-4, 4]\nexpr min(x, 3) < y + 1 && x * y != 0 || x == y\n",
            "var x in [0, 9]\nvar y in [1, 4]\nexpr where(x < 4, x / y, invalid) + (x % y) * -1\n",
            "var x in [3, 3]\nvar y in [0, 9]\nexpr x + 0 + (y - y) + y // 1\nexpr i32(y) * i32(0) + i32(x) - i32(x)\n",
        ];
        let mut told = 0;
        for src in programs {
            let p = parse_program(src).unwrap();
            let nodes = p.graph.reachable(&p.outputs);
            for rule in builtin().rules() {
                let shape = Shape::of(rule);
                for &n in &nodes {
                    let site = Site::of(&p.graph, n, Width::W64);
                    let each = shape.root.admits(&site.node) && shape.admits_each(&site);
                    assert_eq!(
                        shape.admits(&site),
                        each,
                        "{} at node {n:?} of {src}",
                        rule.name
                    );
                    told += usize::from(each);
                }
            }
        }
        assert!(
            told > 20,
            "the programs exercise the shapes ({told} admitted)"
        );
    }

    #[test]
    fn operands_that_are_one_variable_must_be_one_node() {
        // lt_self: x < x
        assert!(admits("lt_self", "y < y"));
        assert!(!admits("lt_self", "y < x"));
    }
}
