//! The reference job of contest: a build, run to its end and timed (the
//! `job` probe), its inputs warm or cold (`JobCache`), or run over and
//! over as background work (the `jobload` load). Either the built-in job — a parallel build in the shape of a
//! kernel compile, made of this program's own processes, so it needs no
//! tool the machine may lack and does the same work in every run (see
//! `plan`) — or a command the user gives (`--job 'CMD'`, run by
//! `/bin/sh -c`, see `command`).
//!
//! A job runs in a private directory (`space`) that is removed
//! afterwards: the built-in job's sources, headers, objects and image, or
//! the command's working directory, and the file its stderr goes to. The
//! process that times a job becomes the subreaper of everything the job
//! starts, so when the job ends (or outlives its cap, `--job-timeout`)
//! whatever it left running — daemons that left its session included — is
//! found below that process, killed and reaped (`timed`).

mod child;
mod command;
mod files;
mod make;
mod plan;
mod settings;
mod space;
pub mod step;
mod timed;

pub use make::Make;
pub use plan::step_units;
pub use settings::{JobCache, JobSettings};
pub use space::JobSpace;
pub use timed::PreparedJob;

/// Why a job could not run to its end.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// Its directory or inputs could not be made.
    #[error("{what}: {error}")]
    Setup { what: String, error: std::io::Error },
    /// A process of the job could not be started.
    #[error("cannot start {what}: {error}")]
    Start { what: String, error: std::io::Error },
    /// The job, or a step of it, ended with another status than 0.
    #[error("{what} failed ({how}){}", quote_tail(.stderr_tail))]
    Failed {
        what: String,
        /// `exit code 3`, `killed by SIGKILL`.
        how: String,
        /// The last lines it wrote to stderr.
        stderr_tail: String,
    },
    /// The job outlived its cap and was killed.
    #[error("{what} did not end within {cap_s} s (--job-timeout); killed with everything it started: {killed} process(es)")]
    TimedOut {
        what: String,
        cap_s: f64,
        killed: usize,
    },
    /// Waiting for the job's processes failed.
    #[error("cannot wait for the job's processes: {0}")]
    Wait(nix::errno::Errno),
}

/// `; its stderr ended with: TAIL`, or nothing without a tail.
fn quote_tail(tail: &str) -> String {
    match tail.is_empty() {
        true => String::new(),
        false => format!("; its stderr ended with: {tail}"),
    }
}

/// What one run of a job took.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobRun {
    /// Wall time from its start to its end.
    pub wall_ns: u64,
    /// CPU time of the job's processes (and of the process that ran them,
    /// as `time make` counts make's own).
    pub cpu_ns: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_quotes_its_stderr_only_when_there_is_some() {
        let failed = |tail: &str| JobError::Failed {
            what: "the job `false`".into(),
            how: "exit code 1".into(),
            stderr_tail: tail.into(),
        };
        assert_eq!(
            failed("").to_string(),
            "the job `false` failed (exit code 1)"
        );
        assert_eq!(
            failed("oops").to_string(),
            "the job `false` failed (exit code 1); its stderr ended with: oops"
        );
    }
}
