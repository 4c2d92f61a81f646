//! Programs as text: the text format ([`parse`], [`print`]), XLA indexing
//! maps ([`xla`]), a case's `# point:` header ([`point`]) and the one input detector every command reads a program
//! with ([`input`]), and the peer-suite format ([`suite`]). Built on
//! [`crate::ir`], and [`crate::meaning::domain`] for constraints.

pub mod input;
pub mod parse;
pub mod point;
pub mod print;
pub mod suite;
pub mod xla;
