//! The wire codec: a case as a request line, and an adapter's lines (its
//! hello, answers, runs, reproducers, bounds) read through the protocol's
//! wire types (`tileproof_adapter`, their one definition) and built back
//! into the case's graph within a node budget, or refused as malformed.

use super::lines::BadLine;
use crate::backend::{self, Attachment, PointRun, Run, Script};
use crate::bounds::PeerBounds;
use crate::kind::Kind;
use crate::subject::{Answer, Integers, Profile, Refusal};
use engine::dtype::{DType, Width};
use engine::ir::{Graph, NodeId, Op};
use engine::print;
use engine::semantics::Partial;
use tileproof_adapter::{self as wire, Reply, Request, Tree};

pub use wire::PROTOCOL;

/// The semantics profile a hello declares.
pub(super) fn profile_of(h: &wire::Profile) -> Result<Profile, Malformed> {
    let mut ops = Vec::new();
    for name in &h.ops {
        // An op this side does not know is one it never sends.
        if let Some(op) = Op::by_name(name) {
            if op.class() != engine::op::Class::Cast {
                ops.push(op);
            }
        }
    }
    let integers = match &h.integers {
        wire::Integers::Unbounded => Integers::Unbounded,
        wire::Integers::Int32 => Integers::Fixed(Width(32)),
        wire::Integers::Int64 => Integers::Fixed(Width(64)),
        other => return Err(Malformed::Integers(wire_name(other))),
    };
    let partial = match &h.partial_ops {
        wire::PartialOps::Undefined => Partial::Undefined,
        wire::PartialOps::Unspecified => Partial::Unspecified,
        wire::PartialOps::Other(name) => return Err(Malformed::PartialOps(name.clone())),
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
        positive_divisors: h.input_language.positive_divisors,
        defined_everywhere: h.input_language.defined_everywhere,
        partial,
    })
}

/// The name a wire enum is written as.
fn wire_name(v: &impl serde::Serialize) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        other => format!("{other:?}"),
    }
}

/// The nodes an answer may have (its expressions as trees, all of them;
/// as text, its operators and operands): this many per node of the
/// case's source, within `[NODE_BUDGET_MIN, NODE_BUDGET_MAX]`. A bigger
/// answer is garbage, not a graph built without bound.
pub const NODE_BUDGET_PER_SOURCE_NODE: usize = 64;
pub const NODE_BUDGET_MIN: usize = 10_000;
pub const NODE_BUDGET_MAX: usize = 1_000_000;

/// The node budget of an answer to a source of `source_nodes` nodes.
pub fn node_budget(source_nodes: usize) -> usize {
    source_nodes
        .saturating_mul(NODE_BUDGET_PER_SOURCE_NODE)
        .clamp(NODE_BUDGET_MIN, NODE_BUDGET_MAX)
}

/// Requests longer than this are not sent (the case is declined): a
/// generated case expanded from its DAG into a tree can grow large.
pub(super) const MAX_REQUEST_BYTES: usize = 1 << 20;

/// Why a protocol line (a hello, an answer, a request) is not valid.
#[derive(Debug, thiserror::Error)]
pub enum Malformed {
    #[error("not a hello: {0}")]
    NotAHello(serde_json::Error),
    #[error("protocol {0}, but this tileproof speaks {PROTOCOL}")]
    Protocol(u64),
    #[error("integers `{0}` is not one this tileproof checks (unbounded, int32, int64)")]
    Integers(String),
    #[error("partial_ops `{0}` is not one this tileproof knows (undefined, unspecified)")]
    PartialOps(String),
    #[error("not an answer ({0})")]
    NotAnAnswer(serde_json::Error),
    #[error("the answer is to id {got:?}, not {want}")]
    WrongId { got: Option<u64>, want: u64 },
    #[error("{got} {what} for {want} expressions")]
    Count {
        got: usize,
        what: &'static str,
        want: usize,
    },
    #[error("no trees, exprs, unsupported or error")]
    Empty,
    #[error("`{text}`: {err}")]
    Expr {
        text: String,
        err: engine::parse::ParseError,
    },
    #[error("an answer of dtype {got} for an expression of dtype {want}")]
    Dtype { got: DType, want: DType },
    #[error("a tree nested more than {MAX_TREE_DEPTH} deep")]
    TooDeep,
    #[error("an answer of more than {0} nodes (the node budget for this case)")]
    TooBig(usize),
    #[error(transparent)]
    Line(#[from] BadLine),
    #[error("`{head}` with {args} arguments")]
    Arity { head: String, args: usize },
    #[error("{value} does not fit {dtype}")]
    OutOfRange { value: i64, dtype: DType },
    #[error("`{0}` is not a reproducer's extension (1 to 8 letters or digits, not txt)")]
    Extension(String),
    #[error("{0}")]
    Bounds(String),
    #[error("`{0}` is not a variable of the case")]
    UnknownVar(String),
    #[error("`{0}` is not an op")]
    UnknownOp(String),
    #[error("variable `{name}` has dtype `{dtype}`")]
    VarDtype { name: String, dtype: String },
    #[error(transparent)]
    Type(#[from] engine::ir::TypeError),
    #[error("{0}")]
    Refused(#[from] Refusal),
}

/// How deep a protocol tree may nest: an adversarial answer must not
/// overflow the stack.
const MAX_TREE_DEPTH: usize = 10_000;

/// Reads an answer line to request `id`; `Err` when it is not one.
pub(super) fn reply(line: &str, id: u64) -> Result<Reply, Malformed> {
    let r: Reply = serde_json::from_str(line).map_err(Malformed::NotAnAnswer)?;
    if r.id != Some(id) {
        return Err(Malformed::WrongId {
            got: r.id,
            want: id,
        });
    }
    Ok(r)
}

/// Reads the answer to `bounds` request `id`: the bounds, with the peer's
/// ops when it names them (none when the peer declines the case:
/// `unsupported`), or the peer's `error`; `Err` when the line is not a
/// valid answer.
pub(super) fn read_bounds(
    line: &str,
    id: u64,
) -> Result<Result<Option<PeerBounds>, String>, Malformed> {
    let r = reply(line, id)?;
    if let Some(e) = r.error {
        return Ok(Err(e));
    }
    if r.unsupported.is_some() {
        return Ok(Ok(None));
    }
    let b = PeerBounds {
        bounds: r.bounds.ok_or(Malformed::Empty)?,
        ops: r.ops,
    };
    crate::bounds::ops_match(&b).map_err(Malformed::Bounds)?;
    Ok(Ok(Some(b)))
}

/// A case as the wire carries it, with what the rest of the exchange
/// needs from the same walk of its roots.
pub struct Encoded {
    /// The request for the case (the caller adds what else it asks).
    pub request: Request,
    /// The variables the roots reach, in declaration order: the order of
    /// a point's values on the wire.
    pub vars: Vec<u32>,
    /// The node budget of an answer to it ([`node_budget`]).
    pub budget: usize,
}

/// The request for case `id`: `roots` of `g`, as text and as trees (the
/// caller adds what else it asks: `run`, `reproducer`, ...; `tileproof
/// bench` gives these lines to its TVM timing script).
pub fn request(g: &Graph, roots: &[NodeId], id: u64) -> Request {
    encode(g, roots, id, None).request
}

/// [`request`], with the variables and the answer's node budget found by
/// the same walk (one walk of the roots per request, not one per use); the
/// roots' expressions taken from `printed` when they are printed already
/// (one per root, as [`print::expr`] writes it).
pub fn encode(g: &Graph, roots: &[NodeId], id: u64, printed: Option<Vec<String>>) -> Encoded {
    let (used, size) = g.reachable_vars_and_size(roots);
    let vars = used
        .iter()
        .map(|&v| {
            let d = g.var(v);
            let dtype = match d.dtype {
                DType::Index => wire::VarDtype::Index,
                DType::Bool => wire::VarDtype::Bool,
                other => wire::VarDtype::Other(other.name().to_string()),
            };
            wire::Var {
                name: d.name.clone(),
                dtype,
                lo: d.lo,
                hi: d.hi,
            }
        })
        .collect();
    Encoded {
        request: Request {
            id,
            vars: Some(vars),
            exprs: Some(
                printed.unwrap_or_else(|| roots.iter().map(|&r| print::expr(g, r)).collect()),
            ),
            trees: Some(roots.iter().map(|&r| tree(g, r)).collect()),
            ..Request::default()
        },
        vars: used,
        budget: node_budget(size),
    }
}

/// A request as its line.
pub fn line(req: &Request) -> String {
    serde_json::to_string(req).expect("a request serializes")
}

/// A case's wire form, made once and spliced into every request about it
/// (the protocol is stateless: each request carries its case).
pub(super) struct Wire {
    /// The case's fields as a request's line writes them, right after its
    /// id: `"vars":[..],"exprs":[..],"trees":[..]`.
    fields: String,
    /// [`Encoded::vars`].
    pub vars: Vec<u32>,
    /// [`Encoded::budget`].
    pub budget: usize,
}

impl Wire {
    /// Its size in memory, roughly.
    pub(super) fn bytes(&self) -> usize {
        self.fields.len() + 4 * self.vars.len() + std::mem::size_of::<Wire>()
    }
}

/// The wire form of `roots` of `g`, their expressions `printed` when
/// they are printed already ([`encode`]).
pub(super) fn wire(g: &Graph, roots: &[NodeId], printed: Option<Vec<String>>) -> Wire {
    let e = encode(g, roots, 0, printed);
    let whole = line(&e.request);
    let fields = whole
        .strip_prefix("{\"id\":0,")
        .and_then(|f| f.strip_suffix('}'))
        .expect("a case request writes its id, then its case's fields")
        .to_string();
    Wire {
        fields,
        vars: e.vars,
        budget: e.budget,
    }
}

/// The line of `req` about case `w`: `req`'s own line with the case's
/// fields where a request writes them, after the id (the line `req`
/// would have with `w`'s vars, exprs and trees in it).
pub(super) fn line_about(w: &Wire, req: &Request) -> String {
    debug_assert!(req.vars.is_none() && req.exprs.is_none() && req.trees.is_none());
    let own = line(req);
    let after_id = own.len() - past_id(&own).len();
    let (head, rest) = own.split_at(after_id);
    let mut out = String::with_capacity(own.len() + w.fields.len() + 1);
    out.push_str(head);
    out.push(',');
    out.push_str(&w.fields);
    out.push_str(rest);
    out
}

/// A request's line past its id, the first field a request writes: the
/// same request asked again, under another id, has the same rest.
pub(super) fn past_id(line: &str) -> &str {
    line.strip_prefix("{\"id\":").map_or(line, |rest| {
        rest.trim_start_matches(|c: char| c.is_ascii_digit())
    })
}

/// A concrete dtype as the wire names it.
fn wire_dtype(d: DType) -> wire::Dtype {
    wire::Dtype::by_name(d.name()).expect("a concrete dtype has a wire name")
}

/// A node as a protocol tree.
pub(super) fn tree(g: &Graph, id: NodeId) -> Tree {
    let n = g.node(id);
    match n.op {
        Op::Const(c) if n.dtype == DType::Bool => Tree::Bool(c != 0),
        Op::Const(c) => Tree::Const(c, wire_dtype(n.dtype)),
        Op::Var(v) => Tree::Var(g.var(v).name.clone()),
        Op::Invalid => Tree::Invalid,
        Op::Cast => Tree::Cast(wire_dtype(n.dtype), Box::new(tree(g, n.src()[0]))),
        op => Tree::Op(
            op.name().to_string(),
            n.src().iter().map(|&s| tree(g, s)).collect(),
        ),
    }
}

/// Reads an answer line to case `id` into `g`: the answer, or the peer's
/// `error` answer as its refusal (`PeerError`); `Err` says why it is not a
/// valid answer.
/// `rules`: the peer's rule names (empty when it lists none); an answer's
/// `fired` counts are indexed like them, names it did not list ignored.
pub(super) fn read_answer(
    g: &mut Graph,
    roots: &[NodeId],
    id: u64,
    line: &str,
    rules: &[String],
) -> Result<Result<Answer, Refusal>, Malformed> {
    let budget = node_budget(g.size_of(roots));
    read_reply(g, roots, budget, reply(line, id)?, rules, false)
}

/// [`read_answer`] of an answer already read from its line, within
/// `budget` nodes ([`Encoded::budget`]); with `beside` (a `with_bounds`
/// request's, protocol section 7), the bounds it carries beside its
/// expressions are its [`Answer::Simplified`]'s `bounds` when they are
/// there and well formed (else none: the caller asks them alone).
pub(super) fn read_reply(
    g: &mut Graph,
    roots: &[NodeId],
    budget: usize,
    r: Reply,
    rules: &[String],
    beside: bool,
) -> Result<Result<Answer, Refusal>, Malformed> {
    if let Some(e) = r.error {
        return Ok(Err(Refusal {
            kind: Kind::PeerError,
            message: e,
        }));
    }
    if let Some(u) = r.unsupported {
        return Ok(Ok(Answer::Unsupported(u)));
    }
    if let Some(d) = r.declined {
        return Ok(Ok(Answer::Declined(d)));
    }
    let mut budget = Budget::new(budget);
    let built: Vec<NodeId> = match (r.trees, r.exprs) {
        (Some(trees), _) => {
            if trees.len() != roots.len() {
                return Err(Malformed::Count {
                    got: trees.len(),
                    what: "trees",
                    want: roots.len(),
                });
            }
            trees
                .iter()
                .map(|t| build_tree(g, t, 0, &mut budget))
                .collect::<Result<_, _>>()?
        }
        (None, Some(exprs)) => {
            if exprs.len() != roots.len() {
                return Err(Malformed::Count {
                    got: exprs.len(),
                    what: "exprs",
                    want: roots.len(),
                });
            }
            // Counted before parsing: the parser's tokens and syntax tree
            // are bounded by the budget, not only by the line's length.
            let tokens: usize = exprs.iter().map(|e| text_nodes(e)).sum();
            budget.take(tokens)?;
            let mut out = Vec::new();
            for e in &exprs {
                let bad = |err| Malformed::Expr {
                    text: e.clone(),
                    err,
                };
                let ast = engine::parse::parse_ast(e, 1).map_err(bad)?;
                out.push(engine::parse::build(g, &ast).map_err(bad)?);
            }
            out
        }
        (None, None) => return Err(Malformed::Empty),
    };
    for (&r, &b) in roots.iter().zip(&built) {
        let (want, got) = (g.node(r).dtype, g.node(b).dtype);
        if want != got {
            return Err(Malformed::Dtype { got, want });
        }
    }
    let mut counts = vec![0; rules.len()];
    for (name, n) in r.fired.unwrap_or_default() {
        if let Some(i) = rules.iter().position(|r| *r == name) {
            counts[i] += n as usize;
        }
    }
    let bounds = r
        .bounds
        .filter(|_| beside)
        .map(|bounds| PeerBounds { bounds, ops: r.ops });
    Ok(Ok(Answer::Simplified {
        roots: built,
        counts,
        patterns: r.patterns.unwrap_or_default(),
        bounds: bounds.filter(|b| crate::bounds::ops_match(b).is_ok()),
    }))
}

/// Reads the answer to `run` request `id` over `roots` expressions at
/// `points` points: the run, or the adapter's own `error`; `Err` when the
/// line is not a valid answer.
pub(super) fn read_run(
    line: &str,
    id: u64,
    roots: usize,
    points: usize,
) -> Result<Result<Run, String>, Malformed> {
    let r = reply(line, id)?;
    if let Some(e) = r.error {
        return Ok(Err(e));
    }
    if let Some(e) = r.compile_error {
        return Ok(Ok(Run::CompileError(e)));
    }
    if let Some(u) = r.unsupported {
        return Ok(Ok(Run::Unsupported(u)));
    }
    let results = r.results.ok_or(Malformed::Empty)?;
    if results.len() != points {
        return Err(Malformed::Count {
            got: results.len(),
            what: "results",
            want: points,
        });
    }
    let point = |p: wire::PointRun| -> Result<PointRun, Malformed> {
        Ok(match p {
            wire::PointRun::Trap(sig) => PointRun::Trap(sig),
            wire::PointRun::Timeout(t) => PointRun::Timeout(t),
            wire::PointRun::Values(vals) if vals.len() != roots => {
                return Err(Malformed::Count {
                    got: vals.len(),
                    what: "values",
                    want: roots,
                });
            }
            wire::PointRun::Values(vals) => PointRun::Values(
                vals.into_iter()
                    .map(|v| match v {
                        wire::RunValue::Int(i) => backend::Value::Int(i as i128),
                        wire::RunValue::Bool(b) => backend::Value::Bool(b),
                        wire::RunValue::Invalid => backend::Value::Invalid,
                    })
                    .collect(),
            ),
        })
    };
    let runs = results
        .into_iter()
        .map(point)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Ok(Run::Results(runs)))
}

/// Reads the answer to `reproducer` request `id`: the script, or why the
/// adapter wrote none; `Err` when the line is not a valid answer.
pub(super) fn read_script(line: &str, id: u64) -> Result<Result<Script, String>, Malformed> {
    let r = reply(line, id)?;
    let extension = r
        .extension
        .unwrap_or_else(|| Script::DEFAULT_EXTENSION.to_string());
    if !Script::valid_extension(&extension) {
        return Err(Malformed::Extension(extension));
    }
    let mut attachments = Vec::new();
    for (ext, text) in r.attachments.unwrap_or_default() {
        if !Script::valid_extension(&ext) || ext == extension {
            return Err(Malformed::Extension(ext));
        }
        attachments.push(Attachment {
            extension: ext,
            text,
        });
    }
    match (r.script, r.unsupported.or(r.error)) {
        (Some(text), _) => Ok(Ok(Script {
            text,
            extension,
            attachments,
        })),
        (None, Some(e)) => Ok(Err(e)),
        (None, None) => Err(Malformed::Empty),
    }
}

/// One line an adapter printed, read as each message this module reads
/// (a hello, an answer to the case `g`'s `roots` as id 7, a `run`, a
/// `reproducer` and a `bounds` answer): for the `protocol` fuzz target.
/// Errors are fine, panics are not, and an answer grows `g` by no more
/// than its node budget.
pub(crate) fn read_every_way(g: &mut Graph, roots: &[NodeId], line: &str) {
    if let Ok(h) = serde_json::from_str::<wire::Hello>(line) {
        let _ = profile_of(&h.profile);
    }
    let before = g.len();
    let budget = node_budget(g.size_of(roots));
    let _ = read_answer(g, roots, 7, line, &["r".to_string()]);
    assert!(
        g.len() - before <= budget,
        "an answer built {} nodes, over its budget of {budget}",
        g.len() - before
    );
    let _ = read_run(line, 7, roots.len(), 2);
    let _ = read_script(line, 7);
    let _ = read_bounds(line, 7);
}

/// An upper bound on the nodes a text expression builds: its operands
/// (runs of letters, digits and `_`) and its operator characters, every
/// character but spaces, parentheses and commas. Every node of the
/// expression comes from at least one of them.
fn text_nodes(text: &str) -> usize {
    let mut n = 0;
    let mut in_word = false;
    for c in text.chars() {
        let word = c.is_alphanumeric() || c == '_';
        let operator = !word && !c.is_whitespace() && !matches!(c, '(' | ')' | ',');
        if (word && !in_word) || operator {
            n += 1;
        }
        in_word = word;
    }
    n
}

/// The nodes an answer may still build, of its whole budget.
struct Budget {
    pub(super) left: usize,
    total: usize,
}

impl Budget {
    fn new(total: usize) -> Budget {
        Budget { left: total, total }
    }

    /// Takes `n` nodes, or says the answer is over its budget.
    fn take(&mut self, n: usize) -> Result<(), Malformed> {
        self.left = self
            .left
            .checked_sub(n)
            .ok_or(Malformed::TooBig(self.total))?;
        Ok(())
    }
}

/// Builds a protocol tree into `g` (the case's variables are declared
/// there), at most [`NODE_BUDGET_MAX`] nodes.
pub fn from_tree(g: &mut Graph, t: &Tree) -> Result<NodeId, Malformed> {
    build_tree(g, t, 0, &mut Budget::new(NODE_BUDGET_MAX))
}

/// Builds a protocol tree into `g`, each node of it taken from `budget`.
fn build_tree(
    g: &mut Graph,
    t: &Tree,
    depth: usize,
    budget: &mut Budget,
) -> Result<NodeId, Malformed> {
    if depth > MAX_TREE_DEPTH {
        return Err(Malformed::TooDeep);
    }
    budget.take(1)?;
    let dtype =
        |d: wire::Dtype| DType::from_name(d.name()).expect("a wire dtype is one of the engine's");
    match t {
        Tree::Const(v, wire::Dtype::Index) => Ok(g.cnst(*v, DType::Index)),
        Tree::Const(v, d) => {
            let d = dtype(*d);
            let (lo, hi) = d.bounds();
            if !(lo <= *v && *v <= hi) {
                return Err(Malformed::OutOfRange {
                    value: *v,
                    dtype: d,
                });
            }
            Ok(g.cnst(*v, d))
        }
        Tree::Cast(d, x) => {
            let x = build_tree(g, x, depth + 1, budget)?;
            Ok(g.try_mk(Op::Cast, Some(dtype(*d)), &[x])?)
        }
        Tree::Bool(b) => Ok(g.bool_const(*b)),
        Tree::Invalid => Ok(g.invalid()),
        Tree::Var(name) => {
            let v = g
                .var_named(name)
                .ok_or_else(|| Malformed::UnknownVar(name.clone()))?;
            Ok(g.var_node(v))
        }
        Tree::Op(name, args) => {
            let op = Op::by_name(name).ok_or_else(|| Malformed::UnknownOp(name.clone()))?;
            if args.len() != op.arity() {
                return Err(Malformed::Arity {
                    head: name.clone(),
                    args: args.len(),
                });
            }
            let src: Vec<NodeId> = args
                .iter()
                .map(|a| build_tree(g, a, depth + 1, budget))
                .collect::<Result<_, _>>()?;
            Ok(g.try_mk(op, None, &src)?)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_spliced_with_its_case_is_the_line_written_whole() {
        let p = engine::parse::parse_program(
            "var x in [0, 3]\nvar b : bool\nexpr where(b, x % 2, invalid)\nexpr x * 4\n",
        )
        .unwrap();
        let w = wire(&p.graph, &p.outputs, None);
        let whole = |id: u64, with: Request| line(&Request { id, ..with });
        let case = |id| request(&p.graph, &p.outputs, id);
        // A simplification request: the case alone.
        assert_eq!(
            line_about(
                &w,
                &Request {
                    id: 3,
                    ..Request::default()
                }
            ),
            line(&case(3))
        );
        // Requests with fields of their own, written after the case's.
        let run = Request {
            id: 41,
            run: Some(tileproof_adapter::RunRequest {
                backend: "c".into(),
                points: vec![vec![1, 0]],
            }),
            ..Request::default()
        };
        assert_eq!(
            line_about(&w, &run),
            whole(
                41,
                Request {
                    run: run.run.clone(),
                    ..case(41)
                }
            )
        );
        let bounds = Request {
            id: 9,
            with_bounds: Some(tileproof_adapter::Empty {}),
            ..Request::default()
        };
        assert_eq!(
            line_about(&w, &bounds),
            whole(
                9,
                Request {
                    with_bounds: bounds.with_bounds,
                    ..case(9)
                }
            )
        );
        assert_eq!(w.vars.len(), 2);
        assert_eq!(w.budget, encode(&p.graph, &p.outputs, 0, None).budget);
    }

    #[test]
    fn a_case_read_back_from_its_text_and_given_its_expressions_writes_the_line_encoded_anew() {
        // A shrink candidate as the judge has it: its text, read back.
        let p = engine::parse::parse_program(
            "var x in [-9, 7]\nvar y in [1, 4]\nvar b : bool\n\
             expr where(b, -x // 3 - -5, invalid)\nexpr -(x mod y) * -1 < max(y, 2) && !(b)\n",
        )
        .unwrap();
        let (text, printed) = crate::corpus::case_text(&p.graph, &p.outputs, None);
        let back = engine::parse::parse_program(&text).unwrap();
        assert_eq!(printed.len(), 2);
        let given = wire(&back.graph, &back.outputs, Some(printed));
        let req = |id| Request {
            id,
            ..Request::default()
        };
        assert_eq!(
            line_about(&given, &req(5)),
            line(&request(&back.graph, &back.outputs, 5))
        );
        // The expressions given are the ones written.
        let other = wire(
            &back.graph,
            &back.outputs,
            Some(vec!["x".into(), "y".into()]),
        );
        assert!(line_about(&other, &req(5)).contains(r#""exprs":["x","y"]"#));
    }

    #[test]
    fn a_request_past_its_id_is_the_same_under_any_id() {
        let p = engine::parse::parse_program("var x in [0, 3]\nexpr x + 1\n").unwrap();
        let (a, b) = (
            request(&p.graph, &p.outputs, 7),
            request(&p.graph, &p.outputs, 1234),
        );
        let (la, lb) = (line(&a), line(&b));
        assert_ne!(la, lb);
        assert_eq!(past_id(&la), past_id(&lb));
        assert!(past_id(&la).starts_with(",\"vars\":"), "{la}");
        let other = engine::parse::parse_program("var x in [0, 3]\nexpr x + 2\n").unwrap();
        let lc = line(&request(&other.graph, &other.outputs, 7));
        assert_ne!(past_id(&la), past_id(&lc));
    }
    use engine::parse::parse_program;
    use serde_json::{json, Value};

    #[test]
    fn a_request_carries_text_and_trees_and_an_answer_builds_back() {
        let mut p = parse_program(
            "var r0 in [0, 7]\nvar c: bool\nexpr where(c, (r0 * 4 + 3) // 4, invalid)\n",
        )
        .unwrap();
        let line = line(&request(&p.graph, &p.outputs, 7));
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["id"], 7);
        assert_eq!(v["exprs"][0], "where(c, (r0 * 4 + 3) // 4, invalid)");
        assert_eq!(v["trees"][0][0], "where");
        assert_eq!(v["vars"][0]["name"], "r0");
        let answer = r#"{"id": 7, "trees": [["where", ["var", "c"], ["var", "r0"], ["invalid"]]]}"#;
        let Ok(Ok(Answer::Simplified { roots, .. })) =
            read_answer(&mut p.graph, &p.outputs, 7, answer, &[])
        else {
            panic!("not an answer")
        };
        assert_eq!(print::expr(&p.graph, roots[0]), "where(c, r0, invalid)");
        let text = r#"{"id": 7, "exprs": ["where(c, r0 + 0, invalid)"]}"#;
        assert!(matches!(
            read_answer(&mut p.graph, &p.outputs, 7, text, &[]),
            Ok(Ok(Answer::Simplified { .. }))
        ));
    }

    #[test]
    fn bad_answers_are_garbage_with_a_reason() {
        let mut p = parse_program("var r0 in [0, 7]\nexpr r0 + 1\n").unwrap();
        let roots = p.outputs.clone();
        let mut bad = |line: &str| match read_answer(&mut p.graph, &roots, 3, line, &[]) {
            Err(why) => why,
            Ok(_) => panic!("accepted {line}"),
        };
        assert!(matches!(bad("not json"), Malformed::NotAnAnswer(_)));
        assert!(matches!(
            bad(r#"{"id": 4, "trees": [["var", "r0"]]}"#),
            Malformed::WrongId { want: 3, .. }
        ));
        assert!(matches!(
            bad(r#"{"id": 3, "trees": [["var", "x"]]}"#),
            Malformed::UnknownVar(v) if v == "x"
        ));
        assert!(matches!(
            bad(r#"{"id": 3, "trees": [["lt", ["var", "r0"], ["const", 1]]]}"#),
            Malformed::Dtype { .. }
        ));
        assert!(matches!(
            bad(r#"{"id": 3, "trees": [["add", ["var", "r0"]]]}"#),
            Malformed::Arity { args: 1, .. }
        ));
        assert!(bad(r#"{"id": 3, "exprs": ["r0 +"]}"#)
            .to_string()
            .contains("r0 +"));
        assert!(matches!(bad(r#"{"id": 3}"#), Malformed::Empty));
    }

    #[test]
    fn an_answer_over_the_node_budget_is_garbage() {
        let mut p = parse_program("var r0 in [0, 7]\nexpr r0 + 1\n").unwrap();
        let roots = p.outputs.clone();
        let budget = node_budget(3);
        assert_eq!(budget, NODE_BUDGET_MIN);
        let sum = |n: usize| vec!["r0"; n].join(" + ");
        let text = |n: usize| format!(r#"{{"id": 3, "exprs": ["{}"]}}"#, sum(n));
        // n operands and n - 1 operators.
        let at = budget.div_ceil(2);
        assert!(read_answer(&mut p.graph, &roots, 3, &text(at), &[]).is_ok());
        assert!(matches!(
            read_answer(&mut p.graph, &roots, 3, &text(at + 1), &[]),
            Err(Malformed::TooBig(b)) if b == budget
        ));
        // A balanced tree: serde_json refuses nesting past 128 levels.
        let wide = |n: usize| {
            let mut t = json!(["var", "r0"]);
            let mut level = vec![t.clone(); n];
            while level.len() > 1 {
                level = level
                    .chunks(2)
                    .map(|c| json!(["add", c[0], c.get(1).unwrap_or(&c[0])]))
                    .collect();
            }
            t = level.pop().unwrap();
            json!({"id": 3, "trees": [t]}).to_string()
        };
        assert!(read_answer(&mut p.graph, &roots, 3, &wide(1 << 12), &[]).is_ok());
        assert!(matches!(
            read_answer(&mut p.graph, &roots, 3, &wide(1 << 13), &[]),
            Err(Malformed::TooBig(b)) if b == budget
        ));
        // 7 nodes; `//` counts twice: an upper bound.
        assert_eq!(text_nodes("where(p, -x, y_1 // 12)"), 8);
    }
}
