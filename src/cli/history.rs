//! The options of `feelbench history`.

use super::store::{RunFilterArgs, StoreArgs};
use crate::commands::history::{HistoryFormat, HistorySettings};
use crate::commands::watch::WatchHistorySettings;
use crate::commands::Task;
use crate::exit::UsageError;
use crate::history::By;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// Options of `feelbench history`.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// The probe.
    #[arg(long = "probe", value_name = "NAME", required_unless_present = "watch")]
    probe: Option<String>,
    /// The load it ran under.
    #[arg(long = "load", value_name = "NAME", required_unless_present = "watch")]
    load: Option<String>,
    /// The figure's key, as `feelbench list` shows it (`p99`, `work:burn`).
    #[arg(long = "figure", value_name = "KEY", required_unless_present = "watch")]
    figure: Option<String>,
    /// Instead of a run figure, the minutes `feelbench watch` stored: each
    /// canary's events, p50, p99, max and incidents per minute (with
    /// --machine HOST and --since DATE; by default every host's last 24
    /// hours), in any --format (svg and html: each canary's p99 over time).
    #[arg(long = "watch", conflicts_with_all = ["probe", "load", "figure", "series", "any_series"])]
    watch: bool,
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

impl From<HistoryFormatChoice> for HistoryFormat {
    fn from(choice: HistoryFormatChoice) -> Self {
        match choice {
            HistoryFormatChoice::Table => HistoryFormat::Table,
            HistoryFormatChoice::Csv => HistoryFormat::Csv,
            HistoryFormatChoice::Json => HistoryFormat::Json,
            HistoryFormatChoice::Svg => HistoryFormat::Svg,
            HistoryFormatChoice::Html => HistoryFormat::Html,
        }
    }
}

impl HistoryArgs {
    /// The settings of `feelbench history`.
    /// `history`, or with `--watch` the watch's minutes.
    pub fn task(self) -> Result<Task, UsageError> {
        if !self.watch {
            return Ok(Task::History(self.settings()?));
        }
        let filter = self.filter.filter();
        Ok(Task::WatchHistory(WatchHistorySettings {
            store: self.store.location()?,
            hostname: filter.machine,
            since_unix: filter.since_unix,
            format: self.format.into(),
            output: self.output,
        }))
    }

    fn settings(self) -> Result<HistorySettings, UsageError> {
        let mut runs = self.filter.filter();
        runs.series = self.series;
        Ok(HistorySettings {
            store: self.store.location()?,
            probe: self.probe.unwrap_or_default(),
            load: self.load.unwrap_or_default(),
            figure: self.figure.unwrap_or_default(),
            runs,
            any_series: self.any_series,
            by: match self.by {
                ByChoice::Run => By::Run,
                ByChoice::Kernel => By::Kernel,
            },
            format: self.format.into(),
            output: self.output,
        })
    }
}
