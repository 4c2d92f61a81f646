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
pub mod divmod;
pub mod dtype;
pub mod facts;
pub mod interp;
pub mod ir;
pub mod linear;
pub mod lower;
pub mod minmax;
pub mod op;
pub mod parse;
pub mod print;
pub mod ranges;
pub mod rewrite;
pub mod rules;
pub mod semantics;
pub mod xla;
