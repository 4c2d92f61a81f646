//! Collects the kept Morok reproducers (`corpus/peers/morok.*/**/*.rs`)
//! and the controls (`control/*.rs`) into one module file, each reproducer
//! a module of its own.
use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn main() {
    // TILEPROOF_MOROK_CORPUS points elsewhere (a campaign's output) than
    // the repository's kept findings.
    println!("cargo:rerun-if-env-changed=TILEPROOF_MOROK_CORPUS");
    let corpus = std::env::var("TILEPROOF_MOROK_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../corpus/peers"));
    println!("cargo:rerun-if-changed={}", corpus.display());
    let mut files = Vec::new();
    if std::env::var("TILEPROOF_MOROK_CORPUS").is_ok() {
        collect(&corpus, &mut files);
    } else if let Ok(entries) = std::fs::read_dir(&corpus) {
        for e in entries.flatten() {
            if e.file_name().to_string_lossy().starts_with("morok.") {
                println!("cargo:rerun-if-changed={}", e.path().display());
                collect(&e.path(), &mut files);
            }
        }
    }
    files.sort();
    let mut text = String::new();
    for (i, f) in files.iter().enumerate() {
        let path = f.canonicalize().unwrap_or_else(|_| f.clone());
        text.push_str(&format!(
            "#[path = {:?}]\nmod r{i};\n",
            path.display().to_string()
        ));
    }
    // The controls: reproducers of cases where Morok is right, which must
    // pass (run-reproducers.sh tells them apart by the `control_` prefix).
    let control = Path::new(env!("CARGO_MANIFEST_DIR")).join("control");
    println!("cargo:rerun-if-changed={}", control.display());
    let mut controls = Vec::new();
    collect(&control, &mut controls);
    controls.sort();
    for f in &controls {
        let stem = f.file_stem().unwrap().to_string_lossy();
        text.push_str(&format!(
            "#[path = {:?}]\nmod control_{stem};\n",
            f.display().to_string()
        ));
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("reproducers.rs");
    std::fs::write(out, text).unwrap();
}
