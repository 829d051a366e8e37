//! `feelbench report FILE`: renders a saved run in the chosen format, or
//! (`--env`) the environment it was made in, or (`--explain`) why its
//! events were late.

use super::Format;
use crate::document::file::read_run;
use crate::exit::{ExitCode, UsageError};
use crate::probe;
use crate::report::html::{self, ChartError, ChartKind};
use crate::report::{csv, explain, markdown, table};
use crate::system::environment;
use crate::trace;
use anyhow::Context;
use std::path::PathBuf;

/// Settings of `feelbench report`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportSettings {
    /// The run file.
    pub file: PathBuf,
    /// What to show of it.
    pub view: ReportView,
    /// The file to write it to (`-o`), else stdout.
    pub output: Option<PathBuf>,
}

/// What `feelbench report` shows of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReportView {
    /// Its results in `format`; `verbose`: the table with each scenario's
    /// telemetry line.
    Results { format: Format, verbose: bool },
    /// The environment it was made in, as `key: value` lines.
    Environment,
    /// Why each scenario's events were late, with its `worst` worst events.
    Explain { worst: usize },
    /// One chart of one probe (the run's first when `None`), as SVG.
    Chart {
        kind: ChartKind,
        probe: Option<String>,
    },
    /// A Perfetto trace of its worst late events, written to the output.
    Perfetto,
}

/// Why a trace is not printed.
const NEEDS_OUTPUT: &str = "--format perfetto writes a binary trace: give -o FILE";

/// Carries out `feelbench report`: the rendering on stdout or in the
/// output file, or the trace in the output file.
pub fn run(settings: &ReportSettings) -> anyhow::Result<ExitCode> {
    if settings.view != ReportView::Perfetto {
        return super::emit(&render(settings)?, settings.output.as_deref());
    }
    let path = settings
        .output
        .as_deref()
        .ok_or_else(|| UsageError::new(NEEDS_OUTPUT))?;
    let run = read_run(&settings.file, &probe::sheet_of)?;
    let scenarios = trace::of_document(&run);
    if scenarios.is_empty() {
        return Err(UsageError::new(format!(
            "{} keeps no late events to trace: its probes do not split them, or it was \
             made by a feelbench older than the split",
            settings.file.display()
        ))
        .into());
    }
    trace::write(path, &trace::render(&scenarios))?;
    let events: usize = scenarios.iter().map(|s| s.worst.len()).sum();
    say!(
        "{events} worst late event(s) of {} scenario(s) written to {}; {}",
        scenarios.len(),
        path.display(),
        trace::HOW_TO_OPEN
    );
    Ok(ExitCode::Success)
}

/// The run file `settings` name, rendered as they ask.
pub fn render(settings: &ReportSettings) -> anyhow::Result<String> {
    let run = read_run(&settings.file, &probe::sheet_of)?;
    Ok(match &settings.view {
        ReportView::Environment => environment::render(&run.environment),
        ReportView::Explain { worst } => explain::render(&run, *worst),
        ReportView::Perfetto => return Err(UsageError::new(NEEDS_OUTPUT).into()),
        ReportView::Chart { kind, probe } => {
            let first = run.probes.keys().next();
            let probe = probe
                .as_ref()
                .or(first)
                .context("the run has no probe to draw")?;
            html::render_svg(&run, probe, kind).map_err(|error| match error {
                unknown @ ChartError::Unknown { .. } => UsageError::input(unknown).into(),
                other => anyhow::Error::from(other),
            })?
        }
        ReportView::Results { format, verbose } => match format {
            Format::Table => table::render(&run, *verbose),
            Format::Json => {
                serde_json::to_string_pretty(&run).expect("a run always serialises") + "\n"
            }
            Format::Csv => csv::render(&run),
            Format::Md => markdown::render(&run),
            Format::Html => html::render(&run)?,
        },
    })
}
