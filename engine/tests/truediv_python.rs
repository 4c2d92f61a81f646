//! The engine's `ceil_truediv`/`floor_truediv`/`trunc_truediv` against
//! CPython itself (`python3`), on the pairs `truediv_python.py` prints:
//! around 2^53 and up to 2^126, ties, negative operands.

use engine::truediv::{truediv, Round};
use std::process::Command;

#[test]
fn rounded_true_division_is_what_python_computes() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let out = Command::new("python3")
        .arg(format!("{dir}/tests/truediv_python.py"))
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut n = 0;
    for line in text.lines() {
        let v: Vec<i128> = line.split(' ').map(|w| w.parse().unwrap()).collect();
        let [a, b, ceil, floor, trunc] = v[..] else {
            panic!("bad line {line}")
        };
        for (r, want) in [
            (Round::Ceil, ceil),
            (Round::Floor, floor),
            (Round::Trunc, trunc),
        ] {
            assert_eq!(truediv(a, b, r), Some(want), "{r:?} of {a} / {b}");
        }
        n += 1;
    }
    assert!(n > 10_000, "only {n} pairs");
}
