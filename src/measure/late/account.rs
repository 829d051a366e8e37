//! The running account of a measurement's events: totals, per cause, per
//! sub-window of the measurement and the worst late events, all allocated
//! when it is made.

use super::{Cause, EventLog, EventSplit, LoggedEvent, Parts, ThreadEvents};
use crate::measure::batches::{batch_of, BATCHES};
use crate::measure::latency::LatencyHistogram;
use crate::measure::window::Window;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The late events of one cause so far.
#[derive(Debug, Clone, Default)]
pub struct CauseAccount {
    /// Late events labelled with it.
    pub count: u64,
    /// Their delays added up.
    pub delay_ns: u64,
    /// The part its cause stands for, per event.
    pub part: LatencyHistogram,
    /// That part added up.
    pub part_sum_ns: u64,
}

/// The events of one sub-window of the measurement: how many were split,
/// and how many were late with each cause. Late events come in bursts (a
/// wait behind a burst of load delays several frames), so what varies
/// from one sub-window to the next, not from one event to the next, is
/// what a change between runs is judged against.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SubWindowCounts {
    /// Events split.
    pub events: u64,
    /// Of them, late.
    pub late: u64,
    causes: [u64; Cause::ALL.len()],
}

impl SubWindowCounts {
    /// Late events labelled `cause`.
    pub fn count(&self, cause: Cause) -> u64 {
        self.causes[cause.index()]
    }
}

/// How many of the worst late events a measurement keeps whole.
pub const WORST_KEPT: usize = 1_000;

/// A late event ranked by its delay (ties by order of arrival).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ranked {
    delay_ns: u64,
    order: u64,
    split: EventSplit,
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.delay_ns, Reverse(self.order)).cmp(&(other.delay_ns, Reverse(other.order)))
    }
}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// The running account of a measurement's events: the parts added up over
/// every event and over the late ones, the late events per cause, and the
/// worst [`WORST_KEPT`] late events whole. All its storage is allocated
/// when it is made, so accounting never allocates.
#[derive(Debug, Clone)]
pub struct LateAccount {
    /// Events split.
    pub events: u64,
    /// Of them, late.
    pub late: u64,
    /// The parts added up over every event, each event's own (a wait
    /// carried from the previous event counted once): the thread's whole
    /// run-queue wait, ...
    pub all: Parts,
    /// The parts added up over the late events.
    pub late_parts: Parts,
    causes: Vec<CauseAccount>,
    worst: BinaryHeap<Reverse<Ranked>>,
    /// The measurement window, once the probe knows it: from then on each
    /// event is counted in the sub-window it was due in, too.
    window: Option<Window>,
    sub_windows: [SubWindowCounts; BATCHES],
    /// Every event, when the run writes a trace.
    log: Option<EventLog>,
}

impl Default for LateAccount {
    fn default() -> Self {
        Self::new()
    }
}

impl LateAccount {
    /// An empty account, its storage allocated and written once, so that
    /// it is resident.
    pub fn new() -> Self {
        let mut causes: Vec<CauseAccount> = Cause::ALL.iter().map(|_| Default::default()).collect();
        for cause in &mut causes {
            cause.part.touch();
        }
        Self {
            events: 0,
            late: 0,
            all: Parts::default(),
            late_parts: Parts::default(),
            causes,
            worst: BinaryHeap::with_capacity(WORST_KEPT + 1),
            window: None,
            sub_windows: [SubWindowCounts::default(); BATCHES],
            log: None,
        }
    }

    /// The account that also logs up to `capacity` events whole (for
    /// `run --trace`), its log allocated now.
    pub fn with_log(mut self, capacity: usize) -> Self {
        self.log = Some(EventLog::with_capacity(capacity));
        self
    }

    /// Logs events as the thread `tid`'s, when it logs.
    pub fn set_thread(&mut self, tid: u32) {
        if let Some(log) = &mut self.log {
            log.set_thread(tid);
        }
    }

    /// Logs the event of `split`, allowed until `allowed_ns`, when it logs
    /// (never allocates; without a log, nothing of the event is computed).
    pub fn log(&mut self, split: &EventSplit, late: bool, dropped: bool, allowed_ns: Option<u64>) {
        if let Some(log) = &mut self.log {
            log.push(LoggedEvent::of(split, late, dropped, allowed_ns));
        }
    }

    /// The events logged, when it logs.
    pub fn logged(&self) -> Option<&ThreadEvents> {
        self.log.as_ref().map(EventLog::events)
    }

    /// Counts events per sub-window of `window` from now on (an event due
    /// before it in the first, after it in the last, as a period counts).
    pub fn set_window(&mut self, window: Window) {
        self.window = Some(window);
    }

    /// Accounts one event; `late` says whether it was late by the probe's
    /// rule (missed its deadline, took longer than the probe allows).
    pub fn record(&mut self, split: &EventSplit, late: bool) {
        self.events += 1;
        self.all.add(&split.parts.less(&split.carried));
        let mut sub_window = self
            .window
            .map(|window| &mut self.sub_windows[batch_of(window, split.due_ns)]);
        if let Some(counts) = sub_window.as_deref_mut() {
            counts.events += 1;
        }
        if !late {
            return;
        }
        let cause = split.cause();
        if let Some(counts) = sub_window {
            counts.late += 1;
            counts.causes[cause.index()] += 1;
        }
        self.late += 1;
        self.late_parts.add(&split.parts);
        let account = &mut self.causes[cause.index()];
        account.count += 1;
        account.delay_ns += split.delay_ns();
        let part = split.part_of(cause);
        account.part.record_ns(part.max(1));
        account.part_sum_ns += part;
        self.worst.push(Reverse(Ranked {
            delay_ns: split.delay_ns(),
            order: self.late,
            split: *split,
        }));
        if self.worst.len() > WORST_KEPT {
            self.worst.pop();
        }
    }

    /// The late events of `cause` so far.
    pub fn cause(&self, cause: Cause) -> &CauseAccount {
        &self.causes[cause.index()]
    }

    /// The events of each sub-window of the measurement, in time order;
    /// `None` when the window was never set.
    pub fn sub_windows(&self) -> Option<&[SubWindowCounts; BATCHES]> {
        self.window.map(|_| &self.sub_windows)
    }

    /// The worst late events kept, worst first.
    pub fn worst(&self) -> Vec<EventSplit> {
        let mut ranked: Vec<Ranked> = self.worst.iter().map(|r| r.0).collect();
        ranked.sort_by(|a, b| b.cmp(a));
        ranked.into_iter().map(|r| r.split).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::scripted::{reading, split_of, times, MS};
    use super::*;

    #[test]
    fn the_account_keeps_the_worst_late_events_and_counts_causes() {
        let mut account = LateAccount::new();
        let before = reading(0, 0, 0, 0);
        for delay in 1..=2 * WORST_KEPT as u64 {
            let woke = reading(10 + delay, 0, delay, 1);
            let ended = reading(10 + delay, 0, delay, 1);
            let split = split_of(times(10, 0), &before, &woke, &ended);
            account.record(&split, delay % 2 == 0 || delay > 100);
        }
        let on_time = reading(10, 0, 0, 1);
        account.record(&split_of(times(10, 0), &before, &on_time, &on_time), false);
        assert_eq!(account.events, 2 * WORST_KEPT as u64 + 1);
        assert_eq!(account.late, 50 + (2 * WORST_KEPT as u64 - 100));
        assert_eq!(account.cause(Cause::RunQueue).count, account.late);
        let worst = account.worst();
        assert_eq!(worst.len(), WORST_KEPT);
        assert_eq!(worst[0].delay_ns(), 2 * WORST_KEPT as u64 * MS);
        assert!(worst.windows(2).all(|w| w[0].delay_ns() >= w[1].delay_ns()));
        assert_eq!(account.all.run_queue_wake_ns, account.all.total_ns());
    }

    #[test]
    fn events_are_counted_in_the_sub_window_they_were_due_in() {
        // A window of 200 ms: sub-windows of 10 ms. Events due at 5, 15,
        // 15 and 195 ms (and one at 250, after it: the last), the second
        // and third late for a run-queue wait, the fourth blocked.
        let mut account = LateAccount::new();
        let before = reading(0, 0, 0, 0);
        let event = |due_ms: u64, waited_ms: u64, voluntary: u64| {
            let woke = reading(due_ms + waited_ms, 0, waited_ms, 1);
            let ended = reading(due_ms + waited_ms + 2, 0, waited_ms, voluntary);
            split_of(times(due_ms, 0), &before, &woke, &ended)
        };
        account.record(&event(5, 0, 1), false);
        assert!(account.sub_windows().is_none());
        account.set_window(Window::ms(0, 200));
        account.record(&event(5, 0, 1), false);
        account.record(&event(15, 8, 1), true);
        account.record(&event(15, 8, 1), true);
        account.record(&event(195, 0, 2), true);
        account.record(&event(250, 0, 1), false);
        let counts = account.sub_windows().unwrap();
        let events: Vec<u64> = counts.iter().map(|c| c.events).collect();
        let mut expected = [0; BATCHES];
        expected[0] = 1;
        expected[1] = 2;
        expected[BATCHES - 1] = 2;
        assert_eq!(events, expected);
        assert_eq!((counts[1].late, counts[1].count(Cause::RunQueue)), (2, 2));
        assert_eq!(counts[BATCHES - 1].count(Cause::BlockedOther), 1);
        assert_eq!(counts.iter().map(|c| c.late).sum::<u64>(), account.late);
        // The event before the window was set is in the totals only.
        assert_eq!(account.events, 6);
    }
}
