//! The tasks (threads) of a probe worker and of the processes it started:
//! giving every one of them the probe's nice value and policy, however and
//! whenever it was started, and reading back from the kernel what each one
//! has, for the run's record. Nice, policy and timer slack are attributes
//! of one thread, not of a process: a thread started before they were set
//! keeps what it had.

use super::affinity;
use super::sched::{self, SchedError, SchedRequest};
use super::slice;
use crate::system::cpulist::CpuList;
use crate::system::process_tree;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One thread of some process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Task {
    /// Its process.
    pub pid: u32,
    /// The thread itself.
    pub tid: u32,
}

/// The scheduling of one task as the kernel reports it; what it would not
/// say is missing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskSched {
    /// Its process.
    pub pid: u32,
    /// The thread.
    pub tid: u32,
    /// Its name (`comm`).
    pub name: Option<String>,
    /// Scheduling policy, e.g. `SCHED_FIFO`.
    pub policy: Option<String>,
    /// Real-time priority (0 under SCHED_OTHER).
    pub priority: Option<i32>,
    /// Nice value.
    pub nice: Option<i32>,
    /// Timer slack in ns (/proc/TID/timerslack_ns, which the kernel shows
    /// only to a task's own thread or to CAP_SYS_NICE).
    pub timer_slack_ns: Option<u64>,
    /// Its slice under the fair scheduler in ns (sched_getattr: a custom
    /// one, else the base slice); missing before Linux 6.12 and in files
    /// older than the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slice_ns: Option<u64>,
    /// The CPUs it may run on.
    pub cpus: Option<CpuList>,
}

/// The tasks of process `root` and of its live descendants in the /proc
/// tree at `proc_root`, `root`'s first.
pub fn of_tree(proc_root: &Path, root: u32) -> Vec<Task> {
    std::iter::once(root)
        .chain(process_tree::live_descendants(proc_root, root))
        .flat_map(|pid| {
            threads_of(proc_root, pid)
                .into_iter()
                .map(move |tid| Task { pid, tid })
        })
        .collect()
}

/// The thread ids of process `pid`, in order (none when it is gone).
fn threads_of(proc_root: &Path, pid: u32) -> Vec<u32> {
    let dir = proc_root.join(pid.to_string()).join("task");
    let mut tids: Vec<u32> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    tids.sort_unstable();
    tids
}

/// Gives every task of `tasks` but `except` (the caller's thread, which
/// sets its own) the nice value, policy and slice of `request`. A task that
/// ended meanwhile is passed over.
pub fn apply_to(tasks: &[Task], except: u32, request: &SchedRequest) -> Result<(), SchedError> {
    for task in tasks.iter().filter(|t| t.tid != except) {
        let tid = task.tid as libc::pid_t;
        let applied = sched::set_nice_of(tid, request.nice)
            .and_then(|()| {
                request
                    .fifo_priority
                    .map_or(Ok(()), |p| sched::set_fifo_of(tid, p))
            })
            .and_then(|()| {
                request
                    .slice_ns
                    .map_or(Ok(()), |ns| slice::set_slice_of(tid, ns))
            });
        match applied {
            Err(
                SchedError::Nice { error, .. }
                | SchedError::Fifo { error, .. }
                | SchedError::Slice { error, .. },
            ) if error.raw_os_error() == Some(libc::ESRCH) => {}
            other => other?,
        }
    }
    Ok(())
}

/// What the kernel reports of `task` (its timer slack from the /proc tree
/// at `proc_root`), or `None` when it has ended.
pub fn read(proc_root: &Path, task: Task) -> Option<TaskSched> {
    let tid = task.tid as libc::pid_t;
    let name = std::fs::read_to_string(
        proc_root
            .join(task.pid.to_string())
            .join("task")
            .join(task.tid.to_string())
            .join("comm"),
    )
    .ok()?;
    let slack = std::fs::read_to_string(proc_root.join(task.tid.to_string()).join("timerslack_ns"));
    Some(TaskSched {
        pid: task.pid,
        tid: task.tid,
        name: Some(name.trim_end().to_string()),
        policy: sched::policy_of(tid),
        priority: sched::priority_of(tid),
        nice: sched::nice_of(tid),
        timer_slack_ns: slack.ok().and_then(|s| s.trim().parse().ok()),
        slice_ns: slice::slice_of(tid),
        cpus: affinity::of_thread(tid).ok(),
    })
}

/// What the kernel reports of every task of `tasks` but `except` that
/// still runs.
pub fn read_all(proc_root: &Path, tasks: &[Task], except: u32) -> Vec<TaskSched> {
    tasks
        .iter()
        .filter(|t| t.tid != except)
        .filter_map(|&t| read(proc_root, t))
        .collect()
}

/// The calling thread's id.
pub fn own_tid() -> u32 {
    nix::unistd::gettid().as_raw() as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// A thread named `name` that runs until the returned sender is
    /// dropped; its tid.
    fn parked(name: &str) -> (mpsc::Sender<()>, u32, std::thread::JoinHandle<()>) {
        let (stop, parked) = mpsc::channel::<()>();
        let (tell, tid) = mpsc::channel();
        let handle = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                tell.send(own_tid()).unwrap();
                let _ = parked.recv();
            })
            .unwrap();
        (stop, tid.recv().unwrap(), handle)
    }

    #[test]
    fn a_thread_started_earlier_gets_the_nice_value_and_is_read_back() {
        let proc_root = Path::new("/proc");
        let (stop, tid, handle) = parked("fb-test-parked");
        let tasks = of_tree(proc_root, std::process::id());
        let me = own_tid();
        assert!(tasks.iter().any(|t| t.tid == tid) && tasks.iter().any(|t| t.tid == me));
        let only_it: Vec<Task> = tasks.into_iter().filter(|t| t.tid == tid).collect();
        let request = SchedRequest {
            nice: 7,
            fifo_priority: None,
            timer_slack_ns: 1,
            slice_ns: slice::slice_of(0).map(|_| 2_000_000),
        };
        apply_to(&only_it, me, &request).unwrap();
        let seen = read_all(proc_root, &only_it, me);
        assert_eq!(seen.len(), 1);
        let it = &seen[0];
        assert_eq!(it.name.as_deref(), Some("fb-test-parked"));
        assert_eq!((it.pid, it.tid), (std::process::id(), tid));
        assert_eq!(it.nice, Some(7));
        assert_eq!(it.policy.as_deref(), Some("SCHED_OTHER"));
        assert_eq!(it.priority, Some(0));
        // Where the kernel has custom slices, the thread got its own.
        assert_eq!(it.slice_ns, request.slice_ns.or(it.slice_ns));
        assert!(it.cpus.is_some());
        assert!(read_all(proc_root, &only_it, tid).is_empty(), "left out");
        drop(stop);
        handle.join().unwrap();
        assert_eq!(read(proc_root, only_it[0]), None, "an ended thread");
        apply_to(&only_it, me, &request).expect("an ended thread is passed over");
    }

    #[test]
    fn a_missing_process_has_no_tasks() {
        let dir = tempfile::tempdir().unwrap();
        assert!(of_tree(dir.path(), 1).is_empty());
    }
}
