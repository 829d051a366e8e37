//! A periodic task (interbench's X, Audio, Video and Custom): wake at each
//! period's absolute start, do the frame's CPU work (until the thread's CPU
//! time has advanced by what the frame wants), drop frames whose deadline
//! has passed: the frames skipped to catch up after a frame that ran over,
//! and a frame that woke only after its period was over. Probes measure
//! it; loads run it to be a load.

use crate::measure::attrib::Splitting;
use crate::measure::clock::{now_ns, sleep_until_ns};
use crate::measure::cpu_time::ThreadCpuTime;
use crate::measure::frames::{FrameAccount, FrameTimes, Timetable};
use crate::measure::late::EventTimes;
use crate::measure::window::Window;
use crate::measure::work::work_cpu_ns;

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
    /// Time from one period's start to the next.
    pub period_ns: u64,
    /// CPU each frame wants.
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

/// Runs the frames of one periodic task, one at a time, on the thread
/// that made it.
pub struct FrameRunner {
    shape: PeriodicShape,
    timetable: Timetable,
    loops_per_ms: f64,
    cpu_time: ThreadCpuTime,
    next: u64,
    /// Everything accounted so far.
    pub account: FrameAccount,
    /// The split of each frame's delay (a probe's; a load's reads only the
    /// clock).
    pub splitting: Splitting,
}

impl FrameRunner {
    /// A runner whose first period starts at `window.start_ns`, accounting
    /// into `account` (normally empty) and splitting each frame's delay
    /// with `splitting` (a frame is late when it misses its deadline),
    /// whose counter of the thread's CPU time its work reads too. It must
    /// run on the thread that opened `splitting`.
    pub fn new(
        shape: PeriodicShape,
        window: Window,
        loops_per_ms: f64,
        account: FrameAccount,
        splitting: Splitting,
    ) -> Self {
        Self {
            shape,
            timetable: Timetable {
                start_ns: window.start_ns,
                period_ns: shape.period_ns,
                end_ns: window.end_ns,
            },
            loops_per_ms,
            cpu_time: splitting.cpu_time(),
            next: 0,
            account,
            splitting,
        }
    }

    /// A runner whose first period starts now and whose periods, in
    /// practice, never end: the task run in the background, as a load.
    pub fn endless(shape: PeriodicShape, loops_per_ms: f64) -> Self {
        let window = Window {
            start_ns: now_ns(),
            end_ns: u64::MAX / 4,
        };
        let account = FrameAccount::default();
        Self::new(shape, window, loops_per_ms, account, Splitting::default())
    }

    /// Waits for the next frame's period, runs it and accounts it (and any
    /// frames dropped after it); a frame that wakes after its period is
    /// over is dropped instead of run. Returns what became of the frame, or
    /// `None` once the timetable has no period left.
    pub fn run_next_frame(&mut self) -> Option<FrameOutcome> {
        let index = self.next;
        if index >= self.timetable.periods() {
            return None;
        }
        let intended_ns = self.timetable.start_of(index);
        sleep_until_ns(intended_ns);
        let started_ns = self.splitting.woke();
        let shape = self.shape;
        let cpu_wanted_ns = self.shape.cpu_wanted_ns(index);
        let times = EventTimes {
            due_ns: intended_ns,
            cpu_wanted_ns: Some(cpu_wanted_ns),
        };
        let deadline_ns = self.timetable.deadline_of(index);
        if self.timetable.woke_too_late(index, started_ns) {
            self.splitting.dropped(times, true, deadline_ns);
            self.next = self
                .account
                .record_woken_late(&self.timetable, index, started_ns, |i| {
                    shape.cpu_wanted_ns(i)
                });
            return Some(FrameOutcome::Dropped {
                woke_ns: started_ns,
            });
        }
        let cpu_used_ns = work_cpu_ns(&self.cpu_time, self.loops_per_ms, cpu_wanted_ns);
        let finished_ns = self.splitting.ended_by(times, deadline_ns);
        let frame = FrameTimes {
            intended_ns,
            started_ns,
            finished_ns,
            deadline_ns,
            cpu_wanted_ns,
            cpu_used_ns,
        };
        self.next = self
            .account
            .record_frame(&self.timetable, index, &frame, |i| shape.cpu_wanted_ns(i));
        Some(FrameOutcome::Ran { finished_ns })
    }
}

/// What became of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameOutcome {
    /// It ran; its work was done at `finished_ns`.
    Ran { finished_ns: u64 },
    /// It woke at `woke_ns`, after its period was over, and was dropped.
    Dropped { woke_ns: u64 },
}

impl FrameOutcome {
    /// When the frame was done with: its work finished, or it was dropped.
    pub fn done_ns(self) -> u64 {
        match self {
            FrameOutcome::Ran { finished_ns } => finished_ns,
            FrameOutcome::Dropped { woke_ns } => woke_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_whose_period_is_over_when_it_wakes_is_dropped_not_run() {
        let shape = PeriodicShape {
            period_ns: 10_000_000,
            cpu: CpuDemand::Share(50.0),
        };
        let now = now_ns();
        // The first period ended 90 ms ago: a load counts no work for it.
        let window = Window {
            start_ns: now - 100_000_000,
            end_ns: now + 100_000_000,
        };
        let account = FrameAccount::default();
        let mut runner = FrameRunner::new(shape, window, 1000.0, account, Splitting::default());
        let outcome = runner.run_next_frame().unwrap();
        assert!(
            matches!(outcome, FrameOutcome::Dropped { woke_ns } if woke_ns >= now),
            "{outcome:?}"
        );
    }
}
