//! The verifier: every declarative rule proved with Z3 over bounded
//! integers (docs/semantics.md, "Rules and guards"), and translation validation of
//! concrete rewrites.
//!
//! [`encode`] implements `engine::semantics` on Z3 terms; [`query`] turns a
//! rule into a query; [`prove`] runs the queries (cached; [`schedule`]
//! runs them all in parallel, [`remote`] each in a worker process killed
//! at its deadline, [`worker`]; [`solver`] runs one check; [`budget`]
//! spends a query's time on them);
//! [`counterexample`] reads, minimizes and confirms failures;
//! [`exhaustive`] walks every assignment of a small rule the solvers left
//! unknown; [`check`]
//! validates concrete programs (in a worker too); [`termination`] proves that each rule
//! decreases the reduction order and finds rules that undo each other.

pub mod budget;
pub mod cache;
pub mod check;
pub mod counterexample;
pub mod crosscheck;
pub mod cvc5;
pub mod encode;
pub mod exhaustive;
pub mod lemma;
pub mod poly;
pub mod portfolio;
pub mod prove;
pub mod query;
pub mod ranges;
pub mod remote;
pub mod schedule;
pub mod solver;
pub mod termination;
pub mod truediv;
pub mod verdict;
pub mod worker;
