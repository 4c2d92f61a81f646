//! Where a peer crashed, or which of its rules loop, read from the message
//! its adapter answered with.
//!
//! A crash is one defect per site, whatever input reaches it: a Rust panic
//! names its `file:line` (`... at /root/.cargo/registry/src/index.crates.io-
//! .../morok-schedule-0.1.0-alpha.2/src/symbolic/divmod.rs:464`), a Python
//! adapter names the innermost frame of the peer's own code (`(at
//! tinygrad/uop/ops.py:512 in divides)`, added by `tileproof_peer.py`). A
//! message with neither keeps its text, numbers abstracted (TVM's C++
//! checks: `Literal value C exceeds range of int64`). Morok's adapter stops
//! a rewrite that does not reach a fixed point and names the groups that
//! kept firing: a loop is one defect per set of rules.

use super::Cause;

/// The cause a peer's failure message names.
pub fn of_message(message: &str) -> Cause {
    if let Some(rules) = loop_rules(message) {
        return Cause::Loop(rules);
    }
    if let Some(site) = frame(message).or_else(|| panic_location(message)) {
        return Cause::Crash(site);
    }
    Cause::Crash(abstract_text(message))
}

/// The rules of a loop Morok's adapter stopped: `graph_rewrite loops: N
/// rewrites without a fixed point (its last rewrites are by A, B, A, ...)`
/// or `(A keeps rewriting what it rewrote)`; each rule of the cycle once,
/// sorted. The last rewrites begin with the steps that led into the cycle
/// (a constant folded on the way): the cycle is their repeating tail.
fn loop_rules(message: &str) -> Option<Vec<String>> {
    let rest = message.split_once("graph_rewrite loops:")?.1;
    let inside = rest.split_once('(')?.1.split_once(')')?.0;
    let mut rules: Vec<String> =
        if let Some(list) = inside.strip_prefix("its last rewrites are by ") {
            let steps: Vec<String> = list.split(", ").map(|r| r.trim().to_string()).collect();
            cycle(&steps).to_vec()
        } else {
            vec![inside.split(' ').next()?.to_string()]
        };
    rules.retain(|r| !r.is_empty());
    rules.sort();
    rules.dedup();
    (!rules.is_empty()).then_some(rules)
}

/// The shortest period that repeats at least twice at the end of `steps`,
/// as long a tail as it covers: `[b, a, c, a, c, a, c]` is `[a, c]`; all of
/// `steps` when nothing repeats.
fn cycle(steps: &[String]) -> &[String] {
    let n = steps.len();
    for p in 1..=n / 2 {
        let periodic = (n - 2 * p..n - p).all(|i| steps[i] == steps[i + p]);
        if periodic {
            return &steps[n - p..];
        }
    }
    steps
}

/// The innermost frame of the peer's own code that `tileproof_peer.py`
/// appends: `(at FILE:LINE in FUNCTION)`, as `FILE in FUNCTION` (a
/// function's checks on several lines are one site: TVM's `TryConstFold`
/// fails a check per operator; and whatever it raised: tinygrad's
/// `exec_alu` raises `ValueError` on a negative shift count and
/// `MemoryError` on a huge one, one missing guard), or `FILE:LINE in
/// <lambda>` for an anonymous one (the line is the function, whatever it
/// raised too), or `FILE:LINE` with the exception's type when it names
/// none.
fn frame(message: &str) -> Option<String> {
    let at = message.rfind("(at ")?;
    let inside = &message[at + 4..message.rfind(')')?.max(at + 4)];
    let (place, function) = inside.split_once(" in ").unwrap_or((inside, ""));
    let function = short_function(function);
    let mut site = short_location(place.trim()).unwrap_or_else(|| place.trim().to_string());
    if !function.is_empty() && !function.starts_with('<') {
        // The line does not name the defect when the function does.
        if let Some((file, line)) = site.rsplit_once(':') {
            if line.chars().all(|c| c.is_ascii_digit()) {
                site = file.to_string();
            }
        }
        site.push_str(&format!(" in {function}"));
        return Some(site);
    }
    if !function.is_empty() {
        // An anonymous function is its line, and one missing guard there
        // raises what its input leads to (tinygrad's `1 << k.val` at
        // symbolic.py:139: `ValueError` for a negative `k`, `MemoryError`
        // for a huge one), as a named function's does.
        site.push_str(&format!(" in {function}"));
        return Some(site);
    }
    // The exception's type, wherever the message quotes the peer (a bounds
    // request's failure says so first).
    let kind = message
        .find("peer raised ")
        .and_then(|i| message[i + "peer raised ".len()..].split_once(':'))
        .map_or("", |(k, _)| k);
    if !kind.is_empty() {
        site.push_str(&format!(": {kind}"));
    }
    Some(site)
}

/// A function's name without its parameters and return type (a C++
/// frame is `tvm::ffi::Optional<tvm::PrimExpr> tvm::prim::detail::
/// TryConstFold(tvm::PrimExpr, ...`): the last word before the first `(`.
fn short_function(f: &str) -> String {
    let head = f.trim().split('(').next().unwrap_or_default();
    head.rsplit(' ').next().unwrap_or(head).trim().to_string()
}

/// A Rust panic's location (`... at PATH:LINE`), the path from the crate's
/// directory on (`morok-schedule-0.1.0-alpha.2/src/symbolic/divmod.rs:464`),
/// without the column Rust's own hook adds.
fn panic_location(message: &str) -> Option<String> {
    let at = message.rfind(" at ")?;
    short_location(message[at + 4..].split_whitespace().next()?)
}

/// `PATH:LINE[:COLUMN]` as `CRATE_DIR/src/...:LINE` (the path from the
/// directory holding `src/` on; the whole path when there is none).
fn short_location(loc: &str) -> Option<String> {
    let mut parts: Vec<&str> = loc.split(':').collect();
    if parts.len() < 2 || !parts[1].chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    parts.truncate(2);
    let path = parts[0];
    let short = match path.rfind("/src/") {
        Some(i) => {
            let crate_dir = path[..i].rsplit('/').next().unwrap_or_default();
            format!("{crate_dir}{}", &path[i..])
        }
        None => path.to_string(),
    };
    Some(format!("{short}:{}", parts[1]))
}

/// A message with its numbers written `C`, first line, at most 160 chars.
fn abstract_text(message: &str) -> String {
    let line = message.lines().next().unwrap_or_default();
    // What follows a message's colon as JSON is its payload (the answer
    // that broke a budget), not where it broke.
    let line = [": {", ": ["]
        .iter()
        .filter_map(|p| line.find(p))
        .min()
        .map_or(line, |i| &line[..i]);
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                chars.next();
            }
            if out.ends_with('-') {
                out.pop();
            }
            out.push('C');
        } else {
            out.push(c);
        }
    }
    let out = out.trim().trim_end_matches('(').trim().to_string();
    out.chars().take(160).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rust_panic_is_filed_under_its_file_and_line() {
        let m = "panic: attempt to calculate the remainder with a divisor of zero at /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/morok-schedule-0.1.0-alpha.2/src/symbolic/divmod.rs:464";
        assert_eq!(
            of_message(m),
            Cause::Crash("morok-schedule-0.1.0-alpha.2/src/symbolic/divmod.rs:464".into())
        );
        let with_column = "boom (at src/x.rs:12:5)";
        assert_eq!(of_message(with_column), Cause::Crash("src/x.rs:12".into()));
    }

    #[test]
    fn an_answer_past_its_budget_is_one_cause_whatever_the_answer() {
        let a = r#"an answer of more than 4096 nodes (the node budget for this case): {"id":3,"trees":[["add",["var","x"]]]}"#;
        let b = r#"an answer of more than 512 nodes (the node budget for this case): {"id":9,"trees":[["mul"]]}"#;
        assert_eq!(of_message(a), of_message(b));
        assert_eq!(
            of_message(a),
            Cause::Crash("an answer of more than C nodes (the node budget for this case)".into())
        );
    }

    #[test]
    fn morok_loops_are_one_cause_per_cycle_whatever_led_into_it() {
        let a = "panic: graph_rewrite loops: 18 rewrites without a fixed point (its last rewrites are by range_based_mod_div_patterns, constant_folding_dsl_patterns, range_based_mod_div_patterns, range_based_mod_div_patterns, range_based_mod_div_patterns); Morok's own guard panics later";
        let b = "panic: graph_rewrite loops: 22 rewrites without a fixed point (its last rewrites are by vmin_vmax_collapse_patterns, dce_dsl_simple_patterns, constant_folding_dsl_patterns, range_based_mod_div_patterns, range_based_mod_div_patterns, range_based_mod_div_patterns)";
        assert_eq!(of_message(a), of_message(b));
        assert_eq!(
            of_message(a),
            Cause::Loop(vec!["range_based_mod_div_patterns".into()])
        );
        let two = "panic: graph_rewrite loops: 9 rewrites without a fixed point (its last rewrites are by x, a, b, a, b, a, b)";
        assert_eq!(of_message(two), Cause::Loop(vec!["a".into(), "b".into()]));
        let one = "panic: graph_rewrite loops: 33 rewrites without a fixed point (propagate_invalid keeps rewriting what it rewrote); Morok's own guard";
        assert_eq!(
            of_message(one),
            Cause::Loop(vec!["propagate_invalid".into()])
        );
    }

    #[test]
    fn a_python_peer_is_filed_under_its_innermost_frame() {
        let m = "peer raised ZeroDivisionError: integer modulo by zero (at tinygrad/uop/ops.py:512 in divides)";
        assert_eq!(
            of_message(m),
            Cause::Crash("tinygrad/uop/ops.py in divides".into())
        );
    }

    #[test]
    fn a_function_is_one_site_whatever_it_raised_and_a_lambda_is_its_line() {
        let negative =
            "peer raised ValueError: negative shift count (at tinygrad/uop/ops.py:80 in exec_alu)";
        let huge = "peer raised MemoryError:  (at tinygrad/uop/ops.py:80 in exec_alu)";
        assert_eq!(of_message(negative), of_message(huge));
        let lambda = |line: u32| {
            of_message(&format!(
                "peer raised ValueError: x (at tinygrad/uop/symbolic.py:{line} in <lambda>)"
            ))
        };
        assert_ne!(lambda(100), lambda(200));
        assert_eq!(
            lambda(100),
            Cause::Crash("tinygrad/uop/symbolic.py:100 in <lambda>".into())
        );
        let huge_shift =
            of_message("peer raised MemoryError:  (at tinygrad/uop/symbolic.py:100 in <lambda>)");
        assert_eq!(lambda(100), huge_shift);
    }

    #[test]
    fn a_crash_asked_for_bounds_is_the_same_site_as_one_asked_to_simplify() {
        let simplify = "peer raised ValueError: negative shift count (at tinygrad/uop/ops.py:1060 in _min_max)";
        let bounds = "asked for its bounds: the peer failed to give its bounds: peer raised ValueError: negative shift count (at tinygrad/uop/ops.py:1061 in _min_max)";
        assert_eq!(of_message(simplify), of_message(bounds));
    }

    #[test]
    fn a_cpp_frame_is_its_function_whatever_line_of_it_failed() {
        let at = |line: u32| {
            format!("peer raised InternalError: Check failed: x is false: overflow (at ir/prim/const_fold.h:{line} in tvm::ffi::Optional<tvm::PrimExpr> tvm::prim::detail::TryConstFold(tvm::PrimExpr, tvm::PrimExpr))")
        };
        assert_eq!(of_message(&at(242)), of_message(&at(346)));
        assert_eq!(
            of_message(&at(242)),
            Cause::Crash("ir/prim/const_fold.h in tvm::prim::detail::TryConstFold".into())
        );
    }

    #[test]
    fn a_message_without_a_site_keeps_its_text_with_numbers_abstracted() {
        let a = "peer raised ValueError: Check failed: (small.has_value()) is false: Literal value 9223372036854775809 exceeds range of int64";
        let b = "peer raised ValueError: Check failed: (small.has_value()) is false: Literal value -18446744073709547660 exceeds range of int64";
        assert_eq!(of_message(a), of_message(b));
    }
}
