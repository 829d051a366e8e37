//! `gaming`: a CPU-bound game with an unlocked frame rate. Frames of fixed
//! CPU work (one 60 Hz frame's worth) run back to back; there are no
//! deadlines. Latency is the part of a frame's wall time in which it did not
//! run; the figures are frames per second and the 1 % low.

use super::{Probe, ProbeDef};
use crate::measure::batches::{batch_of, batch_seconds, BatchLatency, BATCHES};
use crate::measure::clock::{now_ns, sleep_until_ns, thread_cpu_ns};
use crate::measure::latency::LatencyHistogram;
use crate::measure::sched::SchedApplied;
use crate::measure::window::Window;
use crate::measure::work::{burn_loops, loops_for_ns};
use crate::report::schema::{Batch, CpuFigures, FrameCounts, GamingFigures, ProbeResult};
use crate::sim::WorkParams;

/// CPU work of one frame: what a 60 frames/s game spends per frame.
pub const FRAME_CPU_NS: u64 = 16_666_667;

/// Registry entry.
pub const DEF: ProbeDef = ProbeDef {
    name: "gaming",
    summary: "CPU-bound game: 16.7 ms CPU frames back to back, no deadlines",
    frame_rate: true,
    build: |params: &WorkParams| {
        Ok(Box::new(GamingProbe {
            loops_per_ms: params.loops_per_ms,
            frames: GameFrames::default(),
        }))
    },
    default: super::always,
};

struct GamingProbe {
    loops_per_ms: f64,
    frames: GameFrames,
}

/// Totals of the frames a gaming probe ran, and the same per sub-window of
/// the measurement. All storage is allocated on creation.
#[derive(Debug, Default)]
struct GameFrames {
    stolen: LatencyHistogram,
    frame_time: LatencyHistogram,
    cpu_used_ns: u64,
    batches: [GameBatch; BATCHES],
}

/// The frames that started in one sub-window.
#[derive(Debug, Default)]
struct GameBatch {
    stolen: BatchLatency,
    frame_time: BatchLatency,
    cpu_used_ns: u64,
}

impl GameFrames {
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
    }
}

impl Probe for GamingProbe {
    fn measure(self: Box<Self>, window: Window, sched: SchedApplied) -> ProbeResult {
        let loops = loops_for_ns(self.loops_per_ms, FRAME_CPU_NS);
        let mut frames = self.frames;
        sleep_until_ns(window.start_ns);
        let mut started_ns = now_ns();
        while started_ns < window.end_ns {
            let cpu_before = thread_cpu_ns();
            burn_loops(loops);
            let cpu_ns = thread_cpu_ns() - cpu_before;
            let finished_ns = now_ns();
            frames.record(window, started_ns, finished_ns, cpu_ns);
            started_ns = finished_ns;
        }
        gaming_result(&frames, window, started_ns - window.start_ns, sched)
    }
}

/// The figures of the frames of a measurement of `window` that lasted
/// `measured_ns`.
fn gaming_result(
    frames: &GameFrames,
    window: Window,
    measured_ns: u64,
    sched: SchedApplied,
) -> ProbeResult {
    let count = frames.frame_time.len();
    let seconds = batch_seconds(window);
    let measured_s = measured_ns as f64 / 1e9;
    let p99_frame_ns = frames.frame_time.quantile_ns(0.99).max(1);
    let cpu_wanted_run_ns = count * FRAME_CPU_NS;
    ProbeResult {
        measured_s,
        latency_us: frames.stolen.summary(),
        histogram: frames.stolen.to_base64(),
        frames: FrameCounts {
            executed: count,
            dropped: 0,
        },
        deadlines: None,
        cpu: CpuFigures {
            // A game wants the whole CPU for the whole time.
            wanted_ms: measured_ns as f64 / 1e6,
            received_ms: frames.cpu_used_ns as f64 / 1e6,
            desired_pct: (measured_ns > 0)
                .then(|| 100.0 * frames.cpu_used_ns as f64 / measured_ns as f64),
            work_ratio: (cpu_wanted_run_ns > 0)
                .then(|| frames.cpu_used_ns as f64 / cpu_wanted_run_ns as f64),
        },
        gaming: (count > 0).then(|| GamingFigures {
            fps: count as f64 / measured_s,
            low_1pct_fps: 1e9 / p99_frame_ns as f64,
        }),
        frame_histogram: Some(frames.frame_time.to_base64()),
        sched,
        usage: None,
        batches: frames
            .batches
            .iter()
            .map(|batch| batch_figures(batch, seconds))
            .collect(),
    }
}

/// The run document's figures of one sub-window of `seconds`, in which a
/// game wanted the whole CPU.
fn batch_figures(batch: &GameBatch, seconds: f64) -> Batch {
    Batch {
        seconds,
        frames: batch.stolen.count(),
        mean_us: batch.stolen.mean_us(),
        p99_us: batch.stolen.p99_us(),
        histogram: batch.stolen.to_base64(),
        frame_p99_us: batch.frame_time.p99_us(),
        periods: 0,
        met: 0,
        cpu_wanted_ms: seconds * 1e3,
        cpu_received_ms: batch.cpu_used_ns as f64 / 1e6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    const WINDOW: Window = Window {
        start_ns: 1_000 * MS,
        end_ns: 2_000 * MS,
    };

    /// Frames of a scripted 1 s measurement (sub-windows of 50 ms): 20 ms
    /// frames using 16 ms of CPU back to back, but the one starting at
    /// 200 ms takes 180 ms, and none start after 680 ms.
    fn scripted_frames() -> GameFrames {
        let mut frames = GameFrames::default();
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
        gaming_result(
            &scripted_frames(),
            WINDOW,
            700 * MS,
            SchedApplied::for_tests(),
        )
    }

    #[test]
    fn frames_count_in_the_sub_window_they_started_in() {
        let result = scripted_result();
        let frames: Vec<u64> = result.batches.iter().map(|b| b.frames).collect();
        // Starts 0 20 40 | 60 80 | 100 120 140 | 160 180 | 200 | – | – |
        // 380 | 400 420 440 | 460 480 | 500 520 540 | 560 580 | 600 620 640 |
        // 660 680 | –…
        let expected = [3, 2, 3, 2, 1, 0, 0, 1, 3, 2, 3, 2, 3, 2, 0, 0, 0, 0, 0, 0];
        assert_eq!(frames, expected);
        let long = &result.batches[4];
        assert_eq!(long.mean_us, Some(164_000.0));
        let frame_p99 = long.frame_p99_us.unwrap();
        assert!((frame_p99 - 180_000.0).abs() <= 1_800.0, "{frame_p99}");
        let short = &result.batches[0];
        assert_eq!(short.mean_us, Some(4_000.0));
        assert!((short.frame_p99_us.unwrap() - 20_000.0).abs() <= 200.0);
    }

    #[test]
    fn batches_add_up_and_want_the_whole_cpu() {
        let result = scripted_result();
        let frames: u64 = result.batches.iter().map(|b| b.frames).sum();
        assert_eq!(frames, result.frames.executed);
        let received_ms: f64 = result.batches.iter().map(|b| b.cpu_received_ms).sum();
        assert!((received_ms - result.cpu.received_ms).abs() < 1e-6);
        for batch in &result.batches {
            assert_eq!(batch.seconds, 0.05);
            assert_eq!(batch.cpu_wanted_ms, 50.0);
            assert_eq!((batch.periods, batch.met), (0, 0));
        }
    }

    #[test]
    fn sub_windows_without_frames_have_no_latency() {
        let result = scripted_result();
        for batch in [5, 6, 14, 19].map(|k| &result.batches[k]) {
            assert_eq!(batch.frames, 0);
            assert_eq!(
                (batch.mean_us, batch.p99_us, batch.frame_p99_us),
                (None, None, None)
            );
            assert_eq!(batch.cpu_received_ms, 0.0);
        }
    }
}
