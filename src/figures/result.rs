//! What a probe hands back for one measurement: its tally, the figures its
//! sheet derives from it, and the same tally for each sub-window of the
//! measurement (the raw material of batch-means intervals).

use super::late::LateCauses;
use super::series::LatencySeries;
use super::sheet::{FigureDef, ProbeSheet, Spread};
use super::tally::{Tally, TallyError};
use super::Evaluator;
use crate::measure::sched::SchedApplied;
use crate::stats::batch_means::MIN_BATCHES;
use crate::system::telemetry::ProcessUsage;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The count every tally keeps: seconds measured (a sub-window's length
/// for a sub-window).
pub const MEASURED_S: &str = "measured_s";

/// What a probe measured, before its sheet derives the figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// The whole measurement.
    pub tally: Tally,
    /// Each equal sub-window of it, in time order.
    pub batches: Vec<Tally>,
    /// Its latency over time, for probes that keep one.
    pub series: Option<LatencySeries>,
    /// What it could not measure and why, one sentence each (an operation
    /// left out: `udp: no loopback`); its figures are missing.
    pub left_out: Vec<String>,
    /// Why its events were late, for probes that split them.
    pub late: Option<LateCauses>,
}

impl Measured {
    /// A measurement's tally and its sub-windows' (`batches`), with no
    /// series and nothing left out.
    pub fn of(tally: Tally, batches: Vec<Tally>) -> Self {
        Self {
            tally,
            batches,
            series: None,
            left_out: Vec::new(),
            late: None,
        }
    }
}

/// Everything a probe measured in one scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeResult {
    /// Figures by field name (`latency_p99_us`, ...), derived from `tally`
    /// by the probe's sheet; the values every table shows.
    pub figures: BTreeMap<String, f64>,
    pub tally: Tally,
    /// Scheduling settings in force in the probe.
    pub sched: SchedApplied,
    /// What the probe's process used over its life.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<ProcessUsage>,
    /// The tally of each of a few equal sub-windows of the measurement, in
    /// time order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub batches: Vec<Tally>,
    /// Its latency over time, for probes that keep one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<LatencySeries>,
    /// What it could not measure and why (see [`Measured::left_out`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
    /// Why its events were late, for probes that split them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late: Option<LateCauses>,
}

impl ProbeResult {
    /// The result of `tally` and its sub-windows' `batches`, with the
    /// figures `sheet` derives.
    pub fn new(sheet: &ProbeSheet, tally: Tally, batches: Vec<Tally>, sched: SchedApplied) -> Self {
        Self {
            figures: sheet.evaluate(&tally),
            tally,
            sched,
            usage: None,
            batches,
            series: None,
            left_out: Vec::new(),
            late: None,
        }
    }

    /// The result of what a probe `measured` (its tallies and series), with
    /// the figures `sheet` derives.
    pub fn of_measured(sheet: &ProbeSheet, measured: Measured, sched: SchedApplied) -> Self {
        Self {
            series: measured.series,
            left_out: measured.left_out,
            late: measured.late,
            ..Self::new(sheet, measured.tally, measured.batches, sched)
        }
    }

    /// The merge of `results` (at least one), whose schedulings must agree:
    /// tallies added, figures derived again, what any left out, why events
    /// were late (when every result says), no sub-windows, no usage and no
    /// series (each repeat keeps its own).
    pub fn merged(sheet: &ProbeSheet, results: &[&ProbeResult]) -> Result<Self, TallyError> {
        let tally = Tally::merge(results.iter().map(|r| &r.tally))?;
        let sched = SchedApplied {
            memory_locked: results.iter().all(|r| r.sched.memory_locked),
            ..results[0].sched.clone()
        };
        let mut left_out: Vec<String> = Vec::new();
        for reason in results.iter().flat_map(|r| &r.left_out) {
            if !left_out.contains(reason) {
                left_out.push(reason.clone());
            }
        }
        let lates: Option<Vec<&LateCauses>> = results.iter().map(|r| r.late.as_ref()).collect();
        let late = match lates {
            Some(lates) if !lates.is_empty() => Some(LateCauses::merged(&lates)?),
            _ => None,
        };
        Ok(Self {
            left_out,
            late,
            ..Self::new(sheet, tally, Vec::new(), sched)
        })
    }

    /// Seconds measured.
    pub fn measured_s(&self) -> f64 {
        self.tally.count(MEASURED_S)
    }

    /// The value of `figure`, when the result has it.
    pub fn figure(&self, figure: &FigureDef) -> Option<f64> {
        self.figures.get(figure.field.as_str()).copied()
    }

    /// The figure's value in each sub-window (or group of sub-windows, see
    /// [`Spread`]), in time order, leaving out those without one; empty when
    /// the figure is not estimated from sub-windows or there are too few.
    pub fn batch_values(&self, figure: &FigureDef) -> Vec<f64> {
        if self.figure(figure).is_none() {
            return Vec::new();
        }
        match figure.spread {
            Spread::RepeatsOnly => Vec::new(),
            Spread::SubWindows => self
                .batches
                .iter()
                .filter_map(|b| Evaluator::new(b).value(&figure.formula))
                .collect(),
            Spread::SubWindowGroups { min_samples } => {
                grouped(&self.batches, figure, min_samples).unwrap_or_default()
            }
        }
    }
}

/// The figure over consecutive groups of sub-windows holding at least
/// `min_samples` samples each (a short last group joins the one before);
/// `None` when a histogram is damaged or there are fewer groups than batch
/// means need.
fn grouped(batches: &[Tally], figure: &FigureDef, min_samples: u64) -> Option<Vec<f64>> {
    let samples = |t: &Tally| Evaluator::new(t).samples_of(&figure.formula).unwrap_or(0);
    let mut groups: Vec<Vec<&Tally>> = Vec::new();
    let mut current: Vec<&Tally> = Vec::new();
    let mut in_current = 0;
    for batch in batches.iter().filter(|b| samples(b) > 0) {
        current.push(batch);
        in_current += samples(batch);
        if in_current >= min_samples {
            groups.push(std::mem::take(&mut current));
            in_current = 0;
        }
    }
    if !current.is_empty() {
        groups.last_mut()?.extend(current);
    }
    if groups.len() < MIN_BATCHES {
        return None;
    }
    groups
        .iter()
        .map(|group| {
            let merged = Tally::merge(group.iter().copied()).ok()?;
            Evaluator::new(&merged).value(&figure.formula)
        })
        .collect()
}
