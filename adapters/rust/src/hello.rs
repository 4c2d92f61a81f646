//! The hello: who the peer is, what it accepts, and what it can do
//! (docs/protocol.md, section 1).

use serde_json::{json, Value};

/// What a symbolic integer of the peer is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Integers {
    /// Mathematical integers, no overflow.
    Unbounded,
    /// Index arithmetic at 32 bits, overflow assumed impossible.
    Int32,
    /// Index arithmetic at 64 bits, overflow assumed impossible.
    Int64,
}

impl Integers {
    pub fn name(self) -> &'static str {
        match self {
            Integers::Unbounded => "unbounded",
            Integers::Int32 => "int32",
            Integers::Int64 => "int64",
        }
    }
}

/// What a division by zero or an out-of-range shift means to the peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartialOps {
    /// Undefined behaviour of the whole evaluation.
    Undefined,
    /// Some unspecified value, nothing worse.
    Unspecified,
}

impl PartialOps {
    pub fn name(self) -> &'static str {
        match self {
            PartialOps::Undefined => "undefined",
            PartialOps::Unspecified => "unspecified",
        }
    }
}

/// The semantics profile: claim only what experiments on the installed
/// version show (docs/protocol.md, "The semantics profile").
#[derive(Clone, Debug)]
pub struct Profile {
    /// The tileproof ops the peer maps exactly, by tileproof name.
    pub ops: Vec<&'static str>,
    pub invalid: bool,
    pub integers: Integers,
    pub bool_vars: bool,
    pub partial_ops: PartialOps,
    /// A value that may be `invalid` may be compared (input language).
    pub invalid_compared: bool,
}

/// The hello line's content.
#[derive(Clone, Debug)]
pub struct Hello {
    /// The peer and its entry point: `morok.symbolic`.
    pub name: String,
    /// The peer's version, as its package says.
    pub version: String,
    pub profile: Profile,
    /// The backends `run` requests may name (section 5).
    pub backends: Vec<String>,
    /// The adapter answers `reproducer` requests.
    pub reproducer: bool,
    /// The adapter answers `rules`, `instances` and `apply` (section 6).
    pub rules: bool,
    /// The adapter answers `bounds` requests (section 7).
    pub bounds: bool,
}

impl Hello {
    pub fn to_json(&self) -> Value {
        let p = &self.profile;
        let mut h = json!({
            "tileproof": crate::PROTOCOL,
            "name": self.name,
            "version": self.version,
            "profile": {
                "ops": p.ops,
                "invalid": p.invalid,
                "integers": p.integers.name(),
                "bool_vars": p.bool_vars,
                "partial_ops": p.partial_ops.name(),
                "input_language": {"invalid_compared": p.invalid_compared},
            },
        });
        if !self.backends.is_empty() {
            h["backends"] = json!(self.backends);
        }
        if self.reproducer {
            h["reproducer"] = json!(true);
        }
        if self.rules {
            h["rules"] = json!(true);
        }
        if self.bounds {
            h["bounds"] = json!(true);
        }
        h
    }
}
