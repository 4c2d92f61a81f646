//! Which step of Morok's `fold_divmod_general` answers a quotient or a
//! remainder.
//!
//! One closure of `range_based_mod_div_patterns` (patterns.rs:789, `for op
//! in binary [Idiv, Mod]`, so the matcher names it twice: `Binary(Idiv)#10`
//! and `Binary(Mod)#6`) hands every index quotient and remainder to
//! `fold_divmod_general` (divmod.rs:174), which tries its steps in order
//! and returns the first answer. Two wrong steps there are two defects, and
//! the matcher's log names only the closure. The first two steps are chosen
//! by the operands' bounds alone, Morok's own (`vmin`/`vmax`): normalising
//! a negative divisor or a non-positive dividend (divmod.rs:182), then
//! `cancel_divmod` (divmod.rs:201), when the four corner quotients agree.
//! [`step`] makes the same tests in the same order, in the same wrapping
//! arithmetic (Morok's release build has no overflow checks: its sign test
//! `y_min * y_max > 0` wraps, which is its defect); the later steps read the
//! terms of the dividend and stay the closure's.
//!
//! A step is named `fold_divmod_general:STEP` in its group, whichever op it
//! answered: the closure's two names are one piece of code.

use morok_ir::types::BinaryOp;
use morok_ir::uop::cached_property::CachedProperty;
use morok_ir::uop::properties::VminVmaxProperty;
use morok_ir::{Op, UOp};
use std::sync::Arc;

/// The group that holds the closure.
pub const GROUP: &str = "range_based_mod_div_patterns";

/// The closure's names, as the matcher logs them, by the op it matched.
const CLOSURE: [(BinaryOp, &str); 2] = [
    (BinaryOp::Idiv, "Binary(Idiv)#10"),
    (BinaryOp::Mod, "Binary(Mod)#6"),
];

/// A step of `fold_divmod_general` told by the operands' bounds alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Step 0: a divisor always negative or a dividend never positive,
    /// negated into the positive form.
    NegativeOperand,
    /// Step 1: the dividend's range in one block of the divisor's.
    Cancel,
}

impl Step {
    const ALL: [Step; 2] = [Step::NegativeOperand, Step::Cancel];

    /// Its pattern name in [`GROUP`].
    pub fn name(self) -> &'static str {
        match self {
            Step::NegativeOperand => "fold_divmod_general:negative_operand",
            Step::Cancel => "fold_divmod_general:cancel_divmod",
        }
    }

    /// The step a pattern name of [`GROUP`] names.
    pub fn named(pattern: &str) -> Option<Step> {
        Step::ALL.into_iter().find(|s| s.name() == pattern)
    }
}

/// Whether `closure` (a name the matcher logs in [`GROUP`]) is the one
/// that calls `fold_divmod_general`.
fn is_closure(closure: &str) -> bool {
    CLOSURE.iter().any(|(_, c)| *c == closure)
}

/// The closure's name for the op of `node`, when it is a quotient or a
/// remainder.
pub fn closure_for(node: &Arc<UOp>) -> Option<&'static str> {
    let Op::Binary(op, _, _) = node.op() else {
        return None;
    };
    CLOSURE.iter().find(|(o, _)| o == op).map(|(_, c)| *c)
}

/// The step of `fold_divmod_general` that answers `node` (`x / y` or
/// `x % y`) when it is one of the first two; `None` for a later step (or
/// no answer: bounds that are not integers).
pub fn step(node: &Arc<UOp>) -> Option<Step> {
    let Op::Binary(BinaryOp::Idiv | BinaryOp::Mod, x, y) = node.op() else {
        return None;
    };
    let (x_vmin, x_vmax) = VminVmaxProperty::get(x);
    let (y_vmin, y_vmax) = VminVmaxProperty::get(y);
    let (x_min, x_max) = (x_vmin.try_int()?, x_vmax.try_int()?);
    let (y_min, y_max) = (y_vmin.try_int()?, y_vmax.try_int()?);
    if y_max < 0 || x_max <= 0 {
        return Some(Step::NegativeOperand);
    }
    if y_min.wrapping_mul(y_max) > 0 {
        let corners = [
            x_min.checked_div(y_min),
            x_min.checked_div(y_max),
            x_max.checked_div(y_min),
            x_max.checked_div(y_max),
        ];
        if let [Some(a), Some(b), Some(c), Some(d)] = corners
            && a == b
            && b == c
            && c == d
        {
            return Some(Step::Cancel);
        }
    }
    None
}

/// The named step that makes the rewrite of `node` by `closure` of
/// `group` (the matcher's names), if any: `None` is the closure's own name.
pub fn step_of(group: &str, closure: &str, node: &Arc<UOp>) -> Option<Step> {
    (group == GROUP && is_closure(closure))
        .then(|| step(node))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(name: &str, lo: i64, hi: i64) -> Arc<UOp> {
        UOp::define_var(name.to_string(), lo, hi)
    }

    fn div(x: &Arc<UOp>, y: &Arc<UOp>) -> Arc<UOp> {
        x.try_div(y).unwrap()
    }

    #[test]
    fn the_closure_named_is_the_one_that_calls_fold_divmod_general() {
        use quote::ToTokens;
        let path = crate::morok_source::locate().expect("cargo metadata finds morok-schedule");
        let mut calling: Vec<String> = crate::morok_source::read(&path)
            .expect("patterns.rs parses")
            .into_iter()
            .filter(|g| g.name == GROUP)
            .flat_map(|g| g.entries.expect("its pattern list parses"))
            .filter(|e| {
                e.rule
                    .rhs
                    .to_token_stream()
                    .to_string()
                    .contains("fold_divmod_general")
            })
            .map(|e| e.key)
            .collect();
        calling.sort();
        let mut named: Vec<String> = CLOSURE.iter().map(|(_, c)| c.to_string()).collect();
        named.sort();
        assert_eq!(calling, named);
    }

    #[test]
    fn a_quotient_inside_one_block_is_cancel_divmod() {
        // x in [4, 7], y in [8, 9]: every corner quotient is 0.
        let (x, y) = (var("x", 4, 7), var("y", 8, 9));
        assert_eq!(step(&div(&x, &y)), Some(Step::Cancel));
        assert_eq!(step(&x.try_mod(&y).unwrap()), Some(Step::Cancel));
    }

    #[test]
    fn a_divisor_whose_bounds_product_wraps_positive_passes_the_sign_test() {
        // y in [-2^62, 3]: -3 * 2^62 wraps to 2^62 > 0, Morok's defect.
        let (x, y) = (var("x", 1, 1), var("y", -(1 << 62), 3));
        assert_eq!(step(&div(&x, &y)), Some(Step::Cancel));
    }

    #[test]
    fn a_dividend_never_positive_is_negated_first() {
        let (x, y) = (var("x", -9, 0), var("y", 2, 5));
        assert_eq!(step(&div(&x, &y)), Some(Step::NegativeOperand));
    }

    #[test]
    fn a_dividend_across_blocks_is_a_later_steps() {
        let (x, y) = (var("x", 0, 40), UOp::index_const(6));
        assert_eq!(step(&div(&x, &y)), None);
        assert_eq!(step_of(GROUP, "Binary(Idiv)#10", &div(&x, &y)), None);
        let cancel = div(&var("x", 4, 7), &var("y", 8, 9));
        assert_eq!(
            step_of(GROUP, "Binary(Idiv)#10", &cancel),
            Some(Step::Cancel)
        );
        assert_eq!(step_of(GROUP, "Binary(Idiv)#4", &cancel), None);
        assert_eq!(
            step_of("division_dsl_patterns", "Binary(Idiv)#10", &cancel),
            None
        );
    }
}
