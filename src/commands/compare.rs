//! `feelbench compare BASE.json OTHER.json ...`: reads the runs, compares
//! them against the first and renders the comparison in the chosen format.

use super::Format;
use crate::compare::{column_names, csv, markdown, text, CompareOptions, Comparison};
use crate::report::file::read_run;
use std::path::PathBuf;

/// Settings of `feelbench compare`.
#[derive(Debug, Clone)]
pub struct CompareSettings {
    /// The run files; the first is the baseline.
    pub files: Vec<PathBuf>,
    /// One column name per run, or none for the defaults.
    pub names: Vec<String>,
    /// The significance level and the figures, checked.
    pub options: CompareOptions,
    /// The format the comparison is rendered in.
    pub format: Format,
    /// How the rows are laid out (table and Markdown formats).
    pub layout: Layout,
}

/// How the comparison lays out its rows. (The compare renderers still name
/// this type `crate::cli::Layout`, which re-exports it; it moves to
/// `compare` once the renderers own their layout.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// One row per probe × load × figure, one column per run.
    Columns,
    /// resp1's layout: under each scenario one row per run, one column per figure.
    Rows,
}

/// The comparison of the runs `settings` name, rendered.
pub fn render(settings: &CompareSettings) -> anyhow::Result<String> {
    let runs = settings
        .files
        .iter()
        .map(|path| read_run(path))
        .collect::<Result<Vec<_>, _>>()?;
    let names = column_names(&runs, &settings.names);
    let files = settings
        .files
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let comparison = Comparison::build(&runs, names, files, &settings.options);
    Ok(match settings.format {
        Format::Table => text::render(&comparison, settings.layout),
        Format::Md => markdown::render(&comparison, settings.layout),
        Format::Csv => csv::render(&comparison),
        Format::Json => {
            serde_json::to_string_pretty(&comparison).expect("a comparison always serialises")
                + "\n"
        }
    })
}
