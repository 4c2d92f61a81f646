//! A timeout bounds wall time: one rule at one width, all its attempts
//! together, ends within `QUERY_FACTOR` timeouts plus a small constant,
//! and a timeout is unknown, never proved. The rules are `hard.rules`
//! (sound, but beyond Z3 4.8.12 without the lemmas their engine versions
//! cite).

use engine::rules::RuleSet;
use std::time::{Duration, Instant};
use verify::prove::{prove_rule, Options, Verdict};
use verify::solver::QUERY_FACTOR;

fn hard() -> RuleSet {
    engine::rules::candidates(&[(
        "hard.rules".to_string(),
        include_str!("hard.rules").to_string(),
    )])
    .expect("hard.rules parses")
}

fn opts(timeout: Duration) -> Options {
    Options {
        widths: vec![8, 64],
        timeout,
        cache: None,
        smt2_dir: None,
        seed: 0,
        // No lemmas: what is timed is the rule's own query, whose bound
        // this tests (a cited lemma is proved once, before that bound
        // starts).
        lemmas: std::sync::Arc::new(verify::lemma::Lemmas::empty()),
        ..Options::default()
    }
}

/// Slack for building the query and for a starved watchdog on a loaded
/// machine; measured overhead is about 0.05 s.
const SLACK: Duration = Duration::from_secs(2);

#[test]
fn a_tiny_timeout_makes_every_hard_query_unknown_at_once() {
    let set = hard();
    for t in [1e-9, 1e-3] {
        let o = opts(Duration::from_secs_f64(t));
        for rule in set.rules() {
            for &w in &o.widths {
                let start = Instant::now();
                let r = prove_rule(rule, w, &o);
                let took = start.elapsed();
                assert!(
                    matches!(r.verdict, Verdict::Unknown { .. }),
                    "{} at {w} with timeout {t}: {}",
                    rule.name,
                    r.verdict.name()
                );
                assert!(
                    took < SLACK,
                    "{} at {w}: {took:?} with timeout {t}",
                    rule.name
                );
            }
        }
    }
}

/// Before the bound, div_drop_offset's query took 13.6 s at a 1 s timeout
/// (its attempts each had the whole timeout), then 10.05 s.
#[test]
fn a_hard_query_ends_within_its_bound_of_timeouts() {
    let set = hard();
    let rule = set
        .rule("divmod_recombine_composed_bare")
        .expect("a hard rule");
    let timeout = Duration::from_secs(1);
    let start = Instant::now();
    let r = prove_rule(rule, 8, &opts(timeout));
    let took = start.elapsed();
    println!("divmod_recombine_composed at 8 bits, timeout 1 s: {took:?}");
    assert!(
        matches!(r.verdict, Verdict::Unknown { .. }),
        "{}",
        r.verdict.name()
    );
    assert!(
        took < timeout * QUERY_FACTOR + SLACK,
        "{took:?}, more than {QUERY_FACTOR} timeouts"
    );
}
