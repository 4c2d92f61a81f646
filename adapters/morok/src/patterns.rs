//! Which closure of a pattern group made a rewrite.
//!
//! A group holds many closures (`range_based_mod_div_patterns` has a dozen),
//! and two wrong ones in one group are two defects. Morok's matcher says
//! which closure matched in a debug event of its own (`pattern matched`,
//! with `op_key` and `pattern_idx`, or `wildcard pattern matched` with
//! `wildcard_idx`: what `RUST_LOG=morok_ir::pattern=debug` prints). This
//! module listens for exactly those events, only while [`record`] runs,
//! and names a closure as that log does: `Binary(Mod)#2` is the third
//! closure the group tries on a MOD node, `*#0` its first wildcard.

use std::cell::{Cell, RefCell};
use std::sync::Once;
use tracing::field::{Field, Visit};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber, span};

/// Where Morok's matcher logs a match.
const TARGET: &str = "morok_ir::pattern::simplified";

thread_local! {
    static RECORDING: Cell<bool> = const { Cell::new(false) };
    static MATCHED: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    static LAST: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// The closures that matched while `f` ran, in the order they first did,
/// and `f`'s result.
pub fn record<T>(f: impl FnOnce() -> T) -> (T, Vec<String>) {
    install();
    RECORDING.with(|r| r.set(true));
    MATCHED.with(|m| m.borrow_mut().clear());
    LAST.with(|l| l.borrow_mut().take());
    // Reset however `f` ends: a panic is a finding the serve loop answers.
    struct Stop;
    impl Drop for Stop {
        fn drop(&mut self) {
            RECORDING.with(|r| r.set(false));
        }
    }
    let stop = Stop;
    let out = f();
    drop(stop);
    (out, MATCHED.with(|m| std::mem::take(&mut *m.borrow_mut())))
}

/// The closure that matched last while `f` ran, and `f`'s result: for
/// one `rewrite` call, the closure that made its rewrite (a closure that
/// rewrites inside, with a matcher of its own, logs those matches first).
pub fn record_last<T>(f: impl FnOnce() -> T) -> (T, Option<String>) {
    let (out, _) = record(f);
    (out, LAST.with(|l| l.borrow_mut().take()))
}

/// Begins one node's rewrite: what [`rename_last`] may rename after it is
/// what matches from here on.
pub fn mark() -> usize {
    LAST.with(|l| l.borrow_mut().take());
    MATCHED.with(|m| m.borrow().len())
}

/// Renames the closure that made the rewrite begun at `mark` to what
/// `name` gives for it, if anything (a step of the closure:
/// [`crate::divmod_steps`]), in the list of those that matched too (where
/// this rewrite listed it: a closure listed before keeps that listing).
pub fn rename_last(mark: usize, name: impl FnOnce(&str) -> Option<&'static str>) {
    if !RECORDING.with(|r| r.get()) {
        return;
    }
    let Some(last) = LAST.with(|l| l.borrow().clone()) else {
        return;
    };
    let Some(new) = name(&last) else {
        return;
    };
    MATCHED.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() > mark && m.last() == Some(&last) {
            m.pop();
        }
        if !m.iter().any(|x| x == new) {
            m.push(new.to_string());
        }
    });
    LAST.with(|l| *l.borrow_mut() = Some(new.to_string()));
}

fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Another subscriber (a user's) wins: then no closure is named.
        let _ = tracing::subscriber::set_global_default(Matches);
    });
}

/// A subscriber of Morok's match events alone: every other callsite is
/// never enabled, so the rest of Morok's tracing costs nothing.
struct Matches;

fn is_match_event(m: &Metadata<'_>) -> bool {
    m.target() == TARGET && *m.level() == Level::DEBUG && m.is_event()
}

impl Subscriber for Matches {
    fn register_callsite(&self, m: &'static Metadata<'static>) -> Interest {
        if is_match_event(m) {
            Interest::sometimes()
        } else {
            Interest::never()
        }
    }

    fn enabled(&self, m: &Metadata<'_>) -> bool {
        is_match_event(m) && RECORDING.with(|r| r.get())
    }

    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(tracing::level_filters::LevelFilter::DEBUG)
    }

    fn new_span(&self, _: &span::Attributes<'_>) -> span::Id {
        span::Id::from_u64(1)
    }

    fn record(&self, _: &span::Id, _: &span::Record<'_>) {}

    fn record_follows_from(&self, _: &span::Id, _: &span::Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut v = Fields::default();
        event.record(&mut v);
        let name = match (v.op_key, v.pattern_idx, v.wildcard_idx) {
            (Some(key), Some(i), _) => format!("{key}#{i}"),
            (_, _, Some(i)) => format!("*#{i}"),
            _ => return,
        };
        MATCHED.with(|m| {
            let mut m = m.borrow_mut();
            if !m.contains(&name) {
                m.push(name.clone());
            }
        });
        LAST.with(|l| *l.borrow_mut() = Some(name));
    }

    fn enter(&self, _: &span::Id) {}

    fn exit(&self, _: &span::Id) {}
}

#[derive(Default)]
struct Fields {
    op_key: Option<String>,
    pattern_idx: Option<u64>,
    wildcard_idx: Option<u64>,
}

impl Visit for Fields {
    fn record_u64(&mut self, f: &Field, v: u64) {
        match f.name() {
            "pattern_idx" => self.pattern_idx = Some(v),
            "wildcard_idx" => self.wildcard_idx = Some(v),
            _ => {}
        }
    }

    fn record_i64(&mut self, f: &Field, v: i64) {
        self.record_u64(f, v as u64)
    }

    fn record_debug(&mut self, f: &Field, v: &dyn std::fmt::Debug) {
        match f.name() {
            "op_key" => self.op_key = Some(format!("{v:?}")),
            "pattern_idx" | "wildcard_idx" => {
                if let Ok(i) = format!("{v:?}").parse() {
                    self.record_u64(f, i)
                }
            }
            _ => {}
        }
    }
}
