//! A job the user gives (`--job 'CMD'`): the command run by `/bin/sh -c`
//! in the job's working directory, its standard input and output
//! `/dev/null`, its standard error kept for the failure message, timed to
//! the shell's exit.

use super::child::{wait_any, JobChild};
use super::space::StderrLog;
use super::JobError;
use std::path::Path;
use std::process::{Command, Stdio};

/// The shell that runs the command.
const SHELL: &str = "/bin/sh";

/// A `--job` command, started.
pub struct ShellJob {
    shell: JobChild,
    /// The command in words, for messages.
    what: String,
}

impl ShellJob {
    /// Starts `command` in `cwd`, its stderr going to `stderr`.
    pub fn start(command: &str, cwd: &Path, stderr: &StderrLog) -> Result<Self, JobError> {
        let what = describe(command);
        let stderr_file = stderr.stdio().map_err(|error| JobError::Start {
            what: what.clone(),
            error,
        })?;
        let shell = JobChild::spawn(
            Command::new(SHELL)
                .arg("-c")
                .arg(command)
                .current_dir(cwd)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(stderr_file),
            &what,
        )?;
        Ok(Self { shell, what })
    }

    /// Waits until the command exits or the `CLOCK_MONOTONIC` time
    /// `until_ns`; `false` when that came first (the shell still runs). A
    /// command that exits with another status than 0, or is killed, fails,
    /// quoting the end of `stderr`.
    pub fn wait(&mut self, until_ns: u64, stderr: &StderrLog) -> Result<bool, JobError> {
        if wait_any(&[&self.shell], until_ns)?.is_none() {
            return Ok(false);
        }
        match self.shell.reap()? {
            None => Ok(true),
            Some(how) => Err(JobError::Failed {
                what: self.what.clone(),
                how,
                stderr_tail: stderr.tail(),
            }),
        }
    }
}

/// The command in words, for messages.
pub fn describe(command: &str) -> String {
    format!("the job `{command}`")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::clock::now_ns;

    fn run_here(command: &str) -> (Result<bool, JobError>, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let stderr = StderrLog::create(&dir.path().join("stderr")).unwrap();
        let until_ns = now_ns() + 30_000_000_000;
        let outcome = ShellJob::start(command, dir.path(), &stderr)
            .and_then(|mut job| job.wait(until_ns, &stderr));
        (outcome, dir)
    }

    #[test]
    fn a_command_runs_in_its_directory_through_a_shell() {
        let (outcome, dir) = run_here("echo built > out && test -f out");
        assert!(outcome.unwrap());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("out")).unwrap(),
            "built\n"
        );
    }

    #[test]
    fn a_failing_command_says_its_status_and_the_end_of_its_stderr() {
        let (outcome, _dir) = run_here("echo first >&2; echo oops >&2; exit 3");
        let err = outcome.unwrap_err().to_string();
        assert_eq!(
            err,
            "the job `echo first >&2; echo oops >&2; exit 3` failed (exit code 3); its stderr ended with: first / oops"
        );
        let (outcome, _dir) = run_here("no-such-tool-here --flag");
        let err = outcome.unwrap_err().to_string();
        // The shell's words depend on PATH ("not found", or "Permission
        // denied" for a directory in it the user cannot search).
        assert!(
            err.contains("(exit code 127)") && err.contains("no-such-tool-here: "),
            "{err}"
        );
    }

    #[test]
    fn a_command_past_its_deadline_is_still_running() {
        let dir = tempfile::tempdir().unwrap();
        let stderr = StderrLog::create(&dir.path().join("stderr")).unwrap();
        let mut job = ShellJob::start("sleep 30", dir.path(), &stderr).unwrap();
        assert!(!job.wait(now_ns() + 50_000_000, &stderr).unwrap());
        // Dropped: the shell is killed and reaped.
    }
}
