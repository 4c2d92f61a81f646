//! A declarative rule of the engine proposed in a peer's own pattern
//! language, guard included, for a missed simplification
//! ([`crate::missed`]) to become the peer's rule.
//!
//! One walk over a rule ([`Walk`]: its left side, guard, interval
//! expressions and right side) serves every language; a [`Dialect`] says
//! how each piece is spelled in one of them, or that it has no counterpart
//! there (the rule is then not translated, and the reason is given, never
//! a wrong pattern): tinygrad's `(UPat, fn)` pairs ([`tinygrad`]), Morok's
//! `patterns!` entries ([`morok`]) and TVM's `TVM_TRY_REWRITE_IF` lines
//! ([`tvm`]).

mod morok;
mod tinygrad;
mod tvm;

use engine::ir::{DType, Op};
use engine::rules::ast::{Guard, Helper, IExpr, Pat, PatVar, Rule, Ty};

/// Why a rule has no translation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Untranslatable {
    #[error("{rule}: {language} has no pattern for `{what}`")]
    Pattern {
        rule: String,
        language: &'static str,
        what: String,
    },
    #[error("{rule}: the guard's `{what}` has no {language} counterpart")]
    Guard {
        rule: String,
        language: &'static str,
        what: String,
    },
    #[error("{rule}: the right side's `{what}` has no {language} counterpart")]
    Template {
        rule: String,
        language: &'static str,
        what: String,
    },
}

/// A peer language rules are proposed in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Tinygrad,
    Morok,
    Tvm,
}

impl Language {
    /// The language of a peer, by the name its hello gives
    /// (`tinygrad.sym 0.14.0`, `morok.symbolic`, `tvm.simplify.int32`).
    pub fn of_peer(name: &str) -> Option<Language> {
        [Language::Tinygrad, Language::Morok, Language::Tvm]
            .into_iter()
            .find(|l| name.starts_with(&format!("{}.", l.prefix())))
    }

    fn prefix(self) -> &'static str {
        match self {
            Language::Tinygrad => "tinygrad",
            Language::Morok => "morok",
            Language::Tvm => "tvm",
        }
    }

    /// The name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Language::Tinygrad => "tinygrad",
            Language::Morok => "Morok",
            Language::Tvm => "TVM",
        }
    }

    /// The extension of the file the proposal is written to.
    pub fn extension(self) -> &'static str {
        match self {
            Language::Tinygrad => "py",
            Language::Morok => "rs",
            Language::Tvm => "cc",
        }
    }

    /// What the file beside a missed case holds, in words.
    pub fn describe(self) -> &'static str {
        match self {
            Language::Tinygrad => "a module whose matcher `proposed` loads on its own",
            Language::Morok => "entries for a `patterns!` block of morok-schedule's symbolic rules",
            Language::Tvm => "lines for rewrite_simplify.cc, under the visitor each names",
        }
    }
}

/// Rules proposed to a peer: what translates, and why the others do not.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Proposal {
    pub language: Language,
    /// The file with the translated rules (`None` when none translates).
    pub module: Option<String>,
    pub untranslated: Vec<String>,
}

/// `rules` proposed in `language`.
pub fn propose(language: Language, rules: &[&Rule]) -> Proposal {
    match language {
        Language::Tinygrad => propose_in(&tinygrad::Tinygrad, rules),
        Language::Morok => propose_in(&morok::Morok, rules),
        Language::Tvm => propose_in(&tvm::Tvm, rules),
    }
}

/// One rule in `language`, as it appears in the proposed file.
pub fn translate(language: Language, rule: &Rule) -> Result<String, Untranslatable> {
    match language {
        Language::Tinygrad => tinygrad::Tinygrad.rule(&Walk::new(&tinygrad::Tinygrad, rule)?),
        Language::Morok => morok::Morok.rule(&Walk::new(&morok::Morok, rule)?),
        Language::Tvm => tvm::Tvm.rule(&Walk::new(&tvm::Tvm, rule)?),
    }
}

fn propose_in<D: Dialect>(d: &D, rules: &[&Rule]) -> Proposal {
    let mut parts = Vec::new();
    let mut untranslated = Vec::new();
    for rule in rules {
        match Walk::new(d, rule).and_then(|w| d.rule(&w)) {
            Ok(p) => parts.push(p),
            Err(e) => untranslated.push(e.to_string()),
        }
    }
    Proposal {
        language: d.language(),
        module: (!parts.is_empty()).then(|| d.module(&parts)),
        untranslated,
    }
}

/// How one language spells the pieces of a rule. A hook returns `None`
/// where the language has no counterpart.
trait Dialect: Sized {
    fn language(&self) -> Language;

    /// The names the rule's variables take (in [`Rule::vars`] order), or
    /// why they cannot be named.
    fn names(&self, rule: &Rule) -> Result<Vec<String>, String>;
    /// The matched term a constant built on the right side takes its dtype
    /// from.
    fn anchor(&self, rule: &Rule, names: &[String]) -> String;

    /// Left side: a variable; a literal (with a condition it needs, for a
    /// language whose patterns match constants by a guard; `fresh` numbers
    /// such a binding); `invalid`; an op over its operands' patterns.
    fn pat_var(&self, var: &PatVar, name: &str) -> String;
    fn pat_lit(&self, v: i64, boolean: bool, fresh: usize) -> Option<(String, Option<String>)>;
    fn pat_invalid(&self, fresh: usize) -> Option<(String, Option<String>)>;
    fn pat_op(&self, op: Op, args: &[String]) -> Option<String>;
    /// The language's patterns match a commutative op in one order only:
    /// the walk lists both.
    fn lists_orders(&self) -> bool {
        false
    }
    /// A spelled operand the language keeps on the right of a commutative
    /// op (its canonical form), so that no order puts it first.
    fn stays_right(&self, _spelled: &str) -> bool {
        false
    }

    /// Guard: exact integers and conditions over the matched terms.
    fn g_int(&self, i: i128) -> String {
        i.to_string()
    }
    fn g_bool(&self, b: bool) -> String {
        b.to_string()
    }
    fn g_val(&self, name: &str) -> String;
    fn g_bound(&self, interval: &str, hi: bool) -> String;
    /// `vmin(e) >= s` (`at_least`) or `vmax(e) < s`, where the language has
    /// a direct test for it.
    fn g_prove(&self, _interval: &str, _at_least: bool, _s: &str) -> Option<String> {
        None
    }
    /// `fits(e)`: computing `e` cannot overflow (no test by default: the
    /// peers with fixed-width integers saturate their bounds at the
    /// dtype's).
    fn g_fits(&self) -> Option<String> {
        None
    }
    /// `valid(x)`, `constrained(x)`, `is_const(x)`.
    fn g_test(&self, test: Test, name: &str) -> Option<String>;
    /// `-a` (`Op::Neg`) or `!a`.
    fn g_un(&self, op: Op, a: &str) -> String;
    /// Arithmetic of both families, `&` (for `is_pow2`), comparisons,
    /// `&&`, `||`.
    fn g_bin(&self, op: Op, a: &str, b: &str) -> Option<String>;
    /// The helpers that are numbers (`divides` and `is_pow2` are built
    /// from [`Dialect::g_bin`]).
    fn g_helper(&self, h: Helper, args: &[String]) -> Option<String>;

    /// Interval expressions: terms whose bounds the peer computes.
    fn i_scalar(&self, scalar: &Guard, value: &str, anchor: &str) -> Option<String>;
    fn i_neg(&self, a: &str) -> String;
    fn i_bin(&self, op: Op, a: &str, b: &str) -> Option<String>;

    /// Right side; `konst`: inside a constant computed when the rule fires.
    fn t_var(&self, name: &str, konst: bool) -> String;
    fn t_lit(&self, v: i64, boolean: bool, konst: bool, anchor: &str) -> Option<String>;
    fn t_invalid(&self, anchor: &str) -> Option<String>;
    fn t_bound(&self, name: &str, hi: bool, konst: bool, anchor: &str) -> Option<String>;
    fn t_computed(&self, value: &str, anchor: &str) -> String;
    /// A computed constant that is a bool (`None`: the language computes
    /// integer constants only).
    fn t_computed_bool(&self, value: &str, anchor: &str) -> Option<String> {
        Some(self.t_computed(value, anchor))
    }
    /// A helper inside a computed constant: as in a guard, by default.
    fn t_helper(&self, h: Helper, args: &[String]) -> Option<String> {
        self.g_helper(h, args)
    }
    fn t_op(&self, op: Op, args: &[String], konst: bool) -> Option<String>;

    /// The rule as it appears in the file, from its walked pieces.
    fn rule(&self, w: &Walk<'_, Self>) -> Result<String, Untranslatable>;
    /// The file, from its rules.
    fn module(&self, rules: &[String]) -> String;
}

/// A test of a matched term in a guard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Test {
    Valid,
    Constrained,
    IsConst,
}

impl Test {
    fn name(self) -> &'static str {
        match self {
            Test::Valid => "valid",
            Test::Constrained => "constrained",
            Test::IsConst => "is_const",
        }
    }
}

/// A rule walked in one dialect: its pieces spelled.
struct Walk<'r, D> {
    d: &'r D,
    rule: &'r Rule,
    names: Vec<String>,
    anchor: String,
    /// The left side, one spelling per order of commutative operands the
    /// language must list (one for the others).
    patterns: Vec<String>,
    /// Conditions the left side's literals need, in the language's guard.
    conds: Vec<String>,
    guard: Option<String>,
    rhs: String,
}

impl<'r, D: Dialect> Walk<'r, D> {
    fn new(d: &'r D, rule: &'r Rule) -> Result<Walk<'r, D>, Untranslatable> {
        let names = d.names(rule).map_err(|what| Untranslatable::Pattern {
            rule: rule.name.clone(),
            language: d.language().name(),
            what,
        })?;
        let anchor = d.anchor(rule, &names);
        let mut w = Walk {
            d,
            rule,
            names,
            anchor,
            patterns: Vec::new(),
            conds: Vec::new(),
            guard: None,
            rhs: String::new(),
        };
        w.patterns = w.pattern(&rule.lhs)?;
        w.guard = rule.guard.as_ref().map(|g| w.guard(g)).transpose()?;
        w.rhs = w.template(&rule.rhs, false)?;
        Ok(w)
    }

    fn rule(&self) -> &'r Rule {
        self.rule
    }

    fn names(&self) -> &[String] {
        &self.names
    }

    fn anchor(&self) -> &str {
        &self.anchor
    }

    /// The left side is a lone variable (a rule over any term).
    fn bare(&self) -> bool {
        matches!(self.rule.lhs, Pat::Var(_))
    }

    /// The guard with the left side's conditions first (`None`: always).
    fn condition(&self) -> Option<String> {
        let mut all = self.conds.clone();
        all.extend(self.guard.clone());
        let and = |a: &str, b: &str| self.d.g_bin(Op::And, a, b).expect("every guard has &&");
        all.into_iter().reduce(|a, b| and(&a, &b))
    }

    fn error(
        &self,
        kind: fn(String, &'static str, String) -> Untranslatable,
        what: impl Into<String>,
    ) -> Untranslatable {
        kind(
            self.rule.name.clone(),
            self.d.language().name(),
            what.into(),
        )
    }

    fn no_pattern(&self, what: impl Into<String>) -> Untranslatable {
        self.error(
            |rule, language, what| Untranslatable::Pattern {
                rule,
                language,
                what,
            },
            what,
        )
    }

    fn no_guard(&self, what: impl Into<String>) -> Untranslatable {
        self.error(
            |rule, language, what| Untranslatable::Guard {
                rule,
                language,
                what,
            },
            what,
        )
    }

    fn no_template(&self, what: impl Into<String>) -> Untranslatable {
        self.error(
            |rule, language, what| Untranslatable::Template {
                rule,
                language,
                what,
            },
            what,
        )
    }

    /// The left side's spellings.
    fn pattern(&mut self, p: &Pat) -> Result<Vec<String>, Untranslatable> {
        Ok(match p {
            Pat::Var(v) => vec![self.d.pat_var(&self.rule.vars[*v], &self.names[*v])],
            Pat::Lit(v, ty) => {
                let boolean = *ty == Ty::Fixed(DType::Bool);
                let (text, cond) = self
                    .d
                    .pat_lit(*v, boolean, self.conds.len())
                    .ok_or_else(|| self.no_pattern(format!("the constant {v}")))?;
                self.conds.extend(cond);
                vec![text]
            }
            Pat::Invalid => {
                let (text, cond) = self
                    .d
                    .pat_invalid(self.conds.len())
                    .ok_or_else(|| self.no_pattern("invalid"))?;
                self.conds.extend(cond);
                vec![text]
            }
            Pat::Op(op, _, args) => {
                let mut alts: Vec<Vec<String>> = vec![Vec::new()];
                for a in args {
                    let spelled = self.pattern(a)?;
                    alts = alts
                        .into_iter()
                        .flat_map(|prefix| {
                            spelled.iter().map(move |s| {
                                let mut p = prefix.clone();
                                p.push(s.clone());
                                p
                            })
                        })
                        .collect();
                }
                if self.d.lists_orders() && op.info().commutative {
                    let swapped: Vec<Vec<String>> = alts
                        .iter()
                        .filter(|a| a.len() == 2 && a[0] != a[1] && !self.d.stays_right(&a[1]))
                        .map(|a| vec![a[1].clone(), a[0].clone()])
                        .collect();
                    alts.extend(swapped);
                }
                alts.iter()
                    .map(|a| {
                        self.d
                            .pat_op(*op, a)
                            .ok_or_else(|| self.no_pattern(op.name()))
                    })
                    .collect::<Result<_, _>>()?
            }
            other => return Err(self.no_pattern(format!("{other:?}"))),
        })
    }

    /// The guard, in the language's conditions over the matched terms.
    fn guard(&self, g: &Guard) -> Result<String, Untranslatable> {
        let d = self.d;
        let name = |v: &usize| self.names[*v].as_str();
        if let Some(p) = self.proved_bound(g)? {
            return Ok(p);
        }
        Ok(match g {
            Guard::Int(i) => d.g_int(*i),
            Guard::Bool(b) => d.g_bool(*b),
            Guard::Val(v) => d.g_val(name(v)),
            Guard::VMin(e) => d.g_bound(&self.interval(e)?, false),
            Guard::VMax(e) => d.g_bound(&self.interval(e)?, true),
            Guard::Fits(..) => d.g_fits().ok_or_else(|| {
                self.no_guard("fits (its bounds saturate at the dtype: no overflow test)")
            })?,
            Guard::Valid(v) => self.test(Test::Valid, name(v))?,
            Guard::Constrained(v) => self.test(Test::Constrained, name(v))?,
            Guard::IsConst(v) => self.test(Test::IsConst, name(v))?,
            Guard::TyMin(_) | Guard::TyMax(_) => {
                return Err(self.no_guard(match d.language() {
                    Language::Tinygrad => "min_of/max_of (unbounded integers)",
                    _ => "min_of/max_of",
                }))
            }
            Guard::Un(op, a) => d.g_un(*op, &self.guard(a)?),
            Guard::Bin(Op::And, a, b) => {
                // A conjunct that always holds in the language (TVM has no
                // invalid: `valid(x)` is true there) is left out.
                let (a, b) = (self.guard(a)?, self.guard(b)?);
                let t = d.g_bool(true);
                match (a == t, b == t) {
                    (true, _) => b,
                    (_, true) => a,
                    _ => d.g_bin(Op::And, &a, &b).expect("every guard has &&"),
                }
            }
            Guard::Bin(op, a, b) => d
                .g_bin(*op, &self.guard(a)?, &self.guard(b)?)
                .ok_or_else(|| self.no_guard(op.name()))?,
            Guard::Call(h, args) => {
                let a: Vec<String> = args
                    .iter()
                    .map(|x| self.guard(x))
                    .collect::<Result<_, _>>()?;
                self.helper(*h, &a).ok_or_else(|| self.no_guard(h.name()))?
            }
        })
    }

    fn test(&self, test: Test, name: &str) -> Result<String, Untranslatable> {
        self.d
            .g_test(test, name)
            .ok_or_else(|| self.no_guard(test.name()))
    }

    /// A guard helper: `divides(d, n)` as `d != 0 && n % d == 0`,
    /// `is_pow2(n)` as `0 < n && n & (n - 1) == 0`, in the language's own
    /// operators; the others by the language.
    fn helper(&self, h: Helper, a: &[String]) -> Option<String> {
        let d = self.d;
        let (zero, one) = (d.g_int(0), d.g_int(1));
        match (h, a) {
            (Helper::Divides, [div, n]) => {
                let nonzero = d.g_bin(Op::Ne, div, &zero)?;
                let multiple = d.g_bin(Op::Eq, &d.g_bin(Op::Rem, n, div)?, &zero)?;
                d.g_bin(Op::And, &nonzero, &multiple)
            }
            (Helper::IsPow2, [n]) => {
                let positive = d.g_bin(Op::Lt, &zero, n)?;
                let below = d.g_bin(Op::Sub, n, &one)?;
                let single = d.g_bin(Op::Eq, &d.g_bin(Op::BitAnd, n, &below)?, &zero)?;
                d.g_bin(Op::And, &positive, &single)
            }
            _ => d.g_helper(h, a),
        }
    }

    /// `s <= vmin(e)`, `s < vmin(e)`, `vmax(e) < s`, `vmax(e) <= s` with
    /// `s` free of bounds, by the language's direct test when it has one.
    fn proved_bound(&self, g: &Guard) -> Result<Option<String>, Untranslatable> {
        let Guard::Bin(op @ (Op::Lt | Op::Le), a, b) = g else {
            return Ok(None);
        };
        let plain = |s: &Guard| !mentions_bounds(s);
        let (e, at_least, s) = match (&**a, &**b) {
            (s, Guard::VMin(e)) if plain(s) => (e, true, s),
            (Guard::VMax(e), s) if plain(s) => (e, false, s),
            _ => return Ok(None),
        };
        // `s < vmin(e)` is `vmin(e) >= s + 1`; `vmax(e) <= s` is `vmax(e) < s + 1`.
        let strict_lower = at_least && *op == Op::Lt;
        let loose_upper = !at_least && *op == Op::Le;
        let s = match (s, strict_lower || loose_upper) {
            (Guard::Int(i), true) => self.d.g_int(i + 1),
            (s, true) => match self.d.g_bin(Op::Add, &self.guard(s)?, &self.d.g_int(1)) {
                Some(t) => t,
                None => return Ok(None),
            },
            (s, false) => self.guard(s)?,
        };
        Ok(self.d.g_prove(&self.interval(e)?, at_least, &s))
    }

    /// An interval expression as a term of the language whose bounds the
    /// peer computes by interval arithmetic too.
    fn interval(&self, e: &IExpr) -> Result<String, Untranslatable> {
        Ok(match e {
            IExpr::Var(v) => self.names[*v].clone(),
            IExpr::Scalar(g) => {
                let anchor = self
                    .names
                    .first()
                    .ok_or_else(|| self.no_guard("a constant"))?;
                self.d
                    .i_scalar(g, &self.guard(g)?, anchor)
                    .ok_or_else(|| self.no_guard("a computed constant in a bound"))?
            }
            IExpr::Neg(a) => self.d.i_neg(&self.interval(a)?),
            IExpr::Bin(op, a, b) => self
                .d
                .i_bin(*op, &self.interval(a)?, &self.interval(b)?)
                .ok_or_else(|| self.no_guard(op.name()))?,
        })
    }

    /// The right side; `konst`: inside a computed constant.
    fn template(&self, p: &Pat, konst: bool) -> Result<String, Untranslatable> {
        let d = self.d;
        Ok(match p {
            Pat::Var(v) => d.t_var(&self.names[*v], konst),
            Pat::Lit(v, ty) => d
                .t_lit(*v, *ty == Ty::Fixed(DType::Bool), konst, &self.anchor)
                .ok_or_else(|| self.no_template(format!("the constant {v}")))?,
            Pat::Invalid => d
                .t_invalid(&self.anchor)
                .ok_or_else(|| self.no_template("invalid"))?,
            Pat::Bound(v, hi) => d
                .t_bound(&self.names[*v], *hi, konst, &self.anchor)
                .ok_or_else(|| self.no_template(if *hi { "vmax" } else { "vmin" }))?,
            Pat::Computed(inner) => {
                let value = self.template(inner, true)?;
                let boolean = matches!(
                    **inner,
                    Pat::Op(
                        Op::And | Op::Or | Op::Xor | Op::Not | Op::Lt | Op::Le | Op::Eq | Op::Ne,
                        ..
                    )
                );
                if boolean {
                    d.t_computed_bool(&value, &self.anchor)
                        .ok_or_else(|| self.no_template("a computed bool"))?
                } else {
                    d.t_computed(&value, &self.anchor)
                }
            }
            Pat::Helper(h, args) => {
                let a: Vec<String> = args
                    .iter()
                    .map(|x| self.template(x, true))
                    .collect::<Result<_, _>>()?;
                d.t_helper(*h, &a)
                    .ok_or_else(|| self.no_template(h.name()))?
            }
            Pat::Op(op, _, args) => {
                let a: Vec<String> = args
                    .iter()
                    .map(|x| self.template(x, konst))
                    .collect::<Result<_, _>>()?;
                d.t_op(*op, &a, konst)
                    .ok_or_else(|| self.no_template(op.name()))?
            }
        })
    }
}

/// The infix symbol of `op` shared by the languages' integer and boolean
/// expressions (Python's, Rust's and C++'s; Python spells `&&` and `||` as
/// words, which its dialect does first).
fn infix_symbol(op: Op) -> Option<&'static str> {
    Some(match op {
        Op::Add => "+",
        Op::Sub => "-",
        Op::Mul => "*",
        Op::Lt => "<",
        Op::Le => "<=",
        Op::Eq => "==",
        Op::Ne => "!=",
        Op::And => "&&",
        Op::Or => "||",
        Op::BitAnd => "&",
        _ => return None,
    })
}

/// A guard term that reads a bound (not a plain number).
fn mentions_bounds(g: &Guard) -> bool {
    match g {
        Guard::VMin(_) | Guard::VMax(_) | Guard::Fits(..) => true,
        Guard::Un(_, a) => mentions_bounds(a),
        Guard::Bin(_, a, b) => mentions_bounds(a) || mentions_bounds(b),
        Guard::Call(_, args) => args.iter().any(mentions_bounds),
        _ => false,
    }
}

/// The comment lines above a proposed rule: the identity it implements and
/// the rule as written, behind the language's comment marker.
fn header(rule: &Rule, marker: &str) -> String {
    let sep = format!("\n{marker} ");
    format!(
        "{marker} {}\n{marker} tileproof rule {}: {}\n",
        rule.comment.replace('\n', &sep),
        rule.name,
        rule.text.replace('\n', " ")
    )
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

    fn builtin(name: &str) -> &'static Rule {
        engine::rules::builtin().rule(name).unwrap()
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
        let text = translate(Language::Tinygrad, &r).unwrap();
        let (function, pair) = text.split_once('\0').unwrap();
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

    #[test]
    fn the_peer_names_its_language() {
        assert_eq!(
            Language::of_peer("tinygrad.sym 0.14.0"),
            Some(Language::Tinygrad)
        );
        assert_eq!(Language::of_peer("morok.symbolic"), Some(Language::Morok));
        assert_eq!(Language::of_peer("tvm.simplify.int32"), Some(Language::Tvm));
        assert_eq!(Language::of_peer("mlir.arith"), None);
    }

    #[test]
    fn morok_binds_constants_and_checks_a_truncating_guard_on_vmin_vmax() {
        let text = translate(Language::Morok, builtin("rem_drop_multiple")).unwrap();
        let body = text.lines().skip(2).collect::<Vec<_>>().join("\n");
        assert_eq!(
            body,
            "Mod(Add[Mul[a, c @const(c_val)], b], n @const(n_val)) => {\n    \
             if !((((((n_val.try_int()? as i128) != 0) && ((c_val.try_int()? as i128).checked_rem((n_val.try_int()? as i128))? == 0)) && valid(a)) \
             && (((0 <= (b.vmin().try_int()? as i128)) && (0 <= (a.mul(&c).add(&b).vmin().try_int()? as i128))) \
             || (((b.vmax().try_int()? as i128) <= 0) && ((a.mul(&c).add(&b).vmax().try_int()? as i128) <= 0))))) { return None; }\n    \
             Some(b.mod_(&n))\n},"
        );
        assert!(
            text.starts_with("// (a * C + b) % N == b % N when N divides C"),
            "{text}"
        );
    }

    #[test]
    fn morok_builds_a_constant_of_the_matched_dtype() {
        let text = translate(Language::Morok, builtin("mul_zero")).unwrap();
        assert_eq!(
            text.lines().skip(2).collect::<Vec<_>>().join("\n"),
            "root @ Mul[x, @zero] => {\n    if !(valid(x)) { return None; }\n    \
             Some(UOp::const_(root.dtype(), ConstValue::Int(0)))\n},"
        );
        let text = translate(Language::Morok, builtin("div_split_multiple")).unwrap();
        assert!(
            text.contains(
                "Some(a.mul(&UOp::const_(root.dtype(), ConstValue::Int(i64::try_from((c_val.try_int()? as i128).checked_div((n_val.try_int()? as i128))?).ok()?))).add(&b.idiv(&n)))"
            ),
            "{text}"
        );
    }

    #[test]
    fn morok_has_no_floor_division_and_no_overflow_test() {
        let p = propose(
            Language::Morok,
            &[builtin("mod_drop_multiple"), builtin("add_push_const")],
        );
        assert!(p.module.is_none());
        assert_eq!(
            p.untranslated,
            [
                "mod_drop_multiple: Morok has no pattern for `mod`",
                "add_push_const: the guard's `fits (its bounds saturate at the dtype: no overflow test)` has no Morok counterpart",
            ]
        );
    }

    #[test]
    fn tvm_writes_floor_division_with_floordiv_and_a_guard_on_the_constants() {
        let text = translate(Language::Tvm, builtin("floordiv_floordiv")).unwrap();
        assert_eq!(
            text.lines().skip(2).collect::<Vec<_>>().join("\n"),
            "// in RewriteSimplifier::Impl::VisitExpr_(const FloorDivNode* op)\n\
             TVM_TRY_REWRITE_IF(floordiv(floordiv(x, c1), c2), floordiv(x, c1 * c2),\n                   \
             0 < c2.Eval()->value);"
        );
    }

    #[test]
    fn tvm_lists_the_orders_of_commutative_operands_and_proves_bounds() {
        let text = translate(Language::Tvm, builtin("rem_drop_multiple")).unwrap();
        assert_eq!(
            text.lines().skip(2).collect::<Vec<_>>().join("\n"),
            "// in RewriteSimplifier::Impl::VisitExpr_(const ModNode* op)\n\
             TVM_TRY_REWRITE_IF(matches_one_of(truncmod(x * c1 + y, c2), truncmod(y + x * c1, c2)), truncmod(y, c2),\n                   \
             c2.Eval()->value != 0 && c1.Eval()->value % c2.Eval()->value == 0 && \
             ((CanProveGreaterEqual(y.Eval(), 0) && CanProveGreaterEqual((x * c1 + y).Eval(), 0)) \
             || (CanProveLess(y.Eval(), 1) && CanProveLess((x * c1 + y).Eval(), 1))));"
        );
    }

    #[test]
    fn tvm_has_no_invalid_so_validity_is_dropped_and_a_lone_constant_takes_a_type() {
        let text = translate(Language::Tvm, builtin("mul_zero")).unwrap();
        assert!(
            text.ends_with(
                "// in RewriteSimplifier::Impl::VisitExpr_(const MulNode* op)\nTVM_TRY_REWRITE(x * 0, ZeroWithTypeLike(x));\n"
            ),
            "{text}"
        );
        let p = propose(
            Language::Tvm,
            &[builtin("add_push_const"), builtin("mod_in_range")],
        );
        assert_eq!(
            p.untranslated,
            ["add_push_const: the guard's `fits (its bounds saturate at the dtype: no overflow test)` has no TVM counterpart"]
        );
        let module = p.module.unwrap();
        assert!(
            module.contains(
                "TVM_TRY_REWRITE_IF(floormod(x, y), x,\n                   (CanProveGreaterEqual(y.Eval(), 1) && CanProveGreaterEqual(x.Eval(), 0) && analyzer_->const_int_bound(x.Eval())->max_value < analyzer_->const_int_bound(y.Eval())->min_value) || (CanProveLess(y.Eval(), 0) && analyzer_->const_int_bound(y.Eval())->max_value < analyzer_->const_int_bound(x.Eval())->min_value && CanProveLess(x.Eval(), 1)));"
            ),
            "{module}"
        );
    }

    #[test]
    fn tinygrad_matches_a_truncating_remainder_as_cmod_and_reads_bounds_of_built_uops() {
        let text = translate(Language::Tinygrad, builtin("rem_drop_multiple")).unwrap();
        let (function, pair) = text.split_once('\0').unwrap();
        assert_eq!(
            pair,
            "(UPat(Ops.CMOD, src=(UPat(Ops.ADD, src=[UPat(Ops.MUL, src=[UPat.var(\"a\"), UPat.cvar(\"C\")]), UPat.var(\"b\")]), UPat.cvar(\"N\"),)).named(\"root_\"), rem_drop_multiple)"
        );
        assert!(
            function.contains("def rem_drop_multiple(root_, a, C, b, N):"),
            "{function}"
        );
        assert!(
            function.contains("(0 <= ((a * a.const_like(C.arg)) + b).vmin)"),
            "{function}"
        );
    }

    #[test]
    fn morok_computes_no_bool_constant_where_tinygrad_does() {
        let r = builtin("fold_and");
        assert_eq!(
            translate(Language::Morok, r).unwrap_err().to_string(),
            "fold_and: the right side's `a computed bool` has no Morok counterpart"
        );
        let text = translate(Language::Tinygrad, r).unwrap();
        assert!(
            text.contains("return root_.const_like((C1.arg and C2.arg))"),
            "{text}"
        );
    }
}
