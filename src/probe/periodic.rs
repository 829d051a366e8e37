//! The periodic probes `x`, `audio`, `video` and `custom`: the periodic
//! simulation of `sim::periodic` measured, and its frame account turned into
//! a run document's figures.

use super::Probe;
use crate::measure::batches::batch_seconds;
use crate::measure::frames::{FrameAccount, PeriodBatch};
use crate::measure::sched::SchedApplied;
use crate::measure::window::Window;
use crate::report::schema::{Batch, CpuFigures, Deadlines, FrameCounts, ProbeResult};
use crate::sim::periodic::{FrameRunner, PeriodicShape};
use crate::sim::WorkParams;

/// A periodic task measured as a probe.
pub struct PeriodicProbe {
    shape: PeriodicShape,
    loops_per_ms: f64,
    account: FrameAccount,
}

impl PeriodicProbe {
    /// A boxed probe of `shape`, for the registry's build functions.
    pub fn boxed(shape: PeriodicShape, params: &WorkParams) -> Box<dyn Probe> {
        Box::new(Self {
            shape,
            loops_per_ms: params.loops_per_ms,
            account: FrameAccount::default(),
        })
    }
}

impl Probe for PeriodicProbe {
    fn measure(self: Box<Self>, window: Window, sched: SchedApplied) -> ProbeResult {
        let mut runner = FrameRunner::new(self.shape, window, self.loops_per_ms, self.account);
        let mut last_finished_ns = window.end_ns;
        while let Some(finished) = runner.run_next_frame() {
            last_finished_ns = last_finished_ns.max(finished);
        }
        periodic_result(
            &runner.account,
            window,
            last_finished_ns - window.start_ns,
            sched,
        )
    }
}

/// Turns the frame account of a measurement of `window` into the figures of
/// a run document.
pub fn periodic_result(
    account: &FrameAccount,
    window: Window,
    measured_ns: u64,
    sched: SchedApplied,
) -> ProbeResult {
    let seconds = batch_seconds(window);
    let total = account.deadlines_total();
    let late_frames = account.executed - account.met;
    ProbeResult {
        measured_s: measured_ns as f64 / 1e9,
        latency_us: account.latency.summary(),
        histogram: account.latency.to_base64(),
        frames: FrameCounts {
            executed: account.executed,
            dropped: account.dropped,
        },
        deadlines: Some(Deadlines {
            total,
            met: account.met,
            met_pct: if total == 0 {
                0.0
            } else {
                100.0 * account.met as f64 / total as f64
            },
            late_mean_us: (late_frames > 0)
                .then(|| account.late_sum_ns as f64 / late_frames as f64 / 1e3),
            late_max_us: account.late_max_ns as f64 / 1e3,
        }),
        cpu: CpuFigures {
            wanted_ms: account.cpu_wanted_ns as f64 / 1e6,
            received_ms: account.cpu_used_ns as f64 / 1e6,
            desired_pct: account.desired_cpu_pct(),
            work_ratio: account.work_ratio(),
        },
        gaming: None,
        frame_histogram: None,
        sched,
        usage: None,
        batches: account
            .batches
            .iter()
            .map(|batch| batch_figures(batch, seconds))
            .collect(),
    }
}

/// The run document's figures of one sub-window of `seconds`.
fn batch_figures(batch: &PeriodBatch, seconds: f64) -> Batch {
    Batch {
        seconds,
        frames: batch.latency.count(),
        mean_us: batch.latency.mean_us(),
        p99_us: batch.latency.p99_us(),
        histogram: batch.latency.to_base64(),
        frame_p99_us: None,
        periods: batch.periods,
        met: batch.met,
        cpu_wanted_ms: batch.cpu_wanted_ns as f64 / 1e6,
        cpu_received_ms: batch.cpu_used_ns as f64 / 1e6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::batches::BATCHES;
    use crate::measure::frames::{FrameTimes, Timetable};

    const MS: u64 = 1_000_000;

    /// The figures of a scripted 1 s measurement of 10 ms periods wanting
    /// 3 ms: every fifth frame runs 25 ms (missing its deadline and dropping
    /// the next period), the others start `index % 4` ms late; nothing runs
    /// after 900 ms.
    fn scripted_result() -> ProbeResult {
        let window = Window {
            start_ns: 5_000 * MS,
            end_ns: 6_000 * MS,
        };
        let timetable = Timetable {
            start_ns: window.start_ns,
            period_ns: 10 * MS,
            end_ns: window.end_ns,
        };
        let mut account = FrameAccount::default();
        let mut index = 0;
        while index < 90 {
            let intended_ns = timetable.start_of(index);
            let (delay_ms, finish_ms) = if index % 5 == 0 {
                (0, 25)
            } else {
                (index % 4, index % 4 + 3)
            };
            let frame = FrameTimes {
                intended_ns,
                started_ns: intended_ns + delay_ms * MS,
                finished_ns: intended_ns + finish_ms * MS,
                deadline_ns: timetable.deadline_of(index),
                cpu_wanted_ns: 3 * MS,
                cpu_used_ns: 3 * MS,
            };
            index = account.record_frame(&timetable, index, &frame, |_| 3 * MS);
        }
        periodic_result(
            &account,
            window,
            window.end_ns - window.start_ns,
            SchedApplied::for_tests(),
        )
    }

    #[test]
    fn batches_add_up_to_the_scenario_totals() {
        let result = scripted_result();
        let deadlines = result.deadlines.unwrap();
        let sum = |field: fn(&Batch) -> u64| result.batches.iter().map(field).sum::<u64>();
        assert_eq!(result.batches.len(), BATCHES);
        assert_eq!(sum(|b| b.periods), deadlines.total);
        assert_eq!(sum(|b| b.met), deadlines.met);
        assert_eq!(sum(|b| b.frames), result.frames.executed);
        assert!(result.frames.dropped > 0 && deadlines.met < result.frames.executed);
        let wanted_ms: f64 = result.batches.iter().map(|b| b.cpu_wanted_ms).sum();
        assert!((wanted_ms - result.cpu.wanted_ms).abs() < 1e-6);
    }

    #[test]
    fn batches_are_equal_slices_and_empty_ones_have_no_latency() {
        let result = scripted_result();
        assert!(result.batches.iter().all(|b| b.seconds == 0.05));
        // 50 ms sub-windows; the frames stop at 900 ms.
        let (ran, idle) = result.batches.split_at(18);
        assert!(ran.iter().all(|b| b.frames > 0 && b.mean_us.is_some()));
        assert!(ran
            .iter()
            .all(|b| b.p99_us.is_some() && b.frame_p99_us.is_none()));
        for batch in idle {
            assert_eq!((batch.frames, batch.periods, batch.met), (0, 0, 0));
            assert_eq!((batch.mean_us, batch.p99_us), (None, None));
        }
    }
}
