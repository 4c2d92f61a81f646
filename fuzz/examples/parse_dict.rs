//! Prints the libFuzzer dictionary of the `parse` target
//! (`fuzz::targets::parse_dictionary`). The nightly workflow runs
//! `cargo run -p tileproof-fuzz --example parse_dict > fuzz/parse.dict` and
//! passes `-dict=fuzz/parse.dict`.

fn main() {
    print!("{}", fuzz::targets::parse_dictionary());
}
