//! The settings of `feelbench run`, validated by the command line and
//! complete when built. What only the run can learn (the calibration, the
//! sizes of the disk and memory loads' work) is not a field to fill in
//! later: the run computes [`WorkParams`] from [`WorkSettings`] once it
//! knows them.

use crate::document::schema::SuiteRecord;
use crate::engine::scenario::Scenario;
use crate::measure::sched::SchedRequest;
use crate::sim::fragment::FragmentSettings;
use crate::sim::game::GameSettings;
use crate::sim::io::IoSettings;
use crate::sim::job::JobSettings;
use crate::sim::micro::MicroMode;
use crate::sim::response::{default_array_bytes, ResponseParams};
use crate::sim::rtapp::settings::RtappSettings;
use crate::sim::{CustomShape, WorkParams};
use crate::system::cpulist::CpuList;
use std::path::PathBuf;

/// Validated settings of a run.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Every chosen probe under every chosen load, in run order.
    pub scenarios: Vec<Scenario>,
    /// The suite the scenarios and settings came from, as the run applied it.
    pub suite: Option<SuiteRecord>,
    /// Whether the user named loads (else the default set runs, and may
    /// leave out what does not fit).
    pub loads_given: bool,
    /// How long and how often each scenario is measured.
    pub timing: Timing,
    /// What the work is made of, before the run completes it.
    pub work: WorkSettings,
    /// The probe's nice, policy and timer slack.
    pub probe_sched: SchedRequest,
    /// Nice value of the loads.
    pub load_nice: i32,
    /// Directory the private work directory is made in.
    pub workdir: PathBuf,
    /// Memory cgroup the loads run in (`--mem-limit`), in bytes.
    pub mem_limit_bytes: Option<u64>,
    /// Temporary swap file added for the run (`--swap`), in bytes.
    pub swap_file_bytes: Option<u64>,
    /// Where the probe and the loads run: CPUs and the loads' CPU weight.
    pub placement: Placement,
    /// What is checked before the first scenario.
    pub preflight: Preflight,
    /// What the run writes and prints.
    pub output: OutputSettings,
    /// PM QoS CPU latency limit held for the run (`--cpu-dma-latency`), in µs.
    pub cpu_dma_latency_us: Option<u32>,
    /// Name the tasks that ran while the probe waited (`--explain`).
    pub explain: bool,
}

/// How long and how often each scenario is measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    /// Time measured per scenario.
    pub duration_ns: u64,
    /// Time the loads run before the probe starts.
    pub warmup_ns: u64,
    /// Times each scenario is measured (`--repeat`).
    pub repeats: u32,
    /// With `--precision`: measure each scenario until it is this precise
    /// (then `repeats` is 1).
    pub precision: Option<PrecisionGoal>,
}

impl Timing {
    /// Most measurements a scenario measured `repeats` times whose
    /// measurement is expected to take `expected_ns` can take: `repeats`,
    /// or with `--precision` as many as `--max-time` allows.
    pub fn most_measurements(&self, repeats: u32, expected_ns: u64) -> u32 {
        match self.precision {
            Some(goal) => goal.max_measurements(expected_ns),
            None => repeats,
        }
    }
}

/// `--precision PCT --max-time SECS`: measure a scenario again and again
/// until the intervals of its headline figures are within `pct` (see
/// `document::precision`), or until it has been measured for `max_time_ns`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrecisionGoal {
    /// Half-width allowed: % of the value, or points for shares in %.
    pub pct: f64,
    /// Most time measured per scenario, at least one measurement's.
    pub max_time_ns: u64,
}

impl PrecisionGoal {
    /// Most measurements of `duration_ns` that fit in the time allowed
    /// (at least one).
    pub fn max_measurements(&self, duration_ns: u64) -> u32 {
        let fit = self.max_time_ns / duration_ns.max(1);
        u32::try_from(fit).unwrap_or(u32::MAX).max(1)
    }
}

/// What the probes' and loads' work is made of, as far as the machine and
/// the user decide it before the run starts.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkSettings {
    /// CPUs the run may use.
    pub cpus: usize,
    /// Processes of the burn load.
    pub burn_processes: usize,
    /// Shape of the custom simulation (`-C`/`-I`).
    pub custom: Option<CustomShape>,
    /// Work loops per ms forced with `-l` (else calibrated).
    pub loops_per_ms: Option<f64>,
    /// Whether to calibrate even with a cached calibration.
    pub recalibrate: bool,
    /// Size of the disk loads' files chosen with `--file-size`.
    pub file_bytes: Option<u64>,
    /// Swap free for the loads: the system's plus `--swap`.
    pub swap_bytes: u64,
    /// How the probes that answer after an idle gap work.
    pub response: ResponseSettings,
    /// The job of the `job` probe and the `jobload` load (`--job`,
    /// `--job-size`, `--job-timeout`).
    pub job: JobSettings,
    /// The `fragment` probe's buffer and work (`--fragments`,
    /// `--fragment-bytes`, `--sample-rate`, `--fragment-cpu`).
    pub fragment: FragmentSettings,
    /// The `game` probe's frame graph (`--game-refresh`, `--game-queue`,
    /// `--game-pool`, `--game-jobs`, `--game-cpu`).
    pub game: GameSettings,
    /// The `fileio` probe's file and rhythm, the request thresholds and the
    /// `io*` loads' processes (`--fileio-size`, `--fileio-period`,
    /// `--io-thresholds`, `--io-threads`).
    pub io: IoSettings,
    /// How the `micro` probes time their operations (`--micro-mode`).
    pub micro: MicroMode,
    /// The rt-app workloads of the `rtapp` probe and load.
    pub rtapp: RtappSettings,
    /// Whether the probes split each event's delay into its causes (off
    /// with `--no-late-split`).
    pub late_split: bool,
}

impl WorkSettings {
    /// The parameters of the run's work, once the run knows the work rate
    /// and the sizes of the disk and memory loads' work.
    pub fn params(&self, loops_per_ms: f64, file_bytes: u64, mem_bytes: u64) -> WorkParams {
        WorkParams {
            loops_per_ms,
            cpus: self.cpus,
            burn_processes: self.burn_processes,
            custom: self.custom,
            file_bytes,
            mem_bytes,
            swap_bytes: self.swap_bytes,
            response: self.response.params(mem_bytes),
            job: self.job.clone(),
            fragment: self.fragment,
            game: self.game,
            io: self.io.clone(),
            micro: self.micro,
            rtapp: self.rtapp.clone(),
            late_split: self.late_split,
            trace_events: 0,
        }
    }

    /// The parameters known before the run, against which the command line
    /// checks the probes and loads it is asked for: sizes the run has not
    /// measured yet are 0, which the registries read as "not known yet"
    /// (see `load::check_swap_for`), and no check depends on the work rate.
    pub fn params_before_the_run(&self) -> WorkParams {
        self.params(self.loops_per_ms.unwrap_or(1.0), 0, 0)
    }
}

/// The `response` and `command` probes' settings as the user gave them
/// (`--response-gap`, `--response-points`, `--response-resident`,
/// `--response-fresh`, `--command`, `--command-cold`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseSettings {
    /// The idle gap before each point.
    pub gap_ns: u64,
    /// Points per scenario.
    pub points: u32,
    /// Size of the resident array, when given (else from the memory).
    pub resident_bytes: Option<u64>,
    /// Size of the fresh array, when given (else from the memory).
    pub fresh_bytes: Option<u64>,
    /// The command to time instead of the default program.
    pub command: Option<String>,
    /// Drop the page cache before each point.
    pub cold: bool,
}

impl ResponseSettings {
    /// The parameters for loads that work through `mem_bytes`: the array
    /// sizes not given are scaled from it.
    pub fn params(&self, mem_bytes: u64) -> ResponseParams {
        ResponseParams {
            gap_ns: self.gap_ns,
            points: self.points,
            resident_bytes: self
                .resident_bytes
                .unwrap_or_else(|| default_array_bytes(mem_bytes)),
            fresh_bytes: self
                .fresh_bytes
                .unwrap_or_else(|| default_array_bytes(mem_bytes)),
            command: self.command.clone(),
            cold: self.cold,
        }
    }
}

/// Where the probe and the loads run (`--probe-cpus`, `--probe-session`,
/// `--load-cpus`, `--load-cpu-weight`); `None` leaves each as the system has
/// it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Placement {
    /// The CPUs the probe is put on, every one online.
    pub probe_cpus: Option<CpuList>,
    /// Whether the probe runs in a session of its own.
    pub probe_session: bool,
    /// The CPUs the loads are put on, every one online.
    pub load_cpus: Option<CpuList>,
    /// The CPU weight of the loads' cgroup, 1 to 10000.
    pub load_cpu_weight: Option<u32>,
}

/// What is checked before the first scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preflight {
    /// `--expect` pairs, keys already checked against the environment's.
    pub expect: Vec<(String, String)>,
    /// Length of the noise check; zero skips it.
    pub noise_check_ns: u64,
    /// Whether a busy machine refuses the run.
    pub strict: bool,
}

/// What the run writes and prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputSettings {
    /// Where the run document goes.
    pub file: OutputChoice,
    /// A comment stored with the run.
    pub comment: Option<String>,
    /// The store the run is added to when it ends; `None` for none.
    pub store: Option<crate::store::StoreLocation>,
    /// No progress bar.
    pub quiet: bool,
    /// A telemetry line under each row.
    pub verbose: bool,
    /// Where the Perfetto trace goes (`--trace`); `None` for none.
    pub trace: Option<PathBuf>,
}

/// Where the run document goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputChoice {
    /// A file named after the kernel and the date, in the current directory.
    Default,
    /// The file `-o` names.
    File(PathBuf),
    /// No file (`-c`): the tables only.
    ConsoleOnly,
}
