//! tileproof reproducer: wrong-value in Morok 0.1.0-alpha.2's graph_rewrite(symbolic(), ...).
//! Input: (r0 * 3 + -2) / 16 * 2 + (r0 * -2 + -3) % -7 * -4 + ((r0 * 68719476736 + -3) / 3 * 1 + ((r1 * -2 + 3) * 1 + ((r1 * 1 + 8) % 68719476736 + (r1 * 1 + 8) / 68719476736 * 68719476736) * 68719476736))
//! Variables: r0 in [-9223372036854775808, 9223372036854775807] (DEFINE_VAR), r1 in [-16, -6] (DEFINE_VAR).
//! At r0 = 1, r1 = -16, the input and Morok's answer, both compiled as written by Morok's C
//! backend and clang, differ. The test fails while they do; it passes once Morok is fixed.
//! It needs only morok-ir, morok-dtype, morok-schedule, morok-codegen and morok-runtime
//! 0.1.0-alpha.2 (and clang on PATH, for Morok's C backend): paste it into a test module
//! of a crate that depends on them, or run `cargo test` in tileproof's adapters/morok/reproducers.
//! Written by tileproof's Morok adapter (adapters/morok).

#[test]
fn tileproof_wrong_value_3404b476c885e6fa() {
    #[allow(unused_imports)]
    use morok_dtype::DType;
    #[allow(unused_imports)]
    use morok_ir::{ConstValue, UOp};
    use morok_schedule::graph_rewrite;

    // The input, built with Morok's API.
    let n0 = UOp::define_var("r0".to_string(), i64::MIN, 9223372036854775807); // r0
    let n1 = UOp::index_const(3);
    let n2 = n0.try_mul(&n1).unwrap();
    let n3 = UOp::index_const(-2);
    let n4 = n2.try_add(&n3).unwrap();
    let n5 = UOp::index_const(16);
    let n6 = n4.try_div(&n5).unwrap();
    let n7 = UOp::index_const(2);
    let n8 = n6.try_mul(&n7).unwrap();
    let n9 = n0.try_mul(&n3).unwrap();
    let n10 = UOp::index_const(-3);
    let n11 = n9.try_add(&n10).unwrap();
    let n12 = UOp::index_const(-7);
    let n13 = n11.try_mod(&n12).unwrap();
    let n14 = UOp::index_const(-4);
    let n15 = n13.try_mul(&n14).unwrap();
    let n16 = n8.try_add(&n15).unwrap();
    let n17 = UOp::index_const(68719476736);
    let n18 = n0.try_mul(&n17).unwrap();
    let n19 = n18.try_add(&n10).unwrap();
    let n20 = n19.try_div(&n1).unwrap();
    let n21 = UOp::index_const(1);
    let n22 = n20.try_mul(&n21).unwrap();
    let n23 = UOp::define_var("r1".to_string(), -16, -6); // r1
    let n24 = n23.try_mul(&n3).unwrap();
    let n25 = n24.try_add(&n1).unwrap();
    let n26 = n25.try_mul(&n21).unwrap();
    let n27 = n23.try_mul(&n21).unwrap();
    let n28 = UOp::index_const(8);
    let n29 = n27.try_add(&n28).unwrap();
    let n30 = n29.try_mod(&n17).unwrap();
    let n31 = n29.try_div(&n17).unwrap();
    let n32 = n31.try_mul(&n17).unwrap();
    let n33 = n30.try_add(&n32).unwrap();
    let n34 = n33.try_mul(&n17).unwrap();
    let n35 = n26.try_add(&n34).unwrap();
    let n36 = n22.try_add(&n35).unwrap();
    let n37 = n16.try_add(&n36).unwrap();
    let input = vec![n37.clone()];
    for e in &input {
        println!("input:\n{}", e.tree());
    }
    // Morok's graph_rewrite(symbolic(), ...).
    let output: Vec<_> = input.iter().map(|e| graph_rewrite(morok_schedule::symbolic::symbolic(), e.clone(), &mut ())).collect();
    for e in &output {
        println!("Morok's answer:\n{}", e.tree());
    }

    // Both compiled as written by Morok's C backend (clang), run at the failing point.
    let vars = vec![n0.clone(), n23.clone()];
    let point = [1, -16];
    let expected = vec![harness::Val::Int(-526849321589)];
    let source = match harness::compile(&vars, &input) {
        Ok(k) => { println!("input's C:\n{}", k.code); k.run(&point) }
        // Morok never compiles this input as written: its values by tileproof's semantics.
        Err(e) => { println!("the input does not compile as written ({e:?}): expected values used"); expected }
    };
    let answer = harness::compile(&vars, &output).expect("Morok's answer compiles");
    println!("answer's C:\n{}", answer.code);
    let got = answer.run(&point);
    println!("at r0 = 1, r1 = -16: input {source:?}, Morok's answer {got:?}");
    assert_eq!(got, source, "Morok's answer computes another value than its input");
}

#[allow(dead_code)]
mod harness {
//! Morok's own compiled code for index expressions, built literally.
//!
//! This file is used twice: as the adapter's backend (its `run` requests),
//! and verbatim inside every Rust reproducer the adapter writes, which
//! needs nothing but the pinned Morok crates. It uses only `std` and
//! Morok's crates.
//!
//! The kernel: every variable of the case is a kernel parameter
//! (`DEFINE_VAR`, `const long long vN` in C), an opaque value no pass knows
//! the range of, whether the case built it as a `DEFINE_VAR` or a loop
//! `RANGE`. Each expression is stored, as built, into an `int64` output
//! buffer (a bool through `CAST`), and a 1 into a flag buffer. No Morok
//! pass runs on the kernel: Morok's C renderer (`morok_codegen::c::render`,
//! which renders `Index` as `long long`) and its clang JIT
//! (`morok_runtime::clang::ClangKernel`, `clang -O2`) compile it as built.
//!
//! `invalid`: an expression whose top is a chain of gates
//! `WHERE(c, x, INVALID)` (INVALID in either arm) is compiled the way
//! Morok's pipeline uses a gated index: `x` and the flag are stored through
//! an `INDEX` whose gate is the conjunction of the conditions (what
//! `pm_lower_index_dtype` makes of `INDEX(buf, WHERE(c, idx, INVALID))`),
//! which the C renderer turns into `if (gate) { store }`; a lane whose flag
//! was not stored is `invalid`. An INVALID anywhere else is never compiled
//! by Morok as written (its `propagate_invalid` rules move ops under the
//! gate first): such an expression is refused. An expression that is
//! INVALID outright is stored through a gate that never holds (Morok drops
//! a store to an INVALID index: `fold_invalid_load_store`).

use morok_dtype::{AddrSpace, DType};
use morok_ir::{ConstValue, Op, TernaryOp, UOp, UOpKey};
use std::collections::HashMap;
use std::sync::Arc;

/// One expression's value at one point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Val {
    Int(i64),
    Bool(bool),
    /// A masked lane: the gated store did not happen.
    Invalid,
}

impl std::fmt::Display for Val {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Val::Int(v) => write!(f, "{v}"),
            Val::Bool(b) => write!(f, "{b}"),
            Val::Invalid => f.write_str("invalid"),
        }
    }
}

/// Why expressions could not be compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotCompiled {
    /// Not a kernel Morok builds (an INVALID under arithmetic).
    Unsupported(String),
    /// Morok's renderer or clang rejected it.
    Rejected(String),
}

/// Compiled expressions, ready to run at points.
pub struct Compiled {
    kernel: morok_runtime::clang::ClangKernel,
    /// For each kernel parameter, the index of its variable in the case.
    params: Vec<usize>,
    bools: Vec<bool>,
    /// The C source Morok rendered (a reproducer prints it).
    #[allow(dead_code)]
    pub code: String,
}

/// Peels the gates off the top of `e`: `WHERE(c, x, INVALID)` -> `(c, x)`,
/// `WHERE(c, INVALID, x)` -> `(!c, x)`, merged with `&`.
fn peel(mut e: Arc<UOp>) -> (Option<Arc<UOp>>, Arc<UOp>) {
    let mut gate: Option<Arc<UOp>> = None;
    loop {
        let (c, x) = match e.op() {
            Op::Ternary(TernaryOp::Where, c, a, b) if matches!(b.op(), Op::Invalid) => {
                (c.clone(), a.clone())
            }
            Op::Ternary(TernaryOp::Where, c, a, b) if matches!(a.op(), Op::Invalid) => {
                (c.not(), b.clone())
            }
            // An index that is INVALID outright: Morok's pipeline drops its
            // store (`fold_invalid_load_store`), a gate that never holds.
            Op::Invalid => (
                UOp::const_(DType::Bool, ConstValue::Bool(false)),
                UOp::index_const(0),
            ),
            _ => return (gate, e),
        };
        gate = Some(match gate {
            None => c,
            Some(g) => g.try_and_op(&c).expect("bool gates"),
        });
        e = x;
    }
}

fn has_invalid(e: &Arc<UOp>) -> bool {
    e.toposort().iter().any(|n| matches!(n.op(), Op::Invalid))
}

/// Compiles `exprs` over the case's variables `vars` (each a `DEFINE_VAR`
/// or a `RANGE`, in the case's order) with Morok's C renderer and clang.
/// (The reproducers call it, this file inlined; the adapter renders first
/// and compiles a rendering it has not compiled before.)
#[allow(dead_code)]
pub fn compile(vars: &[Arc<UOp>], exprs: &[Arc<UOp>]) -> Result<Compiled, NotCompiled> {
    render(vars, exprs)?.compile()
}

/// Expressions rendered to C by Morok's renderer, not yet compiled: the
/// code is all clang sees, so equal code compiles to the same kernel.
pub struct Rendered {
    pub code: String,
    name: String,
    var_names: Vec<String>,
    params: Vec<usize>,
    bools: Vec<bool>,
}

/// Renders `exprs` over `vars` as [`compile`] does, without clang.
#[allow(clippy::mutable_key_type)]
pub fn render(vars: &[Arc<UOp>], exprs: &[Arc<UOp>]) -> Result<Rendered, NotCompiled> {
    let mut subst: HashMap<UOpKey, Arc<UOp>> = HashMap::new();
    for (i, v) in vars.iter().enumerate() {
        let (lo, hi) = match v.op() {
            Op::DefineVar {
                min_val, max_val, ..
            } => (*min_val, *max_val),
            _ => (i64::MIN, i64::MAX),
        };
        subst.insert(
            UOpKey(v.clone()),
            UOp::var(format!("v{i}"), DType::Index, lo, hi),
        );
    }
    let n = exprs.len();
    let buffer =
        |slot: usize| UOp::param(slot, n, DType::Int64.ptr(Some(n), AddrSpace::Global), None);
    let (out, flags) = (buffer(0), buffer(1));
    let mut stores = Vec::new();
    let mut bools = Vec::new();
    for (k, e) in exprs.iter().enumerate() {
        let (gate, body) = peel(e.substitute(&subst));
        if has_invalid(&body) || gate.as_ref().is_some_and(has_invalid) {
            return Err(NotCompiled::Unsupported(
                "an INVALID that is not a gate at the top: Morok never compiles it as written"
                    .into(),
            ));
        }
        bools.push(body.dtype() == DType::Bool);
        let at = |buf: &Arc<UOp>| {
            let b = UOp::index()
                .buffer(buf.clone())
                .indices(vec![UOp::index_const(k as i64)])
                .ptr(true);
            match &gate {
                Some(g) => b.gate(g.clone()).call(),
                None => b.call(),
            }
            .map_err(|e| NotCompiled::Rejected(format!("INDEX: {e}")))
        };
        stores.push(at(&out)?.store(body.cast(DType::Int64)));
        stores.push(at(&flags)?.store(UOp::const_(DType::Int64, ConstValue::Int(1))));
    }
    let sink = UOp::sink(stores);
    let rendered = morok_codegen::c::render(&sink, Some("tileproof_kernel"))
        .map_err(|e| NotCompiled::Rejected(format!("Morok's C renderer: {e}")))?;
    let params = rendered
        .var_names
        .iter()
        .map(|name| {
            name.strip_prefix('v')
                .and_then(|i| i.parse().ok())
                .ok_or_else(|| NotCompiled::Rejected(format!("an unknown kernel parameter {name}")))
        })
        .collect::<Result<Vec<usize>, _>>()?;
    Ok(Rendered {
        code: rendered.code,
        name: rendered.name,
        var_names: rendered.var_names,
        params,
        bools,
    })
}

impl Rendered {
    /// The kernel, compiled by clang and loaded.
    pub fn compile(self) -> Result<Compiled, NotCompiled> {
        let kernel =
            morok_runtime::clang::ClangKernel::compile(&self.code, &self.name, self.var_names, 2)
                .map_err(|e| NotCompiled::Rejected(format!("{e}")))?;
        Ok(Compiled {
            kernel,
            params: self.params,
            bools: self.bools,
            code: self.code,
        })
    }
}

impl Compiled {
    /// The expressions' values at `point` (the case's variables, in order).
    /// A trap kills the calling process: run it in a child to survive one.
    pub fn run(&self, point: &[i64]) -> Vec<Val> {
        let n = self.bools.len();
        let mut out = vec![0i64; n];
        let mut flags = vec![0i64; n];
        let vals: Vec<i64> = self.params.iter().map(|&i| point[i]).collect();
        let buffers = [out.as_mut_ptr() as *mut u8, flags.as_mut_ptr() as *mut u8];
        // SAFETY: two buffers of `n` int64s each, as the kernel declares;
        // one value per kernel parameter.
        unsafe { self.kernel.execute_with_vals(&buffers, &vals) }.expect("the kernel runs");
        (0..n)
            .map(|k| match (flags[k], self.bools[k]) {
                (0, _) => Val::Invalid,
                (_, true) => Val::Bool(out[k] != 0),
                (_, false) => Val::Int(out[k]),
            })
            .collect()
    }
}
}
