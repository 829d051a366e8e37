//! One step of the built-in job, in a process of its own: what the hidden
//! `feelbench job-step SPEC` subcommand does. A compile step reads its
//! source and headers, does its CPU work and writes its object; the link
//! reads every object, does its work and writes the image. The work is a
//! fixed number of work loops (the step's CPU time at the run's
//! calibration), so the job does the same work in every run of the same
//! calibration whatever the load: contention makes it take longer, not
//! do less. What is written depends on what was read and on the work, so
//! neither can be skipped.

use super::files::JobDir;
use super::plan::{fill, hash_bytes, mix, CompileStep, LinkStep, HASH_START};
use crate::measure::work::{burn_loops, loops_for_ns};
use serde::{Deserialize, Serialize};
use std::io;
use std::path::PathBuf;

/// The name of the hidden subcommand that runs one step.
pub const STEP_SUBCOMMAND: &str = "job-step";

/// What a step process is started to do: its one argument, as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepSpec {
    /// The job's directory.
    pub dir: PathBuf,
    /// The run's calibration, which turns CPU time into work loops.
    pub loops_per_ms: f64,
    pub step: Step,
}

/// A step of the built-in job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    Compile(CompileStep),
    Link(LinkStep),
}

impl Step {
    /// The step in words, for messages.
    pub fn describe(&self) -> String {
        match self {
            Step::Compile(step) => format!("compile step {}", step.index + 1),
            Step::Link(_) => "link".to_string(),
        }
    }
}

/// Runs the step `spec_json` describes; returns the process exit code: 0,
/// or 1 with the reason on stderr.
pub fn run(spec_json: &str) -> i32 {
    let outcome = serde_json::from_str::<StepSpec>(spec_json)
        .map_err(|e| format!("bad job step spec: {e}"))
        .and_then(|spec| perform(&spec).map_err(|e| format!("job {}: {e}", spec.step.describe())));
    match outcome {
        Ok(()) => 0,
        Err(reason) => {
            eprintln!("feelbench: {reason}");
            1
        }
    }
}

/// Does the step of `spec`.
pub fn perform(spec: &StepSpec) -> io::Result<()> {
    let dir = JobDir::at(&spec.dir);
    match &spec.step {
        Step::Compile(step) => compile(&dir, step, spec.loops_per_ms),
        Step::Link(link) => self::link(&dir, link, spec.loops_per_ms),
    }
}

fn compile(dir: &JobDir, step: &CompileStep, loops_per_ms: f64) -> io::Result<()> {
    let mut hash = hash_bytes(HASH_START, &read(dir.source(step.index))?);
    for &header in &step.headers {
        hash = hash_bytes(hash, &read(dir.header(header))?);
    }
    let seed = hash ^ work(step.cpu_ns, loops_per_ms);
    write_output(dir.object(step.index), seed, step.object_bytes)
}

fn link(dir: &JobDir, link: &LinkStep, loops_per_ms: f64) -> io::Result<()> {
    let mut hash = HASH_START;
    for index in 0..link.objects {
        hash = hash_bytes(hash, &read(dir.object(index))?);
    }
    let seed = hash ^ work(link.cpu_ns, loops_per_ms);
    write_output(dir.image(), seed, link.image_bytes)
}

/// The step's CPU work: the loops that take `cpu_ns` at `loops_per_ms`.
fn work(cpu_ns: u64, loops_per_ms: f64) -> u64 {
    mix(burn_loops(loops_for_ns(loops_per_ms, cpu_ns)))
}

fn read(path: PathBuf) -> io::Result<Vec<u8>> {
    std::fs::read(&path).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}

/// Writes `bytes` bytes drawn from `seed` to `path`.
fn write_output(path: PathBuf, seed: u64, bytes: u64) -> io::Result<()> {
    let mut output = vec![0u8; bytes as usize];
    fill(seed, &mut output);
    std::fs::write(&path, output)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::job::plan::JobPlan;

    /// Runs every step of `plan` in `dir`, in this process, at `loops_per_ms`.
    fn build(plan: &JobPlan, dir: &std::path::Path, loops_per_ms: f64) -> Vec<u8> {
        let job = JobDir::at(dir);
        job.write_inputs(plan).unwrap();
        let steps = plan.compiles.iter().cloned().map(Step::Compile);
        for step in steps.chain([Step::Link(plan.link.clone())]) {
            let spec = StepSpec {
                dir: dir.to_path_buf(),
                loops_per_ms,
                step,
            };
            perform(&spec).unwrap();
        }
        std::fs::read(job.image()).unwrap()
    }

    #[test]
    fn the_same_job_builds_the_same_image() {
        let plan = JobPlan::new(1, 0.03);
        let dirs = [(); 3].map(|()| tempfile::tempdir().unwrap());
        let image = build(&plan, dirs[0].path(), 1.0);
        assert_eq!(image.len() as u64, plan.link.image_bytes);
        assert_eq!(image, build(&plan, dirs[1].path(), 1.0));
        // Other work (another calibration) makes another image.
        assert_ne!(image, build(&plan, dirs[2].path(), 2.0));
        let object = std::fs::read(JobDir::at(dirs[0].path()).object(0)).unwrap();
        assert_eq!(object.len() as u64, plan.compiles[0].object_bytes);
    }

    #[test]
    fn a_missing_input_fails_the_step_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let plan = JobPlan::new(1, 0.01);
        let spec = StepSpec {
            dir: dir.path().to_path_buf(),
            loops_per_ms: 1.0,
            step: Step::Compile(plan.compiles[0].clone()),
        };
        let err = perform(&spec).unwrap_err().to_string();
        assert!(err.contains("unit00000.c"), "{err}");
        let json = serde_json::to_string(&spec).unwrap();
        assert_eq!(run(&json), 1);
        assert_eq!(run("not json"), 1);
    }

    #[test]
    fn steps_say_what_they_are() {
        let plan = JobPlan::new(1, 0.01);
        assert_eq!(
            Step::Compile(plan.compiles[0].clone()).describe(),
            "compile step 1"
        );
        assert_eq!(Step::Link(plan.link.clone()).describe(), "link");
    }
}
