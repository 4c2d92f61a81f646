//! How a query spends its time: its checks run in rounds at growing
//! shares, and the rounds are kept as the account of where the time went.
//! The policy is stated once, in docs/architecture.md ("Timeouts").

use crate::solver::{out_of_time, recording, Call, End};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::{Duration, Instant};

/// How much larger each round's share is than the last one's: doubling
/// spends at most about as much on the rounds that fell short as on the
/// one that settles.
pub const GROWTH: u32 = 2;

/// One round of a query: what it checked (the encoding, and the type
/// instance where the rule has several), the share of its checks, whether
/// its share grows in a next round, its seconds and its checks in order.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Round {
    pub what: String,
    pub share: f64,
    pub grows: bool,
    pub seconds: f64,
    pub calls: Vec<Call>,
}

/// Where one query's time went: its bound and its rounds.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Spent {
    /// The query's bound in seconds (none: unbounded).
    pub bound: Option<f64>,
    pub rounds: Vec<Round>,
}

impl Spent {
    pub fn new(bound: Option<Duration>) -> Spent {
        Spent {
            bound: bound.map(|b| b.as_secs_f64()),
            rounds: Vec::new(),
        }
    }

    /// Runs `round` at `share`, then, while it is not `settled` and some
    /// check in it was cancelled at its share, again at [`GROWTH`] times
    /// the share (only once where `grow` is false), recording each round.
    /// Returns the last round's answer and share.
    pub fn escalate<T>(
        &mut self,
        what: &str,
        mut share: Duration,
        grow: bool,
        mut round: impl FnMut(Duration) -> T,
        settled: impl Fn(&T) -> bool,
    ) -> (T, Duration) {
        loop {
            let start = Instant::now();
            let (out, calls) = recording(|| round(share));
            let cancelled = calls.iter().any(|c| c.end == End::Cancelled);
            self.rounds.push(Round {
                what: what.to_string(),
                share: share.as_secs_f64(),
                grows: grow,
                seconds: start.elapsed().as_secs_f64(),
                calls,
            });
            if !grow || settled(&out) || !cancelled || out_of_time() {
                return (out, share);
            }
            share = share.saturating_mul(GROWTH);
        }
    }

    fn cut_short(&self) -> impl Iterator<Item = &Call> {
        self.rounds
            .iter()
            .flat_map(|r| &r.calls)
            .filter(|c| matches!(c.end, End::Cancelled | End::OutOfTime))
    }

    /// The share a later query of the same rule starts at (the per-width
    /// fallback after this width-generic query): the first of `first`,
    /// `GROWTH * first`, ... longer than every check this query cut
    /// short, so that none is tried again at a share already found too
    /// short.
    pub fn share_after(&self, first: Duration) -> Duration {
        let longest = self.cut_short().map(|c| c.seconds).fold(0.0, f64::max);
        let mut share = first;
        while !share.is_zero() && share.as_secs_f64() <= longest {
            share = share.saturating_mul(GROWTH);
        }
        share
    }

    /// A bound likely to settle what this query left unknown: the shares
    /// scale with the bound, so twice the bound gives every check cut
    /// short here about twice the time it had. None where the last round
    /// cut no check short (Z3 gave up on its own: more time would not
    /// help).
    pub fn likely_bound(&self) -> Option<f64> {
        let last = self.rounds.last()?;
        last.calls
            .iter()
            .find(|c| matches!(c.end, End::Cancelled | End::OutOfTime))?;
        let spent = || self.rounds.iter().map(|r| r.seconds).sum();
        Some((f64::from(GROWTH) * self.bound.unwrap_or_else(spent)).ceil())
    }
}

/// At most this many checks are named per round and kind of ending.
const NAMED: usize = 4;

impl fmt::Display for Spent {
    /// A line on the whole, then a line per round: its checks cut short
    /// (with their shares) and those Z3 gave up on.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let spent: f64 = self.rounds.iter().map(|r| r.seconds).sum();
        let bound = self
            .bound
            .map_or("no bound".to_string(), |b| format!("bound {}", secs(b)));
        write!(
            f,
            "{bound}, {} spent in {}",
            secs(spent),
            engine::print::count(self.rounds.len(), "round")
        )?;
        match self.likely_bound() {
            Some(t) => write!(
                f,
                "; --timeout {t} would give each check cut short here about twice the time it had"
            )?,
            None => write!(
                f,
                "; the last round cut no check short (Z3 gave up on its own): more time would not help"
            )?,
        }
        for (i, r) in self.rounds.iter().enumerate() {
            write!(
                f,
                "\n  round {} ({}, share {}): {} in {}",
                i + 1,
                r.what,
                secs(r.share),
                engine::print::count(r.calls.len(), "check"),
                secs(r.seconds)
            )?;
            for (end, how) in [
                (End::Cancelled, "cancelled at their share"),
                (End::OutOfTime, "cut at the query's end"),
                (End::GaveUp, "Z3 gave up"),
                (End::NotStarted, "not started (no time left)"),
                (End::Stopped, "stopped (cvc5 answered)"),
            ] {
                let of: Vec<&Call> = r.calls.iter().filter(|c| c.end == end).collect();
                if of.is_empty() {
                    continue;
                }
                let mut named: Vec<String> = of
                    .iter()
                    .take(NAMED)
                    .map(|c| match end {
                        End::NotStarted => format!("{} (share {})", c.what, secs(c.share)),
                        _ => format!("{} ({} of {})", c.what, secs(c.seconds), secs(c.share)),
                    })
                    .collect();
                if of.len() > NAMED {
                    named.push(format!("{} more", of.len() - NAMED));
                }
                write!(f, "; {how}: {}", named.join(", "))?;
            }
        }
        Ok(())
    }
}

/// Seconds for a report: three significant figures are plenty.
fn secs(s: f64) -> String {
    if s >= 10.0 {
        format!("{s:.1} s")
    } else if s >= 0.01 {
        format!("{s:.2} s")
    } else {
        format!("{:.2} ms", s * 1e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(share: f64, seconds: f64, end: End) -> Call {
        Call {
            what: "value-differs".into(),
            share,
            seconds,
            end,
        }
    }

    fn spent(bound: f64, rounds: Vec<(f64, Vec<Call>)>) -> Spent {
        Spent {
            bound: Some(bound),
            rounds: rounds
                .into_iter()
                .map(|(share, calls)| Round {
                    what: "width-generic".into(),
                    share,
                    grows: true,
                    seconds: calls.iter().map(|c| c.seconds).sum(),
                    calls,
                })
                .collect(),
        }
    }

    /// One round of a simulated query: a check that needs `need` seconds
    /// ends cancelled at a shorter share and answers at a longer one.
    fn simulated(need: f64) -> impl FnMut(Duration) -> bool {
        move |share| {
            let enough = share.as_secs_f64() >= need;
            let end = if enough {
                End::Answered
            } else {
                End::Cancelled
            };
            crate::solver::record(share, need.min(share.as_secs_f64()), end);
            enough
        }
    }

    #[test]
    fn a_check_that_needs_more_than_the_first_share_is_settled_at_a_doubled_one() {
        // The bound's tenth (3 s of 30 s) is too short for a 4.5 s check:
        // the second round, at 6 s, settles it, and the time spent is
        // within the bound.
        let mut spent = Spent::new(Some(Duration::from_secs(30)));
        let (settled, share) = spent.escalate(
            "width-generic",
            Duration::from_secs(3),
            true,
            simulated(4.5),
            |s| *s,
        );
        assert!(settled);
        assert_eq!(share, Duration::from_secs(6));
        let shares: Vec<f64> = spent.rounds.iter().map(|r| r.share).collect();
        assert_eq!(shares, [3.0, 6.0]);
        let used: f64 = spent
            .rounds
            .iter()
            .flat_map(|r| &r.calls)
            .map(|c| c.seconds)
            .sum();
        assert!(used <= 30.0, "{used}");
        assert_eq!(spent.likely_bound(), None, "{spent}");
    }

    #[test]
    fn a_query_that_does_not_grow_runs_one_round_whatever_it_cancels() {
        let mut spent = Spent::new(Some(Duration::from_secs(30)));
        let (settled, share) = spent.escalate(
            "at 64 bits",
            Duration::from_secs(3),
            false,
            simulated(4.5),
            |s| *s,
        );
        assert!(!settled);
        assert_eq!(share, Duration::from_secs(3));
        assert_eq!(spent.rounds.len(), 1);
    }

    #[test]
    fn a_later_query_starts_past_every_check_cut_short() {
        let first = Duration::from_secs(2);
        let s = spent(
            20.0,
            vec![
                (2.0, vec![call(2.0, 2.01, End::Cancelled)]),
                (4.0, vec![call(4.0, 4.01, End::Cancelled)]),
                (8.0, vec![call(8.0, 3.5, End::OutOfTime)]),
            ],
        );
        // 2 and 4 s are too short for the check cancelled after 4.01 s.
        assert_eq!(s.share_after(first), first * GROWTH * GROWTH);
        let answered = spent(20.0, vec![(2.0, vec![call(2.0, 0.5, End::Answered)])]);
        assert_eq!(answered.share_after(first), first);
    }

    #[test]
    fn more_time_is_suggested_only_where_the_last_round_cut_a_check_short() {
        let cut = spent(
            20.0,
            vec![
                (2.0, vec![call(2.0, 2.01, End::Cancelled)]),
                (4.0, vec![call(4.0, 17.9, End::OutOfTime)]),
            ],
        );
        assert_eq!(cut.likely_bound(), Some(f64::from(GROWTH) * 20.0));
        assert!(cut.to_string().contains("--timeout 40"), "{cut}");
        let gave_up = spent(
            20.0,
            vec![
                (2.0, vec![call(2.0, 2.01, End::Cancelled)]),
                (4.0, vec![call(4.0, 0.3, End::GaveUp)]),
            ],
        );
        assert_eq!(gave_up.likely_bound(), None);
        assert!(gave_up.to_string().contains("more time would not help"));
    }
}
