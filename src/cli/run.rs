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

/// Which probes run under which loads.
#[derive(Debug, Args)]
#[command(next_help_heading = "Probes and loads")]
pub struct SelectionArgs {
    /// Run a suite: a classic tool's probes, loads and settings, printed in
    /// its table's shape (`feelbench suite list`). Options given after it
    /// override its settings; --probe/--load replace its groups' lists and
    /// -W/-X/-w/-x add and drop members. Without --suite, --probe, --load,
    /// -W, -w or --full, the run is the `default` suite.
    #[arg(long = "suite", value_name = "NAME", conflicts_with_all = ["suite_file", "full"])]
    pub suite: Option<String>,
    /// Run the suite in FILE (TOML, in the format of `feelbench suite show NAME --toml`).
    #[arg(long = "suite-file", value_name = "FILE", conflicts_with = "full")]
    pub suite_file: Option<PathBuf>,
    // Help: docs::PROBE_HELP, then (with --help) every probe.
    #[arg(
        long = "probe",
        value_name = "LIST",
        value_delimiter = ',',
        help = docs::PROBE_HELP,
        long_help = docs::probe_option_help()
    )]
    pub probes: Option<Vec<String>>,
    // Help: docs::LOAD_HELP, then (with --help) every load.
    #[arg(
        long = "load",
        value_name = "LIST",
        value_delimiter = ',',
        help = docs::LOAD_HELP,
        long_help = docs::load_option_help()
    )]
    pub loads: Option<Vec<String>>,
    /// Add a probe to the list (interbench -W).
    #[arg(short = 'W', long = "with-probe", value_name = "PROBE")]
    pub with_probes: Vec<String>,
    /// Remove a probe from the list (interbench -X).
    #[arg(short = 'X', long = "without-probe", value_name = "PROBE")]
    pub without_probes: Vec<String>,
    /// Add a load to the list (interbench -w).
    #[arg(short = 'w', long = "with-load", value_name = "LOAD")]
    pub with_loads: Vec<String>,
    /// Remove a load from the list (interbench -x).
    #[arg(short = 'x', long = "without-load", value_name = "LOAD")]
    pub without_loads: Vec<String>,
    /// Refuse an rt-app file (rtapp:FILE) that has a key rt-app ignores (a
    /// misspelt one), instead of warning and leaving the key out.
    #[arg(long = "rtapp-strict")]
    pub rtapp_strict: bool,
}

/// How the probe is scheduled.
#[derive(Debug, Args)]
#[command(next_help_heading = "Probe scheduling")]
struct ProbeSchedArgs {
    /// Nice value of the probe [default: the nice value feelbench was
    /// started with, normally 0].
    #[arg(
        short = 'B',
        long = "nice",
        value_name = "N",
        allow_hyphen_values = true
    )]
    nice: Option<i32>,
    /// Run the probe SCHED_FIFO (real time).
    #[arg(short = 'r', long = "rt")]
    rt: bool,
    /// SCHED_FIFO priority used with --rt.
    #[arg(long = "rt-priority", value_name = "N", default_value_t = 80)]
    rt_priority: i32,
    /// Timer slack of the probe in ns (set after the last policy change).
    #[arg(long = "timer-slack", value_name = "NS", default_value_t = 1)]
    timer_slack_ns: u64,
    /// Run the probe on these CPUs only, e.g. 0 or 0,2-3 (sched_setaffinity).
    #[arg(long = "probe-cpus", value_name = "LIST", value_parser = parse_cpu_list)]
    probe_cpus: Option<CpuList>,
}

/// What the probes' and loads' work is made of.
#[derive(Debug, Args)]
#[command(next_help_heading = "Work")]
struct WorkArgs {
    /// Processes of the burn load [default: twice the number of CPUs].
    #[arg(short = 'L', long = "burn-processes", value_name = "N")]
    burn_processes: Option<usize>,
    /// Use this many work loops per ms instead of the calibration.
    #[arg(short = 'l', long = "loops-per-ms", value_name = "N")]
    loops_per_ms: Option<f64>,
    /// Calibrate again even if a calibration is cached.
    #[arg(short = 'b', long = "recalibrate")]
    recalibrate: bool,
    /// CPU share of the custom simulation, in % (interbench -C).
    #[arg(
        short = 'C',
        long = "custom-cpu",
        value_name = "PCT",
        requires = "custom_interval_us"
    )]
    custom_cpu_pct: Option<f64>,
    /// Period of the custom simulation, in µs (interbench -I).
    #[arg(
        short = 'I',
        long = "custom-interval",
        value_name = "US",
        requires = "custom_cpu_pct"
    )]
    custom_interval_us: Option<u64>,
    /// How the micro probes time their operations: paced (each once every
    /// 20 ms, taking turns) or lmbench (LMbench's warm back-to-back loops on
    /// one CPU, and its page fault per page of a mapping).
    #[arg(long = "micro-mode", value_name = "MODE", default_value = "paced", value_parser = micro_mode)]
    micro_mode: MicroMode,
    /// Take no per-event readings of the probes' threads: no split of late
    /// events into their causes (`result.late`), for measuring what the
    /// readings cost.
    #[arg(long = "no-late-split")]
    no_late_split: bool,
}

/// `--micro-mode`'s value.
fn micro_mode(name: &str) -> Result<MicroMode, String> {
    MicroMode::named(name).ok_or_else(|| format!("takes paced or lmbench, not {name}"))
}

/// How the `response` and `command` probes work.
#[derive(Debug, Args)]
#[command(next_help_heading = "Response and command probes")]
struct ResponseArgs {
    /// Seconds the response and command probes leave the machine alone
    /// before each point (resp1: 20).
    #[arg(long = "response-gap", value_name = "SECS", default_value_t = 20.0)]
    gap_s: f64,
    /// Points each response or command scenario measures (resp1: 5).
    #[arg(long = "response-points", value_name = "N", default_value_t = 5)]
    points: u32,
    /// Size of the array the response probe allocates at its start and
    /// scans at each point, e.g. 32M [default: 1/32 of the memory the
    /// memory loads work through, 1 MiB to 64 MiB].
    #[arg(long = "response-resident", value_name = "SIZE", value_parser = parse_bytes)]
    resident_bytes: Option<u64>,
    /// Size of the array the response probe allocates, fills and scans
    /// afresh at each point [default: as --response-resident].
    #[arg(long = "response-fresh", value_name = "SIZE", value_parser = parse_bytes)]
    fresh_bytes: Option<u64>,
    /// The command probe times this command (run by /bin/sh -c, its output
    /// discarded) instead of `ls -l /usr/bin`.
    #[arg(long = "command", value_name = "CMD")]
    timed_command: Option<String>,
    /// The command probe drops the page cache (and the dentries and inodes)
    /// before each point's idle gap, so the program starts cold (root).
    #[arg(long = "command-cold")]
    cold: bool,
}

/// The job the `job` probe times and the `jobload` load repeats (contest's
/// kernel compile).
#[derive(Debug, Args)]
#[command(next_help_heading = "Job")]
struct JobArgs {
    /// Time this command (run by /bin/sh -c, in an empty private directory
    /// removed afterwards) instead of the built-in job, e.g. --job 'make -C
    /// ~/linux -B -j4'. Everything it does is timed; a non-zero exit fails
    /// the scenario. The jobload load still runs the built-in job.
    #[arg(long = "job", value_name = "CMD")]
    job_command: Option<String>,
    /// Size of the built-in job: 1 takes about 20 s on idle CPUs, 0.05 about 1 s.
    #[arg(long = "job-size", value_name = "X", default_value_t = 1.0)]
    size: f64,
    /// Seconds a job may take before it is killed with everything it
    /// started (the scenario then fails).
    #[arg(long = "job-timeout", value_name = "SECS", default_value_t = 3600.0)]
    timeout_s: f64,
    /// Where the built-in job's inputs are when it starts: warm (in the
    /// page cache, as written) or cold (written back and dropped from the
    /// page cache, read from the device, as contest's first compile). The
    /// cacherun load keeps them warm whatever this says.
    #[arg(long = "job-cache", value_name = "STATE", default_value = "warm", value_parser = job_cache)]
    cache: JobCache,
}

/// `--job-cache`'s value.
fn job_cache(name: &str) -> Result<JobCache, String> {
    JobCache::named(name).ok_or_else(|| format!("takes warm or cold, not {name}"))
}

/// The buffer and work of the `fragment` probe's player (latencytest's).
#[derive(Debug, Args)]
#[command(next_help_heading = "Fragment probe")]
struct FragmentArgs {
    /// Fragments in the emulated sound device's buffer.
    #[arg(long = "fragments", value_name = "N", default_value_t = 3)]
    fragments: u32,
    /// Bytes of each fragment (16-bit stereo samples).
    #[arg(long = "fragment-bytes", value_name = "B", default_value_t = 256)]
    fragment_bytes: u32,
    /// Samples per second the device plays.
    #[arg(long = "sample-rate", value_name = "HZ", default_value_t = 44_100)]
    sample_rate_hz: u32,
    /// CPU work of the player per fragment, in % of the time a fragment plays.
    #[arg(long = "fragment-cpu", value_name = "PCT", default_value_t = 10.0)]
    cpu_pct: f64,
}

/// The `fileio` probe's file and rhythm, and the `io*` loads (tiobench's).
#[derive(Debug, Args)]
#[command(next_help_heading = "File I/O")]
struct IoArgs {
    /// Size of the file the fileio probe reads and writes at random (made
    /// before it measures, in the work directory).
    #[arg(long = "fileio-size", value_name = "SIZE", value_parser = parse_bytes, default_value = "256M")]
    probe_file_bytes: u64,
    /// Time between the starts of the fileio probe's requests, e.g. 20ms.
    #[arg(long = "fileio-period", value_name = "DURATION", value_parser = parse_duration, default_value = "20ms")]
    period_ns: u64,
    /// Thresholds the fileio probe and the io* loads count slower requests
    /// over: 1 to 3 ascending durations.
    #[arg(long = "io-thresholds", value_name = "LIST", value_parser = parse_thresholds, default_value = "100ms,2s,10s")]
    thresholds_ns: std::vec::Vec<u64>,
    /// Processes of each io* load (tiobench's threads), each with its own file.
    #[arg(long = "io-threads", value_name = "N", default_value_t = 4)]
    threads: usize,
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

impl SelectionArgs {
    /// The rt-app workloads named as `rtapp:SPEC`, each name shortened to
    /// `rtapp` (see `cli::rtapp`).
    fn take_rtapp(&mut self) -> Result<RtappSettings, UsageError> {
        let strict = self.rtapp_strict;
        let no_list: &mut [String] = &mut [];
        let probe = [
            take_workload(
                "--probe",
                self.probes.as_deref_mut().unwrap_or(no_list),
                false,
                strict,
            )?,
            take_workload("-W/--with-probe", &mut self.with_probes, false, strict)?,
        ];
        let no_list: &mut [String] = &mut [];
        let load = [
            take_workload(
                "--load",
                self.loads.as_deref_mut().unwrap_or(no_list),
                true,
                strict,
            )?,
            take_workload("-w/--with-load", &mut self.with_loads, true, strict)?,
        ];
        Ok(RtappSettings {
            probe: one_workload("--probe", probe)?,
            load: one_workload("--load", load)?,
        })
    }

    /// Every chosen probe under every chosen load, probe by probe.
    fn scenarios(
        &self,
        full: bool,
        work: &WorkSettings,
        repeats: u32,
    ) -> Result<Vec<Scenario>, UsageError> {
        let params = work.params_before_the_run();
        let probes = Selection {
            list: self.probes.as_deref(),
            with: &self.with_probes,
            without: &self.without_probes,
        }
        .choose::<Probes>(&params, full)?;
        let loads = Selection {
            list: self.loads.as_deref(),
            with: &self.with_loads,
            without: &self.without_loads,
        }
        .choose::<Loads>(&params, full)?;
        Ok(probes
            .iter()
            .flat_map(|&probe| {
                loads.iter().map(move |load| Scenario {
                    probe,
                    load: load.clone(),
                    repeats,
                })
            })
            .collect())
    }

    /// Every probe of each of a suite's `groups` under every load of the
    /// group, once each, in the groups' order: the names given on the
    /// command line replace a group's lists, `with` and `without` add and
    /// drop members of every group; members that cannot run here are left
    /// out, each with why. Each is measured `at_least` times or as often
    /// as its group says, whichever is more (once when `at_least` is
    /// `None`: `--precision` decides).
    fn suite_scenarios(
        &self,
        groups: &[Group],
        work: &WorkSettings,
        at_least: Option<u32>,
    ) -> Result<(Vec<Scenario>, Vec<String>), UsageError> {
        let params = work.params_before_the_run();
        let mut scenarios: Vec<Scenario> = Vec::new();
        let mut left_out: Vec<String> = Vec::new();
        for group in groups {
            let (probes, probes_left_out) = Selection {
                list: Some(self.probes.as_deref().unwrap_or(&group.probes)),
                with: &self.with_probes,
                without: &self.without_probes,
            }
            .runnable::<Probes>(&params)?;
            let (loads, loads_left_out) = Selection {
                list: Some(self.loads.as_deref().unwrap_or(&group.loads)),
                with: &self.with_loads,
                without: &self.without_loads,
            }
            .runnable::<Loads>(&params)?;
            for why in probes_left_out.into_iter().chain(loads_left_out) {
                if !left_out.contains(&why) {
                    left_out.push(why);
                }
            }
            for probe in probes {
                for load in &loads {
                    let known = scenarios
                        .iter()
                        .any(|s| s.probe.name == probe.name && s.load.name == load.name);
                    if !known {
                        scenarios.push(Scenario {
                            probe,
                            load: load.clone(),
                            repeats: at_least.map_or(1, |n| n.max(group.repeat.unwrap_or(1))),
                        });
                    }
                }
            }
        }
        if scenarios.is_empty() {
            let why = match left_out.is_empty() {
                true => String::new(),
                false => format!(": {}", left_out.join("; ")),
            };
            return Err(UsageError::new(format!(
                "no scenario of the suite left to run{why}"
            )));
        }
        Ok((scenarios, left_out))
    }

    /// Whether the user named loads (not only removed some).
    fn loads_given(&self) -> bool {
        self.loads.is_some() || !self.with_loads.is_empty()
    }
}

impl ProbeSchedArgs {
    fn request(&self) -> Result<SchedRequest, UsageError> {
        let priority = self.rt_priority;
        check((1..=99).contains(&priority), (), || {
            format!("--rt-priority takes 1 to 99, not {priority}")
        })?;
        Ok(SchedRequest {
            nice: check_nice("-B/--nice", self.nice.unwrap_or_else(current_nice))?,
            fifo_priority: self.rt.then_some(priority),
            timer_slack_ns: self.timer_slack_ns.max(1),
        })
    }
}

impl WorkArgs {
    /// The work settings on `machine`, with the file size and the swap
    /// added for the run that `loads` give, the `response` settings and
    /// the `job`.
    fn settings(
        &self,
        machine: &Machine,
        loads: &LoadArgs,
        response: ResponseSettings,
        job: JobSettings,
        fragment: FragmentSettings,
        io: IoSettings,
    ) -> Result<WorkSettings, UsageError> {
        let burn_processes = self.burn_processes.unwrap_or(2 * machine.cpus);
        check((1..=1024).contains(&burn_processes), (), || {
            format!("-L/--burn-processes takes 1 to 1024, not {burn_processes}")
        })?;
        if let Some(lpm) = self.loops_per_ms {
            check(lpm.is_finite() && lpm >= 1.0, (), || {
                format!("-l/--loops-per-ms takes a positive number, not {lpm}")
            })?;
        }
        Ok(WorkSettings {
            cpus: machine.cpus,
            burn_processes,
            custom: self.custom_shape()?,
            loops_per_ms: self.loops_per_ms,
            recalibrate: self.recalibrate,
            file_bytes: loads.file_bytes,
            swap_bytes: machine.free_swap_bytes + loads.swap_bytes.unwrap_or(0),
            response,
            job,
            fragment,
            io,
            micro: self.micro_mode,
            rtapp: Default::default(),
            late_split: !self.no_late_split,
        })
    }

    /// The custom simulation's shape, when `-C` and `-I` give one.
    fn custom_shape(&self) -> Result<Option<CustomShape>, UsageError> {
        let (Some(cpu_pct), Some(interval_us)) = (self.custom_cpu_pct, self.custom_interval_us)
        else {
            return Ok(None);
        };
        check((0.0..=100.0).contains(&cpu_pct), (), || {
            format!("-C/--custom-cpu takes a percentage from 0 to 100, not {cpu_pct}")
        })?;
        check((100..=1_000_000).contains(&interval_us), (), || {
            format!("-I/--custom-interval takes 100 to 1000000 µs, not {interval_us}")
        })?;
        Ok(Some(CustomShape {
            cpu_pct,
            interval_us,
        }))
    }
}

impl ResponseArgs {
    fn settings(&self) -> Result<ResponseSettings, UsageError> {
        let points = self.points;
        check((1..=MAX_RESPONSE_POINTS).contains(&points), (), || {
            format!("--response-points takes 1 to {MAX_RESPONSE_POINTS}, not {points}")
        })?;
        if let Some(command) = &self.timed_command {
            check(!command.trim().is_empty(), (), || {
                "--command needs a command, e.g. --command 'ls -l /etc'".to_string()
            })?;
        }
        Ok(ResponseSettings {
            gap_ns: seconds_to_ns("--response-gap", self.gap_s, 0.0)?,
            points,
            resident_bytes: self.resident_bytes,
            fresh_bytes: self.fresh_bytes,
            command: self.timed_command.clone(),
            cold: self.cold,
        })
    }
}

impl JobArgs {
    fn settings(&self) -> Result<JobSettings, UsageError> {
        let size = self.size;
        check(size > 0.0 && size <= MAX_JOB_SIZE, (), || {
            format!("--job-size takes a number above 0 and at most {MAX_JOB_SIZE}, not {size}")
        })?;
        seconds_to_ns("--job-timeout", self.timeout_s, 0.1)?;
        let command = match self.job_command.as_deref().map(str::trim) {
            Some("") => {
                return Err(UsageError::new(
                    "--job needs a command, e.g. --job 'make -j4'",
                ))
            }
            other => other.map(str::to_string),
        };
        check(
            command.is_none() || self.cache == JobCache::Warm,
            (),
            || {
                "--job-cache cold drops the built-in job's inputs from the page cache; a --job command's files are its own (drop them yourself, or give --job-cache warm)".to_string()
            },
        )?;
        Ok(JobSettings {
            size,
            command,
            timeout_s: self.timeout_s,
            cache: self.cache,
        })
    }
}

impl FragmentArgs {
    fn settings(&self) -> Result<FragmentSettings, UsageError> {
        let (fragments, bytes, rate, cpu) = (
            self.fragments,
            self.fragment_bytes,
            self.sample_rate_hz,
            self.cpu_pct,
        );
        check((2..=64).contains(&fragments), (), || {
            format!("--fragments takes 2 to 64, not {fragments}")
        })?;
        check(
            (16..=1 << 20).contains(&bytes) && bytes % 4 == 0,
            (),
            || format!("--fragment-bytes takes a multiple of 4 from 16 to 1048576, not {bytes}"),
        )?;
        check((8_000..=384_000).contains(&rate), (), || {
            format!("--sample-rate takes 8000 to 384000 Hz, not {rate}")
        })?;
        check((0.0..=90.0).contains(&cpu), (), || {
            format!("--fragment-cpu takes a percentage from 0 to 90, not {cpu}")
        })?;
        Ok(FragmentSettings {
            fragments,
            fragment_bytes: bytes,
            sample_rate_hz: rate,
            cpu_pct: cpu,
        })
    }
}

impl IoArgs {
    fn settings(&self) -> Result<IoSettings, UsageError> {
        let (threads, period_ns) = (self.threads, self.period_ns);
        check((1..=64).contains(&threads), (), || {
            format!("--io-threads takes 1 to 64, not {threads}")
        })?;
        check(
            (1_000_000..=10_000_000_000).contains(&period_ns),
            (),
            || {
                format!(
                    "--fileio-period takes 1ms to 10s, not {}",
                    crate::sim::io::show_threshold(period_ns)
                )
            },
        )?;
        check(self.probe_file_bytes >= 1 << 20, (), || {
            format!(
                "--fileio-size takes 1M or more, not {} bytes",
                self.probe_file_bytes
            )
        })?;
        Ok(IoSettings {
            probe_file_bytes: self.probe_file_bytes,
            period_ns,
            thresholds_ns: self.thresholds_ns.clone(),
            threads,
        })
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
