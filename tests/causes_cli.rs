//! A finding's cause names the code that is wrong: a fake peer with one
//! defect per mode (tests/adapters/causes.py) is checked and fuzzed, and
//! each finding is filed under that defect (its range analysis's transfer
//! function, not the rule that trusted it; a crash's site; its backend's
//! literal, not the rule whose answer it compiles wrongly; the overflow a
//! rewrite brings in, not the shape of the subterm it rewrote; the bound a
//! pipeline stage folded with, read from its folds).

mod common;

use common::tileproof;

fn scratch(name: &str) -> std::path::PathBuf {
    common::scratch(&format!("causes-{name}"))
}

fn peer(mode: &str) -> String {
    format!("python3 tests/adapters/causes.py {mode}")
}

/// `check --simplifier` of `case` against the fake peer in `mode`: its
/// output, which names the finding's cause.
fn check(mode: &str, case: &str) -> String {
    // One directory per case: tests run in parallel, several in one mode.
    let tag = case.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    let dir = scratch(&format!("check-{mode}-{tag:016x}"));
    let file = dir.join("case.txt");
    std::fs::write(&file, case).unwrap();
    let cmd = peer(mode);
    let (code, out, err) = tileproof(&["check", "--simplifier", &cmd, file.to_str().unwrap()]);
    assert_eq!(code, 2, "the fake peer's answer is wrong:\n{out}{err}");
    out
}

/// Every case of `cases` (subterms of different shapes) is filed under
/// the one cause `key` by the fake peer in `mode`.
fn one_cause(mode: &str, cases: &[&str], key: &str) {
    for case in cases {
        let out = check(mode, case);
        assert!(out.contains(&format!("  cause: {key}\n")), "{out}");
    }
}

#[test]
fn a_rule_that_trusted_a_wrong_bound_is_filed_under_the_transfer_function() {
    // The product's bound wraps: x * 2 over [0, MAX] is bounded [-2, 0],
    // so (x * 2 + 1) / 2 collapses to 0; the rule is right for that bound.
    let out = check(
        "collapse",
        "var x in [0, 9223372036854775807]\nexpr (x * 2 + 1) / 2\n",
    );
    assert!(out.contains("  cause: transfer MUL\n"), "{out}");
    assert!(
        out.contains("the bound of `x * 2` (MUL) is [-2, 0]"),
        "{out}"
    );
}

#[test]
fn a_pattern_that_trusted_the_bound_of_a_node_its_group_built_is_filed_under_the_transfer_function()
{
    // `unscale` rewrites x * -2 < 0 to x * -1 < 0 (right), and `decide`
    // decides that from the product's wrapped bound [MIN, -5]: wrong at x
    // = 0, where the case's own bound of x * -2, [-10, 0], holds. The
    // product that explains it is only in the case `unscale` left.
    let out = check(
        "builtbound",
        "var x in [-9223372036854775808, 5]\nexpr x * -2 < 0\n",
    );
    assert!(out.contains("  cause: transfer MUL\n"), "{out}");
    assert!(out.contains("the bound of `x * -1` (MUL)"), "{out}");
}

#[test]
fn a_rule_of_several_patterns_is_narrowed_to_the_wrong_one() {
    // `fold` rewrites y / 1 / -1 with both its patterns; div_one's step
    // is right, and div_neg_one's, taken from where div_one left it, is
    // not: the cause is that pattern, not the group.
    let out = check("patterns", "var y in [1, 9]\nexpr y / 1 / -1\n");
    assert!(out.contains("  cause: rule fold/div_neg_one\n"), "{out}");
}

#[test]
fn a_pattern_wrong_only_at_its_second_firing_in_a_group_step_is_the_cause() {
    // `fold` rewrites 0 / -1 to 0 (div_neg_one, right there), -1 / 1 to
    // -1 (div_one), then (y + 0) / -1 to y + 0 (div_neg_one, wrong). Each
    // pattern alone rewrites the root once, so only a second round of the
    // patterns finds the wrong step: the cause is the pattern, not the
    // group.
    let out = check(
        "patterns",
        "var y in [1, 9]\nexpr (y + 0 / -1) / (-1 / 1)\n",
    );
    assert!(out.contains("  cause: rule fold/div_neg_one\n"), "{out}");
}

#[test]
fn a_pattern_that_brings_in_an_overflow_is_another_cause_than_one_that_computes_a_wrong_value() {
    // `fold/sub_neg` rewrites x - y to x + y * -1: the value is right
    // wherever it is defined, but y * -1 overflows at y = MIN, where x - y
    // does not. Its fix is an overflow check, not another answer: a cause
    // of its own, beside `fold/div_neg_one`'s wrong value. (This fake
    // backend traps on the overflow: a real bug, not the model's.)
    let out = check(
        "patterns",
        "var x in [-9, -1]\nvar y in [-9223372036854775808, -9223372036854775805]\nexpr x - y\n",
    );
    assert!(
        out.contains("  cause: rule fold/sub_neg introduces UB\n"),
        "{out}"
    );
    let wrong = check("patterns", "var y in [1, 9]\nexpr y / 1 / -1\n");
    assert!(
        wrong.contains("  cause: rule fold/div_neg_one\n"),
        "{wrong}"
    );
}

#[test]
fn a_wrong_value_that_becomes_a_zero_divisor_is_the_patterns_wrong_value_not_ub() {
    // `fold/div_neg_one` answers y / -1 with y: at y = -5 the divisor
    // y / -1 + 5 is 0 in the answer and 10 in the source. The case fails
    // undefined, but the step is a wrong value (its node alone differs),
    // and its fix is div_neg_one's: the same cause as a wrong value.
    let out = check("patterns", "var y in [-5, -5]\nexpr 100 / (y / -1 + 5)\n");
    assert!(out.contains("  cause: rule fold/div_neg_one\n"), "{out}");
}

#[test]
fn a_rule_alone_whose_answer_says_which_rules_fired_is_checked() {
    // `--peer-rule fold`: the group applied alone answers with its own
    // firing, counted like the peer's rules (this panicked on an index).
    let dir = scratch("check-peer-rule-fired");
    let file = dir.join("case.txt");
    std::fs::write(&file, "var y in [1, 9]\nexpr y / 1 / -1\n").unwrap();
    let cmd = peer("patterns");
    let (code, out, err) = tileproof(&[
        "check",
        "--simplifier",
        &cmd,
        "--peer-rule",
        "fold",
        file.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.contains("answer y\n"), "{out}{err}");
    assert!(out.contains("backend: wrong-value"), "{out}{err}");
}

#[test]
fn an_overflow_a_rewrite_brings_in_is_one_cause_whatever_the_subterms_shape() {
    // The peer moves a constant across a comparison (`a + C < b` to `a <
    // b - C`) with no check that `b - C` fits: right over the integers,
    // undefined at b = MIN. Two subterms of different shapes, one cause.
    one_cause(
        "moveconst",
        &[
            "var x in [0, 9]\nvar y in [-9223372036854775808, 0]\nexpr x + 1 < y\n",
            "var a in [0, 9]\nvar y in [-9223372036854775808, 0]\nexpr a / 2 * 3 + 5 < y\n",
        ],
        "introduced index overflow",
    );
}

#[test]
fn a_guard_a_rewrite_drops_round_a_division_is_one_cause_whatever_it_guarded() {
    // The peer simplifies the false arm of `where(c, a, b)` knowing `c`
    // false, through the inner `where(c, 1, y)` to `y`: the division by
    // zero it guarded is now in a lane the eager `where` computes and
    // does not select.
    one_cause(
        "dropguard",
        &[
            "var y in [0, 3]\nexpr where(y < 1, 0, 7 // where(y < 1, 1, y))\n",
            "var y in [0, 3]\nvar x in [1, 5]\nexpr where(y < 1, x, x * 2 / where(y < 1, 1, y) + 1)\n",
        ],
        "introduced division by zero",
    );
}

#[test]
fn a_rewrite_that_reads_a_truncating_remainder_as_flooring_is_one_cause() {
    // The peer takes `a % b` as `a mod b`: wrong where `a` is negative, in
    // a comparison or a sum alike.
    one_cause(
        "misread",
        &[
            "var x in [-8, 8]\nexpr x * 2 + x % 4 < 0\n",
            "var x in [-9, 3]\nvar y in [0, 5]\nexpr (x - y) % 6 + y\n",
        ],
        "misread trunc",
    );
}

#[test]
fn a_constant_a_rewrite_folds_in_wrapping_arithmetic_is_an_overflow_it_brings_in() {
    // The peer (int32) folds `(x // a) // b` to `x // (a * b)`, the
    // product wrapping: its answer never overflows, but its constant did.
    // Two products, one cause, and the wrapped constant named.
    one_cause(
        "foldwrap",
        &[
            "var x in [-100000000, 100000000]\nexpr x // 65536 // 65537\n",
            "var x in [0, 100000]\nvar y in [1, 5]\nexpr (x + y) // 46341 // 46341 + y\n",
        ],
        "introduced index overflow",
    );
    let out = check(
        "foldwrap",
        "var x in [-100000000, 100000000]\nexpr x // 65536 // 65537\n",
    );
    assert!(out.contains("`65536` is 4295032832 wrapped"), "{out}");
}

#[test]
fn a_later_stages_fold_with_a_wrong_bound_is_filed_under_that_bound() {
    // The `fold` stage bounds `e mod M` by [M - 1, M - 1] and folds `e //
    // C` to a constant where the bounds of `e` lie in one block: the fold
    // needs the mod in a block its values leave. Three shapes, one cause:
    // the third is a sum the stage splits (`(a + y * 8) // 4` to `a // 4
    // + y * 2`) before it folds the part left.
    one_cause(
        "stagedfold",
        &[
            "var x in [0, 9]\nexpr x mod 4 // 2\n",
            "var x in [0, 9]\nvar y in [0, 3]\nexpr (x * 3 + y) mod 8 // 4\n",
            "var x in [0, 9]\nvar y in [0, 3]\nexpr (x mod 8 + y * 8) // 4\n",
        ],
        "implied mod",
    );
}

#[test]
fn a_later_stages_fold_whose_answer_overflows_everywhere_is_the_wrapped_bound() {
    // The `fold` stage bounds x * 12 by its corners wrapped to 64 bits
    // ([MIN, MIN] over x in [-2^61, 2^61]) and folds the remainder by 13
    // to `x * 12 - q * 13`, whose q * 13 passes 64 bits: undefined at
    // every point, so no value says which block it chose. The product's
    // values pass 64 bits: the bound was computed wrapping.
    one_cause(
        "stagedfold",
        &["var x in [-2305843009213693952, 2305843009213693952]\nexpr x * 12 mod 13\n"],
        "implied overflow",
    );
}

#[test]
fn a_crash_is_filed_under_the_peers_frame_that_raised() {
    let out = check("crash", "var x in [0, 9]\nexpr x / 1\n");
    assert!(
        out.contains("  cause: crash tests/adapters/causes.py in fold_divisor\n"),
        "{out}"
    );
}

#[test]
fn a_crash_that_needed_a_wrong_bound_is_filed_under_its_transfer_function() {
    // y * -2^60 over [0, 16] is bounded [0, 0] (its corners wrap), so the
    // divisor collapses to 1 and the helper crashes on it: with the
    // product a variable over its values, the peer does not crash.
    let out = check(
        "crashbound",
        "var x in [1, 5]\nvar y in [0, 16]\nexpr x / (y * -1152921504606846976 + 1)\n",
    );
    assert!(out.contains("  cause: transfer MUL\n"), "{out}");
    assert!(
        out.contains("the bound of `y * -1152921504606846976` (MUL) is [0, 0]"),
        "{out}"
    );
}

#[test]
fn a_crash_on_the_sources_own_divisor_stays_at_its_site_beside_a_wrong_bound() {
    // The same wrong bound, but the crash is on the source's own `x / 1`:
    // it stays with the product a variable.
    let out = check(
        "crashbound",
        "var x in [1, 5]\nvar y in [0, 16]\nexpr x / 1 + y * -1152921504606846976\n",
    );
    assert!(
        out.contains("  cause: crash tests/adapters/causes.py in fold_divisor\n"),
        "{out}"
    );
}

#[test]
fn a_literal_the_backend_compiles_wrongly_is_the_cause_not_the_rule() {
    // The rule's answer overflows in tileproof's model (x - MIN), and its
    // value on a wrapping machine is the source's, but the backend drops
    // the literal MIN: the compiled answer is x.
    let out = check(
        "minlit",
        "var x in [0, 1]\nexpr x + -9223372036854775807 - 1\n",
    );
    assert!(
        out.contains("  cause: backend wrap literal -9223372036854775808\n"),
        "{out}"
    );
}

#[test]
fn a_campaign_counts_findings_of_a_known_cause_without_recording_them() {
    let dir = scratch("campaign");
    let cmd = peer("collapse");
    let (code, out, err) = tileproof(&[
        "fuzz",
        "--simplifier",
        &cmd,
        "--seed",
        "2",
        "--cases",
        "400",
        "--no-missed",
        "--max-findings",
        "1",
        "--validate-every",
        "0",
        "--json",
        "--corpus",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{out}{err}");
    let json: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let buckets = json["buckets"].as_array().unwrap();
    let mul = buckets
        .iter()
        .find(|b| b["cause"] == "transfer MUL")
        .unwrap_or_else(|| panic!("no transfer MUL cause: {json}"));
    assert_eq!(mul["layer"], "range analysis", "{mul}");
    // One recorded (shrunk, classified, written); the rest only counted.
    assert_eq!(mul["recorded"], 1, "{mul}");
    assert!(mul["count"].as_u64().unwrap() > 5, "{mul}");
    // No cause is the rule that trusted the bound.
    assert!(
        buckets.iter().all(|b| b["cause"] != "rule collapse"),
        "{json}"
    );
    // The campaign's counts are kept beside its findings, for `report`.
    let counts: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("causes.json")).unwrap()).unwrap();
    assert_eq!(
        counts["causes"]["transfer MUL"]["count"], mul["count"],
        "{counts}"
    );
}
