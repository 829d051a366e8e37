//! What one thread of a workload records: per activation (timer event) its
//! wake-up latency, slack and performance index, per phase loop its period
//! and run time. Everything is allocated when the recorder is made; the
//! recording itself never allocates.

use crate::measure::batches::{batch_of, BatchLatency, BATCHES};
use crate::measure::latency::LatencyHistogram;
use crate::measure::window::Window;

/// One thread's records.
#[derive(Debug)]
pub struct ThreadRecord {
    /// Index of the thread's task in the workload.
    pub task: usize,
    /// Wake-up latency of each activation (0 when it did not sleep).
    pub wakeup: LatencyHistogram,
    /// How late each late activation began (−slack of those with negative
    /// slack): histograms hold no negative values.
    pub overrun: LatencyHistogram,
    /// Exact sums of the two, in ns.
    pub wakeup_sum_ns: u64,
    pub overrun_sum_ns: u64,
    /// Activations (timer events begun within the window).
    pub activations: u64,
    /// Activations with negative slack.
    pub negative: u64,
    /// Sum of the slacks, in ns (negative ones included).
    pub slack_sum_ns: i64,
    /// Sum of LISA's performance index over the activations that have one.
    pub perf_sum: f64,
    /// Activations with a performance index (period longer than the run).
    pub perf_count: u64,
    /// Phase loops begun in the window.
    pub loops: u64,
    /// Sum of the phase loops' periods (start to start), and how many.
    pub period_sum_ns: u64,
    pub periods: u64,
    /// Wall time spent in `run` and `runtime` events.
    pub run_ns: u64,
    /// Wake-up latency per sub-window of the measurement.
    pub batches: [BatchLatency; BATCHES],
    /// The first scheduling setting that could not be applied.
    pub sched_failure: Option<String>,
    window: Window,
}

impl ThreadRecord {
    /// Empty records of a thread of task `task`, made resident; they
    /// count nothing until [`ThreadRecord::open`].
    pub fn new(task: usize) -> Self {
        let mut record = Self {
            task,
            wakeup: LatencyHistogram::new(),
            overrun: LatencyHistogram::new(),
            wakeup_sum_ns: 0,
            overrun_sum_ns: 0,
            activations: 0,
            negative: 0,
            slack_sum_ns: 0,
            perf_sum: 0.0,
            perf_count: 0,
            loops: 0,
            period_sum_ns: 0,
            periods: 0,
            run_ns: 0,
            batches: Default::default(),
            sched_failure: None,
            window: Window {
                start_ns: 0,
                end_ns: 0,
            },
        };
        record.wakeup.touch();
        record.overrun.touch();
        record.batches.iter_mut().for_each(BatchLatency::touch);
        record
    }

    /// Counts what happens within `window` from now on.
    pub fn open(&mut self, window: Window) {
        self.window = window;
    }

    /// Whether `at_ns` lies in the measurement window.
    fn counts(&self, at_ns: u64) -> bool {
        (self.window.start_ns..self.window.end_ns).contains(&at_ns)
    }

    /// An activation that began at `began_ns` with `slack_ns` and woke
    /// `wakeup_ns` after its expiry; `idle_ns` is period − run of its phase
    /// (LISA's performance index is slack / idle), when positive.
    pub fn activation(
        &mut self,
        began_ns: u64,
        slack_ns: i64,
        wakeup_ns: u64,
        idle_ns: Option<u64>,
    ) {
        if !self.counts(began_ns) {
            return;
        }
        self.activations += 1;
        self.wakeup.record_ns(wakeup_ns);
        self.wakeup_sum_ns += wakeup_ns;
        self.batches[batch_of(self.window, began_ns)].record_ns(wakeup_ns);
        self.slack_sum_ns += slack_ns;
        if slack_ns < 0 {
            self.negative += 1;
            self.overrun.record_ns(slack_ns.unsigned_abs());
            self.overrun_sum_ns += slack_ns.unsigned_abs();
        }
        if let Some(idle_ns) = idle_ns {
            self.perf_sum += perf_index(slack_ns, idle_ns);
            self.perf_count += 1;
        }
    }

    /// A phase loop that began at `began_ns`, the previous one of the same
    /// phase at `previous_ns`.
    pub fn phase_loop(&mut self, began_ns: u64, previous_ns: Option<u64>) {
        if !self.counts(began_ns) {
            return;
        }
        self.loops += 1;
        if let Some(previous_ns) = previous_ns {
            self.period_sum_ns += began_ns - previous_ns;
            self.periods += 1;
        }
    }

    /// `ns` of `run`/`runtime` work that began at `began_ns`.
    pub fn ran(&mut self, began_ns: u64, ns: u64) {
        if self.counts(began_ns) {
            self.run_ns += ns;
        }
    }
}

/// LISA's performance index of one activation: slack over the idle time
/// the period leaves (period − run): 1 when all of it is left, 0 at the
/// deadline, negative when late.
pub fn perf_index(slack_ns: i64, idle_ns: u64) -> f64 {
    slack_ns as f64 / idle_ns as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn activations_count_only_inside_the_window_with_signed_slack() {
        let mut r = ThreadRecord::new(0);
        r.open(Window::ms(1_000, 2_000));
        r.activation(500 * MS, 8 * MS as i64, 10_000, Some(8 * MS));
        assert_eq!(r.activations, 0, "before the window");
        r.activation(1_000 * MS, 8 * MS as i64, 10_000, Some(8 * MS));
        r.activation(1_010 * MS, -(2 * MS as i64), 0, Some(8 * MS));
        r.activation(1_020 * MS, 4 * MS as i64, 30_000, None);
        assert_eq!((r.activations, r.negative), (3, 1));
        assert_eq!(r.slack_sum_ns, 10 * MS as i64);
        assert_eq!(r.overrun.max_ns() / 1000, 2_000);
        assert_eq!(r.perf_count, 2);
        assert!((r.perf_sum - (1.0 - 0.25)).abs() < 1e-12);
        assert_eq!(r.wakeup.len(), 3);
    }

    #[test]
    fn the_performance_index_is_slack_over_idle_time() {
        assert_eq!(perf_index(8 * MS as i64, 8 * MS), 1.0);
        assert_eq!(perf_index(0, 8 * MS), 0.0);
        assert_eq!(perf_index(-(4 * MS as i64), 8 * MS), -0.5);
    }

    #[test]
    fn periods_run_from_start_to_start() {
        let mut r = ThreadRecord::new(0);
        r.open(Window::ms(0, 1_000));
        r.phase_loop(0, None);
        r.phase_loop(10 * MS, Some(0));
        r.phase_loop(21 * MS, Some(10 * MS));
        assert_eq!((r.loops, r.periods, r.period_sum_ns), (3, 2, 21 * MS));
    }
}
