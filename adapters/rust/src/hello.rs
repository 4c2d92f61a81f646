//! The hello: who the peer is, what it accepts, and what it can do
//! (docs/protocol.md, section 1). The protocol's one definition of the
//! hello line: adapters write it with these types and tileproof reads it
//! with them.

use serde::{Deserialize, Serialize};

/// What a symbolic integer of the peer is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Integers {
    /// Mathematical integers, no overflow.
    Unbounded,
    /// Index arithmetic at 32 bits, overflow assumed impossible.
    Int32,
    /// Index arithmetic at 64 bits, overflow assumed impossible.
    Int64,
    /// Two's complement arithmetic that wraps (no known peer).
    Wrapping32,
    Wrapping64,
    /// A value this protocol version does not define: kept, so that a
    /// reader can say which.
    #[serde(untagged)]
    Other(String),
}

/// What a division by zero or an out-of-range shift means to the peer.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PartialOps {
    /// Undefined behaviour of the whole evaluation.
    #[default]
    Undefined,
    /// Some unspecified value, nothing worse.
    Unspecified,
    /// A value this protocol version does not define.
    #[serde(untagged)]
    Other(String),
}

/// What inputs the peer's own pipeline builds (the profile's
/// `input_language`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputLanguage {
    /// A value that may be `invalid` may be compared.
    #[serde(default = "yes")]
    pub invalid_compared: bool,
    /// Every product has a constant factor, every quotient and remainder a
    /// positive constant divisor (MLIR's affine expressions).
    #[serde(default, skip_serializing_if = "is_false")]
    pub affine: bool,
    /// Every quotient and remainder has a positive constant divisor
    /// (Halide's `/` and `%` are Euclidean: they round as tileproof's
    /// floor family only where the divisor is positive). Implied by
    /// `affine`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub positive_divisors: bool,
    /// Every source is defined at every point of its domain: the peer
    /// computes the whole domain at once (Halide realizes a Func over its
    /// bounded region), so one point that overflows makes the computation
    /// undefined, and such a case is not judged.
    #[serde(default, skip_serializing_if = "is_false")]
    pub defined_everywhere: bool,
}

impl Default for InputLanguage {
    fn default() -> Self {
        InputLanguage {
            invalid_compared: true,
            affine: false,
            positive_divisors: false,
            defined_everywhere: false,
        }
    }
}

fn yes() -> bool {
    true
}

fn is_false(b: &bool) -> bool {
    !b
}

/// The semantics profile: claim only what experiments on the installed
/// version show (docs/protocol.md, "The semantics profile").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Profile {
    /// The tileproof ops the peer maps exactly, by tileproof name.
    pub ops: Vec<String>,
    pub invalid: bool,
    pub integers: Integers,
    #[serde(default)]
    pub bool_vars: bool,
    #[serde(default)]
    pub partial_ops: PartialOps,
    #[serde(default)]
    pub input_language: InputLanguage,
}

/// The hello line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// The protocol version ([`crate::PROTOCOL`]).
    pub tileproof: u64,
    /// The peer and its entry point: `morok.symbolic`.
    pub name: String,
    /// The peer's version, as its package says.
    pub version: String,
    pub profile: Profile,
    /// The backends `run` requests may name (section 5).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub backends: Vec<String>,
    /// The adapter answers `reproducer` requests.
    #[serde(default, skip_serializing_if = "is_false")]
    pub reproducer: bool,
    /// The adapter answers `rules`, `instances` and `apply` (section 6).
    #[serde(default, skip_serializing_if = "is_false")]
    pub rules: bool,
    /// The adapter answers `bounds` requests (section 7).
    #[serde(default, skip_serializing_if = "is_false")]
    pub bounds: bool,
    /// The entry point's pipeline, in order, when it is one: a case
    /// request with `stage` answers the expressions after that stage (the
    /// last is the entry itself).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<String>,
}

impl Hello {
    /// The hello of a peer that offers nothing beyond simplification: set
    /// the capability fields it has.
    pub fn new(name: impl Into<String>, version: impl Into<String>, profile: Profile) -> Hello {
        Hello {
            tileproof: crate::PROTOCOL,
            name: name.into(),
            version: version.into(),
            profile,
            backends: Vec::new(),
            reproducer: false,
            rules: false,
            bounds: false,
            stages: Vec::new(),
        }
    }
}
