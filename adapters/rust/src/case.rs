//! What a request carries: the variables and the expressions, as trees
//! (docs/protocol.md, section 2), read from and written to JSON.
//!
//! Op names are kept as text: the adapter maps the ones its peer has and
//! answers `unsupported` for the rest, so a later protocol's op is never a
//! crash of an adapter built against this one.

use serde_json::{json, Value};

/// A variable's dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarDtype {
    Index,
    Bool,
}

/// A variable of a case, with its inclusive bounds (`0` and `1` for a bool).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Var {
    pub name: String,
    pub dtype: VarDtype,
    pub lo: i64,
    pub hi: i64,
}

/// A concrete integer dtype of a cast or a typed constant (`i32`, `i64`),
/// or `index`: what an answer that lowers `index` to machine widths uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dtype {
    Index,
    I32,
    I64,
}

impl Dtype {
    pub fn name(self) -> &'static str {
        match self {
            Dtype::Index => "index",
            Dtype::I32 => "i32",
            Dtype::I64 => "i64",
        }
    }

    pub fn by_name(name: &str) -> Option<Dtype> {
        match name {
            "index" => Some(Dtype::Index),
            "i32" => Some(Dtype::I32),
            "i64" => Some(Dtype::I64),
            _ => None,
        }
    }
}

/// An expression as a protocol tree.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Tree {
    Var(String),
    /// An integer constant; of dtype `index` unless typed.
    Const(i64, Dtype),
    Bool(bool),
    Invalid,
    /// `["cast", "i32", x]`: `x` converted to a concrete dtype (wrapping).
    Cast(Dtype, Box<Tree>),
    /// Any other op, by its tileproof name (`add`, `floordiv`, `where`...).
    Op(String, Vec<Tree>),
}

/// Why a request could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BadRequest {
    #[error("not JSON: {0}")]
    NotJson(String),
    #[error("a request is a JSON object with an integer `id`")]
    NoId,
    #[error("`{0}` must be a list")]
    NotAList(&'static str),
    #[error("a var needs a string `name`, a dtype and integer bounds: {0}")]
    BadVar(String),
    #[error("var `{0}` declared twice")]
    TwiceDeclared(String),
    #[error("var `{name}`: empty range [{lo}, {hi}]")]
    EmptyRange { name: String, lo: i64, hi: i64 },
    #[error("`{0}` is not a tree")]
    NotATree(String),
    #[error("`{0}` is not a variable of the case")]
    UnknownVar(String),
    #[error("a tree nested more than {0} deep")]
    TooDeep(usize),
}

/// How deep a tree may nest: deeper is refused rather than recursed into.
pub const MAX_DEPTH: usize = 2_000;

/// One case: its variables and expressions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    pub vars: Vec<Var>,
    /// The expressions in tileproof's text format, when the request had them.
    pub exprs: Vec<String>,
    pub trees: Vec<Tree>,
}

impl Case {
    /// The variable named `name`.
    pub fn var(&self, name: &str) -> Option<&Var> {
        self.vars.iter().find(|v| v.name == name)
    }

    /// Reads the case of a request object (`vars`, `trees`, `exprs`).
    pub fn from_json(obj: &Value) -> Result<Case, BadRequest> {
        let vars_in = obj
            .get("vars")
            .and_then(Value::as_array)
            .ok_or(BadRequest::NotAList("vars"))?;
        let mut vars: Vec<Var> = Vec::with_capacity(vars_in.len());
        for v in vars_in {
            let bad = || BadRequest::BadVar(v.to_string());
            let name = v.get("name").and_then(Value::as_str).ok_or_else(bad)?;
            let dtype = match v.get("dtype").and_then(Value::as_str) {
                Some("index") | None => VarDtype::Index,
                Some("bool") => VarDtype::Bool,
                Some(_) => return Err(bad()),
            };
            let (lo, hi) = match dtype {
                VarDtype::Bool => (
                    v.get("lo").and_then(Value::as_i64).unwrap_or(0),
                    v.get("hi").and_then(Value::as_i64).unwrap_or(1),
                ),
                VarDtype::Index => (
                    v.get("lo").and_then(Value::as_i64).ok_or_else(bad)?,
                    v.get("hi").and_then(Value::as_i64).ok_or_else(bad)?,
                ),
            };
            if lo > hi {
                return Err(BadRequest::EmptyRange {
                    name: name.to_string(),
                    lo,
                    hi,
                });
            }
            if vars.iter().any(|w| w.name == name) {
                return Err(BadRequest::TwiceDeclared(name.to_string()));
            }
            vars.push(Var {
                name: name.to_string(),
                dtype,
                lo,
                hi,
            });
        }
        let trees_in = obj
            .get("trees")
            .and_then(Value::as_array)
            .ok_or(BadRequest::NotAList("trees"))?;
        let mut case = Case {
            vars,
            exprs: Vec::new(),
            trees: Vec::with_capacity(trees_in.len()),
        };
        for t in trees_in {
            let tree = Tree::from_json(t)?;
            tree.check_vars(&case)?;
            case.trees.push(tree);
        }
        if let Some(exprs) = obj.get("exprs").and_then(Value::as_array) {
            case.exprs = exprs
                .iter()
                .filter_map(|e| e.as_str().map(str::to_string))
                .collect();
        }
        Ok(case)
    }

    /// The case as request fields (`vars`, `exprs`, `trees`).
    pub fn to_json(&self) -> Value {
        let vars: Vec<Value> = self
            .vars
            .iter()
            .map(|v| {
                let dtype = match v.dtype {
                    VarDtype::Index => "index",
                    VarDtype::Bool => "bool",
                };
                json!({"name": v.name, "dtype": dtype, "lo": v.lo, "hi": v.hi})
            })
            .collect();
        let trees: Vec<Value> = self.trees.iter().map(Tree::to_json).collect();
        json!({"vars": vars, "exprs": self.exprs, "trees": trees})
    }
}

impl Tree {
    /// Reads a protocol tree (iteratively deep only to [`MAX_DEPTH`]).
    pub fn from_json(t: &Value) -> Result<Tree, BadRequest> {
        Tree::read(t, 0)
    }

    fn read(t: &Value, depth: usize) -> Result<Tree, BadRequest> {
        if depth > MAX_DEPTH {
            return Err(BadRequest::TooDeep(MAX_DEPTH));
        }
        let bad = || BadRequest::NotATree(short(t));
        let items = t.as_array().ok_or_else(bad)?;
        let head = items.first().and_then(Value::as_str).ok_or_else(bad)?;
        let args = &items[1..];
        Ok(match (head, args) {
            ("var", [Value::String(name)]) => Tree::Var(name.clone()),
            ("const", [n]) => Tree::Const(n.as_i64().ok_or_else(bad)?, Dtype::Index),
            ("const", [n, Value::String(d)]) => Tree::Const(
                n.as_i64().ok_or_else(bad)?,
                Dtype::by_name(d).ok_or_else(bad)?,
            ),
            ("bool", [Value::Bool(b)]) => Tree::Bool(*b),
            ("invalid", []) => Tree::Invalid,
            ("cast", [Value::String(d), x]) => Tree::Cast(
                Dtype::by_name(d).ok_or_else(bad)?,
                Box::new(Tree::read(x, depth + 1)?),
            ),
            ("var" | "const" | "bool" | "invalid" | "cast", _) => return Err(bad()),
            (op, args) => Tree::Op(
                op.to_string(),
                args.iter()
                    .map(|a| Tree::read(a, depth + 1))
                    .collect::<Result<_, _>>()?,
            ),
        })
    }

    /// The tree as protocol JSON.
    pub fn to_json(&self) -> Value {
        match self {
            Tree::Var(n) => json!(["var", n]),
            Tree::Const(v, Dtype::Index) => json!(["const", v]),
            Tree::Const(v, d) => json!(["const", v, d.name()]),
            Tree::Bool(b) => json!(["bool", b]),
            Tree::Invalid => json!(["invalid"]),
            Tree::Cast(d, x) => json!(["cast", d.name(), x.to_json()]),
            Tree::Op(op, args) => {
                let mut v = vec![json!(op)];
                v.extend(args.iter().map(Tree::to_json));
                Value::Array(v)
            }
        }
    }

    /// Every node of the tree in pre-order (a node, then its operands left
    /// to right): the order of a `bounds` answer.
    pub fn preorder(&self) -> Vec<&Tree> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(t) = stack.pop() {
            out.push(t);
            match t {
                Tree::Cast(_, x) => stack.push(x),
                Tree::Op(_, args) => stack.extend(args.iter().rev()),
                _ => {}
            }
        }
        out
    }

    fn check_vars(&self, case: &Case) -> Result<(), BadRequest> {
        for t in self.preorder() {
            if let Tree::Var(n) = t {
                if case.var(n).is_none() {
                    return Err(BadRequest::UnknownVar(n.clone()));
                }
            }
        }
        Ok(())
    }
}

/// A value cut for a message.
fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() <= 200 {
        s
    } else {
        let mut end = 200;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &s[..end])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_case_reads_and_writes_back_the_same() {
        let obj = json!({"id": 1,
            "vars": [{"name": "r0", "dtype": "index", "lo": 0, "hi": 7}, {"name": "p", "dtype": "bool", "lo": 0, "hi": 1}],
            "exprs": ["where(p, i32(r0) + i32(1), invalid)"],
            "trees": [["where", ["var", "p"], ["add", ["cast", "i32", ["var", "r0"]], ["const", 1, "i32"]], ["invalid"]]]});
        let case = Case::from_json(&obj).unwrap();
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
        let back = case.to_json();
        assert_eq!(back["trees"], obj["trees"]);
        assert_eq!(back["vars"], obj["vars"]);
    }

    #[test]
    fn malformed_cases_are_refused_with_the_reason() {
        let refuse = |v: Value| Case::from_json(&v).unwrap_err();
        assert_eq!(
            refuse(json!({"vars": 3, "trees": []})),
            BadRequest::NotAList("vars")
        );
        assert_eq!(
            refuse(json!({"vars": [], "trees": [["var", "x"]]})),
            BadRequest::UnknownVar("x".into())
        );
        assert!(matches!(
            refuse(json!({"vars": [{"name": "x", "lo": 3, "hi": 1}], "trees": []})),
            BadRequest::EmptyRange { .. }
        ));
        assert!(matches!(
            refuse(json!({"vars": [], "trees": [["const", "seven"]]})),
            BadRequest::NotATree(_)
        ));
        let mut deep = json!(["const", 1]);
        for _ in 0..(MAX_DEPTH + 5) {
            deep = json!(["neg", deep]);
        }
        // serde_json refuses such nesting before we see it; built by hand
        // here, the reader refuses it rather than recursing without bound.
        assert_eq!(
            Tree::from_json(&deep).unwrap_err(),
            BadRequest::TooDeep(MAX_DEPTH)
        );
    }

    #[test]
    fn preorder_lists_a_node_before_its_operands() {
        let t = Tree::Op(
            "add".into(),
            vec![
                Tree::Op(
                    "mul".into(),
                    vec![Tree::Var("x".into()), Tree::Const(4, Dtype::Index)],
                ),
                Tree::Var("y".into()),
            ],
        );
        let names: Vec<String> = t
            .preorder()
            .iter()
            .map(|n| match n {
                Tree::Op(o, _) => o.clone(),
                Tree::Var(v) => v.clone(),
                Tree::Const(c, _) => c.to_string(),
                _ => "?".into(),
            })
            .collect();
        assert_eq!(names, ["add", "mul", "x", "4", "y"]);
    }
}
