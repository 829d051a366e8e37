//! Scripted late causes for the tests of every module that shows them.

use super::*;
use crate::measure::late::{EventTimes, ThreadSnapshot};

const MS: u64 = 1_000_000;

/// Scripted late causes: `run_queue` frames late by 10, 11, ... ms
/// waiting on a run queue (1 ms of timer each), then `blocked` frames
/// blocked 4 ms, of 100 frames in all.
pub fn causes(run_queue: u64, blocked: u64) -> LateCauses {
    let mut account = LateAccount::new();
    let before = ThreadSnapshot {
        run_delay_ns: Some(0),
        ..ThreadSnapshot::default()
    };
    let times = EventTimes {
        due_ns: 10 * MS,
        cpu_wanted_ns: Some(MS),
    };
    let mut record = |woke: ThreadSnapshot, ended: ThreadSnapshot, late: bool| {
        let split = EventSplit::of(times, &before, &Parts::default(), &woke, Some(&ended), true);
        account.record(&split, late);
    };
    for i in 0..run_queue {
        let woke = ThreadSnapshot {
            at_ns: (20 + i) * MS,
            run_delay_ns: Some((9 + i) * MS),
            ..before
        };
        let ended = ThreadSnapshot {
            at_ns: (21 + i) * MS,
            cpu_ns: MS,
            ..woke
        };
        record(woke, ended, true);
    }
    for _ in 0..blocked {
        let woke = ThreadSnapshot {
            at_ns: 10 * MS,
            ..before
        };
        let ended = ThreadSnapshot {
            at_ns: 15 * MS,
            cpu_ns: MS,
            voluntary: 1,
            ..woke
        };
        record(woke, ended, true);
    }
    for _ in run_queue + blocked..100 {
        let woke = ThreadSnapshot {
            at_ns: 10 * MS,
            ..before
        };
        let ended = ThreadSnapshot {
            at_ns: 11 * MS,
            cpu_ns: MS,
            ..woke
        };
        record(woke, ended, false);
    }
    let cost = ReadCost {
        reads: 300,
        ns_per_read: 2_000.0,
        ..ReadCost::default()
    };
    LateCauses::of(&account, "missed its deadline", true, cost)
}

/// Scripted late causes kept per sub-window of a 200 ms window: in
/// sub-window `k`, `events` frames due in it, the first `run_queue[k]`
/// of them late for 5 ms on a run queue.
pub fn in_sub_windows(run_queue: &[u64], events: u64) -> LateCauses {
    use crate::measure::batches::BATCHES;
    use crate::measure::window::Window;
    let mut account = LateAccount::new();
    account.set_window(Window::ms(0, 200));
    let sub_window_ms = 200 / BATCHES as u64;
    for (k, &late) in run_queue.iter().enumerate().take(BATCHES) {
        for i in 0..events {
            let due_ns = k as u64 * sub_window_ms * MS;
            let waited_ns = if i < late { 5 * MS } else { 0 };
            let snapshot = |at_ns: u64| ThreadSnapshot {
                at_ns,
                run_delay_ns: Some(waited_ns),
                ..ThreadSnapshot::default()
            };
            let woke = snapshot(due_ns + waited_ns);
            let before = ThreadSnapshot {
                run_delay_ns: Some(0),
                ..snapshot(0)
            };
            let times = EventTimes {
                due_ns,
                cpu_wanted_ns: Some(0),
            };
            let split = EventSplit::of(times, &before, &Parts::default(), &woke, Some(&woke), true);
            account.record(&split, i < late);
        }
    }
    LateCauses::of(&account, "missed its deadline", true, ReadCost::default())
}
