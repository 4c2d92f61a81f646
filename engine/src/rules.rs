//! The rule DSL: declarative rewrite rules, written once in text files under
//! `engine/rules/`, matched by the engine and proved by the verifier.
//!
//! The syntax is documented in `engine/rules/README.md`. In short:
//!
//! ```text
//! group identity
//! # x * 0 is 0, unless x may be invalid (then the lane must stay masked)
//! rule mul_zero: x * 0 => 0 if valid(x)
//! ```
//!
//! Lowercase names are pattern variables (any term); names starting with an
//! uppercase letter are constant variables (they match constants only). A
//! name used twice means the same node. `+ * min max == != && || ^` match
//! in both operand orders. On the right side, every subterm built only from
//! constants is computed when the rule fires, with the op's own semantics at
//! 64 bits: overflow or division by zero means the rule does not fire.

use crate::interp::{self, Val, Width};
use crate::ir::{DType, Graph, NodeId, Op};
use crate::parse::{lex_line, Ast, AstKind, Cursor, PResult, ParseError, Span, Tok};
use rustc_hash::FxHashMap;

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
#[derive(Clone, Debug, PartialEq, Eq)]
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

/// [`IExpr`] before type classes are resolved.
#[derive(Clone, Debug)]
enum RawIExpr {
    Var(usize),
    Scalar(Box<RawGuard>),
    Neg(Box<RawIExpr>),
    Bin(Op, Box<RawIExpr>, Box<RawIExpr>),
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
}

/// A named group of rules, tried in file order.
#[derive(Clone, Debug)]
pub struct Group {
    pub name: String,
    pub rules: Vec<Rule>,
}

/// Rules grouped and ordered: at every node the groups are tried in order,
/// and within a group the rules in file order; the first that fires wins.
#[derive(Clone, Debug, Default)]
pub struct RuleSet {
    pub groups: Vec<Group>,
}

impl RuleSet {
    pub fn rules(&self) -> impl Iterator<Item = &Rule> {
        self.groups.iter().flat_map(|g| g.rules.iter())
    }

    pub fn rule(&self, name: &str) -> Option<&Rule> {
        self.rules().find(|r| r.name == name)
    }

    pub fn len(&self) -> usize {
        self.groups.iter().map(|g| g.rules.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Parses one rule file. Groups appear in file order.
    pub fn parse(file: &str, text: &str) -> Result<RuleSet, RuleError> {
        let mut set = RuleSet::default();
        set.add_file(file, text)?;
        Ok(set)
    }

    /// Adds the rules of one file, appending its groups (or extending a
    /// group of the same name).
    pub fn add_file(&mut self, file: &str, text: &str) -> Result<(), RuleError> {
        let wrap = |e: ParseError| RuleError {
            file: file.to_string(),
            err: e,
        };
        let default_group = std::path::Path::new(file)
            .file_stem()
            .map_or("rules".to_string(), |s| s.to_string_lossy().into_owned());
        let mut group = default_group;
        let mut comment: Vec<String> = Vec::new();
        for (line_no, logical) in logical_lines(text) {
            let trimmed = logical.trim();
            if let Some(c) = trimmed.strip_prefix('#') {
                comment.push(c.trim().to_string());
                continue;
            }
            if trimmed.is_empty() {
                comment.clear();
                continue;
            }
            let mut toks = Vec::new();
            for (k, part) in logical.split('\n').enumerate() {
                let mut t = lex_line(part, line_no + k as u32).map_err(wrap)?;
                t.pop();
                toks.extend(t);
            }
            let end = Span {
                line: line_no,
                col: logical
                    .lines()
                    .next()
                    .map_or(1, |l| l.chars().count() as u32 + 1),
            };
            toks.push((Tok::Eol, end));
            let mut c = Cursor::new(toks);
            c.allow_types = true;
            if c.eat_ident("group") {
                let (name, _) = c.name("a group name").map_err(wrap)?;
                c.expect_eol().map_err(wrap)?;
                group = name;
                comment.clear();
                continue;
            }
            let mut rule = parse_rule(&mut c, file, &group).map_err(wrap)?;
            rule.comment = comment.join(" ");
            let body = logical.split_once(':').map_or("", |(_, b)| b);
            rule.text = body.split_whitespace().collect::<Vec<_>>().join(" ");
            comment.clear();
            if let Some(prev) = self.rule(&rule.name) {
                return Err(wrap(ParseError::new(
                    Span {
                        line: rule.line,
                        col: 1,
                    },
                    format!(
                        "rule `{}` is already defined at {}:{}",
                        rule.name, prev.file, prev.line
                    ),
                )));
            }
            match self.groups.iter_mut().find(|g| g.name == group) {
                Some(g) => g.rules.push(rule),
                None => self.groups.push(Group {
                    name: group.clone(),
                    rules: vec![rule],
                }),
            }
        }
        Ok(())
    }

    /// Reorders groups to follow `order` (group names, one per line, `#`
    /// comments). Every group must be listed exactly once.
    pub fn apply_order(&mut self, order: &str) -> Result<(), String> {
        let names: Vec<&str> = order
            .lines()
            .map(|l| l.split('#').next().unwrap_or("").trim())
            .filter(|l| !l.is_empty())
            .collect();
        let mut out = Vec::new();
        for n in &names {
            let Some(i) = self.groups.iter().position(|g| g.name == *n) else {
                return Err(format!(
                    "the order lists group `{n}`, which no rule file defines"
                ));
            };
            out.push(self.groups.remove(i));
        }
        if let Some(g) = self.groups.first() {
            return Err(format!("group `{}` is missing from the order", g.name));
        }
        self.groups = out;
        Ok(())
    }
}

/// A rule-file error with its file label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleError {
    pub file: String,
    pub err: ParseError,
}

impl std::fmt::Display for RuleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.err)
    }
}

impl std::error::Error for RuleError {}

/// Joins indented continuation lines to the line they continue; yields the
/// first line number and the text (continuations separated by `\n`).
fn logical_lines(text: &str) -> Vec<(u32, String)> {
    let mut out: Vec<(u32, String)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let continues = line.starts_with([' ', '\t'])
            && !line.trim().is_empty()
            && !line.trim_start().starts_with('#')
            && out.last().is_some_and(|(_, prev)| {
                let p = prev.trim_start();
                !p.is_empty() && !p.starts_with('#')
            });
        if continues {
            let last = out.last_mut().expect("checked above");
            last.1.push('\n');
            last.1.push_str(line);
        } else {
            out.push((i as u32 + 1, line.to_string()));
        }
    }
    out
}

// ---- parsing one rule, with type inference -----------------------------------------

/// Union-find over type classes.
#[derive(Default)]
struct Infer {
    parent: Vec<usize>,
    fixed: Vec<Option<DType>>,
    int: Vec<bool>,
    name: Vec<Option<String>>,
}

impl Infer {
    fn fresh(&mut self) -> usize {
        self.parent.push(self.parent.len());
        self.fixed.push(None);
        self.int.push(false);
        self.name.push(None);
        self.parent.len() - 1
    }

    fn fixed(&mut self, d: DType) -> usize {
        let c = self.fresh();
        self.fixed[c] = Some(d);
        c
    }

    fn find(&mut self, c: usize) -> usize {
        let p = self.parent[c];
        if p == c {
            return c;
        }
        let r = self.find(p);
        self.parent[c] = r;
        r
    }

    fn check(&self, r: usize) -> Result<(), String> {
        if self.int[r] && self.fixed[r] == Some(DType::Bool) {
            return Err("a bool is used where an integer is needed".into());
        }
        Ok(())
    }

    fn unify(&mut self, a: usize, b: usize) -> Result<(), String> {
        let (a, b) = (self.find(a), self.find(b));
        if a == b {
            return Ok(());
        }
        let fixed = match (self.fixed[a], self.fixed[b]) {
            (Some(x), Some(y)) if x != y => return Err(format!("dtype mismatch: {x} vs {y}")),
            (x, y) => x.or(y),
        };
        let name = match (&self.name[a], &self.name[b]) {
            (Some(x), Some(y)) if x != y => {
                return Err(format!(
                    "type variables `{x}` and `{y}` would have to be equal"
                ))
            }
            (x, y) => x.clone().or(y.clone()),
        };
        if name.is_some() && fixed.is_some() {
            return Err(format!(
                "type variable `{}` would be fixed to {}",
                name.unwrap(),
                fixed.unwrap()
            ));
        }
        self.parent[b] = a;
        self.fixed[a] = fixed;
        self.int[a] |= self.int[b];
        self.name[a] = name;
        self.check(a)
    }

    fn need_int(&mut self, c: usize) -> Result<(), String> {
        let r = self.find(c);
        self.int[r] = true;
        self.check(r)
    }

    fn need(&mut self, c: usize, d: DType) -> Result<(), String> {
        let f = self.fixed(d);
        self.unify(c, f)
    }
}

/// Which side of the rule is being read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Lhs,
    Rhs,
}

/// Patterns with type classes not yet resolved to [`Ty`].
#[derive(Clone, Debug)]
enum RawPat {
    Var(usize),
    Lit(i64, usize),
    Invalid,
    Op(Op, usize, Vec<RawPat>),
    Bound(usize, bool),
}

#[derive(Clone, Debug)]
enum RawGuard {
    Int(i128),
    Bool(bool),
    Val(usize),
    VMin(RawIExpr),
    VMax(RawIExpr),
    Fits(RawIExpr, usize),
    Valid(usize),
    Constrained(usize),
    IsConst(usize),
    TyMin(usize),
    TyMax(usize),
    Un(Op, Box<RawGuard>),
    Bin(Op, Box<RawGuard>, Box<RawGuard>),
    Call(Helper, Vec<RawGuard>),
}

struct RuleParser {
    inf: Infer,
    vars: Vec<(String, bool, usize)>,
    /// Named type variables and their classes.
    tynames: FxHashMap<String, usize>,
}

fn is_const_name(n: &str) -> bool {
    n.chars().next().is_some_and(|c| c.is_ascii_uppercase())
}

fn parse_rule(c: &mut Cursor, file: &str, group: &str) -> PResult<Rule> {
    let kw = c.span();
    c.expect_ident("rule")?;
    let (name, _) = c.name("a rule name")?;
    c.expect_punct(":")?;
    let lhs = c.expr()?;
    c.expect_punct("=>")?;
    let rhs = c.expr()?;
    let guard = if c.eat_ident("if") {
        Some(c.expr()?)
    } else {
        None
    };
    c.expect_eol()?;

    let mut p = RuleParser {
        inf: Infer::default(),
        vars: Vec::new(),
        tynames: FxHashMap::default(),
    };
    let (lp, lc) = p.pat(&lhs, Side::Lhs)?;
    if matches!(lp, RawPat::Var(_)) && !matches!(lhs.kind, AstKind::Typed(..)) && guard.is_none() {
        return Err(ParseError::new(
            lhs.span,
            "a bare variable on the left matches everything; add a guard",
        ));
    }
    let (rp, rc) = p.pat(&rhs, Side::Rhs)?;
    p.inf
        .unify(lc, rc)
        .map_err(|m| ParseError::new(rhs.span, format!("the two sides differ in dtype: {m}")))?;
    let g = match &guard {
        Some(gast) => {
            let (g, is_bool) = p.guard(gast)?;
            if !is_bool {
                return Err(ParseError::new(
                    gast.span,
                    "a guard must be a condition, not a number",
                ));
            }
            Some(g)
        }
        None => None,
    };

    // Resolve type classes: fixed dtypes stay; named variables range over
    // the integer dtypes (or all dtypes when nothing forces an integer);
    // unnamed integer classes are `index`; unnamed unconstrained classes
    // (e.g. both arms of a `where`) range over index and bool.
    let mut tyvars: Vec<TyVar> = Vec::new();
    let mut class_ty: FxHashMap<usize, Ty> = FxHashMap::default();
    let n = p.inf.parent.len();
    for cl in 0..n {
        let r = p.inf.find(cl);
        if class_ty.contains_key(&r) {
            continue;
        }
        let ty = match (p.inf.fixed[r], &p.inf.name[r], p.inf.int[r]) {
            (Some(d), _, _) => Ty::Fixed(d),
            (None, Some(nm), int) => {
                tyvars.push(TyVar {
                    name: nm.clone(),
                    domain: if int {
                        DType::INTS.to_vec()
                    } else {
                        vec![DType::Index, DType::I32, DType::I64, DType::Bool]
                    },
                });
                Ty::Var(tyvars.len() - 1)
            }
            (None, None, true) => Ty::Fixed(DType::Index),
            (None, None, false) => {
                tyvars.push(TyVar {
                    name: "_".into(),
                    domain: vec![DType::Index, DType::Bool],
                });
                Ty::Var(tyvars.len() - 1)
            }
        };
        class_ty.insert(r, ty);
    }
    let mut ty_of = |cl: usize| class_ty[&p.inf.find(cl)];
    let vars: Vec<PatVar> = p
        .vars
        .iter()
        .map(|(name, is_const, cl)| PatVar {
            name: name.clone(),
            is_const: *is_const,
            ty: ty_of(*cl),
        })
        .collect();
    let lhs_pat = resolve(&lp, &mut ty_of, &vars, false);
    let rhs_pat = resolve(&rp, &mut ty_of, &vars, true);
    let guard = g.map(|g| resolve_guard(&g, &mut ty_of));
    Ok(Rule {
        name,
        comment: String::new(),
        group: group.to_string(),
        file: file.to_string(),
        line: kw.line,
        lhs: lhs_pat,
        rhs: rhs_pat,
        guard,
        vars,
        tyvars,
        text: String::new(),
    })
}

fn resolve(p: &RawPat, ty_of: &mut impl FnMut(usize) -> Ty, vars: &[PatVar], rhs: bool) -> Pat {
    let out = match p {
        RawPat::Var(v) => Pat::Var(*v),
        RawPat::Lit(v, cl) => Pat::Lit(*v, ty_of(*cl)),
        RawPat::Invalid => Pat::Invalid,
        RawPat::Bound(v, hi) => Pat::Bound(*v, *hi),
        RawPat::Op(op, cl, args) => Pat::Op(
            *op,
            ty_of(*cl),
            args.iter().map(|a| resolve(a, ty_of, vars, rhs)).collect(),
        ),
    };
    // On the right, a non-leaf subterm made only of constants is computed.
    if rhs && matches!(out, Pat::Op(..) | Pat::Bound(..)) && only_constants(&out, vars) {
        return Pat::Computed(Box::new(strip_computed(out)));
    }
    out
}

fn strip_computed(p: Pat) -> Pat {
    match p {
        Pat::Computed(inner) => strip_computed(*inner),
        Pat::Op(op, t, args) => Pat::Op(op, t, args.into_iter().map(strip_computed).collect()),
        other => other,
    }
}

fn only_constants(p: &Pat, vars: &[PatVar]) -> bool {
    match p {
        Pat::Var(v) => vars[*v].is_const,
        Pat::Lit(..) => true,
        Pat::Invalid => false,
        Pat::Op(_, _, args) => args.iter().all(|a| only_constants(a, vars)),
        Pat::Computed(_) | Pat::Bound(..) => true,
    }
}

fn resolve_guard(g: &RawGuard, ty_of: &mut impl FnMut(usize) -> Ty) -> Guard {
    match g {
        RawGuard::Int(v) => Guard::Int(*v),
        RawGuard::Bool(b) => Guard::Bool(*b),
        RawGuard::Val(v) => Guard::Val(*v),
        RawGuard::VMin(e) => Guard::VMin(resolve_iexpr(e, ty_of)),
        RawGuard::VMax(e) => Guard::VMax(resolve_iexpr(e, ty_of)),
        RawGuard::Fits(e, c) => Guard::Fits(resolve_iexpr(e, ty_of), ty_of(*c)),
        RawGuard::Valid(v) => Guard::Valid(*v),
        RawGuard::Constrained(v) => Guard::Constrained(*v),
        RawGuard::IsConst(v) => Guard::IsConst(*v),
        RawGuard::TyMin(c) => Guard::TyMin(ty_of(*c)),
        RawGuard::TyMax(c) => Guard::TyMax(ty_of(*c)),
        RawGuard::Un(op, a) => Guard::Un(*op, Box::new(resolve_guard(a, ty_of))),
        RawGuard::Bin(op, a, b) => Guard::Bin(
            *op,
            Box::new(resolve_guard(a, ty_of)),
            Box::new(resolve_guard(b, ty_of)),
        ),
        RawGuard::Call(h, args) => {
            Guard::Call(*h, args.iter().map(|a| resolve_guard(a, ty_of)).collect())
        }
    }
}

fn resolve_iexpr(e: &RawIExpr, ty_of: &mut impl FnMut(usize) -> Ty) -> IExpr {
    match e {
        RawIExpr::Var(v) => IExpr::Var(*v),
        RawIExpr::Scalar(g) => IExpr::Scalar(Box::new(resolve_guard(g, ty_of))),
        RawIExpr::Neg(x) => IExpr::Neg(Box::new(resolve_iexpr(x, ty_of))),
        RawIExpr::Bin(op, a, b) => IExpr::Bin(
            *op,
            Box::new(resolve_iexpr(a, ty_of)),
            Box::new(resolve_iexpr(b, ty_of)),
        ),
    }
}

impl RuleParser {
    fn err<T>(&self, span: Span, r: Result<T, String>) -> PResult<T> {
        r.map_err(|m| ParseError::new(span, m))
    }

    fn type_class(&mut self, name: &str, span: Span) -> PResult<usize> {
        if let Some(d) = DType::from_name(name) {
            return Ok(self.inf.fixed(d));
        }
        if !is_const_name(name) {
            return Err(ParseError::new(
                span,
                format!("`{name}` is not a dtype; type variables start with an uppercase letter"),
            ));
        }
        if let Some(&c) = self.tynames.get(name) {
            return Ok(c);
        }
        let c = self.inf.fresh();
        self.inf.name[c] = Some(name.to_string());
        self.tynames.insert(name.to_string(), c);
        Ok(c)
    }

    fn var(&mut self, name: &str, span: Span, side: Side) -> PResult<usize> {
        if let Some(i) = self.vars.iter().position(|v| v.0 == name) {
            return Ok(i);
        }
        if side == Side::Rhs {
            return Err(ParseError::new(
                span,
                format!("`{name}` is not bound by the left side"),
            ));
        }
        let cl = self.inf.fresh();
        self.vars.push((name.to_string(), is_const_name(name), cl));
        Ok(self.vars.len() - 1)
    }

    fn pat(&mut self, e: &Ast, side: Side) -> PResult<(RawPat, usize)> {
        let sp = e.span;
        match &e.kind {
            AstKind::Int(v) => {
                let v = i64::try_from(*v)
                    .map_err(|_| ParseError::new(sp, "literal does not fit 64 bits"))?;
                let cl = self.inf.fresh();
                self.inf.need_int(cl).map_err(|m| ParseError::new(sp, m))?;
                Ok((RawPat::Lit(v, cl), cl))
            }
            AstKind::Bool(b) => {
                let cl = self.inf.fixed(DType::Bool);
                Ok((RawPat::Lit(*b as i64, cl), cl))
            }
            AstKind::Invalid => Ok((RawPat::Invalid, self.inf.fixed(DType::Index))),
            AstKind::Name(n) => {
                let v = self.var(n, sp, side)?;
                Ok((RawPat::Var(v), self.vars[v].2))
            }
            AstKind::Typed(inner, t, tspan) => {
                let (p, cl) = self.pat(inner, side)?;
                let tc = self.type_class(t, *tspan)?;
                let r = self.inf.unify(cl, tc);
                self.err(*tspan, r)?;
                Ok((p, cl))
            }
            AstKind::Unary(op, x) => {
                let (px, cx) = self.pat(x, side)?;
                let r = if *op == Op::Not {
                    self.inf.need(cx, DType::Bool)
                } else {
                    self.inf.need_int(cx)
                };
                self.err(sp, r)?;
                Ok((RawPat::Op(*op, cx, vec![px]), cx))
            }
            AstKind::Binary(op, a, b) => self.binary(*op, &[a, b], sp, side),
            AstKind::Call { name, ty, args } => {
                let want = |n: usize| -> PResult<()> {
                    if args.len() == n {
                        Ok(())
                    } else {
                        Err(ParseError::new(
                            sp,
                            format!("`{name}` takes {n} argument(s)"),
                        ))
                    }
                };
                match name.as_str() {
                    "min" | "max" | "floordiv" | "ceildiv" | "mod" => {
                        want(2)?;
                        let op = match name.as_str() {
                            "min" => Op::Min,
                            "max" => Op::Max,
                            "floordiv" => Op::FloorDiv,
                            "ceildiv" => Op::CeilDiv,
                            _ => Op::Mod,
                        };
                        self.binary(op, &[&args[0], &args[1]], sp, side)
                    }
                    "where" => {
                        want(3)?;
                        let (pc, cc) = self.pat(&args[0], side)?;
                        let r = self.inf.need(cc, DType::Bool);
                        self.err(args[0].span, r)?;
                        let (pa, ca) = self.pat(&args[1], side)?;
                        let (pb, cb) = self.pat(&args[2], side)?;
                        let r = self.inf.unify(ca, cb);
                        self.err(sp, r)?;
                        Ok((RawPat::Op(Op::Where, ca, vec![pc, pa, pb]), ca))
                    }
                    "i32" | "i64" | "index" | "cast" => {
                        want(1)?;
                        let to = match (name.as_str(), ty) {
                            ("cast", Some((t, tsp))) => self.type_class(t, *tsp)?,
                            ("cast", None) => {
                                return Err(ParseError::new(
                                    sp,
                                    "write `cast<T>(x)` with a target type",
                                ))
                            }
                            (n, _) => self.inf.fixed(DType::from_name(n).expect("dtype name")),
                        };
                        let r = self.inf.need_int(to);
                        self.err(sp, r)?;
                        let (px, cx) = self.pat(&args[0], side)?;
                        let r = self.inf.need_int(cx);
                        self.err(args[0].span, r)?;
                        Ok((RawPat::Op(Op::Cast, to, vec![px]), to))
                    }
                    "vmin" | "vmax" if side == Side::Rhs => {
                        want(1)?;
                        let AstKind::Name(v) = &args[0].kind else {
                            return Err(ParseError::new(
                                args[0].span,
                                format!("`{name}` takes a pattern variable"),
                            ));
                        };
                        let i = self.var(v, args[0].span, side)?;
                        let cl = self.vars[i].2;
                        let r = self.inf.need_int(cl);
                        self.err(sp, r)?;
                        Ok((RawPat::Bound(i, name == "vmax"), cl))
                    }
                    _ => Err(ParseError::new(sp, format!("`{name}` is not an operation"))),
                }
            }
        }
    }

    /// An interval expression (the argument of `vmin`, `vmax`, `fits`) and
    /// its type class.
    fn iexpr(&mut self, e: &Ast, class: &mut Option<usize>) -> PResult<RawIExpr> {
        let sp = e.span;
        if !self.mentions_term(e) {
            let (g, is_bool) = self.guard(e)?;
            if is_bool {
                return Err(ParseError::new(sp, "expected a number, found a condition"));
            }
            return Ok(RawIExpr::Scalar(Box::new(g)));
        }
        match &e.kind {
            AstKind::Name(n) => {
                let Some(v) = self.vars.iter().position(|x| x.0 == *n) else {
                    return Err(ParseError::new(
                        sp,
                        format!("`{n}` is not bound by the left side"),
                    ));
                };
                let cl = self.vars[v].2;
                let r = self.inf.need_int(cl);
                self.err(sp, r)?;
                if let Some(c) = *class {
                    let r = self.inf.unify(c, cl);
                    self.err(sp, r)?;
                } else {
                    *class = Some(cl);
                }
                Ok(RawIExpr::Var(v))
            }
            AstKind::Unary(Op::Neg, x) => Ok(RawIExpr::Neg(Box::new(self.iexpr(x, class)?))),
            AstKind::Binary(op @ (Op::Add | Op::Sub | Op::Mul), a, b) => Ok(RawIExpr::Bin(
                *op,
                Box::new(self.iexpr(a, class)?),
                Box::new(self.iexpr(b, class)?),
            )),
            _ => Err(ParseError::new(
                sp,
                "range expressions use + - * and negation over pattern variables and constants",
            )),
        }
    }

    /// Whether an expression names a term (not constant) pattern variable.
    fn mentions_term(&self, e: &Ast) -> bool {
        match &e.kind {
            AstKind::Name(n) => self.vars.iter().any(|v| v.0 == *n && !v.1),
            AstKind::Unary(_, x) | AstKind::Typed(x, ..) => self.mentions_term(x),
            AstKind::Binary(_, a, b) => self.mentions_term(a) || self.mentions_term(b),
            AstKind::Call { args, .. } => args.iter().any(|a| self.mentions_term(a)),
            AstKind::Int(_) | AstKind::Bool(_) | AstKind::Invalid => false,
        }
    }

    fn binary(
        &mut self,
        op: Op,
        args: &[&Ast; 2],
        sp: Span,
        side: Side,
    ) -> PResult<(RawPat, usize)> {
        let (pa, ca) = self.pat(args[0], side)?;
        let (pb, cb) = self.pat(args[1], side)?;
        let r = self.inf.unify(ca, cb);
        self.err(sp, r)?;
        let result = if op.is_bool_logic() {
            let r = self.inf.need(ca, DType::Bool);
            self.err(sp, r)?;
            ca
        } else if op.is_comparison() {
            let r = self.inf.need_int(ca);
            self.err(sp, r)?;
            self.inf.fixed(DType::Bool)
        } else {
            let r = self.inf.need_int(ca);
            self.err(sp, r)?;
            ca
        };
        Ok((RawPat::Op(op, result, vec![pa, pb]), result))
    }

    /// Reads a guard expression; returns it and whether it is a condition.
    fn guard(&mut self, e: &Ast) -> PResult<(RawGuard, bool)> {
        let sp = e.span;
        let int = |g: (RawGuard, bool), s: Span| -> PResult<RawGuard> {
            if g.1 {
                Err(ParseError::new(s, "expected a number, found a condition"))
            } else {
                Ok(g.0)
            }
        };
        let cond = |g: (RawGuard, bool), s: Span| -> PResult<RawGuard> {
            if g.1 {
                Ok(g.0)
            } else {
                Err(ParseError::new(s, "expected a condition, found a number"))
            }
        };
        match &e.kind {
            AstKind::Int(v) => Ok((RawGuard::Int(*v), false)),
            AstKind::Bool(b) => Ok((RawGuard::Bool(*b), true)),
            AstKind::Invalid | AstKind::Typed(..) => {
                Err(ParseError::new(sp, "not allowed in a guard"))
            }
            AstKind::Name(n) => {
                let Some(v) = self.vars.iter().position(|x| x.0 == *n) else {
                    return Err(ParseError::new(
                        sp,
                        format!("`{n}` is not bound by the left side"),
                    ));
                };
                if !self.vars[v].1 {
                    return Err(ParseError::new(
                        sp,
                        format!("`{n}` is a term, not a constant: use vmin({n}) or vmax({n})"),
                    ));
                }
                Ok((RawGuard::Val(v), false))
            }
            AstKind::Unary(op, x) => {
                let g = self.guard(x)?;
                if *op == Op::Not {
                    Ok((RawGuard::Un(Op::Not, Box::new(cond(g, x.span)?)), true))
                } else {
                    Ok((RawGuard::Un(Op::Neg, Box::new(int(g, x.span)?)), false))
                }
            }
            AstKind::Binary(op, a, b) => {
                let (ga, gb) = (self.guard(a)?, self.guard(b)?);
                if op.is_bool_logic() {
                    let x = cond(ga, a.span)?;
                    let y = cond(gb, b.span)?;
                    Ok((RawGuard::Bin(*op, Box::new(x), Box::new(y)), true))
                } else {
                    let x = int(ga, a.span)?;
                    let y = int(gb, b.span)?;
                    Ok((
                        RawGuard::Bin(*op, Box::new(x), Box::new(y)),
                        op.is_comparison(),
                    ))
                }
            }
            AstKind::Call { name, ty, args } => {
                let n = name.as_str();
                let want = |k: usize| -> PResult<()> {
                    if args.len() == k {
                        Ok(())
                    } else {
                        Err(ParseError::new(sp, format!("`{n}` takes {k} argument(s)")))
                    }
                };
                if ty.is_some() {
                    return Err(ParseError::new(
                        sp,
                        "type parameters are not allowed in a guard",
                    ));
                }
                match n {
                    "vmin" | "vmax" | "fits" => {
                        want(1)?;
                        let mut class = None;
                        // A lone variable may be a bool (its range is 0/1);
                        // arithmetic needs integers.
                        let lone_bool = match &args[0].kind {
                            AstKind::Name(v) if n != "fits" => {
                                self.vars.iter().position(|x| x.0 == *v)
                            }
                            _ => None,
                        };
                        let e = match lone_bool {
                            Some(i) if !self.vars[i].1 => RawIExpr::Var(i),
                            _ => self.iexpr(&args[0], &mut class)?,
                        };
                        Ok(match n {
                            "vmin" => (RawGuard::VMin(e), false),
                            "vmax" => (RawGuard::VMax(e), false),
                            _ => {
                                let cl = class.unwrap_or_else(|| self.inf.fixed(DType::Index));
                                (RawGuard::Fits(e, cl), true)
                            }
                        })
                    }
                    "valid" | "constrained" | "is_const" => {
                        want(1)?;
                        let AstKind::Name(v) = &args[0].kind else {
                            return Err(ParseError::new(
                                args[0].span,
                                format!("`{n}` takes a pattern variable"),
                            ));
                        };
                        let Some(i) = self.vars.iter().position(|x| x.0 == *v) else {
                            return Err(ParseError::new(
                                args[0].span,
                                format!("`{v}` is not bound by the left side"),
                            ));
                        };
                        Ok(match n {
                            "valid" => (RawGuard::Valid(i), true),
                            "constrained" => (RawGuard::Constrained(i), true),
                            _ => (RawGuard::IsConst(i), true),
                        })
                    }
                    "min_of" | "max_of" => {
                        want(1)?;
                        let AstKind::Name(t) = &args[0].kind else {
                            return Err(ParseError::new(
                                args[0].span,
                                "expected a dtype or type variable",
                            ));
                        };
                        let cl = self.type_class(t, args[0].span)?;
                        let r = self.inf.need_int(cl);
                        self.err(args[0].span, r)?;
                        Ok((
                            if n == "min_of" {
                                RawGuard::TyMin(cl)
                            } else {
                                RawGuard::TyMax(cl)
                            },
                            false,
                        ))
                    }
                    "gcd" | "min" | "max" | "divides" => {
                        want(2)?;
                        let x = int(self.guard(&args[0])?, args[0].span)?;
                        let y = int(self.guard(&args[1])?, args[1].span)?;
                        let (h, b) = match n {
                            "gcd" => (Helper::Gcd, false),
                            "min" => (Helper::Min, false),
                            "max" => (Helper::Max, false),
                            _ => (Helper::Divides, true),
                        };
                        Ok((RawGuard::Call(h, vec![x, y]), b))
                    }
                    "abs" | "is_pow2" => {
                        want(1)?;
                        let x = int(self.guard(&args[0])?, args[0].span)?;
                        let (h, b) = if n == "abs" {
                            (Helper::Abs, false)
                        } else {
                            (Helper::IsPow2, true)
                        };
                        Ok((RawGuard::Call(h, vec![x]), b))
                    }
                    "mod" | "floordiv" | "ceildiv" => {
                        want(2)?;
                        let x = int(self.guard(&args[0])?, args[0].span)?;
                        let y = int(self.guard(&args[1])?, args[1].span)?;
                        let op = match n {
                            "mod" => Op::Mod,
                            "floordiv" => Op::FloorDiv,
                            _ => Op::CeilDiv,
                        };
                        Ok((RawGuard::Bin(op, Box::new(x), Box::new(y)), false))
                    }
                    _ => Err(ParseError::new(sp, format!("unknown guard helper `{n}`"))),
                }
            }
        }
    }
}

// ---- matching and firing ---------------------------------------------------------

/// The bindings of one match: a node per pattern variable, a dtype per type
/// variable.
#[derive(Clone, Debug)]
pub struct Binding {
    pub nodes: Vec<Option<NodeId>>,
    pub types: Vec<Option<DType>>,
}

impl Rule {
    fn new_binding(&self) -> Binding {
        Binding {
            nodes: vec![None; self.vars.len()],
            types: vec![None; self.tyvars.len()],
        }
    }

    /// The root op of the left side, for dispatch (`None`: any node).
    pub fn root_op(&self) -> Option<Op> {
        match &self.lhs {
            Pat::Op(op, ..) => Some(*op),
            Pat::Lit(..) => Some(Op::Const(0)),
            Pat::Invalid => Some(Op::Invalid),
            _ => None,
        }
    }

    /// Tries the rule at node `n` for an engine whose `index` is 64 bits.
    pub fn apply(&self, g: &mut Graph, n: NodeId) -> Option<NodeId> {
        self.apply_at(g, n, Width::W64)
    }

    /// Tries the rule at node `n`, with `index` W bits wide: guards see
    /// ranges cut to W bits and W-bit dtype bounds, and constants on the
    /// right are computed at W bits, exactly as the proof at width W
    /// assumes. The first binding whose guard holds and whose computed
    /// constants are defined gives the replacement.
    pub fn apply_at(&self, g: &mut Graph, n: NodeId, w: Width) -> Option<NodeId> {
        let mut b = self.new_binding();
        let mut found: Option<Binding> = None;
        {
            let graph: &Graph = g;
            let mut accept = |b: &mut Binding| -> bool {
                if self
                    .guard
                    .as_ref()
                    .is_some_and(|gd| !guard_holds(gd, graph, self, b, w))
                {
                    return false;
                }
                if !computed_ok(&self.rhs, graph, self, b, w) {
                    return false;
                }
                found = Some(b.clone());
                true
            };
            if !match_pat(graph, self, &self.lhs, n, &mut b, &mut accept) {
                return None;
            }
        }
        let b = found?;
        build(g, self, &self.rhs, &b, w)
    }

    /// Fires the rule under a binding given rather than matched: `nodes[i]`
    /// is the node of pattern variable `i` (the nodes a left side was
    /// instantiated from), `types[k]` the dtype of type variable `k`. The
    /// guard is evaluated at the engine's own ranges of those nodes and the
    /// right side's computed constants at width `w`, exactly as
    /// [`Rule::apply_at`] does; then the right side is built with the same
    /// node for every pattern variable. Nothing is matched, so a commutative
    /// operator cannot bind the variables another way. The error says which
    /// step refused (a node of the wrong dtype or not a constant where the
    /// rule needs one, the guard, a computed constant).
    pub fn instantiate_rhs(
        &self,
        g: &mut Graph,
        nodes: &[NodeId],
        types: &[DType],
        w: Width,
    ) -> Result<NodeId, String> {
        if nodes.len() != self.vars.len() || types.len() != self.tyvars.len() {
            return Err(format!(
                "{} node(s) and {} dtype(s) for {} pattern and {} type variable(s)",
                nodes.len(),
                types.len(),
                self.vars.len(),
                self.tyvars.len()
            ));
        }
        let b = Binding {
            nodes: nodes.iter().map(|&n| Some(n)).collect(),
            types: types.iter().map(|&d| Some(d)).collect(),
        };
        for (pv, &n) in self.vars.iter().zip(nodes) {
            let node = g.node(n);
            let want = resolve_ty(pv.ty, &b.types);
            if node.dtype != want {
                return Err(format!(
                    "pattern variable `{}` is {}, its node {}",
                    pv.name, want, node.dtype
                ));
            }
            if pv.is_const && node.as_const().is_none() {
                return Err(format!(
                    "constant variable `{}` is bound to a node that is not a constant",
                    pv.name
                ));
            }
        }
        let graph: &Graph = g;
        if let Some(gd) = &self.guard {
            if !guard_holds(gd, graph, self, &b, w) {
                return Err("the guard does not hold at the nodes' ranges".into());
            }
        }
        if !computed_ok(&self.rhs, graph, self, &b, w) {
            return Err("a constant computed on the right is undefined".into());
        }
        build(g, self, &self.rhs, &b, w).ok_or_else(|| "the right side does not build".into())
    }
}

fn ty_matches(t: Ty, d: DType, rule: &Rule, b: &mut Binding, undo: &mut Vec<usize>) -> bool {
    match t {
        Ty::Fixed(f) => f == d,
        Ty::Var(k) => match b.types[k] {
            Some(x) => x == d,
            None => {
                if !rule.tyvars[k].domain.contains(&d) {
                    return false;
                }
                b.types[k] = Some(d);
                undo.push(k);
                true
            }
        },
    }
}

type Cont<'a> = dyn FnMut(&mut Binding) -> bool + 'a;

/// Matches pattern `p` against node `n`, calling `k` for every way it
/// matches until `k` accepts (returns true). Bindings made here are undone
/// before returning false.
fn match_pat(g: &Graph, rule: &Rule, p: &Pat, n: NodeId, b: &mut Binding, k: &mut Cont) -> bool {
    let node = g.node(n);
    let mut undo = Vec::new();
    let ok = match p {
        Pat::Var(v) => {
            let pv = &rule.vars[*v];
            match b.nodes[*v] {
                Some(bound) => bound == n && k(b),
                None => {
                    if pv.is_const && node.as_const().is_none() {
                        false
                    } else if !ty_matches(pv.ty, node.dtype, rule, b, &mut undo) {
                        false
                    } else {
                        b.nodes[*v] = Some(n);
                        let r = k(b);
                        if !r {
                            b.nodes[*v] = None;
                        }
                        r
                    }
                }
            }
        }
        Pat::Lit(v, t) => {
            node.as_const() == Some(*v) && ty_matches(*t, node.dtype, rule, b, &mut undo) && k(b)
        }
        Pat::Invalid => node.op == Op::Invalid && k(b),
        Pat::Op(op, t, args) => {
            if node.op != *op || !ty_matches(*t, node.dtype, rule, b, &mut undo) {
                false
            } else {
                let src: Vec<NodeId> = node.src().to_vec();
                // Operand dtypes must agree with the pattern's too; for most
                // ops they follow from the result, for comparisons and casts
                // the operand patterns check them.
                if match_seq(g, rule, args, &src, b, k) {
                    true
                } else if op.is_commutative() {
                    let swapped = [src[1], src[0]];
                    match_seq(g, rule, args, &swapped, b, k)
                } else {
                    false
                }
            }
        }
        Pat::Computed(_) | Pat::Bound(..) => {
            unreachable!("computed constants only appear on the right")
        }
    };
    if !ok {
        for t in undo {
            b.types[t] = None;
        }
    }
    ok
}

fn match_seq(
    g: &Graph,
    rule: &Rule,
    pats: &[Pat],
    nodes: &[NodeId],
    b: &mut Binding,
    k: &mut Cont,
) -> bool {
    match pats.split_first() {
        None => k(b),
        Some((p, rest)) => match_pat(g, rule, p, nodes[0], b, &mut |b: &mut Binding| {
            match_seq(g, rule, rest, &nodes[1..], b, k)
        }),
    }
}

/// The dtype a pattern type has under a binding.
pub fn resolve_ty(t: Ty, types: &[Option<DType>]) -> DType {
    match t {
        Ty::Fixed(d) => d,
        Ty::Var(k) => types[k].expect("every type variable is bound by the left side"),
    }
}

/// Evaluates a computed (constants-only) template at 64 bits with the ops'
/// own semantics; `None` when it overflows or divides by zero.
pub fn eval_computed(g: &Graph, rule: &Rule, p: &Pat, b: &Binding, w: Width) -> Option<Val> {
    match p {
        Pat::Var(v) => {
            let n = g.node(b.nodes[*v]?);
            let c = n.as_const()? as i128;
            Some(if n.dtype == DType::Bool {
                Val::Bool(c != 0)
            } else {
                Val::Int(c)
            })
        }
        Pat::Lit(v, t) => Some(if resolve_ty(*t, &b.types) == DType::Bool {
            Val::Bool(*v != 0)
        } else {
            Val::Int(*v as i128)
        }),
        Pat::Op(op, t, args) => {
            let vals: Option<Vec<Val>> = args
                .iter()
                .map(|a| eval_computed(g, rule, a, b, w))
                .collect();
            let dts: Vec<DType> = args.iter().map(|a| bound_dtype(rule, a, b)).collect();
            interp::apply(*op, resolve_ty(*t, &b.types), &vals?, &dts, w).ok()
        }
        Pat::Computed(inner) => eval_computed(g, rule, inner, b, w),
        Pat::Bound(v, hi) => {
            let (lo, h) = range_at(g.node(b.nodes[*v]?), w)?;
            Some(Val::Int(if *hi { h } else { lo }))
        }
        Pat::Invalid => None,
    }
}

/// The dtype of a pattern under a binding (every type variable is bound by
/// the time the right side is built).
fn bound_dtype(rule: &Rule, p: &Pat, b: &Binding) -> DType {
    match p {
        Pat::Var(v) | Pat::Bound(v, _) => resolve_ty(rule.vars[*v].ty, &b.types),
        Pat::Lit(_, t) | Pat::Op(_, t, _) => resolve_ty(*t, &b.types),
        Pat::Invalid => DType::Index,
        Pat::Computed(inner) => bound_dtype(rule, inner, b),
    }
}

fn computed_ok(p: &Pat, g: &Graph, rule: &Rule, b: &Binding, w: Width) -> bool {
    match p {
        Pat::Computed(_) => matches!(
            eval_computed(g, rule, p, b, w),
            Some(Val::Int(_) | Val::Bool(_))
        ),
        Pat::Op(_, _, args) => args.iter().all(|a| computed_ok(a, g, rule, b, w)),
        _ => true,
    }
}

/// Builds the right side under a binding.
fn build(g: &mut Graph, rule: &Rule, p: &Pat, b: &Binding, w: Width) -> Option<NodeId> {
    Some(match p {
        Pat::Var(v) => b.nodes[*v]?,
        Pat::Lit(v, t) => g.cnst(*v, resolve_ty(*t, &b.types)),
        Pat::Invalid => g.invalid(),
        Pat::Bound(..) => unreachable!("bounds are wrapped as computed constants"),
        Pat::Computed(inner) => {
            let t = match &**inner {
                Pat::Op(_, t, _) | Pat::Lit(_, t) => resolve_ty(*t, &b.types),
                Pat::Var(v) | Pat::Bound(v, _) => g.node(b.nodes[*v]?).dtype,
                _ => return None,
            };
            match eval_computed(g, rule, inner, b, w)? {
                Val::Int(v) => g.cnst(i64::try_from(v).ok()?, t),
                Val::Bool(x) => g.bool_const(x),
                _ => return None,
            }
        }
        Pat::Op(op, t, args) => {
            let src: Option<Vec<NodeId>> = args.iter().map(|a| build(g, rule, a, b, w)).collect();
            let src = src?;
            let to = resolve_ty(*t, &b.types);
            g.try_mk(*op, (*op == Op::Cast).then_some(to), &src).ok()?
        }
    })
}

/// Guard values: exact integers or conditions; `None` is undefined (a
/// division by zero, an empty range), which makes the guard false.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GVal {
    Int(i128),
    Bool(bool),
}

fn guard_holds(gd: &Guard, g: &Graph, rule: &Rule, b: &Binding, w: Width) -> bool {
    matches!(eval_guard(gd, g, rule, b, w), Some(GVal::Bool(true)))
}

fn eval_guard(gd: &Guard, g: &Graph, rule: &Rule, b: &Binding, w: Width) -> Option<GVal> {
    use GVal::*;
    let int = |x: Option<GVal>| match x {
        Some(Int(v)) => Some(v),
        _ => None,
    };
    let cond = |x: Option<GVal>| match x {
        Some(Bool(v)) => Some(v),
        _ => None,
    };
    let node = |v: usize| g.node(b.nodes[v].expect("guard variables are bound"));
    let range = |v: usize| range_at(node(v), w);
    let scalar = |s: &Guard| int(eval_guard(s, g, rule, b, w));
    Some(match gd {
        Guard::Int(v) => Int(*v),
        Guard::Bool(x) => Bool(*x),
        Guard::Val(v) => Int(node(*v).as_const()? as i128),
        Guard::VMin(e) => Int(interval(e, &range, &scalar)?.0),
        Guard::VMax(e) => Int(interval(e, &range, &scalar)?.1),
        Guard::Fits(e, t) => {
            let (lo, hi) = interval(e, &range, &scalar)?;
            let (tlo, thi) = w.dtype_bounds(resolve_ty(*t, &b.types));
            Bool(tlo <= lo && hi <= thi)
        }
        Guard::Valid(v) => Bool(!node(*v).maybe_invalid),
        Guard::Constrained(v) => Bool(!node(*v).maybe_unconstrained),
        Guard::IsConst(v) => Bool(node(*v).as_const().is_some()),
        Guard::TyMin(t) => Int(w.dtype_bounds(resolve_ty(*t, &b.types)).0),
        Guard::TyMax(t) => Int(w.dtype_bounds(resolve_ty(*t, &b.types)).1),
        Guard::Un(Op::Not, a) => Bool(!cond(eval_guard(a, g, rule, b, w))?),
        Guard::Un(_, a) => Int(int(eval_guard(a, g, rule, b, w))?.checked_neg()?),
        Guard::Bin(op, x, y) => {
            let (x, y) = (eval_guard(x, g, rule, b, w)?, eval_guard(y, g, rule, b, w)?);
            match (x, y) {
                (Bool(p), Bool(q)) => Bool(match op {
                    Op::And => p && q,
                    _ => p || q,
                }),
                (Int(p), Int(q)) => guard_binop(*op, p, q)?,
                _ => return None,
            }
        }
        Guard::Call(h, args) => {
            let v: Option<Vec<i128>> = args
                .iter()
                .map(|a| int(eval_guard(a, g, rule, b, w)))
                .collect();
            let v = v?;
            match h {
                Helper::Gcd => Int(interp::gcd(v[0], v[1])),
                Helper::Abs => Int(v[0].checked_abs()?),
                Helper::Min => Int(v[0].min(v[1])),
                Helper::Max => Int(v[0].max(v[1])),
                Helper::Divides => Bool(v[0] != 0 && v[1] % v[0] == 0),
                Helper::IsPow2 => Bool(v[0] > 0 && v[0] & (v[0] - 1) == 0),
            }
        }
    })
}

/// A node's range as the proof at width `w` sees it: an `index` range cut
/// to W bits (a defined value fits W bits, so nothing is lost); `None`
/// when no value is left.
fn range_at(n: &crate::ir::Node, w: Width) -> Option<(i128, i128)> {
    let (tlo, thi) = w.dtype_bounds(n.dtype);
    let (lo, hi) = ((n.vmin as i128).max(tlo), (n.vmax as i128).min(thi));
    (!n.range_empty() && lo <= hi).then_some((lo, hi))
}

/// Interval arithmetic over matched ranges (exact, checked); `None` when a
/// range is empty or a bound overflows `i128`.
fn interval(
    e: &IExpr,
    range: &impl Fn(usize) -> Option<(i128, i128)>,
    scalar: &impl Fn(&Guard) -> Option<i128>,
) -> Option<(i128, i128)> {
    Some(match e {
        IExpr::Scalar(g) => {
            let v = scalar(g)?;
            (v, v)
        }
        IExpr::Var(v) => range(*v)?,
        IExpr::Neg(x) => {
            let (lo, hi) = interval(x, range, scalar)?;
            (hi.checked_neg()?, lo.checked_neg()?)
        }
        IExpr::Bin(op, x, y) => {
            let (a, b) = (interval(x, range, scalar)?, interval(y, range, scalar)?);
            match op {
                Op::Add => (a.0.checked_add(b.0)?, a.1.checked_add(b.1)?),
                Op::Sub => (a.0.checked_sub(b.1)?, a.1.checked_sub(b.0)?),
                _ => {
                    let c = [
                        a.0.checked_mul(b.0)?,
                        a.0.checked_mul(b.1)?,
                        a.1.checked_mul(b.0)?,
                        a.1.checked_mul(b.1)?,
                    ];
                    (*c.iter().min()?, *c.iter().max()?)
                }
            }
        }
    })
}

/// A binary guard operator on exact integers.
fn guard_binop(op: Op, p: i128, q: i128) -> Option<GVal> {
    use GVal::*;
    Some(match op {
        Op::Lt => Bool(p < q),
        Op::Le => Bool(p <= q),
        Op::Eq => Bool(p == q),
        Op::Ne => Bool(p != q),
        Op::Add => Int(p.checked_add(q)?),
        Op::Sub => Int(p.checked_sub(q)?),
        Op::Mul => Int(p.checked_mul(q)?),
        // i128::MIN / -1 is the one quotient i128 cannot hold (and Rust's
        // remainder traps on it too); guard values never get near it.
        Op::Div | Op::Rem | Op::FloorDiv | Op::Mod | Op::CeilDiv if p == i128::MIN => return None,
        Op::Min | Op::Max | Op::Div | Op::Rem | Op::FloorDiv | Op::Mod | Op::CeilDiv => {
            Int(interp::int_op(op, p, q)?)
        }
        _ => return None,
    })
}

// ---- the built-in rule set ---------------------------------------------------------

/// The built-in rule files (name, text), embedded at build time.
pub const BUILTIN_FILES: &[(&str, &str)] = &[
    ("invalid.rules", include_str!("../rules/invalid.rules")),
    ("fold.rules", include_str!("../rules/fold.rules")),
    ("identity.rules", include_str!("../rules/identity.rules")),
    ("self.rules", include_str!("../rules/self.rules")),
    ("cast.rules", include_str!("../rules/cast.rules")),
    ("recombine.rules", include_str!("../rules/recombine.rules")),
    ("bool.rules", include_str!("../rules/bool.rules")),
    ("where.rules", include_str!("../rules/where.rules")),
    ("range.rules", include_str!("../rules/range.rules")),
    ("compare.rules", include_str!("../rules/compare.rules")),
    ("minmax.rules", include_str!("../rules/minmax.rules")),
    ("combine.rules", include_str!("../rules/combine.rules")),
    ("chain.rules", include_str!("../rules/chain.rules")),
    (
        "range_divmod.rules",
        include_str!("../rules/range_divmod.rules"),
    ),
    (
        "advanced_div.rules",
        include_str!("../rules/advanced_div.rules"),
    ),
];

/// The lowering rule files: not part of the simplification order; a
/// backend applies them after simplifying (floor division to truncating).
pub const LOWERING_FILES: &[(&str, &str)] = &[(
    "lower_divmod.rules",
    include_str!("../rules/lower_divmod.rules"),
)];

/// Parses the lowering rules (one group per file, in file order).
pub fn load_lowering() -> Result<RuleSet, String> {
    let mut set = RuleSet::default();
    for (name, text) in LOWERING_FILES {
        set.add_file(&format!("engine/rules/{name}"), text)
            .map_err(|e| e.to_string())?;
    }
    Ok(set)
}

/// The group order of the built-in rules (`engine/rules/order`).
pub const BUILTIN_ORDER: &str = include_str!("../rules/order");

/// Parses the built-in rule files and orders their groups.
pub fn load_builtin() -> Result<RuleSet, String> {
    let mut set = RuleSet::default();
    for (name, text) in BUILTIN_FILES {
        set.add_file(&format!("engine/rules/{name}"), text)
            .map_err(|e| e.to_string())?;
    }
    set.apply_order(BUILTIN_ORDER)?;
    Ok(set)
}

/// The built-in rule set, parsed once. The files are part of the build and
/// checked by the test suite, so a failure here is a bug in them.
pub fn builtin() -> &'static RuleSet {
    static SET: std::sync::OnceLock<RuleSet> = std::sync::OnceLock::new();
    SET.get_or_init(|| match load_builtin() {
        Ok(s) => s,
        Err(e) => panic!("built-in rules do not load: {e}"),
    })
}

// ---- printing patterns --------------------------------------------------------------

impl Rule {
    /// A pattern (or template) in rule syntax, for reports.
    pub fn show(&self, p: &Pat) -> String {
        use crate::print::precedence;
        fn prec(p: &Pat) -> u8 {
            match p {
                Pat::Op(op, ..) => precedence(*op),
                Pat::Computed(inner) => prec(inner),
                Pat::Lit(v, _) if *v < 0 => 8,
                _ => 9,
            }
        }
        match p {
            Pat::Var(v) => self.vars[*v].name.clone(),
            Pat::Lit(v, Ty::Fixed(DType::Bool)) => {
                (if *v != 0 { "true" } else { "false" }).to_string()
            }
            Pat::Lit(v, _) => v.to_string(),
            Pat::Invalid => "invalid".to_string(),
            Pat::Bound(v, hi) => format!(
                "{}({})",
                if *hi { "vmax" } else { "vmin" },
                self.vars[*v].name
            ),
            Pat::Computed(inner) => self.show(inner),
            Pat::Op(op, ty, args) => {
                let a: Vec<String> = args.iter().map(|x| self.show(x)).collect();
                match op {
                    Op::Neg | Op::Not => {
                        let s = if *op == Op::Neg { "-" } else { "!" };
                        if prec(&args[0]) >= 9 {
                            format!("{s}{}", a[0])
                        } else {
                            format!("{s}({})", a[0])
                        }
                    }
                    Op::Cast => match ty {
                        Ty::Fixed(d) => format!("{d}({})", a[0]),
                        Ty::Var(k) => format!("cast<{}>({})", self.tyvars[*k].name, a[0]),
                    },
                    Op::Min | Op::Max | Op::Where => format!("{}({})", op.name(), a.join(", ")),
                    _ => {
                        let pr = precedence(*op);
                        let l = if prec(&args[0]) < pr {
                            format!("({})", a[0])
                        } else {
                            a[0].clone()
                        };
                        let r = if prec(&args[1]) <= pr {
                            format!("({})", a[1])
                        } else {
                            a[1].clone()
                        };
                        format!("{l} {} {r}", op.infix().expect("binary operator"))
                    }
                }
            }
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
        let bound: Vec<Option<DType>> = types.iter().map(|&d| Some(d)).collect();
        match p {
            Pat::Var(v) | Pat::Bound(v, _) => resolve_ty(self.vars[*v].ty, &bound),
            Pat::Lit(_, t) | Pat::Op(_, t, _) => resolve_ty(*t, &bound),
            Pat::Invalid => DType::Index,
            Pat::Computed(inner) => self.pat_dtype(inner, types),
        }
    }
}
