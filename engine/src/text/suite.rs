//! The peer-suite format (`tests/peers/*.cases`): a peer's own test cases
//! converted to the text format, each `case NAME` followed by its lines
//! (`var`, `constraint` and `expr` for the input, `peer` for the peer's
//! expected form and `peer constraint` for its own domain), with the width
//! the peer's `index` has in a `# width: N` header line. Read here once, for
//! the suite test and `tileproof bench suites`, with what a form leaves
//! ([`cost`]) and how the engine's compares with the peer's ([`Reach`]).

use crate::ir::dtype::Width;
use crate::ir::{Graph, NodeId, Op};
use crate::meaning::domain::{split, Constraint, Split};

/// The converted suites in `tests/peers/`, in report order.
pub const SUITE_FILES: [&str; 6] = [
    "tinygrad.cases",
    "tvm_rewrite.cases",
    "tvm_canonical.cases",
    "xla.cases",
    "xla_constraints.cases",
    "halide.cases",
];

/// One `case` block of a suite.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SuiteCase {
    pub name: String,
    /// 1-based line of the `case` line.
    pub line: usize,
    /// The lines after it, up to the next `case`, with `peer` read as
    /// `expect` (so `peer constraint` is `expect constraint`): a program
    /// whose `expect` lines are the peer's form.
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

/// What one form of a case leaves: the div/mod nodes (`/ % // mod
/// ceildiv`) and all the nodes of its results, and the constraints of its
/// domain. A constraint on a bare variable is that variable's bounds (as
/// XLA prints it) and is not counted; a domain no point meets (every result
/// `invalid`) leaves nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cost {
    pub divmod: usize,
    pub nodes: usize,
    pub constraints: usize,
}

/// The cost of `roots`, a program's results under the constraints
/// `declared` (none: the roots are the results as they are, a `where` among
/// them included). The roots are read back as constraints and results
/// ([`split`]), which is how the engine's result comes back as a map: a
/// constraint it dropped because the bounds imply it is gone. Roots that do
/// not read back as one domain count all their nodes and keep the declared
/// constraints.
pub fn cost(g: &mut Graph, roots: &[NodeId], declared: &[Constraint]) -> Cost {
    let on_expr = |g: &Graph, cs: &[Constraint]| {
        cs.iter()
            .filter(|c| !matches!(g.node(c.expr).op, Op::Var(_)))
            .count()
    };
    // Every result `invalid` (under whatever gate, a constant `false`
    // among them): the domain is empty.
    let arm = |g: &Graph, r: NodeId| {
        let n = g.node(r);
        match n.op {
            Op::Where if g.node(n.src()[2]).op == Op::Invalid => n.src()[1],
            _ => r,
        }
    };
    if !declared.is_empty()
        && !roots.is_empty()
        && roots.iter().all(|&r| g.node(arm(g, r)).op == Op::Invalid)
    {
        return Cost::default();
    }
    let (results, constraints) = if declared.is_empty() {
        (roots.to_vec(), 0)
    } else {
        match split(g, roots, declared) {
            Ok(Split::Empty) => return Cost::default(),
            Ok(Split::Map {
                constraints,
                results,
            }) => {
                let n = on_expr(g, &constraints);
                (results, n)
            }
            Err(_) => (roots.to_vec(), on_expr(g, declared)),
        }
    };
    let reach = g.reachable(&results);
    Cost {
        divmod: reach.iter().filter(|&&n| g.node(n).op.is_divmod()).count(),
        nodes: reach.len(),
        constraints,
    }
}

/// How far the engine's form of a case goes against the peer's: as far
/// means no more div/mod in the results and no more constraints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// As far, and fewer div/mod or fewer constraints.
    Better,
    /// As many div/mod and constraints.
    AsFar,
    /// More div/mod or more constraints: a simplification the engine
    /// misses.
    Worse,
}

impl Reach {
    pub fn of(engine: Cost, peer: Cost) -> Reach {
        if engine.divmod > peer.divmod || engine.constraints > peer.constraints {
            Reach::Worse
        } else if engine.divmod < peer.divmod || engine.constraints < peer.constraints {
            Reach::Better
        } else {
            Reach::AsFar
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::parse::parse_program;

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

    #[test]
    fn peer_constraint_lines_are_the_expected_forms_own_domain() {
        let s = read_suite("# width: 64\ncase a\nvar x in [0, 9]\nconstraint x // 2 in [1, 2]\nexpr x\npeer x\npeer constraint x in [2, 5]\n").unwrap();
        let p = parse_program(&s.cases[0].body).unwrap();
        assert_eq!(p.constraints.len(), 1);
        assert_eq!(p.expect_constraints.map(|c| c.len()), Some(1));
    }

    /// The cost of a program's `expr` roots (`expect: false`) or its
    /// `expect` roots, each under its own domain.
    fn cost_of(text: &str, expect: bool) -> Cost {
        let mut p = parse_program(text).unwrap();
        let (roots, declared) = if expect {
            let d = p.expect_constraints.clone();
            (
                p.expects.clone(),
                d.unwrap_or_else(|| p.constraints.clone()),
            )
        } else {
            (p.outputs.clone(), p.constraints.clone())
        };
        cost(&mut p.graph, &roots, &declared)
    }

    #[test]
    fn a_cost_counts_result_divmods_and_constraints_but_not_bounds() {
        let text = "var x in [0, 99]\nvar y in [0, 9]\nconstraint x mod 8 + 5 in [6, 10]\nconstraint x * 2 + y in [0, 500]\nexpr x // 4 + y mod 3\nexpect x // 4 + y mod 3\nexpect constraint x in [0, 99]\nexpect constraint x mod 8 in [1, 5]\n";
        let src = cost_of(text, false);
        assert_eq!((src.divmod, src.constraints), (2, 2));
        // `x in [0, 99]` is a bound, not a constraint; the `mod` under the
        // constraint is not in the results.
        let peer = cost_of(text, true);
        assert_eq!((peer.divmod, peer.constraints), (2, 1));
        assert_eq!(Reach::of(src, peer), Reach::Worse);
        assert_eq!(Reach::of(peer, src), Reach::Better);
        assert_eq!(Reach::of(peer, peer), Reach::AsFar);
    }

    #[test]
    fn an_empty_domain_costs_nothing_and_a_gate_without_constraints_is_a_result() {
        let empty = "var x in [0, 9]\nconstraint x // 20 in [2, 2]\nexpr x mod 3\nexpect invalid\n";
        assert_eq!(cost_of(empty, true), Cost::default());
        assert_eq!(cost_of(empty, false).constraints, 1);
        // Also under a constant constraint, which is no bound of anything.
        let never = "var x in [0, 9]\nconstraint -1 in [0, 1]\nexpr x\nexpect invalid\n";
        assert_eq!(cost_of(never, true), Cost::default());
        // No constraint declared: a gated root is a result as it is.
        let gated = "var x in [0, 9]\nexpr where(x < 5, x // 2, invalid)\n";
        let c = cost_of(gated, false);
        assert_eq!((c.divmod, c.constraints), (1, 0));
    }
}
