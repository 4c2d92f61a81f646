//! `tileproof prove --lemmas FILE`: a candidate rule that cites a lemma of
//! a candidate lemma file is proved with it, without rebuilding; a lemma
//! file that does not read is an error at its line.

use std::path::PathBuf;
use std::process::Command;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tileproof-lemmas-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn prove(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .args(["prove", "--no-cache"])
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

const RULE: &str = r"group recombine
# ((x // A) mod C) + (x // B) * C == x // A when A * C == B and C > 0
rule composed_candidate: (x // A) mod C + (x // B) * C => x // A if A * C == B && C > 0
    using my_floordiv_nest(x, A, C)
";

const LEMMA: &str = r"group candidate
# floor division nests through a positive outer divisor
lemma my_floordiv_nest(x, a, c): (x // a) // c == x // (a * c) if c > 0
";

#[test]
fn a_rule_citing_a_candidate_lemma_is_proved_with_it() {
    let d = dir("ok");
    let (rules, lemmas) = (d.join("r.rules"), d.join("l.rules"));
    std::fs::write(&rules, RULE).unwrap();
    std::fs::write(&lemmas, LEMMA).unwrap();
    let (code, out) = prove(&[
        "--rules",
        rules.to_str().unwrap(),
        "--lemmas",
        lemmas.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("lemma my_floordiv_nest: proved"), "{out}");
    assert!(out.contains("width 64: 1/1 proved"), "{out}");
    // Without the lemma file the citation names no lemma: refused, noted.
    let (_, out) = prove(&["--rules", rules.to_str().unwrap(), "--timeout", "1"]);
    assert!(out.contains("lemma refused"), "{out}");
}

#[test]
fn a_lemma_file_that_does_not_read_is_an_error_at_its_line() {
    let d = dir("bad");
    let rules = d.join("r.rules");
    std::fs::write(&rules, RULE).unwrap();
    for (text, needle) in [
        ("# c\nlemma broken(x): x +\n", "l.rules:2:"),
        (
            "# again\nlemma floordiv_nest(x, a, c): x == x\n",
            "already defined",
        ),
    ] {
        let lemmas = d.join("l.rules");
        std::fs::write(&lemmas, text).unwrap();
        let (code, out) = prove(&[
            "--rules",
            rules.to_str().unwrap(),
            "--lemmas",
            lemmas.to_str().unwrap(),
        ]);
        assert_eq!(code, 1, "{out}");
        assert!(out.contains(needle), "{text}: {out}");
    }
}
