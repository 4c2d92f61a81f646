//! `tileproof simplify` on a generated 10^5-term chain (a large generated
//! kernel is legitimate input): it exits 0 with the folded result, where it
//! used to abort with a stack overflow.

use std::process::Command;

#[test]
fn simplify_reads_and_folds_a_100000_term_chain() {
    let n = 100_000;
    let dir = std::env::temp_dir().join(format!("tileproof-deep-chain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("chain.txt");
    let chain = vec!["x"; n].join(" + ");
    std::fs::write(&path, format!("var x in [0, 100]\nexpr {chain}\n")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .arg("simplify")
        .arg(&path)
        .output()
        .expect("tileproof runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout.trim(), format!("expr x * {n}"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
