//! The options of `feelbench ab`: `run`'s own options (the suite or the
//! probes and loads, `-t`, the store, ...) flattened in, and the
//! experiment's (`--arm`, `--arms`, `--rounds`, ...). [`AbArgs::settings`]
//! splits the command line into the two, checks the run options under each
//! arm exactly as `run` would (so bad input stops the experiment before its
//! first run), and reads the arms.

use super::run::RunArgs;
use super::{Cli, Command, Machine, UserCommand};
use crate::commands::ab::{AbFormat, AbReportSettings, AbSettings, ArmRuns};
use crate::commands::run::{OutputChoice, RunConfig};
use crate::commands::Task;
use crate::exit::UsageError;
use crate::experiment::arms::{self, ArmSpec};
use crate::experiment::plan::OrderKind;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::path::PathBuf;

/// Rounds when `--rounds` is not given: the fewest whose sign-flip test can
/// reach p < 0.01 (2/2^8 = 0.008), so a difference in every round can be
/// called at the usual level of `compare`.
const DEFAULT_ROUNDS: u32 = 8;
/// Most rounds an experiment takes.
const MAX_ROUNDS: u32 = 1000;

/// Options of `feelbench ab`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct AbArgs {
    /// What to do with an experiment made before [default: make one].
    #[command(subcommand)]
    action: Option<AbAction>,
    #[command(flatten)]
    experiment: ExperimentArgs,
    #[command(flatten)]
    run: RunArgs,
    /// The process's arguments, for the runs each arm makes.
    #[arg(skip)]
    argv: Vec<OsString>,
}

/// The experiment's own options.
#[derive(Debug, Args)]
#[command(next_help_heading = "Experiment")]
struct ExperimentArgs {
    /// An arm: NAME, then after `:` its settings, comma-separated (none: the
    /// system as it is). A setting is a sysctl (vm.swappiness=10), a file
    /// under /proc/sys or /sys (/sys/kernel/mm/transparent_hugepage/enabled=never),
    /// a named one (iosched=bfq, thp=never, autogroup=0, governor=performance,
    /// preempt=full, scx=/path/to/scheduler),
    /// or options of `run`, starting with `-` (--load-nice=19, or
    /// '--load-cpu-weight 10'; slice=3ms is --slice=3ms, the probe's custom
    /// slice). The first arm is the baseline. Repeatable.
    #[arg(long = "arm", value_name = "NAME[:SETTING,...]")]
    arms: Vec<String>,
    /// Arms from a TOML file: `[[arm]]` tables with `name`, `settings` (as
    /// --arm's), `run` (options of run) and `set`/`restore` (a pair of shell
    /// commands); they come after the --arm ones.
    #[arg(long = "arms", value_name = "FILE")]
    arms_file: Option<PathBuf>,
    /// Rounds: each runs every arm once, in an order that gives each arm
    /// each position equally often. A default-suite round of two arms and
    /// the A/A control takes about 15 minutes.
    #[arg(long = "rounds", value_name = "N", default_value_t = DEFAULT_ROUNDS)]
    rounds: u32,
    /// Seed of the arms' orders [default: drawn, and recorded].
    #[arg(long = "seed", value_name = "N")]
    seed: Option<u64>,
    /// No A/A control: the baseline runs once per round, not twice (the
    /// second run shows how far apart two runs of one arm come by chance).
    #[arg(long = "no-aa")]
    no_aa: bool,
    /// False discovery rate across every arm, scenario and figure tested
    /// (Benjamini–Hochberg).
    #[arg(long = "alpha", value_name = "Q", default_value_t = 0.05)]
    alpha: f64,
    /// Directory of the experiment: its document (experiment.json), each
    /// arm's runs, the HTML page [default: feelbench-ab-ID].
    #[arg(long = "dir", value_name = "DIR")]
    dir: Option<PathBuf>,
    /// What stdout gets at the end.
    #[arg(long = "format", value_enum, default_value_t = FormatChoice::Table)]
    format: FormatChoice,
    /// `balanced` (Williams' orders from the seed) or `fixed` (every round
    /// in the arms' order, which drift biases: for measuring that bias).
    #[arg(long = "order", value_enum, default_value_t = OrderChoice::Balanced, hide = true)]
    order: OrderChoice,
}

/// `feelbench ab ACTION`.
#[derive(Debug, Subcommand)]
enum AbAction {
    /// Render an experiment again from its directory, running nothing: its
    /// runs analysed afresh (an experiment killed before its analysis gets
    /// one), printed as a table, JSON or HTML; the directory is left as it
    /// was.
    Report {
        /// The experiment's directory (its --dir: experiment.json and runs/).
        dir: PathBuf,
        /// What stdout gets.
        #[arg(long = "format", value_enum, default_value_t = FormatChoice::Table)]
        format: FormatChoice,
    },
}

/// `--format` of `ab`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum FormatChoice {
    /// The answer, then the tables.
    Table,
    /// The experiment's document with its analysis.
    Json,
    /// One page with a heat map of arms × scenarios.
    Html,
}

impl From<FormatChoice> for AbFormat {
    fn from(choice: FormatChoice) -> Self {
        match choice {
            FormatChoice::Table => AbFormat::Table,
            FormatChoice::Json => AbFormat::Json,
            FormatChoice::Html => AbFormat::Html,
        }
    }
}

/// `--order` of `ab`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum OrderChoice {
    Balanced,
    Fixed,
}

/// The experiment's options as they are written, each with whether it
/// takes a value: what is left of the command line without them is `run`'s.
/// (A unit test holds this list to the clap definitions.)
const OWN_OPTIONS: [(&str, bool); 9] = [
    ("--arm", true),
    ("--arms", true),
    ("--rounds", true),
    ("--seed", true),
    ("--no-aa", false),
    ("--alpha", true),
    ("--dir", true),
    ("--format", true),
    ("--order", true),
];

impl AbArgs {
    /// These arguments with the process's `argv`, from which each arm's run
    /// is made.
    pub fn with_argv(mut self, argv: Vec<OsString>) -> Self {
        self.argv = argv;
        self
    }

    /// The task: an experiment to make, or one to render again.
    pub fn into_task(self, machine: &Machine) -> Result<Task, UsageError> {
        Ok(match self.action {
            Some(AbAction::Report { dir, format }) => Task::AbReport(AbReportSettings {
                dir,
                format: format.into(),
            }),
            None => Task::Ab(Box::new(self.settings(machine)?)),
        })
    }

    /// The experiment's settings: the arms read and each one's run options
    /// checked as `run` checks them, on `machine`.
    fn settings(self, machine: &Machine) -> Result<AbSettings, UsageError> {
        let e = self.experiment;
        let rounds = e.rounds;
        if !(2..=MAX_ROUNDS).contains(&rounds) {
            return Err(UsageError::new(format!(
                "--rounds takes 2 to {MAX_ROUNDS}, not {rounds}"
            )));
        }
        if !(e.alpha > 0.0 && e.alpha < 0.5) {
            return Err(UsageError::new(format!(
                "--alpha {} is not a false discovery rate: give one between 0 and 0.5, such as 0.05",
                e.alpha
            )));
        }
        let mut specs = e
            .arms
            .iter()
            .map(|text| arms::parse_arm(text))
            .collect::<Result<Vec<_>, _>>()
            .map_err(UsageError::input)?;
        if let Some(path) = &e.arms_file {
            specs.extend(arms::read_file(path).map_err(UsageError::input)?);
        }
        arms::check_names(&specs).map_err(UsageError::input)?;
        let run_options = run_options(&self.argv);
        let arms = specs
            .into_iter()
            .map(|spec| arm_runs(spec, &run_options, machine))
            .collect::<Result<Vec<_>, _>>()?;
        let first = &arms[0].config;
        Ok(AbSettings {
            workdir: first.workdir.clone(),
            comment: first.output.comment.clone(),
            quiet: first.output.quiet,
            arms,
            rounds,
            seed: e.seed,
            aa: !e.no_aa,
            alpha: e.alpha,
            dir: e.dir,
            format: e.format.into(),
            order: match e.order {
                OrderChoice::Balanced => OrderKind::Balanced,
                OrderChoice::Fixed => OrderKind::Fixed,
            },
        })
    }
}

/// `run`'s options in `argv` (`feelbench ab ...`): what follows `ab`, less
/// the experiment's own options and their values.
fn run_options(argv: &[OsString]) -> Vec<String> {
    let start = argv
        .iter()
        .position(|a| a == "ab")
        .map_or(argv.len(), |i| i + 1);
    let mut left = Vec::new();
    let mut args = argv[start..]
        .iter()
        .map(|a| a.to_string_lossy().to_string());
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, _)) => (name.to_string(), true),
            None => (arg.clone(), false),
        };
        match OWN_OPTIONS.iter().find(|(own, _)| *own == name) {
            Some((_, true)) if !inline => {
                args.next();
            }
            Some(_) => {}
            None => left.push(arg),
        }
    }
    left
}

/// `spec` with its run: `run_options` then the arm's own, checked as `run`
/// checks them (the arm's come last, so they override the user's).
fn arm_runs(
    spec: ArmSpec,
    run_options: &[String],
    machine: &Machine,
) -> Result<ArmRuns, UsageError> {
    let options: Vec<String> = run_options.iter().chain(&spec.run).cloned().collect();
    let argv: Vec<OsString> = ["feelbench", "run"]
        .into_iter()
        .map(String::from)
        .chain(options.iter().cloned())
        .map(OsString::from)
        .collect();
    let said = |e: &dyn std::fmt::Display| {
        UsageError::new(format!("arm {}: {}", spec.name, first_line(&e.to_string())))
    };
    let command = match Cli::try_parse_from(&argv).map_err(|e| said(&e))?.command {
        Command::User(command @ UserCommand::Run(_)) => command,
        _ => unreachable!("the arguments start with `run`"),
    };
    let UserCommand::Run(args) =
        super::suite::resolve(command, argv, machine).map_err(|e| said(&e))?
    else {
        unreachable!("a suite applied to `run` is still `run`");
    };
    let config: RunConfig = args.into_config(machine).map_err(|e| said(&e))?;
    if !matches!(config.output.file, OutputChoice::Default) {
        return Err(UsageError::new(
            "ab writes each run into the experiment's directory: give --dir, not -o/--output or -c/--console-only",
        ));
    }
    Ok(ArmRuns {
        spec,
        options,
        config,
    })
}

/// The first line of a message (clap's errors add usage lines).
fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    line.strip_prefix("error: ").unwrap_or(line).to_string()
}

/// Checks `argv` parses as `feelbench ab` (for tests).
#[cfg(test)]
fn parse(argv: &[&str]) -> AbArgs {
    let Command::User(UserCommand::Ab(args)) = Cli::parse_from(argv).command else {
        panic!("not ab");
    };
    args.with_argv(argv.iter().map(OsString::from).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn own_options_are_the_experiment_group() {
        let cli = Cli::command();
        let ab = cli.find_subcommand("ab").unwrap();
        let run = cli.find_subcommand("run").unwrap();
        let run_ids: Vec<_> = run.get_arguments().map(|a| a.get_id().clone()).collect();
        let mut own: Vec<(String, bool)> = ab
            .get_arguments()
            .filter(|a| !run_ids.contains(a.get_id()))
            .filter(|a| a.get_long().is_some())
            .map(|a| {
                let takes = a.get_action().takes_values();
                (format!("--{}", a.get_long().unwrap()), takes)
            })
            .collect();
        own.sort();
        let mut listed: Vec<(String, bool)> = OWN_OPTIONS
            .iter()
            .map(|(n, v)| (n.to_string(), *v))
            .collect();
        listed.sort();
        assert_eq!(own, listed);
    }

    #[test]
    fn run_options_leave_out_the_experiments() {
        let argv: Vec<OsString> = [
            "feelbench",
            "ab",
            "--probe",
            "x",
            "--arm",
            "a",
            "--rounds=3",
            "-t",
            "1",
            "--no-aa",
            "--arm",
            "b:--load-nice=19",
            "--load",
            "none,burn",
            "--seed",
            "7",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        assert_eq!(
            run_options(&argv),
            ["--probe", "x", "-t", "1", "--load", "none,burn"]
        );
    }

    #[test]
    fn parses_with_the_run_options() {
        let args = parse(&[
            "feelbench",
            "ab",
            "--probe",
            "x",
            "--load",
            "none",
            "-t",
            "1",
            "--arm",
            "base",
            "--arm",
            "n:--load-nice=19",
            "--rounds",
            "2",
        ]);
        assert_eq!(args.experiment.rounds, 2);
        assert_eq!(args.experiment.arms, ["base", "n:--load-nice=19"]);
        assert!(args.action.is_none());
    }

    #[test]
    fn report_takes_a_directory_and_no_experiment_options() {
        let args = parse(&["feelbench", "ab", "report", "exp", "--format", "json"]);
        let Some(AbAction::Report { dir, format }) = args.action else {
            panic!("not ab report");
        };
        assert_eq!((dir, format), (PathBuf::from("exp"), FormatChoice::Json));
        let mixed = ["feelbench", "ab", "--rounds", "3", "report", "exp"];
        assert!(Cli::try_parse_from(mixed).is_err());
    }
}
