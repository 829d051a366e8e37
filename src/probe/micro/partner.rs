//! A partner process, as LMbench's latency tests fork one: the other end of
//! a pipe or socket. The probe worker is single-threaded when it forks
//! (see `engine::worker`), and the partner runs only system calls on
//! descriptors and memory made before the fork, so it needs nothing the
//! fork could have left locked. It dies with the worker
//! (`PR_SET_PDEATHSIG`), stays in the scenario's process group (so the
//! orchestrator's kill reaches it too), never returns into the worker's
//! code, and is killed and reaped when its [`Partner`] is dropped.

use super::ops::OpError;
use nix::sys::signal::{kill, Signal};
use nix::sys::wait::waitpid;
use nix::unistd::{fork, getpid, getppid, ForkResult, Pid};
use std::ffi::CStr;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A running partner process.
pub struct Partner {
    pid: Pid,
}

impl Partner {
    /// Forks a partner called `name` (at most 15 bytes show) that runs
    /// `body` until it is killed; `body` returns only when it cannot go on
    /// (its peer is gone).
    pub fn start(name: &'static CStr, body: impl FnOnce()) -> Result<Self, OpError> {
        let null = File::options()
            .read(true)
            .write(true)
            .open("/dev/null")
            .map_err(OpError::of("cannot open /dev/null for a partner process"))?;
        let worker = getpid();
        // SAFETY: the probe worker is single-threaded, so the child is a
        // complete copy; it runs `body` and exits without returning.
        match unsafe { fork() } {
            Ok(ForkResult::Child) => run_partner(worker, &null, name, body),
            Ok(ForkResult::Parent { child }) => Ok(Self { pid: child }),
            Err(errno) => Err(OpError {
                what: "cannot fork a partner process",
                error: errno.into(),
            }),
        }
    }
}

impl Drop for Partner {
    fn drop(&mut self) {
        let _ = kill(self.pid, Signal::SIGKILL);
        let _ = waitpid(self.pid, None);
    }
}

/// The life of a partner: arms its death signal, leaves the worker's
/// protocol pipes, names itself, runs `body`, exits.
fn run_partner(worker: Pid, null: &File, name: &CStr, body: impl FnOnce()) -> ! {
    // SAFETY: prctl with integer arguments only.
    let armed = unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) } == 0;
    // The worker may have died before the death signal was armed.
    if !armed || getppid() != worker {
        exit_now(1);
    }
    // The worker's stdin and stdout are its pipes to the orchestrator; a
    // partner holding them would keep the worker's end of file from showing.
    // SAFETY: dup2 and prctl on a valid descriptor and a NUL-terminated name.
    unsafe {
        libc::dup2(null.as_raw_fd(), libc::STDIN_FILENO);
        libc::dup2(null.as_raw_fd(), libc::STDOUT_FILENO);
        libc::prctl(libc::PR_SET_NAME, name.as_ptr(), 0, 0, 0);
    }
    // A panic must not unwind into the worker's code.
    let _ = catch_unwind(AssertUnwindSafe(body));
    exit_now(0)
}

/// Ends the calling process at once.
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit ends the process at once, without running the worker's
    // destructors and exit handlers, which belong to the worker.
    unsafe { libc::_exit(code) }
}
