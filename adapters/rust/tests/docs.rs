//! docs/protocol.md shows the toy Rust adapter as it is.
#[test]
fn the_protocol_doc_shows_the_toy_example_verbatim() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let doc = std::fs::read_to_string(format!("{root}/docs/protocol.md")).unwrap();
    let toy = std::fs::read_to_string(format!("{root}/adapters/rust/examples/toy.rs")).unwrap();
    let code: Vec<&str> = toy.lines().filter(|l| !l.starts_with("//!")).collect();
    let section = doc
        .split("## A complete adapter in Rust")
        .nth(1)
        .expect("the section is there");
    let block = section
        .split("```rust\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a rust block");
    assert_eq!(
        block.trim_end(),
        code.join("\n").trim(),
        "docs/protocol.md's Rust adapter differs from examples/toy.rs"
    );
}
