//! A defect of a pipeline: the first stage whose output is already wrong.
//!
//! MLIR's `canonicalize` entry constructs the affine expressions (which
//! folds them), prints and parses them into a module, then runs the pass.
//! A map already wrong when it is built is construction's defect, not the
//! pass's: `(d0 + d1 + 2) floordiv 2` is built as `(d0 + d1) floordiv 2 +
//! 1` before any pass runs. A peer that declares its pipeline (the hello's
//! `stages`) is asked for each stage's output in order; the first that
//! fails the oracle is the stage to blame, and within it the innermost
//! subterm that stage gets wrong alone names the defect; or, where that
//! subterm is a fold of a later stage that needed its numerator in a
//! bound it leaves, the stage's range analysis ([`super::implied`]).

use super::found::Found;
use super::implied::implied;
use super::subterm::{how_wrong, innermost_wrong};
use super::Cause;
use crate::checks::{self, CheckConfig};
use crate::kind::Kind;
use crate::subject::Subject;
use engine::ir::{Graph, NodeId};
use engine::print;

/// The first stage of `subject`'s pipeline (the last is the entry itself)
/// whose output for `src` fails the oracle, with the innermost subterm it
/// gets wrong alone (or what is wrong with that subterm's answer whatever
/// its shape: an overflow it brings in, a division family it misreads);
/// `None` when the subject is not a pipeline (or no stage fails: a failure
/// the check alone does not show again).
pub fn first_wrong(
    subject: &dyn Subject,
    g: &Graph,
    src: &[NodeId],
    cfg: &CheckConfig,
) -> Option<Found> {
    let stages = subject.stages();
    let (last, earlier) = stages.split_last()?;
    let cfg = cfg.only(Kind::Oracle);
    let model = subject.profile().model_at(cfg.width);
    for (i, name) in earlier.iter().chain(std::iter::once(last)).enumerate() {
        let stage = subject.stage(name)?;
        let c = checks::check(g, src, stage.as_ref(), &cfg, None);
        if c.failed(Kind::Oracle) {
            let inner = innermost_wrong(stage.as_ref(), g, src, &cfg);
            if let Some((n, sub)) = inner.as_ref().filter(|_| i > 0) {
                // A fold of a later stage that needed a bound its numerator
                // leaves: the stage's range analysis (the first has no
                // ranges).
                if let Some(cause) = implied(stage.as_ref(), sub, *n, &cfg, model) {
                    return Some(Found {
                        how: Some(format!(
                            "`{name}` folds `{}` with it",
                            print::expr(&sub.graph, *n)
                        )),
                        ..Found::just(cause)
                    });
                }
                // So is what is wrong with a later stage's answer whatever
                // its shape; the first stage (MLIR's construction, which
                // folds as it builds) is named as the stage.
                if let Some(found) = how_wrong(stage.as_ref(), sub, model, &cfg) {
                    return Some(found);
                }
            }
            let subterm = inner
                .map(|(n, _)| crate::bucket::linear_shape(g, n))
                .unwrap_or_else(|| {
                    let shapes: Vec<String> = src
                        .iter()
                        .map(|&r| crate::bucket::linear_shape(g, r))
                        .collect();
                    shapes.join("; ")
                });
            return Some(Found::just(Cause::Stage {
                stage: name.clone(),
                subterm,
            }));
        }
    }
    None
}
