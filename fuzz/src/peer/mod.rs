//! Peers under test: a simplifier behind the line protocol of
//! `docs/protocol.md`, run as long-lived child processes.
//!
//! [`Peer::start`] runs `sh -c CMD`, reads its hello (the name, version and
//! semantics profile), and keeps the process for the next case: one start
//! serves thousands of cases. Cases run in parallel, so a peer keeps a pool
//! of processes (one per worker at most). A process that hangs past the
//! per-case timeout is killed, one that exits or prints something that is
//! not a valid answer is dropped; the case that did it is a finding of its
//! own kind ([`Kind::Hang`](crate::kind::Kind::Hang), `Crash`, `Garbage`,
//! and `PeerError` for an `error` answer), and the next case starts a
//! fresh process: a bad peer never hangs a campaign.
//!
//! A request carries the case both as text and as JSON trees; an answer may
//! use either. Answers are built into the case's graph with the engine's
//! typing, so an ill-typed answer is garbage, not a crash of tileproof.
//!
//! Whatever an adapter prints costs bounded memory and time (the limits
//! are listed in docs/protocol.md): its lines are read as bytes up to
//! `--peer-max-line` ([`lines`]), an answer is built within a node
//! budget ([`node_budget`]), its stderr is kept as a bounded tail, and a
//! wait for an answer watches the process, so one that exits or closes
//! its stdout is reported rather than waited for.
//!
//! - `pool`: [`Peer`], the pool of processes behind one command.
//! - `process`: one running adapter process and its process group.
//! - [`lines`]: the bounded line reader (stdout) and the stderr tail.
//! - `codec`: the hello and its semantics profile read, requests written,
//!   answers read back into the graph, all through the protocol's wire
//!   types (`tileproof_adapter`).
//! - `subject`: a [`Peer`] as a [`crate::subject::Subject`].
//! - `part`: one of its rules alone (the `apply` request) or its pipeline
//!   up to one stage (the `stage` request), as a subject ([`PeerPart`]).
//! - `memo`: the answers to `apply` and `stage` requests, by request (a
//!   campaign blames many findings on the same small instances), and the
//!   wire forms of the cases asked about lately (a case asked about again
//!   is spliced into its request, not encoded again).
//! - `server`: any subject served on stdin and stdout (`tileproof serve`).

mod codec;
pub mod lines;
mod memo;
mod part;
mod pool;
mod process;
mod server;
mod subject;

pub(crate) use codec::read_every_way;
pub use codec::PROTOCOL;
pub use codec::{
    from_tree, line, node_budget, request, Malformed, NODE_BUDGET_MAX, NODE_BUDGET_MIN,
    NODE_BUDGET_PER_SOURCE_NODE,
};
pub use part::PeerPart;
pub use pool::{KnownRule, Peer, PeerError, RUN_TIMEOUT, START_TIMEOUT};
pub use server::serve;
