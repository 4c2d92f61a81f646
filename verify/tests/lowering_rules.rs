//! The floor-to-truncating lowering rules are proved (width 8 here, bit
//! exact; `tileproof prove --rules engine/rules/lower_divmod.rules` does all
//! four widths).

use engine::rules::load_lowering;
use std::time::Duration;
use verify::prove::{prove_rule, Options, ProofVerdict};

#[test]
fn floor_to_truncating_lowering_rules_are_proved_at_width_8() {
    let set = load_lowering().unwrap();
    let opts = Options {
        widths: vec![8],
        timeout: Duration::from_secs(30),
        cache: None,
        smt2_dir: None,
        seed: 0,
        ..Options::default()
    };
    for rule in set.rules() {
        let r = prove_rule(rule, 8, &opts);
        assert!(
            matches!(r.verdict, ProofVerdict::Proved),
            "{}: {:?}",
            rule.name,
            r.verdict
        );
    }
}
