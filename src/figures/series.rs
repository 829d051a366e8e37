//! Latency over time: a bounded series of a probe's latencies in the order
//! they happened, kept in the run document so a run can be drawn after the
//! fact (latencytest's picture). Every sample is a point of its own up to a
//! cap; past it, neighbouring samples are merged into intervals (their
//! minimum, mean and maximum), so a 30-minute run stays small.

use crate::measure::series::SeriesRecorder;
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

impl LatencySeries {
    /// The points `recorder` holds, drawn beside `ideal_us`. Times are
    /// rounded to the microsecond and latencies to the nanosecond, which
    /// keeps the numbers short in the document.
    pub fn of(recorder: &SeriesRecorder, ideal_us: Option<f64>) -> Self {
        let us = |ns: u64| ns as f64 / 1e3;
        let points = recorder
            .points()
            .iter()
            .map(|b| SeriesPoint {
                t_s: (b.offset_ns / 1_000) as f64 / 1e6,
                count: b.count,
                min_us: us(b.min_ns),
                mean_us: (b.sum_ns as f64 / b.count as f64).round() / 1e3,
                max_us: us(b.max_ns),
            })
            .collect();
        Self { ideal_us, points }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_are_the_recorders_in_microseconds_and_seconds() {
        let mut recorder = SeriesRecorder::with_points(2);
        recorder.record(1_000_000, 1_500);
        recorder.record(2_000_400, 2_000);
        recorder.record(3_000_000, 2_001);
        let series = LatencySeries::of(&recorder, Some(5_805.0));
        assert_eq!(series.ideal_us, Some(5_805.0));
        assert_eq!(
            series.points,
            vec![
                SeriesPoint {
                    t_s: 0.001,
                    count: 2,
                    min_us: 1.5,
                    mean_us: 1.75,
                    max_us: 2.0,
                },
                SeriesPoint {
                    t_s: 0.003,
                    count: 1,
                    min_us: 2.001,
                    mean_us: 2.001,
                    max_us: 2.001,
                },
            ]
        );
    }
}
