//! The printer: writes nodes in input syntax, with the fewest parentheses
//! the parser needs to read the same node back.

use crate::ir::op::{Level, Syntax};
use crate::ir::{DType, Graph, NodeId, Op};
use crate::meaning::domain::{self, Constraint};
use std::fmt::Write;

/// Binding strength of a node's op when printed: its infix level, prefix,
/// or atomic (a leaf, a call, a cast).
pub fn precedence(op: Op) -> Level {
    op.level()
}

/// Prints one node as an expression.
pub fn expr(g: &Graph, id: NodeId) -> String {
    let mut s = String::new();
    write_expr(g, id, &mut s, usize::MAX);
    s
}

/// [`expr`] cut to `max` characters (the last three `...` when it is
/// cut), in time bounded by `max`, not by the expression's size: for
/// listing the nodes of a large graph, one line each.
pub fn expr_short(g: &Graph, id: NodeId, max: usize) -> String {
    let mut s = String::new();
    write_expr(g, id, &mut s, 2 * max);
    if s.chars().count() <= max {
        s
    } else {
        let cut: String = s.chars().take(max.saturating_sub(3)).collect();
        format!("{cut}...")
    }
}

/// What is left to write: a node, or text between nodes.
enum Piece {
    Node(NodeId),
    Text(&'static str),
}

/// Writes with its own stack (pieces pushed in reverse), so the depth of
/// an expression is not limited by the thread's stack.
fn write_expr(g: &Graph, id: NodeId, out: &mut String, max: usize) {
    let mut todo = vec![Piece::Node(id)];
    // Pushes `id`, parenthesized if asked.
    let wrap = |todo: &mut Vec<Piece>, id: NodeId, parens: bool| {
        if parens {
            todo.push(Piece::Text(")"));
        }
        todo.push(Piece::Node(id));
        if parens {
            todo.push(Piece::Text("("));
        }
    };
    while let Some(piece) = todo.pop() {
        if out.len() > max {
            return;
        }
        let id = match piece {
            Piece::Text(t) => {
                out.push_str(t);
                continue;
            }
            Piece::Node(id) => id,
        };
        let n = g.node(id);
        let src = n.src();
        match n.op.info().syntax {
            Syntax::Leaf => match n.op {
                Op::Const(c) => match n.dtype {
                    DType::Bool => out.push_str(if c != 0 { "true" } else { "false" }),
                    DType::Index => {
                        let _ = write!(out, "{c}");
                    }
                    // A constant of a concrete dtype says so: `i32(5)` reads
                    // back as that constant (a bare literal would read back
                    // as index).
                    dt => {
                        let _ = write!(out, "{dt}({c})");
                    }
                },
                Op::Var(v) => out.push_str(&g.var(v).name),
                _ => out.push_str(n.op.name()),
            },
            Syntax::Prefix(token) => {
                out.push_str(token);
                let c = g.node(src[0]);
                // A literal right after `-` would read back as a negative
                // constant, and `--x` is easy to misread: parenthesize both.
                let atomic = c.op.level() == Level::Atom && !matches!(c.op, Op::Const(_));
                wrap(&mut todo, src[0], !atomic);
            }
            Syntax::Cast => {
                let _ = write!(out, "{}", n.dtype);
                let c = g.node(src[0]);
                match c.as_const() {
                    // `i32(5)` is the i32 constant 5, so a cast of the index
                    // constant 5 is written `i32(index(5))`.
                    Some(v) if c.dtype == DType::Index => {
                        let _ = write!(out, "(index({v}))");
                    }
                    _ => wrap(&mut todo, src[0], true),
                }
            }
            Syntax::Call(name) => {
                out.push_str(name);
                out.push('(');
                todo.push(Piece::Text(")"));
                for (i, &s) in src.iter().enumerate().rev() {
                    todo.push(Piece::Node(s));
                    if i > 0 {
                        todo.push(Piece::Text(", "));
                    }
                }
            }
            Syntax::Infix(token, level) => {
                let (a, b) = (src[0], src[1]);
                wrap(&mut todo, b, g.node(b).op.level() <= level);
                todo.push(Piece::Text(" "));
                todo.push(Piece::Text(token));
                todo.push(Piece::Text(" "));
                wrap(&mut todo, a, g.node(a).op.level() < level);
            }
        }
    }
}

/// Prints a program: its variable declarations and one `expr` line per root.
pub fn program(g: &Graph, roots: &[NodeId]) -> String {
    let mut out = String::new();
    let used = g.reachable_vars(roots);
    for (v, d) in g.vars().iter().enumerate() {
        if !used.contains(&(v as u32)) {
            continue;
        }
        out.push_str(&var_decl(d));
        out.push('\n');
    }
    for &r in roots {
        let _ = writeln!(out, "expr {}", expr(g, r));
    }
    out
}

/// The lines `simplify` prints for `roots` of a program that declared the
/// constraints `declared`: read back as `constraint` lines (in the declared
/// order, then any new ones) and `expr` lines of the results
/// ([`domain::split`]) when the program had constraints and the roots are
/// results over one domain; else one `expr` line per root as it is (a
/// `where(C, E, invalid)` reads back with the same meaning).
pub fn result_lines(g: &mut Graph, roots: &[NodeId], declared: &[Constraint]) -> String {
    let mut out = String::new();
    let split = (!declared.is_empty())
        .then(|| domain::split(g, roots, declared).ok())
        .flatten();
    match split {
        Some(domain::Split::Map {
            constraints,
            results,
        }) => {
            for c in &constraints {
                let _ = writeln!(
                    out,
                    "constraint {} in [{}, {}]",
                    expr(g, c.expr),
                    c.lo,
                    c.hi
                );
            }
            for &r in &results {
                let _ = writeln!(out, "expr {}", expr(g, r));
            }
        }
        _ => {
            for &r in roots {
                let _ = writeln!(out, "expr {}", expr(g, r));
            }
        }
    }
    out
}

/// One `var` line.
pub fn var_decl(d: &crate::ir::VarDecl) -> String {
    match d.dtype {
        DType::Index => format!("var {} in [{}, {}]", d.name, d.lo, d.hi),
        DType::Bool if d.lo == 0 && d.hi == 1 => format!("var {}: bool", d.name),
        t => format!("var {}: {} in [{}, {}]", d.name, t, d.lo, d.hi),
    }
}

/// `n` and a regular English noun, singular for one (`1 rule`, `2 rules`):
/// every count tileproof prints goes through here.
pub fn count<N: TryInto<u128> + Copy + std::fmt::Display>(n: N, noun: &str) -> String {
    if n.try_into().ok() == Some(1) {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A variable's value as the input syntax writes it: `true`/`false` for a
/// bool, the number otherwise.
pub fn value(dtype: crate::ir::dtype::DType, v: i128) -> String {
    if dtype == crate::ir::dtype::DType::Bool {
        (v != 0).to_string()
    } else {
        v.to_string()
    }
}

/// A point as the input syntax writes it, `x = 3, c = true` (each value
/// printed by [`value`] under its variable's dtype in `g`), or `the only
/// point` for a domain without variables: every point line tileproof
/// prints goes through here.
pub fn point<V: Copy + Into<i128>>(g: &Graph, point: &[(String, V)]) -> String {
    if point.is_empty() {
        return "the only point".to_string();
    }
    point
        .iter()
        .map(|(name, v)| {
            let dtype = g
                .vars()
                .iter()
                .find(|d| d.name == *name)
                .map_or(DType::Index, |d| d.dtype);
            format!("{name} = {}", value(dtype, (*v).into()))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_of_one_is_singular() {
        assert_eq!(count(1usize, "rule"), "1 rule");
        assert_eq!(count(0u64, "point"), "0 points");
        assert_eq!(count(2u32, "width"), "2 widths");
    }
}
