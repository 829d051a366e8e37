//! The command line: clap definitions, and [`UserCommand::into_task`], which
//! turns parsed arguments into a [`Task`] of plain, validated settings
//! (types of `commands`). Nothing outside this module sees clap; `main`
//! only parses, hands the worker its spec, and asks for the task.

mod ab;
mod docs;
mod history;
mod regressions;
mod rtapp;
mod rtapp_spec;
mod run;
mod select;
mod store;
mod submit;
mod suite;
mod values;
mod watch;

use crate::commands::calibrate::CalibrateSettings;
use crate::commands::compare::{CompareSettings, RunSource};
use crate::commands::import::{ImportSettings, LogFormat};
use crate::commands::list::ListFormat;
use crate::commands::merge::MergeSettings;
use crate::commands::report::{ReportSettings, ReportView};
use crate::commands::{self, Task};
use crate::compare::{CompareOptions, Layout};
use crate::document;
use crate::exit::UsageError;
use crate::probe;
use crate::report;
use crate::report::html::ChartKind;
use crate::system::cpulist::CpuList;
use clap::{Args, Parser, Subcommand, ValueEnum};
use run::RunArgs;
use std::path::PathBuf;
pub use store::parse_command_line;

/// `command` with what its arguments (`argv`, the process's) leave to be
/// settled: the suite of `run`, the runs of `ab`.
pub fn resolve(
    command: UserCommand,
    argv: Vec<std::ffi::OsString>,
    machine: &Machine,
) -> Result<UserCommand, UsageError> {
    match command {
        UserCommand::Ab(args) => Ok(UserCommand::Ab(Box::new(args.with_argv(argv)))),
        command => suite::resolve(command, argv, machine),
    }
}

/// How a Linux system feels under load: latency of simulated interactive tasks
/// (desktop, audio, video, game) while background loads run.
#[derive(Debug, Parser)]
#[command(
    name = "feelbench",
    version,
    about,
    propagate_version = true,
    after_long_help = docs::after_long_help()
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// What the process was started to do.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// The commands a user types.
    #[command(flatten)]
    User(UserCommand),
    /// Internal: a worker process started by feelbench itself.
    #[command(hide = true)]
    Worker {
        /// The worker's job, as JSON.
        spec: String,
    },
    /// Internal: one step of the built-in job (see `sim::job::step`).
    #[command(hide = true, name = crate::sim::job::step::STEP_SUBCOMMAND)]
    JobStep {
        /// The step, as JSON.
        spec: String,
    },
}

/// The commands a user types.
#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Measure every chosen probe under every chosen load (by default the
    /// `default` suite).
    // A later option overrides an earlier one, as a suite's settings come
    // before the user's own options.
    #[command(args_override_self = true)]
    Run(Box<RunArgs>),
    /// Run the suite (or the probes and loads named) under two or more
    /// arms (settings of the system or of the run), in rounds in a balanced
    /// order with the baseline run twice as an A/A control, and say which
    /// arm feels best on which probe and load, at what cost to the loads'
    /// work.
    #[command(args_override_self = true)]
    Ab(Box<ab::AbArgs>),
    /// Show every probe and load with one line each.
    List(ListArgs),
    /// The suites: a classic tool's probes, loads and settings each.
    #[command(subcommand)]
    Suite(SuiteCommand),
    /// rt-app's workload files: check one as feelbench understands it, or
    /// list the shipped ones.
    #[command(subcommand)]
    Rtapp(rtapp::RtappCommand),
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
    /// Read real games' frame logs (MangoHud's or PresentMon's CSV) into a
    /// run with the frame figures of the game probe, for compare, merge
    /// and the store.
    Import(ImportArgs),
    /// List the runs in the store: every run is added to it when it ends.
    Runs(store::RunsArgs),
    /// One figure of one probe under one load across the stored runs (or
    /// kernels), with its intervals and the annotations: a table, CSV,
    /// JSON, an SVG trend chart or an HTML page.
    History(Box<history::HistoryArgs>),
    /// Add run files to the store, or annotate a run.
    #[command(subcommand)]
    Store(store::StoreCommand),
    /// Send runs to another store (a lab's PostgreSQL database): run
    /// files, or the local store's runs it lacks, or those waiting since a
    /// send failed (--pending). A run is stored once however often sent.
    Submit(submit::SubmitArgs),
    /// Find where the figures of the store's series changed level, corrected
    /// for testing many series at once; with --fail-on worse, exit 3 on a
    /// regression.
    Regressions(Box<regressions::RegressionsArgs>),
    /// Export the newest run's headline figures (OpenMetrics, for the node
    /// exporter's textfile collector): this host's, unless --machine says.
    Export(regressions::ExportArgs),
    /// Watch this machine as it is: canaries stand in for interactive
    /// programs, and each of their events later than its threshold is
    /// said with its cause and, as root, the tasks that ran instead;
    /// --listen serves the figures to Prometheus.
    Watch(Box<watch::WatchArgs>),
    /// Print the manual page (roff) on stdout.
    #[command(hide = true)]
    Man,
    /// Print the completion script for SHELL on stdout.
    #[command(hide = true)]
    Completions {
        /// The shell the script is for.
        shell: clap_complete::Shell,
    },
}

/// What the settings of a command depend on about the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    /// CPUs the run may use.
    pub cpus: usize,
    /// Swap free on the system now.
    pub free_swap_bytes: u64,
    /// The CPUs online now; `None` when /sys does not say.
    pub online_cpus: Option<CpuList>,
}

impl UserCommand {
    /// The task these arguments ask for on `machine`, every option and name
    /// checked.
    pub fn into_task(self, machine: &Machine) -> Result<Task, UsageError> {
        Ok(match self {
            UserCommand::Run(args) => Task::Run(Box::new(args.into_config(machine)?)),
            UserCommand::Ab(args) => args.into_task(machine)?,
            UserCommand::List(args) => Task::List(args.format.into()),
            UserCommand::Suite(command) => Task::Print(command.text()?),
            UserCommand::Rtapp(command) => Task::Print(command.text()?),
            UserCommand::Calibrate(args) => Task::Calibrate(CalibrateSettings {
                save: !args.no_save,
            }),
            UserCommand::Report(args) => Task::Report(args.settings()),
            UserCommand::Compare(args) => Task::Compare(args.settings()?),
            UserCommand::Merge(args) => Task::Merge(MergeSettings {
                files: args.files,
                output: args.output,
            }),
            UserCommand::Import(args) => Task::Import(args.settings()),
            UserCommand::Runs(args) => Task::Runs(args.settings()?),
            UserCommand::History(args) => args.task()?,
            UserCommand::Store(command) => Task::Store(command.settings()?),
            UserCommand::Submit(args) => Task::Submit(args.settings()?),
            UserCommand::Regressions(args) => Task::Regressions(args.settings()?),
            UserCommand::Export(args) => Task::Export(args.settings()?),
            UserCommand::Watch(args) => {
                Task::Watch(Box::new(args.settings(machine.online_cpus.as_ref())?))
            }
            UserCommand::Man => Task::Print(docs::man_page()),
            UserCommand::Completions { shell } => Task::Print(docs::completions(shell)),
        })
    }
}

/// `feelbench suite ...`.
#[derive(Debug, Subcommand)]
pub enum SuiteCommand {
    /// Every built-in suite with its version, scenarios and summary.
    List,
    /// What a suite runs: its options, its groups of probes and loads.
    Show {
        /// A built-in suite's name, or a suite file (a path with a `/` or
        /// ending in `.toml`).
        suite: String,
        /// Print the suite's file as it is (to copy and edit for --suite-file).
        #[arg(long = "toml")]
        toml: bool,
    },
}

impl SuiteCommand {
    /// What the command prints; an unknown suite or a bad file is bad input.
    fn text(self) -> Result<String, UsageError> {
        use crate::commands::suite::{self, Suite};
        match self {
            SuiteCommand::List => suite::show::list().map_err(UsageError::input),
            SuiteCommand::Show { suite: name, toml } => {
                let path = std::path::Path::new(&name);
                let is_file = name.contains('/') || name.ends_with(".toml");
                let suite = match is_file {
                    true => Suite::from_file(path),
                    false => Suite::built_in(&name),
                }
                .map_err(UsageError::input)?;
                match (toml, is_file) {
                    (false, _) => Ok(suite::show::show(&suite)),
                    (true, true) => std::fs::read_to_string(path)
                        .map_err(|e| UsageError::new(format!("cannot read {name}: {e}"))),
                    (true, false) => {
                        Ok(suite::built_in_text(&name).unwrap_or_default().to_string())
                    }
                }
            }
        }
    }
}

/// Options of `feelbench list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Output format (`md`: the tables of the README).
    #[arg(long = "format", value_enum, default_value_t = ListFormatChoice::Table)]
    format: ListFormatChoice,
}

/// Output formats of `feelbench list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ListFormatChoice {
    Table,
    Md,
}

impl From<ListFormatChoice> for ListFormat {
    fn from(choice: ListFormatChoice) -> Self {
        match choice {
            ListFormatChoice::Table => ListFormat::Table,
            ListFormatChoice::Md => ListFormat::Md,
        }
    }
}

/// Options of `feelbench calibrate`.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// Print the figures only; do not store them in the cache.
    #[arg(long = "no-save")]
    no_save: bool,
}

/// Output formats of `feelbench report` and `feelbench compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum FormatChoice {
    Table,
    Json,
    Csv,
    Md,
    /// One self-contained page with charts (use -o FILE).
    Html,
    /// One chart (`report` only): see --chart and --probe.
    Svg,
    /// A Perfetto trace of each scenario's worst late events, for a run
    /// made without `run --trace` (binary: needs -o FILE).
    Perfetto,
}

impl FormatChoice {
    /// The format, or `None` for `svg` (a chart, not a format of results).
    fn results(self) -> Option<commands::Format> {
        match self {
            FormatChoice::Table => Some(commands::Format::Table),
            FormatChoice::Json => Some(commands::Format::Json),
            FormatChoice::Csv => Some(commands::Format::Csv),
            FormatChoice::Md => Some(commands::Format::Md),
            FormatChoice::Html => Some(commands::Format::Html),
            FormatChoice::Svg | FormatChoice::Perfetto => None,
        }
    }
}

/// The charts `--format svg` draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ChartChoice {
    /// Latency histogram, count on a log scale, a line per load.
    Histogram,
    /// Latency CDF, a line per load.
    Cdf,
    /// Latency over time under one load (see --load), with the ideal line.
    OverTime,
    /// One figure per load with its 95 % interval (see --figure).
    Figure,
}

/// How `feelbench compare` lays out its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum LayoutChoice {
    /// One row per probe × load × figure, one column per run.
    Columns,
    /// LMbench's and resp1's layout: under each scenario one row per run, one column per figure.
    Rows,
}

impl From<LayoutChoice> for Layout {
    fn from(choice: LayoutChoice) -> Self {
        match choice {
            LayoutChoice::Columns => Layout::Columns,
            LayoutChoice::Rows => Layout::Rows,
        }
    }
}

/// Options of `feelbench report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The run file written by `feelbench run`.
    file: PathBuf,
    /// Output format.
    #[arg(long = "format", value_enum, default_value_t = FormatChoice::Table)]
    format: FormatChoice,
    /// Print the environment the run was made in instead of its results.
    #[arg(long = "env", conflicts_with = "format")]
    env: bool,
    /// Explain why each scenario's events were late: a table of causes,
    /// where the late time went and the worst events broken down.
    #[arg(long = "explain", conflicts_with_all = ["format", "env"])]
    explain: bool,
    /// With --explain, how many of each scenario's worst late events to show.
    #[arg(long = "worst", value_name = "N", requires = "explain", default_value_t = report::explain::DEFAULT_WORST)]
    worst: usize,
    /// Add each scenario's telemetry line under its row (table format).
    #[arg(short = 'v', long = "verbose")]
    verbose: bool,
    /// The chart `--format svg` draws.
    #[arg(long = "chart", value_enum, default_value_t = ChartChoice::Histogram)]
    chart: ChartChoice,
    /// The probe `--format svg` draws [default: the run's first].
    #[arg(long = "probe", value_name = "NAME")]
    probe: Option<String>,
    /// The load `--chart over-time` draws [default: the first that recorded it].
    #[arg(long = "load", value_name = "NAME")]
    load: Option<String>,
    /// The figure `--chart figure` draws; for histogram and cdf, a quantile
    /// figure whose samples they draw (micro's pipe_p50: the pipe round
    /// trips) [default: the probe's first].
    #[arg(long = "figure", value_name = "KEY")]
    figure: Option<String>,
    /// Write to FILE instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
}

impl ReportArgs {
    fn settings(self) -> ReportSettings {
        let view = match (self.env, self.format.results()) {
            _ if self.explain => ReportView::Explain { worst: self.worst },
            (true, _) => ReportView::Environment,
            _ if self.format == FormatChoice::Perfetto => ReportView::Perfetto,
            (false, Some(format)) => ReportView::Results {
                format,
                verbose: self.verbose,
            },
            (false, None) => ReportView::Chart {
                kind: match self.chart {
                    ChartChoice::Histogram => ChartKind::Histogram { of: self.figure },
                    ChartChoice::Cdf => ChartKind::Cdf { of: self.figure },
                    ChartChoice::OverTime => ChartKind::OverTime { load: self.load },
                    ChartChoice::Figure => ChartKind::Figure { key: self.figure },
                },
                probe: self.probe,
            },
        };
        ReportSettings {
            file: self.file,
            view,
            output: self.output,
        }
    }
}

/// Options of `feelbench compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The runs; the first is the baseline. Each is a run file; else a run
    /// of the store (its id, or the start of it); else a query of the store,
    /// KEY=VALUE[,KEY=VALUE...] with keys kernel, machine, comment, suite,
    /// since, until and last, whose runs are merged into one column.
    #[arg(required = true, num_args = 2.., value_name = "RUN.json|ID|QUERY")]
    runs: Vec<String>,
    /// Column names, comma-separated, one per run [default: a query's text, else each run's comment, else its kernel release].
    #[arg(long = "name", value_name = "LIST", value_delimiter = ',')]
    names: Vec<String>,
    /// Significance level of the tests (two-sided).
    #[arg(long = "alpha", default_value_t = 0.01)]
    alpha: f64,
    /// Figures to compare, comma-separated: the keys `feelbench list` shows
    /// [default: those it marks with *].
    #[arg(long = "figure", value_name = "LIST", value_delimiter = ',')]
    figures: Option<Vec<String>>,
    /// Output format.
    #[arg(long = "format", value_enum, default_value_t = FormatChoice::Table)]
    format: FormatChoice,
    /// `columns`: one column per run; `rows` (table and md formats): under
    /// each scenario one row per run and a column per figure (LMbench's and
    /// resp1's layout), in blocks at most 120 characters wide.
    #[arg(long = "layout", value_enum, default_value_t = LayoutChoice::Columns)]
    layout: LayoutChoice,
    /// Write to FILE instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// `worse`: exit 3 when a figure got significantly worse than the
    /// baseline by more than its minimum effect, judged against a spread
    /// between runs (the store's runs of the series, or repeats); a verdict
    /// on the spread within each run alone never fails (each said on
    /// stderr; the comparison is still written).
    #[arg(long = "fail-on", value_name = "WHAT", value_enum)]
    fail_on: Option<regressions::FailOnChoice>,
    /// Judge each difference on the runs alone, not against the store's
    /// run-to-run spread of their series.
    #[arg(long = "no-history")]
    no_history: bool,
    #[command(flatten)]
    store: store::StoreArgs,
}

impl CompareArgs {
    /// The settings, once the options are checked.
    fn settings(self) -> Result<CompareSettings, UsageError> {
        let options = self.options()?;
        let format = self.format.results().ok_or_else(|| {
            UsageError::new(
                "compare has no --format svg: use --format html, or `report --format svg` for one run's chart".to_string(),
            )
        })?;
        if self.layout == LayoutChoice::Rows
            && !matches!(format, commands::Format::Table | commands::Format::Md)
        {
            return Err(UsageError::new(format!(
                "--layout rows is a shape of the table and md formats; --format {} has one shape of its own (csv: a record per figure and run, json: the comparison itself, html: one table of the figures beside the charts): drop --layout, or use --format table or md",
                self.format.to_possible_value().map_or("?".to_string(), |v| v.get_name().to_string())
            )));
        }
        let sources = self
            .runs
            .iter()
            .map(|run| store::run_source(run))
            .collect::<Result<Vec<_>, _>>()?;
        let from_store = sources.iter().any(|s| !matches!(s, RunSource::File(_)));
        Ok(CompareSettings {
            store: match from_store {
                true => Some(self.store.location()?),
                false => self.store.location().ok(),
            },
            history: !self.no_history,
            sources,
            fail_on_worse: self.fail_on == Some(regressions::FailOnChoice::Worse),
            names: self.names,
            options,
            format,
            layout: self.layout.into(),
            output: self.output,
        })
    }

    /// The significance level and the figures, checked.
    fn options(&self) -> Result<CompareOptions, UsageError> {
        if !(self.alpha > 0.0 && self.alpha < 0.5) {
            return Err(UsageError::new(format!(
                "--alpha {} is not a significance level: give one between 0 and 0.5, such as 0.01",
                self.alpha
            )));
        }
        if !self.names.is_empty() && self.names.len() != self.runs.len() {
            return Err(UsageError::new(format!(
                "--name gives {} name(s) for {} runs: give one per run, comma-separated",
                self.names.len(),
                self.runs.len()
            )));
        }
        let known = figure_keys(false);
        let figures: Vec<String> = match &self.figures {
            Some(keys) => keys.clone(),
            None => figure_keys(true),
        };
        let unknown = figures
            .iter()
            .find(|k| !known.contains(k) && !probe::is_parameter_figure(k));
        if let Some(unknown) = unknown {
            return Err(UsageError::new(format!(
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
    keys.push(document::figure::WORK.to_string());
    keys
}

/// Options of `feelbench merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The run files to merge, in order: each scenario's repeats are theirs
    /// in this order. They must come from the same machine (hostname, CPU,
    /// kernel release) and settings (duration, warm-up, probe scheduling,
    /// load nice, burn processes, custom shape, memory limit, swap file;
    /// loops_per_ms and the loads' file and memory sizes within 5 %) and
    /// method versions of the probes and loads both used.
    #[arg(value_name = "RUN", required = true, num_args = 2..)]
    files: Vec<PathBuf>,
    /// Where to write the merged run (not one of the inputs).
    #[arg(short = 'o', long = "output", value_name = "FILE", required = true)]
    output: PathBuf,
}

/// Who wrote the logs `feelbench import` reads.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum LogFormatArg {
    /// MangoHud's CSV log.
    Mangohud,
    /// PresentMon's CSV.
    Presentmon,
}

/// Options of `feelbench import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Who wrote the logs.
    #[arg(value_name = "FORMAT")]
    format: LogFormatArg,
    /// The logs, one game session each: the repeats of one scenario.
    #[arg(value_name = "LOG", required = true)]
    files: Vec<PathBuf>,
    /// What ran beside the game (the scenario's load, as compare pairs it).
    #[arg(long = "load", value_name = "NAME", default_value = "none")]
    load: String,
    /// Where to write the run.
    #[arg(short = 'o', long = "output", value_name = "FILE", required = true)]
    output: PathBuf,
}

impl ImportArgs {
    fn settings(self) -> ImportSettings {
        ImportSettings {
            format: match self.format {
                LogFormatArg::Mangohud => LogFormat::MangoHud,
                LogFormatArg::Presentmon => LogFormat::PresentMon,
            },
            files: self.files,
            load: self.load,
            output: self.output,
        }
    }
}

#[cfg(test)]
mod tests;
