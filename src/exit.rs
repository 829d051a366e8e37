//! How the orchestrator ends: the exit codes, the error that means "bad
//! input", and the one place that turns an error into a message and a code.
//! Commands return typed errors (or `anyhow` errors that carry them); only
//! [`code_of`] decides which code each gets.

use crate::document::file::RunFileError;
use crate::engine::interrupt::{Interrupted, INTERRUPTED_EXIT_CODE};
use crate::store::StoreError;

/// What the process exits with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum ExitCode {
    /// Everything worked.
    Success = 0,
    /// Something failed: a scenario, a file that could not be written.
    Failure = 1,
    /// The user's input was wrong: options, names, files that are not runs.
    Usage = 2,
    /// `--fail-on worse`: a compared figure got significantly worse by more
    /// than its minimum effect (the report is still written).
    Worse = 3,
    /// Stopped by SIGINT, SIGTERM or SIGHUP (128 + SIGINT).
    Interrupted = INTERRUPTED_EXIT_CODE,
}

/// The exit codes in words, for `feelbench --help` and the manual page.
pub const EXIT_STATUS_HELP: &str = "Exit status: 0 when everything worked; 1 when a scenario failed, a file could not be written or a store could not be used (locked, damaged, newer, out of reach, refusing the login); 2 for bad input (an option or a name that cannot be used, a file that is not there or not a run, runs that do not merge, a system other than --expect asks for, a busy machine with --strict, a run or query the store does not have); 3 with --fail-on worse when a figure got significantly worse by more than its minimum effect; 130 when interrupted by SIGINT, SIGTERM or SIGHUP (the finished scenarios are still written).";

/// Input from the user that cannot be used (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    /// What is wrong and how to put it right, in words.
    #[error("{0}")]
    Said(String),
    /// An error from below that, where it arose, means the user's input
    /// cannot be used (runs that do not merge, a privilege the options
    /// need); it is shown as it is.
    #[error(transparent)]
    Input(Box<dyn std::error::Error + Send + Sync + 'static>),
}

impl UsageError {
    /// Bad input explained by `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self::Said(message.into())
    }

    /// Bad input explained by a typed error from a lower layer.
    pub fn input(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Input(Box::new(error))
    }
}

/// The exit code for `error`: 130 for an interruption, 2 for bad input
/// (found anywhere in its chain of causes), 1 for anything else.
pub fn code_of(error: &anyhow::Error) -> ExitCode {
    if error.downcast_ref::<Interrupted>().is_some() {
        return ExitCode::Interrupted;
    }
    let bad_input = error.downcast_ref::<UsageError>().is_some()
        || error.chain().any(|cause| {
            matches!(
                cause.downcast_ref::<StoreError>(),
                Some(StoreError::NoSuchRun(_) | StoreError::Ambiguous { .. })
            )
        })
        || error
            .downcast_ref::<RunFileError>()
            .is_some_and(|e| !matches!(e, RunFileError::Read { .. }));
    if bad_input {
        ExitCode::Usage
    } else {
        ExitCode::Failure
    }
}

/// `error` and its causes on one line, each said once: a cause whose text
/// the line already holds (an error that repeats its source in its own
/// message) is left out.
pub fn message_of(error: &anyhow::Error) -> String {
    let mut line = error.to_string();
    for cause in error.chain().skip(1) {
        let text = cause.to_string();
        if !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
    }
    line
}

/// Says what went wrong, if anything, on stderr, and returns the code to
/// exit with.
pub fn finish(outcome: anyhow::Result<ExitCode>) -> ExitCode {
    match outcome {
        Ok(code) => code,
        Err(error) => {
            // A URL given where a file was expected may be repeated.
            say!(
                "{}",
                crate::store::location::without_argument_passwords(&message_of(&error))
            );
            code_of(&error)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context as _;
    use std::path::PathBuf;

    fn missing_file() -> RunFileError {
        RunFileError::Missing {
            path: PathBuf::from("missing.json"),
        }
    }

    #[test]
    fn bad_input_exits_2_even_under_context() {
        let error = anyhow::Error::from(UsageError::new("no")).context("while choosing");
        assert_eq!(code_of(&error), ExitCode::Usage);
        let error = Err::<(), _>(missing_file()).context("reading").unwrap_err();
        assert_eq!(code_of(&error), ExitCode::Usage);
    }

    #[test]
    fn a_file_that_cannot_be_read_fails_and_an_interruption_is_130() {
        let unreadable = RunFileError::Read {
            path: PathBuf::from("run.json"),
            source: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        };
        assert_eq!(code_of(&unreadable.into()), ExitCode::Failure);
        assert_eq!(code_of(&Interrupted.into()), ExitCode::Interrupted);
        assert_eq!(ExitCode::Interrupted as i32, 130);
        assert_eq!(code_of(&anyhow::anyhow!("broke")), ExitCode::Failure);
    }

    #[test]
    fn each_cause_is_said_once() {
        let os = std::io::Error::from_raw_os_error(2);
        let error = anyhow::Error::new(os).context(format!(
            "cannot read x: {}",
            std::io::Error::from_raw_os_error(2)
        ));
        let message = message_of(&error);
        assert_eq!(message.matches("os error 2").count(), 1, "{message}");
        let error = anyhow::Error::from(missing_file());
        assert_eq!(message_of(&error), error.to_string());
    }

    #[test]
    fn typed_input_errors_show_as_they_are() {
        let error = UsageError::input(missing_file());
        assert_eq!(error.to_string(), missing_file().to_string());
    }
}
