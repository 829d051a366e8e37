//! What a probe measures, as data: the raw material a measurement keeps
//! ([`Tally`]: sample distributions, counts, maxima, which merge by
//! adding), the figures derived from it ([`FigureDef`]: a key, a unit,
//! which way is better, a [`Formula`] over the tally, how its uncertainty is
//! estimated) and how a probe's table looks ([`ProbeSheet`]). Every
//! renderer, merge and comparison works from these declarations, so a probe
//! with figures of its own declares them once, in its own file.
//!
//! This module is pure: it measures nothing and renders nothing.

pub mod explain;
mod formula;
pub mod frame_pacing;
pub mod late;
pub mod late_context;
pub mod result;
pub mod series;
mod sheet;
mod tally;

pub use formula::{Evaluator, Formula};
pub use late::LateCauses;
pub use result::{Measured, ProbeResult};
pub use series::LatencySeries;
pub use sheet::{
    latency_figures, Column, ColumnSource, FigureDef, Notice, Noticeable, OverviewRole, ProbeSheet,
    Spread, P99_MIN_SAMPLES,
};
pub use tally::{Samples, Tally, TallyError};

use serde::{Deserialize, Serialize};

/// Which way a figure improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    Lower,
    Higher,
}

/// How a change of a figure is expressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeUnit {
    /// Relative change in % (latencies, rates).
    Percent,
    /// Difference in percentage points (figures that are themselves %).
    Points,
}

/// The unit a figure is stored in, and how it is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// A duration stored in µs, shown in ms with three decimals.
    Micros,
    /// A short duration (a micro-operation's latency) stored in µs and
    /// shown in µs with one decimal.
    ShortMicros,
    /// A long duration (a job's time) stored in µs like every duration,
    /// shown in s with two decimals.
    Seconds,
    /// A share in %, shown with one decimal.
    Percent,
    /// Frames per second, shown with one decimal.
    Fps,
    /// Work per second, shown with three significant digits or more.
    Rate,
    /// A whole number of things.
    Count,
    /// A plain ratio (1.0 = as expected), shown with three decimals.
    Ratio,
}

impl Unit {
    /// `value` (in the stored unit) in the unit it is shown in: µs as ms,
    /// seconds stored in µs as s, the others as they are.
    pub fn shown(self, value: f64) -> f64 {
        match self {
            Unit::Micros => value / 1e3,
            Unit::Seconds => value / 1e6,
            _ => value,
        }
    }

    /// `value` (in the stored unit) as shown, without the unit.
    pub fn show(self, value: f64) -> String {
        match self {
            Unit::Micros => format!("{:.3}", self.shown(value)),
            Unit::Seconds => format!("{:.2}", self.shown(value)),
            Unit::Percent | Unit::Fps | Unit::ShortMicros => format!("{value:.1}"),
            Unit::Rate => rate(value),
            Unit::Count => format!("{value:.0}"),
            Unit::Ratio => format!("{value:.3}"),
        }
    }

    /// The smallest step between two values near `value` as shown: 1 µs
    /// for a latency shown in ms with three decimals, 0.1 for a share shown
    /// with one decimal, and, for a rate shown with three significant
    /// digits or more, a step that grows with the value.
    pub fn step_at(self, value: f64) -> f64 {
        match self {
            Unit::Micros => 1.0,
            Unit::Seconds => 10_000.0,
            Unit::Percent | Unit::Fps | Unit::ShortMicros => 0.1,
            Unit::Rate => 10f64.powi(-(rate_decimals(value) as i32)),
            Unit::Count => 1.0,
            Unit::Ratio => 0.001,
        }
    }

    /// The unit's symbol as shown after a value (` ms`, ` %`, ...).
    pub fn suffix(self) -> &'static str {
        match self {
            Unit::Micros => " ms",
            Unit::ShortMicros => " µs",
            Unit::Seconds => " s",
            Unit::Percent => " %",
            Unit::Fps => " FPS",
            Unit::Rate => "/s",
            Unit::Count | Unit::Ratio => "",
        }
    }
}

/// A rate with three significant digits or more.
pub fn rate(value: f64) -> String {
    format!("{value:.*}", rate_decimals(value))
}

/// The decimals a rate of `value` is shown with.
fn rate_decimals(value: f64) -> usize {
    match value.abs() {
        v if v >= 100.0 => 0,
        v if v >= 10.0 => 1,
        _ => 2,
    }
}
