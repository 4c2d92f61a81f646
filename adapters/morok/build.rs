// The platform the adapter is built for: `cargo metadata` is asked for its
// packages alone when the translator locates morok-schedule's source
// (src/morok_source.rs).
fn main() {
    let target = std::env::var("TARGET").expect("cargo sets TARGET for build scripts");
    println!("cargo:rustc-env=TILEPROOF_MOROK_TARGET={target}");
    println!("cargo:rerun-if-changed=build.rs");
}
