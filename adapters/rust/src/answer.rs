//! What an adapter answers (docs/protocol.md, sections 3, 5, 6 and 7): the
//! answer line ([`Reply`], the protocol's one definition of every answer
//! form: adapters write it with these types and tileproof reads it with
//! them), its parts, and the values an [`Adapter`](crate::Adapter) returns.

use crate::case::{Case, Tree};
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;

/// An answer line. Every answer has `id` (null when the request could not
/// be read) and one outcome: the fields of its request's kind, or a refusal
/// (`unsupported`, `error`; `declined` for `apply`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    pub id: Option<u64>,
    // Section 3: a simplification (or a rule's rewrite, or a stage's output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trees: Option<Vec<Tree>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exprs: Option<Vec<String>>,
    /// The peer's rules that rewrote the case, with counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fired: Option<BTreeMap<String, u64>>,
    /// `apply` only: the patterns of the rule that made the rewrite, each
    /// `RULE/PATTERN` and itself a rule `apply` takes (a group's closure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patterns: Option<Vec<String>>,
    // Refusals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsupported: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declined: Option<String>,
    // Section 5: `run` and `reproducer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub results: Option<Vec<PointRun>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compile_error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
    /// The script's file extension (`py` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extension: Option<String>,
    /// Files kept beside the script, by extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attachments: Option<BTreeMap<String, String>>,
    // Section 6: `rules` and `instances`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<Vec<RuleInfo>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instances: Option<Vec<Case>>,
    /// Why the attempts that gave no instance failed (reason -> count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failures: Option<BTreeMap<String, u64>>,
    // Section 7: `bounds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounds: Option<Bounds>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops: Option<Ops>,
}

/// The expressions of an answer: trees, or text in tileproof's format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Exprs {
    Trees(Vec<Tree>),
    Text(Vec<String>),
}

/// A simplification (or one rule's rewrite), with the peer's rules that
/// fired on it by the names its `rules` answer lists, and for a rule's
/// rewrite the patterns of it that made it (`RULE/PATTERN`, each a rule
/// `apply` takes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Simplified {
    pub exprs: Exprs,
    pub fired: Vec<(String, u64)>,
    pub patterns: Vec<String>,
}

impl Simplified {
    pub fn trees(trees: Vec<Tree>) -> Simplified {
        Simplified {
            exprs: Exprs::Trees(trees),
            fired: Vec::new(),
            patterns: Vec::new(),
        }
    }
}

/// A request the adapter does not answer with a result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refuse {
    /// The peer cannot take this case (not a finding).
    Unsupported(String),
    /// The peer failed on a case it should take (a finding).
    Error(String),
    /// `apply` only: the rule does not rewrite this instance.
    Declined(String),
}

/// One expression's value at one point, as the compiled code gives it: an
/// integer, `true`/`false`, or `"invalid"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunValue {
    Int(i64),
    Bool(bool),
    /// A masked lane.
    Invalid,
}

impl Serialize for RunValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RunValue::Int(v) => s.serialize_i64(*v),
            RunValue::Bool(b) => s.serialize_bool(*b),
            RunValue::Invalid => s.serialize_str("invalid"),
        }
    }
}

impl<'de> Deserialize<'de> for RunValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RunValue, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = RunValue;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a 64-bit integer, a bool or \"invalid\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RunValue, E> {
                Ok(RunValue::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RunValue, E> {
                i64::try_from(v)
                    .map(RunValue::Int)
                    .map_err(|_| E::custom(format!("{v} does not fit 64 bits")))
            }
            fn visit_bool<E: de::Error>(self, b: bool) -> Result<RunValue, E> {
                Ok(RunValue::Bool(b))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<RunValue, E> {
                match s {
                    "invalid" => Ok(RunValue::Invalid),
                    _ => Err(E::invalid_value(de::Unexpected::Str(s), &self)),
                }
            }
        }
        d.deserialize_any(V)
    }
}

impl fmt::Display for RunValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunValue::Int(v) => write!(f, "{v}"),
            RunValue::Bool(b) => write!(f, "{b}"),
            RunValue::Invalid => f.write_str("invalid"),
        }
    }
}

/// What running the compiled expressions did at one point:
/// `{"values": [...]}`, `{"trap": "SIGFPE"}` or `{"timeout": seconds}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PointRun {
    Values(Vec<RunValue>),
    /// Killed by this signal (`SIGFPE`).
    Trap(String),
    /// No result within this many seconds.
    Timeout(f64),
}

/// The answer to a `run` request.
#[derive(Clone, Debug, PartialEq)]
pub enum Run {
    Results(Vec<PointRun>),
    /// The peer's compiler rejected the expressions.
    CompileError(String),
}

/// A reproducer: its text and the file extension it is kept under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Script {
    pub text: String,
    /// `py`, `rs`: tileproof writes it beside the finding as `NAME.EXT`.
    pub extension: String,
}

/// What the peer's range analysis says of one node: its values lie in
/// `[lo, hi]` (for a bool, `false < true`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Bound {
    Int(i64, i64),
    Bool(bool, bool),
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bound::Int(lo, hi) => write!(f, "[{lo}, {hi}]"),
            Bound::Bool(lo, hi) => write!(f, "[{lo}, {hi}]"),
        }
    }
}

/// The bounds of every node of each expression, in pre-order
/// ([`Tree::preorder`]); `None` for a node the analysis gives nothing for.
pub type Bounds = Vec<Vec<Option<Bound>>>;

/// Per expression, per node in the same pre-order: the peer's own name of
/// the operation whose bound is reported (the root of the node's spelling
/// in the peer's IR: Morok's `-x` is `MUL(x, -1)`), or `None`.
pub type Ops = Vec<Vec<Option<String>>>;

/// A `bounds` answer: the bounds, and the peer's op of each node when the
/// adapter names them (one transfer function of the peer is one cause,
/// whichever tileproof op spelled it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PeerBounds {
    pub bounds: Bounds,
    pub ops: Option<Ops>,
}

impl From<Bounds> for PeerBounds {
    fn from(bounds: Bounds) -> PeerBounds {
        PeerBounds { bounds, ops: None }
    }
}

/// Whether a rule's instances can be built: `true`, or why not (a
/// string). A reader takes any other value as a reason.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Instantiable {
    #[default]
    Yes,
    No(String),
}

impl Serialize for Instantiable {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Instantiable::Yes => s.serialize_bool(true),
            Instantiable::No(why) => s.serialize_str(why),
        }
    }
}

impl<'de> Deserialize<'de> for Instantiable {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Instantiable, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::Bool(true) => Instantiable::Yes,
            Value::String(why) => Instantiable::No(why),
            other => Instantiable::No(format!("the adapter says {other}")),
        })
    }
}

/// Who builds a rule's instances.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InstanceSource {
    /// The adapter, from tileproof's pools (`instances` requests).
    #[default]
    Adapter,
    /// tileproof, from its own generators and suites, keeping those the
    /// rule rewrites: for a peer whose rules are opaque (Morok's pattern
    /// groups are closures, with no pattern tree to instantiate).
    Tileproof,
}

impl InstanceSource {
    fn is_adapter(&self) -> bool {
        *self == InstanceSource::Adapter
    }
}

/// A rule translated from the peer's source into tileproof's rule DSL by
/// its adapter (docs/protocol.md, section 6): the DSL rules, whose guards
/// are disjoint, that together fire where the peer's rule does and build
/// what it builds; or why it has no DSL form.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Translation {
    Rules(Vec<String>),
    Untranslatable(String),
}

/// One rule of the peer, as a `rules` answer lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RuleInfo {
    pub name: String,
    pub pattern: String,
    #[serde(default)]
    pub location: String,
    #[serde(default)]
    pub function: String,
    /// The pattern as a structured tree, when the adapter has one.
    #[serde(default)]
    pub tree: Value,
    #[serde(default)]
    pub instantiable: Instantiable,
    #[serde(default, skip_serializing_if = "InstanceSource::is_adapter")]
    pub instances: InstanceSource,
    /// The rule in tileproof's DSL, when the adapter translates its rules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub translation: Option<Translation>,
}

/// The instances built, and why the failed attempts failed (reason, count).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Instances {
    pub cases: Vec<Case>,
    pub failures: Vec<(String, u64)>,
}

impl Reply {
    /// A refusal of request `id`.
    pub fn refusal(id: Option<u64>, r: Refuse) -> Reply {
        let mut out = Reply {
            id,
            ..Reply::default()
        };
        match r {
            Refuse::Unsupported(why) => out.unsupported = Some(why),
            Refuse::Error(e) => out.error = Some(e),
            Refuse::Declined(why) => out.declined = Some(why),
        }
        out
    }
}

impl From<Simplified> for Reply {
    fn from(s: Simplified) -> Reply {
        let mut out = Reply::default();
        match s.exprs {
            Exprs::Trees(t) => out.trees = Some(t),
            Exprs::Text(e) => out.exprs = Some(e),
        }
        if !s.fired.is_empty() {
            out.fired = Some(s.fired.into_iter().collect());
        }
        if !s.patterns.is_empty() {
            out.patterns = Some(s.patterns);
        }
        out
    }
}

impl From<Run> for Reply {
    fn from(r: Run) -> Reply {
        match r {
            Run::CompileError(e) => Reply {
                compile_error: Some(e),
                ..Reply::default()
            },
            Run::Results(points) => Reply {
                results: Some(points),
                ..Reply::default()
            },
        }
    }
}

impl From<Script> for Reply {
    fn from(s: Script) -> Reply {
        Reply {
            script: Some(s.text),
            extension: Some(s.extension),
            ..Reply::default()
        }
    }
}

impl From<PeerBounds> for Reply {
    fn from(b: PeerBounds) -> Reply {
        Reply {
            bounds: Some(b.bounds),
            ops: b.ops,
            ..Reply::default()
        }
    }
}

impl From<Instances> for Reply {
    fn from(inst: Instances) -> Reply {
        Reply {
            // An instance is its variables and trees (docs/protocol.md).
            instances: Some(
                inst.cases
                    .into_iter()
                    .map(|c| Case {
                        exprs: Vec::new(),
                        ..c
                    })
                    .collect(),
            ),
            failures: Some(inst.failures.into_iter().collect()),
            ..Reply::default()
        }
    }
}
