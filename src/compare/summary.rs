//! The summary of each run against the baseline: the geometric mean of the
//! ratio of each figure over the scenarios, and how many scenarios got
//! significantly better, worse, both, or neither.

use super::{Row, Verdict};
use serde::Serialize;

/// One figure's ratios over the scenarios both runs have.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FigureSummary {
    /// Figure key (`work` for every part of the loads).
    pub figure: String,
    /// Geometric mean of this run's value over the baseline's (> 1: higher).
    pub geomean_ratio: f64,
    /// Scenarios in the mean (both values above 0).
    pub scenarios: usize,
}

/// A run against the baseline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSummary {
    /// Column of the run (1 = first after the baseline).
    pub run: usize,
    pub figures: Vec<FigureSummary>,
    /// Scenarios with a significantly better figure and none worse.
    pub better: usize,
    /// Scenarios with a significantly worse figure and none better.
    pub worse: usize,
    /// Scenarios with both.
    pub mixed: usize,
    /// Scenarios in both runs with no significant difference (or none testable).
    pub same: usize,
}

/// The summaries of runs `1..runs` from the comparison's rows.
pub fn summarise(rows: &[Row], runs: usize) -> Vec<RunSummary> {
    (1..runs).map(|run| summarise_run(rows, run)).collect()
}

fn figure_family(key: &str) -> &str {
    key.split(':').next().unwrap_or(key)
}

fn summarise_run(rows: &[Row], run: usize) -> RunSummary {
    let mut summary = RunSummary {
        run,
        figures: figure_ratios(rows, run),
        better: 0,
        worse: 0,
        mixed: 0,
        same: 0,
    };
    count_verdicts(rows, run, &mut summary);
    summary
}

/// The geometric mean ratio of each figure family of run `run` over the
/// baseline, over the scenarios where both are above 0.
fn figure_ratios(rows: &[Row], run: usize) -> Vec<FigureSummary> {
    let mut families: Vec<&str> = Vec::new();
    for row in rows {
        let family = figure_family(&row.figure);
        if !families.contains(&family) {
            families.push(family);
        }
    }
    families
        .into_iter()
        .filter_map(|family| {
            let logs: Vec<f64> = rows
                .iter()
                .filter(|r| figure_family(&r.figure) == family)
                .filter_map(|r| {
                    let base = r.cells[0].as_ref()?.value;
                    let this = r.cells[run].as_ref()?.value;
                    (base > 0.0 && this > 0.0).then(|| (this / base).ln())
                })
                .collect();
            (!logs.is_empty()).then(|| FigureSummary {
                figure: family.to_string(),
                geomean_ratio: (logs.iter().sum::<f64>() / logs.len() as f64).exp(),
                scenarios: logs.len(),
            })
        })
        .collect()
}

/// Counts the scenarios of run `run` that got better, worse, both or
/// neither, into `summary`.
fn count_verdicts(rows: &[Row], run: usize, summary: &mut RunSummary) {
    let mut scenarios: Vec<(&str, &str)> = Vec::new();
    for row in rows {
        if !scenarios.contains(&(row.probe.as_str(), row.load.as_str())) {
            scenarios.push((&row.probe, &row.load));
        }
    }
    for (probe, load) in scenarios {
        let verdicts: Vec<Verdict> = rows
            .iter()
            .filter(|r| r.probe == probe && r.load == load)
            .filter(|r| r.cells[0].is_some())
            .filter_map(|r| r.cells[run].as_ref().map(|c| c.verdict))
            .collect();
        if verdicts.is_empty() {
            continue;
        }
        let better = verdicts.contains(&Verdict::Better);
        let worse = verdicts.contains(&Verdict::Worse);
        match (better, worse) {
            (true, true) => summary.mixed += 1,
            (true, false) => summary.better += 1,
            (false, true) => summary.worse += 1,
            (false, false) => summary.same += 1,
        }
    }
}
