//! `command`: what typing a command in a terminal left alone costs. After
//! each idle gap (as `response`) the probe starts a real program with
//! fork/exec and times it until it has exited: by default `ls -l /usr/bin`
//! (run directly, no shell, found on PATH), a small program that reads a
//! directory, stats every file in it and looks up their owners; with
//! `--command 'CMD'`, any command, through `/bin/sh -c`. The program's
//! output is discarded; a program that fails (or is not found) fails the
//! scenario with its exit status and the end of its stderr.
//!
//! With `--command-cold` the page cache, dentries and inodes are dropped
//! (`3` into `/proc/sys/vm/drop_caches`, which needs root) before each
//! point's gap, so the program starts cold: the application start-up
//! latency the BFQ I/O scheduler's authors measure under background I/O
//! (`comm_startup_lat` of their S suite). Dirty pages are not written
//! first (no `sync()`: under a write load it would take seconds and stall
//! the machine); a program's own files are clean, so they are dropped.
//!
//! Its points are not split into the causes of their delay (`late_split`):
//! the program runs in processes of its own, and the readings of the
//! probe's thread, which only waits for it to exit, would put the whole
//! point down as "blocked", which says nothing of where the program's time
//! went.
//!
//! Like `response`, the probe shares its memory (its programs' pages
//! compete with the loads', in their memory cgroup under `--mem-limit`).

use super::after_idle::{self, Response};
use super::late_split::LateSplit;
use super::{MeasureError, Pace, Probe, ProbeDef};
use crate::figures::Measured;
use crate::measure::sched::MemoryPolicy;
use crate::measure::window::Window;
use crate::sim::{ResponseParams, SettingsGroup, WorkParams};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

/// Registry entry.
pub const DEF: ProbeDef = ProbeDef {
    name: "command",
    summary: "a command typed after an idle gap: ls -l /usr/bin (or --command CMD) until it exits",
    method: 1,
    sheet: after_idle::sheet,
    build: |params: &WorkParams| {
        let invocation = Invocation::of(&params.response)?;
        if params.response.cold {
            check_can_drop_caches()?;
        }
        Ok(Box::new(CommandProbe {
            params: params.response.clone(),
            invocation,
        }))
    },
    default: |_| false,
    uses: &[SettingsGroup::Response],
    pace: Pace::OwnWork {
        expected_ns: after_idle::expected_ns,
        cap_ns: after_idle::cap_ns,
    },
    disk_bytes: super::no_disk,
    memory: MemoryPolicy::Shared,
    run_figure: super::no_run_figures,
};

/// The default program and its arguments.
const DEFAULT_PROGRAM: &str = "ls";
const DEFAULT_ARGS: [&str; 2] = ["-l", "/usr/bin"];
/// The shell that runs `--command`.
const SHELL: &str = "/bin/sh";
/// Where the page cache is dropped.
const DROP_CACHES: &str = "/proc/sys/vm/drop_caches";
/// Most bytes of the program's stderr a failure quotes.
const STDERR_TAIL_BYTES: usize = 400;

/// Why the command probe cannot be built as asked.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The default program is not on PATH.
    #[error("cannot find {DEFAULT_PROGRAM} on PATH to time `{DEFAULT_PROGRAM} -l /usr/bin`; give --command CMD to time another program")]
    NoDefaultProgram,
    /// There is no shell to run `--command` with.
    #[error("--command runs its command with {SHELL} -c, and {SHELL} is not an executable file")]
    NoShell,
    /// `--command-cold` without the right to drop the page cache.
    #[error("--command-cold drops the page cache before each point, and {DROP_CACHES} cannot be opened for writing: {0} (it needs root)")]
    CannotDropCaches(std::io::Error),
}

/// The timed program failed: its exit status and the end of its stderr.
#[derive(Debug, thiserror::Error)]
#[error("the command `{command}` failed ({status}){}", stderr_note(.stderr_tail))]
pub struct CommandFailed {
    command: String,
    status: ExitStatus,
    stderr_tail: String,
}

fn stderr_note(tail: &str) -> String {
    match tail {
        "" => String::new(),
        tail => format!(": {tail}"),
    }
}

/// The program started at each point, and how it is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Invocation {
    program: PathBuf,
    args: Vec<String>,
    shown: String,
}

impl Invocation {
    /// `--command` through the shell, else the default program found on PATH.
    fn of(params: &ResponseParams) -> Result<Self, SetupError> {
        match &params.command {
            Some(command) => is_executable(Path::new(SHELL))
                .then(|| Self {
                    program: PathBuf::from(SHELL),
                    args: vec!["-c".to_string(), command.clone()],
                    shown: command.clone(),
                })
                .ok_or(SetupError::NoShell),
            None => {
                let path = std::env::var_os("PATH").unwrap_or_default();
                let program =
                    find_on_path(DEFAULT_PROGRAM, &path).ok_or(SetupError::NoDefaultProgram)?;
                Ok(Self {
                    program,
                    args: DEFAULT_ARGS.iter().map(|a| a.to_string()).collect(),
                    shown: format!("{DEFAULT_PROGRAM} {}", DEFAULT_ARGS.join(" ")),
                })
            }
        }
    }

    /// Starts the program with no input and its output discarded, waits
    /// for it to exit, and fails when it did not exit with 0.
    fn run(&self) -> Result<(), MeasureError> {
        let output = Command::new(&self.program)
            .args(&self.args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .map_err(|error| MeasureError::Io {
                what: "cannot start the command",
                error,
            })?;
        if output.status.success() {
            return Ok(());
        }
        Err(CommandFailed {
            command: self.shown.clone(),
            status: output.status,
            stderr_tail: tail(&output.stderr),
        }
        .into())
    }
}

/// The first executable file called `name` in the directories of `path`
/// (a PATH value).
fn find_on_path(name: &str, path: &std::ffi::OsStr) -> Option<PathBuf> {
    std::env::split_paths(path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The last [`STDERR_TAIL_BYTES`] of `stderr` as text, on one line.
fn tail(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let text = text.trim();
    let start = text
        .char_indices()
        .map(|(i, _)| i)
        .find(|&i| text.len() - i <= STDERR_TAIL_BYTES)
        .unwrap_or(text.len());
    let cut = if start > 0 { "..." } else { "" };
    format!(
        "{cut}{}",
        text[start..]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    )
}

/// Fails unless the page cache can be dropped (opening the file for
/// writing, without writing to it).
fn check_can_drop_caches() -> Result<(), SetupError> {
    std::fs::OpenOptions::new()
        .write(true)
        .open(DROP_CACHES)
        .map(drop)
        .map_err(SetupError::CannotDropCaches)
}

struct CommandProbe {
    params: ResponseParams,
    invocation: Invocation,
}

impl Probe for CommandProbe {
    fn measure(self: Box<Self>, window: Window, _dir: &Path) -> Result<Measured, MeasureError> {
        let mut starts = Starts {
            invocation: self.invocation,
            cold: self.params.cold,
        };
        after_idle::measure_points(window, &self.params, &mut starts, LateSplit::off())
    }
}

/// The program started at each point, cold or not.
struct Starts {
    invocation: Invocation,
    cold: bool,
}

impl Response for Starts {
    fn before_gap(&mut self) -> Result<(), MeasureError> {
        if !self.cold {
            return Ok(());
        }
        std::fs::write(DROP_CACHES, "3").map_err(|error| MeasureError::Io {
            what: "cannot drop the page cache",
            error,
        })
    }

    fn respond(&mut self) -> Result<(), MeasureError> {
        self.invocation.run()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_command(command: Option<&str>) -> ResponseParams {
        ResponseParams {
            command: command.map(str::to_string),
            ..ResponseParams::for_tests()
        }
    }

    #[test]
    fn the_default_is_ls_on_path_without_a_shell() {
        let invocation = Invocation::of(&with_command(None)).unwrap();
        assert!(invocation.program.ends_with("ls"), "{invocation:?}");
        assert_eq!(invocation.args, ["-l", "/usr/bin"]);
        assert_eq!(invocation.shown, "ls -l /usr/bin");
        invocation.run().unwrap();
    }

    #[test]
    fn a_command_runs_through_the_shell() {
        let invocation = Invocation::of(&with_command(Some("true && echo hidden"))).unwrap();
        assert_eq!(invocation.program, Path::new(SHELL));
        assert_eq!(invocation.args, ["-c", "true && echo hidden"]);
        invocation.run().unwrap();
    }

    #[test]
    fn a_failed_command_says_its_status_and_stderr() {
        let invocation = Invocation::of(&with_command(Some(
            "echo first >&2; echo 'it broke' >&2; exit 3",
        )))
        .unwrap();
        let error = invocation.run().unwrap_err().to_string();
        assert_eq!(
            error,
            "the command `echo first >&2; echo 'it broke' >&2; exit 3` failed (exit status: 3): first it broke"
        );
        let silent = Invocation::of(&with_command(Some("false"))).unwrap();
        assert_eq!(
            silent.run().unwrap_err().to_string(),
            "the command `false` failed (exit status: 1)"
        );
    }

    #[test]
    fn programs_are_found_on_the_path_given() {
        let dir = tempfile::tempdir().unwrap();
        let program = dir.path().join("tool");
        std::fs::write(&program, "#!/bin/sh\n").unwrap();
        let path = std::env::join_paths(["/nonexistent", dir.path().to_str().unwrap()]).unwrap();
        assert_eq!(find_on_path("tool", &path), None, "not executable yet");
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(find_on_path("tool", &path), Some(program));
        assert_eq!(find_on_path("missing", &path), None);
    }

    #[test]
    fn the_tail_of_stderr_is_short_and_on_one_line() {
        assert_eq!(tail(b"  a\nb \n"), "a b");
        let long = "x".repeat(1000) + "\nend";
        let t = tail(long.as_bytes());
        assert!(t.starts_with("...") && t.ends_with(" end"), "{t}");
        assert!(t.len() <= STDERR_TAIL_BYTES + 3);
        assert_eq!(tail(b""), "");
    }
}
