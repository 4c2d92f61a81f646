//! The README's and the guides' worked examples (the README's intro trace,
//! docs/guide/prove-a-pattern.md, docs/guide/reproduce.md and
//! docs/guide/xla-maps.md) are
//! reproducible: the files they `cat` are shipped in `docs/examples/` with
//! exactly the contents shown, and each command they run gives the exit
//! status and the key lines shown. Transcripts that are deterministic
//! (traces, replays, the finding file) must match line for line; of the
//! others (`prove`, `fuzz`: Z3's values, times, case counts vary) the lines
//! that do not vary must appear both in the page and in the output. When
//! one of these tests fails after a change to the engine or to an output
//! format, run the command from the repository root and paste its standard
//! output into the page. And every repository path the README and the
//! docs name exists (`every_path_the_docs_name_exists`).
//!
//! The gate command the first guide mentions is not run here (it takes
//! tens of seconds; tests/gate_cli.rs covers a candidate rule in the gate).

mod common;

use common::{root, tileproof};
use std::path::{Path, PathBuf};

/// The README followed by the guides (docs/guide/*.md, in name order):
/// the text the transcripts are looked up in, each `$ COMMAND` once.
fn readme() -> String {
    let mut text = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut guides: Vec<PathBuf> = std::fs::read_dir(root().join("docs/guide"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    guides.sort();
    for g in guides {
        text.push('\n');
        text.push_str(&std::fs::read_to_string(g).unwrap());
    }
    text
}

/// A directory of its own for one test, emptied first.
fn scratch(name: &str) -> PathBuf {
    common::scratch(&format!("readme-{name}"))
}

/// The lines the README shows after `$ COMMAND` (up to the next command or
/// the end of the code block), without trailing blank lines.
fn transcript(readme: &str, command: &str) -> Vec<String> {
    let prompt = format!("$ {command}");
    let mut lines = readme.lines();
    assert!(
        lines.any(|l| l == prompt),
        "README.md and docs/guide/ no longer show `{prompt}`"
    );
    let mut shown: Vec<String> = lines
        .take_while(|l| !l.starts_with("$ ") && !l.starts_with("```"))
        .map(str::to_string)
        .collect();
    while shown.last().is_some_and(|l| l.is_empty()) {
        shown.pop();
    }
    shown
}

/// `out`'s lines, with the scratch corpus directory `dir` written as the
/// README's `findings`.
fn lines_as_shown(out: &str, dir: &Path) -> Vec<String> {
    out.replace(&dir.display().to_string(), "findings")
        .lines()
        .map(str::to_string)
        .collect()
}

/// Whether the README's prose says `phrase` (however its lines are
/// wrapped).
fn says(readme: &str, phrase: &str) -> bool {
    let words = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    words(readme).contains(&words(phrase))
}

/// Asserts that `line` is in the README's transcript and in the output.
fn shown_and_printed(shown: &[String], out: &str, line: &str) {
    assert!(
        shown.iter().any(|l| l == line),
        "the docs' transcript lacks `{line}`:\n{}",
        shown.join("\n")
    );
    assert!(
        out.lines().any(|l| l == line),
        "the output lacks `{line}` (README.md shows it):\n{out}"
    );
}

#[test]
fn the_shipped_example_files_are_the_ones_the_readme_shows() {
    let readme = readme();
    for name in [
        "tile.rules",
        "tile2.rules",
        "tile3.rules",
        "broken.rules",
        "double.rules",
    ] {
        let file = std::fs::read_to_string(root().join("docs/examples").join(name)).unwrap();
        let shown = transcript(&readme, &format!("cat docs/examples/{name}"));
        assert_eq!(
            shown.join("\n") + "\n",
            file,
            "the docs' `cat docs/examples/{name}` is not the shipped file"
        );
    }
    // The intro shows tiled.txt without a `cat`: it is its first text block.
    let tiled = std::fs::read_to_string(root().join("docs/examples/tiled.txt")).unwrap();
    assert!(
        readme.contains(&format!("```text\n{tiled}```\n")),
        "README.md's intro no longer shows docs/examples/tiled.txt as it is"
    );
}

#[test]
fn the_intro_trace_of_tiled_txt_is_what_simplify_prints() {
    let cmd = "tileproof simplify --trace docs/examples/tiled.txt";
    let (code, out, err) = tileproof(&cmd.split(' ').collect::<Vec<_>>()[1..]);
    assert_eq!(code, 0, "{out}{err}");
    // The point of the example: both roots reduced as the intro says.
    assert!(
        out.ends_with("expr where(r0 < 30, r0 * 4 + r1, invalid)\nexpr r0\n"),
        "{out}"
    );
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        transcript(&readme(), cmd),
        "README.md's intro trace is out of date"
    );
}

#[test]
fn an_unguarded_tile_rule_fails_at_every_width_on_a_masked_lane() {
    let readme = readme();
    let cmd = "tileproof prove --rules docs/examples/tile.rules";
    let shown = transcript(&readme, cmd);
    let (code, out, err) = tileproof(&["prove", "--rules", "docs/examples/tile.rules"]);
    assert_eq!(code, 2, "a failed rule exits 2:\n{out}{err}");
    for w in [8, 16, 32, 64] {
        assert!(
            out.contains(&format!("FAILED floordiv_tile at width {w}\n")),
            "{out}"
        );
        shown_and_printed(&shown, &out, &format!("width {w:>2}: 0/1 proved, 1 failed"));
    }
    for line in [
        "counterexample to floordiv_tile at width 8: validity-differs",
        "  b      = invalid  index invalid (range [0, 0])",
        "    (a * C + b) // C                         = invalid",
        "  confirmed by the interpreter: validity-differs (source invalid, target 0)",
        "width-generic: 0 of 1 rule proved for every width >= 8 by one query; width by width: 1: the generic query has a model at some MAX",
    ] {
        shown_and_printed(&shown, &out, line);
    }
}

#[test]
fn a_rule_that_undoes_a_builtin_one_fails_prove_naming_the_cycle() {
    let readme = readme();
    let cmd = "tileproof prove --rules docs/examples/double.rules --width 8";
    let shown = transcript(&readme, cmd);
    let (code, out, err) = tileproof(&cmd.split(' ').collect::<Vec<_>>()[1..]);
    assert_eq!(code, 2, "a rule that does not stop exits 2:\n{out}{err}");
    for line in [
        "width  8: 1/1 proved (1 by width-generic bounded-integer)",
        "DOES NOT DECREASE double: size: `a` occurs twice on the right and once on the left",
        "CYCLE: double -> add_self -> double on `a * 2` (loops on var v0 in [0, 7]; expr v0 * 2)",
        "termination: 0 of 1 rule decrease the order, 1 do not, 2 cycles that loop",
    ] {
        shown_and_printed(&shown, &out, line);
    }
}

#[test]
fn requiring_a_valid_offset_gets_a_negative_offset_counterexample() {
    let readme = readme();
    let cmd = "tileproof prove --rules docs/examples/tile2.rules --width 8";
    let shown = transcript(&readme, cmd);
    let (code, out, err) = tileproof(&cmd.split(' ').collect::<Vec<_>>()[1..]);
    assert_eq!(code, 2, "a failed rule exits 2:\n{out}{err}");
    for line in [
        "FAILED floordiv_tile at width 8",
        "counterexample to floordiv_tile at width 8: value-differs",
        "width  8: 0/1 proved, 1 failed",
    ] {
        shown_and_printed(&shown, &out, line);
    }
    // Z3 picks the values; the offset is negative whichever it picks.
    let b: i64 = out
        .lines()
        .find_map(|l| l.strip_prefix("  b      = "))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no value of b:\n{out}"));
    assert!(b < 0, "{out}");
    assert!(
        out.contains("confirmed by the interpreter: value-differs"),
        "{out}"
    );
}

#[test]
fn the_guarded_tile_rule_is_proved_by_one_width_generic_query() {
    let readme = readme();
    let cmd = "tileproof prove --rules docs/examples/tile3.rules";
    let shown = transcript(&readme, cmd);
    // A cache of its own: cold on the first run, as the README's is.
    let dir = scratch("tile3-cache");
    let cache = dir.to_str().unwrap();
    let prove = || {
        tileproof(&[
            "prove",
            "--rules",
            "docs/examples/tile3.rules",
            "--cache-dir",
            cache,
        ])
    };
    let (code, out, err) = prove();
    assert_eq!(code, 0, "{out}{err}");
    for w in [8, 16, 32, 64] {
        shown_and_printed(
            &shown,
            &out,
            &format!("width {w:>2}: 1/1 proved (1 by width-generic bounded-integer)"),
        );
    }
    shown_and_printed(
        &shown,
        &out,
        "width-generic: 1 of 1 rule proved for every width >= 8 by one query",
    );
    assert!(out.contains("; 0 of 4 from the cache;"), "{out}");
    // The README says so of a second run.
    let (code, out, err) = prove();
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("; 4 of 4 from the cache;"), "{out}");
    assert!(says(
        &readme,
        "(Run again, it says `4 of 4 from the cache`.)"
    ));
}

/// Workflow 4 end to end: the campaign with the broken rule finds the
/// README's case, whose file is the one shown; it replays as a failure with
/// the broken rule and clean without it, with the traces shown; and `prove`
/// refutes the broken rule itself.
#[test]
fn the_broken_rules_finding_is_found_replays_and_is_fixed_by_the_guard() {
    let readme = readme();
    // The README's `--corpus findings`, in a scratch directory (outputs
    // are compared with its path written as `findings`).
    let dir = scratch("findings");
    let corpus = dir.to_str().unwrap();
    let (code, out, err) = tileproof(&[
        "fuzz",
        "--rules",
        "docs/examples/broken.rules",
        "--seed",
        "1",
        "--generator",
        "tiled",
        "--cases",
        "200",
        "--max-causes",
        "1",
        "--corpus",
        corpus,
    ]);
    assert_eq!(code, 2, "a campaign with findings exits 2:\n{out}{err}");
    let shown = transcript(
        &readme,
        "tileproof fuzz --rules docs/examples/broken.rules --seed 1 --generator tiled --cases 200 --max-causes 1 --corpus findings",
    );
    let out = lines_as_shown(&out, &dir).join("\n");
    for line in [
        "  oracle in case 1 (tiled): findings/oracle-1f1c867eb5.txt",
        "    value-differs (output 1) at r0 = 1; source (0), target (3) [exhaustive, failed at point 2 of 2]",
    ] {
        shown_and_printed(&shown, &out, line);
    }

    let finding = dir.join("oracle-1f1c867eb5.txt");
    let text = std::fs::read_to_string(&finding)
        .unwrap_or_else(|e| panic!("{}: {e}\n{out}", finding.display()));
    assert_eq!(
        lines_as_shown(&text, &dir),
        transcript(&readme, "cat findings/oracle-1f1c867eb5.txt"),
        "docs/guide/reproduce.md's finding file is out of date"
    );

    let finding = finding.to_str().unwrap();
    let broken = "docs/examples/broken.rules";
    for (args, status) in [
        (vec!["replay", "--rules", broken, finding], 2),
        (vec!["simplify", "--trace", "--rules", broken, finding], 0),
        (vec!["replay", finding], 0),
        (vec!["simplify", "--trace", finding], 0),
    ] {
        let (code, out, err) = tileproof(&args);
        assert_eq!(code, status, "{args:?}:\n{out}{err}");
        let cmd = format!("tileproof {}", args.join(" ")).replace(corpus, "findings");
        assert_eq!(
            lines_as_shown(&out, &dir),
            transcript(&readme, &cmd),
            "the docs' `{cmd}` is out of date"
        );
    }

    // The README's claim that prove refutes the broken rule at every width.
    let (code, out, err) = tileproof(&["prove", "--rules", broken]);
    assert_eq!(code, 2, "{out}{err}");
    for w in [8, 16, 32, 64] {
        assert!(
            out.contains(&format!(
                "counterexample to mod_in_range at width {w}: value-differs"
            )),
            "{out}"
        );
    }
    assert!(says(
        &readme,
        "`tileproof prove --rules docs/examples/broken.rules` refutes the rule itself at every width"
    ));
}

#[test]
fn the_xla_guide_transcripts_are_what_the_commands_print() {
    let readme = readme();
    for map in ["xla-slice.map", "xla-negdiv.map"] {
        let shown = transcript(&readme, &format!("cat docs/examples/{map}"));
        let file = std::fs::read_to_string(root().join("docs/examples").join(map)).unwrap();
        assert_eq!(
            shown.join("\n") + "\n",
            file,
            "docs/guide/xla-maps.md shows another {map}"
        );
    }
    for cmd in [
        "tileproof simplify docs/examples/xla-slice.map",
        "tileproof simplify docs/examples/xla-negdiv.map",
        "tileproof check docs/examples/xla-slice.map",
        "tileproof compose docs/examples/xla-reshape2.map docs/examples/xla-reshape1.map",
    ] {
        let (code, out, err) = tileproof(&cmd.split(' ').collect::<Vec<_>>()[1..]);
        assert_eq!(code, 0, "{cmd}: {out}{err}");
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            transcript(&readme, cmd),
            "docs/guide/xla-maps.md: `{cmd}` prints otherwise now"
        );
    }
}

/// The Markdown pages of the repository: the READMEs and docs/ (not the
/// build's or the venv's).
fn markdown_pages(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if p.is_dir() {
            if name != "target" && !name.starts_with('.') {
                markdown_pages(&p, out);
            }
        } else if name.ends_with(".md") {
            out.push(p);
        }
    }
}

/// Where `tileproof report` writes the kept reports, and how a link to
/// one starts.
const REPORTS: &str = "corpus/peers/reports";
const REPORTS_LINK: &str = "](corpus/peers/reports/";

/// The repository paths a page names: each word of its text (code blocks,
/// inline code and prose alike) that starts with a top-level folder of the
/// repository, and each relative link target, resolved from the page's
/// folder. Placeholders (`corpus/peers/NAME/`, globs, `...`) are not paths.
fn paths_named(page: &Path, text: &str, top: &[String]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let placeholder = |p: &str| {
        p.contains(['*', '<', '$', '{'])
            || p.contains("...")
            || p.split('/')
                .any(|seg| seg.len() > 1 && seg.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
    };
    // A row of the table of peer bugs quotes the peer's own paths (TVM's
    // `src/ir/expr.cc`): only its link is ours (report_cli checks the rows
    // are what `tileproof report` writes).
    let ours: String = text
        .lines()
        .filter(|l| !(l.starts_with('|') && l.contains(REPORTS_LINK)))
        .collect::<Vec<_>>()
        .join("\n");
    for word in ours.split(|c: char| c.is_whitespace() || "`'\"(),;=|[]".contains(c)) {
        let word = word.split(':').next().unwrap().split('#').next().unwrap();
        let word = word.trim_end_matches(['.', ',', ':', ';', '!', '?']);
        let Some((first, _)) = word.split_once('/') else {
            continue;
        };
        if top.iter().any(|t| t == first) && !placeholder(word) {
            out.push(root().join(word));
        }
    }
    let dir = page.parent().unwrap();
    for (i, _) in text.match_indices("](") {
        let rest = &text[i + 2..];
        let target = &rest[..rest.find(')').unwrap_or(rest.len())];
        let target = target.split('#').next().unwrap();
        if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        if !placeholder(target) {
            out.push(dir.join(target));
        }
    }
    out
}

/// A page that names a file that moved or never existed sends its reader
/// nowhere: every path the README and docs name must exist.
#[test]
fn every_path_the_docs_name_exists() {
    // The folders a path may start with: the repository's own, not what a
    // run writes (target/, findings/) or a venv.
    let top: Vec<String> = std::fs::read_dir(root())
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| {
            n != "target"
                && (!n.starts_with('.')
                    || [".ci", ".github", ".clusterfuzzlite"].contains(&n.as_str()))
        })
        .collect();
    // What .gitignore anchors at the root is what a run writes
    // (`fuzz/artifacts/`, `fuzz/parse.dict`): named by the commands that
    // write it, not shipped.
    let written: Vec<String> = std::fs::read_to_string(root().join(".gitignore"))
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix('/'))
        .map(|l| l.trim_end_matches('/').to_string())
        .collect();
    let is_written = |p: &Path| {
        p.strip_prefix(root())
            .is_ok_and(|rel| written.iter().any(|w| rel.starts_with(w)))
    };
    let mut pages = Vec::new();
    markdown_pages(root(), &mut pages);
    pages.sort();
    assert!(pages.len() > 10, "found only {pages:?}");
    let mut missing = Vec::new();
    for page in &pages {
        // A report `tileproof report` writes is the peer's text (its paths,
        // its code): report_cli checks each is what the command writes.
        if page.starts_with(root().join(REPORTS)) {
            continue;
        }
        let text = std::fs::read_to_string(page).unwrap();
        for p in paths_named(page, &text, &top) {
            if !p.exists() && !is_written(&p) {
                missing.push(format!(
                    "{} names {}",
                    page.strip_prefix(root()).unwrap().display(),
                    p.strip_prefix(root()).unwrap_or(&p).display()
                ));
            }
        }
    }
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "paths that do not exist:\n{}",
        missing.join("\n")
    );
}
