//! cvc5, the second solver: Debian's `cvc5` command-line solver run on an
//! SMT-LIB2 text, under a wall-clock limit and stoppable from outside (it
//! is a process: killed and reaped, it leaves nothing behind). The
//! cross-check ([`crate::crosscheck`]), the lemmas' fallback and the
//! portfolio ([`crate::portfolio`]) run it through here.

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// What cvc5 said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    Unsat,
    /// Satisfiable, with the model cvc5 printed (`define-fun` lines).
    Sat(String),
    /// It could not answer: not installed, timeout, stopped, error.
    Unknown(String),
}

impl Answer {
    /// Whether it settled the query (sat or unsat).
    pub fn definite(&self) -> bool {
        !matches!(self, Answer::Unknown(_))
    }
}

/// cvc5's version line, if `cvc5` runs here.
pub fn version() -> Option<String> {
    static V: OnceLock<Option<String>> = OnceLock::new();
    V.get_or_init(|| {
        let out = Command::new(path())
            .arg("--version")
            .stdin(Stdio::null())
            .output()
            .ok()?;
        if !out.status.success() {
            return None;
        }
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .map(|l| l.trim().to_string())
    })
    .clone()
}

/// The cvc5 binary (`TILEPROOF_CVC5` overrides).
pub fn path() -> String {
    std::env::var("TILEPROOF_CVC5").unwrap_or_else(|_| "cvc5".into())
}

/// How often a running cvc5 is looked at (finished? stopped?).
const POLL: Duration = Duration::from_millis(5);

/// Runs cvc5 on an SMT-LIB2 text (its own `(check-sat)` included) within
/// `timeout`.
pub fn run(smt: &str, timeout: Duration) -> Answer {
    run_stoppable(smt, timeout, &AtomicBool::new(false))
}

/// [`run`], killed as soon as `stop` is set (then unknown, "stopped").
pub fn run_stoppable(smt: &str, timeout: Duration, stop: &AtomicBool) -> Answer {
    match script(&format!("{smt}\n(get-model)\n"), timeout, stop) {
        Err(why) => Answer::Unknown(why),
        Ok(out) => {
            let mut lines = out.lines().map(str::trim).filter(|l| !l.is_empty());
            match lines.next() {
                Some("unsat") => Answer::Unsat,
                Some("sat") => Answer::Sat(lines.collect::<Vec<_>>().join("\n")),
                other => Answer::Unknown(other.unwrap_or("no answer").to_string()),
            }
        }
    }
}

/// Runs an SMT-LIB2 script (several checks allowed: cvc5 runs
/// incrementally, with models) within `timeout`, killed as soon as `stop`
/// is set; its standard output, or why there is none worth reading.
pub fn script(text: &str, timeout: Duration, stop: &AtomicBool) -> Result<String, String> {
    if version().is_none() {
        return Err("cvc5 is not installed".into());
    }
    static N: AtomicU64 = AtomicU64::new(0);
    let file = std::env::temp_dir().join(format!(
        "tileproof-{}-{}.smt2",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let text = format!("(set-logic ALL)\n{text}");
    let written = std::fs::File::create(&file).and_then(|mut f| f.write_all(text.as_bytes()));
    if let Err(e) = written {
        return Err(format!("cannot write {}: {e}", file.display()));
    }
    let out = wait(&file, timeout, stop);
    let _ = std::fs::remove_file(&file);
    out
}

fn wait(file: &std::path::Path, timeout: Duration, stop: &AtomicBool) -> Result<String, String> {
    let ms = timeout.as_millis().max(1);
    let child = Command::new(path())
        .arg(format!("--tlimit={ms}"))
        .arg("--lang=smt2")
        .arg("--incremental")
        .arg("--produce-models")
        .arg(file)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = child.map_err(|e| format!("cvc5 does not start: {e}"))?;
    // Its own limit is a wall-clock one; ours is a margin past it, for a
    // cvc5 that does not stop.
    let now = Instant::now();
    let hard = now
        .checked_add(timeout.saturating_add(Duration::from_millis(500)))
        .unwrap_or(now + Duration::from_secs(86_400));
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if stop.load(Ordering::Relaxed) || Instant::now() >= hard => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(if stop.load(Ordering::Relaxed) {
                    "stopped: another solver answered".into()
                } else {
                    "timeout".into()
                });
            }
            Ok(None) => std::thread::sleep(POLL),
            Err(e) => return Err(format!("cvc5: {e}")),
        }
    }
    let out = child.wait_with_output().map_err(|e| format!("cvc5: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let answered = stdout
        .lines()
        .map(str::trim)
        .any(|l| l == "sat" || l == "unsat");
    if answered {
        return Ok(stdout);
    }
    let err = String::from_utf8_lossy(&out.stderr);
    Err(if err.contains("timeout") || err.contains("interrupted") {
        "timeout".to_string()
    } else {
        let first = stdout.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        format!("{first} {}", err.lines().next().unwrap_or(""))
            .trim()
            .to_string()
    })
}

/// The `define-fun` lines of a cvc5 model as SMT-LIB2 declarations and
/// equalities (`(declare-fun N () S) (assert (= N V))`), which Z3 reads
/// into a solver holding the same query: its constants are the same
/// (name and sort).
pub fn model_as_assertions(model: &str) -> String {
    let mut out = String::new();
    for line in model.lines().map(str::trim) {
        let Some(rest) = line.strip_prefix("(define-fun ") else {
            continue;
        };
        let Some(body) = rest.strip_suffix(')') else {
            continue;
        };
        // NAME () SORT VALUE: the name is one token (maybe |quoted|).
        let (name, after) = match body.strip_prefix('|') {
            Some(q) => match q.find('|') {
                Some(end) => (&body[..end + 2], &q[end + 1..]),
                None => continue,
            },
            None => match body.split_once(' ') {
                Some((n, a)) => (n, a),
                None => continue,
            },
        };
        let Some(sort_value) = after.trim_start().strip_prefix("()") else {
            continue;
        };
        let sort_value = sort_value.trim();
        let Some((sort, value)) = split_sort(sort_value) else {
            continue;
        };
        out.push_str(&format!(
            "(declare-fun {name} () {sort})\n(assert (= {name} {value}))\n"
        ));
    }
    out
}

/// `SORT VALUE` split after the sort (an atom or one parenthesized term).
fn split_sort(s: &str) -> Option<(&str, &str)> {
    if s.starts_with('(') {
        let mut depth = 0;
        for (i, c) in s.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some((&s[..=i], s[i + 1..].trim()));
                    }
                }
                _ => {}
            }
        }
        None
    } else {
        s.split_once(' ').map(|(a, b)| (a, b.trim()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_becomes_declarations_and_equalities() {
        let model = "(\n(define-fun |x#0| () (_ BitVec 8) #b00000101)\n(define-fun |x#0.inv| () Bool false)\n(define-fun k () Int (- 3))\n)";
        assert_eq!(
            model_as_assertions(model),
            "(declare-fun |x#0| () (_ BitVec 8))\n(assert (= |x#0| #b00000101))\n\
             (declare-fun |x#0.inv| () Bool)\n(assert (= |x#0.inv| false))\n\
             (declare-fun k () Int)\n(assert (= k (- 3)))\n"
        );
    }

    #[test]
    fn a_stopped_run_is_unknown_and_leaves_no_process() {
        if version().is_none() {
            eprintln!("cvc5 is not installed: nothing to stop");
            return;
        }
        // A hard query (nonlinear integers): it would run the full minute.
        let smt = "(declare-fun a () Int)(declare-fun b () Int)(declare-fun c () Int)\
                   (assert (> a 1))(assert (> b 1))(assert (> c 1))\
                   (assert (= (+ (* a a a) (* b b b)) (* c c c)))(check-sat)";
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let s2 = stop.clone();
        let start = Instant::now();
        let t = std::thread::spawn(move || run_stoppable(smt, Duration::from_secs(60), &s2));
        std::thread::sleep(Duration::from_millis(300));
        stop.store(true, Ordering::Relaxed);
        let a = t.join().unwrap();
        assert!(
            matches!(a, Answer::Unknown(ref w) if w.starts_with("stopped")),
            "{a:?}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }
}
