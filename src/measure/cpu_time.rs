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
//! 0.059 ms (`bench/work_clock.sh`).

use super::clock::thread_cpu_ns;
use crate::system::task_clock::TaskClock;
use std::sync::Arc;

/// The CPU time of the thread that opened it; its clones read the same
/// counter (one per thread, however many read it).
#[derive(Debug, Clone)]
pub struct ThreadCpuTime {
    /// The thread's task clock and what to add to it to give the thread's
    /// CPU clock; `None` where perf events are not permitted.
    task_clock: Option<Arc<(TaskClock, u64)>>,
}

impl ThreadCpuTime {
    /// The calling thread's CPU time, from its task clock when perf events
    /// are permitted.
    pub fn open() -> Self {
        let task_clock = TaskClock::open().ok().and_then(|clock| {
            let counted_ns = clock.read_ns()?;
            Some(Arc::new((
                clock,
                thread_cpu_ns().saturating_sub(counted_ns),
            )))
        });
        Self { task_clock }
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

    /// The thread's CPU time, ns, on the scale of its CPU clock.
    pub fn read_ns(&self) -> u64 {
        self.task_clock
            .as_ref()
            .and_then(|clock| Some(clock.0.read_ns()? + clock.1))
            .unwrap_or_else(thread_cpu_ns)
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
        if cpu_time.task_clock.is_none() {
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
}
