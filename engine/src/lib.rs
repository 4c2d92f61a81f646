//! The tileproof engine: a tensor-compiler index-arithmetic simplifier.
//!
//! Text flows one way: [`parse`] builds nodes in a hash-consed [`ir::Graph`]
//! (each node gets its value range from [`ranges`] when built), [`rewrite`]
//! applies the declarative rules of [`rules`] (and the algorithmic ones of
//! [`divmod`]) to a fixed point, and [`print`] writes the result back in
//! input syntax; [`lower`] turns `index` into `i32`/`i64`.
//!
//! Every op is a row of [`op::OPS`]; what it means is [`semantics`], written
//! once over primitives that [`interp`] (the definition, on exact integers)
//! implements here and the verifier and the JIT implement elsewhere.
//!
//! The engine knows nothing of Z3 or Cranelift.

pub mod arith;
pub mod compare;
pub mod context;
pub mod deep;
pub mod divmod;
pub mod dtype;
pub mod facts;
pub mod gated;
pub mod input;
pub mod interp;
pub mod ir;
pub mod linear;
pub mod lower;
pub mod minmax;
pub mod op;
pub mod parse;
pub mod print;
pub mod quotient;
pub mod ranges;
pub mod residue;
pub mod rewrite;
pub mod rules;
pub mod semantics;
pub mod symdiv;
pub mod xla;

/// What the unit tests of the rewrites share.
#[cfg(test)]
pub(crate) mod testing {
    use crate::dtype::Width;
    use crate::interp::first_failure;
    use crate::parse::parse_program;
    use crate::print;
    use crate::rules::builtin;

    /// Simplifies `src` (over the variables `vars`) with the whole rewriter,
    /// checks the result against the source over the (small) domain, and
    /// prints it.
    pub fn simp(vars: &str, src: &str) -> String {
        let mut p = parse_program(&format!("{vars}\nexpr {src}\n")).unwrap();
        let root = p.outputs[0];
        let out = crate::rewrite::Simplifier::new(builtin())
            .simplify(&mut p.graph, &[root], false)
            .unwrap()
            .roots[0];
        let g = &p.graph;
        if let Some((point, v)) = first_failure(g, &[root], &[out], Width::W64) {
            panic!("{src} => {} fails at {point:?}: {v:?}", print::expr(g, out));
        }
        print::expr(g, out)
    }
}
