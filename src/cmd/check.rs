//! `tileproof check`: translation validation of one concrete rewrite: the
//! file's `expect` lines against its `expr` lines, or a peer's answer
//! against them (`--simplifier CMD`).

use super::{exit, parse_timeout, parse_width, SubjectArgs, Under};
use engine::dtype::Width;
use engine::parse::Program;
use fuzz::checks::Validator;
use fuzz::corpus::{judge, node_values, CaseReport, Replayer};
use fuzz::missed::{Direction, Hunt, Hunter};
use fuzz::propose::Language;
use fuzz::subject::Subject;
use std::process::ExitCode;
use tileproof::decide::{decide, validator};
use verify::check::CheckResult;

#[derive(clap::Args)]
#[command(
    after_help = "Exit status: 0 the target refines the source at every point; 2 a counterexample, \
or unknown (not proved), or the simplifier declined or failed; 1 other errors.\n\n\
Examples:\n  tileproof check case.txt\n  tileproof check --width 8 case.txt\n  \
tileproof check --simplifier 'python3 adapters/tvm_adapter.py' case.txt   # the peer's answer\n  \
tileproof check docs/examples/xla-slice.map   # a map against the engine's simplification of it"
)]
pub struct Args {
    /// A file with `var` lines, `expr` lines (the source) and as many
    /// `expect` lines (the target), or `-` for standard input. With
    /// `--simplifier`, the `expect` lines are ignored: the peer's answer to
    /// the `expr` lines is the target.
    pub file: String,
    /// The input's syntax (default: detected; a file whose first line is
    /// `(dims)[symbols] -> (...)` is an XLA indexing map, whose expressions
    /// are the source and the engine's answer the target, or a
    /// `--simplifier`'s).
    #[arg(long, value_enum, value_name = "SYNTAX")]
    pub input_format: Option<super::Syntax>,
    /// Width of `index` (8, 16, 32, 64); default: the file's `# width:`
    /// header, else 64 (a peer: its profile's width).
    #[arg(long)]
    pub width: Option<u32>,
    /// Per-query timeout in seconds.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub timeout: f64,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
    /// With `--simplifier`: do not look for a missed simplification (what
    /// tileproof's engine, under the peer's semantics, provably makes
    /// cheaper than the peer's sound answer).
    #[arg(long, requires = "simplifier")]
    pub no_missed: bool,
    /// With `--simplifier` (or `--rules`), the target is that simplifier's
    /// answer to the `expr` lines, not the `expect` lines.
    #[command(flatten)]
    pub subject: SubjectArgs,
}

/// The width a file asks for in its header (`# width: 8`).
pub fn header_width(p: &Program) -> Option<u32> {
    fuzz::corpus::Header::of(p).width?.parse().ok()
}

/// The verdict of a judged answer in words: `proved`, `sampled (not
/// proved)` or `fails`, with its class against a peer.
pub fn verdict_line(r: &CaseReport) -> String {
    let word = match r.verdict() {
        fuzz::corpus::CaseVerdict::Sampled => "sampled (not proved: unknown)",
        w => w.name(),
    };
    match &r.class {
        Some(c) => format!("{word} ({c})"),
        None => word.to_string(),
    }
}

pub fn run(a: Args) -> ExitCode {
    exit("check", run_check(a))
}

fn run_check(a: Args) -> anyhow::Result<ExitCode> {
    let input = super::read_input(&a.file, a.input_format)?;
    let mut prog = input.program;
    let timeout = parse_timeout(a.timeout)?;
    // A map states no target of its own: alone, it is checked against the
    // engine's simplification of it (what `simplify` prints).
    let map_alone = input.map.is_some() && prog.expects.is_empty();
    let answered = a.subject.simplifier.is_some() || !a.subject.rules.is_empty() || map_alone;
    let under = if answered {
        Some(a.subject.load()?)
    } else {
        None
    };
    let peer_width = match &under {
        Some(Under::Peer(p)) => Some(p.profile().width()),
        _ => None,
    };
    let width = match a.width.or_else(|| header_width(&prog)) {
        Some(w) => parse_width(w)?,
        None => peer_width.unwrap_or(Width::W64),
    };
    if let Some(under) = &under {
        // A simplifier's answer: the one judgement `replay` makes too.
        let rule = under.rule_subject(a.subject.peer_rule.as_deref())?;
        let stage = under.stage_subject(a.subject.peer_stage.as_deref())?;
        let missed_rules = match under {
            Under::Peer(_) if !a.no_missed && rule.is_none() && stage.is_none() => {
                Some(super::rules_over_builtin(&a.subject.rules)?)
            }
            _ => None,
        };
        let prover = match under {
            Under::Peer(p) => Some(validator(Hunter::model_of(p.profile()), timeout)),
            Under::Engine(..) => None,
        };
        let hunter = match (under, &missed_rules, &prover) {
            (Under::Peer(p), Some(rules), Some(prover)) => Some(
                Hunter::new(rules, p.profile().clone(), Some(prover as &Validator<'_>))
                    .proposing(Language::of_peer(&p.name())),
            ),
            _ => None,
        };
        let who = match under {
            Under::Engine(rules, files) => Replayer::Engine {
                rules,
                rule_files: files,
            },
            Under::Peer(p) => Replayer::Subject {
                subject: match (&rule, &stage) {
                    (Some(r), _) => r as &dyn Subject,
                    (None, Some(s)) => s.as_ref(),
                    (None, None) => p,
                },
                confirm: !a.subject.no_confirm,
                missed: hunter.as_ref(),
            },
        };
        let smt = validator(who.model(width), timeout);
        let r = judge(
            &prog,
            std::path::Path::new(&a.file),
            who,
            Some(width),
            Some(&smt as &Validator<'_>),
        );
        if a.json {
            println!(
                "{}",
                serde_json::json!({ "file": a.file, "width": width.0, "target": r.answer, "verdict": r.verdict(), "report": r })
            );
        } else {
            match input.map.as_ref().filter(|_| map_alone) {
                // The engine's answer to a map as `simplify` prints it when
                // it is XLA's known-empty map.
                Some(m) if known_empty(m, &a.subject.rules)? => {
                    println!("answer {}", engine::xla::Printed::KNOWN_EMPTY);
                    eprintln!("{}: {}", a.file, engine::xla::Printed::EMPTY_REASON);
                }
                _ => {
                    for t in &r.answer {
                        println!("answer {t}");
                    }
                }
            }
            super::cases::print_report(&r);
            println!("verdict: {}", verdict_line(&r));
            if let Some(h) = &r.missed {
                print_missed(h);
            }
        }
        return Ok(if r.ok && r.proved {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(2)
        });
    }
    anyhow::ensure!(
        prog.expects.len() == prog.outputs.len(),
        "{}: {} but {}; check compares them pairwise",
        a.file,
        engine::print::count(prog.outputs.len(), "`expr` line"),
        engine::print::count(prog.expects.len(), "`expect` line")
    );
    let target = prog.expects.clone();
    prog.expects = target.clone();
    let r = decide(&prog.graph, &prog.outputs, &target, width, timeout);
    if a.json {
        let answer: Vec<String> = target
            .iter()
            .map(|&t| engine::print::expr(&prog.graph, t))
            .collect();
        println!(
            "{}",
            serde_json::json!({ "file": a.file, "width": width.0, "target": answer, "result": r })
        );
    } else {
        report(&r, &prog, width);
    }
    Ok(match r {
        CheckResult::Equivalent { .. } | CheckResult::Vacuous => ExitCode::SUCCESS,
        _ => ExitCode::from(2),
    })
}

/// Whether the engine's simplification of `m` is the empty map.
fn known_empty(m: &engine::xla::XlaMap, rules: &[String]) -> anyhow::Result<bool> {
    let rules = super::rules_over_builtin(rules)?;
    let mut m = m.clone();
    let roots = m.program.outputs.clone();
    let Ok(out) =
        engine::rewrite::Simplifier::new(&rules).simplify(&mut m.program.graph, &roots, false)
    else {
        return Ok(false);
    };
    Ok(matches!(
        engine::xla::print_map(&mut m, &out.roots),
        Ok(engine::xla::Printed::KnownEmpty)
    ))
}

/// What the engine makes of the input beside the peer's sound answer.
fn print_missed(h: &Hunt) {
    match h {
        Hunt::NotCheaper => println!("missed: none (the two answers cost the same)"),
        Hunt::OnePoint(v) => println!(
            "missed: not looked for: {v} has one point (the engine would fold it to a constant and every rule after would look missed)"
        ),
        Hunt::OutsideProfile => {
            println!("missed: none (tileproof's cheaper answer uses an op the peer lacks)")
        }
        // `hunt_settled` leaves none unsettled; said plainly if it did.
        Hunt::Unsettled(_) => println!("missed: none reported: the cheaper answer is not proved"),
        Hunt::Rejected(why, detail) => println!(
            "missed: none reported: tileproof's cheaper answer is not proved equal ({why}: {detail})"
        ),
        Hunt::PeerRejected(why, detail) => println!(
            "missed: none reported: the peer's cheaper answer is not proved equal ({why}: {detail})"
        ),
        Hunt::Missed(m) => {
            let peer = format!("the peer {} ({})", m.show(&m.peer), m.peer_cost);
            let engine = format!("tileproof {} ({})", m.show(&m.engine), m.engine_cost);
            match m.direction {
                Direction::EngineCheaper => {
                    println!("missed simplification (not a bug): {engine}, {peer}")
                }
                Direction::PeerCheaper => println!(
                    "missed simplification of tileproof's engine (not a bug of the peer): {peer}, {engine}"
                ),
            }
            let whose = m.direction.proved();
            println!("  proof{whose}: {}: {}", m.verdict, m.proof);
            for c in &m.causes {
                println!("  rule {c}");
            }
            if let Some(p) = &m.proposal {
                for why in &p.untranslated {
                    println!("  not proposed: {why}");
                }
                if let Some(module) = &p.module {
                    println!(
                        "  proposed for {} ({}):",
                        p.language.name(),
                        p.language.describe()
                    );
                    for line in module.lines() {
                        println!("    {line}");
                    }
                }
            }
        }
    }
}

fn report(r: &CheckResult, prog: &Program, width: Width) {
    match r {
        CheckResult::Equivalent { method } => {
            println!("refines: every point of the domain agrees at width {width} ({method})")
        }
        CheckResult::Vacuous => {
            println!("refines vacuously: the source is undefined at every point at width {width}")
        }
        CheckResult::Unknown { reason } => {
            println!("unknown at width {width} (not proved): {reason}")
        }
        CheckResult::Counterexample {
            failure,
            method,
            point,
            root,
            confirmed,
        } => {
            let which = match root {
                Some(r) if prog.outputs.len() > 1 => format!(
                    " in output {} (`expr {}`)",
                    r + 1,
                    engine::print::expr(&prog.graph, prog.outputs[*r])
                ),
                _ => String::new(),
            };
            println!("counterexample at width {width} ({method}): {failure}{which}");
            println!("  point: {}", engine::print::point(&prog.graph, point));
            let env: Vec<i128> = point.iter().map(|p| p.1).collect();
            let constrained = !prog.constraints.is_empty() || prog.expect_constraints.is_some();
            if constrained {
                // The first pair of roots valid on one side only.
                let at = |n| {
                    engine::interp::eval(&prog.graph, &[n], &env, width)
                        .map(|v| v[0] == engine::interp::Val::Invalid)
                };
                let moved = prog
                    .outputs
                    .iter()
                    .zip(&prog.expects)
                    .find_map(|(&s, &t)| engine::domain::Moved::of(at(s).ok()?, at(t).ok()?));
                if let Some(m) = moved {
                    println!("  {}", m.describe());
                }
            }
            print!("{}", node_values(prog, &env, width));
            match confirmed {
                Ok(v) => println!("  confirmed by the interpreter: {v}"),
                Err(e) => println!("  NOT confirmed by the interpreter: {e}"),
            }
        }
    }
}
