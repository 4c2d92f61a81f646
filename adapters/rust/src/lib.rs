//! Write a tileproof peer adapter in Rust (docs/protocol.md).
//!
//! tileproof checks a simplifier it talks to over a line protocol: the
//! adapter writes a hello, then answers one JSON request per line. This
//! crate is that protocol for a simplifier written in Rust: the request's
//! case ([`Case`], [`Tree`]), the hello ([`Hello`], [`Profile`]), the
//! answers, and a serve loop ([`serve`]) over the [`Adapter`] trait that
//! catches the peer's panics and turns them into `error` answers. It knows
//! nothing of tileproof's engine, Z3 or Cranelift: an adapter depends on
//! this crate and its compiler only.
//!
//! ```no_run
//! use tileproof_adapter::*;
//!
//! struct Toy;
//! impl Adapter for Toy {
//!     fn hello(&self) -> Hello {
//!         Hello {
//!             name: "toy".into(), version: "1.0".into(),
//!             profile: Profile { ops: vec!["add", "mul"], invalid: false, integers: Integers::Int64,
//!                                bool_vars: false, partial_ops: PartialOps::Undefined, invalid_compared: true },
//!             backends: vec![], reproducer: false, rules: false, bounds: false,
//!         }
//!     }
//!     fn simplify(&mut self, case: &Case) -> Result<Simplified, Refuse> {
//!         Ok(Simplified::trees(case.trees.clone()))
//!     }
//! }
//! fn main() -> std::io::Result<()> { serve(Toy) }
//! ```

mod answer;
mod case;
pub mod child;
mod hello;
mod serve;

pub use answer::{
    Bound, Bounds, Exprs, Instances, InstancesRequest, Instantiable, PointRun, Refuse,
    ReproducerRequest, RuleInfo, Run, RunRequest, RunValue, Script, Simplified,
};
pub use case::{BadRequest, Case, Dtype, Tree, Var, VarDtype, MAX_DEPTH};
pub use hello::{Hello, Integers, PartialOps, Profile};
pub use serve::{answer_line, serve, serve_on, Adapter};

/// The protocol version this crate speaks.
pub const PROTOCOL: u64 = 1;
