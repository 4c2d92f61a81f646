//! One module per subcommand, plus the input helpers they share.

pub mod prove;
pub mod simplify;

use engine::parse::{parse_program, Program};
use std::io::Read;

/// Reads a file (or standard input for `-`) and parses it, reporting errors
/// as `file:line:col: reason`.
pub fn read_program(path: &str) -> Result<Program, String> {
    let text = read_text(path)?;
    parse_program(&text).map_err(|e| format!("{path}:{e}"))
}

/// Reads a file, or standard input for `-`.
pub fn read_text(path: &str) -> Result<String, String> {
    if path == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| format!("<stdin>: {e}"))?;
        Ok(s)
    } else {
        std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))
    }
}
