//! Every command on a generated 10^5-term chain (a large generated kernel
//! is legitimate input): `simplify` folds it, `lower` checks its lowering
//! with the JIT, `check` decides it by enumeration past the SMT limit (and
//! lists a counterexample's nodes in bounded space), `replay` replays it.
//! Each used to abort (stack overflow), run out of memory (Z3, Cranelift's
//! register allocator) or take quadratic time (printing every node).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const N: usize = 100_000;

struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("tileproof-deep-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }

    fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run(args: &[&str], path: &Path) -> (Option<i32>, String, String) {
    let out: Output = Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .args(args)
        .arg(path)
        .output()
        .expect("tileproof runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `x + (x*8 + y)//4 + x + ...`: N terms, equal to `x * (3N/2) + y//4 * (N/2)`.
fn tiled_chain(expect_extra: i64) -> String {
    let terms: Vec<&str> = (0..N)
        .map(|i| if i % 2 == 1 { "(x * 8 + y) / 4" } else { "x" })
        .collect();
    format!(
        "var x in [0, 100]\nvar y in [0, 7]\nexpr {}\nexpect x * {} + y / 4 * {}\n",
        terms.join(" + "),
        3 * N / 2,
        N as i64 / 2 + expect_extra
    )
}

#[test]
fn simplify_reads_and_folds_a_100000_term_chain() {
    let dir = Dir::new("simplify");
    let chain = vec!["x"; N].join(" + ");
    let path = dir.file("chain.txt", &format!("var x in [0, 100]\nexpr {chain}\n"));
    let (code, stdout, stderr) = run(&["simplify"], &path);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout.trim(), format!("expr x * {N}"), "{stderr}");
}

#[test]
fn check_decides_a_chain_past_the_smt_limit_by_enumeration() {
    let dir = Dir::new("check");
    let path = dir.file("chain.txt", &tiled_chain(0));
    let (code, stdout, stderr) = run(&["check"], &path);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("(exhaustive, JIT)"), "{stdout}");
}

#[test]
fn check_shows_a_counterexample_on_a_chain_in_bounded_space() {
    let dir = Dir::new("check-bad");
    let path = dir.file("chain.txt", &tiled_chain(1));
    let (code, stdout, stderr) = run(&["check"], &path);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stdout.starts_with("counterexample at width 64 (exhaustive, JIT): value-differs"),
        "{}",
        &stdout[..200.min(stdout.len())]
    );
    assert!(stdout.contains("more nodes"), "the node list is cut");
    assert!(stdout.len() < 1 << 20, "{} bytes of output", stdout.len());
}

#[test]
fn check_says_why_a_chain_over_a_wide_domain_is_unknown() {
    let dir = Dir::new("check-wide");
    let text = tiled_chain(0).replace("var x in [0, 100]", "var x in [0, 100000000000]");
    let path = dir.file("chain.txt", &text);
    let (code, stdout, stderr) = run(&["check"], &path);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stdout.contains("over the SMT limit") && stdout.contains("too many points to enumerate"),
        "{stdout}"
    );
}

#[test]
fn lower_checks_a_large_chain_over_few_points_with_the_interpreter() {
    // Compiling 10^5 terms costs more than interpreting them at 168 points.
    let dir = Dir::new("lower");
    let text = tiled_chain(0).replace("var x in [0, 100]", "var x in [0, 20]");
    let path = dir.file("chain.txt", &text);
    let (code, stdout, stderr) = run(&["lower"], &path);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains(
            "# checked by the interpreter against the source: refines (exhaustive, 168 points)"
        ),
        "{stdout}"
    );
}

#[test]
fn lower_checks_a_large_chain_over_many_points_with_the_jit() {
    let dir = Dir::new("lower-wide");
    let text = tiled_chain(0).replace("var x in [0, 100]", "var x in [0, 9999]");
    let path = dir.file("chain.txt", &text);
    let (code, stdout, stderr) = run(&["lower"], &path);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains(
            "# checked by the JIT against the source: refines (exhaustive, 80000 points)"
        ),
        "{stdout}"
    );
}

#[test]
fn replay_replays_a_chain() {
    let dir = Dir::new("replay");
    let path = dir.file("chain.txt", &tiled_chain(0));
    let (code, stdout, stderr) = run(&["replay", "--no-smt"], &path);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("(JIT: exhaustive, 808 points; no SMT)"),
        "{stdout}"
    );
}
