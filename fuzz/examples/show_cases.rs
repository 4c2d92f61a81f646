//! Prints the cases of a generator for a few seeds (for looking at what a
//! generator makes): `cargo run --release -p tileproof-fuzz --example
//! show_cases -- GENERATOR [N]`.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let g = args
        .get(1)
        .and_then(|n| fuzz::generate::Generator::by_name(n))
        .unwrap_or_else(|| panic!("usage: show_cases tiled|expr|splitsum|seeded [N]"));
    let n: u64 = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(5);
    for seed in 0..n {
        let c = fuzz::generate::Case::from_seed(g, fuzz::rng::mix(1, seed));
        println!("{c}");
    }
}
