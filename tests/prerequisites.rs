//! The README's prerequisite line names every package the two set-up
//! commands (`cargo run --release -- gate`, `cargo test --release
//! --workspace`) and the peers' set-up need on a fresh Debian or Ubuntu
//! machine.
//!
//! The uses are collected from the sources, not listed by hand: every
//! program the Rust code starts (`Command::new("...")`, and the commands it
//! is handed as strings, such as a test's `--simplifier 'python3 ...'` or
//! cvc5's default path), every program the Python adapters look for or
//! start, the commands of the adapters' shell scripts, and every crate in
//! Cargo.lock that builds or links native code. Each use is looked up in
//! `CATALOGUE` (the one place that says which Debian package provides what);
//! a program or native crate it does not know fails the test, so a new
//! external tool cannot slip in unnoticed, and a package missing from the
//! README's line fails it, naming the use.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What provides an external program or a native crate's needs.
#[derive(Clone, Copy)]
enum Provider {
    /// Always there (essential packages such as dash and coreutils).
    Essential,
    /// Nothing of the system (a `-sys` crate that is pure Rust on Linux).
    Nothing,
    /// The Rust toolchain the README's second line installs (rustup).
    Toolchain,
    /// These Debian packages.
    Packages(&'static [&'static str]),
}

/// Programs (by the name they are started with) and crates of Cargo.lock
/// that build or link native code, with what provides them.
const CATALOGUE: &[(&str, Provider)] = &[
    // Programs.
    ("sh", Provider::Essential),
    // coreutils, grep and sed are Essential: yes in Debian.
    ("dirname", Provider::Essential),
    ("pwd", Provider::Essential),
    ("grep", Provider::Essential),
    ("sed", Provider::Essential),
    ("tail", Provider::Essential),
    ("rm", Provider::Essential),
    ("mktemp", Provider::Essential),
    ("ln", Provider::Essential),
    // adapters/morok/run-reproducers.sh builds the reproducers.
    ("cargo", Provider::Toolchain),
    ("cvc5", Provider::Packages(&["cvc5"])),
    ("python3", Provider::Packages(&["python3"])),
    // `python3 -m venv` (adapters/setup-venv.sh): Debian splits venv off.
    ("python3 -m venv", Provider::Packages(&["python3-venv"])),
    // tinygrad's CPU device compiles every kernel with it.
    ("clang", Provider::Packages(&["clang"])),
    // Crates. rustc itself links through `cc`, whatever the crates.
    ("rustc", Provider::Packages(&["build-essential"])),
    ("cc", Provider::Packages(&["build-essential"])),
    // libFuzzer's C++ sources (the cargo-fuzz targets).
    ("libfuzzer-sys", Provider::Packages(&["build-essential"])),
    // pkg-config tells z3-sys which Z3 it links and where (the one
    // verify/setup-z3.sh installs, whose venv the scan finds there).
    ("z3-sys", Provider::Packages(&["pkg-config"])),
    // Morok's runtime (adapters/morok) calls C through libffi, which it
    // builds from its vendored C sources.
    ("libffi-sys", Provider::Packages(&["build-essential"])),
    // mimalloc, the Morok adapter's allocator, built from its C sources.
    ("libmimalloc-sys", Provider::Packages(&["build-essential"])),
    // Paths of the user's directories, pure Rust on Linux (Morok's runtime).
    ("dirs-sys", Provider::Nothing),
    ("js-sys", Provider::Nothing),
    ("linux-raw-sys", Provider::Nothing),
    ("windows-sys", Provider::Nothing),
];

/// Shell words that are not programs of the machine (builtins, keywords).
const SHELL_BUILTINS: &[&str] = &[
    "set", "cd", "echo", "exit", "if", "then", "else", "fi", "for", "do", "done", "while", "case",
    "esac", "return", "local", "export", "shift", "test", "[", "true", "false", ":", ".", "exec",
    "trap", "read", "printf", "{", "}",
];

/// One use of something external: what, and where it was seen.
#[derive(Debug, Clone)]
struct Use {
    what: String,
    at: String,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Files under `dir` (recursively, skipping `target` and hidden
/// directories) whose name ends with `ext`.
fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            if name != "target" && !name.starts_with('.') {
                files(&p, ext, out);
            }
        } else if name.ends_with(ext) {
            out.push(p);
        }
    }
}

fn shown(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

/// The quoted word that starts at `s` (after an opening `"`), if any.
fn quoted(s: &str) -> Option<&str> {
    s.find('"').map(|end| &s[..end])
}

/// Programs started by Rust code: `Command::new("P")`, and string literals
/// that are a known program's command line (`"python3 tests/..."`) or its
/// default path (`"cvc5"`).
fn rust_uses(text: &str, file: &str, out: &mut Vec<Use>) {
    let programs: Vec<&str> = CATALOGUE.iter().map(|(n, _)| *n).collect();
    for (i, line) in text.lines().enumerate() {
        let at = format!("{file}:{}", i + 1);
        let mut rest = line;
        while let Some(k) = rest.find("Command::new(\"") {
            rest = &rest[k + "Command::new(\"".len()..];
            if let Some(p) = quoted(rest) {
                out.push(Use {
                    what: p.to_string(),
                    at: at.clone(),
                });
            }
        }
        for p in &programs {
            if p.contains(' ') {
                continue;
            }
            if line.contains(&format!("\"{p}\"")) || line.contains(&format!("\"{p} ")) {
                out.push(Use {
                    what: p.to_string(),
                    at: at.clone(),
                });
            }
        }
    }
}

/// Programs a Python adapter looks for or starts: `shutil.which("P")`, and
/// the first word of a `subprocess` argument list (`["P", ...]`).
fn python_uses(text: &str, file: &str, out: &mut Vec<Use>) {
    for (i, line) in text.lines().enumerate() {
        let at = format!("{file}:{}", i + 1);
        for pat in [
            "shutil.which(\"",
            "Popen([\"",
            "run([\"",
            "check_output([\"",
            "call([\"",
        ] {
            let mut rest = line;
            while let Some(k) = rest.find(pat) {
                rest = &rest[k + pat.len()..];
                if let Some(p) = quoted(rest) {
                    out.push(Use {
                        what: p.to_string(),
                        at: at.clone(),
                    });
                }
            }
        }
    }
}

/// Programs a shell script runs: the first word of each command (after
/// `|`, `&&`, `||`, `;`, `$(` and `if`/`!`), comments and assignments
/// aside; `$python`-like words are the interpreter the script defaults to
/// (`${PYTHON:-python3}`), and `-m venv` makes it `python3 -m venv`.
fn shell_uses(text: &str, file: &str, out: &mut Vec<Use>) {
    // The script's own functions (`name() {`) are not programs either.
    let functions: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim_start().split_once("()").map(|(name, _)| name))
        .filter(|name| name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .collect();
    // Inside a single-quoted string that spans lines (a Python program the
    // script hands to python3), lines are data, not commands.
    let mut quoted_lines = false;
    for (i, raw) in text.lines().enumerate() {
        let at = format!("{file}:{}", i + 1);
        let was_quoted = quoted_lines;
        if !was_quoted && raw.trim_start().starts_with('#') {
            continue;
        }
        if raw.matches('\'').count() % 2 == 1 {
            quoted_lines = !quoted_lines;
        }
        if was_quoted {
            continue;
        }
        let line = raw.split(" #").next().unwrap_or("");
        if line.trim_start().starts_with('#') {
            continue;
        }
        if line.contains(":-python3}") {
            out.push(Use {
                what: "python3".into(),
                at: at.clone(),
            });
        }
        if line.contains(" -m venv") {
            out.push(Use {
                what: "python3 -m venv".into(),
                at: at.clone(),
            });
        }
        let mut cmdline = unquoted(line);
        for sep in ["$(", "&&", "||", "|", ";"] {
            cmdline = cmdline.replace(sep, "\n");
        }
        for part in cmdline.lines() {
            let mut words = part.split_whitespace().skip_while(|w| {
                ["if", "!", "then", "else", "do", "while"].contains(w) || w.contains('=')
            });
            let Some(w) = words.next() else { continue };
            let w = w.trim_matches(|c| c == '(' || c == ')' || c == '"' || c == '\'');
            // Variables, the script's own functions and paths it computes
            // are not programs of the machine.
            if w.is_empty()
                || w.starts_with('$')
                || w.starts_with('-')
                || w.ends_with(')')
                || w.ends_with('}')
                || SHELL_BUILTINS.contains(&w)
                || functions.contains(&w)
                || !w
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            {
                continue;
            }
            out.push(Use {
                what: w.to_string(),
                at: at.clone(),
            });
        }
    }
}

/// `line` with its quoted strings emptied, but for the command
/// substitutions (`"$(...)"`) a double-quoted string holds; an unclosed
/// quote empties the rest of the line.
fn unquoted(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\'' && c != '"' {
            out.push(c);
            continue;
        }
        let body: String = chars.by_ref().take_while(|&d| d != c).collect();
        out.push(c);
        if c == '"' && body.starts_with("$(") {
            out.push_str(&body);
        }
        out.push(c);
    }
    out
}

/// Crates of Cargo.lock that build or link native code: `cc`, and every
/// `-sys` crate.
fn native_crates(lock: &str, file: &str, out: &mut Vec<Use>) {
    for (i, line) in lock.lines().enumerate() {
        let Some(name) = line
            .strip_prefix("name = \"")
            .and_then(|s| s.strip_suffix('"'))
        else {
            continue;
        };
        if name == "cc" || name.ends_with("-sys") {
            out.push(Use {
                what: name.to_string(),
                at: format!("{file}:{}", i + 1),
            });
        }
    }
}

/// Every use of something external by the repository.
fn collect_uses() -> Vec<Use> {
    let root = root();
    let mut uses = vec![Use {
        what: "rustc".into(),
        at: "the Rust toolchain".into(),
    }];
    let mut rs = Vec::new();
    for dir in ["src", "tests", "engine", "verify", "fuzz", "adapters"] {
        files(&root.join(dir), ".rs", &mut rs);
    }
    for f in &rs {
        let text = std::fs::read_to_string(f).unwrap();
        // This file names the programs it looks for; it runs none of them.
        if f.ends_with("tests/prerequisites.rs") {
            continue;
        }
        rust_uses(&text, &shown(f), &mut uses);
    }
    let mut py = Vec::new();
    files(&root.join("adapters"), ".py", &mut py);
    files(&root.join("tests"), ".py", &mut py);
    for f in &py {
        python_uses(&std::fs::read_to_string(f).unwrap(), &shown(f), &mut uses);
    }
    let mut sh = Vec::new();
    files(&root.join("adapters"), ".sh", &mut sh);
    files(&root.join("verify"), ".sh", &mut sh);
    for f in &sh {
        shell_uses(&std::fs::read_to_string(f).unwrap(), &shown(f), &mut uses);
    }
    // The main workspace's and Morok's adapter's (a workspace of its own,
    // which CI builds with the peers).
    for lock in ["Cargo.lock", "adapters/morok/Cargo.lock"] {
        native_crates(
            &std::fs::read_to_string(root.join(lock)).unwrap(),
            lock,
            &mut uses,
        );
    }
    uses
}

/// The packages of the README's prerequisite line: the first line of a
/// fenced block that runs `apt-get install`.
fn readme_packages(readme: &str) -> Result<(String, Vec<String>), String> {
    let mut in_block = false;
    for line in readme.lines() {
        if line.starts_with("```") {
            in_block = !in_block;
            continue;
        }
        let l = line.trim().trim_start_matches("sudo ");
        if in_block && l.starts_with("apt-get install") {
            let pkgs = l
                .split_whitespace()
                .skip(2)
                .take_while(|w| !["&&", ";", "|"].contains(w))
                .filter(|w| !w.starts_with('-'))
                .map(str::to_string)
                .collect();
            return Ok((line.to_string(), pkgs));
        }
    }
    Err("README.md has no prerequisite line (a fenced `apt-get install ...`)".into())
}

/// What the README's line lacks, one message per missing package with the
/// uses that need it; or what the catalogue does not know.
fn check(readme: &str, uses: &[Use]) -> Result<(), String> {
    let (line, pkgs) = readme_packages(readme)?;
    let catalogue: BTreeMap<&str, Provider> = CATALOGUE.iter().copied().collect();
    let mut unknown = Vec::new();
    let mut missing: BTreeMap<&str, Vec<&Use>> = BTreeMap::new();
    for u in uses {
        match catalogue.get(u.what.as_str()) {
            None => unknown.push(format!("`{}` ({})", u.what, u.at)),
            Some(Provider::Essential | Provider::Nothing | Provider::Toolchain) => {}
            Some(Provider::Packages(ps)) => {
                for p in *ps {
                    if !pkgs.iter().any(|q| q == p) {
                        missing.entry(p).or_default().push(u);
                    }
                }
            }
        }
    }
    let mut msgs = Vec::new();
    if !unknown.is_empty() {
        msgs.push(format!(
            "used but not in tests/prerequisites.rs's CATALOGUE (add it, with the Debian package \
             that provides it, and that package to the README's line): {}",
            unknown.join(", ")
        ));
    }
    for (p, us) in &missing {
        // The library's uses first: they say why more plainly than a test's.
        let mut whys: Vec<String> = us
            .iter()
            .map(|u| format!("{} at {}", u.what, u.at))
            .collect();
        whys.sort_by_key(|w| w.contains(" at tests/"));
        whys.dedup();
        whys.truncate(3);
        msgs.push(format!(
            "README.md's prerequisite line `{}` lacks the package {p}, needed by {}",
            line.trim(),
            whys.join("; ")
        ));
    }
    if msgs.is_empty() {
        Ok(())
    } else {
        Err(msgs.join("\n"))
    }
}

fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).unwrap()
}

#[test]
fn the_readme_prerequisite_line_names_every_package_the_sources_use() {
    if let Err(e) = check(&readme(), &collect_uses()) {
        panic!("{e}");
    }
}

#[test]
fn the_scan_finds_the_programs_the_tests_and_the_gate_start() {
    let uses = collect_uses();
    let found = |what: &str| uses.iter().any(|u| u.what == what);
    // cvc5 (the cross-check), the example adapters' python3, the venv of
    // the peers and clang of tinygrad's backend, libz3: the scan must see
    // each through the code that uses it, or the line could lose them.
    for what in [
        "cvc5",
        "python3",
        "python3 -m venv",
        "clang",
        "z3-sys",
        "sh",
        "cc",
    ] {
        assert!(found(what), "the scan no longer finds {what}");
    }
}

#[test]
fn a_prerequisite_line_without_cvc5_fails_naming_cvc5_and_its_use() {
    let text = readme();
    let (line, _) = readme_packages(&text).unwrap();
    let without = line.replace(" cvc5", "");
    assert_ne!(without, line, "the README's line has no cvc5 to remove");
    let err = check(&text.replace(&line, &without), &collect_uses()).unwrap_err();
    assert!(err.contains("lacks the package cvc5"), "{err}");
    assert!(
        err.contains(" at verify/src/"),
        "the message names the use: {err}"
    );
    assert!(!err.contains("lacks the package pkg-config"), "{err}");
}

#[test]
fn a_program_the_catalogue_does_not_know_fails_naming_where_it_is_started() {
    let mut uses = Vec::new();
    rust_uses(
        "let o = Command::new(\"gdb\").arg(x);\n",
        "src/x.rs",
        &mut uses,
    );
    let err = check(&readme(), &uses).unwrap_err();
    assert!(err.contains("`gdb` (src/x.rs:1)"), "{err}");
}

#[test]
fn shell_scripts_yield_their_commands_not_their_comments_variables_or_functions() {
    let mut uses = Vec::new();
    let script = "# clang is needed\ndie() { echo \"$*\" >&2; exit 1; }\nvenv=${1:-x}\n\
                  \"$python\" -m venv \"$venv\" || die \"no\"\n\
                  if out=$(git rev-parse HEAD 2>&1); then echo ok; fi\n";
    shell_uses(script, "s.sh", &mut uses);
    let whats: Vec<&str> = uses.iter().map(|u| u.what.as_str()).collect();
    assert_eq!(whats, ["python3 -m venv", "git"], "{uses:?}");
}
