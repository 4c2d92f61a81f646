//! A peer's rule translated into tileproof's rule DSL (docs/protocol.md,
//! section 6, `translation`), and the translation checked against the
//! peer's rule itself on the rule's instances.
//!
//! The adapter translates (only it can read the peer's source); tileproof
//! reads the DSL text with the engine's own rule parser and, on every
//! instance `prove --simplifier` judges, applies the translated rules at
//! the instance's root as the engine would: they must fire exactly where
//! the peer's rule fires and build the same value at every point of the
//! instance's domain (both ways: each result refines the other). A
//! translation that disagrees anywhere is never proved: the proof would be
//! about another rule. The proof itself is the verifier's (the command
//! line runs it: this crate does not know the verifier), and its verdict
//! for every constant is a [`ConstantsVerdict`].

use crate::checks::Checked;
use crate::oracle::{self, OracleConfig};
use engine::ir::{Graph, NodeId};
use engine::rules::{Rule, RuleSet};
use serde::Serialize;

pub use tileproof_adapter::Translation;

/// Why a translation's text is not a set of DSL rules.
#[derive(Debug, thiserror::Error)]
#[error("the adapter's translation does not read as DSL rules: {0}")]
pub struct BadTranslation(pub String);

/// The DSL rules of a translation (in the adapter's order).
pub fn parse(texts: &[String]) -> Result<Vec<Rule>, BadTranslation> {
    let text = texts.join("\n");
    let set = RuleSet::parse("translation", &text).map_err(|e| BadTranslation(e.to_string()))?;
    Ok(set.rules().cloned().collect())
}

/// The first of `rules` that fires at `root`, and what it builds (added to
/// `g`); the engine's 64-bit `index`, as the peer's instances are judged.
pub fn fire(rules: &[Rule], g: &mut Graph, root: NodeId) -> Option<(usize, NodeId)> {
    rules
        .iter()
        .enumerate()
        .find_map(|(k, r)| r.apply(g, root).map(|n| (k, n)))
}

/// An instance where the translation and the peer's rule differ.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Disagreement {
    /// The instance, as text.
    pub instance: String,
    /// What the peer's rule built (`declined` where it did not fire).
    pub peer: String,
    /// What the translation built (`declined` where no rule of it fired).
    pub translation: String,
    /// How they differ (where they both fired: the point).
    pub why: String,
}

/// How a translation fared on a rule's instances.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Agreement {
    /// Instances where both fired and agree, and where both declined.
    pub both_fired: usize,
    pub both_declined: usize,
    /// Instances whose peer result means nothing at the judged width.
    pub not_compared: usize,
    /// The first instance where they differ.
    pub disagreement: Option<Disagreement>,
}

impl Agreement {
    /// Whether the translation was seen to be the rule: it agreed wherever
    /// compared, and fired with it at least once.
    pub fn holds(&self) -> bool {
        self.disagreement.is_none() && self.both_fired > 0
    }
}

/// Compares the translation with the peer's rule on one checked instance
/// (`c`: the rule applied alone at its root), recording the outcome in
/// `a`. An instance the peer's rule raised on, or whose result has no
/// tileproof form, is not compared.
pub fn compare(rules: &[Rule], c: &Checked, cfg: &OracleConfig, a: &mut Agreement) {
    if a.disagreement.is_some() {
        return;
    }
    let Some(&src) = c.src.first() else { return };
    let mut g = c.graph.clone();
    let mine = fire(rules, &mut g, src);
    let instance = engine::print::program(&g, &[src])
        .lines()
        .collect::<Vec<_>>()
        .join("; ");
    let peer = match (&c.tgt, c.declined) {
        (_, true) => None,
        (Some(t), false) if c.unsupported.is_none() => t.first().copied(),
        _ => return,
    };
    // A result that means nothing at the judged width (a constant past 64
    // bits, which the translation's computed constants cannot reach) says
    // nothing of the translation.
    if peer.is_some_and(|p| oracle::meaningful_somewhere(&g, &[p], cfg.model()) == Some(false)) {
        a.not_compared += 1;
        return;
    }
    let shown = |n: Option<NodeId>, g: &Graph| {
        n.map_or("declined".to_string(), |n| engine::print::expr(g, n))
    };
    let why = match (peer, mine) {
        (None, None) => {
            a.both_declined += 1;
            return;
        }
        (Some(_), None) => "the peer's rule fires, the translation does not".to_string(),
        (None, Some(_)) => "the translation fires, the peer's rule does not".to_string(),
        (Some(p), Some((_, t))) => match differs(&g, p, t, cfg) {
            None => {
                a.both_fired += 1;
                return;
            }
            Some(why) => why,
        },
    };
    a.disagreement = Some(Disagreement {
        instance,
        peer: shown(peer, &g),
        translation: shown(mine.map(|m| m.1), &g),
        why,
    });
}

/// How two results of one instance differ (each must refine the other at
/// every point of the instance's domain), or `None`.
fn differs(g: &Graph, p: NodeId, t: NodeId, cfg: &OracleConfig) -> Option<String> {
    if p == t {
        return None;
    }
    for (a, b, what) in [
        (p, t, "the translation's result"),
        (t, p, "the peer's result"),
    ] {
        match oracle::check_cheapest(g, &[a], &[b], cfg) {
            Ok((rep, _)) => {
                if let Some(f) = rep.failure {
                    return Some(format!("{what} differs ({}) at {}", f.failure, f.shown));
                }
            }
            Err(e) => return Some(format!("the results cannot be compared: {e}")),
        }
    }
    None
}

/// What a proof for every constant covers.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "model", rename_all = "kebab-case")]
pub enum ProvedFor {
    /// `index` as the mathematical integers, by the unbounded-integer
    /// query (a peer whose profile says its integers are unbounded).
    UnboundedIntegers,
    /// Every width of 8 bits and more, by one width-generic query (so the
    /// unbounded integers too: a counterexample there has values of some
    /// finite width).
    EveryWidth { widths: Vec<u32> },
    /// Each of these widths, by its own queries.
    Widths { widths: Vec<u32> },
}

/// A peer rule's verdict for every constant (issue 48): one per rule.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum ConstantsVerdict {
    /// The prover proved every DSL rule of the translation, which agreed
    /// with the peer's rule on its instances.
    Proved { scope: ProvedFor },
    /// The prover's counterexample, turned into an instance, fails the
    /// peer's own rule too.
    Refuted {
        /// The width the counterexample was found at (for the unbounded
        /// integers, the nominal 64 it is realized at).
        width: u32,
        /// Found over the unbounded integers (a peer whose integers are).
        unbounded: bool,
        /// The counterexample (a `tileproof check` case of the
        /// translation) and what the peer's rule did with its instance.
        counterexample: String,
        /// The peer's failure on that instance, as judged.
        peer_failure: String,
    },
    /// The translation and the rule differ on an instance: nothing about
    /// the translation is said of the rule.
    TranslationDisagrees { disagreement: Disagreement },
    /// The rule has no DSL form (what stopped the translation).
    NotTranslatable { why: String },
    /// Translated, but neither proved nor refuted for every constant (the
    /// prover left it unknown, a counterexample did not fail the peer's
    /// rule, or no instance showed the translation is the rule): the
    /// instances' verdict stands.
    CheckedOnInstances { instances: usize, why: String },
}

impl ConstantsVerdict {
    /// The verdict's name.
    pub fn word(&self) -> &'static str {
        match self {
            ConstantsVerdict::Proved { .. } => "proved-for-all-constants",
            ConstantsVerdict::Refuted { .. } => "refuted-for-some-constants",
            ConstantsVerdict::TranslationDisagrees { .. } => "translation-disagrees",
            ConstantsVerdict::NotTranslatable { .. } => "not-translatable",
            ConstantsVerdict::CheckedOnInstances { .. } => "checked-on-instances",
        }
    }

    /// Whether it is a failure: the rule refuted, or a translation that is
    /// not the rule (the adapter's or the peer's to fix).
    pub fn fails(&self) -> bool {
        matches!(
            self,
            ConstantsVerdict::Refuted { .. } | ConstantsVerdict::TranslationDisagrees { .. }
        )
    }

    /// The verdict in words.
    pub fn line(&self) -> String {
        match self {
            ConstantsVerdict::Proved {
                scope: ProvedFor::UnboundedIntegers,
            } => "proved for all constants (for unbounded integers)".into(),
            ConstantsVerdict::Proved {
                scope: ProvedFor::EveryWidth { .. },
            } => "proved for all constants (every width >= 8, by one width-generic query)".into(),
            ConstantsVerdict::Proved {
                scope: ProvedFor::Widths { widths },
            } => format!(
                "proved for all constants (at widths {})",
                widths
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            ConstantsVerdict::Refuted {
                unbounded: true, ..
            } => {
                "refuted for some constants (for unbounded integers, confirmed on the peer's rule)"
                    .into()
            }
            ConstantsVerdict::Refuted { width, .. } => {
                format!(
                    "refuted for some constants (at width {width}, confirmed on the peer's rule)"
                )
            }
            ConstantsVerdict::TranslationDisagrees { disagreement: d } => format!(
                "translation disagrees: {} on `{}` (the peer's rule: {}; the translation: {})",
                d.why, d.instance, d.peer, d.translation
            ),
            ConstantsVerdict::NotTranslatable { why } => format!("not translatable: {why}"),
            ConstantsVerdict::CheckedOnInstances { instances, why } => format!(
                "checked on {} ({why})",
                engine::print::count(*instances, "instance")
            ),
        }
    }
}

/// Counts of [`ConstantsVerdict`]s over a run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ConstantsSummary {
    pub proved: usize,
    pub refuted: usize,
    pub translation_disagrees: usize,
    pub not_translatable: usize,
    pub checked_on_instances: usize,
}

impl ConstantsSummary {
    pub fn of<'a>(verdicts: impl IntoIterator<Item = &'a ConstantsVerdict>) -> ConstantsSummary {
        let mut s = ConstantsSummary::default();
        for v in verdicts {
            match v {
                ConstantsVerdict::Proved { .. } => s.proved += 1,
                ConstantsVerdict::Refuted { .. } => s.refuted += 1,
                ConstantsVerdict::TranslationDisagrees { .. } => s.translation_disagrees += 1,
                ConstantsVerdict::NotTranslatable { .. } => s.not_translatable += 1,
                ConstantsVerdict::CheckedOnInstances { .. } => s.checked_on_instances += 1,
            }
        }
        s
    }

    /// `for all constants: P proved, R refuted, ...`
    pub fn line(&self) -> String {
        format!(
            "for all constants: {} proved, {} refuted, {} translation disagrees, {} not translatable, {} checked on instances only",
            self.proved,
            self.refuted,
            self.translation_disagrees,
            self.not_translatable,
            self.checked_on_instances
        )
    }
}
