//! A quick look at the engine on the peers' suites (`tests/peers/*.cases`),
//! for working on the engine without building the verifier and the fuzzer:
//! per suite, cases, unsound (checked with the interpreter, exhaustively on
//! small domains and at sampled points on larger ones), fewer/equal/more
//! div/mod than the peer, and the cases left with more div/mod or nodes.
//! The authoritative check is `tests/peer_suites.rs`.
//!
//! Run: `cargo run --release -p tileproof-engine --example peers [-- FILTER] [--all]`

use engine::dtype::Width;
use engine::interp::{check_point, eval, PointCheck};
use engine::ir::{Graph, NodeId};
use engine::parse::parse_program;
use engine::rewrite::Simplifier;
use engine::rules::builtin;

fn divmods(g: &Graph, roots: &[NodeId]) -> usize {
    g.reachable(roots)
        .iter()
        .filter(|&&n| g.node(n).op.is_divmod())
        .count()
}

fn show(g: &Graph, roots: &[NodeId]) -> String {
    roots
        .iter()
        .map(|&r| engine::print::expr(g, r))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The first point where `tgt` fails to refine `src`: every point of a
/// domain up to 2^16 points, else corners and pseudo-random points.
fn unsound(g: &Graph, src: &[NodeId], tgt: &[NodeId], w: Width) -> Option<String> {
    let vars = g.vars();
    let size: u128 = vars
        .iter()
        .map(|d| (d.hi as i128 - d.lo as i128 + 1) as u128)
        .product();
    let mut env: Vec<i128> = vars.iter().map(|d| d.lo as i128).collect();
    let check = |env: &[i128]| -> Option<String> {
        match check_point(eval(g, src, env, w), eval(g, tgt, env, w)) {
            PointCheck::Fails(f) => Some(format!("{f} at {env:?}")),
            _ => None,
        }
    };
    if size <= 1 << 16 {
        loop {
            if let Some(f) = check(&env) {
                return Some(f);
            }
            let j = (0..env.len())
                .rev()
                .find(|&j| env[j] < vars[j].hi as i128)?;
            env[j] += 1;
            for (k, d) in vars.iter().enumerate().skip(j + 1) {
                env[k] = d.lo as i128;
            }
        }
    }
    let mut s: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..60_000 {
        for (k, d) in vars.iter().enumerate() {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let span = (d.hi as i128 - d.lo as i128 + 1) as u128;
            let pick = s % 8;
            env[k] = match pick {
                0 => d.lo as i128,
                1 => d.hi as i128,
                _ => d.lo as i128 + ((s as u128 >> 3) % span) as i128,
            };
        }
        if let Some(f) = check(&env) {
            return Some(f);
        }
    }
    None
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let all = args.iter().any(|a| a == "--all");
    let quiet = args.iter().any(|a| a == "--quiet");
    let filter: Option<&String> = args.iter().find(|a| !a.starts_with("--"));
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/peers");
    let mut table = Vec::new();
    for suite in ["tinygrad", "tvm_rewrite", "tvm_canonical", "xla", "halide"] {
        let text = std::fs::read_to_string(dir.join(format!("{suite}.cases"))).unwrap();
        let mut width = Width::W64;
        let mut cases: Vec<(String, String)> = Vec::new();
        for line in text.lines() {
            if let Some(w) = line.strip_prefix("# width:") {
                if cases.is_empty() {
                    width = Width(w.trim().parse().unwrap());
                }
            }
            if let Some(name) = line.strip_prefix("case ") {
                cases.push((name.trim().to_string(), String::new()));
                continue;
            }
            if let Some(c) = cases.last_mut() {
                let t = line.trim_start();
                match t.strip_prefix("peer ") {
                    Some(rest) => c.1.push_str(&format!("expect {rest}\n")),
                    None => {
                        c.1.push_str(line);
                        c.1.push('\n');
                    }
                }
            }
        }
        let (mut n, mut bad, mut fewer, mut equal, mut more, mut dme, mut dmp, mut work) =
            (0, 0, 0, 0, 0, 0, 0, 0);
        let t0 = std::time::Instant::now();
        for (name, body) in &cases {
            if filter.is_some_and(|f| !name.contains(f.as_str())) {
                continue;
            }
            let mut p = parse_program(body).unwrap_or_else(|e| panic!("{name}: {e}"));
            let src = p.outputs.clone();
            let peer = p.expects.clone();
            let mut simp = Simplifier::new(builtin());
            simp.width = width;
            let out = match simp.simplify(&mut p.graph, &src, false) {
                Ok(o) => o.roots,
                Err(e) => {
                    println!("CAP {name}: {e}");
                    src.clone()
                }
            };
            let g = &p.graph;
            n += 1;
            if let Some(f) = unsound(g, &src, &out, width) {
                bad += 1;
                println!(
                    "UNSOUND {name}: {f}\n    input:  {}\n    engine: {}",
                    show(g, &src),
                    show(g, &out)
                );
            }
            let (de, dp) = (divmods(g, &out), divmods(g, &peer));
            let (ne, np) = (g.reachable(&out).len(), g.reachable(&peer).len());
            dme += de;
            dmp += dp;
            match de.cmp(&dp) {
                std::cmp::Ordering::Less => fewer += 1,
                std::cmp::Ordering::Equal => equal += 1,
                std::cmp::Ordering::Greater => more += 1,
            }
            let left = de > dp || ne > np;
            if left {
                work += 1;
            }
            if (left || all) && !quiet {
                println!(
                    "{name}  [dm {de} vs {dp}, nodes {ne} vs {np}]\n    input:  {}\n    engine: {}\n    peer:   {}",
                    show(g, &src),
                    show(g, &out),
                    show(g, &peer)
                );
            }
        }
        table.push(format!(
            "{suite:<14} {n:>5} {bad:>5} {fewer:>5} {equal:>5} {more:>5} {dme:>6} {dmp:>6} {work:>5} {:>8.1}ms",
            t0.elapsed().as_secs_f64() * 1e3
        ));
    }
    println!("suite          cases unsnd fewer equal  more dm-eng dm-peer work     time");
    for r in table {
        println!("{r}");
    }
}
