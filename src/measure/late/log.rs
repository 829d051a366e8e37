//! Every event of a probe thread, kept for `run --trace`: a log whose
//! storage is allocated when the probe is built (only when the run writes
//! a trace), so logging in the measuring loop never allocates; past its
//! capacity it counts the events it could not keep.

use super::{Cause, EventSplit, Parts};
use serde::{Deserialize, Serialize};

/// One event as the trace shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoggedEvent {
    /// When it was due, woke and ended (`CLOCK_MONOTONIC`, ns).
    pub due_ns: u64,
    pub woke_ns: u64,
    pub ended_ns: u64,
    /// When it was allowed to end (its deadline, the end of its period);
    /// `None` where the probe's own rule judged it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_ns: Option<u64>,
    /// Late by the probe's rule.
    pub late: bool,
    /// Dropped at its wake-up (it did no work: a frame skipped).
    #[serde(default)]
    pub dropped: bool,
    /// The label of its delay's split (shown for late events).
    pub cause: Cause,
    pub parts: Parts,
}

impl LoggedEvent {
    /// The event of `split`, allowed until `allowed_ns`.
    pub fn of(split: &EventSplit, late: bool, dropped: bool, allowed_ns: Option<u64>) -> Self {
        Self {
            due_ns: split.due_ns,
            woke_ns: split.woke_ns,
            ended_ns: split.ended_ns,
            allowed_ns,
            late,
            dropped,
            cause: split.cause(),
            parts: split.parts,
        }
    }
}

/// The events of one probe thread, as its worker ships them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadEvents {
    /// The thread's id.
    pub tid: u32,
    pub events: Vec<LoggedEvent>,
    /// Events past the log's capacity, not kept.
    pub lost: u64,
}

/// A thread's log with its capacity reserved.
#[derive(Debug, Clone)]
pub struct EventLog {
    kept: ThreadEvents,
}

impl EventLog {
    /// A log of at most `capacity` events, its storage allocated and
    /// written once, so that it is resident.
    pub fn with_capacity(capacity: usize) -> Self {
        let mut events = Vec::with_capacity(capacity);
        // Touch every page now: a first write in the window would fault.
        events.resize(capacity, TOUCH);
        events.clear();
        Self {
            kept: ThreadEvents {
                tid: 0,
                events,
                lost: 0,
            },
        }
    }

    /// Logs on the thread `tid` from now on.
    pub fn set_thread(&mut self, tid: u32) {
        self.kept.tid = tid;
    }

    /// Keeps `event` if there is room (never allocates), else counts it.
    pub fn push(&mut self, event: LoggedEvent) {
        if self.kept.events.len() < self.kept.events.capacity() {
            self.kept.events.push(event);
        } else {
            self.kept.lost += 1;
        }
    }

    /// What was kept.
    pub fn events(&self) -> &ThreadEvents {
        &self.kept
    }
}

/// The value the log's storage is written with once.
const TOUCH: LoggedEvent = LoggedEvent {
    due_ns: 0,
    woke_ns: 0,
    ended_ns: 0,
    allowed_ns: None,
    late: false,
    dropped: false,
    cause: Cause::Mixed,
    parts: Parts {
        timer_ns: 0,
        run_queue_wake_ns: 0,
        run_queue_preempted_ns: 0,
        blocked_ns: 0,
        off_cpu_ns: 0,
        memory_stall_ns: 0,
        cpu_overrun_ns: 0,
        unexplained_ns: 0,
    },
};

/// How many events a probe thread's log keeps for a window of
/// `duration_ns`: a base plus 1,000 a second (the fastest probes with
/// events, audio at 1.3 ms periods and gaming, stay under it), at most
/// 200,000 (about 22 MB).
pub fn log_capacity(duration_ns: u64) -> usize {
    const BASE: u64 = 10_000;
    const PER_S: u64 = 1_000;
    const MOST: u64 = 200_000;
    (BASE + duration_ns / 1_000_000_000 * PER_S).min(MOST) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_log_counts_what_it_cannot_keep_without_growing() {
        let mut log = EventLog::with_capacity(2);
        let capacity = log.events().events.capacity();
        for due_ns in 0..5 {
            log.push(LoggedEvent { due_ns, ..TOUCH });
        }
        assert_eq!(log.events().events.len(), capacity);
        assert_eq!(log.events().events.capacity(), capacity);
        assert_eq!(log.events().lost, 5 - capacity as u64);
        assert_eq!(log.events().events[1].due_ns, 1);
    }

    #[test]
    fn the_capacity_grows_with_the_window_up_to_a_bound() {
        assert_eq!(log_capacity(2_000_000_000), 12_000);
        assert_eq!(log_capacity(u64::MAX), 200_000);
    }
}
