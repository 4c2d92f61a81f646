//! tinygrad: a `(UPat, fn)` pair whose function checks the guard over
//! `vmin`/`vmax` and builds the right side, in a module that loads on its
//! own (`proposed = PatternMatcher([...])`), so that `tileproof prove
//! --simplifier '... tinygrad_adapter.py --module FILE:proposed'` checks the
//! translation like any tinygrad rule. tinygrad's integers are unbounded,
//! so a `fits` guard holds; tinygrad spells `-x` and `a - b` through a
//! product by -1, and has no `<=`, `min` or `!` node, so a left side with
//! those is not translated (a right side may build them: its UOp methods
//! do).

use super::{header, infix_symbol, Dialect, Language, Test, Untranslatable, Walk};
use engine::ir::{DType, Op};
use engine::rules::ast::{Guard, Helper, PatVar, Rule, Ty};
use std::fmt::Write;

/// The helpers a translated guard may call: the engine's `valid(x)` (no
/// `invalid` below `x`), `constrained(x)` (no comparison of a possibly
/// invalid value below it), and division of both families on exact
/// integers.
const PRELUDE: &str = r#"from tinygrad.dtype import Invalid, dtypes
from tinygrad.uop.ops import Ops, PatternMatcher, UPat


def _valid(x):
    return not any(u.is_invalid for u in x.toposort())


def _constrained(x):
    cmp = (Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ)
    return not any(u.op in cmp and not all(_valid(s) for s in u.src) for u in x.toposort())


def _tdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _trem(a, b):
    return a - b * _tdiv(a, b)
"#;

pub struct Tinygrad;

impl Dialect for Tinygrad {
    fn language(&self) -> Language {
        Language::Tinygrad
    }

    fn names(&self, rule: &Rule) -> Result<Vec<String>, String> {
        Ok(rule.vars.iter().map(|v| v.name.clone()).collect())
    }

    fn anchor(&self, rule: &Rule, names: &[String]) -> String {
        match rule.lhs {
            engine::rules::ast::Pat::Var(v) => names[v].clone(),
            _ => "root_".to_string(),
        }
    }

    fn pat_var(&self, var: &PatVar, name: &str) -> String {
        let dtype = match var.ty {
            Ty::Fixed(DType::Bool) => ", dtype=dtypes.bool",
            _ => "",
        };
        let kind = if var.is_const { "cvar" } else { "var" };
        format!("UPat.{kind}(\"{name}\"{dtype})")
    }

    fn pat_lit(&self, v: i64, boolean: bool, _: usize) -> Option<(String, Option<String>)> {
        Some((
            if boolean {
                format!("UPat.const(dtypes.bool, {})", py_bool(v != 0))
            } else {
                format!("UPat(Ops.CONST, arg={v})")
            },
            None,
        ))
    }

    fn pat_invalid(&self, _: usize) -> Option<(String, Option<String>)> {
        Some(("UPat(Ops.CONST, arg=Invalid)".to_string(), None))
    }

    /// A commutative op's operands as a list (tinygrad then tries every
    /// order).
    fn pat_op(&self, op: Op, args: &[String]) -> Option<String> {
        let ops = tinygrad_op(op)?;
        let src = if op.info().commutative {
            format!("[{}]", args.join(", "))
        } else {
            format!("({},)", args.join(", "))
        };
        Some(format!("UPat(Ops.{ops}, src={src})"))
    }

    fn g_bool(&self, b: bool) -> String {
        py_bool(b).to_string()
    }

    fn g_val(&self, name: &str) -> String {
        format!("{name}.arg")
    }

    fn g_bound(&self, interval: &str, hi: bool) -> String {
        format!("{interval}.{}", if hi { "vmax" } else { "vmin" })
    }

    // tinygrad's integers are unbounded: nothing overflows.
    fn g_fits(&self) -> Option<String> {
        Some("True".to_string())
    }

    fn g_test(&self, test: Test, name: &str) -> Option<String> {
        Some(match test {
            Test::Valid => format!("_valid({name})"),
            Test::Constrained => format!("_constrained({name})"),
            Test::IsConst => format!("{name}.op is Ops.CONST"),
        })
    }

    fn g_un(&self, op: Op, a: &str) -> String {
        match op {
            Op::Neg => format!("(-{a})"),
            _ => format!("(not {a})"),
        }
    }

    /// `a op b` on Python integers and bools (exact, like the guard).
    fn g_bin(&self, op: Op, a: &str, b: &str) -> Option<String> {
        Some(match op {
            Op::FloorDiv => format!("({a} // {b})"),
            Op::Mod => format!("({a} % {b})"),
            Op::CeilDiv => format!("(-((-{a}) // {b}))"),
            Op::Div => format!("_tdiv({a}, {b})"),
            Op::Rem => format!("_trem({a}, {b})"),
            Op::And => format!("({a} and {b})"),
            Op::Or => format!("({a} or {b})"),
            o => format!("({a} {} {b})", infix_symbol(o)?),
        })
    }

    fn g_helper(&self, h: Helper, a: &[String]) -> Option<String> {
        Some(match (h, a) {
            (Helper::Gcd, [x, y]) => format!("__import__('math').gcd({x}, {y})"),
            (Helper::Abs, [x]) => format!("abs({x})"),
            (Helper::Min, [x, y]) => format!("min({x}, {y})"),
            (Helper::Max, [x, y]) => format!("max({x}, {y})"),
            (Helper::Log2, [n]) => format!("(({n}).bit_length() - 1)"),
            _ => return None,
        })
    }

    /// tinygrad computes `vmin`/`vmax` of a UOp by interval arithmetic too.
    fn i_scalar(&self, _: &Guard, value: &str, anchor: &str) -> Option<String> {
        Some(format!("{anchor}.const_like({value})"))
    }

    fn i_neg(&self, a: &str) -> String {
        format!("(-{a})")
    }

    fn i_bin(&self, op: Op, a: &str, b: &str) -> Option<String> {
        Some(format!("({a} {} {b})", infix_symbol(op)?))
    }

    fn t_var(&self, name: &str, konst: bool) -> String {
        if konst {
            format!("{name}.arg")
        } else {
            name.to_string()
        }
    }

    fn t_lit(&self, v: i64, boolean: bool, konst: bool, anchor: &str) -> Option<String> {
        Some(match (konst, boolean) {
            (true, _) => v.to_string(),
            (false, true) => format!("{anchor}.const_like({})", py_bool(v != 0)),
            (false, false) => format!("{anchor}.const_like({v})"),
        })
    }

    fn t_invalid(&self, anchor: &str) -> Option<String> {
        Some(format!("{anchor}.const_like(Invalid)"))
    }

    fn t_bound(&self, name: &str, hi: bool, konst: bool, anchor: &str) -> Option<String> {
        let b = format!("{name}.{}", if hi { "vmax" } else { "vmin" });
        Some(if konst {
            b
        } else {
            format!("{anchor}.const_like({b})")
        })
    }

    fn t_computed(&self, value: &str, anchor: &str) -> String {
        format!("{anchor}.const_like({value})")
    }

    /// `op` over UOps, by tinygrad's own constructors; inside a constant,
    /// on Python integers.
    fn t_op(&self, op: Op, a: &[String], konst: bool) -> Option<String> {
        Some(match (op, a) {
            (Op::Neg, [x]) if konst => format!("(-{x})"),
            (op, [x, y]) if konst => self.g_bin(op, x, y)?,
            _ if konst => return None,
            (Op::Neg, [x]) => format!("(-{x})"),
            (Op::Not, [x]) => format!("{x}.logical_not()"),
            (Op::Add, [x, y]) => format!("({x} + {y})"),
            (Op::Sub, [x, y]) => format!("({x} - {y})"),
            (Op::Mul, [x, y]) => format!("({x} * {y})"),
            (Op::FloorDiv, [x, y]) => format!("({x} // {y})"),
            (Op::Mod, [x, y]) => format!("({x} % {y})"),
            (Op::Div, [x, y]) => format!("{x}.alu(Ops.CDIV, {y})"),
            (Op::Rem, [x, y]) => format!("{x}.alu(Ops.CMOD, {y})"),
            (Op::Max, [x, y]) => format!("{x}.maximum({y})"),
            (Op::Min, [x, y]) => format!("{x}.minimum({y})"),
            (Op::Lt, [x, y]) => format!("({x} < {y})"),
            (Op::Le, [x, y]) => format!("({y} < {x}).logical_not()"),
            (Op::Ne, [x, y]) => format!("{x}.ne({y})"),
            (Op::Eq, [x, y]) => format!("{x}.eq({y})"),
            (Op::And, [x, y]) => format!("({x} & {y})"),
            (Op::Or, [x, y]) => format!("({x} | {y})"),
            (Op::Where, [c, x, y]) => format!("{c}.where({x}, {y})"),
            _ => return None,
        })
    }

    /// One rule as a function and its `(UPat, fn)` pair, `\0`-separated
    /// (the module puts functions first, pairs in the matcher).
    fn rule(&self, w: &Walk<'_, Self>) -> Result<String, Untranslatable> {
        let rule = w.rule();
        let pattern = &w.patterns[0];
        let pattern = if w.bare() {
            pattern.clone()
        } else {
            format!("{pattern}.named(\"{}\")", w.anchor())
        };
        let guard = w.condition().unwrap_or_else(|| "True".to_string());
        let mut params: Vec<String> = w.names().to_vec();
        if !w.bare() {
            params.insert(0, w.anchor().to_string());
        }
        let name = rule.name.replace(|c: char| !c.is_ascii_alphanumeric(), "_");
        let mut f = header(rule, "#");
        let _ = writeln!(f, "def {name}({}):", params.join(", "));
        let _ = writeln!(f, "  try:");
        let _ = writeln!(f, "    if not ({guard}): return None");
        let _ = writeln!(f, "    return {}", w.rhs);
        let _ = writeln!(f, "  except ZeroDivisionError:");
        let _ = writeln!(f, "    return None");
        Ok(format!("{f}\0({pattern}, {name})"))
    }

    /// A Python module with the translated rules, as the matcher
    /// `proposed`.
    fn module(&self, rules: &[String]) -> String {
        let parts: Vec<(&str, &str)> = rules
            .iter()
            .map(|r| r.split_once('\0').expect("a function and a pair"))
            .collect();
        let mut out = format!(
            "\"\"\"Rules of tileproof's engine proposed for tinygrad (tileproof's missed simplifications).\"\"\"\n{PRELUDE}"
        );
        for (function, _) in &parts {
            out.push_str("\n\n");
            out.push_str(function);
        }
        out.push_str("\n\nproposed = PatternMatcher([\n");
        for (_, pair) in &parts {
            let _ = writeln!(out, "  {pair},");
        }
        out.push_str("])\n");
        out
    }
}

/// The tinygrad op a left side's op matches (tinygrad builds `-x`, `a - b`,
/// `a <= b`, `!a` and `min` from others, so a pattern of them would never
/// match).
fn tinygrad_op(op: Op) -> Option<&'static str> {
    Some(match op {
        Op::Add => "ADD",
        Op::Mul => "MUL",
        Op::Max => "MAX",
        Op::FloorDiv => "FLOORDIV",
        Op::Mod => "FLOORMOD",
        Op::Div => "CDIV",
        Op::Rem => "CMOD",
        Op::Lt => "CMPLT",
        Op::Ne => "CMPNE",
        Op::Eq => "CMPEQ",
        Op::Where => "WHERE",
        Op::And => "AND",
        Op::Or => "OR",
        Op::Xor => "XOR",
        _ => return None,
    })
}

fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}
