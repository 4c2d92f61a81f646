//! A case file's `# point:` header read back: the point a finding or a
//! counterexample failed at, as [`crate::print::point`] writes it
//! (`x = 3, flag = true`).

use crate::parse::Program;

/// Why a case's point cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PointError {
    #[error("the case has no `# point:` line")]
    NoPoint,
    #[error("`{0}` is not `name = value`")]
    NotAssignment(String),
    #[error("`{0}`: not a number")]
    NotANumber(String),
    #[error("the point does not give `{0}`")]
    MissingVar(String),
}

/// The point `p`'s `# point:` header states, as an environment of its
/// graph (every variable must be given; a bool is 1 or 0).
pub fn header_point(p: &Program) -> Result<Vec<i128>, PointError> {
    let line = p
        .header
        .iter()
        .find_map(|l| l.trim().strip_prefix("point:"))
        .ok_or(PointError::NoPoint)?;
    let mut given: Vec<(&str, i128)> = Vec::new();
    for part in line.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (name, val) = part
            .split_once('=')
            .ok_or_else(|| PointError::NotAssignment(part.to_string()))?;
        let val = match val.trim() {
            "true" => 1,
            "false" => 0,
            v => v
                .parse()
                .map_err(|_| PointError::NotANumber(part.to_string()))?,
        };
        given.push((name.trim(), val));
    }
    p.graph
        .vars()
        .iter()
        .map(|d| {
            given
                .iter()
                .find(|(n, _)| *n == d.name)
                .map(|g| g.1)
                .ok_or_else(|| PointError::MissingVar(d.name.clone()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_reads_back_in_the_graph_order_of_its_variables() {
        let p = crate::parse::parse_program(
            "# point: y = -3, b = true, x = 9223372036854775807\nvar x in [0, 9223372036854775807]\nvar y in [-4, 4]\nvar b: bool\nexpr where(b, x, y)\n",
        )
        .unwrap();
        assert_eq!(header_point(&p), Ok(vec![i64::MAX as i128, -3, 1]));
    }

    #[test]
    fn a_point_that_misses_a_variable_says_which() {
        let p = crate::parse::parse_program(
            "# point: x = 1\nvar x in [0, 9]\nvar y in [0, 9]\nexpr x + y\n",
        )
        .unwrap();
        assert_eq!(header_point(&p), Err(PointError::MissingVar("y".into())));
    }
}
