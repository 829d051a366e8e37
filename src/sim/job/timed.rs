//! The `job` probe's job: prepared (its directory, its stderr log and,
//! for the built-in job, its inputs and its build made) before its window,
//! then run to its end or to its cap. The process that runs it becomes the subreaper of everything the
//! job starts, so what the job leaves running when it ends, and all of it
//! at the cap, is found below that process, killed and reaped. (So it is
//! tested by `tests/suite/job.rs`, in feelbench's own processes: in a unit test
//! it would kill the other tests' children too.)

use super::command::{self, ShellJob};
use super::make::Make;
use super::settings::JobSettings;
use super::space::{JobSpace, StderrLog};
use super::{JobError, JobRun};
use crate::measure::clock::{now_ns, thread_and_children_cpu_ns};
use crate::system::process_tree;
use std::path::{Path, PathBuf};

/// The job of a run, ready to be timed: the `job` probe's.
pub struct PreparedJob {
    what: Prepared,
    stderr: StderrLog,
    space: JobSpace,
}

enum Prepared {
    /// The built-in job, its inputs written, none of its steps started.
    BuiltIn(Make),
    /// A command, to run in this directory.
    Command(String, PathBuf),
}

/// A job running.
enum Running {
    BuiltIn(Make),
    Command(ShellJob),
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
        let stderr = space.stderr()?;
        let what = match &settings.command {
            Some(command) => Prepared::Command(command.clone(), space.work_dir()?),
            None => {
                let plan = settings.plan(cpus);
                let build = space.build_dir(&plan, settings.cache)?;
                Prepared::BuiltIn(Make::new(plan, &build, loops_per_ms, stderr.clone())?)
            }
        };
        Ok(Self {
            what,
            stderr,
            space,
        })
    }

    /// Runs the job to its end, or until its cap at the `CLOCK_MONOTONIC`
    /// time `cap_at_ns`, `cap_s` after it started. Whatever the job left
    /// running when it ended, and all of it at the cap, is killed and
    /// reaped; its directory is removed after.
    pub fn run(self, cap_at_ns: u64, cap_s: f64) -> Result<JobRun, JobError> {
        let Self {
            what,
            stderr,
            space,
        } = self;
        let described = describe(&what);
        let cpu_before_ns = thread_and_children_cpu_ns();
        let started_ns = now_ns();
        let outcome = start(what, &stderr).and_then(|mut running| {
            let finished = running.wait(cap_at_ns, &stderr);
            let ended_ns = now_ns();
            // What the job left running, or all of it at the cap; `running`
            // then reaps its own processes as it is dropped.
            let killed = process_tree::kill_descendants();
            finished.map(|finished| (finished, ended_ns, killed))
        });
        // The orphans handed to this process.
        process_tree::reap_exited();
        let cpu_ns = thread_and_children_cpu_ns().saturating_sub(cpu_before_ns);
        drop(space);
        match outcome? {
            (true, ended_ns, _) => Ok(JobRun {
                wall_ns: ended_ns - started_ns,
                cpu_ns,
            }),
            (false, _, killed) => Err(JobError::TimedOut {
                what: described,
                cap_s,
                killed,
            }),
        }
    }
}

/// Starts the job `what`, its stderr going to `stderr`.
fn start(what: Prepared, stderr: &StderrLog) -> Result<Running, JobError> {
    Ok(match what {
        Prepared::BuiltIn(make) => Running::BuiltIn(make),
        Prepared::Command(command, work) => {
            Running::Command(ShellJob::start(&command, &work, stderr)?)
        }
    })
}

/// The job in words, for messages.
fn describe(what: &Prepared) -> String {
    match what {
        Prepared::BuiltIn(..) => "the built-in job".to_string(),
        Prepared::Command(command, _) => command::describe(command),
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
