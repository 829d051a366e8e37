//! Scheduling settings of the calling process or thread: nice, SCHED_FIFO,
//! timer slack, memory locking and the thread name. Thin wrappers around the
//! system calls (`nix` lacks most of them), each with the reason it can fail.

use super::slice;
use super::tasks::TaskSched;
use crate::system::cpulist::CpuList;
use serde::{Deserialize, Serialize};
use std::io;

/// Why a scheduling setting could not be applied.
#[derive(Debug, thiserror::Error)]
pub enum SchedError {
    /// setpriority failed.
    #[error("cannot set nice {nice}: {error} (a nice value below the one feelbench was started with, or below 0, needs root or CAP_SYS_NICE)")]
    Nice { nice: i32, error: io::Error },
    /// sched_setscheduler failed.
    #[error("cannot switch to SCHED_FIFO priority {priority}: {error} (real-time scheduling needs root, CAP_SYS_NICE or an RLIMIT_RTPRIO)")]
    Fifo { priority: i32, error: io::Error },
    /// prctl(PR_SET_TIMERSLACK) failed.
    #[error("cannot set timer slack to {slack_ns} ns: {error}")]
    TimerSlack { slack_ns: u64, error: io::Error },
    /// sched_setattr or sched_getattr failed.
    #[error("cannot set a slice of {slack} with sched_setattr: {error}", slack = show_ns(*slice_ns))]
    Slice { slice_ns: u64, error: io::Error },
    /// The kernel took the slice but shows another: it has no custom
    /// slices.
    #[error("--slice {asked}: the kernel shows a slice of {shown} ns after sched_setattr; custom slices need Linux 6.12 or later (this is {kernel})", asked = show_ns(*slice_ns))]
    SliceIgnored {
        slice_ns: u64,
        shown: u64,
        kernel: String,
    },
}

/// `ns` as a duration a user writes (`3ms`, `100us`).
fn show_ns(ns: u64) -> String {
    humantime::format_duration(std::time::Duration::from_nanos(ns)).to_string()
}

/// What the probe asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchedRequest {
    /// Nice value of the process.
    pub nice: i32,
    /// SCHED_FIFO priority, or `None` for SCHED_OTHER.
    pub fifo_priority: Option<i32>,
    /// Timer slack wanted, in ns (at least 1: 0 would mean "the default").
    pub timer_slack_ns: u64,
    /// A custom slice of the fair scheduler in ns (`--slice`, Linux
    /// 6.12+), `None` for the kernel's; absent in files older than it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slice_ns: Option<u64>,
}

/// What a probe does with its memory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryPolicy {
    /// Locked (mlockall), so page faults never show as latency: every
    /// probe that simulates a task the CPU has to run in time.
    #[default]
    Locked,
    /// Left to the kernel, and in the loads' memory cgroup when the run has
    /// one (`--mem-limit`): the probe's pages compete with the loads', so
    /// what memory pressure costs a program left alone shows (resp1).
    Shared,
}

impl MemoryPolicy {
    fn is_locked(&self) -> bool {
        *self == MemoryPolicy::Locked
    }
}

/// What was really in force once the settings were applied (read back).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchedApplied {
    /// Scheduling policy, e.g. `SCHED_OTHER` or `SCHED_FIFO`.
    pub policy: String,
    /// SCHED_FIFO priority asked for, if any.
    pub fifo_priority: Option<i32>,
    /// Nice value.
    pub nice: i32,
    /// Timer slack of the probe's thread read back after the last policy
    /// change; missing when the kernel would not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timer_slack_ns: Option<u64>,
    /// The slice of the probe's thread read back with sched_getattr (its
    /// custom one, else the kernel's base slice); missing when the kernel
    /// would not say (before 6.12, or under SCHED_FIFO).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slice_ns: Option<u64>,
    /// Whether mlockall succeeded (it can fail under RLIMIT_MEMLOCK);
    /// false when the probe shares its memory on purpose.
    pub memory_locked: bool,
    /// What the probe did with its memory; `locked` (left out) in files
    /// older than the field.
    #[serde(default, skip_serializing_if = "MemoryPolicy::is_locked")]
    pub memory: MemoryPolicy,
    /// The CPUs the probe could run on, read back once its affinity was
    /// set (`--probe-cpus`); absent in files older than the option.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<CpuList>,
    /// What each thread of the probe worker and of the processes it
    /// started had, read back from the kernel once the window began;
    /// absent in files older than the field.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<TaskSched>,
}

#[cfg(test)]
impl SchedApplied {
    /// Plain SCHED_OTHER settings with locked memory, for unit tests.
    pub fn for_tests() -> Self {
        Self {
            policy: "SCHED_OTHER".into(),
            fifo_priority: None,
            nice: 0,
            timer_slack_ns: Some(1),
            slice_ns: None,
            memory_locked: true,
            memory: MemoryPolicy::Locked,
            cpus: None,
            tasks: Vec::new(),
        }
    }
}

fn check(ret: libc::c_int) -> io::Result<()> {
    if ret == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The calling thread, for the functions that take a thread id.
pub const CALLER: libc::pid_t = 0;

/// Sets the nice value of the calling thread (on Linux the nice value is a
/// per-thread attribute; threads created later inherit it).
pub fn set_nice(nice: i32) -> Result<(), SchedError> {
    set_nice_of(CALLER, nice)
}

/// Sets the nice value of thread `tid` (0: the caller).
pub fn set_nice_of(tid: libc::pid_t, nice: i32) -> Result<(), SchedError> {
    // SAFETY: setpriority takes plain integers; with PRIO_PROCESS, `who` is
    // one thread on Linux.
    let ret = unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice) };
    check(ret).map_err(|error| SchedError::Nice { nice, error })
}

/// Switches the calling thread to SCHED_FIFO at `priority`.
pub fn set_fifo(priority: i32) -> Result<(), SchedError> {
    set_fifo_of(CALLER, priority)
}

/// Switches thread `tid` (0: the caller) to SCHED_FIFO at `priority`.
pub fn set_fifo_of(tid: libc::pid_t, priority: i32) -> Result<(), SchedError> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: `param` is a valid sched_param that outlives the call; the
    // pid names one thread.
    let ret = unsafe { libc::sched_setscheduler(tid, libc::SCHED_FIFO, &param) };
    check(ret).map_err(|error| SchedError::Fifo { priority, error })
}

/// Makes the calling thread as little urgent as a thread sure to run can
/// be: SCHED_OTHER at nice 19 (a helper beside the probe that must not
/// delay it). Lowering both is always allowed.
pub fn set_least_urgent() -> io::Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `param` is a valid sched_param that outlives the call; pid 0
    // is the caller.
    check(unsafe { libc::sched_setscheduler(CALLER, libc::SCHED_OTHER, &param) })?;
    set_nice(19).map_err(io::Error::other)
}

/// The calling thread's scheduling policy, by name.
pub fn current_policy() -> String {
    policy_of(CALLER).unwrap_or_else(|| "unknown".to_string())
}

/// The scheduling policy of thread `tid` (0: the caller) by name, or
/// `None` when the kernel would not say (the thread is gone).
pub fn policy_of(tid: libc::pid_t) -> Option<String> {
    // SAFETY: sched_getscheduler takes a pid only.
    let name = match unsafe { libc::sched_getscheduler(tid) } {
        -1 => return None,
        libc::SCHED_OTHER => "SCHED_OTHER".to_string(),
        libc::SCHED_FIFO => "SCHED_FIFO".to_string(),
        libc::SCHED_RR => "SCHED_RR".to_string(),
        libc::SCHED_BATCH => "SCHED_BATCH".to_string(),
        libc::SCHED_IDLE => "SCHED_IDLE".to_string(),
        other => format!("policy {other}"),
    };
    Some(name)
}

/// The real-time priority of thread `tid` (0 under SCHED_OTHER), or `None`
/// when the kernel would not say.
pub fn priority_of(tid: libc::pid_t) -> Option<i32> {
    let mut param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `param` is a valid sched_param the call writes into.
    let ret = unsafe { libc::sched_getparam(tid, &mut param) };
    check(ret).ok().map(|()| param.sched_priority)
}

/// The calling thread's nice value (in the orchestrator, the one
/// feelbench was started with).
pub fn current_nice() -> i32 {
    // SAFETY: getpriority takes plain integers. It can return -1 as a valid
    // value; with these arguments it cannot fail.
    unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) }
}

/// The nice value of thread `tid`, or `None` when the kernel would not say.
pub fn nice_of(tid: libc::pid_t) -> Option<i32> {
    // -1 is a valid nice value: a failure is told by errno, cleared first.
    nix::errno::Errno::clear();
    // SAFETY: getpriority takes plain integers.
    let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, tid as libc::id_t) };
    (nice != -1 || nix::errno::Errno::last_raw() == 0).then_some(nice)
}

/// Checks, in a throwaway thread, that `request`'s nice value and policy may
/// be set, so a run without the privileges fails at once instead of in every
/// scenario.
pub fn check_allowed(request: &SchedRequest) -> Result<(), SchedError> {
    let request = *request;
    std::thread::Builder::new()
        .name("fb-sched-check".into())
        .spawn(move || {
            set_nice(request.nice)?;
            request.fifo_priority.map_or(Ok(()), set_fifo)?;
            request
                .slice_ns
                .map_or(Ok(()), |ns| slice::set_slice_of(CALLER, ns))
        })
        .expect("starting a thread")
        .join()
        .expect("the check thread does not panic")
}

/// Sets the calling thread's timer slack (inherited by the threads and
/// processes it starts from now on) and returns the value read back.
pub fn set_timer_slack(slack_ns: u64) -> Result<Option<u64>, SchedError> {
    let slack = slack_ns.max(1) as libc::c_ulong;
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument; the rest are ignored.
    let ret = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, slack, 0, 0, 0) };
    check(ret).map_err(|error| SchedError::TimerSlack { slack_ns, error })?;
    Ok(timer_slack_ns())
}

/// The calling thread's current timer slack in ns, or `None` when
/// `PR_GET_TIMERSLACK` fails.
pub fn timer_slack_ns() -> Option<u64> {
    // SAFETY: PR_GET_TIMERSLACK takes no pointer and returns the slack.
    slack_of_prctl(unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) })
}

/// The slack a `PR_GET_TIMERSLACK` that returned `ret` reports: none when
/// it failed (-1).
fn slack_of_prctl(ret: libc::c_int) -> Option<u64> {
    u64::try_from(ret).ok()
}

/// Locks all current and future memory of the process, so that page faults do
/// not show up as latency. Returns whether it worked.
pub fn lock_memory() -> bool {
    // SAFETY: mlockall takes flags only.
    let ret = unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) };
    ret == 0
}

/// Names the calling thread (shown by `ps -L` and `top -H`; 15 bytes at most).
pub fn set_thread_name(name: &str) {
    let mut bytes: Vec<u8> = name.bytes().filter(|b| *b != 0).take(15).collect();
    bytes.push(0);
    // SAFETY: `bytes` is a NUL-terminated buffer that lives across the call.
    unsafe { libc::prctl(libc::PR_SET_NAME, bytes.as_ptr() as libc::c_ulong, 0, 0, 0) };
}

/// Applies `request` to the calling process and thread: nice first, then the
/// policy and the slice, then the timer slack (a policy change resets the slack, so it must
/// come last), then locks memory if `memory` says so; the record says on
/// which CPUs the thread may run (set before, see `affinity`), and leaves
/// the other tasks to be read back later (`tasks`).
pub fn apply(request: &SchedRequest, memory: MemoryPolicy) -> Result<SchedApplied, SchedError> {
    set_nice(request.nice)?;
    if let Some(priority) = request.fifo_priority {
        set_fifo(priority)?;
    }
    if let Some(slice_ns) = request.slice_ns {
        slice::set_slice_of(CALLER, slice_ns)?;
    }
    let timer_slack_ns = set_timer_slack(request.timer_slack_ns)?;
    let memory_locked = memory == MemoryPolicy::Locked && lock_memory();
    Ok(SchedApplied {
        policy: current_policy(),
        fifo_priority: request.fifo_priority,
        nice: current_nice(),
        timer_slack_ns,
        slice_ns: slice::slice_of(CALLER),
        memory_locked,
        memory,
        cpus: super::affinity::current().ok(),
        tasks: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unprivileged_requests_pass_the_check() {
        let request = SchedRequest {
            nice: 5,
            fifo_priority: None,
            timer_slack_ns: 1,
            slice_ns: None,
        };
        let before = current_nice();
        check_allowed(&request).unwrap();
        assert_eq!(current_nice(), before, "the check leaves the caller alone");
    }

    #[test]
    fn the_least_urgent_thread_is_sched_other_at_nice_19() {
        std::thread::spawn(|| {
            set_least_urgent().unwrap();
            assert_eq!(
                (current_policy().as_str(), current_nice()),
                ("SCHED_OTHER", 19)
            );
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_failed_timer_slack_read_is_missing_not_zero() {
        assert_eq!(slack_of_prctl(-1), None);
        assert_eq!(slack_of_prctl(0), Some(0));
        assert_eq!(slack_of_prctl(50_000), Some(50_000));
    }

    #[test]
    fn timer_slack_reads_back_what_was_set() {
        // Runs in a throwaway thread so the test harness thread keeps its slack.
        std::thread::spawn(|| {
            assert_eq!(set_timer_slack(1).unwrap(), Some(1));
            assert_eq!(set_timer_slack(20_000).unwrap(), Some(20_000));
        })
        .join()
        .unwrap();
    }
}
