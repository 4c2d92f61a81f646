//! A declarative rule of the engine proposed in a peer's own pattern
//! language, guard included, for a missed simplification
//! ([`crate::missed`]) to become the peer's rule.
//!
//! tinygrad: a `(UPat, fn)` pair whose function checks the guard over
//! `vmin`/`vmax` and builds the right side, in a module that loads on its
//! own (`proposed = PatternMatcher([...])`), so that `tileproof prove
//! --simplifier '... tinygrad_adapter.py --module FILE:proposed'` checks the
//! translation like any tinygrad rule. tinygrad's integers are unbounded,
//! so a `fits` guard holds; tinygrad spells `-x` and `a - b` through a
//! product by -1, and has no `<=`, `min` or `!` node, so a left side with
//! those is not translated (a right side may build them: its UOp methods
//! do).

use engine::ir::{DType, Op};
use engine::rules::ast::{Guard, Helper, IExpr, Pat, Rule, Ty};
use std::fmt::Write;

/// Why a rule has no translation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Untranslatable {
    #[error("{rule}: tinygrad has no pattern for `{what}`")]
    Pattern { rule: String, what: String },
    #[error("{rule}: the guard's `{what}` has no tinygrad counterpart")]
    Guard { rule: String, what: String },
    #[error("{rule}: the right side's `{what}` has no tinygrad counterpart")]
    Template { rule: String, what: String },
}

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

/// A peer language rules are proposed in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Tinygrad,
}

impl Language {
    /// The language of a peer, by the name its hello gives
    /// (`tinygrad.sym 0.14.0`, `tinygrad.module.mine 0.14.0`).
    pub fn of_peer(name: &str) -> Option<Language> {
        name.starts_with("tinygrad.").then_some(Language::Tinygrad)
    }
}

/// Rules proposed to a peer: what translates, and why the others do not.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Proposal {
    pub language: Language,
    /// A module that loads on its own, with the translated rules (`None`
    /// when none translates).
    pub module: Option<String>,
    pub untranslated: Vec<String>,
}

/// `rules` proposed in `language`.
pub fn propose(language: Language, rules: &[&Rule]) -> Proposal {
    let mut parts = Vec::new();
    let mut untranslated = Vec::new();
    for rule in rules {
        match language {
            Language::Tinygrad => match tinygrad_rule(rule) {
                Ok(p) => parts.push(p),
                Err(e) => untranslated.push(e.to_string()),
            },
        }
    }
    Proposal {
        language,
        module: (!parts.is_empty()).then(|| tinygrad_module(&parts)),
        untranslated,
    }
}

/// A Python module with the translated rules (function, pair), as the
/// matcher `proposed`.
fn tinygrad_module(parts: &[(String, String)]) -> String {
    let mut out = format!(
        "\"\"\"Rules of tileproof's engine proposed for tinygrad (tileproof's missed simplifications).\"\"\"\n{PRELUDE}"
    );
    for (function, _) in parts {
        out.push_str("\n\n");
        out.push_str(function);
    }
    out.push_str("\n\nproposed = PatternMatcher([\n");
    for (_, pair) in parts {
        let _ = writeln!(out, "  {pair},");
    }
    out.push_str("])\n");
    out
}

/// One rule as a function and its `(UPat, fn)` pair.
pub fn tinygrad_rule(rule: &Rule) -> Result<(String, String), Untranslatable> {
    let t = Tinygrad { rule };
    let bare = matches!(rule.lhs, Pat::Var(_));
    let pattern = t.pattern(&rule.lhs)?;
    // The matched node, whose dtype a constant on the right side takes.
    let (pattern, anchor) = if bare {
        (pattern, t.name(&rule.lhs))
    } else {
        (format!("{pattern}.named(\"root_\")"), "root_".to_string())
    };
    let guard = match &rule.guard {
        Some(g) => t.guard(g)?,
        None => "True".to_string(),
    };
    let rhs = t.template(&rule.rhs, &anchor, false)?;
    let mut params: Vec<String> = rule.vars.iter().map(|v| v.name.clone()).collect();
    if !bare {
        params.insert(0, anchor);
    }
    let name = rule.name.replace(|c: char| !c.is_ascii_alphanumeric(), "_");
    let mut f = String::new();
    let _ = writeln!(f, "# {}", rule.comment.replace('\n', "\n# "));
    let _ = writeln!(
        f,
        "# tileproof rule {}: {}",
        rule.name,
        rule.text.replace('\n', " ")
    );
    let _ = writeln!(f, "def {name}({}):", params.join(", "));
    let _ = writeln!(f, "  try:");
    let _ = writeln!(f, "    if not ({guard}): return None");
    let _ = writeln!(f, "    return {rhs}");
    let _ = writeln!(f, "  except ZeroDivisionError:");
    let _ = writeln!(f, "    return None");
    Ok((f, format!("({pattern}, {name})")))
}

struct Tinygrad<'r> {
    rule: &'r Rule,
}

impl Tinygrad<'_> {
    fn name(&self, p: &Pat) -> String {
        match p {
            Pat::Var(v) => self.rule.vars[*v].name.clone(),
            _ => unreachable!("a variable"),
        }
    }

    fn no_pattern(&self, what: impl Into<String>) -> Untranslatable {
        Untranslatable::Pattern {
            rule: self.rule.name.clone(),
            what: what.into(),
        }
    }

    fn no_guard(&self, what: impl Into<String>) -> Untranslatable {
        Untranslatable::Guard {
            rule: self.rule.name.clone(),
            what: what.into(),
        }
    }

    fn no_template(&self, what: impl Into<String>) -> Untranslatable {
        Untranslatable::Template {
            rule: self.rule.name.clone(),
            what: what.into(),
        }
    }

    /// The left side as a `UPat`; a commutative op's operands as a list
    /// (tinygrad then tries every order).
    fn pattern(&self, p: &Pat) -> Result<String, Untranslatable> {
        Ok(match p {
            Pat::Var(v) => {
                let var = &self.rule.vars[*v];
                let dtype = match var.ty {
                    Ty::Fixed(DType::Bool) => ", dtype=dtypes.bool",
                    _ => "",
                };
                let kind = if var.is_const { "cvar" } else { "var" };
                format!("UPat.{kind}(\"{}\"{dtype})", var.name)
            }
            Pat::Lit(v, Ty::Fixed(DType::Bool)) => {
                format!("UPat.const(dtypes.bool, {})", py_bool(*v != 0))
            }
            Pat::Lit(v, _) => format!("UPat(Ops.CONST, arg={v})"),
            Pat::Invalid => "UPat(Ops.CONST, arg=Invalid)".to_string(),
            Pat::Op(op, _, args) => {
                let ops = tinygrad_op(*op).ok_or_else(|| self.no_pattern(op.name()))?;
                let src: Vec<String> = args
                    .iter()
                    .map(|a| self.pattern(a))
                    .collect::<Result<_, _>>()?;
                let src = if op.info().commutative {
                    format!("[{}]", src.join(", "))
                } else {
                    format!("({},)", src.join(", "))
                };
                format!("UPat(Ops.{ops}, src={src})")
            }
            other => return Err(self.no_pattern(format!("{other:?}"))),
        })
    }

    /// The guard as a Python condition over the matched UOps.
    fn guard(&self, g: &Guard) -> Result<String, Untranslatable> {
        let var = |v: &usize| self.rule.vars[*v].name.clone();
        Ok(match g {
            Guard::Int(i) => i.to_string(),
            Guard::Bool(b) => py_bool(*b).to_string(),
            Guard::Val(v) => format!("{}.arg", var(v)),
            Guard::VMin(e) => format!("{}.vmin", self.interval(e)?),
            Guard::VMax(e) => format!("{}.vmax", self.interval(e)?),
            // tinygrad's integers are unbounded: nothing overflows.
            Guard::Fits(..) => "True".to_string(),
            Guard::Valid(v) => format!("_valid({})", var(v)),
            Guard::Constrained(v) => format!("_constrained({})", var(v)),
            Guard::IsConst(v) => format!("{}.op is Ops.CONST", var(v)),
            Guard::TyMin(_) | Guard::TyMax(_) => {
                return Err(self.no_guard("min_of/max_of (unbounded integers)"))
            }
            Guard::Un(Op::Neg, a) => format!("(-{})", self.guard(a)?),
            Guard::Un(_, a) => format!("(not {})", self.guard(a)?),
            Guard::Bin(op, a, b) => self.binary(*op, &self.guard(a)?, &self.guard(b)?)?,
            Guard::Call(h, args) => {
                let a: Vec<String> = args
                    .iter()
                    .map(|x| self.guard(x))
                    .collect::<Result<_, _>>()?;
                helper(*h, &a)
            }
        })
    }

    /// An interval expression as a UOp over the matched ones, whose
    /// `vmin`/`vmax` tinygrad computes by interval arithmetic too.
    fn interval(&self, e: &IExpr) -> Result<String, Untranslatable> {
        Ok(match e {
            IExpr::Var(v) => self.rule.vars[*v].name.clone(),
            IExpr::Scalar(g) => {
                let anchor = &self
                    .rule
                    .vars
                    .first()
                    .ok_or_else(|| self.no_guard("a constant"))?
                    .name;
                format!("{anchor}.const_like({})", self.guard(g)?)
            }
            IExpr::Neg(a) => format!("(-{})", self.interval(a)?),
            IExpr::Bin(op, a, b) => {
                let text = py_infix(*op).ok_or_else(|| self.no_guard(op.name()))?;
                format!("({} {text} {})", self.interval(a)?, self.interval(b)?)
            }
        })
    }

    /// `a op b` on Python integers and bools (exact, like the guard).
    fn binary(&self, op: Op, a: &str, b: &str) -> Result<String, Untranslatable> {
        Ok(match op {
            Op::FloorDiv => format!("({a} // {b})"),
            Op::Mod => format!("({a} % {b})"),
            Op::CeilDiv => format!("(-((-{a}) // {b}))"),
            Op::Div => format!("_tdiv({a}, {b})"),
            Op::Rem => format!("_trem({a}, {b})"),
            Op::And => format!("({a} and {b})"),
            Op::Or => format!("({a} or {b})"),
            o => {
                let text = py_infix(o).ok_or_else(|| self.no_guard(o.name()))?;
                format!("({a} {text} {b})")
            }
        })
    }

    /// The right side as a UOp expression; `konst`: inside a computed
    /// constant (Python integers).
    fn template(&self, p: &Pat, anchor: &str, konst: bool) -> Result<String, Untranslatable> {
        let var = |v: &usize| self.rule.vars[*v].name.clone();
        Ok(match p {
            Pat::Var(v) if konst => format!("{}.arg", var(v)),
            Pat::Var(v) => var(v),
            Pat::Lit(v, Ty::Fixed(DType::Bool)) if !konst => {
                format!("{anchor}.const_like({})", py_bool(*v != 0))
            }
            Pat::Lit(v, _) if konst => v.to_string(),
            Pat::Lit(v, _) => format!("{anchor}.const_like({v})"),
            Pat::Invalid => format!("{anchor}.const_like(Invalid)"),
            Pat::Bound(v, hi) => {
                let b = format!("{}.{}", var(v), if *hi { "vmax" } else { "vmin" });
                if konst {
                    b
                } else {
                    format!("{anchor}.const_like({b})")
                }
            }
            Pat::Computed(inner) => {
                format!(
                    "{anchor}.const_like({})",
                    self.template(inner, anchor, true)?
                )
            }
            Pat::Helper(h, args) => {
                let a: Vec<String> = args
                    .iter()
                    .map(|x| self.template(x, anchor, true))
                    .collect::<Result<_, _>>()?;
                helper(*h, &a)
            }
            Pat::Op(op, _, args) => {
                let a: Vec<String> = args
                    .iter()
                    .map(|x| self.template(x, anchor, konst))
                    .collect::<Result<_, _>>()?;
                if konst {
                    match a.as_slice() {
                        [x] if *op == Op::Neg => format!("(-{x})"),
                        [x, y] => self
                            .binary(*op, x, y)
                            .map_err(|_| self.no_template(op.name()))?,
                        _ => return Err(self.no_template(op.name())),
                    }
                } else {
                    self.build(*op, &a)?
                }
            }
        })
    }

    /// `op` over UOps, by tinygrad's own constructors.
    fn build(&self, op: Op, a: &[String]) -> Result<String, Untranslatable> {
        Ok(match (op, a) {
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
            (op, _) => return Err(self.no_template(op.name())),
        })
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

/// The Python infix spelling of `op` on integers.
fn py_infix(op: Op) -> Option<&'static str> {
    Some(match op {
        Op::Add => "+",
        Op::Sub => "-",
        Op::Mul => "*",
        Op::Lt => "<",
        Op::Le => "<=",
        Op::Eq => "==",
        Op::Ne => "!=",
        _ => return None,
    })
}

fn helper(h: Helper, a: &[String]) -> String {
    match (h, a) {
        (Helper::Gcd, [x, y]) => format!("__import__('math').gcd({x}, {y})"),
        (Helper::Abs, [x]) => format!("abs({x})"),
        (Helper::Min, [x, y]) => format!("min({x}, {y})"),
        (Helper::Max, [x, y]) => format!("max({x}, {y})"),
        (Helper::Divides, [d, n]) => format!("({d} != 0 and {n} % {d} == 0)"),
        (Helper::IsPow2, [n]) => format!("({n} > 0 and {n} & ({n} - 1) == 0)"),
        (Helper::Log2, [n]) => format!("(({n}).bit_length() - 1)"),
        (h, _) => unreachable!("{} with {} arguments", h.name(), a.len()),
    }
}

fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::rules::RuleSet;

    fn rule(text: &str) -> Rule {
        let set = RuleSet::parse("t.rules", &format!("group t\n{text}\n")).unwrap();
        let r = set.rules().next().unwrap().clone();
        r
    }

    #[test]
    fn a_left_side_tinygrad_never_builds_is_not_translated() {
        // tinygrad spells `a - b` as a sum with a product by -1.
        let r = rule("# x - x == 0\nrule sub_self: x - x => 0 if valid(x)");
        let p = propose(Language::Tinygrad, &[&r]);
        assert!(p.module.is_none());
        assert_eq!(
            p.untranslated,
            ["sub_self: tinygrad has no pattern for `sub`"]
        );
    }

    #[test]
    fn a_commutative_op_matches_either_order_and_a_constant_takes_the_matched_dtype() {
        let r = rule("# x * 0 == 0\nrule mul_zero: x * 0 => 0 if valid(x)");
        let (function, pair) = tinygrad_rule(&r).unwrap();
        assert_eq!(
            pair,
            "(UPat(Ops.MUL, src=[UPat.var(\"x\"), UPat(Ops.CONST, arg=0)]).named(\"root_\"), mul_zero)"
        );
        assert!(
            function.contains("return root_.const_like(0)"),
            "{function}"
        );
        assert!(
            function.contains("if not (_valid(x)): return None"),
            "{function}"
        );
    }
}
