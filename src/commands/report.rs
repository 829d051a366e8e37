//! `feelbench report FILE`: renders a saved run in the chosen format, or
//! (`--env`) the environment it was made in.

use crate::cli::Format;
use crate::probe;
use crate::report::file::{read_run, RunFileError};
use crate::report::{csv, markdown, table};
use crate::system::environment;
use std::path::Path;

/// The environment recorded in the run at `path`, as `key: value` lines.
pub fn render_env(path: &Path) -> Result<String, RunFileError> {
    Ok(environment::render(
        &read_run(path, &probe::sheet_of)?.environment,
    ))
}

/// The text of `path` rendered as `format` (`verbose`: the table with each
/// scenario's telemetry line).
pub fn render(path: &Path, format: Format, verbose: bool) -> Result<String, RunFileError> {
    let run = read_run(path, &probe::sheet_of)?;
    Ok(match format {
        Format::Table => table::render(&run, verbose),
        Format::Json => serde_json::to_string_pretty(&run).expect("a run always serialises") + "\n",
        Format::Csv => csv::render(&run),
        Format::Md => markdown::render(&run),
    })
}
