//! The parts an event's delay splits into, and adding them up.

use serde::{Deserialize, Serialize};

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
