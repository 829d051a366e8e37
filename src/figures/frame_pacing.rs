//! The frame-pacing figures players and scheduler authors compare, over a
//! tally of frame times (the time from one frame's presentation to the
//! next): average FPS, the 1 % low by both of its definitions, the 0.1 %
//! low, stutters per 1 000 frames, the share of frames that missed their
//! refresh and the frame time's SD. Shared by the `game` probe and by the
//! frame logs of real games read into a run (MangoHud's, PresentMon's), so
//! both are scored alike and merge by adding their tallies.
//!
//! The two 1 % lows differ, and are labelled apart: the FPS of the 99th
//! percentile of frame time (scx_lavd's "low-1 % FPS", CapFrameX's P1),
//! and the mean FPS of the slowest 1 % of frames (MangoHud's "1% Min
//! FPS": its summary averages the FPS of the ⌈n/100⌉ slowest frames). The
//! 0.1 % lows follow each.

use super::sheet::{Column, FigureDef, Spread, P99_MIN_SAMPLES};
use super::{Better, Formula, Unit};

/// The distribution of frame times.
pub const FRAME_TIME: &str = "frame_time";
/// How many frames were presented.
pub const FRAMES: &str = "frames";
/// How many frames were stutters by CapFrameX's rule
/// (`measure::stutter`).
pub const STUTTERS: &str = "stutters";
/// How many frames were not ready for the refresh they were meant for;
/// absent where the refresh rate is not known (a log).
pub const MISSED: &str = "missed_refresh";

/// Frames a 0.1 % low needs in each group of sub-windows to be more than
/// a maximum.
const P999_MIN_SAMPLES: u64 = 1_000;

/// The frame-pacing figures over [`FRAME_TIME`], [`FRAMES`],
/// [`STUTTERS`] and [`MISSED`].
pub fn pacing_figures() -> Vec<FigureDef> {
    let samples = || FRAME_TIME.to_string();
    let fps = |key: &str, field: &str, label: &str, formula: Formula| {
        FigureDef::new(key, field, label, Unit::Fps, Better::Higher, formula)
    };
    let slowest = |fraction: f64| Formula::SlowestMeanRate {
        samples: samples(),
        fraction,
        scale: 1e9,
    };
    let quantile = |q: f64| Formula::InverseQuantile {
        samples: samples(),
        q,
        scale: 1e9,
    };
    let per_frame = |count: &str, scale: f64| Formula::Ratio {
        num: count.to_string(),
        den: FRAMES.to_string(),
        scale,
    };
    let groups = |min_samples| Spread::SubWindowGroups { min_samples };
    vec![
        fps(
            "fps",
            "fps",
            "average FPS (frames over their time)",
            Formula::InverseMean {
                samples: samples(),
                scale: 1e9,
            },
        )
        .spread(Spread::SubWindows)
        .headline()
        .compared(),
        fps(
            "fps_frame_mean",
            "fps_frame_mean",
            "mean of each frame's FPS (MangoHud's average FPS)",
            slowest(1.0),
        )
        .spread(Spread::SubWindows),
        fps(
            "low1_p99",
            "low_1pct_p99_fps",
            "1 % low FPS, p99 frame time",
            quantile(0.99),
        )
        .spread(groups(P99_MIN_SAMPLES))
        .compared(),
        fps(
            "low1_mean",
            "low_1pct_mean_fps",
            "1 % low FPS, mean of the slowest 1 % (MangoHud's)",
            slowest(0.01),
        )
        .spread(groups(P99_MIN_SAMPLES))
        .compared(),
        fps(
            "low01_p999",
            "low_01pct_p999_fps",
            "0.1 % low FPS, p99.9 frame time",
            quantile(0.999),
        )
        .spread(groups(P999_MIN_SAMPLES)),
        fps(
            "low01_mean",
            "low_01pct_mean_fps",
            "0.1 % low FPS, mean of the slowest 0.1 % (MangoHud's)",
            slowest(0.001),
        )
        .spread(groups(P999_MIN_SAMPLES)),
        FigureDef::new(
            "stutters",
            "stutters_per_1k",
            "stutters per 1 000 frames (CapFrameX: over 2.5× the moving average)",
            Unit::Rate,
            Better::Lower,
            per_frame(STUTTERS, 1_000.0),
        )
        .spread(Spread::SubWindows)
        .compared(),
        FigureDef::new(
            "missed",
            "missed_refresh_pct",
            "% of frames that missed their refresh",
            Unit::Percent,
            Better::Lower,
            per_frame(MISSED, 100.0),
        )
        .at_most(100.0)
        .spread(Spread::SubWindows)
        .compared(),
        FigureDef::new(
            "frame_sd",
            "frame_time_sd_us",
            "frame time SD (ms)",
            Unit::Micros,
            Better::Lower,
            Formula::Sd { samples: samples() },
        )
        .spread(Spread::SubWindows),
    ]
}

/// The first columns of a table of frame pacing: average FPS, both 1 %
/// lows, the 0.1 % low (mean of the slowest), stutters, missed refreshes.
pub fn pacing_columns() -> Vec<Column> {
    vec![
        Column::new("FPS", &["fps"], 8),
        Column::new("1% low p99", &["low1_p99"], 11),
        Column::new("1% low avg", &["low1_mean"], 11),
        Column::new("0.1% low avg", &["low01_mean"], 13),
        Column::new("Stutter/1k", &["stutters"], 11),
        Column::new("Missed %", &["missed"], 9),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::{ProbeSheet, Tally};
    use crate::measure::latency::LatencyHistogram;
    use crate::measure::stutter::count_stutters;

    const MS: u64 = 1_000_000;

    /// A scripted log: 1 000 frames of 10 ms but for 10 of 50 ms, one in
    /// every hundred; each 50 ms frame missed a 100 Hz refresh and is a
    /// stutter.
    fn scripted() -> (Tally, ProbeSheet) {
        let frames: Vec<u64> = (0..1_000)
            .map(|k| if k % 100 == 50 { 50 * MS } else { 10 * MS })
            .collect();
        let mut h = LatencyHistogram::new();
        frames.iter().for_each(|&ns| h.record_ns(ns));
        let missed = frames.iter().filter(|&&ns| ns > 10 * MS).count();
        let tally = Tally::default()
            .with_samples(FRAME_TIME, &h, frames.iter().sum())
            .with_count(FRAMES, frames.len() as f64)
            .with_count(STUTTERS, count_stutters(&frames) as f64)
            .with_count(MISSED, missed as f64);
        let sheet = ProbeSheet {
            figures: pacing_figures(),
            ..ProbeSheet::default()
        };
        (tally, sheet)
    }

    #[test]
    fn the_figures_of_a_scripted_log() {
        let (tally, sheet) = scripted();
        let f = sheet.evaluate(&tally);
        // 1 000 frames in 10.4 s.
        assert!((f["fps"] - 1_000.0 / 10.4).abs() < 1e-9);
        // (990 · 100 + 10 · 20) / 1 000 frames/s.
        assert!((f["fps_frame_mean"] - 99.2).abs() < 0.05, "{f:?}");
        // The slowest 1 % are the ten 50 ms frames; the p99 is the 990th
        // frame, still a 10 ms one.
        assert!((f["low_1pct_p99_fps"] - 100.0).abs() < 0.1, "{f:?}");
        assert!((f["low_1pct_mean_fps"] - 20.0).abs() < 0.02, "{f:?}");
        assert!((f["low_01pct_mean_fps"] - 20.0).abs() < 0.02, "{f:?}");
        assert_eq!(f["stutters_per_1k"], 10.0);
        assert_eq!(f["missed_refresh_pct"], 1.0);
        // SD of 990 × 10 and 10 × 50 ms: √(0.99 · 0.01) · 40 ms ≈ 3.98 ms.
        assert!((f["frame_time_sd_us"] - 3_980.0).abs() < 10.0, "{f:?}");
    }

    /// 1 000 frames of 10 ms but for ten of 30 to 120 ms: the p99 is the
    /// 990th frame, a 10 ms one, while the mean of the slowest ten counts
    /// the ten slow ones: the two definitions part.
    #[test]
    fn the_two_one_percent_lows_differ_when_the_slowest_frames_do() {
        let mut h = LatencyHistogram::new();
        (0..990).for_each(|_| h.record_ns(10 * MS));
        (1..=10).for_each(|k| h.record_ns((20 + 10 * k) * MS));
        let tally = Tally::default()
            .with_samples(FRAME_TIME, &h, 0)
            .with_count(FRAMES, 1_000.0);
        let f = ProbeSheet {
            figures: pacing_figures(),
            ..ProbeSheet::default()
        }
        .evaluate(&tally);
        assert!((f["low_1pct_p99_fps"] - 100.0).abs() < 0.1, "{f:?}");
        let mean: f64 = (1..=10).map(|k| 1e3 / (20 + 10 * k) as f64).sum::<f64>() / 10.0;
        assert!((f["low_1pct_mean_fps"] - mean).abs() < 0.05, "{f:?}");
        assert!(!f.contains_key("fps"), "no time, no average: {f:?}");
        assert!(!f.contains_key("missed_refresh_pct"), "never counted");
    }
}
