//! XLA indexing maps as input and output (seed 002 §4.1):
//!
//! ```text
//! (d0, d1)[s0]{rt0} -> (d0 floordiv 8, d0 mod 8 + s0),
//! domain:
//! d0 in [0, 31],
//! d1 in [0, 2],
//! s0 in [0, 3],
//! rt0 in [0, 226]
//! ```
//!
//! Dimension (`d`), range (`s`) and runtime (`rt`) variables all become
//! index variables with their domain bounds, declared in that order; each
//! result is one root. `floordiv`, `ceildiv` and `mod` have XLA's floor
//! semantics, which are the engine's. Also accepted, as the documentation
//! writes them: `floorDiv`/`ceilDiv` in any case and implicit
//! multiplication by a literal (`100d0`). Trailing commas are optional.
//! Constraint lines (`d1 mod 2 in [0, 0]`) cut the domain: each result is
//! put under the domain's membership predicate (docs/semantics.md,
//! "Domains"). A map no point of whose box meets its constraints, or with
//! a variable whose range is empty, is XLA's known-empty map: it prints as
//! `KNOWN EMPTY`.

use crate::ir::op::Level;
use crate::ir::ranges::{transfer, Range};
use crate::ir::{DType, Graph, NodeId, Op};
use crate::meaning::domain::{split, Constraint, Split, SplitError};
use crate::text::parse::{
    build, gate_roots, interval_i64, lex_line, parse_constraint, Ast, AstKind, Cursor, PResult,
    ParseError, Program, Span, Tok,
};
use std::fmt::Write;

/// A parsed map: the program (graph and one root per result) and the
/// variables by kind, for printing back.
#[derive(Clone)]
pub struct XlaMap {
    pub program: Program,
    pub dims: Vec<String>,
    pub syms: Vec<String>,
    pub rts: Vec<String>,
}

/// Whether a text looks like an indexing map: its first line that is not
/// blank or a comment starts with `(` and maps to something (`->`). The
/// text format has no line of that shape, so the two never overlap.
pub fn looks_like_map(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .is_some_and(|l| l.starts_with('(') && l.contains("->"))
}

/// Lexes one line of a map: the engine's tokens, with `floorDiv`-style
/// spellings folded and `100d0` read as `100 * d0` (spans stay those of the
/// original text).
fn lex(text: &str, line: u32) -> PResult<Vec<(Tok, Span)>> {
    // Insert `*` between a digit and a letter; remember where, so that
    // columns after it are reported as written.
    let mut fixed = String::with_capacity(text.len() + 8);
    let mut inserted: Vec<u32> = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        fixed.push(c);
        if c.is_ascii_digit() && chars.get(i + 1).is_some_and(|n| n.is_alphabetic()) {
            // Only for a number that starts a token (not the `0` of `d0`).
            let mut j = i;
            while j > 0 && chars[j - 1].is_ascii_digit() {
                j -= 1;
            }
            if j == 0 || !(chars[j - 1].is_alphanumeric() || chars[j - 1] == '_') {
                fixed.push('*');
                inserted.push(fixed.chars().count() as u32);
            }
        }
    }
    let orig_col = |col: u32| col - inserted.iter().filter(|&&k| k < col).count() as u32;
    let toks = lex_line(&fixed, line).map_err(|mut e| {
        e.span.col = orig_col(e.span.col);
        e
    })?;
    Ok(toks
        .into_iter()
        .map(|(t, mut sp)| {
            sp.col = orig_col(sp.col);
            // XLA's word spellings in any case (`floorDiv`), as the table
            // writes them.
            let t = match t {
                Tok::Ident(s) => match Op::all()
                    .filter_map(|op| op.info().xla)
                    .find(|x| x.eq_ignore_ascii_case(&s))
                {
                    Some(x) => Tok::Ident(x.to_string()),
                    None => Tok::Ident(s),
                },
                t => t,
            };
            (t, sp)
        })
        .collect())
}

/// `name, name, ...` up to `close` (already past the opening bracket).
fn names(c: &mut Cursor, close: &str) -> PResult<Vec<(String, Span)>> {
    let mut out = Vec::new();
    if c.eat_punct(close) {
        return Ok(out);
    }
    loop {
        out.push(c.name("a variable name")?);
        if c.eat_punct(close) {
            return Ok(out);
        }
        c.expect_punct(",")?;
    }
}

/// Parses a map. Errors carry the line and column of the original text.
pub fn parse_map(text: &str) -> PResult<XlaMap> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i as u32 + 1, l))
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    let Some((hline, htext)) = lines.next() else {
        return Err(ParseError::new(
            Span { line: 1, col: 1 },
            "empty indexing map",
        ));
    };
    let mut c = Cursor::new(lex(htext, hline)?);
    c.expect_punct("(")?;
    let dims = names(&mut c, ")")?;
    let syms = if c.eat_punct("[") {
        names(&mut c, "]")?
    } else {
        Vec::new()
    };
    let rts = if c.eat_punct("{") {
        names(&mut c, "}")?
    } else {
        Vec::new()
    };
    c.expect_punct("->")?;
    let open = c.expect_punct("(")?;
    let mut results: Vec<Ast> = Vec::new();
    if c.eat_punct(")") {
        // As a text file needs an `expr` line: a program has a root.
        return Err(ParseError::new(
            open,
            "an indexing map with no results: nothing to simplify",
        ));
    } else {
        loop {
            results.push(c.expr()?);
            if c.eat_punct(")") {
                break;
            }
            c.expect_punct(",")?;
        }
    }
    c.eat_punct(",");
    c.expect_eol()?;

    // The domain: each variable's bounds, then the constraints (read once
    // the variables are declared).
    let mut bounds: Vec<Bounds> = Vec::new();
    let mut constraint_lines: Vec<Cursor> = Vec::new();
    let mut saw_domain = false;
    for (line, ltext) in lines {
        let mut c = Cursor::new(lex(ltext, line)?);
        if !saw_domain {
            c.expect_ident("domain")?;
            c.expect_punct(":")?;
            c.expect_eol()?;
            saw_domain = true;
            continue;
        }
        // XLA's own printer ends a map with whether it was simplified.
        if matches!(c.peek(), Tok::Ident(s) if s == "is_simplified")
            && matches!(c.peek_at(1), Tok::Punct(":"))
        {
            continue;
        }
        let is_var =
            matches!(c.peek(), Tok::Ident(_)) && matches!(c.peek_at(1), Tok::Ident(s) if s == "in");
        if !is_var {
            constraint_lines.push(c);
            continue;
        }
        if let Some(first) = constraint_lines.first() {
            return Err(ParseError::new(
                first.span(),
                "a constraint comes after the variables' bounds",
            ));
        }
        let (name, nspan) = c.name("a variable name")?;
        let ((lo, _), (hi, _)) = c.interval()?;
        c.eat_punct(",");
        c.expect_eol()?;
        bounds.push((name, nspan, lo, hi));
    }

    let (mut g, infeasible) = declare_vars(dims.iter().chain(&syms).chain(&rts), &bounds)?;
    let mut outputs = Vec::new();
    for e in &results {
        only_xla_ops(e)?;
        outputs.push(build(&mut g, e)?);
    }
    let mut constraints = Vec::new();
    let mut first_span = None;
    for mut c in constraint_lines {
        let (k, span) = parse_constraint(&mut c, &mut g, only_xla_ops)?;
        c.eat_punct(",");
        c.expect_eol()?;
        constraints.push(k);
        first_span.get_or_insert(span);
    }
    if let Some(span) = infeasible {
        let zero = g.cnst(0, DType::Index);
        constraints.push(Constraint {
            expr: zero,
            lo: 1,
            hi: 1,
        });
        first_span.get_or_insert(span);
    }
    if let Some(span) = first_span {
        outputs = gate_roots(&mut g, &constraints, &outputs, span)?;
    }
    let s = |v: &Vec<(String, Span)>| v.iter().map(|x| x.0.clone()).collect();
    Ok(XlaMap {
        program: Program::of_results(g, outputs, constraints),
        dims: s(&dims),
        syms: s(&syms),
        rts: s(&rts),
    })
}

/// A variable's bounds as a domain line gives them: its name, the line's
/// span, and the bounds as written.
type Bounds = (String, Span, i128, i128);

/// A graph with the map's variables (`names`, in order) declared at their
/// bounds, each given once; and the span of the first variable with no
/// value (`d0 in [0, -1]`), which makes the map empty, as XLA reads it
/// (KNOWN EMPTY): that variable is declared at its lower bound, and the
/// caller adds a constraint no point meets.
fn declare_vars<'a>(
    names: impl Iterator<Item = &'a (String, Span)>,
    bounds: &[Bounds],
) -> PResult<(Graph, Option<Span>)> {
    let mut g = Graph::new();
    let mut infeasible: Option<Span> = None;
    for (name, span) in names {
        let found: Vec<&Bounds> = bounds.iter().filter(|b| &b.0 == name).collect();
        let Some(&&(_, bspan, lo, hi)) = found.first() else {
            return Err(ParseError::new(
                *span,
                format!("`{name}` has no bounds in the domain"),
            ));
        };
        if found.len() > 1 {
            return Err(ParseError::new(
                found[1].1,
                format!("`{name}` is bounded twice"),
            ));
        }
        let hi = if lo > hi {
            infeasible.get_or_insert(bspan);
            lo
        } else {
            hi
        };
        let (lo, hi) = interval_i64(lo, hi, bspan, &format!("`{name}`"))?;
        g.declare_var(name, DType::Index, lo, hi)
            .map_err(|e| ParseError::new(*span, e.0))?;
    }
    if let Some(b) = bounds.iter().find(|b| g.var_named(&b.0).is_none()) {
        return Err(ParseError::new(
            b.1,
            format!("`{}` is not a variable of the map", b.0),
        ));
    }
    Ok((g, infeasible))
}

/// An indexing map has only the ops with an XLA spelling (`+ - *
/// floordiv ceildiv mod`).
fn only_xla_ops(e: &Ast) -> PResult<()> {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        let op = match &e.kind {
            AstKind::Unary(op, x) => {
                stack.push(x);
                Some(*op)
            }
            AstKind::Binary(op, a, b) => {
                stack.push(a);
                stack.push(b);
                Some(*op)
            }
            AstKind::Call { name, args, .. } => {
                stack.extend(args);
                match Op::by_call(name) {
                    Some(op) => Some(op),
                    None => {
                        return Err(ParseError::new(
                            e.span,
                            format!("`{name}` is not an indexing-map operation"),
                        ))
                    }
                }
            }
            AstKind::Int(_) | AstKind::Name(_) => None,
            _ => return Err(ParseError::new(e.span, "not allowed in an indexing map")),
        };
        if let Some(op) = op.filter(|op| op.info().xla.is_none()) {
            return Err(ParseError::new(
                e.span,
                format!("`{}` has no indexing-map spelling", op.name()),
            ));
        }
    }
    Ok(())
}

/// Prints one expression in XLA's syntax; `None` for an op XLA's maps do
/// not have (the table's ops without an XLA spelling: truncating division,
/// min/max, comparisons, where, casts, ...).
pub fn expr(g: &Graph, id: NodeId) -> Option<String> {
    let n = g.node(id);
    let src = n.src();
    let wrap = |x: NodeId, parens: bool| -> Option<String> {
        let s = expr(g, x)?;
        Some(if parens { format!("({s})") } else { s })
    };
    Some(match n.op {
        Op::Const(c) if n.dtype == DType::Index => c.to_string(),
        Op::Var(v) => g.var(v).name.clone(),
        op => {
            let spelling = op.info().xla?;
            let level = op.level();
            if op.arity() == 1 {
                let child = g.node(src[0]);
                let atomic = child.op.level() == Level::Atom && child.as_const().is_none();
                format!("{spelling}{}", wrap(src[0], !atomic)?)
            } else if op == Op::Add
                && g.node(src[1])
                    .as_const()
                    .is_some_and(|c| c < 0 && c > i64::MIN)
            {
                // `x + (-3)` as XLA prints it: `x - 3`.
                let c = -g.node(src[1]).as_const().expect("a constant");
                format!("{} - {c}", wrap(src[0], g.node(src[0]).op.level() < level)?)
            } else {
                let l = wrap(src[0], g.node(src[0]).op.level() < level)?;
                // A negative literal on the right of `+`/`-` reads back, but
                // `x - -3` is clearer as `x - (-3)`.
                let r_node = g.node(src[1]);
                let r_paren =
                    r_node.op.level() <= level || r_node.as_const().is_some_and(|c| c < 0);
                let r = wrap(src[1], r_paren)?;
                format!("{l} {spelling} {r}")
            }
        }
    })
}

/// Why a program cannot be printed as a map.
#[derive(Debug, thiserror::Error)]
pub enum PrintError {
    /// A result or constraint that XLA's indexing-map syntax cannot say (a
    /// `where`, a comparison, `invalid`, a truncating division...), printed
    /// in tileproof's text format.
    #[error("`{0}` has no XLA indexing-map syntax")]
    NoXlaSyntax(String),
    /// The results are not valid on one domain cut by constraints.
    #[error(transparent)]
    NotOneDomain(#[from] SplitError),
}

/// A map as printed: its text, or XLA's answer for a map no point of whose
/// box meets its constraints (`IndexingMap::GetKnownEmpty`), which is an
/// answer, not an error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Printed {
    Map(String),
    KnownEmpty,
}

impl Printed {
    /// XLA's printed form of an empty map.
    pub const KNOWN_EMPTY: &'static str = "KNOWN EMPTY";

    /// What is printed: the map, or `KNOWN EMPTY` on a line.
    pub fn text(&self) -> String {
        match self {
            Printed::Map(s) => s.clone(),
            Printed::KnownEmpty => format!("{}\n", Self::KNOWN_EMPTY),
        }
    }

    /// Why the map is empty, for a message beside the answer.
    pub const EMPTY_REASON: &'static str =
        "the map is known empty: no point of its box meets its constraints";
}

/// Prints a map with `roots` as its results, in XLA's printed syntax: the
/// roots are read back as results and constraints
/// ([`crate::meaning::domain::split`], which may build a node for a
/// comparison of two expressions), the constraints in the order the map
/// declared them, then any new ones. A constraint on one variable is its
/// range, as XLA writes it; a variable's range ends at values its
/// remainder constraints allow (`d0 mod 8 in [0, 0]` with `d0` in `[0, 9]`
/// is `d0 in [0, 8]`), and a constraint the printed ranges imply is not
/// printed: the same points, in XLA's form.
pub fn print_map(m: &mut XlaMap, roots: &[NodeId]) -> Result<Printed, PrintError> {
    let declared = m.program.constraints.clone();
    let (constraints, results) = match split(&mut m.program.graph, roots, &declared)? {
        Split::Map {
            constraints,
            results,
        } => (constraints, results),
        Split::Empty => return Ok(Printed::KnownEmpty),
    };
    let g = &m.program.graph;
    let say = |n: NodeId| {
        expr(g, n).ok_or_else(|| PrintError::NoXlaSyntax(crate::text::print::expr(g, n)))
    };
    let mut out = String::new();
    let _ = write!(out, "({})", m.dims.join(", "));
    if !m.syms.is_empty() {
        let _ = write!(out, "[{}]", m.syms.join(", "));
    }
    if !m.rts.is_empty() {
        let _ = write!(out, "{{{}}}", m.rts.join(", "));
    }
    let mut res = Vec::new();
    for &r in &results {
        res.push(say(r)?);
    }
    let _ = writeln!(out, " -> ({}),", res.join(", "));
    out.push_str("domain:\n");
    let mut lines = Vec::new();
    let mut implied: Vec<NodeId> = Vec::new();
    // Each variable's range as printed (narrowed), for the constraints
    // those ranges imply.
    let mut boxed: Vec<Range> = g
        .vars()
        .iter()
        .map(|d| Range::new(d.lo.into(), d.hi.into()))
        .collect();
    for name in m.dims.iter().chain(&m.syms).chain(&m.rts) {
        let v = g.var_named(name).expect("declared by parse_map");
        let d = g.var(v);
        let (mut lo, mut hi) = (i128::from(d.lo), i128::from(d.hi));
        for c in constraints
            .iter()
            .filter(|c| g.node(c.expr).op == Op::Var(v))
        {
            lo = lo.max(c.lo.into());
            hi = hi.min(c.hi.into());
        }
        for c in &constraints {
            let Some((_, k)) = residue_of(g, c.expr).filter(|r| r.0 == v) else {
                continue;
            };
            let (a, b) = (i128::from(c.lo).max(0), i128::from(c.hi).min(k - 1));
            if a > b {
                return Ok(Printed::KnownEmpty);
            }
            let (up, down, holds) = crate::ir::arith::ends_with_residue(lo, hi, k, a, b);
            (lo, hi) = (up, down);
            if holds {
                implied.push(c.expr);
            }
        }
        if lo > hi {
            return Ok(Printed::KnownEmpty);
        }
        boxed[v as usize] = Range::new(lo, hi);
        lines.push(format!("{name} in [{lo}, {hi}]"));
    }
    for c in constraints
        .iter()
        .filter(|c| !matches!(g.node(c.expr).op, Op::Var(_)) && !implied.contains(&c.expr))
    {
        // A constraint the printed ranges imply (XLA removes it once a
        // variable's range is narrowed) is the same points without it;
        // one they contradict leaves no point.
        if let Some(r) = range_over(g, c.expr, &boxed) {
            let (lo, hi) = (i128::from(c.lo), i128::from(c.hi));
            if lo <= r.lo && r.hi <= hi {
                continue;
            }
            if r.hi < lo || hi < r.lo {
                return Ok(Printed::KnownEmpty);
            }
        }
        lines.push(format!("{} in [{}, {}]", say(c.expr)?, c.lo, c.hi));
    }
    let _ = writeln!(out, "{}", lines.join(",\n"));
    Ok(Printed::Map(out))
}

/// The range of `e` by interval arithmetic over the variables' ranges
/// `boxed` (indexed like the graph's variables); `None` where a node has
/// no transfer to compute it by (a comparison, a cast) or its range is
/// empty.
fn range_over(g: &Graph, e: NodeId, boxed: &[Range]) -> Option<Range> {
    let mut nodes = g.reachable(&[e]);
    // Operands are built before what uses them.
    nodes.sort_unstable();
    let mut at: rustc_hash::FxHashMap<NodeId, Range> = Default::default();
    for id in nodes {
        let n = g.node(id);
        let r = match n.op {
            Op::Var(v) => boxed[v as usize],
            Op::Const(c) => Range::point(c.into()),
            op if op.level() != Level::Atom && op.info().xla.is_some() => {
                let args: Option<Vec<Range>> = n.src().iter().map(|s| at.get(s).copied()).collect();
                transfer(op, &args?)
            }
            _ => return None,
        };
        if r.lo > r.hi {
            return None;
        }
        at.insert(id, r);
    }
    at.get(&e).copied()
}

/// `v mod k` for a variable `v` and a constant `k > 0`: `(v, k)`.
fn residue_of(g: &Graph, e: NodeId) -> Option<(u32, i128)> {
    let n = g.node(e);
    let (Op::Mod, &[x, k]) = (n.op, n.src()) else {
        return None;
    };
    let Op::Var(v) = g.node(x).op else {
        return None;
    };
    let k = g.node(k).as_const().filter(|&k| k > 0)?;
    Some((v, k.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_printed_syntax_reads_back() {
        let mut m = parse_map(
            "(d0, d1)[s0] -> (d0 floordiv 8, d0 mod 8 + s0 * 4),\ndomain:\nd0 in [0, 31],\nd1 in [0, 2],\ns0 in [0, 3]\n",
        )
        .unwrap();
        assert_eq!(m.dims, ["d0", "d1"]);
        assert_eq!(m.syms, ["s0"]);
        let roots = m.program.outputs.clone();
        let text = print_map(&mut m, &roots).unwrap().text();
        assert_eq!(
            text,
            "(d0, d1)[s0] -> (d0 floordiv 8, d0 mod 8 + s0 * 4),\ndomain:\nd0 in [0, 31],\nd1 in [0, 2],\ns0 in [0, 3]\n"
        );
        let mut again = parse_map(&text).unwrap();
        let roots = again.program.outputs.clone();
        assert_eq!(print_map(&mut again, &roots).unwrap().text(), text);
    }

    #[test]
    fn constraints_read_and_print_back_as_xla_writes_them() {
        let text = "(d0, d1)[s0] -> (d0 floordiv 7, d1 + s0),\ndomain:\nd0 in [3, 42],\nd1 in [0, 9],\ns0 in [0, 3],\n(d0 - 3) mod 7 in [0, 0],\nd1 + s0 in [0, 10]\n";
        let mut m = parse_map(&format!("{text}is_simplified: false\n")).unwrap();
        assert_eq!(m.program.constraints.len(), 2);
        let g = &m.program.graph;
        // Each result is under the domain's membership predicate.
        assert_eq!(
            crate::text::print::expr(g, m.program.outputs[0]),
            "where((d0 - 3) mod 7 == 0 && (d1 + s0 <= 10 && 0 <= d1 + s0), d0 // 7, invalid)"
        );
        let roots = m.program.outputs.clone();
        let printed = print_map(&mut m, &roots).unwrap().text();
        assert_eq!(printed, text);
        let mut again = parse_map(&printed).unwrap();
        let roots = again.program.outputs.clone();
        assert_eq!(print_map(&mut again, &roots).unwrap().text(), text);
    }

    #[test]
    fn documentation_spellings_are_accepted() {
        let m = parse_map(
            "(d0, d1) -> ((100d0 + 10d1) floorDiv 100)\ndomain:\nd0 in [0, 9]\nd1 in [0, 9]\n",
        )
        .unwrap();
        let g = &m.program.graph;
        assert_eq!(
            crate::text::print::expr(g, m.program.outputs[0]),
            "(d0 * 100 + d1 * 10) // 100"
        );
    }

    #[test]
    fn errors_have_the_line_and_column_of_the_text() {
        let e = |t: &str| parse_map(t).err().map(|e| (e.span.line, e.span.col));
        // a missing bound
        assert_eq!(e("(d0, d1) -> (d0)\ndomain:\nd0 in [0, 3]\n"), Some((1, 6)));
        // a constraint before a variable's bounds
        assert_eq!(
            e("(d0, d1) -> (d0)\ndomain:\nd0 in [0, 3],\nd0 mod 2 in [0, 0],\nd1 in [0, 1]\n"),
            Some((4, 1))
        );
        // a constraint with an op an indexing map does not have
        assert_eq!(
            e("(d0) -> (d0)\ndomain:\nd0 in [0, 3],\nmin(d0, 2) in [0, 0]\n"),
            Some((4, 1))
        );
        // a constraint without its bounds, or with empty ones
        assert_eq!(
            e("(d0) -> (d0)\ndomain:\nd0 in [0, 3],\nd0 mod 2 in [0]\n"),
            Some((4, 15))
        );
        assert_eq!(
            e("(d0) -> (d0)\ndomain:\nd0 in [0, 3],\nd0 mod 2 in [1, 0]\n"),
            Some((4, 14))
        );
        // an unknown variable in a constraint
        assert_eq!(
            e("(d0) -> (d0)\ndomain:\nd0 in [0, 3],\nd0 + s0 in [0, 0]\n"),
            Some((4, 6))
        );
        // a bad token after implicit multiplication: columns as written
        assert_eq!(
            e("(d0) -> (10d0 $ 1)\ndomain:\nd0 in [0, 3]\n"),
            Some((1, 15))
        );
        // no domain line
        assert_eq!(e("(d0) -> (d0)\nd0 in [0, 3]\n"), Some((2, 1)));
        // no result (what a text file without an `expr` line is)
        assert_eq!(e("() -> ()\n"), Some((1, 7)));
    }
}
