//! What a program means: [`semantics`], written once over primitives, and
//! the reference interpreter ([`interp`]) that implements them on exact
//! integers. Built on [`crate::ir`] only.

pub mod domain;
pub mod interp;
pub mod semantics;
