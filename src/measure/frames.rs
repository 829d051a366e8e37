//! Pure accounting of periodic frames: the timetable, frame dropping, deadlines,
//! lateness and % desired CPU. Everything here is a function of timestamps
//! passed in, so it is tested with scripted times; the real clock is plugged in
//! by the probes.

use super::latency::LatencyHistogram;

/// The fixed timetable of a periodic task: period `i` is intended to start at
/// `start_ns + i * period_ns`; periods that start at or after `end_ns` are not
/// part of the measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timetable {
    pub start_ns: u64,
    pub period_ns: u64,
    pub end_ns: u64,
}

impl Timetable {
    /// Intended start of period `index`.
    pub fn start_of(&self, index: u64) -> u64 {
        self.start_ns + index * self.period_ns
    }

    /// Deadline of period `index`: the start of the next period.
    pub fn deadline_of(&self, index: u64) -> u64 {
        self.start_of(index + 1)
    }

    /// Number of periods in the measurement (those starting before `end_ns`).
    pub fn periods(&self) -> u64 {
        (self.end_ns.saturating_sub(self.start_ns)).div_ceil(self.period_ns)
    }

    /// The frame to run after frame `index` finished at `finished_ns`.
    /// Frames whose deadline has already passed are dropped, as a player drops
    /// frames it can no longer show in time; the frame whose period is running
    /// now is still attempted (late). The result may lie past the last period.
    pub fn next_frame(&self, index: u64, finished_ns: u64) -> u64 {
        let period_now = finished_ns.saturating_sub(self.start_ns) / self.period_ns;
        (index + 1).max(period_now)
    }

    /// How many measured periods lie strictly between frame `index` and `next`
    /// (the dropped frames), not counting periods past the end.
    pub fn dropped_between(&self, index: u64, next: u64) -> u64 {
        next.min(self.periods()).saturating_sub(index + 1)
    }
}

/// Timestamps and CPU figures of one frame that ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameTimes {
    /// When the period was intended to start.
    pub intended_ns: u64,
    /// When the simulated task really began to run.
    pub started_ns: u64,
    /// When the frame's work was done.
    pub finished_ns: u64,
    /// When the frame had to be done (the start of the next period).
    pub deadline_ns: u64,
    /// CPU time the frame wanted.
    pub cpu_wanted_ns: u64,
    /// CPU time the frame really consumed (thread CPU clock).
    pub cpu_used_ns: u64,
}

/// Running totals over the frames of one measurement.
#[derive(Debug, Clone, Default)]
pub struct FrameAccount {
    /// Latency of every frame that ran: started minus intended start.
    pub latency: LatencyHistogram,
    /// Frames that ran.
    pub executed: u64,
    /// Frames skipped because their deadline had passed before they could start.
    pub dropped: u64,
    /// Frames that ran and finished by their deadline.
    pub met: u64,
    /// Sum of how late the missed frames finished.
    pub late_sum_ns: u64,
    /// Largest amount by which a frame finished after its deadline.
    pub late_max_ns: u64,
    /// CPU time wanted by all frames, run or dropped.
    pub cpu_wanted_ns: u64,
    /// CPU time wanted by the frames that ran.
    pub cpu_wanted_run_ns: u64,
    /// CPU time received by the frames that ran.
    pub cpu_used_ns: u64,
}

impl FrameAccount {
    /// Accounts one frame that ran.
    pub fn record(&mut self, frame: &FrameTimes) {
        self.latency
            .record_ns(frame.started_ns.saturating_sub(frame.intended_ns));
        self.executed += 1;
        if frame.finished_ns <= frame.deadline_ns {
            self.met += 1;
        } else {
            let late = frame.finished_ns - frame.deadline_ns;
            self.late_sum_ns += late;
            self.late_max_ns = self.late_max_ns.max(late);
        }
        self.cpu_wanted_ns += frame.cpu_wanted_ns;
        self.cpu_wanted_run_ns += frame.cpu_wanted_ns;
        self.cpu_used_ns += frame.cpu_used_ns;
    }

    /// Accounts `count` dropped frames that together wanted `cpu_wanted_ns`.
    pub fn record_dropped(&mut self, count: u64, cpu_wanted_ns: u64) {
        self.dropped += count;
        self.cpu_wanted_ns += cpu_wanted_ns;
    }

    /// Every period of the measurement: frames that ran plus frames dropped.
    pub fn deadlines_total(&self) -> u64 {
        self.executed + self.dropped
    }

    /// CPU time received as a percentage of CPU time wanted; `None` when the
    /// task wanted no CPU at all.
    pub fn desired_cpu_pct(&self) -> Option<f64> {
        (self.cpu_wanted_ns > 0)
            .then(|| 100.0 * self.cpu_used_ns as f64 / self.cpu_wanted_ns as f64)
    }

    /// CPU used over CPU wanted by the frames that ran: 1.0 when the
    /// calibration holds. `None` when those frames wanted no CPU.
    pub fn work_ratio(&self) -> Option<f64> {
        (self.cpu_wanted_run_ns > 0)
            .then(|| self.cpu_used_ns as f64 / self.cpu_wanted_run_ns as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn table() -> Timetable {
        Timetable {
            start_ns: 1_000 * MS,
            period_ns: 10 * MS,
            end_ns: 1_100 * MS,
        }
    }

    fn frame(index: u64, start_delay_ms: u64, finish_ms: u64) -> FrameTimes {
        let t = table();
        FrameTimes {
            intended_ns: t.start_of(index),
            started_ns: t.start_of(index) + start_delay_ms * MS,
            finished_ns: t.start_of(index) + finish_ms * MS,
            deadline_ns: t.deadline_of(index),
            cpu_wanted_ns: 2 * MS,
            cpu_used_ns: 2 * MS,
        }
    }

    #[test]
    fn timetable_counts_periods_starting_before_the_end() {
        assert_eq!(table().periods(), 10);
        let partial = Timetable {
            end_ns: 1_095 * MS,
            ..table()
        };
        assert_eq!(partial.periods(), 10);
    }

    #[test]
    fn on_time_frame_moves_to_the_next_period() {
        let t = table();
        assert_eq!(t.next_frame(0, t.start_of(0) + 3 * MS), 1);
        assert_eq!(t.dropped_between(0, 1), 0);
    }

    #[test]
    fn frame_finishing_in_the_next_period_drops_nothing() {
        let t = table();
        // Frame 0 ran over into period 1: frame 1 is still attempted, late.
        assert_eq!(t.next_frame(0, t.start_of(1) + 4 * MS), 1);
    }

    #[test]
    fn frames_whose_deadline_passed_are_dropped() {
        let t = table();
        // Frame 2 finished 35 ms after its start: in period 5. Periods 3 and 4
        // have ended, so they are dropped and frame 5 runs next.
        let next = t.next_frame(2, t.start_of(2) + 35 * MS);
        assert_eq!(next, 5);
        assert_eq!(t.dropped_between(2, next), 2);
    }

    #[test]
    fn drops_past_the_end_are_not_counted() {
        let t = table();
        let next = t.next_frame(8, t.end_ns + 50 * MS);
        assert_eq!(t.dropped_between(8, next), 1);
    }

    #[test]
    fn deadlines_latency_and_lateness_are_accounted() {
        let mut account = FrameAccount::default();
        account.record(&frame(0, 1, 3)); // met, latency 1 ms
        account.record(&frame(1, 9, 12)); // missed by 2 ms
        account.record(&frame(2, 0, 15)); // missed by 5 ms
        account.record_dropped(2, 4 * MS);
        assert_eq!(account.executed, 3);
        assert_eq!(account.deadlines_total(), 5);
        assert_eq!(account.met, 1);
        assert_eq!(account.deadlines_total() - account.met, 4);
        assert_eq!(account.late_max_ns, 5 * MS);
        assert_eq!(account.late_sum_ns, 7 * MS);
        let latency = account.latency.summary().unwrap();
        assert!((latency.max_us - 9_000.0).abs() < 10.0);
        assert!((latency.mean_us - 10_000.0 / 3.0).abs() < 5.0);
    }

    #[test]
    fn desired_cpu_counts_dropped_frames_as_wanted() {
        let mut account = FrameAccount::default();
        account.record(&frame(0, 0, 2));
        account.record(&frame(1, 0, 2));
        account.record_dropped(2, 4 * MS);
        assert_eq!(account.desired_cpu_pct(), Some(50.0));
        assert_eq!(account.work_ratio(), Some(1.0));
    }

    #[test]
    fn no_wanted_cpu_means_no_percentage() {
        assert_eq!(FrameAccount::default().desired_cpu_pct(), None);
    }
}
