//! `tileproof prove --timeout 1e-9`: accepted, and every query of the
//! hard rules (verify/tests/hard.rules) is unknown at once (exit 2), not
//! solved for seconds.

use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn a_tiny_timeout_makes_every_query_unknown_quickly() {
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .args([
            "prove",
            "--no-cache",
            "--timeout",
            "1e-9",
            "--width",
            "8,64",
        ])
        .args(["--rules", "verify/tests/hard.rules"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let took = start.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert_eq!(stdout.matches("UNKNOWN ").count(), 8, "{stdout}");
    assert!(stdout.contains("width  8: 0/4 proved"), "{stdout}");
    // The old watchdog let such a run take seconds to minutes.
    assert!(took < Duration::from_secs(10), "{took:?}");
}

/// `prove --cross-check` where cvc5 does not run is an error naming it
/// (exit 1), never a run that silently skips the cross-check.
#[test]
fn cross_check_without_cvc5_is_an_error_naming_it() {
    let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .args(["prove", "--no-cache", "--cross-check", "--width", "8"])
        .args(["--rules", "verify/tests/hard.rules"])
        .env("TILEPROOF_CVC5", "/nonexistent/cvc5")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cvc5") && stderr.contains("/nonexistent/cvc5"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "nothing was proved");
}
