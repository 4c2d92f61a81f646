//! What an adapter answers, per request kind (docs/protocol.md, sections
//! 3, 5, 6 and 7), and the requests' own fields.

use crate::case::{Case, Tree};
use serde_json::{json, Value};

/// The expressions of an answer: trees, or text in tileproof's format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Exprs {
    Trees(Vec<Tree>),
    Text(Vec<String>),
}

/// A simplification (or one rule's rewrite), with the peer's rules that
/// fired on it by the names its `rules` answer lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Simplified {
    pub exprs: Exprs,
    pub fired: Vec<(String, u64)>,
}

impl Simplified {
    pub fn trees(trees: Vec<Tree>) -> Simplified {
        Simplified {
            exprs: Exprs::Trees(trees),
            fired: Vec::new(),
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

/// One expression's value at one point, as the compiled code gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunValue {
    Int(i64),
    Bool(bool),
    /// A masked lane.
    Invalid,
}

impl RunValue {
    pub fn to_json(self) -> Value {
        match self {
            RunValue::Int(v) => json!(v),
            RunValue::Bool(b) => json!(b),
            RunValue::Invalid => json!("invalid"),
        }
    }

    pub fn from_json(v: &Value) -> Option<RunValue> {
        match v {
            Value::Bool(b) => Some(RunValue::Bool(*b)),
            Value::String(s) if s == "invalid" => Some(RunValue::Invalid),
            _ => v.as_i64().map(RunValue::Int),
        }
    }
}

impl std::fmt::Display for RunValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunValue::Int(v) => write!(f, "{v}"),
            RunValue::Bool(b) => write!(f, "{b}"),
            RunValue::Invalid => f.write_str("invalid"),
        }
    }
}

/// What running the compiled expressions did at one point.
#[derive(Clone, Debug, PartialEq)]
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

/// A `run` request's own fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunRequest {
    pub backend: String,
    /// Values of the case's variables, in their order (a bool as 0 or 1).
    pub points: Vec<Vec<i64>>,
}

/// A `reproducer` request's own fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReproducerRequest {
    /// None for a `peer-crash`: the reproducer only calls the simplifier.
    pub backend: Option<String>,
    pub point: Vec<i64>,
    /// The source's values there by tileproof's semantics.
    pub expected: Vec<RunValue>,
    /// The finding's class (`wrong-value`, `trap`, `peer-crash`...).
    pub class: String,
    /// The finding's kind (`oracle`, `peer-error`, `unsound-bounds`...).
    pub kind: String,
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    Int(i64, i64),
    Bool(bool, bool),
}

impl Bound {
    fn to_json(self) -> Value {
        match self {
            Bound::Int(lo, hi) => json!([lo, hi]),
            Bound::Bool(lo, hi) => json!([lo, hi]),
        }
    }
}

/// The bounds of every node of each expression, in pre-order
/// ([`Tree::preorder`]); `None` for a node the analysis gives nothing for.
pub type Bounds = Vec<Vec<Option<Bound>>>;

pub(crate) fn bounds_json(b: &Bounds) -> Value {
    Value::Array(
        b.iter()
            .map(|e| {
                Value::Array(
                    e.iter()
                        .map(|n| n.map_or(Value::Null, Bound::to_json))
                        .collect(),
                )
            })
            .collect(),
    )
}

/// Where a rule's instances come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Instantiable {
    /// The adapter builds them (`instances` requests).
    Adapter,
    /// tileproof draws them from its own generators and suites and keeps
    /// those the rule rewrites: for a peer whose rules are opaque (Morok's
    /// pattern groups are closures, with no pattern tree to instantiate).
    Tileproof,
    /// No instance can be built, and why.
    No(String),
}

/// One rule of the peer, as a `rules` answer lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct RuleInfo {
    pub name: String,
    pub pattern: String,
    pub location: String,
    pub function: String,
    /// The pattern as a structured tree, when the adapter has one.
    pub tree: Value,
    pub instantiable: Instantiable,
}

impl RuleInfo {
    pub(crate) fn to_json(&self) -> Value {
        let mut r = json!({
            "name": self.name, "pattern": self.pattern, "location": self.location,
            "function": self.function, "tree": self.tree,
        });
        match &self.instantiable {
            Instantiable::Adapter => r["instantiable"] = json!(true),
            Instantiable::Tileproof => {
                r["instantiable"] = json!(true);
                r["instances"] = json!("tileproof");
            }
            Instantiable::No(why) => r["instantiable"] = json!(why),
        }
        r
    }
}

/// An `instances` request's own fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstancesRequest {
    pub rule: String,
    pub constants: Vec<i64>,
    pub ranges: Vec<(i64, i64)>,
    pub limit: usize,
    pub seed: u64,
}

/// The instances built, and why the failed attempts failed (reason, count).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Instances {
    pub cases: Vec<Case>,
    pub failures: Vec<(String, u64)>,
}

pub(crate) fn simplified_json(s: &Simplified) -> Value {
    let mut v = match &s.exprs {
        Exprs::Trees(t) => json!({"trees": t.iter().map(Tree::to_json).collect::<Vec<_>>()}),
        Exprs::Text(e) => json!({"exprs": e}),
    };
    if !s.fired.is_empty() {
        let fired: serde_json::Map<String, Value> =
            s.fired.iter().map(|(k, n)| (k.clone(), json!(n))).collect();
        v["fired"] = Value::Object(fired);
    }
    v
}

pub(crate) fn run_json(r: &Run) -> Value {
    match r {
        Run::CompileError(e) => json!({"compile_error": e}),
        Run::Results(points) => {
            let results: Vec<Value> = points
                .iter()
                .map(|p| match p {
                    PointRun::Values(v) => {
                        json!({"values": v.iter().map(|x| x.to_json()).collect::<Vec<_>>()})
                    }
                    PointRun::Trap(sig) => json!({"trap": sig}),
                    PointRun::Timeout(s) => json!({"timeout": s}),
                })
                .collect();
            json!({"results": results})
        }
    }
}
