//! The command line: clap definitions, and the one function that turns parsed
//! arguments into validated settings. Nothing outside this file sees clap.

use crate::compare::{self, CompareOptions};
use crate::engine::scenario::Scenario;
use crate::load::{self, LoadDef, LoadMix};
use crate::measure::sched::SchedRequest;
use crate::probe::{self, ProbeDef};
use crate::report;
use crate::sim::{CustomShape, WorkParams};
use crate::system::environment;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// How a Linux system feels under load: latency of simulated interactive tasks
/// (desktop, audio, video, game) while background loads run.
#[derive(Debug, Parser)]
#[command(name = "feelbench", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure every chosen probe under every chosen load.
    Run(Box<RunArgs>),
    /// Show every probe and load with one line each.
    List,
    /// Measure (again) how much calibrated work fits in a millisecond.
    Calibrate(CalibrateArgs),
    /// Render a saved run.
    Report(ReportArgs),
    /// Show runs side by side: each figure's change against the first run,
    /// marked where it is statistically significant.
    Compare(CompareArgs),
    /// Merge runs made separately on one machine with the same settings into
    /// one run whose scenarios hold every run's measurements as repeats.
    Merge(MergeArgs),
    /// Internal: a worker process started by feelbench itself.
    #[command(hide = true)]
    Worker {
        /// The worker's job, as JSON.
        spec: String,
    },
}

/// Options of `feelbench run` (interbench's letters where they do not clash).
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Seconds measured per scenario [default: 6, or 30 with --full].
    #[arg(short = 't', long = "duration", value_name = "SECS")]
    pub duration_s: Option<f64>,
    /// Measure every scenario N times, in N rounds of all scenarios (so slow
    /// drift spreads over them); each scenario's row shows the merge of its
    /// repeats, and the file keeps each repeat.
    #[arg(long = "repeat", value_name = "N", default_value_t = 1)]
    pub repeat: u32,
    /// Every probe under every load that can run here, 30 s each (interbench's default).
    #[arg(long = "full")]
    pub full: bool,
    /// Probes to measure, comma-separated (default: all periodic probes).
    #[arg(long = "probe", value_name = "LIST", value_delimiter = ',')]
    pub probes: Option<Vec<String>>,
    /// Loads to measure under, comma-separated (default: the standard set).
    #[arg(long = "load", value_name = "LIST", value_delimiter = ',')]
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
    /// Processes of the burn load [default: twice the number of CPUs].
    #[arg(short = 'L', long = "burn-processes", value_name = "N")]
    pub burn_processes: Option<usize>,
    /// Nice value of the probe.
    #[arg(
        short = 'B',
        long = "nice",
        value_name = "N",
        default_value_t = 0,
        allow_hyphen_values = true
    )]
    pub nice: i32,
    /// Nice value of the loads.
    #[arg(
        short = 'N',
        long = "load-nice",
        value_name = "N",
        default_value_t = 0,
        allow_hyphen_values = true
    )]
    pub load_nice: i32,
    /// Run the probe SCHED_FIFO (real time).
    #[arg(short = 'r', long = "rt")]
    pub rt: bool,
    /// SCHED_FIFO priority used with --rt.
    #[arg(long = "rt-priority", value_name = "N", default_value_t = 80)]
    pub rt_priority: i32,
    /// Timer slack of the probe in ns (set after the last policy change).
    #[arg(long = "timer-slack", value_name = "NS", default_value_t = 1)]
    pub timer_slack_ns: u64,
    /// Use this many work loops per ms instead of the calibration.
    #[arg(short = 'l', long = "loops-per-ms", value_name = "N")]
    pub loops_per_ms: Option<f64>,
    /// Calibrate again even if a calibration is cached.
    #[arg(short = 'b', long = "recalibrate")]
    pub recalibrate: bool,
    /// CPU share of the custom simulation, in % (interbench -C).
    #[arg(
        short = 'C',
        long = "custom-cpu",
        value_name = "PCT",
        requires = "custom_interval_us"
    )]
    pub custom_cpu_pct: Option<f64>,
    /// Period of the custom simulation, in µs (interbench -I).
    #[arg(
        short = 'I',
        long = "custom-interval",
        value_name = "US",
        requires = "custom_cpu_pct"
    )]
    pub custom_interval_us: Option<u64>,
    /// Directory for the disk loads' files (a private directory is made in it).
    #[arg(long = "workdir", value_name = "DIR", default_value = ".")]
    pub workdir: PathBuf,
    /// Size of the disk loads' files, e.g. 512M or 4G [default: the RAM size,
    /// at most half the free space of the work directory].
    #[arg(long = "file-size", value_name = "SIZE", value_parser = parse_bytes)]
    pub file_bytes: Option<u64>,
    /// Run the loads in a memory cgroup of this size, e.g. 512M.
    #[arg(long = "mem-limit", value_name = "SIZE", value_parser = parse_bytes)]
    pub mem_limit_bytes: Option<u64>,
    /// Add a temporary swap file of this size for the run, e.g. 2G.
    #[arg(long = "swap", value_name = "SIZE", value_parser = parse_bytes)]
    pub swap_bytes: Option<u64>,
    /// Seconds the loads run before the probe starts.
    #[arg(long = "warmup", value_name = "SECS", default_value_t = 0.5)]
    pub warmup_s: f64,
    /// A comment stored with the run.
    #[arg(short = 'm', long = "comment", value_name = "TEXT")]
    pub comment: Option<String>,
    /// Where to write the run [default: feelbench-KERNEL-DATE.json].
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        conflicts_with = "console_only"
    )]
    pub output: Option<PathBuf>,
    /// Print the tables only; write no file.
    #[arg(short = 'c', long = "console-only")]
    pub console_only: bool,
    /// No progress bar.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// Refuse to run unless the system's KEY is VALUE (repeatable); KEY is
    /// one of the names `feelbench report FILE --env` prints, e.g.
    /// governor, sched_ext, preempt, hz, kernel_release, thp, io_scheduler,
    /// autogroup, cpus.
    #[arg(long = "expect", value_name = "KEY=VALUE", value_parser = parse_expect)]
    pub expect: Vec<(String, String)>,
    /// Seconds spent, before the first scenario, checking that other
    /// processes leave the CPU alone and the hypervisor steals little (0: no check).
    #[arg(long = "noise-check", value_name = "SECS", default_value_t = 1.0)]
    pub noise_check_s: f64,
    /// Refuse to run (exit 2) when the noise check finds the machine busy.
    #[arg(long = "strict")]
    pub strict: bool,
    /// Print a telemetry line (pressure, switches, CPU split, other processes) under each result row.
    #[arg(short = 'v', long = "verbose")]
    pub verbose: bool,
}

/// A `KEY=VALUE` pair of `--expect`, whose key names an environment field.
fn parse_expect(text: &str) -> Result<(String, String), String> {
    let (key, value) = text
        .split_once('=')
        .ok_or_else(|| format!("give KEY=VALUE, not {text:?}"))?;
    match environment::key(key) {
        Some(_) => Ok((key.to_string(), value.to_string())),
        None => Err(format!(
            "unknown key {key:?}; the keys are: {}",
            environment::key_names()
        )),
    }
}

/// Options of `feelbench calibrate`.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// Print the figures only; do not store them in the cache.
    #[arg(long = "no-save")]
    pub no_save: bool,
}

/// Output formats of `feelbench report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
    Csv,
    Md,
}

/// How `feelbench compare` lays out its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Layout {
    /// One row per probe × load × figure, one column per run.
    Columns,
    /// resp1's layout: under each scenario one row per run, one column per figure.
    Rows,
}

/// Options of `feelbench report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The run file written by `feelbench run`.
    pub file: PathBuf,
    /// Output format.
    #[arg(long = "format", value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Print the environment the run was made in instead of its results.
    #[arg(long = "env", conflicts_with = "format")]
    pub env: bool,
    /// Add each scenario's telemetry line under its row (table format).
    #[arg(short = 'v', long = "verbose")]
    pub verbose: bool,
}

/// Options of `feelbench compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Run files written by `feelbench run`; the first is the baseline.
    #[arg(required = true, num_args = 2.., value_name = "RUN.json")]
    pub files: Vec<PathBuf>,
    /// Column names, comma-separated, one per run [default: each run's comment, else its kernel release].
    #[arg(long = "name", value_name = "LIST", value_delimiter = ',')]
    pub names: Vec<String>,
    /// Significance level of the tests (two-sided).
    #[arg(long = "alpha", default_value_t = 0.01)]
    pub alpha: f64,
    /// Figures to compare, comma-separated, from: mean, sd, p50, p99, max, desired, deadlines, fps, low1, work
    /// [default: mean,p99,max,desired,deadlines,fps,low1,work].
    #[arg(long = "figure", value_name = "LIST", value_delimiter = ',')]
    pub figures: Option<Vec<String>>,
    /// Output format.
    #[arg(long = "format", value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// `columns`: one column per run; `rows`: under each scenario one row per run (resp1's layout).
    #[arg(long = "layout", value_enum, default_value_t = Layout::Columns)]
    pub layout: Layout,
}

impl CompareArgs {
    /// The options, once they are checked.
    pub fn options(&self) -> Result<CompareOptions, UsageError> {
        if !(self.alpha > 0.0 && self.alpha < 0.5) {
            return Err(UsageError(format!(
                "--alpha {} is not a significance level: give one between 0 and 0.5, such as 0.01",
                self.alpha
            )));
        }
        if !self.names.is_empty() && self.names.len() != self.files.len() {
            return Err(UsageError(format!(
                "--name gives {} name(s) for {} runs: give one per run, comma-separated",
                self.names.len(),
                self.files.len()
            )));
        }
        let known = figure_keys(false);
        let figures: Vec<String> = match &self.figures {
            Some(keys) => keys.clone(),
            None => figure_keys(true),
        };
        if let Some(unknown) = figures.iter().find(|k| !known.contains(k)) {
            return Err(UsageError(format!(
                "unknown figure {unknown:?}; figures: {}",
                known.join(", ")
            )));
        }
        Ok(CompareOptions {
            alpha: self.alpha,
            figures,
        })
    }
}

/// The figure keys the probes declare (`compared_only`: those compared by
/// default), then `work`, the load's rate.
fn figure_keys(compared_only: bool) -> Vec<String> {
    let mut keys = probe::figure_keys(compared_only);
    keys.push(report::figure::WORK.to_string());
    keys
}

impl From<Layout> for compare::Layout {
    fn from(layout: Layout) -> Self {
        match layout {
            Layout::Columns => compare::Layout::Columns,
            Layout::Rows => compare::Layout::Rows,
        }
    }
}

/// Options of `feelbench merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The run files to merge, in order: each scenario's repeats are theirs
    /// in this order. They must come from the same machine (hostname, CPU,
    /// kernel release) and settings (duration, warm-up, probe scheduling,
    /// load nice, burn processes, custom shape, memory limit, swap file;
    /// loops_per_ms and the loads' file and memory sizes within 5 %).
    #[arg(value_name = "RUN", required = true, num_args = 2..)]
    pub files: Vec<PathBuf>,
    /// Where to write the merged run (not one of the inputs).
    #[arg(short = 'o', long = "output", value_name = "FILE", required = true)]
    pub output: PathBuf,
}

/// Invalid input from the user (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Where the run document goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputChoice {
    /// A file named after the kernel and the date, in the current directory.
    Default,
    File(PathBuf),
    ConsoleOnly,
}

/// Seconds per scenario of the default run (sized so it ends within 5 minutes).
const DEFAULT_DURATION_S: f64 = 6.0;
/// Seconds per scenario with `--full`, as interbench.
const FULL_DURATION_S: f64 = 30.0;
/// Most times a scenario can be measured in one run.
const MAX_REPEATS: u32 = 1000;

/// A size such as `512M`, `4G` or `1048576` (K, M, G and T are powers of 1024).
fn parse_bytes(text: &str) -> Result<u64, String> {
    parse_size::Config::new()
        .with_binary()
        .parse_size(text)
        .map_err(|e| format!("{e} (give a size such as 512M or 4G)"))
        .and_then(|bytes| match bytes {
            0 => Err("a size must be more than 0".to_string()),
            b => Ok(b),
        })
}

/// Validated settings of a run.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub scenarios: Vec<Scenario>,
    /// Times each scenario is measured (`--repeat`).
    pub repeats: u32,
    pub duration_ns: u64,
    pub warmup_ns: u64,
    /// The work parameters; `loops_per_ms`, `file_bytes` and `mem_bytes` are
    /// filled in by the run once it knows them.
    pub params: WorkParams,
    /// Whether the user named loads (else the default set runs, and may
    /// leave out what does not fit).
    pub loads_given: bool,
    pub loops_per_ms: Option<f64>,
    pub workdir: PathBuf,
    pub file_bytes: Option<u64>,
    pub mem_limit_bytes: Option<u64>,
    pub swap_bytes: Option<u64>,
    pub recalibrate: bool,
    pub probe_sched: SchedRequest,
    pub load_nice: i32,
    pub comment: Option<String>,
    pub output: OutputChoice,
    pub quiet: bool,
    /// `--expect` pairs, keys already checked against the environment's.
    pub expect: Vec<(String, String)>,
    /// Length of the preflight noise check; zero skips it.
    pub noise_check_ns: u64,
    /// Whether a busy machine refuses the run.
    pub strict: bool,
    pub verbose: bool,
}

fn check<T>(ok: bool, value: T, message: impl FnOnce() -> String) -> Result<T, UsageError> {
    if ok {
        Ok(value)
    } else {
        Err(UsageError(message()))
    }
}

fn seconds_to_ns(option: &str, seconds: f64, min: f64) -> Result<u64, UsageError> {
    let ok = seconds.is_finite() && seconds >= min && seconds <= 86_400.0;
    check(ok, (seconds * 1e9).round() as u64, || {
        format!("{option} takes seconds from {min} to 86400, not {seconds}")
    })
}

fn check_nice(option: &str, nice: i32) -> Result<i32, UsageError> {
    check((-20..=19).contains(&nice), nice, || {
        format!("{option} takes a nice value from -20 to 19, not {nice}")
    })
}

impl RunArgs {
    /// Checks every option and name and builds the run's settings, for a
    /// machine with `cpus` CPUs and `free_swap_bytes` of swap free.
    pub fn into_config(self, cpus: usize, free_swap_bytes: u64) -> Result<RunConfig, UsageError> {
        let default_s = if self.full {
            FULL_DURATION_S
        } else {
            DEFAULT_DURATION_S
        };
        let duration_ns =
            seconds_to_ns("-t/--duration", self.duration_s.unwrap_or(default_s), 0.1)?;
        let warmup_ns = seconds_to_ns("--warmup", self.warmup_s, 0.0)?;
        let burn_processes = self.burn_processes.unwrap_or(2 * cpus);
        check((1..=1024).contains(&burn_processes), (), || {
            format!("-L/--burn-processes takes 1 to 1024, not {burn_processes}")
        })?;
        let custom = match (self.custom_cpu_pct, self.custom_interval_us) {
            (Some(cpu_pct), Some(interval_us)) => Some(custom_shape(cpu_pct, interval_us)?),
            _ => None,
        };
        if let Some(lpm) = self.loops_per_ms {
            check(lpm.is_finite() && lpm >= 1.0, (), || {
                format!("-l/--loops-per-ms takes a positive number, not {lpm}")
            })?;
        }
        check((1..=99).contains(&self.rt_priority), (), || {
            format!("--rt-priority takes 1 to 99, not {}", self.rt_priority)
        })?;
        let params = WorkParams {
            loops_per_ms: self.loops_per_ms.unwrap_or(1.0),
            cpus,
            burn_processes,
            custom,
            file_bytes: self.file_bytes.unwrap_or(0),
            mem_bytes: self.mem_limit_bytes.unwrap_or(0),
            swap_bytes: free_swap_bytes + self.swap_bytes.unwrap_or(0),
        };
        let probes = Selection {
            kind: "probe",
            list: self.probes.as_deref(),
            with: &self.with_probes,
            without: &self.without_probes,
        }
        .choose(probe::PROBES, &params)?;
        let loads = choose_loads(
            self.full,
            self.loads.as_deref(),
            &self.with_loads,
            &self.without_loads,
            &params,
        )?;
        let scenarios = probes
            .iter()
            .flat_map(|&probe| {
                loads.iter().map(move |load| Scenario {
                    probe,
                    load: load.clone(),
                })
            })
            .collect();
        Ok(RunConfig {
            scenarios,
            repeats: check(
                (1..=MAX_REPEATS).contains(&self.repeat),
                self.repeat,
                || format!("--repeat takes 1 to {MAX_REPEATS}, not {}", self.repeat),
            )?,
            duration_ns,
            warmup_ns,
            params,
            loads_given: self.loads.is_some() || !self.with_loads.is_empty(),
            loops_per_ms: self.loops_per_ms,
            workdir: self.workdir,
            file_bytes: self.file_bytes,
            mem_limit_bytes: self.mem_limit_bytes,
            swap_bytes: self.swap_bytes,
            recalibrate: self.recalibrate,
            probe_sched: SchedRequest {
                nice: check_nice("-B/--nice", self.nice)?,
                fifo_priority: self.rt.then_some(self.rt_priority),
                timer_slack_ns: self.timer_slack_ns.max(1),
            },
            load_nice: check_nice("-N/--load-nice", self.load_nice)?,
            comment: self.comment,
            output: match (self.console_only, self.output) {
                (true, _) => OutputChoice::ConsoleOnly,
                (false, Some(path)) => OutputChoice::File(path),
                (false, None) => OutputChoice::Default,
            },
            quiet: self.quiet,
            expect: self.expect,
            noise_check_ns: seconds_to_ns("--noise-check", self.noise_check_s, 0.0)?,
            strict: self.strict,
            verbose: self.verbose,
        })
    }
}

fn custom_shape(cpu_pct: f64, interval_us: u64) -> Result<CustomShape, UsageError> {
    check((0.0..=100.0).contains(&cpu_pct), (), || {
        format!("-C/--custom-cpu takes a percentage from 0 to 100, not {cpu_pct}")
    })?;
    check((100..=1_000_000).contains(&interval_us), (), || {
        format!("-I/--custom-interval takes 100 to 1000000 µs, not {interval_us}")
    })?;
    Ok(CustomShape {
        cpu_pct,
        interval_us,
    })
}

/// A registry entry the command line can choose.
trait Choosable: 'static {
    fn name(&self) -> &'static str;
    fn included_by_default(&self, params: &WorkParams) -> bool;
    /// Fails, with a message for the user, when `params` lack what it needs.
    fn check(&self, params: &WorkParams) -> Result<(), String>;
}

impl Choosable for ProbeDef {
    fn name(&self) -> &'static str {
        self.name
    }
    fn included_by_default(&self, params: &WorkParams) -> bool {
        (self.default)(params)
    }
    fn check(&self, params: &WorkParams) -> Result<(), String> {
        (self.build)(params).map(drop).map_err(|e| e.to_string())
    }
}

/// What the user said about one registry: an explicit list (or the
/// defaults), plus `with`, minus `without`.
struct Selection<'a> {
    kind: &'static str,
    list: Option<&'a [String]>,
    with: &'a [String],
    without: &'a [String],
}

impl Selection<'_> {
    /// The chosen entries in registry order; unknown names are an error that
    /// lists the valid ones, and so is an entry `params` cannot run.
    fn choose<T: Choosable>(
        &self,
        registry: &'static [T],
        params: &WorkParams,
    ) -> Result<Vec<&'static T>, UsageError> {
        let kind = self.kind;
        let find = |name: &String| {
            registry.iter().find(|d| d.name() == name).ok_or_else(|| {
                let valid: Vec<_> = registry.iter().map(|d| d.name()).collect();
                UsageError(format!(
                    "unknown {kind} '{name}'; valid {kind}s: {}",
                    valid.join(", ")
                ))
            })
        };
        let mut chosen: Vec<&'static str> = match self.list {
            Some(names) => names
                .iter()
                .map(|n| find(n).map(|d| d.name()))
                .collect::<Result<_, _>>()?,
            None => registry
                .iter()
                .filter(|d| d.included_by_default(params))
                .map(|d| d.name())
                .collect(),
        };
        for name in self.with {
            chosen.push(find(name)?.name());
        }
        for name in self.without {
            let excluded = find(name)?.name();
            chosen.retain(|n| *n != excluded);
        }
        let entries: Vec<&'static T> = registry
            .iter()
            .filter(|d| chosen.contains(&d.name()))
            .collect();
        if entries.is_empty() {
            return Err(UsageError(format!("no {kind} left to run")));
        }
        for entry in &entries {
            entry
                .check(params)
                .map_err(|e| UsageError(format!("{kind} {}: {e}", entry.name())))?;
        }
        Ok(entries)
    }
}

/// The load mixes to run: an explicit list (or the default loads), plus
/// `with`, minus `without`, each parsed and checked against `params`.
fn choose_loads(
    full: bool,
    list: Option<&[String]>,
    with: &[String],
    without: &[String],
    params: &WorkParams,
) -> Result<Vec<LoadMix>, UsageError> {
    let parse = |spec: &String| LoadMix::parse(spec).map_err(|e| UsageError(e.to_string()));
    let runnable = |l: &&LoadDef| !l.takes_arg && (l.check)(params, None).is_ok();
    let mut chosen: Vec<LoadMix> = match list {
        Some(specs) => specs.iter().map(parse).collect::<Result<_, _>>()?,
        None if full => load::LOADS
            .iter()
            .filter(runnable)
            .map(LoadMix::single)
            .collect(),
        None => load::LOADS
            .iter()
            .filter(|l| (l.default)(params))
            .map(LoadMix::single)
            .collect(),
    };
    for spec in with {
        chosen.push(parse(spec)?);
    }
    for spec in without {
        let excluded = parse(spec)?.name;
        chosen.retain(|mix| mix.name != excluded);
    }
    let mut seen = std::collections::HashSet::new();
    chosen.retain(|mix| seen.insert(mix.name.clone()));
    if chosen.is_empty() {
        return Err(UsageError("no load left to run".to_string()));
    }
    for mix in &chosen {
        mix.check(params).map_err(|e| UsageError(e.to_string()))?;
    }
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    /// The settings for `args` on a 2-CPU machine with `free_swap_bytes`.
    fn config_with_swap(args: &[&str], free_swap_bytes: u64) -> Result<RunConfig, UsageError> {
        let mut full = vec!["feelbench", "run"];
        full.extend_from_slice(args);
        match Cli::try_parse_from(full).expect("parses").command {
            Command::Run(run) => (*run).into_config(2, free_swap_bytes),
            _ => unreachable!(),
        }
    }

    fn config(args: &[&str]) -> Result<RunConfig, UsageError> {
        config_with_swap(args, 0)
    }

    fn names(config: &RunConfig) -> Vec<String> {
        config.scenarios.iter().map(|s| format!("{s:?}")).collect()
    }

    #[test]
    fn default_run_is_every_periodic_probe_under_every_default_load() {
        let c = config(&[]).unwrap();
        // x, audio, video, gaming under none, burn, video, x, write, read, hack, spawn.
        assert_eq!(c.scenarios.len(), 32);
        assert!(names(&c).contains(&"audio under read".to_string()));
        assert!(names(&c).contains(&"audio under hack".to_string()));
        assert!(!names(&c).iter().any(|n| n.contains("smallwrite")));
        assert_eq!(c.params.burn_processes, 4);
        assert_eq!(c.duration_ns, 6_000_000_000);
        assert!(!names(&c).iter().any(|n| n.contains("custom")));
    }

    #[test]
    fn full_runs_every_runnable_load_for_30_s() {
        let c = config(&["--full"]).unwrap();
        assert_eq!(c.duration_ns, 30_000_000_000);
        let names = names(&c);
        assert!(
            names.contains(&"gaming under burn".to_string()),
            "{names:?}"
        );
        assert!(
            !names
                .iter()
                .any(|n| n.contains("cmd") || n.contains("custom")),
            "{names:?}"
        );
        assert_eq!(
            config(&["--full", "-t", "2"]).unwrap().duration_ns,
            2_000_000_000
        );
    }

    #[test]
    fn custom_joins_the_defaults_when_shaped() {
        let c = config(&["-C", "10", "-I", "2000"]).unwrap();
        assert_eq!(c.scenarios.len(), 45);
    }

    #[test]
    fn include_and_exclude_work_like_interbench() {
        let c = config(&[
            "--probe", "audio", "-W", "video", "-x", "burn", "-x", "x", "-x", "write", "-x", "read",
        ])
        .unwrap();
        assert_eq!(
            names(&c),
            [
                "audio under none",
                "audio under video",
                "audio under hack",
                "audio under spawn",
                "video under none",
                "video under video",
                "video under hack",
                "video under spawn"
            ]
        );
    }

    #[test]
    fn unknown_names_list_the_valid_ones() {
        let err = config(&["--probe", "audoi"]).unwrap_err().to_string();
        assert!(err.contains("unknown probe 'audoi'"), "{err}");
        assert!(err.contains("x, audio, video, gaming, custom"), "{err}");
        let err = config(&["-x", "brun"]).unwrap_err().to_string();
        assert!(err.contains("unknown load 'brun'"), "{err}");
    }

    #[test]
    fn custom_without_its_shape_is_refused_as_probe_and_as_load() {
        let err = config(&["--probe", "custom"]).unwrap_err().to_string();
        assert!(err.contains("--custom-cpu"), "{err}");
        let err = config(&["--load", "custom"]).unwrap_err().to_string();
        assert!(
            err.starts_with("load custom:") && err.contains("--custom-cpu"),
            "{err}"
        );
        let err = config(&["-w", "custom"]).unwrap_err().to_string();
        assert!(err.contains("--custom-cpu"), "{err}");
    }

    #[test]
    fn out_of_range_values_are_refused() {
        assert!(config(&["-t", "0"]).is_err());
        assert!(config(&["-t", "nan"]).is_err());
        assert!(config(&["-B", "-21"]).is_err());
        assert!(config(&["-N", "20"]).is_err());
        assert!(config(&["-L", "0"]).is_err());
        assert!(config(&["-C", "101", "-I", "1000"]).is_err());
        assert!(config(&["--rt-priority", "100"]).is_err());
    }

    #[test]
    fn memload_needs_swap_from_the_system_or_from_swap_option() {
        let err = config(&["--load", "memload"]).unwrap_err().to_string();
        assert!(
            err.starts_with("load memload: needs swap") && err.contains("--swap SIZE"),
            "{err}"
        );
        let c = config(&["--load", "memload", "--swap", "1G"]).unwrap();
        assert_eq!(c.params.swap_bytes, 1 << 30);
        assert!(config_with_swap(&["--load", "memload"], 1 << 30).is_ok());
        let err = config(&["--load", "memload", "--mem-limit", "4G", "--swap", "100M"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("needs 409 MiB of swap"), "{err}");
        assert!(!names(&config_with_swap(&[], 1 << 30).unwrap())
            .iter()
            .any(|n| n.contains("memload")));
    }

    #[test]
    fn repeat_is_one_by_default_and_refused_below_one() {
        assert_eq!(config(&[]).unwrap().repeats, 1);
        assert_eq!(config(&["--repeat", "3"]).unwrap().repeats, 3);
        let err = config(&["--repeat", "0"]).unwrap_err().to_string();
        assert_eq!(err, "--repeat takes 1 to 1000, not 0");
    }

    #[test]
    fn duration_is_kept_exactly() {
        assert_eq!(config(&["-t", "2.5"]).unwrap().duration_ns, 2_500_000_000);
    }

    #[test]
    fn negative_nice_is_accepted_as_a_value() {
        assert_eq!(config(&["-B", "-5"]).unwrap().probe_sched.nice, -5);
    }
}
