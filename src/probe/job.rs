//! `job`: contest's question — how long does a reference job (a kernel
//! compile, `make -j4`) take under each load, against no load? The probe
//! runs the job once per measurement, from the start of its window to the
//! job's end, and shows contest's table: `Time  CPU%  Loads  LCPU%  Ratio`
//! — the job's time, the CPU it got (the job's CPU time over its wall
//! time, 200 % being two CPUs), the work the load got done in the same
//! span (in the load's unit) and the CPU the load used, and the ratio of
//! the job's time to its time under `none`. The load's work is counted
//! until the job ends (its pace is its own, `Pace::OwnWork`): a kernel
//! that ends the job sooner by starving the load shows it there
//! (contest's blind spot). Beside the table, `job_read_mb` is what the
//! job's processes read from the device: the inputs under `--job-cache
//! cold`, nearly nothing when they are warm (`cacherun`).
//!
//! The job is the built-in one (`sim::job`, about 20 s on idle CPUs,
//! `--job-size` scales it) or `--job 'CMD'`. Its set-up (its directory,
//! the built-in job's 9 MB of inputs) is done in `Probe::prepare`, before
//! the window is announced, so neither the job's time nor the loads' work
//! counted beside it includes it; the tally keeps how long before the
//! window's start the set-up ended (`setup_lead_s`). One measurement is one run of
//! the job, so a single run has no interval: `--repeat 3` or more gives the
//! job time one from the spread of its runs, and lets `compare` test it.
//! A job that fails, or outlives `--job-timeout` (it is then killed with
//! everything it started), fails the scenario with the reason; the run
//! goes on. The job runs as the probe is scheduled (`-B`, `--rt`,
//! `--probe-cpus`): every process it starts inherits that.

use super::{MeasureError, Pace, Probe, ProbeDef};
use crate::figures::result::MEASURED_S;
use crate::figures::{
    Better, Column, ColumnSource, FigureDef, Formula, Measured, OverviewRole, ProbeSheet, Tally,
    Unit,
};
use crate::measure::clock::{now_ns, sleep_until_ns};
use crate::measure::latency::LatencyHistogram;
use crate::measure::sched::MemoryPolicy;
use crate::measure::window::Window;
use crate::sim::job::{JobRun, PreparedJob};
use crate::sim::{SettingsGroup, WorkParams};
use crate::system::procfs;
use std::path::Path;

/// Registry entry.
pub const DEF: ProbeDef = ProbeDef {
    name: "job",
    summary: "contest's kernel compile: a parallel build (or --job CMD) timed to its end",
    method: 1,
    sheet,
    build: |params: &WorkParams| {
        Ok(Box::new(JobProbe {
            params: params.clone(),
            prepared: None,
        }))
    },
    default: |_| false,
    uses: &[SettingsGroup::Job],
    pace: Pace::OwnWork {
        expected_ns: |params| params.job.expected_ns(params.cpus),
        cap_ns: |params| params.job.cap_ns(),
    },
    // The job's processes compete for memory with the loads (in their
    // memory cgroup under --mem-limit), as a compile does on a real machine.
    // The built-in job's files; a command's are its own business.
    disk_bytes: |params| match params.job.command {
        Some(_) => 0,
        None => params.job.plan(params.cpus).disk_bytes(),
    },
    memory: MemoryPolicy::Shared,
    run_figure: super::no_run_figures,
};

/// Wall times of the job's runs (one per measurement).
const JOB_TIME: &str = "job_time";
/// CPU time of the job's runs, in s.
const JOB_CPU_S: &str = "job_cpu_s";
/// Time from the end of the job's set-up to the start of its window (and
/// of the job), in s.
const SETUP_LEAD_S: &str = "setup_lead_s";
/// Runs of the job whose device reads are known.
const READ_RUNS: &str = "read_runs";
/// MB the job's processes caused to be read from the device (their
/// `read_bytes`, which the probe's process gathers as it reaps them).
const JOB_READ_MB: &str = "job_read_mb";

/// The figures of the job (its time, its CPU) and contest's table.
fn sheet(summary: &str, _params: Option<&WorkParams>) -> ProbeSheet {
    let job_time = || JOB_TIME.to_string();
    ProbeSheet {
        summary: summary.to_string(),
        own_pace: false,
        // contest's columns, in its order: the job's time and CPU, the
        // load's work and CPU beside it, the time's ratio to no load's.
        columns: vec![
            Column::new("Time (s)", &["time"], 10),
            Column::new("CPU %", &["cpu"], 7),
            Column::load("Loads", ColumnSource::LoadAmount, 9),
            Column::load("LCPU %", ColumnSource::LoadCpu, 7),
            Column::ratio_to_none("Ratio", "time", 7),
        ],
        figures: vec![
            FigureDef::new(
                "time",
                "job_time_us",
                "job time (s)",
                Unit::Seconds,
                Better::Lower,
                Formula::Mean {
                    samples: job_time(),
                },
            )
            .headline()
            .compared(),
            FigureDef::new(
                "cpu",
                "job_cpu_pct",
                "job CPU (%)",
                Unit::Percent,
                Better::Higher,
                Formula::Ratio {
                    num: JOB_CPU_S.to_string(),
                    den: MEASURED_S.to_string(),
                    scale: 100.0,
                },
            ),
            FigureDef::new(
                "read",
                "job_read_mb",
                "job read from the device (MB)",
                Unit::Rate,
                Better::Lower,
                Formula::Ratio {
                    num: JOB_READ_MB.to_string(),
                    den: READ_RUNS.to_string(),
                    scale: 1.0,
                },
            ),
            FigureDef::new(
                "jobs",
                "jobs_run",
                "jobs run",
                Unit::Count,
                Better::Higher,
                Formula::SampleCount {
                    samples: job_time(),
                },
            ),
        ],
    }
    .with_overview("time", OverviewRole::ratio("slower"))
}

struct JobProbe {
    params: WorkParams,
    /// The job once prepared, and when its set-up ended.
    prepared: Option<(PreparedJob, u64)>,
}

impl Probe for JobProbe {
    /// Makes the job's directory and writes its inputs.
    fn prepare(&mut self, dir: &Path) -> Result<(), MeasureError> {
        let params = &self.params;
        let job = PreparedJob::prepare(&params.job, params.cpus, params.loops_per_ms, dir)?;
        self.prepared = Some((job, now_ns()));
        Ok(())
    }

    /// Starts the job at the window's start and waits for its end; the
    /// window's end is the job's cap.
    fn measure(self: Box<Self>, window: Window, _dir: &Path) -> Result<Measured, MeasureError> {
        let (job, prepared_ns) = self.prepared.ok_or_else(|| MeasureError::Io {
            what: "measured before its job was prepared",
            error: std::io::ErrorKind::NotFound.into(),
        })?;
        let read_before = read_bytes();
        sleep_until_ns(window.start_ns);
        let run = job.run(window.end_ns, self.params.job.timeout_s)?;
        let read_mb = read_before
            .zip(read_bytes())
            .map(|(before, after)| after.saturating_sub(before) as f64 / 1e6);
        let lead_ns = window.start_ns.saturating_sub(prepared_ns);
        Ok(job_tally(&run, lead_ns, read_mb))
    }
}

/// Bytes this process and its reaped children caused to be read from the
/// device (/proc/self/io), or `None` without I/O accounting.
fn read_bytes() -> Option<u64> {
    let io = procfs::read_process_io(Path::new("/proc"), "self").ok()?;
    Some(io.read_bytes)
}

/// The tally of one run of the job, whose set-up ended `setup_lead_ns`
/// before its window began and which read `read_mb` from the device (when
/// known); it has no sub-windows.
fn job_tally(run: &JobRun, setup_lead_ns: u64, read_mb: Option<f64>) -> Measured {
    let mut times = LatencyHistogram::new();
    times.record_ns(run.wall_ns);
    let mut tally = Tally::default()
        .with_samples(JOB_TIME, &times, run.wall_ns)
        .with_count(MEASURED_S, run.wall_ns as f64 / 1e9)
        .with_count(JOB_CPU_S, run.cpu_ns as f64 / 1e9)
        .with_count(SETUP_LEAD_S, setup_lead_ns as f64 / 1e9);
    if let Some(read_mb) = read_mb {
        tally = tally
            .with_count(JOB_READ_MB, read_mb)
            .with_count(READ_RUNS, 1.0);
    }
    Measured::of(tally, Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::ProbeResult;
    use crate::measure::sched::SchedApplied;

    fn result_of(runs: &[(f64, f64)]) -> ProbeResult {
        let sheet = sheet("scripted", None);
        let results: Vec<ProbeResult> = runs
            .iter()
            .map(|&(wall_s, cpu_s)| {
                let run = JobRun {
                    wall_ns: (wall_s * 1e9) as u64,
                    cpu_ns: (cpu_s * 1e9) as u64,
                };
                let measured = job_tally(&run, 60_000_000, Some(wall_s / 10.0));
                ProbeResult::new(
                    &sheet,
                    measured.tally,
                    measured.batches,
                    SchedApplied::for_tests(),
                )
            })
            .collect();
        let refs: Vec<&ProbeResult> = results.iter().collect();
        ProbeResult::merged(&sheet, &refs).unwrap()
    }

    #[test]
    fn one_run_gives_its_time_and_cpu() {
        let result = result_of(&[(20.0, 36.0)]);
        assert_eq!(result.figures["job_time_us"], 20e6);
        assert_eq!(result.figures["job_cpu_pct"], 180.0);
        assert_eq!(result.figures["jobs_run"], 1.0);
        assert_eq!(result.figures["job_read_mb"], 2.0);
        assert!(result.batches.is_empty());
        assert_eq!(sheet("s", None).figure("time").unwrap().show(20e6), "20.00");
    }

    #[test]
    fn repeats_give_the_mean_time_and_the_cpu_over_all_their_time() {
        let result = result_of(&[(20.0, 36.0), (30.0, 30.0)]);
        assert_eq!(result.figures["job_time_us"], 25e6);
        // 66 s of CPU in 50 s.
        assert!((result.figures["job_cpu_pct"] - 132.0).abs() < 1e-9);
        assert_eq!(result.figures["jobs_run"], 2.0);
        // 2 and 3 MB: 2.5 per run.
        assert_eq!(result.figures["job_read_mb"], 2.5);
    }

    #[test]
    fn only_the_built_in_job_needs_room_for_its_files() {
        let mut params = WorkParams::for_tests();
        assert!((DEF.disk_bytes)(&params) > 0);
        params.job.command = Some("make -j4".into());
        assert_eq!((DEF.disk_bytes)(&params), 0);
    }

    #[test]
    fn the_table_is_contests_and_its_pace_is_the_jobs() {
        let sheet = DEF.sheet();
        let headers: Vec<&str> = sheet.columns.iter().map(|c| c.header.as_str()).collect();
        assert_eq!(headers, ["Time (s)", "CPU %", "Loads", "LCPU %", "Ratio"]);
        assert_eq!(sheet.columns[2].source, ColumnSource::LoadAmount);
        assert_eq!(sheet.columns[3].source, ColumnSource::LoadCpu);
        assert!(sheet.columns[4].ratio_to_none);
        let params = WorkParams::for_tests();
        assert_eq!(DEF.window_ns(&params, 1), 3_600_000_000_000, "the cap");
        let expected_s = DEF.expected_ns(&params, 1) as f64 / 1e9;
        assert!((15.0..25.0).contains(&expected_s), "{expected_s}");
    }
}
