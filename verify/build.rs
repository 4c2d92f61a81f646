//! Z3 is the one that verify/setup-z3.sh installs in `.z3/` (z3-sys links
//! it through that directory's pkg-config file, .cargo/config.toml): this
//! says so clearly where it is missing, and lets every binary that links it
//! find the library at run time (an rpath), this crate's tests here and the
//! CLI's through the `links` metadata (`DEP_TILEPROOF_Z3_LIBDIR`).
use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"))
        .parent()
        .expect("verify/ is inside the repository")
        .to_path_buf();
    let pc = root.join(".z3/z3.pc");
    let lib = root.join(".z3/lib");
    println!("cargo:rerun-if-changed={}", pc.display());
    if !pc.exists() || !lib.join("libz3.so").exists() {
        panic!(
            "Z3 is not installed where tileproof links it ({}): run `sh verify/setup-z3.sh` (the README's Install section)",
            lib.display()
        );
    }
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib.display());
    println!("cargo:libdir={}", lib.display());
}
