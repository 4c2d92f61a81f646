//! One running adapter process: its stdin, its stdout read in bounded lines
//! by the thread that waits for an answer, the tail of its stderr, and its
//! whole process group killed when it is dropped.
//!
//! The waiting thread reads stdout itself (poll(2), then what the pipe
//! holds), rather than a reader thread handing it lines: an answer wakes
//! one thread, not two. A campaign waits for thousands of answers a second
//! on two cores, and each extra wake-up left a core idle.

use super::lines::{self, BadLine, Line, Tail};
use std::io::Read;
use std::os::fd::AsRawFd;
use std::process::{ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Lines of a process's standard error kept for reports, and the bytes
/// kept of each: the rest is read and dropped, however much it writes.
const STDERR_LINES: usize = 20;
const STDERR_LINE_BYTES: usize = 512;

/// Bytes read from stdout at a time. Only what one `read` returns is read
/// ahead of the line asked for, so an adapter that prints lines nobody
/// asked for waits on the full pipe rather than filling memory.
const CHUNK: usize = 64 << 10;

/// How often a wait for an answer checks that the adapter is still
/// running, and how long a line may trail its exit or the end of its
/// output: an adapter that exits (or closes its stdout) is reported
/// within about this long, even when a process it started still holds
/// its stdout.
const POLL: Duration = Duration::from_millis(100);
const EXIT_GRACE: Duration = Duration::from_millis(500);

/// One running adapter process.
pub(super) struct Process {
    pub(super) child: std::process::Child,
    pub(super) stdin: ChildStdin,
    stdout: Stdout,
    pub(super) stderr: Arc<Mutex<Tail>>,
    /// The peer's count of live processes, released when this one ends.
    pub(super) slot: Option<Arc<Slots>>,
}

/// How many adapter processes a peer runs at most, and how many are alive
/// (idle in the pool or serving a request).
pub(super) struct Slots {
    pub(super) live: Mutex<usize>,
    pub(super) freed: Condvar,
    pub(super) max: usize,
}

impl Process {
    /// Starts `sh -c cmd`; its stdout is read in lines of at most
    /// `max_line` bytes.
    pub(super) fn spawn(cmd: &str, max_line: usize) -> std::io::Result<Process> {
        let mut command = Command::new("sh");
        command.arg("-c").arg(cmd);
        // Its own process group, so that killing a hung peer also kills
        // what `sh -c` started (dash does not exec the last command: the
        // Python under it would go on computing, orphaned).
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        // The stderr reader is never joined: it ends when the pipe closes
        // (the process group is killed).
        let tail = Arc::new(Mutex::new(Tail::new(STDERR_LINES, STDERR_LINE_BYTES)));
        let sink = Arc::clone(&tail);
        std::thread::spawn(move || lines::drain_into(stderr, &sink));
        Ok(Process {
            child,
            stdin,
            stdout: Stdout {
                pipe: stdout,
                pending: Vec::new(),
                scanned: 0,
                max_line,
                ended: false,
            },
            stderr: tail,
            slot: None,
        })
    }

    /// The last lines of its standard error, as a suffix for a message.
    pub(super) fn stderr_tail(&self) -> String {
        // Give the stderr reader a moment to catch the last lines.
        std::thread::sleep(Duration::from_millis(20));
        let lines = self
            .stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .lines();
        if lines.is_empty() {
            String::new()
        } else {
            format!("; its stderr ends: {}", lines.join(" | "))
        }
    }

    /// Its exit status, if `sh` exits within `grace`.
    fn exited_within(&mut self, grace: Duration) -> Option<ExitStatus> {
        let end = Instant::now() + grace;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) if Instant::now() < end => std::thread::sleep(Duration::from_millis(10)),
                _ => return None,
            }
        }
    }

    /// The next line within `timeout`, watching the process meanwhile.
    pub(super) fn next_line(&mut self, timeout: Duration) -> Next {
        let end = Instant::now() + timeout;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.stdout.next(left.min(POLL)) {
                Some(Ok(line)) => return Next::Line(line),
                Some(Err(bad)) => return Next::Bad(bad),
                None if self.stdout.ended => {
                    return match self.exited_within(EXIT_GRACE) {
                        Some(status) => Next::Exited(status),
                        None => Next::ClosedStdout,
                    }
                }
                None => {
                    if let Ok(Some(status)) = self.child.try_wait() {
                        // A line it wrote before exiting may still be on
                        // its way; past that, something it started holds
                        // its stdout open and would keep the wait going.
                        return match self.stdout.next(EXIT_GRACE) {
                            Some(Ok(line)) => Next::Line(line),
                            Some(Err(bad)) => Next::Bad(bad),
                            None => Next::Exited(status),
                        };
                    }
                    if left.is_zero() {
                        return Next::Timeout;
                    }
                }
            }
        }
    }

    pub(super) fn kill(self) {
        // Dropping kills.
    }

    /// Kills the adapter's whole process group and reaps `sh`.
    fn kill_group(&mut self) {
        #[cfg(unix)]
        if let Ok(pid) = i32::try_from(self.child.id()) {
            // SAFETY: kill(2) on the group this process created at spawn;
            // no memory is involved.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A process's stdout, read in lines of at most `max_line` bytes.
struct Stdout {
    pipe: ChildStdout,
    /// Bytes read and not yet returned: never more than a line's limit and
    /// one chunk.
    pending: Vec<u8>,
    /// Bytes at the start of `pending` already searched for a newline (a
    /// long line arrives in many reads; each byte is searched once).
    scanned: usize,
    max_line: usize,
    /// The stream ended (or is not read past a bad line).
    ended: bool,
}

impl Stdout {
    /// The next line or bad line, waiting at most `wait` for more bytes;
    /// `None` when there is none yet, or the stream ended at a line
    /// boundary (`ended`).
    fn next(&mut self, wait: Duration) -> Option<Result<String, BadLine>> {
        let deadline = Instant::now() + wait;
        loop {
            if let Some(line) = self.buffered() {
                return Some(line);
            }
            if self.ended {
                return None;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if !readable(&self.pipe, left) {
                return None;
            }
            let at = self.pending.len();
            self.pending.resize(at + CHUNK, 0);
            match self.pipe.read(&mut self.pending[at..]) {
                Ok(n) => {
                    self.pending.truncate(at + n);
                    self.ended = n == 0;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
                    self.pending.truncate(at);
                }
                Err(_) => {
                    self.pending.truncate(at);
                    self.ended = true;
                }
            }
        }
    }

    /// A whole line of `pending`, an over-long one, or a partial one once
    /// the stream ended: classified as [`lines::read_line`] reads them.
    fn buffered(&mut self) -> Option<Result<String, BadLine>> {
        let newline = self.pending[self.scanned..]
            .iter()
            .position(|&b| b == b'\n')
            .map(|i| self.scanned + i);
        self.scanned = self.pending.len();
        let take = match newline {
            Some(i) => i + 1,
            None if self.pending.len() > self.max_line
                || (self.ended && !self.pending.is_empty()) =>
            {
                self.pending.len()
            }
            None => return None,
        };
        let mut buf = Vec::new();
        let line = lines::read_line(&mut &self.pending[..take], self.max_line, &mut buf);
        self.pending.drain(..take);
        self.scanned = 0;
        match line {
            Ok(Line::Text(s)) => Some(Ok(s)),
            Ok(Line::Bad(bad)) => {
                // Not read past: the process is dropped as garbage.
                self.ended = true;
                self.pending.clear();
                Some(Err(bad))
            }
            Ok(Line::End) | Err(_) => None,
        }
    }
}

/// Whether `pipe` has bytes (or its end) to read within `wait`.
fn readable(pipe: &ChildStdout, wait: Duration) -> bool {
    let mut fd = libc::pollfd {
        fd: pipe.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // Rounded up: a wait of under a millisecond still waits.
    let ms = i32::try_from(wait.as_micros().div_ceil(1000)).unwrap_or(i32::MAX);
    // SAFETY: poll(2) on one pollfd that lives across the call.
    let n = unsafe { libc::poll(&mut fd, 1, ms) };
    n > 0 && fd.revents != 0
}

/// What a process wrote next (see [`Process::next_line`]).
pub(super) enum Next {
    Line(String),
    Bad(BadLine),
    Timeout,
    Exited(ExitStatus),
    /// Its stdout ended but it did not exit.
    ClosedStdout,
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill_group();
        if let Some(slots) = &self.slot {
            *slots.live.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
            slots.freed.notify_one();
        }
    }
}
