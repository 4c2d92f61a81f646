//! A finding, from a failing case to its corpus entry: shrunk while it
//! fails the same way (and, against a peer, shows the same class on the
//! peer's backend), checked again after a round trip through text,
//! classified by the peer's compiled code, blamed on the rule whose step
//! fails alone ([`crate::blame`]), with the peer's reproducer. Campaigns,
//! `tileproof import` and `prove --simplifier` (a peer rule's failing
//! instance) all prepare their findings here.

use crate::cause::backend::{self, LiteralCache};
use crate::cause::found::Found;
use crate::cause::triage;
use crate::cause::{Cause, Layer};
use crate::checks::{self, CheckConfig, Checked, Kind, KindSet, Validator};
use crate::classify::{classify, Confirm};
use crate::confirm::Class;
use crate::corpus::{self, Entry};
use crate::shrink;
use crate::subject::Subject;
use engine::parse::Program;
use engine::semantics::{Failure, Model};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::time::Instant;

/// A finding ready to be written: its corpus entry (built from the shrunk
/// case), what shrinking did, and anything worth a note.
#[derive(Clone, Debug)]
pub struct Prepared {
    pub entry: Entry,
    pub stats: Option<shrink::ShrinkStats>,
    pub note: Option<String>,
    /// How the oracle's answer fails on the kept case (an oracle finding).
    pub failure: Option<Failure>,
}

/// Candidates a case is shrunk through on the backend that shows its
/// class, at most: each is a compile with the peer's compiler (a tenth of
/// a second with clang), where the check alone is a millisecond.
pub const BACKEND_SHRINK_STEPS: usize = 150;

/// Candidates a case is shrunk through while keeping its cause, at most,
/// when shrinking by its failure alone lands on a case of another cause:
/// each is a triage (a peer's rules applied alone, its bounds asked).
pub const CAUSE_SHRINK_STEPS: usize = 60;

/// How findings are prepared: the subject, how a case is checked, which
/// of the peer's backends classify it, how far it is shrunk.
#[derive(Clone, Copy)]
pub struct Preparer<'a> {
    pub subject: &'a dyn Subject,
    /// The checks (`kinds` is narrowed per finding to what its kind needs).
    pub check: &'a CheckConfig,
    pub confirm: &'a Confirm,
    pub validator: Option<&'a Validator<'a>>,
    /// Checks a shrink may run (0: keep the case as found).
    pub shrink_steps: usize,
    /// Past it, shrinking stops where it is.
    pub deadline: Option<Instant>,
    /// The literals the peer's backends were seen to compile wrongly.
    pub literals: &'a LiteralCache,
}

/// A finding once looked at: prepared for the corpus, or shown to be of a
/// cause already kept as often as asked (only counted there: never
/// compiled with the peer's compiler, never written).
pub enum Recorded {
    Prepared(Box<Prepared>),
    Counted(Cause),
}

/// What a finding's judges made of the texts of its shrink candidates:
/// the verdict is the text's (the candidate is checked as read back from
/// it), the shrinker builds a candidate again after every edit it keeps
/// (its next round starts over on the smaller case), and each shrink of
/// one finding starts from the same case and asks at least what the one
/// before it asked (its failure, then its cause, then its class on a
/// backend), each check under the same quick configuration, its kind's.
/// So a text one rejected the next rejects too, and a text one accepted
/// has the check the next would make: only its cause or class is asked.
struct Verdicts {
    /// The finding's kind: what every candidate must fail.
    kind: Kind,
    rejected: RefCell<HashSet<String>>,
    /// The check of each text judged and not rejected, as made (before a
    /// cause or class was asked of it): one per candidate of this finding's
    /// shrinks at most, dropped with the finding.
    checked: RefCell<HashMap<String, Checked>>,
}

impl Verdicts {
    /// A finding's verdicts, none given yet.
    fn of(kind: Kind) -> Verdicts {
        Verdicts {
            kind,
            rejected: RefCell::default(),
            checked: RefCell::default(),
        }
    }
}

/// The check of a finding's case as found: the one its caller made (a
/// campaign's), if any, until the triage's is needed, then that
/// ([`Preparer::as_found`]): made once at most.
enum AsFound {
    Given(Option<Checked>),
    Triage(Checked),
}

/// A case the shrink's judge accepted, as read back from its text (the
/// corpus keeps text): that text, its check, and its cause there when it
/// was kept to one; or the case as found, by the whole check.
struct Kept {
    text: String,
    checked: Checked,
    found: Option<Found>,
    /// The case as found ([`Preparer::as_found`]), not a shrink's.
    as_found: bool,
}

impl Preparer<'_> {
    /// The checks a triage of a `kind` failure runs (and a shrink candidate
    /// must still fail): the finding's own kind (a `panic` may come from any
    /// check, so all run; an oracle that does not compile is reported as
    /// `jit`), and the peer's bounds, which a cause is weighed against.
    fn triage_config(&self, kind: Kind) -> CheckConfig {
        let own = match kind {
            Kind::Cap => KindSet::NONE,
            Kind::Panic => KindSet::ALL,
            Kind::Jit => KindSet::only(Kind::Jit).with(Kind::Oracle),
            // A peer fails on its bounds request as well as on the case
            // itself: the request is made again (the failure kinds always
            // count).
            Kind::PeerError | Kind::Crash | Kind::Hang | Kind::Garbage => {
                KindSet::only(Kind::Bounds)
            }
            k => KindSet::only(k),
        };
        CheckConfig {
            kinds: own.with(Kind::Bounds),
            ..self.check.clone()
        }
    }

    /// What a shrink candidate must do to be kept: be one the subject
    /// accepts (else shrinking finds a case it was never meant to take, a
    /// bare `invalid` for tinygrad, and blames it), read back from its text
    /// as it was, fail `kind` by a quick walk (a failure shows at the
    /// domain's edges), with cause `want` when one is kept, and show
    /// `class` on its backend when one is kept (a compile with the peer's
    /// compiler per candidate). A candidate is judged once by this
    /// finding's judges (`verdicts`): one rejected is not judged again, and
    /// one accepted is not checked again.
    fn judge<'b>(
        &'b self,
        want: Option<&'b Cause>,
        class: Option<&'b (Class, String)>,
        verdicts: &'b Verdicts,
    ) -> impl Fn(&Program) -> Option<Kept> + 'b {
        // With the peer's bounds: the kept case's cause is triaged on the
        // check its candidate had.
        let kind = verdicts.kind;
        let (cfg, model) = self.quick_triage(kind);
        move |p: &Program| {
            if self.deadline.is_some_and(|d| Instant::now() >= d) {
                return None;
            }
            let (text, exprs) = corpus::case_text(&p.graph, &p.outputs, None);
            if verdicts.rejected.borrow().contains(&text) {
                return None;
            }
            let known = verdicts.checked.borrow().get(&text).cloned();
            let checked = known.or_else(|| {
                let checked = self.failing(p, (&text, exprs), kind, &cfg)?;
                verdicts
                    .checked
                    .borrow_mut()
                    .insert(text.clone(), checked.clone());
                Some(checked)
            });
            let kept = checked.and_then(|c| self.judged(&text, c, kind, want, class, &cfg, model));
            if kept.is_none() {
                // Its check is needed no more: no judge asks it again.
                verdicts.checked.borrow_mut().remove(&text);
                verdicts.rejected.borrow_mut().insert(text);
            }
            kept
        }
    }

    /// The check of candidate `p` as read back from its case text `text`,
    /// with its roots' expressions `exprs` ([`corpus::case_text`]), under
    /// `cfg` (the triage's quick configuration), when the subject takes it
    /// and it fails `kind`.
    fn failing(
        &self,
        p: &Program,
        (text, exprs): (&str, Vec<String>),
        kind: Kind,
        cfg: &CheckConfig,
    ) -> Option<Checked> {
        if !self.subject.profile().covers(&p.graph, &p.outputs) {
            return None;
        }
        let program = engine::parse::parse_program(text).ok()?;
        // The candidate read back prints as the text it was read from: its
        // requests take the expressions printed for that text.
        self.subject
            .printed(&program.graph, &program.outputs, exprs);
        let mut checked = checks::check(
            &program.graph,
            &program.outputs,
            self.subject,
            cfg,
            self.validator,
        );
        checked.failure(kind)?;
        checked.covered = Some(true);
        Some(checked)
    }

    /// [`Preparer::judge`]'s verdict on the candidate of case text `text`
    /// that fails `kind` with `checked` ([`Preparer::failing`]), triaged
    /// under `cfg` (the triage's quick configuration) and `model` (the
    /// profile's at its width).
    #[allow(clippy::too_many_arguments)]
    fn judged(
        &self,
        text: &str,
        mut checked: Checked,
        kind: Kind,
        want: Option<&Cause>,
        class: Option<&(Class, String)>,
        cfg: &CheckConfig,
        model: Model,
    ) -> Option<Kept> {
        let found = match want {
            Some(want) => Some(triage::holding(
                self.subject,
                &checked,
                kind,
                cfg,
                model,
                want,
            )?),
            None => None,
        };
        if let Some((class, backend)) = class {
            let only = Confirm::Only(backend.clone());
            classify(self.subject, &mut checked, &only, cfg.width);
            checked.class.as_ref().filter(|c| c.class == *class)?;
        }
        Some(Kept {
            text: text.to_string(),
            checked,
            found,
            as_found: false,
        })
    }

    /// The triage's quick configuration for `kind` and the profile's model
    /// at its width: made once per shrink, for all its candidates.
    fn quick_triage(&self, kind: Kind) -> (CheckConfig, Model) {
        let cfg = self.triage_config(kind).quick();
        let model = self.subject.profile().model_at(cfg.width);
        (cfg, model)
    }

    /// Shrinks `program` (its `expr` lines) while it fails `kind` the same
    /// way and keeps its cause (`found`, when attributed), then classifies
    /// the shrunk case on the peer's backends and files it under its cause:
    /// the backend when its compiled code gets a construct wrong, else the
    /// cause the case shows. A finding whose cause turns out to be one of
    /// `kept` (kept as often as asked) is only counted. `found` is a
    /// campaign's finding as found: its cause, and the campaign's check of
    /// the case (under `self.check` and `self.validator`), which stands for
    /// the triage's check of the case as found where it ran every kind
    /// that one would ([`Checked::narrowed`]).
    ///
    /// Each candidate is checked once (after a round trip through text,
    /// which is what the corpus keeps), and the kept case's check is the
    /// one its last candidate had; its cause is asked of that check once
    /// (each candidate asked would cost the peer's rules applied alone on
    /// every one). Only when shrinking by the failure alone landed on
    /// another cause is the case shrunk again, keeping it. Classifying
    /// compiles with the peer's compiler, so it is done once, on the
    /// shrunk case: only a real bug (a wrong value, a trap, a compile
    /// error) that shrinking turned into a look-alike the backend computes
    /// right is shrunk again, through candidates that show its class on
    /// the backend that showed it.
    pub fn prepare(
        &self,
        program: &Program,
        kind: Kind,
        found: Option<(Found, Checked)>,
        kept: &HashSet<Cause>,
        origin: String,
    ) -> Recorded {
        let (found, checked) = found.unzip();
        let mut as_found = AsFound::Given(checked);
        let original = Program {
            graph: program.graph.clone(),
            outputs: program.outputs.clone(),
            expects: Vec::new(),
            header: Vec::new(),
            constraints: Vec::new(),
            expect_constraints: None,
        };
        let want = found
            .as_ref()
            .map(|f| f.cause.clone())
            .filter(|c| c.layer() != Layer::Unattributed);
        let want = want.as_ref();
        // Shrinking a hang would wait out the timeout on every candidate.
        let steps = if kind == Kind::Hang {
            0
        } else {
            self.shrink_steps
        };
        // Shrunk by its failure alone (a triage per candidate would cost
        // requests to the peer on every one).
        let verdicts = Verdicts::of(kind);
        let judge = self.judge(None, None, &verdicts);
        let mut shrunk = shrink::shrink_judged(&original, judge, steps);
        let mut note = None;
        let mut kept_case = match shrunk.judged.take() {
            Some(k) => k,
            None => {
                // Out of time, or the failure shows neither on a smaller
                // case nor on the case read back from its text by a quick
                // walk.
                note = Some(
                    "no smaller case, nor this one read back from its text, failed the same way \
                     by a quick walk in time; the case is kept as found"
                        .to_string(),
                );
                self.as_found(&original, kind, &mut as_found)
            }
        };
        let mut stats = (steps > 0).then_some(shrunk.stats);
        // Its cause, shown on the shrunk case; else shrinking by the failure
        // alone landed on a smaller instance of another defect, and the case
        // is shrunk again from the original, keeping the cause.
        if let Some(want) = want {
            let (cfg, model) = self.quick_triage(kind);
            kept_case.found =
                triage::holding(self.subject, &kept_case.checked, kind, &cfg, model, want);
            if kept_case.found.is_none() {
                let steps = steps.min(CAUSE_SHRINK_STEPS);
                let judge = self.judge(Some(want), None, &verdicts);
                let again = shrink::shrink_judged(&original, judge, steps);
                match again.judged {
                    Some(k) => (kept_case, stats) = (k, Some(again.stats)),
                    // No case that shows it, not even the original by a quick
                    // walk: the case as found is kept, under the cause found
                    // on it, rather than a smaller case of another defect.
                    None => {
                        note = Some(
                            "its cause did not show again on a smaller case; the case is kept as found"
                                .to_string(),
                        );
                        kept_case = self.as_found(&original, kind, &mut as_found);
                        kept_case.found = found.clone();
                        stats = None;
                    }
                }
            }
        }
        let unattributed = want.is_none();
        let cause = match kept_case.found.take() {
            Some(f) => f,
            None => self.cause_of(&kept_case.checked, kind, found),
        };
        // A finding found with no cause (a shape seldom recurs) that shows a
        // kept one once shrunk costs no compile with the peer's compiler.
        if unattributed && kept.contains(&cause.cause) {
            return Recorded::Counted(cause.cause);
        }
        classify(
            self.subject,
            &mut kept_case.checked,
            self.confirm,
            self.check.width,
        );
        let again = self.bug_again(&original, &mut as_found, kind, want, &kept_case, &verdicts);
        if let Some((again, st)) = again {
            (kept_case, stats) = (again, Some(st));
        }
        let (text, checked) = (kept_case.text, kept_case.checked);
        let filed = backend::of_classified(self.subject, &checked, self.check.width, self.literals)
            .or_else(|| crate::cause::model_only(&checked))
            .map_or(cause, Found::just);
        if kept.contains(&filed.cause) {
            return Recorded::Counted(filed.cause);
        }
        let failure = checked
            .oracle
            .as_ref()
            .and_then(|o| o.failure.as_ref())
            .map(|f| f.failure);
        let mut entry = Entry::from_checked(
            &checked,
            text,
            kind,
            self.subject,
            self.check.width,
            origin,
            filed,
        );
        if !checked.failed(kind) {
            // Only reachable through a nondeterministic check; say so rather
            // than write a case that claims a failure it does not show.
            entry.message = format!("{NOT_AGAIN} {}", entry.message);
        }
        entry.reproducer = crate::classify::reproducer(self.subject, &checked, &mut note);
        Recorded::Prepared(Box::new(Prepared {
            entry,
            stats,
            note,
            failure,
        }))
    }

    /// [`Preparer::prepare`] of a finding no cause is kept for yet (no
    /// campaign's: `import`, a peer rule's instance).
    pub fn prepare_one(&self, program: &Program, kind: Kind, origin: String) -> Prepared {
        match self.prepare(program, kind, None, &HashSet::new(), origin) {
            Recorded::Prepared(p) => *p,
            Recorded::Counted(_) => unreachable!("no cause is kept"),
        }
    }

    /// The check of the case as found that a triage of a `kind` failure
    /// would make, given a check of it under `self.check` and
    /// `self.validator` (a campaign's): when that ran every kind the
    /// triage's runs, to its end ([`Checked::narrowed`]).
    fn made(&self, checked: Checked, kind: Kind) -> Option<Checked> {
        let kinds = self.triage_config(kind).kinds;
        if !self.check.kinds.includes(kinds) {
            return None;
        }
        checked.narrowed(kinds)
    }

    /// The case as found, kept as it is (it did not fail again once read
    /// back from its text, or not in the quick walk), by the whole check:
    /// the campaign's where it stands for it ([`Preparer::made`]), else one
    /// made here; either kept in `case` for the next time it is needed.
    fn as_found(&self, original: &Program, kind: Kind, case: &mut AsFound) -> Kept {
        let checked = match case {
            AsFound::Triage(checked) => checked.clone(),
            AsFound::Given(given) => {
                let checked = (given.take())
                    .and_then(|c| self.made(c, kind))
                    .unwrap_or_else(|| {
                        checks::check(
                            &original.graph,
                            &original.outputs,
                            self.subject,
                            &self.triage_config(kind),
                            self.validator,
                        )
                    });
                *case = AsFound::Triage(checked.clone());
                checked
            }
        };
        Kept {
            text: corpus::case_body(&original.graph, &original.outputs, None),
            checked,
            found: None,
            as_found: true,
        }
    }

    /// The cause of the kept case's `kind` failure, when shrinking did not
    /// keep one (a finding found with none, a subterm's shape, or one whose
    /// cause did not show again): what triage finds there, unless `found`
    /// (the finding's as found) was attributed and differs.
    fn cause_of(&self, checked: &Checked, kind: Kind, found: Option<Found>) -> Found {
        let now = checked.failure(kind).map(|f| {
            triage::triage(
                self.subject,
                checked,
                f,
                &self.triage_config(kind),
                triage::Depth::Full,
            )
        });
        match (now, found) {
            (Some(now), Some(was))
                if now.cause != was.cause && was.cause.layer() != Layer::Unattributed =>
            {
                was
            }
            (Some(now), _) => now,
            (None, Some(was)) => was,
            (None, None) => Found::just(triage::shape_of(checked, kind)),
        }
    }

    /// The case shrunk again, from the original, keeping the class of a
    /// real bug: when the shrunk case's class is not one (its compiled
    /// code is right there) and the original's is, on the backend that
    /// showed it. When nothing smaller failed, the kept case is the case as
    /// found, already checked and classified as the original would be here:
    /// neither is made again. Else the original is classified on its check
    /// as found ([`Preparer::as_found`]: the campaign's, when that ran the
    /// checks the triage's would, or one made before), not made again.
    fn bug_again(
        &self,
        original: &Program,
        case: &mut AsFound,
        kind: Kind,
        want: Option<&Cause>,
        kept: &Kept,
        verdicts: &Verdicts,
    ) -> Option<(Kept, shrink::ShrinkStats)> {
        let is_bug = |c: &Checked| {
            c.class.as_ref().is_some_and(|c| {
                matches!(
                    c.class,
                    Class::WrongValue | Class::Trap | Class::CompileError
                )
            })
        };
        if !matches!(kind, Kind::Oracle | Kind::Validate)
            || *self.confirm == Confirm::Off
            || self.shrink_steps == 0
            || is_bug(&kept.checked)
            || kept.as_found
        {
            return None;
        }
        let mut was = self.as_found(original, kind, case).checked;
        classify(self.subject, &mut was, self.confirm, self.check.width);
        if !is_bug(&was) {
            return None;
        }
        let c = was.class?;
        let keep = (c.class, c.backend?);
        let steps = self.shrink_steps.min(BACKEND_SHRINK_STEPS);
        let judge = self.judge(want, Some(&keep), verdicts);
        let again = shrink::shrink_judged(original, judge, steps);
        Some((again.judged?, again.stats))
    }
}

/// How a finding's message starts when its case passed the final check.
pub(crate) const NOT_AGAIN: &str = "(did not fail again when re-checked)";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subject::{PlusOne, Profile};
    use engine::dtype::Width;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_shrink_candidate_read_back_prints_as_its_text() {
        // The judge gives the text's expressions for the candidate read
        // back (Subject::printed): they must be what the printer writes
        // for it.
        for generator in crate::generate::Generator::ALL {
            for seed in 0..16 {
                let case = crate::generate::Case::from_seed(generator, seed);
                let p = Program::of_results(case.graph, case.roots, Vec::new());
                shrink::shrink_judged(
                    &p,
                    |q| {
                        let (text, exprs) = corpus::case_text(&q.graph, &q.outputs, None);
                        let back = engine::parse::parse_program(&text).unwrap();
                        let printed: Vec<String> = (back.outputs.iter())
                            .map(|&r| engine::print::expr(&back.graph, r))
                            .collect();
                        assert_eq!(exprs, printed, "{text}");
                        None::<()>
                    },
                    usize::MAX,
                );
            }
        }
    }

    /// A subject whose every answer is off by one, counting the answers
    /// asked of it.
    fn plus_one() -> PlusOne {
        PlusOne {
            profile: Profile::engine(Width::W64),
            asked: AtomicUsize::new(0),
        }
    }

    /// A preparer of findings against `subject` that shrinks through 10
    /// candidates at most, and confirms them by `confirm`.
    fn preparer<'a>(
        subject: &'a PlusOne,
        check: &'a CheckConfig,
        confirm: &'a Confirm,
        literals: &'a LiteralCache,
    ) -> Preparer<'a> {
        Preparer {
            subject,
            check,
            confirm,
            validator: None,
            shrink_steps: 10,
            deadline: None,
            literals,
        }
    }

    /// A case the plus-one subject gets wrong.
    fn failing() -> Program {
        engine::parse::parse_program("var x in [0, 3]\nexpr x * 2\n").unwrap()
    }

    #[test]
    fn a_shrink_candidate_rejected_once_is_not_checked_again() {
        let subject = plus_one();
        let (check, literals) = (CheckConfig::default(), LiteralCache::default());
        let p = preparer(&subject, &check, &Confirm::Off, &literals);
        // Fails (the answer is off by one), so it is kept.
        let failing = failing();
        assert!(p.judge(None, None, &Verdicts::of(Kind::Oracle))(&failing).is_some());
        // Rejected: the wrong kind of failure is asked for.
        let verdicts = Verdicts::of(Kind::Range);
        let judge = p.judge(None, None, &verdicts);
        assert!(judge(&failing).is_none());
        let asked = subject.asked.load(Ordering::Relaxed);
        assert!(judge(&failing).is_none());
        assert_eq!(subject.asked.load(Ordering::Relaxed), asked);
        // Nor by the finding's next shrink, which keeps its cause too.
        let want = Cause::Hang;
        let keeping = p.judge(Some(&want), None, &verdicts);
        assert!(keeping(&failing).is_none());
        assert_eq!(subject.asked.load(Ordering::Relaxed), asked);
    }

    #[test]
    fn a_shrink_candidate_accepted_once_is_not_checked_again() {
        let subject = plus_one();
        let (check, literals) = (CheckConfig::default(), LiteralCache::default());
        let p = preparer(&subject, &check, &Confirm::Off, &literals);
        let verdicts = Verdicts::of(Kind::Oracle);
        let judge = p.judge(None, None, &verdicts);
        let failing = failing();
        let kept = judge(&failing).unwrap();
        let asked = subject.asked.load(Ordering::Relaxed);
        assert!(asked > 0);
        // The finding's next shrink keeps its cause too (a cause its
        // failure's message shows, asking nothing of the subject): it takes
        // the check the first shrink made of the same text.
        let message = &kept.checked.failure(Kind::Oracle).unwrap().message;
        let want = crate::cause::site::of_message(message);
        let keeping = p.judge(Some(&want), None, &verdicts);
        let again = keeping(&failing).unwrap();
        assert_eq!(subject.asked.load(Ordering::Relaxed), asked);
        assert_eq!(again.text, kept.text);
        assert_eq!(again.found.map(|f| f.cause).as_ref(), Some(&want));
    }

    /// `f` given a fresh plus-one subject, the default check and a
    /// preparer past its deadline (no candidate is judged: the case as
    /// found is kept).
    fn past_deadline<R>(
        confirm: &Confirm,
        f: impl FnOnce(&PlusOne, &CheckConfig, &Preparer) -> R,
    ) -> R {
        let subject = plus_one();
        let (check, literals) = (CheckConfig::default(), LiteralCache::default());
        let p = Preparer {
            deadline: Some(Instant::now()),
            ..preparer(&subject, &check, confirm, &literals)
        };
        f(&subject, &check, &p)
    }

    #[test]
    fn the_case_as_found_kept_is_checked_once() {
        // Past the deadline no candidate is judged, so the case as found is
        // kept, checked by the whole check and classified. With its class
        // confirmed, shrinking again for a bug's class (the original's, as
        // found) asks the subject nothing more than without.
        let asked = |confirm: Confirm| {
            past_deadline(&confirm, |subject, _, p| {
                let prepared = p.prepare_one(&failing(), Kind::Oracle, String::new());
                assert!(prepared.note.is_some_and(|n| n.contains("kept as found")));
                subject.asked.load(Ordering::Relaxed)
            })
        };
        assert_eq!(asked(Confirm::All), asked(Confirm::Off));
    }

    #[test]
    fn the_case_as_found_kept_is_the_campaigns_check() {
        // Past the deadline no candidate is judged: the case as found is
        // kept. Given the campaign's check of it, that check is the kept
        // case's: the subject is asked one answer fewer than when the check
        // given stands for nothing (a panic stopped it), and the finding's
        // file is the same.
        let prepared = |usable: bool| {
            past_deadline(&Confirm::Off, |subject, check, p| {
                let case = failing();
                let mut checked = checks::check(&case.graph, &case.outputs, subject, check, None);
                let found = Found::just(triage::shape_of(&checked, Kind::Oracle));
                if !usable {
                    let mut panic = checked.failures[0].clone();
                    panic.kind = Kind::Panic;
                    checked.failures.push(panic);
                }
                let program =
                    Program::of_results(checked.graph.clone(), checked.src.clone(), vec![]);
                let before = subject.asked.load(Ordering::Relaxed);
                let found = Some((found, checked));
                let Recorded::Prepared(prepared) = p.prepare(
                    &program,
                    Kind::Oracle,
                    found,
                    &HashSet::new(),
                    String::new(),
                ) else {
                    panic!("no cause is kept");
                };
                assert!(prepared.note.is_some_and(|n| n.contains("kept as found")));
                let path = std::path::Path::new("x");
                let asked = subject.asked.load(Ordering::Relaxed) - before;
                (asked, prepared.entry.render(path))
            })
        };
        let (given, file) = prepared(true);
        let (again, file_again) = prepared(false);
        assert_eq!(given + 1, again);
        assert_eq!(file, file_again);
    }

    #[test]
    fn the_case_as_found_is_classified_on_the_campaigns_check() {
        // A shrunk case kept whose class is not a bug (the plus-one subject
        // offers no backend: unconfirmed) has the case as found classified,
        // to see whether it shows one. Given the campaign's check of the
        // case, that check is not made again: the subject is asked no more
        // with its class confirmed than without.
        let asked = |confirm: Confirm| {
            let subject = plus_one();
            let (check, literals) = (CheckConfig::default(), LiteralCache::default());
            let p = preparer(&subject, &check, &confirm, &literals);
            let case = failing();
            let checked = checks::check(&case.graph, &case.outputs, &subject, &check, None);
            let found = Found::just(triage::shape_of(&checked, Kind::Oracle));
            let program = Program::of_results(checked.graph.clone(), checked.src.clone(), vec![]);
            let before = subject.asked.load(Ordering::Relaxed);
            let found = Some((found, checked));
            let prepared = p.prepare(
                &program,
                Kind::Oracle,
                found,
                &HashSet::new(),
                String::new(),
            );
            let Recorded::Prepared(prepared) = prepared else {
                panic!("no cause is kept");
            };
            assert!(prepared.stats.is_some_and(|s| s.accepted > 0));
            subject.asked.load(Ordering::Relaxed) - before
        };
        assert_eq!(asked(Confirm::All), asked(Confirm::Off));
    }
}
