//! `gaming`: a CPU-bound game with an unlocked frame rate. Frames of fixed
//! CPU work (one 60 Hz frame's worth) run back to back; there are no
//! deadlines. Latency is the part of a frame's wall time in which it did not
//! run; the figures are frames per second and the 1 % low.

use super::{Probe, ProbeDef, Window, WorkParams};
use crate::measure::clock::{now_ns, sleep_until_ns, thread_cpu_ns};
use crate::measure::latency::LatencyHistogram;
use crate::measure::sched::SchedApplied;
use crate::measure::work::{burn_loops, loops_for_ns};
use crate::report::schema::{CpuFigures, FrameCounts, GamingFigures, ProbeResult};

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

/// Totals of the frames a gaming probe ran.
#[derive(Debug, Default)]
struct GameFrames {
    stolen: LatencyHistogram,
    frame_time: LatencyHistogram,
    cpu_used_ns: u64,
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
            let wall_ns = finished_ns - started_ns;
            frames.frame_time.record_ns(wall_ns);
            frames.stolen.record_ns(wall_ns.saturating_sub(cpu_ns));
            frames.cpu_used_ns += cpu_ns;
            started_ns = finished_ns;
        }
        gaming_result(&frames, started_ns - window.start_ns, sched)
    }
}

fn gaming_result(frames: &GameFrames, measured_ns: u64, sched: SchedApplied) -> ProbeResult {
    let count = frames.frame_time.len();
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
        batches: Vec::new(),
    }
}
