//! A process's tree of descendants, and ending it: becoming the reaper of
//! one's orphans (so nothing a child starts escapes to init, not even a
//! daemon that left its session), finding the live descendants in /proc,
//! killing them all, and reaping them. No process group or cgroup is
//! needed: while this process is a subreaper, every process it started, at
//! any depth, stays below it.

use super::procfs;
use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitid, waitpid, Id, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// How long [`kill_descendants`] keeps killing and reaping before it gives
/// up (a process stuck in uninterruptible sleep dies only when it wakes).
const KILL_TIME: Duration = Duration::from_secs(2);
/// Pause between two rounds of killing.
const KILL_ROUND: Duration = Duration::from_millis(5);

/// Makes the process `command` starts die (SIGKILL) when the thread that
/// starts it ends (for a process's only or main thread: when the process
/// does), even when that happens before the child is set up.
pub fn die_with_this_process(command: &mut Command) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs between fork and exec and calls only
    // async-signal-safe functions (prctl, getppid), allocating nothing.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died before prctl took effect.
            if libc::getppid() != parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

/// Makes this process the reaper of its orphaned descendants, so what its
/// children start (a command's children, daemons) stays below it and can be
/// found, killed and reaped instead of escaping to init.
pub fn become_subreaper() -> std::io::Result<()> {
    // SAFETY: PR_SET_CHILD_SUBREAPER takes one integer argument.
    let ret = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    if ret == -1 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Every descendant of `root` in the /proc tree at `proc_root`, zombies
/// too, with its stat, parents before their children.
fn descendants(proc_root: &Path, root: u32) -> Vec<procfs::ProcessStat> {
    let Ok(entries) = std::fs::read_dir(proc_root) else {
        return Vec::new();
    };
    let processes: Vec<procfs::ProcessStat> = entries
        .filter_map(|e| {
            let pid: u32 = e.ok()?.file_name().to_str()?.parse().ok()?;
            procfs::read_process_stat(proc_root, pid).ok()
        })
        .collect();
    let mut found = Vec::new();
    let mut parents = vec![root];
    while let Some(parent) = parents.pop() {
        for stat in &processes {
            if stat.ppid == parent && stat.pid != root {
                parents.push(stat.pid);
                found.push(stat.clone());
            }
        }
    }
    found
}

/// The live (not zombie) descendants of `root` in the /proc tree at
/// `proc_root`, parents before their children.
pub fn live_descendants(proc_root: &Path, root: u32) -> Vec<u32> {
    descendants(proc_root, root)
        .into_iter()
        .filter(|stat| stat.is_running())
        .map(|stat| stat.pid)
        .collect()
}

/// CPU ticks used by the descendants of process `root`, not `root` itself
/// (including what they reaped from children that already ended, and
/// zombies not yet reaped).
pub fn descendants_cpu_ticks(proc_root: &Path, root: u32) -> u64 {
    descendants(proc_root, root)
        .iter()
        .map(procfs::ProcessStat::cpu_ticks_with_reaped)
        .sum()
}

/// SIGKILLs every descendant of this process, round after round until none
/// is left alive (what a dying process forks in the meantime is caught by
/// the next round), and returns how many processes were killed. It reaps
/// nothing, so it may run beside a thread waiting for a child; the dead stay
/// zombies until [`reap_exited`]. Meant for a subreaper: by the time a
/// killed process is a zombie its own children have become this process's.
pub fn kill_descendants() -> usize {
    let me = std::process::id();
    let deadline = Instant::now() + KILL_TIME;
    let mut killed: Vec<u32> = Vec::new();
    loop {
        let live = live_descendants(Path::new("/proc"), me);
        for &pid in &live {
            if kill(Pid::from_raw(pid as i32), Signal::SIGKILL).is_ok() && !killed.contains(&pid) {
                killed.push(pid);
            }
        }
        if live.is_empty() || Instant::now() >= deadline {
            return killed.len();
        }
        std::thread::sleep(KILL_ROUND);
    }
}

/// Reaps the children that have ended, without waiting for the others,
/// until it meets `keep` ended, which it leaves for its owner to wait for
/// (a `std::process::Child`). For a subreaper whose orphans end: their CPU
/// time then counts in its `RUSAGE_CHILDREN`, and they do not pile up as
/// zombies.
pub fn reap_exited_except(keep: u32) {
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
    // WNOWAIT: look at the first ended child without reaping it yet.
    while let Ok(status) = waitid(Id::All, flags) {
        match status.pid() {
            Some(pid) if pid.as_raw() as u32 != keep => {
                let _ = waitpid(pid, None);
            }
            _ => return,
        }
    }
}

/// Reaps every child that has ended, without waiting for the others.
pub fn reap_exited() {
    while let Ok(status) = waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
        if status == WaitStatus::StillAlive {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake /proc with processes given as (pid, ppid, state).
    fn fake_proc(processes: &[(u32, u32, char)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for &(pid, ppid, state) in processes {
            let path = dir.path().join(pid.to_string());
            std::fs::create_dir(&path).unwrap();
            let text = format!("{pid} (p) {state} {ppid} 1 1 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 5 0");
            std::fs::write(path.join("stat"), text).unwrap();
        }
        dir
    }

    #[test]
    fn descendants_cpu_adds_up_every_descendant_but_not_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let stat = |pid: u32, ppid: u32, ticks: u64| {
            std::fs::create_dir(dir.path().join(pid.to_string())).unwrap();
            let text = format!(
                "{pid} (a (b) c) S {ppid} 1 1 0 -1 0 0 0 0 0 {ticks} 1 2 3 20 0 1 0 {pid}0 3133440"
            );
            std::fs::write(dir.path().join(pid.to_string()).join("stat"), text).unwrap();
        };
        stat(10, 1, 100); // root: 100 + 1 + 2 + 3
        stat(11, 10, 10); // child
        stat(12, 11, 20); // grandchild
        stat(13, 1, 1000); // unrelated
        assert_eq!(descendants_cpu_ticks(dir.path(), 10), 16 + 26);
        assert_eq!(descendants_cpu_ticks(dir.path(), 11), 26);
        assert_eq!(descendants_cpu_ticks(dir.path(), 99), 0);
    }

    #[test]
    fn descendants_at_any_depth_and_only_the_live_ones() {
        let proc = fake_proc(&[
            (10, 1, 'S'),  // the root
            (11, 10, 'S'), // child
            (12, 11, 'R'), // grandchild
            (13, 12, 'Z'), // a zombie great-grandchild...
            (14, 13, 'S'), // ...whose child is still found
            (20, 1, 'S'),  // unrelated
            (21, 20, 'S'),
        ]);
        let mut found = live_descendants(proc.path(), 10);
        found.sort_unstable();
        assert_eq!(found, [11, 12, 14]);
        assert!(live_descendants(proc.path(), 14).is_empty());
        assert!(live_descendants(&proc.path().join("missing"), 10).is_empty());
    }

    #[test]
    fn the_real_tree_holds_a_child_until_it_is_killed() {
        // The test harness's own children, if any, are not ours to kill: only
        // check the listing here; killing is covered by the integration tests.
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let found = live_descendants(Path::new("/proc"), std::process::id());
        assert!(found.contains(&child.id()), "{found:?}");
        child.kill().unwrap();
        child.wait().unwrap();
        let found = live_descendants(Path::new("/proc"), std::process::id());
        assert!(!found.contains(&child.id()), "{found:?}");
    }
}
