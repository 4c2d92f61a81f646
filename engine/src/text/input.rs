//! The input formats a program is read in, and the one detector every
//! command uses to tell them apart (docs/formats.md): the text format
//! (`var`, `expr`, `expect` lines) and XLA indexing maps.

use crate::text::parse::{parse_program, PResult, Program};
use crate::text::xla::{looks_like_map, parse_map, XlaMap};

/// The syntax of an input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    /// `var`, `expr` and `expect` lines.
    Text,
    /// An XLA indexing map: `(d0, d1)[s0] -> (...)`, then its domain.
    Xla,
}

/// The syntax `text` is in: a map when its first line that is not blank or
/// a comment is `(dims)[symbols] -> (...)`, else the text format (the
/// text format has no line of that shape, so the two never overlap).
pub fn detect(text: &str) -> Syntax {
    if looks_like_map(text) {
        Syntax::Xla
    } else {
        Syntax::Text
    }
}

/// A program read from an input, and the XLA map it was read from (if it
/// was one: printing a map back needs its variable kinds).
#[derive(Clone)]
pub struct Input {
    pub program: Program,
    pub map: Option<XlaMap>,
}

/// Reads `text` in `syntax`, else in the syntax [`detect`]ed. Errors carry
/// their line and column.
pub fn read(text: &str, syntax: Option<Syntax>) -> PResult<Input> {
    Ok(match syntax.unwrap_or_else(|| detect(text)) {
        Syntax::Text => Input {
            program: parse_program(text)?,
            map: None,
        },
        Syntax::Xla => {
            let m = parse_map(text)?;
            Input {
                program: m.program.clone(),
                map: Some(m),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_map_is_detected_by_its_first_line_and_a_parenthesized_expression_is_not() {
        assert_eq!(
            detect("# c\n\n(d0) -> (d0)\ndomain:\nd0 in [0, 3]\n"),
            Syntax::Xla
        );
        assert_eq!(detect("(x + 1) // 2\n"), Syntax::Text);
        assert_eq!(detect("var x in [0, 3]\nexpr (x + 1) // 2\n"), Syntax::Text);
        let forced = read("(d0) -> (d0)\ndomain:\nd0 in [0, 3]\n", Some(Syntax::Text));
        assert!(matches!(forced, Err(e) if e.span.line == 1 && e.span.col == 1));
    }
}
