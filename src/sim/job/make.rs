//! Running the built-in job's steps as processes, as `make -jN` runs a
//! build: up to `parallel` compile steps at once, a new one as soon as one
//! ends, and the link once every compile step is done. Each step is this
//! program again (`feelbench job-step SPEC`), so the job needs no tool the
//! machine may lack. The `job` probe runs one round to its end; `jobload`
//! runs round after round, its inputs staying in the page cache.

use super::child::{wait_any, JobChild};
use super::plan::JobPlan;
use super::space::StderrLog;
use super::step::{Step, StepSpec, STEP_SUBCOMMAND};
use super::JobError;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A build of the built-in job in progress.
pub struct Make {
    plan: JobPlan,
    /// The job's directory, its inputs written.
    dir: PathBuf,
    loops_per_ms: f64,
    /// The program each step runs, and the arguments before its spec.
    program: PathBuf,
    program_args: Vec<String>,
    /// Where the steps' stderr goes.
    stderr: StderrLog,
    running: Vec<(JobChild, Step)>,
    /// Compile steps of this round started, and finished.
    started: usize,
    compiled: usize,
    /// Whether this round's link started, and finished.
    link_started: bool,
    linked: bool,
}

impl Make {
    /// A build of `plan` in `dir` (its inputs written) at `loops_per_ms`,
    /// the steps writing their errors to `stderr`; nothing starts yet.
    pub fn new(
        plan: JobPlan,
        dir: &Path,
        loops_per_ms: f64,
        stderr: StderrLog,
    ) -> Result<Self, JobError> {
        let program = std::env::current_exe().map_err(|error| JobError::Start {
            what: "the built-in job's steps (this program cannot be found)".to_string(),
            error,
        })?;
        Ok(Self::with_program(
            plan,
            dir,
            loops_per_ms,
            stderr,
            program,
            vec![STEP_SUBCOMMAND.to_string()],
        ))
    }

    /// The same, each step running `program` with `program_args` and its
    /// spec (tests use a shell).
    fn with_program(
        plan: JobPlan,
        dir: &Path,
        loops_per_ms: f64,
        stderr: StderrLog,
        program: PathBuf,
        program_args: Vec<String>,
    ) -> Self {
        Self {
            running: Vec::with_capacity(plan.parallel),
            plan,
            dir: dir.to_path_buf(),
            loops_per_ms,
            program,
            program_args,
            stderr,
            started: 0,
            compiled: 0,
            link_started: false,
            linked: false,
        }
    }

    /// Whether every step of this round has ended.
    pub fn is_done(&self) -> bool {
        self.linked
    }

    /// Begins a new round: every step again, over the last round's outputs.
    pub fn start_over(&mut self) {
        self.started = 0;
        self.compiled = 0;
        self.link_started = false;
        self.linked = false;
    }

    /// CPU time the running steps have used so far (those that ended are
    /// counted by the kernel in the caller's children's time).
    pub fn running_cpu_ns(&self) -> u64 {
        self.running.iter().map(|(child, _)| child.cpu_ns()).sum()
    }

    /// Runs this round to its end, or until the `CLOCK_MONOTONIC` time
    /// `until_ns`; `false` when that came first (the steps still running
    /// are then left to the caller, or to [`Drop`]).
    pub fn run_to_end(&mut self, until_ns: u64) -> Result<bool, JobError> {
        while !self.is_done() {
            if self.next_finished(until_ns)?.is_none() {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Starts the steps that can start, and waits until `until_ns` at most
    /// for one to end; returns it, or `None` once `until_ns` passed. A step
    /// that fails fails the job.
    pub fn next_finished(&mut self, until_ns: u64) -> Result<Option<Step>, JobError> {
        self.start_ready()?;
        let children: Vec<&JobChild> = self.running.iter().map(|(child, _)| child).collect();
        let Some(index) = wait_any(&children, until_ns)? else {
            return Ok(None);
        };
        let (mut child, step) = self.running.swap_remove(index);
        if let Some(how) = child.reap()? {
            return Err(JobError::Failed {
                what: format!("the built-in job's {}", step.describe()),
                how,
                stderr_tail: self.stderr.tail(),
            });
        }
        match step {
            Step::Compile(_) => self.compiled += 1,
            Step::Link(_) => self.linked = true,
        }
        Ok(Some(step))
    }

    /// Starts compile steps while there is room, and the link once every
    /// compile step has ended.
    fn start_ready(&mut self) -> Result<(), JobError> {
        while self.running.len() < self.plan.parallel && self.started < self.plan.compiles.len() {
            let step = Step::Compile(self.plan.compiles[self.started].clone());
            self.start(step)?;
            self.started += 1;
        }
        let compiled_all = self.compiled == self.plan.compiles.len();
        if compiled_all && !self.link_started {
            self.start(Step::Link(self.plan.link.clone()))?;
            self.link_started = true;
        }
        Ok(())
    }

    fn start(&mut self, step: Step) -> Result<(), JobError> {
        let what = format!("the built-in job's {}", step.describe());
        let spec = StepSpec {
            dir: self.dir.clone(),
            loops_per_ms: self.loops_per_ms,
            step,
        };
        let spec_json = serde_json::to_string(&spec).map_err(|e| JobError::Start {
            what: what.clone(),
            error: std::io::Error::other(e),
        })?;
        let stderr = self.stderr.stdio().map_err(|error| JobError::Start {
            what: what.clone(),
            error,
        })?;
        let mut command = Command::new(&self.program);
        command
            .args(&self.program_args)
            .arg(spec_json)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr);
        let child = JobChild::spawn(&mut command, &what)?;
        self.running.push((child, spec.step));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::clock::now_ns;

    /// A build of a 5-step plan whose steps run `script` in a shell (the
    /// step's spec is `$1`), writing to a log in a fresh directory.
    fn make(script: &str, dir: &tempfile::TempDir) -> Make {
        let stderr = StderrLog::create(&dir.path().join("stderr")).unwrap();
        let mut plan = JobPlan::new(1, 0.04);
        plan.parallel = 2;
        assert_eq!(plan.compiles.len(), 5);
        let args = ["-c", script, "step"].map(String::from).to_vec();
        Make::with_program(plan, dir.path(), 1.0, stderr, "/bin/sh".into(), args)
    }

    fn later() -> u64 {
        now_ns() + 30_000_000_000
    }

    #[test]
    fn compile_steps_run_two_at_a_time_then_the_link() {
        let dir = tempfile::tempdir().unwrap();
        // Each step notes how many steps run beside it.
        let script = r#"echo "$1" | grep -q '"link"' && echo link >> order || echo compile >> order; ls running | wc -l >> width; touch running/$$; sleep 0.05; rm running/$$"#;
        std::fs::create_dir(dir.path().join("running")).unwrap();
        let mut make = make(&format!("cd {} && {script}", dir.path().display()), &dir);
        assert!(make.run_to_end(later()).unwrap());
        assert!(make.is_done());
        let order = std::fs::read_to_string(dir.path().join("order")).unwrap();
        assert_eq!(order, "compile\n".repeat(5) + "link\n");
        let width = std::fs::read_to_string(dir.path().join("width")).unwrap();
        assert!(
            width.lines().all(|n| n.trim() == "0" || n.trim() == "1"),
            "{width}"
        );
        make.start_over();
        assert!(!make.is_done());
        assert!(make.run_to_end(later()).unwrap());
    }

    #[test]
    fn a_failing_step_fails_the_job_with_its_stderr() {
        let dir = tempfile::tempdir().unwrap();
        let mut make = make(
            r#"echo "$1" | grep -q '"link"' && { echo 'no room' >&2; exit 4; }; exit 0"#,
            &dir,
        );
        let err = make.run_to_end(later()).unwrap_err().to_string();
        assert_eq!(
            err,
            "the built-in job's link failed (exit code 4); its stderr ended with: no room"
        );
    }

    #[test]
    fn a_deadline_stops_the_wait_and_dropping_kills_the_steps() {
        let dir = tempfile::tempdir().unwrap();
        let mut make = make("sleep 30", &dir);
        assert!(!make.run_to_end(now_ns() + 100_000_000).unwrap());
        assert_eq!(make.running.len(), 2);
        assert_eq!(make.next_finished(now_ns()).unwrap(), None);
        drop(make);
    }
}
