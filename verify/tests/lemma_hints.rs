//! Lemma hints (`using`): a lemma is assumed in a rule's query only once it
//! is proved on its own; a false lemma is refused (never assumed), so a
//! wrong rule citing it is still refuted; a rule that cites a lemma it does
//! not need (proved or not) still proves without it; a rule that needs a
//! lemma is proved with it and not without it.

use engine::rules::RuleSet;
use std::sync::Arc;
use std::time::Duration;
use verify::lemma::Lemmas;
use verify::prove::{prove_rule, Options, ProofVerdict};
use verify::verdict::VerdictKind;

const LEMMAS: &str = "\
# a false lemma: not every integer is 0
lemma bogus(x): x == 0
# a true one: x + 0 == x
lemma add_zero_int(x): x + 0 == x
# floor division nests through a positive outer divisor
lemma floordiv_nest(x, a, c): (x // a) // c == x // (a * c) if c > 0
";

fn opts(lemmas: Lemmas, widths: &[u32]) -> Options {
    Options {
        widths: widths.to_vec(),
        timeout: Duration::from_secs(10),
        lemmas: Arc::new(lemmas),
        ..Options::default()
    }
}

fn rules(text: &str) -> RuleSet {
    RuleSet::parse("test.rules", text).expect("the test rules parse")
}

fn lemmas() -> Lemmas {
    Lemmas::parse("test.lemmas", LEMMAS).expect("the test lemmas parse")
}

#[test]
fn a_false_lemma_is_refused_and_the_wrong_rule_citing_it_is_still_refuted() {
    let o = opts(lemmas(), &[8, 32]);
    let r = o.lemmas.result("bogus", o.timeout, None);
    assert_eq!(r.verdict, VerdictKind::Failed, "{r:?}");
    assert!(!r.proved());
    // Were `x == 0` assumed for every x, `x + 1 == 1` would follow and the
    // rule would be "proved"; the lemma is refused, so the rule is judged
    // on its own and refuted (at 32 bits the query is in integers, where
    // lemmas are assumed; at 8 in bitvectors).
    let set = rules(
        "# wrong: x is not always 0\nrule wrong_zero: x + 1 => 1 if valid(x) using bogus(x)\n",
    );
    let rule = set.rule("wrong_zero").unwrap();
    for w in [8, 32] {
        let res = prove_rule(rule, w, &o);
        assert!(
            matches!(res.verdict, ProofVerdict::Failed { .. }),
            "at {w}: {:?}",
            res.verdict
        );
        if w == 32 {
            assert!(
                res.notes
                    .iter()
                    .any(|n| n.contains("lemma refused") && n.contains("bogus")),
                "{:?}",
                res.notes
            );
        }
    }
    // A name that is no lemma is refused the same way.
    let r = o.lemmas.result("no_such_lemma", o.timeout, None);
    assert_eq!(r.verdict, VerdictKind::Refused, "{r:?}");
}

#[test]
fn a_rule_citing_lemmas_it_does_not_need_still_proves() {
    let o = opts(lemmas(), &[8, 16, 32, 64]);
    let set = rules(
        "# x + 0 == x, citing a true lemma and a false one\n\
         rule add_zero_cited: x + 0 => x using add_zero_int(x), bogus(x)\n\
         # x + 0 == x (automatic instantiation)\n\
         rule add_zero_auto: x + 0 => x using add_zero_int\n\
         # x + 0 == x (no lemma)\n\
         rule add_zero_plain: x + 0 => x\n",
    );
    for rule in set.rules() {
        for w in [8, 16, 32, 64] {
            let res = prove_rule(rule, w, &o);
            assert!(
                matches!(res.verdict, ProofVerdict::Proved),
                "{} at {w}: {:?} {:?}",
                rule.name,
                res.verdict,
                res.notes
            );
        }
    }
    let cited = set.rule("add_zero_cited").unwrap();
    let res = prove_rule(cited, 32, &o);
    assert!(
        res.notes.iter().any(|n| n.contains("bogus")),
        "the refused lemma is reported: {:?}",
        res.notes
    );
}

/// The other direction: the lemma is what proves the rule. Floor division
/// nests through a positive outer divisor, (x // A) // C == x // (A * C),
/// which Z3 4.8.12's nonlinear arithmetic does not find on its own in the
/// rule's query (the rule once waited outside the engine for that); with
/// `floordiv_nest` cited (and proved) the rule is proved.
#[test]
fn a_rule_that_needs_a_lemma_is_proved_with_it_only() {
    const RULE: &str = "(x // A) mod C + (x // B) * C => x // A if A * C == B && C > 0";
    let with = rules(&format!(
        "# composed floor split\nrule composed_with: {RULE} using floordiv_nest(x, A, C)\n"
    ));
    let without = rules(&format!(
        "# composed floor split\nrule composed_without: {RULE}\n"
    ));
    let o = opts(lemmas(), &[32]);
    let r = o.lemmas.result("floordiv_nest", o.timeout, None);
    assert!(r.proved(), "{r:?}");
    let r = prove_rule(with.rule("composed_with").unwrap(), 32, &o);
    assert!(matches!(r.verdict, ProofVerdict::Proved), "{:?}", r.verdict);
    let o = Options {
        timeout: Duration::from_secs(2),
        ..o
    };
    let r = prove_rule(without.rule("composed_without").unwrap(), 32, &o);
    assert!(
        matches!(r.verdict, ProofVerdict::Unknown { .. }),
        "{:?}",
        r.verdict
    );
}

#[test]
fn lemma_files_are_checked_when_read() {
    for (text, needle) in [
        ("# no params\nlemma a(x): y == 0\n", "not a parameter"),
        ("lemma a(x): x == x\n", "no comment"),
        (
            "# a\nlemma a(x): x == x using b(x)\n# b\nlemma b(x): x == x\n",
            "not a lemma written above it",
        ),
        (
            "# a\nlemma a(x): x == x\n# a again\nlemma a(y): y == y\n",
            "already defined",
        ),
    ] {
        let e = Lemmas::parse("t.lemmas", text).expect_err(text).to_string();
        assert!(
            e.starts_with("t.lemmas:") && e.contains(needle),
            "{text}: {e}"
        );
    }
    let e = RuleSet::parse("t.rules", "# r\nrule r: x + 0 => x using l(y)\n").expect_err("y");
    assert!(e.to_string().contains("not a pattern variable"), "{e}");
}

/// Every lemma a built-in rule cites is defined in
/// verify/lemmas/nonlinear.rules, and those the built-in rules cite are
/// proved (else those rules would be proved without them, or not at all).
#[test]
fn every_lemma_a_rule_cites_exists_and_the_builtin_ones_are_proved() {
    let lemmas = verify::lemma::builtin();
    for rule in engine::rules::builtin().rules() {
        for u in &rule.lemmas {
            assert!(
                lemmas.get(&u.name).is_some(),
                "{} cites `{}`, which verify/lemmas/nonlinear.rules does not define",
                rule.name,
                u.name
            );
        }
    }
    let mut cited = 0;
    for rule in engine::rules::builtin().rules() {
        for u in &rule.lemmas {
            cited += 1;
            let r = lemmas.result(&u.name, Duration::from_secs(10), None);
            assert!(r.proved(), "{} cites {r:?}", rule.name);
        }
    }
    assert!(cited >= 1, "no built-in rule cites a lemma");
}
