//! Messages that go into one-line reports and `#` header lines: cut to a
//! length that keeps them on one line, newlines folded.

use engine::ir::{Graph, NodeId};
use engine::print;

/// Node `id` printed and cut like [`short`], in time bounded by that
/// length (a node of a long chain prints as the whole chain).
pub fn short_expr(g: &Graph, id: NodeId) -> String {
    print::expr_short(g, id, SHORT)
}

/// The longest text [`short`] leaves as it is.
pub const SHORT: usize = 120;

/// An expression cut to a length that keeps a message on one line.
pub fn short(s: &str) -> String {
    if s.chars().count() <= SHORT {
        s.to_string()
    } else {
        let cut: String = s.chars().take(SHORT - 3).collect();
        format!("{cut}...")
    }
}

/// Newlines folded into spaces: messages go into `#` header lines.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
