//! The subcommands: each turns validated settings into work and output.

pub mod calibrate;
pub mod compare;
pub mod list;
pub mod merge;
pub mod report;
mod rounds;
pub mod run;

use crate::engine::interrupt::INTERRUPTED_EXIT_CODE;

/// What a command asks the process to exit with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    /// Everything worked.
    Success = 0,
    /// Something failed (a scenario, a file).
    Failure = 1,
    /// The user's input was wrong.
    Usage = 2,
    /// Stopped by SIGINT or SIGTERM.
    Interrupted = INTERRUPTED_EXIT_CODE as isize,
}
