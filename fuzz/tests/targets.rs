//! The cargo-fuzz targets: their bodies take any bytes, and built without
//! libFuzzer their binaries replay input files (how an artifact is
//! reproduced on stable Rust).

use fuzz::generate::Generator;
use fuzz::rng::seed_bytes;
use std::process::Command;

#[test]
fn the_target_bodies_take_arbitrary_bytes() {
    for s in 0..40u64 {
        let bytes = seed_bytes(s, (s as usize * 37) % 300);
        fuzz::targets::graph(Generator::Tiled, &bytes);
        fuzz::targets::parse(&bytes);
        let text: Vec<u8> = bytes
            .iter()
            .map(|b| b" var expr in [ ] , + - * / % ( ) x y 0 1 9 \n"[*b as usize % 43])
            .collect();
        fuzz::targets::parse(&text);
    }
    fuzz::targets::graph(Generator::Tiled, &[]);
    fuzz::targets::graph(Generator::Expr, &[]);
    // libFuzzer's first find with the dictionary (-max_len 1 MiB, 2
    // minutes): a map with no result read, but printed as no program.
    fuzz::targets::parse(b"()->()#");
}

#[test]
fn the_protocol_target_reads_what_hostile_adapters_print() {
    let hello = br#"{"tileproof": 1, "name": "x", "version": "1", "profile": {"ops": ["add"], "invalid": true, "integers": "int32"}}"#;
    let lines: Vec<Vec<u8>> = vec![
        hello.to_vec(),
        br#"{"id": 7, "trees": [["where", ["var", "c"], ["var", "r0"], ["invalid"]], ["bool", true]]}"#.to_vec(),
        br#"{"id": 7, "exprs": ["r0 + 0", "r0 < r1"], "fired": {"r": 2}}"#.to_vec(),
        br#"{"id": 7, "results": [{"values": [1, true]}, {"trap": "SIGFPE"}]}"#.to_vec(),
        br#"{"id": 7, "script": "print(1)"}"#.to_vec(),
        br#"{"id": 7, "rules": [{"name": "a", "pattern": "x"}, {"name": "a", "pattern": "y"}]}"#.to_vec(),
        br#"{"id": 7, "instances": [{"vars": [], "trees": [["const", 1]]}, 3]}"#.to_vec(),
        b"\xff\xfe\x00garbage".to_vec(),
        [&b"{\"id\": 7, \"trees\": ["[..], &b"[".repeat(3000), &b"]".repeat(3000), b"]}"].concat(),
        [&b"{\"id\": 7, \"exprs\": [\""[..], &b"(".repeat(1500), b"1", &b")".repeat(1500), b"\", \"true\"]}"].concat(),
        // Over the node budget within the line limit would need 10,000
        // operators: the line limit (4 KiB) cuts it first.
        [&b"{\"id\": 7, \"exprs\": [\"1"[..], &b" + 1".repeat(2000), b"\"]}"].concat(),
    ];
    let mut all = Vec::new();
    for l in &lines {
        fuzz::targets::protocol(l);
        all.extend_from_slice(l);
        all.push(b'\n');
    }
    fuzz::targets::protocol(&all);
    fuzz::targets::protocol(b"{\"id\": 7, \"tr");
    for s in 0..40u64 {
        fuzz::targets::protocol(&seed_bytes(s, (s as usize * 101) % 5000));
    }
}

#[test]
fn target_binaries_replay_input_files_without_libfuzzer() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("targets");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a"), seed_bytes(1, 64)).unwrap();
    std::fs::write(dir.join("b"), b"var x in [0, 3]\nexpr x +").unwrap();
    for exe in [
        env!("CARGO_BIN_EXE_tiled_graph"),
        env!("CARGO_BIN_EXE_parse"),
    ] {
        let out = Command::new(exe).arg(&dir).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{exe}: {stdout}");
        assert_eq!(stdout.matches("ok   ").count(), 2, "{stdout}");
        let usage = Command::new(exe).output().unwrap();
        assert_eq!(usage.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&usage.stderr).contains("cargo fuzz run"));
    }
    let out = Command::new(env!("CARGO_BIN_EXE_expr_tree"))
        .arg(dir.join("missing"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

/// The seeds the nightly gives the parse target (long chains of every
/// operator, deep nesting, a long map) go through every stage of it.
#[test]
fn the_parse_targets_long_seeds_pass_its_body() {
    let seeds = fuzz::targets::parse_seeds();
    assert_eq!(
        seeds.len(),
        engine::op::OPS.iter().filter(|(_, i)| i.arity == 2).count() + 2
    );
    for (_, text) in &seeds {
        assert!(text.len() > 100_000);
        fuzz::targets::parse(text.as_bytes());
    }
}

/// Reads one dictionary line as libFuzzer's `ParseDictionaryFile` does: a
/// quoted string whose only escapes are `\\`, `\"` and `\xHH`; anything
/// else makes libFuzzer refuse the whole file.
fn libfuzzer_entry(line: &str) -> Result<Vec<u8>, String> {
    let inner = line
        .strip_prefix('"')
        .and_then(|l| l.strip_suffix('"'))
        .ok_or_else(|| format!("not quoted: {line}"))?;
    let b = inner.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        match b.get(i + 1) {
            Some(b'\\') | Some(b'"') => {
                out.push(b[i + 1]);
                i += 2;
            }
            Some(b'x') => {
                let hex = std::str::from_utf8(b.get(i + 2..i + 4).ok_or("short \\x")?).unwrap();
                out.push(u8::from_str_radix(hex, 16).map_err(|e| format!("{line}: {e}"))?);
                i += 4;
            }
            _ => return Err(format!("bad escape in {line}")),
        }
    }
    Ok(out)
}

/// The nightly passes this file to libFuzzer with `-dict`: it must be in
/// libFuzzer's syntax (a `\n` escape made libFuzzer refuse it, so the parse
/// target never ran) and hold every token of the text format.
#[test]
fn the_parse_dictionary_is_in_libfuzzers_syntax_and_holds_every_token() {
    let dict = fuzz::targets::parse_dictionary();
    let entries: Vec<Vec<u8>> = dict
        .lines()
        .map(|l| libfuzzer_entry(l).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let tokens: Vec<Vec<u8>> = engine::parse::tokens()
        .iter()
        .map(|t| t.as_bytes().to_vec())
        .collect();
    assert_eq!(entries, tokens);
    assert!(entries.contains(&b"\n".to_vec()) && entries.contains(&b"//".to_vec()));
}
