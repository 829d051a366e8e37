//! `feelbench compare BASE.json OTHER.json ...`: reads the runs, compares
//! them against the first and renders the comparison in the chosen format.

use super::Format;
use crate::compare::{column_names, csv, html, markdown, text, CompareOptions, Comparison, Layout};
use crate::probe;
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
    /// The file to write it to (`-o`), else stdout.
    pub output: Option<std::path::PathBuf>,
}

/// The comparison of the runs `settings` name, rendered.
pub fn render(settings: &CompareSettings) -> anyhow::Result<String> {
    let runs = settings
        .files
        .iter()
        .map(|path| read_run(path, &probe::sheet_of))
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
        Format::Html => html::render(&comparison, &runs)?,
        Format::Json => {
            serde_json::to_string_pretty(&comparison).expect("a comparison always serialises")
                + "\n"
        }
    })
}
