//! `gaming`: a CPU-bound game with an unlocked frame rate. Frames of fixed
//! CPU work (one 60 Hz frame's worth) run back to back; there are no
//! deadlines. Latency is the part of a frame's wall time in which it did not
//! run; the figures are frames per second and the 1 % low. A game of
//! unlocked frame rate drops no frame, so it has no count of dropped frames.
//!
//! Each frame is split into the causes of its delay (`late_split`): it is
//! due when the frame before it ended and wants [`FRAME_CPU_NS`] of CPU;
//! it is late by [`LATE_RULE`].

use super::frame_figures::{
    count_figure, cpu_figures, desired_column, latency_columns, CPU_RECEIVED_MS, CPU_USED_MS,
    CPU_WANTED_MS, CPU_WANTED_RUN_MS, EXECUTED, LATENCY,
};
use super::late_split::LateSplit;
use super::{MeasureError, Probe, ProbeDef};
use crate::figures::result::MEASURED_S;
use crate::figures::LateCauses;
use crate::figures::{
    latency_figures, Better, Column, FigureDef, Formula, LatencySeries, Measured, Noticeable,
    OverviewRole, ProbeSheet, Spread, Tally, Unit,
};
use crate::measure::batches::{batch_of, batch_seconds, BatchLatency, BATCHES};
use crate::measure::clock::sleep_until_ns;
use crate::measure::late::EventTimes;
use crate::measure::latency::LatencyHistogram;
use crate::measure::sched::MemoryPolicy;
use crate::measure::series::{SeriesRecorder, SERIES_POINTS};
use crate::measure::window::Window;
use crate::measure::work::work_cpu_ns;
use crate::sim::WorkParams;
use std::path::Path;

/// CPU work of one frame: what a 60 frames/s game spends per frame.
pub const FRAME_CPU_NS: u64 = 16_666_667;

/// A 60 Hz display's refresh interval: the frame's CPU work is one.
const REFRESH_NS: u64 = FRAME_CPU_NS;

/// The rule a frame is late by: with the CPU to itself a frame is ready
/// one refresh after it began, so it shows at the next refresh; a frame
/// that needs more than two refreshes is shown at least one refresh late,
/// and the refresh before it repeats its predecessor: a visible stutter.
/// Any less is a frame rate a little under 60, which no frame's delay
/// explains.
const LATE_RULE: &str = "took longer than two 60 Hz refreshes (33.3 ms): shown a refresh late";

/// Registry entry.
pub const DEF: ProbeDef = ProbeDef {
    name: "gaming",
    summary: "CPU-bound game: 16.7 ms CPU frames back to back, no deadlines",
    method: 1,
    sheet,
    build: |params: &WorkParams| {
        Ok(Box::new(GamingProbe {
            loops_per_ms: params.loops_per_ms,
            frames: GameFrames::new(),
            late: LateSplit::new(params),
        }))
    },
    default: super::always,
    uses: &[],
    pace: super::Pace::Duration,
    disk_bytes: super::no_disk,
    memory: MemoryPolicy::Locked,
    run_figure: super::no_run_figures,
};

/// Frame times (wall time of each frame).
const FRAME_TIME: &str = "frame_time";

/// The figures of the game: its latency, frame rate and 1 % low, and CPU.
fn sheet(summary: &str, _params: Option<&WorkParams>) -> ProbeSheet {
    let fps = |key: &str, field: &str, label: &str, formula: Formula| {
        FigureDef::new(key, field, label, Unit::Fps, Better::Higher, formula).compared()
    };
    let mut figures = latency_figures(LATENCY);
    figures.push(count_figure(
        EXECUTED,
        "frames_executed",
        "frames run",
        Better::Higher,
    ));
    figures.extend(cpu_figures());
    figures.extend([
        fps(
            "fps",
            "fps",
            "FPS",
            Formula::Ratio {
                num: EXECUTED.to_string(),
                den: MEASURED_S.to_string(),
                scale: 1.0,
            },
        )
        .spread(Spread::SubWindows)
        .headline(),
        fps(
            "low1",
            "low_1pct_fps",
            "1% low FPS",
            Formula::InverseQuantile {
                samples: FRAME_TIME.to_string(),
                q: 0.99,
                scale: 1e9,
            },
        ),
    ]);
    let mut columns = latency_columns();
    columns.extend([
        desired_column(),
        Column::new("FPS", &["fps"], 16),
        Column::new("1% low FPS", &["low1"], 11),
    ]);
    ProbeSheet {
        summary: summary.to_string(),
        own_pace: false,
        columns,
        figures,
    }
    .with_overview("fps", OverviewRole::ratio("slower"))
    .with_overview("desired", OverviewRole::Share)
    .with_noticeable(
        "low1",
        Noticeable::new(
            30.0,
            10.0,
            "a 1 % low below 30 FPS: 1 % of frames took longer than two 60 Hz refreshes (the \
             probe's own late rule), a visible hitch; below 10 FPS, longer than 100 ms, past \
             which a response stops feeling immediate (Card, Robertson and Mackinlay 1991, \
             Nielsen 1993)",
        ),
    )
}

struct GamingProbe {
    loops_per_ms: f64,
    frames: GameFrames,
    late: LateSplit,
}

/// Totals of the frames a gaming probe ran, and the same per sub-window of
/// the measurement. All storage is allocated on creation.
#[derive(Debug)]
struct GameFrames {
    stolen: LatencyHistogram,
    frame_time: LatencyHistogram,
    cpu_used_ns: u64,
    batches: [GameBatch; BATCHES],
    /// The latency of each frame over time.
    series: SeriesRecorder,
}

/// The frames that started in one sub-window.
#[derive(Debug, Default)]
struct GameBatch {
    stolen: BatchLatency,
    frame_time: BatchLatency,
    cpu_used_ns: u64,
}

impl GameFrames {
    /// No frames yet.
    fn new() -> Self {
        Self {
            stolen: LatencyHistogram::new(),
            frame_time: LatencyHistogram::new(),
            cpu_used_ns: 0,
            batches: Default::default(),
            series: SeriesRecorder::with_points(SERIES_POINTS),
        }
    }

    /// Accounts a frame of the measurement of `window` that ran from
    /// `started_ns` to `finished_ns` and used `cpu_ns` of CPU.
    fn record(&mut self, window: Window, started_ns: u64, finished_ns: u64, cpu_ns: u64) {
        let wall_ns = finished_ns - started_ns;
        let stolen_ns = wall_ns.saturating_sub(cpu_ns);
        self.frame_time.record_ns(wall_ns);
        self.stolen.record_ns(stolen_ns);
        self.cpu_used_ns += cpu_ns;
        let batch = &mut self.batches[batch_of(window, started_ns)];
        batch.frame_time.record_ns(wall_ns);
        batch.stolen.record_ns(stolen_ns);
        batch.cpu_used_ns += cpu_ns;
        self.series
            .record(started_ns.saturating_sub(window.start_ns), stolen_ns);
    }
}

impl Probe for GamingProbe {
    fn measure(self: Box<Self>, window: Window, _dir: &Path) -> Result<Measured, MeasureError> {
        let mut frames = self.frames;
        let mut splitting = self.late.open(window);
        let cpu_time = splitting.cpu_time();
        sleep_until_ns(window.start_ns);
        let mut started_ns = splitting.woke();
        while started_ns < window.end_ns {
            let cpu_ns = work_cpu_ns(&cpu_time, self.loops_per_ms, FRAME_CPU_NS);
            let times = EventTimes {
                due_ns: started_ns,
                cpu_wanted_ns: Some(FRAME_CPU_NS),
            };
            let finished_ns = splitting.ended_by(times, started_ns + 2 * REFRESH_NS);
            frames.record(window, started_ns, finished_ns, cpu_ns);
            // The next frame begins at once: its wake-up is this one's end.
            started_ns = splitting.woke();
        }
        Ok(Measured {
            late: LateCauses::of_splitting(&splitting, LATE_RULE),
            ..gaming_tallies(&frames, window, started_ns - window.start_ns)
        })
    }
}

/// The tallies of the frames of a measurement of `window` that lasted
/// `measured_ns`. A game wants the whole CPU for the whole time.
fn gaming_tallies(frames: &GameFrames, window: Window, measured_ns: u64) -> Measured {
    let count = frames.frame_time.len();
    let seconds = batch_seconds(window);
    let sum = |part: fn(&GameBatch) -> &BatchLatency| {
        frames.batches.iter().map(|b| part(b).sum_ns()).sum()
    };
    let tally = Tally::default()
        .with_samples(LATENCY, &frames.stolen, sum(|b| &b.stolen))
        .with_samples(FRAME_TIME, &frames.frame_time, sum(|b| &b.frame_time))
        .with_count(MEASURED_S, measured_ns as f64 / 1e9)
        .with_count(EXECUTED, count as f64)
        .with_count(CPU_WANTED_MS, measured_ns as f64 / 1e6)
        .with_count(CPU_RECEIVED_MS, frames.cpu_used_ns as f64 / 1e6)
        .with_count(CPU_USED_MS, frames.cpu_used_ns as f64 / 1e6)
        .with_count(CPU_WANTED_RUN_MS, (count * FRAME_CPU_NS) as f64 / 1e6);
    let batches = frames
        .batches
        .iter()
        .map(|batch| batch_tally(batch, seconds))
        .collect();
    // A game has no ideal latency other than 0: no ideal line.
    Measured {
        series: Some(LatencySeries::of(&frames.series, None)),
        ..Measured::of(tally, batches)
    }
}

/// The tally of one sub-window of `seconds`, in which a game wanted the
/// whole CPU.
fn batch_tally(batch: &GameBatch, seconds: f64) -> Tally {
    let latency = &batch.stolen;
    Tally::default()
        .with_samples(LATENCY, latency.histogram(), latency.sum_ns())
        .with_samples(
            FRAME_TIME,
            batch.frame_time.histogram(),
            batch.frame_time.sum_ns(),
        )
        .with_count(MEASURED_S, seconds)
        .with_count(EXECUTED, latency.count() as f64)
        .with_count(CPU_WANTED_MS, seconds * 1e3)
        .with_count(CPU_RECEIVED_MS, batch.cpu_used_ns as f64 / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::{Evaluator, ProbeResult};
    use crate::measure::sched::SchedApplied;

    const MS: u64 = 1_000_000;

    const WINDOW: Window = Window::ms(1_000, 2_000);

    /// Frames of a scripted 1 s measurement (sub-windows of 50 ms): 20 ms
    /// frames using 16 ms of CPU back to back, but the one starting at
    /// 200 ms takes 180 ms, and none start after 680 ms.
    fn scripted_frames() -> GameFrames {
        let mut frames = GameFrames::new();
        let mut at_ms = 0;
        while at_ms <= 680 {
            let wall_ms = if at_ms == 200 { 180 } else { 20 };
            let started_ns = WINDOW.start_ns + at_ms * MS;
            frames.record(WINDOW, started_ns, started_ns + wall_ms * MS, 16 * MS);
            at_ms += wall_ms;
        }
        frames
    }

    fn scripted_result() -> ProbeResult {
        let measured = gaming_tallies(&scripted_frames(), WINDOW, 700 * MS);
        ProbeResult::of_measured(
            &sheet("scripted", None),
            measured,
            SchedApplied::for_tests(),
        )
    }

    fn value(tally: &Tally, sheet: &ProbeSheet, key: &str) -> Option<f64> {
        Evaluator::new(tally).value(&sheet.figure(key).unwrap().formula)
    }

    #[test]
    fn frames_count_in_the_sub_window_they_started_in() {
        let result = scripted_result();
        let sheet = sheet("scripted", None);
        let frames: Vec<f64> = result.batches.iter().map(|b| b.count(EXECUTED)).collect();
        // Starts 0 20 40 | 60 80 | 100 120 140 | 160 180 | 200 | – | – |
        // 380 | 400 420 440 | 460 480 | 500 520 540 | 560 580 | 600 620 640 |
        // 660 680 | –…
        let expected = [3, 2, 3, 2, 1, 0, 0, 1, 3, 2, 3, 2, 3, 2, 0, 0, 0, 0, 0, 0];
        assert_eq!(frames, expected.map(f64::from));
        let long = &result.batches[4];
        assert_eq!(value(long, &sheet, "mean"), Some(164_000.0));
        let frame_time = long.samples[FRAME_TIME].decode().unwrap();
        assert!((frame_time.quantile_ns(0.99) as f64 - 180e6).abs() <= 1.8e6);
        let short = &result.batches[0];
        assert_eq!(value(short, &sheet, "mean"), Some(4_000.0));
        assert_eq!(value(short, &sheet, "fps"), Some(60.0));
    }

    #[test]
    fn the_series_has_each_frames_stolen_time_where_it_started() {
        let result = scripted_result();
        let points = &result.series.as_ref().unwrap().points;
        assert_eq!(points.len(), 27);
        assert!(points.iter().all(|p| p.count == 1));
        let long = points.iter().find(|p| p.t_s == 0.2).unwrap();
        assert_eq!(long.max_us, 164_000.0);
        assert_eq!((points[0].t_s, points[0].mean_us), (0.0, 4_000.0));
    }

    #[test]
    fn figures_come_from_the_whole_measurement() {
        let result = scripted_result();
        // 27 frames in 700 ms; the slowest 1 % of 27 frames is the 180 ms one.
        assert!((result.figures["fps"] - 27.0 / 0.7).abs() < 1e-9);
        assert!((result.figures["low_1pct_fps"] - 1e3 / 180.0).abs() < 0.01);
        let received_ms = 27.0 * 16.0;
        assert_eq!(
            result.figures["desired_cpu_pct"],
            100.0 * received_ms / 700.0
        );
        assert!((result.figures["work_ratio"] - 16.0 / (FRAME_CPU_NS as f64 / 1e6)).abs() < 1e-9);
        assert!(!result.figures.contains_key("deadlines_met_pct"));
        assert!(
            !result.figures.contains_key("frames_dropped"),
            "no deadline, no frame dropped: no count rather than a made-up 0"
        );
    }

    #[test]
    fn batches_add_up_and_want_the_whole_cpu() {
        let result = scripted_result();
        let frames: f64 = result.batches.iter().map(|b| b.count(EXECUTED)).sum();
        assert_eq!(frames, result.tally.count(EXECUTED));
        let received_ms: f64 = result
            .batches
            .iter()
            .map(|b| b.count(CPU_RECEIVED_MS))
            .sum();
        assert!((received_ms - result.tally.count(CPU_RECEIVED_MS)).abs() < 1e-6);
        for batch in &result.batches {
            assert_eq!(batch.count(MEASURED_S), 0.05);
            assert_eq!(batch.count(CPU_WANTED_MS), 50.0);
        }
    }

    #[test]
    fn sub_windows_without_frames_have_no_latency() {
        let result = scripted_result();
        let sheet = sheet("scripted", None);
        for batch in [5, 6, 14, 19].map(|k| &result.batches[k]) {
            assert_eq!(batch.count(EXECUTED), 0.0);
            assert_eq!(value(batch, &sheet, "mean"), None);
            assert_eq!(value(batch, &sheet, "p99"), None);
            assert_eq!(batch.count(CPU_RECEIVED_MS), 0.0);
        }
    }
}
