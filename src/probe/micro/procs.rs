//! New processes, as LMbench's lat_proc times them: fork a child that exits
//! at once (`fork`), or that runs a program (`exec`, `sh`), and wait for it.
//!
//! The forks happen in a spawner, a partner process forked when the
//! operation starts, before the probe allocates its histograms: the cost of
//! a fork grows with the anonymous memory of the process that forks (every
//! page is shared with the child and released again at its exit), and the
//! probe's histograms are about 20 MiB of it and the late split's account
//! 4 MiB, where LMbench's lat_proc is a small program. The spawner times the forks it is asked for (one, or
//! LMbench's loop of them), each to the end of its wait, back to back, and
//! sends the time back. The program's path and arguments are made
//! before it is forked, so after each fork the child only calls `execv` and
//! `_exit`, which are safe after a fork.

use super::ops::{OpError, Operation, Timed};
use super::partner::{exit_now, Partner};
use crate::measure::clock::now_ns;
use nix::sys::wait::{waitpid, WaitStatus};
use nix::unistd::{fork, ForkResult};
use std::ffi::{c_char, CStr};
use std::io::{self, PipeReader, PipeWriter, Read, Write};

/// A program for the child to run, ready for `execve`.
struct Program {
    path: &'static CStr,
    /// The arguments as `execve` wants them, ending with a null pointer.
    argv: Vec<*const c_char>,
    /// Whether it runs with no environment (lat_proc's execve passes none;
    /// its shell, run by execlp, gets the caller's).
    no_environment: bool,
}

/// A request to a spawner: how many forks (each with its wait), back to
/// back.
type Request = [u8; 8];

/// A spawner's answer to a request: the time of the forks to the end of
/// the last wait, or why a child failed.
type Reply = [u8; 8];

/// What a spawner answers when the child did not exit with 0.
const FAILED: u64 = u64::MAX;

/// Asks the spawner for a fork (and exec) and waits for its time.
pub struct Spawn {
    requests: PipeWriter,
    replies: PipeReader,
    _spawner: Partner,
}

impl Spawn {
    /// A child that exits at once.
    pub fn fork_only() -> Result<Self, OpError> {
        Self::start(None)
    }

    /// A child that runs `path` with arguments `args` (from `argv[0]`),
    /// with no environment when `no_environment`, else with the probe's.
    pub fn program(
        path: &'static CStr,
        args: &[&'static CStr],
        no_environment: bool,
    ) -> Result<Self, OpError> {
        let argv = args
            .iter()
            .map(|a| a.as_ptr())
            .chain([std::ptr::null()])
            .collect();
        Self::start(Some(Program {
            path,
            argv,
            no_environment,
        }))
    }

    fn start(program: Option<Program>) -> Result<Self, OpError> {
        let (their_requests, requests) = io::pipe().map_err(OpError::of("cannot make a pipe"))?;
        let (replies, their_replies) = io::pipe().map_err(OpError::of("cannot make a pipe"))?;
        let spawner = Partner::start(c"fb-micro-spawn", move || {
            serve(their_requests, their_replies, program.as_ref())
        })?;
        Ok(Self {
            requests,
            replies,
            _spawner: spawner,
        })
    }
}

impl Operation for Spawn {
    fn run(&mut self) -> Result<(), OpError> {
        self.timed(1).map(drop)
    }

    fn timed(&mut self, n: u64) -> Result<Timed, OpError> {
        let request: Request = n.to_ne_bytes();
        self.requests
            .write_all(&request)
            .map_err(OpError::of("cannot ask the spawner process"))?;
        let mut reply: Reply = [0; 8];
        self.replies
            .read_exact(&mut reply)
            .map_err(OpError::of("no answer from the spawner process"))?;
        match u64::from_ne_bytes(reply) {
            FAILED => Err(OpError {
                what: "the child process failed",
                error: io::Error::other("it did not exit with 0 (is the program there?)"),
            }),
            elapsed_ns => Ok(Timed::of(elapsed_ns, n)),
        }
    }
}

/// The spawner: for each request of `n`, forks a child, waits for it, `n`
/// times back to back, and answers with the time that took, until the
/// worker's end is gone.
fn serve(mut requests: PipeReader, mut replies: PipeWriter, program: Option<&Program>) {
    let mut request: Request = [0; 8];
    while requests.read_exact(&mut request).is_ok() {
        let n = u64::from_ne_bytes(request);
        let started_ns = now_ns();
        let all_exited = (0..n).all(|_| fork_and_wait(program));
        let answer = match all_exited {
            true => now_ns() - started_ns,
            false => FAILED,
        };
        if replies.write_all(&answer.to_ne_bytes()).is_err() {
            return;
        }
    }
}

/// Forks a child that runs `program` (or exits) and waits for it; whether
/// the child exited with 0.
fn fork_and_wait(program: Option<&Program>) -> bool {
    // SAFETY: the spawner is single-threaded; the child only calls
    // async-signal-safe functions on what was made before the fork.
    let child = match unsafe { fork() } {
        Ok(ForkResult::Child) => run_child(program),
        Ok(ForkResult::Parent { child }) => child,
        Err(_) => return false,
    };
    matches!(waitpid(child, None), Ok(WaitStatus::Exited(_, 0)))
}

/// The child: runs the program, if any, else exits.
fn run_child(program: Option<&Program>) -> ! {
    let Some(program) = program else { exit_now(0) };
    let no_environment: [*const c_char; 1] = [std::ptr::null()];
    // SAFETY: execv and execve with a NUL-terminated path and
    // null-terminated arrays of NUL-terminated strings that outlive the
    // call (it returns only when it failed).
    unsafe {
        match program.no_environment {
            true => libc::execve(
                program.path.as_ptr(),
                program.argv.as_ptr(),
                no_environment.as_ptr(),
            ),
            false => libc::execv(program.path.as_ptr(), program.argv.as_ptr()),
        }
    };
    // The usual code of a command that could not be run.
    exit_now(127)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// exec's program runs with no environment, as lat_proc's execve
    /// passes none; sh's gets the probe's, as lat_proc's execlp.
    #[test]
    fn a_program_runs_with_no_environment_when_asked() {
        let argv = [c"sh", c"-c", c"test -z \"$HOME\""];
        let mut bare = Spawn::program(c"/bin/sh", &argv, true).unwrap();
        assert_eq!(bare.timed(2).unwrap().ops, 2);
        if std::env::var_os("HOME").is_some_and(|home| !home.is_empty()) {
            let mut inherited = Spawn::program(c"/bin/sh", &argv, false).unwrap();
            assert!(inherited.timed(1).is_err(), "HOME was not passed on");
        }
    }
}
