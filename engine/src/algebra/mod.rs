//! The simplifier's algebra: what the passes compute with, and nothing that
//! rewrites by itself. One linear form ([`linear`]), digit splits
//! ([`digits`]), quotients by constants inside it ([`quotient`]), `min`/`max`
//! chains over it ([`minmax`]), comparisons as linear relations and the
//! facts they state ([`relation`]), residues ([`residue`]), and whether a
//! result is defined wherever its source is ([`defined`]). Built on
//! [`crate::ir`]; the passes ([`crate::passes`]) sit on top.

pub mod defined;
pub mod digits;
pub mod linear;
pub mod minmax;
pub mod quotient;
pub mod relation;
pub mod residue;
