//! The hello: the adapter's name, version, semantics profile and what it
//! offers (backends, reproducers, rules, bounds), read and checked.

use super::codec::Malformed;
use crate::subject::{Integers, Profile};
use engine::dtype::Width;
use engine::ir::Op;
use engine::semantics::Partial;
use serde::Deserialize;

/// The protocol version this side speaks.
pub const PROTOCOL: u64 = 1;

#[derive(Deserialize)]
pub(super) struct Hello {
    pub(super) tileproof: u64,
    pub(super) name: String,
    pub(super) version: String,
    pub(super) profile: HelloProfile,
    #[serde(default)]
    pub(super) backends: Vec<String>,
    #[serde(default)]
    pub(super) reproducer: bool,
    #[serde(default)]
    pub(super) rules: bool,
    #[serde(default)]
    pub(super) bounds: bool,
}

#[derive(Deserialize)]
pub(super) struct HelloProfile {
    ops: Vec<String>,
    invalid: bool,
    integers: String,
    #[serde(default)]
    bool_vars: bool,
    #[serde(default)]
    partial_ops: Option<String>,
    #[serde(default)]
    input_language: InputLanguage,
}

/// What inputs the peer's own pipeline builds (docs/protocol.md).
#[derive(Deserialize)]
struct InputLanguage {
    #[serde(default = "yes")]
    pub(super) invalid_compared: bool,
    #[serde(default)]
    affine: bool,
}

impl Default for InputLanguage {
    fn default() -> Self {
        InputLanguage {
            invalid_compared: true,
            affine: false,
        }
    }
}

fn yes() -> bool {
    true
}

/// The semantics profile a hello declares.
pub(super) fn profile_of(h: &HelloProfile) -> Result<Profile, Malformed> {
    let mut ops = Vec::new();
    for name in &h.ops {
        // An op this side does not know is one it never sends.
        if let Some(op) = Op::by_name(name) {
            if op.class() != engine::op::Class::Cast {
                ops.push(op);
            }
        }
    }
    let integers = match h.integers.as_str() {
        "unbounded" => Integers::Unbounded,
        "int32" => Integers::Fixed(Width(32)),
        "int64" => Integers::Fixed(Width(64)),
        other => return Err(Malformed::Integers(other.to_string())),
    };
    let partial = match h.partial_ops.as_deref() {
        None => Partial::Undefined,
        Some(name) => {
            Partial::by_name(name).ok_or_else(|| Malformed::PartialOps(name.to_string()))?
        }
    };
    Ok(Profile {
        ops,
        invalid: h.invalid,
        bare_invalid: false,
        integers,
        bool_vars: h.bool_vars,
        concrete_dtypes: false,
        invalid_compared: h.input_language.invalid_compared,
        affine: h.input_language.affine,
        partial,
    })
}
