//! The options of `feelbench regressions` and `feelbench export`.

use super::store::{RunFilterArgs, StoreArgs};
use crate::commands::export::ExportSettings;
use crate::commands::regressions::{RegressionsFormat, RegressionsSettings};
use crate::exit::UsageError;
use crate::regression;
use crate::store::query::PointQuery;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// What `--fail-on` fails on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOnChoice {
    /// Exit 3 when a figure got significantly worse by more than its
    /// minimum effect.
    Worse,
}

/// Options of `feelbench regressions`.
#[derive(Debug, Args)]
pub struct RegressionsArgs {
    #[command(flatten)]
    runs: RunFilterArgs,
    /// Only this probe's series.
    #[arg(long = "probe", value_name = "NAME")]
    probe: Option<String>,
    /// Only this load's series.
    #[arg(long = "load", value_name = "NAME")]
    load: Option<String>,
    /// The figure whose series are searched (a key `feelbench list` shows)
    /// [default: each probe's headline figures].
    #[arg(long = "figure", value_name = "KEY")]
    figure: Option<String>,
    /// Smallest change reported, in % of the level before it.
    #[arg(long = "min-effect", value_name = "PCT", default_value_t = 5.0)]
    min_effect: f64,
    /// False discovery rate over every test of every series
    /// (Benjamini–Hochberg).
    #[arg(long = "fdr", value_name = "Q", default_value_t = 0.05)]
    fdr: f64,
    /// Search the runs the filters give as one series per probe, load and
    /// figure, even when their machines, settings or suites differ (a
    /// setting changed on purpose between runs, to see it found); a change
    /// of method versions still cuts it.
    #[arg(long = "any-series")]
    any_series: bool,
    /// Output format.
    #[arg(long = "format", value_enum, default_value_t = RegressionsFormatChoice::Table)]
    format: RegressionsFormatChoice,
    /// `worse`: exit 3 when a regression is reported (the report is still
    /// printed).
    #[arg(long = "fail-on", value_enum, value_name = "WHAT")]
    fail_on: Option<FailOnChoice>,
    #[command(flatten)]
    store: StoreArgs,
}

/// Formats of `feelbench regressions`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum RegressionsFormatChoice {
    Table,
    Json,
}

impl RegressionsArgs {
    /// The settings of `feelbench regressions`, the numbers checked.
    pub fn settings(self) -> Result<RegressionsSettings, UsageError> {
        if !(self.min_effect.is_finite() && self.min_effect >= 0.0) {
            return Err(UsageError::new(format!(
                "--min-effect {} is not a share: give a percentage of 0 or more, such as 5",
                self.min_effect
            )));
        }
        if !(self.fdr > 0.0 && self.fdr < 1.0) {
            return Err(UsageError::new(format!(
                "--fdr {} is not a rate: give a number between 0 and 1, such as 0.05",
                self.fdr
            )));
        }
        let store_option = self.store.store.as_ref().map(|s| s.to_string());
        Ok(RegressionsSettings {
            store: self.store.location()?,
            query: PointQuery {
                probe: self.probe,
                load: self.load,
                figure: self.figure,
                runs: self.runs.filter(),
            },
            judge: regression::Settings {
                min_effect_pct: self.min_effect,
                fdr: self.fdr,
                store_option,
                any_series: self.any_series,
            },
            format: match self.format {
                RegressionsFormatChoice::Table => RegressionsFormat::Table,
                RegressionsFormatChoice::Json => RegressionsFormat::Json,
            },
            fail_on_worse: self.fail_on == Some(FailOnChoice::Worse),
        })
    }
}

/// Formats of `feelbench export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ExportFormatChoice {
    /// The OpenMetrics text format, for the node exporter's textfile
    /// collector.
    Openmetrics,
}

/// Options of `feelbench export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Output format.
    #[arg(long = "format", value_enum)]
    format: ExportFormatChoice,
    #[command(flatten)]
    runs: RunFilterArgs,
    /// Write to FILE (replaced at once, as a collector wants) instead of
    /// stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    #[command(flatten)]
    store: StoreArgs,
}

impl ExportArgs {
    /// The settings of `feelbench export`.
    pub fn settings(self) -> Result<ExportSettings, UsageError> {
        let ExportFormatChoice::Openmetrics = self.format;
        Ok(ExportSettings {
            store: self.store.location()?,
            runs: self.runs.filter(),
            output: self.output,
        })
    }
}
