//! Morok: an entry of a `patterns!` block, in the style of morok-schedule's
//! `symbolic/patterns.rs`: the left side with constants bound by
//! `name @const(value)`, `[...]` for a commutative op, and a fallible
//! right side (`=> { ... Some(...) }`) whose guard reads `vmin()`/`vmax()`
//! of the matched UOps, on exact (`i128`) integers. Morok's `Idiv` and
//! `Mod` truncate, so a rule of floor division has no Morok pattern; Morok
//! spells `-x` as a product by -1 and has no `min` node; its bounds
//! saturate at the dtype's, so `fits` has no test there.

use super::{header, infix_symbol, Dialect, Language, Test, Untranslatable, Walk};
use engine::ir::Op;
use engine::rules::ast::{Guard, Helper, PatVar, Rule};
use std::fmt::Write;

/// Exact-integer helpers a translated guard may call: division of both
/// families (`None` on a zero divisor: the guard then fails, as the
/// engine's does), `gcd`, and the engine's `valid`/`constrained`.
const PRELUDE: &str = r#"use morok_dtype::DType;
use morok_ir::types::ConstValue;
use morok_ir::{Op, UOp};
use std::sync::Arc;

fn floor_div(a: i128, b: i128) -> Option<i128> {
    let (q, r) = (a.checked_div(b)?, a.checked_rem(b)?);
    Some(if r != 0 && (r < 0) != (b < 0) { q - 1 } else { q })
}

fn floor_mod(a: i128, b: i128) -> Option<i128> {
    Some(a - b * floor_div(a, b)?)
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 { a.abs() } else { gcd(b, a % b) }
}

/// No `Invalid` below `x`.
fn valid(x: &Arc<UOp>) -> bool {
    !x.toposort().iter().any(|u| matches!(u.op(), Op::Invalid))
}

/// No comparison of a possibly invalid value below `x`.
fn constrained(x: &Arc<UOp>) -> bool {
    x.toposort().iter().all(|u| match u.op() {
        Op::Binary(op, a, b) if op.is_comparison() => valid(a) && valid(b),
        _ => true,
    })
}
"#;

pub struct Morok;

/// A constant variable's value, as the guard's exact integer.
fn value(name: &str) -> String {
    format!("({name}_val.try_int()? as i128)")
}

impl Dialect for Morok {
    fn language(&self) -> Language {
        Language::Morok
    }

    /// Lowercase (Rust bindings); a constant that would meet another
    /// variable's name is `k_` prefixed.
    fn names(&self, rule: &Rule) -> Result<Vec<String>, String> {
        let mut names: Vec<String> = Vec::new();
        for v in &rule.vars {
            let mut n = v.name.to_lowercase();
            if names.contains(&n) || (v.is_const && rule.vars.iter().any(|o| o.name == n)) {
                n = format!("k_{n}");
            }
            names.push(n);
        }
        Ok(names)
    }

    fn anchor(&self, _: &Rule, _: &[String]) -> String {
        "root".to_string()
    }

    fn pat_var(&self, var: &PatVar, name: &str) -> String {
        if var.is_const {
            format!("{name} @const({name}_val)")
        } else {
            name.to_string()
        }
    }

    fn pat_lit(&self, v: i64, boolean: bool, fresh: usize) -> Option<(String, Option<String>)> {
        Some(match (boolean, v) {
            (false, 0) => ("@zero".to_string(), None),
            (false, 1) => ("@one".to_string(), None),
            (false, v) => (
                format!("_l{fresh} @const(l{fresh}_val)"),
                Some(format!("l{fresh}_val.try_int() == Some({v})")),
            ),
            (true, v) => (
                format!("_l{fresh} @const(l{fresh}_val)"),
                Some(format!("l{fresh}_val == ConstValue::Bool({})", v != 0)),
            ),
        })
    }

    /// `Invalid` is no pattern of its own in Morok: a variable whose op
    /// the guard checks, as its symbolic patterns do.
    fn pat_invalid(&self, fresh: usize) -> Option<(String, Option<String>)> {
        Some((
            format!("inv{fresh}"),
            Some(format!("matches!(inv{fresh}.op(), Op::Invalid)")),
        ))
    }

    fn pat_op(&self, op: Op, args: &[String]) -> Option<String> {
        let name = morok_op(op)?;
        Some(if op.info().commutative {
            format!("{name}[{}]", args.join(", "))
        } else {
            format!("{name}({})", args.join(", "))
        })
    }

    fn g_val(&self, name: &str) -> String {
        value(name)
    }

    fn g_bound(&self, interval: &str, hi: bool) -> String {
        format!(
            "({interval}.{}().try_int()? as i128)",
            if hi { "vmax" } else { "vmin" }
        )
    }

    fn g_test(&self, test: Test, name: &str) -> Option<String> {
        Some(match test {
            Test::Valid => format!("valid({name})"),
            Test::Constrained => format!("constrained({name})"),
            Test::IsConst => format!("matches!({name}.op(), Op::Const(_))"),
        })
    }

    fn g_un(&self, op: Op, a: &str) -> String {
        match op {
            Op::Neg => format!("(-{a})"),
            _ => format!("!{a}"),
        }
    }

    fn g_bin(&self, op: Op, a: &str, b: &str) -> Option<String> {
        Some(match op {
            Op::Div => format!("{a}.checked_div({b})?"),
            Op::Rem => format!("{a}.checked_rem({b})?"),
            Op::FloorDiv => format!("floor_div({a}, {b})?"),
            Op::Mod => format!("floor_mod({a}, {b})?"),
            Op::CeilDiv => format!("(-floor_div(-{a}, {b})?)"),
            o => format!("({a} {} {b})", infix_symbol(o)?),
        })
    }

    fn g_helper(&self, h: Helper, a: &[String]) -> Option<String> {
        Some(match (h, a) {
            (Helper::Gcd, [x, y]) => format!("gcd({x}, {y})"),
            (Helper::Abs, [x]) => format!("{x}.abs()"),
            (Helper::Min, [x, y]) => format!("{x}.min({y})"),
            (Helper::Max, [x, y]) => format!("{x}.max({y})"),
            (Helper::Log2, [n]) => format!("({n}.trailing_zeros() as i128)"),
            _ => return None,
        })
    }

    /// Morok computes `vmin()`/`vmax()` of a UOp by interval arithmetic.
    fn i_scalar(&self, scalar: &Guard, value: &str, anchor: &str) -> Option<String> {
        // A constant variable is its own UOp.
        if let Guard::Val(_) = scalar {
            let name = value
                .strip_prefix('(')?
                .strip_suffix("_val.try_int()? as i128)")?;
            return Some(name.to_string());
        }
        Some(format!(
            "UOp::const_({anchor}.dtype(), ConstValue::Int(i64::try_from({value}).ok()?))"
        ))
    }

    fn i_neg(&self, a: &str) -> String {
        format!("{a}.neg()")
    }

    fn i_bin(&self, op: Op, a: &str, b: &str) -> Option<String> {
        self.t_op(op, &[a.to_string(), b.to_string()], false)
    }

    fn t_var(&self, name: &str, konst: bool) -> String {
        if konst {
            value(name)
        } else {
            name.to_string()
        }
    }

    fn t_lit(&self, v: i64, boolean: bool, konst: bool, anchor: &str) -> Option<String> {
        Some(match (konst, boolean) {
            (true, _) => v.to_string(),
            (false, true) => format!("UOp::const_(DType::Bool, ConstValue::Bool({}))", v != 0),
            (false, false) => format!("UOp::const_({anchor}.dtype(), ConstValue::Int({v}))"),
        })
    }

    fn t_invalid(&self, anchor: &str) -> Option<String> {
        Some(format!("UOp::new(Op::Invalid, {anchor}.dtype())"))
    }

    fn t_bound(&self, name: &str, hi: bool, konst: bool, anchor: &str) -> Option<String> {
        let b = self.g_bound(name, hi);
        Some(if konst {
            b
        } else {
            self.t_computed(&b, anchor)
        })
    }

    fn t_computed(&self, value: &str, anchor: &str) -> String {
        format!("UOp::const_({anchor}.dtype(), ConstValue::Int(i64::try_from({value}).ok()?))")
    }

    fn t_computed_bool(&self, _: &str, _: &str) -> Option<String> {
        None
    }

    /// `op` over UOps, by Morok's own constructors (`min` as the negated
    /// `max` of the negations: Morok has no min node); inside a constant,
    /// on exact integers.
    fn t_op(&self, op: Op, a: &[String], konst: bool) -> Option<String> {
        Some(match (op, a) {
            (Op::Neg, [x]) if konst => format!("(-{x})"),
            (op, [x, y]) if konst => self.g_bin(op, x, y)?,
            _ if konst => return None,
            (Op::Neg, [x]) => format!("{x}.neg()"),
            (Op::Not, [x]) => format!("{x}.not()"),
            (Op::Add, [x, y]) => format!("{x}.add(&{y})"),
            (Op::Sub, [x, y]) => format!("{x}.sub(&{y})"),
            (Op::Mul, [x, y]) => format!("{x}.mul(&{y})"),
            (Op::Div, [x, y]) => format!("{x}.idiv(&{y})"),
            (Op::Rem, [x, y]) => format!("{x}.mod_(&{y})"),
            (Op::Max, [x, y]) => format!("{x}.max(&{y})"),
            (Op::Min, [x, y]) => format!("{x}.neg().max(&{y}.neg()).neg()"),
            (Op::Lt, [x, y]) => format!("{x}.lt(&{y})"),
            (Op::Le, [x, y]) => format!("{x}.le(&{y})"),
            (Op::Eq, [x, y]) => format!("{x}.eq(&{y})"),
            (Op::Ne, [x, y]) => format!("{x}.ne(&{y})"),
            (Op::And, [x, y]) => format!("{x}.and_(&{y})"),
            (Op::Or, [x, y]) => format!("{x}.or_(&{y})"),
            (Op::Xor, [x, y]) => format!("{x}.xor(&{y})"),
            (Op::Where, [c, x, y]) => {
                format!("UOp::try_where({c}.clone(), {x}.clone(), {y}.clone()).ok()?")
            }
            _ => return None,
        })
    }

    /// `PATTERN => Some(RHS),` or, with a guard, a block that checks it.
    fn rule(&self, w: &Walk<'_, Self>) -> Result<String, Untranslatable> {
        if w.bare() {
            return Err(Untranslatable::Pattern {
                rule: w.rule().name.clone(),
                language: "Morok",
                what: "any term (a Morok pattern starts at an op)".into(),
            });
        }
        let rhs = if w.names().contains(&w.rhs) {
            format!("Arc::clone({})", w.rhs)
        } else {
            w.rhs.clone()
        };
        // The root is bound only where a constant takes its dtype.
        let root = if rhs.contains(&format!("{}.", w.anchor())) {
            format!("{} @ ", w.anchor())
        } else {
            String::new()
        };
        let mut out = header(w.rule(), "//");
        match w.condition() {
            None => {
                let _ = writeln!(out, "{root}{} => Some({rhs}),", w.patterns[0]);
            }
            Some(c) => {
                let _ = writeln!(out, "{root}{} => {{", w.patterns[0]);
                let _ = writeln!(out, "    if !({c}) {{ return None; }}");
                let _ = writeln!(out, "    Some({rhs})");
                let _ = writeln!(out, "}},");
            }
        }
        Ok(out)
    }

    fn module(&self, rules: &[String]) -> String {
        let mut out = String::from(
            "// Rules of tileproof's engine proposed for Morok (tileproof's missed simplifications):\n// entries for a `patterns!` block, in the style of morok-schedule's symbolic/patterns.rs.\n",
        );
        out.push_str(PRELUDE);
        out.push_str(
            "\npub fn proposed() -> &'static crate::TypedPatternMatcher {\n    crate::cached_patterns! {\n",
        );
        for r in rules {
            for line in r.lines() {
                let _ = writeln!(out, "        {line}");
            }
        }
        out.push_str("    }\n}\n");
        out
    }
}

/// The Morok op a left side's op matches (`Idiv`/`Mod` truncate).
fn morok_op(op: Op) -> Option<&'static str> {
    Some(match op {
        Op::Add => "Add",
        Op::Sub => "Sub",
        Op::Mul => "Mul",
        Op::Max => "Max",
        Op::Div => "Idiv",
        Op::Rem => "Mod",
        Op::Lt => "Lt",
        Op::Le => "Le",
        Op::Eq => "Eq",
        Op::Ne => "Ne",
        Op::And => "And",
        Op::Or => "Or",
        Op::Xor => "Xor",
        Op::Not => "Not",
        Op::Where => "Where",
        _ => return None,
    })
}
