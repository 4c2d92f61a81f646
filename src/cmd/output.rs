//! Printing to standard output.

/// Prints a line to standard output, ignoring a closed pipe
/// (`tileproof fuzz | head` must not panic).
macro_rules! say {
    ($($t:tt)*) => {{
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}
pub(crate) use say;
