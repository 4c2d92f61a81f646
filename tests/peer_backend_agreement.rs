//! The peers' backends compile literally: on a few hundred random cases per
//! peer (the campaigns' generators, projected onto each profile), the
//! source compiled by the peer's own compiler computes what tileproof's
//! interpreter computes at every point where the source is defined. A
//! disagreement is a bug in the adapter, in tileproof's semantics or in the
//! peer's code generator (nothing is simplified here), and is reported as
//! that. Sources the peer's compiler rejects as written (TVM's LLVM code
//! generator on `true ^ true`, say: its pipeline would have folded it) are
//! counted and listed, not disagreements. Needs the pinned peers (`sh adapters/setup-venv.sh`,
//! and Morok's adapter built): ignored by a plain `cargo test`; `.ci/run` runs it with `--ignored`.

use engine::semantics::Model;
use fuzz::confirm::agreement;
use fuzz::generate::{Case, Generator};
use fuzz::oracle::Domain;
use fuzz::peer::Peer;
use fuzz::subject::Subject;
use std::path::Path;
use std::time::Duration;

/// Cases per peer configuration (`TILEPROOF_AGREEMENT_CASES` to change).
fn cases() -> u64 {
    std::env::var("TILEPROOF_AGREEMENT_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200)
}

/// Cases for a backend that compiles through a whole compiler per case
/// (MLIR's `iree`: lower-affine and iree-compile, about 0.5 s a case):
/// `TILEPROOF_AGREEMENT_COMPILED_CASES`, 50 by default (CI); the nightly
/// runs 300.
fn compiled_cases() -> u64 {
    std::env::var("TILEPROOF_AGREEMENT_COMPILED_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50)
}

/// Points of each case sent to the backend: the whole domain up to this
/// many, else a sample.
const POINTS: u64 = 32;

/// A Python adapter of `adapters/`, run by the peers' venv.
fn python_adapter(adapter: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = root.join(".venv-peers/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run sh adapters/setup-venv.sh",
        python.display()
    );
    format!(
        "{} {}",
        python.display(),
        root.join("adapters").join(adapter).display()
    )
}

/// The Morok adapter (`adapters/morok`, a workspace of its own).
fn morok_adapter(args: &str) -> String {
    let bin =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("adapters/morok/target/release/tileproof-morok");
    assert!(
        bin.exists(),
        "{} is missing: run cargo build --release --manifest-path adapters/morok/Cargo.toml",
        bin.display()
    );
    format!("{} {args}", bin.display())
}

fn check_peer(cmd: &str) {
    check_backends(cmd, None, cases());
}

/// `cases` cases on each backend of `only` (all the peer offers: None).
fn check_backends(cmd: &str, only: Option<&[&str]>, cases: u64) {
    let peer = Peer::start(cmd, Duration::from_secs(60)).expect("the adapter starts");
    let backends: Vec<String> = peer
        .backends()
        .iter()
        .filter(|b| only.is_none_or(|o| o.contains(&b.as_str())))
        .cloned()
        .collect();
    assert!(
        !backends.is_empty(),
        "{cmd} offers none of the backends {only:?}"
    );
    let profile = peer.profile().clone();
    let model = Model {
        width: profile.width(),
        ..profile.model()
    };
    let (mut agreed, mut unsupported, mut bad, mut rejected) =
        (0usize, 0usize, Vec::new(), Vec::new());
    for k in 0..cases {
        let generator = Generator::ALL[(k % 2) as usize];
        let case = Case::from_seed(generator, fuzz::rng::mix(0xA6EE, k));
        let (g, roots) = profile.project(&case.graph, &case.roots);
        let domain = Domain::new(&g, &roots);
        let n = domain.size().min(POINTS as u128) as u64;
        let mut point = vec![0i64; domain.len()];
        let envs: Vec<Vec<i64>> = (0..n)
            .map(|i| {
                if domain.size() <= POINTS as u128 {
                    domain.decode(i, &mut point);
                } else {
                    domain.sample(k, i, &mut point);
                }
                domain.env(&g, &point)
            })
            .collect();
        for b in &backends {
            let a = agreement(&peer, b, &g, &roots, &envs, model);
            agreed += a.agreed;
            if a.unsupported.is_some() {
                unsupported += 1;
            }
            if let Some(e) = a.compile_error {
                rejected.push(format!("{b}: case {k}: {e}"));
            }
            if let Some(d) = a.disagreement {
                bad.push(format!(
                    "{b}: case {k} ({generator:?}):\n{}  {d}",
                    engine::print::program(&g, &roots)
                ));
            }
        }
    }
    eprintln!(
        "{}: {} cases x {} backends: {agreed} points agree, {unsupported} runs not compilable as written, {} rejected by the peer's compiler, {} disagreements",
        peer.name(),
        cases,
        backends.len(),
        rejected.len(),
        bad.len()
    );
    for r in &rejected {
        eprintln!("  rejected: {r}");
    }
    assert!(
        bad.is_empty(),
        "{}: the literal compile disagrees with the interpreter:\n{}",
        peer.name(),
        bad.join("\n")
    );
    assert!(agreed > 0, "{}: no point was compared", peer.name());
}

#[test]
#[ignore = "needs the pinned peers: sh adapters/setup-venv.sh, then cargo test --release --test peer_backend_agreement -- --ignored"]
fn tvm_int64_compiles_literally() {
    check_peer(&python_adapter("tvm_adapter.py"));
}

#[test]
#[ignore = "needs the pinned peers: sh adapters/setup-venv.sh, then cargo test --release --test peer_backend_agreement -- --ignored"]
fn tvm_int32_compiles_literally() {
    check_peer(&python_adapter("tvm_adapter.py --dtype int32"));
}

#[test]
#[ignore = "needs the pinned peers: sh adapters/setup-venv.sh, then cargo test --release --test peer_backend_agreement -- --ignored"]
fn tinygrad_compiles_literally() {
    check_peer(&python_adapter("tinygrad_adapter.py"));
}

/// Halide's JIT (`jit`): every operation a Func of its own, realized.
/// (`fused` runs Halide's simplifier on the source too: not literal.)
#[test]
#[ignore = "needs the pinned peers: sh adapters/setup-venv.sh, then cargo test --release --test peer_backend_agreement -- --ignored"]
fn halide_compiles_literally() {
    check_backends(
        &python_adapter("halide_adapter.py"),
        Some(&["jit"]),
        cases(),
    );
}

#[test]
#[ignore = "needs the Morok adapter: cargo build --release --manifest-path adapters/morok/Cargo.toml, then cargo test --release --test peer_backend_agreement -- --ignored"]
fn morok_compiles_literally() {
    // Variables both as DEFINE_VARs and as loop RANGEs (the default).
    check_peer(&morok_adapter(""));
    check_peer(&morok_adapter("--vars define"));
}

/// MLIR's folders: `apply` (affine.apply's constant folding) and `fold`
/// (each node built from constants).
#[test]
#[ignore = "needs the pinned peers: sh adapters/setup-venv.sh, then cargo test --release --test peer_backend_agreement -- --ignored"]
fn mlir_folders_compute_literally() {
    check_backends(
        &python_adapter("mlir_adapter.py --entry construct"),
        Some(&["apply", "fold"]),
        cases(),
    );
}

/// MLIR's compiled code (`iree`: lower-affine, iree-compile, IREE's
/// runtime).
#[test]
#[ignore = "needs the pinned peers: sh adapters/setup-venv.sh, then cargo test --release --test peer_backend_agreement -- --ignored"]
fn mlir_compiled_code_computes_literally() {
    check_backends(
        &python_adapter("mlir_adapter.py --entry construct"),
        Some(&["iree"]),
        compiled_cases(),
    );
}
