//! tileproof's adapter for Morok 0.1.0-alpha.2 (docs/protocol.md,
//! docs/peers/morok.md).
//!
//! ```text
//! tileproof-morok [--entry symbolic_simple|symbolic|sym|lower] [--vars mixed|range|define] [--gc-every N]
//! tileproof-morok --bench FILE [--vars mixed|range|define]
//! ```
//!
//! Entry points, as Morok's pipeline runs them: `graph_rewrite` with
//! `symbolic_simple()`, `symbolic()` (the default) or `sym()`; `lower`
//! runs `pm_lower_index_dtype` alone and answers the lowered program, its
//! `i32`/`i64` nodes and casts as tileproof casts, so that tileproof checks
//! the widths Morok picks against the `index` program at every point.

mod adapter;
mod backend;
mod bench;
mod bounds;
mod convert;
mod divmod_steps;
mod entry;
mod groups;
mod harness;
mod lower;
mod morok_source;
mod patterns;
#[cfg(test)]
mod profile_facts;
mod reproducer;
mod translate;

use adapter::Morok;
use entry::Entry;

use convert::VarMode;

// Morok allocates a node (and its hash-consing key) for everything it
// builds: glibc's malloc and free were a fifth of the adapter's time, and
// mimalloc takes 13% fewer instructions over a campaign's requests.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

const USAGE: &str = "usage: tileproof-morok [--entry symbolic_simple|symbolic|sym|lower] [--vars mixed|range|define] [--gc-every N] [--patterns FILE]
       tileproof-morok --bench FILE [--vars mixed|range|define]

  --entry E     the simplifier under test (default symbolic): graph_rewrite with Morok's
                symbolic_simple(), symbolic() or sym(); `lower` runs pm_lower_index_dtype alone
  --vars M      which variables with lower bound 0 are loop RANGEs (default mixed: names
                ending in an even number; `range`: all; `define`: none, all DEFINE_VARs)
  --gc-every N  drop Morok's dead hash-consing entries every N requests (default 2000)
  --patterns F  translate the entries of this patterns.rs (a modified copy of morok-schedule's
                src/symbolic/patterns.rs) instead of the pinned crate's, found by cargo metadata
  --bench FILE  time tileproof's engine and Morok's symbolic() and sym() in this process on
                the cases of FILE (as `tileproof bench peers` writes them) and print the figures

Speaks tileproof's peer protocol 1 on stdin/stdout (docs/protocol.md).";

fn main() {
    let mut entry = Entry::Tier(groups::Tier::Symbolic);
    let mut vars = VarMode::Mixed;
    let mut gc_every = 2000u64;
    let mut bench = None;
    let mut patterns = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |flag: &str| {
            args.next().unwrap_or_else(|| {
                eprintln!("tileproof-morok: {flag} needs a value\n\n{USAGE}");
                std::process::exit(2)
            })
        };
        match a.as_str() {
            "--entry" => {
                let v = value("--entry");
                entry = Entry::by_name(&v).unwrap_or_else(|| {
                    eprintln!("tileproof-morok: no entry point `{v}`\n\n{USAGE}");
                    std::process::exit(2)
                });
            }
            "--vars" => {
                let v = value("--vars");
                vars = VarMode::by_name(&v).unwrap_or_else(|| {
                    eprintln!(
                        "tileproof-morok: --vars takes mixed, range or define, not `{v}`\n\n{USAGE}"
                    );
                    std::process::exit(2)
                });
            }
            "--gc-every" => {
                let v = value("--gc-every");
                gc_every = v.parse().ok().filter(|n| *n > 0).unwrap_or_else(|| {
                    eprintln!(
                        "tileproof-morok: --gc-every takes a positive integer, not `{v}`\n\n{USAGE}"
                    );
                    std::process::exit(2)
                });
            }
            "--bench" => bench = Some(value("--bench")),
            "--patterns" => patterns = Some(std::path::PathBuf::from(value("--patterns"))),
            "-h" | "--help" => {
                println!("{USAGE}");
                return;
            }
            other => {
                eprintln!("tileproof-morok: unknown argument `{other}`\n\n{USAGE}");
                std::process::exit(2)
            }
        }
    }
    if let Some(path) = bench {
        if let Err(e) = bench::run(&path, vars).map(|_| ()) {
            eprintln!("tileproof-morok: {e}");
            std::process::exit(1);
        }
        return;
    }
    if let Err(e) =
        tileproof_adapter::serve(Morok::new(entry, vars, gc_every).with_patterns(patterns))
    {
        eprintln!("tileproof-morok: {e}");
        std::process::exit(1);
    }
}
