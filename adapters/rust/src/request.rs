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
    /// On a simplification request, of an adapter that gives bounds: the
    /// bounds of the request's own expressions beside the answer, saving
    /// the `bounds` request (section 7). An adapter that fails on them
    /// leaves them out, and is then asked alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub with_bounds: Option<Empty>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::{Dtype, VarDtype, MAX_DEPTH};
    use serde_json::{json, Value};

    #[test]
    fn a_request_case_reads_and_writes_back_the_same() {
        let obj = json!({"id": 1,
            "vars": [{"name": "r0", "dtype": "index", "lo": 0, "hi": 7}, {"name": "p", "dtype": "bool", "lo": 0, "hi": 1}],
            "exprs": ["where(p, i32(r0) + i32(1), invalid)"],
            "trees": [["where", ["var", "p"], ["add", ["cast", "i32", ["var", "r0"]], ["const", 1, "i32"]], ["invalid"]]]});
        let req: Request = serde_json::from_value(obj.clone()).unwrap();
        let case = req.case().unwrap();
        assert_eq!(case.vars[1].dtype, VarDtype::Bool);
        let Tree::Op(op, args) = &case.trees[0] else {
            panic!("not an op")
        };
        assert_eq!(op, "where");
        assert_eq!(
            args[1],
            Tree::Op(
                "add".into(),
                vec![
                    Tree::Cast(Dtype::I32, Box::new(Tree::Var("r0".into()))),
                    Tree::Const(1, Dtype::I32),
                ]
            )
        );
        assert_eq!(
            serde_json::to_value(Request::of_case(1, case)).unwrap(),
            obj
        );
    }

    #[test]
    fn malformed_cases_are_refused_with_the_reason() {
        let refuse = |v: Value| -> String {
            match serde_json::from_value::<Request>(v) {
                Ok(req) => req.case().unwrap_err().to_string(),
                Err(e) => e.to_string(),
            }
        };
        assert!(refuse(json!({"id": 1, "vars": 3, "trees": []})).contains("expected a sequence"));
        assert_eq!(
            refuse(json!({"id": 1, "trees": []})),
            BadRequest::Missing("vars").to_string()
        );
        assert_eq!(
            refuse(json!({"id": 1, "vars": [], "trees": [["var", "x"]]})),
            BadRequest::UnknownVar("x".into()).to_string()
        );
        assert!(
            refuse(json!({"id": 1, "vars": [{"name": "x", "lo": 3, "hi": 1}], "trees": []}))
                .contains("empty range [3, 1]")
        );
        let twice = json!({"name": "x", "lo": 0, "hi": 1});
        assert!(
            refuse(json!({"id": 1, "vars": [twice, twice], "trees": []}))
                .contains("declared twice")
        );
        assert!(
            refuse(json!({"id": 1, "vars": [], "trees": [["const", "seven"]]}))
                .contains("invalid type: string \"seven\"")
        );
        assert!(
            refuse(json!({"id": 1, "vars": [], "trees": [["invalid", 1]]}))
                .contains("`invalid` with too many operands")
        );
        let mut deep = json!(["const", 1]);
        for _ in 0..(MAX_DEPTH + 5) {
            deep = json!(["neg", deep]);
        }
        // serde_json refuses such nesting in a line before we see it; built
        // by hand here, the reader refuses it rather than recursing without
        // bound.
        let e = Tree::deserialize(&deep).unwrap_err().to_string();
        assert!(
            e.contains(&format!("nested more than {MAX_DEPTH} deep")),
            "{e}"
        );
    }
}
