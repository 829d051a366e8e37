//! The options of `feelbench history`.

use super::store::{RunFilterArgs, StoreArgs};
use crate::commands::history::{HistoryFormat, HistorySettings};
use crate::exit::UsageError;
use crate::history::By;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// Options of `feelbench history`.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// The probe.
    #[arg(long = "probe", value_name = "NAME", required = true)]
    probe: String,
    /// The load it ran under.
    #[arg(long = "load", value_name = "NAME", required = true)]
    load: String,
    /// The figure's key, as `feelbench list` shows it (`p99`, `work:burn`).
    #[arg(long = "figure", value_name = "KEY", required = true)]
    figure: String,
    /// `run`: a point per run at its start time, labelled with its kernel;
    /// `kernel`: a row per kernel (runs, median, least, greatest), in the
    /// order each first appears.
    #[arg(long = "by", value_enum, default_value_t = ByChoice::Run)]
    by: ByChoice,
    /// Only the series whose key starts with KEY (history names the series
    /// when the runs span several).
    #[arg(long = "series", value_name = "KEY")]
    series: Option<String>,
    /// Mix runs of series that are not comparable (other machines,
    /// settings or suites).
    #[arg(long = "any-series", conflicts_with = "series")]
    any_series: bool,
    #[command(flatten)]
    filter: RunFilterArgs,
    /// Output format (`html`: one self-contained page with the trend chart).
    #[arg(long = "format", value_enum, default_value_t = HistoryFormatChoice::Table)]
    format: HistoryFormatChoice,
    /// Write to FILE instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    #[command(flatten)]
    store: StoreArgs,
}

/// How history places its points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ByChoice {
    Run,
    Kernel,
}

/// Formats of `feelbench history`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum HistoryFormatChoice {
    Table,
    Csv,
    Json,
    Svg,
    Html,
}

impl HistoryArgs {
    /// The settings of `feelbench history`.
    pub fn settings(self) -> Result<HistorySettings, UsageError> {
        let mut runs = self.filter.filter();
        runs.series = self.series;
        Ok(HistorySettings {
            store: self.store.location()?,
            probe: self.probe,
            load: self.load,
            figure: self.figure,
            runs,
            any_series: self.any_series,
            by: match self.by {
                ByChoice::Run => By::Run,
                ByChoice::Kernel => By::Kernel,
            },
            format: match self.format {
                HistoryFormatChoice::Table => HistoryFormat::Table,
                HistoryFormatChoice::Csv => HistoryFormat::Csv,
                HistoryFormatChoice::Json => HistoryFormat::Json,
                HistoryFormatChoice::Svg => HistoryFormat::Svg,
                HistoryFormatChoice::Html => HistoryFormat::Html,
            },
            output: self.output,
        })
    }
}
