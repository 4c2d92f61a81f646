//! TVM: a `TVM_TRY_REWRITE_IF(lhs, rhs, cond)` line in the style of
//! `src/arith/rewrite_simplify.cc`: pattern variables `x, y, z, b1, ...`
//! (`PVar<PrimExpr>`) and `c1, c2, ...` (`PVar<IntImm>`), floor division as
//! `floordiv`/`floormod` (TVM's index arithmetic) and truncation as
//! `truncdiv`/`truncmod`, a commutative op's orders listed with
//! `matches_one_of`, and guards over `c1.Eval()->value`,
//! `CanProveGreaterEqual`/`CanProveLess` and `const_int_bound`. TVM has no
//! invalid value (so `valid`/`constrained` always hold), and its bounds
//! clamp to the dtype (so `fits` has no test).

use super::{header, infix_symbol, Dialect, Language, Test, Untranslatable, Walk};
use engine::ir::Op;
use engine::rules::ast::{Guard, Helper, Pat, PatVar, Rule};
use std::fmt::Write;

pub struct Tvm;

/// The pattern variables rewrite_simplify.cc's visitors declare.
const TERMS: [&str; 6] = ["x", "y", "z", "b1", "b2", "b3"];
const CONSTS: [&str; 4] = ["c1", "c2", "c3", "c4"];

/// At most this many orders of commutative operands are listed (each
/// commutative op doubles them).
const MAX_ORDERS: usize = 8;

impl Dialect for Tvm {
    fn language(&self) -> Language {
        Language::Tvm
    }

    fn names(&self, rule: &Rule) -> Result<Vec<String>, String> {
        let (mut t, mut c) = (TERMS.iter(), CONSTS.iter());
        rule.vars
            .iter()
            .map(|v| {
                let next = if v.is_const { c.next() } else { t.next() };
                next.map(|n| n.to_string())
                    .ok_or_else(|| "more pattern variables than a visitor declares".to_string())
            })
            .collect()
    }

    /// The first term variable (`ZeroWithTypeLike(x)`).
    fn anchor(&self, rule: &Rule, names: &[String]) -> String {
        rule.vars.iter().position(|v| !v.is_const).map_or_else(
            || names.first().cloned().unwrap_or_default(),
            |i| names[i].clone(),
        )
    }

    fn pat_var(&self, _: &PatVar, name: &str) -> String {
        name.to_string()
    }

    fn pat_lit(&self, v: i64, boolean: bool, _: usize) -> Option<(String, Option<String>)> {
        (!boolean).then(|| (v.to_string(), None))
    }

    fn pat_invalid(&self, _: usize) -> Option<(String, Option<String>)> {
        None
    }

    fn pat_op(&self, op: Op, a: &[String]) -> Option<String> {
        self.t_op(op, a, false)
    }

    fn lists_orders(&self) -> bool {
        true
    }

    /// TVM's canonical form keeps constants on the right (`x * c1`), as
    /// its own rules assume.
    fn stays_right(&self, spelled: &str) -> bool {
        spelled.parse::<i64>().is_ok() || CONSTS.contains(&spelled)
    }

    fn g_val(&self, name: &str) -> String {
        format!("{name}.Eval()->value")
    }

    fn g_bound(&self, interval: &str, hi: bool) -> String {
        format!(
            "analyzer_->const_int_bound({}.Eval())->{}",
            wrap(interval, UNARY),
            if hi { "max_value" } else { "min_value" }
        )
    }

    fn g_prove(&self, interval: &str, at_least: bool, s: &str) -> Option<String> {
        let test = if at_least {
            "CanProveGreaterEqual"
        } else {
            "CanProveLess"
        };
        Some(format!("{test}({}.Eval(), {s})", wrap(interval, UNARY)))
    }

    /// Always true for `valid` and `constrained`: no TVM value is invalid.
    fn g_test(&self, test: Test, name: &str) -> Option<String> {
        Some(match test {
            Test::Valid | Test::Constrained => "true".to_string(),
            Test::IsConst => format!("{name}.Eval()->IsInstance<IntImmNode>()"),
        })
    }

    fn g_un(&self, op: Op, a: &str) -> String {
        let sign = if op == Op::Neg { "-" } else { "!" };
        format!("{sign}{}", wrap(a, UNARY))
    }

    /// On `int64_t` (C++'s `/` and `%` truncate; TVM's `floordiv` and
    /// `floormod` on integers are in arith/int_operator.h).
    fn g_bin(&self, op: Op, a: &str, b: &str) -> Option<String> {
        Some(match op {
            Op::FloorDiv => format!("floordiv({a}, {b})"),
            Op::Mod => format!("floormod({a}, {b})"),
            Op::Div => infix(a, "/", b),
            Op::Rem => infix(a, "%", b),
            o => infix(a, infix_symbol(o)?, b),
        })
    }

    fn g_helper(&self, h: Helper, a: &[String]) -> Option<String> {
        Some(match (h, a) {
            (Helper::Gcd, [x, y]) => format!("ZeroAwareGCD({x}, {y})"),
            (Helper::Abs, [x]) => format!("std::abs({x})"),
            (Helper::Min, [x, y]) => format!("std::min<int64_t>({x}, {y})"),
            (Helper::Max, [x, y]) => format!("std::max<int64_t>({x}, {y})"),
            _ => return None,
        })
    }

    /// A constant in a bound's term: a constant variable or a literal
    /// (what TVM's patterns take).
    fn i_scalar(&self, scalar: &Guard, value: &str, _: &str) -> Option<String> {
        match scalar {
            Guard::Int(i) => Some(i.to_string()),
            Guard::Val(_) => value.strip_suffix(".Eval()->value").map(str::to_string),
            _ => None,
        }
    }

    fn i_neg(&self, a: &str) -> String {
        infix(a, "*", "-1")
    }

    fn i_bin(&self, op: Op, a: &str, b: &str) -> Option<String> {
        matches!(op, Op::Add | Op::Sub | Op::Mul)
            .then(|| self.t_op(op, &[a.into(), b.into()], false))?
    }

    fn t_var(&self, name: &str, _: bool) -> String {
        name.to_string()
    }

    fn t_lit(&self, v: i64, boolean: bool, _: bool, _: &str) -> Option<String> {
        (!boolean).then(|| v.to_string())
    }

    fn t_invalid(&self, _: &str) -> Option<String> {
        None
    }

    fn t_bound(&self, _: &str, _: bool, _: bool, _: &str) -> Option<String> {
        None
    }

    /// TVM folds the ops of `PVar<IntImm>`s when it evaluates the result.
    fn t_computed(&self, value: &str, _: &str) -> String {
        value.to_string()
    }

    fn t_helper(&self, _: Helper, _: &[String]) -> Option<String> {
        None
    }

    fn t_op(&self, op: Op, a: &[String], _: bool) -> Option<String> {
        Some(match (op, a) {
            (Op::Neg, [x]) => infix(x, "*", "-1"),
            (Op::Not, [x]) => self.g_un(Op::Not, x),
            (Op::Add, [x, y]) => infix(x, "+", y),
            (Op::Sub, [x, y]) => infix(x, "-", y),
            (Op::Mul, [x, y]) => infix(x, "*", y),
            (Op::Div, [x, y]) => format!("truncdiv({x}, {y})"),
            (Op::Rem, [x, y]) => format!("truncmod({x}, {y})"),
            (Op::FloorDiv, [x, y]) => format!("floordiv({x}, {y})"),
            (Op::Mod, [x, y]) => format!("floormod({x}, {y})"),
            (Op::Min, [x, y]) => format!("min({x}, {y})"),
            (Op::Max, [x, y]) => format!("max({x}, {y})"),
            (Op::Lt, [x, y]) => infix(x, "<", y),
            (Op::Le, [x, y]) => infix(x, "<=", y),
            (Op::Eq, [x, y]) => infix(x, "==", y),
            (Op::Ne, [x, y]) => infix(x, "!=", y),
            (Op::And, [x, y]) => infix(x, "&&", y),
            (Op::Or, [x, y]) => infix(x, "||", y),
            (Op::Where, [c, x, y]) => format!("select({c}, {x}, {y})"),
            _ => return None,
        })
    }

    fn rule(&self, w: &Walk<'_, Self>) -> Result<String, Untranslatable> {
        let rule = w.rule();
        let untranslatable = |what: &str| Untranslatable::Pattern {
            rule: rule.name.clone(),
            language: "TVM",
            what: what.to_string(),
        };
        let Some(node) = rule.root_op().and_then(visitor) else {
            return Err(untranslatable(
                "a rule over any term (no visitor matches it)",
            ));
        };
        if w.patterns.len() > MAX_ORDERS {
            return Err(untranslatable(
                "more orders of commutative operands than listed",
            ));
        }
        let lhs = match w.patterns.as_slice() {
            [one] => one.clone(),
            many => format!("matches_one_of({})", many.join(", ")),
        };
        // A lone constant takes the matched term's type.
        let rhs = match &rule.rhs {
            Pat::Lit(0, _) => format!("ZeroWithTypeLike({})", w.anchor()),
            Pat::Lit(1, _) => format!("OneWithTypeLike({})", w.anchor()),
            Pat::Lit(v, _) => format!("PConstWithTypeLike<PVar<PrimExpr>>({}, {v})", w.anchor()),
            _ => w.rhs.clone(),
        };
        let mut out = header(rule, "//");
        let _ = writeln!(
            out,
            "// in RewriteSimplifier::Impl::VisitExpr_(const {node}* op)"
        );
        match w.condition().filter(|c| c != "true") {
            None => {
                let _ = writeln!(out, "TVM_TRY_REWRITE({lhs}, {rhs});");
            }
            Some(c) => {
                let _ = writeln!(
                    out,
                    "TVM_TRY_REWRITE_IF({lhs}, {rhs},\n                   {c});"
                );
            }
        }
        Ok(out)
    }

    fn module(&self, rules: &[String]) -> String {
        let mut out = String::from(
            "// Rules of tileproof's engine proposed for TVM (tileproof's missed simplifications):\n// lines for src/arith/rewrite_simplify.cc, each in the visitor it names, inside its\n// `if (IsIndexType(op->dtype))` block, with `PVar<PrimExpr> x, y, z, b1, b2, b3;`\n// and `PVar<IntImm> c1, c2, c3, c4;` declared.\n",
        );
        for r in rules {
            out.push('\n');
            out.push_str(r);
        }
        out
    }
}

/// C++ binding strength of an infix operator.
fn precedence(op: &str) -> Option<u8> {
    Some(match op {
        "||" => 1,
        "&&" => 2,
        "&" => 3,
        "==" | "!=" => 4,
        "<" | "<=" => 5,
        "+" | "-" => 6,
        "*" | "/" | "%" => 7,
        _ => return None,
    })
}

/// Binding strength of a prefix `-` or `!`: above every infix operator.
const UNARY: u8 = 8;

/// `a op b`, an operand parenthesized where it binds looser than `op`
/// (the right one also where it binds as loosely: `a - (b - c)`).
fn infix(a: &str, op: &str, b: &str) -> String {
    let p = precedence(op).expect("an infix operator");
    // `a && b || c` is written `(a && b) || c`, as a compiler asks.
    let q = if op == "||" { p + 2 } else { p };
    format!("{} {op} {}", wrap(a, q), wrap(b, q.max(p + 1)))
}

/// `s` parenthesized if an operator outside its parentheses binds looser
/// than `at`.
fn wrap(s: &str, at: u8) -> String {
    let mut depth = 0i32;
    let mut loose = false;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ' ' if depth == 0 => {
                let op = s[i + 1..].split(' ').next().unwrap_or_default();
                let spaced = s[i + 1 + op.len()..].starts_with(' ');
                loose |= spaced && precedence(op).is_some_and(|p| p < at);
            }
            _ => {}
        }
    }
    if loose {
        format!("({s})")
    } else {
        s.to_string()
    }
}

/// The visitor of rewrite_simplify.cc a rule rooted at `op` goes in.
fn visitor(op: Op) -> Option<&'static str> {
    Some(match op {
        Op::Add => "AddNode",
        Op::Sub => "SubNode",
        Op::Mul => "MulNode",
        Op::Div => "DivNode",
        Op::Rem => "ModNode",
        Op::FloorDiv => "FloorDivNode",
        Op::Mod => "FloorModNode",
        Op::Min => "MinNode",
        Op::Max => "MaxNode",
        Op::Lt => "LTNode",
        Op::Le => "LENode",
        Op::Eq => "EQNode",
        Op::Ne => "NENode",
        Op::And => "AndNode",
        Op::Or => "OrNode",
        Op::Not => "NotNode",
        Op::Where => "SelectNode",
        _ => return None,
    })
}
