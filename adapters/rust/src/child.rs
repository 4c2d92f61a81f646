//! Running compiled code in a child process, so that a trap (SIGFPE from a
//! division, SIGSEGV from a bad address) is an answer of the adapter and
//! not its death (docs/protocol.md, section 5: "every evaluation runs in a
//! child process").
//!
//! The child is a `fork` of the adapter: call [`in_child`] only from a
//! process with one thread doing work (the serve loop's), as a forked
//! child has only the forking thread.

use std::io::Read;
use std::os::fd::FromRawFd;
use std::time::{Duration, Instant};

/// How a child ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It exited normally; what it wrote.
    Output(Vec<u8>),
    /// It exited with this status; what it wrote.
    Failed(i32, Vec<u8>),
    /// Killed by this signal (`SIGFPE`); what it wrote before.
    Signal(String, Vec<u8>),
    /// It did not end within the timeout, and was killed; what it wrote.
    Timeout(Vec<u8>),
}

/// The name of signal `sig` (`SIGFPE`), or `signal N`.
pub fn signal_name(sig: i32) -> String {
    match sig {
        libc::SIGFPE => "SIGFPE".into(),
        libc::SIGSEGV => "SIGSEGV".into(),
        libc::SIGBUS => "SIGBUS".into(),
        libc::SIGILL => "SIGILL".into(),
        libc::SIGABRT => "SIGABRT".into(),
        libc::SIGTRAP => "SIGTRAP".into(),
        libc::SIGKILL => "SIGKILL".into(),
        other => format!("signal {other}"),
    }
}

/// Runs `work` in a forked child, which writes its result through the
/// writer it is given; returns how the child ended, within `timeout`.
pub fn in_child(
    timeout: Duration,
    work: impl FnOnce(&mut dyn std::io::Write),
) -> std::io::Result<Outcome> {
    let mut fds = [0i32; 2];
    // SAFETY: pipe(2) fills the two descriptors we own from here on.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let (r, w) = (fds[0], fds[1]);
    // SAFETY: the child only runs `work` and `_exit`s; it never returns
    // into the parent's code.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        // SAFETY: closing our own descriptors.
        unsafe {
            libc::close(r);
            libc::close(w);
        }
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: in the child: our descriptors; `_exit` skips the
        // parent's destructors and atexit handlers.
        unsafe {
            libc::close(r);
            let mut f = std::fs::File::from_raw_fd(w);
            let code = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&mut f)))
            {
                Ok(()) => 0,
                Err(_) => 101,
            };
            drop(f);
            libc::_exit(code);
        }
    }
    // SAFETY: the parent owns `r`; `w` is the child's.
    unsafe { libc::close(w) };
    let mut reader = unsafe { std::fs::File::from_raw_fd(r) };
    // A reader thread, so that a child that writes much never blocks on a
    // full pipe while we wait for it.
    let handle = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = reader.read_to_end(&mut buf);
        buf
    });
    let end = Instant::now() + timeout;
    let mut status = 0i32;
    let mut timed_out = false;
    loop {
        // SAFETY: waitpid on our own child.
        let done = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if done == pid {
            break;
        }
        if Instant::now() >= end {
            // SAFETY: killing and reaping our own child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            timed_out = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let out = handle.join().unwrap_or_default();
    if timed_out {
        return Ok(Outcome::Timeout(out));
    }
    Ok(if libc::WIFSIGNALED(status) {
        Outcome::Signal(signal_name(libc::WTERMSIG(status)), out)
    } else if libc::WEXITSTATUS(status) == 0 {
        Outcome::Output(out)
    } else {
        Outcome::Failed(libc::WEXITSTATUS(status), out)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_reports_what_it_wrote_or_the_signal_that_killed_it() {
        let ok = in_child(Duration::from_secs(10), |w| {
            w.write_all(b"42").unwrap();
        })
        .unwrap();
        assert_eq!(ok, Outcome::Output(b"42".to_vec()));
        let trap = in_child(Duration::from_secs(10), |w| {
            w.write_all(b"1\n").unwrap();
            unsafe { libc::raise(libc::SIGFPE) };
        })
        .unwrap();
        assert_eq!(trap, Outcome::Signal("SIGFPE".into(), b"1\n".to_vec()));
        let slow = in_child(Duration::from_millis(200), |_| {
            std::thread::sleep(Duration::from_secs(30));
        })
        .unwrap();
        assert_eq!(slow, Outcome::Timeout(Vec::new()));
    }
}
