//! The preflight noise check: before the first scenario, how much CPU
//! other processes used and how much time the hypervisor stole, over a
//! short sample (`--noise-check`, 1 s by default). Two snapshots of
//! `<proc_root>/stat` and of every `<proc_root>/PID/stat` (user + system
//! time) are compared by [`assess`], a pure function; a process is known by
//! its pid and start time (kernel workers rename themselves as they work). Processes that started
//! and ended within the sample are not seen; one that started during it is
//! counted with all its time.

use super::counters::{self, CpuTicks, ProcessTicks};
use super::procfs::ProcError;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::{Duration, Instant};

/// CPU used by other processes, as % of one CPU, above which the machine
/// is not quiet.
pub const OTHERS_LIMIT_PCT: f64 = 10.0;
/// Stolen share of all CPU time, in %, above which the machine is not quiet.
pub const STEAL_LIMIT_PCT: f64 = 2.0;
/// How many of the busiest other processes a warning names.
const TOP: usize = 3;

/// A moment's CPU counters of the whole system and of every process.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub cpu: CpuTicks,
    pub processes: Vec<ProcessTicks>,
}

/// Reads `<proc_root>/stat` and every `<proc_root>/PID/stat` (a process
/// that ends while being read is left out).
pub fn snapshot(proc_root: &Path) -> Result<Snapshot, ProcError> {
    let cpu = counters::read_stat(proc_root)?.cpu;
    Ok(Snapshot {
        cpu,
        processes: counters::read_processes(proc_root, |_| true),
    })
}

/// A process that used CPU during the sample.
#[derive(Debug, Clone, PartialEq)]
pub struct Consumer {
    pub pid: u32,
    pub comm: String,
    /// % of one CPU.
    pub cpu_pct: f64,
}

/// What the sample found.
#[derive(Debug, Clone, PartialEq)]
pub struct Noise {
    /// CPU used by processes other than `own` and its descendants, as % of one CPU.
    pub others_cpu_pct: f64,
    /// Stolen share of all CPU time; `None` when the kernel does not count it.
    pub steal_pct: Option<f64>,
    /// The busiest other processes, busiest first.
    pub top: Vec<Consumer>,
}

/// Compares two snapshots taken `elapsed` apart, leaving out process `own`
/// and its descendants, with `ticks_per_s` clock ticks per second.
pub fn assess(
    before: &Snapshot,
    after: &Snapshot,
    elapsed: Duration,
    own: u32,
    ticks_per_s: u64,
) -> Noise {
    let mut ours = HashSet::from([own]);
    // Parents come before children often but not always: repeat until stable.
    loop {
        let grown = after
            .processes
            .iter()
            .filter(|p| ours.contains(&p.ppid) && !ours.contains(&p.pid))
            .map(|p| p.pid)
            .collect::<Vec<_>>();
        if grown.is_empty() {
            break;
        }
        ours.extend(grown);
    }
    let earlier: HashMap<(u32, u64), u64> = before
        .processes
        .iter()
        .map(|p| ((p.pid, p.start_ticks), p.cpu_ticks))
        .collect();
    let window_ticks = (elapsed.as_secs_f64() * ticks_per_s as f64).max(1.0);
    let mut top: Vec<Consumer> = after
        .processes
        .iter()
        .filter(|p| !ours.contains(&p.pid))
        .filter_map(|p| {
            let start = earlier.get(&(p.pid, p.start_ticks)).copied().unwrap_or(0);
            let used = p.cpu_ticks.checked_sub(start)?;
            (used > 0).then(|| Consumer {
                pid: p.pid,
                comm: p.comm.clone(),
                cpu_pct: used as f64 * 100.0 / window_ticks,
            })
        })
        .collect();
    top.sort_by(|a, b| b.cpu_pct.total_cmp(&a.cpu_pct));
    let others_cpu_pct = top.iter().map(|c| c.cpu_pct).sum();
    top.truncate(TOP);
    Noise {
        others_cpu_pct,
        steal_pct: counters::steal_pct(&before.cpu, &after.cpu),
        top,
    }
}

impl Noise {
    /// Why the machine is not quiet, or `None` when it is.
    pub fn complaint(&self) -> Option<String> {
        let busy = self.others_cpu_pct > OTHERS_LIMIT_PCT;
        let stolen = self.steal_pct.is_some_and(|s| s > STEAL_LIMIT_PCT);
        if !busy && !stolen {
            return None;
        }
        let mut parts = Vec::new();
        if busy {
            let names: Vec<String> = self
                .top
                .iter()
                .map(|c| format!("{} ({}) {:.0} %", c.comm, c.pid, c.cpu_pct))
                .collect();
            parts.push(format!(
                "other processes used {:.0} % of a CPU (limit {OTHERS_LIMIT_PCT:.0} %): {}",
                self.others_cpu_pct,
                names.join(", ")
            ));
        }
        if let Some(steal) = self.steal_pct.filter(|_| stolen) {
            parts.push(format!(
                "the hypervisor stole {steal:.1} % of the CPU time (limit {STEAL_LIMIT_PCT:.0} %)"
            ));
        }
        Some(format!(
            "the machine was not quiet before measuring: {}; results may be disturbed (stop them, or use --strict to refuse)",
            parts.join("; ")
        ))
    }
}

/// Samples the machine for `length` and assesses it, leaving out this
/// process and its descendants.
pub fn check(proc_root: &Path, length: Duration) -> Result<Noise, ProcError> {
    let start = Instant::now();
    let before = snapshot(proc_root)?;
    std::thread::sleep(length);
    let after = snapshot(proc_root)?;
    Ok(assess(
        &before,
        &after,
        start.elapsed(),
        std::process::id(),
        super::procfs::clock_ticks_per_s(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn process(pid: u32, ppid: u32, comm: &str, ticks: u64) -> ProcessTicks {
        ProcessTicks {
            pid,
            ppid,
            comm: comm.into(),
            start_ticks: u64::from(pid) * 10,
            cpu_ticks: ticks,
            kernel_thread: false,
        }
    }

    fn snap(total: u64, steal: u64, processes: Vec<ProcessTicks>) -> Snapshot {
        Snapshot {
            cpu: CpuTicks {
                user: 0,
                nice: 0,
                system: 0,
                idle: total - steal,
                iowait: None,
                irq: None,
                softirq: None,
                steal: Some(steal),
            },
            processes,
        }
    }

    #[test]
    fn others_are_counted_ours_are_not() {
        let before = snap(
            1000,
            10,
            vec![
                process(100, 1, "feelbench", 50),
                process(200, 1, "cc1", 500),
                process(300, 1, "sshd", 7),
            ],
        );
        let after = snap(
            1200,
            12,
            vec![
                process(100, 1, "feelbench", 150),
                process(101, 100, "feelbench", 80), // our worker, new
                process(102, 101, "sh", 5),         // its child
                process(200, 1, "cc1", 560),
                process(300, 1, "sshd", 7),
                process(400, 1, "make", 3), // started during the sample
            ],
        );
        let noise = assess(&before, &after, Duration::from_secs(1), 100, 100);
        assert!((noise.others_cpu_pct - 63.0).abs() < 1e-9, "{noise:?}");
        assert_eq!(noise.steal_pct, Some(1.0));
        let names: Vec<_> = noise.top.iter().map(|c| c.comm.as_str()).collect();
        assert_eq!(names, ["cc1", "make"]);
        let message = noise.complaint().unwrap();
        assert!(message.contains("63 % of a CPU"), "{message}");
        assert!(message.contains("cc1 (200) 60 %"), "{message}");
        assert!(!message.contains("stole"), "{message}");
    }

    #[test]
    fn a_renamed_kernel_worker_is_the_same_process() {
        let before = snap(
            1000,
            10,
            vec![process(32, 2, "kworker/u8:1-events", 90_000)],
        );
        let mut renamed = process(32, 2, "kworker/u8:1-flush-254:0", 90_001);
        let after = snap(1200, 10, vec![renamed.clone()]);
        let noise = assess(&before, &after, Duration::from_secs(1), 1, 100);
        assert!((noise.others_cpu_pct - 1.0).abs() < 1e-9, "{noise:?}");
        // A new process that took the pid counts from zero.
        renamed.start_ticks += 1;
        let reused = snap(1200, 10, vec![renamed]);
        let noise = assess(&before, &reused, Duration::from_secs(1), 1, 100);
        assert!(noise.others_cpu_pct > 1000.0, "{noise:?}");
    }

    #[test]
    fn a_quiet_machine_passes_and_steal_alone_complains() {
        let before = snap(1000, 10, vec![process(200, 1, "sshd", 5)]);
        let quiet = snap(1200, 11, vec![process(200, 1, "sshd", 6)]);
        assert_eq!(
            assess(&before, &quiet, Duration::from_secs(1), 1, 100).complaint(),
            None
        );
        let stolen = snap(1200, 20, vec![process(200, 1, "sshd", 6)]);
        let message = assess(&before, &stolen, Duration::from_secs(1), 1, 100)
            .complaint()
            .unwrap();
        assert!(message.contains("stole 5.0 %"), "{message}");
        // A counter that went backwards gives no steal figure and no complaint.
        let reset = snap(900, 5, vec![]);
        let noise = assess(&before, &reset, Duration::from_secs(1), 1, 100);
        assert_eq!((noise.steal_pct, noise.complaint()), (None, None));
    }

    #[test]
    fn snapshot_reads_a_fake_proc() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("stat"), "cpu  1 0 1 10 0 0 0 2 0 0\n").unwrap();
        std::fs::create_dir(dir.path().join("42")).unwrap();
        std::fs::write(
            dir.path().join("42/stat"),
            "42 (burn) R 1 42 42 0 -1 0 0 0 0 0 30 12 0 0 20 0 1 0 420 0 0",
        )
        .unwrap();
        std::fs::create_dir(dir.path().join("43")).unwrap(); // ended: no stat
        let s = snapshot(dir.path()).unwrap();
        assert_eq!(s.processes, vec![process(42, 1, "burn", 42)]);
        assert_eq!(s.cpu.steal, Some(2));
        assert!(snapshot(&dir.path().join("none")).is_err());
    }
}
