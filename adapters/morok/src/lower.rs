//! The `lower` entry point: Morok's index-dtype lowering alone.
//!
//! `pm_lower_index_dtype` gives each `Index` node a machine width, `i32`
//! when the node's bounds (`vmin`/`vmax`) fit 32 bits, else `i64`, and
//! wraps it in `CAST(Index)` until a terminal (`INDEX`, `SINK`) strips it.
//! The expressions are lowered as the sources of a `SINK`, so each comes
//! back concrete; its answer is cast back to `index` (tileproof's answer
//! keeps its source's dtype). A node narrowed to `i32` whose value does
//! not fit then wraps, and tileproof's oracle sees the program change
//! meaning: the width is only as right as the bounds that chose it.

use morok_ir::{Op, UOp};
use morok_schedule::graph_rewrite;
use std::sync::{Arc, LazyLock};

static LOWER: LazyLock<morok_ir::pattern::TypedPatternMatcher> =
    LazyLock::new(morok_schedule::symbolic::pm_lower_index_dtype);

/// Each expression lowered as Morok's pipeline lowers a kernel's values.
pub fn lower(exprs: &[Arc<UOp>]) -> Result<Vec<Arc<UOp>>, String> {
    let out = graph_rewrite(&*LOWER, UOp::sink(exprs.to_vec()), &mut ());
    match out.op() {
        Op::Sink { sources } if sources.len() == exprs.len() => {
            Ok(sources.iter().cloned().collect())
        }
        other => Err(format!(
            "pm_lower_index_dtype turned the SINK into {}",
            other.as_ref()
        )),
    }
}
