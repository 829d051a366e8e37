//! The between-run spread of each compared figure, from the store's own
//! history: the other runs of each compared run's series (same machine,
//! settings and suite), in the order they ran, and how much each figure
//! moved from one to the next (`stats::run_to_run`), as bencher and Otava
//! judge a value against its series. The compared runs themselves are left
//! out, so a run that did change does not widen the spread it is judged
//! against.

use super::Spread;
use crate::document::schema::RunDocument;
use crate::stats::run_to_run::{self, RunToRun};
use crate::store::fingerprint;
use crate::store::query::{Point, PointQuery, RunFilter};
use crate::store::{Store, StoreError};
use serde::Serialize;
use std::collections::BTreeMap;

/// Fewest runs of a series, besides those compared, whose spread is used:
/// with fewer, the estimate has under 2 degrees of freedom.
pub const MIN_RUNS: usize = 4;

/// A figure of a scenario: probe, load and figure key.
type FigureOf = (String, String, String);

/// One compared column's series as the store has it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SeriesHistory {
    /// The series key.
    pub series: String,
    /// Runs of the series read, besides the compared ones.
    pub runs: usize,
    /// Runs the column's value merges (a query's column merges several).
    pub merged: usize,
    #[serde(skip)]
    spreads: BTreeMap<FigureOf, RunToRun>,
}

/// The store's history of every compared column; empty without a store.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct History {
    /// Where it was read (shown in the legend).
    pub store: Option<String>,
    /// One per column.
    pub columns: Vec<SeriesHistory>,
}

/// The standard error and degrees of freedom the history gives a value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BetweenRuns {
    pub se: f64,
    pub df: f64,
    /// Runs the spread came from.
    pub runs: usize,
    /// The column whose series the spread is of.
    pub of_column: usize,
}

impl History {
    /// The history of `runs` (each merging `merged[i]` runs, whose keys
    /// are in `exclude`) from `points`, the points of any runs of a store.
    pub fn of_points(
        store: String,
        runs: &[RunDocument],
        merged: &[usize],
        exclude: &[String],
        points: &[Point],
    ) -> Self {
        let columns = runs
            .iter()
            .zip(merged)
            .map(|(run, &merged)| {
                let series = series_of(run);
                let mut values: BTreeMap<FigureOf, Vec<f64>> = BTreeMap::new();
                let mut keys: Vec<&str> = Vec::new();
                for p in points
                    .iter()
                    .filter(|p| p.series == series && !exclude.contains(&p.run_key))
                {
                    if !keys.contains(&p.run_key.as_str()) {
                        keys.push(&p.run_key);
                    }
                    values
                        .entry((p.probe.clone(), p.load.clone(), p.figure.clone()))
                        .or_default()
                        .push(p.value);
                }
                let spreads = values
                    .into_iter()
                    .filter_map(|(figure, v)| Some((figure, run_to_run::pooled(&[v], MIN_RUNS)?)))
                    .collect();
                SeriesHistory {
                    series,
                    runs: keys.len(),
                    merged: merged.max(1),
                    spreads,
                }
            })
            .collect();
        Self {
            store: Some(store),
            columns,
        }
    }

    /// Reads the points of `figures` (keys) of the compared runs' series
    /// from `store`, then as [`History::of_points`].
    pub fn read(
        store: &mut Store,
        shown: String,
        runs: &[RunDocument],
        merged: &[usize],
        exclude: &[String],
        figures: &[String],
    ) -> Result<Self, StoreError> {
        let mut series: Vec<String> = runs.iter().map(series_of).collect();
        series.sort();
        series.dedup();
        let mut points = Vec::new();
        for figure in figures {
            let runs = RunFilter {
                series: (series.len() == 1).then(|| series[0].clone()),
                ..RunFilter::default()
            };
            points.extend(store.points(&PointQuery {
                probe: None,
                load: None,
                figure: Some(figure.clone()),
                runs,
            })?);
        }
        points.retain(|p| series.contains(&p.series));
        points.sort_by(|a, b| (a.started_unix, &a.run_key).cmp(&(b.started_unix, &b.run_key)));
        Ok(Self::of_points(shown, runs, merged, exclude, &points))
    }

    /// The history's spread of column `column`'s value of `figure`: its
    /// series' run-to-run variance over the runs the column merges, or,
    /// when its series has too few runs, the other column's series' (the
    /// two are compared as like for like). `None` when neither has one.
    pub fn between(&self, column: usize, other: usize, figure: &FigureOf) -> Option<BetweenRuns> {
        let own = self.columns.get(column)?;
        let (spread, of_column) = match own.spreads.get(figure) {
            Some(spread) => (spread, column),
            None => (self.columns.get(other)?.spreads.get(figure)?, other),
        };
        Some(BetweenRuns {
            se: (spread.variance / own.merged as f64).sqrt(),
            df: spread.df,
            runs: spread.runs,
            of_column,
        })
    }

    /// Whether two spreads are one estimate: of one series (or one
    /// borrowed from the other's).
    pub fn same_estimate(&self, a: &BetweenRuns, b: &BetweenRuns) -> bool {
        let series = |c: usize| self.columns.get(c).map(|s| s.series.as_str());
        series(a.of_column) == series(b.of_column)
    }
}

/// The series a run belongs to, as the store computes it.
fn series_of(run: &RunDocument) -> String {
    let machine = fingerprint::machine_of(run);
    fingerprint::series_key(&machine, &fingerprint::settings_hash(run), run)
}

/// Legend lines: where each source of spread came from.
pub fn legend(store: Option<&str>, columns: &[SeriesHistory], used: &[Spread]) -> Vec<String> {
    let mut lines = Vec::new();
    if used.contains(&Spread::History) {
        let mut runs: Vec<String> = columns
            .iter()
            .map(|c| format!("{} ({} run(s))", short(&c.series), c.runs))
            .collect();
        runs.dedup();
        lines.push(format!(
            "[h]: judged against the run-to-run spread of the store's other runs of each run's series ({}; in {}): half the mean squared difference between successive runs, or the runs' own standard errors where larger",
            runs.join(", "),
            store.unwrap_or("-")
        ));
    }
    if used.contains(&Spread::Repeats) {
        lines.push("[r]: judged against the spread of each run's 3 or more repeats, measured in turn over the run (drift within the run included, not from one run to the next)".into());
    }
    if used.contains(&Spread::WithinRun) {
        lines.push(format!(
            "[w]: within-run spread only (batch means; no repeats, and fewer than {MIN_RUNS} other runs of the series in the store): drift between runs is not in it, so two runs of one setting can differ by more; --fail-on leaves these out"
        ));
    }
    lines
}

/// A series key as `history --series` takes it: its first 8 characters.
fn short(series: &str) -> &str {
    series.get(..8).unwrap_or(series)
}
