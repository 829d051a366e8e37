//! The periodic simulation shared by `x`, `audio`, `video` and `custom` (as
//! probes and as loads): wake at each period's absolute start, do the frame's
//! calibrated CPU work, drop frames whose deadline has passed.

use super::{Probe, Window, WorkParams};
use crate::measure::clock::{now_ns, sleep_until_ns, thread_cpu_ns};
use crate::measure::frames::{FrameAccount, FrameTimes, Timetable};
use crate::measure::sched::SchedApplied;
use crate::measure::work::{burn_loops, loops_for_ns};
use crate::report::schema::{CpuFigures, Deadlines, FrameCounts, ProbeResult};

/// How much CPU each frame wants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CpuDemand {
    /// The same share of every period, in %.
    Share(f64),
    /// 0 %, 1 %, … 100 % of the period, one step per frame, then again
    /// (an idle desktop whose window is grabbed and dragged).
    Sweep,
}

/// Period and CPU demand of a periodic task.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PeriodicShape {
    pub period_ns: u64,
    pub cpu: CpuDemand,
}

impl PeriodicShape {
    /// CPU time frame `index` wants.
    pub fn cpu_wanted_ns(&self, index: u64) -> u64 {
        let pct = match self.cpu {
            CpuDemand::Share(pct) => pct,
            CpuDemand::Sweep => (index % 101) as f64,
        };
        (self.period_ns as f64 * pct / 100.0).round() as u64
    }
}

/// Runs the frames of one periodic task, one at a time.
pub struct FrameRunner {
    shape: PeriodicShape,
    timetable: Timetable,
    loops_per_ms: f64,
    next: u64,
    /// Everything accounted so far.
    pub account: FrameAccount,
}

impl FrameRunner {
    /// A runner whose first period starts at `window.start_ns`, accounting
    /// into `account` (normally empty).
    pub fn new(
        shape: PeriodicShape,
        window: Window,
        loops_per_ms: f64,
        account: FrameAccount,
    ) -> Self {
        Self {
            shape,
            timetable: Timetable {
                start_ns: window.start_ns,
                period_ns: shape.period_ns,
                end_ns: window.end_ns,
            },
            loops_per_ms,
            next: 0,
            account,
        }
    }

    /// Waits for the next frame's period, runs it and accounts it (and any
    /// frames dropped after it). Returns when the frame was done, or `None`
    /// once the timetable has no period left.
    pub fn run_next_frame(&mut self) -> Option<u64> {
        let index = self.next;
        if index >= self.timetable.periods() {
            return None;
        }
        let intended_ns = self.timetable.start_of(index);
        sleep_until_ns(intended_ns);
        let started_ns = now_ns();
        let cpu_wanted_ns = self.shape.cpu_wanted_ns(index);
        let cpu_before = thread_cpu_ns();
        burn_loops(loops_for_ns(self.loops_per_ms, cpu_wanted_ns));
        let cpu_used_ns = thread_cpu_ns() - cpu_before;
        let finished_ns = now_ns();
        self.account.record(&FrameTimes {
            intended_ns,
            started_ns,
            finished_ns,
            deadline_ns: self.timetable.deadline_of(index),
            cpu_wanted_ns,
            cpu_used_ns,
        });
        self.next = self.timetable.next_frame(index, finished_ns);
        let dropped = self.timetable.dropped_between(index, self.next);
        let dropped_cpu: u64 = (index + 1..index + 1 + dropped)
            .map(|i| self.shape.cpu_wanted_ns(i))
            .sum();
        self.account.record_dropped(dropped, dropped_cpu);
        Some(finished_ns)
    }
}

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
        periodic_result(&runner.account, last_finished_ns - window.start_ns, sched)
    }
}

/// Turns a frame account into the figures of a run document.
pub fn periodic_result(
    account: &FrameAccount,
    measured_ns: u64,
    sched: SchedApplied,
) -> ProbeResult {
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
        batches: Vec::new(),
    }
}
