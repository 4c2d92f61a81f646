//! The peers' own test suites, converted to tileproof's text format
//! (`tests/peers/*.cases`: tinygrad, TVM's rewrite and canonical
//! simplifiers, XLA's indexing maps, Halide), and the one reader of that
//! format.
//!
//! A suite file is a header of `#` lines (with `# width: N`), then cases:
//! `case NAME`, comment lines, `var` lines, one or more `expr` lines (the
//! input) and as many `peer` lines (the peer's own expected answer). The
//! engine's suite test scores the engine against the `peer` lines; the
//! seeded generator ([`crate::generate`]) takes the inputs as seeds, the
//! shapes the peers' rules were written for. The suites are embedded in
//! the binary so that a campaign needs no checkout.

use engine::dtype::Width;
use engine::parse::{parse_program, ParseError, Program};
use std::sync::OnceLock;

/// One suite: its name (the file's stem), width and cases.
#[derive(Clone, Debug)]
pub struct Suite {
    pub name: &'static str,
    pub width: Width,
    pub cases: Vec<SuiteCase>,
}

/// One case of a suite.
#[derive(Clone, Debug)]
pub struct SuiteCase {
    pub name: String,
    /// The line of its `case` line in the file (1-based).
    pub line: usize,
    /// Its text with the `peer` lines read as `expect` lines.
    pub body: String,
}

impl SuiteCase {
    /// The case as a program: the input as `expr` lines, the peer's answer
    /// as `expect` lines.
    pub fn program(&self) -> Result<Program, ParseError> {
        parse_program(&self.body)
    }

    /// The input alone (no `expect` lines): what a seed is.
    pub fn input(&self) -> Result<Program, ParseError> {
        let text: String = self
            .body
            .lines()
            .filter(|l| !l.trim_start().starts_with("expect "))
            .map(|l| format!("{l}\n"))
            .collect();
        parse_program(&text)
    }
}

/// Why a suite file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    #[error("{name}: no `# width: N` header before the first case")]
    NoWidth { name: String },
    #[error("{name}:{line}: width `{value}` is not one of 8, 16, 32, 64")]
    Width {
        name: String,
        line: usize,
        value: String,
    },
}

/// Reads a suite file's text (`name` labels errors).
pub fn read(name: &'static str, text: &str) -> Result<Suite, SuiteError> {
    let mut width = None;
    let mut cases: Vec<SuiteCase> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if cases.is_empty() {
            if let Some(w) = line.strip_prefix("# width:") {
                let value = w.trim();
                width = Some(
                    value
                        .parse()
                        .ok()
                        .map(Width)
                        .filter(|w| Width::ALL.contains(w))
                        .ok_or_else(|| SuiteError::Width {
                            name: name.to_string(),
                            line: i + 1,
                            value: value.to_string(),
                        })?,
                );
            }
        }
        if let Some(case) = line.strip_prefix("case ") {
            cases.push(SuiteCase {
                name: case.trim().to_string(),
                line: i + 1,
                body: String::new(),
            });
            continue;
        }
        if let Some(c) = cases.last_mut() {
            match line.trim_start().strip_prefix("peer ") {
                Some(rest) => c.body.push_str(&format!("expect {rest}")),
                None => c.body.push_str(line),
            }
            c.body.push('\n');
        }
    }
    let width = width.ok_or_else(|| SuiteError::NoWidth {
        name: name.to_string(),
    })?;
    Ok(Suite { name, width, cases })
}

/// The embedded suite files: (name, text).
pub const FILES: [(&str, &str); 5] = [
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
    ("halide", include_str!("../../tests/peers/halide.cases")),
];

/// Every embedded suite, read once.
pub fn all() -> &'static [Suite] {
    static SUITES: OnceLock<Vec<Suite>> = OnceLock::new();
    SUITES.get_or_init(|| {
        FILES
            .iter()
            .map(|(name, text)| read(name, text).expect("an embedded suite reads"))
            .collect()
    })
}

/// Every case of every suite whose input parses, in file order, as
/// (suite, case name, input): the seeds of the seeded generator.
pub fn seeds() -> &'static [(&'static str, String, Program)] {
    static SEEDS: OnceLock<Vec<(&'static str, String, Program)>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        all()
            .iter()
            .flat_map(|s| {
                s.cases
                    .iter()
                    .filter_map(move |c| c.input().ok().map(|p| (s.name, c.name.clone(), p)))
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_suite_reads_and_its_cases_parse() {
        for s in all() {
            assert!(!s.cases.is_empty(), "{}", s.name);
            for c in &s.cases {
                let p = c
                    .program()
                    .unwrap_or_else(|e| panic!("{} {}: {e}", s.name, c.name));
                assert_eq!(p.outputs.len(), p.expects.len(), "{} {}", s.name, c.name);
            }
        }
        assert!(seeds().len() > 1900, "{}", seeds().len());
    }

    #[test]
    fn a_suite_without_a_width_is_an_error() {
        assert!(matches!(
            read("x", "case a\nvar x in [0, 1]\nexpr x\n"),
            Err(SuiteError::NoWidth { .. })
        ));
        assert!(matches!(
            read("x", "# width: 12\ncase a\n"),
            Err(SuiteError::Width { line: 1, .. })
        ));
    }
}
