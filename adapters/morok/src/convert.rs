//! tileproof trees to Morok UOps and back.
//!
//! A case is built with Morok's own public constructors, the way its
//! users and its tests build index expressions (`try_add`, `try_div`,
//! `neg`, `try_where`, `valid`...), and the same walk spells those calls as
//! Rust source for a reproducer ([`Spell`]): one table ([`BINARY`]) says
//! how each tileproof op is built, for both.
//!
//! Variables: an index variable is a `DEFINE_VAR(name, lo, hi)`, or a loop
//! `RANGE(hi + 1)` when its lower bound is 0 and [`VarMode`] says so (Morok's
//! rules treat the two differently: a RANGE is a loop index, and some rules
//! only fire on one of them).

use morok_dtype::DType;
use morok_ir::types::{BinaryOp, TernaryOp, UnaryOp};
use morok_ir::{ConstValue, Op, UOp};
use std::collections::HashMap;
use std::sync::Arc;
use tileproof_adapter::{Case, Dtype, Refuse, Tree, VarDtype};

/// Which index variables become loop RANGEs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarMode {
    /// A variable with lower bound 0 whose name ends in an even number
    /// (`r0`, `r2`, ...) is a RANGE, every other one a DEFINE_VAR: cases
    /// meet both, and a variable keeps its kind while a case is shrunk.
    Mixed,
    /// Every variable with lower bound 0 is a RANGE.
    Range,
    /// Every variable is a DEFINE_VAR.
    Define,
}

impl VarMode {
    pub fn by_name(s: &str) -> Option<VarMode> {
        match s {
            "mixed" => Some(VarMode::Mixed),
            "range" => Some(VarMode::Range),
            "define" => Some(VarMode::Define),
            _ => None,
        }
    }
}

/// How one variable of a case is built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VarKind {
    Define,
    /// `RANGE(end)` with this axis id (the number its name ends in, so two
    /// variables never share one).
    Range {
        axis: usize,
        end: i64,
    },
}

#[derive(Clone, Debug)]
pub struct VarPlan {
    pub name: String,
    pub lo: i64,
    pub hi: i64,
    pub kind: VarKind,
}

/// The number a name ends in (`r12` -> 12).
fn trailing_number(name: &str) -> Option<usize> {
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    (digits > 0)
        .then(|| name[name.len() - digits..].parse().ok())
        .flatten()
}

/// How each variable of `case` is built under `mode`.
pub fn plan_vars(case: &Case, mode: VarMode) -> Result<Vec<VarPlan>, Refuse> {
    let mut used_axes = Vec::new();
    case.vars
        .iter()
        .map(|v| {
            if v.dtype == VarDtype::Bool {
                return Err(Refuse::Unsupported(
                    "bool variables are not in Morok's profile".into(),
                ));
            }
            let axis = trailing_number(&v.name).filter(|a| !used_axes.contains(a));
            let wants_range = v.lo == 0
                && v.hi < i64::MAX
                && match mode {
                    VarMode::Mixed => axis.is_some_and(|a| a % 2 == 0),
                    VarMode::Range => true,
                    VarMode::Define => false,
                };
            let kind = match (wants_range, axis) {
                (true, Some(axis)) => {
                    used_axes.push(axis);
                    VarKind::Range {
                        axis,
                        end: v.hi + 1,
                    }
                }
                (true, None) => {
                    // A name without a number: an axis id of its own.
                    let axis = 1_000_000 + used_axes.len();
                    used_axes.push(axis);
                    VarKind::Range {
                        axis,
                        end: v.hi + 1,
                    }
                }
                _ => VarKind::Define,
            };
            Ok(VarPlan {
                name: v.name.clone(),
                lo: v.lo,
                hi: v.hi,
                kind,
            })
        })
        .collect()
}

type Bin = fn(&Arc<UOp>, &Arc<UOp>) -> morok_ir::Result<Arc<UOp>>;

/// tileproof's binary ops as Morok's constructors: the name of the call in
/// Rust source, and the call. `div` and `rem` are Morok's truncating
/// `Idiv` and C remainder `Mod`; `and`/`or`/`xor` take bools.
pub const BINARY: &[(&str, &str, Bin)] = &[
    ("add", "try_add", UOp::try_add),
    ("sub", "try_sub", UOp::try_sub),
    ("mul", "try_mul", UOp::try_mul),
    ("div", "try_div", UOp::try_div),
    ("rem", "try_mod", UOp::try_mod),
    ("max", "try_max", UOp::try_max),
    ("lt", "try_cmplt", UOp::try_cmplt),
    ("le", "try_cmple", UOp::try_cmple),
    ("eq", "try_cmpeq", UOp::try_cmpeq),
    ("ne", "try_cmpne", UOp::try_cmpne),
    ("and", "try_and_op", UOp::try_and_op),
    ("or", "try_or_op", UOp::try_or_op),
    ("xor", "try_xor_op", UOp::try_xor_op),
    ("bitand", "try_and_op", UOp::try_and_op),
    ("shl", "try_shl_op", UOp::try_shl_op),
    ("shr", "try_shr_op", UOp::try_shr_op),
];

/// Ops built only to run Morok's own answers on the backend (fast
/// division answers with shifts), not offered to tileproof's generators:
/// what Morok's shifts do with an amount outside `[0, 64)` is not checked.
const NOT_IN_PROFILE: &[&str] = &["bitand", "shl", "shr"];

/// The ops the adapter builds: [`BINARY`], and `neg` (Morok's `neg()`,
/// which builds `MUL(x, -1)`), `min` (Morok has no MIN: see `min_spelling`),
/// `not`, `where`.
pub fn ops() -> Vec<String> {
    let mut v: Vec<&'static str> = BINARY
        .iter()
        .map(|(n, _, _)| *n)
        .filter(|n| !NOT_IN_PROFILE.contains(n))
        .collect();
    v.extend(["neg", "min", "not", "where"]);
    v.into_iter().map(String::from).collect()
}

/// A way to build a case: into UOps, or into Rust source that builds them.
pub trait Build {
    type V: Clone;
    fn var(&mut self, plan: &VarPlan) -> Self::V;
    fn int(&mut self, v: i64) -> Self::V;
    fn boolean(&mut self, b: bool) -> Self::V;
    fn invalid(&mut self) -> Self::V;
    fn binary(
        &mut self,
        row: &(&str, &str, Bin),
        a: &Self::V,
        b: &Self::V,
    ) -> Result<Self::V, Refuse>;
    fn neg(&mut self, a: &Self::V) -> Self::V;
    fn not(&mut self, a: &Self::V) -> Self::V;
    fn min(&mut self, a: &Self::V, b: &Self::V, how: MinSpelling) -> Result<Self::V, Refuse>;
    fn select(&mut self, c: &Self::V, a: &Self::V, b: &Self::V) -> Result<Self::V, Refuse>;
    /// A typed constant or a cast, in answers that lower `index` (a `run`
    /// request sends the peer's own answers back).
    fn typed_int(&mut self, v: i64, d: Dtype) -> Self::V;
    fn cast(&mut self, d: Dtype, x: &Self::V) -> Self::V;
    /// A subtree built before, for a builder that shares them (UOps need
    /// not: Morok hash-conses).
    fn recall(&self, _t: &Tree) -> Option<Self::V> {
        None
    }
    fn remember(&mut self, _t: &Tree, _v: &Self::V) {}
}

/// Morok's dtype for a tileproof integer dtype.
pub fn morok_dtype(d: Dtype) -> DType {
    match d {
        Dtype::Index => DType::Index,
        Dtype::I32 => DType::Int32,
        Dtype::I64 => DType::Int64,
    }
}

/// How a Morok dtype is spelled in Rust source.
fn dtype_source(d: Dtype) -> &'static str {
    match d {
        Dtype::Index => "DType::Index",
        Dtype::I32 => "DType::Int32",
        Dtype::I64 => "DType::Int64",
    }
}

/// Builds `t`: its operands, then the node ([`build_node`]). A builder
/// that remembers subtrees ([`Build::recall`]) builds each distinct one
/// once.
pub fn build_tree<B: Build>(b: &mut B, t: &Tree, plans: &[VarPlan]) -> Result<B::V, Refuse> {
    if let Some(v) = b.recall(t) {
        return Ok(v);
    }
    let args: Vec<B::V> = match t {
        Tree::Cast(_, x) => vec![build_tree(b, x, plans)?],
        Tree::Op(_, args) => args
            .iter()
            .map(|x| build_tree(b, x, plans))
            .collect::<Result<_, _>>()?,
        _ => Vec::new(),
    };
    let v = build_node(b, t, &args, plans)?;
    b.remember(t, &v);
    Ok(v)
}

/// Builds the node at the top of `t` from its operands, already built.
pub fn build_node<B: Build>(
    b: &mut B,
    t: &Tree,
    a: &[B::V],
    plans: &[VarPlan],
) -> Result<B::V, Refuse> {
    Ok(match t {
        Tree::Var(n) => {
            let plan = plans
                .iter()
                .find(|p| &p.name == n)
                .ok_or_else(|| Refuse::Error(format!("bad request: unknown variable {n}")))?;
            b.var(plan)
        }
        Tree::Const(c, Dtype::Index) => b.int(*c),
        Tree::Const(c, d) => b.typed_int(*c, *d),
        Tree::Cast(d, _) => b.cast(*d, &a[0]),
        Tree::Bool(x) => b.boolean(*x),
        Tree::Invalid => b.invalid(),
        Tree::Op(op, _) => {
            let arity = |n: usize| {
                if a.len() == n {
                    Ok(())
                } else {
                    Err(Refuse::Error(format!(
                        "bad request: `{op}` with {} operands",
                        a.len()
                    )))
                }
            };
            match op.as_str() {
                "neg" => {
                    arity(1)?;
                    b.neg(&a[0])
                }
                "not" => {
                    arity(1)?;
                    b.not(&a[0])
                }
                "min" => {
                    arity(2)?;
                    let Tree::Op(_, xs) = t else {
                        unreachable!("an op")
                    };
                    let how = min_spelling(&xs[0], &xs[1], plans).ok_or_else(|| {
                        Refuse::Unsupported(
                            "min of an operand that may be invalid and one that may be i64::MIN: \
                             Morok has no MIN, and neither spelling is exact"
                                .into(),
                        )
                    })?;
                    b.min(&a[0], &a[1], how)?
                }
                "where" => {
                    arity(3)?;
                    b.select(&a[0], &a[1], &a[2])?
                }
                name => {
                    let row = BINARY.iter().find(|r| r.0 == name).ok_or_else(|| {
                        Refuse::Unsupported(format!("op {name} is not in Morok's profile"))
                    })?;
                    arity(2)?;
                    b.binary(row, &a[0], &a[1])?
                }
            }
        }
    })
}

fn refused(e: morok_ir::Error) -> Refuse {
    Refuse::Unsupported(format!("Morok's constructor refuses it: {e}"))
}

/// Builds UOps.
pub struct Uops;

/// A variable as Morok's constructors make it.
pub fn var_uop(p: &VarPlan) -> Arc<UOp> {
    match p.kind {
        VarKind::Define => UOp::define_var(p.name.clone(), p.lo, p.hi),
        VarKind::Range { axis, end } => UOp::range_const(end, axis),
    }
}

/// How `min(a, b)` is spelled: Morok has no MIN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MinSpelling {
    /// `-max(-a, -b)`, Morok's (and tinygrad's) way: exact unless an
    /// operand is `i64::MIN`, whose negation overflows.
    Negation,
    /// `where(a < b, a, b)`: exact unless an operand is `invalid` (the
    /// comparison of a masked lane is unconstrained).
    Select,
}

/// The spelling of `min(a, b)` that is exact for these operands, by the
/// adapter's own interval analysis of the trees ([`int_range`]; Morok's
/// `vmin` is what is under test, so it does not decide); `None` when an
/// operand may be `invalid` and another may be `i64::MIN` (neither is).
pub fn min_spelling(a: &Tree, b: &Tree, plans: &[VarPlan]) -> Option<MinSpelling> {
    let may_be_min = |t: &Tree| int_range(t, plans).0 <= i64::MIN as i128;
    let gated = |t: &Tree| t.preorder().iter().any(|n| matches!(n, Tree::Invalid));
    match (gated(a) || gated(b), may_be_min(a) || may_be_min(b)) {
        (false, true) => Some(MinSpelling::Select),
        (true, true) => None,
        (_, false) => Some(MinSpelling::Negation),
    }
}

/// A sound range of the integer values `t` takes where it is valid and
/// defined (exact integers; `i128`'s extremes mean unbounded).
pub fn int_range(t: &Tree, plans: &[VarPlan]) -> (i128, i128) {
    const ALL: (i128, i128) = (i128::MIN, i128::MAX);
    let r = |x: &Tree| int_range(x, plans);
    let corners =
        |(a, b): (i128, i128), (c, d): (i128, i128), f: fn(i128, i128) -> Option<i128>| {
            let v = [f(a, c), f(a, d), f(b, c), f(b, d)];
            if v.iter().any(Option::is_none) {
                return ALL;
            }
            let v: Vec<i128> = v.into_iter().flatten().collect();
            (*v.iter().min().unwrap(), *v.iter().max().unwrap())
        };
    match t {
        Tree::Var(n) => plans
            .iter()
            .find(|p| &p.name == n)
            .map_or(ALL, |p| (p.lo as i128, p.hi as i128)),
        Tree::Const(c, Dtype::Index) => (*c as i128, *c as i128),
        Tree::Op(op, args) => match (op.as_str(), args.as_slice()) {
            ("add", [x, y]) => corners(r(x), r(y), i128::checked_add),
            ("sub", [x, y]) => corners(r(x), r(y), i128::checked_sub),
            ("mul", [x, y]) => corners(r(x), r(y), i128::checked_mul),
            ("neg", [x]) => {
                let (lo, hi) = r(x);
                match (hi.checked_neg(), lo.checked_neg()) {
                    (Some(a), Some(b)) => (a, b),
                    _ => ALL,
                }
            }
            ("max", [x, y]) => {
                let (a, b) = (r(x), r(y));
                (a.0.max(b.0), a.1.max(b.1))
            }
            ("min", [x, y]) => {
                let (a, b) = (r(x), r(y));
                (a.0.min(b.0), a.1.min(b.1))
            }
            // A truncating quotient or remainder is no larger in magnitude
            // than its dividend.
            ("div" | "rem", [x, _]) => {
                let (lo, hi) = r(x);
                match lo.checked_abs() {
                    Some(m) => {
                        let m = m.max(hi.abs());
                        (-m, m)
                    }
                    None => ALL,
                }
            }
            ("where", [_, x, y]) => match (x, y) {
                (Tree::Invalid, y) => r(y),
                (x, Tree::Invalid) => r(x),
                (x, y) => {
                    let (a, b) = (r(x), r(y));
                    (a.0.min(b.0), a.1.max(b.1))
                }
            },
            _ => ALL,
        },
        _ => ALL,
    }
}

impl Build for Uops {
    type V = Arc<UOp>;
    fn var(&mut self, p: &VarPlan) -> Arc<UOp> {
        var_uop(p)
    }
    fn int(&mut self, v: i64) -> Arc<UOp> {
        UOp::index_const(v)
    }
    fn boolean(&mut self, b: bool) -> Arc<UOp> {
        UOp::const_(DType::Bool, ConstValue::Bool(b))
    }
    fn invalid(&mut self) -> Arc<UOp> {
        UOp::invalid_marker()
    }
    fn binary(
        &mut self,
        row: &(&str, &str, Bin),
        a: &Arc<UOp>,
        b: &Arc<UOp>,
    ) -> Result<Arc<UOp>, Refuse> {
        (row.2)(a, b).map_err(refused)
    }
    fn neg(&mut self, a: &Arc<UOp>) -> Arc<UOp> {
        a.neg()
    }
    fn not(&mut self, a: &Arc<UOp>) -> Arc<UOp> {
        a.not()
    }
    fn min(&mut self, a: &Arc<UOp>, b: &Arc<UOp>, how: MinSpelling) -> Result<Arc<UOp>, Refuse> {
        match how {
            MinSpelling::Negation => Ok(a.neg().try_max(&b.neg()).map_err(refused)?.neg()),
            MinSpelling::Select => {
                UOp::try_where(a.try_cmplt(b).map_err(refused)?, a.clone(), b.clone())
                    .map_err(refused)
            }
        }
    }
    fn select(&mut self, c: &Arc<UOp>, a: &Arc<UOp>, b: &Arc<UOp>) -> Result<Arc<UOp>, Refuse> {
        UOp::try_where(c.clone(), a.clone(), b.clone()).map_err(refused)
    }
    fn typed_int(&mut self, v: i64, d: Dtype) -> Arc<UOp> {
        UOp::const_(morok_dtype(d), ConstValue::Int(v))
    }
    fn cast(&mut self, d: Dtype, x: &Arc<UOp>) -> Arc<UOp> {
        x.cast(morok_dtype(d))
    }
}

/// Spells the construction as Rust statements (`let n3 = n1.try_add(&n2).unwrap();`),
/// building the UOps alongside (the spelling of `min` depends on them).
#[derive(Default)]
pub struct Spell {
    pub lines: Vec<String>,
    /// Each distinct subtree is bound once: a reproducer reads as a DAG.
    memo: HashMap<Tree, (String, Arc<UOp>)>,
}

impl Spell {
    fn bind(&mut self, expr: String, u: Arc<UOp>) -> (String, Arc<UOp>) {
        let name = format!("n{}", self.lines.len());
        self.lines.push(format!("let {name} = {expr};"));
        (name, u)
    }
}

impl Build for Spell {
    type V = (String, Arc<UOp>);
    fn var(&mut self, p: &VarPlan) -> Self::V {
        let e = match p.kind {
            VarKind::Define => format!(
                "UOp::define_var({:?}.to_string(), {}, {})",
                p.name,
                i64_literal(p.lo),
                i64_literal(p.hi)
            ),
            VarKind::Range { axis, end } => {
                format!("UOp::range_const({}, {axis})", i64_literal(end))
            }
        };
        let v = self.bind(e, var_uop(p));
        if let Some(l) = self.lines.last_mut() {
            l.push_str(&format!(" // {}", p.name));
        }
        v
    }
    fn int(&mut self, v: i64) -> Self::V {
        self.bind(format!("UOp::index_const({})", i64_literal(v)), Uops.int(v))
    }
    fn boolean(&mut self, b: bool) -> Self::V {
        self.bind(
            format!("UOp::const_(DType::Bool, ConstValue::Bool({b}))"),
            Uops.boolean(b),
        )
    }
    fn invalid(&mut self) -> Self::V {
        self.bind("UOp::invalid_marker()".into(), Uops.invalid())
    }
    fn binary(
        &mut self,
        row: &(&str, &str, Bin),
        a: &Self::V,
        b: &Self::V,
    ) -> Result<Self::V, Refuse> {
        let u = Uops.binary(row, &a.1, &b.1)?;
        Ok(self.bind(format!("{}.{}(&{}).unwrap()", a.0, row.1, b.0), u))
    }
    fn neg(&mut self, a: &Self::V) -> Self::V {
        self.bind(format!("{}.neg()", a.0), Uops.neg(&a.1))
    }
    fn not(&mut self, a: &Self::V) -> Self::V {
        self.bind(format!("{}.not()", a.0), Uops.not(&a.1))
    }
    fn min(&mut self, a: &Self::V, b: &Self::V, how: MinSpelling) -> Result<Self::V, Refuse> {
        let u = Uops.min(&a.1, &b.1, how)?;
        let e = if how == MinSpelling::Negation {
            format!(
                "{}.neg().try_max(&{}.neg()).unwrap().neg() /* min */",
                a.0, b.0
            )
        } else {
            format!(
                "UOp::try_where({0}.try_cmplt(&{1}).unwrap(), {0}.clone(), {1}.clone()).unwrap() /* min */",
                a.0, b.0
            )
        };
        Ok(self.bind(e, u))
    }
    fn select(&mut self, c: &Self::V, a: &Self::V, b: &Self::V) -> Result<Self::V, Refuse> {
        let u = Uops.select(&c.1, &a.1, &b.1)?;
        Ok(self.bind(
            format!(
                "UOp::try_where({}.clone(), {}.clone(), {}.clone()).unwrap()",
                c.0, a.0, b.0
            ),
            u,
        ))
    }
    fn typed_int(&mut self, v: i64, d: Dtype) -> Self::V {
        let e = format!(
            "UOp::const_({}, ConstValue::Int({}))",
            dtype_source(d),
            i64_literal(v)
        );
        self.bind(e, Uops.typed_int(v, d))
    }
    fn cast(&mut self, d: Dtype, x: &Self::V) -> Self::V {
        self.bind(
            format!("{}.cast({})", x.0, dtype_source(d)),
            Uops.cast(d, &x.1),
        )
    }
    fn recall(&self, t: &Tree) -> Option<Self::V> {
        self.memo.get(t).cloned()
    }
    fn remember(&mut self, t: &Tree, v: &Self::V) {
        self.memo.insert(t.clone(), v.clone());
    }
}

/// `v` as a Rust literal (`i64::MIN` has no literal of its own).
pub fn i64_literal(v: i64) -> String {
    if v == i64::MIN {
        "i64::MIN".into()
    } else {
        format!("{v}")
    }
}

/// Builds each expression of `case` as UOps.
pub fn build(case: &Case, plans: &[VarPlan]) -> Result<Vec<Arc<UOp>>, Refuse> {
    case.trees
        .iter()
        .map(|t| build_tree(&mut Uops, t, plans))
        .collect()
}

/// A UOp back as a tileproof tree; `Err` names what has no tileproof form.
pub fn to_tree(u: &Arc<UOp>, plans: &[VarPlan]) -> Result<Tree, String> {
    let mut memo: HashMap<u64, Tree> = HashMap::new();
    let mut size = 0usize;
    back(u, plans, &mut memo, &mut size)
}

/// A tree expanded from Morok's DAG may be exponentially larger; past this
/// many nodes the answer is `unsupported`, not a line tileproof refuses.
const MAX_TREE_NODES: usize = 200_000;

fn back(
    u: &Arc<UOp>,
    plans: &[VarPlan],
    memo: &mut HashMap<u64, Tree>,
    size: &mut usize,
) -> Result<Tree, String> {
    if let Some(t) = memo.get(&u.id) {
        *size += tree_size(t);
        if *size > MAX_TREE_NODES {
            return Err(format!(
                "the answer has more than {MAX_TREE_NODES} nodes as a tree"
            ));
        }
        return Ok(t.clone());
    }
    *size += 1;
    let dt = u.dtype();
    let own = concrete(&dt);
    let mut rec = |x: &Arc<UOp>| back(x, plans, memo, size);
    let t = match u.op() {
        Op::Const(c) => match (c.0, own) {
            (ConstValue::Int(v), Ok(d)) => Tree::Const(v, d),
            (ConstValue::Bool(b), _) if dt == DType::Bool => Tree::Bool(b),
            (other, _) => return Err(format!("a constant {other:?} of dtype {dt:?}")),
        },
        Op::DefineVar { name, .. } => {
            let v = Tree::Var(name.clone());
            widen_leaf(v, &dt)?
        }
        Op::Range { axis_id, end, .. } => {
            let axis = axis_id.value();
            let end_v = match end.op() {
                Op::Const(c) => match c.0 {
                    ConstValue::Int(e) => Some(e),
                    _ => None,
                },
                Op::Cast { src, .. } => match src.op() {
                    Op::Const(c) => match c.0 {
                        ConstValue::Int(e) => Some(e),
                        _ => None,
                    },
                    _ => None,
                },
                _ => None,
            };
            let p = plans
                .iter()
                .find(|p| matches!(p.kind, VarKind::Range { axis: a, end: e } if a == axis && Some(e) == end_v))
                .ok_or_else(|| format!("a RANGE (axis {axis}) that is not one of the case's variables"))?;
            widen_leaf(Tree::Var(p.name.clone()), &dt)?
        }
        Op::Invalid => Tree::Invalid,
        Op::Binary(op, a, b) => {
            let (x, y) = (rec(a)?, rec(b)?);
            let bools = a.dtype() == DType::Bool;
            let name = match op {
                BinaryOp::Add => "add",
                BinaryOp::Sub => "sub",
                BinaryOp::Mul => "mul",
                BinaryOp::Idiv => "div",
                BinaryOp::Mod => "rem",
                BinaryOp::Max => "max",
                BinaryOp::Lt => "lt",
                BinaryOp::Le => "le",
                BinaryOp::Eq => "eq",
                BinaryOp::Ne => "ne",
                BinaryOp::Gt => return Ok(memoize(memo, u, Tree::Op("lt".into(), vec![y, x]))),
                BinaryOp::Ge => return Ok(memoize(memo, u, Tree::Op("le".into(), vec![y, x]))),
                BinaryOp::And if bools => "and",
                BinaryOp::Or if bools => "or",
                BinaryOp::Xor if bools => "xor",
                BinaryOp::And => "bitand",
                BinaryOp::Shl => "shl",
                BinaryOp::Shr => "shr",
                other => return Err(format!("Morok's {other:?} on {:?}", a.dtype())),
            };
            Tree::Op(name.into(), vec![x, y])
        }
        Op::Unary(UnaryOp::Neg, a) => Tree::Op("neg".into(), vec![rec(a)?]),
        Op::Unary(UnaryOp::Not, a) if a.dtype() == DType::Bool => {
            Tree::Op("not".into(), vec![rec(a)?])
        }
        Op::Ternary(TernaryOp::Where, c, a, b) => {
            Tree::Op("where".into(), vec![rec(c)?, rec(a)?, rec(b)?])
        }
        Op::Cast { src, dtype } => {
            let x = rec(src)?;
            match (concrete(dtype), dtype == &DType::Bool) {
                (Ok(d), _) => {
                    if src.dtype() == DType::Bool {
                        return Err("a cast of a bool to an integer".into());
                    }
                    Tree::Cast(d, Box::new(x))
                }
                (Err(_), true) => Tree::Op(
                    "ne".into(),
                    vec![x, Tree::Const(0, concrete(&src.dtype())?)],
                ),
                (Err(e), false) => return Err(e),
            }
        }
        other => return Err(format!("Morok's {}", other.as_ref())),
    };
    Ok(memoize(memo, u, t))
}

fn memoize(memo: &mut HashMap<u64, Tree>, u: &Arc<UOp>, t: Tree) -> Tree {
    memo.insert(u.id, t.clone());
    t
}

fn tree_size(t: &Tree) -> usize {
    t.preorder().len()
}

/// A leaf (variable) of a concrete dtype after lowering: its value
/// converted to that dtype.
fn widen_leaf(v: Tree, dt: &DType) -> Result<Tree, String> {
    match concrete(dt)? {
        Dtype::Index => Ok(v),
        d => Ok(Tree::Cast(d, Box::new(v))),
    }
}

/// tileproof's dtype for a Morok integer dtype.
fn concrete(dt: &DType) -> Result<Dtype, String> {
    match dt {
        DType::Scalar(morok_dtype::ScalarDType::Index) => Ok(Dtype::Index),
        DType::Scalar(morok_dtype::ScalarDType::Int32) => Ok(Dtype::I32),
        DType::Scalar(morok_dtype::ScalarDType::Int64) => Ok(Dtype::I64),
        other => Err(format!("a value of dtype {other:?}")),
    }
}
