//! What the command-line tests share: the repository root, a scratch
//! directory per test, and `tileproof` run from the root.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root (where the README's commands run).
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A directory of its own for one test (`name`, unique across the test
/// files), emptied first.
pub fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `tileproof ARGS` run from the root: its exit status, standard output
/// and standard error.
pub fn tileproof(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .current_dir(root())
        .args(args)
        .output()
        .expect("tileproof runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The processes whose environment carries `TILEPROOF_TEST_MARK=mark`: a
/// test sets it on the command it runs, and the solver processes that
/// command starts inherit it.
#[allow(dead_code, reason = "only the deadline tests look for processes")]
pub fn marked(mark: &str) -> Vec<u32> {
    let needle = format!("TILEPROOF_TEST_MARK={mark}");
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|v| v == needle.as_bytes()))
        })
        .collect()
}

/// The processes still marked `mark` ([`marked`]) two seconds after the
/// command ended: a worker at the end of its input exits, a killed one is
/// reaped, so none should be left.
#[allow(dead_code, reason = "only the deadline tests look for processes")]
pub fn left_running(mark: &str) -> Vec<u32> {
    let end = std::time::Instant::now() + std::time::Duration::from_secs(2);
    while !marked(mark).is_empty() && std::time::Instant::now() < end {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    marked(mark)
}
