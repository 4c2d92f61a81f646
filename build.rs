//! The CLI links Z3 through verify: its binaries find the library where
//! verify's build script found it (verify/build.rs).
fn main() {
    let lib =
        std::env::var("DEP_TILEPROOF_Z3_LIBDIR").expect("verify/build.rs names Z3's directory");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{lib}");
}
