//! The range analysis is proved sound op by op: every transfer function,
//! for every operand dtype, at 8, 16, 32 and 64 bits, after the
//! monotonicity and remainder lemmas it rests on (`tileproof prove
//! --ranges` runs the same).

use std::time::Duration;
use verify::ranges::{prove_ranges, signatures};
use verify::verdict::VerdictKind;

#[test]
fn every_transfer_function_is_sound_at_every_width() {
    assert!(signatures().len() >= 60, "the signature list lost ops");
    let report = prove_ranges(&[8, 16, 32, 64], Duration::from_secs(30), &|| {});
    let bad: Vec<String> = report
        .lemmas
        .iter()
        .filter(|l| l.2 != VerdictKind::Proved)
        .map(|l| format!("lemma {} {}: {}", l.0, l.1, l.2))
        .chain(
            report
                .results
                .iter()
                .filter(|r| r.verdict != VerdictKind::Proved)
                .map(|r| {
                    format!(
                        "{} {} at {}: {} {:?}",
                        r.op, r.signature, r.width, r.verdict, r.detail
                    )
                }),
        )
        .collect();
    println!(
        "{} lemmas, {} transfer functions",
        report.lemmas.len(),
        report.results.len()
    );
    assert!(bad.is_empty(), "not proved:\n{}", bad.join("\n"));
}
