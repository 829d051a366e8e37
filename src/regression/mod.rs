//! Regressions across the store: every series of a figure (one machine,
//! settings and suite; one probe, load and figure), in run order, cut
//! where an annotation says something changed or the method versions of
//! its runs change (`method`), is divided where its level
//! changes (E-Divisive means, each division's largest t calibrated by
//! permutation, `stats::changepoint`). Every division tried in every series
//! is one test: Benjamini–Hochberg q-values over all of them keep the false
//! discoveries near the rate asked (measured, not proven: the README gives
//! the rates), and a change is reported only when it is also at least a
//! minimum effect and larger than the step its figure is shown with. The
//! effect is relative to the level before for a figure measured on a
//! positive scale (a latency, a rate), and absolute, in the figure's unit,
//! where a ratio means nothing: a level of 0 before, or a figure that takes
//! values of 0 or below (slack, a performance index, a share that is often
//! 0). Which way is worse comes from the figure's declared direction.

pub mod method;
pub mod render;

use crate::figures::{Better, Unit};
use crate::stats::changepoint::{change_points, ChangePoint, Search};
use crate::stats::fdr::benjamini_hochberg;
use crate::store::query::Point;
use serde::Serialize;
use std::collections::BTreeMap;

/// Fewest runs on each side of a change.
pub const MIN_SEGMENT: usize = 3;

/// The p-value a division must have for E-Divisive to keep it and divide
/// its two sides again: on long series a looser limit keeps dividing into
/// short segments, each division one more test. Benjamini–Hochberg then
/// judges the divisions kept against every division tried.
pub const DIVISION_P: f64 = 0.001;

/// How changes are judged.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Smallest change worth reporting, in % of the level before.
    pub min_effect_pct: f64,
    /// The false discovery rate over all the tests (Benjamini–Hochberg).
    pub fdr: f64,
    /// How the `compare` command that checks a change names the store
    /// (`--store ...`), when it is not the default one.
    pub store_option: Option<String>,
    /// The points are one series per probe, load and figure, whatever
    /// their machine, settings and suite (`--any-series`); an annotation
    /// still cuts where one of its points is of the series it names.
    pub any_series: bool,
}

/// The series every change is in with [`Settings::any_series`].
pub const ANY_SERIES: &str = "any";

/// Where an annotation cuts: a series (or every series of a machine) from
/// a run on.
#[derive(Debug, Clone, PartialEq)]
pub struct Cut {
    /// The series cut; `None` for every series of `machine`.
    pub series: Option<String>,
    pub machine: String,
    /// The run from which the annotation holds, and when it started.
    pub run_key: String,
    pub started_unix: i64,
}

impl Cut {
    /// Whether the cut holds for the series of `point`.
    fn applies_to(&self, point: &Point) -> bool {
        match &self.series {
            Some(cut) => *cut == point.series,
            None => self.machine == point.machine,
        }
    }
}

/// A run as a change names it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRef {
    pub run_key: String,
    pub run_id: String,
    pub kernel_release: String,
    pub started: String,
}

impl RunRef {
    fn of(point: &Point) -> Self {
        Self {
            run_key: point.run_key.clone(),
            run_id: point.run_id.clone(),
            kernel_release: point.kernel_release.clone(),
            started: point.started.clone(),
        }
    }
}

/// A change of level found in a series and kept.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub series: String,
    pub machine: String,
    pub probe: String,
    pub load: String,
    pub figure: String,
    /// The unit as the run document names it.
    pub unit: String,
    /// `lower` or `higher`: which way is better.
    pub better: String,
    /// The change goes the way that is worse: a regression.
    pub worse: bool,
    /// The first run at the new level, and the last one before it.
    pub first_after: RunRef,
    pub last_before: RunRef,
    /// Means of the segments on either side (bounded by the neighbouring
    /// changes and cuts), in the stored unit.
    pub before: f64,
    pub after: f64,
    /// `after - before`, in the stored unit.
    pub difference: f64,
    /// `(after - before) / before` in %, for a figure on a positive scale;
    /// `None` where a ratio means nothing (see [`Effect`]).
    pub change_pct: Option<f64>,
    /// How many runs each segment holds.
    pub runs_before: usize,
    pub runs_after: usize,
    /// The calibrated p-value of the division that found it, and its
    /// Benjamini–Hochberg q-value over every test made.
    pub p: f64,
    pub q: f64,
    /// The command that checks the change again.
    pub check: String,
}

/// What `regressions` found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Analysis {
    /// Series of a figure looked at.
    pub series: usize,
    /// Parts they make once annotations and changes of method cut them.
    pub parts: usize,
    /// Cuts made where the method versions of a series' runs changed.
    pub method_cuts: usize,
    /// Divisions tested (the `m` of Benjamini–Hochberg).
    pub tests: usize,
    /// Changes significant after correction but smaller than the minimum
    /// effect or the figure's step.
    pub too_small: usize,
    pub min_effect_pct: f64,
    pub fdr: f64,
    /// Changes kept, regressions first, then by q-value.
    pub changes: Vec<Change>,
}

impl Analysis {
    /// The changes that go the worse way.
    pub fn regressions(&self) -> impl Iterator<Item = &Change> {
        self.changes.iter().filter(|c| c.worse)
    }
}

/// A series of one figure: what groups points.
type SeriesOf<'a> = (&'a str, &'a str, &'a str, &'a str);

/// The points of each series of a figure (its method versions aside;
/// every series one when `any`), in run order.
fn series_of(points: &[Point], any: bool) -> BTreeMap<SeriesOf<'_>, Vec<&Point>> {
    let mut groups: BTreeMap<SeriesOf, Vec<&Point>> = BTreeMap::new();
    for p in points {
        let series = match any {
            true => ANY_SERIES,
            false => method::series_of(p),
        };
        groups
            .entry((series, &p.probe, &p.load, &p.figure))
            .or_default()
            .push(p);
    }
    for group in groups.values_mut() {
        group.sort_by(|a, b| (a.started_unix, &a.run_key).cmp(&(b.started_unix, &b.run_key)));
    }
    groups
}

/// `points` cut into parts where a cut of `cuts` applies to them (to one
/// of them, when they mix series) and where their method versions change.
fn parts<'p, 'a>(points: &'p [&'a Point], cuts: &[Cut]) -> Vec<&'p [&'a Point]> {
    if points.is_empty() {
        return Vec::new();
    }
    let mut at: Vec<usize> = cuts
        .iter()
        .filter(|c| points.iter().any(|p| c.applies_to(p)))
        .map(|c| {
            points.partition_point(|p| {
                (p.started_unix, p.run_key.as_str()) < (c.started_unix, c.run_key.as_str())
            })
        })
        .filter(|&i| i > 0 && i < points.len())
        .collect();
    at.extend(method::changes(points));
    at.sort_unstable();
    at.dedup();
    let mut parts = Vec::new();
    let mut start = 0;
    for end in at.into_iter().chain(std::iter::once(points.len())) {
        parts.push(&points[start..end]);
        start = end;
    }
    parts
}

/// A change found in a part, before correction.
struct Candidate<'a> {
    part: &'a [&'a Point],
    found: ChangePoint,
    segment: (usize, usize),
}

/// Looks for changes in every series of `points`, cut by `cuts`.
pub fn analyse(points: &[Point], cuts: &[Cut], settings: &Settings) -> Analysis {
    let groups = series_of(points, settings.any_series);
    let search = Search {
        min_segment: MIN_SEGMENT,
        // A division above the rate can never be a discovery after
        // Benjamini–Hochberg.
        max_p: DIVISION_P.min(settings.fdr),
    };
    let mut candidates = Vec::new();
    let mut rejected = Vec::new();
    let all_parts: Vec<&[&Point]> = groups.values().flat_map(|g| parts(g, cuts)).collect();
    for part in &all_parts {
        let values: Vec<f64> = part.iter().map(|p| p.value).collect();
        let division = change_points(&values, search);
        rejected.extend(division.rejected);
        let mut bounds = vec![0];
        bounds.extend(division.changes.iter().map(|c| c.index));
        bounds.push(values.len());
        for (i, found) in division.changes.into_iter().enumerate() {
            candidates.push(Candidate {
                part,
                found,
                segment: (bounds[i + 1] - bounds[i], bounds[i + 2] - bounds[i + 1]),
            });
        }
    }
    let p_values: Vec<f64> = candidates
        .iter()
        .map(|c| c.found.p)
        .chain(rejected.iter().copied())
        .collect();
    let q = benjamini_hochberg(&p_values);
    let significant: Vec<(Candidate, f64)> = candidates
        .into_iter()
        .zip(q)
        .filter(|(_, q)| *q <= settings.fdr)
        .collect();
    let total = significant.len();
    let mut changes: Vec<Change> = significant
        .into_iter()
        .filter(|(c, _)| large_enough(c, settings.min_effect_pct))
        .map(|(c, q)| change_of(&c, q, settings))
        .collect();
    changes.sort_by(|a, b| b.worse.cmp(&a.worse).then(a.q.total_cmp(&b.q)));
    Analysis {
        series: groups.len(),
        parts: all_parts.len(),
        method_cuts: groups.values().map(|g| method::changes(g).len()).sum(),
        tests: p_values.len(),
        too_small: total - changes.len(),
        min_effect_pct: settings.min_effect_pct,
        fdr: settings.fdr,
        changes,
    }
}

/// The figure's unit, as the store names it.
fn unit_of(name: &str) -> Option<Unit> {
    serde_json::from_value(serde_json::Value::String(name.to_string())).ok()
}

/// How large a change must be to matter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Effect {
    /// At least this % of the level before: the figure's values in the
    /// part are all above 0, so a ratio means something.
    Relative(f64),
    /// At least this much in the figure's stored unit: a ratio would divide
    /// by 0 or by a level whose sign or zero is arbitrary.
    Absolute(f64),
}

impl Effect {
    /// The effect that decides for a part of `values` (of `unit`), with
    /// `min_effect_pct` the relative minimum: relative when every value is
    /// above 0; else the same share of the figure's scale, in its unit —
    /// of 100 for a share in % (so 5 % reads as 5 percentage points), of 1
    /// for a ratio (1 = as expected), of the part's mean magnitude for
    /// anything else (a slack in µs).
    pub fn of(values: &[f64], unit: Option<Unit>, min_effect_pct: f64) -> Self {
        if values.iter().all(|v| *v > 0.0) {
            return Effect::Relative(min_effect_pct);
        }
        let scale = match unit {
            Some(Unit::Percent) => 100.0,
            Some(Unit::Ratio) => 1.0,
            _ => values.iter().map(|v| v.abs()).sum::<f64>() / values.len().max(1) as f64,
        };
        Effect::Absolute(scale * min_effect_pct / 100.0)
    }

    /// Whether going from `before` to `after` is at least this effect.
    pub fn reached(self, before: f64, after: f64) -> bool {
        let difference = (after - before).abs();
        match self {
            Effect::Relative(pct) => difference >= before.abs() * pct / 100.0,
            Effect::Absolute(least) => difference >= least,
        }
    }
}

/// The values of a candidate's part.
fn values_of(candidate: &Candidate) -> Vec<f64> {
    candidate.part.iter().map(|p| p.value).collect()
}

/// Whether the change is at least the minimum effect (see [`Effect`]) and
/// more than the step its figure is shown with.
fn large_enough(candidate: &Candidate, min_effect_pct: f64) -> bool {
    let ChangePoint { before, after, .. } = candidate.found;
    let unit = unit_of(&candidate.part[0].unit);
    let effect = Effect::of(&values_of(candidate), unit, min_effect_pct);
    let step = unit.map_or(0.0, |u| u.step_at(before.abs().max(after.abs())));
    effect.reached(before, after) && (after - before).abs() > step
}

/// The change `candidate` describes, with its q-value.
fn change_of(candidate: &Candidate, q: f64, settings: &Settings) -> Change {
    let first = candidate.part[candidate.found.index];
    let previous = candidate.part[candidate.found.index - 1];
    let ChangePoint {
        before, after, p, ..
    } = candidate.found;
    let better: Option<Better> =
        serde_json::from_value(serde_json::Value::String(first.better.clone())).ok();
    let worse = match better {
        Some(Better::Higher) => after < before,
        _ => after > before,
    };
    let store = settings
        .store_option
        .as_ref()
        .map(|s| format!(" --store {}", shell_word(s)))
        .unwrap_or_default();
    Change {
        series: match settings.any_series {
            true => ANY_SERIES.to_string(),
            false => first.series.clone(),
        },
        machine: first.machine.clone(),
        probe: first.probe.clone(),
        load: first.load.clone(),
        figure: first.figure.clone(),
        unit: first.unit.clone(),
        better: first.better.clone(),
        worse,
        first_after: RunRef::of(first),
        last_before: RunRef::of(previous),
        before,
        after,
        difference: after - before,
        change_pct: match Effect::of(&values_of(candidate), unit_of(&first.unit), 0.0) {
            Effect::Relative(_) => Some((after - before) / before * 100.0),
            Effect::Absolute(_) => None,
        },
        runs_before: candidate.segment.0,
        runs_after: candidate.segment.1,
        p,
        q,
        check: format!(
            "feelbench compare {} {} --figure {}{store}",
            shell_word(&previous.run_key),
            shell_word(&first.run_key),
            shell_word(&first.figure)
        ),
    }
}

/// `text` as one shell word.
fn shell_word(text: &str) -> String {
    shell_words::quote(text).into_owned()
}

#[cfg(test)]
mod tests;
