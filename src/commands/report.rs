//! `feelbench report FILE`: renders a saved run in the chosen format, or
//! (`--env`) the environment it was made in.

use super::Format;
use crate::probe;
use crate::report::file::{read_run, RunFileError};
use crate::report::{csv, markdown, table};
use crate::system::environment;
use std::path::PathBuf;

/// Settings of `feelbench report`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportSettings {
    /// The run file.
    pub file: PathBuf,
    /// What to show of it.
    pub view: ReportView,
}

/// What `feelbench report` shows of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportView {
    /// Its results in `format`; `verbose`: the table with each scenario's
    /// telemetry line.
    Results { format: Format, verbose: bool },
    /// The environment it was made in, as `key: value` lines.
    Environment,
}

/// The run file `settings` name, rendered as they ask.
pub fn render(settings: &ReportSettings) -> Result<String, RunFileError> {
    let run = read_run(&settings.file, &probe::sheet_of)?;
    Ok(match settings.view {
        ReportView::Environment => environment::render(&run.environment),
        ReportView::Results { format, verbose } => match format {
            Format::Table => table::render(&run, verbose),
            Format::Json => {
                serde_json::to_string_pretty(&run).expect("a run always serialises") + "\n"
            }
            Format::Csv => csv::render(&run),
            Format::Md => markdown::render(&run),
        },
    })
}
