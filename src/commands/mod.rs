//! The subcommands: each turns validated settings (built by `cli`, which
//! alone sees clap) into work and output. [`Task`] is what the command line
//! asked for, settled; [`execute`] carries it out.

pub mod ab;
pub mod calibrate;
pub mod compare;
pub mod export;
pub mod history;
pub mod import;
pub mod list;
pub mod merge;
pub mod regressions;
pub mod report;
pub mod rtapp;
pub mod run;
pub mod store;
pub mod submit;
pub mod suite;
pub mod watch;

use crate::exit::ExitCode;
use crate::system::SystemInfo;
use anyhow::Context;
use std::io::Write as _;

/// What the command line asked for, with every setting checked.
#[derive(Debug)]
pub enum Task {
    /// `feelbench run`.
    Run(Box<run::RunConfig>),
    /// `feelbench ab`.
    Ab(Box<ab::AbSettings>),
    /// `feelbench ab report`.
    AbReport(ab::AbReportSettings),
    /// `feelbench list`.
    List(list::ListFormat),
    /// `feelbench calibrate`.
    Calibrate(calibrate::CalibrateSettings),
    /// `feelbench report`.
    Report(report::ReportSettings),
    /// `feelbench compare`.
    Compare(compare::CompareSettings),
    /// `feelbench merge`.
    Merge(merge::MergeSettings),
    /// `feelbench import`.
    Import(import::ImportSettings),
    /// `feelbench runs`.
    Runs(store::RunsSettings),
    /// `feelbench history`.
    History(history::HistorySettings),
    /// `feelbench store ...`.
    Store(store::StoreTask),
    /// `feelbench submit`.
    Submit(submit::SubmitSettings),
    /// `feelbench regressions`.
    Regressions(regressions::RegressionsSettings),
    /// `feelbench export`.
    Export(export::ExportSettings),
    /// `feelbench watch`.
    Watch(Box<watch::WatchSettings>),
    /// `feelbench history --watch`.
    WatchHistory(watch::WatchHistorySettings),
    /// Text that is ready to print (the manual page, shell completions).
    Print(String),
}

/// The formats `report` and `compare` render in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Console tables.
    Table,
    /// The document itself, as JSON.
    Json,
    /// CSV, one row per scenario (and figure).
    Csv,
    /// Markdown tables.
    Md,
    /// One self-contained HTML page with charts.
    Html,
}

/// Carries out `task` on the machine `system` describes.
pub fn execute(task: Task, system: SystemInfo) -> anyhow::Result<ExitCode> {
    match task {
        Task::Run(config) => run::run(*config, system),
        Task::Ab(settings) => ab::run(*settings),
        Task::AbReport(settings) => ab::report(&settings),
        Task::List(format) => print(&list::render(format)),
        Task::Calibrate(settings) => {
            calibrate::run(&system, &settings)?;
            Ok(ExitCode::Success)
        }
        Task::Report(settings) => report::run(&settings),
        Task::Compare(settings) => compare::run(&settings),
        Task::Merge(settings) => merge::run(&settings),
        Task::Import(settings) => import::run(&settings),
        Task::Runs(settings) => print(&store::runs(&settings)?),
        Task::History(settings) => history::run(&settings),
        Task::Store(task) => print(&store::execute(&task)?),
        Task::Submit(settings) => print(&submit::submit(&settings)?),
        Task::Regressions(settings) => regressions::run(&settings),
        Task::Export(settings) => export::run(&settings),
        Task::Watch(settings) => watch::run(*settings, system),
        Task::WatchHistory(settings) => emit(
            &watch::history::render(&settings)?,
            settings.output.as_deref(),
        ),
        Task::Print(text) => print(&text),
    }
}

/// Writes `text` to the file `output`, or prints it when there is none.
fn emit(text: &str, output: Option<&std::path::Path>) -> anyhow::Result<ExitCode> {
    match output {
        None => print(text),
        Some(path) => {
            std::fs::write(path, text)
                .with_context(|| format!("cannot write {}", path.display()))?;
            Ok(ExitCode::Success)
        }
    }
}

/// Prints to stdout; a closed stdout (`| head`) is not an error.
fn print(text: &str) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(ExitCode::Success),
    }
}
