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
//! `smul_overflow`.
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
use engine::interp::{Ub, Undefined, Val, Width};
use engine::ir::{DType, Graph, NodeId, Op, TypeError};
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

/// The host ISA, built once: building it probes CPU features, which is too
/// slow to repeat for every one of the many small functions a campaign
/// compiles.
fn host_isa() -> Result<OwnedTargetIsa, JitError> {
    static ISA: OnceLock<Result<OwnedTargetIsa, String>> = OnceLock::new();
    ISA.get_or_init(|| {
        let mut flags = settings::builder();
        let verifier = if cfg!(debug_assertions) {
            "true"
        } else {
            "false"
        };
        for (k, v) in [
            ("opt_level", "speed"),
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
}

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
    let isa = host_isa()?;
    let mut code = JitCode {
        module: Some(JITModule::new(JITBuilder::with_isa(
            isa,
            default_libcall_names(),
        ))),
    };
    let module = code.module.as_mut().expect("just built");
    let mut ctx = module.make_context();
    for &p in params {
        ctx.func.signature.params.push(AbiParam::new(p));
    }
    ctx.func.signature.returns.push(AbiParam::new(types::I64));
    let mut fctx = FunctionBuilderContext::new();
    {
        let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let args = b.block_params(entry).to_vec();
        body(&mut b, &args)?;
        b.seal_all_blocks();
        b.finalize(module.isa().frontend_config());
    }
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
    Ok(host_isa()?.pointer_type())
}

pub(crate) fn mem() -> MemFlagsData {
    MemFlagsData::trusted()
}

// ---- lowering ----------------------------------------------------------------

/// The state of a node in one evaluation: known at compile time, or an `i8`
/// computed at run time (0 valid, 1 unconstrained, 2 invalid; the encoding
/// makes the integer-op rule "invalid beats unconstrained beats valid" a
/// `umax`).
#[derive(Clone, Copy, Debug)]
pub(crate) enum St {
    Valid,
    Unc,
    Inv,
    Dyn(Value),
}

pub(crate) const ST_VALID: i64 = 0;
pub(crate) const ST_UNC: i64 = 1;
pub(crate) const ST_INV: i64 = 2;

/// A boolean condition, folded at compile time where possible so that
/// always-valid nodes cost nothing for their state and UB bookkeeping.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Cond {
    Const(bool),
    /// An `i8` that is 0 or 1.
    Dyn(Value),
}

/// One lowered node: its value (`i64`, or `i8` for bools) and its state.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Lowered {
    pub val: Value,
    pub st: St,
    pub dtype: DType,
}

/// A condition under which node `node` is undefined, for `reason`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct UbCond {
    pub node: NodeId,
    pub cond: Cond,
    pub reason: Ub,
}

/// Emits the nodes of one graph into a function being built.
///
/// `vals` is indexed by node id; nodes not lowered yet are `None`. Several
/// root sets may share one `Lower` (the oracle lowers the source and the
/// target together so shared nodes are computed once); UB conditions are
/// kept per node so each root set can fold its own.
pub(crate) struct Lower<'g> {
    pub g: &'g Graph,
    pub w: Width,
    pub vals: Vec<Option<Lowered>>,
    pub ub: Vec<UbCond>,
}

impl<'g> Lower<'g> {
    pub fn new(g: &'g Graph, w: Width) -> Lower<'g> {
        Lower {
            g,
            w,
            vals: vec![None; g.len()],
            ub: Vec::new(),
        }
    }

    pub fn get(&self, id: NodeId) -> Lowered {
        self.vals[id.index()].expect("operands are lowered before their users")
    }

    /// Lowers `order` (increasing ids, e.g. from [`Graph::reachable`]).
    /// `env(v)` gives the `i64` value of variable `v`. `vars_in_bounds`:
    /// the caller guarantees every variable lies within its declared bounds
    /// (true in the oracle's loops), so an `index` variable whose bounds fit
    /// W needs no run-time range check; otherwise every `index` variable is
    /// checked, as the interpreter does.
    pub fn lower(
        &mut self,
        b: &mut FunctionBuilder<'_>,
        order: &[NodeId],
        env: &mut dyn FnMut(&mut FunctionBuilder<'_>, u32) -> Value,
        vars_in_bounds: bool,
    ) {
        for &id in order {
            if self.vals[id.index()].is_none() {
                let l = self.node(b, id, env, vars_in_bounds);
                self.vals[id.index()] = Some(l);
            }
        }
    }

    fn push_ub(&mut self, node: NodeId, cond: Cond, reason: Ub) {
        if !matches!(cond, Cond::Const(false)) {
            self.ub.push(UbCond { node, cond, reason });
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
        let w = self.w;
        let dtype = n.dtype;
        let valid = |val| Lowered {
            val,
            st: St::Valid,
            dtype,
        };
        match n.op {
            Op::Const(c) => match dtype {
                DType::Bool => valid(b.ins().iconst(types::I8, (c != 0) as i64)),
                _ => {
                    if dtype == DType::Index && !w.fits(c as i128) {
                        self.push_ub(id, Cond::Const(true), Ub::IndexOverflow);
                    }
                    valid(b.ins().iconst(types::I64, c))
                }
            },
            Op::Var(v) => {
                let x = env(b, v);
                match dtype {
                    DType::Bool => valid(b.ins().icmp_imm_s(IntCC::NotEqual, x, 0)),
                    DType::Index => {
                        let d = self.g.var(v);
                        let static_ok =
                            vars_in_bounds && w.fits(d.lo as i128) && w.fits(d.hi as i128);
                        if !static_ok {
                            let c = not_fits(b, w, x);
                            self.push_ub(id, c, Ub::IndexOverflow);
                        }
                        valid(x)
                    }
                    DType::I32 | DType::I64 => valid(x),
                }
            }
            Op::Invalid => Lowered {
                val: b.ins().iconst(types::I64, 0),
                st: St::Inv,
                dtype,
            },
            Op::Neg | Op::Cast | Op::Add | Op::Sub | Op::Mul | Op::Min | Op::Max => {
                self.int_arith(b, id)
            }
            Op::Div | Op::Rem | Op::FloorDiv | Op::Mod | Op::CeilDiv => self.divmod(b, id),
            Op::Lt | Op::Le | Op::Eq | Op::Ne => {
                let (x, y) = (self.get(n.src()[0]), self.get(n.src()[1]));
                let cc = match n.op {
                    Op::Lt => IntCC::SignedLessThan,
                    Op::Le => IntCC::SignedLessThanOrEqual,
                    Op::Eq => IntCC::Equal,
                    _ => IntCC::NotEqual,
                };
                Lowered {
                    val: b.ins().icmp(cc, x.val, y.val),
                    st: any_nonvalid_unc(b, &[x.st, y.st]),
                    dtype,
                }
            }
            Op::Not => {
                let x = self.get(n.src()[0]);
                Lowered {
                    val: b.ins().icmp_imm_s(IntCC::Equal, x.val, 0),
                    st: any_nonvalid_unc(b, &[x.st]),
                    dtype,
                }
            }
            Op::And | Op::Or | Op::Xor => {
                let (x, y) = (self.get(n.src()[0]), self.get(n.src()[1]));
                let val = match n.op {
                    Op::And => b.ins().band(x.val, y.val),
                    Op::Or => b.ins().bor(x.val, y.val),
                    _ => b.ins().bxor(x.val, y.val),
                };
                Lowered {
                    val,
                    st: any_nonvalid_unc(b, &[x.st, y.st]),
                    dtype,
                }
            }
            Op::Where => {
                let s = n.src();
                let (c, x, y) = (self.get(s[0]), self.get(s[1]), self.get(s[2]));
                let val = b.ins().select(c.val, x.val, y.val);
                let inner = match (x.st, y.st) {
                    (St::Valid, St::Valid) => St::Valid,
                    (St::Unc, St::Unc) => St::Unc,
                    (St::Inv, St::Inv) => St::Inv,
                    (xs, ys) => {
                        let (xm, ym) = (mat(b, xs), mat(b, ys));
                        St::Dyn(b.ins().select(c.val, xm, ym))
                    }
                };
                let st = match c.st {
                    St::Valid => inner,
                    St::Unc | St::Inv => St::Unc,
                    St::Dyn(sc) => {
                        let one = b.ins().iconst(types::I8, ST_UNC);
                        let im = mat(b, inner);
                        St::Dyn(b.ins().select(sc, one, im))
                    }
                };
                Lowered { val, st, dtype }
            }
        }
    }

    /// `neg cast + - * min max`.
    fn int_arith(&mut self, b: &mut FunctionBuilder<'_>, id: NodeId) -> Lowered {
        let n = *self.g.node(id);
        let w = self.w;
        let dtype = n.dtype;
        let x = self.get(n.src()[0]);
        let y = n.src().get(1).map(|&s| self.get(s));
        let st = int_state(b, x.st, y.map(|y| y.st));
        let a = x.val;
        let yv = y.map(|y| y.val);
        // `ovf`: the exact result does not fit an index of width W (only
        // meaningful when the result is valid, i.e. all operands are).
        let (val, ovf) = match (n.op, dtype) {
            (Op::Min, _) => (b.ins().smin(a, yv.unwrap()), Cond::Const(false)),
            (Op::Max, _) => (b.ins().smax(a, yv.unwrap()), Cond::Const(false)),
            (Op::Cast, DType::Index) => {
                let src_fits = match x.dtype {
                    DType::Index => true,
                    DType::I32 => w.0 >= 32,
                    _ => w.0 >= 64,
                };
                let ovf = if src_fits {
                    Cond::Const(false)
                } else {
                    not_fits(b, w, a)
                };
                (a, ovf)
            }
            (Op::Cast, DType::I32) => (wrap32(b, a), Cond::Const(false)),
            (Op::Cast, _) => (a, Cond::Const(false)),
            (op, DType::Index) if w.0 == 64 => {
                let (r, of) = match op {
                    Op::Neg => {
                        let r = b.ins().ineg(a);
                        (r, b.ins().icmp_imm_s(IntCC::Equal, a, i64::MIN))
                    }
                    Op::Add => b.ins().sadd_overflow(a, yv.unwrap()),
                    Op::Sub => b.ins().ssub_overflow(a, yv.unwrap()),
                    _ => b.ins().smul_overflow(a, yv.unwrap()),
                };
                (r, Cond::Dyn(of))
            }
            (op, _) => {
                // Exact in 64 bits for index operands of W <= 32 bits; the
                // wrap of i32/i64 follows from computing modulo 2^64.
                let r = match op {
                    Op::Neg => b.ins().ineg(a),
                    Op::Add => b.ins().iadd(a, yv.unwrap()),
                    Op::Sub => b.ins().isub(a, yv.unwrap()),
                    _ => b.ins().imul(a, yv.unwrap()),
                };
                match dtype {
                    DType::Index => (r, not_fits(b, w, r)),
                    DType::I32 => (wrap32(b, r), Cond::Const(false)),
                    _ => (r, Cond::Const(false)),
                }
            }
        };
        if dtype == DType::Index {
            let v = is_valid(b, st);
            let c = and(b, v, ovf);
            self.push_ub(id, c, Ub::IndexOverflow);
            // An unconstrained operand could be any value: undefined if
            // some value overflows (interp::unconstrained_overflow).
            let u = self.unconstrained_overflow(b, n.op, x, y);
            let not_inv = is_invalid(b, st);
            let not_inv = not(b, not_inv);
            let c = and(b, not_inv, u);
            self.push_ub(id, c, Ub::IndexOverflow);
        }
        Lowered { val, st, dtype }
    }

    /// Some value of the unconstrained operand(s) of an index op overflows:
    /// `-U`; `U + b`, `U - b` unless b == 0; `b - U` unless b == -1;
    /// `U * b` unless b is 0 or 1; two unconstrained operands; a cast into
    /// index from a type wider than W bits.
    fn unconstrained_overflow(
        &self,
        b: &mut FunctionBuilder<'_>,
        op: Op,
        x: Lowered,
        y: Option<Lowered>,
    ) -> Cond {
        let xu = is_unc(b, x.st);
        let Some(y) = y else {
            return match op {
                Op::Neg => xu,
                Op::Cast => {
                    let (lo, hi) = self.w.dtype_bounds(x.dtype);
                    let (ilo, ihi) = self.w.dtype_bounds(DType::Index);
                    and(b, xu, Cond::Const(lo < ilo || hi > ihi))
                }
                _ => Cond::Const(false),
            };
        };
        let yu = is_unc(b, y.st);
        let is = |b: &mut FunctionBuilder<'_>, v: Value, k: i64| {
            Cond::Dyn(b.ins().icmp_imm_s(IntCC::Equal, v, k))
        };
        let (x_ok, y_ok) = match op {
            // The value the other operand must have for no overflow.
            Op::Add => (is(b, x.val, 0), is(b, y.val, 0)),
            Op::Sub => (is(b, x.val, -1), is(b, y.val, 0)),
            Op::Mul => {
                let (x0, x1) = (is(b, x.val, 0), is(b, x.val, 1));
                let (y0, y1) = (is(b, y.val, 0), is(b, y.val, 1));
                (or(b, x0, x1), or(b, y0, y1))
            }
            _ => return Cond::Const(false),
        };
        let both = and(b, xu, yu);
        let y_bad = not(b, y_ok);
        let left = and(b, xu, y_bad);
        let x_bad = not(b, x_ok);
        let right = and(b, yu, x_bad);
        let one = or(b, left, right);
        or(b, both, one)
    }

    /// `/ % // mod ceildiv`, guarded so the hardware never traps.
    fn divmod(&mut self, b: &mut FunctionBuilder<'_>, id: NodeId) -> Lowered {
        let n = *self.g.node(id);
        let dtype = n.dtype;
        let (x, y) = (self.get(n.src()[0]), self.get(n.src()[1]));
        let st = int_state(b, x.st, Some(y.st));
        let (a, d) = (x.val, y.val);
        let divisor_const = self.g.node(n.src()[1]).as_const();

        // Undefined: the divisor is the valid value 0 (whatever the dividend).
        let y_valid = is_valid(b, y.st);
        let dz = match divisor_const {
            Some(c) => Cond::Const(c == 0),
            None => Cond::Dyn(b.ins().icmp_imm_s(IntCC::Equal, d, 0)),
        };
        let dz_ub = and(b, y_valid, dz);
        // An unconstrained divisor could be 0.
        let y_unc = is_unc(b, y.st);
        let dz_ub = or(b, dz_ub, y_unc);
        self.push_ub(id, dz_ub, Ub::DivByZero);

        // Undefined: the quotient MIN / -1 of the dtype (index: of width W).
        if matches!(n.op, Op::Div | Op::FloorDiv | Op::CeilDiv) {
            let (min, reason) = match dtype {
                DType::Index => (self.w.min() as i64, Ub::IndexOverflow),
                DType::I32 => (i32::MIN as i64, Ub::DivOverflow),
                _ => (i64::MIN, Ub::DivOverflow),
            };
            let m1 = match divisor_const {
                Some(c) => Cond::Const(c == -1),
                None => Cond::Dyn(b.ins().icmp_imm_s(IntCC::Equal, d, -1)),
            };
            let amin = Cond::Dyn(b.ins().icmp_imm_s(IntCC::Equal, a, min));
            let both_valid = is_valid(b, st);
            let c = and(b, m1, amin);
            let c = and(b, both_valid, c);
            self.push_ub(id, c, reason);
            // An unconstrained dividend could be MIN.
            let x_unc = is_unc(b, x.st);
            let c = and(b, m1, x_unc);
            let c = and(b, y_valid, c);
            self.push_ub(id, c, reason);
        }

        // The guarded divisor: 1 wherever the 64-bit division would trap
        // (zero, or i64::MIN / -1), whatever the operands' states, because
        // invalid and unconstrained lanes carry arbitrary bits.
        let ds = match divisor_const {
            Some(c) if c != 0 && c != -1 => d,
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
        let val = match n.op {
            Op::Div => q,
            Op::Rem => r,
            _ => {
                // r != 0 and the signs of r (= sign of a) and the divisor
                // differ: the truncated quotient was rounded up.
                let rnz = b.ins().icmp_imm_s(IntCC::NotEqual, r, 0);
                let x = b.ins().bxor(r, ds);
                let diff = b.ins().icmp_imm_s(IntCC::SignedLessThan, x, 0);
                match n.op {
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
        Lowered { val, st, dtype }
    }
}

/// The `i8` encoding of a state.
pub(crate) fn mat(b: &mut FunctionBuilder<'_>, st: St) -> Value {
    match st {
        St::Valid => b.ins().iconst(types::I8, ST_VALID),
        St::Unc => b.ins().iconst(types::I8, ST_UNC),
        St::Inv => b.ins().iconst(types::I8, ST_INV),
        St::Dyn(v) => v,
    }
}

/// Integer ops: invalid if an operand is, else unconstrained if one is.
fn int_state(b: &mut FunctionBuilder<'_>, x: St, y: Option<St>) -> St {
    let Some(y) = y else { return x };
    match (x, y) {
        (St::Inv, _) | (_, St::Inv) => St::Inv,
        (St::Valid, s) | (s, St::Valid) => s,
        (St::Unc, St::Unc) => St::Unc,
        (xs, ys) => {
            let (xm, ym) = (mat(b, xs), mat(b, ys));
            St::Dyn(b.ins().umax(xm, ym))
        }
    }
}

/// Comparisons and bool ops: unconstrained if any operand is not valid.
fn any_nonvalid_unc(b: &mut FunctionBuilder<'_>, args: &[St]) -> St {
    if args.iter().any(|s| matches!(s, St::Unc | St::Inv)) {
        return St::Unc;
    }
    let mut acc: Option<Value> = None;
    for s in args {
        if let St::Dyn(v) = *s {
            acc = Some(match acc {
                None => v,
                Some(a) => b.ins().bor(a, v),
            });
        }
    }
    match acc {
        None => St::Valid,
        Some(v) => St::Dyn(b.ins().icmp_imm_s(IntCC::NotEqual, v, 0)),
    }
}

pub(crate) fn is_valid(b: &mut FunctionBuilder<'_>, st: St) -> Cond {
    match st {
        St::Valid => Cond::Const(true),
        St::Unc | St::Inv => Cond::Const(false),
        St::Dyn(v) => Cond::Dyn(b.ins().icmp_imm_s(IntCC::Equal, v, ST_VALID)),
    }
}

pub(crate) fn is_unc(b: &mut FunctionBuilder<'_>, st: St) -> Cond {
    match st {
        St::Unc => Cond::Const(true),
        St::Inv | St::Valid => Cond::Const(false),
        St::Dyn(v) => Cond::Dyn(b.ins().icmp_imm_s(IntCC::Equal, v, ST_UNC)),
    }
}

pub(crate) fn is_invalid(b: &mut FunctionBuilder<'_>, st: St) -> Cond {
    match st {
        St::Inv => Cond::Const(true),
        St::Unc | St::Valid => Cond::Const(false),
        St::Dyn(v) => Cond::Dyn(b.ins().icmp_imm_s(IntCC::Equal, v, ST_INV)),
    }
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
    let r = match reason {
        Ub::DivByZero => 0,
        Ub::DivOverflow => 1,
        Ub::IndexOverflow => 2,
    };
    ((node.0 as i64 + 1) << 2) | r
}

fn ub_decode(code: i64) -> Undefined {
    let reason = match code & 3 {
        0 => Ub::DivByZero,
        1 => Ub::DivOverflow,
        _ => Ub::IndexOverflow,
    };
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

impl CompiledEval {
    /// Compiles `roots` of `g` at width `w`.
    pub fn new(g: &Graph, roots: &[NodeId], w: Width) -> Result<CompiledEval, JitError> {
        check_width(w)?;
        let order = g.reachable(roots);
        let ptr = ptr_type()?;
        let (code, fptr) = compile_function(&[ptr, ptr, ptr], |b, args| {
            let (env_p, vals_p, st_p) = (args[0], args[1], args[2]);
            let mut lower = Lower::new(g, w);
            let mut env = |b: &mut FunctionBuilder<'_>, v: u32| {
                b.ins().load(types::I64, mem(), env_p, 8 * v as i32)
            };
            // The environment is arbitrary here: check index variables
            // against W at run time, as the interpreter does.
            lower.lower(b, &order, &mut env, false);
            for (i, &r) in roots.iter().enumerate() {
                let l = lower.get(r);
                let v = if l.dtype == DType::Bool {
                    b.ins().uextend(types::I64, l.val)
                } else {
                    l.val
                };
                b.ins().store(mem(), v, vals_p, 8 * i as i32);
                let s = mat(b, l.st);
                b.ins().store(mem(), s, st_p, i as i32);
            }
            // The first undefined node in id order: fold from the last
            // condition to the first so the earliest one wins.
            let mut code = b.ins().iconst(types::I64, 0);
            for u in lower.ub.iter().rev() {
                let k = b.ins().iconst(types::I64, ub_code(u.node, u.reason));
                code = match u.cond {
                    Cond::Const(true) => k,
                    Cond::Const(false) => code,
                    Cond::Dyn(c) => b.ins().select(c, k, code),
                };
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
        assert!(
            env.len() >= self.nvars,
            "environment has {} values for {} variables",
            env.len(),
            self.nvars
        );
        let n = self.roots.len();
        let mut vals = vec![0i64; n];
        let mut sts = vec![0u8; n];
        // SAFETY: the code reads `nvars` i64s from env and writes `n` values
        // and `n` states; the buffers are at least that long. `self.code`
        // keeps the code alive for the duration of the call.
        let code = unsafe { (self.func)(env.as_ptr(), vals.as_mut_ptr(), sts.as_mut_ptr()) };
        let _ = &self.code;
        if code != 0 {
            return Err(ub_decode(code));
        }
        Ok((0..n)
            .map(|i| match sts[i] as i64 {
                ST_VALID if self.root_dtypes[i] == DType::Bool => Val::Bool(vals[i] != 0),
                ST_VALID => Val::Int(vals[i] as i128),
                ST_UNC => Val::Unconstrained,
                _ => Val::Invalid,
            })
            .collect())
    }

    pub fn roots(&self) -> &[NodeId] {
        &self.roots
    }

    pub fn width(&self) -> Width {
        self.width
    }
}

/// Shorthand for [`CompiledEval::new`].
pub fn compile_eval(g: &Graph, roots: &[NodeId], w: Width) -> Result<CompiledEval, JitError> {
    CompiledEval::new(g, roots, w)
}
