//! tileproof's engine and Morok's `symbolic()` and `sym()` side by side in
//! one process, on the same cases (`tileproof-morok --bench FILE`):
//! through the protocol, the pipe and the JSON cost most of either's time,
//! so the two simplifiers are only comparable here.
//!
//! `FILE` has one case per line, as `tileproof bench peers` writes them
//! for a Morok peer (cases from the campaign generators, projected onto
//! Morok's profile): `{"text": PROGRAM, "request": REQUEST}`, the case as
//! tileproof's engine reads it and as the protocol sends it to this
//! adapter. Each simplifier gets the same case as its users build it: the
//! engine a parsed program, Morok the UOps the adapter builds from the
//! request. A case either simplifier fails on (a Morok panic or loop, an
//! engine error) is left out of every figure and counted.

use crate::convert::{self, VarMode};
use crate::groups::{Tier, Tracker};
use engine::rewrite::Simplifier;
use morok_ir::UOp;
use morok_schedule::graph_rewrite;
use serde::Deserialize;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Instant;

/// Timed runs of each simplifier on each case; the case's figure is their
/// median.
const RUNS: usize = 15;

#[derive(Deserialize)]
struct Line {
    text: String,
    request: tileproof_adapter::Request,
}

/// One case, ready for both.
struct Ready {
    program: engine::parse::Program,
    exprs: Vec<Arc<UOp>>,
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn quantile(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

/// The median of [`RUNS`] timings of `f`, in seconds.
fn timed(mut f: impl FnMut()) -> f64 {
    let mut runs: Vec<f64> = (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    median(&mut runs)
}

/// Whether Morok's `tier` simplifies every expression of the case without
/// a panic or a loop (the adapter's loop guard, [`Tracker`]).
fn morok_finishes(tier: Tier, exprs: &[Arc<UOp>]) -> bool {
    exprs.iter().all(|e| {
        catch_unwind(AssertUnwindSafe(|| {
            let tracker = Tracker::tier(tier, e);
            graph_rewrite(&tracker, e.clone(), &mut ())
        }))
        .is_ok()
    })
}

/// Runs the benchmark on the cases of `path` and prints its figures;
/// returns how many cases were timed.
pub fn run(path: &str, vars: VarMode) -> Result<usize, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let simp = Simplifier::new(engine::rules::builtin());
    let tiers = [Tier::Symbolic, Tier::Sym];
    let mut ready = Vec::new();
    let (mut unreadable, mut refused, mut failing) = (0, 0, 0);
    // Morok's panics are expected on some cases (they are findings): not
    // printed here.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let Ok(l) = serde_json::from_str::<Line>(line) else {
            unreadable += 1;
            continue;
        };
        let (Ok(program), Ok(case)) = (engine::parse::parse_program(&l.text), l.request.case())
        else {
            eprintln!("tileproof-morok: {path}:{}: not a case", i + 1);
            unreadable += 1;
            continue;
        };
        let Ok(exprs) = convert::plan_vars(&case, vars).and_then(|p| convert::build(&case, &p))
        else {
            refused += 1;
            continue;
        };
        let engine_ok = simp
            .simplify(&mut program.graph.clone(), &program.outputs, false)
            .is_ok();
        if !engine_ok || !tiers.iter().all(|&t| morok_finishes(t, &exprs)) {
            failing += 1;
            continue;
        }
        morok_ir::provenance::PROVENANCE_TRACKER.with(|t| t.borrow_mut().clear());
        ready.push(Ready { program, exprs });
    }
    std::panic::set_hook(hook);
    if ready.is_empty() {
        return Err(format!("no case of {path} could be timed"));
    }
    let mut engine_times = Vec::new();
    let mut morok_times: Vec<Vec<f64>> = vec![Vec::new(); tiers.len()];
    let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); tiers.len()];
    for c in &ready {
        // A fresh copy of the parsed graph each run, made before the clock
        // starts: simplifying adds nodes to it.
        let mut runs: Vec<f64> = (0..RUNS)
            .map(|_| {
                let mut g = c.program.graph.clone();
                let t = Instant::now();
                let _ = std::hint::black_box(simp.simplify(&mut g, &c.program.outputs, false));
                t.elapsed().as_secs_f64()
            })
            .collect();
        let e = median(&mut runs);
        engine_times.push(e);
        for (k, &tier) in tiers.iter().enumerate() {
            let m = timed(|| {
                for x in &c.exprs {
                    std::hint::black_box(graph_rewrite(tier.matcher(), x.clone(), &mut ()));
                }
            });
            morok_times[k].push(m);
            ratios[k].push(e / m);
        }
        morok_ir::provenance::PROVENANCE_TRACKER.with(|t| t.borrow_mut().clear());
    }
    let us = |s: f64| s * 1e6;
    println!(
        "one process, {} cases ({} left out: {unreadable} unreadable, {refused} Morok's adapter does not build, {failing} a simplifier panics, loops or fails on); median of {RUNS} runs per case",
        ready.len(),
        unreadable + refused + failing
    );
    println!(
        "  tileproof engine (built-in rules, 64-bit index): median {:.1} us, p90 {:.1} us per case",
        us(median(&mut engine_times.clone())),
        us(quantile(&mut engine_times.clone(), 0.9))
    );
    let engine_median = median(&mut engine_times.clone());
    for (k, tier) in tiers.iter().enumerate() {
        let m = median(&mut morok_times[k].clone());
        println!(
            "  Morok {}(): median {:.1} us, p90 {:.1} us per case; the engine takes {:.2}x its median time (per case: median ratio {:.2}x, p90 {:.2}x)",
            tier.name(),
            us(m),
            us(quantile(&mut morok_times[k], 0.9)),
            engine_median / m,
            median(&mut ratios[k].clone()),
            quantile(&mut ratios[k], 0.9)
        );
    }
    Ok(ready.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A case file as `tileproof bench peers` writes it is timed by both
    /// simplifiers, a line that is not a case is left out and counted,
    /// and a file with no case to time is an error, not a figure.
    #[test]
    fn a_case_file_is_timed_by_both_and_one_with_no_case_is_an_error() {
        let dir =
            std::env::temp_dir().join(format!("tileproof-morok-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = r#"{"text": "var x in [0, 15]\nexpr x * 4 + 0\n", "request": {"id": 0, "vars": [{"name": "x", "dtype": "index", "lo": 0, "hi": 15}], "exprs": ["x * 4 + 0"], "trees": [["add", ["mul", ["var", "x"], ["const", 4]], ["const", 0]]]}}"#;
        let file = dir.join("cases.jsonl");
        std::fs::write(&file, format!("{good}\nnot json\n")).unwrap();
        assert_eq!(run(file.to_str().unwrap(), VarMode::Mixed), Ok(1));
        std::fs::write(&file, "not json\n").unwrap();
        assert!(run(file.to_str().unwrap(), VarMode::Mixed).is_err());
        assert!(run(dir.join("missing").to_str().unwrap(), VarMode::Mixed).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
