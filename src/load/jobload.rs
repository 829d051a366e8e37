//! `jobload`: the `job` probe's built-in job as a load, run again and
//! again in a directory of its own, its inputs written once and so kept in
//! the page cache: a second build beside the one being timed. (It was
//! called `cacherun` before that name went back to what it meant in
//! contest: the compile run again with a warm cache and nothing beside it,
//! see `cacherun.rs`.) With `--job`, it still runs the built-in job:
//! a command cannot be assumed to survive running twice at once, as two
//! `make`s in one tree would not. Its work is the CPU time its job steps
//! used, counted as it is used (not as each step ends, which would leave
//! stretches of the measurement without work while long steps run), in job
//! steps of average size (150 ms of CPU is one; a whole job is about 120
//! per CPU, see `sim::job`).

use super::programs_cpu::{programs_cpu_ns, CountedCpu};
use super::{Load, LoadDef, LoadError};
use crate::measure::clock::now_ns;
use crate::measure::window::CpuTime;
use crate::sim::job::{step_units, JobSpace, Make};
use crate::sim::SettingsGroup;

/// Longest a step of the load waits for a job step to end, so the worker
/// looks at its commands often.
const STEP_NS: u64 = 100_000_000;

/// Registry entry.
pub const DEF: LoadDef = LoadDef {
    name: "jobload",
    summary: "the job probe's built-in job as background work, again and again, inputs cached",
    method: 1,
    unit: "job steps",
    takes_arg: false,
    disk_bytes: |params| params.job.plan(params.cpus).disk_bytes(),
    check: super::no_check,
    processes: |_| 1,
    build: |context| {
        let params = &context.params;
        let dir = context.dir.join(format!("jobload-{}", std::process::id()));
        let space = JobSpace::create(&dir)?;
        let make = space.make(params.job.plan(params.cpus), params.loops_per_ms)?;
        Ok(Box::new(JobLoad {
            make,
            _space: space,
            counted: CountedCpu::default(),
        }))
    },
    default: |_| false,
    uses: &[SettingsGroup::Job],
    job_cache: None,
};

/// The build in progress and its directory. `make` is dropped first: its
/// steps are killed and reaped before the directory is removed.
struct JobLoad {
    make: Make,
    _space: JobSpace,
    /// The job steps' CPU time already counted as work.
    counted: CountedCpu,
}

impl Load for JobLoad {
    /// Waits up to 100 ms for a job step to end, starting the next ones,
    /// and the next round once the link is done; returns the CPU time the
    /// job steps used meanwhile, in steps.
    fn step(&mut self) -> Result<f64, LoadError> {
        if self.make.is_done() {
            self.make.start_over();
        }
        self.make.next_finished(now_ns() + STEP_NS)?;
        // A step's clock ends with it a moment before its reaped time shows:
        // only growth counts.
        let steps_ns = programs_cpu_ns(self);
        Ok(step_units(self.counted.count(steps_ns, 1)))
    }

    /// CPU time of the steps running now (those that ended are reaped, so
    /// the worker's children's time has them).
    fn cpu(&self, worker: CpuTime) -> CpuTime {
        worker.plus(CpuTime::exact(self.make.running_cpu_ns()))
    }
}
