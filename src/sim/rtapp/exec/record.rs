//! What one thread of a workload records: per activation (timer event) its
//! wake-up latency, start delay, slack and performance index, per phase
//! loop its period, each counted under the phase it happened in; the
//! wake-up latency, start delay and negative slacks per sub-window; and,
//! when the run splits late events, the split of the work after each
//! wake-up. Everything is allocated when the recorder is made;
//! the recording itself never allocates.

use crate::measure::attrib::Splitting;
use crate::measure::batches::{batch_of, BatchLatency, BATCHES};
use crate::measure::late::{EventSplit, EventTimes, LateAccount};
use crate::measure::latency::LatencyHistogram;
use crate::measure::window::Window;

/// One thread's records.
#[derive(Debug)]
pub struct ThreadRecord {
    /// Index of the thread's task in the workload.
    pub task: usize,
    /// What happened in each phase of the task, in the task's order.
    pub phases: Vec<PhaseRecord>,
    /// Wake-up latency per sub-window of the measurement.
    pub batches: [BatchLatency; BATCHES],
    /// Start delay per sub-window.
    pub start_batches: [BatchLatency; BATCHES],
    /// Activations with negative slack per sub-window.
    pub negative_batches: [u64; BATCHES],
    /// The first thing the thread could not do as its file asked (a
    /// scheduling setting, an `iorun` write).
    pub failure: Option<String>,
    /// The split of the work after each wake-up, once the thread ran (off
    /// when the run does not split, or the task has no timer).
    pub splitting: Splitting,
    /// The account the split fills, until the thread opens it.
    late_account: Option<LateAccount>,
    /// The wake-up whose work is being done: it ends at the next timer
    /// event, late when that event began after its expiry by more than
    /// the thread's own waits in between.
    pending: Option<EventTimes>,
    /// Work (`run`, `runtime`) the thread's events asked for since its
    /// last timer event, ns: what the work after a wake-up wanted.
    own_run_ns: u64,
    /// Waiting the thread's events asked for since its last timer event,
    /// ns: each `sleep` as long as asked, each `suspend`, `wait`, `sync`,
    /// `barrier` and `lock` as long as it took (waiting for the
    /// workload's own threads).
    own_wait_ns: u64,
    window: Window,
}

/// What the activations and loops of one phase of one thread add up to.
#[derive(Debug)]
pub struct PhaseRecord {
    /// Wake-up latency of each activation (0 when it did not sleep).
    pub wakeup: LatencyHistogram,
    /// Start delay of each activation: its wake-up latency, or how late
    /// its timer event began when it was late (what the wake-up latency
    /// counts as 0).
    pub start_delay: LatencyHistogram,
    /// How late each late activation began (−slack of those with negative
    /// slack): histograms hold no negative values.
    pub overrun: LatencyHistogram,
    /// The slack of every other activation.
    pub slack: LatencyHistogram,
    /// Exact sums of the wake-up latencies, start delays and overruns, in
    /// ns (the slacks' is `slack_sum_ns` + `overrun_sum_ns`).
    pub wakeup_sum_ns: u64,
    pub start_delay_sum_ns: u64,
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
}

impl PhaseRecord {
    /// Empty records, made resident.
    fn new() -> Self {
        let mut record = Self {
            wakeup: LatencyHistogram::new(),
            start_delay: LatencyHistogram::new(),
            overrun: LatencyHistogram::new(),
            slack: LatencyHistogram::new(),
            wakeup_sum_ns: 0,
            start_delay_sum_ns: 0,
            overrun_sum_ns: 0,
            activations: 0,
            negative: 0,
            slack_sum_ns: 0,
            perf_sum: 0.0,
            perf_count: 0,
            loops: 0,
            period_sum_ns: 0,
            periods: 0,
        };
        record.wakeup.touch();
        record.start_delay.touch();
        record.overrun.touch();
        record.slack.touch();
        record
    }
}

/// One activation as the executor saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActivationTimes {
    /// When its timer event began.
    pub began_ns: u64,
    /// The timer's expiry for it.
    pub expiry_ns: u64,
    /// Expiry − the event's beginning (negative when late).
    pub slack_ns: i64,
    /// Its wake-up latency (0 when it did not sleep).
    pub wakeup_ns: u64,
    /// The CPU-bound part of its phase (`run` + `runtime`), ns.
    pub run_ns: u64,
    /// The timer's period, ns.
    pub period_ns: u64,
}

impl ActivationTimes {
    /// How late after its expiry the activation's work could start: its
    /// wake-up latency when it slept, else how late its timer event began
    /// (−slack; 0 when it began exactly at the expiry).
    pub fn start_delay_ns(&self) -> u64 {
        match u64::try_from(self.slack_ns) {
            Ok(_) => self.wakeup_ns,
            Err(_) => self.slack_ns.unsigned_abs(),
        }
    }
}

#[cfg(test)]
impl ActivationTimes {
    /// An activation of a 10 ms period with 2 ms of run beginning at
    /// `began_ns`, expiring `slack_ms` later, woken `wakeup_us` late.
    pub fn for_tests(began_ns: u64, slack_ms: i64, wakeup_us: u64) -> Self {
        const MS: i64 = 1_000_000;
        Self {
            began_ns,
            expiry_ns: (began_ns as i64 + slack_ms * MS) as u64,
            slack_ns: slack_ms * MS,
            wakeup_ns: wakeup_us * 1000,
            run_ns: 2 * MS as u64,
            period_ns: 10 * MS as u64,
        }
    }
}

impl ThreadRecord {
    /// Empty records of a thread of task `task`, which has `phases`
    /// phases, made resident, with an account for the split of its late
    /// events when `split`; they count nothing until
    /// [`ThreadRecord::open`].
    pub fn new(task: usize, phases: usize, split: bool) -> Self {
        let mut record = Self {
            task,
            phases: (0..phases).map(|_| PhaseRecord::new()).collect(),
            batches: Default::default(),
            start_batches: Default::default(),
            negative_batches: [0; BATCHES],
            failure: None,
            splitting: Splitting::default(),
            late_account: split.then(LateAccount::new),
            pending: None,
            own_run_ns: 0,
            own_wait_ns: 0,
            window: Window {
                start_ns: 0,
                end_ns: 0,
            },
        };
        record.batches.iter_mut().for_each(BatchLatency::touch);
        record
            .start_batches
            .iter_mut()
            .for_each(BatchLatency::touch);
        record
    }

    /// Logs up to `capacity` of its events whole (for `run --trace`), when
    /// it splits them; the log is allocated now.
    pub fn log_events(&mut self, capacity: usize) {
        self.late_account = self.late_account.take().map(|a| a.with_log(capacity));
    }

    /// Counts what happens within `window` from now on (the late split's
    /// events per sub-window of it too).
    pub fn open(&mut self, window: Window) {
        self.window = window;
        if let Some(account) = &mut self.late_account {
            account.set_window(window);
        }
        self.splitting.set_window(window);
    }

    /// Starts the split of late events on the calling thread, the one
    /// that runs the task (nothing when the record has no account).
    pub fn start_splitting(&mut self) {
        self.splitting = Splitting::open(self.late_account.take());
    }

    /// Whether `at_ns` lies in the measurement window.
    fn counts(&self, at_ns: u64) -> bool {
        (self.window.start_ns..self.window.end_ns).contains(&at_ns)
    }

    /// A timer event began at `began_ns`, due to expire at `expiry_ns`:
    /// ends the split of the work after the last wake-up, late when this
    /// event began after its expiry by more than the thread's own waits
    /// since (rt-app's negative slack, less what the workload itself asked
    /// to wait: a scripted sleep makes no late event), those waits taken
    /// out of its time off the CPU and the work its events asked for as the
    /// CPU it wanted; returns that work's split, when it splits one.
    pub fn timer_began(&mut self, began_ns: u64, expiry_ns: u64) -> Option<EventSplit> {
        let pending = self.pending.take().filter(|_| self.counts(began_ns));
        let split = pending.and_then(|times| {
            let times = EventTimes {
                cpu_wanted_ns: (self.own_run_ns > 0).then_some(self.own_run_ns),
                ..times
            };
            let late = began_ns > expiry_ns.saturating_add(self.own_wait_ns);
            self.splitting.ended_judged(times, late, self.own_wait_ns)
        });
        self.own_run_ns = 0;
        self.own_wait_ns = 0;
        split
    }

    /// The thread's events asked for `ns` of work.
    pub fn ran(&mut self, ns: u64) {
        self.own_run_ns += ns;
    }

    /// The thread's events asked it to wait `ns` (a sleep), or it waited
    /// that long for the workload's other threads.
    pub fn waited(&mut self, ns: u64) {
        self.own_wait_ns += ns;
    }

    /// The thread woke from a timer event (or went on without sleeping);
    /// returns the time, the wake-up's reading when the run splits.
    pub fn woke(&mut self) -> u64 {
        self.splitting.woke()
    }

    /// An activation of phase `phase`, as the executor saw it.
    pub fn activation(&mut self, phase: usize, a: ActivationTimes) {
        if !self.counts(a.began_ns) {
            return;
        }
        self.pending = Some(EventTimes {
            due_ns: a.expiry_ns,
            // Filled when the work ends (the work its events asked for).
            cpu_wanted_ns: None,
        });
        let batch = batch_of(self.window, a.began_ns);
        let start_delay_ns = a.start_delay_ns();
        self.batches[batch].record_ns(a.wakeup_ns);
        self.start_batches[batch].record_ns(start_delay_ns);
        let p = &mut self.phases[phase];
        p.activations += 1;
        p.wakeup.record_ns(a.wakeup_ns);
        p.wakeup_sum_ns += a.wakeup_ns;
        p.start_delay.record_ns(start_delay_ns);
        p.start_delay_sum_ns += start_delay_ns;
        p.slack_sum_ns += a.slack_ns;
        match u64::try_from(a.slack_ns) {
            Ok(slack_ns) => p.slack.record_ns(slack_ns),
            Err(_) => {
                self.negative_batches[batch] += 1;
                p.negative += 1;
                p.overrun.record_ns(a.slack_ns.unsigned_abs());
                p.overrun_sum_ns += a.slack_ns.unsigned_abs();
            }
        }
        if let Some(idle_ns) = a.period_ns.checked_sub(a.run_ns).filter(|&ns| ns > 0) {
            p.perf_sum += perf_index(a.slack_ns, idle_ns);
            p.perf_count += 1;
        }
    }

    /// A loop of phase `phase` that began at `began_ns`, the previous one
    /// of the same phase at `previous_ns`.
    pub fn phase_loop(&mut self, phase: usize, began_ns: u64, previous_ns: Option<u64>) {
        if !self.counts(began_ns) {
            return;
        }
        let p = &mut self.phases[phase];
        p.loops += 1;
        if let Some(previous_ns) = previous_ns {
            p.period_sum_ns += began_ns - previous_ns;
            p.periods += 1;
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

    fn activation(began_ms: u64, slack_ms: i64, wakeup_us: u64) -> ActivationTimes {
        ActivationTimes::for_tests(began_ms * MS, slack_ms, wakeup_us)
    }

    #[test]
    fn activations_count_only_inside_the_window_under_their_phase() {
        let mut r = ThreadRecord::new(0, 2, false);
        r.open(Window::ms(1_000, 2_000));
        r.activation(0, activation(500, 8, 10));
        assert_eq!(r.phases[0].activations, 0, "before the window");
        r.activation(0, activation(1_000, 8, 10));
        r.activation(0, activation(1_010, -2, 0));
        r.activation(1, activation(1_020, 4, 30));
        let (first, second) = (&r.phases[0], &r.phases[1]);
        assert_eq!((first.activations, first.negative), (2, 1));
        assert_eq!(first.slack_sum_ns, 6 * MS as i64);
        assert_eq!(first.overrun.max_ns() / 1000, 2_000);
        assert_eq!(first.slack.len(), 1, "the slack of the on-time one");
        assert!(first.slack.max_ns().abs_diff(8 * MS) < 10_000);
        assert_eq!(first.perf_count, 2);
        assert!((first.perf_sum - (1.0 - 0.25)).abs() < 1e-12);
        assert_eq!((second.activations, second.wakeup.len()), (1, 1));
        let batched: u64 = r.batches.iter().map(BatchLatency::count).sum();
        assert_eq!(batched, 3);
        assert_eq!(r.negative_batches.iter().sum::<u64>(), 1);
        // The late one started 2 ms after its expiry; its wake-up is 0.
        assert_eq!(first.start_delay_sum_ns, 10_000 + 2 * MS);
        assert_eq!(first.wakeup_sum_ns, 10_000);
    }

    #[test]
    fn the_performance_index_is_slack_over_idle_time() {
        assert_eq!(perf_index(8 * MS as i64, 8 * MS), 1.0);
        assert_eq!(perf_index(0, 8 * MS), 0.0);
        assert_eq!(perf_index(-(4 * MS as i64), 8 * MS), -0.5);
    }

    #[test]
    fn periods_run_from_start_to_start_per_phase() {
        let mut r = ThreadRecord::new(0, 2, false);
        r.open(Window::ms(0, 1_000));
        r.phase_loop(0, 0, None);
        r.phase_loop(0, 10 * MS, Some(0));
        r.phase_loop(1, 15 * MS, None);
        r.phase_loop(0, 21 * MS, Some(10 * MS));
        let first = &r.phases[0];
        assert_eq!(
            (first.loops, first.periods, first.period_sum_ns),
            (3, 2, 21 * MS)
        );
        assert_eq!((r.phases[1].loops, r.phases[1].periods), (1, 0));
    }

    /// A recorder of one phase that splits its work, counting from now on
    /// (returned too) for a long window.
    fn splitting_record() -> (ThreadRecord, u64) {
        let mut r = ThreadRecord::new(0, 1, true);
        r.start_splitting();
        let now = crate::measure::clock::now_ns();
        r.open(Window {
            start_ns: now,
            end_ns: now + 1_000_000 * MS,
        });
        (r, now)
    }

    #[test]
    fn the_work_after_a_wake_up_is_late_when_the_next_timer_event_began_after_its_expiry() {
        let (mut r, now) = splitting_record();
        // Woke at its expiry (now); the next event begins at once, long
        // before the next expiry: on time.
        r.timer_began(now, now);
        let woke_ns = r.woke();
        let times = |began_ns: u64, expiry_ns: u64| ActivationTimes {
            began_ns,
            expiry_ns,
            slack_ns: expiry_ns as i64 - began_ns as i64,
            wakeup_ns: 0,
            run_ns: 0,
            period_ns: 10 * MS,
        };
        r.activation(0, times(woke_ns, now));
        r.timer_began(crate::measure::clock::now_ns(), now + 1_000 * MS);
        r.woke();
        // Its work runs past the next expiry, which had passed: late.
        r.activation(0, times(crate::measure::clock::now_ns(), now + 1_000 * MS));
        let split = r.timer_began(crate::measure::clock::now_ns(), now);
        assert_eq!(split.map(|s| s.due_ns), Some(now + 1_000 * MS), "its split");
        let account = &r.splitting.splitter().expect("splitting").account;
        assert_eq!((account.events, account.late), (2, 1));
    }

    /// browser-tab's `read`: a 30 ms scripted sleep between two 10 ms
    /// timer events makes the second begin ~20 ms after its expiry
    /// (negative slack, as rt-app counts it) but no late event for the
    /// split, and no blocked time.
    #[test]
    fn a_scripted_sleep_between_timer_events_is_no_late_work() {
        let (mut r, _) = splitting_record();
        let woke_ns = r.woke();
        r.activation(0, ActivationTimes::for_tests(woke_ns, 0, 0));
        let expiry_ns = woke_ns + 10 * MS;
        let asleep_ns = crate::measure::clock::now_ns();
        std::thread::sleep(std::time::Duration::from_millis(30));
        // As the executor counts a wait for another thread: as long as it
        // took (a busy machine may oversleep).
        r.waited(crate::measure::clock::now_ns() - asleep_ns);
        let began_ns = crate::measure::clock::now_ns();
        assert!(began_ns > expiry_ns);
        r.timer_began(began_ns, expiry_ns);
        let account = &r.splitting.splitter().expect("splitting").account;
        assert_eq!((account.events, account.late), (1, 0));
        let blocked = account.all.blocked_ns;
        assert!(blocked < 30 * MS, "{blocked} ns blocked");
    }

    #[test]
    fn without_a_split_the_record_has_no_splitter() {
        let mut r = ThreadRecord::new(0, 1, false);
        r.start_splitting();
        assert!(r.splitting.splitter().is_none());
    }
}
