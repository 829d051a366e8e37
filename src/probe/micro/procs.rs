//! New processes, as LMbench's lat_proc times them: fork a child that exits
//! at once (`fork`), or that runs a program (`exec`, `sh`), and wait for it.
//! The program's path and arguments are made before the fork, so the child
//! only calls `dup2`, `execv` and `_exit`, which are safe after a fork.

use super::ops::{OpError, Operation};
use super::partner::exit_now;
use nix::sys::wait::{waitpid, WaitStatus};
use nix::unistd::{fork, ForkResult};
use std::ffi::{c_char, CStr};
use std::fs::File;
use std::os::fd::AsRawFd;

/// A program for the child to run, ready for `execv`.
struct Program {
    path: &'static CStr,
    /// The arguments as `execv` wants them, ending with a null pointer.
    argv: Vec<*const c_char>,
    /// Its standard input and output: the worker's are its protocol pipes.
    null: File,
}

/// Forks a child and waits for it to end.
pub struct Spawn {
    program: Option<Program>,
}

impl Spawn {
    /// A child that exits at once.
    pub fn fork_only() -> Self {
        Self { program: None }
    }

    /// A child that runs `path` with arguments `args` (from `argv[0]`).
    pub fn program(path: &'static CStr, args: &[&'static CStr]) -> Result<Self, OpError> {
        let null = File::options()
            .read(true)
            .write(true)
            .open("/dev/null")
            .map_err(OpError::of("cannot open /dev/null"))?;
        let argv = args
            .iter()
            .map(|a| a.as_ptr())
            .chain([std::ptr::null()])
            .collect();
        Ok(Self {
            program: Some(Program { path, argv, null }),
        })
    }
}

impl Operation for Spawn {
    fn run(&mut self) -> Result<(), OpError> {
        // SAFETY: the probe worker is single-threaded; the child only calls
        // async-signal-safe functions on what was made before the fork.
        let child = match unsafe { fork() } {
            Ok(ForkResult::Child) => run_child(self.program.as_ref()),
            Ok(ForkResult::Parent { child }) => child,
            Err(errno) => {
                return Err(OpError {
                    what: "cannot fork",
                    error: errno.into(),
                })
            }
        };
        match waitpid(child, None) {
            Ok(WaitStatus::Exited(_, 0)) => Ok(()),
            Ok(status) => Err(OpError {
                what: "the child process failed",
                error: std::io::Error::other(format!("{status:?}")),
            }),
            Err(errno) => Err(OpError {
                what: "cannot wait for the child process",
                error: errno.into(),
            }),
        }
    }
}

/// The child: runs the program, if any, else exits.
fn run_child(program: Option<&Program>) -> ! {
    let Some(program) = program else { exit_now(0) };
    let null = program.null.as_raw_fd();
    // SAFETY: dup2 on valid descriptors; execv with a NUL-terminated path
    // and a null-terminated array of NUL-terminated arguments that outlive
    // the call (it returns only when it failed).
    unsafe {
        libc::dup2(null, libc::STDIN_FILENO);
        libc::dup2(null, libc::STDOUT_FILENO);
        libc::execv(program.path.as_ptr(), program.argv.as_ptr());
    }
    // The usual code of a command that could not be run.
    exit_now(127)
}
