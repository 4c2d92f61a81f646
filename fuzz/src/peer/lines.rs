//! Reading a child's output in bounded memory: protocol lines as bytes
//! with a length limit, and a bounded tail of its standard error.
//!
//! A peer's adapter is someone else's program: it may print a line of
//! gigabytes, bytes that are not UTF-8, or megabytes a second of stderr
//! without a newline. `BufRead::lines` would buffer any of those whole (or
//! stop at the first bad byte); these readers keep at most `limit + 1`
//! bytes of a line and say what was wrong with it, keeping its first bytes
//! for the report.

use std::collections::VecDeque;
use std::io::{self, BufRead, Read};

/// The default longest protocol line tileproof reads (`--peer-max-line`):
/// four times the longest request it sends.
pub const DEFAULT_MAX_LINE: usize = 4 << 20;

/// How many bytes of a bad line a report keeps.
pub const HEAD: usize = 200;

/// A line that cannot be a protocol message, with its first bytes
/// (lossily decoded) for the report.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadLine {
    #[error("a line longer than {limit} bytes (--peer-max-line), starting `{head}`")]
    TooLong { limit: usize, head: String },
    #[error("a line that is not UTF-8 (invalid byte at offset {at}): `{head}`")]
    NotUtf8 { at: usize, head: String },
    #[error("a partial line (no newline) before its output ended: `{head}`")]
    Unterminated { head: String },
}

/// What [`read_line`] found next.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A complete line, without its newline (and without a `\r` before it).
    Text(String),
    /// A line that is not one: the stream should not be read further after
    /// `TooLong` (the rest of that line is still unread).
    Bad(BadLine),
    /// The end of the stream, at a line boundary.
    End,
}

/// Reads the next line of `r`, at most `limit` bytes before its newline.
/// `buf` is scratch space, reused between calls; it never holds more than
/// `limit + 1` bytes.
pub fn read_line(r: &mut impl BufRead, limit: usize, buf: &mut Vec<u8>) -> io::Result<Line> {
    buf.clear();
    // `take` bounds what `read_until` may buffer: one byte past the limit
    // tells an over-long line from one of exactly `limit` bytes.
    let n = r.by_ref().take(limit as u64 + 1).read_until(b'\n', buf)?;
    if n == 0 {
        return Ok(Line::End);
    }
    let complete = buf.last() == Some(&b'\n');
    if complete {
        buf.pop();
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
    }
    if buf.len() > limit {
        return Ok(Line::Bad(BadLine::TooLong {
            limit,
            head: head(buf),
        }));
    }
    if !complete {
        return Ok(Line::Bad(BadLine::Unterminated { head: head(buf) }));
    }
    match std::str::from_utf8(buf) {
        Ok(s) => Ok(Line::Text(s.to_string())),
        Err(e) => Ok(Line::Bad(BadLine::NotUtf8 {
            at: e.valid_up_to(),
            head: head(buf),
        })),
    }
}

/// The first [`HEAD`] bytes of `bytes`, decoded lossily, control
/// characters escaped (a report is one line of text).
pub fn head(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(HEAD)];
    let mut s: String = String::from_utf8_lossy(cut)
        .chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect();
    if bytes.len() > HEAD {
        s.push_str("...");
    }
    s
}

/// The last lines of a stream (its standard error, kept for reports), in
/// bounded memory however much or however it writes.
#[derive(Debug)]
pub struct Tail {
    lines: VecDeque<String>,
    max_lines: usize,
    /// The line being read, cut at `max_line` bytes.
    current: Vec<u8>,
    max_line: usize,
}

impl Tail {
    /// Keeps the last `max_lines` lines, each cut to `max_line` bytes.
    pub fn new(max_lines: usize, max_line: usize) -> Tail {
        Tail {
            lines: VecDeque::new(),
            max_lines,
            current: Vec::new(),
            max_line,
        }
    }

    /// Takes the next bytes of the stream.
    pub fn push(&mut self, bytes: &[u8]) {
        for piece in bytes.split_inclusive(|&b| b == b'\n') {
            let (text, ends) = match piece.strip_suffix(b"\n") {
                Some(t) => (t, true),
                None => (piece, false),
            };
            let room = self.max_line.saturating_sub(self.current.len());
            self.current
                .extend_from_slice(&text[..text.len().min(room)]);
            if ends {
                self.end_line();
            }
        }
    }

    fn end_line(&mut self) {
        if self.lines.len() == self.max_lines {
            self.lines.pop_front();
        }
        let line = String::from_utf8_lossy(&self.current).into_owned();
        self.lines.push_back(line);
        self.current.clear();
    }

    /// The kept lines, the unfinished one last.
    pub fn lines(&self) -> Vec<String> {
        let mut out: Vec<String> = self.lines.iter().cloned().collect();
        if !self.current.is_empty() {
            out.push(String::from_utf8_lossy(&self.current).into_owned());
        }
        out
    }
}

/// Reads `r` to its end into `tail` (locked for each chunk only).
pub fn drain_into(mut r: impl Read, tail: &std::sync::Mutex<Tail>) {
    let mut chunk = [0u8; 8192];
    loop {
        match r.read(&mut chunk) {
            Ok(0) => return,
            Ok(n) => tail
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(input: &[u8], limit: usize) -> Vec<Line> {
        let mut r = io::BufReader::with_capacity(16, input);
        let mut buf = Vec::new();
        let mut out = Vec::new();
        loop {
            let l = read_line(&mut r, limit, &mut buf).unwrap();
            let stop = matches!(l, Line::End | Line::Bad(BadLine::TooLong { .. }));
            out.push(l);
            if stop {
                return out;
            }
        }
    }

    #[test]
    fn lines_within_the_limit_are_read_whole() {
        assert_eq!(
            all(b"{\"a\": 1}\r\nxyz\n\n", 9),
            vec![
                Line::Text("{\"a\": 1}".into()),
                Line::Text("xyz".into()),
                Line::Text(String::new()),
                Line::End
            ]
        );
    }

    #[test]
    fn a_line_over_the_limit_is_cut_and_keeps_its_head() {
        let long = [b'1'; 40];
        let got = all(&[&long[..], b"\n"].concat(), 10);
        assert_eq!(
            got,
            vec![Line::Bad(BadLine::TooLong {
                limit: 10,
                head: "1".repeat(11)
            })]
        );
    }

    #[test]
    fn a_line_that_is_not_utf8_is_bad_and_the_next_one_is_read() {
        let got = all(b"\xff\xfe\x00garbage\nok\n", 100);
        assert_eq!(
            got,
            vec![
                Line::Bad(BadLine::NotUtf8 {
                    at: 0,
                    head: "\u{fffd}\u{fffd}\\u{0}garbage".into()
                }),
                Line::Text("ok".into()),
                Line::End
            ]
        );
    }

    #[test]
    fn a_partial_last_line_is_unterminated() {
        assert_eq!(
            all(b"ok\n{\"id\": 1, \"tr", 100),
            vec![
                Line::Text("ok".into()),
                Line::Bad(BadLine::Unterminated {
                    head: "{\"id\": 1, \"tr".into()
                }),
                Line::End
            ]
        );
    }

    #[test]
    fn a_tail_keeps_the_last_lines_each_cut() {
        let mut t = Tail::new(2, 4);
        t.push(b"first\nsecond li");
        t.push(b"ne\nthird\nunfini");
        t.push(&[b'x'; 100_000]);
        assert_eq!(t.lines(), vec!["seco", "thir", "unfi"]);
        assert!(t.current.len() <= 4);
    }
}
