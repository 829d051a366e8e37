//! Where a late event's time went: the pure split of one event (a frame, a
//! request, an operation, a response) into the parts of its delay, from
//! readings of the thread's own clocks and scheduler counters taken before
//! it slept, at its wake-up and at the end of its work; the cause each
//! late event is labelled with; and the running account of a measurement's
//! events (totals, per cause, the worst events), which never allocates.
//!
//! The readings come from `measure::attrib`; here they are plain numbers, so
//! everything is tested with scripted readings.
//!
//! By job: [`parts`] (the parts a delay splits into), [`cause`] (what a
//! late event is labelled with), [`split`] (one event split from its
//! readings), [`account`] (a measurement's running account) and [`log`]
//! (every event, for `run --trace`).

mod account;
mod cause;
mod log;
mod parts;
mod split;

pub use account::{LateAccount, SubWindowCounts, WORST_KEPT};
pub use cause::Cause;
pub use log::{log_capacity, EventLog, LoggedEvent, ThreadEvents};
pub use parts::{Part, Parts};
pub use split::EventSplit;

/// One reading of a thread's clocks and scheduler counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThreadSnapshot {
    /// `CLOCK_MONOTONIC`, ns.
    pub at_ns: u64,
    /// The thread's CPU time, ns (`measure::cpu_time`: on the scale of
    /// `CLOCK_THREAD_CPUTIME_ID`, the slice running now included).
    pub cpu_ns: u64,
    /// Time the thread has waited runnable for a CPU (schedstat's second
    /// field: at wake-up and while preempted), ns; `None` when it could not
    /// be read.
    pub run_delay_ns: Option<u64>,
    /// Times the thread gave up the CPU by blocking.
    pub voluntary: u64,
    /// Times the thread was switched out while runnable.
    pub involuntary: u64,
    /// Page faults that waited for a read (a page-in or swap-in).
    pub major_faults: u64,
    /// The CPU the thread was on.
    pub cpu: u32,
}

pub use crate::system::taskstats::DelaySplit;

/// One event's times, as the probe knows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventTimes {
    /// When it was due to start (the period's start, the request's time).
    pub due_ns: u64,
    /// CPU it wanted for its work; `None` for an event that wants no set
    /// amount (a request, an operation, a response), whose CPU is its work
    /// whatever it is, never an overrun.
    pub cpu_wanted_ns: Option<u64>,
}

/// Scripted readings and events for the tests of every part of the split.
#[cfg(test)]
pub(crate) mod scripted {
    use super::{EventSplit, EventTimes, Parts, ThreadSnapshot};

    pub const MS: u64 = 1_000_000;

    /// A reading at `at_ms` with `cpu_ms` of CPU, `run_delay_ms` of
    /// run-queue wait and `voluntary` blocking switches so far.
    pub fn reading(at_ms: u64, cpu_ms: u64, run_delay_ms: u64, voluntary: u64) -> ThreadSnapshot {
        ThreadSnapshot {
            at_ns: at_ms * MS,
            cpu_ns: cpu_ms * MS,
            run_delay_ns: Some(run_delay_ms * MS),
            voluntary,
            ..ThreadSnapshot::default()
        }
    }

    /// The split of an event after an on-time one, with schedstat read.
    pub fn split_of(
        times: EventTimes,
        before: &ThreadSnapshot,
        woke: &ThreadSnapshot,
        ended: &ThreadSnapshot,
    ) -> EventSplit {
        EventSplit::of(times, before, &Parts::default(), woke, Some(ended), true)
    }

    /// An event due at `due_ms` wanting `wanted_ms` of CPU.
    pub fn times(due_ms: u64, wanted_ms: u64) -> EventTimes {
        EventTimes {
            due_ns: due_ms * MS,
            cpu_wanted_ns: Some(wanted_ms * MS),
        }
    }
}
