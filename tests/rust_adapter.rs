//! A peer written in Rust with the `tileproof-adapter` crate is tested like
//! any other: the toy example (adapters/rust/examples/toy.rs) under a
//! fixed-seed campaign. (A peer's panic as an answer: adapters/rust/tests.)
use std::path::PathBuf;
use std::process::Command;

/// The toy adapter, built beside this test by `cargo test` (examples of the
/// workspace's packages are built with their tests).
fn toy() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(|d| d.parent()).unwrap();
    let bin = profile_dir.join("examples/toy");
    assert!(
        bin.exists(),
        "{} is missing: cargo build --release -p tileproof-adapter --example toy",
        bin.display()
    );
    bin
}

#[test]
fn a_rust_adapter_answers_a_campaign_and_its_sound_folds_pass() {
    let corpus = std::env::temp_dir().join(format!("tileproof-toy-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .args([
            "fuzz",
            "--seed",
            "3",
            "--cases",
            "200",
            "--jobs",
            "1",
            "--simplifier",
        ])
        .arg(toy())
        .arg("--corpus")
        .arg(&corpus)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    let _ = std::fs::remove_dir_all(&corpus);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("testing toy 1.0"), "{text}");
}
