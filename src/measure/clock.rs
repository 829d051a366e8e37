//! The one clock feelbench measures with: `CLOCK_MONOTONIC` in integer
//! nanoseconds, absolute-deadline sleeps, and per-thread CPU time.
//!
//! `CLOCK_MONOTONIC` is system-wide, so timestamps taken in different worker
//! processes can be compared directly.

use nix::sys::resource::{getrusage, UsageWho};
use nix::sys::time::TimeSpec;
use nix::time::{clock_gettime, clock_nanosleep, ClockId, ClockNanosleepFlags};

/// Nanoseconds in one second.
pub const NS_PER_S: u64 = 1_000_000_000;

fn to_ns(ts: TimeSpec) -> u64 {
    ts.tv_sec() as u64 * NS_PER_S + ts.tv_nsec() as u64
}

fn read(clock: ClockId) -> u64 {
    // Both clocks used here always exist on Linux; a failure would be a kernel bug.
    to_ns(clock_gettime(clock).expect("clock_gettime on a standard clock"))
}

/// Current `CLOCK_MONOTONIC` time in nanoseconds.
pub fn now_ns() -> u64 {
    read(ClockId::CLOCK_MONOTONIC)
}

/// CPU time consumed so far by the calling thread, in nanoseconds. Each
/// reading makes the scheduler account the thread (it may be preempted
/// there): a thread being measured reads `measure::cpu_time` instead.
pub fn thread_cpu_ns() -> u64 {
    read(ClockId::CLOCK_THREAD_CPUTIME_ID)
}

/// Sleeps until the absolute `CLOCK_MONOTONIC` time `deadline_ns`
/// (`TIMER_ABSTIME`, so a late wake-up never shifts later periods).
/// Returns at once when the deadline has already passed.
pub fn sleep_until_ns(deadline_ns: u64) {
    let target = TimeSpec::new(
        (deadline_ns / NS_PER_S) as libc::time_t,
        (deadline_ns % NS_PER_S) as libc::c_long,
    );
    // EINTR (a signal) just means: check the clock and sleep again.
    while clock_nanosleep(
        ClockId::CLOCK_MONOTONIC,
        ClockNanosleepFlags::TIMER_ABSTIME,
        &target,
    )
    .is_err()
    {
        if now_ns() >= deadline_ns {
            return;
        }
    }
}

/// CPU time (user + system) of the calling process plus that of the
/// children it has reaped, in nanoseconds.
pub fn process_and_children_cpu_ns() -> u64 {
    rusage_cpu_ns(UsageWho::RUSAGE_SELF) + rusage_cpu_ns(UsageWho::RUSAGE_CHILDREN)
}

/// CPU time (user + system) of the calling thread and of the reaped
/// children of its process, in nanoseconds: what a job run from this thread
/// used, without the process's other threads.
pub fn thread_and_children_cpu_ns() -> u64 {
    thread_cpu_ns() + rusage_cpu_ns(UsageWho::RUSAGE_CHILDREN)
}

/// CPU time (user + system) of the calling process alone, in nanoseconds.
pub fn process_cpu_ns() -> u64 {
    rusage_cpu_ns(UsageWho::RUSAGE_SELF)
}

fn rusage_cpu_ns(who: UsageWho) -> u64 {
    // getrusage cannot fail for these two arguments.
    let usage = getrusage(who).expect("getrusage of self and children");
    let total = usage.user_time() + usage.system_time();
    total.tv_sec() as u64 * NS_PER_S + total.tv_usec() as u64 * 1_000
}
