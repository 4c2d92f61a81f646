//! The tileproof engine: a tensor-compiler index-arithmetic simplifier.
//!
//! Text flows one way: [`parse`] builds nodes in a hash-consed [`ir::Graph`]
//! (each node gets its value range from [`ranges`] when built), [`rewrite`]
//! applies the declarative rules of [`rules`] and the algorithmic passes of
//! [`passes`] (computing with [`algebra`]) to a fixed point, and [`print`]
//! writes the result back in input syntax; [`lower`] turns `index` into
//! `i32`/`i64`.
//!
//! Every op is a row of [`op::OPS`]; what it means is [`semantics`], written
//! once over primitives that [`interp`] (the definition, on exact integers)
//! implements here and the verifier and the JIT implement elsewhere.
//!
//! The engine knows nothing of Z3 or Cranelift.

// Layers, bottom to top; a module imports only from its own layer and the
// layers listed before it.
pub mod deep;
pub mod ir;
pub mod smallmap;
pub mod splitmix;
pub mod walk;

pub mod meaning;

pub mod text;

pub mod rules;

pub mod algebra;

pub mod passes;

pub mod compose;
pub mod cycles;
pub mod lower;
pub mod rewrite;

// The crates above the engine name each module by its concept
// (`engine::parse`, `engine::dtype`), whatever layer holds it.
pub use ir::{arith, dtype, op, ranges, truediv};
pub use meaning::{domain, interp, semantics};
pub use text::{input, parse, print, suite, xla};

/// What the unit tests of the rewrites share.
#[cfg(test)]
pub(crate) mod testing {
    use crate::ir::dtype::Width;
    use crate::meaning::interp::first_failure;
    use crate::rules::builtin;
    use crate::text::parse::parse_program;
    use crate::text::print;

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
