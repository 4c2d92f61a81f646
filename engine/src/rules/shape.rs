//! A rule's shape: what a node must be for the rule's left side to match
//! it, read once from the pattern's root and operands (and from the
//! guard's top-level conjuncts about a bare root variable), so that the
//! rewriter can pass over a rule without binding anything.
//!
//! Every condition here is one that matching ([`super::matching`]) or the
//! guard checks anyway: a node a shape refuses is a node the rule does not
//! fire at. A shape only says no sooner.

use super::ast::{Guard, Pat, Rule, Ty};
use super::guard::conjuncts;
use crate::ir::{DType, Graph, NodeId, Op};

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

/// What a node and its operands are, as shapes ask.
#[derive(Clone, Copy, Debug, Default)]
struct Fact {
    op: usize,
    konst: Option<i64>,
    invalid: bool,
}

impl Fact {
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
    args: [Fact; 3],
}

impl Site {
    pub fn of(g: &Graph, n: NodeId) -> Site {
        let node = g.node(n);
        let mut args = [Fact::default(); 3];
        for (a, &s) in args.iter_mut().zip(node.src()) {
            *a = Fact::of(g, s);
        }
        Site {
            node: Fact::of(g, n),
            dtype: node.dtype,
            args,
        }
    }
}

/// A rule's shape (see the module documentation).
#[derive(Clone, Debug)]
pub struct Shape {
    root: Req,
    dtype: Option<DType>,
    args: Vec<Req>,
    /// The root op is commutative: the operands may match swapped.
    commutative: bool,
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
                vec![],
                false,
            ),
            p => (Req::of(rule, p), None, vec![], false),
        };
        // `x => ... if ... && !is_const(x)`: never at a constant.
        if let (Pat::Var(v), Req::Any) = (&rule.lhs, root) {
            if rule
                .guard
                .iter()
                .flat_map(conjuncts)
                .any(|c| matches!(c, Guard::Un(Op::Not, inner) if **inner == Guard::IsConst(*v)))
            {
                root = Req::NonConst;
            }
        }
        Shape {
            root,
            dtype,
            args,
            commutative,
        }
    }

    /// Whether the rule may match at `site`; false only where it cannot.
    #[inline]
    pub fn admits(&self, site: &Site) -> bool {
        if !self.root.admits(&site.node) || self.dtype.is_some_and(|d| d != site.dtype) {
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
        Shape::of(rule).admits(&Site::of(&p.graph, p.outputs[0]))
    }

    #[test]
    fn a_guard_that_excludes_constants_keeps_the_rule_off_them() {
        // int_decided: x => vmin(x) if ... && !is_const(x)
        assert!(!admits("int_decided", "5"));
        assert!(admits("int_decided", "x"));
        assert!(admits("int_decided", "x + y"));
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
    fn a_fixed_dtype_at_the_root_is_checked() {
        // bool_decided_true: x:bool => true if ...
        assert!(admits("bool_decided_true", "y < 10"));
        assert!(!admits("bool_decided_true", "y"));
    }
}
