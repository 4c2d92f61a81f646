//! Cranelift JIT of engine graphs, bit-exact with [`engine::interp`].
//!
//! The fuzzing oracle evaluates millions of points per candidate rewrite, so
//! the interpreter (exact, allocation-heavy, `i128`) is too slow for it. This
//! module compiles a graph to straight-line native code that computes, for
//! every reachable node once (hash-consed sharing is kept), the same triple
//! the interpreter does:
//!
//! - **definedness**, whole-evaluation: a per-node "this node is undefined"
//!   condition (index overflow, division by zero, `MIN / -1`), folded over
//!   every reachable node (both arms of a `where` count);
//! - **state**: valid, unconstrained or invalid (`Val::Int`/`Bool`,
//!   `Val::Unconstrained`, `Val::Invalid`), tracked statically where it is
//!   known at compile time (most nodes of an ungated index expression are
//!   always valid) and as an `i8` (0 valid, 1 unconstrained, 2 invalid)
//!   otherwise;
//! - **value**: in an `i64` register for integer dtypes (an `index` value at
//!   width W <= 64 is sign-extended; `i32` values are kept wrapped to 32
//!   bits and sign-extended), in an `i8` (0/1) for bools.
//!
//! The generated code never traps: every divisor is replaced by 1 when it is
//! 0 or when the 64-bit quotient would be `i64::MIN / -1`, and the condition
//! is recorded as undefined behaviour instead (only when the interpreter
//! would: a divisor that is the *valid* value 0, or valid `MIN / -1`).
//! Index overflow at W < 64 is detected by computing exactly in 64 bits and
//! range-checking (operands fit W <= 32 bits, so sums and products are
//! exact); at W = 64 by Cranelift's `sadd_overflow`/`ssub_overflow`/
//! `smul_overflow`. Both checks, and any wrap, are left out where the
//! operands' bounds ([`Span`], from the variables' declared bounds when the
//! caller guarantees them) put the exact result within the dtype; a
//! positive constant divisor is a shift and mask or a proved multiply-high
//! ([`crate::divconst`]), with nothing to guard.
//!
//! Every compiled object owns its [`JITModule`] and frees its code memory on
//! drop (the default memory provider otherwise leaks it on purpose), so long
//! fuzz campaigns do not grow.
//!
//! [`CompiledEval`] is the single-point evaluator used by the tests; the
//! domain-looping oracle lives in [`crate::oracle`] and reuses the node
//! lowering (`Lower`) defined here.

use cranelift_codegen::ir::{
    condcodes::IntCC, types, AbiParam, InstBuilder, MemFlagsData, Type, Value,
};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};
use engine::dtype::Width;
use engine::interp::{Undefined, Val};
use engine::ir::{DType, Graph, NodeId, Op, TypeError};
use engine::semantics::{self, Model, Prims, Sem, Ub, Value as SemValue};
use std::fmt;
use std::sync::OnceLock;

// ---- errors ------------------------------------------------------------------

/// Why a graph could not be compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JitError {
    /// The width is not one of 8, 16, 32, 64.
    Width(u32),
    /// The two forms of a comparison have different numbers of roots.
    RootCount { src: usize, tgt: usize },
    /// Importing the target graph into the source graph failed (a variable
    /// declared with different bounds in the two graphs).
    Import(TypeError),
    /// Cranelift rejected the host, the settings or the function (a bug).
    Codegen(String),
}

impl fmt::Display for JitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JitError::Width(w) => write!(f, "unsupported width {w} (use 8, 16, 32 or 64)"),
            JitError::RootCount { src, tgt } => {
                write!(f, "source has {src} roots but target has {tgt}")
            }
            JitError::Import(e) => write!(f, "cannot merge the two graphs: {e}"),
            JitError::Codegen(e) => write!(f, "cranelift: {e}"),
        }
    }
}

impl std::error::Error for JitError {}

pub(crate) fn check_width(w: Width) -> Result<(), JitError> {
    if Width::ALL.contains(&w) {
        Ok(())
    } else {
        Err(JitError::Width(w.0))
    }
}

// ---- module ownership --------------------------------------------------------

/// Functions with more instructions than this are compiled with the
/// single-pass register allocator: the backtracking one (better code) takes
/// time quadratic in a long straight-line function's live values (a
/// 10,000-term sum took 3.5 s to compile, a 100,000-term one ran out of
/// memory), the single-pass one is linear.
pub const LARGE_FUNCTION: usize = 20_000;

/// The host ISA, built once per register allocator: building it probes CPU
/// features, which is too slow to repeat for every one of the many small
/// functions a campaign compiles.
fn host_isa(large: bool) -> Result<OwnedTargetIsa, JitError> {
    static ISA: [OnceLock<Result<OwnedTargetIsa, String>>; 2] = [OnceLock::new(), OnceLock::new()];
    ISA[large as usize]
        .get_or_init(|| {
            let mut flags = settings::builder();
            let verifier = if cfg!(debug_assertions) {
                "true"
            } else {
                "false"
            };
            let regalloc = if large { "single_pass" } else { "backtracking" };
            for (k, v) in [
                ("opt_level", "speed"),
                ("regalloc_algorithm", regalloc),
                // cranelift-jit requires these two (see JITBuilder::with_flags).
                ("use_colocated_libcalls", "false"),
                ("is_pic", "false"),
                ("enable_verifier", verifier),
            ] {
                flags.set(k, v).map_err(|e| e.to_string())?;
            }
            let isa = cranelift_native::builder().map_err(|e| e.to_string())?;
            isa.finish(settings::Flags::new(flags))
                .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(JitError::Codegen)
}

fn codegen_err(e: impl fmt::Display) -> JitError {
    JitError::Codegen(e.to_string())
}

/// Native code owned by one [`JITModule`], freed when this is dropped.
///
/// The module is only touched again in `drop` (through `&mut self`); shared
/// references only ever hand out the finalized code address, which is plain
/// read-only executable memory. That is why sharing it across rayon workers
/// is sound.
pub(crate) struct JitCode {
    module: Option<JITModule>,
    /// A bound on the stack the function needs (bytes).
    stack: usize,
}

impl JitCode {
    /// Runs `call` (a call of this code) on a stack with room for the
    /// function's frame: a large function compiled with the single-pass
    /// allocator spills each value to its own slot (16 MB of frame for a
    /// 10^6-division chain, past a thread's stack), so a larger stack is
    /// switched to when the current one has less room left than the bound.
    pub fn call<R>(&self, call: impl FnOnce() -> R) -> R {
        stacker::maybe_grow(self.stack, self.stack + STACK_MARGIN, call)
    }
}

/// Room beyond a function's frame bound: the frame's fixed part and what
/// the caller's own code uses.
const STACK_MARGIN: usize = 1 << 20;

// SAFETY: see the type's documentation: after finalization the module is not
// accessed except by `drop`, and the compiled functions are pure (they only
// read and write through the pointers their caller passes).
unsafe impl Send for JitCode {}
unsafe impl Sync for JitCode {}

impl Drop for JitCode {
    fn drop(&mut self) {
        if let Some(module) = self.module.take() {
            // SAFETY: the function pointers derived from this module live in
            // objects that own this `JitCode` and die with it, so none can be
            // called after this point.
            unsafe { module.free_memory() };
        }
    }
}

/// Compiles one function with signature `params -> i64` into a fresh module.
/// `body` receives the builder positioned in the entry block and the entry
/// block's parameters; it must terminate every block it creates.
pub(crate) fn compile_function(
    params: &[Type],
    body: impl FnOnce(&mut FunctionBuilder<'_>, &[Value]) -> Result<(), JitError>,
) -> Result<(JitCode, *const u8), JitError> {
    // The body is built first: its size picks the register allocator, and
    // the module is made for that ISA (both share the host's call
    // convention and pointer type).
    let small = host_isa(false)?;
    let mut func = cranelift_codegen::ir::Function::new();
    func.signature.call_conv = small.default_call_conv();
    for &p in params {
        func.signature.params.push(AbiParam::new(p));
    }
    func.signature.returns.push(AbiParam::new(types::I64));
    let mut fctx = FunctionBuilderContext::new();
    {
        let mut b = FunctionBuilder::new(&mut func, &mut fctx);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let args = b.block_params(entry).to_vec();
        body(&mut b, &args)?;
        b.seal_all_blocks();
        b.finalize(small.frontend_config());
    }
    let isa = host_isa(func.dfg.num_insts() > LARGE_FUNCTION)?;
    // Every spill slot holds one 8-byte value of the function or one
    // temporary of an instruction's lowering: two slots per value and per
    // instruction bound the frame.
    let stack = 16 * (func.dfg.num_values() + func.dfg.num_insts());
    let mut code = JitCode {
        module: Some(JITModule::new(JITBuilder::with_isa(
            isa,
            default_libcall_names(),
        ))),
        stack,
    };
    let module = code.module.as_mut().expect("just built");
    let mut ctx = cranelift_codegen::Context::for_function(func);
    let id = module
        .declare_function("tileproof_jit", Linkage::Local, &ctx.func.signature)
        .map_err(codegen_err)?;
    module.define_function(id, &mut ctx).map_err(codegen_err)?;
    module.clear_context(&mut ctx);
    module.finalize_definitions().map_err(codegen_err)?;
    let ptr = module.get_finalized_function(id);
    Ok((code, ptr))
}

pub(crate) fn ptr_type() -> Result<Type, JitError> {
    Ok(host_isa(false)?.pointer_type())
}

pub(crate) fn mem() -> MemFlagsData {
    MemFlagsData::trusted()
}

// ---- lowering ----------------------------------------------------------------

/// A boolean condition (also a bool's value), folded at compile time where
/// possible so that always-valid nodes cost nothing for their flags and UB
/// bookkeeping.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Cond {
    Const(bool),
    /// An `i8` that is 0 or 1.
    Dyn(Value),
}

/// An integer: a constant known at compile time (divisor guards and
/// comparisons with literals fold), or an `i64` register with bounds on
/// what it holds.
#[derive(Clone, Copy, Debug)]
pub(crate) enum JInt {
    K(i64),
    V(Value, Span),
}

/// Inclusive bounds on the bits an `i64` register holds, in every lane
/// (valid or not: an invalid lane's garbage is bounded too, because the
/// bounds are those of the instructions actually emitted). Derived from
/// the variables' declared bounds, which the oracle's loops guarantee; an
/// op whose exact result provably fits needs no overflow check and no
/// wrap, and a comparison whose operands' bounds decide it folds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    pub lo: i64,
    pub hi: i64,
}

impl Span {
    pub const FULL: Span = Span {
        lo: i64::MIN,
        hi: i64::MAX,
    };
    const I32: Span = Span {
        lo: i32::MIN as i64,
        hi: i32::MAX as i64,
    };

    /// The exact bounds `[lo, hi]` if they fit `i64`.
    fn exact(lo: i128, hi: i128) -> Option<Span> {
        let (lo, hi) = (i64::try_from(lo).ok()?, i64::try_from(hi).ok()?);
        Some(Span { lo, hi })
    }

    fn within(self, lo: i128, hi: i128) -> bool {
        lo <= self.lo as i128 && self.hi as i128 <= hi
    }

    fn hull(self, o: Span) -> Span {
        Span {
            lo: self.lo.min(o.lo),
            hi: self.hi.max(o.hi),
        }
    }
}

impl JInt {
    pub fn span(self) -> Span {
        match self {
            JInt::K(c) => Span { lo: c, hi: c },
            JInt::V(_, s) => s,
        }
    }
}

/// The exact bounds of `op` on operands within `a` (and `b`), if the
/// result is a plain 64-bit instruction's (no wrap, no overflow) wherever
/// they fit `i64`: `- + * min max`, `<<` by a constant amount below 63.
fn exact_span(op: Op, a: Span, b: Option<Span>) -> Option<(i128, i128)> {
    let (al, ah) = (a.lo as i128, a.hi as i128);
    let b = b.map(|b| (b.lo as i128, b.hi as i128));
    let corners = |f: fn(i128, i128) -> i128, (bl, bh): (i128, i128)| {
        let c = [f(al, bl), f(al, bh), f(ah, bl), f(ah, bh)];
        (*c.iter().min().unwrap(), *c.iter().max().unwrap())
    };
    match (op, b) {
        (Op::Neg, _) => Some((-ah, -al)),
        (Op::Add, Some(b)) => Some((al + b.0, ah + b.1)),
        (Op::Sub, Some(b)) => Some((al - b.1, ah - b.0)),
        (Op::Mul, Some(b)) => Some(corners(|x, y| x * y, b)),
        (Op::Min, Some(b)) => Some((al.min(b.0), ah.min(b.1))),
        (Op::Max, Some(b)) => Some((al.max(b.0), ah.max(b.1))),
        (Op::Shl, Some((k, k2))) if k == k2 && (0..63).contains(&k) => Some((al << k, ah << k)),
        _ => None,
    }
}

/// One lowered node: its flags and value (`engine::semantics::Sem`) and
/// its dtype.
#[derive(Clone, Debug)]
pub(crate) struct Lowered {
    pub sem: Sem<JInt, Cond>,
    pub dtype: DType,
}

/// A condition under which node `node` is undefined, for `reason`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct UbCond {
    pub node: NodeId,
    pub cond: Cond,
    pub reason: Ub,
}

/// The semantics' primitives on Cranelift values, emitted into the
/// function being built. The generated code never traps: every divisor is
/// replaced by 1 where it is 0 or where the 64-bit quotient would be
/// `i64::MIN / -1` (the semantics records those as undefined).
pub(crate) struct Jit<'a, 'b> {
    pub b: &'a mut FunctionBuilder<'b>,
    pub m: Model,
    /// The node being lowered, for its UB conditions.
    pub node: NodeId,
    pub ub: &'a mut Vec<UbCond>,
}

impl Jit<'_, '_> {
    /// An integer's register (a constant is materialized).
    pub fn val(&mut self, x: JInt) -> Value {
        match x {
            JInt::K(c) => self.b.ins().iconst(types::I64, c),
            JInt::V(v, _) => v,
        }
    }

    fn icmp(&mut self, cc: IntCC, a: JInt, b: JInt) -> Cond {
        if let Some(c) = span_decides(cc, a.span(), b.span()) {
            return Cond::Const(c);
        }
        match (a, b) {
            (JInt::K(x), JInt::K(y)) => Cond::Const(cc_holds(cc, x, y)),
            (JInt::V(v, _), JInt::K(k)) => Cond::Dyn(self.b.ins().icmp_imm_s(cc, v, k)),
            _ => {
                let (x, y) = (self.val(a), self.val(b));
                Cond::Dyn(self.b.ins().icmp(cc, x, y))
            }
        }
    }

    /// `/ % // mod ceildiv` on valid operands, guarded so that the hardware
    /// never traps; the condition is `MIN / -1` of the dtype for quotients.
    fn divmod(&mut self, op: Op, dt: DType, x: JInt, y: JInt) -> (JInt, Cond) {
        // A positive constant divisor is neither 0 nor -1: nothing to
        // guard, and no quotient without a result.
        if let JInt::K(c) = y {
            if let Some(v) = self.divmod_by_positive(op, x, c) {
                return (v, Cond::Const(false));
            }
        }
        let w = self.m.width;
        let min = match dt {
            DType::Index => w.min() as i64,
            DType::I32 => i32::MIN as i64,
            _ => i64::MIN,
        };
        let no_result = if op.is_quotient() {
            let m1 = self.icmp(IntCC::Equal, y, JInt::K(-1));
            let amin = self.icmp(IntCC::Equal, x, JInt::K(min));
            and(self.b, m1, amin)
        } else {
            Cond::Const(false)
        };
        let (a, d) = (self.val(x), self.val(y));
        let b = &mut *self.b;
        // The guarded divisor: 1 wherever the 64-bit division would trap
        // (zero, or i64::MIN / -1), whatever the operands' states, because
        // invalid and unconstrained lanes carry arbitrary bits.
        let ds = match y {
            JInt::K(c) if c != 0 && c != -1 => d,
            _ => {
                let bz = b.ins().icmp_imm_s(IntCC::Equal, d, 0);
                let bm1 = b.ins().icmp_imm_s(IntCC::Equal, d, -1);
                let amin = b.ins().icmp_imm_s(IntCC::Equal, a, i64::MIN);
                let trap = b.ins().band(bm1, amin);
                let bad = b.ins().bor(bz, trap);
                let one = b.ins().iconst(types::I64, 1);
                b.ins().select(bad, one, d)
            }
        };
        let q = b.ins().sdiv(a, ds);
        let qd = b.ins().imul(q, ds);
        let r = b.ins().isub(a, qd);
        let val = match op {
            Op::Div => q,
            Op::Rem => r,
            _ => {
                // r != 0 and the signs of r (= sign of a) and the divisor
                // differ: the truncated quotient was rounded up.
                let rnz = b.ins().icmp_imm_s(IntCC::NotEqual, r, 0);
                let x = b.ins().bxor(r, ds);
                let diff = b.ins().icmp_imm_s(IntCC::SignedLessThan, x, 0);
                match op {
                    Op::FloorDiv => {
                        let adj = b.ins().band(rnz, diff);
                        let adj = b.ins().uextend(types::I64, adj);
                        b.ins().isub(q, adj)
                    }
                    Op::Mod => {
                        let adj = b.ins().band(rnz, diff);
                        let zero = b.ins().iconst(types::I64, 0);
                        let add = b.ins().select(adj, ds, zero);
                        b.ins().iadd(r, add)
                    }
                    _ => {
                        let same = b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, x, 0);
                        let adj = b.ins().band(rnz, same);
                        let adj = b.ins().uextend(types::I64, adj);
                        b.ins().iadd(q, adj)
                    }
                }
            }
        };
        (JInt::V(val, Span::FULL), no_result)
    }

    /// `x op c` for a constant `c >= 1`, without a hardware division:
    /// the floor quotient `qf` and remainder `rf` first, every other op
    /// from them. `None` where no exact lowering applies (the caller
    /// divides). Exact for every `i64` dividend:
    ///
    /// - `c = 2^k`: `qf = x >> k` (arithmetic), `rf = x & (c - 1)`;
    /// - otherwise, with `s = x >> 63` (0 or -1) and `u = x ^ s` (`x`, or
    ///   `-x - 1`, both in `[0, 2^63)`): `qf = s ^ (u udiv c)`, since for
    ///   `x < 0`, `floor(x/c) = -floor((-x-1)/c) - 1`; the unsigned
    ///   quotient is a proved multiply-high ([`crate::divconst`]). A
    ///   dividend known non-negative skips `s`. `rf = x - qf*c` in
    ///   wrapping arithmetic is exact because the true `rf` lies in
    ///   `[0, c)`;
    /// - `/` and `%` truncate: `qf + 1` and `rf - c` where `x < 0` and
    ///   `rf != 0`; `ceildiv` is `qf + 1` where `rf != 0`.
    fn divmod_by_positive(&mut self, op: Op, x: JInt, c: i64) -> Option<JInt> {
        if c < 1 {
            return None;
        }
        let magic = if c > 1 && !(c as u64).is_power_of_two() {
            Some(crate::divconst::magic63(c as u64)?)
        } else {
            None
        };
        let sp = x.span();
        let a = self.val(x);
        let b = &mut *self.b;
        let (qf, rf) = if c == 1 {
            (a, b.ins().iconst(types::I64, 0))
        } else if let Some(mg) = magic {
            let mul = b.ins().iconst(types::I64, mg.mul as i64);
            let qf = if sp.lo >= 0 {
                let h = b.ins().umulhi(a, mul);
                b.ins().ushr_imm_u(h, mg.shift as i64)
            } else {
                let s = b.ins().sshr_imm_u(a, 63);
                let u = b.ins().bxor(a, s);
                let h = b.ins().umulhi(u, mul);
                let q = b.ins().ushr_imm_u(h, mg.shift as i64);
                b.ins().bxor(q, s)
            };
            let qc = b.ins().imul_imm_s(qf, c);
            (qf, b.ins().isub(a, qc))
        } else {
            let k = c.trailing_zeros() as i64;
            (b.ins().sshr_imm_u(a, k), b.ins().band_imm_s(a, c - 1))
        };
        let (lo, hi, ci) = (sp.lo as i128, sp.hi as i128, c as i128);
        let (flo, fhi) = (lo.div_euclid(ci), hi.div_euclid(ci));
        // Bounds of the remainder: exact within one period, else [0, c).
        let (mlo, mhi) = if flo == fhi {
            (lo - flo * ci, hi - flo * ci)
        } else {
            (0, ci - 1)
        };
        let (val, span) = match op {
            Op::FloorDiv => (qf, (flo, fhi)),
            Op::Mod => (rf, (mlo, mhi)),
            Op::Div | Op::Rem if sp.lo >= 0 => {
                let v = if op == Op::Div { qf } else { rf };
                let s = if op == Op::Div {
                    (flo, fhi)
                } else {
                    (mlo, mhi)
                };
                (v, s)
            }
            Op::Div | Op::Rem => {
                let rnz = b.ins().icmp_imm_s(IntCC::NotEqual, rf, 0);
                let neg = b.ins().icmp_imm_s(IntCC::SignedLessThan, a, 0);
                let adj = b.ins().band(rnz, neg);
                if op == Op::Div {
                    let one = b.ins().uextend(types::I64, adj);
                    (b.ins().iadd(qf, one), (lo / ci, hi / ci))
                } else {
                    let zero = b.ins().iconst(types::I64, 0);
                    let cv = b.ins().iconst(types::I64, c);
                    let sub = b.ins().select(adj, cv, zero);
                    let r = b.ins().isub(rf, sub);
                    (r, ((1 - ci).max(lo.min(0)), (ci - 1).min(hi.max(0))))
                }
            }
            Op::CeilDiv => {
                let rnz = b.ins().icmp_imm_s(IntCC::NotEqual, rf, 0);
                let one = b.ins().uextend(types::I64, rnz);
                let ceil = |v: i128| -(-v).div_euclid(ci);
                (b.ins().iadd(qf, one), (ceil(lo), ceil(hi)))
            }
            _ => unreachable!("{op:?} is not a division"),
        };
        let span = Span::exact(span.0, span.1).expect("a quotient or remainder of an i64");
        Some(JInt::V(val, span))
    }
}

/// The comparison's outcome if the operands' bounds decide it.
fn span_decides(cc: IntCC, a: Span, b: Span) -> Option<bool> {
    let lt = |a: Span, b: Span| {
        if a.hi < b.lo {
            Some(true)
        } else if a.lo >= b.hi {
            Some(false)
        } else {
            None
        }
    };
    let le = |a: Span, b: Span| lt(b, a).map(|x| !x);
    match cc {
        IntCC::SignedLessThan => lt(a, b),
        IntCC::SignedLessThanOrEqual => le(a, b),
        IntCC::SignedGreaterThan => lt(b, a),
        IntCC::SignedGreaterThanOrEqual => le(b, a),
        IntCC::Equal | IntCC::NotEqual => {
            let eq = if a.hi < b.lo || b.hi < a.lo {
                Some(false)
            } else if a.lo == a.hi && a == b {
                Some(true)
            } else {
                None
            };
            eq.map(|e| e == (cc == IntCC::Equal))
        }
        _ => None,
    }
}

fn cc_holds(cc: IntCC, x: i64, y: i64) -> bool {
    match cc {
        IntCC::Equal => x == y,
        IntCC::NotEqual => x != y,
        IntCC::SignedLessThan => x < y,
        IntCC::SignedLessThanOrEqual => x <= y,
        IntCC::SignedGreaterThan => x > y,
        IntCC::SignedGreaterThanOrEqual => x >= y,
        _ => unreachable!("signed comparisons only"),
    }
}

impl Prims for Jit<'_, '_> {
    type I = JInt;
    type B = Cond;

    fn model(&self) -> Model {
        self.m
    }
    fn bool_lit(&mut self, b: bool) -> Cond {
        Cond::Const(b)
    }
    fn int_lit(&mut self, v: i128, _: DType) -> JInt {
        JInt::K(v as i64)
    }
    fn not(&mut self, a: &Cond) -> Cond {
        not(self.b, *a)
    }
    fn and(&mut self, a: &Cond, b: &Cond) -> Cond {
        and(self.b, *a, *b)
    }
    fn or(&mut self, a: &Cond, b: &Cond) -> Cond {
        or(self.b, *a, *b)
    }
    fn xor(&mut self, a: &Cond, b: &Cond) -> Cond {
        match (*a, *b) {
            (Cond::Const(x), Cond::Const(y)) => Cond::Const(x != y),
            (Cond::Const(false), c) | (c, Cond::Const(false)) => c,
            (Cond::Const(true), c) | (c, Cond::Const(true)) => not(self.b, c),
            (Cond::Dyn(p), Cond::Dyn(q)) => Cond::Dyn(self.b.ins().bxor(p, q)),
        }
    }
    fn select_int(&mut self, c: &Cond, a: &JInt, b: &JInt) -> JInt {
        match (*c, *a, *b) {
            (Cond::Const(true), ..) => *a,
            (Cond::Const(false), ..) => *b,
            (_, JInt::K(x), JInt::K(y)) if x == y => *a,
            (Cond::Dyn(c), _, _) => {
                let (x, y) = (self.val(*a), self.val(*b));
                JInt::V(self.b.ins().select(c, x, y), a.span().hull(b.span()))
            }
        }
    }
    fn select_bool(&mut self, c: &Cond, a: &Cond, b: &Cond) -> Cond {
        match (*c, *a, *b) {
            (Cond::Const(true), ..) => *a,
            (Cond::Const(false), ..) => *b,
            (_, Cond::Const(x), Cond::Const(y)) if x == y => *a,
            (Cond::Dyn(c), _, _) => {
                let (x, y) = (mat_cond(self.b, *a), mat_cond(self.b, *b));
                Cond::Dyn(self.b.ins().select(c, x, y))
            }
        }
    }
    fn lt(&mut self, a: &JInt, b: &JInt, _: DType) -> Cond {
        self.icmp(IntCC::SignedLessThan, *a, *b)
    }
    fn le(&mut self, a: &JInt, b: &JInt, _: DType) -> Cond {
        self.icmp(IntCC::SignedLessThanOrEqual, *a, *b)
    }
    fn eq(&mut self, a: &JInt, b: &JInt, _: DType) -> Cond {
        self.icmp(IntCC::Equal, *a, *b)
    }

    /// Values are `i64` registers: an `index` value at width W <= 64 is
    /// sign-extended, `i32` values are kept wrapped to 32 bits and
    /// sign-extended. Index overflow at W < 64 is detected by computing
    /// exactly in 64 bits and range-checking (operands fit W <= 32 bits, so
    /// sums, products and shifts by less than W are exact); at W = 64 by
    /// Cranelift's overflow-checking ops.
    fn arith(&mut self, op: Op, dt: DType, from: DType, args: &[JInt]) -> (JInt, Cond) {
        if op.is_divmod() {
            return self.divmod(op, dt, args[0], args[1]);
        }
        let w = self.m.width;
        let sa = args[0].span();
        let sb = args.get(1).map(|y| y.span());
        let a = self.val(args[0]);
        let y = args.get(1).map(|&y| self.val(y));
        let b = &mut *self.b;
        // Bounds that put the exact result within the dtype: the plain
        // instruction computes it, with nothing to check or wrap.
        let (dlo, dhi) = w.dtype_bounds(dt);
        if let Some((lo, hi)) = exact_span(op, sa, sb) {
            if dlo <= lo && hi <= dhi {
                let r = match op {
                    Op::Neg => b.ins().ineg(a),
                    Op::Add => b.ins().iadd(a, y.unwrap()),
                    Op::Sub => b.ins().isub(a, y.unwrap()),
                    Op::Mul => b.ins().imul(a, y.unwrap()),
                    Op::Min => b.ins().smin(a, y.unwrap()),
                    Op::Max => b.ins().smax(a, y.unwrap()),
                    Op::Shl => b.ins().ishl(a, y.unwrap()),
                    _ => unreachable!("{op:?} has no exact bounds"),
                };
                let span = Span::exact(lo, hi).expect("within the dtype");
                return (JInt::V(r, span), Cond::Const(false));
            }
        }
        let (val, ovf) = match (op, dt) {
            (Op::Min, _) => (b.ins().smin(a, y.unwrap()), Cond::Const(false)),
            (Op::Max, _) => (b.ins().smax(a, y.unwrap()), Cond::Const(false)),
            (Op::BitAnd, _) => (b.ins().band(a, y.unwrap()), Cond::Const(false)),
            // floor(a / 2^k); an amount outside [0, bits) is undefined
            // (the semantics records it) and Cranelift masks it.
            (Op::Shr, _) => (b.ins().sshr(a, y.unwrap()), Cond::Const(false)),
            (Op::Cast, DType::Index) => {
                let src_fits = match from {
                    DType::Index => true,
                    DType::I32 => w.0 >= 32,
                    _ => w.0 >= 64,
                } || sa.within(w.min(), w.max());
                let ovf = if src_fits {
                    Cond::Const(false)
                } else {
                    not_fits(b, w, a)
                };
                (a, ovf)
            }
            (Op::Cast, DType::I32) => (wrap32(b, a), Cond::Const(false)),
            (Op::Cast, _) => (a, Cond::Const(false)),
            (Op::Shl, DType::Index) if w.0 == 64 => {
                let k = y.unwrap();
                let r = b.ins().ishl(a, k);
                // Bits shifted out past the sign: shifting back does not
                // restore the value.
                let back = b.ins().sshr(r, k);
                (r, Cond::Dyn(b.ins().icmp(IntCC::NotEqual, back, a)))
            }
            (op, DType::Index) if w.0 == 64 => {
                let (r, of) = match op {
                    Op::Neg => {
                        let r = b.ins().ineg(a);
                        (r, b.ins().icmp_imm_s(IntCC::Equal, a, i64::MIN))
                    }
                    Op::Add => b.ins().sadd_overflow(a, y.unwrap()),
                    Op::Sub => b.ins().ssub_overflow(a, y.unwrap()),
                    Op::Mul => b.ins().smul_overflow(a, y.unwrap()),
                    _ => unreachable!("{op:?} is not index arithmetic"),
                };
                (r, Cond::Dyn(of))
            }
            (op, _) => {
                // Exact in 64 bits for index operands of W <= 32 bits; the
                // wrap of i32/i64 follows from computing modulo 2^64.
                let r = match op {
                    Op::Neg => b.ins().ineg(a),
                    Op::Add => b.ins().iadd(a, y.unwrap()),
                    Op::Sub => b.ins().isub(a, y.unwrap()),
                    Op::Mul => b.ins().imul(a, y.unwrap()),
                    Op::Shl => b.ins().ishl(a, y.unwrap()),
                    _ => unreachable!("{op:?} is not integer arithmetic"),
                };
                match dt {
                    DType::Index => (r, not_fits(b, w, r)),
                    DType::I32 => (wrap32(b, r), Cond::Const(false)),
                    _ => (r, Cond::Const(false)),
                }
            }
        };
        // What the register holds, in every lane.
        let span = match (op, dt) {
            (Op::Min | Op::Max, _) => exact_span(op, sa, sb)
                .and_then(|(lo, hi)| Span::exact(lo, hi))
                .expect("min and max of i64s"),
            (Op::BitAnd, _) => {
                let b = sb.expect("binary");
                match (sa.lo >= 0, b.lo >= 0) {
                    (true, true) => Span {
                        lo: 0,
                        hi: sa.hi.min(b.hi),
                    },
                    (true, false) => Span { lo: 0, hi: sa.hi },
                    (false, true) => Span { lo: 0, hi: b.hi },
                    (false, false) => Span::FULL,
                }
            }
            // x >> k lies in [0, x] for x >= 0 and in [x, -1] below.
            (Op::Shr, _) => Span {
                lo: sa.lo.min(0),
                hi: if sa.hi >= 0 { sa.hi } else { -1 },
            },
            (Op::Cast, DType::I32) if !sa.within(dlo, dhi) => Span::I32,
            (Op::Cast, _) => sa,
            (_, DType::I32) => Span::I32,
            _ => Span::FULL,
        };
        (JInt::V(val, span), ovf)
    }

    fn undefined(&mut self, cond: Cond, reason: Ub) {
        if !matches!(cond, Cond::Const(false)) {
            self.ub.push(UbCond {
                node: self.node,
                cond,
                reason,
            });
        }
    }
}

/// Emits the nodes of one graph into a function being built.
///
/// `vals` is indexed by node id; nodes not lowered yet are `None`. Several
/// root sets may share one `Lower` (the oracle lowers the source and the
/// target together so shared nodes are computed once); UB conditions are
/// kept per node so each root set can fold its own.
pub(crate) struct Lower<'g> {
    pub g: &'g Graph,
    pub m: Model,
    pub vals: Vec<Option<Lowered>>,
    pub ub: Vec<UbCond>,
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

    pub fn get(&self, id: NodeId) -> &Lowered {
        self.vals[id.index()]
            .as_ref()
            .expect("operands are lowered before their users")
    }

    /// Lowers `order` (increasing ids, e.g. from [`Graph::reachable`]).
    /// `env(v)` gives the `i64` value of variable `v`. `vars_in_bounds`:
    /// the caller guarantees every variable lies within its declared bounds
    /// (true in the oracle's loops), so an `index` variable whose bounds fit
    /// W needs no run-time range check; otherwise every `index` variable is
    /// checked, as the interpreter does.
    ///
    /// Each node's undefinedness conditions go to `ub` as soon as the node
    /// is lowered, for the caller to fold into an accumulator: kept until
    /// the end of the function they would all be live at once, each in its
    /// own spill slot.
    pub fn lower(
        &mut self,
        b: &mut FunctionBuilder<'_>,
        order: &[NodeId],
        env: &mut dyn FnMut(&mut FunctionBuilder<'_>, u32) -> Value,
        vars_in_bounds: bool,
        ub: &mut dyn FnMut(&mut FunctionBuilder<'_>, UbCond),
    ) {
        for &id in order {
            if self.vals[id.index()].is_none() {
                let l = self.node(b, id, env, vars_in_bounds);
                self.vals[id.index()] = Some(l);
                for u in self.ub.drain(..) {
                    ub(b, u);
                }
            }
        }
    }

    /// The primitives for emitting node `node`.
    pub fn prims<'a, 'b>(
        &'a mut self,
        b: &'a mut FunctionBuilder<'b>,
        node: NodeId,
    ) -> Jit<'a, 'b> {
        Jit {
            b,
            m: self.m,
            node,
            ub: &mut self.ub,
        }
    }

    fn node(
        &mut self,
        b: &mut FunctionBuilder<'_>,
        id: NodeId,
        env: &mut dyn FnMut(&mut FunctionBuilder<'_>, u32) -> Value,
        vars_in_bounds: bool,
    ) -> Lowered {
        let n = *self.g.node(id);
        let dtype = n.dtype;
        let sem = match n.op {
            Op::Const(c) => semantics::constant(&mut self.prims(b, id), c as i128, dtype),
            Op::Invalid => semantics::invalid(&mut self.prims(b, id)),
            Op::Var(v) => {
                let x = env(b, v);
                let d = self.g.var(v);
                let span = if vars_in_bounds {
                    Span { lo: d.lo, hi: d.hi }
                } else {
                    Span::FULL
                };
                let val = match dtype {
                    DType::Bool => {
                        SemValue::Bool(Cond::Dyn(b.ins().icmp_imm_s(IntCC::NotEqual, x, 0)))
                    }
                    DType::Index => {
                        let d = self.g.var(v);
                        let static_ok = vars_in_bounds
                            && self.m.width.fits(d.lo as i128)
                            && self.m.width.fits(d.hi as i128);
                        if !static_ok {
                            let c = not_fits(b, self.m.width, x);
                            self.prims(b, id).undefined(c, Ub::IndexOverflow);
                        }
                        SemValue::Int(JInt::V(x, span))
                    }
                    DType::I32 | DType::I64 => SemValue::Int(JInt::V(x, span)),
                };
                semantics::valid(&mut self.prims(b, id), val)
            }
            op => {
                let args: Vec<Sem<JInt, Cond>> =
                    n.src().iter().map(|&s| self.get(s).sem.clone()).collect();
                let dts: Vec<DType> = n.src().iter().map(|&s| self.g.node(s).dtype).collect();
                semantics::apply(&mut self.prims(b, id), op, dtype, &args, &dts)
            }
        };
        Lowered { sem, dtype }
    }
}

/// State codes of a stored result.
pub(crate) const ST_VALID: i64 = 0;
pub(crate) const ST_UNC: i64 = 1;

/// A condition as an `i8` register.
pub(crate) fn mat_cond(b: &mut FunctionBuilder<'_>, c: Cond) -> Value {
    match c {
        Cond::Const(x) => b.ins().iconst(types::I8, x as i64),
        Cond::Dyn(v) => v,
    }
}

/// The state code of a result: 0 valid, 1 unconstrained, 2 invalid.
pub(crate) fn state_code(b: &mut FunctionBuilder<'_>, s: &Sem<JInt, Cond>) -> Value {
    let (inv, unc) = (mat_cond(b, s.inv), mat_cond(b, s.unc));
    // inv * 2 + unc (never both).
    let twice = b.ins().ishl_imm_u(inv, 1);
    b.ins().bor(twice, unc)
}

pub(crate) fn and(b: &mut FunctionBuilder<'_>, x: Cond, y: Cond) -> Cond {
    match (x, y) {
        (Cond::Const(false), _) | (_, Cond::Const(false)) => Cond::Const(false),
        (Cond::Const(true), c) | (c, Cond::Const(true)) => c,
        (Cond::Dyn(p), Cond::Dyn(q)) => Cond::Dyn(b.ins().band(p, q)),
    }
}

pub(crate) fn or(b: &mut FunctionBuilder<'_>, x: Cond, y: Cond) -> Cond {
    match (x, y) {
        (Cond::Const(true), _) | (_, Cond::Const(true)) => Cond::Const(true),
        (Cond::Const(false), c) | (c, Cond::Const(false)) => c,
        (Cond::Dyn(p), Cond::Dyn(q)) => Cond::Dyn(b.ins().bor(p, q)),
    }
}

pub(crate) fn not(b: &mut FunctionBuilder<'_>, x: Cond) -> Cond {
    match x {
        Cond::Const(c) => Cond::Const(!c),
        Cond::Dyn(p) => Cond::Dyn(b.ins().bxor_imm_s(p, 1)),
    }
}

/// `v` (an exact 64-bit integer) lies outside the signed W-bit range.
fn not_fits(b: &mut FunctionBuilder<'_>, w: Width, v: Value) -> Cond {
    if w.0 >= 64 {
        return Cond::Const(false);
    }
    // v + 2^(W-1) in [0, 2^W) as an unsigned number, i.e. v in [MIN, MAX].
    let shifted = b.ins().iadd_imm_s(v, 1i64 << (w.0 - 1));
    Cond::Dyn(
        b.ins()
            .icmp_imm_u(IntCC::UnsignedGreaterThan, shifted, (1i64 << w.0) - 1),
    )
}

/// Two's complement wrap to 32 bits, sign-extended back to 64.
fn wrap32(b: &mut FunctionBuilder<'_>, v: Value) -> Value {
    let n = b.ins().ireduce(types::I32, v);
    b.ins().sextend(types::I64, n)
}

/// Folds UB conditions into one `i8` flag: any of them holds.
pub(crate) fn fold_any(b: &mut FunctionBuilder<'_>, conds: impl Iterator<Item = Cond>) -> Cond {
    let mut acc = Cond::Const(false);
    for c in conds {
        acc = or(b, acc, c);
    }
    acc
}

// ---- the single-point evaluator ------------------------------------------------

/// Encodes "node `id` is undefined for `reason`" as a nonzero `i64`.
fn ub_code(node: NodeId, reason: Ub) -> i64 {
    let r = Ub::ALL
        .iter()
        .position(|&u| u == reason)
        .expect("every reason is listed") as i64;
    ((node.0 as i64 + 1) << 2) | r
}

fn ub_decode(code: i64) -> Undefined {
    let reason = Ub::ALL[(code & 3) as usize];
    Undefined {
        node: NodeId(((code >> 2) - 1) as u32),
        reason,
    }
}

type EvalFn = unsafe extern "C" fn(*const i64, *mut i64, *mut u8) -> i64;

/// A graph compiled for evaluation at single points: the JIT counterpart of
/// [`engine::interp::eval`], returning exactly the same information (root
/// values, or the first undefined node in id order and why), so tests can
/// compare the two point by point.
pub struct CompiledEval {
    code: JitCode,
    func: EvalFn,
    roots: Vec<NodeId>,
    root_dtypes: Vec<DType>,
    nvars: usize,
    width: Width,
}

/// The raw values and lane states one [`CompiledEval`] call writes, kept
/// between calls.
#[derive(Default)]
pub struct EvalScratch {
    vals: Vec<i64>,
    sts: Vec<u8>,
}

impl CompiledEval {
    /// Compiles `roots` of `g` under model `m` (or at a width).
    pub fn new(g: &Graph, roots: &[NodeId], m: impl Into<Model>) -> Result<CompiledEval, JitError> {
        let m = m.into();
        let w = m.width;
        check_width(w)?;
        let order = g.reachable(roots);
        let ptr = ptr_type()?;
        let (code, fptr) = compile_function(&[ptr, ptr, ptr], |b, args| {
            let (env_p, vals_p, st_p) = (args[0], args[1], args[2]);
            let mut lower = Lower::new(g, m);
            let mut env = |b: &mut FunctionBuilder<'_>, v: u32| {
                b.ins().load(types::I64, mem(), env_p, 8 * v as i32)
            };
            // The first undefined node in id order (nodes are lowered in
            // that order): a condition only sets the code while it is 0.
            let zero = b.ins().iconst(types::I64, 0);
            let mut code = zero;
            let mut first_ub = |b: &mut FunctionBuilder<'_>, u: UbCond| {
                let k = b.ins().iconst(types::I64, ub_code(u.node, u.reason));
                let this = match u.cond {
                    Cond::Const(false) => return,
                    Cond::Const(true) => k,
                    Cond::Dyn(c) => b.ins().select(c, k, zero),
                };
                code = b.ins().select(code, code, this);
            };
            // The environment is arbitrary here: check index variables
            // against W at run time, as the interpreter does.
            lower.lower(b, &order, &mut env, false, &mut first_ub);
            for (i, &r) in roots.iter().enumerate() {
                let l = lower.get(r).clone();
                let v = match l.sem.val {
                    SemValue::Bool(c) => {
                        let c = mat_cond(b, c);
                        b.ins().uextend(types::I64, c)
                    }
                    SemValue::Int(x) => lower.prims(b, r).val(x),
                };
                b.ins().store(mem(), v, vals_p, 8 * i as i32);
                let s = state_code(b, &l.sem);
                b.ins().store(mem(), s, st_p, i as i32);
            }
            b.ins().return_(&[code]);
            Ok(())
        })?;
        // SAFETY: the function was built with exactly this signature.
        let func: EvalFn = unsafe { std::mem::transmute::<*const u8, EvalFn>(fptr) };
        Ok(CompiledEval {
            code,
            func,
            roots: roots.to_vec(),
            root_dtypes: roots.iter().map(|&r| g.node(r).dtype).collect(),
            nvars: g.vars().len(),
            width: w,
        })
    }

    /// Evaluates the roots at one point. `env` holds one value per variable
    /// of the graph's table (like [`engine::interp::Env`], but `i64`: every
    /// variable's bounds fit 64 bits). Bool variables are true when nonzero.
    /// An `index` variable may hold any value (outside W bits it is an
    /// index overflow, as in the interpreter); an `i32` variable's value
    /// must fit `i32`, as its declared bounds do (the interpreter would
    /// compute with the out-of-range value exactly, the JIT in 64 bits).
    pub fn eval(&self, env: &[i64]) -> Result<Vec<Val>, Undefined> {
        let mut out = Vec::new();
        self.eval_into(env, &mut EvalScratch::default(), &mut out)?;
        Ok(out)
    }

    /// [`CompiledEval::eval`] into `out` (cleared first), with `scratch`
    /// reused from call to call: a walk of thousands of points allocates
    /// nothing per point.
    pub fn eval_into(
        &self,
        env: &[i64],
        scratch: &mut EvalScratch,
        out: &mut Vec<Val>,
    ) -> Result<(), Undefined> {
        assert!(
            env.len() >= self.nvars,
            "environment has {} values for {} variables",
            env.len(),
            self.nvars
        );
        let n = self.roots.len();
        let (vals, sts) = (&mut scratch.vals, &mut scratch.sts);
        vals.resize(n, 0);
        sts.resize(n, 0);
        // SAFETY: the code reads `nvars` i64s from env and writes `n` values
        // and `n` states; the buffers are at least that long. `self.code`
        // keeps the code alive for the duration of the call.
        let code = self
            .code
            .call(|| unsafe { (self.func)(env.as_ptr(), vals.as_mut_ptr(), sts.as_mut_ptr()) });
        if code != 0 {
            return Err(ub_decode(code));
        }
        out.clear();
        out.extend((0..n).map(|i| match sts[i] as i64 {
            ST_VALID if self.root_dtypes[i] == DType::Bool => Val::Bool(vals[i] != 0),
            ST_VALID => Val::Int(vals[i] as i128),
            ST_UNC => Val::Unconstrained,
            _ => Val::Invalid,
        }));
        Ok(())
    }

    pub fn roots(&self) -> &[NodeId] {
        &self.roots
    }

    pub fn width(&self) -> Width {
        self.width
    }
}

/// Shorthand for [`CompiledEval::new`].
pub fn compile_eval(
    g: &Graph,
    roots: &[NodeId],
    m: impl Into<Model>,
) -> Result<CompiledEval, JitError> {
    CompiledEval::new(g, roots, m)
}
