//! Writes the `parse` target's seed inputs (`fuzz::targets::parse_seeds`:
//! long operator chains, deep nesting, a long XLA map) into a directory,
//! the libFuzzer corpus: `cargo run -p tileproof-fuzz --example parse_seeds
//! fuzz/corpus/parse` (the nightly workflow does, before the run).

fn main() -> std::io::Result<()> {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "fuzz/corpus/parse".into());
    std::fs::create_dir_all(&dir)?;
    for (name, text) in fuzz::targets::parse_seeds() {
        std::fs::write(
            std::path::Path::new(&dir).join(format!("seed-{name}")),
            text,
        )?;
    }
    Ok(())
}
