//! JUnit XML reports (`--junit FILE` of `gate` and `prove`), written by hand:
//! the format is small, and CI systems (GitHub, GitLab, Jenkins) only need
//! `testsuites > testsuite > testcase` with an optional `failure`/`error`.

use std::fmt::Write as _;
use verify::prove::{ProofVerdict, RuleResult};

/// How a test case ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    /// A real failure: a counterexample, a vacuous rule, a failing case.
    Failure {
        kind: String,
        message: String,
        text: String,
    },
    /// Could not be decided (a solver timeout): an `<error>`, so that CI
    /// shows it as not passing without calling it a counterexample.
    Error {
        kind: String,
        message: String,
        text: String,
    },
    /// Not run, with the reason (a peer's rule that no instance reaches).
    Skipped {
        message: String,
    },
}

#[derive(Clone, Debug)]
pub struct TestCase {
    pub classname: String,
    pub name: String,
    pub seconds: f64,
    pub outcome: Outcome,
}

#[derive(Clone, Debug)]
pub struct Suite {
    pub name: String,
    pub cases: Vec<TestCase>,
}

impl Suite {
    fn count(&self, f: impl Fn(&Outcome) -> bool) -> usize {
        self.cases.iter().filter(|c| f(&c.outcome)).count()
    }

    fn seconds(&self) -> f64 {
        // Not `sum()`: an empty f64 sum is -0.0, printed as "-0.000".
        self.cases.iter().fold(0.0, |t, c| t + c.seconds)
    }
}

/// One test case for a rule at a width: failed and vacuous rules are
/// failures (with the counterexample), unknown ones errors.
pub fn rule_case(r: &RuleResult) -> TestCase {
    let outcome = match &r.verdict {
        ProofVerdict::Proved => Outcome::Passed,
        ProofVerdict::Failed { counterexample } => Outcome::Failure {
            kind: r.verdict.name().into(),
            message: format!(
                "{} is unsound at width {}: {}",
                r.rule, r.width, counterexample.failure
            ),
            text: counterexample.to_string(),
        },
        ProofVerdict::Vacuous => Outcome::Failure {
            kind: r.verdict.name().into(),
            message: format!(
                "{} is vacuous at width {}: its guard and bounds can never hold",
                r.rule, r.width
            ),
            text: String::new(),
        },
        ProofVerdict::Disputed { reason } => Outcome::Failure {
            kind: r.verdict.name().into(),
            message: format!("{} disputed at width {}: {reason}", r.rule, r.width),
            text: String::new(),
        },
        ProofVerdict::Unknown { reason } => Outcome::Error {
            kind: r.verdict.name().into(),
            message: format!("{} unknown at width {}: {reason}", r.rule, r.width),
            text: String::new(),
        },
        ProofVerdict::InternalError { internal_error } => Outcome::Error {
            kind: r.verdict.name().into(),
            message: format!(
                "internal error on {} at width {}: {}",
                r.rule, r.width, internal_error.reason
            ),
            text: internal_error.to_string(),
        },
    };
    TestCase {
        classname: format!("prove.w{}", r.width),
        name: format!("{} @ {} bits ({})", r.rule, r.width, r.method),
        seconds: r.seconds,
        outcome,
    }
}

/// The proof results as one suite.
pub fn prove_suite(results: &[RuleResult]) -> Suite {
    Suite {
        name: "prove".into(),
        cases: results.iter().map(rule_case).collect(),
    }
}

/// Renders the report.
pub fn render(name: &str, suites: &[Suite], seconds: f64) -> String {
    let fails = |o: &Outcome| matches!(o, Outcome::Failure { .. });
    let errs = |o: &Outcome| matches!(o, Outcome::Error { .. });
    let tests: usize = suites.iter().map(|s| s.cases.len()).sum();
    let failures: usize = suites.iter().map(|s| s.count(fails)).sum();
    let errors: usize = suites.iter().map(|s| s.count(errs)).sum();
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        x,
        "<testsuites name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{seconds:.3}\">",
        attr(name)
    );
    for s in suites {
        let _ = writeln!(
            x,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3}\">",
            attr(&s.name),
            s.cases.len(),
            s.count(fails),
            s.count(errs),
            s.count(|o| matches!(o, Outcome::Skipped { .. })),
            s.seconds()
        );
        for c in &s.cases {
            let open = format!(
                "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\"",
                attr(&c.classname),
                attr(&c.name),
                c.seconds
            );
            match &c.outcome {
                Outcome::Passed => {
                    let _ = writeln!(x, "{open}/>");
                }
                Outcome::Skipped { message } => {
                    let _ = writeln!(
                        x,
                        "{open}>\n      <skipped message=\"{}\"/>\n    </testcase>",
                        attr(message)
                    );
                }
                Outcome::Failure {
                    kind,
                    message,
                    text,
                }
                | Outcome::Error {
                    kind,
                    message,
                    text,
                } => {
                    let tag = if fails(&c.outcome) {
                        "failure"
                    } else {
                        "error"
                    };
                    let _ = writeln!(
                        x,
                        "{open}>\n      <{tag} type=\"{}\" message=\"{}\">{}</{tag}>\n    </testcase>",
                        attr(kind),
                        attr(message),
                        text_content(if text.is_empty() { message } else { text })
                    );
                }
            }
        }
        x.push_str("  </testsuite>\n");
    }
    x.push_str("</testsuites>\n");
    x
}

/// Writes the report to `path`, atomically: a reader (or a run killed
/// half-way) never sees a partial report.
pub fn write(path: &str, name: &str, suites: &[Suite], seconds: f64) -> anyhow::Result<()> {
    super::write_atomically(path, &render(name, suites, seconds))
}

/// Characters XML 1.0 cannot carry at all (most C0 controls) become U+FFFD:
/// a counterexample printing one must still leave a parseable report.
fn legal(c: char) -> char {
    match c {
        '\t' | '\n' | '\r' => c,
        c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => '\u{FFFD}',
        c => c,
    }
}

/// Escapes element text.
pub fn text_content(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars().map(legal) {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// Escapes an attribute value (double-quoted); newlines and tabs are
/// written as character references, since attribute normalization would
/// otherwise turn them into spaces.
pub fn attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars().map(legal) {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_quotes_and_controls() {
        assert_eq!(
            text_content("a < b && c > d"),
            "a &lt; b &amp;&amp; c &gt; d"
        );
        assert_eq!(attr("x \"y\" 'z'\n"), "x &quot;y&quot; &apos;z&apos;&#10;");
        assert_eq!(text_content("bell\u{7}"), "bell\u{FFFD}");
    }

    #[test]
    fn counts_failures_and_errors_per_suite() {
        let case = |name: &str, outcome: Outcome| TestCase {
            classname: "c".into(),
            name: name.into(),
            seconds: 0.5,
            outcome,
        };
        let suite = Suite {
            name: "prove".into(),
            cases: vec![
                case("ok", Outcome::Passed),
                case(
                    "bad <rule>",
                    Outcome::Failure {
                        kind: "failed".into(),
                        message: "x * 0 => 0".into(),
                        text: "r0 = 1 & more".into(),
                    },
                ),
                case(
                    "slow",
                    Outcome::Error {
                        kind: "unknown".into(),
                        message: "timeout".into(),
                        text: String::new(),
                    },
                ),
            ],
        };
        let x = render("t", &[suite], 1.5);
        assert!(x.contains("tests=\"3\" failures=\"1\" errors=\"1\""), "{x}");
        assert!(x.contains("name=\"bad &lt;rule&gt;\""), "{x}");
        assert!(x.contains(">r0 = 1 &amp; more</failure>"), "{x}");
        assert!(
            x.contains("<error type=\"unknown\" message=\"timeout\">timeout</error>"),
            "{x}"
        );
        assert_eq!(x.matches("<testcase ").count(), 3);
        assert_eq!(x.matches("</testcase>").count(), 2);
    }
}
