//! `tileproof report`: a corpus's kept findings grouped by peer release and
//! cause, one report per defect; and the README's table of peer bugs and
//! the kept reports are what the command writes for `corpus/peers`.

mod common;

use common::{root, tileproof};
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    common::scratch(&format!("report-{name}"))
}

/// A kept finding of `peer` with `cause`, its class and case.
fn finding(dir: &Path, name: &str, peer: &str, cause: &str, class: &str, case: &str) {
    let text = format!(
        "# tileproof finding: oracle\n\
         # failure: value-differs (output 1) at x = 1; source (1), target (0)\n\
         # simplifier: {peer}\n\
         # backend: {class} (clang): source 1, target 0 at x = 1\n\
         # cause: {cause}\n\
         # width: 64\n\
         {case}"
    );
    std::fs::write(dir.join(name), text).unwrap();
}

#[test]
fn findings_of_one_cause_across_entries_are_one_report_of_the_smallest() {
    let dir = scratch("group");
    let (a, b) = (dir.join("morok.symbolic"), dir.join("morok.sym"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(b.join("model-only")).unwrap();
    finding(
        &a,
        "oracle-1.txt",
        "morok.symbolic 0.1.0-alpha.2",
        "transfer MUL",
        "wrong-value",
        "var x in [0, 9]\nexpr (x * 2 + 1) / 2 + x * 3\nexpect 0\n",
    );
    finding(
        &b,
        "oracle-2.txt",
        "morok.sym 0.1.0-alpha.2",
        "transfer MUL",
        "wrong-value",
        "var x in [0, 9]\nexpr x * 2 + 1\nexpect 0\n",
    );
    std::fs::write(b.join("oracle-2.rs"), "#[test]\nfn repro() {}\n").unwrap();
    // A model-only finding is tileproof's model's: listed, not reported.
    finding(
        &b.join("model-only"),
        "oracle-3.txt",
        "morok.sym 0.1.0-alpha.2",
        "rule alu_folding_dsl_patterns",
        "model-only",
        "var x in [0, 9]\nexpr x - x\nexpect 0\n",
    );
    let out_dir = dir.join("reports");
    let (code, out, err) = tileproof(&[
        "report",
        dir.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let reports: Vec<PathBuf> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(reports.len(), 1, "{reports:?}");
    let text = std::fs::read_to_string(&reports[0]).unwrap();
    assert!(
        text.starts_with("# [morok 0.1.0-alpha.2] range analysis: the bounds of `MUL`"),
        "{text}"
    );
    assert!(text.contains("morok.sym, morok.symbolic"), "{text}");
    // The smallest input is shown, with its reproducer inline.
    assert!(
        text.contains("expr x * 2 + 1\n# the peer's answer: 0\n"),
        "{text}"
    );
    assert!(
        text.contains("```rust\n#[test]\nfn repro() {}\n```"),
        "{text}"
    );
    assert!(text.contains("2 findings kept (2 wrong-value)"), "{text}");
    // The other kept findings are listed with the peer's answer to each.
    assert!(
        text.contains("oracle-1.txt`: `(x * 2 + 1) / 2 + x * 3`, answered `0`\n"),
        "{text}"
    );
    // The table links the report; the model-only cause is not in it.
    assert!(
        out.contains("| morok 0.1.0-alpha.2 | range analysis |"),
        "{out}"
    );
    assert!(!out.contains("alu_folding"), "{out}");
    assert!(
        err.contains("alu_folding_dsl_patterns: model-only only, not reported"),
        "{err}"
    );
}

#[test]
fn a_finding_without_a_cause_line_is_named_and_the_exit_is_2() {
    let dir = scratch("uncaused");
    std::fs::write(
        dir.join("oracle-1.txt"),
        "# tileproof finding: oracle\n# simplifier: tvm.simplify 0.27.0.post1\nvar x in [0, 1]\nexpr x\n",
    )
    .unwrap();
    let (code, out, err) = tileproof(&["report", dir.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("oracle-1.txt: no `# cause:` line"), "{err}");
}

/// The README's table of peer bugs is `report`'s for the kept corpus, and
/// the kept reports are the ones it writes.
#[test]
fn the_readme_table_and_the_kept_reports_are_what_report_writes() {
    let dir = scratch("kept");
    let (code, out, err) = tileproof(&["report", "corpus/peers", "--out", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "every kept finding names its cause:\n{err}");
    let table = out.replace(dir.to_str().unwrap(), "corpus/peers/reports");
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(
        readme.contains(table.trim_end()),
        "README.md's table of peer bugs is stale: paste the output of \
         `tileproof report corpus/peers --out corpus/peers/reports`:\n{table}"
    );
    let kept = root().join("corpus/peers/reports");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut shipped: Vec<String> = std::fs::read_dir(&kept)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .collect();
    shipped.sort();
    assert_eq!(names, shipped, "corpus/peers/reports is stale");
    for n in &names {
        let now = std::fs::read_to_string(dir.join(n)).unwrap();
        let was = std::fs::read_to_string(kept.join(n)).unwrap();
        assert_eq!(now, was, "corpus/peers/reports/{n} is stale");
    }
}
