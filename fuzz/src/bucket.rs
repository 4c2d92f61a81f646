//! The shape of a case, names and constants abstracted: what a finding
//! nothing more precise can be said of is filed under
//! ([`crate::cause::Cause::Shape`]), what the innermost subterm a peer gets
//! wrong is keyed by, its linear forms abstracted too
//! ([`crate::cause::Cause::Subterm`]), and how the distinct answers of a
//! peer are counted. Abstracting constants makes `x >> 64` and `x >> 70`
//! one shape.

use engine::ir::{Graph, NodeId, Op};
use engine::print;

/// `roots` of `g` printed with variables renamed `v0, v1, ...` in order of
/// first appearance and every integer literal written `C`.
pub fn abstract_shape(g: &Graph, roots: &[NodeId]) -> String {
    let names: Vec<String> = g.vars().iter().map(|d| d.name.clone()).collect();
    let mut renamed: Vec<String> = Vec::new();
    let mut out = String::new();
    for (i, &r) in roots.iter().enumerate() {
        if i > 0 {
            out.push_str("; ");
        }
        let text = print::expr(g, r);
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            if c.is_ascii_alphabetic() || c == '_' {
                let mut word = c.to_string();
                while let Some(&d) = chars.peek() {
                    if d.is_ascii_alphanumeric() || d == '_' {
                        word.push(d);
                        chars.next();
                    } else {
                        break;
                    }
                }
                if names.contains(&word) {
                    let k = match renamed.iter().position(|n| *n == word) {
                        Some(k) => k,
                        None => {
                            renamed.push(word);
                            renamed.len() - 1
                        }
                    };
                    out.push_str(&format!("v{k}"));
                } else {
                    out.push_str(&word);
                }
            } else if c.is_ascii_digit() {
                while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                    chars.next();
                }
                out.push('C');
            } else {
                out.push(c);
            }
        }
    }
    out
}

/// The shape of `root` with every linear form written `L`: a maximal
/// subtree of `+`, `-`, negation and products by a constant over variables,
/// constants and other subterms is `L` when it is over variables and
/// constants alone, else `L[atoms]` (the other subterms' shapes, sorted,
/// each once), and a constant elsewhere is `C`. MLIR's canonicalizer gets
/// `((x*9 + y*3 + z) mod 16 + (x*9 + y*3 + z) // 16 * 16) // 8` wrong in
/// every linear form it meets; this shape, `L[L // C, L mod C] // C`, is
/// one whatever the form. Past `depth` nodes deep, `...`.
pub fn linear_shape(g: &Graph, root: NodeId) -> String {
    linear_shape_within(g, root, 64)
}

fn linear_shape_within(g: &Graph, n: NodeId, depth: usize) -> String {
    if depth == 0 {
        return "...".into();
    }
    let node = g.node(n);
    if is_linear(g, n) || matches!(node.op, Op::Var(_)) {
        let mut atoms: Vec<String> = Vec::new();
        collect_atoms(g, n, depth, &mut atoms);
        atoms.sort();
        atoms.dedup();
        return if atoms.is_empty() {
            "L".into()
        } else {
            format!("L[{}]", atoms.join(", "))
        };
    }
    let args: Vec<String> = node
        .src()
        .iter()
        .map(|&a| {
            let inner = linear_shape_within(g, a, depth - 1);
            let atomic = g.node(a).src().is_empty() || is_linear(g, a);
            if atomic {
                inner
            } else {
                format!("({inner})")
            }
        })
        .collect();
    match (node.op, node.op.infix(), args.as_slice()) {
        (Op::Const(_), _, _) => "C".into(),
        (Op::Invalid, _, _) => "invalid".into(),
        (_, Some(sym), [a, b]) => format!("{a} {sym} {b}"),
        (op, _, args) => format!("{}({})", op.name(), args.join(", ")),
    }
}

/// Whether `n` is a step of a linear form: a sum, a difference, a negation
/// or a product with a constant operand.
fn is_linear(g: &Graph, n: NodeId) -> bool {
    let node = g.node(n);
    let constant = |s: &NodeId| matches!(g.node(*s).op, Op::Const(_));
    match node.op {
        Op::Add | Op::Sub | Op::Neg => node.dtype == engine::ir::DType::Index,
        Op::Mul => node.src().iter().any(constant),
        _ => false,
    }
}

/// The atoms of the linear form at `n`: its leaves that are neither
/// variables nor constants, as shapes.
fn collect_atoms(g: &Graph, n: NodeId, depth: usize, out: &mut Vec<String>) {
    let node = g.node(n);
    match node.op {
        Op::Var(_) | Op::Const(_) => {}
        _ if is_linear(g, n) => {
            for &s in node.src() {
                collect_atoms(g, s, depth, out);
            }
        }
        _ => out.push(linear_shape_within(g, n, depth.saturating_sub(1))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::parse::parse_program;

    fn shape(text: &str) -> String {
        let p = parse_program(text).unwrap();
        abstract_shape(&p.graph, &p.outputs)
    }

    #[test]
    fn names_and_constants_are_abstracted_so_one_cause_is_one_bucket() {
        let a = shape("var r0 in [0, 64]\nexpr where(1 >> r0 == 0, r0, 0)\n");
        let b = shape("var x in [0, 70]\nexpr where(3 >> x == 0, x, 0)\n");
        assert_eq!(a, b);
        assert_eq!(a, "where(C >> v0 == C, v0, C)");
    }

    fn linear(text: &str) -> String {
        let p = parse_program(text).unwrap();
        linear_shape(&p.graph, p.outputs[0])
    }

    #[test]
    fn a_linear_form_is_one_shape_whatever_its_terms() {
        let a = linear(
            "var x in [0, 9]\nvar y in [0, 9]\nvar z in [0, 9]\nexpr ((x * 9 + (y * 3 + z)) mod 16 + (x * 9 + (y * 3 + z)) // 16 * 16) // 8\n",
        );
        let b = linear(
            "var x in [0, 9]\nvar y in [0, 9]\nexpr ((x * 120 + y * 12) mod 120 + (x * 120 + y * 12) // 120 * 120) // 12\n",
        );
        assert_eq!(a, b);
        assert_eq!(a, "L[L // C, L mod C] // C");
        assert_eq!(
            linear("var x in [0, 9]\nexpr x mod 9 // 2\n"),
            "(L mod C) // C"
        );
        assert_ne!(
            linear("var x in [0, 9]\nexpr x mod 9 // 2\n"),
            linear("var x in [0, 9]\nexpr x // 9 mod 2\n")
        );
    }

    #[test]
    fn different_shapes_are_different_buckets() {
        let a = shape("var x in [0, 9]\nexpr x // 3\n");
        let b = shape("var x in [0, 9]\nexpr x mod 3\n");
        assert_ne!(a, b);
        let two = shape("var x in [0, 9]\nvar y in [0, 9]\nexpr y + x\n");
        assert_eq!(two, "v0 + v1");
    }
}
