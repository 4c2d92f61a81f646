//! The peer-suite format (`tests/peers/*.cases`): a peer's own test cases
//! converted to the text format, each `case NAME` followed by its lines
//! (`var`, `expr` for the input, `peer` for the peer's expected form), with
//! the width the peer's `index` has in a `# width: N` header line. Read
//! here once, for the suite test and `tileproof bench suites`.

use crate::ir::dtype::Width;

/// The converted suites in `tests/peers/`, in report order.
pub const SUITE_FILES: [&str; 5] = [
    "tinygrad.cases",
    "tvm_rewrite.cases",
    "tvm_canonical.cases",
    "xla.cases",
    "halide.cases",
];

/// One `case` block of a suite.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SuiteCase {
    pub name: String,
    /// 1-based line of the `case` line.
    pub line: usize,
    /// The lines after it, up to the next `case`, with `peer` read as
    /// `expect`: a program whose `expect` lines are the peer's form.
    pub body: String,
}

/// A suite: its width and its cases, in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suite {
    pub width: Width,
    pub cases: Vec<SuiteCase>,
}

/// A suite file whose header does not give a width it can be judged at.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SuiteError {
    #[error("line {line}: bad width `{text}`")]
    BadWidth { line: usize, text: String },
    #[error("no `# width: N` header")]
    NoWidth,
    #[error("width {0} is not one of 8, 16, 32, 64")]
    UnknownWidth(Width),
}

/// Reads a suite file's text.
pub fn read_suite(text: &str) -> Result<Suite, SuiteError> {
    let mut width = None;
    let mut cases: Vec<SuiteCase> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if cases.is_empty() {
            if let Some(w) = line.strip_prefix("# width:") {
                let w = w.trim();
                width = Some(Width(w.parse().map_err(|_| SuiteError::BadWidth {
                    line: i + 1,
                    text: w.to_string(),
                })?));
            }
        }
        if let Some(name) = line.strip_prefix("case ") {
            cases.push(SuiteCase {
                name: name.trim().to_string(),
                line: i + 1,
                body: String::new(),
            });
            continue;
        }
        if let Some(c) = cases.last_mut() {
            match line.trim_start().strip_prefix("peer ") {
                Some(rest) => {
                    c.body.push_str("expect ");
                    c.body.push_str(rest);
                }
                None => c.body.push_str(line),
            }
            c.body.push('\n');
        }
    }
    let width = width.ok_or(SuiteError::NoWidth)?;
    if !Width::ALL.contains(&width) {
        return Err(SuiteError::UnknownWidth(width));
    }
    Ok(Suite { width, cases })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suite_reads_its_width_and_cases_with_peer_lines_as_expect() {
        let s = read_suite(
            "# width: 32\n\ncase a#1\nvar x in [0, 3]\nexpr x + 0\npeer x\ncase b\nexpr 1\n",
        )
        .unwrap();
        assert_eq!(s.width, Width(32));
        assert_eq!(s.cases.len(), 2);
        assert_eq!(s.cases[0].name, "a#1");
        assert_eq!(s.cases[0].line, 3);
        assert_eq!(s.cases[0].body, "var x in [0, 3]\nexpr x + 0\nexpect x\n");
    }

    #[test]
    fn a_suite_without_a_usable_width_is_an_error() {
        assert_eq!(read_suite("case a\nexpr 1\n"), Err(SuiteError::NoWidth));
        assert_eq!(
            read_suite("# width: 12\n"),
            Err(SuiteError::UnknownWidth(Width(12)))
        );
        assert!(matches!(
            read_suite("# width: x\n"),
            Err(SuiteError::BadWidth { line: 1, .. })
        ));
    }
}
