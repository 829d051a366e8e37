//! A figure of a scenario as tables and comparisons see it: one of its
//! probe's declared figures, or the rate of one part of its load.

use super::schema::{Measurement, ScenarioStatus};
use crate::figures::{Better, ChangeUnit, FigureDef, ProbeSheet, Unit};

/// One figure of a scenario.
#[derive(Debug, Clone, PartialEq)]
pub enum Figure {
    /// A figure the probe declares.
    Probe(FigureDef),
    /// The work rate of the load part named.
    Work(String),
}

/// The key `--figure` uses for every part of the load.
pub const WORK: &str = "work";

impl Figure {
    /// The figures of `key` that `measurement` has (`work`: one per load
    /// part), as `sheet` declares them.
    pub fn of_key(key: &str, measurement: &Measurement, sheet: &ProbeSheet) -> Vec<Figure> {
        if key == WORK {
            return measurement
                .load_work
                .iter()
                .map(|w| Figure::Work(w.load.clone()))
                .collect();
        }
        sheet
            .figure(key)
            .map(|def| Figure::Probe(def.clone()))
            .filter(|figure| figure.of(measurement).is_some())
            .into_iter()
            .collect()
    }

    /// The key the figure is chosen and stored by (`work:PART` for a load part).
    pub fn key(&self) -> String {
        match self {
            Figure::Probe(def) => def.key.clone(),
            Figure::Work(part) => format!("{WORK}:{part}"),
        }
    }

    /// A label with the unit values are shown in.
    pub fn label(&self) -> String {
        match self {
            Figure::Probe(def) => def.label.clone(),
            Figure::Work(part) => format!("{part} work /s"),
        }
    }

    /// The unit values are stored and shown in.
    pub fn unit(&self) -> Unit {
        match self {
            Figure::Probe(def) => def.unit,
            Figure::Work(_) => Unit::Rate,
        }
    }

    /// The smallest difference between values `a` and `b` worth a verdict:
    /// the step the larger of them is shown with, so that a difference
    /// called is one a reader sees in the values.
    pub fn min_effect_at(&self, a: f64, b: f64) -> f64 {
        self.unit().step_at(a.abs().max(b.abs()))
    }

    /// Which way the figure improves.
    pub fn better(&self) -> Better {
        match self {
            Figure::Probe(def) => def.better,
            Figure::Work(_) => Better::Higher,
        }
    }

    /// How its changes are expressed.
    pub fn change_unit(&self) -> ChangeUnit {
        match self {
            Figure::Probe(def) => def.change,
            Figure::Work(_) => ChangeUnit::Percent,
        }
    }

    /// `(low, high)` cut to the values the figure can take.
    pub fn within_range(&self, range: (f64, f64)) -> (f64, f64) {
        match self {
            Figure::Probe(def) => def.within_range(range),
            Figure::Work(_) => (range.0.max(0.0), range.1),
        }
    }

    /// The figure's value in a measurement, `None` when it has none (a
    /// failed measurement, a figure its probe does not have).
    pub fn of(&self, measurement: &Measurement) -> Option<f64> {
        if measurement.status != ScenarioStatus::Ok {
            return None;
        }
        match self {
            Figure::Work(part) => measurement
                .load_work
                .iter()
                .find(|w| &w.load == part)
                .map(|w| w.rate_per_s),
            Figure::Probe(def) => measurement.result.as_ref()?.figure(def),
        }
    }

    /// The figure's values in the sub-windows of `measurement`, in time
    /// order; empty when it is not estimated from sub-windows.
    pub fn batch_values(&self, measurement: &Measurement) -> Vec<f64> {
        match (self, &measurement.result) {
            (Figure::Probe(def), Some(result)) => result.batch_values(def),
            _ => Vec::new(),
        }
    }
}
