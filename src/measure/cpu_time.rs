//! The calling thread's CPU time, read so that the reading leaves the
//! scheduler alone where the system permits: from a perf task clock of the
//! thread's own (`system::task_clock` says why it matters), else from its
//! CPU clock. The frames' work (`measure::work`) and the late split
//! (`measure::attrib`) read it; both must read it on the thread that
//! opened it.
//!
//! The price: the task clock counts all the time the thread is current,
//! host steal and IRQ time included, which the CPU clock leaves out on a
//! kernel with PARAVIRT_TIME_ACCOUNTING or IRQ_TIME_ACCOUNTING. So under
//! steal a frame's work is that much less, and an rt-app `run` whose work
//! was stolen from shows it as CPU overrun, not as steal. On this project's
//! VM the hypervisor stole over 2 % in 1 of the default run's 54
//! measurements; the scheduler's accounting at each reading of the CPU
//! clock moved the audio probe's median wake-up under burn from 2.74 ms to
//! 0.059 ms (`bench/work_clock.sh`). That VM's kernel has no
//! IRQ_TIME_ACCOUNTING, so there both clocks count interrupts taken while
//! the thread runs, and the stalls the host does not report as steal
//! (`measure::work` measured them).

use super::clock::thread_cpu_ns;
use crate::system::task_clock::TaskClock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// The CPU time of the thread that opened it; its clones read the same
/// counter (one per thread, however many read it).
#[derive(Debug, Clone)]
pub struct ThreadCpuTime {
    /// The thread's task clock; `None` where perf events are not permitted.
    task_clock: Option<Arc<Counter>>,
}

/// A task clock on the scale of the thread's CPU clock; from its first
/// failed reading on, the CPU clock instead.
#[derive(Debug)]
struct Counter {
    clock: TaskClock,
    /// What to add to the counter to give the thread's CPU clock at opening.
    offset_ns: u64,
    /// The last reading given.
    last_ns: AtomicU64,
    /// Once a reading failed: what to add to the CPU clock so that the
    /// readings go on from the last one given. The two clocks drift apart
    /// (the task clock counts host steal, the CPU clock the scheduler's
    /// own path at each switch), so a work that read one, then the other,
    /// would jump by all their drift since the opening.
    fallback_shift_ns: OnceLock<i64>,
}

impl Counter {
    fn new(clock: TaskClock) -> Option<Self> {
        let counted_ns = clock.read_ns()?;
        let cpu_ns = thread_cpu_ns();
        Some(Self {
            clock,
            offset_ns: cpu_ns.saturating_sub(counted_ns),
            last_ns: AtomicU64::new(cpu_ns),
            fallback_shift_ns: OnceLock::new(),
        })
    }

    fn read_ns(&self) -> u64 {
        if self.fallback_shift_ns.get().is_none() {
            if let Some(counted_ns) = self.clock.read_ns() {
                let ns = counted_ns + self.offset_ns;
                self.last_ns.store(ns, Ordering::Relaxed);
                return ns;
            }
        }
        let shift_ns = *self
            .fallback_shift_ns
            .get_or_init(|| self.last_ns.load(Ordering::Relaxed) as i64 - thread_cpu_ns() as i64);
        (thread_cpu_ns() as i64 + shift_ns).max(0) as u64
    }
}

impl ThreadCpuTime {
    /// The calling thread's CPU time, from its task clock when perf events
    /// are permitted.
    pub fn open() -> Self {
        Self::on(TaskClock::open().ok())
    }

    /// The calling thread's CPU time from `clock`, a task clock it opened,
    /// else from its CPU clock.
    fn on(clock: Option<TaskClock>) -> Self {
        Self {
            task_clock: clock.and_then(Counter::new).map(Arc::new),
        }
    }

    /// The calling thread's CPU time from its CPU clock alone, with no
    /// counter on the thread: for a thread that times its own context
    /// switches (the micro probes' round trips), at each of which a perf
    /// counter of the thread is switched out and in, and that reads its
    /// CPU time only between what it times.
    pub fn cpu_clock() -> Self {
        Self { task_clock: None }
    }

    /// Whether it reads a perf counter of the thread (its task clock).
    #[cfg(test)]
    pub fn has_counter(&self) -> bool {
        self.task_clock.is_some()
    }

    /// The thread's CPU time, ns, on the scale of its CPU clock. Should a
    /// reading of the task clock fail, this and every later reading come
    /// from the CPU clock, shifted to go on from the last reading: a work
    /// timed across the failure loses the time since that reading, and
    /// never mixes the two clocks.
    pub fn read_ns(&self) -> u64 {
        self.task_clock
            .as_ref()
            .map_or_else(thread_cpu_ns, |counter| counter.read_ns())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_clock_alone_opens_no_counter_and_reads_the_cpu_clock() {
        let cpu_time = ThreadCpuTime::cpu_clock();
        assert!(!cpu_time.has_counter());
        let (before_ns, read_ns) = (thread_cpu_ns(), cpu_time.read_ns());
        assert!(before_ns <= read_ns && read_ns <= thread_cpu_ns());
    }

    #[test]
    fn it_reads_the_threads_cpu_time_on_its_cpu_clocks_scale() {
        let cpu_time = ThreadCpuTime::open();
        if !cpu_time.has_counter() {
            // It would only compare the CPU clock with itself.
            eprintln!("SKIPPED measure::cpu_time::tests::it_reads_the_threads_cpu_time_on_its_cpu_clocks_scale: perf events not permitted here");
            return;
        }
        let (from_ns, clock_from_ns) = (cpu_time.read_ns(), thread_cpu_ns());
        let mut spins = 0u64;
        while thread_cpu_ns() - clock_from_ns < 20_000_000 {
            spins = std::hint::black_box(spins + 1);
        }
        let (to_ns, clock_to_ns) = (cpu_time.read_ns(), thread_cpu_ns());
        // Both count the same running; the readings lie a few µs apart.
        assert!(
            from_ns.abs_diff(clock_from_ns) < 2_000_000,
            "{from_ns} against {clock_from_ns}"
        );
        assert!(
            to_ns.abs_diff(clock_to_ns) < 2_000_000,
            "{to_ns} against {clock_to_ns}"
        );
        assert!(to_ns - from_ns >= 18_000_000, "{from_ns} to {to_ns}");
    }

    #[test]
    fn a_failed_reading_goes_on_from_the_last_on_the_cpu_clock_never_jumping() {
        // A counter that reads 0 at the opening, then 50 s (as if it had
        // counted 50 s more than the CPU clock since), then fails (a pipe
        // whose writer is closed stands in for the perf counter's file).
        let (reader, writer) = std::io::pipe().unwrap();
        let mut writer = std::fs::File::from(std::os::fd::OwnedFd::from(writer));
        for counted_ns in [0u64, 50_000_000_000] {
            std::io::Write::write_all(&mut writer, &counted_ns.to_ne_bytes()).unwrap();
        }
        drop(writer);
        let reader = std::fs::File::from(std::os::fd::OwnedFd::from(reader));
        let cpu_time = ThreadCpuTime::on(Some(TaskClock::of_file(reader)));
        assert!(cpu_time.has_counter());
        let counted_ns = cpu_time.read_ns();
        let (fallen_back_ns, clock_from_ns) = (cpu_time.read_ns(), thread_cpu_ns());
        // The CPU clock is 50 s behind: going on from the counter's last
        // reading, not from the CPU clock.
        assert!(
            fallen_back_ns >= counted_ns && fallen_back_ns - counted_ns < 2_000_000,
            "{counted_ns} then {fallen_back_ns}"
        );
        let mut spins = 0u64;
        while thread_cpu_ns() - clock_from_ns < 20_000_000 {
            spins = std::hint::black_box(spins + 1);
        }
        let later_ns = cpu_time.read_ns();
        let clock_ns = thread_cpu_ns() - clock_from_ns;
        // And it advances as the CPU clock does.
        assert!(
            (later_ns - fallen_back_ns).abs_diff(clock_ns) < 2_000_000,
            "{fallen_back_ns} to {later_ns} against {clock_ns}"
        );
    }
}
