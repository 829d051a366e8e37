//! The shape of the `game` probe's frame graph (`--game-refresh`,
//! `--game-queue`, `--game-pool`, `--game-jobs`, `--game-cpu`): the
//! display's refresh rate, how many frames the swap chain queues, the
//! worker pool and the jobs fanned out to it per frame, and the CPU a frame
//! takes, in % of one refresh, split along its critical path. Fixed for the
//! whole run, carried to the workers and recorded in the run document.
//!
//! Where the numbers come from:
//! - 60 and 144 Hz: the common desktop and gaming refresh rates; a queue of
//!   1–3 frames is what a swap chain holds (Vulkan's FIFO present mode with
//!   2 or 3 images, a driver's "max pre-rendered frames" of 1–3).
//! - 24 jobs a frame: Igalia's analysis of real games for scx_lavd (Linux
//!   Plumbers 2024) found chains of 20–30 short tasks per frame; two
//!   workers by default, so that on the project's 2-CPU machine the main
//!   and render threads and the pool share the CPUs as a game's do.
//! - A frame's CPU of 60 % of a refresh, a fifth on the main thread (game
//!   logic), three fifths in the jobs, a fifth on the render thread (the
//!   draw calls it submits): with the jobs spread over the workers its
//!   critical path is 0.6 · (0.2 + 0.6 / workers + 0.2) of a refresh, 42 %
//!   with two workers, leaving the headroom a game tuned to its refresh
//!   rate keeps.
//! - Input polled at 1 kHz (a gaming mouse's report rate); audio in
//!   periods of 256 samples at 48 kHz (5.33 ms, a PipeWire quantum games
//!   ask for), each doing 10 % of its period of work before the next.

use serde::{Deserialize, Serialize};

/// The input thread's poll period: 1 kHz.
pub const INPUT_PERIOD_NS: u64 = 1_000_000;
/// CPU of one input poll.
pub const INPUT_CPU_NS: u64 = 20_000;
/// The audio thread's period: 256 samples at 48 kHz.
pub const AUDIO_PERIOD_NS: u64 = 256 * 1_000_000_000 / 48_000;
/// CPU of one audio period: 10 % of it.
pub const AUDIO_CPU_NS: u64 = AUDIO_PERIOD_NS / 10;

/// The frame graph, for the whole run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GameSettings {
    /// The display's refresh rate (60 or 144).
    pub refresh_hz: u32,
    /// Frames the swap chain queues (1–3).
    pub queue: u32,
    /// Worker threads the jobs are fanned out to.
    pub workers: u32,
    /// Jobs fanned out per frame.
    pub jobs: u32,
    /// CPU of a frame's graph in % of one refresh.
    pub cpu_pct: f64,
}

impl Default for GameSettings {
    /// 60 Hz, a queue of 2, 2 workers, 24 jobs, 60 % of a refresh.
    fn default() -> Self {
        Self {
            refresh_hz: 60,
            queue: 2,
            workers: 2,
            jobs: 24,
            cpu_pct: 60.0,
        }
    }
}

impl GameSettings {
    /// One refresh interval.
    pub fn refresh_ns(&self) -> u64 {
        1_000_000_000 / u64::from(self.refresh_hz.max(1))
    }

    /// CPU of a frame's whole graph.
    pub fn frame_cpu_ns(&self) -> u64 {
        (self.refresh_ns() as f64 * self.cpu_pct / 100.0) as u64
    }

    /// CPU of the main thread's part of a frame (a fifth).
    pub fn main_cpu_ns(&self) -> u64 {
        self.frame_cpu_ns() / 5
    }

    /// CPU of the render thread's part of a frame (a fifth).
    pub fn render_cpu_ns(&self) -> u64 {
        self.frame_cpu_ns() / 5
    }

    /// CPU of one job (the three fifths left, over the jobs).
    pub fn job_cpu_ns(&self) -> u64 {
        self.frame_cpu_ns() * 3 / 5 / u64::from(self.jobs.max(1))
    }

    /// The time the jobs take on the pool with a CPU for each worker:
    /// the most jobs one worker runs, one after another.
    pub fn jobs_wall_ns(&self) -> u64 {
        let rounds = self.jobs.div_ceil(self.workers.max(1));
        u64::from(rounds) * self.job_cpu_ns()
    }

    /// The settings in words, for listing differences between runs.
    pub fn describe(&self) -> String {
        format!(
            "{} Hz, queue {}, {} workers, {} jobs, {} % CPU",
            self.refresh_hz, self.queue, self.workers, self.jobs, self.cpu_pct
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_60_hz_frame_splits_its_ten_milliseconds_along_its_path() {
        let s = GameSettings::default();
        assert_eq!(s.refresh_ns(), 16_666_666);
        assert_eq!(s.frame_cpu_ns(), 9_999_999);
        assert_eq!(s.main_cpu_ns(), 1_999_999);
        assert_eq!(s.job_cpu_ns(), 249_999);
        assert_eq!(s.jobs_wall_ns(), 12 * 249_999);
        assert_eq!(AUDIO_PERIOD_NS, 5_333_333);
        assert_eq!(s.describe(), "60 Hz, queue 2, 2 workers, 24 jobs, 60 % CPU");
    }
}
