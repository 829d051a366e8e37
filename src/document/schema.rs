//! The run document: one JSON file per run, with a versioned schema.
//! Field names carry their units (`_us`, `_ms`, `_pct`, `_per_s`).

use super::methods::Methods;
use crate::figures::{ProbeResult, ProbeSheet};
use crate::measure::calibrate::CalibrationSource;
use crate::measure::requests::RequestLatencies;
use crate::measure::sched::SchedRequest;
use crate::sim::fragment::FragmentSettings;
use crate::sim::game::GameSettings;
use crate::sim::io::IoSettings;
use crate::sim::job::JobSettings;
use crate::sim::micro::MicroMode;
use crate::sim::rtapp::settings::RtappSettings;
use crate::sim::{CustomShape, ResponseParams};
use crate::system::cpulist::CpuList;
use crate::system::environment::Environment;
use crate::system::telemetry::{ProcessUsage, ScenarioTelemetry};
use crate::system::SystemInfo;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Schema name and major version written into every run document.
pub const SCHEMA: &str = "feelbench.run/2";
/// The schema family, without the version.
pub const SCHEMA_FAMILY: &str = "feelbench.run";
/// The major version this build reads and writes.
pub const SCHEMA_MAJOR: u32 = 2;

/// A whole run: the system, the settings and every finished scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunDocument {
    pub schema: String,
    pub tool: ToolInfo,
    pub run: RunInfo,
    pub system: SystemInfo,
    /// What the system was when the run started (absent in older files).
    #[serde(default)]
    pub environment: Environment,
    pub settings: RunSettingsRecord,
    /// The suite the run was made from, with its full expansion (absent
    /// when probes and loads were chosen by name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<SuiteRecord>,
    /// The method version of every probe and load the run used; absent in
    /// documents of feelbench 0.1.0, whose every method reads as version 0
    /// (`document::methods`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub methods: Option<Methods>,
    /// The figures and table of every probe the run measured, by name.
    pub probes: BTreeMap<String, ProbeSheet>,
    #[serde(default)]
    pub warnings: Vec<Warning>,
    pub scenarios: Vec<ScenarioResult>,
}

/// A suite as a run applied it: results keyed by suite stay comparable
/// when a suite changes, as its version and expansion are kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteRecord {
    pub name: String,
    pub version: u32,
    pub summary: String,
    /// `built-in`, or the file it was read from.
    pub source: String,
    /// The run options the suite gave, as arguments (root ones included
    /// when applied); options given on the command line came after them and
    /// won.
    pub options: Vec<String>,
    /// Options the suite gives as root only, left out of a run that was not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub root_options_left_out: Vec<String>,
    /// Its groups of probes and loads, as the suite has them.
    pub groups: Vec<SuiteGroup>,
    /// Members that could not run here, each with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
}

impl SuiteRecord {
    /// `NAME version N`, or `none` for a run without a suite.
    pub fn describe(suite: Option<&SuiteRecord>) -> String {
        suite.map_or_else(
            || "none".into(),
            |s| format!("{} version {}", s.name, s.version),
        )
    }
}

/// Probes a suite runs, each under every load of the group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuiteGroup {
    pub probes: Vec<String>,
    pub loads: Vec<String>,
    /// Times each of its scenarios was to be measured, at least.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
}

/// The program that wrote the document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
    /// The commit it was built from (`git rev-parse HEAD` at build time, or
    /// `FEELBENCH_COMMIT` given to the build; `unknown` when built outside
    /// a checkout without it; absent in documents older than the field).
    /// Changes not yet committed are not told apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

impl ToolInfo {
    /// This build of feelbench, as the documents it writes name it.
    pub fn this_build() -> Self {
        Self {
            name: "feelbench".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            commit: Some(env!("FEELBENCH_COMMIT").to_string()),
        }
    }
}

/// When and how the run was made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    pub id: String,
    /// RFC 3339 UTC time the run started.
    pub started: String,
    /// RFC 3339 UTC time the run ended; `None` while it is still going.
    pub finished: Option<String>,
    /// True when the run was stopped by a signal before every scenario ran.
    pub interrupted: bool,
    pub comment: Option<String>,
    pub command_line: Vec<String>,
    /// The Perfetto trace written with the run (`--trace`), as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
}

impl RunInfo {
    /// The trace written with the run and how to open it, in words;
    /// `None` without one.
    pub fn trace_words(&self) -> Option<String> {
        let file = self.trace.as_deref()?;
        Some(format!(
            "Perfetto trace of this run: {file}; {HOW_TO_OPEN_TRACE}"
        ))
    }
}

/// How to open a Perfetto trace, in words.
pub const HOW_TO_OPEN_TRACE: &str =
    "open it at https://ui.perfetto.dev (Open trace file) or with trace_processor";

/// The settings every scenario of the run shared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSettingsRecord {
    /// Measured time of each scenario.
    pub duration_s: f64,
    /// Time the loads ran before the probe started.
    pub warmup_s: f64,
    pub loops_per_ms: f64,
    pub calibration: CalibrationSource,
    /// What the probe asked for (what it got is in each scenario).
    pub probe_sched: SchedRequest,
    pub load_nice: i32,
    pub burn_processes: usize,
    pub custom: Option<CustomShape>,
    /// Size of the disk loads' files.
    #[serde(default)]
    pub file_bytes: u64,
    /// Memory the memory loads work through.
    #[serde(default)]
    pub mem_bytes: u64,
    /// Size of the loads' memory cgroup (`--mem-limit`).
    #[serde(default)]
    pub mem_limit_bytes: Option<u64>,
    /// Size of the temporary swap file (`--swap`).
    #[serde(default)]
    pub swap_bytes: Option<u64>,
    /// Times each scenario was to be measured (`--repeat`; for a merge of
    /// runs, the sum of theirs). 1 in files older than the option.
    #[serde(default = "one")]
    pub repeats: u32,
    /// The PM QoS CPU latency limit held for the run (`--cpu-dma-latency`);
    /// `None` when the run left power management alone (and in older files).
    #[serde(default)]
    pub cpu_dma_latency_us: Option<u32>,
    /// `--precision`: each scenario was measured again, back to back, until
    /// the 95 % intervals of its headline figures were this narrow (see
    /// `document::precision`); `None` for a fixed number of measurements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision_pct: Option<f64>,
    /// `--max-time`: with `precision_pct`, the most time measured per scenario.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_time_s: Option<f64>,
    /// The CPUs the probe was put on (`--probe-cpus`).
    #[serde(default)]
    pub probe_cpus: Option<CpuList>,
    /// The probe ran in a session of its own (`--probe-session`); false in
    /// older files, and not written when false, so their settings hash holds.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub probe_session: bool,
    /// The CPUs the loads were put on (`--load-cpus`).
    #[serde(default)]
    pub load_cpus: Option<CpuList>,
    /// The cgroup CPU weight of the loads (`--load-cpu-weight`, 1–10000).
    #[serde(default)]
    pub load_cpu_weight: Option<u32>,
    /// How the `response` and `command` probes worked (gap, points, array
    /// sizes, command); only in runs that measured one of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<ResponseParams>,
    /// The job of the `job` probe and the `jobload` load (`--job`,
    /// `--job-size`, `--job-timeout`); only in runs that ran one of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<JobSettings>,
    /// The `fragment` probe's buffer and work; only in runs that measured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fragment: Option<FragmentSettings>,
    /// The `game` probe's frame graph; only in runs that measured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game: Option<GameSettings>,
    /// The `fileio` probe's file and rhythm, the request thresholds and the
    /// `io*` loads' processes; only in runs that ran one of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io: Option<IoSettings>,
    /// How the `micro` probes timed their operations (`--micro-mode`);
    /// only in runs that measured one of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub micro: Option<MicroMode>,
    /// The rt-app workloads of the `rtapp` probe and load; only in runs
    /// that ran one of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtapp: Option<RtappSettings>,
    /// Whether the probes split each event's delay into its causes (false
    /// with `--no-late-split`; true in files older than the option).
    #[serde(default = "yes")]
    pub late_split: bool,
}

/// The repeat count of runs that do not record one.
fn one() -> u32 {
    1
}

impl RunSettingsRecord {
    /// The settings of `repeats` runs of `duration_s` seconds in which
    /// feelbench chose nothing else: no warm-up, calibration, loads, files
    /// or scheduling of its own, and no late split (a run read from other
    /// programs' logs, `feelbench import`).
    pub fn unchosen(duration_s: f64, repeats: u32) -> Self {
        Self {
            duration_s,
            warmup_s: 0.0,
            loops_per_ms: 0.0,
            calibration: CalibrationSource::Forced,
            probe_sched: SchedRequest {
                nice: 0,
                fifo_priority: None,
                timer_slack_ns: 1,
                slice_ns: None,
            },
            load_nice: 0,
            burn_processes: 0,
            custom: None,
            file_bytes: 0,
            mem_bytes: 0,
            mem_limit_bytes: None,
            swap_bytes: None,
            repeats,
            cpu_dma_latency_us: None,
            precision_pct: None,
            max_time_s: None,
            probe_cpus: None,
            probe_session: false,
            load_cpus: None,
            load_cpu_weight: None,
            response: None,
            job: None,
            fragment: None,
            game: None,
            io: None,
            micro: None,
            rtapp: None,
            late_split: false,
        }
    }

    /// Whether late events were split, in words (`on`, `off`), as merge
    /// and compare show it.
    pub fn late_split_words(&self) -> String {
        if self.late_split { "on" } else { "off" }.into()
    }

    /// Whose session the probe ran in, in words (`its own`, `the loads'`),
    /// as merge and compare show it.
    pub fn probe_session_words(&self) -> String {
        if self.probe_session {
            "its own"
        } else {
            "the loads'"
        }
        .into()
    }
}

/// A switch that files older than it did not record, and that was on.
fn yes() -> bool {
    true
}

/// What a warning is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningCode {
    /// The probe could not lock its memory.
    MemoryNotLocked,
    /// Frames on an idle system used a CPU time far from the one they wanted.
    CalibrationDrift,
    /// The default run left the disk loads out for lack of free space.
    DiskLoadsSkipped,
    /// The disk loads' files are on tmpfs, so they measure memory.
    WorkdirOnTmpfs,
    /// A write load's file fits under the dirty-page limit, so its writes
    /// can stay in memory.
    FitsInDirtyLimit,
    /// Other processes used CPU, or the hypervisor stole time, just before measuring.
    NoisyMachine,
    /// A probe left out part of its measurement (an operation that cannot
    /// run here); those figures are missing.
    PartLeftOut,
    /// Files the run made could not be removed.
    CleanupFailed,
    /// `--explain` could not record, or stopped part-way.
    ExplainUnavailable,
    /// The late split could not tell some parts apart here.
    LateSplitPartial,
    /// Threads could not read their perf task clock: the frames' work and
    /// the late split read their CPU clock instead.
    NoTaskClock,
    /// A suite's members or root-only options that cannot run here were
    /// left out.
    SuiteMembersLeftOut,
}

/// A warning that tells the user what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    pub code: WarningCode,
    pub message: String,
}

impl Warning {
    /// A warning of `code` saying `message`.
    pub fn new(code: WarningCode, message: String) -> Self {
        Self { code, message }
    }
}

/// Whether a scenario produced figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScenarioStatus {
    Ok,
    Failed,
}

/// One probe under one load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioResult {
    pub probe: String,
    pub load: String,
    /// The scenario's figures: its only measurement, or the merge of its
    /// repeats (histograms and counts added up, percentiles of the merge).
    #[serde(flatten)]
    pub outcome: Measurement,
    /// Each repeat's own figures, in the order they ran, when the scenario
    /// was measured more than once (`--repeat`, `feelbench merge`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeats: Vec<Measurement>,
    /// Confidence intervals of the headline figures, with their method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intervals: Option<Intervals>,
}

/// What one measurement of a scenario produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub status: ScenarioStatus,
    /// Why the measurement failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The probe's figures; `None` when the measurement failed.
    pub result: Option<ProbeResult>,
    /// What each part of the load got done while the probe measured.
    #[serde(default)]
    pub load_work: Vec<LoadWork>,
    /// What the machine went through while the probe measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<ScenarioTelemetry>,
}

/// How the confidence intervals of a scenario were obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IntervalMethod {
    /// Student t over the figures of sub-windows of the measurement
    /// (neighbours merged until they are not correlated): the spread
    /// within a run, not between runs.
    BatchMeans,
    /// Student t over the figures of the scenario's repeats: includes the
    /// drift between repeats.
    Repeats,
}

/// Confidence intervals of a scenario's headline figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Intervals {
    pub method: IntervalMethod,
    /// Two-sided confidence level of every `low`–`high`, e.g. 0.95.
    pub level: f64,
    pub figures: Vec<FigureInterval>,
}

/// A figure with its confidence interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FigureInterval {
    /// The figure's key (`mean`, `p99`, `deadlines`, ...).
    pub figure: String,
    pub value: f64,
    pub low: f64,
    pub high: f64,
    /// Standard error of `value`.
    pub se: f64,
    /// Degrees of freedom of the Student t behind the interval.
    pub df: f64,
    /// Independent samples (sub-windows or repeats) the spread came from.
    pub samples: usize,
}

/// A group of settings a run recorded, in words (its `describe`), or
/// `not used` when none of the run's probes and loads used it.
pub fn described<T>(group: Option<&T>, describe: fn(&T) -> String) -> String {
    group.map_or_else(|| "not used".to_string(), describe)
}

/// What one kind of load got done during the measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadWork {
    pub load: String,
    pub unit: String,
    /// Units done during the measurement window.
    pub amount: f64,
    pub rate_per_s: f64,
    /// CPU used by the load's processes (and the children they reaped, its
    /// helpers, a command's processes) over the window, summed (200 % = two
    /// CPUs).
    pub cpu_pct: f64,
    /// Whether part of the load's CPU could not be counted (a command's
    /// processes without a cgroup, a helper without a CPU clock):
    /// `cpu_pct` is then a lower bound, shown `≥`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cpu_pct_lower_bound: bool,
    /// Bytes the processes caused to be read from storage (/proc/PID/io),
    /// per second, in MB; missing where the kernel does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_read_mb_s: Option<f64>,
    /// Bytes the processes caused to be written to storage, per second, in
    /// MB; missing where the kernel does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_write_mb_s: Option<f64>,
    /// Processes that ran this part of the load.
    pub processes: usize,
    /// What each of those processes used over its life, in process order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub usage: Vec<ProcessUsage>,
    /// The CPUs those processes could run on, read back as they started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<CpuList>,
    /// The requests its processes timed, merged (loads that time their
    /// requests: the `io*` loads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<RequestLatencies>,
    /// Units its processes did in each of the measurement's sub-windows,
    /// together, in time order (`null`: one no process observed); empty
    /// in merges and in runs older than this field.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub batch_units: Vec<Option<f64>>,
    /// Its processes' threads as the measurement ended, with the names
    /// `--explain` gives them, so an external tracer's output can be
    /// matched; empty in merges.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<LoadTask>,
}

/// A thread of a load.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadTask {
    /// feelbench's name for it: `burn#2` (the load's second process),
    /// `hack#1 fb-hack-recv 7` (the seventh helper of that name its first
    /// process started).
    pub name: String,
    pub pid: u32,
    pub tid: u32,
    /// Its command name (`comm`).
    pub comm: String,
}

impl RunDocument {
    /// The finished scenarios of `probe`, in run order.
    pub fn scenarios_of<'a>(&'a self, probe: &'a str) -> impl Iterator<Item = &'a ScenarioResult> {
        self.scenarios.iter().filter(move |s| s.probe == probe)
    }

    /// What `probe` measured under the `none` load, when it did: the
    /// baseline of the columns shown as a ratio to no load.
    pub fn baseline_of<'a>(&'a self, probe: &'a str) -> Option<&'a Measurement> {
        self.scenarios_of(probe)
            .find(|s| s.load == "none" && s.outcome.status == ScenarioStatus::Ok)
            .map(|s| &s.outcome)
    }

    /// The declarations of `probe`, as the run stored them.
    pub fn sheet(&self, probe: &str) -> Option<&ProbeSheet> {
        self.probes.get(probe)
    }

    /// Probe names in the order they first appear.
    pub fn probes(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for s in &self.scenarios {
            if !names.contains(&s.probe.as_str()) {
                names.push(&s.probe);
            }
        }
        names
    }
}
