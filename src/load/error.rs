//! Why a load cannot be chosen, cannot start or cannot go on. Every message
//! is complete on its own (what the load was doing, and the system's
//! reason), so it reads the same however it is printed.

use crate::sim::job::JobError;
use crate::sim::SimError;
use crate::system::msgqueue::QueueError;
use nix::errno::Errno;
use std::process::ExitStatus;

/// A load spec the user gave that cannot run: a name that is not a load, a
/// mix that cannot be, or a load the run's parameters do not allow.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// No load or alias of that name.
    #[error("unknown load '{name}'; valid loads: {valid} (combine with +, e.g. burn+write)")]
    Unknown { name: String, valid: String },
    /// A load that takes an argument was given none.
    #[error("load {0} needs an argument: {0}:...")]
    NeedsArgument(&'static str),
    /// A load that takes no argument was given one.
    #[error("load {0} takes no argument")]
    TakesNoArgument(&'static str),
    /// `none` in a mix of several loads.
    #[error("the none load cannot be mixed with others")]
    NoneInMix,
    /// A part of the mix refused the run's parameters or its argument.
    #[error("load {load}: {problem}")]
    Check {
        load: &'static str,
        problem: CheckError,
    },
}

/// Why a load cannot run with the run's parameters or its argument; the
/// message says what the user can do about it.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// A memory load without swap to push memory out to.
    #[error("needs swap to push memory out to, and this system has none free; --swap SIZE adds a temporary swap file for the run (as root), e.g. --swap 1G, and --mem-limit SIZE keeps the pressure inside a cgroup of that size")]
    NoSwap,
    /// A memory load whose excess over its memory does not fit in the swap.
    #[error("goes {overflow_pct} % past the {mem_mib} MiB of memory it has, so it needs {needed_mib} MiB of swap, and only {free_mib} MiB are free; give a larger --swap SIZE, or --mem-limit SIZE to work inside a cgroup of that size")]
    TooLittleSwap {
        overflow_pct: u64,
        mem_mib: u64,
        needed_mib: u64,
        free_mib: u64,
    },
    /// The simulation the load runs lacks a parameter.
    #[error(transparent)]
    Sim(#[from] SimError),
    /// `cmd:` with a command that does not split into words.
    #[error("cannot parse the command: {0}")]
    UnparsableCommand(shell_words::ParseError),
    /// `cmd:` with nothing after it.
    #[error("cmd: needs a command, e.g. --load 'cmd:stress-ng --cpu 2'")]
    NoCommand,
}

/// Why a load process could not set its load up, or could not go on.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Its parameters or argument do not allow it.
    #[error(transparent)]
    Check(#[from] CheckError),
    /// A file, memory or process operation failed.
    #[error("{what}: {error}")]
    Io {
        /// What the load was doing (`cannot write its file`).
        what: String,
        error: std::io::Error,
    },
    /// A system call failed.
    #[error("{what}: {errno}")]
    Sys {
        /// What the load was doing (`fcntl(F_GETFL)`).
        what: String,
        errno: Errno,
    },
    /// Its SysV message queue could not be made.
    #[error("{what}: {error}")]
    Queue {
        /// The load whose queue it is.
        what: &'static str,
        error: QueueError,
    },
    /// Helper processes were to be forked from a multi-threaded worker.
    #[error("{what}: helper processes must be forked while the worker is single-threaded, but it runs {threads} threads")]
    NotSingleThreaded { what: &'static str, threads: usize },
    /// One of its helper processes ended, so the load is no longer itself.
    #[error("{what}: a helper process ended ({how}); {left} of {planned} left")]
    HelperEnded {
        what: &'static str,
        /// How it ended (`exit code 1`, `killed by SIGSEGV`).
        how: String,
        left: usize,
        planned: usize,
    },
    /// The external command of `cmd:` ended.
    #[error("the command ended ({0}) before the scenario did")]
    CommandEnded(ExitStatus),
    /// A command the load runs over and over failed.
    #[error("{what}: `{command}` failed ({status})")]
    CommandFailed {
        what: &'static str,
        command: String,
        status: ExitStatus,
    },
    /// The job it runs failed or could not be set up.
    #[error(transparent)]
    Job(#[from] JobError),
    /// A load without processes was asked to build one.
    #[error("the {0} load has no processes")]
    NoProcesses(&'static str),
    /// A memory load was not told how much memory to use.
    #[error("no memory size was given")]
    NoMemorySize,
}

impl LoadError {
    /// Turns an I/O error into the error of a load that was doing `what`
    /// (`what` becomes a `String` only when there is an error).
    pub fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        move |error| Self::Io {
            what: what.into(),
            error,
        }
    }

    /// Turns a failed system call into the error of a load that was doing
    /// `what`.
    pub fn sys(what: impl Into<String>) -> impl FnOnce(Errno) -> Self {
        move |errno| Self::Sys {
            what: what.into(),
            errno,
        }
    }
}
