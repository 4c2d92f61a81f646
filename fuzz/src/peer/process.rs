//! One running adapter process: its stdin, its stdout read in bounded lines
//! on a thread of its own, the tail of its stderr, and its whole process
//! group killed when it is dropped.

use super::lines::{self, BadLine, Line, Tail};
use std::io::BufReader;
use std::process::{ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Lines of a process's standard error kept for reports, and the bytes
/// kept of each: the rest is read and dropped, however much it writes.
const STDERR_LINES: usize = 20;
const STDERR_LINE_BYTES: usize = 512;

/// Lines read ahead of the requests that want them: a reader that gets
/// this far ahead waits, and so does the adapter writing to it, so an
/// adapter that prints lines nobody asked for cannot fill memory.
const LINES_QUEUED: usize = 4;

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
    /// Its stdout's lines, or the bad line that ended the reading.
    pub(super) lines: Receiver<Result<String, BadLine>>,
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
        let (tx, lines) = mpsc::sync_channel(LINES_QUEUED);
        // Neither reader is ever joined: each ends when the pipe closes
        // (the process group is killed) or, for stdout, when the receiver
        // is dropped or after a bad line (the stream is not read past it).
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            let mut buf = Vec::new();
            loop {
                let line = match lines::read_line(&mut r, max_line, &mut buf) {
                    Ok(Line::Text(s)) => Ok(s),
                    Ok(Line::Bad(bad)) => Err(bad),
                    Ok(Line::End) | Err(_) => break,
                };
                let bad = line.is_err();
                if tx.send(line).is_err() || bad {
                    break;
                }
            }
        });
        let tail = Arc::new(Mutex::new(Tail::new(STDERR_LINES, STDERR_LINE_BYTES)));
        let sink = Arc::clone(&tail);
        std::thread::spawn(move || lines::drain_into(stderr, &sink));
        Ok(Process {
            child,
            stdin,
            lines,
            stderr: tail,
            slot: None,
        })
    }

    /// The last lines of its standard error, as a suffix for a message.
    pub(super) fn stderr_tail(&self) -> String {
        // Give the reader thread a moment to catch the last lines.
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
            match self.lines.recv_timeout(left.min(POLL)) {
                Ok(Ok(line)) => return Next::Line(line),
                Ok(Err(bad)) => return Next::Bad(bad),
                Err(RecvTimeoutError::Disconnected) => {
                    return match self.exited_within(EXIT_GRACE) {
                        Some(status) => Next::Exited(status),
                        None => Next::ClosedStdout,
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    if let Ok(Some(status)) = self.child.try_wait() {
                        // A line it wrote before exiting may still be on
                        // its way; past that, something it started holds
                        // its stdout open and would keep the reader waiting.
                        return match self.lines.recv_timeout(EXIT_GRACE) {
                            Ok(Ok(line)) => Next::Line(line),
                            Ok(Err(bad)) => Next::Bad(bad),
                            Err(_) => Next::Exited(status),
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
