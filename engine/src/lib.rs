//! The tileproof engine: a tensor-compiler index-arithmetic simplifier.
//!
//! Text flows one way: [`parse`] builds nodes in a hash-consed [`ir::Graph`]
//! (each node gets its value range from [`ranges`] when built), [`rewrite`]
//! applies the declarative rules of [`rules`] to a fixed point, and
//! [`print`] writes the result back in input syntax. [`interp`] is the
//! definition of the semantics that everything else is checked against.
//!
//! The engine knows nothing of Z3 or Cranelift.

pub mod divmod;
pub mod interp;
pub mod ir;
pub mod lower;
pub mod parse;
pub mod print;
pub mod ranges;
pub mod rewrite;
pub mod rules;
pub mod xla;
