//! A campaign's summary, as `fuzz` and `gate` print it (text and JSON),
//! and the progress line a campaign shows while it runs.

use super::output::say;
use engine::dtype::Width;
use engine::print::count;
use fuzz::campaign::{self, Progress, Stop};
use fuzz::corpus;
use fuzz::missed::Tally;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

fn checks_short(s: &str) -> String {
    fuzz::message::short(s)
}

/// The campaign summary as JSON (`tileproof fuzz --json`, and the campaign
/// figures of `tileproof gate --json`).
pub fn summary_json(s: &campaign::Summary, width: Width) -> serde_json::Value {
    let fired: serde_json::Map<String, serde_json::Value> = s
        .fired()
        .into_iter()
        .map(|(n, c)| (n.to_string(), json!(c)))
        .collect();
    let by_kind: serde_json::Map<String, serde_json::Value> = s
        .by_kind
        .iter()
        .map(|(k, n)| (k.name().to_string(), json!(n)))
        .collect();
    let findings: Vec<serde_json::Value> = s
        .findings
        .iter()
        .map(|f| {
            json!({
                "kind": f.kind.name(),
                "case": f.case_number,
                "generator": f.generator.name(),
                "case_seed": f.case_seed,
                "variant": f.variant.map(|v| v.name()),
                "message": f.message,
                "point": f.point.as_ref().map(|p| p.iter().map(|(n, v)| json!([n, v])).collect::<Vec<_>>()),
                "rules": f.rules.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
                "seconds": f.found_after.as_secs_f64(),
                "path": f.path.as_ref().map(|p| p.display().to_string()),
                "new_file": f.new_file,
                "note": f.note,
                "class": f.class.as_ref().map(|c| c.class.name()),
                "backend": f.class.as_ref().map(|c| c.header()),
                "cause": f.cause.as_ref().map(|c| c.key()),
            })
        })
        .collect();
    let buckets: Vec<serde_json::Value> = s
        .buckets
        .iter()
        .map(|b| {
            json!({
                "cause": b.cause.key(),
                "layer": b.cause.layer().name(),
                "describe": b.cause.describe(),
                "kind": b.kind.name(),
                "class": b.class.map(|c| c.name()),
                "count": b.count,
                "written": b.written,
                "first_case": b.first_case,
                "first_path": b.first_path.as_ref().map(|p| p.display().to_string()),
                "recorded": b.recorded,
                "detail": b.detail,
            })
        })
        .collect();
    let by_class: serde_json::Map<String, serde_json::Value> = s
        .by_class
        .iter()
        .map(|(c, n)| (c.name().to_string(), json!(n)))
        .collect();
    json!({
        "simplifier": s.subject,
        "answered": s.answered,
        "unsupported": s.unsupported,
        "seed": s.seed,
        "shard": s.shard.to_string(),
        "generator": s.generator.name(),
        "width": width.0,
        "cases": s.cases,
        "seconds": s.elapsed.as_secs_f64(),
        "cases_per_sec": s.cases_per_sec(),
        "stop": stop_name(s.stop),
        "findings": s.total_findings(),
        "findings_by_kind": by_kind,
        "findings_by_class": by_class,
        "buckets": buckets,
        "finding_list": findings,
        "peer": s.peer,
        "answer_shapes": s.answer_shapes,
        "rules_covered": s.rules_covered(),
        "rules_total": s.rule_names.len(),
        "rule_counts": fired,
        "never_fired": s.never_fired(),
        "digest": format!("{:016x}", s.digest),
        "missed": missed_json(&s.missed),
    })
}

/// The missed simplifications as JSON: one object per cause, the
/// rejections by why (`null` when the campaign did not look).
pub fn missed_json(t: &Tally) -> serde_json::Value {
    if !t.on {
        return serde_json::Value::Null;
    }
    let rules: Vec<serde_json::Value> = t
        .by_count()
        .into_iter()
        .map(|b| {
            let m = &b.cheapest;
            json!({
                "rule": b.cause.rule,
                "text": b.cause.text,
                "count": b.count,
                "written": b.written,
                "first_path": b.first_path.as_ref().map(|p| p.display().to_string()),
                "cheapest": {
                    "source": corpus::case_body(&m.graph, &m.src, None),
                    "peer": m.show(&m.peer),
                    "tileproof": m.show(&m.engine),
                    "peer_cost": m.peer_cost,
                    "tileproof_cost": m.engine_cost,
                    "proof": format!("{}: {}", m.verdict, m.proof),
                    "rules": m.causes.iter().map(|c| c.rule.as_str()).collect::<Vec<_>>(),
                },
            })
        })
        .collect();
    json!({
        "cases": t.cases,
        "rules": rules,
        "rejected": t.rejected,
        "outside_profile": t.outside_profile,
        "one_point": t.one_point,
        "unwritten": t.unwritten,
        "engine_missed": {
            "cases": t.engine_missed.cases,
            "written": t.engine_missed.written,
            "first_path": t.engine_missed.first_path.as_ref().map(|p| p.display().to_string()),
            "rejected": t.engine_missed.rejected,
        },
    })
}

/// The missed simplifications: one line per cause (its rules, how often,
/// the cheapest case), then what was not reported and why.
pub fn print_missed(t: &Tally) {
    if !t.on {
        return;
    }
    say!(
        "missed simplifications (tileproof's engine cheaper than the peer's sound answer, proved under the peer's semantics; not bugs): {}, by the engine's {} that made the difference",
        count(t.cases, "case"),
        count(t.buckets.len(), "rule")
    );
    for b in t.by_count() {
        let m = &b.cheapest;
        say!("  {:>5}x  {}", b.count, b.cause);
        say!(
            "           e.g. {} => peer {} ({}), tileproof {} ({}){}",
            checks_short(&m.show(&m.src)),
            checks_short(&m.show(&m.peer)),
            m.peer_cost,
            checks_short(&m.show(&m.engine)),
            m.engine_cost,
            b.first_path
                .as_ref()
                .map_or_else(String::new, |p| format!(": {}", p.display()))
        );
    }
    // Not proved equal (refuted, unproved, vacuous), or outside the profile.
    let mut not: Vec<String> = t.rejected.iter().map(|(r, n)| format!("{r} {n}")).collect();
    if t.outside_profile > 0 {
        not.push(format!("{} using an op the peer lacks", t.outside_profile));
    }
    if !not.is_empty() {
        say!(
            "  cheaper answers of the engine not reported: {}",
            not.join(", ")
        );
    }
    if t.one_point > 0 {
        say!(
            "  sound answers not looked at: {} (a variable of one point: the engine would fold it to a constant and every rule after would look missed)",
            count(t.one_point, "case")
        );
    }
    let e = &t.engine_missed;
    let unproved: u64 = e.rejected.values().sum();
    say!(
        "missed simplifications of tileproof's engine (the peer's sound answer cheaper, proved under the peer's semantics; not bugs): {}{}{}",
        count(e.cases, "case"),
        e.first_path
            .as_ref()
            .map_or_else(String::new, |p| format!(", e.g. {}", p.display())),
        if unproved > 0 {
            format!("; {unproved} more not proved")
        } else {
            String::new()
        }
    );
    for e in &t.unwritten {
        say!("  not written: {e}");
    }
}

pub fn stop_name(s: Stop) -> &'static str {
    match s {
        Stop::Cases => "case budget",
        Stop::Time => "time budget",
        Stop::Causes => "cause limit",
    }
}

pub fn print_summary(s: &campaign::Summary, width: Width) {
    say!(
        "{}: seed {}, shard {}, generator {}, width {width}: {} in {:.1} s ({:.0} cases/s); stopped by the {}",
        s.subject,
        s.seed,
        s.shard,
        s.generator,
        count(s.cases, "case"),
        s.elapsed.as_secs_f64(),
        s.cases_per_sec(),
        stop_name(s.stop)
    );
    let kinds: Vec<String> = s.by_kind.iter().map(|(k, n)| format!("{k} {n}")).collect();
    say!(
        "findings: {}{}",
        s.total_findings(),
        if kinds.is_empty() {
            String::new()
        } else {
            format!(" ({})", kinds.join(", "))
        }
    );
    if !s.by_class.is_empty() {
        let classes: Vec<String> = s.by_class.iter().map(|(c, n)| format!("{c} {n}")).collect();
        let bugs: u64 = s
            .by_class
            .iter()
            .filter(|(c, _)| c.is_bug())
            .map(|(_, n)| n)
            .sum();
        say!(
            "by the peer's compiled code: {} ({bugs} real: wrong-value, trap, compile-error, peer-crash, hang)",
            classes.join(", ")
        );
    }
    if !s.buckets.is_empty() {
        say!("causes ({}):", s.buckets.len());
        for b in &s.buckets {
            let first = b
                .first_case
                .lines()
                .filter(|l| l.starts_with("expr"))
                .collect::<Vec<_>>();
            say!(
                "  {:>5}x  {} ({}, {}){}",
                b.count,
                b.cause,
                b.cause.layer().name(),
                b.class
                    .map_or_else(|| b.kind.name().to_string(), |c| format!("{} {c}", b.kind)),
                b.first_path
                    .as_ref()
                    .map_or_else(String::new, |p| format!(": {}", p.display()))
            );
            if let Some(d) = &b.detail {
                say!("           {}", checks_short(d));
            }
            say!("           {}", checks_short(&first.join(" ; ")));
        }
    }
    for f in &s.findings {
        let Some(path) = &f.path else { continue };
        say!(
            "  {} in case {} ({}{}): {}{}",
            f.kind,
            f.case_number,
            f.generator,
            f.variant
                .map_or_else(String::new, |v| format!(", {v} variant")),
            path.display(),
            if f.new_file {
                ""
            } else {
                " (already in the corpus)"
            }
        );
        say!("    {}", f.message);
        if let Some(c) = &f.class {
            say!("    backend: {}", c.header());
        }
        if let Some(n) = &f.note {
            say!("    note: {n}");
        }
    }
    let written = s.findings.iter().filter(|f| f.path.is_some()).count() as u64;
    let unwritten = s.total_findings() - written;
    if unwritten > 0 {
        say!("  {unwritten} more not written (--max-findings per cause, or a write error above)");
    }
    if let Some(why) = &s.causes_unwritten {
        say!("  note: {why}");
    }
    print_missed(&s.missed);
    if s.peer {
        // A peer: what it answered and what it declined.
        let declined: u64 = s.unsupported.values().sum();
        say!(
            "answered {}, declined {declined}; {} distinct answer shapes (names and constants abstracted)",
            engine::print::count(s.answered, "program"),
            s.answer_shapes
        );
        for (why, n) in &s.unsupported {
            say!("  {n:>8}  unsupported: {why}");
        }
        if s.rule_names.is_empty() {
            return;
        }
        say!(
            "peer rules fired: {} of {} ({}, by the names its `rules` request lists)",
            s.rules_covered(),
            s.rule_names.len(),
            s.subject
        );
    } else {
        say!(
            "rule fire counts ({} of {} rules fired):",
            s.rules_covered(),
            s.rule_names.len()
        );
    }
    for (name, n) in s.fired().into_iter().filter(|(_, n)| *n > 0) {
        say!("  {n:>10}  {name}");
    }
    let never = s.never_fired();
    if never.is_empty() {
        say!("every rule fired");
    } else {
        say!("never fired ({}): {}", never.len(), never.join(", "));
    }
}

/// The progress display: an indicatif bar on a terminal, else a line every
/// ten seconds (CI logs); findings are announced as they are written.
pub struct Display {
    bar: Option<ProgressBar>,
    last_line: Mutex<Instant>,
    start: Instant,
    time: Option<Duration>,
}

impl Display {
    pub fn new(time: Option<Duration>, cases: Option<u64>) -> Display {
        let start = Instant::now();
        let bar = std::io::stderr().is_terminal().then(|| {
            let (len, template) = match (time, cases) {
                (Some(t), _) => (
                    t.as_secs().max(1),
                    "{spinner} fuzzing [{bar:30}] {elapsed}/{duration} {msg}",
                ),
                (None, Some(n)) => (n, "{spinner} fuzzing [{bar:30}] {pos}/{len} cases {msg}"),
                (None, None) => (1, "{spinner} fuzzing {msg}"),
            };
            let b = ProgressBar::new(len);
            b.set_style(
                ProgressStyle::with_template(template)
                    .expect("valid template")
                    .progress_chars("=> "),
            );
            b.enable_steady_tick(Duration::from_millis(200));
            b
        });
        Display {
            bar,
            last_line: Mutex::new(start),
            start,
            time,
        }
    }

    pub fn update(&self, p: &Progress) {
        let mut status = format!(
            "{}, {:.0} cases/s, {}",
            count(p.cases, "case"),
            p.cases_per_sec(),
            count(p.findings, "finding")
        );
        // A peer has no rules tileproof knows of.
        if p.rules_total > 0 {
            status += &format!(", {}/{} rules covered", p.rules_covered, p.rules_total);
        }
        for f in &p.new_findings {
            let line = format!(
                "[{:.1} s] finding: {} in case {} ({}{}){}",
                f.found_after.as_secs_f64(),
                f.kind,
                f.case_number,
                f.generator,
                f.variant
                    .map_or_else(String::new, |v| format!(", {v} variant")),
                f.path
                    .as_ref()
                    .map_or_else(String::new, |p| format!(" -> {}", p.display()))
            );
            match &self.bar {
                Some(b) => b.println(line),
                None => eprintln!("{line}"),
            }
        }
        match &self.bar {
            Some(b) => {
                if self.time.is_some() {
                    b.set_position(self.start.elapsed().as_secs());
                } else {
                    b.set_position(p.cases);
                }
                b.set_message(status);
            }
            None => {
                let mut last = self.last_line.lock().unwrap_or_else(|e| e.into_inner());
                if last.elapsed() >= Duration::from_secs(10) {
                    *last = Instant::now();
                    eprintln!("[{:>5.0} s] {status}", p.elapsed.as_secs_f64());
                }
            }
        }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
