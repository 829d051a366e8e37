//! A process a job starts (a step, or the shell of a `--job` command),
//! watched through a pidfd: waiting for the first of several to end, with
//! a deadline, looks at these processes only (never at another child of
//! the same process), and no thread or signal handler is needed. Each dies
//! with the thread that started it (`PR_SET_PDEATHSIG`); one dropped before
//! it was reaped is killed and reaped.

use super::JobError;
use crate::measure::clock::now_ns;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitpid, WaitStatus};
use nix::time::{clock_gettime, ClockId};
use nix::unistd::Pid;
use std::os::fd::{AsFd as _, FromRawFd as _, OwnedFd};
use std::process::Command;

/// A started process, not yet reaped.
#[derive(Debug)]
pub struct JobChild {
    pid: Pid,
    /// Readable once the process has ended.
    pidfd: OwnedFd,
    /// Its CPU-time clock (`None` if the kernel would not give it).
    clock: Option<ClockId>,
    reaped: bool,
}

impl JobChild {
    /// Starts `command` (for messages: `what`), to die with the calling
    /// thread.
    pub fn spawn(command: &mut Command, what: &str) -> Result<Self, JobError> {
        crate::system::process_tree::die_with_this_process(command);
        let child = command.spawn().map_err(|error| JobError::Start {
            what: what.to_string(),
            error,
        })?;
        // Dropping `child` neither waits for nor kills the process: it is
        // watched and reaped by its pid from here on.
        let pid = Pid::from_raw(child.id() as i32);
        let pidfd = pidfd_open(pid).map_err(|error| {
            let _ = kill(pid, Signal::SIGKILL);
            let _ = waitpid(pid, None);
            JobError::Start {
                what: format!("{what} (pidfd_open, Linux 5.3 or later)"),
                error,
            }
        })?;
        Ok(Self {
            pid,
            pidfd,
            clock: ClockId::pid_cpu_clock_id(pid).ok(),
            reaped: false,
        })
    }

    /// CPU time the process has used so far (0 once it has ended).
    pub fn cpu_ns(&self) -> u64 {
        self.clock
            .and_then(|clock| clock_gettime(clock).ok())
            .map_or(0, |t| {
                t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64
            })
    }

    /// Reaps the process, which [`wait_any`] said has ended; `None` when it
    /// exited with 0, else how it ended (`exit code 3`, `killed by SIGKILL`).
    pub fn reap(&mut self) -> Result<Option<String>, JobError> {
        let status = loop {
            match waitpid(self.pid, None) {
                Err(nix::errno::Errno::EINTR) => continue,
                other => break other,
            }
        };
        self.reaped = true;
        match status.map_err(JobError::Wait)? {
            WaitStatus::Exited(_, 0) => Ok(None),
            WaitStatus::Exited(_, code) => Ok(Some(format!("exit code {code}"))),
            WaitStatus::Signaled(_, signal, _) => Ok(Some(format!("killed by {signal}"))),
            other => Ok(Some(format!("{other:?}"))),
        }
    }
}

impl Drop for JobChild {
    fn drop(&mut self) {
        if !self.reaped {
            let _ = kill(self.pid, Signal::SIGKILL);
            let _ = waitpid(self.pid, None);
        }
    }
}

/// The index of one of `children` that has ended, waiting until the
/// `CLOCK_MONOTONIC` time `until_ns` at most; `None` once that passed.
pub fn wait_any(children: &[&JobChild], until_ns: u64) -> Result<Option<usize>, JobError> {
    loop {
        let mut fds: Vec<PollFd> = children
            .iter()
            .map(|c| PollFd::new(c.pidfd.as_fd(), PollFlags::POLLIN))
            .collect();
        let left_ns = until_ns.saturating_sub(now_ns());
        // Rounded up, so a wait never ends before `until_ns`.
        let left_ms = left_ns.div_ceil(1_000_000).min(i32::MAX as u64);
        let timeout = PollTimeout::try_from(left_ms as u128).unwrap_or(PollTimeout::MAX);
        match poll(&mut fds, timeout) {
            Ok(0) if left_ns == 0 => return Ok(None),
            Ok(_) => {
                let ended = fds.iter().position(|fd| fd.any() == Some(true));
                if ended.is_some() {
                    return Ok(ended);
                }
            }
            Err(nix::errno::Errno::EINTR) => {}
            Err(errno) => return Err(JobError::Wait(errno)),
        }
    }
}

/// A pidfd of process `pid`: readable once it has ended.
fn pidfd_open(pid: Pid) -> std::io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags, and returns a new file
    // descriptor or -1; nothing else is touched.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid.as_raw(), 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by the kernel and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(script: &str) -> JobChild {
        JobChild::spawn(Command::new("/bin/sh").args(["-c", script]), "a test shell").unwrap()
    }

    #[test]
    fn the_first_to_end_is_found_and_its_status_read() {
        let slow = shell("sleep 30");
        let quick = shell("exit 3");
        let until_ns = now_ns() + 10_000_000_000;
        assert_eq!(wait_any(&[&slow, &quick], until_ns).unwrap(), Some(1));
        let mut quick = quick;
        assert_eq!(quick.reap().unwrap().as_deref(), Some("exit code 3"));
        let mut ok = shell("exit 0");
        assert_eq!(wait_any(&[&ok], until_ns).unwrap(), Some(0));
        assert_eq!(ok.reap().unwrap(), None);
        // Dropped unreaped: killed and reaped.
        drop(slow);
    }

    #[test]
    fn waiting_ends_at_the_deadline() {
        let mut slow = shell("sleep 30");
        let start_ns = now_ns();
        assert_eq!(wait_any(&[&slow], start_ns + 50_000_000).unwrap(), None);
        assert!(now_ns() >= start_ns + 50_000_000);
        kill(slow.pid, Signal::SIGKILL).unwrap();
        assert_eq!(
            wait_any(&[&slow], now_ns() + 10_000_000_000).unwrap(),
            Some(0)
        );
        assert_eq!(slow.reap().unwrap().as_deref(), Some("killed by SIGKILL"));
    }

    #[test]
    fn a_program_that_is_not_there_cannot_start() {
        let err = JobChild::spawn(&mut Command::new("/nonexistent/tool"), "the tool").unwrap_err();
        assert!(
            err.to_string().starts_with("cannot start the tool: "),
            "{err}"
        );
    }
}
