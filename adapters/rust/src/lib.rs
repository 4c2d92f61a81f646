//! Write a tileproof peer adapter in Rust (docs/protocol.md).
//!
//! tileproof checks a simplifier it talks to over a line protocol: the
//! adapter writes a hello, then answers one JSON request per line. This
//! crate is that protocol: its wire types, defined once with serde (the
//! hello: [`Hello`], [`Profile`]; a request: [`Request`], [`Case`],
//! [`Tree`]; an answer: [`Reply`]), which tileproof itself reads and writes
//! too, and for a simplifier written in Rust a serve loop ([`serve`]) over
//! the [`Adapter`] trait that catches the peer's panics and turns them
//! into `error` answers. It knows nothing of tileproof's engine, Z3 or
//! Cranelift: an adapter depends on this crate and its compiler only.
//!
//! ```no_run
//! use tileproof_adapter::*;
//!
//! struct Toy;
//! impl Adapter for Toy {
//!     fn hello(&self) -> Hello {
//!         let profile = Profile {
//!             ops: vec!["add".into(), "mul".into()], invalid: false, integers: Integers::Int64,
//!             bool_vars: false, partial_ops: PartialOps::Undefined,
//!             input_language: InputLanguage::default(),
//!         };
//!         Hello::new("toy", "1.0", profile)
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
mod request;
mod serve;

pub use answer::{
    Bound, Bounds, Exprs, InstanceSource, Instances, Instantiable, Ops, PeerBounds, PointRun,
    Refuse, Reply, RuleInfo, Run, RunValue, Script, Simplified, Translation,
};
pub use case::{BadRequest, Case, Dtype, Tree, Var, VarDtype, MAX_DEPTH};
pub use hello::{Hello, InputLanguage, Integers, PartialOps, Profile};
pub use request::{ApplyRequest, Empty, InstancesRequest, ReproducerRequest, Request, RunRequest};
pub use serve::{answer_line, serve, serve_on, Adapter};

/// The protocol version this crate speaks.
pub const PROTOCOL: u64 = 1;
