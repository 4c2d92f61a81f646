//! The rule DSL: declarative rewrite rules, written once in text files under
//! `engine/rules/`, matched by the engine and proved by the verifier.
//!
//! The syntax is documented in `engine/rules/README.md`. In short:
//!
//! ```text
//! group identity
//! # x * 0 is 0, unless x may be invalid (then the lane must stay masked)
//! rule mul_zero: x * 0 => 0 if valid(x)
//! ```
//!
//! Lowercase names are pattern variables (any term); names starting with an
//! uppercase letter are constant variables (they match constants only). A
//! name used twice means the same node. Commutative operators (the op
//! table's) match in both operand orders. On the right side, every subterm
//! built only from constants is computed when the rule fires, with the op's
//! own semantics at the engine's width: overflow or division by zero means
//! the rule does not fire.
//!
//! - [`ast`]: patterns, templates, guards, rules;
//! - [`parse`] and [`infer`]: reading a rule file, with type inference;
//! - [`set`]: rule sets, the built-in set, candidate files laid over it;
//! - [`matching`]: matching at a node and building the right side;
//! - [`shape`]: what a node must be for a rule to match, checked first;
//! - [`guard`]: guards, evaluated once for the engine and the verifier;
//! - [`show`]: patterns printed back;
//! - [`reduction`]: the reduction order every rule must decrease.

pub mod ast;
pub mod guard;
pub mod infer;
pub mod matching;
pub mod parse;
pub mod reduction;
pub mod set;
pub mod shape;
pub mod show;

pub use ast::{resolve_ty, Binding, Guard, Helper, IExpr, LemmaUse, Pat, PatVar, Rule, Ty, TyVar};
pub use matching::{eval_computed, InstantiateError};
pub use set::{
    builtin, builtin_with, candidates, load_builtin, load_candidates, load_lowering, Group, Loaded,
    RuleError, RuleSet, BUILTIN_FILES, BUILTIN_ORDER, LOWERING_FILES,
};
