//! The subcommands: each turns validated settings (built by `cli`, which
//! alone sees clap) into work and output. [`Task`] is what the command line
//! asked for, settled; [`execute`] carries it out.

pub mod calibrate;
pub mod compare;
pub mod list;
pub mod merge;
pub mod report;
pub mod run;

use crate::exit::ExitCode;
use crate::system::SystemInfo;
use std::io::Write as _;

/// What the command line asked for, with every setting checked.
#[derive(Debug)]
pub enum Task {
    /// `feelbench run`.
    Run(Box<run::RunConfig>),
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
}

/// Carries out `task` on the machine `system` describes.
pub fn execute(task: Task, system: SystemInfo) -> anyhow::Result<ExitCode> {
    match task {
        Task::Run(config) => run::run(*config, system),
        Task::List(format) => print(&list::render(format)),
        Task::Calibrate(settings) => {
            calibrate::run(&system, &settings)?;
            Ok(ExitCode::Success)
        }
        Task::Report(settings) => print(&report::render(&settings)?),
        Task::Compare(settings) => print(&compare::render(&settings)?),
        Task::Merge(settings) => merge::run(&settings),
        Task::Print(text) => print(&text),
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
