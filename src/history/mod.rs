//! `feelbench history`: one figure of one probe under one load across the
//! runs of a store, oldest first: a point per run (its value and interval,
//! placed at the run's start and labelled with its kernel) or a row per
//! kernel (how many runs, their median, least and greatest value), with the
//! annotations that cut the series. It never mixes series that are not
//! comparable unless asked ([`series`]); its renderers (`text`: table and
//! CSV; `chart`: SVG and an HTML page) read only this module's types, and
//! the figure's label, unit and direction come from the run's sheet.

pub mod chart;
pub mod series;
pub mod text;

use crate::figures::{Better, Unit};
use crate::store::query::{Annotation, Point, RunSummary};
use serde::Serialize;
use series::SeriesInfo;

/// How history places its points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum By {
    /// One point per run, at its start time.
    Run,
    /// One row per kernel, in the order each first appears.
    Kernel,
}

/// The figure history shows, as its probe's sheet declares it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Shown {
    /// The figure's key (`p99`, `work:burn`).
    pub figure: String,
    /// Its label with the unit it is shown in (`latency p99 (ms)`).
    pub label: String,
    /// The unit values are stored in.
    pub unit: Unit,
    pub better: Better,
}

/// One run's value of the figure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunPoint {
    pub run_key: String,
    pub run_id: String,
    pub started: String,
    pub started_unix: i64,
    pub kernel: String,
    pub series: String,
    pub comment: Option<String>,
    /// In the stored unit (µs for latencies).
    pub value: f64,
    /// The run's interval of the value, when it has one.
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
}

/// The runs of one kernel.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelRow {
    pub kernel: String,
    pub runs: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

/// What cuts a series at a [`Mark`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MarkKind {
    /// An annotation of the store.
    Annotation,
    /// A change of the method versions of the runs' probes and loads.
    Method,
}

/// An annotation, or a change of method versions, placed at the run it
/// holds from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mark {
    pub kind: MarkKind,
    pub run_key: String,
    pub started_unix: i64,
    pub kernel: String,
    pub note: String,
}

/// A figure across runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct History {
    pub probe: String,
    pub load: String,
    #[serde(flatten)]
    pub shown: Shown,
    pub by: By,
    /// The series the points belong to (one unless mixing was asked for).
    pub series: Vec<SeriesInfo>,
    /// Oldest first.
    pub points: Vec<RunPoint>,
    /// One per kernel, in order of first appearance.
    pub kernels: Vec<KernelRow>,
    /// The annotations and changes of method that cut the series shown,
    /// within its runs, in run order.
    pub marks: Vec<Mark>,
}

impl History {
    /// The history of `points` (one series, or several when asked: see
    /// [`series::choose`]), with the annotations of `annotations` that cut
    /// them; `runs` are the store's runs, to place each annotation.
    pub fn build(
        points: &[Point],
        series: Vec<SeriesInfo>,
        shown: Shown,
        by: By,
        annotations: &[Annotation],
        runs: &[RunSummary],
    ) -> Self {
        let run_points: Vec<RunPoint> = points
            .iter()
            .map(|p| RunPoint {
                run_key: p.run_key.clone(),
                run_id: p.run_id.clone(),
                started: p.started.clone(),
                started_unix: p.started_unix,
                kernel: p.kernel_release.clone(),
                series: p.series.clone(),
                comment: p.comment.clone(),
                value: p.value,
                ci_low: p.ci_low,
                ci_high: p.ci_high,
            })
            .collect();
        let mut marks = marks_of(points, annotations, runs);
        marks.extend(series::method_marks(points));
        marks.sort_by_key(|m| m.started_unix);
        Self {
            probe: points.first().map(|p| p.probe.clone()).unwrap_or_default(),
            load: points.first().map(|p| p.load.clone()).unwrap_or_default(),
            shown,
            by,
            series,
            kernels: kernel_rows(&run_points),
            points: run_points,
            marks,
        }
    }
}

/// One row per kernel of `points`, in the order each first appears.
fn kernel_rows(points: &[RunPoint]) -> Vec<KernelRow> {
    let mut kernels: Vec<(String, Vec<f64>)> = Vec::new();
    for p in points {
        match kernels.iter_mut().find(|(k, _)| *k == p.kernel) {
            Some((_, values)) => values.push(p.value),
            None => kernels.push((p.kernel.clone(), vec![p.value])),
        }
    }
    kernels
        .into_iter()
        .map(|(kernel, mut values)| {
            values.sort_by(f64::total_cmp);
            let n = values.len();
            KernelRow {
                kernel,
                runs: n,
                median: (values[(n - 1) / 2] + values[n / 2]) / 2.0,
                min: values[0],
                max: values[n - 1],
            }
        })
        .collect()
}

/// The annotations that cut a series of `points` (named for it, or for
/// every series of its machine) from a run started within their span.
fn marks_of(points: &[Point], annotations: &[Annotation], runs: &[RunSummary]) -> Vec<Mark> {
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        return Vec::new();
    };
    let cuts = |a: &Annotation| {
        points.iter().any(|p| match &a.series {
            Some(series) => *series == p.series,
            None => a.machine == p.machine,
        })
    };
    annotations
        .iter()
        .filter(|a| cuts(a))
        .filter_map(|a| {
            let run = runs.iter().find(|r| r.run_key == a.run_key)?;
            (first.started_unix..=last.started_unix)
                .contains(&run.started_unix)
                .then(|| Mark {
                    kind: MarkKind::Annotation,
                    run_key: run.run_key.clone(),
                    started_unix: run.started_unix,
                    kernel: run.kernel_release.clone(),
                    note: a.note.clone(),
                })
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests;
