//! The options of `feelbench run`, in groups (each with its heading in
//! `--help`), and [`RunArgs::into_config`], which checks every option and
//! name and builds the run's settings once, complete.

use super::docs;
use super::rtapp_spec::take_workload;
use super::select::{Loads, Probes, Selection};
use super::values::{
    check, check_nice, check_online, parse_bytes, parse_cpu_list, parse_duration, parse_expect,
    parse_percent, parse_thresholds, seconds_to_ns,
};
use super::Machine;
use crate::commands::run::{
    OutputChoice, OutputSettings, Placement, PrecisionGoal, Preflight, ResponseSettings, RunConfig,
    Timing, WorkSettings,
};
use crate::commands::suite::{Group, Suite};
use crate::engine::scenario::Scenario;
use crate::exit::UsageError;
use crate::measure::sched::{current_nice, SchedRequest};
use crate::sim::fragment::FragmentSettings;
use crate::sim::game::GameSettings;
use crate::sim::io::IoSettings;
use crate::sim::job::{JobCache, JobSettings};
use crate::sim::micro::MicroMode;
use crate::sim::rtapp::model::Workload;
use crate::sim::rtapp::settings::RtappSettings;
use crate::sim::CustomShape;
use crate::store::StoreLocation;
use crate::system::cpulist::CpuList;
use crate::system::pmqos;
use clap::Args;
use std::path::PathBuf;

mod selection;
mod work;

pub use selection::SelectionArgs;
use work::{FragmentArgs, GameArgs, IoArgs, JobArgs, ProbeSchedArgs, ResponseArgs, WorkArgs};

/// Seconds per scenario when no suite sets them (probes or loads named on
/// the command line; the interbench suite gives the same): the x probe
/// (100 frames a second) still gets a p99 interval (5 groups of 100
/// frames: 5 s with no frame dropped) with a margin; see
/// `bench/significance.sh` and the README.
const DEFAULT_DURATION_S: f64 = 6.0;
/// Seconds per scenario with `--full`, as interbench.
const FULL_DURATION_S: f64 = 30.0;
/// Most times a scenario can be measured in one run.
const MAX_REPEATS: u32 = 1000;
/// `--max-time` when not given, in measurements of `-t`: from about ten
/// repeats the t quantile of their interval has nearly settled (2.26 against
/// 1.96 for ever), and narrowing it by half more would take four times as
/// long; it also bounds a default run with `--precision` to 10 times its
/// usual length.
const DEFAULT_MAX_MEASUREMENTS: f64 = 10.0;
/// Most points a response or command scenario can measure.
const MAX_RESPONSE_POINTS: u32 = 1000;
/// The range of cgroup CPU weights (v2 `cpu.weight`).
const CPU_WEIGHTS: std::ops::RangeInclusive<u32> = 1..=10_000;
/// The largest `--job-size`: a built-in job of about half an hour.
const MAX_JOB_SIZE: f64 = 100.0;

/// Options of `feelbench run` (interbench's letters where they do not clash).
#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub timing: TimingArgs,
    #[command(flatten)]
    pub selection: SelectionArgs,
    #[command(flatten)]
    probe: ProbeSchedArgs,
    #[command(flatten)]
    work: WorkArgs,
    #[command(flatten)]
    response: ResponseArgs,
    #[command(flatten)]
    job: JobArgs,
    #[command(flatten)]
    fragment: FragmentArgs,
    #[command(flatten)]
    game: GameArgs,
    #[command(flatten)]
    io: IoArgs,
    #[command(flatten)]
    loads: LoadArgs,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    safety: SafetyArgs,
    #[command(flatten)]
    power: PowerArgs,
    /// The suite the run was made from, once `suite::resolve` read it and
    /// put its settings before the user's options.
    #[arg(skip)]
    pub applied_suite: Option<AppliedSuite>,
}

/// A suite as a run applies it: its groups, and the options it gave.
#[derive(Debug, Clone)]
pub struct AppliedSuite {
    pub suite: Suite,
    /// The options the suite gave, as arguments.
    pub options: Vec<String>,
    /// Root-only options left out because the run is not root's.
    pub root_left_out: Vec<String>,
}

/// How long and how often each scenario is measured.
#[derive(Debug, Args)]
#[command(next_help_heading = "Timing")]
pub struct TimingArgs {
    /// Seconds measured per scenario [default: the suite's (4 in the default
    /// suite), else 6, or 30 with --full].
    #[arg(short = 't', long = "duration", value_name = "SECS")]
    duration_s: Option<f64>,
    /// Measure every scenario N times, in N rounds of all scenarios (so slow
    /// drift spreads over them); each scenario's row shows the merge of its
    /// repeats, and the file keeps each repeat.
    #[arg(long = "repeat", value_name = "N", default_value_t = 1)]
    repeat: u32,
    /// Every probe under every load that can run here, 30 s each (interbench's default).
    #[arg(long = "full")]
    pub full: bool,
    /// Measure each scenario again and again (for -t each time, back to
    /// back) until the 95 % confidence interval of every headline figure is
    /// within ±PCT: % of the value for latencies and rates, points for shares
    /// in % (deadlines, desired CPU); or until --max-time.
    #[arg(
        long = "precision",
        value_name = "PCT",
        value_parser = parse_percent,
        conflicts_with = "repeat"
    )]
    precision_pct: Option<f64>,
    /// With --precision, most seconds measured per scenario [default: 10 × -t].
    #[arg(long = "max-time", value_name = "SECS", requires = "precision_pct")]
    max_time_s: Option<f64>,
    /// Seconds the loads run before the probe starts.
    #[arg(long = "warmup", value_name = "SECS", default_value_t = 0.5)]
    warmup_s: f64,
}

/// Where and how the loads run.
#[derive(Debug, Args)]
#[command(next_help_heading = "Loads")]
struct LoadArgs {
    /// Nice value of the loads [default: the nice value feelbench was
    /// started with, normally 0].
    #[arg(
        short = 'N',
        long = "load-nice",
        value_name = "N",
        allow_hyphen_values = true
    )]
    load_nice: Option<i32>,
    /// Directory for the disk loads' files (a private directory is made in it).
    #[arg(long = "workdir", value_name = "DIR", default_value = ".")]
    workdir: PathBuf,
    /// Size of the disk loads' files, e.g. 512M or 4G [default: the RAM size,
    /// at most half the free space of the work directory].
    #[arg(long = "file-size", value_name = "SIZE", value_parser = parse_bytes)]
    file_bytes: Option<u64>,
    /// Run the loads in a memory cgroup of this size, e.g. 512M.
    #[arg(long = "mem-limit", value_name = "SIZE", value_parser = parse_bytes)]
    mem_limit_bytes: Option<u64>,
    /// Add a temporary swap file of this size for the run, e.g. 2G.
    #[arg(long = "swap", value_name = "SIZE", value_parser = parse_bytes)]
    swap_bytes: Option<u64>,
    /// Run the loads, and all they start, on these CPUs only, e.g. 1 or 1-3
    /// (sched_setaffinity).
    #[arg(long = "load-cpus", value_name = "LIST", value_parser = parse_cpu_list)]
    load_cpus: Option<CpuList>,
    /// Run the loads in a CPU cgroup of this weight, 1 to 10000 (100 is the
    /// default share; cgroup v2 cpu.weight, else v1 cpu.shares = N × 1024 / 100).
    #[arg(long = "load-cpu-weight", value_name = "N")]
    load_cpu_weight: Option<u32>,
}

/// What the run writes and prints.
#[derive(Debug, Args)]
#[command(next_help_heading = "Output")]
struct OutputArgs {
    /// A comment stored with the run.
    #[arg(short = 'm', long = "comment", value_name = "TEXT")]
    comment: Option<String>,
    /// Where to write the run [default: feelbench-KERNEL-DATE.json].
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        conflicts_with = "console_only"
    )]
    output: Option<PathBuf>,
    /// Print the tables only; write no file and store nothing.
    #[arg(short = 'c', long = "console-only")]
    console_only: bool,
    /// Add the run to this store when it ends: a SQLite file's path or a
    /// postgres:// URL [default: $FEELBENCH_STORE, else
    /// $XDG_DATA_HOME/feelbench/store.sqlite].
    #[arg(long = "store", value_name = "PATH|URL", value_parser = super::store::LocationParser)]
    store: Option<StoreLocation>,
    /// Do not add the run to any store.
    #[arg(long = "no-store", conflicts_with = "store")]
    no_store: bool,
    /// No progress bar.
    #[arg(short = 'q', long = "quiet")]
    quiet: bool,
    /// Print a telemetry line (pressure, switches, CPU split, other processes) under each result row.
    #[arg(short = 'v', long = "verbose")]
    verbose: bool,
    /// Record the scheduler on the probe's CPUs (sched_switch, sched_wakeup)
    /// and name, for each late event, the tasks that ran while it waited.
    /// Needs root; turned off, with a notice, above 1 % of a CPU.
    #[arg(long = "explain")]
    explain: bool,
    /// Write a Perfetto trace of the run to FILE (ui.perfetto.dev,
    /// trace_processor): each probe event a slice beside the time it was
    /// allowed, late ones with their cause, the loads' tasks, telemetry as
    /// counters; with --explain, the scheduler's events and a flow from
    /// each late event to what ran instead.
    #[arg(long = "trace", value_name = "FILE", conflicts_with = "no_late_split")]
    trace: Option<PathBuf>,
}

/// What is checked before measuring.
#[derive(Debug, Args)]
#[command(next_help_heading = "Safety")]
struct SafetyArgs {
    /// Refuse to run unless the system's KEY is VALUE (repeatable); KEY is
    /// one of the names `feelbench report FILE --env` prints, e.g.
    /// governor, sched_ext, preempt, hz, kernel_release, thp, io_scheduler,
    /// autogroup, cpus.
    #[arg(long = "expect", value_name = "KEY=VALUE", value_parser = parse_expect)]
    expect: Vec<(String, String)>,
    /// Seconds spent, before the first scenario, checking that other
    /// processes leave the CPU alone and the hypervisor steals little (0: no check).
    #[arg(long = "noise-check", value_name = "SECS", default_value_t = 1.0)]
    noise_check_s: f64,
    /// Refuse to run (exit 2) when the noise check finds the machine busy.
    #[arg(long = "strict")]
    strict: bool,
}

/// How the machine's power management is held during the run.
#[derive(Debug, Args)]
#[command(next_help_heading = "Power management")]
struct PowerArgs {
    /// Hold PM QoS at this CPU wake-up latency for the whole run, as
    /// cyclictest does (it holds 0 unless given --laptop): CPUs then stay
    /// out of idle states slower to leave than US µs. Needs root. Without
    /// it the machine idles as a desktop does.
    #[arg(long = "cpu-dma-latency", value_name = "US")]
    cpu_dma_latency_us: Option<u32>,
}

impl RunArgs {
    /// Checks every option and name and builds the run's settings for
    /// `machine`.
    pub fn into_config(mut self, machine: &Machine) -> Result<RunConfig, UsageError> {
        let timing = self.timing.timing()?;
        let rtapp = self.selection.take_rtapp()?;
        let mut work = self.work.settings(
            machine,
            &self.loads,
            self.response.settings()?,
            self.job.settings()?,
            self.fragment.settings()?,
            self.io.settings()?,
        )?;
        work.rtapp = rtapp;
        work.game = self.game.settings()?;
        let probe_sched = self.probe.request()?;
        let load_nice = check_nice(
            "-N/--load-nice",
            self.loads.load_nice.unwrap_or_else(current_nice),
        )?;
        let preflight = self.safety.preflight()?;
        let cpu_dma_latency_us = self.power.cpu_dma_latency()?;
        let (scenarios, suite) = match &self.applied_suite {
            None => (
                self.selection
                    .scenarios(self.timing.full, &work, timing.repeats)?,
                None,
            ),
            Some(applied) => {
                // --precision measures each scenario until it is precise
                // enough, whatever a group's repeat says.
                let at_least = match timing.precision {
                    Some(_) => None,
                    None => Some(timing.repeats),
                };
                let (scenarios, left_out) =
                    self.selection
                        .suite_scenarios(&applied.suite.groups, &work, at_least)?;
                let record = applied.suite.record(
                    applied.options.clone(),
                    applied.root_left_out.clone(),
                    left_out,
                );
                (scenarios, Some(record))
            }
        };
        let placement = self.placement(machine)?;
        let explain = self.output.explain;
        Ok(RunConfig {
            scenarios,
            suite,
            loads_given: self.selection.loads_given(),
            timing,
            work,
            probe_sched,
            load_nice,
            workdir: self.loads.workdir,
            mem_limit_bytes: self.loads.mem_limit_bytes,
            swap_file_bytes: self.loads.swap_bytes,
            placement,
            preflight,
            output: self.output.settings()?,
            cpu_dma_latency_us,
            explain,
        })
    }

    /// Where the probe and the loads run: CPUs that are online on
    /// `machine`, a weight in range.
    fn placement(&self, machine: &Machine) -> Result<Placement, UsageError> {
        let online = machine.online_cpus.as_ref();
        let weight = self.loads.load_cpu_weight;
        if let Some(weight) = weight {
            check(CPU_WEIGHTS.contains(&weight), (), || {
                format!("--load-cpu-weight takes 1 to 10000, not {weight}")
            })?;
        }
        Ok(Placement {
            probe_cpus: check_online("--probe-cpus", self.probe.probe_cpus.clone(), online)?,
            probe_session: self.probe.probe_session,
            load_cpus: check_online("--load-cpus", self.loads.load_cpus.clone(), online)?,
            load_cpu_weight: weight,
        })
    }
}

impl TimingArgs {
    fn timing(&self) -> Result<Timing, UsageError> {
        let default_s = match self.full {
            true => FULL_DURATION_S,
            false => DEFAULT_DURATION_S,
        };
        let duration_s = self.duration_s.unwrap_or(default_s);
        let repeat = self.repeat;
        Ok(Timing {
            duration_ns: seconds_to_ns("-t/--duration", duration_s, 0.1)?,
            warmup_ns: seconds_to_ns("--warmup", self.warmup_s, 0.0)?,
            repeats: check((1..=MAX_REPEATS).contains(&repeat), repeat, || {
                format!("--repeat takes 1 to {MAX_REPEATS}, not {repeat}")
            })?,
            precision: self.precision(duration_s)?,
        })
    }

    /// The goal of `--precision` with measurements of `duration_s`, if given.
    fn precision(&self, duration_s: f64) -> Result<Option<PrecisionGoal>, UsageError> {
        let Some(pct) = self.precision_pct else {
            return Ok(None);
        };
        let max_time_s = self
            .max_time_s
            .unwrap_or(DEFAULT_MAX_MEASUREMENTS * duration_s);
        let most = f64::from(MAX_REPEATS) * duration_s;
        check(max_time_s <= most, (), || {
            format!("--max-time allows at most {MAX_REPEATS} measurements of -t: {most} s, not {max_time_s}")
        })?;
        Ok(Some(PrecisionGoal {
            pct,
            max_time_ns: seconds_to_ns("--max-time", max_time_s, duration_s)?,
        }))
    }
}

impl OutputArgs {
    fn settings(self) -> Result<OutputSettings, UsageError> {
        let store = match (self.no_store || self.console_only, self.store) {
            (true, _) => None,
            (false, Some(location)) => Some(location),
            (false, None) => StoreLocation::default_location().map_err(UsageError::new)?,
        };
        Ok(OutputSettings {
            file: match (self.console_only, self.output) {
                (true, _) => OutputChoice::ConsoleOnly,
                (false, Some(path)) => OutputChoice::File(path),
                (false, None) => OutputChoice::Default,
            },
            comment: self.comment,
            store,
            quiet: self.quiet,
            verbose: self.verbose,
            trace: self.trace,
        })
    }
}

impl SafetyArgs {
    fn preflight(&self) -> Result<Preflight, UsageError> {
        Ok(Preflight {
            expect: self.expect.clone(),
            noise_check_ns: seconds_to_ns("--noise-check", self.noise_check_s, 0.0)?,
            strict: self.strict,
        })
    }
}

impl PowerArgs {
    fn cpu_dma_latency(&self) -> Result<Option<u32>, UsageError> {
        self.cpu_dma_latency_us
            .map(|us| {
                check(us <= pmqos::MAX_US, us, || {
                    format!(
                        "--cpu-dma-latency takes 0 to {} µs, not {us}",
                        pmqos::MAX_US
                    )
                })
            })
            .transpose()
    }
}

/// The one workload of `found` (the list's and the `-W`/`-w` option's);
/// two different ones are refused.
fn one_workload(
    option: &str,
    found: [Option<Workload>; 2],
) -> Result<Option<Workload>, UsageError> {
    match found {
        [Some(a), Some(b)] if a.source != b.source => Err(UsageError::new(format!(
            "{option} names two rt-app workloads ({} and {}); a run takes one",
            a.source, b.source
        ))),
        [a, b] => Ok(a.or(b)),
    }
}
