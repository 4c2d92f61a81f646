//! What a triage found: a cause, with what showed it (the rule's step
//! that fails alone, the bound that is wrong, where a cause keyed by what
//! goes wrong shows).

use super::transfer::{self, Wrong};
use super::Cause;
use crate::blame::Blame;
use crate::checks;
use engine::ir::Graph;

/// A cause with what showed it.
#[derive(Clone, Debug, PartialEq)]
pub struct Found {
    pub cause: Cause,
    /// The rule's step that fails alone (a [`Cause::Rule`]).
    pub blame: Option<Blame>,
    /// The bound that excludes a reachable value (a [`Cause::Transfer`]).
    pub wrong_bound: Option<WrongBound>,
    /// Where a cause keyed by what goes wrong shows in this finding (the
    /// op that overflows, the constant that wrapped, the misread source).
    pub how: Option<String>,
}

impl Found {
    /// What showed the cause, in one line: the rule's step that fails
    /// alone, or the bound that is wrong.
    pub fn detail(&self) -> Option<String> {
        match (&self.blame, &self.wrong_bound) {
            (Some(b), _) => Some(format!(
                "{}{}, applied alone, fails the same way on: {}",
                b.culprit(),
                b.location
                    .as_ref()
                    .map_or_else(String::new, |l| format!(" (at {l})")),
                b.instance.text().lines().collect::<Vec<_>>().join("; ")
            )),
            (None, Some(w)) => Some(w.line()),
            (None, None) => self.how.clone(),
        }
    }

    /// A cause with nothing more to show.
    pub fn just(cause: Cause) -> Found {
        Found {
            cause,
            blame: None,
            wrong_bound: None,
            how: None,
        }
    }
}

impl serde::Serialize for Found {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Found", 3)?;
        st.serialize_field("cause", &self.cause)?;
        st.serialize_field("layer", self.cause.layer().name())?;
        st.serialize_field("detail", &self.detail())?;
        st.end()
    }
}

/// A wrong bound, as a report shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct WrongBound {
    /// The node (its text) and the op its bound was computed for.
    pub node: String,
    pub op: String,
    /// Its bound and its operands' (`None` where the peer gave none).
    pub bound: String,
    pub operands: Vec<Option<String>>,
    /// A value it takes outside the bound, and where.
    pub value: String,
    pub point: String,
}

impl WrongBound {
    pub(super) fn new(g: &Graph, w: &Wrong, bounded: &[transfer::PeerBound]) -> WrongBound {
        let v = &w.violation;
        let domain = crate::oracle::Domain::new(g, &[v.node]);
        let point: Vec<(String, i64)> = domain
            .vars
            .iter()
            .map(|&i| (g.var(i).name.clone(), v.env[i as usize]))
            .collect();
        WrongBound {
            node: checks::short_expr(g, v.node),
            op: w.op.clone(),
            bound: v.bound.to_string(),
            operands: transfer::operand_bounds(g, v.node, bounded)
                .into_iter()
                .map(|b| b.map(|b| b.to_string()))
                .collect(),
            value: v.value.to_string(),
            point: engine::print::point(g, &point),
        }
    }

    /// One line: `the bound of x * 2 (MUL) is [-32, -2], but it is 0 at x = 0
    /// (operands [-16, 9223372036854775807], [2, 2])`.
    pub fn line(&self) -> String {
        let ops: Vec<String> = self
            .operands
            .iter()
            .map(|b| b.clone().unwrap_or_else(|| "none".into()))
            .collect();
        format!(
            "the bound of `{}` ({}) is {}, but it is {} at {}{}",
            self.node,
            self.op,
            self.bound,
            self.value,
            self.point,
            if ops.is_empty() {
                String::new()
            } else {
                format!(" (its operands' bounds: {})", ops.join(", "))
            }
        )
    }
}
