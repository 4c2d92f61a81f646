//! Reading rule files: logical lines, one rule per line (with indented
//! continuations), its left and right sides as patterns and its guard,
//! with the dtypes of every subterm inferred (see [`super::infer`]).

use super::ast::{Guard, Helper, IExpr, LemmaUse, Pat, PatVar, Rule, Ty, TyVar};
use super::infer::Infer;
use crate::ir::op::Class;
use crate::ir::{DType, Op};
use crate::text::parse::{lex_line, names, Ast, AstKind, Cursor, PResult, ParseError, Span, Tok};
use rustc_hash::FxHashMap;

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

/// One statement of a file in the rule language (a rule, a lemma, a
/// `group` line).
pub struct Statement {
    /// Its first line.
    pub line: u32,
    /// The `#` comment lines just above it (a blank line in between drops
    /// them).
    pub comment: Vec<String>,
    /// Its text, continuation lines joined by `\n` (without its
    /// `terminates:` justification).
    pub text: String,
    /// Its tokens, an end-of-line token (at the end of the first line)
    /// last.
    pub toks: Vec<(Tok, Span)>,
    /// The text of a `terminates:` continuation line (and the lines that
    /// continue it), with where it starts: why a rule that does not
    /// decrease the reduction order still stops (`rules::reduction`).
    /// Free text, not lexed.
    pub terminates: Option<(String, Span)>,
}

/// The statements of a rule or lemma file, in order.
pub fn statements(text: &str) -> Result<Vec<Statement>, ParseError> {
    let mut out = Vec::new();
    let mut comment: Vec<String> = Vec::new();
    for (line, logical) in logical_lines(text) {
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
        let mut terminates: Option<(String, Span)> = None;
        let mut kept: Vec<&str> = Vec::new();
        for (k, part) in logical.split('\n').enumerate() {
            let at = line + k as u32;
            // A justification is prose: everything from `terminates:` on.
            if let Some((text, _)) = &mut terminates {
                text.push(' ');
                text.push_str(part.trim());
                continue;
            }
            if let Some(why) = part
                .trim_start()
                .strip_prefix("terminates:")
                .filter(|_| k > 0)
            {
                let col = (part.len() - part.trim_start().len()) as u32 + 1;
                terminates = Some((why.trim().to_string(), Span { line: at, col }));
                continue;
            }
            kept.push(part);
            let mut t = lex_line(part, at)?;
            t.pop();
            toks.extend(t);
        }
        let logical = kept.join("\n");
        let end = Span {
            line,
            col: logical
                .lines()
                .next()
                .map_or(1, |l| l.chars().count() as u32 + 1),
        };
        toks.push((Tok::Eol, end));
        out.push(Statement {
            line,
            comment: std::mem::take(&mut comment),
            text: logical,
            toks,
            terminates,
        });
    }
    Ok(out)
}

/// [`IExpr`] before type classes are resolved.
#[derive(Clone, Debug)]
enum RawIExpr {
    Var(usize),
    Scalar(Box<RawGuard>),
    Neg(Box<RawIExpr>),
    Bin(Op, Box<RawIExpr>, Box<RawIExpr>),
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
    Helper(Helper, Vec<RawPat>),
}

/// Dropping a deep pattern frees its nodes from a list, not by recursion
/// (a generated rule may be a chain of 10^6 terms).
impl Drop for RawPat {
    fn drop(&mut self) {
        let mut stack: Vec<RawPat> = Vec::new();
        let take = |p: &mut RawPat, stack: &mut Vec<RawPat>| {
            if let RawPat::Op(_, _, args) | RawPat::Helper(_, args) = p {
                stack.append(args);
            }
        };
        take(self, &mut stack);
        // Each node is dropped with its children already moved to the
        // list, so its own drop finds nothing to do.
        while let Some(mut p) = stack.pop() {
            take(&mut p, &mut stack);
        }
    }
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

pub(super) fn parse_rule(c: &mut Cursor, file: &str, group: &str) -> PResult<Rule> {
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
    let lemmas = parse_using(c)?;
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
    if bare_helper(&rhs_pat) {
        return Err(ParseError::new(
            rhs.span,
            "guard helpers on the right side take constants only",
        ));
    }
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
        lemmas: check_using(lemmas, &p.vars)?,
        terminates: None,
    })
}

/// `using NAME, NAME(ARG, ...)`: the lemmas a rule cites as proof hints
/// (none when the clause is absent).
pub fn parse_using(c: &mut Cursor) -> PResult<Vec<(LemmaUse, Span)>> {
    let mut out = Vec::new();
    if !c.eat_ident("using") {
        return Ok(out);
    }
    loop {
        let (name, span) = c.name("a lemma name")?;
        let args = if c.eat_punct("(") {
            let mut args = Vec::new();
            if !c.eat_punct(")") {
                loop {
                    args.push(c.expr()?);
                    if c.eat_punct(")") {
                        break;
                    }
                    c.expect_punct(",")?;
                }
            }
            Some(args)
        } else {
            None
        };
        out.push((LemmaUse { name, args }, span));
        if !c.eat_punct(",") {
            return Ok(out);
        }
    }
}

/// Every name in a lemma argument is a pattern variable of the rule.
fn check_using(
    uses: Vec<(LemmaUse, Span)>,
    vars: &[(String, bool, usize)],
) -> PResult<Vec<LemmaUse>> {
    let mut out = Vec::new();
    for (u, _) in uses {
        let seen: Vec<(&str, Span)> = u.args.iter().flatten().flat_map(names).collect();
        if let Some((n, sp)) = seen.iter().find(|(n, _)| !vars.iter().any(|v| v.0 == *n)) {
            return Err(ParseError::new(
                *sp,
                format!("`{n}` in a lemma argument is not a pattern variable of the rule"),
            ));
        }
        out.push(u);
    }
    Ok(out)
}

fn resolve(p: &RawPat, ty_of: &mut impl FnMut(usize) -> Ty, vars: &[PatVar], rhs: bool) -> Pat {
    resolve_const(p, ty_of, vars, rhs).0
}

/// [`resolve`], and whether the pattern is made only of constants. Told
/// bottom-up, so that a long chain is resolved in linear time.
fn resolve_const(
    p: &RawPat,
    ty_of: &mut dyn FnMut(usize) -> Ty,
    vars: &[PatVar],
    rhs: bool,
) -> (Pat, bool) {
    crate::deep::grow(|| {
        let args_const = |args: &[RawPat], ty_of: &mut dyn FnMut(usize) -> Ty| {
            let mut all = true;
            let mut out = Vec::with_capacity(args.len());
            for a in args {
                let (q, c) = resolve_const(a, ty_of, vars, rhs);
                all &= c;
                out.push(q);
            }
            (out, all)
        };
        let (out, only_constants) = match p {
            RawPat::Var(v) => (Pat::Var(*v), vars[*v].is_const),
            RawPat::Lit(v, cl) => (Pat::Lit(*v, ty_of(*cl)), true),
            RawPat::Invalid => (Pat::Invalid, false),
            RawPat::Bound(v, hi) => (Pat::Bound(*v, *hi), true),
            RawPat::Op(op, cl, args) => {
                let t = ty_of(*cl);
                let (a, c) = args_const(args, ty_of);
                (Pat::Op(*op, t, a), c)
            }
            RawPat::Helper(h, args) => {
                let (a, c) = args_const(args, ty_of);
                (Pat::Helper(*h, a), c)
            }
        };
        // On the right, a non-leaf subterm made only of constants is
        // computed (as one: its operands' own wrappers come off).
        if rhs && only_constants && matches!(out, Pat::Op(..) | Pat::Bound(..) | Pat::Helper(..)) {
            let mut inner = out;
            if let Pat::Op(_, _, args) | Pat::Helper(_, args) = &mut inner {
                for a in args.iter_mut() {
                    if let Pat::Computed(x) = a {
                        let x = std::mem::replace(&mut **x, Pat::Invalid);
                        *a = x;
                    }
                }
            }
            return (Pat::Computed(Box::new(inner)), true);
        }
        (out, only_constants)
    })
}

/// A helper over terms (not computed from constants).
fn bare_helper(p: &Pat) -> bool {
    crate::deep::grow(|| match p {
        Pat::Helper(..) => true,
        Pat::Op(_, _, args) => args.iter().any(bare_helper),
        _ => false,
    })
}

fn resolve_guard(g: &RawGuard, ty_of: &mut impl FnMut(usize) -> Ty) -> Guard {
    crate::deep::grow(|| match g {
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
    })
}

fn resolve_iexpr(e: &RawIExpr, ty_of: &mut impl FnMut(usize) -> Ty) -> IExpr {
    crate::deep::grow(|| match e {
        RawIExpr::Var(v) => IExpr::Var(*v),
        RawIExpr::Scalar(g) => IExpr::Scalar(Box::new(resolve_guard(g, ty_of))),
        RawIExpr::Neg(x) => IExpr::Neg(Box::new(resolve_iexpr(x, ty_of))),
        RawIExpr::Bin(op, a, b) => IExpr::Bin(
            *op,
            Box::new(resolve_iexpr(a, ty_of)),
            Box::new(resolve_iexpr(b, ty_of)),
        ),
    })
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
        crate::deep::grow(|| {
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
                AstKind::Unary(op, x) => self.op(*op, &[x], sp, side),
                AstKind::Binary(op, a, b) => self.op(*op, &[a, b], sp, side),
                AstKind::Call { name, ty, args } => {
                    let want = |n: usize| -> PResult<()> {
                        if args.len() == n {
                            Ok(())
                        } else {
                            Err(ParseError::new(
                                sp,
                                format!(
                                    "`{name}` takes {}",
                                    crate::text::print::count(n, "argument")
                                ),
                            ))
                        }
                    };
                    if let Some(op) = Op::by_call(name) {
                        want(op.arity())?;
                        let refs: Vec<&Ast> = args.iter().collect();
                        return self.op(op, &refs, sp, side);
                    }
                    if side == Side::Rhs {
                        if let Some(h) = Helper::by_name(name).filter(|h| !h.is_condition()) {
                            want(h.arity())?;
                            let mut pats = Vec::new();
                            let mut class = None;
                            for a in args {
                                let (p, c) = self.pat(a, side)?;
                                let r = self.inf.need_int(c);
                                self.err(a.span, r)?;
                                if let Some(k) = class {
                                    let r = self.inf.unify(k, c);
                                    self.err(a.span, r)?;
                                }
                                class = Some(c);
                                pats.push(p);
                            }
                            let cl = class.expect("helpers take arguments");
                            return Ok((RawPat::Helper(h, pats), cl));
                        }
                    }
                    match name.as_str() {
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
        })
    }

    /// An interval expression (the argument of `vmin`, `vmax`, `fits`) and
    /// its type class.
    fn iexpr(&mut self, e: &Ast, class: &mut Option<usize>) -> PResult<RawIExpr> {
        crate::deep::grow(|| {
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
        })
    }

    /// Whether an expression names a term (not constant) pattern variable.
    fn mentions_term(&self, e: &Ast) -> bool {
        crate::deep::grow(|| match &e.kind {
            AstKind::Name(n) => self.vars.iter().any(|v| v.0 == *n && !v.1),
            AstKind::Unary(_, x) | AstKind::Typed(x, ..) => self.mentions_term(x),
            AstKind::Binary(_, a, b) => self.mentions_term(a) || self.mentions_term(b),
            AstKind::Call { args, .. } => args.iter().any(|a| self.mentions_term(a)),
            AstKind::Int(_) | AstKind::Bool(_) | AstKind::Invalid => false,
        })
    }

    /// An op over argument patterns, typed by its class.
    fn op(&mut self, op: Op, args: &[&Ast], sp: Span, side: Side) -> PResult<(RawPat, usize)> {
        let mut pats = Vec::with_capacity(args.len());
        let mut classes = Vec::with_capacity(args.len());
        for a in args {
            let (p, c) = self.pat(a, side)?;
            pats.push(p);
            classes.push(c);
        }
        let result = match op.class() {
            Class::Logic => {
                for &c in &classes {
                    let r = self.inf.need(c, DType::Bool);
                    self.err(sp, r)?;
                }
                classes[0]
            }
            Class::Arith | Class::Compare => {
                for &c in &classes {
                    let r = self.inf.need_int(c);
                    self.err(sp, r)?;
                    let r = self.inf.unify(classes[0], c);
                    self.err(sp, r)?;
                }
                if op.class() == Class::Compare {
                    self.inf.fixed(DType::Bool)
                } else {
                    classes[0]
                }
            }
            Class::Select => {
                let r = self.inf.need(classes[0], DType::Bool);
                self.err(args[0].span, r)?;
                let r = self.inf.unify(classes[1], classes[2]);
                self.err(sp, r)?;
                classes[1]
            }
            Class::Cast | Class::Leaf => unreachable!("casts and leaves are read elsewhere"),
        };
        Ok((RawPat::Op(op, result, pats), result))
    }

    /// Reads a guard expression; returns it and whether it is a condition.
    fn guard(&mut self, e: &Ast) -> PResult<(RawGuard, bool)> {
        crate::deep::grow(|| {
            let sp = e.span;
            let (int, cond) = (guard_number, guard_condition);
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
                AstKind::Binary(op, _, _) if op.is_shift() || *op == Op::BitAnd => {
                    Err(ParseError::new(
                        sp,
                        format!("`{}` is not allowed in a guard", op.infix().unwrap_or("")),
                    ))
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
                AstKind::Call { name, ty, args } => self.guard_call(sp, name, ty.is_some(), args),
            }
        })
    }

    /// Reads a guard's call `n(args)` (`typed`: it has type parameters).
    fn guard_call(
        &mut self,
        sp: Span,
        n: &str,
        typed: bool,
        args: &[Ast],
    ) -> PResult<(RawGuard, bool)> {
        let int = guard_number;
        let want = |k: usize| -> PResult<()> {
            if args.len() == k {
                Ok(())
            } else {
                Err(ParseError::new(
                    sp,
                    format!("`{n}` takes {}", crate::text::print::count(k, "argument")),
                ))
            }
        };
        if typed {
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
                    AstKind::Name(v) if n != "fits" => self.vars.iter().position(|x| x.0 == *v),
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
            _ if Helper::by_name(n).is_some() => {
                let h = Helper::by_name(n).expect("checked");
                want(h.arity())?;
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(int(self.guard(a)?, a.span)?);
                }
                Ok((RawGuard::Call(h, vals), h.is_condition()))
            }
            _ if Op::by_call(n).is_some_and(|op| op.is_divmod()) => {
                let op = Op::by_call(n).expect("checked");
                want(2)?;
                let x = int(self.guard(&args[0])?, args[0].span)?;
                let y = int(self.guard(&args[1])?, args[1].span)?;
                Ok((RawGuard::Bin(op, Box::new(x), Box::new(y)), false))
            }
            _ => Err(ParseError::new(sp, format!("unknown guard helper `{n}`"))),
        }
    }
}

/// A guard read where a number is expected.
fn guard_number(g: (RawGuard, bool), s: Span) -> PResult<RawGuard> {
    if g.1 {
        Err(ParseError::new(s, "expected a number, found a condition"))
    } else {
        Ok(g.0)
    }
}

/// A guard read where a condition is expected.
fn guard_condition(g: (RawGuard, bool), s: Span) -> PResult<RawGuard> {
    if g.1 {
        Ok(g.0)
    } else {
        Err(ParseError::new(s, "expected a condition, found a number"))
    }
}
