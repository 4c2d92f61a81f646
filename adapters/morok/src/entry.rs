//! What the adapter runs on a case (`--entry`), and the Morok release.

use crate::groups::Tier;

/// The Morok release this adapter is built against (its Cargo.lock pins
/// it; a test checks the two agree).
pub const MOROK_VERSION: &str = "0.1.0-alpha.2";

/// What the adapter runs on a case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// `graph_rewrite(tier(), e, &mut ())`.
    Tier(Tier),
    /// `pm_lower_index_dtype` alone.
    Lower,
}

impl Entry {
    pub fn by_name(s: &str) -> Option<Entry> {
        Some(match s {
            "symbolic_simple" => Entry::Tier(Tier::SymbolicSimple),
            "symbolic" => Entry::Tier(Tier::Symbolic),
            "sym" => Entry::Tier(Tier::Sym),
            "lower" => Entry::Lower,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Entry::Tier(t) => t.name(),
            Entry::Lower => "lower",
        }
    }

    /// How a maintainer would call it, for messages.
    pub fn call(self) -> String {
        match self {
            Entry::Tier(t) => format!("graph_rewrite({}(), ...)", t.name()),
            Entry::Lower => "index-dtype lowering (pm_lower_index_dtype)".into(),
        }
    }

    /// Rust source applying it to the `Vec` named `input`.
    pub fn rust_apply(self, input: &str) -> String {
        match self {
            Entry::Tier(t) => format!(
                "{input}.iter().map(|e| graph_rewrite(morok_schedule::symbolic::{}(), e.clone(), &mut ())).collect()",
                t.name()
            ),
            Entry::Lower => format!(
                "match graph_rewrite(&morok_schedule::symbolic::pm_lower_index_dtype(), UOp::sink({input}.clone()), &mut ()).op() {{ \
                 morok_ir::Op::Sink {{ sources }} => sources.iter().cloned().collect(), other => panic!(\"not a SINK: {{}}\", other.as_ref()) }}"
            ),
        }
    }
}
