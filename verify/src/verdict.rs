//! What a proof came to, named once for rules, lemmas and the range
//! analysis's transfer functions: reports count and filter by it, never by
//! its printed name.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A proof's verdict, without its evidence (a rule's counterexample or
/// reason lives in [`crate::prove::ProofVerdict`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VerdictKind {
    /// The solver found the negation unsatisfiable.
    Proved,
    /// A counterexample.
    Failed,
    /// The premise can never hold.
    Vacuous,
    /// A second solver disagrees with the first.
    Disputed,
    /// The solver gave up (timeout or incompleteness).
    Unknown,
    /// A counterexample the reference interpreter does not reproduce.
    InternalError,
    /// Not tried: a lemma it rests on is not proved, or it is ill-formed.
    Refused,
}

impl VerdictKind {
    /// The name reports and JSON print.
    pub fn name(self) -> &'static str {
        match self {
            VerdictKind::Proved => "proved",
            VerdictKind::Failed => "failed",
            VerdictKind::Vacuous => "vacuous",
            VerdictKind::Disputed => "disputed",
            VerdictKind::Unknown => "unknown",
            VerdictKind::InternalError => "internal-error",
            VerdictKind::Refused => "refused",
        }
    }
}

impl fmt::Display for VerdictKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::VerdictKind;

    #[test]
    fn json_spells_each_verdict_as_its_printed_name() {
        for k in [
            VerdictKind::Proved,
            VerdictKind::Failed,
            VerdictKind::Vacuous,
            VerdictKind::Disputed,
            VerdictKind::Unknown,
            VerdictKind::InternalError,
            VerdictKind::Refused,
        ] {
            assert_eq!(serde_json::to_string(&k).unwrap(), format!("\"{k}\""));
        }
    }
}
