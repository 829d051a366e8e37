//! The reference job of contest: a build, run to its end and timed (the
//! `job` probe), or run over and over as background work (the `cacherun`
//! load). Either the built-in job — a parallel build in the shape of a
//! kernel compile, made of this program's own processes, so it needs no
//! tool the machine may lack and does the same work in every run (see
//! `plan`) — or a command the user gives (`--job 'CMD'`, run by
//! `/bin/sh -c`, see `command`).
//!
//! A job runs in a private directory (`JobSpace`) that is removed
//! afterwards: the built-in job's sources, headers, objects and image, or
//! the command's working directory, and the file its stderr goes to. The
//! process that runs a job becomes the subreaper of everything the job
//! starts, so when the job ends (or outlives its cap, `--job-timeout`)
//! whatever it left running — daemons that left its session included — is
//! found below that process, killed and reaped.

mod child;
mod command;
mod files;
mod make;
mod plan;
pub mod step;

pub use make::Make;
pub use plan::{step_units, JobPlan};

use crate::measure::clock::{now_ns, process_and_children_cpu_ns};
use crate::system::process_tree;
use serde::{Deserialize, Serialize};
use std::io::{Read as _, Seek as _};
use std::path::{Path, PathBuf};

/// `--job-timeout` when not given: an hour, room for a real kernel build
/// on a slow machine under load.
const DEFAULT_TIMEOUT_S: f64 = 3600.0;
/// How long a `--job` command is taken to last, for the progress bar
/// only: nothing is known about it before it runs.
const COMMAND_GUESS_NS: u64 = 60_000_000_000;
/// Most of a failed job's stderr quoted: its last lines, up to this much.
const TAIL_LINES: usize = 5;
const TAIL_CHARS: usize = 400;

/// Which job runs and how long it may take, for the whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobSettings {
    /// `--job-size`: the built-in job's size, 1 for the default (about
    /// 20 s on idle CPUs; see `plan`).
    pub size: f64,
    /// `--job`: the command the `job` probe times instead of the built-in
    /// job (`cacherun` always runs the built-in job: a command cannot be
    /// assumed to survive running twice at once, as two `make`s in one
    /// tree would not).
    pub command: Option<String>,
    /// `--job-timeout`: the longest a job may take; it is killed then.
    pub timeout_s: f64,
}

impl Default for JobSettings {
    fn default() -> Self {
        Self {
            size: 1.0,
            command: None,
            timeout_s: DEFAULT_TIMEOUT_S,
        }
    }
}

impl JobSettings {
    /// The built-in job of a run on `cpus` CPUs.
    pub fn plan(&self, cpus: usize) -> JobPlan {
        JobPlan::new(cpus, self.size)
    }

    /// How long the job is expected to take on `cpus` idle CPUs (a guess
    /// for a command), at most its cap.
    pub fn expected_ns(&self, cpus: usize) -> u64 {
        let expected_ns = match self.command {
            Some(_) => COMMAND_GUESS_NS,
            None => self.plan(cpus).expected_ns(cpus),
        };
        expected_ns.min(self.cap_ns())
    }

    /// The longest a job may take.
    pub fn cap_ns(&self) -> u64 {
        (self.timeout_s * 1e9) as u64
    }

    /// The settings in words (`built-in, size 1, at most 3600 s`), for
    /// listing differences between runs.
    pub fn describe(&self) -> String {
        let job = match &self.command {
            Some(command) => format!("`{command}`"),
            None => format!("built-in, size {}", self.size),
        };
        format!("{job}, at most {} s", self.timeout_s)
    }
}

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

/// The file a job's stderr goes to, whose end is quoted when it fails.
#[derive(Debug, Clone)]
pub struct StderrLog {
    path: PathBuf,
}

impl StderrLog {
    /// An empty log at `path`.
    pub fn create(path: &Path) -> std::io::Result<Self> {
        std::fs::File::create(path)?;
        Ok(Self {
            path: path.to_path_buf(),
        })
    }

    /// A handle for a process's stderr, appending to the log.
    pub fn stdio(&self) -> std::io::Result<std::fs::File> {
        std::fs::File::options().append(true).open(&self.path)
    }

    /// The last lines written to the log, on one line.
    pub fn tail(&self) -> String {
        let mut text = Vec::new();
        let read = std::fs::File::open(&self.path).and_then(|mut file| {
            let length = file.metadata()?.len();
            file.seek(std::io::SeekFrom::Start(length.saturating_sub(4096)))?;
            file.read_to_end(&mut text)
        });
        match read {
            Ok(_) => tail_of(&String::from_utf8_lossy(&text)),
            Err(_) => String::new(),
        }
    }
}

/// The last [`TAIL_LINES`] non-blank lines of `text` joined by ` / `, cut
/// to their last [`TAIL_CHARS`] characters.
fn tail_of(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let joined = lines[lines.len().saturating_sub(TAIL_LINES)..].join(" / ");
    let chars = joined.chars().count();
    match chars > TAIL_CHARS {
        true => format!(
            "…{}",
            joined.chars().skip(chars - TAIL_CHARS).collect::<String>()
        ),
        false => joined,
    }
}

/// A job's private directory: made empty, removed with everything in it
/// when dropped.
pub struct JobSpace {
    root: PathBuf,
}

impl JobSpace {
    /// Makes `root`, which must not exist yet.
    pub fn create(root: &Path) -> Result<Self, JobError> {
        std::fs::create_dir(root).map_err(|error| JobError::Setup {
            what: format!("cannot make the job's directory {}", root.display()),
            error,
        })?;
        Ok(Self {
            root: root.to_path_buf(),
        })
    }

    /// The built-in job's directory in it, with the inputs of `plan` written.
    fn build_dir(&self, plan: &JobPlan) -> Result<PathBuf, JobError> {
        let build = self.root.join("build");
        files::JobDir::at(&build)
            .write_inputs(plan)
            .map_err(|error| JobError::Setup {
                what: format!(
                    "cannot write the built-in job's inputs in {}",
                    build.display()
                ),
                error,
            })?;
        Ok(build)
    }

    /// A command's working directory in it, made empty.
    fn work_dir(&self) -> Result<PathBuf, JobError> {
        let work = self.root.join("work");
        std::fs::create_dir(&work).map_err(|error| JobError::Setup {
            what: format!("cannot make the job's working directory {}", work.display()),
            error,
        })?;
        Ok(work)
    }

    /// A fresh log for the job's stderr.
    fn stderr(&self) -> Result<StderrLog, JobError> {
        let path = self.root.join("stderr");
        StderrLog::create(&path).map_err(|error| JobError::Setup {
            what: format!("cannot make {}", path.display()),
            error,
        })
    }

    /// A build of the built-in job of `plan` at `loops_per_ms`, its
    /// inputs written (`cacherun`'s).
    pub fn make(&self, plan: JobPlan, loops_per_ms: f64) -> Result<Make, JobError> {
        let build = self.build_dir(&plan)?;
        Make::new(plan, &build, loops_per_ms, self.stderr()?)
    }
}

impl Drop for JobSpace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// The job of a run, ready to be timed: the `job` probe's.
pub struct PreparedJob {
    what: Prepared,
    loops_per_ms: f64,
    space: JobSpace,
}

enum Prepared {
    /// The built-in job of this plan, its inputs written in this directory.
    BuiltIn(JobPlan, PathBuf),
    /// A command, to run in this directory.
    Command(String, PathBuf),
}

/// A job running.
enum Running {
    BuiltIn(Make),
    Command(command::ShellJob),
}

impl PreparedJob {
    /// Makes the private directory `dir` (removed when this is dropped)
    /// ready for the job `settings` give on `cpus` CPUs at `loops_per_ms`,
    /// and makes this process the subreaper of what the job starts.
    pub fn prepare(
        settings: &JobSettings,
        cpus: usize,
        loops_per_ms: f64,
        dir: &Path,
    ) -> Result<Self, JobError> {
        process_tree::become_subreaper().map_err(|error| JobError::Setup {
            what: "cannot become the subreaper of the job's processes".to_string(),
            error,
        })?;
        let space = JobSpace::create(dir)?;
        let what = match &settings.command {
            Some(command) => Prepared::Command(command.clone(), space.work_dir()?),
            None => {
                let plan = settings.plan(cpus);
                let build = space.build_dir(&plan)?;
                Prepared::BuiltIn(plan, build)
            }
        };
        Ok(Self {
            what,
            loops_per_ms,
            space,
        })
    }

    /// Runs the job to its end, or until its cap at the `CLOCK_MONOTONIC`
    /// time `cap_at_ns`, `cap_s` after it started. Whatever the job left
    /// running when it ended, and all of it at the cap, is killed and
    /// reaped.
    pub fn run(&self, cap_at_ns: u64, cap_s: f64) -> Result<JobRun, JobError> {
        let stderr = self.space.stderr()?;
        let cpu_before_ns = process_and_children_cpu_ns();
        let started_ns = now_ns();
        let outcome = self.start(&stderr).and_then(|mut running| {
            let finished = running.wait(cap_at_ns, &stderr);
            let ended_ns = now_ns();
            // What the job left running, or all of it at the cap; `running`
            // then reaps its own processes as it is dropped.
            let killed = process_tree::kill_descendants();
            finished.map(|finished| (finished, ended_ns, killed))
        });
        // The orphans handed to this process.
        process_tree::reap_exited();
        let cpu_ns = process_and_children_cpu_ns().saturating_sub(cpu_before_ns);
        match outcome? {
            (true, ended_ns, _) => Ok(JobRun {
                wall_ns: ended_ns - started_ns,
                cpu_ns,
            }),
            (false, _, killed) => Err(JobError::TimedOut {
                what: self.describe(),
                cap_s,
                killed,
            }),
        }
    }

    fn start(&self, stderr: &StderrLog) -> Result<Running, JobError> {
        Ok(match &self.what {
            Prepared::BuiltIn(plan, build) => Running::BuiltIn(Make::new(
                plan.clone(),
                build,
                self.loops_per_ms,
                stderr.clone(),
            )?),
            Prepared::Command(command, work) => {
                Running::Command(command::ShellJob::start(command, work, stderr)?)
            }
        })
    }

    /// The job in words, for messages.
    fn describe(&self) -> String {
        match &self.what {
            Prepared::BuiltIn(..) => "the built-in job".to_string(),
            Prepared::Command(command, _) => command::describe(command),
        }
    }
}

impl Running {
    /// Waits for the job to end, or until `until_ns`: `false` then.
    fn wait(&mut self, until_ns: u64, stderr: &StderrLog) -> Result<bool, JobError> {
        match self {
            Running::BuiltIn(make) => make.run_to_end(until_ns),
            Running::Command(shell) => shell.wait(until_ns, stderr),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_is_the_last_lines_on_one_line() {
        assert_eq!(tail_of(""), "");
        assert_eq!(tail_of("a\n\n  b  \n"), "a / b");
        let many: String = (1..=9).map(|i| format!("line {i}\n")).collect();
        assert_eq!(tail_of(&many), "line 5 / line 6 / line 7 / line 8 / line 9");
        let long = "x".repeat(1000) + "END";
        let tail = tail_of(&long);
        assert_eq!(tail.chars().count(), TAIL_CHARS + 1);
        assert!(tail.starts_with('…') && tail.ends_with("xEND"), "{tail}");
    }

    #[test]
    fn a_log_quotes_only_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let log = StderrLog::create(&dir.path().join("stderr")).unwrap();
        assert_eq!(log.tail(), "");
        let filler = "filler line\n".repeat(1000);
        std::fs::write(dir.path().join("stderr"), filler + "the error\n").unwrap();
        assert!(log.tail().ends_with("filler line / the error"));
    }

    #[test]
    fn settings_give_the_plan_expected_time_and_cap() {
        let settings = JobSettings::default();
        let expected_s = settings.expected_ns(2) as f64 / 1e9;
        assert!((15.0..25.0).contains(&expected_s), "{expected_s}");
        assert_eq!(settings.cap_ns(), 3_600_000_000_000);
        let command = JobSettings {
            command: Some("make".into()),
            timeout_s: 10.0,
            ..JobSettings::default()
        };
        assert_eq!(command.expected_ns(2), 10_000_000_000, "at most the cap");
        assert_eq!(settings.describe(), "built-in, size 1, at most 3600 s");
        assert_eq!(command.describe(), "`make`, at most 10 s");
        let failed = JobError::Failed {
            what: "the job `false`".into(),
            how: "exit code 1".into(),
            stderr_tail: String::new(),
        };
        assert_eq!(failed.to_string(), "the job `false` failed (exit code 1)");
    }
}
