//! The peers' own test suites (`tests/peers/*.cases`: tinygrad, TVM's
//! rewrite and canonical simplifiers, XLA's indexing maps with and without
//! constraints, Halide),
//! embedded in the binary so that a campaign needs no checkout, and read by
//! the one reader of that format ([`engine::suite::read_suite`]). Their
//! inputs are the seeded generator's seeds ([`crate::generate`]): the
//! shapes the peers' rules were written for.

use engine::parse::{parse_program, Program};
use engine::suite::{read_suite, Suite, SuiteCase};
use std::sync::OnceLock;

/// The embedded suite files, in [`SUITE_FILES`] order: (name, text).
const TEXTS: [(&str, &str); 6] = [
    ("tinygrad", include_str!("../../tests/peers/tinygrad.cases")),
    (
        "tvm_rewrite",
        include_str!("../../tests/peers/tvm_rewrite.cases"),
    ),
    (
        "tvm_canonical",
        include_str!("../../tests/peers/tvm_canonical.cases"),
    ),
    ("xla", include_str!("../../tests/peers/xla.cases")),
    (
        "xla_constraints",
        include_str!("../../tests/peers/xla_constraints.cases"),
    ),
    ("halide", include_str!("../../tests/peers/halide.cases")),
];

/// Every embedded suite, read once: (name, suite).
pub fn all() -> &'static [(&'static str, Suite)] {
    static SUITES: OnceLock<Vec<(&'static str, Suite)>> = OnceLock::new();
    SUITES.get_or_init(|| {
        TEXTS
            .iter()
            .map(|(name, text)| {
                (
                    *name,
                    read_suite(text)
                        .unwrap_or_else(|e| panic!("the embedded suite {name} reads: {e}")),
                )
            })
            .collect()
    })
}

/// A case's input alone (its `expr` lines, no `expect` lines): a seed.
pub fn input(c: &SuiteCase) -> Option<Program> {
    parse_program(&input_text(c)).ok()
}

/// The text of a case's input alone (its `var` and `expr` lines).
pub fn input_text(c: &SuiteCase) -> String {
    c.body
        .lines()
        .filter(|l| !l.trim_start().starts_with("expect "))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Every case of every suite whose input parses, in file order, as
/// (suite, case name, input): the seeds of the seeded generator.
pub fn seeds() -> &'static [(&'static str, String, Program)] {
    static SEEDS: OnceLock<Vec<(&'static str, String, Program)>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        all()
            .iter()
            .flat_map(|(name, s)| {
                s.cases
                    .iter()
                    .filter_map(move |c| input(c).map(|p| (*name, c.name.clone(), p)))
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::suite::SUITE_FILES;

    #[test]
    fn the_embedded_suites_are_the_files_the_suite_test_reads() {
        assert_eq!(TEXTS.len(), SUITE_FILES.len());
        for ((name, _), file) in TEXTS.iter().zip(SUITE_FILES) {
            assert_eq!(format!("{name}.cases"), file);
        }
    }

    #[test]
    fn every_embedded_case_parses_into_a_seed() {
        let cases: usize = all().iter().map(|(_, s)| s.cases.len()).sum();
        assert_eq!(seeds().len(), cases);
        assert!(cases > 1900, "{cases}");
    }
}
