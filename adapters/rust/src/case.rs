//! What a request carries: the variables and the expressions, as trees
//! (docs/protocol.md, section 2). These serde types are the protocol's one
//! definition of a case: tileproof writes requests with them and reads
//! adapters' instances with them, an adapter reads its cases with them.
//!
//! Op names are kept as text: the adapter maps the ones its peer has and
//! answers `unsupported` for the rest, so a later protocol's op is never a
//! crash of an adapter built against this one.

use serde::de::{self, DeserializeSeed, IgnoredAny, SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A variable's dtype.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VarDtype {
    #[default]
    Index,
    Bool,
    /// A dtype protocol 1 does not send (tileproof's `i32` variables): a
    /// case with one is refused ([`Case::check`]).
    #[serde(untagged)]
    Other(String),
}

/// A variable of a case, with its inclusive bounds (`0` and `1` for a bool).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Var {
    pub name: String,
    pub dtype: VarDtype,
    pub lo: i64,
    pub hi: i64,
}

impl<'de> Deserialize<'de> for Var {
    /// `dtype` defaults to `index`, and a bool's bounds to `0` and `1`: a
    /// reader is lenient where the protocol's meaning is plain.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Var, D::Error> {
        #[derive(Deserialize)]
        struct Read {
            name: String,
            #[serde(default)]
            dtype: VarDtype,
            lo: Option<i64>,
            hi: Option<i64>,
        }
        let r = Read::deserialize(d)?;
        let bool_end = |end: Option<i64>, default: i64| match r.dtype {
            VarDtype::Bool => Ok(end.unwrap_or(default)),
            VarDtype::Index | VarDtype::Other(_) => end.ok_or_else(|| {
                de::Error::custom(format!(
                    "var `{}` needs integer bounds `lo` and `hi`",
                    r.name
                ))
            }),
        };
        Ok(Var {
            lo: bool_end(r.lo, 0)?,
            hi: bool_end(r.hi, 1)?,
            name: r.name,
            dtype: r.dtype,
        })
    }
}

/// A concrete integer dtype of a cast or a typed constant (`i32`, `i64`),
/// or `index`: what an answer that lowers `index` to machine widths uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
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

/// An expression as a protocol tree: `["var", name]`, `["const", n]`,
/// `["const", n, dtype]`, `["bool", b]`, `["invalid"]`, `["cast", dtype,
/// x]`, or `[op, operand, ...]`.
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
    #[error("not a request: {0}")]
    Shape(String),
    #[error("a case request needs `{0}`")]
    Missing(&'static str),
    #[error("var `{0}` declared twice")]
    TwiceDeclared(String),
    #[error("var `{name}`: empty range [{lo}, {hi}]")]
    EmptyRange { name: String, lo: i64, hi: i64 },
    #[error("`{0}` is not a variable of the case")]
    UnknownVar(String),
    #[error("var `{name}` has dtype `{dtype}` (index and bool are protocol 1's)")]
    VarDtype { name: String, dtype: String },
}

/// How deep a tree may nest: deeper is refused rather than recursed into.
pub const MAX_DEPTH: usize = 2_000;

/// One case: its variables and expressions (also an `instances` answer's
/// instance, which has no `exprs`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Case {
    pub vars: Vec<Var>,
    /// The expressions in tileproof's text format, when the request had them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exprs: Vec<String>,
    pub trees: Vec<Tree>,
}

impl Case {
    /// The variable named `name`.
    pub fn var(&self, name: &str) -> Option<&Var> {
        self.vars.iter().find(|v| v.name == name)
    }

    /// Checks what the types cannot say: each variable declared once over a
    /// non-empty range, and every tree using only the case's variables.
    pub fn check(&self) -> Result<(), BadRequest> {
        for (i, v) in self.vars.iter().enumerate() {
            if v.lo > v.hi {
                return Err(BadRequest::EmptyRange {
                    name: v.name.clone(),
                    lo: v.lo,
                    hi: v.hi,
                });
            }
            if self.vars[..i].iter().any(|w| w.name == v.name) {
                return Err(BadRequest::TwiceDeclared(v.name.clone()));
            }
            if let VarDtype::Other(d) = &v.dtype {
                return Err(BadRequest::VarDtype {
                    name: v.name.clone(),
                    dtype: d.clone(),
                });
            }
        }
        for t in &self.trees {
            for n in t.preorder() {
                if let Tree::Var(name) = n {
                    if self.var(name).is_none() {
                        return Err(BadRequest::UnknownVar(name.clone()));
                    }
                }
            }
        }
        Ok(())
    }
}

impl Tree {
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
}

impl Serialize for Tree {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Tree::Var(n) => ("var", n).serialize(s),
            Tree::Const(v, Dtype::Index) => ("const", v).serialize(s),
            Tree::Const(v, d) => ("const", v, d).serialize(s),
            Tree::Bool(b) => ("bool", b).serialize(s),
            Tree::Invalid => ("invalid",).serialize(s),
            Tree::Cast(d, x) => ("cast", d, x).serialize(s),
            Tree::Op(op, args) => {
                let mut seq = s.serialize_seq(Some(1 + args.len()))?;
                seq.serialize_element(op)?;
                for a in args {
                    seq.serialize_element(a)?;
                }
                seq.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Tree {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Tree, D::Error> {
        AtDepth(0).deserialize(d)
    }
}

/// Reads a tree `.0` levels down: one nested deeper than [`MAX_DEPTH`] is
/// refused rather than recursed into (a `serde_json::Value` has no
/// nesting limit of its own).
struct AtDepth(usize);

impl<'de> DeserializeSeed<'de> for AtDepth {
    type Value = Tree;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Tree, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for AtDepth {
    type Value = Tree;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a tree: a list of an op name and its operands")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tree, A::Error> {
        if self.0 > MAX_DEPTH {
            return Err(de::Error::custom(format!(
                "a tree nested more than {MAX_DEPTH} deep"
            )));
        }
        let head: String = seq
            .next_element()?
            .ok_or_else(|| de::Error::custom("an empty tree"))?;
        fn need<T, E: de::Error>(x: Option<T>, head: &str) -> Result<T, E> {
            x.ok_or_else(|| de::Error::custom(format!("`{head}` lacks an operand")))
        }
        let below = AtDepth(self.0 + 1);
        let tree = match head.as_str() {
            "var" => Tree::Var(need(seq.next_element()?, &head)?),
            "const" => {
                let v = need(seq.next_element()?, &head)?;
                Tree::Const(v, seq.next_element()?.unwrap_or(Dtype::Index))
            }
            "bool" => Tree::Bool(need(seq.next_element()?, &head)?),
            "invalid" => Tree::Invalid,
            "cast" => {
                let d = need(seq.next_element()?, &head)?;
                Tree::Cast(d, Box::new(need(seq.next_element_seed(below)?, &head)?))
            }
            _ => {
                let mut args = Vec::new();
                while let Some(a) = seq.next_element_seed(AtDepth(self.0 + 1))? {
                    args.push(a);
                }
                return Ok(Tree::Op(head, args));
            }
        };
        if seq.next_element::<IgnoredAny>()?.is_some() {
            return Err(de::Error::custom(format!(
                "`{head}` with too many operands"
            )));
        }
        Ok(tree)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    #[test]
    fn a_bool_var_may_leave_out_its_bounds_and_an_index_var_may_not() {
        let var = |v: Value| serde_json::from_value::<Var>(v);
        let b = var(json!({"name": "p", "dtype": "bool"})).unwrap();
        assert_eq!((b.lo, b.hi), (0, 1));
        let x = var(json!({"name": "x", "lo": -2, "hi": 3})).unwrap();
        assert_eq!(x.dtype, VarDtype::Index);
        let e = var(json!({"name": "x", "hi": 3})).unwrap_err().to_string();
        assert!(e.contains("`x` needs integer bounds"), "{e}");
    }

    #[test]
    fn every_tree_form_writes_and_reads_back_the_same() {
        let t = json!([
            "where",
            ["lt", ["var", "x"], ["const", -3]],
            ["cast", "i64", ["const", 7, "i32"]],
            ["add", ["bool", true], ["invalid"]]
        ]);
        let tree = Tree::deserialize(&t).unwrap();
        assert_eq!(serde_json::to_value(&tree).unwrap(), t);
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
