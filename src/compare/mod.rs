//! `feelbench compare`: runs side by side. One row per probe × load ×
//! figure, one cell per run with its change against the first run (the
//! baseline) and a verdict from Welch's t-test — or no verdict, and the
//! reason, where the data cannot support one or the difference is too small
//! to show in the figure's shown digits; then how the split of late events
//! changed (`late`). Each verdict says which spread it was judged against
//! ([`Spread`]): the store's run-to-run spread of the runs' series
//! (`history`), the spread of repeats over the run, or, with neither, the
//! spread within each run only, which `--fail-on` leaves out.

pub mod csv;
pub mod history;
pub mod html;
pub mod late;
pub mod markdown;
pub mod mismatch;
pub mod summary;
pub mod text;

use crate::document::estimate::{estimate, FigureEstimate};
use crate::document::figure::Figure;
use crate::document::schema::{IntervalMethod, RunDocument, ScenarioResult};
use crate::figures::{Better, ChangeUnit, Unit};
use crate::stats::{welch, Estimate};
use history::{BetweenRuns, History};
use serde::Serialize;
use summary::RunSummary;

/// How a comparison is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// One column per run.
    Columns,
    /// Under each scenario, one row per run and a column per figure
    /// (LMbench's and resp1's layout; table and Markdown only).
    Rows,
}

/// What the user chose to compare and how.
#[derive(Debug, Clone)]
pub struct CompareOptions {
    /// Significance level of the tests.
    pub alpha: f64,
    /// Figure keys to show (as the probes declare them, and `work`), in order.
    pub figures: Vec<String>,
}

/// One compared run: its column name and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunColumn {
    pub name: String,
    pub file: String,
    pub kernel_release: String,
    pub started: String,
    /// Most measurements any of its scenarios has.
    pub repeats: usize,
}

/// Whether a cell differs from the baseline, and which way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The cell is the baseline itself.
    Baseline,
    /// Significantly better than the baseline.
    Better,
    /// Significantly worse than the baseline.
    Worse,
    /// Tested, and the difference is within what chance gives.
    NoDifference,
    /// Significant by the test, but smaller than the step the figure is
    /// shown with: no verdict on a change a reader cannot see.
    BelowResolution,
    /// Not tested: see the cell's `untested` reason.
    Untested,
}

/// Which spread a verdict was judged against: what makes a difference
/// between two runs larger than chance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Spread {
    /// The run-to-run spread of the store's other runs of the same series
    /// (or each run's own standard error, where larger).
    History,
    /// Each run's spread across 3 or more repeats, measured in turn over the
    /// run.
    Repeats,
    /// Only the spread within each run (batch means): drift between runs is
    /// not in it, so `--fail-on` leaves the verdict out.
    WithinRun,
    /// The spread of a share of late events over each run's sub-windows
    /// (`late` rows only, see [`late`]): bursts are in it, drift between
    /// runs is not, and no late row is in `--fail-on`.
    SubWindows,
}

impl Spread {
    /// The cell's marker, explained in the legend.
    pub fn marker(self) -> &'static str {
        match self {
            Spread::History => "[h]",
            Spread::Repeats => "[r]",
            Spread::WithinRun => "[w]",
            Spread::SubWindows => "[s]",
        }
    }
}

/// Why a cell was not tested.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Untested {
    /// The baseline lacks the scenario or the figure.
    MissingBaseline,
    /// Fewer than three measurements, and the figure has no batch-means
    /// interval either: its spread is unknown.
    WithoutInterval,
    /// Neither run's figure varied at all, so chance cannot be sized.
    WithoutSpread,
}

impl Untested {
    /// The reason in words, for legends.
    pub fn explain(self) -> &'static str {
        match self {
            Untested::MissingBaseline => "the baseline run lacks this scenario or figure",
            Untested::WithoutInterval => {
                "no interval: one or two measurements, and the figure is not kept per sub-window (sd, p50, max, 1% low, load work) or has too few frames (a p99 needs 5 groups of 100); measure longer or use --repeat 3 or more"
            }
            Untested::WithoutSpread => "the figure did not vary at all in either run",
        }
    }
}

/// One run's value of a row's figure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    /// The figure, in its stored unit (µs for latencies).
    pub value: f64,
    /// Standard error, when the data gives one.
    pub se: Option<f64>,
    /// How the standard error was obtained.
    pub method: Option<IntervalMethod>,
    /// Change against the baseline: % or percentage points (see the row's
    /// `change_unit`); `None` in the baseline column or when the baseline
    /// is 0 or missing.
    pub change: Option<f64>,
    /// The test's two-sided p-value.
    pub p: Option<f64>,
    pub verdict: Verdict,
    /// The spread the test judged against, when tested.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spread: Option<Spread>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub untested: Option<Untested>,
}

/// One probe × load × figure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub probe: String,
    pub load: String,
    /// The figure's key (`mean`, `p99`, `work:burn`, ...).
    pub figure: String,
    pub label: String,
    /// The unit values are stored and shown in.
    pub unit: Unit,
    pub better: Better,
    pub change_unit: ChangeUnit,
    /// One per run; `None` where the run lacks the scenario or figure.
    pub cells: Vec<Option<Cell>>,
}

/// Runs side by side.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Significance level of every test.
    pub alpha: f64,
    /// The runs, baseline first.
    pub runs: Vec<RunColumn>,
    /// Things that make the comparison less fair (different machines or
    /// calibrations).
    pub warnings: Vec<String>,
    /// Settings and system facts that differ between the runs, each with
    /// every run's value.
    pub differences: Vec<mismatch::Difference>,
    pub rows: Vec<Row>,
    /// One per run after the baseline.
    pub summaries: Vec<RunSummary>,
    /// How the split of late events changed, per scenario and cause.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub late: Vec<late::LateRow>,
    /// The store the between-run spread was read from, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history_store: Option<String>,
    /// Each run's series in that store and how many of its other runs it
    /// holds.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<history::SeriesHistory>,
}

impl Comparison {
    /// Compares `runs` (named `names`, from `files`), the first being the
    /// baseline, on what the runs hold alone.
    pub fn build(
        runs: &[RunDocument],
        names: Vec<String>,
        files: Vec<String>,
        options: &CompareOptions,
    ) -> Self {
        Self::build_with_history(runs, names, files, options, &History::default())
    }

    /// [`Comparison::build`], judging differences against `history`'s
    /// spread between runs where it has the figure.
    pub fn build_with_history(
        runs: &[RunDocument],
        names: Vec<String>,
        files: Vec<String>,
        options: &CompareOptions,
        history: &History,
    ) -> Self {
        let columns = runs
            .iter()
            .zip(names)
            .zip(files)
            .map(|((run, name), file)| RunColumn {
                name,
                file,
                kernel_release: run.system.kernel_release.clone(),
                started: run.run.started.clone(),
                repeats: run
                    .scenarios
                    .iter()
                    .map(|s| s.repeats.len().max(1))
                    .max()
                    .unwrap_or(0),
            })
            .collect();
        let rows = scenario_keys(runs)
            .into_iter()
            .flat_map(|(probe, load)| {
                let found: Vec<Option<&ScenarioResult>> = runs
                    .iter()
                    .map(|run| {
                        run.scenarios
                            .iter()
                            .find(|s| s.probe == probe && s.load == load)
                    })
                    .collect();
                figures_of(runs, &found, &options.figures)
                    .into_iter()
                    .map(|figure| row(&probe, &load, &figure, &found, options.alpha, history))
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<_>>();
        let summaries = summary::summarise(&rows, runs.len());
        Self {
            alpha: options.alpha,
            runs: columns,
            warnings: mismatch::warnings(runs),
            differences: mismatch::differences(runs),
            rows,
            summaries,
            late: late::rows(runs, options.alpha),
            history_store: history.store.clone(),
            history: history.columns.clone(),
        }
    }

    /// The figure keys of the rows, each once.
    pub fn figure_keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = Vec::new();
        for row in &self.rows {
            if !keys.contains(&row.figure) {
                keys.push(row.figure.clone());
            }
        }
        keys
    }
}

impl Comparison {
    /// Each cell significantly worse than the baseline by more than its
    /// figure's minimum effect (`--fail-on worse`), judged against a spread
    /// between runs, with its row and column. A verdict on the spread
    /// within each run alone is left out: drift between two runs of one
    /// setting passes it.
    pub fn worse(&self) -> impl Iterator<Item = (&Row, usize, &Cell)> {
        self.rows.iter().flat_map(|row| {
            row.cells
                .iter()
                .enumerate()
                .filter_map(move |(column, cell)| {
                    cell.as_ref()
                        .filter(|c| c.verdict == Verdict::Worse)
                        .filter(|c| c.spread != Some(Spread::WithinRun))
                        .map(|c| (row, column, c))
                })
        })
    }

    /// The sources of spread the verdicts used, in legend order.
    pub fn spreads(&self) -> Vec<Spread> {
        let mut used: Vec<Spread> = self
            .rows
            .iter()
            .flat_map(|r| r.cells.iter().flatten())
            .filter_map(|c| c.spread)
            .collect();
        used.sort();
        used.dedup();
        used
    }
}

/// Every probe × load of the runs, in the order they first appear.
fn scenario_keys(runs: &[RunDocument]) -> Vec<(String, String)> {
    let mut keys: Vec<(String, String)> = Vec::new();
    for s in runs.iter().flat_map(|r| &r.scenarios) {
        let key = (s.probe.clone(), s.load.clone());
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys
}

/// The chosen figures any of the runs has for one scenario, in key order,
/// as the first run with the scenario declares them.
fn figures_of(
    runs: &[RunDocument],
    found: &[Option<&ScenarioResult>],
    keys: &[String],
) -> Vec<Figure> {
    let mut figures: Vec<Figure> = Vec::new();
    for key in keys {
        for (run, scenario) in runs.iter().zip(found) {
            let Some(scenario) = scenario else { continue };
            let Some(sheet) = run.sheet(&scenario.probe) else {
                continue;
            };
            for figure in Figure::of_key(key, &scenario.outcome, sheet) {
                if !figures.iter().any(|f| f.key() == figure.key()) {
                    figures.push(figure);
                }
            }
        }
    }
    figures
}

fn row(
    probe: &str,
    load: &str,
    figure: &Figure,
    found: &[Option<&ScenarioResult>],
    alpha: f64,
    history: &History,
) -> Row {
    let estimates: Vec<Option<FigureEstimate>> = found
        .iter()
        .map(|s| s.and_then(|s| estimate(s, figure)))
        .collect();
    let base = estimates[0];
    let key = (probe.to_string(), load.to_string(), figure.key());
    let cells = estimates
        .iter()
        .enumerate()
        .map(|(i, e)| {
            e.map(|e| {
                let between = match (history.between(0, i, &key), history.between(i, 0, &key)) {
                    (Some(b), Some(t)) => Some((b, t, history.same_estimate(&b, &t))),
                    _ => None,
                };
                cell(figure, base.filter(|_| i > 0), e, i == 0, alpha, between)
            })
        })
        .collect();
    Row {
        probe: probe.to_string(),
        load: load.to_string(),
        figure: figure.key(),
        label: figure.label(),
        unit: figure.unit(),
        better: figure.better(),
        change_unit: figure.change_unit(),
        cells,
    }
}

/// A cell of `this` against `base`; `between` is the history's spread of
/// the baseline's value and of this one's, where the store has both, and
/// whether they are one estimate.
fn cell(
    figure: &Figure,
    base: Option<FigureEstimate>,
    this: FigureEstimate,
    is_baseline: bool,
    alpha: f64,
    between: Option<(BetweenRuns, BetweenRuns, bool)>,
) -> Cell {
    let mut cell = Cell {
        value: this.value,
        se: this.uncertainty.map(|(e, _)| e.se),
        method: this.uncertainty.map(|(_, m)| m),
        change: None,
        p: None,
        verdict: Verdict::Baseline,
        spread: None,
        untested: None,
    };
    if is_baseline {
        return cell;
    }
    let Some(base) = base else {
        cell.verdict = Verdict::Untested;
        cell.untested = Some(Untested::MissingBaseline);
        return cell;
    };
    cell.change = match figure.change_unit() {
        ChangeUnit::Points => Some(this.value - base.value),
        ChangeUnit::Percent => (base.value != 0.0).then(|| 100.0 * (this.value / base.value - 1.0)),
    };
    let one_estimate = between.is_some_and(|(_, _, one)| one);
    let Some((spread, base_e, this_e)) = judged(&base, &this, between) else {
        cell.verdict = Verdict::Untested;
        cell.untested = Some(Untested::WithoutInterval);
        return cell;
    };
    let Some(mut outcome) = welch::test(&base_e, &this_e) else {
        cell.verdict = Verdict::Untested;
        cell.untested = Some(Untested::WithoutSpread);
        return cell;
    };
    if one_estimate {
        // Both runs are widened by one estimate of one series' spread,
        // not two independent ones: no more degrees of freedom than the
        // fewer of the two.
        outcome.df = outcome.df.min(base_e.df).min(this_e.df);
        outcome.p = crate::stats::two_sided_p(outcome.t, outcome.df);
    }
    cell.spread = Some(spread);
    cell.p = Some(outcome.p);
    let difference = this.value - base.value;
    cell.verdict = if outcome.p >= alpha {
        Verdict::NoDifference
    } else if difference.abs() < figure.min_effect_at(base.value, this.value) {
        Verdict::BelowResolution
    } else if (outcome.t < 0.0) == (figure.better() == Better::Lower) {
        Verdict::Better
    } else {
        Verdict::Worse
    };
    cell
}

/// The two estimates a test compares, and the spread they hold: with the
/// history's spread of both values, each value's own uncertainty widened to
/// it (or the history's alone, for a figure the run gives no interval);
/// else the runs' own, from repeats or from within each run. `None` when a
/// value has no uncertainty at all.
fn judged(
    base: &FigureEstimate,
    this: &FigureEstimate,
    between: Option<(BetweenRuns, BetweenRuns, bool)>,
) -> Option<(Spread, Estimate, Estimate)> {
    if let Some((b, t, _)) = between {
        return Some((Spread::History, widened(base, b), widened(this, t)));
    }
    let ((base_e, base_m), (this_e, this_m)) = (base.uncertainty?, this.uncertainty?);
    let spread = match (base_m, this_m) {
        (IntervalMethod::Repeats, IntervalMethod::Repeats) => Spread::Repeats,
        _ => Spread::WithinRun,
    };
    Some((spread, base_e, this_e))
}

/// `value`'s own estimate, or, when the history's spread between runs is
/// larger or the value has none, the value with that spread.
fn widened(value: &FigureEstimate, between: BetweenRuns) -> Estimate {
    let from_history = Estimate {
        value: value.value,
        se: between.se,
        df: between.df,
        samples: between.runs,
    };
    match value.uncertainty {
        Some((own, _)) if own.se >= between.se => own,
        _ => from_history,
    }
}

/// Column names: `--name` values, else each run's comment, else its kernel
/// release; repeated names get ` (2)`, ` (3)`, ... so columns stay apart.
pub fn column_names(runs: &[RunDocument], given: &[String]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        let base = given
            .get(i)
            .cloned()
            .or_else(|| run.run.comment.clone())
            .unwrap_or_else(|| run.system.kernel_release.clone());
        let mut name = base.clone();
        let mut n = 2;
        while names.contains(&name) {
            name = format!("{base} ({n})");
            n += 1;
        }
        names.push(name);
    }
    names
}

#[cfg(test)]
mod tests;
