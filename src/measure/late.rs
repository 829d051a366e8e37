//! Where a late event's time went: the pure split of one event (a frame, a
//! request, an operation, a response) into the parts of its delay, from
//! readings of the thread's own clocks and scheduler counters taken before
//! it slept, at its wake-up and at the end of its work; the cause each
//! late event is labelled with; and the running account of a measurement's
//! events (totals, per cause, the worst events), which never allocates.
//!
//! The readings come from `measure::attrib`; here they are plain numbers, so
//! everything is tested with scripted readings.

use super::latency::LatencyHistogram;
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

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

/// The causes delay accounting's kinds of wait stand for.
impl DelaySplit {
    /// Which of reclaim, compaction and thrashing took longest (reclaim on
    /// a tie or when none took time).
    pub fn largest_stall(&self) -> Cause {
        [
            (Cause::Reclaim, self.reclaim_ns),
            (Cause::Compaction, self.compaction_ns),
            (Cause::Thrashing, self.thrashing_ns),
        ]
        .into_iter()
        .rev()
        .max_by_key(|(_, ns)| ns.unwrap_or(0))
        .map_or(Cause::Reclaim, |(cause, _)| cause)
    }

    /// The kind of block that took longest, when any took time.
    pub fn largest(&self) -> Option<Cause> {
        [
            (Cause::BlockIo, self.block_io_ns),
            (Cause::SwapIn, self.swap_in_ns),
            (Cause::Reclaim, self.reclaim_ns),
            (Cause::Thrashing, self.thrashing_ns),
            (Cause::Compaction, self.compaction_ns),
            (Cause::WriteCopy, self.write_copy_ns),
        ]
        .into_iter()
        .filter_map(|(cause, ns)| Some((cause, ns.filter(|ns| *ns > 0)?)))
        .max_by_key(|(_, ns)| *ns)
        .map(|(cause, _)| cause)
    }
}

/// The parts an event's delay splits into, ns. They add up to the delay:
/// the event's time from when it was due to its end, less the CPU it
/// wanted and got.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Parts {
    /// From when it was due to its wake-up, less the run-queue wait in it:
    /// timer expiry and wake-up delivery (idle exit, a VM's halt exit,
    /// interrupts).
    pub timer_ns: u64,
    /// Runnable but waiting for a CPU, from its wake-up to its start.
    pub run_queue_wake_ns: u64,
    /// Runnable but waiting for a CPU during its work (preempted).
    pub run_queue_preempted_ns: u64,
    /// Off the CPU and not runnable during its work: blocked.
    pub blocked_ns: u64,
    /// Off the CPU during its work while never blocking nor waiting on a
    /// run queue: the host did not run the vCPU (steal) or interrupts ran.
    pub off_cpu_ns: u64,
    /// In direct reclaim, compaction or thrashing during its work, as delay
    /// accounting measures them (the CPU spent there included), where it
    /// is on: taken out of the other parts, so that CPU is not counted as
    /// the event's own work.
    #[serde(default)]
    pub memory_stall_ns: u64,
    /// CPU used beyond what it wanted.
    pub cpu_overrun_ns: u64,
    /// What the readings do not account for.
    pub unexplained_ns: u64,
}

/// One part of an event's delay, named by what its readings measured (run
/// queue with both run-queue parts); the causes a late event is labelled
/// with name some parts more finely, by delay accounting or a major fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Part {
    Timer,
    RunQueue,
    Blocked,
    MemoryStall,
    OffCpu,
    CpuOverrun,
    Unexplained,
}

impl Part {
    /// The part in words, as the README's table of parts names it.
    pub fn words(self) -> &'static str {
        match self {
            Part::Timer => "timer/wake-up delivery",
            Part::RunQueue => "run-queue wait",
            Part::Blocked => "blocked",
            Part::MemoryStall => "memory stall",
            Part::OffCpu => "host steal or IRQ",
            Part::CpuOverrun => "CPU overrun",
            Part::Unexplained => "unexplained",
        }
    }
}

impl Parts {
    /// The parts in display order, each with its time.
    pub fn by_part(&self) -> [(Part, u64); 7] {
        [
            Part::Timer,
            Part::RunQueue,
            Part::Blocked,
            Part::MemoryStall,
            Part::OffCpu,
            Part::CpuOverrun,
            Part::Unexplained,
        ]
        .map(|part| (part, self.of(part)))
    }

    /// The time of `part`.
    pub fn of(&self, part: Part) -> u64 {
        match part {
            Part::Timer => self.timer_ns,
            Part::RunQueue => self.run_queue_ns(),
            Part::Blocked => self.blocked_ns,
            Part::MemoryStall => self.memory_stall_ns,
            Part::OffCpu => self.off_cpu_ns,
            Part::CpuOverrun => self.cpu_overrun_ns,
            Part::Unexplained => self.unexplained_ns,
        }
    }

    /// The parts with their names, as a run document keeps them.
    pub fn named(&self) -> [(&'static str, u64); 8] {
        [
            ("timer_ns", self.timer_ns),
            ("run_queue_wake_ns", self.run_queue_wake_ns),
            ("run_queue_preempted_ns", self.run_queue_preempted_ns),
            ("blocked_ns", self.blocked_ns),
            ("memory_stall_ns", self.memory_stall_ns),
            ("off_cpu_ns", self.off_cpu_ns),
            ("cpu_overrun_ns", self.cpu_overrun_ns),
            ("unexplained_ns", self.unexplained_ns),
        ]
    }

    /// The parts from their names (see [`named`](Self::named)).
    pub fn from_named(part: impl Fn(&str) -> u64) -> Self {
        Self {
            timer_ns: part("timer_ns"),
            run_queue_wake_ns: part("run_queue_wake_ns"),
            run_queue_preempted_ns: part("run_queue_preempted_ns"),
            blocked_ns: part("blocked_ns"),
            memory_stall_ns: part("memory_stall_ns"),
            off_cpu_ns: part("off_cpu_ns"),
            cpu_overrun_ns: part("cpu_overrun_ns"),
            unexplained_ns: part("unexplained_ns"),
        }
    }

    /// `ns` split in the proportions of these parts; what they do not
    /// cover (`ns` beyond their sum, or no parts at all) is CPU overrun.
    pub fn share_of(&self, ns: u64) -> Parts {
        let total = self.total_ns();
        let scaled = |part: u64| {
            if total == 0 {
                0
            } else {
                (u128::from(ns.min(total)) * u128::from(part) / u128::from(total)) as u64
            }
        };
        let mut share = Parts {
            timer_ns: scaled(self.timer_ns),
            run_queue_wake_ns: scaled(self.run_queue_wake_ns),
            run_queue_preempted_ns: scaled(self.run_queue_preempted_ns),
            blocked_ns: scaled(self.blocked_ns),
            memory_stall_ns: scaled(self.memory_stall_ns),
            off_cpu_ns: scaled(self.off_cpu_ns),
            cpu_overrun_ns: scaled(self.cpu_overrun_ns),
            unexplained_ns: scaled(self.unexplained_ns),
        };
        share.cpu_overrun_ns += ns - share.total_ns();
        share
    }

    /// Run-queue wait at wake-up and while preempted.
    pub fn run_queue_ns(&self) -> u64 {
        self.run_queue_wake_ns + self.run_queue_preempted_ns
    }

    /// The sum of the parts: the delay.
    pub fn total_ns(&self) -> u64 {
        self.by_part().iter().map(|(_, ns)| ns).sum()
    }

    /// Adds `other` part by part.
    pub fn add(&mut self, other: &Parts) {
        *self = self.combine(other, |a, b| a + b);
    }

    /// These parts less `other`, part by part (none below 0).
    pub fn less(&self, other: &Parts) -> Parts {
        self.combine(other, u64::saturating_sub)
    }

    /// `f` of each part of these and the same part of `other`.
    fn combine(&self, other: &Parts, f: impl Fn(u64, u64) -> u64) -> Parts {
        Parts {
            timer_ns: f(self.timer_ns, other.timer_ns),
            run_queue_wake_ns: f(self.run_queue_wake_ns, other.run_queue_wake_ns),
            run_queue_preempted_ns: f(self.run_queue_preempted_ns, other.run_queue_preempted_ns),
            blocked_ns: f(self.blocked_ns, other.blocked_ns),
            memory_stall_ns: f(self.memory_stall_ns, other.memory_stall_ns),
            off_cpu_ns: f(self.off_cpu_ns, other.off_cpu_ns),
            cpu_overrun_ns: f(self.cpu_overrun_ns, other.cpu_overrun_ns),
            unexplained_ns: f(self.unexplained_ns, other.unexplained_ns),
        }
    }
}

/// What a late event is labelled with: the part holding at least half its
/// delay (blocked time named by delay accounting where it is on, or by a
/// major fault), else `Mixed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    Timer,
    RunQueue,
    BlockIo,
    SwapIn,
    Reclaim,
    Thrashing,
    Compaction,
    WriteCopy,
    MajorFault,
    BlockedOther,
    OffCpu,
    CpuOverrun,
    Unexplained,
    Mixed,
}

impl Cause {
    /// Every cause, in display order.
    pub const ALL: [Cause; 14] = [
        Cause::Timer,
        Cause::RunQueue,
        Cause::BlockIo,
        Cause::SwapIn,
        Cause::Reclaim,
        Cause::Thrashing,
        Cause::Compaction,
        Cause::WriteCopy,
        Cause::MajorFault,
        Cause::BlockedOther,
        Cause::OffCpu,
        Cause::CpuOverrun,
        Cause::Unexplained,
        Cause::Mixed,
    ];

    /// The cause in words, as a table shows it.
    pub fn words(self) -> &'static str {
        match self {
            Cause::Timer => "timer/wake-up delivery",
            Cause::RunQueue => "run-queue wait",
            Cause::BlockIo => "blocked: block I/O",
            Cause::SwapIn => "blocked: swap-in",
            Cause::Reclaim => "memory: direct reclaim",
            Cause::Thrashing => "memory: thrashing",
            Cause::Compaction => "memory: compaction",
            Cause::WriteCopy => "blocked: copy-on-write",
            Cause::MajorFault => "blocked: page-in",
            Cause::BlockedOther => "blocked (other)",
            Cause::OffCpu => "host steal or IRQ",
            Cause::CpuOverrun => "CPU overrun",
            Cause::Unexplained => "unexplained",
            Cause::Mixed => "mixed",
        }
    }

    /// Its name in a run document.
    pub fn key(self) -> &'static str {
        match self {
            Cause::Timer => "timer",
            Cause::RunQueue => "run_queue",
            Cause::BlockIo => "block_io",
            Cause::SwapIn => "swap_in",
            Cause::Reclaim => "reclaim",
            Cause::Thrashing => "thrashing",
            Cause::Compaction => "compaction",
            Cause::WriteCopy => "write_copy",
            Cause::MajorFault => "major_fault",
            Cause::BlockedOther => "blocked_other",
            Cause::OffCpu => "off_cpu",
            Cause::CpuOverrun => "cpu_overrun",
            Cause::Unexplained => "unexplained",
            Cause::Mixed => "mixed",
        }
    }

    /// The part of an event's delay it names (`None` for `Mixed`).
    pub fn part(self) -> Option<Part> {
        match self {
            Cause::Timer => Some(Part::Timer),
            Cause::RunQueue => Some(Part::RunQueue),
            Cause::Reclaim | Cause::Thrashing | Cause::Compaction => Some(Part::MemoryStall),
            Cause::BlockIo
            | Cause::SwapIn
            | Cause::WriteCopy
            | Cause::MajorFault
            | Cause::BlockedOther => Some(Part::Blocked),
            Cause::OffCpu => Some(Part::OffCpu),
            Cause::CpuOverrun => Some(Part::CpuOverrun),
            Cause::Unexplained => Some(Part::Unexplained),
            Cause::Mixed => None,
        }
    }

    /// Its place in [`Cause::ALL`].
    fn index(self) -> usize {
        Cause::ALL.iter().position(|c| *c == self).unwrap_or(0)
    }
}

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

/// One event split: its readings' deltas and the parts of its delay.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventSplit {
    /// When it was due, woke and ended (`CLOCK_MONOTONIC`, ns, the clock
    /// `perf --clockid monotonic` and `trace-cmd -C mono` stamp with); an
    /// event that was dropped at its wake-up ends when it woke.
    pub due_ns: u64,
    pub woke_ns: u64,
    pub ended_ns: u64,
    /// CPU it wanted (`None`: no set amount) and CPU it used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_wanted_ns: Option<u64>,
    pub cpu_used_ns: u64,
    /// The CPU it woke on and the one it ended on.
    pub woke_cpu: u32,
    pub ended_cpu: u32,
    /// Blocking switches, preemptions and major faults during its work.
    pub voluntary: u64,
    pub involuntary: u64,
    pub major_faults: u64,
    pub parts: Parts,
    /// The share of `parts` that is the previous event's delay, carried
    /// because this event was due while that one still ran: the same wait
    /// seen from this event, so it is not added to the thread's totals.
    #[serde(default)]
    pub carried: Parts,
    /// What delay accounting says the blocked time was, where it is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked_by: Option<DelaySplit>,
}

impl EventSplit {
    /// Splits an event from the readings taken at the end of the previous
    /// event (`before`, whose delay split into `previous`), at its wake-up
    /// (`woke`) and at the end of its work (`ended`; `None` for an event
    /// dropped at wake-up).
    ///
    /// An event due while the previous one still ran waited for it: that
    /// wait is split as the previous event's delay was (it was late for the
    /// same reasons), and what the previous event's own delay does not
    /// cover (its wanted work ran past this one's start) is CPU overrun.
    /// Without run-queue figures (`schedstat` false, or a reading at
    /// either end of a span that failed) run-queue wait cannot be told
    /// from timer delivery nor from steal: the wake-up's own lateness, or
    /// the unblocked time off the CPU, is unexplained.
    pub fn of(
        times: EventTimes,
        before: &ThreadSnapshot,
        previous: &Parts,
        woke: &ThreadSnapshot,
        ended: Option<&ThreadSnapshot>,
        schedstat: bool,
    ) -> Self {
        let ended_reading = ended.unwrap_or(woke);
        let wake_late = woke.at_ns.saturating_sub(times.due_ns);
        let behind_previous = before.at_ns.saturating_sub(times.due_ns).min(wake_late);
        let own_wake_late = wake_late - behind_previous;
        // Run-queue wait between two readings, where both read it.
        let waited = |from: &ThreadSnapshot, to: &ThreadSnapshot| {
            let (from, to) = (from.run_delay_ns?, to.run_delay_ns?);
            schedstat.then(|| to.saturating_sub(from))
        };
        let run_queue_wake = waited(before, woke).map(|ns| ns.min(own_wake_late));
        let wall = ended_reading.at_ns.saturating_sub(woke.at_ns);
        let cpu_used = ended_reading.cpu_ns.saturating_sub(woke.cpu_ns);
        let on_cpu = cpu_used.min(wall);
        let preempted = waited(woke, ended_reading).map(|ns| ns.min(wall - on_cpu));
        let off = wall - on_cpu - preempted.unwrap_or(0);
        let voluntary = ended_reading.voluntary.saturating_sub(woke.voluntary);
        let mut parts = Parts {
            run_queue_wake_ns: run_queue_wake.unwrap_or(0),
            run_queue_preempted_ns: preempted.unwrap_or(0),
            cpu_overrun_ns: times
                .cpu_wanted_ns
                .map_or(0, |wanted| on_cpu.saturating_sub(wanted)),
            ..Parts::default()
        };
        match run_queue_wake {
            Some(waited) => parts.timer_ns = own_wake_late - waited,
            None => parts.unexplained_ns = own_wake_late,
        }
        match (preempted.is_some(), voluntary > 0) {
            (_, true) => parts.blocked_ns = off,
            (true, false) => parts.off_cpu_ns = off,
            (false, false) => parts.unexplained_ns += off,
        }
        let carried = previous.share_of(behind_previous);
        parts.add(&carried);
        Self {
            due_ns: times.due_ns,
            woke_ns: woke.at_ns,
            ended_ns: ended_reading.at_ns,
            cpu_wanted_ns: times.cpu_wanted_ns,
            cpu_used_ns: cpu_used,
            woke_cpu: woke.cpu,
            ended_cpu: ended_reading.cpu,
            voluntary,
            involuntary: ended_reading.involuntary.saturating_sub(woke.involuntary),
            major_faults: ended_reading.major_faults.saturating_sub(woke.major_faults),
            parts,
            carried,
            blocked_by: None,
        }
    }

    /// The split with what delay accounting says its work waited on
    /// (`delays`): blocked time is named by it, and the time in direct
    /// reclaim, compaction and thrashing, which delay accounting measures as
    /// wall time with the CPU spent there, becomes the memory stall part,
    /// taken from the CPU beyond what the event wanted (all its CPU when it
    /// wants no set amount), then from its blocked time.
    pub fn with_delays(mut self, delays: DelaySplit) -> Self {
        self.blocked_by = Some(delays);
        let wall = self.ended_ns - self.woke_ns;
        let mut left = delays.stall_ns().min(wall);
        let mut take = |part: &mut u64| {
            let taken = (*part).min(left);
            *part -= taken;
            left -= taken;
            taken
        };
        let mut stall = take(&mut self.parts.cpu_overrun_ns);
        if self.cpu_wanted_ns.is_none() {
            let mut own_cpu = self.cpu_used_ns.min(wall);
            stall += take(&mut own_cpu);
        }
        stall += take(&mut self.parts.blocked_ns);
        self.parts.memory_stall_ns = stall;
        self
    }

    /// The delay: the parts' sum.
    pub fn delay_ns(&self) -> u64 {
        self.parts.total_ns()
    }

    /// The part holding at least half the delay, with blocked time named
    /// by delay accounting or a major fault; `Mixed` when none does.
    pub fn cause(&self) -> Cause {
        let delay = self.delay_ns();
        if delay == 0 {
            return Cause::Unexplained;
        }
        let Some((part, _)) = self
            .parts
            .by_part()
            .into_iter()
            .find(|(_, ns)| ns * 2 >= delay)
        else {
            return Cause::Mixed;
        };
        match part {
            Part::Timer => Cause::Timer,
            Part::RunQueue => Cause::RunQueue,
            Part::Blocked => match self.blocked_by.and_then(|split| split.largest()) {
                Some(named) => named,
                None if self.major_faults > 0 => Cause::MajorFault,
                None => Cause::BlockedOther,
            },
            Part::MemoryStall => self
                .blocked_by
                .map_or(Cause::Reclaim, |split| split.largest_stall()),
            Part::OffCpu => Cause::OffCpu,
            Part::CpuOverrun => Cause::CpuOverrun,
            Part::Unexplained => Cause::Unexplained,
        }
    }

    /// The part of the delay its cause stands for (the whole delay for
    /// `Mixed`).
    pub fn part_of(&self, cause: Cause) -> u64 {
        cause
            .part()
            .map_or_else(|| self.delay_ns(), |part| self.parts.of(part))
    }
}

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
        }
    }

    /// Accounts one event; `late` says whether it was late by the probe's
    /// rule (missed its deadline, took longer than the probe allows).
    pub fn record(&mut self, split: &EventSplit, late: bool) {
        self.events += 1;
        self.all.add(&split.parts.less(&split.carried));
        if !late {
            return;
        }
        self.late += 1;
        self.late_parts.add(&split.parts);
        let cause = split.cause();
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

    /// The worst late events kept, worst first.
    pub fn worst(&self) -> Vec<EventSplit> {
        let mut ranked: Vec<Ranked> = self.worst.iter().map(|r| r.0).collect();
        ranked.sort_by(|a, b| b.cmp(a));
        ranked.into_iter().map(|r| r.split).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn reading(at_ms: u64, cpu_ms: u64, run_delay_ms: u64, voluntary: u64) -> ThreadSnapshot {
        ThreadSnapshot {
            at_ns: at_ms * MS,
            cpu_ns: cpu_ms * MS,
            run_delay_ns: Some(run_delay_ms * MS),
            voluntary,
            ..ThreadSnapshot::default()
        }
    }

    /// The split of an event after an on-time one, with schedstat read.
    fn split_of(
        times: EventTimes,
        before: &ThreadSnapshot,
        woke: &ThreadSnapshot,
        ended: &ThreadSnapshot,
    ) -> EventSplit {
        EventSplit::of(times, before, &Parts::default(), woke, Some(ended), true)
    }

    fn times(due_ms: u64, wanted_ms: u64) -> EventTimes {
        EventTimes {
            due_ns: due_ms * MS,
            cpu_wanted_ns: Some(wanted_ms * MS),
        }
    }

    #[test]
    fn a_frame_that_waited_behind_another_task_is_run_queue_wait() {
        // Due at 100, woke at 109 of which 8 ms on a run queue; 6 ms of work
        // in 8 ms with 2 ms preempted.
        let before = reading(90, 10, 50, 3);
        let woke = reading(109, 10, 58, 4);
        let ended = reading(117, 16, 60, 4);
        let split = split_of(times(100, 6), &before, &woke, &ended);
        assert_eq!(split.parts.timer_ns, MS);
        assert_eq!(split.parts.run_queue_wake_ns, 8 * MS);
        assert_eq!(split.parts.run_queue_preempted_ns, 2 * MS);
        assert_eq!(split.parts.off_cpu_ns, 0);
        assert_eq!(split.delay_ns(), 11 * MS);
        assert_eq!(split.cause(), Cause::RunQueue);
    }

    #[test]
    fn off_cpu_time_is_blocked_when_the_thread_switched_voluntarily_else_steal() {
        let before = reading(0, 0, 0, 0);
        let woke = reading(10, 0, 0, 1);
        let blocked_end = reading(30, 2, 0, 2);
        let split = split_of(times(10, 2), &before, &woke, &blocked_end);
        assert_eq!(split.parts.blocked_ns, 18 * MS);
        assert_eq!(split.cause(), Cause::BlockedOther);
        let mut with_swap = split;
        with_swap.blocked_by = Some(DelaySplit {
            swap_in_ns: Some(15 * MS),
            block_io_ns: Some(MS),
            ..DelaySplit::default()
        });
        assert_eq!(with_swap.cause(), Cause::SwapIn);
        let stolen_end = reading(30, 2, 0, 1);
        let stolen = split_of(times(10, 2), &before, &woke, &stolen_end);
        assert_eq!(stolen.parts.off_cpu_ns, 18 * MS);
        assert_eq!(stolen.cause(), Cause::OffCpu);
    }

    #[test]
    fn the_parts_add_up_to_the_time_past_due_less_the_cpu_wanted_and_got() {
        let before = reading(0, 0, 0, 0);
        let woke = reading(13, 0, 4, 1);
        let ended = reading(40, 20, 9, 2);
        let split = split_of(times(10, 5), &before, &woke, &ended);
        assert_eq!(split.delay_ns(), (40 - 10 - 5) * MS);
        assert_eq!(split.parts.cpu_overrun_ns, 15 * MS);
        assert_eq!(split.cause(), Cause::CpuOverrun);
    }

    #[test]
    fn without_schedstat_run_queue_wait_is_not_claimed() {
        let before = reading(0, 0, 0, 0);
        let woke = reading(19, 0, 0, 1);
        let ended = reading(30, 5, 0, 1);
        let split = EventSplit::of(
            times(10, 5),
            &before,
            &Parts::default(),
            &woke,
            Some(&ended),
            false,
        );
        assert_eq!(split.parts.run_queue_ns(), 0);
        assert_eq!(split.parts.timer_ns, 0);
        assert_eq!(split.parts.unexplained_ns, 15 * MS);
        assert_eq!(split.cause(), Cause::Unexplained);
    }

    #[test]
    fn a_failed_schedstat_reading_leaves_its_spans_unexplained() {
        // As the run-queue test above, with the reading at wake-up failed:
        // neither the wake-up's lateness nor the time off the CPU during
        // the work can be told apart, and nothing is called run-queue wait
        // (a reading of 0 made the next span's wait the thread's whole
        // run delay since it started).
        let before = reading(90, 10, 50, 3);
        let woke = ThreadSnapshot {
            run_delay_ns: None,
            ..reading(109, 10, 58, 4)
        };
        let ended = reading(117, 16, 60, 4);
        let split = split_of(times(100, 6), &before, &woke, &ended);
        assert_eq!(split.parts.run_queue_ns(), 0);
        assert_eq!(split.parts.timer_ns, 0);
        assert_eq!(split.parts.unexplained_ns, 11 * MS);
        assert_eq!(split.delay_ns(), 11 * MS);
        assert_eq!(split.cause(), Cause::Unexplained);
        // The next event's readings both worked: its wait is its own.
        let next_woke = reading(125, 16, 63, 5);
        let next_ended = reading(127, 18, 63, 5);
        let next = split_of(times(120, 2), &ended, &next_woke, &next_ended);
        assert_eq!(next.parts.run_queue_wake_ns, 3 * MS);
        assert_eq!(next.parts.timer_ns, 2 * MS);
    }

    #[test]
    fn parts_are_named_by_what_was_measured_and_causes_name_them_finer() {
        let parts = Parts {
            blocked_ns: 3,
            memory_stall_ns: 5,
            ..Parts::default()
        };
        let named: Vec<(&str, u64)> = parts
            .by_part()
            .into_iter()
            .map(|(part, ns)| (part.words(), ns))
            .filter(|(_, ns)| *ns > 0)
            .collect();
        assert_eq!(named, [("blocked", 3), ("memory stall", 5)]);
        for cause in Cause::ALL {
            let part = cause.part();
            assert_eq!(part.is_none(), cause == Cause::Mixed, "{cause:?}");
        }
        assert_eq!(Cause::SwapIn.part(), Some(Part::Blocked));
        assert_eq!(Cause::Thrashing.part(), Some(Part::MemoryStall));
    }

    #[test]
    fn a_frame_due_while_the_previous_one_ran_carries_its_causes() {
        // The previous frame ended at 30, 20 ms past its due time, 15 of
        // them on a run queue. This one was due at 20: 10 ms behind it.
        let previous = Parts {
            run_queue_wake_ns: 15 * MS,
            timer_ns: 5 * MS,
            ..Parts::default()
        };
        let before = reading(30, 10, 40, 2);
        let woke = reading(30, 10, 40, 2);
        let ended = reading(31, 11, 40, 2);
        let split = EventSplit::of(times(20, 1), &before, &previous, &woke, Some(&ended), true);
        assert_eq!(split.parts.run_queue_wake_ns, 7_500_000);
        assert_eq!(split.parts.timer_ns, 2_500_000);
        assert_eq!(split.delay_ns(), 10 * MS);
        assert_eq!(split.cause(), Cause::RunQueue);
        assert_eq!(split.parts.less(&split.carried), Parts::default());
        // A previous frame with no delay of its own that still ran past
        // this one's start wanted more CPU than a period: overrun.
        let overran = split_of(times(20, 1), &before, &woke, &ended);
        assert_eq!(overran.parts.cpu_overrun_ns, 10 * MS);
    }

    #[test]
    fn reclaim_is_taken_from_the_cpu_an_event_did_not_want_then_from_its_blocked_time() {
        // A response wanting no set CPU: woke on time, 30 ms of CPU and 10
        // ms blocked; delay accounting saw 35 ms of direct reclaim.
        let before = reading(0, 0, 0, 0);
        let woke = reading(10, 0, 0, 1);
        let ended = reading(50, 30, 0, 2);
        let times = EventTimes {
            due_ns: 10 * MS,
            cpu_wanted_ns: None,
        };
        let split = split_of(times, &before, &woke, &ended);
        assert_eq!(split.delay_ns(), 10 * MS);
        let reclaimed = split.with_delays(DelaySplit {
            reclaim_ns: Some(35 * MS),
            ..DelaySplit::default()
        });
        assert_eq!(reclaimed.parts.memory_stall_ns, 35 * MS);
        assert_eq!(reclaimed.parts.blocked_ns, 5 * MS);
        assert_eq!(reclaimed.delay_ns(), 40 * MS);
        assert_eq!(reclaimed.cause(), Cause::Reclaim);
        // A frame wanting 30 ms: only its overrun and blocked time can be
        // reclaim's; compaction, the larger, names it.
        let frame_times = EventTimes {
            cpu_wanted_ns: Some(25 * MS),
            ..times
        };
        let frame = split_of(frame_times, &before, &woke, &ended).with_delays(DelaySplit {
            reclaim_ns: Some(4 * MS),
            compaction_ns: Some(20 * MS),
            ..DelaySplit::default()
        });
        assert_eq!(frame.parts.memory_stall_ns, 15 * MS);
        assert_eq!(frame.parts.cpu_overrun_ns, 0);
        assert_eq!(frame.parts.blocked_ns, 0);
        assert_eq!(frame.cause(), Cause::Compaction);
    }

    #[test]
    fn a_frame_dropped_at_wake_up_has_only_its_wake_parts() {
        let before = reading(0, 0, 0, 0);
        let woke = reading(40, 0, 25, 1);
        let split = EventSplit::of(times(10, 5), &before, &Parts::default(), &woke, None, true);
        assert_eq!(split.parts.run_queue_wake_ns, 25 * MS);
        assert_eq!(split.parts.timer_ns, 5 * MS);
        assert_eq!(split.ended_ns, split.woke_ns);
        assert_eq!(split.cause(), Cause::RunQueue);
    }

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
}
