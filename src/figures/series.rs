//! Latency over time: a bounded series of a probe's latencies in the order
//! they happened, kept in the run document so a run can be drawn after the
//! fact (latencytest's picture). Every sample is a point of its own up to a
//! cap; past it, neighbouring samples are merged into intervals (their
//! minimum, mean and maximum), so a 30-minute run stays small.

use serde::{Deserialize, Serialize};

/// A probe's latencies over one measurement.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySeries {
    /// The latency the task would have with nothing in its way (µs), drawn
    /// beside the series (e.g. the time one audio fragment plays); `None`
    /// when that is zero.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ideal_us: Option<f64>,
    /// The points, in time order.
    pub points: Vec<SeriesPoint>,
}

/// One sample, or the samples of one interval once the series was merged.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SeriesPoint {
    /// When the (first) sample was taken, in seconds from the window's start.
    pub t_s: f64,
    /// Samples merged into this point (1: a single sample).
    pub count: u64,
    /// Their smallest latency, µs.
    pub min_us: f64,
    /// Their mean latency, µs.
    pub mean_us: f64,
    /// Their largest latency, µs.
    pub max_us: f64,
}
