//! Prints a libFuzzer dictionary for the `parse` target: every token of
//! the text format, from the engine (so the dictionary cannot fall behind
//! the op table). The nightly workflow runs
//! `cargo run -p tileproof-fuzz --example parse_dict > parse.dict` and
//! passes `-dict=parse.dict`.

fn main() {
    for t in engine::parse::tokens() {
        // libFuzzer's dictionary syntax: one quoted string per line, with
        // `\\`, `\"` and `\n` escaped.
        let quoted = t
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', "\\n");
        println!("\"{quoted}\"");
    }
}
