//! The batched evaluator: engine graphs evaluated over blocks of points
//! without compiling.
//!
//! Compiling a case with Cranelift costs about a millisecond, and most
//! generated cases have domains of a few hundred points, which are cheaper
//! to evaluate than to compile for. [`crate::jit`] emits the semantics'
//! primitives (`engine::semantics::Prims`) as machine code; this module
//! emits the same primitives as instructions of a small register machine
//! whose registers each hold one `i64` per point of a block of up to
//! [`LANES`] points, and runs them one instruction at a time over the
//! block: the dispatch is paid once per block, and each instruction is a
//! tight loop over the lanes (which the compiler vectorizes).
//!
//! Values follow the JIT's conventions bit for bit: an `index` value at
//! width W is sign-extended from W bits, an `i32` value is wrapped to 32
//! bits and sign-extended, a bool is 0 or 1, and nothing traps (a divisor
//! that is 0, or -1 under `i64::MIN`, is replaced by 1; the semantics
//! records the undefinedness). As in the JIT, conditions and values known
//! when the program is built are folded then. `tests/semantics_agree.rs`
//! checks it against the interpreter on every op for every 8-bit operand
//! pair and state, like the JIT.

use engine::dtype::Width;
use engine::interp::{Undefined, Val};
use engine::ir::{DType, Graph, NodeId, Op};
use engine::semantics::{self, Model, Prims, Sem, Ub, Value};
use rustc_hash::FxHashMap;

/// Points per block: registers of 64 lanes keep a case's live values in
/// the first-level cache.
pub const LANES: usize = 64;

/// The register file's size bound (values): a graph with very many live
/// values (a wide program's roots, kept to the end) runs with fewer lanes
/// per block instead of more memory.
const MAX_FILE: usize = 1 << 22;

/// An operand: a value known when the program is built, or a register.
/// Integers are `i64`s, conditions 0 or 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Arg {
    K(i64),
    R(u32),
}

impl Arg {
    fn known(self) -> Option<i64> {
        match self {
            Arg::K(v) => Some(v),
            Arg::R(_) => None,
        }
    }
}

/// A comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cc {
    Lt,
    Le,
    Eq,
    Ne,
}

impl Cc {
    fn holds(self, a: i64, b: i64) -> bool {
        match self {
            Cc::Lt => a < b,
            Cc::Le => a <= b,
            Cc::Eq => a == b,
            Cc::Ne => a != b,
        }
    }
}

/// One instruction; every operand and destination is a register, and a
/// destination is never an operand of its own instruction.
#[derive(Clone, Copy, Debug)]
enum Ins {
    /// The lanes of input slot `slot` (a variable).
    Load {
        dst: u32,
        slot: u32,
    },
    Not {
        dst: u32,
        a: u32,
    },
    And {
        dst: u32,
        a: u32,
        b: u32,
    },
    Or {
        dst: u32,
        a: u32,
        b: u32,
    },
    Xor {
        dst: u32,
        a: u32,
        b: u32,
    },
    Select {
        dst: u32,
        c: u32,
        a: u32,
        b: u32,
    },
    Cmp {
        dst: u32,
        cc: Cc,
        a: u32,
        b: u32,
    },
    /// An integer op: its value and its no-result condition.
    Arith {
        dst: u32,
        ovf: u32,
        op: Op,
        dt: DType,
        from: DType,
        a: u32,
        b: u32,
    },
    /// The value lies outside the signed W-bit range.
    NotFits {
        dst: u32,
        a: u32,
    },
    /// `acc` where it is nonzero, else `code` where `cond` holds, else 0:
    /// the first undefined node's code, in lowering order.
    FirstUb {
        dst: u32,
        acc: u32,
        cond: u32,
        code: i64,
    },
}

impl Ins {
    fn dsts(&self) -> [Option<u32>; 2] {
        match *self {
            Ins::Arith { dst, ovf, .. } => [Some(dst), Some(ovf)],
            Ins::Load { dst, .. }
            | Ins::Not { dst, .. }
            | Ins::And { dst, .. }
            | Ins::Or { dst, .. }
            | Ins::Xor { dst, .. }
            | Ins::Select { dst, .. }
            | Ins::Cmp { dst, .. }
            | Ins::NotFits { dst, .. }
            | Ins::FirstUb { dst, .. } => [Some(dst), None],
        }
    }

    fn srcs(&self) -> [Option<u32>; 3] {
        match *self {
            Ins::Load { .. } => [None; 3],
            Ins::Not { a, .. } | Ins::NotFits { a, .. } => [Some(a), None, None],
            Ins::And { a, b, .. }
            | Ins::Or { a, b, .. }
            | Ins::Xor { a, b, .. }
            | Ins::Cmp { a, b, .. }
            | Ins::Arith { a, b, .. } => [Some(a), Some(b), None],
            Ins::Select { c, a, b, .. } => [Some(c), Some(a), Some(b)],
            Ins::FirstUb { acc, cond, .. } => [Some(acc), Some(cond), None],
        }
    }

    fn map(&mut self, f: &mut impl FnMut(u32) -> u32) {
        match self {
            Ins::Load { dst, .. } => *dst = f(*dst),
            Ins::Not { dst, a } | Ins::NotFits { dst, a } => {
                *a = f(*a);
                *dst = f(*dst);
            }
            Ins::And { dst, a, b }
            | Ins::Or { dst, a, b }
            | Ins::Xor { dst, a, b }
            | Ins::Cmp { dst, a, b, .. } => {
                *a = f(*a);
                *b = f(*b);
                *dst = f(*dst);
            }
            Ins::Arith { dst, ovf, a, b, .. } => {
                *a = f(*a);
                *b = f(*b);
                *dst = f(*dst);
                *ovf = f(*ovf);
            }
            Ins::Select { dst, c, a, b } => {
                *c = f(*c);
                *a = f(*a);
                *b = f(*b);
                *dst = f(*dst);
            }
            Ins::FirstUb { dst, acc, cond, .. } => {
                *acc = f(*acc);
                *cond = f(*cond);
                *dst = f(*dst);
            }
        }
    }
}

// ---- the lane functions ---------------------------------------------------------

/// `v` (exact in 64 bits) lies outside the signed W-bit range.
fn not_fits(w: u32, v: i64) -> bool {
    w < 64 && (v.wrapping_add(1i64 << (w - 1)) as u64) > ((1u64 << w) - 1)
}

fn wrap32(v: i64) -> i64 {
    v as i32 as i64
}

/// What kind of division an op is, read from the op table once per
/// instruction rather than per lane.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Division {
    No,
    Quotient,
    Remainder,
}

impl Division {
    fn of(op: Op) -> Division {
        if op.is_quotient() {
            Division::Quotient
        } else if op.is_divmod() {
            Division::Remainder
        } else {
            Division::No
        }
    }
}

/// `/ % // mod ceildiv`: the JIT's guarded division (`jit.rs`, `divmod`).
#[inline(always)]
fn divmod(op: Op, quotient: bool, dt: DType, w: u32, x: i64, y: i64) -> (i64, bool) {
    let min = match dt {
        DType::Index => Width(w).min() as i64,
        DType::I32 => i32::MIN as i64,
        _ => i64::MIN,
    };
    let no_result = quotient && y == -1 && x == min;
    let ds = if y == 0 || (y == -1 && x == i64::MIN) {
        1
    } else {
        y
    };
    let q = x / ds;
    let r = x - q * ds;
    // r != 0 and the signs of r (= sign of x) and the divisor differ: the
    // truncated quotient was rounded up.
    let (rnz, diff) = (r != 0, (r ^ ds) < 0);
    let v = match op {
        Op::Div => q,
        Op::Rem => r,
        Op::FloorDiv => q - (rnz && diff) as i64,
        Op::Mod => r + if rnz && diff { ds } else { 0 },
        _ => q + (rnz && !diff) as i64,
    };
    (v, no_result)
}

/// One integer op on one lane: the value and the no-result condition, as
/// `Jit::arith` computes them.
#[inline(always)]
fn arith(op: Op, div: Division, dt: DType, from: DType, w: u32, a: i64, b: i64) -> (i64, bool) {
    match (op, dt) {
        _ if div != Division::No => divmod(op, div == Division::Quotient, dt, w, a, b),
        (Op::Min, _) => (a.min(b), false),
        (Op::Max, _) => (a.max(b), false),
        (Op::BitAnd, _) => (a & b, false),
        (Op::Shr, _) => (a >> (b & 63), false),
        (Op::Cast, DType::Index) => {
            let src_fits = match from {
                DType::Index => true,
                DType::I32 => w >= 32,
                _ => w >= 64,
            };
            (a, !src_fits && not_fits(w, a))
        }
        (Op::Cast, DType::I32) => (wrap32(a), false),
        (Op::Cast, _) => (a, false),
        (Op::Shl, DType::Index) if w == 64 => {
            let r = a << (b & 63);
            (r, (r >> (b & 63)) != a)
        }
        (Op::Neg, DType::Index) if w == 64 => a.overflowing_neg(),
        (Op::Add, DType::Index) if w == 64 => a.overflowing_add(b),
        (Op::Sub, DType::Index) if w == 64 => a.overflowing_sub(b),
        (Op::Mul, DType::Index) if w == 64 => a.overflowing_mul(b),
        _ => {
            // Exact in 64 bits for index operands of W <= 32 bits; the
            // wrap of i32/i64 follows from computing modulo 2^64.
            let r = match op {
                Op::Neg => a.wrapping_neg(),
                Op::Add => a.wrapping_add(b),
                Op::Sub => a.wrapping_sub(b),
                Op::Mul => a.wrapping_mul(b),
                Op::Shl => a << (b & 63),
                _ => unreachable!("{op:?} is not integer arithmetic"),
            };
            match dt {
                DType::Index => (r, not_fits(w, r)),
                DType::I32 => (wrap32(r), false),
                _ => (r, false),
            }
        }
    }
}

/// `f` over the lanes of `a` and `b` into `d` and `o`.
#[inline(always)]
fn lanes2(a: &[i64], b: &[i64], d: &mut [i64], o: &mut [i64], f: impl Fn(i64, i64) -> (i64, bool)) {
    for (((d, o), &x), &y) in d.iter_mut().zip(o.iter_mut()).zip(a).zip(b) {
        let (v, c) = f(x, y);
        *d = v;
        *o = c as i64;
    }
}

/// The lanes of an integer op, the match on the op outside the lane loop.
#[allow(clippy::too_many_arguments)]
fn arith_lanes(
    op: Op,
    dt: DType,
    from: DType,
    w: u32,
    a: &[i64],
    b: &[i64],
    d: &mut [i64],
    o: &mut [i64],
) {
    let div = Division::of(op);
    macro_rules! each {
        ($($op:ident),*) => {
            match op {
                $(Op::$op => lanes2(a, b, d, o, |x, y| arith(Op::$op, div, dt, from, w, x, y)),)*
                _ => unreachable!("{op:?} is not an integer op"),
            }
        };
    }
    each!(Neg, Cast, Add, Sub, Mul, Min, Max, Div, Rem, FloorDiv, Mod, CeilDiv, Shl, Shr, BitAnd)
}

// ---- building programs ---------------------------------------------------------------

/// A program under construction: instructions on virtual registers, and
/// the constants they read.
pub(crate) struct Builder {
    w: u32,
    code: Vec<Ins>,
    nregs: u32,
    consts: FxHashMap<i64, u32>,
}

impl Builder {
    pub fn new(w: Width) -> Builder {
        Builder {
            w: w.0,
            code: Vec::new(),
            nregs: 0,
            consts: FxHashMap::default(),
        }
    }

    fn fresh(&mut self) -> u32 {
        self.nregs += 1;
        self.nregs - 1
    }

    /// The register of an operand (a constant gets one, filled once).
    fn reg(&mut self, a: Arg) -> u32 {
        match a {
            Arg::R(r) => r,
            Arg::K(v) => {
                if let Some(&r) = self.consts.get(&v) {
                    return r;
                }
                let r = self.fresh();
                self.consts.insert(v, r);
                r
            }
        }
    }

    pub fn load(&mut self, slot: u32) -> Arg {
        let dst = self.fresh();
        self.code.push(Ins::Load { dst, slot });
        Arg::R(dst)
    }

    fn emit1(&mut self, make: impl FnOnce(u32) -> Ins) -> Arg {
        let dst = self.fresh();
        self.code.push(make(dst));
        Arg::R(dst)
    }

    pub fn not(&mut self, a: Arg) -> Arg {
        match a {
            Arg::K(x) => Arg::K((x == 0) as i64),
            Arg::R(a) => self.emit1(|dst| Ins::Not { dst, a }),
        }
    }

    pub fn and(&mut self, x: Arg, y: Arg) -> Arg {
        match (x, y) {
            (Arg::K(0), _) | (_, Arg::K(0)) => Arg::K(0),
            (Arg::K(_), c) | (c, Arg::K(_)) => c,
            (Arg::R(a), Arg::R(b)) => self.emit1(|dst| Ins::And { dst, a, b }),
        }
    }

    pub fn or(&mut self, x: Arg, y: Arg) -> Arg {
        match (x, y) {
            (Arg::K(0), c) | (c, Arg::K(0)) => c,
            (Arg::K(_), _) | (_, Arg::K(_)) => Arg::K(1),
            (Arg::R(a), Arg::R(b)) => self.emit1(|dst| Ins::Or { dst, a, b }),
        }
    }

    fn select(&mut self, c: Arg, x: Arg, y: Arg) -> Arg {
        match (c, x, y) {
            (Arg::K(0), ..) => y,
            (Arg::K(_), ..) => x,
            (_, Arg::K(p), Arg::K(q)) if p == q => x,
            (Arg::R(c), _, _) => {
                let (a, b) = (self.reg(x), self.reg(y));
                self.emit1(|dst| Ins::Select { dst, c, a, b })
            }
        }
    }

    fn cmp(&mut self, cc: Cc, x: Arg, y: Arg) -> Arg {
        if let (Arg::K(p), Arg::K(q)) = (x, y) {
            return Arg::K(cc.holds(p, q) as i64);
        }
        let (a, b) = (self.reg(x), self.reg(y));
        self.emit1(|dst| Ins::Cmp { dst, cc, a, b })
    }

    fn not_fits(&mut self, x: Arg) -> Arg {
        match x {
            Arg::K(v) => Arg::K(not_fits(self.w, v) as i64),
            Arg::R(a) => self.emit1(|dst| Ins::NotFits { dst, a }),
        }
    }

    /// The first undefined code so far: `acc`, else `code` where `cond`
    /// holds.
    pub fn first_ub(&mut self, acc: Arg, cond: Arg, code: i64) -> Arg {
        match (acc, cond) {
            (_, Arg::K(0)) => acc,
            (Arg::K(0), Arg::K(_)) => Arg::K(code),
            // An earlier node is undefined whatever this one does.
            (Arg::K(_), _) if acc != Arg::K(0) => acc,
            _ => {
                let (acc, cond) = (self.reg(acc), self.reg(cond));
                self.emit1(|dst| Ins::FirstUb {
                    dst,
                    acc,
                    cond,
                    code,
                })
            }
        }
    }

    /// The finished program, its virtual registers allocated to physical
    /// ones; `keep` are the operands read after a run (their registers
    /// stay live to the end).
    pub fn finish(self, keep: &[Arg]) -> Program {
        let n = self.nregs as usize;
        // The last instruction reading each virtual register; kept ones
        // and constants are never freed, unread ones right after they are
        // written.
        const NEVER: usize = usize::MAX;
        const UNREAD: usize = usize::MAX - 1;
        let mut last = vec![UNREAD; n];
        for (i, ins) in self.code.iter().enumerate() {
            for s in ins.srcs().into_iter().flatten() {
                last[s as usize] = i;
            }
        }
        for a in keep {
            if let Arg::R(r) = *a {
                last[r as usize] = NEVER;
            }
        }
        let mut phys = vec![u32::MAX; n];
        let mut nphys = 0u32;
        let mut consts: Vec<(u32, i64)> = Vec::new();
        for (&v, &r) in &self.consts {
            phys[r as usize] = nphys;
            last[r as usize] = NEVER;
            consts.push((nphys, v));
            nphys += 1;
        }
        let mut free: Vec<u32> = Vec::new();
        let mut code = self.code;
        for (i, ins) in code.iter_mut().enumerate() {
            let (srcs, dsts) = (ins.srcs(), ins.dsts());
            // Destinations first, so that none aliases an operand.
            for d in dsts.into_iter().flatten() {
                phys[d as usize] = free.pop().unwrap_or_else(|| {
                    nphys += 1;
                    nphys - 1
                });
            }
            ins.map(&mut |r| phys[r as usize]);
            for r in srcs.into_iter().flatten().chain(dsts.into_iter().flatten()) {
                let r = r as usize;
                if last[r] == i || last[r] == UNREAD {
                    last[r] = NEVER; // freed once, even if read twice
                    free.push(phys[r]);
                }
            }
        }
        let kept = keep
            .iter()
            .filter_map(|a| match *a {
                Arg::R(r) => Some((r, phys[r as usize])),
                Arg::K(_) => None,
            })
            .collect();
        let nregs = nphys as usize;
        let nslots = code
            .iter()
            .filter_map(|i| match *i {
                Ins::Load { slot, .. } => Some(slot as usize + 1),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        Program {
            w: self.w,
            code,
            nregs,
            consts,
            nslots,
            kept,
            lanes: (MAX_FILE / nregs.max(1)).clamp(1, LANES),
        }
    }
}

/// A condition under which node `node` is undefined, for `reason`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct UbCond {
    pub node: NodeId,
    pub cond: Arg,
    pub reason: Ub,
}

/// The semantics' primitives, emitted into a [`Builder`].
struct Emit<'a> {
    b: &'a mut Builder,
    m: Model,
    node: NodeId,
    ub: &'a mut Vec<UbCond>,
}

impl Prims for Emit<'_> {
    type I = Arg;
    type B = Arg;

    fn model(&self) -> Model {
        self.m
    }
    fn bool_lit(&mut self, b: bool) -> Arg {
        Arg::K(b as i64)
    }
    fn int_lit(&mut self, v: i128, _: DType) -> Arg {
        Arg::K(v as i64)
    }
    fn not(&mut self, a: &Arg) -> Arg {
        self.b.not(*a)
    }
    fn and(&mut self, a: &Arg, b: &Arg) -> Arg {
        self.b.and(*a, *b)
    }
    fn or(&mut self, a: &Arg, b: &Arg) -> Arg {
        self.b.or(*a, *b)
    }
    // The oracle itself asks only `and`, `or` and `not` of the builder:
    // `xor` and `arith` are the semantics' alone, written here.
    fn xor(&mut self, a: &Arg, b: &Arg) -> Arg {
        match (*a, *b) {
            (Arg::K(p), Arg::K(q)) => Arg::K((p != q) as i64),
            (Arg::K(0), c) | (c, Arg::K(0)) => c,
            (Arg::K(_), c) | (c, Arg::K(_)) => self.b.not(c),
            (Arg::R(a), Arg::R(b)) => self.b.emit1(|dst| Ins::Xor { dst, a, b }),
        }
    }
    fn select_int(&mut self, c: &Arg, a: &Arg, b: &Arg) -> Arg {
        self.b.select(*c, *a, *b)
    }
    fn select_bool(&mut self, c: &Arg, a: &Arg, b: &Arg) -> Arg {
        self.b.select(*c, *a, *b)
    }
    fn lt(&mut self, a: &Arg, b: &Arg, _: DType) -> Arg {
        self.b.cmp(Cc::Lt, *a, *b)
    }
    fn le(&mut self, a: &Arg, b: &Arg, _: DType) -> Arg {
        self.b.cmp(Cc::Le, *a, *b)
    }
    fn eq(&mut self, a: &Arg, b: &Arg, _: DType) -> Arg {
        self.b.cmp(Cc::Eq, *a, *b)
    }
    fn arith(&mut self, op: Op, dt: DType, from: DType, args: &[Arg]) -> (Arg, Arg) {
        // A unary op reads its operand twice (the second is ignored).
        let (x, y) = (args[0], args.get(1).copied().unwrap_or(args[0]));
        let b = &mut *self.b;
        if let (Some(p), Some(q)) = (x.known(), y.known()) {
            // The lane function itself, on one lane.
            let (mut d, mut o) = ([0], [0]);
            arith_lanes(op, dt, from, b.w, &[p], &[q], &mut d, &mut o);
            return (Arg::K(d[0]), Arg::K(o[0]));
        }
        let (a, c) = (b.reg(x), b.reg(y));
        let (dst, ovf) = (b.fresh(), b.fresh());
        b.code.push(Ins::Arith {
            dst,
            ovf,
            op,
            dt,
            from,
            a,
            b: c,
        });
        (Arg::R(dst), Arg::R(ovf))
    }
    fn undefined(&mut self, cond: Arg, reason: Ub) {
        if cond != Arg::K(0) {
            self.ub.push(UbCond {
                node: self.node,
                cond,
                reason,
            });
        }
    }
}

/// Emits the nodes of one graph into a [`Builder`], like `jit::Lower`:
/// `vals` is indexed by node id, and several root sets may share one
/// `Lower` (the oracle emits the source and the target together, so
/// shared nodes are computed once).
pub(crate) struct Lower<'g> {
    pub g: &'g Graph,
    pub m: Model,
    pub vals: Vec<Option<Sem<Arg, Arg>>>,
    ub: Vec<UbCond>,
}

impl<'g> Lower<'g> {
    pub fn new(g: &'g Graph, m: Model) -> Lower<'g> {
        Lower {
            g,
            m,
            vals: vec![None; g.len()],
            ub: Vec::new(),
        }
    }

    pub fn get(&self, id: NodeId) -> &Sem<Arg, Arg> {
        self.vals[id.index()]
            .as_ref()
            .expect("operands are emitted before their users")
    }

    /// Emits `order` (increasing ids). `var(b, v)` is variable `v`'s
    /// operand. `vars_in_bounds`: every variable lies within its declared
    /// bounds (the oracle's walks), so an `index` variable whose bounds fit
    /// W needs no run-time range check. Each node's undefinedness
    /// conditions go to `ub` as the node is emitted.
    pub fn lower(
        &mut self,
        b: &mut Builder,
        order: &[NodeId],
        var: &mut dyn FnMut(&mut Builder, u32) -> Arg,
        vars_in_bounds: bool,
        ub: &mut dyn FnMut(&mut Builder, UbCond),
    ) {
        for &id in order {
            if self.vals[id.index()].is_some() {
                continue;
            }
            let s = self.node(b, id, var, vars_in_bounds);
            self.vals[id.index()] = Some(s);
            for u in std::mem::take(&mut self.ub) {
                ub(b, u);
            }
        }
    }

    /// The primitives for emitting node `node`.
    pub fn prims<'a>(
        &'a mut self,
        b: &'a mut Builder,
        node: NodeId,
    ) -> impl Prims<I = Arg, B = Arg> + 'a {
        Emit {
            b,
            m: self.m,
            node,
            ub: &mut self.ub,
        }
    }

    fn node(
        &mut self,
        b: &mut Builder,
        id: NodeId,
        var: &mut dyn FnMut(&mut Builder, u32) -> Arg,
        vars_in_bounds: bool,
    ) -> Sem<Arg, Arg> {
        let n = *self.g.node(id);
        let m = self.m;
        match n.op {
            Op::Const(c) => semantics::constant(&mut self.prims(b, id), c as i128, n.dtype),
            Op::Invalid => semantics::invalid(&mut self.prims(b, id)),
            Op::Var(v) => {
                let x = var(b, v);
                let val = match n.dtype {
                    DType::Bool => Value::Bool(b.cmp(Cc::Ne, x, Arg::K(0))),
                    DType::Index => {
                        let d = self.g.var(v);
                        let static_ok = vars_in_bounds
                            && m.width.fits(d.lo as i128)
                            && m.width.fits(d.hi as i128);
                        if !static_ok {
                            let c = b.not_fits(x);
                            self.prims(b, id).undefined(c, Ub::IndexOverflow);
                        }
                        Value::Int(x)
                    }
                    DType::I32 | DType::I64 => Value::Int(x),
                };
                semantics::valid(&mut self.prims(b, id), val)
            }
            op => {
                let args: Vec<Sem<Arg, Arg>> =
                    n.src().iter().map(|&s| self.get(s).clone()).collect();
                let dts: Vec<DType> = n.src().iter().map(|&s| self.g.node(s).dtype).collect();
                semantics::apply(&mut self.prims(b, id), op, n.dtype, &args, &dts)
            }
        }
    }
}

// ---- running programs -------------------------------------------------------------------

/// A finished program: instructions on physical registers (reused once a
/// value is dead), the constants' registers, and where each kept operand
/// ended up.
pub(crate) struct Program {
    w: u32,
    code: Vec<Ins>,
    nregs: usize,
    consts: Vec<(u32, i64)>,
    /// Input slots the program loads (one past the largest).
    nslots: usize,
    /// Virtual register to physical, for the kept operands.
    kept: FxHashMap<u32, u32>,
    /// Lanes per block.
    lanes: usize,
}

impl Program {
    /// Points per block this program runs.
    pub fn lanes(&self) -> usize {
        self.lanes
    }

    /// A register file for this program, constants filled in.
    pub fn machine(&self) -> Machine<'_> {
        let l = self.lanes;
        let mut file = vec![0i64; self.nregs * l];
        for &(r, v) in &self.consts {
            file[r as usize * l..(r as usize + 1) * l].fill(v);
        }
        Machine { p: self, file }
    }
}

/// A program with its register file: runs blocks of points.
pub(crate) struct Machine<'p> {
    p: &'p Program,
    file: Vec<i64>,
}

impl Machine<'_> {
    /// Runs the program on the first `n` lanes; `inputs` holds each input
    /// slot's lanes, [`Program::lanes`] apart.
    pub fn run(&mut self, inputs: &[i64], n: usize) {
        let l = self.p.lanes;
        debug_assert!(n <= l);
        let w = self.p.w;
        assert!(inputs.len() >= self.p.nslots * l, "inputs for every slot");
        let base = self.file.as_mut_ptr();
        // SAFETY (both): every register is below `nregs`
        // (`Builder::finish`), so its lanes lie inside `file`; an
        // instruction's destinations are distinct from its operands and
        // from each other, so the one `&mut` borrow of an instruction
        // never overlaps the shared ones it reads.
        let reg = |r: u32| unsafe { lanes_of(base, r, l, n) as &[i64] };
        let out = |r: u32| unsafe { lanes_of(base, r, l, n) };
        for ins in &self.p.code {
            match *ins {
                Ins::Load { dst, slot } => {
                    let s = slot as usize * l;
                    out(dst).copy_from_slice(&inputs[s..s + n]);
                }
                Ins::Not { dst, a } => {
                    for (d, &x) in out(dst).iter_mut().zip(reg(a)) {
                        *d = x ^ 1;
                    }
                }
                Ins::And { dst, a, b } => zip2(out(dst), reg(a), reg(b), |x, y| x & y),
                Ins::Or { dst, a, b } => zip2(out(dst), reg(a), reg(b), |x, y| x | y),
                Ins::Xor { dst, a, b } => zip2(out(dst), reg(a), reg(b), |x, y| x ^ y),
                Ins::Select { dst, c, a, b } => {
                    for (((d, &c), &x), &y) in
                        out(dst).iter_mut().zip(reg(c)).zip(reg(a)).zip(reg(b))
                    {
                        *d = if c != 0 { x } else { y };
                    }
                }
                Ins::Cmp { dst, cc, a, b } => match cc {
                    Cc::Lt => zip2(out(dst), reg(a), reg(b), |x, y| (x < y) as i64),
                    Cc::Le => zip2(out(dst), reg(a), reg(b), |x, y| (x <= y) as i64),
                    Cc::Eq => zip2(out(dst), reg(a), reg(b), |x, y| (x == y) as i64),
                    Cc::Ne => zip2(out(dst), reg(a), reg(b), |x, y| (x != y) as i64),
                },
                Ins::Arith {
                    dst,
                    ovf,
                    op,
                    dt,
                    from,
                    a,
                    b,
                } => arith_lanes(op, dt, from, w, reg(a), reg(b), out(dst), out(ovf)),
                Ins::NotFits { dst, a } => {
                    for (d, &x) in out(dst).iter_mut().zip(reg(a)) {
                        *d = not_fits(w, x) as i64;
                    }
                }
                Ins::FirstUb {
                    dst,
                    acc,
                    cond,
                    code,
                } => zip2(out(dst), reg(acc), reg(cond), |a, c| {
                    if a != 0 {
                        a
                    } else if c != 0 {
                        code
                    } else {
                        0
                    }
                }),
            }
        }
    }

    /// Operand `a` (kept when the program was finished) at lane `i`.
    pub fn get(&self, a: Arg, i: usize) -> i64 {
        match a {
            Arg::K(v) => v,
            Arg::R(r) => {
                let p = self.p.kept[&r] as usize;
                self.file[p * self.p.lanes + i]
            }
        }
    }

    /// Condition `a` at lane `i`.
    pub fn holds(&self, a: Arg, i: usize) -> bool {
        self.get(a, i) != 0
    }
}

/// Register `r`'s first `n` of `l` lanes.
///
/// # Safety
/// `r * l + n` must lie inside the file `base` points to, and the caller
/// must not let a mutable borrow overlap another borrow of the same lanes.
#[allow(clippy::mut_from_ref)]
unsafe fn lanes_of<'a>(base: *mut i64, r: u32, l: usize, n: usize) -> &'a mut [i64] {
    std::slice::from_raw_parts_mut(base.add(r as usize * l), n)
}

#[inline(always)]
fn zip2(d: &mut [i64], a: &[i64], b: &[i64], f: impl Fn(i64, i64) -> i64) {
    for ((d, &x), &y) in d.iter_mut().zip(a).zip(b) {
        *d = f(x, y);
    }
}

// ---- the single-point evaluator ------------------------------------------------------------

/// Encodes "node `id` is undefined for `reason`" as a nonzero `i64` (the
/// JIT's encoding).
fn ub_code(node: NodeId, reason: Ub) -> i64 {
    let r = Ub::ALL
        .iter()
        .position(|&u| u == reason)
        .expect("every reason is listed") as i64;
    ((node.0 as i64 + 1) << 2) | r
}

fn ub_decode(code: i64) -> Undefined {
    Undefined {
        node: NodeId(((code >> 2) - 1) as u32),
        reason: Ub::ALL[(code & 3) as usize],
    }
}

/// The batched counterpart of [`crate::jit::CompiledEval`]: roots'
/// values, or the first undefined node in id order and why, exactly as
/// `engine::interp::eval` gives them, at one point or at many.
pub struct BatchEval {
    prog: Program,
    roots: Vec<(Arg, Arg, Arg, DType)>,
    ub: Arg,
    nvars: usize,
}

impl BatchEval {
    /// Emits `roots` of `g` under model `m` (or at a width).
    pub fn new(g: &Graph, roots: &[NodeId], m: impl Into<Model>) -> BatchEval {
        let m = m.into();
        let mut b = Builder::new(m.width);
        let mut lower = Lower::new(g, m);
        let mut code = Arg::K(0);
        // The environment is arbitrary: index variables are checked
        // against W at run time, as the interpreter does.
        lower.lower(
            &mut b,
            &g.reachable(roots),
            &mut |b, v| b.load(v),
            false,
            &mut |b, u| code = b.first_ub(code, u.cond, ub_code(u.node, u.reason)),
        );
        let outs: Vec<(Arg, Arg, Arg, DType)> = roots
            .iter()
            .map(|&r| {
                let s = lower.get(r);
                let v = match s.val {
                    Value::Int(x) | Value::Bool(x) => x,
                };
                (v, s.inv, s.unc, g.node(r).dtype)
            })
            .collect();
        let mut keep: Vec<Arg> = outs.iter().flat_map(|o| [o.0, o.1, o.2]).collect();
        keep.push(code);
        BatchEval {
            prog: b.finish(&keep),
            roots: outs,
            ub: code,
            nvars: g.vars().len(),
        }
    }

    /// Evaluates the roots at one point; `env` like
    /// [`crate::jit::CompiledEval::eval`]'s.
    pub fn eval(&self, env: &[i64]) -> Result<Vec<Val>, Undefined> {
        self.eval_many(std::slice::from_ref(&env.to_vec()))
            .pop()
            .expect("one point, one result")
    }

    /// Evaluates the roots at every point of `envs`, a block of lanes at a
    /// time.
    pub fn eval_many(&self, envs: &[Vec<i64>]) -> Vec<Result<Vec<Val>, Undefined>> {
        let l = self.prog.lanes();
        let mut m = self.prog.machine();
        let mut inputs = vec![0i64; self.nvars * l];
        let mut out = Vec::with_capacity(envs.len());
        for block in envs.chunks(l) {
            for (i, env) in block.iter().enumerate() {
                assert!(
                    env.len() >= self.nvars,
                    "environment has {} values for {} variables",
                    env.len(),
                    self.nvars
                );
                for (v, &x) in env[..self.nvars].iter().enumerate() {
                    inputs[v * l + i] = x;
                }
            }
            m.run(&inputs, block.len());
            for i in 0..block.len() {
                let code = m.get(self.ub, i);
                if code != 0 {
                    out.push(Err(ub_decode(code)));
                    continue;
                }
                out.push(Ok(self
                    .roots
                    .iter()
                    .map(|&(v, inv, unc, dt)| {
                        if m.holds(inv, i) {
                            Val::Invalid
                        } else if m.holds(unc, i) {
                            Val::Unconstrained
                        } else if dt == DType::Bool {
                            Val::Bool(m.get(v, i) != 0)
                        } else {
                            Val::Int(m.get(v, i) as i128)
                        }
                    })
                    .collect()));
            }
        }
        out
    }

    /// Instructions run per block (a cost measure).
    pub fn instructions(&self) -> usize {
        self.prog.code.len()
    }
}
