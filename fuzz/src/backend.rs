//! What a peer's own compiled code computes: the answers of the protocol's
//! optional `run` request (docs/protocol.md, section 5), and what a
//! `reproducer` request asks for. A finding against a peer is judged by
//! these, not by tileproof's model of the peer (see [`crate::confirm`]).

use serde::Serialize;
use std::fmt;

/// One expression's value at one point, as the compiled code gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Value {
    Int(i128),
    Bool(bool),
    /// A masked lane: the compiled code does not access memory there.
    #[serde(serialize_with = "invalid_text")]
    Invalid,
}

fn invalid_text<S: serde::Serializer>(s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str("invalid")
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Invalid => f.write_str("invalid"),
        }
    }
}

/// What running the compiled expressions did at one point.
#[derive(Clone, Debug, PartialEq)]
pub enum PointRun {
    /// One value per expression.
    Values(Vec<Value>),
    /// Killed by this signal (`SIGFPE`).
    Trap(String),
    /// Did not finish within this many seconds.
    Timeout(f64),
}

impl fmt::Display for PointRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PointRun::Values(v) if v.len() == 1 => write!(f, "{}", v[0]),
            PointRun::Values(v) => {
                let parts: Vec<String> = v.iter().map(Value::to_string).collect();
                write!(f, "({})", parts.join(", "))
            }
            PointRun::Trap(sig) => write!(f, "trap ({sig})"),
            PointRun::Timeout(s) => write!(f, "no result within {s:.0} s"),
        }
    }
}

/// The answer to a `run` request.
#[derive(Clone, Debug, PartialEq)]
pub enum Run {
    /// One result per point, in order.
    Results(Vec<PointRun>),
    /// The peer's compiler rejected the expressions.
    CompileError(String),
    /// This backend cannot compile the expressions as written.
    Unsupported(String),
}

/// A reproducer an adapter wrote: its text, and the extension it is kept
/// under beside its finding (`py` for a Python script, `rs` for a Rust
/// test).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Script {
    pub text: String,
    pub extension: String,
    /// Files kept beside the script that an upstream report needs but
    /// nothing runs (MLIR's adapter: the module before the pass, `.mlir`,
    /// for `mlir-opt` users), by extension, each different from the
    /// script's.
    pub attachments: Vec<Attachment>,
}

/// A file kept beside a reproducer as `NAME.EXT`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attachment {
    pub extension: String,
    pub text: String,
}

impl Script {
    /// The extension of a reproducer whose answer names none: protocol 1's
    /// first adapters wrote Python.
    pub const DEFAULT_EXTENSION: &'static str = "py";

    /// An extension an adapter may name: 1 to 8 ASCII letters or digits,
    /// and not the finding's own (`txt`).
    pub fn valid_extension(ext: &str) -> bool {
        (1..=8).contains(&ext.len())
            && ext.bytes().all(|b| b.is_ascii_alphanumeric())
            && ext != "txt"
    }
}

/// What a `reproducer` request asks the adapter to write a script for.
#[derive(Clone, Debug)]
pub struct ReproducerSpec {
    /// The backend to compile on (none for a `peer-crash`: the script only
    /// calls the simplifier).
    pub backend: Option<String>,
    /// The failing point, indexed like the graph's variable table.
    pub env: Vec<i64>,
    /// The source's values there (by the backend, else by tileproof's
    /// interpreter), for a source the backend cannot compile as written.
    pub expected: Vec<Value>,
    /// The finding's class name (`wrong-value`, `trap`, ...).
    pub class: String,
    /// The finding's kind (`oracle`, `peer-error`, `unsound-bounds`: a
    /// reproducer of bounds shows a node's value outside them, not two
    /// expressions that differ).
    pub kind: String,
}
