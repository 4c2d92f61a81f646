//! A request line (docs/protocol.md): a case (section 2) with at most one
//! object saying what to do with it other than simplify it (`run` and
//! `reproducer`: section 5; `apply`: section 6; `bounds`: section 7;
//! `stage`: "Pipeline stages"), or a request about the peer's rules that
//! carries no case (`rules`, `instances`: section 6). The protocol's one
//! definition of it: tileproof writes requests with these types, and the
//! adapters of this crate (and `tileproof serve`) read them.

use crate::answer::RunValue;
use crate::case::{BadRequest, Case, Tree, Var};
use serde::{Deserialize, Serialize};

/// A request line.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub id: u64,
    /// The case's variables, its expressions as text and as trees: every
    /// request but `rules` and `instances` has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vars: Option<Vec<Var>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exprs: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trees: Option<Vec<Tree>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunRequest>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reproducer: Option<ReproducerRequest>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apply: Option<ApplyRequest>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounds: Option<Empty>,
    /// A stage of the hello's `stages`: the expressions after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<Empty>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instances: Option<InstancesRequest>,
}

/// An object with no fields of its own (`"bounds": {}`, `"rules": {}`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Empty {}

impl Request {
    /// A case request for `case` (its `exprs` as given).
    pub fn of_case(id: u64, case: Case) -> Request {
        Request {
            id,
            vars: Some(case.vars),
            exprs: Some(case.exprs),
            trees: Some(case.trees),
            ..Request::default()
        }
    }

    /// The request's case, checked ([`Case::check`]).
    pub fn case(&self) -> Result<Case, BadRequest> {
        let case = Case {
            vars: self.vars.clone().ok_or(BadRequest::Missing("vars"))?,
            exprs: self.exprs.clone().unwrap_or_default(),
            trees: self.trees.clone().ok_or(BadRequest::Missing("trees"))?,
        };
        case.check()?;
        Ok(case)
    }
}

/// A `run` request's own fields: compile with `backend`, evaluate at each
/// point.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRequest {
    pub backend: String,
    /// Values of the case's variables, in their order (a bool as 0 or 1).
    pub points: Vec<Vec<i64>>,
}

/// A `reproducer` request's own fields.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReproducerRequest {
    /// None for a `peer-crash`: the reproducer only calls the simplifier.
    pub backend: Option<String>,
    pub point: Vec<i64>,
    /// The source's values there by tileproof's semantics.
    #[serde(default)]
    pub expected: Vec<RunValue>,
    /// The finding's class (`wrong-value`, `trap`, `peer-crash`...).
    #[serde(default)]
    pub class: String,
    /// The finding's kind (`oracle`, `peer-error`, `unsound-bounds`...).
    #[serde(default)]
    pub kind: String,
}

/// An `apply` request's own fields: the rule applied alone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApplyRequest {
    pub rule: String,
}

/// An `instances` request's own fields.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstancesRequest {
    #[serde(default)]
    pub rule: String,
    pub constants: Vec<i64>,
    /// Inclusive `[lo, hi]` ranges for index variables.
    pub ranges: Vec<(i64, i64)>,
    #[serde(default = "default_limit")]
    pub limit: usize,
    #[serde(default)]
    pub seed: u64,
}

fn default_limit() -> usize {
    32
}
