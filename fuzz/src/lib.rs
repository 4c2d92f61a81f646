//! Fuzzing: generators, the Cranelift JIT oracle, campaigns, the corpus.
//!
//! - [`generate`]: the two case generators (tiled views, expression trees).
//! - [`jit`]: compiles engine graphs to native code with the exact
//!   semantics of `engine::interp` (single-point evaluator for tests).
//! - [`batch`]: the batched evaluator: graphs evaluated over blocks of
//!   points without compiling (small domains).
//! - [`oracle`]: compiles an original and a simplified form into one
//!   function that checks refinement over the whole iteration domain.
//! - [`checks`]: the per-case checks (oracle, ranges, idempotence, JIT
//!   versus interpreter, an optional validator hook, caught panics).
//! - [`kind`]: what a finding found (the failed check's name).
//! - [`confirm`]: a finding against a peer classified by its own compiled code.
//! - [`message`]: one-line messages for reports and headers.
//! - [`suite`]: the peers' converted test suites, embedded (the seeds).
//! - [`subject`]: the simplifier under test: the engine, or a peer
//!   ([`peer`]: the peer wing: a pool of child processes speaking the line
//!   protocol, its codec, and the server side).
//! - [`peer_rules`]: a peer's own rewrite rules, each applied alone to
//!   instances of its pattern and judged like any answer.
//! - [`propose`]: an engine rule written in a peer's pattern language.
//! - [`report`]: one upstream report per defect of a corpus.
//! - [`backend`]: what a peer's own compiled code computes (`run`).
//! - [`bounds`]: a peer's range analysis checked against the values its
//!   nodes take.
//! - [`cause`]: a finding's cause, the defect it is filed under (a rule, a
//!   transfer function of a range analysis, the backend, a stage, a crash
//!   site), and [`bucket`]: the shape of a case, names and constants
//!   abstracted.
//! - [`campaign`]: parallel, reproducible campaigns of generated cases.
//! - [`missed`]: missed simplifications: where the engine, under a peer's
//!   semantics, is provably cheaper than the peer's sound answer.
//! - [`mutate`]: variants a campaign derives from each case.
//! - [`shrink`]: graph-level shrinking of a failing case.
//! - [`corpus`]: findings as text cases, written atomically, and replay.
//! - [`firings`]: validating every firing of the algorithmic rules.
//! - [`targets`]: the bodies of the cargo-fuzz (libFuzzer) targets.
//! - [`rng`]: deterministic randomness (splitmix64) for all of the above.

pub mod backend;
pub mod batch;
pub mod blame;
pub mod bounds;
pub mod bucket;
pub mod campaign;
pub mod cause;
pub mod checks;
pub mod classify;
pub mod confirm;
pub mod corpus;
pub mod divconst;
pub mod finding;
pub mod firings;
pub mod generate;
pub mod jit;
pub mod kind;
pub mod message;
pub mod missed;
pub mod mutate;
pub mod oracle;
pub mod peer;
pub mod peer_rules;
pub mod propose;
pub mod report;
pub mod rng;
pub mod shrink;
pub mod subject;
pub mod suite;
pub mod targets;
pub mod translation;
pub mod widen;
