//! Pure accounting of periodic frames: the timetable, frame dropping, deadlines,
//! lateness and % desired CPU, in total and per sub-window of the
//! measurement. Everything here is a function of timestamps passed in, so it
//! is tested with scripted times; the real clock is plugged in by the periodic
//! simulation (`sim::periodic`) and the probes.

use super::batches::{self, BatchLatency, BATCHES};
use super::latency::LatencyHistogram;
use super::series::SeriesRecorder;
use super::window::Window;

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

    /// The frame to run after frame `index` finished (or woke too late to
    /// run) at `finished_ns`. Frames whose deadline has already passed are
    /// dropped, as a player drops frames it can no longer show in time; the
    /// frame whose period is running now is still attempted (late). The
    /// result may lie past the last period.
    pub fn next_frame(&self, index: u64, finished_ns: u64) -> u64 {
        let period_now = finished_ns.saturating_sub(self.start_ns) / self.period_ns;
        (index + 1).max(period_now)
    }

    /// Whether frame `index`, woken at `woke_ns`, woke after its period was
    /// over (past its deadline): it is then dropped, not run, as
    /// interbench drops it and a player skips a frame it can no longer show.
    pub fn woke_too_late(&self, index: u64, woke_ns: u64) -> bool {
        woke_ns > self.deadline_of(index)
    }

    /// How many measured periods lie strictly between frame `index` and `next`
    /// (the dropped frames), not counting periods past the end.
    pub fn dropped_between(&self, index: u64, next: u64) -> u64 {
        next.min(self.periods()).saturating_sub(index + 1)
    }

    /// The sub-window of the measurement that period `index` belongs to: the
    /// one its intended start falls in.
    pub fn batch_of(&self, index: u64) -> usize {
        let window = Window {
            start_ns: self.start_ns,
            end_ns: self.end_ns,
        };
        batches::batch_of(window, self.start_of(index))
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
    /// CPU time the frame really consumed (`measure::cpu_time`).
    pub cpu_used_ns: u64,
}

/// Running figures of the periods that began in one sub-window.
#[derive(Debug, Clone, Default)]
pub struct PeriodBatch {
    /// Latency of the frames that woke (ran, or woke too late to run).
    pub latency: BatchLatency,
    /// Frames that ran.
    pub executed: u64,
    /// Periods, frames run plus frames dropped.
    pub periods: u64,
    /// Frames that ran and finished by their deadline.
    pub met: u64,
    /// CPU time wanted by the periods, run or dropped.
    pub cpu_wanted_ns: u64,
    /// CPU time received by the frames that ran (see
    /// [`FrameAccount::cpu_received_ns`]).
    pub cpu_received_ns: u64,
    /// CPU time used by the frames that ran.
    pub cpu_used_ns: u64,
}

/// Running totals over the frames of one measurement, and the same per
/// sub-window. All storage is allocated on creation, so accounting never
/// allocates.
#[derive(Debug, Clone, Default)]
pub struct FrameAccount {
    /// Latency of every frame that woke: woken (started) minus intended
    /// start, for the frames that ran and those that woke too late to run.
    pub latency: LatencyHistogram,
    /// Frames that ran.
    pub executed: u64,
    /// Frames dropped because their deadline had passed before they could
    /// start: skipped to catch up, or woken too late.
    pub dropped: u64,
    /// The dropped frames that woke, after their period was over.
    pub woke_late: u64,
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
    /// CPU time received by the frames that ran: by each, what it used up
    /// to what it wanted. A frame that runs does all its work; the CPU time
    /// its work used past what it wanted is the overshoot of the work's
    /// stopping rule (`measure::work`), not CPU it asked for.
    pub cpu_received_ns: u64,
    /// CPU time used by the frames that ran (their work's overshoot
    /// included).
    pub cpu_used_ns: u64,
    /// The periods of each sub-window, in time order.
    pub batches: [PeriodBatch; BATCHES],
    /// The latency of each frame that ran over time, when kept (a probe
    /// keeps it, a load does not).
    pub series: Option<SeriesRecorder>,
}

impl FrameAccount {
    /// An empty account that also keeps the latency over time, in a series
    /// of at most `points` points (allocated now).
    pub fn with_series(points: usize) -> Self {
        Self {
            series: Some(SeriesRecorder::with_points(points)),
            ..Self::default()
        }
    }

    /// Accounts frame `index` of `timetable`, which ran as `frame`, and the
    /// frames dropped after it; returns the frame to run next (see
    /// [`Timetable::next_frame`]). `cpu_wanted_ns(i)` is the CPU time frame
    /// `i` wants.
    pub fn record_frame(
        &mut self,
        timetable: &Timetable,
        index: u64,
        frame: &FrameTimes,
        cpu_wanted_ns: impl Fn(u64) -> u64,
    ) -> u64 {
        self.record_wake(timetable, index, frame.started_ns);
        self.record(timetable.batch_of(index), frame);
        self.skip_to_next(timetable, index, frame.finished_ns, cpu_wanted_ns)
    }

    /// Accounts frame `index` of `timetable`, which woke at `woke_ns`, after
    /// its period was over ([`Timetable::woke_too_late`]): its latency, and
    /// the frame itself dropped, with the frames dropped after it; returns
    /// the frame to run next.
    pub fn record_woken_late(
        &mut self,
        timetable: &Timetable,
        index: u64,
        woke_ns: u64,
        cpu_wanted_ns: impl Fn(u64) -> u64,
    ) -> u64 {
        self.record_wake(timetable, index, woke_ns);
        self.woke_late += 1;
        self.record_dropped(timetable.batch_of(index), cpu_wanted_ns(index));
        self.skip_to_next(timetable, index, woke_ns, cpu_wanted_ns)
    }

    /// Accounts the latency of frame `index`, which woke at `woke_ns`.
    fn record_wake(&mut self, timetable: &Timetable, index: u64, woke_ns: u64) {
        let intended_ns = timetable.start_of(index);
        let latency_ns = woke_ns.saturating_sub(intended_ns);
        self.latency.record_ns(latency_ns);
        self.batches[timetable.batch_of(index)]
            .latency
            .record_ns(latency_ns);
        if let Some(series) = &mut self.series {
            series.record(intended_ns.saturating_sub(timetable.start_ns), latency_ns);
        }
    }

    /// Accounts the frames dropped after frame `index`, which ended (ran or
    /// was dropped) at `ended_ns`, and returns the frame to run next.
    fn skip_to_next(
        &mut self,
        timetable: &Timetable,
        index: u64,
        ended_ns: u64,
        cpu_wanted_ns: impl Fn(u64) -> u64,
    ) -> u64 {
        let next = timetable.next_frame(index, ended_ns);
        let dropped = index + 1..index + 1 + timetable.dropped_between(index, next);
        for period in dropped {
            self.record_dropped(timetable.batch_of(period), cpu_wanted_ns(period));
        }
        next
    }

    /// Accounts one frame that ran (its latency apart), in sub-window
    /// `batch`.
    fn record(&mut self, batch: usize, frame: &FrameTimes) {
        let met = frame.finished_ns <= frame.deadline_ns;
        self.executed += 1;
        if met {
            self.met += 1;
        } else {
            let late = frame.finished_ns - frame.deadline_ns;
            self.late_sum_ns += late;
            self.late_max_ns = self.late_max_ns.max(late);
        }
        self.cpu_wanted_ns += frame.cpu_wanted_ns;
        self.cpu_wanted_run_ns += frame.cpu_wanted_ns;
        let received_ns = frame.cpu_used_ns.min(frame.cpu_wanted_ns);
        self.cpu_received_ns += received_ns;
        self.cpu_used_ns += frame.cpu_used_ns;
        let batch = &mut self.batches[batch];
        batch.executed += 1;
        batch.periods += 1;
        batch.met += u64::from(met);
        batch.cpu_wanted_ns += frame.cpu_wanted_ns;
        batch.cpu_received_ns += received_ns;
        batch.cpu_used_ns += frame.cpu_used_ns;
    }

    /// Accounts one dropped frame that wanted `cpu_wanted_ns`, in sub-window
    /// `batch`.
    fn record_dropped(&mut self, batch: usize, cpu_wanted_ns: u64) {
        self.dropped += 1;
        self.cpu_wanted_ns += cpu_wanted_ns;
        let batch = &mut self.batches[batch];
        batch.periods += 1;
        batch.cpu_wanted_ns += cpu_wanted_ns;
    }

    /// Every period of the measurement: frames that ran plus frames dropped.
    pub fn deadlines_total(&self) -> u64 {
        self.executed + self.dropped
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

    /// Frame `index` of `t`, started `delay_ms` late, done `finish_ms` after
    /// its intended start, wanting and using 2 ms.
    fn frame_of(t: &Timetable, index: u64, delay_ms: u64, finish_ms: u64) -> FrameTimes {
        FrameTimes {
            intended_ns: t.start_of(index),
            started_ns: t.start_of(index) + delay_ms * MS,
            finished_ns: t.start_of(index) + finish_ms * MS,
            deadline_ns: t.deadline_of(index),
            cpu_wanted_ns: 2 * MS,
            cpu_used_ns: 2 * MS,
        }
    }

    fn frame(index: u64, delay_ms: u64, finish_ms: u64) -> FrameTimes {
        frame_of(&table(), index, delay_ms, finish_ms)
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
        let t = table();
        let mut account = FrameAccount::default();
        account.record_frame(&t, 0, &frame(0, 1, 3), two_ms); // met, latency 1 ms
        account.record_frame(&t, 1, &frame(1, 9, 12), two_ms); // missed by 2 ms
        account.record_frame(&t, 2, &frame(2, 0, 15), two_ms); // missed by 5 ms
        account.record_dropped(1, 2 * MS);
        account.record_dropped(1, 2 * MS);
        assert_eq!(account.executed, 3);
        assert_eq!(account.deadlines_total(), 5);
        assert_eq!(account.met, 1);
        assert_eq!(account.deadlines_total() - account.met, 4);
        assert_eq!(account.late_max_ns, 5 * MS);
        assert_eq!(account.late_sum_ns, 7 * MS);
        assert!((account.latency.max_ns() as f64 - 9_000.0 * 1e3).abs() < 10e3);
        let sum_ns: u64 = account.batches.iter().map(|b| b.latency.sum_ns()).sum();
        assert_eq!(sum_ns, 10 * MS);
    }

    #[test]
    fn desired_cpu_counts_dropped_frames_as_wanted() {
        let t = table();
        let mut account = FrameAccount::default();
        account.record_frame(&t, 0, &frame(0, 0, 2), two_ms);
        account.record_frame(&t, 1, &frame(1, 0, 2), two_ms);
        account.record_dropped(0, 2 * MS);
        account.record_dropped(0, 2 * MS);
        assert_eq!(account.cpu_wanted_ns, 2 * account.cpu_used_ns);
        assert_eq!(account.cpu_wanted_run_ns, account.cpu_used_ns);
    }

    /// 40 periods of 10 ms: sub-windows of 20 ms, two periods each.
    fn long_table() -> Timetable {
        Timetable {
            end_ns: 1_400 * MS,
            ..table()
        }
    }

    fn two_ms(_: u64) -> u64 {
        2 * MS
    }

    #[test]
    fn periods_belong_to_the_sub_window_of_their_intended_start() {
        let t = long_table();
        let batches: Vec<usize> = (0..t.periods()).map(|i| t.batch_of(i)).collect();
        let expected: Vec<usize> = (0..BATCHES).flat_map(|k| [k, k]).collect();
        assert_eq!(batches, expected);
    }

    #[test]
    fn a_last_partial_period_falls_in_the_last_sub_window() {
        // 395 ms: sub-windows of 19.75 ms; period 39 starts at 390 ms, in
        // the last one, and ends past the window.
        let t = Timetable {
            end_ns: 1_395 * MS,
            ..table()
        };
        assert_eq!(t.periods(), 40);
        assert_eq!(t.batch_of(0), 0);
        assert_eq!(t.batch_of(1), 0); // 10 ms < 19.75 ms
        assert_eq!(t.batch_of(2), 1); // 20 ms ≥ 19.75 ms
        assert_eq!(t.batch_of(38), 19); // 380 ms ≥ 19 × 19.75 = 375.25 ms
        assert_eq!(t.batch_of(39), BATCHES - 1);
    }

    #[test]
    fn a_frame_counts_in_the_sub_window_of_its_period() {
        let t = long_table();
        let mut account = FrameAccount::default();
        // Period 3 (sub-window 1) starts 4 ms late and misses its deadline.
        let next = account.record_frame(&t, 3, &frame_of(&t, 3, 4, 12), two_ms);
        assert_eq!(next, 4);
        let batch = &account.batches[1];
        assert_eq!(batch.latency.count(), 1);
        assert_eq!(batch.latency.sum_ns(), 4 * MS);
        assert_eq!((batch.periods, batch.met), (1, 0));
        assert_eq!((batch.cpu_wanted_ns, batch.cpu_used_ns), (2 * MS, 2 * MS));
        let mut others = account.batches.iter().enumerate().filter(|(k, _)| *k != 1);
        assert!(others.all(|(_, b)| b.periods == 0));
    }

    #[test]
    fn dropped_frames_count_in_their_own_periods_sub_windows() {
        let t = long_table();
        let mut account = FrameAccount::default();
        // Frame 3 (sub-window 1) ends 45 ms after its start, in period 7:
        // periods 4 and 5 (sub-window 2) and 6 (sub-window 3) are dropped.
        let next = account.record_frame(&t, 3, &frame_of(&t, 3, 0, 45), two_ms);
        assert_eq!(next, 7);
        assert_eq!(account.dropped, 3);
        let b = &account.batches;
        assert_eq!((b[1].periods, b[1].latency.count()), (1, 1));
        assert_eq!((b[2].periods, b[2].latency.count()), (2, 0));
        assert_eq!((b[3].periods, b[3].latency.count()), (1, 0));
        assert_eq!(b[2].cpu_wanted_ns, 4 * MS);
        assert_eq!((b[2].cpu_used_ns, b[2].met), (0, 0));
    }

    #[test]
    fn sub_windows_without_frames_have_no_latency() {
        let t = long_table();
        let mut account = FrameAccount::default();
        // Frame 0 runs 105 ms: periods 1 to 9 are dropped, so sub-windows
        // 1 to 4 have periods but no frame, and the rest nothing at all.
        account.record_frame(&t, 0, &frame_of(&t, 0, 0, 105), two_ms);
        for batch in &account.batches[1..5] {
            assert_eq!(batch.periods, 2);
            assert_eq!(batch.latency.count(), 0);
            assert_eq!(batch.latency.sum_ns(), 0);
        }
        assert!(account.batches[5..].iter().all(|b| b.periods == 0));
    }

    #[test]
    fn a_frame_woken_after_its_period_is_dropped_with_its_latency_counted() {
        let t = long_table();
        let mut account = FrameAccount::with_series(64);
        // Frame 3 (sub-window 1, deadline 40 ms) wakes 43 ms after its
        // start, in period 7: it is not run, and periods 4 to 6 are over.
        let woke_ns = t.start_of(3) + 43 * MS;
        assert!(t.woke_too_late(3, woke_ns));
        assert!(
            !t.woke_too_late(3, t.deadline_of(3)),
            "at the deadline: run"
        );
        let next = account.record_woken_late(&t, 3, woke_ns, two_ms);
        assert_eq!(next, 7);
        assert_eq!((account.executed, account.met), (0, 0));
        assert_eq!((account.dropped, account.woke_late), (4, 1));
        assert_eq!(account.deadlines_total(), 4);
        assert_eq!(account.latency.len(), 1);
        assert!((account.latency.max_ns() as f64 - 43e6).abs() < 43e3);
        assert_eq!((account.cpu_wanted_ns, account.cpu_used_ns), (8 * MS, 0));
        assert_eq!(account.cpu_wanted_run_ns, 0);
        assert_eq!((account.late_sum_ns, account.late_max_ns), (0, 0));
        let b = &account.batches[1];
        assert_eq!((b.periods, b.executed, b.met), (1, 0, 0));
        assert_eq!(b.latency.count(), 1);
        let points = account.series.as_ref().unwrap().points();
        assert_eq!((points[0].offset_ns, points[0].sum_ns), (30 * MS, 43 * MS));
    }

    #[test]
    fn a_frame_woken_late_within_its_period_still_runs() {
        let t = long_table();
        let mut account = FrameAccount::default();
        // Woken 8 ms into its 10 ms period: run, and late.
        assert!(!t.woke_too_late(3, t.start_of(3) + 8 * MS));
        account.record_frame(&t, 3, &frame_of(&t, 3, 8, 11), two_ms);
        assert_eq!(
            (account.executed, account.dropped, account.woke_late),
            (1, 0, 0)
        );
        assert_eq!(account.batches[1].executed, 1);
    }

    #[test]
    fn the_series_holds_each_frame_that_ran_at_its_intended_start() {
        let t = long_table();
        let mut account = FrameAccount::with_series(64);
        // Frame 0 runs 35 ms (periods 1 and 2 dropped), frame 3 starts
        // 4 ms late.
        let next = account.record_frame(&t, 0, &frame_of(&t, 0, 1, 35), two_ms);
        account.record_frame(&t, next, &frame_of(&t, next, 4, 6), two_ms);
        let points = account.series.as_ref().unwrap().points();
        let offsets_and_latencies: Vec<(u64, u64)> =
            points.iter().map(|p| (p.offset_ns, p.sum_ns)).collect();
        assert_eq!(offsets_and_latencies, [(0, MS), (30 * MS, 4 * MS)]);
        assert!(FrameAccount::default().series.is_none());
    }

    #[test]
    fn sub_windows_add_up_to_the_totals() {
        let t = Timetable {
            end_ns: 1_395 * MS,
            ..table()
        };
        let mut account = FrameAccount::default();
        let mut index = 0;
        while index < t.periods() {
            // A mix of on-time, late, missed and long frames (which drop
            // periods, including past the end).
            let (delay_ms, finish_ms) = match index % 7 {
                0 => (0, 2),
                1 => (3, 9),
                2 => (6, 14),
                3 => (1, 33),
                _ => (index % 3, 5),
            };
            let cpu = |i: u64| (i % 4 + 1) * MS;
            let frame = FrameTimes {
                cpu_wanted_ns: cpu(index),
                cpu_used_ns: cpu(index) / 2,
                ..frame_of(&t, index, delay_ms, finish_ms)
            };
            index = account.record_frame(&t, index, &frame, cpu);
        }
        assert!(account.dropped > 0 && account.met < account.executed);
        let sum = |field: fn(&PeriodBatch) -> u64| account.batches.iter().map(field).sum::<u64>();
        assert_eq!(sum(|b| b.periods), account.deadlines_total());
        assert_eq!(account.deadlines_total(), t.periods());
        assert_eq!(sum(|b| b.met), account.met);
        assert_eq!(sum(|b| b.executed), account.executed);
        assert_eq!(
            sum(|b| b.latency.count()),
            account.executed + account.woke_late
        );
        assert_eq!(sum(|b| b.cpu_wanted_ns), account.cpu_wanted_ns);
        assert_eq!(sum(|b| b.cpu_used_ns), account.cpu_used_ns);
    }
}
