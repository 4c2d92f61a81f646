//! A Morok `patterns!` entry translated into tileproof's rule DSL
//! (docs/protocol.md, section 6, `translation`; issue 48).
//!
//! The left side gives the DSL's left side: each op one DSL operator, a
//! name one pattern variable (one name, one node: Morok checks a repeated
//! name with `Arc::ptr_eq`, and the DSL's IR is hash-consed as Morok's
//! is), `name @const(value)` an uppercase constant variable, `@zero` and
//! `@one` their literals; `Op[a, b]` is the DSL's own matching in both
//! orders. The guard and the right side (an expression or a block) are
//! evaluated symbolically: each `if` splits the evaluation into paths,
//! each with the conditions that lead to it; a path that returns `None`
//! is where the entry does not fire, every other is one DSL rule whose
//! guard is its conditions. A right side builds with the `UOp` builders
//! (`x.clone()`, `add`, `try_cmplt`, `UOp::index_const`, ...), reads
//! `vmin()`/`vmax()` and computes with the constants' `i64` values: Rust's
//! `i64` arithmetic (and `eval_*_typed` on `Index`) wraps, so a computed
//! constant is written in the DSL's wrapping `i64` and cast back,
//! `index(i64(C1) - i64(C0))`, where it is more than a constant.
//!
//! What has no DSL form is an error naming the construct and its line: a
//! helper that walks the graph (`fold_divmod_general`, `lt_folding`), a
//! test of a node's identity or op, an op tileproof's input never has.

use crate::morok_source::{Args, ConstPat, Entry, Pattern};
use std::collections::HashMap;
use syn::spanned::Spanned;
use syn::{BinOp, Expr, Lit, Stmt, UnOp};

/// Paths one entry may split into.
const MAX_PATHS: usize = 16;

/// Words the DSL reserves: a Morok name that is one gets a suffix.
const RESERVED: &[&str] = &[
    "where",
    "min",
    "max",
    "invalid",
    "true",
    "false",
    "vmin",
    "vmax",
    "valid",
    "fits",
    "gcd",
    "abs",
    "divides",
    "is_pow2",
    "if",
    "using",
    "rule",
    "group",
    "index",
    "i32",
    "i64",
    "floordiv",
    "mod",
    "ceildiv",
    "constrained",
    "is_const",
    "min_of",
    "max_of",
    "bool",
    "cast",
    "terminates",
];

/// The entry's DSL rules (disjoint guards, in order), or what stops the
/// translation.
pub fn translate(e: &Entry) -> Result<Vec<String>, String> {
    let alts = match &e.rule.lhs {
        Pattern::Any(alts) => alts.clone(),
        p => vec![p.clone()],
    };
    let base = e
        .name()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect::<String>()
        .replace("__", "_")
        .trim_end_matches('_')
        .to_string();
    let mut out = Vec::new();
    for alt in &alts {
        // Each `Mul` by a constant is also tileproof's `-x` (the adapter
        // builds that as Morok's `neg()`, MUL(x, -1)): one left side per
        // choice of spelling.
        let spellings = 1usize << Tr::new(alt, e, Vec::new()).negations(alt, e)?.min(MAX_NEG);
        for mask in 0..spellings {
            let neg = (0..MAX_NEG).map(|k| mask >> k & 1 == 1).collect();
            alt_rules(alt, e, neg, &base, &mut out)?;
        }
    }
    if out.is_empty() {
        return Err(format!(
            "no path of patterns.rs:{} returns a result tileproof can build",
            e.line
        ));
    }
    Ok(out)
}

/// `Mul` nodes by a constant whose `-x` spelling is a left side of its own
/// (beyond this many, only the first ones').
const MAX_NEG: usize = 3;

/// The DSL rules of one alternative of an entry's left side, with the
/// `Mul` nodes chosen by `neg` spelled as tileproof's `-x`.
fn alt_rules(
    alt: &Pattern,
    e: &Entry,
    neg: Vec<bool>,
    base: &str,
    out: &mut Vec<String>,
) -> Result<(), String> {
    {
        let mut t = Tr::new(alt, e, neg);
        let lhs = t.pattern(alt, root_type(alt, e), true)?;
        let mut paths = Vec::new();
        let env = t.env.clone();
        let mut conds = t.conds.clone();
        if let Some(g) = &e.rule.guard {
            let mut env = env.clone();
            conds.push(t.cond(g, &mut env)?);
        }
        let body: Vec<Stmt> = match &e.rule.rhs {
            Expr::Block(b) => b.block.stmts.clone(),
            other => vec![Stmt::Expr(other.clone(), None)],
        };
        t.block(&body, env, conds, e.rule.infallible, &mut paths)?;
        for (conds, result) in paths {
            let Some(rhs) = result else { continue };
            let conds: Vec<String> = conds.into_iter().filter(|c| c != "true").collect();
            if conds.iter().any(|c| c == "false") {
                continue;
            }
            let k = out.len();
            let guard = if conds.is_empty() {
                String::new()
            } else {
                format!(" if {}", conds.join(" && "))
            };
            out.push(format!("rule {base}_{k}: {lhs} => {}{guard}", rhs.text));
        }
    }
    Ok(())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ty {
    Int,
    Bool,
}

#[derive(Clone, Debug)]
struct Term {
    text: String,
    ty: Ty,
}

/// A Rust integer of the entry: `exact` its DSL text where it is a leaf
/// (a constant variable, a literal, a bound), `wrap` its `i64` DSL text.
#[derive(Clone, Debug)]
struct Int {
    exact: Option<String>,
    wrap: String,
}

impl Int {
    fn leaf(text: String) -> Int {
        Int {
            wrap: format!("i64({text})"),
            exact: Some(text),
        }
    }

    /// As an `index` term.
    fn term(&self) -> Term {
        Term {
            text: self
                .exact
                .clone()
                .unwrap_or_else(|| format!("index({})", self.wrap)),
            ty: Ty::Int,
        }
    }
}

#[derive(Clone, Debug)]
enum V {
    Term(Term),
    Int(Int),
    /// A Rust `bool`, as a DSL guard condition.
    Cond(String),
    Opt(Option<Box<V>>),
    Tuple(Vec<V>),
    Dtype(Ty),
    /// The op a `for` block's variable stands for.
    Op,
    Unit,
}

impl V {
    /// What the value is, for messages.
    fn kind(&self) -> &'static str {
        match self {
            V::Term(_) => "a node",
            V::Int(_) => "an integer",
            V::Cond(_) => "a bool",
            V::Opt(_) => "an Option",
            V::Tuple(_) => "a tuple",
            V::Dtype(_) => "a dtype",
            V::Op => "the `for` block's op",
            V::Unit => "a value the DSL has no form for",
        }
    }
}

type Env = HashMap<String, V>;
type Paths = Vec<(Vec<String>, Option<Term>)>;

struct Tr {
    /// How often each name occurs in the left side being translated.
    names: HashMap<String, usize>,
    /// Which `Mul` nodes by a constant (in the order the left side is
    /// read) are spelled as tileproof's `-x`, and how many were read.
    neg: Vec<bool>,
    muls: usize,
    env: Env,
    conds: Vec<String>,
    fresh: usize,
    op_var: Option<(String, String)>,
    line: usize,
}

fn var_name(n: &str) -> String {
    let s = n.trim_start_matches('_').to_lowercase();
    let s = if s.is_empty() { "w".to_string() } else { s };
    if RESERVED.contains(&s.as_str()) {
        format!("{s}_v")
    } else {
        s
    }
}

fn const_name(n: &str) -> String {
    let s = n.trim_start_matches('_').to_uppercase();
    if s.is_empty() { "K".to_string() } else { s }
}

fn line_of(e: &impl Spanned) -> usize {
    e.span().start().line
}

fn shown(e: &impl quote::ToTokens) -> String {
    let s = e.to_token_stream().to_string();
    if s.len() > 60 {
        format!("{}...", &s[..57])
    } else {
        s
    }
}

/// The DSL operator of a Morok binary op: its text, operand and result
/// types.
fn binary(op: &str) -> Option<(&'static str, Ty, Ty)> {
    Some(match op {
        "Add" => ("+", Ty::Int, Ty::Int),
        "Sub" => ("-", Ty::Int, Ty::Int),
        "Mul" => ("*", Ty::Int, Ty::Int),
        "Idiv" => ("/", Ty::Int, Ty::Int),
        "Mod" => ("%", Ty::Int, Ty::Int),
        "Max" => ("max", Ty::Int, Ty::Int),
        "Lt" => ("<", Ty::Int, Ty::Bool),
        "Le" => ("<=", Ty::Int, Ty::Bool),
        "Eq" => ("==", Ty::Int, Ty::Bool),
        "Ne" => ("!=", Ty::Int, Ty::Bool),
        // tileproof offers `bitand` to no peer: its `and` is the bool one.
        "And" => ("&&", Ty::Bool, Ty::Bool),
        "Or" => ("||", Ty::Bool, Ty::Bool),
        "Xor" => ("^", Ty::Bool, Ty::Bool),
        _ => return None,
    })
}

/// The type of a left side's root: its op's result.
fn root_type(p: &Pattern, e: &Entry) -> Ty {
    let op = match p {
        Pattern::Op { op, .. } => op.as_str(),
        Pattern::OpVar { .. } => e.op_var.as_ref().map_or("", |(_, o)| o.as_str()),
        Pattern::Binding(_, p) => return root_type(p, e),
        _ => "",
    };
    match (op, binary(op)) {
        ("Not", _) => Ty::Bool,
        (_, Some((_, _, res))) => res,
        _ => Ty::Int,
    }
}

/// The operand and the constant of `Mul` by a constant that may be -1
/// (`c @const(v)`, `@const`, `-1`), either order.
fn by_constant<'p>(a: &'p Pattern, b: &'p Pattern) -> Option<(&'p Pattern, &'p Pattern)> {
    let may_be_minus_one = |p: &Pattern| match p {
        Pattern::ConstWithValue(..) | Pattern::Const(ConstPat::Any | ConstPat::Int(-1)) => true,
        Pattern::Binding(_, inner) => {
            matches!(**inner, Pattern::Const(ConstPat::Any | ConstPat::Int(-1)))
        }
        _ => false,
    };
    if may_be_minus_one(b) {
        Some((a, b))
    } else if may_be_minus_one(a) {
        Some((b, a))
    } else {
        None
    }
}

/// Every name a pattern binds or repeats, once per occurrence.
fn pattern_names(p: &Pattern) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![p];
    while let Some(p) = todo.pop() {
        match p {
            Pattern::Var(n) | Pattern::ConstWithValue(n, _) => out.push(n.clone()),
            Pattern::Binding(n, inner) => {
                out.push(n.clone());
                todo.push(inner);
            }
            Pattern::Op { args, .. } | Pattern::OpVar { args, .. } | Pattern::Any(args) => {
                todo.extend(args)
            }
            Pattern::OptionSome(inner) => todo.push(inner),
            Pattern::Wildcard
            | Pattern::Const(_)
            | Pattern::VConst
            | Pattern::AnyConst
            | Pattern::OptionNone => {}
        }
    }
    out
}

fn commutative(op: &str) -> bool {
    matches!(
        op,
        "Add" | "Mul" | "Max" | "Eq" | "Ne" | "And" | "Or" | "Xor"
    )
}

fn apply(op: &str, a: &str, b: &str) -> String {
    if op == "max" {
        format!("max({a}, {b})")
    } else {
        format!("({a} {op} {b})")
    }
}

fn and(a: &str, b: &str) -> String {
    match (a, b) {
        ("true", x) | (x, "true") => x.to_string(),
        ("false", _) | (_, "false") => "false".into(),
        _ => format!("({a} && {b})"),
    }
}

fn not(a: &str) -> String {
    match a {
        "true" => "false".into(),
        "false" => "true".into(),
        _ => match a.strip_prefix("!(").and_then(|s| s.strip_suffix(')')) {
            // `!(!(c))` is `c` (where the parentheses are one pair).
            Some(inner) if balanced(inner) => inner.to_string(),
            _ => format!("!({a})"),
        },
    }
}

fn balanced(s: &str) -> bool {
    let mut depth = 0i32;
    for ch in s.chars() {
        depth += match ch {
            '(' => 1,
            ')' => -1,
            _ => 0,
        };
        if depth < 0 {
            return false;
        }
    }
    depth == 0
}

impl Tr {
    fn new(alt: &Pattern, e: &Entry, neg: Vec<bool>) -> Tr {
        let mut names = HashMap::new();
        for n in pattern_names(alt) {
            *names.entry(n).or_insert(0) += 1;
        }
        Tr {
            names,
            neg,
            muls: 0,
            env: HashMap::new(),
            conds: Vec::new(),
            fresh: 0,
            op_var: e.op_var.clone(),
            line: e.line,
        }
    }

    /// How many `Mul` nodes by a constant the left side has.
    fn negations(mut self, alt: &Pattern, e: &Entry) -> Result<usize, String> {
        self.pattern(alt, root_type(alt, e), true)?;
        Ok(self.muls)
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.fresh += 1;
        format!("{prefix}{}", self.fresh)
    }

    fn bind(&mut self, name: &str, v: V) {
        if !name.starts_with('_') || name.len() > 1 {
            self.env.insert(name.to_string(), v);
        }
    }

    /// The DSL text of a left side (a node of type `ty`).
    fn pattern(&mut self, p: &Pattern, ty: Ty, root: bool) -> Result<String, String> {
        let line = self.line;
        Ok(match p {
            Pattern::Wildcard => self.fresh("w"),
            Pattern::Var(n) => {
                if root {
                    return Err(format!(
                        "patterns.rs:{line}: a wildcard entry (it matches every op)"
                    ));
                }
                let t = var_name(n);
                self.bind(
                    n,
                    V::Term(Term {
                        text: t.clone(),
                        ty,
                    }),
                );
                t
            }
            Pattern::Binding(n, inner) => {
                let t = self.pattern(inner, ty, root)?;
                self.bind(
                    n,
                    V::Term(Term {
                        text: t.clone(),
                        ty,
                    }),
                );
                t
            }
            Pattern::Const(c) => match (c, ty) {
                (ConstPat::Zero, Ty::Int) => "0".into(),
                (ConstPat::One, Ty::Int) => "1".into(),
                (ConstPat::Zero, Ty::Bool) => "false".into(),
                (ConstPat::One, Ty::Bool) => "true".into(),
                (ConstPat::Int(v), Ty::Int) => v.to_string(),
                (ConstPat::Any, Ty::Int) => self.fresh("K"),
                _ => {
                    return Err(format!(
                        "patterns.rs:{line}: a constant pattern of a bool or float operand"
                    ));
                }
            },
            Pattern::ConstWithValue(n, v) => {
                if ty != Ty::Int {
                    return Err(format!(
                        "patterns.rs:{line}: `{n} @const({v})` of a bool operand"
                    ));
                }
                let c = const_name(n);
                self.bind(
                    n,
                    V::Term(Term {
                        text: c.clone(),
                        ty,
                    }),
                );
                self.bind(v, V::Int(Int::leaf(c.clone())));
                c
            }
            Pattern::VConst | Pattern::AnyConst => {
                return Err(format!(
                    "patterns.rs:{line}: a vector constant (VCONST), which tileproof has no form for"
                ));
            }
            Pattern::OptionSome(_) | Pattern::OptionNone => {
                return Err(format!("patterns.rs:{line}: an `Option` field pattern"));
            }
            Pattern::Any(_) => {
                return Err(format!(
                    "patterns.rs:{line}: alternatives (`a | b`) below the root"
                ));
            }
            Pattern::OpVar { var, args } => {
                let op = match &self.op_var {
                    Some((v, op)) if v == var => op.clone(),
                    _ => return Err(format!("patterns.rs:{line}: `{var}(..)` outside its `for`")),
                };
                self.op(&op, args, &[], Args::Tuple, false, ty)?
            }
            Pattern::Op {
                op,
                args,
                fields,
                how,
                rest,
            } => self.op(op, args, fields, *how, *rest, ty)?,
        })
    }

    fn op(
        &mut self,
        op: &str,
        args: &[Pattern],
        fields: &[String],
        how: Args,
        rest: bool,
        ty: Ty,
    ) -> Result<String, String> {
        let line = self.line;
        if how == Args::Struct || rest {
            return Err(format!(
                "patterns.rs:{line}: a {} node's fields ({}), which tileproof has no form for",
                op.to_uppercase(),
                if fields.is_empty() {
                    "..".to_string()
                } else {
                    fields.join(", ")
                }
            ));
        }
        if how == Args::Permute && !commutative(op) {
            return Err(format!(
                "patterns.rs:{line}: `{op}[..]` in every order, which the DSL's `{op}` does not match"
            ));
        }
        match (op, args) {
            ("Where", [c, a, b]) => {
                let c = self.pattern(c, Ty::Bool, false)?;
                let a = self.pattern(a, ty, false)?;
                let b = self.pattern(b, ty, false)?;
                Ok(format!("where({c}, {a}, {b})"))
            }
            ("Not", [a]) if ty == Ty::Bool => Ok(format!("!{}", self.pattern(a, Ty::Bool, false)?)),
            ("Gt" | "Ge", _) => Err(format!(
                "patterns.rs:{line}: Morok's {}, which tileproof's input never has (its `a > b` is Morok's `b < a`)",
                op.to_uppercase()
            )),
            ("Neg", _) => Err(format!(
                "patterns.rs:{line}: Morok's NEG, which its `neg()` never builds (it builds MUL(x, -1))"
            )),
            (_, [a, b]) => match binary(op) {
                Some((dsl, _, _)) if how == Args::Tuple && commutative(op) => {
                    // `Op(a, b)` matches in this order only; the DSL's
                    // operator in both. That is the same rule unless a
                    // name of one operand is named again outside the node
                    // (`Idiv(Mul(x, y), y)`: `Mul(y, x) / y` is no match).
                    let (na, nb) = (pattern_names(a), pattern_names(b));
                    let here = |n: &String| {
                        na.iter().filter(|m| *m == n).count()
                            + nb.iter().filter(|m| *m == n).count()
                    };
                    let pinned = na
                        .iter()
                        .chain(&nb)
                        .find(|n| (na.contains(n) != nb.contains(n)) && self.names[*n] > here(n));
                    if let Some(n) = pinned {
                        return Err(format!(
                            "patterns.rs:{line}: `{op}(..)` in its order only, with `{n}` named again outside it: \
                             the DSL's `{dsl}` matches both orders"
                        ));
                    }
                    self.binary_node(op, a, b, ty, how)
                }
                Some(_) => self.binary_node(op, a, b, ty, how),
                None => Err(format!(
                    "patterns.rs:{line}: Morok's {}, which tileproof has no op for",
                    op.to_uppercase()
                )),
            },
            _ => Err(format!(
                "patterns.rs:{line}: Morok's {}, which tileproof has no op for",
                op.to_uppercase()
            )),
        }
    }

    /// A binary op's node, its operands of the op's type.
    fn binary_node(
        &mut self,
        op: &str,
        a: &Pattern,
        b: &Pattern,
        ty: Ty,
        how: Args,
    ) -> Result<String, String> {
        let line = self.line;
        if op == "Mul" && ty == Ty::Int {
            // `neg()` builds MUL(x, -1): the constant second.
            if let Some((x, c)) =
                by_constant(a, b).filter(|(_, c)| how == Args::Permute || std::ptr::eq(*c, b))
            {
                let k = self.muls;
                self.muls += 1;
                if self.neg.get(k) == Some(&true) {
                    return self.negation(x, c);
                }
            }
        }
        match binary(op) {
            Some((dsl, arg, res)) if res == ty => {
                let a = self.pattern(a, arg, false)?;
                let b = self.pattern(b, arg, false)?;
                Ok(apply(dsl, &a, &b))
            }
            Some(_) => Err(format!(
                "patterns.rs:{line}: {} where a {} is expected",
                op.to_uppercase(),
                if ty == Ty::Bool { "bool" } else { "number" }
            )),
            None => Err(format!(
                "patterns.rs:{line}: Morok's {}, which tileproof has no op for",
                op.to_uppercase()
            )),
        }
    }

    /// `x * c` as tileproof's `-x`: the constant is -1 (no match where
    /// the pattern fixes another one).
    fn negation(&mut self, x: &Pattern, c: &Pattern) -> Result<String, String> {
        let minus_one = "(-1)".to_string();
        match c {
            Pattern::ConstWithValue(n, v) => {
                self.bind(
                    n,
                    V::Term(Term {
                        text: minus_one.clone(),
                        ty: Ty::Int,
                    }),
                );
                self.bind(v, V::Int(Int::leaf(minus_one)));
            }
            Pattern::Binding(n, _) => self.bind(
                n,
                V::Term(Term {
                    text: minus_one,
                    ty: Ty::Int,
                }),
            ),
            _ => {}
        }
        Ok(format!("(-{})", self.pattern(x, Ty::Int, false)?))
    }

    // ---- the right side -----------------------------------------------------------

    /// The paths of a block: each its conditions and its result (`None`:
    /// the entry does not fire).
    fn block(
        &mut self,
        stmts: &[Stmt],
        mut env: Env,
        conds: Vec<String>,
        infallible: bool,
        out: &mut Paths,
    ) -> Result<(), String> {
        if out.len() > MAX_PATHS {
            return Err(format!(
                "patterns.rs:{}: more than {MAX_PATHS} paths",
                self.line
            ));
        }
        let Some((first, rest)) = stmts.split_first() else {
            return Err(format!(
                "patterns.rs:{}: a block that ends without a result",
                self.line
            ));
        };
        match first {
            Stmt::Local(l) => {
                let init = l
                    .init
                    .as_ref()
                    .ok_or_else(|| format!("patterns.rs:{}: `let` without a value", line_of(l)))?;
                if let Expr::If(i) = &*init.expr {
                    // `let v = if c { a } else { b };`: a path each.
                    let c = self.cond(&i.cond, &mut env)?;
                    let Some((_, els)) = &i.else_branch else {
                        return Err(format!("patterns.rs:{}: `if` without `else`", line_of(i)));
                    };
                    for (cc, branch) in [
                        (c.clone(), block_value(&i.then_branch)?),
                        (not(&c), els.as_ref()),
                    ] {
                        let mut env = env.clone();
                        let v = self.value(branch, &mut env)?;
                        self.let_pat(&l.pat, v, &mut env)?;
                        let mut conds = conds.clone();
                        conds.push(cc);
                        self.block(rest, env, conds, infallible, out)?;
                    }
                    return Ok(());
                }
                let v = self.value(&init.expr, &mut env)?;
                self.let_pat(&l.pat, v, &mut env)?;
                self.block(rest, env, conds, infallible, out)
            }
            // Logging (`trace!`) does not change the result.
            Stmt::Macro(m)
                if m.mac.path.segments.last().is_some_and(|s| {
                    ["trace", "debug"].contains(&s.ident.to_string().as_str())
                }) =>
            {
                self.block(rest, env, conds, infallible, out)
            }
            Stmt::Expr(Expr::If(i), _) => {
                let c = self.cond(&i.cond, &mut env)?;
                let mut then: Vec<Stmt> = i.then_branch.stmts.clone();
                then.extend(rest.iter().cloned());
                let mut conds_t = conds.clone();
                conds_t.push(c.clone());
                self.block(&then, env.clone(), conds_t, infallible, out)?;
                let mut els: Vec<Stmt> = match &i.else_branch {
                    Some((_, e)) => match &**e {
                        Expr::Block(b) => b.block.stmts.clone(),
                        other => vec![Stmt::Expr(other.clone(), None)],
                    },
                    None => Vec::new(),
                };
                els.extend(rest.iter().cloned());
                let mut conds_e = conds;
                conds_e.push(not(&c));
                self.block(&els, env, conds_e, infallible, out)
            }
            Stmt::Expr(Expr::Return(r), _) => {
                let v = match &r.expr {
                    Some(e) => self.value(e, &mut env)?,
                    None => V::Unit,
                };
                out.push((conds, self.result(v, false)?));
                Ok(())
            }
            Stmt::Expr(e, None) if rest.is_empty() => {
                if let Expr::Block(b) = e {
                    return self.block(&b.block.stmts, env, conds, infallible, out);
                }
                let v = self.value(e, &mut env)?;
                out.push((conds, self.result(v, infallible)?));
                Ok(())
            }
            Stmt::Expr(e, _) => {
                self.value(e, &mut env)?;
                self.block(rest, env, conds, infallible, out)
            }
            other => Err(format!(
                "patterns.rs:{}: the statement `{}`",
                line_of(other),
                shown(other)
            )),
        }
    }

    /// A returned value: the node built, or `None`.
    fn result(&self, v: V, infallible: bool) -> Result<Option<Term>, String> {
        match (v, infallible) {
            (V::Term(t), true) => Ok(Some(t)),
            (V::Opt(None), false) => Ok(None),
            (V::Opt(Some(v)), false) => match *v {
                V::Term(t) => Ok(Some(t)),
                other => Err(format!(
                    "patterns.rs:{}: a result that is not a node ({})",
                    self.line,
                    other.kind()
                )),
            },
            (other, _) => Err(format!(
                "patterns.rs:{}: a result that is not a node ({})",
                self.line,
                other.kind()
            )),
        }
    }

    fn let_pat(&mut self, p: &syn::Pat, v: V, env: &mut Env) -> Result<(), String> {
        match (p, v) {
            (syn::Pat::Ident(i), v) => {
                env.insert(i.ident.to_string(), v);
                Ok(())
            }
            (syn::Pat::Wild(_), _) => Ok(()),
            (syn::Pat::Tuple(t), V::Tuple(vs)) if t.elems.len() == vs.len() => {
                for (p, v) in t.elems.iter().zip(vs) {
                    self.let_pat(p, v, env)?;
                }
                Ok(())
            }
            // `ConstValue::Int(v)`: an `Index` value (a constant's, a
            // bound) is always an `Int`.
            (syn::Pat::TupleStruct(ts), V::Int(i))
                if ts.path.segments.last().is_some_and(|s| s.ident == "Int")
                    && ts.elems.len() == 1 =>
            {
                self.let_pat(&ts.elems[0], V::Int(i), env)
            }
            (syn::Pat::Reference(r), v) => self.let_pat(&r.pat, v, env),
            (p, _) => Err(format!(
                "patterns.rs:{}: the pattern `{}`",
                line_of(p),
                shown(p)
            )),
        }
    }

    /// A Rust `bool`, as a DSL condition (a `let` in it binds into `env`).
    fn cond(&mut self, e: &Expr, env: &mut Env) -> Result<String, String> {
        if let Expr::Let(l) = e {
            let v = self.value(&l.expr, env)?;
            self.let_pat(&l.pat, v, env)?;
            return Ok("true".into());
        }
        match self.value(e, env)? {
            V::Cond(c) => Ok(c),
            other => Err(format!(
                "patterns.rs:{}: `{}` is not a condition ({})",
                line_of(e),
                shown(e),
                other.kind()
            )),
        }
    }

    fn term(&mut self, e: &Expr, env: &mut Env) -> Result<Term, String> {
        match self.value(e, env)? {
            V::Term(t) => Ok(t),
            V::Int(i) => Ok(i.term()),
            other => Err(format!(
                "patterns.rs:{}: `{}` is not a node ({})",
                line_of(e),
                shown(e),
                other.kind()
            )),
        }
    }

    fn int(&mut self, e: &Expr, env: &mut Env) -> Result<Int, String> {
        match self.value(e, env)? {
            V::Int(i) => Ok(i),
            V::Opt(Some(v)) => match *v {
                V::Int(i) => Ok(i),
                other => Err(format!(
                    "patterns.rs:{}: not an integer ({})",
                    line_of(e),
                    other.kind()
                )),
            },
            other => Err(format!(
                "patterns.rs:{}: `{}` is not an integer ({})",
                line_of(e),
                shown(e),
                other.kind()
            )),
        }
    }

    fn value(&mut self, e: &Expr, env: &mut Env) -> Result<V, String> {
        let line = line_of(e);
        let unsupported = |what: &str| format!("patterns.rs:{line}: {what} `{}`", shown(e));
        match e {
            Expr::Paren(p) => self.value(&p.expr, env),
            Expr::Group(g) => self.value(&g.expr, env),
            Expr::Reference(r) => self.value(&r.expr, env),
            Expr::Unary(u) if matches!(u.op, UnOp::Deref(_)) => self.value(&u.expr, env),
            Expr::Try(t) => Ok(match self.value(&t.expr, env)? {
                V::Opt(Some(v)) => *v,
                V::Opt(None) => return Err(unsupported("`?` of `None` in")),
                v => v,
            }),
            Expr::Block(b) => {
                let mut v = V::Unit;
                for s in &b.block.stmts {
                    v = match s {
                        Stmt::Expr(e, None) => self.value(e, env)?,
                        Stmt::Local(syn::Local {
                            pat,
                            init: Some(init),
                            ..
                        }) => {
                            let v = self.value(&init.expr, env)?;
                            self.let_pat(pat, v, env)?;
                            V::Unit
                        }
                        other => {
                            return Err(format!(
                                "patterns.rs:{}: the statement `{}`",
                                line_of(other),
                                shown(other)
                            ));
                        }
                    };
                }
                Ok(v)
            }
            Expr::Lit(l) => match &l.lit {
                Lit::Int(i) => {
                    let v: i64 = i.base10_parse().map_err(|e| e.to_string())?;
                    Ok(V::Int(Int::leaf(v.to_string())))
                }
                Lit::Bool(b) => Ok(V::Cond(b.value.to_string())),
                _ => Ok(V::Unit),
            },
            Expr::Path(p) => {
                let segs: Vec<String> = p
                    .path
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .collect();
                if segs.len() == 1 {
                    let n = &segs[0];
                    if let Some(v) = env.get(n).or_else(|| self.env.get(n)) {
                        return Ok(v.clone());
                    }
                    if let Some((var, _)) = &self.op_var
                        && var == n
                    {
                        return Ok(V::Op);
                    }
                    if n == "None" {
                        return Ok(V::Opt(None));
                    }
                }
                match segs.iter().map(String::as_str).collect::<Vec<_>>()[..] {
                    ["DType", "Index"] => Ok(V::Dtype(Ty::Int)),
                    ["DType", "Bool"] => Ok(V::Dtype(Ty::Bool)),
                    ["BinaryOp", _] => Ok(V::Op),
                    _ => Err(unsupported("the name")),
                }
            }
            Expr::Unary(u) => match &u.op {
                UnOp::Not(_) => {
                    let c = self.cond(&u.expr, env)?;
                    Ok(V::Cond(not(&c)))
                }
                UnOp::Neg(_) => {
                    let i = self.int(&u.expr, env)?;
                    Ok(V::Int(match &i.exact {
                        Some(x) if x.parse::<i64>().is_ok_and(|v| v != i64::MIN) => {
                            Int::leaf((-x.parse::<i64>().unwrap_or(0)).to_string())
                        }
                        _ => Int {
                            exact: None,
                            wrap: format!("(-{})", i.wrap),
                        },
                    }))
                }
                _ => Err(unsupported("the operator in")),
            },
            Expr::Binary(b) => self.binary(b, env),
            Expr::Tuple(t) => Ok(V::Tuple(
                t.elems
                    .iter()
                    .map(|x| self.value(x, env))
                    .collect::<Result<_, _>>()?,
            )),
            Expr::Macro(m) if m.mac.path.is_ident("matches") => self.matches(&m.mac, env),
            Expr::Call(c) => self.call(c, env),
            Expr::MethodCall(m) => self.method(m, env),
            Expr::If(_) => Err(unsupported("an `if` inside an expression,")),
            _ => Err(unsupported("the expression")),
        }
    }

    fn binary(&mut self, b: &syn::ExprBinary, env: &mut Env) -> Result<V, String> {
        let line = line_of(b);
        match b.op {
            BinOp::And(_) => {
                let l = self.cond(&b.left, env)?;
                let r = self.cond(&b.right, env)?;
                return Ok(V::Cond(and(&l, &r)));
            }
            BinOp::Or(_) => {
                let l = self.cond(&b.left, env)?;
                let r = self.cond(&b.right, env)?;
                return Ok(V::Cond(match (l.as_str(), r.as_str()) {
                    ("true", _) | (_, "true") => "true".into(),
                    ("false", x) | (x, "false") => x.to_string(),
                    _ => format!("({l} || {r})"),
                }));
            }
            _ => {}
        }
        let l = self.value(&b.left, env)?;
        let r = self.value(&b.right, env)?;
        let cmp = match b.op {
            BinOp::Lt(_) => Some("<"),
            BinOp::Le(_) => Some("<="),
            BinOp::Gt(_) => Some(">"),
            BinOp::Ge(_) => Some(">="),
            BinOp::Eq(_) => Some("=="),
            BinOp::Ne(_) => Some("!="),
            _ => None,
        };
        match (l, r, cmp) {
            (V::Dtype(a), V::Dtype(c), Some(op @ ("==" | "!="))) => {
                Ok(V::Cond(((a == c) == (op == "==")).to_string()))
            }
            (V::Int(a), V::Int(c), Some(op)) => match (&a.exact, &c.exact) {
                // Guards are exact: a comparison of leaves is the same in
                // i64 and in the DSL.
                (Some(x), Some(y)) => Ok(V::Cond(format!("{x} {op} {y}"))),
                _ => Err(format!(
                    "patterns.rs:{line}: a comparison of wrapping i64 arithmetic `{}`",
                    shown(b)
                )),
            },
            (V::Int(a), V::Int(c), None) => {
                let op = match b.op {
                    BinOp::Add(_) => "+",
                    BinOp::Sub(_) => "-",
                    BinOp::Mul(_) => "*",
                    // Rust's i64 `/` and `%` truncate, as the DSL's do.
                    BinOp::Div(_) => "/",
                    BinOp::Rem(_) => "%",
                    _ => {
                        return Err(format!(
                            "patterns.rs:{line}: the operator in `{}`",
                            shown(b)
                        ));
                    }
                };
                Ok(V::Int(Int {
                    exact: None,
                    wrap: format!("({} {op} {})", a.wrap, c.wrap),
                }))
            }
            (l, r, _) => Err(format!(
                "patterns.rs:{line}: `{}` on {} and {}",
                shown(b),
                l.kind(),
                r.kind()
            )),
        }
    }

    /// `matches!(E, ConstValue::Int(v) if COND)`.
    fn matches(&mut self, mac: &syn::Macro, env: &mut Env) -> Result<V, String> {
        let line = line_of(mac);
        let parsed = mac
            .parse_body_with(|input: syn::parse::ParseStream| {
                let e: Expr = input.parse()?;
                input.parse::<syn::Token![,]>()?;
                let p = syn::Pat::parse_multi(input)?;
                let g = if input.peek(syn::Token![if]) {
                    input.parse::<syn::Token![if]>()?;
                    Some(input.parse::<Expr>()?)
                } else {
                    None
                };
                Ok((e, p, g))
            })
            .map_err(|e| format!("patterns.rs:{line}: `matches!` that does not parse: {e}"))?;
        let (e, p, g) = parsed;
        let v = self.value(&e, env)?;
        let mut inner = env.clone();
        self.let_pat(&p, v, &mut inner)?;
        match g {
            Some(g) => Ok(V::Cond(self.cond(&g, &mut inner)?)),
            None => Ok(V::Cond("true".into())),
        }
    }

    fn call(&mut self, c: &syn::ExprCall, env: &mut Env) -> Result<V, String> {
        let line = line_of(c);
        let Expr::Path(p) = &*c.func else {
            return Err(format!("patterns.rs:{line}: the call `{}`", shown(c)));
        };
        let segs: Vec<String> = p
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        let args = &c.args.iter().collect::<Vec<_>>();
        let wrapping = |op: &str, a: Int, b: Int| {
            V::Opt(Some(Box::new(V::Int(Int {
                exact: None,
                wrap: format!("({} {op} {})", a.wrap, b.wrap),
            }))))
        };
        let path: Vec<&str> = segs.iter().map(String::as_str).collect();
        match (&path[..], &args[..]) {
            (["Some"], [a]) => Ok(V::Opt(Some(Box::new(self.value(a, env)?)))),
            (["Arc", "clone"] | ["Rc", "clone"], [a]) => self.value(a, env),
            (["UOp", "index_const"], [a]) => Ok(V::Term(self.int(a, env)?.term())),
            (["UOp", "const_"], [dt, v]) => {
                let ty = self.dtype(dt, env)?;
                self.constant(v, ty, env)
            }
            (["UOp", "try_where"], [cnd, a, b]) => {
                let cnd = self.term(cnd, env)?;
                let a = self.term(a, env)?;
                let b = self.term(b, env)?;
                Ok(V::Term(Term {
                    text: format!("where({}, {}, {})", cnd.text, a.text, b.text),
                    ty: a.ty,
                }))
            }
            (["ConstValue", "Int"], [a]) => Ok(V::Int(self.int(a, env)?)),
            (["VminVmaxProperty", "get"], [a]) => {
                let t = self.term(a, env)?;
                Ok(V::Tuple(vec![
                    V::Int(Int::leaf(format!("vmin({})", t.text))),
                    V::Int(Int::leaf(format!("vmax({})", t.text))),
                ]))
            }
            // Morok's typed constant arithmetic on `Index` (64 bits):
            // wrapping (morok-ir's `uop/eval.rs`).
            (["eval_add_typed"], [a, b, _]) => {
                let (a, b) = (self.int(a, env)?, self.int(b, env)?);
                Ok(wrapping("+", a, b))
            }
            (["eval_sub_typed"], [a, b, _]) => {
                let (a, b) = (self.int(a, env)?, self.int(b, env)?);
                Ok(wrapping("-", a, b))
            }
            (["eval_mul_typed"], [a, b, _]) => {
                let (a, b) = (self.int(a, env)?, self.int(b, env)?);
                Ok(wrapping("*", a, b))
            }
            (["Arc", "ptr_eq"], _) => Err(format!(
                "patterns.rs:{line}: a test of two nodes' identity (`Arc::ptr_eq`), which the DSL has no form for"
            )),
            (path, _) => {
                let name = path.join("::");
                let helper = path.len() == 1 || !["UOp", "ConstValue", "DType"].contains(&path[0]);
                Err(if helper {
                    format!(
                        "patterns.rs:{line}: calls `{name}`, a helper that walks the graph or folds values outside the DSL"
                    )
                } else {
                    format!("patterns.rs:{line}: the call `{}`", shown(c))
                })
            }
        }
    }

    /// A constant of dtype `ty` built from a `ConstValue` expression.
    fn constant(&mut self, v: &Expr, ty: Ty, env: &mut Env) -> Result<V, String> {
        let line = line_of(v);
        if let Expr::Call(c) = v
            && let Expr::Path(p) = &*c.func
        {
            let last = p.path.segments.last().map(|s| s.ident.to_string());
            match (last.as_deref(), ty) {
                (Some("zero"), Ty::Int) => return Ok(V::Term(Int::leaf("0".into()).term())),
                (Some("zero"), Ty::Bool) => {
                    return Ok(V::Term(Term {
                        text: "false".into(),
                        ty: Ty::Bool,
                    }));
                }
                (Some("Bool"), _) => {
                    let c = self.cond(&c.args[0], env)?;
                    if c == "true" || c == "false" {
                        return Ok(V::Term(Term {
                            text: c,
                            ty: Ty::Bool,
                        }));
                    }
                    return Err(format!(
                        "patterns.rs:{line}: a bool constant computed from `{c}`"
                    ));
                }
                _ => {}
            }
        }
        match self.value(v, env)? {
            V::Int(i) if ty == Ty::Int => Ok(V::Term(i.term())),
            other => Err(format!(
                "patterns.rs:{line}: the constant `{}` ({})",
                shown(v),
                other.kind()
            )),
        }
    }

    /// The dtype an expression names (`x.dtype()`, `DType::Bool`, ...).
    fn dtype(&mut self, e: &Expr, env: &mut Env) -> Result<Ty, String> {
        match self.value(e, env)? {
            V::Dtype(t) => Ok(t),
            other => Err(format!(
                "patterns.rs:{}: `{}` is not a dtype ({})",
                line_of(e),
                shown(e),
                other.kind()
            )),
        }
    }

    fn method(&mut self, m: &syn::ExprMethodCall, env: &mut Env) -> Result<V, String> {
        let line = line_of(m);
        let name = m.method.to_string();
        let args: Vec<&Expr> = m.args.iter().collect();
        // Calls that wrap or unwrap a result of a builder.
        match (name.as_str(), &args[..]) {
            ("expect" | "unwrap" | "ok", _) => {
                let v = self.value(&m.receiver, env)?;
                return Ok(match (name.as_str(), v) {
                    ("ok", V::Term(t)) => V::Opt(Some(Box::new(V::Term(t)))),
                    ("ok", v) => v,
                    (_, V::Opt(Some(v))) => *v,
                    (_, V::Opt(None)) => {
                        return Err(format!("patterns.rs:{line}: an `expect` of `None`"));
                    }
                    (_, v) => v,
                });
            }
            ("map", [f]) => {
                let v = self.value(&m.receiver, env)?;
                let Expr::Closure(c) = f else {
                    return Err(format!("patterns.rs:{line}: `map` of `{}`", shown(f)));
                };
                return match v {
                    V::Opt(None) => Ok(V::Opt(None)),
                    V::Opt(Some(inner)) => {
                        let mut env2 = env.clone();
                        if let Some(p) = c.inputs.first() {
                            self.let_pat(p, *inner, &mut env2)?;
                        }
                        Ok(V::Opt(Some(Box::new(self.value(&c.body, &mut env2)?))))
                    }
                    other => Err(format!("patterns.rs:{line}: `map` of {}", other.kind())),
                };
            }
            _ => {}
        }
        let recv = self.value(&m.receiver, env)?;
        if name == "op" && matches!(recv, V::Term(_)) {
            return Err(format!(
                "patterns.rs:{line}: a test of a node's op (`{}`), which the DSL has no form for",
                shown(m)
            ));
        }
        match (recv, name.as_str(), &args[..]) {
            (V::Term(t), "clone", []) => Ok(V::Term(t)),
            (V::Term(t), "dtype", []) => Ok(V::Dtype(t.ty)),
            (V::Term(t), "vmin", []) => Ok(V::Int(Int::leaf(format!("vmin({})", t.text)))),
            (V::Term(t), "vmax", []) => Ok(V::Int(Int::leaf(format!("vmax({})", t.text)))),
            (V::Term(t), "neg", []) if t.ty == Ty::Int => Ok(V::Term(Term {
                text: format!("(-{})", t.text),
                ty: Ty::Int,
            })),
            (V::Term(t), "not", []) if t.ty == Ty::Bool => Ok(V::Term(Term {
                text: format!("!{}", t.text),
                ty: Ty::Bool,
            })),
            (V::Term(t), builder, [o]) => {
                let op = match builder {
                    "add" | "try_add" => ("+", Ty::Int, Ty::Int),
                    "sub" | "try_sub" => ("-", Ty::Int, Ty::Int),
                    "mul" | "try_mul" => ("*", Ty::Int, Ty::Int),
                    "idiv" | "try_div" => ("/", Ty::Int, Ty::Int),
                    "mod_" | "try_mod" => ("%", Ty::Int, Ty::Int),
                    "max" | "try_max" => ("max", Ty::Int, Ty::Int),
                    "cmplt" | "try_cmplt" => ("<", Ty::Int, Ty::Bool),
                    "cmple" | "try_cmple" => ("<=", Ty::Int, Ty::Bool),
                    "cmpeq" | "try_cmpeq" => ("==", Ty::Int, Ty::Bool),
                    "cmpne" | "try_cmpne" => ("!=", Ty::Int, Ty::Bool),
                    "and_" | "try_and_op" if t.ty == Ty::Bool => ("&&", Ty::Bool, Ty::Bool),
                    "or_" | "try_or_op" if t.ty == Ty::Bool => ("||", Ty::Bool, Ty::Bool),
                    "xor" | "try_xor_op" if t.ty == Ty::Bool => ("^", Ty::Bool, Ty::Bool),
                    _ => {
                        return Err(format!(
                            "patterns.rs:{line}: the method `{builder}` in `{}`",
                            shown(m)
                        ));
                    }
                };
                let o = self.term(o, env)?;
                if t.ty != op.1 || o.ty != op.1 {
                    return Err(format!(
                        "patterns.rs:{line}: `{builder}` of a {:?} operand",
                        if t.ty != op.1 { t.ty } else { o.ty }
                    ));
                }
                Ok(V::Term(Term {
                    text: apply(op.0, &t.text, &o.text),
                    ty: op.2,
                }))
            }
            (V::Int(i), "into_uop", [dt]) => {
                let ty = self.dtype(dt, env)?;
                match (ty, i.exact.as_deref()) {
                    (Ty::Int, _) => Ok(V::Term(i.term())),
                    (Ty::Bool, Some("0")) => Ok(V::Term(Term {
                        text: "false".into(),
                        ty,
                    })),
                    (Ty::Bool, Some("1")) => Ok(V::Term(Term {
                        text: "true".into(),
                        ty,
                    })),
                    _ => Err(format!("patterns.rs:{line}: `{}`", shown(m))),
                }
            }
            (V::Int(i), "try_int" | "clone", []) => Ok(V::Int(i)),
            (V::Int(i), "is_neg_one", []) => Ok(V::Cond(format!("{} == -1", exact(&i, line)?))),
            (V::Int(i), "is_zero", []) => Ok(V::Cond(format!("{} == 0", exact(&i, line)?))),
            (V::Int(i), "is_one", []) => Ok(V::Cond(format!("{} == 1", exact(&i, line)?))),
            (V::Dtype(_), "is_float", []) => Ok(V::Cond("false".into())),
            (V::Dtype(t), "is_int", []) => Ok(V::Cond((t == Ty::Int).to_string())),
            (V::Dtype(t), "is_bool", []) => Ok(V::Cond((t == Ty::Bool).to_string())),
            (V::Dtype(t), "base" | "scalar_dtype", []) => Ok(V::Dtype(t)),
            (V::Dtype(t), "scalar", []) => Ok(V::Opt(Some(Box::new(V::Dtype(t))))),
            (V::Dtype(_), "vcount", []) => Ok(V::Int(Int::leaf("1".into()))),
            (V::Dtype(t), "vec", [_]) => Ok(V::Dtype(t)),
            (V::Op, _, _) => Err(format!(
                "patterns.rs:{line}: a result that depends on the `for` op (`{}`)",
                shown(m)
            )),
            (recv, _, _) => Err(format!(
                "patterns.rs:{line}: the method call `{}` on {}",
                shown(m),
                recv.kind()
            )),
        }
    }
}

fn exact(i: &Int, line: usize) -> Result<String, String> {
    i.exact
        .clone()
        .ok_or_else(|| format!("patterns.rs:{line}: a test of wrapping i64 arithmetic"))
}

/// The value expression of a block (`{ a }`).
fn block_value(b: &syn::Block) -> Result<&Expr, String> {
    match b.stmts.as_slice() {
        [Stmt::Expr(e, None)] => Ok(e),
        _ => Err(format!(
            "patterns.rs:{}: an `if` arm with statements",
            line_of(b)
        )),
    }
}

#[cfg(test)]
mod tests {
    use crate::groups::GROUPS;
    use crate::morok_source::{self, Entry};

    fn entries() -> Vec<(String, Vec<Entry>)> {
        let path = morok_source::locate().expect("cargo metadata finds morok-schedule");
        morok_source::read(&path)
            .expect("patterns.rs parses")
            .into_iter()
            .map(|g| (g.name, g.entries.expect("its pattern list parses")))
            .collect()
    }

    fn entry(name: &str) -> Entry {
        entries()
            .into_iter()
            .flat_map(|(_, e)| e)
            .find(|e| e.name() == name)
            .unwrap_or_else(|| panic!("no entry {name}"))
    }

    /// Each group of patterns.rs has as many entries as its compiled
    /// matcher has closures (an entry under two keys counts twice, as
    /// Morok adds it twice).
    #[test]
    fn every_group_has_an_entry_per_closure_of_its_matcher() {
        let groups = entries();
        let mut seen = 0;
        for g in GROUPS.iter() {
            let Some((_, e)) = groups.iter().find(|(n, _)| n == g.name) else {
                continue;
            };
            assert_eq!(e.len(), (g.matcher)().len(), "{}", g.name);
            seen += 1;
        }
        assert!(seen >= 25, "only {seen} groups found in patterns.rs");
    }

    #[test]
    fn an_identity_entry_translates_to_its_dsl_rule() {
        let rules = super::translate(&entry("identity_and_zero_patterns/Binary(Add)#0")).unwrap();
        assert_eq!(
            rules,
            ["rule identity_and_zero_patterns_Binary_Add_0_0: (x + 0) => x"]
        );
    }

    /// Rust's i64 arithmetic on the constants wraps: the translation
    /// computes in the DSL's wrapping `i64`, one rule per path.
    #[test]
    fn constant_arithmetic_translates_to_wrapping_i64_one_rule_per_path() {
        let rules = super::translate(&entry("comparison_dsl_patterns/Binary(Lt)#4")).unwrap();
        // two paths, each also with `-x` for `C0 * x` (where C0 = -1)
        assert_eq!(rules.len(), 4, "{rules:?}");
        assert!(
            rules[0].contains("((C0 * x) < C1) => (x < index((((i64(C1) + i64(C0)) - i64(1)) / i64(C0)))) if (C0 > 0 && C1 > 0)"),
            "{rules:?}"
        );
        assert!(rules[1].contains("!((C0 > 0 && C1 > 0))"), "{rules:?}");
    }

    /// The adapter builds tileproof's `-x` as Morok's `neg()`, MUL(x, -1):
    /// a `Mul` by a constant is also a left side with `-x` (the constant
    /// -1), so that the translation fires where the entry does.
    #[test]
    fn a_mul_by_a_constant_is_also_tileproofs_negation() {
        let rules = super::translate(&entry("alu_folding_dsl_patterns/Binary(Mul)#0")).unwrap();
        assert!(
            rules.iter().any(|r| r.contains(": ((x * C1) * C2) =>")),
            "{rules:?}"
        );
        assert!(
            rules
                .iter()
                .any(|r| r.contains(": ((-x) * C2) => (x * index((i64((-1)) * i64(C2))))")),
            "{rules:?}"
        );
        // MUL(x,-1) < MUL(y,-1): four spellings
        let rules = super::translate(&entry("comparison_dsl_patterns/Binary(Lt)#2")).unwrap();
        assert_eq!(rules.len(), 4, "{rules:?}");
        assert!(
            rules
                .iter()
                .any(|r| r.contains(": ((-x) < (-y)) => (y < x)")),
            "{rules:?}"
        );
    }

    /// `Idiv(Mul(x, y), y)` matches `Mul` in its order only (`y` named
    /// again outside it); the DSL's `*` matches both orders, so no DSL
    /// rule is this entry.
    #[test]
    fn an_ordered_operand_named_again_outside_its_node_is_untranslatable() {
        let why = super::translate(&entry("division_dsl_patterns/Binary(Idiv)#0")).unwrap_err();
        assert!(
            why.contains("`Mul(..)` in its order only, with `y` named again"),
            "{why}"
        );
        // `Add(x, @zero)`-like orders with no repeated name stay translated.
        assert!(super::translate(&entry("identity_and_zero_patterns/Binary(Add)#0")).is_ok());
    }

    #[test]
    fn an_entry_calling_a_graph_walking_helper_is_untranslatable_naming_it() {
        let why =
            super::translate(&entry("range_based_mod_div_patterns/Binary(Mod)#6")).unwrap_err();
        assert!(why.contains("fold_divmod_general"), "{why}");
        let why = super::translate(&entry("comparison_dsl_patterns/Binary(Lt)#0")).unwrap_err();
        assert!(
            why.contains("Arc :: ptr_eq") || why.contains("ptr_eq"),
            "{why}"
        );
    }
}
